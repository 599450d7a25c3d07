/*
 * Recording in networks (docs/network.md, section 8): a network's recorded values (v, hh's
 * states, currents and conductances, pas's current, synapses' states, conductances and
 * currents) are bitwise those of each cell simulated alone (hb_sim, the same records, its
 * events queued by hand), on 1 and 2 threads and on every rank count mpirun gives it
 * (test_net_record_mpi2); a busyring's mixed groups likewise; bad records are refused naming
 * what is wrong; rows are dropped once cleared, and times are k sample_dt.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/event_order.h"
#include "net/net_busyring.h"
#include "net/net_engine.h"
#include "sim/sim.h"
#include "check.h"

#define CELLS 4   /* gids 0..3: ball and sticks; gid 4: a NetStim onto gid 0 */
#define T_STOP 30.0
#define DT 0.025
#define SAMPLE_DT 0.1

static const char cell_json[] =
    "{\"name\": \"bs\", \"count\": %d, \"sections\": ["
    "{\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
    "{\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
    "\"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 11}],"
    "\"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"}, {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": -65}],"
    "\"synapses\": [{\"type\": \"expsyn\", \"at\": {\"section\": \"dend\", \"x\": 0.5}, \"tau\": 2, \"e\": 0},"
    "{\"type\": \"exp2syn\", \"at\": \"soma\", \"tau1\": 0.5, \"tau2\": 3, \"e\": -80}],"
    "\"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 12, \"dur\": 1, \"amp\": 0.3}],"
    "\"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}";

/* What each recorded cell records, in column order: the soma's, then dend(0.5)'s. */
static const char *const soma_vars[] = {"v", "hh.m", "hh.h", "hh.n", "hh.gna", "hh.gk", "hh.ina",
                                        "hh.ik", "hh.il", "syn[0].g", "syn[0].i", "syn[1].A",
                                        "syn[1].B", "syn[1].g", "syn[1].i"};
static const char *const dend_vars[] = {"v", "pas.i"};
enum { N_SOMA = sizeof soma_vars / sizeof *soma_vars, N_DEND = sizeof dend_vars / sizeof *dend_vars,
       PER_CELL = N_SOMA + N_DEND };

static const char record_json[] =
    "[{\"gids\": [0, \"1-2\"], \"variables\": [\"v\", \"hh.m\", \"hh.h\", \"hh.n\", \"hh.gna\", "
    "\"hh.gk\", \"hh.ina\", \"hh.ik\", \"hh.il\", \"syn[0].g\", \"syn[0].i\", \"syn[1].A\", "
    "\"syn[1].B\", \"syn[1].g\", \"syn[1].i\"], \"sample_dt\": 0.1},"
    " {\"gids\": [0, 1, 2], \"locations\": [{\"section\": 1, \"x\": 0.5}], \"variables\": [\"v\", "
    "\"pas.i\"], \"sample_dt\": 0.1}]";

/* A file of its own per process (ranks run side by side): path receives its name. */
static void write_file(const char *text, char *path, size_t size)
{
    snprintf(path, size, "/tmp/test_net_record.XXXXXX");
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return;
    const size_t n = strlen(text);
    CHECK(write(fd, text, n) == (ssize_t)n);
    close(fd);
}

static char *network_text(const char *record)
{
    char cell[4096];
    snprintf(cell, sizeof cell, cell_json, CELLS);
    char *text = malloc(16384);
    snprintf(text, 16384,
             "{\"t_stop\": %g, \"dt\": %g, \"cells\": [%s], \"network\": {"
             "\"sources\": [{\"start\": 3, \"interval\": 7, \"number\": 4}],"
             "\"connections\": [{\"source\": 4, \"target\": 0, \"synapse\": 0, \"weight\": 0.02, \"delay\": 1},"
             "{\"source\": 4, \"target\": 0, \"synapse\": 1, \"weight\": 0.01, \"delay\": 2}]}%s%s}",
             T_STOP, DT, cell, record ? ", \"record\": " : "", record ? record : "");
    return text;
}

static hb_net_t *load(const char *text, hb_comm_t *comm, hb_backend_t backend, int threads)
{
    char path[64];
    write_file(text, path, sizeof path);
    hb_sim_overrides_t over;
    memset(&over, 0, sizeof over);
    over.set = HB_SIM_SET_BACKEND | HB_SIM_SET_THREADS;
    over.options.backend = backend;
    over.options.threads = threads;
    hb_net_t *net = NULL;
    const hb_status_t st = hb_net_load_json_with(path, &over, comm, &net);
    unlink(path);
    CHECKF(st == HB_SUCCESS, "%s", hb_last_error());
    return net;
}

/* One cell alone with the network's records of it and its events: its rows. */
static double *alone(hb_sim_t *sim, int n, const hb_location_t *where, const char *const *vars,
                     long every, const hb_sim_event_t *events, size_t n_events, size_t *rows)
{
    hb_rec_sample_t *rec = calloc((size_t)n, sizeof *rec);
    for (int k = 0; k < n; k++)
        CHECKF(hb_sim_record_resolve(sim, 0, &where[k], vars[k], &rec[k]) == HB_SUCCESS, "%s: %s",
               vars[k], hb_last_error());
    CHECK_OK(hb_sim_set_records(sim, n, rec, every));
    CHECK_OK(hb_sim_init(sim));
    if (n_events) CHECK_OK(hb_sim_queue_events(sim, n_events, events));
    CHECK_OK(hb_sim_advance(sim, hb_sim_steps(sim)));
    const long *steps;
    const double *values;
    hb_sim_recorded(sim, rows, &steps, &values);
    double *copy = malloc(*rows * (size_t)n * sizeof *copy + 1);
    memcpy(copy, values, *rows * (size_t)n * sizeof *copy);
    free(rec);
    return copy;
}

static int compare_event(const void *a, const void *b)
{
    const hb_sim_event_t *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    if (x->synapse != y->synapse) return x->synapse - y->synapse;
    return hb_event_before(x->time, x->weight, y->time, y->weight) ? -1
           : hb_event_before(y->time, y->weight, x->time, x->weight) ? 1 : 0;
}

/* The ball-and-stick network on `comm`: its traces against each cell alone. */
static void test_cells(hb_comm_t *comm, hb_backend_t backend, int threads)
{
    char *text = network_text(record_json);
    hb_net_t *net = load(text, comm, backend, threads);
    free(text);
    if (!net) return;
    CHECKF(hb_net_record_count(net) == 3 * PER_CELL, "%d columns", hb_net_record_count(net));
    CHECK(fabs(hb_net_record_sample_dt(net) - SAMPLE_DT) < 1e-12);
    uint32_t gid = 99;
    const char *name = NULL, *unit = NULL;
    CHECK_OK(hb_net_record_column(net, PER_CELL + 6, &gid, &name, &unit));
    CHECKF(gid == 1 && !strcmp(name, "soma.hh.ina") && !strcmp(unit, "mA/cm2"), "%u %s %s", gid, name, unit);
    CHECK_OK(hb_net_record_column(net, N_SOMA + 1, &gid, &name, &unit));
    CHECKF(gid == 0 && !strcmp(name, "sec1(0.5).pas.i"), "%u %s", gid, name);
    CHECK_OK(hb_net_record_column(net, 9, NULL, &name, &unit));
    CHECKF(!strcmp(name, "syn[0].g") && !strcmp(unit, "uS"), "%s %s", name, unit);
    CHECK(hb_net_record_column(net, 3 * PER_CELL, NULL, NULL, NULL) == HB_ERR_INVALID_VALUE);
    CHECK_OK(hb_net_run(net));
    const double *times, *values;
    size_t rows = 0;
    CHECK_OK(hb_net_traces(net, &times, &values, &rows));
    const size_t expect_rows = (size_t)lround(T_STOP / SAMPLE_DT) + 1;
    CHECKF(rows == expect_rows, "%zu rows; expected %zu", rows, expect_rows);
    int times_ok = rows == expect_rows;
    for (size_t r = 0; times_ok && r < rows; r++)
        times_ok = times[r] == (double)(r * 4) * DT;
    CHECK(times_ok);
    /* the cells alone: gid 0 with the source's events, gids 1 and 2 without */
    const hb_spike_t *sp;
    size_t n_sp;
    CHECK_OK(hb_net_spikes(net, &sp, &n_sp));
    hb_sim_event_t ev[64];
    size_t n_ev = 0;
    for (size_t k = 0; k < n_sp && n_ev + 2 <= 64; k++)
        if (sp[k].gid == CELLS) {
            const double t0 = sp[k].time_ms + 1.0, t1 = sp[k].time_ms + 2.0;
            ev[n_ev++] = (hb_sim_event_t){hb_event_step(t0, DT), 0, 0, -1, t0, 0.02};
            ev[n_ev++] = (hb_sim_event_t){hb_event_step(t1, DT), 0, 1, -1, t1, 0.01};
        }
    CHECKF(n_ev == 8, "%zu events from the source", n_ev);
    qsort(ev, n_ev, sizeof *ev, compare_event);
    char cell[4096], model[8192];
    snprintf(cell, sizeof cell, cell_json, 1);
    snprintf(model, sizeof model, "{\"t_stop\": %g, \"dt\": %g, \"cells\": [%s]}", T_STOP, DT, cell);
    hb_sim_t *sim = NULL;
    CHECKF(hb_sim_parse_json(model, strlen(model), "alone", NULL, &sim) == HB_SUCCESS, "%s", hb_last_error());
    hb_location_t where[PER_CELL];
    const char *vars[PER_CELL];
    for (int k = 0; k < PER_CELL; k++) {
        memset(&where[k], 0, sizeof where[k]);
        if (k >= N_SOMA) where[k] = (hb_location_t){HB_LOC_SECTION, 0, 1, 0.5, 0};
        vars[k] = k < N_SOMA ? soma_vars[k] : dend_vars[k - N_SOMA];
    }
    for (int g = 0; sim && g < 3 && rows == expect_rows; g++) {
        size_t n_rows = 0;
        double *mine = alone(sim, PER_CELL, where, vars, lround(SAMPLE_DT / DT), ev, g == 0 ? n_ev : 0, &n_rows);
        CHECKF(n_rows == rows, "gid %d alone: %zu rows", g, n_rows);
        size_t differ = 0, first = 0;
        for (size_t r = 0; n_rows == rows && r < rows; r++)
            for (int k = 0; k < PER_CELL; k++) {
                const double a = values[r * 3 * PER_CELL + (size_t)(g * PER_CELL + k)];
                const double b = mine[r * PER_CELL + (size_t)k];
                if (memcmp(&a, &b, sizeof a) != 0 && differ++ == 0) first = r * PER_CELL + (size_t)k;
            }
        CHECKF(differ == 0, "gid %d (backend %d, %d threads, %d ranks): %zu values differ from "
               "the cell alone's, the first %s at t = %g", g, (int)backend, threads,
               hb_comm_size(comm), differ, vars[first % PER_CELL],
               (double)(first / PER_CELL) * SAMPLE_DT);
        free(mine);
    }
    /* something happened: gid 0's soma spiked through its synapses and the clamp */
    double vmax = -1e9, gmax = 0;
    for (size_t r = 0; r < rows; r++) {
        vmax = fmax(vmax, values[r * 3 * PER_CELL]);
        gmax = fmax(gmax, values[r * 3 * PER_CELL + 13]);
    }
    CHECKF(vmax > 0.0 && gmax > 0.001, "gid 0: v up to %g mV, Exp2Syn g up to %g uS", vmax, gmax);
    /* cleared rows are gone; an advance records again */
    CHECK_OK(hb_net_traces_clear(net));
    CHECK_OK(hb_net_traces(net, &times, &values, &rows));
    CHECK(rows == 0);
    /* records are added before hb_net_init */
    hb_net_record_t late = {0, {HB_LOC_SOMA, 0, 0, 0, 0}, "v"};
    CHECK(hb_net_record(net, 1, &late, SAMPLE_DT) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "before hb_net_init"));
    hb_sim_destroy(sim);
    hb_net_destroy(net);
}

/* A busyring (mixed groups: cells of their own shapes): gids by fraction, against each alone. */
static void test_busyring(hb_comm_t *comm, int threads)
{
    static const char text[] =
        "{\"dt\": 0.025, \"network\": {\"busyring\": {\"num-cells\": 8, \"ring-size\": 4, "
        "\"min-delay\": 5, \"duration\": 9, \"depth\": 3, \"synapses\": 2}},"
        " \"record\": {\"fraction\": 0.25, \"locations\": [\"soma\"], \"variables\": [\"v\", "
        "\"hh.m\", \"hh.ik\", \"syn[0].g\", \"syn[0].i\"], \"sample_dt\": 0.05}}";
    hb_net_t *net = load(text, comm, threads > 1 ? HB_BACKEND_OMP : HB_BACKEND_SEQ, threads);
    if (!net) return;
    enum { VARS = 5 };
    CHECKF(hb_net_record_count(net) == 2 * VARS, "%d columns", hb_net_record_count(net));
    uint32_t g1 = 0;
    CHECK_OK(hb_net_record_column(net, VARS, &g1, NULL, NULL));
    CHECKF(g1 == 4, "the fraction's second gid %u; expected 4", g1);
    CHECK_OK(hb_net_run(net));
    const double *times, *values;
    size_t rows = 0;
    CHECK_OK(hb_net_traces(net, &times, &values, &rows));
    CHECKF(rows == 181, "%zu rows", rows);
    /* before t = 9 ms only the kicks (1 ms, event-weight 0.05, synapse 0) reach gids 0 and 4 */
    hb_busyring_t p;
    hb_busyring_default(&p);
    p.num_cells = 8;
    p.ring_size = 4;
    p.depth = 3;
    p.synapses = 2;
    const hb_sim_event_t kick = {hb_event_step(1.0, DT), 0, 0, -1, 1.0, (double)p.event_weight};
    const hb_location_t soma[VARS] = {{HB_LOC_SOMA, 0, 0, 0, 0}};
    const char *const vars[VARS] = {"v", "hh.m", "hh.ik", "syn[0].g", "syn[0].i"};
    for (int c = 0; c < 2 && rows == 181; c++) {
        hb_morph_t *morph = NULL;
        hb_model_t *model = NULL;
        CHECK_OK(hb_busyring_cell(&p, (uint32_t)(4 * c), &morph, &model));
        hb_sim_options_t o = net->opt;
        o.backend = HB_BACKEND_SEQ;
        o.threads = 1;
        o.sample_dt_ms = 0.0;
        hb_sim_t *sim = NULL;
        CHECK_OK(hb_sim_create(&model, 1, &o, &sim));
        size_t n = 0;
        double *mine = sim ? alone(sim, VARS, soma, vars, 2, &kick, 1, &n) : NULL;
        size_t differ = 0;
        for (size_t r = 0; mine && n == rows && r < rows; r++)
            for (int k = 0; k < VARS; k++)
                differ += memcmp(&values[r * 2 * VARS + (size_t)(c * VARS + k)],
                                 &mine[r * VARS + (size_t)k], sizeof(double)) != 0;
        CHECKF(n == rows && differ == 0, "busyring gid %d (%d threads, %d ranks): %zu rows, %zu "
               "values differ from the cell alone's", 4 * c, threads, hb_comm_size(comm), n, differ);
        double vmax = -1e9;
        for (size_t r = 0; mine && r < n; r++) vmax = fmax(vmax, mine[r * VARS]);
        CHECKF(vmax > 0.0, "busyring gid %d: v up to %g mV: the kick fires it", 4 * c, vmax);
        free(mine);
        hb_sim_destroy(sim);
        hb_model_destroy(model);
        hb_morph_destroy(morph);
    }
    hb_net_destroy(net);
}

/* A record section refused: the message holds each fragment. */
static void refused(hb_comm_t *comm, const char *record, const char *a, const char *b)
{
    char *text = network_text(record);
    char path[64];
    write_file(text, path, sizeof path);
    free(text);
    hb_net_t *net = NULL;
    const hb_status_t st = hb_net_load_json(path, comm, &net);
    unlink(path);
    const char *msg = hb_last_error();
    const int mine = hb_comm_rank(comm) == 0; /* gid 0's rank names it */
    CHECKF(st == HB_ERR_INVALID_VALUE && net == NULL &&
               (!mine || (strstr(msg, a) && (!b || strstr(msg, b)))),
           "record %s: status %d, \"%s\"; expected \"%s\"%s%s", record, (int)st, msg, a,
           b ? " and " : "", b ? b : "");
    hb_net_destroy(net);
}

static void test_errors(hb_comm_t *comm)
{
    refused(comm, "{\"gids\": [0], \"variables\": [\"hh.mm\"]}", "record.variables[0]",
            "did you mean \"hh.m\"");
    refused(comm, "{\"gids\": [0], \"variables\": [\"syn[0].x\"]}", "record.variables[0]",
            "syn[K].g");
    refused(comm, "{\"gids\": [0, 9]}", "record.gids[1]", "expected cells' gids, 0 to 3");
    refused(comm, "{\"gids\": [\"2-1\"]}", "record.gids[0]", "first-last");
    refused(comm, "{\"gids\": [0], \"fraction\": 0.5}", "record", "both given");
    refused(comm, "{\"fraction\": 1.5}", "record.fraction", "0 < f <= 1");
    refused(comm, "{\"gids\": \"all\", \"varaibles\": [\"v\"]}", "record.varaibles",
            "did you mean \"variables\"");
    refused(comm, "[{\"gids\": [0], \"sample_dt\": 0.1}, {\"gids\": [1], \"sample_dt\": 0.2}]",
            "record[1].sample_dt", "one report has one interval");
    refused(comm, "{\"gids\": [0], \"sample_dt\": 0.03}", "record", "multiple of dt");
    refused(comm, "{\"gids\": [0], \"locations\": [{\"section\": 1}], \"variables\": [\"hh.m\"]}",
            "record: gid 0, \"hh.m\" at sec1(0.5)", "no hh at node");
    refused(comm, "{\"gids\": [0], \"variables\": [\"syn[2].g\"]}", "record: gid 0",
            "no synapse 2 (the cell has 2)");
    refused(comm, "{\"gids\": [0], \"variables\": [\"syn[0].A\"]}", "synapse 0 is an ExpSyn",
            "syn[0].g");
    refused(comm, "{\"gids\": [0], \"locations\": [\"dend\"]}", "record.locations[0]",
            "expected \"soma\"");
}

int main(void)
{
    hb_comm_t *comm = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_BEST, &comm));
    if (!comm) return check_summary("test_net_record");
    if (hb_comm_rank(comm) == 0) printf("test_net_record on %d rank(s)\n", hb_comm_size(comm));
    test_cells(comm, HB_BACKEND_SEQ, 1);
    test_cells(comm, HB_BACKEND_OMP, 2);
    test_busyring(comm, 1);
    test_busyring(comm, 2);
    test_errors(comm);
    const int rank = hb_comm_rank(comm);
    hb_comm_destroy(comm);
    if (rank != 0) return check_failed ? 1 : 0;
    return check_summary("test_net_record");
}
