#!/usr/bin/python3
"""A hinesbatch run of a cell against NEURON's reference trace (the output of
tests/neuron/nrnref.py's print_trace): the soma's spikes in NEURON's steps (dt 0.025 ms, at
least two), the samples at NEURON's times, v within LIMIT mV at every sample.

Usage: compare_trace.py REFERENCE PROBES.CSV SPIKES.DAT SAMPLES LIMIT-MV
(PROBES.CSV, SPIKES.DAT: `hinesbatch run --traces wide`'s; SAMPLES: the rows both must hold)."""
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


if __name__ == "__main__":
    main()
