/*
 * What a simulation refuses and what stops it (docs/model.md, section 6): parameters outside
 * their ranges (model API and model files, with the key path), runs of more than
 * HB_SIM_MAX_STEPS steps, recordings that cannot fit in memory, duplicate names, and a state
 * that turns NaN or infinite (HB_ERR_NONFINITE with the cell, node and time; on the GPU too
 * where there is one).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdlib.h>
#include <unistd.h>

#include "sim_common.h"
#include "sim/sim_engine.h"

static hb_sim_t *parse(const char *text, hb_status_t *status)
{
    hb_sim_t *sim = NULL;
    *status = hb_sim_parse_json(text, strlen(text), "model.json", ".", &sim);
    return sim;
}

/* A model file is refused with `message` in the error. */
static void refused(const char *what, const char *text, const char *message)
{
    hb_status_t status;
    hb_sim_t *sim = parse(text, &status);
    CHECKF(status == HB_ERR_INVALID_VALUE && !sim && strstr(hb_last_error(), message),
           "%s: %s \"%s\"", what, hb_status_name(status), hb_last_error());
    hb_sim_destroy(sim);
}

/* A one-compartment cable with hh and a probe, one key replaced. */
static void cable_file(char *out, size_t size, const char *top, const char *cell,
                       const char *cable, const char *mech, const char *amp)
{
    snprintf(out, size,
             "{\"t_stop\": 5%s, \"cells\": [{\"cable\": {%s}%s,"
             " \"mechanisms\": [{\"name\": \"hh\"%s}, {\"name\": \"pas\", \"region\": \"axon\"}],"
             " \"stimuli\": [{\"type\": \"iclamp\", \"at\": {\"section\": 0}, \"del\": 1, \"dur\": 1,"
             " \"amp\": %s}], \"probes\": [{\"name\": \"v\", \"at\": {\"section\": 0}}]}]}",
             top, cable, cell, mech, amp);
}

/* The eight model files that ran to NaN or inf with exit 0: each refused by key. */
static void test_file_ranges(void)
{
    static const struct {
        const char *what, *top, *cell, *cable, *mech, *amp, *message;
    } bad[] = {
        {"Ra 1e308", "", ", \"Ra\": 1e308", "\"length\": 100, \"diam\": 1", "", "0.1",
         "model.json: cells[0].Ra: expected a number from 0.001 to 1e+09 [ohm cm], found 1e+308"},
        {"diameter 1e-300", "", "", "\"length\": 100, \"diam\": 1e-300", "", "0.1",
         "cells[0].cable.diam: expected a number from 0.001 to 100000 [um], found 1e-300"},
        {"length 1e308", "", "", "\"length\": 1e308, \"diam\": 1", "", "0.1",
         "cells[0].cable.length: expected a number from 0.001 to 1e+07 [um], found 1e+308"},
        {"celsius -1e6", ", \"celsius\": -1e6", "", "\"length\": 100, \"diam\": 1", "", "0.1",
         "model.json: celsius: expected a number from -273.15 to 100 [degC], found -1e+06"},
        {"pas g 1e308", "", "", "\"length\": 100, \"diam\": 1",
         "}, {\"name\": \"pas\", \"g\": 1e308", "0.1",
         "cells[0].mechanisms[1].g: expected a number from 0 to 1000 [S/cm2], found 1e+308"},
        {"IClamp amp 1e308", "", "", "\"length\": 100, \"diam\": 1", "", "1e308",
         "cells[0].stimuli[0].amp: expected a number from -1e+06 to 1e+06 [nA], found 1e+308"},
        {"ena 1e308", "", "", "\"length\": 100, \"diam\": 1", ", \"ena\": 1e308", "0.1",
         "cells[0].mechanisms[0].ena: expected a number from -1000 to 1000 [mV], found 1e+308"},
        {"v_init 1e308", ", \"v_init\": 1e308", "", "\"length\": 100, \"diam\": 1", "", "0.1",
         "model.json: v_init: expected a number from -1000 to 1000 [mV], found 1e+308"},
        {"cm 0", "", ", \"cm\": 0", "\"length\": 100, \"diam\": 1", "", "0.1",
         "cells[0].cm: expected a number from 0.001 to 1000 [uF/cm2], found 0"},
        {"region Ra", "", ", \"regions\": [{\"region\": \"dend\", \"Ra\": 1e-9}]",
         "\"length\": 100, \"diam\": 1", "", "0.1", "cells[0].regions[0].Ra: expected a number"},
        {"gkbar", "", "", "\"length\": 100, \"diam\": 1", ", \"gkbar\": 2000", "0.1",
         "cells[0].mechanisms[0].gkbar: expected a number from 0 to 1000 [S/cm2], found 2000"},
        {"t_stop 1e300", ", \"t_stop\": 1e300", "", "", "", "", ""}, /* below */
    };
    char text[2048];
    for (size_t k = 0; k + 1 < sizeof bad / sizeof *bad; k++) {
        cable_file(text, sizeof text, bad[k].top, bad[k].cell, bad[k].cable, bad[k].mech, bad[k].amp);
        refused(bad[k].what, text, bad[k].message);
    }
    /* the same file with every value in range runs */
    cable_file(text, sizeof text, "", "", "\"length\": 100, \"diam\": 1", "", "0.1");
    hb_status_t status;
    hb_sim_t *sim = parse(text, &status);
    CHECKF(status == HB_SUCCESS && sim, "valid cable: %s", hb_last_error());
    if (sim) CHECK_OK(hb_sim_run(sim));
    hb_sim_destroy(sim);
    /* edges of the ranges are accepted */
    cable_file(text, sizeof text, ", \"celsius\": -273.15, \"v_init\": -1000", ", \"Ra\": 1e9",
               "\"length\": 1e7, \"diam\": 0.001", ", \"ena\": 1000, \"gnabar\": 1000", "-1e6");
    sim = parse(text, &status);
    CHECKF(status == HB_SUCCESS && sim, "edges of the ranges: %s", hb_last_error());
    hb_sim_destroy(sim);
}

/* More steps than a long can count, or than HB_SIM_MAX_STEPS: refused before converting. */
static void test_step_limit(void)
{
    refused("t_stop 1e300", "{\"t_stop\": 1e300, \"cells\": [{\"cable\": {\"length\": 10, \"diam\": 1}}]}",
            "model.json: t_stop: 1e+300 ms at dt = 0.025 ms is 4e+301 steps; expected at most 1e+12");
    refused("dt 1e-300", "{\"t_stop\": 5, \"dt\": 1e-300, \"cells\": [{\"cable\": {\"length\": 10, "
            "\"diam\": 1}}]}", "model.json: t_stop: 5 ms at dt = 1e-300 ms is 5e+300 steps");
    refused("t_stop 1e12", "{\"t_stop\": 1e12, \"cells\": [{\"cable\": {\"length\": 10, \"diam\": 1}}]}",
            "t_stop: 1e+12 ms at dt = 0.025 ms is 4e+13 steps; expected at most 1e+12 steps");
    refused("sample_dt 1e300", "{\"t_stop\": 5, \"sample_dt\": 1e300, \"cells\": [{\"cable\": "
            "{\"length\": 10, \"diam\": 1}}]}", "model.json: sample_dt: 1e+300 ms at dt = 0.025 ms");
    /* the API */
    hb_morph_t *morph = NULL;
    const hb_section_spec_t soma = {"soma", -1, 0.0, 10.0, 10.0, 1};
    hb_model_t *model = sections_model(&soma, 1, 1, 100.0, 1.0, &morph, NULL);
    if (!model) return;
    hb_sim_t *sim = NULL;
    hb_sim_options_t opt = sim_options(0.025, 1e300, 0.0);
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "expected at most 1e+12 (HB_SIM_MAX_STEPS)"));
    opt = sim_options(1e-300, 5.0, 0.0);
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "5e+300 steps"));
    opt = sim_options(0.025, 5.0, 1e300);
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "sample_dt = 1e+300 ms"));
    opt = sim_options(0.025, 1e6, 0.0);
    CHECK_OK(hb_sim_create(&model, 1, &opt, &sim));
    CHECK(hb_sim_steps(sim) == 40000000L);
    if (sim) CHECK_OK(hb_sim_advance(sim, 10));
    CHECK(sim && hb_sim_advance(sim, HB_SIM_MAX_STEPS - 5) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "HB_SIM_MAX_STEPS") && hb_sim_time(sim) == 0.25);
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* The model API refuses what the file refuses. */
static void test_api_ranges(void)
{
    hb_morph_t *morph = NULL;
    const hb_section_spec_t tiny = {"soma", -1, 0.0, 10.0, 1e-300, 1};
    CHECK(hb_model_build_sections(&tiny, 1, "cell", &morph, NULL) == HB_ERR_INVALID_VALUE &&
          !morph && strstr(hb_last_error(), "cell: section 0 'soma': diam = 1e-300 um; expected a "
                                            "number from 0.001 to 100000 [um]"));
    const hb_section_spec_t longer = {"soma", -1, 0.0, 1e308, 10.0, 1};
    CHECK(hb_model_build_sections(&longer, 1, "cell", &morph, NULL) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "length = 1e+308 um"));
    const hb_section_spec_t soma = {"soma", -1, 0.0, 10.0, 10.0, 1};
    CHECK_OK(hb_model_build_sections(&soma, 1, "cell", &morph, NULL));
    if (!morph) return;
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    hb_model_t *model = NULL;
    disc.ra_ohm_cm = 1e308;
    CHECK(hb_model_create(morph, &disc, &model) == HB_ERR_INVALID_VALUE && !model &&
          strstr(hb_last_error(), "Ra = 1e+308 ohm cm"));
    hb_discretization_default(&disc);
    disc.cm_by_type[3] = -1.0;
    CHECK(hb_model_create(morph, &disc, &model) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "cm of region 3 = -1 uF/cm2"));
    hb_discretization_default(&disc);
    CHECK_OK(hb_model_create(morph, &disc, &model));
    if (!model) {
        hb_morph_destroy(morph);
        return;
    }
    hb_mech_t pas, hh;
    hb_mech_default(HB_MECH_PAS, &pas);
    hb_mech_default(HB_MECH_HH, &hh);
    pas.g_pas = 1e308;
    CHECK(hb_model_insert(model, HB_REGION_ALL, &pas) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "pas: g_pas = 1e+308 S/cm2; expected a number from 0 to 1000"));
    hh.ena = 1e308;
    CHECK(hb_model_insert(model, HB_REGION_ALL, &hh) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "hh: ena = 1e+308 mV"));
    hb_mech_default(HB_MECH_HH, &hh);
    hh.g_pas = 1e308; /* a pas field: not hh's, not checked */
    CHECK_OK(hb_model_insert(model, HB_REGION_ALL, &hh));
    const hb_location_t mid = at_section(0, 0.5);
    CHECK(hb_model_add_iclamp(model, &mid, 1.0, 1.0, 1e308) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "IClamp: amp = 1e+308 nA"));
    hb_synapse_t syn;
    hb_synapse_default(HB_SYN_EXP, &syn);
    syn.e_mv = -1e308;
    CHECK(hb_model_add_synapse(model, &mid, &syn, NULL) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "ExpSyn: e = -1e+308 mV"));
    hb_sim_options_t opt = sim_options(0.025, 5.0, 0.0);
    hb_sim_t *sim = NULL;
    opt.celsius = -1e6;
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "celsius = -1e+06 degC"));
    opt = sim_options(0.025, 5.0, 0.0);
    opt.v_init_mv = 1e308;
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "v_init = 1e+308 mV"));
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* A cable of 1 nm driven by -1e6 nA under hh's formulas: every value in range, but the
 * formulas overflow at the second step. */
static const char nan_model[] =
    "{\"t_stop\": %g, \"dt\": 0.025, \"hh_table\": false, \"backend\": \"%s\","
    " \"cells\": [{\"count\": %d, \"cable\": {\"length\": 0.001, \"diam\": 0.001}, \"cm\": 0.001,"
    " \"mechanisms\": [{\"name\": \"hh\"}],"
    " \"stimuli\": [{\"type\": \"iclamp\", \"at\": {\"section\": 0}, \"del\": 0, \"dur\": 100,"
    " \"amp\": -1e6}], \"probes\": [{\"name\": \"v\", \"at\": {\"section\": 0}}]},"
    " {\"cable\": {\"length\": 100, \"diam\": 1}, \"mechanisms\": [{\"name\": \"pas\"}]}]}";

/* The message of a run of nan_model, "" when it did not fail with HB_ERR_NONFINITE. */
static void run_nan(double t_stop, const char *backend, int count, char *message, size_t size,
                    double *t_end, int *samples)
{
    char text[2048];
    snprintf(text, sizeof text, nan_model, t_stop, backend, count);
    hb_status_t status;
    hb_sim_t *sim = parse(text, &status);
    message[0] = '\0';
    CHECKF(sim != NULL, "%s: %s", backend, hb_last_error());
    if (!sim) return;
    status = hb_sim_run(sim);
    if (status == HB_ERR_NONFINITE) snprintf(message, size, "%s", hb_last_error());
    CHECKF(status == HB_ERR_NONFINITE, "%s: %s %s", backend, hb_status_name(status), hb_last_error());
    *t_end = hb_sim_time(sim);
    const double *t;
    hb_sim_sample_times(sim, &t, samples);
    /* stopped: no more steps until hb_sim_init */
    CHECK(hb_sim_advance(sim, 1) == HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "hb_sim_init"));
    CHECK_OK(hb_sim_init(sim));
    CHECK_OK(hb_sim_advance(sim, 1));
    hb_sim_destroy(sim);
}

static void test_nonfinite_run(void)
{
    char message[1024];
    double t_end = 0.0;
    int samples = 0;
    /* found at the first check (step 64), cells of the shared group first: cell 0 */
    run_nan(10.0, "seq", 20, message, sizeof message, &t_end, &samples);
    CHECKF(strstr(message, "simulation: v = nan mV in cell 0, node 0 (section 0, x = 0) at t = 1.6 ms "
                           "(finite at t = 0 ms)") != NULL, "%s", message);
    CHECKF(t_end == 64 * 0.025 && samples == 65, "stopped at %g ms with %d samples", t_end, samples);
    /* a run shorter than one check interval is checked at t_stop */
    run_nan(0.05, "seq", 1, message, sizeof message, &t_end, &samples);
    CHECKF(strstr(message, "v = nan mV in cell 0, node 0 (section 0, x = 0) at t = 0.05 ms") != NULL,
           "%s", message);
    run_nan(10.0, "omp", 20, message, sizeof message, &t_end, &samples);
    CHECKF(strstr(message, "in cell 0, node 0 (section 0, x = 0) at t = 1.6 ms") != NULL, "omp: %s",
           message);
    if (hb_backend_available(HB_BACKEND_CUDA)) { /* the GPU's check says the same */
        char cpu[1024];
        run_nan(10.0, "seq", 40, cpu, sizeof cpu, &t_end, &samples);
        run_nan(10.0, "cuda", 40, message, sizeof message, &t_end, &samples);
        CHECKF(strcmp(cpu, message) == 0 && t_end == 1.6 && samples == 65,
               "GPU: \"%s\" vs CPU \"%s\", %g ms, %d samples", message, cpu, t_end, samples);
        run_nan(0.05, "cuda", 1, message, sizeof message, &t_end, &samples);
        CHECKF(strstr(message, "at t = 0.05 ms") != NULL, "GPU: %s", message);
    } else {
        printf("no CUDA device: the GPU's check is not run here\n");
    }
}

/* NaN put into one cell's state by hand: that cell, and only a cell, is reported. */
static void test_nonfinite_injected(int shared)
{
    const hb_section_spec_t secs[2] = {{"soma", -1, 0.0, 10.0, 10.0, 1},
                                       {"dend", 0, 1.0, 100.0, 1.0, 3}};
    enum { CELLS = 20 };
    hb_morph_t *morphs[CELLS] = {NULL};
    hb_model_t *models[CELLS] = {NULL}, *cells[CELLS];
    const int n_models = shared ? 1 : CELLS; /* shared: copies of one; else Ra of its own each */
    hb_mech_t pas;
    hb_mech_default(HB_MECH_PAS, &pas);
    int made = 1;
    for (int c = 0; c < n_models && made; c++) {
        models[c] = sections_model(secs, 2, 3, 100.0 + c, 1.0, &morphs[c], NULL);
        made = models[c] != NULL;
        if (made) CHECK_OK(hb_model_insert(models[c], HB_REGION_ALL, &pas));
    }
    for (int c = 0; c < CELLS; c++) cells[c] = models[shared ? 0 : c];
    hb_sim_options_t opt = sim_options(0.025, 10.0, 0.5);
    hb_sim_t *sim = NULL;
    if (made) CHECK_OK(hb_sim_create(cells, CELLS, &opt, &sim));
    if (sim) {
        CHECK(hb_sim_shared_groups(sim) == shared);
        CHECK_OK(hb_sim_init(sim));
        const group_t *gr = &sim->groups[0];
        const size_t w = (size_t)gr->k.width, m = (size_t)gr->k.m;
        CHECK(sim->n_groups == 1 && w == 16 && gr->k.blocks == 2 && gr->k.count == CELLS);
        /* a padding lane (slot 25 of 32): never a cell, never reported */
        gr->v[1 * m * w + 4 * w + 9] = NAN;
        CHECK_OK(hb_sim_advance(sim, 200));
        /* cell 17, node 4 */
        const size_t slot = (size_t)sim->slot_of[17];
        gr->v[slot / w * m * w + 4 * w + slot % w] = INFINITY;
        const hb_status_t status = hb_sim_advance(sim, 200);
        CHECKF(status == HB_ERR_NONFINITE && strstr(hb_last_error(), "in cell 17, node ") &&
                   strstr(hb_last_error(), "at t = 6.4 ms (finite at t = 4.8 ms)"),
               "shared %d: %s %s", shared, hb_status_name(status), hb_last_error());
        CHECK(hb_sim_time(sim) == 256 * 0.025);
        const double *t;
        int n;
        hb_sim_sample_times(sim, &t, &n);
        CHECKF(n == 13 && t[n - 1] == 6.0, "%d samples to %g ms", n, n ? t[n - 1] : -1.0);
        const double *v;
        CHECK_OK(hb_sim_voltages(sim, 16, &v));
        CHECK(isfinite(v[0]));
    }
    hb_sim_destroy(sim);
    for (int c = 0; c < n_models; c++) {
        hb_model_destroy(models[c]);
        hb_morph_destroy(morphs[c]);
    }
}

/* What cannot be recorded in memory is refused before a step; streaming keeps it bounded. */
static void test_recording(void)
{
    hb_morph_t *morph = NULL;
    const hb_section_spec_t soma = {"soma", -1, 0.0, 10.0, 10.0, 1};
    hb_model_t *model = sections_model(&soma, 1, 1, 100.0, 1.0, &morph, NULL);
    if (!model) return;
    hb_mech_t pas;
    hb_mech_default(HB_MECH_PAS, &pas);
    CHECK_OK(hb_model_insert(model, HB_REGION_ALL, &pas));
    add_probe(model, at_section(0, 0.5), "v", 0, 0.0);
    hb_sim_t *sim = NULL;
    /* 4e11 samples: more than an int counts */
    hb_sim_options_t opt = sim_options(0.025, 1e10, 0.0);
    CHECK_OK(hb_sim_create(&model, 1, &opt, &sim));
    CHECK(sim && hb_sim_run(sim) == HB_ERR_ALLOC && hb_sim_time(sim) == 0.0 &&
          strstr(hb_last_error(), "400000000001 samples of 1 probe") &&
          strstr(hb_last_error(), "hb_sim_clear_records"));
    /* in chunks, cleared in between: the same run goes on with bounded memory */
    CHECK_OK(hb_sim_init(sim));
    for (int k = 0; k < 10; k++) {
        CHECK_OK(hb_sim_clear_records(sim));
        CHECK_OK(hb_sim_advance(sim, 100));
        const double *t;
        int n;
        hb_sim_sample_times(sim, &t, &n);
        CHECK(n == 100 && t[99] == (double)(k + 1) * 100 * 0.025);
    }
    hb_sim_destroy(sim);
    /* 2e9 samples of 1000 probes: an int counts them, 16 TB of memory does not hold them */
    char name[32];
    for (int p = 1; p < 1000; p++) {
        snprintf(name, sizeof name, "v%d", p);
        add_probe(model, at_section(0, 0.5), name, 0, 0.0);
    }
    opt = sim_options(0.025, 2e9 * 0.025, 0.0);
    CHECK_OK(hb_sim_create(&model, 1, &opt, &sim));
    CHECK(sim && hb_sim_run(sim) == HB_ERR_ALLOC && strstr(hb_last_error(), "of 1000 probes") &&
          strstr(hb_last_error(), "bytes"));
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* Probe and section names are columns and places: each one once; CSV headers escaped. */
static void test_names(void)
{
    const char head[] = "{\"t_stop\": 1, \"cells\": [{\"sections\": [{\"name\": \"soma\", \"length\": 10,"
                        " \"diam\": 10}, {\"name\": \"d\", \"parent\": \"soma\", \"length\": 10, "
                        "\"diam\": 1}";
    char text[1024];
    snprintf(text, sizeof text, "%s, {\"name\": \"d\", \"parent\": \"soma\", \"length\": 5, \"diam\": 1}]}]}",
             head);
    refused("duplicate section", text, "model.json: cells[0].sections[2].name: the name \"d\" is "
                                       "taken by cells[0].sections[1]; expected a name of its own");
    snprintf(text, sizeof text, "%s, {\"parent\": \"soma\", \"length\": 5, \"diam\": 1, \"type\": 4},"
             " {\"name\": \"2\", \"parent\": \"soma\", \"length\": 5, \"diam\": 1, \"type\": 2}]}]}", head);
    refused("an index as a name", text, "cells[0].sections[3].name: the name \"2\" is taken by "
                                        "cells[0].sections[2]");
    snprintf(text, sizeof text, "%s], \"probes\": [{\"name\": \"v\", \"at\": \"soma\"}, {\"name\": \"w\","
             " \"at\": \"soma\"}, {\"name\": \"v\", \"at\": {\"section\": \"d\"}}]}]}", head);
    refused("duplicate probe", text, "cells[0].probes[2].name: the name \"v\" is taken by "
                                     "cells[0].probes[0]; expected a name of its own (a CSV column)");
    snprintf(text, sizeof text, "%s], \"probes\": [{\"name\": \"v1\", \"at\": \"soma\"}, "
             "{\"at\": \"soma\"}]}]}", head);
    refused("a default name taken", text, "cells[0].probes[1]: the name \"v1\" is taken");
    snprintf(text, sizeof text, "%s], \"probes\": [{\"name\": \"a\\\"b\", \"at\": \"soma\"}]}]}", head);
    refused("a quote", text, "cells[0].probes[0].name: expected a name without commas, quotes or "
                             "line breaks (a CSV column), found \"a\"b\"");
    /* a section index past the morphology's, even past an int: said as given */
    refused("section 2^40", "{\"t_stop\": 1, \"cells\": [{\"cable\": {\"length\": 10, \"diam\": 1}, "
            "\"probes\": [{\"at\": {\"section\": 1099511627776}}]}]}",
            "cells[0].probes[0].at.section: expected a section index from 0 to 0, found 1099511627776");
    /* the API: the same name twice refused; commas and quotes quoted in the CSV header */
    hb_morph_t *morph = NULL;
    const hb_section_spec_t soma = {"soma", -1, 0.0, 10.0, 10.0, 1};
    hb_model_t *model = sections_model(&soma, 1, 1, 100.0, 1.0, &morph, NULL);
    if (!model) return;
    add_probe(model, at_section(0, 0.5), "a,\"b\"", 0, 0.0);
    add_probe(model, at_section(0, 0.5), NULL, 0, 0.0); /* v1 */
    hb_probe_spec_t twice = {at_section(0, 0.5), "v1", 0, 0.0};
    CHECK(hb_model_add_probe(model, &twice, NULL) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "probe: the name \"v1\" is taken by probe 1"));
    hb_sim_options_t opt = sim_options(0.025, 0.05, 0.0);
    hb_sim_t *sim = run_model(model, &opt);
    char dir[] = "/tmp/hb_test_sim_limits_XXXXXX", path[256], line[256] = "";
    if (sim && mkdtemp(dir)) {
        CHECK_OK(hb_sim_write_csv(sim, dir));
        snprintf(path, sizeof path, "%s/probes.csv", dir);
        FILE *f = fopen(path, "r");
        if (f && fgets(line, sizeof line, f)) CHECKF(strcmp(line, "t_ms,\"a,\"\"b\"\"\",v1\n") == 0, "%s", line);
        else CHECK(0);
        if (f) fclose(f);
        remove(path);
        snprintf(path, sizeof path, "%s/spikes.csv", dir);
        remove(path);
        rmdir(dir);
    }
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* spikes.csv lists the spikes of all probes in time order (as a run streams them). */
static void test_spike_order(void)
{
    static const char text[] =
        "{\"t_stop\": 60, \"cells\": [{\"sections\": [{\"name\": \"soma\", \"length\": 12.6157, "
        "\"diam\": 12.6157}, {\"name\": \"dend\", \"parent\": \"soma\", \"length\": 200, \"diam\": 1}],"
        " \"discretization\": {\"nseg\": 11}, \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"},"
        " {\"name\": \"pas\", \"region\": \"dend\"}], \"stimuli\": [{\"type\": \"iclamp\", \"at\": "
        "{\"section\": \"dend\", \"x\": 1}, \"del\": 5, \"dur\": 80, \"amp\": 0.3}], \"probes\": ["
        "{\"name\": \"tip\", \"at\": {\"section\": \"dend\", \"x\": 1}, \"spike_threshold\": -10},"
        "{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}]}";
    hb_status_t status;
    hb_sim_t *sim = parse(text, &status);
    CHECKF(sim != NULL, "%s", hb_last_error());
    if (!sim) return;
    CHECK_OK(hb_sim_run(sim));
    char dir[] = "/tmp/hb_test_sim_limits_XXXXXX", path[256], line[256];
    if (mkdtemp(dir)) {
        CHECK_OK(hb_sim_write_csv(sim, dir));
        snprintf(path, sizeof path, "%s/spikes.csv", dir);
        FILE *f = fopen(path, "r");
        int rows = 0, order = 1, switches = 0;
        double last = -1.0;
        char prev = 0;
        while (f && fgets(line, sizeof line, f))
            if (rows++ > 0) {
                const double t = atof(strchr(line, ',') + 1);
                order &= t >= last;
                switches += prev && prev != line[0];
                prev = line[0];
                last = t;
            }
        CHECKF(rows > 5 && order && switches > 2, "%d rows, in order %d, %d switches", rows, order,
               switches);
        if (f) fclose(f);
        remove(path);
        snprintf(path, sizeof path, "%s/probes.csv", dir);
        remove(path);
        rmdir(dir);
    }
    hb_sim_destroy(sim);
}

int main(void)
{
    test_file_ranges();
    test_step_limit();
    test_api_ranges();
    test_nonfinite_run();
    test_nonfinite_injected(1);
    test_nonfinite_injected(0);
    test_recording();
    test_names();
    test_spike_order();
    return check_summary("sim_limits");
}
