#!/usr/bin/env bash
# Neurolucida ASC through the CLI: info and run read .asc (or ASC content) as NEURON's Import3d
# does; hinesbatch run of the passive L5PC (BluePyOpt's C060114A7.asc) and of the hand-written
# cell gives NEURON 8.2's traces (tests/reference/neuron-asc/*_trace.txt, written by
# tests/neuron/asc_reference.py) within 0.05 mV (measured: 1e-7 mV); bad files fail with
# file:line:column.
# Usage: cli_asc.sh HINESBATCH DATA_DIR [REFERENCE_DIR] (asc_neuron passes traces just written by the
# installed NEURON)
set -u
bin=$1
data=$(cd "$2" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
ref=$(cd "$(dirname "$0")/reference/neuron-asc" && pwd)
traces=${3:-$ref}
l5pc=$data/morphologies-asc/C060114A7.asc

expect_status 0 "info asc" -- "$bin" info "$l5pc" --json --scheme neuron
expect_grep "$tmp/out" '"sections": 325, ' "NEURON's 325 sections"
expect_grep "$tmp/out" '"points": 10836, ' "NEURON's 10836 3-D points"
cp "$ref/small.asc" "$tmp/small.txt"
expect_status 0 "ASC content under another name" -- "$bin" info "$tmp/small.txt" --json --scheme neuron
expect_grep "$tmp/out" '"sections": 9, ' "read as ASC"
expect_grep "$tmp/err" "small.txt:46: Import3d: 1 section of one point" "its warning"

model() { # MORPHOLOGY PROBE_SECTION
    cat <<JSON
{"t_stop": 80, "dt": 0.025, "sample_dt": 0.5,
 "cells": [{"morphology": "$1",
            "discretization": {"policy": "d-lambda", "scheme": "neuron"}, "Ra": 100, "cm": 1,
            "mechanisms": [{"name": "pas", "region": "all", "g": 1e-4, "e": -65}],
            "stimuli": [{"type": "iclamp", "at": {"section": 0, "x": 0.5}, "del": 5, "dur": 50, "amp": 0.5}],
            "probes": [{"name": "soma", "at": {"section": 0, "x": 0.5}},
                       {"name": "tip", "at": {"section": $2, "x": 1}}]}]}
JSON
}
worst() { # REFERENCE PROBES_CSV: samples, max |v - NEURON| at the soma and at the tip
    awk -F'[ ,]' 'NR == FNR { if ($1 !~ /^#/) { s[sprintf("%.3f", $1)] = $2; t[sprintf("%.3f", $1)] = $3 }; next }
        FNR > 1 { k = sprintf("%.3f", $1); if (!(k in s)) next; n++
                  d = $2 - s[k]; if (d < 0) d = -d; if (d > a) a = d
                  d = $3 - t[k]; if (d < 0) d = -d; if (d > b) b = d }
        END { printf "%d %.3g %.3g\n", n, a, b }' "$1" "$2"
}
for cell in "$l5pc" "$ref/small.asc" "$ref/stack.asc"; do
    name=$(basename "$cell" .asc)
    sec=$(head -1 "$traces/${name}_trace.txt" | sed 's/.*(section \([0-9]*\)).*/\1/')
    model "$cell" "$sec" > "$tmp/$name.json"
    expect_status 0 "run $name" -- "$bin" run "$tmp/$name.json" -o "$tmp/$name" --traces wide
    read -r n a b <<< "$(worst "$traces/${name}_trace.txt" "$tmp/$name/probes.csv")"
    echo "$name: $n samples, max |v - NEURON| soma $a mV, section $sec tip $b mV"
    [ "$n" -eq 161 ] && awk -v a="$a" -v b="$b" 'BEGIN { exit !(a < 0.05 && b < 0.05) }' && ok ||
        bad "$name: $n samples, max |v - NEURON| $a, $b mV (expected 161, < 0.05)"
done

printf '("CellBody" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) (5 0 0 1)\n' > "$tmp/open.asc"
expect_status 1 "unbalanced" -- "$bin" info "$tmp/open.asc"
expect_grep "$tmp/err" "open.asc:3:1: found end of file; expected ')' closing the tree" "unbalanced message"
printf '((Dendrite) (0 0 0 1) (5 0 0 1))\n' > "$tmp/nosoma.asc"
expect_status 1 "no soma" -- "$bin" info "$tmp/nosoma.asc"
expect_grep "$tmp/err" "nosoma.asc: no soma; expected a (\"CellBody\" ...) contour" "no soma message"
: > "$tmp/empty.asc"
expect_status 1 "empty" -- "$bin" info "$tmp/empty.asc"
expect_grep "$tmp/err" "empty.asc: empty file" "empty message"
model "$tmp/open.asc" 1 > "$tmp/bad.json"
expect_status 1 "model with a bad ASC" -- "$bin" run "$tmp/bad.json" -o "$tmp/bad"
expect_grep "$tmp/err" "open.asc:3:1: found end of file" "model file names the ASC error"

echo "cli_asc: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
