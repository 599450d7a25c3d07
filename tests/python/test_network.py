"""Networks from Python: the spikes of `hinesbatch run` (spikes.dat) for the example networks,
from a file and from a dict, on seq and omp; stepping by epochs; stats; errors with the key;
Ctrl-C during run() keeps what was computed."""
import hashlib
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from conftest import run_cli


def cli_spikes(cli, model, out):
    run_cli(cli, "run", model, "-o", out, "--quiet")
    rows = np.loadtxt(os.path.join(out, "spikes.dat"), ndmin=2)
    return rows[:, 0].astype(np.uint32), rows[:, 1]


@pytest.mark.parametrize("example", ["ring_network.json", "busyring_small.json"])
def test_spikes_match_the_cli(hb, cli, root, tmp_path, example):
    path = os.path.join(root, "examples", example)
    if example.startswith("busyring"):  # a smaller busyring, for time
        model = hb.Model(path)
        model.data["network"]["busyring"].update({"num-cells": 32, "duration": 60})
        path = str(tmp_path / "busyring.json")
        with open(path, "w", encoding="utf-8") as f:
            f.write(model.to_json())
    gid, time = cli_spikes(cli, path, str(tmp_path / "out"))
    net = hb.run(path)
    spikes = net.spikes
    assert spikes.dtype == hb.SPIKE_DTYPE
    assert len(spikes) == len(gid) > 30
    assert np.array_equal(spikes["gid"], gid)
    np.testing.assert_allclose(spikes["time"], time, rtol=1e-12, atol=1e-12)
    order = np.lexsort((spikes["gid"], spikes["time"]))
    assert np.array_equal(order, np.arange(len(spikes)))
    assert net.stats["spikes"] == len(spikes)


def test_dict_omp_and_epochs_give_the_same_spikes(hb, root):
    path = os.path.join(root, "examples", "ring_network.json")
    reference = hb.run(path).spikes
    model = hb.Model(path)
    assert model.is_network
    assert np.array_equal(hb.run(model.data).spikes, reference)
    # (a shorter run on omp: threads that wait spin, slow on a loaded machine)
    assert np.array_equal(hb.run(model, backend="omp", t_stop=50).spikes,
                          reference[reference["time"] <= 50])
    net = hb.Network(model).init()
    assert net.min_delay == pytest.approx(1.0) and net.local_cells == 68 and net.size == 1
    seen = 0
    for t in (20, 75, 150, net.t_stop):
        net.advance(t)
        assert net.time >= t - 1e-9
        spikes = net.spikes
        assert len(spikes) >= seen and np.all(spikes["time"] <= net.time + 1e-9)
        seen = len(spikes)
    assert np.array_equal(net.spikes, reference)
    short = hb.run(model, t_stop=50)
    assert short.t_stop == 50
    assert np.array_equal(short.spikes, reference[reference["time"] <= 50])


def test_advance_takes_a_time_in_ms_and_refuses_bad_ones(hb, root):
    net = hb.Network(os.path.join(root, "examples", "ring_network.json"), t_stop=10).init()
    for bad in (-1, math.nan, -math.inf):
        with pytest.raises(ValueError, match="expected a time"):
            net.advance(bad)
    with pytest.raises(TypeError):
        net.advance("5")
    net.advance(4)
    assert net.time == pytest.approx(4)
    kept = net.spikes
    old = np.array(kept)
    net.advance(2)  # a time, not a duration: already past it
    assert net.time == pytest.approx(4)
    net.advance(math.inf)  # to t_stop
    assert net.time == pytest.approx(10)
    assert np.array_equal(kept, old)  # spikes kept across steps are copies


def test_stats(hb, root):
    net = hb.run(os.path.join(root, "examples", "ring_network.json"))
    stats = net.stats
    assert stats["local_cells"] == 68 and stats["local_connections"] > 68
    for phase in ("build_s", "init_s", "update_s", "detect_s", "deliver_s", "exchange_s",
                  "exchange_wait_s"):
        assert stats[phase] >= 0
    assert stats["exchange_wait_s"] <= stats["exchange_s"]


def test_errors_name_the_key(hb, root):
    model = hb.Model(os.path.join(root, "examples", "ring_network.json"))
    model.data["network"]["ring"][1]["delay"] = -5
    with pytest.raises(hb.HinesbatchError) as err:
        hb.run(model)
    assert "network.ring[1].delay" in str(err.value)
    with pytest.raises(ValueError, match="use Simulation"):
        hb.Network({"t_stop": 1, "cells": []})
    with pytest.raises(ValueError, match="comm 'tcp'"):
        hb.run(model, comm="tcp")


# SIGINT to the process 0.5 s into run() of the ring network for 100 s (the run would take many
# seconds): it stops at the end of the chunk under way and raises Interrupted, whose `result`
# keeps the spikes up to there.
INTERRUPTED_RUN = """
import hashlib, os, signal, sys, threading
sys.path.insert(0, sys.argv[1])
import hinesbatch as hb
hb.load_library(sys.argv[2])
net = hb.Network(sys.argv[3], t_stop=100000)
threading.Timer(0.5, os.kill, (os.getpid(), signal.SIGINT)).start()
try:
    net.run()
except hb.Interrupted as e:
    assert e.result is net
    print(net.time, len(net.spikes), net.stats["spikes"],
          hashlib.sha256(net.spikes.tobytes()).hexdigest())
    sys.exit(0)
sys.exit(3)
"""


def test_ctrl_c_keeps_what_was_computed(hb, root, request):
    path = os.path.join(root, "examples", "ring_network.json")
    done = subprocess.run([sys.executable, "-c", INTERRUPTED_RUN, os.path.join(root, "python"),
                           hb.library_path(), path], capture_output=True, text=True,
                          timeout=600, check=False)
    assert done.returncode == 0, done.stderr
    t, n, counted, digest = done.stdout.split()
    t, n = float(t), int(n)
    assert 0 < t < 100000 and n == int(counted) > 0
    # what it kept: the spikes of a run stepped to the same time
    net = hb.Network(path, t_stop=100000).init().advance(t)
    assert net.time == t
    assert len(net.spikes) == n
    assert hashlib.sha256(net.spikes.tobytes()).hexdigest() == digest
