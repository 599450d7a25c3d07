/*
 * hinesbatch command-line tool. Uses only the public API (include/hinesbatch.h).
 * Each command lives in its own file (tools/cmd_*.c) and is listed below.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command_t;

static const command_t commands[] = {
    {"info", cli_command_info, "describe a morphology and its compartments"},
    {"solve", cli_command_solve, "solve a batch of Hines systems built from a morphology"},
    {"run", cli_command_run, "simulate a JSON model file: cells, or a network (mpirun for ranks)"},
    {"bench", cli_command_bench, "benchmarks against the paper, peers and the hardware"},
};

static void usage(FILE *out)
{
    fputs("usage: hinesbatch COMMAND [options]\n\n"
          "Batched Hines solvers for morphologically detailed neurons.\n\ncommands:\n",
          out);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'hinesbatch COMMAND --help' describes a command. Options take values as\n"
          "'--name value' or '--name=value' (a unique prefix of a name will do); '--' ends\n"
          "the options. 'man hinesbatch' (docs/hinesbatch.1) describes them all.\n", out);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0 || strcmp(name, "help") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(name, "--version") == 0) {
        /* and what this build can use: backends and the MPI communicator */
        printf("hinesbatch %d.%d.%d (backends: seq%s%s; communicators: serial%s)\n",
               HB_VERSION_MAJOR, HB_VERSION_MINOR, HB_VERSION_PATCH,
               hb_backend_available(HB_BACKEND_OMP) ? ", omp" : "",
               hb_backend_available(HB_BACKEND_CUDA) ? ", cuda" : "",
               hb_comm_available(HB_COMM_MPI) ? ", mpi" : "");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "hinesbatch: unknown command '%s'\n\n", name);
    usage(stderr);
    return 2;
}
