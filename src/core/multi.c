/*
 * Mixed-morphology batches: the public hb_multi_* calls (core/multi.h, docs/multi.md). The
 * host copy is laid out by the LEVELS plan; a backend with a state of its own (CUDA) holds the
 * layout of the algorithm it last ran (LEVELS: the same, GROUPED: its plan's, PER_CELL:
 * interleaved cell by cell, padded to the largest cell, SHAPES: its classes') and moves data
 * only at set, get and solve; the CPU solves the host copy (backend/multi_ops.h).
 */
#include "core/bench.h"
#include "core/multi.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/multi_ops.h"
#include "common/status.h"
#include "core/context.h"
#include "core/hines.h"

static hb_status_t sync_host(const struct hb_multi *mb);

static const struct hb_multi_ops *ops_of(const struct hb_multi *mb)
{
    return mb->ctx->ops->multi;
}

/* The cells as the planners read them. */
static hb_multi_cells_t cells_of(const struct hb_multi *mb)
{
    return (hb_multi_cells_t){.n_cells = mb->n_cells, .m = mb->m, .cell_first = mb->cell_first,
                              .parent = mb->parent, .n_rows = mb->n_rows, .max_m = mb->max_m};
}

static void multi_free(hb_multi_t *mb)
{
    if (!mb) return;
    if (mb->device) ops_of(mb)->destroy(mb->device);
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
    hb_multi_plan_t *plan = calloc(1, sizeof *plan);
    if (!plan) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory grouping %d cells", mb->n_cells);
    const hb_multi_cells_t cells = cells_of(mb);
    hb_status_t status = hb_multi_plan_groups(&cells, group_rows, split_rows, plan);
    if (status != HB_SUCCESS) {
        free(plan);
        return status;
    }
    hb_multi_plan_free(mb->grouped);
    free(mb->grouped);
    mb->grouped = plan;
    mb->group_rows = group_rows;
    return HB_SUCCESS;
}

int hb_multi_plan_check(const struct hb_multi *mb, const hb_multi_plan_t *plan, char *why,
                        size_t why_len)
{
    const hb_multi_cells_t cells = cells_of(mb);
    return hb_multi_plan_verify(&cells, plan, why, why_len);
}

hb_status_t hb_multi_plan_shapes(struct hb_multi *mb, const hb_multi_shapes_device_t *dev,
                                 int threads)
{
    hb_multi_shapes_t *s = mb->shapes;
    if (s && memcmp(&s->device, dev, sizeof *dev) == 0 && s->threads == threads)
        return HB_SUCCESS;
    if (s) {
        hb_multi_shapes_free(s);
    } else if (!(s = mb->shapes = calloc(1, sizeof *s))) {
        return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory planning shapes");
    }
    const hb_multi_cells_t cells = cells_of(mb);
    hb_status_t status = hb_multi_shapes_plan(&cells, mb->shape, mb->n_shapes, &mb->shapes_knobs,
                                              dev, threads, s);
    if (status != HB_SUCCESS) {
        free(s);
        mb->shapes = NULL;
    }
    return status;
}

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
    /* the context's tuning (backend/tuning.h), checked by its parser: unset is the rule */
    const hb_tuning_t *tu = &ctx->tuning;
    mb->split_rows = tu->multi_split_rows >= 0 ? tu->multi_split_rows : HB_MULTI_SPLIT_ROWS;
    mb->shapes_knobs.bytes = tu->multi_shapes_bytes > 0 ? (size_t)tu->multi_shapes_bytes : 0;
    mb->shapes_knobs.split_rows = tu->multi_shapes_split_rows;
    mb->shapes_knobs.choice = tu->multi_shapes_choice;
    mb->n_rows = n_rows;
    mb->max_m = max_m;
    mb->m = malloc((size_t)n_cells * sizeof *mb->m);
    mb->cell_first = malloc(((size_t)n_cells + 1) * sizeof *mb->cell_first);
    mb->parent = malloc(n_rows * sizeof *mb->parent);
    mb->shape = malloc((size_t)n_cells * sizeof *mb->shape);
    int *nchild = malloc((size_t)max_m * sizeof *nchild);
    int *order = malloc((size_t)n_cells * sizeof *order);
    if (!mb->m || !mb->cell_first || !mb->parent || !mb->shape || !nchild || !order) goto oom;
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
    const hb_multi_cells_t cells = cells_of(mb);
    const size_t total = hb_multi_count_branches(&cells, nchild);
    if (total >= (size_t)INT_MAX) {
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: %zu branches; at most %d supported", fn,
                         total, INT_MAX - 1);
        goto done;
    }
    if ((status = hb_multi_find_shapes(&cells, mb->shape, &mb->n_shapes)) != HB_SUCCESS) goto done;
    const int one_group[2] = {0, n_cells};
    if ((status = hb_multi_plan(&cells, order, one_group, 1, &mb->levels)) != HB_SUCCESS ||
        (status = hb_multi_plan_splits(&mb->levels, 0)) != HB_SUCCESS)
        goto done;
    mb->u = calloc(n_rows, sizeof *mb->u);
    mb->l = calloc(n_rows, sizeof *mb->l);
    mb->d = calloc(n_rows, sizeof *mb->d);
    mb->rhs = calloc(n_rows, sizeof *mb->rhs);
    if (!mb->u || !mb->l || !mb->d || !mb->rhs) goto oom;
    if ((status = ops_of(mb)->create(ctx, &mb->device)) != HB_SUCCESS) goto done;
    if (mb->device) mb->host_dirty = 1;
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
    /* No hb_clear_error: a destroy cannot fail, and it runs on failure paths (a create
     * that fails half-way), whose message must survive it. */
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

/* ---- backend layouts (a non-NULL backend state) ---- */

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
    hb_status_t status = ops_of(mb)->download(
        mb->device, mb->n_rows, size, map, mb->device_newer & HB_MULTI_NEWER_D ? mb->d : NULL,
        mb->device_newer & HB_MULTI_NEWER_RHS ? mb->rhs : NULL);
    free(map);
    if (status == HB_SUCCESS) mb->device_newer = 0;
    return status;
}

/* Plans what `algo` needs on this backend: GROUPED's groups, SHAPES's classes. */
static hb_status_t plan_for(struct hb_multi *mb, hb_multi_algo_t algo)
{
    hb_status_t status = HB_SUCCESS;
    if (algo == HB_MULTI_ALGO_GROUPED) {
        /* Split branches shorten a block's path where blocks are few (latency-bound);
         * with several blocks per multiprocessor they only add work. */
        int saturated = 0;
        size_t rows = ops_of(mb)->group_rows(mb->device, mb->n_rows,
                                             mb->grouped ? mb->group_rows : 0, &saturated);
        if ((status = hb_multi_plan_grouped(mb, rows, saturated ? 0 : mb->split_rows)) !=
            HB_SUCCESS)
            return status;
    }
    if (algo == HB_MULTI_ALGO_SHAPES) {
        hb_multi_shapes_device_t target;
        if ((status = ops_of(mb)->shape_device(mb->device, &target)) != HB_SUCCESS ||
            (status = hb_multi_plan_shapes(mb, &target, HB_MULTI_SHAPES_THREADS)) != HB_SUCCESS)
            return status;
    }
    return status;
}

/* Makes the backend hold the layout of `algo` and the host copy's data; on a NULL state only
 * plans (the backend solves the host copy). */
static hb_status_t sync_device(struct hb_multi *mb, hb_multi_algo_t algo)
{
    const struct hb_multi_ops *ops = ops_of(mb);
    void *dev = mb->device;
    hb_status_t status = HB_SUCCESS;
    if (!dev) return plan_for(mb, algo);
    if (mb->device_layout != (int)algo) {
        if ((status = sync_host(mb)) != HB_SUCCESS) return status;
        if ((status = plan_for(mb, algo)) != HB_SUCCESS) return status;
        mb->device_layout = 0;
        if (algo == HB_MULTI_ALGO_SHAPES) {
            status = ops->install_shapes(dev, mb->shapes);
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
            status = ops->install_cells(dev, mb->n_cells, mb->max_m, mb->m, parent);
            free(parent);
        } else {
            status = ops->install_plan(dev, algo == HB_MULTI_ALGO_GROUPED ? mb->grouped
                                                                          : &mb->levels);
        }
        if (status != HB_SUCCESS) return status;
        mb->device_layout = (int)algo;
        mb->host_dirty = 1;
    }
    if (mb->host_dirty) {
        size_t size = 0;
        size_t *map = device_map(mb, algo, &size);
        if (!map) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory uploading");
        status = ops->upload(dev, mb->n_rows, size, map, mb->u, mb->l, mb->d, mb->rhs);
        free(map);
        if (status == HB_SUCCESS) mb->host_dirty = 0;
    }
    return status;
}

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

/* The batch as the backend's solve reads it. */
static hb_multi_host_t host_of(struct hb_multi *mb)
{
    return (hb_multi_host_t){.ctx = mb->ctx, .cells = cells_of(mb), .levels = &mb->levels,
                             .grouped = mb->grouped, .shapes = mb->shapes, .u = mb->u,
                             .l = mb->l, .d = mb->d, .rhs = mb->rhs};
}

static hb_status_t solve_once(hb_multi_t *multi, hb_multi_algo_t algo)
{
    hb_status_t status = sync_device(multi, algo);
    if (status != HB_SUCCESS) return status;
    if (multi->device) multi->device_newer |= HB_MULTI_NEWER_D | HB_MULTI_NEWER_RHS;
    const hb_multi_host_t host = host_of(multi);
    return ops_of(multi)->solve(multi->device, &host, algo);
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
    hb_status_t status = sync_device(multi, algo);
    if (status != HB_SUCCESS) return status;
    if (multi->device) multi->device_newer |= HB_MULTI_NEWER_D | HB_MULTI_NEWER_RHS;
    const hb_multi_host_t host = host_of(multi);
    return ops_of(multi)->benchmark(multi->device, &host, algo, repeats, seconds);
}
