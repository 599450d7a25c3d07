/* Shared pieces of the hinesbatch command-line tool (public API only). */
#ifndef HB_TOOLS_CLI_H
#define HB_TOOLS_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hinesbatch.h"

#if defined(__GNUC__)
#define CLI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CLI_PRINTF(a, b)
#endif

/* A macro's value as a string literal ("1024" for HB_MAX_THREADS). */
#define CLI_STR_(x) #x
#define CLI_STR(x) CLI_STR_(x)

extern const char hb_default_swc_name[];
extern const unsigned char hb_default_swc[];
extern const size_t hb_default_swc_length;

extern const char cli_usage_discretisation[];
/* main's argv (NULL-terminated), for a command that runs the program again (run_threads.h). */
extern char **cli_argv;

/* "hinesbatch COMMAND: message" on stderr; returns 1. */
int cli_fail(const char *command, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Reports hb_last_error() and the status; returns 1. */
int cli_fail_status(const char *command, hb_status_t status);

/* Whole-string integer in [lo, hi]; 1 on success. */
int cli_parse_int(const char *text, long lo, long hi, long *out);
/* Whole-string finite number > lo; 1 on success. */
int cli_parse_double(const char *text, double lo, double *out);

/* ---- table-driven options (every subcommand) ---- */

typedef enum {
    CLI_OPT_FLAG,     /* no value: flag_value into an int */
    CLI_OPT_INT,      /* an integer in [min, max] into an int (max <= INT_MAX) */
    CLI_OPT_LONG,     /* the same into a long */
    CLI_OPT_STRING,   /* the value itself: a const char * into argv */
    CLI_OPT_INT_LIST, /* comma-separated integers in [1, max] into long[capacity] and *count */
    CLI_OPT_CHOICE,   /* one name of `choices`: its value into an int */
    CLI_OPT_NAME_SET, /* comma-separated names of `choices`: their values or-ed into an int */
    CLI_OPT_CUSTOM,   /* parse(command, value, dest) */
    CLI_OPT_DOUBLE,   /* a finite number > min into a double (cli_parse_double) */
    /* The two kinds below have no name of their own. */
    CLI_OPT_MODEL,     /* the compartment options (cli_model_option_names) into a
                          cli_model_options_t */
    CLI_OPT_POSITIONAL /* the one argument that is no option ("-" is one) into a const
                          char *; required; `item` names it in errors ("model file").
                          At most one per table. */
} cli_option_kind_t;

/* A name and what it stands for; a list of them ends with {NULL, 0}. */
typedef struct {
    const char *name;
    int value;
} cli_choice_t;

/* One option; write them with the CLI_* macros below, which check dest's type. */
typedef struct {
    const char *name; /* "--repeats" (a value as "--repeats 5" or "--repeats=5"), or "-o" */
    cli_option_kind_t kind;
    void *dest;
    long min, max;               /* INT, LONG, INT_LIST; DOUBLE: min the exclusive bound */
    const char *expected;        /* INT, LONG, DOUBLE: what a bad value is told ("1..1000") */
    int flag_value;              /* FLAG */
    int *count;                  /* INT_LIST: how many integers were given */
    int capacity;                /* INT_LIST: room at dest */
    const cli_choice_t *choices; /* CHOICE, NAME_SET */
    const char *item;            /* NAME_SET: what one name is, for errors ("model"); POSITIONAL */
    /* CUSTOM: 1, or 0 after an error message */
    int (*parse)(const char *command, const char *value, void *dest);
    const char *help; /* any kind: printed by --help after the usage and a blank line */
} cli_option_t;

/* _Generic without a default: a destination of another type does not compile. */
#define CLI_DEST_(type, p) _Generic((p), type *: (p))

#define CLI_FLAG(option, target, value)                                                  \
    {.name = (option), .kind = CLI_OPT_FLAG, .dest = CLI_DEST_(int, target),               \
     .flag_value = (value)}
/* target: int * or long * */
#define CLI_INT(option, target, lo, hi, expected_text)                                   \
    {.name = (option), .kind = _Generic((target), int *: CLI_OPT_INT, long *: CLI_OPT_LONG), \
     .dest = (target), .min = (lo), .max = (hi), .expected = (expected_text)}
#define CLI_POSITIVE(option, target, hi) CLI_INT(option, target, 1, hi, "a positive integer")
#define CLI_STRING(option, target)                                                       \
    {.name = (option), .kind = CLI_OPT_STRING, .dest = CLI_DEST_(const char *, target)}
#define CLI_INT_LIST(option, array, room, n, hi)                                         \
    {.name = (option), .kind = CLI_OPT_INT_LIST, .dest = CLI_DEST_(long, array),           \
     .capacity = (room), .count = CLI_DEST_(int, n), .min = 1, .max = (hi)}
#define CLI_CHOICE(option, target, list)                                                 \
    {.name = (option), .kind = CLI_OPT_CHOICE, .dest = CLI_DEST_(int, target),             \
     .choices = (list)}
#define CLI_NAME_SET(option, target, list, what)                                         \
    {.name = (option), .kind = CLI_OPT_NAME_SET, .dest = CLI_DEST_(int, target),           \
     .choices = (list), .item = (what)}
#define CLI_CUSTOM(option, parser, target)                                               \
    {.name = (option), .kind = CLI_OPT_CUSTOM, .dest = (target), .parse = (parser)}
/* target: double *; a finite number > lo */
#define CLI_DOUBLE(option, target, lo, expected_text)                                    \
    {.name = (option), .kind = CLI_OPT_DOUBLE, .dest = CLI_DEST_(double, target),          \
     .min = (lo), .expected = (expected_text)}
#define CLI_POSITIONAL(what, target)                                                     \
    {.kind = CLI_OPT_POSITIONAL, .dest = CLI_DEST_(const char *, target), .item = (what)}
/* The compartment options (cli_parse_model_option) into a cli_model_options_t *. */
#define CLI_MODEL_OPTIONS(target)                                                        \
    {.kind = CLI_OPT_MODEL, .dest = CLI_DEST_(cli_model_options_t, target),                \
     .help = cli_usage_discretisation}

/* cli_parse_options' result when the command should go on. */
#define CLI_CONTINUE (-1)
/*
 * Parses argv[1..argc-1] against `options` with getopt_long, in order: "--name value",
 * "--name=value", "-o value", "-oVALUE", a unique prefix of a long name, and "--" before
 * arguments that are not options (--help and -h print `usage` and the entries' help to
 * stdout). Returns CLI_CONTINUE, or the exit status: 0 after the usage, 2 after an error
 * message (unknown or ambiguous option, missing or bad value, a value given to a flag, a
 * POSITIONAL missing or given twice).
 */
int cli_parse_options(const char *command, const char *usage, const cli_option_t *options,
                      size_t n_options, int argc, char **argv);

typedef struct {
    hb_discretization_t disc;
    hb_swc_options_t swc;
    int sections_set; /* --sections given; else --scheme neuron reads SWC as Import3d does */
} cli_model_options_t;

/* CLI_CUSTOM parsers of run's --backend, --threads, --t-stop and --dt into an
 * hb_sim_overrides_t (the value, and its HB_SIM_SET_* bit). */
int cli_parse_backend_override(const char *command, const char *value, void *overrides);
int cli_parse_threads_override(const char *command, const char *value, void *overrides);
int cli_parse_t_stop_override(const char *command, const char *value, void *overrides);
int cli_parse_dt_override(const char *command, const char *value, void *overrides);

void cli_model_options_default(cli_model_options_t *m);
/* The compartment options' names ("--policy", ...), NULL-terminated; each takes a value. */
extern const char *const cli_model_option_names[];
/* One compartment option (`option` one of cli_model_option_names) into `m`: 1, or 0 after
 * an error message. */
int cli_parse_model_option(const char *command, const char *option, const char *value,
                           cli_model_options_t *m);
/* Loads FILE (or the built-in cell when path is NULL), prints warnings, builds the
 * cable; returns 0 or 1 after an error message. */
int cli_load_model(const char *command, const char *path, const cli_model_options_t *m,
                   hb_morph_t **morph, hb_cable_t **cable);

/* The warnings of the SWC files a model file's cells name (as its loader reads them: units,
 * section rule, zero radii), on stderr; files that fail to load are left to the loader. */
struct json_t;
void cli_warn_morphologies(const char *command, const char *model, const struct json_t *root);
/* An output directory's name within the room of the paths made in it ("NAME/spikes.dat"):
 * 0, or 1 after a message with the limit. */
int cli_output_name_fits(const char *command, const char *dir);

void cli_json_string(FILE *out, const char *s);
/* A number, or null when it is not finite (JSON has no NaN). */
void cli_json_number(FILE *out, double x);
double cli_now_seconds(void);

/* A progress line on stderr while it is a terminal (nothing otherwise): "hinesbatch solve:
 * 3 / 20 solves, 1.2 s, ETA 7 s", rewritten in place. */
typedef struct {
    int on;              /* stderr is a terminal */
    const char *command; /* "solve", "bench hines" */
    const char *unit;    /* what is counted: "solves", "cases" */
    double start, shown; /* [s] cli_now_seconds at the start and at the last line */
    double done, total;  /* the last line's counts */
} cli_progress_t;
void cli_progress_begin(cli_progress_t *p, const char *command, const char *unit);
/* done of total; at most five lines a second unless `force`. */
void cli_progress_show(cli_progress_t *p, double done, double total, int force);
/* The last line again (after cli_progress_clear, before more work). */
void cli_progress_redraw(cli_progress_t *p);
/* Erases the line (before output on stdout, and at the end; cli_fail erases it too). */
void cli_progress_clear(cli_progress_t *p);
/* Sorts `x` and returns its median. */
double cli_median(double *x, size_t n);
/*
 * Fills every system of `batch` with one backward-Euler step of `cable` (passive
 * leak 1e-4 S/cm^2) at random voltages around rest: 64 voltage sets, system s
 * taking set s % 64, so neighbours differ, nothing is zero, and filling
 * 256,000 systems stays cheap. With `own_ul`, each set also scales the axial
 * conductances (u and l) by its own factor in [0.8, 1.2], as cells of one tree with
 * different axial resistivities: no two neighbours share u and l.
 */
hb_status_t cli_fill_batch(hb_batch_t *batch, const hb_cable_t *cable, double dt_ms, uint64_t seed,
                           int own_ul);
/* xorshift64* in [0, 1): reproducible across platforms. */
double cli_uniform(uint64_t *state);

/* Commands: argv[0] is the command name. Return the exit status. */
int cli_command_info(int argc, char **argv);
int cli_command_solve(int argc, char **argv);
int cli_command_run(int argc, char **argv);
int cli_command_bench(int argc, char **argv);
int cli_command_catalogue(int argc, char **argv);

/* Benchmarks (tools/bench_*.c): argv[0] is the benchmark name. */
int cli_bench_hines(int argc, char **argv);
int cli_bench_tridiag(int argc, char **argv);
int cli_bench_cell(int argc, char **argv);
int cli_bench_multi(int argc, char **argv);

#endif
