/*
 * libFuzzer target: a network file's JSON -> hb_net_parse_json on the serial communicator ->
 * a short run.
 *
 * The run is hb_net_init and hb_net_advance to FUZZ_STEPS steps of dt: the library advances
 * whole epochs (half the smallest delay), so what one advance costs is the library's to
 * bound, not the harness's. Morphology paths resolve against HB_FUZZ_MORPH_DIR.
 */
#include <stddef.h>
#include <stdint.h>

#include "hinesbatch.h"

#define FUZZ_STEPS 64

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static hb_comm_t *comm = NULL;
    if (comm == NULL && hb_comm_create(HB_COMM_SERIAL, &comm) != HB_SUCCESS) __builtin_trap();
    hb_net_t *net = NULL;
    if (hb_net_parse_json((const char *)data, size, "fuzz.json", HB_FUZZ_MORPH_DIR, comm, &net) !=
        HB_SUCCESS) {
        if (net != NULL) __builtin_trap(); /* on error nothing is returned */
        (void)hb_last_error();
        return 0;
    }
    const double until = FUZZ_STEPS * hb_net_dt(net);
    if (hb_net_init(net) == HB_SUCCESS && hb_net_advance(net, until) == HB_SUCCESS) {
        const hb_spike_t *spikes = NULL;
        size_t count = 0;
        if (hb_net_spikes(net, &spikes, &count) != HB_SUCCESS) __builtin_trap();
        for (size_t i = 1; i < count; i++)
            if (spikes[i].time_ms < spikes[i - 1].time_ms) __builtin_trap();
        hb_net_stats_t stats;
        (void)hb_net_stats(net, &stats);
    } else {
        (void)hb_last_error();
    }
    hb_net_destroy(net);
    return 0;
}
