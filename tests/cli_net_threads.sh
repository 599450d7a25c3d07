#!/usr/bin/env bash
# Networks built on 1 and 2 OpenMP threads (OMP_NUM_THREADS): the example busyring, the example
# ring network (rings, random zero-weight inputs, sources) and the random Exp2Syn network of the
# NEURON comparison (its first 200 ms) give the same spikes.dat, byte for byte, and the summary
# the same cells and connections. Usage: cli_net_threads.sh HINESBATCH DATA
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib_cli.sh"

for net in "$here/../examples/busyring_small.json" "$here/../examples/ring_network.json" \
           "$here/reference/net_random.json"; do
    name=$(basename "$net" .json)
    for t in 1 2; do
        expect_status 0 "$name on $t thread(s)" -- env OMP_NUM_THREADS=$t "$bin" run "$net" \
            -o "$tmp/$name.$t" --quiet --t-stop 200
    done
    n=$(grep -vc '^#' "$tmp/$name.1/spikes.dat")
    [ "$n" -gt 100 ] && ok || bad "$name: $n spikes, too few to compare"
    cmp -s "$tmp/$name.1/spikes.dat" "$tmp/$name.2/spikes.dat" && ok ||
        bad "$name: spikes.dat built on 2 threads differs from 1 thread's"
    for f in 1 2; do # the totals, without the times and the memory
        grep -o '"cells": [0-9]*, "spikes": [0-9]*' "$tmp/$name.$f/summary.json" > "$tmp/$name.$f.totals"
        grep -o '"connections": [0-9]*' "$tmp/$name.$f/summary.json" >> "$tmp/$name.$f.totals"
    done
    [ -s "$tmp/$name.1.totals" ] && cmp -s "$tmp/$name.1.totals" "$tmp/$name.2.totals" && ok ||
        bad "$name: summary totals differ: $(cat "$tmp/$name.1.totals") / $(cat "$tmp/$name.2.totals")"
done

echo "cli_net_threads: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
