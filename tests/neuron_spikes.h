/*
 * NEURON's spike times (a JSON array) against a simulation's: for the tests that compare with
 * data/reference/ (test_sim_neuron, test_sim_synapse).
 */
#ifndef HB_TESTS_NEURON_SPIKES_H
#define HB_TESTS_NEURON_SPIKES_H

#include <jansson.h>
#include <math.h>

#include "check.h"
#include "hinesbatch.h"

/* Largest |ours - NEURON's| over the spikes; counts must agree (else INFINITY). */
static inline double spike_diff(const hb_sim_t *sim, int probe, const json_t *want)
{
    const double *t;
    int n;
    CHECK_OK(hb_sim_spikes(sim, probe, &t, &n));
    if (n != (int)json_array_size(want)) {
        CHECKF(0, "probe %s: %d spikes, NEURON %d", hb_sim_probe_name(sim, probe), n,
               (int)json_array_size(want));
        return INFINITY;
    }
    double worst = 0.0;
    for (int k = 0; k < n; k++)
        worst = fmax(worst, fabs(t[k] - json_number_value(json_array_get(want, (size_t)k))));
    return worst;
}

#endif
