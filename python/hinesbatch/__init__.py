"""hinesbatch for Python (docs/python.md): morphologies, cell and network models from dicts or
JSON files or built from Python (Recipe, Cell: python/hinesbatch/recipe.py), simulations on any backend, spikes as numpy structured arrays (gid, time) and
traces as numpy arrays of their own (copies: an array kept or shown never holds a run up).

    import hinesbatch as hb
    cell = hb.Morphology("cell.swc")
    print(cell.points, cell.sections, cell.area, cell.discretize().compartments)
    sim = hb.run("examples/ball_and_stick.json", backend="omp")
    t, v = sim.sample_times, sim.trace("soma")
    net = hb.run("examples/ring_network.json")
    print(net.spikes[:5])                 # [(gid, time), ...] by time, then gid
"""

import contextlib
import json
import math
import os
import re
import signal
import numbers
import threading

import numpy as np

from . import _ffi
from . import recipe as _recipe
from ._ffi import ffi
from .recipe import (ArtificialCell, Cell, Connections, Recipe, Section, artificial_cell,
                     connection, event_generator, explicit_schedule, poisson_schedule, probe,
                     regular_schedule, spike_source)

__version__ = _ffi.VERSION
__all__ = [
    "HinesbatchError", "Interrupted", "Morphology", "Cable", "Model", "Simulation", "Network",
    "Traces", "run", "Recipe", "Cell", "Section", "Connections", "connection",
    "event_generator", "regular_schedule", "explicit_schedule", "poisson_schedule",
    "spike_source", "artificial_cell", "ArtificialCell", "probe", "load_catalogue",
    "load_library", "library_path", "backends", "SPIKE_DTYPE", "__version__",
]

# A spike: the source cell's gid (a cell simulation: the cell's index) and its time [ms].
SPIKE_DTYPE = np.dtype([("gid", "<u4"), ("time", "<f8")])
# hb_spike_t as it lies in the library's memory (16 bytes).
_C_SPIKE_DTYPE = np.dtype({"names": ["time", "gid"], "formats": ["<f8", "<u4"],
                           "offsets": [0, 8], "itemsize": 16})

_BACKENDS = {"seq": 0, "omp": 1, "cuda": 2, "best": 3}
_COMMS = {"serial": 0, "mpi": 1, "best": 2}
_POLICIES = {"fixed": 0, "max-length": 1, "d-lambda": 2, "per-segment": 3, "odd-length": 4}
_SCHEMES = {"vertex": 0, "neuron": 1}
_UNITS = {"um": 0, "nm": 1}
_SECTIONS = {"hinesbatch": 0, "import3d": 1}
_ZERO_RADIUS = {"repair": 0, "keep": 1}
_POINT_PRECISION = {"double": 0, "float": 1}


class Interrupted(KeyboardInterrupt):
    """Ctrl-C (SIGINT) stopped a network's run() at the end of a chunk: `result` is the
    network, which keeps what was computed (its `time`, `spikes` and `stats` up to there)."""

    def __init__(self, result):
        super().__init__(f"stopped by SIGINT at t = {result.time} ms of {result.t_stop} ms; "
                         "the exception's `result` keeps what was computed")
        self.result = result


@contextlib.contextmanager
def _sigint_caught(caught):
    """SIGINT appends to `caught` instead of raising, in the main thread (elsewhere Python
    cannot take the signal, and it stays as it was)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


class HinesbatchError(RuntimeError):
    """A failing library call: `status` is its status name (e.g. "HB_ERR_PARSE"), the message
    the library's (file, line or JSON key path, what was wrong and what was expected)."""

    def __init__(self, status, message):
        super().__init__(message)
        self.status = status


def _lib():
    return _ffi.load()


def _text(cstring):
    return ffi.string(cstring).decode("utf-8", "replace") if cstring != ffi.NULL else ""


def _check(status):
    if status != 0:
        lib = _lib()
        message = _text(lib.hb_last_error()) or _text(lib.hb_status_string(status))
        raise HinesbatchError(_text(lib.hb_status_name(status)), message)


def _choice(what, value, choices):
    if value not in choices:
        raise ValueError(f"{what} {value!r}: expected one of {', '.join(map(repr, choices))}")
    return choices[value]


def load_library(path=None):
    """Load the shared library from `path` (before any other call), or find it: the library an
    installed copy of this package belongs to, else libhinesbatch.so.0 on the loader's path.
    Returns the path loaded."""
    _ffi.load(path)
    return _ffi.path()


def load_catalogue(path):
    """Loads a user catalogue (a .so of `hinesbatch build-catalogue MODDIR -o NAME.so`) into
    the process for good (hb_catalogue_open): recipes' artificial_cell(...) then find its
    mechanisms by name. Returns the catalogue's name ("NAME" of "NAME::Mech")."""
    name = ffi.new("const char **")
    _check(_lib().hb_catalogue_open(os.fsencode(path), name))
    return _text(name[0])


def library_path():
    """The shared library in use (loaded on first use)."""
    return _ffi.path()


def backends():
    """The backends this build and machine offer, of "seq", "omp", "cuda"."""
    lib = _lib()
    return [name for name, kind in _BACKENDS.items()
            if name != "best" and lib.hb_backend_available(kind)]


class _Memory:
    """Memory of a library object seen by numpy: the array's base, keeping the owner alive."""

    def __init__(self, owner, pointer, count, dtype):
        self.owner = owner
        self.__array_interface__ = {
            "shape": (count,), "typestr": dtype.str, "descr": dtype.descr, "version": 3,
            "data": (int(ffi.cast("uintptr_t", pointer)), True),  # read-only
        }


def _view(owner, pointer, count, dtype=np.dtype("<f8")):
    """A read-only array over `count` items at `pointer`, no copy (memory that never moves
    while `owner` lives, or copied at once)."""
    if count == 0 or pointer == ffi.NULL:
        return np.empty(0, dtype)
    return np.asarray(_Memory(owner, pointer, count, dtype))


def _frozen_copy(owner, pointer, count, dtype=np.dtype("<f8")):
    """A read-only array of its own holding `count` items at `pointer`: stepping on, which may
    move or grow the library's record, never changes it nor waits for it."""
    out = np.array(_view(owner, pointer, count, dtype))
    out.flags.writeable = False
    return out


def _target_ms(t_ms):
    """advance's target time [ms] as a float: a number >= 0 (inf: to t_stop)."""
    if isinstance(t_ms, bool) or not isinstance(t_ms, numbers.Real):
        raise TypeError(f"advance: t_ms = {t_ms!r}; expected a time [ms], a number >= 0")
    t = float(t_ms)
    if not t >= 0.0:  # NaN too
        raise ValueError(f"advance: t_ms = {t!r}; expected a time [ms] >= 0 "
                         "(a time past t_stop, inf too, advances to t_stop)")
    return t


def _sorted_spikes(gids, times):
    out = np.empty(len(times), SPIKE_DTYPE)
    out["gid"] = gids
    out["time"] = times
    return out[np.lexsort((out["gid"], out["time"]))]


# ---------------------------------------------------------------------------------------------
# Morphologies and compartments


class Cable:
    """The compartments of a morphology under one rule (hb_cable_t): `rows` matrix rows,
    `compartments` of them with membrane, `parent` (Hines order, parent[i] < i)."""

    def __init__(self, morphology, policy="d-lambda", nseg=None, max_length=None, d_lambda=None,
                 frequency=None, scheme="vertex", ra=None, cm=None, max_rows=None):
        lib = _lib()
        disc = ffi.new("hb_discretization_t *")
        lib.hb_discretization_default(disc)
        if nseg is not None and policy == "d-lambda":
            policy = "fixed"  # as the CLI's --nseg
        if max_length is not None and policy == "d-lambda":
            policy = "max-length"
        disc.policy = _choice("policy", policy, _POLICIES)
        disc.scheme = _choice("scheme", scheme, _SCHEMES)
        if nseg is not None:
            disc.count = int(nseg)
        if max_rows is not None:
            disc.max_rows = int(max_rows)
        for field, value in (("max_length_um", max_length), ("d_lambda", d_lambda),
                             ("frequency_hz", frequency), ("ra_ohm_cm", ra), ("cm_uf_cm2", cm)):
            if value is not None:
                setattr(disc, field, float(value))
        out = ffi.new("hb_cable_t **")
        _check(lib.hb_cable_create(morphology._ptr, disc, out))
        self._ptr = ffi.gc(out[0], lib.hb_cable_destroy)
        self.morphology = morphology
        self.rows = lib.hb_cable_size(self._ptr)
        self.compartments = lib.hb_cable_compartments(self._ptr)

    @property
    def parent(self):
        """Parent node of each node (-1 for node 0), int32, read-only, no copy."""
        return _view(self, _lib().hb_cable_parent(self._ptr), self.rows, np.dtype("<i4"))

    def __repr__(self):
        return f"<hinesbatch.Cable {self.rows} rows, {self.compartments} compartments>"


class Morphology:
    """An SWC or Neurolucida ASC morphology (hb_morph_t). `Morphology(path, units="um",
    sections="hinesbatch", zero_radius="repair")` reads a file (ASC, by its .asc name or its
    content, as NEURON's Import3d reads it: docs/asc.md), `Morphology.from_text(text, name, ...)`
    SWC text; a bad file raises HinesbatchError naming the file and line. `sections`:
    "hinesbatch" or "import3d" (NEURON's Import3d rules; with discretize(scheme="neuron"),
    NEURON's matrices); `zero_radius`: "repair" or "keep" (NEURON's; scheme "neuron" only), as
    the CLI's options; `point_precision`: "double" or "float" (3-D points as NEURON stores them;
    sections "import3d" only), as a model file's key.
    Attributes: points, sections, terminals, max_branch_order, length [um], area [um^2],
    warnings (usable oddities, one string each)."""

    def __init__(self, path, units="um", sections="hinesbatch", zero_radius="repair",
                 point_precision="double", *, _swc_text=None):
        lib = _lib()
        options = ffi.new("hb_swc_options_t *")
        lib.hb_swc_options_default(options)
        options.units = _choice("units", units, _UNITS)
        options.sections = _choice("sections", sections, _SECTIONS)
        options.keep_zero_radius = _choice("zero_radius", zero_radius, _ZERO_RADIUS)
        options.single_points = _choice("point_precision", point_precision, _POINT_PRECISION)
        out = ffi.new("hb_morph_t **")
        self.name = os.fspath(path)
        if _swc_text is None:
            _check(lib.hb_morph_load(os.fsencode(path), options, out))  # SWC or ASC
        else:
            data = _swc_text.encode() if isinstance(_swc_text, str) else bytes(_swc_text)
            _check(lib.hb_morph_parse_swc(data, len(data), self.name.encode(), options, out))
        self._ptr = ffi.gc(out[0], lib.hb_morph_destroy)
        stats = ffi.new("hb_morph_stats_t *")
        _check(lib.hb_morph_stats(self._ptr, stats))
        self.points = stats.points
        self.sections = stats.sections
        self.terminals = stats.terminals
        self.max_branch_order = stats.max_branch_order
        self.length = stats.length_um
        self.area = stats.area_um2
        self.warnings = [_text(lib.hb_morph_warning(self._ptr, i))
                         for i in range(lib.hb_morph_warning_count(self._ptr))]

    @classmethod
    def from_text(cls, text, name="swc", units="um", sections="hinesbatch",
                  zero_radius="repair", point_precision="double"):
        return cls(name, units, sections, zero_radius, point_precision, _swc_text=text)

    def discretize(self, policy="d-lambda", **options):
        """The compartments under a rule (a Cable): policy "d-lambda" (default), "fixed"
        (nseg=N), "max-length" (max_length=UM), "per-segment" or "odd-length" (1 + 2 int(L /
        (2 max_length)): bmtk's dL rule, BluePyOpt's with max_length 20); d_lambda, frequency [Hz],
        scheme ("vertex" or "neuron"), ra [ohm cm], cm [uF/cm^2], max_rows (the largest cable
        accepted); as `hinesbatch info`."""
        return Cable(self, policy, **options)

    def info(self, **options):
        """What `hinesbatch info --json` prints, as a dict (discretize's options)."""
        cable = self.discretize(**options)
        return {"file": self.name, "points": self.points, "sections": self.sections,
                "terminals": self.terminals, "max_branch_order": self.max_branch_order,
                "length_um": self.length, "area_um2": self.area,
                "compartments": cable.compartments, "rows": cable.rows,
                "warnings": len(self.warnings)}

    def __repr__(self):
        return (f"<hinesbatch.Morphology {self.name!r}: {self.points} points, "
                f"{self.sections} sections>")


# ---------------------------------------------------------------------------------------------
# Models, simulations and networks


class Model:
    """A model file's content (docs/model.md, docs/network.md): options, "cells", and for a
    network "network". From a dict, a JSON file's path or JSON text:

        Model({"t_stop": 50, "cells": [...]})       # paths relative to base_dir (default: .)
        Model("examples/ball_and_stick.json")       # paths relative to the file
        Model.from_json(text, base_dir=".")

    `model.data` is the dict (edit it freely; the library checks it when it runs)."""

    def __init__(self, source, base_dir=None):
        if isinstance(source, Model):
            self.data = json.loads(json.dumps(source.data))
            self.name, self.base_dir = source.name, source.base_dir
        elif isinstance(source, dict):
            self.data = json.loads(json.dumps(source, allow_nan=False, default=_plain))
            self.name = "model"
            self.base_dir = os.path.abspath(base_dir if base_dir is not None else os.curdir)
        elif isinstance(source, (str, os.PathLike)):
            path = os.fspath(source)
            text = _read_model_file(path)
            self.name = path
            self.base_dir = os.path.abspath(
                base_dir if base_dir is not None else os.path.dirname(path) or os.curdir)
            self.data = _loads(text, path)
        else:
            raise TypeError(f"Model({type(source).__name__}): expected a dict, a path or a Model")

    @classmethod
    def from_json(cls, text, base_dir=None, name="model"):
        model = cls({}, base_dir)
        model.data = _loads(text, name)
        model.name = name
        return model

    @property
    def is_network(self):
        """Whether the model has a "network" object (run as a Network, else a Simulation)."""
        return "network" in self.data

    def to_json(self, **overrides):
        """The model as JSON text, with top-level keys replaced (None leaves a key as is)."""
        data = dict(self.data)
        data.update({k: v for k, v in overrides.items() if v is not None})
        return json.dumps(data, allow_nan=False)

    def __repr__(self):
        kind = "network" if self.is_network else "cells"
        return f"<hinesbatch.Model {self.name!r} ({kind})>"


def _read_model_file(path):
    """A model file's text through the library's bounded reader (hb_model_file_read): read
    once, at most HB_MODEL_MAX_BYTES, a directory, a device or a NUL byte refused by name, as
    hinesbatch run refuses them."""
    lib = _lib()
    text, length = ffi.new("char **"), ffi.new("size_t *")
    _check(lib.hb_model_file_read(os.fsencode(path), text, length))
    try:
        data = ffi.unpack(text[0], length[0])
    finally:
        lib.hb_model_text_free(text[0])
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{path}: byte {err.start} is not UTF-8; expected JSON text") from None


def _plain(value):
    """numpy values in a model dict as JSON's (arrays as lists)."""
    if isinstance(value, (np.generic, np.ndarray)):
        return value.tolist()
    raise TypeError(f"a model holds {type(value).__name__} {value!r}, which JSON cannot")


def _loads(text, name):
    """JSON text to a dict; duplicate keys are refused as the library refuses them."""
    def pairs(items):
        out = {}
        for key, value in items:
            if key in out:
                raise ValueError(f"{name}: duplicate key {key!r}")
            out[key] = value
        return out
    try:
        data = json.loads(text, object_pairs_hook=pairs)
    except json.JSONDecodeError as err:
        raise ValueError(f"{name}:{err.lineno}:{err.colno}: {err.msg}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{name}: expected an object at the top, found {type(data).__name__}")
    return data


def _as_model(model):
    return model if isinstance(model, Model) else Model(model)


_METHODS = {"euler": 0, "cn": 1}
_SPIKE_TIMES = {"step": 0, "interpolate": 1}


def _recipe_options(what, backend, t_stop, options, allowed):
    """hb_sim_options_t of a recipe's run: the library's defaults, t_stop [ms] (needed), the
    backend and the keyword options in `allowed` (dt, v_init, celsius, sample_dt [ms, mV,
    degC], method, spike_time, hh_table, threads), checked by the library when it builds."""
    lib = _lib()
    o = ffi.new("hb_sim_options_t *")
    lib.hb_sim_options_default(o)
    if t_stop is None:
        raise TypeError(f"{what}(recipe, ...): t_stop [ms] is needed")
    o.t_stop_ms = float(t_stop)
    if backend is not None:
        o.backend = _choice("backend", backend, _BACKENDS)
    fields = {"dt": "dt_ms", "v_init": "v_init_mv", "celsius": "celsius",
              "sample_dt": "sample_dt_ms"}
    for key, value in options.items():
        if key not in allowed:
            raise TypeError(f"{what}: unknown option {key!r}; expected one of "
                            f"{', '.join(sorted(allowed))}")
        if key in fields:
            setattr(o, fields[key], float(value))
        elif key == "method":
            o.method = _choice("method", value, _METHODS)
        elif key == "spike_time":
            o.spike_time = _choice("spike_time", value, _SPIKE_TIMES)
        elif key == "hh_table":
            o.hh_table = 1 if value else 0
        elif key == "threads":
            o.threads = int(value)
    return o


class _OneCell(_recipe.Recipe):
    """A Cell run alone."""

    def __init__(self, cell):
        self.cell = cell

    def num_cells(self):
        return 1

    def cell_description(self, gid):
        return self.cell


def _recipe_of(model):
    """model as a Recipe when it is one (or a Cell); else None."""
    if isinstance(model, _recipe.Cell):
        return _OneCell(model)
    return model if isinstance(model, _recipe.Recipe) else None


def _reraise(built, status):
    """The exception a recipe's callback raised, else the library's error."""
    if built is not None and built.error is not None:
        err, built.error = built.error, None
        if hasattr(err, "add_note"):
            err.add_note("(raised in a hinesbatch recipe callback)")
        raise err
    _check(status)


class Simulation:
    """Cells (a model without "network") stepped as NEURON does (hb_sim_t). `backend`
    ("seq", "omp", "cuda", "best") and `t_stop` [ms] override the model's.

        sim = Simulation(model).run()
        sim.sample_times, sim.trace("soma"), sim.spikes
    """

    def __init__(self, model, backend=None, t_stop=None, **options):
        lib = _lib()
        recipe = _recipe_of(model)
        self._built = None
        if recipe is not None:
            ptr = self._from_recipe(recipe, backend, t_stop, options)
            self.name = type(recipe).__name__
        else:
            if options:
                raise TypeError(f"Simulation: {', '.join(sorted(options))}: options of a "
                                "recipe's run; a model has its own (backend and t_stop aside)")
            model = _as_model(model)
            if model.is_network:
                raise ValueError(f"{model.name}: a network model (it has \"network\"); use "
                                 "Network")
            if backend is not None:
                _choice("backend", backend, _BACKENDS)
            text = model.to_json(backend=backend, t_stop=t_stop).encode()
            out = ffi.new("hb_sim_t **")
            _check(lib.hb_sim_parse_json(text, len(text), model.name.encode(),
                                         model.base_dir.encode(), out))
            ptr = out[0]
            self.name = model.name
        built = self._built  # a recipe's models outlive the simulation
        self._ptr = ffi.gc(ptr, lambda p: (lib.hb_sim_destroy(p), built))
        self._copies = {}  # read-only copies handed out since the last step, by what they hold
        self.model = model
        options = ffi.new("hb_sim_options_t *")
        _check(lib.hb_sim_options(self._ptr, options))
        self.dt = options.dt_ms
        self.t_stop = options.t_stop_ms
        self.backend = _text(lib.hb_backend_name(options.backend))
        self.cell_count = lib.hb_sim_cell_count(self._ptr)
        self.probe_names = [_text(lib.hb_sim_probe_name(self._ptr, p))
                            for p in range(lib.hb_sim_probe_count(self._ptr))]

    def _from_recipe(self, recipe, backend, t_stop, options):
        """The cells of a recipe without connections, events or spike sources (those need a
        Network), gid k the simulation's cell k."""
        lib = _lib()
        opt = _recipe_options("Simulation", backend, t_stop, options,
                              {"dt", "v_init", "celsius", "sample_dt", "method", "spike_time",
                               "hh_table", "threads"})
        built = self._built = _recipe._Built(recipe, opt.t_stop_ms, os.path.abspath(os.curdir))
        if recipe.connection_arrays() is not None:
            raise ValueError("Simulation: the recipe has connection arrays; a Simulation's "
                             "cells are not connected: use Network")
        cells = ffi.new("hb_model_t *[]", built.n_cells)
        for gid in range(built.n_cells):
            for what in ("connections_on", "event_generators", "probes"):
                if list(getattr(recipe, what)(gid)):
                    raise ValueError(f"Simulation: recipe.{what}({gid}) is not empty; a "
                                     "Simulation runs unconnected cells (with their own "
                                     "probes): use Network")
            model = built.resolve(gid)
            if model is None:
                raise ValueError(f"Simulation: gid {gid} is a spike source; use Network")
            cells[gid] = model
        out = ffi.new("hb_sim_t **")
        _check(lib.hb_sim_create(cells, built.n_cells, opt, out))
        return out[0]

    def run(self):
        """From t = 0 (NEURON's finitialize) to t_stop; returns the simulation."""
        self._copies.clear()
        _check(_lib().hb_sim_run(self._ptr))
        return self

    def init(self):
        """t = 0: v_init, gates at steady state, the first sample."""
        self._copies.clear()
        _check(_lib().hb_sim_init(self._ptr))
        return self

    def advance(self, t_ms=None, *, steps=None):
        """As Network.advance: steps of dt until t >= t_ms [ms] (a time, not a duration), never
        past t_stop (a later t, inf too, stops there; an earlier one than now does nothing).
        `advance(steps=N)`: N more steps of dt, past t_stop if asked. Before init(), init()
        first. Returns the simulation."""
        lib = _lib()
        if (t_ms is None) == (steps is None):
            raise TypeError("advance: give a time t_ms [ms] or steps=N, one of them")
        if steps is not None:
            if isinstance(steps, bool) or not isinstance(steps, numbers.Integral):
                raise TypeError(f"advance: steps = {steps!r}; expected a whole number >= 0")
            if steps < 0:
                raise ValueError(f"advance: steps = {steps}; expected >= 0")
            count = int(steps)
        else:
            t = _target_ms(t_ms)
            total = lib.hb_sim_steps(self._ptr)  # NEURON's while (t < tstop)
            until = math.ceil(t / self.dt - 1e-9) if t / self.dt < total else total
            count = max(0, min(until, total) - round(self.time / self.dt))
        self._copies.clear()
        _check(lib.hb_sim_advance(self._ptr, count))
        return self

    @property
    def time(self):
        """[ms]"""
        return _lib().hb_sim_time(self._ptr)

    def _probe(self, probe):
        if isinstance(probe, str):
            try:
                return self.probe_names.index(probe)
            except ValueError:
                raise KeyError(f"probe {probe!r}: expected one of {self.probe_names}") from None
        if not 0 <= probe < len(self.probe_names):
            raise IndexError(f"probe {probe}: expected 0..{len(self.probe_names) - 1}")
        return probe

    def _copy(self, key, read):
        """The read-only copy of what `read` fills in (pointer, count), made once per step."""
        out = self._copies.get(key)
        if out is None:
            p, n = ffi.new("const double **"), ffi.new("int *")
            _check(read(p, n))
            out = self._copies[key] = _frozen_copy(self, p[0], n[0])
        return out

    @property
    def sample_times(self):
        """Sample times [ms] so far (read-only, an array of its own: see trace)."""
        return self._copy("t", lambda p, n: _lib().hb_sim_sample_times(self._ptr, p, n))

    def trace(self, probe):
        """A probe's samples [mV] so far, by name or index: a read-only array of its own,
        shared by the calls until the simulation steps on; stepping on never changes it, and
        the next call has the new samples."""
        index = self._probe(probe)
        return self._copy(index, lambda p, n: _lib().hb_sim_probe_trace(self._ptr, index, p, n))

    @property
    def traces(self):
        """Every probe's samples: {name: array} (as trace)."""
        return {name: self.trace(i) for i, name in enumerate(self.probe_names)}

    def spike_times(self, probe):
        """A spike-detecting probe's spike times [ms] (a copy)."""
        t, n = ffi.new("const double **"), ffi.new("int *")
        _check(_lib().hb_sim_spikes(self._ptr, self._probe(probe), t, n))
        return np.array(_view(self, t[0], n[0]))

    def _probe_cell(self, name):
        if self.cell_count == 1:
            return 0
        match = re.match(r"c(\d+)\.", name)  # "c<cell>.<probe>" with several cells
        return int(match.group(1)) if match else 0

    @property
    def spikes(self):
        """Spikes of every spike-detecting probe: (gid, time [ms]) with gid the cell's index,
        ordered by time, then gid."""
        gids, times = [], []
        for p, name in enumerate(self.probe_names):
            t = self.spike_times(p)
            gids.append(np.full(len(t), self._probe_cell(name), "<u4"))
            times.append(t)
        if not times:
            return np.empty(0, SPIKE_DTYPE)
        return _sorted_spikes(np.concatenate(gids), np.concatenate(times))

    def __repr__(self):
        return (f"<hinesbatch.Simulation {self.name!r}: {self.cell_count} cells, "
                f"t = {self.time} ms of {self.t_stop}>")


class Traces:
    """A network's recorded values: `times` [ms], `values` [rows, columns], `columns` (gid,
    name, unit); trace(gid, name) is one column ("soma.v", "syn[0].g", ...)."""

    def __init__(self, times, values, columns):
        self.times, self.values, self.columns = times, values, columns

    def trace(self, gid, name):
        for k, (g, n, _) in enumerate(self.columns):
            if g == gid and n == name:
                return self.values[:, k]
        raise KeyError(f"gid {gid}, {name!r}: not recorded; recorded: "
                       f"{sorted({n for _, n, _ in self.columns})}")

    def __repr__(self):
        return (f"<hinesbatch.Traces: {len(self.times)} samples of {len(self.columns)} "
                f"columns>")


def _location(loc):
    """hb_location_t of "soma", {"section": i, "x": x}, {"node": n} or {"sample": id}."""
    p = ffi.new("hb_location_t *")
    out = p[0]
    if loc == "soma":
        out.kind = _lib().HB_LOC_SOMA
    elif isinstance(loc, dict) and "section" in loc and set(loc) <= {"section", "x"}:
        out.kind, out.section, out.x = _lib().HB_LOC_SECTION, int(loc["section"]), float(loc.get("x", 0.5))
    elif isinstance(loc, dict) and set(loc) == {"node"}:
        out.kind, out.node = _lib().HB_LOC_NODE, int(loc["node"])
    elif isinstance(loc, dict) and set(loc) == {"sample"}:
        out.kind, out.sample = _lib().HB_LOC_SAMPLE, int(loc["sample"])
    else:
        raise ValueError(f"location {loc!r}: expected \"soma\", {{\"section\": INDEX, \"x\": 0..1}}, "
                         f"{{\"node\": INDEX}} or {{\"sample\": ID}}")
    return p


class Network:
    """A network (a model with "network", hb_net_t) on a communicator: "serial" (default),
    "mpi" (every rank of the MPI job runs this, as `hinesbatch run` under mpirun), "best".
    `backend` ("seq" or "omp") and `t_stop` [ms] override the model's.

        net = Network(model).run()
        net.spikes                     # every spike of the network, (gid, time) by time, gid
    """

    def __init__(self, model, backend=None, t_stop=None, comm="serial", **options):
        lib = _lib()
        recipe = _recipe_of(model)
        self._built = None
        if recipe is None:
            if options:
                raise TypeError(f"Network: {', '.join(sorted(options))}: options of a "
                                "recipe's run; a model has its own (backend and t_stop aside)")
            model = _as_model(model)
            if not model.is_network:
                raise ValueError(f"{model.name}: no \"network\" object; use Simulation")
            if backend is not None:
                _choice("backend", backend, _BACKENDS)
        kind = _choice("comm", comm, _COMMS)
        out_comm = ffi.new("hb_comm_t **")
        _check(lib.hb_comm_create(kind, out_comm))
        self._comm = ffi.gc(out_comm[0], lib.hb_comm_destroy)
        out = ffi.new("hb_net_t **")
        if recipe is not None:
            sample_dt = options.pop("sample_dt", None)
            opt = _recipe_options("Network", backend, t_stop, options,
                                  {"dt", "v_init", "celsius", "method", "spike_time",
                                   "hh_table", "threads"})
            built = self._built = _recipe._Built(recipe, opt.t_stop_ms,
                                                 os.path.abspath(os.curdir))
            arrays = recipe.connection_arrays()
            self._connections = (None if arrays is None else
                                 _recipe.Connections.of(built.n_cells, arrays))
            self._keep = []
            r = _recipe.make_recipe(built, self._connections, self._keep)
            status = lib.hb_net_create(r, self._comm, opt, out)
            if status != 0:
                _reraise(built, status)
            self.name = type(recipe).__name__
        else:
            text = model.to_json(backend=backend, t_stop=t_stop).encode()
            _check(lib.hb_net_parse_json(text, len(text), model.name.encode(),
                                         model.base_dir.encode(), self._comm, out))
            self.name = model.name
        # The network first, then its communicator (MPI is finalised with it).
        # A recipe's models, callbacks and connection table outlive it too.
        net, comm_ptr = out[0], self._comm
        alive = (self._built, getattr(self, "_keep", None), getattr(self, "_connections", None))
        self._ptr = ffi.gc(net, lambda p: (lib.hb_net_destroy(p), comm_ptr, alive))
        self.model = model
        self.comm = _text(lib.hb_comm_name(self._comm))
        self.rank = lib.hb_comm_rank(self._comm)
        self.size = lib.hb_comm_size(self._comm)
        self.dt = lib.hb_net_dt(self._ptr)
        self.t_stop = lib.hb_net_stop_time(self._ptr)
        self.min_delay = lib.hb_net_min_delay(self._ptr)
        self.local_cells = lib.hb_net_local_cells(self._ptr)
        if recipe is not None and _recipe._overrides(recipe, "probes"):
            self._record_probes(recipe, sample_dt)

    def _record_probes(self, recipe, sample_dt):
        """recipe.probes(gid) of every gid (each rank asks for all: hb_net_record is
        collective), recorded every sample_dt [ms] (None: every step)."""
        lib = _lib()
        recs = []
        for gid in range(self._built.n_cells):
            for p in recipe.probes(gid):
                p = p if isinstance(p, _recipe.Probe) else _recipe.Probe(*p)
                where = p.where
                if isinstance(where, dict) and isinstance(where.get("section"), str):
                    cell = recipe.cell_description(gid)  # a section by name: the cell's index
                    if not isinstance(cell, _recipe.Cell):
                        raise ValueError(f"probes({gid}): section {where['section']!r} by name "
                                         "needs a Cell built from sections; give an index")
                    where = dict(where, section=cell.section_index(where["section"]))
                recs.append((gid, _location(where), ffi.new("char[]", str(p.variable).encode())))
        arr = ffi.new("hb_net_record_t[]", max(len(recs), 1))
        for k, (gid, loc, name) in enumerate(recs):
            arr[k].gid, arr[k].where, arr[k].variable = gid, loc[0], name
        if recs:
            _check(lib.hb_net_record(self._ptr, len(recs), arr,
                                     0.0 if sample_dt is None else float(sample_dt)))

    def _call(self, status):
        if status != 0:
            _reraise(self._built, status)

    def run(self):
        """From t = 0 to t_stop; returns the network. It advances in chunks of whole epochs,
        about 1 % of t_stop each: Ctrl-C (SIGINT) stops it at the end of the chunk under way,
        every rank at the same one, and raises Interrupted (a KeyboardInterrupt) whose
        `result` is this network, with what was computed."""
        lib = _lib()
        self._call(lib.hb_net_init(self._ptr))
        epoch = lib.hb_net_epoch_steps(self._ptr) * self.dt
        chunk = epoch * max(1.0, math.floor(0.01 * self.t_stop / epoch))
        caught = []
        stop = ffi.new("int *")
        with _sigint_caught(caught):
            while self.time < self.t_stop - 0.5 * self.dt:
                self._call(lib.hb_net_advance(self._ptr, self.time + chunk))
                # the ranks agree on a signal caught by any of them, so all stop together
                _check(lib.hb_comm_max(self._comm, 1 if caught else 0, stop))
                if stop[0] and self.time < self.t_stop - 0.5 * self.dt:
                    raise Interrupted(self)
        return self

    def init(self):
        self._call(_lib().hb_net_init(self._ptr))
        return self

    def advance(self, t_ms):
        """Whole epochs until t >= t_ms [ms] (a time, not a duration), never past t_stop (a
        later t, inf too, stops there; an earlier one than now does nothing); every rank must
        ask for the same t. Returns the network."""
        self._call(_lib().hb_net_advance(self._ptr, _target_ms(t_ms)))
        return self

    @property
    def time(self):
        """[ms]"""
        return _lib().hb_net_time(self._ptr)

    @property
    def spikes(self):
        """Every spike of the network so far (each rank has all): (gid, time [ms]), ordered by
        time, then gid (a copy; the library's list moves as the network steps)."""
        s, n = ffi.new("const hb_spike_t **"), ffi.new("size_t *")
        _check(_lib().hb_net_spikes(self._ptr, s, n))
        raw = _view(self, s[0], n[0], _C_SPIKE_DTYPE)
        out = np.empty(len(raw), SPIKE_DTYPE)
        out["gid"] = raw["gid"]
        out["time"] = raw["time"]
        return out

    def record(self, gids, variables=("v",), locations=("soma",), sample_dt=0.1):
        """Records `variables` ("v", "hh.m", "hh.ina", "pas.i", "syn[0].g", ...; docs/network.md,
        section 8) at `locations` ("soma", {"section": 1, "x": 0.5}, {"node": 3}) of the cable
        cells `gids` every `sample_dt` [ms], from t = 0: before init() or run(), on every rank
        alike. A synapse's variable is recorded once per gid (at the synapse). Returns the
        network."""
        lib = _lib()
        where = [_location(loc) for loc in locations]
        names = [ffi.new("char[]", str(v).encode()) for v in variables]
        synaptic = [str(v).startswith("syn[") for v in variables]
        recs = []
        for gid in np.atleast_1d(np.asarray(gids, dtype=np.int64)):
            for li, loc in enumerate(where):
                for name, syn in zip(names, synaptic):
                    if not (syn and li > 0):
                        recs.append((int(gid), loc, name))
        arr = ffi.new("hb_net_record_t[]", max(len(recs), 1))
        for k, (gid, loc, name) in enumerate(recs):
            if not 0 <= gid < 2**32:
                raise ValueError(f"gid {gid}: expected a cable cell's gid")
            arr[k].gid = gid
            arr[k].where = loc[0]
            arr[k].variable = name
        _check(lib.hb_net_record(self._ptr, len(recs), arr, float(sample_dt)))
        return self

    @property
    def traces(self):
        """What the network recorded since init (its file's "record" section and record()),
        gathered from every rank (collective): a Traces of `times` [ms] (rows), `values`
        (rows x columns) and `columns` ((gid, name, unit) each, in order of gid), copies."""
        lib = _lib()
        n = lib.hb_net_record_count(self._ptr)
        gid, name, unit = ffi.new("uint32_t *"), ffi.new("const char **"), ffi.new("const char **")
        columns = []
        for k in range(n):
            _check(lib.hb_net_record_column(self._ptr, k, gid, name, unit))
            columns.append((int(gid[0]), _text(name[0]), _text(unit[0])))
        t, v, rows = ffi.new("const double **"), ffi.new("const double **"), ffi.new("size_t *")
        _check(lib.hb_net_traces(self._ptr, t, v, rows))
        r = rows[0]
        times = np.frombuffer(ffi.buffer(t[0], 8 * r), "<f8").copy() if r else np.empty(0)
        values = (np.frombuffer(ffi.buffer(v[0], 8 * r * n), "<f8").reshape(r, n).copy()
                  if r and n else np.empty((r, n)))
        return Traces(times, values, columns)

    @property
    def stats(self):
        """This rank's wall time per phase since init [s] and counts (hb_net_stats_t)."""
        st = ffi.new("hb_net_stats_t *")
        _check(_lib().hb_net_stats(self._ptr, st))
        return {name: getattr(st, name) for name, _ in ffi.typeof(st[0]).fields}

    def __repr__(self):
        return (f"<hinesbatch.Network {self.name!r}: {self.local_cells} cells on rank "
                f"{self.rank} of {self.size}, t = {self.time} ms of {self.t_stop}>")


def run(model, backend=None, t_stop=None, comm="serial", **options):
    """Run a model (a Model, a dict, or a JSON file's path) from 0 to t_stop: a Network when it
    has "network" (on `comm`), else a Simulation; a Recipe as a Network and a Cell as a
    Simulation, with their `options` (dt, v_init, ...); returns it, run."""
    if _recipe_of(model) is not None and not isinstance(model, _recipe.Cell):
        return Network(model, backend, t_stop, comm, **options).run()
    if isinstance(model, _recipe.Cell):
        return Simulation(model, backend, t_stop, **options).run()
    model = _as_model(model)
    if model.is_network:
        return Network(model, backend, t_stop, comm).run()
    if comm != "serial":
        raise ValueError(f"comm {comm!r}: cell simulations run on one rank; expected 'serial'")
    return Simulation(model, backend, t_stop).run()
