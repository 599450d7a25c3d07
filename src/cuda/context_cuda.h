/*
 * The CUDA context (hb_cuda_context_t of cuda/backend_cuda.h) as the .cu files see it: its
 * devices, their streams and the limits the launch rules read. CUDA C only.
 */
#ifndef HB_CUDA_CONTEXT_CUDA_H
#define HB_CUDA_CONTEXT_CUDA_H

#include <cuda_runtime.h>
#include <stddef.h>

#include "cuda/backend_cuda.h"

#define HB_CUDA_MAX_DEVICES 16

struct hb_cuda_context {
    int devices;
    int id[HB_CUDA_MAX_DEVICES];
    cudaStream_t stream[HB_CUDA_MAX_DEVICES];
    int sm_count[HB_CUDA_MAX_DEVICES];
    size_t smem_optin[HB_CUDA_MAX_DEVICES]; /* largest dynamic shared memory per block [bytes] */
    char name[256];
};

#endif
