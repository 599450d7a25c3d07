/*
 * The seam of same-morphology Hines batches (hb_batch_*, hb_hines_solve_batch): what the core
 * (src/core/batch.c, src/core/hines_solve.c) needs of a backend. The core keeps every batch's
 * host copy; a backend may keep its own copy (state, e.g. on the devices), which the core
 * refreshes through upload and download. A NULL state means the host copy is the backend's
 * data (the CPU): upload, download and copy are then never called.
 */
#ifndef HB_BACKEND_HINES_OPS_H
#define HB_BACKEND_HINES_OPS_H

#include "backend/backend.h"
#include "backend/tuning.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A batch as the backends see it: its shape and the core's host arrays (checked). */
typedef struct hb_hines_host {
    hb_context_t *ctx;
    int m, count;            /* rows per system, systems */
    hb_layout_t layout;
    int block;               /* systems per layout block B (common/layout.h) */
    const int *parent;       /* m entries, Hines order */
    const double *u, *l;     /* hb_layout_size elements each */
    double *d, *rhs;         /* the same; solved in place */
} hb_hines_host_t;

struct hb_hines_ops {
    /* The backend's state of a new batch (*state may stay NULL); the tuning is read now. */
    hb_status_t (*create)(const hb_hines_host_t *host, const hb_tuning_t *tuning, void **state);
    void (*destroy)(void *state);
    /* Host arrays (global layout) into the state, or back; NULL skips an array. */
    hb_status_t (*upload)(void *state, const double *u, const double *l, const double *d,
                          const double *rhs);
    hb_status_t (*download)(void *state, double *u, double *l, double *d, double *rhs);
    /* The kernel `algo` runs as for this batch (AUTO -> a concrete one). */
    hb_hines_algo_t (*resolve)(const void *state, hb_hines_algo_t algo);
    /* Solve with `algo`; returns when done. state NULL: host's arrays in place (a backend
     * that keeps its own copy makes one for this solve, with host->ctx's tuning). */
    hb_status_t (*solve)(const hb_hines_host_t *host, void *state, hb_hines_algo_t algo);
    /* All four arrays of src's state into dst's (same context, shape and layout). */
    hb_status_t (*copy)(void *dst, const void *src);
    /* `repeats` solves, d and rhs restored from source before each (not timed) [s each]. */
    hb_status_t (*benchmark)(const hb_hines_host_t *host, void *state,
                             const hb_hines_host_t *source, const void *source_state,
                             hb_hines_algo_t algo, int repeats, double *seconds);
};

extern const struct hb_hines_ops hb_cpu_hines_ops;
extern const struct hb_hines_ops hb_cuda_hines_ops;

#ifdef __cplusplus
}
#endif
#endif
