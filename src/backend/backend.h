/*
 * The seam between the backend-neutral core (src/core/, src/sim/) and its backends (src/cpu/,
 * src/cuda/), after ggml's backend registry and SUNDIALS' ops tables. A backend fills one ops
 * table per domain (this file: the device; backend/<domain>_ops.h: batches, tridiagonal
 * solves, mixed batches, the simulator); src/registry/registry.c, the one file that knows which
 * backends this build has, hands the tables out. The core reaches a backend only through them,
 * and a backend sees of the core only what this folder declares.
 */
#ifndef HB_BACKEND_BACKEND_H
#define HB_BACKEND_BACKEND_H

#include <stddef.h>

#include "backend/tuning.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hb_backend_ops;

/* What every layer sees of a context (hb_context_t). */
struct hb_context {
    hb_backend_t backend;             /* resolved at create: never HB_BACKEND_BEST */
    int threads;                      /* OMP: 0 = OpenMP's default */
    const struct hb_backend_ops *ops; /* the backend's tables */
    void *device;                     /* the backend's own state (CUDA: devices); CPU: NULL */
    hb_tuning_t tuning;               /* measurement overrides (backend/tuning.h) */
};

/* A backend's device: its state per context, memory and measurements. */
typedef struct hb_device_ops {
    const char *name; /* "cpu", "cuda" */
    /* Non-zero when the backend can run here (CUDA: a device is present). */
    int (*available)(void);
    /* The backend's state for a new context (*state may stay NULL); errors recorded. */
    hb_status_t (*context_create)(void **state);
    void (*context_destroy)(void *state);
    /* Threads an OMP context with threads = 0 uses (1 without OpenMP). */
    int (*default_threads)(void);
    /* Devices a context spreads batches over (0: the host). */
    int (*devices)(const void *state);
    const char *(*device_name)(const void *state);
    /* Copy bandwidth of the memory its solvers use, read + write [bytes/s]. */
    hb_status_t (*copy_bandwidth)(void *state, size_t bytes, int repeats,
                                  double *bytes_per_second);
    hb_status_t (*alloc)(void *state, size_t bytes, void **ptr);
    hb_status_t (*release)(void *state, void *ptr);
    /* Host to backend memory (to_device != 0) or back. */
    hb_status_t (*copy)(void *state, void *dst, const void *src, size_t bytes, int to_device);
} hb_device_ops_t;

struct hb_hines_ops; /* backend/hines_ops.h */
struct hb_gtsv_ops;  /* backend/gtsv_ops.h */
struct hb_multi_ops; /* backend/multi_ops.h */
struct hb_sim_ops;   /* backend/sim_ops.h */

/* One backend: a table per domain. */
typedef struct hb_backend_ops {
    const hb_device_ops_t *device;
    const struct hb_hines_ops *hines;
    const struct hb_gtsv_ops *gtsv;
    const struct hb_multi_ops *multi;
    const struct hb_sim_ops *sim;
} hb_backend_ops_t;

/* The tables of each backend, defined in its folder. */
extern const hb_device_ops_t hb_cpu_device_ops;
extern const hb_device_ops_t hb_cuda_device_ops;

#ifdef __cplusplus
}
#endif
#endif
