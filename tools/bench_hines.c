/*
 * hinesbatch bench hines: the paper's Figures 3, 4 and 5 and our kernels.
 *
 * Six morphologies cover the paper's Table 1 (small/medium/big x low/high
 * branching): two real cells cut to the paper's sizes. For every batch size,
 * every backend and kernel: time per solve (median of repeats, after warm-up),
 * speedup over one CPU thread and over OpenMP on all host cores, and the
 * effective bandwidth: the minimum traffic (u, l, d, rhs read and x written, 8
 * bytes each per row; the shared parent array not counted) over the time, as a
 * fraction of the copy bandwidth measured in the same run.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/bench.h"
#include "cli.h"

static const char usage[] =
    "usage: hinesbatch bench hines [options]\n"
    "\n"
    "Reproduces Figures 3-5 of Valero-Lara et al. and times our kernels: six\n"
    "morphologies (two real cells cut to the sizes of the paper's Table 1), batch\n"
    "sizes, every layout and block size, CPU (one thread, OpenMP on all cores) and\n"
    "CUDA kernels; time per solve, speedups and effective bandwidth.\n"
    "\n"
    "  --data DIR        folder with v_e_purk2.CNG.swc and morph_ca1_n120.swc\n"
    "                    (default data/morphologies)\n"
    "  --cells LIST      batch sizes (default 256,2560,25600,256000)\n"
    "  --morphs LIST     subset of small-low,small-high,medium-low,medium-high,\n"
    "                    big-low,big-high (default all)\n"
    "  --repeats R       timed solves per configuration (default 10)\n"
    "  --seq-max N       largest batch timed on one CPU thread; larger ones are\n"
    "                    extrapolated from it per system (default 25600)\n"
    "  --no-cpu          skip the CPU backends (speedups are then omitted)\n"
    "  --own-ul          every cell its own u and l (axial conductances scaled by\n"
    "                    0.8-1.2 per cell); default: identical cells share them\n"
    "  --only LIST       only configurations whose label contains one of these\n"
    "                    comma-separated words (e.g. pipelined,full-interleaved)\n"
    "  --json            one JSON document instead of the table\n"
    "  --json-out FILE   also write the JSON document to FILE\n";

/* The paper's Table 1: size and branches; our cut of a real cell to that size. */
typedef struct {
    const char *name;
    int rows;           /* target matrix rows (compartments) */
    int paper_branches; /* the paper's branch count */
    const char *file;   /* real cell it is cut from */
} morph_spec_t;

static const morph_spec_t specs[] = {
    {"small-low", 76, 7, "morph_ca1_n120.swc"},    {"small-high", 76, 29, "v_e_purk2.CNG.swc"},
    {"medium-low", 305, 30, "morph_ca1_n120.swc"}, {"medium-high", 319, 157, "v_e_purk2.CNG.swc"},
    {"big-low", 695, 66, "morph_ca1_n120.swc"},    {"big-high", 691, 341, "v_e_purk2.CNG.swc"},
};
#define N_SPECS (int)(sizeof specs / sizeof *specs)

typedef struct {
    const char *label; /* "seq", "omp", "cuda per-thread interleaved", ... */
    hb_backend_t backend;
    hb_layout_t layout;
    int block_size;
    hb_hines_algo_t algo;
} config_t;

typedef struct {
    const char *data;
    long cells[16];
    int n_cells;
    int morph_mask;
    int repeats;
    long seq_max;
    int cpu, json;
    int own_ul; /* each cell its own u and l (cli_fill_batch) */
    const char *json_out;
    const char *only; /* comma-separated label filters, or NULL */
} options_t;

/* Whether `label` contains one of the comma-separated words of `only`. */
static int selected(const char *label, const char *only)
{
    if (!only) return 1;
    for (const char *w = only; *w;) {
        const char *end = strchr(w, ',');
        const size_t len = end ? (size_t)(end - w) : strlen(w);
        for (const char *at = label; len && *at; at++)
            if (strncmp(at, w, len) == 0) return 1;
        w += len + (end != NULL);
    }
    return 0;
}

/* Cut `morph` to exactly `rows` matrix rows (per-segment, vertex scheme). */
static hb_status_t cut_to_rows(const hb_morph_t *morph, int rows, const hb_discretization_t *disc,
                               hb_morph_t **piece, hb_cable_t **cable)
{
    hb_morph_stats_t st;
    hb_status_t status = hb_morph_stats(morph, &st);
    if (status != HB_SUCCESS) return status;
    int lo = 1, hi = st.points;
    while (lo < hi) { /* smallest cut with >= rows rows: rows grow with samples */
        int mid = lo + (hi - lo) / 2;
        hb_morph_t *p = NULL;
        hb_cable_t *c = NULL;
        if ((status = hb_morph_cut(morph, mid, &p)) == HB_SUCCESS)
            status = hb_cable_create(p, disc, &c);
        int n = c ? hb_cable_size(c) : 0;
        hb_cable_destroy(c);
        hb_morph_destroy(p);
        if (status != HB_SUCCESS) return status;
        if (n < rows) lo = mid + 1;
        else hi = mid;
    }
    if ((status = hb_morph_cut(morph, lo, piece)) != HB_SUCCESS) return status;
    return hb_cable_create(*piece, disc, cable);
}

typedef struct {
    double median, min, max; /* [s] */
    int extrapolated;
    hb_hines_algo_t algo;
} timing_t;

/* Times one configuration; returns non-zero (after a message) on failure. */
static int time_config(hb_context_t *ctx, const config_t *cfg, const hb_cable_t *cable, long cells,
                       int repeats, int own_ul, timing_t *out)
{
    hb_batch_t *batch = NULL, *source = NULL;
    double *t = malloc((size_t)repeats * sizeof *t);
    const int m = hb_cable_size(cable);
    hb_status_t status = t ? HB_SUCCESS : HB_ERR_ALLOC;
    if (status == HB_SUCCESS)
        status = hb_batch_create(ctx, m, hb_cable_parent(cable), (int)cells, cfg->layout,
                                 cfg->block_size, &batch);
    if (status == HB_SUCCESS)
        status = hb_batch_create(ctx, m, hb_cable_parent(cable), (int)cells, cfg->layout,
                                 cfg->block_size, &source);
    if (status == HB_SUCCESS)
        status = cli_fill_batch(source, cable, 0.025, 0x5eed0000ULL + (uint64_t)cells, own_ul);
    if (status == HB_SUCCESS) status = hb_batch_convert(source, batch);
    if (status == HB_SUCCESS) status = hb_batch_set_algorithm(batch, cfg->algo);
    if (status == HB_SUCCESS) status = hb_batch_benchmark(batch, source, repeats, t);
    if (status == HB_SUCCESS) {
        out->algo = hb_batch_resolved_algorithm(batch);
        out->median = cli_median(t, (size_t)repeats);
        out->min = t[0];
        out->max = t[repeats - 1];
        out->extrapolated = 0;
    }
    if (status != HB_SUCCESS) /* before the destroys clear the message */
        fprintf(stderr, "hinesbatch bench hines: %s, %ld cells: %s (%s)\n", cfg->label, cells,
                hb_last_error(), hb_status_string(status));
    hb_batch_destroy(batch);
    hb_batch_destroy(source);
    free(t);
    return status != HB_SUCCESS;
}

static int build_configs(config_t *cfg, int max, int cpu, int cuda)
{
    static const int block_sizes[] = {32, 64, 128, 256, 512};
    static char labels[64][64];
    int n = 0;
#define ADD(lbl, be, lay, bs, al)                                                           \
    do {                                                                                   \
        if (n < max) {                                                                     \
            snprintf(labels[n], sizeof labels[n], "%s", lbl);                              \
            cfg[n] = (config_t){labels[n], be, lay, bs, al};                               \
            n++;                                                                           \
        }                                                                                  \
    } while (0)
    if (cpu) {
        ADD("seq flat", HB_BACKEND_SEQ, HB_LAYOUT_FLAT, 1, HB_HINES_ALGO_AUTO);
        ADD("omp flat", HB_BACKEND_OMP, HB_LAYOUT_FLAT, 1, HB_HINES_ALGO_AUTO);
        ADD("omp interleaved", HB_BACKEND_OMP, HB_LAYOUT_INTERLEAVED, 1, HB_HINES_ALGO_AUTO);
    }
    if (cuda) {
        ADD("cuda flat", HB_BACKEND_CUDA, HB_LAYOUT_FLAT, 1, HB_HINES_ALGO_PER_THREAD);
        ADD("cuda full-interleaved", HB_BACKEND_CUDA, HB_LAYOUT_INTERLEAVED, 1,
            HB_HINES_ALGO_PER_THREAD);
        for (int k = 0; k < 5; k++) {
            char lbl[64];
            snprintf(lbl, sizeof lbl, "cuda block-interleaved bs=%d", block_sizes[k]);
            ADD(lbl, HB_BACKEND_CUDA, HB_LAYOUT_BLOCK, block_sizes[k], HB_HINES_ALGO_PER_THREAD);
        }
        for (int k = 0; k < 2; k++) {
            char lbl[64];
            snprintf(lbl, sizeof lbl, "cuda block-shared bs=%d", block_sizes[k]);
            ADD(lbl, HB_BACKEND_CUDA, HB_LAYOUT_BLOCK, block_sizes[k], HB_HINES_ALGO_BLOCK_SHARED);
        }
        ADD("cuda staged (ours)", HB_BACKEND_CUDA, HB_LAYOUT_INTERLEAVED, 1, HB_HINES_ALGO_STAGED);
        ADD("cuda streamed (ours)", HB_BACKEND_CUDA, HB_LAYOUT_INTERLEAVED, 1,
            HB_HINES_ALGO_STREAMED);
        ADD("cuda pipelined (ours)", HB_BACKEND_CUDA, HB_LAYOUT_INTERLEAVED, 1,
            HB_HINES_ALGO_PIPELINED);
        ADD("cuda branched (ours)", HB_BACKEND_CUDA, HB_LAYOUT_INTERLEAVED, 1,
            HB_HINES_ALGO_BRANCHED);
        ADD("cuda flat branched (ours)", HB_BACKEND_CUDA, HB_LAYOUT_FLAT, 1,
            HB_HINES_ALGO_BRANCHED);
        ADD("cuda auto (ours)", HB_BACKEND_CUDA, HB_LAYOUT_INTERLEAVED, 1, HB_HINES_ALGO_AUTO);
    }
#undef ADD
    return n;
}

int cli_bench_hines(int argc, char **argv)
{
    static const char command[] = "bench hines";
    options_t o;
    memset(&o, 0, sizeof o);
    o.data = "data/morphologies";
    long defaults[] = {256, 2560, 25600, 256000};
    memcpy(o.cells, defaults, sizeof defaults);
    o.n_cells = 4;
    o.morph_mask = (1 << N_SPECS) - 1;
    o.repeats = 10;
    o.seq_max = 25600;
    o.cpu = 1;
    cli_choice_t morphs[N_SPECS + 1] = {{NULL, 0}};
    for (int k = 0; k < N_SPECS; k++) morphs[k] = (cli_choice_t){specs[k].name, 1 << k};
    const cli_option_t options[] = {
        CLI_FLAG("--json", &o.json, 1),
        CLI_STRING("--json-out", &o.json_out),
        CLI_FLAG("--no-cpu", &o.cpu, 0),
        CLI_FLAG("--own-ul", &o.own_ul, 1),
        CLI_STRING("--only", &o.only),
        CLI_STRING("--data", &o.data),
        CLI_INT_LIST("--cells", o.cells, (int)(sizeof o.cells / sizeof *o.cells), &o.n_cells,
                     100000000L),
        CLI_NAME_SET("--morphs", &o.morph_mask, morphs, "morphology"),
        CLI_POSITIVE("--repeats", &o.repeats, 100000000L),
        CLI_POSITIVE("--seq-max", &o.seq_max, 100000000L),
    };
    const int parsed = cli_parse_options(command, usage, options, sizeof options / sizeof *options,
                                         argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;

    const int cuda = hb_backend_available(HB_BACKEND_CUDA);
    const int cpu = o.cpu;
    config_t cfg[64];
    int n_cfg = build_configs(cfg, 64, cpu, cuda);
    int kept = 0;
    for (int j = 0; j < n_cfg; j++)
        if (selected(cfg[j].label, o.only)) cfg[kept++] = cfg[j];
    n_cfg = kept;
    if (n_cfg == 0)
        return cli_fail(command, "--only '%s' matches no configuration on this machine (see "
                        "--help; CUDA kernels need a GPU, CPU ones no --no-cpu)",
                        o.only ? o.only : "") + 1;
    /* The inputs first: a bad --data fails before the contexts and the 2 GiB of the
     * bandwidth measurement are allocated. */
    hb_morph_t *morph[N_SPECS] = {NULL}, *piece[N_SPECS] = {NULL};
    hb_cable_t *cable[N_SPECS] = {NULL};
    hb_morph_stats_t stats[N_SPECS];
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.policy = HB_CPOLICY_PER_SEGMENT;
    hb_status_t status = HB_SUCCESS;
    for (int k = 0; k < N_SPECS && status == HB_SUCCESS; k++) {
        if (!(o.morph_mask & (1 << k))) continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", o.data, specs[k].file);
        if ((status = hb_morph_load_swc(path, NULL, &morph[k])) == HB_SUCCESS &&
            (status = cut_to_rows(morph[k], specs[k].rows, &disc, &piece[k], &cable[k])) ==
                HB_SUCCESS)
            status = hb_morph_stats(piece[k], &stats[k]);
    }
    hb_context_t *ctx[4] = {NULL, NULL, NULL, NULL};
    for (int be = 0; be < 3 && status == HB_SUCCESS; be++)
        if ((be < 2 ? cpu : cuda) && hb_backend_available((hb_backend_t)be))
            status = hb_context_create((hb_backend_t)be, &ctx[be]);
    int rc = status != HB_SUCCESS ? cli_fail_status(command, status) : 0;

    /* The copy bandwidth of the device that runs the kernels, in this run. */
    hb_context_t *main_ctx = ctx[HB_BACKEND_CUDA] ? ctx[HB_BACKEND_CUDA] : ctx[HB_BACKEND_OMP];
    if (!main_ctx) main_ctx = ctx[HB_BACKEND_SEQ];
    double copy_bw = 0.0;
    if (rc == 0 && main_ctx &&
        (status = hb_context_copy_bandwidth(main_ctx, (size_t)1 << 31, 10, &copy_bw)) != HB_SUCCESS)
        rc = cli_fail_status(command, status);
    FILE *js = o.json ? stdout : NULL;
    if (rc == 0 && o.json_out && !(js = fopen(o.json_out, "w")))
        rc = cli_fail(command, "cannot write %s", o.json_out);
    if (rc != 0) goto done;
    if (js) {
        fprintf(js, "{\"device\": ");
        cli_json_string(js, main_ctx ? hb_context_device_name(main_ctx) : "none");
        fprintf(js, ", \"copy_bandwidth_Bps\": %.6g, \"omp_threads\": %d, \"repeats\": %d, "
                "\"min_bytes_per_row\": 40, \"own_ul\": %s, \"results\": [",
                copy_bw, ctx[HB_BACKEND_OMP] ? hb_context_threads(ctx[HB_BACKEND_OMP]) : 0,
                o.repeats, o.own_ul ? "true" : "false");
    }
    if (!o.json) {
        printf("device: %s; copy bandwidth %.3f TB/s (read + write, 2 GiB, median of 10); "
               "OpenMP threads %d; %d repeats; u and l %s\n",
               main_ctx ? hb_context_device_name(main_ctx) : "none", copy_bw * 1e-12,
               ctx[HB_BACKEND_OMP] ? hb_context_threads(ctx[HB_BACKEND_OMP]) : 0, o.repeats,
               o.own_ul ? "each cell's own" : "shared by the identical cells");
    }
    int first = 1, cases = 0, done = 0;
    for (int k = 0; k < N_SPECS; k++) cases += (o.morph_mask >> k & 1) * o.n_cells * n_cfg;
    cli_progress_t progress;
    cli_progress_begin(&progress, command, "cases");
    for (int k = 0; k < N_SPECS && rc == 0; k++) {
        if (!(o.morph_mask & (1 << k))) continue;
        const hb_morph_stats_t st = stats[k];
        const int m = hb_cable_size(cable[k]);
        if (!o.json)
            printf("\n%s: %d rows, %d branches (paper: %d rows, %d branches), cut from %s\n",
                   specs[k].name, m, st.sections, specs[k].rows, specs[k].paper_branches,
                   specs[k].file);
        for (int c = 0; c < o.n_cells && rc == 0; c++) {
            const long cells = o.cells[c];
            const double min_bytes = 40.0 * (double)m * (double)cells;
            double t_seq = NAN, t_omp = NAN;
            if (!o.json)
                printf("  %7ld cells  %-32s %11s %11s %11s %9s %8s %8s %7s\n", cells, "config",
                       "median [s]", "min", "max", "GB/s", "% copy", "x seq", "x omp");
            for (int j = 0; j < n_cfg && rc == 0; j++) {
                timing_t tm;
                long timed_cells = cells;
                if (cfg[j].backend == HB_BACKEND_SEQ && cells > o.seq_max) timed_cells = o.seq_max;
                cli_progress_show(&progress, done++, cases, 1);
                const int failed = time_config(ctx[cfg[j].backend], &cfg[j], cable[k], timed_cells, o.repeats,
                                o.own_ul, &tm);
                cli_progress_clear(&progress);
                if (failed) {
                    if (cfg[j].backend != HB_BACKEND_CUDA) rc = 1;
                    continue; /* a kernel the shape does not fit: reported, skipped */
                }
                if (timed_cells != cells) { /* one thread: time grows with the systems */
                    double f = (double)cells / (double)timed_cells;
                    tm.median *= f;
                    tm.min *= f;
                    tm.max *= f;
                    tm.extrapolated = 1;
                }
                if (cfg[j].backend == HB_BACKEND_SEQ) t_seq = tm.median;
                if (cfg[j].backend == HB_BACKEND_OMP && !(t_omp <= tm.median)) t_omp = tm.median;
                const double bw = min_bytes / tm.median;
                if (js) {
                    fprintf(js, "%s\n  {\"morphology\": \"%s\", \"rows\": %d, \"branches\": %d, "
                           "\"cells\": %ld, \"config\": \"%s\", \"backend\": \"%s\", "
                           "\"layout\": \"%s\", \"block_size\": %d, \"kernel\": \"%s\", "
                           "\"median_s\": %.6g, \"min_s\": %.6g, \"max_s\": %.6g, "
                           "\"extrapolated\": %s, \"bandwidth_Bps\": %.6g, \"copy_fraction\": ",
                           first ? "" : ",", specs[k].name, m, st.sections, cells, cfg[j].label,
                           hb_backend_name(cfg[j].backend), hb_layout_name(cfg[j].layout),
                           cfg[j].block_size, hb_hines_algo_name(tm.algo), tm.median, tm.min,
                           tm.max, tm.extrapolated ? "true" : "false", bw);
                    cli_json_number(js, bw / copy_bw);
                    fputs(", \"speedup_seq\": ", js);
                    cli_json_number(js, t_seq / tm.median);
                    fputs(", \"speedup_omp\": ", js);
                    cli_json_number(js, t_omp / tm.median);
                    fputs("}", js);
                    first = 0;
                }
                if (!o.json) {
                    printf("  %7s        %-32s %11.4e %11.4e %11.4e %9.1f %8.1f %8.2f %7.2f%s\n",
                           "", cfg[j].label, tm.median, tm.min, tm.max, bw * 1e-9,
                           100.0 * bw / copy_bw, t_seq / tm.median, t_omp / tm.median,
                           tm.extrapolated ? "  (extrapolated)" : "");
                }
                fflush(stdout);
            }
        }
    }
    if (js) {
        fprintf(js, "\n]}\n");
        if (js != stdout) fclose(js);
    }
done:
    for (int be = 0; be < 3; be++)
        if (ctx[be]) hb_context_destroy(ctx[be]);
    for (int k = 0; k < N_SPECS; k++) {
        hb_cable_destroy(cable[k]);
        hb_morph_destroy(piece[k]);
        hb_morph_destroy(morph[k]);
    }
    return rc;
}
