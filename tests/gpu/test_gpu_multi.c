/*
 * GPU test of mixed-morphology batches (hb_multi_* on CUDA; CI has no GPU and
 * runs the CPU twins of the same arithmetic in tests/test_multi.c and
 * tests/test_multi_plan.c).
 *
 * Every algorithm (AUTO, LEVELS, GROUPED, PER_CELL, SHAPES) on: random mixed batches
 * of random trees, the Figure 14 binary-tree cells, every real morphology of
 * DATA_DIR (whole and cut; d_lambda and one compartment per SWC segment, whose
 * largest cells exceed a block's shared memory and take GROUPED's global-memory
 * path), and batches large enough for GROUPED's many-rows grouping. For each:
 * every cell against the CPU sequential solver hb_hines_solve (relative
 * difference < 1e-12), outputs poisoned with NaN before every read, two solves
 * bitwise identical, hb_multi_benchmark's result bitwise a plain solve's, and
 * algorithm switches with results on the device. SHAPES must run every batch whose cells have
 * at most 4,000 rows, and may refuse (HB_ERR_NOT_SUPPORTED, naming the cell's rows) only
 * batches with larger ones. Every library call's status
 * is checked (the library checks every CUDA return code).
 *
 * Usage: test_gpu_multi DATA_DIR   (a folder of .swc files)
 * HB_TEST_TUNING: hb_context_set_tuning's spec for the CUDA context (e.g.
 * multi.shapes_bytes=16384,multi.shapes_split_rows=4), read here: the library reads no
 * environment.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "fig14_cells.h" /* tools/ */
#include "core/bench.h"
#include "hinesbatch.h"
#include "test_random.h"

typedef struct {
    int n;
    int *m;
    int **parent;
    double **u, **l, **d, **rhs, **x; /* natural order; x: CPU sequential solution */
    size_t rows;
} batch_t;

static void batch_init(batch_t *b, int n)
{
    memset(b, 0, sizeof *b);
    b->n = n;
    b->m = calloc((size_t)n, sizeof *b->m);
    b->parent = calloc((size_t)n, sizeof *b->parent);
    b->u = calloc((size_t)n, sizeof *b->u);
    b->l = calloc((size_t)n, sizeof *b->l);
    b->d = calloc((size_t)n, sizeof *b->d);
    b->rhs = calloc((size_t)n, sizeof *b->rhs);
    b->x = calloc((size_t)n, sizeof *b->x);
}

static void batch_free(batch_t *b)
{
    for (int c = 0; c < b->n; ++c) {
        free(b->parent[c]);
        free(b->u[c]);
        free(b->l[c]);
        free(b->d[c]);
        free(b->rhs[c]);
        free(b->x[c]);
    }
    free(b->m);
    free(b->parent);
    free(b->u);
    free(b->l);
    free(b->d);
    free(b->rhs);
    free(b->x);
}

/* Allocates cell c of m rows (parent filled by the caller, then cell_finish). */
static int *cell_alloc(batch_t *b, int c, int m)
{
    b->m[c] = m;
    b->rows += (size_t)m;
    b->parent[c] = malloc((size_t)m * sizeof(int));
    b->u[c] = calloc((size_t)m, sizeof(double));
    b->l[c] = calloc((size_t)m, sizeof(double));
    b->d[c] = calloc((size_t)m, sizeof(double));
    b->rhs[c] = calloc((size_t)m, sizeof(double));
    b->x[c] = calloc((size_t)m, sizeof(double));
    b->parent[c][0] = -1;
    return b->parent[c];
}

/* The CPU sequential solution of cell c. */
static void cell_reference(batch_t *b, int c)
{
    const int m = b->m[c];
    double *dd = malloc((size_t)m * sizeof *dd);
    memcpy(dd, b->d[c], (size_t)m * sizeof *dd);
    memcpy(b->x[c], b->rhs[c], (size_t)m * sizeof(double));
    CHECK_OK(hb_hines_solve(m, b->parent[c], b->u[c], b->l[c], dd, b->x[c]));
    free(dd);
}

/* Random diagonally dominant values on the cell's tree. */
static void cell_random_values(batch_t *b, int c)
{
    const int m = b->m[c];
    const int *p = b->parent[c];
    double *u = b->u[c], *l = b->l[c], *d = b->d[c], *r = b->rhs[c];
    for (int i = 0; i < m; ++i) {
        d[i] = 0.5 + uniform();
        r[i] = 2.0 * uniform() - 1.0;
    }
    for (int i = 1; i < m; ++i) {
        u[i] = -uniform();
        l[i] = -uniform();
        d[i] -= l[i];
        d[p[i]] -= u[i];
    }
    cell_reference(b, c);
}

/* A cable's system of one step at random voltages and leaks. */
static void cell_from_cable(batch_t *b, int c, const hb_cable_t *cable)
{
    const int m = hb_cable_size(cable);
    int *p = cell_alloc(b, c, m);
    memcpy(p, hb_cable_parent(cable), (size_t)m * sizeof *p);
    double *v = malloc((size_t)m * sizeof *v), *g = malloc((size_t)m * sizeof *g);
    for (int i = 0; i < m; ++i) {
        v[i] = -80.0 + 60.0 * uniform();
        g[i] = 1e-5 + 1e-2 * uniform();
    }
    CHECK_OK(hb_cable_offdiag(cable, b->u[c], b->l[c]));
    CHECK_OK(hb_cable_step_system(cable, 0.005 + 0.1 * uniform(), b->u[c], b->l[c], v, g, NULL,
                                  NULL, b->d[c], b->rhs[c]));
    free(v);
    free(g);
    cell_reference(b, c);
}

/* Copies cell `from` into cell `to` (same values: a cycled batch of real cells). */
static void cell_copy(batch_t *b, int to, int from)
{
    const int m = b->m[from];
    int *p = cell_alloc(b, to, m);
    memcpy(p, b->parent[from], (size_t)m * sizeof *p);
    memcpy(b->u[to], b->u[from], (size_t)m * sizeof(double));
    memcpy(b->l[to], b->l[from], (size_t)m * sizeof(double));
    memcpy(b->d[to], b->d[from], (size_t)m * sizeof(double));
    memcpy(b->rhs[to], b->rhs[from], (size_t)m * sizeof(double));
    memcpy(b->x[to], b->x[from], (size_t)m * sizeof(double));
}

/* Results of one solve, cell after cell (caller frees). NaN-poisoned before reading. */
static double *read_solution(hb_multi_t *mb, const batch_t *b)
{
    double *x = malloc(b->rows * sizeof *x);
    size_t off = 0;
    for (size_t k = 0; k < b->rows; ++k) x[k] = NAN;
    for (int c = 0; c < b->n; ++c) {
        CHECK_OK(hb_multi_get(mb, c, NULL, NULL, NULL, x + off));
        off += (size_t)b->m[c];
    }
    return x;
}

/* max over cells of ||x - x_cpu||_inf / ||x_cpu||_inf, checked < 1e-12. */
static double compare(const batch_t *b, const double *x, const char *what)
{
    double worst = 0.0;
    int worst_cell = -1;
    size_t off = 0;
    for (int c = 0; c < b->n; ++c) {
        double num = 0.0, den = 0.0;
        for (int i = 0; i < b->m[c]; ++i) {
            const double e = fabs(x[off + (size_t)i] - b->x[c][i]);
            if (!(e <= num)) num = e; /* NaN propagates */
            if (fabs(b->x[c][i]) > den) den = fabs(b->x[c][i]);
        }
        const double rel = den > 0.0 ? num / den : num;
        if (!(rel <= worst)) {
            worst = rel;
            worst_cell = c;
        }
        off += (size_t)b->m[c];
    }
    CHECKF(worst < 1e-12, "%s: max relative difference %.3g (cell %d)", what, worst, worst_cell);
    return worst;
}

static void set_all(hb_multi_t *mb, const batch_t *b)
{
    for (int c = 0; c < b->n; ++c)
        CHECK_OK(hb_multi_set(mb, c, b->u[c], b->l[c], b->d[c], b->rhs[c]));
}

/* AUTO on CUDA: SHAPES for cells of at most 4,000 rows repeating their trees (8 cells a tree
 * or more); else GROUPED up to 2^22 rows, or 2^24 for cells of 16 levels or more; LEVELS beyond
 * (core/multi.h, written out again here so that a change of rule shows). */
static hb_multi_algo_t auto_expected(const hb_multi_info_t *info, int max_m)
{
    if (info->cells >= 8 * info->shapes && max_m <= 4000) return HB_MULTI_ALGO_SHAPES;
    const size_t limit = info->levels >= 16 ? (size_t)1 << 24 : (size_t)1 << 22;
    return info->rows <= limit ? HB_MULTI_ALGO_GROUPED : HB_MULTI_ALGO_LEVELS;
}

/* Every algorithm on one batch. */
static void run_batch(hb_context_t *ctx, const batch_t *b, const char *name)
{
    hb_multi_t *mb = NULL;
    CHECK_OK(hb_multi_create(ctx, b->n, b->m, (const int *const *)b->parent, &mb));
    if (!mb) return;
    hb_multi_info_t info;
    CHECK_OK(hb_multi_info(mb, &info));
    printf("%s: %d cells, %zu rows, %d branches, %d levels, longest branch %d\n", name, info.cells,
           info.rows, info.branches, info.levels, info.max_branch_rows);
    const size_t bytes = b->rows * sizeof(double);
    double *first[5] = {NULL, NULL, NULL, NULL, NULL};
    int max_m = 0;
    for (int c = 0; c < b->n; ++c) max_m = b->m[c] > max_m ? b->m[c] : max_m;
    for (int algo = HB_MULTI_ALGO_AUTO; algo <= HB_MULTI_ALGO_SHAPES; ++algo) {
        char what[256];
        snprintf(what, sizeof what, "%s, %s", name, hb_multi_algo_name((hb_multi_algo_t)algo));
        CHECK_OK(hb_multi_set_algorithm(mb, (hb_multi_algo_t)algo));
        if (algo == HB_MULTI_ALGO_SHAPES && max_m > 4000) {
            set_all(mb, b);
            const hb_status_t status = hb_multi_solve(mb);
            if (status != HB_SUCCESS) {
                CHECKF(status == HB_ERR_NOT_SUPPORTED && strstr(hb_last_error(), "rows"),
                       "%s: cells up to %d rows: %s (%s)", what, max_m,
                       hb_status_string(status), hb_last_error());
                printf("  %-60s refused, cells up to %d rows: %s\n", what, max_m, hb_last_error());
                continue;
            }
        }
        if (algo == HB_MULTI_ALGO_AUTO) { /* docs/multi.md */
            const hb_multi_algo_t expect = auto_expected(&info, max_m);
            CHECKF(hb_multi_resolved_algorithm(mb) == expect, "%s: AUTO resolved to %s for %zu rows",
                   name, hb_multi_algo_name(hb_multi_resolved_algorithm(mb)), info.rows);
        }
        /* two solves of the same input: the same bits */
        set_all(mb, b);
        CHECK_OK(hb_multi_solve(mb));
        double *x1 = read_solution(mb, b);
        const double err = compare(b, x1, what);
        set_all(mb, b);
        CHECK_OK(hb_multi_solve(mb));
        double *x2 = read_solution(mb, b);
        CHECKF(memcmp(x1, x2, bytes) == 0, "%s: two solves differ bitwise", what);
        /* a benchmark restores its inputs: its result is a plain solve's */
        set_all(mb, b);
        double t[3] = {0, 0, 0};
        CHECK_OK(hb_multi_benchmark(mb, 3, t));
        CHECKF(t[0] > 0.0 && t[1] > 0.0 && t[2] > 0.0, "%s: benchmark times %g %g %g", what, t[0],
               t[1], t[2]);
        double *x3 = read_solution(mb, b);
        CHECKF(memcmp(x1, x3, bytes) == 0, "%s: benchmark result differs from a solve", what);
        printf("  %-60s rel diff %.2e, %.3e s per solve\n", what, err, t[1]);
        free(x2);
        free(x3);
        first[algo] = x1;
    }
    /* Switching layouts with the results on the device: u and l come back as set. */
    CHECK_OK(hb_multi_set_algorithm(mb, HB_MULTI_ALGO_LEVELS));
    set_all(mb, b);
    CHECK_OK(hb_multi_solve(mb));
    CHECK_OK(hb_multi_set_algorithm(mb, HB_MULTI_ALGO_PER_CELL));
    CHECK_OK(hb_multi_solve(mb)); /* solves the LEVELS result's d and rhs: any numbers */
    CHECK_OK(hb_multi_set_algorithm(mb, HB_MULTI_ALGO_GROUPED));
    set_all(mb, b);
    CHECK_OK(hb_multi_solve(mb));
    double *x4 = read_solution(mb, b);
    CHECKF(first[HB_MULTI_ALGO_GROUPED] && memcmp(first[HB_MULTI_ALGO_GROUPED], x4, bytes) == 0,
           "%s: GROUPED after switches differs", name);
    free(x4);
    for (int c = 0; c < b->n && c < 50; ++c) {
        const int m = b->m[c];
        double *u = malloc((size_t)m * sizeof *u), *l = malloc((size_t)m * sizeof *l);
        CHECK_OK(hb_multi_get(mb, c, u, l, NULL, NULL));
        int same = u[0] == 0.0 && l[0] == 0.0;
        for (int i = 1; i < m; ++i) same &= u[i] == b->u[c][i] && l[i] == b->l[c][i];
        CHECKF(same, "%s: cell %d: u, l changed", name, c);
        free(u);
        free(l);
    }
    if (first[HB_MULTI_ALGO_LEVELS] && first[HB_MULTI_ALGO_GROUPED])
        printf("  LEVELS and GROUPED bitwise %s\n",
               memcmp(first[HB_MULTI_ALGO_LEVELS], first[HB_MULTI_ALGO_GROUPED], bytes)
                   ? "different (round-off)"
                   : "equal");
    for (int k = 0; k < 5; ++k) free(first[k]);
    CHECK_OK(hb_multi_destroy(mb));
}

static void test_random(hb_context_t *ctx)
{
    static const int sizes[] = {1, 2, 3, 5, 17, 64, 200, 1000, 5000};
    for (int round = 0; round < 4; ++round) {
        const int n = round == 3 ? 3000 : 5 + (int)(uniform() * 300);
        batch_t b;
        batch_init(&b, n);
        for (int c = 0; c < n; ++c) {
            /* two statements: the operands of + are evaluated in no set order */
            const int size = sizes[(int)(uniform() * (round == 3 ? 7 : 9))];
            const int m = size + (int)(uniform() * 4);
            const int shape = (int)(uniform() * 5);
            int *p = cell_alloc(&b, c, m);
            for (int i = 1; i < m; ++i)
                p[i] = shape == 0   ? i - 1
                       : shape == 1 ? 0
                       : shape == 2 ? (i - 1) / 2
                       : shape == 3 ? (int)(uniform() * i)
                                    : (uniform() < 0.9 ? i - 1 : (int)(uniform() * i));
            cell_random_values(&b, c);
        }
        char name[64];
        snprintf(name, sizeof name, "random batch %d", round);
        run_batch(ctx, &b, name);
        batch_free(&b);
    }
}

/*
 * Long unbranched cells, alone and mixed: a staged group holding one long branch is
 * what CUDA 13.0's ptxas once miscompiled in GROUPED (chains of 1,001-2,000 rows solved
 * wrongly or faulting; multi_cuda.cu, grouped_levels).
 */
static void test_chains(hb_context_t *ctx)
{
    static const int lengths[] = {1001, 1500, 2000, 4000};
    for (int k = 0; k < 5; ++k) {
        const int n = k < 4 ? 1 : 7;
        batch_t b;
        batch_init(&b, n);
        for (int c = 0; c < n; ++c) {
            const int m = k < 4 ? lengths[k] : (c == 6 ? 1003 : 200 + 700 * c);
            int *p = cell_alloc(&b, c, m);
            for (int i = 1; i < m; ++i) p[i] = c == 6 ? (i - 1) / 2 : i - 1;
            cell_random_values(&b, c);
        }
        char name[64];
        if (k < 4)
            snprintf(name, sizeof name, "one chain of %d rows", lengths[k]);
        else
            snprintf(name, sizeof name, "six chains of 200-3,700 rows and a binary tree");
        run_batch(ctx, &b, name);
        batch_free(&b);
    }
}

static void test_fig14(hb_context_t *ctx)
{
    batch_t b;
    batch_init(&b, 3 * 700);
    for (int c = 0; c < b.n; ++c) {
        const int levels = 2 + c % 3, m = fig14_rows(levels);
        int *p = cell_alloc(&b, c, m);
        CHECK(fig14_parents(p, levels) == m);
        cell_random_values(&b, c);
    }
    run_batch(ctx, &b, "figure 14 cells, 2-4 levels");
    batch_free(&b);
}

static int compare_names(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every real cell (whole and cut to half) once, then cycled to `cycled` cells. */
static void test_real(hb_context_t *ctx, const char *dir, hb_cpolicy_t policy, int cycled)
{
    DIR *dp = opendir(dir);
    CHECKF(dp != NULL, "cannot open %s", dir);
    if (!dp) return;
    char *names[128];
    int files = 0;
    struct dirent *e;
    while ((e = readdir(dp)) && files < 128) {
        const size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".swc") == 0) names[files++] = strdup(e->d_name);
    }
    closedir(dp);
    qsort(names, (size_t)files, sizeof *names, compare_names);
    batch_t b;
    batch_init(&b, cycled);
    int n = 0;
    for (int f = 0; f < files; ++f) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, names[f]);
        hb_morph_t *morph = NULL, *half = NULL;
        if (hb_morph_load_swc(path, NULL, &morph) != HB_SUCCESS) continue; /* bad files exist */
        hb_morph_stats_t st;
        CHECK_OK(hb_morph_stats(morph, &st));
        CHECK_OK(hb_morph_cut(morph, st.points / 2 > 1 ? st.points / 2 : 1, &half));
        const hb_morph_t *pieces[2] = {morph, half};
        for (int k = 0; k < 2 && n < cycled; ++k) {
            hb_discretization_t disc;
            hb_discretization_default(&disc);
            disc.policy = policy;
            hb_cable_t *cable = NULL;
            if (!pieces[k]) continue;
            CHECK_OK(hb_cable_create(pieces[k], &disc, &cable));
            if (!cable) continue;
            cell_from_cable(&b, n++, cable);
            hb_cable_destroy(cable);
        }
        hb_morph_destroy(half);
        hb_morph_destroy(morph);
    }
    CHECKF(n >= 36, "only %d real cells", n);
    const int distinct = n;
    for (; n < cycled; ++n) cell_copy(&b, n, n % distinct);
    char name[128];
    snprintf(name, sizeof name, "real cells (%s), %d distinct", 
             policy == HB_CPOLICY_PER_SEGMENT ? "per segment" : "d_lambda", distinct);
    run_batch(ctx, &b, name);
    batch_free(&b);
    for (int f = 0; f < files; ++f) free(names[f]);
}

/* The parts of the test (HB_TEST_PARTS), a bit each. */
static const char *const part_names[] = {"chains", "random", "fig14", "real", "many"};
enum { PART_CHAINS = 1, PART_RANDOM = 2, PART_FIG14 = 4, PART_REAL = 8, PART_MANY = 16 };

/* The bits of the comma list `list` (NULL: every part); an unknown name fails the test. */
static unsigned parts_of(const char *list)
{
    const size_t n = sizeof part_names / sizeof *part_names;
    if (!list) return (1u << n) - 1;
    unsigned parts = 0;
    for (const char *at = list; *at;) {
        const size_t len = strcspn(at, ",");
        size_t k = 0;
        while (k < n && (strlen(part_names[k]) != len || strncmp(at, part_names[k], len) != 0))
            ++k;
        CHECKF(k < n, "HB_TEST_PARTS: unknown part '%.*s' (expected chains, random, fig14, real "
               "or many)", (int)len, at);
        if (k < n) parts |= 1u << k;
        at += at[len] ? len + 1 : len;
    }
    return parts;
}

int main(int argc, char **argv)
{
    if (!hb_backend_available(HB_BACKEND_CUDA)) { /* ctest: SKIP_RETURN_CODE 77 */
        printf("no CUDA device: skipped\n");
        return 77;
    }
    if (argc < 2) {
        fprintf(stderr, "usage: test_gpu_multi DATA_DIR\n");
        return 2;
    }
    /* line by line: a run stopped by a time limit (run_sanitizer.sh) still shows its progress */
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* HB_TEST_PARTS: a comma list of chains, random, fig14, real, many (default all), so
     * that a slow run (compute-sanitizer: tests/gpu/run_sanitizer.sh) can take a part. */
    const unsigned parts = parts_of(getenv("HB_TEST_PARTS"));
    rng_state = test_seed("test_gpu_multi");
    CHECKF(hb_backend_available(HB_BACKEND_CUDA), "no CUDA device: this test needs one");
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_CUDA, &ctx));
    if (!ctx) return check_summary("gpu_multi");
    const char *tuning = getenv("HB_TEST_TUNING");
    if (tuning && *tuning) {
        CHECK_OK(hb_context_set_tuning(ctx, tuning));
        printf("tuning: %s\n", tuning);
    }
    printf("device: %s\n", hb_context_device_name(ctx));
    if (parts & PART_CHAINS) test_chains(ctx);
    if (parts & PART_RANDOM) test_random(ctx);
    if (parts & PART_FIG14) test_fig14(ctx);
    if (parts & PART_REAL) {
        test_real(ctx, argv[1], HB_CPOLICY_D_LAMBDA, 36);
        test_real(ctx, argv[1], HB_CPOLICY_PER_SEGMENT, 36);
    }
    /* many rows: GROUPED's bandwidth grouping (3 blocks per multiprocessor) */
    if (parts & PART_MANY) test_real(ctx, argv[1], HB_CPOLICY_D_LAMBDA, 2000);
    hb_context_destroy(ctx);
    return check_summary("gpu_multi");
}
