/* Checkpoints of hinesbatch run (docs/checkpoint.md): --checkpoint-every and --restart. */
#ifndef HB_TOOLS_RUN_CHECKPOINT_H
#define HB_TOOLS_RUN_CHECKPOINT_H

#include <stdint.h>
#include <stdio.h>

#include "hinesbatch.h"

typedef struct {
    double every_ms;     /* --checkpoint-every [ms] (0: none) */
    const char *restart; /* --restart PATH (NULL: none) */
    const char *out;     /* output directory: checkpoints go to OUT/checkpoint.RANK.bin */
    const char *model;   /* the model file */
    const char *text;    /* its content, read once */
    size_t length;       /* [bytes] */
    uint64_t model_hash; /* of its content */
    long every_steps;    /* the interval [steps]: whole epochs for a network */
    int rank, ranks;
} run_ckpt_t;

/* Where a cell run's outputs stood at the checkpoint (the CLI's own bookkeeping). */
typedef struct {
    long samples;
    int n_probes;
    long *spike_count; /* per probe */
    double *first;     /* per probe: the first spike [ms] */
    long probes_bytes, spikes_bytes; /* the text traces file (0: none, or traces.h5), spikes.csv */
    long dat_bytes;    /* spikes.dat */
    int traces_format; /* the run's --traces: 0 csv, 1 wide, 2 none, 3 h5 */
} run_ckpt_cells_t;

/* The model file's hash and the interval in steps (epoch_steps 0: a cell run). 0, or 1 after
 * an error message. */
int run_ckpt_prepare(run_ckpt_t *c, double dt_ms, int epoch_steps);
/* n steps from `step`, shortened to end at the next checkpoint. */
long run_ckpt_limit(const run_ckpt_t *c, long step, long n);
/* 1 when a checkpoint is due after `step` of `total`. */
int run_ckpt_due(const run_ckpt_t *c, long step, long total);
/* This rank's checkpoint, atomically (OUT/checkpoint.RANK.bin.tmp, fsync, rename): the run's
 * record (cells: its outputs' bookkeeping), then the simulation's or the network's. 0 or 1. */
int run_ckpt_save(const run_ckpt_t *c, const run_ckpt_cells_t *cells, const hb_sim_t *sim,
                  const hb_net_t *net);
/* Opens this rank's checkpoint of --restart, checks the run's record (model file, kind, rank
 * count) and reads it into *cells (cell runs; arrays for n_probes allocated, freed by
 * run_ckpt_cells_free); *f is left at the library's record. 0, or 1 after an error message
 * (*f closed). */
int run_ckpt_open(const run_ckpt_t *c, int network, FILE **f, char *path, size_t path_size,
                  run_ckpt_cells_t *cells);
void run_ckpt_cells_free(run_ckpt_cells_t *cells);

/* A network's checkpoint: the files of every rank that wrote it (any rank count now). */
typedef struct {
    int n;        /* the rank count that wrote it */
    FILE **files; /* per old rank, left at the library's record */
    char **names; /* their paths */
} run_ckpt_files_t;

/* Opens --restart's files (a directory: checkpoint.0.bin says how many ranks wrote them, all
 * opened; a file: a run on one rank's) and checks each one's run record (model file, kind,
 * that rank count). 0, or 1 after an error message (nothing left open). */
int run_ckpt_open_ranks(const run_ckpt_t *c, run_ckpt_files_t *set);
void run_ckpt_files_close(run_ckpt_files_t *set);

#endif
