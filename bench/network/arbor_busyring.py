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
import time

import arbor as A
from arbor import units as U

from arbor_net import simulate  # the same run and spike file as for listed networks
from busyring_draws import (DEFAULTS, DEND_RADIUS, KICK_MS, SOMA_RADIUS, branches,
                            connections, kick_weight, kicked)

def morphology(p, gid):
    rs = SOMA_RADIUS
    tree = A.segment_tree()
    soma = tree.append(A.mnpos, A.mpoint(0, 0, -rs, rs), A.mpoint(0, 0, rs, rs), tag=1)
    ends = []  # each branch's last segment
    for level, parent, nc, length, z0 in branches(p, gid):
        par = soma if parent < 0 else ends[parent]  # level 0 starts at the soma's distal end
        for k in range(nc):
            par = tree.append(par, A.mpoint(0, 0, z0 + (k + 1) * (length / nc), DEND_RADIUS),
                              tag=3)
        ends.append(par)
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
        return [A.connection((src, "d"), "p", w, d * U.ms)
                for src, w, d in connections(self.p, gid)]

    def event_generators(self, gid):
        if not kicked(self.p, gid):
            return []
        return [A.event_generator("p", kick_weight(self.p),
                                  A.explicit_schedule([KICK_MS * U.ms]))]

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
