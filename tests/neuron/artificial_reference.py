#!/usr/bin/python3
"""NEURON reference of a network with artificial cells (ARTIFICIAL_CELL; tests/
cli_net_artificial.sh; docs/network.md, "Artificial cells").

Regenerate (Debian's python3-neuron, NEURON 8.2; the system Python), from the repository root:

    /usr/bin/python3 tests/neuron/artificial_reference.py

Writes tests/reference/net_artificial.json (a hinesbatch network file naming the user catalogue
"artificial.so", which the test builds from tests/nmodl/artificial/), then builds the same network
in NEURON with the same tests/nmodl/artificial/*.mod (nrnivmodl through nrnmech.py), the
artificial cells as NEURON makes them (no section), each gid's spikes recorded from a NetCon
of its source, and writes NEURON's spikes (tests/reference/net_artificial.spikes: 'gid time',
ordered by time, then gid).

  gids 0-3: hh ball-and-stick cells (ExpSyn on the soma, tau 2 ms), spikes at soma v > -10 mV.
  gids 4-5: Pulses (a NetStim-like ARTIFICIAL_CELL: start, interval, number), driving cells
    0, 1 (gid 4) and 2 (gid 5), and gid 4 LeakyFire 7.
  gids 6-7: LeakyFire (an IntFire1-like ARTIFICIAL_CELL: tau, refrac), driven by the four
    cells, gid 6 driving cell 3 and gid 7 driving cells 3 and 0.
  gid 8: a NetStim source (the file's "sources") driving LeakyFire 6.
  100 ms, dt 0.025 ms, celsius 6.3, fixed step, secondorder 0.
"""
import os

import nrnref
from nrnref import REF

DT = 0.025
N = 4  # real cells; artificial cells follow: gids 4, 5 Pulses, 6, 7 LeakyFire; 8 a NetStim


def model():
    conns = [{"source": 4, "target": 0, "weight": 0.04, "delay": 1},
             {"source": 4, "target": 1, "weight": 0.04, "delay": 1.5},
             {"source": 5, "target": 2, "weight": 0.04, "delay": 2},
             {"source": 4, "target": 7, "weight": 0.45, "delay": 0.5},
             {"source": 6, "target": 3, "weight": 0.04, "delay": 1},
             {"source": 7, "target": 3, "weight": 0.04, "delay": 3},
             {"source": 7, "target": 0, "weight": 0.04, "delay": 2.5},
             {"source": 8, "target": 6, "weight": 0.3, "delay": 1}]
    conns += [{"source": c, "target": 6, "weight": 0.55, "delay": 1 + 0.5 * c} for c in range(N)]
    conns += [{"source": c, "target": 7, "weight": 0.35, "delay": 2 + 0.25 * c} for c in range(N)]
    for c in conns:
        c["synapse"] = 0
    cells = nrnref.ball_and_stick_entry(N, [{"name": "ExpSyn", "at": "soma", "tau": 2, "e": 0}])
    return {
        "catalogues": ["artificial.so"],
        "t_stop": 100, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [cells],
        "network": {
            "artificial": [
                {"name": "drive", "mechanism": "Pulses", "start": 5, "interval": 7, "number": 12},
                {"name": "slow", "mechanism": "Pulses", "start": 12, "interval": 11,
                 "number": 6},
                {"name": "integrators", "mechanism": "LeakyFire", "count": 2, "tau": 10,
                 "refrac": 5}],
            "sources": [{"name": "kick", "count": 1, "start": 3, "interval": 4, "number": 20,
                         "noise": 0, "seed": 0}],
            "connections": conns},
    }


def run_neuron(m):
    h = nrnref.load_mods("tests/nmodl/artificial", ["LeakyFire", "Pulses"], "nrn_artificial_")
    nrnref.fixed_step(h, m)
    cells, keep = nrnref.ball_and_stick(h, m)
    targets = [syns[0] for _, syns in cells]
    sources = [lambda target, soma=soma: h.NetCon(soma(0.5)._ref_v, target, -10, 0, 0, sec=soma)
               for soma, _ in cells]
    for a in m["network"]["artificial"]:
        for _ in range(a.get("count", 1)):
            art = getattr(h, a["mechanism"])()
            for key, value in a.items():
                if key not in ("name", "mechanism", "count"):
                    setattr(art, key, value)
            keep.append(art)
            targets.append(art)
            sources.append(lambda target, art=art: h.NetCon(art, target))
    tvec, idvec = nrnref.connect_gids(h, m, sources, lambda c: targets[c["target"]], keep)
    return nrnref.run_steps(h, m, tvec, idvec)


def main():
    m = model()
    nrnref.write_model(os.path.join(REF, "net_artificial.json"), m)
    spikes = run_neuron(m)
    nrnref.write_spikes(os.path.join(REF, "net_artificial.spikes"), spikes)
    per = {}
    for _, g in spikes:
        per[g] = per.get(g, 0) + 1
    print("net_artificial: %d spikes; per gid: %s" % (len(spikes), sorted(per.items())))


if __name__ == "__main__":
    main()
