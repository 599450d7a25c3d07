"""The steps NEURON's reference scripts share (tests/neuron_cat_bbp.py,
tests/neuron/allen_reference.py, tests/neuron/l5pc_reference.py): a morphology instantiated by
Import3d, its sections listed by name, the nseg rule of BluePyOpt and the AllenSDK, the fixed
step run with NetCon's spike rule, and the soma trace as the comparisons read it
(tests/neuron/compare_trace.py), and the grid of SWC points single precision holds
(tests/neuron/soma_reference.py, allen_reference.py --grid), the ball-and-stick networks of
the network references (stdp, prob, hetero, selfev): NEURON fixed-step, the cells, the steps,
and the spikes and samples the network references write (those and net, l5pc_net); the .mod
files of a user catalogue compiled and loaded into NEURON, and a network's NetStims and NetCons
from any spike sources (those and artificial, netev, tm)."""

import json
import math
import os

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
REF = os.path.join(ROOT, "tests", "reference")  # where the references write their files


def load_mods(folder, names, prefix):
    """NEURON's h with FOLDER/NAME.mod (FOLDER below the repository root) for each name compiled
    by nrnivmodl (tests/neuron/nrnmech.py, in a fresh folder named from `prefix`) and loaded."""
    from neuron import h
    from nrnmech import compile_mods
    h.nrn_load_dll(compile_mods(os.path.join(ROOT, folder), names, prefix))
    return h


def on_grid(text):
    """The SWC text with x, y, z rounded to 1/8 um and radii to 1/16 um (at least 1/16): a grid
    single precision holds exactly, so NEURON's float 3-D points are the SWC's doubles."""
    lines = []
    for line in text.splitlines():
        s = line.split("#", 1)[0].split()
        if len(s) < 7:
            continue
        x, y, z = (round(float(v) * 8.0) / 8.0 for v in s[2:5])
        r = max(round(float(s[5]) * 16.0) / 16.0, 1.0 / 16.0)
        lines.append("%s %s %.4f %.4f %.4f %.4f %s\n" % (s[0], s[1], x, y, z, r, s[6]))
    return "".join(lines)


class Cell:
    """What Import3d_GUI.instantiate fills (cell.all, cell.soma, ...)."""


def instantiate(h, reader, path):
    """The cell of morphology `path` read by Import3d reader `reader` ("Import3d_SWC_read",
    "Import3d_Neurolucida3"), quietly, as Import3d_GUI(r, 0).instantiate makes it."""
    h.load_file("stdrun.hoc")
    h.load_file("import3d.hoc")
    cell = Cell()
    r = getattr(h, reader)()
    r.quiet = 1
    h.hoc_stdout("/dev/null")
    r.input(path)
    h.hoc_stdout()
    h.Import3d_GUI(r, 0).instantiate(cell)
    return cell


def section_lists(cell, prefixes):
    """{"all": every section, key: the sections named PREFIX[i] for each key: PREFIX}; every
    section in exactly one list."""
    lists = {"all": list(cell.all)}
    for key, prefix in prefixes.items():
        lists[key] = [s for s in cell.all if s.name().split(".")[-1].startswith(prefix + "[")]
    assert sum(len(lists[k]) for k in prefixes) == len(lists["all"])
    return lists


def nseg_rule(sec):
    """BluePyOpt's set_nseg (nseg_frequency 40) and the AllenSDK's: 1 + 2 int(L / 40)."""
    return 1 + 2 * int(sec.L / 40.0)


def run(h, seg, v_init, steps, dt, threshold, every, secondorder=0, clock=None):
    """finitialize(v_init), then `steps` fadvances of dt with `secondorder`. Returns (rows,
    spikes): seg's v at 0 and every `every` steps, and the spikes, the first step with v above
    `threshold` (NetCon's rule). Times are step * dt, or h.t where clock is "t"."""
    h.dt = dt
    h.secondorder = secondorder
    h.finitialize(v_init)
    rows = [(0.0, seg.v)]
    spikes, above = [], seg.v > threshold
    for k in range(1, steps + 1):
        h.fadvance()
        v = seg.v
        t = h.t if clock == "t" else k * dt
        if v > threshold and not above:
            spikes.append(t)
        above = v > threshold
        if k % every == 0:
            rows.append((t, v))
    return rows, spikes


def print_trace(rows, spikes, threshold):
    """The spikes' line and the trace, as tests/neuron/compare_trace.py reads them."""
    print("# spikes (first step with soma v > %g mV): " % threshold
          + " ".join("%.6f" % t for t in spikes))
    print("# t_ms v_soma_mV")
    for t, a in rows:
        print("%.6f %.17g" % (t, a))


def connect_network(h, m, cells, keep):
    """A network file's sources and connections made as NetCons: gids 0..len(cells)-1 the
    cells' somas (threshold -10 mV), then the file's regular sources as NetStims; each
    connection onto cells[target][1][synapse] with its weight and delay; every source's spikes
    recorded. cells: (soma, synapses) pairs; keep: what must stay alive. Returns (tvec, idvec)."""
    somas = [lambda target, soma=soma: h.NetCon(soma(0.5)._ref_v, target, -10, 0, 0, sec=soma)
             for soma, _ in cells]
    return connect_gids(h, m, somas, lambda c: cells[c["target"]][1][c["synapse"]], keep)


def connect_gids(h, m, sources, target, keep):
    """connect_network's NetCons from any spike sources: sources[gid](target) the NetCon from
    gid's source (target None: none), the file's regular sources as NetStims the gids after
    them; every gid's spikes recorded; each connection c onto target(c). Returns (tvec, idvec)."""
    sources = list(sources)
    for s in m["network"]["sources"]:
        ns = h.NetStim()
        ns.start, ns.interval, ns.number, ns.noise = s["start"], s["interval"], s["number"], 0
        keep.append(ns)
        sources.append(lambda target, ns=ns: h.NetCon(ns, target))
    tvec, idvec = h.Vector(), h.Vector()
    for gid, make in enumerate(sources):
        nc = make(None)
        nc.record(tvec, idvec, gid)
        keep.append(nc)
    for c in m["network"]["connections"]:
        nc = sources[c["source"]](target(c))
        nc.weight[0] = c["weight"]
        nc.delay = c["delay"]
        keep.append(nc)
    return tvec, idvec


def fixed_step(h, m):
    """NEURON as the network references run it: fixed step (backward Euler), the file's dt and
    celsius."""
    h.load_file("stdrun.hoc")
    h.cvode_active(0)
    h.secondorder = 0
    h.cvode.cache_efficient(1)
    h.dt = m["dt"]
    h.celsius = m["celsius"]


def soma_synapse(h, gid, k, sy, soma, dend):
    """A synapse of the file's cell entry on the soma's middle, its keys set."""
    p = getattr(h, sy["name"])(soma(0.5))
    for key, value in sy.items():
        if key not in ("name", "at"):
            setattr(p, key, value)
    return p


def ball_and_stick_entry(count, synapses):
    """The network file's cell entry of `count` ball-and-stick cells (examples/ring_network.json's
    cell: an hh soma, a pas dendrite of 11 segments) with these synapses, a spike probe on the
    soma: what ball_and_stick builds in NEURON."""
    return {
        "name": "ball_and_stick",
        "count": count,
        "sections": [
            {"name": "soma", "parent": None, "length": 12.6157, "diam": 12.6157, "type": "soma"},
            {"name": "dend", "parent": "soma", "parent_x": 1, "length": 200, "diam": 1,
             "type": "dend"},
        ],
        "Ra": 100,
        "cm": 1,
        "regions": [{"region": "soma", "nseg": 1}, {"region": "dend", "nseg": 11}],
        "mechanisms": [
            {"name": "hh", "region": "soma"},
            {"name": "pas", "region": "dend", "g": 0.001, "e": -65},
        ],
        "synapses": synapses,
        "probes": [{"name": "soma", "at": "soma", "spike_threshold": -10}],
    }


def ball_and_stick(h, m, synapse=soma_synapse):
    """The file's first cell entry as `count` hh ball-and-stick cells (soma 12.6157 um, a
    200 um dendrite of 11 segments with pas), each with its synapses made by
    synapse(h, gid, k, entry, soma, dend). Returns (cells, keep) for connect_network."""
    spec = m["cells"][0]
    keep, cells = [], []
    for gid in range(spec["count"]):
        soma = h.Section(name="c%d_soma" % gid)
        dend = h.Section(name="c%d_dend" % gid)
        soma.L = soma.diam = 12.6157
        dend.L, dend.diam, dend.nseg = 200, 1, 11
        dend.connect(soma(1), 0)
        for sec in (soma, dend):
            sec.Ra, sec.cm = 100, 1
        soma.insert("hh")
        dend.insert("pas")
        dend.g_pas, dend.e_pas = 0.001, -65
        syns = [synapse(h, gid, k, sy, soma, dend) for k, sy in enumerate(spec["synapses"])]
        cells.append((soma, syns))
        keep.append((soma, dend))
    return cells, keep


def run_steps(h, m, tvec, idvec):
    """finitialize and the file's t_stop in fixed steps; the sources' spikes as sorted
    (time, gid) pairs."""
    h.finitialize(m["v_init"])
    for _ in range(math.ceil(m["t_stop"] / m["dt"] - 1e-9)):
        h.fadvance()
    return sorted(zip(tvec.to_python(), (int(g) for g in idvec.to_python())))


def write_model(path, m):
    """The network file as the references commit it: indent 1, a final newline."""
    with open(path, "w") as f:
        json.dump(m, f, indent=1)
        f.write("\n")


def write_spikes(path, spikes):
    """NEURON's spikes, (time, gid) pairs, as 'gid time' lines (%.17g)."""
    with open(path, "w") as f:
        for t, gid in spikes:
            f.write("%d %.17g\n" % (gid, t))


def write_samples(path, ts, columns):
    """The samples as 't c0 c1 ...' lines (%.17g): ts and each column's values."""
    with open(path, "w") as f:
        for r, t in enumerate(ts):
            f.write("%.17g %s\n" % (t, " ".join("%.17g" % v[r] for v in columns)))


def write_run(stem, spikes, ts, columns):
    """A network reference's run: STEM.spikes and STEM.v."""
    write_spikes(stem + ".spikes", spikes)
    write_samples(stem + ".v", ts, columns)
