/* Communicators (hinesbatch.h): a kind's table from the registry and its state. */
#include <stdlib.h>

#include "backend/comm_ops.h"
#include "common/status.h"
#include "registry/registry.h"

int hb_comm_available(hb_comm_kind_t kind)
{
    return (int)kind >= HB_COMM_SERIAL && kind <= HB_COMM_BEST && hb_registry_comm(kind) != NULL;
}

hb_status_t hb_comm_create(hb_comm_kind_t kind, hb_comm_t **comm)
{
    static const char fn[] = "hb_comm_create";
    hb_clear_error();
    if (!comm) return hb_fail(HB_ERR_INVALID_VALUE, "%s: comm is NULL", fn);
    *comm = NULL;
    if ((int)kind < HB_COMM_SERIAL || kind > HB_COMM_BEST)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: kind = %d is not an hb_comm_kind_t", fn,
                       (int)kind);
    const struct hb_comm_ops *ops = hb_registry_comm(kind);
    if (!ops) return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: built without MPI", fn);
    struct hb_comm *c = calloc(1, sizeof *c);
    if (!c) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    c->ops = ops;
    c->kind = ops == &hb_serial_comm_ops ? HB_COMM_SERIAL : HB_COMM_MPI;
    hb_status_t status = ops->create(&c->state, &c->rank, &c->size, &c->threaded);
    if (status != HB_SUCCESS) {
        free(c);
        return status;
    }
    *comm = c;
    return HB_SUCCESS;
}

hb_status_t hb_comm_destroy(hb_comm_t *comm)
{
    hb_clear_error();
    if (!comm) return HB_SUCCESS;
    hb_status_t status = comm->ops->destroy(comm->state);
    free(comm);
    return status;
}

const char *hb_comm_name(const hb_comm_t *comm) { return comm ? comm->ops->name : "none"; }
int hb_comm_rank(const hb_comm_t *comm) { return comm ? comm->rank : -1; }
int hb_comm_size(const hb_comm_t *comm) { return comm ? comm->size : 0; }

hb_status_t hb_comm_max(hb_comm_t *comm, int value, int *max)
{
    hb_clear_error();
    if (!comm || !max) return hb_fail(HB_ERR_INVALID_VALUE, "hb_comm_max: NULL argument");
    double v[1] = {(double)value}; /* an int is exact in a double */
    hb_status_t status = comm->ops->allreduce(comm->state, v, 1, HB_REDUCE_MAX);
    if (status == HB_SUCCESS) *max = (int)v[0];
    return status;
}
