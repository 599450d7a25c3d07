/*
 * How a run's OpenMP threads meet the host's cores (hinesbatch run, issue 56). Ranks on one
 * host times threads a rank above its cores makes OpenMP's spinning waits take turns on them:
 * a busyring of --backend omp took 31 to 155 s instead of about 1 s, and 1.5 s with
 * OMP_WAIT_POLICY=passive (the same spikes). The plan: where the threads outnumber the cores,
 * they wait passively, unless OMP_WAIT_POLICY is the user's. The thread count is left as it
 * is (a share of the cores a rank was measured no faster on a loaded 2-core host: 4 ranks x 1
 * thread 17-19 s, x 2 passive 6-7 s). A decision alone (no I/O): tests/test_run_threads.c.
 */
#ifndef HB_TOOLS_RUN_THREADS_H
#define HB_TOOLS_RUN_THREADS_H

typedef struct {
    int total;   /* ranks on the host x threads a rank */
    int over;    /* 1: the threads outnumber the cores */
    int passive; /* 1: set OMP_WAIT_POLICY=passive */
} run_threads_t;

/* cores: the host's; ranks: the run's ranks on this host; usable: the cores this rank may run
 * on (OpenMP's default thread count); asked: threads asked for (--threads or OMP_NUM_THREADS;
 * 0: none); policy_set: OMP_WAIT_POLICY is set. */
static inline run_threads_t run_threads_plan(int cores, int ranks, int usable, int asked,
                                             int policy_set)
{
    run_threads_t p = {0, 0, 0};
    if (cores < 1) cores = 1;
    if (ranks < 1) ranks = 1;
    if (usable < 1) usable = cores;
    const long total = (long)ranks * (asked > 0 ? asked : usable);
    p.total = total < 1 << 30 ? (int)total : 1 << 30;
    p.over = total > cores;
    p.passive = p.over && !policy_set;
    return p;
}

#endif
