/*
 * SHAPES of mixed batches (common/multi_shapes.h) run on the branched kernel's stages
 * (cuda/hines_branched.cu): the launch the mixed batches' CUDA backend calls. Plain C.
 */
#ifndef HB_CUDA_HINES_BRANCHED_CUDA_H
#define HB_CUDA_HINES_BRANCHED_CUDA_H

#include <stddef.h>

#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One class as the kernel reads it. */
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

#ifdef __cplusplus
}
#endif
#endif
