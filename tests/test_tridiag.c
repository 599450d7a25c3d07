/*
 * Batched tridiagonal solvers (hb_gtsv_*) on the CPU backends; the PARTITION
 * algorithm here is the CUDA kernel's arithmetic (CI's twin of the GPU path).
 *
 * (1) every algorithm x layout x precision x backend against a long-double
 *     Thomas reference, and small systems against a dense long-double solve
 *     with partial pivoting; (2) inputs left intact, padding of x untouched;
 *     (3) VBatch with No-Computing-Padding (padding neither read nor written:
 *     NaN there) and Computing-Padding (x padding set to 0); (4) in-place;
 *     (5) errors and their messages; (6) OMP results independent of the
 *     thread count (bitwise); (7) memory helpers and the benchmark helper;
 *     (8) the tuning override (hb_context_set_tuning, gtsv.*): the partition arithmetic
 *     with 16-row chunks for small m and 8-row chunks up to m = 4096 (what the
 *     CUDA kernels run under those tunings), the plan text, refusals. (9) the
 *     rule's plans: test_tridiag_plan.c.
 * Runs once with a fixed seed and once with HB_TEST_SEED or the time.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/bench.h"
#include "hinesbatch.h"
#include "test_tridiag_common.h"

#if defined(__SANITIZE_ADDRESS__)
/* The out-of-memory test needs malloc to fail with NULL, not abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

static uint64_t rng_state;

static double uniform(double lo, double hi)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    z ^= z >> 31;
    return lo + (hi - lo) * (double)(z >> 11) * 0x1.0p-53;
}

/* A batch in natural order (system s, row i at s * m_max + i), sizes per system. */
typedef struct {
    int m, count;
    int *sizes;
    double *dl, *d, *du, *b;
    long double *ref; /* long-double Thomas solution */
} batch_t;

/* Diagonally dominant rows: |d| >= |dl| + |du| + margin, random signs. */
static void make_batch(batch_t *t, int m, int count, int variable)
{
    const size_t n = (size_t)m * (size_t)count;
    t->m = m;
    t->count = count;
    t->sizes = xmalloc((size_t)count * sizeof(int));
    t->dl = xmalloc(n * sizeof(double));
    t->d = xmalloc(n * sizeof(double));
    t->du = xmalloc(n * sizeof(double));
    t->b = xmalloc(n * sizeof(double));
    t->ref = xmalloc(n * sizeof(long double));
    for (int s = 0; s < count; ++s) {
        t->sizes[s] = variable ? 1 + (int)uniform(0.0, (double)m - 1e-9) : m;
        if (variable && s == 0) t->sizes[s] = m;
        for (int i = 0; i < m; ++i) {
            const size_t e = (size_t)s * m + i;
            t->dl[e] = uniform(-1.0, 1.0);
            t->du[e] = uniform(-1.0, 1.0);
            const double dom = fabs(t->dl[e]) + fabs(t->du[e]) + uniform(0.05, 1.0);
            t->d[e] = uniform(0.0, 1.0) < 0.5 ? -dom : dom;
            t->b[e] = uniform(-10.0, 10.0);
        }
        /* Long-double Thomas; dl[0], du[n-1] ignored. */
        const int ns = t->sizes[s];
        const size_t o = (size_t)s * m;
        long double *cp = xmalloc((size_t)m * sizeof(long double));
        long double c = 0.0L, y = 0.0L;
        for (int i = 0; i < ns; ++i) {
            const long double a = i ? t->dl[o + i] : 0.0L, up = i < ns - 1 ? t->du[o + i] : 0.0L;
            const long double inv = 1.0L / (t->d[o + i] - a * c);
            y = (t->b[o + i] - a * y) * inv;
            c = up * inv;
            cp[i] = c;
            t->ref[o + i] = y;
        }
        for (int i = ns - 2; i >= 0; --i) t->ref[o + i] -= cp[i] * t->ref[o + i + 1];
        free(cp);
    }
}

static void free_batch(batch_t *t)
{
    free(t->sizes);
    free(t->dl);
    free(t->d);
    free(t->du);
    free(t->b);
    free(t->ref);
}

/* Index of (s, i) in a layout with the given batch stride. */
static size_t at(hb_layout_t layout, int stride, int s, int i)
{
    return layout == HB_LAYOUT_INTERLEAVED ? (size_t)i * stride + s : (size_t)s * stride + i;
}

static size_t span(hb_layout_t layout, int m, int count, int stride)
{
    return layout == HB_LAYOUT_INTERLEAVED ? (size_t)m * stride : (size_t)count * stride;
}

/* Arrays of one solve in a layout, in a precision; padding elements are NaN. */
typedef struct {
    hb_layout_t layout;
    hb_precision_t precision;
    int stride;
    size_t n, esize;
    void *dl, *d, *du, *b, *x;
} arrays_t;

/* Padding rows of variable systems hold NaN in the inputs too: NCP must not read
 * them, CP must replace them. */
static void make_arrays(arrays_t *a, const batch_t *t, hb_layout_t layout,
                        hb_precision_t precision, int extra)
{
    a->layout = layout;
    a->precision = precision;
    a->stride = (layout == HB_LAYOUT_INTERLEAVED ? t->count : t->m) + extra;
    a->n = span(layout, t->m, t->count, a->stride);
    a->esize = precision == HB_FLOAT32 ? sizeof(float) : sizeof(double);
    void **all[5] = {&a->dl, &a->d, &a->du, &a->b, &a->x};
    for (int k = 0; k < 5; ++k) {
        *all[k] = xmalloc(a->n * a->esize);
        for (size_t e = 0; e < a->n; ++e) put(*all[k], precision, e, NAN);
    }
    for (int s = 0; s < t->count; ++s)
        for (int i = 0; i < t->sizes[s]; ++i) {
            const size_t e = at(layout, a->stride, s, i), o = (size_t)s * t->m + i;
            put(a->dl, precision, e, t->dl[o]);
            put(a->d, precision, e, t->d[o]);
            put(a->du, precision, e, t->du[o]);
            put(a->b, precision, e, t->b[o]);
        }
}

static void free_arrays(arrays_t *a)
{
    free(a->dl);
    free(a->d);
    free(a->du);
    free(a->b);
    free(a->x);
}

static hb_gtsv_problem_t problem_of(const arrays_t *a, const batch_t *t, hb_gtsv_algo_t algo,
                                    int vbatch, unsigned flags)
{
    const hb_gtsv_problem_t p = {.precision = a->precision,
                                 .algo = algo,
                                 .m = t->m,
                                 .sizes = vbatch ? t->sizes : NULL,
                                 .dl = a->dl,
                                 .d = a->d,
                                 .du = a->du,
                                 .b = a->b,
                                 .x = a->x,
                                 .layout = a->layout,
                                 .batch_count = t->count,
                                 .batch_stride = a->stride,
                                 .flags = flags};
    return p;
}

/*
 * Largest relative error per system against the reference; also checks that
 * x's padding is NaN (untouched) or, with CP, 0 for rows sizes[s]..m-1.
 */
static double check_solution(const arrays_t *a, const batch_t *t, int cp, int *bad_padding)
{
    double worst = 0.0;
    *bad_padding = 0;
    for (int s = 0; s < t->count; ++s) {
        long double err = 0.0L, norm = 0.0L;
        for (int i = 0; i < t->m; ++i) {
            const double x = get(a->x, a->precision, at(a->layout, a->stride, s, i));
            if (i < t->sizes[s]) {
                const long double r = t->ref[(size_t)s * t->m + i];
                err += (x - r) * (x - r);
                norm += r * r;
            } else if (cp ? x != 0.0 : !isnan(x)) {
                ++*bad_padding;
            }
        }
        const double rel = norm > 0.0L ? (double)sqrtl(err / norm) : (double)sqrtl(err);
        if (!(rel <= worst)) worst = rel; /* NaN propagates */
    }
    /* Gaps of the layout (beyond count or m) stay NaN. */
    for (size_t e = 0; e < a->n; ++e) {
        const int s = a->layout == HB_LAYOUT_INTERLEAVED ? (int)(e % a->stride) : (int)(e / a->stride);
        const int i = a->layout == HB_LAYOUT_INTERLEAVED ? (int)(e / a->stride) : (int)(e % a->stride);
        if ((s >= t->count || i >= t->m) && !isnan(get(a->x, a->precision, e))) ++*bad_padding;
    }
    return worst;
}

static int same_bytes(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* (1)-(4): every variant on one batch. */
static void test_variants(hb_context_t *ctx, int m, int count, int variable)
{
    batch_t t;
    make_batch(&t, m, count, variable);
    static const hb_layout_t layouts[] = {HB_LAYOUT_FLAT, HB_LAYOUT_INTERLEAVED};
    static const hb_precision_t precisions[] = {HB_FLOAT64, HB_FLOAT32};
    static const hb_gtsv_algo_t algos[] = {HB_GTSV_ALGO_AUTO, HB_GTSV_ALGO_THOMAS,
                                           HB_GTSV_ALGO_PARTITION};
    for (int li = 0; li < 2; ++li)
        for (int pi = 0; pi < 2; ++pi)
            for (int ai = 0; ai < 3; ++ai)
                for (int cp = 0; cp <= variable; ++cp) {
                    const hb_precision_t prec = precisions[pi];
                    const double tol = prec == HB_FLOAT32 ? 2e-6 : 1e-13;
                    arrays_t a;
                    make_arrays(&a, &t, layouts[li], prec, 1 + (int)(uniform(0, 3)));
                    /* Copies of the inputs to check they are kept intact. */
                    void *keep = xmalloc(4 * a.n * a.esize);
                    memcpy((char *)keep, a.dl, a.n * a.esize);
                    memcpy((char *)keep + a.n * a.esize, a.d, a.n * a.esize);
                    memcpy((char *)keep + 2 * a.n * a.esize, a.du, a.n * a.esize);
                    memcpy((char *)keep + 3 * a.n * a.esize, a.b, a.n * a.esize);
                    hb_gtsv_problem_t p =
                        problem_of(&a, &t, algos[ai], variable, cp ? HB_GTSV_PAD_COMPUTE : 0);
                    size_t bytes = 1;
                    CHECK_OK(hb_gtsv_buffer_size(ctx, &p, &bytes));
                    CHECK(bytes == 0); /* CPU workspaces are the library's own */
                    CHECK_OK(hb_gtsv_solve(ctx, &p));
                    int bad = 0;
                    const double err = check_solution(&a, &t, cp, &bad);
                    CHECKF(err < tol && bad == 0,
                           "%s %s m=%d count=%d %s %s %s: error %.3g (tol %.1g), %d padding "
                           "elements wrong", hb_backend_name(hb_context_backend(ctx)),
                           hb_gtsv_algo_name(algos[ai]), m, count, hb_layout_name(layouts[li]),
                           prec == HB_FLOAT32 ? "float" : "double",
                           variable ? (cp ? "CP" : "NCP") : "fixed", err, tol, bad);
                    CHECK(same_bytes(keep, a.dl, a.n * a.esize) &&
                          same_bytes((char *)keep + a.n * a.esize, a.d, a.n * a.esize) &&
                          same_bytes((char *)keep + 2 * a.n * a.esize, a.du, a.n * a.esize) &&
                          same_bytes((char *)keep + 3 * a.n * a.esize, a.b, a.n * a.esize));
                    /* In place: x == b gives the same bits as a separate x. */
                    if (ai == 2 || ai == 1) {
                        p.x = a.b;
                        p.flags |= HB_GTSV_IN_PLACE;
                        CHECK_OK(hb_gtsv_solve(ctx, &p));
                        int same = 1;
                        for (int s = 0; s < t.count; ++s)
                            for (int i = 0; i < t.sizes[s]; ++i) {
                                const size_t e = at(a.layout, a.stride, s, i);
                                same &= get(a.b, prec, e) == get(a.x, prec, e);
                            }
                        CHECKF(same, "in-place %s m=%d differs from out-of-place",
                               hb_gtsv_algo_name(algos[ai]), m);
                    }
                    free(keep);
                    free_arrays(&a);
                }
    free_batch(&t);
}

/* Dense long-double solve with partial pivoting of one system (natural order). */
static void dense_solve(int n, const double *dl, const double *d, const double *du,
                        const double *b, long double *x)
{
    long double *A = xmalloc((size_t)n * n * sizeof *A);
    for (int i = 0; i < n * n; ++i) A[i] = 0.0L;
    for (int i = 0; i < n; ++i) {
        A[i * n + i] = d[i];
        if (i > 0) A[i * n + i - 1] = dl[i];
        if (i < n - 1) A[i * n + i + 1] = du[i];
        x[i] = b[i];
    }
    for (int c = 0; c < n; ++c) {
        int piv = c;
        for (int r = c + 1; r < n; ++r)
            if (fabsl(A[r * n + c]) > fabsl(A[piv * n + c])) piv = r;
        for (int k = 0; k < n; ++k) {
            long double tmp = A[c * n + k];
            A[c * n + k] = A[piv * n + k];
            A[piv * n + k] = tmp;
        }
        long double tmp = x[c];
        x[c] = x[piv];
        x[piv] = tmp;
        for (int r = c + 1; r < n; ++r) {
            const long double f = A[r * n + c] / A[c * n + c];
            for (int k = c; k < n; ++k) A[r * n + k] -= f * A[c * n + k];
            x[r] -= f * x[c];
        }
    }
    for (int r = n - 1; r >= 0; --r) {
        for (int k = r + 1; k < n; ++k) x[r] -= A[r * n + k] * x[k];
        x[r] /= A[r * n + r];
    }
    free(A);
}

/* The long-double Thomas reference itself against dense solves. */
static void test_reference_vs_dense(void)
{
    for (int m = 1; m <= 40; m += 3) {
        batch_t t;
        make_batch(&t, m, 3, 0);
        long double *x = xmalloc((size_t)m * sizeof *x);
        for (int s = 0; s < 3; ++s) {
            const size_t o = (size_t)s * m;
            dense_solve(m, t.dl + o, t.d + o, t.du + o, t.b + o, x);
            long double err = 0.0L, norm = 0.0L;
            for (int i = 0; i < m; ++i) {
                err += (x[i] - t.ref[o + i]) * (x[i] - t.ref[o + i]);
                norm += x[i] * x[i];
            }
            CHECKF(sqrtl(err / norm) < 1e-15L, "m=%d: Thomas reference vs dense %.3Lg", m,
                   sqrtl(err / norm));
        }
        free(x);
        free_batch(&t);
    }
}

static void test_errors(hb_context_t *ctx)
{
    batch_t t;
    make_batch(&t, 10, 4, 1);
    arrays_t a;
    make_arrays(&a, &t, HB_LAYOUT_FLAT, HB_FLOAT64, 0);
    const double *dl = a.dl, *d = a.d, *du = a.du, *b = a.b;
    double *x = a.x;
    size_t bytes;
    CHECK_ERR(hb_dgtsv_batch(NULL, 0, 10, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "ctx is NULL");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 0, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "m = 0");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, HB_LAYOUT_FLAT, 0, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "batch_count = 0");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 9, 0, NULL),
              HB_ERR_INVALID_VALUE, "batch_stride = 9 < m = 10");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, HB_LAYOUT_INTERLEAVED, 4, 3, 0, NULL),
              HB_ERR_INVALID_VALUE, "batch_stride = 3 < batch_count = 4");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, HB_LAYOUT_BLOCK, 4, 10, 0, NULL),
              HB_ERR_NOT_SUPPORTED, "block");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, (hb_layout_t)7, 4, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "layout = 7");
    CHECK_ERR(hb_dgtsv_batch(ctx, (hb_gtsv_algo_t)9, 10, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10,
                             0, NULL),
              HB_ERR_INVALID_VALUE, "algo = 9");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, NULL, d, du, b, x, HB_LAYOUT_FLAT, 4, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "must not be NULL");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10, 0x80, NULL),
              HB_ERR_INVALID_VALUE, "unknown bits");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10,
                             HB_GTSV_PAD_COMPUTE, NULL),
              HB_ERR_INVALID_VALUE, "HB_GTSV_PAD_COMPUTE needs");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, (double *)b, HB_LAYOUT_FLAT, 4, 10, 0,
                             NULL),
              HB_ERR_INVALID_VALUE, "x overlaps b");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, (double *)d + 5, HB_LAYOUT_FLAT, 4, 10, 0,
                             NULL),
              HB_ERR_INVALID_VALUE, "x overlaps d");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 10, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10,
                             HB_GTSV_IN_PLACE, NULL),
              HB_ERR_INVALID_VALUE, "needs x == b");
    CHECK_ERR(hb_dgtsv_batch(ctx, HB_GTSV_ALGO_PARTITION, 9000, dl, d, du, b, x, HB_LAYOUT_FLAT,
                             1, 9000, 0, NULL),
              HB_ERR_NOT_SUPPORTED, "m <= 8192");
    CHECK_ERR(hb_dgtsv_vbatch(ctx, 0, 10, NULL, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "sizes is NULL");
    int sizes[4] = {3, 10, 11, 1};
    CHECK_ERR(hb_dgtsv_vbatch(ctx, 0, 10, sizes, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "sizes[2] = 11");
    sizes[2] = 0;
    CHECK_ERR(hb_dgtsv_vbatch(ctx, 0, 10, sizes, dl, d, du, b, x, HB_LAYOUT_FLAT, 4, 10, 0, NULL),
              HB_ERR_INVALID_VALUE, "sizes[2] = 0");
    CHECK_ERR(hb_dgtsv_batch_buffer_size(ctx, 0, 10, HB_LAYOUT_FLAT, 4, 10, NULL),
              HB_ERR_INVALID_VALUE, "bytes is NULL");
    CHECK_ERR(hb_sgtsv_batch_buffer_size(ctx, 0, 10, HB_LAYOUT_BLOCK, 4, 10, &bytes),
              HB_ERR_NOT_SUPPORTED, "block");
    CHECK_ERR(hb_dgtsv_vbatch_buffer_size(ctx, 0, -1, HB_LAYOUT_FLAT, 4, 10, &bytes),
              HB_ERR_INVALID_VALUE, "m = -1");
    CHECK_ERR(hb_dgtsv_batch(ctx, 0, 1 << 30, dl, d, du, b, x, HB_LAYOUT_INTERLEAVED, 1 << 30,
                             1 << 30, 0, NULL),
              HB_ERR_INVALID_VALUE, "do not fit");
    CHECK_ERR(hb_gtsv_benchmark(ctx, NULL, 1, 1, NULL), HB_ERR_INVALID_VALUE, "expected");
    hb_gtsv_problem_t p = problem_of(&a, &t, 0, 0, HB_GTSV_IN_PLACE);
    p.x = a.b;
    double sec;
    CHECK_ERR(hb_gtsv_benchmark(ctx, &p, 1, 1, &sec), HB_ERR_INVALID_VALUE, "kept intact");
    void *ptr = NULL;
    CHECK_ERR(hb_device_malloc(ctx, 0, &ptr), HB_ERR_INVALID_VALUE, "bytes = 0");
    CHECK_ERR(hb_device_malloc(ctx, (size_t)-1 / 2, &ptr), HB_ERR_ALLOC, "out of memory");
    CHECK(ptr == NULL);
    free_arrays(&a);
    free_batch(&t);
}

/* (6) OMP: the same bits with 1, 2, 3 and 7 threads. */
static void test_threads(void)
{
    if (!hb_backend_available(HB_BACKEND_OMP)) return;
    hb_context_t *ctx;
    CHECK_OK(hb_context_create(HB_BACKEND_OMP, &ctx));
    batch_t t;
    make_batch(&t, 300, 131, 1);
    for (int algo = HB_GTSV_ALGO_THOMAS; algo <= HB_GTSV_ALGO_PARTITION; ++algo)
        for (int li = 0; li < 2; ++li) {
            arrays_t a;
            make_arrays(&a, &t, li ? HB_LAYOUT_INTERLEAVED : HB_LAYOUT_FLAT, HB_FLOAT64, 2);
            double *first = xmalloc(a.n * sizeof(double));
            static const int threads[] = {1, 2, 3, 7};
            for (int k = 0; k < 4; ++k) {
                CHECK_OK(hb_context_set_threads(ctx, threads[k]));
                hb_gtsv_problem_t p = problem_of(&a, &t, (hb_gtsv_algo_t)algo, 1, 0);
                CHECK_OK(hb_gtsv_solve(ctx, &p));
                if (k == 0)
                    memcpy(first, a.x, a.n * sizeof(double));
                else
                    CHECKF(same_bytes(first, a.x, a.n * sizeof(double)),
                           "%s %s: %d threads differ from 1", hb_gtsv_algo_name(algo),
                           hb_layout_name(a.layout), threads[k]);
            }
            free(first);
            free_arrays(&a);
        }
    free_batch(&t);
    hb_context_destroy(ctx);
}

/* (7) Memory helpers, algorithm rule and benchmark on a CPU context. */
static void test_helpers(hb_context_t *ctx)
{
    double host[16], back[16];
    for (int i = 0; i < 16; ++i) host[i] = uniform(-1, 1);
    void *dev = NULL;
    CHECK_OK(hb_device_malloc(ctx, sizeof host, &dev));
    CHECK_OK(hb_memcpy_to_device(ctx, dev, host, sizeof host));
    CHECK_OK(hb_memcpy_from_device(ctx, back, dev, sizeof host));
    CHECK(memcmp(host, back, sizeof host) == 0);
    CHECK_OK(hb_device_free(ctx, dev));

    batch_t t;
    make_batch(&t, 50, 20, 0);
    arrays_t a;
    make_arrays(&a, &t, HB_LAYOUT_INTERLEAVED, HB_FLOAT64, 0);
    hb_gtsv_problem_t p[2] = {problem_of(&a, &t, 0, 0, 0), problem_of(&a, &t, 0, 0, 0)};
    hb_gtsv_algo_t algo = HB_GTSV_ALGO_AUTO;
    CHECK_OK(hb_gtsv_resolve(ctx, &p[0], &algo));
    CHECK(algo == HB_GTSV_ALGO_THOMAS);
    double seconds[3] = {-1, -1, -1};
    CHECK_OK(hb_gtsv_benchmark(ctx, p, 2, 3, seconds));
    CHECK(seconds[0] >= 0 && seconds[1] >= 0 && seconds[2] >= 0);
    int bad;
    CHECK(check_solution(&a, &t, 0, &bad) < 1e-13 && bad == 0);
    CHECK(strcmp(hb_gtsv_algo_name(HB_GTSV_ALGO_PARTITION), "partition") == 0);
    free_arrays(&a);
    free_batch(&t);
}

/* (8) Tunings: the rows and cluster overrides change the CPU twin's chunks and its
 * reduced solve (clusters: per block, with spike columns) as the GPU's; cluster=16 on
 * small systems gives blocks of one chunk. */
static void test_tuning(hb_context_t *ctx)
{
    static const char *const specs[] = {"gtsv.rows=16",
                                        "gtsv.rows=8,gtsv.threads=128,gtsv.ahead=4,gtsv.hint=1",
                                        "gtsv.hint=2,gtsv.threads=512",
                                        "gtsv.cluster=16",
                                        "gtsv.rows=8,gtsv.cluster=4",
                                        "gtsv.cluster=2"};
    static const int shapes[][2] = {{5, 7},    {17, 9},   {100, 6}, {1000, 3},
                                    {2500, 2}, {4096, 2}, {5000, 2}, {8192, 2}};
    for (size_t k = 0; k < sizeof specs / sizeof *specs; ++k) {
        CHECK_OK(hb_context_set_tuning(ctx, specs[k]));
        for (size_t q = 0; q < sizeof shapes / sizeof *shapes; ++q)
            for (int variable = 0; variable <= 1; ++variable)
                test_variants(ctx, shapes[q][0], shapes[q][1], variable);
    }
    /* The plan: the override, else the rule. */
    batch_t t;
    make_batch(&t, 3000, 2, 0);
    arrays_t a;
    make_arrays(&a, &t, HB_LAYOUT_FLAT, HB_FLOAT64, 0);
    hb_gtsv_problem_t p = problem_of(&a, &t, HB_GTSV_ALGO_PARTITION, 0, 0);
    char text[128];
    CHECK_OK(hb_context_set_tuning(ctx, "gtsv.rows=8"));
    CHECK_OK(hb_gtsv_describe(ctx, &p, text, sizeof text));
    CHECKF(strcmp(text, "partition rows=8 chunks=512") == 0, "plan '%s'", text);
    CHECK_OK(hb_context_set_tuning(ctx, "gtsv.rows=16"));
    CHECK_OK(hb_gtsv_describe(ctx, &p, text, sizeof text));
    CHECKF(strcmp(text, "partition rows=16 chunks=256") == 0, "plan '%s'", text);
    CHECK_OK(hb_context_set_tuning(ctx, "")); /* the rule: fp64 flat, 8-row chunks */
    CHECK_OK(hb_gtsv_describe(ctx, &p, text, sizeof text));
    CHECKF(strcmp(text, "partition rows=8 chunks=512") == 0, "plan '%s'", text);
    p.algo = HB_GTSV_ALGO_AUTO;
    CHECK_OK(hb_gtsv_describe(ctx, &p, text, sizeof text));
    CHECKF(strcmp(text, "thomas") == 0, "plan '%s'", text);
    free_arrays(&a);
    make_arrays(&a, &t, HB_LAYOUT_INTERLEAVED, HB_FLOAT64, 0);
    p = problem_of(&a, &t, HB_GTSV_ALGO_PARTITION, 0, 0);
    /* clusters change the arithmetic; a small batch takes 8-row chunks */
    CHECK_OK(hb_gtsv_describe(ctx, &p, text, sizeof text));
    CHECKF(strcmp(text, "partition rows=8 chunks=512 cluster=8") == 0, "plan '%s'", text);
    CHECK_OK(hb_context_set_tuning(ctx, "gtsv.small=0"));
    CHECK_OK(hb_gtsv_describe(ctx, &p, text, sizeof text));
    CHECKF(strcmp(text, "partition rows=16 chunks=256 cluster=8") == 0, "plan '%s'", text);
    free_arrays(&a);
    free_batch(&t);
    make_batch(&t, 8192, 1, 0);
    make_arrays(&a, &t, HB_LAYOUT_FLAT, HB_FLOAT64, 0);
    p = problem_of(&a, &t, HB_GTSV_ALGO_PARTITION, 0, 0);
    /* two 8-row chunks a thread on the GPU */
    CHECK_OK(hb_context_set_tuning(ctx, "gtsv.rows=8"));
    CHECK_OK(hb_gtsv_describe(ctx, &p, text, sizeof text));
    CHECKF(strcmp(text, "partition rows=8 chunks=1024") == 0, "plan '%s'", text);
    CHECK_OK(hb_gtsv_solve(ctx, &p));
    int bad = 0;
    CHECK(check_solution(&a, &t, 0, &bad) < 1e-13 && bad == 0);
    CHECK_ERR(hb_gtsv_describe(ctx, &p, text, 0), HB_ERR_INVALID_VALUE, "size 0");
    free_arrays(&a);
    free_batch(&t);
    /* Refusals name the syntax; a refused spec leaves the tuning as it was. */
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.rows=4"), HB_ERR_INVALID_VALUE,
              "expected 8 or 16");
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.threads=256,gtsv.speed=9"), HB_ERR_INVALID_VALUE,
              "docs/tuning.md");
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.ahead=8x"), HB_ERR_INVALID_VALUE,
              "expected 4 or 8");
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.prefetch=3"), HB_ERR_INVALID_VALUE,
              "gtsv.prefetch = '3'");
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.vector=3"), HB_ERR_INVALID_VALUE,
              "gtsv.vector = '3'");
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.stage=2"), HB_ERR_INVALID_VALUE, "gtsv.stage = '2'");
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.persist=2"), HB_ERR_INVALID_VALUE,
              "gtsv.persist = '2'");
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.pairs=2"), HB_ERR_INVALID_VALUE, "gtsv.pairs = '2'");
    CHECK_OK(hb_context_set_tuning(ctx, NULL));
}

static void run_all(void)
{
    static const int shapes[][2] = {{1, 3},  {2, 5},   {3, 1},   {5, 70},  {8, 9},
                                    {9, 33}, {17, 65}, {64, 40}, {100, 7}, {200, 9},
                                    {1025, 5}, {3000, 3}};
    static const hb_backend_t backends[] = {HB_BACKEND_SEQ, HB_BACKEND_OMP};
    for (int bi = 0; bi < 2; ++bi) {
        if (!hb_backend_available(backends[bi])) continue;
        hb_context_t *ctx;
        CHECK_OK(hb_context_create(backends[bi], &ctx));
        for (size_t k = 0; k < sizeof shapes / sizeof *shapes; ++k)
            for (int variable = 0; variable <= 1; ++variable)
                test_variants(ctx, shapes[k][0], shapes[k][1], variable);
        test_errors(ctx);
        test_helpers(ctx);
        test_tuning(ctx);
        hb_context_destroy(ctx);
    }
    test_reference_vs_dense();
    test_threads();
}

int main(void)
{
    rng_state = 12345;
    run_all();
    const char *env = getenv("HB_TEST_SEED");
    rng_state = env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL);
    printf("test_tridiag: second pass with seed %llu\n", (unsigned long long)rng_state);
    run_all();
    return check_summary("test_tridiag");
}
