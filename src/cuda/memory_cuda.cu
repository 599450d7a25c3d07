/* Device memory of the CUDA backend (hb_device_malloc etc., through hb_cuda_device_ops). */
#include <cuda_runtime.h>

extern "C" {
#include "common/status.h"
}
#include "cuda/backend_cuda.h"
#include "cuda/cuda_check.h"

extern "C" hb_status_t hb_cuda_malloc(hb_cuda_context_t *ctx, size_t bytes, void **ptr)
{
    (void)ctx;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMalloc(ptr, bytes));
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_free(hb_cuda_context_t *ctx, void *ptr)
{
    (void)ctx;
    if (!ptr) return HB_SUCCESS;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaFree(ptr));
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_memcpy(hb_cuda_context_t *ctx, void *dst, const void *src,
                                      size_t bytes, int to_device)
{
    (void)ctx;
    CUDA_CHECK(cudaSetDevice(0));
    CUDA_CHECK(cudaMemcpy(dst, src, bytes,
                          to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost));
    return HB_SUCCESS;
}
