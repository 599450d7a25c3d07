/*
 * Internal: BRANCHED, the same-morphology Hines kernel for few systems (docs/gpu.md), and its
 * CPU twin (hb_hines_branched_solve, tested in CI).
 *
 * A team of `lanes` adjacent systems is staged on chip as [node][lane][u l d rhs]; lane k of every
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
 * the parent's slot in shared memory (the parent is then in the same task: no other worker
 * writes it) or waits in its own slot for a later stage's gather.
 */
#ifndef HB_CORE_HINES_BRANCHED_H
#define HB_CORE_HINES_BRANCHED_H

#include <stddef.h>

#include "core/multi.h" /* hb_multi_rcp */

/*
 * The staged team: element (node i, lane k) is 4 doubles u, l, d, rhs at ((i L + k) * 4), for
 * nodes 0 .. m + 1: node m is a sink that row updates with nowhere to go are sent to (so the
 * row loops never branch), node m + 1 a zero the root's substitution reads as its parent's x.
 * Slots in the tables count doubles within a lane: node i's is 4 i L.
 */
#define HB_BRANCHED_U 0
#define HB_BRANCHED_L 1
#define HB_BRANCHED_D 2
#define HB_BRANCHED_RHS 3

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

/* The pair at slot + `field` (HB_BRANCHED_U or HB_BRANCHED_D) of a lane. */
#define HB_BRANCHED_PAIR(lane, slot, field) (*(hb_branched_pair_t *)((lane) + (slot) + (field)))

/* A row operation: the row's slot, and (parent slot << 2) | kind. */
typedef struct {
    int row, parent;
} hb_branched_op_t;

enum {
    HB_BRANCHED_IN_TASK = 0, /* the parent is a later row of the task, not the next one */
    HB_BRANCHED_CARRIED = 1, /* the parent is the task's next row */
    HB_BRANCHED_LATER = 2,   /* the parent is in a later stage, which gathers this row */
    HB_BRANCHED_ROOT = 3     /* no parent: the parent slot is the zero node's */
};

/* A gather: a stage's row `row` takes the contribution of its child `child` (slots). */
typedef struct {
    int row, child;
} hb_branched_gather_t;

typedef struct {
    int m, lanes, workers;
    int n_stages, n_tasks, n_gathers;
    /*
     * One block of 32-bit words, staged after the arrays as it is: ops [m], gathers
     * [n_gathers] (8 bytes each, first, so they stay aligned), then stage_task [n_stages + 1]
     * (first task of each stage), task_op [n_tasks + 1], task_gather [n_tasks + 1].
     * A stage's tasks are listed longest first; worker w takes tasks w, w + workers, ...
     */
    int *tables;
    size_t words;
} hb_hines_branched_t;

/*
 * Builds the plan for systems of m rows (parent[i] < i, parent[0] = -1) in teams of `lanes`
 * systems (1 to 32) with `workers` workers (at least 1). The stages are chosen for the
 * fewest estimated row steps: each stage costs `stage_cost` half-rows (its barrier and
 * set-up) plus its busiest worker's share, a row counting 2 and a gather 1. On failure br is
 * zeroed.
 */
hb_status_t hb_hines_branched_build(int m, const int *parent, int lanes, int workers,
                                    int stage_cost, hb_hines_branched_t *br);
void hb_hines_branched_free(hb_hines_branched_t *br);

/* Default stage cost (half-rows), from H100 measurements (docs/gpu.md). */
#define HB_BRANCHED_STAGE_COST 8

/* Doubles of a team's staged arrays: 4 per node and lane, the sink and zero nodes included. */
HB_TD_INLINE size_t hb_hines_branched_doubles(int m, int lanes)
{
    return (size_t)4 * ((size_t)m + 2) * (size_t)lanes;
}

/* Staged bytes of a team: the arrays, then the tables. */
HB_TD_INLINE size_t hb_hines_branched_bytes(const hb_hines_branched_t *br)
{
    return 8 * hb_hines_branched_doubles(br->m, br->lanes) + 4 * br->words;
}

/* Where each table starts in a staged copy of br->tables. */
typedef struct {
    const hb_branched_op_t *ops;
    const hb_branched_gather_t *gathers;
    const int *stage_task, *task_op, *task_gather;
    int n_stages;
} hb_branched_tables_t;

HB_TD_INLINE hb_branched_tables_t hb_branched_tables_at(int m, int n_stages, int n_tasks,
                                                        int n_gathers, const int *tables)
{
    hb_branched_tables_t t;
    t.ops = (const hb_branched_op_t *)tables;
    t.gathers = (const hb_branched_gather_t *)(tables + 2 * (size_t)m);
    t.stage_task = tables + 2 * ((size_t)m + (size_t)n_gathers);
    t.task_op = t.stage_task + n_stages + 1;
    t.task_gather = t.task_op + n_tasks + 1;
    t.n_stages = n_stages;
    return t;
}

/*
 * Task t's elimination on one lane (`lane`: the staged arrays plus 4 k): gathers, then rows
 * in order,
 *     c' = l / d', y' = (rhs - carried) / d', the parent's d -= u c', rhs -= u y'
 * with d' = d - carried. Without branches: the next row's inputs are loaded (the last row
 * reloads itself) before this row's stores; the parent update goes to the sink when the
 * parent is not the task's, and also to memory when carried (harmless: the parent's inputs
 * were loaded before it, and its own stores overwrite it). Workers share the sink.
 */
HB_TD_INLINE void hb_branched_eliminate(const hb_branched_tables_t *t, double *lane, int task,
                                        int sink)
{
    for (int g = t->task_gather[task]; g < t->task_gather[task + 1]; ++g) {
        const hb_branched_gather_t e = t->gathers[g];
        const double uc = lane[e.child + HB_BRANCHED_U];
        lane[e.row + HB_BRANCHED_D] -= uc * lane[e.child + HB_BRANCHED_D];
        lane[e.row + HB_BRANCHED_RHS] -= uc * lane[e.child + HB_BRANCHED_RHS];
    }
    const int end = t->task_op[task + 1], last = end - 1;
    int j = t->task_op[task];
    hb_branched_op_t op = t->ops[j], next = t->ops[j + 1 < end ? j + 1 : last];
    hb_branched_pair_t ul = HB_BRANCHED_PAIR(lane, op.row, HB_BRANCHED_U);
    hb_branched_pair_t dr = HB_BRANCHED_PAIR(lane, op.row, HB_BRANCHED_D);
    double carried_d = 0.0, carried_r = 0.0;
    for (; j < end; ++j) {
        /* ops two ahead, rows one ahead: the row loads then wait on no op load */
        const hb_branched_op_t after = t->ops[j + 2 < end ? j + 2 : last];
        const hb_branched_pair_t ul_n = HB_BRANCHED_PAIR(lane, next.row, HB_BRANCHED_U);
        const hb_branched_pair_t dr_n = HB_BRANCHED_PAIR(lane, next.row, HB_BRANCHED_D);
        const int kind = op.parent & 3;
        const double ull = kind == HB_BRANCHED_ROOT ? 0.0 : ul.x * ul.y; /* off the chain */
        const double inv = hb_multi_rcp(dr.x - carried_d);
        hb_branched_pair_t cy;
        cy.x = kind == HB_BRANCHED_ROOT ? 0.0 : ul.y * inv;
        cy.y = (dr.y - carried_r) * inv;
        HB_BRANCHED_PAIR(lane, op.row, HB_BRANCHED_D) = cy;
        const double uc = ull * inv, uy = ul.x * cy.y;
        hb_branched_pair_t *p = &HB_BRANCHED_PAIR(lane, kind & 2 ? sink : op.parent >> 2,
                                                  HB_BRANCHED_D);
        hb_branched_pair_t q = *p;
        q.x -= uc;
        q.y -= uy;
        *p = q;
        carried_d = kind == HB_BRANCHED_CARRIED ? uc : 0.0;
        carried_r = kind == HB_BRANCHED_CARRIED ? uy : 0.0;
        op = next;
        next = after;
        ul = ul_n;
        dr = dr_n;
    }
}

/*
 * Task t's substitution, rows in reverse: x = y' - c' x_parent, x_parent from the row just
 * solved when carried, else from the parent's slot (solved already: it is later in the task,
 * or in a later stage, which the substitution runs first; the zero node for the root, whose
 * c' is 0). Loads one row ahead, without branches.
 */
HB_TD_INLINE void hb_branched_substitute(const hb_branched_tables_t *t, double *lane, int task)
{
    const int begin = t->task_op[task];
    int j = t->task_op[task + 1] - 1;
    hb_branched_op_t op = t->ops[j], next = t->ops[j > begin ? j - 1 : begin];
    hb_branched_pair_t cy = HB_BRANCHED_PAIR(lane, op.row, HB_BRANCHED_D);
    double xp = lane[(op.parent >> 2) + HB_BRANCHED_RHS], x = 0.0;
    for (; j >= begin; --j) {
        const hb_branched_op_t after = t->ops[j - 2 >= begin ? j - 2 : begin];
        const hb_branched_pair_t cy_n = HB_BRANCHED_PAIR(lane, next.row, HB_BRANCHED_D);
        const double xp_n = lane[(next.parent >> 2) + HB_BRANCHED_RHS];
        x = cy.y - cy.x * ((op.parent & 3) == HB_BRANCHED_CARRIED ? x : xp);
        lane[op.row + HB_BRANCHED_RHS] = x;
        op = next;
        next = after;
        cy = cy_n;
        xp = xp_n;
    }
}

/*
 * Thread t of a team's lanes x workers threads stages (and writes back) lane *k's rows
 * *i0, *i0 + workers, ... Within a layout block (block > 1) a warp's threads take adjacent
 * systems of a row, so its loads are contiguous; in a FLAT batch (block 1) adjacent rows
 * of one system. One division per thread, none per element.
 */
HB_TD_INLINE void hb_hines_branched_thread(int t, int lanes, int workers, int block, int *k,
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

/* The sink and zero nodes' slots within a lane. */
HB_TD_INLINE int hb_branched_sink(int m, int lanes)
{
    return 4 * m * lanes;
}

/*
 * CPU twin of the CUDA kernel: every team of br->lanes systems staged into `stage`
 * (hb_hines_branched_bytes bytes, 16-byte aligned) as the kernel stages it (with br->workers
 * threads per lane, through hb_hines_branched_thread), each lane solved stage by stage,
 * x written to rhs. Any layout: system s's row i at hb_block_base(m, block, s) + i block.
 * u, l, d are not written. A team's missing systems (count not a multiple of lanes) are
 * staged as identity rows.
 */
void hb_hines_branched_solve(const hb_hines_branched_t *br, int count, int block, const double *u,
                             const double *l, const double *d, double *rhs, double *stage);

#endif
