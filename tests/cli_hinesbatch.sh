#!/usr/bin/env bash
# The CLI end to end: exit codes, JSON keys, residuals, every layout and backend,
# and clear errors on bad input. Usage: cli_hinesbatch.sh HINESBATCH DATA_DIR
set -u
bin=$1
data=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
json_value() { # KEY: number after "KEY": in $tmp/out
    sed -n "s/.*\"$1\": \([-0-9.eE+]*\).*/\1/p" "$tmp/out"
}

# --help everywhere, exit 0
for cmd in "" info solve; do
    expect_status 0 "help $cmd" -- "$bin" $cmd --help
    expect_grep "$tmp/out" "usage: hinesbatch" "help $cmd"
done
expect_status 2 "no command" -- "$bin"
expect_status 2 "unknown command" -- "$bin" frobnicate
expect_grep "$tmp/err" "unknown command 'frobnicate'" "unknown command message"

# info: JSON keys and values that can be checked by hand
expect_status 0 "info json" -- "$bin" info "$data/morphologies/simple.swc" --json --policy fixed --nseg 2
for key in points sections terminals max_branch_order length_um area_um2 compartments; do
    expect_grep "$tmp/out" "\"$key\": " "info json key $key"
done
[ "$(json_value points)" = 9 ] && ok || bad "simple.swc points $(json_value points)"
[ "$(json_value terminals)" = 4 ] && ok || bad "simple.swc terminals $(json_value terminals)"
# simple.swc: a sphere soma and 6 sections of 2 compartments each (vertex scheme: +1 soma node)
[ "$(json_value sections)" = 7 ] && ok || bad "simple.swc sections $(json_value sections)"
[ "$(json_value compartments)" = 13 ] && ok || bad "simple.swc compartments $(json_value compartments)"
expect_status 0 "info text" -- "$bin" info "$data/morphologies/v_e_purk2.CNG.swc"
expect_grep "$tmp/out" "terminals *420" "purkinje terminals"
expect_grep "$tmp/err" "warning: .*radius 0" "purkinje zero-radius warning"
expect_status 0 "info nm units" -- "$bin" info "$data/morphologies/720575940661205633.swc" --units nm --json

# info: errors name the file and line, exit 1
expect_status 1 "missing file" -- "$bin" info "$tmp/does-not-exist.swc"
expect_grep "$tmp/err" "does-not-exist.swc" "missing file named"
expect_status 1 "missing parent" -- "$bin" info "$data/morphologies-bad/arbor_bad1_missing_parent.swc"
expect_grep "$tmp/err" "arbor_bad1_missing_parent.swc:[0-9]*: parent 4" "missing parent message"
expect_status 1 "negative radius" -- "$bin" info "$data/morphologies-bad/C031097B-I4.CNG.swc"
expect_grep "$tmp/err" "C031097B-I4.CNG.swc:[0-9]*: .*radius" "negative radius message"
head -c 100000 /dev/urandom >"$tmp/garbage.swc"
expect_status 1 "binary garbage" -- "$bin" info "$tmp/garbage.swc"
expect_grep "$tmp/err" "garbage.swc" "garbage named"
: >"$tmp/empty.swc"
expect_status 1 "empty file" -- "$bin" info "$tmp/empty.swc"
expect_status 2 "no file" -- "$bin" info
expect_grep "$tmp/err" "no SWC file given" "no file message"
expect_status 2 "two files" -- "$bin" info "$data/morphologies/simple.swc" "$data/morphologies/simple.swc"
expect_grep "$tmp/err" "more than one SWC file given" "two files message"
expect_status 0 "info help lists the compartment options" -- "$bin" info --help
expect_grep "$tmp/out" "--nseg" "info help: --nseg"
expect_status 2 "bad option" -- "$bin" info "$data/morphologies/simple.swc" --bogus
expect_grep "$tmp/err" "unknown argument '--bogus'" "bad option message"
expect_status 2 "bad nseg" -- "$bin" info "$data/morphologies/simple.swc" --nseg zero
expect_grep "$tmp/err" "--nseg 'zero'" "bad nseg message"
expect_status 2 "missing value" -- "$bin" info "$data/morphologies/simple.swc" --nseg

# solve: every layout and backend, residual at round-off
for backend in seq omp; do
    for layout in flat interleaved block; do
        expect_status 0 "solve $backend $layout" -- "$bin" solve --morph "$data/morphologies/v_e_moto1.CNG.swc" \
            --cells 67 --layout $layout --block-size 8 --backend $backend --steps 3 --check --json
        res=$(json_value max_rel_residual)
        awk -v r="$res" 'BEGIN { exit !(r != "" && r < 1e-12) }' && ok || bad "solve $backend $layout residual '$res'"
        expect_grep "$tmp/out" "\"compartments_per_second\": " "solve $backend $layout rate"
        expect_grep "$tmp/out" "\"layout\": \"$layout\"" "solve $backend $layout name"
    done
done
expect_status 0 "solve default morphology" -- "$bin" solve --cells 10 --steps 2 --check --scheme neuron
expect_grep "$tmp/out" "HSN-fluoro01" "default morphology named"
expect_status 2 "solve bad cells" -- "$bin" solve --cells -3
expect_status 2 "solve bad layout" -- "$bin" solve --layout diagonal
expect_grep "$tmp/err" "--layout 'diagonal'" "solve bad layout message"
expect_status 2 "solve bad dt" -- "$bin" solve --dt -1
expect_status 2 "solve stray argument" -- "$bin" solve stray.swc
expect_status 1 "solve bad morph" -- "$bin" solve --morph "$data/morphologies-bad/morphio_inline_cyclic_self_parent.swc"
expect_grep "$tmp/err" "own parent" "self parent message"

# Issue 44, bad input: every command refuses, with the file and line, what would give a
# NaN, an overflow, a crash or unbounded work. Without sanitizers (which reserve terabytes
# of address space) the big-input cases also run under a 1 GB address-space cap: a buffer
# the size of the input, or 4 GB allocated before a check, fails the test.
if ldd "$bin" 2>/dev/null | grep -q 'lib[at]san'; then capped() { "$@"; }; else
    capped() { (ulimit -v 1000000 && exec "$@"); }; fi
printf '1 3 0 0 0 1 -1\n2 3 0 0 0 1 1\n' >"$tmp/point.swc"
printf '1 1 0 0 0 5 -1\n2 3 10 0 0 1 1\n3 3 1e308 0 0 1 2\n' >"$tmp/far.swc"
printf '1 1 0 0 0 5 -1\n2 3 10 0 0 1e308 1\n' >"$tmp/fat.swc"
printf '1 1 0 0 0 5 -1\n2 3 10 0 0 1e-320 1\n3 3 20 0 0 1e-320 2\n' >"$tmp/thin.swc"
printf '1 1 0 0 0 5 -1\n2 3 10 0 0 1e-300 1\n3 3 20 0 0 1e-300 2\n' >"$tmp/thin300.swc"
printf '1 3 0 0 0 1 -1\n2 3 1e-7 0 0 1 1\n3 3 10 0 0 1 2\n' >"$tmp/close.swc"
for scheme in vertex neuron; do
    for f in point:1:"all 2 samples are at one point" far:3:"x = 1e+308 um" \
             fat:2:"radius 1e+308 um" thin:2:"radius 9.99989e-321 um" \
             thin300:2:"radius 1e-300 um" close:2:"1e-07 um from sample 1"; do
        name=${f%%:*} rest=${f#*:} line=${rest%%:*} what=${rest#*:}
        for cmd in info solve; do
            if [ $cmd = info ]; then args="$tmp/$name.swc"; else args="--morph $tmp/$name.swc --cells 2 --steps 1 --check"; fi
            expect_status 1 "$cmd $name $scheme" -- capped "$bin" $cmd $args --scheme $scheme
            expect_grep "$tmp/err" "$name.swc:$line: .*$what" "$cmd $name $scheme message"
        done
    done
done
# run builds its cables through the same library
printf '{"t_stop": 1, "cells": [{"morphology": "point.swc"}]}' >"$tmp/point.json"
expect_status 1 "run on coincident samples" -- "$bin" run "$tmp/point.json" -o "$tmp/run-point"
expect_grep "$tmp/err" "point.swc:1: all 2 samples are at one point" "run on coincident samples message"
# a section index beyond int is named as given, not as -1
cp "$data/morphologies/simple.swc" "$tmp/simple.swc"
printf '{"t_stop": 1, "cells": [{"morphology": "simple.swc", "probes": [{"at": {"section": 1099511627776, "x": 0.5}}]}]}' >"$tmp/sec40.json"
expect_status 1 "section index 2^40" -- "$bin" run "$tmp/sec40.json" -o "$tmp/run-sec40"
expect_grep "$tmp/err" "probes\[0\].at.section: section 1099511627776; expected 0..6" "section index 2^40 message"
# sizes: compartments under a nanometre, more rows than --max-rows, a star of 100,000 stems
# whose d-lambda rule asks for 5.9 million rows (refused before the cable is allocated)
expect_status 1 "nanometre compartments" -- "$bin" info "$tmp/simple.swc" --nseg 100000
expect_grep "$tmp/err" "simple.swc:[0-9]*: section 1 (5 um long) would be cut into 1e+05 compartments of 5e-05 um" "nanometre message"
expect_status 1 "max-rows" -- "$bin" info "$tmp/simple.swc" --max-rows 6
expect_grep "$tmp/err" "simple.swc: 7 matrix rows (7 compartments in 7 sections) under the d-lambda policy" "max-rows message"
expect_status 0 "max-rows at the size" -- "$bin" info "$tmp/simple.swc" --max-rows 7
expect_status 2 "max-rows zero" -- "$bin" info "$tmp/simple.swc" --max-rows 0
awk 'BEGIN { print "1 1 0 0 0 5 -1"; for (i = 2; i <= 100001; i++) printf "%d 3 %d %d 10 0.5 1\n", i, i % 1000, int(i / 1000) * 30 }' >"$tmp/star.swc"
expect_status 1 "star of 100,000 stems" -- capped "$bin" info "$tmp/star.swc"
expect_grep "$tmp/err" "star.swc: 5880467 matrix rows .* in 100001 sections) under the d-lambda policy, .* MB for the cable alone; expected at most max_rows = 5000000 rows" "star message"
# streamed input: a 2 GB NUL-filled file (sparse) and /dev/zero fail at once, at line 1
: >"$tmp/zeros.swc" && truncate -s 2G "$tmp/zeros.swc"
expect_status 1 "NUL-filled file" -- capped "$bin" info "$tmp/zeros.swc"
expect_grep "$tmp/err" "zeros.swc:1: byte 0x00 at column 1" "NUL-filled file message"
rm -f "$tmp/zeros.swc"
expect_status 1 "/dev/zero" -- capped "$bin" info /dev/zero
expect_grep "$tmp/err" "/dev/zero:1: byte 0x00 at column 1" "/dev/zero message"
# threads: capped, with the cap in the message (100,000 crashed libgomp)
expect_status 2 "solve threads 100000" -- "$bin" solve --threads 100000 --cells 4
expect_grep "$tmp/err" "--threads '100000': expected an integer 0..1024 (the cap on threads)" "threads cap message"
expect_status 0 "solve threads at the cap" -- "$bin" solve --threads 1024 --cells 4 --steps 1 --backend seq
expect_status 2 "bench cell threads 100000" -- "$bin" bench cell --threads 100000
# integers and numbers: the whole argument, nothing around it
for v in " 5" "5 " "+ 5" "0x10" "5e0" ""; do
    expect_status 2 "solve cells '$v'" -- "$bin" solve --cells "$v"
done
for v in " 0.025" "0.025 " "0x1p-5" "inf" "nan" "1e-400"; do
    expect_status 2 "solve dt '$v'" -- "$bin" solve --dt "$v"
done
expect_status 2 "bench hines cells list with a blank" -- "$bin" bench hines --cells "256, 512"
# bench hines checks its inputs before allocating contexts and 2 GiB of bandwidth buffers
expect_status 1 "bench hines missing data" -- capped "$bin" bench hines --data /nonexistent
expect_grep "$tmp/err" "/nonexistent/morph_ca1_n120.swc: cannot open" "bench hines missing data message"

# bench: help, and an unknown benchmark refused
expect_status 0 "bench help" -- "$bin" bench --help
expect_grep "$tmp/out" "hines" "bench lists hines"
expect_status 0 "bench hines help" -- "$bin" bench hines --help
expect_status 2 "unknown bench" -- "$bin" bench nothing
# bench options: bad values are refused with a message, before any work
expect_status 2 "bench hines bad repeats" -- "$bin" bench hines --repeats 0
expect_grep "$tmp/err" "repeats" "bench hines repeats message"
expect_status 2 "bench hines unknown morph" -- "$bin" bench hines --morphs huge-low
expect_status 2 "bench hines only nothing" -- "$bin" bench hines --only no-such-kernel --cells 1
expect_grep "$tmp/err" "matches no configuration" "bench hines only message"
expect_status 0 "bench hines help lists --own-ul" -- "$bin" bench hines --help
expect_grep "$tmp/out" "own-ul" "bench hines help own-ul"
expect_status 2 "bench hines own-ul parsed, then only nothing" -- "$bin" bench hines --own-ul --only no-such-kernel --cells 1
expect_grep "$tmp/err" "matches no configuration" "bench hines own-ul reaches the only check"
expect_status 2 "bench multi bad repeats" -- "$bin" bench multi --repeats x
expect_status 2 "bench multi bad gpu configuration" -- "$bin" bench multi --gpu levels,bogus
expect_status 2 "bench cell bad models" -- "$bin" bench cell --models nothing
expect_status 2 "bench tridiag bad repeats" -- "$bin" bench tridiag --repeats 0
expect_status 2 "bench tridiag zero points" -- "$bin" bench tridiag --points 64x0
expect_grep "$tmp/err" "'64x0': expected MxN" "bench tridiag points message"
expect_status 2 "bench tridiag bad points" -- "$bin" bench tridiag --points 64x10,abc
expect_status 2 "bench tridiag trailing points" -- "$bin" bench tridiag --points 64x10x3
expect_status 2 "bench unknown option" -- "$bin" bench hines --frobnicate
# CUDA asked for where there is none: a clear refusal, not a crash; where there is one, it solves
"$bin" solve --cells 40 --steps 2 --check --backend cuda --json >"$tmp/out" 2>"$tmp/err"
rc=$?
if grep -q '"backend": "cuda"' "$tmp/out"; then
    [ "$rc" -eq 0 ] && ok || bad "solve on cuda: exit $rc"
else
    [ "$rc" -eq 1 ] && grep -q "not available" "$tmp/err" && ok || bad "solve --backend cuda without a GPU: exit $rc, $(cat "$tmp/err")"
fi

echo "cli: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
