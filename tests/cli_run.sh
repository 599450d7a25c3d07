#!/usr/bin/env bash
# hinesbatch run end to end: the examples, CSV outputs, spike times against
# NEURON's, relative morphology paths, and errors. Usage: cli_run.sh HINESBATCH DATA_DIR
set -u
bin=$1
data=$2
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

expect_status 0 "help" -- "$bin" run --help
expect_grep "$tmp/out" "usage: hinesbatch run MODEL.json" "help text"
expect_status 0 "command list" -- "$bin" --help
expect_grep "$tmp/out" "run " "run listed"

# Ball and stick (NEURON's validation model, nseg 11 at dt 0.025): outputs and summary.
expect_status 0 "ball and stick" -- "$bin" run "$examples/ball_and_stick.json" -o "$tmp/bs/nested"
expect_grep "$tmp/out" "1 cell, 3 probes" "summary"
expect_grep "$tmp/out" "soma: 6 spikes" "spike summary"
head -1 "$tmp/bs/nested/probes.csv" > "$tmp/header"
expect_grep "$tmp/header" "^t_ms,soma,dend_mid,dend_tip$" "probes.csv header"
rows=$(wc -l < "$tmp/bs/nested/probes.csv")
[ "$rows" -eq 1002 ] && ok || bad "probes.csv has $rows lines, expected 1002 (header + 1001 samples)"
expect_grep "$tmp/bs/nested/probes.csv" "^0,-65,-65,-65$" "first sample is v_init"
expect_grep "$tmp/bs/nested/spikes.csv" "^probe,t_ms$" "spikes.csv header"
# Every probe spikes 6 times; the soma's first spike precedes the dendrite's (the wave
# starts at the clamp, but the soma fires first: its hh drives the dendrite).
for p in soma dend_mid dend_tip; do
    n=$(grep -c "^$p," "$tmp/bs/nested/spikes.csv")
    [ "$n" -eq 6 ] && ok || bad "$p: $n spikes, expected 6"
done

# The same model at NEURON's reference dt against reference/neuron-arbor-validation-2016.
sed -e 's/"dt": 0.025/"dt": 0.001/' -e 's/"sample_dt": 0.1/"sample_dt": 1/' "$examples/ball_and_stick.json" > "$tmp/bs001.json"
expect_status 0 "ball and stick dt 0.001" -- "$bin" run "$tmp/bs001.json" -o "$tmp/bs001" --quiet
[ ! -s "$tmp/out" ] && ok || bad "--quiet printed something"
# NEURON's soma spike times for nseg 11 (the "soma" list of the nseg 11 entry).
want=$(sed -n '/"nseg": 11/,/"nseg": 51/p' "$data/reference/neuron-arbor-validation-2016/ball_and_stick.json" |
    sed -n '/"soma"/,/\]/p' | grep -o '[0-9][0-9.]*' | tr '\n' ' ')
got=$(grep '^soma,' "$tmp/bs001/spikes.csv" | cut -d, -f2 | tr '\n' ' ')
if awk -v a="$got" -v b="$want" 'BEGIN { n = split(a, x, " "); m = split(b, y, " ");
        if (n != 6 || m != 6) exit 1;
        for (i = 1; i <= n; i++) { d = x[i] - y[i]; if (d < 0) d = -d; if (d > 0.05) exit 1 } }'; then
    ok
else
    bad "soma spikes at dt 0.001 ($got) differ from NEURON's ($want) by more than 0.05 ms"
fi

# Rallpack 1 from the example file: the far end at 250 ms against the analytic value.
expect_status 0 "rallpack1" -- "$bin" run "$examples/rallpack1.json" -o "$tmp/rp1"
ref=$(tail -1 "$data/reference/rallpack/rallpack1/ref_cable.x" | awk '{print $2 * 1000}')
last=$(tail -1 "$tmp/rp1/probes.csv" | cut -d, -f3)
awk -v a="$last" -v b="$ref" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 0.2) }' && ok ||
    bad "rallpack1 v(x=1, 250 ms) = $last mV, analytic $ref mV"

# A population of SWC cells (morphology path relative to the model file).
expect_status 0 "population" -- "$bin" run "$examples/hsn_population.json" -o "$tmp/pop"
expect_grep "$tmp/out" "16 cells, 32 probes" "population summary"
expect_grep "$tmp/pop/probes.csv" "c15.s100" "probe names of copies"

# Errors: exit 1 with the key path; usage errors exit 2.
expect_status 2 "no model" -- "$bin" run
expect_grep "$tmp/err" "no model file given" "no model message"
expect_status 2 "unknown option" -- "$bin" run "$examples/rallpack1.json" --fast
expect_status 1 "missing file" -- "$bin" run "$tmp/none.json"
expect_grep "$tmp/err" "none.json: cannot open" "missing file message"
printf '{"t_stop": 1, "cells": [{"cable": {"length": 10, "diam": 1}, "mechanisms": [{"name": "hh", "gnabar": "x"}]}]}' > "$tmp/bad.json"
expect_status 1 "bad model" -- "$bin" run "$tmp/bad.json" -o "$tmp/bad"
expect_grep "$tmp/err" "cells\[0\].mechanisms\[0\].gnabar: expected a number from 0 to 1000 \[S/cm2\], found a string" "bad model message"
[ ! -e "$tmp/bad/probes.csv" ] && ok || bad "outputs written for a bad model"
printf '{"t_stop": 1, "cells": [{"morphology": "missing.swc"}]}' > "$tmp/nomorph.json"
expect_status 1 "missing morphology" -- "$bin" run "$tmp/nomorph.json"
expect_grep "$tmp/err" "cells\[0\].morphology: $tmp/missing.swc: cannot open" "missing morphology message"

echo "cli_run: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
