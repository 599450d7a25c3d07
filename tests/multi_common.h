/*
 * Pieces shared by the mixed-morphology batch tests (test_multi: solves, errors, the benchmark
 * helper; test_multi_plan: plan tables, split branches and SHAPES): the generator, cells and
 * their systems, a multi solve checked cell by cell against hb_hines_solve, the repeatability
 * check (runs, OMP thread counts, GROUPED in any grouping, PER_CELL, SHAPES), cells from cables
 * and the expected-failure check.
 */
#ifndef HB_TESTS_MULTI_COMMON_H
#define HB_TESTS_MULTI_COMMON_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/bench.h" /* hb_context_set_tuning */
#include "core/multi.h" /* hb_multi_plan_grouped: group sizes for the tests */
#include "hinesbatch.h"

static uint64_t rng_state = 0x5eed0005u;

static inline uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static inline double rng_unit(void) { return (double)(rng_next() >> 11) * 0x1.0p-53; }
static inline int rng_int(int n) { return (int)(rng_next() % (uint64_t)n); }

/* One cell: its tree and system (natural order). */
typedef struct {
    int m;
    int *parent;
    double *u, *l, *d, *rhs;
} cell_t;

static inline void cell_alloc(cell_t *c, int m)
{
    c->m = m;
    c->parent = malloc((size_t)m * sizeof *c->parent);
    c->u = calloc((size_t)m * 4, sizeof *c->u);
    c->l = c->u + m;
    c->d = c->l + m;
    c->rhs = c->d + m;
    c->parent[0] = -1;
}

static inline void cell_free(cell_t *c)
{
    free(c->parent);
    free(c->u);
}

/* Random diagonally dominant values for the cell's tree. */
static inline void cell_fill_random(cell_t *c)
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

static inline void cell_random_tree(cell_t *c, int m, int shape)
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
static inline void compare_cell(const cell_t *c, const double *x, double *rel_diff,
                                double *residual)
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

static inline double *solve_multi_algo(const char *what, hb_backend_t backend, int threads,
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

static inline double *solve_multi(const char *what, hb_backend_t backend, int threads,
                                  const cell_t *cells, int n, hb_multi_info_t *info)
{
    return solve_multi_algo(what, backend, threads, cells, n, info, HB_MULTI_ALGO_AUTO, 0, -1);
}

static inline size_t total_rows(const cell_t *cells, int n)
{
    size_t total = 0;
    for (int c = 0; c < n; ++c) total += (size_t)cells[c].m;
    return total;
}

/* (4) A batch gives bitwise the same solution on every run and thread count. */
static inline void check_repeatable(const char *what, const cell_t *cells, int n)
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

/* A cable's system of one step from random voltages. */
static inline int cell_from_cable(cell_t *c, const hb_cable_t *cable)
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

/* (5) Errors: a status and a message that names the fault. */
static inline void expect_fail(hb_status_t status, hb_status_t expected, const char *needle,
                               const char *what)
{
    CHECKF(status == expected && strstr(hb_last_error(), needle) != NULL,
           "%s: got %s \"%s\"; expected %s with \"%s\"", what, hb_status_name(status),
           hb_last_error(), hb_status_name(expected), needle);
}

#endif
