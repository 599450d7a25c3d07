/*
 * What the standalone CUDA probes of bench/profile share (interleaved_loads.cu,
 * two_pass_loads.cu, lookback_probe.cu): the error check, the median, the five fp64
 * buffers of a probe (a, b, c, d filled with the same non-zero bytes, x), the copy
 * bandwidth they are measured against, the timing of one launch after warm-ups, the
 * check x = 4 a, the common start of a probe's main, the residency of a kernel, and loads
 * with an L2 eviction policy.
 */
#ifndef HB_PROBE_COMMON_H
#define HB_PROBE_COMMON_H

#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                          \
    do {                                                                                     \
        cudaError_t err_ = (call);                                                           \
        if (err_ != cudaSuccess) {                                                           \
            fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(err_));    \
            exit(1);                                                                         \
        }                                                                                    \
    } while (0)

enum { PROBE_MAX_REPEATS = 64 };

static float probe_median(float *v, int n)
{
    for (int i = 1; i < n; ++i)
        for (int j = i; j > 0 && v[j - 1] > v[j]; --j) {
            float s = v[j];
            v[j] = v[j - 1];
            v[j - 1] = s;
        }
    return v[n / 2];
}

/* buf[0..3]: inputs, 0x3f3f... (about 4.4e-4, not zero); buf[4]: x */
static void probe_buffers(double *buf[5], size_t bytes)
{
    for (int i = 0; i < 5; ++i) {
        CHECK(cudaMalloc(&buf[i], bytes));
        CHECK(cudaMemset(buf[i], 0x3f, bytes));
    }
}

static void probe_free(double *buf[5])
{
    for (int i = 0; i < 5; ++i) CHECK(cudaFree(buf[i]));
}

/* Median time [ms] of `repeats` runs of launch(arg) after two warm-ups, CUDA events. */
static float probe_time(void (*launch)(void *), void *arg, int repeats)
{
    cudaEvent_t e0, e1;
    float times[PROBE_MAX_REPEATS];
    if (repeats > PROBE_MAX_REPEATS) repeats = PROBE_MAX_REPEATS;
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaEventCreate(&e1));
    for (int r = -2; r < repeats; ++r) {
        CHECK(cudaEventRecord(e0));
        launch(arg);
        CHECK(cudaGetLastError());
        CHECK(cudaEventRecord(e1));
        CHECK(cudaEventSynchronize(e1));
        if (r >= 0) CHECK(cudaEventElapsedTime(&times[r], e0, e1));
    }
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaEventDestroy(e1));
    return probe_median(times, repeats);
}

struct probe_copy {
    double *to;
    const double *from;
    size_t bytes;
};

static void probe_copy_launch(void *arg)
{
    const struct probe_copy *c = (const struct probe_copy *)arg;
    CHECK(cudaMemcpy(c->to, c->from, c->bytes, cudaMemcpyDeviceToDevice));
}

/* Device-to-device copy bandwidth [B/s], read + written, of `bytes` from `from`. */
static double probe_copy_bandwidth(const double *from, size_t bytes, int repeats)
{
    struct probe_copy c = {NULL, from, bytes};
    CHECK(cudaMalloc(&c.to, bytes));
    const double bw = 2.0 * bytes / (probe_time(probe_copy_launch, &c, repeats) * 1e-3);
    CHECK(cudaFree(c.to));
    return bw;
}

/* x = 4 a (the four inputs hold the same bytes) at x[at[0]] and x[at[1]]; x is cleared
 * after, so that the next configuration's check sees its own writes. */
static int probe_x_is_four_a(double *buf[5], const size_t at[2], size_t bytes)
{
    double probe[2], a0;
    for (int i = 0; i < 2; ++i)
        CHECK(cudaMemcpy(&probe[i], buf[4] + at[i], 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&a0, buf[0], 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemset(buf[4], 0, bytes));
    return probe[0] == 4 * a0 && probe[1] == 4 * a0;
}

/* count (argv[1], default 20,000) and repeats (argv[2], default 10); the five buffers of
 * m_max rows x count; returns the copy bandwidth [B/s] measured on them. */
static double probe_start(int argc, char **argv, int m_max, double *buf[5], int *count,
                          int *repeats)
{
    *count = argc > 1 ? atoi(argv[1]) : 20000;
    *repeats = argc > 2 ? atoi(argv[2]) : 10;
    const size_t bytes = (size_t)m_max * *count * sizeof(double);
    probe_buffers(buf, bytes);
    return probe_copy_bandwidth(buf[1], bytes, *repeats);
}

/* Blocks of `kernel` (at `threads`) that fit a multiprocessor, the multiprocessors, and the
 * kernel's attributes (registers, static shared memory). */
template <typename Kernel>
static void probe_residency(Kernel kernel, int threads, int *per_sm, int *sms,
                            cudaFuncAttributes *fa)
{
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, kernel, threads, 0));
    CHECK(cudaDeviceGetAttribute(sms, cudaDevAttrMultiProcessorCount, 0));
    CHECK(cudaFuncGetAttributes(fa, kernel));
}

static int probe_l2_mb(void)
{
    int l2 = 0;
    CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
    return l2 >> 20;
}

/* L2 policies for a line read twice: evict_last for the first read, evict_first for the
 * second. */
__device__ __forceinline__ void probe_l2_policies(unsigned long long *keep,
                                                  unsigned long long *drop)
{
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(*keep));
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(*drop));
}

/* A load with the L2 policy (hinted) or a plain one. */
__device__ __forceinline__ double probe_load(const double *p, unsigned long long policy,
                                             int hinted)
{
    double v;
    if (hinted)
        asm volatile("ld.global.L2::cache_hint.f64 %0, [%1], %2;" : "=d"(v) : "l"(p), "l"(policy));
    else
        asm volatile("ld.global.f64 %0, [%1];" : "=d"(v) : "l"(p));
    return v;
}

#endif
