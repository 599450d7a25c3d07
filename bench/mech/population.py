#!/usr/bin/env python3
"""A parameter sweep's population as one hinesbatch model file, for bench/mech/run.sh.

Reads a model file of one cell (examples/l5pc.json, examples/allen.json) and a sweep (a JSON
file, bench/mech/l5pc_sweep.json): mechanisms of the cell by name and region, each with a key
and the range of factors it is scaled by. Writes N cells, each its own "cells" entry with its
own values, as an optimiser such as BluePyOpt evaluates a generation: cell i scales parameter q
by lo + (hi - lo) u, u the i-th point of the Halton sequence in base prime(q) (every cell a
different point; the same cells on every run). The values are written with 17 digits, so
hinesbatch (this file) and NEURON (neuron_pop.py, reading this file) get the same doubles.
Morphology paths become absolute. With N 0 the model's cell is written alone, unchanged.

usage: population.py MODEL.json SWEEP.json N OUT.json [--t-stop MS] [--backend B]

The sweep file:
  {"params": [{"name": "NaTs2_t", "region": "soma", "key": "gNaTs2_tbar", "scale": [0.8, 1.2]},
              ...]}
"name" as the model file writes it ("bbp::Ih" or "Ih"), "key" a numeric parameter or a
distribution's "value" ({"value": ..., "exp_distance": ...}).
"""
import argparse
import copy
import json
import os
import sys

PRIMES = [2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37]


def halton(i, base):
    f, r = 1.0, 0.0
    while i > 0:
        f /= base
        r += f * (i % base)
        i //= base
    return r


def sweep_cells(cell, params, n):
    out = []
    for i in range(n):
        c = copy.deepcopy(cell)
        c["name"] = "%s #%d" % (cell.get("name", "cell"), i)
        c.pop("count", None)
        for q, p in enumerate(params):
            lo, hi = p["scale"]
            factor = lo + (hi - lo) * halton(i + 1, PRIMES[q % len(PRIMES)])
            hits = [m for m in c["mechanisms"]
                    if m["name"] == p["name"] and m.get("region", "all") == p.get("region", "all")]
            if not hits:
                sys.exit("population.py: sweep parameter %d: no mechanism %s in region %s of the "
                         "model's cell" % (q, p["name"], p.get("region", "all")))
            for m in hits:
                if p["key"] not in m:
                    sys.exit("population.py: sweep parameter %d: %s in %s has no key %s"
                             % (q, p["name"], p.get("region", "all"), p["key"]))
                if isinstance(m[p["key"]], dict):
                    m[p["key"]]["value"] = float("%.17g" % (m[p["key"]]["value"] * factor))
                else:
                    m[p["key"]] = float("%.17g" % (m[p["key"]] * factor))
        out.append(c)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("sweep")
    ap.add_argument("n", type=int)
    ap.add_argument("out")
    ap.add_argument("--t-stop", type=float)
    ap.add_argument("--backend")
    a = ap.parse_args()
    with open(a.model) as f:
        model = json.load(f)
    with open(a.sweep) as f:
        params = json.load(f)["params"]
    if len(model["cells"]) != 1:
        sys.exit("population.py: %s: expected a model of one cell" % a.model)
    cell = model["cells"][0]
    if "morphology" in cell:
        cell["morphology"] = os.path.abspath(
            os.path.join(os.path.dirname(os.path.abspath(a.model)), cell["morphology"]))
    model["cells"] = sweep_cells(cell, params, a.n) if a.n > 0 else [cell]
    if a.t_stop is not None:
        model["t_stop"] = a.t_stop
    if a.backend:
        model["backend"] = a.backend
    with open(a.out, "w") as f:
        json.dump(model, f, indent=1)


if __name__ == "__main__":
    main()
