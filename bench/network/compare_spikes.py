#!/usr/bin/env python3
"""Compare two spike files ('gid time' lines; '#' lines, such as spikes.dat's '# gid t_ms'
header, skipped): the same spikes to the time step?

Each spike is taken as (gid, step) with step = round(t / dt) (NEURON records t + 1e-10 at a
step's end; hinesbatch t). Prints one JSON line: counts, spikes in only one file, the largest
time difference of the matched ones. Exit 0 when the multisets are equal.

With --t-stop, spikes at t_stop are left out: NEURON tests a threshold at the start of the
next step, so it does not report a crossing in the run's last step (docs/network.md, section 9).

usage: compare_spikes.py A B [--dt 0.025] [--t-stop T]
"""
import argparse
import collections
import json
import sys


def read(path):
    out = []
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                continue
            g, t = line.split()
            out.append((int(g), float(t)))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--dt", type=float, default=0.025)
    ap.add_argument("--t-stop", type=float)
    a = ap.parse_args()
    sa, sb = read(a.a), read(a.b)
    last = round(a.t_stop / a.dt) if a.t_stop is not None else None
    at_stop = [s for s in sa + sb if last is not None and round(s[1] / a.dt) >= last]
    sa = [s for s in sa if s not in at_stop]
    sb = [s for s in sb if s not in at_stop]
    key = lambda s: (s[0], round(s[1] / a.dt))
    ca = collections.Counter(map(key, sa))
    cb = collections.Counter(map(key, sb))
    times_a = {key(s): s[1] for s in sa}
    worst = max((abs(times_a[k] - t) for g, t in sb for k in [key((g, t))] if k in times_a),
                default=0.0)
    only_a, only_b = sum((ca - cb).values()), sum((cb - ca).values())
    print(json.dumps({"a": a.a, "b": a.b, "spikes_a": len(sa), "spikes_b": len(sb),
                      "at_t_stop_left_out": len(at_stop), "only_a": only_a, "only_b": only_b, "max_time_diff_ms": worst,
                      "same_steps": only_a == 0 and only_b == 0}))
    sys.exit(0 if only_a == 0 and only_b == 0 else 1)


if __name__ == "__main__":
    main()
