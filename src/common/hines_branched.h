/*
 * Internal: BRANCHED, the same-morphology Hines kernel for any number of systems (docs/gpu.md),
 * and its CPU twin (hb_hines_branched_solve, tested in CI).
 *
 * A team of `lanes` adjacent systems is staged on chip (hb_branched_layout); lane k of every
 * worker (a sub-team of `lanes` threads) works on system k. The tree is cut by node height
 * (0 for a leaf; a node with one child has its child's height, a fork 1 + its children's
 * largest) into *stages*: ranges of heights chosen at setup for the shortest estimated time.
 * Within a stage, each connected piece of the tree is a *task* that one worker eliminates
 * serially, children before parents, with no barrier inside: Algorithm 1 on a subtree.
 * Stages run leaves to root with a block barrier after each, their tasks shared out among
 * the workers, then root to leaves for the substitution. Every lane of a worker runs the same
 * task, so a worker's threads never diverge.
 *
 * A task is a list of row operations (nodes in descending order, so children come first) and
 * a list of gathers: the contributions of children that an earlier stage eliminated, added
 * before its rows. A row's own contribution to its parent stays in registers when the parent
 * is the task's next row ("carried", the usual case in a Hines-numbered chain), else goes to
 * the parent's (d, rhs) in shared memory (the parent is then in the same task: no other worker
 * writes it) or waits in its own for a later stage's gather.
 *
 * Split chains: a long unbranched run of a task that bounds its stage (a chain of nodes
 * numbered one after another, each the only child of the next) is cut by *separators*, one
 * every k + 1 rows. The k rows between two separators are a *chunk*. One stage earlier, an
 * *item* per separator S sweeps the chunk below S up and the chunk above S down in registers
 * (chunks are not written): it adds their eliminated contributions to S's (d, rhs) and
 * leaves the fill-ins that now couple S to the separators next to it in coupling nodes,
 * per-lane pairs after the zero node. The task then eliminates only the separators, a chain
 * of P rows whose (u, l) come from the coupling nodes; after the task's substitution the item
 * solves its chunk below S from the x of both ends (a Thomas sweep up and back down). A chain
 * of n rows takes about 2 sqrt(2 n) steps of a worker instead of n, for about twice the work
 * on its chunks.
 */
#ifndef HB_COMMON_HINES_BRANCHED_H
#define HB_COMMON_HINES_BRANCHED_H

#include <stddef.h>

#include "common/rcp.h"
#include "hinesbatch.h"

/*
 * The staged team (hb_branched_layout): lane k's (d, rhs) of node i is a pair at
 * dr + 2 (i L + k), for nodes 0 .. m + 1 + couplings: node m is a sink, a zero that row
 * updates with nowhere to go read in place of a parent and never store to (so the row loops
 * never branch), node m + 1 a zero the root's substitution reads as its parent's x, nodes
 * m + 2 .. the coupling nodes of split chains
 * (the (u, l) of the separators' rows). Its (u, l) of node i is a pair at ul + 2 (i L + k)
 * for nodes 0 .. m - 1, or, when every system has the same u and l ("uniform"), one shared
 * pair at ul + 2 i. The tables name nodes; a lane's view turns them into addresses.
 */

/* Two adjacent doubles on a 16-byte boundary (u, l or d, rhs of an element): one load. */
#if defined(__CUDACC__)
typedef struct __align__(16) {
    double x, y;
} hb_branched_pair_t;
#else
typedef struct {
    _Alignas(16) double x;
    double y;
} hb_branched_pair_t;
#endif

/* One lane of a staged team: its (u, l) and (d, rhs) of node 0 and the doubles from one
 * node's pair to the next. */
typedef struct {
    double *ul, *dr;
    int ul_row, dr_row;
} hb_branched_lane_t;

#define HB_BRANCHED_UL(v, node) (*(hb_branched_pair_t *)((v)->ul + (node) * (v)->ul_row))
#define HB_BRANCHED_DR(v, node) (*(hb_branched_pair_t *)((v)->dr + (node) * (v)->dr_row))

/* A row operation: the row's node, and (parent node << 2) | kind. A separator of a split chain
 * (not the chain's top) is CARRIED into the next separator, and names its coupling node
 * (above m + 1) instead: its (u, l) are read there. */
typedef struct {
    int row, parent;
} hb_branched_op_t;

enum {
    HB_BRANCHED_IN_TASK = 0, /* the parent is a later row of the task, not the next one */
    HB_BRANCHED_CARRIED = 1, /* the parent is the task's next row */
    HB_BRANCHED_LATER = 2,   /* the parent is in a later stage, which gathers this row */
    HB_BRANCHED_ROOT = 3     /* no parent: the parent node is the zero node */
};

/* A gather: a stage's row `row` takes the contribution of its child `child` (nodes). */
typedef struct {
    int row, child;
} hb_branched_gather_t;

/*
 * An item: separator `sep` of a split chain. Its chunk below is ops [below_first, below_end)
 * (bottom row first; the separator `below` under it), its chunk above ops
 * [above_first, above_end); either may be empty (the chain's lowest and top separators).
 * sep_coupling is sep's coupling node (the sink when no chunk lies above), below_coupling the
 * coupling node of `below` (the sink when no chunk lies below).
 */
typedef struct {
    int sep, sep_coupling, below, below_coupling;
    int below_first, below_end, above_first, above_end;
} hb_branched_item_t;

typedef struct {
    int m, lanes, workers;
    int n_stages, n_tasks, n_gathers;
    int n_items;   /* separators of split chains */
    int couplings; /* coupling nodes: per-lane pairs after the zero node */
    long cost;     /* estimated elimination steps of a team: the sum over stages of stage_cost
                    * + max(largest entry, total / workers), in half-rows (a row 2, a gather 1,
                    * an item 2 a chunk row it sweeps) */
    /*
     * One block of 32-bit words, staged after the arrays as it is: a header {n_stages,
     * n_tasks, n_gathers, n_items}, ops [m] (the tasks' rows, then the chunks'), gathers
     * [n_gathers] (8 bytes each, first, so they stay aligned), items [n_items], then
     * stage_task [n_stages + 1] (first task of each stage), stage_item [n_stages + 1],
     * task_op [n_tasks + 1], task_gather [n_tasks + 1]. A stage's tasks are listed longest
     * first, then its items; worker w takes entries w, w + workers, ... of that list.
     */
    int *tables;
    size_t words;
} hb_hines_branched_t;

/*
 * Builds the plan for systems of m rows (parent[i] < i, parent[0] = -1) in teams of `lanes`
 * systems (1 to 32) with `workers` workers (at least 1). The stages are chosen for the
 * fewest estimated row steps: each stage costs `stage_cost` half-rows (its barrier and
 * set-up) plus its busiest worker's share, a row counting 2 and a gather 1. Then, in every
 * task that costs more than its stage's share per worker, chains of at least `split_rows`
 * rows (0: none; else at least HB_BRANCHED_MIN_SPLIT_ROWS) are split; their items run one
 * stage earlier (a stage is added before the first when needed). On failure br is zeroed.
 */
hb_status_t hb_hines_branched_build(int m, const int *parent, int lanes, int workers,
                                    int stage_cost, int split_rows, hb_hines_branched_t *br);
void hb_hines_branched_free(hb_hines_branched_t *br);

/* Default stage cost (half-rows), from H100 measurements (docs/gpu.md). */
#define HB_BRANCHED_STAGE_COST 8
/* Default and least chain length split (rows): docs/gpu.md, "Split chains". */
#define HB_BRANCHED_SPLIT_ROWS 24
#define HB_BRANCHED_MIN_SPLIT_ROWS 4
/* Rows of a chunk for a chain of n rows: about sqrt(n / 2), at least 2. */
int hb_branched_chunk_rows(int n);

/*
 * Whether a plan whose team of br->lanes systems runs `per_sm` blocks a multiprocessor is
 * latency-bound: br->cost of at least HB_BRANCHED_SPLIT_LATENCY half-rows per row on chip
 * (per_sm x lanes x m). Its time is then its critical path more than the rows it streams.
 * Whether split chains pay, for a plan without them: latency-bound with at least two blocks a
 * multiprocessor (with one, a team's loads and stores are not hidden and bound it).
 * From H100 measurements (docs/gpu.md, "Split chains" and "Wide blocks").
 */
#define HB_BRANCHED_SPLIT_LATENCY 0.02
int hb_branched_latency_bound(const hb_hines_branched_t *br, int per_sm);
/* With few teams (latency), split chains only in systems of this many rows or more: 305-695
 * rows gained up to 17% on an H100; the 76-row cells measured no gain (within the launch noise
 * at those times) and keep the path they had (docs/gpu.md, "Split chains"). */
#define HB_BRANCHED_SPLIT_MIN_ROWS_LATENCY 128
int hb_branched_split_pays(const hb_hines_branched_t *br, int per_sm);

/*
 * Where a block's staged data lie, in doubles from the start of its shared memory: the team's
 * (d, rhs) pairs of nodes 0 .. m + 1 + couplings x lanes; then its (u, l) pairs of nodes
 * 0 .. m - 1 x lanes, or, for a uniform batch, the m shared pairs; then the tables (words
 * 32-bit words). Every part starts on 16 bytes.
 */
typedef struct {
    size_t ul;     /* where the (u, l) pairs start */
    size_t tables; /* where the tables start */
    size_t bytes;  /* all of it */
} hb_branched_layout_t;

HB_HOSTDEV hb_branched_layout_t hb_branched_layout(int m, int couplings, int lanes, size_t words,
                                                     int uniform)
{
    hb_branched_layout_t a;
    const size_t M = (size_t)m, L = (size_t)lanes;
    a.ul = 2 * (M + 2 + (size_t)couplings) * L;
    a.tables = a.ul + 2 * M * (uniform ? 1 : L);
    a.bytes = 8 * a.tables + 4 * words;
    return a;
}

/* Lane k's view of a block's staged data `smem`. */
HB_HOSTDEV hb_branched_lane_t hb_branched_lane(double *smem, const hb_branched_layout_t *a,
                                                 int lanes, int uniform, int k)
{
    hb_branched_lane_t v;
    v.dr = smem + 2 * (size_t)k;
    v.dr_row = 2 * lanes;
    v.ul = smem + a->ul + (uniform ? 0 : 2 * (size_t)k);
    v.ul_row = uniform ? 2 : 2 * lanes;
    return v;
}

/* Where each table starts in a staged copy of br->tables (its header gives the counts). */
typedef struct {
    const hb_branched_op_t *ops;
    const hb_branched_gather_t *gathers;
    const hb_branched_item_t *items;
    const int *stage_task, *stage_item, *task_op, *task_gather;
    int m, n_stages;
} hb_branched_tables_t;

#define HB_BRANCHED_HEADER 4 /* words: n_stages, n_tasks, n_gathers, n_items */

HB_HOSTDEV hb_branched_tables_t hb_branched_tables_at(int m, const int *tables)
{
    hb_branched_tables_t t;
    const int n_stages = tables[0], n_tasks = tables[1], n_gathers = tables[2], n_items = tables[3];
    t.ops = (const hb_branched_op_t *)(tables + HB_BRANCHED_HEADER);
    t.gathers = (const hb_branched_gather_t *)(tables + HB_BRANCHED_HEADER + 2 * (size_t)m);
    t.items = (const hb_branched_item_t *)(tables + HB_BRANCHED_HEADER +
                                           2 * ((size_t)m + (size_t)n_gathers));
    t.stage_task = (const int *)(t.items + n_items);
    t.stage_item = t.stage_task + n_stages + 1;
    t.task_op = t.stage_item + n_stages + 1;
    t.task_gather = t.task_op + n_tasks + 1;
    t.m = m;
    t.n_stages = n_stages;
    return t;
}

/* Lane v's (u, l) for op `op`: with `split` (a plan with split chains), a separator's from its
 * coupling node, else the row's own. */
HB_HOSTDEV hb_branched_pair_t hb_branched_op_ul(const hb_branched_lane_t *v,
                                                  hb_branched_op_t op, int m, int split)
{
    if (!split) return HB_BRANCHED_UL(v, op.row);
    const int p = op.parent >> 2; /* one load from a chosen address: no branch */
    const double *at = p > m + 1 ? v->dr + p * v->dr_row : v->ul + op.row * v->ul_row;
    return *(const hb_branched_pair_t *)at;
}

/*
 * Task t's elimination on one lane: gathers, then rows in order,
 *     c' = l / d', y' = (rhs - carried) / d', the parent's d -= u c', rhs -= u y'
 * with d' = d - carried. Without branches: when the parent is not the task's, the update reads
 * the sink (node m, a zero) and its store is predicated off: every worker of a lane uses the
 * sink, so a store there would be a race (docs/gpu.md, "Sink"). A carried update also goes to
 * memory (harmless: the parent's inputs were loaded before it, and its own stores overwrite
 * it; a separator's coupling node was read before it, and is not read again). `sink` is m.
 * Shared-memory latency is kept off the row's dependent chain: the parent's pair is read before
 * the chain (it is another node, and earlier rows' updates are stored), and the inputs of the
 * row two ahead are read after this row's stores (an in-task parent two rows up is final then;
 * the row between carries its update), the ops three ahead. The last row stands in for rows
 * past the end.
 */
HB_HOSTDEV void hb_branched_eliminate(const hb_branched_tables_t *t, const hb_branched_lane_t *v,
                                        int task, int sink, int split)
{
    for (int g = t->task_gather[task]; g < t->task_gather[task + 1]; ++g) {
        const hb_branched_gather_t e = t->gathers[g];
        const double uc = HB_BRANCHED_UL(v, e.child).x;
        const hb_branched_pair_t c = HB_BRANCHED_DR(v, e.child);
        hb_branched_pair_t r = HB_BRANCHED_DR(v, e.row);
        r.x -= uc * c.x;
        r.y -= uc * c.y;
        HB_BRANCHED_DR(v, e.row) = r;
    }
    const int end = t->task_op[task + 1], last = end - 1;
    int j = t->task_op[task];
    hb_branched_op_t op = t->ops[j], op1 = t->ops[j + 1 < end ? j + 1 : last],
                     op2 = t->ops[j + 2 < end ? j + 2 : last];
    hb_branched_pair_t ul = hb_branched_op_ul(v, op, sink, split), dr = HB_BRANCHED_DR(v, op.row);
    hb_branched_pair_t ul1 = hb_branched_op_ul(v, op1, sink, split),
                       dr1 = HB_BRANCHED_DR(v, op1.row);
    double carried_d = 0.0, carried_r = 0.0;
    for (; j < end; ++j) {
        const hb_branched_op_t op3 = t->ops[j + 3 < end ? j + 3 : last];
        const int kind = op.parent & 3;
        hb_branched_pair_t *p = &HB_BRANCHED_DR(v, kind & 2 ? sink : op.parent >> 2);
        hb_branched_pair_t q = *p;
        const double ull = kind == HB_BRANCHED_ROOT ? 0.0 : ul.x * ul.y; /* off the chain */
        const double inv = hb_rcp(dr.x - carried_d);
        hb_branched_pair_t cy;
        cy.x = kind == HB_BRANCHED_ROOT ? 0.0 : ul.y * inv;
        cy.y = (dr.y - carried_r) * inv;
        HB_BRANCHED_DR(v, op.row) = cy;
        const double uc = ull * inv, uy = ul.x * cy.y;
        q.x -= uc;
        q.y -= uy;
        if (!(kind & 2)) *p = q; /* HB_BRANCHED_LATER, _ROOT: the sink, not written */
        carried_d = kind == HB_BRANCHED_CARRIED ? uc : 0.0;
        carried_r = kind == HB_BRANCHED_CARRIED ? uy : 0.0;
        const hb_branched_pair_t ul2 = hb_branched_op_ul(v, op2, sink, split);
        const hb_branched_pair_t dr2 = HB_BRANCHED_DR(v, op2.row);
        op = op1;
        op1 = op2;
        op2 = op3;
        ul = ul1;
        dr = dr1;
        ul1 = ul2;
        dr1 = dr2;
    }
}

/*
 * Task t's substitution, rows in reverse: x = y' - c' x_parent, x_parent from the row just
 * solved when carried, else from the parent's pair (solved already: it is later in the task,
 * or in a later stage, which the substitution runs first; the zero node for the root, whose
 * c' is 0). x replaces y'. Without branches; the row two ahead is read after this row's store
 * (its parent may be this row), the ops three ahead.
 */
HB_HOSTDEV void hb_branched_substitute(const hb_branched_tables_t *t,
                                         const hb_branched_lane_t *v, int task)
{
    const int begin = t->task_op[task];
    int j = t->task_op[task + 1] - 1;
    hb_branched_op_t op = t->ops[j], op1 = t->ops[j - 1 >= begin ? j - 1 : begin],
                     op2 = t->ops[j - 2 >= begin ? j - 2 : begin];
    hb_branched_pair_t cy = HB_BRANCHED_DR(v, op.row), cy1 = HB_BRANCHED_DR(v, op1.row);
    double xp = HB_BRANCHED_DR(v, op.parent >> 2).y, xp1 = HB_BRANCHED_DR(v, op1.parent >> 2).y;
    double x = 0.0;
    for (; j >= begin; --j) {
        const hb_branched_op_t op3 = t->ops[j - 3 >= begin ? j - 3 : begin];
        x = cy.y - cy.x * ((op.parent & 3) == HB_BRANCHED_CARRIED ? x : xp);
        HB_BRANCHED_DR(v, op.row).y = x;
        const hb_branched_pair_t cy2 = HB_BRANCHED_DR(v, op2.row);
        const double xp2 = HB_BRANCHED_DR(v, op2.parent >> 2).y;
        op = op1;
        op1 = op2;
        op2 = op3;
        cy = cy1;
        cy1 = cy2;
        xp = xp1;
        xp1 = xp2;
    }
}

/*
 * Item q's part of the elimination on one lane, a stage before its chain's task. The chunk
 * below the separator S is swept up from the separator B under it (its first row holds
 * u_B x_B: the spike a carries x_B's coefficient), the chunk above S down from its top row (h
 * carries the coefficient of the separator over it), both in registers. Their contributions
 * are taken from S's (d, rhs); the fill-ins go to coupling nodes: B's coefficient in S's row to
 * B's (.x), the upper separator's coefficient in S's row to S's (.y). Items of one stage touch
 * disjoint words.
 */
HB_HOSTDEV void hb_branched_reduce(const hb_branched_tables_t *t, const hb_branched_lane_t *v,
                                     int q)
{
    const hb_branched_item_t it = t->items[q];
    double sub_d = 0.0, sub_r = 0.0;
    if (it.below_first < it.below_end) {
        double cd = 0.0, cr = 0.0, spike = HB_BRANCHED_UL(v, it.below).x;
        for (int j = it.below_first; j < it.below_end; ++j) {
            const int r = t->ops[j].row;
            const hb_branched_pair_t ul = HB_BRANCHED_UL(v, r), dr = HB_BRANCHED_DR(v, r);
            const double inv = hb_rcp(dr.x - cd);
            const double c = ul.y * inv, y = (dr.y - cr) * inv, a = spike * inv;
            cd = ul.x * c;
            cr = ul.x * y;
            spike = -ul.x * a;
        }
        sub_d = cd;
        sub_r = cr;
        HB_BRANCHED_DR(v, it.below_coupling).x = spike;
    }
    if (it.above_first < it.above_end) {
        double ed = 0.0, er = 0.0, h = HB_BRANCHED_UL(v, t->ops[it.above_end - 1].row).y;
        for (int j = it.above_end - 1; j >= it.above_first; --j) {
            const hb_branched_pair_t dr = HB_BRANCHED_DR(v, t->ops[j].row);
            const hb_branched_pair_t under =
                HB_BRANCHED_UL(v, j > it.above_first ? t->ops[j - 1].row : it.sep);
            const double inv = hb_rcp(dr.x - ed);
            const double g = (dr.y - er) * inv, e = under.x * inv;
            h *= inv;
            ed = under.y * e;
            er = under.y * g;
            h = -under.y * h;
        }
        sub_d += ed;
        sub_r += er;
        HB_BRANCHED_DR(v, it.sep_coupling).y = h;
    }
    hb_branched_pair_t sep = HB_BRANCHED_DR(v, it.sep);
    sep.x -= sub_d;
    sep.y -= sub_r;
    HB_BRANCHED_DR(v, it.sep) = sep;
}

/*
 * Item q's part of the substitution on one lane, a stage after its chain's task: the chunk
 * below S solved from x_B and x_S (the separators' x, known now), a Thomas sweep up with
 * u_B x_B moved to the right-hand side and back down. x replaces the chunk's rhs.
 */
HB_HOSTDEV void hb_branched_finish(const hb_branched_tables_t *t, const hb_branched_lane_t *v,
                                     int q)
{
    const hb_branched_item_t it = t->items[q];
    double cd = 0.0, cr = HB_BRANCHED_UL(v, it.below).x * HB_BRANCHED_DR(v, it.below).y;
    for (int j = it.below_first; j < it.below_end; ++j) {
        const int r = t->ops[j].row;
        const hb_branched_pair_t ul = HB_BRANCHED_UL(v, r);
        hb_branched_pair_t dr = HB_BRANCHED_DR(v, r);
        const double inv = hb_rcp(dr.x - cd);
        dr.x = ul.y * inv;
        dr.y = (dr.y - cr) * inv;
        HB_BRANCHED_DR(v, r) = dr;
        cd = ul.x * dr.x;
        cr = ul.x * dr.y;
    }
    double x = HB_BRANCHED_DR(v, it.sep).y;
    for (int j = it.below_end - 1; j >= it.below_first; --j) {
        const int r = t->ops[j].row;
        const hb_branched_pair_t cy = HB_BRANCHED_DR(v, r);
        x = cy.y - cy.x * x;
        HB_BRANCHED_DR(v, r).y = x;
    }
}

/*
 * Stage s of the elimination (and of the substitution), this worker's share: entries first,
 * first + workers, ... of the stage's list, its tasks then its items (two loops). `split`: the
 * plan has split chains (br->n_items > 0). Without, the row loops are those of a plan
 * without items: on an H100 the separators' load and the items' code, present in the same
 * function, made plans without split chains 2-20% slower (docs/gpu.md, "Split chains").
 */
HB_HOSTDEV int hb_branched_first_item(const hb_branched_tables_t *t, int s, int first,
                                        int workers)
{
    const int tasks = t->stage_task[s + 1] - t->stage_task[s];
    return ((first - tasks) % workers + workers) % workers;
}

HB_HOSTDEV void hb_branched_eliminate_stage(const hb_branched_tables_t *t,
                                              const hb_branched_lane_t *v, int s, int first,
                                              int workers, int split)
{
    for (int q = t->stage_task[s] + first; q < t->stage_task[s + 1]; q += workers)
        hb_branched_eliminate(t, v, q, t->m, split);
    if (!split) return;
    for (int q = t->stage_item[s] + hb_branched_first_item(t, s, first, workers);
         q < t->stage_item[s + 1]; q += workers)
        hb_branched_reduce(t, v, q);
}

HB_HOSTDEV void hb_branched_substitute_stage(const hb_branched_tables_t *t,
                                               const hb_branched_lane_t *v, int s, int first,
                                               int workers, int split)
{
    for (int q = t->stage_task[s] + first; q < t->stage_task[s + 1]; q += workers)
        hb_branched_substitute(t, v, q);
    if (!split) return;
    for (int q = t->stage_item[s] + hb_branched_first_item(t, s, first, workers);
         q < t->stage_item[s + 1]; q += workers)
        hb_branched_finish(t, v, q);
}

/*
 * Thread t of a team's lanes x workers threads stages (and writes back) lane *k's rows
 * *i0, *i0 + workers, ... Within a layout block (block > 1) a warp's threads take adjacent
 * systems of a row, so its loads are contiguous; in a FLAT batch (block 1) adjacent rows
 * of one system. One division per thread, none per element.
 */
HB_HOSTDEV void hb_hines_branched_thread(int t, int lanes, int workers, int block, int *k,
                                           int *i0)
{
    if (block > 1) {
        *k = t % lanes;
        *i0 = t / lanes;
    } else {
        *k = t / workers;
        *i0 = t % workers;
    }
}

/*
 * CPU twin of the CUDA kernel: the teams of br->lanes systems in turn, staged into `stage` as
 * a kernel block stages them (hb_branched_layout; the tables, shared u and l, sink and zero
 * nodes once, then each team's rows with br->workers threads per lane, through
 * hb_hines_branched_thread), each lane solved stage by stage, x written to rhs. Any layout:
 * system s's row i at hb_block_base(m, block, s) + i block. u and l are every system's own,
 * or, when cu and cl are given, the m values all systems share (u and l are then not read).
 * u, l, d are not written. A team's missing systems (count not a multiple of lanes) are staged
 * as copies of its first. `stage`: layout.bytes, 16-byte aligned.
 */
void hb_hines_branched_solve(const hb_hines_branched_t *br, int count, int block,
                             const double *u, const double *l, const double *d, double *rhs,
                             const double *cu, const double *cl, double *stage);

#endif
