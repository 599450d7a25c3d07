/*
 * Mixed-morphology batches: the branch decomposition, the level layout
 * (core/multi.h, docs/multi.md) and the public hb_multi_* calls.
 */
#include "multi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "context.h"
#include "cpu/hines_cpu.h"
#include "status.h"

/* One branch while planning: ids are per cell in top-node order (parents first). */
typedef struct {
    int cell, top, rows, height;
    int parent; /* planning id of the parent branch, -1 for the root branch */
} plan_branch_t;

static int compare_branches(const void *a, const void *b)
{
    const plan_branch_t *x = *(const plan_branch_t *const *)a;
    const plan_branch_t *y = *(const plan_branch_t *const *)b;
    if (x->height != y->height) return x->height < y->height ? -1 : 1;
    if (x->rows != y->rows) return x->rows > y->rows ? -1 : 1;
    if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
    return (x->top > y->top) - (x->top < y->top);
}

static void multi_free(hb_multi_t mb)
{
    if (!mb) return;
    free(mb->m);
    free(mb->cell_first);
    free(mb->node_slot);
    free(mb->level_branch);
    free(mb->level_row);
    free(mb->rows);
    free(mb->child_ptr);
    free(mb->row_base);
    free(mb->child_top);
    free(mb->parent_slot);
    free(mb->u);
    free(mb->l);
    free(mb->d);
    free(mb->rhs);
    free(mb);
}

static hb_status_t check_cells(const char *fn, int n_cells, const int *m_per_cell,
                               const int *const *parents, size_t *n_rows, int *max_m)
{
    if (n_cells < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: n_cells = %d; expected >= 1", fn, n_cells);
    if (!m_per_cell || !parents)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: m_per_cell and parents must not be NULL", fn);
    *n_rows = 0;
    *max_m = 0;
    for (int c = 0; c < n_cells; ++c) {
        char where[64];
        snprintf(where, sizeof where, "%s: cell %d", fn, c);
        hb_status_t status = hb_check_tree(where, m_per_cell[c], parents[c]);
        if (status != HB_SUCCESS) return status;
        *n_rows += (size_t)m_per_cell[c];
        if (m_per_cell[c] > *max_m) *max_m = m_per_cell[c];
    }
    return HB_SUCCESS;
}

/* A node starts a branch unless its parent has exactly one child. */
static void count_children(int m, const int *parent, int *nchild)
{
    memset(nchild, 0, (size_t)m * sizeof *nchild);
    for (int i = 1; i < m; ++i) nchild[parent[i]]++;
}

/*
 * Cuts every cell into branches: fills pb (planning ids cell after cell, top
 * node ascending within a cell), and per node its branch and its position
 * from the branch's top. Returns the number of branches.
 */
static int cut_cells(int n_cells, const int *m_per_cell, const int *const *parents, int *nchild,
                     plan_branch_t *pb, int *node_branch, int *node_pos)
{
    int nb = 0;
    size_t node = 0;
    for (int c = 0; c < n_cells; ++c) {
        const int m = m_per_cell[c], *parent = parents[c];
        const int first = nb;
        int *br = node_branch + node, *pos = node_pos + node;
        count_children(m, parent, nchild);
        for (int i = 0; i < m; ++i) {
            if (i == 0 || nchild[parent[i]] != 1) {
                const plan_branch_t b = {c, i, 1, 0, i ? br[parent[i]] : -1};
                pb[nb] = b;
                br[i] = nb++;
                pos[i] = 0;
            } else {
                br[i] = br[parent[i]];
                pos[i] = pos[parent[i]] + 1;
                pb[br[i]].rows++;
            }
        }
        /* A child branch's id exceeds its parent's: heights from the last id down. */
        for (int j = nb - 1; j > first; --j) {
            plan_branch_t *p = &pb[pb[j].parent];
            if (p->height < pb[j].height + 1) p->height = pb[j].height + 1;
        }
        node += (size_t)m;
    }
    return nb;
}

/* Level arrays and row bases from the sorted branches; returns the slot count. */
static size_t lay_out_levels(hb_multi_t mb, plan_branch_t *const *sorted, int nb)
{
    const int levels = mb->view.n_levels;
    int b = 0, row_entries = 0;
    size_t slot = 0;
    for (int h = 0; h < levels; ++h) {
        mb->level_branch[h] = b;
        mb->level_row[h] = row_entries;
        int end = b;
        while (end < nb && sorted[end]->height == h) end++;
        const int rows = end > b ? sorted[b]->rows : 0;
        int width = end - b;
        for (int r = 0; r < rows; ++r) {
            while (width > 0 && sorted[b + width - 1]->rows <= r) width--;
            mb->row_base[row_entries++] = slot;
            slot += (size_t)width;
        }
        b = end;
    }
    mb->level_branch[levels] = nb;
    mb->level_row[levels] = row_entries;
    return slot;
}

hb_status_t hb_multi_create(hb_context_t ctx, int n_cells, const int *m_per_cell,
                            const int *const *parents, hb_multi_t *multi)
{
    static const char fn[] = "hb_multi_create";
    hb_clear_error();
    if (!multi) return hb_fail(HB_ERR_INVALID_VALUE, "%s: multi is NULL", fn);
    *multi = NULL;
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "%s: ctx is NULL", fn);
    size_t n_rows = 0;
    int max_m = 0;
    hb_status_t status = check_cells(fn, n_cells, m_per_cell, parents, &n_rows, &max_m);
    if (status != HB_SUCCESS) return status;
    if (ctx->backend == HB_BACKEND_CUDA)
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "%s: the CUDA backend has no level kernels yet; use HB_BACKEND_SEQ or "
                       "HB_BACKEND_OMP",
                       fn);

    hb_multi_t mb = calloc(1, sizeof *mb);
    int *nchild = malloc((size_t)max_m * sizeof *nchild);
    int *node_branch = malloc(n_rows * sizeof *node_branch);
    int *node_pos = malloc(n_rows * sizeof *node_pos);
    plan_branch_t *pb = NULL, **sorted = NULL;
    int *new_id = NULL, *fill = NULL;
    if (!mb || !nchild || !node_branch || !node_pos) goto oom;
    /* Branch ids are ints: count the branches first. */
    size_t total = 0;
    for (int c = 0; c < n_cells; ++c) {
        count_children(m_per_cell[c], parents[c], nchild);
        for (int i = 0; i < m_per_cell[c]; ++i) total += i == 0 || nchild[parents[c][i]] != 1;
    }
    if (total >= (size_t)INT_MAX) {
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: %zu branches; at most %d supported", fn,
                         total, INT_MAX - 1);
        goto done;
    }
    pb = malloc(total * sizeof *pb);
    if (!pb) goto oom;
    mb->ctx = ctx;
    mb->n_cells = n_cells;
    mb->n_rows = n_rows;
    const int nb = cut_cells(n_cells, m_per_cell, parents, nchild, pb, node_branch, node_pos);
    mb->view.n_branches = nb;

    sorted = malloc((size_t)nb * sizeof *sorted);
    new_id = malloc((size_t)nb * sizeof *new_id);
    if (!sorted || !new_id) goto oom;
    int levels = 0, row_entries = 0;
    for (int j = 0; j < nb; ++j) {
        sorted[j] = &pb[j];
        if (pb[j].height + 1 > levels) levels = pb[j].height + 1;
        if (pb[j].rows > mb->max_branch_rows) mb->max_branch_rows = pb[j].rows;
    }
    qsort(sorted, (size_t)nb, sizeof *sorted, compare_branches);
    for (int k = 0; k < nb; ++k) {
        new_id[sorted[k] - pb] = k;
        /* the first branch of a level is its longest */
        if (k == 0 || sorted[k]->height != sorted[k - 1]->height) row_entries += sorted[k]->rows;
    }
    mb->view.n_levels = levels;

    mb->m = malloc((size_t)n_cells * sizeof *mb->m);
    mb->cell_first = malloc(((size_t)n_cells + 1) * sizeof *mb->cell_first);
    mb->node_slot = malloc(n_rows * sizeof *mb->node_slot);
    mb->level_branch = malloc(((size_t)levels + 1) * sizeof *mb->level_branch);
    mb->level_row = malloc(((size_t)levels + 1) * sizeof *mb->level_row);
    mb->row_base = malloc((size_t)row_entries * sizeof *mb->row_base);
    mb->rows = malloc((size_t)nb * sizeof *mb->rows);
    mb->child_ptr = calloc((size_t)nb + 1, sizeof *mb->child_ptr);
    mb->child_top = malloc((size_t)nb * sizeof *mb->child_top);
    mb->parent_slot = malloc((size_t)nb * sizeof *mb->parent_slot);
    mb->u = calloc(n_rows, sizeof *mb->u);
    mb->l = calloc(n_rows, sizeof *mb->l);
    mb->d = calloc(n_rows, sizeof *mb->d);
    mb->rhs = calloc(n_rows, sizeof *mb->rhs);
    if (!mb->m || !mb->cell_first || !mb->node_slot || !mb->level_branch || !mb->level_row ||
        !mb->row_base || !mb->rows || !mb->child_ptr || !mb->child_top || !mb->parent_slot ||
        !mb->u || !mb->l || !mb->d || !mb->rhs)
        goto oom;

    lay_out_levels(mb, sorted, nb);
    for (int k = 0; k < nb; ++k) mb->rows[k] = sorted[k]->rows;
    mb->view.level_branch = mb->level_branch;
    mb->view.level_row = mb->level_row;
    mb->view.row_base = mb->row_base;
    mb->view.rows = mb->rows;

    /* Node slots: row r = rows - 1 - position from the top. */
    size_t node = 0;
    for (int c = 0; c < n_cells; ++c) {
        mb->m[c] = m_per_cell[c];
        mb->cell_first[c] = node;
        for (int i = 0; i < m_per_cell[c]; ++i, ++node) {
            const plan_branch_t *p = &pb[node_branch[node]];
            mb->node_slot[node] = hb_multi_slot(&mb->view, p->height, new_id[node_branch[node]],
                                                p->rows - 1 - node_pos[node]);
        }
    }
    mb->cell_first[n_cells] = node;

    /* Child lists (CSR by sorted id), each by top node descending: the order in
     * which hb_hines_solve eliminates a fork's children. Planning ids ascend
     * with the top node within a cell, so walk them downwards. */
    for (int j = 0; j < nb; ++j)
        if (pb[j].parent >= 0) mb->child_ptr[new_id[pb[j].parent] + 1]++;
    for (int k = 0; k < nb; ++k) mb->child_ptr[k + 1] += mb->child_ptr[k];
    fill = calloc((size_t)nb, sizeof *fill);
    if (!fill) goto oom;
    for (int j = nb - 1; j >= 0; --j) {
        const plan_branch_t *p = &pb[j];
        const size_t first = mb->cell_first[p->cell];
        const int k = new_id[j];
        mb->parent_slot[k] = HB_MULTI_NO_PARENT;
        if (p->parent < 0) continue;
        const int q = new_id[p->parent];
        mb->child_top[mb->child_ptr[q] + fill[q]++] = mb->node_slot[first + (size_t)p->top];
        mb->parent_slot[k] = mb->node_slot[first + (size_t)parents[p->cell][p->top]];
    }
    mb->view.child_ptr = mb->child_ptr;
    mb->view.child_top = mb->child_top;
    mb->view.parent_slot = mb->parent_slot;
    mb->view.u = mb->u;
    mb->view.l = mb->l;
    mb->view.d = mb->d;
    mb->view.rhs = mb->rhs;

    *multi = mb;
    mb = NULL;
    goto done;
oom:
    status = hb_fail(HB_ERR_ALLOC, "%s: out of memory planning %d cells of %zu rows in all", fn,
                     n_cells, n_rows);
done:
    free(nchild);
    free(node_branch);
    free(node_pos);
    free(pb);
    free(sorted);
    free(new_id);
    free(fill);
    multi_free(mb);
    return status;
}

hb_status_t hb_multi_destroy(hb_multi_t multi)
{
    hb_clear_error();
    multi_free(multi);
    return HB_SUCCESS;
}

hb_status_t hb_multi_info(const hb_multi_t multi, hb_multi_info_t *info)
{
    hb_clear_error();
    if (!multi || !info)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_multi_info: multi and info must not be NULL");
    info->cells = multi->n_cells;
    info->rows = multi->n_rows;
    info->branches = multi->view.n_branches;
    info->levels = multi->view.n_levels;
    info->max_branch_rows = multi->max_branch_rows;
    return HB_SUCCESS;
}

int hb_multi_rows(const hb_multi_t multi, int cell)
{
    return multi && cell >= 0 && cell < multi->n_cells ? multi->m[cell] : 0;
}

int hb_multi_level_branches(const hb_multi_t multi, int level)
{
    if (!multi || level < 0 || level >= multi->view.n_levels) return 0;
    return multi->level_branch[level + 1] - multi->level_branch[level];
}

static hb_status_t check_cell(const char *fn, const hb_multi_t multi, int cell)
{
    if (!multi) return hb_fail(HB_ERR_INVALID_VALUE, "%s: multi is NULL", fn);
    if (cell < 0 || cell >= multi->n_cells)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: cell = %d; expected 0 <= cell < %d", fn, cell,
                       multi->n_cells);
    return HB_SUCCESS;
}

hb_status_t hb_multi_set(hb_multi_t multi, int cell, const double *u, const double *l,
                         const double *d, const double *rhs)
{
    hb_clear_error();
    hb_status_t status = check_cell("hb_multi_set", multi, cell);
    if (status != HB_SUCCESS) return status;
    const size_t *slot = multi->node_slot + multi->cell_first[cell];
    const int m = multi->m[cell];
    /* u[0], l[0] stay 0: the root row has no coupling above. */
    for (int i = 1; i < m; ++i) {
        if (u) multi->u[slot[i]] = u[i];
        if (l) multi->l[slot[i]] = l[i];
    }
    for (int i = 0; i < m; ++i) {
        if (d) multi->d[slot[i]] = d[i];
        if (rhs) multi->rhs[slot[i]] = rhs[i];
    }
    return HB_SUCCESS;
}

hb_status_t hb_multi_get(const hb_multi_t multi, int cell, double *u, double *l, double *d,
                         double *rhs)
{
    hb_clear_error();
    hb_status_t status = check_cell("hb_multi_get", multi, cell);
    if (status != HB_SUCCESS) return status;
    const size_t *slot = multi->node_slot + multi->cell_first[cell];
    for (int i = 0; i < multi->m[cell]; ++i) {
        if (u) u[i] = multi->u[slot[i]];
        if (l) l[i] = multi->l[slot[i]];
        if (d) d[i] = multi->d[slot[i]];
        if (rhs) rhs[i] = multi->rhs[slot[i]];
    }
    return HB_SUCCESS;
}

hb_status_t hb_multi_solve(hb_multi_t multi)
{
    hb_clear_error();
    if (!multi) return hb_fail(HB_ERR_INVALID_VALUE, "hb_multi_solve: multi is NULL");
    hb_multi_cpu_solve(multi->ctx, &multi->view);
    return HB_SUCCESS;
}
