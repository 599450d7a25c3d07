/*
 * What the CUDA kernels that run a mixed-morphology plan (core/multi.h) share: GROUPED
 * (multi_cuda.cu) and the same-morphology BRANCHED kernel (hines_cuda.cu).
 */
#ifndef HB_CUDA_PLAN_CUDA_CUH
#define HB_CUDA_PLAN_CUDA_CUH

#include <cuda_runtime.h>

extern "C" {
#include "core/multi.h"
#include "core/status.h"
}

/*
 * The levels of view v, leaves to root and back, a block barrier after each: the block's
 * workers first, first + stride, ... share out each level's branches (and the chunks of
 * split branches, before the levels and after). Every thread of the block calls it.
 */
__device__ __forceinline__ void hb_cuda_levels_of_view(const hb_multi_view_t *v, int first,
                                                       int stride)
{
    if (v->n_split > 0) {
        hb_multi_chunk_pass(v, first, stride, 0);
        __syncthreads();
    }
    for (int h = 0; h < v->n_levels; ++h) {
        for (int b = v->level_branch[h] + first; b < v->level_branch[h + 1]; b += stride)
            hb_multi_eliminate(v, h, b);
        __syncthreads();
    }
    for (int h = v->n_levels - 1; h >= 0; --h) {
        for (int b = v->level_branch[h] + first; b < v->level_branch[h + 1]; b += stride)
            hb_multi_substitute(v, h, b);
        __syncthreads();
    }
    if (v->n_split > 0) {
        hb_multi_chunk_pass(v, first, stride, 1);
        __syncthreads();
    }
}

/* Waits until *flag reaches `at_least` (set by another thread of the block). A flag that
 * never comes is a bug: trap after about a second rather than hang the device. */
__device__ __forceinline__ void hb_cuda_wait_flag(const volatile unsigned char *flag, int at_least)
{
    unsigned long long spins = 0;
    while (*flag < at_least)
        if (++spins > (1ull << 26)) __trap();
}

/*
 * The same levels scheduled by dependencies instead of barriers: a worker takes branches
 * first, first + stride, ... of all levels in order and eliminates each as soon as its child
 * branches are done, then substitutes its branches in reverse order, each as soon as its
 * parent's row 0 holds x. `done` (a byte per element, indexed as v->d, zeroed before a block
 * barrier) carries it: 1 at a branch's top slot when eliminated, 2 at its row 0 when
 * substituted. Each thread waits on its own lane's flags only (lanes are independent
 * systems). No deadlock: the earliest unfinished task in the order "eliminations ascending,
 * then substitutions descending" depends only on earlier tasks, and it is its worker's
 * current task. The arithmetic is that of the barrier version: the same bits.
 */
__device__ __forceinline__ void hb_cuda_levels_by_flags(const hb_multi_view_t *v, int first,
                                                        int stride, volatile unsigned char *done)
{
    if (v->n_split > 0) {
        hb_multi_chunk_pass(v, first, stride, 0);
        __syncthreads();
    }
    const int b0 = v->level_branch[0], count = v->level_branch[v->n_levels] - b0;
    int h = 0;
    for (int j = first; j < count; j += stride) {
        const int b = b0 + j;
        while (b >= v->level_branch[h + 1]) ++h;
        for (int c = v->child_ptr[b]; c < v->child_ptr[b + 1]; ++c)
            hb_cuda_wait_flag(&done[v->child_top[c]], 1);
        __threadfence_block();
        hb_multi_eliminate(v, h, b);
        __threadfence_block();
        done[hb_multi_slot(v, h, b, v->rows[b] - 1)] = 1;
    }
    h = v->n_levels - 1;
    for (int j = first < count ? first + (count - 1 - first) / stride * stride : -1; j >= 0;
         j -= stride) {
        const int b = b0 + j;
        while (b < v->level_branch[h]) --h;
        const size_t p = v->parent_slot[b];
        if (p != HB_MULTI_NO_PARENT) hb_cuda_wait_flag(&done[p], 2);
        __threadfence_block();
        hb_multi_substitute(v, h, b);
        __threadfence_block();
        done[hb_multi_slot(v, h, b, 0)] = 2;
    }
    __syncthreads();
    if (v->n_split > 0) {
        hb_multi_chunk_pass(v, first, stride, 1);
        __syncthreads();
    }
}

/* Device copies of a plan's tables (on the current device), node_slot only when asked
 * (n_slots entries); dst holds device pointers. On failure dst is freed. */
hb_status_t hb_cuda_plan_upload(const hb_multi_plan_t *src, hb_multi_plan_t *dst, int with_nodes,
                                cudaStream_t stream);
/* Frees the device tables of a plan made by hb_cuda_plan_upload and zeroes it. */
void hb_cuda_plan_free(hb_multi_plan_t *dst);

#endif
