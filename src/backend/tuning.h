/*
 * Measurement overrides of the kernels' shapes: one typed structure on each context, set by
 * the benchmark drivers and tests through hb_context_set_tuning (src/core/bench.h), parsed by
 * one parser (src/core/tuning.c) and documented in one table (docs/tuning.md). Every field's
 * "unset" value means "the library's rule"; none is read from the environment.
 */
#ifndef HB_BACKEND_TUNING_H
#define HB_BACKEND_TUNING_H

/* The CUDA partition kernel of tridiagonal solves (0 or -1: the rule's value). */
/* Applied field by field over the rule's plan, at each solve (src/core/tridiag.c): threads
 * are raised to a system's chunks (half of them for 8-row chunks, two a thread); a cluster
 * is lowered to the chunks, and fewer threads or blocks where its shared memory would not
 * fit; stage needs interleaved rows and one chunk a thread; persist and pairs need stage,
 * pairs also fp32 with an even count and stride, 8-byte aligned arrays and fixed sizes
 * (else one system a thread, same plan). rows and cluster change the arithmetic, so the
 * CPU's partition solve (the kernel's twin) follows them too. docs/tridiag.md. */
typedef struct {
    int rows;     /* rows per chunk: 8, 16 (0) */
    int threads;  /* block size: 128, 256, 512 (0) */
    int ahead;    /* rows of loads in flight: 4, 8 (0) */
    int hint;     /* L2 prefetch hint of loads: 0 none, 1 128 B, 2 256 B (-1) */
    int prefetch; /* L2 prefetch instructions: 0, 1 the chunk, 2 the next rows (-1) */
    int vector;   /* flat layout 16-byte loads: 0, 1, 2 (-1) */
    int cluster;  /* blocks of a thread-block cluster: 1, 2, 4, 8, 16 (0) */
    int stage;    /* interleaved rows staged by cp.async: 0, 1 (-1) */
    int persist;  /* persistent blocks: 0, 1 (-1) */
    int pairs;    /* fp32 two systems a thread: 0, 1 (-1) */
    int small;    /* the small-batch plan: 0 never, 1 always (-1) */
} hb_gtsv_tuning_t;

typedef struct {
    hb_gtsv_tuning_t gtsv;
    /* BRANCHED (same-morphology batches on CUDA) */
    int branched_lanes;      /* systems a team: 1..32 (0: the rule) */
    int branched_threads;    /* threads a block: a multiple of the lanes, 32..1024 (0: rule) */
    int branched_stage_cost; /* the planner's cost of a stage barrier, rows, >= 0 (-1: 8) */
    int branched_split_rows; /* chains split every this many rows: 0 none, >= 4 (-1: rule) */
    int branched_blocks;     /* grid cap, blocks (0: none) */
    /* Mixed batches (hb_multi_*) */
    int multi_split_rows;        /* GROUPED/LEVELS branches split at this many rows: 0 none,
                                    >= 4 (-1: the default) */
    long multi_shapes_bytes;     /* SHAPES: shared memory a team, >= 1024 (0: the device's) */
    int multi_shapes_split_rows; /* SHAPES chains split: 0 none, >= 4 (-1: per class) */
    int multi_shapes_choice;     /* SHAPES occupancy: -1 each class its fastest, 0..2 a tier
                                    for all, 3 the fixed rule (-2: the time model) */
    /* Simulations: a group of at most this many copies of one shape steps in the mixed group,
     * as cells of their own shape (-1: the engine's rule, hb_sim_ops.mixed_copies) */
    int sim_mixed_copies;
    /* GPU: lanes a cell of a mixed group, 8, 16 or 32 (-1: the engine's rule) */
    int sim_tree_tile;
    /* CPU: lanes a block of copies of one shape, 1 to HB_SIM_CPU_LANES in powers of two (-1:
     * the engine's rule, cpu_block_width) */
    int sim_cpu_lanes;
    /* CPU: 0 a group's catalogue states and next currents in passes of their own, 1 fused
     * where the group allows it (-1: the engine's rule, fused; the same bits either way) */
    int sim_cpu_fuse;
} hb_tuning_t;

#endif
