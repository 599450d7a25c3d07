/*
 * The CUDA batch: made over the context's devices (split by system ranges), host arrays in and
 * out, AUTO's choice of kernel, and the solves and their timing on every device. The kernels
 * are in hines_<family>.cu (cuda/hines_cuda.h).
 */
#include <cuda_runtime.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "common/hines_plan.h"
#include "common/status.h"
}
#include "cuda/cuda_check.h"
#include "cuda/hines_cuda.h"

/* Why `algo` cannot run on part k, or NULL when it can. */
static const char *unsupported(const hb_cuda_batch_t *b, const part_t *p, hb_hines_algo_t algo)
{
    const size_t optin = b->ctx->smem_optin[p->device];
    switch (algo) {
    case HB_HINES_ALGO_PER_THREAD: return NULL;
    case HB_HINES_ALGO_BLOCK_SHARED:
        if (b->layout != HB_LAYOUT_BLOCK) return "Block-Shared needs the BLOCK layout";
        if (b->block > 1024) return "Block-Shared needs a block size of at most 1024";
        if ((size_t)b->m * (size_t)b->block * sizeof(double) > optin)
            return "Block-Shared: m x block size x 8 bytes exceed shared memory";
        return NULL;
    case HB_HINES_ALGO_STAGED:
        return hb_cuda_hines_staged_smem(b->m, 1) > optin
                   ? "staged: one system exceeds shared memory"
                   : NULL;
    case HB_HINES_ALGO_PIPELINED: {
        pipe_shape_t shape;
        if (b->layout == HB_LAYOUT_FLAT) return "pipelined needs the INTERLEAVED or BLOCK layout";
        return hb_cuda_hines_pipe_shape(b, optin, &shape)
                   ? NULL
                   : "pipelined: the tree has too many forks open at once for shared memory";
    }
    case HB_HINES_ALGO_BRANCHED:
        return b->branched[p->uniform ? 1 : 0].plan.lanes
                   ? NULL
                   : "branched: one system's rows exceed shared memory";
    case HB_HINES_ALGO_STREAMED:
        if (b->layout == HB_LAYOUT_FLAT) return "streamed needs the INTERLEAVED or BLOCK layout";
        return hb_cuda_hines_streamed_lanes(b, optin)
                   ? NULL
                   : "streamed: the block size is not a multiple of the lanes, "
                     "or 8 systems' intermediates exceed shared memory";
    default: return "unknown algorithm";
    }
}

extern "C" hb_hines_algo_t hb_cuda_batch_resolve(const hb_cuda_batch_t *b, hb_hines_algo_t algo)
{
    if (algo != HB_HINES_ALGO_AUTO) return algo;
    /* Measured on an H100 (docs/gpu.md, bench/results/hines-h100.md): the
     * branched kernel is the fastest at every size we measure, 256 to 256,000 systems of
     * 76-700 rows (1.2-1.75x the pipelined kernel at 256,000). The others serve trees
     * whose rows do not fit a block's shared memory: the staged kernel for up to two systems
     * per multiprocessor, up to two waves of streamed warps the streamed kernel, beyond that
     * the pipelined kernel, or the paper's kernel when the tree's fork slots do not fit. */
    const part_t *p = &b->part[0];
    const long sms = b->ctx->sm_count[p->device] > 0 ? b->ctx->sm_count[p->device] : 1;
    if (!unsupported(b, p, HB_HINES_ALGO_BRANCHED)) return HB_HINES_ALGO_BRANCHED;
    if (p->count <= 2 * sms && !unsupported(b, p, HB_HINES_ALGO_STAGED))
        return HB_HINES_ALGO_STAGED;
    const int lanes = hb_cuda_hines_streamed_lanes(b, b->ctx->smem_optin[p->device]);
    if (lanes && p->count <= 2 * sms * lanes && !unsupported(b, p, HB_HINES_ALGO_STREAMED))
        return HB_HINES_ALGO_STREAMED;
    if (!unsupported(b, p, HB_HINES_ALGO_PIPELINED)) return HB_HINES_ALGO_PIPELINED;
    return HB_HINES_ALGO_PER_THREAD;
}

/* Queue `algo` on part p (the current device is p's). */
static hb_status_t launch(const hb_cuda_batch_t *b, part_t *p, hb_hines_algo_t algo)
{
    switch (algo) {
    case HB_HINES_ALGO_PER_THREAD: return hb_cuda_hines_per_thread(b, p);
    case HB_HINES_ALGO_BLOCK_SHARED: return hb_cuda_hines_block_shared(b, p);
    case HB_HINES_ALGO_STAGED: return hb_cuda_hines_staged(b, p);
    case HB_HINES_ALGO_STREAMED: return hb_cuda_hines_streamed(b, p);
    case HB_HINES_ALGO_PIPELINED: return hb_cuda_hines_pipelined(b, p);
    case HB_HINES_ALGO_BRANCHED: return hb_cuda_hines_branched(b, p);
    default: return hb_fail(HB_ERR_INVALID_VALUE, "unknown Hines algorithm %d", (int)algo);
    }
}

extern "C" void hb_cuda_batch_destroy(hb_cuda_batch_t *b)
{
    if (!b) return;
    for (int k = 0; k < b->parts; ++k) {
        part_t *p = &b->part[k];
        cudaSetDevice(b->ctx->id[p->device]);
        cudaFree(p->parent);
        cudaFree(p->u);
        cudaFree(p->l);
        cudaFree(p->d);
        cudaFree(p->rhs);
        cudaFree(p->code);
        cudaFree(p->cu);
        cudaFree(p->cl);
        cudaFree(p->scratch);
        cudaFree(p->branched_tables[0]);
        cudaFree(p->branched_tables[1]);
    }
    hb_hines_branched_free(&b->branched[0].plan);
    hb_hines_branched_free(&b->branched[1].plan);
    free(b);
}

extern "C" hb_status_t hb_cuda_batch_create(hb_cuda_context_t *c, int m, const int *parent,
                                            int count, hb_layout_t layout, int block,
                                            const hb_tuning_t *tuning, hb_cuda_batch_t **out)
{
    *out = NULL;
    hb_cuda_batch_t *b = (hb_cuda_batch_t *)calloc(1, sizeof *b);
    if (!b) return hb_fail(HB_ERR_ALLOC, "out of memory creating a CUDA batch");
    b->ctx = c;
    b->m = m;
    b->count = count;
    b->block = block;
    b->layout = layout;
    b->tuning = *tuning;
    /* Split by whole layout blocks (BLOCK) or by systems in multiples of 32. */
    const int unit = layout == HB_LAYOUT_BLOCK ? block : 32;
    const int units = ceil_div(count, unit);
    b->parts = units < c->devices ? units : c->devices;
    hb_hines_plan_t plan = {0, 0, NULL};
    hb_status_t status = hb_hines_plan_build(m, parent, &plan);
    if (status == HB_ERR_ALLOC) {
        free(b);
        return status;
    }
    b->slots = status == HB_SUCCESS ? plan.slots : -1; /* too many forks: no pipelined kernel */
    hb_clear_error();
    status = HB_SUCCESS;
    for (int k = 0; k < b->parts; ++k) {
        part_t *p = &b->part[k];
        const int u0 = (int)((long)units * k / b->parts), u1 = (int)((long)units * (k + 1) / b->parts);
        p->device = k;
        p->s0 = u0 * unit;
        p->count = (u1 * unit < count ? u1 * unit : count) - p->s0;
        p->block = layout == HB_LAYOUT_FLAT ? 1 : layout == HB_LAYOUT_INTERLEAVED ? p->count : block;
        p->size = layout == HB_LAYOUT_BLOCK ? (size_t)(u1 - u0) * (size_t)block * (size_t)m
                                            : (size_t)p->count * (size_t)m;
        const size_t bytes = p->size * sizeof(double);
        CUDA_TRY(status, cudaSetDevice(c->id[k]), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->parent, (size_t)m * sizeof(int)), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->u, bytes), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->l, bytes), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->d, bytes), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->rhs, bytes), fail);
        CUDA_TRY(status, cudaMemcpy(p->parent, parent, (size_t)m * sizeof(int),
                                    cudaMemcpyHostToDevice), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->cu, (size_t)m * sizeof(double)), fail);
        CUDA_TRY(status, cudaMalloc((void **)&p->cl, (size_t)m * sizeof(double)), fail);
        if (plan.code) {
            CUDA_TRY(status, cudaMalloc((void **)&p->code, (size_t)m * sizeof(int)), fail);
            CUDA_TRY(status, cudaMemcpy(p->code, plan.code, (size_t)m * sizeof(int),
                                        cudaMemcpyHostToDevice), fail);
        }
    }
    hb_hines_plan_free(&plan);
    if ((status = hb_cuda_hines_branched_setup(b, parent)) != HB_SUCCESS) goto fail_built;
    *out = b;
    return HB_SUCCESS;
fail:
    hb_hines_plan_free(&plan);
fail_built:
    hb_cuda_batch_destroy(b);
    return status;
}

/* Whether every system's u and l equal system 0's, bit for bit (host copy,
 * global layout); if so they are read once per row by the pipelined kernel. */
static int coefficients_uniform(const hb_cuda_batch_t *b, const double *u, const double *l)
{
    const size_t B = (size_t)b->block;
    for (int i = 0; i < b->m; ++i) {
        const double *ur = u + (size_t)i * B, *lr = l + (size_t)i * B; /* system 0, row i */
        for (int s = 1; s < b->count; ++s) {
            const size_t off = (size_t)(s / b->block) * (size_t)b->m * B + (size_t)(s % b->block);
            if (memcmp(&ur[off], ur, sizeof(double)) != 0 || memcmp(&lr[off], lr, sizeof(double)) != 0)
                return 0;
        }
    }
    return 1;
}

/* Copies one array between the host's global layout and every part. */
static hb_status_t transfer(hb_cuda_batch_t *b, double *host, double *const *device_arrays,
                            size_t part_stride_bytes, int to_device)
{
    for (int k = 0; k < b->parts; ++k) {
        part_t *p = &b->part[k];
        double *dev = *(double *const *)((const char *)device_arrays + k * part_stride_bytes);
        cudaStream_t stream = b->ctx->stream[p->device];
        CUDA_CHECK(cudaSetDevice(b->ctx->id[p->device]));
        if (b->layout == HB_LAYOUT_INTERLEAVED) {
            /* Part k is columns [s0, s0 + count) of the host's m x count matrix. */
            const size_t width = (size_t)p->count * sizeof(double);
            const size_t pitch = (size_t)b->count * sizeof(double);
            if (to_device)
                CUDA_CHECK(cudaMemcpy2DAsync(dev, width, host + p->s0, pitch, width, (size_t)b->m,
                                             cudaMemcpyHostToDevice, stream));
            else
                CUDA_CHECK(cudaMemcpy2DAsync(host + p->s0, pitch, dev, width, width, (size_t)b->m,
                                             cudaMemcpyDeviceToHost, stream));
        } else {
            /* FLAT and BLOCK parts are contiguous runs of the host array. */
            const size_t offset = (size_t)p->s0 * (size_t)b->m;
            if (to_device)
                CUDA_CHECK(cudaMemcpyAsync(dev, host + offset, p->size * sizeof(double),
                                           cudaMemcpyHostToDevice, stream));
            else
                CUDA_CHECK(cudaMemcpyAsync(host + offset, dev, p->size * sizeof(double),
                                           cudaMemcpyDeviceToHost, stream));
        }
    }
    for (int k = 0; k < b->parts; ++k) {
        CUDA_CHECK(cudaSetDevice(b->ctx->id[b->part[k].device]));
        CUDA_CHECK(cudaStreamSynchronize(b->ctx->stream[b->part[k].device]));
    }
    return HB_SUCCESS;
}

#define PART_ARRAY(b, field) (&(b)->part[0].field), sizeof(part_t)

extern "C" hb_status_t hb_cuda_batch_upload(hb_cuda_batch_t *b, const double *u, const double *l,
                                            const double *d, const double *rhs)
{
    hb_status_t status = HB_SUCCESS;
    if (u && status == HB_SUCCESS) status = transfer(b, (double *)u, PART_ARRAY(b, u), 1);
    if (l && status == HB_SUCCESS) status = transfer(b, (double *)l, PART_ARRAY(b, l), 1);
    if (u && l && status == HB_SUCCESS) {
        const int uniform = coefficients_uniform(b, u, l);
        double *cu = (double *)malloc((size_t)b->m * 2 * sizeof(double));
        if (!cu) return hb_fail(HB_ERR_ALLOC, "out of memory");
        for (int i = 0; i < b->m; ++i) { /* system 0's rows */
            cu[i] = u[(size_t)i * (size_t)b->block];
            cu[b->m + i] = l[(size_t)i * (size_t)b->block];
        }
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            part_t *p = &b->part[k];
            p->uniform = uniform;
            cudaError_t e = cudaSetDevice(b->ctx->id[p->device]);
            if (e == cudaSuccess)
                e = cudaMemcpy(p->cu, cu, (size_t)b->m * sizeof(double), cudaMemcpyHostToDevice);
            if (e == cudaSuccess)
                e = cudaMemcpy(p->cl, cu + b->m, (size_t)b->m * sizeof(double),
                               cudaMemcpyHostToDevice);
            if (e != cudaSuccess) status = hb_fail(HB_ERR_BACKEND, "CUDA: %s", cudaGetErrorString(e));
        }
        free(cu);
    } else if (u || l) {
        for (int k = 0; k < b->parts; ++k) b->part[k].uniform = 0;
    }
    if (d && status == HB_SUCCESS) status = transfer(b, (double *)d, PART_ARRAY(b, d), 1);
    if (rhs && status == HB_SUCCESS) status = transfer(b, (double *)rhs, PART_ARRAY(b, rhs), 1);
    return status;
}

extern "C" hb_status_t hb_cuda_batch_download(hb_cuda_batch_t *b, double *u, double *l, double *d,
                                              double *rhs)
{
    hb_status_t status = HB_SUCCESS;
    if (u && status == HB_SUCCESS) status = transfer(b, u, PART_ARRAY(b, u), 0);
    if (l && status == HB_SUCCESS) status = transfer(b, l, PART_ARRAY(b, l), 0);
    if (d && status == HB_SUCCESS) status = transfer(b, d, PART_ARRAY(b, d), 0);
    if (rhs && status == HB_SUCCESS) status = transfer(b, rhs, PART_ARRAY(b, rhs), 0);
    return status;
}

static hb_status_t check_algo(const hb_cuda_batch_t *b, hb_hines_algo_t algo)
{
    for (int k = 0; k < b->parts; ++k) {
        const char *why = unsupported(b, &b->part[k], algo);
        if (why)
            return hb_fail(HB_ERR_NOT_SUPPORTED, "%s (m = %d, %d systems, layout %s, block %d)",
                           why, b->m, b->part[k].count, hb_layout_name(b->layout), b->block);
    }
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_batch_solve(hb_cuda_batch_t *b, hb_hines_algo_t algo)
{
    algo = hb_cuda_batch_resolve(b, algo);
    hb_status_t status = check_algo(b, algo);
    if (status != HB_SUCCESS) return status;
    for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
        CUDA_CHECK(cudaSetDevice(b->ctx->id[b->part[k].device]));
        status = launch(b, &b->part[k], algo);
    }
    for (int k = 0; k < b->parts; ++k) {
        CUDA_CHECK(cudaSetDevice(b->ctx->id[b->part[k].device]));
        CUDA_CHECK(cudaStreamSynchronize(b->ctx->stream[b->part[k].device]));
    }
    return status;
}

static hb_status_t copy_parts(hb_cuda_batch_t *dst, const hb_cuda_batch_t *src, int all_arrays)
{
    for (int k = 0; k < dst->parts; ++k) {
        part_t *p = &dst->part[k];
        const part_t *q = &src->part[k];
        cudaStream_t stream = dst->ctx->stream[p->device];
        const size_t bytes = p->size * sizeof(double);
        CUDA_CHECK(cudaSetDevice(dst->ctx->id[p->device]));
        if (all_arrays) {
            const size_t mb = (size_t)dst->m * sizeof(double);
            CUDA_CHECK(cudaMemcpyAsync(p->u, q->u, bytes, cudaMemcpyDeviceToDevice, stream));
            CUDA_CHECK(cudaMemcpyAsync(p->l, q->l, bytes, cudaMemcpyDeviceToDevice, stream));
            CUDA_CHECK(cudaMemcpyAsync(p->cu, q->cu, mb, cudaMemcpyDeviceToDevice, stream));
            CUDA_CHECK(cudaMemcpyAsync(p->cl, q->cl, mb, cudaMemcpyDeviceToDevice, stream));
            p->uniform = q->uniform;
        }
        CUDA_CHECK(cudaMemcpyAsync(p->d, q->d, bytes, cudaMemcpyDeviceToDevice, stream));
        CUDA_CHECK(cudaMemcpyAsync(p->rhs, q->rhs, bytes, cudaMemcpyDeviceToDevice, stream));
    }
    return HB_SUCCESS;
}

static hb_status_t same_shape(const hb_cuda_batch_t *a, const hb_cuda_batch_t *b)
{
    if (a->ctx != b->ctx || a->m != b->m || a->count != b->count || a->layout != b->layout ||
        a->block != b->block || a->parts != b->parts)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "CUDA batches differ in context, shape or layout; expected the same");
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_batch_copy(hb_cuda_batch_t *dst, const hb_cuda_batch_t *src)
{
    hb_status_t status = same_shape(dst, src);
    if (status == HB_SUCCESS) status = copy_parts(dst, src, 1);
    for (int k = 0; k < dst->parts && status == HB_SUCCESS; ++k) {
        CUDA_CHECK(cudaSetDevice(dst->ctx->id[dst->part[k].device]));
        CUDA_CHECK(cudaStreamSynchronize(dst->ctx->stream[dst->part[k].device]));
    }
    return status;
}

extern "C" hb_status_t hb_cuda_batch_benchmark(hb_cuda_batch_t *b, const hb_cuda_batch_t *src,
                                               hb_hines_algo_t algo, int repeats, double *seconds)
{
    hb_status_t status = same_shape(b, src);
    if (status != HB_SUCCESS) return status;
    algo = hb_cuda_batch_resolve(b, algo);
    if ((status = check_algo(b, algo)) != HB_SUCCESS) return status;
    /* Events on every device; a solve's time is the slowest device's. */
    cudaEvent_t start[HB_CUDA_MAX_DEVICES] = {0}, stop[HB_CUDA_MAX_DEVICES] = {0};
    for (int k = 0; k < b->parts; ++k) {
        CUDA_TRY(status, cudaSetDevice(b->ctx->id[b->part[k].device]), done);
        CUDA_TRY(status, cudaEventCreate(&start[k]), done);
        CUDA_TRY(status, cudaEventCreate(&stop[k]), done);
    }
    for (int r = -1; r < repeats && status == HB_SUCCESS; ++r) { /* one warm-up */
        if ((status = copy_parts(b, src, 0)) != HB_SUCCESS) break;
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            part_t *p = &b->part[k];
            CUDA_TRY(status, cudaSetDevice(b->ctx->id[p->device]), done);
            CUDA_TRY(status, cudaEventRecord(start[k], b->ctx->stream[p->device]), done);
            status = launch(b, p, algo);
            CUDA_TRY(status, cudaEventRecord(stop[k], b->ctx->stream[p->device]), done);
        }
        double worst = 0.0;
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            float ms = 0;
            CUDA_TRY(status, cudaSetDevice(b->ctx->id[b->part[k].device]), done);
            CUDA_TRY(status, cudaEventSynchronize(stop[k]), done);
            CUDA_TRY(status, cudaEventElapsedTime(&ms, start[k], stop[k]), done);
            if (ms * 1e-3 > worst) worst = ms * 1e-3;
        }
        if (r >= 0) seconds[r] = worst;
    }
done:
    for (int k = 0; k < b->parts; ++k) {
        cudaSetDevice(b->ctx->id[b->part[k].device]);
        if (start[k]) cudaEventDestroy(start[k]);
        if (stop[k]) cudaEventDestroy(stop[k]);
    }
    return status;
}
