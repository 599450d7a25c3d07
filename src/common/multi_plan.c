/*
 * The backend-neutral planners of mixed batches (common/multi_plan.h, docs/multi.md): the
 * branch decomposition, the level plans of LEVELS and GROUPED, the grouping, and a plan check.
 */
#include "common/multi_plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/multi_arith.h"
#include "common/status.h"

/* One branch while planning: ids are per cell in top-node order (parents first). */
typedef struct {
    int group, cell, top, rows, height;
    int parent; /* planning id of the parent branch, -1 for the root branch */
} plan_branch_t;

static int compare_branches(const void *a, const void *b)
{
    const plan_branch_t *x = *(const plan_branch_t *const *)a;
    const plan_branch_t *y = *(const plan_branch_t *const *)b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    if (x->height != y->height) return x->height < y->height ? -1 : 1;
    if (x->rows != y->rows) return x->rows > y->rows ? -1 : 1;
    if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
    return (x->top > y->top) - (x->top < y->top);
}

void hb_multi_plan_free(hb_multi_plan_t *p)
{
    if (!p) return;
    free(p->slot_base);
    free(p->level_off);
    free(p->row_off);
    free(p->level_branch);
    free(p->level_row);
    free(p->row_base);
    free(p->rows);
    free(p->child_ptr);
    free(p->child_top);
    free(p->parent_slot);
    free(p->node_slot);
    free(p->split_off);
    free(p->split_level);
    free(p->split_branch);
    memset(p, 0, sizeof *p);
}

/* The split branches of every group of p (those of split_rows rows or more), level by level. */
hb_status_t hb_multi_plan_splits(hb_multi_plan_t *p, int split_rows)
{
    free(p->split_off);
    free(p->split_level);
    free(p->split_branch);
    p->split_level = p->split_branch = NULL;
    p->split_rows = split_rows;
    p->split_off = calloc((size_t)p->n_groups + 1, sizeof *p->split_off);
    if (!p->split_off) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory");
    int count = 0;
    for (int pass = 0; pass < 2; ++pass) {
        count = 0;
        for (int g = 0; g < p->n_groups; ++g) {
            const hb_multi_view_t v = hb_multi_group_view(p, g);
            p->split_off[g] = count;
            for (int h = 0; h < v.n_levels; ++h)
                for (int b = v.level_branch[h]; b < v.level_branch[h + 1]; ++b)
                    if (hb_multi_chunks(&v, b) > 1) {
                        if (pass) {
                            p->split_level[count] = h;
                            p->split_branch[count] = b;
                        }
                        count++;
                    }
        }
        p->split_off[p->n_groups] = count;
        if (pass == 0) {
            p->split_level = malloc((count ? (size_t)count : 1) * sizeof *p->split_level);
            p->split_branch = malloc((count ? (size_t)count : 1) * sizeof *p->split_branch);
            if (!p->split_level || !p->split_branch)
                return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory");
        }
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
 * Cuts one cell into branches: appends them to pb (top node ascending) and
 * sets, per node, its branch and its position from the branch's top. Heights
 * are set too (a child branch's id exceeds its parent's).
 */
static int cut_cell(int c, int group, int m, const int *parent, int *nchild, plan_branch_t *pb,
                    int nb, int *br, int *pos)
{
    const int first = nb;
    count_children(m, parent, nchild);
    for (int i = 0; i < m; ++i) {
        if (i == 0 || nchild[parent[i]] != 1) {
            const plan_branch_t b = {group, c, i, 1, 0, i ? br[parent[i]] : -1};
            pb[nb] = b;
            br[i] = nb++;
            pos[i] = 0;
        } else {
            br[i] = br[parent[i]];
            pos[i] = pos[parent[i]] + 1;
            pb[br[i]].rows++;
        }
    }
    for (int j = nb - 1; j > first; --j) {
        plan_branch_t *p = &pb[pb[j].parent];
        if (p->height < pb[j].height + 1) p->height = pb[j].height + 1;
    }
    return nb;
}

static size_t count_branches(const hb_multi_cells_t *mb, int *nchild)
{
    size_t total = 0;
    for (int c = 0; c < mb->n_cells; ++c) {
        const int *parent = mb->parent + mb->cell_first[c];
        count_children(mb->m[c], parent, nchild);
        for (int i = 0; i < mb->m[c]; ++i) total += i == 0 || nchild[parent[i]] != 1;
    }
    return total;
}

size_t hb_multi_count_branches(const hb_multi_cells_t *cells, int *nchild)
{
    return count_branches(cells, nchild);
}

hb_status_t hb_multi_plan(const hb_multi_cells_t *mb, const int *order, const int *gstart,
                          int n_groups, hb_multi_plan_t *p)
{
    memset(p, 0, sizeof *p);
    const size_t n_rows = mb->n_rows;
    int *nchild = malloc((size_t)mb->max_m * sizeof *nchild);
    int *node_branch = malloc(n_rows * sizeof *node_branch);
    int *node_pos = malloc(n_rows * sizeof *node_pos);
    int *group_of = malloc((size_t)mb->n_cells * sizeof *group_of);
    plan_branch_t *pb = NULL, **sorted = NULL;
    int *new_id = NULL, *fill = NULL;
    if (!nchild || !node_branch || !node_pos || !group_of) goto oom;
    for (int g = 0; g < n_groups; ++g)
        for (int k = gstart[g]; k < gstart[g + 1]; ++k) group_of[order[k]] = g;
    const size_t total = count_branches(mb, nchild); /* < INT_MAX: checked at create */
    pb = malloc(total * sizeof *pb);
    sorted = malloc(total * sizeof *sorted);
    new_id = malloc(total * sizeof *new_id);
    if (!pb || !sorted || !new_id) goto oom;
    int nb = 0;
    for (int c = 0; c < mb->n_cells; ++c) {
        const size_t f = mb->cell_first[c];
        nb = cut_cell(c, group_of[c], mb->m[c], mb->parent + f, nchild, pb, nb, node_branch + f,
                      node_pos + f);
    }
    p->n_groups = n_groups;
    p->n_branches = nb;
    p->n_slots = n_rows;
    for (int j = 0; j < nb; ++j) {
        sorted[j] = &pb[j];
        if (pb[j].rows > p->max_branch_rows) p->max_branch_rows = pb[j].rows;
    }
    qsort(sorted, (size_t)nb, sizeof *sorted, compare_branches);
    /* Table sizes: per group, levels + 1 entries; per level, its longest branch's rows. */
    int level_entries = 0, row_entries = 0;
    for (int k = 0; k < nb; ++k) {
        new_id[sorted[k] - pb] = k;
        const int new_group = k == 0 || sorted[k]->group != sorted[k - 1]->group;
        if (new_group || sorted[k]->height != sorted[k - 1]->height)
            row_entries += sorted[k]->rows; /* the first branch of a level is its longest */
        if (k + 1 == nb || sorted[k + 1]->group != sorted[k]->group)
            level_entries += sorted[k]->height + 2;
    }
    p->slot_base = malloc(((size_t)n_groups + 1) * sizeof *p->slot_base);
    p->level_off = malloc(((size_t)n_groups + 1) * sizeof *p->level_off);
    p->row_off = malloc(((size_t)n_groups + 1) * sizeof *p->row_off);
    p->level_branch = malloc((size_t)level_entries * sizeof *p->level_branch);
    p->level_row = malloc((size_t)level_entries * sizeof *p->level_row);
    p->row_base = malloc(((size_t)row_entries + 1) * sizeof *p->row_base);
    p->rows = malloc((size_t)nb * sizeof *p->rows);
    p->child_ptr = calloc((size_t)nb + 1, sizeof *p->child_ptr);
    p->child_top = malloc((size_t)nb * sizeof *p->child_top);
    p->parent_slot = malloc((size_t)nb * sizeof *p->parent_slot);
    p->node_slot = malloc(n_rows * sizeof *p->node_slot);
    fill = calloc((size_t)nb, sizeof *fill);
    if (!p->slot_base || !p->level_off || !p->row_off || !p->level_branch || !p->level_row ||
        !p->row_base || !p->rows || !p->child_ptr || !p->child_top || !p->parent_slot ||
        !p->node_slot || !fill)
        goto oom;

    /* Groups, their levels and row bases (group-local slots). */
    int b = 0, le = 0, re = 0;
    size_t slot = 0;
    for (int g = 0; g < n_groups; ++g) {
        p->slot_base[g] = slot;
        p->level_off[g] = le;
        p->row_off[g] = re;
        const int g_first_entry = re;
        size_t local = 0;
        int h = 0; /* every group has a cell, so a branch of height 0 */
        while (b < nb && sorted[b]->group == g) {
            p->level_branch[le] = b;
            p->level_row[le] = re - g_first_entry;
            le++;
            int end = b;
            while (end < nb && sorted[end]->group == g && sorted[end]->height == h) end++;
            const int rows = end > b ? sorted[b]->rows : 0;
            int width = end - b;
            for (int r = 0; r < rows; ++r) {
                while (width > 0 && sorted[b + width - 1]->rows <= r) width--;
                p->row_base[re++] = local;
                local += (size_t)width;
            }
            b = end;
            h++;
        }
        p->level_branch[le] = b;
        p->level_row[le] = re - g_first_entry;
        le++;
        if (h > p->max_levels) p->max_levels = h;
        if (re - g_first_entry > p->max_group_row_entries)
            p->max_group_row_entries = re - g_first_entry;
        if (local > p->max_group_rows) p->max_group_rows = local;
        slot += local;
    }
    p->slot_base[n_groups] = slot;
    p->level_off[n_groups] = le;
    p->row_off[n_groups] = re;
    for (int k = 0; k < nb; ++k) p->rows[k] = sorted[k]->rows;

    /* Node slots (plan-wide): row r = rows - 1 - position from the top. */
    for (int c = 0; c < mb->n_cells; ++c) {
        const int g = group_of[c];
        hb_multi_view_t v = hb_multi_group_view(p, g);
        for (size_t node = mb->cell_first[c]; node < mb->cell_first[c + 1]; ++node) {
            const plan_branch_t *q = &pb[node_branch[node]];
            p->node_slot[node] = p->slot_base[g] +
                                 hb_multi_slot(&v, q->height, new_id[node_branch[node]],
                                               q->rows - 1 - node_pos[node]);
        }
    }
    /* Child lists (CSR by sorted id), each by top node descending: the order in
     * which hb_hines_solve eliminates a fork's children. Planning ids ascend
     * with the top node within a cell, so walk them downwards. Slots are
     * group-local (a branch's parent is in its cell, so in its group). */
    for (int j = 0; j < nb; ++j)
        if (pb[j].parent >= 0) p->child_ptr[new_id[pb[j].parent] + 1]++;
    for (int k = 0; k < nb; ++k) p->child_ptr[k + 1] += p->child_ptr[k];
    for (int j = nb - 1; j >= 0; --j) {
        const plan_branch_t *q = &pb[j];
        const size_t first = mb->cell_first[q->cell], base = p->slot_base[q->group];
        const int k = new_id[j];
        p->parent_slot[k] = HB_MULTI_NO_PARENT;
        if (q->parent < 0) continue;
        const int parent_k = new_id[q->parent];
        p->child_top[p->child_ptr[parent_k] + fill[parent_k]++] =
            p->node_slot[first + (size_t)q->top] - base;
        p->parent_slot[k] = p->node_slot[first + (size_t)mb->parent[first + (size_t)q->top]] - base;
    }
    hb_status_t status = HB_SUCCESS;
    goto done;
oom:
    hb_multi_plan_free(p);
    status = hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory planning %d cells of %zu rows in all",
                     mb->n_cells, n_rows);
done:
    free(nchild);
    free(node_branch);
    free(node_pos);
    free(group_of);
    free(pb);
    free(sorted);
    free(new_id);
    free(fill);
    return status;
}

/*
 * A cell's cost when a block solves it alone: the sum over its levels of the
 * longest branch (the rows on its block's critical path with level barriers).
 */
static long cell_cost(int m, const int *parent, int split, int *nchild, int *br, int *scratch)
{
    /* scratch: [m] branch rows, then [m] branch parent, then [m] height, then [m] level max */
    int *rows = scratch, *bpar = scratch + m, *height = scratch + 2 * m, *lmax = scratch + 3 * m;
    count_children(m, parent, nchild);
    int nb = 0;
    for (int i = 0; i < m; ++i) {
        if (i == 0 || nchild[parent[i]] != 1) {
            rows[nb] = 1;
            bpar[nb] = i ? br[parent[i]] : -1;
            height[nb] = 0;
            br[i] = nb++;
        } else {
            br[i] = br[parent[i]];
            rows[br[i]]++;
        }
    }
    for (int j = nb - 1; j > 0; --j)
        if (height[bpar[j]] < height[j] + 1) height[bpar[j]] = height[j] + 1;
    memset(lmax, 0, (size_t)(height[0] + 1) * sizeof *lmax);
    for (int j = 0; j < nb; ++j) { /* a split branch's path: its bottom chunk, then its tops */
        const int L = hb_multi_chunk_rows(rows[j]);
        const int path = split > 0 && rows[j] >= split ? L + rows[j] / L : rows[j];
        if (path > lmax[height[j]]) lmax[height[j]] = path;
    }
    long sum = 0;
    for (int h = 0; h <= height[0]; ++h) sum += lmax[h];
    return sum;
}

typedef struct {
    long cost;
    int cell;
} cell_key_t;

static int compare_cost(const void *a, const void *b)
{
    const cell_key_t *x = a, *y = b;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return (x->cell > y->cell) - (x->cell < y->cell);
}

hb_status_t hb_multi_plan_groups(const hb_multi_cells_t *mb, size_t group_rows, int split_rows,
                                 hb_multi_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    const int n = mb->n_cells;
    cell_key_t *key = malloc((size_t)n * sizeof *key);
    int *order = malloc((size_t)n * sizeof *order), *gstart = malloc(((size_t)n + 1) * sizeof *gstart);
    int *scratch = malloc((size_t)mb->max_m * 6 * sizeof *scratch);
    hb_status_t status = HB_SUCCESS;
    if (!key || !order || !gstart || !scratch) {
        status = hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory grouping %d cells", n);
        goto done;
    }
    for (int c = 0; c < n; ++c) {
        const int m = mb->m[c];
        key[c].cell = c;
        key[c].cost = cell_cost(m, mb->parent + mb->cell_first[c], split_rows,
                                scratch + 4 * (size_t)mb->max_m,
                                scratch + 5 * (size_t)mb->max_m, scratch);
        if ((size_t)m > group_rows) key[c].cost *= 8; /* a GPU solves it from global memory */
    }
    qsort(key, (size_t)n, sizeof *key, compare_cost);
    int groups = 0;
    size_t rows = 0;
    for (int k = 0; k < n; ++k) {
        const size_t m = (size_t)mb->m[key[k].cell];
        order[k] = key[k].cell;
        if (k == 0 || rows + m > group_rows) {
            gstart[groups++] = k;
            rows = 0;
        }
        rows += m;
    }
    gstart[groups] = n;
    status = hb_multi_plan(mb, order, gstart, groups, plan);
    if (status == HB_SUCCESS) status = hb_multi_plan_splits(plan, split_rows);
done:
    free(key);
    free(order);
    free(gstart);
    free(scratch);
    if (status != HB_SUCCESS) hb_multi_plan_free(plan);
    return status;
}

#define PLAN_FAIL(...)                                               \
    do {                                                             \
        if (why && why_len) snprintf(why, why_len, __VA_ARGS__);     \
        goto done;                                                   \
    } while (0)

int hb_multi_plan_verify(const hb_multi_cells_t *mb, const hb_multi_plan_t *p, char *why,
                         size_t why_len)
{
    int ok = 0;
    const int G = p->n_groups, nb = p->n_branches;
    unsigned char *seen = NULL;
    int *level_of = NULL, *slot_level = NULL;
    if (why && why_len) why[0] = '\0';
    if (G < 1 || nb < mb->n_cells || p->n_slots != mb->n_rows)
        PLAN_FAIL("%d groups, %d branches, %zu slots for %d cells of %zu rows", G, nb, p->n_slots,
                  mb->n_cells, mb->n_rows);
    if (!p->slot_base || !p->level_off || !p->row_off || !p->level_branch || !p->level_row ||
        !p->row_base || !p->rows || !p->child_ptr || !p->child_top || !p->parent_slot ||
        !p->node_slot)
        PLAN_FAIL("a table is missing");
    if (p->slot_base[0] != 0 || p->level_off[0] != 0 || p->row_off[0] != 0)
        PLAN_FAIL("group 0 does not start at entry 0");
    if (p->slot_base[G] != p->n_slots) PLAN_FAIL("slot_base[%d] = %zu", G, p->slot_base[G]);
    seen = calloc(p->n_slots ? p->n_slots : 1, 1);
    level_of = malloc((size_t)nb * sizeof *level_of);
    slot_level = malloc((p->max_group_rows ? p->max_group_rows : 1) * sizeof *slot_level);
    if (!seen || !level_of || !slot_level) PLAN_FAIL("out of memory");
    for (int b = 0; b < nb; ++b) level_of[b] = -1;
    size_t max_rows = 0;
    int max_entries = 0, max_levels = 0, roots = 0;
    /* the level and row tables, branch ranges and slots of every group */
    for (int g = 0; g < G; ++g) {
        const size_t base = p->slot_base[g], n = p->slot_base[g + 1] - base;
        const int levels = p->level_off[g + 1] - p->level_off[g] - 1;
        const int entries = p->row_off[g + 1] - p->row_off[g];
        if (p->slot_base[g + 1] <= base || p->slot_base[g + 1] > p->n_slots)
            PLAN_FAIL("group %d: slots %zu..%zu", g, base, p->slot_base[g + 1]);
        if (levels < 1 || entries < 1)
            PLAN_FAIL("group %d: %d levels, %d row entries", g, levels, entries);
        if (n > p->max_group_rows) PLAN_FAIL("group %d: %zu rows > max_group_rows", g, n);
        if (32 * n + 8 * (size_t)entries < 32 * n) PLAN_FAIL("group %d: staged bytes overflow", g);
        hb_multi_view_t v = hb_multi_group_view(p, g);
        if (v.level_row[0] != 0 || v.level_row[levels] != entries)
            PLAN_FAIL("group %d: level_row 0..%d = %d..%d, %d row entries", g, levels,
                      v.level_row[0], v.level_row[levels], entries);
        if (v.level_branch[0] != (g ? p->level_branch[p->level_off[g] - 1] : 0))
            PLAN_FAIL("group %d: branches start at %d", g, v.level_branch[0]);
        for (size_t s = 0; s < n; ++s) slot_level[s] = -1;
        for (int h = 0; h < levels; ++h) {
            const int lb = v.level_branch[h], le = v.level_branch[h + 1];
            if (lb < 0 || le <= lb || le > nb)
                PLAN_FAIL("group %d level %d: branches %d..%d of %d", g, h, lb, le, nb);
            const int longest = p->rows[lb];
            if (longest != v.level_row[h + 1] - v.level_row[h])
                PLAN_FAIL("group %d level %d: longest branch %d rows, %d row entries", g, h,
                          longest, v.level_row[h + 1] - v.level_row[h]);
            for (int b = lb; b < le; ++b) {
                if (level_of[b] >= 0) PLAN_FAIL("branch %d in two levels", b);
                level_of[b] = h;
                if (p->rows[b] < 1 || p->rows[b] > longest ||
                    (b > lb && p->rows[b] > p->rows[b - 1]))
                    PLAN_FAIL("group %d level %d: branch %d has %d rows (not sorted)", g, h, b,
                              p->rows[b]);
                for (int r = 0; r < p->rows[b]; ++r) {
                    const size_t s = hb_multi_slot(&v, h, b, r);
                    if (s >= n)
                        PLAN_FAIL("group %d: branch %d row %d at slot %zu of %zu", g, b, r, s, n);
                    if (slot_level[s] >= 0) PLAN_FAIL("group %d: slot %zu used twice", g, s);
                    slot_level[s] = h;
                }
            }
        }
        for (size_t s = 0; s < n; ++s)
            if (slot_level[s] < 0) PLAN_FAIL("group %d: slot %zu unused", g, s);
        /* children eliminated before, parents substituted before: lower and higher levels */
        for (int h = 0; h < levels; ++h)
            for (int b = v.level_branch[h]; b < v.level_branch[h + 1]; ++b) {
                if (p->child_ptr[b] < 0 || p->child_ptr[b + 1] < p->child_ptr[b] ||
                    p->child_ptr[b + 1] > nb)
                    PLAN_FAIL("branch %d: children %d..%d", b, p->child_ptr[b],
                              p->child_ptr[b + 1]);
                for (int c = p->child_ptr[b]; c < p->child_ptr[b + 1]; ++c)
                    if (p->child_top[c] >= n || slot_level[p->child_top[c]] >= h)
                        PLAN_FAIL("group %d: branch %d: child top slot %zu", g, b, p->child_top[c]);
                if (p->parent_slot[b] == HB_MULTI_NO_PARENT) roots++;
                else if (p->parent_slot[b] >= n || slot_level[p->parent_slot[b]] <= h)
                    PLAN_FAIL("group %d: branch %d: parent slot %zu", g, b, p->parent_slot[b]);
            }
        if (n > max_rows) max_rows = n;
        if (entries > max_entries) max_entries = entries;
        if (levels > max_levels) max_levels = levels;
    }
    if (p->level_branch[p->level_off[G] - 1] != nb) PLAN_FAIL("the levels hold fewer branches");
    for (int b = 0; b < nb; ++b)
        if (level_of[b] < 0) PLAN_FAIL("branch %d in no level", b);
    if (p->child_ptr[0] != 0 || p->child_ptr[nb] != nb - mb->n_cells || roots != mb->n_cells)
        PLAN_FAIL("%d child entries, %d roots for %d branches of %d cells", p->child_ptr[nb], roots,
                  nb, mb->n_cells);
    if (max_rows != p->max_group_rows || max_entries != p->max_group_row_entries ||
        max_levels != p->max_levels)
        PLAN_FAIL("max_group_rows %zu, max_group_row_entries %d, max_levels %d; found %zu, %d, %d",
                  p->max_group_rows, p->max_group_row_entries, p->max_levels, max_rows, max_entries,
                  max_levels);
    for (size_t k = 0; k < mb->n_rows; ++k) {
        const size_t s = p->node_slot[k];
        if (s >= p->n_slots || seen[s]) PLAN_FAIL("node %zu: slot %zu", k, s);
        seen[s] = 1;
    }
    /* split lists: exactly the branches of split_rows rows or more, each in its own level */
    if (!p->split_off || !p->split_level || !p->split_branch || p->split_off[0] != 0)
        PLAN_FAIL("split tables missing");
    for (int g = 0; g < G; ++g) {
        const hb_multi_view_t v = hb_multi_group_view(p, g);
        int expected = 0;
        for (int b = v.level_branch[0]; b < v.level_branch[v.n_levels]; ++b)
            expected += hb_multi_chunks(&v, b) > 1;
        if (v.n_split != expected)
            PLAN_FAIL("group %d: %d split branches listed, %d expected", g, v.n_split, expected);
        for (int i = 0; i < v.n_split; ++i) {
            const int h = v.split_level[i], b = v.split_branch[i];
            if (h < 0 || h >= v.n_levels || b < v.level_branch[h] || b >= v.level_branch[h + 1] ||
                hb_multi_chunks(&v, b) < 2)
                PLAN_FAIL("group %d: split entry %d: level %d, branch %d", g, i, h, b);
        }
    }
    ok = 1;
done:
    free(seen);
    free(level_of);
    free(slot_level);
    return ok ? 0 : -1;
}
#undef PLAN_FAIL
