/*
 * Networks built from arrays (src/net/net_connections.c) and cells from a model file's cell
 * object (hb_model_parse_json): a network whose connections come from hb_connections_on gives
 * the same spikes, bit for bit, as the same network from a per-connection recipe; bad arrays
 * are refused naming the first bad index, array and value; a cell built on a given morphology
 * is the cell built from its own "sections".
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hinesbatch.h"

#define N_CABLE 20
#define N_CELLS (N_CABLE + 1) /* the last gid is a spike source */
#define N_RANDOM 60

static const char geometry[] =
    "\"sections\": ["
    " {\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
    " {\"name\": \"dend\", \"parent\": \"soma\", \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],";
static const char body[] =
    " \"Ra\": 100,"
    " \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 11}],"
    " \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"},"
    "                  {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": -65}],"
    " \"synapses\": [{\"type\": \"expsyn\", \"at\": {\"section\": 1, \"x\": 0.5}, \"tau\": 2},"
    "                {\"type\": \"exp2syn\", \"at\": \"soma\", \"tau1\": 0.5, \"tau2\": 3}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}";

typedef struct {
    hb_model_t *model;
    uint32_t source[N_CABLE + 1 + N_RANDOM], target[N_CABLE + 1 + N_RANDOM];
    int synapse[N_CABLE + 1 + N_RANDOM];
    double weight[N_CABLE + 1 + N_RANDOM], delay[N_CABLE + 1 + N_RANDOM];
    size_t count;
    hb_connections_t *table; /* NULL: the per-connection callback below */
} recipe_t;

static hb_cell_kind_t kind(void *user, uint32_t gid)
{
    (void)user;
    return gid < N_CABLE ? HB_CELL_CABLE : HB_CELL_SOURCE;
}

static hb_model_t *cable(void *user, uint32_t gid)
{
    (void)gid;
    return ((recipe_t *)user)->model;
}

static hb_status_t source(void *user, uint32_t gid, hb_spike_source_t *s)
{
    (void)user;
    (void)gid;
    *s = (hb_spike_source_t){.start_ms = 1.0, .interval_ms = 7.0, .number = 5};
    return HB_SUCCESS;
}

/* The arrays' connections of gid, one by one, in reverse (the network sorts them anyway). */
static hb_status_t one_by_one(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    const recipe_t *r = user;
    int n = 0;
    for (size_t k = r->count; k-- > 0;)
        if (r->target[k] == gid) {
            if (out) out[n] = (hb_connection_t){r->source[k], r->synapse[k], r->weight[k], r->delay[k]};
            n++;
        }
    *count = n;
    return HB_SUCCESS;
}

static hb_status_t from_table(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    return hb_connections_on(((recipe_t *)user)->table, gid, out, count);
}

static hb_spike_t *run(recipe_t *r, size_t *n_spikes)
{
    hb_recipe_t recipe = {N_CELLS, r, kind, cable, source, r->table ? from_table : one_by_one, NULL};
    hb_comm_t *comm = NULL;
    hb_net_t *net = NULL;
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.t_stop_ms = 60.0;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));
    CHECK_OK(hb_net_create(&recipe, comm, &opt, &net));
    CHECK_OK(hb_net_run(net));
    const hb_spike_t *spikes = NULL;
    CHECK_OK(hb_net_spikes(net, &spikes, n_spikes));
    hb_spike_t *copy = check_malloc((*n_spikes + 1) * sizeof *copy);
    if (*n_spikes) memcpy(copy, spikes, *n_spikes * sizeof *copy);
    hb_net_stats_t st;
    CHECK_OK(hb_net_stats(net, &st));
    CHECKF(st.local_connections == r->count, "%zu connections, expected %zu", st.local_connections,
           r->count);
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return copy;
}

static char *cell_text(int with_geometry)
{
    char *text = check_malloc(sizeof geometry + sizeof body + 8);
    snprintf(text, sizeof geometry + sizeof body + 8, "{%s%s", with_geometry ? geometry : "", body);
    return text;
}

static void test_same_spikes(void)
{
    static recipe_t r;
    char *text = cell_text(1);
    CHECK_OK(hb_model_parse_json(text, strlen(text), "cell", NULL, NULL, &r.model));
    free(text);
    size_t n = 0;
    for (uint32_t c = 0; c < N_CABLE; c++) /* a ring on the dendrites' ExpSyn */
        r.source[n] = c, r.target[n] = (c + 1) % N_CABLE, r.synapse[n] = 0,
        r.weight[n] = 0.05, r.delay[n] = 5.0, n++;
    r.source[n] = N_CABLE, r.target[n] = 0, r.synapse[n] = 0, r.weight[n] = 0.05,
    r.delay[n] = 1.0, n++;
    unsigned x = 12345; /* random weak inputs on the somata's Exp2Syn */
    for (int k = 0; k < N_RANDOM; k++, n++) {
        x = x * 1103515245u + 12345u;
        r.source[n] = (x >> 8) % N_CELLS;
        x = x * 1103515245u + 12345u;
        r.target[n] = (x >> 8) % N_CABLE;
        r.synapse[n] = 1;
        r.weight[n] = 0.001 * (double)(1 + k % 5);
        r.delay[n] = 2.0 + 0.25 * (double)(k % 7);
    }
    r.count = n;
    size_t n_one = 0, n_table = 0;
    hb_spike_t *one = run(&r, &n_one);
    CHECK_OK(hb_connections_create(N_CELLS, r.count, r.source, r.target, r.synapse, r.weight,
                                   r.delay, &r.table));
    CHECK(hb_connections_count(r.table) == r.count);
    hb_spike_t *table = run(&r, &n_table);
    CHECKF(n_one > 2 * N_CABLE, "%zu spikes: the ring should go round", n_one);
    CHECKF(n_one == n_table, "%zu spikes one by one, %zu from the table", n_one, n_table);
    CHECK(n_one == n_table && memcmp(one, table, n_one * sizeof *one) == 0);
    free(one);
    free(table);
    hb_connections_destroy(r.table);
    hb_model_destroy(r.model);
}

static void expect_refused(uint32_t n_cells, const uint32_t *s, const uint32_t *t, const int *syn,
                           const double *w, const double *d, const char *what)
{
    hb_connections_t *table = (hb_connections_t *)&table;
    const hb_status_t status = hb_connections_create(n_cells, 3, s, t, syn, w, d, &table);
    CHECKF(status == HB_ERR_INVALID_VALUE && table == NULL && strstr(hb_last_error(), what),
           "expected \"%s\", got %s: %s", what, hb_status_name(status), hb_last_error());
}

static void test_bad_arrays(void)
{
    const uint32_t s[3] = {0, 1, 2}, t[3] = {1, 2, 0}, bad_gid[3] = {0, 4, 7};
    const int syn[3] = {0, 0, 0}, bad_syn[3] = {0, 0, -2};
    const double w[3] = {0.1, 0.1, 0.1}, d[3] = {1, 1, 1};
    const double bad_w[3] = {0.1, NAN, 0.1}, bad_d[3] = {1, 1, 0};
    expect_refused(3, bad_gid, t, syn, w, d, "source[1] = 4; expected a gid < n_cells = 3");
    expect_refused(3, s, bad_gid, syn, w, d, "target[1] = 4; expected a gid < n_cells = 3");
    expect_refused(3, s, t, bad_syn, w, d, "synapse[2] = -2; expected a synapse index >= 0");
    expect_refused(3, s, t, syn, bad_w, d, "weight_us[1] = nan; expected a finite weight");
    expect_refused(3, s, t, syn, w, bad_d, "delay_ms[2] = 0; expected a finite delay [ms] > 0");
    expect_refused(3, s, t, syn, w, NULL, "delay_ms is NULL with count = 3");
    hb_connections_t *table = NULL;
    CHECK_OK(hb_connections_create(3, 0, NULL, NULL, NULL, NULL, NULL, &table));
    int count = -1;
    CHECK_OK(hb_connections_on(table, 2, NULL, &count));
    CHECK(count == 0);
    CHECK(hb_connections_on(table, 3, NULL, &count) == HB_ERR_INVALID_VALUE);
    hb_connections_destroy(table);
    /* the arrays' order kept within a target */
    CHECK_OK(hb_connections_create(3, 3, s, (const uint32_t[]){1, 1, 0}, syn, (const double[]){1, 2, 3},
                                   d, &table));
    hb_connection_t out[2];
    count = 2;
    CHECK_OK(hb_connections_on(table, 1, out, &count));
    CHECK(count == 2 && out[0].source == 0 && out[0].weight_us == 1 && out[1].weight_us == 2);
    count = 1;
    CHECK(hb_connections_on(table, 1, out, &count) == HB_ERR_INVALID_VALUE);
    hb_connections_destroy(table);
}

/* A cell on a given morphology has the cell's own geometry's matrix and parts. */
static void test_given_morphology(void)
{
    const hb_section_spec_t specs[2] = {{"soma", -1, 0.0, 12.6157, 12.6157, 1},
                                        {"dend", 0, 1.0, 200.0, 1.0, 3}};
    hb_morph_t *morph = NULL;
    hb_model_t *own = NULL, *given = NULL, *bad = NULL;
    CHECK_OK(hb_model_build_sections(specs, 2, "bs", &morph, NULL));
    char *with = cell_text(1), *without = cell_text(0);
    CHECK_OK(hb_model_parse_json(with, strlen(with), "cell", NULL, NULL, &own));
    CHECK_OK(hb_model_parse_json(without, strlen(without), "cell", NULL, morph, &given));
    CHECK(own && given && hb_model_synapse_count(own) == 2 && hb_model_synapse_count(given) == 2);
    CHECK(hb_model_probe_count(given) == 1);
    const hb_cable_t *a = hb_model_cable(own), *b = hb_model_cable(given);
    CHECKF(hb_cable_size(a) == hb_cable_size(b) && hb_cable_size(a) == 15, "%d, %d rows", hb_cable_size(a), hb_cable_size(b));
    for (int i = 0; i < hb_cable_size(a) && i < hb_cable_size(b); i++) {
        hb_node_info_t x, y;
        CHECK_OK(hb_cable_node(a, i, &x));
        CHECK_OK(hb_cable_node(b, i, &y));
        CHECKF(x.parent == y.parent && x.area_um2 == y.area_um2 && x.r_axial_mohm == y.r_axial_mohm,
               "node %d", i);
    }
    CHECK(hb_model_parse_json(with, strlen(with), "cell", NULL, morph, &bad) == HB_ERR_INVALID_VALUE);
    CHECKF(!bad && strstr(hb_last_error(), "sections: expected no geometry"), "%s", hb_last_error());
    const char counted[] = "{\"count\": 2, \"cable\": {\"length\": 100, \"diam\": 1}}";
    CHECK(hb_model_parse_json(counted, strlen(counted), "c.json", NULL, NULL, &bad) == HB_ERR_INVALID_VALUE);
    CHECKF(strstr(hb_last_error(), "c.json") && strstr(hb_last_error(), "count"), "%s", hb_last_error());
    CHECK(hb_model_parse_json("{}", 2, "c.json", NULL, NULL, &bad) == HB_ERR_INVALID_VALUE);
    CHECKF(strncmp(hb_last_error(), "c.json: expected exactly one of", 31) == 0, "%s", hb_last_error());
    CHECK(hb_model_parse_json("[1]", 3, "c.json", NULL, NULL, &bad) == HB_ERR_INVALID_VALUE);
    CHECK(hb_model_parse_json("{", 1, "c.json", NULL, NULL, &bad) == HB_ERR_PARSE);
    free(with);
    free(without);
    hb_model_destroy(own);
    hb_model_destroy(given);
    hb_morph_destroy(morph);
}

int main(void)
{
    test_bad_arrays();
    test_given_morphology();
    test_same_spikes();
    return check_summary("net_arrays");
}
