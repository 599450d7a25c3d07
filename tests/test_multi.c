/*
 * Mixed-morphology batches (hb_multi_*), CPU backends: every algorithm
 * (LEVELS, and the CPU twins of the CUDA kernels GROUPED and PER_CELL).
 *
 * (1) random mixed batches of random trees against hb_hines_solve per cell;
 * (2) every real morphology (whole and cut), discretised with d_lambda, in
 *     one batch against hb_hines_solve; (3) the paper's Figure-14 binary-tree
 *     cells and their level structure; (4) bitwise repeatability: runs, OMP
 *     thread counts, and LEVELS = GROUPED for any group size; (5) errors;
 *     (6) hb_multi_benchmark restores its inputs. Plan tables (7) and SHAPES (8):
 *     test_multi_plan.c.
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
#include "multi_common.h"
#include "fig14_cells.h" /* tools/ */

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

int main(void)
{
    test_errors();
    test_benchmark();
    test_random_batches();
    test_fig14();
    test_real_morphologies();
    return check_summary("test_multi");
}
