/*
 * Internal: mixed-morphology batches (docs/multi.md).
 *
 * Every cell is cut into branches; a branch's height is 0 without child
 * branches, else 1 + its children's largest. Level h holds the branches of
 * height h of all cells, sorted by (rows descending, cell, top node). Storage
 * is one array per quantity, level after level, each level ragged-interleaved:
 * row r (r = 0 the branch's deepest node, r = rows - 1 its top) of branch k
 * of level h is slot
 *     row_base[level_row[h] + r] + k,
 * with only the branches longer than r present in row r (they are the first
 * ones, by the sort): no padding, and a row of a level is contiguous.
 *
 * The per-branch arithmetic lives here once, as inline functions a CUDA
 * kernel can share (HB_TD_INLINE from tridiag_cpu.h): elimination is the
 * Thomas forward sweep (hb_td_thomas_step) up the branch, its deepest row
 * first updated by the already-eliminated top rows of its child branches;
 * substitution is Thomas' backward sweep started from the parent node's x.
 */
#ifndef HB_CORE_MULTI_H
#define HB_CORE_MULTI_H

#include <stddef.h>

#include "cpu/tridiag_cpu.h"
#include "hinesbatch.h"

#define HB_MULTI_NO_PARENT ((size_t)-1)

/* Everything a level kernel reads: plain pointers (host or device memory). */
typedef struct {
    int n_levels, n_branches;
    const int *level_branch; /* [n_levels + 1]: first branch of each level */
    const int *level_row;    /* [n_levels + 1]: first entry of each level in row_base */
    const size_t *row_base;  /* slot of row r of a level's branch 0 */
    const int *rows;         /* [n_branches]: rows of each branch */
    const int *child_ptr;    /* [n_branches + 1]: child branches in CSR form */
    const size_t *child_top; /* top slots of the child branches, top node descending */
    const size_t *parent_slot; /* [n_branches]: slot of the parent node, or HB_MULTI_NO_PARENT */
    /* Slot order. u: coupling row(parent) <- this node; l: row(this) <- parent. */
    const double *u, *l;
    double *d, *rhs; /* on return of the forward pass: c' and y'; then x in rhs */
} hb_multi_view_t;

/* Slot of row r of branch b, which lies in level h. */
HB_TD_INLINE size_t hb_multi_slot(const hb_multi_view_t *v, int h, int b, int r)
{
    return v->row_base[v->level_row[h] + r] + (size_t)(b - v->level_branch[h]);
}

/*
 * Elimination of branch b (level h), its child branches already eliminated:
 * rows bottom-up through hb_td_thomas_step with dl = u of the row below and
 * du = l (the coupling to the node above; 0 at a root). d, rhs become c', y'.
 */
HB_TD_INLINE void hb_multi_eliminate(const hb_multi_view_t *v, int h, int b)
{
    const int n = v->rows[b];
    double cp = 0.0, y = 0.0, dl = 0.0;
    for (int r = 0; r < n; ++r) {
        const size_t s = hb_multi_slot(v, h, b, r);
        double dd = v->d[s], bb = v->rhs[s];
        if (r == 0)
            for (int c = v->child_ptr[b]; c < v->child_ptr[b + 1]; ++c) {
                const size_t t = v->child_top[c];
                dd -= v->u[t] * v->d[t];
                bb -= v->u[t] * v->rhs[t];
            }
        hb_td_thomas_step(dl, dd, v->l[s], bb, &cp, &y);
        v->d[s] = cp;
        v->rhs[s] = y;
        dl = v->u[s];
    }
}

/* Substitution of branch b (level h), its parent node already solved. */
HB_TD_INLINE void hb_multi_substitute(const hb_multi_view_t *v, int h, int b)
{
    const size_t p = v->parent_slot[b];
    double x = p == HB_MULTI_NO_PARENT ? 0.0 : v->rhs[p];
    for (int r = v->rows[b] - 1; r >= 0; --r) {
        const size_t s = hb_multi_slot(v, h, b, r);
        x = v->rhs[s] - v->d[s] * x;
        v->rhs[s] = x;
    }
}

struct hb_multi {
    hb_context_t ctx; /* borrowed: must outlive the batch */
    int n_cells;
    int *m;              /* [n_cells] rows per cell */
    size_t *cell_first;  /* [n_cells + 1] first node of each cell in node_slot */
    size_t *node_slot;   /* [rows] slot of each node of each cell */
    size_t n_rows;
    int max_branch_rows;
    /* Storage behind the view. */
    int *level_branch, *level_row, *rows, *child_ptr;
    size_t *row_base, *child_top, *parent_slot;
    double *u, *l, *d, *rhs;
    hb_multi_view_t view;
};

/* CPU backends: both passes, level by level (OpenMP over a level's branches). */
void hb_multi_cpu_solve(hb_context_t ctx, const hb_multi_view_t *view);

#endif
