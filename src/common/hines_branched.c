#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/hines_branched.h"
#include "common/layout.h"
#include "common/status.h"

/* Root of x's set, with path halving. */
static int dsu_find(int *up, int x)
{
    while (up[x] != x) {
        up[x] = up[up[x]];
        x = up[x];
    }
    return x;
}

typedef struct {
    int id;    /* first-come number within the plan */
    int stage;
    int cost;  /* half-rows: 2 a row, 1 a gather */
} task_key_t;

/* Stage by stage, longest first within one; equal ones in first-come order (a deterministic
 * plan). */
static int by_stage_cost(const void *a, const void *b)
{
    const task_key_t *x = a, *y = b;
    if (x->stage != y->stage) return x->stage < y->stage ? -1 : 1;
    if (x->cost != y->cost) return x->cost > y->cost ? -1 : 1;
    return (x->id > y->id) - (x->id < y->id);
}

/*
 * The stages: the ranges of heights [h1, h2] that minimise the sum over stages of
 * stage_cost + max(largest task, total / workers) (half-rows), by dynamic programming over
 * the last range; a range's tasks grow by union-find as h2 rises. first_height[s] is stage
 * s's h1; returns the number of stages, or -1 when out of memory.
 */
static int plan_stages(int m, const int *height, const int *child_start,
                       const int *child, int workers, int stage_cost, int *first_height)
{
    const int H = height[0] + 1;
    int *by_height = malloc((size_t)m * sizeof *by_height);
    int *height_start = calloc((size_t)H + 1, sizeof *height_start);
    int *up = malloc((size_t)m * sizeof *up), *cost = malloc((size_t)m * sizeof *cost);
    long *best = malloc(((size_t)H + 1) * sizeof *best);
    int *cut = malloc(((size_t)H + 1) * sizeof *cut);
    int stages = -1;
    if (!by_height || !height_start || !up || !cost || !best || !cut) goto done;
    for (int i = 0; i < m; ++i) height_start[height[i] + 1]++;
    for (int h = 0; h < H; ++h) height_start[h + 1] += height_start[h];
    { /* nodes of each height in descending order: children before their parent */
        int *fill = cut; /* borrowed: H + 1 entries */
        memcpy(fill, height_start, ((size_t)H + 1) * sizeof *fill);
        for (int i = m - 1; i >= 0; --i) by_height[fill[height[i]]++] = i;
    }
    best[0] = 0;
    for (int h = 1; h <= H; ++h) best[h] = LONG_MAX;
    for (int h1 = 0; h1 < H; ++h1) {
        long total = 0, largest = 0;
        for (int h2 = h1; h2 < H; ++h2) {
            for (int q = height_start[h2]; q < height_start[h2 + 1]; ++q) {
                const int i = by_height[q];
                up[i] = i;
                cost[i] = 2;
                for (int c = child_start[i]; c < child_start[i + 1]; ++c)
                    if (height[child[c]] < h1) cost[i]++; /* a gather */
                total += cost[i];
                for (int c = child_start[i]; c < child_start[i + 1]; ++c) {
                    if (height[child[c]] < h1) continue;
                    const int ri = dsu_find(up, i), rc = dsu_find(up, child[c]);
                    if (ri != rc) {
                        up[rc] = ri;
                        cost[ri] += cost[rc];
                    }
                }
                const int r = dsu_find(up, i);
                if (cost[r] > largest) largest = cost[r];
            }
            const long share = (total + workers - 1) / workers;
            const long candidate = best[h1] + stage_cost + (largest > share ? largest : share);
            if (candidate < best[h2 + 1]) {
                best[h2 + 1] = candidate;
                cut[h2 + 1] = h1;
            }
        }
    }
    stages = 0;
    for (int h = H; h > 0; h = cut[h]) stages++;
    int s = stages;
    for (int h = H; h > 0; h = cut[h]) first_height[--s] = cut[h];
done:
    free(by_height);
    free(height_start);
    free(up);
    free(cost);
    free(best);
    free(cut);
    return stages;
}

int hb_branched_chunk_rows(int n)
{
    const int k = (int)(sqrt(0.5 * n) + 0.5);
    return k < 2 ? 2 : k;
}

/* A separator of a split chain while planning, chain by chain, top first: the chunk below it
 * has `below` rows (0: the next separator is its child, or it is the chain's lowest). */
typedef struct {
    int node, below, stage;
} sep_t;

/*
 * The chains to split: maximal runs top .. bot of one stage where each node's parent is the
 * node before it (parent[i] = i - 1), of at least split_rows rows, in a task that costs more
 * than its stage's share per worker (rows[t], gathers[t]: its rows and gathers). Separators:
 * from the top down, a chunk of up to k rows (k = hb_branched_chunk_rows) that have one child
 * each, then the separator under it; a node with other children (gathered or in the task)
 * stays with the task, and the chain goes on below it. Marks the chunks' rows in `interior`,
 * gives separators with a chunk above their coupling node (m + 2 ..) in `coupling`, then takes
 * the chunks' rows out of rows[]. Returns the number of separators (in *seps_out), or -1 when
 * out of memory.
 */
static int find_chains(int m, const int *parent, const int *child_start, const int *stage_of,
                       const int *task_of, int n_stages, int workers, int split_rows, int *rows,
                       const int *gathers, int *interior, int *coupling, sep_t **seps_out)
{
    sep_t *seps = NULL;
    long *total = calloc((size_t)n_stages, sizeof *total);
    int n = 0, capacity = 0, couplings = 0;
    if (!total) return -1;
    for (int i = 0; i < m; ++i) total[stage_of[i]] += 2; /* rows, then gathers by task */
    for (int i = 1; i < m; ++i)
        if (stage_of[parent[i]] != stage_of[i]) total[stage_of[parent[i]]]++;
    for (int top = 0; top < m;) {
        int bot = top;
        while (bot + 1 < m && parent[bot + 1] == bot && stage_of[bot + 1] == stage_of[bot]) ++bot;
        const int length = bot - top + 1, task = task_of[top], s = stage_of[top];
        const long cost = 2L * rows[task] + gathers[task];
        const long share = (total[s] + workers - 1) / workers;
        if (split_rows > 0 && length >= split_rows && cost > share) {
            const int k = hb_branched_chunk_rows(length), first = n; /* this chain's records */
            for (int sep = top; sep < bot;) {
                int r = sep + 1; /* a chunk's rows: one child, the next row; k at most */
                while (r < bot && r <= sep + k && child_start[r] + 1 == child_start[r + 1]) ++r;
                if (r == sep + 1) { /* none: the chain goes on from r */
                    sep = r;
                    continue;
                }
                if (n + 2 > capacity) {
                    capacity = capacity ? 2 * capacity : 64;
                    sep_t *grown = realloc(seps, (size_t)capacity * sizeof *seps);
                    if (!grown) {
                        free(seps);
                        free(total);
                        return -1;
                    }
                    seps = grown;
                }
                if (n == first || seps[n - 1].node != sep) seps[n++] = (sep_t){sep, 0, s};
                seps[n - 1].below = r - sep - 1;
                seps[n++] = (sep_t){r, 0, s};
                for (int i = sep + 1; i < r; ++i) interior[i] = 1;
                coupling[r] = m + 2 + couplings++;
                sep = r;
            }
        }
        top = bot + 1;
    }
    for (int q = 0; q < n; ++q) rows[task_of[seps[q].node]] -= seps[q].below;
    free(total);
    *seps_out = seps;
    return n;
}

hb_status_t hb_hines_branched_build(int m, const int *parent, int lanes, int workers,
                                    int stage_cost, int split_rows, hb_hines_branched_t *br)
{
    memset(br, 0, sizeof *br);
    if (lanes < 1 || lanes > 32)
        return hb_fail(HB_ERR_INVALID_VALUE, "BRANCHED: %d lanes; expected 1 to 32", lanes);
    if (workers < 1 || stage_cost < 0)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "BRANCHED: %d workers, stage cost %d; expected at least 1 and 0", workers,
                       stage_cost);
    if (split_rows != 0 && split_rows < HB_BRANCHED_MIN_SPLIT_ROWS)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "BRANCHED: chains split from %d rows; expected 0 (none) or at least %d",
                       split_rows, HB_BRANCHED_MIN_SPLIT_ROWS);
    /* nodes (sink, zero, couplings) up to 2 m + 1, as node << 2; pairs 2 nodes L */
    if (m < 1 || (2 * (long)m + 2) * lanes > (INT_MAX >> 2))
        return hb_fail(HB_ERR_INVALID_VALUE, "BRANCHED: %d rows in teams of %d; expected 1 to %d",
                       m, lanes, ((INT_MAX >> 2) / lanes - 2) / 2);
    hb_status_t status = HB_ERR_ALLOC;
    int *height = malloc((size_t)m * sizeof *height), *kids = calloc((size_t)m, sizeof *kids);
    int *top = calloc((size_t)m, sizeof *top); /* highest child height */
    int *child_start = calloc((size_t)m + 1, sizeof *child_start);
    int *child = malloc((size_t)m * sizeof *child);
    int *first_height = malloc((size_t)m * sizeof *first_height);
    int *stage_of = malloc((size_t)m * sizeof *stage_of), *task_of = malloc((size_t)m * sizeof *task_of);
    int *interior = calloc((size_t)m, sizeof *interior); /* a chunk's row */
    int *coupling = calloc((size_t)m, sizeof *coupling); /* a separator's coupling node, or 0 */
    int *rank = NULL, *count = NULL, *fill = NULL, *item_fill = NULL;
    task_key_t *keys = NULL;
    sep_t *seps = NULL;
    if (!height || !kids || !top || !child_start || !child || !first_height || !stage_of ||
        !task_of || !interior || !coupling)
        goto done;
    for (int i = m - 1; i >= 0; --i) { /* children (larger indices) first */
        height[i] = kids[i] == 0 ? 0 : kids[i] == 1 ? top[i] : top[i] + 1;
        if (i > 0) {
            const int p = parent[i];
            kids[p]++;
            if (height[i] > top[p]) top[p] = height[i];
            child_start[p + 1]++;
        }
    }
    for (int i = 0; i < m; ++i) child_start[i + 1] += child_start[i];
    memcpy(kids, child_start, (size_t)m * sizeof *kids); /* kids: fill positions now */
    for (int i = 1; i < m; ++i) child[kids[parent[i]]++] = i;

    int S = plan_stages(m, height, child_start, child, workers, stage_cost, first_height);
    if (S < 0) goto done;
    { /* height -> stage */
        int s = 0;
        for (int h = 0; h <= height[0]; ++h) {
            while (s + 1 < S && first_height[s + 1] <= h) ++s;
            top[h] = s; /* top: reused as the height -> stage map */
        }
        for (int i = 0; i < m; ++i) stage_of[i] = top[height[i]];
    }
    /* Tasks: a node whose parent lies in a later stage (or the root) starts one. */
    int T = 0;
    for (int i = 0; i < m; ++i)
        task_of[i] = i == 0 || stage_of[parent[i]] != stage_of[i] ? T++ : task_of[parent[i]];
    keys = calloc((size_t)T, sizeof *keys);
    rank = malloc((size_t)T * sizeof *rank);
    count = calloc((size_t)T + 1, sizeof *count); /* rows of task id t at t + 1, then op offsets */
    fill = calloc((size_t)T + 1, sizeof *fill);   /* its gathers likewise */
    if (!keys || !rank || !count || !fill) goto done;
    int G = 0;
    for (int i = 0; i < m; ++i) {
        const int task = task_of[i];
        keys[task].stage = stage_of[i];
        count[task + 1]++;
        for (int c = child_start[i]; c < child_start[i + 1]; ++c)
            if (stage_of[child[c]] != stage_of[i]) {
                fill[task + 1]++;
                G++;
            }
    }
    const int I = find_chains(m, parent, child_start, stage_of, task_of, S, workers, split_rows,
                              count + 1, fill + 1, interior, coupling, &seps);
    if (I < 0) goto done;
    int V = 0, shift = 0;
    for (int q = 0; q < I; ++q) {
        V += seps[q].below > 0;
        if (seps[q].stage == 0) shift = 1; /* its items need a stage before it */
    }
    if (shift) {
        S++;
        for (int t = 0; t < T; ++t) keys[t].stage++;
        for (int i = 0; i < m; ++i) stage_of[i]++;
        for (int q = 0; q < I; ++q) seps[q].stage++;
    }
    for (int t = 0; t < T; ++t) {
        keys[t].id = t;
        keys[t].cost = 2 * count[t + 1] + fill[t + 1];
    }
    qsort(keys, (size_t)T, sizeof *keys, by_stage_cost);
    for (int q = 0; q < T; ++q) rank[keys[q].id] = q;
    br->words = HB_BRANCHED_HEADER + 2 * (size_t)m + 2 * (size_t)G +
                I * (sizeof(hb_branched_item_t) / sizeof(int)) + 2 * ((size_t)S + 1) +
                2 * ((size_t)T + 1);
    br->tables = malloc(br->words * sizeof *br->tables);
    item_fill = calloc((size_t)S + 1, sizeof *item_fill);
    if (!br->tables || !item_fill) goto done;
    br->tables[0] = S;
    br->tables[1] = T;
    br->tables[2] = G;
    br->tables[3] = I;
    hb_branched_tables_t t = hb_branched_tables_at(m, br->tables);
    int *stage_task = (int *)t.stage_task, *stage_item = (int *)t.stage_item;
    int *task_op = (int *)t.task_op, *task_gather = (int *)t.task_gather;
    memset(stage_task, 0, ((size_t)S + 1) * sizeof *stage_task);
    memset(stage_item, 0, ((size_t)S + 1) * sizeof *stage_item);
    for (int q = 0; q < T; ++q) stage_task[keys[q].stage + 1]++;
    for (int q = 0; q < I; ++q) stage_item[seps[q].stage]++; /* at stage - 1 (offsets + 1) */
    for (int s = 0; s < S; ++s) {
        stage_task[s + 1] += stage_task[s];
        stage_item[s + 1] += stage_item[s];
    }
    /* offsets in rank order: task keys[r].id's rows and gathers come r-th */
    task_op[0] = task_gather[0] = 0;
    for (int r = 0; r < T; ++r) {
        task_op[r + 1] = task_op[r] + count[keys[r].id + 1];
        task_gather[r + 1] = task_gather[r] + fill[keys[r].id + 1];
    }
    memcpy(count, task_op, ((size_t)T + 1) * sizeof *count); /* fill positions now */
    memcpy(fill, task_gather, ((size_t)T + 1) * sizeof *fill);
    hb_branched_op_t *ops = (hb_branched_op_t *)t.ops;
    hb_branched_gather_t *gathers = (hb_branched_gather_t *)t.gathers;
    hb_branched_item_t *items = (hb_branched_item_t *)t.items;
    for (int i = m - 1; i >= 0; --i) { /* descending: children first within a task */
        if (interior[i]) continue;
        const int r = rank[task_of[i]];
        hb_branched_op_t op = {i, ((m + 1) << 2) | HB_BRANCHED_ROOT}; /* the zero node */
        if (coupling[i]) {
            op.parent = (coupling[i] << 2) | HB_BRANCHED_CARRIED; /* into the next separator */
        } else if (i > 0) {
            const int p = parent[i];
            const int kind = stage_of[p] == stage_of[i] ? HB_BRANCHED_IN_TASK : HB_BRANCHED_LATER;
            op.parent = (p << 2) | kind;
        }
        ops[count[r]++] = op;
        for (int c = child_start[i]; c < child_start[i + 1]; ++c)
            if (stage_of[child[c]] != stage_of[i])
                gathers[fill[r]++] = (hb_branched_gather_t){i, child[c]};
    }
    /* Carried: the parent is the task's next op. */
    for (int r = 0; r < T; ++r)
        for (int j = task_op[r]; j + 1 < task_op[r + 1]; ++j)
            if ((ops[j].parent & 3) == HB_BRANCHED_IN_TASK && (ops[j].parent >> 2) == ops[j + 1].row)
                ops[j].parent |= HB_BRANCHED_CARRIED;
    /* Chunks after the tasks' rows, bottom row first; an item per separator, by stage. */
    memcpy(item_fill, stage_item, ((size_t)S + 1) * sizeof *item_fill);
    int at = task_op[T];
    for (int q = 0; q < I; ++q) {
        const sep_t *sep = &seps[q], *up = q > 0 ? &seps[q - 1] : NULL;
        hb_branched_item_t it = {sep->node, m, sep->node, m, 0, 0, 0, 0};
        if (sep->below) {
            it.below = sep->node + sep->below + 1;
            it.below_coupling = coupling[it.below];
            it.below_first = at;
            it.below_end = at + sep->below;
            for (int i = it.below - 1; i > sep->node; --i) /* bottom row first */
                ops[at++] = (hb_branched_op_t){i, ((i - 1) << 2) | HB_BRANCHED_CARRIED};
        }
        if (up && up->below && up->node + up->below + 1 == sep->node) { /* the chunk above */
            it.sep_coupling = coupling[sep->node];
            it.above_first = at - sep->below - up->below;
            it.above_end = it.above_first + up->below;
        }
        items[item_fill[sep->stage - 1]++] = it;
    }
    br->m = m;
    br->lanes = lanes;
    br->workers = workers;
    br->n_stages = S;
    br->n_tasks = T;
    br->n_gathers = G;
    br->n_items = I;
    br->couplings = V;
    br->cost = 0;
    for (int st = 0; st < S; ++st) {
        long total = 0, largest = 0;
        for (int q = stage_task[st]; q < stage_task[st + 1]; ++q) {
            const long c = 2L * (task_op[q + 1] - task_op[q]) + task_gather[q + 1] - task_gather[q];
            total += c;
            if (c > largest) largest = c;
        }
        for (int q = stage_item[st]; q < stage_item[st + 1]; ++q) {
            const long c = 2L * (items[q].below_end - items[q].below_first + items[q].above_end -
                                 items[q].above_first);
            total += c;
            if (c > largest) largest = c;
        }
        const long share = (total + workers - 1) / workers;
        br->cost += stage_cost + (largest > share ? largest : share);
    }
    status = HB_SUCCESS; /* at == m: the tests check the tables */
done:
    free(height);
    free(kids);
    free(top);
    free(child_start);
    free(child);
    free(first_height);
    free(stage_of);
    free(task_of);
    free(interior);
    free(coupling);
    free(keys);
    free(rank);
    free(count);
    free(fill);
    free(item_fill);
    free(seps);
    if (status != HB_SUCCESS) {
        free(br->tables);
        memset(br, 0, sizeof *br);
        return hb_fail(status, "BRANCHED: out of memory planning %d rows", m);
    }
    return status;
}

int hb_branched_latency_bound(const hb_hines_branched_t *br, int per_sm)
{
    const double on_chip = (double)per_sm * br->lanes * br->m;
    return br->cost >= HB_BRANCHED_SPLIT_LATENCY * on_chip;
}

int hb_branched_split_pays(const hb_hines_branched_t *br, int per_sm)
{
    return per_sm >= 2 && hb_branched_latency_bound(br, per_sm);
}

void hb_hines_branched_free(hb_hines_branched_t *br)
{
    free(br->tables);
    memset(br, 0, sizeof *br);
}

void hb_hines_branched_solve(const hb_hines_branched_t *br, int count, int block,
                             const double *u, const double *l, const double *d, double *rhs,
                             const double *cu, const double *cl, double *stage)
{
    const int m = br->m, lanes = br->lanes, workers = br->workers, uniform = cu != NULL;
    const int split = br->n_items > 0;
    const size_t B = (size_t)block;
    const hb_branched_layout_t a = hb_branched_layout(m, br->couplings, lanes, br->words, uniform);
    int *tables = (int *)(stage + a.tables);
    memcpy(tables, br->tables, br->words * sizeof *tables); /* once a block, as the kernel */
    const hb_branched_tables_t t = hb_branched_tables_at(m, tables);
    for (int i = 0; uniform && i < m; ++i) {
        stage[a.ul + 2 * (size_t)i] = cu[i];
        stage[a.ul + 2 * (size_t)i + 1] = cl[i];
    }
    for (int k = 0; k < lanes; ++k) { /* the sink and zero nodes */
        const hb_branched_lane_t v = hb_branched_lane(stage, &a, lanes, uniform, k);
        HB_BRANCHED_DR(&v, m) = HB_BRANCHED_DR(&v, m + 1) = (hb_branched_pair_t){0.0, 0.0};
    }
    for (int s0 = 0; s0 < count; s0 += lanes) {
        const int team = count - s0 < lanes ? count - s0 : lanes;
        for (int th = 0; th < lanes * workers; ++th) {
            int k, i0;
            hb_hines_branched_thread(th, lanes, workers, block, &k, &i0);
            const hb_branched_lane_t v = hb_branched_lane(stage, &a, lanes, uniform, k);
            const size_t base = hb_block_base(m, block, s0 + (k < team ? k : 0));
            for (int i = i0; i < m; i += workers) {
                const size_t g = base + (size_t)i * B;
                HB_BRANCHED_DR(&v, i) = (hb_branched_pair_t){d[g], rhs[g]};
                if (!uniform) HB_BRANCHED_UL(&v, i) = (hb_branched_pair_t){u[g], l[g]};
            }
        }
        for (int k = 0; k < lanes; ++k) {
            const hb_branched_lane_t v = hb_branched_lane(stage, &a, lanes, uniform, k);
            for (int s = 0; s < t.n_stages; ++s)
                hb_branched_eliminate_stage(&t, &v, s, 0, 1, split);
            for (int s = t.n_stages - 1; s >= 0; --s)
                hb_branched_substitute_stage(&t, &v, s, 0, 1, split);
        }
        for (int th = 0; th < lanes * workers; ++th) {
            int k, i0;
            hb_hines_branched_thread(th, lanes, workers, block, &k, &i0);
            if (k >= team) continue;
            const hb_branched_lane_t v = hb_branched_lane(stage, &a, lanes, uniform, k);
            const size_t base = hb_block_base(m, block, s0 + k);
            for (int i = i0; i < m; i += workers) rhs[base + (size_t)i * B] = HB_BRANCHED_DR(&v, i).y;
        }
    }
}
