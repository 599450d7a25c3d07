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
 * Measurements only (bench tridiag --variants): overrides the CUDA partition
 * kernel's shape chosen by the rule, process-wide, not thread-safe. spec:
 * comma-separated rows=8|16 (rows per chunk), threads=128|256|512 (block size;
 * at least the chunks of a system, or half of them for 8-row chunks, which then
 * run two a thread: a smaller value is raised), ahead=4|8 (rows of loads in
 * flight), hint=0|1|2 (loads plain, with an L2 prefetch of 128 or 256 bytes),
 * prefetch=0|1|2 (no L2 prefetch instructions, the whole chunk's lines asked of
 * L2 at the start, or the next `ahead` rows at each group of loads), vector=0|1|2
 * (flat layout: 16-byte loads and stores where the chunk starts on 16 bytes,
 * in place of the hint; 2 the same loads, x written a warp's contiguous spans at
 * a time), cluster=1|2|4|8|16 (blocks of a thread-block cluster that share their
 * systems, each holding 1/K of every system's chunks, one a thread; lowered to the
 * chunks of a system where it has fewer), stage=0|1 (interleaved layout, one chunk a
 * thread: rows copied into shared memory by cp.async, a ring of 2 `ahead` rows a
 * thread, with the 128-byte L2 hint; 0: loads into registers), persist=0|1 (staged
 * plans: no more blocks than are resident at once, each drawing tiles of systems in
 * turn and copying the next tile's first rows during a reduced solve; 0: a block a
 * tile), pairs=0|1 (staged fp32 interleaved plans: a thread solves two adjacent
 * systems as 8-byte pairs of floats where the count and stride are even, the arrays
 * 8-byte aligned and the sizes fixed; else one a thread, same plan);
 * "" is the rule itself. Until a call, and after a call with NULL, the
 * environment variable HB_GTSV_TUNING (same syntax) is read at each solve.
 * rows also applies to the CPU partition solver (the GPU kernel's twin).
 * docs/tridiag.md.
 */
hb_status_t hb_gtsv_set_tuning(const char *spec);

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
/* The rules' tuning (every override unset), and the parser behind the call above. */
void hb_tuning_default(hb_tuning_t *tuning);
hb_status_t hb_tuning_parse(const char *spec, hb_tuning_t *tuning);

#endif
