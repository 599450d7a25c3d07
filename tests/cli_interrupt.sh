#!/usr/bin/env bash
# hinesbatch run stopped by SIGINT or SIGTERM half-way (a cell run and a network run): the exit
# status (128 + the signal), summary.json marked interrupted, and the files written so far a
# prefix of an uninterrupted run's. And a run whose state turns NaN: exit 1 with the cell and
# time, what was computed before written. Usage: cli_interrupt.sh HINESBATCH DATA_DIR
#
# No timing: the stream being watched (probes.csv of a cell run, spikes.dat of a network) is a
# named pipe. The run blocks on it once the pipe is full, so it cannot finish before the test
# has read some lines and sent the signal; the test then reads the rest until the run closes it.
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

# interrupt SIGNAL MODEL DIR FILE TRACES: runs MODEL into DIR (--traces TRACES) with DIR/FILE a
# pipe, reads 20 lines of it, sends SIGNAL, reads the rest into DIR/FILE.got; the exit status
# into $status.
interrupt() {
    local sig=$1 model=$2 dir=$3 file=$4 traces=$5
    mkdir -p "$dir"
    mkfifo "$dir/$file"
    "$bin" run "$model" -o "$dir" --quiet --traces "$traces" 2>"$dir/stderr" &
    local pid=$!
    exec 3<"$dir/$file"
    : > "$dir/$file.got"
    local line
    for _ in $(seq 20); do IFS= read -r line <&3 && printf '%s\n' "$line" >> "$dir/$file.got"; done
    kill -"$sig" "$pid"
    cat <&3 >> "$dir/$file.got"
    exec 3<&-
    wait "$pid"
    status=$?
}

# prefix GOT FULL WHAT: GOT is a proper, non-trivial prefix of FULL
prefix() {
    local n
    n=$(wc -l < "$1")
    if [ "$n" -gt 20 ] && [ "$n" -lt "$(wc -l < "$2")" ] && head -n "$n" "$2" | cmp -s - "$1"; then
        ok
    else
        bad "$3: $n lines, not a proper prefix of the uninterrupted run's $(wc -l < "$2")"
    fi
}

# ---- a cell run: 1 s of the ball and stick, 10,001 samples, 60 spikes per probe
sed -e 's/"t_stop": 100,/"t_stop": 1000,/' "$examples/ball_and_stick.json" > "$tmp/bs.json"
expect_status 0 "cell run, uninterrupted" -- "$bin" run "$tmp/bs.json" -o "$tmp/full" --quiet --traces wide
expect_grep "$tmp/full/summary.json" '"status": "completed"' "completed summary"
expect_grep "$tmp/full/summary.json" '"samples": 10001' "completed summary samples"

interrupt INT "$tmp/bs.json" "$tmp/int" probes.csv wide
[ "$status" -eq 130 ] && ok || bad "SIGINT: exit $status, expected 130"
expect_grep "$tmp/int/stderr" "stopped by SIGINT at t = " "SIGINT message"
prefix "$tmp/int/probes.csv.got" "$tmp/full/probes.csv" "probes.csv after SIGINT"
# the spikes up to the stop: a prefix of the whole run's, in time order
n=$(wc -l < "$tmp/int/spikes.csv")
head -n "$n" "$tmp/full/spikes.csv" | cmp -s - "$tmp/int/spikes.csv" && ok ||
    bad "spikes.csv after SIGINT is not a prefix of the uninterrupted run's"
expect_grep "$tmp/int/summary.json" '"status": "interrupted"' "interrupted summary"
expect_grep "$tmp/int/summary.json" '"signal": "SIGINT"' "summary names the signal"
# the summary's samples and time are those of the rows written (a whole chunk, then the stop)
rows=$(($(wc -l < "$tmp/int/probes.csv.got") - 1))
expect_grep "$tmp/int/summary.json" "\"samples\": $rows," "summary samples = rows written"
last=$(tail -1 "$tmp/int/probes.csv.got" | cut -d, -f1)
t=$(grep -o '"t_ms": [0-9.e+-]*' "$tmp/int/summary.json" | cut -d' ' -f2)
awk -v a="$t" -v b="$last" 'BEGIN { exit !(a == b && a > 0 && a < 1000) }' && ok ||
    bad "summary time $t ms, last row's $last ms"

interrupt TERM "$tmp/bs.json" "$tmp/term" probes.csv wide
[ "$status" -eq 143 ] && ok || bad "SIGTERM: exit $status, expected 143"
prefix "$tmp/term/probes.csv.got" "$tmp/full/probes.csv" "probes.csv after SIGTERM"
expect_grep "$tmp/term/summary.json" '"signal": "SIGTERM"' "summary names SIGTERM"

# ---- a network run: the example rings for 1 s with 200 regular sources (400,676 spikes)
sed -e 's/"t_stop": 200/"t_stop": 1000/' \
    -e 's/"interval": 50, "number": 1}\]/"interval": 50, "number": 1}, {"name": "noise", "count": 200, "start": 0.5, "interval": 0.5, "number": 1000000}]/' \
    "$examples/ring_network.json" > "$tmp/net.json"
expect_status 0 "network, uninterrupted" -- "$bin" run "$tmp/net.json" -o "$tmp/netfull" --quiet
expect_grep "$tmp/netfull/summary.json" '"spikes": 400676' "network spikes"
expect_grep "$tmp/netfull/summary.json" '"status": "completed"' "network completed summary"
interrupt INT "$tmp/net.json" "$tmp/netint" spikes.dat none
[ "$status" -eq 130 ] && ok || bad "network SIGINT: exit $status, expected 130"
prefix "$tmp/netint/spikes.dat.got" "$tmp/netfull/spikes.dat" "spikes.dat after SIGINT"
expect_grep "$tmp/netint/summary.json" '"status": "interrupted", "signal": "SIGINT"' "network summary"
got=$(grep -vc '^#' "$tmp/netint/spikes.dat.got")
expect_grep "$tmp/netint/summary.json" "\"spikes\": $got," "network summary counts the spikes written"
# it stopped at an epoch's end (epochs of 40 steps, 1 ms; chunks of 10 of them)
t=$(grep -o '"t_ms": [0-9.]*' "$tmp/netint/summary.json" | cut -d' ' -f2)
awk -v t="$t" 'BEGIN { k = t / 1.0; exit !(t > 0 && t < 1000 && k == int(k)) }' && ok ||
    bad "network stopped at t = $t ms, not an epoch's end before t_stop"

# The same on 2 MPI ranks, where this build has MPI, with the signal sent to rank 1 alone: the
# ranks agree after each chunk of epochs, so rank 0 stops too, at the same epoch, and says so.
if have_mpi; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
    dir=$tmp/mpi
    mkdir -p "$dir"
    mkfifo "$dir/spikes.dat"
    mpirun -np 2 "$bin" run "$tmp/net.json" -o "$dir" --quiet 2>"$dir/stderr" &
    pid=$!
    exec 3<"$dir/spikes.dat"
    : > "$dir/got"
    for _ in $(seq 20); do IFS= read -r line <&3 && printf '%s\n' "$line" >> "$dir/got"; done
    rank1=""
    for p in $(pgrep -P "$pid"); do
        tr '\0' '\n' < "/proc/$p/environ" | grep -qx "OMPI_COMM_WORLD_RANK=1" && rank1=$p
    done
    [ -n "$rank1" ] && kill -INT "$rank1"
    cat <&3 >> "$dir/got"
    exec 3<&-
    wait "$pid"
    status=$?
    [ -n "$rank1" ] && ok || bad "2 ranks: rank 1's process not found"
    [ "$status" -eq 130 ] && ok || bad "2 ranks, SIGINT to rank 1: exit $status, expected 130"
    prefix "$dir/got" "$tmp/netfull/spikes.dat" "2 ranks: spikes.dat after SIGINT to rank 1"
    expect_grep "$dir/summary.json" '"ranks": 2, ' "2 ranks: summary"
    expect_grep "$dir/summary.json" '"status": "interrupted", "signal": "SIGINT"' "2 ranks: interrupted"
    expect_grep "$dir/stderr" "stopped by SIGINT" "2 ranks: rank 0 says it stopped"
fi

# ---- a state that turns NaN (hh's formulas at -1e6 nA into a 1 nm cable): exit 1, the cell,
# node and time; the rows before the check written, the summary marked failed
cat > "$tmp/nan.json" <<'EOF'
{"t_stop": 10, "dt": 0.025, "hh_table": false,
 "cells": [{"cable": {"length": 0.001, "diam": 0.001}, "cm": 0.001,
   "mechanisms": [{"name": "hh"}],
   "stimuli": [{"type": "iclamp", "at": {"section": 0, "x": 0.5}, "del": 1, "dur": 100, "amp": -1e6}],
   "probes": [{"name": "v", "at": {"section": 0, "x": 0.5}}]}]}
EOF
expect_status 1 "NaN state" -- "$bin" run "$tmp/nan.json" -o "$tmp/nan" --traces wide
expect_grep "$tmp/err" "simulation: v = nan mV in cell 0, node [0-9]* (section 0, x = [0-9.]*) at t = 1.6 ms (finite at t = 0 ms)" "NaN message"
expect_grep "$tmp/err" "NaN or infinite" "NaN status"
expect_grep "$tmp/nan/summary.json" '"status": "failed"' "failed summary"
expect_grep "$tmp/nan/summary.json" '"error": "simulation: v = nan mV' "summary has the error"
rows=$(($(wc -l < "$tmp/nan/probes.csv") - 1))
[ "$rows" -eq 65 ] && ok || bad "NaN run: $rows samples written, expected 65 (t = 0 .. 1.6 ms)"

# the same cell in a network: named by its gid
cat > "$tmp/nan_net.json" <<'EOF2'
{"t_stop": 10, "dt": 0.025, "hh_table": false,
 "cells": [{"count": 2, "cable": {"length": 100, "diam": 1}, "mechanisms": [{"name": "pas"}]},
  {"cable": {"length": 0.001, "diam": 0.001}, "cm": 0.001, "mechanisms": [{"name": "hh"}],
   "stimuli": [{"type": "iclamp", "at": {"section": 0, "x": 0.5}, "del": 1, "dur": 100, "amp": -1e6}],
   "probes": [{"name": "v", "at": {"section": 0, "x": 0.5}, "spike_threshold": 0}]}],
 "network": {"sources": [{"start": 1, "number": 3, "interval": 1}]}}
EOF2
expect_status 1 "NaN state in a network" -- "$bin" run "$tmp/nan_net.json" -o "$tmp/nan_net"
expect_grep "$tmp/err" "simulation: v = nan mV in gid 2, node [0-9]* (section 0, x = [0-9.]*) at t = 1.6 ms" "NaN message names the gid"

echo "cli_interrupt: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
