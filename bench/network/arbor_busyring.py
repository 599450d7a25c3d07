#!/usr/bin/env python3
"""hinesbatch's busyring (docs/network.md, "busyring") in Arbor (the package index's `arbor`).

Arbor's own example/busyring re-created in Python with the file's parameters and hinesbatch's
choices where the two differ: the same morphology per gid (std::mt19937(gid) draws, through
numpy's RandomState, whose seeding and 32-bit outputs are mt19937's), one CV per segment, soma
hh, dendrites pas (0.001 S/cm2, -70 mV), Ra 100, the synapse at the soma's centre, the detector
at its proximal end (10 mV), the ring and the zero-weight connections drawn as Arbor draws them,
the kick an event at 1 ms; like hinesbatch, without Arbor's extra unconnected synapses. Arbor's
CVs are not NEURON's, so spikes are close, not equal.

usage: arbor_busyring.py NET.json [--threads N] [--spikes OUT]   (a file with network.busyring)
"""
import argparse
import json
import math
import time

import arbor as A
import numpy as np
from arbor import units as U

from arbor_net import simulate  # the same run and spike file as for listed networks

DEFAULTS = {"num-cells": 5000, "ring-size": 5, "min-delay": 5.0, "duration": 200.0,
            "dt": 0.025, "event-weight": 0.05, "depth": 5, "branch-probs": [1.0, 0.5],
            "compartments": [20, 2], "lengths": [200.0, 20.0], "synapses": 1}


class Mt:
    """std::mt19937(seed) draws (numpy's legacy seeding is init_genrand)."""
    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)

    def u32(self):
        return int(self.rs.randint(0, 2**32, dtype=np.uint64))

    def canonical(self):  # libstdc++ generate_canonical<double, 53>: two draws
        s = float(self.u32()) + float(self.u32()) * 4294967296.0
        r = s / 18446744073709551616.0
        return r if r < 1.0 else math.nextafter(1.0, 0.0)

    def uniform_u32(self, lo, hi):  # libstdc++ uniform_int_distribution (Lemire)
        rng = hi - lo + 1
        prod = self.u32() * rng
        low = prod & 0xffffffff
        if low < rng:
            thr = (2**32 - rng) % rng
            while low < thr:
                prod = self.u32() * rng
                low = prod & 0xffffffff
        return lo + (prod >> 32)

    def uniform_float(self, lo, hi):  # uniform_real_distribution<float>: one draw, in float
        f = np.float32(self.u32()) / np.float32(4294967296.0)
        if f >= np.float32(1.0):
            f = np.nextafter(np.float32(1.0), np.float32(0.0))
        return np.float32(f * np.float32(hi - lo) + np.float32(lo))


def interp(r, i, n):
    return r[0] + (i * 1.0 / (n - 1)) * (r[1] - r[0])


def morphology(p, gid):
    rs = 12.6157 / 2.0
    tree = A.segment_tree()
    soma = tree.append(A.mnpos, A.mpoint(0, 0, -rs, rs), A.mpoint(0, 0, rs, rs), tag=1)
    cur, z0, gen = [soma], rs, Mt(gid)
    for i in range(p["depth"]):
        bp = interp(p["branch-probs"], i, p["depth"])
        length = interp(p["lengths"], i, p["depth"])
        nc = int(math.floor(interp(p["compartments"], i, p["depth"]) + 0.5))
        nxt = []
        for sec in cur:
            for _ in range(2):
                if not gen.canonical() < bp:
                    continue
                dz, par = length / nc, sec
                for k in range(nc):
                    par = tree.append(par, A.mpoint(0, 0, z0 + (k + 1) * dz, 0.5), tag=3)
                nxt.append(par)
        if not nxt:
            break
        cur, z0 = nxt, z0 + length
    return A.morphology(tree)


class Busyring(A.recipe):
    def __init__(self, p):
        A.recipe.__init__(self)
        self.p = p
        self.props = A.neuron_cable_properties()
        self.props.set_property(Vm=-65 * U.mV, cm=0.01 * U.F / U.m2, rL=100 * U.Ohm * U.cm,
                                tempK=279.45 * U.Kelvin)
        self.n_cv = 0

    def num_cells(self):
        return self.p["num-cells"]

    def cell_kind(self, gid):
        return A.cell_kind.cable

    def cell_description(self, gid):
        morph = morphology(self.p, gid)
        labels = A.label_dict({"soma": "(tag 1)", "dend": "(tag 3)"})
        dec = A.decor()
        dec.paint('"soma"', A.density("hh"))
        dec.paint('"dend"', A.density("pas/e=-70", {"g": 0.001}))
        dec.place("(location 0 0.5)", A.synapse("expsyn", {"tau": 2.0, "e": 0.0}), "p")
        dec.place("(location 0 0)", A.threshold_detector(10 * U.mV), "d")
        cell = A.cable_cell(morph, dec, labels, A.cv_policy("(every-segment)"))
        self.n_cv += A.cv_data(cell).num_cv
        return cell

    def connections_on(self, gid):
        p = self.p
        n, rs = p["num-cells"], p["ring-size"]
        start = gid // rs * rs
        end = min(start + rs, n)
        src = end - 1 if gid == start else gid - 1
        w = float(np.float32(p["event-weight"]))
        md = float(np.float32(p["min-delay"]))
        out = [A.connection((src, "d"), "p", w, md * U.ms)]
        g = Mt(gid)
        for _ in range(1, p["synapses"]):
            s = g.uniform_u32(0, n - 2)
            s += s == gid
            d = float(np.float32(p["min-delay"] + float(g.uniform_float(0.0, 2.0 * p["min-delay"]))))
            out.append(A.connection((s, "d"), "p", 0.0, d * U.ms))
        return out

    def event_generators(self, gid):
        if gid % self.p["ring-size"]:
            return []
        w = float(np.float32(self.p["event-weight"]))
        return [A.event_generator("p", w, A.explicit_schedule([1.0 * U.ms]))]

    def global_properties(self, kind):
        return self.props


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--spikes")
    a = ap.parse_args()
    with open(a.net) as f:
        m = json.load(f)
    p = dict(DEFAULTS)
    p.update(m["network"]["busyring"])
    dt = m.get("dt", p["dt"])
    t_stop = m.get("t_stop", p["duration"])
    t0 = time.time()
    rec = Busyring(p)
    made = time.time() - t0
    spikes, build_s, run_s, steps = simulate(rec, a.threads, t_stop, dt, a.spikes)
    print(json.dumps({"peer": "arbor " + A.__version__, "threads": a.threads,
                      "cells": p["num-cells"], "cvs": rec.n_cv, "steps": steps,
                      "spikes": len(spikes), "build_s": made + build_s, "run_s": run_s,
                      "ns_per_cv_step": run_s * 1e9 / (rec.n_cv * steps)}))


if __name__ == "__main__":
    main()
