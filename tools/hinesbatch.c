/*
 * hinesbatch command-line tool. Uses only the public API (include/hinesbatch.h).
 * Each command lives in its own file (tools/cmd_*.c) and is listed below.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "common/nearest_name.h"
#include "sonata/sonata.h"

static int command_plot(int argc, char **argv);

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
    {"plot", command_plot, "PNG plots of a run's outputs or a model (python3 -m hinesbatch.plot)"},
    {"build-catalogue", cli_command_catalogue,
     "build a mechanism catalogue (.so) from NMODL .mod files, or check them"},
};

/* The Python module's folders, tried in order: the installed one (relative to the binary's
 * folder), then the source tree's (a build tree's binary). CMakeLists.txt sets both. */
#ifndef HB_PYTHON_FROM_BIN
#define HB_PYTHON_FROM_BIN "../lib/python3/site-packages"
#endif
#ifndef HB_PYTHON_SOURCE_DIR
#define HB_PYTHON_SOURCE_DIR ""
#endif

/* Imports hinesbatch.plot or says what is missing, then runs its command line. */
static const char plot_bootstrap[] =
    "import sys\n"
    "try:\n"
    "    from hinesbatch import plot\n"
    "except ImportError as err:\n"
    "    sys.exit(f'hinesbatch plot: {sys.executable} cannot import hinesbatch.plot ({err}); '\n"
    "             'it needs the module (python/ of the source tree, or the installed one) and '\n"
    "             'Debian\\'s python3-numpy, python3-cffi and python3-matplotlib')\n"
    "sys.exit(plot.main(sys.argv[1:], prog='hinesbatch plot'))\n";

/* PYTHONPATH and LD_LIBRARY_PATH with `dir` in front; 0 on success. */
static int prepend(const char *variable, const char *dir)
{
    const char *old = getenv(variable);
    char value[8192];
    const int n = old && old[0] ? snprintf(value, sizeof value, "%s:%s", dir, old)
                                : snprintf(value, sizeof value, "%s", dir);
    return n < 0 || n >= (int)sizeof value ? -1 : setenv(variable, value, 1);
}

/* hinesbatch plot ARGS: python3 -m hinesbatch.plot ARGS, with this installation's or build
 * tree's module and shared library found for it. */
static int command_plot(int argc, char **argv)
{
    char exe[PATH_MAX], dir[PATH_MAX + 64], path[2 * PATH_MAX];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    exe[n > 0 ? n : 0] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash) *slash = '\0';
    const char *const modules[] = {HB_PYTHON_FROM_BIN, HB_PYTHON_SOURCE_DIR};
    for (size_t k = 0; k < sizeof modules / sizeof *modules; k++) {
        if (!modules[k][0]) continue;
        snprintf(dir, sizeof dir, "%s%s%s", modules[k][0] == '/' ? "" : exe,
                 modules[k][0] == '/' ? "" : "/", modules[k]);
        snprintf(path, sizeof path, "%s/hinesbatch/plot.py", dir);
        if (access(path, R_OK) == 0) {
            if (prepend("PYTHONPATH", dir) != 0) return cli_fail("plot", "PYTHONPATH: too long");
            break;
        }
    }
    snprintf(path, sizeof path, "%s/libhinesbatch.so.0", exe); /* a build tree's library */
    if (exe[0] && access(path, R_OK) == 0 && prepend("LD_LIBRARY_PATH", exe) != 0)
        return cli_fail("plot", "LD_LIBRARY_PATH: too long");
    char **args = calloc((size_t)argc + 4, sizeof *args);
    if (!args) return cli_fail("plot", "out of memory");
    /* HINESBATCH_PYTHON: the interpreter (a path, or a name looked up in PATH) */
    const char *chosen = getenv("HINESBATCH_PYTHON");
    const char *python = chosen && chosen[0] ? chosen : "python3";
    args[0] = (char *)python;
    args[1] = "-c";
    args[2] = (char *)plot_bootstrap;
    for (int k = 1; k < argc; k++) args[k + 2] = argv[k];
    fflush(NULL);
    execvp(python, args);
    const int error = errno;
    free(args);
    return cli_fail("plot", "cannot run %s%s: %s (the plots are drawn by Python: Debian's "
                    "python3 with python3-numpy, python3-cffi and python3-matplotlib; "
                    "HINESBATCH_PYTHON names another)", python,
                    python == chosen ? " (HINESBATCH_PYTHON)" : "", strerror(error));
}

static void usage(FILE *out)
{
    fputs("usage: hinesbatch COMMAND [options]\n\n"
          "Batched Hines solvers for morphologically detailed neurons.\n\ncommands:\n",
          out);
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        fprintf(out, "  %-16s %s\n", commands[i].name, commands[i].summary);
    fputs("\n'hinesbatch COMMAND --help' describes a command. Options take values as\n"
          "'--name value' or '--name=value' (a unique prefix of a name will do); '--' ends\n"
          "the options. 'man hinesbatch' (docs/hinesbatch.1) describes them all.\n", out);
}

int main(int argc, char **argv)
{
    cli_argv = argv;
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
        /* and what this build can use: backends, the MPI communicator, HDF5 files */
        const int v = hb_version(); /* the library's, which may not be the header's */
        printf("hinesbatch %d.%d.%d (backends: seq%s%s; communicators: serial%s; "
               "outputs: csv%s)\n", v / 10000, v / 100 % 100, v % 100,
               hb_backend_available(HB_BACKEND_OMP) ? ", omp" : "",
               hb_backend_available(HB_BACKEND_CUDA) ? ", cuda" : "",
               hb_comm_available(HB_COMM_MPI) ? ", mpi" : "",
               cli_sonata_available() ? ", hdf5" : "");
        return 0;
    }
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++)
        if (strcmp(name, commands[i].name) == 0) return commands[i].run(argc - 1, argv + 1);
    const char *names[sizeof commands / sizeof *commands + 1] = {NULL};
    for (size_t i = 0; i < sizeof commands / sizeof *commands; i++) names[i] = commands[i].name;
    const char *near = hb_nearest_name(name, names);
    if (near) {
        fprintf(stderr, "hinesbatch: unknown command '%s'; did you mean '%s'?\n", name, near);
        return 2;
    }
    fprintf(stderr, "hinesbatch: unknown command '%s'\n\n", name);
    usage(stderr);
    return 2;
}
