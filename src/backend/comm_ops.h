/*
 * Communication between ranks (serial: one rank; MPI), the network simulator's one interface
 * to it. src/comm/ fills the tables; src/registry/registry.c hands them out.
 */
#ifndef HB_BACKEND_COMM_OPS_H
#define HB_BACKEND_COMM_OPS_H

#include <stddef.h>

#include "hinesbatch.h"

typedef enum { HB_REDUCE_MIN = 0, HB_REDUCE_MAX = 1, HB_REDUCE_SUM = 2 } hb_reduce_t;

struct hb_comm_ops {
    const char *name; /* "serial", "mpi" */
    /* Non-zero when this implementation can run (MPI: the library is present). */
    int (*available)(void);
    /* State for a communicator over all ranks (MPI: initialised here if nobody has, with
     * MPI_THREAD_SERIALIZED asked for); rank and size of this process. Errors recorded. */
    hb_status_t (*create)(void **state, int *rank, int *size, int *threaded);
    hb_status_t (*destroy)(void *state);
    /* all[r] = rank r's `mine` (MPI_Allgather). */
    hb_status_t (*allgather_int)(void *state, int mine, int *all);
    /* Rank r's counts[r] elements of elem_bytes bytes each land at recv + displs[r] elements
     * (MPI_Allgatherv). */
    hb_status_t (*allgatherv)(void *state, const void *send, int send_count, void *recv,
                              const int *counts, const int *displs, size_t elem_bytes);
    /* The same started without waiting (MPI_Iallgatherv); *request completes in wait. The
     * buffers must stay untouched until then. */
    hb_status_t (*iallgatherv)(void *state, const void *send, int send_count, void *recv,
                               const int *counts, const int *displs, size_t elem_bytes,
                               void **request);
    hb_status_t (*wait)(void *state, void *request);
    /* Lets a started collective progress (MPI_Test); never waits. *done: 1 when it has
     * completed (wait then returns at once). */
    hb_status_t (*progress)(void *state, void *request, int *done);
    /* values[0..n) reduced over all ranks in place. */
    hb_status_t (*allreduce)(void *state, double *values, int n, hb_reduce_t op);
    hb_status_t (*barrier)(void *state);
};

/* What the core and the network engine see of a communicator (hb_comm_t). */
struct hb_comm {
    hb_comm_kind_t kind;             /* resolved: never HB_COMM_BEST */
    const struct hb_comm_ops *ops;
    void *state;
    int rank, size;
    int threaded; /* any thread may call the collectives, one at a time */
};

extern const struct hb_comm_ops hb_serial_comm_ops;
extern const struct hb_comm_ops hb_mpi_comm_ops;

#endif
