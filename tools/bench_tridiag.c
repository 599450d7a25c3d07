/*
 * hinesbatch bench tridiag: batched tridiagonal solves (paper Section 4.1,
 * Figures 9-12) beside cuSPARSE (when the CLI is built with it).
 *
 * The paper's grid: m = 64..512 with 256..256,000 systems, m = 1024..8192 with
 * 20..20,000 systems, fp64 and fp32 (cuSPARSE's D and S routines beside ours),
 * fresh diagonally dominant random systems every run (seed printed). Each configuration: median time of --repeats solves after a
 * warm-up, timed with CUDA events (hb_gtsv_benchmark for ours, events around
 * the call for cuSPARSE); several input sets are rotated so that the inputs
 * together are at least 3x the L2 cache (up to 64 sets). Effective bandwidth
 * is the minimum traffic (dl, d, du, b read and x written: 5 elements per
 * unknown) over the time, also as a fraction of the device-to-device copy
 * bandwidth measured in the same run. --variants times our kernel under
 * several tunings (hb_context_set_tuning) for A/B comparisons. Then the accuracy
 * sweep in each precision asked for (Figure 12a: error against a long-double CPU
 * solution as m grows) and the device memory each solver needs (Figure 12b).
 * This file measures; bench_tridiag_report.c parses the options and prints.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tridiag.h"
#include "core/bench.h"
#include "cli.h"

#ifdef HB_HAVE_CUSPARSE
#include <cuda_runtime.h>
#include <cusparse.h>
#endif

static uint64_t rng;

void bench_tridiag_seed(uint64_t seed) { rng = seed; }

/* Natural-order system s (rows s * m .. s * m + m - 1): |d| = (|dl| + |du|) (1 + margin). */
static void fill(int m, long count, double margin_lo, double margin_hi, double *dl, double *d,
                 double *du, double *b)
{
    for (long s = 0; s < count; ++s)
        for (int i = 0; i < m; ++i) {
            const size_t e = (size_t)s * m + i;
            dl[e] = i ? 2.0 * cli_uniform(&rng) - 1.0 : 0.0;
            du[e] = i < m - 1 ? 2.0 * cli_uniform(&rng) - 1.0 : 0.0;
            const double off = fabs(dl[e]) + fabs(du[e]);
            const double mag = off * (1.0 + margin_lo + (margin_hi - margin_lo) * cli_uniform(&rng)) +
                               (off == 0.0 ? 1.0 : 0.0);
            d[e] = cli_uniform(&rng) < 0.5 ? -mag : mag;
            b[e] = 2.0 * cli_uniform(&rng) - 1.0;
        }
}

static void interleave(int m, long count, const double *in, double *out)
{
    for (long s = 0; s < count; ++s)
        for (int i = 0; i < m; ++i) out[(size_t)i * count + s] = in[(size_t)s * m + i];
}

/* ---- one input set on the device, in both layouts ---- */
typedef struct {
    void *flat[4], *il[4]; /* dl, d, du, b */
} set_t;

static hb_status_t dev_alloc(hb_context_t *ctx, size_t bytes, void **p)
{
    return hb_device_malloc(ctx, bytes, p);
}

static void free_set(hb_context_t *ctx, set_t *s)
{
    for (int k = 0; k < 4; ++k) {
        if (s->flat[k]) hb_device_free(ctx, s->flat[k]);
        if (s->il[k]) hb_device_free(ctx, s->il[k]);
        s->flat[k] = s->il[k] = NULL;
    }
}

static void reference(int m, long count, const double *dl, const double *d, const double *du,
                      const double *b, long double *x);

/* Fresh random data into a set, diagonal dominance margins in [lo, hi]; host
 * scratch: 8 arrays of n doubles (fp32: converted in place, the arrays then hold
 * floats). ref (may be NULL): the long-double solution of the systems as the
 * solvers see them (fp32: the coefficients rounded to float). */
static hb_status_t make_set(hb_context_t *ctx, int m, long count, hb_precision_t prec, double lo,
                            double hi, double *host, long double *ref, set_t *s)
{
    const size_t n = (size_t)m * (size_t)count;
    const size_t bytes = n * (prec == HB_FLOAT32 ? sizeof(float) : sizeof(double));
    hb_status_t st = HB_SUCCESS;
    memset(s, 0, sizeof *s);
    fill(m, count, lo, hi, host, host + n, host + 2 * n, host + 3 * n);
    if (prec == HB_FLOAT32)
        for (size_t e = 0; e < 4 * n; ++e) host[e] = (double)(float)host[e];
    if (ref) reference(m, count, host, host + n, host + 2 * n, host + 3 * n, ref);
    for (int k = 0; k < 4 && st == HB_SUCCESS; ++k) {
        interleave(m, count, host + (size_t)k * n, host + (size_t)(4 + k) * n);
        if (prec == HB_FLOAT32)
            for (int a = 0; a < 2; ++a) {
                double *src = host + (size_t)(a ? 4 + k : k) * n;
                float *dst = (float *)src; /* forward in place: element e only reads e >= it */
                for (size_t e = 0; e < n; ++e) dst[e] = (float)src[e];
            }
        st = dev_alloc(ctx, bytes, &s->flat[k]);
        if (st == HB_SUCCESS) st = dev_alloc(ctx, bytes, &s->il[k]);
        if (st == HB_SUCCESS) st = hb_memcpy_to_device(ctx, s->flat[k], host + (size_t)k * n, bytes);
        if (st == HB_SUCCESS)
            st = hb_memcpy_to_device(ctx, s->il[k], host + (size_t)(4 + k) * n, bytes);
    }
    if (st != HB_SUCCESS) free_set(ctx, s);
    return st;
}

static timing_t summarize(double *t, int n)
{
    timing_t r;
    double lo = t[0], hi = t[0];
    for (int k = 1; k < n; ++k) {
        if (t[k] < lo) lo = t[k];
        if (t[k] > hi) hi = t[k];
    }
    r.median = cli_median(t, (size_t)n);
    r.lo = lo;
    r.hi = hi;
    return r;
}

/* Set s as a problem of our solver, x separate, no workspace yet. */
static hb_gtsv_problem_t problem_of(const set_t *s, int m, long count, hb_precision_t prec,
                                    hb_layout_t layout, hb_gtsv_algo_t algo, void *x)
{
    void *const *a = layout == HB_LAYOUT_FLAT ? s->flat : s->il;
    return (hb_gtsv_problem_t){.precision = prec,
                               .algo = algo,
                               .m = m,
                               .dl = a[0],
                               .d = a[1],
                               .du = a[2],
                               .b = a[3],
                               .x = x,
                               .layout = layout,
                               .batch_count = (int)count,
                               .batch_stride = layout == HB_LAYOUT_FLAT ? m : (int)count};
}

/* Ours: every set as a problem, rotated. */
static hb_status_t time_ours(hb_context_t *ctx, int m, long count, hb_precision_t prec,
                             set_t *sets, int n_sets, hb_layout_t layout, hb_gtsv_algo_t algo,
                             void *x, double *secs, int repeats, timing_t *out,
                             hb_gtsv_algo_t *resolved, char *plan, size_t plan_size)
{
    hb_gtsv_problem_t *p = calloc((size_t)n_sets, sizeof *p);
    if (!p) return HB_ERR_ALLOC;
    void *buffer = NULL;
    size_t bytes = 0;
    hb_status_t st = HB_SUCCESS;
    for (int k = 0; k < n_sets; ++k) p[k] = problem_of(&sets[k], m, count, prec, layout, algo, x);
    st = hb_gtsv_buffer_size(ctx, &p[0], &bytes);
    if (st == HB_SUCCESS && bytes) st = hb_device_malloc(ctx, bytes, &buffer);
    for (int k = 0; k < n_sets; ++k) p[k].buffer = buffer;
    if (st == HB_SUCCESS) st = hb_gtsv_resolve(ctx, &p[0], resolved);
    if (st == HB_SUCCESS) st = hb_gtsv_describe(ctx, &p[0], plan, plan_size);
    if (st == HB_SUCCESS) st = hb_gtsv_benchmark(ctx, p, n_sets, repeats, secs);
    if (st == HB_SUCCESS) *out = summarize(secs, repeats);
    if (buffer) hb_device_free(ctx, buffer);
    free(p);
    return st;
}

#ifdef HB_HAVE_CUSPARSE
/* cuSPARSE: before each call (untimed) the working arrays are refreshed from
 * the set, since its solvers overwrite x (and interleaved: dl, d, du). */
typedef enum { CS_KIND_STRIDED, CS_KIND_IL0, CS_KIND_IL1 } cs_kind_t;

static int cs_ok(cusparseStatus_t s, cudaError_t e, const char *what)
{
    if (s != CUSPARSE_STATUS_SUCCESS || e != cudaSuccess) {
        fprintf(stderr, "hinesbatch bench tridiag: %s: %s / %s\n", what,
                cusparseGetErrorString(s), cudaGetErrorString(e));
        return 0;
    }
    return 1;
}

/* w: the four working arrays, double (prec fp64) or float (fp32). */
static size_t cs_buffer_size(cusparseHandle_t h, cs_kind_t kind, hb_precision_t prec, int m,
                             long count, void **w)
{
    size_t bytes = 0;
    const int algo = kind == CS_KIND_IL0 ? 0 : 1, n = (int)count;
    cusparseStatus_t s;
    if (prec == HB_FLOAT32) {
        float **f = (float **)w;
        s = kind == CS_KIND_STRIDED
                ? cusparseSgtsv2StridedBatch_bufferSizeExt(h, m, f[0], f[1], f[2], f[3], n, m,
                                                           &bytes)
                : cusparseSgtsvInterleavedBatch_bufferSizeExt(h, algo, m, f[0], f[1], f[2], f[3],
                                                              n, &bytes);
    } else {
        double **d = (double **)w;
        s = kind == CS_KIND_STRIDED
                ? cusparseDgtsv2StridedBatch_bufferSizeExt(h, m, d[0], d[1], d[2], d[3], n, m,
                                                           &bytes)
                : cusparseDgtsvInterleavedBatch_bufferSizeExt(h, algo, m, d[0], d[1], d[2], d[3],
                                                              n, &bytes);
    }
    return s == CUSPARSE_STATUS_SUCCESS ? bytes : (size_t)-1;
}

static cusparseStatus_t cs_call(cusparseHandle_t h, cs_kind_t kind, hb_precision_t prec, int m,
                                long count, void **w, void *buffer)
{
    const int algo = kind == CS_KIND_IL0 ? 0 : 1, n = (int)count;
    if (prec == HB_FLOAT32) {
        float **f = (float **)w;
        if (kind == CS_KIND_STRIDED)
            return cusparseSgtsv2StridedBatch(h, m, f[0], f[1], f[2], f[3], n, m, buffer);
        return cusparseSgtsvInterleavedBatch(h, algo, m, f[0], f[1], f[2], f[3], n, buffer);
    }
    double **d = (double **)w;
    if (kind == CS_KIND_STRIDED)
        return cusparseDgtsv2StridedBatch(h, m, d[0], d[1], d[2], d[3], n, m, buffer);
    return cusparseDgtsvInterleavedBatch(h, algo, m, d[0], d[1], d[2], d[3], n, buffer);
}

static int time_cusparse(cusparseHandle_t h, cs_kind_t kind, hb_precision_t prec, int m,
                         long count, set_t *sets, int n_sets, void **w, double *secs, int repeats,
                         timing_t *out)
{
    const size_t bytes = (size_t)m * (size_t)count * esize_of(prec);
    size_t buf_bytes = cs_buffer_size(h, kind, prec, m, count, w);
    void *buffer = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    int ok = buf_bytes != (size_t)-1 &&
             cs_ok(CUSPARSE_STATUS_SUCCESS, cudaMalloc(&buffer, buf_bytes ? buf_bytes : 1),
                   "cudaMalloc") &&
             cs_ok(CUSPARSE_STATUS_SUCCESS, cudaEventCreate(&start), "event") &&
             cs_ok(CUSPARSE_STATUS_SUCCESS, cudaEventCreate(&stop), "event");
    for (int r = -1; r < repeats && ok; ++r) { /* r = -1: warm-up */
        const set_t *s = &sets[(r < 0 ? 0 : r) % n_sets];
        void *const *src = kind == CS_KIND_STRIDED ? s->flat : s->il;
        for (int k = 0; k < 4 && ok; ++k)
            ok = cs_ok(CUSPARSE_STATUS_SUCCESS,
                       cudaMemcpy(w[k], src[k], bytes, cudaMemcpyDeviceToDevice), "restore");
        if (!ok) break;
        float ms = 0.0f;
        ok = cs_ok(CUSPARSE_STATUS_SUCCESS, cudaEventRecord(start, 0), "record") &&
             cs_ok(cs_call(h, kind, prec, m, count, w, buffer), cudaGetLastError(),
                   "cuSPARSE solve") &&
             cs_ok(CUSPARSE_STATUS_SUCCESS, cudaEventRecord(stop, 0), "record") &&
             cs_ok(CUSPARSE_STATUS_SUCCESS, cudaEventSynchronize(stop), "sync") &&
             cs_ok(CUSPARSE_STATUS_SUCCESS, cudaEventElapsedTime(&ms, start, stop), "elapsed");
        if (r >= 0) secs[r] = 1e-3 * ms;
    }
    if (ok) *out = summarize(secs, repeats);
    if (buffer) cudaFree(buffer);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    return ok;
}
#endif

int bench_tridiag_run_point(hb_context_t *ctx, const options_t *o, int m, long count,
                            hb_precision_t prec, double l2_bytes, point_t *pt)
{
    const size_t n = (size_t)m * (size_t)count, bytes = n * esize_of(prec);
    const int cuda = hb_context_backend(ctx) == HB_BACKEND_CUDA;
    memset(pt, 0, sizeof *pt);
    pt->m = m;
    pt->count = count;
    pt->prec = prec;
    int sets = (int)ceil(3.0 * l2_bytes / (4.0 * (double)bytes));
    if (sets < 1) sets = 1;
    if (sets > 64) sets = 64;
    pt->sets = sets;
    double *host = malloc(8 * n * sizeof(double));
    set_t *set = calloc((size_t)sets, sizeof *set);
    double *secs = malloc((size_t)o->repeats * sizeof *secs);
    void *x = NULL;
    void *w[4] = {NULL, NULL, NULL, NULL};
    int ok = host && set && secs;
    hb_status_t st = ok ? HB_SUCCESS : HB_ERR_ALLOC;
    for (int k = 0; k < sets && st == HB_SUCCESS; ++k)
        st = make_set(ctx, m, count, prec, 0.05, 1.0, host, NULL, &set[k]);
    if (st == HB_SUCCESS) st = hb_device_malloc(ctx, bytes, &x);
    struct {
        int col;
        hb_layout_t layout;
        hb_gtsv_algo_t algo;
    } ours[] = {{OURS_FLAT, HB_LAYOUT_FLAT, HB_GTSV_ALGO_AUTO},
                {OURS_IL, HB_LAYOUT_INTERLEAVED, HB_GTSV_ALGO_AUTO},
                {OURS_THOMAS_IL, HB_LAYOUT_INTERLEAVED, HB_GTSV_ALGO_THOMAS}};
    for (int k = 0; k < 3 && st == HB_SUCCESS; ++k) {
        if (!cuda && k == 2) break; /* on the CPU, AUTO is Thomas already */
        hb_gtsv_algo_t resolved;
        char plan[128];
        st = time_ours(ctx, m, count, prec, set, sets, ours[k].layout, ours[k].algo, x, secs,
                       o->repeats, &pt->t[ours[k].col], &resolved, plan, sizeof plan);
        if (st == HB_SUCCESS) {
            pt->have[ours[k].col] = 1;
            if (k == 0) {
                pt->algo_flat = resolved;
                snprintf(pt->plan_flat, sizeof pt->plan_flat, "%s", plan);
            }
            if (k == 1) {
                pt->algo_il = resolved;
                snprintf(pt->plan_il, sizeof pt->plan_il, "%s", plan);
            }
        }
    }
    /* --variants: our AUTO solve under each tuning, both layouts. */
    for (int v = 0; v < o->n_variants && st == HB_SUCCESS; ++v) {
        st = hb_context_set_tuning(ctx, o->variant[v]);
        for (int il = 0; il < 2 && st == HB_SUCCESS; ++il) {
            hb_gtsv_algo_t resolved;
            st = time_ours(ctx, m, count, prec, set, sets,
                           il ? HB_LAYOUT_INTERLEAVED : HB_LAYOUT_FLAT, HB_GTSV_ALGO_AUTO, x, secs,
                           o->repeats, &pt->var_t[v][il], &resolved, pt->var_plan[v][il],
                           sizeof pt->var_plan[v][il]);
            pt->var_have[v][il] = st == HB_SUCCESS;
        }
        hb_context_set_tuning(ctx, NULL);
    }
#ifdef HB_HAVE_CUSPARSE
    if (st == HB_SUCCESS && cuda && o->cusparse) {
        cusparseHandle_t h = NULL;
        ok = cs_ok(cusparseCreate(&h), cudaSuccess, "cusparseCreate");
        for (int k = 0; k < 4 && ok; ++k)
            ok = cs_ok(CUSPARSE_STATUS_SUCCESS, cudaMalloc(&w[k], bytes), "cudaMalloc");
        static const cs_kind_t kinds[3] = {CS_KIND_STRIDED, CS_KIND_IL0, CS_KIND_IL1};
        for (int k = 0; k < 3 && ok; ++k)
            pt->have[CS_STRIDED + k] = time_cusparse(h, kinds[k], prec, m, count, set, sets, w,
                                                     secs, o->repeats, &pt->t[CS_STRIDED + k]);
        for (int k = 0; k < 4; ++k)
            if (w[k]) cudaFree(w[k]);
        if (h) cusparseDestroy(h);
    }
#endif
    (void)w;
    if (st != HB_SUCCESS)
        fprintf(stderr, "hinesbatch bench tridiag: m = %d, %ld systems, %s: %s (%s)\n", m, count,
                prec == HB_FLOAT32 ? "fp32" : "fp64", hb_last_error(), hb_status_string(st));
    if (x) hb_device_free(ctx, x);
    for (int k = 0; set && k < sets; ++k) free_set(ctx, &set[k]);
    free(set);
    free(host);
    free(secs);
    return st == HB_SUCCESS;
}

/* ---- accuracy (Figure 12a) and memory (Figure 12b) ---- */

/* Long-double Thomas on natural-order arrays. */
static void reference(int m, long count, const double *dl, const double *d, const double *du,
                      const double *b, long double *x)
{
    long double *cp = malloc((size_t)m * sizeof *cp);
    if (!cp) return;
    for (long s = 0; s < count; ++s) {
        const size_t o = (size_t)s * m;
        long double c = 0.0L, y = 0.0L;
        for (int i = 0; i < m; ++i) {
            const long double inv = 1.0L / ((long double)d[o + i] - (long double)dl[o + i] * c);
            y = ((long double)b[o + i] - (long double)dl[o + i] * y) * inv;
            c = (long double)du[o + i] * inv;
            cp[i] = c;
            x[o + i] = y;
        }
        for (int i = m - 2; i >= 0; --i) x[o + i] -= cp[i] * x[o + i + 1];
    }
    free(cp);
}

/* Largest relative 2-norm error over the systems (x in natural or interleaved order). */
static double max_error(int m, long count, const double *x, int interleaved, const long double *ref)
{
    double worst = 0.0;
    for (long s = 0; s < count; ++s) {
        long double e = 0.0L, nrm = 0.0L;
        for (int i = 0; i < m; ++i) {
            const long double r = ref[(size_t)s * m + i];
            const double v = interleaved ? x[(size_t)i * count + s] : x[(size_t)s * m + i];
            e += (v - r) * (v - r);
            nrm += r * r;
        }
        const double rel = (double)sqrtl(e / nrm);
        if (!(rel <= worst)) worst = rel;
    }
    return worst;
}

/* n values of the precision (as copied from the device) into n doubles, in place:
 * fp32 backward, so that no float is overwritten before it is read (double e
 * covers floats 2e and 2e + 1, both read already); bytes read with memcpy, not
 * through a float lvalue of a double array. */
static void widen(double *x, hb_precision_t prec, size_t n)
{
    if (prec != HB_FLOAT32) return;
    for (size_t e = n; e-- > 0;) {
        float v;
        memcpy(&v, (const char *)x + e * sizeof v, sizeof v);
        x[e] = v;
    }
}

void bench_tridiag_accuracy(hb_context_t *ctx, hb_precision_t prec, int m, long count,
                            double errors[N_ACC], int have[N_ACC])
{
    const size_t n = (size_t)m * (size_t)count, bytes = n * esize_of(prec);
    double *host = malloc(9 * n * sizeof(double));
    long double *ref = malloc(n * sizeof *ref);
    set_t set;
    void *x = NULL, *buffer = NULL;
    memset(have, 0, N_ACC * sizeof *have);
    memset(&set, 0, sizeof set);
    if (!host || !ref) goto done;
    /* Weakly dominant: |d| = (|dl| + |du|)(1 + [0.001, 0.01]), so errors grow visibly with m. */
    if (make_set(ctx, m, count, prec, 0.001, 0.01, host, ref, &set) != HB_SUCCESS) goto done;
    double *out = host + 8 * n;
    if (hb_device_malloc(ctx, bytes, &x) != HB_SUCCESS) goto done;
    static const struct {
        int col;
        hb_layout_t layout;
        hb_gtsv_algo_t algo;
    } ours[3] = {{ACC_OURS_FLAT, HB_LAYOUT_FLAT, HB_GTSV_ALGO_AUTO},
                 {ACC_OURS_IL, HB_LAYOUT_INTERLEAVED, HB_GTSV_ALGO_AUTO},
                 {ACC_OURS_THOMAS, HB_LAYOUT_INTERLEAVED, HB_GTSV_ALGO_THOMAS}};
    for (int k = 0; k < 3; ++k) {
        const int il = ours[k].layout == HB_LAYOUT_INTERLEAVED;
        hb_gtsv_problem_t p = problem_of(&set, m, count, prec, ours[k].layout, ours[k].algo, x);
        size_t need = 0;
        if (hb_gtsv_buffer_size(ctx, &p, &need) != HB_SUCCESS) continue;
        if (need && hb_device_malloc(ctx, need, &buffer) != HB_SUCCESS) continue;
        p.buffer = buffer;
        if (hb_gtsv_solve(ctx, &p) == HB_SUCCESS &&
            hb_memcpy_from_device(ctx, out, x, bytes) == HB_SUCCESS) {
            widen(out, prec, n);
            errors[ours[k].col] = max_error(m, count, out, il, ref);
            have[ours[k].col] = 1;
        }
        if (buffer) hb_device_free(ctx, buffer);
        buffer = NULL;
    }
#ifdef HB_HAVE_CUSPARSE
    if (hb_context_backend(ctx) == HB_BACKEND_CUDA) {
        cusparseHandle_t h = NULL;
        void *w[4] = {NULL, NULL, NULL, NULL};
        int ok = cs_ok(cusparseCreate(&h), cudaSuccess, "cusparseCreate");
        for (int k = 0; k < 4 && ok; ++k)
            ok = cs_ok(CUSPARSE_STATUS_SUCCESS, cudaMalloc(&w[k], bytes), "cudaMalloc");
        static const cs_kind_t kinds[3] = {CS_KIND_STRIDED, CS_KIND_IL0, CS_KIND_IL1};
        for (int k = 0; k < 3 && ok; ++k) {
            const int il = kinds[k] != CS_KIND_STRIDED;
            void *const *src = il ? set.il : set.flat;
            void *cbuf = NULL;
            size_t cb = cs_buffer_size(h, kinds[k], prec, m, count, w);
            for (int q = 0; q < 4 && ok; ++q)
                ok = cs_ok(CUSPARSE_STATUS_SUCCESS,
                           cudaMemcpy(w[q], src[q], bytes, cudaMemcpyDeviceToDevice), "copy");
            ok = ok && cb != (size_t)-1 &&
                 cs_ok(CUSPARSE_STATUS_SUCCESS, cudaMalloc(&cbuf, cb ? cb : 1), "cudaMalloc") &&
                 cs_ok(cs_call(h, kinds[k], prec, m, count, w, cbuf), cudaDeviceSynchronize(),
                       "solve") &&
                 cs_ok(CUSPARSE_STATUS_SUCCESS,
                       cudaMemcpy(out, w[3], bytes, cudaMemcpyDeviceToHost), "copy");
            if (ok) {
                widen(out, prec, n);
                errors[ACC_CS_STRIDED + k] = max_error(m, count, out, il, ref);
                have[ACC_CS_STRIDED + k] = 1;
            }
            if (cbuf) cudaFree(cbuf);
        }
        for (int k = 0; k < 4; ++k)
            if (w[k]) cudaFree(w[k]);
        if (h) cusparseDestroy(h);
    }
#endif
done:
    if (x) hb_device_free(ctx, x);
    free_set(ctx, &set);
    free(host);
    free(ref);
}

/* Device memory for `count` systems of m rows: inputs (4 arrays), x when
 * separate, and the workspace. cuSPARSE solves in place (x is b). */
void bench_tridiag_memory_row(hb_context_t *ctx, int m, long count, double mb[5], int have[5])
{
    const double arrays = (double)m * (double)count * sizeof(double);
    size_t bytes = 0;
    memset(have, 0, 5 * sizeof *have);
    if (hb_dgtsv_batch_buffer_size(ctx, HB_GTSV_ALGO_AUTO, m, HB_LAYOUT_INTERLEAVED, (int)count,
                                   (int)count, &bytes) == HB_SUCCESS) {
        mb[0] = (5.0 * arrays + (double)bytes) / 1e6;
        have[0] = 1;
    }
    if (hb_dgtsv_batch_buffer_size(ctx, HB_GTSV_ALGO_THOMAS, m, HB_LAYOUT_INTERLEAVED, (int)count,
                                   (int)count, &bytes) == HB_SUCCESS) {
        mb[1] = (5.0 * arrays + (double)bytes) / 1e6;
        have[1] = 1;
    }
#ifdef HB_HAVE_CUSPARSE
    if (hb_context_backend(ctx) == HB_BACKEND_CUDA) {
        cusparseHandle_t h = NULL;
        if (cusparseCreate(&h) == CUSPARSE_STATUS_SUCCESS) {
            void *w[4] = {NULL, NULL, NULL, NULL}; /* the size queries read no data */
            static const cs_kind_t kinds[3] = {CS_KIND_STRIDED, CS_KIND_IL0, CS_KIND_IL1};
            for (int k = 0; k < 3; ++k) {
                const size_t b = cs_buffer_size(h, kinds[k], HB_FLOAT64, m, count, w);
                if (b != (size_t)-1) {
                    mb[2 + k] = (4.0 * arrays + (double)b) / 1e6;
                    have[2 + k] = 1;
                }
            }
            cusparseDestroy(h);
        }
    }
#endif
    (void)ctx;
}

