/* Artificial cells through the C API (hb_model_create_artificial, hb_catalogue_open): the
 * network of tests/reference/net_artificial.json (tests/cli_net_artificial.sh), 4 hh
 * ball-and-sticks, 2 Pulses, 2 LeakyFire (tests/nmodl/artificial, built here by the CLI's
 * build-catalogue) and a spike source, built by an hb_recipe_t, gives the spikes of the same
 * file loaded by hb_net_parse_json bit for bit; each bad input refused by name. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hinesbatch.h"

/* gids as the file's: the cells, the artificial cells, the source */
enum { CELLS = 4, PULSES = 2, LEAKY = 2, N_GIDS = CELLS + PULSES + LEAKY + 1 };

/* the file's "cells" entry (count excepted), for hb_model_parse_json */
static const char cell_json[] =
    "{\"sections\": [{\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157,"
    " \"type\": \"soma\"}, {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": "
    "200, \"diam\": 1, \"type\": \"dend\"}], \"Ra\": 100, \"cm\": 1, \"regions\": [{\"region\": "
    "\"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 11}], \"mechanisms\": [{\"name\": "
    "\"hh\", \"region\": \"soma\"}, {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": "
    "-65}], \"synapses\": [{\"name\": \"ExpSyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}], "
    "\"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}";

typedef struct {
    hb_model_t *cell, *drive, *slow, *leaky;
    hb_connections_t *table;
} net_models_t;

static hb_cell_kind_t kind(void *user, uint32_t gid)
{
    (void)user;
    return gid == N_GIDS - 1 ? HB_CELL_SOURCE : HB_CELL_CABLE;
}

static hb_model_t *cable(void *user, uint32_t gid)
{
    const net_models_t *m = user;
    return gid < CELLS ? m->cell : gid == 4 ? m->drive : gid == 5 ? m->slow : m->leaky;
}

static hb_status_t source(void *user, uint32_t gid, hb_spike_source_t *s)
{
    (void)user;
    (void)gid;
    *s = (hb_spike_source_t){3.0, 4.0, 20, 0.0, 0}; /* "kick" */
    return HB_SUCCESS;
}

static hb_status_t connections_on(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    return hb_connections_on(((net_models_t *)user)->table, gid, out, count);
}

/* The call must fail with `status`, its message holding `want`. */
static void refused(hb_status_t got, hb_status_t status, const char *want, const char *what)
{
    CHECKF(got == status && strstr(hb_last_error(), want), "%s: %s, \"%s\"; expected %s with \"%s\"",
           what, hb_status_name(got), hb_last_error(), hb_status_name(status), want);
}

static void bad_input(void)
{
    hb_model_t *m = (hb_model_t *)(uintptr_t)1; /* must become NULL */
    const char *tau[] = {"taus"};
    const char *interval[] = {"interval"};
    const double ten[] = {10.0}, zero[] = {0.0};
    refused(hb_model_create_artificial("pas", 0, NULL, NULL, &m), HB_ERR_INVALID_VALUE,
            "hb_model_create_artificial: pas is a density mechanism (SUFFIX; inserted in "
            "regions); expected an artificial cell (ARTIFICIAL_CELL)", "a density mechanism");
    CHECK(m == NULL);
    refused(hb_model_create_artificial("ExpSyn", 0, NULL, NULL, &m), HB_ERR_INVALID_VALUE,
            "hb_model_create_artificial: ExpSyn is a point process (POINT_PROCESS; a cell's "
            "synapse); expected an artificial cell (ARTIFICIAL_CELL)", "a point process");
    refused(hb_model_create_artificial("LeakyFir", 0, NULL, NULL, &m), HB_ERR_INVALID_VALUE,
            "hb_model_create_artificial: unknown mechanism \"LeakyFir\"; did you mean "
            "\"LeakyFire\"?", "an unknown name");
    refused(hb_model_create_artificial("artificial::Pulse", 0, NULL, NULL, &m),
            HB_ERR_INVALID_VALUE, "the catalogue artificial has no Pulse; did you mean \"Pulses\"?",
            "an unknown name in a named catalogue");
    refused(hb_model_create_artificial("LeakyFire", 1, tau, ten, &m), HB_ERR_INVALID_VALUE,
            "hb_model_create_artificial: LeakyFire has no parameter \"taus\"; did you mean "
            "\"tau\"?", "an unknown parameter");
    refused(hb_model_create_artificial("Pulses", 1, interval, zero, &m), HB_ERR_INVALID_VALUE,
            "hb_model_create_artificial: Pulses's interval = 0 ms; expected a number from 1e-09 "
            "to 1e+09 (the .mod's <lo,hi>)", "a value out of range");
    CHECK(m == NULL);
    refused(hb_model_create_artificial(NULL, 0, NULL, NULL, &m), HB_ERR_INVALID_VALUE,
            "name is NULL", "no name");
    refused(hb_model_create_artificial("Pulses", 1, NULL, ten, &m), HB_ERR_INVALID_VALUE,
            "expected n >= 0 and both arrays", "no keys");
    refused(hb_model_create_artificial("Pulses", 0, NULL, NULL, NULL), HB_ERR_INVALID_VALUE,
            "model is NULL", "no model");
    /* the other way round: an artificial cell as a cell's point process */
    hb_model_t *cell = NULL;
    CHECK_OK(hb_model_parse_json(cell_json, strlen(cell_json), "cell", NULL, NULL, &cell));
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
    if (cell)
        refused(hb_model_add_point_process(cell, &soma, "LeakyFire", 0, NULL, NULL, NULL),
                HB_ERR_INVALID_VALUE, "hb_model_add_point_process: LeakyFire is an artificial "
                "cell (ARTIFICIAL_CELL; hb_model_create_artificial); expected a point process",
                "an artificial cell as a point process");
    hb_model_destroy(cell);
    /* a library that is no catalogue, by path */
    refused(hb_catalogue_open("/nonexistent/cat.so", NULL), HB_ERR_IO,
            "/nonexistent/cat.so: no such file", "a missing catalogue");
}

/* The spikes of the file and of the recipe: the same bits. */
static void same_network(const char *dir)
{
    size_t length = 0;
    char *text = NULL;
    CHECK_OK(hb_model_file_read(HB_SOURCE_DIR "/tests/reference/net_artificial.json", &text,
                                &length));
    if (!text) return;
    hb_comm_t *comm = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));
    hb_net_t *file = NULL;
    /* its "catalogues": ["artificial.so"], relative to dir */
    CHECK_OK(hb_net_parse_json(text, length, "net_artificial.json", dir, comm, &file));
    hb_model_text_free(text);

    net_models_t m = {NULL, NULL, NULL, NULL, NULL};
    const char *pulse_keys[] = {"start", "interval", "number"};
    const double drive[] = {5.0, 7.0, 12.0}, slow[] = {12.0, 11.0, 6.0};
    const char *leaky_keys[] = {"tau", "refrac"};
    const double leaky[] = {10.0, 5.0};
    CHECK_OK(hb_model_parse_json(cell_json, strlen(cell_json), "cell", NULL, NULL, &m.cell));
    CHECK_OK(hb_model_create_artificial("Pulses", 3, pulse_keys, drive, &m.drive));
    CHECK_OK(hb_model_create_artificial("artificial::Pulses", 3, pulse_keys, slow, &m.slow));
    CHECK_OK(hb_model_create_artificial("LeakyFire", 2, leaky_keys, leaky, &m.leaky));
    if (m.leaky) {
        CHECK(hb_model_synapse_count(m.leaky) == 1 && hb_model_probe_count(m.leaky) == 0);
        CHECK(hb_model_cable(m.leaky) && hb_cable_compartments(hb_model_cable(m.leaky)) == 1);
    }
    /* the file's connections, in its order */
    enum { N_CONN = 16 };
    const uint32_t src[N_CONN] = {4, 4, 5, 4, 6, 7, 7, 8, 0, 1, 2, 3, 0, 1, 2, 3};
    const uint32_t dst[N_CONN] = {0, 1, 2, 7, 3, 3, 0, 6, 6, 6, 6, 6, 7, 7, 7, 7};
    const int syn[N_CONN] = {0};
    const double w[N_CONN] = {0.04, 0.04, 0.04, 0.45, 0.04, 0.04, 0.04, 0.3,
                              0.55, 0.55, 0.55, 0.55, 0.35, 0.35, 0.35, 0.35};
    const double d[N_CONN] = {1, 1.5, 2, 0.5, 1, 3, 2.5, 1, 1.0, 1.5, 2.0, 2.5, 2.0, 2.25, 2.5, 2.75};
    hb_connections_t *table = NULL;
    CHECK_OK(hb_connections_create(N_GIDS, N_CONN, src, dst, syn, w, d, &table));
    m.table = table;
    hb_net_t *api = NULL;
    if (m.cell && m.drive && m.slow && m.leaky && table) {
        hb_sim_options_t opt;
        hb_sim_options_default(&opt);
        opt.dt_ms = 0.025;
        opt.t_stop_ms = 100.0;
        opt.v_init_mv = -65.0;
        opt.celsius = 6.3;
        opt.method = HB_METHOD_EULER;
        opt.backend = HB_BACKEND_SEQ;
        const hb_recipe_t recipe = {N_GIDS, &m, kind, cable, source, connections_on, NULL};
        CHECK_OK(hb_net_create(&recipe, comm, &opt, &api));
    }
    if (file && api) {
        CHECK_OK(hb_net_run(file));
        CHECK_OK(hb_net_run(api));
        const hb_spike_t *a = NULL, *b = NULL;
        size_t na = 0, nb = 0;
        CHECK_OK(hb_net_spikes(file, &a, &na));
        CHECK_OK(hb_net_spikes(api, &b, &nb));
        int seen[N_GIDS] = {0};
        for (size_t k = 0; k < nb; k++)
            if (b[k].gid < N_GIDS) seen[b[k].gid]++;
        /* every artificial gid spikes; Pulses gid 4: 12 spikes from 5 ms every 7 ms */
        CHECKF(seen[4] == 12 && seen[5] == 6 && seen[6] > 0 && seen[7] > 0,
               "artificial gids' spikes: %d %d %d %d", seen[4], seen[5], seen[6], seen[7]);
        size_t same = 0;
        while (same < na && same < nb && a[same].gid == b[same].gid &&
               memcmp(&a[same].time_ms, &b[same].time_ms, sizeof a[same].time_ms) == 0)
            same++;
        CHECKF(na == nb && same == na && na > 40,
               "the file's %zu spikes, the recipe's %zu: the first %zu the same bits", na, nb,
               same);
        if (same < na && same < nb)
            fprintf(stderr, "  spike %zu: file gid %u at %.17g, recipe gid %u at %.17g\n", same,
                    a[same].gid, a[same].time_ms, b[same].gid, b[same].time_ms);
    }
    hb_net_destroy(api);
    hb_connections_destroy(table);
    hb_net_destroy(file);
    hb_model_destroy(m.cell);
    hb_model_destroy(m.drive);
    hb_model_destroy(m.slow);
    hb_model_destroy(m.leaky);
    hb_comm_destroy(comm);
}

int main(void)
{
    char dir[] = "/tmp/hb_test_net_artificial_XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 2;
    }
    char cmd[2048], so[512];
    snprintf(so, sizeof so, "%s/artificial.so", dir);
    snprintf(cmd, sizeof cmd, "'%s' build-catalogue '%s/tests/nmodl/artificial' -o '%s' > '%s/log' 2>&1",
             HB_CLI, HB_SOURCE_DIR, so, dir);
    const int built = system(cmd);
    CHECKF(built == 0, "%s: status %d", cmd, built);
    const char *name = NULL;
    if (built == 0) {
        CHECK_OK(hb_catalogue_open(so, &name));
        CHECKF(name && !strcmp(name, "artificial"), "the catalogue's name %s", name ? name : "NULL");
    }
    if (name) {
        bad_input();
        same_network(dir);
    }
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    return check_summary("net_artificial");
}
