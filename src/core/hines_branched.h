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

typedef struct {
    int m, lanes;
    hb_multi_plan_t plan; /* one cell, one group; slots times lanes */
    hb_multi_dims_t dims;   /* its tables' sizes (staged after the arrays) */
} hb_hines_branched_t;

/* Builds the plan for systems of m rows (parent[0] = -1), teams of `lanes` systems, branches of
 * split_rows rows or more split (0: none). On failure br is zeroed. */
hb_status_t hb_hines_branched_build(int m, const int *parent, int lanes, int split_rows,
                                    hb_hines_branched_t *br);
/* Scales a plan built with 1 lane to `lanes` (its table sizes do not depend on the lanes, so a
 * caller can choose the lanes from them first). */
hb_status_t hb_hines_branched_set_lanes(hb_hines_branched_t *br, int lanes);
void hb_hines_branched_free(hb_hines_branched_t *br);

/* Staged bytes of a team: u, l, d, rhs of m rows per lane, then the tables. */
HB_TD_INLINE size_t hb_hines_branched_bytes(int m, int lanes, const hb_multi_dims_t *t)
{
    return (size_t)32 * (size_t)m * (size_t)lanes + hb_multi_table_bytes(t);
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

/* Lane k's view of a team staged at `staged`: u, l, d, rhs (m lanes elements each), then the
 * tables (hb_multi_stage_tables of group 0). */
HB_TD_INLINE hb_multi_view_t hb_hines_branched_view(const hb_multi_dims_t *t, int split_rows,
                                                    double *staged, int m, int lanes, int k)
{
    const size_t n = (size_t)m * (size_t)lanes;
    return hb_multi_staged_view(t, split_rows, staged + 4 * n, staged + k, staged + n + k,
                                staged + 2 * n + k, staged + 3 * n + k, lanes);
}

/*
 * CPU twin of the CUDA kernel: every team of br->lanes systems staged into `stage`
 * (hb_hines_branched_bytes bytes, 8-byte aligned) as the kernel stages it (with `workers`
 * threads per lane, through hb_hines_branched_thread), each lane solved,
 * x written to rhs. Any layout: system s's row i at hb_block_base(m, block, s) + i block.
 * u, l, d are not written. A team's missing systems (count not a multiple of lanes) are
 * staged as identity rows.
 */
void hb_hines_branched_solve(const hb_hines_branched_t *br, int count, int block, int workers,
                             const double *u, const double *l, const double *d, double *rhs,
                             double *stage);

#endif
