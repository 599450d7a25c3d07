"""Recording in networks from Python (docs/network.md, section 8): Network.record and the
file's "record" section give numpy traces whose values are the CLI's traces.h5 (float32) and
traces.csv; times in ms; columns by gid; errors name what is wrong."""
import os

import numpy as np
import pytest

from conftest import run_cli


def ring(hb, root, record=None):
    model = hb.Model(os.path.join(root, "examples", "ring_network.json"))
    model.data["t_stop"] = 30
    if record is not None:
        model.data["record"] = record
    return model


def test_record_section_matches_the_cli_report(hb, cli, root, tmp_path):
    record = [{"gids": [0, "16-17"], "variables": ["v", "hh.m", "hh.ik", "syn[0].g"],
               "sample_dt": 0.1},
              {"gids": [2], "locations": [{"section": 1, "x": 0.5}], "variables": ["pas.i"],
               "sample_dt": 0.1}]
    model = ring(hb, root, record)
    tr = hb.run(model).traces
    assert isinstance(tr, hb.Traces)
    assert tr.values.shape == (301, 13) and tr.times.shape == (301,)
    assert np.array_equal(tr.times, np.arange(301) * 4 * 0.025)
    assert [c[0] for c in tr.columns] == [0] * 4 + [2] + [16] * 4 + [17] * 4
    assert tr.columns[4] == (2, "sec1(0.5).pas.i", "mA/cm2")
    assert tr.trace(0, "soma.v")[0] == -65.0 and tr.trace(0, "soma.v").max() > 0
    with pytest.raises(KeyError, match="soma.v"):
        tr.trace(5, "soma.v")
    path = str(tmp_path / "net.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(model.to_json())
    run_cli(cli, "run", path, "-o", str(tmp_path / "csv"), "--traces", "csv", "--quiet")
    rows = np.loadtxt(str(tmp_path / "csv" / "traces.csv"), delimiter=",", skiprows=1,
                      usecols=(0, 2, 3))
    assert np.array_equal(rows[:, 0].reshape(301, 13)[0], [c[0] for c in tr.columns])
    np.testing.assert_allclose(rows[:, 2].reshape(301, 13), tr.values, rtol=1e-8, atol=1e-15)
    try:
        import h5py
    except ImportError:
        return
    run_cli(cli, "run", path, "-o", str(tmp_path / "h5"), "--traces", "h5", "--quiet")
    with h5py.File(str(tmp_path / "h5" / "traces.h5"), "r") as f:
        data = f["report/default/data"][:]
    assert np.array_equal(data, tr.values.astype(np.float32))


def test_record_call_equals_the_section(hb, root):
    section = hb.run(ring(hb, root, {"gids": [5], "variables": ["v", "syn[1].i"],
                                     "sample_dt": 0.05})).traces
    net = hb.Network(ring(hb, root)).record([5], ["v", "syn[1].i"], sample_dt=0.05)
    tr = net.run().traces
    assert tr.columns == section.columns == [(5, "soma.v", "mV"), (5, "syn[1].i", "nA")]
    assert np.array_equal(tr.values, section.values)
    # omp and stepping by epochs give the same bits
    net = hb.Network(ring(hb, root), backend="omp").record([5], ["v", "syn[1].i"], sample_dt=0.05)
    net.init()
    for t in (7, 19, 30):
        net.advance(t)
    assert np.array_equal(net.traces.values, section.values)


def test_record_errors(hb, root):
    with pytest.raises(hb.HinesbatchError, match='did you mean "hh.m"'):
        hb.Network(ring(hb, root)).record([0], ["hh.mm"])
    with pytest.raises(hb.HinesbatchError, match="no hh at node"):
        hb.Network(ring(hb, root)).record([0], ["hh.m"], [{"section": 1, "x": 0.5}])
    with pytest.raises(hb.HinesbatchError, match="spike source"):
        hb.Network(ring(hb, root)).record([64], ["v"])
    with pytest.raises(ValueError, match="location"):
        hb.Network(ring(hb, root)).record([0], ["v"], ["dend"])
    with pytest.raises(hb.HinesbatchError, match="before hb_net_init"):
        hb.Network(ring(hb, root)).init().record([0], ["v"])
    with pytest.raises(hb.HinesbatchError, match=r"record\.gids\[0\]"):
        hb.Network(ring(hb, root, {"gids": [99]}))


def test_plot_reads_a_networks_traces(hb, cli, root, tmp_path):
    from hinesbatch import plot
    model = ring(hb, root, {"gids": [0, 1], "variables": ["v"], "sample_dt": 0.5})
    net = hb.run(model)
    assert plot.traces(net, str(tmp_path / "t.png")) == str(tmp_path / "t.png")
    assert os.path.getsize(tmp_path / "t.png") > 1000
    path = str(tmp_path / "net.json")
    with open(path, "w", encoding="utf-8") as f:
        f.write(model.to_json())
    out = tmp_path / "out"
    run_cli(cli, "run", path, "-o", str(out), "--traces", "csv", "--quiet")
    series = plot.read_traces(str(out / "traces.csv"))
    assert sorted(series) == ["c0.soma.v", "c1.soma.v"]
    np.testing.assert_allclose(series["c0.soma.v"][1], net.traces.trace(0, "soma.v"), rtol=1e-8)
    np.testing.assert_allclose(series["c1.soma.v"][0], net.traces.times, rtol=1e-12)
