/*
 * Batched tridiagonal solves (hb_gtsv_*): what src/core/tridiag.c needs of a backend. The
 * core checks the arguments, resolves AUTO and builds the plan (common/tridiag_plan.h's
 * hb_gtsv_plan_t: the rule, then ctx->tuning.gtsv); a backend runs it. Problems hold the
 * backend's memory (CUDA: device pointers, sizes included).
 */
#ifndef HB_BACKEND_GTSV_OPS_H
#define HB_BACKEND_GTSV_OPS_H

#include <stddef.h>

#include "backend/backend.h"
#include "common/tridiag_plan.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

struct hb_gtsv_ops {
    /* AUTO's choice: non-zero, PARTITION where m <= HB_TD_MAX_PARTITION_M (the GPU kernel),
     * else THOMAS; zero, THOMAS always (the CPU's lockstep lanes). */
    int auto_partition;
    /* Non-zero where the problem's arrays are host memory, so the core may read sizes[]. */
    int host_arrays;
    /* The caller's buffer a solve of `algo` (resolved) needs [bytes] (0: none). */
    size_t (*buffer_bytes)(const hb_gtsv_problem_t *p, hb_gtsv_algo_t algo);
    /* hb_gtsv_describe's text of a PARTITION plan: the fields that shape this backend's
     * solve. */
    void (*describe)(const hb_gtsv_plan_t *plan, char *text, size_t size);
    /* Solves as `plan` says (arguments checked) and returns when done. device: ctx->device;
     * threads: the context's (hb_context_threads; 1 but on OMP). */
    hb_status_t (*solve)(void *device, int threads, const hb_gtsv_problem_t *p,
                         const hb_gtsv_plan_t *plan);
    /* One untimed solve of each problem, then `repeats` solves of problems[r % n_problems],
     * seconds[r] their times [s] (CUDA events; CPU a monotonic clock). */
    hb_status_t (*benchmark)(void *device, int threads, const hb_gtsv_problem_t *problems,
                             const hb_gtsv_plan_t *plans, int n_problems, int repeats,
                             double *seconds);
};

extern const struct hb_gtsv_ops hb_cpu_gtsv_ops, hb_cuda_gtsv_ops;

#ifdef __cplusplus
}
#endif
#endif
