/*
 * The BRANCHED kernel's plan and CPU twin (src/core/hines_branched.h): the
 * schedule is sound (check_plan), and the twin solves every system of a
 * same-morphology batch like hb_hines_solve, for FLAT, INTERLEAVED and BLOCK
 * layouts, teams of 1 to 32 lanes with partial last teams, stage costs from
 * one stage per height to one stage in all; u, l and d stay as they were;
 * systems with their own u and l too. The stage is poisoned before every solve, so a slot the staging misses
 * shows as NaN.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/hines_branched.h"
#include "cpu/hines_cpu.h"
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

/* The schedule is sound: every node one op; a parent carried iff it is the task's next op,
 * in the task iff later in it, else in a later stage; every child eliminated before its
 * parent: earlier in the task, or in an earlier stage and gathered once. */
static void check_plan(const char *what, const int *parent, const hb_hines_branched_t *br)
{
    const int m = br->m; /* the tables name nodes */
    const hb_branched_tables_t t =
        hb_branched_tables_at(m, br->n_stages, br->n_tasks, br->n_gathers, br->tables);
    int *op_of = check_malloc((size_t)m * sizeof *op_of), *task_of = check_malloc((size_t)m * sizeof *task_of);
    int *stage_of = check_malloc((size_t)m * sizeof *stage_of);
    int *gathered = check_malloc((size_t)m * sizeof *gathered);
    for (int i = 0; i < m; ++i) op_of[i] = -1;
    int ok = br->n_stages >= 1 && t.stage_task[0] == 0 && t.stage_task[br->n_stages] == br->n_tasks &&
             t.task_op[0] == 0 && t.task_op[br->n_tasks] == m && t.task_gather[0] == 0 &&
             t.task_gather[br->n_tasks] == br->n_gathers &&
             br->words == 2 * (size_t)m + 2 * (size_t)br->n_gathers + (size_t)br->n_stages + 1 +
                              2 * ((size_t)br->n_tasks + 1);
    CHECKF(ok, "%s: table bounds (%d stages, %d tasks, %d gathers)", what, br->n_stages,
           br->n_tasks, br->n_gathers);
    for (int s = 0; s < br->n_stages && ok; ++s)
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
    CHECKF(ok, "%s: the ops are not every node once", what);
    for (int task = 0; task < br->n_tasks && ok; ++task)
        for (int g = t.task_gather[task]; g < t.task_gather[task + 1] && ok; ++g) {
            const int i = t.gathers[g].row, c = t.gathers[g].child;
            ok = i >= 0 && i < m && c > 0 && c < m && parent[c] == i && task_of[i] == task &&
                 stage_of[c] < stage_of[i];
            if (ok) gathered[c]++;
        }
    CHECKF(ok, "%s: a gather is not a child of an earlier stage into its task", what);
    for (int i = 0; i < m && ok; ++i) {
        const hb_branched_op_t op = t.ops[op_of[i]];
        if (i == 0) {
            ok = op.parent == ((m + 1) << 2 | HB_BRANCHED_ROOT);
            continue;
        }
        const int p = parent[i], kind = op.parent & 3, j = op_of[i];
        ok = (op.parent >> 2) == p;
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
}

typedef struct {
    int layout, block_size;
} layout_case_t;

/* count systems of one tree, d and rhs (and u, l when `own_ul`) different per system;
 * without own u and l, the twin gets the shared copy (as the kernel does for a uniform batch)
 * when `shared`. */
static void check_batch(const char *what, int m, const int *parent, const double *u0,
                        const double *l0, const double *d0, const double *r0, int count, int own_ul,
                        int layout_kind, int block_size, int lanes, int stage_cost, int shared)
{
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
    CHECK_OK(hb_hines_branched_build(m, parent, lanes, workers, stage_cost, &br));
    if (br.m == m) {
        char where[256];
        snprintf(where, sizeof where,
                 "%.120s, %d systems, layout %d/%d, %d lanes x %d, stage cost %d (%d stages), "
                 "u and l %s",
                 what, count, layout_kind, block, lanes, workers, stage_cost, br.n_stages,
                 own_ul ? "own" : shared ? "shared" : "copied");
        check_plan(where, parent, &br);
        const int uniform = !own_ul && shared;
        const size_t stage_n =
            hb_branched_layout(m, lanes, br.words, uniform).bytes / sizeof(double) + 1;
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
}

static const layout_case_t layouts[] = {
    {HB_LAYOUT_FLAT, 0}, {HB_LAYOUT_INTERLEAVED, 0}, {HB_LAYOUT_BLOCK, 8}, {HB_LAYOUT_BLOCK, 5}};

static void test_random_trees(void)
{
    const int sizes[] = {1, 2, 5, 70, 300};
    const int lanes[] = {1, 3, 4, 32};
    const int costs[] = {0, HB_BRANCHED_STAGE_COST, 1000}; /* many stages .. one */
    const int counts[] = {1, 7, 37};
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
                        check_batch(what, m, parent, u, l, d, r, counts[c], (a + q) % 3 == 0,
                                    lc->layout, lc->block_size, lanes[a], costs[q], (a + c) % 2);
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
                    a % 2 ? 0 : HB_BRANCHED_STAGE_COST, a < 2);
    }
    check_batch(name, m, parent, u, l, d, r, 9, 1, HB_LAYOUT_INTERLEAVED, 0, 8, 3, 0);
}

static void test_errors(void)
{
    const int parent[3] = {-1, 0, 1};
    hb_hines_branched_t br;
    CHECK(hb_hines_branched_build(3, parent, 0, 8, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 33, 8, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 2, 0, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 2, 8, -1, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(0, parent, 2, 8, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(br.m == 0 && br.tables == NULL);
    /* a chain is one task whatever the cost; every row but the root carries its parent */
    CHECK_OK(hb_hines_branched_build(3, parent, 4, 8, 0, &br));
    CHECK(br.n_stages == 1 && br.n_tasks == 1 && br.n_gathers == 0);
    const hb_branched_op_t *ops = (const hb_branched_op_t *)br.tables;
    CHECK(ops[0].row == 2 && ops[0].parent == ((1 << 2) | HB_BRANCHED_CARRIED) && ops[2].row == 0 &&
          ops[2].parent == ((4 << 2) | HB_BRANCHED_ROOT));
    hb_hines_branched_free(&br);
    /* a root with two chains of two: with no stage cost the chains are two tasks of a stage
     * below the root's (8 half-rows against 10 for one task) */
    const int fork[5] = {-1, 0, 1, 0, 3};
    CHECK_OK(hb_hines_branched_build(5, fork, 1, 8, 0, &br));
    CHECK(br.n_stages == 2 && br.n_tasks == 3 && br.n_gathers == 2);
    hb_hines_branched_free(&br);
    CHECK_OK(hb_hines_branched_build(5, fork, 1, 8, 1000, &br));
    CHECK(br.n_stages == 1 && br.n_tasks == 1 && br.n_gathers == 0);
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
