#!/usr/bin/python3
"""NEURON reference spikes for hinesbatch's networks (tests/cli_net_neuron.sh).

Regenerate (Debian: apt-get install -y python3-neuron, NEURON 8.2; run with the system
Python, which has the neuron module), from the repository root:

    /usr/bin/python3 tests/neuron/net_reference.py            # both networks
    /usr/bin/python3 tests/neuron/net_reference.py ring       # or one of them
    /usr/bin/python3 tests/neuron/net_reference.py --neuron-only random

For each network this builds the hinesbatch network file once, with explicit "connections"
(the random connectivity and weights are drawn here with Python's random.Random and a fixed
seed, so that NEURON and hinesbatch get the identical list), writes it to
tests/reference/net_<name>.json, then reads that same file back, builds the network in
NEURON from it (sections, nseg, Ra, cm, pas/hh, ExpSyn/Exp2Syn, NetStim, NetCon) and writes
NEURON's spikes to tests/reference/net_<name>.spikes: 'gid time' lines ordered by time, then
gid, the times as NEURON's NetCon.record recorded them (cells: t at the end of the first step
with v > threshold; NetStims: their event times). Gids: the cells in file order (copies
included), then the sources. --neuron-only skips writing the JSON (reruns NEURON on the files
as they are).

  ring:   16 hh ball-and-stick cells in a ring (ExpSyn on the dendrite, weight 0.05 uS,
          delay 5 ms), kicked once by a NetStim at 1 ms; 1,000 ms.
  random: 1,000 ball-and-stick cells, 800 excitatory and 200 inhibitory, each with 20 inputs
          (16 excitatory onto an Exp2Syn on the dendrite, e = 0, 4 inhibitory onto an
          Exp2Syn on the soma, e = -80) from distinct random cells, weights and delays drawn
          per connection (delays whole numbers of steps); 8 regular NetStims (every 10 ms
          from 2 to 500 ms, then silent) each drive 25 random cells; 1,000 ms. The activity
          is sustained by the recurrent excitation after the drive stops.

NEURON's settings: fixed step (cvode off), secondorder 0, cache_efficient 1, dt and
t_stop from the file, celsius 6.3, finitialize(v_init), then ceil(t_stop/dt) calls of
fadvance (the number of steps hinesbatch takes).
"""
import json
import math
import os
import random
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REF = os.path.normpath(os.path.join(HERE, "..", "reference"))
sys.path.insert(0, HERE)
import nrnref  # noqa: E402

DT = 0.025


def ring_model():
    n = 16
    conns = [{"source": n, "target": 0, "synapse": 0, "weight": 0.05, "delay": 1}]
    for i in range(n):
        conns.append({"source": (i - 1) % n, "target": i, "synapse": 0, "weight": 0.05,
                      "delay": 5})
    return {
        "t_stop": 1000, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [nrnref.ball_and_stick_entry(n, [
            {"type": "expsyn", "at": {"section": "dend", "x": 0.5}, "tau": 2, "e": 0}])],
        "network": {
            "sources": [{"name": "kick", "count": 1, "start": 1, "interval": 10, "number": 1,
                         "noise": 0, "seed": 0}],
            "connections": conns,
        },
    }


def random_model(seed=40):
    rng = random.Random(seed)
    n, n_exc, k_exc, k_inh = 1000, 800, 16, 4
    n_stim, stim_targets = 8, 25
    w_exc, w_inh, w_stim = 0.0024, 0.015, 0.04  # uS, means

    def steps(lo, hi):  # a delay of a whole number of steps, lo..hi ms
        return round(DT * rng.randint(round(lo / DT), round(hi / DT)), 3)

    conns = []
    for tgt in range(n):
        exc = rng.sample([g for g in range(n_exc) if g != tgt], k_exc)
        inh = rng.sample([g for g in range(n_exc, n) if g != tgt], k_inh)
        for src in sorted(exc):
            conns.append({"source": src, "target": tgt, "synapse": 0,
                          "weight": round(w_exc * rng.uniform(0.5, 1.5), 6),
                          "delay": steps(1, 5)})
        for src in sorted(inh):
            conns.append({"source": src, "target": tgt, "synapse": 1,
                          "weight": round(w_inh * rng.uniform(0.5, 1.5), 6),
                          "delay": steps(1, 3)})
    for s in range(n_stim):
        for tgt in sorted(rng.sample(range(n), stim_targets)):
            conns.append({"source": n + s, "target": tgt, "synapse": 0,
                          "weight": round(w_stim * rng.uniform(0.75, 1.25), 6), "delay": 1})
    return {
        "t_stop": 1000, "dt": DT, "v_init": -65, "celsius": 6.3, "method": "euler",
        "backend": "seq",
        "cells": [nrnref.ball_and_stick_entry(n, [
            {"type": "exp2syn", "at": {"section": "dend", "x": 0.5}, "tau1": 0.5, "tau2": 3,
             "e": 0},
            {"type": "exp2syn", "at": "soma", "tau1": 1, "tau2": 6, "e": -80}])],
        "network": {
            "sources": [{"name": "drive%d" % s, "count": 1, "start": 2 + 1.25 * s,
                         "interval": 10, "number": 50, "noise": 0, "seed": 0}
                        for s in range(n_stim)],
            "connections": conns,
        },
    }


def write_json(model, path):
    """Compact JSON: the cells and sources on a few lines, one connection a line."""
    net = model["network"]
    head = {k: v for k, v in model.items() if k != "network"}
    out = json.dumps(head, separators=(",", ":"))[:-1]
    out += ',\n"network":{"sources":' + json.dumps(net["sources"], separators=(",", ":"))
    out += ',\n"connections":[\n'
    out += ",\n".join(json.dumps(c, separators=(",", ":")) for c in net["connections"])
    out += "\n]}}\n"
    with open(path, "w") as f:
        f.write(out)


# ---------------------------------------------------------------- NEURON from the JSON file

REGION_TYPES = {"soma": 1, "axon": 2, "dend": 3, "basal": 3, "apical": 4}


def region_type(r):
    return r if isinstance(r, int) else REGION_TYPES.get(r, r)


def run_neuron(path):
    from neuron import h
    h.load_file("stdrun.hoc")
    with open(path) as f:
        m = json.load(f)
    dt = m.get("dt", 0.025)
    h.cvode_active(0)
    h.secondorder = 0 if m.get("method", "euler") == "euler" else 1
    h.cvode.cache_efficient(1)
    h.dt = dt
    h.celsius = m.get("celsius", 6.3)
    keep = []  # everything NEURON must not free
    cells = []  # per cell gid: (sections by name and index, synapses, detector location)
    for spec in m["cells"]:
        for copy in range(spec.get("count", 1)):
            gid = len(cells)
            secs, by_name = [], {}
            for i, s in enumerate(spec["sections"]):
                sec = h.Section(name="c%d_%s" % (gid, s.get("name", i)))
                sec.L, sec.diam = s["length"], s["diam"]
                typ = region_type(s.get("type", "soma" if i == 0 else "dend"))
                par = s.get("parent")
                if par is not None:
                    p = by_name[par] if isinstance(par, str) else secs[par][0]
                    sec.connect(p(s.get("parent_x", 1)), 0)
                secs.append((sec, typ))
                by_name[s.get("name", i)] = sec
            for sec, typ in secs:
                sec.Ra, sec.cm = spec.get("Ra", 100), spec.get("cm", 1)
                for r in spec.get("regions", []):
                    if region_type(r["region"]) in (typ, "all"):
                        sec.Ra = r.get("Ra", sec.Ra)
                        sec.cm = r.get("cm", sec.cm)
                        sec.nseg = r.get("nseg", sec.nseg)
            for mech in spec.get("mechanisms", []):
                for sec, typ in secs:
                    if region_type(mech.get("region", "all")) not in (typ, "all"):
                        continue
                    sec.insert(mech["name"])
                    for k, v in mech.items():
                        if k not in ("name", "region"):
                            setattr(sec, "%s_%s" % (k, mech["name"]), v)

            def seg(at):
                if at == "soma":
                    return next(sec for sec, typ in secs if typ == 1)(0.5)
                s = at["section"]
                sec = by_name[s] if isinstance(s, str) else secs[s][0]
                return sec(at["x"])

            syns = []
            for sy in spec.get("synapses", []):
                if sy["type"] == "expsyn":
                    p = h.ExpSyn(seg(sy["at"]))
                    p.tau = sy.get("tau", p.tau)
                else:
                    p = h.Exp2Syn(seg(sy["at"]))
                    p.tau1, p.tau2 = sy.get("tau1", p.tau1), sy.get("tau2", p.tau2)
                p.e = sy.get("e", p.e)
                syns.append(p)
            probe = next(p for p in spec["probes"] if "spike_threshold" in p)
            cells.append((seg(probe["at"]), probe["spike_threshold"], syns))
            keep.append(secs)
    tvec, idvec = h.Vector(), h.Vector()
    sources = []  # per gid: a function making a NetCon from it to a target (None: recorder)
    for gid, (where, thresh, syns) in enumerate(cells):
        def from_cell(target, where=where, thresh=thresh):
            nc = h.NetCon(where._ref_v, target, sec=where.sec)
            nc.threshold = thresh
            return nc
        sources.append(from_cell)
    for s in m["network"].get("sources", []):
        for copy in range(s.get("count", 1)):
            ns = h.NetStim()
            ns.start = s.get("start", 0)
            ns.interval = s.get("interval", 10)
            ns.number = s.get("number", 1)
            ns.noise = s.get("noise", 0)
            if ns.noise:
                raise SystemExit("noisy NetStims have no common random stream with hinesbatch")
            keep.append(ns)
            sources.append(lambda target, ns=ns: h.NetCon(ns, target))
    for gid, make in enumerate(sources):
        nc = make(None)
        nc.record(tvec, idvec, gid)
        keep.append(nc)
    for c in m["network"].get("connections", []):
        nc = sources[c["source"]](cells[c["target"]][2][c.get("synapse", 0)])
        nc.weight[0] = c["weight"]
        nc.delay = c["delay"]
        keep.append(nc)
    for k in ("ring", "random"):
        if m["network"].get(k):
            raise SystemExit("%s: builders are not supported here (explicit connections only)"
                             % path)
    t_stop = m["t_stop"]
    nsteps = math.ceil(t_stop / dt - 1e-9)  # hinesbatch's ceil(t_stop/dt) steps
    start = time.time()
    h.finitialize(m.get("v_init", -65))
    for _ in range(nsteps):
        h.fadvance()
    elapsed = time.time() - start
    spikes = sorted(zip(tvec.to_python(), (int(g) for g in idvec.to_python())))  # time, gid
    return spikes, len(cells), len(sources), elapsed, h.t


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    neuron_only = "--neuron-only" in sys.argv
    builders = {"ring": ring_model, "random": random_model}
    for name in args or ["ring", "random"]:
        path = os.path.join(REF, "net_%s.json" % name)
        if not neuron_only:
            os.makedirs(REF, exist_ok=True)
            write_json(builders[name](), path)
        spikes, n_cells, n_gids, elapsed, t_end = run_neuron(path)
        nrnref.write_spikes(os.path.join(REF, "net_%s.spikes" % name), spikes)
        n_cell_spikes = sum(1 for t, g in spikes if g < n_cells)
        print("%s: %d cells, %d gids, %d spikes (%d of cells), NEURON %.2f s to t = %.17g, "
              "%d bytes of JSON" % (name, n_cells, n_gids, len(spikes), n_cell_spikes, elapsed,
                                    t_end, os.path.getsize(path)))


if __name__ == "__main__":
    main()
