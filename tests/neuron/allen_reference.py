#!/usr/bin/python3
"""NEURON 8.2 reference for the allen test: the Allen Cell Types model of Arbor's
single_cell_allen example, built as the AllenSDK builds its models (tests/reference/neuron-allen/
SOURCES.md), without the AllenSDK itself:
- morphology single_cell_allen.swc by Import3d_SWC_read and Import3d_GUI(r, 0).instantiate;
- nseg = 1 + 2 int(L / 40) for every section (AllenSDK's generate_morphology);
- the fit (data/models/single_cell_allen_fit.json) as AllActiveUtils.load_cell_parameters
  applies it: Ra = passive.ra and pas in every section; then each genome entry in order, into
  the section list it names (soma, axon, apic, dend), inserting its mechanism; ek and ena per
  section list where the k and na ions are present; celsius and v_init from the conditions;
- one difference, the same as Arbor's example and its NEURON trace: the axon is the
  morphology's own, not the AllenSDK's two 30 um sections (--replace-axon builds those, for
  the comparison in docs/validation.md; a hinesbatch model file cannot express them).
Stimulus: an IClamp at soma[0](0.5), AMP nA from DEL for DUR ms, TSTOP in all (Arbor's example:
0.15 nA from 200 ms for 1000 ms, 1400 ms; --short: 0.3 nA from 20 ms to 120 ms, seconds for a
CI test). Fixed step backward Euler at DT ms. Writes the soma's v every EVERY steps and the
spikes (the time of the first step with soma v above -40 mV, NetCon's rule; Arbor's detector
threshold).

With --grid the morphology is first put on a grid that single precision holds exactly
(on_grid: coordinates to 1/8 um, radii to 1/16 um, tests/neuron/soma_reference.py's rule):
NEURON keeps 3-D points in single precision (and the one-point soma's x -/+ r, which sets its
length, as well), hinesbatch in double; on the grid the two cells are the same.

Usage (the committed references were written by):
    /usr/bin/python3 tests/neuron/allen_reference.py data/morphologies/single_cell_allen.swc \
        data/models/single_cell_allen_fit.json mechanisms/allen --short \
        > tests/reference/neuron-allen/short.txt
    /usr/bin/python3 tests/neuron/allen_reference.py data/morphologies/single_cell_allen.swc \
        data/models/single_cell_allen_fit.json mechanisms/allen --short --grid \
        > tests/reference/neuron-allen/short_grid.txt
Options: --short, --arbor (Arbor's protocol), --dt DT, --every N, --grid,
--replace-axon stub|truncated.
It needs nrnivmodl (Debian's neuron-dev; tests/neuron/nrnmech.py).
"""
import json
import os
import sys
import tempfile

from nrnmech import compile_mods
from nrnref import instantiate, nseg_rule, on_grid, print_trace, run, section_lists

THRESHOLD = -40.0
PROTOCOLS = {  # name: (amp [nA], del [ms], dur [ms], tstop [ms])
    "--short": (0.3, 20.0, 100.0, 120.0),
    "--arbor": (0.15, 200.0, 1000.0, 1400.0),
}


def option(args, name, default, kind=float):
    return kind(args[args.index(name) + 1]) if name in args else default


def main():
    swc, fit_path, moddir = sys.argv[1:4]
    args = sys.argv[4:]
    proto = next((p for p in PROTOCOLS if p in args), "--short")
    amp, delay, dur, tstop = PROTOCOLS[proto]
    dt = option(args, "--dt", 0.025)
    every = option(args, "--every", 10, int)
    replace_axon = option(args, "--replace-axon", None, str)
    grid = "--grid" in args
    if grid:
        with tempfile.NamedTemporaryFile("w", suffix=".swc", delete=False) as f:
            f.write(on_grid(open(swc).read()))
        swc_name, swc = os.path.basename(swc), f.name
    else:
        swc_name = os.path.basename(swc)
    fit = json.load(open(fit_path))
    genome = fit["genome"]
    conditions = fit["conditions"][0]
    mechs = sorted({p["mechanism"] for p in genome if p["mechanism"]})

    from neuron import h
    h.nrn_load_dll(compile_mods(moddir, mechs, "nrn_allen_"))
    cell = instantiate(h, "Import3d_SWC_read", swc)
    if grid:
        os.unlink(swc)
    lists = section_lists(cell, {k: k for k in ["soma", "axon", "apic", "dend"]})
    for sec in lists["all"]:
        sec.nseg = nseg_rule(sec)
    soma = lists["soma"][0]
    if replace_axon:  # the AllenSDK's: two 30 um sections for the reconstructed axon
        # "stub" (Utils.generate_morphology): 1 um, at soma(0.5); "truncated" (AllActiveUtils'
        # legacy): the first axon section's diameter, then that of the first one whose middle
        # is past 60 um from soma(0), at soma(1)
        assert replace_axon in ("stub", "truncated"), replace_axon
        diams = [1.0, 1.0]
        if replace_axon == "truncated":
            diams = [lists["axon"][0].diam] * 2
            h.distance(0, 0.0, sec=soma)
            far = [s for s in lists["axon"] if h.distance(1, 0.5, sec=s) > 60]
            if far:
                diams[1] = far[0].diam
        for sec in lists["axon"]:
            h.delete_section(sec=sec)
        stub = [h.Section(name="axon_stub%d" % i) for i in range(2)]
        for sec, d in zip(stub, diams):
            sec.L, sec.diam = 30, d
            sec.nseg = nseg_rule(sec)
        stub[0].connect(soma(0.5 if replace_axon == "stub" else 1.0), 0.0)
        stub[1].connect(stub[0](1.0), 0.0)
        h.define_shape()
        lists["axon"] = stub
        lists["all"] = [s for k in ["soma", "axon", "apic", "dend"] for s in lists[k]]
    for sec in lists["all"]:
        sec.Ra = float(fit["passive"][0]["ra"])
        sec.insert("pas")
    for p in genome:
        secs = lists[p["section"]]
        for sec in secs:
            if p["mechanism"] and not h.ismembrane(p["mechanism"], sec=sec):
                sec.insert(p["mechanism"])
            setattr(sec, p["name"], float(p["value"]))
    for erev in conditions["erev"]:
        for sec in lists[erev["section"]]:
            if h.ismembrane("k_ion", sec=sec):
                sec.ek = float(erev["ek"])
            if h.ismembrane("na_ion", sec=sec):
                sec.ena = float(erev["ena"])
    h.celsius = float(conditions["celsius"])
    v_init = float(conditions["v_init"])
    stim = h.IClamp(soma(0.5))
    stim.delay, stim.dur, stim.amp = delay, dur, amp
    rows, spikes = run(h, soma(0.5), v_init, int(round(tstop / dt)), dt, THRESHOLD, every)
    nodes = sum(sec.nseg for sec in lists["all"])
    print("# NEURON %s, %s%s: %d sections, %d segments (nseg = 1 + 2 int(L/40)), %s"
          % (h.nrnversion(), swc_name, " on the grid" if grid else "", len(lists["all"]), nodes,
             "the AllenSDK's axon (%s)" % replace_axon if replace_axon else "own axon"))
    print("# fit %s: %d genome entries; mechanisms %s; celsius %g, v_init %g"
          % (os.path.basename(fit_path), len(genome), " ".join(mechs), h.celsius, v_init))
    print("# dt %g, IClamp soma(0.5) %g nA %g..%g ms, tstop %g ms"
          % (dt, amp, delay, delay + dur, tstop))
    print("# soma eca %.17g cai at the end %.17g" % (soma(0.5).eca, soma(0.5).cai))
    print_trace(rows, spikes, THRESHOLD)


if __name__ == "__main__":
    main()
