/*
 * libFuzzer target: a model file's JSON -> hb_sim_parse_json -> a short run.
 *
 * Morphology paths resolve against HB_FUZZ_MORPH_DIR (fuzz/corpus/swc), so the seeds' cells
 * read real SWC files. The run is hb_sim_init and at most FUZZ_STEPS steps (past the first
 * non-finite check at HB_SIM_CHECK_STEPS): a long t_stop is the model's business, but whether
 * the library refuses what cannot fit (steps, records, rows, memory) is decided when the
 * simulation is created and advanced, which every input reaches.
 */
#include <stddef.h>
#include <stdint.h>

#include "hinesbatch.h"

/* Every failure says what was wrong: an empty message is a finding too. */
static void no_silent_failure(void)
{
    if (hb_last_error()[0] == '\0') __builtin_trap();
}

#define FUZZ_STEPS (2 * HB_SIM_CHECK_STEPS + 1)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hb_sim_t *sim = NULL;
    if (hb_sim_parse_json((const char *)data, size, "fuzz.json", HB_FUZZ_MORPH_DIR, &sim) !=
        HB_SUCCESS) {
        if (sim != NULL) __builtin_trap(); /* on error nothing is returned */
        no_silent_failure();
        return 0;
    }
    long steps = hb_sim_steps(sim);
    if (steps < 0) __builtin_trap();
    if (steps > FUZZ_STEPS) steps = FUZZ_STEPS;
    if (hb_sim_init(sim) == HB_SUCCESS && hb_sim_advance(sim, steps) == HB_SUCCESS) {
        const double *t = NULL;
        int count = 0;
        if (hb_sim_sample_times(sim, &t, &count) != HB_SUCCESS || count < 1) __builtin_trap();
        for (int p = 0; p < hb_sim_probe_count(sim); p++) {
            const double *v = NULL;
            int n = 0;
            (void)hb_sim_probe_name(sim, p);
            if (hb_sim_probe_trace(sim, p, &v, &n) != HB_SUCCESS || n != count) __builtin_trap();
            (void)hb_sim_spikes(sim, p, &v, &n);
        }
    } else {
        no_silent_failure();
    }
    hb_sim_destroy(sim);
    return 0;
}
