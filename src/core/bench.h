/*
 * Measurement calls for the benchmark drivers (tools/bench_*.c) and tests: not part of the
 * public API (include/hinesbatch.h), not installed. Each times a solve the public API runs.
 */
#ifndef HB_CORE_BENCH_H
#define HB_CORE_BENCH_H

#include <stddef.h>

#include "backend/tuning.h"
#include "hinesbatch.h"

/*
 * Times `repeats` solves: before each, d and rhs are copied from `source` (same
 * shape and layout, same backend; not timed). seconds[k] receives solve k's time,
 * measured with CUDA events on the CUDA backend and a monotonic clock otherwise.
 */
hb_status_t hb_batch_benchmark(hb_batch_t *batch, const hb_batch_t *source, int repeats,
                               double *seconds);

/*
 * Measured copy bandwidth of the context's memory: a `bytes`-sized copy
 * (device to device on CUDA, memcpy on the CPU), median of `repeats`, counting
 * bytes read plus bytes written [bytes/s].
 */
hb_status_t hb_context_copy_bandwidth(hb_context_t *ctx, size_t bytes, int repeats,
                                      double *bytes_per_second);

/*
 * Times `repeats` solves after one untimed warm-up solve of each problem;
 * solve r runs problems[r % n_problems] (rotating input sets keeps them out of
 * cache). CUDA: each solve timed with CUDA events; CPU: a monotonic clock.
 * The problems must not be HB_GTSV_IN_PLACE (inputs must stay as they are).
 */
hb_status_t hb_gtsv_benchmark(hb_context_t *ctx, const hb_gtsv_problem_t *problems,
                              int n_problems, int repeats, double *seconds);

/*
 * Times `repeats` solves after one warm-up: before each, d and rhs are restored
 * to what they held when the call began (not timed). seconds[k] receives solve
 * k's time (CUDA events on the CUDA backend, a monotonic clock otherwise).
 * Afterwards the batch holds the last solve's result.
 */
hb_status_t hb_multi_benchmark(hb_multi_t *multi, int repeats, double *seconds);

/*
 * Measurement overrides of the kernels' shapes on this context (docs/tuning.md): a
 * comma-separated list of key=value, "" or NULL for the library's rules. A bad key or value
 * is HB_ERR_INVALID_VALUE naming it and what it takes; the context's tuning is then unchanged.
 * Batches read it when they are made, tridiagonal solves at each solve.
 */
hb_status_t hb_context_set_tuning(hb_context_t *ctx, const char *spec);
/*
 * The tuning every context made afterwards starts with, those a simulation or a network makes
 * for itself included (`hinesbatch run --tuning SPEC`): process-wide, so set it before any
 * context is made, from one thread. A bad spec leaves it as it was.
 */
hb_status_t hb_set_default_tuning(const char *spec);
/* The rules' tuning (every override unset), and the parser behind the call above. */
void hb_tuning_default(hb_tuning_t *tuning);
hb_status_t hb_tuning_parse(const char *spec, hb_tuning_t *tuning);

#endif
