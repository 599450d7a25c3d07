/*
 * Internal: SHAPES, ours, for mixed batches (docs/multi.md): cells grouped by their tree
 * (identical parent arrays: the same topology, while u, l, d and rhs may all differ), each
 * class solved as a same-morphology batch by issue 3's branched plan (core/hines_branched.h):
 * teams of `lanes` cells of one class staged on chip, the tree's serial subtrees shared out
 * stage by stage, only x written back.
 *
 * Class k's storage starts at base and is block-interleaved by teams: member j's row i is
 *     base + (j / lanes) * lanes * m + i * lanes + j % lanes
 * so a team's rows are one contiguous range (the last team padded to `lanes` members).
 * Lanes: the most of 16, 8, 4, 2, 1 whose team fits `small_bytes` of shared memory (tier 0;
 * on an H100 two blocks a multiprocessor); a cell too large for one lane there takes one lane
 * within `large_bytes` (tier 1), its plan tables staged too when they fit, else read from
 * memory (global_tables). One CUDA launch per tier; a tier's classes are numbered by teams
 * (team_first), larger cells first.
 */
#ifndef HB_CORE_MULTI_SHAPES_H
#define HB_CORE_MULTI_SHAPES_H

#include <stddef.h>

#include "core/hines_branched.h"
#include "core/multi.h"

typedef struct {
    int m;            /* rows of each member */
    int cells;        /* members */
    int lanes;        /* cells per team: the block of the class's layout */
    int tier;         /* 0 or 1 */
    int global_tables; /* tier 1: the tables stay in memory (the cell alone fills a block) */
    int team_first;   /* first team of the class within its tier */
    size_t base;      /* first element of its storage */
    size_t bytes;     /* shared memory one team takes (hb_branched_layout) [bytes] */
    size_t table_off; /* first word of its plan's tables in hb_multi_shapes_t.tables */
    hb_hines_branched_t plan;
} hb_multi_shape_t;

typedef struct hb_multi_shapes {
    int n_classes;
    hb_multi_shape_t *cls; /* tier 0 first, then tier 1 */
    size_t *node_index;    /* [rows] element of node cell_first[c] + i */
    size_t size;           /* elements per array, teams padded */
    int *tables;           /* every class's plan tables, class after class */
    size_t words;
    int tier_classes[2];   /* classes of each tier */
    int tier_teams[2];     /* teams of each tier */
    size_t tier_bytes[2];  /* shared memory of a tier's largest team [bytes] */
    size_t small_bytes, large_bytes; /* the budgets it was planned for [bytes] */
    int threads;           /* lanes x workers of every team */
} hb_multi_shapes_t;

/* The CPU twin's small budget: an H100's, so CI plans as the GPU does [bytes]. */
#define HB_MULTI_SHAPES_CPU_BYTES ((size_t)112 * 1024)
/* Threads of a team (lanes x workers), as the CUDA kernel's blocks. */
#define HB_MULTI_SHAPES_THREADS 256

/* Classes of identical parent arrays: mb->shape[c], numbered in order of first appearance. */
hb_status_t hb_multi_find_shapes(struct hb_multi *mb);
/*
 * SHAPES's plan for the budgets (mb->shapes_bytes, from HB_MULTI_SHAPES_BYTES, replaces
 * small_bytes when set: tests), with `threads` / lanes workers per team; replaces mb->shapes
 * when the budgets differ. HB_ERR_NOT_SUPPORTED when a cell exceeds large_bytes with one lane.
 */
hb_status_t hb_multi_plan_shapes(struct hb_multi *mb, size_t small_bytes, size_t large_bytes,
                                 int threads);
void hb_multi_shapes_free(hb_multi_shapes_t *shapes);

/* CPU twin: every team of every class (OpenMP over teams) on arrays in the SHAPES layout. */
hb_status_t hb_multi_cpu_solve_shapes(hb_context_t ctx, const hb_multi_shapes_t *shapes,
                                      const double *u, const double *l, const double *d,
                                      double *rhs);

#endif
