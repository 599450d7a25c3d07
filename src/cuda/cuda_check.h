/* The backend's one way to check a CUDA call: record the failure, return a status. */
#ifndef HB_CUDA_CUDA_CHECK_H
#define HB_CUDA_CUDA_CHECK_H

#include <cuda_runtime.h>

/* Out-of-memory is HB_ERR_ALLOC; any other CUDA error HB_ERR_BACKEND. */
#define HB_CUDA_STATUS(err) \
    ((err) == cudaErrorMemoryAllocation ? HB_ERR_ALLOC : HB_ERR_BACKEND)

/* Return from the calling function on failure. */
#define CUDA_CHECK(call)                                                                    \
    do {                                                                                    \
        cudaError_t cuda_err_ = (call);                                                     \
        if (cuda_err_ != cudaSuccess)                                                       \
            return hb_fail(HB_CUDA_STATUS(cuda_err_), "%s:%d: %s: %s", __FILE__, __LINE__,  \
                           #call, cudaGetErrorString(cuda_err_));                           \
    } while (0)

/* Set `status` and jump to `label` on failure (for cleanup paths). */
#define CUDA_TRY(status, call, label)                                                       \
    do {                                                                                    \
        cudaError_t cuda_err_ = (call);                                                     \
        if (cuda_err_ != cudaSuccess) {                                                     \
            (status) = hb_fail(HB_CUDA_STATUS(cuda_err_), "%s:%d: %s: %s", __FILE__,         \
                               __LINE__, #call, cudaGetErrorString(cuda_err_));             \
            goto label;                                                                     \
        }                                                                                   \
    } while (0)

#endif
