/*
 * Mixed-morphology batches (hb_multi_*), CPU backends: every algorithm
 * (LEVELS, and the CPU twins of the CUDA kernels GROUPED and PER_CELL).
 *
 * (1) random mixed batches of random trees against hb_hines_solve per cell;
 * (2) every real morphology (whole and cut), discretised with d_lambda, in
 *     one batch against hb_hines_solve; (3) the paper's Figure-14 binary-tree
 *     cells and their level structure; (4) bitwise repeatability: runs, OMP
 *     thread counts, and LEVELS = GROUPED for any group size; (5) errors;
 *     (6) hb_multi_benchmark restores its inputs; (7) plan tables of batches that
 *     mix cells larger than a GPU group with small ones (hb_multi_plan_check);
 * (8) SHAPES: classes of identical trees, lanes and tiers, layout, accuracy and repeatability.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_data.h"
#include "core/bench.h"
#include "hinesbatch.h"
#include "core/multi.h" /* hb_multi_plan_grouped: group sizes for the tests */
#include "fig14_cells.h" /* tools/ */

static uint64_t rng_state = 0x5eed0005u;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double rng_unit(void) { return (double)(rng_next() >> 11) * 0x1.0p-53; }
static int rng_int(int n) { return (int)(rng_next() % (uint64_t)n); }

/* One cell: its tree and system (natural order). */
typedef struct {
    int m;
    int *parent;
    double *u, *l, *d, *rhs;
} cell_t;

static void cell_alloc(cell_t *c, int m)
{
    c->m = m;
    c->parent = malloc((size_t)m * sizeof *c->parent);
    c->u = calloc((size_t)m * 4, sizeof *c->u);
    c->l = c->u + m;
    c->d = c->l + m;
    c->rhs = c->d + m;
    c->parent[0] = -1;
}

static void cell_free(cell_t *c)
{
    free(c->parent);
    free(c->u);
}

/* Random diagonally dominant values for the cell's tree. */
static void cell_fill_random(cell_t *c)
{
    for (int i = 0; i < c->m; ++i) {
        c->d[i] = 0.5 + rng_unit();
        c->rhs[i] = 2.0 * rng_unit() - 1.0;
    }
    for (int i = 1; i < c->m; ++i) {
        c->u[i] = -rng_unit();
        c->l[i] = -rng_unit();
        c->d[i] -= c->l[i];
        c->d[c->parent[i]] -= c->u[i];
    }
}

enum { SHAPE_CHAIN, SHAPE_STAR, SHAPE_BINARY, SHAPE_RANDOM, SHAPE_LONG_BRANCHES, SHAPES };

static void cell_random_tree(cell_t *c, int m, int shape)
{
    cell_alloc(c, m);
    for (int i = 1; i < m; ++i) switch (shape) {
        case SHAPE_CHAIN: c->parent[i] = i - 1; break;
        case SHAPE_STAR: c->parent[i] = 0; break;
        case SHAPE_BINARY: c->parent[i] = (i - 1) / 2; break;
        case SHAPE_RANDOM: c->parent[i] = rng_int(i); break;
        default: c->parent[i] = rng_unit() < 0.9 ? i - 1 : rng_int(i); break;
        }
    cell_fill_random(c);
}

/* Max |x - ref| / max |ref| over a cell, and the residual max |A x - b| / max |b|. */
static void compare_cell(const cell_t *c, const double *x, double *rel_diff, double *residual)
{
    const int m = c->m;
    double *buf = malloc((size_t)m * 3 * sizeof *buf);
    double *dref = buf, *xref = buf + m, *ax = buf + 2 * m;
    memcpy(dref, c->d, (size_t)m * sizeof *dref);
    memcpy(xref, c->rhs, (size_t)m * sizeof *xref);
    CHECK_OK(hb_hines_solve(m, c->parent, c->u, c->l, dref, xref));
    CHECK_OK(hb_hines_matvec(m, c->parent, c->u, c->l, c->d, x, ax));
    double dmax = 0.0, xmax = 0.0, rmax = 0.0, bmax = 0.0;
    for (int i = 0; i < m; ++i) {
        dmax = fmax(dmax, fabs(x[i] - xref[i]));
        xmax = fmax(xmax, fabs(xref[i]));
        rmax = fmax(rmax, fabs(ax[i] - c->rhs[i]));
        bmax = fmax(bmax, fabs(c->rhs[i]));
    }
    *rel_diff = xmax > 0.0 ? dmax / xmax : dmax;
    *residual = bmax > 0.0 ? rmax / bmax : rmax;
    free(buf);
}

/*
 * Solves the cells as one multi batch; checks every cell against hb_hines_solve
 * and returns the solutions, concatenated (caller frees), or NULL.
 */
/* The tuning (hb_context_set_tuning) of the contexts solve_multi_algo makes; NULL: none. */
static const char *tuning = NULL;

static double *solve_multi_algo(const char *what, hb_backend_t backend, int threads,
                                const cell_t *cells, int n, hb_multi_info_t *info,
                                hb_multi_algo_t algo, size_t group_rows, int split_rows)
{
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(backend, &ctx));
    if (!ctx) return NULL;
    if (threads > 0) CHECK_OK(hb_context_set_threads(ctx, threads));
    if (tuning) CHECK_OK(hb_context_set_tuning(ctx, tuning));
    int *m = malloc((size_t)n * sizeof *m);
    const int **parents = malloc((size_t)n * sizeof *parents);
    size_t total = 0;
    for (int c = 0; c < n; ++c) {
        m[c] = cells[c].m;
        parents[c] = cells[c].parent;
        total += (size_t)m[c];
    }
    hb_multi_t *mb = NULL;
    double *x = NULL;
    CHECK_OK(hb_multi_create(ctx, n, m, parents, &mb));
    if (mb) {
        x = malloc(total * sizeof *x);
        for (int c = 0; c < n; ++c)
            CHECK_OK(hb_multi_set(mb, c, cells[c].u, cells[c].l, cells[c].d, cells[c].rhs));
        CHECK_OK(hb_multi_set_algorithm(mb, algo));
        if (split_rows >= 0) CHECK_OK(hb_multi_set_split_rows(mb, split_rows));
        if (group_rows) CHECK_OK(hb_multi_plan_grouped(mb, group_rows, mb->split_rows));
        CHECK_OK(hb_multi_solve(mb));
        if (info) CHECK_OK(hb_multi_info(mb, info));
        double worst_diff = 0.0, worst_res = 0.0;
        int worst = -1;
        size_t off = 0;
        for (int c = 0; c < n; ++c) {
            CHECK_OK(hb_multi_get(mb, c, NULL, NULL, NULL, x + off));
            double diff, res;
            compare_cell(&cells[c], x + off, &diff, &res);
            if (fmax(diff, res) > fmax(worst_diff, worst_res)) worst = c;
            worst_diff = fmax(worst_diff, diff);
            worst_res = fmax(worst_res, res);
            off += (size_t)cells[c].m;
        }
        CHECKF(worst_diff < 1e-12 && worst_res < 1e-12,
               "%s (%s, %d threads, %s, groups of %zu, split %d): worst cell %d: rel diff %.3g, "
               "residual %.3g",
               what, hb_backend_name(backend), threads, hb_multi_algo_name(algo), group_rows,
               split_rows,
               worst, worst_diff, worst_res);
        CHECK_OK(hb_multi_destroy(mb));
    }
    free(m);
    free(parents);
    CHECK_OK(hb_context_destroy(ctx));
    return x;
}

static double *solve_multi(const char *what, hb_backend_t backend, int threads, const cell_t *cells,
                           int n, hb_multi_info_t *info)
{
    return solve_multi_algo(what, backend, threads, cells, n, info, HB_MULTI_ALGO_AUTO, 0, -1);
}

static size_t total_rows(const cell_t *cells, int n)
{
    size_t total = 0;
    for (int c = 0; c < n; ++c) total += (size_t)cells[c].m;
    return total;
}

/* (4) A batch gives bitwise the same solution on every run and thread count. */
static void check_repeatable(const char *what, const cell_t *cells, int n)
{
    const size_t bytes = total_rows(cells, n) * sizeof(double);
    double *ref = solve_multi(what, HB_BACKEND_SEQ, 0, cells, n, NULL);
    double *again = solve_multi(what, HB_BACKEND_SEQ, 0, cells, n, NULL);
    CHECKF(ref && again && memcmp(ref, again, bytes) == 0, "%s: two SEQ solves differ", what);
    free(again);
    if (hb_backend_available(HB_BACKEND_OMP))
        for (int t = 1; t <= 3; ++t) {
            double *x = solve_multi(what, HB_BACKEND_OMP, t, cells, n, NULL);
            CHECKF(ref && x && memcmp(ref, x, bytes) == 0, "%s: OMP %d threads differs from SEQ",
                   what, t);
            free(x);
        }
    /* GROUPED (the CUDA kernel's twin) without split branches does each branch's arithmetic
     * as LEVELS does, in any grouping: the same bits. With split branches (every branch of 4
     * rows or more, the most splits, and the default) it agrees with the reference to round-off (checked in
     * solve_multi_algo) and gives the same bits in any grouping and thread count. PER_CELL
     * (Algorithm 1) agrees to round-off only. */
    static const size_t group_rows[] = {1, 300, 2048, (size_t)1 << 40};
    static const int splits[] = {0, HB_MULTI_MIN_SPLIT_ROWS, HB_MULTI_SPLIT_ROWS};
    for (int q = 0; q < 3; ++q) {
        double *first = NULL;
        for (int k = 0; k < 4; ++k) {
            const hb_backend_t be = k % 2 && hb_backend_available(HB_BACKEND_OMP)
                                        ? HB_BACKEND_OMP
                                        : HB_BACKEND_SEQ;
            double *x = solve_multi_algo(what, be, 3, cells, n, NULL, HB_MULTI_ALGO_GROUPED,
                                         group_rows[k], splits[q]);
            if (splits[q] == 0)
                CHECKF(ref && x && memcmp(ref, x, bytes) == 0,
                       "%s: GROUPED in groups of %zu rows differs from LEVELS", what,
                       group_rows[k]);
            else if (k == 0)
                first = x, x = NULL;
            else
                CHECKF(first && x && memcmp(first, x, bytes) == 0,
                       "%s: GROUPED, split %d, in groups of %zu rows differs from groups of 1",
                       what, splits[q], group_rows[k]);
            free(x);
        }
        free(first);
    }
    free(solve_multi_algo(what, HB_BACKEND_SEQ, 0, cells, n, NULL, HB_MULTI_ALGO_PER_CELL, 0, -1));
    if (hb_backend_available(HB_BACKEND_OMP))
        free(solve_multi_algo(what, HB_BACKEND_OMP, 2, cells, n, NULL, HB_MULTI_ALGO_PER_CELL, 0,
                              -1));
    /* SHAPES: a team's arithmetic is fixed by its class's plan, so any thread count gives the
     * same bits (its accuracy is checked in solve_multi_algo) */
    double *shapes = solve_multi_algo(what, HB_BACKEND_SEQ, 0, cells, n, NULL,
                                      HB_MULTI_ALGO_SHAPES, 0, -1);
    if (hb_backend_available(HB_BACKEND_OMP))
        for (int t = 2; t <= 3; ++t) {
            double *x = solve_multi_algo(what, HB_BACKEND_OMP, t, cells, n, NULL,
                                         HB_MULTI_ALGO_SHAPES, 0, -1);
            CHECKF(shapes && x && memcmp(shapes, x, bytes) == 0,
                   "%s: SHAPES with %d threads differs from SEQ", what, t);
            free(x);
        }
    free(shapes);
    free(ref);
}

/* (1) Random mixed batches. */
static void test_random_batches(void)
{
    static const int sizes[] = {1, 2, 3, 5, 17, 64, 200, 1000};
    for (int round = 0; round < 6; ++round) {
        const int n = 5 + rng_int(60);
        cell_t *cells = malloc((size_t)n * sizeof *cells);
        for (int c = 0; c < n; ++c)
            cell_random_tree(&cells[c], sizes[rng_int(8)] + rng_int(4), rng_int(SHAPES));
        char what[64];
        snprintf(what, sizeof what, "random batch %d (%d cells)", round, n);
        free(solve_multi(what, HB_BACKEND_SEQ, 0, cells, n, NULL));
        if (round < 2) check_repeatable(what, cells, n);
        else if (hb_backend_available(HB_BACKEND_OMP))
            free(solve_multi(what, HB_BACKEND_OMP, 4, cells, n, NULL));
        for (int c = 0; c < n; ++c) cell_free(&cells[c]);
        free(cells);
    }
    /* every shape alone, and a batch of one single-row cell */
    for (int shape = 0; shape < SHAPES; ++shape) {
        cell_t c;
        cell_random_tree(&c, 300, shape);
        free(solve_multi("one cell", HB_BACKEND_SEQ, 0, &c, 1, NULL));
        cell_free(&c);
    }
    cell_t one;
    cell_random_tree(&one, 1, SHAPE_CHAIN);
    free(solve_multi("one row", HB_BACKEND_SEQ, 0, &one, 1, NULL));
    cell_free(&one);
}

/* A cable's system of one step from random voltages. */
static int cell_from_cable(cell_t *c, const hb_cable_t *cable)
{
    const int m = hb_cable_size(cable);
    cell_alloc(c, m);
    memcpy(c->parent, hb_cable_parent(cable), (size_t)m * sizeof *c->parent);
    double *v = malloc((size_t)m * sizeof *v);
    for (int i = 0; i < m; ++i) v[i] = -65.0 + 10.0 * rng_unit();
    CHECK_OK(hb_cable_offdiag(cable, c->u, c->l));
    CHECK_OK(hb_cable_step_system(cable, 0.025, c->u, c->l, v, NULL, NULL, NULL, c->d, c->rhs));
    for (int i = 0; i < m; ++i) c->rhs[i] += rng_unit() - 0.5; /* not only the axial part */
    free(v);
    return m;
}

/* (2) Every real morphology, whole and cut to half its samples, in one batch. */
static void test_real_morphologies(void)
{
    static char paths[TEST_MAX_SWC][TEST_PATH_MAX];
    const int count = test_swc_files(paths);
    CHECKF(count >= 0, "cannot open %s/morphologies", HB_DATA_DIR);
    int n = 0, cap = 64, files = 0, purkinje_terminals = 0;
    cell_t *cells = malloc((size_t)cap * sizeof *cells);
    for (int f = 0; f < count; f++) {
        hb_morph_t *morph = NULL;
        CHECK_OK(hb_morph_load_swc(paths[f], NULL, &morph));
        if (!morph) continue;
        files++;
        hb_morph_stats_t st;
        CHECK_OK(hb_morph_stats(morph, &st));
        if (strstr(test_base_name(paths[f]), "v_e_purk2")) purkinje_terminals = st.terminals;
        hb_morph_t *half = NULL;
        CHECK_OK(hb_morph_cut(morph, st.points / 2 > 1 ? st.points / 2 : 1, &half));
        const hb_morph_t *pieces[2] = {morph, half};
        hb_discretization_t disc;
        hb_discretization_default(&disc); /* d_lambda */
        for (int k = 0; k < 2 && n < cap; ++k) {
            if (!pieces[k]) continue;
            hb_cable_t *cable = NULL;
            CHECK_OK(hb_cable_create(pieces[k], &disc, &cable));
            if (!cable) continue;
            cell_from_cable(&cells[n++], cable);
            hb_cable_destroy(cable);
        }
        hb_morph_destroy(half);
        hb_morph_destroy(morph);
    }
    CHECKF(files >= 18, "only %d morphologies found", files);
    CHECKF(purkinje_terminals == 420, "v_e_purk2: %d terminals; expected 420",
           purkinje_terminals);
    hb_multi_info_t info = {0};
    free(solve_multi("real morphologies", HB_BACKEND_SEQ, 0, cells, n, &info));
    printf("real morphologies: %d cells, %zu rows, %d branches, %d levels, longest branch %d\n",
           info.cells, info.rows, info.branches, info.levels, info.max_branch_rows);
    check_repeatable("real morphologies", cells, n);
    for (int c = 0; c < n; ++c) cell_free(&cells[c]);
    free(cells);
}

/*
 * (7) Plan tables (hb_multi_plan_check: sizes as the CUDA install copies them, every index a
 * kernel reads, slots a permutation) for batches that mix cells larger than a GPU group with
 * small ones: test_gpu_multi's random batch 0 of seed 4765593110627695788 (5,000-row cells
 * among small ones; GROUPED crashed on an H100 there) and the 18 whole real cells (d_lambda)
 * cycled to 256 (bench multi's crash). Group sizes: the H100's for these batches (235 and 750
 * rows: two groups per multiprocessor; 1937: a third of its shared memory), the CPU twin's,
 * and extremes. The LEVELS plan too, and a GROUPED solve in the H100's groups.
 */
static uint64_t gpu_rng; /* tests/test_random.h's generator, as test_gpu_multi draws */

static double gpu_uniform(void)
{
    gpu_rng ^= gpu_rng >> 12;
    gpu_rng ^= gpu_rng << 25;
    gpu_rng ^= gpu_rng >> 27;
    return (double)((gpu_rng * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

static void check_plans(const char *what, const cell_t *cells, int n, size_t h100_group_rows)
{
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_SEQ, &ctx));
    int *m = malloc((size_t)n * sizeof *m);
    const int **parents = malloc((size_t)n * sizeof *parents);
    for (int c = 0; c < n; ++c) {
        m[c] = cells[c].m;
        parents[c] = cells[c].parent;
    }
    hb_multi_t *mb = NULL;
    CHECK_OK(hb_multi_create(ctx, n, m, parents, &mb));
    if (mb) {
        char why[256];
        CHECKF(hb_multi_plan_check(mb, &mb->levels, why, sizeof why) == 0, "%s: LEVELS plan: %s",
               what, why);
        const size_t sizes[] = {1, 64, 235, 750, 1937, 2048, h100_group_rows, mb->n_rows};
        for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k) {
            CHECK_OK(hb_multi_plan_grouped(mb, sizes[k], k % 2 ? HB_MULTI_MIN_SPLIT_ROWS : 0));
            CHECKF(mb->grouped && hb_multi_plan_check(mb, mb->grouped, why, sizeof why) == 0,
                   "%s: GROUPED plan in groups of %zu rows: %s", what, sizes[k], why);
        }
        /* the check sees a wrong row table entry, child top and row-table count */
        hb_multi_plan_t *q = mb->grouped;
        const int last = q->row_off[q->n_groups] - 1;
        q->row_base[last] += 1;
        CHECK(hb_multi_plan_check(mb, q, why, sizeof why) != 0);
        q->row_base[last] -= 1;
        if (q->child_ptr[q->n_branches] > 0) {
            q->child_top[0] += q->max_group_rows;
            CHECK(hb_multi_plan_check(mb, q, why, sizeof why) != 0);
            q->child_top[0] -= q->max_group_rows;
        }
        q->row_off[q->n_groups] += 1;
        CHECK(hb_multi_plan_check(mb, q, why, sizeof why) != 0);
        q->row_off[q->n_groups] -= 1;
        CHECK(hb_multi_plan_check(mb, q, why, sizeof why) == 0);
        CHECK_OK(hb_multi_destroy(mb));
    }
    free(m);
    free(parents);
    CHECK_OK(hb_context_destroy(ctx));
    free(solve_multi_algo(what, HB_BACKEND_SEQ, 0, cells, n, NULL, HB_MULTI_ALGO_GROUPED,
                          h100_group_rows, -1));
}

/*
 * Split branches: chunk counts and tops of a chain of 100 rows and a fork of two 9-row arms
 * (split 4: the chain in 10 chunks of 10 rows, each arm in 3 of 3 rows, the stem of 1 row
 * unsplit);
 * a bad split is refused; the solves themselves are checked in check_repeatable.
 */
static void test_split_plan(void)
{
    int chain[100], fork[19];
    for (int i = 0; i < 100; ++i) chain[i] = i - 1;
    fork[0] = -1;
    for (int i = 1; i < 19; ++i) fork[i] = i == 10 ? 0 : i - 1;
    const int m[2] = {100, 19};
    const int *parents[2] = {chain, fork};
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_SEQ, &ctx));
    hb_multi_t *mb = NULL;
    CHECK_OK(hb_multi_create(ctx, 2, m, parents, &mb));
    if (!mb) return;
    CHECK(hb_multi_set_split_rows(mb, 3) == HB_ERR_INVALID_VALUE);
    CHECK(hb_multi_set_split_rows(mb, -1) == HB_ERR_INVALID_VALUE);
    CHECK_OK(hb_multi_set_split_rows(mb, 4));
    CHECK_OK(hb_multi_plan_grouped(mb, 1000, mb->split_rows));
    if (mb->grouped) {
        CHECK(mb->grouped->split_rows == 4 && mb->grouped->n_groups == 1);
        CHECK(mb->grouped->split_off[1] == 3); /* the chain and both arms listed */
        const hb_multi_view_t v = hb_multi_group_view(mb->grouped, 0);
        int chunks[4] = {0}, n = 0;
        for (int b = 0; b < mb->grouped->n_branches && n < 4; ++b) chunks[n++] = hb_multi_chunks(&v, b);
        int hist[11] = {0};
        for (int k = 0; k < n; ++k) hist[chunks[k] < 11 ? chunks[k] : 0]++;
        CHECKF(n == 4 && hist[10] == 1 && hist[3] == 2 && hist[1] == 1,
               "chunks of the branches: %d %d %d %d", chunks[0], chunks[1], chunks[2], chunks[3]);
        CHECK(hb_multi_chunk_rows(100) == 10 && hb_multi_chunk_rows(99) == 9);
        CHECK(hb_multi_chunk_rows(9) == 3 && hb_multi_chunk_rows(4) == 2 && hb_multi_chunk_rows(8) == 2);
        CHECK(hb_multi_chunk_top(10, 100, 10, 0) == 9 && hb_multi_chunk_top(10, 100, 10, 9) == 99);
        CHECK(hb_multi_chunk_top(3, 9, 3, 0) == 2 && hb_multi_chunk_top(3, 9, 3, 2) == 8);
    }
    CHECK_OK(hb_multi_set_split_rows(mb, 0));
    CHECK_OK(hb_multi_plan_grouped(mb, 1000, mb->split_rows));
    if (mb->grouped) {
        const hb_multi_view_t v = hb_multi_group_view(mb->grouped, 0);
        for (int b = 0; b < mb->grouped->n_branches; ++b) CHECK(hb_multi_chunks(&v, b) == 1);
    }
    CHECK_OK(hb_multi_destroy(mb));
    /* the tuning's split: a bad value is an error naming the key; a good one taken */
    mb = NULL;
    CHECK(hb_context_set_tuning(ctx, "multi.split_rows=2") == HB_ERR_INVALID_VALUE);
    CHECK(strstr(hb_last_error(), "multi.split_rows") != NULL);
    CHECK(hb_context_set_tuning(ctx, "multi.split_rows=8x") == HB_ERR_INVALID_VALUE);
    CHECK(strstr(hb_last_error(), "multi.split_rows") != NULL);
    CHECK_OK(hb_context_set_tuning(ctx, "multi.split_rows=8"));
    CHECK_OK(hb_multi_create(ctx, 2, m, parents, &mb));
    if (mb) CHECK(mb->split_rows == 8);
    CHECK_OK(hb_context_set_tuning(ctx, NULL));
    CHECK_OK(hb_multi_destroy(mb));
    CHECK_OK(hb_context_destroy(ctx));
}

static void test_plan_tables(void)
{
    /* test_gpu_multi's random batch 0 (its draws for the values are made and dropped) */
    static const int sizes[] = {1, 2, 3, 5, 17, 64, 200, 1000, 5000};
    gpu_rng = 4765593110627695788ULL;
    const int n = 5 + (int)(gpu_uniform() * 300);
    cell_t *cells = malloc((size_t)n * sizeof *cells);
    size_t rows = 0;
    for (int c = 0; c < n; ++c) {
        const int m = sizes[(int)(gpu_uniform() * 9)] + (int)(gpu_uniform() * 4);
        const int shape = (int)(gpu_uniform() * 5);
        cell_alloc(&cells[c], m);
        int *p = cells[c].parent;
        for (int i = 1; i < m; ++i)
            p[i] = shape == 0   ? i - 1
                   : shape == 1 ? 0
                   : shape == 2 ? (i - 1) / 2
                   : shape == 3 ? (int)(gpu_uniform() * i)
                                : (gpu_uniform() < 0.9 ? i - 1 : (int)(gpu_uniform() * i));
        for (int i = 0; i < 2 * m + 2 * (m - 1); ++i) gpu_uniform();
        cell_fill_random(&cells[c]);
        rows += (size_t)m;
    }
    CHECKF(n == 95 && rows == 61866, "seed batch: %d cells, %zu rows; the H100 run had 95, 61866",
           n, rows);
    check_plans("test_gpu_multi random batch 0 (seed 4765593110627695788)", cells, n, 235);
    for (int c = 0; c < n; ++c) cell_free(&cells[c]);
    free(cells);

    /* bench multi's real cells: every whole morphology (d_lambda), cycled to 256 */
    static char paths[TEST_MAX_SWC][TEST_PATH_MAX];
    const int count = test_swc_files(paths);
    enum { REAL = 256 };
    cell_t *real = malloc(REAL * sizeof *real);
    int distinct = 0;
    for (int f = 0; f < count; ++f) {
        hb_morph_t *morph = NULL;
        if (hb_morph_load_swc(paths[f], NULL, &morph) != HB_SUCCESS) continue;
        hb_discretization_t disc;
        hb_discretization_default(&disc);
        disc.policy = HB_CPOLICY_D_LAMBDA;
        hb_cable_t *cable = NULL;
        CHECK_OK(hb_cable_create(morph, &disc, &cable));
        if (cable && distinct < REAL) cell_from_cable(&real[distinct++], cable);
        hb_cable_destroy(cable);
        hb_morph_destroy(morph);
    }
    CHECKF(distinct >= 18, "only %d real cells", distinct);
    rows = 0;
    for (int c = 0; c < REAL && distinct > 0; ++c) {
        if (c >= distinct) {
            const cell_t *from = &real[c % distinct];
            cell_alloc(&real[c], from->m);
            memcpy(real[c].parent, from->parent, (size_t)from->m * sizeof *from->parent);
            memcpy(real[c].u, from->u, (size_t)from->m * 4 * sizeof *from->u);
        }
        rows += (size_t)real[c].m;
    }
    printf("real cells (d_lambda), %d distinct, cycled to %d: %zu rows\n", distinct, REAL, rows);
    if (distinct > 0) check_plans("real cells (d_lambda) x 256", real, REAL, 750);
    for (int c = 0; c < REAL && c < (distinct > 0 ? REAL : 0); ++c) cell_free(&real[c]);
    free(real);
}

/* Figure 14's cells (tools/fig14_cells.h). */
static void fig14_cell(cell_t *c, int levels)
{
    const int m = fig14_rows(levels);
    cell_alloc(c, m);
    const int used = fig14_parents(c->parent, levels);
    CHECK(used == m);
    cell_fill_random(c);
}

/* (3) The paper's binary-tree cells: 2, 3, 4 levels, alone and mixed. */
static void test_fig14(void)
{
    /* 256 + 2 x 128 = 512; 256 + 2 x 64 + 4 x 32 = 512; the paper's 4-level
     * example 256 + 2 x 32 + 4 x 16 + 8 x 8 = 448. */
    static const int rows[] = {0, 0, 512, 512, 448};
    cell_t mixed[48];
    int n = 0;
    for (int levels = 2; levels <= 4; ++levels) {
        cell_t cells[16];
        for (int c = 0; c < 16; ++c) {
            fig14_cell(&cells[c], levels);
            CHECKF(cells[c].m == rows[levels], "%d levels: %d rows", levels, cells[c].m);
        }
        hb_multi_info_t info = {0};
        char what[64];
        snprintf(what, sizeof what, "figure 14, %d levels", levels);
        free(solve_multi(what, HB_BACKEND_SEQ, 0, cells, 16, &info));
        CHECKF(info.levels == levels && info.branches == 16 * ((1 << levels) - 1) &&
                   info.max_branch_rows == 256,
               "%s: %d levels, %d branches, longest %d", what, info.levels, info.branches,
               info.max_branch_rows);
        for (int c = 0; c < 16; ++c) mixed[n++] = cells[c];
    }
    check_repeatable("figure 14 mixed", mixed, n);
    for (int c = 0; c < n; ++c) cell_free(&mixed[c]);
    /* 256 cells of 4 levels with every chain of 16 rows or more split: SHAPES once crashed
     * planning them (on the H100 and in this twin). The split plans' couplings and tables
     * did not fit the lanes tried for the fixed rule and for tiers 0 and 1, and the rule's
     * fallback took the nearest tier at or below 1 that had an option: none. */
    cell_t *many = malloc(256 * sizeof *many);
    for (int c = 0; c < 256; ++c) fig14_cell(&many[c], 4);
    tuning = "multi.shapes_split_rows=16";
    free(solve_multi_algo("figure 14, 4 levels, 256 cells, chains split from 16 rows",
                          HB_BACKEND_SEQ, 0, many, 256, NULL, HB_MULTI_ALGO_SHAPES, 0, -1));
    tuning = NULL;
    for (int c = 0; c < 256; ++c) cell_free(&many[c]);
    free(many);
}

/* (5) Errors. */
static void expect_fail(hb_status_t status, hb_status_t expected, const char *needle,
                        const char *what)
{
    CHECKF(status == expected && strstr(hb_last_error(), needle) != NULL,
           "%s: got %s \"%s\"; expected %s with \"%s\"", what, hb_status_name(status),
           hb_last_error(), hb_status_name(expected), needle);
}

static void test_errors(void)
{
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_SEQ, &ctx));
    const int good[] = {-1, 0, 1, 1}, bad_root[] = {0, 0, 1, 1}, bad_order[] = {-1, 0, 2, 1};
    const int m2[] = {4, 4}, m_zero[] = {4, 0};
    const int *ok2[] = {good, good}, *root2[] = {good, bad_root}, *order2[] = {good, bad_order};
    const int *null2[] = {good, NULL};
    hb_multi_t *mb = (hb_multi_t *)&ctx; /* must be reset to NULL on failure */
    expect_fail(hb_multi_create(ctx, 2, m2, ok2, NULL), HB_ERR_INVALID_VALUE, "multi is NULL",
                "NULL out");
    expect_fail(hb_multi_create(NULL, 2, m2, ok2, &mb), HB_ERR_INVALID_VALUE, "ctx is NULL",
                "NULL ctx");
    CHECK(mb == NULL);
    expect_fail(hb_multi_create(ctx, 0, m2, ok2, &mb), HB_ERR_INVALID_VALUE, "n_cells = 0",
                "no cells");
    expect_fail(hb_multi_create(ctx, 2, NULL, ok2, &mb), HB_ERR_INVALID_VALUE, "must not be NULL",
                "NULL sizes");
    expect_fail(hb_multi_create(ctx, 2, m2, NULL, &mb), HB_ERR_INVALID_VALUE, "must not be NULL",
                "NULL parents");
    expect_fail(hb_multi_create(ctx, 2, m2, null2, &mb), HB_ERR_INVALID_VALUE,
                "cell 1: parent is NULL", "NULL parent array");
    expect_fail(hb_multi_create(ctx, 2, m_zero, ok2, &mb), HB_ERR_INVALID_VALUE, "cell 1: m = 0",
                "empty cell");
    expect_fail(hb_multi_create(ctx, 2, m2, root2, &mb), HB_ERR_INVALID_VALUE,
                "cell 1: parent[0] = 0", "bad root");
    expect_fail(hb_multi_create(ctx, 2, m2, order2, &mb), HB_ERR_INVALID_VALUE,
                "cell 1: parent[2] = 2", "not Hines order");
    CHECK(mb == NULL);
    CHECK_OK(hb_multi_create(ctx, 2, m2, ok2, &mb));
    double v[4] = {1, 1, 1, 1};
    expect_fail(hb_multi_set(mb, 2, v, v, v, v), HB_ERR_INVALID_VALUE, "cell = 2",
                "set out of range");
    expect_fail(hb_multi_get(mb, -1, v, v, v, v), HB_ERR_INVALID_VALUE, "cell = -1",
                "get out of range");
    expect_fail(hb_multi_set(NULL, 0, v, v, v, v), HB_ERR_INVALID_VALUE, "multi is NULL",
                "set NULL");
    expect_fail(hb_multi_get(NULL, 0, v, v, v, v), HB_ERR_INVALID_VALUE, "multi is NULL",
                "get NULL");
    expect_fail(hb_multi_solve(NULL), HB_ERR_INVALID_VALUE, "multi is NULL", "solve NULL");
    expect_fail(hb_multi_info(mb, NULL), HB_ERR_INVALID_VALUE, "must not be NULL", "info NULL");
    CHECK(hb_multi_rows(mb, 1) == 4 && hb_multi_rows(mb, 2) == 0 && hb_multi_rows(NULL, 0) == 0);
    CHECK(hb_multi_level_branches(mb, 0) == 4 && hb_multi_level_branches(mb, 1) == 2 &&
          hb_multi_level_branches(mb, 2) == 0);
    expect_fail(hb_multi_set_algorithm(mb, (hb_multi_algo_t)5), HB_ERR_INVALID_VALUE, "algo = 5",
                "bad algorithm");
    expect_fail(hb_multi_set_algorithm(NULL, HB_MULTI_ALGO_LEVELS), HB_ERR_INVALID_VALUE,
                "multi is NULL", "algorithm NULL");
    CHECK(hb_multi_algorithm(mb) == HB_MULTI_ALGO_AUTO &&
          hb_multi_resolved_algorithm(mb) == HB_MULTI_ALGO_LEVELS);
    CHECK_OK(hb_multi_set_algorithm(mb, HB_MULTI_ALGO_PER_CELL));
    CHECK(hb_multi_resolved_algorithm(mb) == HB_MULTI_ALGO_PER_CELL);
    CHECK(strcmp(hb_multi_algo_name(HB_MULTI_ALGO_GROUPED), "grouped") == 0 &&
          strcmp(hb_multi_algo_name(HB_MULTI_ALGO_SHAPES), "shapes") == 0 &&
          strcmp(hb_multi_algo_name((hb_multi_algo_t)9), "unknown") == 0);
    double t[2];
    expect_fail(hb_multi_benchmark(mb, 0, t), HB_ERR_INVALID_VALUE, "repeats = 0", "no repeats");
    expect_fail(hb_multi_benchmark(mb, 2, NULL), HB_ERR_INVALID_VALUE, "NULL", "NULL seconds");
    CHECK_OK(hb_multi_destroy(mb));
    CHECK_OK(hb_multi_destroy(NULL));
    CHECK_OK(hb_context_destroy(ctx));
}

/* (6) hb_multi_benchmark times solves of the inputs it found: the result is a plain solve's. */
static void test_benchmark(void)
{
    cell_t cells[7];
    int m[7];
    const int *parents[7];
    for (int c = 0; c < 7; ++c) {
        cell_random_tree(&cells[c], 20 + 37 * c, c % SHAPES);
        m[c] = cells[c].m;
        parents[c] = cells[c].parent;
    }
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_SEQ, &ctx));
    for (int algo = HB_MULTI_ALGO_LEVELS; algo <= HB_MULTI_ALGO_SHAPES; ++algo) {
        hb_multi_t *a = NULL, *b = NULL;
        CHECK_OK(hb_multi_create(ctx, 7, m, parents, &a));
        CHECK_OK(hb_multi_create(ctx, 7, m, parents, &b));
        if (!a || !b) break;
        for (int c = 0; c < 7; ++c) {
            CHECK_OK(hb_multi_set(a, c, cells[c].u, cells[c].l, cells[c].d, cells[c].rhs));
            CHECK_OK(hb_multi_set(b, c, cells[c].u, cells[c].l, cells[c].d, cells[c].rhs));
        }
        CHECK_OK(hb_multi_set_algorithm(a, (hb_multi_algo_t)algo));
        CHECK_OK(hb_multi_set_algorithm(b, (hb_multi_algo_t)algo));
        double t[3] = {-1, -1, -1};
        CHECK_OK(hb_multi_benchmark(a, 3, t));
        CHECK(t[0] >= 0.0 && t[1] >= 0.0 && t[2] >= 0.0);
        CHECK_OK(hb_multi_solve(b));
        for (int c = 0; c < 7; ++c) {
            double xa[300], xb[300];
            CHECK_OK(hb_multi_get(a, c, NULL, NULL, NULL, xa));
            CHECK_OK(hb_multi_get(b, c, NULL, NULL, NULL, xb));
            CHECKF(memcmp(xa, xb, (size_t)m[c] * sizeof *xa) == 0,
                   "benchmark (%s): cell %d differs from a plain solve",
                   hb_multi_algo_name((hb_multi_algo_t)algo), c);
        }
        hb_multi_destroy(a);
        hb_multi_destroy(b);
    }
    CHECK_OK(hb_context_destroy(ctx));
    for (int c = 0; c < 7; ++c) cell_free(&cells[c]);
}

/*
 * (8) SHAPES on a batch of repeated trees: templates of 1 to 4,000 rows (a 4,000-row chain
 * needs more than the small budget with one lane: tier 1), two of them the same size with
 * different trees, members interleaved, each with its own values.
 */
/*
 * A SHAPES plan of test_shapes's batch for `dev`: every team fits its tier's block (tier t:
 * t + 1 blocks a multiprocessor), tiers in order, the 4,000-row chain alone in a block, team
 * numbering and storage without gaps, node_index injective; at least `min_tiers` tiers, and
 * whether some class must split its chains.
 */
static void check_shapes_plan(const hb_multi_t *mb, const hb_multi_shapes_device_t dev,
                              int min_tiers, int want_split)
{
    const hb_multi_shapes_t *s = mb->shapes;
    CHECK(s != NULL);
    if (!s) return;
    int chain = 0, teams[HB_MULTI_SHAPES_TIERS] = {0}, tiers_seen = 0, split = 0;
    size_t base = 0;
    for (int q = 0; q < s->n_classes; ++q) {
        const hb_multi_shape_t *k = &s->cls[q];
        printf("  shapes class %d: %d rows, %d cells, %d lanes, %d a multiprocessor, "
               "%zu bytes, cost %ld, %d split\n",
               q, k->m, k->cells, k->lanes, k->tier + 1, k->bytes, k->plan.cost,
               k->plan.n_items);
        CHECKF(k->tier >= 0 && k->tier < HB_MULTI_SHAPES_TIERS &&
                   (q == 0 || k->tier >= s->cls[q - 1].tier),
               "shapes: class %d out of tier order", q);
        CHECKF(k->team_first == teams[k->tier] && k->base == base,
               "shapes: class %d starts at team %d, element %zu", q, k->team_first, k->base);
        const size_t budget = dev.sm_bytes / (size_t)(k->tier + 1) - 1024;
        CHECKF(k->bytes <= (budget < dev.block_bytes ? budget : dev.block_bytes) &&
                   k->bytes == hb_branched_layout(k->m, k->plan.couplings, k->lanes,
                                                  k->plan.words, 0).bytes,
               "shapes: class %d: %zu bytes", q, k->bytes);
        CHECKF(k->lanes >= 1 && k->lanes <= 16 && k->lanes <= k->cells &&
                   k->plan.lanes == k->lanes && k->plan.workers == 256 / k->lanes,
               "shapes: class %d (%d rows, %d cells): %d lanes, %d workers", q, k->m,
               k->cells, k->lanes, k->plan.workers);
        teams[k->tier] += hb_multi_shape_teams(k);
        base += (size_t)hb_multi_shape_teams(k) * (size_t)k->lanes *
                (size_t)k->m;
        chain += k->tier == 0 && k->m == 4000 && k->lanes == 1;
        tiers_seen |= 1 << k->tier;
        split += k->plan.n_items > 0;
        CHECKF(k->tier > 0 || k->plan.n_items == 0,
               "shapes: class %d (one block a multiprocessor) split its chains", q);
    }
    /* the latency-bound ones (the chain of 300 rows) split their chains */
    CHECKF((split >= 1) == want_split, "shapes: %d classes split chains", split);
    CHECKF(chain == 1, "shapes: the 4,000-row chain is not alone in a block");
    int tiers = 0;
    for (int t = 0; t < HB_MULTI_SHAPES_TIERS; ++t) tiers += tiers_seen >> t & 1;
    CHECKF(tiers >= min_tiers, "shapes: tiers seen %#x; expected %d or more", tiers_seen,
           min_tiers);
    for (int t = 0; t < HB_MULTI_SHAPES_TIERS; ++t)
        CHECKF(s->tier_teams[t] == teams[t], "shapes: tier %d: %d teams, counted %d", t,
               s->tier_teams[t], teams[t]);
    CHECK(s->size == base);
    unsigned char *used = calloc(s->size, 1);
    int clash = 0;
    for (size_t k = 0; k < mb->n_rows; ++k) {
        if (s->node_index[k] >= s->size || used[s->node_index[k]]) clash++;
        else used[s->node_index[k]] = 1;
    }
    CHECKF(clash == 0, "shapes: %d node indices out of range or shared", clash);
    free(used);
}

static void test_shapes(void)
{
    enum { TEMPLATES = 7 };
    static const int rows[TEMPLATES] = {1, 40, 300, 300, 700, 2500, 4000};
    static const int kind[TEMPLATES] = {SHAPE_CHAIN, SHAPE_BINARY, SHAPE_RANDOM, SHAPE_CHAIN,
                                        SHAPE_RANDOM, SHAPE_RANDOM, SHAPE_CHAIN};
    cell_t tpl[TEMPLATES];
    for (int t = 0; t < TEMPLATES; ++t) cell_random_tree(&tpl[t], rows[t], kind[t]);
    const int n = 97;
    cell_t *cells = malloc((size_t)n * sizeof *cells);
    int *m = malloc((size_t)n * sizeof *m);
    const int **parents = malloc((size_t)n * sizeof *parents);
    for (int c = 0; c < n; ++c) {
        /* the big templates get few members (the test's time), the small ones many */
        const int t = c == 10 ? 6 : c % 11 == 9 ? 5 : c % 5;
        cell_alloc(&cells[c], rows[t]);
        memcpy(cells[c].parent, tpl[t].parent, (size_t)rows[t] * sizeof *cells[c].parent);
        cell_fill_random(&cells[c]);
        m[c] = rows[t];
        parents[c] = cells[c].parent;
    }
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_SEQ, &ctx));
    hb_multi_t *mb = NULL;
    CHECK_OK(hb_multi_create(ctx, n, m, parents, &mb));
    if (mb) {
        hb_multi_info_t info;
        CHECK_OK(hb_multi_info(mb, &info));
        CHECKF(info.shapes == TEMPLATES, "shapes: %d classes; expected %d", info.shapes, TEMPLATES);
        for (int c = 0; c < n; ++c)
            for (int e = 0; e < c; ++e) {
                const int same = m[c] == m[e] && memcmp(parents[c], parents[e],
                                                         (size_t)m[c] * sizeof **parents) == 0;
                CHECKF(same == (mb->shape[c] == mb->shape[e]),
                       "shapes: cells %d and %d: same tree %d, same class %d", c, e, same,
                       mb->shape[c] == mb->shape[e]);
            }
        for (int c = 0; c < n; ++c)
            CHECK_OK(hb_multi_set(mb, c, cells[c].u, cells[c].l, cells[c].d, cells[c].rhs));
        CHECK_OK(hb_multi_set_algorithm(mb, HB_MULTI_ALGO_SHAPES));
        CHECK_OK(hb_multi_solve(mb));
        /* On the H100 the 4,000-row chain's team outlasts the rest: no choice is 10% faster
         * than the fixed rule (the 2,500- and 4,000-row cells in blocks of their own, the
         * others two a multiprocessor). On one multiprocessor the batch fills the device:
         * the classes spread over the tiers. */
        check_shapes_plan(mb, HB_MULTI_SHAPES_CPU_DEVICE, 2, 1);
        /* the rule: the most lanes of 16, 8, 4, 2, 1 within 113 KB (32 bytes a row and the
         * tables): 700 rows 4, 300 rows 8, 40 and 1 rows 16, two blocks a multiprocessor */
        for (int q = 0; mb->shapes && q < mb->shapes->n_classes; ++q) {
            const hb_multi_shape_t *k = &mb->shapes->cls[q];
            const int want = k->m == 700 ? 4 : k->m == 300 ? 8 : k->m <= 40 ? 16 : 0;
            CHECKF(!want || (k->lanes == want && k->tier == 1),
                   "shapes: the rule's class of %d rows: %d lanes, %d blocks; expected %d, 2",
                   k->m, k->lanes, k->tier + 1, want);
        }
        const hb_multi_shapes_device_t one_sm = {233472, 232448, 3, 1};
        CHECK_OK(hb_multi_plan_shapes(mb, &one_sm, HB_MULTI_SHAPES_THREADS));
        check_shapes_plan(mb, one_sm, 2, 1);
        /* the time model: copies 2 x 300 / 30 = 20 half-rows; a period 100 + 20 (two blocks'
         * copies, 40, are shorter); 5 teams take one period, 1,000 cells (500 teams) 500 / 264
         * on 132 multiprocessors */
        hb_multi_shape_t model = {0};
        model.m = 300;
        model.cells = 10;
        model.lanes = 2;
        model.tier = 1;
        model.plan.cost = 100;
        CHECKF(fabs(hb_multi_shapes_time(&model, 132) - 120.0) < 1e-9, "model: %g",
               hb_multi_shapes_time(&model, 132));
        model.cells = 1000;
        CHECKF(fabs(hb_multi_shapes_time(&model, 132) - 120.0 * 500.0 / 264.0) < 1e-9,
               "model: %g", hb_multi_shapes_time(&model, 132));
        model.plan.cost = 10; /* copy-bound: two blocks' copies, 40, make the period */
        model.cells = 10;
        CHECKF(fabs(hb_multi_shapes_time(&model, 132) - 40.0) < 1e-9, "model: %g",
               hb_multi_shapes_time(&model, 132));
        CHECK_OK(hb_multi_destroy(mb));
    }
    /* the whole check (accuracy, thread counts), then a small budget: fewer lanes, more tier 1 */
    check_repeatable("shapes batch", cells, n);
    tuning = "multi.shapes_bytes=16384";
    free(solve_multi_algo("shapes, 16 KB budget", HB_BACKEND_SEQ, 0, cells, n, NULL,
                          HB_MULTI_ALGO_SHAPES, 0, -1));
    tuning = NULL;
    expect_fail(hb_context_set_tuning(ctx, "multi.shapes_bytes=12x"), HB_ERR_INVALID_VALUE,
                "multi.shapes_bytes", "bad multi.shapes_bytes");
    /* every occupancy choice: each class its fastest (three tiers on one multiprocessor, here
     * one launch), every class in one tier, the fixed rule; a bad choice is an error */
    static const char *const choices[] = {"-1", "0", "1", "2", "3"};
    for (int q = 0; q < 5; ++q) {
        char what[64], spec[64];
        snprintf(what, sizeof what, "shapes, multi.shapes_choice=%s", choices[q]);
        snprintf(spec, sizeof spec, "multi.shapes_choice=%s", choices[q]);
        tuning = spec;
        free(solve_multi_algo(what, HB_BACKEND_SEQ, 0, cells, n, NULL, HB_MULTI_ALGO_SHAPES, 0,
                              -1));
    }
    tuning = NULL;
    expect_fail(hb_context_set_tuning(ctx, "multi.shapes_choice=4"), HB_ERR_INVALID_VALUE,
                "multi.shapes_choice", "bad multi.shapes_choice");
    /* chains split from 4 rows (chunks of 2), and none split */
    tuning = "multi.shapes_split_rows=4";
    free(solve_multi_algo("shapes, chains split from 4 rows", HB_BACKEND_SEQ, 0, cells, n, NULL,
                          HB_MULTI_ALGO_SHAPES, 0, -1));
    tuning = "multi.shapes_split_rows=0";
    free(solve_multi_algo("shapes, no split chains", HB_BACKEND_SEQ, 0, cells, n, NULL,
                          HB_MULTI_ALGO_SHAPES, 0, -1));
    tuning = NULL;
    expect_fail(hb_context_set_tuning(ctx, "multi.shapes_split_rows=3"), HB_ERR_INVALID_VALUE,
                "multi.shapes_split_rows", "bad multi.shapes_split_rows");
    CHECK_OK(hb_context_destroy(ctx));
    for (int c = 0; c < n; ++c) cell_free(&cells[c]);
    for (int t = 0; t < TEMPLATES; ++t) cell_free(&tpl[t]);
    free(cells);
    free(m);
    free(parents);
}

int main(void)
{
    test_errors();
    test_benchmark();
    test_random_batches();
    test_fig14();
    test_real_morphologies();
    test_plan_tables();
    test_split_plan();
    test_shapes();
    return check_summary("test_multi");
}
