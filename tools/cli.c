/* Shared pieces of the hinesbatch command-line tool. */
#define _POSIX_C_SOURCE 200809L
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "common/nearest_name.h"

static const char *program = "hinesbatch";
char **cli_argv = NULL;

const char cli_usage_discretisation[] =
    "compartments (shared by info and solve):\n"
    "  --policy P        d-lambda (default) | fixed | max-length | per-segment | odd-length\n"
    "  --nseg N          compartments per section for --policy fixed (default 1)\n"
    "  --max-length UM   longest compartment for --policy max-length, the dL of odd-length\n"
    "                    [um] (default 10)\n"
    "  --d-lambda X      fraction of the AC length constant (default 0.1)\n"
    "  --frequency HZ    frequency of the AC length constant [Hz] (default 100)\n"
    "  --scheme S        vertex (default: nodes at compartment boundaries, forks are nodes)\n"
    "                    | neuron (NEURON's nodes: segment centres and zero-area ends)\n"
    "  --ra OHM_CM       axial resistivity [ohm cm] (default 100)\n"
    "  --cm UF_CM2       membrane capacitance [uF/cm^2] (default 1)\n"
    "  --units U         um (default) | nm: units of the SWC coordinates and radii\n"
    "  --max-rows N      refuse a cell of more matrix rows (default 5000000)\n"
    "  --sections R      hinesbatch | import3d (NEURON's Import3d: multi-point somas, stems);\n"
    "                    default import3d with --scheme neuron, else hinesbatch\n"
    "  --zero-radius Z   repair (default: a radius 0 takes its parent's) | keep (NEURON's;\n"
    "                    --scheme neuron only)\n";

/* A progress line is on the terminal: erased before a message (cli_fail) or more output. */
static int progress_dirty = 0;

static void erase_progress(void)
{
    if (!progress_dirty) return;
    fputs("\r\033[K", stderr);
    fflush(stderr);
    progress_dirty = 0;
}

int cli_fail(const char *command, const char *fmt, ...)
{
    va_list args;
    erase_progress();
    fprintf(stderr, "%s %s: ", program, command);
    va_start(args, fmt);
    vfprintf(stderr, fmt, args);
    va_end(args);
    fputc('\n', stderr);
    return 1;
}

int cli_fail_status(const char *command, hb_status_t status)
{
    return cli_fail(command, "%s (%s)", hb_last_error()[0] ? hb_last_error() : "failed",
                hb_status_string(status));
}

/* ---- argument parsing ---- */

/* Only the characters of a decimal number: strtol and strtod would skip leading
 * white space (" 5") and strtod would take hex, inf and nan. */
static int decimal_text(const char *text, const char *allowed)
{
    if (!*text) return 0;
    for (const char *p = text; *p; p++)
        if (!strchr(allowed, *p)) return 0;
    return 1;
}

int cli_parse_int(const char *text, long lo, long hi, long *out)
{
    char *end;
    if (!decimal_text(text, "0123456789+-")) return 0;
    errno = 0;
    long value = strtol(text, &end, 10);
    if (errno || end == text || *end || value < lo || value > hi) return 0;
    *out = value;
    return 1;
}

int cli_parse_double(const char *text, double lo, double *out)
{
    char *end;
    if (!decimal_text(text, "0123456789+-.eE")) return 0;
    errno = 0;
    double value = strtod(text, &end);
    if (errno || end == text || *end || !isfinite(value) || !(value > lo)) return 0;
    *out = value;
    return 1;
}


/* "a, b or c": the names of `choices`, for error messages. */
static void describe_choices(const cli_choice_t *choices, char *out, size_t size)
{
    size_t used = 0;
    out[0] = '\0';
    for (int k = 0; choices[k].name; k++) {
        const char *separator = k == 0 ? "" : choices[k + 1].name ? ", " : " or ";
        const int n = snprintf(out + used, size - used, "%s%s", separator, choices[k].name);
        if (n < 0 || (size_t)n >= size - used) break;
        used += (size_t)n;
    }
}

static const cli_choice_t *find_choice(const cli_choice_t *choices, const char *name)
{
    for (; choices->name; choices++)
        if (strcmp(choices->name, name) == 0) return choices;
    return NULL;
}

/* Stores one option's value at its destination: 1, or 0 after an error message. */
static int store_option(const char *command, const cli_option_t *opt, const char *value)
{
    char names[256], tokens[256]; /* lists are split in a copy, as strtok writes */
    long n;
    const cli_choice_t *choice;
    switch (opt->kind) {
    case CLI_OPT_FLAG:
        *(int *)opt->dest = opt->flag_value;
        return 1;
    case CLI_OPT_INT:
    case CLI_OPT_LONG:
        if (!cli_parse_int(value, opt->min, opt->max, &n)) {
            cli_fail(command, "%s '%s': expected %s", opt->name, value, opt->expected);
            return 0;
        }
        if (opt->kind == CLI_OPT_INT) *(int *)opt->dest = (int)n;
        else *(long *)opt->dest = n;
        return 1;
    case CLI_OPT_STRING:
        *(const char **)opt->dest = value;
        return 1;
    case CLI_OPT_INT_LIST: {
        long *list = opt->dest;
        int given = 0, ok = 1;
        snprintf(tokens, sizeof tokens, "%s", value);
        for (char *tok = strtok(tokens, ","); tok && ok; tok = strtok(NULL, ",")) {
            ok = given < opt->capacity && cli_parse_int(tok, opt->min, opt->max, &list[given]);
            given += ok;
        }
        if (!ok || given == 0) {
            cli_fail(command, "%s '%s': expected positive integers, commas between", opt->name,
                     value);
            return 0;
        }
        *opt->count = given;
        return 1;
    }
    case CLI_OPT_CHOICE:
        if (!(choice = find_choice(opt->choices, value))) {
            describe_choices(opt->choices, names, sizeof names);
            cli_fail(command, "%s '%s': expected %s", opt->name, value, names);
            return 0;
        }
        *(int *)opt->dest = choice->value;
        return 1;
    case CLI_OPT_NAME_SET:
        *(int *)opt->dest = 0;
        snprintf(tokens, sizeof tokens, "%s", value);
        for (char *tok = strtok(tokens, ","); tok; tok = strtok(NULL, ",")) {
            if (!(choice = find_choice(opt->choices, tok))) {
                describe_choices(opt->choices, names, sizeof names);
                cli_fail(command, "%s: unknown %s '%s'; expected %s", opt->name, opt->item, tok,
                         names);
                return 0;
            }
            *(int *)opt->dest |= choice->value;
        }
        return 1;
    case CLI_OPT_DOUBLE:
        if (!cli_parse_double(value, (double)opt->min, opt->dest)) {
            cli_fail(command, "%s '%s': expected %s", opt->name, value, opt->expected);
            return 0;
        }
        return 1;
    case CLI_OPT_CUSTOM:
        return opt->parse(command, value, opt->dest);
    case CLI_OPT_MODEL:
    case CLI_OPT_POSITIONAL:
        break; /* no name: cli_parse_options sees to them */
    }
    return 0;
}

/* One getopt_long entry's meaning: a table entry, and for CLI_OPT_MODEL the compartment
 * option's name. */
typedef struct {
    const cli_option_t *opt;
    const char *name; /* "--policy", "-o" */
} slot_t;

/* getopt_long's `val` of slot k (above any character of a short option). */
#define SLOT_VAL(k) (256 + (int)(k))

/* The slots and getopt_long's tables of `options`; NULL-free arrays the caller frees. */
static int build_tables(const cli_option_t *options, size_t n_options, slot_t **slots_out,
                        struct option **longs_out, char **shorts_out, size_t *n_slots)
{
    size_t room = 2; /* --help and its end marker */
    for (size_t k = 0; k < n_options; k++) {
        if (options[k].kind == CLI_OPT_MODEL)
            for (const char *const *m = cli_model_option_names; *m; m++) room++;
        else if (options[k].name)
            room++;
    }
    slot_t *slots = calloc(room, sizeof *slots);
    struct option *longs = calloc(room, sizeof *longs);
    char *shorts = calloc(2 * room + 8, 1);
    if (!slots || !longs || !shorts) {
        free(slots);
        free(longs);
        free(shorts);
        return 0;
    }
    /* '-': arguments that are no option come back in order (code 1), whatever the
     * environment says; ':': a missing value is told apart from an unknown option */
    size_t n = 0, nl = 0, ns = (size_t)sprintf(shorts, "-:h");
    for (size_t k = 0; k < n_options; k++) {
        const cli_option_t *o = &options[k];
        for (const char *const *m = cli_model_option_names; o->kind == CLI_OPT_MODEL && *m; m++)
            slots[n++] = (slot_t){o, *m};
        if (o->kind != CLI_OPT_MODEL && o->name) slots[n++] = (slot_t){o, o->name};
    }
    for (size_t k = 0; k < n; k++) {
        const char *name = slots[k].name;
        const int has_value = slots[k].opt->kind != CLI_OPT_FLAG;
        if (name[0] == '-' && name[1] == '-') {
            longs[nl++] = (struct option){name + 2, has_value ? required_argument : no_argument,
                                          NULL, SLOT_VAL(k)};
        } else { /* "-o": getopt_long returns the character itself */
            shorts[ns++] = name[1];
            if (has_value) shorts[ns++] = ':';
        }
    }
    longs[nl++] = (struct option){"help", no_argument, NULL, 'h'};
    *slots_out = slots;
    *longs_out = longs;
    *shorts_out = shorts;
    *n_slots = n;
    return 1;
}

/* The slot of getopt_long's code c (a SLOT_VAL or a short option's character); NULL if none. */
static const slot_t *find_slot(const slot_t *slots, size_t n, int c)
{
    if (c >= SLOT_VAL(0) && (size_t)(c - SLOT_VAL(0)) < n) return &slots[c - SLOT_VAL(0)];
    for (size_t k = 0; k < n; k++)
        if (slots[k].name[0] == '-' && slots[k].name[1] == c && !slots[k].name[2]) return &slots[k];
    return NULL;
}

/* The message for a long option getopt_long refused: unknown, or an ambiguous prefix. */
static void refused(const char *command, const char *arg, const slot_t *slots, size_t n)
{
    if (arg[0] == '-' && arg[1] == '-') {
        const char *name = arg + 2, *eq = strchr(name, '=');
        const size_t len = eq ? (size_t)(eq - name) : strlen(name);
        char matches[512] = "";
        int count = 0;
        for (size_t k = 0; k < n && len > 0; k++) {
            const char *s = slots[k].name;
            if (s[1] != '-' || strncmp(s + 2, name, len) != 0) continue;
            count++;
            snprintf(matches + strlen(matches), sizeof matches - strlen(matches), "%s%s",
                     count > 1 ? ", " : "", s);
        }
        if (count > 1) {
            cli_fail(command, "option '--%.*s' is ambiguous: %s (see --help)", (int)len, name,
                     matches);
            return;
        }
        /* "did you mean": the nearest long option, as for a model file's keys */
        const char **names = calloc(n + 1, sizeof *names);
        size_t n_names = 0;
        for (size_t k = 0; names && k < n; k++)
            if (slots[k].name[1] == '-') names[n_names++] = slots[k].name + 2;
        char given[64];
        snprintf(given, sizeof given, "%.*s", (int)(len < 60 ? len : 60), name);
        const char *near = names ? hb_nearest_name(given, names) : NULL;
        free(names);
        if (near) {
            cli_fail(command, "unknown option '--%s'; did you mean '--%s'? (see --help)", given,
                     near);
            return;
        }
    }
    cli_fail(command, "unknown argument '%s' (see --help)", arg);
}

int cli_parse_options(const char *command, const char *usage, const cli_option_t *options,
                      size_t n_options, int argc, char **argv)
{
    slot_t *slots;
    struct option *longs;
    char *shorts;
    size_t n;
    if (!build_tables(options, n_options, &slots, &longs, &shorts, &n)) {
        cli_fail(command, "out of memory");
        return 2;
    }
    const char *positional = NULL, *positional_item = NULL;
    const char **positional_dest = NULL;
    for (size_t k = 0; k < n_options; k++)
        if (options[k].kind == CLI_OPT_POSITIONAL) {
            positional_item = options[k].item;
            positional_dest = options[k].dest;
        }
    int rc = CLI_CONTINUE, c;
    opterr = 0;
    optind = 0; /* glibc: start afresh (a process may parse more than once) */
    while (rc == CLI_CONTINUE && (c = getopt_long(argc, argv, shorts, longs, NULL)) != -1) {
        const slot_t *slot = find_slot(slots, n, c);
        if (c == 'h' && !slot) {
            fputs(usage, stdout);
            for (size_t k = 0; k < n_options; k++)
                if (options[k].help) printf("\n%s", options[k].help);
            rc = 0;
        } else if (c == 1) { /* an argument that is no option */
            if (!positional_dest) {
                cli_fail(command, "unknown argument '%s' (see --help)", optarg);
                rc = 2;
            } else if (positional) {
                cli_fail(command, "more than one %s given ('%s' and '%s')", positional_item,
                         positional, optarg);
                rc = 2;
            } else {
                positional = optarg;
            }
        } else if (c == ':') {
            const slot_t *s = find_slot(slots, n, optopt);
            cli_fail(command, "option %s needs a value", s ? s->name : argv[optind - 1]);
            rc = 2;
        } else if (c == '?') {
            const slot_t *s = optopt ? find_slot(slots, n, optopt) : NULL;
            if (s && s->opt->kind == CLI_OPT_FLAG) /* "--json=1" */
                cli_fail(command, "option %s takes no value (given '%s')", s->name,
                         strchr(argv[optind - 1], '=') ? strchr(argv[optind - 1], '=') + 1 : "");
            else if (optopt > 0 && optopt < 256)
                cli_fail(command, "unknown argument '-%c' (see --help)", optopt);
            else
                refused(command, argv[optind - 1], slots, n);
            rc = 2;
        } else if (!slot) {
            cli_fail(command, "unknown argument (see --help)");
            rc = 2;
        } else if (slot->opt->kind == CLI_OPT_MODEL) {
            if (!cli_parse_model_option(command, slot->name, optarg, slot->opt->dest)) rc = 2;
        } else if (!store_option(command, slot->opt, optarg)) {
            rc = 2;
        }
    }
    /* after "--": arguments that are no options */
    for (; rc == CLI_CONTINUE && optind < argc; optind++) {
        if (!positional_dest) {
            cli_fail(command, "unknown argument '%s' (see --help)", argv[optind]);
            rc = 2;
        } else if (positional) {
            cli_fail(command, "more than one %s given ('%s' and '%s')", positional_item,
                     positional, argv[optind]);
            rc = 2;
        } else {
            positional = argv[optind];
        }
    }
    if (rc == CLI_CONTINUE && positional_dest) {
        if (!positional) {
            cli_fail(command, "no %s given (see --help)", positional_item);
            rc = 2;
        } else {
            *positional_dest = positional;
        }
    }
    free(slots);
    free(longs);
    free(shorts);
    return rc;
}

const char *const cli_model_option_names[] = {
    "--policy", "--nseg", "--max-length", "--d-lambda", "--frequency", "--scheme", "--ra",
    "--cm", "--units", "--max-rows", "--sections", "--zero-radius", NULL};

/* value as one of the names "a|b|c" (in hb's enum order): its index, or -1 after a message. */
static int model_choice(const char *command, const char *option, const char *value,
                        const char *const *names, const char *expected)
{
    for (int k = 0; names[k]; k++)
        if (strcmp(value, names[k]) == 0) return k;
    cli_fail(command, "%s '%s': expected %s", option, value, expected);
    return -1;
}

int cli_parse_model_option(const char *command, const char *opt, const char *value,
                           cli_model_options_t *m)
{
    static const char *const policies[] = {"d-lambda", "fixed", "max-length", "per-segment",
                                           "odd-length", NULL};
    static const hb_cpolicy_t policy_values[] = {
        HB_CPOLICY_D_LAMBDA, HB_CPOLICY_FIXED, HB_CPOLICY_MAX_LENGTH, HB_CPOLICY_PER_SEGMENT,
        HB_CPOLICY_ODD_LENGTH};
    static const char *const schemes[] = {"vertex", "neuron", NULL};
    static const char *const units[] = {"um", "nm", NULL};
    static const char *const sections[] = {"hinesbatch", "import3d", NULL};
    static const char *const zero[] = {"repair", "keep", NULL};
    long n;
    int k;
    if (strcmp(opt, "--policy") == 0) {
        if ((k = model_choice(command, opt, value, policies,
                              "d-lambda, fixed, max-length, per-segment or odd-length")) < 0)
            return 0;
        m->disc.policy = policy_values[k];
    } else if (strcmp(opt, "--nseg") == 0) {
        if (!cli_parse_int(value, 1, 1000000, &n)) {
            cli_fail(command, "--nseg '%s': expected an integer 1..1000000", value);
            return 0;
        }
        m->disc.count = (int)n;
        m->disc.policy = HB_CPOLICY_FIXED;
    } else if (strcmp(opt, "--max-rows") == 0) {
        if (!cli_parse_int(value, 1, INT_MAX, &n)) {
            cli_fail(command, "--max-rows '%s': expected an integer 1..%d", value, INT_MAX);
            return 0;
        }
        m->disc.max_rows = (int)n;
    } else if (strcmp(opt, "--scheme") == 0) {
        if ((k = model_choice(command, opt, value, schemes, "vertex or neuron")) < 0) return 0;
        m->disc.scheme = k ? HB_SCHEME_NEURON : HB_SCHEME_VERTEX;
    } else if (strcmp(opt, "--units") == 0) {
        if ((k = model_choice(command, opt, value, units, "um or nm")) < 0) return 0;
        m->swc.units = k ? HB_UNITS_NM : HB_UNITS_UM;
    } else if (strcmp(opt, "--sections") == 0) {
        if ((k = model_choice(command, opt, value, sections, "hinesbatch or import3d")) < 0)
            return 0;
        m->swc.sections = k ? HB_SECTIONS_IMPORT3D : HB_SECTIONS_HINESBATCH;
        m->sections_set = 1;
    } else if (strcmp(opt, "--zero-radius") == 0) {
        if ((k = model_choice(command, opt, value, zero, "repair or keep")) < 0) return 0;
        m->swc.keep_zero_radius = k;
    } else { /* the positive numbers */
        double x;
        if (!cli_parse_double(value, 0.0, &x)) {
            cli_fail(command, "%s '%s': expected a positive number", opt, value);
            return 0;
        }
        if (strcmp(opt, "--max-length") == 0) {
            m->disc.max_length_um = x;
            if (m->disc.policy != HB_CPOLICY_ODD_LENGTH) m->disc.policy = HB_CPOLICY_MAX_LENGTH;
        } else if (strcmp(opt, "--d-lambda") == 0) {
            m->disc.d_lambda = x;
        } else if (strcmp(opt, "--frequency") == 0) {
            m->disc.frequency_hz = x;
        } else if (strcmp(opt, "--ra") == 0) {
            m->disc.ra_ohm_cm = x;
        } else if (strcmp(opt, "--cm") == 0) {
            m->disc.cm_uf_cm2 = x;
        } else {
            cli_fail(command, "%s: not a compartment option", opt);
            return 0;
        }
    }
    return 1;
}

int cli_parse_backend_override(const char *command, const char *value, void *overrides)
{
    static const char *const names[] = {"seq", "omp", "cuda", "best", NULL};
    static const hb_backend_t values[] = {HB_BACKEND_SEQ, HB_BACKEND_OMP, HB_BACKEND_CUDA,
                                          HB_BACKEND_BEST};
    hb_sim_overrides_t *o = overrides;
    const int k = model_choice(command, "--backend", value, names, "seq, omp, cuda or best");
    if (k < 0) return 0;
    o->options.backend = values[k];
    o->set |= HB_SIM_SET_BACKEND;
    return 1;
}

int cli_parse_threads_override(const char *command, const char *value, void *overrides)
{
    hb_sim_overrides_t *o = overrides;
    long n;
    if (!cli_parse_int(value, 0, HB_MAX_THREADS, &n)) {
        cli_fail(command, "--threads '%s': expected an integer 0..%d (the cap on threads; 0: "
                 "OpenMP's default)", value, HB_MAX_THREADS);
        return 0;
    }
    o->options.threads = (int)n;
    o->set |= HB_SIM_SET_THREADS;
    return 1;
}

int cli_parse_t_stop_override(const char *command, const char *value, void *overrides)
{
    hb_sim_overrides_t *o = overrides;
    double x;
    if (!cli_parse_double(value, -HUGE_VAL, &x) || !(x >= 0.0)) {
        cli_fail(command, "--t-stop '%s': expected a number >= 0 [ms]", value);
        return 0;
    }
    o->options.t_stop_ms = x;
    o->set |= HB_SIM_SET_T_STOP;
    return 1;
}

int cli_parse_dt_override(const char *command, const char *value, void *overrides)
{
    hb_sim_overrides_t *o = overrides;
    double x;
    if (!cli_parse_double(value, 0.0, &x)) {
        cli_fail(command, "--dt '%s': expected a positive number [ms]", value);
        return 0;
    }
    o->options.dt_ms = x;
    o->set |= HB_SIM_SET_DT;
    return 1;
}

void cli_model_options_default(cli_model_options_t *m)
{
    hb_discretization_default(&m->disc);
    hb_swc_options_default(&m->swc);
    m->sections_set = 0;
}

/* Loads the morphology (file or built-in), prints its warnings and builds the cable. */
int cli_load_model(const char *command, const char *path, const cli_model_options_t *m,
                      hb_morph_t **morph, hb_cable_t **cable)
{
    hb_status_t status;
    hb_swc_options_t swc = m->swc;
    if (!m->sections_set && m->disc.scheme == HB_SCHEME_NEURON) swc.sections = HB_SECTIONS_IMPORT3D;
    if (path)
        status = hb_morph_load(path, &swc, morph);
    else
        status = hb_morph_parse_swc((const char *)hb_default_swc, hb_default_swc_length,
                                    hb_default_swc_name, &swc, morph);
    if (status != HB_SUCCESS) return cli_fail_status(command, status);
    for (int i = 0; i < hb_morph_warning_count(*morph); i++)
        fprintf(stderr, "%s %s: warning: %s\n", program, command, hb_morph_warning(*morph, i));
    status = hb_cable_create(*morph, &m->disc, cable);
    if (status != HB_SUCCESS) {
        hb_morph_destroy(*morph);
        *morph = NULL;
        return cli_fail_status(command, status);
    }
    return 0;
}

/* The member `key` of a cell as one of two names: 0, 1, or `fallback` when absent or else. */
static int cell_choice(const json_t *cell, const char *key, const char *zero, const char *one,
                       int fallback)
{
    const char *v = json_string_value(json_object_get(cell, key));
    return !v ? fallback : strcmp(v, one) == 0 ? 1 : strcmp(v, zero) == 0 ? 0 : fallback;
}

void cli_warn_morphologies(const char *command, const char *model, const json_t *root)
{
    const json_t *cells = json_object_get(root, "cells");
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", model);
    char *slash = strrchr(dir, '/');
    if (slash) slash[1] = '\0';
    else dir[0] = '\0';
    for (size_t i = 0; i < json_array_size(cells); i++) {
        const json_t *cell = json_array_get(cells, i);
        const char *file = json_string_value(json_object_get(cell, "morphology"));
        if (!file) continue;
        int seen = 0; /* a file named by several cells alike warns once */
        for (size_t j = 0; j < i && !seen; j++) {
            const json_t *other = json_array_get(cells, j);
            const char *f = json_string_value(json_object_get(other, "morphology"));
            seen = f && strcmp(f, file) == 0 && json_equal(json_object_get(other, "units"),
                                                           json_object_get(cell, "units"));
        }
        if (seen) continue;
        char path[8200];
        snprintf(path, sizeof path, "%s%s", file[0] == '/' ? "" : dir, file);
        /* as the model loader reads it: NEURON's scheme (Import3d's sections) unless "vertex" */
        const json_t *disc = json_object_get(cell, "discretization");
        const int neuron = cell_choice(disc, "scheme", "vertex", "neuron", 1);
        hb_swc_options_t swc;
        hb_swc_options_default(&swc);
        swc.units = cell_choice(cell, "units", "um", "nm", 0) ? HB_UNITS_NM : HB_UNITS_UM;
        swc.sections = cell_choice(cell, "section_rule", "hinesbatch", "import3d", neuron)
                           ? HB_SECTIONS_IMPORT3D : HB_SECTIONS_HINESBATCH;
        swc.keep_zero_radius = cell_choice(cell, "zero_radius", "repair", "keep", 0);
        swc.single_points = cell_choice(cell, "point_precision", "double", "float", 0);
        hb_morph_t *morph = NULL;
        if (hb_morph_load(path, &swc, &morph) != HB_SUCCESS) continue; /* the loader says */
        for (int k = 0; k < hb_morph_warning_count(morph); k++)
            fprintf(stderr, "%s %s: warning: %s: cells[%zu].morphology: %s\n", program, command,
                    model, i, hb_morph_warning(morph, k));
        hb_morph_destroy(morph);
    }
}

void cli_json_string(FILE *out, const char *s)
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

void cli_json_number(FILE *out, double x)
{
    if (isfinite(x)) fprintf(out, "%.6g", x);
    else fputs("null", out);
}

double cli_now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_progress_begin(cli_progress_t *p, const char *command, const char *unit)
{
    p->on = isatty(STDERR_FILENO);
    p->command = command;
    p->unit = unit;
    p->start = cli_now_seconds();
    p->shown = -1.0;
    p->done = p->total = 0.0;
}

void cli_progress_redraw(cli_progress_t *p) { cli_progress_show(p, p->done, p->total, 1); }



void cli_progress_show(cli_progress_t *p, double done, double total, int force)
{
    if (!p->on) return;
    const double now = cli_now_seconds(), wall = now - p->start;
    if (!force && p->shown >= 0.0 && now - p->shown < 0.2) return; /* a few lines a second */
    p->shown = now;
    p->done = done;
    p->total = total;
    fprintf(stderr, "\r\033[K%s %s: %g / %g %s, %.1f s", program, p->command, done, total,
            p->unit, wall);
    if (done > 0 && done < total) fprintf(stderr, ", ETA %.0f s", wall * (total - done) / done);
    fflush(stderr);
    progress_dirty = 1;
}

void cli_progress_clear(cli_progress_t *p)
{
    (void)p;
    erase_progress();
}

static int compare_doubles(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double cli_median(double *x, size_t n)
{
    if (n == 0) return NAN;
    qsort(x, n, sizeof *x, compare_doubles);
    return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

double cli_uniform(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return (double)((x * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* Distinct random systems per batch; system s gets number s % FILL_DISTINCT, so
 * neighbours differ and nothing is zero, and filling 256,000 cells stays cheap. */
#define FILL_DISTINCT 64

hb_status_t cli_fill_batch(hb_batch_t *batch, const hb_cable_t *cable, double dt_ms, uint64_t seed,
                           int own_ul)
{
    const int m = hb_cable_size(cable), n = hb_batch_count(batch);
    const int ul_sets = own_ul ? FILL_DISTINCT : 1;
    double *buf = malloc((size_t)m * (2 * (size_t)ul_sets + 2 * FILL_DISTINCT + 2) * sizeof *buf);
    if (!buf) return HB_ERR_ALLOC;
    seed ^= 0x9E3779B97F4A7C15ULL; /* xorshift needs a non-zero state */
    double *cu = buf, *cl = cu + (size_t)m * ul_sets, *cd = cl + (size_t)m * ul_sets;
    double *cr = cd + (size_t)m * FILL_DISTINCT;
    double *v = cr + (size_t)m * FILL_DISTINCT, *g = v + m;
    hb_status_t status = hb_cable_offdiag(cable, cu, cl);
    for (int i = 0; i < m; i++) g[i] = 1e-4;
    const size_t ul_stride = own_ul ? (size_t)m : 0; /* set k's u and l at k * ul_stride */
    /* with own_ul, set k's axial conductances scaled by 0.8-1.2, as by its own Ra; set 0 last,
     * since the others scale its values */
    for (int k = own_ul ? FILL_DISTINCT - 1 : -1; k >= 0 && status == HB_SUCCESS; k--) {
        const double f = 0.8 + 0.4 * cli_uniform(&seed);
        for (int i = 0; i < m; i++) {
            cu[k * ul_stride + i] = f * cu[i];
            cl[k * ul_stride + i] = f * cl[i];
        }
    }
    for (int k = 0; k < FILL_DISTINCT && status == HB_SUCCESS; k++) {
        for (int i = 0; i < m; i++) v[i] = -65.0 + 20.0 * (cli_uniform(&seed) - 0.5);
        status = hb_cable_step_system(cable, dt_ms, cu + k * ul_stride, cl + k * ul_stride, v, g,
                                      NULL, NULL, cd + (size_t)k * m, cr + (size_t)k * m);
    }
    for (int s = 0; s < n && status == HB_SUCCESS; s++) {
        const size_t k = (size_t)(s % FILL_DISTINCT);
        status = hb_batch_set(batch, s, cu + k * ul_stride, cl + k * ul_stride, cd + k * m,
                              cr + k * m);
    }
    free(buf);
    return status;
}

int cli_output_name_fits(const char *command, const char *dir)
{
    /* the longest name made in it: "/checkpoint.RANK.bin.tmp" and the like, within 4200 bytes */
    enum { ROOM = 4096 };
    const size_t n = strlen(dir);
    if (n <= ROOM) return 0;
    return cli_fail(command, "-o: an output directory name of %zu bytes, too long; expected at "
                    "most %d bytes", n, ROOM);
}
