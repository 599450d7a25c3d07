/* The CUDA context: the devices a context spreads batches over, one stream each. */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

extern "C" {
#include "common/status.h"
}
#include "cuda/context_cuda.h"
#include "cuda/cuda_check.h"

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
    c->devices = n < HB_CUDA_MAX_DEVICES ? n : HB_CUDA_MAX_DEVICES;
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
