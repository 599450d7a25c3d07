"""hinesbatch's busyring draws in Python, for the peers that re-create it (arbor_busyring.py,
neuron_busyring.py): the parameters, each gid's branches and its connections, exactly as
src/net/net_busyring.c draws them (std::mt19937 seeded by the gid and libstdc++'s
distributions, as Arbor's GCC build of example/busyring draws them; docs/network.md, "busyring").

No simulator is imported here, so that any Python with numpy can use it.
"""
import json
import math

import numpy as np

DEFAULTS = {"num-cells": 5000, "ring-size": 5, "min-delay": 5.0, "duration": 200.0,
            "dt": 0.025, "event-weight": 0.05, "depth": 5, "branch-probs": [1.0, 0.5],
            "compartments": [20, 2], "lengths": [200.0, 20.0], "synapses": 1}

SOMA_RADIUS = 12.6157 / 2.0  # [um]; the soma is a cylinder as long as it is wide
DEND_RADIUS = 0.5            # [um]
KICK_MS = 1.0                # the event each ring's first cell gets [ms]


class Mt:
    """std::mt19937(seed) draws (numpy's legacy seeding is init_genrand)."""
    def __init__(self, seed):
        self.rs = np.random.RandomState(seed)

    def u32(self):
        return int(self.rs.randint(0, 2**32, dtype=np.uint64))

    def canonical(self):  # libstdc++ generate_canonical<double, 53>: two draws
        s = float(self.u32()) + float(self.u32()) * 4294967296.0
        r = s / 18446744073709551616.0
        return r if r < 1.0 else math.nextafter(1.0, 0.0)

    def uniform_u32(self, lo, hi):  # libstdc++ uniform_int_distribution (Lemire)
        rng = hi - lo + 1
        prod = self.u32() * rng
        low = prod & 0xffffffff
        if low < rng:
            thr = (2**32 - rng) % rng
            while low < thr:
                prod = self.u32() * rng
                low = prod & 0xffffffff
        return lo + (prod >> 32)

    def uniform_float(self, lo, hi):  # uniform_real_distribution<float>: one draw, in float
        f = np.float32(self.u32()) / np.float32(4294967296.0)
        if f >= np.float32(1.0):
            f = np.nextafter(np.float32(1.0), np.float32(0.0))
        return np.float32(f * np.float32(hi - lo) + np.float32(lo))


def interp(r, i, n):
    """ring.cpp's interp: r[0] + (i / (n - 1)) (r[1] - r[0])."""
    return r[0] + (i * 1.0 / (n - 1)) * (r[1] - r[0])


def load(path):
    """(parameters, dt [ms], t_stop [ms], hh_table) of a file with network.busyring."""
    with open(path) as f:
        m = json.load(f)
    p = dict(DEFAULTS)
    p.update(m["network"]["busyring"])
    for k in ("complex", "stdp"):  # as hinesbatch: only the simple cell, without STDP
        if p.get(k):
            raise SystemExit("%s: network.busyring.%s: only false is built" % (path, k))
    dt = m.get("dt", p["dt"])
    t_stop = m.get("t_stop", p["duration"])
    return p, dt, t_stop, bool(m.get("hh_table", False))


def branches(p, gid):
    """gid's dendritic branches in the order they are drawn: (level, parent, nc, length [um],
    z0 [um]) with parent the index of the parent branch (-1: the soma's distal end), nc its
    segments (each length / nc long, along z from z0)."""
    out, cur, z0, gen = [], [-1], SOMA_RADIUS, Mt(gid)
    depth = p["depth"]
    for i in range(depth):
        bp = interp(p["branch-probs"], i, depth)
        length = interp(p["lengths"], i, depth)
        nc = int(math.floor(interp(p["compartments"], i, depth) + 0.5))
        nxt = []
        for parent in cur:
            for _ in range(2):
                if not gen.canonical() < bp:
                    continue
                nxt.append(len(out))
                out.append((i, parent, nc, length, z0))
        if not nxt:
            break
        cur, z0 = nxt, z0 + length
    return out


def connections(p, gid):
    """gid's incoming connections, all onto synapse 0: (source gid, weight [uS], delay [ms]),
    the ring's first, then synapses - 1 of weight 0."""
    n, rs = p["num-cells"], p["ring-size"]
    start = gid // rs * rs
    end = min(start + rs, n)
    src = end - 1 if gid == start else gid - 1
    out = [(src, float(np.float32(p["event-weight"])), float(np.float32(p["min-delay"])))]
    g = Mt(gid)
    for _ in range(1, p["synapses"]):
        s = g.uniform_u32(0, n - 2)
        s += s == gid
        d = float(np.float32(p["min-delay"] + float(g.uniform_float(0.0, 2.0 * p["min-delay"]))))
        out.append((s, 0.0, d))
    return out


def kicked(p, gid):
    """Whether gid gets the kick (an event of weight event-weight at KICK_MS on synapse 0)."""
    return gid % p["ring-size"] == 0


def kick_weight(p):
    return float(np.float32(p["event-weight"]))


def swc(p, gid):
    """gid's samples as SWC text, as hb_busyring_samples makes them (for `hinesbatch info`)."""
    rows = ["1 1 0 0 %.17g %.17g -1" % (-SOMA_RADIUS, SOMA_RADIUS),
            "2 1 0 0 %.17g %.17g 1" % (SOMA_RADIUS, SOMA_RADIUS)]
    ends = []
    for level, parent, nc, length, z0 in branches(p, gid):
        par = 2 if parent < 0 else ends[parent]
        for k in range(nc):
            rows.append("%d %d 0 0 %.17g %.17g %d" % (len(rows) + 1, 4 if level % 2 else 3,
                                                      z0 + (k + 1) * (length / nc),
                                                      DEND_RADIUS, par))
            par = len(rows)
        ends.append(par)
    return "\n".join(rows) + "\n"


def write_listing(p, dt, t_stop, path, part=0, parts=1):
    """The gids g with g % parts == part, with their branches and connections as numbers, for
    coreneuron_busyring.hoc (NEURON without Python; rank r reads part r): 'cells dt t_stop
    kick_weight kick_ms gids', then per gid 'gid branches kicked', a line 'level parent nc
    length z0' per branch, 'connections', a line 'source weight delay' per connection.
    Doubles in %.17g, read back exactly."""
    gids = range(part, p["num-cells"], parts)
    with open(path, "w") as f:
        f.write("%d %.17g %.17g %.17g %.17g %d\n" % (p["num-cells"], dt, t_stop,
                                                     kick_weight(p), KICK_MS, len(gids)))
        for gid in gids:
            br = branches(p, gid)
            f.write("%d %d %d\n" % (gid, len(br), kicked(p, gid)))
            for level, parent, nc, length, z0 in br:
                f.write("%d %d %d %.17g %.17g\n" % (level, parent, nc, length, z0))
            conns = connections(p, gid)
            f.write("%d\n" % len(conns))
            f.write("".join("%d %.17g %.17g\n" % c for c in conns))


def main():
    import argparse
    import multiprocessing
    ap = argparse.ArgumentParser(description="the listing of a busyring file for "
                                 "coreneuron_busyring.hoc: PREFIX.0 .. PREFIX.(parts-1)")
    ap.add_argument("net")
    ap.add_argument("prefix")
    ap.add_argument("--parts", type=int, default=1, help="one for each rank of the writer")
    ap.add_argument("--jobs", type=int, default=1, help="processes drawing the parts")
    a = ap.parse_args()
    p, dt, t_stop, hh_table = load(a.net)
    if hh_table:
        raise SystemExit("%s: hh_table true; the neuron-gpu wheel's hh has no table" % a.net)
    with multiprocessing.Pool(a.jobs) as pool:
        pool.starmap(write_listing, [(p, dt, t_stop, "%s.%d" % (a.prefix, r), r, a.parts)
                                     for r in range(a.parts)])


if __name__ == "__main__":
    main()
