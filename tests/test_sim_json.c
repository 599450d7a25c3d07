/*
 * Model files (JSON): a valid file reproduces NEURON's spike times, and each
 * kind of bad input is refused with the key path and what was expected.
 */
#define _POSIX_C_SOURCE 200809L
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>

#include "sim_common.h"
#include "sim/sim_engine.h"

static hb_sim_t *parse(const char *text)
{
    hb_sim_t *sim = NULL;
    hb_status_t status = hb_sim_parse_json(text, strlen(text), "model.json", HB_DATA_DIR, &sim);
    if (status != HB_SUCCESS) CHECKF(sim == NULL, "no simulation after an error");
    return status == HB_SUCCESS ? sim : NULL;
}

/* The NEURON validation spike times of reference/neuron-arbor-validation-2016/FILE, row `row`. */
static json_t *reference_row(const char *file, size_t row)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-arbor-validation-2016/%s", HB_DATA_DIR, file);
    json_error_t err;
    json_t *root = json_load_file(path, 0, &err);
    CHECKF(root != NULL, "%s: %s", path, err.text);
    json_t *r = root ? json_incref(json_array_get(root, row)) : NULL;
    json_decref(root);
    return r;
}

static double max_spike_diff(const hb_sim_t *sim, int probe, const json_t *want)
{
    const double *t;
    int n;
    CHECK_OK(hb_sim_spikes(sim, probe, &t, &n));
    CHECKF(n == (int)json_array_size(want), "probe %d: %d spikes, NEURON %d", probe, n,
           (int)json_array_size(want));
    double worst = n == (int)json_array_size(want) ? 0.0 : INFINITY;
    for (int k = 0; k < n && k < (int)json_array_size(want); k++)
        worst = fmax(worst, fabs(t[k] - json_number_value(json_array_get(want, (size_t)k))));
    return worst;
}

static const char ball_and_stick[] =
    "{\"t_stop\": 100, \"dt\": 0.001, \"sample_dt\": 1,\n"
    " \"cells\": [{\"name\": \"bs\",\n"
    "   \"sections\": [{\"name\": \"soma\", \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},\n"
    "                {\"name\": \"dend\", \"parent\": \"soma\", \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],\n"
    "   \"discretization\": {\"policy\": \"fixed\", \"nseg\": 5},\n"
    "   \"regions\": [{\"region\": \"soma\", \"nseg\": 1}],\n"
    "   \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"},\n"
    "                  {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": -65}],\n"
    "   \"stimuli\": [{\"type\": \"iclamp\", \"at\": {\"section\": \"dend\", \"x\": 1},\n"
    "                \"del\": 5, \"dur\": 80, \"amp\": 0.3}],\n"
    "   \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": 0},\n"
    "              {\"name\": \"dend\", \"at\": {\"section\": \"dend\", \"x\": 0.5}, \"spike_threshold\": -10},\n"
    "              {\"name\": \"clamp\", \"at\": {\"section\": 1, \"x\": 1}, \"spike_threshold\": 10}]}]}\n";

static void test_valid(void)
{
    /* ball_and_stick.json, nseg 5, dt 0.001: NEURON's spike times at three probes. */
    hb_sim_t *sim = parse(ball_and_stick);
    json_t *row = reference_row("ball_and_stick.json", 0);
    if (sim && row) {
        CHECK(json_integer_value(json_object_get(row, "nseg")) == 5);
        CHECK_OK(hb_sim_run(sim));
        const json_t *meas = json_object_get(row, "measurements");
        const char *keys[3] = {"soma", "dend", "clamp"};
        double worst = 0.0;
        for (int p = 0; p < 3; p++) {
            CHECK(strcmp(hb_sim_probe_name(sim, p), keys[p]) == 0);
            worst = fmax(worst, max_spike_diff(sim, p, json_object_get(json_object_get(meas, keys[p]), "spikes")));
        }
        printf("ball_and_stick from JSON: max |t - NEURON| %.3g ms\n", worst);
        CHECKF(worst < 0.5e-3, "JSON ball and stick: spikes differ by %g ms", worst);
    }
    json_decref(row);
    hb_sim_destroy(sim);

    /* An SWC cell, two copies, hh at the soma, pas everywhere; options and outputs. */
    char text[2048];
    snprintf(text, sizeof text,
             "{\"t_stop\": 10, \"dt\": 0.025, \"sample_dt\": 0.25, \"method\": \"cn\", \"celsius\": 6.3,"
             " \"spike_time\": \"interpolate\", \"v_init\": -65,"
             " \"cells\": [{\"count\": 2, \"morphology\": \"reference/neuron-matrix/small.swc\","
             "   \"discretization\": {\"policy\": \"per-segment\", \"scheme\": \"neuron\"},"
             "   \"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65}, {\"name\": \"hh\", \"region\": 1}],"
             "   \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 1, \"dur\": 20, \"amp\": 0.3}],"
             "   \"probes\": [{\"name\": \"soma\", \"at\": {\"sample\": 1}, \"spike_threshold\": 0},"
             "              {\"name\": \"n3\", \"at\": {\"node\": 3}}]}]}");
    sim = parse(text);
    if (sim) {
        hb_sim_options_t opt;
        CHECK_OK(hb_sim_options(sim, &opt));
        CHECK(opt.method == HB_METHOD_CN && opt.spike_time == HB_SPIKE_INTERPOLATE && opt.hh_table);
        CHECK(hb_sim_cell_count(sim) == 2 && hb_sim_probe_count(sim) == 4);
        CHECK(strcmp(hb_sim_probe_name(sim, 2), "c1.soma") == 0);
        CHECK_OK(hb_sim_run(sim));
        const double *t, *s0, *s1;
        int n, n0, n1;
        CHECK_OK(hb_sim_sample_times(sim, &t, &n));
        CHECK(n == 41 && fabs(t[40] - 10.0) < 1e-9);
        CHECK_OK(hb_sim_spikes(sim, 0, &s0, &n0));
        CHECK_OK(hb_sim_spikes(sim, 2, &s1, &n1));
        CHECKF(n0 >= 1 && n0 == n1 && s0[0] == s1[0], "copies: %d and %d spikes", n0, n1);
        CHECK(hb_sim_write_csv(sim, "/nonexistent-dir/x") == HB_ERR_IO &&
              strstr(hb_last_error(), "probes.csv"));
    }
    hb_sim_destroy(sim);
}

/* `text` must fail with `status` and a message containing each of the strings. */
static void expect_error(const char *what, const char *text, hb_status_t status, const char *m1,
                         const char *m2)
{
    hb_sim_t *sim = NULL;
    hb_status_t got = hb_sim_parse_json(text, strlen(text), "model.json", HB_DATA_DIR, &sim);
    const char *msg = hb_last_error();
    CHECKF(got == status && !sim && strstr(msg, m1) && (!m2 || strstr(msg, m2)),
           "%s: %s \"%s\"", what, hb_status_name(got), msg);
    hb_sim_destroy(sim);
}

#define CELL_HEAD "{\"t_stop\": 1, \"cells\": [{\"cable\": {\"length\": 100, \"diam\": 1}, "

static void test_errors(void)
{
    expect_error("syntax", "{\"t_stop\": 1,\n \"cells\": [}", HB_ERR_PARSE, "model.json:2:", NULL);
    expect_error("top", "[1]", HB_ERR_INVALID_VALUE, "expected an object at the top", NULL);
    expect_error("missing t_stop", "{\"cells\": []}", HB_ERR_INVALID_VALUE,
                 "model.json: t_stop: missing; expected a number >= 0", NULL);
    expect_error("missing cells", "{\"t_stop\": 1}", HB_ERR_INVALID_VALUE,
                 "model.json: cells: expected a non-empty array of cells, found nothing", NULL);
    expect_error("negative dt", "{\"t_stop\": 1, \"dt\": -0.025, \"cells\": []}", HB_ERR_INVALID_VALUE,
                 "model.json: dt: expected a number > 0, found -0.025", NULL);
    expect_error("dt type", "{\"t_stop\": 1, \"dt\": \"fast\", \"cells\": []}", HB_ERR_INVALID_VALUE,
                 "dt: expected a number > 0, found a string", NULL);
    expect_error("method", "{\"t_stop\": 1, \"method\": \"rk4\", \"cells\": []}", HB_ERR_INVALID_VALUE,
                 "method: expected one of \"euler\", \"cn\", found \"rk4\"", NULL);
    expect_error("unknown top key", "{\"t_stop\": 1, \"tstop\": 5, \"cells\": []}", HB_ERR_INVALID_VALUE,
                 "model.json: tstop: unknown key; expected one of: t_stop", NULL);
    /* a misspelt key: the nearest allowed one (edit distance, case-insensitive, NEURON's
     * names), or where a known key belongs */
    expect_error("did you mean t_stop", "{\"tstop\": 5, \"cells\": []}", HB_ERR_INVALID_VALUE,
                 "tstop: unknown key; expected one of: t_stop", "; did you mean \"t_stop\"?");
    expect_error("did you mean celsius", "{\"t_stop\": 1, \"temperature\": 6.3, \"cells\": []}",
                 HB_ERR_INVALID_VALUE, "temperature: unknown key", "did you mean \"celsius\"?");
    expect_error("did you mean Ra", CELL_HEAD "\"ra\": 100}]}", HB_ERR_INVALID_VALUE,
                 "cells[0].ra: unknown key", "did you mean \"Ra\"?");
    expect_error("did you mean mechanisms", CELL_HEAD "\"mechansims\": []}]}", HB_ERR_INVALID_VALUE,
                 "cells[0].mechansims: unknown key", "did you mean \"mechanisms\"?");
    expect_error("did you mean dur",
                 CELL_HEAD "\"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"duration\": 1}]}]}",
                 HB_ERR_INVALID_VALUE, "stimuli[0].duration: unknown key", "did you mean \"dur\"?");
    expect_error("nseg misplaced", "{\"t_stop\": 1, \"nseg\": 3, \"cells\": []}",
                 HB_ERR_INVALID_VALUE, "nseg: unknown key",
                 "\"nseg\" belongs in a cell's \"discretization\" or one of its \"regions\"");
    expect_error("nothing near", "{\"t_stop\": 1, \"zzzz\": 3, \"cells\": []}",
                 HB_ERR_INVALID_VALUE, "zzzz: unknown key; expected one of: ", "hh_table, cells");
    CHECKF(!strstr(hb_last_error(), "did you mean") && !strstr(hb_last_error(), "belongs"),
           "no suggestion expected: %s", hb_last_error());
    expect_error("no geometry", "{\"t_stop\": 1, \"cells\": [{}]}", HB_ERR_INVALID_VALUE,
                 "cells[0]: expected exactly one of \"morphology\"", NULL);
    expect_error("wrong type (gnabar)",
                 CELL_HEAD "\"mechanisms\": [{\"name\": \"pas\"}, {\"name\": \"hh\", \"gnabar\": \"0.12\"}]}]}",
                 HB_ERR_INVALID_VALUE,
                 "model.json: cells[0].mechanisms[1].gnabar: expected a number from 0 to 1000 [S/cm2], found a string", NULL);
    expect_error("negative g",
                 CELL_HEAD "\"mechanisms\": [{\"name\": \"pas\", \"g\": -1}]}]}", HB_ERR_INVALID_VALUE,
                 "cells[0].mechanisms[0].g: expected a number from 0 to 1000 [S/cm2], found -1", NULL);
    expect_error("unknown mechanism", CELL_HEAD "\"mechanisms\": [{\"name\": \"kdr\"}]}]}",
                 HB_ERR_INVALID_VALUE,
                 "cells[0].mechanisms[0].name: unknown mechanism \"kdr\"; did you mean \"Kd\"?", NULL);
    expect_error("unknown parameter", CELL_HEAD "\"mechanisms\": [{\"name\": \"pas\", \"gbar\": 1}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].mechanisms[0].gbar: unknown key; expected one of: name, region, g, e",
                 NULL);
    expect_error("bad region", CELL_HEAD "\"mechanisms\": [{\"name\": \"pas\", \"region\": \"dendrite\"}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].mechanisms[0].region: expected a region", "dendrite");
    expect_error("missing amp",
                 CELL_HEAD "\"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 1, \"dur\": 1}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].stimuli[0].amp: missing; expected a number", NULL);
    expect_error("bad probe x", CELL_HEAD "\"probes\": [{\"at\": {\"section\": 0, \"x\": 1.5}}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].probes[0].at.x: expected 0..1, found 1.5", NULL);
    expect_error("bad probe section", CELL_HEAD "\"probes\": [{\"at\": {\"section\": \"axon\"}}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].probes[0].at.section: no section named \"axon\"", NULL);
    expect_error("bad probe sample", CELL_HEAD "\"probes\": [{\"at\": {\"sample\": 77}}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].probes[0].at: ", "no sample with id 77");
    expect_error("probe without soma", CELL_HEAD "\"probes\": [{\"at\": \"soma\"}]}]}", HB_ERR_INVALID_VALUE,
                 "cells[0].probes[0].at: ", "no soma");
    expect_error("probe location type", CELL_HEAD "\"probes\": [{\"at\": 3}]}]}", HB_ERR_INVALID_VALUE,
                 "cells[0].probes[0].at: expected \"soma\"", "found a number");
    expect_error("missing morphology file",
                 "{\"t_stop\": 1, \"cells\": [{\"morphology\": \"no/such.swc\"}]}", HB_ERR_IO,
                 "model.json: cells[0].morphology: ", "no/such.swc: cannot open");
    expect_error("section parent",
                 "{\"t_stop\": 1, \"cells\": [{\"sections\": [{\"name\": \"soma\", \"length\": 10, \"diam\": 10},"
                 " {\"name\": \"d\", \"parent\": \"sooma\", \"length\": 10, \"diam\": 1}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].sections[1].parent: expected the name or index of an earlier section",
                 "\"sooma\"");
    expect_error("section length",
                 "{\"t_stop\": 1, \"cells\": [{\"sections\": [{\"name\": \"soma\", \"diam\": 10}]}]}",
                 HB_ERR_INVALID_VALUE, "cells[0].sections[0].length: missing; expected a number from 0.001 to 1e+07 [um]", NULL);
    expect_error("nseg", CELL_HEAD "\"discretization\": {\"nseg\": 0}}]}", HB_ERR_INVALID_VALUE,
                 "cells[0].discretization.nseg: expected an integer from 1 to 1000000", NULL);
    expect_error("count", CELL_HEAD "\"count\": 2.5}]}", HB_ERR_INVALID_VALUE,
                 "cells[0].count: expected an integer from 1", NULL);
    expect_error("sample_dt", "{\"t_stop\": 1, \"dt\": 0.025, \"sample_dt\": 0.03, \"cells\": [{\"cable\": "
                 "{\"length\": 10, \"diam\": 1}}]}", HB_ERR_INVALID_VALUE, "not a multiple of dt", NULL);
    expect_error("duplicate key", "{\"t_stop\": 1, \"t_stop\": 2, \"cells\": []}", HB_ERR_PARSE,
                 "duplicate", NULL);
    hb_sim_t *sim = NULL;
    CHECK(hb_sim_load_json("/no/such/model.json", &sim) == HB_ERR_IO &&
          strstr(hb_last_error(), "/no/such/model.json: cannot open"));
}

/* `text` written to a temporary file; its path in `path` (the caller removes it). */
static int write_temp(const char *text, char *path, size_t size)
{
    snprintf(path, size, "/tmp/hb_test_overrides_XXXXXX");
    const int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (!f) return 0;
    const int ok = fputs(text, f) >= 0;
    return fclose(f) == 0 && ok;
}

/* hb_sim_load_json_with / hb_net_load_json_with: the overrides replace the file's options,
 * the others stay, and a bad override is refused naming it. */
static void test_overrides(void)
{
    char path[64];
    CHECK(write_temp("{\"t_stop\": 5, \"dt\": 0.025, \"celsius\": 20, \"backend\": \"omp\", "
                     "\"cells\": [{\"cable\": {\"length\": 100, \"diam\": 1}}]}", path, sizeof path));
    hb_sim_overrides_t ov;
    memset(&ov, 0, sizeof ov);
    ov.set = HB_SIM_SET_T_STOP | HB_SIM_SET_DT | HB_SIM_SET_BACKEND | HB_SIM_SET_THREADS;
    ov.options.t_stop_ms = 2.0;
    ov.options.dt_ms = 0.05;
    ov.options.backend = HB_BACKEND_SEQ;
    ov.options.threads = 3;
    hb_sim_t *sim = NULL;
    hb_sim_options_t o;
    CHECK_OK(hb_sim_load_json_with(path, &ov, &sim));
    if (sim) {
        CHECK_OK(hb_sim_options(sim, &o));
        CHECKF(o.t_stop_ms == 2.0 && o.dt_ms == 0.05 && o.celsius == 20.0 &&
               o.backend == HB_BACKEND_SEQ && o.threads == 3 && hb_sim_steps(sim) == 40,
               "t_stop %g dt %g celsius %g backend %d threads %d steps %ld", o.t_stop_ms,
               o.dt_ms, o.celsius, (int)o.backend, o.threads, hb_sim_steps(sim));
        hb_sim_destroy(sim);
        sim = NULL;
    }
    ov.set = HB_SIM_SET_DT; /* the rest the file's */
    CHECK_OK(hb_sim_load_json_with(path, &ov, &sim));
    if (sim) {
        CHECK_OK(hb_sim_options(sim, &o));
        CHECK(o.t_stop_ms == 5.0 && o.dt_ms == 0.05 && o.backend == HB_BACKEND_OMP);
        hb_sim_destroy(sim);
        sim = NULL;
    }
    ov.set = HB_SIM_SET_T_STOP;
    ov.options.t_stop_ms = -1.0;
    CHECK(hb_sim_load_json_with(path, &ov, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "t_stop override -1 ms; expected a finite number >= 0"));
    ov.set = HB_SIM_SET_THREADS;
    ov.options.threads = HB_MAX_THREADS + 1;
    CHECK(hb_sim_load_json_with(path, &ov, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "threads override"));
    ov.set = 1u << 9;
    CHECK(hb_sim_load_json_with(path, &ov, &sim) == HB_ERR_INVALID_VALUE && !sim &&
          strstr(hb_last_error(), "expected HB_SIM_SET_* bits"));
    remove(path);

    /* a busyring's duration and a file's t_stop that disagree: an error, unless overridden */
    CHECK(write_temp("{\"t_stop\": 100, \"network\": {\"busyring\": {\"num-cells\": 4, "
                     "\"ring-size\": 2, \"duration\": 50, \"depth\": 0}}}", path, sizeof path));
    hb_comm_t *comm = NULL;
    hb_net_t *net = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));
    CHECK(hb_net_load_json_with(path, NULL, comm, &net) == HB_ERR_INVALID_VALUE && !net &&
          strstr(hb_last_error(), "network.busyring.duration: 50"));
    ov.set = HB_SIM_SET_T_STOP;
    ov.options.t_stop_ms = 10.0;
    CHECK_OK(hb_net_load_json_with(path, &ov, comm, &net));
    CHECKF(net && hb_net_stop_time(net) == 10.0, "network t_stop %g",
           net ? hb_net_stop_time(net) : -1.0);
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    remove(path);
}

/* hb_model_file_read: the text once, whole and NUL-terminated; what is no model file refused
 * by name; hb_*_parse_json_with applies overrides as the _load_ forms do. */
static void test_file_read(void)
{
    char path[64];
    const char *model = "{\"t_stop\": 5, \"cells\": [{\"cable\": {\"length\": 100, \"diam\": 1}}]}";
    CHECK(write_temp(model, path, sizeof path));
    char *text = NULL;
    size_t length = 0;
    CHECK_OK(hb_model_file_read(path, &text, &length));
    CHECK(text && length == strlen(model) && memcmp(text, model, length) == 0 && text[length] == 0);
    hb_sim_overrides_t ov;
    memset(&ov, 0, sizeof ov);
    ov.set = HB_SIM_SET_T_STOP;
    ov.options.t_stop_ms = 2.0;
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_parse_json_with(text, length, "m.json", ".", &ov, &sim));
    CHECK(sim && hb_sim_steps(sim) == 80);
    hb_sim_destroy(sim);
    hb_model_text_free(text);
    remove(path);
    text = (char *)path; /* set to NULL on failure */
    CHECK(hb_model_file_read("/tmp", &text, &length) == HB_ERR_IO && !text && length == 0 &&
          strstr(hb_last_error(), "/tmp: is a directory; expected a model file"));
    CHECK(hb_model_file_read("/dev/zero", &text, &length) == HB_ERR_IO && !text &&
          strstr(hb_last_error(), "/dev/zero: a character device"));
    CHECK(hb_model_file_read("/no/such.json", &text, &length) == HB_ERR_IO &&
          strstr(hb_last_error(), "/no/such.json: cannot open"));
    CHECK(write_temp("{\"t_stop\": 5}", path, sizeof path));
    FILE *f = fopen(path, "ab");
    CHECK(f && fputc('\0', f) == 0 && fclose(f) == 0);
    CHECK(hb_model_file_read(path, &text, &length) == HB_ERR_PARSE && !text &&
          strstr(hb_last_error(), "a NUL byte at offset 13"));
    CHECK(hb_sim_load_json(path, &sim) == HB_ERR_PARSE && !sim); /* the loaders read it so too */
    remove(path);
    CHECK(hb_model_file_read(NULL, &text, &length) == HB_ERR_INVALID_VALUE);
    CHECK(hb_model_text_free(NULL) == HB_SUCCESS);
}

/* Cells naming one morphology file with the same options share one read of it (a sweep's 64
 * cells: one parse, not 64); other options read it again; a cell on the shared morphology runs
 * bitwise as the same cell read alone. */
static void test_morphology_cache(void)
{
    static const char head[] = "{\"t_stop\": 15, \"dt\": 0.025, \"sample_dt\": 0.25, \"cells\": [";
    static const char cell[] =
        "{\"morphology\": \"reference/neuron-matrix/small.swc\", %s"
        " \"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65}, {\"name\": \"hh\", \"region\": 1}],"
        " \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 1, \"dur\": 20, \"amp\": %s}],"
        " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": 0}]}";
    char a[1024], b[1024], c[1024], text[4096];
    snprintf(a, sizeof a, cell, "", "0.3");
    snprintf(b, sizeof b, cell, "", "0.2");
    snprintf(c, sizeof c, cell, "\"section_rule\": \"hinesbatch\",", "0.3");
    snprintf(text, sizeof text, "%s%s, %s, %s]}", head, a, b, c);
    hb_sim_t *sim = parse(text);
    snprintf(text, sizeof text, "%s%s]}", head, b);
    hb_sim_t *alone = parse(text);
    if (sim && alone) {
        CHECK(hb_sim_cell_count(sim) == 3);
        CHECKF(sim->owned.n_morphs == 2, "%d morphologies read for 3 cells of one file, 2 options",
               sim->owned.n_morphs);
        CHECK(sim->cells[0]->morph == sim->cells[1]->morph);
        CHECK(sim->cells[2]->morph != sim->cells[0]->morph);
        CHECK_OK(hb_sim_run(sim));
        CHECK_OK(hb_sim_run(alone));
        const double *v1, *v0;
        int n1 = 0, n0 = 0;
        CHECK_OK(hb_sim_probe_trace(sim, 1, &v1, &n1));
        CHECK_OK(hb_sim_probe_trace(alone, 0, &v0, &n0));
        CHECKF(n1 == 61 && n1 == n0 && memcmp(v1, v0, (size_t)n0 * sizeof *v0) == 0,
               "the second cell on the shared morphology: %d samples, alone %d, not bitwise", n1,
               n0);
    }
    hb_sim_destroy(sim);
    hb_sim_destroy(alone);
}

int main(void)
{
    test_valid();
    test_errors();
    test_overrides();
    test_file_read();
    test_morphology_cache();
    return check_summary("sim_json");
}
