/*
 * GPU test of the batched tridiagonal solvers (run on a machine with a CUDA
 * device; CI has none and runs the CPU twins in tests/test_tridiag.c and
 * tests/test_tridiag_plan.c).
 *
 * Every CUDA algorithm (thomas, partition, auto), layout (flat, interleaved),
 * precision, fixed and variable sizes (No-Computing- and Computing-Padding),
 * in place or not, against the CPU solver with the same algorithm
 * (the CPU partition solver is the kernel's arithmetic run thread by thread):
 * every element of x, padding included (NaN where it must stay untouched, 0
 * where CP writes it). Inputs are fresh random diagonally dominant systems
 * every run (seed printed); the device x is poisoned with NaN before every
 * solve; every library call's status is checked (the library checks every
 * CUDA return code and reports it as a status). Public API only.
 *
 * Then every partition kernel the tunings can select (hb_context_set_tuning, gtsv.*:
 * rows 8 / 16, loads 4 / 8 rows ahead, plain / L2-prefetch-hinted loads,
 * no / whole-chunk / rolling L2 prefetch instructions, flat 16-byte loads
 * and stores, 128 / 256 / 512-thread blocks), each against the CPU twin under
 * the same tuning (set on both contexts: the CPU partition then cuts the
 * same chunks), with the plan text checked; and persistent grids of staged plans
 * (blocks taking several tiles of systems in turn).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "common/tridiag_plan.h" /* hb_td_partition_smem: the plan's cluster limit */
#include "core/bench.h"
#include "hinesbatch.h"
#include "test_tridiag_common.h"
#include "test_random.h"


typedef struct {
    hb_gtsv_problem_t p; /* host pointers */
    size_t n, esize;
    void *dev[5];        /* dl, d, du, b, x on the device */
    int *dev_sizes;
} case_t;

/* The stride's excess over the count (interleaved) or m (flat): 0-2 at random, or this
 * where it is 0 or more (the pairs' cases need even strides, and one odd). */
static int stride_extra = -1;

/* Host arrays of one case; padding (rows >= sizes[s], layout gaps) NaN. */
static void make_case(case_t *c, int m, int count, int variable, hb_layout_t layout,
                      hb_precision_t prec)
{
    memset(c, 0, sizeof *c);
    const int extra = stride_extra >= 0 ? stride_extra : (int)(uniform() * 3.0);
    const int stride = (layout == HB_LAYOUT_INTERLEAVED ? count : m) + extra;
    c->esize = prec == HB_FLOAT32 ? sizeof(float) : sizeof(double);
    c->n = layout == HB_LAYOUT_INTERLEAVED ? (size_t)m * stride : (size_t)count * stride;
    int *sizes = variable ? xmalloc((size_t)count * sizeof(int)) : NULL;
    void *a[5];
    for (int k = 0; k < 5; ++k) {
        a[k] = xmalloc(c->n * c->esize);
        for (size_t e = 0; e < c->n; ++e) put(a[k], prec, e, NAN);
    }
    for (int s = 0; s < count; ++s) {
        const int n = variable ? 1 + (int)(uniform() * (m - 1e-9)) : m;
        if (sizes) sizes[s] = n;
        for (int i = 0; i < n; ++i) {
            const size_t e = layout == HB_LAYOUT_INTERLEAVED ? (size_t)i * stride + s
                                                             : (size_t)s * stride + i;
            const double dl = 2.0 * uniform() - 1.0, du = 2.0 * uniform() - 1.0;
            const double dom = fabs(dl) + fabs(du) + 0.05 + uniform();
            put(a[0], prec, e, dl);
            put(a[1], prec, e, uniform() < 0.5 ? -dom : dom);
            put(a[2], prec, e, du);
            put(a[3], prec, e, 20.0 * uniform() - 10.0);
        }
    }
    c->p = (hb_gtsv_problem_t){.precision = prec,
                               .m = m,
                               .sizes = sizes,
                               .dl = a[0],
                               .d = a[1],
                               .du = a[2],
                               .b = a[3],
                               .x = a[4],
                               .layout = layout,
                               .batch_count = count,
                               .batch_stride = stride};
}

static void free_case(case_t *c)
{
    free((void *)c->p.sizes);
    free((void *)c->p.dl);
    free((void *)c->p.d);
    free((void *)c->p.du);
    free((void *)c->p.b);
    free(c->p.x);
}

static int upload(hb_context_t *gpu, case_t *c)
{
    const void *host[5] = {c->p.dl, c->p.d, c->p.du, c->p.b, c->p.x};
    const size_t bytes = c->n * c->esize;
    for (int k = 0; k < 5; ++k) {
        hb_status_t st = hb_device_malloc(gpu, bytes, &c->dev[k]);
        CHECK_OK(st);
        if (st != HB_SUCCESS) return 0;
        CHECK_OK(st = hb_memcpy_to_device(gpu, c->dev[k], host[k], bytes));
        if (st != HB_SUCCESS) return 0;
    }
    if (c->p.sizes) {
        const size_t sb = (size_t)c->p.batch_count * sizeof(int);
        hb_status_t st = hb_device_malloc(gpu, sb, (void **)&c->dev_sizes);
        CHECK_OK(st);
        if (st != HB_SUCCESS) return 0;
        CHECK_OK(st = hb_memcpy_to_device(gpu, c->dev_sizes, c->p.sizes, sb));
        if (st != HB_SUCCESS) return 0;
    }
    return 1;
}

static void release(hb_context_t *gpu, case_t *c)
{
    for (int k = 0; k < 5; ++k)
        if (c->dev[k]) CHECK_OK(hb_device_free(gpu, c->dev[k]));
    if (c->dev_sizes) CHECK_OK(hb_device_free(gpu, c->dev_sizes));
}

/* The largest difference seen, [fp32][partition], printed at the end. */
static double worst_seen[2][2];

/* Every element: both NaN, or within tolerance (relative to 1 + |x|). fp64: 1e-12.
 * fp32: THOMAS computes in double on both sides, so x differs by the last
 * rounding to float (4e-7); PARTITION computes in float, and the GPU's fused
 * multiply-adds round differently from the CPU's separate operations (2e-5: the
 * systems' diagonal dominance margin goes down to 0.05; the largest difference
 * seen on the H100 was 6e-6).
 * Returns the count of mismatches. */
static size_t compare(const void *gpu_x, const void *cpu_x, hb_precision_t prec,
                      hb_gtsv_algo_t algo, size_t n, double *worst)
{
    const int is_float = prec == HB_FLOAT32, partition = algo == HB_GTSV_ALGO_PARTITION;
    const double tol = !is_float ? 1e-12 : partition ? 2e-5 : 4e-7;
    size_t bad = 0;
    *worst = 0.0;
    for (size_t e = 0; e < n; ++e) {
        const double g = get(gpu_x, prec, e), c = get(cpu_x, prec, e);
        if (isnan(c) || isnan(g)) {
            bad += isnan(c) != isnan(g);
            continue;
        }
        const double err = fabs(g - c) / (1.0 + fabs(c));
        if (err > *worst) *worst = err;
        bad += !(err <= tol);
    }
    if (*worst > worst_seen[is_float][partition]) worst_seen[is_float][partition] = *worst;
    return bad;
}

static void run_case(hb_context_t *gpu, hb_context_t *cpu, int m, int count, int variable,
                     hb_layout_t layout, hb_precision_t prec)
{
    case_t c;
    make_case(&c, m, count, variable, layout, prec);
    const size_t bytes = c.n * c.esize;
    void *cpu_x = xmalloc(bytes), *gpu_x = xmalloc(bytes), *poison = xmalloc(bytes);
    for (size_t e = 0; e < c.n; ++e) put(poison, prec, e, NAN);
    if (!upload(gpu, &c)) goto done;
    static const hb_gtsv_algo_t algos[] = {HB_GTSV_ALGO_AUTO, HB_GTSV_ALGO_THOMAS,
                                           HB_GTSV_ALGO_PARTITION};
    for (int ai = 0; ai < 3; ++ai)
        for (int cp = 0; cp <= variable; ++cp)
            for (int in_place = 0; in_place <= 1; ++in_place) {
                const hb_gtsv_algo_t algo = algos[ai];
                const unsigned flags = (cp ? HB_GTSV_PAD_COMPUTE : 0) |
                                       (in_place ? HB_GTSV_IN_PLACE : 0);
                /* CPU: the same algorithm (AUTO resolved as on the GPU). */
                hb_gtsv_problem_t dp = c.p;
                dp.algo = algo;
                dp.flags = flags & ~HB_GTSV_IN_PLACE;
                dp.sizes = c.dev_sizes;
                dp.dl = c.dev[0];
                dp.d = c.dev[1];
                dp.du = c.dev[2];
                dp.b = c.dev[3];
                dp.x = c.dev[4];
                hb_gtsv_algo_t resolved;
                hb_status_t st = hb_gtsv_resolve(gpu, &dp, &resolved);
                if (m > 8192 && algo == HB_GTSV_ALGO_PARTITION) {
                    CHECK(st == HB_ERR_NOT_SUPPORTED);
                    continue;
                }
                CHECK_OK(st);
                hb_gtsv_problem_t hp = c.p;
                hp.algo = resolved;
                hp.flags = flags & ~HB_GTSV_IN_PLACE;
                memcpy(hp.x, poison, bytes);
                CHECK_OK(hb_gtsv_solve(cpu, &hp));
                memcpy(cpu_x, hp.x, bytes);
                /* GPU: fresh poison in x (or a copy of b, poisoned padding, in place). */
                if (in_place) {
                    dp.flags |= HB_GTSV_IN_PLACE;
                    dp.x = c.dev[3];
                    CHECK_OK(hb_memcpy_to_device(gpu, c.dev[3], c.p.b, bytes));
                    /* b's padding is NaN already; CP writes 0 there as into x. */
                } else {
                    CHECK_OK(hb_memcpy_to_device(gpu, c.dev[4], poison, bytes));
                }
                size_t need = 0;
                void *buffer = NULL;
                CHECK_OK(hb_gtsv_buffer_size(gpu, &dp, &need));
                if (need) CHECK_OK(hb_device_malloc(gpu, need, &buffer));
                dp.buffer = buffer;
                CHECK_OK(hb_gtsv_solve(gpu, &dp));
                CHECK_OK(hb_memcpy_from_device(gpu, gpu_x, dp.x, bytes));
                if (buffer) CHECK_OK(hb_device_free(gpu, buffer));
                /* In place the untouched padding of x is b's padding: NaN as well. */
                double worst;
                const size_t bad = compare(gpu_x, cpu_x, prec, resolved, c.n, &worst);
                CHECKF(bad == 0,
                       "m=%d count=%d %s %s %s %s%s: %zu of %zu elements differ (worst %.3g)", m,
                       count, hb_layout_name(layout), prec == HB_FLOAT32 ? "float" : "double",
                       hb_gtsv_algo_name(resolved), variable ? (cp ? "CP" : "NCP") : "fixed",
                       in_place ? " in-place" : "", bad, c.n, worst);
                if (in_place) /* restore b for the next variant */
                    CHECK_OK(hb_memcpy_to_device(gpu, c.dev[3], c.p.b, bytes));
            }
    /* Inputs on the device are unchanged. */
    {
        const void *host[4] = {c.p.dl, c.p.d, c.p.du, c.p.b};
        for (int k = 0; k < 4; ++k) {
            CHECK_OK(hb_memcpy_from_device(gpu, gpu_x, c.dev[k], bytes));
            CHECK(memcmp(gpu_x, host[k], bytes) == 0);
        }
    }
done:
    release(gpu, &c);
    free(cpu_x);
    free(gpu_x);
    free(poison);
    free_case(&c);
}

/* run_case for m x count in every combination: fixed and variable sizes, flat and
 * interleaved, fp64 and fp32. */
static void run_cases(hb_context_t *gpu, hb_context_t *cpu, int m, int count)
{
    for (int variable = 0; variable <= 1; ++variable)
        for (int layout = 0; layout <= 1; ++layout)
            for (int prec = 0; prec <= 1; ++prec)
                run_case(gpu, cpu, m, count, variable,
                         layout ? HB_LAYOUT_INTERLEAVED : HB_LAYOUT_FLAT,
                         prec ? HB_FLOAT32 : HB_FLOAT64);
}

/* The plan text of an interleaved partition solve of m x count on the GPU. */
static void describe_interleaved(hb_context_t *gpu, hb_precision_t prec, int m, int count,
                                 char *plan, size_t size)
{
    const hb_gtsv_problem_t probe = {.precision = prec,
                                     .algo = HB_GTSV_ALGO_PARTITION,
                                     .m = m,
                                     .layout = HB_LAYOUT_INTERLEAVED,
                                     .batch_count = count,
                                     .batch_stride = count};
    CHECK_OK(hb_gtsv_describe(gpu, &probe, plan, size));
}

/* The two contexts every case runs on: the GPU and its CPU twin. */
static hb_context_t *gpu_ctx, *cpu_ctx;

/* Sets the tuning of the cases that follow on both contexts (the CPU twin then cuts the
 * same chunks), and says so. */
static void use_tuning(const char *spec)
{
    CHECK_OK(hb_context_set_tuning(gpu_ctx, spec));
    CHECK_OK(hb_context_set_tuning(cpu_ctx, spec));
    printf("tuning %s\n", spec);
}

/* The interleaved partition plan of m x count under `tuning` names `want`, and `also`
 * where given. */
static void expect_plan(hb_context_t *gpu, hb_precision_t prec, int m, int count,
                        const char *tuning, const char *want, const char *also)
{
    char plan[192];
    describe_interleaved(gpu, prec, m, count, plan, sizeof plan);
    CHECKF(strstr(plan, want) && (!also || strstr(plan, also)),
           "tuning '%s', m = %d: plan '%s'", tuning, m, plan);
}

int main(void)
{
    if (!hb_backend_available(HB_BACKEND_CUDA)) { /* ctest: SKIP_RETURN_CODE 77 */
        printf("no CUDA device: skipped\n");
        return 77;
    }
    /* line by line: a run stopped by a time limit (run_sanitizer.sh) still shows its progress */
    setvbuf(stdout, NULL, _IOLBF, 0);
    rng_state = test_seed("test_gpu_tridiag");
    hb_context_t *gpu = NULL, *cpu = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_CUDA, &gpu));
    /* The CPU twin on every core where OpenMP is built in (its work units never
     * share a system: the same results as sequential, in a fraction of the time). */
    CHECK_OK(hb_context_create(hb_backend_available(HB_BACKEND_OMP) ? HB_BACKEND_OMP : HB_BACKEND_SEQ, &cpu));
    if (!gpu || !cpu) return check_summary("test_gpu_tridiag");
    gpu_ctx = gpu;
    cpu_ctx = cpu;
    printf("device: %s\n", hb_context_device_name(gpu));
    /* HB_TEST_TUNING="gtsv.rows=16,...": the tuning of the cases before the first
     * use_tuning (the rule's cases, or HB_TEST_CASE's), on both contexts. */
    const char *tuning = getenv("HB_TEST_TUNING");
    if (tuning) use_tuning(tuning);
    /* HB_TEST_CASE="m,count,variable,interleaved,fp32,trials[,tuning]" (tuning: gtsv.* keys,
     * e.g. 512,300,1,1,1,1,gtsv.rows=8,gtsv.cluster=4): that case alone,
     * `trials` times with fresh systems (to chase a rare failure). */
    const char *only = getenv("HB_TEST_CASE");
    if (only) {
        int m, count, variable, interleaved, fp32, trials, used = 0;
        CHECKF(sscanf(only, "%d,%d,%d,%d,%d,%d%n", &m, &count, &variable, &interleaved, &fp32,
                      &trials, &used) == 6,
               "HB_TEST_CASE '%s': expected m,count,variable,interleaved,fp32,trials[,tuning]",
               only);
        if (used > 0) {
            if (only[used] == ',') use_tuning(only + used + 1);
            for (int t = 0; t < trials; ++t)
                run_case(gpu, cpu, m, count, variable,
                         interleaved ? HB_LAYOUT_INTERLEAVED : HB_LAYOUT_FLAT,
                         fp32 ? HB_FLOAT32 : HB_FLOAT64);
        }
        hb_context_destroy(gpu);
        hb_context_destroy(cpu);
        return check_summary("test_gpu_tridiag");
    }
    static const int shapes[][2] = {{1, 5},     {2, 3},    {3, 40},   {8, 300},  {9, 33},
                                    {64, 257},  {100, 31}, {512, 70}, {1000, 9}, {1024, 20},
                                    {1025, 3},  {2048, 5}, {4096, 4}, {5000, 3}, {8192, 3},
                                    {9000, 2},  {256, 2560}};
    for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k)
        run_cases(gpu, cpu, shapes[k][0], shapes[k][1]);
    /* Small batches in both precisions under the rule (docs/tridiag.md, "Small
     * batches"), and under small=1 where the rule keeps fp64's large-batch plan. */
    static const int small_shapes[][2] = {{128, 256}, {512, 256}, {3000, 43},
                                          {4096, 20}, {8192, 8}};
    for (size_t k = 0; k < sizeof small_shapes / sizeof *small_shapes; ++k) {
        for (int fp32 = 0; fp32 <= 1; ++fp32)
            expect_plan(gpu, fp32 ? HB_FLOAT32 : HB_FLOAT64, small_shapes[k][0],
                        small_shapes[k][1], "(rule)", "rows=8 ", "threads=128");
        run_cases(gpu, cpu, small_shapes[k][0], small_shapes[k][1]);
    }
    expect_plan(gpu, HB_FLOAT64, 1000, 131, "(rule)", "rows=16 ", NULL);
    use_tuning("gtsv.small=1");
    expect_plan(gpu, HB_FLOAT64, 1000, 131, "gtsv.small=1", "rows=8 ", "threads=128");
    run_cases(gpu, cpu, 1000, 131);
    use_tuning("");
    /* Every kernel variant: each (rows, ahead, hint) kernel in both precisions
     * (run_case covers both), and every block size. */
    static const char *const tunings[] = {
        "gtsv.rows=8,gtsv.ahead=4,gtsv.hint=0", "gtsv.rows=8,gtsv.ahead=8,gtsv.hint=0",
        "gtsv.rows=8,gtsv.ahead=4,gtsv.hint=1", "gtsv.rows=8,gtsv.ahead=8,gtsv.hint=1",
        "gtsv.rows=8,gtsv.ahead=4,gtsv.hint=2", "gtsv.rows=8,gtsv.ahead=8,gtsv.hint=2",
        "gtsv.rows=16,gtsv.hint=0", "gtsv.rows=16,gtsv.hint=1", "gtsv.rows=16,gtsv.hint=2",
        "gtsv.threads=128", "gtsv.threads=512", "gtsv.rows=16,gtsv.threads=128",
        "gtsv.rows=8,gtsv.prefetch=1", "gtsv.rows=8,gtsv.ahead=4,gtsv.prefetch=2",
        "gtsv.rows=16,gtsv.prefetch=1", "gtsv.rows=16,gtsv.prefetch=2,gtsv.hint=1",
        "gtsv.rows=8,gtsv.ahead=4,gtsv.vector=1,gtsv.hint=0",
        "gtsv.rows=8,gtsv.ahead=8,gtsv.vector=1,gtsv.hint=0",
        "gtsv.rows=16,gtsv.vector=1,gtsv.hint=0", "gtsv.rows=16,gtsv.vector=0,gtsv.hint=0",
        "gtsv.rows=8,gtsv.ahead=4,gtsv.vector=2,gtsv.hint=0",
        "gtsv.rows=8,gtsv.ahead=8,gtsv.vector=2", "gtsv.rows=16,gtsv.vector=2,gtsv.hint=0",
        "gtsv.rows=16,gtsv.vector=2,gtsv.prefetch=2", "gtsv.rows=16,gtsv.ahead=8,gtsv.hint=0",
        "gtsv.rows=16,gtsv.ahead=8,gtsv.hint=1", "gtsv.rows=16,gtsv.ahead=8,gtsv.hint=2",
        "gtsv.rows=16,gtsv.ahead=8,gtsv.vector=1", "gtsv.rows=16,gtsv.ahead=8,gtsv.vector=2",
        "gtsv.rows=8,gtsv.threads=128,gtsv.hint=1",
        "gtsv.rows=8,gtsv.ahead=8,gtsv.threads=128,gtsv.vector=2", "gtsv.cluster=2",
        "gtsv.rows=16,gtsv.threads=256,gtsv.cluster=4",
        "gtsv.rows=16,gtsv.ahead=8,gtsv.threads=512,gtsv.cluster=16,gtsv.vector=2",
        "gtsv.rows=8,gtsv.ahead=8,gtsv.cluster=8,gtsv.vector=2",
        "gtsv.rows=8,gtsv.ahead=4,gtsv.threads=128,gtsv.cluster=16,gtsv.hint=1",
        "gtsv.rows=16,gtsv.threads=128,gtsv.cluster=8,gtsv.hint=0",
        "gtsv.rows=8,gtsv.threads=512,gtsv.cluster=4,gtsv.vector=1,gtsv.prefetch=2",
        "gtsv.stage=1,gtsv.rows=16", "gtsv.stage=1,gtsv.rows=16,gtsv.ahead=8",
        "gtsv.stage=1,gtsv.rows=8,gtsv.ahead=4", "gtsv.stage=1,gtsv.rows=8,gtsv.threads=128",
        "gtsv.stage=1,gtsv.rows=16,gtsv.threads=256,gtsv.cluster=4",
        "gtsv.stage=1,gtsv.rows=16,gtsv.ahead=8,gtsv.cluster=8",
        "gtsv.stage=1,gtsv.rows=8,gtsv.ahead=8,gtsv.cluster=16,gtsv.hint=0",
        "gtsv.stage=1,gtsv.rows=16,gtsv.threads=128,gtsv.cluster=2"};
    static const int tuned_shapes[][2] = {{9, 33},  {100, 31}, {512, 70}, {1025, 3},
                                          {4096, 3}, {8192, 2}, {256, 600},
                                          {64, 20001}, {300, 3001}}; /* many blocks */
    for (size_t k = 0; k < sizeof tunings / sizeof *tunings; ++k) {
        /* over the large-batch rule (some shapes here are small batches) */
        char spec[128];
        snprintf(spec, sizeof spec, "%s,gtsv.small=0", tunings[k]);
        use_tuning(spec);
        for (size_t q = 0; q < sizeof tuned_shapes / sizeof *tuned_shapes; ++q) {
            /* The plan names the tuning (interleaved probe: the rule takes 16-row
             * chunks above m = 128; 8-row chunks at m = 8192 run two a thread). */
            const int m = tuned_shapes[q][0];
            char plan[192];
            describe_interleaved(gpu, HB_FLOAT64, m, tuned_shapes[q][1], plan, sizeof plan);
            /* clusters: the tuning's K (else the rule's, fp64: 4 at m = 257..512, 8
             * above 1024), or P where a system has fewer chunks */
            const char *kt = strstr(tunings[k], "cluster="), *kp = strstr(plan, "cluster=");
            const char *pp = strstr(plan, "chunks="), *tp = strstr(plan, "threads=");
            const char *rp = strstr(plan, "rows=");
            const int want_k = kt                       ? atoi(kt + 8)
                               : m > 1024                 ? 8
                               : m > 256 && m <= 512      ? 4
                                                          : 1;
            const int got_k = kp ? atoi(kp + 8) : -1;
            const int chunks = pp ? atoi(pp + 7) : -1, threads = tp ? atoi(tp + 8) : -1;
            const int most_k = want_k < chunks ? want_k : chunks;
            /* ... fewer where the cluster's interface rows would not fit the shared
             * memory (the next K up does not, at the plan's threads) */
            const int bigger = 2 * got_k, groups = threads * bigger / (chunks > 0 ? chunks : 1);
            const int too_big =
                rp && hb_td_partition_smem(atoi(rp + 5), 1, bigger, threads,
                                           groups > 0 ? groups : 1,
                                           (int)sizeof(double), 0) > HB_TD_MAX_SMEM;
            CHECKF(got_k >= 1 && (got_k == most_k || (got_k < most_k && too_big)),
                   "tuning '%s', m = %d: plan '%s'", tunings[k], m, plan);
            const int rows16 = strstr(tunings[k], "rows=16") != NULL ||
                               (strstr(tunings[k], "rows=8") == NULL && m > 128);
            CHECKF(strstr(plan, rows16 ? "rows=16" : "rows=8 ") != NULL &&
                       (strstr(tunings[k], "hint=1") == NULL || strstr(plan, "hint=1")) &&
                       (strstr(tunings[k], "hint=2") == NULL || strstr(plan, "hint=2")) &&
                       (strstr(tunings[k], "prefetch=1") == NULL ||
                        strstr(plan, "prefetch=1")) &&
                       (strstr(tunings[k], "prefetch=2") == NULL ||
                        strstr(plan, "prefetch=2")) &&
                       (strstr(tunings[k], "vector=1") == NULL || strstr(plan, "vector=1")) &&
                       (strstr(tunings[k], "vector=2") == NULL || strstr(plan, "vector=2")) &&
                       (strstr(tunings[k], "vector=0") == NULL || strstr(plan, "vector=0")) &&
                       /* staged: a ring too large for shared memory takes 4 rows ahead */
                       (strstr(tunings[k], "ahead=8") == NULL || strstr(plan, "ahead=8") ||
                        strstr(plan, "stage=1")) &&
                       /* staged where a thread holds one chunk */
                       (strstr(tunings[k], "stage=1") == NULL || strstr(plan, "stage=1") ||
                        (chunks > threads && strstr(plan, "cluster=1"))) &&
                       (strstr(tunings[k], "ahead=4") == NULL || strstr(plan, "ahead=4")),
                   "tuning '%s', m = %d: plan '%s'", tunings[k], m, plan);
            run_cases(gpu, cpu, m, tuned_shapes[q][1]);
        }
    }
    /* Persistent grids (staged plans): more tiles of G systems than resident blocks
     * (clusters), so that a block solves several in turn and copies the next one's
     * first rows during the current reduced solve; counts that leave the last tile
     * partly empty. Unclustered and clustered, 8- and 16-row chunks, 4 and 8 ahead;
     * and the same shapes with a block a tile. */
    static const char *const persistent[] = {
        "gtsv.persist=1", "gtsv.persist=1,gtsv.stage=1,gtsv.rows=8,gtsv.ahead=8",
        "gtsv.persist=1,gtsv.stage=1,gtsv.rows=16,gtsv.threads=256,gtsv.cluster=4",
        "gtsv.persist=1,gtsv.stage=1,gtsv.rows=16,gtsv.ahead=8,gtsv.cluster=2", "gtsv.persist=0"};
    static const int persistent_shapes[][2] = {
        {64, 20001}, {300, 3001}, {1024, 2001}, {2048, 301}, {8192, 129}};
    for (size_t k = 0; k < sizeof persistent / sizeof *persistent; ++k) {
        use_tuning(persistent[k]);
        const int on = strstr(persistent[k], "gtsv.persist=1") != NULL;
        for (size_t q = 0; q < sizeof persistent_shapes / sizeof *persistent_shapes; ++q) {
            const int m = persistent_shapes[q][0], count = persistent_shapes[q][1];
            expect_plan(gpu, HB_FLOAT64, m, count, persistent[k],
                        on ? "stage=1 persist=1" : "stage=1 persist=0", NULL);
            run_cases(gpu, cpu, m, count);
        }
    }
    /* Pairs of fp32 systems a thread (pairs=1): even counts and strides, so that the
     * pair kernels run (alone and in clusters, 8- and 16-row chunks, 4 and 8 ahead,
     * persistent and not, last tiles partly empty); then an odd stride and an odd
     * count, and variable sizes, where the one-system kernels run the same plan. */
    static const char *const paired[] = {
        "gtsv.pairs=1", "gtsv.pairs=1,gtsv.threads=256,gtsv.cluster=4",
        "gtsv.pairs=1,gtsv.threads=512,gtsv.cluster=8", "gtsv.pairs=1,gtsv.rows=8,gtsv.ahead=8",
        "gtsv.pairs=1,gtsv.ahead=8,gtsv.cluster=2", "gtsv.pairs=1,gtsv.persist=0"};
    static const int paired_shapes[][3] = {/* m, count, stride - count */
                                           {64, 20002, 0},  {300, 3002, 2}, {1024, 2002, 0},
                                           {2048, 302, 2},  {8192, 130, 0}, {512, 1000, 1},
                                           {512, 1001, 0}};
    for (size_t k = 0; k < sizeof paired / sizeof *paired; ++k) {
        use_tuning(paired[k]);
        for (size_t q = 0; q < sizeof paired_shapes / sizeof *paired_shapes; ++q) {
            const int m = paired_shapes[q][0], count = paired_shapes[q][1];
            expect_plan(gpu, HB_FLOAT32, m, count, paired[k], "stage=1", "pairs=1");
            stride_extra = paired_shapes[q][2];
            for (int variable = 0; variable <= 1; ++variable)
                run_case(gpu, cpu, m, count, variable, HB_LAYOUT_INTERLEAVED, HB_FLOAT32);
            stride_extra = -1;
        }
    }
    CHECK_OK(hb_context_set_tuning(gpu, NULL));
    CHECK_OK(hb_context_set_tuning(cpu, NULL));

    /* Errors reach the caller with a message: a CUDA allocation far too large. */
    void *huge = NULL;
    hb_status_t st = hb_device_malloc(gpu, (size_t)1 << 50, &huge);
    CHECKF(st == HB_ERR_ALLOC && huge == NULL, "1 PiB allocation: %s (%s)", hb_status_name(st),
           hb_last_error());
    printf("largest difference from the CPU twin, relative to 1 + |x|: fp64 thomas %.3g, "
           "partition %.3g; fp32 thomas %.3g, partition %.3g\n",
           worst_seen[0][0], worst_seen[0][1], worst_seen[1][0], worst_seen[1][1]);
    hb_context_destroy(gpu);
    hb_context_destroy(cpu);
    return check_summary("test_gpu_tridiag");
}
