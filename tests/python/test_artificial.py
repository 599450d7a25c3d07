"""Artificial cells in a recipe (docs/python.md, "Recipes"): tests/nmodl/artificial's Pulses and
LeakyFire, loaded by hb.load_catalogue and made by hb.artificial_cell, drive hh cells as in
tests/reference/net_artificial.json: the spikes are the file's bit for bit; bad names and
parameters are refused naming them. The same network translated to NEURON by
hinesbatch.neuron_model (the .mod files through nrnivmodl): every spike in NEURON's step, and
hinesbatch.compare's command line with --nrnmech (skipped without NEURON)."""
import json
import os
import platform
import subprocess
import sys

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


@pytest.fixture(scope="module")
def nrnmech(root, tmp_path_factory):
    """The folder where nrnivmodl compiled tests/nmodl/artificial's .mod files (NEURON's
    library not loaded yet)."""
    pytest.importorskip("neuron", reason="NEURON's Python module is not installed "
                                         "(python3-neuron)")
    sys.path.insert(0, os.path.join(root, "tests", "neuron"))
    from nrnmech import compile_mods
    lib = compile_mods(os.path.join(root, "tests", "nmodl", "artificial"),
                       ["LeakyFire", "Pulses"], str(tmp_path_factory.mktemp("nrn") / "mech_"))
    folder = os.path.dirname(lib)
    while not os.path.isdir(os.path.join(folder, platform.machine())) and folder != "/":
        folder = os.path.dirname(folder)
    return folder, lib


def per_gid(pairs):
    out = {}
    for gid, t in pairs:
        out.setdefault(int(gid), []).append(float(t))
    return out


def test_neuron_model_makes_the_artificial_cells(hb, net_file, nrnmech):
    """neuron_model.run builds the network's Pulses and LeakyFire as NEURON's artificial cells
    (gids 4-7, after the cells, before the NetStim): hinesbatch's spikes through the Python API
    are NEURON's, the same count per gid, each in NEURON's step; before the library is loaded
    the mechanism is refused by name."""
    from hinesbatch import neuron_model
    model, base_dir = net_file
    folder, lib = nrnmech
    from neuron import h
    if not hasattr(h, "LeakyFire"):  # this process has not loaded them (e.g. by --nrnmech)
        with pytest.raises(ValueError, match=r"network.artificial\[0\].mechanism: NEURON has no "
                                             r"point process 'Pulses'; expected its .mod file "
                                             r"compiled by nrnivmodl and loaded first"):
            neuron_model.run(model, base_dir)
    theirs = neuron_model.run(model, base_dir, nrnmech=folder)
    ours = hb.run(hb.Model(model, base_dir=base_dir)).spikes
    ours, theirs = per_gid(zip(ours["gid"], ours["time"])), per_gid(theirs["spikes"])
    assert sorted(theirs) == list(range(9)) and sum(map(len, theirs.values())) == 85
    assert {g: len(t) for g, t in ours.items()} == {g: len(t) for g, t in theirs.items()}
    dt = model["dt"]
    for gid, times in theirs.items():
        d = np.abs(np.array(ours[gid]) - np.array(times))
        assert d.max() < dt / 2, (gid, d.max())
    assert theirs[4] == [5.0 + 7 * k for k in range(12)]  # Pulses: start + k interval
    # the library once per process: the same again through its libnrnmech.so path
    again = neuron_model.run(model, base_dir, nrnmech=lib)
    assert per_gid(again["spikes"]) == theirs
    # artificial cells alone (no section in NEURON): gid 0 the first entry's first copy
    alone = neuron_model.run({"t_stop": 30, "dt": dt, "network": {"artificial": [
        {"mechanism": "Pulses", "start": 5, "interval": 7, "number": 12}]}}, base_dir)
    assert alone["spikes"] == [(0, 5.0), (0, 12.0), (0, 19.0), (0, 26.0)]
    assert len(alone["t"]) == 1201 and alone["t_end"] == pytest.approx(30)


def test_neuron_model_refuses_by_name(hb, net_file, nrnmech, tmp_path):
    from hinesbatch import neuron_model
    model, base_dir = net_file
    folder, _ = nrnmech

    def edited(edit):
        m = json.loads(json.dumps(model))
        edit(m)
        return m

    cases = [
        (lambda m: m["network"]["artificial"][0].update(mechanism="IntFire9"),
         r"network.artificial\[0\].mechanism: NEURON has no point process 'IntFire9'"),
        (lambda m: m["network"]["artificial"][1].update(mechanism="ExpSyn"),
         r"network.artificial\[1\].mechanism: ExpSyn is a point process in NEURON, not an "
         r"ARTIFICIAL_CELL"),
        (lambda m: m["network"]["artificial"][2].update(taus=3),
         r"network.artificial\[2\].taus: LeakyFire has no parameter 'taus' in NEURON"),
        (lambda m: m["network"]["artificial"][2].update(tau="slow"),
         r"network.artificial\[2\].tau: 'slow': expected a number"),
        (lambda m: m["network"].update(artificial={"mechanism": "Pulses"}),
         r"network.artificial: expected an array"),
        (lambda m: m["network"]["connections"][3].update(synapse=1),
         r"network.connections\[3\].synapse: 1: gid 7 has 1 synapse"),
        (lambda m: m["network"]["connections"][0].update(target=8),
         r"network.connections\[0\].target: gid 8: expected a cell's or an artificial "
         r"cell's gid \(0 to 7\)"),
    ]
    for edit, message in cases:
        with pytest.raises(ValueError, match=message):
            neuron_model.run(edited(edit), base_dir, nrnmech=folder)
    with pytest.raises(ValueError, match=r"nrnmech: .*none: no such file or folder"):
        neuron_model.run(model, base_dir, nrnmech=str(tmp_path / "none"))
    with pytest.raises(ValueError, match=r"nrnmech: .*: no \w+/.libs/libnrnmech.so"):
        neuron_model.run(model, base_dir, nrnmech=str(tmp_path))


def test_compare_command_line(hb, root, net_file, nrnmech, tmp_path):
    """python -m hinesbatch.compare NET.json --nrnmech FOLDER: both sides' 85 spikes."""
    pytest.importorskip("matplotlib", reason="python3-matplotlib is not installed")
    model, base_dir = net_file
    path = os.path.join(base_dir, "net_artificial.json")
    with open(path, "w", encoding="utf-8") as f:
        json.dump(model, f)
    env = dict(os.environ, PYTHONPATH=os.path.join(root, "python"), PYTHONFAULTHANDLER="1")
    done = subprocess.run([sys.executable, "-m", "hinesbatch.compare", "--library",
                           hb.library_path(), path, "--nrnmech", nrnmech[0], "-o",
                           str(tmp_path / "a.png")], capture_output=True, text=True, env=env,
                          check=False)
    assert done.returncode == 0, done.stderr
    assert "spikes: 85 hinesbatch, 85 NEURON; largest |t difference|" in done.stdout
    assert "spike counts differ" not in done.stdout
    worst = float(done.stdout.split("largest |t difference| ")[1].split()[0])
    assert worst < model["dt"] / 2
    done = subprocess.run([sys.executable, "-m", "hinesbatch.compare", "--library",
                           hb.library_path(), path, "-o", str(tmp_path / "b.png")],
                          capture_output=True, text=True, env=env, check=False)
    assert done.returncode == 1, done.stderr
    assert "network.artificial[0].mechanism: NEURON has no point process 'Pulses'" in done.stderr
