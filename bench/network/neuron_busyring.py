#!/usr/bin/env python3
"""hinesbatch's busyring (docs/network.md, "busyring") in NEURON, over MPI ranks.

The same network as hinesbatch's builder (src/net/net_busyring.c), drawn by busyring_draws.py:
per gid the same branches (pt3d points as the builder's samples, so the level-0 branches'
first segment is the frustum from the soma's radius), one segment per sample (nseg = the
branch's segments), soma hh (the file's hh_table, default false: usetable_hh 0), dendrites
pas (0.001 S/cm2, -70 mV), Ra 100, cm 1, 6.3 C, v_init -65 mV; an ExpSyn (tau 2 ms, e 0) at
soma(0.5); the detector soma(0) at 10 mV; the ring connection and synapses - 1 zero-weight
ones (pc.gid_connect); each ring's first cell the kick, an event of weight event-weight at
1 ms (a NetStim firing at 0 through a NetCon of delay 1 ms, which CoreNEURON's input keeps;
its spike has no gid and is not recorded).

Run like NEURON's ringtest: ParallelContext, gids round-robin over ranks, fixed step,
cvode.cache_efficient(1), pc.set_maxstep(10) (the epoch is the network's smallest delay),
pc.psolve(t_stop). Rank 0 prints one JSON line (psolve's time alone, barrier to barrier, as
run_s) and, with --spikes, writes 'gid time' lines sorted by time, then gid.

usage: [mpirun -n R] neuron_busyring.py NET.json [--spikes OUT]
       neuron_busyring.py NET.json --swc DIR [--cells K]
       [mpirun -n R] neuron_busyring.py NET.json --coreneuron DIR
  --swc DIR         no run: write the first K gids (default 4) as DIR/gid.swc (the builder's
                    samples) and print, per gid, NEURON's segments and membrane area [um2], to
                    compare with `hinesbatch info DIR/gid.swc --policy per-segment --scheme
                    neuron --sections hinesbatch --json` (run.sh neuron-busyring does)
  --coreneuron DIR  no run: write the network as CoreNEURON's input (pc.nrnbbcore_write) for
                    nrniv-core (bench/network/README.md, "CoreNEURON GPU")
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import busyring_draws as B  # noqa: E402

from neuron import h  # noqa: E402

h.nrnmpi_init()  # before ParallelContext; a no-op without mpirun
pc = h.ParallelContext()
RANK, NHOST = int(pc.id()), int(pc.nhost())


class Cell:
    def __init__(self, p, gid):
        self.soma = h.Section(name="c%d_soma" % gid)
        self.soma.pt3dadd(0, 0, -B.SOMA_RADIUS, 2 * B.SOMA_RADIUS)
        self.soma.pt3dadd(0, 0, B.SOMA_RADIUS, 2 * B.SOMA_RADIUS)
        self.soma.nseg = 1
        self.soma.insert("hh")
        self.dends = []
        for b, (level, parent, nc, length, z0) in enumerate(B.branches(p, gid)):
            sec = h.Section(name="c%d_d%d" % (gid, b))
            # a level-0 branch starts at the soma's distal sample, with the soma's radius
            sec.pt3dadd(0, 0, z0, 2 * (B.SOMA_RADIUS if parent < 0 else B.DEND_RADIUS))
            for k in range(nc):
                sec.pt3dadd(0, 0, z0 + (k + 1) * (length / nc), 2 * B.DEND_RADIUS)
            sec.nseg = nc
            sec.connect(self.soma(1) if parent < 0 else self.dends[parent](1), 0)
            sec.insert("pas")
            for seg in sec:
                seg.pas.g = 0.001
                seg.pas.e = -70
            self.dends.append(sec)
        for sec in self.all():
            sec.Ra, sec.cm = 100, 1
        self.syn = h.ExpSyn(self.soma(0.5))
        self.syn.tau, self.syn.e = 2, 0

    def all(self):
        return [self.soma] + self.dends

    def segments(self):
        return sum(sec.nseg for sec in self.all())

    def area(self):
        return sum(seg.area() for sec in self.all() for seg in sec)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("--spikes")
    ap.add_argument("--swc")
    ap.add_argument("--cells", type=int, default=4)
    ap.add_argument("--coreneuron")
    a = ap.parse_args()
    p, dt, t_stop, hh_table = B.load(a.net)
    n = p["num-cells"]
    h.load_file("stdrun.hoc")
    h.cvode_active(0)
    h.secondorder = 0
    h.cvode.cache_efficient(1)
    h.dt = dt
    h.celsius = 6.3
    if hasattr(h, "usetable_hh"):
        h.usetable_hh = 1 if hh_table else 0
    elif hh_table:  # the neuron-gpu wheel's hh has no TABLE: it always computes the rates
        raise SystemExit("%s: hh_table true, but this NEURON's hh has no table" % a.net)

    if a.swc:  # the first gids' samples and NEURON's discretisation of them; no network
        os.makedirs(a.swc, exist_ok=True)
        for gid in range(RANK, min(a.cells, n), NHOST):
            with open(os.path.join(a.swc, "%d.swc" % gid), "w") as f:
                f.write(B.swc(p, gid))
            c = Cell(p, gid)
            print(json.dumps({"gid": gid, "sections": len(c.all()),
                              "compartments": c.segments(), "area_um2": c.area()}))
        end()
        return

    t0 = time.time()
    cells, keep = {}, []
    for gid in range(RANK, n, NHOST):  # round-robin
        cells[gid] = Cell(p, gid)
    # the detectors once every section exists: NEURON updates the pointers to v of all of them
    # at each change of the tree, so that detectors made cell by cell cost n^2
    for gid, c in cells.items():
        pc.set_gid2node(gid, RANK)
        det = h.NetCon(c.soma(0)._ref_v, None, sec=c.soma)
        det.threshold = 10
        pc.cell(gid, det)
    for gid, c in cells.items():
        for src, w, d in B.connections(p, gid):
            nc = pc.gid_connect(src, c.syn)
            nc.weight[0], nc.delay = w, d
            keep.append(nc)
    for gid, c in cells.items():
        if B.kicked(p, gid):  # a NetStim firing at 0, its event delayed to KICK_MS
            ns = h.NetStim()
            ns.start, ns.number, ns.noise = 0, 1, 0
            nc = h.NetCon(ns, c.syn)
            nc.weight[0], nc.delay = B.kick_weight(p), B.KICK_MS
            keep += [ns, nc]
    tvec, idvec = h.Vector(), h.Vector()
    pc.spike_record(-1, tvec, idvec)
    pc.set_maxstep(10)
    h.finitialize(-65)
    pc.barrier()
    build_s = time.time() - t0

    if a.coreneuron:  # the model as CoreNEURON's input files, for nrniv-core; no run here
        pc.nrnbbcore_write(a.coreneuron)
        comp = pc.allreduce(sum(c.segments() for c in cells.values()), 1)
        if RANK == 0:
            print(json.dumps({"coreneuron_data": a.coreneuron, "ranks": NHOST, "cells": n,
                              "compartments": int(comp), "dt_ms": dt, "t_stop_ms": t_stop,
                              "build_s": build_s}))
        end()
        return

    pc.barrier()
    t0 = time.time()
    pc.psolve(t_stop)
    pc.barrier()
    run_s = time.time() - t0

    mine = sorted(zip(tvec.to_python(), (int(g) for g in idvec.to_python())))
    comp = pc.allreduce(sum(c.segments() for c in cells.values()), 1)
    every = pc.py_gather(mine, 0)
    if RANK == 0:
        spikes = sorted(s for part in every for s in part)  # by time, then gid
        if a.spikes:
            with open(a.spikes, "w") as f:
                for t, g in spikes:
                    f.write("%d %.17g\n" % (g, t))
        steps = int(round(h.t / dt))
        import neuron
        print(json.dumps({"peer": "neuron " + neuron.__version__, "ranks": NHOST, "cells": n,
                          "compartments": int(comp), "steps": steps, "t_ms": h.t,
                          "spikes": len(spikes),
                          "build_s": build_s, "run_s": run_s,
                          "ns_per_compartment_step": run_s * 1e9 / (comp * steps)}))
        sys.stdout.flush()
    end()


def end():
    pc.barrier()
    sys.stdout.flush()
    h.quit()  # MPI_Finalize where MPI was started, so that mpirun sees every rank end well


if __name__ == "__main__":
    main()
