"""Reads traces.h5 for tests/cli_traces.sh (h5py and numpy: Debian's python3-h5py,
python3-numpy). Each command prints what differs and exits 1, or exits 0.

    traces_h5.py layout H5 CELLS PROBES       the SONATA report layout of CELLS x PROBES;
                                              prints the frame count
    traces_h5.py wide H5 PROBES.CSV           every sample: the 17-digit probes.csv's, as float32
    traces_h5.py long H5 TRACES.CSV           every sample: traces.csv's, to its 6 digits
    traces_h5.py same A.h5 B.h5               the same report (data and mapping)
"""
import sys

import h5py
import numpy as np

failures = []


def check(condition, what):
    if not condition:
        failures.append(what)


def report(path):
    f = h5py.File(path, "r")
    return f, f["report/default"]


def layout(path, cells, probes):
    f, pop = report(path)
    cells, probes = int(cells), int(probes)
    n = cells * probes
    m = pop["mapping"]
    check(list(f["report"]) == ["default"], f"populations {list(f['report'])}")
    check(f.attrs["magic"] == 0x0A7A, "root attribute magic")
    check(list(f.attrs["version"]) == [0, 1], "root attribute version")
    data = pop["data"]
    check(data.dtype == np.float32 and data.ndim == 2 and data.shape[1] == n,
          f"data {data.dtype} {data.shape}: expected float32 [frames][{n}]")
    check(data.chunks is not None, "data is not chunked")
    check(data.attrs["units"] in ("mV", b"mV"), f"data units {data.attrs.get('units')!r}")
    check(m["node_ids"].dtype == np.uint64 and list(m["node_ids"][()]) == list(range(cells)),
          f"node_ids {m['node_ids'][()][:8]}...")
    check(m["node_ids"].attrs["sorted"] == 1, "node_ids attribute sorted")
    check(m["index_pointers"].dtype == np.uint64 and
          list(m["index_pointers"][()]) == list(range(0, n + 1, probes)),
          f"index_pointers {m['index_pointers'][()][:8]}...")
    check(m["element_ids"].dtype == np.uint32 and
          list(m["element_ids"][()]) == list(range(probes)) * cells,
          f"element_ids {m['element_ids'][()][:8]}...")
    names = [x.decode() for x in m["element_names"][()]]
    check(len(names) == n and len(set(names)) == probes, f"element_names {names[:4]}...")
    time = m["time"]
    check(time.dtype == np.float64 and time.shape == (3,), f"time {time.dtype} {time.shape}")
    start, stop, dt = time[()]
    check(start == 0 and dt > 0 and round((stop - start) / dt) == data.shape[0],
          f"time {time[()]} for {data.shape[0]} frames (stop open: start + frames x dt)")
    check(time.attrs["units"] in ("ms", b"ms"), f"time units {time.attrs.get('units')!r}")
    print(data.shape[0])


def wide(path, csv):
    _, pop = report(path)
    with open(csv, encoding="utf-8") as f:
        header = f.readline().strip().split(",")
    ref = np.loadtxt(csv, delimiter=",", skiprows=1, ndmin=2)
    data = pop["data"][()]
    m = pop["mapping"]
    cells = len(m["node_ids"])
    names = [x.decode() for x in m["element_names"][()]]
    gids = np.repeat(m["node_ids"][()], np.diff(m["index_pointers"][()].astype(np.int64)))
    expected = [f"c{g}.{n}" if cells > 1 else n for g, n in zip(gids, names)]
    check(header[1:] == expected, f"probes.csv's columns {header[1:4]}... and the report's "
                                  f"{expected[:3]}... differ")
    check(data.shape == (ref.shape[0], ref.shape[1] - 1),
          f"data {data.shape}, probes.csv {ref.shape[0]} samples of {ref.shape[1] - 1}")
    if not failures:
        start, _, dt = m["time"][()]
        t = start + dt * np.arange(len(ref))
        check(np.allclose(t, ref[:, 0], rtol=0, atol=1e-9 * max(1.0, ref[-1, 0])),
              "the report's times are not probes.csv's")
        same = data == ref[:, 1:].astype(np.float32)
        check(same.all(), f"{(~same).sum()} samples differ from probes.csv's as float32, the "
                          f"first at {np.argwhere(~same)[0] if not same.all() else None}")
        check(np.ptp(data) > 50, f"v spans {np.ptp(data)} mV: expected spikes")


def long(path, csv):
    _, pop = report(path)
    data = pop["data"][()]
    rows = np.loadtxt(csv, delimiter=",", skiprows=1, usecols=(0, 2, 3))
    n = data.shape[1]
    check(len(rows) == data.size, f"traces.csv {len(rows)} rows, the report {data.size} samples")
    if not failures:
        v = rows[:, 2].reshape(data.shape)  # rows sample by sample, probes in order
        gids = np.repeat(pop["mapping/node_ids"][()],
                         np.diff(pop["mapping/index_pointers"][()].astype(np.int64)))
        check((rows[:n, 0] == gids).all(), "traces.csv's gids are not the report's")
        bad = np.abs(data - v) > 5e-6 * np.abs(v) + 1e-9
        check(not bad.any(), f"{bad.sum()} samples differ from traces.csv's 6 digits")


def same(a, b):
    _, pa = report(a)
    _, pb = report(b)
    for name in ("data", "mapping/node_ids", "mapping/index_pointers", "mapping/element_ids",
                 "mapping/element_names", "mapping/time"):
        check(np.array_equal(pa[name][()], pb[name][()]), f"{name} differs")


if __name__ == "__main__":
    {"layout": layout, "wide": wide, "long": long, "same": same}[sys.argv[1]](*sys.argv[2:])
    for what in failures:
        print(f"{sys.argv[2]}: {what}", file=sys.stderr)
    sys.exit(1 if failures else 0)
