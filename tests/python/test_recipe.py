"""Models built from Python (python/hinesbatch/recipe.py): a Recipe's network gives the spikes of
the same network from its JSON file, bit for bit; connections as numpy arrays give the spikes of
the same connections one by one, and a million of them build; cells from sections or from
point arrays give the voltages of the equivalent JSON model bit for bit; event generators,
spike sources and probes; errors by name (a callback's own exception, the first bad array
entry, the library's message)."""
import os

import numpy as np
import pytest

RING = os.path.join("examples", "ring_network.json")


def ball_and_stick(hb, e_exp2=-80.0):
    """examples/ring_network.json's cell, built from Python."""
    cell = hb.Cell.from_sections([
        hb.Section("soma", 12.6157, 12.6157, region="soma", nseg=1),
        hb.Section("dend", 200, 1, parent="soma", region="dend", nseg=11)])
    cell.set(Ra=100).insert("hh", region="soma").insert("pas", section="dend", g=0.001, e=-65)
    assert cell.add_synapse({"section": "dend", "x": 0.5}, "expsyn", tau=2, e=0) == 0
    assert cell.add_synapse("soma", "exp2syn", tau1=0.5, tau2=3, e=e_exp2) == 1
    cell.add_probe("soma", "soma", threshold=-10)
    return cell


class Rings:
    """ring_network.json as a recipe: 4 rings of 16 cells, each kicked by a spike source (its
    random connections have weight 0 and change nothing)."""

    def __new__(cls, hb, cell):
        class R(hb.Recipe):
            def num_cells(self):
                return 68

            def cell_description(self, gid):
                return cell if gid < 64 else hb.spike_source(start=1, interval=50, number=1)

            def connections_on(self, gid):
                if gid >= 64:
                    return []
                ring, k = divmod(gid, 16)
                out = [hb.connection(ring * 16 + (k - 1) % 16, 0, 0.05, 5)]
                if k == 0:
                    out.append(hb.connection(64 + ring, 0, 0.05, 1))
                return out
        return R()


def test_a_recipe_gives_the_json_networks_spikes(hb, root):
    reference = hb.run(os.path.join(root, RING)).spikes
    assert len(reference) > 100
    cells = {"Cell": ball_and_stick(hb)}
    data = hb.Model(os.path.join(root, RING)).data["cells"][0]
    cells["dict"] = {k: v for k, v in data.items() if k not in ("name", "count")}
    for cell in cells.values():
        net = hb.Network(Rings(hb, cell), t_stop=200)
        assert net.local_cells == 68 and net.min_delay == 1.0
        spikes = net.run().spikes
        assert np.array_equal(spikes, reference)
    # many gids, one model: a cell is built once (and a dict by its content)
    assert len({k[0] for k in net._built.by_text if isinstance(k[0], str)}) == 1


def random_arrays(n, k, seed):
    rng = np.random.default_rng(seed)
    return {"source": rng.integers(0, n, n * k), "target": np.repeat(np.arange(n), k)[::-1],
            "synapse": rng.integers(0, 2, n * k), "weight": rng.uniform(0, 0.02, n * k),
            "delay": rng.uniform(1, 8, n * k)}


def test_arrays_give_the_per_connection_spikes(hb):
    cell = ball_and_stick(hb, e_exp2=0.0)
    n, arrays = 40, random_arrays(40, 12, 5)

    class Base(hb.Recipe):
        def num_cells(self):
            return n + 2

        def cell_description(self, gid):
            return cell if gid < n else hb.spike_source(1 + gid - n, 9, 8, noise=0.5, seed=3)

    class OneByOne(Base):
        def connections_on(self, gid):
            at = np.flatnonzero(arrays["target"] == gid)
            extra = [hb.connection(n + (gid % 2), 0, 0.05, 1)] if gid < n else []
            return [hb.connection(*(arrays[key][i] for key in
                                    ("source", "synapse", "weight", "delay"))) for i in at] + extra

    class Arrays(Base):
        def connection_arrays(self):
            kicks = np.arange(n)
            return {"source": np.concatenate([arrays["source"], n + kicks % 2]),
                    "target": np.concatenate([arrays["target"], kicks]),
                    "synapse": np.concatenate([arrays["synapse"], np.zeros(n, int)]),
                    "weight": np.concatenate([arrays["weight"], np.full(n, 0.05)]),
                    "delay": np.concatenate([arrays["delay"], np.ones(n)])}

    class Both(Base):  # the arrays and a callback, for the same connections
        def connection_arrays(self):
            return arrays

        def connections_on(self, gid):
            return [hb.connection(n + (gid % 2), 0, 0.05, 1)] if gid < n else []

    one = hb.Network(OneByOne(), t_stop=60).run()
    spikes = one.spikes
    assert len(spikes) > 2 * n and len(np.unique(spikes["gid"])) > n // 2
    assert one.stats["local_connections"] == len(arrays["source"]) + n
    for recipe in (Arrays(), Both()):
        net = hb.Network(recipe, t_stop=60).run()
        assert net.stats["local_connections"] == len(arrays["source"]) + n
        assert np.array_equal(net.spikes, spikes)


def test_a_million_connections_build_from_arrays(hb):
    cell = ball_and_stick(hb)
    n, k = 1000, 1000

    class Dense(hb.Recipe):
        def num_cells(self):
            return n

        def cell_description(self, gid):
            return cell

        def connection_arrays(self):
            return random_arrays(n, k, 1)

    net = hb.Network(Dense(), t_stop=1)
    assert net.local_cells == n
    assert net.stats["local_connections"] == n * k == 1_000_000
    assert net._connections.count == n * k
    assert net.min_delay >= 1.0


def test_bad_arrays_name_the_first_bad_entry(hb):
    cell = ball_and_stick(hb)

    def network(**changes):
        arrays = random_arrays(10, 3, 2)
        arrays.update(changes)

        class R(hb.Recipe):
            def num_cells(self):
                return 10

            def cell_description(self, gid):
                return cell

            def connection_arrays(self):
                return arrays
        return hb.Network(R(), t_stop=5)

    target = np.repeat(np.arange(10), 3)
    target[[7, 9]] = [10, 12]
    with pytest.raises(hb.HinesbatchError, match=r"target\[7\] = 10; expected a gid < n_cells = 10"):
        network(target=target)
    delay = np.ones(30)
    delay[4] = np.nan
    with pytest.raises(hb.HinesbatchError, match=r"delay_ms\[4\] = nan; expected a finite delay"):
        network(delay=delay)
    with pytest.raises(ValueError, match=r"source\[3\] = -1; expected 0\.\.4294967295"):
        network(source=np.array([0, 1, 2, -1] + [0] * 26))
    with pytest.raises(ValueError, match=r"weight has shape \(29,\)"):
        network(weight=np.ones(29))
    with pytest.raises(hb.HinesbatchError, match="synapse 5 does not exist"):
        network(synapse=5)  # a scalar, broadcast; the cells have 2
    with pytest.raises(hb.HinesbatchError, match=r"delay 0\.01 ms; expected .* one step"):
        network(delay=0.01)


def test_callback_errors_are_raised_as_they_were(hb):
    class Broken(hb.Recipe):
        def num_cells(self):
            return 3

        def cell_description(self, gid):
            if gid == 2:
                raise KeyError("no cell 2 here")
            return {"cable": {"length": 100, "diam": 1, "type": "soma"}, "probes": [
                {"at": "soma", "spike_threshold": 0}]}

    with pytest.raises(KeyError, match="no cell 2 here"):
        hb.Network(Broken(), t_stop=5)

    class Wrong(Broken):
        def cell_description(self, gid):
            return 42

    with pytest.raises(TypeError, match=r"cell_description\(0\): int; expected a Cell"):
        hb.Network(Wrong(), t_stop=5)

    class BadCell(Broken):
        def cell_description(self, gid):
            return {"cable": {"length": 100, "diam": 1}, "mechanisms": [{"name": "hhh"}]}

    with pytest.raises(hb.HinesbatchError,
                       match=r"cell_description\(0\): mechanisms\[0\]\.name: unknown mechanism"):
        hb.Network(BadCell(), t_stop=5)
    class NoGeometry(Broken):
        def cell_description(self, gid):
            return {"mechanisms": [{"name": "pas"}]}

    with pytest.raises(hb.HinesbatchError,
                       match=r"^cell_description\(0\): expected exactly one of \"morphology\""):
        hb.Network(NoGeometry(), t_stop=5)
    with pytest.raises(TypeError, match="t_stop"):
        hb.Network(Broken())
    with pytest.raises(TypeError, match="unknown option 'tstop'"):
        hb.Network(Broken(), t_stop=5, tstop=5)


def test_event_generators_and_probes(hb):
    cell = ball_and_stick(hb)

    class Driven(hb.Recipe):
        def __init__(self, schedule):
            self.schedule = schedule

        def num_cells(self):
            return 2

        def cell_description(self, gid):
            return cell

        def event_generators(self, gid):
            return [hb.event_generator(0, 0.05, self.schedule)] if gid == 1 else []

        def probes(self, gid):
            return [hb.probe("v", "soma"), hb.probe("syn[0].g")]

    regular = hb.Network(Driven(hb.regular_schedule(2, 10, 45)), t_stop=50, sample_dt=0.1).run()
    spikes = regular.spikes
    assert len(spikes) == 5 and set(spikes["gid"]) == {1}
    explicit = hb.Network(Driven(hb.explicit_schedule([2, 12, 22, 32, 42, 60])), t_stop=50,
                          sample_dt=0.1).run()
    assert np.array_equal(explicit.spikes, spikes)
    traces = regular.traces
    assert [c[:2] for c in traces.columns] == [(0, "soma.v"), (0, "syn[0].g"), (1, "soma.v"),
                                               (1, "syn[0].g")]
    assert len(traces.times) == 501 and traces.times[-1] == pytest.approx(50)
    assert traces.trace(0, "soma.v").max() < -60  # not driven
    assert traces.trace(1, "soma.v").max() > 0  # spikes
    assert traces.trace(1, "syn[0].g").max() == pytest.approx(0.05, rel=0.05)


def test_poisson_schedules_are_per_gid_and_reproducible(hb):
    schedule = hb.poisson_schedule(5, 0.2, seed=3, tstop=1005)
    t = schedule.times(2000, gid=7)
    assert 150 < len(t) < 250 and t.min() >= 5 and t.max() < 1005 and np.all(np.diff(t) > 0)
    assert np.array_equal(t, hb.poisson_schedule(5, 0.2, seed=3, tstop=1005).times(2000, 7))
    assert not np.array_equal(t[:10], schedule.times(2000, 8)[:10])
    assert np.all(schedule.times(500, 7) == t[t < 500])
    with pytest.raises(ValueError, match="freq = 0"):
        hb.poisson_schedule(0, 0)
    cell = ball_and_stick(hb)

    class Noisy(hb.Recipe):
        def __init__(self, seed):
            self.seed = seed

        def num_cells(self):
            return 4

        def cell_description(self, gid):
            return cell

        def event_generators(self, gid):
            return [hb.event_generator(0, 0.01, hb.poisson_schedule(0, 0.5, self.seed))]

    a, b, c = (hb.Network(Noisy(seed), t_stop=100).run().spikes for seed in (1, 1, 2))
    assert len(a) > 4 and set(a["gid"]) == {0, 1, 2, 3}
    assert np.array_equal(a, b) and not np.array_equal(a, c)


def test_network_probes_name_sections(hb):
    cell = hb.Cell.from_sections([hb.Section("soma", 20, 20), hb.Section("d1", 100, 2),
                                  hb.Section("d2", 100, 1, parent="d1", region=5),
                                  hb.Section("d3", 80, 1, parent="d1", region=6)])
    cell.insert("hh", region="soma").insert("pas", region="all")
    cell.add_iclamp("soma", 1, 2, 0.5)
    index = {name: cell.section_index(name) for name in ("soma", "d1", "d2", "d3")}
    assert sorted(index.values()) == [0, 1, 2, 3]

    class One(hb.Recipe):
        def num_cells(self):
            return 1

        def cell_description(self, gid):
            return cell

        def probes(self, gid):
            return [hb.probe("v", {"section": name, "x": 0.7}) for name in ("d3", "d2")] + \
                [hb.probe("v", {"section": index[name], "x": 0.7}) for name in ("d3", "d2")]

    tr = hb.Network(One(), t_stop=10).run().traces
    assert [c[1] for c in tr.columns[:2]] == [c[1] for c in tr.columns[2:]]
    assert np.array_equal(tr.values[:, :2], tr.values[:, 2:])
    assert not np.array_equal(tr.values[:, 0], tr.values[:, 1])  # two sections, two traces
    with pytest.raises(KeyError, match="section 'd4'"):
        cell.section_index("d4")


def json_cell(cell_dict, t_stop=20):
    return {"t_stop": t_stop, "dt": 0.025, "cells": [cell_dict]}


def test_sections_give_the_json_models_voltages(hb):
    cell = ball_and_stick(hb)
    cell.add_iclamp("soma", 1, 5, 0.3).add_probe({"section": "dend", "x": 0.9}, "tip")
    sim = hb.Simulation(cell, t_stop=20).run()
    spec = {"sections": [
        {"name": "soma", "parent": None, "length": 12.6157, "diam": 12.6157, "type": "soma"},
        {"name": "dend", "parent": "soma", "length": 200, "diam": 1, "type": "dend"}],
        "Ra": 100, "regions": [{"region": "soma", "nseg": 1}, {"region": "dend", "nseg": 11}],
        "mechanisms": [{"name": "hh", "region": "soma"},
                       {"name": "pas", "region": "dend", "g": 0.001, "e": -65}],
        "synapses": [{"type": "expsyn", "at": {"section": "dend", "x": 0.5}, "tau": 2},
                     {"type": "exp2syn", "at": "soma", "tau1": 0.5, "tau2": 3, "e": -80}],
        "probes": [{"name": "soma", "at": "soma", "spike_threshold": -10},
                   {"name": "tip", "at": {"section": "dend", "x": 0.9}}],
        "stimuli": [{"type": "iclamp", "at": "soma", "del": 1, "dur": 5, "amp": 0.3}]}
    ref = hb.Simulation(json_cell(spec)).run()
    assert sim.probe_names == ref.probe_names == ["soma", "tip"]
    assert ref.trace("soma").max() > 0
    for name in ref.probe_names:
        assert np.array_equal(sim.trace(name), ref.trace(name))
    assert np.array_equal(sim.sample_times, ref.sample_times)


@pytest.mark.parametrize("scheme", ["neuron", "vertex"])
def test_points_give_the_swc_models_voltages(hb, data, scheme):
    path = os.path.join(data, "morphologies", "mp_ma_40984_gc2.CNG.swc")
    points = np.loadtxt(path, comments="#", ndmin=2)
    common = {"discretization": {"policy": "d-lambda", "scheme": scheme}, "Ra": 150,
              "mechanisms": [{"name": "hh", "region": "all"}],
              "probes": [{"name": "soma", "at": "soma"}, {"name": "far", "at": {"node": 40}}],
              "stimuli": [{"type": "iclamp", "at": "soma", "del": 1, "dur": 3, "amp": 0.5}]}
    ref = hb.Simulation(json_cell(dict(common, morphology=path))).run()
    cell = hb.Cell.from_points(points)
    cell.discretize(policy="d-lambda", scheme=scheme).set(Ra=150).insert("hh")
    cell.add_probe("soma", "soma").add_probe({"node": 40}, "far")
    cell.add_iclamp("soma", 1, 3, 0.5)
    columns = hb.Cell.from_points(ids=points[:, 0], types=points[:, 1], x=points[:, 2],
                                  y=points[:, 3], z=points[:, 4], radius=points[:, 5],
                                  parents=points[:, 6])
    columns._data = cell._data
    assert ref.trace("soma").max() > 0
    for built in (cell, columns):
        sim = hb.Simulation(built, t_stop=20).run()
        for name in ("soma", "far"):
            assert np.array_equal(sim.trace(name), ref.trace(name)), name


def test_cell_building_errors(hb):
    with pytest.raises(ValueError, match=r"points of shape \(3, 6\)"):
        hb.Cell.from_points(np.zeros((3, 6)))
    pts = np.array([[1, 1, 0, 0, 0, 5, -1], [2, 3, 0, 10, 0, np.nan, 1]])
    with pytest.raises(ValueError, match=r"radius\[1\] = nan"):
        hb.Cell.from_points(pts)
    with pytest.raises(ValueError, match="parent 'axon' is not an earlier section"):
        hb.Cell.from_sections([hb.Section("soma", 10, 10), hb.Section("d", 10, 1, parent="axon")])
    cell = hb.Cell.from_sections([hb.Section("soma", 10, 10), hb.Section("a", 10, 1),
                                  hb.Section("c", 10, 1, parent="a"),
                                  hb.Section("b", 10, 1, parent="a", region=7)])
    with pytest.raises(ValueError, match=r"section 'a' shares its region 3 with \['c'\]"):
        cell.insert("pas", section="a")
    cell.insert("pas", section="b")
    assert cell.description()["mechanisms"] == [{"name": "pas", "region": 7}]
    with pytest.raises(ValueError, match="nseg is per region"):
        hb.Cell.from_sections([hb.Section("soma", 10, 10), hb.Section("a", 10, 1, nseg=3),
                               hb.Section("b", 10, 1, nseg=5)])

    class Connected(hb.Recipe):
        def num_cells(self):
            return 2

        def cell_description(self, gid):
            return cell

        def connections_on(self, gid):
            return [hb.connection(1 - gid, 0, 0.1, 1)]

    with pytest.raises(ValueError, match="use Network"):
        hb.Simulation(Connected(), t_stop=5)


MPI_SCRIPT = """
import hashlib, sys
sys.path[:0] = [{python!r}, {tests!r}]
import hinesbatch as hb
hb.load_library({lib!r})
from test_recipe import Rings, ball_and_stick
recipe = Rings(hb, ball_and_stick(hb))
asked = []
describe = type(recipe).cell_description
type(recipe).cell_description = lambda self, gid: asked.append(gid) or describe(self, gid)
type(recipe).probes = lambda self, gid: [hb.probe("v", "soma")] if gid in (0, 40) else []
net = hb.Network(recipe, t_stop=100, comm=sys.argv[1], sample_dt=0.5).run()
digest = hashlib.sha256(net.spikes.tobytes() + net.traces.values.tobytes()).hexdigest()
with open(f"{{sys.argv[2]}}.{{net.rank}}", "w") as out:  # a file a rank: no interleaving
    print(net.rank, net.size, min(asked), max(asked), len(net.spikes), digest, file=out)
"""


def test_a_recipe_on_two_mpi_ranks(hb, root, request, tmp_path):
    """Each rank asks the recipe for its own gids only, and the spikes and recorded traces are
    the serial run's, bit for bit."""
    import shutil  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    mpirun = shutil.which("mpirun")
    if not mpirun or not hb._lib().hb_comm_available(1):
        pytest.skip("no mpirun, or a build without MPI")
    script = tmp_path / "ranks.py"
    script.write_text(MPI_SCRIPT.format(python=os.path.join(root, "python"),
                                        tests=os.path.dirname(__file__),
                                        lib=hb.library_path()))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_mpi_yield_when_idle="1")

    def run(out, *cmd):
        done = subprocess.run([*cmd, str(tmp_path / out)], capture_output=True, text=True,
                              env=env, timeout=300, check=False)
        assert done.returncode == 0, done.stderr
        ranks = 2 if out == "mpi" else 1
        return [(tmp_path / f"{out}.{r}").read_text().split() for r in range(ranks)]

    serial = run("serial", sys.executable, str(script), "serial")
    ranks = run("mpi", mpirun, "--allow-run-as-root", "--oversubscribe", "-np", "2",
                sys.executable, str(script), "mpi")
    assert serial[0][:5] == ["0", "1", "0", "67", serial[0][4]] and int(serial[0][4]) > 50
    assert [r[:4] for r in ranks] == [["0", "2", "0", "33"], ["1", "2", "34", "67"]]
    assert {r[4] for r in ranks} == {serial[0][4]} and {r[5] for r in ranks} == {serial[0][5]}
