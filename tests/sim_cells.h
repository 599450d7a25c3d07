/*
 * Cells for the engine tests (tests/test_sim_engine.c on the CPU,
 * tests/gpu/test_gpu_sim.c on the GPU): a real morphology, NEURON scheme with
 * nseg 3 (soma 1), one of three membranes, two IClamps at the soma (overlapping),
 * one at a zero-area section end, probes with spike detection at the soma and
 * at a middle node. `variant` changes parameters, amplitudes and times, so that
 * neighbouring lanes of a block differ.
 */
#ifndef HB_TESTS_SIM_CELLS_H
#define HB_TESTS_SIM_CELLS_H

#include "check.h"
#include "hinesbatch.h"


enum { SIM_CELL_PASSIVE, SIM_CELL_HH_SOMA, SIM_CELL_HH_ALL, SIM_CELL_KINDS };
static const char *const sim_cell_kinds[SIM_CELL_KINDS] = {"passive", "hh-soma", "hh-all"};

/* A cell of `kind` on `morph`; `variant` changes parameters and clamps. */
static inline hb_model_t *sim_cells_make(const hb_morph_t *morph, int kind, int variant)
{
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_FIXED;
    disc.count = 3;
    disc.count_by_type[1] = 1;
    hb_model_t *md = NULL;
    CHECK_OK(hb_model_create(morph, &disc, &md));
    if (!md) return NULL;
    hb_mech_t pas, hh;
    hb_mech_default(HB_MECH_PAS, &pas);
    hb_mech_default(HB_MECH_HH, &hh);
    pas.g_pas = 1e-4 * (1.0 + 0.25 * variant);
    pas.e_pas = -65.0 - variant;
    hh.gnabar = 0.12 * (1.0 + 0.1 * variant);
    hh.gkbar = 0.036 * (1.0 - 0.05 * variant);
    if (kind == SIM_CELL_PASSIVE) CHECK_OK(hb_model_insert(md, HB_REGION_ALL, &pas));
    if (kind == SIM_CELL_HH_SOMA) {
        CHECK_OK(hb_model_insert(md, HB_REGION_ALL, &pas));
        CHECK_OK(hb_model_insert(md, 1, &hh));
    }
    if (kind == SIM_CELL_HH_ALL) CHECK_OK(hb_model_insert(md, HB_REGION_ALL, &hh));
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
    const double amp = kind == SIM_CELL_HH_ALL ? 1.0 + 0.5 * variant : 0.3 + 0.2 * variant;
    CHECK_OK(hb_model_add_iclamp(md, &soma, 2.0 + variant, 30.0, amp));
    CHECK_OK(hb_model_add_iclamp(md, &soma, 10.0, 5.0 + variant, 0.2)); /* two at one node */
    /* One on a zero-area node (a section end), and a probe somewhere else. */
    const hb_cable_t *cable = hb_model_cable(md);
    int end = -1, mid = hb_cable_size(cable) / 2;
    for (int i = hb_cable_size(cable) - 1; i > 0 && end < 0; i--) {
        hb_node_info_t info;
        CHECK_OK(hb_cable_node(cable, i, &info));
        if (info.kind == HB_NODE_SECTION_END) end = i;
    }
    CHECK(end > 0);
    const hb_location_t tip = {HB_LOC_NODE, 0, 0, 0.0, end}, there = {HB_LOC_NODE, 0, 0, 0.0, mid};
    CHECK_OK(hb_model_add_iclamp(md, &tip, 5.0, 20.0, 0.05 * (variant + 1)));
    const hb_probe_spec_t p_soma = {soma, "soma", 1, -20.0}, p_mid = {there, "mid", 1, -40.0};
    CHECK_OK(hb_model_add_probe(md, &p_soma, NULL));
    CHECK_OK(hb_model_add_probe(md, &p_mid, NULL));
    return md;
}

#endif
