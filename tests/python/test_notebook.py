"""examples/network.ipynb cannot rot: it is nbformat 4 JSON, and its code cells, run in order in
one namespace (no Jupyter: the JSON read, each cell exec'd, matplotlib's non-interactive Agg
backend), build the network, run it and draw the raster and the voltages."""
import json
import os

import numpy as np
import pytest

NOTEBOOK = os.path.join("examples", "network.ipynb")


def read_notebook(root):
    with open(os.path.join(root, NOTEBOOK), encoding="utf-8") as f:
        nb = json.load(f)
    assert nb["nbformat"] == 4 and nb["nbformat_minor"] >= 5
    assert nb["metadata"]["kernelspec"]["language"] == "python"
    ids = [cell["id"] for cell in nb["cells"]]
    assert len(set(ids)) == len(ids)
    for cell in nb["cells"]:
        assert cell["cell_type"] in ("markdown", "code")
        assert isinstance(cell["source"], list) and isinstance(cell["metadata"], dict)
        if cell["cell_type"] == "code":
            assert cell["outputs"] == [] and cell["execution_count"] is None  # kept clean
    return nb


def test_the_notebook_runs(hb, root):
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415

    nb = read_notebook(root)
    code = [cell for cell in nb["cells"] if cell["cell_type"] == "code"]
    assert len(code) >= 4
    namespace = {"__name__": "__notebook__"}
    plt.close("all")
    for k, cell in enumerate(code):
        exec(compile("".join(cell["source"]), f"{NOTEBOOK} code cell {k}", "exec"), namespace)
    net, spikes = namespace["net"], namespace["spikes"]
    assert isinstance(net, hb.Network) and net.time == net.t_stop == 200
    assert len(spikes) > 64 and set(np.unique(spikes["gid"])) >= set(range(64))
    fig = plt.gcf()
    raster, volts = fig.axes
    assert len(raster.lines[0].get_xdata()) == len(spikes)
    assert raster.get_xlim() == (0, 200)
    assert len(volts.lines) == 2 and max(volts.lines[0].get_ydata()) > 0
    plt.close("all")
