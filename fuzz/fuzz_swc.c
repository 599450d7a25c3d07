/*
 * libFuzzer target: SWC text -> hb_morph_parse_swc -> hb_cable_create.
 *
 * A hash of the input picks one of eleven readings and cuts (section rules hinesbatch and
 * Import3d, zero radii repaired or kept, both schemes, four policies), so no input bytes are
 * spent on options and one input costs one parse and one cut. The library's own limits
 * (max_rows, the geometry limits) are left at their defaults: a large or slow input is the
 * library's to refuse, not the harness's to skip.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "hinesbatch.h"

/* Every failure names the file and says what was wrong: a message without them is a finding. */
static void no_silent_failure(void)
{
    if (strstr(hb_last_error(), "fuzz.swc") == NULL) __builtin_trap();
}

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
        no_silent_failure();
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

/* FNV-1a of the input: picks the reading and the cut, so the bytes all stay SWC text. */
static uint32_t hash(const uint8_t *data, size_t size)
{
    uint32_t h = 2166136261u;
    for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 16777619u;
    return h;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const struct {
        hb_sections_rule_t sections;
        int keep_zero_radius;
        hb_scheme_t scheme;
        hb_cpolicy_t policy;
    } configs[] = {
        {HB_SECTIONS_HINESBATCH, 0, HB_SCHEME_VERTEX, HB_CPOLICY_D_LAMBDA},
        {HB_SECTIONS_HINESBATCH, 0, HB_SCHEME_VERTEX, HB_CPOLICY_MAX_LENGTH},
        {HB_SECTIONS_HINESBATCH, 0, HB_SCHEME_NEURON, HB_CPOLICY_D_LAMBDA},
        {HB_SECTIONS_HINESBATCH, 0, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT},
        {HB_SECTIONS_HINESBATCH, 0, HB_SCHEME_NEURON, HB_CPOLICY_FIXED},
        {HB_SECTIONS_IMPORT3D, 0, HB_SCHEME_VERTEX, HB_CPOLICY_D_LAMBDA},
        {HB_SECTIONS_IMPORT3D, 0, HB_SCHEME_NEURON, HB_CPOLICY_D_LAMBDA},
        {HB_SECTIONS_IMPORT3D, 0, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT},
        {HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT},
        {HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_NEURON, HB_CPOLICY_FIXED},
        {HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_VERTEX, HB_CPOLICY_D_LAMBDA}, /* refused */
    };
    const size_t c = hash(data, size) % (sizeof configs / sizeof configs[0]);
    hb_swc_options_t options;
    hb_swc_options_default(&options);
    options.sections = configs[c].sections;
    options.keep_zero_radius = configs[c].keep_zero_radius;
    hb_morph_t *morph = NULL;
    if (hb_morph_parse_swc((const char *)data, size, "fuzz.swc", &options, &morph) != HB_SUCCESS) {
        if (morph != NULL) __builtin_trap(); /* on error *morph is NULL */
        no_silent_failure();
        return 0;
    }
    hb_morph_stats_t stats;
    (void)hb_morph_stats(morph, &stats);
    for (int w = 0; w < hb_morph_warning_count(morph); w++) (void)hb_morph_warning(morph, w);
    cut(morph, configs[c].scheme, configs[c].policy);
    hb_morph_destroy(morph);
    return 0;
}
