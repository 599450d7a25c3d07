/*
 * The CUDA backend as the core sees it: plain C, no CUDA headers. Implemented
 * in src/cuda/ (the .cu files); only compiled when HB_HAVE_CUDA is defined.
 */
#ifndef HB_CUDA_BACKEND_CUDA_H
#define HB_CUDA_BACKEND_CUDA_H

#include <stddef.h>

#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hb_cuda_context hb_cuda_context_t;
typedef struct hb_cuda_batch hb_cuda_batch_t;

/* Non-zero when at least one CUDA device can be used. */
int hb_cuda_device_available(void);

hb_status_t hb_cuda_context_create(hb_cuda_context_t **out);
void hb_cuda_context_destroy(hb_cuda_context_t *ctx);
int hb_cuda_context_devices(const hb_cuda_context_t *ctx);
const char *hb_cuda_context_device_name(const hb_cuda_context_t *ctx);
/* Device-to-device copy bandwidth of device 0, counting read + write [bytes/s]. */
hb_status_t hb_cuda_copy_bandwidth(hb_cuda_context_t *ctx, size_t bytes, int repeats,
                                   double *bytes_per_second);

/*
 * A batch split over the context's devices by system ranges. `block` is the
 * number of systems B per layout block (FLAT 1, INTERLEAVED count, BLOCK bs).
 */
hb_status_t hb_cuda_batch_create(hb_cuda_context_t *ctx, int m, const int *parent, int count,
                                 hb_layout_t layout, int block, hb_cuda_batch_t **out);
void hb_cuda_batch_destroy(hb_cuda_batch_t *batch);
/* Host arrays in the batch's global layout; NULL skips an array. */
hb_status_t hb_cuda_batch_upload(hb_cuda_batch_t *batch, const double *u, const double *l,
                                 const double *d, const double *rhs);
hb_status_t hb_cuda_batch_download(hb_cuda_batch_t *batch, double *u, double *l, double *d,
                                   double *rhs);
/* The kernel `algo` resolves to for this batch (AUTO -> a concrete one). */
hb_hines_algo_t hb_cuda_batch_resolve(const hb_cuda_batch_t *batch, hb_hines_algo_t algo);
/* Solve on the devices; returns when done. */
hb_status_t hb_cuda_batch_solve(hb_cuda_batch_t *batch, hb_hines_algo_t algo);
/* Device copy of all four arrays (same shape and layout). */
hb_status_t hb_cuda_batch_copy(hb_cuda_batch_t *dst, const hb_cuda_batch_t *src);
/* Times `repeats` solves with events, d and rhs restored from src before each. */
hb_status_t hb_cuda_batch_benchmark(hb_cuda_batch_t *batch, const hb_cuda_batch_t *src,
                                    hb_hines_algo_t algo, int repeats, double *seconds);

/* SHAPES of mixed batches (core/multi_shapes.h): one class as the kernel reads it. */
typedef struct {
    int m, lanes, cells, team_first; /* team_first: first team of the class in its tier */
    int words, couplings; /* its branched plan (the tables' header has the counts) */
    int global_tables; /* its tables are read from memory, not staged (a cell too large) */
    size_t base, table_off; /* first element of its storage, first word of its tables */
} hb_cuda_shape_t;
/* Blocks of `threads` threads and `smem` bytes a multiprocessor of the current device holds
 * (smem_optin: the device's opt-in limit, which the kernel is allowed). */
hb_status_t hb_cuda_shapes_per_sm(int threads, size_t smem, size_t smem_optin, int *per_sm);
/* One tier's classes (a device array, `teams` teams in all) in `grid` blocks on `stream`
 * (a cudaStream_t); queued, not waited for. smem_optin: the device's opt-in limit. */
hb_status_t hb_cuda_shapes_launch(const hb_cuda_shape_t *classes, int n_classes, int teams,
                                  int grid, int threads, size_t smem, const int *tables,
                                  const double *u, const double *l, const double *d,
                                  double *rhs, size_t smem_optin, void *stream);
hb_status_t hb_cuda_malloc(hb_cuda_context_t *ctx, size_t bytes, void **ptr);
hb_status_t hb_cuda_free(hb_cuda_context_t *ctx, void *ptr);
/* Copy host to device (to_device != 0) or device to host. */
hb_status_t hb_cuda_memcpy(hb_cuda_context_t *ctx, void *dst, const void *src, size_t bytes,
                           int to_device);

#ifdef __cplusplus
}
#endif
#endif
