#!/usr/bin/env bash
# BBP's ProbAMPANMDA_EMS (the bbp catalogue's port) in a network (docs/mechanisms.md, section
# 10): in the deterministic configuration of tests/neuron/prob_reference.py every spike in
# NEURON 8.2's step (BBP's original .mod) and the soma voltages close to NEURON's; stochastic
# (Use 0.9, Fac 10, Dep 5: the release and recovery draws decide), the same spikes and voltages bit for bit
# on 1 and 2 threads and, where this build has MPI, 2 ranks, and on a CUDA device.
# Usage: cli_net_prob.sh HINESBATCH DATA
set -u
bin=$1
ref=$(cd "$(dirname "$0")/reference" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
need_python h5py numpy

expect_status 0 "ProbAMPANMDA_EMS network" -- "$bin" run "$ref/net_prob.json" -o "$tmp/det" --quiet
# the k-th spike of each gid against NEURON's, within half a step
spikes_match net_prob "$ref/net_prob.spikes" "$tmp/det/spikes.dat" 0.025 "" 30 &&
    ok || bad "ProbAMPANMDA_EMS network: the spikes differ from NEURON's"
# the soma voltages of gids 0-3 every 0.5 ms
nrn_python -c 'import sys; from compare_trace import report_against
sys.exit(0 if report_against("net_prob", *sys.argv[1:3], 4, [("v", "mV")], 240, within=1e-5)[2] else 1)' \
    "$tmp/det/traces.h5" "$ref/net_prob.v" && ok || bad "ProbAMPANMDA_EMS network: voltages differ from NEURON's"

# stochastic: bitwise across threads and ranks
sed -e 's/"Use": 1,/"Use": 0.9,/' -e 's/"Fac": 0,/"Fac": 10,/' -e 's/"Dep": 1e-09,/"Dep": 5,/' \
    "$ref/net_prob.json" > "$tmp/sto.json"
grep -q '"Use": 0.9' "$tmp/sto.json" && grep -q '"Dep": 5,' "$tmp/sto.json" && ok || bad "stochastic variant not written"
sed -e 's/"backend": "seq"/"backend": "omp"/' "$tmp/sto.json" > "$tmp/sto_omp.json"
expect_status 0 "stochastic" -- "$bin" run "$tmp/sto.json" -o "$tmp/sto" --quiet
n=$(grep -vc '^#' "$tmp/sto/spikes.dat")
cmp -s "$tmp/sto/spikes.dat" "$tmp/det/spikes.dat" && bad "stochastic release gave the deterministic spikes" || ok
[ "$n" -ge 10 ] && ok || bad "stochastic network: $n spikes, expected at least 10"
same() { same_run "$tmp/sto" "$@"; } # DIR WHAT: spikes and traces bitwise $tmp/sto's
expect_status 0 "stochastic, 2 threads" -- env OMP_NUM_THREADS=2 "$bin" run "$tmp/sto_omp.json" -o "$tmp/omp" --quiet
same "$tmp/omp" "stochastic on 2 threads"
# checkpoints (format 4: the synapses' states, their RANDOM streams' positions, the
# connections' weight vectors and the events waiting): a restart is the run through, bit for bit
expect_status 0 "stochastic, checkpoints" -- "$bin" run "$tmp/sto.json" -o "$tmp/ck" --quiet --checkpoint-every 70
same "$tmp/ck" "stochastic with checkpoints"
[ -s "$tmp/ck/checkpoint.0.bin" ] && ok || bad "no checkpoint written"
cp -r "$tmp/ck" "$tmp/rs"
head -n 3 "$tmp/ck/spikes.dat" > "$tmp/rs/spikes.dat"
expect_status 0 "stochastic, restarted at 70 ms" -- "$bin" run "$tmp/sto.json" -o "$tmp/rs" --quiet --restart "$tmp/rs"
cmp -s "$tmp/sto/spikes.dat" "$tmp/rs/spikes.dat" && ok || bad "restarted: spikes differ from the run through"
expect_status 0 "stochastic, omp checkpoints" -- env OMP_NUM_THREADS=2 "$bin" run "$tmp/sto_omp.json" -o "$tmp/ck2" --quiet --checkpoint-every 70
expect_status 0 "stochastic, restarted on 2 threads" -- env OMP_NUM_THREADS=2 "$bin" run "$tmp/sto_omp.json" -o "$tmp/ck2" --quiet --restart "$tmp/ck2"
cmp -s "$tmp/sto/spikes.dat" "$tmp/ck2/spikes.dat" && ok || bad "restarted on 2 threads: spikes differ"
# the state is saved in the model's order, so a checkpoint of one thread (8 cells in a block of
# 8 lanes) restarts on 2 (eight blocks of 1), and one of 2 threads on one
cp -r "$tmp/ck" "$tmp/ck12"
expect_status 0 "stochastic, a one-thread checkpoint restarted on 2 threads" -- "$bin" run "$tmp/sto.json" -o "$tmp/ck12" --quiet --restart "$tmp/ck12" --backend omp --threads 2
cmp -s "$tmp/sto/spikes.dat" "$tmp/ck12/spikes.dat" && ok || bad "1 -> 2 threads: spikes differ"
expect_status 0 "stochastic, omp checkpoints again" -- env OMP_NUM_THREADS=2 "$bin" run "$tmp/sto_omp.json" -o "$tmp/ck21" --quiet --checkpoint-every 70
expect_status 0 "stochastic, a 2-thread checkpoint restarted on one" -- "$bin" run "$tmp/sto_omp.json" -o "$tmp/ck21" --quiet --restart "$tmp/ck21" --backend seq
cmp -s "$tmp/sto/spikes.dat" "$tmp/ck21/spikes.dat" && ok || bad "2 -> 1 threads: spikes differ"
if have_mpi; then
    expect_status 0 "stochastic, 2 ranks" -- mpi_ranks 2 "$bin" run "$tmp/sto.json" -o "$tmp/mpi2" --quiet
    same "$tmp/mpi2" "stochastic on 2 ranks"
    expect_status 0 "stochastic, 2 ranks, checkpoints" -- mpi_ranks 2 "$bin" run "$tmp/sto.json" -o "$tmp/mck" --quiet --checkpoint-every 70
    expect_status 0 "stochastic, 2 ranks, restarted" -- mpi_ranks 2 "$bin" run "$tmp/sto.json" -o "$tmp/mck" --quiet --restart "$tmp/mck"
    cmp -s "$tmp/sto/spikes.dat" "$tmp/mck/spikes.dat" && ok || bad "2 ranks restarted: spikes differ"
fi
if "$bin" --version | grep -q "backends: [a-z, ]*cuda"; then # a CUDA device: NET_RECEIVE there
    sed -e 's/"backend": "seq"/"backend": "cuda"/' "$tmp/sto.json" > "$tmp/sto_cuda.json"
    expect_status 0 "stochastic on the GPU" -- "$bin" run "$tmp/sto_cuda.json" -o "$tmp/cuda" --quiet
    same "$tmp/cuda" "stochastic on the GPU"
fi

echo "cli_net_prob: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
