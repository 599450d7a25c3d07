"""A hinesbatch model file built and run in NEURON (`from neuron import h`), for
hinesbatch.compare: the same cells (sections or a cable, nseg, Ra, cm, pas and hh, IClamps,
ExpSyn and Exp2Syn), probes and spike detectors, and for a network its NetStims and NetCons.

Supported: cells given as "sections" or "cable" (locations "soma", {"section", "x"}) or as
SWC files read by Import3d (locations "soma" and section 0, the root), under NEURON's scheme
(nseg "fixed", per region, "d-lambda" by stdlib.hoc's rule, for SWC cells "per-segment": one
segment per pair of 3-D points); networks with explicit connections, ring builders,
regular sources, artificial cells (ARTIFICIAL_CELL .mod files NEURON has loaded: nrnivmodl's
library, given as `nrnmech` or loaded before), and random builders of weight 0 (their events
change nothing, so they are left out). Anything else raises ValueError naming the key.
NEURON's settings: fixed step, secondorder 0 (or 1 for "cn"), usetable_hh as "hh_table",
finitialize(v_init), then ceil(t_stop / dt) fadvance calls, the steps hinesbatch takes.
"""

import math

import numpy as np

REGIONS = {"soma": 1, "axon": 2, "dend": 3, "basal": 3, "apical": 4}
HH_PARAMS = {"gnabar", "gkbar", "gl", "el"}  # hh.mod's; ena and ek are the ions'


def _region(value, where):
    if isinstance(value, int):
        return value
    if value == "all":
        return "all"
    if value not in REGIONS:
        raise ValueError(f"{where}: region {value!r}: expected one of {sorted(REGIONS)}, "
                         "an SWC type or \"all\"")
    return REGIONS[value]


# Import3d's section names and the SWC types they stand for.
_IMPORT3D_TYPES = {"soma": 1, "axon": 2, "dend": 3, "apic": 4}


class _Cell:
    """One cell of the model in NEURON: sections by name and index, synapses, probe segments."""

    def __init__(self, h, spec, where, gid, base_dir):
        self.sections, self.by_name, self.types, self.swc = [], {}, [], "morphology" in spec
        disc = spec.get("discretization", {})
        if disc.get("scheme", "neuron") != "neuron":
            raise ValueError(f"{where}.discretization.scheme: NEURON has its own scheme only; "
                             "expected \"neuron\"")
        policy = disc.get("policy", "fixed")
        if policy not in ("fixed", "d-lambda", "per-segment") or (
                policy == "per-segment" and not self.swc):
            raise ValueError(f"{where}.discretization.policy: {policy!r}: expected \"fixed\", "
                             "\"d-lambda\" or for SWC cells \"per-segment\" (NEURON's rules)")
        if self.swc:
            self._load_swc(h, spec, where, base_dir)
            specs = []
        elif "cable" in spec:
            c = spec["cable"]
            specs = [{"name": "cable", "length": c["length"], "diam": c["diam"],
                      "type": c.get("type", "dend")}]
        else:
            specs = spec["sections"]
        for i, s in enumerate(specs):
            name = s.get("name", str(i))
            sec = h.Section(name=f"c{gid}_{name}")
            sec.L, sec.diam = s["length"], s["diam"]
            typ = _region(s.get("type", "soma" if i == 0 else "dend"), f"{where}.sections[{i}]")
            parent = s.get("parent")
            if parent is not None:
                p = self.by_name[parent] if isinstance(parent, str) else self.sections[parent]
                sec.connect(p(s.get("parent_x", 1)), 0)
            self.sections.append(sec)
            self.types.append(typ)
            self.by_name[name] = sec
        nseg = {}
        for sec, typ in zip(self.sections, self.types):
            sec.Ra, sec.cm = spec.get("Ra", 100), spec.get("cm", 1)
            for k, r in enumerate(spec.get("regions", [])):
                if _region(r["region"], f"{where}.regions[{k}]") in (typ, "all"):
                    sec.Ra, sec.cm = r.get("Ra", sec.Ra), r.get("cm", sec.cm)
                    if "nseg" in r:
                        nseg[sec.name()] = r["nseg"]
        for sec in self.sections:
            if sec.name() in nseg:
                sec.nseg = nseg[sec.name()]
            elif policy == "d-lambda":  # stdlib.hoc's geom_nseg
                d_lambda, freq = disc.get("d_lambda", 0.1), disc.get("frequency", 100)
                lam = h.lambda_f(freq, sec=sec)
                sec.nseg = int((sec.L / (d_lambda * lam) + 0.9) / 2) * 2 + 1
            elif policy == "per-segment":  # one segment per pair of 3-D points
                sec.nseg = max(1, int(sec.n3d()) - 1)
            else:
                sec.nseg = disc.get("nseg", 1)
        for k, mech in enumerate(spec.get("mechanisms", [])):
            name = mech["name"]
            if name not in ("pas", "hh"):
                raise ValueError(f"{where}.mechanisms[{k}].name: {name!r}: expected pas or hh")
            region = _region(mech.get("region", "all"), f"{where}.mechanisms[{k}]")
            for sec, typ in zip(self.sections, self.types):
                if region not in (typ, "all"):
                    continue
                sec.insert(name)
                for key, value in mech.items():
                    if key in ("name", "region"):
                        continue
                    if name == "hh" and key not in HH_PARAMS:
                        setattr(sec, key, value)  # ena, ek
                    else:
                        setattr(sec, f"{key}_{name}", value)
        self.synapses = []
        for k, sy in enumerate(spec.get("synapses", [])):
            seg = self.segment(sy["at"], f"{where}.synapses[{k}].at")
            if sy.get("type", "expsyn") == "expsyn":
                p = h.ExpSyn(seg)
                p.tau = sy.get("tau", p.tau)
            else:
                p = h.Exp2Syn(seg)
                p.tau1, p.tau2 = sy.get("tau1", p.tau1), sy.get("tau2", p.tau2)
            p.e = sy.get("e", p.e)
            self.synapses.append(p)
        self.stimuli = []
        for k, st in enumerate(spec.get("stimuli", [])):
            clamp = h.IClamp(self.segment(st["at"], f"{where}.stimuli[{k}].at"))
            clamp.delay, clamp.dur, clamp.amp = st["del"], st["dur"], st["amp"]
            self.stimuli.append(clamp)
        self.probes = [(p.get("name", f"v{k}"), self.segment(p["at"], f"{where}.probes[{k}].at"),
                        p.get("spike_threshold")) for k, p in enumerate(spec.get("probes", []))]

    def _load_swc(self, h, spec, where, base_dir):
        """NEURON's way with SWC: Import3d_SWC_read, then Import3d_GUI.instantiate."""
        import os
        if spec.get("section_rule", "import3d") != "import3d" or spec.get("units", "um") != "um":
            raise ValueError(f"{where}: NEURON reads SWC files with Import3d in um; expected "
                             "\"section_rule\": \"import3d\" and \"units\": \"um\"")
        h.load_file("import3d.hoc")
        reader = h.Import3d_SWC_read()
        reader.quiet = 1
        reader.input(os.path.join(base_dir, spec["morphology"]))
        self._i3d = h.Import3d_GUI(reader, 0)
        self._i3d.instantiate(self)  # self.soma, self.dend, ..., self.all
        for sec in self.all:
            kind = sec.name().rsplit(".", 1)[-1].split("[")[0]
            self.sections.append(sec)
            self.types.append(_IMPORT3D_TYPES.get(kind, 3))
        self.root = h.SectionRef(sec=self.sections[0]).root

    def segment(self, at, where):
        if self.swc and isinstance(at, dict) and at.get("section") == 0 and set(at) <= {
                "section", "x"}:
            return self.root(at.get("x", 0.5))  # section 0: the root, as hinesbatch's Import3d
        if self.swc and at != "soma":
            raise ValueError(f"{where}: {at!r}: on an SWC cell NEURON is given \"soma\" or "
                             "{\"section\": 0, \"x\"} (the root) only")
        if at == "soma":
            for sec, typ in zip(self.sections, self.types):
                if typ == 1:
                    return sec(0.5)
            raise ValueError(f"{where}: \"soma\": the cell has no section of type soma")
        if isinstance(at, dict) and "section" in at and set(at) <= {"section", "x"}:
            s = at["section"]
            sec = self.by_name.get(s) if isinstance(s, str) else self.sections[s]
            if sec is None:
                raise ValueError(f"{where}.section: no section named {s!r}")
            return sec(at.get("x", 0.5))
        raise ValueError(f"{where}: {at!r}: expected \"soma\" or {{\"section\", \"x\"}} here")


def _cells(h, model, base_dir):
    out = []
    for k, spec in enumerate(model.get("cells", [])):
        for _ in range(spec.get("count", 1)):
            out.append(_Cell(h, spec, f"cells[{k}]", len(out), base_dir))
    return out


def _connections(network):
    """Explicit connections, then the ring builders' (docs/network.md, section 9)."""
    conns = [dict(c, where=f"network.connections[{k}]")
             for k, c in enumerate(network.get("connections", []))]
    for j, r in enumerate(network.get("ring", [])):
        first, count = r.get("first", 0), r["count"]
        for i in range(count):
            conns.append({"source": first + (i - 1) % count, "target": first + i,
                          "synapse": r.get("synapse", 0), "weight": r["weight"],
                          "delay": r["delay"], "where": f"network.ring[{j}]"})
    for k, r in enumerate(network.get("random", [])):
        if r["weight"] != 0:
            raise ValueError(f"network.random[{k}].weight: {r['weight']}: NEURON cannot draw "
                             "hinesbatch's random connections; expected 0 (no effect) or "
                             "explicit \"connections\"")
    if "busyring" in network:
        raise ValueError("network.busyring: not built in NEURON here; expected cells, sources "
                         "and connections")
    return conns


_loaded = set()  # nrnmech libraries this process has loaded (NEURON refuses a second load)


def _load_nrnmech(h, path):
    """NEURON's mechanisms from nrnivmodl's output: the folder where nrnivmodl ran, or its
    libnrnmech.so; each library once per process (NEURON refuses a name loaded twice)."""
    import os
    import platform
    given = os.fspath(path)
    lib = os.path.realpath(given)
    if os.path.isdir(lib):
        arch = os.path.join(lib, platform.machine())
        found = [f for f in (os.path.join(arch, ".libs", "libnrnmech.so"),
                             os.path.join(arch, "libnrnmech.so")) if os.path.isfile(f)]
        if not found:
            raise ValueError(f"nrnmech: {given}: no {platform.machine()}/.libs/libnrnmech.so "
                             f"or {platform.machine()}/libnrnmech.so there; expected the folder "
                             "where nrnivmodl compiled the .mod files, or its libnrnmech.so")
        lib = os.path.realpath(found[0])
    elif not os.path.isfile(lib):
        raise ValueError(f"nrnmech: {given}: no such file or folder; expected nrnivmodl's "
                         "libnrnmech.so or the folder where nrnivmodl ran")
    if lib in _loaded:
        return
    try:
        loaded = h.nrn_load_dll(lib)
    except RuntimeError:  # hoc's error: a mechanism of it is loaded already
        loaded = 0
    if not loaded:
        raise ValueError(f"nrnmech: {given}: NEURON could not load it (not nrnivmodl's "
                         "libnrnmech.so, or its mechanisms were loaded already from another "
                         "library); expected a library of mechanisms NEURON does not have yet")
    _loaded.add(lib)


def _artificial_kinds(h):
    """{name: is an ARTIFICIAL_CELL} of every point process NEURON knows now."""
    mt, name, kinds = h.MechanismType(1), h.ref(""), {}
    for i in range(int(mt.count())):
        mt.select(i)
        mt.selected(name)
        kinds[name[0]] = bool(mt.is_artificial(i))
    return kinds


def _artificial(h, network):
    """The network's "artificial" entries as NEURON's artificial cells, in file order with
    their copies (the gids after the cells'), each with its parameters."""
    entries = network.get("artificial", [])
    if not isinstance(entries, list):
        raise ValueError("network.artificial: expected an array")
    kinds, out = _artificial_kinds(h), []
    for k, a in enumerate(entries):
        where = f"network.artificial[{k}]"
        if not isinstance(a, dict):
            raise ValueError(f"{where}: expected an object")
        mech = a.get("mechanism")
        if not isinstance(mech, str):
            raise ValueError(f"{where}.mechanism: expected an artificial cell's name")
        name = mech.split("::")[-1]  # NEURON has one namespace; "cat::Mech" is Mech there
        if name not in kinds:
            raise ValueError(f"{where}.mechanism: NEURON has no point process {name!r}; expected "
                             "its .mod file compiled by nrnivmodl and loaded first "
                             "(run(..., nrnmech=FOLDER or libnrnmech.so), "
                             "neuron.load_mechanisms or h.nrn_load_dll)")
        if not kinds[name]:
            raise ValueError(f"{where}.mechanism: {name} is a point process in NEURON, not an "
                             "ARTIFICIAL_CELL; expected an artificial cell here")
        params = {key: v for key, v in a.items() if key not in ("name", "mechanism", "count")}
        for key, v in params.items():
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ValueError(f"{where}.{key}: {v!r}: expected a number")
        count = a.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{where}.count: {count!r}: expected an integer from 1")
        for _ in range(count):
            cell = getattr(h, name)()
            for key, v in params.items():
                try:
                    setattr(cell, key, v)
                except (LookupError, AttributeError, TypeError):
                    raise ValueError(f"{where}.{key}: {name} has no parameter {key!r} in "
                                     "NEURON; expected one of its RANGE variables") from None
            out.append(cell)
    return out


def _target(targets, c):
    """A connection's synapse: a cell's by index, an artificial cell itself (synapse 0)."""
    where = c["where"]
    gid, syn = c["target"], c.get("synapse", 0)
    if not 0 <= gid < len(targets):
        raise ValueError(f"{where}.target: gid {gid}: expected a cell's or an artificial "
                         f"cell's gid (0 to {len(targets) - 1})")
    if not 0 <= syn < len(targets[gid]):
        raise ValueError(f"{where}.synapse: {syn}: gid {gid} has {len(targets[gid])} "
                         "synapse(s) (an artificial cell: synapse 0)")
    return targets[gid][syn]


def run(model, base_dir=".", nrnmech=None):
    """Build and run the model (a dict, as a model file holds; SWC paths relative to base_dir)
    in NEURON. A network's artificial cells need their .mod files in NEURON: `nrnmech` (the
    folder where nrnivmodl compiled them, or its libnrnmech.so) is loaded first (once per
    process), or the caller loaded them before. Returns a dict:
    "t" sample times [ms]; "traces" {probe name: v [mV]} (hinesbatch's names: "c<cell>.<probe>"
    with several cells; cell models only); "probe_spikes" {probe name: times [ms]} (probes with
    spike_threshold); "spikes" (gid, time) pairs by time, then gid: each cell's first detecting
    probe's, the artificial cells' net_events, the sources'; "version", "t_end"."""
    from neuron import h
    h.load_file("stdrun.hoc")
    network = model.get("network")
    if nrnmech is not None:
        _load_nrnmech(h, nrnmech)
    dt = model.get("dt", 0.025)
    h.cvode_active(0)
    h.secondorder = 0 if model.get("method", "euler") == "euler" else 1
    h.dt = dt
    h.celsius = model.get("celsius", 6.3)
    h.usetable_hh = 1 if model.get("hh_table", True) else 0
    cells = _cells(h, model, base_dir)
    several = len(cells) > 1
    keep, traces, probe_spikes, records = [], {}, {}, []
    for gid, cell in enumerate(cells):
        source = None
        for name, seg, threshold in cell.probes:
            label = f"c{gid}.{name}" if several else name
            if network is None:
                vec = h.Vector()
                vec.record(seg._ref_v)
                traces[label] = vec
            if threshold is None:
                continue
            if source is None:  # recorded with its gid below (one record per detector)
                source = (seg, threshold, label)
                continue
            times = h.Vector()
            nc = h.NetCon(seg._ref_v, None, sec=seg.sec)
            nc.threshold = threshold
            nc.record(times)
            keep.append(nc)
            probe_spikes[label] = times
        records.append(source)
    sources = []  # per gid: a function making a NetCon from it to a target
    for gid, src in enumerate(records):
        def from_cell(target, src=src, gid=gid):
            if src is None:
                raise ValueError(f"gid {gid}: a connection's source without a probe with "
                                 "spike_threshold")
            nc = h.NetCon(src[0]._ref_v, target, sec=src[0].sec)
            nc.threshold = src[1]
            return nc
        sources.append(from_cell)
    targets = [cell.synapses for cell in cells]  # per gid: what a connection's synapse names
    for art in _artificial(h, network or {}):
        keep.append(art)
        targets.append([art])
        sources.append(lambda target, art=art: h.NetCon(art, target))
    for k, s in enumerate((network or {}).get("sources", [])):
        if s.get("noise", 0):
            raise ValueError(f"network.sources[{k}].noise: NEURON's random streams are not "
                             "hinesbatch's; expected 0")
        for _ in range(s.get("count", 1)):
            ns = h.NetStim()
            ns.start, ns.interval = s.get("start", 50), s.get("interval", 10)
            ns.number, ns.noise = s.get("number", 10), 0
            keep.append(ns)
            sources.append(lambda target, ns=ns: h.NetCon(ns, target))
    spike_t, spike_gid = h.Vector(), h.Vector()
    for gid, make in enumerate(sources):
        if gid < len(cells) and records[gid] is None:
            continue
        nc = make(None)
        nc.record(spike_t, spike_gid, gid)
        keep.append(nc)
    if network is not None:
        for c in _connections(network):
            if not 0 <= c["source"] < len(sources):
                raise ValueError(f"{c['where']}.source: gid {c['source']}: expected a gid "
                                 f"from 0 to {len(sources) - 1}")
            nc = sources[c["source"]](_target(targets, c))
            nc.weight[0], nc.delay = c["weight"], c["delay"]
            keep.append(nc)
    steps = math.ceil(model["t_stop"] / dt - 1e-9)
    h.finitialize(model.get("v_init", -65))
    times = [h.t]  # as Vector.record(&t) would, which needs a section (none: artificial only)
    for _ in range(steps):
        h.fadvance()
        times.append(h.t)
    every = max(1, round(model.get("sample_dt", 0) / dt)) if model.get("sample_dt") else 1
    t = np.array(times)[::every]
    spikes = sorted(zip(spike_t.to_python(), (int(g) for g in spike_gid.to_python())))
    probe_spikes = {name: np.array(v.to_python()) for name, v in probe_spikes.items()}
    for gid, src in enumerate(records):
        if src is not None:
            probe_spikes[src[2]] = np.array([t for t, g in spikes if g == gid])
    import neuron
    return {
        "t": t,
        "traces": {name: np.array(v.to_python())[::every] for name, v in traces.items()},
        "probe_spikes": {name: probe_spikes[name] for name in sorted(
            probe_spikes, key=lambda n: list(traces).index(n) if n in traces else 0)},
        "spikes": [(g, s) for s, g in spikes],
        "version": neuron.__version__,
        "t_end": h.t,
    }
