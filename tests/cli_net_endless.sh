#!/usr/bin/env bash
# Self-events without end (docs/mechanisms.md, section 10): tests/nmodl/endless's EndlessSyn
# sends itself an event of no delay on each of its events until it has had `limit`; with a large
# limit that never ends at one time (NEURON loops for ever). hinesbatch refuses a target's
# self-events past HB_SELF_STEP_MAX (100000) in one step, by name (mechanism, synapse, cell, time,
# the bound, what was expected), with exit 1: at t = 0 (hb_sim_init's events of no delay), during
# the run from INITIAL's net_send, and from a connection's event, on 1 and 2 threads. Exactly
# HB_SELF_STEP_MAX events at one time still run. Every run under `timeout`: a hang fails here.
# Usage: cli_net_endless.sh HINESBATCH
set -u
bin=$1
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
expect_status 0 "build the endless catalogue" -- "$bin" build-catalogue "$src/tests/nmodl/endless" -o "$tmp/endless.so"
# net START LIMIT SPIKE BACKEND > FILE: one cell with EndlessSyn (start, limit), a source firing
# once at SPIKE ms into it (delay 1 ms), 10 ms, the synapse's n recorded every step
net() {
    cat <<JSON
{"catalogues": ["endless.so"], "t_stop": 10, "dt": 0.025, "v_init": -65, "backend": "$4",
 "cells": [{"name": "ball", "count": 1,
            "sections": [{"name": "soma", "parent": null, "length": 10, "diam": 10, "type": "soma"}],
            "mechanisms": [{"name": "pas", "region": "soma"}],
            "synapses": [{"name": "ExpSyn", "at": "soma"},
                         {"name": "EndlessSyn", "at": "soma", "start": $1, "limit": $2}],
            "probes": [{"name": "soma", "at": "soma", "spike_threshold": -10}]}],
 "network": {"sources": [{"name": "drive", "count": 1, "start": $3, "interval": 100, "number": 1,
                          "noise": 0, "seed": 0}],
             "connections": [{"source": 1, "target": 0, "synapse": 1, "weight": 0.01, "delay": 1}]},
 "record": {"gids": [0], "locations": ["soma"], "variables": ["syn[1].n"], "sample_dt": 0.025}}
JSON
}
# refused WHAT FILE TIME: exit 1 within 60 s, the message naming EndlessSyn, its synapse and
# cell, the time and the bound
refused() {
    expect_status 1 "$1" -- timeout 60 "$bin" run "$2" -o "$tmp/out_$RANDOM" --quiet --traces csv
    expect_grep "$tmp/err" "EndlessSyn at t = $3 ms: more than 100000 self-events to one instance in one step (HB_SELF_STEP_MAX); expected its NET_RECEIVE to stop sending itself events of no delay, at synapse 1 in gid 0" "$1: message"
}
net 0 1e9 100 seq > "$tmp/zero.json"
refused "endless at t = 0" "$tmp/zero.json" 0
net 2.5 1e9 100 seq > "$tmp/run.json"
refused "endless from INITIAL's net_send(2.5, 1)" "$tmp/run.json" 2.5
net 1e9 1e9 4 seq > "$tmp/event.json"
refused "endless from a connection's event at 5 ms" "$tmp/event.json" 5
net 2.5 1e9 100 omp > "$tmp/run_omp.json"
OMP_NUM_THREADS=2 refused "endless during the run, 2 threads" "$tmp/run_omp.json" 2.5
# 2 ranks, gid 0 endless and gid 1 (limit 5) not: the rank of gid 0 names it, the other stops
# too ("another rank failed") instead of waiting for it
if command -v mpirun > /dev/null && "$bin" --version | grep -q "communicators: serial, mpi"; then
    /usr/bin/python3 - "$tmp/run.json" "$tmp/ranks.json" <<'PY'
import sys, json, copy
d = json.load(open(sys.argv[1]))
calm = copy.deepcopy(d["cells"][0])
calm["name"] = "calm"
calm["synapses"][1]["limit"] = 5
d["cells"].append(calm)
d["network"]["connections"][0]["source"] = 2
json.dump(d, open(sys.argv[2], "w"))
PY
    expect_status 1 "endless on one of 2 ranks" -- timeout 60 env OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        OMPI_MCA_mpi_yield_when_idle=1 mpirun --allow-run-as-root -np 2 "$bin" run \
        "$tmp/ranks.json" -o "$tmp/ranks" --quiet --traces csv
    expect_grep "$tmp/err" "EndlessSyn at t = 2.5 ms: more than 100000 self-events .* at synapse 1 in gid 0" "2 ranks: message"
    expect_grep "$tmp/err" "another rank failed" "2 ranks: the other rank"
fi
# the run stops at the step it happens in, the spikes and samples before it kept
grep -q '"status": "failed"' "$tmp"/out_*/summary.json && ok || bad "no failed summary.json"
# the bound itself is allowed: 100000 events at 0 ms (EndlessSyn's n counts them, at 0 and
# 10 ms alike), then none more; 100001 at 0 ms is refused
net 0 100000 100 seq > "$tmp/at_bound.json"
expect_status 0 "100000 self-events at t = 0" -- timeout 60 "$bin" run "$tmp/at_bound.json" -o "$tmp/bound" --quiet --traces csv
awk -F, '$3 == 0 { z = $4 } $3 == 10 { e = $4 } END { exit !(z == 100000 && e == 100000) }' \
    "$tmp/bound/traces.csv" && ok || bad "at the bound: n at 0 and 10 ms not 100000: $(head -3 "$tmp/bound/traces.csv")"
net 0 100001 100 seq > "$tmp/past_bound.json"
refused "100001 self-events at t = 0" "$tmp/past_bound.json" 0
echo "cli_net_endless: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
