/* The backend's one way to check a CUDA call: record the failure, return a status. */
#ifndef HB_CUDA_CUDA_CHECK_H
#define HB_CUDA_CUDA_CHECK_H

#include <cuda_runtime.h>
#include <pthread.h>

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

/*
 * Sets a function attribute of `kernel` on the current device once (per kernel, attribute and
 * device): the call costs microseconds of host time, which a small solve would otherwise pay,
 * between its timing events, on every launch.
 */
static inline cudaError_t hb_cuda_func_attribute_once(const void *kernel,
                                                      enum cudaFuncAttribute attribute, int value)
{
    enum { SLOTS = 256 };
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static const void *kernels[SLOTS];
    static int devices[SLOTS], attributes[SLOTS], used;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    pthread_mutex_lock(&lock);
    int k = 0;
    while (k < used &&
           (kernels[k] != kernel || devices[k] != device || attributes[k] != (int)attribute))
        ++k;
    if (k == used) {
        err = cudaFuncSetAttribute(kernel, attribute, value);
        if (err == cudaSuccess && used < SLOTS) {
            kernels[used] = kernel;
            devices[used] = device;
            attributes[used++] = (int)attribute;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}

/* Lets `kernel` take up to `bytes` of dynamic shared memory (callers pass the most any launch
 * asks, the device's opt-in limit). */
static inline cudaError_t hb_cuda_allow_smem(const void *kernel, size_t bytes)
{
    return hb_cuda_func_attribute_once(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       (int)bytes);
}

#endif
