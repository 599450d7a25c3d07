#!/usr/bin/env bash
# Artificial cells (ARTIFICIAL_CELL; docs/network.md, "Artificial cells"): tests/nmodl/artificial's
# Pulses (a NetStim-like generator: net_send in INITIAL, net_event on its self-events) and
# LeakyFire (an IntFire1-like integrator: exp decay computed in NET_RECEIVE, net_event, a
# refractory self-event of flag 1), gids of their own in the network's "artificial", driving
# hh cells and driven by them, against NEURON 8.2 running the same files as NEURON's
# artificial cells (tests/neuron/artificial_reference.py): every spike in NEURON's step; the
# same spikes bit for bit on 2 threads, 2 and 3 ranks where this build has MPI, through a
# checkpoint and restart; bad input refused by name; on the GPU (a CUDA build with a device)
# the same spikes bit for bit from a catalogue built --cuda, one built without kernels refused.
# Usage: cli_net_artificial.sh HINESBATCH
set -u
bin=$1
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

user_net artificial "artificial-cell network" 80 # $tmp/seq: every spike in NEURON's step
# every artificial gid (4-7) spikes; Pulses gid 4: 12 spikes from 5 ms every 7 ms, exactly
for g in 4 5 6 7; do
    awk -v g=$g '$1 == g' "$tmp/seq/spikes.dat" | grep -q . && ok || bad "artificial gid $g has no spike"
done
[ "$(awk '$1 == 4 { printf "%s ", $2 }' "$tmp/seq/spikes.dat")" = "5 12 19 26 33 40 47 54 61 68 75 82 " ] &&
    ok || bad "Pulses gid 4's spikes are not at start + k interval"
edit() { json_edit artificial "$@"; } # NAME PYTHON-STATEMENT: $tmp/NAME.json, artificial.json edited
net_threads artificial "artificial-cell network" seq_spikes
net_ranks artificial "artificial-cell network" seq_spikes 2 3
# checkpoints: a restart at 41.3 ms (LeakyFire's levels and refractory self-events, Pulses'
# waiting self-events in flight) is the run through, bit for bit
net_checkpoints artificial "artificial-cell network" seq_spikes 41.3
net_restarted artificial "artificial-cell network" seq_spikes

# bad input, each refused by name
edit unknown 'm["network"]["artificial"][0]["mechanism"] = "IntFire9"'
expect_status 1 "an unknown artificial cell" -- "$bin" run "$tmp/unknown.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'network.artificial\[0\].mechanism: .*IntFire9' "an unknown artificial cell"
edit density 'm["network"]["artificial"][0]["mechanism"] = "pas"'
expect_status 1 "a density mechanism as an artificial cell" -- "$bin" run "$tmp/density.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'network.artificial\[0\].mechanism: pas is a density mechanism (SUFFIX; in a cell.s "mechanisms"); expected an artificial cell here' "a density mechanism as an artificial cell"
edit point 'm["network"]["artificial"][0]["mechanism"] = "ExpSyn"'
expect_status 1 "a point process as an artificial cell" -- "$bin" run "$tmp/point.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'network.artificial\[0\].mechanism: ExpSyn is a point process (POINT_PROCESS; in a cell.s "synapses"); expected an artificial cell here' "a point process as an artificial cell"
edit synapse 'm["cells"][0]["synapses"].append({"name": "LeakyFire", "at": "soma"})'
expect_status 1 "an artificial cell as a cell's synapse" -- "$bin" run "$tmp/synapse.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'cells\[0\].synapses\[1\].name: LeakyFire is an artificial cell (ARTIFICIAL_CELL; in the network.s "artificial"); expected a point process here' "an artificial cell as a cell's synapse"
edit param 'm["network"]["artificial"][2]["taus"] = 3'
expect_status 1 "an unknown parameter" -- "$bin" run "$tmp/param.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'network.artificial\[2\]: LeakyFire has no parameter "taus"; did you mean "tau"?' "an unknown parameter"
edit nomech 'del m["network"]["artificial"][1]["mechanism"]'
expect_status 1 "an artificial entry without its mechanism" -- "$bin" run "$tmp/nomech.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'network.artificial\[1\].mechanism: expected an artificial cell.s name' "an artificial entry without its mechanism"
edit notarray 'm["network"]["artificial"] = {"mechanism": "Pulses"}'
expect_status 1 "artificial not an array" -- "$bin" run "$tmp/notarray.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'network.artificial: expected an array' "artificial not an array"
# the GPU (a CUDA build with a device): the catalogue built --cuda, the same spikes bit for
# bit, and one built without its kernels refused by name; without a device, refused
"$bin" --version > "$tmp/version"
if grep -q "backends: .*cuda" "$tmp/version" && command -v nvidia-smi > /dev/null && nvidia-smi -L > /dev/null 2>&1; then
    expect_status 0 "build the artificial cells --cuda" -- "$bin" build-catalogue "$src/tests/nmodl/artificial" --cuda -o "$tmp/artificial_gpu.so"
    edit gpu 'm["backend"] = "cuda"; m["catalogues"] = ["artificial_gpu.so"]'
    expect_status 0 "artificial-cell network on the GPU" -- "$bin" run "$tmp/gpu.json" -o "$tmp/gpu" --quiet
    cmp -s "$tmp/seq/spikes.dat" "$tmp/gpu/spikes.dat" && ok || bad "artificial-cell network on the GPU: spikes differ from the CPU's"
    expect_status 0 "build the artificial cells --no-cuda" -- "$bin" build-catalogue "$src/tests/nmodl/artificial" --no-cuda -o "$tmp/artificial_cpu.so"
    edit nokernels 'm["backend"] = "cuda"; m["catalogues"] = ["artificial_cpu.so"]'
    expect_status 1 "artificial cells without CUDA kernels on the GPU" -- "$bin" run "$tmp/nokernels.json" -o "$tmp/bad" --quiet
    expect_grep "$tmp/err" "simulation: [A-Za-z]* is a user catalogue's mechanism without CUDA kernels" "artificial cells without CUDA kernels on the GPU"
else
    edit gpu 'm["backend"] = "cuda"'
    expect_status 1 "artificial cells without a GPU" -- "$bin" run "$tmp/gpu.json" -o "$tmp/bad" --quiet
    expect_grep "$tmp/err" "backend 'cuda' is not available" "artificial cells without a GPU"
fi
# the generator: USEION, a current, v in an ARTIFICIAL_CELL refused at the name
mkdir -p "$tmp/ion" "$tmp/cur" "$tmp/volt"
sed -e 's/^    RANGE tau, refrac, u, tlast, hold$/    USEION ca READ cai\n&/' "$src/tests/nmodl/artificial/LeakyFire.mod" > "$tmp/ion/LeakyFire.mod"
expect_status 1 "USEION in an artificial cell" -- "$bin" build-catalogue "$tmp/ion" -o "$tmp/ion.so"
expect_grep "$tmp/err" "LeakyFire.mod:11:12: USEION ca in the ARTIFICIAL_CELL LeakyFire: an artificial cell has no membrane and no ions" "USEION in an artificial cell"
sed -e 's/^    RANGE tau, refrac, u, tlast, hold$/    NONSPECIFIC_CURRENT i\n&/; s/^    hold (1)$/&\n    i (nA)/' "$src/tests/nmodl/artificial/LeakyFire.mod" > "$tmp/cur/LeakyFire.mod"
expect_status 1 "a current in an artificial cell" -- "$bin" build-catalogue "$tmp/cur" -o "$tmp/cur.so"
expect_grep "$tmp/err" "LeakyFire.mod:11:25: NONSPECIFIC_CURRENT i in the ARTIFICIAL_CELL LeakyFire: an artificial cell carries no current" "a current in an artificial cell"
sed -e 's/^        hold = 0$/        if (v > 0) { hold = 0 }/' "$src/tests/nmodl/artificial/LeakyFire.mod" > "$tmp/volt/LeakyFire.mod"
expect_status 1 "v in an artificial cell" -- "$bin" build-catalogue "$tmp/volt" -o "$tmp/volt.so"
expect_grep "$tmp/err" "LeakyFire.mod:34:13: v in the ARTIFICIAL_CELL LeakyFire: an artificial cell has no membrane potential" "v in an artificial cell"

echo "cli_net_artificial: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
