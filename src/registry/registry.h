/*
 * The backends this build has (src/registry/registry.c): the only place that knows whether
 * CUDA, MPI or OpenMP were found at configure time.
 */
#ifndef HB_REGISTRY_REGISTRY_H
#define HB_REGISTRY_REGISTRY_H

#include "backend/backend.h"
#include "backend/comm_ops.h"

/* Non-zero when this build has the backend and, for CUDA, a device is present (BEST: 1). */
int hb_registry_available(hb_backend_t backend);
/* The tables of an available backend (SEQ and OMP share the CPU's); NULL otherwise. */
const hb_backend_ops_t *hb_registry_ops(hb_backend_t backend);

/* The communication layer of a kind (BEST: MPI when this build has it, else serial). */
const struct hb_comm_ops *hb_registry_comm(hb_comm_kind_t kind);

#endif
