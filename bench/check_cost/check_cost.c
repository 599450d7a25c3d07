/*
 * The cost of the simulator's state check (docs/sim-engine.md, section 2): one simulation of
 * `cells` copies of a model (as `hinesbatch bench cell` builds them: NEURON scheme, nseg 1,
 * Ra 100, cm 1, an IClamp at the soma), and three CPU engines over its one state that differ
 * only in the check interval: never, every step, and the library's HB_SIM_CHECK_STEPS. The
 * three take turns, 64 steps each, for `rounds` rounds, so that a noisy machine slows all of
 * them alike; each turn is timed. Printed: ns per compartment-step, median and min over the
 * rounds, and what a check every HB_SIM_CHECK_STEPS steps costs in % of a step, from the
 * every-step engine (its extra time / HB_SIM_CHECK_STEPS) and directly.
 *
 * Build from the repository root after a CPU build in BUILD (uses the internal headers):
 *   cc -O2 -std=c11 -fopenmp -Iinclude -Isrc bench/check_cost/check_cost.c BUILD/libhinesbatch.a \
 *      -ljansson -lm -o check_cost
 * Run on one core: taskset -c 2 ./check_cost DATA_DIR/morphologies [cells] [rounds]
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/sim_engine.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static hb_status_t no_sink(void *user, int n, const long *step, const double *s, const int *c,
                           const double *sp)
{
    (void)user, (void)n, (void)step, (void)s, (void)c, (void)sp;
    return HB_SUCCESS;
}

static int compare(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* An engine over sim's layout (as src/sim/sim.c makes one), checking every `every` steps. */
static void *engine(hb_sim_t *sim, long every)
{
    hb_step_group_t *views = malloc((size_t)sim->n_groups * sizeof *views);
    for (int g = 0; g < sim->n_groups; g++) views[g] = sim->groups[g].k;
    hb_sim_desc_t d;
    memset(&d, 0, sizeof d);
    d.n_groups = sim->n_groups;
    d.groups = views;
    d.table = sim->table.use_table ? sim->table.table : NULL;
    d.q10 = sim->table.q10;
    d.dt = sim->opt.dt_ms;
    d.factor = 1.0;
    d.sample_every = LONG_MAX;
    d.check_every = every;
    d.check_last = -1;
    void *e = NULL;
    if (sim->ops->create(sim->ctx, &d, &e) != HB_SUCCESS) fprintf(stderr, "%s\n", hb_last_error());
    free(views);
    return e;
}

static int measure(const char *data, const char *file, int hh_soma, long cells, int rounds)
{
    char path[2048];
    snprintf(path, sizeof path, "%s/%s", data, file);
    hb_morph_t *morph = NULL;
    hb_model_t *model = NULL;
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_FIXED;
    disc.count = 1;
    hb_mech_t pas, hh;
    hb_mech_default(HB_MECH_PAS, &pas);
    hb_mech_default(HB_MECH_HH, &hh);
    pas.g_pas = 1e-4;
    pas.e_pas = -65.0;
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.5, 0};
    if (hb_morph_load_swc(path, NULL, &morph) != HB_SUCCESS ||
        hb_model_create(morph, &disc, &model) != HB_SUCCESS ||
        hb_model_insert(model, HB_REGION_ALL, &pas) != HB_SUCCESS ||
        (hh_soma && hb_model_insert(model, 1, &hh) != HB_SUCCESS) ||
        hb_model_add_iclamp(model, &soma, 1.0, 1e9, 0.5) != HB_SUCCESS) {
        fprintf(stderr, "check_cost: %s\n", hb_last_error());
        return 1;
    }
    hb_model_t **list = malloc((size_t)cells * sizeof *list);
    for (long c = 0; c < cells; c++) list[c] = model;
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.t_stop_ms = 1e9;
    hb_sim_t *sim = NULL;
    if (hb_sim_create(list, (int)cells, &opt, &sim) != HB_SUCCESS || hb_sim_init(sim) != HB_SUCCESS) {
        fprintf(stderr, "check_cost: %s\n", hb_last_error());
        return 1;
    }
    enum { V = 3, STEPS = 64 };
    static const char *const name[V] = {"never", "every step", "every 64 (HB_SIM_CHECK_STEPS)"};
    const long every[V] = {LONG_MAX, 1, HB_SIM_CHECK_STEPS};
    void *e[V];
    for (int v = 0; v < V; v++) e[v] = engine(sim, every[v]);
    double *ns = malloc((size_t)V * (size_t)rounds * sizeof *ns);
    const double per = (double)cells * hb_cable_compartments(hb_model_cable(model)) * STEPS;
    long step = 0;
    hb_sim_fault_t fault;
    for (int r = -2; r < rounds; r++) /* two rounds of warm-up */
        for (int k = 0; k < V; k++) {
            const int v = (r + k + V) % V; /* each variant first in turn */
            const double t0 = now();
            sim->ops->advance(e[v], step, STEPS, no_sink, NULL, &fault);
            const double t = now() - t0;
            step += STEPS;
            if (r >= 0) ns[v * rounds + r] = t * 1e9 / per;
        }
    double median[V], low[V];
    for (int v = 0; v < V; v++) {
        qsort(ns + v * rounds, (size_t)rounds, sizeof *ns, compare);
        median[v] = ns[v * rounds + rounds / 2];
        low[v] = ns[v * rounds];
    }
    printf("%s (%s), %ld cells, %d compartments, %d rounds of %d steps per engine:\n", file,
           hh_soma ? "hh in the soma, pas elsewhere" : "pas", cells,
           hb_cable_compartments(hb_model_cable(model)), rounds, STEPS);
    for (int v = 0; v < V; v++)
        printf("  check %-30s %8.4f ns per compartment-step (median), %8.4f (min)\n", name[v],
               median[v], low[v]);
    printf("  one check: %.4f ns per compartment (median of every step - never); every %d steps: "
           "%.4f%% of a step\n", median[1] - median[0], HB_SIM_CHECK_STEPS,
           100.0 * (median[1] - median[0]) / HB_SIM_CHECK_STEPS / median[0]);
    printf("  directly: every %d steps - never = %+.4f ns (%+.3f%%; min %+.3f%%)\n",
           HB_SIM_CHECK_STEPS, median[2] - median[0], 100.0 * (median[2] - median[0]) / median[0],
           100.0 * (low[2] - low[0]) / low[0]);
    for (int v = 0; v < V; v++) sim->ops->destroy(e[v]);
    free(ns);
    hb_sim_destroy(sim);
    free(list);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: check_cost MORPHOLOGY_DIR [cells] [rounds]\n");
        return 2;
    }
    const long cells = argc > 2 ? atol(argv[2]) : 1024;
    const int rounds = argc > 3 ? atoi(argv[3]) : 101;
    return measure(argv[1], "morph_l5pc_with_axon.swc", 0, cells, rounds) ||
           measure(argv[1], "HSN-fluoro01.CNG.swc", 1, cells, rounds);
}
