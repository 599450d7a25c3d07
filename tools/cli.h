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

typedef struct {
    hb_discretization_t disc;
    hb_swc_options_t swc;
} cli_model_options_t;

void cli_model_options_default(cli_model_options_t *m);
/* One compartment option at argv[i]: 1 used, 0 not one, -1 error (reported). */
int cli_parse_model_option(cli_args_t *a, cli_model_options_t *m);
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
 * 256,000 systems stays cheap.
 */
hb_status_t cli_fill_batch(hb_batch_t batch, const hb_cable_t *cable, double dt_ms, uint64_t seed);
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
