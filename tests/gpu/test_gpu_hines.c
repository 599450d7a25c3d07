/*
 * GPU test of the batched Hines solvers (run on a machine with a CUDA device;
 * CI has none and runs the CPU twins in tests/test_solver.c and test_cable.c).
 *
 * Every CUDA kernel, layout and block size against the CPU sequential solver on
 * real morphologies: relative difference per system below 1e-12. Inputs are
 * fresh random systems every run (seed printed); result buffers are poisoned
 * with NaN before every read; every library call's status is checked (the
 * library checks every CUDA return code and reports it as a status).
 *
 * Usage: test_gpu_hines DATA_DIR   (a folder of .swc files)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/bench.h"
#include "hinesbatch.h"
#include "test_random.h"


typedef struct {
    int m, cells;
    const int *parent;
    double *u, *l, *d, *rhs; /* natural order, cells x m */
    double *x;               /* CPU sequential solutions */
} problem_t;

/* same_coefficients: every cell gets the cable's u and l (the library then
 * reads them once per row); else each cell's are scaled by its own factor. */
static int make_problem(const hb_cable_t *cable, int cells, int same_coefficients, problem_t *p)
{
    const int m = hb_cable_size(cable);
    p->m = m;
    p->cells = cells;
    p->parent = hb_cable_parent(cable);
    size_t n = (size_t)m * (size_t)cells;
    p->u = malloc(n * sizeof(double));
    p->l = malloc(n * sizeof(double));
    p->d = malloc(n * sizeof(double));
    p->rhs = malloc(n * sizeof(double));
    p->x = malloc(n * sizeof(double));
    double *v = malloc((size_t)m * sizeof *v), *g = malloc((size_t)m * sizeof *g);
    double *dd = malloc((size_t)m * sizeof *dd);
    if (!p->u || !p->l || !p->d || !p->rhs || !p->x || !v || !g || !dd) return 0;
    for (int s = 0; s < cells; s++) {
        double *u = p->u + (size_t)s * m, *l = p->l + (size_t)s * m, *d = p->d + (size_t)s * m,
               *r = p->rhs + (size_t)s * m, *x = p->x + (size_t)s * m;
        for (int i = 0; i < m; i++) {
            v[i] = -80.0 + 60.0 * uniform();
            g[i] = 1e-5 + 1e-2 * uniform(); /* some cells leaky, some not */
        }
        CHECK_OK(hb_cable_offdiag(cable, u, l));
        if (!same_coefficients && s > 0) { /* as if Ra differed per cell */
            const double f = 0.5 + uniform();
            for (int i = 0; i < m; i++) {
                u[i] *= f;
                l[i] *= f;
            }
        }
        CHECK_OK(hb_cable_step_system(cable, 0.005 + 0.1 * uniform(), u, l, v, g, NULL, NULL, d, r));
        memcpy(dd, d, (size_t)m * sizeof *dd);
        memcpy(x, r, (size_t)m * sizeof *x);
        CHECK_OK(hb_hines_solve(m, p->parent, u, l, dd, x));
    }
    free(v);
    free(g);
    free(dd);
    return 1;
}

static void free_problem(problem_t *p)
{
    free(p->u);
    free(p->l);
    free(p->d);
    free(p->rhs);
    free(p->x);
}

/* max over systems of ||x - x_cpu||_inf / ||x_cpu||_inf, checked < 1e-12. */
static double compare(const problem_t *p, hb_batch_t *batch, const char *what)
{
    double *x = malloc((size_t)p->m * sizeof *x), worst = 0.0;
    for (int s = 0; s < p->cells; s++) {
        for (int i = 0; i < p->m; i++) x[i] = NAN; /* poison */
        CHECK_OK(hb_batch_get(batch, s, NULL, NULL, NULL, x));
        const double *ref = p->x + (size_t)s * p->m;
        double num = 0.0, den = 0.0;
        for (int i = 0; i < p->m; i++) {
            double e = fabs(x[i] - ref[i]);
            if (!(e <= num)) num = e; /* NaN propagates */
            if (fabs(ref[i]) > den) den = fabs(ref[i]);
        }
        double rel = num / den;
        if (!(rel <= worst)) worst = rel;
    }
    free(x);
    CHECKF(worst < 1e-12, "%s: max relative difference %.3g", what, worst);
    return worst;
}

static void run_algorithms(hb_context_t *ctx, const problem_t *p, const char *name)
{
    static const struct {
        hb_layout_t layout;
        int bs;
    } layouts[] = {{HB_LAYOUT_FLAT, 1},   {HB_LAYOUT_INTERLEAVED, 1}, {HB_LAYOUT_BLOCK, 32},
                   {HB_LAYOUT_BLOCK, 64}, {HB_LAYOUT_BLOCK, 7},       {HB_LAYOUT_BLOCK, 128}};
    for (size_t k = 0; k < sizeof layouts / sizeof *layouts; k++) {
        hb_batch_t *batch, *source;
        CHECK_OK(hb_batch_create(ctx, p->m, p->parent, p->cells, layouts[k].layout, layouts[k].bs,
                                 &source));
        CHECK_OK(hb_batch_create(ctx, p->m, p->parent, p->cells, layouts[k].layout, layouts[k].bs,
                                 &batch));
        for (int s = 0; s < p->cells; s++)
            CHECK_OK(hb_batch_set(source, s, p->u + (size_t)s * p->m, p->l + (size_t)s * p->m,
                                  p->d + (size_t)s * p->m, p->rhs + (size_t)s * p->m));
        for (int algo = HB_HINES_ALGO_AUTO; algo <= HB_HINES_ALGO_BRANCHED; algo++) {
            char what[256];
            snprintf(what, sizeof what, "%s m=%d cells=%d layout=%s bs=%d algo=%s", name, p->m,
                     p->cells, hb_layout_name(layouts[k].layout), layouts[k].bs,
                     hb_hines_algo_name((hb_hines_algo_t)algo));
            CHECK_OK(hb_batch_convert(source, batch)); /* device copy after the first upload */
            CHECK_OK(hb_batch_set_algorithm(batch, (hb_hines_algo_t)algo));
            hb_status_t status = hb_batch_solve(batch);
            if (status == HB_ERR_NOT_SUPPORTED) {
                /* A shape rule, not a failure: it must say why. */
                CHECKF(strlen(hb_last_error()) > 10, "%s: unsupported without a reason", what);
                continue;
            }
            CHECKF(status == HB_SUCCESS, "%s: %s", what, hb_last_error());
            double err = compare(p, batch, what);
            if (p->cells >= 1000 && layouts[k].bs <= 32)
                printf("  %-90s rel diff %.2e\n", what, err);
        }
        /* Benchmarks restore d and rhs from the source every time: same answers. */
        double t[3];
        CHECK_OK(hb_batch_set_algorithm(batch, HB_HINES_ALGO_AUTO));
        CHECK_OK(hb_batch_benchmark(batch, source, 3, t));
        CHECK(t[0] > 0.0 && t[1] > 0.0 && t[2] > 0.0);
        compare(p, batch, "after hb_batch_benchmark");
        /* Uploads move only the arrays that changed (batch.c host_dirty): new d and rhs
         * alone are solved with the u and l already on the device... */
        for (int s = 0; s < p->cells; s++)
            CHECK_OK(hb_batch_set(batch, s, NULL, NULL, p->d + (size_t)s * p->m,
                                  p->rhs + (size_t)s * p->m));
        CHECK_OK(hb_batch_solve(batch));
        compare(p, batch, "after setting d and rhs only");
        /* ... and a changed u alone does go up: solve with u doubled, then put u, d and rhs
         * back (l untouched) and solve again. */
        double *u2 = malloc((size_t)p->m * sizeof *u2);
        for (int s = 0; s < p->cells && u2; s++) {
            for (int i = 0; i < p->m; i++) u2[i] = 2.0 * p->u[(size_t)s * p->m + i];
            CHECK_OK(hb_batch_set(batch, s, u2, NULL, p->d + (size_t)s * p->m,
                                  p->rhs + (size_t)s * p->m));
        }
        CHECK_OK(hb_batch_solve(batch));
        for (int s = 0; s < p->cells; s++)
            CHECK_OK(hb_batch_set(batch, s, p->u + (size_t)s * p->m, NULL,
                                  p->d + (size_t)s * p->m, p->rhs + (size_t)s * p->m));
        CHECK_OK(hb_batch_solve(batch));
        compare(p, batch, "after setting u back alone");
        free(u2);
        hb_batch_destroy(batch);
        hb_batch_destroy(source);
    }
}

/* The raw host-array entry point on CUDA, against the CPU. */
static void run_host_arrays(hb_context_t *ctx, const problem_t *p)
{
    const int n = p->cells, m = p->m;
    size_t size = hb_layout_size(HB_LAYOUT_INTERLEAVED, m, n, 1);
    double *u = malloc(size * sizeof *u), *l = malloc(size * sizeof *l),
           *d = malloc(size * sizeof *d), *r = malloc(size * sizeof *r);
    for (int s = 0; s < n; s++)
        for (int i = 0; i < m; i++) {
            size_t k = hb_layout_index(HB_LAYOUT_INTERLEAVED, m, n, 1, s, i);
            u[k] = p->u[(size_t)s * m + i];
            l[k] = p->l[(size_t)s * m + i];
            d[k] = p->d[(size_t)s * m + i];
            r[k] = p->rhs[(size_t)s * m + i];
        }
    CHECK_OK(hb_hines_solve_batch(ctx, m, p->parent, u, l, d, r, HB_LAYOUT_INTERLEAVED, 1, n));
    double worst = 0.0; /* per system: ||x - x_cpu||_inf / ||x_cpu||_inf, as compare() */
    for (int s = 0; s < n; s++) {
        double num = 0.0, den = 0.0;
        for (int i = 0; i < m; i++) {
            double ref = p->x[(size_t)s * m + i];
            double e = fabs(r[hb_layout_index(HB_LAYOUT_INTERLEAVED, m, n, 1, s, i)] - ref);
            if (!(e <= num)) num = e;
            if (fabs(ref) > den) den = fabs(ref);
        }
        if (!(num / den <= worst)) worst = num / den;
    }
    CHECKF(worst < 1e-12, "hb_hines_solve_batch on CUDA: rel diff %.3g", worst);
    free(u);
    free(l);
    free(d);
    free(r);
}

int main(int argc, char **argv)
{
    if (!hb_backend_available(HB_BACKEND_CUDA)) { /* ctest: SKIP_RETURN_CODE 77 */
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: test_gpu_hines DATA_DIR\n");
        return 2;
    }
    /* line by line: a run stopped by a time limit (run_sanitizer.sh) still shows its progress */
    setvbuf(stdout, NULL, _IOLBF, 0);
    rng_state = test_seed("test_gpu_hines");

    CHECKF(hb_backend_available(HB_BACKEND_CUDA), "no CUDA device: this test needs one");
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_CUDA, &ctx));
    if (!ctx) return check_summary("gpu_hines");
    printf("device: %s, %d visible\n", hb_context_device_name(ctx), hb_context_devices(ctx));
    /* HB_TEST_TUNING: measurement overrides of the kernels' shapes on this context (docs/tuning.md;
     * tests/gpu/run_all.sh runs the branched kernel with branched.lanes=32,... this way) */
    const char *tuning = getenv("HB_TEST_TUNING");
    if (tuning) {
        CHECK_OK(hb_context_set_tuning(ctx, tuning));
        printf("tuning: %s\n", tuning);
    }

    static const char *files[] = {"v_e_purk2.CNG.swc", "HSN-fluoro01.CNG.swc", "c91662.swc",
                                  "morph_ca1_n120.swc", "Cha-F-200000.CNG.swc",
                                  "041018-zA.CNG.swc"};
    /* HB_TEST_COUNTS: a comma list of cell counts instead (a slow run under
     * compute-sanitizer: tests/gpu/run_sanitizer.sh) */
    int cell_counts[8] = {1, 5, 33, 300, 2049}, n_counts = 5;
    const char *counts = getenv("HB_TEST_COUNTS");
    if (counts) {
        n_counts = 0;
        for (const char *at = counts; *at && n_counts < 8;) {
            char *end = NULL;
            const long c = strtol(at, &end, 10);
            const int ok = end != at && c >= 1 && c <= 100000 && (*end == ',' || *end == '\0');
            CHECKF(ok, "HB_TEST_COUNTS '%s': expected a comma list of cell counts", counts);
            if (!ok) break;
            cell_counts[n_counts++] = (int)c;
            at = *end ? end + 1 : end;
        }
        if (n_counts == 0) return check_summary("gpu_hines");
    }
    for (size_t f = 0; f < sizeof files / sizeof *files; f++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", argv[1], files[f]);
        hb_morph_t *morph = NULL;
        CHECK_OK(hb_morph_load_swc(path, NULL, &morph));
        if (!morph) continue;
        for (int scheme = 0; scheme < 2; scheme++) {
            hb_discretization_t disc;
            hb_discretization_default(&disc);
            disc.scheme = (hb_scheme_t)scheme;
            hb_cable_t *cable = NULL;
            CHECK_OK(hb_cable_create(morph, &disc, &cable));
            if (!cable) continue;
            for (int c = 0; c < n_counts; c++) {
                problem_t p;
                if (!make_problem(cable, cell_counts[c], (int)(c + f + (size_t)scheme) % 2, &p)) {
                    CHECK(!"out of host memory");
                    break;
                }
                run_algorithms(ctx, &p, files[f]);
                if (c == 2) run_host_arrays(ctx, &p);
                free_problem(&p);
            }
            hb_cable_destroy(cable);
        }
        hb_morph_destroy(morph);
    }
    /* A kernel the layout cannot take is refused with a reason. */
    {
        int parent[3] = {-1, 0, 1};
        hb_batch_t *batch;
        CHECK_OK(hb_batch_create(ctx, 3, parent, 10, HB_LAYOUT_FLAT, 1, &batch));
        CHECK_OK(hb_batch_set_algorithm(batch, HB_HINES_ALGO_BLOCK_SHARED));
        CHECK(hb_batch_solve(batch) == HB_ERR_NOT_SUPPORTED);
        CHECK(strstr(hb_last_error(), "BLOCK") != NULL);
        hb_batch_destroy(batch);
    }
    hb_context_destroy(ctx);
    return check_summary("gpu_hines");
}
