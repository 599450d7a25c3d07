/*
 * The per-branch arithmetic of mixed batches (common/multi_plan.h, docs/multi.md), once, as
 * HB_HOSTDEV functions that the CUDA kernels and the CPU backend share: elimination is the
 * Thomas forward sweep (hb_td_thomas_step) up the branch, its deepest row first updated by the
 * already-eliminated top rows of its child branches; substitution is Thomas' backward sweep
 * started from the parent node's x. PER_CELL (the paper's Figure 6 baseline) is Algorithm 1
 * on one cell whose rows lie `stride` apart, hb_multi_cell_solve.
 */
#ifndef HB_COMMON_MULTI_ARITH_H
#define HB_COMMON_MULTI_ARITH_H

#include <stddef.h>

#include "common/hostdev.h"
#include "common/multi_plan.h"
#include "common/rcp.h"

/* Group g's view; the four arrays are set by the caller (group-local slots). */
HB_HOSTDEV hb_multi_view_t hb_multi_group_view(const hb_multi_plan_t *p, int g)
{
    hb_multi_view_t v;
    v.n_levels = p->level_off[g + 1] - p->level_off[g] - 1;
    v.level_branch = p->level_branch + p->level_off[g];
    v.level_row = p->level_row + p->level_off[g];
    v.row_base = p->row_base + p->row_off[g];
    v.rows = p->rows;
    v.child_ptr = p->child_ptr;
    v.child_top = p->child_top;
    v.parent_slot = p->parent_slot;
    v.u = v.l = NULL;
    v.d = v.rhs = NULL;
    v.split_rows = p->split_rows;
    v.n_split = 0;
    v.split_level = v.split_branch = NULL;
    if (p->split_off && p->split_level && p->split_branch) { /* (absent while planning) */
        v.n_split = p->split_off[g + 1] - p->split_off[g];
        v.split_level = p->split_level + p->split_off[g];
        v.split_branch = p->split_branch + p->split_off[g];
    }
    return v;
}

HB_HOSTDEV hb_multi_dims_t hb_multi_group_dims(const hb_multi_plan_t *p, int g)
{
    hb_multi_dims_t t;
    const int *lb = p->level_branch + p->level_off[g];
    t.levels = p->level_off[g + 1] - p->level_off[g] - 1;
    t.entries = p->row_off[g + 1] - p->row_off[g];
    t.branches = lb[t.levels] - lb[0];
    t.children = p->child_ptr[lb[t.levels]] - p->child_ptr[lb[0]];
    t.splits = p->split_off ? p->split_off[g + 1] - p->split_off[g] : 0;
    return t;
}

/* Bytes of the staged tables: the size_t ones (row_base, child_top, parent_slot), then the int
 * ones (rows, child_ptr, level_branch, level_row, split_level, split_branch). */
HB_HOSTDEV size_t hb_multi_table_bytes(const hb_multi_dims_t *t)
{
    return 8 * ((size_t)t->entries + (size_t)t->children + (size_t)t->branches) +
           4 * (2 * (size_t)t->branches + 1 + 2 * ((size_t)t->levels + 1) + 2 * (size_t)t->splits);
}

HB_HOSTDEV hb_multi_tables_t hb_multi_tables_at(const hb_multi_dims_t *t, void *tables)
{
    hb_multi_tables_t s;
    s.row_base = (size_t *)tables;
    s.child_top = s.row_base + t->entries;
    s.parent_slot = s.child_top + t->children;
    s.rows = (int *)(s.parent_slot + t->branches);
    s.child_ptr = s.rows + t->branches;
    s.level_branch = s.child_ptr + t->branches + 1;
    s.level_row = s.level_branch + t->levels + 1;
    s.split_level = s.level_row + t->levels + 1;
    s.split_branch = s.split_level + t->splits;
    return s;
}

/* Group g's tables to `tables` (8-byte aligned), entries first, first + stride, ... (a CUDA
 * block's threads share the copy out). */
HB_HOSTDEV void hb_multi_stage_tables(const hb_multi_plan_t *p, int g, const hb_multi_dims_t *t,
                                        void *tables, int first, int stride)
{
    const int b0 = p->level_branch[p->level_off[g]], c0 = p->child_ptr[b0];
    const int split0 = t->splits ? p->split_off[g] : 0;
    const int *level_branch = p->level_branch + p->level_off[g];
    const int *level_row = p->level_row + p->level_off[g];
    const size_t *row_base = p->row_base + p->row_off[g];
    const hb_multi_tables_t s = hb_multi_tables_at(t, tables);
    for (int j = first; j < t->entries; j += stride) s.row_base[j] = row_base[j];
    for (int j = first; j < t->children; j += stride) s.child_top[j] = p->child_top[c0 + j];
    for (int j = first; j < t->branches; j += stride) {
        s.parent_slot[j] = p->parent_slot[b0 + j];
        s.rows[j] = p->rows[b0 + j];
    }
    for (int j = first; j <= t->branches; j += stride) s.child_ptr[j] = p->child_ptr[b0 + j] - c0;
    for (int j = first; j <= t->levels; j += stride) {
        s.level_branch[j] = level_branch[j] - b0;
        s.level_row[j] = level_row[j];
    }
    for (int j = first; j < t->splits; j += stride) {
        s.split_level[j] = p->split_level[split0 + j];
        s.split_branch[j] = p->split_branch[split0 + j] - b0;
    }
}

/* The view of a group whose tables hb_multi_stage_tables wrote at `tables`; the arrays
 * (group-local slots) are the caller's. */
HB_HOSTDEV hb_multi_view_t hb_multi_staged_view(const hb_multi_dims_t *t, int split_rows,
                                                  const void *tables, const double *u, double *l,
                                                  double *d, double *rhs)
{
    const hb_multi_tables_t s = hb_multi_tables_at(t, (void *)tables); /* only read */
    hb_multi_view_t v;
    v.n_levels = t->levels;
    v.level_branch = s.level_branch;
    v.level_row = s.level_row;
    v.row_base = s.row_base;
    v.rows = s.rows;
    v.child_ptr = s.child_ptr;
    v.child_top = s.child_top;
    v.parent_slot = s.parent_slot;
    v.u = u;
    v.l = l;
    v.d = d;
    v.rhs = rhs;
    v.split_rows = split_rows;
    v.n_split = t->splits;
    v.split_level = s.split_level;
    v.split_branch = s.split_branch;
    return v;
}

/* hb_td_thomas_step through hb_rcp. */
HB_HOSTDEV void hb_multi_step(double dl, double d, double du, double b, double *cp, double *yp)
{
    const double inv = hb_rcp(d - dl * *cp);
    *yp = (b - dl * *yp) * inv;
    *cp = du * inv;
}

/* The rows of branch b (level h): row r at rb[r] + off. */
typedef struct {
    const size_t *rb;
    size_t off;
} hb_multi_rows_t;

HB_HOSTDEV hb_multi_rows_t hb_multi_branch_rows(const hb_multi_view_t *v, int h, int b)
{
    hb_multi_rows_t w;
    w.rb = v->row_base + v->level_row[h];
    w.off = (size_t)(b - v->level_branch[h]);
    return w;
}

/* Slot of row r of branch b, which lies in level h. */
HB_HOSTDEV size_t hb_multi_slot(const hb_multi_view_t *v, int h, int b, int r)
{
    const hb_multi_rows_t w = hb_multi_branch_rows(v, h, b);
    return w.rb[r] + w.off;
}

/*
 * Thomas' forward sweep over rows [r0, end) of a branch, from (cp, y) = (0, 0):
 * dl of row r0 is `dl`, d and rhs of row r0 are given (they may hold contributions),
 * each row stores c', y' in d, rhs. The next row's inputs are loaded before this
 * row's stores, so their latency hides behind the row's arithmetic. Returns the
 * last row's (c', y') through cp, y.
 */
HB_HOSTDEV void hb_multi_sweep(const hb_multi_view_t *v, hb_multi_rows_t w, int r0, int end,
                                 double dl, double dd, double bb, double *cp, double *y)
{
    size_t s = w.rb[r0] + w.off, s_next = r0 + 1 < end ? w.rb[r0 + 1] + w.off : s;
    double du = v->l[s], u_row = v->u[s];
    for (int r = r0; r < end; ++r) {
        double dd_n = 0.0, bb_n = 0.0, du_n = 0.0, u_n = 0.0;
        size_t s_after = s_next;
        if (r + 1 < end) {
            dd_n = v->d[s_next];
            bb_n = v->rhs[s_next];
            du_n = v->l[s_next];
            u_n = v->u[s_next];
            if (r + 2 < end) s_after = w.rb[r + 2] + w.off;
        }
        hb_multi_step(dl, dd, du, bb, cp, y);
        v->d[s] = *cp;
        v->rhs[s] = *y;
        dl = u_row;
        s = s_next;
        s_next = s_after;
        dd = dd_n;
        bb = bb_n;
        du = du_n;
        u_row = u_n;
    }
}

/*
 * Thomas' backward sweep x_r = rhs[r] - d[r] x_{r+1} for r = top down to 0, x_{top+1} = x,
 * x stored in rhs. Rows go in blocks of four whose loads are issued before the previous
 * block's stores (the chain itself is one multiply-add a row).
 */
HB_HOSTDEV void hb_multi_back(const hb_multi_view_t *v, hb_multi_rows_t w, int top, double x)
{
    enum { W = 4 };
    size_t s[W] = {0}, s_n[W] = {0};
    double y[W] = {0}, c[W] = {0}, y_n[W] = {0}, c_n[W] = {0};
    /* The first pass stores nothing (its block lies above top) and loads the first block. */
    for (int r = top + W; r >= 0; r -= W) {
        const int next = r - W;
        HB_UNROLL
        for (int k = 0; k < W; ++k)
            if (next - k >= 0) {
                s_n[k] = w.rb[next - k] + w.off;
                y_n[k] = v->rhs[s_n[k]];
                c_n[k] = v->d[s_n[k]];
            }
        HB_UNROLL
        for (int k = 0; k < W; ++k)
            if (r - k >= 0 && r - k <= top) {
                x = y[k] - c[k] * x;
                v->rhs[s[k]] = x;
            }
        HB_UNROLL
        for (int k = 0; k < W; ++k) {
            s[k] = s_n[k];
            y[k] = y_n[k];
            c[k] = c_n[k];
        }
    }
}

/*
 * Split branches (GROUPED, docs/multi.md "Split branches"). A branch of n >=
 * split_rows rows is cut into P = n / L chunks of L = hb_multi_chunk_rows(n)
 * rows (about sqrt(n): the path L + P is then shortest), the last chunk
 * taking the rest: chunk j holds rows [j L, top_j], top_j = (j + 1) L - 1
 * (n - 1 for the last). Only the bottom chunk waits for the child branches;
 * the others are eliminated before any level (hb_multi_chunk_eliminate),
 * their rows expressed through the unknown below the chunk (the spike s),
 * and their bottom row through the chunk tops T_j = x[top_j]. The tops form
 * a tridiagonal system of P rows that the branch's thread sweeps at its level
 * after the bottom chunk; the interiors of chunks 1.. are finished after the
 * last level (hb_multi_chunk_finish): no other branch reads them, since child
 * branches hang from row 0.
 */
HB_HOSTDEV int hb_multi_chunk_rows(int n)
{
    int L = 2;
    while ((L + 1) * (L + 1) <= n) ++L;
    return L;
}

HB_HOSTDEV int hb_multi_chunks(const hb_multi_view_t *v, int b)
{
    const int n = v->rows[b];
    return v->split_rows > 0 && n >= v->split_rows ? n / hb_multi_chunk_rows(n) : 1;
}

/* Top row of chunk j of a branch of n rows in `chunks` chunks of L rows. */
HB_HOSTDEV int hb_multi_chunk_top(int L, int n, int chunks, int j)
{
    return j == chunks - 1 ? n - 1 : (j + 1) * L - 1;
}

/*
 * Chunk j >= 1 of branch b: rows r0..top bottom-up, each row r stored as
 * x_r + c'_r x_{r+1} + s_r x_{r0-1} = y'_r (d := c', rhs := y', the spike in
 * the l slot, which only the row's own step reads). Then a sweep down gives
 * the bottom row as x_r0 = A + B T_j + C T_{j-1}, stored in its slots (rhs :=
 * A, d := B, l := C). u is only read.
 */
HB_HOSTDEV void hb_multi_chunk_eliminate(const hb_multi_view_t *v, int h, int b, int j)
{
    const int n = v->rows[b], L = hb_multi_chunk_rows(n), r0 = j * L;
    const int top = hb_multi_chunk_top(L, n, n / L, j);
    const hb_multi_rows_t w = hb_multi_branch_rows(v, h, b);
    double cp = 0.0, y = 0.0, sp = 0.0;
    double dl = v->u[w.rb[r0 - 1] + w.off];
    for (int r = r0; r <= top; ++r) {
        const size_t s = w.rb[r] + w.off;
        /* row r0 couples to x_{r0-1} itself; the rows above inherit it */
        const double inv = hb_rcp(v->d[s] - (r == r0 ? 0.0 : dl * cp));
        sp = (r == r0 ? dl : -dl * sp) * inv;
        y = (v->rhs[s] - (r == r0 ? 0.0 : dl * y)) * inv;
        cp = v->l[s] * inv;
        dl = v->u[s];
        v->d[s] = cp;
        v->rhs[s] = y;
        v->l[s] = sp;
    }
    double A = 0.0, B = 1.0, C = 0.0;
    for (int r = top - 1; r >= r0; --r) {
        const size_t s = w.rb[r] + w.off;
        const double c = v->d[s];
        A = v->rhs[s] - c * A;
        B = -c * B;
        C = -v->l[s] - c * C;
    }
    const size_t s0 = w.rb[r0] + w.off;
    v->rhs[s0] = A;
    v->d[s0] = B;
    v->l[s0] = C;
}

/* Interior rows of chunk j >= 1, the tops solved: x from the top down, x_r0 from A, B, C. */
HB_HOSTDEV void hb_multi_chunk_finish(const hb_multi_view_t *v, int h, int b, int j)
{
    const int n = v->rows[b], L = hb_multi_chunk_rows(n), r0 = j * L;
    const int top = hb_multi_chunk_top(L, n, n / L, j);
    const hb_multi_rows_t w = hb_multi_branch_rows(v, h, b);
    const double below = v->rhs[w.rb[r0 - 1] + w.off], x_top = v->rhs[w.rb[top] + w.off];
    double x = x_top;
    for (int r = top - 1; r > r0; --r) {
        const size_t s = w.rb[r] + w.off;
        x = v->rhs[s] - v->d[s] * x - v->l[s] * below;
        v->rhs[s] = x;
    }
    const size_t s0 = w.rb[r0] + w.off;
    v->rhs[s0] = v->rhs[s0] + v->d[s0] * x_top + v->l[s0] * below;
}

/*
 * The chunks 1.. of every split branch of the view, dealt out as tasks
 * first, first + stride, ... (a thread's share): eliminated (finish = 0),
 * before the levels, or finished (finish = 1), after them.
 */
HB_HOSTDEV void hb_multi_chunk_pass(const hb_multi_view_t *v, int first, int stride, int finish)
{
    int task = 0, next = first;
    for (int i = 0; i < v->n_split; ++i) {
        const int h = v->split_level[i], b = v->split_branch[i], chunks = hb_multi_chunks(v, b);
        for (task += chunks - 1; next < task; next += stride) {
            const int j = chunks - (task - next);
            if (finish) hb_multi_chunk_finish(v, h, b, j);
            else hb_multi_chunk_eliminate(v, h, b, j);
        }
    }
}

/*
 * Elimination of branch b (level h), its child branches already eliminated:
 * rows bottom-up through the Thomas step with dl = u of the row below and
 * du = l (the coupling to the node above; 0 at a root). d, rhs become c', y'.
 * A split branch sweeps its bottom chunk so, then the system of its chunk
 * tops, whose rows hold the tops' c', y' afterwards (the last one, the
 * branch top's, is what the parent branch reads, as unsplit).
 */
HB_HOSTDEV void hb_multi_eliminate(const hb_multi_view_t *v, int h, int b)
{
    const int chunks = hb_multi_chunks(v, b), n = v->rows[b];
    const int L = chunks > 1 ? hb_multi_chunk_rows(n) : n; /* rows of the bottom chunk */
    const hb_multi_rows_t w = hb_multi_branch_rows(v, h, b);
    const size_t s0 = w.rb[0] + w.off;
    double dd = v->d[s0], bb = v->rhs[s0];
    for (int c = v->child_ptr[b]; c < v->child_ptr[b + 1]; ++c) {
        const size_t t = v->child_top[c];
        dd -= v->u[t] * v->d[t];
        bb -= v->u[t] * v->rhs[t];
    }
    double cp = 0.0, y = 0.0;
    if (n == 1) { /* a node between two forks, common in bushy trees: the sweep's one step */
        hb_multi_step(0.0, dd, v->l[s0], bb, &cp, &y);
        v->d[s0] = cp;
        v->rhs[s0] = y;
        return;
    }
    hb_multi_sweep(v, w, 0, L, 0.0, dd, bb, &cp, &y);
    if (chunks < 2) return;
    /* Chunk tops: T_j + c'_j x_{r0(j+1)} + s_j T_{j-1} = y'_j with x_{r0(j+1)} = A + B T_{j+1} + C T_j. */
    double rcp = 0.0, ry = 0.0;
    for (int j = 0; j < chunks; ++j) {
        const size_t t = w.rb[hb_multi_chunk_top(L, n, chunks, j)] + w.off;
        const double c = v->d[t], yt = v->rhs[t], spike = j ? v->l[t] : 0.0;
        double d_top = 1.0, du = c, b_top = yt;
        if (j < chunks - 1) {
            const size_t s = w.rb[(j + 1) * L] + w.off;
            d_top = 1.0 + c * v->l[s];
            du = c * v->d[s];
            b_top = yt - c * v->rhs[s];
        }
        hb_multi_step(spike, d_top, du, b_top, &rcp, &ry);
        v->d[t] = rcp;
        v->rhs[t] = ry;
    }
}

/* Substitution of branch b (level h), its parent node already solved. */
HB_HOSTDEV void hb_multi_substitute(const hb_multi_view_t *v, int h, int b)
{
    const size_t p = v->parent_slot[b];
    double x = p == HB_MULTI_NO_PARENT ? 0.0 : v->rhs[p];
    const int chunks = hb_multi_chunks(v, b), n = v->rows[b];
    const hb_multi_rows_t w = hb_multi_branch_rows(v, h, b);
    if (n == 1) { /* hb_multi_back's one row */
        const size_t s = w.rb[0] + w.off;
        v->rhs[s] = v->rhs[s] - v->d[s] * x;
        return;
    }
    if (chunks < 2) {
        hb_multi_back(v, w, n - 1, x);
        return;
    }
    const int L = hb_multi_chunk_rows(n);
    for (int j = chunks - 1; j >= 0; --j) { /* the tops, then the bottom chunk below its top */
        const size_t t = w.rb[hb_multi_chunk_top(L, n, chunks, j)] + w.off;
        x = v->rhs[t] - v->d[t] * x;
        v->rhs[t] = x;
    }
    hb_multi_back(v, w, L - 2, x);
}

/*
 * PER_CELL: Algorithm 1 (hb_hines_solve's arithmetic) on one cell of m rows
 * whose row i (and parent[i]) lies at i * stride: the paper's one thread per
 * cell, on a batch interleaved cell by cell (stride = cells).
 */
HB_HOSTDEV void hb_multi_cell_solve(int m, const int *parent, size_t stride, const double *u,
                                      const double *l, double *d, double *rhs)
{
    for (int i = m - 1; i > 0; --i) {
        const size_t r = (size_t)i * stride, pr = (size_t)parent[r] * stride;
        const double factor = u[r] / d[r];
        d[pr] -= factor * l[r];
        rhs[pr] -= factor * rhs[r];
    }
    rhs[0] /= d[0];
    for (int i = 1; i < m; ++i) {
        const size_t r = (size_t)i * stride, pr = (size_t)parent[r] * stride;
        rhs[r] -= l[r] * rhs[pr];
        rhs[r] /= d[r];
    }
}

#endif
