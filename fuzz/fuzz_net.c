/*
 * libFuzzer target: a network file's JSON -> hb_net_parse_json on the serial communicator ->
 * a short run.
 *
 * Every input within the harness's bounds (below: gids, source spikes, random connections, a
 * busyring's cells) is parsed and the network built by its builders (explicit connections,
 * ring, random, busyring): the library's refusals (sizes, memory, delays) are all there. The run is hb_net_init and hb_net_advance to FUZZ_STEPS steps of dt
 * (the library rounds up to whole epochs, half the smallest delay), and only for networks of
 * at most FUZZ_RUN_CELLS cells: a network's size is what the file asks for (a busyring
 * without "num-cells" has Arbor's 5,000 cells, ten seconds to build under the sanitizers and
 * a second a step), work in proportion to the request rather than a defect. The run covers
 * the same code for a few cells as for thousands. Morphology paths resolve against
 * HB_FUZZ_MORPH_DIR.
 */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "hinesbatch.h"

/* Every failure says what was wrong: an empty message is a finding too. */
static void no_silent_failure(void)
{
    if (hb_last_error()[0] == '\0') __builtin_trap();
}

#define FUZZ_STEPS 64
#define FUZZ_RUN_CELLS 64

/* The harness's bounds on what a file may ask for (each a legitimate request the library
 * accepts where the machine holds it, and tests/hostile_sweep.sh checks under a memory cap):
 * gids of cells (the copies of "cells") and of sources, spikes of the sources (count x number),
 * connections of the random builders (targets x in_degree). Inputs past them are skipped. */
#define FUZZ_MAX_GIDS 4096
#define FUZZ_MAX_SPIKES 100000
#define FUZZ_MAX_CONNECTIONS 100000
/* A busyring's rows, bounded by cells x its largest compartment count x 2^depth (every level
 * branching): depth 25 asks for millions of rows a cell, minutes a step (a fuzz timeout). */
#define FUZZ_MAX_RING_ROWS 4e6

/* An integer member, or `fallback` when absent; -1 when present but not a usable integer. */
static double member(const json_t *obj, const char *key, double fallback)
{
    const json_t *j = json_object_get(obj, key);
    if (!j) return fallback;
    return json_is_integer(j) && json_integer_value(j) >= 0 ? (double)json_integer_value(j) : -1.0;
}

/* A request past the bounds above, or a busyring of more than FUZZ_RUN_CELLS cells
 * ("num-cells" absent: Arbor's 5,000), read by the harness's own JSON parse. Every busyring
 * cell is its own morphology and model, so such a network legitimately takes gigabytes (5,000
 * cells of 2,350 rows: 3.5 GB) whenever it fits the machine (the library refuses, with its
 * estimate, what does not): more than a fuzzer's memory limit. Its refusals are tested by
 * tests/test_fuzz_findings.c. */
static int too_big(const uint8_t *data, size_t size)
{
    json_t *root = json_loadb((const char *)data, size, 0, NULL);
    const json_t *net = json_object_get(root, "network");
    const json_t *ring = json_object_get(net, "busyring");
    const json_t *cells = json_object_get(ring, "num-cells");
    int big = ring && !(json_is_integer(cells) && json_integer_value(cells) <= FUZZ_RUN_CELLS);
    if (ring && !big) { /* a cell's rows grow as 2^depth: at most FUZZ_MAX_RING_ROWS in all */
        const double depth = fabs(member(ring, "depth", 5.0));
        double cmax = 10.0;
        size_t k;
        const json_t *c;
        json_array_foreach(json_object_get(ring, "compartments"), k, c)
            if (json_is_number(c) && fabs(json_number_value(c)) > cmax) cmax = fabs(json_number_value(c));
        big = (double)json_integer_value(cells) * cmax * pow(2.0, depth) > FUZZ_MAX_RING_ROWS;
    }
    double gids = 0.0, spikes = 0.0, conns = 0.0;
    size_t i;
    const json_t *item;
    json_array_foreach(json_object_get(root, "cells"), i, item) gids += fabs(member(item, "count", 1.0));
    json_array_foreach(json_object_get(net, "sources"), i, item) {
        const double count = fabs(member(item, "count", 1.0));
        gids += count;
        spikes += count * fabs(member(item, "number", 10.0)); /* NetStim's default */
    }
    json_array_foreach(json_object_get(net, "random"), i, item) {
        const json_t *targets = json_object_get(item, "targets");
        const double n = json_is_integer(json_array_get(targets, 1))
                             ? (double)json_integer_value(json_array_get(targets, 1)) : 0.0;
        conns += fabs(n) * fabs(member(item, "in_degree", 0.0));
    }
    big |= gids > FUZZ_MAX_GIDS || spikes > FUZZ_MAX_SPIKES || conns > FUZZ_MAX_CONNECTIONS;
    json_decref(root);
    return big;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hb_comm_t *comm = NULL;
    if (comm == NULL && hb_comm_create(HB_COMM_SERIAL, &comm) != HB_SUCCESS) __builtin_trap();
    if (too_big(data, size)) return 0;
    hb_net_t *net = NULL;
    if (hb_net_parse_json((const char *)data, size, "fuzz.json", HB_FUZZ_MORPH_DIR, comm, &net) !=
        HB_SUCCESS) {
        if (net != NULL) __builtin_trap(); /* on error nothing is returned */
        no_silent_failure();
        return 0;
    }
    hb_net_stats_t stats;
    if (hb_net_stats(net, &stats) != HB_SUCCESS) __builtin_trap();
    if (stats.local_cells > FUZZ_RUN_CELLS) {
        hb_net_destroy(net);
        return 0;
    }
    const double until = FUZZ_STEPS * hb_net_dt(net);
    if (hb_net_init(net) == HB_SUCCESS && hb_net_advance(net, until) == HB_SUCCESS) {
        const hb_spike_t *spikes = NULL;
        size_t count = 0;
        if (hb_net_spikes(net, &spikes, &count) != HB_SUCCESS) __builtin_trap();
        for (size_t i = 1; i < count; i++)
            if (spikes[i].time_ms < spikes[i - 1].time_ms) __builtin_trap();
        (void)hb_net_stats(net, &stats);
    } else {
        no_silent_failure();
    }
    hb_net_destroy(net);
    return 0;
}
