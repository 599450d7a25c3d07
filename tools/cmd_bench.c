/* hinesbatch bench: benchmarks, one subcommand each (tools/bench_*.c). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "common/nearest_name.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} bench_t;

static const bench_t benches[] = {
    {"hines", cli_bench_hines, "same-morphology batched Hines solves (paper Figures 3-5)"},
    {"tridiag", cli_bench_tridiag, "batched tridiagonal solves vs cuSPARSE (paper Figures 9-12)"},
    {"cell", cli_bench_cell, "simulator: ns per compartment-step, CPU and GPU, NEURON as peer"},
    {"multi", cli_bench_multi, "mixed-morphology batches by levels (paper Figures 6, 14; real cells)"},
};

static void usage(FILE *out)
{
    fputs("usage: hinesbatch bench NAME [options]\n\nbenchmarks:\n", out);
    for (size_t i = 0; i < sizeof benches / sizeof *benches; i++)
        fprintf(out, "  %-8s %s\n", benches[i].name, benches[i].summary);
    fputs("\n'hinesbatch bench NAME --help' describes one.\n", out);
}

int cli_command_bench(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    for (size_t i = 0; i < sizeof benches / sizeof *benches; i++)
        if (strcmp(argv[1], benches[i].name) == 0) return benches[i].run(argc - 1, argv + 1);
    const char *names[sizeof benches / sizeof *benches + 1] = {NULL};
    for (size_t i = 0; i < sizeof benches / sizeof *benches; i++) names[i] = benches[i].name;
    const char *near = hb_nearest_name(argv[1], names);
    if (near) {
        cli_fail("bench", "unknown benchmark '%s'; did you mean '%s'?", argv[1], near);
        return 2;
    }
    cli_fail("bench", "unknown benchmark '%s'", argv[1]);
    usage(stderr);
    return 2;
}
