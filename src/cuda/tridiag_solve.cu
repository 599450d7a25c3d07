/*
 * The CUDA backend's batched tridiagonal solves (docs/tridiag.md): the problem as the
 * kernels read it, the entry points (a solve, a timed series) and hb_cuda_gtsv_ops
 * (backend/gtsv_ops.h). The kernels: tridiag_thomas.cu, tridiag_partition.cu.
 */
#include <stdio.h>

#include "cuda/tridiag_cuda.h"

static gtsv_args_t make_args(const hb_gtsv_problem_t *p, const hb_gtsv_plan_t *plan)
{
    gtsv_args_t a;
    a.m = p->m;
    a.count = p->batch_count;
    a.touch_all = !p->sizes || (p->flags & HB_GTSV_PAD_COMPUTE);
    a.sizes = p->sizes;
    a.dl = p->dl;
    a.d = p->d;
    a.du = p->du;
    a.b = p->b;
    a.x = p->x;
    a.sys_fastest = p->layout == HB_LAYOUT_INTERLEAVED;
    a.sys_stride = a.sys_fastest ? 1 : (size_t)p->batch_stride;
    a.row_stride = a.sys_fastest ? (size_t)p->batch_stride : 1;
    a.chunks = plan->chunks;
    a.prefetch = plan->prefetch;
    a.cluster = plan->cluster > 1 ? plan->cluster : 1;
    a.groups = plan->algo == HB_GTSV_ALGO_PARTITION ? plan_groups(plan, a.count) : 1;
    a.work = (double *)p->buffer;
    return a;
}

/* THOMAS or PARTITION as the plan says, on `stream`; queued, not waited for. */
static hb_status_t launch(const gtsv_args_t *a, const hb_gtsv_plan_t *plan, int is_float,
                          cudaStream_t stream)
{
    if (plan->algo == HB_GTSV_ALGO_THOMAS) return hb_cuda_gtsv_thomas(a, is_float, stream);
    return hb_cuda_gtsv_partition(a, plan, is_float, stream);
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

extern "C" hb_status_t hb_cuda_gtsv_solve(hb_cuda_context_t *ctx, const hb_gtsv_problem_t *p,
                                          const hb_gtsv_plan_t *plan)
{
    (void)ctx;
    CUDA_CHECK(cudaSetDevice(0));
    const gtsv_args_t a = make_args(p, plan);
    hb_status_t status = launch(&a, plan, p->precision == HB_FLOAT32, 0);
    if (status != HB_SUCCESS) return status;
    CUDA_CHECK(cudaStreamSynchronize(0));
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_gtsv_benchmark(hb_cuda_context_t *ctx,
                                              const hb_gtsv_problem_t *problems,
                                              const hb_gtsv_plan_t *plans, int n_problems,
                                              int repeats, double *seconds)
{
    (void)ctx;
    CUDA_CHECK(cudaSetDevice(0));
    hb_status_t status = HB_SUCCESS;
    cudaEvent_t start = NULL, stop = NULL;
    CUDA_TRY(status, cudaEventCreate(&start), done);
    CUDA_TRY(status, cudaEventCreate(&stop), done);
    for (int k = 0; k < n_problems && status == HB_SUCCESS; ++k) { /* warm-up */
        const gtsv_args_t a = make_args(&problems[k], &plans[k]);
        status = launch(&a, &plans[k], problems[k].precision == HB_FLOAT32, 0);
    }
    CUDA_TRY(status, cudaStreamSynchronize(0), done);
    for (int r = 0; r < repeats && status == HB_SUCCESS; ++r) {
        const int k = r % n_problems;
        const gtsv_args_t a = make_args(&problems[k], &plans[k]);
        float ms = 0.0f;
        CUDA_TRY(status, cudaEventRecord(start, 0), done);
        status = launch(&a, &plans[k], problems[k].precision == HB_FLOAT32, 0);
        CUDA_TRY(status, cudaEventRecord(stop, 0), done);
        CUDA_TRY(status, cudaEventSynchronize(stop), done);
        CUDA_TRY(status, cudaEventElapsedTime(&ms, start, stop), done);
        seconds[r] = 1e-3 * (double)ms;
    }
done:
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return status;
}

/* ---- the backend's table (backend/gtsv_ops.h) ---- */

/* THOMAS keeps the forward sweep's (c', y') in double in the caller's buffer. */
static size_t cuda_buffer_bytes(const hb_gtsv_problem_t *p, hb_gtsv_algo_t algo)
{
    if (algo == HB_GTSV_ALGO_THOMAS)
        return 2 * (size_t)p->m * (size_t)p->batch_count * sizeof(double);
    return 0;
}

/* Every field of the plan shapes the kernel. */
static void cuda_describe(const hb_gtsv_plan_t *plan, char *text, size_t size)
{
    snprintf(text, size,
             "partition rows=%d chunks=%d threads=%d ahead=%d hint=%d prefetch=%d "
             "vector=%d cluster=%d stage=%d persist=%d pairs=%d",
             plan->rows, plan->chunks, plan->threads, plan->ahead, plan->hint, plan->prefetch,
             plan->vector, plan->cluster, plan->stage, plan->persist, plan->pairs);
}

static hb_status_t cuda_solve(void *device, int threads, const hb_gtsv_problem_t *p,
                              const hb_gtsv_plan_t *plan)
{
    (void)threads;
    return hb_cuda_gtsv_solve((hb_cuda_context_t *)device, p, plan);
}

static hb_status_t cuda_benchmark(void *device, int threads, const hb_gtsv_problem_t *problems,
                                  const hb_gtsv_plan_t *plans, int n_problems, int repeats,
                                  double *seconds)
{
    (void)threads;
    return hb_cuda_gtsv_benchmark((hb_cuda_context_t *)device, problems, plans, n_problems,
                                  repeats, seconds);
}

extern "C" const struct hb_gtsv_ops hb_cuda_gtsv_ops = {
    /* auto_partition */ 1,
    /* host_arrays */ 0,
    cuda_buffer_bytes,
    cuda_describe,
    cuda_solve,
    cuda_benchmark,
};
