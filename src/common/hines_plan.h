/*
 * Internal: the row plan of the PIPELINED Hines kernel (docs/gpu.md) and the
 * arithmetic of one row, shared by the CUDA kernel (src/cuda/hines_pipelined.cu)
 * and its CPU twin (hb_hines_plan_solve, tested in CI).
 *
 * One thread eliminates one system from row m - 1 down to 0 and substitutes
 * back up. The contribution of row i to its parent stays in registers when
 * the parent is row i - 1 ("carried", the usual case in Hines order); other
 * contributions, and in the substitution the parent's x, pass through a few
 * accumulator slots. A slot serves the rows p whose children are not all
 * carried, from p to its last such child; slots are assigned once per tree
 * so that live ranges never overlap (interval colouring), so the slot count
 * is the largest number of such ranges open at one row.
 *
 * Row arithmetic: with D = d + acc_d + carry_d and R = rhs + acc_r + carry_r,
 *   a = R / D,  b = l / D            (kept for the substitution x = a - b x_p)
 *   contribution to the parent: (-u b, -u a)
 */
#ifndef HB_COMMON_HINES_PLAN_H
#define HB_COMMON_HINES_PLAN_H

#include "hinesbatch.h"

#include "common/hostdev.h"

/* A row's code: bit 0 carried (parent = row - 1), bit 1 first contribution to
 * its parent's slot, bits 2-11 its own slot, bits 12-21 its parent's slot. */
#define HB_PLAN_NO_SLOT 0x3ff
#define HB_PLAN_MAX_SLOTS 1023

HB_HOSTDEV int hb_plan_carried(int code) { return code & 1; }
HB_HOSTDEV int hb_plan_first(int code) { return (code >> 1) & 1; }
HB_HOSTDEV int hb_plan_own_slot(int code) { return (code >> 2) & 0x3ff; }
HB_HOSTDEV int hb_plan_parent_slot(int code) { return (code >> 12) & 0x3ff; }

typedef struct {
    int m;
    int slots; /* accumulator slots one system needs */
    int *code; /* [m] */
} hb_hines_plan_t;

/* Builds the plan of a Hines-ordered tree (parent checked by the caller). */
hb_status_t hb_hines_plan_build(int m, const int *parent, hb_hines_plan_t *plan);
void hb_hines_plan_free(hb_hines_plan_t *plan);

/* Backward step of row i >= 1. (acc_d, acc_r): the row's slot (0 when none);
 * (carry_d, carry_r): child i + 1's contribution when carried, else 0.
 * Returns a, b and the contribution (cd, cr) to the parent. */
HB_HOSTDEV void hb_plan_backward_row(double u, double l, double d, double rhs, double acc_d,
                                         double acc_r, double carry_d, double carry_r, double *a,
                                         double *b, double *cd, double *cr)
{
    const double inv = 1.0 / (d + acc_d + carry_d);
    *b = l * inv;
    *a = (rhs + acc_r + carry_r) * inv;
    *cd = -u * *b;
    *cr = -u * *a;
}

/* Row 0: its solution. */
HB_HOSTDEV double hb_plan_root(double d, double rhs, double acc_d, double acc_r, double carry_d,
                                   double carry_r)
{
    return (rhs + acc_r + carry_r) / (d + acc_d + carry_d);
}

/*
 * The CPU twin of the kernel on one system: element i of each array at
 * i * stride. Rows below `tail` keep (a, b) in `tail_ab` (2 * tail doubles),
 * the others in `scratch_ab` (2 * (m - tail)), as the kernel keeps them in
 * shared and global memory; `slots` holds 2 * plan->slots doubles. rhs := x,
 * u, l, d are not written.
 */
void hb_hines_plan_solve(const hb_hines_plan_t *plan, int tail, size_t stride, const double *u,
                         const double *l, const double *d, double *rhs, double *tail_ab,
                         double *scratch_ab, double *slots);

#endif
