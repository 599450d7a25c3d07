/* hinesbatch build-catalogue: NMODL .mod files into a catalogue of mechanisms. --check: each
 * file is parsed and checked by src/nmodl/ and its mechanism's interface printed. Otherwise
 * (-o NAME.so): the C of the catalogue is generated (hb_nmodl_emit_catalogue) into a folder
 * kept beside the library, and compiled with the C compiler this hinesbatch was configured
 * with into a shared library exporting hb_catalogue_v1 (docs/mechanisms.md, section 7). */
#define _XOPEN_SOURCE 700 /* POSIX 2008 with realpath */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "hb_nmodl_generator.h"
#include "mech/catalogue.h"
#include "nmodl/nmodl.h"

extern char **environ;

static const char usage_catalogue[] =
    "usage: hinesbatch build-catalogue MODDIR|FILE.mod -o NAME.so [--name NAME] [--cc CC]\n"
    "                                  [--cuda|--no-cuda] [--nvcc NVCC]\n"
    "       hinesbatch build-catalogue --check [--json] MODDIR|FILE.mod\n"
    "\n"
    "Reads every .mod file of MODDIR (or the one FILE.mod) and checks it (syntax, names, ions,\n"
    "SOLVE methods, the dimensions of assignments). With -o, generates the C of the\n"
    "catalogue into the folder NAME.src beside NAME.so (kept, to read) and compiles it into\n"
    "the shared library NAME.so that a model file or hb_catalogue_load loads by path; every\n"
    "file must translate. With --check, prints each mechanism's interface: its name and kind,\n"
    "parameters with units, defaults and ranges, states, ions read and written, currents and\n"
    "solve methods, and what the code generator cannot translate yet. An error is printed as\n"
    "FILE:LINE:COLUMN: what is wrong; expected ...; every file is checked, and the status is\n"
    "1 when any failed.\n"
    "\n"
    "  -o, --output NAME.so  build the catalogue's shared library NAME.so\n"
    "  --name NAME       the catalogue's name (qualifies its mechanisms: NAME::mech);\n"
    "                    default MODDIR's base name (FILE.mod's without .mod)\n"
    "  --cc CC           the C compiler (default: the one hinesbatch was configured with,\n"
    "                    " HB_CATALOGUE_CC ")\n"
    "  --cuda            also compile the mechanisms' CUDA kernels with nvcc into NAME.so,\n"
    "                    for backend cuda (default when this hinesbatch has CUDA and its\n"
    "                    nvcc exists)\n"
    "  --no-cuda         CPU kernels only (backend cuda then refuses the catalogue)\n"
    "  --nvcc NVCC       the CUDA compiler (default: the one hinesbatch was configured with,\n"
    "                    else nvcc on PATH)\n"
    "  --check           check and describe the mechanisms, build nothing\n"
    "  --json            with --check, machine-readable output: {\"mechanisms\": [{\"name\",\n"
    "                    \"kind\", \"file\", \"parameters\", \"states\", \"ions\", ...}], "
    "\"errors\": [...]}\n";

static const char *const kind_names[] = {"density", "point", "artificial"};

static void json_number(FILE *out, double x)
{
    char text[40];
    snprintf(text, sizeof text, "%.15g", x);
    if (strtod(text, NULL) != x) snprintf(text, sizeof text, "%.17g", x);
    if (isfinite(x))
        fputs(text, out);
    else
        fputs("null", out);
}

static void json_names(FILE *out, const char *key, const char *const *names, int n)
{
    fprintf(out, ", \"%s\": [", key);
    for (int i = 0; i < n; i++) {
        if (i) fputs(", ", out);
        cli_json_string(out, names[i]);
    }
    fputc(']', out);
}

static void json_vars(FILE *out, const char *key, const hb_nmodl_var_t *vars, int n)
{
    fprintf(out, ", \"%s\": [", key);
    for (int i = 0; i < n; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", out);
        cli_json_string(out, vars[i].name);
        fputs(", \"unit\": ", out);
        cli_json_string(out, vars[i].unit);
        if (vars[i].has_value) {
            fputs(", \"default\": ", out);
            json_number(out, vars[i].value);
        }
        if (vars[i].has_limits) {
            fputs(", \"range\": [", out);
            json_number(out, vars[i].lo);
            fputs(", ", out);
            json_number(out, vars[i].hi);
            fputc(']', out);
        }
        fputc('}', out);
    }
    fputc(']', out);
}

/* The currents a mechanism writes: its ions' i<ion> and its nonspecific currents. */
static int currents(const hb_nmodl_mechanism_t *m, const char **out, int room)
{
    int n = 0;
    for (int i = 0; i < m->n_ions; i++)
        for (int j = 0; j < m->ions[i].n_write; j++)
            if (m->ions[i].write[j][0] == 'i' && n < room) out[n++] = m->ions[i].write[j];
    for (int i = 0; i < m->n_nonspecific && n < room; i++) out[n++] = m->nonspecific[i];
    return n;
}

static void print_json(FILE *out, const hb_nmodl_mechanism_t *m)
{
    fputs("{\"name\": ", out);
    cli_json_string(out, m->name);
    fprintf(out, ", \"kind\": \"%s\", \"file\": ", kind_names[m->kind]);
    cli_json_string(out, m->path);
    fputs(", \"title\": ", out);
    cli_json_string(out, m->title);
    json_vars(out, "parameters", m->parameters, m->n_parameters);
    json_vars(out, "states", m->states, m->n_states);
    json_vars(out, "assigned", m->assigned, m->n_assigned);
    json_vars(out, "constants", m->constants, m->n_constants);
    json_names(out, "range", m->range, m->n_range);
    json_names(out, "globals", m->globals, m->n_globals);
    json_names(out, "pointers", m->pointers, m->n_pointers);
    fputs(", \"ions\": [", out);
    for (int i = 0; i < m->n_ions; i++) {
        fputs(i ? ", {\"name\": " : "{\"name\": ", out);
        cli_json_string(out, m->ions[i].name);
        json_names(out, "read", m->ions[i].read, m->ions[i].n_read);
        json_names(out, "write", m->ions[i].write, m->ions[i].n_write);
        fputs(", \"valence\": ", out);
        if (m->ions[i].has_valence)
            json_number(out, m->ions[i].valence);
        else
            fputs("null", out);
        fputc('}', out);
    }
    fputc(']', out);
    const char *cur[64];
    json_names(out, "currents", cur, currents(m, cur, 64));
    json_names(out, "nonspecific_currents", m->nonspecific, m->n_nonspecific);
    fputs(", \"solves\": [", out);
    for (int i = 0; i < m->n_solves; i++) {
        fprintf(out, "%s{\"block\": ", i ? ", " : "");
        cli_json_string(out, m->solves[i].block);
        fprintf(out, ", \"block_kind\": \"%s\", \"method\": ", m->solves[i].block_kind);
        cli_json_string(out, m->solves[i].method);
        fprintf(out, ", \"steadystate\": %s, \"in\": \"%s\"}",
                m->solves[i].steadystate ? "true" : "false", m->solves[i].caller);
    }
    fputs("], \"blocks\": [", out);
    for (int i = 0; i < m->n_blocks; i++) {
        fprintf(out, "%s{\"kind\": \"%s\", \"name\": ", i ? ", " : "", m->blocks[i].kind);
        cli_json_string(out, m->blocks[i].name);
        fprintf(out, ", \"args\": %d}", m->blocks[i].n_args);
    }
    fputs("], \"reactions\": [", out);
    for (int i = 0; i < m->n_reactions; i++) {
        fprintf(out, "%s{\"block\": ", i ? ", " : "");
        cli_json_string(out, m->reactions[i].block);
        fputs(", \"text\": ", out);
        cli_json_string(out, m->reactions[i].text);
        fputc('}', out);
    }
    fputc(']', out);
    if (m->n_net_receive_args >= 0)
        json_names(out, "net_receive_args", m->net_receive_args, m->n_net_receive_args);
    fprintf(out, ", \"threadsafe\": %s, \"verbatim_blocks\": %d, \"generator\": ",
            m->threadsafe ? "true" : "false", m->n_verbatim);
    if (m->generator_blocker[0])
        cli_json_string(out, m->generator_blocker);
    else
        fputs("\"translatable\"", out);
    fputc('}', out);
}

static void print_vars(const char *label, const hb_nmodl_var_t *vars, int n)
{
    if (!n) return;
    printf("  %-11s", label);
    for (int i = 0; i < n; i++) {
        printf("%s%s", i ? ", " : " ", vars[i].name);
        if (vars[i].has_value) printf(" = %g", vars[i].value);
        if (vars[i].unit[0]) printf(" (%s)", vars[i].unit);
        if (vars[i].has_limits) printf(" <%g,%g>", vars[i].lo, vars[i].hi);
    }
    putchar('\n');
}

static void print_text(const hb_nmodl_mechanism_t *m)
{
    printf("%s (%s) %s\n", m->name, kind_names[m->kind], m->path);
    if (m->title[0]) printf("  %-11s %s\n", "title", m->title);
    print_vars("parameters", m->parameters, m->n_parameters);
    print_vars("states", m->states, m->n_states);
    for (int i = 0; i < m->n_ions; i++) {
        printf("  %-11s %s", "ion", m->ions[i].name);
        if (m->ions[i].n_read) printf(" READ");
        for (int j = 0; j < m->ions[i].n_read; j++)
            printf("%s%s", j ? ", " : " ", m->ions[i].read[j]);
        if (m->ions[i].n_write) printf(" WRITE");
        for (int j = 0; j < m->ions[i].n_write; j++)
            printf("%s%s", j ? ", " : " ", m->ions[i].write[j]);
        if (m->ions[i].has_valence) printf(" VALENCE %g", m->ions[i].valence);
        putchar('\n');
    }
    const char *cur[64];
    const int n_cur = currents(m, cur, 64);
    if (n_cur) {
        printf("  %-11s", "currents");
        for (int i = 0; i < n_cur; i++) printf("%s%s", i ? ", " : " ", cur[i]);
        putchar('\n');
    }
    for (int i = 0; i < m->n_solves; i++)
        printf("  %-11s %s%s%s (%s, in %s)\n", "solve", m->solves[i].block,
               m->solves[i].method[0] ? (m->solves[i].steadystate ? " STEADYSTATE " : " METHOD ")
                                      : "",
               m->solves[i].method, m->solves[i].block_kind, m->solves[i].caller);
    for (int i = 0; i < m->n_reactions; i++)
        printf("  %-11s %s\n", "reaction", m->reactions[i].text);
    if (m->n_net_receive_args >= 0) {
        printf("  %-11s", "net_receive");
        for (int i = 0; i < m->n_net_receive_args; i++)
            printf("%s%s", i ? ", " : " ", m->net_receive_args[i]);
        putchar('\n');
    }
    printf("  %-11s %s\n", "generator",
           m->generator_blocker[0] ? m->generator_blocker : "translatable");
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The .mod files of `dir`, sorted, as full paths; NULL after an error message. */
static char **mod_files(const char *dir, int *n)
{
    DIR *d = opendir(dir);
    if (!d) {
        cli_fail("build-catalogue", "%s: cannot open the folder; expected a folder of .mod files",
                 dir);
        return NULL;
    }
    char **list = NULL;
    int cap = 0;
    *n = 0;
    for (struct dirent *e; (e = readdir(d));) {
        const size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".mod") != 0) continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 32;
            char **more = realloc(list, (size_t)cap * sizeof *list);
            if (!more) break;
            list = more;
        }
        const size_t size = strlen(dir) + len + 2;
        list[*n] = malloc(size);
        if (!list[*n]) break;
        snprintf(list[*n], size, "%s/%s", dir, e->d_name);
        (*n)++;
    }
    closedir(d);
    if (*n) qsort(list, (size_t)*n, sizeof *list, by_name);
    return list ? list : calloc(1, sizeof *list);
}

/* The catalogue's default name: MODDIR's base name, or FILE.mod's without ".mod" (of the
 * real path: "." is the current folder's name). */
static char *default_name(const char *given, int is_dir)
{
    char *real = realpath(given, NULL);
    const char *path = real ? real : given;
    size_t end = strlen(path);
    while (end > 1 && path[end - 1] == '/') end--;
    size_t start = end;
    while (start > 0 && path[start - 1] != '/') start--;
    if (!is_dir && end - start > 4 && strncmp(path + end - 4, ".mod", 4) == 0) end -= 4;
    char *name = malloc(end - start + 1);
    if (name) {
        memcpy(name, path + start, end - start);
        name[end - start] = 0;
    }
    free(real);
    return name;
}

/* Runs argv[0] with argv, waits; its exit status, or -1 (message given) when it did not run. */
static int run_program(char *const *args, const char *what, const char *option)
{
    pid_t pid;
    const int error = posix_spawnp(&pid, args[0], NULL, NULL, args, environ);
    if (error) {
        cli_fail("build-catalogue", "cannot run the %s '%s' (%s); expected a %s (%s)", what,
                 args[0], strerror(error), what, option);
        return -1;
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) {
            cli_fail("build-catalogue", "waiting for '%s': %s", args[0], strerror(errno));
            return -1;
        }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    return 128 + (WIFSIGNALED(status) ? WTERMSIG(status) : 0);
}

/* The full path of program `name` (with a '/': itself, if executable; else searched on PATH)
 * into out; 0 when there is none. */
static int find_program(const char *name, char *out, size_t room)
{
    if (!name || !name[0]) return 0;
    if (strchr(name, '/')) {
        snprintf(out, room, "%s", name);
        return access(out, X_OK) == 0;
    }
    const char *path = getenv("PATH");
    while (path && *path) {
        const char *end = strchr(path, ':');
        const size_t len = end ? (size_t)(end - path) : strlen(path);
        snprintf(out, room, "%.*s/%s", (int)len, path, name);
        if (len && access(out, X_OK) == 0) return 1;
        path = end ? end + 1 : NULL;
    }
    return 0;
}

/* nvcc's CUDA runtime folder: <toolkit>/lib64 beside <toolkit>/bin/nvcc. */
static void cuda_lib_dir(const char *nvcc, char *out, size_t room)
{
    char *real = realpath(nvcc, NULL);
    snprintf(out, room, "%s", real ? real : nvcc);
    free(real);
    char *slash = strrchr(out, '/');
    if (slash) *slash = 0; /* .../bin */
    slash = strrchr(out, '/');
    if (slash) *slash = 0; /* the toolkit */
    const size_t used = strlen(out);
    snprintf(out + used, room - used, "/lib64");
}

/* Generates the catalogue's C from files[0..n) into OUTPUT's folder NAME.src and compiles it
 * into OUTPUT (with nvcc non-NULL, its CUDA kernels too: hbg_<id>_cuda.cu, -fmad=false as the
 * library's kernels, linked with the shared CUDA runtime the library uses); then loads it as a
 * model would, to check it. */
static int build_catalogue(char **files, int n, const char *name, const char *output,
                           const char *cc, const char *nvcc)
{
    const size_t len = strlen(output);
    if (len < 4 || strcmp(output + len - 3, ".so") != 0 || output[len - 4] == '/')
        return cli_fail("build-catalogue", "-o '%s': expected a file name ending in .so", output);
    if (!name[0] || strstr(name, "::") || strchr(name, '/'))
        return cli_fail("build-catalogue",
                        "the catalogue name '%s'; expected a name without '::' or '/' (--name)",
                        name);
    char *dir = malloc(len + 2);
    if (!dir) return cli_fail("build-catalogue", "out of memory");
    memcpy(dir, output, len - 3);
    strcpy(dir + len - 3, ".src");
    int failed = 0;
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        failed =
            cli_fail("build-catalogue", "%s: cannot make the folder (%s)", dir, strerror(errno));
    } else { /* the C of an earlier build would mislead the reader: removed */
        DIR *d = opendir(dir);
        if (!d)
            failed = cli_fail("build-catalogue",
                              "%s: not a folder; expected the generated "
                              "C's folder beside %s",
                              dir, output);
        for (struct dirent *e; d && (e = readdir(d));)
            if (strncmp(e->d_name, "hbg_", 4) == 0) {
                char old[4200];
                snprintf(old, sizeof old, "%s/%s", dir, e->d_name);
                remove(old);
            }
        if (d) closedir(d);
    }
    const hb_nmodl_catalogue_opts_t opts = {name, "hb_catalogue_v1", HB_NMODL_GENERATOR, 1,
                                            nvcc != NULL};
    if (!failed &&
        hb_nmodl_emit_catalogue(&opts, (const char *const *)files, n, dir) != HB_SUCCESS) {
        fprintf(stderr, "%s\n", hb_last_error());
        failed = 1;
    }
    char source[4200], include_dir[4200], out_path[4200], cu[4200], cu_obj[4200];
    char lib_dir[4200], rpath[4300], lib_flag[4300];
    cu_obj[0] = '\0';
    if (!failed) {
        char id[256];
        snprintf(id, sizeof id, "%s", name);
        for (char *c = id; *c; c++)
            if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') ||
                  (*c >= '0' && *c <= '9') || *c == '_'))
                *c = '_';
        snprintf(source, sizeof source, "%s/hbg_%s_catalogue.c", dir, id);
        snprintf(cu, sizeof cu, "%s/hbg_%s_cuda.cu", dir, id);
        snprintf(cu_obj, sizeof cu_obj, "%s/hbg_%s_cuda.o", dir, id);
        snprintf(include_dir, sizeof include_dir, "-I%s", dir);
        snprintf(out_path, sizeof out_path, "%s", output);
        struct stat st;
        if (stat(HB_CATALOGUE_INCLUDE_SRC "/common/mech_abi.h", &st) != 0)
            failed = cli_fail("build-catalogue",
                              "%s: missing; expected hinesbatch's source headers where it was "
                              "configured",
                              HB_CATALOGUE_INCLUDE_SRC "/common/mech_abi.h");
    }
    if (!failed && nvcc) { /* the kernels' objects, then linked by the C compiler below */
        char *args[] = {(char *)nvcc,
                        "-std=c++17",
                        "-O2",
                        "-fmad=false", /* the library's kernels' roundings: the CPU's bits */
                        "-arch=sm_" HB_CATALOGUE_CUDA_ARCH,
                        "-Xcompiler",
                        "-fPIC,-fvisibility=hidden",
                        "-I" HB_CATALOGUE_INCLUDE_SRC,
                        "-I" HB_CATALOGUE_INCLUDE_API,
                        include_dir,
                        "-c",
                        "-o",
                        cu_obj,
                        cu,
                        NULL};
        const int status = run_program(args, "CUDA compiler", "--nvcc NVCC, or --no-cuda");
        if (status > 0)
            failed = cli_fail("build-catalogue", "%s: the CUDA compiler '%s' failed (exit %d) on %s",
                              output, nvcc, status, cu);
        else if (status < 0)
            failed = 1;
        cuda_lib_dir(nvcc, lib_dir, sizeof lib_dir);
        snprintf(rpath, sizeof rpath, "-Wl,-rpath,%s", lib_dir);
        snprintf(lib_flag, sizeof lib_flag, "-L%s", lib_dir);
    }
    if (!failed) {
        /* the built-in catalogues' flags in a Release build: the same vector code
         * (docs/mechanisms.md, section 3), so as fast and the same bits; the lane loops'
         * unrolling and scheduling flags only for the library's own compiler (GCC's) */
        char flags[] = HB_CATALOGUE_CFLAGS;
        char *args[48] = {(char *)cc, "-std=c11", "-O3",
                          "-ffp-contract=off" /* the library's roundings (common/hb_math.h) */};
        int na = 4;
        if (strcmp(cc, HB_CATALOGUE_CC) == 0)
            for (char *f = strtok(flags, " "); f && na < 24; f = strtok(NULL, " ")) args[na++] = f;
        else
            args[na++] = "-fno-trapping-math"; /* hb_exp's selects as vector blends */
        char *const rest[] = {"-fopenmp-simd", /* HB_SIMD's omp simd lane loops, no runtime */
                              "-DHB_HAVE_OPENMP=1",
                              "-fPIC",
                              "-shared",
                              "-I" HB_CATALOGUE_INCLUDE_SRC,
                              "-I" HB_CATALOGUE_INCLUDE_API,
                              include_dir,
                              "-o",
                              out_path,
                              source,
                              nvcc ? cu_obj : "-lm",
                              nvcc ? lib_flag : NULL,
                              rpath,
                              "-lcudart",
                              "-lstdc++",
                              "-lm",
                              NULL};
        for (size_t r = 0; r < sizeof rest / sizeof *rest; r++) args[na++] = rest[r];
        const int status = run_program(args, "C compiler", "--cc CC");
        if (status > 0)
            failed = cli_fail("build-catalogue", "%s: the C compiler '%s' failed (exit %d) on %s",
                              output, cc, status, source);
        else if (status < 0)
            failed = 1;
    }
    if (nvcc && cu_obj[0]) /* linked in: nvcc's object differs build to build, the .cu is kept */
        unlink(cu_obj);
    if (!failed) { /* loaded as a model would: the ABI and the table checked */
        const hb_catalogue_t *cat = NULL;
        const hb_status_t status = hb_catalogue_load(output, &cat);
        if (status != HB_SUCCESS) {
            failed = cli_fail_status("build-catalogue", status);
        } else {
            printf("%s: the catalogue %s, %d mechanism%s (", output, cat->name, cat->n_mech,
                   cat->n_mech == 1 ? "" : "s");
            for (int i = 0; i < cat->n_mech; i++) printf("%s%s", i ? ", " : "", cat->mech[i].name);
            printf("); C in %s%s\n", dir, nvcc ? ", CUDA for sm_" HB_CATALOGUE_CUDA_ARCH : "");
        }
    }
    free(dir);
    return failed ? 1 : 0;
}

int cli_command_catalogue(int argc, char **argv)
{
    int check = 0, json = 0, cuda = -1; /* -1: when this hinesbatch has CUDA and its nvcc */
    const char *path = NULL, *output = NULL, *name = NULL, *cc = HB_CATALOGUE_CC;
    const char *nvcc_opt = NULL;
    const cli_option_t options[] = {
        CLI_FLAG("--check", &check, 1),
        CLI_FLAG("--json", &json, 1),
        CLI_STRING("-o", &output),
        CLI_STRING("--output", &output),
        CLI_STRING("--name", &name),
        CLI_STRING("--cc", &cc),
        CLI_FLAG("--cuda", &cuda, 1),
        CLI_FLAG("--no-cuda", &cuda, 0),
        CLI_STRING("--nvcc", &nvcc_opt),
        CLI_POSITIONAL("MODDIR or .mod file", &path),
    };
    const int parsed = cli_parse_options("build-catalogue", usage_catalogue, options,
                                         sizeof options / sizeof *options, argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
    if (check == !!output) {
        cli_fail("build-catalogue", check
                                        ? "--check builds nothing; expected --check or -o NAME.so, "
                                          "not both"
                                        : "nothing to do; expected -o NAME.so (build) or --check");
        return 2;
    }
    if (!check && (json || !cc[0])) {
        cli_fail("build-catalogue", json ? "--json goes with --check; expected --check --json"
                                         : "--cc ''; expected a C compiler");
        return 2;
    }
    if (check && (name || strcmp(cc, HB_CATALOGUE_CC) != 0 || cuda >= 0 || nvcc_opt)) {
        cli_fail("build-catalogue",
                 "--name, --cc, --cuda, --no-cuda and --nvcc go with -o; --check builds nothing");
        return 2;
    }
    if (cuda == 0 && nvcc_opt) {
        cli_fail("build-catalogue", "--nvcc with --no-cuda; expected one of them");
        return 2;
    }
    char nvcc_path[4200];
    const char *nvcc = NULL; /* the CUDA compiler when the CUDA kernels are built */
    if (!check && cuda != 0) {
        const char *want = nvcc_opt ? nvcc_opt : HB_CATALOGUE_NVCC[0] ? HB_CATALOGUE_NVCC : "nvcc";
        const int found = find_program(want, nvcc_path, sizeof nvcc_path);
        if (found && (cuda == 1 || nvcc_opt || HB_CATALOGUE_NVCC[0]))
            nvcc = nvcc_path;
        else if (cuda == 1 || nvcc_opt)
            return cli_fail("build-catalogue",
                            "--cuda: no CUDA compiler '%s'; expected nvcc on PATH or --nvcc "
                            "NVCC (or --no-cuda)",
                            want);
    }
    struct stat st;
    if (stat(path, &st) != 0)
        return cli_fail("build-catalogue",
                        "%s: no such file or folder; expected a folder of .mod "
                        "files or a .mod file",
                        path);
    char **files;
    int n = 1;
    if (S_ISDIR(st.st_mode)) {
        files = mod_files(path, &n);
        if (!files) return 1;
        if (!n) {
            free(files);
            return cli_fail("build-catalogue",
                            "%s: no .mod file in the folder; expected NMODL files "
                            "named *.mod",
                            path);
        }
    } else {
        files = malloc(sizeof *files);
        if (!files || !(files[0] = strdup(path))) {
            free(files);
            return cli_fail("build-catalogue", "out of memory");
        }
    }
    hb_nmodl_mechanism_t **mechs = calloc((size_t)n, sizeof *mechs);
    char **errors = calloc((size_t)n + 1, sizeof *errors);
    int failed = 0, n_errors = 0;
    for (int i = 0; mechs && errors && i < n; i++) {
        if (hb_nmodl_read(files[i], &mechs[i]) != HB_SUCCESS) {
            errors[n_errors++] = strdup(hb_last_error());
            failed = 1;
            continue;
        }
        for (int j = 0; j < i; j++)
            if (mechs[j] && strcmp(mechs[j]->name, mechs[i]->name) == 0) {
                char text[2048];
                snprintf(text, sizeof text,
                         "%s: the mechanism %s is also defined by %s; expected one "
                         "file per mechanism name in a catalogue",
                         files[i], mechs[i]->name, files[j]);
                errors[n_errors++] = strdup(text);
                hb_nmodl_destroy(mechs[i]);
                mechs[i] = NULL;
                failed = 1;
                break;
            }
    }
    if (!mechs || !errors) failed = cli_fail("build-catalogue", "out of memory");
    if (!check) { /* a catalogue is built from files that all translate */
        for (int i = 0; mechs && errors && i < n; i++)
            if (mechs[i] && mechs[i]->generator_blocker[0]) {
                errors[n_errors++] = strdup(mechs[i]->generator_blocker);
                failed = 1;
            }
        for (int i = 0; errors && i < n_errors; i++)
            fprintf(stderr, "%s\n", errors[i] ? errors[i] : "out of memory");
        if (!failed) {
            char *own = name ? NULL : default_name(path, S_ISDIR(st.st_mode));
            if (!name && !own)
                failed = cli_fail("build-catalogue", "out of memory");
            else
                failed = build_catalogue(files, n, name ? name : own, output, cc, nvcc) != 0;
            free(own);
        } else {
            fprintf(stderr, "hinesbatch build-catalogue: %s not built: %d error%s above\n", output,
                    n_errors, n_errors == 1 ? "" : "s");
        }
    } else if (json) {
        fputs("{\"mechanisms\": [", stdout);
        int first = 1;
        for (int i = 0; mechs && i < n; i++)
            if (mechs[i]) {
                fputs(first ? "\n  " : ",\n  ", stdout);
                print_json(stdout, mechs[i]);
                first = 0;
            }
        fputs("],\n \"errors\": [", stdout);
        for (int i = 0; errors && i < n_errors; i++) {
            fputs(i ? ", " : "", stdout);
            cli_json_string(stdout, errors[i] ? errors[i] : "out of memory");
        }
        fputs("]}\n", stdout);
    } else {
        for (int i = 0; mechs && i < n; i++)
            if (mechs[i]) print_text(mechs[i]);
    }
    for (int i = 0; check && errors && i < n_errors; i++)
        fprintf(stderr, "%s\n", errors[i] ? errors[i] : "out of memory");
    for (int i = 0; i < n; i++) {
        if (mechs) hb_nmodl_destroy(mechs[i]);
        if (errors) free(errors[i]);
        free(files[i]);
    }
    free(mechs);
    free(errors);
    free(files);
    return failed ? 1 : 0;
}
