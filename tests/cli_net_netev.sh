#!/usr/bin/env bash
# Point processes as spike sources (net_event: docs/network.md, "Point processes as spike
# sources"): tests/nmodl/netev's SpikeOut (WATCH (v > -10) 2, then net_event(t): a detector as
# a point process) on 4 ring cells and Relay (net_event(t) on every third input event) on a
# fifth cell, each the spike source its cell names ("spike_source": {"synapse": k}), a user
# catalogue, against NEURON 8.2 running the same files with NetCons from the point processes
# (tests/neuron/netev_reference.py): every spike in NEURON's step, the relay's at the events'
# times; the same spikes bit for bit on 2 threads and, where this build has MPI, 2 and 3
# ranks, and through a checkpoint and restart; bad uses refused by name.
# Usage: cli_net_netev.sh HINESBATCH
set -u
bin=$1
src=$(cd "$(dirname "$0")/.." && pwd)
ref=$src/tests/reference
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

user_net netev "net_event network" 40 # $tmp/seq: every spike in NEURON's step
# the relay (gid 4) fires at its third, sixth, ... event (the drive's 5 + 2k ms, delay 1): at
# 10, 16, ..., 52 ms exactly, as NEURON's net_event(t) does
[ "$(awk '$1 == 4 { printf "%s ", $2 }' "$tmp/seq/spikes.dat")" = "10 16 22 28 34 40 46 52 " ] &&
    ok || bad "the relay's spikes are not at its events' times"
# every ring cell's spikes come from its SpikeOut alone (no probe detects them)
for g in 0 1 2 3; do
    awk -v g=$g '$1 == g' "$tmp/seq/spikes.dat" | grep -q . && ok || bad "ring cell $g has no spike"
done
net_threads netev "net_event network" seq_spikes
net_ranks netev "net_event network" seq_spikes 2 3
# the overlapped exchanges (an epoch of half the smallest delay) give the same spikes
for x in iallgatherv tasks; do
    sed -e "s/\"network\": {/\"network\": {\"exchange\": \"$x\", /" "$tmp/netev.json" > "$tmp/$x.json"
    expect_status 0 "net_event network, exchange $x" -- "$bin" run "$tmp/$x.json" -o "$tmp/$x" --quiet
    seq_spikes "$tmp/$x" "net_event network, exchange $x"
done
# a second run of the same file: no spike of the first is left over
net_again netev "net_event network" seq_spikes
# checkpoints: the spikes are taken every epoch, the queue is the self-events'; a restart at
# 33.3 ms (WATCHes armed, the relay's count mid-way) is the run through, bit for bit
net_checkpoints netev "net_event network" seq_spikes 33.3
net_restarted netev "net_event network" seq_spikes

# bad uses: a spike source that sends no events, a detector beside it, a synapse that is not
# there, net_event outside NET_RECEIVE (as nocmodl refuses it), a spike at another time
edit() { json_edit netev "$@"; } # NAME PYTHON-STATEMENT: $tmp/NAME.json, netev.json edited
edit nosend 'm["cells"][0]["spike_source"]["synapse"] = 0'
expect_status 1 "a spike source that sends no events" -- "$bin" run "$tmp/nosend.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'cells\[0\].spike_source: synapse 0 (ExpSyn) sends no events; expected a point process whose NET_RECEIVE calls net_event' "a spike source that sends no events"
edit twice 'm["cells"][0]["probes"][0]["spike_threshold"] = -10'
expect_status 1 "a detector beside the spike source" -- "$bin" run "$tmp/twice.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'cells\[0\].spike_source: probe 0 detects the cell.s spikes already; expected one spike source a cell' "a detector beside the spike source"
edit nosyn 'm["cells"][1]["spike_source"]["synapse"] = 1'
expect_status 1 "a spike source past the synapses" -- "$bin" run "$tmp/nosyn.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'cells\[1\].spike_source: synapse 1; expected -1 (the detector probe) or a synapse of the model (it has 1)' "a spike source past the synapses"
edit nokey 'm["cells"][1]["spike_source"] = {"synapses": 0}'
expect_status 1 "a spike source without its synapse" -- "$bin" run "$tmp/nokey.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'spike_source' "a spike source without its synapse"
mkdir -p "$tmp/bad1" "$tmp/bad2" "$tmp/bad3"
sed -e 's/^    nrelay = 0$/    nrelay = 0\n    net_event(t)/' "$src/tests/nmodl/netev/Relay.mod" > "$tmp/bad1/Relay.mod"
expect_status 1 "net_event in INITIAL" -- "$bin" build-catalogue "$tmp/bad1" -o "$tmp/bad1.so"
expect_grep "$tmp/err" "Relay.mod:25:5: net_event in INITIAL is not supported; expected it in NET_RECEIVE" "net_event in INITIAL"
sed -e 's/^BREAKPOINT { }$/BREAKPOINT { net_event(t) }/' "$src/tests/nmodl/netev/Relay.mod" > "$tmp/bad2/Relay.mod"
expect_status 1 "net_event in BREAKPOINT" -- "$bin" build-catalogue "$tmp/bad2" -o "$tmp/bad2.so"
expect_grep "$tmp/err" "Relay.mod:27:14: net_event in BREAKPOINT is not supported; expected it in NET_RECEIVE" "net_event in BREAKPOINT"
sed -e 's/^        net_event(t)$/        net_event(t + 1)/' "$src/tests/nmodl/netev/Relay.mod" > "$tmp/bad3/Relay.mod"
cp "$src/tests/nmodl/netev/SpikeOut.mod" "$tmp/bad3/"
expect_status 0 "net_event(t + 1) builds" -- "$bin" build-catalogue "$tmp/bad3" -o "$tmp/later.so"
sed -e 's/"netev.so"/"later.so"/' "$tmp/netev.json" > "$tmp/later.json"
expect_status 1 "a spike at another time than the event's" -- "$bin" run "$tmp/later.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" "Relay: net_event at 11 ms in NET_RECEIVE at t = 10 ms; expected net_event(t)" "a spike at another time than the event's"

echo "cli_net_netev: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
