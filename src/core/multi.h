/*
 * Internal: mixed-morphology batches (docs/multi.md), the facade's side (src/core/multi.c):
 * the batch, its AUTO rules and the planning calls the tests reach. The plans and their
 * arithmetic are common/multi_plan.h and common/multi_arith.h, SHAPES common/multi_shapes.h,
 * the backends' operations backend/multi_ops.h.
 */
#ifndef HB_CORE_MULTI_H
#define HB_CORE_MULTI_H

#include <stddef.h>

#include "backend/backend.h"
#include "common/multi_arith.h"
#include "common/multi_plan.h"
#include "common/multi_shapes.h"
#include "hinesbatch.h"

/*
 * AUTO on CUDA (H100 bench multi, docs/design-notes.md "Mixed batches"): GROUPED up to
 * HB_MULTI_AUTO_GROUPED_ROWS rows in the batch, and up to HB_MULTI_AUTO_DEEP_ROWS when the
 * cells have HB_MULTI_AUTO_DEEP_LEVELS levels or more; LEVELS beyond. LEVELS pays a launch
 * and a latency-bound pass per level, GROUPED a latency-bound block per group whatever the
 * levels: real cells (39 levels) ran GROUPED 1.2-1.7x faster than LEVELS at 4.2-7.7 million
 * rows, Figure 6 at 50% branches (20 levels) 1.1-1.2x at 6.1-13 million; Figure 14 (2-4
 * levels) ran LEVELS 1.9-3.9x faster at 5.4-13 million and Figure 6 at 10% (14 levels)
 * 1.1-1.5x; LEVELS led real cells at 19.7 million rows (1.3x).
 */
#define HB_MULTI_AUTO_GROUPED_ROWS ((size_t)1 << 22)
/*
 * AUTO on CUDA takes SHAPES first (common/multi_shapes.h) when the cells repeat their trees, at
 * least HB_MULTI_AUTO_SHAPES_CELLS cells per distinct tree on average, and no cell has more
 * than HB_MULTI_AUTO_SHAPES_ROWS rows (so that every cell fits a block's shared memory on an
 * H100). On an H100 with split chains (bench/results/multi-h100.md) SHAPES ran
 * real cells (18 trees) 1.7-2.1x faster than the best other algorithm at 256 to 25,600 cells,
 * Figure 6 (256 trees) 1.06-1.2x at 2,560 cells and 1.5-2.7x at 25,600, Figure 14 (one tree)
 * 1.4-1.8x at 256 cells, 2.7-4.0x at 2,560, 1.06-1.14x at 25,600 and 0.98-1.09x at 256,000
 * (against LEVELS, which streams few wide levels). Until chains were split, Figure 14's 256-row
 * chain made LEVELS 1.6-1.9x faster at 25,600, and the rule kept large batches of few levels
 * away from SHAPES.
 */
#define HB_MULTI_AUTO_SHAPES_CELLS 8
#define HB_MULTI_AUTO_SHAPES_ROWS 4000
#define HB_MULTI_AUTO_DEEP_ROWS ((size_t)1 << 24)
#define HB_MULTI_AUTO_DEEP_LEVELS 16

/* Bits of the arrays the device holds newer than the host copy. */
enum { HB_MULTI_NEWER_D = 1, HB_MULTI_NEWER_RHS = 2 };

struct hb_multi {
    hb_context_t *ctx; /* borrowed: must outlive the batch */
    int n_cells;
    int *m;              /* [n_cells] rows per cell */
    size_t *cell_first;  /* [n_cells + 1] first node of each cell */
    int *parent;         /* [rows] every cell's parent array, cell after cell */
    size_t n_rows;
    int max_m;
    hb_multi_algo_t algo;
    hb_multi_plan_t levels;   /* LEVELS: one group; the host copy's layout */
    hb_multi_plan_t *grouped; /* GROUPED, planned at its first solve (NULL before) */
    int *shape;               /* [n_cells] class of identical parent arrays (common/multi_shapes.h) */
    int n_shapes;
    hb_multi_shapes_knobs_t shapes_knobs; /* SHAPES's tuning (multi.shapes_*), read at create */
    struct hb_multi_shapes *shapes; /* SHAPES, planned at its first solve (NULL before) */
    size_t group_rows;        /* GROUPED: the group size it was planned for */
    int split_rows;           /* GROUPED: branches this long or longer are split (0: none) */
    double *u, *l, *d, *rhs;  /* host copy, in the layout of `levels` */
    void *device;             /* the backend's state (ctx->ops->multi); NULL: it solves the host copy */
    int device_layout;        /* the algorithm whose layout the device holds (0: none) */
    int host_dirty;           /* the host copy changed since the last upload */
    int device_newer;         /* HB_MULTI_NEWER_* */
};

/* GROUPED's plan (hb_multi_plan_groups) for groups of about `group_rows` rows, branches of
 * split_rows rows or more split (0: none); replaces mb->grouped when group_rows or split_rows
 * differs. */
hb_status_t hb_multi_plan_grouped(struct hb_multi *mb, size_t group_rows, int split_rows);
/* GROUPED's split rows (0 or >= HB_MULTI_MIN_SPLIT_ROWS); re-planned at the next solve. */
hb_status_t hb_multi_set_split_rows(struct hb_multi *mb, int rows);
/* hb_multi_plan_verify on mb's cells. */
int hb_multi_plan_check(const struct hb_multi *mb, const hb_multi_plan_t *plan, char *why,
                        size_t why_len);
/* SHAPES's plan (hb_multi_shapes_plan) for device `dev` with mb's tuning; replaces
 * mb->shapes when the device or threads differ. */
hb_status_t hb_multi_plan_shapes(struct hb_multi *mb, const hb_multi_shapes_device_t *dev,
                                 int threads);

#endif
