/*
 * Communicators: the serial one always; the best one (MPI in an MPI build), which ctest also
 * runs on 3 ranks (test_comm_mpi3): every collective checked against what each rank sent.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/comm_ops.h"
#include "check.h"
#include "hinesbatch.h"

typedef struct {
    double t;
    int gid, unused;
} spike_t;

static void test_collectives(hb_comm_t *c)
{
    const int rank = hb_comm_rank(c), size = hb_comm_size(c);
    CHECK(size >= 1 && rank >= 0 && rank < size);
    int *all = check_malloc((size_t)size * sizeof *all);
    CHECK_OK(c->ops->allgather_int(c->state, 10 * rank + 1, all));
    for (int r = 0; r < size; ++r) CHECKF(all[r] == 10 * r + 1, "rank %d: all[%d] = %d", rank, r, all[r]);

    /* rank r sends r + 1 spikes (gid 100 r + k, t = r + k / 8); rank 0 of a 1-rank world 1 */
    int *counts = check_malloc((size_t)size * sizeof *counts);
    int *displs = check_malloc((size_t)size * sizeof *displs);
    int total = 0;
    for (int r = 0; r < size; ++r) {
        counts[r] = r + 1;
        displs[r] = total;
        total += counts[r];
    }
    spike_t *mine = check_malloc((size_t)(rank + 1) * sizeof *mine);
    for (int k = 0; k <= rank; ++k) mine[k] = (spike_t){rank + k / 8.0, 100 * rank + k, 0};
    for (int variant = 0; variant < 2; ++variant) {
        spike_t *got = check_malloc((size_t)total * sizeof *got);
        memset(got, 0xff, (size_t)total * sizeof *got);
        if (variant == 0) {
            CHECK_OK(c->ops->allgatherv(c->state, mine, rank + 1, got, counts, displs, sizeof *got));
        } else {
            void *request = NULL;
            CHECK_OK(c->ops->iallgatherv(c->state, mine, rank + 1, got, counts, displs,
                                         sizeof *got, &request));
            CHECK_OK(c->ops->wait(c->state, request));
        }
        int bad = 0;
        for (int r = 0; r < size; ++r)
            for (int k = 0; k < counts[r]; ++k) {
                const spike_t *s = &got[displs[r] + k];
                bad += s->gid != 100 * r + k || s->t != r + k / 8.0;
            }
        CHECKF(bad == 0, "rank %d, %s: %d spikes differ", rank,
               variant ? "iallgatherv" : "allgatherv", bad);
        free(got);
    }
    double v[3] = {rank, rank, rank + 1};
    CHECK_OK(c->ops->allreduce(c->state, v, 1, HB_REDUCE_MIN));
    CHECK_OK(c->ops->allreduce(c->state, v + 1, 1, HB_REDUCE_MAX));
    CHECK_OK(c->ops->allreduce(c->state, v + 2, 1, HB_REDUCE_SUM));
    CHECKF(v[0] == 0 && v[1] == size - 1 && v[2] == size * (size + 1) / 2.0,
           "rank %d: min %g max %g sum %g", rank, v[0], v[1], v[2]);
    CHECK_OK(c->ops->barrier(c->state));
    free(mine);
    free(counts);
    free(displs);
    free(all);
}

int main(void)
{
    hb_comm_t *c = NULL;
    CHECK(hb_comm_create((hb_comm_kind_t)7, &c) == HB_ERR_INVALID_VALUE && c == NULL);
    CHECK(hb_comm_create(HB_COMM_SERIAL, NULL) == HB_ERR_INVALID_VALUE);
    CHECK(hb_comm_available(HB_COMM_SERIAL) && hb_comm_available(HB_COMM_BEST));
    if (!hb_comm_available(HB_COMM_MPI))
        CHECK(hb_comm_create(HB_COMM_MPI, &c) == HB_ERR_NOT_SUPPORTED && c == NULL);

    /* The best first: MPI, when there, must be initialised before anything else runs. */
    CHECK_OK(hb_comm_create(HB_COMM_BEST, &c));
    if (!c) return check_summary("test_comm");
    CHECK(strcmp(hb_comm_name(c), hb_comm_available(HB_COMM_MPI) ? "mpi" : "serial") == 0);
    test_collectives(c);
    const int rank = hb_comm_rank(c);

    hb_comm_t *s = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &s));
    CHECK(hb_comm_rank(s) == 0 && hb_comm_size(s) == 1 && strcmp(hb_comm_name(s), "serial") == 0);
    if (s) test_collectives(s);
    CHECK_OK(hb_comm_destroy(s));
    CHECK_OK(hb_comm_destroy(NULL));
    CHECK_OK(hb_comm_destroy(c));
    /* One summary line per rank would repeat: rank 0 speaks, every rank's status counts. */
    if (rank != 0) return check_failed ? 1 : 0;
    return check_summary("test_comm");
}
