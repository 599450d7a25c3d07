#!/usr/bin/env bash
# hinesbatch run on a SONATA circuit (docs/sonata.md): tests/sonata/circuit (built with bmtk,
# tests/sonata/build_circuit.py; synapses at given sections and placed by bmtk's random draws,
# spike trains and current clamps as inputs) gives bmtk BioNet's
# NEURON spikes byte for byte (reference_spikes.dat, written by tests/sonata/bmtk_reference.py),
# on 1 and 2 threads and 2 ranks;
# spikes.h5 and traces.h5 name the population and the report's node set; malformed circuits
# (a missing file, dataset or manifest variable, bad ids, an unknown population or node set,
# what hinesbatch cannot build) are refused naming the file and key; the network file's
# "events". Without HDF5 a circuit is refused saying so.
# Usage: cli_sonata.sh HINESBATCH DATA
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
circuit=$here/sonata/circuit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib_cli.sh"
py=/usr/bin/python3

# the network file's "events" (what a circuit's spike trains become): an event drives cell 0
$py - "$here/../examples/ring_network.json" "$tmp/ev.json" "$tmp/evbad.json" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["t_stop"] = 20
d["network"] = {"events": [{"target": 0, "synapse": 0, "time": 2.0, "weight": 0.05}]}
json.dump(d, open(sys.argv[2], "w"))
d["network"]["events"][0]["time"] = -1
json.dump(d, open(sys.argv[3], "w"))
PYEOF
expect_status 0 "network events" -- "$bin" run "$tmp/ev.json" -o "$tmp/ev" --traces none
[ "$(grep -c '^0 ' "$tmp/ev/spikes.dat")" -eq 1 ] && ok || bad "one spike of gid 0 from the event"
[ "$(grep -vc '^#' "$tmp/ev/spikes.dat")" -eq 1 ] && ok || bad "only gid 0 spikes (no ring edges)"
expect_status 1 "a negative event time" -- "$bin" run "$tmp/evbad.json" -o "$tmp/ev2"
expect_grep "$tmp/err" "network.events\[0\].time" "the event's key named"

if ! "$bin" run "$circuit/simulation_config.json" -o "$tmp/probe" --quiet > /dev/null 2> "$tmp/probe.err"; then
    if grep -q "needs HDF5" "$tmp/probe.err"; then # a build without HDF5: the message, exit 1
        expect_status 1 "circuit without HDF5" -- "$bin" run "$circuit/simulation_config.json" -o "$tmp/x"
        expect_grep "$tmp/err" "libhdf5-dev" "the message says what to install"
        expect_grep "$tmp/err" "not supported" "HB_ERR_NOT_SUPPORTED"
        echo "cli_sonata: $passed passed, $failed failed (no HDF5)"
        [ "$failed" -eq 0 ]
        exit
    fi
fi

# the circuit: bmtk BioNet's spikes on NEURON 8.2, byte for byte
expect_status 0 "the circuit" -- "$bin" run "$circuit/simulation_config.json" -o "$tmp/run" --sonata
if cmp -s "$tmp/run/spikes.dat" "$circuit/reference_spikes.dat"; then ok; else
    bad "spikes.dat differs from bmtk BioNet's (reference_spikes.dat)"; diff "$tmp/run/spikes.dat" "$circuit/reference_spikes.dat" | head >&2; fi
[ "$(grep -vc '^#' "$tmp/run/spikes.dat")" -eq 73 ] && ok || bad "73 spikes expected"
expect_status 0 "two threads" -- "$bin" run "$circuit/simulation_config.json" -o "$tmp/omp" --backend omp --threads 2 --traces none
cmp -s "$tmp/omp/spikes.dat" "$circuit/reference_spikes.dat" && ok || bad "2 threads: other spikes"
# and on 2 ranks, where this build has MPI (every rank reads the circuit, builds its share)
"$bin" --version > "$tmp/version" 2>&1
if command -v mpirun > /dev/null && grep -q "communicators: serial, mpi" "$tmp/version"; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        OMPI_MCA_mpi_yield_when_idle=1 \
        expect_status 0 "two ranks" -- mpirun -np 2 "$bin" run "$circuit/simulation_config.json" -o "$tmp/mpi" --quiet --traces none
    cmp -s "$tmp/mpi/spikes.dat" "$circuit/reference_spikes.dat" && ok || bad "2 ranks: other spikes"
fi
# the circuit config alone has no run
expect_status 1 "circuit config alone" -- "$bin" run "$circuit/circuit_config.json" -o "$tmp/x"
expect_grep "$tmp/err" "run.tstop: missing" "a circuit config without run"
if $py -c "import h5py" 2> /dev/null; then
    $py - "$tmp/run" "$circuit/reference_spikes.dat" <<'PYEOF' && ok || bad "spikes.h5 and traces.h5 read back with h5py"
import sys, h5py, numpy as np
out, ref = sys.argv[1], np.loadtxt(sys.argv[2])
s = h5py.File(out + "/spikes.h5", "r")["spikes/cortex"]
assert np.array_equal(s["node_ids"][:], ref[:, 0]) and np.allclose(s["timestamps"][:], ref[:, 1], rtol=1e-9, atol=0)
r = h5py.File(out + "/traces.h5", "r")["report/cortex"]
# node set "recorded": excitatory (types 100, 101: nodes 0-7) and layer-2 inhibitory (8, 10)
assert list(r["mapping/node_ids"][:]) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10], r["mapping/node_ids"][:]
assert r["data"].shape == (6001, 10), r["data"].shape          # 0..150 ms every dt 0.025
v = r["data"][:]
assert abs(v[0, 0] + 65) < 1e-4 and v[:, 0].max() > 0          # v_init, cell 0 spikes
PYEOF
fi

# malformed circuits: a copy, broken one way at a time
fresh() {
    rm -rf "$tmp/c"
    cp -r "$circuit" "$tmp/c"
    sed -i 's|\$BASE_DIR/../../../data/morphologies|'"$here/../data/morphologies"'|' "$tmp/c/circuit_config.json"
}
refused() { # DESCRIPTION PATTERN
    expect_status 1 "$1" -- "$bin" run "$tmp/c/simulation_config.json" -o "$tmp/bad"
    expect_grep "$tmp/err" "$2" "$1"
}
fresh; rm "$tmp/c/network/cortex_nodes.h5"
refused "missing nodes file" "cortex_nodes.h5: cannot open"
fresh; echo "not hdf5" > "$tmp/c/network/input_nodes.h5"
refused "not an HDF5 file" "input_nodes.h5: not an HDF5 file"
fresh; sed -i 's|\$NETWORK_DIR/cortex_nodes.h5|$NOWHERE/cortex_nodes.h5|' "$tmp/c/circuit_config.json"
refused "unknown manifest variable" 'networks.nodes\[0\]: "$NOWHERE/cortex_nodes.h5": $NOWHERE is not in the "manifest"'
fresh; sed -i 's|"node_set": "input"|"node_set": "nosuch"|' "$tmp/c/simulation_config.json"
refused "unknown node set" 'node set "nosuch" is not defined'
csvset() { # FILE TYPE_ID COLUMN VALUE (bmtk orders the columns as it likes)
    $py - "$@" <<'PYEOF'
import sys
path, tid, col, value = sys.argv[1:]
lines = open(path).read().split("\n")
head = lines[0].split()
for k, line in enumerate(lines[1:], 1):
    f = line.split()
    if f and f[0] == tid:
        f[head.index(col)] = value
        lines[k] = " ".join(f)
open(path, "w").write("\n".join(lines))
PYEOF
}
fresh; sed -i 's|"input": {"population": "input"}|"input": {"population": [3]}|' "$tmp/c/node_sets.json"
refused "a node set's population not a name" "node_sets.json: input.population: expected a population name or a list of names"
fresh; sed -i 's|"recorded": \["excitatory", "layer2_inhibitory"\]|"recorded": ["excitatory", "nosuch"]|' "$tmp/c/node_sets.json"
refused "a compound set naming no set" 'node set "nosuch" is not defined'
fresh; csvset "$tmp/c/network/cortex_node_types.csv" 102 morphology cell.asc
refused "an ASC morphology" 'cortex node 8: morphology "cell.asc"; expected an SWC file'
fresh; csvset "$tmp/c/network/cortex_node_types.csv" 101 model_processing aibs_perisomatic
refused "aibs_perisomatic" 'cortex node 4: model_processing "aibs_perisomatic"; expected "set_params_allactive"'
fresh; sed -i 's|"mechanism": "hh"}|"mechanism": "NaTs2_t"}|' "$tmp/c/components/biophysical_neuron_models/hh_soma_pas.json"
refused "unknown mechanism" 'hh_soma_pas.json: genome\[0\].mechanism: "NaTs2_t" is not available'
fresh; sed -i '2s| [^ ]*$||' "$tmp/c/network/cortex_cortex_edge_types.csv"
refused "a short CSV line" "cortex_cortex_edge_types.csv:2: 8 fields; expected 9"
fresh; csvset "$tmp/c/network/cortex_cortex_edge_types.csv" 201 target_sections "['dendrite']"
refused "an unknown target section" "target_sections \"\['dendrite'\]\": \"dendrite\"; expected soma, axon, dend, apic"
fresh; csvset "$tmp/c/network/cortex_cortex_edge_types.csv" 200 model_template hhsyn
refused "unknown synapse model" 'model_template "hhsyn"; expected "exp2syn" or "expsyn"'
fresh; sed -i 's|"section_index": 2,|"section_index": 40,|' "$tmp/c/simulation_config.json"
refused "a clamp on a missing section" "inputs.dendrite_step: dend\[40\] of cortex node 0: no such section (3 dend sections"
fresh; sed -i 's|"amp": \[0.5, 0.3\]|"amp": [0.5]|' "$tmp/c/simulation_config.json"
refused "clamp lists of unequal lengths" "inputs.soma_pulses: 1 amp, 2 delay and 2 duration values"
fresh; sed -i 's|"input_type": "current_clamp", "module": "IClamp",$|"input_type": "current_clamp", "module": "csv",|' "$tmp/c/simulation_config.json"
refused "a clamp from a file" 'inputs.soma_pulses.module: "csv"; expected "IClamp"'
if $py -c "import h5py" 2> /dev/null; then
    h5edit() { # FILE PYTHON (f: the open file)
        $py -c "import h5py, numpy as np
f = h5py.File('$1', 'r+')
$2" || bad "h5py edit of $1"
    }
    fresh; h5edit "$tmp/c/network/cortex_cortex_edges.h5" "d = f['edges/cortex_to_cortex/0/afferent_section_id']; d[0] = 99"
    refused "section id out of range" "afferent_section_id 99, afferent_section_pos 0.5; expected a section id from 0 to"
    fresh; h5edit "$tmp/c/network/cortex_nodes.h5" "del f['nodes/cortex/node_type_id']"
    refused "missing dataset" "cortex_nodes.h5: /nodes/cortex/node_type_id: no such dataset"
    fresh; h5edit "$tmp/c/network/input_cortex_edges.h5" "d = f['edges/input_to_cortex/target_node_id']; d[3] = 99"
    refused "bad target id" "input_to_cortex edge 3: target_node_id 99; expected a node id of population cortex (0 to 11)"
    fresh; h5edit "$tmp/c/network/cortex_cortex_edges.h5" "f['edges/cortex_to_cortex/source_node_id'].attrs['node_population'] = 'thalamus'"
    refused "unknown population" 'node_population "thalamus" is not among the circuit'"'"'s node populations'
    fresh; h5edit "$tmp/c/network/cortex_nodes.h5" "d = f['nodes/cortex/node_type_id']; d[2] = 7"
    refused "unknown node type" "/nodes/cortex/node_type_id\[2\]: 7 is not in"
    fresh; h5edit "$tmp/c/inputs/input_spikes.h5" "f.move('spikes/input', 'spikes/lgn')"
    refused "spikes of an unknown population" '/spikes/lgn: no node population "lgn" in the circuit'
    fresh; h5edit "$tmp/c/network/input_cortex_edges.h5" "del f['edges/input_to_cortex/0/afferent_section_id']"
    refused "an edge placed nowhere" "no afferent_section_id and afferent_section_pos (or bmtk's sec_id, sec_x), nor target_sections"
fi

echo "cli_sonata: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
