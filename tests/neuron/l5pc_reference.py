#!/usr/bin/python3
"""NEURON 8.2 reference for the l5pc test: BluePyOpt's l5pc example cell, built as BluePyOpt does.

BluePyOpt (github.com/BlueBrain/BluePyOpt, examples/l5pc, tests/reference/neuron-l5pc/SOURCES.md)
instantiates the cell as follows, and so does this script, without BluePyOpt itself:
- morphology C060114A7.asc by Import3d_Neurolucida3 and Import3d_GUI(r, 0).instantiate;
- nseg = 1 + 2 int(L / 40) for every section (NrnFileMorphology.set_nseg, nseg_frequency 40);
- mechanisms per section list (config/mechanisms.json): pas on all; somatic NaTs2_t, SKv3_1,
  SK_E2, CaDynamics_E2, Ca_HVA, Ca_LVAst, Ih; axonal Ca_LVAst, Ca_HVA, CaDynamics_E2, SKv3_1,
  SK_E2, K_Tst, K_Pst, Nap_Et2, NaTa_t; apical Ih, Im, SKv3_1, NaTs2_t; basal Ih;
- parameters (config/parameters.json, the fitted values l5pc_analysis.py's release_params):
  all g_pas 3e-5, e_pas -75, cm 1, Ra 100; apical and basal cm 2; ena 50, ek -85 in somatic,
  axonal, apical; celsius 34, v_init -65; gIhbar 8e-5 uniform in somatic and basal, and along the
  apical tree (-0.8696 + 2.087 exp(0.0031 d)) 8e-5 with d the path distance [um] from soma[0](0.5)
  to the segment's centre (NrnSegmentSomaDistanceScaler);
- one difference, the same in the hinesbatch model (examples/l5pc.json): the axon is the
  morphology's own (BluePyOpt's create(do_replace_axon=False)), not the 60 um two-section stub
  that replace_axon attaches at soma(1), which a hinesbatch model file cannot express.
Protocol: Step1's currents (a -0.126 nA holding current from 0 ms, 0.458 nA from 700 ms for
2000 ms, 3000 ms) shortened to a 0.458 nA step from DEL for DUR, TSTOP in all (20, 80, 100 ms:
seconds for a CI test); IClamps at
soma[0](0.5); fixed step backward Euler, dt 0.025 ms. Writes the soma's v every 0.25 ms and the
spikes (the time of the first step with soma v above -20 mV, NetCon's rule).
With --step3 the step is Step3's, 0.95 nA. With --no-cadyn, CaDynamics_E2 is left out (cai stays 5e-5 mM).

Usage (the committed references were written by):
    /usr/bin/python3 tests/neuron/l5pc_reference.py data/morphologies-asc/C060114A7.asc \
        mechanisms/bbp --step3 > tests/reference/neuron-l5pc/step3.txt
    /usr/bin/python3 tests/neuron/l5pc_reference.py data/morphologies-asc/C060114A7.asc \
        mechanisms/bbp --step3 --no-cadyn > tests/reference/neuron-l5pc/step3_nocadyn.txt
It needs nrnivmodl (Debian's neuron-dev, libinterviews-dev; MAKEFLAGS=libdir=/usr/lib/nrn).
"""
import math
import os
import sys

from nrnmech import compile_mods
from nrnref import instantiate, nseg_rule, print_trace, run, section_lists

DEL, DUR, TSTOP, HOLD, AMP, DT, EVERY, THRESHOLD = 20.0, 80.0, 100.0, -0.126, 0.458, 0.025, 10, -20.0

MECHANISMS = {  # config/mechanisms.json
    "all": ["pas"],
    "somatic": ["NaTs2_t", "SKv3_1", "SK_E2", "CaDynamics_E2", "Ca_HVA", "Ca_LVAst", "Ih"],
    "axonal": ["Ca_LVAst", "Ca_HVA", "CaDynamics_E2", "SKv3_1", "SK_E2", "K_Tst", "K_Pst",
               "Nap_Et2", "NaTa_t"],
    "apical": ["Ih", "Im", "SKv3_1", "NaTs2_t"],
    "basal": ["Ih"],
}
SECTION_PARAMS = [  # config/parameters.json, "type": "section", in its order
    ("all", "g_pas", 3e-05), ("all", "e_pas", -75), ("all", "cm", 1), ("all", "Ra", 100),
    ("apical", "ena", 50), ("apical", "ek", -85), ("apical", "cm", 2),
    ("somatic", "ena", 50), ("somatic", "ek", -85), ("basal", "cm", 2),
    ("axonal", "ena", 50), ("axonal", "ek", -85),
]
RELEASE = {  # examples/l5pc/l5pc_analysis.py release_params (uniform range parameters)
    "gNaTs2_tbar_NaTs2_t.apical": 0.026145, "gSKv3_1bar_SKv3_1.apical": 0.004226,
    "gImbar_Im.apical": 0.000143, "gNaTa_tbar_NaTa_t.axonal": 3.137968,
    "gK_Tstbar_K_Tst.axonal": 0.089259, "gamma_CaDynamics_E2.axonal": 0.002910,
    "gNap_Et2bar_Nap_Et2.axonal": 0.006827, "gSK_E2bar_SK_E2.axonal": 0.007104,
    "gCa_HVAbar_Ca_HVA.axonal": 0.000990, "gK_Pstbar_K_Pst.axonal": 0.973538,
    "gSKv3_1bar_SKv3_1.axonal": 1.021945, "decay_CaDynamics_E2.axonal": 287.198731,
    "gCa_LVAstbar_Ca_LVAst.axonal": 0.008752, "gamma_CaDynamics_E2.somatic": 0.000609,
    "gSKv3_1bar_SKv3_1.somatic": 0.303472, "gSK_E2bar_SK_E2.somatic": 0.008407,
    "gCa_HVAbar_Ca_HVA.somatic": 0.000994, "gNaTs2_tbar_NaTs2_t.somatic": 0.983955,
    "decay_CaDynamics_E2.somatic": 210.485284, "gCa_LVAstbar_Ca_LVAst.somatic": 0.000333,
    "gIhbar_Ih.basal": 8e-05, "gIhbar_Ih.somatic": 8e-05,
}
IH_APICAL = "(-0.8696 + 2.087*math.exp(({distance})*0.0031))*{value}"  # value 8e-05


def main():
    global AMP
    asc, moddir = sys.argv[1], sys.argv[2]
    if "--step3" in sys.argv[3:]:
        AMP = 0.95  # Step3's amplitude
    if "--no-cadyn" in sys.argv[3:]:
        for lst in MECHANISMS.values():
            if "CaDynamics_E2" in lst:
                lst.remove("CaDynamics_E2")
    names = sorted({m for lst in MECHANISMS.values() for m in lst if m != "pas"})
    from neuron import h
    h.nrn_load_dll(compile_mods(moddir, names, "nrn_l5pc_"))
    cell = instantiate(h, "Import3d_Neurolucida3", asc)
    lists = section_lists(cell, {"somatic": "soma", "axonal": "axon", "basal": "dend",
                                 "apical": "apic"})
    for sec in lists["all"]:  # set_nseg
        sec.nseg = nseg_rule(sec)
    for key, mechs in MECHANISMS.items():
        for sec in lists[key]:
            for m in mechs:
                sec.insert(m)
    for key, name, value in SECTION_PARAMS:
        for sec in lists[key]:
            setattr(sec, name, value)
    for full, value in RELEASE.items():
        pname, key = full.split(".")
        if not any(pname.endswith("_" + m) for m in MECHANISMS[key]):
            continue  # --no-cadyn
        for sec in lists[key]:
            for seg in sec:
                setattr(seg, pname, value)
    soma = lists["somatic"][0]
    for sec in lists["apical"]:
        for seg in sec:
            h.distance(0, 0.5, sec=soma)
            d = h.distance(1, seg.x, sec=sec)
            seg.gIhbar_Ih = eval(IH_APICAL.format(distance="%.17g" % d, value="%.17g" % 8e-05))
    h.celsius = 34
    hold = h.IClamp(soma(0.5))
    hold.delay, hold.dur, hold.amp = 0.0, TSTOP, HOLD
    step = h.IClamp(soma(0.5))
    step.delay, step.dur, step.amp = DEL, DUR, AMP
    rows, spikes = run(h, soma(0.5), -65, int(round(TSTOP / DT)), DT, THRESHOLD, EVERY)
    nodes = sum(sec.nseg for sec in lists["all"])
    print("# NEURON %s, %s: %d sections, %d segments (nseg = 1 + 2 int(L/40)), own axon"
          % (h.nrnversion(), os.path.basename(asc), len(lists["all"]), nodes))
    print("# mechanisms: " + "; ".join("%s %s" % (k, " ".join(v)) for k, v in MECHANISMS.items()))
    print("# celsius 34, v_init -65, dt %g, IClamp soma(0.5) %g nA 0..%g ms and %g nA %g..%g ms"
          % (DT, HOLD, TSTOP, AMP, DEL, DEL + DUR))
    print("# soma eca %.17g cai at the end %.17g" % (soma(0.5).eca, soma(0.5).cai))
    print_trace(rows, spikes, THRESHOLD)


if __name__ == "__main__":
    main()
