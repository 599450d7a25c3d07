/* hinesbatch run's plan for OpenMP threads on a host shared by ranks (tools/run_threads.h,
 * issue 56): threads that outnumber the cores (ranks x threads a rank) wait passively, unless
 * OMP_WAIT_POLICY is the user's; within the cores nothing changes. */
#include "check.h"
#include "run_threads.h"

int main(void)
{
    /* one rank, OpenMP's default (every core): nothing */
    run_threads_t p = run_threads_plan(16, 1, 16, 0, 0);
    CHECK(p.total == 16 && !p.over && !p.passive);
    /* 4 ranks on 16 cores, each with OpenMP's 16: over, passive */
    p = run_threads_plan(16, 4, 16, 0, 0);
    CHECK(p.total == 64 && p.over && p.passive);
    /* ranks bound to one core each (Open MPI's default binding): within the cores */
    p = run_threads_plan(2, 2, 1, 0, 0);
    CHECK(p.total == 2 && !p.over && !p.passive);
    /* the 4 ranks x 2 threads on 2 cores: passive */
    p = run_threads_plan(2, 4, 2, 2, 0);
    CHECK(p.total == 8 && p.over && p.passive);
    /* ... unless the user set OMP_WAIT_POLICY */
    p = run_threads_plan(2, 4, 2, 2, 1);
    CHECK(p.over && !p.passive);
    /* one rank asking for more threads than cores */
    p = run_threads_plan(2, 1, 2, 3, 0);
    CHECK(p.total == 3 && p.over && p.passive);
    /* asked within the cores: nothing, whatever OpenMP's default */
    p = run_threads_plan(16, 2, 16, 8, 0);
    CHECK(p.total == 16 && !p.over && !p.passive);
    /* unknown counts are taken as one */
    p = run_threads_plan(0, 0, 0, 0, 0);
    CHECK(p.total == 1 && !p.over);
    return check_summary("run_threads");
}
