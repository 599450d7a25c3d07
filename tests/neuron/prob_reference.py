#!/usr/bin/python3
"""NEURON reference of a network with BBP's ProbAMPANMDA_EMS synapses (tests/cli_net_prob.sh).

Regenerate (Debian's python3-neuron, NEURON 8.2; the system Python), from the repository root:

    /usr/bin/python3 tests/neuron/prob_reference.py

Writes tests/reference/net_prob.json (a hinesbatch network file with explicit connections,
drawn here with a fixed seed), then builds that network in NEURON with BBP's original
ProbAMPANMDA_EMS.mod (mechanisms/bbp/original/, compiled by nrnivmodl through nrnmech.py) and
writes NEURON's spikes (tests/reference/net_prob.spikes: 'gid time', ordered by time, then
gid) and the soma voltage of gids 0 to 3 every 0.5 ms (tests/reference/net_prob.v: 't v0 v1
v2 v3' lines, %.17g).

NEURON 8.2 has no RANDOM: the original draws from Random123 (setRNG(0, gid, synapse)), the port
hinesbatch compiles from Philox. The configuration makes the release and recovery decisions
independent of the numbers drawn, so that the two runs can be compared step by step: Use = 1
and Fac = 0 (u = Use = 1, so a draw in (0, 1) always releases), Nrrp = 1, Dep = 1e-9 ms (a
site recovers at the next event whenever the draw is above exp(-(t - tsyn)/Dep), which is 0
for events a step or more apart and 1 for events at the same time: both decide the same way).
What remains is the synapse's dynamics: the AMPA and NMDA dual exponentials, the magnesium
block mggate(v), NEURON's numerical di/dv, weight_AMPA and weight_NMDA in the connection's
weight vector, and the events' timing.

  8 hh ball-and-stick cells in a ring (gid i -> i + 1 on synapse 0, a ProbAMPANMDA_EMS at
  dend(0.5), weight 2.5 nS, delay 3 ms), a second ProbAMPANMDA_EMS on the soma (synapse 1,
  NMDA_ratio 1.2, tau_d_AMPA 3 ms) with 4 random inputs a cell (weights 0.2 to 0.6 nS, delays
  whole steps from 1 to 6 ms), a NetStim kicking gid 0 at 1 ms and gid 4 at 41 ms; 120 ms,
  dt 0.025 ms, celsius 6.3, fixed step, secondorder 0.
"""
import os
import random

import nrnref
from nrnref import REF

DT = 0.025
N = 8
DETERMINISTIC = {"Use": 1, "Fac": 0, "Dep": 1e-9, "Nrrp": 1}


def model(seed=11):
    rng = random.Random(seed)
    conns = [{"source": N, "target": 0, "synapse": 0, "weight": 2.5, "delay": 1},
             {"source": N + 1, "target": 4, "synapse": 0, "weight": 2.5, "delay": 1}]
    for i in range(N):
        conns.append({"source": (i - 1) % N, "target": i, "synapse": 0, "weight": 2.5,
                      "delay": 3})
    for tgt in range(N):
        for src in sorted(rng.sample([g for g in range(N) if g != tgt], 4)):
            conns.append({"source": src, "target": tgt, "synapse": 1,
                          "weight": round(rng.uniform(0.2, 0.6), 4),
                          "delay": round(DT * rng.randint(40, 240), 3)})
    syn0 = dict({"name": "ProbAMPANMDA_EMS", "at": {"section": "dend", "x": 0.5}}, **DETERMINISTIC)
    syn1 = dict({"name": "ProbAMPANMDA_EMS", "at": "soma", "NMDA_ratio": 1.2, "tau_d_AMPA": 3},
                **DETERMINISTIC)
    return {
        "t_stop": 120, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [nrnref.ball_and_stick_entry(N, [syn0, syn1])],
        "network": {
            "sources": [{"name": "kick", "count": 1, "start": 1, "interval": 10, "number": 1,
                         "noise": 0, "seed": 0},
                        {"name": "kick2", "count": 1, "start": 41, "interval": 10,
                         "number": 1, "noise": 0, "seed": 0}],
            "connections": conns},
        "record": {"gids": [0, 1, 2, 3], "locations": ["soma"], "variables": ["v"],
                   "sample_dt": 0.5},
    }


def prob_synapse(h, gid, k, sy, soma, dend):
    """ProbAMPANMDA_EMS where the entry puts it, its keys set, its Random123 stream (gid, k)."""
    p = h.ProbAMPANMDA_EMS(soma(0.5) if sy["at"] == "soma" else dend(sy["at"]["x"]))
    for key, value in sy.items():
        if key not in ("name", "at"):
            setattr(p, key, value)
    p.setRNG(0, gid, k)  # Random123 (the decisions do not depend on its numbers)
    return p


def run_neuron(m):
    h = nrnref.load_mods("mechanisms/bbp/original", ["ProbAMPANMDA_EMS"], "nrn_prob_")
    nrnref.fixed_step(h, m)
    cells, keep = nrnref.ball_and_stick(h, m, prob_synapse)
    tvec, idvec = nrnref.connect_network(h, m, cells, keep)
    vs = [h.Vector().record(cells[g][0](0.5)._ref_v, m["record"]["sample_dt"])
          for g in m["record"]["gids"]]
    ts = h.Vector().record(h._ref_t, m["record"]["sample_dt"])
    spikes = nrnref.run_steps(h, m, tvec, idvec)
    return spikes, ts.to_python(), [v.to_python() for v in vs]


def main():
    m = model()
    nrnref.write_model(os.path.join(REF, "net_prob.json"), m)
    spikes, ts, vs = run_neuron(m)
    nrnref.write_run(os.path.join(REF, "net_prob"), spikes, ts, vs)
    cells = sum(1 for _, g in spikes if g < N)
    print("net_prob: %d spikes (%d of cells), %d samples" % (len(spikes), cells, len(ts)))


if __name__ == "__main__":
    main()
