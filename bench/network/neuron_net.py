#!/usr/bin/env python3
"""Run a hinesbatch network file (listed connections) in NEURON, for bench/network.

The network is built by tests/neuron/net_reference.py's run_neuron (the script that makes
the test references): the same sections, nseg, mechanisms, ExpSyns, NetStims and NetCons,
fixed step, cache_efficient. Prints one JSON line; --spikes writes 'gid time' lines.

usage: neuron_net.py NET.json [--spikes OUT]
"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..",
                                "tests", "neuron"))
from net_reference import run_neuron  # noqa: E402


def compartments(spec):
    total = 0
    for s in spec["sections"]:
        nseg = 1
        for r in spec.get("regions", []):
            if r["region"] in ("all", s.get("type")) and "nseg" in r:
                nseg = r["nseg"]
        total += nseg
    return total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("--spikes")
    a = ap.parse_args()
    with open(a.net) as f:
        m = json.load(f)
    import neuron
    spikes, n_cells, n_gids, elapsed, t_end = run_neuron(a.net)
    if a.spikes:
        with open(a.spikes, "w") as f:
            for t, g in spikes:
                f.write("%d %.17g\n" % (g, t))
    comp = compartments(m["cells"][0])
    steps = math.ceil(m["t_stop"] / m.get("dt", 0.025) - 1e-9)
    print(json.dumps({"peer": "neuron " + neuron.__version__, "threads": 1, "cells": n_cells,
                      "compartments_per_cell": comp, "steps": steps, "spikes": len(spikes),
                      "cell_spikes": sum(1 for t, g in spikes if g < n_cells),
                      "run_s": elapsed,
                      "ns_per_compartment_step": elapsed * 1e9 / (n_cells * comp * steps)}))


if __name__ == "__main__":
    main()
