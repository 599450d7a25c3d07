/*
 * SHAPES of mixed batches (common/multi_shapes.h, docs/multi.md): classes of cells with the
 * same tree, their layout and their branched plans.
 */
#include "common/multi_shapes.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"

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

static int same_tree(const hb_multi_cells_t *mb, int a, int b)
{
    return mb->m[a] == mb->m[b] &&
           memcmp(mb->parent + mb->cell_first[a], mb->parent + mb->cell_first[b],
                  (size_t)mb->m[a] * sizeof *mb->parent) == 0;
}

hb_status_t hb_multi_find_shapes(const hb_multi_cells_t *mb, int *shape, int *n_shapes)
{
    const int n = mb->n_cells;
    shape_key_t *keys = malloc((size_t)n * sizeof *keys);
    int *rep = malloc((size_t)n * sizeof *rep); /* representative cell of each class so far */
    int *first_seen = malloc((size_t)n * sizeof *first_seen);
    if (!keys || !rep || !first_seen) {
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
            shape[c] = k;
        }
        r = end;
    }
    /* Renumber in order of first appearance. */
    for (int k = 0; k < classes; ++k) first_seen[k] = -1;
    int next = 0;
    for (int c = 0; c < n; ++c) {
        if (first_seen[shape[c]] < 0) first_seen[shape[c]] = next++;
        shape[c] = first_seen[shape[c]];
    }
    *n_shapes = classes;
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
 * made Figure 6's cells, whose branches have up to 24 rows, 9% slower) when a team run
 * `per_sm` blocks a multiprocessor is latency-bound without (hb_branched_split_pays: never
 * with one block) and still fits `budget`. */
static hb_status_t plan_lanes(hb_multi_shape_t *k, const int *parent, int lanes, int threads,
                              int split_rows, size_t budget, int per_sm)
{
    hb_status_t status =
        hb_hines_branched_build(k->m, parent, lanes, threads / lanes, HB_BRANCHED_STAGE_COST,
                                split_rows < 0 ? 0 : split_rows, &k->plan);
    if (status != HB_SUCCESS || split_rows >= 0 || !hb_branched_split_pays(&k->plan, per_sm))
        return status;
    hb_hines_branched_t split;
    status = hb_hines_branched_build(k->m, parent, lanes, threads / lanes, HB_BRANCHED_STAGE_COST,
                                     HB_MULTI_SPLIT_ROWS, &split);
    if (status != HB_SUCCESS) {
        hb_hines_branched_free(&k->plan);
        return status;
    }
    if (split.n_items > 0 &&
        hb_branched_layout(k->m, split.couplings, lanes, split.words, 0).bytes <= budget) {
        hb_hines_branched_free(&k->plan);
        k->plan = split;
    } else {
        hb_hines_branched_free(&split);
    }
    return HB_SUCCESS;
}

/* A team's period at per_sm blocks a multiprocessor (hb_multi_shapes_time). */
static double team_period(const hb_multi_shape_t *k, int per_sm)
{
    const double copy = HB_MULTI_SHAPES_COPY_PER_ROW * k->lanes * k->m;
    const double own = (double)k->plan.cost + copy, shared = per_sm * copy;
    return own > shared ? own : shared;
}

double hb_multi_shapes_time(const hb_multi_shape_t *k, int sms)
{
    const int b = k->tier + 1;
    const double periods = hb_multi_shape_teams(k) / ((double)b * sms);
    return team_period(k, b) * (periods > 1.0 ? periods : 1.0);
}

/* The most lanes (at most 16, at most the class's cells, at least one worker each) whose
 * team's arrays fit `budget` bytes; 0 when one lane does not. */
static int most_lanes(const hb_multi_shape_t *k, size_t budget, int threads)
{
    int lanes = 0;
    for (int L = 1; L <= 16 && L <= k->cells && L <= threads; ++L)
        if (hb_branched_layout(k->m, 0, L, 0, 0).bytes <= budget) lanes = L;
    return lanes;
}

/* A class's options: one per tier, and the fixed rule (RULE_OPTION: two blocks a
 * multiprocessor, the most lanes of 16, 8, 4, 2, 1; now at most the class's cells), kept as a
 * choice of its own. */
enum { RULE_OPTION = HB_MULTI_SHAPES_TIERS, SHAPE_OPTIONS };

/* The options of one class: for each tier (per_sm = tier + 1 blocks a multiprocessor), the
 * pair of lanes and plan whose team fits the block's budget (the multiprocessor's shared
 * memory over per_sm, less the 1 KB each block reserves) with the least hb_multi_shapes_time;
 * lanes 0 where none fits. Lanes tried: the most that fit, one fewer, and the largest power of
 * two (the time falls with lanes, but not evenly: a plan's stages change with its workers, and
 * the last team may be short). Where no tier fits one lane, option 0 is one lane in a block of
 * its own (chains split only when split_rows says so), its tables read from memory when they
 * do not fit beside the arrays. */
/* The shared memory a block of a launch running per_sm blocks a multiprocessor may take: the
 * multiprocessor's over per_sm, less the 1 KB each block reserves, at most a block's opt-in
 * and `cap` (HB_MULTI_SHAPES_BYTES, 0: none). */
static size_t block_budget(const hb_multi_shapes_device_t *dev, int per_sm, size_t cap)
{
    size_t budget = dev->sm_bytes / (size_t)per_sm;
    budget = budget > 1024 ? budget - 1024 : 0;
    if (budget > dev->block_bytes) budget = dev->block_bytes;
    if (cap && budget > cap) budget = cap;
    return budget;
}

/* *trial: class k planned for `lanes` lanes at per_sm blocks a multiprocessor (plan_lanes).
 * *fits: its team fits `budget`; when it does not, its plan is freed. */
static hb_status_t plan_trial(hb_multi_shape_t *trial, const hb_multi_shape_t *k,
                              const int *parent, int lanes, int threads, int split_rows,
                              size_t budget, int per_sm, int *fits)
{
    *trial = *k;
    hb_status_t status = plan_lanes(trial, parent, lanes, threads, split_rows, budget, per_sm);
    *fits = 0;
    if (status != HB_SUCCESS) return status;
    trial->bytes =
        hb_branched_layout(k->m, trial->plan.couplings, lanes, trial->plan.words, 0).bytes;
    trial->lanes = lanes;
    trial->tier = per_sm - 1;
    trial->global_tables = 0;
    *fits = trial->bytes <= budget;
    if (!*fits) hb_hines_branched_free(&trial->plan);
    return HB_SUCCESS;
}

static hb_status_t plan_options(const hb_multi_shape_t *k, const int *parent,
                                const hb_multi_shapes_device_t *dev, size_t cap, int threads,
                                int split_rows, hb_multi_shape_t option[SHAPE_OPTIONS])
{
    hb_multi_shape_t trial;
    int found = 0, fits = 0;
    for (int tier = 0; tier < HB_MULTI_SHAPES_TIERS; ++tier) {
        option[tier] = *k;
        option[tier].lanes = 0;
        const int per_sm = tier + 1;
        if (per_sm > dev->max_per_sm) continue;
        const size_t budget = block_budget(dev, per_sm, cap);
        const int most = most_lanes(k, budget, threads);
        int pow2 = 1;
        while (2 * pow2 <= most) pow2 *= 2;
        const int tried[3] = {most, most - 1, pow2};
        double best_time = 0.0;
        for (int q = 0; q < 3 && most > 0; ++q) {
            const int lanes = tried[q];
            if (lanes < 1 || (q == 2 && (lanes == most || lanes == most - 1))) continue;
            hb_status_t status = plan_trial(&trial, k, parent, lanes, threads, split_rows,
                                            budget, per_sm, &fits);
            if (status != HB_SUCCESS) return status;
            if (!fits) continue;
            const double time = hb_multi_shapes_time(&trial, dev->sms);
            if (!option[tier].lanes || time < best_time) {
                if (option[tier].lanes) hb_hines_branched_free(&option[tier].plan);
                option[tier] = trial;
                best_time = time;
                found = 1;
            } else {
                hb_hines_branched_free(&trial.plan);
            }
        }
        /* a plan with split chains adds coupling nodes and tables that most_lanes does not
         * count: where none of those lanes fits, the most that do */
        for (int lanes = most - 2; lanes >= 1 && !option[tier].lanes; --lanes) {
            hb_status_t status = plan_trial(&trial, k, parent, lanes, threads, split_rows,
                                            budget, per_sm, &fits);
            if (status != HB_SUCCESS) return status;
            if (fits) {
                option[tier] = trial;
                found = 1;
            }
        }
    }
    option[RULE_OPTION] = *k;
    option[RULE_OPTION].lanes = 0;
    const size_t rule_budget = block_budget(dev, 2, cap);
    fits = 0;
    for (int lanes = 16; found && dev->max_per_sm >= 2 && lanes >= 1 && !fits; lanes /= 2) {
        if (lanes > k->cells || hb_branched_layout(k->m, 0, lanes, 0, 0).bytes > rule_budget)
            continue;
        hb_status_t status = plan_trial(&option[RULE_OPTION], k, parent, lanes, threads,
                                        split_rows, rule_budget, 2, &fits);
        if (status != HB_SUCCESS) return status;
        if (!fits) option[RULE_OPTION].lanes = 0;
    }
    if (found) return HB_SUCCESS;
    hb_multi_shape_t *one = &option[0];
    hb_status_t status = hb_hines_branched_build(k->m, parent, 1, threads, HB_BRANCHED_STAGE_COST,
                                                 split_rows < 0 ? 0 : split_rows, &one->plan);
    if (status != HB_SUCCESS) return status;
    const size_t large = dev->block_bytes;
    one->bytes = hb_branched_layout(k->m, one->plan.couplings, 1, one->plan.words, 0).bytes;
    one->lanes = 1;
    one->tier = 0;
    if (one->bytes > large) { /* the tables stay in memory */
        one->global_tables = 1;
        one->bytes = hb_branched_layout(k->m, one->plan.couplings, 1, 0, 0).bytes;
    }
    if (one->bytes > large) {
        hb_hines_branched_free(&one->plan);
        one->lanes = 0;
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "hb_multi: shapes: a cell of %d rows takes %zu bytes of shared memory, "
                       "more than the %zu a block can have",
                       k->m, k->bytes, large);
    }
    return HB_SUCCESS;
}

/* The option a choice takes: `choice` -1, each class's fastest alone; 0 .. tiers - 1, that
 * tier, or the nearest below it that the class fits; RULE_OPTION, the fixed rule where it
 * fits (else as tier 1). */
static const hb_multi_shape_t *pick(const hb_multi_shape_t option[SHAPE_OPTIONS], int choice,
                                    int sms)
{
    if (choice == RULE_OPTION) {
        if (option[RULE_OPTION].lanes) return &option[RULE_OPTION];
        choice = 1;
    }
    const hb_multi_shape_t *best = NULL;
    for (int t = HB_MULTI_SHAPES_TIERS - 1; t >= 0; --t) {
        if (!option[t].lanes || (choice >= 0 && t > choice)) continue;
        if (choice >= 0) return &option[t];
        if (!best || hb_multi_shapes_time(&option[t], sms) < hb_multi_shapes_time(best, sms))
            best = &option[t];
    }
    /* the tier asked for, and those below it, have no option: the lowest that has one (every
     * class has at least one option when planning gets here) */
    for (int t = 0; !best && t < HB_MULTI_SHAPES_TIERS; ++t)
        if (option[t].lanes) best = &option[t];
    return best;
}

typedef struct {
    const hb_multi_shape_t *o;
    int index; /* the class's, for the launch order */
} picked_t;

static int by_launch_order(const void *a, const void *b)
{
    const picked_t *x = a, *y = b;
    if (x->o->tier != y->o->tier) return x->o->tier < y->o->tier ? -1 : 1;
    if (x->o->m != y->o->m) return x->o->m > y->o->m ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/*
 * Modelled time of a choice over all classes, in half-row steps: the tiers' launches one after
 * another, each as the kernel runs it: blocks per multiprocessor as its largest team allows
 * (at most dev->max_per_sm), block b taking teams b, b + grid, ... class after class (larger
 * cells first), each a team_period at those blocks, and a staging of the
 * tables where a block enters a class (HB_MULTI_SHAPES_STAGE_COST + words x
 * HB_MULTI_SHAPES_COPY_PER_ROW / 10: a word is a tenth of a row's 40 bytes). The launch takes
 * its busiest block's time. -1 when out of memory.
 */
static double choice_time(hb_multi_shape_t (*option)[SHAPE_OPTIONS], int classes, int choice,
                          const hb_multi_shapes_device_t *dev)
{
    picked_t *order = malloc((size_t)(classes ? classes : 1) * sizeof *order);
    const int most_blocks = dev->max_per_sm * dev->sms;
    double *busy = malloc((size_t)(most_blocks > 0 ? most_blocks : 1) * sizeof *busy);
    int *in_class = malloc((size_t)(most_blocks > 0 ? most_blocks : 1) * sizeof *in_class);
    if (!order || !busy || !in_class) {
        free(order);
        free(busy);
        free(in_class);
        return -1.0;
    }
    for (int k = 0; k < classes; ++k) {
        order[k].o = pick(option[k], choice, dev->sms);
        order[k].index = k;
    }
    qsort(order, (size_t)classes, sizeof *order, by_launch_order);
    double time = 0.0;
    for (int first = 0; first < classes;) {
        const int tier = order[first].o->tier;
        int end = first;
        long teams = 0;
        size_t bytes = 0;
        for (; end < classes && order[end].o->tier == tier; ++end) {
            const hb_multi_shape_t *o = order[end].o;
            teams += hb_multi_shape_teams(o);
            if (o->bytes > bytes) bytes = o->bytes;
        }
        int per_sm = (int)(dev->sm_bytes / (bytes + 1024));
        if (per_sm > dev->max_per_sm) per_sm = dev->max_per_sm;
        if (per_sm < 1) per_sm = 1;
        const int grid = (long)per_sm * dev->sms < teams ? per_sm * dev->sms : (int)teams;
        for (int b = 0; b < grid; ++b) {
            busy[b] = 0.0;
            in_class[b] = -1;
        }
        long team = 0;
        for (int q = first; q < end; ++q) {
            const hb_multi_shape_t *at = order[q].o;
            const double period = team_period(at, per_sm);
            const double stage = HB_MULTI_SHAPES_STAGE_COST +
                                 (double)at->plan.words * HB_MULTI_SHAPES_COPY_PER_ROW / 10.0;
            for (int j = 0; j < hb_multi_shape_teams(at); ++j, ++team) {
                const int b = (int)(team % grid);
                if (in_class[b] != q) busy[b] += stage;
                in_class[b] = q;
                busy[b] += period;
            }
        }
        double longest = 0.0;
        for (int b = 0; b < grid; ++b)
            if (busy[b] > longest) longest = busy[b];
        time += longest;
        first = end;
    }
    free(order);
    free(busy);
    free(in_class);
    return time;
}

hb_status_t hb_multi_shapes_plan(const hb_multi_cells_t *mb, const int *shape, int n_shapes,
                                 const hb_multi_shapes_knobs_t *knobs,
                                 const hb_multi_shapes_device_t *dev, int threads,
                                 hb_multi_shapes_t *s)
{
    memset(s, 0, sizeof *s);
    const int n = mb->n_cells, classes = n_shapes;
    hb_status_t status = HB_SUCCESS;
    int *rep = malloc((size_t)classes * sizeof *rep);     /* a member of each class */
    int *where = malloc((size_t)classes * sizeof *where); /* class id -> index in s->cls */
    int *next = calloc((size_t)n, sizeof *next);          /* next member number of each class */
    hb_multi_shape_t (*option)[SHAPE_OPTIONS] = calloc((size_t)classes, sizeof *option);
    s->cls = calloc((size_t)classes, sizeof *s->cls);
    s->node_index = malloc(mb->n_rows * sizeof *s->node_index);
    if (!rep || !where || !next || !option || !s->cls || !s->node_index) goto oom;
    s->n_classes = classes;
    for (int k = 0; k < classes; ++k) rep[k] = -1;
    for (int c = 0; c < n; ++c) {
        const int k = shape[c];
        if (rep[k] < 0) {
            rep[k] = c;
            s->cls[k].m = mb->m[c];
            s->cls[k].team_first = k; /* first appearance, for the sort */
        }
        s->cls[k].cells++;
    }
    for (int k = 0; k < classes; ++k) {
        s->cls[k].table_off = (size_t)rep[k]; /* the representative, until sorted */
        if ((status = plan_options(&s->cls[k], mb->parent + mb->cell_first[rep[k]], dev,
                                   knobs->bytes, threads, knobs->split_rows,
                                   option[k])) != HB_SUCCESS)
            goto fail;
    }
    /* each class's fastest option, or every class in one tier (as near as it fits): the
     * least modelled time over the batch (a small batch pays a launch per tier) */
    int choice = RULE_OPTION;
    const double rule = choice_time(option, classes, RULE_OPTION, dev);
    double least = rule;
    for (int c = -1; c < HB_MULTI_SHAPES_TIERS && least >= 0.0; ++c) {
        const double time = choice_time(option, classes, c, dev);
        if (time < 0.0) least = time;
        if (time >= 0.0 && time < least && time < HB_MULTI_SHAPES_RULE_MARGIN * rule) {
            least = time;
            choice = c;
        }
    }
    if (least < 0.0) goto oom;
    if (knobs->choice != -2) choice = knobs->choice;
    for (int k = 0; k < classes; ++k) {
        const hb_multi_shape_t *o = pick(option[k], choice, dev->sms);
        s->cls[k] = *o;
        for (int t = 0; t < SHAPE_OPTIONS; ++t)
            if (&option[k][t] != o && option[k][t].lanes) hb_hines_branched_free(&option[k][t].plan);
        memset(option[k], 0, sizeof option[k]);
    }
    qsort(s->cls, (size_t)classes, sizeof *s->cls, by_tier_rows);
    size_t base = 0, words = 0;
    int teams[HB_MULTI_SHAPES_TIERS] = {0};
    for (int q = 0; q < classes; ++q) {
        hb_multi_shape_t *k = &s->cls[q];
        where[shape[k->table_off]] = q;
        const int team_count = hb_multi_shape_teams(k);
        k->team_first = teams[k->tier];
        teams[k->tier] += team_count;
        s->tier_classes[k->tier]++;
        if (k->bytes > s->tier_bytes[k->tier]) s->tier_bytes[k->tier] = k->bytes;
        k->base = base;
        base += (size_t)team_count * (size_t)k->lanes * (size_t)k->m;
        k->table_off = words;
        words += (k->plan.words + 3) & ~(size_t)3; /* each class's tables on 16 bytes */
    }
    for (int t = 0; t < HB_MULTI_SHAPES_TIERS; ++t) s->tier_teams[t] = teams[t];
    s->size = base;
    s->words = words;
    if (!(s->tables = calloc(words ? words : 1, sizeof *s->tables))) goto oom;
    for (int q = 0; q < classes; ++q)
        memcpy(s->tables + s->cls[q].table_off, s->cls[q].plan.tables,
               s->cls[q].plan.words * sizeof *s->tables);
    for (int c = 0; c < n; ++c) {
        const hb_multi_shape_t *k = &s->cls[where[shape[c]]];
        const int j = next[shape[c]]++;
        const size_t L = (size_t)k->lanes,
                     first = k->base + (size_t)(j / k->lanes) * L * (size_t)k->m + (size_t)(j % k->lanes);
        for (int i = 0; i < mb->m[c]; ++i) s->node_index[mb->cell_first[c] + (size_t)i] = first + (size_t)i * L;
    }
    s->device = *dev;
    s->threads = threads;
    goto done;
oom:
    status = hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory planning shapes for %d cells", n);
fail:
    hb_multi_shapes_free(s);
done:
    for (int k = 0; option && k < classes; ++k) /* what was planned and not taken (failures) */
        for (int t = 0; t < SHAPE_OPTIONS; ++t)
            if (option[k][t].lanes) hb_hines_branched_free(&option[k][t].plan);
    free(option);
    free(rep);
    free(where);
    free(next);
    return status;
}
