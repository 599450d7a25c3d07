#!/usr/bin/env bash
# A network of BluePyOpt's L5PC with BBP's ProbAMPANMDA_EMS synapses (examples/l5pc_network.py;
# docs/network.md, section 12): 6 cells, 3 recurrent dendritic synapses and a soma drive from
# Poisson sources each, 30 ms. Deterministic release (tests/reference/l5pc_net.json): every
# spike, the sources' included, in NEURON 8.2's step (tests/reference/l5pc_net.spikes, from
# tests/neuron/l5pc_net_reference.py: BBP's original .mod, the sources' and random builders'
# draws remade by tests/neuron/hb_draws.py) and the soma voltages of gids 0-2 within 0.01 mV.
# Stochastic release (the recurrent synapses at BBP's Use 0.5, Fac 17, Dep 671): spikes and
# voltages bit for bit on 1 rank, 2 threads, with the CPU's passes apart (sim.cpu_fuse=0) and,
# where this build has MPI, 2 ranks, and other spikes than the deterministic run's. examples/l5pc_network.json is the generator's output.
# Usage: cli_l5pc_net.sh HINESBATCH DATA [REFDIR] (REFDIR: the references, default the
# committed tests/reference; tests/l5pc_net_neuron.sh passes fresh ones from the installed NEURON,
# and then only the comparison with NEURON runs)
set -u
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${3:-$root/tests/reference}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
need_python h5py numpy
py=/usr/bin/python3

# the example is the generator's output with its defaults
expect_status 0 "generator" -- $py "$root/examples/l5pc_network.py" 1000 "$tmp/example.json" \
    --morphology ../data/morphologies-asc/C060114A7.asc
cmp -s "$tmp/example.json" "$root/examples/l5pc_network.json" && ok ||
    bad "examples/l5pc_network.json is not examples/l5pc_network.py's output"

# deterministic: against NEURON
expect_status 0 "deterministic network" -- "$bin" run "$ref/l5pc_net.json" -o "$tmp/det" --quiet
spikes_match l5pc_net "$ref/l5pc_net.spikes" "$tmp/det/spikes.dat" 0.025 30 0 6 8 &&
    ok || bad "deterministic network: the spikes differ from NEURON's"
nrn_python -c 'import sys; from compare_trace import report_against
sys.exit(0 if report_against("l5pc_net", *sys.argv[1:3], 3, [("v", "mV")], 120, within=0.01)[2] else 1)' \
    "$tmp/det/traces.h5" "$ref/l5pc_net.v" && ok || bad "deterministic network: voltages differ from NEURON's"

if [ $# -ge 3 ]; then  # the live NEURON run (l5pc_net_neuron.sh): the rest is cli_l5pc_net's own
    echo "cli_l5pc_net (against $ref): $passed passed, $failed failed"
    [ "$failed" -eq 0 ]
    exit
fi

# stochastic: bitwise across threads and ranks
$py - "$ref/l5pc_net.json" "$tmp/sto.json" "$tmp/sto_omp.json" <<'PY' && ok || bad "stochastic variant not written"
import json, os, sys
m = json.load(open(sys.argv[1]))
c = m["cells"][0]
c["morphology"] = os.path.join(os.path.dirname(os.path.abspath(sys.argv[1])), c["morphology"])
for s in c["synapses"][:-1]:  # the recurrent ones; the drive (last) keeps releasing
    s.update({"Use": 0.5, "Fac": 17, "Dep": 671})
json.dump(m, open(sys.argv[2], "w"))
m["backend"] = "omp"
json.dump(m, open(sys.argv[3], "w"))
PY
expect_status 0 "stochastic" -- "$bin" run "$tmp/sto.json" -o "$tmp/sto" --quiet
n=$(awk '!/^#/ && $1 < 6' "$tmp/sto/spikes.dat" | wc -l)
[ "$n" -ge 6 ] && ok || bad "stochastic network: $n spikes of cells, expected at least 6"
cmp -s "$tmp/sto/spikes.dat" "$tmp/det/spikes.dat" && bad "stochastic release gave the deterministic spikes" || ok
same() { same_run "$tmp/sto" "$@"; } # DIR WHAT: spikes and traces bitwise $tmp/sto's
# the CPU's fused end of a step (docs/sim-engine.md, "Fused states and currents": here its
# mechanisms from Ih to Nap_Et2, ProbAMPANMDA_EMS's events at the steps' starts): the passes
# apart give the same bits
expect_status 0 "stochastic, passes apart" -- "$bin" run "$tmp/sto.json" -o "$tmp/apart" --quiet --tuning sim.cpu_fuse=0
same "$tmp/apart" "stochastic with the passes apart (sim.cpu_fuse=0)"
expect_status 0 "stochastic, 2 threads" -- env OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive "$bin" run "$tmp/sto_omp.json" -o "$tmp/omp" --quiet
same "$tmp/omp" "stochastic on 2 threads"
if have_mpi; then
    expect_status 0 "stochastic, 2 ranks" -- mpi_ranks 2 "$bin" run "$tmp/sto.json" -o "$tmp/mpi2" --quiet
    same "$tmp/mpi2" "stochastic on 2 ranks"
fi

echo "cli_l5pc_net: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
