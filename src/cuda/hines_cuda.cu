/*
 * CUDA backend: batched Hines solves on one or more GPUs.
 *
 * Kernels (docs/gpu.md), each followed by a small static launcher:
 *   per_thread    the paper's kernel: one thread per system; Flat, Full-Interleaved
 *                 and Block-Interleaved are the same code with B systems per block
 *   block_shared  the paper's Block-Shared: BLOCK layout, rhs staged in shared memory
 *   staged        ours for few systems: one warp per system, the system copied to
 *                 shared memory, eliminated there with register-carried chains
 *   streamed      ours for many systems: a warp solves 32 (16, 8) adjacent systems; inputs
 *                 stream once through a cp.async ring, intermediates stay on chip,
 *                 so memory sees each input read once and the solution written once
 *   pipelined     ours for many systems: a thread per system with a row plan
 *   branched      ours for few systems: a block per team of adjacent systems staged on
 *                 chip, the tree's subtrees shared out stage by stage (core/hines_branched.h)
 *
 * Element (s, i) of a part (a device's range of systems) is at
 * (s / B) * m * B + i * B + s % B (docs/layouts.md).
 */
#include <cuda_pipeline.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "common/hines_branched.h"
#include "common/hines_plan.h"
#include "common/status.h"
}
#include "cuda/backend_cuda.h"
#include "cuda/cuda_check.h"

#define MAX_DEVICES 16
#define PER_THREAD_BLOCK 128
#define STREAM_RING 64  /* rows in flight per warp in the streamed kernel */
#define STAGED_WARPS 4  /* systems per CUDA block in the staged kernel, at most */
#define PIPE_PREFETCH_DEEP 8 /* rows a pipelined thread has in flight (HB_PIPE_PREFETCH 2 or 8) */
#define PIPE_THREADS 128 /* threads per block of the pipelined kernel (HB_PIPE_THREADS) */
#define BRANCHED_THREADS 256 /* threads per block of the branched kernel (lanes x workers) */
#define BRANCHED_WIDE_THREADS 512 /* its wide blocks, for latency-bound plans (docs/gpu.md) */

struct hb_cuda_context {
    int devices;
    int id[MAX_DEVICES];
    cudaStream_t stream[MAX_DEVICES];
    int sm_count[MAX_DEVICES];
    size_t smem_optin[MAX_DEVICES]; /* largest dynamic shared memory per block [bytes] */
    char name[256];
};

typedef struct {
    int device;     /* index into the context's devices */
    int s0, count;  /* global systems [s0, s0 + count) */
    int block;      /* B of this part */
    size_t size;    /* elements per array, padding included */
    int *parent;    /* device copy */
    double *u, *l, *d, *rhs;
    int *code;      /* the pipelined kernel's row plan (core/hines_plan.h) */
    double *cu, *cl; /* u and l of system 0, m each: every system's when `uniform` */
    int uniform;    /* all systems of the batch have the same u and l */
    void *scratch;  /* pipelined kernel's (a, b) rows beyond the on-chip tail */
    size_t scratch_bytes;
    int *branched_tables[2];  /* the branched kernel's plan tables on this device [uniform] */
} part_t;

/* The branched kernel's shape for one kind of batch (own u and l, or shared). */
typedef struct {
    hb_hines_branched_t plan; /* lanes 0: the kernel cannot run */
    int threads;              /* threads per block: lanes x workers */
    int per_sm;               /* blocks a multiprocessor holds */
    int max_blocks;           /* grid cap, 0 for none (HB_BRANCHED_BLOCKS: tests) */
    size_t smem;              /* shared memory per block [bytes] */
} branched_config_t;

struct hb_cuda_batch {
    hb_cuda_context_t *ctx;
    int m, count, block;
    hb_layout_t layout;
    int parts;
    int slots;      /* the pipelined kernel's accumulator slots; -1: the tree needs too many */
    branched_config_t branched[2]; /* the branched kernel's shape [uniform] */
    part_t part[MAX_DEVICES];
};

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

__device__ __forceinline__ size_t system_base(int m, int block, int s)
{
    return (size_t)(s / block) * (size_t)m * (size_t)block + (size_t)(s % block);
}

/* Algorithm 1, one thread per system: the paper's Flat / Full- / Block-Interleaved. */
__global__ void per_thread_kernel(int m, const int *__restrict__ parent,
                                  const double *__restrict__ u, const double *__restrict__ l,
                                  double *__restrict__ d, double *__restrict__ rhs, int count,
                                  int block)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count) return;
    const size_t base = system_base(m, block, s), stride = (size_t)block;
    for (int i = m - 1; i > 0; --i) {
        const size_t r = base + (size_t)i * stride, pr = base + (size_t)__ldg(&parent[i]) * stride;
        const double factor = u[r] / d[r];
        d[pr] -= factor * l[r];
        rhs[pr] -= factor * rhs[r];
    }
    rhs[base] /= d[base];
    for (int i = 1; i < m; ++i) {
        const size_t r = base + (size_t)i * stride, pr = base + (size_t)__ldg(&parent[i]) * stride;
        rhs[r] -= l[r] * rhs[pr];
        rhs[r] /= d[r];
    }
}

/* The paper's Block-Shared: a CUDA block per layout block, its rhs in shared memory. */
__global__ void block_shared_kernel(int m, const int *__restrict__ parent,
                                    const double *__restrict__ u, const double *__restrict__ l,
                                    double *__restrict__ d, double *__restrict__ rhs)
{
    extern __shared__ double shared_rhs[]; /* [m][bs] */
    const int bs = blockDim.x, lane = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * (size_t)m * (size_t)bs + (size_t)lane;
    for (int i = 0; i < m; ++i) shared_rhs[i * bs + lane] = rhs[base + (size_t)i * bs];
    for (int i = m - 1; i > 0; --i) {
        const int p = __ldg(&parent[i]);
        const size_t r = base + (size_t)i * bs, pr = base + (size_t)p * bs;
        const double factor = u[r] / d[r];
        d[pr] -= factor * l[r];
        shared_rhs[p * bs + lane] -= factor * shared_rhs[i * bs + lane];
    }
    shared_rhs[lane] /= d[base];
    for (int i = 1; i < m; ++i) {
        const int p = __ldg(&parent[i]);
        const size_t r = base + (size_t)i * bs;
        double x = shared_rhs[i * bs + lane] - l[r] * shared_rhs[p * bs + lane];
        shared_rhs[i * bs + lane] = x / d[r];
    }
    for (int i = 0; i < m; ++i) rhs[base + (size_t)i * bs] = shared_rhs[i * bs + lane];
}

/* 1/x to about 1 ulp: the hardware estimate y (relative error e, about 2^-22)
 * refined once to third order, y (1 + e + e^2), leaving e^3. */
__device__ __forceinline__ double fast_rcp(double x)
{
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    double e = fma(-x, y, 1.0);
    e = fma(e, e, e);
    return fma(y, e, y);
}

/*
 * One row of the backward sweep. d_row and r_row already hold the row's
 * inputs plus the contributions of every child but the carried one (child
 * i + 1). Returns the forward-sweep pair (a, b) = (r'/d', l/d') and the
 * contributions (cd, cr) this row makes to its parent. Only d' -> 1/d' -> cd
 * is on the critical path.
 */
__device__ __forceinline__ double2 backward_row(double ui, double li, double d_row, double r_row,
                                                double carry_d, double carry_r, double *cd,
                                                double *cr)
{
    const double ul = ui * li; /* independent of the chain */
    const double r = r_row + carry_r;
    const double inv = fast_rcp(d_row + carry_d);
    *cd = -ul * inv;
    *cr = -(ui * inv) * r;
    return make_double2(r * inv, li * inv);
}

/*
 * Elimination of one system held in shared memory (su, sl, sd, sr; sd and sr
 * are overwritten with b and a, then sr with x). The contribution of child
 * i + 1 to row i (the usual case in Hines order) stays in registers; other
 * children accumulate in sd/sr[parent], which is final one row early, so it is
 * loaded ahead.
 */
__device__ void solve_shared_system(int m, const int *sp, const double *su, const double *sl,
                                    double *sd, double *sr)
{
    double carry_d = 0.0, carry_r = 0.0;
    double d_next = sd[m - 1], r_next = sr[m - 1];
    for (int i = m - 1; i > 0; --i) {
        const double d_row = d_next, r_row = r_next;
        d_next = sd[i - 1]; /* row i - 1 only waits for this row's carry */
        r_next = sr[i - 1];
        double cd, cr;
        const double2 ab = backward_row(su[i], sl[i], d_row, r_row, carry_d, carry_r, &cd, &cr);
        sr[i] = ab.x;
        sd[i] = ab.y;
        const int p = sp[i];
        if (p == i - 1) {
            carry_d = cd;
            carry_r = cr;
        } else {
            sd[p] += cd;
            sr[p] += cr;
            carry_d = carry_r = 0.0;
        }
    }
    double x = (r_next + carry_r) / (d_next + carry_d);
    sr[0] = x;
    for (int i = 1; i < m; ++i) {
        const int p = sp[i];
        const double xp = p == i - 1 ? x : sr[p];
        x = sr[i] - sd[i] * xp;
        sr[i] = x;
    }
}

/* Ours for few systems: a warp per system, staged in shared memory. */
__global__ void staged_kernel(int m, const int *__restrict__ parent, const double *__restrict__ u,
                              const double *__restrict__ l, const double *__restrict__ d,
                              double *__restrict__ rhs, int count, int block)
{
    extern __shared__ double staged[]; /* warps x [u l d rhs][m], then parent[m] */
    const int warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int *sp = (int *)(staged + (size_t)warps * 4 * m);
    for (int i = threadIdx.x; i < m; i += blockDim.x) sp[i] = parent[i];
    const int s = blockIdx.x * warps + warp;
    double *su = staged + (size_t)warp * 4 * m, *sl = su + m, *sd = sl + m, *sr = sd + m;
    const size_t base = s < count ? system_base(m, block, s) : 0, stride = (size_t)block;
    if (s < count) {
        for (int i = lane; i < m; i += 32) {
            const size_t r = base + (size_t)i * stride;
            su[i] = u[r];
            sl[i] = l[r];
            sd[i] = d[r];
            sr[i] = rhs[r];
        }
    }
    __syncthreads();
    if (s >= count) return;
    if (lane == 0) solve_shared_system(m, sp, su, sl, sd, sr);
    __syncwarp();
    for (int i = lane; i < m; i += 32) rhs[base + (size_t)i * stride] = sr[i];
}

/* cp.async of 8 bytes and its group operations (PTX; wait_group takes any depth). */
__device__ __forceinline__ void cp_async8(double *smem, const double *gmem)
{
    const unsigned dst = (unsigned)__cvta_generic_to_shared(smem);
    asm volatile("cp.async.ca.shared.global [%0], [%1], 8;" ::"r"(dst), "l"(gmem) : "memory");
}
__device__ __forceinline__ void cp_async_commit(void)
{
    asm volatile("cp.async.commit_group;" ::: "memory");
}
#define CP_ASYNC_WAIT(n) asm volatile("cp.async.wait_group %0;" ::"n"(n) : "memory")

/* Queue row `row` of the four arrays into its ring slot (one commit group per row). */
__device__ __forceinline__ void stream_row(double *ring, int lanes, int lane, bool active, int row,
                                           size_t base, size_t stride, const double *u,
                                           const double *l, const double *d, const double *rhs)
{
    if (row >= 0 && active) {
        const size_t r = base + (size_t)row * stride + (size_t)lane;
        double *dst = ring + (size_t)(row % STREAM_RING) * 4 * lanes + lane;
        cp_async8(dst, u + r);
        cp_async8(dst + lanes, l + r);
        cp_async8(dst + 2 * lanes, d + r);
        cp_async8(dst + 3 * lanes, rhs + r);
    }
    cp_async_commit();
}

/*
 * Ours for many systems: a warp of `lanes` threads (32, or 16 / 8 when the
 * intermediates of 32 systems do not fit) solves adjacent systems, lane k the
 * system lanes * block + k, whose rows are `lanes` adjacent doubles `stride`
 * apart (INTERLEAVED, or BLOCK with bs % lanes == 0). Rows arrive in descending
 * order through a STREAM_RING-deep cp.async ring, so each input element is read
 * from memory once. The backward sweep leaves a_i = r'_i / d'_i and
 * b_i = l_i / d'_i in shared memory (slot i accumulates the contributions of
 * the children of i until row i is reached; child i + 1's stays in registers),
 * so the forward sweep x_i = a_i - b_i x_p only writes x to memory.
 */
__global__ void __launch_bounds__(32) streamed_kernel(int m, const int *__restrict__ parent,
                                                     const double *__restrict__ u,
                                                     const double *__restrict__ l,
                                                     const double *__restrict__ d,
                                                     double *__restrict__ rhs, int count,
                                                     int block)
{
    extern __shared__ double2 stream_smem[];
    const int lanes = blockDim.x, lane = threadIdx.x;
    double2 *slot = stream_smem;                            /* [m][lanes] */
    double *ring = (double *)(slot + (size_t)m * lanes);    /* [STREAM_RING][4][lanes] */
    int *sp = (int *)(ring + (size_t)STREAM_RING * 4 * lanes); /* [m] */
    const int first = blockIdx.x * lanes;
    const bool active = first + lane < count;
    const size_t base = system_base(m, block, first), stride = (size_t)block;

    for (int i = lane; i < m; i += lanes) sp[i] = parent[i];
    for (int i = 0; i < m; ++i) slot[(size_t)i * lanes + lane] = make_double2(0.0, 0.0);
    for (int k = 0; k < STREAM_RING; ++k)
        stream_row(ring, lanes, lane, active, m - 1 - k, base, stride, u, l, d, rhs);
    __syncwarp();

    /*
     * Backward sweep. Along a run of rows each carrying its child i + 1, the
     * eliminated diagonal is a ratio d'_i = t_i / t_below of the linear
     * recurrence t_i = D_i t_{i+1} - (u l)_{i+1} t_{i+2} (D: the diagonal plus
     * the other children's contributions), so the only dependent operation per
     * row is one FMA; t and t_below are rescaled together by exact powers of
     * two. 1/d' and everything that needs it (the rhs chain, the (a, b) pair,
     * the contributions to a parent) are done one row later, off the chain.
     */
    double t = 1.0, t_below = 1.0;   /* row i + 1's t and its t_below */
    double ul_below = 0.0;           /* u l of row i + 1 */
    int p_below = -1;                /* parent of row i + 1 */
    double du = 0.0, dl = 0.0, dr = 0.0, dinv = 0.0; /* the delayed row i + 1 */
    double carry_r = 0.0;            /* rhs contribution carried into the delayed row */
    double2 acc_next = make_double2(0.0, 0.0); /* row m - 1 has no children */
    int p_next = sp[m - 1];
    for (int i = m - 1; i >= 0; --i) {
        CP_ASYNC_WAIT(STREAM_RING - 1); /* row i's group has landed */
        __syncwarp();
        const double *row = ring + (size_t)(i % STREAM_RING) * 4 * lanes;
        const double ui = row[lane], li = row[lanes + lane];
        const double di = row[2 * lanes + lane], ri = row[3 * lanes + lane];
        const double2 acc = acc_next;
        const int p = p_next;

        /* The chain: t_i from t_{i+1}. */
        const bool carried = p_below == i;
        const double pick = carried ? t : 1.0;
        double t_new = fma(di + acc.x, pick, carried ? -ul_below * t_below : 0.0);
        double below_new = pick;
        const double mag = fabs(t_new);
        if (mag > 0x1p+600 || mag < 0x1p-600) {
            const double scale = mag > 1.0 ? 0x1p-600 : 0x1p+600;
            t_new *= scale;
            below_new *= scale;
        }
        const double inv_new = below_new * fast_rcp(t_new); /* 1/d'_i, used next row */

        /* Row i + 1, one row late: its rhs, (a, b) and contribution to its parent. */
        if (i + 1 < m) {
            const double r1 = dr + carry_r, f = du * dinv;
            slot[(size_t)(i + 1) * lanes + lane] = make_double2(r1 * dinv, dl * dinv);
            if (p_below == i) {
                carry_r = -f * r1;
            } else {
                double2 *acc_p = &slot[(size_t)p_below * lanes + lane];
                acc_p->x -= du * dl * dinv;
                acc_p->y -= f * r1;
                carry_r = 0.0;
            }
        }
        /* Row i - 1's accumulator is final now (its other children are done). */
        if (i > 0) {
            acc_next = slot[(size_t)(i - 1) * lanes + lane];
            p_next = sp[i - 1];
        }
        __syncwarp(); /* every lane has read the ring slot before it is refilled */
        stream_row(ring, lanes, lane, active, i - STREAM_RING, base, stride, u, l, d, rhs);

        du = ui;
        dl = li;
        dr = ri + acc.y;
        dinv = inv_new;
        ul_below = ui * li;
        t = t_new;
        t_below = below_new;
        p_below = p;
    }
    /* The root, one row late like the others: x_0 = r'_0 / d'_0. */
    slot[lane] = make_double2((dr + carry_r) * dinv, 0.0);
    CP_ASYNC_WAIT(0);

    /* Forward sweep from shared memory; x overwrites a in slot i. */
    double x = slot[lane].x;
    if (active) rhs[base + lane] = x;
    for (int i = 1; i < m; ++i) {
        const int p = sp[i];
        const double2 ab = slot[(size_t)i * lanes + lane];
        const double xp = p == i - 1 ? x : slot[(size_t)p * lanes + lane].x;
        x = ab.x - ab.y * xp;
        slot[(size_t)i * lanes + lane].x = x;
        if (active) rhs[base + (size_t)i * stride + lane] = x;
    }
}

/* L2 line discard (PTX, sm_80+): the line is dropped without a write-back. */
__device__ __forceinline__ void discard_l2_line(const void *line)
{
    asm volatile("discard.global.L2 [%0], 128;" ::"l"(line) : "memory");
}

/*
 * Ours for many systems: one thread per system, the row plan of
 * core/hines_plan.h (the CPU twin is hb_hines_plan_solve). Each thread keeps
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

/*
 * Ours for few systems, and for many: a team is L = lanes adjacent systems, staged in shared
 * memory (core/hines_branched.h, hb_branched_layout); thread t works on lane t % L, and the
 * block's blockDim.x / L workers share out each stage's tasks. Only x goes back to memory.
 * Blocks are persistent: block k solves teams k, k + gridDim.x, ..., so the tables, the shared
 * u and l of a uniform batch, and the sink and zero nodes are staged once a block. (A second
 * team buffer, filled by cp.async while a team is solved, halves the teams on chip and was
 * slower at every point measured on an H100: bench/results/hines-h100-2026-11-22f-sweep.txt.)
 * The stage loops run in a function of their own, as GROUPED's level loops (multi_cuda.cu
 * says why).
 */
template <bool GLOBAL_TABLES, bool SPLIT>
__device__ __noinline__ void branched_stages_of(int m, int couplings, int lanes, int uniform,
                                                int words, const int *__restrict__ global_tables)
{
    extern __shared__ double team_smem[];
    const hb_branched_layout_t a =
        hb_branched_layout(m, couplings, lanes, GLOBAL_TABLES ? 0 : (size_t)words, uniform);
    const int k = threadIdx.x % lanes, first = threadIdx.x / lanes, workers = blockDim.x / lanes;
    /* staged tables: shared-memory loads; a cell too large for them reads them from memory */
    const hb_branched_tables_t t = hb_branched_tables_at(
        m, GLOBAL_TABLES ? global_tables : (const int *)(team_smem + a.tables));
    const hb_branched_lane_t v = hb_branched_lane(team_smem, &a, lanes, uniform, k);
    const int idle = first >= workers; /* SHAPES: lanes need not divide the block */
    for (int s = 0; s < t.n_stages; ++s) {
        if (!idle) hb_branched_eliminate_stage(&t, &v, s, first, workers, SPLIT);
        __syncthreads();
    }
    for (int s = t.n_stages - 1; s >= 0; --s) {
        if (!idle) hb_branched_substitute_stage(&t, &v, s, first, workers, SPLIT);
        __syncthreads();
    }
}

/* SHAPES's choice among the four at run time, per class: tables in memory (global_tables)
 * or staged (NULL); a plan with split chains has coupling nodes, one without runs row loops
 * free of them. */
__device__ __forceinline__ void branched_stages(int m, int couplings, int lanes, int uniform,
                                                int words, const int *global_tables)
{
    const int *g = global_tables;
    if (g && couplings) branched_stages_of<true, true>(m, couplings, lanes, uniform, words, g);
    else if (g) branched_stages_of<true, false>(m, couplings, lanes, uniform, words, g);
    else if (couplings) branched_stages_of<false, true>(m, couplings, lanes, uniform, words, g);
    else branched_stages_of<false, false>(m, couplings, lanes, uniform, words, g);
}

/* Row i of lane v's system (its elements at g in the arrays) into shared memory by cp.async:
 * d and rhs, and u and l unless the batch is uniform. */
__device__ __forceinline__ void branched_copy_row(const hb_branched_lane_t *v, int i, size_t g,
                                                  int uniform, const double *__restrict__ u,
                                                  const double *__restrict__ l,
                                                  const double *__restrict__ d,
                                                  const double *__restrict__ rhs)
{
    double *dr = v->dr + i * v->dr_row;
    cp_async8(dr, d + g);
    cp_async8(dr + 1, rhs + g);
    if (!uniform) {
        double *ul = v->ul + i * v->ul_row;
        cp_async8(ul, u + g);
        cp_async8(ul + 1, l + g);
    }
}

/* This thread's share of team `team`'s rows, copied into shared memory (cp.async, one group).
 * A missing system (the last team's) is a copy of the team's first. */
__device__ __forceinline__ void branched_load(const hb_branched_layout_t *a, int m, int lanes,
                                              int block, int uniform, int team,
                                              int count, const double *__restrict__ u,
                                              const double *__restrict__ l,
                                              const double *__restrict__ d,
                                              const double *__restrict__ rhs)
{
    extern __shared__ double team_smem[];
    const int workers = blockDim.x / lanes, s0 = team * lanes;
    int k, i0;
    hb_hines_branched_thread(threadIdx.x, lanes, workers, block, &k, &i0);
    const hb_branched_lane_t v = hb_branched_lane(team_smem, a, lanes, uniform, k);
    const size_t base = system_base(m, block, s0 + k < count ? s0 + k : s0), B = (size_t)block;
#pragma unroll 4
    for (int i = i0; i < m && i0 < workers; i += workers)
        branched_copy_row(&v, i, base + (size_t)i * B, uniform, u, l, d, rhs);
    cp_async_commit();
}

/* A block's once-per-plan staging: the tables (one image, 16 bytes a load), the shared u and l
 * of a uniform batch, the sink and zero nodes of every lane. */
__device__ __forceinline__ void branched_stage_plan(const hb_branched_layout_t *a, int m,
                                                    int lanes, int uniform,
                                                    const int *__restrict__ tables, int words,
                                                    const double *__restrict__ cu,
                                                    const double *__restrict__ cl)
{
    extern __shared__ double team_smem[];
    int *staged = (int *)(team_smem + a->tables);
    const int quads = words / 4;
    for (int j = threadIdx.x; j < quads; j += blockDim.x)
        ((int4 *)staged)[j] = __ldg(&((const int4 *)tables)[j]);
    for (int j = 4 * quads + threadIdx.x; j < words; j += blockDim.x) staged[j] = __ldg(&tables[j]);
    for (int i = threadIdx.x; uniform && i < m; i += blockDim.x)
        ((double2 *)(team_smem + a->ul))[i] = make_double2(__ldg(&cu[i]), __ldg(&cl[i]));
    for (int j = threadIdx.x; j < 2 * lanes; j += blockDim.x)
        ((double2 *)team_smem)[(size_t)m * lanes + j] = make_double2(0.0, 0.0);
}

/* x of this thread's share of team `team` written back (after branched_stages): lane k, rows
 * i0, i0 + workers, ... (hb_hines_branched_thread). */
__device__ __forceinline__ void branched_store(const hb_branched_layout_t *a, int m, int lanes,
                                               int block, int uniform, int team, int count,
                                               double *__restrict__ rhs, int k, int i0,
                                               int workers)
{
    extern __shared__ double team_smem[];
    const int s = team * lanes + k;
    if (s >= count || i0 >= workers) return; /* i0 >= workers: an idle thread (SHAPES) */
    const hb_branched_lane_t v = hb_branched_lane(team_smem, a, lanes, uniform, k);
    const size_t base = system_base(m, block, s), B = (size_t)block;
#pragma unroll 4
    for (int i = i0; i < m; i += workers) rhs[base + (size_t)i * B] = v.dr[i * v.dr_row + 1];
}

/* branched_store of team `team`, and branched_load of team `next` into the same slots, row by
 * row: a thread loads exactly the slots it wrote back (hb_hines_branched_thread), so no barrier
 * parts the two, and the next team's copies are in flight while x goes out. A slot's x is in a
 * register (the store waits for it) before its cp.async is issued. */
__device__ __forceinline__ void branched_store_load(
    const hb_branched_layout_t *a, int m, int lanes, int block, int uniform, int team, int next,
    int count, const double *__restrict__ u, const double *__restrict__ l,
    const double *__restrict__ d, double *__restrict__ rhs, int k, int i0, int workers)
{
    extern __shared__ double team_smem[];
    const hb_branched_lane_t v = hb_branched_lane(team_smem, a, lanes, uniform, k);
    const int s = team * lanes + k, s_next = next * lanes + k, s0 = next * lanes;
    const int active = s < count;
    const size_t B = (size_t)block, base = system_base(m, block, active ? s : team * lanes);
    const size_t base_next = system_base(m, block, s_next < count ? s_next : s0);
#pragma unroll 4
    for (int i = i0; i < m && i0 < workers; i += workers) { /* i0 >= workers: idle (SHAPES) */
        double *dr = v.dr + i * v.dr_row;
        const double x = dr[1];
        if (active) rhs[base + (size_t)i * B] = x;
        branched_copy_row(&v, i, base_next + (size_t)i * B, uniform, u, l, d, rhs);
    }
    cp_async_commit();
}

/* SPLIT: the plan has split chains (couplings > 0): one kernel each, so that a plan without
 * keeps the row loops and registers it had before split chains existed. */
template <bool SPLIT>
__global__ void __launch_bounds__(BRANCHED_WIDE_THREADS)
    branched_kernel(const int *__restrict__ tables, int words, int couplings, int m, int lanes,
                    int count, int block, int uniform, const double *__restrict__ u,
                    const double *__restrict__ l, const double *__restrict__ d,
                    double *__restrict__ rhs, const double *__restrict__ cu,
                    const double *__restrict__ cl)
{
    extern __shared__ double team_smem[];
    const hb_branched_layout_t a = hb_branched_layout(m, couplings, lanes, (size_t)words, uniform);
    const int teams = (count + lanes - 1) / lanes;
    int team = blockIdx.x;
    if (team < teams) branched_load(&a, m, lanes, block, uniform, team, count, u, l, d, rhs);
    branched_stage_plan(&a, m, lanes, uniform, tables, words, cu, cl);
    const int workers = blockDim.x / lanes;
    int k, i0;
    hb_hines_branched_thread(threadIdx.x, lanes, workers, block, &k, &i0);
    for (; team < teams; team += gridDim.x) {
        CP_ASYNC_WAIT(0);
        __syncthreads();
        branched_stages_of<false, SPLIT>(m, couplings, lanes, uniform, words, NULL);
        const int next = team + (int)gridDim.x;
        if (next < teams)
            branched_store_load(&a, m, lanes, block, uniform, team, next, count, u, l, d, rhs, k,
                                i0, workers);
        else
            branched_store(&a, m, lanes, block, uniform, team, count, rhs, k, i0, workers);
    }
}

/*
 * SHAPES of mixed batches (core/multi_shapes.h): the classes of one tier, each a same-tree
 * batch with its own plan and lanes, in one launch. Teams are numbered class after class;
 * block k solves teams k, k + gridDim.x, ..., staging a class's tables when it enters the
 * class (teams rise, so at most once per class). A class's team is one contiguous range
 * (block = lanes); u and l are every cell's own.
 */
__global__ void __launch_bounds__(BRANCHED_THREADS)
    shapes_kernel(const hb_cuda_shape_t *__restrict__ classes, int n_classes, int teams,
                  const int *__restrict__ tables, const double *__restrict__ u,
                  const double *__restrict__ l, const double *__restrict__ d,
                  double *__restrict__ rhs)
{
    int c = -1, loaded = -1; /* loaded: the team whose rows are already on their way in */
    hb_cuda_shape_t k = {};
    hb_branched_layout_t a = {};
    for (int team = blockIdx.x; team < teams; team += gridDim.x) {
        int next = c < 0 ? 0 : c;
        while (next + 1 < n_classes && classes[next + 1].team_first <= team) ++next;
        __syncthreads(); /* the previous team's x read out before its buffer is reused */
        if (next != c) {
            c = next;
            k = classes[c];
            a = hb_branched_layout(k.m, k.couplings, k.lanes, k.global_tables ? 0 : (size_t)k.words,
                                   0);
            branched_stage_plan(&a, k.m, k.lanes, 0, tables + k.table_off,
                                k.global_tables ? 0 : k.words, NULL, NULL);
        }
        const int local = team - k.team_first;
        if (loaded != team)
            branched_load(&a, k.m, k.lanes, k.lanes, 0, local, k.cells, u + k.base, l + k.base,
                          d + k.base, rhs + k.base);
        CP_ASYNC_WAIT(0);
        __syncthreads();
        branched_stages(k.m, k.couplings, k.lanes, 0, k.words,
                        k.global_tables ? tables + k.table_off : NULL);
        const int workers = blockDim.x / k.lanes;
        int lane, i0;
        hb_hines_branched_thread(threadIdx.x, k.lanes, workers, k.lanes, &lane, &i0);
        /* the block's next team in the same class: its rows go in as x goes out (a thread
         * loads the slots it wrote back, so no barrier parts the two) */
        const int after = team + (int)gridDim.x;
        const int class_end = c + 1 < n_classes ? classes[c + 1].team_first : teams;
        if (after < class_end) {
            branched_store_load(&a, k.m, k.lanes, k.lanes, 0, local, after - k.team_first, k.cells,
                                u + k.base, l + k.base, d + k.base, rhs + k.base, lane, i0,
                                workers);
            loaded = after;
        } else {
            branched_store(&a, k.m, k.lanes, k.lanes, 0, local, k.cells, rhs + k.base, lane, i0,
                           workers);
        }
    }
}

extern "C" hb_status_t hb_cuda_shapes_per_sm(int threads, size_t smem, size_t smem_optin,
                                             int *per_sm)
{
    *per_sm = 0;
    CUDA_CHECK(hb_cuda_allow_smem((const void *)shapes_kernel, smem_optin));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, shapes_kernel, threads, smem));
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_shapes_launch(const hb_cuda_shape_t *classes, int n_classes,
                                             int teams, int grid, int threads, size_t smem,
                                             const int *tables, const double *u, const double *l,
                                             const double *d, double *rhs, size_t smem_optin,
                                             void *stream)
{
    if (threads < 1 || threads > BRANCHED_THREADS)
        return hb_fail(HB_ERR_INVALID_VALUE, "shapes: %d threads; expected 1 to %d", threads,
                       BRANCHED_THREADS);
    CUDA_CHECK(hb_cuda_allow_smem((const void *)shapes_kernel, smem_optin));
    shapes_kernel<<<grid, threads, smem, (cudaStream_t)stream>>>(classes, n_classes, teams, tables,
                                                                 u, l, d, rhs);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Shape rules and launchers                                                */
/* ------------------------------------------------------------------------ */

static size_t staged_smem(int m, int warps)
{
    return (size_t)warps * 4 * (size_t)m * sizeof(double) + (size_t)m * sizeof(int);
}

static size_t streamed_smem(int m, int lanes)
{
    return (size_t)m * lanes * sizeof(double2) + (size_t)STREAM_RING * 4 * lanes * sizeof(double) +
           (size_t)m * sizeof(int);
}

/* An integer knob from the environment (experiments), or `fallback`. */
static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    return v && *v ? atoi(v) : fallback;
}

/* Lanes (systems per warp) of the streamed kernel: 32, else 16 or 8 when the
 * intermediates do not fit; 0 when the shape cannot use it. Systems handled by
 * one warp must be adjacent in every row: INTERLEAVED, or BLOCK with bs % lanes == 0. */
static int streamed_lanes(const hb_cuda_batch_t *b, size_t optin)
{
    /* HB_STREAM_LANES (8 or 16) caps the lanes: a tuning knob for experiments. */
    const int knob = env_int("HB_STREAM_LANES", 32);
    const int cap = knob == 8 || knob == 16 ? knob : 32;
    for (int lanes = cap; lanes >= 8; lanes /= 2) {
        if (streamed_smem(b->m, lanes) > optin) continue;
        if (b->layout == HB_LAYOUT_INTERLEAVED ||
            (b->layout == HB_LAYOUT_BLOCK && b->block % lanes == 0))
            return lanes;
        return 0;
    }
    return 0;
}

/* Launch shape of the pipelined kernel on one part. */
typedef struct {
    int threads;        /* per block */
    int tail;           /* rows whose (a, b) stay in shared memory */
    size_t smem;        /* per block [bytes] */
} pipe_shape_t;

/* Experiment knobs: HB_PIPE_THREADS (32..256, multiple of 32), HB_PIPE_TAIL
 * (cap on the shared-memory tail), HB_PIPE_DISCARD (0: keep scratch lines),
 * HB_PIPE_UNIFORM (0: read every system's u and l), HB_PIPE_PREFETCH (2 or 8 rows). Returns 0 when it cannot run. */
static int pipe_shape(const hb_cuda_batch_t *b, size_t optin, pipe_shape_t *shape)
{
    int threads = env_int("HB_PIPE_THREADS", PIPE_THREADS);
    if (threads < 32 || threads > 256 || threads % 32) threads = PIPE_THREADS;
    if (b->slots < 0) return 0;
    const size_t row_bytes = (size_t)threads * sizeof(double2);
    const size_t plan_bytes = (size_t)b->m * (2 * sizeof(double) + sizeof(int));
    if (plan_bytes + 1024 > optin) return 0;
    const size_t rows_fit = (optin - plan_bytes) / row_bytes;
    if (rows_fit < (size_t)b->slots) return 0;
    size_t tail = rows_fit - (size_t)b->slots;
    if (tail > (size_t)b->m) tail = (size_t)b->m;
    /* No tail by default: on an H100 (bench/results) occupancy hides latency
     * better than a tail saves traffic; the tail needs few threads per SM. */
    const int cap = env_int("HB_PIPE_TAIL", 0);
    if (cap >= 0 && tail > (size_t)cap) tail = (size_t)cap;
    shape->threads = threads;
    shape->tail = (int)tail;
    shape->smem = (tail + (size_t)b->slots) * row_bytes + plan_bytes;
    return 1;
}

/* Why `algo` cannot run on part k, or NULL when it can. */
static const char *unsupported(const hb_cuda_batch_t *b, const part_t *p, hb_hines_algo_t algo)
{
    const size_t optin = b->ctx->smem_optin[p->device];
    switch (algo) {
    case HB_HINES_ALGO_PER_THREAD: return NULL;
    case HB_HINES_ALGO_BLOCK_SHARED:
        if (b->layout != HB_LAYOUT_BLOCK) return "Block-Shared needs the BLOCK layout";
        if (b->block > 1024) return "Block-Shared needs a block size of at most 1024";
        if ((size_t)b->m * (size_t)b->block * sizeof(double) > optin)
            return "Block-Shared: m x block size x 8 bytes exceed shared memory";
        return NULL;
    case HB_HINES_ALGO_STAGED:
        return staged_smem(b->m, 1) > optin ? "staged: one system exceeds shared memory" : NULL;
    case HB_HINES_ALGO_PIPELINED: {
        pipe_shape_t shape;
        if (b->layout == HB_LAYOUT_FLAT) return "pipelined needs the INTERLEAVED or BLOCK layout";
        return pipe_shape(b, optin, &shape) ? NULL
                                            : "pipelined: the tree has too many forks open at "
                                              "once for shared memory";
    }
    case HB_HINES_ALGO_BRANCHED:
        return b->branched[p->uniform ? 1 : 0].plan.lanes
                   ? NULL
                   : "branched: one system's rows exceed shared memory";
    case HB_HINES_ALGO_STREAMED:
        if (b->layout == HB_LAYOUT_FLAT) return "streamed needs the INTERLEAVED or BLOCK layout";
        return streamed_lanes(b, optin) ? NULL
                                         : "streamed: the block size is not a multiple of the lanes, "
                                           "or 8 systems' intermediates exceed shared memory";
    default: return "unknown algorithm";
    }
}

extern "C" hb_hines_algo_t hb_cuda_batch_resolve(const hb_cuda_batch_t *b, hb_hines_algo_t algo)
{
    if (algo != HB_HINES_ALGO_AUTO) return algo;
    /* Measured on an H100 (docs/gpu.md, bench/results/hines-h100-2026-11-22f.md): the
     * branched kernel is the fastest at every size we measure, 256 to 256,000 systems of
     * 76-700 rows (1.2-1.75x the pipelined kernel at 256,000). The others serve trees
     * whose rows do not fit a block's shared memory: the staged kernel for up to two systems
     * per multiprocessor, up to two waves of streamed warps the streamed kernel, beyond that
     * the pipelined kernel, or the paper's kernel when the tree's fork slots do not fit. */
    const part_t *p = &b->part[0];
    const long sms = b->ctx->sm_count[p->device] > 0 ? b->ctx->sm_count[p->device] : 1;
    if (!unsupported(b, p, HB_HINES_ALGO_BRANCHED)) return HB_HINES_ALGO_BRANCHED;
    if (p->count <= 2 * sms && !unsupported(b, p, HB_HINES_ALGO_STAGED))
        return HB_HINES_ALGO_STAGED;
    const int lanes = streamed_lanes(b, b->ctx->smem_optin[p->device]);
    if (lanes && p->count <= 2 * sms * lanes && !unsupported(b, p, HB_HINES_ALGO_STREAMED))
        return HB_HINES_ALGO_STREAMED;
    if (!unsupported(b, p, HB_HINES_ALGO_PIPELINED)) return HB_HINES_ALGO_PIPELINED;
    return HB_HINES_ALGO_PER_THREAD;
}

static int ceil_div(long a, long b) { return (int)((a + b - 1) / b); }

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

typedef hb_status_t (*pipe_launcher_t)(const hb_cuda_batch_t *, part_t *, const pipe_shape_t *);

static hb_status_t launch_pipelined(const hb_cuda_batch_t *b, part_t *p)
{
    /* [deep prefetch][shared u, l][discard scratch lines] */
    static const pipe_launcher_t launchers[2][2][2] = {
        {{launch_pipelined_as<false, false, 2>, launch_pipelined_as<false, true, 2>},
         {launch_pipelined_as<true, false, 2>, launch_pipelined_as<true, true, 2>}},
        {{launch_pipelined_as<false, false, PIPE_PREFETCH_DEEP>,
          launch_pipelined_as<false, true, PIPE_PREFETCH_DEEP>},
         {launch_pipelined_as<true, false, PIPE_PREFETCH_DEEP>,
          launch_pipelined_as<true, true, PIPE_PREFETCH_DEEP>}}};
    pipe_shape_t sh;
    if (!pipe_shape(b, b->ctx->smem_optin[p->device], &sh))
        return hb_fail(HB_ERR_NOT_SUPPORTED, "pipelined: the tree has too many forks open at once");
    const int uniform = p->uniform && env_int("HB_PIPE_UNIFORM", 1) != 0;
    const int discard = env_int("HB_PIPE_DISCARD", 1) != 0;
    /* Two rows ahead: fewer registers, more threads per SM; on an H100 that beat
     * eight rows ahead at 25,600 and 256,000 systems (docs/gpu.md). */
    const int deep = env_int("HB_PIPE_PREFETCH", 2) != 2;
    return launchers[deep][uniform][discard](b, p, &sh);
}

/*
 * The branched kernel's shape for batches with their own u and l (uniform 0) or shared ones.
 * When one round of blocks holds every team (latency: 256 and 2,560 systems), lanes L (1 to
 * 32; 1 only when 2 systems' rows exceed shared memory) are chosen for the fewest rounds, the
 * smallest L among equals: more workers per system share its branches. Any L, not only
 * powers of two: on an H100, 2,560 systems of 305-319 rows run one round as 256 teams of 10
 * (two 100 KB blocks a multiprocessor), 1.5x faster than two rounds of teams of 4 and 1.2x
 * faster than one round of teams of 20; 256 systems of 300-700 rows run 8-10% faster as teams
 * of 2 than of 4, and 2-7% faster than teams of 1 (bench/results/hines-h100-2026-11-22c-lanes.txt).
 * With more teams (throughput), teams of 16, unless another power of two holds more systems
 * on chip (76-row cells: 32): on an H100 at 25,600 and 256,000 systems of 305-695 rows, 16 was
 * the fastest of 2-32 lanes, and 6, 12 and 24 (workers astride warps) were 1.3-2.5x slower
 * than 16 (bench/results/hines-h100-2026-11-22f-sweep.txt). A block has the most whole
 * workers that fit BRANCHED_THREADS threads, or BRANCHED_WIDE_THREADS for a latency-bound
 * plan with many teams when that keeps its blocks a multiprocessor; a plan is made for each L
 * (and width) tried (its stages depend on the workers). HB_BRANCHED_LANES fixes L,
 * HB_BRANCHED_THREADS the threads and HB_BRANCHED_STAGE_COST and HB_BRANCHED_SPLIT_ROWS the
 * plan's stage cost and chain split (experiments); HB_BRANCHED_BLOCKS caps the grid
 * (tests: many teams a block). The kernel cannot run when one system exceeds shared memory:
 * lanes stay 0.
 */
/* A plan for `lanes` lanes and `threads` threads, its shared memory and blocks a
 * multiprocessor (0 when it does not fit). */
static hb_status_t branched_plan(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                 int lanes, int threads, int stage_cost, int split_rows,
                                 size_t optin, hb_hines_branched_t *plan, size_t *smem,
                                 int *per_sm)
{
    *per_sm = 0;
    hb_status_t status = hb_hines_branched_build(b->m, parent, lanes, threads / lanes, stage_cost,
                                                 split_rows, plan);
    if (status != HB_SUCCESS) return status;
    *smem = hb_branched_layout(b->m, plan->couplings, lanes, plan->words, uniform).bytes;
    cudaError_t e = *smem <= optin
                        ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              per_sm, plan->couplings ? branched_kernel<true> : branched_kernel<false>,
                              threads, *smem)
                        : cudaSuccess;
    if (e != cudaSuccess) {
        hb_hines_branched_free(plan);
        CUDA_CHECK(e);
    }
    return HB_SUCCESS;
}

/* Plans the same teams again, `threads` threads a block and chains split from `split_rows`,
 * and keeps that plan in *cur where it holds at least `min_per_sm` blocks a multiprocessor
 * (and, with `need_items`, has split chains). A failed plan frees *cur. */
static hb_status_t branched_replan(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                   int lanes, int threads, int stage_cost, int split_rows,
                                   size_t optin, int need_items, int min_per_sm,
                                   branched_config_t *cur)
{
    branched_config_t alt;
    memset(&alt, 0, sizeof alt);
    alt.threads = threads;
    hb_status_t status = branched_plan(b, parent, uniform, lanes, threads, stage_cost,
                                       split_rows, optin, &alt.plan, &alt.smem, &alt.per_sm);
    if (status != HB_SUCCESS) {
        hb_hines_branched_free(&cur->plan);
        return status;
    }
    if ((!need_items || alt.plan.n_items > 0) && alt.per_sm >= min_per_sm) {
        hb_hines_branched_free(&cur->plan);
        *cur = alt;
    } else {
        hb_hines_branched_free(&alt.plan);
    }
    return HB_SUCCESS;
}

static hb_status_t branched_try(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                int throughput, branched_config_t *cfg, long *best_rounds)
{
    /* Throughput: teams of 16 first, others only when they hold more systems on chip. */
    static const int throughput_lanes[] = {16, 32, 8, 4, 2, 1};
    const part_t *p0 = &b->part[0];
    const size_t optin = b->ctx->smem_optin[p0->device];
    const long sms = b->ctx->sm_count[p0->device] > 0 ? b->ctx->sm_count[p0->device] : 1;
    int knob = env_int("HB_BRANCHED_LANES", 0);
    if (knob < 1 || knob > 32) knob = 0;
    int stage_cost = env_int("HB_BRANCHED_STAGE_COST", HB_BRANCHED_STAGE_COST);
    if (stage_cost < 0) stage_cost = HB_BRANCHED_STAGE_COST;
    const int threads_knob = env_int("HB_BRANCHED_THREADS", 0);
    /* Split chains: HB_BRANCHED_SPLIT_ROWS forces the threshold (0: none); else they are used
     * with few teams (one round: the critical path is the time) in systems of 128 rows or
     * more, and, with many teams, where the plan without them is latency-bound
     * (hb_branched_split_pays). */
    int split_knob = env_int("HB_BRANCHED_SPLIT_ROWS", -1);
    if (split_knob > 0 && split_knob < HB_BRANCHED_MIN_SPLIT_ROWS) split_knob = -1;
    memset(cfg, 0, sizeof *cfg);
    *best_rounds = 0;
    for (int q = 0; q < (throughput ? 6 : 32); ++q) {
        const int lanes = throughput ? throughput_lanes[q] : 32 - q;
        if (knob && lanes != knob) continue;
        if (!knob && !throughput && lanes < 2 && cfg->plan.lanes >= 2) break;
        if (hb_branched_layout(b->m, 0, lanes, 0, uniform).bytes > optin)
            continue; /* before planning */
        /* All BRANCHED_THREADS: fewer workers, sized to the widest level, were slower on an
         * H100 (bench/results/hines-h100-2026-11-22c.md): the staging loops share the threads. */
        int threads = BRANCHED_THREADS / lanes * lanes;
        if (threads_knob >= lanes && threads_knob <= BRANCHED_WIDE_THREADS &&
            threads_knob % lanes == 0)
            threads = threads_knob;
        const int split_rows =
            split_knob >= 0                                              ? split_knob
            : throughput || b->m < HB_BRANCHED_SPLIT_MIN_ROWS_LATENCY ? 0
                                                                         : HB_BRANCHED_SPLIT_ROWS;
        branched_config_t cand;
        memset(&cand, 0, sizeof cand);
        cand.threads = threads;
        hb_status_t status = branched_plan(b, parent, uniform, lanes, threads, stage_cost,
                                           split_rows, optin, &cand.plan, &cand.smem,
                                           &cand.per_sm);
        const int latency_bound =
            status == HB_SUCCESS && hb_branched_latency_bound(&cand.plan, cand.per_sm);
        /* Split chains where they pay, if the plan still fits twice a multiprocessor. */
        if (status == HB_SUCCESS && split_knob < 0 && throughput &&
            hb_branched_split_pays(&cand.plan, cand.per_sm))
            status = branched_replan(b, parent, uniform, lanes, threads, stage_cost,
                                     HB_BRANCHED_SPLIT_ROWS, optin, 1, 2, &cand);
        /* Wide blocks: a latency-bound plan gets twice the workers when the block still fits
         * as many times a multiprocessor (its teams on chip stay; the extra threads run the
         * stages' other tasks and the copies). */
        if (status == HB_SUCCESS && throughput && latency_bound && !threads_knob)
            status = branched_replan(b, parent, uniform, lanes,
                                     BRANCHED_WIDE_THREADS / lanes * lanes, stage_cost,
                                     cand.plan.n_items ? HB_BRANCHED_SPLIT_ROWS : split_rows,
                                     optin, 0, cand.per_sm, &cand);
        if (status != HB_SUCCESS) {
            hb_hines_branched_free(&cfg->plan);
            memset(cfg, 0, sizeof *cfg);
            return status;
        }
        const long wave = (long)cand.per_sm * sms;
        const long rounds =
            cand.per_sm > 0 ? (ceil_div(p0->count, lanes) + wave - 1) / wave : 0;
        const int better =
            throughput ? (long)lanes * cand.per_sm > (long)cfg->plan.lanes * cfg->per_sm
                       : !cfg->plan.lanes || rounds <= *best_rounds;
        if (cand.per_sm > 0 && better) {
            hb_hines_branched_free(&cfg->plan);
            *cfg = cand;
            *best_rounds = rounds;
        } else {
            hb_hines_branched_free(&cand.plan);
        }
    }
    return HB_SUCCESS;
}

static hb_status_t branched_configure(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                      branched_config_t *cfg)
{
    long rounds = 0;
    hb_status_t status = branched_try(b, parent, uniform, 0, cfg, &rounds);
    if (status != HB_SUCCESS || (cfg->plan.lanes && rounds <= 1)) return status;
    branched_config_t many;
    if ((status = branched_try(b, parent, uniform, 1, &many, &rounds)) != HB_SUCCESS) {
        hb_hines_branched_free(&cfg->plan);
        memset(cfg, 0, sizeof *cfg);
        return status;
    }
    if (many.plan.lanes) {
        hb_hines_branched_free(&cfg->plan);
        *cfg = many;
    }
    return HB_SUCCESS;
}

/* Both shapes of the branched kernel, and their tables on every device. */
static hb_status_t branched_setup(hb_cuda_batch_t *b, const int *parent)
{
    const part_t *p0 = &b->part[0];
    CUDA_CHECK(cudaSetDevice(b->ctx->id[p0->device]));
    for (int split = 0; split < 2; ++split) /* for the occupancy */
        CUDA_CHECK(hb_cuda_allow_smem(
            split ? (const void *)branched_kernel<true> : (const void *)branched_kernel<false>,
            b->ctx->smem_optin[p0->device]));
    hb_status_t status = HB_SUCCESS;
    for (int uniform = 0; uniform < 2 && status == HB_SUCCESS; ++uniform) {
        branched_config_t *cfg = &b->branched[uniform];
        if ((status = branched_configure(b, parent, uniform, cfg)) != HB_SUCCESS || !cfg->plan.lanes)
            continue;
        cfg->max_blocks = env_int("HB_BRANCHED_BLOCKS", 0);
        const size_t bytes = cfg->plan.words * sizeof(int);
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            part_t *p = &b->part[k];
            cudaError_t e = cudaSetDevice(b->ctx->id[p->device]);
            if (e == cudaSuccess) e = cudaMalloc((void **)&p->branched_tables[uniform], bytes);
            if (e == cudaSuccess)
                e = cudaMemcpy(p->branched_tables[uniform], cfg->plan.tables, bytes,
                               cudaMemcpyHostToDevice);
            if (e != cudaSuccess)
                status = hb_fail(HB_CUDA_STATUS(e), "branched: %zu bytes of plan tables: %s",
                                 bytes, cudaGetErrorString(e));
        }
    }
    return status;
}

static hb_status_t launch(const hb_cuda_batch_t *b, part_t *p, hb_hines_algo_t algo)
{
    const int m = b->m;
    const size_t optin = b->ctx->smem_optin[p->device];
    cudaStream_t stream = b->ctx->stream[p->device];
    switch (algo) {
    case HB_HINES_ALGO_PER_THREAD:
        per_thread_kernel<<<ceil_div(p->count, PER_THREAD_BLOCK), PER_THREAD_BLOCK, 0, stream>>>(
            m, p->parent, p->u, p->l, p->d, p->rhs, p->count, p->block);
        break;
    case HB_HINES_ALGO_BLOCK_SHARED: {
        size_t smem = (size_t)m * (size_t)p->block * sizeof(double);
        CUDA_CHECK(hb_cuda_allow_smem((const void *)block_shared_kernel, optin));
        block_shared_kernel<<<ceil_div(p->count, p->block), p->block, smem, stream>>>(
            m, p->parent, p->u, p->l, p->d, p->rhs);
        break;
    }
    case HB_HINES_ALGO_STAGED: {
        int warps = STAGED_WARPS;
        while (warps > 1 && staged_smem(m, warps) > b->ctx->smem_optin[p->device]) warps--;
        size_t smem = staged_smem(m, warps);
        CUDA_CHECK(hb_cuda_allow_smem((const void *)staged_kernel, optin));
        staged_kernel<<<ceil_div(p->count, warps), 32 * warps, smem, stream>>>(
            m, p->parent, p->u, p->l, p->d, p->rhs, p->count, p->block);
        break;
    }
    case HB_HINES_ALGO_STREAMED: {
        const int lanes = streamed_lanes(b, b->ctx->smem_optin[p->device]);
        size_t smem = streamed_smem(m, lanes);
        CUDA_CHECK(hb_cuda_allow_smem((const void *)streamed_kernel, optin));
        streamed_kernel<<<ceil_div(p->count, lanes), lanes, smem, stream>>>(
            m, p->parent, p->u, p->l, p->d, p->rhs, p->count, p->block);
        break;
    }
    case HB_HINES_ALGO_PIPELINED: return launch_pipelined(b, p);
    case HB_HINES_ALGO_BRANCHED: {
        const int uniform = p->uniform ? 1 : 0;
        const branched_config_t *cfg = &b->branched[uniform];
        const hb_hines_branched_t *br = &cfg->plan;
        const int teams = ceil_div(p->count, br->lanes);
        int grid = cfg->per_sm * b->ctx->sm_count[p->device]; /* persistent: one wave */
        if (cfg->max_blocks > 0 && cfg->max_blocks < grid) grid = cfg->max_blocks;
        void (*kernel)(const int *, int, int, int, int, int, int, int, const double *,
                       const double *, const double *, double *, const double *,
                       const double *) =
            br->couplings ? branched_kernel<true> : branched_kernel<false>;
        CUDA_CHECK(hb_cuda_allow_smem((const void *)kernel, optin));
        kernel<<<teams < grid ? teams : grid, cfg->threads, cfg->smem, stream>>>(
            p->branched_tables[uniform], (int)br->words, br->couplings, m, br->lanes, p->count,
            p->block, uniform, p->u, p->l, p->d, p->rhs, p->cu, p->cl);
        break;
    }
    default: return hb_fail(HB_ERR_INVALID_VALUE, "unknown Hines algorithm %d", (int)algo);
    }
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Context                                                                  */
/* ------------------------------------------------------------------------ */

extern "C" int hb_cuda_device_available(void)
{
    int n = 0;
    return cudaGetDeviceCount(&n) == cudaSuccess && n > 0;
}

extern "C" hb_status_t hb_cuda_context_create(hb_cuda_context_t **out)
{
    *out = NULL;
    int n = 0;
    CUDA_CHECK(cudaGetDeviceCount(&n));
    if (n < 1) return hb_fail(HB_ERR_NOT_SUPPORTED, "no CUDA device");
    hb_cuda_context_t *c = (hb_cuda_context_t *)calloc(1, sizeof *c);
    if (!c) return hb_fail(HB_ERR_ALLOC, "out of memory creating a CUDA context");
    c->devices = n < MAX_DEVICES ? n : MAX_DEVICES;
    for (int k = 0; k < c->devices; ++k) {
        cudaDeviceProp prop;
        c->id[k] = k;
        cudaError_t e = cudaSetDevice(k);
        if (e == cudaSuccess) e = cudaGetDeviceProperties(&prop, k);
        if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&c->stream[k], cudaStreamNonBlocking);
        if (e != cudaSuccess) {
            hb_cuda_context_destroy(c);
            return hb_fail(HB_ERR_BACKEND, "CUDA device %d: %s", k, cudaGetErrorString(e));
        }
        c->sm_count[k] = prop.multiProcessorCount;
        c->smem_optin[k] = prop.sharedMemPerBlockOptin;
        if (k == 0) snprintf(c->name, sizeof c->name, "%s", prop.name);
    }
    *out = c;
    return HB_SUCCESS;
}

extern "C" void hb_cuda_context_destroy(hb_cuda_context_t *c)
{
    if (!c) return;
    for (int k = 0; k < c->devices; ++k)
        if (c->stream[k]) {
            cudaSetDevice(c->id[k]);
            cudaStreamDestroy(c->stream[k]);
        }
    free(c);
}

extern "C" int hb_cuda_context_devices(const hb_cuda_context_t *c) { return c ? c->devices : 0; }

extern "C" const char *hb_cuda_context_device_name(const hb_cuda_context_t *c)
{
    return c ? c->name : "";
}

extern "C" hb_status_t hb_cuda_copy_bandwidth(hb_cuda_context_t *c, size_t bytes, int repeats,
                                              double *bytes_per_second)
{
    void *a = NULL, *b = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    double *times = (double *)calloc((size_t)repeats, sizeof *times);
    hb_status_t status = HB_SUCCESS;
    if (!times) return hb_fail(HB_ERR_ALLOC, "out of memory");
    CUDA_TRY(status, cudaSetDevice(c->id[0]), done);
    CUDA_TRY(status, cudaMalloc(&a, bytes), done);
    CUDA_TRY(status, cudaMalloc(&b, bytes), done);
    CUDA_TRY(status, cudaMemsetAsync(a, 0x3f, bytes, c->stream[0]), done);
    CUDA_TRY(status, cudaEventCreate(&start), done);
    CUDA_TRY(status, cudaEventCreate(&stop), done);
    for (int k = -2; k < repeats; ++k) { /* two warm-up copies */
        CUDA_TRY(status, cudaEventRecord(start, c->stream[0]), done);
        CUDA_TRY(status, cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, c->stream[0]), done);
        CUDA_TRY(status, cudaEventRecord(stop, c->stream[0]), done);
        CUDA_TRY(status, cudaEventSynchronize(stop), done);
        float ms = 0;
        CUDA_TRY(status, cudaEventElapsedTime(&ms, start, stop), done);
        if (k >= 0) times[k] = ms * 1e-3;
    }
    for (int i = 1; i < repeats; ++i) /* median by insertion sort: repeats is small */
        for (int j = i; j > 0 && times[j] < times[j - 1]; --j) {
            double t = times[j];
            times[j] = times[j - 1];
            times[j - 1] = t;
        }
    *bytes_per_second = 2.0 * (double)bytes /
                        (repeats % 2 ? times[repeats / 2]
                                     : 0.5 * (times[repeats / 2 - 1] + times[repeats / 2]));
done:
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaFree(a);
    cudaFree(b);
    free(times);
    return status;
}

/* ------------------------------------------------------------------------ */
/* Batches                                                                  */
/* ------------------------------------------------------------------------ */

extern "C" void hb_cuda_batch_destroy(hb_cuda_batch_t *b)
{
    if (!b) return;
    for (int k = 0; k < b->parts; ++k) {
        part_t *p = &b->part[k];
        cudaSetDevice(b->ctx->id[p->device]);
        cudaFree(p->parent);
        cudaFree(p->u);
        cudaFree(p->l);
        cudaFree(p->d);
        cudaFree(p->rhs);
        cudaFree(p->code);
        cudaFree(p->cu);
        cudaFree(p->cl);
        cudaFree(p->scratch);
        cudaFree(p->branched_tables[0]);
        cudaFree(p->branched_tables[1]);
    }
    hb_hines_branched_free(&b->branched[0].plan);
    hb_hines_branched_free(&b->branched[1].plan);
    free(b);
}

extern "C" hb_status_t hb_cuda_batch_create(hb_cuda_context_t *c, int m, const int *parent,
                                            int count, hb_layout_t layout, int block,
                                            hb_cuda_batch_t **out)
{
    *out = NULL;
    hb_cuda_batch_t *b = (hb_cuda_batch_t *)calloc(1, sizeof *b);
    if (!b) return hb_fail(HB_ERR_ALLOC, "out of memory creating a CUDA batch");
    b->ctx = c;
    b->m = m;
    b->count = count;
    b->block = block;
    b->layout = layout;
    /* Split by whole layout blocks (BLOCK) or by systems in multiples of 32. */
    const int unit = layout == HB_LAYOUT_BLOCK ? block : 32;
    const int units = ceil_div(count, unit);
    b->parts = units < c->devices ? units : c->devices;
    hb_hines_plan_t plan = {0, 0, NULL};
    hb_status_t status = hb_hines_plan_build(m, parent, &plan);
    if (status == HB_ERR_ALLOC) {
        free(b);
        return status;
    }
    b->slots = status == HB_SUCCESS ? plan.slots : -1; /* too many forks: no pipelined kernel */
    hb_clear_error();
    status = HB_SUCCESS;
    for (int k = 0; k < b->parts; ++k) {
        part_t *p = &b->part[k];
        const int u0 = (int)((long)units * k / b->parts), u1 = (int)((long)units * (k + 1) / b->parts);
        p->device = k;
        p->s0 = u0 * unit;
        p->count = (u1 * unit < count ? u1 * unit : count) - p->s0;
        p->block = layout == HB_LAYOUT_FLAT ? 1 : layout == HB_LAYOUT_INTERLEAVED ? p->count : block;
        p->size = layout == HB_LAYOUT_BLOCK ? (size_t)(u1 - u0) * (size_t)block * (size_t)m
                                            : (size_t)p->count * (size_t)m;
        const size_t bytes = p->size * sizeof(double);
        CUDA_TRY(status, cudaSetDevice(c->id[k]), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->parent, (size_t)m * sizeof(int)), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->u, bytes), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->l, bytes), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->d, bytes), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->rhs, bytes), fail);
        CUDA_TRY(status, cudaMemcpy(p->parent, parent, (size_t)m * sizeof(int),
                                    cudaMemcpyHostToDevice), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->cu, (size_t)m * sizeof(double)), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->cl, (size_t)m * sizeof(double)), fail);
        if (plan.code) {
            CUDA_TRY(status, cudaMalloc((void **)&p->code, (size_t)m * sizeof(int)), fail);
            CUDA_TRY(status, cudaMemcpy(p->code, plan.code, (size_t)m * sizeof(int),
                                        cudaMemcpyHostToDevice), fail);
        }
    }
    hb_hines_plan_free(&plan);
    if ((status = branched_setup(b, parent)) != HB_SUCCESS) goto fail_built;
    *out = b;
    return HB_SUCCESS;
fail:
    hb_hines_plan_free(&plan);
fail_built:
    hb_cuda_batch_destroy(b);
    return status;
}

/* Whether every system's u and l equal system 0's, bit for bit (host copy,
 * global layout); if so they are read once per row by the pipelined kernel. */
static int coefficients_uniform(const hb_cuda_batch_t *b, const double *u, const double *l)
{
    const size_t B = (size_t)b->block;
    for (int i = 0; i < b->m; ++i) {
        const double *ur = u + (size_t)i * B, *lr = l + (size_t)i * B; /* system 0, row i */
        for (int s = 1; s < b->count; ++s) {
            const size_t off = (size_t)(s / b->block) * (size_t)b->m * B + (size_t)(s % b->block);
            if (memcmp(&ur[off], ur, sizeof(double)) != 0 || memcmp(&lr[off], lr, sizeof(double)) != 0)
                return 0;
        }
    }
    return 1;
}

/* Copies one array between the host's global layout and every part. */
static hb_status_t transfer(hb_cuda_batch_t *b, double *host, double *const *device_arrays,
                            size_t part_stride_bytes, int to_device)
{
    for (int k = 0; k < b->parts; ++k) {
        part_t *p = &b->part[k];
        double *dev = *(double *const *)((const char *)device_arrays + k * part_stride_bytes);
        cudaStream_t stream = b->ctx->stream[p->device];
        CUDA_CHECK(cudaSetDevice(b->ctx->id[p->device]));
        if (b->layout == HB_LAYOUT_INTERLEAVED) {
            /* Part k is columns [s0, s0 + count) of the host's m x count matrix. */
            const size_t width = (size_t)p->count * sizeof(double);
            const size_t pitch = (size_t)b->count * sizeof(double);
            if (to_device)
                CUDA_CHECK(cudaMemcpy2DAsync(dev, width, host + p->s0, pitch, width, (size_t)b->m,
                                             cudaMemcpyHostToDevice, stream));
            else
                CUDA_CHECK(cudaMemcpy2DAsync(host + p->s0, pitch, dev, width, width, (size_t)b->m,
                                             cudaMemcpyDeviceToHost, stream));
        } else {
            /* FLAT and BLOCK parts are contiguous runs of the host array. */
            const size_t offset = (size_t)p->s0 * (size_t)b->m;
            if (to_device)
                CUDA_CHECK(cudaMemcpyAsync(dev, host + offset, p->size * sizeof(double),
                                           cudaMemcpyHostToDevice, stream));
            else
                CUDA_CHECK(cudaMemcpyAsync(host + offset, dev, p->size * sizeof(double),
                                           cudaMemcpyDeviceToHost, stream));
        }
    }
    for (int k = 0; k < b->parts; ++k) {
        CUDA_CHECK(cudaSetDevice(b->ctx->id[b->part[k].device]));
        CUDA_CHECK(cudaStreamSynchronize(b->ctx->stream[b->part[k].device]));
    }
    return HB_SUCCESS;
}

#define PART_ARRAY(b, field) (&(b)->part[0].field), sizeof(part_t)

extern "C" hb_status_t hb_cuda_batch_upload(hb_cuda_batch_t *b, const double *u, const double *l,
                                            const double *d, const double *rhs)
{
    hb_status_t status = HB_SUCCESS;
    if (u && status == HB_SUCCESS) status = transfer(b, (double *)u, PART_ARRAY(b, u), 1);
    if (l && status == HB_SUCCESS) status = transfer(b, (double *)l, PART_ARRAY(b, l), 1);
    if (u && l && status == HB_SUCCESS) {
        const int uniform = coefficients_uniform(b, u, l);
        double *cu = (double *)malloc((size_t)b->m * 2 * sizeof(double));
        if (!cu) return hb_fail(HB_ERR_ALLOC, "out of memory");
        for (int i = 0; i < b->m; ++i) { /* system 0's rows */
            cu[i] = u[(size_t)i * (size_t)b->block];
            cu[b->m + i] = l[(size_t)i * (size_t)b->block];
        }
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            part_t *p = &b->part[k];
            p->uniform = uniform;
            cudaError_t e = cudaSetDevice(b->ctx->id[p->device]);
            if (e == cudaSuccess)
                e = cudaMemcpy(p->cu, cu, (size_t)b->m * sizeof(double), cudaMemcpyHostToDevice);
            if (e == cudaSuccess)
                e = cudaMemcpy(p->cl, cu + b->m, (size_t)b->m * sizeof(double),
                               cudaMemcpyHostToDevice);
            if (e != cudaSuccess) status = hb_fail(HB_ERR_BACKEND, "CUDA: %s", cudaGetErrorString(e));
        }
        free(cu);
    } else if (u || l) {
        for (int k = 0; k < b->parts; ++k) b->part[k].uniform = 0;
    }
    if (d && status == HB_SUCCESS) status = transfer(b, (double *)d, PART_ARRAY(b, d), 1);
    if (rhs && status == HB_SUCCESS) status = transfer(b, (double *)rhs, PART_ARRAY(b, rhs), 1);
    return status;
}

extern "C" hb_status_t hb_cuda_batch_download(hb_cuda_batch_t *b, double *u, double *l, double *d,
                                              double *rhs)
{
    hb_status_t status = HB_SUCCESS;
    if (u && status == HB_SUCCESS) status = transfer(b, u, PART_ARRAY(b, u), 0);
    if (l && status == HB_SUCCESS) status = transfer(b, l, PART_ARRAY(b, l), 0);
    if (d && status == HB_SUCCESS) status = transfer(b, d, PART_ARRAY(b, d), 0);
    if (rhs && status == HB_SUCCESS) status = transfer(b, rhs, PART_ARRAY(b, rhs), 0);
    return status;
}

static hb_status_t check_algo(const hb_cuda_batch_t *b, hb_hines_algo_t algo)
{
    for (int k = 0; k < b->parts; ++k) {
        const char *why = unsupported(b, &b->part[k], algo);
        if (why)
            return hb_fail(HB_ERR_NOT_SUPPORTED, "%s (m = %d, %d systems, layout %s, block %d)",
                           why, b->m, b->part[k].count, hb_layout_name(b->layout), b->block);
    }
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_batch_solve(hb_cuda_batch_t *b, hb_hines_algo_t algo)
{
    algo = hb_cuda_batch_resolve(b, algo);
    hb_status_t status = check_algo(b, algo);
    if (status != HB_SUCCESS) return status;
    for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
        CUDA_CHECK(cudaSetDevice(b->ctx->id[b->part[k].device]));
        status = launch(b, &b->part[k], algo);
    }
    for (int k = 0; k < b->parts; ++k) {
        CUDA_CHECK(cudaSetDevice(b->ctx->id[b->part[k].device]));
        CUDA_CHECK(cudaStreamSynchronize(b->ctx->stream[b->part[k].device]));
    }
    return status;
}

static hb_status_t copy_parts(hb_cuda_batch_t *dst, const hb_cuda_batch_t *src, int all_arrays)
{
    for (int k = 0; k < dst->parts; ++k) {
        part_t *p = &dst->part[k];
        const part_t *q = &src->part[k];
        cudaStream_t stream = dst->ctx->stream[p->device];
        const size_t bytes = p->size * sizeof(double);
        CUDA_CHECK(cudaSetDevice(dst->ctx->id[p->device]));
        if (all_arrays) {
            const size_t mb = (size_t)dst->m * sizeof(double);
            CUDA_CHECK(cudaMemcpyAsync(p->u, q->u, bytes, cudaMemcpyDeviceToDevice, stream));
            CUDA_CHECK(cudaMemcpyAsync(p->l, q->l, bytes, cudaMemcpyDeviceToDevice, stream));
            CUDA_CHECK(cudaMemcpyAsync(p->cu, q->cu, mb, cudaMemcpyDeviceToDevice, stream));
            CUDA_CHECK(cudaMemcpyAsync(p->cl, q->cl, mb, cudaMemcpyDeviceToDevice, stream));
            p->uniform = q->uniform;
        }
        CUDA_CHECK(cudaMemcpyAsync(p->d, q->d, bytes, cudaMemcpyDeviceToDevice, stream));
        CUDA_CHECK(cudaMemcpyAsync(p->rhs, q->rhs, bytes, cudaMemcpyDeviceToDevice, stream));
    }
    return HB_SUCCESS;
}

static hb_status_t same_shape(const hb_cuda_batch_t *a, const hb_cuda_batch_t *b)
{
    if (a->ctx != b->ctx || a->m != b->m || a->count != b->count || a->layout != b->layout ||
        a->block != b->block || a->parts != b->parts)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "CUDA batches differ in context, shape or layout; expected the same");
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_batch_copy(hb_cuda_batch_t *dst, const hb_cuda_batch_t *src)
{
    hb_status_t status = same_shape(dst, src);
    if (status == HB_SUCCESS) status = copy_parts(dst, src, 1);
    for (int k = 0; k < dst->parts && status == HB_SUCCESS; ++k) {
        CUDA_CHECK(cudaSetDevice(dst->ctx->id[dst->part[k].device]));
        CUDA_CHECK(cudaStreamSynchronize(dst->ctx->stream[dst->part[k].device]));
    }
    return status;
}

extern "C" hb_status_t hb_cuda_batch_benchmark(hb_cuda_batch_t *b, const hb_cuda_batch_t *src,
                                               hb_hines_algo_t algo, int repeats, double *seconds)
{
    hb_status_t status = same_shape(b, src);
    if (status != HB_SUCCESS) return status;
    algo = hb_cuda_batch_resolve(b, algo);
    if ((status = check_algo(b, algo)) != HB_SUCCESS) return status;
    /* Events on every device; a solve's time is the slowest device's. */
    cudaEvent_t start[MAX_DEVICES] = {0}, stop[MAX_DEVICES] = {0};
    for (int k = 0; k < b->parts; ++k) {
        CUDA_TRY(status, cudaSetDevice(b->ctx->id[b->part[k].device]), done);
        CUDA_TRY(status, cudaEventCreate(&start[k]), done);
        CUDA_TRY(status, cudaEventCreate(&stop[k]), done);
    }
    for (int r = -1; r < repeats && status == HB_SUCCESS; ++r) { /* one warm-up */
        if ((status = copy_parts(b, src, 0)) != HB_SUCCESS) break;
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            part_t *p = &b->part[k];
            CUDA_TRY(status, cudaSetDevice(b->ctx->id[p->device]), done);
            CUDA_TRY(status, cudaEventRecord(start[k], b->ctx->stream[p->device]), done);
            status = launch(b, p, algo);
            CUDA_TRY(status, cudaEventRecord(stop[k], b->ctx->stream[p->device]), done);
        }
        double worst = 0.0;
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            float ms = 0;
            CUDA_TRY(status, cudaSetDevice(b->ctx->id[b->part[k].device]), done);
            CUDA_TRY(status, cudaEventSynchronize(stop[k]), done);
            CUDA_TRY(status, cudaEventElapsedTime(&ms, start[k], stop[k]), done);
            if (ms * 1e-3 > worst) worst = ms * 1e-3;
        }
        if (r >= 0) seconds[r] = worst;
    }
done:
    for (int k = 0; k < b->parts; ++k) {
        cudaSetDevice(b->ctx->id[b->part[k].device]);
        if (start[k]) cudaEventDestroy(start[k]);
        if (stop[k]) cudaEventDestroy(stop[k]);
    }
    return status;
}
