#!/usr/bin/python3
"""NEURON reference of a network with an STDP synapse from a .mod file (tests/cli_net_stdp.sh).

Regenerate (Debian's python3-neuron, NEURON 8.2; the system Python), from the repository root:

    /usr/bin/python3 tests/neuron/stdp_reference.py

Writes tests/reference/net_stdp.json (a hinesbatch network file naming the user catalogue
"stdp.so", which the test builds from tests/nmodl/stdp/ beside a copy of the file), then builds
the same network in NEURON with the same tests/nmodl/stdp/STDPSyn.mod (compiled by nrnivmodl
through nrnmech.py) and writes NEURON's spikes (tests/reference/net_stdp.spikes: 'gid time',
ordered by time, then gid) and, every 0.5 ms, each cell's soma voltage and its STDPSyn's
plastic weight wsyn (tests/reference/net_stdp.v: 't v0 w0 v1 w1 ...', %.17g).

  6 hh ball-and-stick cells. Synapse 0, an ExpSyn on the soma (tau 2 ms), is driven by a
  regular source (every 20 ms from 5 ms, 5 events, 0.03 uS) with a delay of 1 + 0.75 i ms for
  cell i, so each cell fires at its own time. Synapse 1, the STDPSyn on the soma (tau 2 ms,
  wmax 0.012 uS, winit 0.006 uS, dpre 0.25, dpost -0.3, taupre 15 ms, taupost 25 ms), gets:
  a second regular source (every 20 ms from 5 ms, 5 events, weight 1) whose delays put its
  events from 7.5 ms before to 5 ms after the cell's driven spike, cell by cell (the weight
  potentiates in some cells, depresses in others); the ring (cell i - 1 -> cell i, weight
  0.6, delay 2.5 ms); and the cell's own spikes (cell i -> cell i, weight -1, delay 0.5 ms:
  the postsynaptic spike as an event of its own, NetCon(soma(0.5)._ref_v, syn) in NEURON).
  110 ms, dt 0.025 ms, celsius 6.3, fixed step, secondorder 0.
"""
import os

import nrnref
from nrnref import REF

DT = 0.025
N = 6
STDP = {"tau": 2, "wmax": 0.012, "winit": 0.006, "dpre": 0.25, "dpost": -0.25, "taupre": 15,
        "taupost": 20}


def model():
    drive, pre = N, N + 1
    conns = []
    for i in range(N):
        conns.append({"source": drive, "target": i, "synapse": 0, "weight": 0.03,
                      "delay": 1 + 0.75 * i})
        # the driven spike comes about 12.2 + 0.75 i ms into each 20 ms cycle: pre events from
        # 7.5 ms before it (potentiation) to 5 ms after (depression)
        conns.append({"source": pre, "target": i, "synapse": 1, "weight": 1,
                      "delay": 12.2 + 0.75 * i + [-7.5, -4, -1.5, 1, 3, 5][i]})
        conns.append({"source": (i - 1) % N, "target": i, "synapse": 1, "weight": 0.6,
                      "delay": 16})
        conns.append({"source": i, "target": i, "synapse": 1, "weight": -1, "delay": 0.5})
    syn0 = {"name": "ExpSyn", "at": "soma", "tau": 2, "e": 0}
    syn1 = dict({"name": "STDPSyn", "at": "soma"}, **STDP)
    return {
        "catalogues": ["stdp.so"],
        "t_stop": 110, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [nrnref.ball_and_stick_entry(N, [syn0, syn1])],
        "network": {
            "sources": [{"name": "drive", "count": 1, "start": 10, "interval": 20, "number": 5,
                         "noise": 0, "seed": 0},
                        {"name": "pre", "count": 1, "start": 0, "interval": 20, "number": 5,
                         "noise": 0, "seed": 0}],
            "connections": conns},
        "record": {"gids": list(range(N)), "locations": ["soma"],
                   "variables": ["v", "syn[1].wsyn"], "sample_dt": 0.5},
    }


def run_neuron(m):
    h = nrnref.load_mods("tests/nmodl/stdp", ["STDPSyn"], "nrn_stdp_")
    nrnref.fixed_step(h, m)
    cells, keep = nrnref.ball_and_stick(h, m)
    tvec, idvec = nrnref.connect_network(h, m, cells, keep)
    rec = []
    for g in m["record"]["gids"]:
        rec.append(h.Vector().record(cells[g][0](0.5)._ref_v, m["record"]["sample_dt"]))
        rec.append(h.Vector().record(cells[g][1][1]._ref_wsyn, m["record"]["sample_dt"]))
    ts = h.Vector().record(h._ref_t, m["record"]["sample_dt"])
    spikes = nrnref.run_steps(h, m, tvec, idvec)
    return spikes, ts.to_python(), [v.to_python() for v in rec]


def main():
    m = model()
    nrnref.write_model(os.path.join(REF, "net_stdp.json"), m)
    spikes, ts, rec = run_neuron(m)
    nrnref.write_run(os.path.join(REF, "net_stdp"), spikes, ts, rec)
    cells = sum(1 for _, g in spikes if g < N)
    w = [rec[2 * g + 1][-1] for g in range(N)]
    print("net_stdp: %d spikes (%d of cells), %d samples; final wsyn %s uS (winit %g)"
          % (len(spikes), cells, len(ts), " ".join("%.5g" % x for x in w), STDP["winit"]))


if __name__ == "__main__":
    main()
