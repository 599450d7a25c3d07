/*
 * libFuzzer target: Neurolucida ASC text -> hb_morph_parse_asc -> hb_cable_create.
 *
 * A hash of the input picks the units and the cut (NEURON's scheme with d_lambda or one
 * compartment per 3-D segment, the vertex scheme with d_lambda), so the bytes all stay ASC text.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hinesbatch.h"

/* Every failure names the file: a message without it is a finding. */
static void no_silent_failure(void)
{
    if (strstr(hb_last_error(), "fuzz.asc") == NULL) __builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint32_t hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        hb_length_units_t units;
        hb_scheme_t scheme;
        hb_cpolicy_t policy;
    } configs[] = {
        {HB_UNITS_UM, HB_SCHEME_NEURON, HB_CPOLICY_D_LAMBDA},
        {HB_UNITS_UM, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT},
        {HB_UNITS_UM, HB_SCHEME_VERTEX, HB_CPOLICY_D_LAMBDA},
        {HB_UNITS_NM, HB_SCHEME_NEURON, HB_CPOLICY_D_LAMBDA},
    };
    const size_t c = hash(data, size) % (sizeof configs / sizeof configs[0]);
    hb_swc_options_t options;
    hb_swc_options_default(&options);
    options.units = configs[c].units;
    hb_morph_t *morph = NULL;
    if (hb_morph_parse_asc((const char *)data, size, "fuzz.asc", &options, &morph) != HB_SUCCESS) {
        if (morph != NULL) __builtin_trap(); /* on error *morph is NULL */
        no_silent_failure();
        return 0;
    }
    hb_morph_stats_t stats;
    (void)hb_morph_stats(morph, &stats);
    for (int w = 0; w < hb_morph_warning_count(morph); w++) (void)hb_morph_warning(morph, w);
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = configs[c].scheme;
    disc.policy = configs[c].policy;
    hb_cable_t *cable = NULL;
    if (hb_cable_create(morph, &disc, &cable) != HB_SUCCESS) {
        no_silent_failure();
    } else {
        const int n = hb_cable_size(cable);
        const int *parent = hb_cable_parent(cable);
        if (n <= 0 || parent == NULL || parent[0] != -1) __builtin_trap();
        for (int i = 1; i < n; i++)
            if (parent[i] < 0 || parent[i] >= i) __builtin_trap();
        hb_cable_destroy(cable);
    }
    hb_morph_destroy(morph);
    return 0;
}
