/*
 * The CUDA backend's plain C declarations (no CUDA headers) for its own files: the context
 * (cuda/context_cuda.cu; its struct in cuda/context_cuda.h) and device memory (cuda/memory_cuda.cu);
 * SHAPES through cuda/hines_branched_cuda.h. Only compiled when HB_HAVE_CUDA is defined.
 */
#ifndef HB_CUDA_BACKEND_CUDA_H
#define HB_CUDA_BACKEND_CUDA_H

#include <stddef.h>

#include "cuda/hines_branched_cuda.h" /* SHAPES: hb_cuda_shape_t, hb_cuda_shapes_* */
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hb_cuda_context hb_cuda_context_t;

/* Non-zero when at least one CUDA device can be used. */
int hb_cuda_device_available(void);

hb_status_t hb_cuda_context_create(hb_cuda_context_t **out);
void hb_cuda_context_destroy(hb_cuda_context_t *ctx);
int hb_cuda_context_devices(const hb_cuda_context_t *ctx);
const char *hb_cuda_context_device_name(const hb_cuda_context_t *ctx);
/* Device-to-device copy bandwidth of device 0, counting read + write [bytes/s]. */
hb_status_t hb_cuda_copy_bandwidth(hb_cuda_context_t *ctx, size_t bytes, int repeats,
                                   double *bytes_per_second);

hb_status_t hb_cuda_malloc(hb_cuda_context_t *ctx, size_t bytes, void **ptr);
hb_status_t hb_cuda_free(hb_cuda_context_t *ctx, void *ptr);
/* Copy host to device (to_device != 0) or device to host. */
hb_status_t hb_cuda_memcpy(hb_cuda_context_t *ctx, void *dst, const void *src, size_t bytes,
                           int to_device);

#ifdef __cplusplus
}
#endif
#endif
