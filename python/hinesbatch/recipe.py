"""Models built from Python (docs/python.md, "Recipes"): cells from sections or from numpy
point arrays (`Cell`), and networks asked gid by gid as Arbor's recipes are (`Recipe`), with
connections from callbacks or, a million at a time, from numpy arrays. `Network(recipe, ...)`
and `Simulation(recipe, ...)` in the package build them through the C API's hb_recipe_t."""

import collections
import copy
import io
import json
import numbers
import os

import numpy as np

from . import _ffi
from ._ffi import ffi

__all__ = ["Recipe", "Cell", "Section", "connection", "Connection", "event_generator",
           "EventGenerator", "regular_schedule", "explicit_schedule", "poisson_schedule",
           "spike_source",
           "SpikeSource", "artificial_cell", "ArtificialCell", "probe", "Probe"]

# Arbor's connection(source, target, weight, delay): here the target is the synapse's index
# among the cell's synapses (the order of its "synapses" / add_synapse calls).
Connection = collections.namedtuple("Connection", "source synapse weight delay")
Connection.__doc__ = ("A connection ending on a recipe's cell: spikes of gid `source` reach "
                      "synapse `synapse` after `delay` [ms], adding `weight` [uS].")


def connection(source, synapse, weight, delay):
    """Connection(source gid, synapse index of the target cell, weight [uS], delay [ms])."""
    return Connection(source, synapse, weight, delay)


SpikeSource = collections.namedtuple("SpikeSource", "start interval number noise seed")
SpikeSource.__doc__ = ("A cell that emits spikes (NEURON's NetStim): `number` spikes from "
                       "`start` [ms], `interval` [ms] apart, with `noise` 0 (regular) .. 1 "
                       "(Poisson) drawn from `seed`.")


def spike_source(start=0.0, interval=10.0, number=1, noise=0.0, seed=0):
    """A gid's cell_description for a spike source (NetStim): start, interval [ms]."""
    return SpikeSource(start, interval, number, noise, seed)


class ArtificialCell(collections.namedtuple("ArtificialCell", "mechanism parameters")):
    """An artificial cell (an NMODL ARTIFICIAL_CELL: IntFire1, NetStim written as .mod files):
    a gid's cell_description made by hb_model_create_artificial. `mechanism` names it in the
    built-in catalogues or those loaded (hb.load_catalogue, a model file's "catalogues"),
    "catalogue::Name" where two have one; `parameters` its RANGE PARAMETERs by name. Its
    synapse 0 receives connections; its net_events are the gid's spikes."""

    __slots__ = ()


def artificial_cell(mechanism, **parameters):
    """A gid's cell_description for an artificial cell: artificial_cell("LeakyFire", tau=10)."""
    if not isinstance(mechanism, str):
        raise TypeError(f"artificial_cell: mechanism {mechanism!r}; expected a name (a str)")
    return ArtificialCell(mechanism, dict(parameters))


class _Schedule:
    def __init__(self, times=None, start=None, dt=None, stop=None, freq=None, seed=None):
        self._times, self.start, self.dt, self.stop = times, start, dt, stop
        self.freq, self.seed = freq, seed

    def times(self, t_stop, gid=0):
        """The event times [ms] before `t_stop` (and before the schedule's own stop); a
        Poisson schedule's are drawn from a stream keyed by (seed, gid)."""
        if self._times is not None:
            t = np.asarray(self._times, dtype=np.float64).ravel()
            return t[t < t_stop]
        stop = t_stop if self.stop is None else min(self.stop, t_stop)
        if self.freq is not None:
            rng = np.random.default_rng([int(self.seed), int(gid)])
            out, t = [], self.start
            while True:  # in blocks of about the expected count
                count = max(16, int(self.freq * (stop - t) * 1.2) + 16)
                block = t + np.cumsum(rng.exponential(1.0 / self.freq, count))
                out.append(block[block < stop])
                if block[-1] >= stop:
                    return np.concatenate(out)
                t = block[-1]
        n = max(0, int(np.ceil((stop - self.start) / self.dt - 1e-9)))
        t = self.start + self.dt * np.arange(n, dtype=np.float64)
        return t[t < stop]


def regular_schedule(tstart, dt, tstop=None):
    """Events at tstart, tstart + dt, ... before tstop (None: the run's t_stop) [ms]."""
    for name, value in (("tstart", tstart), ("dt", dt)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"regular_schedule: {name} = {value!r}; expected a time [ms]")
    if not (np.isfinite(tstart) and tstart >= 0):
        raise ValueError(f"regular_schedule: tstart = {tstart!r}; expected a time [ms] >= 0")
    if not (np.isfinite(dt) and dt > 0):
        raise ValueError(f"regular_schedule: dt = {dt!r}; expected an interval [ms] > 0")
    return _Schedule(start=float(tstart), dt=float(dt),
                     stop=None if tstop is None else float(tstop))


def poisson_schedule(tstart, freq, seed=0, tstop=None):
    """Events of a Poisson process of rate `freq` [kHz: events per ms] from tstart to tstop
    (None: the run's t_stop) [ms], as Arbor's: the intervals drawn from numpy's generator keyed
    by (seed, gid), so each cell's are its own and the same on any rank count."""
    for name, value in (("tstart", tstart), ("freq", freq)):
        if isinstance(value, bool) or not isinstance(value, numbers.Real):
            raise TypeError(f"poisson_schedule: {name} = {value!r}; expected a number")
    if not (np.isfinite(tstart) and tstart >= 0):
        raise ValueError(f"poisson_schedule: tstart = {tstart!r}; expected a time [ms] >= 0")
    if not (np.isfinite(freq) and freq > 0):
        raise ValueError(f"poisson_schedule: freq = {freq!r}; expected a rate [kHz] > 0")
    return _Schedule(start=float(tstart), freq=float(freq), seed=int(seed),
                     stop=None if tstop is None else float(tstop))


def explicit_schedule(times):
    """Events at the given times [ms] (a list or numpy array)."""
    return _Schedule(times=np.array(times, dtype=np.float64))


EventGenerator = collections.namedtuple("EventGenerator", "synapse weight schedule")
EventGenerator.__doc__ = ("Events on a cell's synapse `synapse` of `weight` [uS] at the "
                          "schedule's times, with no spike behind them (Arbor's event_generator).")


def event_generator(synapse, weight, schedule):
    """Events on synapse `synapse` (an index) of `weight` [uS] at `schedule`'s times."""
    return EventGenerator(synapse, weight, schedule)


Probe = collections.namedtuple("Probe", "variable where")
Probe.__doc__ = ("A value a Network records (docs/network.md, section 8): `variable` \"v\", "
                 "\"hh.m\", \"pas.i\", \"syn[0].g\", ... at `where` (\"soma\", "
                 "{\"section\": i, \"x\": x}, {\"node\": n}).")


def probe(variable="v", where="soma"):
    return Probe(variable, where)


# ---------------------------------------------------------------------------------------------
# Cells


_REGIONS = {"soma": 1, "axon": 2, "dend": 3, "basal": 3, "apical": 4}


def _region_code(region):
    if isinstance(region, str) and region in _REGIONS:
        return _REGIONS[region]
    if isinstance(region, numbers.Integral) and not isinstance(region, bool) \
            and 0 <= region < 20:
        return int(region)
    raise ValueError(f"region {region!r}: expected \"soma\", \"axon\", \"dend\", \"basal\", "
                     "\"apical\" or an SWC type 0..19")


class Section:
    """One unbranched cable of a cell built from sections: `name`, `length` and `diam` [um],
    `parent` (a section's name or index; None for the first, the root), attached at the
    parent's end (`parent_x` 1, or 0 on the root), `region` ("soma", "axon", "dend", "apical"
    or an SWC type code; default "soma" for the root, else "dend"), and optionally `nseg`
    (compartments; given per region, as NEURON models set nseg, so sections of a region must
    agree)."""

    def __init__(self, name, length, diam, parent=None, parent_x=1.0, region=None, nseg=None):
        self.name, self.length, self.diam = str(name), float(length), float(diam)
        self.parent, self.parent_x, self.region, self.nseg = parent, float(parent_x), region, nseg

    def __repr__(self):
        return (f"Section({self.name!r}, length={self.length}, diam={self.diam}, "
                f"parent={self.parent!r}, region={self.region!r})")


class Cell:
    """A cell built from Python: its geometry from sections (`Cell.from_sections`) or from SWC
    point arrays (`Cell.from_points`, no file), or a model file's SWC path (`Cell.from_swc`);
    then mechanisms by region or section, synapses, probes and stimuli. It describes itself
    as a model file's "cells" entry (`description()`, docs/model.md), which the library builds
    as it builds the file's, so a Cell and the equivalent JSON cell give the same bits.

        cell = hb.Cell.from_sections([hb.Section("soma", 12.6157, 12.6157),
                                      hb.Section("dend", 200, 1, parent="soma", nseg=11)])
        cell.insert("hh", region="soma").insert("pas", section="dend", g=0.001, e=-65)
        syn = cell.add_synapse({"section": "dend", "x": 0.5}, "expsyn", tau=2)
        cell.add_detector("soma", threshold=-10)
    """

    def __init__(self):
        self._geometry = {}
        self._sections = []     # Section objects (from_sections)
        self._points = None     # SWC text (from_points)
        self._swc_options = {}
        self._data = {}         # the rest of the description
        self._morph = None      # (section rule, the morphology built from points)
        self.version = 0        # bumped by every change: a recipe's cells cache by it

    # -- geometry
    @classmethod
    def from_sections(cls, sections):
        """A cell of Section objects (or dicts of their arguments), the root first, each
        section's parent before it."""
        cell = cls()
        specs, names, regions = [], [], {}
        for i, s in enumerate(sections):
            s = s if isinstance(s, Section) else Section(**s)
            if s.name in names:
                raise ValueError(f"section {i} ({s.name!r}): the name is taken by section "
                                 f"{names.index(s.name)}")
            region = s.region if s.region is not None else ("soma" if i == 0 else "dend")
            spec = {"name": s.name, "length": s.length, "diam": s.diam, "type": region}
            if i == 0:
                if s.parent is not None:
                    raise ValueError(f"section 0 ({s.name!r}): the root has no parent; "
                                     f"found {s.parent!r}")
                spec["parent"] = None
            else:
                parent = s.parent if s.parent is not None else 0
                if isinstance(parent, Section):
                    parent = parent.name
                if isinstance(parent, str) and parent not in names:
                    raise ValueError(f"section {i} ({s.name!r}): parent {parent!r} is not an "
                                     f"earlier section; expected one of {names}")
                spec["parent"] = parent
                spec["parent_x"] = s.parent_x
            if s.nseg is not None:
                code = _region_code(region)
                if regions.get(code, s.nseg) != s.nseg:
                    raise ValueError(f"section {i} ({s.name!r}): nseg {s.nseg}, but its region "
                                     f"{region!r} has nseg {regions[code]}; nseg is per region: "
                                     "give the section a region of its own (5..19)")
                regions[code] = s.nseg
            names.append(s.name)
            specs.append(spec)
            cell._sections.append((s.name, _region_code(region)))
        if not specs:
            raise ValueError("Cell.from_sections: no sections")
        cell._geometry = {"sections": specs}
        for code, nseg in regions.items():
            cell.set_region(code, nseg=nseg)
        return cell

    @classmethod
    def from_points(cls, points=None, *, ids=None, types=None, x=None, y=None, z=None,
                    radius=None, parents=None, units="um", section_rule=None,
                    zero_radius="repair", name="points"):
        """A cell from SWC samples held in numpy arrays, as an SWC file's columns: `points` an
        N x 7 array (id, type, x, y, z, radius, parent; parent -1 for the root), or the
        columns as keywords. Read as the model file reads an SWC file (`units`,
        `section_rule` "hinesbatch" or "import3d" (default: "import3d" under the NEURON
        scheme, the model file's default), `zero_radius`), exactly (17 digits a number)."""
        if points is not None:
            arr = np.asarray(points, dtype=np.float64)
            if arr.ndim != 2 or arr.shape[1] != 7:
                raise ValueError(f"Cell.from_points: points of shape {arr.shape}; expected "
                                 "N x 7 (id, type, x, y, z, radius, parent)")
            cols = [arr[:, k] for k in range(7)]
        else:
            cols = [ids, types, x, y, z, radius, parents]
            missing = [n for n, c in zip(("ids", "types", "x", "y", "z", "radius", "parents"),
                                         cols) if c is None]
            if missing:
                raise TypeError(f"Cell.from_points: give points or every column; missing "
                                f"{', '.join(missing)}")
            cols = [np.asarray(c, dtype=np.float64).ravel() for c in cols]
            if len({len(c) for c in cols}) != 1:
                raise ValueError("Cell.from_points: the columns differ in length: "
                                 f"{[len(c) for c in cols]}")
        if len(cols[0]) == 0:
            raise ValueError("Cell.from_points: no points")
        for k, label in ((0, "ids"), (1, "types"), (6, "parents")):
            c = cols[k]
            bad = np.flatnonzero(~np.isfinite(c) | (c != np.round(c)))
            if len(bad):
                raise ValueError(f"Cell.from_points: {label}[{bad[0]}] = {c[bad[0]]!r}; "
                                 "expected a whole number")
        for k, label in ((2, "x"), (3, "y"), (4, "z"), (5, "radius")):
            bad = np.flatnonzero(~np.isfinite(cols[k]))
            if len(bad):
                raise ValueError(f"Cell.from_points: {label}[{bad[0]}] = {cols[k][bad[0]]!r}; "
                                 "expected a finite number")
        out = io.StringIO()
        ints = [c.astype(np.int64) for c in (cols[0], cols[1], cols[6])]
        for i in range(len(cols[0])):
            out.write(f"{ints[0][i]} {ints[1][i]} {cols[2][i]!r} {cols[3][i]!r} "
                      f"{cols[4][i]!r} {cols[5][i]!r} {ints[2][i]}\n")
        cell = cls()
        cell._points = out.getvalue()
        cell._swc_options = {"units": units, "section_rule": section_rule,
                             "zero_radius": zero_radius, "name": name}
        return cell

    @classmethod
    def from_swc(cls, path, units=None, section_rule=None, zero_radius=None):
        """A cell on an SWC file (the model file's "morphology"; relative to the working
        directory)."""
        cell = cls()
        cell._geometry = {"morphology": os.path.abspath(os.fspath(path))}
        for key, value in (("units", units), ("section_rule", section_rule),
                           ("zero_radius", zero_radius)):
            if value is not None:
                cell._geometry[key] = value
        return cell

    # -- properties
    def discretize(self, policy=None, nseg=None, d_lambda=None, frequency=None,
                   max_length=None, scheme=None):
        """The compartments (the model file's "discretization"): `nseg` a section (policy
        "fixed", the default with nseg 1), `d_lambda` (policy "d-lambda", at `frequency`
        [Hz]), `max_length` [um] (policy "max-length") or "per-segment"; scheme "neuron"
        (default) or "vertex". Returns the cell."""
        self.version += 1
        d = self._data.setdefault("discretization", {})
        if policy is None:
            policy = ("fixed" if nseg is not None else "d-lambda" if d_lambda is not None
                      else "max-length" if max_length is not None else None)
        for key, value in (("policy", policy), ("nseg", nseg), ("d_lambda", d_lambda),
                           ("frequency", frequency), ("max_length", max_length),
                           ("scheme", scheme)):
            if value is not None:
                d[key] = value
        return self

    def set(self, Ra=None, cm=None):  # noqa: N803 (NEURON's names)
        """The whole cell's axial resistivity Ra [ohm cm] and capacitance cm [uF/cm^2]."""
        self.version += 1
        if Ra is not None:
            self._data["Ra"] = float(Ra)
        if cm is not None:
            self._data["cm"] = float(cm)
        return self

    def set_region(self, region, Ra=None, cm=None, nseg=None):  # noqa: N803
        """A region's own Ra [ohm cm], cm [uF/cm^2] and nseg (the model file's "regions")."""
        self.version += 1
        entry = {"region": region}
        for key, value in (("Ra", Ra), ("cm", cm), ("nseg", nseg)):
            if value is not None:
                entry[key] = value
        self._data.setdefault("regions", []).append(entry)
        return self

    def section_index(self, name):
        """The morphology's index of section `name` of a cell built from sections (what a
        network probe's {"section": INDEX} names)."""
        if not self._sections:
            raise KeyError(f"section {name!r}: only a cell built from sections names them")
        if getattr(self, "_section_map", None) is None:
            from . import _check  # noqa: PLC0415
            lib = _ffi.load()
            specs = self._geometry["sections"]
            names = [s["name"] for s in specs]
            arr = ffi.new("hb_section_spec_t[]", len(specs))
            keep = []
            for i, (s, (_, code)) in enumerate(zip(specs, self._sections)):
                keep.append(ffi.new("char[]", s["name"].encode()))
                parent = s.get("parent")
                arr[i].name, arr[i].swc_type = keep[-1], code
                arr[i].parent = -1 if parent is None else (
                    names.index(parent) if isinstance(parent, str) else int(parent))
                arr[i].parent_x, arr[i].length_um, arr[i].diam_um = \
                    s.get("parent_x", 1.0), s["length"], s["diam"]
            morph, out = ffi.new("hb_morph_t **"), ffi.new("int[]", len(specs))
            _check(lib.hb_model_build_sections(arr, len(specs), b"sections", morph, out))
            lib.hb_morph_destroy(morph[0])
            self._section_map = dict(zip(names, out))
        if name not in self._section_map:
            raise KeyError(f"section {name!r}: expected one of {list(self._section_map)}")
        return self._section_map[name]

    def _where(self, region, section):
        if (region is None) == (section is None):
            if region is None:
                return "all"
            raise TypeError("give a region or a section, not both")
        if region is not None:
            return region
        names = [n for n, _ in self._sections]
        if section not in names:
            raise KeyError(f"section {section!r}: expected one of {names}"
                           if names else f"section {section!r}: only a cell built from "
                           "sections names them; give a region")
        code = dict(self._sections)[section]
        shared = [n for n, c in self._sections if c == code and n != section]
        if shared:
            raise ValueError(f"section {section!r} shares its region {code} with {shared}; "
                             "mechanisms go by region: give the section a region of its own "
                             "(Section(..., region=5..19))")
        return code

    def insert(self, mechanism, region=None, section=None, **parameters):
        """Insert a mechanism ("pas": g, e; "hh": gnabar, gkbar, gl, el, ena, ek) in a region
        ("all" when neither is given) or in a section (by name: a section whose region is its
        own). Returns the cell."""
        self.version += 1
        entry = {"name": mechanism, "region": self._where(region, section)}
        entry.update(parameters)
        self._data.setdefault("mechanisms", []).append(entry)
        return self

    def add_synapse(self, where, kind="expsyn", **parameters):
        """A synapse ("expsyn": tau, e; "exp2syn": tau1, tau2, e) at a location ("soma",
        {"section": NAME or INDEX, "x": 0..1}, {"node": N}, {"sample": ID}); returns its index,
        the target that connections and event generators name."""
        self.version += 1
        entry = {"type": kind, "at": where}
        entry.update(parameters)
        synapses = self._data.setdefault("synapses", [])
        synapses.append(entry)
        return len(synapses) - 1

    def add_probe(self, where="soma", name=None, threshold=None):
        """A voltage probe (a Simulation's trace; the first with a `threshold` [mV] is the
        cell's spike detector in a network). Returns the cell."""
        self.version += 1
        entry = {"at": where}
        if name is not None:
            entry["name"] = name
        if threshold is not None:
            entry["spike_threshold"] = float(threshold)
        self._data.setdefault("probes", []).append(entry)
        return self

    def add_detector(self, where="soma", threshold=-10.0, name="detector"):
        """The cell's spike detector (NEURON's NetCon threshold [mV] at `where`)."""
        return self.add_probe(where, name, threshold)

    def add_iclamp(self, where, delay, duration, amplitude):
        """NEURON's IClamp: `amplitude` [nA] from `delay` [ms] for `duration` [ms]."""
        self.version += 1
        self._data.setdefault("stimuli", []).append(
            {"type": "iclamp", "at": where, "del": delay, "dur": duration, "amp": amplitude})
        return self

    def description(self):
        """The model file's "cells" entry for this cell (a dict; without the geometry for a
        cell of points, whose morphology is built from the arrays)."""
        out = copy.deepcopy(self._geometry)
        out.update(copy.deepcopy(self._data))
        return out

    def _swc_morphology(self):
        """The morphology of a cell of points, built once (as the model file reads SWC)."""
        from . import Morphology  # noqa: PLC0415 (the package imports this module)
        scheme = self._data.get("discretization", {}).get("scheme", "neuron")
        opts = self._swc_options
        rule = opts["section_rule"] or ("import3d" if scheme == "neuron" else "hinesbatch")
        if self._morph is None or self._morph[0] != rule:
            self._morph = (rule, Morphology.from_text(
                self._points, opts["name"], units=opts["units"], sections=rule,
                zero_radius=opts["zero_radius"]))
        return self._morph[1]

    def __repr__(self):
        kind = ("points" if self._points is not None else
                "sections" if self._sections else "swc" if self._geometry else "no geometry")
        return f"<hinesbatch.Cell ({kind})>"


# ---------------------------------------------------------------------------------------------
# Recipes


class Recipe:
    """A network asked gid by gid, as Arbor's arbor.recipe: subclass it and define
    num_cells() and cell_description(gid) (a Cell, a dict as a model file's "cells" entry,
    artificial_cell(...) or spike_source(...)); optionally connections_on(gid) (a list of connection(source, synapse,
    weight, delay)), connection_arrays() (every connection at once as numpy arrays: the fast
    path), event_generators(gid) (event_generator(synapse, weight, schedule)) and
    probes(gid) (probe(variable, where), recorded by Network). Cells are gids 0..num_cells()-1
    in that order; the library asks each rank for its own cells only."""

    def num_cells(self):
        raise NotImplementedError("a Recipe defines num_cells()")

    def cell_description(self, gid):
        raise NotImplementedError("a Recipe defines cell_description(gid)")

    def connections_on(self, gid):
        return []

    def connection_arrays(self):
        """None, or the connections as arrays: a dict (or tuple in this order) of `source`,
        `target` (gids), `synapse` (the target's synapse index), `weight` [uS], `delay` [ms];
        scalars are broadcast."""
        return None

    def event_generators(self, gid):
        return []

    def probes(self, gid):
        return []


def _overrides(recipe, name):
    return getattr(type(recipe), name, None) is not getattr(Recipe, name)


def _array(name, value, count, dtype):
    arr = np.asarray(value)
    if arr.ndim == 0:
        arr = np.broadcast_to(arr, (count,))
    if arr.ndim != 1 or len(arr) != count:
        raise ValueError(f"connection arrays: {name} has shape {arr.shape}; expected "
                         f"({count},) as source")
    if np.dtype(dtype).kind in "iu":
        if arr.dtype.kind == "f":
            bad = np.flatnonzero(~np.isfinite(arr) | (arr != np.round(arr)))
            if len(bad):
                raise ValueError(f"connection arrays: {name}[{bad[0]}] = {arr[bad[0]]!r}; "
                                 "expected a whole number")
        elif arr.dtype.kind not in "iub":
            raise TypeError(f"connection arrays: {name} is {arr.dtype}; expected integers")
        info = np.iinfo(dtype)
        if len(arr):
            lo, hi = int(arr.min()), int(arr.max())
            if lo < info.min or hi > info.max:
                k = int(np.argmax((arr < info.min) | (arr > info.max)))
                raise ValueError(f"connection arrays: {name}[{k}] = {arr[k]!r}; expected "
                                 f"{info.min}..{info.max}")
    return np.ascontiguousarray(arr, dtype=dtype)


class Connections:
    """Connections as arrays, checked and grouped by target once by the library
    (hb_connections_create): `source`, `target`, `synapse`, `weight` [uS], `delay` [ms]."""

    def __init__(self, n_cells, source, target, synapse, weight, delay):
        lib = _ffi.load()
        count = len(np.atleast_1d(source))
        self.source = _array("source", source, count, np.uint32)
        self.target = _array("target", target, count, np.uint32)
        self.synapse = _array("synapse", synapse, count, np.intc)
        self.weight = _array("weight", weight, count, np.float64)
        self.delay = _array("delay", delay, count, np.float64)
        out = ffi.new("hb_connections_t **")
        p = (ffi.cast("const uint32_t *", ffi.from_buffer(self.source)),
             ffi.cast("const uint32_t *", ffi.from_buffer(self.target)),
             ffi.cast("const int *", ffi.from_buffer(self.synapse)),
             ffi.cast("const double *", ffi.from_buffer(self.weight)),
             ffi.cast("const double *", ffi.from_buffer(self.delay)))
        from . import _check  # noqa: PLC0415
        _check(lib.hb_connections_create(int(n_cells), count, *p, out))
        self._ptr = ffi.gc(out[0], lib.hb_connections_destroy)
        self.count = count

    @classmethod
    def of(cls, n_cells, arrays):
        if isinstance(arrays, Connections):
            return arrays
        names = ("source", "target", "synapse", "weight", "delay")
        if isinstance(arrays, dict):
            unknown = set(arrays) - set(names)
            missing = [n for n in names if n not in arrays]
            if unknown or missing:
                raise ValueError(f"connection arrays: keys {sorted(arrays)}; expected "
                                 f"{', '.join(names)}")
            return cls(n_cells, *(arrays[n] for n in names))
        if isinstance(arrays, (tuple, list)) and len(arrays) == 5:
            return cls(n_cells, *arrays)
        raise TypeError("connection arrays: expected a dict or a 5-tuple of source, target, "
                        "synapse, weight, delay")


class _Built:
    """A recipe's cells as the library takes them: each gid's model (models shared by gids
    with the same description) or spike source, built once and kept alive."""

    def __init__(self, recipe, t_stop, base_dir):
        self.recipe = recipe
        n = recipe.num_cells()
        if isinstance(n, bool) or not isinstance(n, numbers.Integral) or not 0 < n < 2**32:
            raise ValueError(f"recipe.num_cells() = {n!r}; expected a whole number 1..2^32-1")
        self.n_cells = int(n)
        self.t_stop = t_stop
        self.base_dir = base_dir
        self.by_text = {}   # description's JSON (and morphology) -> model
        self.models = {}    # gid -> model pointer
        self.sources = {}   # gid -> SpikeSource
        self.error = None   # the first exception a callback raised (re-raised by the caller)
        self._conn_gid, self._conn_list = None, None
        self._events = {}

    def resolve(self, gid):
        """gid's model pointer (cable) or None (a spike source)."""
        if gid in self.models:
            return self.models[gid]
        if gid in self.sources:
            return None
        desc = self.recipe.cell_description(gid)
        if isinstance(desc, SpikeSource):
            self.sources[gid] = desc
            return None
        self.models[gid] = model = self.model(desc, f"cell_description({gid})")
        return model

    def model(self, desc, name):
        from . import _check  # noqa: PLC0415
        lib = _ffi.load()
        morph = None
        if isinstance(desc, Cell):  # the same cell unchanged: its model, without the JSON
            hit = self.by_text.get((id(desc), desc.version))
            if hit is not None:
                return hit[0]
            if desc._points is not None:
                morph = desc._swc_morphology()
            data = desc.description()
        elif isinstance(desc, dict):
            data = desc
        elif isinstance(desc, ArtificialCell):
            return self.artificial(desc, name)
        else:
            raise TypeError(f"{name}: {type(desc).__name__}; expected a Cell, a dict (a model "
                            "file's cell), artificial_cell(...) or spike_source(...)")
        from . import _plain  # noqa: PLC0415
        text = json.dumps(data, allow_nan=False, default=_plain)
        key = (text, id(morph))
        hit = self.by_text.get(key)
        if hit is not None:
            return hit[0]
        out = ffi.new("hb_model_t **")
        raw = text.encode()
        _check(lib.hb_model_parse_json(raw, len(raw), name.encode(), self.base_dir.encode(),
                                       morph._ptr if morph is not None else ffi.NULL, out))
        model = ffi.gc(out[0], lib.hb_model_destroy)
        self.by_text[key] = (model, morph)  # the morphology outlives the model
        if isinstance(desc, Cell):  # kept alive with it, so that its id stays its own
            self.by_text[(id(desc), desc.version)] = (model, morph, desc)
        return model

    def artificial(self, desc, name):
        """An artificial cell's model (hb_model_create_artificial), once per distinct one."""
        from . import HinesbatchError, _text  # noqa: PLC0415
        lib = _ffi.load()
        items = sorted(desc.parameters.items())
        key = ("artificial", desc.mechanism, tuple(items))
        hit = self.by_text.get(key)
        if hit is not None:
            return hit[0]
        for k, v in items:
            if not isinstance(k, str) or isinstance(v, bool) or not isinstance(v, numbers.Real):
                raise TypeError(f"{name}: {desc.mechanism}'s {k!r} = {v!r}; expected a number")
        keys = [ffi.new("char[]", k.encode()) for k, _ in items]
        out = ffi.new("hb_model_t **")
        status = lib.hb_model_create_artificial(
            desc.mechanism.encode(), len(items), ffi.new("const char *[]", keys) if keys
            else ffi.NULL, ffi.new("double[]", [float(v) for _, v in items]) if items
            else ffi.NULL, out)
        if status != 0:  # the message with the gid that asked
            raise HinesbatchError(_text(lib.hb_status_name(status)),
                                  f"{name}: {_text(lib.hb_last_error())}")
        model = ffi.gc(out[0], lib.hb_model_destroy)
        self.by_text[key] = (model,)
        return model

    def connections(self, gid):
        if self._conn_gid != gid:
            conns = self.recipe.connections_on(gid)
            self._conn_list = [c if isinstance(c, Connection) else Connection(*c)
                               for c in conns]
            self._conn_gid = gid
        return self._conn_list

    def events(self, gid):
        ev = self._events.get(gid)
        if ev is None:
            items = []
            for g in self.recipe.event_generators(gid):
                g = g if isinstance(g, EventGenerator) else EventGenerator(*g)
                if not isinstance(g.schedule, _Schedule):
                    raise TypeError(f"event_generators({gid}): schedule {g.schedule!r}; "
                                    "expected regular_schedule, explicit_schedule or "
                                    "poisson_schedule(...)")
                for t in g.schedule.times(self.t_stop, gid):
                    items.append((int(g.synapse), float(t), float(g.weight)))
            ev = self._events[gid] = items
        return ev


def make_recipe(built, connections, keep):
    """The hb_recipe_t of a _Built recipe: Python callbacks (kept alive in `keep`) that record
    the first exception in built.error and fail; the connections straight from the table's C
    function when the recipe has no connections_on of its own."""
    lib = _ffi.load()
    r = ffi.new("hb_recipe_t *")
    r.n_cells = built.n_cells
    fail = lib.HB_ERR_INVALID_VALUE

    def guarded(default):
        def wrap(fn):
            def call(*args):
                if built.error is not None:
                    return default
                try:
                    return fn(*args)
                except BaseException as err:  # noqa: BLE001 (re-raised by the caller)
                    built.error = err
                    return default
            return call
        return wrap

    @guarded(lib.HB_CELL_CABLE)
    def kind(user, gid):
        return lib.HB_CELL_CABLE if built.resolve(gid) is not None else lib.HB_CELL_SOURCE

    @guarded(ffi.NULL)
    def cable(user, gid):
        model = built.resolve(gid)
        return model if model is not None else ffi.NULL

    @guarded(fail)
    def source(user, gid, out):
        s = built.sources[gid]
        out.start_ms, out.interval_ms = float(s.start), float(s.interval)
        out.number, out.noise, out.seed = int(s.number), float(s.noise), int(s.seed)
        return 0

    table = connections._ptr if connections is not None else ffi.NULL

    @guarded(fail)
    def connections_on(user, gid, out, count):
        n_table = ffi.new("int *")
        if table != ffi.NULL:
            n_table[0] = count[0]
            status = lib.hb_connections_on(table, gid, out, n_table)
            if status != 0:
                return status
        conns = built.connections(gid)
        if out != ffi.NULL:
            for k, c in enumerate(conns):
                e = out[n_table[0] + k]
                e.source, e.synapse = int(c.source), int(c.synapse)
                e.weight_us, e.delay_ms = float(c.weight), float(c.delay)
        count[0] = n_table[0] + len(conns)
        return 0

    @guarded(fail)
    def events_on(user, gid, out, count):
        ev = built.events(gid)
        if out != ffi.NULL:
            for k, (syn, t, w) in enumerate(ev[:count[0]]):
                out[k].synapse, out[k].time_ms, out[k].weight_us = syn, t, w
        count[0] = len(ev)
        return 0

    callbacks = [ffi.callback("hb_cell_kind_t(void *, uint32_t)", kind),
                 ffi.callback("hb_model_t *(void *, uint32_t)", cable),
                 ffi.callback("hb_status_t(void *, uint32_t, hb_spike_source_t *)", source)]
    r.kind, r.cable, r.source = callbacks
    if table != ffi.NULL and not _overrides(built.recipe, "connections_on"):
        r.user = table  # no Python call per cell
        r.connections_on = lib.hb_connections_on  # ABI mode: a function pointer
    else:
        callbacks.append(ffi.callback(
            "hb_status_t(void *, uint32_t, hb_connection_t *, int *)", connections_on))
        r.connections_on = callbacks[-1]
    if _overrides(built.recipe, "event_generators"):
        callbacks.append(ffi.callback(
            "hb_status_t(void *, uint32_t, hb_event_t *, int *)", events_on))
        r.events_on = callbacks[-1]
    keep.extend(callbacks)
    keep.append(r)
    return r
