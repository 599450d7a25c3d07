/*
 * The one Hines elimination routine (Algorithm 1 of Valero-Lara et al.), as a
 * header so that it can be inlined where the lane count is a constant (the
 * simulator's fused step: the lane loop unrolls into vector instructions) and
 * compiled for the GPU (one thread per system: lanes = 1). src/cpu/hines_cpu.c
 * exports it as hb_hines_lanes for the batched solves.
 *
 * Plain C11 and CUDA C: HB_HOSTDEV marks functions for both.
 */
#ifndef HB_COMMON_HINES_LANES_H
#define HB_COMMON_HINES_LANES_H

#include <stddef.h>

#include "common/hostdev.h"

/*
 * One row of each sweep over a run of lanes. Separate functions so that the
 * rows (the same array at different offsets) are restrict-qualified
 * parameters: that is what lets the lane loop vectorise without OpenMP.
 */
HB_HOSTDEV void hb_hines_eliminate_row(size_t lanes, const double *HB_RESTRICT u_i,
                                                     const double *HB_RESTRICT l_i,
                                                     const double *HB_RESTRICT d_i,
                                                     const double *HB_RESTRICT rhs_i,
                                                     double *HB_RESTRICT d_p,
                                                     double *HB_RESTRICT rhs_p)
{
    HB_SIMD
    for (size_t k = 0; k < lanes; ++k) {
        const double factor = u_i[k] / d_i[k];
        d_p[k] -= factor * l_i[k];
        rhs_p[k] -= factor * rhs_i[k];
    }
}

HB_HOSTDEV void hb_hines_substitute_row(size_t lanes, const double *HB_RESTRICT l_i,
                                                      const double *HB_RESTRICT d_i,
                                                      const double *HB_RESTRICT rhs_p,
                                                      double *HB_RESTRICT rhs_i)
{
    HB_SIMD
    for (size_t k = 0; k < lanes; ++k) {
        rhs_i[k] -= l_i[k] * rhs_p[k];
        rhs_i[k] /= d_i[k];
    }
}

/*
 * Algorithm 1 on `lanes` systems at once: element (row i, lane k) of each
 * array is at i * row_stride + k, lanes <= row_stride (or m == 1). Arguments
 * are trusted. No pivot check: cable matrices are diagonally dominant, so the
 * eliminated diagonal never reaches zero; other matrices get inf/NaN results.
 */
HB_HOSTDEV void hb_hines_lanes_inline(int m, const int *HB_RESTRICT parent,
                                                    size_t row_stride, size_t lanes,
                                                    const double *HB_RESTRICT u,
                                                    const double *HB_RESTRICT l,
                                                    double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    for (int i = m - 1; i > 0; --i) {
        const size_t row = (size_t)i * row_stride, prow = (size_t)parent[i] * row_stride;
        hb_hines_eliminate_row(lanes, u + row, l + row, d + row, rhs + row, d + prow, rhs + prow);
    }
    HB_SIMD
    for (size_t k = 0; k < lanes; ++k) rhs[k] /= d[k];
    for (int i = 1; i < m; ++i) {
        const size_t row = (size_t)i * row_stride, prow = (size_t)parent[i] * row_stride;
        hb_hines_substitute_row(lanes, l + row, d + row, rhs + prow, rhs + row);
    }
}

/*
 * The simulator's solve (src/common/sim_step.h): Algorithm 1 with one division
 * per row. The elimination stores 1/d (the eliminated diagonal's reciprocal)
 * in d, the substitution multiplies by it:
 *   r = 1 / d_i;  d_p -= (u_i l_i) r;  rhs_p -= (u_i r) rhs_i;  d_i = r
 *   rhs_0 = rhs_0 r_0;  rhs_i = (rhs_i - l_i rhs_p) r_i
 * Rounding differs from hb_hines_lanes_inline by a few ulp (two roundings
 * where it has one division); the critical path of the substitution loses the
 * division. u and l: element (row i, lane k) at i * ul_row + k * ul_lane, so
 * ul_lane = 0 reads one value per row for all lanes (copies of one model:
 * ul_row = 1), ul_lane = 1 one per lane (ul_row = row_stride). Callers pass
 * constants (the step is inlined), so the lane loops vectorise either way.
 * On return d holds 1/d of the eliminated diagonal and rhs the solution.
 */
HB_HOSTDEV void hb_hines_recip_eliminate_row(size_t lanes, size_t ul_lane,
                                                           double u_i_0, double l_i_0,
                                                           const double *HB_RESTRICT u_i,
                                                           const double *HB_RESTRICT l_i,
                                                           double *HB_RESTRICT d_i,
                                                           const double *HB_RESTRICT rhs_i,
                                                           double *HB_RESTRICT d_p,
                                                           double *HB_RESTRICT rhs_p)
{
    HB_SIMD
    for (size_t k = 0; k < lanes; ++k) {
        const double uk = ul_lane ? u_i[k] : u_i_0, lk = ul_lane ? l_i[k] : l_i_0;
        const double r = 1.0 / d_i[k];
        d_p[k] -= (uk * lk) * r;
        rhs_p[k] -= (uk * r) * rhs_i[k];
        d_i[k] = r;
    }
}

HB_HOSTDEV void hb_hines_recip_substitute_row(size_t lanes, size_t ul_lane,
                                                            double l_i_0,
                                                            const double *HB_RESTRICT l_i,
                                                            const double *HB_RESTRICT r_i,
                                                            const double *HB_RESTRICT rhs_p,
                                                            double *HB_RESTRICT rhs_i)
{
    HB_SIMD
    for (size_t k = 0; k < lanes; ++k) {
        const double lk = ul_lane ? l_i[k] : l_i_0;
        rhs_i[k] = (rhs_i[k] - lk * rhs_p[k]) * r_i[k];
    }
}

/* The root row (no parent): r = 1 / d_0, rhs_0 = rhs_0 r, d_0 = r. */
HB_HOSTDEV void hb_hines_recip_root(size_t lanes, double *HB_RESTRICT d,
                                                  double *HB_RESTRICT rhs)
{
    HB_SIMD
    for (size_t k = 0; k < lanes; ++k) {
        const double r = 1.0 / d[k];
        rhs[k] = rhs[k] * r;
        d[k] = r;
    }
}

HB_HOSTDEV void hb_hines_recip_lanes_inline(int m, const int *HB_RESTRICT parent,
                                                          size_t row_stride, size_t lanes,
                                                          const double *HB_RESTRICT u,
                                                          const double *HB_RESTRICT l,
                                                          size_t ul_row, size_t ul_lane,
                                                          double *HB_RESTRICT d,
                                                          double *HB_RESTRICT rhs)
{
    for (int i = m - 1; i > 0; --i) {
        const size_t row = (size_t)i * row_stride, prow = (size_t)parent[i] * row_stride;
        const size_t c = (size_t)i * ul_row;
        hb_hines_recip_eliminate_row(lanes, ul_lane, u[c], l[c], u + c, l + c, d + row,
                                     rhs + row, d + prow, rhs + prow);
    }
    hb_hines_recip_root(lanes, d, rhs);
    for (int i = 1; i < m; ++i) {
        const size_t row = (size_t)i * row_stride, prow = (size_t)parent[i] * row_stride;
        const size_t c = (size_t)i * ul_row;
        hb_hines_recip_substitute_row(lanes, ul_lane, l[c], l + c, d + row, rhs + prow,
                                      rhs + row);
    }
}

#endif
