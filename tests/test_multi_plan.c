/*
 * Mixed-morphology batches (hb_multi_*), CPU backends: the plans.
 *
 * (7) plan tables of batches that mix cells larger than a GPU group with small
 *     ones (hb_multi_plan_check), and split branches; (8) SHAPES: classes of
 *     identical trees, lanes and tiers, layout, accuracy and repeatability.
 * Solves, errors and the benchmark helper: test_multi.c.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_data.h"
#include "hinesbatch.h"
#include "multi_common.h"

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
        /* two statements: the operands of + are evaluated in no set order */
        const int size = sizes[(int)(gpu_uniform() * 9)];
        const int m = size + (int)(gpu_uniform() * 4);
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
    /* Where test_multi's tests (the benchmark helper, random batches, figure 14, the real
     * morphologies: 733,166 draws) leave the generator: these tests ran after them and draw
     * the values they drew then. */
    rng_state += 733166u * 0x9e3779b97f4a7c15u;
    test_plan_tables();
    test_split_plan();
    test_shapes();
    return check_summary("test_multi_plan");
}
