#include "cpu/hines_cpu.h"
#include "common/hines_lanes.h"

#include "core/context.h"
#include "common/status.h"

#ifdef HB_HAVE_CUDA
#include "cuda/backend_cuda.h"
#endif

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

/* INTERLEAVED work unit for the OMP backend: 64 lanes = 8 cache lines a row. */
enum { INTERLEAVED_CHUNK = 64 };

hb_status_t hb_check_tree(const char *fn, int m, const int *parent)
{
    if (m < 1) return hb_fail(HB_ERR_INVALID_VALUE, "%s: m = %d; expected m >= 1", fn, m);
    if (!parent) return hb_fail(HB_ERR_INVALID_VALUE, "%s: parent is NULL", fn);
    if (parent[0] != -1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: parent[0] = %d; expected -1 (root)", fn,
                       parent[0]);
    for (int i = 1; i < m; ++i)
        if (parent[i] < 0 || parent[i] >= i)
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "%s: parent[%d] = %d; expected 0 <= parent[i] < i (Hines order)", fn,
                           i, parent[i]);
    return HB_SUCCESS;
}

hb_status_t hb_check_batch(const char *fn, int m, const int *parent, int batch_count,
                           hb_layout_t layout, int block_size)
{
    hb_status_t status = hb_check_tree(fn, m, parent);
    if (status != HB_SUCCESS) return status;
    if (batch_count < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: batch_count = %d; expected >= 1", fn,
                       batch_count);
    if (layout != HB_LAYOUT_FLAT && layout != HB_LAYOUT_INTERLEAVED && layout != HB_LAYOUT_BLOCK)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: layout = %d is not an hb_layout_t", fn,
                       (int)layout);
    if (layout == HB_LAYOUT_BLOCK && block_size < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: block_size = %d; expected >= 1 for %s", fn,
                       block_size, hb_layout_name(layout));
    if (hb_layout_size(layout, m, batch_count, block_size) == 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %d systems of %d rows do not fit in memory",
                       fn, batch_count, m);
    return HB_SUCCESS;
}

void hb_hines_lanes(int m, const int *restrict parent, size_t row_stride, size_t lanes,
                    const double *restrict u, const double *restrict l, double *restrict d,
                    double *restrict rhs)
{
    hb_hines_lanes_inline(m, parent, row_stride, lanes, u, l, d, rhs);
}

hb_status_t hb_hines_solve(int m, const int *parent, const double *u, const double *l,
                           double *d, double *rhs)
{
    hb_clear_error();
    hb_status_t status = hb_check_tree("hb_hines_solve", m, parent);
    if (status != HB_SUCCESS) return status;
    if (!u || !l || !d || !rhs)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_hines_solve: u, l, d and rhs must not be NULL");
    hb_hines_lanes(m, parent, 1, 1, u, l, d, rhs);
    return HB_SUCCESS;
}

hb_status_t hb_hines_matvec(int m, const int *parent, const double *u, const double *l,
                            const double *d, const double *x, double *y)
{
    hb_clear_error();
    hb_status_t status = hb_check_tree("hb_hines_matvec", m, parent);
    if (status != HB_SUCCESS) return status;
    if (!u || !l || !d || !x || !y)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_hines_matvec: u, l, d, x and y must not be NULL");
    if (x == y) return hb_fail(HB_ERR_INVALID_VALUE, "hb_hines_matvec: x and y must not alias");
    for (int i = 0; i < m; ++i) y[i] = d[i] * x[i];
    for (int i = 1; i < m; ++i) {
        y[i] += l[i] * x[parent[i]];
        y[parent[i]] += u[i] * x[i];
    }
    return HB_SUCCESS;
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

hb_status_t hb_hines_solve_batch(hb_context_t *ctx, int m, const int *parent, const double *u,
                                 const double *l, double *d, double *rhs, hb_layout_t layout,
                                 int block_size, int batch_count)
{
    static const char fn[] = "hb_hines_solve_batch";
    hb_clear_error();
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "%s: ctx is NULL", fn);
    hb_status_t status = hb_check_batch(fn, m, parent, batch_count, layout, block_size);
    if (status != HB_SUCCESS) return status;
    if (!u || !l || !d || !rhs)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: u, l, d and rhs must not be NULL", fn);
    if (ctx->backend == HB_BACKEND_CUDA) {
#ifdef HB_HAVE_CUDA
        /* Host arrays: copy in, solve with the library's choice of kernel, copy back. */
        hb_cuda_batch_t *dev = NULL;
        const int block = hb_layout_block(layout, batch_count, block_size);
        status = hb_cuda_batch_create((hb_cuda_context_t *)ctx->device, m, parent, batch_count,
                                      layout, block, &dev);
        if (status == HB_SUCCESS) status = hb_cuda_batch_upload(dev, u, l, d, rhs);
        if (status == HB_SUCCESS) status = hb_cuda_batch_solve(dev, HB_HINES_ALGO_AUTO);
        if (status == HB_SUCCESS) status = hb_cuda_batch_download(dev, NULL, NULL, d, rhs);
        hb_cuda_batch_destroy(dev);
        return status;
#else
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: built without CUDA", fn);
#endif
    }

    batch_job_t job = {m, batch_count, 0, 0, parent, u, l, d, rhs};
    job.block = hb_layout_block(layout, batch_count, block_size);
    job.chunk = layout == HB_LAYOUT_INTERLEAVED && job.block > INTERLEAVED_CHUNK
                    ? INTERLEAVED_CHUNK
                    : job.block;
    const int units = (int)(((size_t)batch_count + (size_t)job.chunk - 1) / (size_t)job.chunk);
#ifdef HB_HAVE_OPENMP
    if (ctx->backend == HB_BACKEND_OMP) {
        const int threads = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int w = 0; w < units; ++w) solve_unit(&job, w);
        return HB_SUCCESS;
    }
#endif
    for (int w = 0; w < units; ++w) solve_unit(&job, w);
    return HB_SUCCESS;
}
