#!/usr/bin/env python3
"""The real-morphology network of bench/network/run.sh's `real` mode, as a network file.

N cells cycle through the SWC files of a folder (name order): file k gets the cells
i < N with i % files == k, as one cell entry with "count" (so gids are grouped by file; the
multiset of cells is the cycle's). Every cell: NEURON's Import3d sections, d-lambda 0.1 at
100 Hz, hh on the soma and pas everywhere (g 1e-4 S/cm2, e -65 mV), an IClamp of AMP nA at
the root's middle from 1 ms to t_stop so that no cell idles, an ExpSyn there (tau 2 ms, e 0)
and a spike detector (-10 mV). A file without a soma (SWC type 1) gets hh everywhere, so it
spikes too. A file NEURON's Import3d cannot take as it is (a parent after its child, a radius
0) is copied to OUT_swc/, renumbered parents first and radii 0 repaired. One ring builder connects all N cells (gid i to i + 1, the last to 0), weight
WEIGHT uS, delay 2 ms. The file stays small at any N: 18 cell entries and one builder.

usage: real_network.py N T_STOP OUT.json [--folder DIR] [--backend B] [--amp NA]
                                         [--weight US] [--files K]
"""
import argparse
import json
import os


def swc_files(folder):
    return sorted(os.path.join(os.path.abspath(folder), f) for f in os.listdir(folder)
                  if f.endswith(".swc"))


def has_soma(path):
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 7 and not line.lstrip().startswith("#") and w[1] == "1":
                return True
    return False


def neuron_ready(path, out_dir):
    """The file, or where NEURON's Import3d cannot take it as it is (a parent listed after its
    child; a radius of 0, which NEURON's d-lambda rule refuses): a copy in out_dir with the
    samples renumbered parents first (depth-first from each root, children in file order) and
    each radius 0 given its parent's (a root's: its first positive child's), hinesbatch's
    "repair" rule. The same tree and points for both simulators."""
    rows, ids = [], set()
    with open(path) as f:
        for line in f:
            w = line.split()
            if len(w) >= 7 and not line.lstrip().startswith("#"):
                rows.append(w)
                ids.add(int(w[0]))
    if all(int(w[6]) < int(w[0]) and float(w[5]) > 0 for w in rows):
        return path
    children = {}
    for w in rows:
        parent = int(w[6])
        children.setdefault(parent if parent in ids else -1, []).append(w)
    new, radius, order, stack = {}, {}, [], [(w, None) for w in reversed(children.get(-1, []))]
    while stack:
        w, parent = stack.pop()
        me = int(w[0])
        new[me] = len(new) + 1
        r = float(w[5])
        if r <= 0:
            r = radius[parent] if parent is not None else next(
                (float(c[5]) for c in children.get(me, []) if float(c[5]) > 0), 1.0)
        radius[me] = r
        order.append((w, parent))
        stack.extend((c, me) for c in reversed(children.get(me, [])))
    os.makedirs(out_dir, exist_ok=True)
    copy = os.path.join(out_dir, os.path.basename(path))
    with open(copy, "w") as f:
        f.write("# %s: parents first, radii 0 repaired (real_network.py)\n" % path)
        for w, parent in order:
            me = int(w[0])
            f.write("%d %s %s %s %s %.17g %d\n" % (new[me], w[1], w[2], w[3], w[4], radius[me],
                                                  new[parent] if parent is not None else -1))
    return copy


def network(n, t_stop, folder, amp=0.3, weight=0.01, backend=None, files=None, out_dir="."):
    paths = [neuron_ready(p, out_dir) for p in swc_files(folder)[:files]]
    if not paths:
        raise SystemExit("%s: no .swc file" % folder)
    at = {"section": 0, "x": 0.5}
    cells = []
    for k, path in enumerate(paths):
        count = len(range(k, n, len(paths)))
        if count == 0:
            continue
        soma = has_soma(path)
        cells.append({
            "name": os.path.basename(path)[:-4], "count": count, "morphology": path,
            "section_rule": "import3d",
            "discretization": {"policy": "d-lambda", "d_lambda": 0.1, "frequency": 100},
            "mechanisms": [{"name": "pas", "region": "all", "g": 1e-4, "e": -65},
                           {"name": "hh", "region": "soma" if soma else "all"}],
            "synapses": [{"type": "expsyn", "at": at, "tau": 2, "e": 0}],
            "stimuli": [{"type": "iclamp", "at": at, "del": 1, "dur": t_stop, "amp": amp}],
            "probes": [{"name": "spike", "at": at, "spike_threshold": -10}],
        })
    model = {"t_stop": t_stop, "dt": 0.025, "v_init": -65, "celsius": 6.3, "hh_table": False,
             "cells": cells,
             "network": {"ring": [{"first": 0, "count": n, "weight": weight, "delay": 2}]}}
    if backend:
        model["backend"] = backend
    return model


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("n", type=int)
    ap.add_argument("t_stop", type=float)
    ap.add_argument("out")
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("--folder", default=os.path.join(here, "..", "..", "..", "shared", "data",
                                                     "morphologies"))
    ap.add_argument("--backend")
    ap.add_argument("--amp", type=float, default=0.3)
    ap.add_argument("--weight", type=float, default=0.01)
    ap.add_argument("--files", type=int, help="only the first K files")
    a = ap.parse_args()
    if a.n < 2:
        raise SystemExit("N: expected at least 2 cells (a ring)")
    with open(a.out, "w") as f:
        json.dump(network(a.n, a.t_stop, a.folder, a.amp, a.weight, a.backend, a.files,
                          os.path.splitext(os.path.abspath(a.out))[0] + "_swc"), f,
                  indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
