#!/usr/bin/python3
"""A network file of L5PC cells with ProbAMPANMDA_EMS synapses (examples/l5pc_network.py's) in
NEURON, in one process or over MPI ranks: the NEURON reference of tests/cli_l5pc_net.sh and the
NEURON peer of bench/network/run.sh l5pc-net.

Regenerate the test's references (Debian's python3-neuron, NEURON 8.2; the system Python),
from the repository root:

    /usr/bin/python3 tests/neuron/l5pc_net_reference.py --write-reference [DIR]

writes DIR/l5pc_net.json (default DIR tests/reference: examples/l5pc_network.py's network with
TEST_NET's arguments: 6 cells, 30 ms, deterministic release, soma v of gids 0-2 recorded),
then runs it in NEURON and
writes DIR/l5pc_net.spikes ('gid time' lines, time order, the spike sources' spikes too) and
DIR/l5pc_net.v ('t v0 v1 v2' every 0.25 ms). Any such file, on R ranks:

    [mpirun -np R] python3 l5pc_net_reference.py NET.json --mechlib LIB ... [--spikes OUT]
    python3 l5pc_net_reference.py NET.json --compile DIR   (nrnivmodl: prints the libraries)

Built as hinesbatch reads the file (docs/network.md, section 5):
- cells: bench/mech/neuron_pop.py's build_cell (Import3d, odd-length nseg, the mechanisms in
  the file's order, ions, IClamps, the detector's threshold), one per gid ("count" copies);
- synapses: each entry's point process ("name", RANGE keys) at soma(0.5) or at section INDEX
  of the morphology (hinesbatch's index = Import3d's order = the cell's `all` list) and x;
- gids: cells first, then spike sources; the sources' spikes are hinesbatch's (NetStim's
  formulas on its Philox draws, tests/neuron/hb_draws.py), replayed as events: each
  connection from a source is a NetCon without a source whose events are the spike times plus
  its delay (NetCon.event at finitialize);
- connections: listed ones, ring builders and random builders (hb_draws.random_sources and
  random_delay: the same sources and delays as hinesbatch); cell-to-cell ones through
  ParallelContext.gid_connect, the detector's threshold on the source's NetCon;
- fixed step backward Euler (secondorder 0), cache_efficient, gids round-robin over ranks.
ProbAMPANMDA_EMS: BBP's original (mechanisms/bbp/original, Random123 through setRNG(0, gid,
synapse)) for NEURON 8, hinesbatch's port (mechanisms/bbp, NEURON 9's RANDOM) for NEURON 9
(--prob original|port to choose). The draws differ from hinesbatch's Philox streams, so spikes
agree only in the deterministic release of examples/l5pc_network.py --deterministic.
Prints one JSON line (build_s; run_s: finitialize and psolve, barrier to barrier).
"""
import argparse
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, HERE)
import hb_draws  # noqa: E402
import nrnref  # noqa: E402

_spec = importlib.util.spec_from_file_location(
    "neuron_pop", os.path.join(ROOT, "bench", "mech", "neuron_pop.py"))
neuron_pop = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(neuron_pop)

POINT_ORIGINAL = os.path.join(ROOT, "mechanisms", "bbp", "original")
# the test's network: few cells and a short run (seconds in CI), strong enough a drive that
# the recurrent synapses move the second spikes
TEST_NET = ["6", "--t-stop", "30", "--in-degree", "3", "--drive-in", "2", "--amp", "0.8",
            "--drive-weight", "3", "--weight", "3", "--deterministic", "--record", "0,1,2"]


def gids_of(m):
    """[(kind, spec)] per gid: cells in file order with their copies, then sources."""
    out = [("cell", c) for c in m.get("cells", []) for _ in range(c.get("count", 1))]
    out += [("source", s) for s in m.get("network", {}).get("sources", [])
            for _ in range(s.get("count", 1))]
    return out


def connections_on(m, gid):
    """(source, synapse, weight, delay) of gid, in hinesbatch's order: listed, ring, random."""
    net = m.get("network", {})
    out = [(c["source"], c.get("synapse", 0), c["weight"], c["delay"])
           for c in net.get("connections", []) if c["target"] == gid]
    for r in net.get("ring", []):
        first, count = r.get("first", 0), r["count"]
        if first <= gid < first + count:
            out.append((first + count - 1 if gid == first else gid - 1, r.get("synapse", 0),
                        r["weight"], r["delay"]))
    for b in net.get("random", []):
        tf, tc = b["targets"]
        if not tf <= gid < tf + tc:
            continue
        sf, sc = b["sources"]
        dmin, dmax = (b["delay"] if isinstance(b["delay"], list) else (b["delay"], b["delay"]))
        seed = b.get("seed", 0)
        for q, src in enumerate(hb_draws.random_sources(seed, gid, sf, sc, b["in_degree"])):
            syn = q if b.get("synapse", 0) == "each" else b.get("synapse", 0)
            out.append((src, syn, b["weight"], hb_draws.random_delay(seed, gid, q, dmin, dmax)))
    return out


def point_mods(m):
    names = set()
    for c in m.get("cells", []):
        for s in c.get("synapses", []):
            if "name" not in s:
                sys.exit("l5pc_net_reference.py: synapse %s: only catalogue point processes "
                         "(\"name\") here" % s)
            names.add(s["name"].rpartition("::")[2])
    return sorted(names)


def compile_all(m, workdir, prob):
    """nrnivmodl on the cells' density mechanisms (neuron_pop.py's) and the point processes:
    ProbAMPANMDA_EMS the original or the port; prints nothing, returns the libraries."""
    os.makedirs(workdir, exist_ok=True)
    libs = neuron_pop.compile_mechs(m, workdir)
    sys.path.insert(0, HERE)
    from nrnmech import compile_mods
    for name in point_mods(m):
        port = [os.path.join(ROOT, "mechanisms", d) for d in neuron_pop.CATALOGUES
                if os.path.exists(os.path.join(ROOT, "mechanisms", d, name + ".mod"))]
        if not port:
            sys.exit("l5pc_net_reference.py: no mechanisms/*/%s.mod" % name)
        folders = [port[0]]
        if os.path.exists(os.path.join(POINT_ORIGINAL, name + ".mod")):
            folders.insert(0 if prob == "original" else 1, POINT_ORIGINAL)
        for k, folder in enumerate(folders):  # the other one where nrnivmodl refuses the first
            try:
                libs.append(compile_mods(folder, [name], os.path.join(workdir, "nrn_point_")))
                print("l5pc_net_reference.py: %s from %s" % (name, os.path.relpath(folder, ROOT)),
                      file=sys.stderr)
                break
            except subprocess.CalledProcessError:
                if k + 1 == len(folders):
                    raise
    return libs


def prob_default():
    """original for NEURON 8 (no RANDOM), the port for NEURON 9."""
    import neuron
    return "port" if int(neuron.__version__.split(".")[0]) >= 9 else "original"


def run(m, base, mechlibs, spikes_out=None, record_out=None, loaded=None):
    from neuron import h
    h.nrnmpi_init()  # before ParallelContext; a no-op without mpirun
    pc = h.ParallelContext()
    rank, nhost = int(pc.id()), int(pc.nhost())
    for lib in mechlibs:
        h.nrn_load_dll(lib)
    if loaded:
        loaded()  # the libraries are mapped: their folder may go
    if record_out and nhost > 1:
        sys.exit("l5pc_net_reference.py: --record on one rank only")
    h.load_file("stdrun.hoc")
    h.cvode_active(0)
    kinds = gids_of(m)
    n_cells = sum(1 for k, _ in kinds if k == "cell")
    t_stop, dt = m["t_stop"], m.get("dt", 0.025)
    t0 = time.perf_counter()
    readers, cells, keep = {}, {}, []
    for gid in range(rank, n_cells, nhost):
        spec = dict(kinds[gid][1])
        spec["morphology"] = os.path.join(base, spec["morphology"])
        c = neuron_pop.build_cell(h, spec, readers)
        c.syns = []
        for k, sy in enumerate(spec.get("synapses", [])):
            at = sy["at"]
            seg = (c.soma(0.5) if at == "soma"
                   else c.secs[at["section"]](at.get("x", 0.5)))
            p = getattr(h, sy["name"].rpartition("::")[2])(seg)
            for key, value in sy.items():
                if key not in ("name", "at"):
                    setattr(p, key, value)
            if hasattr(p, "setRNG"):
                p.setRNG(0, gid, k)  # the original's Random123 stream (the port: NEURON's ids)
            c.syns.append(p)
        pc.set_gid2node(gid, rank)
        nc = h.NetCon(c.soma(0.5)._ref_v, None, sec=c.soma)
        nc.threshold = c.threshold
        pc.cell(gid, nc)
        cells[gid] = c
    # the sources' spikes, as hinesbatch draws them
    times = {}
    for gid in range(n_cells, len(kinds)):
        s = kinds[gid][1]
        times[gid] = hb_draws.source_times(gid, s.get("start", 50.0), s.get("interval", 10.0),
                                           s.get("number", 10), s.get("noise", 0.0),
                                           s.get("seed", 0), t_stop)
    replay = []  # (NetCon, event times)
    for gid, c in cells.items():
        for src, syn, weight, delay in connections_on(m, gid):
            if src < n_cells:
                nc = pc.gid_connect(src, c.syns[syn])
                nc.weight[0], nc.delay = weight, delay
                keep.append(nc)
            else:
                nc = h.NetCon(None, c.syns[syn])
                nc.weight[0] = weight
                replay.append((nc, [t + delay for t in times[src]]))
    h.celsius = m.get("celsius", 6.3)
    h.dt = dt
    h.steps_per_ms = 1.0 / dt
    h.secondorder = 0
    h.cvode.cache_efficient(1)
    pc.set_maxstep(10)
    tvec, idvec = h.Vector(), h.Vector()
    pc.spike_record(-1, tvec, idvec)
    rec = m.get("record", {})
    vecs = []
    if record_out:
        every = rec.get("sample_dt", 0.25)
        vecs = [h.Vector().record(cells[g].soma(0.5)._ref_v, every) for g in rec.get("gids", [])]
        tv = h.Vector().record(h._ref_t, every)

    def queue():
        for nc, ts in replay:
            for t in ts:
                nc.event(t)
    fih = h.FInitializeHandler(queue)
    pc.barrier()
    t1 = time.perf_counter()
    h.finitialize(m.get("v_init", -65))
    pc.psolve(t_stop)
    pc.barrier()
    t2 = time.perf_counter()
    del fih
    spikes = [(int(g), t) for t, g in zip(tvec, idvec)]
    if rank == 0:
        spikes += [(g, t) for g, ts in times.items() for t in ts]
    allspikes = pc.py_gather(spikes, 0)
    comp = pc.allreduce(sum(s.nseg for c in cells.values() for s in c.secs), 1)
    if rank == 0:
        spikes = sorted((s for part in allspikes for s in part), key=lambda s: (s[1], s[0]))
        if spikes_out:
            nrnref.write_spikes(spikes_out, [(t, g) for g, t in spikes])
        if record_out:
            nrnref.write_samples(record_out, list(tv), vecs)
        import neuron
        steps = int(round(t_stop / dt))
        print(json.dumps({"peer": "neuron " + neuron.__version__, "ranks": nhost,
                          "cells": n_cells, "compartments": int(comp), "steps": steps,
                          "spikes": sum(1 for g, _ in spikes if g < n_cells),
                          "build_s": t1 - t0, "run_s": t2 - t1,
                          "ns_per_compartment_step": (t2 - t1) * 1e9 / max(comp * steps, 1)}))
        sys.stdout.flush()
    pc.barrier()
    h.quit()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net", nargs="?")
    ap.add_argument("--write-reference", nargs="?", const=os.path.join(ROOT, "tests", "reference"),
                    metavar="DIR")
    ap.add_argument("--mechlib", action="append", default=[])
    ap.add_argument("--compile", metavar="DIR")
    ap.add_argument("--prob", choices=["original", "port"])
    ap.add_argument("--spikes")
    ap.add_argument("--record", help="write the file's recorded soma voltages here")
    a = ap.parse_args()
    if a.write_reference:
        out = a.write_reference
        os.makedirs(out, exist_ok=True)
        net = os.path.join(out, "l5pc_net.json")
        subprocess.run([sys.executable, os.path.join(ROOT, "examples", "l5pc_network.py")]
                       + TEST_NET[:1] + [net] + TEST_NET[1:], check=True)
        with open(net) as f:
            m = json.load(f)
        work = tempfile.mkdtemp(prefix="nrn_l5pc_net_")
        libs = compile_all(m, work, a.prob or prob_default())
        run(m, os.path.dirname(net), libs, os.path.join(out, "l5pc_net.spikes"),
            os.path.join(out, "l5pc_net.v"), lambda: shutil.rmtree(work))
        return
    if not a.net:
        ap.error("expected NET.json or --write-reference")
    with open(a.net) as f:
        m = json.load(f)
    if a.compile:
        for lib in compile_all(m, a.compile, a.prob or prob_default()):
            print(lib)
        return
    run(m, os.path.dirname(os.path.abspath(a.net)), a.mechlib, a.spikes, a.record)


if __name__ == "__main__":
    main()
