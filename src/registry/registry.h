/*
 * The backends this build has (src/registry/registry.c): the only place that knows whether
 * CUDA, MPI or OpenMP were found at configure time.
 */
#ifndef HB_REGISTRY_REGISTRY_H
#define HB_REGISTRY_REGISTRY_H

#include "backend/backend.h"

/* Non-zero when this build has the backend and, for CUDA, a device is present (BEST: 1). */
int hb_registry_available(hb_backend_t backend);
/* The tables of an available backend (SEQ and OMP share the CPU's); NULL otherwise. */
const hb_backend_ops_t *hb_registry_ops(hb_backend_t backend);

#endif
