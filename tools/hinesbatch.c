/*
 * hinesbatch command-line tool. Uses only the public API (include/hinesbatch.h).
 *
 *   hinesbatch info FILE.swc [options] [--json]
 *   hinesbatch solve [--morph FILE.swc] [--cells N] [options] [--check] [--json]
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hinesbatch.h"

extern const char hb_default_swc_name[];
extern const unsigned char hb_default_swc[];
extern const size_t hb_default_swc_length;

static const char *program = "hinesbatch";

static const char usage_main[] =
    "usage: hinesbatch COMMAND [options]\n"
    "\n"
    "Batched Hines solvers for morphologically detailed neurons.\n"
    "\n"
    "commands:\n"
    "  info FILE.swc   describe a morphology and its compartments\n"
    "  solve           solve a batch of Hines systems built from a morphology\n"
    "\n"
    "'hinesbatch COMMAND --help' describes a command.\n";

static const char usage_discretisation[] =
    "compartments (shared by info and solve):\n"
    "  --policy P        d-lambda (default) | fixed | max-length | per-segment\n"
    "  --nseg N          compartments per section for --policy fixed (default 1)\n"
    "  --max-length UM   longest compartment for --policy max-length [um] (default 10)\n"
    "  --d-lambda X      fraction of the AC length constant (default 0.1)\n"
    "  --frequency HZ    frequency of the AC length constant [Hz] (default 100)\n"
    "  --scheme S        vertex (default: nodes at compartment boundaries, forks are nodes)\n"
    "                    | neuron (NEURON's nodes: segment centres and zero-area ends)\n"
    "  --ra OHM_CM       axial resistivity [ohm cm] (default 100)\n"
    "  --cm UF_CM2       membrane capacitance [uF/cm^2] (default 1)\n"
    "  --units U         um (default) | nm: units of the SWC coordinates and radii\n";

static const char usage_info[] =
    "usage: hinesbatch info FILE.swc [options] [--json]\n"
    "\n"
    "Reads an SWC file and prints its samples, sections, terminals, maximum branch\n"
    "order, total length [um], membrane area [um^2] and compartments under the\n"
    "chosen rule. Warnings about usable oddities go to stderr.\n"
    "\n"
    "  --json            machine-readable output (keys: points, sections, terminals,\n"
    "                    max_branch_order, length_um, area_um2, compartments, rows)\n";

static const char usage_solve[] =
    "usage: hinesbatch solve [--morph FILE.swc] [--cells N] [options]\n"
    "\n"
    "Builds one backward-Euler step's Hines system from the morphology (passive\n"
    "membrane, random voltages around rest), copies it to N cells with different\n"
    "voltages and solves the batch K times. Prints the time per solve (median, min,\n"
    "max) and compartments solved per second.\n"
    "\n"
    "  --morph FILE.swc  morphology (default: a built-in HSN-fluoro01 cell)\n"
    "  --cells N         systems in the batch (default 1000)\n"
    "  --layout L        flat | interleaved (default) | block\n"
    "  --block-size BS   systems per block for --layout block (default 32)\n"
    "  --backend B       seq | omp (default: omp when built with OpenMP, else seq)\n"
    "  --threads T       OpenMP threads (default: OpenMP's default, OMP_NUM_THREADS)\n"
    "  --steps K         solves to time (default 10)\n"
    "  --dt MS           time step of the system [ms] (default 0.025)\n"
    "  --seed S          seed of the voltages (default 1)\n"
    "  --check           report the largest relative residual ||Ax-b||/||b||\n"
    "  --json            machine-readable output\n";

static int fail(const char *command, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static int fail(const char *command, const char *fmt, ...)
{
    va_list args;
    fprintf(stderr, "%s %s: ", program, command);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    return 1;
}

static int fail_status(const char *command, hb_status_t status)
{
    return fail(command, "%s (%s)", hb_last_error()[0] ? hb_last_error() : "failed",
                hb_status_string(status));
}

/* ---- argument parsing ---- */

static int parse_int(const char *text, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < lo || value > hi) return 0;
    *out = value;
    return 1;
}

static int parse_double(const char *text, double lo, double *out)
{
    char *end;
    errno = 0;
    double value = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(value) || !(value > lo)) return 0;
    *out = value;
    return 1;
}

typedef struct {
    const char *command;
    int argc;
    char **argv;
    int i;
} args_t;

/* The value following option argv[i]; NULL (after an error message) if missing. */
static const char *option_value(args_t *a)
{
    if (a->i + 1 >= a->argc) {
        fail(a->command, "option %s needs a value", a->argv[a->i]);
        return NULL;
    }
    return a->argv[++a->i];
}

typedef struct {
    hb_discretization_t disc;
    hb_swc_options_t swc;
} model_options_t;

/* Parses one discretisation option at argv[i]: 1 used, 0 not ours, -1 error. */
static int parse_model_option(args_t *a, model_options_t *m)
{
    const char *opt = a->argv[a->i], *value;
    long n;
    if (strcmp(opt, "--policy") == 0) {
        if (!(value = option_value(a))) return -1;
        if (strcmp(value, "d-lambda") == 0) m->disc.policy = HB_CPOLICY_D_LAMBDA;
        else if (strcmp(value, "fixed") == 0) m->disc.policy = HB_CPOLICY_FIXED;
        else if (strcmp(value, "max-length") == 0) m->disc.policy = HB_CPOLICY_MAX_LENGTH;
        else if (strcmp(value, "per-segment") == 0) m->disc.policy = HB_CPOLICY_PER_SEGMENT;
        else {
            fail(a->command, "--policy '%s': expected d-lambda, fixed, max-length or per-segment",
                 value);
            return -1;
        }
    } else if (strcmp(opt, "--nseg") == 0) {
        if (!(value = option_value(a))) return -1;
        if (!parse_int(value, 1, 1000000, &n)) {
            fail(a->command, "--nseg '%s': expected an integer 1..1000000", value);
            return -1;
        }
        m->disc.count = (int)n;
        m->disc.policy = HB_CPOLICY_FIXED;
    } else if (strcmp(opt, "--max-length") == 0 || strcmp(opt, "--d-lambda") == 0 ||
               strcmp(opt, "--frequency") == 0 || strcmp(opt, "--ra") == 0 ||
               strcmp(opt, "--cm") == 0) {
        double x;
        if (!(value = option_value(a))) return -1;
        if (!parse_double(value, 0.0, &x)) {
            fail(a->command, "%s '%s': expected a positive number", opt, value);
            return -1;
        }
        if (strcmp(opt, "--max-length") == 0) {
            m->disc.max_length_um = x;
            m->disc.policy = HB_CPOLICY_MAX_LENGTH;
        } else if (strcmp(opt, "--d-lambda") == 0) {
            m->disc.d_lambda = x;
        } else if (strcmp(opt, "--frequency") == 0) {
            m->disc.frequency_hz = x;
        } else if (strcmp(opt, "--ra") == 0) {
            m->disc.ra_ohm_cm = x;
        } else {
            m->disc.cm_uf_cm2 = x;
        }
    } else if (strcmp(opt, "--scheme") == 0) {
        if (!(value = option_value(a))) return -1;
        if (strcmp(value, "vertex") == 0) m->disc.scheme = HB_SCHEME_VERTEX;
        else if (strcmp(value, "neuron") == 0) m->disc.scheme = HB_SCHEME_NEURON;
        else {
            fail(a->command, "--scheme '%s': expected vertex or neuron", value);
            return -1;
        }
    } else if (strcmp(opt, "--units") == 0) {
        if (!(value = option_value(a))) return -1;
        if (strcmp(value, "um") == 0) m->swc.units = HB_UNITS_UM;
        else if (strcmp(value, "nm") == 0) m->swc.units = HB_UNITS_NM;
        else {
            fail(a->command, "--units '%s': expected um or nm", value);
            return -1;
        }
    } else {
        return 0;
    }
    return 1;
}

static void model_options_default(model_options_t *m)
{
    hb_discretization_default(&m->disc);
    hb_swc_options_default(&m->swc);
}

/* Loads the morphology (file or built-in), prints its warnings and builds the cable. */
static int load_model(const char *command, const char *path, const model_options_t *m,
                      hb_morph_t **morph, hb_cable_t **cable)
{
    hb_status_t status;
    if (path)
        status = hb_morph_load_swc(path, &m->swc, morph);
    else
        status = hb_morph_parse_swc((const char *)hb_default_swc, hb_default_swc_length,
                                    hb_default_swc_name, &m->swc, morph);
    if (status != HB_SUCCESS) return fail_status(command, status);
    for (int i = 0; i < hb_morph_warning_count(*morph); i++)
        fprintf(stderr, "%s %s: warning: %s\n", program, command, hb_morph_warning(*morph, i));
    status = hb_cable_create(*morph, &m->disc, cable);
    if (status != HB_SUCCESS) {
        hb_morph_destroy(*morph);
        *morph = NULL;
        return fail_status(command, status);
    }
    return 0;
}

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') fprintf(out, "\\%c", c);
        else if (c < 0x20) fprintf(out, "\\u%04x", c);
        else fputc(c, out);
    }
    fputc('"', out);
}

/* ---- info ---- */

static int command_info(int argc, char **argv)
{
    args_t a = {"info", argc, argv, 0};
    model_options_t m;
    const char *path = NULL;
    int json = 0;
    model_options_default(&m);
    for (a.i = 1; a.i < argc; a.i++) {
        const char *opt = argv[a.i];
        int used = parse_model_option(&a, &m);
        if (used < 0) return 2;
        if (used) continue;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            printf("%s\n%s", usage_info, usage_discretisation);
            return 0;
        } else if (strcmp(opt, "--json") == 0) {
            json = 1;
        } else if (opt[0] == '-' && opt[1]) {
            fail("info", "unknown option '%s' (see hinesbatch info --help)", opt);
            return 2;
        } else if (path) {
            fail("info", "more than one file given ('%s' and '%s')", path, opt);
            return 2;
        } else {
            path = opt;
        }
    }
    if (!path) {
        fail("info", "no SWC file given (see hinesbatch info --help)");
        return 2;
    }
    hb_morph_t *morph;
    hb_cable_t *cable;
    if (load_model("info", path, &m, &morph, &cable)) return 1;
    hb_morph_stats_t st;
    hb_status_t status = hb_morph_stats(morph, &st);
    int rc = 0;
    if (status != HB_SUCCESS) {
        rc = fail_status("info", status);
    } else if (json) {
        printf("{\"file\": ");
        json_string(stdout, path);
        printf(", \"points\": %d, \"sections\": %d, \"terminals\": %d, \"max_branch_order\": %d, "
               "\"length_um\": %.6f, \"area_um2\": %.6f, \"compartments\": %d, \"rows\": %d, "
               "\"warnings\": %d}\n",
               st.points, st.sections, st.terminals, st.max_branch_order, st.length_um,
               st.area_um2, hb_cable_compartments(cable), hb_cable_size(cable),
               hb_morph_warning_count(morph));
    } else {
        printf("file              %s\n", path);
        printf("points            %d\n", st.points);
        printf("sections          %d\n", st.sections);
        printf("terminals         %d\n", st.terminals);
        printf("max branch order  %d\n", st.max_branch_order);
        printf("length            %.3f um\n", st.length_um);
        printf("membrane area     %.3f um^2\n", st.area_um2);
        printf("compartments      %d\n", hb_cable_compartments(cable));
        printf("matrix rows       %d\n", hb_cable_size(cable));
    }
    hb_cable_destroy(cable);
    hb_morph_destroy(morph);
    return rc;
}

/* ---- solve ---- */

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* xorshift64*: reproducible voltages without libc's rand(). */
static double uniform(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (double)((x * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

typedef struct {
    const char *morph_path;
    long cells, block_size, threads, steps;
    unsigned long seed;
    double dt;
    hb_layout_t layout;
    hb_backend_t backend;
    int check, json;
} solve_options_t;

static int parse_solve(int argc, char **argv, solve_options_t *o, model_options_t *m)
{
    args_t a = {"solve", argc, argv, 0};
    const char *value;
    long n;
    for (a.i = 1; a.i < argc; a.i++) {
        const char *opt = argv[a.i];
        int used = parse_model_option(&a, m);
        if (used < 0) return 2;
        if (used) continue;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            printf("%s\n%s", usage_solve, usage_discretisation);
            return -1;
        } else if (strcmp(opt, "--json") == 0) {
            o->json = 1;
        } else if (strcmp(opt, "--check") == 0) {
            o->check = 1;
        } else if (strcmp(opt, "--morph") == 0) {
            if (!(value = option_value(&a))) return 2;
            o->morph_path = value;
        } else if (strcmp(opt, "--layout") == 0) {
            if (!(value = option_value(&a))) return 2;
            if (strcmp(value, "flat") == 0) o->layout = HB_LAYOUT_FLAT;
            else if (strcmp(value, "interleaved") == 0) o->layout = HB_LAYOUT_INTERLEAVED;
            else if (strcmp(value, "block") == 0) o->layout = HB_LAYOUT_BLOCK;
            else return fail("solve", "--layout '%s': expected flat, interleaved or block", value) + 1;
        } else if (strcmp(opt, "--backend") == 0) {
            if (!(value = option_value(&a))) return 2;
            if (strcmp(value, "seq") == 0) o->backend = HB_BACKEND_SEQ;
            else if (strcmp(value, "omp") == 0) o->backend = HB_BACKEND_OMP;
            else if (strcmp(value, "cuda") == 0) o->backend = HB_BACKEND_CUDA;
            else if (strcmp(value, "best") == 0) o->backend = HB_BACKEND_BEST;
            else return fail("solve", "--backend '%s': expected seq, omp, cuda or best", value) + 1;
        } else if (strcmp(opt, "--cells") == 0 || strcmp(opt, "--block-size") == 0 ||
                   strcmp(opt, "--threads") == 0 || strcmp(opt, "--steps") == 0 ||
                   strcmp(opt, "--seed") == 0) {
            long lo = strcmp(opt, "--threads") == 0 || strcmp(opt, "--seed") == 0 ? 0 : 1;
            if (!(value = option_value(&a))) return 2;
            if (!parse_int(value, lo, 100000000L, &n))
                return fail("solve", "%s '%s': expected an integer %ld..100000000", opt, value,
                            lo) + 1;
            if (strcmp(opt, "--cells") == 0) o->cells = n;
            else if (strcmp(opt, "--block-size") == 0) o->block_size = n;
            else if (strcmp(opt, "--threads") == 0) o->threads = n;
            else if (strcmp(opt, "--steps") == 0) o->steps = n;
            else o->seed = (unsigned long)n;
        } else if (strcmp(opt, "--dt") == 0) {
            if (!(value = option_value(&a))) return 2;
            if (!parse_double(value, 0.0, &o->dt))
                return fail("solve", "--dt '%s': expected a positive number [ms]", value) + 1;
        } else {
            return fail("solve", "unknown argument '%s' (see hinesbatch solve --help)", opt) + 1;
        }
    }
    return 0;
}

/* Fills every system of `batch` with one step's matrix at random voltages. */
static hb_status_t fill_batch(hb_batch_t batch, const hb_cable_t *cable, double dt,
                              unsigned long seed)
{
    int m = hb_cable_size(cable), n = hb_batch_count(batch);
    double *buf = malloc((size_t)m * 6 * sizeof *buf);
    if (!buf) return HB_ERR_ALLOC;
    double *u = buf, *l = u + m, *d = l + m, *rhs = d + m, *v = rhs + m, *g = v + m;
    uint64_t state = 0x9E3779B97F4A7C15ULL ^ (uint64_t)seed;
    hb_status_t status = hb_cable_offdiag(cable, u, l);
    for (int i = 0; i < m; i++) g[i] = 1e-4; /* passive leak [S/cm^2] */
    for (int s = 0; s < n && status == HB_SUCCESS; s++) {
        for (int i = 0; i < m; i++) v[i] = -65.0 + 20.0 * (uniform(&state) - 0.5);
        status = hb_cable_step_system(cable, dt, u, l, v, g, NULL, NULL, d, rhs);
        if (status == HB_SUCCESS) status = hb_batch_set(batch, s, u, l, d, rhs);
    }
    free(buf);
    return status;
}

/* Largest ||A x - b|| / ||b|| over the systems; `original` holds A and b. */
static hb_status_t max_residual(const hb_batch_t original, const hb_batch_t solved,
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

static int command_solve(int argc, char **argv)
{
    solve_options_t o = {NULL, 1000, 32, 0, 10, 1, 0.025, HB_LAYOUT_INTERLEAVED,
                         hb_backend_available(HB_BACKEND_OMP) ? HB_BACKEND_OMP : HB_BACKEND_SEQ,
                         0, 0};
    model_options_t m;
    model_options_default(&m);
    int rc = parse_solve(argc, argv, &o, &m);
    if (rc) return rc < 0 ? 0 : rc;

    hb_morph_t *morph = NULL;
    hb_cable_t *cable = NULL;
    hb_context_t ctx = NULL;
    hb_batch_t batch = NULL, original = NULL;
    double *times = NULL;
    hb_status_t status;
    if (load_model("solve", o.morph_path, &m, &morph, &cable)) return 1;

    int rows = hb_cable_size(cable);
    const int *parent = hb_cable_parent(cable);
    int bs = o.layout == HB_LAYOUT_BLOCK ? (int)o.block_size : 1;
    double max_rel_residual = 0.0;
    rc = 1;
    if ((status = hb_context_create(&ctx, o.backend)) != HB_SUCCESS) goto error;
    if (o.threads > 0 && (status = hb_context_set_threads(ctx, (int)o.threads)) != HB_SUCCESS)
        goto error;
    if ((status = hb_batch_create(ctx, rows, parent, (int)o.cells, o.layout, bs, &batch)) !=
            HB_SUCCESS ||
        (status = hb_batch_create(ctx, rows, parent, (int)o.cells, o.layout, bs, &original)) !=
            HB_SUCCESS)
        goto error;
    if ((status = fill_batch(original, cable, o.dt, o.seed)) != HB_SUCCESS) goto error;
    times = malloc((size_t)o.steps * sizeof *times);
    if (!times) {
        status = HB_ERR_ALLOC;
        goto error;
    }
    /* Each solve starts from the freshly assembled system (restoring it is not timed). */
    for (long k = 0; k < o.steps; k++) {
        if ((status = hb_batch_convert(original, batch)) != HB_SUCCESS) goto error;
        double t0 = now_seconds();
        if ((status = hb_batch_solve(batch)) != HB_SUCCESS) goto error;
        times[k] = now_seconds() - t0;
    }
    if (o.check && (status = max_residual(original, batch, parent, &max_rel_residual)) !=
                       HB_SUCCESS)
        goto error;

    qsort(times, (size_t)o.steps, sizeof *times, compare_doubles);
    double median = o.steps % 2 ? times[o.steps / 2]
                                : 0.5 * (times[o.steps / 2 - 1] + times[o.steps / 2]);
    int compartments = hb_cable_compartments(cable);
    double rate = (double)o.cells * compartments / median;
    const char *name = o.morph_path ? o.morph_path : hb_default_swc_name;
    if (o.json) {
        printf("{\"morphology\": ");
        json_string(stdout, name);
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
    fail_status("solve", status);
done:
    free(times);
    hb_batch_destroy(original);
    hb_batch_destroy(batch);
    if (ctx) hb_context_destroy(ctx);
    hb_cable_destroy(cable);
    hb_morph_destroy(morph);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fputs(usage_main, stderr);
        return 2;
    }
    const char *command = argv[1];
    if (strcmp(command, "--help") == 0 || strcmp(command, "-h") == 0 ||
        strcmp(command, "help") == 0) {
        fputs(usage_main, stdout);
        return 0;
    }
    if (strcmp(command, "--version") == 0) {
        printf("hinesbatch %d.%d.%d\n", HB_VERSION_MAJOR, HB_VERSION_MINOR, HB_VERSION_PATCH);
        return 0;
    }
    if (strcmp(command, "info") == 0) return command_info(argc - 1, argv + 1);
    if (strcmp(command, "solve") == 0) return command_solve(argc - 1, argv + 1);
    fprintf(stderr, "%s: unknown command '%s'\n\n%s", program, command, usage_main);
    return 2;
}
