/*
 * The BRANCHED kernel's plan and CPU twin (src/core/hines_branched.h): the
 * scaled plan still describes the cell (node slots a permutation of the
 * multiples of lanes, split lists sound), and the twin solves every system of
 * a same-morphology batch like hb_hines_solve, for FLAT, INTERLEAVED and BLOCK
 * layouts, teams of 1 to 32 lanes with partial last teams, with and without
 * split branches; u, l and d stay as they were; systems with their own u and l
 * too. The stage is poisoned before every solve, so a slot the staging misses
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

static void check_plan(const char *what, const hb_hines_branched_t *br)
{
    const int m = br->m, L = br->lanes;
    char *seen = calloc((size_t)m ? (size_t)m : 1, 1);
    if (!seen) exit(2);
    int ok = 1;
    for (int i = 0; i < m && ok; ++i) {
        const size_t s = br->plan.node_slot[i];
        ok = s % (size_t)L == 0 && s / (size_t)L < (size_t)m && !seen[s / (size_t)L];
        if (ok) seen[s / (size_t)L] = 1;
    }
    CHECKF(ok, "%s: node slots are not a permutation of the multiples of %d", what, L);
    CHECKF(br->plan.n_groups == 1 && br->plan.n_slots == (size_t)m, "%s: %d groups, %zu slots", what,
           br->plan.n_groups, br->plan.n_slots);
    const hb_multi_dims_t *t = &br->dims;
    CHECKF(t->entries == br->plan.row_off[1] && t->entries <= m, "%s: %d row entries for %d rows",
           what, t->entries, m);
    CHECKF(t->branches == br->plan.n_branches && t->children == t->branches - 1 &&
               t->levels == br->plan.max_levels && t->splits == br->plan.split_off[1],
           "%s: table sizes %d %d %d %d", what, t->branches, t->children, t->levels, t->splits);
    free(seen);
}

typedef struct {
    int layout, block_size;
} layout_case_t;

/* count systems of one tree, d and rhs (and u, l when `own_ul`) different per system. */
static void check_batch(const char *what, int m, const int *parent, const double *u0,
                        const double *l0, const double *d0, const double *r0, int count, int own_ul,
                        int layout_kind, int block_size, int lanes, int split)
{
    const int workers = 1 + (count + lanes + split) % 5; /* the kernel's threads per lane */
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
    CHECK_OK(hb_hines_branched_build(m, parent, lanes, split, &br));
    if (br.m == m) {
        char where[256];
        snprintf(where, sizeof where, "%.120s, %d systems, layout %d/%d, %d lanes x %d, split %d",
                 what, count, layout_kind, block, lanes, workers, split);
        check_plan(where, &br);
        const size_t stage_n = hb_hines_branched_bytes(m, lanes, &br.dims) / sizeof(double) + 1;
        double *stage = check_malloc(stage_n * sizeof *stage);
        for (size_t j = 0; j < stage_n; ++j) stage[j] = NAN;
        hb_hines_branched_solve(&br, count, block, workers, u, l, d, r, stage);
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
    const int splits[] = {0, HB_MULTI_MIN_SPLIT_ROWS, HB_MULTI_SPLIT_ROWS};
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
                                    lc->layout, lc->block_size, lanes[a], splits[q]);
                    }
            free(parent);
            free(u);
        }
}

/* One real cell: every layout, teams of 1, 4 and 8, split or not, own u and l or shared. */
static void check_real_cell(const char *name, int m, const int *parent, const double *u,
                            const double *l, const double *d, const double *r)
{
    for (int a = 0; a < 4; ++a) {
        const layout_case_t *lc = &layouts[a];
        check_batch(name, m, parent, u, l, d, r, 6, 0, lc->layout, lc->block_size, a == 0 ? 1 : 4,
                    a % 2 ? 0 : HB_MULTI_SPLIT_ROWS);
    }
    check_batch(name, m, parent, u, l, d, r, 9, 1, HB_LAYOUT_INTERLEAVED, 0, 8,
                HB_MULTI_MIN_SPLIT_ROWS);
}

static void test_errors(void)
{
    const int parent[3] = {-1, 0, 1};
    hb_hines_branched_t br;
    CHECK(hb_hines_branched_build(3, parent, 0, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(hb_hines_branched_build(3, parent, 33, 0, &br) == HB_ERR_INVALID_VALUE);
    CHECK(br.m == 0 && br.plan.node_slot == NULL);
    /* lanes are set once, on a plan of one lane */
    CHECK_OK(hb_hines_branched_build(3, parent, 1, 0, &br));
    CHECK_OK(hb_hines_branched_set_lanes(&br, 4));
    CHECK(br.lanes == 4 && br.plan.node_slot[2] % 4 == 0);
    CHECK(hb_hines_branched_set_lanes(&br, 2) == HB_ERR_INVALID_VALUE && br.lanes == 4);
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
