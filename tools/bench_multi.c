/*
 * hinesbatch bench multi: mixed-morphology batches (issue 5; docs/multi.md).
 *
 * Three workloads, each for several batch sizes:
 *   fig6   the paper's Figure 6: cells of equal size (512 rows) and different random shapes,
 *          branches 10% and 50% of the rows;
 *   fig14  the paper's Figure 14: binary-tree cells (a first branch of 256, then levels of
 *          halving branches), 2, 3 and 4 levels;
 *   real   real cells of the data folder (every valid one, cycled), d_lambda or one
 *          compartment per SWC segment.
 * Configurations: the CPU (LEVELS on one thread and on all cores), and on CUDA every
 * hb_multi algorithm (LEVELS, the paper's; GROUPED, ours; PER_CELL, the paper's one thread
 * per cell; SHAPES, ours, reported as not run where a cell is too large for it; AUTO), plus for fig6 and fig14 the same-morphology batch of the paper ("mono":
 * hb_batch, interleaved, one thread per system) on the batch's first cell replicated.
 * Times are medians of `repeats` solves after a warm-up, inputs restored before each (not
 * timed); bandwidth counts the minimum traffic, 40 bytes per row (u, l, d, rhs read, x
 * written), as a fraction of a device-to-device copy measured in the same run; ns per row
 * compares with DeepDendrite's DHS (3,000 CA1 cells of 1,414 compartments in 0.44 ms on an
 * A100: 0.104 ns per compartment). A few cells of every solve are checked against
 * hb_hines_solve.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bench.h"
#include "cli.h"
#include "fig14_cells.h"

#define DHS_NS_PER_ROW (0.44e6 / (3000.0 * 1414.0))
#define VALUE_SETS 4
#define MAX_LIST 16

static const char usage[] =
    "usage: hinesbatch bench multi [options]\n"
    "\n"
    "Mixed-morphology batches: the paper's Figures 6 and 14 and real cells, every\n"
    "hb_multi algorithm on CUDA, the CPU, and the paper's one-thread-per-cell kernels;\n"
    "time per solve, effective bandwidth (40 bytes per row) against a device copy,\n"
    "ns per row against DeepDendrite's DHS (0.104 ns per compartment), ratios.\n"
    "\n"
    "  --data DIR          folder of .swc files (default data/morphologies)\n"
    "  --parts LIST        subset of fig6,fig14,real (default all)\n"
    "  --cells LIST        real cells per batch (default 256,2560,25600)\n"
    "  --fig6-cells LIST   (default 256,2560,25600)\n"
    "  --fig14-cells LIST  (default 256,2560,25600,256000)\n"
    "  --policy P          real cells: d-lambda (default) or per-segment\n"
    "  --repeats R         timed solves per configuration (default 10)\n"
    "  --seq-max ROWS      largest batch (rows) timed on one CPU thread; larger ones are\n"
    "                      extrapolated per row (default 4000000)\n"
    "  --no-cpu            skip the CPU configurations\n"
    "  --gpu LIST          CUDA configurations, a subset of per-cell,levels,grouped,shapes,\n"
    "                      auto,mono (default all)\n"
    "  --tuning SPEC       hb_context_set_tuning on every context, e.g.\n"
    "                      multi.shapes_choice=-1 (docs/tuning.md)\n"
    "  --json              one JSON document instead of the table\n"
    "  --json-out FILE     also write the JSON document to FILE\n";

typedef struct {
    const char *data;
    long cells[3][MAX_LIST]; /* per part */
    int n_cells[3];
    int parts; /* bit mask: 1 fig6, 2 fig14, 4 real */
    hb_cpolicy_t policy;
    int repeats;
    long seq_max;
    int cpu, json;
    int gpu; /* bit mask of the CUDA configurations (config_t.bit) */
    const char *json_out;
    const char *tuning; /* hb_context_set_tuning on every context (NULL: none) */
} options_t;

/* Distinct trees and VALUE_SETS value sets each; cell c is kind c % kinds, set (c / kinds) % VALUE_SETS. */
typedef struct {
    const char *part;
    char name[96];
    int kinds;
    int *m;
    int **parent;
    double **u, **l, **d, **rhs; /* [kinds * VALUE_SETS] */
} workload_t;

static void workload_free(workload_t *w)
{
    for (int k = 0; k < w->kinds; ++k) free(w->parent[k]);
    for (int k = 0; k < w->kinds * VALUE_SETS; ++k) {
        free(w->u[k]);
        free(w->l[k]);
        free(w->d[k]);
        free(w->rhs[k]);
    }
    free(w->m);
    free(w->parent);
    free(w->u);
    free(w->l);
    free(w->d);
    free(w->rhs);
    memset(w, 0, sizeof *w);
}

static int workload_alloc(workload_t *w, int kinds)
{
    w->kinds = kinds;
    w->m = calloc((size_t)kinds, sizeof *w->m);
    w->parent = calloc((size_t)kinds, sizeof *w->parent);
    w->u = calloc((size_t)kinds * VALUE_SETS, sizeof *w->u);
    w->l = calloc((size_t)kinds * VALUE_SETS, sizeof *w->l);
    w->d = calloc((size_t)kinds * VALUE_SETS, sizeof *w->d);
    w->rhs = calloc((size_t)kinds * VALUE_SETS, sizeof *w->rhs);
    return w->m && w->parent && w->u && w->l && w->d && w->rhs;
}

static int alloc_values(workload_t *w, int k)
{
    const size_t m = (size_t)w->m[k];
    for (int s = 0; s < VALUE_SETS; ++s) {
        const int j = k * VALUE_SETS + s;
        w->u[j] = calloc(m, sizeof(double));
        w->l[j] = calloc(m, sizeof(double));
        w->d[j] = calloc(m, sizeof(double));
        w->rhs[j] = calloc(m, sizeof(double));
        if (!w->u[j] || !w->l[j] || !w->d[j] || !w->rhs[j]) return 0;
    }
    return 1;
}

/* Random diagonally dominant values (nothing zero) on tree k. */
static int random_values(workload_t *w, int k, uint64_t *seed)
{
    if (!alloc_values(w, k)) return 0;
    const int m = w->m[k];
    const int *p = w->parent[k];
    for (int s = 0; s < VALUE_SETS; ++s) {
        const int j = k * VALUE_SETS + s;
        for (int i = 0; i < m; ++i) {
            w->d[j][i] = 0.5 + cli_uniform(seed);
            w->rhs[j][i] = 2.0 * cli_uniform(seed) - 1.0;
        }
        for (int i = 1; i < m; ++i) {
            w->u[j][i] = -0.1 - cli_uniform(seed);
            w->l[j][i] = -0.1 - cli_uniform(seed);
            w->d[j][i] -= w->l[j][i];
            w->d[j][p[i]] -= w->u[j][i];
        }
    }
    return 1;
}

/*
 * Figure 6's cells: m rows in `branches` branches (odd: a random binary tree, a leaf
 * branch split into two children at a time), random lengths >= 1, nodes numbered
 * depth first.
 */
static int random_tree(int m, int branches, uint64_t *seed, int *parent)
{
    if (branches > m) branches = m;
    if (branches % 2 == 0) branches--;
    int *child = malloc((size_t)branches * 2 * sizeof *child), *len = malloc((size_t)branches * sizeof *len);
    int *leaves = malloc((size_t)branches * sizeof *leaves), *stack = malloc((size_t)branches * 2 * sizeof *stack);
    if (!child || !len || !leaves || !stack) {
        free(child), free(len), free(leaves), free(stack);
        return 0;
    }
    int nb = 1, n_leaves = 1;
    leaves[0] = 0;
    child[0] = child[1] = -1;
    while (nb + 2 <= branches) {
        const int pick = (int)(cli_uniform(seed) * n_leaves), b = leaves[pick];
        child[2 * b] = nb;
        child[2 * b + 1] = nb + 1;
        for (int k = 0; k < 2; ++k) child[2 * (nb + k)] = child[2 * (nb + k) + 1] = -1;
        leaves[pick] = nb;
        leaves[n_leaves++] = nb + 1;
        nb += 2;
    }
    for (int b = 0; b < nb; ++b) len[b] = 1;
    for (int r = nb; r < m; ++r) len[(int)(cli_uniform(seed) * nb)]++;
    /* depth first: a branch's rows, then its children */
    int top = 0, next = 0;
    stack[top++] = 0;
    int *attach = malloc((size_t)nb * sizeof *attach);
    if (!attach) {
        free(child), free(len), free(leaves), free(stack);
        return 0;
    }
    attach[0] = -1;
    while (top > 0) {
        const int b = stack[--top];
        int up = attach[b];
        for (int r = 0; r < len[b]; ++r) {
            parent[next] = up;
            up = next++;
        }
        for (int k = 1; k >= 0; --k)
            if (child[2 * b + k] >= 0) {
                attach[child[2 * b + k]] = up;
                stack[top++] = child[2 * b + k];
            }
    }
    free(child), free(len), free(leaves), free(stack), free(attach);
    return next == m;
}

static int make_fig6(workload_t *w, double ratio, int kinds)
{
    const int m = 512;
    uint64_t seed = 0x6f196ULL + (uint64_t)(ratio * 1000);
    snprintf(w->name, sizeof w->name, "fig6 %d rows, branches %.0f%% of rows, %d shapes", m,
             ratio * 100, kinds);
    w->part = "fig6";
    if (!workload_alloc(w, kinds)) return 0;
    for (int k = 0; k < kinds; ++k) {
        w->m[k] = m;
        if (!(w->parent[k] = malloc((size_t)m * sizeof(int)))) return 0;
        if (!random_tree(m, (int)(ratio * m), &seed, w->parent[k])) return 0;
        if (!random_values(w, k, &seed)) return 0;
    }
    return 1;
}

static int make_fig14(workload_t *w, int levels)
{
    uint64_t seed = 0xf1614ULL + (uint64_t)levels;
    const int m = fig14_rows(levels);
    snprintf(w->name, sizeof w->name, "fig14 binary tree, %d levels, %d rows", levels, m);
    w->part = "fig14";
    if (!workload_alloc(w, 1)) return 0;
    w->m[0] = m;
    if (!(w->parent[0] = malloc((size_t)m * sizeof(int)))) return 0;
    fig14_parents(w->parent[0], levels);
    return random_values(w, 0, &seed);
}

static int make_real(workload_t *w, const char *dir, hb_cpolicy_t policy)
{
    static const char *files[] = {
        "041018-zA.CNG.swc", "1220882a.CNG.swc", "720575940661205633.swc", "C040600B3.CNG.swc",
        "CTh5080306F.CNG.swc", "Cha-F-200000.CNG.swc", "HSN-fluoro01.CNG.swc", "ball_and_stick.swc",
        "c91662.swc", "l22.CNG.swc", "morph_ca1_n120.swc", "morph_l5pc_with_axon.swc",
        "mp_ma_40984_gc2.CNG.swc", "pyramidal.swc", "simple.swc", "single_cell_allen.swc",
        "v_e_moto1.CNG.swc", "v_e_purk2.CNG.swc"};
    const int n_files = (int)(sizeof files / sizeof *files);
    uint64_t seed = 0x4ea1ULL;
    w->part = "real";
    if (!workload_alloc(w, n_files)) return 0;
    int kinds = 0;
    size_t rows = 0;
    for (int f = 0; f < n_files; ++f) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        hb_morph_t *morph = NULL;
        hb_cable_t *cable = NULL;
        hb_discretization_t disc;
        hb_discretization_default(&disc);
        disc.policy = policy;
        if (hb_morph_load_swc(path, NULL, &morph) != HB_SUCCESS ||
            hb_cable_create(morph, &disc, &cable) != HB_SUCCESS) {
            fprintf(stderr, "hinesbatch bench multi: %s: %s\n", path, hb_last_error());
            hb_morph_destroy(morph);
            return 0;
        }
        const int m = hb_cable_size(cable);
        w->m[kinds] = m;
        w->parent[kinds] = malloc((size_t)m * sizeof(int));
        double *v = malloc((size_t)m * sizeof *v), *g = malloc((size_t)m * sizeof *g);
        int ok = w->parent[kinds] && v && g && alloc_values(w, kinds);
        if (ok) memcpy(w->parent[kinds], hb_cable_parent(cable), (size_t)m * sizeof(int));
        for (int s = 0; s < VALUE_SETS && ok; ++s) {
            const int j = kinds * VALUE_SETS + s;
            for (int i = 0; i < m; ++i) {
                v[i] = -65.0 + 20.0 * (cli_uniform(&seed) - 0.5);
                g[i] = 1e-4;
            }
            ok = hb_cable_offdiag(cable, w->u[j], w->l[j]) == HB_SUCCESS &&
                 hb_cable_step_system(cable, 0.025, w->u[j], w->l[j], v, g, NULL, NULL, w->d[j],
                                      w->rhs[j]) == HB_SUCCESS;
        }
        free(v);
        free(g);
        hb_cable_destroy(cable);
        hb_morph_destroy(morph);
        if (!ok) return 0;
        rows += (size_t)m;
        kinds++;
    }
    w->kinds = kinds;
    snprintf(w->name, sizeof w->name, "real cells (%s), %d morphologies, %.0f rows on average",
             policy == HB_CPOLICY_PER_SEGMENT ? "per segment" : "d_lambda", kinds,
             (double)rows / kinds);
    return 1;
}

/* ------------------------------------------------------------------------ */

typedef struct {
    const char *label;
    hb_backend_t backend;
    hb_multi_algo_t algo;
    int mono; /* hb_batch of the first cell replicated, PER_THREAD interleaved */
    int bit;  /* CUDA: its bit in --gpu (gpu_names) */
} config_t;

static const config_t configs[] = {
    {"seq levels", HB_BACKEND_SEQ, HB_MULTI_ALGO_LEVELS, 0, 0},
    {"omp levels", HB_BACKEND_OMP, HB_MULTI_ALGO_LEVELS, 0, 0},
    {"cuda per-cell (paper Fig. 6)", HB_BACKEND_CUDA, HB_MULTI_ALGO_PER_CELL, 0, 1},
    {"cuda levels (paper sec. 4)", HB_BACKEND_CUDA, HB_MULTI_ALGO_LEVELS, 0, 2},
    {"cuda grouped (ours)", HB_BACKEND_CUDA, HB_MULTI_ALGO_GROUPED, 0, 4},
    {"cuda shapes (ours)", HB_BACKEND_CUDA, HB_MULTI_ALGO_SHAPES, 0, 8},
    {"cuda auto", HB_BACKEND_CUDA, HB_MULTI_ALGO_AUTO, 0, 16},
    {"cuda mono per-thread (paper)", HB_BACKEND_CUDA, HB_MULTI_ALGO_AUTO, 1, 32},
};
#define N_CONFIGS (int)(sizeof configs / sizeof *configs)

typedef struct {
    double median, min, max, rel_diff;
    int extrapolated;
    hb_multi_algo_t algo;
} timing_t;

static int value_set(const workload_t *w, long c) { return (int)(c % w->kinds) * VALUE_SETS + (int)((c / w->kinds) % VALUE_SETS); }

/* Max relative difference to hb_hines_solve over a few cells of a solved batch. */
static double check_cells(hb_multi_t *mb, const workload_t *w, long cells)
{
    const long probe[3] = {0, cells / 2, cells - 1};
    double worst = 0.0;
    for (int k = 0; k < 3; ++k) {
        const int kind = (int)(probe[k] % w->kinds), j = value_set(w, probe[k]), m = w->m[kind];
        double *x = malloc((size_t)m * sizeof *x), *ref = malloc((size_t)m * sizeof *ref);
        double *dd = malloc((size_t)m * sizeof *dd);
        if (!x || !ref || !dd || hb_multi_get(mb, (int)probe[k], NULL, NULL, NULL, x) != HB_SUCCESS) {
            worst = NAN;
        } else {
            memcpy(dd, w->d[j], (size_t)m * sizeof *dd);
            memcpy(ref, w->rhs[j], (size_t)m * sizeof *ref);
            hb_hines_solve(m, w->parent[kind], w->u[j], w->l[j], dd, ref);
            double num = 0.0, den = 0.0;
            for (int i = 0; i < m; ++i) {
                const double e = fabs(x[i] - ref[i]);
                if (!(e <= num)) num = e;
                if (fabs(ref[i]) > den) den = fabs(ref[i]);
            }
            const double rel = den > 0.0 ? num / den : num;
            if (!(rel <= worst)) worst = rel;
        }
        free(x);
        free(ref);
        free(dd);
    }
    return worst;
}

static hb_status_t set_cells(hb_multi_t *mb, const workload_t *w, long cells)
{
    hb_status_t status = HB_SUCCESS;
    for (long c = 0; c < cells && status == HB_SUCCESS; ++c) {
        const int j = value_set(w, c);
        status = hb_multi_set(mb, (int)c, w->u[j], w->l[j], w->d[j], w->rhs[j]);
    }
    return status;
}

static hb_status_t time_multi(hb_multi_t *mb, const workload_t *w, long cells, hb_multi_algo_t algo,
                              int repeats, double *t, timing_t *out)
{
    hb_status_t status = set_cells(mb, w, cells); /* the inputs, whatever ran before */
    if (status == HB_SUCCESS) status = hb_multi_set_algorithm(mb, algo);
    if (status == HB_SUCCESS) status = hb_multi_benchmark(mb, repeats, t);
    if (status != HB_SUCCESS) return status;
    out->algo = hb_multi_resolved_algorithm(mb);
    out->rel_diff = check_cells(mb, w, cells);
    return HB_SUCCESS;
}

static hb_status_t time_mono(hb_context_t *ctx, const workload_t *w, long cells, int repeats,
                             double *t, timing_t *out)
{
    hb_batch_t *batch = NULL, *source = NULL;
    const int m = w->m[0];
    hb_status_t status =
        hb_batch_create(ctx, m, w->parent[0], (int)cells, HB_LAYOUT_INTERLEAVED, 1, &source);
    if (status == HB_SUCCESS)
        status = hb_batch_create(ctx, m, w->parent[0], (int)cells, HB_LAYOUT_INTERLEAVED, 1, &batch);
    for (long c = 0; c < cells && status == HB_SUCCESS; ++c) {
        const int j = (int)(c % VALUE_SETS);
        status = hb_batch_set(source, (int)c, w->u[j], w->l[j], w->d[j], w->rhs[j]);
    }
    if (status == HB_SUCCESS) status = hb_batch_convert(source, batch);
    if (status == HB_SUCCESS) status = hb_batch_set_algorithm(batch, HB_HINES_ALGO_PER_THREAD);
    if (status == HB_SUCCESS) status = hb_batch_benchmark(batch, source, repeats, t);
    out->algo = HB_MULTI_ALGO_PER_CELL;
    out->rel_diff = NAN;
    hb_batch_destroy(batch);
    hb_batch_destroy(source);
    return status;
}

typedef struct {
    FILE *js;
    int first;
    double copy_bw;
    int json;
} report_t;

static void report(report_t *r, const workload_t *w, long cells, size_t rows, const hb_multi_info_t *info,
                   const config_t *cfg, const timing_t *tm, double t_seq, double t_omp,
                   double t_per_cell)
{
    const double bw = 40.0 * (double)rows / tm->median, ns_row = tm->median * 1e9 / (double)rows;
    if (r->js) {
        fprintf(r->js, "%s\n  {\"part\": \"%s\", \"workload\": ", r->first ? "" : ",", w->part);
        cli_json_string(r->js, w->name);
        fprintf(r->js, ", \"cells\": %ld, \"rows\": %zu, \"branches\": %d, \"levels\": %d, "
                       "\"config\": ", cells, rows, info->branches, info->levels);
        cli_json_string(r->js, cfg->label);
        fprintf(r->js, ", \"backend\": \"%s\", \"algorithm\": \"%s\", \"median_s\": %.6g, "
                       "\"min_s\": %.6g, \"max_s\": %.6g, \"extrapolated\": %s, "
                       "\"bandwidth_Bps\": %.6g, \"ns_per_row\": %.6g, \"copy_fraction\": ",
                hb_backend_name(cfg->backend),
                cfg->mono ? "mono-per-thread" : hb_multi_algo_name(tm->algo), tm->median, tm->min,
                tm->max, tm->extrapolated ? "true" : "false", bw, ns_row);
        cli_json_number(r->js, bw / r->copy_bw);
        fputs(", \"x_dhs\": ", r->js);
        cli_json_number(r->js, DHS_NS_PER_ROW / ns_row);
        fputs(", \"x_per_cell\": ", r->js);
        cli_json_number(r->js, t_per_cell / tm->median);
        fputs(", \"x_seq\": ", r->js);
        cli_json_number(r->js, t_seq / tm->median);
        fputs(", \"x_omp\": ", r->js);
        cli_json_number(r->js, t_omp / tm->median);
        fputs(", \"max_rel_diff\": ", r->js);
        cli_json_number(r->js, tm->rel_diff);
        fputs("}", r->js);
        r->first = 0;
    }
    if (!r->json) {
        printf("    %-30s %10.3e %10.3e %10.3e %8.1f %7.1f %8.4f %7.2f %8.2f %8.1f %7.2f %8.1e%s\n",
               cfg->label, tm->median, tm->min, tm->max, bw * 1e-9, 100.0 * bw / r->copy_bw, ns_row,
               DHS_NS_PER_ROW / ns_row, t_per_cell / tm->median, t_seq / tm->median,
               t_omp / tm->median, tm->rel_diff, tm->extrapolated ? " (extrapolated)" : "");
        fflush(stdout);
    }
}

/* Every configuration on one workload and batch size; returns non-zero on a failure. */
static int run_case(hb_context_t **ctx, const options_t *o, const workload_t *w, long cells,
                    report_t *r, cli_progress_t *progress)
{
    size_t rows = 0;
    int *m = malloc((size_t)cells * sizeof *m);
    const int **parents = malloc((size_t)cells * sizeof *parents);
    double *t = malloc((size_t)o->repeats * sizeof *t);
    if (!m || !parents || !t) {
        free(m), free(parents), free(t);
        return cli_fail("bench multi", "out of memory");
    }
    for (long c = 0; c < cells; ++c) {
        m[c] = w->m[c % w->kinds];
        parents[c] = w->parent[c % w->kinds];
        rows += (size_t)m[c];
    }
    hb_multi_info_t info = {0};
    double t_seq = NAN, t_omp = NAN, t_per_cell = NAN;
    int rc = 0, header = 0;
    for (int be = 0; be < 3 && rc == 0; ++be) {
        if (!ctx[be]) continue;
        hb_multi_t *mb = NULL;
        hb_status_t status = HB_SUCCESS;
        /* one thread: time up to seq_max rows, extrapolate per row beyond */
        long n = cells;
        if (be == HB_BACKEND_SEQ && rows > (size_t)o->seq_max) {
            size_t part = 0;
            for (n = 0; n < cells && part + (size_t)m[n] <= (size_t)o->seq_max; ++n) part += (size_t)m[n];
            if (n < 1) n = 1;
        }
        status = hb_multi_create(ctx[be], (int)n, m, parents, &mb);
        cli_progress_clear(progress);
        if (status == HB_SUCCESS && !header) {
            status = hb_multi_info(mb, &info);
            if (n != cells) { /* the info of the whole batch */
                hb_multi_t *whole = NULL;
                if (status == HB_SUCCESS) status = hb_multi_create(ctx[be], (int)cells, m, parents, &whole);
                if (status == HB_SUCCESS) status = hb_multi_info(whole, &info);
                hb_multi_destroy(whole);
            }
            if (status == HB_SUCCESS && !r->json) {
                printf("\n  %s: %ld cells, %zu rows, %d branches, %d levels, longest branch %d\n",
                       w->name, cells, rows, info.branches, info.levels, info.max_branch_rows);
                printf("    %-30s %10s %10s %10s %8s %7s %8s %7s %8s %8s %7s %8s\n", "config",
                       "median [s]", "min", "max", "GB/s", "% copy", "ns/row", "x DHS",
                       "x p-cell", "x seq", "x omp", "rel diff");
            }
            header = status == HB_SUCCESS;
        }
        for (int k = 0; k < N_CONFIGS && status == HB_SUCCESS; ++k) {
            const config_t *cfg = &configs[k];
            if (cfg->backend != (hb_backend_t)be || (cfg->bit && !(o->gpu & cfg->bit))) continue;
            if (cfg->mono && strcmp(w->part, "real") == 0) continue;
            timing_t tm = {0};
            cli_progress_redraw(progress);
            status = cfg->mono ? time_mono(ctx[be], w, cells, o->repeats, t, &tm)
                               : time_multi(mb, w, n, cfg->algo, o->repeats, t, &tm);
            cli_progress_clear(progress);
            if (status == HB_ERR_NOT_SUPPORTED && !cfg->mono) { /* SHAPES: cells too large */
                if (!r->json) printf("    %-30s not run: %s\n", cfg->label, hb_last_error());
                status = HB_SUCCESS;
                continue;
            }
            if (status != HB_SUCCESS) {
                fprintf(stderr, "hinesbatch bench multi: %s, %s, %ld cells: %s (%s)\n", w->name,
                        cfg->label, cells, hb_last_error(), hb_status_string(status));
                break;
            }
            tm.median = cli_median(t, (size_t)o->repeats);
            tm.min = t[0];
            tm.max = t[o->repeats - 1];
            if (n != cells) {
                size_t part = 0;
                for (long c = 0; c < n; ++c) part += (size_t)m[c];
                const double f = (double)rows / (double)part;
                tm.median *= f;
                tm.min *= f;
                tm.max *= f;
                tm.extrapolated = 1;
            }
            if (!(tm.rel_diff < 1e-10) && !cfg->mono) {
                fprintf(stderr, "hinesbatch bench multi: %s, %s: relative difference %.3g to "
                                "hb_hines_solve\n", w->name, cfg->label, tm.rel_diff);
                rc = 1;
            }
            if (be == HB_BACKEND_SEQ) t_seq = tm.median;
            if (be == HB_BACKEND_OMP) t_omp = tm.median;
            if (cfg->algo == HB_MULTI_ALGO_PER_CELL && !cfg->mono) t_per_cell = tm.median;
            report(r, w, cells, rows, &info, cfg, &tm, t_seq, t_omp, t_per_cell);
        }
        hb_multi_destroy(mb);
        if (status != HB_SUCCESS) rc = 1;
    }
    free(m);
    free(parents);
    free(t);
    return rc;
}

int cli_bench_multi(int argc, char **argv)
{
    static const char command[] = "bench multi";
    options_t o;
    memset(&o, 0, sizeof o);
    o.data = "data/morphologies";
    static const long fig6_default[] = {256, 2560, 25600}, fig14_default[] = {256, 2560, 25600, 256000},
                      real_default[] = {256, 2560, 25600};
    memcpy(o.cells[0], fig6_default, sizeof fig6_default);
    o.n_cells[0] = 3;
    memcpy(o.cells[1], fig14_default, sizeof fig14_default);
    o.n_cells[1] = 4;
    memcpy(o.cells[2], real_default, sizeof real_default);
    o.n_cells[2] = 3;
    o.parts = 7;
    int policy = HB_CPOLICY_D_LAMBDA; /* an int for the option table, then o.policy */
    o.repeats = 10;
    o.seq_max = 4000000;
    o.cpu = 1;
    o.gpu = 63;
    static const cli_choice_t gpu_names[] = {{"per-cell", 1}, {"levels", 2}, {"grouped", 4},
                                             {"shapes", 8},   {"auto", 16},  {"mono", 32},
                                             {NULL, 0}};
    static const cli_choice_t parts[] = {{"fig6", 1}, {"fig14", 2}, {"real", 4}, {NULL, 0}};
    static const cli_choice_t policies[] = {
        {"d-lambda", HB_CPOLICY_D_LAMBDA}, {"per-segment", HB_CPOLICY_PER_SEGMENT}, {NULL, 0}};
    const cli_option_t options[] = {
        CLI_FLAG("--json", &o.json, 1),
        CLI_FLAG("--no-cpu", &o.cpu, 0),
        CLI_STRING("--json-out", &o.json_out),
        CLI_STRING("--data", &o.data),
        CLI_STRING("--tuning", &o.tuning),
        CLI_INT_LIST("--cells", o.cells[2], MAX_LIST, &o.n_cells[2], 10000000L),
        CLI_INT_LIST("--fig6-cells", o.cells[0], MAX_LIST, &o.n_cells[0], 10000000L),
        CLI_INT_LIST("--fig14-cells", o.cells[1], MAX_LIST, &o.n_cells[1], 10000000L),
        CLI_NAME_SET("--parts", &o.parts, parts, "part"),
        CLI_NAME_SET("--gpu", &o.gpu, gpu_names, "configuration"),
        CLI_CHOICE("--policy", &policy, policies),
        CLI_POSITIVE("--repeats", &o.repeats, 1000000000L),
        CLI_POSITIVE("--seq-max", &o.seq_max, 1000000000L),
    };
    const int parsed = cli_parse_options(command, usage, options, sizeof options / sizeof *options,
                                         argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
    o.policy = (hb_cpolicy_t)policy;
    if (o.repeats > 1000) return cli_fail(command, "--repeats: at most 1000") + 1;

    hb_context_t *ctx[3] = {NULL, NULL, NULL};
    hb_status_t status = HB_SUCCESS;
    for (int be = 0; be < 3 && status == HB_SUCCESS; be++)
        if ((be < 2 ? o.cpu : 1) && hb_backend_available((hb_backend_t)be))
            if ((status = hb_context_create((hb_backend_t)be, &ctx[be])) == HB_SUCCESS && o.tuning)
                status = hb_context_set_tuning(ctx[be], o.tuning);
    if (status != HB_SUCCESS) return cli_fail_status(command, status);
    hb_context_t *main_ctx = ctx[HB_BACKEND_CUDA]   ? ctx[HB_BACKEND_CUDA]
                            : ctx[HB_BACKEND_OMP] ? ctx[HB_BACKEND_OMP]
                                                  : ctx[HB_BACKEND_SEQ];
    report_t r = {NULL, 1, 0.0, o.json};
    if (!main_ctx) return cli_fail(command, "no backend to run (--no-cpu without a GPU)");
    if ((status = hb_context_copy_bandwidth(main_ctx, (size_t)1 << 31, 10, &r.copy_bw)) != HB_SUCCESS) {
        for (int be = 0; be < 3; be++) hb_context_destroy(ctx[be]);
        return cli_fail_status(command, status);
    }
    r.js = o.json ? stdout : NULL;
    if (o.json_out && !(r.js = fopen(o.json_out, "w"))) {
        for (int be = 0; be < 3; be++) hb_context_destroy(ctx[be]);
        return cli_fail(command, "cannot write %s", o.json_out);
    }
    const int threads = ctx[HB_BACKEND_OMP] ? hb_context_threads(ctx[HB_BACKEND_OMP]) : 0;
    if (r.js) {
        fprintf(r.js, "{\"device\": ");
        cli_json_string(r.js, hb_context_device_name(main_ctx));
        fprintf(r.js, ", \"copy_bandwidth_Bps\": %.6g, \"omp_threads\": %d, \"repeats\": %d, "
                      "\"min_bytes_per_row\": 40, \"dhs_ns_per_row\": %.6g, \"policy\": \"%s\", "
                      "\"results\": [",
                r.copy_bw, threads, o.repeats, DHS_NS_PER_ROW,
                o.policy == HB_CPOLICY_PER_SEGMENT ? "per-segment" : "d-lambda");
    }
    if (!o.json)
        printf("device: %s; copy bandwidth %.3f TB/s (read + write, 2 GiB, median of 10); OpenMP "
               "threads %d; %d repeats; 40 bytes per row; DHS anchor %.3f ns per row\n",
               hb_context_device_name(main_ctx), r.copy_bw * 1e-12, threads, o.repeats,
               DHS_NS_PER_ROW);
    int rc = 0, cases = 0, done = 0;
    for (int part = 0; part < 3; ++part)
        cases += (o.parts >> part & 1) * (part == 0 ? 2 : part == 1 ? 3 : 1) * o.n_cells[part];
    cli_progress_t progress;
    cli_progress_begin(&progress, command, "cases");
    for (int part = 0; part < 3 && rc == 0; ++part) {
        if (!(o.parts & (1 << part))) continue;
        const int variants = part == 0 ? 2 : part == 1 ? 3 : 1;
        for (int v = 0; v < variants && rc == 0; ++v) {
            workload_t w;
            memset(&w, 0, sizeof w);
            const int ok = part == 0   ? make_fig6(&w, v == 0 ? 0.1 : 0.5, 256)
                           : part == 1 ? make_fig14(&w, 2 + v)
                                       : make_real(&w, o.data, o.policy);
            if (!ok) {
                rc = cli_fail(command, "cannot build the %s workload", part == 2 ? "real" : "figure");
            }
            for (int c = 0; c < o.n_cells[part] && rc == 0; ++c) {
                cli_progress_show(&progress, done++, cases, 1);
                rc = run_case(ctx, &o, &w, o.cells[part][c], &r, &progress);
            }
            workload_free(&w);
        }
    }
    if (r.js) {
        fprintf(r.js, "\n]}\n");
        if (r.js != stdout) fclose(r.js);
    }
    for (int be = 0; be < 3; be++)
        if (ctx[be]) hb_context_destroy(ctx[be]);
    return rc;
}
