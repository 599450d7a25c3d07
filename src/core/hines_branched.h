/*
 * Internal: BRANCHED, the same-morphology Hines kernel for few systems (docs/gpu.md), and its
 * CPU twin (hb_hines_branched_solve, tested in CI).
 *
 * A team of `lanes` adjacent systems is staged on chip; lane k of every sub-team of `lanes`
 * threads works on system k, and the sub-teams share out the branches of each level: the
 * mixed-morphology GROUPED method (core/multi.h, split branches included) run on one cell's
 * plan by lanes identical cells at once. Every lane of a sub-team follows the same branch,
 * so a warp does not diverge, and a row of the team is `lanes` adjacent doubles.
 *
 * The plan is hb_multi_plan_cell's, with every slot in its tables (row_base, child_top,
 * parent_slot, node_slot) multiplied by lanes: the staged arrays are [slot][lane], and lane
 * k's view (hb_hines_branched_view) starts at element k with view.lanes = lanes.
 */
#ifndef HB_CORE_HINES_BRANCHED_H
#define HB_CORE_HINES_BRANCHED_H

#include <stddef.h>

#include "core/multi.h"

/* Sizes of the plan's tables, which a team stages after its arrays. */
typedef struct {
    int entries;  /* row_base */
    int children; /* child_top */
    int branches; /* rows, parent_slot; child_ptr has one more */
    int levels;   /* level_branch and level_row have one more */
    int splits;   /* split_level, split_branch */
} hb_hines_branched_dims_t;

typedef struct {
    int m, lanes;
    hb_multi_plan_t plan; /* one cell, one group; slots times lanes */
    hb_hines_branched_dims_t dims;
} hb_hines_branched_t;

/* Builds the plan for systems of m rows (parent[0] = -1), teams of `lanes` systems, branches of
 * split_rows rows or more split (0: none). On failure br is zeroed. */
hb_status_t hb_hines_branched_build(int m, const int *parent, int lanes, int split_rows,
                                    hb_hines_branched_t *br);
void hb_hines_branched_free(hb_hines_branched_t *br);

/* Bytes of the staged tables: the size_t ones (row_base, child_top, parent_slot), then the int
 * ones (rows, child_ptr, level_branch, level_row, split_level, split_branch). */
HB_TD_INLINE size_t hb_hines_branched_table_bytes(const hb_hines_branched_dims_t *t)
{
    return 8 * ((size_t)t->entries + (size_t)t->children + (size_t)t->branches) +
           4 * (2 * (size_t)t->branches + 1 + 2 * ((size_t)t->levels + 1) + 2 * (size_t)t->splits);
}

/* Staged bytes of a team: u, l, d, rhs of m rows per lane, then the tables. */
HB_TD_INLINE size_t hb_hines_branched_bytes(int m, int lanes, const hb_hines_branched_dims_t *t)
{
    return (size_t)32 * (size_t)m * (size_t)lanes + hb_hines_branched_table_bytes(t);
}

/*
 * Copies the plan's tables to `tables` (hb_hines_branched_table_bytes, 8-byte aligned), entries
 * first, first + stride, ... (a CUDA block's threads share it out): on chip, the level loops
 * never wait on global memory for the next branch's rows, children or parent.
 */
HB_TD_INLINE void hb_hines_branched_stage_tables(const hb_multi_plan_t *p,
                                                 const hb_hines_branched_dims_t *t, void *tables,
                                                 int first, int stride)
{
    size_t *rb = (size_t *)tables, *ct = rb + t->entries, *ps = ct + t->children;
    int *rows = (int *)(ps + t->branches), *cp = rows + t->branches, *lb = cp + t->branches + 1;
    int *lr = lb + t->levels + 1, *sl = lr + t->levels + 1, *sb = sl + t->splits;
    for (int j = first; j < t->entries; j += stride) rb[j] = p->row_base[j];
    for (int j = first; j < t->children; j += stride) ct[j] = p->child_top[j];
    for (int j = first; j < t->branches; j += stride) {
        ps[j] = p->parent_slot[j];
        rows[j] = p->rows[j];
    }
    for (int j = first; j <= t->branches; j += stride) cp[j] = p->child_ptr[j];
    for (int j = first; j <= t->levels; j += stride) {
        lb[j] = p->level_branch[j];
        lr[j] = p->level_row[j];
    }
    for (int j = first; j < t->splits; j += stride) {
        sl[j] = p->split_level[j];
        sb[j] = p->split_branch[j];
    }
}

/*
 * Element e (0 <= e < m lanes) of a team's staging: row *i of lane *k. Within a layout
 * block (block > 1) adjacent e are adjacent systems of one row, so the loads of a warp
 * are contiguous; FLAT batches (block 1) go row by row within a system.
 */
HB_TD_INLINE void hb_hines_branched_element(size_t e, int m, int lanes, int block, int *i, int *k)
{
    if (block > 1) {
        *i = (int)(e / (size_t)lanes);
        *k = (int)(e % (size_t)lanes);
    } else {
        *k = (int)(e / (size_t)m);
        *i = (int)(e % (size_t)m);
    }
}

/* Lane k's view of a team staged at `staged`: u, l, d, rhs (m lanes elements each), then the
 * tables of hb_hines_branched_stage_tables. */
HB_TD_INLINE hb_multi_view_t hb_hines_branched_view(const hb_hines_branched_dims_t *t,
                                                    int split_rows, double *staged, int m,
                                                    int lanes, int k)
{
    const size_t n = (size_t)m * (size_t)lanes;
    const size_t *rb = (const size_t *)(staged + 4 * n), *ct = rb + t->entries;
    const size_t *ps = ct + t->children;
    const int *rows = (const int *)(ps + t->branches), *cp = rows + t->branches;
    const int *lb = cp + t->branches + 1, *lr = lb + t->levels + 1, *sl = lr + t->levels + 1;
    hb_multi_view_t v;
    v.n_levels = t->levels;
    v.level_branch = lb;
    v.level_row = lr;
    v.row_base = rb;
    v.rows = rows;
    v.child_ptr = cp;
    v.child_top = ct;
    v.parent_slot = ps;
    v.u = staged + k;
    v.l = staged + n + k;
    v.d = staged + 2 * n + k;
    v.rhs = staged + 3 * n + k;
    v.split_rows = split_rows;
    v.n_split = t->splits;
    v.split_level = sl;
    v.split_branch = sl + t->splits;
    v.lanes = lanes;
    return v;
}

/*
 * CPU twin of the CUDA kernel: every team of br->lanes systems staged into `stage`
 * (hb_hines_branched_bytes bytes, 8-byte aligned) as the kernel stages it, each lane solved,
 * x written to rhs. Any layout: system s's row i at hb_block_base(m, block, s) + i block.
 * u, l, d are not written. A team's missing systems (count not a multiple of lanes) are
 * staged as identity rows.
 */
void hb_hines_branched_solve(const hb_hines_branched_t *br, int count, int block, const double *u,
                             const double *l, const double *d, double *rhs, double *stage);

#endif
