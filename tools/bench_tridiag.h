/*
 * hinesbatch bench tridiag, internal to its two files: bench_tridiag.c measures (input sets,
 * ours and cuSPARSE timed, one grid point, the accuracy and memory rows); bench_tridiag_report.c
 * parses the options, runs the grid and prints the tables or the JSON document.
 */
#ifndef HB_TOOLS_BENCH_TRIDIAG_H
#define HB_TOOLS_BENCH_TRIDIAG_H

#include <stddef.h>
#include <stdint.h>

#include "hinesbatch.h"

#define MAX_VARIANTS 16
#define MAX_POINTS 128
typedef struct {
    hb_backend_t backend;
    int repeats, accuracy, json, cusparse;
    int precisions; /* bit 0: fp64, bit 1: fp32 */
    long max_unknowns;
    int n_points; /* the (m, systems) run, in order: --points, else the paper's grid */
    int point_m[MAX_POINTS];
    long point_n[MAX_POINTS];
    int n_variants;
    char variant[MAX_VARIANTS][128];
    uint64_t seed;
} options_t;

typedef struct {
    double median, lo, hi; /* seconds; lo/hi: fastest and slowest repeat */
} timing_t;

/* Columns of the table. */
enum { OURS_FLAT, OURS_IL, OURS_THOMAS_IL, CS_STRIDED, CS_IL0, CS_IL1, N_COLS };

typedef struct {
    int m;
    long count;
    int sets;
    hb_precision_t prec;
    int have[N_COLS];
    timing_t t[N_COLS];
    hb_gtsv_algo_t algo_flat, algo_il;
    char plan_flat[128], plan_il[128]; /* hb_gtsv_describe */
    int var_have[MAX_VARIANTS][2];   /* --variants: [variant][interleaved] */
    timing_t var_t[MAX_VARIANTS][2];
    char var_plan[MAX_VARIANTS][2][128];
} point_t;

static inline size_t esize_of(hb_precision_t prec)
{
    return prec == HB_FLOAT32 ? sizeof(float) : sizeof(double);
}

/* Columns of the accuracy table. */
enum { ACC_OURS_FLAT, ACC_OURS_IL, ACC_OURS_THOMAS, ACC_CS_STRIDED, ACC_CS_IL0, ACC_CS_IL1, N_ACC };

/* The random data of every set made from here on starts from this seed (not 0). */
void bench_tridiag_seed(uint64_t seed);

/* Times one (m, systems, precision) point: ours in both layouts (and Thomas interleaved on
 * CUDA), each --variants tuning, cuSPARSE when built with it and on CUDA; input sets rotated
 * to cover 3x l2_bytes. 1 on success; 0 after a message on stderr. */
int bench_tridiag_run_point(hb_context_t *ctx, const options_t *o, int m, long count,
                            hb_precision_t prec, double l2_bytes, point_t *pt);

/* Figure 12a: the largest relative 2-norm error of each solver (have[c]: measured) on `count`
 * weakly dominant systems of m rows, against long-double Thomas. */
void bench_tridiag_accuracy(hb_context_t *ctx, hb_precision_t prec, int m, long count,
                            double errors[N_ACC], int have[N_ACC]);

/* Figure 12b: device MB (fp64) for `count` systems of m rows: ours (AUTO, Thomas), cuSPARSE
 * (strided, interleaved algo 0 and 1); have[c]: known. */
void bench_tridiag_memory_row(hb_context_t *ctx, int m, long count, double mb[5], int have[5]);

#endif
