/*
 * hinesbatch bench tridiag: the options, the grid run point by point, and the report: the
 * timing table (or JSON), then the accuracy (Figure 12a) and device memory (Figure 12b)
 * tables. The measurements: bench_tridiag.c.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_tridiag.h"
#include "core/bench.h"
#include "cli.h"

static const char usage[] =
    "usage: hinesbatch bench tridiag [options]\n"
    "\n"
    "Batched tridiagonal solves on the paper's grid (m = 64..512 x 256..256,000\n"
    "systems; m = 1024..8192 x 20..20,000 systems), fp64 and fp32: our solver in\n"
    "both layouts beside cuSPARSE's gtsv2StridedBatch and gtsvInterleavedBatch\n"
    "(algo 0 and 1; D or S) when built with it; time (median of repeats),\n"
    "effective bandwidth (5 elements per unknown), percent of the copy bandwidth,\n"
    "and the ratio of the best cuSPARSE time to ours. Then accuracy (each precision)\n"
    "against a long-double CPU solution as m grows, and the device memory (fp64).\n"
    "\n"
    "  --backend B       cuda | omp | seq | best (default best)\n"
    "  --precision P     fp64 | fp32 | both (default both)\n"
    "  --repeats R       timed solves per configuration (default 20)\n"
    "  --max-unknowns N  skip grid points with m x systems > N (default: none on\n"
    "                    CUDA, 4,000,000 on the CPU)\n"
    "  --points LIST     these points instead of the grid (any sizes, in order),\n"
    "                    e.g. 64x256000,512x256000,300x1000\n"
    "  --variants LIST   also time ours under each tuning of LIST, ';'-separated\n"
    "                    tuning specs (docs/tuning.md; e.g.\n"
    "                    'gtsv.hint=1;gtsv.threads=128,gtsv.ahead=4')\n"
    "  --no-cusparse     skip cuSPARSE (faster A/B runs of --variants)\n"
    "  --seed S          random seed (default: the time)\n"
    "  --no-accuracy     skip the accuracy and memory tables\n"
    "  --json            one JSON document instead of the tables\n";

/* The paper's grid. */
static const int grid_small_m[] = {64, 128, 256, 512};
static const long grid_small_n[] = {256, 2560, 25600, 256000};
static const int grid_large_m[] = {1024, 2048, 4096, 8192};
static const long grid_large_n[] = {20, 200, 2000, 20000};

static const char *const col_name[N_COLS] = {"ours flat",      "ours interleaved",
                                             "ours thomas il", "cusparse strided",
                                             "cusparse il a0", "cusparse il a1"};
static const char *const col_key[N_COLS] = {"ours_flat",      "ours_interleaved",
                                            "ours_thomas_interleaved", "cusparse_strided",
                                            "cusparse_interleaved_algo0",
                                            "cusparse_interleaved_algo1"};

/* Best (smallest median) of the cuSPARSE columns, or 0. */
static double best_cusparse(const point_t *pt)
{
    double best = 0.0;
    for (int c = CS_STRIDED; c <= CS_IL1; ++c)
        if (pt->have[c] && (best == 0.0 || pt->t[c].median < best)) best = pt->t[c].median;
    return best;
}

/* ---- output ---- */

static const char *prec_name(hb_precision_t prec) { return prec == HB_FLOAT32 ? "fp32" : "fp64"; }

static void print_point_text(const point_t *pt, const options_t *o, double copy_bw)
{
    const double unknowns = (double)pt->m * (double)pt->count;
    const double bytes = 5.0 * (double)esize_of(pt->prec) * unknowns;
    const double best_cs = best_cusparse(pt);
    printf("%4s %5d %7ld", prec_name(pt->prec), pt->m, pt->count);
    for (int c = 0; c < N_COLS; ++c) {
        if (!pt->have[c]) {
            printf(" %21s", "-");
            continue;
        }
        const double bw = bytes / pt->t[c].median;
        printf(" %8.1f %5.2f %5.1f%%", pt->t[c].median * 1e6, bw / 1e12, 100.0 * bw / copy_bw);
    }
    for (int c = OURS_FLAT; c <= OURS_IL; ++c)
        if (best_cs > 0.0 && pt->have[c])
            printf(" %6.2f", best_cs / pt->t[c].median);
        else
            printf(" %6s", "-");
    printf("  [%s | %s]\n", pt->plan_flat, pt->plan_il);
    for (int v = 0; v < o->n_variants; ++v) {
        printf("      variant '%s':", o->variant[v]);
        for (int il = 0; il < 2; ++il) {
            if (!pt->var_have[v][il]) {
                printf(" %s -", il ? "il" : "flat");
                continue;
            }
            const double t = pt->var_t[v][il].median, base = pt->t[il ? OURS_IL : OURS_FLAT].median;
            printf(" %s %8.1f us %5.1f%% (%.3fx the rule) [%s]", il ? "il" : "flat", t * 1e6,
                   100.0 * bytes / t / copy_bw, base / t, pt->var_plan[v][il]);
        }
        printf("\n");
    }
}

static void print_timing_json(const timing_t *t, double bytes, double copy_bw)
{
    printf("{\"median_s\": %.6e, \"min_s\": %.6e, \"max_s\": %.6e, \"bandwidth_Bps\": %.6e, "
           "\"copy_fraction\": %.4f}",
           t->median, t->lo, t->hi, bytes / t->median, bytes / t->median / copy_bw);
}

static void print_point_json(const point_t *pt, const options_t *o, double copy_bw, int first)
{
    const double bytes = 5.0 * (double)esize_of(pt->prec) * (double)pt->m * (double)pt->count;
    const double best_cs = best_cusparse(pt);
    printf("%s\n    {\"precision\": \"%s\", \"m\": %d, \"systems\": %ld, \"input_sets\": %d, "
           "\"min_bytes\": %.0f, \"algo_flat\": \"%s\", \"algo_interleaved\": \"%s\", "
           "\"plan_flat\": \"%s\", \"plan_interleaved\": \"%s\"",
           first ? "" : ",", prec_name(pt->prec), pt->m, pt->count, pt->sets, bytes,
           hb_gtsv_algo_name(pt->algo_flat), hb_gtsv_algo_name(pt->algo_il), pt->plan_flat,
           pt->plan_il);
    for (int c = 0; c < N_COLS; ++c) {
        if (!pt->have[c]) continue;
        printf(", \"%s\": ", col_key[c]);
        print_timing_json(&pt->t[c], bytes, copy_bw);
    }
    if (best_cs > 0.0) {
        printf(", \"best_cusparse_s\": %.6e", best_cs);
        if (pt->have[OURS_FLAT]) printf(", \"ratio_flat\": %.4f", best_cs / pt->t[OURS_FLAT].median);
        if (pt->have[OURS_IL])
            printf(", \"ratio_interleaved\": %.4f", best_cs / pt->t[OURS_IL].median);
    }
    if (o->n_variants) {
        printf(", \"variants\": [");
        for (int v = 0; v < o->n_variants; ++v) {
            printf("%s{\"tuning\": ", v ? ", " : "");
            cli_json_string(stdout, o->variant[v]);
            for (int il = 0; il < 2; ++il) {
                if (!pt->var_have[v][il]) continue;
                printf(", \"%s\": ", il ? "interleaved" : "flat");
                print_timing_json(&pt->var_t[v][il], bytes, copy_bw);
                printf(", \"plan_%s\": \"%s\"", il ? "interleaved" : "flat", pt->var_plan[v][il]);
            }
            printf("}");
        }
        printf("]");
    }
    printf("}");
}

static const char *const acc_name[N_ACC] = {"ours flat", "ours il", "ours thomas", "cs strided",
                                            "cs il a0", "cs il a1"};
static const char *const acc_key[N_ACC] = {"ours_flat", "ours_interleaved", "ours_thomas",
                                           "cusparse_strided", "cusparse_interleaved_algo0",
                                           "cusparse_interleaved_algo1"};
static const char *const mem_key[5] = {"ours_auto", "ours_thomas", "cusparse_strided",
                                       "cusparse_interleaved_algo0", "cusparse_interleaved_algo1"};

/* --points: MxN[,MxN...], any sizes (the grid's or not), run in the order given. */
static int parse_points(const char *command, const char *value, void *opts)
{
    options_t *o = opts;
    o->n_points = 0;
    for (const char *c = value; c; c = strchr(c, ',') ? strchr(c, ',') + 1 : NULL) {
        int pm = 0, used = 0;
        long pn = 0;
        if (sscanf(c, "%dx%ld%n", &pm, &pn, &used) != 2 || pm < 1 || pn < 1 ||
            (c[used] != ',' && c[used] != '\0')) {
            cli_fail(command, "--points '%s': expected MxN[,MxN...] with M, N >= 1", value);
            return 0;
        }
        if (o->n_points == MAX_POINTS) {
            cli_fail(command, "--points '%s': at most %d points", value, MAX_POINTS);
            return 0;
        }
        o->point_m[o->n_points] = pm;
        o->point_n[o->n_points++] = pn;
    }
    return 1;
}

/* --variants: ';'-separated tunings, each checked by parsing it. */
static int parse_variants(const char *command, const char *value, void *options)
{
    options_t *o = options;
    o->n_variants = 0;
    for (const char *c = value; c;) {
        const char *end = strchr(c, ';');
        const size_t len = end ? (size_t)(end - c) : strlen(c);
        if (o->n_variants == MAX_VARIANTS || len >= sizeof o->variant[0]) {
            cli_fail(command, "--variants: at most %d tunings of under %zu characters",
                     MAX_VARIANTS, sizeof o->variant[0]);
            return 0;
        }
        memcpy(o->variant[o->n_variants], c, len);
        o->variant[o->n_variants][len] = '\0';
        hb_tuning_t tuning;
        if (hb_tuning_parse(o->variant[o->n_variants], &tuning) != HB_SUCCESS) {
            cli_fail(command, "--variants: %s", hb_last_error());
            return 0;
        }
        ++o->n_variants;
        c = end ? end + 1 : NULL;
    }
    return 1;
}

/* CLI_CONTINUE, or the exit status (0 after --help, 2 after an error message). */
static int parse_options(int argc, char **argv, options_t *o)
{
    static const cli_choice_t backends[] = {{"cuda", HB_BACKEND_CUDA}, {"omp", HB_BACKEND_OMP},
                                            {"seq", HB_BACKEND_SEQ},   {"best", HB_BACKEND_BEST},
                                            {NULL, 0}};
    static const cli_choice_t precisions[] = {{"fp64", 1}, {"fp32", 2}, {"both", 3}, {NULL, 0}};
    int backend = HB_BACKEND_BEST; /* the table writes ints and longs: copied to o below */
    long seed = -1;                /* -1: none given, o->seed stays the time */
    o->repeats = 20;
    o->cusparse = 1;
    o->precisions = 3;
    o->n_points = 0;
    o->n_variants = 0;
    o->accuracy = 1;
    o->json = 0;
    o->max_unknowns = -1;
    o->seed = (uint64_t)time(NULL);
    const cli_option_t options[] = {
        CLI_FLAG("--json", &o->json, 1),
        CLI_FLAG("--no-accuracy", &o->accuracy, 0),
        CLI_FLAG("--no-cusparse", &o->cusparse, 0),
        CLI_CHOICE("--precision", &o->precisions, precisions),
        CLI_CUSTOM("--points", parse_points, o),
        CLI_CUSTOM("--variants", parse_variants, o),
        CLI_INT("--repeats", &o->repeats, 1, 1000, "1..1000"),
        CLI_INT("--max-unknowns", &o->max_unknowns, 1, 2000000000L, "1..2e9"),
        CLI_INT("--seed", &seed, 0, 2000000000L, "0..2e9"),
        CLI_CHOICE("--backend", &backend, backends),
    };
    const int parsed = cli_parse_options("bench tridiag", usage, options,
                                         sizeof options / sizeof *options, argc, argv);
    o->backend = (hb_backend_t)backend;
    if (seed >= 0) o->seed = (uint64_t)seed;
    if (o->n_points == 0) /* no --points: the paper's grid */
        for (int part = 0; part < 2; ++part)
            for (int mi = 0; mi < 4; ++mi)
                for (int ni = 0; ni < 4; ++ni, ++o->n_points) {
                    o->point_m[o->n_points] = part ? grid_large_m[mi] : grid_small_m[mi];
                    o->point_n[o->n_points] = part ? grid_large_n[ni] : grid_small_n[ni];
                }
    return parsed;
}

int cli_bench_tridiag(int argc, char **argv)
{
    options_t o;
    const int parsed = parse_options(argc, argv, &o);
    if (parsed != CLI_CONTINUE) return parsed;
    hb_context_t *ctx = NULL;
    hb_status_t st = hb_context_create(o.backend, &ctx);
    if (st != HB_SUCCESS) return cli_fail_status("bench tridiag", st);
    const int cuda = hb_context_backend(ctx) == HB_BACKEND_CUDA;
    if (o.max_unknowns < 0) o.max_unknowns = cuda ? 2000000000L : 4000000L;
    bench_tridiag_seed(o.seed ? o.seed : 1);
    double copy_bw = 0.0;
    st = hb_context_copy_bandwidth(ctx, (size_t)1 << 31, 10, &copy_bw);
    if (st != HB_SUCCESS) {
        hb_context_destroy(ctx);
        return cli_fail_status("bench tridiag", st);
    }
    const double l2 = cuda ? 50e6 : 32e6; /* H100 L2 50 MB; a typical host's last level */
#ifdef HB_HAVE_CUSPARSE
    const int with_cusparse = cuda;
#else
    const int with_cusparse = 0;
#endif
    if (o.json) {
        printf("{\"benchmark\": \"tridiag\", \"device\": ");
        cli_json_string(stdout, hb_context_device_name(ctx));
        printf(", \"backend\": \"%s\", \"precisions\": \"%s\", \"copy_bandwidth_Bps\": %.6e, "
               "\"repeats\": %d, \"seed\": %llu, \"cusparse\": %s, \"grid\": [",
               hb_backend_name(hb_context_backend(ctx)),
               o.precisions == 3 ? "fp64 fp32" : o.precisions == 2 ? "fp32" : "fp64", copy_bw,
               o.repeats, (unsigned long long)o.seed,
               with_cusparse && o.cusparse ? "true" : "false");
    } else {
        printf("device: %s (%s); copy bandwidth %.3f TB/s (read + write, 2 GiB, median of 10); "
               "median of %d repeats; seed %llu%s\n",
               hb_context_device_name(ctx), hb_backend_name(hb_context_backend(ctx)),
               copy_bw / 1e12, o.repeats, (unsigned long long)o.seed,
               !with_cusparse ? "; cuSPARSE not built in" : o.cusparse ? "" : "; cuSPARSE skipped");
        printf("per solver: time [us], effective bandwidth [TB/s], %% of copy; ratio = best "
               "cuSPARSE time / ours; [our plans: flat | interleaved]\n%4s %5s %7s", "prec", "m",
               "systems");
        for (int c = 0; c < N_COLS; ++c) printf(" %21s", col_name[c]);
        printf(" %6s %6s\n", "r.flat", "r.il");
    }
    int first = 1, failures = 0, points = 0, done = 0;
    for (int pi = 0; pi < 2; ++pi) points += (o.precisions >> pi & 1) * o.n_points;
    cli_progress_t progress;
    cli_progress_begin(&progress, "bench tridiag", "points");
    for (int pi = 0; pi < 2; ++pi) {
        if (!(o.precisions & (1 << pi))) continue;
        const hb_precision_t prec = pi ? HB_FLOAT32 : HB_FLOAT64;
        for (int k = 0; k < o.n_points; ++k) {
            const int m = o.point_m[k];
            const long count = o.point_n[k];
            if ((double)m * (double)count > (double)o.max_unknowns) continue;
            point_t *pt = malloc(sizeof *pt);
            cli_progress_show(&progress, done++, points, 1);
            const int ran = pt && bench_tridiag_run_point(ctx, &o, m, count, prec, l2, pt);
            cli_progress_clear(&progress);
            if (!ran) {
                free(pt);
                ++failures;
                continue;
            }
            if (o.json)
                print_point_json(pt, &o, copy_bw, first);
            else
                print_point_text(pt, &o, copy_bw);
            free(pt);
            first = 0;
            fflush(stdout);
        }
    }
    if (o.json) printf("\n  ]");
    if (o.accuracy) {
        static const int acc_m[] = {64, 128, 256, 512, 1024, 2048, 4096, 8192};
        const long acc_count = 64;
        if (o.json)
            printf(", \"accuracy\": {\"systems\": %ld, \"dominance\": \"|d| = (|dl| + |du|)(1 + "
                   "U[0.001, 0.01])\", \"rows\": [",
                   acc_count);
        else {
            printf("\naccuracy: largest relative 2-norm error of %ld weakly dominant systems "
                   "(|d| = (|dl|+|du|)(1 + U[0.001, 0.01])) against long-double Thomas on the "
                   "same coefficients (fp32: rounded to float)\n%4s %5s",
                   acc_count, "prec", "m");
            for (int c = 0; c < N_ACC; ++c) printf(" %11s", acc_name[c]);
            printf("\n");
        }
        int rows = 0;
        for (int pi = 0; pi < 2; ++pi)
            for (int k = 0; k < 8 && (o.precisions & (1 << pi)); ++k) {
                const hb_precision_t prec = pi ? HB_FLOAT32 : HB_FLOAT64;
                double err[N_ACC];
                int have[N_ACC];
                bench_tridiag_accuracy(ctx, prec, acc_m[k], acc_count, err, have);
                if (o.json) {
                    printf("%s\n    {\"precision\": \"%s\", \"m\": %d", rows++ ? "," : "",
                           prec_name(prec), acc_m[k]);
                    for (int c = 0; c < N_ACC; ++c)
                        if (have[c]) printf(", \"%s\": %.3e", acc_key[c], err[c]);
                    printf("}");
                } else {
                    printf("%4s %5d", prec_name(prec), acc_m[k]);
                    for (int c = 0; c < N_ACC; ++c)
                        if (have[c])
                            printf(" %11.2e", err[c]);
                        else
                            printf(" %11s", "-");
                    printf("\n");
                }
            }
        const long mem_count = 20000;
        if (o.json)
            printf("\n  ]}, \"memory\": {\"systems\": %ld, \"what\": \"device bytes: inputs, x "
                   "(ours; cuSPARSE solves in place) and workspace\", \"rows\": [",
                   mem_count);
        else
            printf("\ndevice memory [MB] for %ld systems (inputs + x + workspace; cuSPARSE: in "
                   "place)\n%5s %11s %11s %11s %11s %11s\n",
                   mem_count, "m", "ours auto", "ours thomas", "cs strided", "cs il a0",
                   "cs il a1");
        for (int k = 0; k < 8; ++k) {
            double mb[5];
            int have[5];
            bench_tridiag_memory_row(ctx, acc_m[k], mem_count, mb, have);
            if (o.json) {
                printf("%s\n    {\"m\": %d", k ? "," : "", acc_m[k]);
                for (int c = 0; c < 5; ++c)
                    if (have[c]) printf(", \"%s_MB\": %.1f", mem_key[c], mb[c]);
                printf("}");
            } else {
                printf("%5d", acc_m[k]);
                for (int c = 0; c < 5; ++c)
                    if (have[c])
                        printf(" %11.1f", mb[c]);
                    else
                        printf(" %11s", "-");
                printf("\n");
            }
        }
        if (o.json) printf("\n  ]}");
    }
    if (o.json) printf("\n}\n");
    hb_context_destroy(ctx);
    return failures ? 1 : 0;
}
