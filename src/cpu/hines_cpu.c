/* The CPU backend of Hines batches (backend/hines_ops.h): the batch's host arrays are its data
 * (no state of its own), solved by hb_hines_lanes over runs of lanes, with OpenMP on OMP. */
#include <string.h>

#include "backend/hines_ops.h"
#include "common/hines_lanes.h"
#include "common/layout.h"
#include "common/status.h"
#include "cpu/hines_cpu.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

/* INTERLEAVED work unit for the OMP backend: 64 lanes = 8 cache lines a row. */
enum { INTERLEAVED_CHUNK = 64 };

void hb_hines_lanes(int m, const int *restrict parent, size_t row_stride, size_t lanes,
                    const double *restrict u, const double *restrict l, double *restrict d,
                    double *restrict rhs)
{
    hb_hines_lanes_inline(m, parent, row_stride, lanes, u, l, d, rhs);
}

/* A batch solve: work unit w covers systems [w * chunk, min((w + 1) * chunk, count)). */
typedef struct {
    int m, count, block, chunk;
    const int *parent;
    const double *u, *l;
    double *d, *rhs;
} batch_job_t;

/* A chunk never straddles two blocks: either chunk == block or there is one block. */
static void solve_unit(const batch_job_t *job, int w)
{
    const int s0 = w * job->chunk;
    const int s1 = job->count - s0 < job->chunk ? job->count : s0 + job->chunk;
    const size_t base = hb_block_base(job->m, job->block, s0);
    hb_hines_lanes(job->m, job->parent, (size_t)job->block, (size_t)(s1 - s0), job->u + base,
                   job->l + base, job->d + base, job->rhs + base);
}

/* The batch's host arrays in place; SEQ and OMP alike ignore `algo` (one kernel). */
static hb_status_t cpu_solve(const hb_hines_host_t *h, void *state, hb_hines_algo_t algo)
{
    (void)state;
    (void)algo;
    batch_job_t job = {h->m, h->count, 0, 0, h->parent, h->u, h->l, h->d, h->rhs};
    job.block = h->block;
    job.chunk = h->layout == HB_LAYOUT_INTERLEAVED && job.block > INTERLEAVED_CHUNK
                    ? INTERLEAVED_CHUNK
                    : job.block;
    const int units = (int)(((size_t)h->count + (size_t)job.chunk - 1) / (size_t)job.chunk);
#ifdef HB_HAVE_OPENMP
    if (h->ctx->backend == HB_BACKEND_OMP) {
        const int threads = h->ctx->threads > 0 ? h->ctx->threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int w = 0; w < units; ++w) solve_unit(&job, w);
        return HB_SUCCESS;
    }
#endif
    for (int w = 0; w < units; ++w) solve_unit(&job, w);
    return HB_SUCCESS;
}

static hb_status_t cpu_create(const hb_hines_host_t *host, const hb_tuning_t *tuning,
                              void **state)
{
    (void)host;
    (void)tuning;
    *state = NULL; /* the host arrays are the data */
    return HB_SUCCESS;
}

static void cpu_destroy(void *state) { (void)state; }

/* Never called (no state); the host copy is already current. */
static hb_status_t cpu_upload(void *state, const double *u, const double *l, const double *d,
                              const double *rhs)
{
    (void)state, (void)u, (void)l, (void)d, (void)rhs;
    return HB_SUCCESS;
}

static hb_status_t cpu_download(void *state, double *u, double *l, double *d, double *rhs)
{
    (void)state, (void)u, (void)l, (void)d, (void)rhs;
    return HB_SUCCESS;
}

static hb_status_t cpu_copy(void *dst, const void *src)
{
    (void)dst, (void)src;
    return HB_SUCCESS;
}

static hb_hines_algo_t cpu_resolve(const void *state, hb_hines_algo_t algo)
{
    (void)state;
    (void)algo;
    return HB_HINES_ALGO_PER_THREAD;
}

static hb_status_t cpu_benchmark(const hb_hines_host_t *batch, void *state,
                                 const hb_hines_host_t *source, const void *source_state,
                                 hb_hines_algo_t algo, int repeats, double *seconds)
{
    (void)source_state;
    hb_status_t status = HB_SUCCESS;
    const size_t bytes = hb_layout_size(batch->layout, batch->m, batch->count,
                                        batch->block) * sizeof(double);
    for (int r = -1; r < repeats && status == HB_SUCCESS; ++r) { /* one warm-up */
        memcpy(batch->d, source->d, bytes);
        memcpy(batch->rhs, source->rhs, bytes);
        double t0 = hb_clock_seconds();
        status = cpu_solve(batch, state, algo);
        if (r >= 0) seconds[r] = hb_clock_seconds() - t0;
    }
    return status;
}

const struct hb_hines_ops hb_cpu_hines_ops = {
    .create = cpu_create,
    .destroy = cpu_destroy,
    .upload = cpu_upload,
    .download = cpu_download,
    .resolve = cpu_resolve,
    .solve = cpu_solve,
    .copy = cpu_copy,
    .benchmark = cpu_benchmark,
};
