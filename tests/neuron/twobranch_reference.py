#!/usr/bin/python3
"""NEURON 8.2 reference for a soma of two branches (tests/reference/neuron-soma/twobranch.*):
the root sample with a chain of soma samples each way, read by Import3d as NEURON users read
SWC, with pas everywhere, hh in the soma sections (all of Import3d's soma[k]: its somatic
list), an IClamp at the soma. Run from the repository root with Debian's NEURON:

    /usr/bin/python3 tests/neuron/twobranch_reference.py

Builds twobranch.json in NEURON with the Python module's builder (hinesbatch.neuron_model, as
`python -m hinesbatch.compare` does) and writes twobranch_trace.txt: every probe every
sample_dt and the soma's spike times (read by tests/cli_neuron_soma.sh). It also prints how far
the soma moves when hh sits in the root section alone (soma[0]), the kind of difference the
reference guards against.
"""
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
from hinesbatch import neuron_model  # noqa: E402

REF = os.path.join(HERE, "..", "reference", "neuron-soma")


def main():
    with open(os.path.join(REF, "twobranch.json")) as f:
        model = json.load(f)
    out = neuron_model.run(model, base_dir=REF)
    names = list(out["traces"])
    spikes = out["probe_spikes"]["soma"]
    path = os.path.join(REF, "twobranch_trace.txt")
    with open(path, "w") as f:
        f.write("# NEURON %s Import3d; twobranch.json (pas everywhere, hh in every soma section, "
                "IClamp at soma[0](0.5)); dt 0.025, backward Euler\n" % out["version"])
        f.write("# spikes (NetCon threshold 0 at the soma probe): %s\n"
                % " ".join("%.6f" % t for t in spikes))
        f.write("# t_ms %s\n" % " ".join(names))
        for k, t in enumerate(out["t"]):
            f.write("%.6f %s\n" % (t, " ".join("%.17g" % out["traces"][n][k] for n in names)))
    print("wrote", path, len(out["t"]), "samples, spikes", list(spikes))
    # The same with hh in the root section alone (soma[0]): a soma whose other branch lacks it.
    build = neuron_model._Cell.__init__

    def root_only(self, *args, **kwargs):
        build(self, *args, **kwargs)
        for sec in self.sections[1:]:
            if sec.name().endswith("]") and ".soma[" in sec.name() and sec.has_membrane("hh"):
                sec.uninsert("hh")

    neuron_model._Cell.__init__ = root_only
    alone = neuron_model.run(model, base_dir=REF)
    neuron_model._Cell.__init__ = build
    d = np.max(np.abs(alone["traces"]["soma"] - out["traces"]["soma"]))
    print("hh in soma[0] alone: the soma differs by %.3g mV; spikes %s" %
          (d, list(alone["probe_spikes"]["soma"])))


if __name__ == "__main__":
    main()
