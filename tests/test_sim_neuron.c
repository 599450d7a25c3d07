/*
 * The simulator against NEURON's own results (data/reference/):
 *   neuron-arbor-validation-2016/ soma, ball_and_stick, ball_and_3stick: spike times;
 *   neuron-matrix/{small,cell300}_trace_hh.txt: HH soma + pas, traces and spike times;
 *   neuron-connect-dend/cell3soma.dat.ref: HH soma with two passive dendrites, trace.
 * All NEURON runs: backward Euler, hh with its rate TABLE (NEURON's default).
 */
#include <jansson.h>

#include "neuron_spikes.h"
#include "sim_common.h"

#define SPIKE_TOL_MS 0.05
#define MAX_PROBES 4

static json_t *load_json(const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-arbor-validation-2016/%s", HB_DATA_DIR, file);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    CHECKF(root && json_is_array(root), "%s: %s (line %d)", path, err.text, err.line);
    return root;
}

typedef struct {
    const char *key;     /* measurement name in the JSON */
    int section;         /* index into the section specs */
    double x;
} site_t;

typedef struct {
    hb_morph_t *morph;
    hb_model_t *model;
    int map[8]; /* morphology section of each spec */
} cell_t;

static void cell_free(cell_t *c)
{
    hb_model_destroy(c->model);
    hb_morph_destroy(c->morph);
    memset(c, 0, sizeof *c);
}

/*
 * A NEURON cell from sections: the soma (type 1, nseg 1) gets hh, the
 * dendrites (type 3, nseg each) pas with reversal e_pas; Ra everywhere, cm 1.
 */
static int cell_build(cell_t *c, const hb_section_spec_t *secs, int n_secs, int nseg, double ra,
                      double e_pas)
{
    memset(c, 0, sizeof *c);
    c->model = sections_model(secs, n_secs, nseg, ra, 1.0, &c->morph, c->map);
    if (!c->model) return 0;
    hb_mech_t hh, pas;
    hb_mech_default(HB_MECH_HH, &hh);
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.e_pas = e_pas;
    CHECK_OK(hb_model_insert(c->model, 1, &hh));
    CHECK_OK(hb_model_insert(c->model, 3, &pas));
    return 1;
}

static hb_sim_t *cell_run(hb_model_t *model, double dt, double t_stop, double sample_dt)
{
    hb_sim_options_t opt = sim_options(dt, t_stop, sample_dt);
    return run_model(model, &opt);
}

/*
 * One validation cell (pas e = -65): IClamps (del, dur, amp) at clamp_at, and
 * probes at `sites` with the thresholds of `meas`; returns the largest spike
 * time difference to NEURON's.
 */
static double run_cell(const hb_section_spec_t *secs, int n_secs, int nseg, double ra,
                       const hb_location_t *clamp_at, const double (*clamps)[3], int n_clamps,
                       const site_t *sites, int n_sites, const json_t *meas, double dt,
                       double t_stop)
{
    cell_t c;
    double worst = INFINITY;
    if (!cell_build(&c, secs, n_secs, nseg, ra, -65.0)) goto out;
    for (int k = 0; k < n_clamps; k++) {
        hb_location_t where = clamp_at[k];
        where.section = c.map[where.section];
        CHECK_OK(hb_model_add_iclamp(c.model, &where, clamps[k][0], clamps[k][1], clamps[k][2]));
    }
    for (int p = 0; p < n_sites; p++) {
        const json_t *m = json_object_get(meas, sites[p].key);
        add_probe(c.model, at_section(c.map[sites[p].section], sites[p].x), sites[p].key, 1,
                  json_number_value(json_object_get(m, "thresh")));
    }
    hb_sim_t *sim = cell_run(c.model, dt, t_stop, t_stop);
    if (sim) {
        worst = 0.0;
        for (int p = 0; p < n_sites; p++)
            worst = fmax(worst, spike_diff(sim, p, json_object_get(json_object_get(meas, sites[p].key),
                                                                   "spikes")));
    }
    hb_sim_destroy(sim);
out:
    cell_free(&c);
    return worst;
}

/* soma.json: single compartment; spike times per dt. */
static void soma(void)
{
    json_t *root = load_json("soma.json");
    if (!root) return;
    const hb_section_spec_t sec = {"soma", -1, 0.0, 18.8, 18.8, 1};
    const hb_location_t centre = at_section(0, 0.5);
    const double clamp[1][3] = {{10.0, 100.0, 0.1}};
    const site_t site = {"soma", 0, 0.5};
    size_t i;
    json_t *row;
    json_array_foreach(root, i, row) {
        const double dt_file = json_number_value(json_object_get(row, "dt"));
        /* The 2016 script's dt did not always take: its rows for dt 0.05 and 0.02 are
         * NEURON's results at dt 0.025 (its default), and the 0.01 row is dt 0.0125
         * (12.0375 = 963 x 0.0125). NEURON 8.2 and this library reproduce each row to
         * the step at those dt; 0.001 and 0.0001 are what they say. */
        const double dt = dt_file >= 0.02 ? 0.025 : fabs(dt_file - 0.01) < 1e-12 ? 0.0125 : dt_file;
        json_t *want = json_object_get(row, "spikes");
        json_t *meas = json_pack("{s{sfsO}}", "soma", "thresh", 0.0, "spikes", want);
        double d = run_cell(&sec, 1, 1, 123.0, &centre, clamp, 1, &site, 1, meas, dt, 120.0);
        printf("soma.json dt %g (run at %g): %d spikes, max |t - NEURON| = %.3g ms\n", dt_file, dt,
               (int)json_array_size(want), d);
        CHECKF(d < SPIKE_TOL_MS, "soma.json dt %g: spikes differ by %.3g ms", dt_file, d);
        CHECKF(d < 0.5 * dt, "soma.json dt %g: not NEURON's steps (%.3g ms)", dt_file, d);
        json_decref(meas);
    }
    json_decref(root);
}

/* ball_and_stick.json and ball_and_3stick.json: every nseg at the reference dt. */
static void sticks(const char *file, int three)
{
    json_t *root = load_json(file);
    if (!root) return;
    /* soma L = diam = 12.6157; dendrites d 1, on soma(1) (and dend0(1)). */
    const hb_section_spec_t one[2] = {{"soma", -1, 0.0, 12.6157, 12.6157, 1},
                                      {"dend", 0, 1.0, 200.0, 1.0, 3}};
    const hb_section_spec_t tri[4] = {{"soma", -1, 0.0, 12.6157, 12.6157, 1},
                                      {"dend0", 0, 1.0, 100.0, 1.0, 3},
                                      {"dend1", 1, 1.0, 100.0, 1.0, 3},
                                      {"dend2", 1, 1.0, 100.0, 1.0, 3}};
    const hb_location_t at_one[1] = {at_section(1, 1.0)};
    const double clamp_one[1][3] = {{5.0, 80.0, 0.3}};
    const hb_location_t at_tri[2] = {at_section(2, 1.0), at_section(3, 1.0)};
    const double clamp_tri[2][3] = {{5.0, 80.0, 0.45}, {40.0, 10.0, -0.2}};
    const site_t sites_one[3] = {{"soma", 0, 0.5}, {"dend", 1, 0.5}, {"clamp", 1, 1.0}};
    const site_t sites_tri[3] = {{"soma", 0, 0.5}, {"dend", 1, 1.0}, {"clamp", 2, 1.0}};
    size_t i;
    json_t *row;
    json_array_foreach(root, i, row) {
        const int nseg = (int)json_integer_value(json_object_get(row, "nseg"));
        const double dt = json_number_value(json_object_get(row, "dt"));
        const json_t *meas = json_object_get(row, "measurements");
        double d = three ? run_cell(tri, 4, nseg, 100.0, at_tri, clamp_tri, 2, sites_tri, 3, meas, dt, 100.0)
                         : run_cell(one, 2, nseg, 100.0, at_one, clamp_one, 1, sites_one, 3, meas, dt, 100.0);
        printf("%s nseg %d dt %g: max |t - NEURON| = %.3g ms over 3 probes\n", file, nseg, dt, d);
        CHECKF(d < SPIKE_TOL_MS, "%s nseg %d: spikes differ by %.3g ms", file, nseg, d);
        CHECKF(d < 0.5 * dt, "%s nseg %d: not NEURON's steps (%.3g ms)", file, nseg, d);
    }
    json_decref(root);
}

/* NEURON's node `node` of neuron-matrix/NAME_matrix.txt as a location: its section's end SWC id and x. */
static int matrix_location(const hb_model_t *model, const char *name, int node, hb_location_t *loc)
{
    char path[1024], line[1024], sec[64], want_sec[64] = "";
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/%s_matrix.txt", HB_DATA_DIR, name);
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    if (!f) return 0;
    int i, kind, found = 0;
    long id, end_id = -1;
    double x, want_x = -1;
    for (int pass = 0; pass < 2; pass++) { /* 1: the node's section and x; 2: that section's end id */
        rewind(f);
        while (fgets(line, sizeof line, f)) {
            if (line[0] == '#' ||
                sscanf(line, "%d %*d %d %ld %*f %*f %*f %*f %*f %*f %*f %*f %*f %63s %lf", &i, &kind,
                       &id, sec, &x) != 5)
                continue;
            if (pass == 0 && i == node) {
                snprintf(want_sec, sizeof want_sec, "%s", sec);
                want_x = x;
            }
            if (pass == 1 && kind == 2 && strcmp(sec, want_sec) == 0) end_id = id;
        }
    }
    fclose(f);
    hb_location_t end = {HB_LOC_SAMPLE, end_id, 0, 0.0, 0};
    int end_node;
    hb_node_info_t info;
    if (end_id >= 0 && hb_model_locate(model, &end, &end_node) == HB_SUCCESS &&
        hb_cable_node(hb_model_cable(model), end_node, &info) == HB_SUCCESS) {
        *loc = at_section(info.section, want_x);
        found = 1;
    }
    CHECKF(found, "%s: NEURON node %d not found", name, node);
    return found;
}

/* neuron-matrix/NAME_trace_hh.txt: soma and tip every 0.25 ms, spike times in the header. */
static void matrix_hh(const char *name)
{
    char path[1024], line[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/%s_trace_hh.txt", HB_DATA_DIR, name);
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    if (!f) return;
    double del = -1, amp = 0, want[64], t, a, b;
    int tip = -1, n_want = 0;
    trace_t ref[2] = {{0, NULL, NULL}, {0, NULL, NULL}};
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p;
        if (line[0] == '#') {
            if ((p = strstr(line, "del="))) sscanf(p, "del=%lf", &del);
            if ((p = strstr(line, "amp="))) sscanf(p, "amp=%lf", &amp);
            if ((p = strstr(line, " node "))) sscanf(p, " node %d", &tip);
            if (strstr(line, "# spikes") && (p = strstr(line, "): "))) {
                int used;
                for (p += 3; n_want < 64 && sscanf(p, "%lf%n", &want[n_want], &used) == 1; p += used)
                    n_want++;
            }
            continue;
        }
        if (sscanf(line, "%lf %lf %lf", &t, &a, &b) != 3) continue;
        if (ref[0].n == cap) {
            cap = cap ? 2 * cap : 256;
            for (int k = 0; k < 2; k++) {
                ref[k].t = realloc(ref[k].t, (size_t)cap * sizeof(double));
                ref[k].v = realloc(ref[k].v, (size_t)cap * sizeof(double));
            }
        }
        ref[0].t[ref[0].n] = ref[1].t[ref[1].n] = t;
        ref[0].v[ref[0].n++] = a;
        ref[1].v[ref[1].n++] = b;
    }
    fclose(f);
    CHECKF(del >= 0 && amp > 0 && tip > 0 && n_want > 0 && ref[0].n > 100,
           "%s: header del=%g amp=%g tip=%d spikes=%d rows=%d", name, del, amp, tip, n_want, ref[0].n);

    snprintf(path, sizeof path, "%s/reference/neuron-matrix/%s.swc", HB_DATA_DIR, name);
    hb_morph_t *morph = NULL;
    hb_model_t *model = NULL;
    hb_sim_t *sim = NULL;
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_PER_SEGMENT;
    CHECK_OK(hb_morph_load_swc(path, NULL, &morph));
    if (morph) CHECK_OK(hb_model_create(morph, &disc, &model));
    hb_location_t tip_at;
    if (!model || !matrix_location(model, name, tip, &tip_at)) goto out;
    hb_mech_t pas, hh;
    hb_mech_default(HB_MECH_PAS, &pas);
    hb_mech_default(HB_MECH_HH, &hh);
    pas.g_pas = 1e-4;
    pas.e_pas = -65.0;
    CHECK_OK(hb_model_insert(model, HB_REGION_ALL, &pas));
    CHECK_OK(hb_model_insert(model, 1, &hh));
    const hb_location_t soma_at = {HB_LOC_SOMA, 0, 0, 0.0, 0};
    CHECK_OK(hb_model_add_iclamp(model, &soma_at, del, 1e9, amp));
    add_probe(model, soma_at, "soma", 1, 0.0);
    add_probe(model, tip_at, "tip", 0, 0.0);
    sim = cell_run(model, 0.025, ref[0].t[ref[0].n - 1], ref[0].t[1] - ref[0].t[0]);
    if (!sim) goto out;
    double worst_v, worst_t;
    const int n_spikes = against_neuron(sim, ref, 2, want, n_want, name, &worst_v, &worst_t);
    printf("%s hh: %d spikes (NEURON %d), max |t - NEURON| %.3g ms, max |v - NEURON| %.3g mV\n", name,
           n_spikes, n_want, worst_t, worst_v);
    CHECKF(worst_t < SPIKE_TOL_MS, "%s: spike times differ by %.3g ms", name, worst_t);
    CHECKF(worst_v < 0.5, "%s: traces differ by %.3g mV", name, worst_v);
    CHECKF(worst_v < 1e-3, "%s: traces differ by %.3g mV (expected float-geometry level)", name, worst_v);
out:
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
    trace_free(&ref[0]);
    trace_free(&ref[1]);
}

/* connect_dend.hoc: HH soma (Ra 123) with passive dendrites at soma(0) and soma(1). */
static void connect_dend(void)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-connect-dend/cell3soma.dat.ref", HB_DATA_DIR);
    trace_t ref;
    trace_read(path, &ref);
    if (ref.n == 202 && ref.t[0] == 201.0) { /* the "201 2" size line: not a sample */
        ref.n--;
        memmove(ref.t, ref.t + 1, (size_t)ref.n * sizeof *ref.t);
        memmove(ref.v, ref.v + 1, (size_t)ref.n * sizeof *ref.v);
    }
    if (ref.n != 201) {
        CHECKF(0, "%s: %d rows, expected 201", path, ref.n);
        trace_free(&ref);
        return;
    }
    const hb_section_spec_t secs[3] = {{"soma", -1, 0.0, 18.8, 18.8, 1},
                                       {"dend0", 0, 0.0, 701.9, 3.18, 3},
                                       {"dend1", 0, 1.0, 549.1, 2.0, 3}};
    cell_t c;
    if (cell_build(&c, secs, 3, 5, 123.0, -70.0)) {
        add_probe(c.model, at_section(c.map[0], 0.5), "soma", 0, 0.0);
        hb_sim_t *sim = cell_run(c.model, 0.025, 5.0, 0.025);
        const double *t, *v;
        int n;
        if (sim && hb_sim_sample_times(sim, &t, &n) == HB_SUCCESS &&
            hb_sim_probe_trace(sim, 0, &v, &n) == HB_SUCCESS) {
            trace_error_t e = trace_compare(t, v, n, &ref, 1.0, 1.0);
            printf("connect_dend soma: %d samples, max |v - NEURON| %.3g mV\n", e.matched, e.max_abs);
            CHECKF(e.matched == 201, "connect_dend: %d samples matched", e.matched);
            CHECKF(e.max_abs < 0.5, "connect_dend: trace differs by %.3g mV", e.max_abs);
            /* The file has 6 significant digits. */
            CHECKF(e.max_abs < 1e-3, "connect_dend: trace differs by %.3g mV (expected rounding)",
                   e.max_abs);
        }
        hb_sim_destroy(sim);
    }
    cell_free(&c);
    trace_free(&ref);
}

int main(void)
{
    soma();
    sticks("ball_and_stick.json", 0);
    sticks("ball_and_3stick.json", 1);
    matrix_hh("small");
    matrix_hh("cell300");
    connect_dend();
    return check_summary("sim_neuron");
}
