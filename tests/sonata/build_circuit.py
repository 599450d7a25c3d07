#!/usr/bin/env python3
"""Builds tests/sonata/circuit/: a small SONATA circuit with bmtk's NetworkBuilder (bmtk 1.2.0
from the package index; not a dependency of hinesbatch, only of this script).

    PYTHONPATH=/path/to/bmtk python3 tests/sonata/build_circuit.py

12 biophysical cells ("cortex": 3 node types over 3 SWC files of data/morphologies, hh on the
soma, pas everywhere; bmtk's model_template ctdb:Biophys1.hoc with the parameter setter alone,
model_processing set_params_allactive) and 4 virtual nodes ("input") whose spike trains are in
inputs/input_spikes.h5. Edges: input -> cortex (Exp2Syn on dendrites, 3 per cell, section and
position per edge in the h5 group; and 2 synapses per cell from input 3 placed by
target_sections and distance_range), cortex -> cortex (a ring of ExpSyn at the soma, 4 ms; and
i -> i + 5 placed by target_sections and distance_range). The builder draws nothing; BioNet
draws the placements at run time (RandomState(gid) per cell), which hinesbatch repeats.
"""
import os
import sys

import h5py
import numpy as np
from bmtk.builder import NetworkBuilder

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.environ.get("HB_SONATA_CIRCUIT_OUT", os.path.join(HERE, "circuit"))  # tests: a copy

# (morphology, dendrite sections by NEURON's section id: hobj.all, soma first), per node type
TYPES = [
    ("simple.swc", [4, 5, 6]),                 # soma, axon 1-3, dend 4-6 in NEURON's order
    ("1220882a.CNG.swc", [4, 10, 18]),
    ("mp_ma_40984_gc2.CNG.swc", [3, 7, 15]),
]


def main():
    os.makedirs(os.path.join(OUT, "network"), exist_ok=True)
    cortex = NetworkBuilder("cortex")
    for t, (morph, _) in enumerate(TYPES):
        cortex.add_nodes(N=4, node_type_id=100 + t, model_type="biophysical",
                         model_template="ctdb:Biophys1.hoc",
                         model_processing="set_params_allactive",
                         dynamics_params="hh_soma_pas.json" if t != 1 else "hh_soma_pas_b.json",
                         morphology=morph, ei="e" if t != 2 else "i", layer=np.array([2, 3, 2, 3]))
    # the ring: cell i -> cell i + 1, ExpSyn at soma(0.5) (section and position per edge: bmtk
    # reads a population's sections per edge group, so not in the type table beside edges
    # without them)
    def ring(source, target):
        return 1 if target.node_id == (source.node_id + 1) % 12 else 0
    cm = cortex.add_edges(source=cortex.nodes(), target=cortex.nodes(), connection_rule=ring,
                          syn_weight=0.3, delay=4.0, model_template="expsyn",
                          dynamics_params="ExpSyn.json", edge_type_id=200)
    cm.add_properties(["afferent_section_id", "afferent_section_pos"],
                      rule=lambda source, target: (0, 0.5), dtypes=[np.int32, np.float64])
    # cell i -> cell i + 5 on dendrites 0-100 um from soma(0), placed by BioNet at run time
    def skip5(source, target):
        return 1 if target.node_id == (source.node_id + 5) % 12 else 0
    cortex.add_edges(source=cortex.nodes(), target=cortex.nodes(), connection_rule=skip5,
                     syn_weight=0.02, delay=6.0, model_template="exp2syn",
                     dynamics_params="Exp2Syn.json", target_sections=["dend"],
                     distance_range=[0.0, 100.0], edge_type_id=201)
    cortex.build()
    cortex.save_nodes(output_dir=os.path.join(OUT, "network"))
    cortex.save_edges(output_dir=os.path.join(OUT, "network"))

    inputs = NetworkBuilder("input")
    inputs.add_nodes(N=4, model_type="virtual", pop_name="stim", node_type_id=300)
    # each cortex cell gets 3 Exp2Syn synapses from input (target % 4, +1, +2), one per dendrite
    def three(source, target):
        return 1 if (source.node_id - target.node_id) % 4 in (0, 1, 2) else 0
    cm = inputs.add_edges(source=inputs.nodes(), target=cortex.nodes(), connection_rule=three,
                          syn_weight=0.03, delay=2.0, model_template="exp2syn",
                          dynamics_params="Exp2Syn.json", edge_type_id=400)
    def place(source, target):
        morph_type = target["node_type_id"] - 100
        k = (source.node_id - target.node_id) % 4
        return TYPES[morph_type][1][k], [0.5, 0.3, 0.7][k]
    cm.add_properties(["afferent_section_id", "afferent_section_pos"], rule=place,
                      dtypes=[np.int32, np.float64])
    # input node 3 -> every cortex cell, 2 synapses each on basal dendrites 20-200 um away,
    # placed by BioNet at run time (its RandomState(gid) per cell)
    inputs.add_edges(source={"node_id": 3}, target=cortex.nodes(), connection_rule=2,
                     syn_weight=0.01, delay=1.5, model_template="exp2syn",
                     dynamics_params="Exp2Syn.json", target_sections=["basal", "apical"],
                     distance_range=[20.0, 200.0], edge_type_id=401)
    inputs.build()
    inputs.save_nodes(output_dir=os.path.join(OUT, "network"))
    inputs.save_edges(output_dir=os.path.join(OUT, "network"))

    # spike trains of the 4 virtual nodes [ms]
    os.makedirs(os.path.join(OUT, "inputs"), exist_ok=True)
    times, ids = [], []
    for node in range(4):
        for k in range(6):
            times.append(5.0 + 20.0 * k + 3.125 * node)
            ids.append(node)
    order = np.argsort(times, kind="stable")
    with h5py.File(os.path.join(OUT, "inputs", "input_spikes.h5"), "w") as f:
        g = f.create_group("spikes/input")
        g.attrs["sorting"] = "by_time"
        ts = g.create_dataset("timestamps", data=np.array(times)[order])
        ts.attrs["units"] = "ms"
        g.create_dataset("node_ids", data=np.array(ids, dtype=np.uint64)[order])
    return 0


if __name__ == "__main__":
    sys.exit(main())
