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
