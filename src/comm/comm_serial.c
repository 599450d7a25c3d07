/* One rank: every collective is a copy. */
#include <string.h>

#include "backend/comm_ops.h"
#include "common/status.h"

static int serial_available(void) { return 1; }

static hb_status_t serial_create(void **state, int *rank, int *size, int *threaded)
{
    *state = NULL;
    *rank = 0;
    *size = 1;
    *threaded = 1;
    return HB_SUCCESS;
}

static hb_status_t serial_destroy(void *state)
{
    (void)state;
    return HB_SUCCESS;
}

static hb_status_t serial_allgather_int(void *state, int mine, int *all)
{
    (void)state;
    all[0] = mine;
    return HB_SUCCESS;
}

static hb_status_t serial_allgatherv(void *state, const void *send, int send_count, void *recv,
                                     const int *counts, const int *displs, size_t elem_bytes)
{
    (void)state;
    (void)counts;
    if (send_count > 0)
        memmove((char *)recv + (size_t)displs[0] * elem_bytes, send,
                (size_t)send_count * elem_bytes);
    return HB_SUCCESS;
}

static hb_status_t serial_iallgatherv(void *state, const void *send, int send_count, void *recv,
                                      const int *counts, const int *displs, size_t elem_bytes,
                                      void **request)
{
    *request = NULL;
    return serial_allgatherv(state, send, send_count, recv, counts, displs, elem_bytes);
}

static hb_status_t serial_wait(void *state, void *request)
{
    (void)state;
    (void)request;
    return HB_SUCCESS;
}

static hb_status_t serial_progress(void *state, void *request, int *done)
{
    (void)state;
    (void)request;
    *done = 1;
    return HB_SUCCESS;
}

static hb_status_t serial_allreduce(void *state, double *values, int n, hb_reduce_t op)
{
    (void)state;
    (void)values;
    (void)n;
    (void)op;
    return HB_SUCCESS;
}

static hb_status_t serial_barrier(void *state)
{
    (void)state;
    return HB_SUCCESS;
}

const struct hb_comm_ops hb_serial_comm_ops = {
    .name = "serial",
    .available = serial_available,
    .create = serial_create,
    .destroy = serial_destroy,
    .allgather_int = serial_allgather_int,
    .allgatherv = serial_allgatherv,
    .iallgatherv = serial_iallgatherv,
    .wait = serial_wait,
    .progress = serial_progress,
    .allreduce = serial_allreduce,
    .barrier = serial_barrier,
};
