"""Plots as PNG files (matplotlib's Agg canvas: no display, no pyplot state): a spike raster,
voltage traces, a morphology in 2D coloured by voltage at a time, and a network run's wall time
per phase (docs/python.md).

    import hinesbatch as hb
    from hinesbatch import plot
    plot.raster(hb.run("examples/ring_network.json"), "raster.png")
    plot.traces("out", "traces.png")      # out/traces.h5 (traces.csv, probes.csv), a Simulation
    plot.morphology("cell.swc", "cell.png")                  # coloured by SWC type
    plot.morphology("model.json", "v.png", time=12.5)        # coloured by v at 12.5 ms
    plot.phases("out/summary.json", "phases.png")

From the shell: python -m hinesbatch.plot {raster,traces,morphology,phases} INPUT -o OUT.png
(python -m hinesbatch.plot --help; `hinesbatch plot` runs it). INPUT may be the output
directory of `hinesbatch run`: its spikes.dat, traces file or summary.json is read. Every
function returns the path it wrote; bad input raises ValueError (or OSError, HinesbatchError)
with the file and line or key at fault.
"""

import argparse
import csv
import json
import os
import sys
from collections import deque

import numpy as np

import hinesbatch as hb
from hinesbatch import _ffi
from hinesbatch._ffi import ffi

__all__ = ["raster", "traces", "morphology", "phases", "read_spikes", "read_traces",
           "read_report", "read_summary", "cell_voltages", "main"]

PHASES = ("build", "init", "update", "detect", "deliver", "exchange")
# SWC type codes and the colours a morphology without voltages is drawn in.
_TYPE_NAMES = {1: "soma", 2: "axon", 3: "basal dendrite", 4: "apical dendrite"}
_TYPE_COLOURS = {1: "#222222", 2: "#1f77b4", 3: "#d62728", 4: "#2ca02c"}
_REGIONS = {"soma": 1, "axon": 2, "dend": 3, "basal": 3, "apical": 4}


def _figure(width=8.0, height=4.5):
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError("hinesbatch.plot needs matplotlib (Debian: python3-matplotlib)") from None
    fig = Figure(figsize=(width, height), dpi=100, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _legend(ax, **kwargs):
    """The legend beside the axes, right of them, never over the data (constrained layout
    makes room for it)."""
    return ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0,
                     fontsize="small", **kwargs)


def _check_png(path):
    path = os.fspath(path)
    if not path.lower().endswith(".png"):
        raise ValueError(f"{path}: expected a file name ending in .png")
    folder = os.path.dirname(path) or os.curdir
    if not os.path.isdir(folder):
        raise OSError(f"{path}: no folder {folder}")
    return path


def _save(fig, path):
    fig.savefig(path, format="png")
    return path


def _is_model(source):
    return isinstance(source, (dict, hb.Model)) or (
        isinstance(source, (str, os.PathLike)) and os.fspath(source).endswith(".json"))


# ---------------------------------------------------------------------------------------------
# Reading what `hinesbatch run` writes

# The traces files of an output directory, in the order they are looked for.
TRACE_FILES = ("traces.h5", "traces.csv", "probes.csv")
_HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"


def _in_directory(path, names, what):
    """`path` itself, or where it is a directory (a run's outputs) the first of `names` in it."""
    if not os.path.isdir(path):
        return path
    for name in names:
        if os.path.exists(os.path.join(path, name)):
            return os.path.join(path, name)
    raise ValueError(f"{os.fspath(path)}: no {' or '.join(names)} in this directory (expected "
                     f"the outputs of `hinesbatch run` with {what})")


def _is_hdf5(path):
    with open(path, "rb") as f:
        return f.read(8) == _HDF5_SIGNATURE


def _h5py():
    try:
        import h5py
    except ImportError:
        raise ImportError("reading HDF5 files (traces.h5) needs h5py (Debian: python3-h5py)") \
            from None
    return h5py


def read_report(path):
    """A SONATA report (traces.h5; /report/<population>/data and mapping, as NEURON's and
    CoreNEURON's reports) as a list of columns, one per element: dicts with "population",
    "gid", "element" (its element id), "name" (mapping/element_names where the file has it,
    else the element id), "t" [ms] and "v" (the data's units, mV for traces.h5)."""
    h5py = _h5py()
    path = os.fspath(path)
    columns = []
    with h5py.File(path, "r") as f:
        report = f.get("report")
        if not isinstance(report, h5py.Group) or not len(report):
            raise ValueError(f"{path}: /report: missing; expected a SONATA report (traces.h5)")
        for pop in report:
            where = f"{path}: /report/{pop}"
            group = report[pop]
            try:
                data = group["data"]
                mapping = group["mapping"]
                nodes = mapping["node_ids"][()]
                pointers = mapping["index_pointers"][()].astype(np.int64)
                elements = mapping["element_ids"][()]
                start, stop, dt = (float(x) for x in mapping["time"][()])
            except (KeyError, ValueError, TypeError) as err:
                raise ValueError(f"{where}: expected data and mapping/node_ids, index_pointers, "
                                 f"element_ids and time ({err})") from None
            if data.ndim != 2:
                raise ValueError(f"{where}/data: {data.ndim} dimensions; expected 2 "
                                 "[frames][elements]")
            frames, n = data.shape
            if (len(pointers) != len(nodes) + 1 or len(elements) != n or
                    (len(pointers) and (pointers[0] != 0 or pointers[-1] != n or
                                        np.any(np.diff(pointers) < 0)))):
                raise ValueError(f"{where}/mapping: {len(nodes)} node_ids, {len(pointers)} "
                                 f"index_pointers, {len(elements)} element_ids for {n} columns; "
                                 "expected index_pointers of node_ids + 1 entries from 0 to the "
                                 "column count, and an element id per column")
            expected = int(round((stop - start) / dt)) if dt > 0 else -1
            if expected != frames:
                raise ValueError(f"{where}/mapping/time: [{start:g}, {stop:g}) by {dt:g} ms is "
                                 f"{expected} frames; data has {frames}")
            names = mapping["element_names"][()] if "element_names" in mapping else elements
            names = [x.decode() if isinstance(x, bytes) else str(x) for x in names]
            gids = np.repeat(nodes, np.diff(pointers))
            t = start + dt * np.arange(frames)
            values = data[()].astype(np.float64)
            for k in range(n):
                columns.append({"population": pop, "gid": int(gids[k]),
                                "element": int(elements[k]), "name": names[k], "t": t,
                                "v": values[:, k]})
    return columns


def read_spikes(path):
    """A `gid time` file (spikes.dat, whose first line `# gid t_ms` says so; or a run's
    output directory) as a SPIKE_DTYPE array, in file order. `#` lines are skipped. NEURON's
    out.dat is `time gid`: swap its columns first."""
    path = _in_directory(path, ["spikes.dat"], "spikes")
    gids, times = [], []
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            fields = line.split()
            if not fields or line.lstrip().startswith("#"):
                continue
            try:
                if len(fields) != 2:
                    raise ValueError
                gid, t = int(fields[0]), float(fields[1])
                if gid < 0 or not np.isfinite(t):
                    raise ValueError
            except ValueError:
                raise ValueError(f"{path}:{number}: expected 'gid time' (a gid >= 0 and a time "
                                 f"[ms]), found {line.strip()[:60]!r}") from None
            gids.append(gid)
            times.append(t)
    out = np.empty(len(times), hb.SPIKE_DTYPE)
    out["gid"], out["time"] = gids, times
    return out


def _number(path, number, text, what):
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{path}:{number}: {what}: expected a number, found {text!r}") from None
    return value


def read_traces(path):
    """traces.h5 (a SONATA report, the default), traces.csv (`gid,probe,t_ms,v_mv`, the long
    format, `--traces csv`) or probes.csv (`t_ms,<probe>,...`, `--traces wide`), or a run's
    output directory holding one of them, as {name: (t [ms], v [mV])}; names "c<gid>.<probe>"
    when the file holds several gids, else the probe's: the library's probe names, as in
    probes.csv, summary.json and Simulation.probe_names."""
    path = _in_directory(path, TRACE_FILES, "traces")
    if _is_hdf5(path):
        columns = read_report(path)
        several = len({(c["population"], c["gid"]) for c in columns}) > 1
        pops = len({c["population"] for c in columns}) > 1
        return {(f"{c['population']}/" if pops else "") +
                (f"c{c['gid']}.{c['name']}" if several else c["name"]): (c["t"], c["v"])
                for c in columns}
    with open(path, encoding="utf-8", newline="") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        # (a network's recorded values: gid,name,t_ms,value, docs/network.md section 8)
        if header in (["gid", "probe", "t_ms", "v_mv"], ["gid", "name", "t_ms", "value"]):
            series = {}
            for number, row in enumerate(rows, 2):
                if len(row) != 4:
                    raise ValueError(f"{path}:{number}: expected 4 fields (gid,probe,t_ms,v_mv), "
                                     f"found {len(row)}")
                key = (row[0], row[1])
                t = _number(path, number, row[2], "t_ms")
                v = _number(path, number, row[3], "v_mv")
                series.setdefault(key, ([], []))
                series[key][0].append(t)
                series[key][1].append(v)
            several = len({gid for gid, _ in series}) > 1
            return {(f"c{gid}.{probe}" if several else probe): (np.array(t), np.array(v))
                    for (gid, probe), (t, v) in series.items()}
        if header and header[0] == "t_ms" and len(header) > 1:
            columns = [[] for _ in header]
            for number, row in enumerate(rows, 2):
                if len(row) != len(header):
                    raise ValueError(f"{path}:{number}: expected {len(header)} fields as the "
                                     f"header, found {len(row)}")
                for column, text, name in zip(columns, row, header):
                    column.append(_number(path, number, text, name))
            t = np.array(columns[0])
            return {name: (t, np.array(v)) for name, v in zip(header[1:], columns[1:])}
    raise ValueError(f"{path}:1: expected the header 'gid,probe,t_ms,v_mv' (traces.csv) or "
                     f"'t_ms,<probe>,...' (probes.csv), or an HDF5 file (traces.h5), found "
                     f"{','.join(header or [])!r}")


def read_summary(path):
    """A network run's summary.json (or its output directory), checked for what the phase
    chart reads."""
    path = _in_directory(path, ["summary.json"], "a summary")
    with open(path, encoding="utf-8") as f:
        try:
            summary = json.load(f)
        except json.JSONDecodeError as err:
            raise ValueError(f"{path}:{err.lineno}:{err.colno}: {err.msg}") from None
    ranks = summary.get("per_rank") if isinstance(summary, dict) else None
    if not isinstance(ranks, list) or not ranks:
        raise ValueError(f"{path}: per_rank: missing; expected a network run's summary.json "
                         "(hinesbatch run on a model with \"network\")")
    for r, rank in enumerate(ranks):
        for phase in PHASES:
            value = rank.get(f"{phase}_s") if isinstance(rank, dict) else None
            if not isinstance(value, (int, float)) or value < 0:
                raise ValueError(f"{path}: per_rank[{r}].{phase}_s: expected a time >= 0 [s], "
                                 f"found {value!r}")
    return summary


# ---------------------------------------------------------------------------------------------
# Spikes and traces


def _run_t_stop(path):
    """t_stop [ms] of the run whose output `path` is (its summary.json beside it), or None."""
    folder = path if os.path.isdir(path) else os.path.dirname(os.fspath(path))
    try:
        with open(os.path.join(folder, "summary.json"), encoding="utf-8") as f:
            t_stop = json.load(f).get("t_stop_ms")
        return float(t_stop) if t_stop is not None and float(t_stop) > 0 else None
    except (OSError, ValueError, TypeError, AttributeError):
        return None


def _spikes_of(source):
    """The spikes, a name for them and the run's t_stop [ms] (None where unknown)."""
    if isinstance(source, np.ndarray):
        if source.dtype.names is None or not {"gid", "time"} <= set(source.dtype.names):
            raise ValueError("spikes: expected a structured array with fields gid and time "
                             "(hinesbatch.SPIKE_DTYPE)")
        return source, "spikes", None
    if isinstance(source, (hb.Simulation, hb.Network)):
        return source.spikes, source.model.name, source.t_stop
    if _is_model(source):
        run = hb.run(source)
        return run.spikes, run.model.name, run.t_stop
    return read_spikes(source), os.fspath(source), _run_t_stop(source)


def raster(source, out, title=None, t_stop=None):
    """A spike raster (time against gid): from spikes (a SPIKE_DTYPE array), a run Simulation or
    Network, a model (dict, Model or .json path: run first) or a `gid time` file. The time axis
    spans the run, [0, t_stop] (`t_stop` [ms], default the run's: its summary.json beside a
    file; else the last spike), the gid axis whole gids."""
    out = _check_png(out)
    spikes, name, run_t_stop = _spikes_of(source)
    t_end = t_stop if t_stop is not None else run_t_stop
    if t_end is None:
        t_end = float(spikes["time"].max()) if len(spikes) else 1.0
    fig = _figure()
    ax = fig.add_subplot()
    ax.scatter(spikes["time"], spikes["gid"], s=25, marker="|", linewidths=1.0, color="black")
    ax.set_xlabel("t [ms]")
    ax.set_ylabel("gid")
    ax.set_xlim(0.0, t_end if t_end > 0 else 1.0)
    from matplotlib.ticker import MaxNLocator
    ax.yaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    gids = np.unique(spikes["gid"])
    if len(gids):
        ax.set_ylim(float(gids[0]) - 0.5, float(gids[-1]) + 0.5)
    ax.set_title(title or f"{os.path.basename(name)}: {len(spikes)} spikes, {len(gids)} gids")
    if len(spikes) == 0:
        ax.text(0.5, 0.5, "no spikes", transform=ax.transAxes, ha="center", va="center")
    return _save(fig, out)


def _traces_of(source):
    if isinstance(source, hb.Simulation):
        t = np.array(source.sample_times)
        return {name: (t, np.array(v)) for name, v in source.traces.items()}, source.model.name
    if _is_model(source):
        return _traces_of(hb.run(source))
    if isinstance(source, hb.Network):  # its "record" section's values
        tr = source.traces
        if not tr.columns:
            raise ValueError(f"{source.model.name}: the network records nothing; expected a "
                             "\"record\" section (docs/network.md, section 8)")
        return ({f"{gid}.{name}": (tr.times, tr.values[:, k])
                 for k, (gid, name, _) in enumerate(tr.columns)}, source.model.name)
    return read_traces(source), os.fspath(source)


def traces(source, out, probes=None, title=None):
    """Voltage traces against time: from a run Simulation, a cell model (run first), a
    traces.h5 / traces.csv / probes.csv file or a run's output directory; `probes` names the
    ones to draw (default: all)."""
    out = _check_png(out)
    series, name = _traces_of(source)
    if probes is not None:
        missing = [p for p in probes if p not in series]
        if missing:
            raise KeyError(f"{name}: no probe {missing[0]!r}; expected one of {sorted(series)}")
        series = {p: series[p] for p in probes}
    if not series:
        raise ValueError(f"{name}: no traces (a model without probes, or an empty file)")
    fig = _figure()
    ax = fig.add_subplot()
    for label, (t, v) in series.items():
        ax.plot(t, v, linewidth=0.8, label=label)
    ax.set_xlabel("t [ms]")
    ax.set_ylabel("v [mV]")
    ax.set_title(title or f"{os.path.basename(name)}: {len(series)} trace(s)")
    if len(series) <= 12:
        _legend(ax)
    return _save(fig, out)


# ---------------------------------------------------------------------------------------------
# Morphologies


def _read_swc(path, units):
    """Samples of a file the library has accepted: ids, types, xyz [um], radii [um], parents."""
    scale = 1e-3 if units == "nm" else 1.0
    rows = []
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            fields = line.split("#", 1)[0].split()
            if len(fields) >= 7:
                rows.append((int(fields[0]), int(float(fields[1])), float(fields[2]),
                             float(fields[3]), float(fields[4]), float(fields[5]),
                             int(fields[6])))
    ids = np.array([r[0] for r in rows], dtype=np.int64)
    return {"id": ids, "type": np.array([r[1] for r in rows]),
            "xyz": np.array([r[2:5] for r in rows], dtype=float).reshape(-1, 3) * scale,
            "radius": np.array([r[5] for r in rows], dtype=float) * scale,
            "parent": np.array([r[6] for r in rows], dtype=np.int64)}


def _region(value):
    return value if isinstance(value, int) else _REGIONS.get(value, -1)


def _cell_spec(model, cell):
    """The "cells" entry that simulation cell `cell` (copies counted) comes from."""
    index = 0
    for k, spec in enumerate(model.data.get("cells", [])):
        count = spec.get("count", 1)
        if cell < index + count:
            return k, spec
        index += count
    raise IndexError(f"{model.name}: cell {cell}: expected 0..{index - 1}")


def _cable_like_the_model(model, k, spec):
    """The morphology and cable the library builds for cells[k], by the model file's rules
    (src/sim/model_json.c): NEURON's scheme and nseg 1 unless the cell says otherwise."""
    where = f"{model.name}: cells[{k}]"
    if "morphology" not in spec:
        raise ValueError(f"{where}: no \"morphology\" (an SWC file); the morphology plot draws "
                         "SWC cells, not \"cable\" or \"sections\"")
    d = spec.get("discretization", {})
    scheme = d.get("scheme", "neuron")
    swc = os.path.join(model.base_dir, spec["morphology"])
    morph = hb.Morphology(swc, units=spec.get("units", "um"),
                          sections=spec.get("section_rule",
                                            "import3d" if scheme == "neuron" else "hinesbatch"),
                          zero_radius=spec.get("zero_radius", "repair"))
    lib = _ffi.load()
    disc = ffi.new("hb_discretization_t *")
    lib.hb_discretization_default(disc)
    disc.policy = hb._POLICIES[d.get("policy", "fixed")]
    disc.scheme = hb._SCHEMES[scheme]
    disc.count = int(d.get("nseg", 1))
    for key, field in (("max_length", "max_length_um"), ("d_lambda", "d_lambda"),
                       ("frequency", "frequency_hz")):
        if key in d:
            setattr(disc, field, float(d[key]))
    disc.ra_ohm_cm = float(spec.get("Ra", disc.ra_ohm_cm))
    disc.cm_uf_cm2 = float(spec.get("cm", disc.cm_uf_cm2))
    for r in spec.get("regions", []):
        region = r.get("region")
        for t in range(20):
            if region != "all" and _region(region) != t:
                continue
            if "Ra" in r:
                disc.ra_by_type[t] = float(r["Ra"])
            if "cm" in r:
                disc.cm_by_type[t] = float(r["cm"])
            if "nseg" in r:
                disc.count_by_type[t] = int(r["nseg"])
    out = ffi.new("hb_cable_t **")
    hb._check(lib.hb_cable_create(morph._ptr, disc, out))
    cable = ffi.gc(out[0], lib.hb_cable_destroy)
    return swc, morph, cable


def cell_voltages(model, cell=0, time=None):
    """Run a cell model to `time` [ms] (default: its t_stop) and return (SWC path, units,
    {SWC sample id: v [mV]}, the time reached [ms]) for cell `cell`: the mean voltage of the
    compartments in the piece each sample ends (samples of pieces without one are absent)."""
    model = hb.Model(model)
    if model.is_network:
        raise ValueError(f"{model.name}: a network; the morphology plot runs cell models "
                         "(no \"network\")")
    k, spec = _cell_spec(model, cell)
    swc, morph, cable = _cable_like_the_model(model, k, spec)
    # A one-compartment cell after the others: every cell then has a successor, whose first
    # node tells where this cell's nodes end, to check the cable above is the library's.
    model.data["cells"] = model.data["cells"] + [{"cable": {"length": 10, "diam": 1}}]
    sim = hb.Simulation(model, t_stop=time).run()
    lib = _ffi.load()
    v0, v1 = ffi.new("const double **"), ffi.new("const double **")
    hb._check(lib.hb_sim_voltages(sim._ptr, cell, v0))
    rows = lib.hb_cable_size(cable)
    v = np.array(ffi.unpack(v0[0], rows))
    hb._check(lib.hb_sim_voltages(sim._ptr, cell + 1, v1))
    nodes = (int(ffi.cast("uintptr_t", v1[0])) - int(ffi.cast("uintptr_t", v0[0]))) // 8
    if nodes != rows:
        raise RuntimeError(f"{model.name}: cells[{k}]: the simulation has {nodes} nodes, the "
                           f"cable rebuilt from the file {rows}: the model uses a rule "
                           "hinesbatch.plot does not reproduce")
    info = ffi.new("hb_node_info_t *")
    by_sample = {}
    for node in range(rows):
        hb._check(lib.hb_cable_node(cable, node, info))
        if info.kind == lib.HB_NODE_COMPARTMENT:
            by_sample.setdefault(int(info.sample_id), []).append(v[node])
    return swc, spec.get("units", "um"), {s: float(np.mean(vs)) for s, vs in by_sample.items()}, \
        sim.time


def _spread(samples, known):
    """Every sample's value: its own, else the nearest known one's along the tree (ties: the
    first reached, samples in file order)."""
    index = {int(s): i for i, s in enumerate(samples["id"])}
    neighbours = [[] for _ in samples["id"]]
    for i, p in enumerate(samples["parent"]):
        if int(p) in index:
            neighbours[i].append(index[int(p)])
            neighbours[index[int(p)]].append(i)
    value = np.full(len(samples["id"]), np.nan)
    queue = deque()
    for i, s in enumerate(samples["id"]):
        if int(s) in known:
            value[i] = known[int(s)]
            queue.append(i)
    while queue:
        i = queue.popleft()
        for j in neighbours[i]:
            if np.isnan(value[j]):
                value[j] = value[i]
                queue.append(j)
    return value


_PLANES = {"xy": (0, 1), "xz": (0, 2), "yz": (1, 2)}


def morphology(source, out, time=None, cell=0, plane="xy", units="um", title=None):
    """A morphology in 2D (`plane` "xy", "xz" or "yz"), line widths from the radii: from an SWC
    file, coloured by SWC type; or from a cell model (a dict, Model or .json path: cell `cell`
    must come from an SWC file), run to `time` [ms] (default: t_stop) and coloured by the
    voltage there."""
    out = _check_png(out)
    if plane not in _PLANES:
        raise ValueError(f"plane {plane!r}: expected one of {', '.join(_PLANES)}")
    voltages = None
    if _is_model(source):
        swc, units, known, t_at = cell_voltages(source, cell, time)
    else:
        swc = os.fspath(source)
        hb.Morphology(swc, units=units)  # the library's checks and messages (file:line)
    samples = _read_swc(swc, units)
    if _is_model(source):
        voltages = _spread(samples, known)
    a, b = _PLANES[plane]
    index = {int(s): i for i, s in enumerate(samples["id"])}
    segments, widths, colours, values = [], [], [], []
    for i, p in enumerate(samples["parent"]):
        j = index.get(int(p))
        if j is None:
            continue
        xyz = samples["xyz"]
        segments.append([(xyz[j, a], xyz[j, b]), (xyz[i, a], xyz[i, b])])
        widths.append(samples["radius"][i])
        colours.append(_TYPE_COLOURS.get(int(samples["type"][i]), "#9467bd"))
        if voltages is not None:
            values.append(voltages[i])
    from matplotlib.collections import LineCollection
    fig = _figure(7.0, 7.0)
    ax = fig.add_subplot()
    # about a point per um of diameter at a 500 um field, at least a hairline
    extent = np.ptp(samples["xyz"][:, [a, b]], axis=0).max() if len(samples["id"]) > 1 else 1.0
    lw = np.clip(2 * np.array(widths) * 500.0 / max(extent, 1e-9), 0.3, 8.0)
    lines = LineCollection(segments, linewidths=lw, capstyle="round")
    if voltages is not None:
        lines.set_array(np.array(values))
        lines.set_cmap("viridis")
        ax.add_collection(lines)
        fig.colorbar(lines, ax=ax, label="v [mV]", shrink=0.8)
        heading = f"v at t = {t_at:g} ms, cell {cell}"
    else:
        lines.set_color(colours)
        ax.add_collection(lines)
        from matplotlib.lines import Line2D
        handles = [Line2D([], [], color=_TYPE_COLOURS[t], label=_TYPE_NAMES[t])
                   for t in sorted(set(int(x) for x in samples["type"])) if t in _TYPE_COLOURS]
        if handles:
            _legend(ax, handles=handles)
        heading = f"{len(samples['id'])} samples"
    soma = samples["type"] == 1
    if soma.any():  # a soma given as one sample (a sphere) has no segment to draw
        xy = samples["xyz"][soma][:, [a, b]]
        if voltages is None:
            ax.scatter(xy[:, 0], xy[:, 1], s=12, color=_TYPE_COLOURS[1], zorder=3)
        else:
            ax.scatter(xy[:, 0], xy[:, 1], s=12, c=voltages[soma], cmap="viridis",
                       norm=lines.norm, zorder=3)
    ax.autoscale()
    ax.set_aspect("equal")
    ax.set_xlabel(f"{plane[0]} [um]")
    ax.set_ylabel(f"{plane[1]} [um]")
    ax.set_title(title or f"{os.path.basename(swc)}: {heading}")
    return _save(fig, out)


# ---------------------------------------------------------------------------------------------
# A network run's phases


def phases(source, out, title=None):
    """Wall time per phase (build, init, update, detect, deliver, exchange) of a network run,
    from its summary.json (a path or the dict), one bar per rank and phase."""
    out = _check_png(out)
    name = "summary"
    if isinstance(source, dict):
        summary = source
        if not isinstance(summary.get("per_rank"), list):
            raise ValueError("summary: per_rank: missing; expected a network run's summary")
    else:
        name = os.fspath(source)
        summary = read_summary(source)
    ranks = summary["per_rank"]
    fig = _figure()
    ax = fig.add_subplot()
    x = np.arange(len(PHASES))
    if len(ranks) <= 8:
        width = 0.8 / len(ranks)
        for r, rank in enumerate(ranks):
            ax.bar(x + (r - (len(ranks) - 1) / 2) * width,
                   [rank[f"{p}_s"] for p in PHASES], width, label=f"rank {rank.get('rank', r)}")
        if len(ranks) > 1:
            _legend(ax)
    else:  # many ranks: the mean, and the range as error bars
        times = np.array([[rank[f"{p}_s"] for p in PHASES] for rank in ranks])
        mean = times.mean(axis=0)
        spread = [np.maximum(mean - times.min(axis=0), 0), np.maximum(times.max(axis=0) - mean, 0)]
        ax.bar(x, mean, 0.6, yerr=spread,
               capsize=4, label=f"mean of {len(ranks)} ranks (min..max)")
        _legend(ax)
    ax.set_xticks(x, PHASES)
    ax.set_ylabel("wall time [s]")
    ax.set_title(title or (f"{os.path.basename(str(summary.get('model', name)))}: "
                           f"{summary.get('spikes', '?')} spikes, {len(ranks)} rank(s), "
                           f"{summary.get('wall_s', 0):.3g} s"))
    return _save(fig, out)


# ---------------------------------------------------------------------------------------------
# The command line


def main(argv=None, prog="python -m hinesbatch.plot"):
    parser = argparse.ArgumentParser(
        prog=prog,
        description="Plots of hinesbatch runs as PNG files. INPUT is a model file (.json: run "
                    "first) or what `hinesbatch run` wrote.")
    parser.add_argument("--library", help="the libhinesbatch.so to load (default: found)")
    sub = parser.add_subparsers(dest="kind", required=True)
    p = sub.add_parser("raster", help="spike raster from spikes.dat, a run's directory or a model")
    p.add_argument("input")
    p.add_argument("--t-stop", type=float, help="[ms] the time axis' end (default: the run's "
                   "t_stop, from its summary.json, else the last spike)")
    p = sub.add_parser("traces", help="voltage traces from traces.h5, traces.csv, probes.csv, "
                                      "a run's directory or a model")
    p.add_argument("input")
    p.add_argument("--probe", action="append", help="a probe to draw (repeat; default: all)")
    p = sub.add_parser("morphology", help="an SWC file, or a model's cell coloured by v")
    p.add_argument("input")
    p.add_argument("--time", type=float, help="[ms] the time of the voltages (model input)")
    p.add_argument("--cell", type=int, default=0, help="the model's cell (default 0)")
    p.add_argument("--plane", choices=sorted(_PLANES), default="xy")
    p.add_argument("--units", choices=["um", "nm"], default="um", help="an SWC file's units")
    p = sub.add_parser("phases", help="a network run's summary.json (or directory): wall time "
                                      "per phase")
    p.add_argument("input")
    for p in sub.choices.values():
        p.add_argument("-o", "--output", help="the PNG to write (default: KIND.png)")
    args = parser.parse_args(argv)
    out = args.output or f"{args.kind}.png"
    try:
        if args.library:
            hb.load_library(args.library)
        if args.kind == "raster":
            raster(args.input, out, t_stop=args.t_stop)
        elif args.kind == "traces":
            traces(args.input, out, probes=args.probe)
        elif args.kind == "morphology":
            morphology(args.input, out, time=args.time, cell=args.cell, plane=args.plane,
                       units=args.units)
        else:
            phases(args.input, out)
    except (OSError, ValueError, KeyError, IndexError, RuntimeError, ImportError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        if isinstance(err, OSError) and err.filename and err.strerror:
            message = f"{err.filename}: {err.strerror}"
        print(f"hinesbatch.plot: {message}", file=sys.stderr)
        return 1
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
