#!/usr/bin/env python3
"""A network file of SWC cells and ring builders (real_network.py's) in NEURON over MPI ranks.

Each cell is python/hinesbatch/neuron_model.py's (Import3d sections, stdlib's d-lambda rule,
pas and hh, IClamps, ExpSyns, detectors): the model of hinesbatch.compare, so the same as
hinesbatch's. Gids round-robin over the ranks (`h.nrnmpi_init()`, ParallelContext), each SWC
file read once a rank and instantiated for each of its cells, fixed step, cache_efficient,
`pc.set_maxstep(10)`, `pc.psolve(t_stop)`. Prints one JSON line (`run_s`: psolve, barrier to
barrier); --spikes writes 'gid time' lines in time order.

usage: mpirun -np R python3 neuron_real.py NET.json [--spikes OUT]
"""
import argparse
import importlib.util
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location(
    "neuron_model", os.path.join(HERE, "..", "..", "python", "hinesbatch", "neuron_model.py"))
nm = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(nm)  # not `import hinesbatch`: that needs the built library

from neuron import h  # noqa: E402

h.nrnmpi_init()  # before ParallelContext; a no-op without mpirun
pc = h.ParallelContext()
RANK, NHOST = int(pc.id()), int(pc.nhost())
_readers = {}  # SWC path: its Import3d_GUI, read once a rank


class Cell(nm._Cell):
    def _load_swc(self, h, spec, where, base_dir):
        path = os.path.join(base_dir, spec["morphology"])
        if path not in _readers:
            h.load_file("import3d.hoc")
            reader = h.Import3d_SWC_read()
            reader.quiet = 1
            reader.input(path)
            _readers[path] = (reader, h.Import3d_GUI(reader, 0))
        self._i3d = _readers[path][1]
        self._i3d.instantiate(self)
        for sec in self.all:
            kind = sec.name().rsplit(".", 1)[-1].split("[")[0]
            self.sections.append(sec)
            self.types.append(nm._IMPORT3D_TYPES.get(kind, 3))
        self.root = h.SectionRef(sec=self.sections[0]).root


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("net")
    ap.add_argument("--spikes")
    a = ap.parse_args()
    with open(a.net) as f:
        m = json.load(f)
    net = m.get("network", {})
    if set(net) - {"ring", "exchange"} or m.get("method", "euler") != "euler":
        raise SystemExit("%s: expected cells, ring builders and the euler method" % a.net)
    base = os.path.dirname(os.path.abspath(a.net))
    dt, t_stop = m.get("dt", 0.025), m["t_stop"]
    h.load_file("stdrun.hoc")
    h.cvode_active(0)
    h.secondorder = 0
    h.cvode.cache_efficient(1)
    h.dt = dt
    h.celsius = m.get("celsius", 6.3)
    if hasattr(h, "usetable_hh"):
        h.usetable_hh = 1 if m.get("hh_table", True) else 0
    specs = [(k, spec) for k, spec in enumerate(m["cells"]) for _ in range(spec.get("count", 1))]
    n = len(specs)

    t0 = time.time()
    cells = {gid: Cell(h, specs[gid][1], "cells[%d]" % specs[gid][0], gid, base)
             for gid in range(RANK, n, NHOST)}
    # detectors once every section exists (NEURON updates its pointers to v at each change)
    for gid, c in cells.items():
        seg, threshold = next((s, t) for _, s, t in c.probes if t is not None)
        pc.set_gid2node(gid, RANK)
        det = h.NetCon(seg._ref_v, None, sec=seg.sec)
        det.threshold = threshold
        pc.cell(gid, det)
    keep = []
    for c in nm._connections(net):
        if c["target"] in cells:
            nc = pc.gid_connect(c["source"], cells[c["target"]].synapses[c.get("synapse", 0)])
            nc.weight[0], nc.delay = c["weight"], c["delay"]
            keep.append(nc)
    tvec, idvec = h.Vector(), h.Vector()
    pc.spike_record(-1, tvec, idvec)
    pc.set_maxstep(10)
    h.finitialize(m.get("v_init", -65))
    pc.barrier()
    build_s = time.time() - t0

    pc.barrier()
    t0 = time.time()
    pc.psolve(t_stop)
    pc.barrier()
    run_s = time.time() - t0

    mine = sorted(zip(tvec.to_python(), (int(g) for g in idvec.to_python())))
    comp = pc.allreduce(sum(sec.nseg for c in cells.values() for sec in c.sections), 1)
    every = pc.py_gather(mine, 0)
    if RANK == 0:
        spikes = sorted(s for part in every for s in part)  # by time, then gid
        if a.spikes:
            with open(a.spikes, "w") as f:
                for t, g in spikes:
                    f.write("%d %.17g\n" % (g, t))
        steps = math.ceil(t_stop / dt - 1e-9)
        import neuron
        print(json.dumps({"peer": "neuron " + neuron.__version__, "ranks": NHOST, "cells": n,
                          "compartments": int(comp), "steps": steps, "t_ms": h.t,
                          "spikes": len(spikes), "build_s": build_s, "run_s": run_s,
                          "ns_per_compartment_step": run_s * 1e9 / (comp * steps)}))
    pc.barrier()
    sys.stdout.flush()
    h.quit()  # MPI_Finalize where MPI was started, so that mpirun sees every rank end well


if __name__ == "__main__":
    main()
