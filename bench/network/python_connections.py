"""Building a network's connections from Python (docs/python.md, "Connections as numpy
arrays"): 1,000,000 connections onto ball-and-stick cells, as numpy arrays
(Recipe.connection_arrays) and as connections_on lists, timed from Network(recipe) to its
return, the arrays made beforehand; best of ROUNDS.

    PYTHONPATH=python /usr/bin/python3 bench/network/python_connections.py build/libhinesbatch.so
"""
import sys
import time

import numpy as np

import hinesbatch as hb

ROUNDS = 3


def cell():
    c = hb.Cell.from_sections([hb.Section("soma", 12.6157, 12.6157, nseg=1),
                               hb.Section("dend", 200, 1, parent="soma", nseg=11)])
    c.set(Ra=100).insert("hh", region="soma").insert("pas", section="dend", g=0.001, e=-65)
    c.add_synapse({"section": "dend", "x": 0.5}, "expsyn", tau=2)
    c.add_detector("soma", -10)
    return c


def recipes(n, k):
    rng = np.random.default_rng(1)
    arrays = {"source": rng.integers(0, n, n * k), "target": np.repeat(np.arange(n), k),
              "synapse": np.zeros(n * k, np.intc), "weight": rng.uniform(0, 1e-3, n * k),
              "delay": rng.uniform(1, 5, n * k)}
    the_cell = cell()
    lists = [[hb.connection(int(s), 0, float(w), float(d)) for s, w, d in
              zip(arrays["source"][g * k:(g + 1) * k], arrays["weight"][g * k:(g + 1) * k],
                  arrays["delay"][g * k:(g + 1) * k])] for g in range(n)]

    class Base(hb.Recipe):
        def num_cells(self):
            return n

        def cell_description(self, gid):
            return the_cell

    class Arrays(Base):
        def connection_arrays(self):
            return arrays

    class Lists(Base):
        def connections_on(self, gid):
            return lists[gid]
    return Arrays(), Lists()


def best(recipe, count):
    times = []
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        net = hb.Network(recipe, t_stop=1)
        times.append(time.perf_counter() - t0)
        assert net.stats["local_connections"] == count
        del net
    return min(times)


def main():
    hb.load_library(sys.argv[1] if len(sys.argv) > 1 else None)
    print("cells  connections/cell  arrays [s]  connections_on lists [s]")
    for n, k in ((1000, 1000), (10000, 100)):
        arrays, lists = recipes(n, k)
        print(f"{n:6d}  {k:16d}  {best(arrays, n * k):10.2f}  {best(lists, n * k):24.2f}",
              flush=True)


if __name__ == "__main__":
    main()
