"""hinesbatch.plot: each plot is written as a PNG of the figure's size with something drawn on
it, from the module's objects and from what `hinesbatch run` writes; bad inputs are errors that
name the file and line or key; `python -m hinesbatch.plot` and the example work end to end."""
import json
import os
import struct
import subprocess
import sys

import numpy as np
import pytest

from conftest import ROOT, run_cli

pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")
from hinesbatch import plot  # noqa: E402

EXAMPLES = os.path.join(ROOT, "examples")


def png(path, size):
    """The file is a PNG of `size` (width, height) pixels with at least `colours` colours."""
    with open(path, "rb") as f:
        head = f.read(24)
    assert head[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    assert head[12:16] == b"IHDR"
    assert struct.unpack(">II", head[16:24]) == size
    assert os.path.getsize(path) > 8000, f"{path}: {os.path.getsize(path)} bytes, a blank figure?"
    import matplotlib.image
    pixels = matplotlib.image.imread(path)
    return len(np.unique(pixels.reshape(-1, pixels.shape[-1]), axis=0))


@pytest.fixture(scope="module")
def ring_run(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("ring")
    run_cli(cli, "run", os.path.join(EXAMPLES, "ring_network.json"), "-o", str(out), "--quiet")
    return out


@pytest.fixture(scope="module")
def cell_run(cli, tmp_path_factory):
    """The ball and stick's outputs: the default traces (traces.h5, or traces.csv in a build
    without HDF5) in the folder, csv/traces.csv and wide/probes.csv below it."""
    out = tmp_path_factory.mktemp("bs")
    model = os.path.join(EXAMPLES, "ball_and_stick.json")
    run_cli(cli, "run", model, "-o", str(out), "--quiet")
    for kind in ("csv", "wide"):
        run_cli(cli, "run", model, "-o", str(out / kind), "--quiet", "--traces", kind)
    return out


def has_h5(cli):
    """Whether this build writes traces.h5 (`hinesbatch --version`'s outputs)."""
    done = subprocess.run([cli, "--version"], capture_output=True, text=True, check=True)
    assert "outputs: csv" in done.stdout
    return "outputs: csv, hdf5" in done.stdout


def hsn_model(data, **extra):
    cell = {"morphology": os.path.join(data, "morphologies", "HSN-fluoro01.CNG.swc"),
            "discretization": {"policy": "d-lambda"}, "mechanisms": [{"name": "hh"}],
            "stimuli": [{"type": "iclamp", "at": "soma", "del": 1, "dur": 3, "amp": 2}]}
    cell.update(extra)
    return {"t_stop": 4, "cells": [cell]}


def test_raster_from_a_network_and_from_spikes_dat(hb, ring_run, tmp_path):
    net = hb.run(os.path.join(EXAMPLES, "ring_network.json"))
    assert plot.raster(net, tmp_path / "a.png") == str(tmp_path / "a.png")
    png(tmp_path / "a.png", (800, 450))
    spikes = plot.read_spikes(ring_run / "spikes.dat")
    np.testing.assert_array_equal(spikes["gid"], net.spikes["gid"])
    np.testing.assert_allclose(spikes["time"], net.spikes["time"], rtol=1e-9)
    plot.raster(str(ring_run / "spikes.dat"), str(tmp_path / "b.png"))
    png(tmp_path / "b.png", (800, 450))


def figures(monkeypatch):
    """The figures the plots draw, kept (each still saved)."""
    kept = []
    save = plot._save
    monkeypatch.setattr(plot, "_save", lambda fig, out: (kept.append(fig), save(fig, out))[1])
    return kept


def test_raster_axes(hb, ring_run, tmp_path, monkeypatch):
    """The time axis spans the run, [0, t_stop], not the spikes; gid ticks are whole numbers,
    also for one cell; a run's summary.json beside spikes.dat gives t_stop."""
    kept = figures(monkeypatch)
    t_stop = json.load(open(ring_run / "summary.json"))["t_stop_ms"]
    plot.raster(ring_run / "spikes.dat", tmp_path / "r.png")
    ax = kept[-1].axes[0]
    assert ax.get_xlim() == (0.0, t_stop)
    one = np.array([(3, 12.5), (3, 20.0)], dtype=hb.SPIKE_DTYPE)
    plot.raster(one, tmp_path / "one.png", t_stop=50)
    ax = kept[-1].axes[0]
    assert ax.get_xlim() == (0.0, 50.0)
    ticks = [t for t in ax.get_yticks() if ax.get_ylim()[0] <= t <= ax.get_ylim()[1]]
    assert ticks == [3.0]
    net = hb.run(os.path.join(EXAMPLES, "ring_network.json"))
    plot.raster(net, tmp_path / "net.png")
    ax = kept[-1].axes[0]
    assert ax.get_xlim() == (0.0, net.t_stop)
    assert all(float(t).is_integer() for t in ax.get_yticks())
    png(tmp_path / "net.png", (800, 450))


def test_legends_beside_the_data(hb, cell_run, tmp_path, monkeypatch):
    """A legend lies right of the axes, over none of the data."""
    kept = figures(monkeypatch)
    plot.traces(cell_run, tmp_path / "t.png")
    fig = kept[-1]
    fig.canvas.draw()
    ax = fig.axes[0]
    legend = ax.get_legend()
    assert legend is not None
    assert legend.get_window_extent().x0 >= ax.get_window_extent().x1
    png(tmp_path / "t.png", (800, 450))


def test_traces_from_files_and_a_simulation(hb, cli, cell_run, tmp_path):
    long = plot.read_traces(cell_run / "csv" / "traces.csv")
    wide = plot.read_traces(cell_run / "wide" / "probes.csv")
    assert list(long) == list(wide) == ["soma", "dend_mid", "dend_tip"]
    for name in long:
        np.testing.assert_allclose(long[name][0], wide[name][0])
        np.testing.assert_allclose(long[name][1], wide[name][1], rtol=1e-5)  # 6 digits
    default = "traces.h5" if has_h5(cli) else "traces.csv"
    other = {"traces.h5": "traces.csv", "traces.csv": "traces.h5"}[default]
    assert (cell_run / default).exists() and not (cell_run / other).exists()
    if default == "traces.h5":
        pytest.importorskip("h5py", reason="python3-h5py is not installed")
    # a directory: its default traces file
    folder = plot.read_traces(cell_run)
    assert list(folder) == list(wide)
    for name in folder:
        np.testing.assert_allclose(folder[name][0], wide[name][0], rtol=1e-12)
        np.testing.assert_allclose(folder[name][1], wide[name][1], rtol=1e-5)
    sim = hb.run(os.path.join(EXAMPLES, "ball_and_stick.json"))
    for i, source in enumerate([cell_run / "csv" / "traces.csv", cell_run / "wide" / "probes.csv",
                                cell_run, sim]):
        out = tmp_path / f"t{i}.png"
        plot.traces(source, out)
        assert png(out, (800, 450)) > 20  # three coloured lines, a legend
    plot.traces(sim, tmp_path / "soma.png", probes=["soma"])
    png(tmp_path / "soma.png", (800, 450))
    with pytest.raises(KeyError, match="no probe 'axon'"):
        plot.traces(sim, tmp_path / "x.png", probes=["axon"])


def test_traces_h5_is_a_sonata_report(cli, tmp_path):
    """traces.h5 of several cells: read_report's columns and read_traces's names are the CSV
    files' (gid and probe), the values probes.csv's as float32."""
    if not has_h5(cli):
        pytest.skip("this build has no HDF5 (traces.csv instead: tests/cli_traces.sh)")
    pytest.importorskip("h5py", reason="python3-h5py is not installed")
    model = os.path.join(EXAMPLES, "hsn_population.json")
    run_cli(cli, "run", model, "-o", str(tmp_path), "--quiet", "--t-stop", "5")
    run_cli(cli, "run", model, "-o", str(tmp_path / "wide"), "--quiet", "--t-stop", "5",
            "--traces", "wide")
    run_cli(cli, "run", model, "-o", str(tmp_path / "csv"), "--quiet", "--t-stop", "5",
            "--traces", "csv")
    columns = plot.read_report(tmp_path / "traces.h5")
    assert len(columns) == 32
    assert [c["gid"] for c in columns] == [g for g in range(16) for _ in range(2)]
    assert [c["element"] for c in columns] == [0, 1] * 16
    wide = plot.read_traces(tmp_path / "wide" / "probes.csv")  # "c<gid>.<probe>"
    assert [f"c{c['gid']}.{c['name']}" for c in columns] == list(wide)
    for c, (t, v) in zip(columns, wide.values()):
        np.testing.assert_allclose(c["t"], t, rtol=0, atol=1e-12)
        np.testing.assert_array_equal(c["v"], v.astype(np.float32))
    # one naming scheme, the library's: traces.h5, traces.csv and probes.csv alike
    assert list(plot.read_traces(tmp_path)) == list(wide)
    assert list(plot.read_traces(tmp_path / "csv")) == list(wide)


def test_a_report_of_another_writer(tmp_path):
    """A SONATA report without element_names (CoreNEURON's): element ids name the columns;
    a layout that does not add up is an error naming the file and dataset."""
    h5py = pytest.importorskip("h5py", reason="python3-h5py is not installed")
    path = tmp_path / "soma.h5"
    with h5py.File(path, "w") as f:
        pop = f.create_group("report/All")
        pop["data"] = np.arange(12, dtype=np.float32).reshape(4, 3)
        pop["mapping/node_ids"] = np.array([7, 9], dtype=np.uint64)
        pop["mapping/index_pointers"] = np.array([0, 1, 3], dtype=np.uint64)
        pop["mapping/element_ids"] = np.array([0, 0, 1], dtype=np.uint32)
        pop["mapping/time"] = np.array([10.0, 10.4, 0.1])
    series = plot.read_traces(path)
    assert list(series) == ["c7.0", "c9.0", "c9.1"]
    np.testing.assert_allclose(series["c9.1"][0], [10.0, 10.1, 10.2, 10.3])
    np.testing.assert_array_equal(series["c9.1"][1], [2, 5, 8, 11])
    with h5py.File(path, "a") as f:
        f["report/All/mapping/time"][1] = 10.6
    with pytest.raises(ValueError, match=r"soma.h5: /report/All/mapping/time: .* is 6 frames; "
                                         r"data has 4"):
        plot.read_traces(path)
    with h5py.File(path, "a") as f:
        del f["report/All/mapping/index_pointers"]
        f["report/All/mapping/index_pointers"] = np.array([0, 1], dtype=np.uint64)
    with pytest.raises(ValueError, match=r"soma.h5: /report/All/mapping: 2 node_ids, 2 "
                                         r"index_pointers"):
        plot.read_traces(path)
    with h5py.File(path, "w") as f:
        f["x"] = 1
    with pytest.raises(ValueError, match=r"soma.h5: /report: missing; expected a SONATA report"):
        plot.read_traces(path)


def test_morphology_by_type_and_by_voltage(hb, data, tmp_path):
    swc = os.path.join(data, "morphologies", "HSN-fluoro01.CNG.swc")
    plot.morphology(swc, tmp_path / "type.png", plane="xz")
    png(tmp_path / "type.png", (700, 700))
    plot.morphology(hsn_model(data), tmp_path / "v.png", time=3)
    assert png(tmp_path / "v.png", (700, 700)) > 50  # a colour map, not one colour
    # the voltages drawn are the simulation's: the stimulated soma is the most depolarised
    swc_path, units, v, t = plot.cell_voltages(hsn_model(data), 0, 3)
    assert t == pytest.approx(3) and units == "um"
    samples = plot._read_swc(swc_path, units)
    soma_ids = samples["id"][samples["type"] == 1]
    values = np.array(list(v.values()))
    assert len(v) > 100 and np.all(np.isfinite(values))
    assert max(v[int(s)] for s in soma_ids if int(s) in v) == pytest.approx(values.max(), abs=0.5)
    assert values.max() - values.min() > 0.5  # a gradient along the cell


def test_morphology_checks_the_cable_it_rebuilds(hb, data, tmp_path):
    # nseg per region and the vertex scheme: rebuilt the library's way (else an error)
    model = hsn_model(data, discretization={"policy": "fixed", "nseg": 3, "scheme": "vertex"},
                      regions=[{"region": "dend", "nseg": 5}])
    plot.morphology(model, tmp_path / "v.png", time=2)
    png(tmp_path / "v.png", (700, 700))


def test_phases_from_summary(ring_run, tmp_path):
    plot.phases(ring_run / "summary.json", tmp_path / "p.png")
    png(tmp_path / "p.png", (800, 450))
    summary = json.loads((ring_run / "summary.json").read_text())
    first = summary["per_rank"][0]
    summary["per_rank"] = [dict(first, rank=r, update_s=first["update_s"] * (1 + r / 10))
                           for r in range(12)]
    plot.phases(summary, tmp_path / "p12.png")  # many ranks: mean and range
    png(tmp_path / "p12.png", (800, 450))


def test_bad_inputs(hb, data, cell_run, tmp_path):
    bad = tmp_path / "spikes.dat"
    bad.write_text("0 1.5\n3 x\n")
    with pytest.raises(ValueError, match=r"spikes.dat:2: expected 'gid time'"):
        plot.raster(bad, tmp_path / "r.png")
    bad.write_text("t,v\n1,2\n")
    with pytest.raises(ValueError, match=r"spikes.dat:1: expected the header 'gid,probe"):
        plot.traces(bad, tmp_path / "t.png")
    bad.write_text("gid,probe,t_ms,v_mv\n0,soma,0,-65\n0,soma,0.1\n")
    with pytest.raises(ValueError, match=r"spikes.dat:3: expected 4 fields"):
        plot.traces(bad, tmp_path / "t.png")
    with pytest.raises(ValueError, match=r"summary.json: per_rank: missing; expected a network"):
        plot.phases(cell_run / "summary.json", tmp_path / "p.png")
    with pytest.raises(hb.HinesbatchError, match=r"arbor_bad4_duplicate_id.swc:\d+:"):
        plot.morphology(os.path.join(data, "morphologies-bad", "arbor_bad4_duplicate_id.swc"),
                        tmp_path / "m.png")
    with pytest.raises(ValueError, match=r"cells\[0\]: no \"morphology\""):
        plot.morphology(os.path.join(EXAMPLES, "ball_and_stick.json"), tmp_path / "m.png")
    with pytest.raises(ValueError, match=r"a network; the morphology plot runs cell models"):
        plot.morphology(os.path.join(EXAMPLES, "ring_network.json"), tmp_path / "m.png")
    with pytest.raises(ValueError, match=r"m.jpg: expected a file name ending in .png"):
        plot.raster(cell_run / "spikes.dat", tmp_path / "m.jpg")
    with pytest.raises(FileNotFoundError):
        plot.raster(tmp_path / "none.dat", tmp_path / "r.png")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ValueError, match=r"empty: no traces.h5 or traces.csv or probes.csv in "
                                         r"this directory \(expected the outputs of `hinesbatch "
                                         r"run` with traces\)"):
        plot.traces(tmp_path / "empty", tmp_path / "t.png")
    for name in ("r.png", "t.png", "p.png", "m.png"):
        assert not (tmp_path / name).exists()


def module_env(hb):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return env


def test_command_line(hb, ring_run, tmp_path):
    base = [sys.executable, "-m", "hinesbatch.plot", "--library", hb.library_path()]
    done = subprocess.run(base + ["raster", str(ring_run / "spikes.dat"), "-o",
                                  str(tmp_path / "r.png")], capture_output=True, text=True,
                          env=module_env(hb), check=False)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"wrote {tmp_path / 'r.png'}"
    png(tmp_path / "r.png", (800, 450))
    done = subprocess.run(base + ["phases", str(tmp_path / "none.json"), "-o",
                                  str(tmp_path / "p.png")], capture_output=True, text=True,
                          env=module_env(hb), check=False)
    assert done.returncode == 1
    assert done.stderr.startswith("hinesbatch.plot: ") and "none.json: No such file" in done.stderr
    done = subprocess.run(base + ["bars", "x"], capture_output=True, text=True,
                          env=module_env(hb), check=False)
    assert done.returncode == 2 and "invalid choice: 'bars'" in done.stderr


def test_the_example(hb, data, tmp_path):
    """examples/plot_cell.py: an SWC file to a PNG in five lines."""
    script = os.path.join(EXAMPLES, "plot_cell.py")
    with open(script, encoding="utf-8") as f:
        code = [line for line in f.read().split('"""')[2].splitlines() if line.strip()]
    assert len(code) <= 6  # five statements, one over two lines
    env = module_env(hb)
    env["LD_LIBRARY_PATH"] = os.path.dirname(os.path.abspath(hb.library_path()))
    done = subprocess.run([sys.executable, script,
                           os.path.join(data, "morphologies", "v_e_moto1.CNG.swc"),
                           str(tmp_path / "cell.png")], capture_output=True, text=True,
                          env=env, check=False)
    assert done.returncode == 0, done.stderr
    assert png(tmp_path / "cell.png", (700, 700)) > 50
