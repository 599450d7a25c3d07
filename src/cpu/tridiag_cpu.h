/*
 * The CPU backend of batched tridiagonal solves (tridiag_cpu.c): its table is
 * hb_cpu_gtsv_ops (backend/gtsv_ops.h); arguments are checked by the core.
 */
#ifndef HB_CPU_TRIDIAG_CPU_H
#define HB_CPU_TRIDIAG_CPU_H

#include "common/tridiag_plan.h"
#include "hinesbatch.h"

/* Solves as `plan` says on `threads` OpenMP threads (1: sequential); returns when done. */
hb_status_t hb_gtsv_cpu_solve(int threads, const hb_gtsv_problem_t *p,
                              const hb_gtsv_plan_t *plan);

#endif
