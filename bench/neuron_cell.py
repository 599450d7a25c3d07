#!/usr/bin/python3
"""NEURON peer for `hinesbatch bench cell`: the same model, timed the same way.

Builds CELLS copies of an SWC cell with NEURON's Import3d (nseg 1 per section,
NEURON's default, as the bench's HB_SCHEME_NEURON fixed-nseg-1 cable), Ra and cm
as given, and one of three membranes:
  passive   pas everywhere (g 1e-4 S/cm2, e -65 mV)
  hh-soma   hh.mod in the soma sections, pas elsewhere
  hh-all    hh.mod everywhere
with an IClamp at soma(0.5) (del 1 ms, 0.5 nA, on for the whole run). Then
finitialize(-65), a few warm-up steps, and REPEATS timed runs of STEPS fadvance()
calls (fixed step, dt 0.025 ms, backward Euler, hh's TABLE on: NEURON's defaults;
--cache-efficient 1 turns on cvode.cache_efficient, NEURON's faster node order).
Prints one JSON object: ns per compartment-step (median, min, max), the
compartments (segments) and matrix nodes per cell.

Run with Debian's python3-neuron: /usr/bin/python3 (the python3 first on PATH may
lack it). To measure NEURON's matrix solve, run it under perf (the bench does, with
--neuron-perf): the share of samples in nrn_solve / triang / bksub among those
in the timed stepping: perf record --delay starts sampling after the setup (whose
duration a first run reports as setup_s), so the samples are the stepping's.
"""
import argparse
import json
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--swc", required=True)
    ap.add_argument("--kind", choices=["passive", "hh-soma", "hh-all"], required=True)
    ap.add_argument("--cells", type=int, default=256)
    ap.add_argument("--steps", type=int, default=200)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ra", type=float, default=100.0)
    ap.add_argument("--cm", type=float, default=1.0)
    ap.add_argument("--cache-efficient", type=int, default=0,
                    help="cvode.cache_efficient(1): NEURON's contiguous node order")
    a = ap.parse_args()
    try:
        from neuron import h
    except ImportError as e:
        print(json.dumps({"error": "NEURON is not available to %s: %s" % (sys.executable, e)}))
        return 3
    h.load_file("stdrun.hoc")
    h.load_file("import3d.hoc")

    class Cell:
        def __init__(self, swc):
            r = h.Import3d_SWC_read()
            r.quiet = 1
            r.input(swc)
            self.i3d = h.Import3d_GUI(r, 0)
            self.i3d.instantiate(self)

    t_setup = time.perf_counter()
    cells = [Cell(a.swc) for _ in range(a.cells)]
    stims = []
    for c in cells:
        for sec in c.all:
            sec.nseg = 1
            sec.Ra = a.ra
            sec.cm = a.cm
            soma = "soma" in sec.name()
            if a.kind == "hh-all" or (a.kind == "hh-soma" and soma):
                sec.insert("hh")
            else:
                sec.insert("pas")
                for seg in sec:
                    seg.pas.g = 1e-4
                    seg.pas.e = -65.0
        st = h.IClamp(c.soma[0](0.5))
        st.delay, st.dur, st.amp = 1.0, 1e9, 0.5
        stims.append(st)
    secs = list(h.allsec())
    segments = sum(s.nseg for s in secs)
    h.dt = 0.025
    h.secondorder = 0
    h.cvode.cache_efficient(a.cache_efficient)
    h.finitialize(-65.0)
    for _ in range(10):
        h.fadvance()
    t_setup = time.perf_counter() - t_setup
    ns = []
    for _ in range(a.repeats):
        t0 = time.perf_counter()
        for _ in range(a.steps):
            h.fadvance()
        t1 = time.perf_counter()
        ns.append((t1 - t0) / (segments * a.steps) * 1e9)
    print(json.dumps({
        "neuron": h.nrnversion(), "swc": a.swc, "kind": a.kind, "cells": a.cells,
        "steps": a.steps, "repeats": a.repeats, "cache_efficient": a.cache_efficient,
        "compartments_per_cell": segments // a.cells,
        "sections_per_cell": len(secs) // a.cells,
        "ns_per_compartment_step": statistics.median(ns),
        "ns_min": min(ns), "ns_max": max(ns),
        "v_soma_end": cells[0].soma[0](0.5).v, "setup_s": t_setup,
    }))
    return 0


if __name__ == "__main__":
    sys.exit(main())
