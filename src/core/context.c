#include "context.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

#include <stdlib.h>

#include "status.h"

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

hb_status_t hb_context_create(hb_context_t *ctx, hb_backend_t backend)
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
    /* CUDA hook: device selection and stream creation go here (c->device). */
    *ctx = c;
    return HB_SUCCESS;
}

hb_status_t hb_context_destroy(hb_context_t ctx)
{
    hb_clear_error();
    /* CUDA hook: release ctx->device here. */
    free(ctx);
    return HB_SUCCESS;
}

hb_backend_t hb_context_backend(const hb_context_t ctx)
{
    return ctx ? ctx->backend : (hb_backend_t)-1;
}

hb_status_t hb_context_set_threads(hb_context_t ctx, int threads)
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
int hb_context_threads(const hb_context_t ctx)
{
    if (!ctx) return -1;
    if (ctx->backend != HB_BACKEND_OMP) return 1;
#ifdef HB_HAVE_OPENMP
    if (ctx->threads == 0) return omp_get_max_threads();
#endif
    return ctx->threads;
}
