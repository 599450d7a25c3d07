#!/usr/bin/env python3
"""bench/mech/run.sh's report: medians of runs.tsv per case and side, the ratios NEURON /
hinesbatch, and the spikes compared cell by cell (the same count on every cell? the times within
a step?). Markdown on stdout.

usage: report.py OUTDIR DEVICE MODEL SWEEP CELLS TSTOP ONE_TSTOP DT CORES
"""
import collections
import csv
import json
import os
import statistics
import sys


def spikes(path, t_stop, dt):
    by = collections.defaultdict(list)
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            g, t = line.split()
            t = float(t)
            if round(t / dt) < round(t_stop / dt):  # NEURON tests a threshold after a step
                by[int(g)].append(t)
    return by


def compare(a, b, dt):
    gids = sorted(set(a) | set(b))
    same_count = [g for g in gids if len(a.get(g, [])) == len(b.get(g, []))]
    worst, steps_off = 0.0, 0
    for g in same_count:
        for x, y in zip(sorted(a[g]), sorted(b[g])):
            worst = max(worst, abs(x - y))
            steps_off = max(steps_off, abs(round(x / dt) - round(y / dt)))
    return {"cells_with_spikes": len(gids), "spikes": sum(len(v) for v in a.values()),
            "spikes_neuron": sum(len(v) for v in b.values()),
            "cells_same_count": len(same_count), "cells_other_count": len(gids) - len(same_count),
            "max_diff_ms": worst, "max_steps_off": steps_off}


def main():
    out, device, model, sweep, cells, t_stop, one_t_stop, dt, cores = sys.argv[1:10]
    dt = float(dt)
    rows = collections.defaultdict(list)
    with open(os.path.join(out, "runs.tsv")) as f:
        for r in csv.DictReader(f, delimiter="\t"):
            rows[(r["case"], r["side"])].append(r)
    cases = []
    for c in ["one", "pop1", "pop" + cores]:
        if (c, "hinesbatch") in rows and (c, "neuron") in rows:
            cases.append(c)
    med = lambda c, s, k: statistics.median(float(r[k]) for r in rows[(c, s)])
    what = {"one": "one cell, 1 core", "pop1": "%s cells, 1 core" % cells,
            "pop" + cores: "%s cells, %s cores (hinesbatch threads, NEURON ranks)" % (cells, cores)}
    print("| case | hinesbatch simulation [s] | NEURON simulation [s] | ratio | "
          "hinesbatch process real / cpu [s] | NEURON process real / cpu [s] | ratio (real, cpu) | "
          "spikes (hinesbatch, NEURON) | cells with another count | largest difference |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c in cases:
        hs, ns = med(c, "hinesbatch", "sim_s"), med(c, "neuron", "sim_s")
        hr, nr = med(c, "hinesbatch", "real_s"), med(c, "neuron", "real_s")
        hc, nc = med(c, "hinesbatch", "cpu_s"), med(c, "neuron", "cpu_s")
        cmp = compare(spikes(os.path.join(out, c + ".hinesbatch.spikes"),
                             float(one_t_stop if c == "one" else t_stop), dt),
                      spikes(os.path.join(out, c + ".neuron.spikes"),
                             float(one_t_stop if c == "one" else t_stop), dt), dt)
        with open(os.path.join(out, c + ".check.json"), "w") as f:
            json.dump(cmp, f)
        print("| %s | %.3f | %.3f | **%.2fx** | %.2f / %.2f | %.2f / %.2f | %.2fx, %.2fx | %d, %d | "
              "%d of %d | %.4g ms (%d steps) |"
              % (what[c], hs, ns, ns / hs, hr, hc, nr, nc, nr / hr, nc / hc, cmp["spikes"],
                 cmp["spikes_neuron"], cmp["cells_other_count"], cmp["cells_with_spikes"],
                 cmp["max_diff_ms"], cmp["max_steps_off"]))
    n = {c: len(rows[(c, "hinesbatch")]) for c in cases}
    print()
    print("Medians of %s rounds (each round hinesbatch then NEURON). Simulation: hinesbatch's "
          "summary `wall_s` and NEURON's finitialize + psolve (barrier to barrier); the build "
          "(morphology, discretisation, mechanisms) left out. Process: the whole command, bash's "
          "`time` (real; user + sys). Ratio: NEURON / hinesbatch. Spikes at the soma, threshold "
          "from the model's probe; a spike in the last step left out (NEURON tests a threshold "
          "after the step). Device: %s. Model `%s`, sweep `%s`, t_stop %s ms (one cell %s ms), "
          "dt %g ms." % (", ".join("%s %d" % (c, n[c]) for c in cases), device,
                         os.path.relpath(model), os.path.relpath(sweep), t_stop, one_t_stop, dt))


if __name__ == "__main__":
    main()
