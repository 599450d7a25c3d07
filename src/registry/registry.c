/*
 * The backends this build has. The only file that tests HB_HAVE_CUDA, HB_HAVE_MPI and
 * HB_HAVE_OPENMP to choose between implementations (OpenMP pragmas inside the CPU backend
 * aside): the core asks here, and each backend's tables are named only here.
 */
#include <stddef.h>

#include "backend/gtsv_ops.h"
#include "backend/hines_ops.h"
#include "backend/multi_ops.h"
#include "backend/sim_ops.h"
#include "registry/registry.h"

static const hb_backend_ops_t cpu_backend = {
    .device = &hb_cpu_device_ops,
    .hines = &hb_cpu_hines_ops,
    .gtsv = &hb_cpu_gtsv_ops,
    .multi = &hb_cpu_multi_ops,
    .sim = &hb_cpu_sim_ops,
};

#ifdef HB_HAVE_CUDA
static const hb_backend_ops_t cuda_backend = {
    .device = &hb_cuda_device_ops,
    .hines = &hb_cuda_hines_ops,
    .gtsv = &hb_cuda_gtsv_ops,
    .multi = &hb_cuda_multi_ops,
    .sim = &hb_cuda_sim_ops,
};
#endif

int hb_registry_available(hb_backend_t backend)
{
    switch (backend) {
    case HB_BACKEND_SEQ:
    case HB_BACKEND_BEST: /* always resolves to something */
        return 1;
    case HB_BACKEND_OMP:
#ifdef HB_HAVE_OPENMP
        return 1;
#else
        return 0;
#endif
    case HB_BACKEND_CUDA:
#ifdef HB_HAVE_CUDA
        return cuda_backend.device->available();
#else
        return 0;
#endif
    }
    return 0;
}

const hb_backend_ops_t *hb_registry_ops(hb_backend_t backend)
{
    if (backend == HB_BACKEND_BEST || !hb_registry_available(backend)) return NULL;
#ifdef HB_HAVE_CUDA
    if (backend == HB_BACKEND_CUDA) return &cuda_backend;
#endif
    return &cpu_backend;
}

const struct hb_comm_ops *hb_registry_comm(hb_comm_kind_t kind)
{
    switch (kind) {
    case HB_COMM_SERIAL: return &hb_serial_comm_ops;
    case HB_COMM_MPI:
    case HB_COMM_BEST:
#ifdef HB_HAVE_MPI
        return &hb_mpi_comm_ops;
#else
        return kind == HB_COMM_BEST ? &hb_serial_comm_ops : NULL;
#endif
    }
    return NULL;
}
