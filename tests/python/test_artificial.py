"""Artificial cells in a recipe (docs/python.md, "Recipes"): tests/nmodl/artificial's Pulses and
LeakyFire, loaded by hb.load_catalogue and made by hb.artificial_cell, drive hh cells as in
tests/reference/net_artificial.json: the spikes are the file's bit for bit; bad names and
parameters are refused naming them."""
import json
import os
import subprocess

import numpy as np
import pytest


@pytest.fixture(scope="module")
def net_file(cli, root, tmp_path_factory):
    """The reference network and the folder holding its catalogue (loaded into the process)."""
    import hinesbatch as hb
    tmp = tmp_path_factory.mktemp("artificial")
    built = subprocess.run([cli, "build-catalogue", os.path.join(root, "tests", "nmodl",
                                                                 "artificial"),
                            "-o", str(tmp / "artificial.so")], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr
    assert hb.load_catalogue(str(tmp / "artificial.so")) == "artificial"
    with open(os.path.join(root, "tests", "reference", "net_artificial.json"),
              encoding="utf-8") as f:
        return json.load(f), str(tmp)


def test_recipe_artificial_cells_are_the_files(hb, net_file):
    model, base_dir = net_file
    cells = model["cells"][0]
    cell = {k: v for k, v in cells.items() if k not in ("name", "count")}
    art = [hb.artificial_cell(a["mechanism"], **{k: v for k, v in a.items()
                                                 if k not in ("name", "count", "mechanism")})
           for a in model["network"]["artificial"] for _ in range(a.get("count", 1))]
    src = model["network"]["sources"][0]
    gids = [cell] * cells["count"] + art + [hb.spike_source(src["start"], src["interval"],
                                                            src["number"])]
    conns = model["network"]["connections"]

    class Net(hb.Recipe):
        def num_cells(self):
            return len(gids)

        def cell_description(self, gid):
            return gids[gid]

        def connections_on(self, gid):
            return [hb.connection(c["source"], c["synapse"], c["weight"], c["delay"])
                    for c in conns if c["target"] == gid]

    ours = hb.Network(Net(), t_stop=model["t_stop"], backend="seq", dt=model["dt"],
                      v_init=model["v_init"], celsius=model["celsius"]).run().spikes
    theirs = hb.run(hb.Model(model, base_dir=base_dir)).spikes
    assert len(theirs) > 40 and np.count_nonzero(ours["gid"] == 4) == 12
    assert np.array_equal(ours["gid"], theirs["gid"])
    assert ours["time"].tobytes() == theirs["time"].tobytes()


def test_bad_artificial_cells(hb, net_file):
    class One(hb.Recipe):
        def __init__(self, desc):
            super().__init__()
            self.desc = desc

        def num_cells(self):
            return 1

        def cell_description(self, gid):
            return self.desc

    cases = [(hb.artificial_cell("LeakyFir"), r'cell_description\(0\): hb_model_create_'
                                                r'artificial: unknown mechanism "LeakyFir"; '
                                                r'did you mean "LeakyFire"\?'),
             (hb.artificial_cell("pas"), r"pas is a density mechanism"),
             (hb.artificial_cell("ExpSyn"), r"ExpSyn is a point process"),
             (hb.artificial_cell("LeakyFire", taus=3), r'no parameter "taus"; did you mean '
                                                       r'"tau"\?'),
             (hb.artificial_cell("Pulses", interval=0), r"Pulses's interval = 0 ms; expected "
                                                        r"a number from 1e-09")]
    for desc, message in cases:
        with pytest.raises(hb.HinesbatchError, match=message):
            hb.Network(One(desc), t_stop=1)
    with pytest.raises(hb.HinesbatchError, match=r"none\.so: no such file"):
        hb.load_catalogue("none.so")
