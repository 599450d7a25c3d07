#!/usr/bin/python3
"""NEURON reference of a network whose spike sources are point processes calling net_event
(tests/cli_net_netev.sh; docs/network.md, "Point processes as spike sources").

Regenerate (Debian's python3-neuron, NEURON 8.2; the system Python), from the repository root:

    /usr/bin/python3 tests/neuron/netev_reference.py

Writes tests/reference/net_netev.json (a hinesbatch network file naming the user catalogue
"netev.so", which the test builds from tests/nmodl/netev/ beside a copy of the file), then
builds the same network in NEURON with the same tests/nmodl/netev/*.mod (nrnivmodl through
nrnmech.py), each cell's spike source a NetCon from its point process (NEURON's
pc.cell(gid, NetCon(pp, None)) without the ParallelContext), and writes NEURON's spikes
(tests/reference/net_netev.spikes: 'gid time', ordered by time, then gid).

  gids 0-3: hh ball-and-stick cells in a ring (gid i -> gid i + 1 on ExpSyn, synapse 0, tau 2 ms,
    0.04 uS, delay 3 ms), each cell's spikes those of its SpikeOut (synapse 1: WATCH (v > -10)
    and net_event(t)), which the cell names as its "spike_source"; no probe detects spikes.
  gid 4: a ball-and-stick cell hosting a Relay (synapse 0, ncount 3), its spike source: every
    third event of the drive is a spike at the event's time; it drives ring cell 0 (delay 2 ms)
    and cell 2 (delay 4.5 ms).
  gid 5: a regular NetStim (every 2 ms from 5 ms, 24 spikes) -> the Relay (weight 1, delay 1 ms).
  100 ms, dt 0.025 ms, celsius 6.3, fixed step, secondorder 0.
"""
import os

import nrnref
from nrnref import REF

DT = 0.025
N = 4


def entry(count, synapses, source):
    e = nrnref.ball_and_stick_entry(count, synapses)
    e["probes"] = [{"name": "soma", "at": "soma"}]  # no detector: the point process is the source
    e["spike_source"] = {"synapse": source}
    return e


def model():
    relay, drive = N, N + 1
    conns = [{"source": i, "target": (i + 1) % N, "synapse": 0, "weight": 0.04, "delay": 3}
             for i in range(N)]
    conns += [{"source": relay, "target": 0, "synapse": 0, "weight": 0.04, "delay": 2},
              {"source": relay, "target": 2, "synapse": 0, "weight": 0.04, "delay": 4.5},
              {"source": drive, "target": relay, "synapse": 0, "weight": 1, "delay": 1}]
    ring = entry(N, [{"name": "ExpSyn", "at": "soma", "tau": 2, "e": 0},
                     {"name": "SpikeOut", "at": "soma", "thresh": -10}], 1)
    host = entry(1, [{"name": "Relay", "at": "soma", "ncount": 3}], 0)
    return {
        "catalogues": ["netev.so"],
        "t_stop": 100, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [ring, host],
        "network": {
            "sources": [{"name": "drive", "count": 1, "start": 5, "interval": 2, "number": 24,
                         "noise": 0, "seed": 0}],
            "connections": conns},
    }


def run_neuron(m):
    h = nrnref.load_mods("tests/nmodl/netev", ["Relay", "SpikeOut"], "nrn_netev_")
    nrnref.fixed_step(h, m)
    cells, keep, points = [], [], []
    for spec in m["cells"]:
        made, kept = nrnref.ball_and_stick(h, dict(m, cells=[spec]))
        cells += made
        keep += kept
        points += [syns[spec["spike_source"]["synapse"]] for _, syns in made]
    sources = [lambda target, pp=pp: h.NetCon(pp, target) for pp in points]
    tvec, idvec = nrnref.connect_gids(h, m, sources, lambda c: cells[c["target"]][1][c["synapse"]],
                                      keep)
    spikes = nrnref.run_steps(h, m, tvec, idvec)
    counts = [(int(syns[1].nspike) if len(syns) > 1 else int(syns[0].nrelay)) for _, syns in cells]
    return spikes, counts


def main():
    m = model()
    nrnref.write_model(os.path.join(REF, "net_netev.json"), m)
    spikes, counts = run_neuron(m)
    nrnref.write_spikes(os.path.join(REF, "net_netev.spikes"), spikes)
    print("net_netev: %d spikes (%d of the ring, %d of the relay); per cell (SpikeOut's "
          "net_events, the Relay's): %s" % (len(spikes), sum(1 for _, g in spikes if g < N),
                                             sum(1 for _, g in spikes if g == N), counts))


if __name__ == "__main__":
    main()
