/*
 * Catalogue mechanisms in the engine (common/cat_step.h, src/sim/sim_cat.c): the bbp
 * catalogue's NaTs2_t, K_Pst, SKv3_1, Ca_HVA, SK_E2 and Ih on a small cell against NEURON 8.2 (tests/neuron_cat_bbp.txt, written by
 * tests/neuron_cat_bbp.py), and with CaDynamics_E2 writing cai (neuron_cat_bbp_cadyn.txt):
 * every spike in NEURON's step, the soma within 0.05 mV, eca by NEURON's ion_style, cai; the
 * same with Crank-Nicolson against NEURON's secondorder 2 (neuron_cat_bbp_cn.txt, the ion
 * currents corrected at the half step); the same bits alone, in a group of copies, with
 * per-lane parameters and in a mixed group (both methods); parameter errors. With an argument
 * DIR, only the Crank-Nicolson comparison, against DIR/neuron_cat_bbp_cn.txt (cat_cn_neuron.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/cat_step.h"
#include "cpu/cat_ions_cpu.h"
#include "core/bench.h"
#include "mech/catalogue.h"
#include "sim/sim_cat.h"
#include "sim_common.h"

#define ANY -HUGE_VAL, HUGE_VAL

/* CaDynamics_E2 as NEURON's nocmodl steps it (cnexp of the linear cai' = a + b cai: cai +=
 * (1 - exp(dt b)) (-a/b - cai)), written here until the generator emits this form of cnexp
 * (docs/nmodl.md): the engine's concentration path, cai in the ion's ci (USEION ca READ ica
 * WRITE cai), the step's total ica. Fields: gamma, decay [ms], depth [um], minCai [mM]. */
static void cadyn_state(const hb_cat_block_t *blk, int j0, int j1)
{
    const int W = blk->width;
    const double faraday = 1.602176634e-19 * 6.02214076e23; /* NEURON 8.2's (faraday) */
    for (int j = j0; j < j1; j++)
        for (int k = 0; k < blk->lanes; k++) {
            const size_t r = (size_t)blk->node[j * W + k] * (size_t)W + (size_t)k;
            const double *f = blk->field + (size_t)j * 4 * (size_t)W + (size_t)k;
            const double gamma = f[0], decay = f[W], depth = f[2 * W], min_cai = f[3 * W];
            const double ica = blk->ion[0].i[r], cai = blk->ion[0].ci[r];
            const double b = -1.0 / decay;
            const double a = -10000.0 * (ica * gamma / (2.0 * faraday * depth)) + min_cai / decay;
            blk->ion[0].ci[r] = cai + (1.0 - exp(blk->dt * b)) * (-(a / b) - cai);
        }
}

static const hb_cat_cpu_t cpu_cadyn = {NULL, NULL, cadyn_state, NULL, NULL, NULL, NULL, NULL, NULL};
static const hb_cat_field_t p_cadyn[] = {{"gamma", "", 0.05, ANY},
                                         {"decay", "ms", 80.0, ANY},
                                         {"depth", "um", 0.1, ANY},
                                         {"minCai", "mM", 1e-4, ANY}};
static const hb_cat_ion_t cadyn_ions[] = {{"ca", 2, HB_ION_I, HB_ION_CI}};
static const hb_cat_mech_t CaDynamics_E2 = {"CaDynamics_E2", HB_CAT_DENSITY, 4, p_cadyn, 0, NULL,
                                            0, NULL, 0, NULL, 1, cadyn_ions, -1, 0, 1, 0, 4, 0,
                                            NULL, &cpu_cadyn, NULL, 0, 0, 0};

typedef struct {
    hb_morph_t *morph;
    hb_model_t *model;
} cell_t;

/* The bbp catalogue's mechanism `name` (hh: the default catalogue's; CaDynamics_E2 the test's,
 * "bbp::CaDynamics_E2" the generated). */
static const hb_cat_mech_t *find(const char *name)
{
    if (!strcmp(name, "CaDynamics_E2")) return &CaDynamics_E2;
    if (!strncmp(name, "bbp::", 5)) name += 5;
    char qualified[64];
    snprintf(qualified, sizeof qualified, "%s::%s", strcmp(name, "hh") ? "bbp" : "default", name);
    const hb_cat_mech_t *mech = NULL;
    CHECK_OK(hb_catalogue_find(NULL, 0, qualified, &mech));
    return mech;
}

/* Mechanism `name` in region with its first RANGE PARAMETER (the conductance) g. */
static void insert(hb_model_t *md, int region, const char *name, double g)
{
    const hb_cat_mech_t *mech = find(name);
    if (!mech) return;
    const char *key = mech->param[0].name;
    CHECK_OK(hb_model_insert_cat(md, region, mech, 1, &key, &g, "test"));
}

/* tests/neuron_cat_bbp.py's cell, the soma's NaTs2_t gbar scaled by na_scale; cadyn: with
 * CaDynamics_E2 (gamma 0.5) in the soma, 1 the test's, 2 the bbp catalogue's generated. */
static int make_cell(cell_t *c, const char *swc, double na_scale, int cadyn)
{
    memset(c, 0, sizeof *c);
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_PER_SEGMENT;
    CHECK_OK(hb_morph_load_swc(swc, NULL, &c->morph));
    if (!c->morph) return 0;
    CHECK_OK(hb_model_create(c->morph, &disc, &c->model));
    if (!c->model) return 0;
    hb_mech_t pas;
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.g_pas = 1e-4;
    pas.e_pas = -65.0;
    CHECK_OK(hb_model_insert(c->model, HB_REGION_ALL, &pas));
    insert(c->model, 1, "NaTs2_t", 0.9 * na_scale);
    insert(c->model, 1, "K_Pst", 0.1);
    insert(c->model, 1, "SKv3_1", 0.5);
    insert(c->model, 1, "Ca_HVA", 0.001);
    insert(c->model, 1, "SK_E2", 0.05);
    insert(c->model, 1, "Ih", 8e-5);
    insert(c->model, 3, "Ih", 2e-4);
    insert(c->model, 3, "Ca_HVA", 5e-4);
    if (cadyn) insert(c->model, 1, cadyn == 2 ? "bbp::CaDynamics_E2" : "CaDynamics_E2", 0.5);
    CHECK_OK(hb_model_set_ion(c->model, 1, "k", HB_ION_E, -85.0));
    const hb_location_t soma_at = {HB_LOC_SOMA, 0, 0, 0.0, 0};
    CHECK_OK(hb_model_add_iclamp(c->model, &soma_at, 2.0, 1e9, 0.3));
    add_probe(c->model, soma_at, "soma", 1, 0.0);
    return 1;
}

static void free_cell(cell_t *c)
{
    hb_model_destroy(c->model);
    hb_morph_destroy(c->morph);
}

static hb_method_t method = HB_METHOD_EULER; /* test_groups' */

static hb_sim_options_t options(double t_stop)
{
    hb_sim_options_t opt = sim_options(0.025, t_stop, 0.25);
    opt.celsius = 34.0;
    opt.method = method;
    return opt;
}

static const char *small_swc(void)
{
    static char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
    return path;
}

/* References from tests/ (dir NULL) or from dir (cat_cn_neuron.sh: NEURON's, written live). */
static const char *ref_dir = NULL;

static void test_neuron(const char *file, int cadyn, hb_method_t how)
{
    char path[1024];
    if (ref_dir) snprintf(path, sizeof path, "%s/%s", ref_dir, file);
    else snprintf(path, sizeof path, "%s/tests/%s", HB_SOURCE_DIR, file);
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "%s: cannot open", path);
    if (!f) return;
    double want[64], t_ref[512], v_ref[512], eca_soma = NAN, eca_dend = NAN;
    double cai_end = NAN, eca_end = NAN;
    int n_want = 0, n = 0;
    char line[4096];
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "# eca soma %lf dend %lf", &eca_soma, &eca_dend) == 2) continue;
        if (sscanf(line, "# cai soma at the end %lf eca %lf", &cai_end, &eca_end) == 2) continue;
        if (!strncmp(line, "# spikes", 8)) {
            const char *p = strchr(line, ':') + 1;
            int used;
            while (n_want < 64 && sscanf(p, "%lf%n", &want[n_want], &used) == 1) {
                n_want++;
                p += used;
            }
            continue;
        }
        if (line[0] != '#' && n < 512 && sscanf(line, "%lf %lf", &t_ref[n], &v_ref[n]) == 2) n++;
    }
    fclose(f);
    CHECKF(n > 100 && n_want >= 1 && isfinite(eca_soma), "%s: %d rows, %d spikes", path, n,
           n_want);
    cell_t c;
    if (!make_cell(&c, small_swc(), 1.0, cadyn)) return;
    hb_sim_options_t opt = options(t_ref[n - 1]);
    opt.method = how;
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(&c.model, 1, &opt, &sim));
    if (sim) CHECK_OK(hb_sim_init(sim));
    if (sim && !cadyn) { /* ion_style: eca by Nernst at init in the soma (SK_E2 reads cai),
                          * constant in the dendrites (Ca_HVA reads eca only) */
        const group_t *gr = &sim->groups[0];
        const hb_step_cat_t *cat = gr->cat;
        int ca = -1;
        for (int s = 0; cat && s < cat->n_ion; s++)
            if (!strcmp(cat->ion[s].name, "ca")) ca = s;
        CHECKF(ca >= 0, "no ca species");
        if (ca >= 0) {
            const double es = cat->ion[ca].e[sim->probe_index[0]]; /* the soma's */
            const double ed = cat->ion[ca].e[hb_step_element(&gr->k, 0, gr->k.m - 1)];
            CHECKF(fabs(es - eca_soma) < 1e-9 && fabs(ed - eca_dend) < 1e-9,
                   "eca soma %.17g dend %.17g; NEURON %.17g %.17g", es, ed, eca_soma, eca_dend);
        }
    }
    if (sim) CHECK_OK(hb_sim_run(sim));
    const double *ts, *v, *spikes;
    int nt = 0, ns = 0;
    if (sim) {
        CHECK_OK(hb_sim_sample_times(sim, &ts, &nt));
        CHECK_OK(hb_sim_probe_trace(sim, 0, &v, &nt));
        CHECK_OK(hb_sim_spikes(sim, 0, &spikes, &ns));
        CHECKF(nt == n, "%d samples, NEURON %d", nt, n);
        double worst = 0.0;
        for (int i = 0; i < nt && i < n; i++) {
            CHECKF(fabs(ts[i] - t_ref[i]) < 1e-9, "sample %d at %g, NEURON %g", i, ts[i], t_ref[i]);
            worst = fmax(worst, fabs(v[i] - v_ref[i]));
        }
        double worst_t = 0.0;
        for (int k = 0; k < ns && k < n_want; k++) worst_t = fmax(worst_t, fabs(spikes[k] - want[k]));
        CHECKF(ns == n_want, "%d spikes, NEURON %d", ns, n_want);
        CHECKF(worst_t < 1e-9, "spike steps differ from NEURON's by %.3g ms", worst_t);
        CHECKF(worst < 0.05, "soma differs from NEURON by %.3g mV", worst);
        const hb_step_cat_t *cat = sim->groups[0].cat;
        int ca = -1;
        for (int s = 0; cat && s < cat->n_ion; s++)
            if (!strcmp(cat->ion[s].name, "ca")) ca = s;
        double cai = NAN, eca = NAN;
        if (ca >= 0) {
            cai = cat->ion[ca].ci[sim->probe_index[0]];
            eca = cat->ion[ca].e[sim->probe_index[0]];
        }
        /* recordable (a network's "record" section): the ion's and a mechanism's values */
        hb_rec_sample_t rec;
        const group_t *gr = &sim->groups[0];
        CHECK_OK(hb_sim_record_resolve(sim, 0, NULL, "cai", &rec));
        CHECK(rec.kind == HB_REC_HOST &&
              hb_rec_value(&rec, gr->v, gr->hh_state, gr->syn_state) ==
                  cat->ion[ca].ci[sim->probe_index[0]]);
        CHECK_OK(hb_sim_record_resolve(sim, 0, NULL, "NaTs2_t.m", &rec));
        const double m = hb_rec_value(&rec, gr->v, gr->hh_state, gr->syn_state);
        CHECKF(m > 0.0 && m < 1.0, "NaTs2_t.m = %g", m);
        CHECK(hb_sim_record_resolve(sim, 0, NULL, "NaTs2_t.q", &rec) == HB_ERR_INVALID_VALUE);
        CHECKF(strstr(hb_last_error(), "nothing of that name") != NULL, "%s", hb_last_error());
        const hb_location_t dend = {HB_LOC_NODE, 0, 0, 0.0, gr->k.m - 2};
        CHECK(hb_sim_record_resolve(sim, 0, &dend, "NaTs2_t.m", &rec) == HB_ERR_INVALID_VALUE);
        CHECKF(strstr(hb_last_error(), "no such catalogue mechanism") != NULL, "%s",
               hb_last_error());
        hb_rec_var_t parsed;
        CHECK(hb_rec_parse("cai", &parsed) == HB_SUCCESS && !strcmp(parsed.unit, "mM"));
        CHECK(hb_rec_parse("NaTs2_t.gNaTs2_tbar", &parsed) == HB_SUCCESS &&
              !strcmp(parsed.unit, "S/cm2"));
        /* cai after the last step; NEURON's eca is from the step's start (ion_cur) */
        CHECKF(fabs(cai - cai_end) < 1e-6 * cai_end, "soma cai %.17g at the end, NEURON %.17g",
               cai, cai_end);
        CHECKF(fabs(eca - eca_end) < 1e-3, "soma eca %.17g at the end, NEURON %.17g", eca,
               eca_end);
        printf("%s: %d spikes (NEURON %d, all in its step), max |v - NEURON| %.3g mV over "
               "%d samples; soma cai %.6g mM (NEURON %.6g), eca %.6g mV\n", file, ns, n_want,
               worst, nt, cai, cai_end, eca);
    }
    hb_sim_destroy(sim);
    free_cell(&c);
}

static hb_backend_t backend = HB_BACKEND_SEQ;
static int fused_groups = -1; /* traces()' simulation's hb_sim_fused_groups after its run */

/* Soma traces of cells (models[i]) simulated together, into v[i * n ..]. */
static int traces(hb_model_t *const *models, int n_cells, int steps, double *out)
{
    hb_sim_options_t opt = options(steps * 0.025);
    opt.sample_dt_ms = 0.025;
    opt.backend = backend;
    opt.threads = backend == HB_BACKEND_OMP ? 2 : 0;
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(models, n_cells, &opt, &sim));
    if (!sim || hb_sim_run(sim) != HB_SUCCESS) {
        CHECKF(0, "run: %s", hb_last_error());
        hb_sim_destroy(sim);
        return 0;
    }
    fused_groups = hb_sim_fused_groups(sim);
    for (int c = 0; c < n_cells; c++) {
        const double *v;
        int nt;
        CHECK_OK(hb_sim_probe_trace(sim, c, &v, &nt));
        CHECKF(nt == steps + 1, "%d samples", nt);
        memcpy(out + (size_t)c * (size_t)(steps + 1), v, (size_t)(steps + 1) * sizeof *v);
    }
    hb_sim_destroy(sim);
    return 1;
}

/* The same bits whichever cells share the cell's group or block: alone; among copies of
 * itself (a shared group); beside cells of other parameters (per-lane fields); in a mixed
 * group beside a cell of another shape. */
static void test_groups(void)
{
    enum { STEPS = 800, CELLS = 5 };
    cell_t c[CELLS], other;
    const double scale[CELLS] = {1.0, 1.0, 1.0, 0.7, 1.3};
    for (int i = 0; i < CELLS; i++)
        if (!make_cell(&c[i], small_swc(), scale[i], 1)) return;
    char path[1024];
    snprintf(path, sizeof path, "%s/morphologies/ball_and_stick.swc", HB_DATA_DIR);
    if (!make_cell(&other, path, 1.0, 1)) return;
    const size_t n = STEPS + 1;
    double *alone = malloc(CELLS * n * sizeof *alone), *v = malloc((CELLS + 1) * n * sizeof *v);
    for (int i = 0; i < CELLS; i++) traces(&c[i].model, 1, STEPS, alone + i * n);
    hb_model_t *copies[3] = {c[0].model, c[0].model, c[0].model};
    if (traces(copies, 3, STEPS, v))
        for (int i = 0; i < 3; i++)
            CHECKF(!memcmp(v + i * n, alone, n * sizeof *v), "copy %d differs from alone", i);
    hb_model_t *all[CELLS];
    for (int i = 0; i < CELLS; i++) all[i] = c[i].model;
    if (traces(all, CELLS, STEPS, v))
        for (int i = 0; i < CELLS; i++)
            CHECKF(!memcmp(v + i * n, alone + i * n, n * sizeof *v),
                   "cell %d (NaTs2_t x %g) differs in a group from alone", i, scale[i]);
    for (int w = 1; w <= 16; w *= 2) { /* any block width (tuning sim.cpu_lanes): the same bits */
        char spec[32];
        snprintf(spec, sizeof spec, "sim.cpu_lanes=%d", w);
        CHECK_OK(hb_set_default_tuning(spec));
        if (traces(all, CELLS, STEPS, v))
            for (int i = 0; i < CELLS; i++)
                CHECKF(!memcmp(v + i * n, alone + i * n, n * sizeof *v),
                       "cell %d differs in blocks of %d lanes", i, w);
        CHECK_OK(hb_set_default_tuning(NULL));
    }
    /* The fused end of the CPU's steps (docs/sim-engine.md, "Fused states and currents"): the
     * group of five fuses (CaDynamics_E2 and Ca_HVA in passes of their own, the others fused);
     * apart (tuning sim.cpu_fuse=0), the same bits. */
    if (traces(all, CELLS, STEPS, v)) CHECKF(fused_groups == 1, "%d groups fused", fused_groups);
    CHECK_OK(hb_set_default_tuning("sim.cpu_fuse=0"));
    if (traces(all, CELLS, STEPS, v)) {
        CHECKF(fused_groups == 0, "sim.cpu_fuse=0: %d groups fused", fused_groups);
        for (int i = 0; i < CELLS; i++)
            CHECKF(!memcmp(v + i * n, alone + i * n, n * sizeof *v),
                   "cell %d differs with the passes apart", i);
    }
    CHECK_OK(hb_set_default_tuning(NULL));
    { /* a record of a current's ASSIGNED (gNaTs2_t): its group steps apart (between the fused
       * steps of one advance the field holds the next step's value), the same bits */
        hb_sim_options_t opt = options(STEPS * 0.025);
        opt.sample_dt_ms = 0.025;
        hb_sim_t *sim = NULL;
        hb_rec_sample_t rec;
        CHECK_OK(hb_sim_create(all, CELLS, &opt, &sim));
        const double *tv;
        int nt = 0;
        if (sim && hb_sim_record_resolve(sim, 0, NULL, "NaTs2_t.gNaTs2_t", &rec) == HB_SUCCESS &&
            hb_sim_set_records(sim, 1, &rec, 1) == HB_SUCCESS && hb_sim_run(sim) == HB_SUCCESS &&
            hb_sim_probe_trace(sim, 0, &tv, &nt) == HB_SUCCESS) {
            CHECKF(hb_sim_fused_groups(sim) == 0, "%d groups fused beside a record of a field",
                   hb_sim_fused_groups(sim));
            CHECKF(nt == STEPS + 1 && !memcmp(tv, alone, n * sizeof *tv),
                   "cell 0 differs beside a record of a field");
        } else {
            CHECKF(0, "record run: %s", hb_last_error());
        }
        hb_sim_destroy(sim);
    }
    if (hb_backend_available(HB_BACKEND_OMP)) { /* two threads: the same bits */
        backend = HB_BACKEND_OMP;
        if (traces(all, CELLS, STEPS, v))
            for (int i = 0; i < CELLS; i++)
                CHECKF(!memcmp(v + i * n, alone + i * n, n * sizeof *v),
                       "cell %d differs on 2 threads", i);
        backend = HB_BACKEND_SEQ;
    }
    { /* a second hb_sim_init and run: the first run's bits (states and ions set again) */
        hb_sim_options_t opt = options(STEPS * 0.025);
        opt.sample_dt_ms = 0.025;
        hb_sim_t *sim = NULL;
        CHECK_OK(hb_sim_create(&c[3].model, 1, &opt, &sim));
        const double *tv;
        int nt = 0;
        if (sim && hb_sim_run(sim) == HB_SUCCESS && hb_sim_init(sim) == HB_SUCCESS &&
            hb_sim_run(sim) == HB_SUCCESS && hb_sim_probe_trace(sim, 0, &tv, &nt) == HB_SUCCESS)
            CHECKF(nt == STEPS + 1 && !memcmp(tv, alone + 3 * n, n * sizeof *tv),
                   "a second run differs from the first");
        else
            CHECKF(0, "second run: %s", hb_last_error());
        hb_sim_destroy(sim);
    }
    hb_model_t *mixed[2] = {c[3].model, other.model};
    if (traces(mixed, 2, STEPS, v))
        CHECKF(!memcmp(v, alone + 3 * n, n * sizeof *v), "in a mixed group: differs from alone");
    int spikes = 0;
    for (size_t i = 1; i < n; i++) spikes += alone[i] > 0.0 && alone[i - 1] <= 0.0;
    CHECKF(spikes >= 1, "the cell does not spike in %d steps", STEPS);
    CHECKF(memcmp(alone, alone + 3 * n, n * sizeof *v) != 0, "gbar has no effect");
    free(alone);
    free(v);
    for (int i = 0; i < CELLS; i++) free_cell(&c[i]);
    free_cell(&other);
}

static void test_errors(void)
{
    cell_t c;
    if (!make_cell(&c, small_swc(), 1.0, 0)) return;
    const char *key = "gNaTs2_tbr";
    double value = 0.1;
    CHECK(hb_model_insert_cat(c.model, 1, find("NaTs2_t"), 1, &key, &value, "model.json: mechanisms[0]") ==
          HB_ERR_INVALID_VALUE);
    CHECKF(strstr(hb_last_error(), "did you mean \"gNaTs2_tbar\"") != NULL, "%s", hb_last_error());
    key = "gnabar"; /* hh.mod's <0,1e9> */
    value = -1.0;
    CHECK(hb_model_insert_cat(c.model, 1, find("hh"), 1, &key, &value, "m") == HB_ERR_INVALID_VALUE);
    CHECKF(strstr(hb_last_error(), "from 0 to 1e+09") != NULL, "%s", hb_last_error());
    key = "gNaTs2_tbar";
    value = NAN;
    CHECK(hb_model_insert_cat(c.model, 1, find("NaTs2_t"), 1, &key, &value, "m") == HB_ERR_INVALID_VALUE);
    CHECK(hb_model_set_cat_global(c.model, find("Ih"), "ehcn", -40.0, "m") == HB_SUCCESS);
    CHECK(hb_model_set_cat_global(c.model, find("Ih"), "echn", -40.0, "m") == HB_ERR_INVALID_VALUE);
    CHECKF(strstr(hb_last_error(), "did you mean \"ehcn\"") != NULL, "%s", hb_last_error());
    CHECK(hb_model_set_ion(c.model, 1, "ca", HB_ION_CI, -1.0) == HB_ERR_INVALID_VALUE);
    hb_sim_options_t opt = options(1.0);
    hb_sim_t *ok = NULL;
    CHECK_OK(hb_sim_create(&c.model, 1, &opt, &ok));
    if (ok) { /* checkpoints carry the catalogue state (tests/test_checkpoint.c) */
        FILE *f = tmpfile();
        CHECK_OK(hb_sim_init(ok));
        CHECK(f && hb_sim_save(ok, f, "ckpt") == HB_SUCCESS);
        if (f) fclose(f);
    }
    hb_sim_destroy(ok);
    free_cell(&c);
}

/* The model file's catalogue mechanisms, GLOBALs and ions: the same bits as the C API's cell;
 * its errors name the key. */
static const char *model_json(const char *extra_mech, const char *ions)
{
    static char text[4096];
    snprintf(text, sizeof text,
             "{\"t_stop\": 20, \"dt\": 0.025, \"celsius\": 34, \"sample_dt\": 0.025,\n"
             " \"cells\": [{\"morphology\": \"%s\", \"section_rule\": \"hinesbatch\",\n"
             "  \"discretization\": {\"scheme\": \"neuron\", \"policy\": \"per-segment\"},\n"
             "  \"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65},\n"
             "   {\"name\": \"NaTs2_t\", \"region\": \"soma\", \"gNaTs2_tbar\": 0.9},\n"
             "   {\"name\": \"K_Pst\", \"region\": \"soma\", \"gK_Pstbar\": 0.1},\n"
             "   {\"name\": \"SKv3_1\", \"region\": \"soma\", \"gSKv3_1bar\": 0.5},\n"
             "   {\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\", \"gCa_HVAbar\": 0.001},\n"
             "   {\"name\": \"SK_E2\", \"region\": \"soma\", \"gSK_E2bar\": 0.05},\n"
             "   {\"name\": \"bbp::Ih\", \"region\": \"soma\", \"gIhbar\": 8e-5},\n"
             "   {\"name\": \"bbp::Ih\", \"region\": \"dend\", \"gIhbar\": 2e-4},\n"
             "   {\"name\": \"bbp::Ca_HVA\", \"region\": \"dend\", \"gCa_HVAbar\": 5e-4}%s],\n"
             "  \"ions\": [%s],\n"
             "  \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 2, \"dur\": 1e9, "
             "\"amp\": 0.3}],\n"
             "  \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": 0}]}]}\n",
             small_swc(), extra_mech, ions);
    return text;
}

static void test_model_file(void)
{
    enum { STEPS = 800 };
    const char *text = model_json("", "{\"region\": \"soma\", \"ek\": -85}");
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_parse_json(text, strlen(text), "cat.json", ".", &sim));
    cell_t c;
    double *want = malloc((STEPS + 1) * sizeof *want);
    if (sim && make_cell(&c, small_swc(), 1.0, 0) && traces(&c.model, 1, STEPS, want)) {
        CHECK_OK(hb_sim_run(sim));
        const double *v;
        int nt = 0;
        CHECK_OK(hb_sim_probe_trace(sim, 0, &v, &nt));
        CHECKF(nt == STEPS + 1 && !memcmp(v, want, (STEPS + 1) * sizeof *v),
               "the model file's cell differs from the C API's (%d samples)", nt);
        free_cell(&c);
    }
    free(want);
    hb_sim_destroy(sim);
    static const struct {
        const char *mech, *ions, *says;
    } bad[] = {
        {",{\"name\": \"NaTs2_t\", \"gNaTs2_tbr\": 1}", "",
         "cells[0].mechanisms[9]: NaTs2_t has no parameter \"gNaTs2_tbr\"; did you mean \"gNaTs2_tbar\"?"},
        {",{\"name\": \"NaTs2\"}", "", "cells[0].mechanisms[9].name"},
        {",{\"name\": \"Ih\"}", "", "bbp::Ih"},
        {",{\"name\": \"bbp::Ih\", \"ehcn\": \"x\"}", "", "cells[0].mechanisms[9].ehcn: expected a number"},
        {",{\"name\": \"default::hh\", \"gnabar\": -1}", "", "from 0 to 1e+09"},
        {"", "{\"enaa\": 50}", "cells[0].ions[0].enaa: expected \"region\" or e<ion>"},
        {"", "{\"region\": \"soma\", \"cai\": -1}", "cells[0].ions[0].cai: ion: ca concentration"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        text = model_json(bad[i].mech, bad[i].ions);
        sim = NULL;
        CHECKF(hb_sim_parse_json(text, strlen(text), "cat.json", ".", &sim) == HB_ERR_INVALID_VALUE,
               "bad %zu accepted", i);
        CHECKF(strstr(hb_last_error(), bad[i].says) != NULL, "bad %zu: %s", i, hb_last_error());
        hb_sim_destroy(sim);
    }
    /* a GLOBAL in the mechanism's object: one value per model */
    text = model_json(",{\"name\": \"bbp::Ih\", \"region\": \"soma\", \"ehcn\": -40}", "");
    sim = NULL;
    CHECK_OK(hb_sim_parse_json(text, strlen(text), "cat.json", ".", &sim));
    if (sim) {
        const hb_step_cat_t *cat = sim->groups[0].cat;
        double ehcn = NAN;
        for (int q = 0; cat && q < cat->n_mech; q++)
            if (!strcmp(cat->mech[q].mech->name, "Ih")) ehcn = cat->mech[q].global[0];
        CHECKF(ehcn == -40.0, "Ih's ehcn %g, expected -40", ehcn);
    }
    hb_sim_destroy(sim);
}


/* ball_and_stick.swc with hh in the soma, pas elsewhere, an IClamp below threshold, and two
 * synapses: an ExpSyn at the dendrite's middle and an Exp2Syn on the soma, the hard-coded ones
 * (point 0) or the catalogue's generated from expsyn.mod and exp2syn.mod (point 1). */
static int synapse_cell(cell_t *c, int point)
{
    memset(c, 0, sizeof *c);
    char path[1024];
    snprintf(path, sizeof path, "%s/morphologies/ball_and_stick.swc", HB_DATA_DIR);
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_PER_SEGMENT;
    CHECK_OK(hb_morph_load_swc(path, NULL, &c->morph));
    if (!c->morph) return 0;
    CHECK_OK(hb_model_create(c->morph, &disc, &c->model));
    if (!c->model) return 0;
    hb_mech_t m;
    hb_mech_default(HB_MECH_PAS, &m);
    CHECK_OK(hb_model_insert(c->model, HB_REGION_ALL, &m));
    hb_mech_default(HB_MECH_HH, &m);
    CHECK_OK(hb_model_insert(c->model, 1, &m));
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
    const hb_location_t dend = {HB_LOC_SECTION, 0, 1, 0.5, 0};
    CHECK_OK(hb_model_add_iclamp(c->model, &soma, 2.0, 1e9, 0.05));
    add_probe(c->model, soma, "soma", 1, 0.0);
    int at[2] = {-1, -1};
    if (point) {
        const char *k0[] = {"tau", "e"}, *k1[] = {"tau1", "tau2", "e"};
        const double v0[] = {2.0, 0.0}, v1[] = {0.5, 3.0, -10.0};
        CHECK_OK(hb_model_add_point_process(c->model, &dend, "ExpSyn", 2, k0, v0, &at[0]));
        CHECK_OK(hb_model_add_point_process(c->model, &soma, "default::Exp2Syn", 3, k1, v1, &at[1]));
    } else {
        hb_synapse_t syn;
        hb_synapse_default(HB_SYN_EXP, &syn);
        syn.tau_ms = 2.0;
        CHECK_OK(hb_model_add_synapse(c->model, &dend, &syn, &at[0]));
        hb_synapse_default(HB_SYN_EXP2, &syn);
        syn.tau1_ms = 0.5, syn.tau2_ms = 3.0, syn.e_mv = -10.0;
        CHECK_OK(hb_model_add_synapse(c->model, &soma, &syn, &at[1]));
    }
    CHECKF(at[0] == 0 && at[1] == 1 && hb_model_synapse_count(c->model) == 2,
           "synapse indices %d, %d", at[0], at[1]);
    return 1;
}

/* Soma traces of cells given events between steps (hb_sim_deliver): every cell's synapse q at
 * step 40 + 150 j with weight 0.01 (j + 1) (q + 1) uS. */
static int event_traces(hb_model_t *const *models, int n_cells, int steps, double *out)
{
    hb_sim_options_t opt = options(steps * 0.025);
    opt.sample_dt_ms = 0.025;
    opt.celsius = 6.3;
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(models, n_cells, &opt, &sim));
    int ok = sim && hb_sim_init(sim) == HB_SUCCESS;
    for (int done = 0; ok && done < steps;) {
        if (done >= 40 && (done - 40) % 150 == 0)
            for (int c = 0; c < n_cells && ok; c++)
                for (int q = 0; q < hb_model_synapse_count(models[c]) && ok; q++)
                    ok = hb_sim_deliver(sim, c, q, 0.01 * ((done - 40) / 150 + 1) * (q + 1)) ==
                         HB_SUCCESS;
        const int chunk = done < 40 ? 40 - done : 150 - (done - 40) % 150;
        const int n = done + chunk > steps ? steps - done : chunk;
        ok = ok && hb_sim_advance(sim, n) == HB_SUCCESS;
        done += n;
    }
    for (int c = 0; c < n_cells && ok; c++) {
        const double *v;
        int nt;
        ok = hb_sim_probe_trace(sim, c, &v, &nt) == HB_SUCCESS && nt == steps + 1;
        if (ok) memcpy(out + (size_t)c * (size_t)(steps + 1), v, (size_t)(steps + 1) * sizeof *v);
    }
    CHECKF(ok, "synapse run: %s", hb_last_error());
    hb_sim_destroy(sim);
    return ok;
}

/* The C API's point processes (hb_model_add_point_process): the generated ExpSyn and Exp2Syn
 * give the hard-coded synapses' bits, alone, among copies (one instance per lane) and beside a
 * cell of another shape (a mixed group); bad names, keys and places refused. */
static void test_point_processes(void)
{
    enum { STEPS = 1000 };
    cell_t hand, gen, other;
    if (!synapse_cell(&hand, 0) || !synapse_cell(&gen, 1) || !make_cell(&other, small_swc(), 1.0, 0))
        return;
    const size_t n = STEPS + 1;
    double *a = malloc(n * sizeof *a), *b = malloc(3 * n * sizeof *b);
    if (event_traces(&hand.model, 1, STEPS, a) && event_traces(&gen.model, 1, STEPS, b))
        CHECKF(!memcmp(a, b, n * sizeof *a), "generated synapses differ from the hard-coded");
    hb_model_t *copies[3] = {gen.model, gen.model, gen.model};
    if (event_traces(copies, 3, STEPS, b))
        for (int i = 0; i < 3; i++)
            CHECKF(!memcmp(a, b + i * n, n * sizeof *a), "copy %d of the generated differs", i);
    hb_model_t *mixed[2] = {gen.model, other.model};
    if (event_traces(mixed, 2, STEPS, b))
        CHECKF(!memcmp(a, b, n * sizeof *a), "generated synapses in a mixed group differ");
    double peak = -1e9;
    for (size_t i = 0; i < n; i++) peak = a[i] > peak ? a[i] : peak;
    CHECKF(peak > -60.0, "the events move v too little (peak %g mV)", peak);
    /* refused */
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0}, end = {HB_LOC_SECTION, 0, 1, 1.0, 0};
    const char *bad_key[] = {"taux"};
    const double one = 1.0;
    CHECK(hb_model_add_point_process(gen.model, &soma, "ExpSyx", 0, NULL, NULL, NULL) ==
              HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "did you mean"));
    CHECK(hb_model_add_point_process(gen.model, &soma, "default::hh", 0, NULL, NULL, NULL) ==
              HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "hh is a density mechanism"));
    CHECK(hb_model_add_point_process(gen.model, &soma, "ExpSyn", 1, bad_key, &one, NULL) ==
              HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "did you mean \"tau\""));
    CHECK(hb_model_add_point_process(gen.model, &end, "ExpSyn", 0, NULL, NULL, NULL) ==
              HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "no membrane"));
    CHECK(hb_model_synapse_count(gen.model) == 2);
    free(a);
    free(b);
    free_cell(&hand);
    free_cell(&gen);
    free_cell(&other);
}

/* tests/nmodl/tm/TMSyn.mod from a user catalogue (tests/point_tm.sh) against NEURON 8.2
 * (tests/neuron/tm_reference.py): two connections onto one facilitating and depressing
 * synapse, each with its own resources in its weight vector (NET_RECEIVE's y, z, u, tsyn and
 * its INITIAL), the soma within 1e-9 mV of NEURON's; a second hb_sim_init resets the vectors
 * (the same bits again); both connections' events through one vector differ. */
static int test_tm(const char *lib, const char *ref)
{
    const hb_catalogue_t *cat = NULL;
    CHECK_OK(hb_catalogue_load(lib, &cat));
    const hb_cat_mech_t *tm = NULL;
    for (int q = 0; cat && q < cat->n_mech; q++)
        if (!strcmp(cat->mech[q].name, "TMSyn")) tm = &cat->mech[q];
    CHECKF(tm && tm->kind == HB_CAT_POINT && tm->n_weight == 5 && tm->cpu->net_init,
           "%s: TMSyn, a point process of 5 weights with NET_RECEIVE's INITIAL", lib);
    FILE *f = fopen(ref, "r");
    CHECKF(f != NULL, "cannot open %s", ref);
    enum { N = 601 };
    static double ref_v[N], ref_g[N], ref_i[N];
    int n_ref = 0;
    double t_ref;
    while (f && n_ref < N &&
           fscanf(f, "%lf %lf %lf %lf", &t_ref, &ref_v[n_ref], &ref_g[n_ref], &ref_i[n_ref]) == 4)
        n_ref++;
    if (f) fclose(f);
    CHECKF(n_ref == N, "%s: %d samples, expected %d", ref, n_ref, N);
    if (!tm || n_ref != N) return check_summary("sim_cat --tm");
    const hb_section_spec_t soma_spec = {"soma", -1, 0.0, 20.0, 20.0, 1};
    hb_morph_t *morph = NULL;
    hb_model_t *model = NULL;
    CHECK_OK(hb_model_build_sections(&soma_spec, 1, "soma", &morph, NULL));
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_FIXED;
    disc.count = 1;
    if (morph) CHECK_OK(hb_model_create(morph, &disc, &model));
    if (!model) return check_summary("sim_cat --tm");
    hb_mech_t pas;
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.g_pas = 1e-4;
    pas.e_pas = -65.0;
    CHECK_OK(hb_model_insert(model, HB_REGION_ALL, &pas));
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
    add_probe(model, soma, "soma", 0, 0.0);
    const char *keys[] = {"e", "tau_1", "tau_rec", "tau_facil", "U", "u0"};
    const double values[] = {0.0, 3.0, 200.0, 50.0, 0.3, 0.0};
    CHECK_OK(hb_model_add_point(model, &soma, tm, 6, keys, values, "test", NULL));
    hb_sim_options_t opt = sim_options(0.025, 150.0, 0.25);
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(&model, 1, &opt, &sim));
    int wa = -1, wb = -1;
    if (sim) {
        CHECK_OK(hb_sim_add_weights(sim, 0, 0, 0.004, &wa));
        CHECK_OK(hb_sim_add_weights(sim, 0, 0, 0.006, &wb));
    }
    CHECKF(wa == 0 && wb == 1, "weight vectors %d, %d", wa, wb);
    /* the synapse's g (a STATE) and i (an ASSIGNED) recorded as NEURON's syn._ref_g, _ref_i */
    hb_rec_sample_t rec[2];
    memset(rec, 0, sizeof rec);
    if (sim) {
        CHECK_OK(hb_sim_record_resolve(sim, 0, NULL, "syn[0].g", &rec[0]));
        CHECK_OK(hb_sim_record_resolve(sim, 0, NULL, "syn[0].i", &rec[1]));
        CHECK_OK(hb_sim_set_records(sim, 2, rec, 10));
        hb_rec_sample_t bad;
        CHECKF(hb_sim_record_resolve(sim, 0, NULL, "syn[0].tau_reck", &bad) != HB_SUCCESS &&
                   strstr(hb_last_error(), "did you mean \"tau_rec\"") != NULL,
               "syn[0].tau_reck: %s", hb_last_error());
    }
    /* NetStims A (5 ms, every 10, 8) and B (12.5 ms, every 20, 4), delay 1 ms; by = 1: both
     * through A's vector (one connection's state for both) */
    double first[N];
    for (int run = 0; sim && run < 4; run++) {
        const int by = run == 2;
        hb_sim_event_t ev[12];
        int n = 0;
        for (int k = 0; k < 8; k++) {
            const double t = 5.0 + 10.0 * k + 1.0;
            ev[n++] = (hb_sim_event_t){hb_event_step(t, 0.025), 0, 0, wa, t, 0.004};
        }
        for (int k = 0; k < 4; k++) {
            const double t = 12.5 + 20.0 * k + 1.0;
            ev[n++] = (hb_sim_event_t){hb_event_step(t, 0.025), 0, 0, by ? wa : wb, t, 0.006};
        }
        for (int a = 1; a < n; a++) /* by step */
            for (int b = a; b > 0 && ev[b].step < ev[b - 1].step; b--) {
                const hb_sim_event_t x = ev[b];
                ev[b] = ev[b - 1];
                ev[b - 1] = x;
            }
        const double *v = NULL;
        int nt = 0;
        if (run == 3) { /* saved at 75 ms, state scrambled by an init, loaded, continued */
            FILE *ck = tmpfile();
            int later = 0;
            while (later < n && ev[later].step < 3000) later++;
            if (!ck || hb_sim_init(sim) != HB_SUCCESS ||
                hb_sim_queue_events(sim, (size_t)n, ev) != HB_SUCCESS ||
                hb_sim_advance(sim, 3000) != HB_SUCCESS || hb_sim_save(sim, ck, "tm") != HB_SUCCESS ||
                hb_sim_init(sim) != HB_SUCCESS || (rewind(ck), hb_sim_load(sim, ck, "tm")) != HB_SUCCESS ||
                hb_sim_queue_events(sim, (size_t)(n - later), ev + later) != HB_SUCCESS ||
                hb_sim_advance(sim, 3000) != HB_SUCCESS || hb_sim_probe_trace(sim, 0, &v, &nt) != HB_SUCCESS ||
                nt != N) {
                CHECKF(0, "TMSyn checkpoint: %s (%d samples)", hb_last_error(), nt);
                if (ck) fclose(ck);
                break;
            }
            fclose(ck);
            CHECKF(!memcmp(first, v, sizeof first), "TMSyn: the run restored at 75 ms differs "
                   "from the run through");
            continue;
        }
        if (hb_sim_init(sim) != HB_SUCCESS || hb_sim_queue_events(sim, (size_t)n, ev) != HB_SUCCESS ||
            hb_sim_advance(sim, 6000) != HB_SUCCESS || hb_sim_probe_trace(sim, 0, &v, &nt) != HB_SUCCESS ||
            nt != N) {
            CHECKF(0, "TMSyn run %d: %s (%d samples)", run, hb_last_error(), nt);
            break;
        }
        if (run == 0) {
            double worst = 0.0, top = -1e9;
            for (int i = 0; i < N; i++) worst = fmax(worst, fabs(v[i] - ref_v[i]));
            for (int i = 0; i < N; i++) top = fmax(top, v[i]);
            printf("TMSyn: soma within %.3g mV of NEURON 8.2 over %d samples (v up to %.4g mV)\n",
                   worst, N, top);
            CHECKF(top > -50.0, "TMSyn: the events move v too little (%g mV)", top);
            CHECKF(worst < 1e-9, "TMSyn: %.3g mV from NEURON's soma", worst);
            memcpy(first, v, sizeof first);
            size_t rows = 0;
            const long *steps = NULL;
            const double *val = NULL;
            hb_sim_recorded(sim, &rows, &steps, &val);
            /* a sample at an event's time: NEURON delivers it at the end of the step, before
             * it records; the engine at the start of the next (the same dynamics), so its g
             * there is the value before the event: below NEURON's */
            double dg = 0.0, di = 0.0, gtop = 0.0;
            int at_event = 0, below = 0;
            for (size_t r = 0; r < rows && r < N; r++) {
                int event = 0;
                for (int k = 0; k < n; k++) event |= ev[k].step == steps[r];
                if (event) {
                    at_event++;
                    below += val[2 * r] < ref_g[r] - 1e-4;
                } else {
                    dg = fmax(dg, fabs(val[2 * r] - ref_g[r]));
                }
                di = fmax(di, fabs(val[2 * r + 1] - ref_i[r]));
                gtop = fmax(gtop, ref_g[r]);
            }
            printf("TMSyn: syn[0].g within %.3g uS (up to %.4g) outside the %d samples at an "
                   "event's time (%d of them before its jump), syn[0].i within %.3g nA of "
                   "NEURON 8.2 over %zu samples\n", dg, gtop, at_event, below, di, rows);
            CHECKF(rows == N && gtop > 1e-3, "TMSyn: %zu rows recorded, g up to %g", rows, gtop);
            CHECKF(at_event == 12 && below == 12, "TMSyn: %d samples at events, %d before the jump",
                   at_event, below);
            CHECKF(dg < 1e-12 && di < 1e-9, "TMSyn: g %.3g uS, i %.3g nA from NEURON's", dg, di);
        } else if (run == 1) {
            CHECKF(!memcmp(first, v, sizeof first), "a second hb_sim_init does not repeat the run");
        } else {
            CHECKF(memcmp(first, v, sizeof first) != 0, "one vector for both connections: the same");
        }
    }
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
    return check_summary("sim_cat --tm");
}

/* Crank-Nicolson (NEURON's secondorder 2): the ion currents' correction reaches CaDynamics_E2
 * (cai, and through eca and SK_E2 the voltage) and nothing else: the same cell without a
 * concentration mechanism is bitwise the same with or without it, while cai differs. */
static void test_cn_cells(void)
{
    enum { STEPS = 800 };
    cell_t c;
    if (!make_cell(&c, small_swc(), 1.0, 2)) return;
    double cai[2] = {NAN, NAN};
    for (int so = 0; so < 2; so++) {
        hb_sim_options_t opt = options(STEPS * 0.025);
        opt.method = HB_METHOD_CN;
        hb_sim_t *sim = NULL;
        CHECK_OK(hb_sim_create(&c.model, 1, &opt, &sim));
        if (!sim) break;
        hb_step_cat_t *cat = sim->groups[0].cat;
        CHECK(cat && cat->second_order == 1);
        if (cat) cat->second_order = so; /* 0: secondorder 1's currents */
        CHECK_OK(hb_sim_run(sim));
        for (int s = 0; cat && s < cat->n_ion; s++)
            if (!strcmp(cat->ion[s].name, "ca")) cai[so] = cat->ion[s].ci[sim->probe_index[0]];
        hb_sim_destroy(sim);
    }
    CHECKF(isfinite(cai[0]) && isfinite(cai[1]) && fabs(cai[0] - cai[1]) > 1e-4 * cai[1],
           "cai with and without the correction: %.17g %.17g", cai[0], cai[1]);
    free_cell(&c);
}

/* The CPU engine's Nernst pass over a block (hb_cpu_cat_nernst: 16 elements at a time, skipped
 * where none advances, a tail one by one) against hb_cat_nernst element by element: the same
 * bits where the style has HB_ION_EADVANCE (the concentrations' edge cases included), the
 * others untouched, for lengths around the chunk and valences 2, 1 and 0. */
static void test_nernst_pass(void)
{
    enum { N = 16 * 5 + 7 };
    const double ktf = 26.468139115099103; /* 1e3 R (34 + 273.15) / F [mV] */
    double ci[N], co[N], e[N];
    unsigned char style[N];
    for (int x = 0; x < N; x++) {
        ci[x] = 5e-5 * (1.0 + 0.37 * (x % 11)) * (x % 17 == 3 ? 1e3 : 1.0);
        co[x] = 2.0 + 0.01 * x;
        /* chunk 1 has no advancing element; chunk 2 every other; the rest and the tail all */
        style[x] = x < 16 ? HB_ION_EINIT | HB_ION_EADVANCE
                   : x < 32 ? HB_ION_EINIT
                   : x < 48 ? (x % 2 ? HB_ION_EADVANCE : 0)
                            : HB_ION_EADVANCE;
    }
    ci[5] = 0.0;   /* NEURON's nrn_nernst: ci <= 0 gives 1e6 */
    co[40 + 1] = -1.0; /* co <= 0 gives -1e6 */
    const double z[3] = {2.0, 1.0, 0.0};
    const int lengths[5] = {N, 16, 15, 33, 0};
    for (int iz = 0; iz < 3; iz++)
        for (int il = 0; il < 5; il++) {
            const int n = lengths[il];
            for (int x = 0; x < N; x++) e[x] = -777.0 - x;
            hb_cpu_cat_nernst(ktf, z[iz], ci, co, style, e, (size_t)n);
            int wrong = 0, first = -1;
            for (int x = 0; x < N; x++) {
                const double want = x < n && (style[x] & HB_ION_EADVANCE)
                                        ? hb_cat_nernst(ktf, ci[x], co[x], z[iz])
                                        : -777.0 - x;
                if (memcmp(&want, &e[x], sizeof want)) {
                    wrong++;
                    if (first < 0) first = x;
                }
            }
            CHECKF(wrong == 0, "Nernst pass, z %g, %d elements: %d differ from hb_cat_nernst "
                   "(first at %d)", z[iz], n, wrong, first);
        }
    /* the cases the pass must reach: a real potential, both edge values */
    CHECK(fabs(hb_cat_nernst(ktf, 5e-5, 2.0, 2.0) - 140.24) < 0.01);
    CHECK(hb_cat_nernst(ktf, 0.0, 2.0, 2.0) == 1e6);
    CHECK(hb_cat_nernst(ktf, 1e-4, -1.0, 2.0) == -1e6);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--tm")) return test_tm(argv[2], argv[3]);
    if (argc > 1) { /* cat_cn_neuron.sh: the Crank-Nicolson reference NEURON just wrote */
        ref_dir = argv[1];
        test_neuron("neuron_cat_bbp_cn.txt", 2, HB_METHOD_CN);
        return check_summary("sim_cat (live NEURON)");
    }
    test_nernst_pass();
    test_neuron("neuron_cat_bbp.txt", 0, HB_METHOD_EULER);
    test_neuron("neuron_cat_bbp_cadyn.txt", 1, HB_METHOD_EULER);
    test_neuron("neuron_cat_bbp_cadyn.txt", 2, HB_METHOD_EULER);
    test_neuron("neuron_cat_bbp_cn.txt", 2, HB_METHOD_CN);
    test_cn_cells();
    test_groups();
    method = HB_METHOD_CN;
    test_groups();
    method = HB_METHOD_EULER;
    test_errors();
    test_model_file();
    test_point_processes();
    return check_summary("sim_cat");
}
