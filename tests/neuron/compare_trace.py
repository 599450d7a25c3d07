#!/usr/bin/python3
"""hinesbatch's outputs against NEURON's references.

As a command, a run of a cell against NEURON's reference trace (the output of
tests/neuron/nrnref.py's print_trace): the soma's spikes in NEURON's steps (dt 0.025 ms, at
least two), the samples at NEURON's times, v within LIMIT mV at every sample.

Usage: compare_trace.py REFERENCE PROBES.CSV SPIKES.DAT SAMPLES LIMIT-MV
(PROBES.CSV, SPIKES.DAT: `hinesbatch run --traces wide`'s; SAMPLES: the rows both must hold).

As a module (tests/lib_cli.sh's nrn_python puts this folder on the path), report_against: a
network's recorded variables (traces.h5, float32) against NEURON's ('t' and the same columns,
the network references' .v files)."""
import sys


def main():
    reference, probes, spikes_path, samples, limit = sys.argv[1:6]
    lines = open(reference).read().splitlines()
    want = [float(t) for t in next(l for l in lines if l.startswith("# spikes")).split(":")[1].split()]
    ref = [tuple(map(float, l.split())) for l in lines if not l.startswith("#")]
    got = [tuple(map(float, l.split(","))) for l in open(probes).read().splitlines()[1:]]
    spikes = [float(l.split()[1]) for l in open(spikes_path) if not l.startswith("#")]
    assert len(ref) == len(got) == int(samples), (len(ref), len(got))
    assert all(abs(a[0] - b[0]) < 1e-9 for a, b in zip(ref, got))
    worst = max(abs(a[1] - b[1]) for a, b in zip(ref, got))
    steps = lambda ts: [round(t / 0.025) for t in ts]  # noqa: E731
    print("%s: %d spikes, NEURON's %d; soma v within %.3g mV" % (reference.split("/")[-1],
          len(spikes), len(want), worst))
    assert len(want) >= 2 and steps(spikes) == steps(want), (spikes, want)
    assert worst < float(limit), worst


def report_against(name, h5, reference, cells, variables, samples, ulp=None, within=None):
    """traces.h5's report (float32; per cell, the variables in turn) against NEURON's samples
    (%.17g 't' and the same columns): cells x len(variables) columns, at least `samples`
    samples in common; each value within `ulp` float32 ulps of NEURON's rounded to float32
    where ulp is given, within `within` (one limit, or one per variable, in its unit) where that
    is. variables: (name, unit) pairs. Prints a summary line and the first value out of bounds.
    Returns (ours, t, ok): the samples in common and their times."""
    import h5py
    import numpy as np
    with h5py.File(h5, "r") as f:
        ours = np.array(f["report/default/data"])
    ref = np.loadtxt(reference, ndmin=2)
    n = min(len(ours), len(ref))
    ours, t, theirs = ours[:n], ref[:n, 0], ref[:n, 1:]
    k = len(variables)
    ok = n >= samples and ours.shape[1] == theirs.shape[1] == cells * k
    if not ok:
        print("%s: %d samples of %d and %d values, expected at least %d of %d" % (
            name, n, ours.shape[1], theirs.shape[1], samples, cells * k))
        return ours, t, False
    ulps = np.abs(ours.astype(np.float32).view(np.int32).astype(np.int64)
                  - theirs.astype(np.float32).view(np.int32).astype(np.int64))
    diff = np.abs(ours - theirs)
    worst = [diff[:, j::k].max() for j in range(k)]
    print("%s: %d samples of %d cells, %d of %d values NEURON's float32, the others within %d "
          "ulp; largest difference %s" % (name, n, cells, (ulps == 0).sum(), ulps.size,
                                           ulps.max(), ", ".join(("%s %.3g %s" % (v, d, u)).rstrip()
                                                                 for (v, u), d in
                                                                 zip(variables, worst))))
    out = np.zeros(diff.shape, dtype=bool)
    if ulp is not None:
        out |= ulps > ulp
    if within is not None:
        limits = within if isinstance(within, (list, tuple)) else [within] * k
        out |= diff >= np.tile(limits, cells)
    if out.any():
        r, c = np.argwhere(out)[0]
        print("%s: %d values out of bounds, the first at t %.17g ms, cell %d's %s: %.9g, "
              "NEURON %.17g" % (name, out.sum(), t[r], c // k, variables[c % k][0],
                                ours[r, c], theirs[r, c]))
    return ours, t, not out.any()


if __name__ == "__main__":
    main()
