"""Cell simulations from Python: the same traces and spikes as `hinesbatch run` for the same
model file, models from dicts and JSON text, overrides, advance() to a time [ms], arrays of their own that
never block stepping, and errors
that name the JSON key."""
import csv
import json
import math
import os

import numpy as np
import pytest

from conftest import run_cli


def read_cli_run(cli, model, out):
    run_cli(cli, "run", model, "-o", out, "--quiet", "--traces", "wide")
    with open(os.path.join(out, "probes.csv"), encoding="utf-8") as f:
        rows = list(csv.reader(f))
    columns = {name: np.array([float(r[i]) for r in rows[1:]]) for i, name in enumerate(rows[0])}
    spikes = {}
    with open(os.path.join(out, "spikes.csv"), encoding="utf-8") as f:
        for row in list(csv.reader(f))[1:]:
            spikes.setdefault(row[0], []).append(float(row[1]))
    return columns, spikes


@pytest.fixture(scope="module")
def ball_and_stick(root):
    return os.path.join(root, "examples", "ball_and_stick.json")


def test_traces_and_spikes_match_the_cli(hb, cli, ball_and_stick, tmp_path):
    columns, cli_spikes = read_cli_run(cli, ball_and_stick, str(tmp_path / "out"))
    sim = hb.run(ball_and_stick)
    assert sim.probe_names == [c for c in columns if c != "t_ms"]
    np.testing.assert_allclose(sim.sample_times, columns["t_ms"], rtol=1e-12, atol=1e-12)
    for name in sim.probe_names:
        np.testing.assert_allclose(sim.trace(name), columns[name], rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(sim.spike_times(name), cli_spikes[name], rtol=1e-12)
    assert len(cli_spikes["soma"]) == 6
    spikes = sim.spikes
    assert spikes.dtype == hb.SPIKE_DTYPE and len(spikes) == 18
    assert np.all(spikes["gid"] == 0) and np.all(np.diff(spikes["time"]) >= 0)


def test_several_cells_spikes_carry_the_cell(hb, cli, root, tmp_path):
    model = hb.Model(os.path.join(root, "examples", "ball_and_stick.json"))
    cell = model.data["cells"][0]
    # three copies, clamped at different times so that their spikes differ
    model.data["cells"] = [dict(cell, stimuli=[dict(s, **{"del": 2 + 3 * k})
                                               for s in cell["stimuli"]]) for k in range(3)]
    model.data["t_stop"] = 30
    path = tmp_path / "three.json"
    path.write_text(model.to_json())
    _, cli_spikes = read_cli_run(cli, str(path), str(tmp_path / "out"))
    sim = hb.run(model)
    spikes = sim.spikes
    for k in range(3):
        want = sorted(t for name, ts in cli_spikes.items() if name.startswith(f"c{k}.") for t in ts)
        np.testing.assert_allclose(np.sort(spikes["time"][spikes["gid"] == k]), want, rtol=1e-12)
    assert set(spikes["gid"]) == {0, 1, 2}
    order = np.lexsort((spikes["gid"], spikes["time"]))
    assert np.array_equal(order, np.arange(len(spikes)))


def test_dict_text_and_file_agree(hb, ball_and_stick):
    with open(ball_and_stick, encoding="utf-8") as f:
        text = f.read()
    from_file = hb.run(ball_and_stick).trace("soma")
    from_dict = hb.run(json.loads(text)).trace("soma")
    from_text = hb.run(hb.Model.from_json(text)).trace("soma")
    assert np.array_equal(from_file, from_dict) and np.array_equal(from_file, from_text)
    # numpy values in a dict are JSON's numbers and lists
    data = json.loads(text)
    data["t_stop"] = np.float64(data["t_stop"])
    data["cells"][0]["stimuli"][0]["amp"] = np.array(data["cells"][0]["stimuli"][0]["amp"])
    assert np.array_equal(hb.run(data).trace("soma"), from_file)
    with pytest.raises(TypeError, match="which JSON cannot"):
        hb.Model({"t_stop": object()})


def test_morphology_paths_from_the_file_or_base_dir(hb, root, tmp_path, monkeypatch):
    path = os.path.join(root, "examples", "hsn_population.json")
    model = hb.Model(path)
    model.data["cells"][0]["count"] = 2
    model.data["t_stop"] = 5
    sim = hb.run(model)  # ../data/... from examples/
    assert sim.cell_count == 2
    monkeypatch.chdir(tmp_path)
    as_dict = hb.Model(model.data)  # relative to the working directory (empty): not found
    with pytest.raises(hb.HinesbatchError) as err:
        hb.run(as_dict)
    assert "cells[0].morphology" in str(err.value) and err.value.status == "HB_ERR_IO"
    sim2 = hb.run(hb.Model(model.data, base_dir=os.path.join(root, "examples")))
    assert np.array_equal(sim.trace(0), sim2.trace(0))


def test_overrides(hb, ball_and_stick):
    seq = hb.run(ball_and_stick, backend="seq")
    assert seq.backend == "seq"
    omp = hb.run(ball_and_stick, backend="omp", t_stop=20)
    assert omp.backend in ("omp", "seq")  # seq where the build has no OpenMP
    np.testing.assert_array_equal(seq.trace("soma")[:201], omp.trace("soma"))
    short = hb.run(ball_and_stick, t_stop=10)
    assert short.t_stop == 10 and short.time == pytest.approx(10)
    n = len(short.sample_times)
    assert n == 101 and np.array_equal(short.trace("soma"), seq.trace("soma")[:n])


@pytest.mark.skipif("cuda" not in __import__("hinesbatch").backends(), reason="no CUDA device")
def test_cuda_matches_the_cpu(hb, ball_and_stick):
    cpu = hb.run(ball_and_stick, backend="seq")
    gpu = hb.run(ball_and_stick, backend="cuda")
    assert gpu.backend == "cuda"
    np.testing.assert_array_equal(cpu.trace("soma"), gpu.trace("soma"))


def test_advance_takes_a_time_in_ms_as_the_network_does(hb, ball_and_stick):
    sim = hb.Simulation(ball_and_stick, t_stop=2)
    assert sim.dt == pytest.approx(0.025)
    sim.advance(1.0)  # before init(): init() first
    assert sim.time == pytest.approx(1.0) and len(sim.sample_times) == 11
    sim.advance(0.5)  # a time, not a duration: already past it
    assert sim.time == pytest.approx(1.0)
    sim.advance(1.013)  # to the first step at or after it
    assert sim.time == pytest.approx(1.025)
    sim.advance(steps=3)
    assert sim.time == pytest.approx(1.1)
    for bad in (-1, -1e-9, math.nan, -math.inf):
        with pytest.raises(ValueError, match="expected a time"):
            sim.advance(bad)
    for bad in ("1", None, True):
        with pytest.raises(TypeError):
            sim.advance(bad)
    with pytest.raises(TypeError, match="one of them"):
        sim.advance(1.0, steps=2)
    with pytest.raises(ValueError, match="steps = -1"):
        sim.advance(steps=-1)
    with pytest.raises(TypeError, match="whole number"):
        sim.advance(steps=1.5)
    assert sim.time == pytest.approx(1.1)  # nothing refused moved it
    sim.advance(math.inf)  # past t_stop: to t_stop
    assert sim.time == pytest.approx(2.0)
    sim.advance(1e300)
    assert sim.time == pytest.approx(2.0)
    assert np.array_equal(sim.trace("soma"), hb.run(ball_and_stick, t_stop=2).trace("soma"))
    sim.advance(steps=4)  # steps may go past t_stop, as hb_sim_advance
    assert sim.time == pytest.approx(2.1)


def test_arrays_kept_or_shown_never_block_stepping(hb, ball_and_stick):
    sim = hb.Simulation(ball_and_stick, t_stop=2).init()
    sim.advance(1.0)
    shown = sim.trace("soma")[-3:]  # what IPython's Out[] keeps of a displayed cell
    kept, times = sim.trace("soma"), sim.sample_times
    kept_all = sim.traces
    old, old_times = np.array(kept), np.array(times)
    assert len(old) == 11 and old[0] == -65
    assert not kept.flags.writeable and kept.flags.owndata
    assert sim.trace("soma") is kept  # one copy per step, shared
    with pytest.raises(ValueError):
        kept[0] = 0
    sim.advance(2.0)  # the kept arrays do not hold it up
    assert sim.time == pytest.approx(2.0)
    assert np.array_equal(kept, old) and np.array_equal(times, old_times)
    assert np.array_equal(shown, old[-3:]) and np.array_equal(kept_all["soma"], old)
    new = sim.trace("soma")
    assert new is not kept and not np.shares_memory(new, kept)
    assert len(new) == 21 and len(sim.sample_times) == 21
    assert np.array_equal(new[:11], old) and sim.sample_times[-1] == pytest.approx(2.0)
    assert np.array_equal(new, hb.run(ball_and_stick, t_stop=2).trace("soma"))
    sim.init()  # init and run too
    assert len(sim.trace("soma")) == 1 and np.array_equal(kept, old)
    sim.run()
    assert np.array_equal(sim.trace("soma"), new) and np.array_equal(kept, old)
    traces = sim.traces
    assert list(traces) == sim.probe_names
    del sim  # the copies outlive the simulation
    assert len(traces["soma"]) == 21 and traces["soma"][0] == -65


def test_errors_name_the_key(hb, ball_and_stick):
    model = hb.Model(ball_and_stick)
    model.data["cells"][0]["mechanisms"][0]["name"] = "kdr"
    with pytest.raises(hb.HinesbatchError) as err:
        hb.run(model)
    assert "cells[0].mechanisms[0].name" in str(err.value)
    with pytest.raises(ValueError, match="backend 'gpu'"):
        hb.run(ball_and_stick, backend="gpu")
    with pytest.raises(ValueError, match=r"model:1:\d+"):
        hb.Model.from_json('{"t_stop": }')
    with pytest.raises(ValueError, match="duplicate key 't_stop'"):
        hb.Model.from_json('{"t_stop": 1, "t_stop": 2, "cells": []}')
    with pytest.raises(KeyError, match="probe 'axon'"):
        hb.run(ball_and_stick, t_stop=1).trace("axon")
    with pytest.raises(ValueError, match="use Network"):
        hb.Simulation({"t_stop": 1, "cells": [], "network": {}})
