/*
 * Internal: batched tridiagonal solves (hb_gtsv_*), docs/tridiag.md.
 *
 * The arithmetic of both algorithms lives here once, as small inline
 * functions that the CPU backends (tridiag_cpu.c) and the CUDA kernels
 * (src/cuda/tridiag_cuda.cu, where they become __device__ code kept in
 * registers) share, so the CPU PARTITION solve is the CUDA kernel's twin
 * step for step and CI tests the GPU's arithmetic.
 *
 * Row i of a system of n rows: dl x[i-1] + d x[i] + du x[i+1] = b. Rows
 * i >= n (padding up to a chunk or to m_max) are identity rows with b = 0,
 * so they decouple and solve to 0; dl of row 0 and du of row n-1 are zero.
 */
#ifndef HB_CPU_TRIDIAG_CPU_H
#define HB_CPU_TRIDIAG_CPU_H

#include <stddef.h>

#include "hinesbatch.h"

#if defined(__CUDACC__)
#define HB_TD_INLINE static __host__ __device__ __forceinline__
#if defined(__CUDA_ARCH__)
#define HB_TD_UNROLL _Pragma("unroll")
#else
#define HB_TD_UNROLL
#endif
#else
#define HB_TD_INLINE static inline
#define HB_TD_UNROLL
#endif

/* PARTITION: each system is cut into chunks of L rows, solved by one CUDA
 * block of at most HB_TD_MAX_THREADS threads, one or two chunks a thread (two
 * only for 8-row chunks): at most HB_TD_MAX_CHUNKS chunks. */
#define HB_TD_MAX_THREADS 512
#define HB_TD_MAX_CHUNKS (2 * HB_TD_MAX_THREADS)
#define HB_TD_MAX_PARTITION_M 8192

/* Chunks of L rows per system of m rows: the power of two with P L >= m (the
 * reduced system then has 2P rows); more than HB_TD_MAX_CHUNKS when m > 1024 L. */
HB_TD_INLINE int hb_td_chunks_for(int m, int L)
{
    int p = 1;
    while (p * L < m) p *= 2;
    return p;
}

/*
 * How a solve runs (src/core/tridiag.c builds it: the rule, by layout and m,
 * then the tuning override of hb_gtsv_set_tuning / HB_GTSV_TUNING). rows and chunks
 * fix the PARTITION arithmetic (the CPU twin uses them too); threads, ahead,
 * hint, prefetch and vector only shape the CUDA kernel.
 */
typedef struct hb_gtsv_plan_s {
    hb_gtsv_algo_t algo; /* THOMAS or PARTITION, never AUTO */
    int rows;            /* PARTITION: L, rows per chunk (8 or 16) */
    int chunks;          /* PARTITION: P = hb_td_chunks_for(m, L) <= HB_TD_MAX_CHUNKS */
    int threads;         /* CUDA PARTITION: block size (128, 256 or 512; at least P, or
                            for 8-row chunks P / 2: two chunks a thread) */
    int ahead;           /* CUDA PARTITION: rows of a chunk whose loads are in flight together */
    int hint;            /* CUDA PARTITION loads: 0 plain, 1 / 2: L2 prefetch of 128 / 256 B */
    int prefetch;        /* CUDA PARTITION: 0 none, 1 the chunk's lines asked of L2 at the
                            start, 2 the next `ahead` rows' lines at each load group */
    int vector;          /* CUDA PARTITION, flat layout, where the chunk starts on 16 bytes
                            (replaces hint): 1 rows loaded and x stored 16 bytes at a time;
                            2 the same loads, and x written a warp's contiguous spans at
                            a time through shared memory */
    int cluster;         /* CUDA PARTITION: K (1, 2, 4, 8, 16), the blocks of a cluster that
                            share G systems, each eliminating P / K chunks of each and
                            reading the others' reduced rows (distributed shared memory);
                            K > 1: one chunk a thread, threads >= P / K */
} hb_gtsv_plan_t;

/* CUDA PARTITION: chunks a thread, 2 where the block has fewer threads than a
 * system has chunks (8-row chunks only, threads = P / 2; never in clusters). */
HB_TD_INLINE int hb_td_chunks_per_thread(const hb_gtsv_plan_t *plan)
{
    return plan->cluster <= 1 && plan->chunks > plan->threads ? 2 : 1;
}

/* CUDA PARTITION: shared memory of a block, in doubles a thread, for L-row
 * chunks, C a thread, clusters of K blocks: the reduced rows (4 values of 2 rows
 * a chunk; in clusters a second buffer of the odd rows) and, where a thread holds
 * 16 rows, the stash of their spike columns during the PCR (L - 2 a chunk). */
HB_TD_INLINE int hb_td_partition_smem_doubles(int L, int C, int K)
{
    return (K > 1 ? 12 : 8) * C + (L * C == 16 ? C * (L - 2) : 0);
}

/* Applies the identity and boundary rules to row i of a system of n rows. */
HB_TD_INLINE void hb_td_fix_row(int i, int n, double *dl, double *d, double *du, double *b)
{
    if (i >= n) {
        *dl = 0.0;
        *d = 1.0;
        *du = 0.0;
        *b = 0.0;
        return;
    }
    if (i == 0) *dl = 0.0;
    if (i == n - 1) *du = 0.0;
}

/*
 * One chunk of L >= 3 rows: a = dl, b = d, c = du, r = rhs on entry. Rows
 * k >= 1 are eliminated, in order (hb_td_chunk_forward(k) once row k is
 * loaded), into  a[k] x0 + x[k] + c[k] x[k+1] = r[k]  (x0 is the chunk's first
 * unknown); then hb_td_chunk_ends gives the chunk's two rows of the reduced
 * system over the chunk ends (x0 and x[L-1] of every chunk):
 *   red[0..3]: red0 x_last(prev chunk) + red1 x0 + red2 x[L-1] = red3
 *   red[4..7]: red4 x0 + red5 x[L-1] + red6 x_first(next chunk) = red7
 * with red1 = red5 = 1 (normalised for hb_td_pcr_row).
 */
HB_TD_INLINE void hb_td_chunk_forward(int k, double *a, const double *b, double *c, double *r)
{
    if (k == 1) {
        const double inv = 1.0 / b[1];
        a[1] *= inv;
        c[1] *= inv;
        r[1] *= inv;
        return;
    }
    const double inv = 1.0 / (b[k] - a[k] * c[k - 1]);
    r[k] = (r[k] - a[k] * r[k - 1]) * inv;
    a[k] = -a[k] * a[k - 1] * inv;
    c[k] *= inv;
}

HB_TD_INLINE void hb_td_chunk_ends(int L, const double *a, const double *b, const double *c,
                                   const double *r, double *red)
{
    /* x[1] = dd - aa x0 - cc x[L-1], by substitution from row L-2 down. */
    double aa = a[L - 2], cc = c[L - 2], dd = r[L - 2];
    HB_TD_UNROLL
    for (int k = L - 3; k >= 1; --k) {
        dd = r[k] - c[k] * dd;
        aa = a[k] - c[k] * aa;
        cc = -c[k] * cc;
    }
    const double inv = 1.0 / (b[0] - c[0] * aa); /* rows normalised: b = 1 */
    red[0] = a[0] * inv;
    red[1] = 1.0;
    red[2] = -c[0] * cc * inv;
    red[3] = (r[0] - c[0] * dd) * inv;
    red[4] = a[L - 1];
    red[5] = 1.0;
    red[6] = c[L - 1];
    red[7] = r[L - 1];
}

/* With the chunk's end values known, r[] becomes the chunk's solution. */
HB_TD_INLINE void hb_td_chunk_finish(int L, const double *a, const double *c, double *r,
                                     double x0, double xlast)
{
    r[L - 1] = xlast;
    HB_TD_UNROLL
    for (int k = L - 2; k >= 1; --k) r[k] = r[k] - a[k] * x0 - c[k] * r[k + 1];
    r[0] = x0;
}

/*
 * One parallel-cyclic-reduction step of a reduced row (a, 1, c, d), rows kept
 * normalised (b = 1), with its neighbours `lo` and `hi` at the step's stride
 * ({0, 1, 0, 0} past the ends): one reciprocal per row and step. After
 * ceil(log2(N)) steps of strides 1, 2, 4, ... every row reads x = d. PARTITION
 * runs the first step on the odd rows only (one step of cyclic reduction: they
 * then form a system of their own), PCR on those, then hb_td_reduced_start.
 * out may be own (each input is read before the output that overwrites it).
 */
HB_TD_INLINE void hb_td_pcr_row(const double *own, const double *lo, const double *hi,
                                double *out)
{
    const double k1 = own[0], k2 = own[2];
    const double inv = 1.0 / (1.0 - lo[2] * k1 - hi[0] * k2);
    out[3] = (own[3] - lo[3] * k1 - hi[3] * k2) * inv;
    out[0] = -lo[0] * k1 * inv;
    out[2] = -hi[2] * k2 * inv;
    out[1] = 1.0;
}

/* A chunk's first unknown from its (normalised) reduced row `start`, once the
 * previous chunk's last unknown and its own last are known. */
HB_TD_INLINE double hb_td_reduced_start(const double *start, double prev_last, double last)
{
    return start[3] - start[0] * prev_last - start[2] * last;
}

/* Thomas forward step: (cp, yp) of row i from row i-1's (cp, yp). */
HB_TD_INLINE void hb_td_thomas_step(double dl, double d, double du, double b, double *cp,
                                    double *yp)
{
    const double inv = 1.0 / (d - dl * *cp);
    *yp = (b - dl * *yp) * inv;
    *cp = du * inv;
}

/* ---- CPU backends (tridiag_cpu.c); arguments already checked ---- */

hb_status_t hb_gtsv_cpu_solve(hb_context_t ctx, const hb_gtsv_problem_t *p,
                              const hb_gtsv_plan_t *plan);

/* ---- src/core/tridiag.c ---- */

/* The plan hb_gtsv_solve runs for a problem (the rule, then the tuning
 * override; shape checked as by hb_gtsv_describe, data pointers unused). */
hb_status_t hb_gtsv_make_plan(hb_context_t ctx, const hb_gtsv_problem_t *problem,
                              hb_gtsv_plan_t *plan);

#endif
