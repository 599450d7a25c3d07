/*
 * SHAPES, ours, for mixed batches (docs/multi.md): cells grouped by their tree
 * (identical parent arrays: the same topology, while u, l, d and rhs may all differ), each
 * class solved as a same-morphology batch by the branched plan (common/hines_branched.h):
 * teams of `lanes` cells of one class staged on chip, the tree's serial subtrees shared out
 * stage by stage, only x written back.
 *
 * Class k's storage starts at base and is block-interleaved by teams: member j's row i is
 *     base + (j / lanes) * lanes * m + i * lanes + j % lanes
 * so a team's rows are one contiguous range (the last team padded to `lanes` members).
 * Occupancy per class: a class runs `per_sm` blocks a multiprocessor (1 to max_per_sm) with
 * `lanes` (1 to 16) cells a team, the pair of the least modelled time (hb_multi_shapes_time):
 * big cells trade lanes for blocks where their one lane leaves a block's shared memory half
 * empty. A cell too large for one lane anywhere takes one lane in a block of its own, its plan
 * tables staged too when they fit, else read from memory (global_tables). One CUDA launch per
 * tier (the classes of one `per_sm`, tier = per_sm - 1, run first); a tier's classes are
 * numbered by teams (team_first), larger cells first.
 */
#ifndef HB_COMMON_MULTI_SHAPES_H
#define HB_COMMON_MULTI_SHAPES_H

#include <stddef.h>

#include "common/hines_branched.h"
#include "common/hostdev.h"
#include "common/multi_plan.h"

/* Blocks a multiprocessor a SHAPES launch may run: three 256-thread blocks of shapes_kernel's
 * 80 registers fill an H100's 64 K. */
#define HB_MULTI_SHAPES_TIERS 3
/* Threads of a team's block, as the CUDA kernel's blocks. */
#define HB_MULTI_SHAPES_THREADS 256
/* The time model's copy of a row in and out, in the plan's cost unit (half-row steps): from
 * H100 measurements of real cells (25,600: solve alone 549 us for 8,743
 * half-rows a block, two blocks a multiprocessor, 63 ns each; loads and stores alone 317 us,
 * 2.1 ns a row a multiprocessor): 1 / 30. */
#define HB_MULTI_SHAPES_COPY_PER_ROW (1.0 / 30.0)
/* The time model's staging of a class's tables by a block that enters it, beside the words'
 * copy: one memory latency, about 1 us on an H100 (16 half-rows). */
#define HB_MULTI_SHAPES_STAGE_COST 16.0
/* Another choice replaces the fixed rule only when the model gives it this fraction of the
 * rule's time or less: on an H100 the model's gains came out at about half their size, and
 * Figure 14 (4 levels, 25,600 cells) lost 10% where it foresaw 3% (docs/design-notes.md "Mixed batches"). */
#define HB_MULTI_SHAPES_RULE_MARGIN 0.9

/* The device SHAPES plans for. */
typedef struct {
    size_t sm_bytes;    /* shared memory of a multiprocessor [bytes] */
    size_t block_bytes; /* the most one block may have (opt-in) [bytes] */
    int max_per_sm;     /* blocks of HB_MULTI_SHAPES_THREADS a multiprocessor can run, at most
                         * HB_MULTI_SHAPES_TIERS (registers) */
    int sms;            /* multiprocessors */
} hb_multi_shapes_device_t;

/* The CPU twin plans for an H100 (228 KB a multiprocessor, 227 KB a block, three blocks, 132
 * multiprocessors), so CI tests the plans the GPU runs. */
#define HB_MULTI_SHAPES_CPU_DEVICE ((hb_multi_shapes_device_t){233472, 232448, 3, 132})

typedef struct {
    int m;            /* rows of each member */
    int cells;        /* members */
    int lanes;        /* cells per team: the block of the class's layout */
    int tier;         /* per_sm - 1: blocks of the class's launch a multiprocessor, less one */
    int global_tables; /* one block a multiprocessor: the tables stay in memory (the cell alone
                        * fills the block) */
    int team_first;   /* first team of the class within its tier */
    size_t base;      /* first element of its storage */
    size_t bytes;     /* shared memory one team takes (hb_branched_layout) [bytes] */
    size_t table_off; /* first word of its plan's tables in hb_multi_shapes_t.tables */
    hb_hines_branched_t plan;
} hb_multi_shape_t;

/* Teams of class k: its cells in teams of k->lanes, the last one padded. */
HB_HOSTDEV int hb_multi_shape_teams(const hb_multi_shape_t *k)
{
    return (k->cells + k->lanes - 1) / k->lanes;
}

typedef struct hb_multi_shapes {
    int n_classes;
    hb_multi_shape_t *cls; /* tier 0 first, then tier 1 */
    size_t *node_index;    /* [rows] element of node cell_first[c] + i */
    size_t size;           /* elements per array, teams padded */
    int *tables;           /* every class's plan tables, class after class */
    size_t words;
    int tier_classes[HB_MULTI_SHAPES_TIERS]; /* classes of each tier */
    int tier_teams[HB_MULTI_SHAPES_TIERS];   /* teams of each tier */
    size_t tier_bytes[HB_MULTI_SHAPES_TIERS]; /* shared memory of a tier's largest team [bytes] */
    hb_multi_shapes_device_t device;         /* what it was planned for */
    int threads;           /* threads of every team's block (lanes x workers of a team, or up
                            * to lanes - 1 more, idle) */
} hb_multi_shapes_t;

/* Classes of identical parent arrays: shape[c] ([n_cells]), numbered in order of first
 * appearance; *n_shapes of them. */
hb_status_t hb_multi_find_shapes(const hb_multi_cells_t *cells, int *shape, int *n_shapes);
/*
 * Modelled time of a class planned as *k (lanes, per_sm, plan cost), in half-row steps: a
 * team's period is max(S + M, per_sm M), with S the plan's cost and M its copies in and out
 * (lanes m rows, HB_MULTI_SHAPES_COPY_PER_ROW each; the per_sm blocks' copies share the
 * multiprocessor's bandwidth, and a block's own copies do not overlap its solve); the class
 * takes at least one period, and teams / (per_sm sms) of them when it fills the device.
 */
double hb_multi_shapes_time(const hb_multi_shape_t *k, int sms);
/* The tuning SHAPES plans with (backend/tuning.h's multi.shapes_*). */
typedef struct {
    size_t bytes;   /* caps every block's shared memory [bytes] (0: none; tests) */
    int split_rows; /* chains this long or longer are split (0: none; -1: as
                     * hb_branched_split_pays says) */
    int choice;     /* -1 each class's fastest occupancy, t every class in tier t (t + 1 blocks
                     * a multiprocessor), HB_MULTI_SHAPES_TIERS the fixed rule; -2: the time
                     * model chooses */
} hb_multi_shapes_knobs_t;
/*
 * SHAPES's plan of the cells, whose classes are shape[] (hb_multi_find_shapes), for device
 * `dev`, with `threads` / lanes workers per team, into *s (built anew; freed on failure).
 * HB_ERR_NOT_SUPPORTED when a cell exceeds dev->block_bytes with one lane.
 */
hb_status_t hb_multi_shapes_plan(const hb_multi_cells_t *cells, const int *shape, int n_shapes,
                                 const hb_multi_shapes_knobs_t *knobs,
                                 const hb_multi_shapes_device_t *dev, int threads,
                                 hb_multi_shapes_t *s);
void hb_multi_shapes_free(hb_multi_shapes_t *shapes);

#endif
