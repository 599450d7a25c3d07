/*
 * The PIPELINED kernel's row plan (src/common/hines_plan.h) and its CPU twin:
 * slot live ranges never overlap and their count is the smallest possible;
 * the twin solves like hb_hines_solve on random trees and real cells, for
 * every split between the on-chip tail and the scratch, and leaves u, l, d
 * untouched.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/hines_plan.h"
#include "hinesbatch.h"
#include "test_random.h"
#include "test_real_systems.h"

/* Random Hines-ordered trees: chains with forks, bushy, and depth-first numbered. */
static void random_tree(int shape, int m, int *parent)
{
    parent[0] = -1;
    for (int i = 1; i < m; ++i) {
        const double r = uniform();
        switch (shape) {
        case 0: parent[i] = r < 0.8 ? i - 1 : (int)(uniform() * i); break; /* long sections */
        case 1: parent[i] = (int)(uniform() * i); break;                    /* bushy */
        default: { /* branches of random length hanging anywhere before them */
            parent[i] = r < 0.9 ? i - 1 : (int)(uniform() * (i < 8 ? i : 8)) * (i / 8);
            if (parent[i] >= i) parent[i] = i - 1;
        }
        }
    }
}

/* The slots' live ranges [p, last non-carried child of p] are disjoint when
 * they share a slot, and the count equals the largest number open at a row. */
static void check_plan(const char *what, int m, const int *parent, const hb_hines_plan_t *plan)
{
    int *last = check_malloc((size_t)m * sizeof *last), *slot = check_malloc((size_t)m * sizeof *slot);
    int *open = calloc((size_t)m + 1, sizeof *open);
    if (!open) exit(2);
    for (int i = 0; i < m; ++i) last[i] = -1;
    for (int i = 1; i < m; ++i)
        if (parent[i] != i - 1 && i > last[parent[i]]) last[parent[i]] = i;
    int codes_ok = 1, overlap_ok = 1;
    for (int i = 0; i < m; ++i) {
        const int c = plan->code[i];
        slot[i] = hb_plan_own_slot(c);
        codes_ok &= (last[i] >= 0) == (slot[i] != HB_PLAN_NO_SLOT);
        codes_ok &= slot[i] == HB_PLAN_NO_SLOT || slot[i] < plan->slots;
        if (i == 0) continue;
        codes_ok &= hb_plan_carried(c) == (parent[i] == i - 1);
        if (!hb_plan_carried(c)) {
            codes_ok &= hb_plan_parent_slot(c) == hb_plan_own_slot(plan->code[parent[i]]);
            codes_ok &= hb_plan_first(c) == (i == last[parent[i]]);
        }
    }
    int widest = 0;
    for (int p = 0; p < m; ++p)
        if (last[p] >= 0) {
            open[p]++;
            open[last[p] + 1]--;
        }
    for (int i = 0, now = 0; i < m; ++i) {
        now += open[i];
        if (now > widest) widest = now;
    }
    for (int p = 0; p < m && overlap_ok; ++p)
        for (int q = p + 1; q < m && last[p] >= 0; ++q)
            if (last[q] >= 0 && slot[q] == slot[p] && q <= last[p]) overlap_ok = 0;
    CHECKF(codes_ok, "%s: row codes disagree with the tree", what);
    CHECKF(overlap_ok, "%s: two live ranges share a slot", what);
    CHECKF(plan->slots == widest, "%s: %d slots, %d ranges open at most", what, plan->slots, widest);
    free(last);
    free(slot);
    free(open);
}

/* Twin vs hb_hines_solve for tails 0, 1, m / 3, m and row strides 1 and 3. */
static void check_solve(const char *what, int m, const int *parent, const double *u,
                        const double *l, const double *d, const double *rhs)
{
    hb_hines_plan_t plan;
    CHECK_OK(hb_hines_plan_build(m, parent, &plan));
    if (!plan.code) return;
    check_plan(what, m, parent, &plan);
    double *dd = check_malloc((size_t)m * sizeof *dd), *x = check_malloc((size_t)m * sizeof *x);
    memcpy(dd, d, (size_t)m * sizeof *dd);
    memcpy(x, rhs, (size_t)m * sizeof *x);
    CHECK_OK(hb_hines_solve(m, parent, u, l, dd, x));
    double norm = 0.0;
    for (int i = 0; i < m; ++i) norm = fmax(norm, fabs(x[i]));
    const int tails[] = {0, 1, m / 3, m};
    const size_t strides[] = {1, 3};
    double *su = check_malloc(3 * (size_t)m * sizeof *su), *sl = check_malloc(3 * (size_t)m * sizeof *sl);
    double *sd = check_malloc(3 * (size_t)m * sizeof *sd), *sr = check_malloc(3 * (size_t)m * sizeof *sr);
    double *tail_ab = check_malloc(2 * (size_t)m * sizeof *tail_ab);
    double *scratch = check_malloc(2 * (size_t)m * sizeof *scratch);
    double *slots = check_malloc((2 * (size_t)plan.slots + 1) * sizeof *slots);
    for (int t = 0; t < 4; ++t)
        for (int k = 0; k < 2; ++k) {
            const size_t st = strides[k];
            for (size_t j = 0; j < 3 * (size_t)m; ++j) su[j] = sl[j] = sd[j] = sr[j] = -7.0;
            for (int i = 0; i < m; ++i) {
                su[i * st] = u[i];
                sl[i * st] = l[i];
                sd[i * st] = d[i];
                sr[i * st] = rhs[i];
            }
            for (size_t j = 0; j < 2 * (size_t)plan.slots; ++j) slots[j] = NAN; /* first write wins */
            hb_hines_plan_solve(&plan, tails[t], st, su, sl, sd, sr, tail_ab, scratch, slots);
            double diff = 0.0;
            int intact = 1;
            for (int i = 0; i < m; ++i) {
                diff = fmax(diff, fabs(sr[i * st] - x[i]));
                intact &= su[i * st] == u[i] && sl[i * st] == l[i] && sd[i * st] == d[i];
            }
            CHECKF(diff <= 1e-12 * norm, "%s, tail %d, stride %zu: max |x - x_hines| = %g (|x| %g)",
                   what, tails[t], st, diff, norm);
            CHECKF(intact, "%s: u, l or d written", what);
        }
    free(su);
    free(sl);
    free(sd);
    free(sr);
    free(tail_ab);
    free(scratch);
    free(slots);
    free(dd);
    free(x);
    hb_hines_plan_free(&plan);
}

static void test_random_trees(void)
{
    const int sizes[] = {1, 2, 3, 17, 100, 1000};
    for (int shape = 0; shape < 3; ++shape)
        for (int k = 0; k < 6; ++k)
            for (int rep = 0; rep < 4; ++rep) {
                const int m = sizes[k];
                int *parent = check_malloc((size_t)m * sizeof *parent);
                double *u = check_malloc(4 * (size_t)m * sizeof *u), *l = u + m, *d = l + m, *r = d + m;
                random_tree(shape, m, parent);
                test_random_system(m, parent, u, l, d, r);
                char what[64];
                snprintf(what, sizeof what, "shape %d, m = %d, rep %d", shape, m, rep);
                check_solve(what, m, parent, u, l, d, r);
                free(parent);
                free(u);
            }
}

int main(void)
{
    rng_state = 0x51a7e5eedULL;
    test_random_trees();
    test_each_real_system(check_solve);
    return check_summary("test_hines_plan");
}
