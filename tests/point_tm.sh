#!/usr/bin/env bash
# A user's point process with per-connection state: tests/nmodl/tm/TMSyn.mod (a facilitating
# and depressing synapse) built by build-catalogue, then test_sim_cat --tm: two connections,
# each its own resources in its weight vector, against NEURON 8.2 (tests/neuron/tm_reference.py).
# Usage: point_tm.sh HINESBATCH TEST_SIM_CAT
set -u
bin=$1 test=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

expect_status 0 "build TMSyn" -- "$bin" build-catalogue "$src/tests/nmodl/tm" -o "$tmp/tm.so"
expect_status 0 "TMSyn against NEURON" -- "$test" --tm "$tmp/tm.so" "$src/tests/reference/tm_neuron.txt"
cat "$tmp/out"
echo "point_tm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
