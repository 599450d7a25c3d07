/*
 * Batched tridiagonal solves on the CPU backends (sequential, OpenMP).
 *
 * THOMAS: one routine for both layouts solves a run of systems in lockstep
 * (INTERLEAVED: 64 adjacent systems, the lane loop vectorised; FLAT: one
 * system), the forward sweep's (c', y') kept in a per-thread workspace.
 * PARTITION: the CUDA kernel's arithmetic (common/tridiag_plan.h) with its threads run
 * one after another: the CI twin of the GPU solver.
 * THOMAS computes in double for both precisions, PARTITION in the data's (as
 * the CUDA kernel does); work units never share a system, so the result does
 * not depend on the thread count.
 */
#include "cpu/tridiag_cpu.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gtsv_ops.h"
#include "common/status.h"
#include "common/tridiag_plan.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

enum { LANES = 64 }; /* INTERLEAVED systems per THOMAS work unit */

typedef struct {
    const hb_gtsv_problem_t *p;
    hb_gtsv_algo_t algo;
    int rows, chunks;              /* PARTITION: L and P of the plan */
    int cluster;                   /* PARTITION: K, the plan's blocks a system (clusters) */
    size_t sys_stride, row_stride; /* element (s, i) at s * sys_stride + i * row_stride */
    int lanes;                     /* systems per work unit */
    size_t workspace;              /* doubles per thread */
} job_t;

/* Rows of system s, and rows read and written (CP: all m rows). */
static int rows_of(const hb_gtsv_problem_t *p, int s) { return p->sizes ? p->sizes[s] : p->m; }

static int rows_touched(const hb_gtsv_problem_t *p, int s)
{
    return p->sizes && !(p->flags & HB_GTSV_PAD_COMPUTE) ? p->sizes[s] : p->m;
}

/* out[k] = array[base + k * stride] as double, for lanes k with i < touched[k]. */
static void gather(const void *array, hb_precision_t precision, size_t base, size_t stride,
                   int lanes, int i, const int *touched, double *out)
{
    if (precision == HB_FLOAT32) {
        const float *a = (const float *)array;
        for (int k = 0; k < lanes; ++k)
            out[k] = i < touched[k] ? (double)a[base + k * stride] : 0.0;
    } else {
        const double *a = (const double *)array;
        for (int k = 0; k < lanes; ++k) out[k] = i < touched[k] ? a[base + k * stride] : 0.0;
    }
}

static void scatter(void *array, hb_precision_t precision, size_t base, size_t stride, int lanes,
                    int i, const int *touched, const double *in)
{
    if (precision == HB_FLOAT32) {
        float *a = (float *)array;
        for (int k = 0; k < lanes; ++k)
            if (i < touched[k]) a[base + k * stride] = (float)in[k];
    } else {
        double *a = (double *)array;
        for (int k = 0; k < lanes; ++k)
            if (i < touched[k]) a[base + k * stride] = in[k];
    }
}

/* Row i of `lanes` systems from s0 into dl, d, du, b (identity and boundary rules applied). */
static void load_row(const job_t *job, int s0, int lanes, int i, const int *n, const int *touched,
                     double *dl, double *d, double *du, double *b)
{
    const hb_gtsv_problem_t *p = job->p;
    const size_t base = (size_t)s0 * job->sys_stride + (size_t)i * job->row_stride;
    gather(p->dl, p->precision, base, job->sys_stride, lanes, i, touched, dl);
    gather(p->d, p->precision, base, job->sys_stride, lanes, i, touched, d);
    gather(p->du, p->precision, base, job->sys_stride, lanes, i, touched, du);
    gather(p->b, p->precision, base, job->sys_stride, lanes, i, touched, b);
    for (int k = 0; k < lanes; ++k) hb_td_fix_row(i, n[k], &dl[k], &d[k], &du[k], &b[k]);
}

/* Thomas on systems s0 .. s0 + lanes - 1; ws holds 2 m LANES doubles. */
static void thomas_unit(const job_t *job, int s0, int lanes, double *ws)
{
    const hb_gtsv_problem_t *p = job->p;
    const int m = p->m;
    int n[LANES], touched[LANES];
    double dl[LANES], d[LANES], du[LANES], b[LANES], x[LANES];
    double *cp = ws, *yp = ws + (size_t)m * LANES;
    for (int k = 0; k < lanes; ++k) {
        n[k] = rows_of(p, s0 + k);
        touched[k] = rows_touched(p, s0 + k);
        x[k] = 0.0;
    }
    for (int i = 0; i < m; ++i) {
        load_row(job, s0, lanes, i, n, touched, dl, d, du, b);
        double *restrict c = cp + (size_t)i * LANES, *restrict y = yp + (size_t)i * LANES;
        const double *restrict cprev = i ? c - LANES : x, *restrict yprev = i ? y - LANES : x;
        HB_SIMD
        for (int k = 0; k < lanes; ++k) {
            double ck = cprev[k], yk = yprev[k];
            hb_td_thomas_step(dl[k], d[k], du[k], b[k], &ck, &yk);
            c[k] = ck;
            y[k] = yk;
        }
    }
    const size_t sys = (size_t)s0 * job->sys_stride;
    for (int i = m - 1; i >= 0; --i) {
        const double *restrict c = cp + (size_t)i * LANES, *restrict y = yp + (size_t)i * LANES;
        HB_SIMD
        for (int k = 0; k < lanes; ++k) x[k] = y[k] - c[k] * x[k];
        scatter(p->x, p->precision, sys + (size_t)i * job->row_stride, job->sys_stride, lanes, i,
                touched, x);
    }
}

/* partition_unit (double data) and partition_unit_f (float data). */
#define HB_TD_FN(name) name
#define real_t double
#include "tridiag_partition_unit.h"
#undef real_t
#undef HB_TD_FN
#define HB_TD_FN(name) name##_f
#define real_t float
#include "tridiag_partition_unit.h"
#undef real_t
#undef HB_TD_FN

static void run_unit(const job_t *job, int w, double *ws)
{
    const int s0 = w * job->lanes;
    const int left = job->p->batch_count - s0;
    if (job->algo == HB_GTSV_ALGO_PARTITION && job->p->precision == HB_FLOAT32)
        partition_unit_f(job, s0, (float *)ws);
    else if (job->algo == HB_GTSV_ALGO_PARTITION)
        partition_unit(job, s0, ws);
    else
        thomas_unit(job, s0, left < job->lanes ? left : job->lanes, ws);
}

hb_status_t hb_gtsv_cpu_solve(int threads, const hb_gtsv_problem_t *p,
                              const hb_gtsv_plan_t *plan)
{
    const hb_gtsv_algo_t algo = plan->algo;
    job_t job = {p, algo, plan->rows, plan->chunks, plan->cluster > 1 ? plan->cluster : 1,
                 0, 0, 1, 0};
    if (p->layout == HB_LAYOUT_INTERLEAVED) {
        job.sys_stride = 1;
        job.row_stride = (size_t)p->batch_stride;
    } else {
        job.sys_stride = (size_t)p->batch_stride;
        job.row_stride = 1;
    }
    if (algo == HB_GTSV_ALGO_PARTITION) {
        const size_t P = (size_t)plan->chunks, L = (size_t)plan->rows;
        job.workspace = 4 * P * L + 26 * P;
    } else {
        job.lanes = p->layout == HB_LAYOUT_INTERLEAVED ? LANES : 1;
        job.workspace = 2 * (size_t)p->m * LANES;
    }
    const int units = (int)(((size_t)p->batch_count + (size_t)job.lanes - 1) / (size_t)job.lanes);
    if (threads < 1) threads = 1;
    if (threads > units) threads = units;
    double *ws = malloc((size_t)threads * job.workspace * sizeof *ws);
    if (!ws)
        return hb_fail(HB_ERR_ALLOC, "hb_gtsv: out of memory for a %zu-byte CPU workspace",
                       (size_t)threads * job.workspace * sizeof *ws);
#ifdef HB_HAVE_OPENMP
    if (threads > 1) { /* OMP: SEQ contexts run 1 thread */
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int w = 0; w < units; ++w)
            run_unit(&job, w, ws + (size_t)omp_get_thread_num() * job.workspace);
        free(ws);
        return HB_SUCCESS;
    }
#endif
    for (int w = 0; w < units; ++w) run_unit(&job, w, ws);
    free(ws);
    return HB_SUCCESS;
}

/* ---- the backend's table (backend/gtsv_ops.h) ---- */

/* The CPU's workspaces are its own (per thread, above): no caller's buffer. */
static size_t cpu_buffer_bytes(const hb_gtsv_problem_t *p, hb_gtsv_algo_t algo)
{
    (void)p;
    (void)algo;
    return 0;
}

/* rows and chunks fix the arithmetic, and clusters (the blocks a system) change it; the
 * kernel's other fields do not touch the CPU twin. */
static void cpu_describe(const hb_gtsv_plan_t *plan, char *text, size_t size)
{
    if (plan->cluster > 1)
        snprintf(text, size, "partition rows=%d chunks=%d cluster=%d", plan->rows,
                 plan->chunks, plan->cluster);
    else
        snprintf(text, size, "partition rows=%d chunks=%d", plan->rows, plan->chunks);
}

static hb_status_t cpu_solve(void *device, int threads, const hb_gtsv_problem_t *p,
                             const hb_gtsv_plan_t *plan)
{
    (void)device;
    return hb_gtsv_cpu_solve(threads, p, plan);
}

/* Each solve timed with a monotonic clock. */
static hb_status_t cpu_benchmark(void *device, int threads, const hb_gtsv_problem_t *problems,
                                 const hb_gtsv_plan_t *plans, int n_problems, int repeats,
                                 double *seconds)
{
    (void)device;
    for (int k = 0; k < n_problems; ++k) {
        hb_status_t status = hb_gtsv_cpu_solve(threads, &problems[k], &plans[k]);
        if (status != HB_SUCCESS) return status;
    }
    for (int r = 0; r < repeats; ++r) {
        const int k = r % n_problems;
        const double t0 = hb_clock_seconds();
        hb_status_t status = hb_gtsv_cpu_solve(threads, &problems[k], &plans[k]);
        seconds[r] = hb_clock_seconds() - t0;
        if (status != HB_SUCCESS) return status;
    }
    return HB_SUCCESS;
}

const struct hb_gtsv_ops hb_cpu_gtsv_ops = {
    .auto_partition = 0,
    .host_arrays = 1,
    .buffer_bytes = cpu_buffer_bytes,
    .describe = cpu_describe,
    .solve = cpu_solve,
    .benchmark = cpu_benchmark,
};
