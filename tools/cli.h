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

/* "hinesbatch COMMAND: message" on stderr; returns 1. */
int cli_fail(const char *command, const char *fmt, ...) CLI_PRINTF(2, 3);
/* Reports hb_last_error() and the status; returns 1. */
int cli_fail_status(const char *command, hb_status_t status);

/* Whole-string integer in [lo, hi]; 1 on success. */
int cli_parse_int(const char *text, long lo, long hi, long *out);
/* Whole-string finite number > lo; 1 on success. */
int cli_parse_double(const char *text, double lo, double *out);

typedef struct {
    const char *command;
    int argc;
    char **argv;
    int i;
} cli_args_t;

/* The value after option argv[i] (advancing i); NULL after an error message. */
const char *cli_option_value(cli_args_t *a);

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
    /* The two kinds below have no name: they see the arguments that no option names. */
    CLI_OPT_OTHER,     /* other(args, dest) on each such argument, before POSITIONAL */
    CLI_OPT_POSITIONAL /* the one such argument not starting with '-' ("-" is one) into a
                          const char *; required; `item` names it in errors ("model file").
                          At most one per table. */
} cli_option_kind_t;

/* A name and what it stands for; a list of them ends with {NULL, 0}. */
typedef struct {
    const char *name;
    int value;
} cli_choice_t;

/* One option; write them with the CLI_* macros below, which check dest's type. */
typedef struct {
    const char *name; /* "--repeats" */
    cli_option_kind_t kind;
    void *dest;
    long min, max;               /* INT, LONG, INT_LIST */
    const char *expected;        /* INT, LONG: what a bad value is told ("1..1000") */
    int flag_value;              /* FLAG */
    int *count;                  /* INT_LIST: how many integers were given */
    int capacity;                /* INT_LIST: room at dest */
    const cli_choice_t *choices; /* CHOICE, NAME_SET */
    const char *item;            /* NAME_SET: what one name is, for errors ("model"); POSITIONAL */
    /* CUSTOM: 1, or 0 after an error message */
    int (*parse)(const char *command, const char *value, void *dest);
    /* OTHER, on args->argv[args->i]: 1 used (its values taken with cli_option_value),
     * 0 not one of its own, -1 after an error message */
    int (*other)(cli_args_t *args, void *dest);
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
#define CLI_OTHER(parser, target, help_text)                                             \
    {.kind = CLI_OPT_OTHER, .dest = (target), .other = (parser), .help = (help_text)}
#define CLI_POSITIONAL(what, target)                                                     \
    {.kind = CLI_OPT_POSITIONAL, .dest = CLI_DEST_(const char *, target), .item = (what)}
/* The compartment options (cli_parse_model_option) into a cli_model_options_t *. */
#define CLI_MODEL_OPTIONS(target)                                                        \
    CLI_OTHER(cli_parse_model_option, CLI_DEST_(cli_model_options_t, target),            \
              cli_usage_discretisation)

/* cli_parse_options' result when the command should go on. */
#define CLI_CONTINUE (-1)
/*
 * Parses argv[1..argc-1] against `options`, in order (--help and -h print `usage`
 * and the entries' help to stdout). Returns CLI_CONTINUE, or the exit status: 0
 * after the usage, 2 after an error message (unknown argument, missing or bad
 * value, a POSITIONAL missing or given twice).
 */
int cli_parse_options(const char *command, const char *usage, const cli_option_t *options,
                      size_t n_options, int argc, char **argv);

typedef struct {
    hb_discretization_t disc;
    hb_swc_options_t swc;
    int sections_set; /* --sections given; else --scheme neuron reads SWC as Import3d does */
} cli_model_options_t;

void cli_model_options_default(cli_model_options_t *m);
/* One compartment option at argv[i] into the cli_model_options_t `model`: 1 used,
 * 0 not one, -1 error (reported). A CLI_OPT_OTHER parser: see CLI_MODEL_OPTIONS. */
int cli_parse_model_option(cli_args_t *a, void *model);
/* Loads FILE (or the built-in cell when path is NULL), prints warnings, builds the
 * cable; returns 0 or 1 after an error message. */
int cli_load_model(const char *command, const char *path, const cli_model_options_t *m,
                   hb_morph_t **morph, hb_cable_t **cable);

void cli_json_string(FILE *out, const char *s);
/* A number, or null when it is not finite (JSON has no NaN). */
void cli_json_number(FILE *out, double x);
double cli_now_seconds(void);
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

/* Benchmarks (tools/bench_*.c): argv[0] is the benchmark name. */
int cli_bench_hines(int argc, char **argv);
int cli_bench_tridiag(int argc, char **argv);
int cli_bench_cell(int argc, char **argv);
int cli_bench_multi(int argc, char **argv);

#endif
