/*
 * MPI_COMM_WORLD (a duplicate, so that the library's messages never meet the caller's).
 * Compiled only when CMake found a usable MPI (CMakeLists.txt); the registry names it.
 */
#include <limits.h>
#include <mpi.h>
#include <stdlib.h>

#include "backend/comm_ops.h"
#include "common/status.h"

typedef struct {
    MPI_Comm comm;
    int finalize; /* this library called MPI_Init */
} mpi_state_t;

static hb_status_t mpi_fail(const char *what, int code)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    MPI_Error_string(code, text, &len);
    return hb_fail(HB_ERR_BACKEND, "MPI: %s failed: %s", what, text);
}

#define MPI_CHECK(call)                                                                       \
    do {                                                                                      \
        const int hb_mpi_rc = (call);                                                         \
        if (hb_mpi_rc != MPI_SUCCESS) return mpi_fail(#call, hb_mpi_rc);                      \
    } while (0)

static int mpi_available(void) { return 1; }

static hb_status_t mpi_create(void **state, int *rank, int *size, int *threaded)
{
    *state = NULL;
    int initialized = 0, finalized = 0, provided = MPI_THREAD_SINGLE;
    MPI_CHECK(MPI_Initialized(&initialized));
    MPI_CHECK(MPI_Finalized(&finalized));
    if (finalized) return hb_fail(HB_ERR_BACKEND, "MPI: already finalized");
    if (!initialized) {
        MPI_CHECK(MPI_Init_thread(NULL, NULL, MPI_THREAD_SERIALIZED, &provided));
    } else {
        MPI_CHECK(MPI_Query_thread(&provided));
    }
    mpi_state_t *s = calloc(1, sizeof *s);
    if (!s) return hb_fail(HB_ERR_ALLOC, "MPI: out of memory");
    s->finalize = !initialized;
    const int rc = MPI_Comm_dup(MPI_COMM_WORLD, &s->comm);
    if (rc != MPI_SUCCESS) {
        free(s);
        return mpi_fail("MPI_Comm_dup", rc);
    }
    MPI_Comm_set_errhandler(s->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(s->comm, rank);
    MPI_Comm_size(s->comm, size);
    /* Any thread may call the exchange, one at a time. */
    *threaded = provided >= MPI_THREAD_SERIALIZED;
    *state = s;
    return HB_SUCCESS;
}

static hb_status_t mpi_destroy(void *state)
{
    mpi_state_t *s = state;
    if (!s) return HB_SUCCESS;
    MPI_Comm_free(&s->comm);
    const int finalize = s->finalize;
    free(s);
    if (finalize) MPI_CHECK(MPI_Finalize());
    return HB_SUCCESS;
}

static hb_status_t mpi_allgather_int(void *state, int mine, int *all)
{
    mpi_state_t *s = state;
    MPI_CHECK(MPI_Allgather(&mine, 1, MPI_INT, all, 1, MPI_INT, s->comm));
    return HB_SUCCESS;
}

/* Elements of elem_bytes bytes as one MPI type (spikes: 16 bytes). */
static hb_status_t element_type(size_t elem_bytes, MPI_Datatype *type)
{
    if (elem_bytes == 0 || elem_bytes > INT_MAX)
        return hb_fail(HB_ERR_INVALID_VALUE, "MPI: element of %zu bytes", elem_bytes);
    MPI_CHECK(MPI_Type_contiguous((int)elem_bytes, MPI_BYTE, type));
    MPI_CHECK(MPI_Type_commit(type));
    return HB_SUCCESS;
}

static hb_status_t mpi_allgatherv(void *state, const void *send, int send_count, void *recv,
                                  const int *counts, const int *displs, size_t elem_bytes)
{
    mpi_state_t *s = state;
    MPI_Datatype type;
    hb_status_t status = element_type(elem_bytes, &type);
    if (status != HB_SUCCESS) return status;
    const int rc = MPI_Allgatherv(send, send_count, type, recv, counts, displs, type, s->comm);
    MPI_Type_free(&type);
    return rc == MPI_SUCCESS ? HB_SUCCESS : mpi_fail("MPI_Allgatherv", rc);
}

typedef struct {
    MPI_Request request;
    MPI_Datatype type;
} mpi_request_t;

static hb_status_t mpi_iallgatherv(void *state, const void *send, int send_count, void *recv,
                                   const int *counts, const int *displs, size_t elem_bytes,
                                   void **request)
{
    mpi_state_t *s = state;
    *request = NULL;
    mpi_request_t *r = malloc(sizeof *r);
    if (!r) return hb_fail(HB_ERR_ALLOC, "MPI: out of memory");
    hb_status_t status = element_type(elem_bytes, &r->type);
    if (status != HB_SUCCESS) {
        free(r);
        return status;
    }
    const int rc = MPI_Iallgatherv(send, send_count, r->type, recv, counts, displs, r->type,
                                   s->comm, &r->request);
    if (rc != MPI_SUCCESS) {
        MPI_Type_free(&r->type);
        free(r);
        return mpi_fail("MPI_Iallgatherv", rc);
    }
    *request = r;
    return HB_SUCCESS;
}

static hb_status_t mpi_wait(void *state, void *request)
{
    (void)state;
    mpi_request_t *r = request;
    if (!r) return HB_SUCCESS;
    const int rc = MPI_Wait(&r->request, MPI_STATUS_IGNORE);
    MPI_Type_free(&r->type);
    free(r);
    return rc == MPI_SUCCESS ? HB_SUCCESS : mpi_fail("MPI_Wait", rc);
}

static hb_status_t mpi_progress(void *state, void *request, int *done)
{
    (void)state;
    mpi_request_t *r = request;
    *done = 1;
    if (r) MPI_CHECK(MPI_Test(&r->request, done, MPI_STATUS_IGNORE));
    return HB_SUCCESS;
}

static hb_status_t mpi_allreduce(void *state, double *values, int n, hb_reduce_t op)
{
    mpi_state_t *s = state;
    const MPI_Op mop = op == HB_REDUCE_MIN ? MPI_MIN : op == HB_REDUCE_MAX ? MPI_MAX : MPI_SUM;
    MPI_CHECK(MPI_Allreduce(MPI_IN_PLACE, values, n, MPI_DOUBLE, mop, s->comm));
    return HB_SUCCESS;
}

static hb_status_t mpi_barrier(void *state)
{
    mpi_state_t *s = state;
    MPI_CHECK(MPI_Barrier(s->comm));
    return HB_SUCCESS;
}

const struct hb_comm_ops hb_mpi_comm_ops = {
    .name = "mpi",
    .available = mpi_available,
    .create = mpi_create,
    .destroy = mpi_destroy,
    .allgather_int = mpi_allgather_int,
    .allgatherv = mpi_allgatherv,
    .iallgatherv = mpi_iallgatherv,
    .wait = mpi_wait,
    .progress = mpi_progress,
    .allreduce = mpi_allreduce,
    .barrier = mpi_barrier,
};
