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

/* Device copies of a plan's tables (on the current device), node_slot only when asked
 * (n_slots entries); dst holds device pointers. On failure dst is freed. */
hb_status_t hb_cuda_plan_upload(const hb_multi_plan_t *src, hb_multi_plan_t *dst, int with_nodes,
                                cudaStream_t stream);
/* Frees the device tables of a plan made by hb_cuda_plan_upload and zeroes it. */
void hb_cuda_plan_free(hb_multi_plan_t *dst);

#endif
