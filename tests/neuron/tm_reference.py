#!/usr/bin/python3
"""NEURON reference of tests/nmodl/tm/TMSyn.mod, a facilitating and depressing synapse whose
state is per connection (tests/point_tm.sh, test_sim_cat --tm).

Regenerate (Debian's python3-neuron, NEURON 8.2; the system Python), from the repository root:

    /usr/bin/python3 tests/neuron/tm_reference.py

One soma (L = diam = 20 um, nseg 1, cm 1 uF/cm2, Ra 100 ohm cm, pas g 1e-4 S/cm2 e -65 mV), a
TMSyn at soma(0.5) (e 0 mV, tau_1 3 ms, tau_rec 200 ms, tau_facil 50 ms, U 0.3, u0 0), and two
connections onto it from NetStims (noise 0), each with its own resources: A every 10 ms from
5 ms, 8 events, weight 0.004 uS; B every 20 ms from 12.5 ms, 4 events, weight 0.006 uS; both
with delay 1 ms. Fixed step dt 0.025 ms, secondorder 0, 150 ms; writes
tests/reference/tm_neuron.txt: 't v g i' every 0.25 ms (%.17g; g and i the TMSyn's, as
test_sim_cat records "syn[0].g" and "syn[0].i").
"""
import math
import os

from nrnref import ROOT, load_mods


def main():
    h = load_mods("tests/nmodl/tm", ["TMSyn"], "nrn_tm_")
    h.load_file("stdrun.hoc")
    h.cvode_active(0)
    h.secondorder = 0
    h.dt = 0.025
    h.celsius = 6.3
    soma = h.Section(name="soma")
    soma.L = soma.diam = 20
    soma.nseg, soma.cm, soma.Ra = 1, 1, 100
    soma.insert("pas")
    soma.g_pas, soma.e_pas = 1e-4, -65
    syn = h.TMSyn(soma(0.5))
    syn.e, syn.tau_1, syn.tau_rec, syn.tau_facil, syn.U, syn.u0 = 0, 3, 200, 50, 0.3, 0
    keep = []
    for start, interval, number, weight in ((5, 10, 8, 0.004), (12.5, 20, 4, 0.006)):
        ns = h.NetStim()
        ns.start, ns.interval, ns.number, ns.noise = start, interval, number, 0
        nc = h.NetCon(ns, syn)
        nc.weight[0], nc.delay = weight, 1
        keep += [ns, nc]
    v = h.Vector().record(soma(0.5)._ref_v, 0.25)
    t = h.Vector().record(h._ref_t, 0.25)
    g = h.Vector().record(syn._ref_g, 0.25)
    i = h.Vector().record(syn._ref_i, 0.25)
    h.finitialize(-65)
    for _ in range(math.ceil(150 / h.dt - 1e-9)):
        h.fadvance()
    with open(os.path.join(ROOT, "tests", "reference", "tm_neuron.txt"), "w") as f:
        for a, b, c, d in zip(t, v, g, i):
            f.write("%.17g %.17g %.17g %.17g\n" % (a, b, c, d))
    print("tm_neuron: %d samples, v from %.6g to %.6g mV" % (len(v), v.min(), v.max()))


if __name__ == "__main__":
    main()
