/*
 * Synapses (ExpSyn, Exp2Syn) against NEURON: reference/neuron-arbor-validation-2016/
 * simple_exp_synapse.json and simple_exp2_synapse.json. A ball and stick (soma hh, dendrite
 * pas e -65, Ra 100) with a synapse at dend(0.5), events of 0.04 uS at 10, 20 and 40 ms, as
 * NEURON delivers them: at the start of the step whose midpoint is not before the event.
 * Spike times at soma(0.5) and dend(0.5), every nseg of the files, dt 0.0125.
 */
#include <jansson.h>

#include "neuron_spikes.h"
#include "sim/sim.h"
#include "sim_common.h"

#define SPIKE_TOL_MS 0.05

static const double event_ms[3] = {10.0, 20.0, 40.0};
#define WEIGHT_US 0.04

/* One row of a reference file: our spike times against NEURON's. */
static double run_row(const hb_synapse_t *syn, int nseg, double dt, const json_t *meas)
{
    const hb_section_spec_t secs[2] = {{"soma", -1, 0.0, 12.6157, 12.6157, 1},
                                       {"dend", 0, 1.0, 200.0, 1.0, 3}};
    hb_morph_t *morph = NULL;
    int map[2];
    hb_model_t *model = sections_model(secs, 2, nseg, 100.0, 1.0, &morph, map);
    double worst = INFINITY;
    hb_sim_t *sim = NULL;
    if (!model) goto out;
    hb_mech_t hh, pas;
    hb_mech_default(HB_MECH_HH, &hh);
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.e_pas = -65.0;
    CHECK_OK(hb_model_insert(model, 1, &hh));
    CHECK_OK(hb_model_insert(model, 3, &pas));
    int index = -1;
    const hb_location_t mid = at_section(map[1], 0.5);
    CHECK_OK(hb_model_add_synapse(model, &mid, syn, &index));
    CHECK(index == 0 && hb_model_synapse_count(model) == 1);
    const char *keys[2] = {"soma", "dend"};
    const hb_location_t at[2] = {at_section(map[0], 0.5), mid};
    for (int p = 0; p < 2; p++)
        add_probe(model, at[p], keys[p], 1,
                  json_number_value(json_object_get(json_object_get(meas, keys[p]), "thresh")));
    hb_sim_options_t opt = sim_options(dt, 50.0, 50.0);
    CHECK_OK(hb_sim_create(&model, 1, &opt, &sim));
    if (!sim) goto out;
    CHECK_OK(hb_sim_init(sim));
    const long steps = (long)ceil(50.0 / dt - 1e-9);
    int next = 0;
    for (long n = 0; n < steps; n++) {
        /* NEURON delivers at step n the events of time <= t_n + dt/2 */
        while (next < 3 && event_ms[next] <= ((double)n + 0.5) * dt) {
            CHECK_OK(hb_sim_deliver(sim, 0, 0, WEIGHT_US));
            ++next;
        }
        if (hb_sim_advance(sim, 1) != HB_SUCCESS) {
            CHECKF(0, "advance: %s", hb_last_error());
            goto out;
        }
    }
    worst = 0.0;
    for (int p = 0; p < 2; p++)
        worst = fmax(worst, spike_diff(sim, p, json_object_get(json_object_get(meas, keys[p]),
                                                              "spikes")));
out:
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
    return worst;
}

static void reference(const char *file, const hb_synapse_t *syn)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-arbor-validation-2016/%s", HB_DATA_DIR, file);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    CHECKF(root && json_is_array(root), "%s: %s (line %d)", path, err.text, err.line);
    if (!root) return;
    size_t i;
    json_t *row;
    json_array_foreach(root, i, row) {
        const int nseg = (int)json_integer_value(json_object_get(row, "nseg"));
        const double dt = json_number_value(json_object_get(row, "dt"));
        const double d = run_row(syn, nseg, dt, json_object_get(row, "measurements"));
        printf("%s nseg %d dt %g: max |t - NEURON| = %.3g ms\n", file, nseg, dt, d);
        CHECKF(d < SPIKE_TOL_MS, "%s nseg %d: spikes differ by %.3g ms", file, nseg, d);
        CHECKF(d < 0.5 * dt, "%s nseg %d: not NEURON's steps (%.3g ms)", file, nseg, d);
    }
    json_decref(root);
}

/* Bad synapses: a clear error, nothing added. */
static void bad_input(void)
{
    const hb_section_spec_t secs[1] = {{"soma", -1, 0.0, 10.0, 10.0, 1}};
    hb_morph_t *morph = NULL;
    hb_model_t *model = sections_model(secs, 1, 1, 100.0, 1.0, &morph, NULL);
    if (!model) return;
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0}, end = {HB_LOC_NODE, 0, 0, 0.0, 0};
    hb_synapse_t syn;
    hb_synapse_default(HB_SYN_EXP, &syn);
    syn.tau_ms = 0.0;
    CHECK(hb_model_add_synapse(model, &soma, &syn, NULL) == HB_ERR_INVALID_VALUE);
    CHECK(strstr(hb_last_error(), "tau 0 ms") != NULL);
    hb_synapse_default(HB_SYN_EXP2, &syn);
    syn.tau1_ms = 20.0; /* > tau2 (10) */
    CHECK(hb_model_add_synapse(model, &soma, &syn, NULL) == HB_ERR_INVALID_VALUE);
    CHECK(strstr(hb_last_error(), "tau1 < tau2") != NULL);
    hb_synapse_default(HB_SYN_EXP, &syn);
    syn.e_mv = NAN;
    CHECK(hb_model_add_synapse(model, &soma, &syn, NULL) == HB_ERR_INVALID_VALUE);
    syn.e_mv = 0.0;
    syn.kind = (hb_syn_kind_t)7;
    CHECK(hb_model_add_synapse(model, &soma, &syn, NULL) == HB_ERR_INVALID_VALUE);
    hb_synapse_default(HB_SYN_EXP, &syn);
    CHECK(hb_model_add_synapse(model, &end, &syn, NULL) == HB_ERR_INVALID_VALUE); /* zero area */
    CHECK(strstr(hb_last_error(), "no membrane") != NULL);
    CHECK(hb_model_synapse_count(model) == 0);
    int index = -1;
    CHECK_OK(hb_model_add_synapse(model, &soma, &syn, &index));
    CHECK(index == 0);
    hb_sim_options_t opt = sim_options(0.025, 1.0, 0.0);
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(&model, 1, &opt, &sim));
    if (sim) {
        CHECK(hb_sim_deliver(sim, 0, 1, 0.1) == HB_ERR_INVALID_VALUE);
        CHECK(hb_sim_deliver(sim, 1, 0, 0.1) == HB_ERR_INVALID_VALUE);
    }
    if (hb_backend_available(HB_BACKEND_CUDA)) {
        hb_sim_t *gpu = NULL;
        opt.backend = HB_BACKEND_CUDA;
        CHECK(hb_sim_create(&model, 1, &opt, &gpu) == HB_ERR_NOT_SUPPORTED && !gpu);
    }
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* A model of the ball and stick with an ExpSyn and an Exp2Syn (reversal e_exp2 [mV]). */
static hb_model_t *two_synapses(double e_exp2, hb_morph_t **morph)
{
    const hb_section_spec_t secs[2] = {{"soma", -1, 0.0, 12.6157, 12.6157, 1},
                                       {"dend", 0, 1.0, 200.0, 1.0, 3}};
    int map[2];
    hb_model_t *model = sections_model(secs, 2, 9, 100.0, 1.0, morph, map);
    if (!model) return NULL;
    hb_mech_t hh, pas;
    hb_mech_default(HB_MECH_HH, &hh);
    hb_mech_default(HB_MECH_PAS, &pas);
    hb_synapse_t exp, exp2;
    hb_synapse_default(HB_SYN_EXP, &exp);
    exp.tau_ms = 2.0;
    hb_synapse_default(HB_SYN_EXP2, &exp2);
    exp2.tau1_ms = 0.5;
    exp2.tau2_ms = 3.0;
    exp2.e_mv = e_exp2;
    const hb_location_t a = at_section(map[1], 0.3), b = at_section(map[0], 0.5);
    CHECK_OK(hb_model_insert(model, 1, &hh));
    CHECK_OK(hb_model_insert(model, 3, &pas));
    CHECK_OK(hb_model_add_synapse(model, &a, &exp, NULL));
    CHECK_OK(hb_model_add_synapse(model, &b, &exp2, NULL));
    return model;
}

/* Voltages of cells 0, 2, 4 after events on both synapses (weights by cell). */
static int run_five(hb_model_t *const *cells, double *out, int m)
{
    hb_sim_options_t opt = sim_options(0.025, 20.0, 20.0);
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(cells, 5, &opt, &sim));
    if (!sim) return 0;
    CHECK_OK(hb_sim_init(sim));
    for (long n = 0; n < 800; n++) {
        if (n % 100 == 3)
            for (int c = 0; c < 5; c += 2) {
                CHECK_OK(hb_sim_deliver(sim, c, 0, 0.01 * (c + 1)));
                CHECK_OK(hb_sim_deliver(sim, c, 1, 0.004 * (c + 2)));
            }
        CHECK_OK(hb_sim_advance(sim, 1));
    }
    for (int c = 0; c < 5; c += 2) {
        const double *v = NULL;
        CHECK_OK(hb_sim_voltages(sim, c, &v));
        if (v) memcpy(out + (size_t)(c / 2) * (size_t)m, v, (size_t)m * sizeof *v);
    }
    hb_sim_destroy(sim);
    return 1;
}

/* Copies with the same synapses step them as vectors over the lanes (lane-interleaved
 * state); a group whose cells differ keeps the state per cell. Both give the same bits. */
static void state_layouts(void)
{
    hb_morph_t *ma = NULL, *mb = NULL;
    hb_model_t *a = two_synapses(-80.0, &ma), *b = two_synapses(-70.0, &mb);
    if (!a || !b) goto out;
    const int m = hb_cable_size(hb_model_cable(a));
    double *same = check_malloc(3 * (size_t)m * sizeof *same);
    double *mixed = check_malloc(3 * (size_t)m * sizeof *mixed);
    hb_model_t *const copies[5] = {a, a, a, a, a}, *const alternating[5] = {a, b, a, b, a};
    if (run_five(copies, same, m) && run_five(alternating, mixed, m)) {
        CHECK(memcmp(same, mixed, 3 * (size_t)m * sizeof *same) == 0);
        double rise = 0.0; /* the events did something */
        for (int i = 0; i < 3 * m; i++) rise = fmax(rise, same[i] + 65.0);
        CHECKF(rise > 1.0, "the events moved v by %g mV at most", rise);
    }
    free(same);
    free(mixed);
out:
    hb_model_destroy(a);
    hb_model_destroy(b);
    hb_morph_destroy(ma);
    hb_morph_destroy(mb);
}

int main(void)
{
    hb_synapse_t exp, exp2;
    hb_synapse_default(HB_SYN_EXP, &exp);
    exp.tau_ms = 2.0;
    hb_synapse_default(HB_SYN_EXP2, &exp2);
    exp2.tau1_ms = 0.5;
    exp2.tau2_ms = 2.0;
    reference("simple_exp_synapse.json", &exp);
    reference("simple_exp2_synapse.json", &exp2);
    bad_input();
    state_layouts();
    return check_summary("test_sim_synapse");
}
