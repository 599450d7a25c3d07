/* hinesbatch run: a simulation described by a JSON model file (docs/model.md). */
#define _GNU_SOURCE /* sched_getaffinity (and POSIX 2008) */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"
#include "core/bench.h"
#include "net_traces.h"
#include "run_checkpoint.h"
#include "run_threads.h"
#include "sim/csv_write.h"
#include "sonata/circuit.h"
#include "sonata/sonata.h"

static const char usage_run[] =
    "usage: hinesbatch run MODEL.json [-o DIR] [--traces h5|csv|wide|none] [--sonata] [--quiet]\n"
    "                      [--trace] [--backend B] [--threads T] [--t-stop MS] [--dt MS]\n"
    "                      [--checkpoint-every T] [--restart PATH] [--tuning SPEC]\n"
    "\n"
    "Simulates the cells of a JSON model file (docs/model.md: geometry, regions,\n"
    "mechanisms pas and hh, synapses, IClamps, probes, dt, t_stop, v_init, celsius,\n"
    "method) with NEURON's fixed-step scheme, and writes as the run goes\n"
    "  DIR/traces.h5    v of every probe and sample as a SONATA report (HDF5, float32:\n"
    "                   /report/default/data [samples][probes], mapping/node_ids the gids);\n"
    "                   a build without HDF5 writes DIR/traces.csv instead, and says so\n"
    "  DIR/spikes.dat   '# gid t_ms', then 'gid time' lines ordered by time, then gid:\n"
    "                   each cell's spikes at its first probe with spike_threshold\n"
    "                   (gid first, unlike NEURON's out.dat)\n"
    "  DIR/spikes.csv   probe,t_ms: threshold crossings of every probe with\n"
    "                   spike_threshold, in time order\n"
    "  DIR/summary.json cells, probes, samples, spikes, the time reached, wall time and\n"
    "                   status (completed, interrupted or failed, with the message)\n"
    "A file with a \"network\" object is a network (docs/network.md): its cells, spike\n"
    "sources and connections run on all ranks of the MPI job (mpirun, srun) or alone\n"
    "(no launcher's environment: MPI is not started), and rank 0 writes\n"
    "  DIR/spikes.dat   '# gid t_ms', then 'gid time' lines ordered by time, then gid,\n"
    "                   written as the run goes\n"
    "  DIR/summary.json cells, spikes, wall time, memory per cell, and every rank's time\n"
    "                   per phase (build, init, update, detect, deliver, exchange)\n"
    "  DIR/trace.RANK.json with --trace: each rank's timeline per epoch (integrate,\n"
    "                   exchange wait, events, exchange start) as Chrome trace events\n"
    "                   (Perfetto, chrome://tracing)\n"
    "A SONATA config (\"networks\", or \"network\" naming a circuit config) runs as a\n"
    "network: its nodes.h5, edges.h5, node sets and spike trains (docs/sonata.md).\n"
    "with a progress line on a terminal (stderr),\n"
    "and prints a summary. Morphology paths are relative to the model file. The output\n"
    "directory is created and checked before the simulation starts.\n"
    "\n"
    "SIGINT (Ctrl-C) or SIGTERM stops a run at the next sample boundary (a network: at the\n"
    "end of the chunk of epochs under way, about 0.25 s of wall time, on every rank\n"
    "alike) with what was computed written out and the summary\n"
    "marked interrupted; the exit status is then 130 or 143. A NaN or infinite voltage\n"
    "stops a run with the cell, place and time, and exit status 1; a failed run's\n"
    "summary is marked failed, with the message, beside what was computed.\n";

/* The options, printed after usage_run and a blank line (one string is at most 4095 bytes). */
static const char usage_run_options[] =
    "  -o, --output DIR  output directory, created if missing (default: .)\n"
    "  --traces FORMAT   cells: h5 (DIR/traces.h5, the default in a build with HDF5), csv\n"
    "                    (DIR/traces.csv: gid,probe,t_ms,v_mv, a row per probe and sample, 6\n"
    "                    digits of v; the default without HDF5), wide (DIR/probes.csv: t_ms\n"
    "                    and one column per probe, 17 digits) or none; networks: their\n"
    "                    \"record\" section to h5 (DIR/traces.h5, one SONATA report of all\n"
    "                    ranks) or csv (DIR/traces.csv: gid,name,t_ms,value), or none\n"
    "  --sonata          also DIR/spikes.h5: spikes.dat's spikes in SONATA's HDF5 layout\n"
    "                    (builds with HDF5)\n"
    "  --quiet           no summary\n"
    "  --trace           networks: write each rank's timeline (at most 1,000,000 intervals)\n"
    "  --backend B       seq | omp | cuda | best: where the steps run, in place of the\n"
    "                    file's \"backend\" (networks too; a network's best: one thread,\n"
    "                    all threads or the GPU by a timed trial, the default of a\n"
    "                    network file naming none where a GPU exists)\n"
    "  --threads T       OpenMP threads of --backend omp, 0.." CLI_STR(HB_MAX_THREADS) " (default 0:\n"
    "                    OpenMP's default, OMP_NUM_THREADS)\n"
    "  --t-stop MS       end time [ms], in place of the file's \"t_stop\" (a busyring's\n"
    "                    \"duration\")\n"
    "  --dt MS           time step [ms], in place of the file's \"dt\" (a multiple of it\n"
    "                    must still be \"sample_dt\")\n"
    "  --checkpoint-every T\n"
    "                    every T ms of simulated time (rounded up to whole steps, and for a\n"
    "                    network to whole epochs), write the whole state to\n"
    "                    DIR/checkpoint.RANK.bin (atomically: a temporary file, fsync, rename;\n"
    "                    each replaces the last)\n"
    "  --restart PATH    continue from a checkpoint (a file, or a directory holding\n"
    "                    checkpoint.RANK.bin) of a run of the same model file on as many\n"
    "                    ranks: the outputs in DIR are cut back to the checkpoint and continued,\n"
    "                    the same bits as an uninterrupted run's. A truncated or corrupt\n"
    "                    checkpoint, or one of another model, is refused before anything runs\n"
    "                    (docs/checkpoint.md)\n"
    "  --tuning SPEC     measurement overrides of the engine's rules (docs/tuning.md), e.g.\n"
    "                    sim.mixed_copies=64; the results are the same bits\n";

/* The file's options that the command line replaces (--backend, --threads, --t-stop, --dt). */
static hb_sim_overrides_t overrides;

/* The signal that asked the run to stop (0: none). Set by the handler alone; read between
 * chunks of the run, so that a run stops at a boundary with its outputs whole. */
static volatile sig_atomic_t stop_signal = 0;

static void on_signal(int sig) { stop_signal = sig; }

/* SIGINT and SIGTERM set stop_signal while a run goes (installed = 1), or act as before. */
static void catch_signals(int installed)
{
    static struct sigaction old_int, old_term;
    static int caught = 0;
    if (installed == caught) return;
    caught = installed;
    if (installed) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART; /* a write in progress completes */
        stop_signal = 0;
        sigaction(SIGINT, &sa, &old_int);
        sigaction(SIGTERM, &sa, &old_term);
    } else {
        sigaction(SIGINT, &old_int, NULL);
        sigaction(SIGTERM, &old_term, NULL);
    }
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "a signal";
}

/* hb_set_progress's hook while a model is built: a signal stops the build; on a terminal
 * (rank 0, not --quiet) a progress line with the phase, how far, and the time so far. */
typedef struct {
    int show;
    double start, shown; /* [s] */
} build_progress_t;

static int build_progress(void *user, const char *what, long done, long total)
{
    build_progress_t *p = user;
    const double now = cli_now_seconds();
    if (p->show && now - p->start >= 0.5 && now - p->shown >= 0.2) { /* a long build only */
        p->shown = now;
        fprintf(stderr, "\r\033[K  building: %s %ld / %ld, %.1f s", what, done, total,
                now - p->start);
        fflush(stderr);
    }
    return stop_signal != 0;
}

/* The hook from here to build_done (the progress line erased then). */
static void build_watch(build_progress_t *p, int show)
{
    p->show = show;
    p->start = cli_now_seconds();
    p->shown = 0.0;
    hb_set_progress(build_progress, p);
}

static void build_done(build_progress_t *p)
{
    hb_set_progress(NULL, NULL);
    if (p->shown > 0.0) fputs("\r\033[K", stderr);
}

/* A run stopped by a signal while its model was built: DIR/summary.json says so (rank 0), the
 * exit status is 128 + the signal (SIGINT's on a rank that learnt of another's). */
static int build_interrupted(const char *out, const char *model, int rank)
{
    const int sig = stop_signal ? (int)stop_signal : SIGINT;
    if (rank != 0) return 128 + sig;
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", out);
    json_t *name = json_string(model);
    char *quoted = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "{\"model\": %s, \"t_ms\": 0, \"status\": \"interrupted\", \"signal\": "
                "\"%s\", \"phase\": \"build\"}\n", quoted ? quoted : "null", signal_name(sig));
        if (fclose(f) != 0) f = NULL;
    }
    free(quoted);
    json_decref(name);
    fprintf(stderr, "hinesbatch run: %s: stopped by %s while the model was built; nothing was "
            "computed%s\n", model, signal_name(sig), f ? "" : " (summary.json not written)");
    return 128 + sig;
}

/* This host's ranks of the MPI job (Open MPI's or MPICH's launcher says; 1 without one). */
static int host_ranks(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS"};
    for (int k = 0; k < 2; k++) {
        const char *v = getenv(names[k]);
        const long n = v ? strtol(v, NULL, 10) : 0;
        if (n >= 1 && n <= 1 << 20) return (int)n;
    }
    return 1;
}

static int is_rank0(void)
{
    const char *v = getenv("OMPI_COMM_WORLD_RANK");
    if (!v) v = getenv("PMI_RANK");
    return !v || strcmp(v, "0") == 0;
}

/*
 * OpenMP threads against this host's cores (tools/run_threads.h): threads that outnumber them
 * wait passively. OpenMP reads OMP_WAIT_POLICY when it is loaded, before main, so the program
 * runs itself again (execv of /proc/self/exe, before any MPI or OpenMP call) with it set, and
 * says so on stderr (rank 0). A user's OMP_WAIT_POLICY is kept.
 */
static void plan_threads(int quiet)
{
    const long online = sysconf(_SC_NPROCESSORS_ONLN);
    const int cores = online > 0 && online < 1 << 20 ? (int)online : 1;
    cpu_set_t set;
    const int usable = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : cores;
    int asked = overrides.set & HB_SIM_SET_THREADS ? overrides.options.threads : 0;
    const char *omp = getenv("OMP_NUM_THREADS");
    if (asked == 0 && omp) asked = (int)strtol(omp, NULL, 10); /* its first level's count */
    const char *policy = getenv("OMP_WAIT_POLICY");
    const int ranks = host_ranks();
    const run_threads_t plan = run_threads_plan(cores, ranks, usable, asked, policy != NULL);
    if (plan.passive && cli_argv && setenv("OMP_WAIT_POLICY", "passive", 1) == 0) {
        fflush(NULL);
        execv("/proc/self/exe", cli_argv); /* returns only on failure: on, spinning */
        unsetenv("OMP_WAIT_POLICY");
        policy = NULL;
    }
    if (plan.over && is_rank0() && !quiet)
        fprintf(stderr, "hinesbatch run: %d OpenMP threads (%d rank(s) x %d) on this host's %d "
                "cores: %s\n", plan.total, ranks, plan.total / ranks, cores,
                policy ? (strcmp(policy, "passive") == 0
                              ? "they wait passively (OMP_WAIT_POLICY=passive)"
                              : "OMP_WAIT_POLICY is set, and kept: waiting actively, they may "
                                "run many times slower; fewer ranks or threads (--threads) "
                                "would not share cores")
                       : "they share the cores, waiting actively (running again with "
                         "OMP_WAIT_POLICY=passive failed)");
}

/* mkdir -p */
static int make_dirs(const char *dir)
{
    char path[4096];
    if (snprintf(path, sizeof path, "%s", dir) >= (int)sizeof path) return -1;
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        if (mkdir(path, 0777) != 0 && errno != EEXIST) return -1;
        *p = '/';
    }
    return mkdir(path, 0777) != 0 && errno != EEXIST ? -1 : 0;
}

/* The output directory exists and takes files: checked before a run, not after it. */
static int check_output(const char *dir)
{
    if (make_dirs(dir) != 0)
        return cli_fail("run", "%s: cannot create the output directory: %s", dir, strerror(errno));
    char probe[4200];
    snprintf(probe, sizeof probe, "%s/.hinesbatch-write-test", dir);
    FILE *f = fopen(probe, "w");
    if (!f) return cli_fail("run", "%s: cannot write in the output directory: %s", dir, strerror(errno));
    fclose(f);
    remove(probe);
    return 0;
}

char cli_sonata_population[256] = "default";

/* The model file, read once (a pipe or a FIFO can be read only once, and a file could change
 * between reads): the library parses its text, the CLI reads its own things from root. */
typedef struct {
    const char *path;   /* as given: names it in messages */
    char *text;         /* its bytes, NUL-terminated */
    size_t length;      /* [bytes] */
    json_t *root;       /* the text parsed */
    char dir[4096];     /* its folder: relative paths start there */
} model_file_t;

/* The rank an MPI launcher (mpirun, srun) put in this process's environment; NULL: none. */
static const char *launcher_rank_text(void)
{
    static const char *const names[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"};
    for (int k = 0; k < 3; k++) {
        const char *v = getenv(names[k]);
        if (v && *v) return v;
    }
    return NULL;
}

/* This process's rank in an MPI launch before MPI is started, 0 otherwise: only rank 0 reports
 * a model file that cannot be read or parsed, the same on every rank (a file that only some
 * ranks cannot read is reported by rank 0 alone too, when it is one of them). */
static int launcher_rank(void)
{
    const char *v = launcher_rank_text();
    return v ? atoi(v) : 0;
}

/* 1: an MPI launcher started this process. A network run alone does not start MPI: Open MPI's
 * singleton start spawns its runtime, which was seen failing beside other MPI jobs on a loaded
 * machine, and one rank needs none of it. */
static int launched(void)
{
    return launcher_rank_text() != NULL;
}

/* A model file's failure before MPI is started: rank 0 reports it; the others, which have
 * the same file, wait a moment first, as the launcher ends the job when one rank exits. */
static int model_fail(void)
{
    if (launcher_rank() == 0) return 0;
    sleep(1);
    return 1;
}

static int model_read(const char *path, model_file_t *m)
{
    memset(m, 0, sizeof *m);
    m->path = path;
    snprintf(m->dir, sizeof m->dir, "%s", path);
    char *slash = strrchr(m->dir, '/');
    if (slash) *slash = '\0';
    else snprintf(m->dir, sizeof m->dir, ".");
    const hb_status_t status = hb_model_file_read(path, &m->text, &m->length);
    if (status != HB_SUCCESS) return model_fail() ? 1 : cli_fail_status("run", status);
    json_error_t err;
    m->root = json_loadb(m->text, m->length, JSON_REJECT_DUPLICATES, &err);
    if (!m->root)
        return model_fail() ? 1 : cli_fail("run", "%s:%d:%d: %s (%s)", path, err.line, err.column,
                                           err.text, hb_status_string(HB_ERR_PARSE));
    return 0;
}

/* A SONATA config (docs/sonata.md) in place of a network file: its circuit translated into a
 * network document, which becomes the model's text and root (paths in it absolute). */
static int circuit_read(model_file_t *m)
{
    json_t *doc = NULL;
    if (cli_circuit_load(m->path, m->root, &doc, cli_sonata_population,
                         sizeof cli_sonata_population) != 0)
        return 1;
    char *text = json_dumps(doc, JSON_COMPACT | JSON_REAL_PRECISION(17));
    if (!text) {
        json_decref(doc);
        return cli_fail("run", "%s: out of memory for the circuit's network", m->path);
    }
    json_decref(m->root);
    hb_model_text_free(m->text);
    m->root = doc;
    m->text = text; /* malloc'd, as hb_model_text_free frees */
    m->length = strlen(text);
    return 0;
}

static void model_free(model_file_t *m)
{
    json_decref(m->root);
    hb_model_text_free(m->text);
}

/* The library's message of a failure of the model's, named by its file when the message does
 * not name it already (a connection's check, a state that became NaN, a backend). */
static int model_fail_status(const char *model, const char *message, hb_status_t status)
{
    if (!message[0]) message = "failed";
    if (strncmp(message, model, strlen(model)) == 0)
        return cli_fail("run", "%s (%s)", message, hb_status_string(status));
    return cli_fail("run", "%s: %s (%s)", model, message, hb_status_string(status));
}

/* A file with a top-level "network" object is a network file. */
static int is_network(const model_file_t *m)
{
    return json_is_object(m->root) && json_object_get(m->root, "network") != NULL;
}

/* A network that failed to load, on every rank (a file's error is the same on all of them, a
 * failure while building is agreed by the library): the lowest rank with a message of its own
 * prints it, the others none. */
static int report_load_failure(const char *model, hb_comm_t *comm, hb_status_t status)
{
    char message[1024];
    snprintf(message, sizeof message, "%s", hb_last_error()[0] ? hb_last_error() : "failed");
    const int size = hb_comm_size(comm), rank = hb_comm_rank(comm);
    const int own = strstr(message, "another rank failed") == NULL;
    int first = own ? size - rank : 0;
    if (hb_comm_max(comm, own ? size - rank : 0, &first) != HB_SUCCESS) first = size - rank;
    if (own && first == size - rank) model_fail_status(model, message, status);
    fflush(stderr);
    int done;
    hb_comm_max(comm, 0, &done); /* printed before any rank exits (the launcher ends the job) */
    return 1;
}

/* Every rank's phases into DIR/summary.json (rank 0 writes, collective); error: the run failed
 * with this message (NULL: it did not); signal: what stopped it before t_stop (0: it
 * completed). */
static int write_summary(const char *path, const char *model, hb_net_t *net, hb_comm_t *comm,
                         double wall_s, double output_s, const hb_sim_options_t *opt, int signal,
                         const char *error)
{
    const int size = hb_comm_size(comm);
    hb_net_stats_t *all = malloc((size_t)size * sizeof *all);
    if (!all) return cli_fail("run", "out of memory");
    hb_status_t status = hb_net_stats_all(net, all);
    int rc = 0;
    if (status != HB_SUCCESS) rc = cli_fail_status("run", status);
    FILE *f = rc == 0 && hb_comm_rank(comm) == 0 ? fopen(path, "w") : NULL;
    if (rc == 0 && hb_comm_rank(comm) == 0 && !f)
        rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    if (f) {
        size_t cells = 0, device = 0;
        long rss = 0;
        for (int r = 0; r < size; r++) {
            cells += all[r].local_cells;
            rss += all[r].max_rss_kb;
            device += all[r].device_bytes;
        }
        char min_delay[32] = "null"; /* no connection: none (JSON has no infinity) */
        if (isfinite(hb_net_min_delay(net))) snprintf(min_delay, sizeof min_delay, "%g", hb_net_min_delay(net));
        json_t *name = json_string(model), *why = error ? json_string(error) : NULL;
        char *quoted = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
        char *message = why ? json_dumps(why, JSON_ENCODE_ANY) : NULL;
        fprintf(f, "{\"model\": %s, \"ranks\": %d, \"cells\": %zu, \"spikes\": %zu, "
                "\"t_stop_ms\": %g, \"dt_ms\": %g, \"min_delay_ms\": %s, \"epoch_steps\": %d, "
                "\"wall_s\": %.6f, \"output_s\": %.6f, \"memory_kib_per_cell\": %.3f,\n "
                "\"device_kib_per_cell\": %.3f, \"t_ms\": %.10g, "
                "\"status\": \"%s\"%s%s%s%s%s,\n", quoted ? quoted : "null", size,
                cells, all[0].spikes, opt->t_stop_ms, opt->dt_ms, min_delay,
                hb_net_epoch_steps(net), wall_s, output_s,
                cells ? (double)rss / (double)cells : 0.0,
                cells ? (double)device / 1024.0 / (double)cells : 0.0, hb_net_time(net),
                error ? "failed" : signal ? "interrupted" : "completed",
                signal && !error ? ", \"signal\": \"" : "",
                signal && !error ? signal_name(signal) : "", signal && !error ? "\"" : "",
                error ? ", \"error\": " : "", error ? (message ? message : "\"?\"") : "");
        free(quoted);
        free(message);
        json_decref(name);
        hb_backend_t backend = HB_BACKEND_SEQ;
        const char *reason = "";
        hb_net_backend(net, &backend, &reason);
        json_t *choice = json_string(reason);
        char *choice_quoted = choice ? json_dumps(choice, JSON_ENCODE_ANY) : NULL;
        fprintf(f, " \"backend\": \"%s\",", hb_backend_name(backend));
        if (reason[0]) /* "best": what it chose and why */
            fprintf(f, " \"backend_choice\": {\"backend\": \"%s\", \"reason\": %s},",
                    hb_backend_name(backend), choice_quoted ? choice_quoted : "null");
        fprintf(f, "\n \"per_rank\": [");
        free(choice_quoted);
        json_decref(choice);
        json_decref(why);
        for (int r = 0; r < size; r++) {
            const hb_net_stats_t *a = &all[r];
            fprintf(f, "%s\n  {\"rank\": %d, \"cells\": %u, \"connections\": %zu, "
                    "\"build_s\": %.6f, \"init_s\": %.6f, \"update_s\": %.6f, \"detect_s\": %.6f, "
                    "\"deliver_s\": %.6f, \"exchange_s\": %.6f, \"exchange_wait_s\": %.6f, "
                    "\"max_rss_kib\": %ld, \"device_kib\": %.1f}",
                    r ? "," : "", r, a->local_cells, a->local_connections, a->build_s, a->init_s,
                    a->update_s, a->detect_s, a->deliver_s, a->exchange_s, a->exchange_wait_s,
                    a->max_rss_kb, (double)a->device_bytes / 1024.0);
        }
        fprintf(f, "\n]}\n");
        if (fclose(f) != 0) rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    }
    free(all);
    return rc;
}

/* This rank's timeline as Chrome trace events: DIR/trace.RANK.json. */
static int write_trace(const char *out, hb_net_t *net, int rank)
{
    const hb_trace_event_t *ev;
    size_t n;
    hb_net_trace(net, &ev, &n);
    char path[4200];
    snprintf(path, sizeof path, "%s/trace.%d.json", out, rank);
    FILE *f = fopen(path, "w");
    if (!f) return cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    fprintf(f, "{\"traceEvents\": [");
    for (size_t k = 0; k < n; k++)
        fprintf(f, "%s\n{\"name\": \"%s\", \"ph\": \"X\", \"ts\": %.3f, \"dur\": %.3f, \"pid\": %d, "
                "\"tid\": 0, \"args\": {\"step\": %ld}}", k ? "," : "", ev[k].name, ev[k].begin_s * 1e6,
                (ev[k].end_s - ev[k].begin_s) * 1e6, rank, ev[k].step);
    fprintf(f, "\n], \"displayTimeUnit\": \"ms\"}\n");
    return fclose(f) == 0 ? 0 : cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
}

/* spikes.dat's first line: its column order, which is not NEURON's out.dat (t gid) but the
 * gid first (docs/model.md says why); np.loadtxt, awk '!/^#/' and `plot` skip it. */
static const char spikes_dat_header[] = "# gid t_ms\n";

/* All of text[0, n) to fd; 0, or -1 with errno. */
static int write_all(int fd, const char *text, size_t n)
{
    while (n > 0) {
        const ssize_t w = write(fd, text, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) {
            if (w == 0) errno = ENOSPC;
            return -1;
        }
        text += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The spikes after the first *written of the run appended to spikes.dat (written through its
 * descriptor alone, 64 KiB at a time), after its header line where *headed is 0 (then 1): a
 * run cut short keeps what it computed. The network
 * holds the run's last n of its stats' count (all of them, or the last advance's:
 * hb_net_set_keep_spikes). A write that fails (a full disk) is cut back to where the chunk
 * began, so the file ends with a whole line; error: the message. */
static int write_spikes(FILE *f, const char *path, hb_net_t *net, size_t *written, int *headed,
                        int flush, char *error, size_t error_size)
{
    const hb_spike_t *spikes;
    size_t n;
    hb_net_spikes(net, &spikes, &n);
    /* mid-run, the last half step's spikes wait for the next chunk (a net_event's spike of it
     * may come before them: hb_net_spikes); flush: the run is over, failed or stopped */
    const double t_final = hb_net_time(net) - 0.5 * hb_net_dt(net);
    size_t upto = n;
    while (!flush && upto > 0 && spikes[upto - 1].time_ms > t_final) upto--;
    hb_net_stats_t stats;
    if (hb_net_stats(net, &stats) != HB_SUCCESS || stats.spikes < n || *written < stats.spikes - n) {
        snprintf(error, error_size, "%s: spikes of the run lost before they were written", path);
        return cli_fail("run", "%s", error);
    }
    const int fd = fileno(f);
    const off_t whole = lseek(fd, 0, SEEK_CUR); /* the file so far: whole lines */
    char text[65536];
    size_t used = 0;
    int failed = 0;
    if (!*headed) { /* a new file (or a pipe): its header first, written as the spikes are */
        memcpy(text, spikes_dat_header, sizeof spikes_dat_header - 1);
        used = sizeof spikes_dat_header - 1;
    }
    for (size_t k = *written - (stats.spikes - n); k < upto && !failed; k++) {
        used += (size_t)snprintf(text + used, sizeof text - used, "%u %.10g\n", spikes[k].gid,
                                 spikes[k].time_ms);
        if (sizeof text - used < 64) { /* room for a line is left: 30 bytes */
            failed = write_all(fd, text, used) != 0;
            used = 0;
        }
    }
    if (!failed && used > 0) failed = write_all(fd, text, used) != 0;
    if (!failed) *headed = 1;
    if (failed) {
        const int why = errno;
        if (whole >= 0 && ftruncate(fd, whole) == 0) lseek(fd, whole, SEEK_SET);
        snprintf(error, error_size, "%s: cannot write: %s (it keeps the %zu spikes written before)",
                 path, strerror(why), *written);
        return cli_fail("run", "%s", error);
    }
    const size_t first = *written - (stats.spikes - n); /* the first not yet written */
    *written = stats.spikes - n + (upto > first ? upto : first);
    return 0;
}

/* A rank's own failure (rc != 0) made every rank's, before the next collective: no rank is
 * left waiting in one. */
enum { FAILED = 1 << 16 }; /* above any signal number */

static int agree_failure(hb_comm_t *comm, int rc)
{
    int any = 0;
    if (hb_comm_max(comm, rc ? FAILED : 0, &any) != HB_SUCCESS) return cli_fail_status("run", HB_ERR_BACKEND);
    if (any && !rc) rc = cli_fail("run", "another rank failed (its message is on that rank)");
    return rc;
}

/* A network run's chunks take about this much wall time [s]: a signal is seen within it. */
#define CHUNK_WALL_S 0.25

/* Steps of the network so far, and the step of time t [ms]. */
static long net_step(const hb_net_t *net) { return lround(hb_net_time(net) / hb_net_dt(net)); }
static long net_step_of(const hb_net_t *net, double t_ms)
{
    return (long)ceil(t_ms / hb_net_dt(net) - 1e-9);
}

/* Where the next chunk ends [ms]: `chunk` on, or the next checkpoint (whole epochs). */
static double net_chunk_end(const run_ckpt_t *ckpt, const hb_net_t *net, double chunk)
{
    if (ckpt->every_steps <= 0) return hb_net_time(net) + chunk;
    const long step = net_step(net), n = lround(chunk / hb_net_dt(net));
    return (double)(step + run_ckpt_limit(ckpt, step, n)) * hb_net_dt(net);
}

/* --restart: the checkpoint loaded (collective; written on any rank count), then rank 0's spikes.dat rewritten
 * with the spikes up to it. */
static int net_restart(const run_ckpt_t *ckpt, hb_net_t *net, hb_comm_t *comm, FILE **out,
                       const char *out_path, size_t *written, int *headed, char *error,
                       size_t error_size)
{
    run_ckpt_files_t set;
    int rc = run_ckpt_open_ranks(ckpt, &set);
    if ((rc = agree_failure(comm, rc)) != 0) {
        run_ckpt_files_close(&set);
        return rc;
    }
    hb_status_t status = hb_net_load_ranks(net, set.n, set.files, (const char *const *)set.names);
    run_ckpt_files_close(&set);
    if (status != HB_SUCCESS) return cli_fail_status("run", status); /* every rank fails */
    if (ckpt->rank == 0 && !(*out = fopen(out_path, "w")))
        rc = cli_fail("run", "%s: cannot write: %s", out_path, strerror(errno));
    if (rc == 0 && *out)
        rc = write_spikes(*out, out_path, net, written, headed, 0, error, error_size);
    return agree_failure(comm, rc);
}

/* DIR/spikes.h5 of a network: every spike (each rank holds them all; rank 0 writes). */
static int write_network_sonata(const char *out, hb_net_t *net)
{
    const hb_spike_t *spikes;
    size_t n;
    hb_net_spikes(net, &spikes, &n);
    uint64_t *gid = malloc((n + 1) * sizeof *gid);
    double *t = malloc((n + 1) * sizeof *t);
    int rc = gid && t ? 0 : cli_fail("run", "out of memory for %zu spikes", n);
    for (size_t k = 0; rc == 0 && k < n; k++) {
        gid[k] = spikes[k].gid;
        t[k] = spikes[k].time_ms;
    }
    char path[4200];
    snprintf(path, sizeof path, "%s/spikes.h5", out);
    if (rc == 0) rc = cli_sonata_write_spikes(path, cli_sonata_population, n, gid, t);
    free(gid);
    free(t);
    return rc;
}

/* How a run writes its traces (a cell run's values are the checkpoint's record of it). */
typedef enum { TRACES_CSV, TRACES_WIDE, TRACES_NONE, TRACES_H5 } traces_t;

static int run_network(const model_file_t *m, const char *out, int quiet, int tracing,
                       run_ckpt_t *ckpt, int sonata, int traces)
{
    const char *model = m->path;
    net_traces_t *recorded = NULL; /* the file's "record" section: traces.h5 or traces.csv */
    hb_comm_t *comm = NULL;
    hb_status_t status = hb_comm_create(launched() ? HB_COMM_BEST : HB_COMM_SERIAL, &comm);
    if (status != HB_SUCCESS) return cli_fail_status("run", status);
    const int rank = hb_comm_rank(comm);
    hb_net_t *net = NULL;
    FILE *f = NULL;
    char path[4200], summary[4200];
    snprintf(path, sizeof path, "%s/spikes.dat", out);
    snprintf(summary, sizeof summary, "%s/summary.json", out);
    int rc = check_output(out); /* on every rank: all fail alike, none left in a collective */
    if (rc == 0 && rank == 0) cli_warn_morphologies("run", model, m->root);
    if (rc == 0) catch_signals(1); /* the build is interruptible too */
    build_progress_t building;
    build_watch(&building, rank == 0 && !quiet && isatty(STDERR_FILENO));
    if (rc == 0)
        status = hb_net_parse_json_with(m->text, m->length, model, m->dir, &overrides, comm, &net);
    build_done(&building);
    /* every rank fails alike: the library's build agrees on an interruption */
    if (rc == 0 && status == HB_ERR_INTERRUPTED) {
        catch_signals(0);
        hb_comm_destroy(comm);
        return build_interrupted(out, model, rank);
    }
    if (rc == 0 && status != HB_SUCCESS) rc = report_load_failure(model, comm, status);
    const char *reason = "";
    if (rc == 0 && rank == 0 && hb_net_backend(net, NULL, &reason) == HB_SUCCESS && reason[0])
        fprintf(stderr, "hinesbatch run: backend best: %s\n", reason);
    /* a restart's spikes.dat is rewritten only once its checkpoint is accepted */
    if (rc == 0 && rank == 0 && !ckpt->restart && !(f = fopen(path, "w")))
        rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    if (rc == 0) {
        ckpt->rank = rank;
        ckpt->ranks = hb_comm_size(comm);
        rc = run_ckpt_prepare(ckpt, hb_net_dt(net), hb_net_epoch_steps(net));
    }
    if (net) rc = agree_failure(comm, rc); /* (a failed load is agreed by the library) */
    hb_sim_options_t opt;
    memset(&opt, 0, sizeof opt);
    if (rc == 0 && tracing) {
        if (hb_net_set_trace(net, 1000000) == 0) rc = cli_fail("run", "out of memory for the trace");
        rc = agree_failure(comm, rc);
    }
    /* the spikes of a chunk are written and let go, so memory stays bounded for any t_stop,
     * unless spikes.h5 or a checkpoint (which holds every spike so far) needs them all */
    if (rc == 0) hb_net_set_keep_spikes(net, sonata || ckpt->every_ms > 0.0);
    size_t written = 0;
    int headed = 0; /* spikes.dat's header line written */
    char error[1024] = ""; /* why the run failed, for summary.json */
    const int ran = rc == 0; /* from here on a failure is the run's, written in summary.json */
    if (rc == 0 && ckpt->restart)
        rc = net_restart(ckpt, net, comm, &f, path, &written, &headed, error, sizeof error);
    else if (rc == 0 && (status = hb_net_init(net)) != HB_SUCCESS) {
        snprintf(error, sizeof error, "%s", hb_last_error());
        rc = model_fail_status(model, error, status);
    }
    if (rc == 0 && traces != TRACES_NONE) {
        rc = net_traces_open(net, out, traces == TRACES_H5, ckpt->restart != NULL, rank, &recorded);
        rc = agree_failure(comm, rc);
        if (rc == 0 && !ckpt->restart) rc = net_traces_write(recorded, net); /* t = 0 */
        if (rc && !error[0]) snprintf(error, sizeof error, "the recorded traces could not be written");
    }
    const double start = cli_now_seconds();
    const int progress = rank == 0 && !quiet && isatty(STDERR_FILENO);
    double t_stop = net ? hb_net_stop_time(net) : 0.0;
    if (rc == 0) {
        opt.t_stop_ms = t_stop;
        opt.dt_ms = hb_net_dt(net);
    }
    /* In chunks of whole epochs: spikes on disk as the run goes, and a signal seen at the
     * chunk's end. Ranks see signals at different times: they agree (the largest signal number
     * of any rank) after every chunk, so all stop at the same one. A chunk is sized to take
     * about CHUNK_WALL_S of wall time on the slowest rank (the ranks agree on it too), from one
     * epoch up to about 1 % of t_stop: a signal is honoured within about that, however long
     * the run. Not an epoch each: hb_net_advance finishes the exchange in flight before it
     * returns, and the agreement is a collective, so epoch-sized chunks would undo the
     * overlap. The chunks change no spike. */
    const double epoch = hb_net_epoch_steps(net) * opt.dt_ms;
    const double most_epochs = fmax(1.0, floor(0.01 * t_stop / epoch));
    double epochs = 1.0; /* in the next chunk */
    int stopped = 0, agreed = rc != 0; /* agreed: every rank failed alike, or none ran */
    double shown = 0.0, output_s = 0.0; /* output_s: spikes.dat written as the run goes */
    while (rc == 0 && hb_net_time(net) < t_stop - 0.5 * opt.dt_ms) {
        const double chunk_start = cli_now_seconds();
        if ((status = hb_net_advance(net, net_chunk_end(ckpt, net, epochs * epoch))) != HB_SUCCESS) {
            snprintf(error, sizeof error, "%s", hb_last_error());
            rc = model_fail_status(model, error, status); /* on every rank (the library agrees) */
            agreed = 1;
            (void)net_traces_write(recorded, net); /* what was recorded up to the failure */
            char ignored[256];
            if (f) (void)write_spikes(f, path, net, &written, &headed, 1, ignored, sizeof ignored);
            break;
        }
        const double t_out = cli_now_seconds();
        if (f)
            rc = write_spikes(f, path, net, &written, &headed,
                              hb_net_time(net) >= t_stop - 0.5 * opt.dt_ms, error, sizeof error);
        if (recorded && net_traces_write(recorded, net) != 0) { /* every rank takes part */
            rc = 1;
            if (!error[0]) snprintf(error, sizeof error, "the recorded traces could not be written");
        }
        output_s += cli_now_seconds() - t_out;
        if (rc == 0 && run_ckpt_due(ckpt, net_step(net), net_step_of(net, t_stop)))
            rc = run_ckpt_save(ckpt, NULL, NULL, net);
        if (rc && !error[0]) snprintf(error, sizeof error, "a checkpoint could not be written");
        /* the signal, and the chunk's wall time on the slowest rank [ms] */
        const long took = lround(fmin(1e4, (cli_now_seconds() - chunk_start) * 1e3));
        int agreed_value = 0;
        if ((status = hb_comm_max(comm, (rc ? FAILED : (int)stop_signal), &stopped)) != HB_SUCCESS ||
            (status = hb_comm_max(comm, (int)took, &agreed_value)) != HB_SUCCESS) {
            snprintf(error, sizeof error, "%s", hb_last_error());
            rc = cli_fail_status("run", status);
            agreed = 1;
            break;
        }
        if (stopped >= FAILED && rc == 0) {
            snprintf(error, sizeof error, "another rank failed (its message is on that rank)");
            rc = cli_fail("run", "%s", error);
        }
        if (rc == 0 && stopped && hb_net_time(net) < t_stop - 0.5 * opt.dt_ms) {
            if (f) rc = write_spikes(f, path, net, &written, &headed, 1, error, sizeof error);
            break;
        }
        stopped = 0;
        /* the next chunk: about CHUNK_WALL_S, at most twice this one */
        const double scaled = floor(epochs * CHUNK_WALL_S * 1e3 / fmax(1.0, (double)agreed_value));
        epochs = fmax(1.0, fmin(fmin(most_epochs, 2.0 * epochs), scaled));
        const double wall = cli_now_seconds() - start, t = hb_net_time(net);
        if (progress && wall - shown >= 0.2) { /* a few lines a second */
            shown = wall;
            fprintf(stderr, "\r  t = %.1f / %.1f ms, %.1f s, %.1f ms/s, ETA %.0f s   ", t, t_stop,
                    wall, wall > 0 ? t / wall : 0.0, t > 0 ? wall * (t_stop - t) / t : 0.0);
        }
    }
    if (progress) fputc('\n', stderr);
    const double seconds = cli_now_seconds() - start;
    if (f && fclose(f) != 0 && rc == 0) rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    const char *traces_path = net_traces_path(recorded);
    char traces_note[4300] = "";
    if (traces_path) snprintf(traces_note, sizeof traces_note, ", %s", traces_path);
    if (net_traces_close(recorded) != 0 && rc == 0) rc = 1;
    if (!agreed) rc = agree_failure(comm, rc);
    if (rc != 0 && ran) { /* every rank here: the failure is agreed; what was computed stays */
        if (!error[0]) snprintf(error, sizeof error, "another rank failed (its message is on that rank)");
        if (write_summary(summary, model, net, comm, seconds, output_s, &opt, 0, error) == 0 &&
            rank == 0)
            fprintf(stderr, "hinesbatch run: %s: failed at t = %g ms of %g ms; %s and %s keep what "
                    "was computed\n", model, hb_net_time(net), t_stop, path, summary);
    }
    if (rc == 0) rc = write_summary(summary, model, net, comm, seconds, output_s, &opt, stopped, NULL);
    if (rc == 0 && sonata && rank == 0) rc = write_network_sonata(out, net);
    if (rc == 0 && tracing) rc = write_trace(out, net, rank);
    catch_signals(0);
    if (rc == 0 && stopped) {
        if (rank == 0)
            fprintf(stderr, "hinesbatch run: %s: stopped by %s at t = %g ms of %g ms; wrote what "
                    "was computed\n", model, signal_name(stopped), hb_net_time(net), t_stop);
        rc = 128 + stopped;
    } else if (rc == 0 && rank == 0 && !quiet)
        printf("%s: network, %d rank%s, min delay %g ms (epochs of %d steps): %zu spikes in "
               "%.3f s\nwrote %s%s%s%s%s and %s\n", model, hb_comm_size(comm),
               hb_comm_size(comm) == 1 ? "" : "s", hb_net_min_delay(net), hb_net_epoch_steps(net),
               written, seconds, path, sonata ? ", " : "", sonata ? out : "",
               sonata ? "/spikes.h5" : "", traces_note, summary);
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return rc;
}

static const char *const traces_names[] = {"csv", "wide", "none", "h5"};

/* A cell run's outputs, written as it goes. */
typedef struct {
    traces_t format;
    FILE *traces, *spikes, *spikes_dat;
    cli_report_t *report; /* traces.h5 */
    float *frames;        /* a chunk's samples for traces.h5, [rows][probes] */
    size_t frames_cap;
    uint32_t *element;    /* per probe: its index among its cell's probes (traces.h5) */
    char traces_path[4200], spikes_path[4200], dat_path[4200];
    long samples;
    long *spike_count; /* per probe */
    double *first;     /* per probe: the first spike [ms] */
    const double **trace; /* per probe: its samples of the chunk */
    int *gid;          /* per probe: its cell's index */
    const char **short_name; /* per probe: its name without "c<cell>." */
    unsigned char *source; /* per probe: its cell's spike source (spikes.dat) */
    hb_spike_at_t *order; /* a chunk's spikes, to sort */
    size_t order_cap;
    int sonata;         /* keep spikes.dat's spikes for spikes.h5 */
    uint64_t *h5_gid;   /* spikes.dat's spikes so far */
    double *h5_time;    /* [ms] */
    size_t h5_count, h5_cap;
    const json_t *model_root; /* the model file, parsed */
} stream_t;

/* One of spikes.dat's spikes kept for spikes.h5; 0 on success. */
static int keep_spike(stream_t *o, int gid, double t)
{
    if (o->h5_count == o->h5_cap) {
        const size_t cap = o->h5_cap ? 2 * o->h5_cap : 1024;
        uint64_t *g = realloc(o->h5_gid, cap * sizeof *g);
        if (g) o->h5_gid = g;
        double *x = g ? realloc(o->h5_time, cap * sizeof *x) : NULL;
        if (!x) return cli_fail("run", "out of memory for %zu spikes", cap);
        o->h5_time = x;
        o->h5_cap = cap;
    }
    o->h5_gid[o->h5_count] = (uint64_t)gid;
    o->h5_time[o->h5_count++] = t;
    return 0;
}

/* Each cell's spike source: its first probe with "spike_threshold" (the probe a network's
 * cell detects its spikes at). The simulation lists probes cell by cell in file order, copies
 * included, each cell's in its file order; the file has been loaded, so it is well formed. */
static int mark_sources(stream_t *o, const char *model, int n_probes)
{
    const json_t *cells = json_object_get(o->model_root, "cells");
    int p = 0;
    for (size_t c = 0; c < json_array_size(cells); c++) {
        const json_t *cell = json_array_get(cells, c), *count = json_object_get(cell, "count");
        const json_t *probes = json_object_get(cell, "probes");
        const json_int_t copies = json_is_integer(count) ? json_integer_value(count) : 1;
        for (json_int_t k = 0; k < copies; k++) {
            int found = 0;
            for (size_t q = 0; q < json_array_size(probes) && p < n_probes; q++, p++)
                if (!found && json_object_get(json_array_get(probes, q), "spike_threshold"))
                    found = o->source[p] = 1;
        }
    }
    return p == n_probes ? 0 : cli_fail("run", "%s: probes do not match the model's", model);
}

static FILE *open_output(char *path, size_t size, const char *dir, const char *file)
{
    snprintf(path, size, "%s/%s", dir, file);
    FILE *f = fopen(path, "w");
    if (!f) cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    return f;
}

/* The paths, per-probe tables and spike sources of a cell run's outputs. */
static int stream_setup(stream_t *o, const char *dir, const char *model, hb_sim_t *sim)
{
    const int n = hb_sim_probe_count(sim), several = hb_sim_cell_count(sim) > 1;
    snprintf(o->traces_path, sizeof o->traces_path, "%s/%s", dir,
             o->format == TRACES_WIDE ? "probes.csv" : o->format == TRACES_H5 ? "traces.h5"
                                                                               : "traces.csv");
    snprintf(o->spikes_path, sizeof o->spikes_path, "%s/spikes.csv", dir);
    snprintf(o->dat_path, sizeof o->dat_path, "%s/spikes.dat", dir);
    o->spike_count = calloc((size_t)n + 1, sizeof *o->spike_count);
    o->first = calloc((size_t)n + 1, sizeof *o->first);
    o->trace = calloc((size_t)n + 1, sizeof *o->trace);
    o->gid = calloc((size_t)n + 1, sizeof *o->gid);
    o->short_name = calloc((size_t)n + 1, sizeof *o->short_name);
    o->source = calloc((size_t)n + 1, 1);
    o->element = calloc((size_t)n + 1, sizeof *o->element);
    if (!o->spike_count || !o->first || !o->trace || !o->gid || !o->short_name || !o->source ||
        !o->element)
        return cli_fail("run", "out of memory");
    for (int p = 0; p < n; p++) { /* "c<cell>.<probe>" with several cells */
        const char *name = hb_sim_probe_name(sim, p), *dot = strchr(name, '.');
        o->gid[p] = several ? atoi(name + 1) : 0;
        o->short_name[p] = several && dot ? dot + 1 : name;
        o->element[p] = p > 0 && o->gid[p] == o->gid[p - 1] ? o->element[p - 1] + 1 : 0;
    }
    return mark_sources(o, model, n);
}

/* traces.h5 created: a SONATA report of every probe (element ids: the probe's index among
 * its cell's probes; probes are cell by cell, so the gids increase), one frame per sample. */
static int open_report(stream_t *o, hb_sim_t *sim)
{
    const int n = hb_sim_probe_count(sim);
    hb_sim_options_t opt;
    hb_sim_options(sim, &opt);
    const long every = opt.sample_dt_ms > 0.0 ? lround(opt.sample_dt_ms / opt.dt_ms) : 1;
    uint64_t *gid = malloc(((size_t)n + 1) * sizeof *gid);
    if (!gid) return cli_fail("run", "out of memory");
    for (int p = 0; p < n; p++) gid[p] = (uint64_t)o->gid[p];
    const int rc = cli_report_create(o->traces_path, "default", (size_t)n, gid, o->element,
                                     o->short_name, 0.0, (double)every * opt.dt_ms, &o->report);
    free(gid);
    return rc;
}

/* The outputs of a run from t = 0: new files with their headers. */
static int stream_open(stream_t *o, const char *dir, const char *model, hb_sim_t *sim)
{
    const int n = hb_sim_probe_count(sim);
    if (stream_setup(o, dir, model, sim) != 0) return 1;
    if (o->format == TRACES_H5 && open_report(o, sim) != 0) return 1;
    if (o->format == TRACES_CSV) {
        if (!(o->traces = open_output(o->traces_path, sizeof o->traces_path, dir, "traces.csv")))
            return 1;
        fputs("gid,probe,t_ms,v_mv\n", o->traces);
    } else if (o->format == TRACES_WIDE) {
        if (!(o->traces = open_output(o->traces_path, sizeof o->traces_path, dir, "probes.csv")))
            return 1;
        fputs("t_ms", o->traces);
        for (int p = 0; p < n; p++) {
            fputc(',', o->traces);
            hb_csv_put_field(o->traces, hb_sim_probe_name(sim, p));
        }
        fputc('\n', o->traces);
    }
    if (!(o->spikes = open_output(o->spikes_path, sizeof o->spikes_path, dir, "spikes.csv")) ||
        !(o->spikes_dat = open_output(o->dat_path, sizeof o->dat_path, dir, "spikes.dat")))
        return 1;
    fputs("probe,t_ms\n", o->spikes);
    fputs(spikes_dat_header, o->spikes_dat);
    return 0;
}

static int flush_output(FILE *f, const char *path)
{
    if (!f) return 0;
    return fflush(f) != 0 || ferror(f) ? cli_fail("run", "%s: cannot write: %s", path, strerror(errno)) : 0;
}

/* A chunk's samples: traces.h5's frames (float32), long rows (6 significant digits of v:
 * 0.1 uV at -65 mV, a third of the bytes of 17) or wide ones (the simulation's doubles
 * exactly). 0, or 1 after the message. */
static int write_samples(stream_t *o, int n, const double *t, int rows)
{
    if (o->format == TRACES_H5) {
        const size_t need = (size_t)rows * (size_t)n;
        if (need > o->frames_cap) {
            float *grown = realloc(o->frames, need * sizeof *grown);
            if (!grown) return cli_fail("run", "out of memory for %zu samples", need);
            o->frames = grown;
            o->frames_cap = need;
        }
        for (int r = 0; r < rows; r++)
            for (int p = 0; p < n; p++)
                o->frames[(size_t)r * (size_t)n + (size_t)p] = (float)o->trace[p][r];
        return cli_report_append(o->report, (size_t)rows, o->frames);
    }
    for (int r = 0; r < rows; r++) {
        if (o->format == TRACES_CSV) {
            for (int p = 0; p < n; p++) {
                fprintf(o->traces, "%d,", o->gid[p]);
                hb_csv_put_field(o->traces, o->short_name[p]);
                fprintf(o->traces, ",%.10g,%.6g\n", t[r], o->trace[p][r]);
            }
        } else if (o->format == TRACES_WIDE) {
            fprintf(o->traces, "%.10g", t[r]);
            for (int p = 0; p < n; p++) fprintf(o->traces, ",%.17g", o->trace[p][r]);
            fputc('\n', o->traces);
        }
    }
    return 0;
}

/* What the simulation recorded since the last call, appended (the chunk's spikes in time
 * order, probes in order at equal times: chunks follow each other in time, so the files are
 * in time order too), flushed, and forgotten by the simulation. */
static int stream_write(stream_t *o, hb_sim_t *sim)
{
    const int n = hb_sim_probe_count(sim);
    const double *t;
    int rows, count;
    hb_sim_sample_times(sim, &t, &rows);
    for (int p = 0; p < n; p++) hb_sim_probe_trace(sim, p, &o->trace[p], &count);
    if (write_samples(o, n, t, rows) != 0) return 1;
    o->samples += rows;
    size_t total = 0;
    for (int p = 0; p < n; p++) {
        hb_sim_spikes(sim, p, &t, &count);
        total += (size_t)count;
    }
    if (total > o->order_cap) {
        hb_spike_at_t *grown = realloc(o->order, total * sizeof *grown);
        if (!grown) return cli_fail("run", "out of memory for %zu spikes", total);
        o->order = grown;
        o->order_cap = total;
    }
    total = 0;
    for (int p = 0; p < n; p++) {
        hb_sim_spikes(sim, p, &t, &count);
        if (count && !o->spike_count[p]) o->first[p] = t[0];
        o->spike_count[p] += count;
        for (int k = 0; k < count; k++) o->order[total++] = (hb_spike_at_t){t[k], p};
    }
    /* Probes are cell by cell, so probe order at equal times is gid order. */
    if (total) qsort(o->order, total, sizeof *o->order, hb_spike_at_compare);
    for (size_t k = 0; k < total; k++) {
        const int p = o->order[k].probe;
        hb_csv_put_field(o->spikes, hb_sim_probe_name(sim, p));
        fprintf(o->spikes, ",%.12g\n", o->order[k].t);
        if (!o->source[p]) continue;
        fprintf(o->spikes_dat, "%d %.10g\n", o->gid[p], o->order[k].t);
        if (o->sonata && keep_spike(o, o->gid[p], o->order[k].t) != 0) return 1;
    }
    hb_sim_clear_records(sim);
    if (flush_output(o->traces, o->traces_path) || flush_output(o->spikes, o->spikes_path) ||
        flush_output(o->spikes_dat, o->dat_path))
        return 1;
    return 0;
}

static int close_output(FILE **f, const char *path)
{
    const int failed = *f && fclose(*f) != 0;
    *f = NULL;
    return failed ? cli_fail("run", "%s: cannot write: %s", path, strerror(errno)) : 0;
}

/* The files closed (the counts kept for the summary). */
static int stream_close(stream_t *o)
{
    int rc = close_output(&o->traces, o->traces_path);
    rc |= cli_report_close(o->report);
    o->report = NULL;
    rc |= close_output(&o->spikes, o->spikes_path);
    rc |= close_output(&o->spikes_dat, o->dat_path);
    return rc;
}

static void stream_free(stream_t *o)
{
    stream_close(o);
    free(o->spike_count);
    free(o->first);
    free((void *)o->trace);
    free(o->gid);
    free((void *)o->short_name);
    free(o->source);
    free(o->order);
    free(o->h5_gid);
    free(o->h5_time);
    free(o->frames);
    free(o->element);
    memset(o, 0, sizeof *o);
}

/* The spikes of a cell run on stdout: a line per probe that spiked, or, past a screenful of
 * them, one line of totals (spikes.csv has them per probe). */
enum { PROBE_LINES_MAX = 10 };

static void print_probe_spikes(hb_sim_t *sim, const stream_t *o, const char *out)
{
    const int n = hb_sim_probe_count(sim);
    int spiked = 0, first = -1;
    long spikes = 0;
    for (int p = 0; p < n; p++) {
        if (!o->spike_count[p]) continue;
        spiked++;
        spikes += o->spike_count[p];
        if (first < 0 || o->first[p] < o->first[first]) first = p;
    }
    if (spiked > PROBE_LINES_MAX) {
        printf("  %ld spikes at %d of %d probes, the first at %.4f ms (%s); per probe in "
               "%s/spikes.csv\n", spikes, spiked, n, o->first[first], hb_sim_probe_name(sim, first), out);
        return;
    }
    for (int p = 0; p < n; p++)
        if (o->spike_count[p])
            printf("  %s: %ld spike%s, first at %.4f ms\n", hb_sim_probe_name(sim, p),
                   o->spike_count[p], o->spike_count[p] == 1 ? "" : "s", o->first[p]);
}

/* DIR/summary.json of a cell run: what it computed, and how it ended. */
static int write_cell_summary(const char *dir, const char *model, hb_sim_t *sim,
                              const stream_t *o, double wall_s, const char *status,
                              const char *error)
{
    hb_sim_options_t opt;
    hb_sim_options(sim, &opt);
    long spikes = 0;
    for (int p = 0; p < hb_sim_probe_count(sim); p++) spikes += o->spike_count[p];
    json_t *root = json_pack("{s:s, s:i, s:i, s:f, s:f, s:f, s:I, s:I, s:f, s:s}", "model", model,
                             "cells", hb_sim_cell_count(sim), "probes", hb_sim_probe_count(sim),
                             "t_stop_ms", opt.t_stop_ms, "dt_ms", opt.dt_ms, "t_ms",
                             hb_sim_time(sim), "samples", (json_int_t)o->samples, "spikes",
                             (json_int_t)spikes, "wall_s", wall_s, "status", status);
    if (root && stop_signal) json_object_set_new(root, "signal", json_string(signal_name(stop_signal)));
    if (root && error) json_object_set_new(root, "error", json_string(error));
    char path[4200];
    snprintf(path, sizeof path, "%s/summary.json", dir);
    const int failed = !root || json_dump_file(root, path, JSON_INDENT(1) | JSON_REAL_PRECISION(15)) != 0;
    json_decref(root);
    return failed ? cli_fail("run", "%s: cannot write", path) : 0;
}

/* Steps per chunk of a cell run: whole samples, at least HB_SIM_CHECK_STEPS steps (a signal
 * is seen at the chunk's end: the next sample boundary when samples are that far apart). */
static long chunk_steps(const hb_sim_options_t *opt)
{
    const long every = opt->sample_dt_ms > 0.0 ? lround(opt->sample_dt_ms / opt->dt_ms) : 1;
    return every >= HB_SIM_CHECK_STEPS ? every : (HB_SIM_CHECK_STEPS + every - 1) / every * every;
}

/* A cell run's checkpoint after `step` when one is due: where its outputs stand (just
 * flushed), then the simulation. */
static int cell_checkpoint(const run_ckpt_t *ckpt, long step, long total, stream_t *o,
                           const hb_sim_t *sim)
{
    if (!run_ckpt_due(ckpt, step, total)) return 0;
    run_ckpt_cells_t at = {o->samples, hb_sim_probe_count(sim), o->spike_count, o->first,
                           o->traces ? ftell(o->traces) : 0, ftell(o->spikes),
                           ftell(o->spikes_dat), (int)o->format};
    if (at.probes_bytes < 0 || at.spikes_bytes < 0 || at.dat_bytes < 0)
        return cli_fail("run", "%s: cannot tell the position: %s", o->spikes_path, strerror(errno));
    return run_ckpt_save(ckpt, &at, sim, NULL);
}

/* The lines in the first `bytes` bytes of a file (-1: it cannot be read, or is shorter). */
static long lines_in(const char *path, long bytes)
{
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    long lines = 0, left = bytes;
    char buf[65536];
    while (left > 0) {
        const size_t got = fread(buf, 1, left < (long)sizeof buf ? (size_t)left : sizeof buf, f);
        if (got == 0) break;
        for (size_t i = 0; i < got; i++) lines += buf[i] == '\n';
        left -= (long)got;
    }
    fclose(f);
    return left > 0 ? -1 : lines;
}

/* FILE opened for appending after its first `bytes` bytes (what follows is cut off); ckpt, the
 * checkpoint that says so, named where it asks for more than is there. */
static FILE *reopen_at(const char *path, long bytes, const char *ckpt)
{
    FILE *f = fopen(path, "r+");
    if (!f) {
        cli_fail("run", "%s: cannot open to continue it: %s (a restart continues the outputs of "
                 "the checkpointed run in the same directory)", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || st.st_size < bytes) {
        cli_fail("run", "%s: %lld bytes; the checkpoint's run had written %ld (%s): expected "
                 "the outputs of the checkpointed run", path, (long long)st.st_size, bytes, ckpt);
        fclose(f);
        return NULL;
    }
    if (ftruncate(fileno(f), (off_t)bytes) != 0 || fseek(f, bytes, SEEK_SET) != 0) {
        cli_fail("run", "%s: cannot cut back to %ld bytes: %s", path, bytes, strerror(errno));
        fclose(f);
        return NULL;
    }
    return f;
}

/* --restart of a cell run: the simulation's state loaded (checked before any output is
 * touched), then its outputs cut back to where they stood at the checkpoint. */
static int cell_restart(const run_ckpt_t *ckpt, hb_sim_t *sim, stream_t *o, const char *dir,
                        const char *model)
{
    char path[4300];
    FILE *f = NULL;
    run_ckpt_cells_t at;
    memset(&at, 0, sizeof at);
    int rc = run_ckpt_open(ckpt, 0, &f, path, sizeof path, &at);
    const int n = hb_sim_probe_count(sim);
    if (rc == 0 && at.n_probes != n)
        rc = cli_fail("run", "%s: a run of %d probes; this one has %d", path, at.n_probes, n);
    if (rc == 0 && at.traces_format != (int)o->format)
        rc = cli_fail("run", "%s: a run with --traces %s; this one has --traces %s", path,
                      at.traces_format >= 0 && at.traces_format <= TRACES_H5
                          ? traces_names[at.traces_format] : "?", traces_names[o->format]);
    if (rc == 0) {
        const hb_status_t status = hb_sim_load(sim, f, path);
        if (status != HB_SUCCESS) rc = cli_fail_status("run", status);
    }
    if (f) fclose(f);
    if (rc == 0) rc = stream_setup(o, dir, model, sim);
    if (rc == 0) { /* the record's spike counts are those of spikes.csv (its header, a line each) */
        long total = 0;
        for (int p = 0; p < n; p++) total += at.spike_count[p];
        const long lines = lines_in(o->spikes_path, at.spikes_bytes);
        if (lines >= 0 && lines != total + (at.spikes_bytes > 0))
            rc = cli_fail("run", "%s: %ld spikes in its record, %ld in the first %ld bytes of %s: "
                          "expected the same (a checkpoint of the run that wrote them)", path,
                          total, lines - (at.spikes_bytes > 0), at.spikes_bytes, o->spikes_path);
    }
    if (rc == 0 && o->format == TRACES_H5)
        rc = cli_report_reopen(o->traces_path, "default", (size_t)n, at.samples, &o->report);
    if (rc == 0 && (((o->format == TRACES_CSV || o->format == TRACES_WIDE) &&
                     !(o->traces = reopen_at(o->traces_path, at.probes_bytes, path))) ||
                    !(o->spikes = reopen_at(o->spikes_path, at.spikes_bytes, path)) ||
                    !(o->spikes_dat = reopen_at(o->dat_path, at.dat_bytes, path))))
        rc = 1;
    if (rc == 0 && o->sonata) { /* spikes.h5 gets the spikes before the checkpoint too */
        FILE *r = fopen(o->dat_path, "r");
        char line[128];
        int gid;
        double t;
        while (r && rc == 0 && fgets(line, sizeof line, r))
            if (line[0] != '#' && sscanf(line, "%d %lf", &gid, &t) == 2) rc = keep_spike(o, gid, t);
        if (r) fclose(r);
    }
    if (rc == 0) {
        o->samples = at.samples;
        memcpy(o->spike_count, at.spike_count, (size_t)n * sizeof *o->spike_count);
        memcpy(o->first, at.first, (size_t)n * sizeof *o->first);
    }
    run_ckpt_cells_free(&at);
    return rc;
}

/* notice: the traces' format is the default one (a build without HDF5 says why not h5). */
static int run_cells(const model_file_t *m, const char *out, int quiet, run_ckpt_t *ckpt,
                     traces_t traces, int notice, int sonata)
{
    const char *model = m->path;
    if (check_output(out) != 0) return 1;
    if (notice && traces == TRACES_CSV && !quiet)
        fprintf(stderr, "hinesbatch run: traces in %s/traces.csv: this build has no HDF5 for "
                "traces.h5 (Debian: libhdf5-dev, then configure again)\n", out);
    hb_sim_t *sim = NULL;
    cli_warn_morphologies("run", model, m->root);
    catch_signals(1); /* the build is interruptible too */
    build_progress_t building;
    build_watch(&building, !quiet && isatty(STDERR_FILENO));
    hb_status_t status =
        hb_sim_parse_json_with(m->text, m->length, model, m->dir, &overrides, &sim);
    build_done(&building);
    if (status == HB_ERR_INTERRUPTED) {
        catch_signals(0);
        return build_interrupted(out, model, 0);
    }
    if (status != HB_SUCCESS) {
        catch_signals(0);
        return model_fail_status(model, hb_last_error(), status);
    }
    hb_sim_options_t opt;
    hb_sim_options(sim, &opt);
    stream_t o;
    memset(&o, 0, sizeof o);
    o.format = traces;
    o.sonata = sonata;
    o.model_root = m->root;
    ckpt->ranks = 1;
    int rc = run_ckpt_prepare(ckpt, opt.dt_ms, 0);
    if (rc == 0) rc = ckpt->restart ? cell_restart(ckpt, sim, &o, out, model)
                                : stream_open(&o, out, model, sim);
    catch_signals(1);
    const double start = cli_now_seconds();
    char error[1024] = "";
    if (rc == 0 && !ckpt->restart && (status = hb_sim_init(sim)) != HB_SUCCESS)
        rc = model_fail_status(model, hb_last_error(), status);
    if (rc == 0 && !ckpt->restart) rc = stream_write(&o, sim);
    const long total = hb_sim_steps(sim), chunk = chunk_steps(&opt);
    for (long done = lround(hb_sim_time(sim) / opt.dt_ms); rc == 0 && done < total && !stop_signal;) {
        const long n = run_ckpt_limit(ckpt, done, total - done < chunk ? total - done : chunk);
        status = hb_sim_advance(sim, n);
        if (status != HB_SUCCESS) snprintf(error, sizeof error, "%s", hb_last_error());
        rc = stream_write(&o, sim); /* what was computed, up to a failure too */
        if (status != HB_SUCCESS) rc = model_fail_status(model, error, status);
        done += n;
        if (rc == 0) rc = cell_checkpoint(ckpt, done, total, &o, sim);
    }
    const double seconds = cli_now_seconds() - start;
    const int interrupted = rc == 0 && stop_signal != 0 &&
                            hb_sim_time(sim) < opt.t_stop_ms - 0.5 * opt.dt_ms;
    if (stream_close(&o) != 0 && rc == 0) rc = 1;
    if (sonata && (rc == 0 || error[0])) { /* what was computed, as the text files */
        char path[4200];
        snprintf(path, sizeof path, "%s/spikes.h5", out);
        if (cli_sonata_write_spikes(path, "default", o.h5_count, o.h5_gid, o.h5_time) != 0) rc = 1;
    }
    const char *how = error[0] ? "failed" : interrupted ? "interrupted" : rc ? "" : "completed";
    if (how[0] && write_cell_summary(out, model, sim, &o, seconds, how, error[0] ? error : NULL) != 0)
        rc = 1;
    if (interrupted) {
        fprintf(stderr, "hinesbatch run: %s: stopped by %s at t = %g ms of %g ms; wrote what was "
                "computed\n", model, signal_name(stop_signal), hb_sim_time(sim), opt.t_stop_ms);
        rc = 128 + stop_signal;
    } else if (rc == 0 && !quiet) {
        printf("%s: %d cell%s, %d probe%s, t = 0..%g ms, dt %g ms (%s), %ld samples, %.3f s\n", model,
               hb_sim_cell_count(sim), hb_sim_cell_count(sim) == 1 ? "" : "s",
               hb_sim_probe_count(sim), hb_sim_probe_count(sim) == 1 ? "" : "s", hb_sim_time(sim),
               opt.dt_ms, opt.method == HB_METHOD_CN ? "Crank-Nicolson" : "backward Euler", o.samples,
               seconds);
        print_probe_spikes(sim, &o, out);
        printf("wrote %s%s%s/spikes.dat, %s/spikes.csv%s%s%s and %s/summary.json\n",
               o.format == TRACES_NONE ? "" : o.traces_path, o.format == TRACES_NONE ? "" : ", ",
               out, out, sonata ? ", " : "", sonata ? out : "", sonata ? "/spikes.h5" : "", out);
    }
    catch_signals(0);
    stream_free(&o);
    hb_sim_destroy(sim);
    return rc;
}

static int parse_tuning(const char *command, const char *value, void *unused)
{
    (void)unused;
    if (hb_set_default_tuning(value) == HB_SUCCESS) return 1;
    cli_fail(command, "--tuning: %s", hb_last_error());
    return 0;
}

static int parse_every(const char *command, const char *value, void *every_ms)
{
    if (cli_parse_double(value, 0.0, every_ms)) return 1;
    cli_fail(command, "--checkpoint-every '%s': expected a positive time [ms]", value);
    return 0;
}

int cli_command_run(int argc, char **argv)
{
    const char *model = NULL, *out = ".", *traces = NULL;
    int quiet = 0, tracing = 0, sonata = 0;
    run_ckpt_t ckpt;
    memset(&ckpt, 0, sizeof ckpt);
    const cli_option_t options[] = {
        CLI_FLAG("--trace", &tracing, 1),
        CLI_CUSTOM("--checkpoint-every", parse_every, &ckpt.every_ms),
        CLI_STRING("--restart", &ckpt.restart),
        CLI_STRING("-o", &out),
        CLI_STRING("--output", &out),
        CLI_FLAG("--quiet", &quiet, 1),
        CLI_FLAG("--sonata", &sonata, 1),
        CLI_STRING("--traces", &traces),
        CLI_CUSTOM("--backend", cli_parse_backend_override, &overrides),
        CLI_CUSTOM("--threads", cli_parse_threads_override, &overrides),
        CLI_CUSTOM("--t-stop", cli_parse_t_stop_override, &overrides),
        CLI_CUSTOM("--dt", cli_parse_dt_override, &overrides),
        CLI_CUSTOM("--tuning", parse_tuning, NULL),
        {.kind = CLI_OPT_POSITIONAL, .dest = CLI_DEST_(const char *, &model),
         .item = "model file", .help = usage_run_options},
    };
    const int parsed = cli_parse_options("run", usage_run, options,
                                         sizeof options / sizeof *options, argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
    ckpt.out = out;
    ckpt.model = model;
    if (cli_output_name_fits("run", out) != 0) return 1;
    const int defaulted = traces == NULL;
    if (defaulted) traces = cli_sonata_available() ? "h5" : "csv";
    int format = -1;
    for (int k = 0; k <= TRACES_H5; k++)
        if (!strcmp(traces, traces_names[k])) format = k;
    if (format < 0) {
        fprintf(stderr, "hinesbatch run: --traces %s: expected h5, csv, wide or none\n", traces);
        return 2;
    }
    if (format == TRACES_H5 && !cli_sonata_available())
        return cli_fail("run", "--traces h5: this build has no HDF5 (Debian: libhdf5-dev, then "
                        "configure again)");
    if (sonata && !cli_sonata_available())
        return cli_fail("run", "--sonata: this build has no HDF5 (Debian: libhdf5-dev, then "
                        "configure again)");
    plan_threads(quiet); /* before the model is read: it may run the command again */
    model_file_t m;
    if (model_read(model, &m) != 0) {
        model_free(&m);
        return 1;
    }
    if (cli_circuit_is_config(m.root) && circuit_read(&m) != 0) {
        model_free(&m);
        return 1;
    }
    ckpt.text = m.text;
    ckpt.length = m.length;
    int rc;
    if (is_network(&m)) {
        if (format == TRACES_WIDE) { /* columns of every rank's cells: the long format only */
            fprintf(stderr, "hinesbatch run: %s: --traces wide: a network writes its \"record\" "
                    "section as h5 or csv; expected --traces h5, csv or none\n", model);
            model_free(&m);
            return 2;
        }
        rc = run_network(&m, out, quiet, tracing, &ckpt, sonata, format);
    } else {
        rc = run_cells(&m, out, quiet, &ckpt, (traces_t)format, defaulted, sonata);
    }
    model_free(&m);
    return rc;
}
