#include "core/bench.h"
#include "context.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

#include <stdlib.h>
#include <string.h>

#include "status.h"

#ifdef HB_HAVE_CUDA
#include "cuda/backend_cuda.h"
#endif

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
    switch (backend) {
    case HB_BACKEND_SEQ:
    case HB_BACKEND_BEST: /* always resolves to something */
        return 1;
    case HB_BACKEND_OMP:
#ifdef HB_HAVE_OPENMP
        return 1;
#else
        return 0;
#endif
    case HB_BACKEND_CUDA:
#ifdef HB_HAVE_CUDA
        return hb_cuda_device_available();
#else
        return 0;
#endif
    }
    return 0;
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
    if (!hb_backend_available(backend))
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "hb_context_create: backend '%s' is not available (%s)",
                       hb_backend_name(backend),
                       backend == HB_BACKEND_CUDA
                           ? "built without CUDA or no CUDA device found"
                           : "built without OpenMP");
    struct hb_context *c = calloc(1, sizeof *c);
    if (!c) return hb_fail(HB_ERR_ALLOC, "hb_context_create: out of memory");
    c->backend = backend;
#ifdef HB_HAVE_CUDA
    if (backend == HB_BACKEND_CUDA) {
        hb_status_t status = hb_cuda_context_create((hb_cuda_context_t **)&c->device);
        if (status != HB_SUCCESS) {
            free(c);
            return status;
        }
    }
#endif
    *ctx = c;
    return HB_SUCCESS;
}

hb_status_t hb_context_destroy(hb_context_t *ctx)
{
    hb_clear_error();
#ifdef HB_HAVE_CUDA
    if (ctx) hb_cuda_context_destroy((hb_cuda_context_t *)ctx->device);
#endif
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
    if (threads < 0)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "hb_context_set_threads: threads = %d; expected >= 0 (0 = OpenMP default)",
                       threads);
    ctx->threads = threads;
    return HB_SUCCESS;
}

/* The threads a solve will use: the set count, else OpenMP's default (1 for SEQ). */
int hb_context_threads(const hb_context_t *ctx)
{
    if (!ctx) return -1;
    if (ctx->backend != HB_BACKEND_OMP) return 1;
#ifdef HB_HAVE_OPENMP
    if (ctx->threads == 0) return omp_get_max_threads();
#endif
    return ctx->threads;
}

int hb_context_devices(const hb_context_t *ctx)
{
#ifdef HB_HAVE_CUDA
    if (ctx && ctx->backend == HB_BACKEND_CUDA)
        return hb_cuda_context_devices((const hb_cuda_context_t *)ctx->device);
#endif
    (void)ctx;
    return 0;
}

const char *hb_context_device_name(const hb_context_t *ctx)
{
#ifdef HB_HAVE_CUDA
    if (ctx && ctx->backend == HB_BACKEND_CUDA)
        return hb_cuda_context_device_name((const hb_cuda_context_t *)ctx->device);
#endif
    (void)ctx;
    return "cpu";
}

/* Median of a few timings (sorted in place). */
static double median_of(double *t, int n)
{
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && t[j] < t[j - 1]; --j) {
            double x = t[j];
            t[j] = t[j - 1];
            t[j - 1] = x;
        }
    return n % 2 ? t[n / 2] : 0.5 * (t[n / 2 - 1] + t[n / 2]);
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
#ifdef HB_HAVE_CUDA
    if (ctx->backend == HB_BACKEND_CUDA)
        return hb_cuda_copy_bandwidth((hb_cuda_context_t *)ctx->device, bytes, repeats,
                                      bytes_per_second);
#endif
    char *a = malloc(bytes), *b = malloc(bytes);
    double *t = malloc((size_t)repeats * sizeof *t);
    if (!a || !b || !t) {
        free(a);
        free(b);
        free(t);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %zu bytes", fn, bytes);
    }
    memset(a, 0x3f, bytes);
    memset(b, 0, bytes);
    for (int k = -1; k < repeats; ++k) {
        double t0 = hb_clock_seconds();
        memcpy(b, a, bytes);
        double dt = hb_clock_seconds() - t0;
        if (k >= 0) t[k] = dt;
        a[k & 1023] ^= b[bytes - 1]; /* keep the copies observable */
    }
    *bytes_per_second = 2.0 * (double)bytes / median_of(t, repeats);
    free(a);
    free(b);
    free(t);
    return HB_SUCCESS;
}
