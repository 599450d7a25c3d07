#!/usr/bin/env bash
# hinesbatch run's traces by default: a 64-cell, 200 ms run sampled every step with two probes
# a cell writes traces.h5, a SONATA report (docs/model.md), under 20 MB and holding every
# sample (the 17-digit probes.csv's as float32, traces.csv's to its 6 digits); a restart
# continues it as an uninterrupted run's. A build without HDF5 (`hinesbatch --version`
# says which) writes traces.csv instead with a notice, and refuses --traces h5 before the
# run. And `hinesbatch plot` draws a run's directory. Usage: cli_traces.sh HINESBATCH DATA_DIR
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib_cli.sh"

# Debian's python3 (numpy, h5py, matplotlib) reads the HDF5 files and draws the plots.
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)
h5() { "$python" "$here/traces_h5.py" "$@"; }

expect_status 0 "version" -- "$bin" --version
if grep -q "outputs: csv, hdf5" "$tmp/out"; then hdf5=1; else hdf5=0; fi
grep -q "outputs: csv" "$tmp/out" && ok || bad "--version names no outputs: $(cat "$tmp/out")"

# 64 ball-and-stick cells in four groups of 16 (clamps of 0.2 to 0.5 nA), two probes a cell
cell() { # AMP
    cat <<JSON
    {"count": 16,
     "sections": [
       {"name": "soma", "parent": null, "length": 12.6157, "diam": 12.6157, "type": "soma"},
       {"name": "dend", "parent": "soma", "parent_x": 1, "length": 200, "diam": 1, "type": "dend"}],
     "regions": [{"region": "dend", "nseg": 11}],
     "mechanisms": [{"name": "hh", "region": "soma"}, {"name": "pas", "region": "dend", "g": 0.001, "e": -65}],
     "stimuli": [{"type": "iclamp", "at": "soma", "del": 5, "dur": 190, "amp": $1}],
     "probes": [{"name": "soma", "at": "soma", "spike_threshold": -10},
                {"name": "dend", "at": {"section": "dend", "x": 0.9}}]}
JSON
}
{
    printf '{"t_stop": 200, "dt": 0.025, "cells": [\n'
    cell 0.2; printf ',\n'; cell 0.3; printf ',\n'; cell 0.4; printf ',\n'; cell 0.5
    printf ']}\n'
} > "$tmp/c64.json"

expect_status 0 "64 cells, 200 ms, by default" -- "$bin" run "$tmp/c64.json" -o "$tmp/def"
cp "$tmp/err" "$tmp/def.err"
cp "$tmp/out" "$tmp/def.out"
expect_status 0 "the same, wide" -- "$bin" run "$tmp/c64.json" -o "$tmp/wide" --traces wide --quiet
expect_status 0 "the same, csv" -- "$bin" run "$tmp/c64.json" -o "$tmp/csv" --traces csv --quiet
[ ! -s "$tmp/err" ] && ok || bad "--traces csv chosen: a notice on stderr: $(cat "$tmp/err")"
rows=$(wc -l < "$tmp/csv/traces.csv")
[ "$rows" -eq $((64 * 2 * 8001 + 1)) ] && ok || bad "traces.csv: $rows rows, expected 1024129"

if [ "$hdf5" -eq 1 ]; then
    [ -s "$tmp/def/traces.h5" ] && [ ! -e "$tmp/def/traces.csv" ] && ok ||
        bad "the default with HDF5: expected traces.h5 alone, found $(ls "$tmp/def")"
    bytes=$(wc -c < "$tmp/def/traces.h5")
    [ "$bytes" -lt 20000000 ] && ok || bad "traces.h5: $bytes bytes, expected < 20 MB"
    [ ! -s "$tmp/def.err" ] && ok || bad "the default with HDF5: stderr $(cat "$tmp/def.err")"
    expect_grep "$tmp/def.out" "wrote $tmp/def/traces.h5" "the summary names traces.h5"
    if ! "$python" -c 'import h5py, numpy' 2> "$tmp/pyerr"; then
        bad "reading traces.h5 needs $python with h5py and numpy (Debian: python3-h5py; make deps installs it): $(cat "$tmp/pyerr")"
    else
        frames=$(h5 layout "$tmp/def/traces.h5" 64 2 2> "$tmp/check") && ok || bad "traces.h5's layout: $(cat "$tmp/check")"
        [ "$frames" = 8001 ] && ok || bad "traces.h5: $frames frames, expected 8001"
        h5 wide "$tmp/def/traces.h5" "$tmp/wide/probes.csv" 2> "$tmp/check" && ok ||
            bad "traces.h5 against probes.csv: $(cat "$tmp/check")"
        h5 long "$tmp/def/traces.h5" "$tmp/csv/traces.csv" 2> "$tmp/check" && ok ||
            bad "traces.h5 against traces.csv: $(cat "$tmp/check")"

        # A restart continues traces.h5: the same report as a run that went through
        bs=$examples/ball_and_stick.json
        expect_status 0 "ball and stick" -- "$bin" run "$bs" -o "$tmp/a" --quiet
        expect_status 0 "with checkpoints" -- "$bin" run "$bs" -o "$tmp/b" --quiet --checkpoint-every 45
        h5 same "$tmp/a/traces.h5" "$tmp/b/traces.h5" 2> "$tmp/check" && ok || bad "checkpoints change traces.h5: $(cat "$tmp/check")"
        cp -r "$tmp/b" "$tmp/c"
        expect_status 0 "restart" -- "$bin" run "$bs" -o "$tmp/c" --quiet --restart "$tmp/c"
        h5 same "$tmp/a/traces.h5" "$tmp/c/traces.h5" 2> "$tmp/check" && ok || bad "restart: $(cat "$tmp/check")"
        cmp -s "$tmp/a/spikes.dat" "$tmp/c/spikes.dat" && ok || bad "restart: spikes.dat differs"
        # the checkpoint at 90 ms of a 100 ms run's outputs: cut back to 901 samples, continued
        [ "$(h5 layout "$tmp/c/traces.h5" 1 3)" = 1001 ] && ok || bad "restart: not 1001 frames"
        # a report shorter than the checkpoint's, not HDF5, or another --traces: refused
        cp -r "$tmp/b" "$tmp/d"
        expect_status 0 "a shorter run" -- "$bin" run "$bs" -o "$tmp/short" --quiet --t-stop 50
        cp "$tmp/short/traces.h5" "$tmp/d/traces.h5"
        expect_status 1 "restart, traces.h5 short" -- "$bin" run "$bs" -o "$tmp/d" --quiet --restart "$tmp/d"
        expect_grep "$tmp/err" "traces.h5: 501 samples; the checkpoint's run had written 901" "short traces.h5 message"
        echo "not hdf5" > "$tmp/d/traces.h5"
        expect_status 1 "restart, traces.h5 not HDF5" -- "$bin" run "$bs" -o "$tmp/d" --quiet --restart "$tmp/d"
        expect_grep "$tmp/err" "traces.h5: cannot open to continue it" "not HDF5 message"
        expect_status 1 "restart, another --traces" -- "$bin" run "$bs" -o "$tmp/d" --quiet --traces csv --restart "$tmp/d"
        expect_grep "$tmp/err" "a run with --traces h5; this one has --traces csv" "another --traces message"
    fi
else
    [ -e "$tmp/def/traces.csv" ] && [ ! -e "$tmp/def/traces.h5" ] && cmp -s "$tmp/def/traces.csv" "$tmp/csv/traces.csv" &&
        ok || bad "the default without HDF5: expected traces.csv as --traces csv's"
    [ "$(wc -l < "$tmp/def.err")" -eq 1 ] && grep -q "traces in $tmp/def/traces.csv: this build has no HDF5 for traces.h5 (Debian: libhdf5-dev" "$tmp/def.err" &&
        ok || bad "the default without HDF5: expected a one-line notice, found: $(cat "$tmp/def.err")"
    expect_status 0 "quiet: no notice" -- "$bin" run "$tmp/c64.json" -o "$tmp/q" --quiet --t-stop 1
    [ ! -s "$tmp/err" ] && ok || bad "--quiet: $(cat "$tmp/err")"
    expect_status 1 "--traces h5 without HDF5" -- "$bin" run "$tmp/c64.json" -o "$tmp/h5" --traces h5
    expect_grep "$tmp/err" "\-\-traces h5: this build has no HDF5 (Debian: libhdf5-dev" "--traces h5 message"
    [ ! -e "$tmp/h5" ] && ok || bad "--traces h5 without HDF5: outputs written"
fi

# hinesbatch plot: python3 -m hinesbatch.plot on a run's directory (its default traces file)
if "$python" -c 'import numpy, cffi, matplotlib' 2> "$tmp/pyerr"; then
    pybin=$(dirname "$python")
    expect_status 0 "plot traces of a directory" -- env PATH="$pybin:$PATH" "$bin" plot traces "$tmp/def" --probe c0.soma --probe c63.dend -o "$tmp/t.png"
    expect_grep "$tmp/out" "^wrote $tmp/t.png$" "plot: wrote"
    [ "$(head -c 4 "$tmp/t.png" | od -An -c | tr -d ' ')" = '211PNG' ] && ok || bad "plot: no PNG"
    expect_status 2 "plot, a bad kind" -- env PATH="$pybin:$PATH" "$bin" plot bars x
    expect_grep "$tmp/err" "usage: hinesbatch plot" "plot: its usage"
    # a python3 that cannot import the module: its message
    mkdir "$tmp/bin"
    printf '#!/bin/sh\nexec %s -I "$@"\n' "$python" > "$tmp/bin/python3"
    chmod +x "$tmp/bin/python3"
    expect_status 1 "plot, no module" -- env PATH="$tmp/bin:$PATH" "$bin" plot traces "$tmp/def"
    expect_grep "$tmp/err" "^hinesbatch plot: .* cannot import hinesbatch.plot" "plot: no module message"
else
    bad "hinesbatch plot needs $python with numpy, cffi and matplotlib (make deps installs them): $(cat "$tmp/pyerr")"
fi
expect_status 1 "plot, no python3" -- env -u HINESBATCH_PYTHON PATH="$tmp/none" "$bin" plot traces "$tmp/def"
expect_grep "$tmp/err" "hinesbatch plot: cannot run python3: No such file or directory" "plot: no python3 message"
# HINESBATCH_PYTHON picks the interpreter, not the first python3 on PATH
printf '#!/bin/sh\nprintf "%%s\\n" "$@" > "%s/picked"\n' "$tmp" > "$tmp/mypython"
chmod +x "$tmp/mypython"
expect_status 0 "plot, HINESBATCH_PYTHON" -- env HINESBATCH_PYTHON="$tmp/mypython" PATH="$tmp/none" "$bin" plot raster "$tmp/def"
[ "$(head -1 "$tmp/picked" 2>/dev/null)" = "-c" ] && [ "$(tail -2 "$tmp/picked" | tr '\n' ' ')" = "raster $tmp/def " ] &&
    ok || bad "HINESBATCH_PYTHON was not run with the plot's arguments"
expect_status 1 "plot, a missing HINESBATCH_PYTHON" -- env HINESBATCH_PYTHON="$tmp/none/py" "$bin" plot raster "$tmp/def"
expect_grep "$tmp/err" "hinesbatch plot: cannot run $tmp/none/py (HINESBATCH_PYTHON): No such file or directory" "plot: HINESBATCH_PYTHON message"

echo "cli_traces: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
