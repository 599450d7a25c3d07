#include "core/context.h"

#include <stdlib.h>

#include "common/status.h"
#include "core/bench.h"
#include "registry/registry.h"

int hb_version(void)
{
    return HB_VERSION;
}

static int backend_valid(hb_backend_t backend)
{
    return (int)backend >= HB_BACKEND_SEQ && backend <= HB_BACKEND_BEST;
}

const char *hb_backend_name(hb_backend_t backend)
{
    static const char *const names[] = {"seq", "omp", "cuda", "best"};
    return backend_valid(backend) ? names[backend] : "unknown";
}

int hb_backend_available(hb_backend_t backend)
{
    return backend_valid(backend) && hb_registry_available(backend);
}

/* What contexts start with (hb_set_default_tuning): the rules unless a driver set it. */
static hb_tuning_t default_tuning;
static int default_tuning_set;

hb_status_t hb_set_default_tuning(const char *spec)
{
    hb_tuning_t t;
    const hb_status_t status = hb_tuning_parse(spec, &t);
    if (status == HB_SUCCESS) {
        default_tuning = t;
        default_tuning_set = 1;
    }
    return status;
}

static hb_backend_t resolve_best(void)
{
    if (hb_backend_available(HB_BACKEND_CUDA)) return HB_BACKEND_CUDA;
    if (hb_backend_available(HB_BACKEND_OMP)) return HB_BACKEND_OMP;
    return HB_BACKEND_SEQ;
}

hb_status_t hb_context_create(hb_backend_t backend, hb_context_t **ctx)
{
    hb_clear_error();
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "hb_context_create: ctx is NULL");
    *ctx = NULL;
    if (!backend_valid(backend))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "hb_context_create: backend = %d is not an hb_backend_t", (int)backend);
    if (backend == HB_BACKEND_BEST) backend = resolve_best();
    const hb_backend_ops_t *ops = hb_registry_ops(backend);
    if (!ops)
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "hb_context_create: backend '%s' is not available (%s)",
                       hb_backend_name(backend),
                       backend == HB_BACKEND_CUDA
                           ? "built without CUDA or no CUDA device found"
                           : "built without OpenMP");
    struct hb_context *c = calloc(1, sizeof *c);
    if (!c) return hb_fail(HB_ERR_ALLOC, "hb_context_create: out of memory");
    c->backend = backend;
    c->ops = ops;
    if (default_tuning_set) c->tuning = default_tuning;
    else hb_tuning_default(&c->tuning);
    hb_status_t status = ops->device->context_create(&c->device);
    if (status != HB_SUCCESS) {
        free(c);
        return status;
    }
    *ctx = c;
    return HB_SUCCESS;
}

hb_status_t hb_context_destroy(hb_context_t *ctx)
{
    /* No hb_clear_error: a destroy cannot fail, and it runs on failure paths (a create
     * that fails half-way), whose message must survive it. */
    if (!ctx) return HB_SUCCESS;
    ctx->ops->device->context_destroy(ctx->device);
    free(ctx);
    return HB_SUCCESS;
}

hb_backend_t hb_context_backend(const hb_context_t *ctx)
{
    return ctx ? ctx->backend : (hb_backend_t)-1;
}

hb_status_t hb_context_set_threads(hb_context_t *ctx, int threads)
{
    hb_clear_error();
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "hb_context_set_threads: ctx is NULL");
    if (threads < 0 || threads > HB_MAX_THREADS)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "hb_context_set_threads: threads = %d; expected 0..%d (0 = OpenMP "
                       "default; %d is the cap)",
                       threads, HB_MAX_THREADS, HB_MAX_THREADS);
    ctx->threads = threads;
    return HB_SUCCESS;
}

/* The threads a solve will use: the set count, else OpenMP's default (1 for SEQ). */
int hb_context_threads(const hb_context_t *ctx)
{
    if (!ctx) return -1;
    if (ctx->backend != HB_BACKEND_OMP) return 1;
    if (ctx->threads == 0) return ctx->ops->device->default_threads();
    return ctx->threads;
}

int hb_context_devices(const hb_context_t *ctx)
{
    return ctx ? ctx->ops->device->devices(ctx->device) : 0;
}

const char *hb_context_device_name(const hb_context_t *ctx)
{
    return ctx ? ctx->ops->device->device_name(ctx->device) : "cpu";
}

hb_status_t hb_context_copy_bandwidth(hb_context_t *ctx, size_t bytes, int repeats,
                                      double *bytes_per_second)
{
    static const char fn[] = "hb_context_copy_bandwidth";
    hb_clear_error();
    if (!ctx || !bytes_per_second) return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", fn);
    if (bytes < 1024 || repeats < 1 || repeats > 1000)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %zu bytes, %d repeats; expected >= 1024 bytes "
                       "and 1..1000 repeats", fn, bytes, repeats);
    return ctx->ops->device->copy_bandwidth(ctx->device, bytes, repeats, bytes_per_second);
}

/* ---- memory of the context's backend ---- */

hb_status_t hb_device_malloc(hb_context_t *ctx, size_t bytes, void **ptr)
{
    static const char fn[] = "hb_device_malloc";
    hb_clear_error();
    if (!ctx || !ptr) return hb_fail(HB_ERR_INVALID_VALUE, "%s: ctx and ptr must not be NULL", fn);
    *ptr = NULL;
    if (bytes == 0) return hb_fail(HB_ERR_INVALID_VALUE, "%s: bytes = 0", fn);
    return ctx->ops->device->alloc(ctx->device, bytes, ptr);
}

hb_status_t hb_device_free(hb_context_t *ctx, void *ptr)
{
    hb_clear_error();
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "hb_device_free: ctx is NULL");
    return ctx->ops->device->release(ctx->device, ptr);
}

static hb_status_t copy(const char *fn, hb_context_t *ctx, void *dst, const void *src,
                        size_t bytes, int to_device)
{
    hb_clear_error();
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "%s: ctx is NULL", fn);
    if (bytes == 0) return HB_SUCCESS;
    if (!dst || !src) return hb_fail(HB_ERR_INVALID_VALUE, "%s: dst and src must not be NULL", fn);
    return ctx->ops->device->copy(ctx->device, dst, src, bytes, to_device);
}

hb_status_t hb_memcpy_to_device(hb_context_t *ctx, void *dst, const void *src, size_t bytes)
{
    return copy("hb_memcpy_to_device", ctx, dst, src, bytes, 1);
}

hb_status_t hb_memcpy_from_device(hb_context_t *ctx, void *dst, const void *src, size_t bytes)
{
    return copy("hb_memcpy_from_device", ctx, dst, src, bytes, 0);
}
