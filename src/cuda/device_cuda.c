/* The CUDA backend's device (backend/backend.h) over its context (cuda/context_cuda.cu). */
#include "backend/backend.h"
#include "cuda/backend_cuda.h"

static hb_status_t cuda_context_create(void **state)
{
    hb_cuda_context_t *c = NULL;
    hb_status_t status = hb_cuda_context_create(&c);
    *state = c;
    return status;
}

static void cuda_context_destroy(void *state) { hb_cuda_context_destroy((hb_cuda_context_t *)state); }

static int cuda_default_threads(void) { return 1; }

static int cuda_devices(const void *state)
{
    return hb_cuda_context_devices((const hb_cuda_context_t *)state);
}

static const char *cuda_device_name(const void *state)
{
    return hb_cuda_context_device_name((const hb_cuda_context_t *)state);
}

static hb_status_t cuda_copy_bandwidth(void *state, size_t bytes, int repeats,
                                       double *bytes_per_second)
{
    return hb_cuda_copy_bandwidth((hb_cuda_context_t *)state, bytes, repeats, bytes_per_second);
}

static hb_status_t cuda_alloc(void *state, size_t bytes, void **ptr)
{
    return hb_cuda_malloc((hb_cuda_context_t *)state, bytes, ptr);
}

static hb_status_t cuda_release(void *state, void *ptr)
{
    return hb_cuda_free((hb_cuda_context_t *)state, ptr);
}

static hb_status_t cuda_copy(void *state, void *dst, const void *src, size_t bytes, int to_device)
{
    return hb_cuda_memcpy((hb_cuda_context_t *)state, dst, src, bytes, to_device);
}

const hb_device_ops_t hb_cuda_device_ops = {
    .name = "cuda",
    .available = hb_cuda_device_available,
    .context_create = cuda_context_create,
    .context_destroy = cuda_context_destroy,
    .default_threads = cuda_default_threads,
    .devices = cuda_devices,
    .device_name = cuda_device_name,
    .copy_bandwidth = cuda_copy_bandwidth,
    .alloc = cuda_alloc,
    .release = cuda_release,
    .copy = cuda_copy,
};
