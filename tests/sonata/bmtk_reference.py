#!/usr/bin/env python3
"""Runs a SONATA simulation config with bmtk's BioNet on NEURON (the reference of
tests/sonata_bmtk.sh) and writes its spikes as `gid t_ms` lines, as hinesbatch's spikes.dat.

    PYTHONPATH=/path/to/bmtk HB_NRNMECH=.../libnrnmech.so python3 bmtk_reference.py \
        simulation_config.json OUT_DIR

HB_NRNMECH: NEURON's mechanisms library with bmtk's vecevent.mod (VecStim, which bmtk's
virtual cells play their spike trains through), where NEURON lacks it.

The config's output goes to OUT_DIR (a copy of the config says so). bmtk's model_processing
"set_params_allactive" is registered as bmtk's own set_params_allactive alone (the parameter
setter of aibs_allactive without its axon stub), the form hinesbatch reads (docs/sonata.md).
"""
import json
import os
import sys


def main():
    config, out = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    os.makedirs(out, exist_ok=True)
    with open(config) as f:
        conf = json.load(f)
    conf["manifest"]["$BASE_DIR"] = os.path.dirname(config)
    conf["output"] = {"output_dir": out, "spikes_file": "spikes.h5", "log_file": "log.txt",
                      "overwrite_output_dir": True}
    copy = os.path.join(out, "simulation_config.json")
    with open(copy, "w") as f:
        json.dump(conf, f, indent=1)

    from neuron import h
    if not hasattr(h, "VecStim"):  # bmtk's virtual cells: vecevent.mod, built by the caller
        lib = os.environ.get("HB_NRNMECH", "")
        if not lib or h.nrn_load_dll(lib) != 1:
            sys.exit("bmtk_reference.py: NEURON has no VecStim; set HB_NRNMECH to a "
                     "libnrnmech.so built from bmtk's vecevent.mod")
    from bmtk.simulator import bionet
    from bmtk.simulator.bionet.default_setters.cell_models import set_params_allactive
    from bmtk.simulator.bionet.pyfunction_cache import add_cell_processor

    def params_only(hobj, cell, dynamics_params):
        set_params_allactive(hobj, dynamics_params)
        return hobj

    add_cell_processor(params_only, "set_params_allactive", overwrite=True)
    cfg = bionet.Config.from_json(copy, validate=True)
    cfg.build_env()
    net = bionet.BioNetwork.from_config(cfg)
    sim = bionet.BioSimulator.from_config(cfg, network=net)
    sim.run()

    import h5py
    with h5py.File(os.path.join(out, "spikes.h5"), "r") as f:
        pops = list(f["spikes"])
        rows = []
        for pop in pops:
            g = f["spikes"][pop]
            rows += [(float(t), int(n)) for t, n in zip(g["timestamps"][()], g["node_ids"][()])]
    rows.sort()
    with open(os.path.join(out, "spikes.dat"), "w") as f:
        f.write("# gid t_ms\n")
        for t, n in rows:
            f.write(f"{n} {t:.10g}\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
