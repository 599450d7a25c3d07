/*
 * Internal to the CUDA backend of Hines batches (CUDA C only): the batch as its kernel families
 * and launchers share it. A batch is split over the context's devices by system ranges.
 *
 * Kernels (docs/gpu.md), one family a file, each with its launcher:
 *   hines_paper.cu      per_thread, the paper's kernel: one thread per system (Flat, Full- and
 *                       Block-Interleaved are the same code with B systems per block), and
 *                       block_shared, the paper's Block-Shared: BLOCK layout, rhs in shared memory
 *   hines_staged.cu     ours for few systems: one warp per system, the system copied to
 *                       shared memory, eliminated there with register-carried chains
 *   hines_streamed.cu   ours for many systems: a warp solves 32 (16, 8) adjacent systems; inputs
 *                       stream once through a cp.async ring, intermediates stay on chip,
 *                       so memory sees each input read once and the solution written once
 *   hines_pipelined.cu  ours for many systems: a thread per system with a row plan
 *   hines_branched.cu   ours for few systems and many: a block per team of adjacent systems
 *                       staged on chip, the tree's subtrees shared out stage by stage
 *                       (common/hines_branched.h); and SHAPES of mixed batches
 * The batch (hines_batch.cu) makes them, chooses one (AUTO) and launches it on every part.
 *
 * Element (s, i) of a part (a device's range of systems) is at
 * (s / B) * m * B + i * B + s % B (docs/layouts.md).
 */
#ifndef HB_CUDA_HINES_CUDA_H
#define HB_CUDA_HINES_CUDA_H

#include <cuda_runtime.h>
#include <stddef.h>

extern "C" {
#include "backend/tuning.h"
#include "common/hines_branched.h"
#include "common/status.h"
}
#include "cuda/context_cuda.h"
#include "cuda/hines_batch_cuda.h"

typedef struct {
    int device;     /* index into the context's devices */
    int s0, count;  /* global systems [s0, s0 + count) */
    int block;      /* B of this part */
    size_t size;    /* elements per array, padding included */
    int *parent;    /* device copy */
    double *u, *l, *d, *rhs;
    int *code;      /* the pipelined kernel's row plan (common/hines_plan.h) */
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
    int max_blocks;           /* grid cap, 0 for none (tuning branched.blocks: tests) */
    size_t smem;              /* shared memory per block [bytes] */
} branched_config_t;

struct hb_cuda_batch {
    hb_cuda_context_t *ctx;
    int m, count, block;
    hb_layout_t layout;
    hb_tuning_t tuning; /* the context's when the batch was made (branched.*) */
    int parts;
    int slots;      /* the pipelined kernel's accumulator slots; -1: the tree needs too many */
    branched_config_t branched[2]; /* the branched kernel's shape [uniform] */
    part_t part[HB_CUDA_MAX_DEVICES];
};

__device__ __forceinline__ size_t system_base(int m, int block, int s)
{
    return (size_t)(s / block) * (size_t)m * (size_t)block + (size_t)(s % block);
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

static inline int ceil_div(long a, long b) { return (int)((a + b - 1) / b); }

/* Launch shape of the pipelined kernel on one part. */
typedef struct {
    int threads;        /* per block */
    int tail;           /* rows whose (a, b) stay in shared memory */
    size_t smem;        /* per block [bytes] */
} pipe_shape_t;

/* Launchers, one a kernel family, each queued on the part's device stream (the current device).
 * The shape rules the batch's AUTO choice reads come with them. */
hb_status_t hb_cuda_hines_per_thread(const hb_cuda_batch_t *b, part_t *p);   /* hines_paper.cu */
hb_status_t hb_cuda_hines_block_shared(const hb_cuda_batch_t *b, part_t *p); /* hines_paper.cu */
/* hines_staged.cu: shared memory of `warps` systems [bytes] */
size_t hb_cuda_hines_staged_smem(int m, int warps);
hb_status_t hb_cuda_hines_staged(const hb_cuda_batch_t *b, part_t *p);
/* hines_streamed.cu: systems a warp (32, 16 or 8); 0 when the shape cannot use it */
int hb_cuda_hines_streamed_lanes(const hb_cuda_batch_t *b, size_t optin);
hb_status_t hb_cuda_hines_streamed(const hb_cuda_batch_t *b, part_t *p);
/* hines_pipelined.cu: the launch shape; 0 when the kernel cannot run */
int hb_cuda_hines_pipe_shape(const hb_cuda_batch_t *b, size_t optin, pipe_shape_t *shape);
hb_status_t hb_cuda_hines_pipelined(const hb_cuda_batch_t *b, part_t *p);
/* hines_branched.cu: both shapes of the branched kernel (b->branched), their tables on every
 * device */
hb_status_t hb_cuda_hines_branched_setup(hb_cuda_batch_t *b, const int *parent);
hb_status_t hb_cuda_hines_branched(const hb_cuda_batch_t *b, part_t *p);

#endif
