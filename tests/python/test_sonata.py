"""`hinesbatch run --sonata`: spikes.h5 in SONATA's layout (/spikes/default/timestamps [ms],
node_ids, the "sorting" enum by_time) holds spikes.dat's spikes, for cells and for a network.
Skipped when h5py is absent or the build has no HDF5 (then the option's error is checked)."""
import os
import subprocess

import numpy as np
import pytest

from conftest import ROOT

EXAMPLES = os.path.join(ROOT, "examples")


def run(cli, model, out):
    return subprocess.run([cli, "run", os.path.join(EXAMPLES, model), "-o", str(out), "--quiet",
                           "--sonata"], capture_output=True, text=True, check=False)


@pytest.fixture(scope="module")
def has_hdf5(cli, tmp_path_factory):
    out = tmp_path_factory.mktemp("probe")
    done = run(cli, "ball_and_stick.json", out)
    if done.returncode != 0:
        assert done.returncode == 1
        assert "--sonata: this build has no HDF5 (Debian: libhdf5-dev" in done.stderr
        assert not os.listdir(out)  # refused before the run
        return False
    return True


@pytest.mark.parametrize("model", ["ball_and_stick.json", "hsn_population.json",
                                   "ring_network.json"])
def test_spikes_h5_holds_spikes_dat(cli, has_hdf5, model, tmp_path):
    if not has_hdf5:
        pytest.skip("this build has no HDF5")
    h5py = pytest.importorskip("h5py", reason="python3-h5py is not installed")
    done = run(cli, model, tmp_path)
    assert done.returncode == 0, done.stderr
    dat = np.loadtxt(tmp_path / "spikes.dat", ndmin=2)
    with h5py.File(tmp_path / "spikes.h5", "r") as f:
        assert list(f["spikes"]) == ["default"]
        pop = f["spikes/default"]
        sorting = h5py.check_enum_dtype(pop.attrs.get_id("sorting").dtype)
        assert sorting == {"none": 0, "by_id": 1, "by_time": 2}
        assert pop.attrs["sorting"] == sorting["by_time"]
        assert pop["timestamps"].dtype == np.float64 and pop["node_ids"].dtype == np.uint64
        assert pop["timestamps"].attrs["units"] in (b"ms", "ms")
        times, ids = pop["timestamps"][:], pop["node_ids"][:]
    assert len(times) == len(dat) > 0
    np.testing.assert_array_equal(ids, dat[:, 0].astype(np.uint64))
    np.testing.assert_allclose(times, dat[:, 1], rtol=1e-9)  # spikes.dat: 10 digits
    assert np.all(np.diff(times) >= 0)
