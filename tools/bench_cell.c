/*
 * hinesbatch bench cell: the simulator's speed in ns per compartment-step.
 *
 * Three models of real cells (NEURON scheme, nseg 1 per section, Ra 100 ohm cm,
 * cm 1 uF/cm2, an IClamp of 0.5 nA in the soma from 1 ms): passive
 * (morph_l5pc_with_axon, 324 compartments), hh in the soma and hh everywhere
 * (HSN-fluoro01, 446 compartments). For each: the whole step (hb_sim_advance,
 * no probes) and the Hines solve alone: on one CPU thread the engine's solve
 * (hb_sim_solve_benchmark: shared u and l, one division per row) from memory
 * and from the block buffer the step solves in, and the library's batch solve
 * (hb_batch_benchmark on the same matrices, Block-Interleaved, per-lane u and
 * l); on all cores (OpenMP) and on the GPU the library's batch solve; median,
 * min and max over repeats. With --neuron, NEURON runs the same
 * model in the same run (bench/neuron_cell.py), and with --neuron-perf its
 * matrix solve (nrn_solve, triang, bksub) is measured by perf sampling.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/bench.h"
#include "cli.h"

/* Internal (src/sim/sim.h): the simulator engine's Hines solve alone. */
hb_status_t hb_sim_solve_benchmark(const hb_cable_t *cable, int cells, double dt_ms,
                                   int in_cache, int repeats, double *seconds);

static const char usage[] =
    "usage: hinesbatch bench cell [options]\n"
    "\n"
    "ns per compartment-step of the simulator: the whole step and the Hines solve\n"
    "alone, for passive cells (morph_l5pc_with_axon, 324 compartments), cells with hh\n"
    "in the soma and cells with hh everywhere (HSN-fluoro01, 446 compartments); one\n"
    "CPU thread, all cores (OpenMP), the GPU. NEURON as the peer with --neuron.\n"
    "\n"
    "  --data DIR         folder with the .swc files (default data/morphologies)\n"
    "  --models LIST      passive,hh-soma,hh-all (default all)\n"
    "  --cells N          cells per CPU run (default 2048: several times the caches)\n"
    "  --gpu-cells N      cells per GPU run (default 65536)\n"
    "  --steps S          steps per timed run (default 100)\n"
    "  --repeats R        timed runs (default 5)\n"
    "  --threads T        OpenMP threads for 'all cores', at most " CLI_STR(HB_MAX_THREADS) "\n"
    "                     (default: OpenMP's default)\n"
    "  --no-omp           skip the all-cores runs\n"
    "  --no-cuda          skip the GPU\n"
    "  --neuron           run NEURON on the same models (bench/neuron_cell.py)\n"
    "  --neuron-cells N   cells in NEURON's runs (default 256); ours are timed at this\n"
    "                     count too (the same working set as NEURON's)\n"
    "  --neuron-perf      also measure NEURON's nrn_solve share with perf\n"
    "  --python PATH      Python with NEURON (default /usr/bin/python3)\n"
    "  --neuron-script F  (default bench/neuron_cell.py)\n"
    "  --json             one JSON document instead of the table\n"
    "  --json-out FILE    also write the JSON document to FILE\n";

typedef struct {
    const char *name, *file, *what;
    int hh; /* 0 none, 1 soma, 2 everywhere */
} model_spec_t;

static const model_spec_t specs[] = {
    {"passive", "morph_l5pc_with_axon.swc", "pas everywhere", 0},
    {"hh-soma", "HSN-fluoro01.CNG.swc", "hh in the soma, pas elsewhere", 1},
    {"hh-all", "HSN-fluoro01.CNG.swc", "hh everywhere", 2},
};
#define N_SPECS (int)(sizeof specs / sizeof *specs)

typedef struct {
    const char *data;
    int mask;
    long cells, gpu_cells, neuron_cells;
    int steps, repeats, threads, omp, cuda, neuron, neuron_perf, json;
    const char *python, *script, *json_out;
} options_t;

typedef struct {
    double median, min, max; /* ns per compartment-step */
    int ok;
} stat_t;

static stat_t stats(double *ns, int n)
{
    stat_t s = {0, 0, 0, 1};
    s.median = cli_median(ns, (size_t)n); /* sorts */
    s.min = ns[0];
    s.max = ns[n - 1];
    return s;
}

static int build_model(const options_t *o, const model_spec_t *sp, hb_morph_t **morph,
                       hb_model_t **model)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", o->data, sp->file);
    hb_status_t st = hb_morph_load_swc(path, NULL, morph);
    if (st != HB_SUCCESS) return cli_fail_status("bench cell", st);
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_FIXED;
    disc.count = 1;
    disc.ra_ohm_cm = 100.0;
    disc.cm_uf_cm2 = 1.0;
    if ((st = hb_model_create(*morph, &disc, model)) != HB_SUCCESS)
        return cli_fail_status("bench cell", st);
    hb_mech_t pas, hh;
    hb_mech_default(HB_MECH_PAS, &pas);
    hb_mech_default(HB_MECH_HH, &hh);
    pas.g_pas = 1e-4;
    pas.e_pas = -65.0;
    if (sp->hh < 2) st = hb_model_insert(*model, HB_REGION_ALL, &pas);
    if (st == HB_SUCCESS && sp->hh == 1) st = hb_model_insert(*model, 1, &hh);
    if (st == HB_SUCCESS && sp->hh == 2) st = hb_model_insert(*model, HB_REGION_ALL, &hh);
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.5, 0};
    if (st == HB_SUCCESS) st = hb_model_add_iclamp(*model, &soma, 1.0, 1e9, 0.5);
    if (st != HB_SUCCESS) return cli_fail_status("bench cell", st);
    return 0;
}

/* Whole steps: ns per compartment-step over `repeats` runs of `steps`. */
static stat_t time_steps(hb_model_t *model, long cells, hb_backend_t be, const options_t *o)
{
    stat_t bad = {NAN, NAN, NAN, 0};
    hb_model_t **list = malloc((size_t)cells * sizeof *list);
    double *ns = malloc((size_t)o->repeats * sizeof *ns);
    if (!list || !ns) {
        free(list);
        free(ns);
        cli_fail("bench cell", "out of memory");
        return bad;
    }
    for (long c = 0; c < cells; c++) list[c] = model;
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.backend = be;
    opt.threads = be == HB_BACKEND_OMP ? o->threads : 0;
    opt.t_stop_ms = 1e9;
    hb_sim_t *sim = NULL;
    hb_status_t st = hb_sim_create(list, (int)cells, &opt, &sim);
    if (st == HB_SUCCESS) st = hb_sim_init(sim);
    if (st == HB_SUCCESS) st = hb_sim_advance(sim, 10); /* warm-up */
    const double comps = (double)cells * hb_cable_compartments(hb_model_cable(model));
    for (int r = 0; r < o->repeats && st == HB_SUCCESS; r++) {
        const double t0 = cli_now_seconds();
        st = hb_sim_advance(sim, o->steps);
        ns[r] = (cli_now_seconds() - t0) / (comps * o->steps) * 1e9;
    }
    stat_t out = bad;
    if (st == HB_SUCCESS) out = stats(ns, o->repeats);
    else fprintf(stderr, "hinesbatch bench cell: %s steps: %s (%s)\n", hb_backend_name(be),
                 hb_last_error(), hb_status_string(st));
    hb_sim_destroy(sim);
    free(list);
    free(ns);
    return out;
}

/* The library's batch Hines solve alone (hb_batch_benchmark; CPU: Block-
 * Interleaved, 8 cells a block, per-lane u and l, two divisions per row, as the
 * engine did before commit dcdd4f2; GPU: the library's kernel for the shape), from memory. */
static stat_t time_solve(const hb_cable_t *cable, long cells, hb_context_t *ctx, const options_t *o)
{
    stat_t bad = {NAN, NAN, NAN, 0};
    const int m = hb_cable_size(cable);
    const int gpu = hb_context_backend(ctx) == HB_BACKEND_CUDA;
    const hb_layout_t layout = gpu ? HB_LAYOUT_INTERLEAVED : HB_LAYOUT_BLOCK;
    const int bs = gpu ? 1 : 8;
    hb_batch_t *batch = NULL, *source = NULL;
    double *t = malloc((size_t)o->repeats * sizeof *t);
    hb_status_t st = t ? HB_SUCCESS : HB_ERR_ALLOC;
    if (st == HB_SUCCESS)
        st = hb_batch_create(ctx, m, hb_cable_parent(cable), (int)cells, layout, bs, &batch);
    if (st == HB_SUCCESS)
        st = hb_batch_create(ctx, m, hb_cable_parent(cable), (int)cells, layout, bs, &source);
    if (st == HB_SUCCESS) st = cli_fill_batch(source, cable, 0.025, 0x5eed0001ULL, 0);
    if (st == HB_SUCCESS) st = hb_batch_convert(source, batch);
    if (st == HB_SUCCESS) st = hb_batch_benchmark(batch, source, o->repeats, t);
    stat_t out = bad;
    if (st == HB_SUCCESS) {
        const double comps = (double)cells * hb_cable_compartments(cable);
        for (int r = 0; r < o->repeats; r++) t[r] = t[r] / comps * 1e9;
        out = stats(t, o->repeats);
    } else {
        fprintf(stderr, "hinesbatch bench cell: %s solve: %s (%s)\n",
                hb_backend_name(hb_context_backend(ctx)), hb_last_error(), hb_status_string(st));
    }
    hb_batch_destroy(batch);
    hb_batch_destroy(source);
    free(t);
    return out;
}

/* The engine's solve (copies of one model: shared u, l; one division per row);
 * in_cache: each block from the step's block buffer. */
static stat_t time_engine_solve(const hb_cable_t *cable, long cells, int in_cache,
                                const options_t *o)
{
    stat_t out = {NAN, NAN, NAN, 0};
    double *t = malloc((size_t)o->repeats * sizeof *t);
    hb_status_t st = t ? hb_sim_solve_benchmark(cable, (int)cells, 0.025, in_cache, o->repeats, t)
                       : HB_ERR_ALLOC;
    if (st == HB_SUCCESS) {
        const double comps = (double)cells * hb_cable_compartments(cable);
        for (int r = 0; r < o->repeats; r++) t[r] = t[r] / comps * 1e9;
        out = stats(t, o->repeats);
    } else {
        fprintf(stderr, "hinesbatch bench cell: engine solve: %s (%s)\n", hb_last_error(),
                hb_status_string(st));
    }
    free(t);
    return out;
}

/* A number after "key": in a line of JSON; NAN when absent. */
static double json_number(const char *text, const char *key)
{
    char pat[64];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(text, pat);
    return p ? strtod(p + strlen(pat), NULL) : NAN;
}

typedef struct {
    stat_t step, step_ce;     /* default node order, cache_efficient */
    double solve_share;       /* of the cache_efficient run's samples: nrn_solve+triang+bksub */
    int compartments;
    char why[256];            /* why NEURON did not run */
} neuron_t;

static int run_capture(const char *cmd, char *out, size_t size)
{
    FILE *p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, size - 1, p);
    out[n] = 0;
    return pclose(p);
}

static void run_neuron(const options_t *o, const model_spec_t *sp, neuron_t *nr)
{
    memset(nr, 0, sizeof *nr);
    nr->step.median = nr->step_ce.median = nr->solve_share = NAN;
    if (access(o->python, X_OK) != 0 || access(o->script, R_OK) != 0) {
        snprintf(nr->why, sizeof nr->why, "%s or %s not found", o->python, o->script);
        return;
    }
    char cmd[4096], out[8192];
    double setup = NAN;
    for (int ce = 0; ce < 2; ce++) {
        snprintf(cmd, sizeof cmd,
                 "'%s' '%s' --swc '%s/%s' --kind %s --cells %ld --steps %d --repeats %d "
                 "--cache-efficient %d 2>/dev/null",
                 o->python, o->script, o->data, sp->file, sp->name, o->neuron_cells, o->steps,
                 o->repeats, ce);
        int rc = run_capture(cmd, out, sizeof out);
        double med = json_number(out, "ns_per_compartment_step");
        if (rc != 0 || isnan(med)) {
            char *e = strstr(out, "\"error\"");
            snprintf(nr->why, sizeof nr->why, "%s", e ? e : "the NEURON script failed");
            char *nl = strchr(nr->why, '\n');
            if (nl) *nl = 0;
            return;
        }
        stat_t *s = ce ? &nr->step_ce : &nr->step;
        s->median = med;
        s->min = json_number(out, "ns_min");
        s->max = json_number(out, "ns_max");
        s->ok = 1;
        nr->compartments = (int)json_number(out, "compartments_per_cell");
        setup = json_number(out, "setup_s");
    }
    if (!o->neuron_perf) return;
    /* perf: sampling starts after the setup (1.15 x what the run above took, + 1 s);
     * the stepping lasts 0.6 x the setup + 8 s, so the window holds stepping only. */
    char data[] = "/tmp/hb_neuron_perf_XXXXXX";
    int fd = mkstemp(data);
    if (fd < 0) return;
    close(fd);
    const long delay_ms = (long)(1150.0 * setup) + 1000;
    const long steps = (long)fmax(200.0, (0.6 * setup + 8.0) * 1e9 /
                                             (nr->step_ce.median * (double)o->neuron_cells *
                                              (double)nr->compartments));
    snprintf(cmd, sizeof cmd,
             "perf record -q -F 2000 -D %ld -o %s -- '%s' '%s' --swc '%s/%s' --kind %s --cells %ld "
             "--steps %ld --repeats 1 --cache-efficient 1 >/dev/null 2>&1 && "
             "perf report -i %s --no-children --sort symbol --stdio 2>/dev/null",
             delay_ms, data, o->python, o->script, o->data, sp->file, sp->name, o->neuron_cells,
             steps, data);
    FILE *p = popen(cmd, "r");
    if (!p) return;
    char line[1024];
    double share = 0.0;
    int any = 0;
    while (fgets(line, sizeof line, p)) {
        double pct;
        if (sscanf(line, " %lf%%", &pct) != 1) continue;
        any = 1;
        const char *sym = strstr(line, "] ");
        if (!sym) continue;
        sym += 2;
        if (strncmp(sym, "nrn_solve", 9) == 0 || strncmp(sym, "triang", 6) == 0 ||
            strncmp(sym, "bksub", 5) == 0)
            share += pct / 100.0;
    }
    pclose(p);
    remove(data);
    if (any) nr->solve_share = share;
}

static void print_stat(FILE *js, const char *key, stat_t s, int comma)
{
    fprintf(js, "%s\"%s\": {\"median_ns\": ", comma ? ", " : "", key);
    cli_json_number(js, s.ok ? s.median : NAN);
    fputs(", \"min_ns\": ", js);
    cli_json_number(js, s.ok ? s.min : NAN);
    fputs(", \"max_ns\": ", js);
    cli_json_number(js, s.ok ? s.max : NAN);
    fputs("}", js);
}

/* ", "KEY": NUMBER" (NaN as null) */
static void json_field(FILE *js, const char *key, double value)
{
    fprintf(js, ", \"%s\": ", key);
    cli_json_number(js, value);
}

static void row(const char *what, stat_t s, double peer)
{
    if (!s.ok) {
        printf("    %-34s %10s\n", what, "-");
        return;
    }
    printf("    %-34s %10.3f %10.3f %10.3f", what, s.median, s.min, s.max);
    if (!isnan(peer)) printf("   %6.2fx", peer / s.median);
    putchar('\n');
}

int cli_bench_cell(int argc, char **argv)
{
    static const char command[] = "bench cell";
    options_t o;
    memset(&o, 0, sizeof o);
    o.data = "data/morphologies";
    o.mask = (1 << N_SPECS) - 1;
    o.cells = 2048;
    o.gpu_cells = 65536;
    o.neuron_cells = 256;
    o.steps = 100;
    o.repeats = 5;
    o.omp = o.cuda = 1;
    o.python = "/usr/bin/python3";
    o.script = "bench/neuron_cell.py";
    cli_choice_t models[N_SPECS + 1] = {{NULL, 0}};
    for (int k = 0; k < N_SPECS; k++) models[k] = (cli_choice_t){specs[k].name, 1 << k};
    const cli_option_t options[] = {
        CLI_FLAG("--json", &o.json, 1),
        CLI_FLAG("--no-omp", &o.omp, 0),
        CLI_FLAG("--no-cuda", &o.cuda, 0),
        CLI_FLAG("--neuron", &o.neuron, 1),
        CLI_FLAG("--neuron-perf", &o.neuron_perf, 1),
        CLI_STRING("--json-out", &o.json_out),
        CLI_STRING("--python", &o.python),
        CLI_STRING("--neuron-script", &o.script),
        CLI_STRING("--data", &o.data),
        CLI_NAME_SET("--models", &o.mask, models, "model"),
        CLI_POSITIVE("--cells", &o.cells, 100000000L),
        CLI_POSITIVE("--gpu-cells", &o.gpu_cells, 100000000L),
        CLI_POSITIVE("--neuron-cells", &o.neuron_cells, 100000000L),
        CLI_POSITIVE("--steps", &o.steps, 100000000L),
        CLI_POSITIVE("--repeats", &o.repeats, 100000000L),
        CLI_INT("--threads", &o.threads, 1, HB_MAX_THREADS,
                "an integer 1.." CLI_STR(HB_MAX_THREADS) " (the cap on threads)"),
    };
    const int parsed = cli_parse_options(command, usage, options, sizeof options / sizeof *options,
                                         argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
    if (o.neuron_perf) o.neuron = 1; /* perf samples a NEURON run */
    const int omp = o.omp && hb_backend_available(HB_BACKEND_OMP);
    const int cuda = o.cuda && hb_backend_available(HB_BACKEND_CUDA);
    hb_context_t *seq_ctx = NULL, *omp_ctx = NULL, *gpu_ctx = NULL;
    hb_status_t st = hb_context_create(HB_BACKEND_SEQ, &seq_ctx);
    if (st == HB_SUCCESS && omp) st = hb_context_create(HB_BACKEND_OMP, &omp_ctx);
    if (st == HB_SUCCESS && omp && o.threads) st = hb_context_set_threads(omp_ctx, o.threads);
    if (st == HB_SUCCESS && cuda) st = hb_context_create(HB_BACKEND_CUDA, &gpu_ctx);
    if (st != HB_SUCCESS) return cli_fail_status(command, st);

    FILE *js = o.json ? stdout : NULL;
    if (o.json_out && !(js = fopen(o.json_out, "w")))
        return cli_fail(command, "cannot write %s", o.json_out);
    const int threads = omp_ctx ? hb_context_threads(omp_ctx) : 0;
    if (js) {
        fputs("{\"gpu\": ", js);
        cli_json_string(js, gpu_ctx ? hb_context_device_name(gpu_ctx) : "none");
        fprintf(js, ", \"omp_threads\": %d, \"cells\": %ld, \"gpu_cells\": %ld, \"neuron_cells\": "
                "%ld, \"steps\": %d, \"repeats\": %d, \"unit\": \"ns per compartment-step\", "
                "\"models\": [",
                threads, o.cells, o.gpu_cells, o.neuron_cells, o.steps, o.repeats);
    }
    if (!o.json)
        printf("ns per compartment-step (median, min, max of %d runs of %d steps); %ld cells on "
               "the CPU, %ld on the GPU (%s), %d OpenMP threads%s\n",
               o.repeats, o.steps, o.cells, o.gpu_cells,
               gpu_ctx ? hb_context_device_name(gpu_ctx) : "none", threads,
               o.neuron ? "; NEURON: the same model, default and cache_efficient node order" : "");
    int rc = 0, first = 1, n_models = 0, done = 0;
    for (int k = 0; k < N_SPECS; k++) n_models += o.mask >> k & 1;
    cli_progress_t progress;
    cli_progress_begin(&progress, command, "models");
    for (int k = 0; k < N_SPECS && rc == 0; k++) {
        if (!(o.mask & (1 << k))) continue;
        const model_spec_t *sp = &specs[k];
        cli_progress_show(&progress, done++, n_models, 1);
        hb_morph_t *morph = NULL;
        hb_model_t *model = NULL;
        if ((rc = build_model(&o, sp, &morph, &model)) != 0) {
            hb_model_destroy(model);
            hb_morph_destroy(morph);
            break;
        }
        const hb_cable_t *cable = hb_model_cable(model);
        const int comps = hb_cable_compartments(cable), rows = hb_cable_size(cable);
        neuron_t nr;
        memset(&nr, 0, sizeof nr);
        nr.step.median = nr.step_ce.median = nr.solve_share = NAN;
        if (o.neuron) {
            if (!o.json) {
                printf("  (NEURON: %s, %ld cells ...)\n", sp->name, o.neuron_cells);
                fflush(stdout);
            }
            run_neuron(&o, sp, &nr);
        }
        const stat_t s_seq = time_steps(model, o.cells, HB_BACKEND_SEQ, &o);
        const stat_t v_seq = time_engine_solve(cable, o.cells, 0, &o);
        const stat_t c_seq = time_engine_solve(cable, o.cells, 1, &o);
        /* cells without hh: the step reuses every row's factors (hb_step_solve_fixed) */
        const int passive = strcmp(sp->name, "passive") == 0;
        stat_t f_seq = {NAN, NAN, NAN, 0}, f_few = f_seq;
        if (passive) f_seq = time_engine_solve(cable, o.cells, 2, &o);
        const stat_t b_seq = time_solve(cable, o.cells, seq_ctx, &o);
        /* With NEURON: also at NEURON's cell count (same working set, same cache level). */
        stat_t s_few = {NAN, NAN, NAN, 0}, v_few = s_few, c_few = s_few, b_few = s_few;
        if (o.neuron) {
            s_few = time_steps(model, o.neuron_cells, HB_BACKEND_SEQ, &o);
            v_few = time_engine_solve(cable, o.neuron_cells, 0, &o);
            c_few = time_engine_solve(cable, o.neuron_cells, 1, &o);
            if (passive) f_few = time_engine_solve(cable, o.neuron_cells, 2, &o);
            b_few = time_solve(cable, o.neuron_cells, seq_ctx, &o);
        }
        stat_t s_omp = {NAN, NAN, NAN, 0}, v_omp = s_omp, s_gpu = s_omp, v_gpu = s_omp;
        if (omp_ctx) {
            s_omp = time_steps(model, o.cells, HB_BACKEND_OMP, &o);
            v_omp = time_solve(cable, o.cells, omp_ctx, &o);
        }
        if (gpu_ctx) {
            s_gpu = time_steps(model, o.gpu_cells, HB_BACKEND_CUDA, &o);
            v_gpu = time_solve(cable, o.gpu_cells, gpu_ctx, &o);
        }
        const double peer = nr.step_ce.ok ? fmin(nr.step.median, nr.step_ce.median) : NAN;
        const double peer_solve = nr.step_ce.ok ? nr.solve_share * nr.step_ce.median : NAN;
        char few_step[64], few_solve[64], few_cache[64], few_batch[64];
        snprintf(few_step, sizeof few_step, "whole step, CPU 1 thread, %ld cells", o.neuron_cells);
        snprintf(few_solve, sizeof few_solve, "Hines solve, CPU 1 thread, %ld cells", o.neuron_cells);
        snprintf(few_cache, sizeof few_cache, "  in the step's buffer, %ld cells", o.neuron_cells);
        snprintf(few_batch, sizeof few_batch, "  library batch solve, %ld cells", o.neuron_cells);
        if (!s_seq.ok || !v_seq.ok || !c_seq.ok) rc = 1;
        cli_progress_clear(&progress);
        if (!o.json) {
            printf("\n%s: %s, %s, %d compartments (%d matrix rows)\n", sp->name, sp->file,
                   sp->what, comps, rows);
            printf("    %-34s %10s %10s %10s   %s\n", "", "median", "min", "max",
                   o.neuron ? "NEURON / ours" : "");
            row("whole step, CPU 1 thread", s_seq, peer);
            if (o.neuron) row(few_step, s_few, peer);
            row("whole step, CPU all cores", s_omp, NAN);
            row("whole step, GPU", s_gpu, NAN);
            row("Hines solve alone, CPU 1 thread", v_seq, peer_solve);
            row("  in the step's buffer", c_seq, peer_solve);
            if (passive) row("  ... factors reused (the step's)", f_seq, peer_solve);
            row("  library batch solve", b_seq, peer_solve);
            if (o.neuron) {
                row(few_solve, v_few, peer_solve);
                row(few_cache, c_few, peer_solve);
                if (passive) row("  ... factors reused, same cells", f_few, peer_solve);
                row(few_batch, b_few, peer_solve);
            }
            row("Hines solve alone, CPU all cores", v_omp, NAN);
            row("Hines solve alone, GPU", v_gpu, NAN);
            if (o.neuron && nr.step.ok) {
                row("NEURON 1 thread, default order", nr.step, NAN);
                row("NEURON 1 thread, cache_efficient", nr.step_ce, NAN);
                if (!isnan(nr.solve_share))
                    printf("    %-34s %10.3f   (%.1f%% of NEURON's cache_efficient step, perf)\n",
                           "NEURON nrn_solve", peer_solve, 100 * nr.solve_share);
                if (nr.compartments != comps)
                    printf("    note: NEURON has %d compartments per cell, we have %d\n",
                           nr.compartments, comps);
            } else if (o.neuron) {
                printf("    NEURON not run: %s\n", nr.why);
            }
        }
        if (js) {
            fprintf(js, "%s\n  {\"model\": \"%s\", \"swc\": \"%s\", \"membrane\": \"%s\", "
                    "\"compartments\": %d, \"rows\": %d, ",
                    first ? "" : ",", sp->name, sp->file, sp->what, comps, rows);
            print_stat(js, "step_cpu1", s_seq, 0);
            print_stat(js, "step_cpu1_neuron_cells", s_few, 1);
            print_stat(js, "solve_cpu1_neuron_cells", v_few, 1);
            print_stat(js, "solve_cpu1_in_step_buffer", c_seq, 1);
            print_stat(js, "solve_cpu1_in_step_buffer_neuron_cells", c_few, 1);
            print_stat(js, "solve_cpu1_in_step_buffer_factors_reused", f_seq, 1);
            print_stat(js, "solve_cpu1_in_step_buffer_factors_reused_neuron_cells", f_few, 1);
            print_stat(js, "solve_cpu1_library_batch", b_seq, 1);
            print_stat(js, "solve_cpu1_library_batch_neuron_cells", b_few, 1);
            print_stat(js, "step_cpu_all", s_omp, 1);
            print_stat(js, "step_gpu", s_gpu, 1);
            print_stat(js, "solve_cpu1", v_seq, 1);
            print_stat(js, "solve_cpu_all", v_omp, 1);
            print_stat(js, "solve_gpu", v_gpu, 1);
            print_stat(js, "neuron_step", nr.step, 1);
            print_stat(js, "neuron_step_cache_efficient", nr.step_ce, 1);
            json_field(js, "neuron_solve_share", nr.solve_share);
            json_field(js, "neuron_solve_ns", peer_solve);
            json_field(js, "ratio_step_cpu1", peer / s_seq.median);
            json_field(js, "ratio_solve_cpu1", peer_solve / v_seq.median);
            json_field(js, "ratio_step_cpu1_neuron_cells", peer / s_few.median);
            json_field(js, "ratio_solve_cpu1_neuron_cells", peer_solve / v_few.median);
            json_field(js, "ratio_solve_cpu1_in_step_buffer", peer_solve / c_seq.median);
            json_field(js, "ratio_solve_cpu1_in_step_buffer_neuron_cells", peer_solve / c_few.median);
            json_field(js, "ratio_solve_cpu1_in_step_buffer_factors_reused",
                       peer_solve / f_seq.median);
            if (o.neuron && !nr.step.ok) {
                fputs(", \"neuron_not_run\": ", js);
                cli_json_string(js, nr.why);
            }
            fputs("}", js);
            first = 0;
        }
        fflush(stdout);
        hb_model_destroy(model);
        hb_morph_destroy(morph);
    }
    if (js) {
        fputs("\n]}\n", js);
        if (js != stdout) fclose(js);
    }
    hb_context_destroy(seq_ctx);
    if (omp_ctx) hb_context_destroy(omp_ctx);
    if (gpu_ctx) hb_context_destroy(gpu_ctx);
    return rc;
}
