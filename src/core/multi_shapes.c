/*
 * SHAPES of mixed batches (core/multi_shapes.h, docs/multi.md): classes of cells with the
 * same tree, their layout and their branched plans.
 */
#include "core/multi_shapes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"

/* FNV-1a over a parent array: equal arrays give equal keys. */
static uint64_t tree_key(const int *parent, int m)
{
    uint64_t h = 1469598103934665603u;
    for (int i = 0; i < m; ++i) {
        h ^= (uint32_t)parent[i];
        h *= 1099511628211u;
    }
    return h ^ (uint64_t)m;
}

typedef struct {
    uint64_t key;
    int m, cell;
} shape_key_t;

static int by_key(const void *a, const void *b)
{
    const shape_key_t *x = a, *y = b;
    if (x->m != y->m) return x->m < y->m ? -1 : 1;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->cell > y->cell) - (x->cell < y->cell);
}

static int same_tree(const struct hb_multi *mb, int a, int b)
{
    return mb->m[a] == mb->m[b] &&
           memcmp(mb->parent + mb->cell_first[a], mb->parent + mb->cell_first[b],
                  (size_t)mb->m[a] * sizeof *mb->parent) == 0;
}

hb_status_t hb_multi_find_shapes(struct hb_multi *mb)
{
    const int n = mb->n_cells;
    shape_key_t *keys = malloc((size_t)n * sizeof *keys);
    int *rep = malloc((size_t)n * sizeof *rep); /* representative cell of each class so far */
    int *first_seen = malloc((size_t)n * sizeof *first_seen);
    free(mb->shape);
    mb->shape = malloc((size_t)n * sizeof *mb->shape);
    if (!keys || !rep || !first_seen || !mb->shape) {
        free(keys);
        free(rep);
        free(first_seen);
        return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory grouping %d cells by shape", n);
    }
    for (int c = 0; c < n; ++c) {
        keys[c].key = tree_key(mb->parent + mb->cell_first[c], mb->m[c]);
        keys[c].m = mb->m[c];
        keys[c].cell = c;
    }
    qsort(keys, (size_t)n, sizeof *keys, by_key);
    /* Within a run of equal keys, cells are compared with the classes found in that run (a
     * hash collision gives a second class, never a wrong one). Ids are provisional here. */
    int classes = 0;
    for (int r = 0; r < n;) {
        int end = r + 1;
        while (end < n && keys[end].m == keys[r].m && keys[end].key == keys[r].key) ++end;
        const int run_first = classes;
        for (int q = r; q < end; ++q) {
            const int c = keys[q].cell;
            int k = run_first;
            while (k < classes && !same_tree(mb, rep[k], c)) ++k;
            if (k == classes) rep[classes++] = c;
            mb->shape[c] = k;
        }
        r = end;
    }
    /* Renumber in order of first appearance. */
    for (int k = 0; k < classes; ++k) first_seen[k] = -1;
    int next = 0;
    for (int c = 0; c < n; ++c) {
        if (first_seen[mb->shape[c]] < 0) first_seen[mb->shape[c]] = next++;
        mb->shape[c] = first_seen[mb->shape[c]];
    }
    mb->n_shapes = classes;
    free(keys);
    free(rep);
    free(first_seen);
    return HB_SUCCESS;
}

void hb_multi_shapes_free(hb_multi_shapes_t *s)
{
    if (!s) return;
    for (int k = 0; k < s->n_classes && s->cls; ++k) hb_hines_branched_free(&s->cls[k].plan);
    free(s->cls);
    free(s->node_index);
    free(s->tables);
    memset(s, 0, sizeof *s);
}

/* Tier 0 first, then larger cells first, then first appearance. */
static int by_tier_rows(const void *a, const void *b)
{
    const hb_multi_shape_t *x = a, *y = b;
    if (x->tier != y->tier) return x->tier < y->tier ? -1 : 1;
    if (x->m != y->m) return x->m > y->m ? -1 : 1;
    return (x->team_first > y->team_first) - (x->team_first < y->team_first);
}

/* Class k's plan for `lanes` lanes: chains split from split_rows rows, or, when split_rows is
 * -1, chains of HB_MULTI_SPLIT_ROWS rows or more (GROUPED's default: on an H100, BRANCHED's 24
 * made Figure 6's cells, whose branches have up to 24 rows, 9% slower) when a tier-0 team (two
 * blocks a multiprocessor) is latency-bound without (hb_branched_split_pays) and still fits
 * `small`. */
static hb_status_t plan_lanes(hb_multi_shape_t *k, const int *parent, int lanes, int threads,
                              int split_rows, size_t small)
{
    hb_status_t status =
        hb_hines_branched_build(k->m, parent, lanes, threads / lanes, HB_BRANCHED_STAGE_COST,
                                split_rows < 0 ? 0 : split_rows, &k->plan);
    if (status != HB_SUCCESS || split_rows >= 0 || !hb_branched_split_pays(&k->plan, 2))
        return status;
    hb_hines_branched_t split;
    status = hb_hines_branched_build(k->m, parent, lanes, threads / lanes, HB_BRANCHED_STAGE_COST,
                                     HB_MULTI_SPLIT_ROWS, &split);
    if (status != HB_SUCCESS) {
        hb_hines_branched_free(&k->plan);
        return status;
    }
    if (split.n_items > 0 &&
        hb_branched_layout(k->m, split.couplings, lanes, split.words, 0).bytes <= small) {
        hb_hines_branched_free(&k->plan);
        k->plan = split;
    } else {
        hb_hines_branched_free(&split);
    }
    return HB_SUCCESS;
}

/* Lanes and plan of one class: the most lanes within `small`, else one lane within `large`
 * (one block a multiprocessor: chains split only when split_rows says so). */
static hb_status_t plan_class(hb_multi_shape_t *k, const int *parent, size_t small, size_t large,
                              int threads, int split_rows)
{
    static const int lanes_tried[] = {16, 8, 4, 2, 1};
    for (int q = 0; q < 5; ++q) {
        const int lanes = lanes_tried[q];
        if (hb_branched_layout(k->m, 0, lanes, 0, 0).bytes > small) continue; /* before planning */
        hb_status_t status = plan_lanes(k, parent, lanes, threads, split_rows, small);
        if (status != HB_SUCCESS) return status;
        k->bytes = hb_branched_layout(k->m, k->plan.couplings, lanes, k->plan.words, 0).bytes;
        if (k->bytes <= small) {
            k->lanes = lanes;
            k->tier = 0;
            return HB_SUCCESS;
        }
        hb_hines_branched_free(&k->plan);
    }
    hb_status_t status = hb_hines_branched_build(k->m, parent, 1, threads, HB_BRANCHED_STAGE_COST,
                                                 split_rows < 0 ? 0 : split_rows, &k->plan);
    if (status != HB_SUCCESS) return status;
    k->bytes = hb_branched_layout(k->m, k->plan.couplings, 1, k->plan.words, 0).bytes;
    k->lanes = 1;
    k->tier = 1;
    if (k->bytes > large) { /* the tables stay in memory */
        k->global_tables = 1;
        k->bytes = hb_branched_layout(k->m, k->plan.couplings, 1, 0, 0).bytes;
    }
    if (k->bytes > large) {
        hb_hines_branched_free(&k->plan);
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "hb_multi: shapes: a cell of %d rows takes %zu bytes of shared memory, "
                       "more than the %zu a block can have",
                       k->m, k->bytes, large);
    }
    return HB_SUCCESS;
}

hb_status_t hb_multi_plan_shapes(struct hb_multi *mb, size_t small_bytes, size_t large_bytes,
                                 int threads)
{
    if (mb->shapes_bytes) small_bytes = mb->shapes_bytes;
    if (small_bytes > large_bytes) small_bytes = large_bytes;
    hb_multi_shapes_t *s = mb->shapes;
    if (s && s->small_bytes == small_bytes && s->large_bytes == large_bytes &&
        s->threads == threads)
        return HB_SUCCESS;
    if (s) {
        hb_multi_shapes_free(s);
    } else if (!(s = mb->shapes = calloc(1, sizeof *s))) {
        return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory planning shapes");
    }
    const int n = mb->n_cells, classes = mb->n_shapes;
    hb_status_t status = HB_SUCCESS;
    int *rep = malloc((size_t)classes * sizeof *rep);     /* a member of each class */
    int *where = malloc((size_t)classes * sizeof *where); /* class id -> index in s->cls */
    int *next = calloc((size_t)n, sizeof *next);          /* next member number of each class */
    s->cls = calloc((size_t)classes, sizeof *s->cls);
    s->node_index = malloc(mb->n_rows * sizeof *s->node_index);
    if (!rep || !where || !next || !s->cls || !s->node_index) goto oom;
    s->n_classes = classes;
    for (int k = 0; k < classes; ++k) rep[k] = -1;
    for (int c = 0; c < n; ++c) {
        const int k = mb->shape[c];
        if (rep[k] < 0) {
            rep[k] = c;
            s->cls[k].m = mb->m[c];
            s->cls[k].team_first = k; /* first appearance, for the sort */
        }
        s->cls[k].cells++;
    }
    for (int k = 0; k < classes; ++k) {
        s->cls[k].table_off = (size_t)rep[k]; /* the representative, until sorted */
        if ((status = plan_class(&s->cls[k], mb->parent + mb->cell_first[rep[k]], small_bytes,
                                 large_bytes, threads, mb->shapes_split_rows)) != HB_SUCCESS)
            goto fail;
    }
    qsort(s->cls, (size_t)classes, sizeof *s->cls, by_tier_rows);
    size_t base = 0, words = 0;
    int teams[2] = {0, 0};
    for (int q = 0; q < classes; ++q) {
        hb_multi_shape_t *k = &s->cls[q];
        where[mb->shape[k->table_off]] = q;
        const int team_count = (k->cells + k->lanes - 1) / k->lanes;
        k->team_first = teams[k->tier];
        teams[k->tier] += team_count;
        s->tier_classes[k->tier]++;
        if (k->bytes > s->tier_bytes[k->tier]) s->tier_bytes[k->tier] = k->bytes;
        k->base = base;
        base += (size_t)team_count * (size_t)k->lanes * (size_t)k->m;
        k->table_off = words;
        words += (k->plan.words + 3) & ~(size_t)3; /* each class's tables on 16 bytes */
    }
    s->tier_teams[0] = teams[0];
    s->tier_teams[1] = teams[1];
    s->size = base;
    s->words = words;
    if (!(s->tables = calloc(words ? words : 1, sizeof *s->tables))) goto oom;
    for (int q = 0; q < classes; ++q)
        memcpy(s->tables + s->cls[q].table_off, s->cls[q].plan.tables,
               s->cls[q].plan.words * sizeof *s->tables);
    for (int c = 0; c < n; ++c) {
        const hb_multi_shape_t *k = &s->cls[where[mb->shape[c]]];
        const int j = next[mb->shape[c]]++;
        const size_t L = (size_t)k->lanes,
                     first = k->base + (size_t)(j / k->lanes) * L * (size_t)k->m + (size_t)(j % k->lanes);
        for (int i = 0; i < mb->m[c]; ++i) s->node_index[mb->cell_first[c] + (size_t)i] = first + (size_t)i * L;
    }
    s->small_bytes = small_bytes;
    s->large_bytes = large_bytes;
    s->threads = threads;
    goto done;
oom:
    status = hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory planning shapes for %d cells", n);
fail:
    hb_multi_shapes_free(s);
    free(s);
    mb->shapes = NULL;
done:
    free(rep);
    free(where);
    free(next);
    return status;
}
