/* hinesbatch run: a simulation described by a JSON model file (docs/model.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli.h"

static const char usage_run[] =
    "usage: hinesbatch run MODEL.json [-o DIR] [--quiet]\n"
    "\n"
    "Simulates the cells of a JSON model file (docs/model.md: geometry, regions,\n"
    "mechanisms pas and hh, synapses, IClamps, probes, dt, t_stop, v_init, celsius,\n"
    "method) with NEURON's fixed-step scheme, then writes\n"
    "  DIR/probes.csv   t_ms and one column of voltages [mV] per probe\n"
    "  DIR/spikes.csv   probe,t_ms: threshold crossings of probes with spike_threshold\n"
    "A file with a \"network\" object is a network (docs/network.md): its cells, spike\n"
    "sources and connections run on all ranks of the MPI job (mpirun) or alone, and\n"
    "rank 0 writes\n"
    "  DIR/spikes.dat   'gid time' lines ordered by time, then gid (NEURON's out.dat)\n"
    "and prints a summary. Morphology paths are relative to the model file. The output\n"
    "directory is created and checked before the simulation starts.\n"
    "\n"
    "  -o, --output DIR  output directory, created if missing (default: .)\n"
    "  --quiet           no summary\n";

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

static int run_network(const char *model, const char *out, int quiet)
{
    hb_comm_t *comm = NULL;
    hb_status_t status = hb_comm_create(HB_COMM_BEST, &comm);
    if (status != HB_SUCCESS) return cli_fail_status("run", status);
    const int rank = hb_comm_rank(comm);
    hb_net_t *net = NULL;
    int rc = check_output(out); /* on every rank: all fail alike, none left in a collective */
    if (rc == 0) status = hb_net_load_json(model, comm, &net);
    if (rc == 0 && status != HB_SUCCESS) rc = cli_fail_status("run", status);
    const double start = cli_now_seconds();
    if (rc == 0 && (status = hb_net_run(net)) != HB_SUCCESS) rc = cli_fail_status("run", status);
    const double seconds = cli_now_seconds() - start;
    if (rc == 0 && rank == 0) {
        const hb_spike_t *spikes;
        size_t n;
        hb_net_spikes(net, &spikes, &n);
        char path[4200];
        snprintf(path, sizeof path, "%s/spikes.dat", out);
        FILE *f = fopen(path, "w");
        if (!f) {
            rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
        } else {
            for (size_t k = 0; k < n; k++) fprintf(f, "%u %.10g\n", spikes[k].gid, spikes[k].time_ms);
            if (fclose(f) != 0) rc = cli_fail("run", "%s: cannot write: %s", path, strerror(errno));
        }
        if (rc == 0 && !quiet)
            printf("%s: network, %d rank%s, min delay %g ms (epochs of %d steps): %zu spikes in "
                   "%.3f s\nwrote %s\n", model, hb_comm_size(comm),
                   hb_comm_size(comm) == 1 ? "" : "s", hb_net_min_delay(net),
                   hb_net_epoch_steps(net), n, seconds, path);
    }
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return rc;
}

int cli_command_run(int argc, char **argv)
{
    const char *model = NULL, *out = ".";
    int quiet = 0;
    const cli_option_t options[] = {
        CLI_STRING("-o", &out),
        CLI_STRING("--output", &out),
        CLI_FLAG("--quiet", &quiet, 1),
        CLI_POSITIONAL("model file", &model),
    };
    const int parsed = cli_parse_options("run", usage_run, options,
                                         sizeof options / sizeof *options, argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
    if (is_network(model)) return run_network(model, out, quiet);
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
