#!/usr/bin/python3
"""NEURON 8.2 reference for test_sim_cat: a small cell with Blue Brain Project channels.

The cell of data/reference/neuron-matrix/small.swc (one NEURON segment per SWC segment, the
soma one, as test_sim_neuron), Ra 100 ohm cm, cm 1 uF/cm2, celsius 34, pas (g 1e-4 S/cm2, e -65 mV)
everywhere; in the soma NaTs2_t, K_Pst, SKv3_1, Ca_HVA, SK_E2 (reads cai: eca by Nernst at
initialisation there, NEURON's ion_style) and Ih, ek = -85 mV; in the dendrites Ih and
Ca_HVA (eca NEURON's constant 132.4579 mV there); the .mod files of mechanisms/bbp compiled by
nrnivmodl. IClamp at soma(0.5), finitialize(-65), fixed step backward Euler, dt 0.025 ms.
Writes the soma's voltage every 0.25 ms and the soma's spike steps.

With --cadyn also CaDynamics_E2 in the soma (gamma 0.5: writes cai, so eca follows cai by
Nernst every step there, and SK_E2 reads the changing cai); the soma's final cai is written.
With --cn Crank-Nicolson as NEURON's secondorder 2 (the ion currents corrected by di/dv times
the solve's dv before the states read them: CaDynamics_E2's ica).

Usage (the committed references were written by):
    /usr/bin/python3 tests/neuron_cat_bbp.py data/reference/neuron-matrix/small.swc \
        mechanisms/bbp > tests/neuron_cat_bbp.txt
    /usr/bin/python3 tests/neuron_cat_bbp.py data/reference/neuron-matrix/small.swc \
        mechanisms/bbp --cadyn > tests/neuron_cat_bbp_cadyn.txt
    /usr/bin/python3 tests/neuron_cat_bbp.py data/reference/neuron-matrix/small.swc \
        mechanisms/bbp --cadyn --cn > tests/neuron_cat_bbp_cn.txt
It needs nrnivmodl (Debian's neuron-dev, libinterviews-dev; MAKEFLAGS=libdir=/usr/lib/nrn).
"""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "neuron"))
from nrnmech import compile_mods  # noqa: E402  (tests/neuron/nrnmech.py)
from nrnref import instantiate, print_trace, run  # noqa: E402  (tests/neuron/nrnref.py)

MECHS = ["NaTs2_t", "K_Pst", "SKv3_1", "Ca_HVA", "SK_E2", "Ih", "CaDynamics_E2"]
SOMA = {"NaTs2_t": ("gNaTs2_tbar", 0.9), "K_Pst": ("gK_Pstbar", 0.1),
        "SKv3_1": ("gSKv3_1bar", 0.5), "Ca_HVA": ("gCa_HVAbar", 0.001),
        "SK_E2": ("gSK_E2bar", 0.05), "Ih": ("gIhbar", 8e-5)}
DEND = {"Ih": ("gIhbar", 2e-4), "Ca_HVA": ("gCa_HVAbar", 5e-4)}
DEL, AMP, DUR, STEPS, EVERY = 2.0, 0.3, 1e9, 2000, 10


def main():
    swc, moddir = sys.argv[1], sys.argv[2]
    if "--cadyn" in sys.argv[3:]:
        SOMA["CaDynamics_E2"] = ("gamma", 0.5)
    from neuron import h
    h.nrn_load_dll(compile_mods(moddir, MECHS, "nrn_cat_"))
    cell = instantiate(h, "Import3d_SWC_read", swc)
    h.celsius = 34
    for sec in cell.all:
        # one segment per SWC segment; the soma (one SWC point) one segment
        sec.nseg = 1 if "soma" in sec.name() else max(1, sec.n3d() - 1)
        sec.Ra, sec.cm = 100.0, 1.0
        sec.insert("pas")
        for seg in sec:
            seg.pas.g, seg.pas.e = 1e-4, -65.0
        table = SOMA if "soma" in sec.name() else DEND
        for m, (p, val) in table.items():
            sec.insert(m)
            for seg in sec:
                setattr(getattr(seg, m), p, val)
        if "soma" in sec.name():
            sec.ek = -85.0
    soma = cell.soma[0]
    dend = [s for s in cell.all if "soma" not in s.name()][0]
    st = h.IClamp(soma(0.5))
    st.delay, st.dur, st.amp = DEL, DUR, AMP
    secondorder = 2 if "--cn" in sys.argv[3:] else 0
    rows, spikes = run(h, soma(0.5), -65, STEPS, 0.025, 0.0, EVERY, secondorder, clock="t")
    print("# NEURON %s, swc=%s celsius=34 dt=0.025 Ra=100 cm=1 pas g=1e-4 e=-65 everywhere"
          % (h.nrnversion(), os.path.basename(swc))
          + (" secondorder=%d" % secondorder if secondorder else ""))
    print("# soma: " + " ".join("%s.%s=%g" % (m, p, v) for m, (p, v) in SOMA.items())
          + " ek=-85; dendrites: " + " ".join("%s.%s=%g" % (m, p, v) for m, (p, v) in DEND.items()))
    print("# eca soma %.17g dend %.17g (ion_style: Nernst at init where cai is read)"
          % (soma(0.5).eca, dend(0.5).eca))
    print("# iclamp soma(0.5) del=%g amp=%g" % (DEL, AMP))
    print("# cai soma at the end %.17g eca %.17g" % (soma(0.5).cai, soma(0.5).eca))
    print_trace(rows, spikes, 0.0)


if __name__ == "__main__":
    main()
