#!/usr/bin/env bash
# hinesbatch run on network files: the example ring network's spikes (format, order, the
# rings' timing), the same spikes on 2 and 3 MPI ranks, an unwritable output directory refused
# before the run, and malformed networks refused by key path. Usage: cli_net.sh HINESBATCH DATA
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

expect_status 0 "ring network" -- "$bin" run "$examples/ring_network.json" -o "$tmp/one"
expect_grep "$tmp/out" "network, 1 rank, min delay 1 ms" "summary"
expect_grep "$tmp/one/summary.json" '"ranks": 1, "cells": 68, "spikes": 140' "summary.json totals"
expect_grep "$tmp/one/summary.json" '"update_s": [0-9.]*, "detect_s"' "summary.json phases"
expect_grep "$tmp/one/summary.json" '"exchange_wait_s": [0-9.]*, "max_rss_kib"' "summary.json exchange wait"
expect_grep "$tmp/one/summary.json" '"output_s": [0-9.]*, "memory_kib_per_cell"' "summary.json output"
spikes=$tmp/one/spikes.dat
expect_status 0 "ring network, traced" -- "$bin" run "$examples/ring_network.json" -o "$tmp/traced" --trace --quiet
expect_grep "$tmp/traced/trace.0.json" '^{"name": "integrate", "ph": "X", "ts": [0-9.]*, "dur": [0-9.]*, "pid": 0' "trace events"
n=$(grep -c '"name": "integrate"' "$tmp/traced/trace.0.json")
[ "$n" -eq 200 ] && ok || bad "trace: $n epochs integrated, expected 200 (200 ms in epochs of 1 ms)"
cmp -s "$spikes" "$tmp/traced/spikes.dat" && ok || bad "tracing changed the spikes"
# '# gid t_ms', then 'gid time' lines, ordered by time then gid; the four kicks at 1 ms first
[ "$(head -1 "$spikes")" = "# gid t_ms" ] && ok || bad "spikes.dat: first line $(head -1 "$spikes"), expected '# gid t_ms'"
awk 'NR == 1 { next } NF != 2 || $1 !~ /^[0-9]+$/ { exit 1 }
     NR > 2 && ($2 < t || ($2 == t && $1 <= g)) { exit 1 } { t = $2; g = $1 }' "$spikes" && ok ||
    bad "spikes.dat is not 'gid time' ordered by time, then gid"
[ "$(sed -n 2,5p "$spikes" | tr '\n' ' ')" = "64 1 65 1 66 1 67 1 " ] && ok || bad "the kicks: $(sed -n 2,5p "$spikes")"
# each ring's first cell fires after its kick (1 ms + 1 ms delay), then every cell of the ring
# in order, 5 ms apart plus the time to fire
for first in 0 16 32 48; do
    awk -v f=$first '$1 >= f && $1 < f + 16 { n++; if (n <= 16 && $1 != f + n - 1) bad = 1 }
                     END { exit bad || n < 17 }' "$spikes" && ok || bad "ring from gid $first out of order"
done

# The same spikes on 2 and 3 ranks (Open MPI as root, oversubscribed), where this build has MPI.
expect_status 0 "version" -- "$bin" --version
cp "$tmp/out" "$tmp/version"
if command -v mpirun > /dev/null && grep -q "communicators: serial, mpi" "$tmp/version"; then
    for n in 2 3; do
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
            OMPI_MCA_mpi_yield_when_idle=1 \
            expect_status 0 "ring network on $n ranks" -- mpirun -np $n "$bin" run \
            "$examples/ring_network.json" -o "$tmp/r$n" --quiet
        cmp -s "$spikes" "$tmp/r$n/spikes.dat" && ok || bad "$n ranks: spikes.dat differs from 1 rank"
        expect_grep "$tmp/r$n/summary.json" "\"ranks\": $n" "summary.json on $n ranks"
        # the wait is a part of the exchange on every rank
        awk -F'"exchange_s": |, "exchange_wait_s": |, "max_rss' '/"exchange_wait_s"/ {
                 if ($3 + 0 > $2 + 1e-6) bad = 1; n++ } END { exit bad || n != '"$n"' }' \
            "$tmp/r$n/summary.json" && ok || bad "$n ranks: an exchange wait longer than its exchange"
    done
fi

# Alone (no launcher's environment) a run does not start MPI: Open MPI told to use a messaging
# layer it does not have would refuse MPI_Init, and the run is the plain run's.
if grep -q "communicators: serial, mpi" "$tmp/version"; then
    expect_status 0 "ring network alone, MPI unusable" -- env -u OMPI_COMM_WORLD_RANK -u PMIX_RANK \
        -u PMI_RANK OMPI_MCA_pml=no_such_layer "$bin" run "$examples/ring_network.json" \
        -o "$tmp/alone" --quiet
    cmp -s "$spikes" "$tmp/alone/spikes.dat" && ok || bad "alone: spikes.dat differs"
fi

# More ranks than gids: the ranks without cells take part in every exchange (idle ranks).
if command -v mpirun > /dev/null && grep -q "communicators: serial, mpi" "$tmp/version"; then
    sed -e 's/"count": 64,/"count": 2,/' -e '/"network": {/,$d' "$examples/ring_network.json" > "$tmp/tiny.json"
    printf '  "network": {"sources": [{"start": 1, "number": 1}], "connections": [%s, %s]}\n}\n' \
        '{"source": 2, "target": 0, "weight": 0.05, "delay": 1}' \
        '{"source": 0, "target": 1, "weight": 0.05, "delay": 2}' >> "$tmp/tiny.json"
    expect_status 0 "3 gids alone" -- "$bin" run "$tmp/tiny.json" -o "$tmp/tiny1" --quiet
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        OMPI_MCA_mpi_yield_when_idle=1 \
        expect_status 0 "3 gids on 5 ranks" -- mpirun -np 5 "$bin" run "$tmp/tiny.json" -o "$tmp/tiny5" --quiet
    [ "$(cat "$tmp/tiny1/spikes.dat" | tr '\n' ' ')" = "# gid t_ms 2 1 0 2.95 1 5.9 " ] && ok || bad "3 gids: $(cat "$tmp/tiny1/spikes.dat")"
    cmp -s "$tmp/tiny1/spikes.dat" "$tmp/tiny5/spikes.dat" && ok || bad "5 ranks, 3 gids: spikes differ"
fi

# An output directory that cannot be written: refused before the run.
touch "$tmp/file"
expect_status 1 "unwritable output" -- "$bin" run "$examples/ring_network.json" -o "$tmp/file/out"
expect_grep "$tmp/err" "cannot create the output directory" "unwritable output message"
# --traces is the format of a "record" section's file (cli_net_record.sh); none here, so no
# traces file; wide (a column per probe) is a cell run's alone: refused, not ignored
expect_status 0 "network with --traces csv" -- "$bin" run "$examples/ring_network.json" -o "$tmp/tr" --traces csv --quiet
[ -e "$tmp/tr/spikes.dat" ] && [ ! -e "$tmp/tr/traces.csv" ] && ok || bad "network without records wrote traces.csv"
expect_status 2 "network with --traces wide" -- "$bin" run "$examples/ring_network.json" -o "$tmp/tr" --traces wide
expect_grep "$tmp/err" "expected --traces h5, csv or none" "network --traces wide message"
expect_status 0 "network with --traces none" -- "$bin" run "$examples/ring_network.json" -o "$tmp/tn" --traces none --quiet

# Malformed networks: exit 1, the key path or the connection named.
net() { # FILE NETWORK-JSON
    sed -e '/"network": {/,$d' "$examples/ring_network.json" > "$1"
    printf '  "network": %s\n}\n' "$2" >> "$1"
}
net "$tmp/deg.json" '{"random": [{"targets": [0, 64], "sources": [0, 64], "in_degree": 64, "weight": 0, "delay": 5}]}'
expect_status 1 "in-degree too large" -- "$bin" run "$tmp/deg.json" -o "$tmp/x"
expect_grep "$tmp/err" "network.random\[0\].in_degree: 64 distinct sources asked of 63 candidates" "in-degree message"
net "$tmp/gid.json" '{"connections": [{"source": 99, "target": 0, "weight": 0.1, "delay": 5}]}'
expect_status 1 "unknown source gid" -- "$bin" run "$tmp/gid.json" -o "$tmp/x"
expect_grep "$tmp/err" "network.connections\[0\].source: expected an integer from 0 to 63" "source gid message"
net "$tmp/syn.json" '{"connections": [{"source": 1, "target": 0, "synapse": 5, "weight": 0.1, "delay": 5}]}'
expect_status 1 "unknown synapse" -- "$bin" run "$tmp/syn.json" -o "$tmp/x"
expect_grep "$tmp/err" "connection 0 of gid 0 (from gid 1): synapse 5 does not exist (the cell has 2)" "synapse message"
net "$tmp/delay.json" '{"connections": [{"source": 1, "target": 0, "weight": 0.1, "delay": 0.01}]}'
expect_status 1 "delay below dt" -- "$bin" run "$tmp/delay.json" -o "$tmp/x"
expect_grep "$tmp/err" "delay 0.01 ms; expected a finite delay of at least one step (dt = 0.025 ms)" "delay message"
net "$tmp/key.json" '{"rings": []}'
expect_status 1 "unknown key" -- "$bin" run "$tmp/key.json" -o "$tmp/x"
expect_grep "$tmp/err" "network.rings: unknown key; expected one of: sources, connections, ring, random" "unknown key message"
printf '{"t_stop": 10, "cells": [], "network": {}}' > "$tmp/empty.json"
expect_status 1 "no cells" -- "$bin" run "$tmp/empty.json" -o "$tmp/x"
expect_grep "$tmp/err" "no cells and no sources" "no cells message"
[ ! -e "$tmp/x/spikes.dat" ] && ok || bad "spikes written for a bad network"

echo "cli_net: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
