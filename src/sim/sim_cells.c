/*
 * The simulation's cells as its builders see them: a cell's model from the caller's array or
 * the cell source (got and put back), and the loop that builds them on the build threads,
 * reporting the first failure in cell order (hb_for_each_first). Apart from sim.c so that the
 * layout (sim_layout.c) and the life cycle (sim.c) both use it without using each other.
 */
#include <stdio.h>

#include "common/status.h"
#include "sim/sim_engine.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

const hb_model_t *hb_sim_cell_get(const hb_sim_t *sim, int c)
{
    if (sim->cells) return sim->cells[c];
    return sim->source.get(sim->source.user, c);
}

void hb_sim_cell_put(const hb_sim_t *sim, int c, const hb_model_t *model)
{
    if (!sim->cells && model && sim->source.put)
        sim->source.put(sim->source.user, c, (hb_model_t *)model);
}

hb_status_t hb_for_each_first(int threads, int n, const char *what,
                              hb_status_t (*fn)(void *ctx, int i), void *ctx)
{
    int first = n; /* the smallest failing i; -1 once interrupted */
    hb_status_t status = HB_SUCCESS;
    char message[1024] = "";
    /* hb_set_progress's hook: told how far, by the first thread, every 0.1 s at most */
    const int watched = what && hb_progress_watched();
    double reported = watched ? hb_clock_seconds() : 0.0;
    long done = 0;
#ifdef HB_HAVE_OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1)
#endif
    for (int i = 0; i < n; i++) {
        int skip;
#ifdef HB_HAVE_OPENMP
#pragma omp atomic read
#endif
        skip = first;
        if (skip < i) continue; /* a smaller i failed already */
        const hb_status_t st = fn(ctx, i);
        if (st == HB_SUCCESS && watched) {
            long now_done;
#ifdef HB_HAVE_OPENMP
#pragma omp atomic capture
#endif
            now_done = ++done;
            int lead = 1;
#ifdef HB_HAVE_OPENMP
            lead = omp_get_thread_num() == 0;
#endif
            const double now = lead ? hb_clock_seconds() : 0.0;
            if (lead && now - reported >= 0.1) {
                reported = now;
                if (hb_progress_report(what, now_done, n)) {
#ifdef HB_HAVE_OPENMP
#pragma omp critical(hb_for_each_first)
#endif
                    {
#ifdef HB_HAVE_OPENMP
#pragma omp atomic write
#endif
                        first = -1;
                        status = HB_ERR_INTERRUPTED;
                        snprintf(message, sizeof message, "interrupted while building (%s: %ld "
                                 "of %d)", what, now_done, n);
                    }
                }
            }
        }
        if (st == HB_SUCCESS) continue;
#ifdef HB_HAVE_OPENMP
#pragma omp critical(hb_for_each_first)
#endif
        if (i < first) {
#ifdef HB_HAVE_OPENMP
#pragma omp atomic write
#endif
            first = i;
            status = st;
            snprintf(message, sizeof message, "%s", hb_last_error());
        }
    }
    (void)threads;
    return status == HB_SUCCESS ? HB_SUCCESS : hb_fail(status, "%s", message);
}

hb_status_t hb_sim_for_each(const hb_sim_t *sim, int n, const char *what,
                            hb_status_t (*fn)(void *ctx, int i), void *ctx)
{
    return hb_for_each_first(sim->build_threads, n, what, fn, ctx);
}
