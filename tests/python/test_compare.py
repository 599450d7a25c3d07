"""hinesbatch.compare: the ball and stick and the ring network run in hinesbatch and NEURON
agree to rounding (traces and every spike), an SWC cell through Import3d to NEURON's single
precision, the differences are measured (an interpolated spike
time moves them within a step), the PNG is written, and what NEURON cannot be given is an error
naming the key. Skipped when NEURON is not importable."""
import json
import os
import subprocess
import sys

import pytest

from conftest import ROOT

pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")
pytest.importorskip("neuron", reason="NEURON's Python module is not installed (python3-neuron)")
from hinesbatch import compare  # noqa: E402
from test_plot import png  # noqa: E402

EXAMPLES = os.path.join(ROOT, "examples")


def test_ball_and_stick(hb, tmp_path):
    result = compare.compare(os.path.join(EXAMPLES, "ball_and_stick.json"), tmp_path / "c.png")
    assert set(result["traces"]) == {"soma", "dend_mid", "dend_tip"}
    assert max(result["traces"].values()) < 1e-6  # mV: the same arithmetic, to rounding
    assert result["spikes"] == {p: (6, 6, pytest.approx(0, abs=1e-6))
                                for p in ("soma", "dend_mid", "dend_tip")}
    assert png(tmp_path / "c.png", (900, 700)) > 20


def test_a_soma_of_two_branches(hb, tmp_path):
    """The root sample with a chain of soma samples each way (tests/reference/neuron-soma/
    twobranch.swc), hh on region "soma": NEURON puts hh in every soma section Import3d makes,
    hinesbatch on the same nodes, so the traces agree to NEURON's single-precision points and
    the spikes to the step (tests/cli_neuron_soma.sh checks the committed trace without NEURON)."""
    model = os.path.join(ROOT, "tests", "reference", "neuron-soma", "twobranch.json")
    result = compare.compare(model, tmp_path / "t.png")
    assert set(result["traces"]) == {"soma", "root", "end"}
    assert max(result["traces"].values()) < 1e-3  # mV
    assert result["spikes"] == {"soma": (3, 3, pytest.approx(0, abs=1e-6))}


def test_ring_network(hb, tmp_path):
    result = compare.compare(os.path.join(EXAMPLES, "ring_network.json"), tmp_path / "r.png")
    counts = {gid: (ours, theirs) for gid, (ours, theirs, _) in result["spikes"].items()}
    assert sum(o for o, _ in counts.values()) == 140
    assert all(o == t for o, t in counts.values()), counts
    assert result["worst_spike"][1] < 1e-6
    png(tmp_path / "r.png", (900, 450))


def test_differences_are_measured(hb, tmp_path):
    """Interpolated spike times (hinesbatch) against NEURON's step times: earlier by less
    than a step, and reported."""
    model = hb.Model(os.path.join(EXAMPLES, "ball_and_stick.json"))
    model.data.update(spike_time="interpolate", t_stop=30)
    result = compare.compare(model, tmp_path / "i.png")
    source, worst, _ = result["worst_spike"]
    assert 1e-4 < worst < model.data["dt"]
    assert "largest |t difference|" in compare.report(result)


def test_a_runs_outputs(hb, cli, tmp_path):
    """--outputs: what `hinesbatch run` wrote (its default traces file: traces.h5, float32,
    or traces.csv's 6 digits) against NEURON, for cells and a network."""
    from conftest import run_cli
    with open(os.path.join(EXAMPLES, "ball_and_stick.json"), encoding="utf-8") as f:
        data = json.load(f)
    data["cells"][0]["count"] = 3  # probes "c<gid>.<probe>"
    model = str(tmp_path / "three.json")
    with open(model, "w", encoding="utf-8") as f:
        json.dump(data, f)
    run_cli(cli, "run", model, "-o", str(tmp_path / "pop"), "--quiet", "--t-stop", "20")
    if (tmp_path / "pop" / "traces.h5").exists():
        pytest.importorskip("h5py", reason="python3-h5py is not installed")
    result = compare.compare(model, tmp_path / "p.png", t_stop=20, outputs=tmp_path / "pop")
    direct = compare.compare(model, tmp_path / "q.png", t_stop=20)
    assert list(result["traces"]) == list(direct["traces"]) and len(result["traces"]) == 9
    assert list(result["traces"])[3] == "c1.soma"
    assert direct["worst_v"][1] < 1e-6
    assert result["worst_v"][1] < direct["worst_v"][1] + 1e-3  # float32 or 6 digits of v
    assert {k: v[:2] for k, v in result["spikes"].items()} == \
        {k: v[:2] for k, v in direct["spikes"].items()}
    assert result["worst_spike"][1] < 1e-6  # spikes.csv: 12 digits
    ring = os.path.join(EXAMPLES, "ring_network.json")
    run_cli(cli, "run", ring, "-o", str(tmp_path / "ring"), "--quiet")
    result = compare.compare(ring, tmp_path / "r.png", outputs=tmp_path / "ring")
    assert sum(ours for ours, _, _ in result["spikes"].values()) == 140
    assert result["worst_spike"][1] < 1e-6
    with pytest.raises(ValueError, match=r"summary.json: expected the summary of `hinesbatch run`"):
        compare.compare(model, tmp_path / "x.png", outputs=tmp_path)


def run_module(hb, *args):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    return subprocess.run([sys.executable, "-m", "hinesbatch.compare", "--library",
                           hb.library_path(), *args], capture_output=True, text=True, env=env,
                          check=False)


def test_command_line(hb, tmp_path):
    done = run_module(hb, os.path.join(EXAMPLES, "ball_and_stick.json"), "--t-stop", "30",
                      "-o", str(tmp_path / "c.png"))
    assert done.returncode == 0, done.stderr
    assert "traces: largest |v difference|" in done.stdout
    assert "spikes: 6 hinesbatch, 6 NEURON" in done.stdout  # 2 spikes a probe by 30 ms
    assert f"wrote {tmp_path / 'c.png'}" in done.stdout
    png(tmp_path / "c.png", (900, 700))


def test_swc_cell(hb, data, tmp_path):
    """l22's 10-point soma through Import3d on both sides (tests/cli_neuron_soma.sh's model)."""
    model = {"t_stop": 20, "sample_dt": 0.25, "cells": [{
        "morphology": os.path.join(data, "morphologies", "l22.CNG.swc"),
        "discretization": {"policy": "per-segment"},
        "mechanisms": [{"name": "pas", "g": 1e-4, "e": -65}, {"name": "hh", "region": "soma"}],
        "stimuli": [{"type": "iclamp", "at": {"section": 0}, "del": 1, "dur": 1e9, "amp": 2}],
        "probes": [{"name": "root", "at": {"section": 0, "x": 0.5}, "spike_threshold": 0},
                   {"name": "soma", "at": "soma"}]}]}
    result = compare.compare(model, tmp_path / "l22.png")
    assert 0 < max(result["traces"].values()) < 1e-3  # mV; NEURON's 3-D points are floats
    assert result["spikes"]["root"][:2] == (1, 1) and result["worst_spike"][1] < 1e-6
    png(tmp_path / "l22.png", (900, 700))


def test_what_neuron_is_not_given(hb, data, tmp_path):
    swc = {"t_stop": 5, "cells": [{"morphology": os.path.join(data, "morphologies",
                                                               "ball_and_stick.swc"),
                                   "probes": [{"at": {"section": 1, "x": 0.5}}]}]}
    (tmp_path / "swc.json").write_text(json.dumps(swc))
    done = run_module(hb, str(tmp_path / "swc.json"), "-o", str(tmp_path / "x.png"))
    assert done.returncode == 1
    assert "cells[0].probes[0].at: {'section': 1, 'x': 0.5}: on an SWC cell NEURON is given" \
        in done.stderr
    ring = json.loads(open(os.path.join(EXAMPLES, "ring_network.json")).read())
    ring["network"]["random"][0]["weight"] = 0.01
    (tmp_path / "ring.json").write_text(json.dumps(ring))
    done = run_module(hb, str(tmp_path / "ring.json"), "-o", str(tmp_path / "x.png"))
    assert done.returncode == 1
    assert "network.random[0].weight: 0.01: NEURON cannot draw" in done.stderr
    assert not (tmp_path / "x.png").exists()


def test_artificial_unknown_to_neuron():
    """An artificial cell NEURON has not loaded is refused by name, not built without it (its
    gids would shift); tests/python/test_artificial.py runs one NEURON has."""
    from hinesbatch import neuron_model
    with pytest.raises(ValueError, match=r"network.artificial\[0\].mechanism: NEURON has no "
                                         r"point process 'IntFire9'; expected its .mod file"):
        neuron_model.run({"t_stop": 1, "cells": [],
                          "network": {"artificial": [{"mechanism": "IntFire9"}]}})
