#!/usr/bin/python3
"""NEURON reference of a network with a heterosynaptic synapse whose NET_RECEIVE loops over its
incoming connections with FOR_NETCONS (tests/nmodl/hetero/HeteroSyn.mod; tests/cli_net_hetero.sh).

Regenerate (Debian's python3-neuron, NEURON 8.2; the system Python), from the repository root:

    /usr/bin/python3 tests/neuron/hetero_reference.py

Writes tests/reference/net_hetero.json (a hinesbatch network file naming the user catalogue
"hetero.so", which the test builds from tests/nmodl/hetero/ beside a copy of the file), then
builds the same network in NEURON with the same HeteroSyn.mod (compiled by nrnivmodl through
nrnmech.py) and writes NEURON's spikes (tests/reference/net_hetero.spikes: 'gid time', ordered
by time, then gid) and, every 0.5 ms, each cell's soma voltage and its HeteroSyn's wsum, wfirst
and nfirst (tests/reference/net_hetero.v: 't v0 s0 f0 n0 v1 ...', %.17g).

  6 hh ball-and-stick cells, one HeteroSyn on each soma (tau 2 ms, dw 0.5, wtot 0.05 uS) with
  three incoming connections: the ring (cell i - 1 -> cell i, weight 0.02 uS, delay 4 ms), a
  regular source "drive" (every 10 ms from 5 ms, 9 events, 0.03 uS, delay 1.1 + 0.5 i ms) and a
  second regular source "pre" (every 7 ms from 2 ms, 13 events, 0.01 uS, delay 0.35 + 0.4 i
  ms): no two events of a synapse at one time, where the network orders by weight and NEURON
  by its queue, and no source's event at a sample time, where Vector.record(..., Dt)'s record
  events and the synapse's share NEURON's queue.
  FOR_NETCONS visits a synapse's connections in the network's connection order (source gid,
  then weight, then delay: docs/mechanisms.md section 10), NEURON in the order the NetCons were
  made: the file lists each cell's connections in the network's order, so NEURON makes them so.
  100 ms, dt 0.025 ms, celsius 6.3, fixed step, secondorder 0.
"""
import os

import nrnref
from nrnref import REF

DT = 0.025
N = 6
HETERO = {"tau": 2, "e": 0, "dw": 0.5, "wtot": 0.05}
VARS = ["wsum", "wfirst", "nfirst"]


def model():
    drive, pre = N, N + 1
    conns = []
    for i in range(N):  # each cell's in the network's order: by source gid, weight, delay
        conns.append({"source": (i - 1) % N, "target": i, "synapse": 0, "weight": 0.02,
                      "delay": 4})
        conns.append({"source": drive, "target": i, "synapse": 0, "weight": 0.03,
                      "delay": 1.1 + 0.5 * i})
        conns.append({"source": pre, "target": i, "synapse": 0, "weight": 0.01,
                      "delay": 0.35 + 0.4 * i})
    syn0 = dict({"name": "HeteroSyn", "at": "soma"}, **HETERO)
    return {
        "catalogues": ["hetero.so"],
        "t_stop": 100, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [nrnref.ball_and_stick_entry(N, [syn0])],
        "network": {
            "sources": [{"name": "drive", "count": 1, "start": 5, "interval": 10, "number": 9,
                         "noise": 0, "seed": 0},
                        {"name": "pre", "count": 1, "start": 2, "interval": 7, "number": 13,
                         "noise": 0, "seed": 0}],
            "connections": conns},
        "record": {"gids": list(range(N)), "locations": ["soma"],
                   "variables": ["v"] + ["syn[0].%s" % x for x in VARS], "sample_dt": 0.5},
    }


def run_neuron(m):
    h = nrnref.load_mods("tests/nmodl/hetero", ["HeteroSyn"], "nrn_hetero_")
    nrnref.fixed_step(h, m)
    cells, keep = nrnref.ball_and_stick(h, m)
    tvec, idvec = nrnref.connect_network(h, m, cells, keep)
    rec = []
    for g in m["record"]["gids"]:
        rec.append(h.Vector().record(cells[g][0](0.5)._ref_v, m["record"]["sample_dt"]))
        for x in VARS:
            rec.append(h.Vector().record(getattr(cells[g][1][0], "_ref_" + x),
                                         m["record"]["sample_dt"]))
    ts = h.Vector().record(h._ref_t, m["record"]["sample_dt"])
    spikes = nrnref.run_steps(h, m, tvec, idvec)
    return spikes, ts.to_python(), [v.to_python() for v in rec]


def main():
    m = model()
    nrnref.write_model(os.path.join(REF, "net_hetero.json"), m)
    spikes, ts, rec = run_neuron(m)
    nrnref.write_run(os.path.join(REF, "net_hetero"), spikes, ts, rec)
    cells = sum(1 for _, g in spikes if g < N)
    k = 1 + len(VARS)
    print("net_hetero: %d spikes (%d of cells), %d samples; final wsum %s uS, wfirst %s uS, "
          "nfirst %s" % (len(spikes), cells, len(ts),
                         " ".join("%.5g" % rec[k * g + 1][-1] for g in range(N)),
                         " ".join("%.5g" % rec[k * g + 2][-1] for g in range(N)),
                         " ".join("%g" % rec[k * g + 3][-1] for g in range(N))))


if __name__ == "__main__":
    main()
