/*
 * Mixed-morphology batches: the branch decomposition, the plans (core/multi.h,
 * docs/multi.md) and the public hb_multi_* calls. The host copy is laid out by
 * the LEVELS plan; a CUDA batch holds the layout of the algorithm it last ran
 * (LEVELS: the same, GROUPED: its plan's, PER_CELL: interleaved cell by cell,
 * padded to the largest cell) and moves data only at set, get and solve.
 */
#include "core/bench.h"
#include "core/multi.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/context.h"
#include "core/multi_shapes.h"
#include "core/hines.h"
#include "common/status.h"

#ifdef HB_HAVE_CUDA
#include "cuda/multi_cuda.h"
#endif

static hb_status_t sync_host(const struct hb_multi *mb);

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
static hb_status_t plan_splits(hb_multi_plan_t *p, int split_rows)
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

static void multi_free(hb_multi_t *mb)
{
    if (!mb) return;
#ifdef HB_HAVE_CUDA
    hb_cuda_multi_destroy((hb_cuda_multi_t *)mb->device);
#endif
    free(mb->m);
    free(mb->cell_first);
    free(mb->parent);
    hb_multi_plan_free(&mb->levels);
    hb_multi_plan_free(mb->grouped);
    free(mb->grouped);
    free(mb->shape);
    hb_multi_shapes_free(mb->shapes);
    free(mb->shapes);
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

static size_t count_branches(const struct hb_multi *mb, int *nchild)
{
    size_t total = 0;
    for (int c = 0; c < mb->n_cells; ++c) {
        const int *parent = mb->parent + mb->cell_first[c];
        count_children(mb->m[c], parent, nchild);
        for (int i = 0; i < mb->m[c]; ++i) total += i == 0 || nchild[parent[i]] != 1;
    }
    return total;
}

hb_status_t hb_multi_plan(const struct hb_multi *mb, const int *order, const int *gstart,
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

/* An integer environment knob: *set 0 when unset or empty; an error naming it when it is not an
 * integer or ok(value) fails (`expected` says what it takes). */
static hb_status_t env_integer(const char *fn, const char *name, int (*ok)(long),
                               const char *expected, long *value, int *set)
{
    *set = 0;
    const char *env = getenv(name);
    if (!env || !*env) return HB_SUCCESS;
    char *end = NULL;
    errno = 0;
    *value = strtol(env, &end, 10);
    if (errno || *end || !ok(*value))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: environment variable %s is '%s'; expected %s",
                       fn, name, env, expected);
    *set = 1;
    return HB_SUCCESS;
}

static int split_rows_ok(long v)
{
    return v == 0 || (v >= HB_MULTI_MIN_SPLIT_ROWS && v <= INT_MAX);
}

static int shapes_bytes_ok(long v) { return v >= 1024; }

static int shapes_choice_ok(long v) { return v >= -1 && v <= HB_MULTI_SHAPES_TIERS; }

static int shapes_split_ok(long v)
{
    return v == 0 || (v >= HB_BRANCHED_MIN_SPLIT_ROWS && v <= INT_MAX);
}

/* HB_MULTI_SPLIT_ROWS, else the default; HB_MULTI_SHAPES_BYTES: SHAPES's small shared-memory
 * budget (tests: few lanes, tier 1), else 0; HB_MULTI_SHAPES_SPLIT_ROWS: the chains SHAPES's
 * branched plans split (0: none), else -1 (SHAPES decides per class); HB_MULTI_SHAPES_CHOICE:
 * SHAPES's occupancies (tests), else -2 (its time model decides). */
static hb_status_t knobs_from_env(const char *fn, struct hb_multi *mb)
{
    long v = 0;
    int set = 0;
    char expected[96];
    snprintf(expected, sizeof expected, "0 (no split branches) or an integer >= %d",
             HB_MULTI_MIN_SPLIT_ROWS);
    hb_status_t status = env_integer(fn, "HB_MULTI_SPLIT_ROWS", split_rows_ok, expected, &v, &set);
    if (status != HB_SUCCESS) return status;
    mb->split_rows = set ? (int)v : HB_MULTI_SPLIT_ROWS;
    status = env_integer(fn, "HB_MULTI_SHAPES_BYTES", shapes_bytes_ok,
                         "an integer >= 1024 (bytes of shared memory per team)", &v, &set);
    if (status != HB_SUCCESS) return status;
    mb->shapes_bytes = set ? (size_t)v : 0;
    snprintf(expected, sizeof expected, "0 (no split chains) or an integer >= %d",
             HB_BRANCHED_MIN_SPLIT_ROWS);
    status = env_integer(fn, "HB_MULTI_SHAPES_SPLIT_ROWS", shapes_split_ok, expected, &v, &set);
    if (status != HB_SUCCESS) return status;
    mb->shapes_split_rows = set ? (int)v : -1;
    snprintf(expected, sizeof expected,
             "-1 (each class its fastest), 0 to %d (a tier for all) or %d (the session-9 rule)",
             HB_MULTI_SHAPES_TIERS - 1, HB_MULTI_SHAPES_TIERS);
    status = env_integer(fn, "HB_MULTI_SHAPES_CHOICE", shapes_choice_ok, expected, &v, &set);
    mb->shapes_choice = status == HB_SUCCESS && set ? (int)v : -2;
    return status;
}

hb_status_t hb_multi_set_split_rows(struct hb_multi *mb, int rows)
{
    if (rows < 0 || (rows > 0 && rows < HB_MULTI_MIN_SPLIT_ROWS))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_multi: split rows %d; expected 0 or >= %d", rows,
                       HB_MULTI_MIN_SPLIT_ROWS);
    const int changed = rows != mb->split_rows;
    mb->split_rows = rows;
    /* The grouping depends on the split (cell cost): re-planned at the next GROUPED solve. */
    if (changed && mb->device_layout == HB_MULTI_ALGO_GROUPED) {
        hb_status_t status = sync_host(mb);
        if (status != HB_SUCCESS) return status;
        mb->device_layout = 0;
    }
    return HB_SUCCESS;
}

hb_status_t hb_multi_plan_grouped(struct hb_multi *mb, size_t group_rows, int split_rows)
{
    if (group_rows < 1) group_rows = 1;
    if (mb->grouped && mb->group_rows == group_rows && mb->grouped->split_rows == split_rows)
        return HB_SUCCESS;
    const int n = mb->n_cells;
    cell_key_t *key = malloc((size_t)n * sizeof *key);
    int *order = malloc((size_t)n * sizeof *order), *gstart = malloc(((size_t)n + 1) * sizeof *gstart);
    int *scratch = malloc((size_t)mb->max_m * 6 * sizeof *scratch);
    hb_multi_plan_t *plan = calloc(1, sizeof *plan);
    hb_status_t status = HB_SUCCESS;
    if (!key || !order || !gstart || !scratch || !plan) {
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
    if (status == HB_SUCCESS) status = plan_splits(plan, split_rows);
    if (status == HB_SUCCESS) {
        hb_multi_plan_free(mb->grouped);
        free(mb->grouped);
        mb->grouped = plan;
        mb->group_rows = group_rows;
        plan = NULL;
    }
done:
    free(key);
    free(order);
    free(gstart);
    free(scratch);
    hb_multi_plan_free(plan);
    free(plan);
    return status;
}

#define PLAN_FAIL(...)                                               \
    do {                                                             \
        if (why && why_len) snprintf(why, why_len, __VA_ARGS__);     \
        goto done;                                                   \
    } while (0)

int hb_multi_plan_check(const struct hb_multi *mb, const hb_multi_plan_t *p, char *why,
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

hb_status_t hb_multi_create(hb_context_t *ctx, int n_cells, const int *m_per_cell,
                            const int *const *parents, hb_multi_t **multi)
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

    hb_multi_t *mb = calloc(1, sizeof *mb);
    if (!mb) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    mb->ctx = ctx;
    mb->n_cells = n_cells;
    if ((status = knobs_from_env(fn, mb)) != HB_SUCCESS) {
        free(mb);
        return status;
    }
    mb->n_rows = n_rows;
    mb->max_m = max_m;
    mb->m = malloc((size_t)n_cells * sizeof *mb->m);
    mb->cell_first = malloc(((size_t)n_cells + 1) * sizeof *mb->cell_first);
    mb->parent = malloc(n_rows * sizeof *mb->parent);
    int *nchild = malloc((size_t)max_m * sizeof *nchild);
    int *order = malloc((size_t)n_cells * sizeof *order);
    if (!mb->m || !mb->cell_first || !mb->parent || !nchild || !order) goto oom;
    size_t node = 0;
    for (int c = 0; c < n_cells; ++c) {
        mb->m[c] = m_per_cell[c];
        mb->cell_first[c] = node;
        memcpy(mb->parent + node, parents[c], (size_t)m_per_cell[c] * sizeof *mb->parent);
        node += (size_t)m_per_cell[c];
        order[c] = c;
    }
    mb->cell_first[n_cells] = node;
    /* Branch ids are ints. */
    const size_t total = count_branches(mb, nchild);
    if (total >= (size_t)INT_MAX) {
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: %zu branches; at most %d supported", fn,
                         total, INT_MAX - 1);
        goto done;
    }
    if ((status = hb_multi_find_shapes(mb)) != HB_SUCCESS) goto done;
    const int one_group[2] = {0, n_cells};
    if ((status = hb_multi_plan(mb, order, one_group, 1, &mb->levels)) != HB_SUCCESS ||
        (status = plan_splits(&mb->levels, 0)) != HB_SUCCESS)
        goto done;
    mb->u = calloc(n_rows, sizeof *mb->u);
    mb->l = calloc(n_rows, sizeof *mb->l);
    mb->d = calloc(n_rows, sizeof *mb->d);
    mb->rhs = calloc(n_rows, sizeof *mb->rhs);
    if (!mb->u || !mb->l || !mb->d || !mb->rhs) goto oom;
#ifdef HB_HAVE_CUDA
    if (ctx->backend == HB_BACKEND_CUDA) {
        if ((status = hb_cuda_multi_create((hb_cuda_multi_t **)&mb->device)) != HB_SUCCESS)
            goto done;
        mb->host_dirty = 1;
    }
#endif
    if (ctx->backend == HB_BACKEND_CUDA && !mb->device) {
        status = hb_fail(HB_ERR_NOT_SUPPORTED, "%s: this build has no CUDA backend", fn);
        goto done;
    }
    *multi = mb;
    mb = NULL;
    goto done;
oom:
    status = hb_fail(HB_ERR_ALLOC, "%s: out of memory for %d cells of %zu rows in all", fn,
                     n_cells, n_rows);
done:
    free(nchild);
    free(order);
    multi_free(mb);
    return status;
}

hb_status_t hb_multi_destroy(hb_multi_t *multi)
{
    hb_clear_error();
    multi_free(multi);
    return HB_SUCCESS;
}

hb_status_t hb_multi_info(const hb_multi_t *multi, hb_multi_info_t *info)
{
    hb_clear_error();
    if (!multi || !info)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_multi_info: multi and info must not be NULL");
    info->cells = multi->n_cells;
    info->rows = multi->n_rows;
    info->branches = multi->levels.n_branches;
    info->levels = multi->levels.max_levels;
    info->max_branch_rows = multi->levels.max_branch_rows;
    info->shapes = multi->n_shapes;
    return HB_SUCCESS;
}

int hb_multi_rows(const hb_multi_t *multi, int cell)
{
    return multi && cell >= 0 && cell < multi->n_cells ? multi->m[cell] : 0;
}

int hb_multi_level_branches(const hb_multi_t *multi, int level)
{
    if (!multi || level < 0 || level >= multi->levels.max_levels) return 0;
    return multi->levels.level_branch[level + 1] - multi->levels.level_branch[level];
}

static hb_status_t check_cell(const char *fn, const hb_multi_t *multi, int cell)
{
    if (!multi) return hb_fail(HB_ERR_INVALID_VALUE, "%s: multi is NULL", fn);
    if (cell < 0 || cell >= multi->n_cells)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: cell = %d; expected 0 <= cell < %d", fn, cell,
                       multi->n_cells);
    return HB_SUCCESS;
}

/* ---- device layouts (CUDA) ---- */

#ifdef HB_HAVE_CUDA
/* Device index of every host slot in the layout of `algo`; *size: elements per array. */
static size_t *device_map(const struct hb_multi *mb, hb_multi_algo_t algo, size_t *size)
{
    size_t *map = malloc(mb->n_rows * sizeof *map);
    if (!map) return NULL;
    const hb_multi_plan_t *host = &mb->levels;
    *size = mb->n_rows;
    for (int c = 0; c < mb->n_cells; ++c)
        for (size_t node = mb->cell_first[c]; node < mb->cell_first[c + 1]; ++node) {
            const size_t i = node - mb->cell_first[c];
            map[host->node_slot[node]] = algo == HB_MULTI_ALGO_GROUPED ? mb->grouped->node_slot[node]
                                         : algo == HB_MULTI_ALGO_SHAPES ? mb->shapes->node_index[node]
                                         : algo == HB_MULTI_ALGO_PER_CELL
                                             ? i * (size_t)mb->n_cells + (size_t)c
                                             : host->node_slot[node];
        }
    if (algo == HB_MULTI_ALGO_PER_CELL) *size = (size_t)mb->max_m * (size_t)mb->n_cells;
    if (algo == HB_MULTI_ALGO_SHAPES) *size = mb->shapes->size;
    return map;
}

/* Brings the host copy up to date. */
/* The host copy is a cache: reading a const batch may refresh it (the cast never writes an
 * object defined const). */
static hb_status_t sync_host(const struct hb_multi *cmb)
{
    struct hb_multi *mb = (struct hb_multi *)cmb;
    if (!mb->device || !mb->device_newer) return HB_SUCCESS;
    size_t size = 0;
    size_t *map = device_map(mb, (hb_multi_algo_t)mb->device_layout, &size);
    if (!map) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory downloading");
    hb_status_t status = hb_cuda_multi_download(
        (hb_cuda_multi_t *)mb->device, mb->n_rows, size, map,
        mb->device_newer & HB_MULTI_NEWER_D ? mb->d : NULL,
        mb->device_newer & HB_MULTI_NEWER_RHS ? mb->rhs : NULL);
    free(map);
    if (status == HB_SUCCESS) mb->device_newer = 0;
    return status;
}

/* Makes the device hold the layout of `algo` and the host copy's data. */
static hb_status_t sync_device(struct hb_multi *mb, hb_multi_algo_t algo)
{
    hb_cuda_multi_t *dev = (hb_cuda_multi_t *)mb->device;
    hb_status_t status = HB_SUCCESS;
    if (mb->device_layout != (int)algo) {
        if ((status = sync_host(mb)) != HB_SUCCESS) return status;
        if (algo == HB_MULTI_ALGO_GROUPED) {
            /* Split branches shorten a block's path where blocks are few (latency-bound);
             * with several blocks per multiprocessor they only add work. */
            int saturated = 0;
            size_t rows = hb_cuda_multi_group_rows(dev, mb->n_rows, &saturated);
            if ((status = hb_multi_plan_grouped(mb, rows, saturated ? 0 : mb->split_rows)) !=
                HB_SUCCESS)
                return status;
        }
        if (algo == HB_MULTI_ALGO_SHAPES) {
            hb_multi_shapes_device_t target;
            if ((status = hb_cuda_multi_shape_device(dev, &target)) != HB_SUCCESS ||
                (status = hb_multi_plan_shapes(mb, &target, HB_MULTI_SHAPES_THREADS)) !=
                    HB_SUCCESS)
                return status;
        }
        mb->device_layout = 0;
        if (algo == HB_MULTI_ALGO_SHAPES) {
            status = hb_cuda_multi_install_shapes(dev, mb->shapes);
        } else if (algo == HB_MULTI_ALGO_PER_CELL) {
            /* parents interleaved as the data: row i of cell c at i * cells + c */
            const size_t size = (size_t)mb->max_m * (size_t)mb->n_cells;
            int *parent = malloc(size * sizeof *parent);
            if (!parent) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory");
            for (size_t k = 0; k < size; ++k) parent[k] = 0;
            for (int c = 0; c < mb->n_cells; ++c)
                for (int i = 0; i < mb->m[c]; ++i)
                    parent[(size_t)i * (size_t)mb->n_cells + (size_t)c] =
                        mb->parent[mb->cell_first[c] + (size_t)i];
            status = hb_cuda_multi_install_cells(dev, mb->n_cells, mb->max_m, mb->m, parent);
            free(parent);
        } else {
            status = hb_cuda_multi_install_plan(
                dev, algo == HB_MULTI_ALGO_GROUPED ? mb->grouped : &mb->levels);
        }
        if (status != HB_SUCCESS) return status;
        mb->device_layout = (int)algo;
        mb->host_dirty = 1;
    }
    if (mb->host_dirty) {
        size_t size = 0;
        size_t *map = device_map(mb, algo, &size);
        if (!map) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory uploading");
        status = hb_cuda_multi_upload(dev, mb->n_rows, size, map, mb->u, mb->l, mb->d, mb->rhs);
        free(map);
        if (status == HB_SUCCESS) mb->host_dirty = 0;
    }
    return status;
}
#else
static hb_status_t sync_host(const struct hb_multi *mb)
{
    (void)mb;
    return HB_SUCCESS;
}
#endif

hb_status_t hb_multi_set(hb_multi_t *multi, int cell, const double *u, const double *l,
                         const double *d, const double *rhs)
{
    hb_clear_error();
    hb_status_t status = check_cell("hb_multi_set", multi, cell);
    if (status == HB_SUCCESS) status = sync_host(multi);
    if (status != HB_SUCCESS) return status;
    multi->host_dirty = 1;
    const size_t *slot = multi->levels.node_slot + multi->cell_first[cell];
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

hb_status_t hb_multi_get(const hb_multi_t *multi, int cell, double *u, double *l, double *d,
                         double *rhs)
{
    hb_clear_error();
    hb_status_t status = check_cell("hb_multi_get", multi, cell);
    if (status == HB_SUCCESS) status = sync_host(multi);
    if (status != HB_SUCCESS) return status;
    const size_t *slot = multi->levels.node_slot + multi->cell_first[cell];
    for (int i = 0; i < multi->m[cell]; ++i) {
        if (u) u[i] = multi->u[slot[i]];
        if (l) l[i] = multi->l[slot[i]];
        if (d) d[i] = multi->d[slot[i]];
        if (rhs) rhs[i] = multi->rhs[slot[i]];
    }
    return HB_SUCCESS;
}

/* Group size of the CPU twin of GROUPED (any size gives the same result). */
#define CPU_GROUP_ROWS 2048

/* CPU twins of GROUPED, SHAPES and PER_CELL: the host copy permuted to their layout and back. */
static hb_status_t cpu_solve_permuted(hb_multi_t *mb, hb_multi_algo_t algo)
{
    const size_t n = mb->n_rows;
    hb_status_t status = HB_SUCCESS;
    if (algo == HB_MULTI_ALGO_GROUPED) {
        const size_t rows = mb->group_rows ? mb->group_rows : CPU_GROUP_ROWS;
        if ((status = hb_multi_plan_grouped(mb, rows, mb->split_rows)) != HB_SUCCESS) return status;
    }
    if (algo == HB_MULTI_ALGO_SHAPES &&
        (status = hb_multi_plan_shapes(mb, &HB_MULTI_SHAPES_CPU_DEVICE,
                                       HB_MULTI_SHAPES_THREADS)) != HB_SUCCESS)
        return status;
    /* SHAPES pads its teams (padding is never read, zeroed all the same) */
    const size_t size = algo == HB_MULTI_ALGO_SHAPES ? mb->shapes->size : n;
    double *buf = calloc(4 * size, sizeof *buf);
    if (!buf) return hb_fail(HB_ERR_ALLOC, "hb_multi_solve: out of memory (%zu rows)", n);
    double *u = buf, *l = buf + size, *d = buf + 2 * size, *rhs = buf + 3 * size;
    /* where node k of the twin's layout lives: grouped slot, class element, or natural order */
    const size_t *to = algo == HB_MULTI_ALGO_GROUPED  ? mb->grouped->node_slot
                       : algo == HB_MULTI_ALGO_SHAPES ? mb->shapes->node_index
                                                      : NULL;
    const size_t *from = mb->levels.node_slot;
    for (size_t k = 0; k < n; ++k) {
        const size_t t = to ? to[k] : k, f = from[k];
        u[t] = mb->u[f];
        l[t] = mb->l[f];
        d[t] = mb->d[f];
        rhs[t] = mb->rhs[f];
    }
    if (algo == HB_MULTI_ALGO_GROUPED)
        status = hb_multi_cpu_solve_grouped(mb->ctx, mb->grouped, u, l, d, rhs);
    else if (algo == HB_MULTI_ALGO_SHAPES)
        status = hb_multi_cpu_solve_shapes(mb->ctx, mb->shapes, u, l, d, rhs);
    else
        hb_multi_cpu_solve_cells(mb->ctx, mb->n_cells, mb->m, mb->cell_first, mb->parent, u, l, d,
                                 rhs);
    for (size_t k = 0; k < n; ++k) {
        const size_t t = to ? to[k] : k, f = from[k];
        mb->d[f] = d[t];
        mb->rhs[f] = rhs[t];
    }
    free(buf);
    return status;
}

static hb_status_t solve_once(hb_multi_t *multi, hb_multi_algo_t algo)
{
#ifdef HB_HAVE_CUDA
    if (multi->device) {
        hb_status_t status = sync_device(multi, algo);
        if (status != HB_SUCCESS) return status;
        multi->device_newer |= HB_MULTI_NEWER_D | HB_MULTI_NEWER_RHS;
        return hb_cuda_multi_solve((hb_cuda_multi_t *)multi->device, algo);
    }
#endif
    if (algo == HB_MULTI_ALGO_LEVELS) {
        hb_multi_view_t v = hb_multi_group_view(&multi->levels, 0);
        v.u = multi->u;
        v.l = multi->l;
        v.d = multi->d;
        v.rhs = multi->rhs;
        hb_multi_cpu_solve(multi->ctx, &v);
        return HB_SUCCESS;
    }
    return cpu_solve_permuted(multi, algo);
}

hb_status_t hb_multi_solve(hb_multi_t *multi)
{
    hb_clear_error();
    if (!multi) return hb_fail(HB_ERR_INVALID_VALUE, "hb_multi_solve: multi is NULL");
    return solve_once(multi, hb_multi_resolved_algorithm(multi));
}

const char *hb_multi_algo_name(hb_multi_algo_t algo)
{
    static const char *const names[] = {"auto", "levels", "grouped", "per-cell", "shapes"};
    return (int)algo >= 0 && algo <= HB_MULTI_ALGO_SHAPES ? names[algo] : "unknown";
}

hb_status_t hb_multi_set_algorithm(hb_multi_t *multi, hb_multi_algo_t algo)
{
    hb_clear_error();
    if (!multi) return hb_fail(HB_ERR_INVALID_VALUE, "hb_multi_set_algorithm: multi is NULL");
    if ((int)algo < 0 || algo > HB_MULTI_ALGO_SHAPES)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "hb_multi_set_algorithm: algo = %d is not an hb_multi_algo_t", (int)algo);
    multi->algo = algo;
    return HB_SUCCESS;
}

hb_multi_algo_t hb_multi_algorithm(const hb_multi_t *multi)
{
    return multi ? multi->algo : HB_MULTI_ALGO_AUTO;
}

hb_multi_algo_t hb_multi_resolved_algorithm(const hb_multi_t *multi)
{
    if (!multi) return HB_MULTI_ALGO_AUTO;
    if (multi->algo != HB_MULTI_ALGO_AUTO) return multi->algo;
    /* CUDA: the rules of HB_MULTI_AUTO_SHAPES_CELLS and HB_MULTI_AUTO_GROUPED_ROWS (multi.h);
     * CPU: the level loop on the host copy. */
    if (!multi->device) return HB_MULTI_ALGO_LEVELS;
    if (multi->n_cells >= HB_MULTI_AUTO_SHAPES_CELLS * multi->n_shapes &&
        multi->max_m <= HB_MULTI_AUTO_SHAPES_ROWS)
        return HB_MULTI_ALGO_SHAPES;
    const size_t limit = multi->levels.max_levels >= HB_MULTI_AUTO_DEEP_LEVELS
                             ? HB_MULTI_AUTO_DEEP_ROWS
                             : HB_MULTI_AUTO_GROUPED_ROWS;
    return multi->n_rows <= limit ? HB_MULTI_ALGO_GROUPED : HB_MULTI_ALGO_LEVELS;
}

hb_status_t hb_multi_benchmark(hb_multi_t *multi, int repeats, double *seconds)
{
    static const char fn[] = "hb_multi_benchmark";
    hb_clear_error();
    if (!multi || !seconds) return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", fn);
    if (repeats < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: repeats = %d; expected >= 1", fn, repeats);
    const hb_multi_algo_t algo = hb_multi_resolved_algorithm(multi);
    hb_status_t status = HB_SUCCESS;
#ifdef HB_HAVE_CUDA
    if (multi->device) {
        if ((status = sync_device(multi, algo)) != HB_SUCCESS) return status;
        multi->device_newer |= HB_MULTI_NEWER_D | HB_MULTI_NEWER_RHS;
        return hb_cuda_multi_benchmark((hb_cuda_multi_t *)multi->device, algo, repeats, seconds);
    }
#endif
    const size_t bytes = multi->n_rows * sizeof(double);
    double *d0 = malloc(bytes), *r0 = malloc(bytes);
    if (!d0 || !r0) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    if (status == HB_SUCCESS) {
        memcpy(d0, multi->d, bytes);
        memcpy(r0, multi->rhs, bytes);
    }
    for (int r = -1; r < repeats && status == HB_SUCCESS; ++r) { /* one warm-up */
        memcpy(multi->d, d0, bytes);
        memcpy(multi->rhs, r0, bytes);
        const double t0 = hb_clock_seconds();
        status = solve_once(multi, algo);
        if (r >= 0) seconds[r] = hb_clock_seconds() - t0;
    }
    free(d0);
    free(r0);
    return status;
}
