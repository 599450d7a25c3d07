#!/usr/bin/env python3
"""Run a hinesbatch network file in Arbor (the package index's `arbor`), for bench/network.

Supports what bench/network's files use: cells given by "sections" (cylinders; "parent_x" 1),
per-region "nseg" (one CV per NEURON segment: fixed-per-branch on every section), hh and pas,
ExpSyn synapses, a detector probe, regular NetStims (noise 0) and explicit connections.
Anything else is refused. Arbor's CVs are not NEURON's, so the spikes are close to, not the
same as, NEURON's and hinesbatch's.

usage: arbor_net.py NET.json [--threads N] [--spikes OUT]
prints one JSON line: cells, CVs, steps, spikes, build and run seconds, ns per CV-step.
"""
import argparse
import json
import math
import time

import arbor as A
from arbor import units as U

REGION = {"soma": 1, "axon": 2, "dend": 3, "basal": 3, "apical": 4}


def tag(s, i):
    t = s.get("type", "soma" if i == 0 else "dend")
    return t if isinstance(t, int) else REGION[t]


class Net(A.recipe):
    def __init__(self, m):
        A.recipe.__init__(self)
        self.m = m
        if len(m["cells"]) != 1:
            raise SystemExit("one cell entry (with count) only")
        self.spec = spec = m["cells"][0]
        self.n_cells = spec.get("count", 1)
        self.sources = []
        for s in m["network"].get("sources", []):
            if s.get("noise", 0) != 0:
                raise SystemExit("noisy sources are not supported")
            for _ in range(s.get("count", 1)):
                self.sources.append(s)
        self.conns = [[] for _ in range(self.n_cells)]
        for c in m["network"]["connections"]:
            self.conns[c["target"]].append(c)
        for k in ("ring", "random", "busyring"):
            if m["network"].get(k):
                raise SystemExit("builders are not supported")
        self.props = A.neuron_cable_properties()
        self.props.set_property(Vm=m.get("v_init", -65) * U.mV,
                                cm=spec.get("cm", 1) / 100.0 * U.F / U.m2,
                                rL=spec.get("Ra", 100) * U.Ohm * U.cm,
                                tempK=(273.15 + m.get("celsius", 6.3)) * U.Kelvin)
        self.cell = self.make_cell()
        self.n_cv = A.cv_data(self.cell).num_cv  # Arbor's own count

    def make_cell(self):
        spec = self.spec
        tree = A.segment_tree()
        seg_of, end = {}, {}
        self.nseg = []
        for i, s in enumerate(spec["sections"]):
            if s.get("parent_x", 1) != 1:
                raise SystemExit("sections must attach at parent_x 1")
            r = s["diam"] / 2
            par = s.get("parent")
            z0 = end[par] if par is not None else 0.0
            parent = A.mnpos if par is None else seg_of[par]
            seg_of[s["name"]] = tree.append(parent, A.mpoint(0, 0, z0, r),
                                            A.mpoint(0, 0, z0 + s["length"], r), tag=tag(s, i))
            end[s["name"]] = z0 + s["length"]
            nseg = 1
            for reg in spec.get("regions", []):
                if reg["region"] in ("all", s.get("type")) and "nseg" in reg:
                    nseg = reg["nseg"]
            self.nseg.append(nseg)
        self.seg_of = seg_of
        labels = A.label_dict({"soma": "(tag 1)", "dend": "(tag 3)"})
        dec = A.decor()
        for mech in spec.get("mechanisms", []):
            params = {k: v for k, v in mech.items() if k not in ("name", "region")}
            name = mech["name"]
            if name == "pas" and "e" in params:  # a global parameter of Arbor's pas
                name = "pas/e=%r" % params.pop("e")
            dec.paint('"%s"' % mech.get("region", "all") if mech.get("region") else "(all)",
                      A.density(name, params))
        for k, sy in enumerate(spec["synapses"]):
            if sy["type"] != "expsyn":
                raise SystemExit("expsyn only")
            at = sy["at"]
            loc = ("(on-components %r (segment %d))" % (at["x"], seg_of[at["section"]])
                   if isinstance(at, dict) else "(on-components 0.5 (segment 0))")
            dec.place(loc, A.synapse("expsyn", {"tau": sy.get("tau", 2), "e": sy.get("e", 0)}),
                      "s%d" % k)
        probe = next(p for p in spec["probes"] if "spike_threshold" in p)
        if probe["at"] != "soma":
            raise SystemExit("the detector must be at the soma")
        dec.place("(on-components 0.5 (segment 0))",
                  A.threshold_detector(probe["spike_threshold"] * U.mV), "detector")
        # one CV per NEURON segment: nseg CVs on each section (a segment here)
        pols = ["(fixed-per-branch %d (segment %d))" % (n, seg_of[s["name"]])
                for n, s in zip(self.nseg, spec["sections"])]
        policy = pols[0]
        for p in pols[1:]:
            policy = "(join %s %s)" % (policy, p)
        return A.cable_cell(A.morphology(tree), dec, labels, A.cv_policy(policy))

    def num_cells(self):
        return self.n_cells + len(self.sources)

    def cell_kind(self, gid):
        return A.cell_kind.cable if gid < self.n_cells else A.cell_kind.spike_source

    def cell_description(self, gid):
        if gid < self.n_cells:
            return self.cell
        s = self.sources[gid - self.n_cells]
        t_stop = self.m["t_stop"]
        return A.spike_source_cell("src", A.explicit_schedule(
            [(s["start"] + k * s["interval"]) * U.ms for k in range(int(s["number"]))
             if s["start"] + k * s["interval"] <= t_stop]))

    def connections_on(self, gid):
        if gid >= self.n_cells:
            return []
        out = []
        for c in self.conns[gid]:
            src = c["source"]
            label = "detector" if src < self.n_cells else "src"
            out.append(A.connection((src, label), "s%d" % c.get("synapse", 0), c["weight"],
                                    c["delay"] * U.ms))
        return out

    def global_properties(self, kind):
        return self.props


def simulate(rec, threads, t_stop, dt, spikes_path=None):
    """Runs a recipe: its spikes as sorted (time, gid), the seconds to build the simulation
    and to run it, and the steps; the spikes written as 'gid time' lines when asked."""
    t0 = time.time()
    ctx = A.context(threads=threads)
    sim = A.simulation(rec, ctx, A.partition_load_balance(rec, ctx))
    sim.record(A.spike_recording.all)
    t1 = time.time()
    sim.run(t_stop * U.ms, dt * U.ms)
    t2 = time.time()
    spikes = sorted((float(t), int(src[0])) for src, t in sim.spikes())
    if spikes_path:
        with open(spikes_path, "w") as f:
            for t, g in spikes:
                f.write("%d %.17g\n" % (g, t))
    return spikes, t1 - t0, t2 - t1, math.ceil(t_stop / dt - 1e-9)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--spikes")
    a = ap.parse_args()
    with open(a.net) as f:
        m = json.load(f)
    t0 = time.time()
    rec = Net(m)
    made = time.time() - t0
    spikes, build_s, run_s, steps = simulate(rec, a.threads, m["t_stop"], m.get("dt", 0.025),
                                             a.spikes)
    print(json.dumps({"peer": "arbor " + A.__version__, "threads": a.threads,
                      "cells": rec.n_cells, "cvs_per_cell": rec.n_cv, "steps": steps,
                      "spikes": len(spikes),
                      "cell_spikes": sum(1 for t, g in spikes if g < rec.n_cells),
                      "build_s": made + build_s, "run_s": run_s,
                      "ns_per_cv_step": run_s * 1e9 / (rec.n_cells * rec.n_cv * steps)}))


if __name__ == "__main__":
    main()
