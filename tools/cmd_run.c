/* hinesbatch run: a simulation described by a JSON model file (docs/model.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char usage_run[] =
    "usage: hinesbatch run MODEL.json [-o DIR] [--quiet] [--trace] [--backend B]\n"
    "                      [--threads T] [--t-stop MS] [--dt MS]\n"
    "\n"
    "Simulates the cells of a JSON model file (docs/model.md: geometry, regions,\n"
    "mechanisms pas and hh, synapses, IClamps, probes, dt, t_stop, v_init, celsius,\n"
    "method) with NEURON's fixed-step scheme, and writes as the run goes\n"
    "  DIR/probes.csv   t_ms and one column of voltages [mV] per probe\n"
    "  DIR/spikes.csv   probe,t_ms: threshold crossings of probes with spike_threshold,\n"
    "                   in time order\n"
    "  DIR/summary.json cells, probes, samples, spikes, the time reached, wall time and\n"
    "                   status (completed, interrupted or failed, with the message)\n"
    "A file with a \"network\" object is a network (docs/network.md): its cells, spike\n"
    "sources and connections run on all ranks of the MPI job (mpirun) or alone, and\n"
    "rank 0 writes\n"
    "  DIR/spikes.dat   'gid time' lines ordered by time, then gid (NEURON's out.dat),\n"
    "                   written as the run goes\n"
    "  DIR/summary.json cells, spikes, wall time, memory per cell, and every rank's time\n"
    "                   per phase (build, init, update, detect, deliver, exchange)\n"
    "  DIR/trace.RANK.json with --trace: each rank's timeline per epoch (integrate,\n"
    "                   exchange wait, events, exchange start) as Chrome trace events\n"
    "                   (Perfetto, chrome://tracing)\n"
    "with a progress line on a terminal (stderr),\n"
    "and prints a summary. Morphology paths are relative to the model file. The output\n"
    "directory is created and checked before the simulation starts.\n"
    "\n"
    "SIGINT (Ctrl-C) or SIGTERM stops a run at the next sample boundary (a network: at the\n"
    "end of the chunk of epochs under way, about 1 percent of t_stop, on every rank\n"
    "alike) with what was computed written out and the summary\n"
    "marked interrupted; the exit status is then 130 or 143. A NaN or infinite voltage\n"
    "stops a run with the cell, place and time, and exit status 1.\n"
    "\n"
    "  -o, --output DIR  output directory, created if missing (default: .)\n"
    "  --quiet           no summary\n"
    "  --trace           networks: write each rank's timeline (at most 1,000,000 intervals)\n"
    "  --backend B       seq | omp | cuda | best: where the steps run, in place of the\n"
    "                    file's \"backend\" (networks: seq or omp)\n"
    "  --threads T       OpenMP threads of --backend omp, 0.." CLI_STR(HB_MAX_THREADS) " (default 0:\n"
    "                    OpenMP's default, OMP_NUM_THREADS)\n"
    "  --t-stop MS       end time [ms], in place of the file's \"t_stop\" (a busyring's\n"
    "                    \"duration\")\n"
    "  --dt MS           time step [ms], in place of the file's \"dt\" (a multiple of it\n"
    "                    must still be \"sample_dt\")\n";

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

/* A file with a top-level "network" object is a network file. */
static int is_network(const char *path)
{
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    const int yes = root && json_is_object(root) && json_object_get(root, "network") != NULL;
    json_decref(root);
    return yes;
}

/* Every rank's phases into DIR/summary.json (rank 0 writes); signal: what stopped the run
 * before t_stop (0: it completed). */
static int write_summary(const char *path, const char *model, hb_net_t *net, hb_comm_t *comm,
                         double wall_s, const hb_sim_options_t *opt, int signal)
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
        size_t cells = 0;
        long rss = 0;
        for (int r = 0; r < size; r++) {
            cells += all[r].local_cells;
            rss += all[r].max_rss_kb;
        }
        json_t *name = json_string(model);
        char *quoted = name ? json_dumps(name, JSON_ENCODE_ANY) : NULL;
        fprintf(f, "{\"model\": %s, \"ranks\": %d, \"cells\": %zu, \"spikes\": %zu, "
                "\"t_stop_ms\": %g, \"dt_ms\": %g, \"min_delay_ms\": %g, \"epoch_steps\": %d, "
                "\"wall_s\": %.6f, \"memory_kib_per_cell\": %.3f,\n \"t_ms\": %.10g, "
                "\"status\": \"%s\"%s%s%s,\n \"per_rank\": [", quoted ? quoted : "null", size,
                cells, all[0].spikes, opt->t_stop_ms, opt->dt_ms, hb_net_min_delay(net),
                hb_net_epoch_steps(net), wall_s, cells ? (double)rss / (double)cells : 0.0,
                hb_net_time(net), signal ? "interrupted" : "completed",
                signal ? ", \"signal\": \"" : "", signal ? signal_name(signal) : "",
                signal ? "\"" : "");
        free(quoted);
        json_decref(name);
        for (int r = 0; r < size; r++) {
            const hb_net_stats_t *a = &all[r];
            fprintf(f, "%s\n  {\"rank\": %d, \"cells\": %u, \"connections\": %zu, "
                    "\"build_s\": %.6f, \"init_s\": %.6f, \"update_s\": %.6f, \"detect_s\": %.6f, "
                    "\"deliver_s\": %.6f, \"exchange_s\": %.6f, \"max_rss_kib\": %ld}",
                    r ? "," : "", r, a->local_cells, a->local_connections, a->build_s, a->init_s,
                    a->update_s, a->detect_s, a->deliver_s, a->exchange_s, a->max_rss_kb);
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

/* Spikes [*written, n) appended: a run cut short keeps what it computed. */
static int write_spikes(FILE *f, const char *path, hb_net_t *net, size_t *written)
{
    const hb_spike_t *spikes;
    size_t n;
    hb_net_spikes(net, &spikes, &n);
    for (; *written < n; ++*written)
        fprintf(f, "%u %.10g\n", spikes[*written].gid, spikes[*written].time_ms);
    if (fflush(f) != 0) return cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
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

static int run_network(const char *model, const char *out, int quiet, int tracing)
{
    hb_comm_t *comm = NULL;
    hb_status_t status = hb_comm_create(HB_COMM_BEST, &comm);
    if (status != HB_SUCCESS) return cli_fail_status("run", status);
    const int rank = hb_comm_rank(comm);
    hb_net_t *net = NULL;
    FILE *f = NULL;
    char path[4200], summary[4200];
    snprintf(path, sizeof path, "%s/spikes.dat", out);
    snprintf(summary, sizeof summary, "%s/summary.json", out);
    int rc = check_output(out); /* on every rank: all fail alike, none left in a collective */
    if (rc == 0 && rank == 0) cli_warn_morphologies("run", model);
    if (rc == 0) status = hb_net_load_json_with(model, &overrides, comm, &net);
    if (rc == 0 && status != HB_SUCCESS) rc = cli_fail_status("run", status);
    if (rc == 0 && rank == 0 && !(f = fopen(path, "w")))
        rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    if (net) rc = agree_failure(comm, rc); /* (a failed load is agreed by the library) */
    hb_sim_options_t opt;
    memset(&opt, 0, sizeof opt);
    if (rc == 0 && tracing) {
        if (hb_net_set_trace(net, 1000000) == 0) rc = cli_fail("run", "out of memory for the trace");
        rc = agree_failure(comm, rc);
    }
    if (rc == 0 && (status = hb_net_init(net)) != HB_SUCCESS) rc = cli_fail_status("run", status);
    const double start = cli_now_seconds();
    const int progress = rank == 0 && !quiet && isatty(STDERR_FILENO);
    size_t written = 0;
    double t_stop = 0.0;
    if (rc == 0) {
        t_stop = hb_net_stop_time(net);
        opt.t_stop_ms = t_stop;
        opt.dt_ms = hb_net_dt(net);
    }
    /* In chunks of whole epochs, about 1 % of t_stop each: spikes on disk as the run goes, and
     * a signal seen at the chunk's end. Ranks see signals at different times: they agree (the
     * largest signal number of any rank) after every chunk, so all stop at the same one. Not
     * after every epoch: hb_net_advance finishes the exchange in flight before it returns, and
     * the agreement is a collective, so epoch-sized chunks would undo the overlap. */
    const double epoch = hb_net_epoch_steps(net) * opt.dt_ms;
    const double chunk = epoch * fmax(1.0, floor(0.01 * t_stop / epoch));
    int stopped = 0, agreed = rc != 0; /* agreed: every rank failed alike, or none ran */
    double shown = 0.0;
    if (rc == 0) catch_signals(1);
    while (rc == 0 && hb_net_time(net) < t_stop - 0.5 * opt.dt_ms) {
        if ((status = hb_net_advance(net, hb_net_time(net) + chunk)) != HB_SUCCESS) {
            rc = cli_fail_status("run", status); /* on every rank (the library agrees) */
            agreed = 1;
            break;
        }
        if (f) rc = write_spikes(f, path, net, &written);
        if ((status = hb_comm_max(comm, rc ? FAILED : (int)stop_signal, &stopped)) != HB_SUCCESS) {
            rc = cli_fail_status("run", status);
            agreed = 1;
            break;
        }
        if (stopped >= FAILED && rc == 0)
            rc = cli_fail("run", "another rank failed (its message is on that rank)");
        if (rc == 0 && stopped && hb_net_time(net) < t_stop - 0.5 * opt.dt_ms) break;
        stopped = 0;
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
    if (!agreed) rc = agree_failure(comm, rc);
    if (rc == 0) rc = write_summary(summary, model, net, comm, seconds, &opt, stopped);
    if (rc == 0 && tracing) rc = write_trace(out, net, rank);
    catch_signals(0);
    if (rc == 0 && stopped) {
        if (rank == 0)
            fprintf(stderr, "hinesbatch run: %s: stopped by %s at t = %g ms of %g ms; wrote what "
                    "was computed\n", model, signal_name(stopped), hb_net_time(net), t_stop);
        rc = 128 + stopped;
    } else if (rc == 0 && rank == 0 && !quiet)
        printf("%s: network, %d rank%s, min delay %g ms (epochs of %d steps): %zu spikes in "
               "%.3f s\nwrote %s and %s\n", model, hb_comm_size(comm),
               hb_comm_size(comm) == 1 ? "" : "s", hb_net_min_delay(net), hb_net_epoch_steps(net),
               written, seconds, path, summary);
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return rc;
}

/* A CSV field (RFC 4180, as hb_sim_write_csv): quoted when it holds a comma, quote or line
 * break. */
static void put_field(FILE *f, const char *text)
{
    if (!strpbrk(text, ",\"\r\n")) {
        fputs(text, f);
        return;
    }
    fputc('"', f);
    for (; *text; text++) {
        if (*text == '"') fputc('"', f);
        fputc(*text, f);
    }
    fputc('"', f);
}

typedef struct {
    double t;
    int probe;
} spike_at_t;

static int compare_spike(const void *a, const void *b)
{
    const spike_at_t *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->probe > y->probe) - (x->probe < y->probe);
}

/* A cell run's outputs, written as it goes. */
typedef struct {
    FILE *probes, *spikes;
    char probes_path[4200], spikes_path[4200];
    long samples;
    long *spike_count; /* per probe */
    double *first;     /* per probe: the first spike [ms] */
    const double **trace; /* per probe: its samples of the chunk */
    spike_at_t *order; /* a chunk's spikes, to sort */
    size_t order_cap;
} stream_t;

static int stream_open(stream_t *o, const char *dir, hb_sim_t *sim)
{
    const int n = hb_sim_probe_count(sim);
    snprintf(o->probes_path, sizeof o->probes_path, "%s/probes.csv", dir);
    snprintf(o->spikes_path, sizeof o->spikes_path, "%s/spikes.csv", dir);
    o->spike_count = calloc((size_t)n + 1, sizeof *o->spike_count);
    o->first = calloc((size_t)n + 1, sizeof *o->first);
    o->trace = calloc((size_t)n + 1, sizeof *o->trace);
    if (!o->spike_count || !o->first || !o->trace) return cli_fail("run", "out of memory");
    if (!(o->probes = fopen(o->probes_path, "w")))
        return cli_fail("run", "%s: cannot write: %s", o->probes_path, strerror(errno));
    if (!(o->spikes = fopen(o->spikes_path, "w")))
        return cli_fail("run", "%s: cannot write: %s", o->spikes_path, strerror(errno));
    fputs("t_ms", o->probes);
    for (int p = 0; p < n; p++) {
        fputc(',', o->probes);
        put_field(o->probes, hb_sim_probe_name(sim, p));
    }
    fputc('\n', o->probes);
    fputs("probe,t_ms\n", o->spikes);
    return 0;
}

/* What the simulation recorded since the last call, appended (the chunk's spikes in time
 * order, probes in order at equal times), flushed, and forgotten by the simulation. */
static int stream_write(stream_t *o, hb_sim_t *sim)
{
    const int n = hb_sim_probe_count(sim);
    const double *t;
    int rows, count;
    hb_sim_sample_times(sim, &t, &rows);
    for (int p = 0; p < n; p++) hb_sim_probe_trace(sim, p, &o->trace[p], &count);
    for (int r = 0; r < rows; r++) {
        fprintf(o->probes, "%.10g", t[r]);
        for (int p = 0; p < n; p++) fprintf(o->probes, ",%.17g", o->trace[p][r]);
        fputc('\n', o->probes);
    }
    o->samples += rows;
    size_t total = 0;
    for (int p = 0; p < n; p++) {
        hb_sim_spikes(sim, p, &t, &count);
        total += (size_t)count;
    }
    if (total > o->order_cap) {
        spike_at_t *grown = realloc(o->order, total * sizeof *grown);
        if (!grown) return cli_fail("run", "out of memory for %zu spikes", total);
        o->order = grown;
        o->order_cap = total;
    }
    total = 0;
    for (int p = 0; p < n; p++) {
        hb_sim_spikes(sim, p, &t, &count);
        if (count && !o->spike_count[p]) o->first[p] = t[0];
        o->spike_count[p] += count;
        for (int k = 0; k < count; k++) o->order[total++] = (spike_at_t){t[k], p};
    }
    if (total) qsort(o->order, total, sizeof *o->order, compare_spike);
    for (size_t k = 0; k < total; k++) {
        put_field(o->spikes, hb_sim_probe_name(sim, o->order[k].probe));
        fprintf(o->spikes, ",%.12g\n", o->order[k].t);
    }
    hb_sim_clear_records(sim);
    if (fflush(o->probes) != 0 || ferror(o->probes))
        return cli_fail("run", "%s: cannot write: %s", o->probes_path, strerror(errno));
    if (fflush(o->spikes) != 0 || ferror(o->spikes))
        return cli_fail("run", "%s: cannot write: %s", o->spikes_path, strerror(errno));
    return 0;
}

/* The files closed (the counts kept for the summary). */
static int stream_close(stream_t *o)
{
    int rc = 0;
    if (o->probes && fclose(o->probes) != 0)
        rc = cli_fail("run", "%s: cannot write: %s", o->probes_path, strerror(errno));
    if (o->spikes && fclose(o->spikes) != 0)
        rc = cli_fail("run", "%s: cannot write: %s", o->spikes_path, strerror(errno));
    o->probes = o->spikes = NULL;
    return rc;
}

static void stream_free(stream_t *o)
{
    free(o->spike_count);
    free(o->first);
    free((void *)o->trace);
    free(o->order);
    memset(o, 0, sizeof *o);
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

static int run_cells(const char *model, const char *out, int quiet)
{
    if (check_output(out) != 0) return 1;
    hb_sim_t *sim = NULL;
    cli_warn_morphologies("run", model);
    hb_status_t status = hb_sim_load_json_with(model, &overrides, &sim);
    if (status != HB_SUCCESS) return cli_fail_status("run", status);
    hb_sim_options_t opt;
    hb_sim_options(sim, &opt);
    stream_t o;
    memset(&o, 0, sizeof o);
    int rc = stream_open(&o, out, sim);
    catch_signals(1);
    const double start = cli_now_seconds();
    char error[1024] = "";
    if (rc == 0 && (status = hb_sim_init(sim)) != HB_SUCCESS) rc = cli_fail_status("run", status);
    if (rc == 0) rc = stream_write(&o, sim);
    const long total = hb_sim_steps(sim), chunk = chunk_steps(&opt);
    for (long done = 0; rc == 0 && done < total && !stop_signal; done += chunk) {
        status = hb_sim_advance(sim, total - done < chunk ? total - done : chunk);
        if (status != HB_SUCCESS) snprintf(error, sizeof error, "%s", hb_last_error());
        rc = stream_write(&o, sim); /* what was computed, up to a failure too */
        if (status != HB_SUCCESS) rc = cli_fail("run", "%s (%s)", error, hb_status_string(status));
    }
    const double seconds = cli_now_seconds() - start;
    const int interrupted = rc == 0 && stop_signal != 0 &&
                            hb_sim_time(sim) < opt.t_stop_ms - 0.5 * opt.dt_ms;
    if (stream_close(&o) != 0 && rc == 0) rc = 1;
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
        for (int p = 0; p < hb_sim_probe_count(sim); p++)
            if (o.spike_count[p])
                printf("  %s: %ld spike%s, first at %.4f ms\n", hb_sim_probe_name(sim, p),
                       o.spike_count[p], o.spike_count[p] == 1 ? "" : "s", o.first[p]);
        printf("wrote %s/probes.csv, %s/spikes.csv and %s/summary.json\n", out, out, out);
    }
    catch_signals(0);
    stream_free(&o);
    hb_sim_destroy(sim);
    return rc;
}

int cli_command_run(int argc, char **argv)
{
    const char *model = NULL, *out = ".";
    int quiet = 0, tracing = 0;
    const cli_option_t options[] = {
        CLI_FLAG("--trace", &tracing, 1),
        CLI_STRING("-o", &out),
        CLI_STRING("--output", &out),
        CLI_FLAG("--quiet", &quiet, 1),
        CLI_CUSTOM("--backend", cli_parse_backend_override, &overrides),
        CLI_CUSTOM("--threads", cli_parse_threads_override, &overrides),
        CLI_CUSTOM("--t-stop", cli_parse_t_stop_override, &overrides),
        CLI_CUSTOM("--dt", cli_parse_dt_override, &overrides),
        CLI_POSITIONAL("model file", &model),
    };
    const int parsed = cli_parse_options("run", usage_run, options,
                                         sizeof options / sizeof *options, argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
    if (is_network(model)) return run_network(model, out, quiet, tracing);
    return run_cells(model, out, quiet);
}
