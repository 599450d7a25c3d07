/*
 * Mixed-morphology batches: the plain data a solve reads (docs/multi.md), shared by the core,
 * the CPU backend and the CUDA kernels, and the backend-neutral host planners that build it.
 *
 * Every cell is cut into branches; a branch's height is 0 without child
 * branches, else 1 + its children's largest. A *plan* lays the branches out
 * in groups of cells: group g holds its cells' rows in slots
 * [slot_base[g], slot_base[g + 1]); within a group, level h holds the
 * group's branches of height h, sorted by (rows descending, cell, top node),
 * each level ragged-interleaved: row r (r = 0 the branch's deepest node,
 * r = rows - 1 its top) of branch b of level h is the group-local slot
 *     row_base[level_row[h] + r] + (b - level_branch[h])
 * with only the branches longer than r present in row r (they are the first
 * ones, by the sort): no padding, and a row of a level is contiguous.
 *
 * LEVELS (the paper's method) is the plan of one group holding every cell;
 * GROUPED (ours) packs the cells, longest critical path first, into groups
 * that fit a GPU block's shared memory. A group's view (hb_multi_view_t) has
 * group-local slots and tables, so the same per-branch functions
 * (common/multi_arith.h) serve the whole batch, one group in global memory,
 * or one group staged on chip.
 */
#ifndef HB_COMMON_MULTI_PLAN_H
#define HB_COMMON_MULTI_PLAN_H

#include <stddef.h>

#include "hinesbatch.h"

#define HB_MULTI_NO_PARENT ((size_t)-1)

/* Everything a level kernel reads for one group: plain pointers (host, device or shared). */
typedef struct {
    int n_levels;
    const int *level_branch; /* [n_levels + 1]: first branch (plan-wide id) of each level */
    const int *level_row;    /* [n_levels + 1]: first entry of each level in row_base */
    const size_t *row_base;  /* group-local slot of row r of a level's first branch */
    const int *rows;         /* [branches of the plan]: rows of each branch */
    const int *child_ptr;    /* [branches + 1]: child branches in CSR form */
    const size_t *child_top; /* group-local top slots of the child branches, top node descending */
    const size_t *parent_slot; /* group-local slot of the parent node, or HB_MULTI_NO_PARENT */
    /* Group-local slot order. u: coupling row(parent) <- this node; l: row(this) <- parent.
     * l is written only by split chunks (their spikes), which run on a copy. */
    const double *u;
    double *l;
    double *d, *rhs; /* on return of the forward pass: c' and y'; then x in rhs */
    int split_rows;  /* GROUPED: branches of split_rows rows or more are split (0: none) */
    int n_split;     /* the split branches: level split_level[i], branch split_branch[i] */
    const int *split_level, *split_branch;
} hb_multi_view_t;

/* A layout of the branches of every cell in groups of cells (see above). */
typedef struct {
    int n_groups, n_branches;
    size_t n_slots;          /* = rows of all cells */
    size_t *slot_base;       /* [n_groups + 1] first slot of each group */
    int *level_off;          /* [n_groups + 1] group g's levels: entries level_off[g] ..
                                level_off[g + 1] - 1 of level_branch and level_row (one more
                                than its levels) */
    int *row_off;            /* [n_groups + 1] first entry of each group in row_base */
    int *level_branch, *level_row; /* [level_off[n_groups]] */
    size_t *row_base;        /* [row_off[n_groups]] group-local slots */
    int *rows, *child_ptr;   /* [n_branches], [n_branches + 1] */
    size_t *child_top;       /* [n_branches] (at most: one per non-root branch) */
    size_t *parent_slot;     /* [n_branches] */
    size_t *node_slot;       /* [rows of all cells] plan-wide slot of each node, cell after cell */
    size_t max_group_rows;   /* the largest group */
    int max_group_row_entries; /* the largest row_off[g + 1] - row_off[g] */
    int max_levels;          /* the most levels of a group */
    int max_branch_rows;
    int split_rows;          /* GROUPED: branches this long or longer are split, 0: none */
    int *split_off;          /* [n_groups + 1] group g's split branches: entries split_off[g] ..
                                split_off[g + 1] - 1 of split_level (group-local level) and
                                split_branch */
    int *split_level, *split_branch; /* [split_off[n_groups]] */
} hb_multi_plan_t;

/*
 * A group staged on chip keeps its tables beside its arrays, rebased so that its branches,
 * child entries and levels count from 0: the level loops then never wait on global memory
 * for a branch's rows, children or parent. hb_multi_stage_tables writes them,
 * hb_multi_staged_view reads them; the GROUPED kernel and its CPU twin go through the same
 * two functions.
 */
typedef struct {
    int entries;  /* row_base */
    int children; /* child_top */
    int branches; /* rows, parent_slot; child_ptr has one more */
    int levels;   /* level_branch and level_row have one more */
    int splits;   /* split_level, split_branch */
} hb_multi_dims_t;

/* Where each staged table starts in a block of hb_multi_table_bytes at `tables`. */
typedef struct {
    size_t *row_base, *child_top, *parent_slot;
    int *rows, *child_ptr, *level_branch, *level_row, *split_level, *split_branch;
} hb_multi_tables_t;

/* The cells of a batch as the planners read them (borrowed arrays). */
typedef struct {
    int n_cells;
    const int *m;             /* [n_cells] rows per cell */
    const size_t *cell_first; /* [n_cells + 1] first node of each cell */
    const int *parent;        /* [n_rows] every cell's parent array, cell after cell */
    size_t n_rows;
    int max_m;
} hb_multi_cells_t;

/*
 * GROUPED splits branches of `rows` rows or more (0: none; else at least
 * HB_MULTI_MIN_SPLIT_ROWS) into chunks of about sqrt(rows). Default HB_MULTI_SPLIT_ROWS, or
 * the tuning multi.split_rows (backend/tuning.h) read by hb_multi_create. No effect on LEVELS
 * and PER_CELL.
 */
#define HB_MULTI_SPLIT_ROWS 64
#define HB_MULTI_MIN_SPLIT_ROWS 4

/* Branches of every cell (the planners' ids are ints: the core checks this first); nchild:
 * scratch of max_m ints. */
size_t hb_multi_count_branches(const hb_multi_cells_t *cells, int *nchild);
/*
 * Plans the branches of every cell in groups: cells order[gstart[g]] ..
 * order[gstart[g + 1] - 1] form group g. Returns HB_SUCCESS or HB_ERR_ALLOC
 * (recorded); on failure the plan is freed. No split lists: hb_multi_plan_splits.
 */
hb_status_t hb_multi_plan(const hb_multi_cells_t *cells, const int *order, const int *gstart,
                          int n_groups, hb_multi_plan_t *plan);
/* The split branches of every group of plan (those of split_rows rows or more, 0: none). */
hb_status_t hb_multi_plan_splits(hb_multi_plan_t *plan, int split_rows);
void hb_multi_plan_free(hb_multi_plan_t *plan);
/*
 * GROUPED's plan for groups of about `group_rows` rows: cells sorted by their
 * cost (the sum over their levels of the longest branch, times 8 for a cell
 * larger than a group, which a GPU runs from global memory), longest first,
 * then packed in that order; branches of split_rows rows or more split (0:
 * none). *plan is built anew (freed on failure).
 */
hb_status_t hb_multi_plan_groups(const hb_multi_cells_t *cells, size_t group_rows,
                                 int split_rows, hb_multi_plan_t *plan);
/*
 * Checks a plan of the cells: every table's size against the counts the CUDA install copies
 * (n_groups + 1, level_off[n_groups], row_off[n_groups], n_branches), every index a kernel
 * reads inside them (level, row table, branch, child and parent slots), each group's branches
 * following the previous group's (its staged tables are rebased on that), each group's slots a
 * permutation of its range, children in lower
 * levels and parents in higher ones, node_slot a permutation, the max_* fields. Returns 0, or
 * -1 with the first violation in why (O(rows); for tests and debugging).
 */
int hb_multi_plan_verify(const hb_multi_cells_t *cells, const hb_multi_plan_t *plan, char *why,
                         size_t why_len);

#endif
