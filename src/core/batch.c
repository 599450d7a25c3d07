#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Same-morphology batches (hb_batch_*): the host copy here, the backend's own copy (its state,
 * e.g. on the devices) through ctx->ops->hines (backend/hines_ops.h). */
#include "backend/hines_ops.h"
#include "common/layout.h"
#include "common/status.h"
#include "core/bench.h"
#include "core/context.h"
#include "core/hines.h"

/* Bits of a batch's arrays: held newer by the backend's state (device_newer) or by the
 * host copy (host_dirty). */
enum { NEWER_U = 1, NEWER_L = 2, NEWER_D = 4, NEWER_RHS = 8, NEWER_ALL = 15 };

/* The NEWER_* bits of the arrays given (not NULL). */
static int array_bits(const void *u, const void *l, const void *d, const void *rhs)
{
    return (u ? NEWER_U : 0) | (l ? NEWER_L : 0) | (d ? NEWER_D : 0) | (rhs ? NEWER_RHS : 0);
}

struct hb_batch {
    hb_context_t *ctx; /* borrowed: must outlive the batch */
    int m, count;
    hb_layout_t layout;
    int block;   /* systems per block B (common/layout.h): 1 FLAT, count INTERLEAVED */
    int *parent; /* copy, shared by all systems */
    double *u, *l, *d, *rhs; /* hb_layout_size elements each; the host copy */
    hb_hines_algo_t algo;
    const struct hb_hines_ops *ops; /* the context's backend */
    void *device;     /* the backend's state (CUDA: the device copy); NULL: the host copy */
    int host_dirty;   /* NEWER_* bits of host arrays changed since the last upload */
    int device_newer; /* NEWER_* bits of arrays changed in the backend's state */
};

/* The batch as the backend sees it. */
static hb_hines_host_t host_view(const struct hb_batch *b)
{
    const hb_hines_host_t h = {b->ctx, b->m, b->count, b->layout, b->block,
                               b->parent, b->u, b->l, b->d, b->rhs};
    return h;
}

/* Bring the host copy up to date. The host copy is a cache: reading a const batch may
 * refresh it, so the cast below never writes an object defined const. */
static hb_status_t sync_host(const struct hb_batch *cb)
{
    struct hb_batch *b = (struct hb_batch *)cb;
    if (b->device && b->device_newer) {
        const int newer = b->device_newer;
        hb_status_t status = b->ops->download(
            b->device, newer & NEWER_U ? b->u : NULL,
            newer & NEWER_L ? b->l : NULL, newer & NEWER_D ? b->d : NULL,
            newer & NEWER_RHS ? b->rhs : NULL);
        if (status != HB_SUCCESS) return status;
        b->device_newer = 0;
    }
    return HB_SUCCESS;
}

/* Bring the backend's state up to date (a const batch's state is a cache too). */
static hb_status_t sync_device(const struct hb_batch *cb)
{
    struct hb_batch *b = (struct hb_batch *)cb;
    if (b->device && b->host_dirty) {
        /* only the arrays that changed: a time loop that sets d and rhs does not move u, l
         * again (nor re-check whether all systems share them) */
        const int dirty = b->host_dirty;
        hb_status_t status = b->ops->upload(
            b->device, dirty & NEWER_U ? b->u : NULL,
            dirty & NEWER_L ? b->l : NULL, dirty & NEWER_D ? b->d : NULL,
            dirty & NEWER_RHS ? b->rhs : NULL);
        if (status != HB_SUCCESS) return status;
        b->host_dirty = 0;
    }
    return HB_SUCCESS;
}

hb_status_t hb_batch_create(hb_context_t *ctx, int m, const int *parent, int batch_count,
                            hb_layout_t layout, int block_size, hb_batch_t **batch)
{
    static const char fn[] = "hb_batch_create";
    hb_clear_error();
    if (!batch) return hb_fail(HB_ERR_INVALID_VALUE, "%s: batch is NULL", fn);
    *batch = NULL;
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "%s: ctx is NULL", fn);
    hb_status_t status = hb_check_batch(fn, m, parent, batch_count, layout, block_size);
    if (status != HB_SUCCESS) return status;

    const size_t size = hb_layout_size(layout, m, batch_count, block_size);
    struct hb_batch *b = calloc(1, sizeof *b);
    if (!b) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    b->ctx = ctx;
    b->m = m;
    b->count = batch_count;
    b->layout = layout;
    b->block = hb_layout_block(layout, batch_count, block_size);
    /* calloc checks size * sizeof for overflow and zero-fills: u = l = rhs = 0. */
    b->parent = calloc((size_t)m, sizeof *b->parent);
    b->u = calloc(size, sizeof *b->u);
    b->l = calloc(size, sizeof *b->l);
    b->d = calloc(size, sizeof *b->d);
    b->rhs = calloc(size, sizeof *b->rhs);
    if (!b->parent || !b->u || !b->l || !b->d || !b->rhs) {
        hb_batch_destroy(b);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %d systems of %d rows (%zu doubles "
                       "per array)", fn, batch_count, m, size);
    }
    memcpy(b->parent, parent, (size_t)m * sizeof *parent);
    b->ops = ctx->ops->hines;
    const hb_hines_host_t host = host_view(b);
    status = b->ops->create(&host, &ctx->tuning, &b->device);
    if (status != HB_SUCCESS) {
        hb_batch_destroy(b);
        return status;
    }
    if (b->device) b->host_dirty = NEWER_ALL;
    /* Padding systems complete the last block as identity rows: d = 1. */
    const int used = batch_count % b->block;
    if (used) {
        const size_t last = (size_t)(batch_count / b->block) * (size_t)m * (size_t)b->block;
        for (int i = 0; i < m; ++i)
            for (int k = used; k < b->block; ++k)
                b->d[last + (size_t)i * (size_t)b->block + (size_t)k] = 1.0;
    }
    *batch = b;
    return HB_SUCCESS;
}

hb_status_t hb_batch_destroy(hb_batch_t *batch)
{
    /* No hb_clear_error: a destroy cannot fail, and it runs on failure paths (a create
     * that fails half-way), whose message must survive it. */
    if (!batch) return HB_SUCCESS;
    if (batch->device) batch->ops->destroy(batch->device);
    free(batch->parent);
    free(batch->u);
    free(batch->l);
    free(batch->d);
    free(batch->rhs);
    free(batch);
    return HB_SUCCESS;
}

int hb_batch_rows(const hb_batch_t *batch) { return batch ? batch->m : 0; }
int hb_batch_count(const hb_batch_t *batch) { return batch ? batch->count : 0; }
hb_layout_t hb_batch_layout(const hb_batch_t *batch)
{
    return batch ? batch->layout : (hb_layout_t)-1;
}
int hb_batch_block_size(const hb_batch_t *batch) { return batch ? batch->block : 0; }

static hb_status_t check_system(const char *fn, const struct hb_batch *batch, int system)
{
    if (!batch) return hb_fail(HB_ERR_INVALID_VALUE, "%s: batch is NULL", fn);
    if (system < 0 || system >= batch->count)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: system = %d; expected 0 <= system < %d", fn,
                       system, batch->count);
    return HB_SUCCESS;
}

/* Copy m rows; a system's rows are B apart in a batch, 1 apart in natural order. */
static void copy_rows(int m, const double *from, size_t from_stride, double *to, size_t to_stride)
{
    if (!from || !to) return; /* NULL: the caller skips this array */
    for (int i = 0; i < m; ++i) to[(size_t)i * to_stride] = from[(size_t)i * from_stride];
}

static void scatter(const struct hb_batch *b, int system, const double *from, double *to)
{
    copy_rows(b->m, from, 1, to + hb_block_base(b->m, b->block, system), (size_t)b->block);
}

static void gather(const struct hb_batch *b, int system, const double *from, double *to)
{
    copy_rows(b->m, from + hb_block_base(b->m, b->block, system), (size_t)b->block, to, 1);
}

hb_status_t hb_batch_set(hb_batch_t *batch, int system, const double *u, const double *l,
                         const double *d, const double *rhs)
{
    hb_clear_error();
    hb_status_t status = check_system("hb_batch_set", batch, system);
    if (status == HB_SUCCESS) status = sync_host(batch);
    if (status != HB_SUCCESS) return status;
    batch->host_dirty |= array_bits(u, l, d, rhs);
    scatter(batch, system, u, batch->u);
    scatter(batch, system, l, batch->l);
    scatter(batch, system, d, batch->d);
    scatter(batch, system, rhs, batch->rhs);
    return HB_SUCCESS;
}

hb_status_t hb_batch_get(const hb_batch_t *batch, int system, double *u, double *l, double *d,
                         double *rhs)
{
    hb_clear_error();
    hb_status_t status = check_system("hb_batch_get", batch, system);
    if (status == HB_SUCCESS) status = sync_host(batch);
    if (status != HB_SUCCESS) return status;
    gather(batch, system, batch->u, u);
    gather(batch, system, batch->l, l);
    gather(batch, system, batch->d, d);
    gather(batch, system, batch->rhs, rhs);
    return HB_SUCCESS;
}

hb_status_t hb_batch_solve(hb_batch_t *batch)
{
    hb_clear_error();
    if (!batch) return hb_fail(HB_ERR_INVALID_VALUE, "hb_batch_solve: batch is NULL");
    hb_status_t status = sync_device(batch);
    const hb_hines_host_t host = host_view(batch);
    if (status == HB_SUCCESS) status = batch->ops->solve(&host, batch->device, batch->algo);
    if (batch->device) batch->device_newer |= NEWER_D | NEWER_RHS;
    return status;
}

static void convert_array(const struct hb_batch *src, const double *from,
                          const struct hb_batch *dst, double *to)
{
    for (int s = 0; s < src->count; ++s)
        copy_rows(src->m, from + hb_block_base(src->m, src->block, s), (size_t)src->block,
                  to + hb_block_base(dst->m, dst->block, s), (size_t)dst->block);
}

hb_status_t hb_batch_convert(const hb_batch_t *src, hb_batch_t *dst)
{
    static const char fn[] = "hb_batch_convert";
    hb_clear_error();
    if (!src || !dst) return hb_fail(HB_ERR_INVALID_VALUE, "%s: src and dst must not be NULL", fn);
    if (src->m != dst->m)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: src has %d rows, dst %d", fn, src->m, dst->m);
    if (src->count != dst->count)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: src has %d systems, dst %d", fn, src->count,
                       dst->count);
    for (int i = 0; i < src->m; ++i)
        if (src->parent[i] != dst->parent[i])
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: parent[%d] is %d in src but %d in dst", fn,
                           i, src->parent[i], dst->parent[i]);
    if (src == dst) return HB_SUCCESS;
    hb_status_t status;
    if (src->device && dst->device && src->ctx == dst->ctx && src->layout == dst->layout &&
        src->block == dst->block) {
        if ((status = sync_device(src)) != HB_SUCCESS) return status;
        status = dst->ops->copy(dst->device, src->device);
        dst->host_dirty = 0;
        dst->device_newer = NEWER_ALL;
        return status;
    }
    /* Every real system of dst is overwritten; its padding is identity already. */
    if ((status = sync_host(src)) != HB_SUCCESS) return status;
    dst->device_newer = 0;
    dst->host_dirty = NEWER_ALL;
    convert_array(src, src->u, dst, dst->u);
    convert_array(src, src->l, dst, dst->l);
    convert_array(src, src->d, dst, dst->d);
    convert_array(src, src->rhs, dst, dst->rhs);
    return HB_SUCCESS;
}

hb_status_t hb_batch_arrays(hb_batch_t *batch, double **u, double **l, double **d, double **rhs)
{
    hb_clear_error();
    if (!batch) return hb_fail(HB_ERR_INVALID_VALUE, "hb_batch_arrays: batch is NULL");
    hb_status_t status = sync_host(batch);
    if (status != HB_SUCCESS) return status;
    /* the caller may write the arrays it asked for */
    batch->host_dirty |= array_bits(u, l, d, rhs);
    if (u) *u = batch->u;
    if (l) *l = batch->l;
    if (d) *d = batch->d;
    if (rhs) *rhs = batch->rhs;
    return HB_SUCCESS;
}

const char *hb_hines_algo_name(hb_hines_algo_t algo)
{
    static const char *const names[] = {"auto", "per-thread", "block-shared", "staged",
                                        "streamed",  "pipelined", "branched"};
    return (int)algo >= 0 && algo <= HB_HINES_ALGO_BRANCHED ? names[algo] : "unknown";
}

hb_status_t hb_batch_set_algorithm(hb_batch_t *batch, hb_hines_algo_t algo)
{
    hb_clear_error();
    if (!batch) return hb_fail(HB_ERR_INVALID_VALUE, "hb_batch_set_algorithm: batch is NULL");
    if ((int)algo < 0 || algo > HB_HINES_ALGO_BRANCHED)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "hb_batch_set_algorithm: algo = %d is not an hb_hines_algo_t", (int)algo);
    batch->algo = algo;
    return HB_SUCCESS;
}

hb_hines_algo_t hb_batch_algorithm(const hb_batch_t *batch)
{
    return batch ? batch->algo : HB_HINES_ALGO_AUTO;
}

hb_hines_algo_t hb_batch_resolved_algorithm(const hb_batch_t *batch)
{
    if (!batch) return HB_HINES_ALGO_PER_THREAD;
    return batch->ops->resolve(batch->device, batch->algo);
}

hb_status_t hb_batch_benchmark(hb_batch_t *batch, const hb_batch_t *source, int repeats,
                               double *seconds)
{
    static const char fn[] = "hb_batch_benchmark";
    hb_clear_error();
    if (!batch || !source || !seconds)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", fn);
    if (repeats < 1) return hb_fail(HB_ERR_INVALID_VALUE, "%s: repeats = %d; expected >= 1", fn, repeats);
    if (batch == source || batch->ctx != source->ctx || batch->m != source->m ||
        batch->count != source->count || batch->layout != source->layout ||
        batch->block != source->block)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: source must be another batch of the same context, shape and layout", fn);
    hb_status_t status;
    if ((status = sync_device(batch)) != HB_SUCCESS || (status = sync_device(source)) != HB_SUCCESS)
        return status;
    const hb_hines_host_t host = host_view(batch), from = host_view(source);
    status = batch->ops->benchmark(&host, batch->device, &from, source->device, batch->algo,
                                   repeats, seconds);
    if (batch->device) batch->device_newer |= NEWER_D | NEWER_RHS;
    return status;
}
