/*
 * The tridiagonal plan rule (hb_gtsv_make_plan) on the CPU backends: (9) the table of
 * docs/tridiag.md by layout and m, the same in both precisions and any batch, small batches,
 * plans under tunings, and every plan for m = 1..8192 one the CUDA kernels can run. The
 * solves, errors, helpers and the tuning override: test_tridiag.c.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/tridiag_plan.h" /* hb_gtsv_plan_t, hb_td_* */
#include "core/bench.h"
#include "core/tridiag.h"  /* hb_gtsv_make_plan */
#include "hinesbatch.h"
#include "test_tridiag_common.h"

/* (9) The rule (docs/tridiag.md, "The plan rule"; docs/design-notes.md, "Tridiagonal"). */
typedef struct {
    int m, interleaved, fp32, rows, chunks, threads, ahead, hint, prefetch, vector;
    int cluster;
} plan_case_t;

static hb_gtsv_problem_t plan_probe(int m, int interleaved, hb_precision_t prec, int count)
{
    const hb_gtsv_problem_t p = {.precision = prec,
                                 .algo = HB_GTSV_ALGO_PARTITION,
                                 .m = m,
                                 .layout = interleaved ? HB_LAYOUT_INTERLEAVED : HB_LAYOUT_FLAT,
                                 .batch_count = count,
                                 .batch_stride = interleaved ? count : m};
    return p;
}

/* docs/tridiag.md, "Small batches": interleaved batches of at most 131,072 rows take the
 * small-batch plan; half that above m = 4096, three times that for fp32 to m = 128, twice
 * that for fp32 to m = 512, never fp64 at m = 513..1024. */
static int expect_small(int m, hb_precision_t precision, int count)
{
    const double rows = (double)m * count, limit = 131072.0;
    if (precision == HB_FLOAT64 && m > 512 && m <= 1024) return 0;
    if (m > 4096) return rows <= limit / 2;
    if (precision == HB_FLOAT32 && m <= 128) return rows <= 3 * limit;
    return rows <= (precision == HB_FLOAT32 && m <= 512 ? 2 * limit : limit);
}

/* A small batch's plan is the large-batch plan (small=0) under rows=8,threads=128,pairs=0,
 * field by field. */
static void check_small_plan(hb_context_t *ctx, const hb_gtsv_problem_t *p,
                             const hb_gtsv_plan_t *plan)
{
    hb_gtsv_plan_t tuned;
    CHECK_OK(
        hb_context_set_tuning(ctx, "gtsv.rows=8,gtsv.threads=128,gtsv.pairs=0,gtsv.small=0"));
    CHECK_OK(hb_gtsv_make_plan(ctx, p, &tuned));
    CHECK_OK(hb_context_set_tuning(ctx, ""));
    CHECKF(plan->rows == 8 && plan->pairs == 0 && plan->rows == tuned.rows &&
               plan->chunks == tuned.chunks && plan->threads == tuned.threads &&
               plan->ahead == tuned.ahead && plan->hint == tuned.hint &&
               plan->prefetch == tuned.prefetch && plan->vector == tuned.vector &&
               plan->cluster == tuned.cluster && plan->stage == tuned.stage &&
               plan->persist == tuned.persist && plan->pairs == tuned.pairs,
           "interleaved m = %d (%s, %d systems), small batch: rows=%d chunks=%d threads=%d "
           "cluster=%d pairs=%d; expected rows=8 chunks=%d threads=%d cluster=%d pairs=0",
           p->m, p->precision == HB_FLOAT32 ? "fp32" : "fp64", p->batch_count, plan->rows,
           plan->chunks, plan->threads, plan->cluster, plan->pairs, tuned.chunks,
           tuned.threads, tuned.cluster);
}

/* A plan under a tuning: the problem (interleaved, fp32, count) and the fields expected. */
typedef struct {
    const char *spec;
    int m, interleaved, fp32, count;
    int rows, chunks, threads, cluster, per_thread, pairs;
} tuned_case_t;

static void check_tuned_plans(hb_context_t *ctx, const tuned_case_t *cases, size_t n)
{
    hb_gtsv_plan_t plan;
    for (size_t k = 0; k < n; ++k) {
        const tuned_case_t *c = &cases[k];
        CHECK_OK(hb_context_set_tuning(ctx, c->spec));
        const hb_gtsv_problem_t p =
            plan_probe(c->m, c->interleaved, c->fp32 ? HB_FLOAT32 : HB_FLOAT64, c->count);
        CHECK_OK(hb_gtsv_make_plan(ctx, &p, &plan));
        CHECKF(plan.rows == c->rows && plan.chunks == c->chunks && plan.threads == c->threads &&
                   plan.cluster == c->cluster &&
                   hb_td_chunks_per_thread(&plan) == c->per_thread && plan.pairs == c->pairs,
               "'%s', m = %d %s %s x %d: rows=%d chunks=%d threads=%d cluster=%d, %d chunks a "
               "thread, pairs=%d",
               c->spec, c->m, c->interleaved ? "interleaved" : "flat", c->fp32 ? "fp32" : "fp64",
               c->count, plan.rows, plan.chunks, plan.threads, plan.cluster,
               hb_td_chunks_per_thread(&plan), plan.pairs);
    }
    CHECK_OK(hb_context_set_tuning(ctx, ""));
}

static void test_rule(hb_context_t *ctx)
{
    /* fp32 -1: both precisions */
    static const plan_case_t cases[] = {
        /* flat: 16-byte loads, 8 rows ahead; 8-row chunks, 128 threads up to
         * m = 1024; then a block for one system: fp64 8-row chunks, 256 threads
         * (two chunks a thread above m = 2048), 512 above 4096; fp32 16-row
         * chunks, P threads (rolling L2 prefetch above m = 2048); x stored a
         * warp's spans at a time (vector 2) from m = 129 in fp64, m = 1025 in fp32 */
        {1, 0, -1, 8, 1, 128, 8, 0, 0, 1, 1},        {64, 0, -1, 8, 8, 128, 8, 0, 0, 1, 1},
        {100, 0, -1, 8, 16, 128, 8, 0, 0, 1, 1},     {128, 0, -1, 8, 16, 128, 8, 0, 0, 1, 1},
        {129, 0, 0, 8, 32, 128, 8, 0, 0, 2, 1},      {129, 0, 1, 8, 32, 128, 8, 0, 0, 1, 1},
        {256, 0, 0, 8, 32, 128, 8, 0, 0, 2, 1},      {256, 0, 1, 8, 32, 128, 8, 0, 0, 1, 1},
        {512, 0, 0, 8, 64, 128, 8, 0, 0, 2, 1},      {512, 0, 1, 8, 64, 128, 8, 0, 0, 1, 1},
        {1024, 0, 0, 8, 128, 128, 8, 0, 0, 2, 1},    {1024, 0, 1, 8, 128, 128, 8, 0, 0, 1, 1},
        {1025, 0, 0, 8, 256, 256, 8, 0, 0, 2, 1},    {2048, 0, 0, 8, 256, 256, 8, 0, 0, 2, 1},
        {3000, 0, 0, 8, 512, 256, 8, 0, 0, 2, 1},    {4096, 0, 0, 8, 512, 256, 8, 0, 0, 2, 1},
        {4097, 0, 0, 8, 1024, 512, 8, 0, 0, 2, 1},   {8192, 0, 0, 8, 1024, 512, 8, 0, 0, 2, 1},
        {1025, 0, 1, 16, 128, 128, 8, 0, 0, 2, 1},   {2048, 0, 1, 16, 128, 128, 8, 0, 0, 2, 1},
        {3000, 0, 1, 16, 256, 256, 8, 0, 2, 2, 1},   {4096, 0, 1, 16, 256, 256, 8, 0, 2, 2, 1},
        {4097, 0, 1, 16, 512, 512, 8, 0, 2, 2, 1},   {8192, 0, 1, 16, 512, 512, 8, 0, 2, 2, 1},
        /* interleaved (every m staged through shared memory) up to m = 128: fp64
         * 8-row chunks, 256 threads; fp32 16-row chunks with rolling L2 prefetch,
         * 128 threads to m = 64, then 256 */
        {1, 1, 0, 8, 1, 256, 8, 0, 0, 0, 1},         {64, 1, 0, 8, 8, 256, 8, 0, 0, 0, 1},
        {128, 1, 0, 8, 16, 256, 8, 0, 0, 0, 1},      {1, 1, 1, 16, 1, 128, 4, 0, 2, 0, 1},
        {64, 1, 1, 16, 4, 128, 4, 0, 2, 0, 1},       {65, 1, 1, 16, 8, 256, 4, 0, 2, 0, 1},
        {128, 1, 1, 16, 8, 256, 4, 0, 2, 0, 1},
        /* then 16-row chunks and the 128-byte L2 hint, 256 threads to m = 256,
         * then 512; rolling L2 prefetch up to m = 1024; fp64 from m = 257 to 512
         * and fp32 from m = 513 to 1024 clusters of 4 blocks of 256 threads; from
         * m = 1025 clusters of 8 (fp64 above 2048 of 512 threads, fp32 of 256 to
         * m = 4096, then clusters of 16 of 256);
         * persistent grids above m = 256 (the table's check) */
        {129, 1, -1, 16, 16, 256, 4, 1, 2, 0, 1},    {256, 1, -1, 16, 16, 256, 4, 1, 2, 0, 1},
        {257, 1, 0, 16, 32, 256, 4, 1, 2, 0, 4},     {512, 1, 0, 16, 32, 256, 4, 1, 2, 0, 4},
        {257, 1, 1, 16, 32, 512, 4, 1, 2, 0, 1},     {512, 1, 1, 16, 32, 512, 4, 1, 2, 0, 1},
        {513, 1, 0, 16, 64, 512, 4, 1, 2, 0, 1},     {1024, 1, 0, 16, 64, 512, 4, 1, 2, 0, 1},
        {1025, 1, 0, 16, 128, 256, 4, 1, 0, 0, 8},   {2048, 1, 0, 16, 128, 256, 4, 1, 0, 0, 8},
        {513, 1, 1, 16, 64, 256, 4, 1, 2, 0, 4},     {1024, 1, 1, 16, 64, 256, 4, 1, 2, 0, 4},
        {1025, 1, 1, 16, 128, 256, 4, 1, 0, 0, 8},   {2048, 1, 1, 16, 128, 256, 4, 1, 0, 0, 8},
        {2049, 1, 0, 16, 256, 512, 4, 1, 0, 0, 8},   {4096, 1, 0, 16, 256, 512, 4, 1, 0, 0, 8},
        {4097, 1, 0, 16, 512, 512, 4, 1, 0, 0, 8},   {8192, 1, 0, 16, 512, 512, 4, 1, 0, 0, 8},
        {2049, 1, 1, 16, 256, 256, 4, 1, 0, 0, 8},   {4096, 1, 1, 16, 256, 256, 4, 1, 0, 0, 8},
        {4097, 1, 1, 16, 512, 256, 4, 1, 0, 0, 16},  {8192, 1, 1, 16, 512, 256, 4, 1, 0, 0, 16}};
    static const hb_precision_t precs[] = {HB_FLOAT64, HB_FLOAT32};
    static const int counts[] = {1, 200, 256000}; /* fp32: 1 one system a thread */
    CHECK_OK(hb_context_set_tuning(ctx, "")); /* the rule */
    hb_gtsv_plan_t plan;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k)
        for (int pi = 0; pi < 2; ++pi)
            for (int ci = 0; ci < 3; ++ci) {
                const plan_case_t *c = &cases[k];
                if (c->fp32 >= 0 && c->fp32 != pi) continue;
                const hb_gtsv_problem_t p = plan_probe(c->m, c->interleaved, precs[pi], counts[ci]);
                CHECK_OK(hb_gtsv_make_plan(ctx, &p, &plan));
                if (c->interleaved && expect_small(c->m, precs[pi], counts[ci])) {
                    /* small batches: the large-batch plan with 8-row chunks, 128
                     * threads, one system a thread (checked below) */
                    check_small_plan(ctx, &p, &plan);
                    continue;
                }
                /* fp32 interleaved with an even count (and stride) runs in pairs, and
                 * above m = 128 in fp64's geometry (the fp64 row of the same m) but at
                 * m = 257..512, where it keeps its own (one block, no clusters) */
                const int pairs = pi == 1 && c->interleaved && counts[ci] % 2 == 0;
                if (pairs && c->m > 128 && c->fp32 == 1 && (c->m <= 256 || c->m > 512)) {
                    size_t w = 0;
                    while (w < sizeof cases / sizeof *cases &&
                           !(cases[w].m == c->m && cases[w].interleaved && cases[w].fp32 == 0))
                        ++w;
                    CHECKF(w < sizeof cases / sizeof *cases, "no fp64 row for m = %d", c->m);
                    if (w < sizeof cases / sizeof *cases) c = &cases[w];
                }
                CHECKF(plan.pairs == pairs, "m = %d %s %s, %d systems: pairs=%d", c->m,
                       c->interleaved ? "interleaved" : "flat", pi ? "fp32" : "fp64",
                       counts[ci], plan.pairs);
                CHECKF(plan.algo == HB_GTSV_ALGO_PARTITION && plan.rows == c->rows &&
                           plan.chunks == c->chunks && plan.threads == c->threads &&
                           plan.ahead == c->ahead && plan.hint == c->hint &&
                           plan.prefetch == c->prefetch && plan.vector == c->vector &&
                           plan.cluster == c->cluster && plan.stage == c->interleaved &&
                           plan.persist == (c->interleaved && c->m > 256),
                       "%s m = %d (%s, %d systems): rows=%d chunks=%d threads=%d ahead=%d "
                       "hint=%d prefetch=%d vector=%d cluster=%d stage=%d persist=%d; expected "
                       "rows=%d chunks=%d threads=%d ahead=%d hint=%d prefetch=%d vector=%d "
                       "cluster=%d stage=%d persist=%d",
                       c->interleaved ? "interleaved" : "flat", c->m,
                       precs[pi] == HB_FLOAT32 ? "fp32" : "fp64", counts[ci], plan.rows,
                       plan.chunks, plan.threads, plan.ahead, plan.hint, plan.prefetch,
                       plan.vector, plan.cluster, plan.stage, plan.persist, c->rows, c->chunks,
                       c->threads, c->ahead, c->hint, c->prefetch, c->vector, c->cluster,
                       c->interleaved, c->interleaved && c->m > 256);
            }
    /* Every plan is one a kernel is compiled for and a block can hold:
     * P = the power of two with P L >= m, at most 512 threads, one chunk a
     * thread or two 8-row chunks (not in clusters; a cluster's K blocks hold
     * P / K chunks of each system), 4 or 8 rows ahead, shared memory
     * (reduced rows; 16 rows a thread: the stash) within the 112 KB the
     * launcher asks for. */
    int bad = 0;
    for (int kind = 0; kind <= 3; ++kind) /* bit 0: interleaved, bit 1: fp32 */
        for (int m = 1; m <= HB_TD_MAX_PARTITION_M; ++m) {
            const int interleaved = kind & 1;
            const hb_gtsv_problem_t p =
                plan_probe(m, interleaved, kind & 2 ? HB_FLOAT32 : HB_FLOAT64, 7);
            if (hb_gtsv_make_plan(ctx, &p, &plan) != HB_SUCCESS) {
                ++bad;
                continue;
            }
            const int C = hb_td_chunks_per_thread(&plan);
            const int G = plan.threads * plan.cluster / plan.chunks; /* systems a block */
            const size_t smem = (size_t)hb_td_partition_smem(
                plan.rows, C, plan.cluster, plan.threads, G > 0 ? G : 1,
                kind & 2 && !plan.pairs ? (int)sizeof(float) : (int)sizeof(double),
                hb_td_stage_rows(&plan, C));
            const int ok = (plan.rows == 8 || plan.rows == 16) &&
                           plan.chunks == hb_td_chunks_for(m, plan.rows) &&
                           plan.chunks <= HB_TD_MAX_CHUNKS && plan.chunks * plan.rows >= m &&
                           (plan.threads == 128 || plan.threads == 256 || plan.threads == 512) &&
                           (plan.cluster == 1 || plan.cluster == 2 || plan.cluster == 4 ||
                            plan.cluster == 8 || plan.cluster == 16) &&
                           plan.cluster <= plan.chunks &&
                           (plan.cluster == 1
                                ? (plan.threads >= plan.chunks && C == 1) ||
                                      (plan.rows == 8 && plan.chunks == 2 * plan.threads &&
                                       C == 2)
                                : plan.threads >= plan.chunks / plan.cluster && C == 1) &&
                           (plan.ahead == 4 || plan.ahead == 8) &&
                           plan.hint >= 0 && plan.hint <= 2 && plan.prefetch >= 0 &&
                           plan.prefetch <= 2 && plan.vector >= 0 && plan.vector <= 2 &&
                           (plan.stage == 0 || (plan.stage == 1 && interleaved && C == 1)) &&
                           (plan.persist == 0 || (plan.persist == 1 && plan.stage == 1)) &&
                           (plan.pairs == 0 || (plan.pairs == 1 && plan.stage == 1 &&
                                                (kind & 2))) &&
                           smem <= (plan.stage ? HB_TD_MAX_SMEM_STAGED : HB_TD_MAX_SMEM);
            if (!ok && bad++ < 5)
                fprintf(stderr,
                        "m = %d %s %s: invalid plan rows=%d chunks=%d threads=%d ahead=%d "
                        "hint=%d prefetch=%d vector=%d cluster=%d stage=%d\n",
                        m, interleaved ? "interleaved" : "flat", kind & 2 ? "fp32" : "fp64",
                        plan.rows, plan.chunks, plan.threads, plan.ahead, plan.hint,
                        plan.prefetch, plan.vector, plan.cluster, plan.stage);
        }
    CHECKF(bad == 0, "%d invalid plans for m = 1..%d", bad, HB_TD_MAX_PARTITION_M);
    /* The override goes field by field over the rule; threads at least P. */
    CHECK_OK(hb_context_set_tuning(ctx, "gtsv.rows=8"));
    hb_gtsv_problem_t p = plan_probe(512, 1, HB_FLOAT32, 1001); /* odd: no pairs */
    CHECK_OK(hb_gtsv_make_plan(ctx, &p, &plan));
    CHECK(plan.rows == 8 && plan.chunks == 64 && plan.threads == 512 && plan.ahead == 4 &&
          plan.hint == 1 && plan.prefetch == 2);
    /* Chunks a thread and clusters: 8-row chunks run two a thread in blocks of
     * P / 2 (fewer threads are raised); the rule's clusters stay under a tuning
     * that does not name them; a cluster of K blocks holds P / K chunks a block,
     * one a thread (threads raised to P / K), and K is at most P. */
    static const tuned_case_t overrides[] = {
        {"gtsv.rows=8,gtsv.threads=128", 2048, 0, 1, 101, 8, 256, 128, 1, 2, 0},
        {"gtsv.rows=8,gtsv.threads=128", 8192, 0, 1, 101, 8, 1024, 512, 1, 2, 0},
        {"gtsv.rows=8,gtsv.threads=128", 8192, 1, 1, 101, 8, 1024, 128, 16, 1, 0},
        {"gtsv.rows=16,gtsv.threads=128,gtsv.cluster=8", 8192, 1, 0, 101, 16, 512, 128, 8, 1,
         0},
        {"gtsv.rows=8,gtsv.threads=128,gtsv.cluster=2", 8192, 1, 0, 101, 8, 1024, 512, 2, 1,
         0},
        {"gtsv.rows=8,gtsv.cluster=16", 9, 0, 1, 101, 8, 2, 128, 2, 1, 0}};
    check_tuned_plans(ctx, overrides, sizeof overrides / sizeof *overrides);
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.cluster=3"), HB_ERR_INVALID_VALUE,
              "expected 1, 2, 4, 8 or 16");
    CHECK_OK(hb_context_set_tuning(
        ctx, "gtsv.threads=128,gtsv.hint=0,gtsv.prefetch=2,gtsv.vector=1,gtsv.cluster=1"));
    p = plan_probe(8192, 1, HB_FLOAT64, 100);
    CHECK_OK(hb_gtsv_make_plan(ctx, &p, &plan));
    CHECK(plan.rows == 16 && plan.chunks == 512 && plan.threads == 512 && plan.hint == 0 &&
          plan.prefetch == 2 && plan.vector == 1 && plan.cluster == 1);
    /* Pairs of fp32 systems a thread: interleaved fp32 staged plans only (fp64, flat
     * and unstaged plans drop them). */
    static const struct {
        const char *spec;
        int interleaved, fp32, pairs;
    } pair_cases[] = {{"gtsv.pairs=1", 1, 1, 1},    {"gtsv.pairs=1", 1, 0, 0},
                      {"gtsv.pairs=1", 0, 1, 0},    {"gtsv.pairs=1,gtsv.stage=0", 1, 1, 0},
                      {"gtsv.pairs=0", 1, 1, 0}};
    for (size_t k = 0; k < sizeof pair_cases / sizeof *pair_cases; ++k) {
        CHECK_OK(hb_context_set_tuning(ctx, pair_cases[k].spec));
        for (int m = 64; m <= HB_TD_MAX_PARTITION_M; m *= 2) {
            p = plan_probe(m, pair_cases[k].interleaved,
                           pair_cases[k].fp32 ? HB_FLOAT32 : HB_FLOAT64, 100);
            CHECK_OK(hb_gtsv_make_plan(ctx, &p, &plan));
            CHECKF(plan.pairs == pair_cases[k].pairs, "'%s', m = %d, %s %s: pairs=%d",
                   pair_cases[k].spec, m, pair_cases[k].interleaved ? "interleaved" : "flat",
                   pair_cases[k].fp32 ? "fp32" : "fp64", plan.pairs);
        }
    }
    /* Small batches: the boundary, concrete plans, and the tuning's small=0|1. */
    static const tuned_case_t small_cases[] = {
        {"", 128, 1, 1, 256, 8, 16, 128, 1, 1, 0},
        {"", 64, 1, 1, 6144, 8, 8, 128, 1, 1, 0},
        {"", 64, 1, 1, 6146, 16, 4, 128, 1, 1, 1},
        {"", 128, 1, 1, 3072, 8, 16, 128, 1, 1, 0},
        {"", 128, 1, 1, 3074, 16, 8, 256, 1, 1, 1},
        {"", 256, 1, 1, 1024, 8, 32, 128, 1, 1, 0},
        {"", 256, 1, 1, 1026, 16, 16, 256, 1, 1, 1},
        {"", 512, 1, 1, 512, 8, 64, 128, 1, 1, 0},
        {"", 512, 1, 1, 514, 16, 32, 512, 1, 1, 1},
        {"", 512, 1, 0, 256, 8, 64, 128, 4, 1, 0},
        {"", 512, 1, 0, 258, 16, 32, 256, 4, 1, 0},
        {"", 1024, 1, 1, 128, 8, 128, 128, 1, 1, 0},
        {"", 1024, 1, 1, 129, 16, 64, 256, 4, 1, 0},
        {"", 1024, 1, 0, 20, 16, 64, 512, 1, 1, 0},
        {"", 4096, 1, 0, 32, 8, 512, 128, 8, 1, 0},
        {"", 4096, 1, 0, 33, 16, 256, 512, 8, 1, 0},
        {"", 8192, 1, 0, 8, 8, 1024, 128, 8, 1, 0},
        {"", 8192, 1, 0, 9, 16, 512, 512, 8, 1, 0},
        {"gtsv.small=0", 128, 1, 1, 256, 16, 8, 256, 1, 1, 1},
        {"gtsv.small=1", 1024, 1, 0, 20, 8, 128, 128, 1, 1, 0},
        {"gtsv.small=1", 64, 1, 0, 256000, 8, 8, 128, 1, 1, 0},
        {"gtsv.small=1", 8192, 1, 1, 20000, 8, 1024, 128, 8, 1, 0},
        {"gtsv.small=1", 8192, 1, 1, 20001, 8, 1024, 128, 16, 1, 0}};
    check_tuned_plans(ctx, small_cases, sizeof small_cases / sizeof *small_cases);
    CHECK_ERR(hb_context_set_tuning(ctx, "gtsv.small=2"), HB_ERR_INVALID_VALUE,
              "gtsv.small = '2'");
    CHECK_OK(hb_context_set_tuning(ctx, ""));
    /* AUTO on the CPU is THOMAS; partition above m = 8192 and a NULL plan are refused. */
    p = plan_probe(512, 0, HB_FLOAT64, 100);
    p.algo = HB_GTSV_ALGO_AUTO;
    CHECK_OK(hb_gtsv_make_plan(ctx, &p, &plan));
    CHECK(plan.algo == HB_GTSV_ALGO_THOMAS);
    p = plan_probe(HB_TD_MAX_PARTITION_M + 1, 0, HB_FLOAT64, 3);
    CHECK_ERR(hb_gtsv_make_plan(ctx, &p, &plan), HB_ERR_NOT_SUPPORTED, "m <= 8192");
    CHECK_ERR(hb_gtsv_make_plan(ctx, &p, NULL), HB_ERR_INVALID_VALUE, "plan is NULL");
    CHECK_OK(hb_context_set_tuning(ctx, NULL));
}

int main(void)
{
    /* Twice on each backend, as test_tridiag's two passes (a fixed seed, then another) ran
     * it: the rule draws no random numbers, so the passes check the same plans. */
    static const hb_backend_t backends[] = {HB_BACKEND_SEQ, HB_BACKEND_OMP};
    for (int pass = 0; pass < 2; ++pass)
        for (int bi = 0; bi < 2; ++bi) {
            if (!hb_backend_available(backends[bi])) continue;
            hb_context_t *ctx = NULL;
            /* not a CHECK: the passed count stays test_rule's, as it was in test_tridiag */
            if (hb_context_create(backends[bi], &ctx) != HB_SUCCESS) {
                fprintf(stderr, "test_tridiag_plan: %s backend: %s\n",
                        hb_backend_name(backends[bi]), hb_last_error());
                return 1;
            }
            test_rule(ctx);
            hb_context_destroy(ctx);
        }
    return check_summary("test_tridiag_plan");
}
