#!/usr/bin/env python3
"""A hinesbatch model file of cells with catalogue mechanisms (population.py's output, or
examples/l5pc.json) in NEURON, in one process or over MPI ranks, for bench/mech/run.sh.

Each cell as tests/neuron/l5pc_reference.py builds BluePyOpt's l5pc (its reference for
cli_l5pc), read from the model file's entry instead of written in: the morphology by Import3d
(Neurolucida3 for .asc, SWC otherwise; read once a rank, instantiated for each cell), nseg by
the "odd-length" policy (1 + 2 int(L / 2 max_length), BluePyOpt's and the Allen models' rule) or
a region's "nseg", Ra and cm by region, the mechanisms in the file's order (pas's g and e as
g_pas, e_pas; a catalogue's RANGE PARAMETERs per segment, an "exp_distance" distribution
value (a + b exp(c d)) with d h.distance from the root section's centre; other keys
GLOBALs), the regions' ions (e<ion> per section), celsius, v_init, dt, IClamps at the soma,
and each cell's first probe with spike_threshold as a NetCon at soma(0.5). Fixed step backward
Euler, cache_efficient; gids round-robin over the ranks (h.nrnmpi_init, ParallelContext).
Prints one JSON line (build_s, run_s: finitialize and psolve, barrier to barrier, as
hinesbatch's summary wall_s times init and steps); --spikes writes 'gid time' lines.

usage: [mpirun -np R] python3 neuron_pop.py MODEL.json --mechlib libnrnmech.so [--spikes OUT]
       python3 neuron_pop.py MODEL.json --compile DIR   (nrnivmodl on the model's .mod files:
                                                          prints the library's path)
NRNIVMODL names the nrnivmodl to use (default: the one on PATH; a NEURON 9 wheel's bin/).
"""
import argparse
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
CATALOGUES = ["bbp", "allen", "nrn"]  # mechanisms/<catalogue>/<NAME>.mod
PREFIX = {"soma": 1, "axon": 2, "dend": 3, "apic": 4}
REGIONS = {"soma": 1, "axon": 2, "dend": 3, "basal": 3, "apical": 4}


def region(r):
    if r in (None, "all"):
        return "all"
    return r if isinstance(r, int) else REGIONS[r]


def split_name(name):
    cat, _, mech = name.rpartition("::")
    return cat, mech


def mod_files(model):
    """The .mod files of the model's catalogue mechanisms: {name: folder}."""
    out = {}
    for c in model["cells"]:
        for m in c.get("mechanisms", []):
            cat, mech = split_name(m["name"])
            if mech in ("pas", "hh") and not cat:
                continue
            dirs = [cat] if cat else CATALOGUES
            found = [d for d in dirs if os.path.exists(os.path.join(ROOT, "mechanisms", d, mech + ".mod"))]
            if not found:
                sys.exit("neuron_pop.py: no mechanisms/*/%s.mod" % mech)
            out[mech] = os.path.join(ROOT, "mechanisms", found[0])
    return out


def compile_mechs(model, workdir):
    sys.path.insert(0, os.path.join(ROOT, "tests", "neuron"))
    from nrnmech import compile_mods
    mods = mod_files(model)
    libs = []
    for folder in sorted(set(mods.values())):
        libs.append(compile_mods(folder, sorted(m for m, d in mods.items() if d == folder),
                                 os.path.join(workdir, "nrn_" + os.path.basename(folder) + "_")))
    return libs


class Cell:
    pass


def build_cell(h, spec, readers):
    path = spec["morphology"]
    if path not in readers:
        h.load_file("import3d.hoc")
        if path.lower().endswith(".asc"):
            r = h.Import3d_Neurolucida3()
        else:
            r = h.Import3d_SWC_read()
        r.quiet = 1
        h.hoc_stdout("/dev/null")
        r.input(path)
        h.hoc_stdout()
        readers[path] = (r, h.Import3d_GUI(r, 0))
    cell = Cell()
    readers[path][1].instantiate(cell)
    secs = list(cell.all)
    types = [PREFIX[s.name().split(".")[-1].split("[")[0]] for s in secs]
    soma = [s for s, t in zip(secs, types) if t == 1][0]
    in_region = lambda r: [s for s, t in zip(secs, types) if r == "all" or t == r]
    disc = spec.get("discretization", {})
    for s in secs:
        if disc.get("policy") == "odd-length":
            s.nseg = 1 + 2 * int(s.L / (2.0 * disc["max_length"]))
        elif disc:
            sys.exit("neuron_pop.py: discretization %s: only the odd-length policy here" % disc)
    for s in secs:
        s.Ra, s.cm = spec.get("Ra", 35.4), spec.get("cm", 1.0)
    for r in spec.get("regions", []):
        for s in in_region(region(r["region"])):
            for k in ("Ra", "cm", "nseg"):
                if k in r:
                    setattr(s, k, r[k])
    for m in spec.get("mechanisms", []):
        _, mech = split_name(m["name"])
        where = in_region(region(m.get("region", "all")))
        for s in where:
            s.insert(mech)
        for key, value in m.items():
            if key in ("name", "region"):
                continue
            full = key + "_" + mech
            if isinstance(value, dict):
                a, b, c = value["exp_distance"]
                for s in where:
                    for seg in s:
                        d = h.distance(soma(0.5), seg)
                        setattr(seg, full, (a + b * math.exp(d * c)) * value["value"])
            elif hasattr(where[0](0.5), full):
                for s in where:
                    setattr(s, full, value)
            else:
                setattr(h, full, value)  # a GLOBAL
    for r in spec.get("ions", []):
        for key, value in r.items():
            if key == "region":
                continue
            if not key.startswith("e"):
                sys.exit("neuron_pop.py: ions: %s: only reversal potentials here" % key)
            for s in in_region(region(r.get("region", "all"))):
                if hasattr(s(0.5), key):
                    setattr(s, key, value)
    cell.stims = []
    for st in spec.get("stimuli", []):
        if st.get("type") != "iclamp" or st.get("at") != "soma":
            sys.exit("neuron_pop.py: stimuli: only iclamps at the soma here")
        ic = h.IClamp(soma(0.5))
        ic.delay, ic.dur, ic.amp = st["del"], st["dur"], st["amp"]
        cell.stims.append(ic)
    probes = [p for p in spec.get("probes", []) if "spike_threshold" in p]
    if not probes or probes[0].get("at") != "soma":
        sys.exit("neuron_pop.py: the cell's first probe with spike_threshold must be at the soma")
    cell.threshold = probes[0]["spike_threshold"]
    cell.soma, cell.secs = soma, secs
    return cell


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--mechlib", action="append", default=[])
    ap.add_argument("--compile")
    ap.add_argument("--spikes")
    a = ap.parse_args()
    with open(a.model) as f:
        model = json.load(f)
    if a.compile:
        for lib in compile_mechs(model, a.compile):
            print(lib)
        return
    from neuron import h
    h.nrnmpi_init()  # before ParallelContext; a no-op without mpirun
    pc = h.ParallelContext()
    rank, nhost = int(pc.id()), int(pc.nhost())
    for lib in a.mechlib:
        h.nrn_load_dll(lib)
    h.load_file("stdrun.hoc")
    base = os.path.dirname(os.path.abspath(a.model))
    t0 = time.perf_counter()
    readers, cells, ncs = {}, [], []
    for gid, spec in enumerate(model["cells"]):
        if gid % nhost != rank:
            continue
        spec = dict(spec)
        spec["morphology"] = os.path.join(base, spec["morphology"])
        c = build_cell(h, spec, readers)
        pc.set_gid2node(gid, rank)
        nc = h.NetCon(c.soma(0.5)._ref_v, None, sec=c.soma)
        nc.threshold = c.threshold
        pc.cell(gid, nc)
        cells.append(c)
        ncs.append(nc)
    comp = sum(s.nseg for c in cells for s in c.secs)
    comp = pc.allreduce(comp, 1)
    tvec, idvec = h.Vector(), h.Vector()
    pc.spike_record(-1, tvec, idvec)
    h.celsius = model.get("celsius", 6.3)
    h.dt = model.get("dt", 0.025)
    h.steps_per_ms = 1.0 / h.dt
    h.secondorder = 0
    h.cvode.cache_efficient(1)
    pc.set_maxstep(10)
    t_stop = model["t_stop"]
    pc.barrier()
    t1 = time.perf_counter()
    h.finitialize(model.get("v_init", -65))
    pc.psolve(t_stop)
    pc.barrier()
    t2 = time.perf_counter()
    spikes = [(int(g), t) for t, g in zip(tvec, idvec)]
    allspikes = pc.py_gather(spikes, 0)
    if rank == 0:
        spikes = sorted(s for part in allspikes for s in part)
        if a.spikes:
            with open(a.spikes, "w") as f:
                for g, t in sorted(spikes, key=lambda s: (s[1], s[0])):
                    f.write("%d %.17g\n" % (g, t))
        steps = int(round(t_stop / h.dt))
        import neuron
        print(json.dumps({"peer": "neuron " + neuron.__version__, "ranks": nhost,
                          "cells": len(model["cells"]), "compartments": int(comp), "steps": steps,
                          "spikes": len(spikes), "build_s": t1 - t0, "run_s": t2 - t1,
                          "ns_per_compartment_step": (t2 - t1) * 1e9 / max(comp * steps, 1)}))
    pc.barrier()
    h.quit()


if __name__ == "__main__":
    main()
