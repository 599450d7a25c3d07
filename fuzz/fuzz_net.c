/*
 * libFuzzer target: a network file's JSON -> hb_net_parse_json on the serial communicator ->
 * a short run.
 *
 * Every input but a busyring of more than FUZZ_RUN_CELLS cells (below) is parsed and the
 * network built: the library's refusals (sizes, memory, delays) are all there. The run is hb_net_init and hb_net_advance to FUZZ_STEPS steps of dt
 * (the library rounds up to whole epochs, half the smallest delay), and only for networks of
 * at most FUZZ_RUN_CELLS cells: a network's size is what the file asks for (a busyring
 * without "num-cells" has Arbor's 5,000 cells, ten seconds to build under the sanitizers and
 * a second a step), work in proportion to the request rather than a defect. The run covers
 * the same code for a few cells as for thousands. Morphology paths resolve against
 * HB_FUZZ_MORPH_DIR.
 */
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

/* A busyring of more than FUZZ_RUN_CELLS cells ("num-cells" absent: Arbor's 5,000), read by
 * the harness's own JSON parse. Every busyring cell is its own morphology and model, so such a
 * network legitimately takes gigabytes (5,000 cells of 2,350 rows: 3.5 GB) whenever it fits
 * the machine (the library refuses, with its estimate, what does not): more than a fuzzer's
 * memory limit. Its refusals are tested by tests/test_fuzz_findings.c. */
static int big_busyring(const uint8_t *data, size_t size)
{
    json_t *root = json_loadb((const char *)data, size, 0, NULL);
    const json_t *ring = json_object_get(json_object_get(root, "network"), "busyring");
    const json_t *cells = json_object_get(ring, "num-cells");
    const int big = ring && !(json_is_integer(cells) && json_integer_value(cells) <= FUZZ_RUN_CELLS);
    json_decref(root);
    return big;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hb_comm_t *comm = NULL;
    if (comm == NULL && hb_comm_create(HB_COMM_SERIAL, &comm) != HB_SUCCESS) __builtin_trap();
    if (big_busyring(data, size)) return 0;
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
