#!/usr/bin/python3
"""The seed paper's benchmark network as a hinesbatch network file.

Valero-Lara et al., "MPI+OpenMP tasking scalability for multi-morphology simulations of the
human brain" (../shared/papers/mpi-openmp-tasking-arbor.txt, Section IV): neurons of 450
compartments with 500 synapses each, exchanging spikes every 10 steps. Built here as:

  cell:  soma (12.6157 x 12.6157 um, hh, 1 compartment) and a binary dendritic tree of three
         levels (7 sections of 200 um, diam 1 um, pas g 0.001 S/cm2 e -65 mV, nseg 64):
         449 compartments; Ra 100 ohm cm, cm 1 uF/cm2; 6.3 C; v_init -65 mV.
  synapses: 500 ExpSyn (tau 2 ms, e 0 mV); synapse k on section 1 + k % 7 at
         x = ((k // 7) % 64 + 0.5) / 64; detector soma(0.5) at -10 mV.
  connections: synapse k of every cell from a distinct random other cell (Python's
         random.Random(seed)), weight w_rec (uS), delay 10 dt (the epoch: 10 local steps).
  drive: `drives` regular NetStims (every `period` ms, staggered starts), each cell driven by
         one of them on synapse 0 with weight w_drive; the recurrent input adds jitter.

The same file runs in NEURON (tests/neuron/net_reference.py's run_neuron) and in hinesbatch,
so the two build the identical network.

With --builder the connections are not listed but drawn by hinesbatch's random builder
(docs/network.md: "synapse": "each", Philox streams keyed by gid), so that a file of 100,000
cells stays small; each rank then builds only the connections that end on its cells. Such a
file is for hinesbatch alone (NEURON and Arbor read listed connections).

usage: paper_network.py CELLS T_STOP OUT.json [--seed S] [--in-degree K] [--builder]
       [--backend seq|omp] [--exchange blocking|iallgatherv|tasks] (default: the library's, blocking)
"""
import argparse
import json
import random

DT = 0.025


def cell_spec(count, in_degree):
    sections = [{"name": "soma", "parent": None, "length": 12.6157, "diam": 12.6157,
                 "type": "soma"}]
    for b in range(7):  # binary tree: 1 -> 2, 3 -> 4..7
        parent = "soma" if b == 0 else "d%d" % ((b - 1) // 2)
        sections.append({"name": "d%d" % b, "parent": parent, "parent_x": 1, "length": 200,
                         "diam": 1, "type": "dend"})
    synapses = [{"type": "expsyn",
                 "at": {"section": "d%d" % (k % 7), "x": ((k // 7) % 64 + 0.5) / 64},
                 "tau": 2, "e": 0} for k in range(in_degree)]
    return {
        "name": "paper_cell", "count": count, "sections": sections, "Ra": 100, "cm": 1,
        "regions": [{"region": "soma", "nseg": 1}, {"region": "dend", "nseg": 64}],
        "mechanisms": [{"name": "hh", "region": "soma"},
                       {"name": "pas", "region": "dend", "g": 0.001, "e": -65}],
        "synapses": synapses,
        "probes": [{"name": "soma", "at": "soma", "spike_threshold": -10}],
    }


def model(cells, t_stop, seed=1, in_degree=500, drives=20, period=20.0, w_rec=0.0002,
          w_drive=0.08):
    rng = random.Random(seed)
    conns = []
    for tgt in range(cells):
        others = rng.sample(range(cells - 1), min(in_degree, cells - 1))
        for k, src in enumerate(sorted(others)):
            src += src >= tgt  # never itself
            conns.append({"source": src, "target": tgt, "synapse": k, "weight": w_rec,
                          "delay": round(10 * DT, 6)})
        conns.append({"source": cells + tgt % drives, "target": tgt, "synapse": 0,
                      "weight": w_drive, "delay": round(10 * DT, 6)})
    sources = [{"name": "drive%d" % s, "count": 1, "start": round(1 + period * s / drives, 6),
                "interval": period, "number": 1000000, "noise": 0, "seed": 0}
               for s in range(drives)]
    return {"t_stop": t_stop, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
            "backend": "seq", "cells": [cell_spec(cells, in_degree)],
            "network": {"sources": sources, "connections": conns}}


def builder_model(cells, t_stop, seed=1, in_degree=500, drives=20, period=20.0, w_rec=0.0002,
                  w_drive=0.08):
    sources = [{"name": "drive%d" % s, "count": 1, "start": round(1 + period * s / drives, 6),
                "interval": period, "number": 1000000, "noise": 0, "seed": 0}
               for s in range(drives)]
    delay = round(10 * DT, 6)
    return {"t_stop": t_stop, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
            "backend": "seq", "cells": [cell_spec(cells, in_degree)],
            "network": {"sources": sources, "random": [
                {"targets": [0, cells], "sources": [0, cells],
                 "in_degree": min(in_degree, cells - 1), "synapse": "each", "weight": w_rec,
                 "delay": delay, "seed": seed},
                {"targets": [0, cells], "sources": [cells, drives], "in_degree": 1,
                 "synapse": 0, "weight": w_drive, "delay": delay, "seed": seed + 1}]}}


def write(m, path):
    if "connections" not in m["network"]:
        with open(path, "w") as f:
            json.dump(m, f)
        return
    net = m["network"]
    head = {k: v for k, v in m.items() if k != "network"}
    with open(path, "w") as f:
        f.write(json.dumps(head, separators=(",", ":"))[:-1])
        f.write(',\n"network":{"exchange":%s,"sources":' % json.dumps(net["exchange"]) +
                json.dumps(net["sources"], separators=(",", ":")))
        f.write(',\n"connections":[\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in net["connections"]))
        f.write("\n]}}\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("cells", type=int)
    ap.add_argument("t_stop", type=float)
    ap.add_argument("out")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--in-degree", type=int, default=500)
    ap.add_argument("--builder", action="store_true")
    ap.add_argument("--backend", default="seq")
    ap.add_argument("--exchange", default="blocking")
    a = ap.parse_args()
    m = (builder_model if a.builder else model)(a.cells, a.t_stop, a.seed, a.in_degree)
    m["backend"] = a.backend
    m["network"]["exchange"] = a.exchange
    write(m, a.out)


if __name__ == "__main__":
    main()
