/*
 * The seam of mixed-morphology batches (hb_multi_*): what the core (src/core/multi.c) needs of
 * a backend. The core keeps the batch's host copy (in the LEVELS layout) and its plans; a
 * backend with a state of its own (CUDA) holds one algorithm's layout at a time, which the
 * core installs and fills through the map of host slots to its elements. A backend whose
 * create leaves the state NULL (the CPU) solves the host copy itself, and the core calls only
 * group_rows, shape_device, solve and benchmark on it.
 */
#ifndef HB_BACKEND_MULTI_OPS_H
#define HB_BACKEND_MULTI_OPS_H

#include <stddef.h>

#include "backend/backend.h"
#include "common/multi_plan.h"
#include "common/multi_shapes.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The batch as the core holds it (borrowed): what a solve of the host copy reads. */
typedef struct {
    hb_context_t *ctx;               /* threads */
    hb_multi_cells_t cells;
    const hb_multi_plan_t *levels;   /* LEVELS: one group; the host copy's layout */
    const hb_multi_plan_t *grouped;  /* GROUPED's plan (NULL before its first solve) */
    const hb_multi_shapes_t *shapes; /* SHAPES's plan (NULL before its first solve) */
    double *u, *l, *d, *rhs;         /* host copy [n_rows] */
} hb_multi_host_t;

struct hb_multi_ops {
    /* The backend's state for a new batch; errors recorded. *state stays NULL where the
     * backend solves the host copy. */
    hb_status_t (*create)(hb_context_t *ctx, void **state);
    void (*destroy)(void *state);
    /* GROUPED: the group size [rows] to plan a batch of total_rows rows for; planned: the size
     * of the batch's current plan (0: none). *saturated: 1 when the batch fills every
     * multiprocessor with three blocks or more (its branches are then not split). */
    size_t (*group_rows)(void *state, size_t total_rows, size_t planned, int *saturated);
    /* SHAPES: the device to plan for (the CPU: an H100's figures, so CI tests its plans). */
    hb_status_t (*shape_device)(void *state, hb_multi_shapes_device_t *out);
    /* The layouts: a plan's (LEVELS: one group; GROUPED), PER_CELL's (element (cell c, row i)
     * at i * cells + c, parent interleaved the same way) and SHAPES's (s->size elements). */
    hb_status_t (*install_plan)(void *state, const hb_multi_plan_t *plan);
    hb_status_t (*install_cells)(void *state, int cells, int max_m, const int *m,
                                 const int *parent);
    hb_status_t (*install_shapes)(void *state, const hb_multi_shapes_t *s);
    /* Host copy (n host slots) <-> the layout's `size` elements: host slot k is element
     * map[k]. Upload takes all four arrays; download d and rhs (NULL skips). */
    hb_status_t (*upload)(void *state, size_t n, size_t size, const size_t *map, const double *u,
                          const double *l, const double *d, const double *rhs);
    hb_status_t (*download)(void *state, size_t n, size_t size, const size_t *map, double *d,
                            double *rhs);
    /* Solve with `algo` (resolved; its layout installed, or host->* on a NULL state). Returns
     * when done. */
    hb_status_t (*solve)(void *state, const hb_multi_host_t *host, hb_multi_algo_t algo);
    /* Times `repeats` solves after a warm-up, d and rhs restored before each [s]. */
    hb_status_t (*benchmark)(void *state, const hb_multi_host_t *host, hb_multi_algo_t algo,
                             int repeats, double *seconds);
};

extern const struct hb_multi_ops hb_cpu_multi_ops, hb_cuda_multi_ops;

#ifdef __cplusplus
}
#endif
#endif
