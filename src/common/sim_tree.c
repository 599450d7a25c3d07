/* The plan of hb_sim_tree_t: children lists, chains and their levels, from each lane's parents. */
#include "common/sim_tree.h"

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
    free(plan->level_first);
    free(plan->level_bound);
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

hb_status_t hb_sim_tree_plan(const hb_step_group_t *g, hb_sim_tree_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    if (!g->mixed) return hb_fail(HB_ERR_INVALID_VALUE, "tree plan: the group is not mixed");
    const size_t w = (size_t)g->width, slots = (size_t)g->blocks * w;
    const size_t size = g->block_start[g->blocks];
    const size_t m_most = (size_t)(g->m > 0 ? g->m : 1);
    plan->size = size;
    plan->slots = slots;
    size_t rows = 0;
    for (size_t s = 0; s < slots; s++) rows += (size_t)g->lane_m[s];
    /* scratch a lane: kids, of, height, top, end, count (chains <= rows) */
    int *scratch = malloc(6 * (m_most + 2) * sizeof *scratch);
    plan->child_start = calloc(size ? size : 1, sizeof *plan->child_start);
    plan->child = calloc(size ? size : 1, sizeof *plan->child);
    plan->shape = calloc(size ? size : 1, 1);
    plan->chain_first = calloc(slots + 1, sizeof *plan->chain_first);
    plan->chain_top = malloc((rows ? rows : 1) * sizeof *plan->chain_top);
    plan->chain_end = malloc((rows ? rows : 1) * sizeof *plan->chain_end);
    plan->level_first = calloc(slots + 1, sizeof *plan->level_first);
    plan->level_bound = malloc((rows + slots + 1) * sizeof *plan->level_bound);
    if (!scratch || !plan->child_start || !plan->child || !plan->shape || !plan->chain_first ||
        !plan->chain_top || !plan->chain_end || !plan->level_first || !plan->level_bound) {
        free(scratch);
        hb_sim_tree_free(plan);
        return hb_fail(HB_ERR_ALLOC, "tree plan: out of memory for %zu elements", size);
    }
    int *kids = scratch, *of = kids + m_most + 2, *height = of + m_most + 2;
    int *top = height + m_most + 2, *end = top + m_most + 2, *count = end + m_most + 2;
    size_t nc = 0, nb = 0;
    int most = 0;
    for (size_t s = 0; s < slots; s++) {
        plan->chain_first[s] = (int)nc;
        plan->level_first[s] = (int)nb;
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
        for (int i = 0; i < m; i++) {
            unsigned char shape = kids[i] == 0 ? HB_TREE_LEAF : 0;
            if (kids[i] == 1 && i + 1 < m && AT(g->parent, i + 1) == i) shape |= HB_TREE_NEXT;
            if (i > 0 && AT(g->parent, i) == i - 1) shape |= HB_TREE_PREV;
            if (g->fixed_row && g->fixed_r && AT(g->fixed_row, i)) shape |= HB_TREE_FIXED;
            AT(plan->shape, i) |= shape;
        }
        /* chains, their heights (a chain's parent chain precedes it) */
        const int n = find_chains(g->parent, base, w, m, kids, top, end, of);
        for (int k = 0; k < n; k++) height[k] = 0;
        for (int k = n - 1; k > 0; k--) {
            const int p = of[AT(g->parent, top[k])];
            if (height[k] + 1 > height[p]) height[p] = height[k] + 1;
        }
        const int levels = height[0] + 1;
        most = levels > most ? levels : most;
        /* chains by height, then top (counting sort) */
        memset(count, 0, (size_t)(levels + 1) * sizeof *count);
        for (int k = 0; k < n; k++) count[height[k] + 1]++;
        for (int L = 0; L < levels; L++) count[L + 1] += count[L];
        for (int L = 0; L <= levels; L++) plan->level_bound[nb + (size_t)L] = count[L];
        for (int k = 0; k < n; k++) {
            const size_t at = nc + (size_t)count[height[k]]++;
            plan->chain_top[at] = top[k];
            plan->chain_end[at] = end[k];
        }
#undef AT
        nc += (size_t)n;
        nb += (size_t)levels + 1;
    }
    plan->chain_first[slots] = (int)nc;
    plan->level_first[slots] = (int)nb;
    plan->chains = nc;
    plan->bounds = nb;
    free(scratch);
    if (nb > (size_t)0x7fffffff || nc > (size_t)0x7fffffff) {
        hb_sim_tree_free(plan);
        return hb_fail(HB_ERR_NOT_SUPPORTED, "tree plan: %zu chains; expected fewer than 2^31", nc);
    }
    plan->k.child_start = plan->child_start;
    plan->k.child = plan->child;
    plan->k.shape = plan->shape;
    plan->k.chain_first = plan->chain_first;
    plan->k.chain_top = plan->chain_top;
    plan->k.chain_end = plan->chain_end;
    plan->k.level_first = plan->level_first;
    plan->k.level_bound = plan->level_bound;
    plan->k.most_levels = most;
    return HB_SUCCESS;
}
