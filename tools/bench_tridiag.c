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
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/bench.h"
#include "cli.h"

#ifdef HB_HAVE_CUSPARSE
#include <cuda_runtime.h>
#include <cusparse.h>
#endif

static const char usage[] =
    "usage: hinesbatch bench tridiag [options]\n"
    "\n"
    "Batched tridiagonal solves on the paper's grid (m = 64..512 x 256..256,000\n"
    "systems; m = 1024..8192 x 20..20,000 systems), fp64 and fp32: our solver in\n"
    "both layouts beside cuSPARSE's gtsv2StridedBatch and gtsvInterleavedBatch\n"
    "(algo 0 and 1; D or S) when built with it; time (median of repeats),\n"
    "effective bandwidth (5 elements per unknown), percent of the copy bandwidth,\n"
    "and the ratio of the best cuSPARSE time to ours. Then accuracy (each precision)\n"
    "against a long-double CPU solution as m grows, and the device memory (fp64).\n"
    "\n"
    "  --backend B       cuda | omp | seq | best (default best)\n"
    "  --precision P     fp64 | fp32 | both (default both)\n"
    "  --repeats R       timed solves per configuration (default 20)\n"
    "  --max-unknowns N  skip grid points with m x systems > N (default: none on\n"
    "                    CUDA, 4,000,000 on the CPU)\n"
    "  --points LIST     these points instead of the grid (any sizes, in order),\n"
    "                    e.g. 64x256000,512x256000,300x1000\n"
    "  --variants LIST   also time ours under each tuning of LIST, ';'-separated\n"
    "                    tuning specs (docs/tuning.md; e.g.\n"
    "                    'gtsv.hint=1;gtsv.threads=128,gtsv.ahead=4')\n"
    "  --no-cusparse     skip cuSPARSE (faster A/B runs of --variants)\n"
    "  --seed S          random seed (default: the time)\n"
    "  --no-accuracy     skip the accuracy and memory tables\n"
    "  --json            one JSON document instead of the tables\n";

#define MAX_VARIANTS 16
#define MAX_POINTS 128
typedef struct {
    hb_backend_t backend;
    int repeats, accuracy, json, cusparse;
    int precisions; /* bit 0: fp64, bit 1: fp32 */
    long max_unknowns;
    int n_points; /* the (m, systems) run, in order: --points, else the paper's grid */
    int point_m[MAX_POINTS];
    long point_n[MAX_POINTS];
    int n_variants;
    char variant[MAX_VARIANTS][128];
    uint64_t seed;
} options_t;

/* The paper's grid. */
static const int grid_small_m[] = {64, 128, 256, 512};
static const long grid_small_n[] = {256, 2560, 25600, 256000};
static const int grid_large_m[] = {1024, 2048, 4096, 8192};
static const long grid_large_n[] = {20, 200, 2000, 20000};

static uint64_t rng;

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

typedef struct {
    double median, lo, hi; /* seconds; lo/hi: fastest and slowest repeat */
} timing_t;

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

/* Columns of the table. */
enum { OURS_FLAT, OURS_IL, OURS_THOMAS_IL, CS_STRIDED, CS_IL0, CS_IL1, N_COLS };
static const char *const col_name[N_COLS] = {"ours flat",      "ours interleaved",
                                             "ours thomas il", "cusparse strided",
                                             "cusparse il a0", "cusparse il a1"};
static const char *const col_key[N_COLS] = {"ours_flat",      "ours_interleaved",
                                            "ours_thomas_interleaved", "cusparse_strided",
                                            "cusparse_interleaved_algo0",
                                            "cusparse_interleaved_algo1"};

typedef struct {
    int m;
    long count;
    int sets;
    hb_precision_t prec;
    int have[N_COLS];
    timing_t t[N_COLS];
    hb_gtsv_algo_t algo_flat, algo_il;
    char plan_flat[128], plan_il[128]; /* hb_gtsv_describe */
    int var_have[MAX_VARIANTS][2];   /* --variants: [variant][interleaved] */
    timing_t var_t[MAX_VARIANTS][2];
    char var_plan[MAX_VARIANTS][2][128];
} point_t;

static size_t esize_of(hb_precision_t prec)
{
    return prec == HB_FLOAT32 ? sizeof(float) : sizeof(double);
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

static int run_point(hb_context_t *ctx, const options_t *o, int m, long count,
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

/* Best (smallest median) of the cuSPARSE columns, or 0. */
static double best_cusparse(const point_t *pt)
{
    double best = 0.0;
    for (int c = CS_STRIDED; c <= CS_IL1; ++c)
        if (pt->have[c] && (best == 0.0 || pt->t[c].median < best)) best = pt->t[c].median;
    return best;
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

enum { ACC_OURS_FLAT, ACC_OURS_IL, ACC_OURS_THOMAS, ACC_CS_STRIDED, ACC_CS_IL0, ACC_CS_IL1, N_ACC };

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

static void accuracy(hb_context_t *ctx, hb_precision_t prec, int m, long count,
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
static void memory_row(hb_context_t *ctx, int m, long count, double mb[5], int have[5])
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

/* ---- output ---- */

static const char *prec_name(hb_precision_t prec) { return prec == HB_FLOAT32 ? "fp32" : "fp64"; }

static void print_point_text(const point_t *pt, const options_t *o, double copy_bw)
{
    const double unknowns = (double)pt->m * (double)pt->count;
    const double bytes = 5.0 * (double)esize_of(pt->prec) * unknowns;
    const double best_cs = best_cusparse(pt);
    printf("%4s %5d %7ld", prec_name(pt->prec), pt->m, pt->count);
    for (int c = 0; c < N_COLS; ++c) {
        if (!pt->have[c]) {
            printf(" %21s", "-");
            continue;
        }
        const double bw = bytes / pt->t[c].median;
        printf(" %8.1f %5.2f %5.1f%%", pt->t[c].median * 1e6, bw / 1e12, 100.0 * bw / copy_bw);
    }
    for (int c = OURS_FLAT; c <= OURS_IL; ++c)
        if (best_cs > 0.0 && pt->have[c])
            printf(" %6.2f", best_cs / pt->t[c].median);
        else
            printf(" %6s", "-");
    printf("  [%s | %s]\n", pt->plan_flat, pt->plan_il);
    for (int v = 0; v < o->n_variants; ++v) {
        printf("      variant '%s':", o->variant[v]);
        for (int il = 0; il < 2; ++il) {
            if (!pt->var_have[v][il]) {
                printf(" %s -", il ? "il" : "flat");
                continue;
            }
            const double t = pt->var_t[v][il].median, base = pt->t[il ? OURS_IL : OURS_FLAT].median;
            printf(" %s %8.1f us %5.1f%% (%.3fx the rule) [%s]", il ? "il" : "flat", t * 1e6,
                   100.0 * bytes / t / copy_bw, base / t, pt->var_plan[v][il]);
        }
        printf("\n");
    }
}

static void print_timing_json(const timing_t *t, double bytes, double copy_bw)
{
    printf("{\"median_s\": %.6e, \"min_s\": %.6e, \"max_s\": %.6e, \"bandwidth_Bps\": %.6e, "
           "\"copy_fraction\": %.4f}",
           t->median, t->lo, t->hi, bytes / t->median, bytes / t->median / copy_bw);
}

static void print_point_json(const point_t *pt, const options_t *o, double copy_bw, int first)
{
    const double bytes = 5.0 * (double)esize_of(pt->prec) * (double)pt->m * (double)pt->count;
    const double best_cs = best_cusparse(pt);
    printf("%s\n    {\"precision\": \"%s\", \"m\": %d, \"systems\": %ld, \"input_sets\": %d, "
           "\"min_bytes\": %.0f, \"algo_flat\": \"%s\", \"algo_interleaved\": \"%s\", "
           "\"plan_flat\": \"%s\", \"plan_interleaved\": \"%s\"",
           first ? "" : ",", prec_name(pt->prec), pt->m, pt->count, pt->sets, bytes,
           hb_gtsv_algo_name(pt->algo_flat), hb_gtsv_algo_name(pt->algo_il), pt->plan_flat,
           pt->plan_il);
    for (int c = 0; c < N_COLS; ++c) {
        if (!pt->have[c]) continue;
        printf(", \"%s\": ", col_key[c]);
        print_timing_json(&pt->t[c], bytes, copy_bw);
    }
    if (best_cs > 0.0) {
        printf(", \"best_cusparse_s\": %.6e", best_cs);
        if (pt->have[OURS_FLAT]) printf(", \"ratio_flat\": %.4f", best_cs / pt->t[OURS_FLAT].median);
        if (pt->have[OURS_IL])
            printf(", \"ratio_interleaved\": %.4f", best_cs / pt->t[OURS_IL].median);
    }
    if (o->n_variants) {
        printf(", \"variants\": [");
        for (int v = 0; v < o->n_variants; ++v) {
            printf("%s{\"tuning\": ", v ? ", " : "");
            cli_json_string(stdout, o->variant[v]);
            for (int il = 0; il < 2; ++il) {
                if (!pt->var_have[v][il]) continue;
                printf(", \"%s\": ", il ? "interleaved" : "flat");
                print_timing_json(&pt->var_t[v][il], bytes, copy_bw);
                printf(", \"plan_%s\": \"%s\"", il ? "interleaved" : "flat", pt->var_plan[v][il]);
            }
            printf("}");
        }
        printf("]");
    }
    printf("}");
}

static const char *const acc_name[N_ACC] = {"ours flat", "ours il", "ours thomas", "cs strided",
                                            "cs il a0", "cs il a1"};
static const char *const acc_key[N_ACC] = {"ours_flat", "ours_interleaved", "ours_thomas",
                                           "cusparse_strided", "cusparse_interleaved_algo0",
                                           "cusparse_interleaved_algo1"};
static const char *const mem_key[5] = {"ours_auto", "ours_thomas", "cusparse_strided",
                                       "cusparse_interleaved_algo0", "cusparse_interleaved_algo1"};

/* --points: MxN[,MxN...], any sizes (the grid's or not), run in the order given. */
static int parse_points(const char *command, const char *value, void *opts)
{
    options_t *o = opts;
    o->n_points = 0;
    for (const char *c = value; c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL) {
        int pm = 0, used = 0;
        long pn = 0;
        if (sscanf(c, "%dx%ld%n", &pm, &pn, &used) != 2 || pm < 1 || pn < 1 ||
            (c[used] != ',' && c[used] != '\0')) {
            cli_fail(command, "--points '%s': expected MxN[,MxN...] with M, N >= 1", value);
            return 0;
        }
        if (o->n_points == MAX_POINTS) {
            cli_fail(command, "--points '%s': at most %d points", value, MAX_POINTS);
            return 0;
        }
        o->point_m[o->n_points] = pm;
        o->point_n[o->n_points++] = pn;
    }
    return 1;
}

/* --variants: ';'-separated tunings, each checked by parsing it. */
static int parse_variants(const char *command, const char *value, void *options)
{
    options_t *o = options;
    o->n_variants = 0;
    for (const char *c = value; c;) {
        const char *end = strchr(c, ';');
        const size_t len = end ? (size_t)(end - c) : strlen(c);
        if (o->n_variants == MAX_VARIANTS || len >= sizeof o->variant[0]) {
            cli_fail(command, "--variants: at most %d tunings of under %zu characters",
                     MAX_VARIANTS, sizeof o->variant[0]);
            return 0;
        }
        memcpy(o->variant[o->n_variants], c, len);
        o->variant[o->n_variants][len] = '\0';
        hb_tuning_t tuning;
        if (hb_tuning_parse(o->variant[o->n_variants], &tuning) != HB_SUCCESS) {
            cli_fail(command, "--variants: %s", hb_last_error());
            return 0;
        }
        ++o->n_variants;
        c = end ? end + 1 : NULL;
    }
    return 1;
}

/* CLI_CONTINUE, or the exit status (0 after --help, 2 after an error message). */
static int parse_options(int argc, char **argv, options_t *o)
{
    static const cli_choice_t backends[] = {{"cuda", HB_BACKEND_CUDA}, {"omp", HB_BACKEND_OMP},
                                            {"seq", HB_BACKEND_SEQ},   {"best", HB_BACKEND_BEST},
                                            {NULL, 0}};
    static const cli_choice_t precisions[] = {{"fp64", 1}, {"fp32", 2}, {"both", 3}, {NULL, 0}};
    int backend = HB_BACKEND_BEST; /* the table writes ints and longs: copied to o below */
    long seed = -1;                /* -1: none given, o->seed stays the time */
    o->repeats = 20;
    o->cusparse = 1;
    o->precisions = 3;
    o->n_points = 0;
    o->n_variants = 0;
    o->accuracy = 1;
    o->json = 0;
    o->max_unknowns = -1;
    o->seed = (uint64_t)time(NULL);
    const cli_option_t options[] = {
        CLI_FLAG("--json", &o->json, 1),
        CLI_FLAG("--no-accuracy", &o->accuracy, 0),
        CLI_FLAG("--no-cusparse", &o->cusparse, 0),
        CLI_CHOICE("--precision", &o->precisions, precisions),
        CLI_CUSTOM("--points", parse_points, o),
        CLI_CUSTOM("--variants", parse_variants, o),
        CLI_INT("--repeats", &o->repeats, 1, 1000, "1..1000"),
        CLI_INT("--max-unknowns", &o->max_unknowns, 1, 2000000000L, "1..2e9"),
        CLI_INT("--seed", &seed, 0, 2000000000L, "0..2e9"),
        CLI_CHOICE("--backend", &backend, backends),
    };
    const int parsed = cli_parse_options("bench tridiag", usage, options,
                                         sizeof options / sizeof *options, argc, argv);
    o->backend = (hb_backend_t)backend;
    if (seed >= 0) o->seed = (uint64_t)seed;
    if (o->n_points == 0) /* no --points: the paper's grid */
        for (int part = 0; part < 2; ++part)
            for (int mi = 0; mi < 4; ++mi)
                for (int ni = 0; ni < 4; ++ni, ++o->n_points) {
                    o->point_m[o->n_points] = part ? grid_large_m[mi] : grid_small_m[mi];
                    o->point_n[o->n_points] = part ? grid_large_n[ni] : grid_small_n[ni];
                }
    return parsed;
}

int cli_bench_tridiag(int argc, char **argv)
{
    options_t o;
    const int parsed = parse_options(argc, argv, &o);
    if (parsed != CLI_CONTINUE) return parsed;
    hb_context_t *ctx = NULL;
    hb_status_t st = hb_context_create(o.backend, &ctx);
    if (st != HB_SUCCESS) return cli_fail_status("bench tridiag", st);
    const int cuda = hb_context_backend(ctx) == HB_BACKEND_CUDA;
    if (o.max_unknowns < 0) o.max_unknowns = cuda ? 2000000000L : 4000000L;
    rng = o.seed ? o.seed : 1;
    double copy_bw = 0.0;
    st = hb_context_copy_bandwidth(ctx, (size_t)1 << 31, 10, &copy_bw);
    if (st != HB_SUCCESS) {
        hb_context_destroy(ctx);
        return cli_fail_status("bench tridiag", st);
    }
    const double l2 = cuda ? 50e6 : 32e6; /* H100 L2 50 MB; a typical host's last level */
#ifdef HB_HAVE_CUSPARSE
    const int with_cusparse = cuda;
#else
    const int with_cusparse = 0;
#endif
    if (o.json) {
        printf("{\"benchmark\": \"tridiag\", \"device\": ");
        cli_json_string(stdout, hb_context_device_name(ctx));
        printf(", \"backend\": \"%s\", \"precisions\": \"%s\", \"copy_bandwidth_Bps\": %.6e, "
               "\"repeats\": %d, \"seed\": %llu, \"cusparse\": %s, \"grid\": [",
               hb_backend_name(hb_context_backend(ctx)),
               o.precisions == 3 ? "fp64 fp32" : o.precisions == 2 ? "fp32" : "fp64", copy_bw,
               o.repeats, (unsigned long long)o.seed,
               with_cusparse && o.cusparse ? "true" : "false");
    } else {
        printf("device: %s (%s); copy bandwidth %.3f TB/s (read + write, 2 GiB, median of 10); "
               "median of %d repeats; seed %llu%s\n",
               hb_context_device_name(ctx), hb_backend_name(hb_context_backend(ctx)),
               copy_bw / 1e12, o.repeats, (unsigned long long)o.seed,
               !with_cusparse ? "; cuSPARSE not built in" : o.cusparse ? "" : "; cuSPARSE skipped");
        printf("per solver: time [us], effective bandwidth [TB/s], %% of copy; ratio = best "
               "cuSPARSE time / ours; [our plans: flat | interleaved]\n%4s %5s %7s", "prec", "m",
               "systems");
        for (int c = 0; c < N_COLS; ++c) printf(" %21s", col_name[c]);
        printf(" %6s %6s\n", "r.flat", "r.il");
    }
    int first = 1, failures = 0;
    for (int pi = 0; pi < 2; ++pi) {
        if (!(o.precisions & (1 << pi))) continue;
        const hb_precision_t prec = pi ? HB_FLOAT32 : HB_FLOAT64;
        for (int k = 0; k < o.n_points; ++k) {
            const int m = o.point_m[k];
            const long count = o.point_n[k];
            if ((double)m * (double)count > (double)o.max_unknowns) continue;
            point_t *pt = malloc(sizeof *pt);
            if (!pt || !run_point(ctx, &o, m, count, prec, l2, pt)) {
                free(pt);
                ++failures;
                continue;
            }
            if (o.json)
                print_point_json(pt, &o, copy_bw, first);
            else
                print_point_text(pt, &o, copy_bw);
            free(pt);
            first = 0;
            fflush(stdout);
        }
    }
    if (o.json) printf("\n  ]");
    if (o.accuracy) {
        static const int acc_m[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192};
        const long acc_count = 64;
        if (o.json)
            printf(", \"accuracy\": {\"systems\": %ld, \"dominance\": \"|d| = (|dl| + |du|)(1 + "
                   "U[0.001, 0.01])\", \"rows\": [",
                   acc_count);
        else {
            printf("\naccuracy: largest relative 2-norm error of %ld weakly dominant systems "
                   "(|d| = (|dl|+|du|)(1 + U[0.001, 0.01])) against long-double Thomas on the "
                   "same coefficients (fp32: rounded to float)\n%4s %5s",
                   acc_count, "prec", "m");
            for (int c = 0; c < N_ACC; ++c) printf(" %11s", acc_name[c]);
            printf("\n");
        }
        int rows = 0;
        for (int pi = 0; pi < 2; ++pi)
            for (int k = 0; k < 8 && (o.precisions & (1 << pi)); ++k) {
                const hb_precision_t prec = pi ? HB_FLOAT32 : HB_FLOAT64;
                double err[N_ACC];
                int have[N_ACC];
                accuracy(ctx, prec, acc_m[k], acc_count, err, have);
                if (o.json) {
                    printf("%s\n    {\"precision\": \"%s\", \"m\": %d", rows++ ? "," : "",
                           prec_name(prec), acc_m[k]);
                    for (int c = 0; c < N_ACC; ++c)
                        if (have[c]) printf(", \"%s\": %.3e", acc_key[c], err[c]);
                    printf("}");
                } else {
                    printf("%4s %5d", prec_name(prec), acc_m[k]);
                    for (int c = 0; c < N_ACC; ++c)
                        if (have[c])
                            printf(" %11.2e", err[c]);
                        else
                            printf(" %11s", "-");
                    printf("\n");
                }
            }
        const long mem_count = 20000;
        if (o.json)
            printf("\n  ]}, \"memory\": {\"systems\": %ld, \"what\": \"device bytes: inputs, x "
                   "(ours; cuSPARSE solves in place) and workspace\", \"rows\": [",
                   mem_count);
        else
            printf("\ndevice memory [MB] for %ld systems (inputs + x + workspace; cuSPARSE: in "
                   "place)\n%5s %11s %11s %11s %11s %11s\n",
                   mem_count, "m", "ours auto", "ours thomas", "cs strided", "cs il a0",
                   "cs il a1");
        for (int k = 0; k < 8; ++k) {
            double mb[5];
            int have[5];
            memory_row(ctx, acc_m[k], mem_count, mb, have);
            if (o.json) {
                printf("%s\n    {\"m\": %d", k ? "," : "", acc_m[k]);
                for (int c = 0; c < 5; ++c)
                    if (have[c]) printf(", \"%s_MB\": %.1f", mem_key[c], mb[c]);
                printf("}");
            } else {
                printf("%5d", acc_m[k]);
                for (int c = 0; c < 5; ++c)
                    if (have[c])
                        printf(" %11.1f", mb[c]);
                    else
                        printf(" %11s", "-");
                printf("\n");
            }
        }
        if (o.json) printf("\n  ]}");
    }
    if (o.json) printf("\n}\n");
    hb_context_destroy(ctx);
    return failures ? 1 : 0;
}
