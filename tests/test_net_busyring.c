/*
 * Arbor's busyring benchmark (src/net/net_busyring.c, "busyring" in network files): the
 * Mersenne twister and libstdc++'s distributions against known outputs; the zero-weight
 * connections against the values an Arbor build drew ([verified] in the research notes);
 * the random morphologies' branches per level; a small busyring whose every ring passes its
 * spike on in ring order, the same bitwise with synapses 1 and 10 (the zero-weight
 * connections change nothing) and on any rank count (ctest: test_net_busyring_mpi3 too);
 * impossible parameters refused by key.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hinesbatch.h"
#include "net/net_busyring.h"
#include "net/net_engine.h"
#include "sim/sim.h"

static void test_rng(void)
{
    hb_mt19937_t g;
    hb_mt19937_seed(&g, 5489u);
    const uint32_t first[3] = {3499211612u, 581869302u, 3890346734u};
    for (int k = 0; k < 3; k++) {
        const uint32_t u = hb_mt19937_next(&g);
        CHECKF(u == first[k], "mt19937(5489) output %d: %u, expected %u", k, u, first[k]);
    }
    hb_mt19937_seed(&g, 5489u);
    uint32_t u = 0;
    for (int k = 0; k < 10000; k++) u = hb_mt19937_next(&g);
    CHECKF(u == 4123659995u, "mt19937's 10000th output %u, expected 4123659995", u);
    hb_mt19937_seed(&g, 0u);
    const double c = hb_mt_canonical(&g);
    CHECKF(c == 0.59284461651668263, "gid 0's first U(0,1): %.17g", c);
}

/* [verified]: N = 1024, min-delay 5: the dummy connections (source, float delay). */
static void test_connections(void)
{
    hb_busyring_t p;
    hb_busyring_default(&p);
    p.num_cells = 1024;
    p.ring_size = 4;
    p.min_delay = 5.0;
    p.event_weight = 0.2f;
    p.synapses = 5;
    static const struct {
        uint32_t gid, src[4];
        float delay[4];
    } want[3] = {
        {0, {561, 731, 616, 557}, {10.9284458f, 13.4426575f, 13.5794563f, 13.472517f}},
        {1, {426, 736, 0, 309}, {14.9718485f, 14.325573f, 6.28124428f, 14.9904051f}},
        {1023, {935, 644, 520, 54}, {13.6109123f, 14.5458107f, 11.5285225f, 12.0787182f}}};
    for (int t = 0; t < 3; t++) {
        hb_connection_t c[5];
        hb_busyring_connections(&p, want[t].gid, c);
        const uint32_t ring0 = want[t].gid / 4 * 4;
        const uint32_t prev = want[t].gid == ring0 ? ring0 + 3 : want[t].gid - 1;
        CHECKF(c[0].source == prev && c[0].synapse == 0 && c[0].weight_us == (double)0.2f &&
                   c[0].delay_ms == 5.0,
               "gid %u: ring connection from %u, weight %.9g, delay %g", want[t].gid,
               c[0].source, c[0].weight_us, c[0].delay_ms);
        for (int k = 0; k < 4; k++)
            CHECKF(c[k + 1].source == want[t].src[k] && c[k + 1].delay_ms == (double)want[t].delay[k] &&
                       c[k + 1].weight_us == 0.0 && c[k + 1].synapse == 0,
                   "gid %u dummy %d: (%u, %.9g), expected (%u, %.9g)", want[t].gid, k,
                   c[k + 1].source, c[k + 1].delay_ms, want[t].src[k], (double)want[t].delay[k]);
    }
}

/* The re-implementation's vectors (research notes 1.3): depth 10, default arrays. */
static void test_morphology(void)
{
    hb_busyring_t p;
    hb_busyring_default(&p);
    p.depth = 10;
    static const int levels[4][11] = {{1, 2, 4, 8, 14, 23, 34, 47, 52, 61, 61},
                                      {1, 2, 3, 5, 8, 12, 19, 25, 36, 47, 57},
                                      {1, 2, 3, 6, 11, 17, 21, 23, 32, 35, 47},
                                      {1, 2, 4, 8, 13, 21, 27, 36, 44, 38, 39}};
    static const int segments[4] = {2107, 1339, 1369, 1727};
    long total = 0, branches = 0;
    for (uint32_t gid = 0; gid < 1024; gid++) {
        hb_sample_t *s = NULL;
        int n = 0, per[11];
        CHECK_OK(hb_busyring_samples(&p, gid, &s, &n, per));
        total += n - 1; /* the soma's two samples are one segment */
        for (int i = 1; i <= 10; i++) branches += per[i];
        if (gid < 4) {
            int same = n - 1 == segments[gid];
            for (int i = 0; i <= 10; i++) same &= per[i] == levels[gid][i];
            CHECKF(same, "gid %u: %d segments, levels %d %d %d %d %d %d %d %d %d %d %d", gid,
                   n - 1, per[0], per[1], per[2], per[3], per[4], per[5], per[6], per[7],
                   per[8], per[9], per[10]);
        }
        if (gid == 0) { /* the soma, then a level-0 branch of 20 segments of 10 um */
            CHECK(s[0].type == 1 && s[1].type == 1 && s[1].parent == 1 &&
                  fabs(s[1].z - s[0].z - 12.6157) < 1e-12 && s[0].radius == 12.6157 / 2.0);
            CHECK(s[2].type == 3 && s[2].parent == 2 && s[2].radius == 0.5 &&
                  fabs(s[2].z - (12.6157 / 2.0 + 10.0)) < 1e-9 && s[21].parent == 21);
        }
        free(s);
    }
    CHECKF(total == 1653168 && branches == 236319, "gids 0..1023: %ld segments, %ld branches",
           total, branches);
    /* the cell builds and runs: it rests near -65 mV and fires when kicked */
    hb_morph_t *m = NULL;
    hb_model_t *md = NULL;
    p.depth = 4;
    CHECK_OK(hb_busyring_cell(&p, 7, &m, &md));
    if (md) CHECK(hb_model_synapse_count(md) == 1 && hb_model_probe_count(md) == 1);
    hb_model_destroy(md);
    hb_morph_destroy(m);
}

static char *write_file(const char *text)
{
    static char path[128];
    snprintf(path, sizeof path, "/tmp/test_net_busyring_%ld.json", (long)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return NULL;
    fputs(text, f);
    fclose(f);
    return path;
}

#define SMALL "{\"t_stop\": 50, \"network\": {\"busyring\": {\"num-cells\": 64, \"ring-size\": 4, " \
              "\"depth\": 4, \"synapses\": %d, \"event-weight\": 0.2}}}"

static hb_spike_t *run_file(const char *text, hb_comm_t *comm, size_t *n)
{
    *n = 0;
    const char *path = write_file(text);
    hb_net_t *net = NULL;
    hb_spike_t *copy = NULL;
    CHECK_OK(hb_net_load_json(path, comm, &net));
    /* the kick is an event, not a connection: the smallest delay stays min-delay (5 ms) */
    if (net)
        CHECKF(hb_net_min_delay(net) == 5.0 && hb_net_epoch_steps(net) == 200,
               "smallest delay %g ms, epochs of %d steps", hb_net_min_delay(net),
               hb_net_epoch_steps(net));
    if (net && hb_net_run(net) == HB_SUCCESS) {
        const hb_spike_t *sp;
        CHECK_OK(hb_net_spikes(net, &sp, n));
        copy = check_malloc((*n + 1) * sizeof *copy);
        memcpy(copy, sp, *n * sizeof *copy);
    } else if (net) {
        CHECKF(0, "busyring: %s", hb_last_error());
    }
    hb_net_destroy(net);
    remove(path);
    return copy;
}

/* The connections kept sorted by (source, cell, synapse, weight, delay) (the radix sort of
 * net.c): 700 cells of 20 connections each, sources past 255 (two digits of the sort). */
static void test_conn_order(hb_comm_t *alone)
{
    const char *path = write_file("{\"t_stop\": 1, \"network\": {\"busyring\": {\"num-cells\": "
                                  "700, \"ring-size\": 4, \"depth\": 0, \"synapses\": 20}}}");
    hb_net_t *net = NULL;
    CHECK_OK(hb_net_load_json(path, alone, &net));
    if (net) {
        size_t bad = 0, high = 0;
        for (size_t k = 1; k < net->n_conns; k++) {
            const hb_net_conn_t *x = &net->conns[k - 1], *y = &net->conns[k];
            const int after =
                x->source != y->source ? x->source > y->source
                : x->cell != y->cell   ? x->cell > y->cell
                : x->synapse != y->synapse ? x->synapse > y->synapse
                : x->weight != y->weight   ? x->weight > y->weight
                                           : x->delay > y->delay;
            bad += (size_t)after;
            high += y->source > 255;
        }
        CHECKF(net->n_conns == 700 * 20 && bad == 0 && high > 0,
               "%zu connections, %zu out of order, %zu from gids above 255", net->n_conns, bad,
               high);
    }
    hb_net_destroy(net);
    remove(path);
}

static void test_run(hb_comm_t *comm, hb_comm_t *alone)
{
    char text[512];
    size_t n = 0, n1 = 0, n_alone = 0;
    snprintf(text, sizeof text, SMALL, 10);
    hb_spike_t *sp = run_file(text, comm, &n);
    hb_spike_t *ref = run_file(text, alone, &n_alone);
    snprintf(text, sizeof text, SMALL, 1);
    hb_spike_t *one = run_file(text, comm, &n1);
    if (!sp || !ref || !one) goto out;
    /* per ring: the cells fire in ring order, each at least once, the first after 1 ms */
    int in_order = 1, kicks = 0, cells = 0;
    for (uint32_t ring = 0; ring < 16; ring++) {
        uint32_t expect = ring * 4;
        int fired = 0;
        for (size_t k = 0; k < n; k++) {
            const uint32_t g = sp[k].gid;
            if (g >= 64) {
                kicks++; /* none: the kicks are events, not spikes */
                continue;
            }
            if (g / 4 != ring) continue;
            if (fired == 0 && !(sp[k].time_ms > 1.0)) in_order = 0;
            in_order &= g == expect;
            expect = ring * 4 + (g % 4 + 1) % 4;
            fired++;
        }
        cells += fired;
        CHECKF(fired >= 5, "ring %u: %d spikes in 50 ms", ring, fired);
    }
    CHECKF(in_order, "a ring's spikes out of ring order");
    CHECKF(kicks == 0 && (size_t)cells == n, "%d spikes of gids past the cells; %d cell spikes of "
           "%zu", kicks, cells, n);
    CHECKF(n == n_alone && memcmp(sp, ref, n * sizeof *sp) == 0,
           "%d ranks: %zu spikes, alone %zu: not bitwise the same", hb_comm_size(comm), n,
           n_alone);
    CHECKF(n == n1 && memcmp(sp, one, n * sizeof *sp) == 0,
           "synapses 10 and 1 differ (%zu and %zu spikes): weight-0 events changed something",
           n, n1);
    if (hb_comm_rank(comm) == 0)
        printf("busyring 64 cells (16 rings of 4, depth 4, synapses 10), 50 ms on %d ranks: %d "
               "cell spikes in ring order, bitwise those of one rank and of synapses 1\n",
               hb_comm_size(comm), cells);
out:
    free(sp);
    free(ref);
    free(one);
}

static void test_errors(hb_comm_t *alone)
{
    static const struct {
        const char *body, *key;
    } bad[] = {
        {"\"busyring\": {\"depth\": 1}", "network.busyring.depth"},
        {"\"busyring\": {\"ring-size\": 0}", "network.busyring.ring-size"},
        {"\"busyring\": {\"num-cells\": 1}", "network.busyring.num-cells"},
        {"\"busyring\": {\"synapses\": 0}", "network.busyring.synapses"},
        {"\"busyring\": {\"min-delay\": 0.01}", "network.busyring.min-delay"},
        {"\"busyring\": {\"compartments\": [20, 0]}", "network.busyring.compartments"},
        {"\"busyring\": {\"lengths\": [200]}", "network.busyring.lengths"},
        {"\"busyring\": {\"branch-probs\": \"x\"}", "network.busyring.branch-probs"},
        {"\"busyring\": {\"complex\": true}", "network.busyring.complex"},
        {"\"busyring\": {\"duration\": 10}", "network.busyring.duration"},
        {"\"busyring\": {\"colour\": 1}", "colour"},
        {"\"busyring\": {}, \"ring\": []", "network.ring"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        char text[512];
        snprintf(text, sizeof text, "{\"t_stop\": 20, \"network\": {%s}}", bad[k].body);
        const char *path = write_file(text);
        hb_net_t *net = NULL;
        const hb_status_t st = hb_net_load_json(path, alone, &net);
        CHECKF(st != HB_SUCCESS && strstr(hb_last_error(), bad[k].key), "%s: %s", bad[k].body,
               st == HB_SUCCESS ? "accepted" : hb_last_error());
        hb_net_destroy(net);
        remove(path);
    }
    /* cells and busyring together */
    const char *path = write_file("{\"t_stop\": 5, \"cells\": [], \"network\": {\"busyring\": {}}}");
    hb_net_t *net = NULL;
    const hb_status_t st = hb_net_load_json(path, alone, &net);
    CHECKF(st != HB_SUCCESS && strstr(hb_last_error(), "cells"), "cells with busyring: %s",
           hb_last_error());
    hb_net_destroy(net);
    remove(path);
}

/* Cells of their own shapes are stepped with their solves interleaved (src/cpu/sim_cpu.c):
 * six busyring cells in one simulation (an item of four, then two) give each one's voltages
 * of a simulation of its own, bit for bit. */
static void test_interleaved(void)
{
    enum { N = 6, STEPS = 90 };
    hb_busyring_t p;
    hb_busyring_default(&p);
    p.depth = 5;
    hb_morph_t *m[N] = {NULL};
    hb_model_t *md[N] = {NULL};
    int ok = 1;
    for (int c = 0; c < N; c++) ok &= hb_busyring_cell(&p, (uint32_t)c, &m[c], &md[c]) == HB_SUCCESS;
    CHECK(ok);
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.t_stop_ms = STEPS * opt.dt_ms;
    opt.sample_dt_ms = opt.t_stop_ms;
    hb_sim_t *all = NULL;
    if (ok) CHECK_OK(hb_sim_create(md, N, &opt, &all));
    double rise = 0.0;
    for (int c = 0; c < N && all; c++) {
        hb_sim_t *one = NULL;
        CHECK_OK(hb_sim_create(&md[c], 1, &opt, &one));
        if (!one) break;
        if (c == 0) CHECK_OK(hb_sim_init(all));
        CHECK_OK(hb_sim_init(one));
        for (int n = 0; n < STEPS; n++) {
            if (n == 40) { /* an event on each, a different weight */
                if (c == 0)
                    for (int k = 0; k < N; k++) CHECK_OK(hb_sim_deliver(all, k, 0, 0.1 + 0.05 * k));
                CHECK_OK(hb_sim_deliver(one, 0, 0, 0.1 + 0.05 * c));
            }
            if (c == 0) CHECK_OK(hb_sim_advance(all, 1));
            CHECK_OK(hb_sim_advance(one, 1));
        }
        const double *va = NULL, *vo = NULL;
        CHECK_OK(hb_sim_voltages(all, c, &va));
        CHECK_OK(hb_sim_voltages(one, 0, &vo));
        const int rows = hb_cable_size(hb_model_cable(md[c]));
        if (va && vo) {
            CHECKF(memcmp(va, vo, (size_t)rows * sizeof *va) == 0,
                   "cell %d: interleaved and alone differ", c);
            for (int i = 0; i < rows; i++) rise = fmax(rise, fabs(va[i] + 65.0));
        }
        hb_sim_destroy(one);
    }
    CHECKF(rise > 10.0, "the events moved v by %g mV at most", rise);
    hb_sim_destroy(all);
    for (int c = 0; c < N; c++) {
        hb_model_destroy(md[c]);
        hb_morph_destroy(m[c]);
    }
}

int main(void)
{
    hb_comm_t *comm = NULL, *alone = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_BEST, &comm));
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &alone));
    if (!comm || !alone) return check_summary("test_net_busyring");
    const int rank = hb_comm_rank(comm);
    test_rng();
    test_connections();
    test_morphology();
    test_interleaved();
    test_run(comm, alone);
    test_errors(alone);
    test_conn_order(alone);
    hb_comm_destroy(alone);
    hb_comm_destroy(comm);
    if (rank != 0) return check_failed ? 1 : 0;
    return check_summary("test_net_busyring");
}
