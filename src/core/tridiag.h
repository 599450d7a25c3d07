/*
 * The core's internals of batched tridiagonal solves (src/core/tridiag.c) that the tests
 * read: the plan a solve runs.
 */
#ifndef HB_CORE_TRIDIAG_H
#define HB_CORE_TRIDIAG_H

#include "common/tridiag_plan.h"
#include "hinesbatch.h"

/* The plan hb_gtsv_solve runs for a problem (the rule, then the context's tuning, read at
 * each call; shape checked as by hb_gtsv_describe, data pointers unused). */
hb_status_t hb_gtsv_make_plan(hb_context_t *ctx, const hb_gtsv_problem_t *problem,
                              hb_gtsv_plan_t *plan);

#endif
