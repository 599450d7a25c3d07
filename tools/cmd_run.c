/* hinesbatch run: a simulation described by a JSON model file (docs/model.md). */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"

static const char usage_run[] =
    "usage: hinesbatch run MODEL.json [-o DIR] [--quiet]\n"
    "\n"
    "Simulates the cells of a JSON model file (docs/model.md: geometry, regions,\n"
    "mechanisms pas and hh, IClamps, probes, dt, t_stop, v_init, celsius, method)\n"
    "with NEURON's fixed-step scheme, then writes\n"
    "  DIR/probes.csv   t_ms and one column of voltages [mV] per probe\n"
    "  DIR/spikes.csv   probe,t_ms: threshold crossings of probes with spike_threshold\n"
    "and prints a summary. Morphology paths are relative to the model file.\n"
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
    } else if (make_dirs(out) != 0) {
        rc = cli_fail("run", "%s: cannot create the output directory: %s", out, strerror(errno));
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
