/* The plan of hb_sim_tree_t: children lists, shapes, chains and their rounds, from each lane's
 * parents. */
#include "common/sim_tree.h"
#include "common/cat_step.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void hb_sim_tree_free(hb_sim_tree_plan_t *plan)
{
    free(plan->child_start);
    free(plan->child);
    free(plan->shape);
    free(plan->chain_first);
    free(plan->chain_top);
    free(plan->chain_end);
    free(plan->round_first);
    free(plan->round_bound);
    free(plan->input_first);
    free(plan->input_row);
    free(plan->cbase);
    memset(plan, 0, sizeof *plan);
}

/* The chains of one lane (rows `m`, parents at AT(parent, i)): top and end of each in row
 * order into top/end (returns their count), each row's chain in of[]. */
static int find_chains(const int *parent, size_t base, size_t w, int m, const int *kids,
                       int *top, int *end, int *of)
{
    int n = 0;
    for (int i = 0; i < m; i++) {
        const int joins = i > 0 && parent[base + (size_t)i * w] == i - 1 && kids[i - 1] == 1;
        if (!joins) top[n++] = i;
        end[n - 1] = i;
        of[i] = n - 1;
    }
    return n;
}

/* A ready chain goes before another: more rows from its top to the root (`path`), then the
 * lower index. */
static int before(const int *path, int a, int b)
{
    return path[a] > path[b] || (path[a] == path[b] && a < b);
}

/* Binary heap of ready chains, the first by `before` at heap[0]. */
static void heap_push(int *heap, int *size, const int *path, int k)
{
    int i = (*size)++;
    while (i > 0 && before(path, k, heap[(i - 1) / 2])) {
        heap[i] = heap[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    heap[i] = k;
}

static int heap_pop(int *heap, int *size, const int *path)
{
    const int top = heap[0], last = heap[--*size];
    int i = 0;
    for (;;) {
        int c = 2 * i + 1;
        if (c >= *size) break;
        if (c + 1 < *size && before(path, heap[c + 1], heap[c])) c++;
        if (!before(path, heap[c], last)) break;
        heap[i] = heap[c];
        i = c;
    }
    if (*size > 0) heap[i] = last;
    return top;
}

/*
 * The rounds of one lane's n chains (parent chain par[k], rows to the root path[k]; a chain's
 * parent precedes it): list scheduling, each round up to HB_TREE_ROUND chains whose child
 * chains are all in earlier rounds, those with the longest path to the root first (the
 * critical path). Chains in round order into order[], round r's at bound[r] .. bound[r + 1] - 1;
 * returns the rounds. Scratch: pending, heap (n each).
 */
static int schedule_rounds(int n, int width, const int *par, const int *path, int *pending,
                           int *heap, int *order, int *bound)
{
    int size = 0, placed = 0, rounds = 0;
    for (int k = 0; k < n; k++) pending[k] = 0;
    for (int k = 1; k < n; k++) pending[par[k]]++;
    for (int k = 0; k < n; k++)
        if (pending[k] == 0) heap_push(heap, &size, path, k);
    while (placed < n) {
        bound[rounds++] = placed;
        const int first = placed;
        while (size > 0 && placed - first < width)
            order[placed++] = heap_pop(heap, &size, path);
        for (int q = first; q < placed; q++) /* parents ready from the next round */
            if (order[q] > 0 && --pending[par[order[q]]] == 0)
                heap_push(heap, &size, path, par[order[q]]);
    }
    bound[rounds] = n;
    return rounds;
}

hb_status_t hb_sim_tree_plan(const hb_step_group_t *g, int tile, hb_sim_tree_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    if (!g->mixed) return hb_fail(HB_ERR_INVALID_VALUE, "tree plan: the group is not mixed");
    if (tile != 8 && tile != 16 && tile != 32)
        return hb_fail(HB_ERR_INVALID_VALUE, "tree plan: tile %d; expected 8, 16 or 32", tile);
    plan->k.tile = tile;
    const size_t w = (size_t)g->width, slots = (size_t)g->blocks * w;
    const size_t size = g->block_start[g->blocks];
    const size_t m_most = (size_t)(g->m > 0 ? g->m : 1);
    plan->size = size;
    plan->slots = slots;
    size_t rows = 0;
    for (size_t s = 0; s < slots; s++) rows += (size_t)g->lane_m[s];
    /* scratch a lane: kids, of, top, end, par, path, order, count (chains <= rows) */
    int *scratch = malloc(8 * (m_most + 2) * sizeof *scratch);
    plan->child_start = calloc(size ? size : 1, sizeof *plan->child_start);
    plan->child = calloc(size ? size : 1, sizeof *plan->child);
    plan->shape = calloc(size ? size : 1, 1);
    plan->chain_first = calloc(slots + 1, sizeof *plan->chain_first);
    plan->chain_top = malloc((rows ? rows : 1) * sizeof *plan->chain_top);
    plan->chain_end = malloc((rows ? rows : 1) * sizeof *plan->chain_end);
    plan->round_first = calloc(slots + 1, sizeof *plan->round_first);
    plan->round_bound = malloc((rows + slots + 1) * sizeof *plan->round_bound);
    plan->input_first = calloc(slots + 1, sizeof *plan->input_first);
    plan->input_row = malloc((rows ? rows : 1) * sizeof *plan->input_row);
    if (!scratch || !plan->child_start || !plan->child || !plan->shape || !plan->chain_first ||
        !plan->chain_top || !plan->chain_end || !plan->round_first || !plan->round_bound ||
        !plan->input_first || !plan->input_row) {
        free(scratch);
        hb_sim_tree_free(plan);
        return hb_fail(HB_ERR_ALLOC, "tree plan: out of memory for %zu elements", size);
    }
    int *kids = scratch, *of = kids + m_most + 2, *top = of + m_most + 2;
    int *end = top + m_most + 2, *par = end + m_most + 2, *path = par + m_most + 2;
    int *order = path + m_most + 2, *count = order + m_most + 2;
    size_t nc = 0, nb = 0, ni = 0;
    for (size_t s = 0; s < slots; s++) {
        plan->chain_first[s] = (int)nc;
        plan->round_first[s] = (int)nb;
        plan->input_first[s] = (int)ni;
        const size_t base = g->block_start[s / w] + s % w;
        const int m = g->lane_m[s];
        if (m < 1) continue; /* a padding lane */
#define AT(a, i) (a)[base + (size_t)(i) * w]
        /* children, ascending (counting sort by parent) */
        memset(count, 0, (size_t)(m + 1) * sizeof *count);
        for (int i = 1; i < m; i++) count[AT(g->parent, i) + 1]++;
        for (int i = 0; i < m; i++) kids[i] = count[i + 1];
        for (int i = 0; i < m; i++) count[i + 1] += count[i];
        for (int i = 0; i < m; i++) AT(plan->child_start, i) = count[i];
        for (int i = 1; i < m; i++) AT(plan->child, count[AT(g->parent, i)]++) = i;
        /* shapes: inputs (hh instances, IClamp sites, synapses), neighbours */
        for (int j = 0; j < g->lane_hh[s]; j++) {
            const size_t inst = g->hh_start[s / w] + (size_t)j;
            AT(plan->shape, g->hh_node[inst * w + s % w]) |= HB_TREE_INPUT;
        }
        for (int q = g->site_start[s]; q < g->site_start[s + 1]; q++)
            AT(plan->shape, g->sites[q].node) |= HB_TREE_INPUT;
        if (g->syn_start)
            for (int q = g->syn_start[s]; q < g->syn_start[s + 1]; q++)
                AT(plan->shape, g->syns[q].node) |= HB_TREE_INPUT;
        for (int q = 0; g->cat && q < g->cat->n_mech; q++) { /* catalogue instances' rows */
            const hb_step_cat_mech_t *cm = &g->cat->mech[q];
            const size_t i0 = cm->inst_start[s / w];
            for (int j = 0; j < cm->lane_inst[s]; j++)
                AT(plan->shape, cm->node[(i0 + (size_t)j) * w + s % w]) |= HB_TREE_INPUT;
        }
        for (int i = 0; i < m; i++) {
            unsigned char shape = kids[i] == 0 ? HB_TREE_LEAF : 0;
            if (kids[i] == 1 && i + 1 < m && AT(g->parent, i + 1) == i) shape |= HB_TREE_NEXT;
            if (i > 0 && AT(g->parent, i) == i - 1) shape |= HB_TREE_PREV;
            if (g->fixed_row && g->fixed_r && AT(g->fixed_row, i)) shape |= HB_TREE_FIXED;
            AT(plan->shape, i) |= shape;
            if (AT(plan->shape, i) & HB_TREE_INPUT) plan->input_row[ni++] = i;
        }
        /* chains, their parents (a chain's parent precedes it), rows to the root, rounds
         * (kids and of reused as scratch) */
        const int n = find_chains(g->parent, base, w, m, kids, top, end, of);
        par[0] = -1;
        path[0] = end[0] + 1;
        for (int k = 1; k < n; k++) {
            par[k] = of[AT(g->parent, top[k])];
            path[k] = path[par[k]] + end[k] - top[k] + 1;
        }
        const int rounds = schedule_rounds(n, tile, par, path, kids, of, order,
                                            plan->round_bound + nb);
        for (int q = 0; q < n; q++) {
            plan->chain_top[nc + (size_t)q] = top[order[q]];
            plan->chain_end[nc + (size_t)q] = end[order[q]];
        }
#undef AT
        nc += (size_t)n;
        nb += (size_t)rounds + 1;
    }
    plan->chain_first[slots] = (int)nc;
    plan->round_first[slots] = (int)nb;
    plan->input_first[slots] = (int)ni;
    plan->inputs = ni;
    plan->chains = nc;
    plan->bounds = nb;
    free(scratch);
    if (nb > (size_t)0x7fffffff || nc > (size_t)0x7fffffff || ni > (size_t)0x7fffffff) {
        hb_sim_tree_free(plan);
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "tree plan: %zu chains, %zu bounds, %zu input rows; expected each fewer "
                       "than 2^31", nc, nb, ni);
    }
    plan->k.child_start = plan->child_start;
    plan->k.child = plan->child;
    plan->k.shape = plan->shape;
    plan->k.chain_first = plan->chain_first;
    plan->k.chain_top = plan->chain_top;
    plan->k.chain_end = plan->chain_end;
    plan->k.round_first = plan->round_first;
    plan->k.round_bound = plan->round_bound;
    plan->k.input_first = plan->input_first;
    plan->k.input_row = plan->input_row;
    return HB_SUCCESS;
}

/* The per-element arrays a slot's rows are read from by cbase (hb_sim_tree_t.cbase). */
typedef struct {
    const void *a;
    size_t size; /* bytes an element */
} share_array_t;

static int share_arrays(const hb_step_group_t *g, const hb_sim_tree_plan_t *plan,
                        share_array_t *out)
{
    int n = 0;
    out[n++] = (share_array_t){g->parent, sizeof *g->parent};
    out[n++] = (share_array_t){plan->child_start, sizeof *plan->child_start};
    out[n++] = (share_array_t){plan->child, sizeof *plan->child};
    out[n++] = (share_array_t){plan->shape, 1};
    if (g->row_index) {
        out[n++] = (share_array_t){g->row_index, 1};
    } else {
        out[n++] = (share_array_t){g->u, sizeof *g->u};
        out[n++] = (share_array_t){g->l, sizeof *g->l};
        out[n++] = (share_array_t){g->cfac, sizeof *g->cfac};
        out[n++] = (share_array_t){g->pas_g, sizeof *g->pas_g};
        out[n++] = (share_array_t){g->pas_e, sizeof *g->pas_e};
    }
    if (g->fixed_r) out[n++] = (share_array_t){g->fixed_r, sizeof *g->fixed_r};
    return n;
}

/* Element e of a shared array as bits (1, 4 or 8 bytes). */
static uint64_t share_bits(const share_array_t *a, size_t e)
{
    const unsigned char *p = (const unsigned char *)a->a + e * a->size;
    if (a->size == 1) return *p;
    if (a->size == 4) {
        uint32_t x;
        memcpy(&x, p, 4);
        return x;
    }
    uint64_t x;
    memcpy(&x, p, 8);
    return x;
}

/* A hash of a slot's rows of every shared array, a word an element. */
static uint64_t share_hash(const share_array_t *arrays, int n, size_t base, size_t w, int m)
{
    uint64_t h = 1469598103934665603ULL;
    for (int a = 0; a < n; a++)
        for (int i = 0; i < m; i++) {
            h = (h ^ share_bits(&arrays[a], base + (size_t)i * w)) * 0x9E3779B97F4A7C15ULL;
            h ^= h >> 29;
        }
    return h;
}

static int share_same(const share_array_t *arrays, int n, size_t x, size_t y, size_t w, int m)
{
    for (int a = 0; a < n; a++) {
        const size_t z = arrays[a].size;
        const unsigned char *p = (const unsigned char *)arrays[a].a;
        if (w == 1) { /* contiguous rows (the GPU's): one comparison */
            if (memcmp(p + x * z, p + y * z, (size_t)m * z)) return 0;
            continue;
        }
        for (int i = 0; i < m; i++)
            if (share_bits(&arrays[a], x + (size_t)i * w) != share_bits(&arrays[a], y + (size_t)i * w))
                return 0;
    }
    return 1;
}

hb_status_t hb_sim_tree_share(const hb_step_group_t *g, hb_sim_tree_plan_t *plan,
                              size_t *templates)
{
    const size_t w = (size_t)g->width, slots = plan->slots;
    free(plan->cbase);
    plan->k.cbase = NULL;
    plan->cbase = malloc((slots ? slots : 1) * sizeof *plan->cbase);
    size_t size = 64;
    while (size < 2 * slots) size *= 2;
    size_t *table = malloc(size * sizeof *table); /* open addressing: a slot + 1, or 0 */
    uint64_t *hash = malloc((slots ? slots : 1) * sizeof *hash);
    if (!plan->cbase || !table || !hash) {
        free(table);
        free(hash);
        return hb_fail(HB_ERR_ALLOC, "tree plan: out of memory for %zu slots", slots);
    }
    memset(table, 0, size * sizeof *table);
    share_array_t arrays[12];
    const int n = share_arrays(g, plan, arrays);
    size_t own = 0;
    for (size_t s = 0; s < slots; s++) {
        const size_t base = g->block_start[s / w] + s % w;
        const int m = g->lane_m[s];
        plan->cbase[s] = base;
        if (m < 1) continue; /* a padding lane */
        if (!g->shape_class || g->shape_class[s] < 0) { /* a shape of its own: no copy */
            own++;
            continue;
        }
        hash[s] = share_hash(arrays, n, base, w, m);
        size_t h = (size_t)(hash[s] ^ hash[s] >> 31) & (size - 1);
        for (; table[h]; h = (h + 1) & (size - 1)) {
            const size_t t = table[h] - 1;
            const size_t tbase = g->block_start[t / w] + t % w;
            if (hash[t] == hash[s] && g->lane_m[t] == m && share_same(arrays, n, base, tbase, w, m)) {
                plan->cbase[s] = tbase;
                break;
            }
        }
        if (!table[h]) { /* its own */
            table[h] = s + 1;
            own++;
        }
    }
    free(table);
    free(hash);
    if (templates) *templates = own;
    plan->k.cbase = plan->cbase;
    return HB_SUCCESS;
}
