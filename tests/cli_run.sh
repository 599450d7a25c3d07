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
expect_status 0 "ball and stick" -- "$bin" run "$examples/ball_and_stick.json" -o "$tmp/bs/nested" --traces csv
expect_grep "$tmp/out" "1 cell, 3 probes" "summary"
expect_grep "$tmp/out" "soma: 6 spikes" "spike summary"
[ ! -e "$tmp/bs/nested/traces.h5" ] && ok || bad "traces.h5 written with --traces csv"
# --traces csv: the long format, gid,probe,t_ms,v_mv, a row per probe and sample (the
# default, traces.h5 or its fallback: tests/cli_traces.sh).
head -1 "$tmp/bs/nested/traces.csv" > "$tmp/header"
expect_grep "$tmp/header" "^gid,probe,t_ms,v_mv$" "traces.csv header"
rows=$(wc -l < "$tmp/bs/nested/traces.csv")
[ "$rows" -eq 3004 ] && ok || bad "traces.csv has $rows lines, expected 3004 (header + 3 x 1001 samples)"
[ "$(sed -n 2,4p "$tmp/bs/nested/traces.csv" | tr '\n' ' ')" = "0,soma,0,-65 0,dend_mid,0,-65 0,dend_tip,0,-65 " ] &&
    ok || bad "traces.csv: the first sample is not v_init at the three probes"
# 6 significant digits of v (not 17)
awk -F, 'NR > 1 { v = $4; sub(/^-/, "", v); sub(/\./, "", v); sub(/^0+/, "", v); if (length(v) > 6) bad = 1 }
    END { exit bad }' "$tmp/bs/nested/traces.csv" && ok || bad "traces.csv: v with more than 6 digits"
[ ! -e "$tmp/bs/nested/probes.csv" ] && ok || bad "probes.csv written without --traces wide"
# spikes.dat: '# gid t_ms', then 'gid time' lines: the cell's spikes at its first probe with
# spike_threshold (soma)
[ "$(head -1 "$tmp/bs/nested/spikes.dat")" = "# gid t_ms" ] && ok || bad "spikes.dat: no '# gid t_ms' first line"
[ "$(awk 'NR > 1 {print $2}' "$tmp/bs/nested/spikes.dat" | tr '\n' ' ')" = \
  "$(grep '^soma,' "$tmp/bs/nested/spikes.csv" | cut -d, -f2 | tr '\n' ' ')" ] && ok ||
    bad "spikes.dat times differ from the soma probe's"
[ "$(awk 'NR > 1 && $1 != 0' "$tmp/bs/nested/spikes.dat" | wc -l)" -eq 0 ] && [ "$(wc -l < "$tmp/bs/nested/spikes.dat")" -eq 7 ] &&
    ok || bad "spikes.dat: expected 6 lines of gid 0"
# The wide format behind --traces wide: probes.csv as before, 17 digits.
expect_status 0 "ball and stick, wide traces" -- "$bin" run "$examples/ball_and_stick.json" -o "$tmp/bsw" --traces wide --quiet
head -1 "$tmp/bsw/probes.csv" > "$tmp/header"
expect_grep "$tmp/header" "^t_ms,soma,dend_mid,dend_tip$" "probes.csv header"
rows=$(wc -l < "$tmp/bsw/probes.csv")
[ "$rows" -eq 1002 ] && ok || bad "probes.csv has $rows lines, expected 1002 (header + 1001 samples)"
expect_grep "$tmp/bsw/probes.csv" "^0,-65,-65,-65$" "first sample is v_init"
[ ! -e "$tmp/bsw/traces.csv" ] && ok || bad "traces.csv written with --traces wide"
# long and wide hold the same samples (to 6 digits)
awk -F, 'NR == FNR { if (FNR > 1) w[$1] = $2; next } FNR > 1 && $2 == "soma" {
        d = $4 - w[$3]; if (d < 0) d = -d; if (d > 1e-4 * (w[$3] < 0 ? -w[$3] : w[$3]) + 1e-9) bad = 1; n++ }
    END { exit bad || n != 1001 }' "$tmp/bsw/probes.csv" "$tmp/bs/nested/traces.csv" && ok ||
    bad "traces.csv's soma samples differ from probes.csv's"
expect_status 0 "no traces" -- "$bin" run "$examples/ball_and_stick.json" -o "$tmp/bsn" --traces none --quiet
[ ! -e "$tmp/bsn/traces.csv" ] && [ ! -e "$tmp/bsn/probes.csv" ] && [ -s "$tmp/bsn/spikes.dat" ] && ok ||
    bad "--traces none: traces written, or no spikes.dat"
expect_status 2 "bad --traces" -- "$bin" run "$examples/ball_and_stick.json" -o "$tmp/bsx" --traces long
expect_grep "$tmp/err" "\-\-traces long: expected h5, csv, wide or none" "bad --traces message"
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
expect_status 0 "rallpack1" -- "$bin" run "$examples/rallpack1.json" -o "$tmp/rp1" --traces wide
ref=$(tail -1 "$data/reference/rallpack/rallpack1/ref_cable.x" | awk '{print $2 * 1000}')
last=$(tail -1 "$tmp/rp1/probes.csv" | cut -d, -f3)
awk -v a="$last" -v b="$ref" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d < 0.2) }' && ok ||
    bad "rallpack1 v(x=1, 250 ms) = $last mV, analytic $ref mV"

# A population of SWC cells (morphology path relative to the model file).
expect_status 0 "population" -- "$bin" run "$examples/hsn_population.json" -o "$tmp/pop" --traces csv
expect_grep "$tmp/out" "16 cells, 32 probes" "population summary"
# more than 10 probes spiked: one line of totals, not a line per probe
expect_grep "$tmp/out" "^  [0-9]* spikes at [0-9]* of 32 probes, the first at [0-9.]* ms (c[0-9]*\.[a-z0-9]*); per probe in .*/spikes.csv" "many probes: totals"
[ "$(wc -l < "$tmp/out")" -eq 3 ] && ok || bad "population: $(wc -l < "$tmp/out") lines on stdout, expected 3: $(head -5 "$tmp/out")"
expect_grep "$tmp/pop/traces.csv" "^15,s100,30,-" "probes of copies by gid and name"
# spikes.dat: by time, then gid; every cell's soma spikes (16 cells x 3)
sed 1d "$tmp/pop/spikes.dat" | sort -s -k2,2g -k1,1n | cmp -s - <(sed 1d "$tmp/pop/spikes.dat") && ok || bad "spikes.dat not ordered by time, then gid"
[ "$(wc -l < "$tmp/pop/spikes.dat")" -eq 49 ] && [ "$(sed 1d "$tmp/pop/spikes.dat" | cut -d' ' -f1 | sort -un | wc -l)" -eq 16 ] &&
    ok || bad "spikes.dat: expected 48 spikes of 16 gids"
# A 64-cell, 200 ms run sampled every step, one probe a cell: traces.csv well under 20 MB
# (12 MB; the default traces.h5 of two probes a cell: tests/cli_traces.sh).
awk '/"network"/ { exit } { print }' "$examples/ring_network.json" | sed -e '$ s/,$//' > "$tmp/c64.json"
printf '}\n' >> "$tmp/c64.json"
expect_status 0 "64 cells, 200 ms" -- "$bin" run "$tmp/c64.json" -o "$tmp/c64" --quiet --traces csv
bytes=$(wc -c < "$tmp/c64/traces.csv")
rows=$(wc -l < "$tmp/c64/traces.csv")
[ "$rows" -eq $((64 * 8001 + 1)) ] && [ "$bytes" -lt 16000000 ] && ok ||
    bad "64 cells x 200 ms: traces.csv $rows rows, $bytes bytes (expected 512065 rows, < 16 MB)"

# --sonata: spikes.h5 (an HDF5 file; its content: tests/python/test_sonata.py), or where the
# build has no HDF5 an error before the run.
if "$bin" run "$examples/ball_and_stick.json" -o "$tmp/h5" --sonata --quiet 2> "$tmp/h5err"; then
    [ "$(head -c 8 "$tmp/h5/spikes.h5" | od -An -c | tr -d ' ')" = '211HDF\r\n032\n' ] && ok ||
        bad "--sonata: spikes.h5 is not an HDF5 file"
else
    grep -q -- "--sonata: this build has no HDF5" "$tmp/h5err" && [ ! -e "$tmp/h5/spikes.dat" ] && ok ||
        bad "--sonata failed: $(cat "$tmp/h5err")"
fi

# Errors: exit 1 with the key path; usage errors exit 2.
expect_status 2 "no model" -- "$bin" run
expect_grep "$tmp/err" "no model file given" "no model message"
expect_status 2 "unknown option" -- "$bin" run "$examples/rallpack1.json" --fast
expect_status 1 "missing file" -- "$bin" run "$tmp/none.json"
expect_grep "$tmp/err" "none.json: cannot open" "missing file message"
printf '{"t_stop": 1, "cells": [{"cable": {"length": 10, "diam": 1}, "mechanisms": [{"name": "hh", "gnabar": "x"}]}]}' > "$tmp/bad.json"
expect_status 1 "bad model" -- "$bin" run "$tmp/bad.json" -o "$tmp/bad"
expect_grep "$tmp/err" "cells\[0\].mechanisms\[0\].gnabar: expected a number from 0 to 1000 \[S/cm2\], found a string" "bad model message"
[ ! -e "$tmp/bad/traces.csv" ] && [ ! -e "$tmp/bad/spikes.dat" ] && ok || bad "outputs written for a bad model"
printf '{"t_stop": 1, "cells": [{"morphology": "missing.swc"}]}' > "$tmp/nomorph.json"
expect_status 1 "missing morphology" -- "$bin" run "$tmp/nomorph.json"
expect_grep "$tmp/err" "cells\[0\].morphology: $tmp/missing.swc: cannot open" "missing morphology message"

echo "cli_run: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
