/*
 * Simulator unit tests: hh rates and NEURON's rate table, passive decay with
 * tau = cm/g, the order of backward Euler (1) and Crank-Nicolson (2), copies of
 * cells in one batch, locations, spike timing rules and argument errors.
 */
#include "sim/sim.h"
#include "sim_common.h"

/* hh.mod's rates written out independently (Rallpack 3's form), with the 0/0 limits. */
static double lin_rate(double a, double v, double v0)
{
    double x = (v - v0) / 10.0;
    return fabs(x) < 1e-9 ? a * 10.0 : a * (v - v0) / (1.0 - exp(-x));
}

static void closed_rates(double v, double q10, double inf[3], double tau[3])
{
    const double alpha[3] = {lin_rate(0.1, v, -40.0), 0.07 * exp(-(v + 65.0) / 20.0),
                             lin_rate(0.01, v, -55.0)};
    const double beta[3] = {4.0 * exp(-(v + 65.0) / 18.0), 1.0 / (1.0 + exp(-(v + 35.0) / 10.0)),
                            0.125 * exp(-(v + 65.0) / 80.0)};
    for (int k = 0; k < 3; k++) {
        inf[k] = alpha[k] / (alpha[k] + beta[k]);
        tau[k] = 1.0 / (q10 * (alpha[k] + beta[k]));
    }
}

static void test_hh_rates(void)
{
    const double volts[] = {-100.0, -65.0, -55.0, -40.0, -20.0, 0.0, 35.0};
    for (size_t i = 0; i < sizeof volts / sizeof *volts; i++)
        for (int warm = 0; warm < 2; warm++) {
            double inf[3], tau[3], want_inf[3], want_tau[3];
            hb_hh_rates(volts[i], warm ? 16.3 : 6.3, inf, tau);
            closed_rates(volts[i], warm ? 3.0 : 1.0, want_inf, want_tau);
            for (int k = 0; k < 3; k++)
                CHECKF(fabs(inf[k] - want_inf[k]) < 1e-9 && fabs(tau[k] / want_tau[k] - 1) < 1e-9,
                       "v %g gate %d: inf %.12g (want %.12g) tau %.12g (want %.12g)", volts[i], k,
                       inf[k], want_inf[k], tau[k], want_tau[k]);
        }
    /* Resting values NEURON prints for hh at -65 mV, 6.3 degC. */
    double inf[3], tau[3];
    hb_hh_rates(-65.0, 6.3, inf, tau);
    CHECKF(fabs(inf[0] - 0.0529325) < 1e-6 && fabs(inf[1] - 0.596121) < 1e-6 &&
               fabs(inf[2] - 0.317677) < 1e-6,
           "steady states at -65 mV: %g %g %g", inf[0], inf[1], inf[2]);

    /* The table: exact on the 1 mV grid, linear between, clamped outside. */
    hb_hh_table_t table;
    hb_hh_table_init(&table, 6.3, 1);
    double a[3], b[3], t_inf[3], t_tau[3];
    hb_hh_table_rates(&table, -40.0, t_inf, t_tau);
    hb_hh_rates(-40.0, 6.3, a, b);
    CHECK(t_inf[0] == a[0] && t_tau[2] == b[2]);
    hb_hh_table_rates(&table, -39.25, t_inf, t_tau);
    hb_hh_rates(-39.0, 6.3, b, tau);
    for (int k = 0; k < 3; k++)
        CHECKF(fabs(t_inf[k] - (0.25 * a[k] + 0.75 * b[k])) < 1e-14, "table gate %d at -39.25", k);
    hb_hh_rates(-39.25, 6.3, b, tau);
    CHECK(fabs(t_inf[0] - b[0]) > 1e-7); /* the table differs from the formula off the grid */
    hb_hh_table_rates(&table, 150.0, t_inf, t_tau);
    hb_hh_rates(100.0, 6.3, a, b);
    CHECK(t_inf[0] == a[0] && t_tau[0] == b[0]);
    hb_hh_table_init(&table, 6.3, 0);
    hb_hh_table_rates(&table, -39.25, t_inf, t_tau);
    hb_hh_rates(-39.25, 6.3, a, b);
    CHECK(t_inf[0] == a[0] && t_tau[1] == b[1]);
}

/* One compartment (L = diam = 10 um) with pas; `cm` per SWC type 1. */
static hb_model_t *pas_soma(double g, double e, double cm, hb_morph_t **morph)
{
    const hb_section_spec_t sec = {"soma", -1, 0.0, 10.0, 10.0, 1};
    hb_model_t *model = sections_model(&sec, 1, 1, 100.0, 1.0, morph, NULL);
    if (!model) return NULL;
    if (cm != 1.0) { /* region capacitance through the discretisation */
        hb_discretization_t disc;
        hb_discretization_default(&disc);
        disc.policy = HB_CPOLICY_FIXED;
        disc.scheme = HB_SCHEME_NEURON;
        disc.cm_by_type[1] = cm;
        hb_model_destroy(model);
        model = NULL;
        CHECK_OK(hb_model_create(*morph, &disc, &model));
        if (!model) return NULL;
    }
    hb_mech_t pas;
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.g_pas = g;
    pas.e_pas = e;
    CHECK_OK(hb_model_insert(model, HB_REGION_ALL, &pas));
    add_probe(model, (hb_location_t){HB_LOC_SOMA, 0, 0, 0.0, 0}, "soma", 0, 0.0);
    return model;
}

/* Max |v - (e + (v0 - e) exp(-t/tau))| over the samples. */
static double decay_error(hb_model_t *model, double dt, hb_method_t method, double tau, double e)
{
    hb_sim_options_t opt = sim_options(dt, 4.0, 0.1);
    opt.method = method;
    hb_sim_t *sim = run_model(model, &opt);
    double worst = INFINITY;
    const double *t, *v;
    int n;
    if (sim && hb_sim_sample_times(sim, &t, &n) == HB_SUCCESS &&
        hb_sim_probe_trace(sim, 0, &v, &n) == HB_SUCCESS) {
        CHECKF(n == 41, "%d samples over 4 ms every 0.1 ms (expected 41)", n);
        worst = 0.0;
        for (int k = 0; k < n; k++)
            worst = fmax(worst, fabs(v[k] - (e + (opt.v_init_mv - e) * exp(-t[k] / tau))));
    }
    hb_sim_destroy(sim);
    return worst;
}

static void test_decay_and_order(void)
{
    hb_morph_t *morph = NULL;
    hb_model_t *model = pas_soma(0.001, -70.0, 1.0, &morph); /* tau = cm/g = 1 ms */
    if (!model) return;
    const double dts[] = {0.1, 0.05, 0.025};
    for (int method = 0; method < 2; method++) {
        double err[3];
        for (int k = 0; k < 3; k++) err[k] = decay_error(model, dts[k], (hb_method_t)method, 1.0, -70.0);
        const double r1 = err[0] / err[1], r2 = err[1] / err[2];
        printf("decay %s: errors %.3g %.3g %.3g mV, ratios %.3f %.3f\n", method ? "cn" : "euler",
               err[0], err[1], err[2], r1, r2);
        if (method == HB_METHOD_EULER)
            CHECKF(r1 > 1.8 && r1 < 2.2 && r2 > 1.8 && r2 < 2.2, "backward Euler: ratios %g %g", r1, r2);
        else
            CHECKF(r1 > 3.6 && r1 < 4.4 && r2 > 3.6 && r2 < 4.4, "Crank-Nicolson: ratios %g %g", r1, r2);
        CHECKF(err[2] < (method ? 2e-4 : 0.05), "error at dt 0.025: %g mV", err[2]);
    }
    hb_model_destroy(model);
    hb_morph_destroy(morph);
    /* cm 2 uF/cm2 in the soma region: tau = 2 ms. */
    model = pas_soma(0.001, -70.0, 2.0, &morph);
    if (model) {
        double err = decay_error(model, 0.0125, HB_METHOD_CN, 2.0, -70.0);
        CHECKF(err < 1e-4, "cm 2: decay with tau 2 ms, error %g mV", err);
    }
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* hh soma with an IClamp; `copies` cells, the last one with a stronger clamp. */
static hb_model_t *hh_soma(double amp, hb_morph_t **morph)
{
    const hb_section_spec_t secs[2] = {{"soma", -1, 0.0, 18.8, 18.8, 1},
                                       {"dend", 0, 1.0, 200.0, 1.0, 3}};
    hb_model_t *model = sections_model(secs, 2, 7, 100.0, 1.0, morph, NULL);
    if (!model) return NULL;
    hb_mech_t hh, pas;
    hb_mech_default(HB_MECH_HH, &hh);
    hb_mech_default(HB_MECH_PAS, &pas);
    CHECK_OK(hb_model_insert(model, 1, &hh));
    CHECK_OK(hb_model_insert(model, 3, &pas));
    CHECK_OK(hb_model_add_iclamp(model, &(hb_location_t){HB_LOC_SOMA, 0, 0, 0.0, 0}, 2.0, 30.0, amp));
    add_probe(model, (hb_location_t){HB_LOC_SOMA, 0, 0, 0.0, 0}, "soma", 1, 0.0);
    add_probe(model, at_section(1, 1.0), "tip", 0, 0.0);
    return model;
}

static void test_batch_copies(void)
{
    hb_morph_t *ma = NULL, *mb = NULL;
    hb_model_t *a = hh_soma(0.3, &ma), *b = hh_soma(0.5, &mb);
    if (!a || !b) goto out;
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.t_stop_ms = 20.0;
    opt.sample_dt_ms = 0.5;
    hb_sim_t *solo_a = NULL, *solo_b = NULL, *many = NULL;
    CHECK_OK(hb_sim_create(&a, 1, &opt, &solo_a));
    CHECK_OK(hb_sim_create(&b, 1, &opt, &solo_b));
    hb_model_t *cells[5] = {a, b, a, a, b};
    opt.backend = hb_backend_available(HB_BACKEND_OMP) ? HB_BACKEND_OMP : HB_BACKEND_SEQ;
    CHECK_OK(hb_sim_create(cells, 5, &opt, &many));
    if (!solo_a || !solo_b || !many) goto done;
    CHECK_OK(hb_sim_run(solo_a));
    CHECK_OK(hb_sim_run(solo_b));
    CHECK_OK(hb_sim_run(many));
    CHECK(hb_sim_cell_count(many) == 5 && hb_sim_probe_count(many) == 10);
    CHECK(strcmp(hb_sim_probe_name(many, 3), "c1.tip") == 0);
    CHECK(strcmp(hb_sim_probe_name(solo_a, 1), "tip") == 0);
    double worst = 0.0;
    int spikes_a = 0, spikes_b = 0;
    for (int c = 0; c < 5; c++)
        for (int p = 0; p < 2; p++) {
            const hb_sim_t *solo = cells[c] == a ? solo_a : solo_b;
            const double *v, *w, *s, *z;
            int n, m, ns, nz;
            CHECK_OK(hb_sim_probe_trace(many, 2 * c + p, &v, &n));
            CHECK_OK(hb_sim_probe_trace(solo, p, &w, &m));
            CHECK(n == m && n == 41);
            for (int k = 0; k < n && k < m; k++) worst = fmax(worst, fabs(v[k] - w[k]));
            CHECK_OK(hb_sim_spikes(many, 2 * c + p, &s, &ns));
            CHECK_OK(hb_sim_spikes(solo, p, &z, &nz));
            CHECK(ns == nz);
            for (int k = 0; k < ns && k < nz; k++) CHECK(s[k] == z[k]);
            if (p == 0) *(cells[c] == a ? &spikes_a : &spikes_b) = ns;
        }
    CHECKF(worst < 1e-9, "copies in one batch differ from single cells by %g mV", worst);
    /* and the two kinds of cell really differ */
    const double *va, *vb;
    int na, nb;
    double apart = 0.0;
    CHECK_OK(hb_sim_probe_trace(solo_a, 0, &va, &na));
    CHECK_OK(hb_sim_probe_trace(solo_b, 0, &vb, &nb));
    for (int k = 0; k < na && k < nb; k++) apart = fmax(apart, fabs(va[k] - vb[k]));
    CHECKF(spikes_a >= 1 && spikes_b >= 1 && apart > 1.0,
           "spikes: %d at 0.3 nA, %d at 0.5 nA; traces %g mV apart", spikes_a, spikes_b, apart);
done:
    hb_sim_destroy(solo_a);
    hb_sim_destroy(solo_b);
    hb_sim_destroy(many);
out:
    hb_model_destroy(a);
    hb_model_destroy(b);
    hb_morph_destroy(ma);
    hb_morph_destroy(mb);
}

static void test_spike_rules(void)
{
    hb_morph_t *morph = NULL;
    hb_model_t *model = hh_soma(0.3, &morph);
    if (!model) return;
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.t_stop_ms = 20.0;
    opt.dt_ms = 0.05;
    hb_sim_t *step = NULL, *lerp = NULL;
    CHECK_OK(hb_sim_create(&model, 1, &opt, &step));
    opt.spike_time = HB_SPIKE_INTERPOLATE;
    CHECK_OK(hb_sim_create(&model, 1, &opt, &lerp));
    if (step && lerp) {
        CHECK_OK(hb_sim_run(step));
        CHECK_OK(hb_sim_run(lerp));
        const double *s, *z;
        int ns, nz;
        CHECK_OK(hb_sim_spikes(step, 0, &s, &ns));
        CHECK_OK(hb_sim_spikes(lerp, 0, &z, &nz));
        CHECK(ns == nz && ns >= 1);
        for (int k = 0; k < ns && k < nz; k++) {
            double steps = s[k] / opt.dt_ms;
            CHECKF(fabs(steps - round(steps)) < 1e-9, "step rule: %g is not on the grid", s[k]);
            CHECKF(z[k] > s[k] - opt.dt_ms && z[k] <= s[k], "interpolated %g not in (%g, %g]", z[k],
                   s[k] - opt.dt_ms, s[k]);
        }
        /* advance in pieces = one run */
        CHECK_OK(hb_sim_init(step));
        CHECK_OK(hb_sim_advance(step, 150));
        CHECK(fabs(hb_sim_time(step) - 7.5) < 1e-12);
        CHECK_OK(hb_sim_advance(step, 250));
        CHECK_OK(hb_sim_spikes(step, 0, &s, &ns));
        CHECK(ns == nz);
    }
    hb_sim_destroy(step);
    hb_sim_destroy(lerp);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* Locations on an SWC cell (NEURON and vertex schemes) and on sections. */
static void test_locations(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
    hb_morph_t *morph = NULL;
    CHECK_OK(hb_morph_load_swc(path, NULL, &morph));
    if (!morph) return;
    for (int scheme = 0; scheme < 2; scheme++) {
        hb_discretization_t disc;
        hb_discretization_default(&disc);
        disc.scheme = (hb_scheme_t)scheme;
        disc.policy = HB_CPOLICY_FIXED;
        disc.count = 3;
        hb_model_t *model = NULL;
        CHECK_OK(hb_model_create(morph, &disc, &model));
        if (!model) continue;
        const hb_cable_t *cable = hb_model_cable(model);
        int node, m = hb_cable_size(cable);
        hb_node_info_t info;
        CHECK_OK(hb_model_locate(model, &(hb_location_t){HB_LOC_SOMA, 0, 0, 0.0, 0}, &node));
        CHECK(hb_cable_node(cable, node, &info) == HB_SUCCESS && info.swc_type == 1 &&
              info.area_um2 > 0);
        /* every compartment node is found again from its own (section, x) */
        int same = 0, compartments = 0;
        for (int j = 0; j < m; j++) {
            hb_cable_node(cable, j, &info);
            if (info.kind != HB_NODE_COMPARTMENT) continue;
            compartments++;
            same += hb_model_locate(model, &(hb_location_t){HB_LOC_SECTION, 0, info.section, info.x, 0},
                                    &node) == HB_SUCCESS && node == j;
        }
        CHECKF(same == compartments, "scheme %d: %d of %d nodes found from (section, x)", scheme, same,
               compartments);
        /* a sample at a section end: x = 1 of that section */
        hb_cable_node(cable, m - 1, &info);
        CHECK_OK(hb_model_locate(model, &(hb_location_t){HB_LOC_SAMPLE, info.sample_id, 0, 0.0, 0}, &node));
        if (scheme == HB_SCHEME_NEURON) CHECK(node == m - 1 && info.kind == HB_NODE_SECTION_END);
        hb_node_info_t at;
        hb_cable_node(cable, node, &at);
        CHECK(at.section == info.section);
        /* errors name the problem */
        CHECK(hb_model_locate(model, &(hb_location_t){HB_LOC_SAMPLE, 9999, 0, 0.0, 0}, &node) ==
                  HB_ERR_INVALID_VALUE &&
              strstr(hb_last_error(), "no sample with id 9999"));
        CHECK(hb_model_locate(model, &(hb_location_t){HB_LOC_SECTION, 0, 0, 1.5, 0}, &node) ==
                  HB_ERR_INVALID_VALUE &&
              strstr(hb_last_error(), "expected 0..1"));
        CHECK(hb_model_locate(model, &(hb_location_t){HB_LOC_SECTION, 0, 999, 0.5, 0}, &node) ==
                  HB_ERR_INVALID_VALUE &&
              strstr(hb_last_error(), "section 999"));
        CHECK(hb_model_locate(model, &(hb_location_t){HB_LOC_NODE, 0, 0, 0.0, m}, &node) ==
              HB_ERR_INVALID_VALUE);
        hb_model_destroy(model);
    }
    hb_morph_destroy(morph);

    /* NEURON's node_index on a 4-segment section: x = 0, 0.2, 0.25, 0.99, 1. */
    const hb_section_spec_t sec = {"cable", -1, 0.0, 100.0, 1.0, 3};
    hb_model_t *model = sections_model(&sec, 1, 4, 100.0, 1.0, &morph, NULL);
    if (model) {
        const double xs[] = {0.0, 0.2, 0.25, 0.99, 1.0};
        const int want[] = {0, 1, 2, 4, 5}; /* root end, centres 1..4, end */
        for (int k = 0; k < 5; k++) {
            int node = -1;
            CHECK_OK(hb_model_locate(model, &(hb_location_t){HB_LOC_SECTION, 0, 0, xs[k], 0}, &node));
            CHECKF(node == want[k], "x %g: node %d, NEURON's %d", xs[k], node, want[k]);
        }
    }
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

static void test_errors(void)
{
    hb_morph_t *morph = NULL;
    /* sections */
    const hb_section_spec_t chain[2] = {{"a", -1, 0.0, 10.0, 1.0, 3}, {"b", 0, 1.0, 10.0, 1.0, 3}};
    CHECK(hb_model_build_sections(chain, 2, "chain", &morph, NULL) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "only child") && !morph);
    const hb_section_spec_t mid[2] = {{"a", -1, 0.0, 10.0, 1.0, 1}, {"b", 0, 0.5, 10.0, 1.0, 3}};
    CHECK(hb_model_build_sections(mid, 2, "mid", &morph, NULL) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "x = 0.5"));
    const hb_section_spec_t thin[1] = {{"a", -1, 0.0, 10.0, 0.0, 1}};
    CHECK(hb_model_build_sections(thin, 1, "thin", &morph, NULL) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "diam = 0 um"));
    /* options, mechanisms, stimuli */
    hb_model_t *model = pas_soma(0.001, -70.0, 1.0, &morph);
    if (!model) return;
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    hb_sim_t *sim = NULL;
    opt.dt_ms = -0.1;
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "dt = -0.1"));
    hb_sim_options_default(&opt);
    opt.sample_dt_ms = 0.06;
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "not a multiple"));
    hb_mech_t bad;
    hb_mech_default(HB_MECH_HH, &bad);
    bad.gkbar = -1.0;
    CHECK(hb_model_insert(model, 1, &bad) == HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "hh"));
    hb_mech_default(HB_MECH_PAS, &bad);
    CHECK(hb_model_insert(model, 42, &bad) == HB_ERR_INVALID_VALUE);
    CHECK(hb_model_add_iclamp(model, &(hb_location_t){HB_LOC_SOMA, 0, 0, 0.0, 0}, -1.0, 1.0, 0.1) ==
          HB_ERR_INVALID_VALUE);
    CHECK(hb_sim_create(NULL, 1, &opt, &sim) == HB_ERR_INVALID_VALUE);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

int main(void)
{
    test_hh_rates();
    test_decay_and_order();
    test_batch_copies();
    test_spike_rules();
    test_locations();
    test_errors();
    return check_summary("sim_units");
}
