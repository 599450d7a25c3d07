/* The CPU backend's device (backend/backend.h): host memory, OpenMP threads, memcpy bandwidth. */
#include <stdlib.h>
#include <string.h>

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

#include "backend/backend.h"
#include "common/status.h"

static int cpu_available(void) { return 1; }

static hb_status_t cpu_context_create(void **state)
{
    *state = NULL;
    return HB_SUCCESS;
}

static void cpu_context_destroy(void *state) { (void)state; }

static int cpu_default_threads(void)
{
#ifdef HB_HAVE_OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

static int cpu_devices(const void *state)
{
    (void)state;
    return 0;
}

static const char *cpu_device_name(const void *state)
{
    (void)state;
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

static hb_status_t cpu_copy_bandwidth(void *state, size_t bytes, int repeats,
                                      double *bytes_per_second)
{
    static const char fn[] = "hb_context_copy_bandwidth";
    (void)state;
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

static hb_status_t cpu_alloc(void *state, size_t bytes, void **ptr)
{
    (void)state;
    *ptr = malloc(bytes);
    return *ptr ? HB_SUCCESS
                : hb_fail(HB_ERR_ALLOC, "hb_device_malloc: out of memory for %zu bytes", bytes);
}

static hb_status_t cpu_release(void *state, void *ptr)
{
    (void)state;
    free(ptr);
    return HB_SUCCESS;
}

static hb_status_t cpu_copy(void *state, void *dst, const void *src, size_t bytes, int to_device)
{
    (void)state;
    (void)to_device;
    memmove(dst, src, bytes);
    return HB_SUCCESS;
}

const hb_device_ops_t hb_cpu_device_ops = {
    .name = "cpu",
    .available = cpu_available,
    .context_create = cpu_context_create,
    .context_destroy = cpu_context_destroy,
    .default_threads = cpu_default_threads,
    .devices = cpu_devices,
    .device_name = cpu_device_name,
    .copy_bandwidth = cpu_copy_bandwidth,
    .alloc = cpu_alloc,
    .release = cpu_release,
    .copy = cpu_copy,
};
