#!/usr/bin/env python3
"""Writes a network of BluePyOpt's L5 pyramidal cell (examples/l5pc.json's cell: its ASC
morphology, BBP's 13 mechanisms) connected by BBP's ProbAMPANMDA_EMS synapses, as a hinesbatch
network file. examples/l5pc_network.json is this script's output with the defaults:

    python3 examples/l5pc_network.py 1000 examples/l5pc_network.json

Each cell (docs/network.md, section 12):
- synapses 0 .. K-1: ProbAMPANMDA_EMS on basal and apical dendrites (DENDRITES: the middle of
  chosen sections of C060114A7.asc, by hinesbatch's section index, NEURON's Import3d order),
  each the target of one recurrent connection from a random other cell (a random builder,
  "synapse": "each", delays uniform in [1, 5] ms);
- synapse K: a ProbAMPANMDA_EMS at the soma, the drive: DRIVE_IN Poisson spike sources (gids
  N .. 2N-1, RATE Hz each) picked at random by a second random builder, delay 1 ms;
- a step current of AMP nA into the soma for the whole run;
- the spike detector at the soma, -20 mV.
Every draw is hinesbatch's (Philox streams keyed by the seed and the gid), so the network is
the same on any rank count; tests/neuron/hb_draws.py makes the same draws for NEURON.

Release: stochastic by default, the recurrent synapses with BBP's L5 pyramidal-to-pyramidal
values (Use 0.5, Dep 671 ms, Fac 17 ms, one release site), the drive never failing (Use 1,
Fac 0, Dep 1e-9 ms: it stands for many afferents). With --deterministic every synapse is
Use 1, Fac 0, Dep 1e-9 ms, Nrrp 1: each event releases (unless another reached the same
synapse at the same time), whatever the random numbers, so that NEURON, whose Random123 draws
other numbers, takes the same decisions (tests/neuron/prob_reference.py says why).

usage: l5pc_network.py N OUT.json [--t-stop MS] [--in-degree K] [--deterministic]
       [--backend B] [--seed S] [--amp NA] [--rate HZ] [--drive-in D] [--weight NS]
       [--drive-weight NS] [--record GIDS] [--morphology PATH]
The morphology's path is written relative to OUT's folder when OUT is inside this repository,
else absolute (--morphology: as given).
"""
import argparse
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

# Dendritic sections of C060114A7.asc by hinesbatch's section index (= Import3d's order:
# soma 0, axon 1-128, dend 129-194, apic 195-324), basal and apical in turn; synapse q sits at
# the middle of DENDRITES[q % len(DENDRITES)].
DENDRITES = [130, 200, 140, 230, 150, 260, 160, 290, 170, 215, 180, 245, 190, 275, 135, 305]
SECTION_TYPES = {"dend": (129, 194), "apic": (195, 324)}
DETERMINISTIC = {"Use": 1, "Fac": 0, "Dep": 1e-9, "Nrrp": 1}
RECURRENT = {"Use": 0.5, "Fac": 17, "Dep": 671, "Nrrp": 1}


def network(n, t_stop, k, deterministic, seed, amp, rate, weight, drive_weight, drive_in,
            morphology):
    with open(os.path.join(HERE, "l5pc.json")) as f:
        cell = json.load(f)["cells"][0]
    cell["name"] = "BluePyOpt l5pc (release parameters), ProbAMPANMDA_EMS synapses"
    cell["morphology"] = morphology
    cell["count"] = n
    cell["stimuli"] = [{"type": "iclamp", "at": "soma", "del": 0, "dur": t_stop, "amp": amp}]
    rec = DETERMINISTIC if deterministic else RECURRENT
    cell["synapses"] = [dict({"name": "ProbAMPANMDA_EMS",
                              "at": {"section": DENDRITES[q % len(DENDRITES)], "x": 0.5}}, **rec)
                        for q in range(k)]
    cell["synapses"].append(dict({"name": "ProbAMPANMDA_EMS", "at": "soma"}, **DETERMINISTIC))
    return {
        "t_stop": t_stop, "dt": 0.025, "v_init": -65, "celsius": 34, "sample_dt": 0.25,
        "cells": [cell],
        "network": {
            "sources": [{"name": "drive", "count": n, "start": 0, "interval": 1000.0 / rate,
                         "number": 1000000000, "noise": 1, "seed": seed}],
            "random": [
                {"targets": [0, n], "sources": [0, n], "in_degree": k, "synapse": "each",
                 "weight": weight, "delay": [1, 5], "seed": seed},
                {"targets": [0, n], "sources": [n, n], "in_degree": drive_in, "synapse": k,
                 "weight": drive_weight, "delay": 1, "seed": seed + 1}]},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("n", type=int, help="cells")
    ap.add_argument("out")
    ap.add_argument("--t-stop", type=float, default=100.0, help="[ms] (100)")
    ap.add_argument("--in-degree", type=int, default=8, help="recurrent connections a cell (8)")
    ap.add_argument("--deterministic", action="store_true")
    ap.add_argument("--backend", help="seq, omp, cuda or best (default: the file names none)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--amp", type=float, default=0.5, help="the soma's step current [nA] (0.5)")
    ap.add_argument("--rate", type=float, default=40.0, help="each drive source's rate [Hz] (40)")
    ap.add_argument("--drive-in", type=int, default=4, help="drive sources a cell (4)")
    ap.add_argument("--weight", type=float, default=2.0, help="recurrent weight [nS] (2)")
    ap.add_argument("--drive-weight", type=float, default=3.0, help="drive weight [nS] (3)")
    ap.add_argument("--record", help="gids whose soma v is recorded, e.g. 0,1,2")
    ap.add_argument("--morphology", help="the morphology's path as written (default below)")
    a = ap.parse_args()
    if a.n < 2 or not 1 <= a.in_degree < a.n or not 1 <= a.drive_in <= a.n:
        sys.exit("l5pc_network.py: expected N >= 2, 1 <= --in-degree < N, 1 <= --drive-in <= N")
    asc = os.path.join(ROOT, "data", "morphologies-asc", "C060114A7.asc")
    out_dir = os.path.dirname(os.path.abspath(a.out))
    morph = a.morphology or (os.path.relpath(asc, out_dir)
                             if os.path.commonpath([out_dir, ROOT]) == ROOT else asc)
    m = network(a.n, a.t_stop, a.in_degree, a.deterministic, a.seed, a.amp, a.rate, a.weight,
                a.drive_weight, a.drive_in, morph)
    if a.backend:
        m["backend"] = a.backend
    if a.record:
        m["record"] = {"gids": [int(g) for g in a.record.split(",")], "locations": ["soma"],
                       "variables": ["v"], "sample_dt": 0.25}
    with open(a.out, "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
