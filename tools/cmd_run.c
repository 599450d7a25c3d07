/* hinesbatch run: a simulation described by a JSON model file (docs/model.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <math.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli.h"

static const char usage_run[] =
    "usage: hinesbatch run MODEL.json [-o DIR] [--quiet] [--trace]\n"
    "\n"
    "Simulates the cells of a JSON model file (docs/model.md: geometry, regions,\n"
    "mechanisms pas and hh, synapses, IClamps, probes, dt, t_stop, v_init, celsius,\n"
    "method) with NEURON's fixed-step scheme, then writes\n"
    "  DIR/probes.csv   t_ms and one column of voltages [mV] per probe\n"
    "  DIR/spikes.csv   probe,t_ms: threshold crossings of probes with spike_threshold\n"
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
    "  -o, --output DIR  output directory, created if missing (default: .)\n"
    "  --quiet           no summary\n"
    "  --trace           networks: write each rank's timeline (at most 1,000,000 intervals)\n";

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

/* Every rank's phases into DIR/summary.json (rank 0 writes). */
static int write_summary(const char *path, const char *model, hb_net_t *net, hb_comm_t *comm,
                         double wall_s, const hb_sim_options_t *opt)
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
        fprintf(f, "{\"model\": \"%s\", \"ranks\": %d, \"cells\": %zu, \"spikes\": %zu, "
                "\"t_stop_ms\": %g, \"dt_ms\": %g, \"min_delay_ms\": %g, \"epoch_steps\": %d, "
                "\"wall_s\": %.6f, \"memory_kib_per_cell\": %.3f,\n \"per_rank\": [", model, size,
                cells, all[0].spikes, opt->t_stop_ms, opt->dt_ms, hb_net_min_delay(net),
                hb_net_epoch_steps(net), wall_s, cells ? (double)rss / (double)cells : 0.0);
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
    if (rc == 0) status = hb_net_load_json(model, comm, &net);
    if (rc == 0 && status != HB_SUCCESS) rc = cli_fail_status("run", status);
    if (rc == 0 && rank == 0 && !(f = fopen(path, "w")))
        rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    hb_sim_options_t opt;
    memset(&opt, 0, sizeof opt);
    if (rc == 0) {
        if (tracing && hb_net_set_trace(net, 1000000) == 0)
            rc = cli_fail("run", "out of memory for the trace");
        status = rc == 0 ? hb_net_init(net) : HB_SUCCESS;
        if (status != HB_SUCCESS) rc = cli_fail_status("run", status);
    }
    const double start = cli_now_seconds();
    const int progress = rank == 0 && !quiet && isatty(STDERR_FILENO);
    size_t written = 0;
    double t_stop = 0.0;
    if (rc == 0) {
        t_stop = hb_net_stop_time(net);
        opt.t_stop_ms = t_stop;
        opt.dt_ms = hb_net_dt(net);
    }
    /* chunks of about 1% of the run, whole epochs: progress and spikes on disk as it goes */
    const double chunk = fmax(t_stop / 100.0, hb_net_epoch_steps(net) * opt.dt_ms);
    while (rc == 0 && hb_net_time(net) < t_stop - 0.5 * opt.dt_ms) {
        if ((status = hb_net_advance(net, hb_net_time(net) + chunk)) != HB_SUCCESS) {
            rc = cli_fail_status("run", status);
            break;
        }
        if (f) rc = write_spikes(f, path, net, &written);
        if (progress) {
            const double wall = cli_now_seconds() - start, t = hb_net_time(net);
            fprintf(stderr, "\r  t = %.1f / %.1f ms, %.1f s, %.1f ms/s, ETA %.0f s   ", t, t_stop,
                    wall, wall > 0 ? t / wall : 0.0, t > 0 ? wall * (t_stop - t) / t : 0.0);
        }
    }
    if (progress) fputc('\n', stderr);
    const double seconds = cli_now_seconds() - start;
    if (f && fclose(f) != 0 && rc == 0) rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
    if (rc == 0) rc = write_summary(summary, model, net, comm, seconds, &opt);
    if (rc == 0 && tracing) rc = write_trace(out, net, rank);
    if (rc == 0 && rank == 0 && !quiet)
        printf("%s: network, %d rank%s, min delay %g ms (epochs of %d steps): %zu spikes in "
               "%.3f s\nwrote %s and %s\n", model, hb_comm_size(comm),
               hb_comm_size(comm) == 1 ? "" : "s", hb_net_min_delay(net), hb_net_epoch_steps(net),
               written, seconds, path, summary);
    hb_net_destroy(net);
    hb_comm_destroy(comm);
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
        CLI_POSITIONAL("model file", &model),
    };
    const int parsed = cli_parse_options("run", usage_run, options,
                                         sizeof options / sizeof *options, argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
    if (is_network(model)) return run_network(model, out, quiet, tracing);
    if (check_output(out) != 0) return 1;
    hb_sim_t *sim = NULL;
    hb_status_t status = hb_sim_load_json(model, &sim);
    if (status != HB_SUCCESS) return cli_fail_status("run", status);
    hb_sim_options_t opt;
    hb_sim_options(sim, &opt);
    const double start = cli_now_seconds();
    status = hb_sim_run(sim);
    const double seconds = cli_now_seconds() - start;
    int rc = 0;
    if (status != HB_SUCCESS) {
        rc = cli_fail_status("run", status);
    } else if ((status = hb_sim_write_csv(sim, out)) != HB_SUCCESS) {
        rc = cli_fail_status("run", status);
    } else if (!quiet) {
        const double *t;
        int samples;
        hb_sim_sample_times(sim, &t, &samples);
        printf("%s: %d cell%s, %d probe%s, t = 0..%g ms, dt %g ms (%s), %d samples, %.3f s\n", model,
               hb_sim_cell_count(sim), hb_sim_cell_count(sim) == 1 ? "" : "s",
               hb_sim_probe_count(sim), hb_sim_probe_count(sim) == 1 ? "" : "s", hb_sim_time(sim),
               opt.dt_ms, opt.method == HB_METHOD_CN ? "Crank-Nicolson" : "backward Euler", samples,
               seconds);
        for (int p = 0; p < hb_sim_probe_count(sim); p++) {
            const double *spikes;
            int n;
            hb_sim_spikes(sim, p, &spikes, &n);
            if (n == 0) continue;
            printf("  %s: %d spike%s, first at %.4f ms\n", hb_sim_probe_name(sim, p), n, n == 1 ? "" : "s",
                   spikes[0]);
        }
        printf("wrote %s/probes.csv and %s/spikes.csv\n", out, out);
    }
    hb_sim_destroy(sim);
    return rc;
}
