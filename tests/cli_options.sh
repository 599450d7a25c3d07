#!/usr/bin/env bash
# The CLI's conventions: getopt_long's option forms, strict values, run's overrides of a
# model file's options, "did you mean" for misspelt model keys, the nanometre warning, the
# progress line on a terminal only, and --help, the man page and the README agreeing.
# Usage: cli_options.sh HINESBATCH DATA_DIR
set -u
bin=$1
data=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
simple=$data/morphologies/simple.swc
fly=$data/morphologies/720575940661205633.swc
json_value() { # FILE KEY: the number after "KEY": in FILE
    sed -n "s/.*\"$2\": *\([-0-9.eE+]*\).*/\1/p" "$1" | head -1
}

# ---- option forms (getopt_long) ----
expect_status 0 "--nseg 2" -- "$bin" info "$simple" --json --policy fixed --nseg 2
cp "$tmp/out" "$tmp/spaced"
expect_status 0 "--nseg=2" -- "$bin" info --json --policy=fixed --nseg=2 "$simple"
cmp -s "$tmp/out" "$tmp/spaced" && ok || bad "--opt=value differs from --opt value"
expect_status 0 "a unique prefix" -- "$bin" info "$simple" --js --pol=fixed --nse 2
cmp -s "$tmp/out" "$tmp/spaced" && ok || bad "an abbreviated option differs"
expect_status 0 "-- before the file" -- "$bin" info --json --policy fixed --nseg 2 -- "$simple"
cmp -s "$tmp/out" "$tmp/spaced" && ok || bad "'--' then the file differs"
# odd-length (bmtk's dL rule): NEURON's nseg = 1 + 2 int(L / 40) of each section, 164 in all
expect_status 0 "--policy odd-length" -- "$bin" info "$data/morphologies/1220882a.CNG.swc" --json --scheme neuron --policy odd-length --max-length 20
[ "$(json_value "$tmp/out" compartments)" = 164 ] && ok || bad "odd-length: $(json_value "$tmp/out" compartments) compartments, NEURON has 164"
expect_status 2 "ambiguous prefix" -- "$bin" info "$simple" --max 3
expect_grep "$tmp/err" "option '--max' is ambiguous: --max-length, --max-rows" "ambiguous message"
expect_status 2 "a flag given a value" -- "$bin" info "$simple" --json=yes
expect_grep "$tmp/err" "option --json takes no value (given 'yes')" "flag value message"
expect_status 2 "unknown option with a value" -- "$bin" info "$simple" --bogus=3
expect_grep "$tmp/err" "unknown argument '--bogus=3'" "unknown --opt=value message"
expect_status 2 "missing value at the end" -- "$bin" solve --cells
expect_grep "$tmp/err" "option --cells needs a value" "missing value message"
expect_status 2 "unknown short option" -- "$bin" run -x "$tmp/m.json"
expect_grep "$tmp/err" "unknown argument '-x'" "unknown short option message"
# values stay strict whatever the form
for bad_value in " 5" "5 " "0x10" "5e0" "" "+-5"; do
    expect_status 2 "--cells='$bad_value'" -- "$bin" solve --cells="$bad_value"
    expect_grep "$tmp/err" "--cells '$bad_value': expected an integer 1..100000000" "--cells='$bad_value' message"
done
expect_status 2 "--dt=nan" -- "$bin" solve --dt=nan
expect_grep "$tmp/err" "--dt 'nan': expected a positive number" "--dt=nan message"
expect_status 2 "--ra=inf" -- "$bin" info "$simple" --ra=inf
expect_status 2 "--units=NM" -- "$bin" info "$simple" --units=NM
expect_grep "$tmp/err" "--units 'NM': expected um or nm" "--units=NM message"
# -oDIR and --output=DIR
model=$src/examples/ball_and_stick.json
expect_status 0 "-oDIR" -- "$bin" run "$model" -o"$tmp/short" --quiet --t-stop 1
[ -s "$tmp/short/summary.json" ] && ok || bad "-oDIR wrote no summary"
expect_status 0 "--output=DIR" -- "$bin" run --output="$tmp/long" --quiet --t-stop 1 "$model"
[ -s "$tmp/long/summary.json" ] && ok || bad "--output=DIR wrote no summary"

# ---- run: the file's options replaced ----
expect_status 0 "run --t-stop --dt" -- "$bin" run "$model" -o "$tmp/o1" --t-stop=10 --dt 0.05 \
    --backend=seq --threads 1 --quiet --traces=wide
[ "$(json_value "$tmp/o1/summary.json" t_stop_ms)" = 10.0 ] && ok || bad "summary t_stop_ms $(json_value "$tmp/o1/summary.json" t_stop_ms)"
[ "$(json_value "$tmp/o1/summary.json" dt_ms)" = 0.05 ] && ok || bad "summary dt_ms $(json_value "$tmp/o1/summary.json" dt_ms)"
# t = 0..10 ms sampled every 0.1 ms (the file's sample_dt): 101 samples and a header
rows=$(wc -l < "$tmp/o1/probes.csv")
[ "$rows" -eq 102 ] && ok || bad "--t-stop 10: probes.csv has $rows lines, expected 102"
expect_status 0 "run --backend omp" -- "$bin" run "$model" -o "$tmp/o2" --t-stop=10 --dt 0.05 \
    --backend omp --threads 2 --quiet --traces wide
cmp -s "$tmp/o1/probes.csv" "$tmp/o2/probes.csv" && ok || bad "omp and seq traces differ"
expect_status 2 "run --backend bogus" -- "$bin" run "$model" --backend gpu
expect_grep "$tmp/err" "--backend 'gpu': expected seq, omp, cuda or best" "--backend message"
expect_status 2 "run --threads too many" -- "$bin" run "$model" --threads 100000
expect_grep "$tmp/err" "--threads '100000': expected an integer 0..1024" "--threads message"
expect_status 2 "run --t-stop negative" -- "$bin" run "$model" --t-stop=-1
expect_grep "$tmp/err" "--t-stop '-1': expected a number >= 0" "--t-stop message"
expect_status 2 "run --dt zero" -- "$bin" run "$model" --dt 0
expect_status 1 "run --dt not dividing sample_dt" -- "$bin" run "$model" -o "$tmp/o3" --dt 0.03
expect_grep "$tmp/err" "sample_dt = 0.1 ms is not a multiple of dt = 0.03 ms" "--dt sample_dt message"
expect_status 1 "run --t-stop too many steps" -- "$bin" run "$model" -o "$tmp/o3" --t-stop 1e12 --dt 1e-3
expect_grep "$tmp/err" "t_stop (with the overrides): 1e+12 ms at dt = 0.001 ms" "--t-stop steps message"
# networks: the spikes end at the new t_stop; a busyring's duration gives way
ring=$src/examples/ring_network.json
expect_status 0 "ring network" -- "$bin" run "$ring" -o "$tmp/r1" --quiet
expect_status 0 "ring network --t-stop 20" -- "$bin" run "$ring" -o "$tmp/r2" --quiet --t-stop=20
n1=$(wc -l < "$tmp/r1/spikes.dat") # lines, the '# gid t_ms' header included
n2=$(wc -l < "$tmp/r2/spikes.dat")
last=$(awk 'END { print $2 }' "$tmp/r2/spikes.dat")
awk -v a="$n1" -v b="$n2" -v t="$last" 'BEGIN { exit !(b > 1 && b < a && t <= 20) }' && ok ||
    bad "ring --t-stop 20: $n2 spikes (last at $last ms), the whole run $n1"
head -n "$n2" "$tmp/r1/spikes.dat" | cmp -s - "$tmp/r2/spikes.dat" && ok ||
    bad "ring --t-stop 20: not the first spikes of the whole run"
busy=$src/examples/busyring_small.json
expect_status 0 "busyring --t-stop 10" -- "$bin" run "$busy" -o "$tmp/b1" --quiet --t-stop 10
last=$(awk 'END { print $2 }' "$tmp/b1/spikes.dat")
awk -v t="$last" 'BEGIN { exit !(t != "" && t != "t_ms" && t <= 10) }' && ok || bad "busyring --t-stop 10: a spike at $last ms"
expect_status 1 "network --backend cuda" -- "$bin" run "$ring" -o "$tmp/r3" --backend cuda

# ---- did you mean: misspelt commands and options ----
expect_status 2 "rnu" -- "$bin" rnu "$model"
expect_grep "$tmp/err" "unknown command 'rnu'; did you mean 'run'?" "rnu message"
expect_status 2 "bench hnies" -- "$bin" bench hnies
expect_grep "$tmp/err" "unknown benchmark 'hnies'; did you mean 'hines'?" "hnies message"
expect_status 2 "--tstop" -- "$bin" run "$model" -o "$tmp/x" --tstop 5
expect_grep "$tmp/err" "unknown option '--tstop'; did you mean '--t-stop'?" "--tstop message"
expect_status 2 "--tarces=h5" -- "$bin" run "$model" -o "$tmp/x" --tarces=h5
expect_grep "$tmp/err" "unknown option '--tarces'; did you mean '--traces'?" "--tarces message"
expect_status 2 "--polcy" -- "$bin" info "$simple" --polcy fixed
expect_grep "$tmp/err" "did you mean '--policy'?" "--polcy message"
[ ! -e "$tmp/x/summary.json" ] && ok || bad "a misspelt option ran"

# ---- did you mean: misspelt model keys ----
sed 's/"t_stop"/"tstop"/' "$model" > "$tmp/tstop.json"
expect_status 1 "tstop" -- "$bin" run "$tmp/tstop.json" -o "$tmp/x"
expect_grep "$tmp/err" 'tstop: unknown key; expected one of: t_stop, .*; did you mean "t_stop"?' "tstop message"
sed 's/"Ra"/"ra"/' "$model" > "$tmp/ra.json"
expect_status 1 "ra" -- "$bin" run "$tmp/ra.json" -o "$tmp/x"
expect_grep "$tmp/err" 'cells\[0\].ra: unknown key; .*did you mean "Ra"?' "ra message"
sed 's/"celsius"/"temperature"/' "$model" > "$tmp/temp.json"
expect_status 1 "temperature" -- "$bin" run "$tmp/temp.json" -o "$tmp/x"
expect_grep "$tmp/err" 'did you mean "celsius"?' "temperature message"
sed 's/"dt": 0.025,/"dt": 0.025, "nseg": 3,/' "$model" > "$tmp/nseg.json"
expect_status 1 "nseg at the top" -- "$bin" run "$tmp/nseg.json" -o "$tmp/x"
expect_grep "$tmp/err" '"nseg" belongs in a cell' "nseg message"
sed 's/"rings"/"ring"/; s/"ring"/"rings"/' "$ring" > "$tmp/rings.json"
expect_status 1 "network rings" -- "$bin" run "$tmp/rings.json" -o "$tmp/x"
expect_grep "$tmp/err" 'network.rings: unknown key; .*did you mean "ring"?' "rings message"

# ---- nanometres read as micrometres ----
expect_status 0 "FlyWire in um" -- "$bin" info "$fly"
expect_grep "$tmp/err" "warning: .*are the coordinates in nanometres? .*--units nm" "nm warning"
expect_status 0 "FlyWire in nm" -- "$bin" info "$fly" --units nm
grep -q nanometres "$tmp/err" && bad "a warning about nm with --units nm" || ok
expect_status 0 "solve: FlyWire in um" -- "$bin" solve --morph "$fly" --cells 2 --steps 1
expect_grep "$tmp/err" "nanometres" "solve nm warning"
expect_status 0 "a real cell in um" -- "$bin" info "$data/morphologies/v_e_moto1.CNG.swc"
grep -q nanometres "$tmp/err" && bad "a nm warning for a motoneuron" || ok
cp "$fly" "$tmp/fly.swc"
printf '{"t_stop": 0.1, "cells": [{"morphology": "fly.swc", "section_rule": "hinesbatch", "count": 2}]}' > "$tmp/fly.json"
expect_status 0 "run: FlyWire in um" -- "$bin" run "$tmp/fly.json" -o "$tmp/f1" --quiet
expect_grep "$tmp/err" "fly.json: cells\[0\].morphology: .*fly.swc: spans .* nanometres" "run nm warning"
n=$(grep -c nanometres "$tmp/err")
[ "$n" -eq 1 ] && ok || bad "run: $n nm warnings for one file named by two cells"
sed 's/"count": 2/"units": "nm"/' "$tmp/fly.json" > "$tmp/fly_nm.json"
expect_status 0 "run: FlyWire in nm" -- "$bin" run "$tmp/fly_nm.json" -o "$tmp/f2" --quiet
grep -q nanometres "$tmp/err" && bad "run: a nm warning with units nm" || ok

# ---- the progress line: on a terminal only ----
expect_status 0 "solve to a file" -- "$bin" solve --cells 100 --steps 3
grep -q "hinesbatch solve: " "$tmp/err" && bad "a progress line without a terminal" || ok
expect_status 0 "bench to a file" -- "$bin" bench multi --parts fig6 --fig6-cells 64 --repeats 1
grep -q "cases" "$tmp/err" && bad "bench: a progress line without a terminal" || ok
if script -qec true /dev/null >/dev/null 2>&1; then
    script -qec "'$bin' solve --cells 100 --steps 3" /dev/null > "$tmp/tty" 2>&1
    expect_grep "$tmp/tty" "hinesbatch solve: 0 / 3 solves" "solve progress on a terminal"
    script -qec "'$bin' bench multi --parts fig6 --fig6-cells 64 --repeats 1" /dev/null > "$tmp/tty" 2>&1
    expect_grep "$tmp/tty" "hinesbatch bench multi: 1 / 2 cases" "bench progress on a terminal"
else
    echo "note: no script(1) to make a terminal; the progress line on one is not checked"
fi

# ---- --help, the man page and the README agree ----
man=$src/docs/hinesbatch.1
help_options() { # the options a --help defines ("  --name" or "  -o, --name" at a line's start)
    "$bin" "$@" --help | sed -n 's/^  \(-[a-z], \)\{0,1\}\(--[a-z0-9-]*\).*/\2/p' | sort -u
}
man_options() { # the options of the man page's sections named (.TP items)
    awk -v want="$1" '
        /^\.SH / { sh = substr($0, 5); gsub(/"/, "", sh); on = index(want, "|" sh "|") > 0; next }
        /^\.TP/ { item = 1; next }
        item && on { line = $0; gsub(/\\-/, "-", line)
                     while (match(line, /--[a-z0-9-]+/)) { print substr(line, RSTART, RLENGTH)
                                                           line = substr(line, RSTART + RLENGTH) } }
        { item = 0 }' "$man" | sort -u
}
check_command() { # "COMMAND WORDS" "|MAN SECTION|..."
    help_options $1 > "$tmp/help_opts"
    man_options "$2" > "$tmp/man_opts"
    [ -s "$tmp/help_opts" ] && ok || bad "$1: no options in --help"
    if diff "$tmp/help_opts" "$tmp/man_opts" > "$tmp/diff"; then ok
    else bad "$1: --help (<) and docs/hinesbatch.1 (>) differ: $(tr '\n' ' ' < "$tmp/diff")"; fi
    while read -r opt; do # each is an option of the parser, not only of the text
        "$bin" $1 "$opt=x" --help > /dev/null 2> "$tmp/perr"
        grep -q "unknown argument\|ambiguous" "$tmp/perr" && bad "$1: $opt in --help is unknown to the parser" || ok
    done < "$tmp/help_opts"
    cat "$tmp/help_opts" >> "$tmp/all_opts"
}
: > "$tmp/all_opts"
check_command info "|INFO|COMPARTMENT OPTIONS|"
check_command solve "|SOLVE|COMPARTMENT OPTIONS|"
check_command run "|RUN|"
check_command "bench hines" "|BENCH HINES|"
check_command "bench tridiag" "|BENCH TRIDIAG|"
check_command "bench cell" "|BENCH CELL|"
check_command "bench multi" "|BENCH MULTI|"
check_command build-catalogue "|BUILD-CATALOGUE|"
printf -- '--help\n--version\n' >> "$tmp/all_opts"
# every option the README's CLI section names is one of them
sed -n '/^## The CLI/,/^## The C API/p' "$src/README.md" | grep -o -- '--[a-z][a-z0-9-]*' | sort -u > "$tmp/readme_opts"
[ "$(wc -l < "$tmp/readme_opts")" -gt 20 ] && ok || bad "README: few options found in the CLI section"
while read -r opt; do
    grep -qx -- "$opt" "$tmp/all_opts" && ok || bad "README's CLI section names $opt, which no --help has"
done < "$tmp/readme_opts"
# and the README's own commands parse
grep -q -- "--t-stop=20 --dt=0.05" "$src/README.md" && ok || bad "README: the run override example"

echo "cli_options: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
