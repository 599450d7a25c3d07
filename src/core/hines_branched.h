/*
 * Internal: BRANCHED, the same-morphology Hines kernel for few systems (docs/gpu.md), and its
 * CPU twin (hb_hines_branched_solve, tested in CI).
 *
 * A team of `lanes` adjacent systems is staged on chip as [node][lane]; lane k of every
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

/* A row operation: the row's slot (node times lanes) and its parent's, (slot << 2) | kind,
 * or -1 for the root. */
typedef struct {
    int row, parent;
} hb_branched_op_t;

enum {
    HB_BRANCHED_IN_TASK = 0, /* the parent is a later row of the task, not the next one */
    HB_BRANCHED_CARRIED = 1, /* the parent is the task's next row */
    HB_BRANCHED_LATER = 2    /* the parent is in a later stage, which gathers this row */
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

/* Staged bytes of a team: u, l, d, rhs of m rows per lane, then the tables. */
HB_TD_INLINE size_t hb_hines_branched_bytes(const hb_hines_branched_t *br)
{
    return (size_t)32 * (size_t)br->m * (size_t)br->lanes + 4 * br->words;
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
    (void)n_tasks;
    return t;
}

/* One lane's arrays: element (node, lane k) at node * lanes + k; here already at k. */
typedef struct {
    const double *u, *l; /* u: row(parent) <- this node; l: row(this) <- parent */
    double *d, *rhs;     /* after the elimination c' and y'; after the substitution x in rhs */
} hb_branched_lane_t;

/*
 * Task t's elimination: gathers, then rows in order, row by row
 *     c' = l / d', y' = (rhs - carried) / d', the parent's d -= u c', rhs -= u y'
 * with d' = d - carried. The next row's inputs are loaded before this row's stores (the
 * next row is never a non-carried parent, so no store changes them).
 */
HB_TD_INLINE void hb_branched_eliminate(const hb_branched_tables_t *t, hb_branched_lane_t a,
                                        int task)
{
    for (int g = t->task_gather[task]; g < t->task_gather[task + 1]; ++g) {
        const hb_branched_gather_t e = t->gathers[g];
        const double uc = a.u[e.child];
        a.d[e.row] -= uc * a.d[e.child];
        a.rhs[e.row] -= uc * a.rhs[e.child];
    }
    const int end = t->task_op[task + 1];
    int j = t->task_op[task];
    if (j >= end) return;
    hb_branched_op_t op = t->ops[j];
    double dd = a.d[op.row], rr = a.rhs[op.row], ll = a.l[op.row], uu = a.u[op.row];
    double carried_d = 0.0, carried_r = 0.0;
    for (; j < end; ++j) {
        hb_branched_op_t next = op;
        double dd_n = 0.0, rr_n = 0.0, ll_n = 0.0, uu_n = 0.0;
        if (j + 1 < end) {
            next = t->ops[j + 1];
            dd_n = a.d[next.row];
            rr_n = a.rhs[next.row];
            ll_n = a.l[next.row];
            uu_n = a.u[next.row];
        }
        const double inv = hb_multi_rcp(dd - carried_d);
        const double c = op.parent >= 0 ? ll * inv : 0.0, y = (rr - carried_r) * inv;
        a.d[op.row] = c;
        a.rhs[op.row] = y;
        carried_d = carried_r = 0.0;
        if (op.parent >= 0) {
            const int kind = op.parent & 3;
            if (kind == HB_BRANCHED_CARRIED) {
                carried_d = uu * c;
                carried_r = uu * y;
            } else if (kind == HB_BRANCHED_IN_TASK) {
                const int p = op.parent >> 2;
                a.d[p] -= uu * c;
                a.rhs[p] -= uu * y;
            }
        }
        op = next;
        dd = dd_n;
        rr = rr_n;
        ll = ll_n;
        uu = uu_n;
    }
}

/* x of op's parent from its slot, when it is not carried (0 for the root). */
HB_TD_INLINE double hb_branched_parent_x(hb_branched_lane_t a, hb_branched_op_t op)
{
    return op.parent >= 0 && (op.parent & 3) != HB_BRANCHED_CARRIED ? a.rhs[op.parent >> 2] : 0.0;
}

/*
 * Task t's substitution, rows in reverse: x = y' - c' x_parent, x_parent from the row just
 * solved when carried, else from the parent's slot (solved already: it is later in the task,
 * or in a later stage, which the substitution runs first). Loads one row ahead.
 */
HB_TD_INLINE void hb_branched_substitute(const hb_branched_tables_t *t, hb_branched_lane_t a,
                                         int task)
{
    const int begin = t->task_op[task];
    int j = t->task_op[task + 1] - 1;
    if (j < begin) return;
    hb_branched_op_t op = t->ops[j];
    double y = a.rhs[op.row], c = a.d[op.row];
    double xp = hb_branched_parent_x(a, op), x = 0.0;
    for (; j >= begin; --j) {
        hb_branched_op_t next = op;
        double y_n = 0.0, c_n = 0.0, xp_n = 0.0;
        if (j > begin) {
            next = t->ops[j - 1];
            y_n = a.rhs[next.row];
            c_n = a.d[next.row];
            xp_n = hb_branched_parent_x(a, next);
        }
        /* the root: c' = 0 and xp = 0 */
        x = y - c * (op.parent >= 0 && (op.parent & 3) == HB_BRANCHED_CARRIED ? x : xp);
        a.rhs[op.row] = x;
        op = next;
        y = y_n;
        c = c_n;
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

/*
 * CPU twin of the CUDA kernel: every team of br->lanes systems staged into `stage`
 * (hb_hines_branched_bytes bytes, 8-byte aligned) as the kernel stages it (with br->workers
 * threads per lane, through hb_hines_branched_thread), each lane solved stage by stage,
 * x written to rhs. Any layout: system s's row i at hb_block_base(m, block, s) + i block.
 * u, l, d are not written. A team's missing systems (count not a multiple of lanes) are
 * staged as identity rows.
 */
void hb_hines_branched_solve(const hb_hines_branched_t *br, int count, int block, const double *u,
                             const double *l, const double *d, double *rhs, double *stage);

#endif
