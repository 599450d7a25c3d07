#!/usr/bin/python3
"""NEURON reference of a network whose synapses send themselves events (tests/cli_net_selfev.sh).

Regenerate (Debian's python3-neuron, NEURON 8.2; the system Python), from the repository root:

    /usr/bin/python3 tests/neuron/selfev_reference.py

Writes tests/reference/net_selfev.json (a hinesbatch network file naming the user catalogue
"selfev.so", which the test builds from tests/nmodl/selfev/ beside a copy of the file), then
builds the same network in NEURON with the same tests/nmodl/selfev/*.mod (nrnivmodl through
nrnmech.py) and writes NEURON's spikes (tests/reference/net_selfev.spikes: 'gid time', ordered
by time, then gid) and, every 0.25 ms, each cell's soma voltage, both synapses' conductances
and AhpWatch's g (tests/reference/net_selfev.v: 't v0 g0 h0 a0 v1 g1 h1 a1 ...', %.17g). The values are recorded every
step and kept every 10th: Vector.record with an interval records through events of its own,
which at a time some synapse's event shares come before or after it by the queue's order; every
step's record is taken after the step, before its events, as hinesbatch's.

  6 hh ball-and-stick cells, each with three synapses on the soma:
  - PulseSyn (synapse 0): each event opens it by its weight for dur 1 ms (net_send(dur, 1)
    closes it by the same connection's weight), and its INITIAL's net_send(start, 2) starts a
    train of kicks it sends itself (gkick 0.01 uS for 1 ms every 23 ms from 3 ms). Driven by a
    regular source (every 20 ms from 10 ms, 5 events, 0.03 uS, delay 1 + 0.75 i ms for cell i)
    and the ring (cell i - 1 -> cell i, 0.012 uS, delay 4 ms).
  - RetrigSyn (synapse 1): an event opens gmax 0.006 uS for dur 2 ms, an event while open
    moves the closing (net_move) to dur after itself. Driven by a burst source (every 0.6 ms
    from 60 ms, 8 events, delay 0.5 + 0.5 i ms), which keeps it open about 6 ms.
  - AhpWatch (synapse 2, no connections): INITIAL's net_send(0, 1) activates WATCH (v > -20)
    2; each of the cell's spikes comes back as a flag-2 event that opens gahp 0.002 uS
    (decaying, tau 10 ms, e -90 mV): an afterhyperpolarisation the synapse times itself.
  120 ms, dt 0.025 ms, celsius 6.3, fixed step, secondorder 0.

    /usr/bin/python3 tests/neuron/selfev_reference.py coincide

writes tests/reference/net_coincide.{json,spikes,v} instead: the same synapses on 2 cells for
12 ms, recorded every step, with every event at a sample's time: PulseSyn's kicks at 0, 2,
4, ... ms (INITIAL's net_send(0, 2) the first), their closings at 1, 3, ... ms, the drive's
events at 11 and 11.75 ms, RetrigSyn's burst every 0.5 ms from 5.5 ms. NEURON records a step's
values before the events of its time (fixed_record_continuous, then nrn_deliver_events), and
at t = 0 after those of t = 0 (finitialize delivers INITIAL's events before its record).
"""
import os
import sys

import nrnref
from nrnref import REF

DT = 0.025
N = 6
EVERY = 0.25


def model():
    drive, burst = N, N + 1
    conns = []
    for i in range(N):
        conns.append({"source": drive, "target": i, "synapse": 0, "weight": 0.03,
                      "delay": 1 + 0.75 * i})
        conns.append({"source": (i - 1) % N, "target": i, "synapse": 0, "weight": 0.012,
                      "delay": 4})
        conns.append({"source": burst, "target": i, "synapse": 1, "weight": 1,
                      "delay": 0.5 + 0.5 * i})
    syn0 = {"name": "PulseSyn", "at": "soma", "dur": 1, "e": 0, "gkick": 0.01, "start": 3,
            "interval": 23}
    syn1 = {"name": "RetrigSyn", "at": "soma", "dur": 2, "e": 0, "gmax": 0.006}
    syn2 = {"name": "AhpWatch", "at": "soma", "thresh": -20, "gahp": 0.002, "tau": 10,
            "e": -90}
    return {
        "catalogues": ["selfev.so"],
        "t_stop": 120, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [nrnref.ball_and_stick_entry(N, [syn0, syn1, syn2])],
        "network": {
            "sources": [{"name": "drive", "count": 1, "start": 10, "interval": 20, "number": 5,
                         "noise": 0, "seed": 0},
                        {"name": "burst", "count": 1, "start": 60, "interval": 0.6,
                         "number": 8, "noise": 0, "seed": 0}],
            "connections": conns},
        "record": {"gids": list(range(N)), "locations": ["soma"],
                   "variables": ["v", "syn[0].g", "syn[1].g", "syn[2].g"], "sample_dt": EVERY},
    }


def model_coincide():
    """model() on 2 cells for 12 ms with each event at a sample's time, sampled every step."""
    global N, EVERY
    N, EVERY = 2, DT
    m = model()
    m["t_stop"] = 12
    m["cells"][0]["synapses"][0].update({"start": 0, "interval": 2})
    m["network"]["sources"][1].update({"start": 5, "interval": 0.5})
    m["record"]["sample_dt"] = EVERY
    return m


def run_neuron(m):
    h = nrnref.load_mods("tests/nmodl/selfev", ["AhpWatch", "PulseSyn", "RetrigSyn"], "nrn_selfev_")
    nrnref.fixed_step(h, m)
    cells, keep = nrnref.ball_and_stick(h, m)
    tvec, idvec = nrnref.connect_network(h, m, cells, keep)
    rec = []
    for g in m["record"]["gids"]:
        rec.append(h.Vector().record(cells[g][0](0.5)._ref_v))
        rec.append(h.Vector().record(cells[g][1][0]._ref_g))
        rec.append(h.Vector().record(cells[g][1][1]._ref_g))
        rec.append(h.Vector().record(cells[g][1][2]._ref_g))
    ts = h.Vector().record(h._ref_t)
    spikes = nrnref.run_steps(h, m, tvec, idvec)
    counts = [(c[1][0].nkick, c[1][1].nopen, c[1][1].nmove, c[1][2].nspike) for c in cells]
    every = round(EVERY / m["dt"])
    return (spikes, ts.to_python()[::every], [v.to_python()[::every] for v in rec], counts)


def main():
    name = "net_coincide" if sys.argv[1:] == ["coincide"] else "net_selfev"
    m = model_coincide() if name == "net_coincide" else model()
    nrnref.write_model(os.path.join(REF, name + ".json"), m)
    spikes, ts, rec, counts = run_neuron(m)
    nrnref.write_run(os.path.join(REF, name), spikes, ts, rec)
    cells = sum(1 for _, g in spikes if g < N)
    print("%s: %d spikes (%d of cells), %d samples; per cell (kicks, RetrigSyn "
          "openings, moves, AhpWatch's spikes): %s" % (name, len(spikes), cells, len(ts), counts))


if __name__ == "__main__":
    main()
