/* Ours for many systems: a thread per system with a row plan (common/hines_plan.h). */
#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "common/hines_plan.h"
}
#include "cuda/cuda_check.h"
#include "cuda/hines_cuda.h"

#define PIPE_THREADS 128 /* threads per block of the pipelined kernel */

/* L2 line discard (PTX, sm_80+): the line is dropped without a write-back. */
__device__ __forceinline__ void discard_l2_line(const void *line)
{
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
}

/*
 * Ours for many systems: one thread per system, the row plan of
 * common/hines_plan.h (the CPU twin is hb_hines_plan_solve). Each thread keeps
 * PIPE_PREFETCH rows of loads in flight; u and l are read once per row for the
 * whole batch when every system shares them (UNIFORM); the child i + 1's
 * contribution stays in registers and other children's pass through `slots`
 * accumulators in shared memory. The substitution's pairs (a, b) of rows below
 * `tail` stay in shared memory; the rest go to a per-thread scratch that the
 * substitution reads back soon after (L2-resident, lines then discarded when
 * DISCARD, so they are never written to memory). d and u, l are not written;
 * rhs := x. Threads loop over systems: the grid is one wave.
 */
template <bool UNIFORM, bool DISCARD, int PIPE_PREFETCH>
__global__ void __launch_bounds__(256) pipelined_kernel(
    int m, const int *__restrict__ code, const double *__restrict__ u,
    const double *__restrict__ l, const double *__restrict__ d, double *__restrict__ rhs,
    int count, int block, int tail, int slots, double2 *__restrict__ scratch)
{
    extern __shared__ double2 pipe_smem[];
    const int T = blockDim.x, tid = threadIdx.x, lane = tid % 32;
    double2 *tail_ab = pipe_smem + tid;                    /* row i at [i * T] */
    double2 *slot = pipe_smem + (size_t)tail * T + tid;   /* slot k at [k * T] */
    /* The row plan and the shared u, l on chip: the L1 left beside this much
     * shared memory is small, and a miss there would stall every row. */
    double *s_u = (double *)(pipe_smem + (size_t)(tail + slots) * T), *s_l = s_u + m;
    int *s_code = (int *)(s_l + m);
    for (int i = tid; i < m; i += T) {
        s_code[i] = code[i];
        if (UNIFORM) {
            s_u[i] = u[i];
            s_l[i] = l[i];
        }
    }
    __syncthreads();
    const size_t threads = (size_t)gridDim.x * T;
    double2 *my_scratch = scratch + (size_t)blockIdx.x * T + tid; /* row tail + j at [j * threads] */
    const size_t stride = (size_t)block;

    for (int s0 = blockIdx.x * T; s0 < count; s0 += gridDim.x * T) {
        const int s = s0 + tid < count ? s0 + tid : count - 1; /* idle lanes redo the last system */
        const bool active = s0 + tid < count;
        const size_t base = system_base(m, block, s);
        const double *ub = UNIFORM ? s_u : u + base, *lb = UNIFORM ? s_l : l + base;
        const size_t cstride = UNIFORM ? 1 : stride;

        /* Backward sweep, rows m - 1 .. 1, PIPE_PREFETCH rows ahead. */
        double pd[PIPE_PREFETCH], pr[PIPE_PREFETCH], pu[PIPE_PREFETCH], pl[PIPE_PREFETCH];
#pragma unroll
        for (int k = 0; k < PIPE_PREFETCH; ++k) {
            const int row = m - 1 - k;
            if (row >= 1) {
                pd[k] = __ldcg(d + base + (size_t)row * stride);
                pr[k] = __ldcg(rhs + base + (size_t)row * stride);
                if (!UNIFORM) {
                    pu[k] = __ldcg(ub + (size_t)row * cstride);
                    pl[k] = __ldcg(lb + (size_t)row * cstride);
                }
            }
        }
        double carry_d = 0.0, carry_r = 0.0;
        for (int i0 = m - 1; i0 >= 1; i0 -= PIPE_PREFETCH) {
#pragma unroll
            for (int k = 0; k < PIPE_PREFETCH; ++k) {
                const int i = i0 - k;
                if (i < 1) break;
                const double di = pd[k], ri = pr[k];
                const double ui = UNIFORM ? ub[i] : pu[k];
                const double li = UNIFORM ? lb[i] : pl[k];
                const int next = i - PIPE_PREFETCH;
                if (next >= 1) {
                    pd[k] = __ldcg(d + base + (size_t)next * stride);
                    pr[k] = __ldcg(rhs + base + (size_t)next * stride);
                    if (!UNIFORM) {
                        pu[k] = __ldcg(ub + (size_t)next * cstride);
                        pl[k] = __ldcg(lb + (size_t)next * cstride);
                    }
                }
                const int c = s_code[i], own = hb_plan_own_slot(c);
                double2 acc = make_double2(0.0, 0.0);
                if (own != HB_PLAN_NO_SLOT) acc = slot[(size_t)own * T];
                double a, b, cd, cr;
                hb_plan_backward_row(ui, li, di, ri, acc.x, acc.y, carry_d, carry_r, &a, &b, &cd,
                                     &cr);
                if (i < tail) tail_ab[(size_t)i * T] = make_double2(a, b);
                else __stcg(&my_scratch[(size_t)(i - tail) * threads], make_double2(a, b));
                if (hb_plan_carried(c)) {
                    carry_d = cd;
                    carry_r = cr;
                } else {
                    double2 *accp = &slot[(size_t)hb_plan_parent_slot(c) * T];
                    if (hb_plan_first(c)) {
                        *accp = make_double2(cd, cr);
                    } else {
                        const double2 old = *accp;
                        *accp = make_double2(old.x + cd, old.y + cr);
                    }
                    carry_d = carry_r = 0.0;
                }
            }
        }

        /* Scratch rows of the substitution are loaded while the root and the tail run. */
        const int j0 = tail > 1 ? tail : 1;
        double2 pab[PIPE_PREFETCH];
#pragma unroll
        for (int k = 0; k < PIPE_PREFETCH; ++k)
            if (j0 + k < m) pab[k] = __ldcg(&my_scratch[(size_t)(j0 + k - tail) * threads]);

        const int own0 = hb_plan_own_slot(s_code[0]);
        double2 acc0 = make_double2(0.0, 0.0);
        if (own0 != HB_PLAN_NO_SLOT) acc0 = slot[(size_t)own0 * T];
        double x = hb_plan_root(d[base], rhs[base], acc0.x, acc0.y, carry_d, carry_r);
        if (own0 != HB_PLAN_NO_SLOT) slot[(size_t)own0 * T].x = x;
        if (active) __stcs(rhs + base, x);

        /* Substitution: rows below the tail from shared memory... */
        const int tail_end = tail < m ? tail : m;
        for (int i = 1; i < tail_end; ++i) {
            const int c = s_code[i], own = hb_plan_own_slot(c);
            const double2 ab = tail_ab[(size_t)i * T];
            const double xp = hb_plan_carried(c) ? x : slot[(size_t)hb_plan_parent_slot(c) * T].x;
            x = ab.x - ab.y * xp;
            if (own != HB_PLAN_NO_SLOT) slot[(size_t)own * T].x = x;
            if (active) __stcs(rhs + base + (size_t)i * stride, x);
        }
        /* ...the others from the scratch, PIPE_PREFETCH rows ahead. */
        for (int i0 = j0; i0 < m; i0 += PIPE_PREFETCH) {
#pragma unroll
            for (int k = 0; k < PIPE_PREFETCH; ++k) {
                const int i = i0 + k;
                if (i >= m) break;
                const double2 ab = pab[k];
                if (i + PIPE_PREFETCH < m)
                    pab[k] = __ldcg(&my_scratch[(size_t)(i + PIPE_PREFETCH - tail) * threads]);
                const int c = s_code[i], own = hb_plan_own_slot(c);
                const double xp =
                    hb_plan_carried(c) ? x : slot[(size_t)hb_plan_parent_slot(c) * T].x;
                x = ab.x - ab.y * xp;
                if (own != HB_PLAN_NO_SLOT) slot[(size_t)own * T].x = x;
                if (active) __stcs(rhs + base + (size_t)i * stride, x);
                if (DISCARD) {
                    /* The warp's 32 pairs of this row are 4 lines; all lanes have used theirs. */
                    __syncwarp();
                    if (lane < 4)
                        discard_l2_line((const char *)(my_scratch - lane +
                                                       (size_t)(i - tail) * threads) +
                                        128 * lane);
                }
            }
        }
    }
}

/* PIPE_THREADS threads a block, no shared-memory tail. Returns 0 when it cannot run. */
int hb_cuda_hines_pipe_shape(const hb_cuda_batch_t *b, size_t optin, pipe_shape_t *shape)
{
    const int threads = PIPE_THREADS;
    if (b->slots < 0) return 0;
    const size_t row_bytes = (size_t)threads * sizeof(double2);
    const size_t plan_bytes = (size_t)b->m * (2 * sizeof(double) + sizeof(int));
    if (plan_bytes + 1024 > optin) return 0;
    const size_t rows_fit = (optin - plan_bytes) / row_bytes;
    if (rows_fit < (size_t)b->slots) return 0;
    /* No tail: on an H100 occupancy hides latency better than a tail saves traffic; the
     * tail needs few threads per SM (docs/design-notes.md, "Hines GPU kernels"). */
    const size_t tail = 0;
    shape->threads = threads;
    shape->tail = (int)tail;
    shape->smem = (tail + (size_t)b->slots) * row_bytes + plan_bytes;
    return 1;
}

template <bool UNIFORM, bool DISCARD, int PREFETCH>
static hb_status_t launch_pipelined_as(const hb_cuda_batch_t *b, part_t *p, const pipe_shape_t *sh)
{
    void (*kernel)(int, const int *, const double *, const double *, const double *, double *, int,
                   int, int, int, double2 *) = pipelined_kernel<UNIFORM, DISCARD, PREFETCH>;
    CUDA_CHECK(hb_cuda_allow_smem((const void *)kernel, b->ctx->smem_optin[p->device]));
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, sh->threads,
                                                             sh->smem));
    if (per_sm < 1) return hb_fail(HB_ERR_BACKEND, "pipelined kernel: no block fits a multiprocessor");
    int blocks = ceil_div(p->count, sh->threads);
    const int wave = per_sm * b->ctx->sm_count[p->device];
    if (blocks > wave) blocks = wave;
    /* Scratch: rows tail .. m - 1 of every thread, 512-byte aligned for the discards. */
    const size_t rows = b->m > sh->tail ? (size_t)(b->m - sh->tail) : 0;
    const size_t need = rows * (size_t)blocks * (size_t)sh->threads * sizeof(double2) + 512;
    if (need > p->scratch_bytes) {
        CUDA_CHECK(cudaFree(p->scratch));
        p->scratch = NULL;
        p->scratch_bytes = 0;
        cudaError_t e = cudaMalloc(&p->scratch, need);
        if (e != cudaSuccess)
            return hb_fail(e == cudaErrorMemoryAllocation ? HB_ERR_ALLOC : HB_ERR_BACKEND,
                           "pipelined kernel: %zu bytes of scratch: %s", need,
                           cudaGetErrorString(e));
        p->scratch_bytes = need;
    }
    double2 *scratch = (double2 *)(((uintptr_t)p->scratch + 511) & ~(uintptr_t)511);
    kernel<<<blocks, sh->threads, sh->smem, b->ctx->stream[p->device]>>>(
        b->m, p->code, UNIFORM ? p->cu : p->u, UNIFORM ? p->cl : p->l, p->d, p->rhs, p->count,
        p->block, sh->tail, b->slots, scratch);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

hb_status_t hb_cuda_hines_pipelined(const hb_cuda_batch_t *b, part_t *p)
{
    pipe_shape_t sh;
    if (!hb_cuda_hines_pipe_shape(b, b->ctx->smem_optin[p->device], &sh))
        return hb_fail(HB_ERR_NOT_SUPPORTED, "pipelined: the tree has too many forks open at once");
    /* Scratch lines discarded; two rows ahead: fewer registers, more threads per SM; on an
     * H100 that beat eight rows ahead at 25,600 and 256,000 systems (docs/gpu.md). */
    return p->uniform ? launch_pipelined_as<true, true, 2>(b, p, &sh)
                      : launch_pipelined_as<false, true, 2>(b, p, &sh);
}
