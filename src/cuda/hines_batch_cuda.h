/*
 * The CUDA batch of same-morphology systems (cuda/hines_batch.cu) as the CUDA table of
 * backend/hines_ops.h (cuda/hines_ops_cuda.c) calls it. Plain C.
 */
#ifndef HB_CUDA_HINES_BATCH_CUDA_H
#define HB_CUDA_HINES_BATCH_CUDA_H

#include "backend/tuning.h"
#include "cuda/backend_cuda.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hb_cuda_batch hb_cuda_batch_t;

/*
 * A batch split over the context's devices by system ranges. `block` is the
 * number of systems B per layout block (FLAT 1, INTERLEAVED count, BLOCK bs).
 * The branched kernel's shape follows `tuning` (branched.*), read now.
 */
hb_status_t hb_cuda_batch_create(hb_cuda_context_t *ctx, int m, const int *parent, int count,
                                 hb_layout_t layout, int block, const hb_tuning_t *tuning,
                                 hb_cuda_batch_t **out);
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

#ifdef __cplusplus
}
#endif
#endif
