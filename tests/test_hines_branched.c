/*
 * The BRANCHED kernel's plan and CPU twin (src/common/hines_branched.h): the
 * schedule is sound (check_plan), and the twin solves every system of a
 * same-morphology batch like hb_hines_solve, for FLAT, INTERLEAVED and BLOCK
 * layouts, teams of 1 to 32 lanes with partial last teams, stage costs from
 * one stage per height to one stage in all, long chains split or not; u, l and
 * d stay as they were; systems with their own u and l too. The stage is
 * poisoned before every solve, so a slot the staging misses shows as NaN.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/hines_branched.h"
#include "common/layout.h"
#include "hinesbatch.h"
#include "test_random.h"
#include "test_real_systems.h"

/* Chains with forks, bushy trees, and single chains (split into chunks). */
static void random_tree(int shape, int m, int *parent)
{
    parent[0] = -1;
    for (int i = 1; i < m; ++i) {
        switch (shape) {
        case 0: parent[i] = uniform() < 0.85 ? i - 1 : (int)(uniform() * i); break;
        case 1: parent[i] = (int)(uniform() * i); break;
        default: parent[i] = i - 1;
        }
    }
}

/* The schedule is sound: every node one op, in a task or in a chunk; a parent carried iff it
 * is the task's next op, in the task iff later in it, else in a later stage; every child
 * eliminated before its parent: earlier in the task, or in an earlier stage and gathered
 * once. Split chains: each item's chunks are the runs of nodes between its separator and the
 * next ones, one stage before the separators' task; each chunk lies below one item and above
 * the next; a separator with a chunk above names its own coupling node and carries into the
 * separator above it. Returns the number of split chains. */
static int check_plan(const char *what, const int *parent, const hb_hines_branched_t *br)
{
    const int m = br->m, S = br->n_stages, T = br->n_tasks, I = br->n_items, V = br->couplings;
    const hb_branched_tables_t t = hb_branched_tables_at(m, br->tables);
    int *op_of = check_malloc((size_t)m * sizeof *op_of), *task_of = check_malloc((size_t)m * sizeof *task_of);
    int *stage_of = check_malloc((size_t)m * sizeof *stage_of);
    int *gathered = check_malloc((size_t)m * sizeof *gathered);
    int *coupling_used = check_malloc(((size_t)V + 1) * sizeof *coupling_used);
    for (int i = 0; i < m; ++i) op_of[i] = task_of[i] = stage_of[i] = -1;
    for (int c = 0; c <= V; ++c) coupling_used[c] = 0;
    const int chunk_first = T > 0 ? t.task_op[T] : 0;
    int ok = br->tables[0] == S && br->tables[1] == T && br->tables[2] == br->n_gathers &&
             br->tables[3] == I && S >= 1 && t.stage_task[0] == 0 && t.stage_task[S] == T &&
             t.stage_item[0] == 0 && t.stage_item[S] == I && t.task_op[0] == 0 &&
             chunk_first <= m && t.task_gather[0] == 0 && t.task_gather[T] == br->n_gathers &&
             (I == 0) == (chunk_first == m) && V <= I &&
             br->words == HB_BRANCHED_HEADER + 2 * (size_t)m + 2 * (size_t)br->n_gathers +
                              8 * (size_t)I + 2 * ((size_t)S + 1) + 2 * ((size_t)T + 1);
    CHECKF(ok, "%s: table bounds (%d stages, %d tasks, %d gathers, %d items)", what, S, T,
           br->n_gathers, I);
    for (int s = 0; s < S && ok; ++s)
        for (int task = t.stage_task[s]; task < t.stage_task[s + 1] && ok; ++task) {
            ok = t.task_op[task] < t.task_op[task + 1];
            for (int j = t.task_op[task]; j < t.task_op[task + 1] && ok; ++j) {
                const int i = t.ops[j].row;
                ok = i >= 0 && i < m && op_of[i] < 0;
                if (!ok) break;
                op_of[i] = j;
                task_of[i] = task;
                stage_of[i] = s;
                gathered[i] = 0;
            }
        }
    for (int j = chunk_first; j < m && ok; ++j) { /* the chunks' rows */
        const int i = t.ops[j].row;
        ok = i > 0 && i < m && op_of[i] < 0;
        if (ok) op_of[i] = j;
    }
    CHECKF(ok, "%s: the ops are not every node once", what);
    for (int task = 0; task < T && ok; ++task)
        for (int g = t.task_gather[task]; g < t.task_gather[task + 1] && ok; ++g) {
            const int i = t.gathers[g].row, c = t.gathers[g].child;
            ok = i >= 0 && i < m && c > 0 && c < m && parent[c] == i && task_of[i] == task &&
                 task_of[c] >= 0 && stage_of[c] < stage_of[i];
            if (ok) gathered[c]++;
        }
    CHECKF(ok, "%s: a gather is not a child of an earlier stage into its task", what);
    int chains = 0, chunk_rows = 0;
    for (int s = 0; s < S && ok; ++s)
        for (int q = t.stage_item[s]; q < t.stage_item[s + 1] && ok; ++q) {
            const hb_branched_item_t it = t.items[q];
            const int below = it.below_first < it.below_end, above = it.above_first < it.above_end;
            ok = it.sep >= 0 && it.sep < m && task_of[it.sep] >= 0 && stage_of[it.sep] == s + 1 &&
                 (below || above);
            if (!ok) break;
            const int j = op_of[it.sep], end = t.task_op[task_of[it.sep] + 1];
            if (above) { /* rows sep's parent .. up to the separator over it, which is next */
                ok = it.above_first >= chunk_first && it.above_end <= m &&
                     it.sep_coupling > m + 1 && it.sep_coupling < m + 2 + V &&
                     !coupling_used[it.sep_coupling - m - 2]++ &&
                     t.ops[j].parent == ((it.sep_coupling << 2) | HB_BRANCHED_CARRIED) &&
                     j + 1 < end && parent[it.sep] == t.ops[it.above_first].row &&
                     parent[t.ops[it.above_end - 1].row] == t.ops[j + 1].row;
                for (int r = it.above_first; r + 1 < it.above_end && ok; ++r)
                    ok = parent[t.ops[r].row] == t.ops[r + 1].row;
            } else {
                ok = it.sep_coupling == m && (t.ops[j].parent >> 2) <= m + 1;
                chains++;
            }
            if (!ok) break;
            if (below) { /* rows from the separator under sep up to sep, the next item's above */
                const hb_branched_item_t under = t.items[q + 1];
                ok = q + 1 < t.stage_item[s + 1] && under.sep == it.below &&
                     under.above_first == it.below_first && under.above_end == it.below_end &&
                     it.below_coupling == under.sep_coupling &&
                     parent[t.ops[it.below_end - 1].row] == it.sep;
                for (int r = it.below_first; r < it.below_end && ok; ++r)
                    ok = t.ops[r].parent == ((parent[t.ops[r].row] << 2) | HB_BRANCHED_CARRIED);
                chunk_rows += it.below_end - it.below_first;
            } else {
                ok = it.below_coupling == m;
            }
        }
    CHECKF(ok && chunk_rows == m - chunk_first,
           "%s: an item's chunks or couplings are wrong (%d of %d chunk rows)", what, chunk_rows,
           m - chunk_first);
    for (int i = 0; i < m && ok; ++i) {
        if (task_of[i] < 0) continue; /* a chunk's row: checked with its item */
        const hb_branched_op_t op = t.ops[op_of[i]];
        if (i == 0) {
            ok = op.parent == ((m + 1) << 2 | HB_BRANCHED_ROOT);
            continue;
        }
        if ((op.parent >> 2) > m + 1) continue; /* a separator: checked with its item */
        const int p = parent[i], kind = op.parent & 3, j = op_of[i];
        ok = (op.parent >> 2) == p && task_of[p] >= 0;
        if (!ok) break;
        const int next = j + 1 < t.task_op[task_of[i] + 1] ? t.ops[j + 1].row : -1;
        if (task_of[p] == task_of[i])
            ok = op_of[p] > j && kind == (next == p ? HB_BRANCHED_CARRIED : HB_BRANCHED_IN_TASK) &&
                 gathered[i] == 0;
        else
            ok = stage_of[p] > stage_of[i] && kind == HB_BRANCHED_LATER && gathered[i] == 1;
    }
    CHECKF(ok, "%s: a parent link or a gather count is wrong", what);
    free(op_of);
    free(task_of);
    free(stage_of);
    free(gathered);
    free(coupling_used);
    return chains;
}

typedef struct {
    int layout, block_size;
} layout_case_t;

/* count systems of one tree, d and rhs (and u, l when `own_ul`) different per system;
 * without own u and l, the twin gets the shared copy (as the kernel does for a uniform batch)
 * when `shared`. */
static int check_batch(const char *what, int m, const int *parent, const double *u0,
                       const double *l0, const double *d0, const double *r0, int count, int own_ul,
                       int layout_kind, int block_size, int lanes, int stage_cost, int shared,
                       int split_rows)
{
    int chains = 0;
    const int workers = 1 + (count + lanes + stage_cost) % 5; /* the kernel's threads per lane */
    const hb_layout_t layout = (hb_layout_t)layout_kind;
    const int block = hb_layout_block(layout, count, block_size);
    const size_t size = (size_t)((count + block - 1) / block) * (size_t)block * (size_t)m;
    double *u = check_malloc(size * sizeof *u), *l = check_malloc(size * sizeof *l);
    double *d = check_malloc(size * sizeof *d), *r = check_malloc(size * sizeof *r);
    double *x = check_malloc((size_t)m * count * sizeof *x), *dd = check_malloc((size_t)m * sizeof *dd);
    double *su = check_malloc((size_t)m * sizeof *su), *sl = check_malloc((size_t)m * sizeof *sl);
    for (size_t j = 0; j < size; ++j) u[j] = l[j] = d[j] = r[j] = -3.0; /* padding */
    for (int s = 0; s < count; ++s) {
        const double scale = 1.0 + 0.25 * uniform(), ul = own_ul ? 0.5 + uniform() : 1.0;
        for (int i = 0; i < m; ++i) {
            const size_t g = hb_block_base(m, block, s) + (size_t)i * (size_t)block;
            su[i] = u[g] = u0[i] * ul;
            sl[i] = l[g] = l0[i] * ul;
            dd[i] = d[g] = d0[i] * scale + (own_ul ? 2.0 * fabs(u0[i]) + 2.0 * fabs(l0[i]) : 0.0);
            x[(size_t)s * m + i] = r[g] = r0[i] + 0.1 * (uniform() - 0.5);
        }
        CHECK_OK(hb_hines_solve(m, parent, su, sl, dd, x + (size_t)s * m));
    }
    double *u_in = check_malloc(size * sizeof *u_in), *l_in = check_malloc(size * sizeof *l_in);
    double *d_in = check_malloc(size * sizeof *d_in);
    memcpy(u_in, u, size * sizeof *u);
    memcpy(l_in, l, size * sizeof *l);
    memcpy(d_in, d, size * sizeof *d);
    hb_hines_branched_t br;
    CHECK_OK(hb_hines_branched_build(m, parent, lanes, workers, stage_cost, split_rows, &br));
    if (br.m == m) {
        char where[256];
        snprintf(where, sizeof where,
                 "%.120s, %d systems, layout %d/%d, %d lanes x %d, stage cost %d (%d stages), "
                 "split %d (%d items), u and l %s",
                 what, count, layout_kind, block, lanes, workers, stage_cost, br.n_stages,
                 split_rows, br.n_items, own_ul ? "own" : shared ? "shared" : "copied");
        chains = check_plan(where, parent, &br);
        const int uniform = !own_ul && shared;
        const size_t stage_n =
            hb_branched_layout(m, br.couplings, lanes, br.words, uniform).bytes / sizeof(double) +
            1;
        double *stage = check_malloc(stage_n * sizeof *stage);
        for (size_t j = 0; j < stage_n; ++j) stage[j] = NAN;
        /* malloc: 16-byte aligned */
        hb_hines_branched_solve(&br, count, block, u, l, d, r, uniform ? su : NULL,
                                uniform ? sl : NULL, stage);
        double worst = 0.0;
        for (int s = 0; s < count; ++s) {
            double norm = 0.0, diff = 0.0;
            for (int i = 0; i < m; ++i) {
                const size_t g = hb_block_base(m, block, s) + (size_t)i * (size_t)block;
                const double want = x[(size_t)s * m + i];
                norm = fmax(norm, fabs(want));
                diff = fmax(diff, fabs(r[g] - want)); /* NaN fails below */
            }
            const double rel = norm > 0.0 ? diff / norm : diff;
            if (!(rel <= worst)) worst = rel;
        }
        CHECKF(worst <= 1e-12, "%s: max relative |x - x_hines| = %g", where, worst);
        CHECKF(memcmp(u, u_in, size * sizeof *u) == 0 && memcmp(l, l_in, size * sizeof *l) == 0 &&
                   memcmp(d, d_in, size * sizeof *d) == 0,
               "%s: u, l or d written", where);
        int padding = 1;
        for (size_t j = 0; j < size; ++j) {
            const int s = (int)((j / ((size_t)m * block)) * (size_t)block + j % (size_t)block);
            if (s >= count) padding &= r[j] == -3.0;
        }
        CHECKF(padding, "%s: layout padding written", where);
        /* The sink (node m) and the zero node (m + 1) of every lane are only read, so they are
         * still 0 (every worker of a lane once stored to the sink: a race on the GPU;
         * docs/gpu.md, "Sink"). */
        const hb_branched_layout_t a =
            hb_branched_layout(m, br.couplings, lanes, br.words, uniform);
        int zeros = 1;
        for (int k = 0; k < lanes; ++k) {
            const hb_branched_lane_t v = hb_branched_lane(stage, &a, lanes, uniform, k);
            const hb_branched_pair_t sink = HB_BRANCHED_DR(&v, m), zero = HB_BRANCHED_DR(&v, m + 1);
            zeros &= sink.x == 0.0 && sink.y == 0.0 && zero.x == 0.0 && zero.y == 0.0;
        }
        CHECKF(zeros, "%s: the sink or the zero node was written", where);
        free(stage);
    }
    hb_hines_branched_free(&br);
    free(u);
    free(l);
    free(d);
    free(r);
    free(x);
    free(dd);
    free(su);
    free(sl);
    free(u_in);
    free(l_in);
    free(d_in);
    return chains;
}

static const layout_case_t layouts[] = {
    {HB_LAYOUT_FLAT, 0}, {HB_LAYOUT_INTERLEAVED, 0}, {HB_LAYOUT_BLOCK, 8}, {HB_LAYOUT_BLOCK, 5}};

/* Random trees of every shape and size, lanes, stage costs, layouts and splits: none,
 * every chain of 4 rows or more (chunks of 2 rows), the default. Single chains of 70 and 300
 * rows with at least two workers are always split. */
static void test_random_trees(void)
{
    const int sizes[] = {1, 2, 5, 70, 300};
    const int lanes[] = {1, 3, 4, 32};
    const int costs[] = {0, HB_BRANCHED_STAGE_COST, 1000}; /* many stages .. one */
    const int counts[] = {1, 7, 37};
    const int splits[] = {0, HB_BRANCHED_MIN_SPLIT_ROWS, HB_BRANCHED_SPLIT_ROWS};
    for (int shape = 0; shape < 3; ++shape)
        for (int k = 0; k < 5; ++k) {
            const int m = sizes[k];
            int *parent = check_malloc((size_t)m * sizeof *parent);
            double *u = check_malloc(4 * (size_t)m * sizeof *u), *l = u + m, *d = l + m, *r = d + m;
            random_tree(shape, m, parent);
            test_random_system(m, parent, u, l, d, r);
            char what[64];
            snprintf(what, sizeof what, "shape %d, m = %d", shape, m);
            for (int a = 0; a < 4; ++a)
                for (int c = 0; c < 3; ++c)
                    for (int q = 0; q < 3; ++q) {
                        const layout_case_t *lc = &layouts[(a + c + q) % 4];
                        const int split = splits[(a + 2 * c + q) % 3];
                        const int workers = 1 + (counts[c] + lanes[a] + costs[q]) % 5;
                        const int chains =
                            check_batch(what, m, parent, u, l, d, r, counts[c], (a + q) % 3 == 0,
                                        lc->layout, lc->block_size, lanes[a], costs[q], (a + c) % 2,
                                        split);
                        if (shape == 2 && m >= 70 && split && workers >= 2)
                            CHECKF(chains == 1, "%s, split %d, %d workers: %d chains split",
                                   what, split, workers, chains);
                        if (!split) CHECKF(chains == 0, "%s: split 0 split %d chains", what, chains);
                    }
            free(parent);
            free(u);
        }
}

/* One real cell: every layout, teams of 1, 4 and 8, several stage costs, own u and l or
 * shared. */
static void check_real_cell(const char *name, int m, const int *parent, const double *u,
                            const double *l, const double *d, const double *r)
{
    for (int a = 0; a < 4; ++a) {
        const layout_case_t *lc = &layouts[a];
        check_batch(name, m, parent, u, l, d, r, 6, 0, lc->layout, lc->block_size, a == 0 ? 1 : 4,
                    a % 2 ? 0 : HB_BRANCHED_STAGE_COST, a < 2,
                    a == 3 ? 0 : a == 2 ? HB_BRANCHED_MIN_SPLIT_ROWS : HB_BRANCHED_SPLIT_ROWS);
    }
    check_batch(name, m, parent, u, l, d, r, 9, 1, HB_LAYOUT_INTERLEAVED, 0, 8, 3, 0,
                HB_BRANCHED_MIN_SPLIT_ROWS);
}

static void test_errors(void)
{
    const int parent[3] = {-1, 0, 1};
    hb_hines_branched_t br;
    CHECK(hb_hines_branched_build(3, parent, 0, 8, 0, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 33, 8, 0, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 2, 0, 0, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 2, 8, -1, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(0, parent, 2, 8, 0, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 2, 8, 0, HB_BRANCHED_MIN_SPLIT_ROWS - 1, &br) ==
          HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 2, 8, 0, -1, &br) == HB_ERR_INVALID_VALUE);
    CHECK(br.m == 0 && br.tables == NULL);
    /* a chain is one task whatever the cost; every row but the root carries its parent; too
     * short to split */
    CHECK_OK(hb_hines_branched_build(3, parent, 4, 8, 0, HB_BRANCHED_MIN_SPLIT_ROWS, &br));
    CHECK(br.n_stages == 1 && br.n_tasks == 1 && br.n_gathers == 0 && br.n_items == 0);
    const hb_branched_op_t *ops = (const hb_branched_op_t *)(br.tables + HB_BRANCHED_HEADER);
    CHECK(ops[0].row == 2 && ops[0].parent == ((1 << 2) | HB_BRANCHED_CARRIED) && ops[2].row == 0 &&
          ops[2].parent == ((4 << 2) | HB_BRANCHED_ROOT));
    hb_hines_branched_free(&br);
    /* a root with two chains of two: with no stage cost the chains are two tasks of a stage
     * below the root's (8 half-rows against 10 for one task) */
    const int fork[5] = {-1, 0, 1, 0, 3};
    CHECK_OK(hb_hines_branched_build(5, fork, 1, 8, 0, 0, &br));
    CHECK(br.n_stages == 2 && br.n_tasks == 3 && br.n_gathers == 2);
    hb_hines_branched_free(&br);
    CHECK_OK(hb_hines_branched_build(5, fork, 1, 8, 1000, 0, &br));
    CHECK(br.n_stages == 1 && br.n_tasks == 1 && br.n_gathers == 0);
    hb_hines_branched_free(&br);
    /* a chain of 20 split from 4 rows with 2 workers: chunks of 3 rows (sqrt(10)) under the
     * separators 0, 4, 8, 12, 16, and of 2 rows down to the chain's end, 19; the items a stage
     * before the task; one worker alone never splits */
    int chain[20];
    for (int i = 0; i < 20; ++i) chain[i] = i - 1;
    CHECK(hb_branched_chunk_rows(20) == 3 && hb_branched_chunk_rows(4) == 2 &&
          hb_branched_chunk_rows(200) == 10);
    CHECK_OK(hb_hines_branched_build(20, chain, 1, 2, 0, 4, &br));
    CHECK(br.n_stages == 2 && br.n_tasks == 1 && br.n_items == 6 && br.couplings == 5);
    ops = (const hb_branched_op_t *)(br.tables + HB_BRANCHED_HEADER);
    const int rows[6] = {19, 16, 12, 8, 4, 0};
    const int parents[6] = {26 << 2 | HB_BRANCHED_CARRIED, 25 << 2 | HB_BRANCHED_CARRIED,
                            24 << 2 | HB_BRANCHED_CARRIED, 23 << 2 | HB_BRANCHED_CARRIED,
                            22 << 2 | HB_BRANCHED_CARRIED, 21 << 2 | HB_BRANCHED_ROOT};
    int same = 1;
    for (int j = 0; j < 6; ++j) same &= ops[j].row == rows[j] && ops[j].parent == parents[j];
    CHECK(same);
    check_plan("chain of 20", chain, &br);
    hb_hines_branched_free(&br);
    CHECK_OK(hb_hines_branched_build(20, chain, 1, 1, 0, 4, &br));
    CHECK(br.n_stages == 1 && br.n_items == 0 && br.couplings == 0);
    hb_hines_branched_free(&br);
    /* latency-bound while cost >= HB_BRANCHED_SPLIT_LATENCY x blocks x lanes x m; split chains
     * pay only from two blocks a multiprocessor */
    CHECK_OK(hb_hines_branched_build(20, chain, 2, 4, 0, 0, &br));
    const int most = (int)(br.cost / (HB_BRANCHED_SPLIT_LATENCY * 2 * 20) + 1e-9);
    CHECK(most >= 2 && hb_branched_latency_bound(&br, most) &&
          !hb_branched_latency_bound(&br, most + 1));
    CHECK(!hb_branched_split_pays(&br, 1) && hb_branched_split_pays(&br, 2) &&
          !hb_branched_split_pays(&br, most + 1));
    hb_hines_branched_free(&br);
}

int main(void)
{
    rng_state = 0xb4a2c4edULL;
    test_random_trees();
    test_each_real_system(check_real_cell);
    test_errors();
    return check_summary("test_hines_branched");
}
