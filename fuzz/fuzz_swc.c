/*
 * libFuzzer target: SWC text -> hb_morph_parse_swc -> hb_cable_create.
 *
 * Every input is read under three section rules (hinesbatch; Import3d repairing and keeping
 * zero radii) and each morphology is cut under both schemes and four policies, so one input
 * exercises every path without spending input bytes on options. The library's own limits
 * (max_rows, the geometry limits) are left at their defaults: a large or slow input is the
 * library's to refuse, not the harness's to skip.
 */
#include <stddef.h>
#include <stdint.h>

#include "hinesbatch.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void cut(const hb_morph_t *morph, hb_scheme_t scheme, hb_cpolicy_t policy)
{
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = scheme;
    disc.policy = policy;
    disc.count = 3;
    disc.max_length_um = 20.0;
    hb_cable_t *cable = NULL;
    if (hb_cable_create(morph, &disc, &cable) != HB_SUCCESS) {
        (void)hb_last_error();
        return;
    }
    /* Read back the first and last nodes (parent order is the library's promise). */
    const int n = hb_cable_size(cable);
    const int *parent = hb_cable_parent(cable);
    if (n <= 0 || parent == NULL || parent[0] != -1) __builtin_trap();
    for (int i = 1; i < n; i++)
        if (parent[i] < 0 || parent[i] >= i) __builtin_trap();
    hb_node_info_t info;
    (void)hb_cable_node(cable, 0, &info);
    (void)hb_cable_node(cable, n - 1, &info);
    hb_cable_destroy(cable);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        hb_sections_rule_t sections;
        int keep_zero_radius;
    } reads[] = {{HB_SECTIONS_HINESBATCH, 0}, {HB_SECTIONS_IMPORT3D, 0}, {HB_SECTIONS_IMPORT3D, 1}};
    for (size_t r = 0; r < sizeof reads / sizeof reads[0]; r++) {
        hb_swc_options_t options;
        hb_swc_options_default(&options);
        options.sections = reads[r].sections;
        options.keep_zero_radius = reads[r].keep_zero_radius;
        hb_morph_t *morph = NULL;
        if (hb_morph_parse_swc((const char *)data, size, "fuzz.swc", &options, &morph) !=
            HB_SUCCESS) {
            if (morph != NULL) __builtin_trap(); /* on error *morph is NULL */
            (void)hb_last_error();
            return 0; /* the other rules read the same samples: the same error */
        }
        hb_morph_stats_t stats;
        (void)hb_morph_stats(morph, &stats);
        for (int w = 0; w < hb_morph_warning_count(morph); w++) (void)hb_morph_warning(morph, w);
        if (!reads[r].keep_zero_radius) {
            cut(morph, HB_SCHEME_VERTEX, HB_CPOLICY_D_LAMBDA);
            cut(morph, HB_SCHEME_VERTEX, HB_CPOLICY_MAX_LENGTH);
            cut(morph, HB_SCHEME_NEURON, HB_CPOLICY_D_LAMBDA);
        }
        cut(morph, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT);
        cut(morph, HB_SCHEME_NEURON, HB_CPOLICY_FIXED);
        hb_morph_destroy(morph);
    }
    return 0;
}
