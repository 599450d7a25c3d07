/*
 * Mixed-morphology batches on CUDA (src/cuda/multi_cuda.cu), as the core
 * (src/core/multi.c) sees them: plain C, no CUDA headers. Device 0, a stream
 * of its own. The device holds one layout at a time (the algorithm's, see
 * core/multi.h); the core maps the host copy onto it at upload and download.
 */
#ifndef HB_CUDA_MULTI_CUDA_H
#define HB_CUDA_MULTI_CUDA_H

#include <stddef.h>

#include "core/multi.h"
#include "core/multi_shapes.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hb_cuda_multi hb_cuda_multi_t;

hb_status_t hb_cuda_multi_create(hb_cuda_multi_t **out);
void hb_cuda_multi_destroy(hb_cuda_multi_t *dm);
/* GROUPED: the group size (rows) to plan for a batch of `total_rows` rows on this device;
 * *saturated: 1 when the batch fills every multiprocessor with three blocks or more. */
size_t hb_cuda_multi_group_rows(hb_cuda_multi_t *dm, size_t total_rows, int *saturated);
/* Device layout of a plan (LEVELS: one group; GROUPED): its tables and four arrays. */
hb_status_t hb_cuda_multi_install_plan(hb_cuda_multi_t *dm, const hb_multi_plan_t *plan);
/* PER_CELL layout: element (cell c, row i) at i * cells + c; parent interleaved the same way. */
hb_status_t hb_cuda_multi_install_cells(hb_cuda_multi_t *dm, int cells, int max_m, const int *m,
                                        const int *parent);
/* SHAPES (core/multi_shapes.h): what this device offers its blocks (shared memory, blocks of
 * HB_MULTI_SHAPES_THREADS a multiprocessor as registers allow, multiprocessors). */
hb_status_t hb_cuda_multi_shape_device(hb_cuda_multi_t *dm, hb_multi_shapes_device_t *out);
/* SHAPES layout: the classes, their plan tables and the four arrays (s->size elements). */
hb_status_t hb_cuda_multi_install_shapes(hb_cuda_multi_t *dm, const struct hb_multi_shapes *s);
/*
 * Host copy (n host slots) <-> device arrays of `size` elements: host slot k is
 * device element map[k]. Upload takes all four arrays; download d and rhs (NULL skips).
 */
hb_status_t hb_cuda_multi_upload(hb_cuda_multi_t *dm, size_t n, size_t size, const size_t *map,
                                 const double *u, const double *l, const double *d,
                                 const double *rhs);
hb_status_t hb_cuda_multi_download(hb_cuda_multi_t *dm, size_t n, size_t size, const size_t *map,
                                   double *d, double *rhs);
/* Solve with `algo` (resolved; the installed layout must be its). Returns when done. */
hb_status_t hb_cuda_multi_solve(hb_cuda_multi_t *dm, hb_multi_algo_t algo);
/* Times `repeats` solves with events after a warm-up, d and rhs restored before each. */
hb_status_t hb_cuda_multi_benchmark(hb_cuda_multi_t *dm, hb_multi_algo_t algo, int repeats,
                                    double *seconds);

#ifdef __cplusplus
}
#endif
#endif
