#!/usr/bin/env bash
# hinesbatch run of a network that fails keeps its outputs whole (issue 56): a state that turns
# NaN, spikes.dat on a full device (/dev/full) and spikes.dat past the file size limit (a disk
# filling up mid-run) each exit 1 with summary.json marked failed and the message, and
# spikes.dat ends with a whole line, the spikes written before the failure. SIGINT while the
# network is built stops the build with summary.json marked interrupted; a long build shows
# a progress line on a terminal. Usage: cli_net_faults.sh HINESBATCH DATA
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

# ---- a cell whose state turns NaN at 1.6 ms (hh at -1e6 nA into a 1 nm cable) beside a source
cat > "$tmp/nan.json" <<'EOF'
{"t_stop": 10, "dt": 0.025, "hh_table": false,
 "cells": [{"cable": {"length": 0.001, "diam": 0.001}, "cm": 0.001,
   "mechanisms": [{"name": "hh"}],
   "stimuli": [{"type": "iclamp", "at": {"section": 0, "x": 0.5}, "del": 1, "dur": 100, "amp": -1e6}],
   "probes": [{"name": "v", "at": {"section": 0, "x": 0.5}, "spike_threshold": 0}]}],
 "network": {"sources": [{"start": 0.5, "interval": 0.5, "number": 100}]}}
EOF
expect_status 1 "network NaN state" -- "$bin" run "$tmp/nan.json" -o "$tmp/nan"
expect_grep "$tmp/err" "v = nan mV in gid 0" "NaN message"
expect_grep "$tmp/err" "keep what was computed" "NaN: says what it kept"
expect_grep "$tmp/nan/summary.json" '"status": "failed", "error": "simulation: v = nan mV in gid 0' "NaN: failed summary"
# the source's spikes of the epochs before the failure (0.5, 1, 1.5 ms), in whole lines
[ "$(grep -v '^#' "$tmp/nan/spikes.dat" | tr '\n' ' ')" = "1 0.5 1 1 1 1.5 " ] && ok ||
    bad "NaN: spikes.dat $(head -c 200 "$tmp/nan/spikes.dat")"

# ---- 1,000 regular sources, 1,000,000 spikes (about 17 MB of spikes.dat)
cat > "$tmp/flood.json" <<'EOF'
{"t_stop": 2000, "dt": 0.025, "network": {"sources": [{"count": 1000, "start": 0.1234567, "interval": 2.0000001, "number": 100000000}]}}
EOF
# spikes.dat on a device that is always full
mkdir -p "$tmp/full"
ln -s /dev/full "$tmp/full/spikes.dat"
expect_status 1 "spikes.dat on /dev/full" -- "$bin" run "$tmp/flood.json" -o "$tmp/full"
expect_grep "$tmp/err" "spikes.dat: cannot write: No space left on device" "full device message"
expect_grep "$tmp/full/summary.json" '"status": "failed", "error": ".*No space left on device' "full device: failed summary"

# spikes.dat cut off at 8 MiB by the file size limit (SIGXFSZ ignored, so write fails, EFBIG,
# part way through a chunk): the chunk's part is cut back, the file ends with a whole line
( trap '' XFSZ; ulimit -f 8192; "$bin" run "$tmp/flood.json" -o "$tmp/big" > "$tmp/out" 2> "$tmp/err" )
status=$?
[ "$status" -eq 1 ] && ok || { bad "spikes.dat over the size limit: exit $status, expected 1"; cat "$tmp/err" >&2; }
expect_grep "$tmp/err" "spikes.dat: cannot write: File too large (it keeps the [0-9]* spikes written before)" "size limit message"
expect_grep "$tmp/big/summary.json" '"status": "failed", "error": ".*File too large' "size limit: failed summary"
kept=$(grep -o 'keeps the [0-9]* spikes' "$tmp/err" | cut -d' ' -f3)
lines=$(grep -vc '^#' "$tmp/big/spikes.dat")
[ -n "$kept" ] && [ "$lines" -eq "$kept" ] && [ "$lines" -gt 100000 ] && ok ||
    bad "size limit: $lines lines in spikes.dat, the message says ${kept:-?}"
[ "$(tail -c 1 "$tmp/big/spikes.dat" | od -An -c | tr -d ' ')" = '\n' ] && ok ||
    bad "size limit: spikes.dat ends with a partial line: $(tail -c 40 "$tmp/big/spikes.dat")"
awk 'NR == 1 && $0 == "# gid t_ms" { next } NF != 2 || $1 !~ /^[0-9]+$/ { exit 1 }' \
    "$tmp/big/spikes.dat" && ok ||
    bad "size limit: spikes.dat has a line that is not 'gid time'"
# the lines are those of the run's start: the sources' first spikes, 1,000 at 0.1234567 ms
[ "$(head -3 "$tmp/big/spikes.dat" | tr '\n' ' ')" = "# gid t_ms 0 0.1234567 1 0.1234567 " ] && ok ||
    bad "size limit: spikes.dat starts $(head -2 "$tmp/big/spikes.dat")"

# ---- SIGINT while a busyring of 40,000 cells is built: the build stops (within a tenth of a
# second of the next cell), summary.json says so, exit 130. Sent once the run catches SIGINT
# (bit 1 of /proc/PID/status's SigCgt), a fifth of a second into the build.
examples=$(cd "$(dirname "$0")/../examples" && pwd)
sed 's/"num-cells": 256/"num-cells": 40000/' "$examples/busyring_small.json" > "$tmp/ring.json"
"$bin" run "$tmp/ring.json" -o "$tmp/built" --t-stop 1 > "$tmp/out" 2> "$tmp/err" &
pid=$!
for _ in $(seq 600); do
    mask=$(awk '/^SigCgt/ { print $2 }' "/proc/$pid/status" 2> /dev/null)
    [ -n "$mask" ] && [ $((0x$mask & 2)) -ne 0 ] && break
    sleep 0.01
done
sleep 0.2
kill -INT "$pid"
wait "$pid"
status=$?
[ "$status" -eq 130 ] && ok || bad "SIGINT while built: exit $status, expected 130"
expect_grep "$tmp/built/summary.json" '"status": "interrupted", "signal": "SIGINT", "phase": "build"' "SIGINT while built: summary"
expect_grep "$tmp/err" "stopped by SIGINT while the model was built" "SIGINT while built: message"

# ---- on a terminal (script's pseudo-terminal), a long build shows a progress line on stderr
if command -v script > /dev/null && command -v pgrep > /dev/null; then
    script -qfec "$bin run $tmp/ring.json -o $tmp/shown --t-stop 1" "$tmp/pty" > /dev/null &
    spid=$!
    for _ in $(seq 600); do grep -q "building: " "$tmp/pty" 2> /dev/null && break; sleep 0.05; done
    expect_grep "$tmp/pty" "building: cells [a-z]* [0-9]* / 40000, [0-9.]* s" "build progress line"
    child=$(pgrep -P "$spid" | head -1)
    [ -n "$child" ] && kill -INT "$child"
    wait "$spid"
fi

echo "cli_net_faults: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
