/* hinesbatch solve: a batch of Hines systems from one morphology, timed. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli.h"

static const char usage_solve[] =
    "usage: hinesbatch solve [--morph FILE.swc] [--cells N] [options]\n"
    "\n"
    "Builds one backward-Euler step's Hines system from the morphology (passive\n"
    "membrane, random voltages around rest) for N cells, cycling 64 voltage sets\n"
    "so neighbours differ, and solves the batch K times. Prints the time per solve\n"
    "(median, min, max) and compartments solved per second.\n"
    "\n"
    "  --morph FILE.swc  morphology (default: a built-in HSN-fluoro01 cell)\n"
    "  --cells N         systems in the batch (default 1000)\n"
    "  --layout L        flat | interleaved (default) | block\n"
    "  --block-size BS   systems per block for --layout block (default 32)\n"
    "  --backend B       seq | omp | cuda | best (default: omp when built with OpenMP,\n"
    "                    else seq)\n"
    "  --threads T       OpenMP threads, at most " CLI_STR(HB_MAX_THREADS) " (default: OpenMP's\n"
    "                    default, OMP_NUM_THREADS)\n"
    "  --steps K         solves to time (default 10)\n"
    "  --dt MS           time step of the system [ms] (default 0.025)\n"
    "  --seed S          seed of the voltages (default 1)\n"
    "  --check           report the largest relative residual ||Ax-b||/||b||\n"
    "  --json            machine-readable output\n";

typedef struct {
    const char *morph_path;
    long cells, block_size, threads, steps, seed;
    double dt;
    hb_layout_t layout;
    hb_backend_t backend;
    int check, json;
} solve_options_t;

/* CLI_CONTINUE, or the exit status (0 after --help, 2 after an error message). */
static int parse_solve(int argc, char **argv, solve_options_t *o, cli_model_options_t *m)
{
    static const cli_choice_t layouts[] = {
        {"flat", HB_LAYOUT_FLAT}, {"interleaved", HB_LAYOUT_INTERLEAVED},
        {"block", HB_LAYOUT_BLOCK}, {NULL, 0}};
    static const cli_choice_t backends[] = {{"seq", HB_BACKEND_SEQ}, {"omp", HB_BACKEND_OMP},
                                            {"cuda", HB_BACKEND_CUDA}, {"best", HB_BACKEND_BEST},
                                            {NULL, 0}};
    int layout = o->layout, backend = o->backend;
    const cli_option_t options[] = {
        CLI_FLAG("--json", &o->json, 1),
        CLI_FLAG("--check", &o->check, 1),
        CLI_STRING("--morph", &o->morph_path),
        CLI_CHOICE("--layout", &layout, layouts),
        CLI_CHOICE("--backend", &backend, backends),
        CLI_INT("--cells", &o->cells, 1, 100000000L, "an integer 1..100000000"),
        CLI_INT("--block-size", &o->block_size, 1, 100000000L, "an integer 1..100000000"),
        CLI_INT("--threads", &o->threads, 0, HB_MAX_THREADS,
                "an integer 0.." CLI_STR(HB_MAX_THREADS) " (the cap on threads)"),
        CLI_INT("--steps", &o->steps, 1, 100000000L, "an integer 1..100000000"),
        CLI_INT("--seed", &o->seed, 0, 100000000L, "an integer 0..100000000"),
        CLI_DOUBLE("--dt", &o->dt, 0, "a positive number [ms]"),
        CLI_MODEL_OPTIONS(m),
    };
    const int parsed = cli_parse_options("solve", usage_solve, options,
                                         sizeof options / sizeof *options, argc, argv);
    o->layout = (hb_layout_t)layout;
    o->backend = (hb_backend_t)backend;
    return parsed;
}

/* Largest ||A x - b|| / ||b|| over the systems; `original` holds A and b. */
static hb_status_t max_residual(const hb_batch_t *original, const hb_batch_t *solved,
                                const int *parent, double *result)
{
    int m = hb_batch_rows(original), n = hb_batch_count(original);
    double *buf = malloc((size_t)m * 6 * sizeof *buf);
    if (!buf) return HB_ERR_ALLOC;
    double *u = buf, *l = u + m, *d = l + m, *b = d + m, *x = b + m, *ax = x + m;
    double worst = 0.0;
    hb_status_t status = HB_SUCCESS;
    for (int s = 0; s < n && status == HB_SUCCESS; s++) {
        status = hb_batch_get(original, s, u, l, d, b);
        if (status == HB_SUCCESS) status = hb_batch_get(solved, s, NULL, NULL, NULL, x);
        if (status == HB_SUCCESS) status = hb_hines_matvec(m, parent, u, l, d, x, ax);
        double num = 0.0, den = 0.0;
        for (int i = 0; i < m; i++) {
            num += (ax[i] - b[i]) * (ax[i] - b[i]);
            den += b[i] * b[i];
        }
        double rel = den > 0.0 ? sqrt(num / den) : sqrt(num);
        if (!(rel <= worst)) worst = rel; /* NaN propagates */
    }
    free(buf);
    *result = worst;
    return status;
}

int cli_command_solve(int argc, char **argv)
{
    solve_options_t o = {NULL, 1000, 32, 0, 10, 1, 0.025, HB_LAYOUT_INTERLEAVED,
                         hb_backend_available(HB_BACKEND_OMP) ? HB_BACKEND_OMP : HB_BACKEND_SEQ,
                         0, 0};
    cli_model_options_t m;
    cli_model_options_default(&m);
    int rc = parse_solve(argc, argv, &o, &m);
    if (rc != CLI_CONTINUE) return rc;

    hb_morph_t *morph = NULL;
    hb_cable_t *cable = NULL;
    hb_context_t *ctx = NULL;
    hb_batch_t *batch = NULL, *original = NULL;
    double *times = NULL;
    hb_status_t status;
    if (cli_load_model("solve", o.morph_path, &m, &morph, &cable)) return 1;

    int rows = hb_cable_size(cable);
    const int *parent = hb_cable_parent(cable);
    int bs = o.layout == HB_LAYOUT_BLOCK ? (int)o.block_size : 1;
    double max_rel_residual = 0.0;
    rc = 1;
    if ((status = hb_context_create(o.backend, &ctx)) != HB_SUCCESS) goto error;
    if (o.threads > 0 && (status = hb_context_set_threads(ctx, (int)o.threads)) != HB_SUCCESS)
        goto error;
    if ((status = hb_batch_create(ctx, rows, parent, (int)o.cells, o.layout, bs, &batch)) !=
            HB_SUCCESS ||
        (status = hb_batch_create(ctx, rows, parent, (int)o.cells, o.layout, bs, &original)) !=
            HB_SUCCESS)
        goto error;
    if ((status = cli_fill_batch(original, cable, o.dt, o.seed, 0)) != HB_SUCCESS) goto error;
    times = malloc((size_t)o.steps * sizeof *times);
    if (!times) {
        status = HB_ERR_ALLOC;
        goto error;
    }
    /* Each solve starts from the freshly assembled system (restoring it is not timed). */
    cli_progress_t progress;
    cli_progress_begin(&progress, "solve", "solves");
    for (long k = 0; k < o.steps; k++) {
        cli_progress_show(&progress, (double)k, (double)o.steps, 0);
        if ((status = hb_batch_convert(original, batch)) != HB_SUCCESS) goto error;
        double t0 = cli_now_seconds();
        if ((status = hb_batch_solve(batch)) != HB_SUCCESS) goto error;
        times[k] = cli_now_seconds() - t0;
    }
    cli_progress_clear(&progress);
    if (o.check && (status = max_residual(original, batch, parent, &max_rel_residual)) !=
                       HB_SUCCESS)
        goto error;
    if (o.check && !isfinite(max_rel_residual)) { /* never print a NaN residual with exit 0 */
        cli_fail("solve", "the residual is %g: the system is singular or overflows; expected a "
                 "finite residual", max_rel_residual);
        goto done;
    }

    double median = cli_median(times, (size_t)o.steps); /* sorts times */
    int compartments = hb_cable_compartments(cable);
    double rate = (double)o.cells * compartments / median;
    const char *name = o.morph_path ? o.morph_path : hb_default_swc_name;
    if (o.json) {
        printf("{\"morphology\": ");
        cli_json_string(stdout, name);
        printf(", \"cells\": %ld, \"rows\": %d, \"compartments\": %d, \"layout\": \"%s\", "
               "\"block_size\": %d, \"backend\": \"%s\", \"threads\": %d, \"steps\": %ld, "
               "\"time_per_solve_s\": {\"median\": %.9g, \"min\": %.9g, \"max\": %.9g}, "
               "\"compartments_per_second\": %.6g",
               o.cells, rows, compartments, hb_layout_name(o.layout), bs,
               hb_backend_name(hb_context_backend(ctx)), hb_context_threads(ctx), o.steps, median,
               times[0], times[o.steps - 1], rate);
        if (o.check) printf(", \"max_rel_residual\": %.3e", max_rel_residual);
        printf("}\n");
    } else {
        printf("morphology        %s\n", name);
        printf("cells             %ld\n", o.cells);
        printf("rows per cell     %d (%d compartments)\n", rows, compartments);
        printf("layout            %s", hb_layout_name(o.layout));
        if (o.layout == HB_LAYOUT_BLOCK) printf(" (block size %d)", bs);
        printf("\nbackend           %s", hb_backend_name(hb_context_backend(ctx)));
        if (hb_context_backend(ctx) == HB_BACKEND_OMP) printf(" (%d threads)", hb_context_threads(ctx));
        printf("\ntime per solve    %.6g s median, %.6g min, %.6g max over %ld solves\n", median,
               times[0], times[o.steps - 1], o.steps);
        printf("throughput        %.4g compartments/s\n", rate);
        if (o.check) printf("max rel residual  %.3e\n", max_rel_residual);
    }
    rc = 0;
    goto done;
error:
    cli_fail_status("solve", status);
done:
    free(times);
    hb_batch_destroy(original);
    hb_batch_destroy(batch);
    if (ctx) hb_context_destroy(ctx);
    hb_cable_destroy(cable);
    hb_morph_destroy(morph);
    return rc;
}

