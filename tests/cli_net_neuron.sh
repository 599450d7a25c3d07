#!/usr/bin/env bash
# Networks against NEURON 8.2 (issue 40): a ring of 16 hh ball-and-stick cells with ExpSyn and
# a random network of 1,000 cells with Exp2Syn driven by NetStims, 1,000 ms each, run by
# hinesbatch run from tests/reference/net_{ring,random}.json; the spikes must be NEURON's
# (tests/reference/net_*.spikes, written by tests/neuron/net_reference.py): the same number,
# and the k-th spike of every gid at NEURON's time within half a step. One difference is
# allowed: NEURON checks the thresholds at the start of each fadvance (t = the end of the
# previous step), so a crossing in the run's last step (t = t_stop) is reported only if the
# run goes on; hinesbatch's spikes at t_stop are counted and left out of the comparison.
# Usage: cli_net_neuron.sh HINESBATCH DATA
set -u
bin=$1
ref=$(cd "$(dirname "$0")/reference" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

# compare NAME: hinesbatch's spikes of net_NAME.json against NEURON's
compare() {
    local name=$1 dt t_stop
    dt=$(grep -o '"dt": *[0-9.e-]*' "$ref/net_$name.json" | head -1 | sed 's/.*: *//')
    t_stop=$(grep -o '"t_stop": *[0-9.e-]*' "$ref/net_$name.json" | head -1 | sed 's/.*: *//')
    local start end
    start=$(date +%s%N)
    expect_status 0 "$name network" -- "$bin" run "$ref/net_$name.json" -o "$tmp/$name" --quiet
    end=$(date +%s%N)
    echo "$name: hinesbatch run took $(( (end - start) / 1000000 )) ms"
    spikes_match "$name" "$ref/net_$name.spikes" "$tmp/$name/spikes.dat" "$dt" "$t_stop" 1 && ok ||
        bad "$name: the spikes differ from NEURON's"
}

compare ring
compare random
# the ring: every cell fires in turn, for the whole run
n=$(awk '$1 < 16' "$ref/net_ring.spikes" | wc -l)
[ "$n" -ge 160 ] && ok || bad "ring: only $n spikes of cells in NEURON's reference"

echo "cli_net_neuron: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
