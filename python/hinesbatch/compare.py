"""The same model in hinesbatch and in NEURON: traces and rasters overlaid in one PNG, and the
largest differences printed (docs/python.md).

    python -m hinesbatch.compare examples/ball_and_stick.json -o compare.png
    python -m hinesbatch.compare examples/ring_network.json --t-stop 100
    python -m hinesbatch.compare examples/ball_and_stick.json --outputs out   # `hinesbatch run`'s

With --outputs DIR, hinesbatch's side is what `hinesbatch run MODEL.json -o DIR` wrote (any
backend, a GPU's too): its traces (traces.h5, traces.csv or probes.csv) and spikes.csv for
cells, spikes.dat for a network; without it the model runs here through the library. With
--nrnmech PATH (the folder where nrnivmodl compiled the .mod files of the network's artificial
cells, or its libnrnmech.so) NEURON loads them first.

Needs NEURON's Python module (Debian: python3-neuron; /usr/bin/python3) and matplotlib. The
NEURON model is built from the file by hinesbatch.neuron_model (what it supports is listed
there). Exit status: 0 when both ran (the differences are reported, not judged), 1 on bad input,
3 when NEURON cannot be imported.
"""

import argparse
import csv
import json
import os
import sys

import numpy as np

import hinesbatch as hb
from hinesbatch import plot
from hinesbatch.plot import _check_png, _figure, _save

__all__ = ["compare", "main"]


class Outputs:
    """What `hinesbatch run` wrote in a directory, read as compare reads a run: probe_names,
    sample_times, trace(name) and spike_times(name) of a cell model (the library's probe
    names: "c<gid>.<probe>" with several cells), spikes (SPIKE_DTYPE) of a network, and t_stop
    (the time the run reached, summary.json's t_ms)."""

    def __init__(self, folder, network):
        folder = os.fspath(folder)
        summary_path = os.path.join(folder, "summary.json")
        try:
            with open(summary_path, encoding="utf-8") as f:
                summary = json.load(f)
            self.t_stop = float(summary["t_ms"])
        except (OSError, ValueError, KeyError, TypeError) as err:
            raise ValueError(f"{summary_path}: expected the summary of `hinesbatch run` with "
                             f"\"t_ms\" ({err})") from None
        if network:
            self.spikes = plot.read_spikes(os.path.join(folder, "spikes.dat"))
            return
        self._traces = {}
        for name, (t, v) in plot.read_traces(folder).items():  # the library's probe names
            self._traces[name] = v
            self.sample_times = t
        self.probe_names = list(self._traces)
        self._spikes = {}
        path = os.path.join(folder, "spikes.csv")
        with open(path, encoding="utf-8", newline="") as f:
            rows = csv.reader(f)
            if next(rows, None) != ["probe", "t_ms"]:
                raise ValueError(f"{path}:1: expected the header 'probe,t_ms'")
            for number, row in enumerate(rows, 2):
                if len(row) != 2:
                    raise ValueError(f"{path}:{number}: expected 2 fields (probe,t_ms), found "
                                     f"{len(row)}")
                self._spikes.setdefault(row[0], []).append(
                    plot._number(path, number, row[1], "t_ms"))

    def trace(self, name):
        return self._traces[name]

    def spike_times(self, name):
        return np.array(self._spikes.get(name, []))


def _pair_spikes(a, b):
    """Spike times of one source in both runs: (matched pairs in order, |largest difference|,
    index of it, counts)."""
    n = min(len(a), len(b))
    if n == 0:
        return 0, 0.0, -1
    d = np.abs(np.asarray(a[:n]) - np.asarray(b[:n]))
    return n, float(d.max()), int(d.argmax())


def compare(model, out="compare.png", t_stop=None, max_traces=6, outputs=None, nrnmech=None):
    """Run `model` (a path, dict or Model) in hinesbatch (or read what `hinesbatch run` wrote
    in the directory `outputs`) and NEURON (with `nrnmech`, nrnivmodl's folder or
    libnrnmech.so, loaded for a network's artificial cells), draw both in `out`; returns
    a dict of the differences: "traces" {probe: largest |v difference| [mV]}, "spikes" {source:
    (hinesbatch's count, NEURON's count, largest |t difference| of the pairs [ms])}, "worst_v"
    (probe, mV, t ms), "worst_spike" (source, ms, spike index), "neuron" (its version)."""
    from hinesbatch import neuron_model
    out = _check_png(out)
    model = hb.Model(model)
    if t_stop is not None:
        model.data["t_stop"] = float(t_stop)
    run = hb.run(model) if outputs is None else Outputs(outputs, model.is_network)
    ref = neuron_model.run(model.data, model.base_dir, nrnmech)
    result = {"neuron": ref["version"], "traces": {}, "spikes": {}, "worst_v": None,
              "worst_spike": None, "model": model.name, "t_stop": run.t_stop,
              "network": model.is_network}
    # spikes by source: a network's gids, a cell model's probes
    if model.is_network:
        ours = {}
        for gid, t in zip(run.spikes["gid"], run.spikes["time"]):
            ours.setdefault(int(gid), []).append(float(t))
        theirs = {}
        for gid, t in ref["spikes"]:
            theirs.setdefault(gid, []).append(t)
    else:
        ours = {name: list(run.spike_times(name)) for name in ref["probe_spikes"]}
        theirs = {name: list(v) for name, v in ref["probe_spikes"].items()}
    order = (sorted(set(ours) | set(theirs)) if model.is_network else
             [p for p in run.probe_names if p in ours or p in theirs])
    for source in order:
        a, b = ours.get(source, []), theirs.get(source, [])
        n, worst, at = _pair_spikes(a, b)
        result["spikes"][source] = (len(a), len(b), worst)
        if n and (result["worst_spike"] is None or worst > result["worst_spike"][1]):
            result["worst_spike"] = (source, worst, at)
    if not model.is_network:
        t = np.array(run.sample_times)
        n = min(len(t), len(ref["t"]))
        if n and abs(t[n - 1] - ref["t"][n - 1]) > 1e-6:
            raise RuntimeError(f"{model.name}: the sample times differ ({t[n - 1]} and "
                               f"{ref['t'][n - 1]} ms): a sampling rule not reproduced")
        for name in run.probe_names:
            if name not in ref["traces"]:
                raise ValueError(f"{model.name}: the outputs' probe {name!r} is not the model's "
                                 f"(expected one of {sorted(ref['traces'])}): another model's "
                                 "outputs?")
            d = np.abs(np.array(run.trace(name))[:n] - ref["traces"][name][:n])
            worst = float(d.max()) if n else 0.0
            result["traces"][name] = worst
            if result["worst_v"] is None or worst > result["worst_v"][1]:
                result["worst_v"] = (name, worst, float(t[int(d.argmax())]) if n else 0.0)
    _draw(run, ref, result, model, out, max_traces)
    return result


def _draw(run, ref, result, model, out, max_traces):
    traced = not model.is_network and run.probe_names
    fig = _figure(9.0, 7.0 if traced else 4.5)
    axes = fig.subplots(2, 1, height_ratios=[3, 2]) if traced else [None, fig.add_subplot()]
    if traced:
        ax = axes[0]
        t = np.array(run.sample_times)
        for k, name in enumerate(run.probe_names[:max_traces]):
            line, = ax.plot(t, run.trace(name), linewidth=1.2, label=f"{name} hinesbatch")
            ax.plot(ref["t"], ref["traces"][name], linestyle="--", linewidth=1.0,
                    color=line.get_color(), label=f"{name} NEURON")
        ax.set_ylabel("v [mV]")
        ax.legend(fontsize="x-small", ncol=2, loc="upper right")
        name, worst, at = result["worst_v"]
        ax.set_title(f"{os.path.basename(model.name)}: largest |dv| {worst:.3g} mV "
                     f"({name}, t = {at:g} ms)")
    ax = axes[1]
    sources = list(result["spikes"])  # gids in order, or probes in the model's order
    row = {s: i for i, s in enumerate(sources)}
    if model.is_network:
        ours = [(row[int(g)], t) for g, t in zip(run.spikes["gid"], run.spikes["time"])]
        theirs = [(row[g], t) for g, t in ref["spikes"]]
    else:
        ours = [(row[s], t) for s in sources for t in run.spike_times(s)]
        theirs = [(row[s], t) for s in sources for t in ref["probe_spikes"][s]]
    for points, style, label in ((ours, dict(marker="|", s=60, color="black"), "hinesbatch"),
                                 (theirs, dict(marker="x", s=14, color="tab:red"), "NEURON")):
        if points:
            y, x = zip(*points)
            ax.scatter(x, y, label=label, **style)
    if not ours and not theirs:
        ax.text(0.5, 0.5, "no spikes", transform=ax.transAxes, ha="center", va="center")
    if not model.is_network and sources:
        ax.set_yticks(range(len(sources)), [str(s) for s in sources])
    ax.set_ylabel("gid" if model.is_network else "probe")
    ax.set_xlabel("t [ms]")
    ax.set_xlim(0, run.t_stop)
    if ours or theirs:
        ax.legend(fontsize="small", loc="upper right")
    worst = result["worst_spike"]
    ax.set_title(f"spikes: {sum(v[0] for v in result['spikes'].values())} hinesbatch, "
                 f"{sum(v[1] for v in result['spikes'].values())} NEURON {result['neuron']}"
                 + (f"; largest |dt| {worst[1]:.3g} ms ({worst[0]})" if worst else ""),
                 fontsize="medium")
    _save(fig, out)


def report(result):
    """The differences as text, largest first."""
    lines = [f"{result['model']}: hinesbatch and NEURON {result['neuron']}, t = 0..{result['t_stop']:g} ms"]
    if result["traces"]:
        name, worst, at = result["worst_v"]
        lines.append(f"  traces: largest |v difference| {worst:.6g} mV ({name} at t = {at:g} ms)")
        for name, d in sorted(result["traces"].items(), key=lambda kv: -kv[1]):
            lines.append(f"    {name}: {d:.6g} mV")
    ours = sum(v[0] for v in result["spikes"].values())
    theirs = sum(v[1] for v in result["spikes"].values())
    differ = [s for s, v in result["spikes"].items() if v[0] != v[1]]
    line = f"  spikes: {ours} hinesbatch, {theirs} NEURON"
    if result["worst_spike"]:
        source, worst, at = result["worst_spike"]
        what = "gid" if result["network"] else "probe"
        line += f"; largest |t difference| {worst:.6g} ms ({what} {source}, spike {at})"
    lines.append(line)
    if differ:
        lines.append(f"  spike counts differ for {len(differ)} source(s): " + ", ".join(
            f"{s} ({result['spikes'][s][0]} vs {result['spikes'][s][1]})" for s in differ[:10]))
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m hinesbatch.compare",
        description="Run a model file in hinesbatch and in NEURON; overlay traces and rasters "
                    "in one PNG and print the largest differences.")
    parser.add_argument("model", help="a model file (docs/model.md, docs/network.md)")
    parser.add_argument("-o", "--output", default="compare.png", help="the PNG (compare.png)")
    parser.add_argument("--t-stop", type=float, help="[ms] instead of the file's t_stop")
    parser.add_argument("--outputs", metavar="DIR",
                        help="compare what `hinesbatch run MODEL -o DIR` wrote instead of "
                             "running the model here")
    parser.add_argument("--library", help="the libhinesbatch.so to load (default: found)")
    parser.add_argument("--nrnmech", metavar="PATH",
                        help="NEURON's mechanisms for the network's artificial cells: the "
                             "folder where nrnivmodl compiled their .mod files, or its "
                             "libnrnmech.so")
    args = parser.parse_args(argv)
    try:
        import neuron  # noqa: F401
    except ImportError as err:
        print(f"hinesbatch.compare: NEURON is not importable by {sys.executable} ({err}); "
              "Debian: python3-neuron", file=sys.stderr)
        return 3
    try:
        if args.library:
            hb.load_library(args.library)
        result = compare(args.model, args.output, args.t_stop, outputs=args.outputs,
                         nrnmech=args.nrnmech)
    except (OSError, ValueError, KeyError, IndexError, RuntimeError, ImportError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        if isinstance(err, OSError) and err.filename and err.strerror:
            message = f"{err.filename}: {err.strerror}"
        print(f"hinesbatch.compare: {message}", file=sys.stderr)
        return 1
    print(report(result))
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    status = main()
    # The status is decided and reported: leave without the interpreter's teardown, where
    # NEURON's objects are freed in no order of ours (a SIGSEGV there once in CI, after the
    # error message and its status 1).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)
