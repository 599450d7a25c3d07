#!/usr/bin/env bash
# hinesbatch build-catalogue MODDIR -o NAME.so: a folder with copies of hh.mod and NaTs2_t.mod
# becomes a shared library exporting hb_catalogue_v1 alone, its C kept (the same bytes when
# built again), loaded by test_catalogue --user (hh's descriptor and bits are the built-in's);
# a bad or untranslatable .mod fails with FILE:LINE:COLUMN and builds nothing; forged
# libraries (another ABI, another sizeof_mech, no hb_catalogue_v1) are refused by name.
# Usage: catalogue_build.sh HINESBATCH TEST_CATALOGUE CC
set -u
bin=$1 test=$2 cc=$3
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

mkdir "$tmp/mods"
cp "$src/mechanisms/nrn/hh.mod" "$src/mechanisms/bbp/NaTs2_t.mod" "$tmp/mods/"
expect_status 0 "build mods" -- "$bin" build-catalogue "$tmp/mods" -o "$tmp/l5.so"
expect_grep "$tmp/out" "^$tmp/l5.so: the catalogue mods, 2 mechanisms (NaTs2_t, hh); C in $tmp/l5.src\(, CUDA for sm_[0-9]*\)\?$" "build summary"
[ -f "$tmp/l5.src/hbg_mods_catalogue.c" ] && [ -f "$tmp/l5.src/hbg_mods_hh.h" ] && ok || bad "the C is not kept beside the library"
if command -v nm > /dev/null; then
    syms=$(nm -D --defined-only "$tmp/l5.so" | awk '{print $3}' | tr '\n' ' ')
    [ "$syms" = "hb_catalogue_v1 " ] && ok || bad "exported symbols: '$syms', expected hb_catalogue_v1 alone"
fi
expect_status 0 "load the built catalogue" -- "$test" --user "$tmp/l5.so"
cp -r "$tmp/l5.src" "$tmp/first"
expect_status 0 "build again" -- "$bin" build-catalogue "$tmp/mods" --name mods --output "$tmp/l5.so"
diff -r "$tmp/first" "$tmp/l5.src" > /dev/null && ok || bad "the generated C differs between two builds"
# "." is named after the folder it is
expect_status 0 "build ." -- bash -c "cd '$tmp/mods' && '$bin' build-catalogue . -o ../dot.so"
expect_grep "$tmp/out" "^../dot.so: the catalogue mods, 2 mechanisms" "the name of '.'"
# a bad file: its FILE:LINE:COLUMN, nothing built
mkdir "$tmp/bad"
cp "$src/mechanisms/nrn/hh.mod" "$tmp/bad/"
printf 'NEURON { SUFFIX broken }\nPARAMETER { g = 1 (S/cm2) }\nBREAKPOINT { g = = 2 }\n' > "$tmp/bad/broken.mod"
expect_status 1 "a syntax error" -- "$bin" build-catalogue "$tmp/bad" -o "$tmp/bad.so"
expect_grep "$tmp/err" "^$tmp/bad/broken.mod:3:18: " "the syntax error's FILE:LINE:COLUMN"
expect_grep "$tmp/err" "bad.so not built: 1 error above" "the syntax error's summary"
[ ! -e "$tmp/bad.so" ] && ok || bad "a library built from a bad folder"
# a file the generator cannot translate yet: refused too (a catalogue has every file or none)
expect_status 1 "VERBATIM" -- "$bin" build-catalogue "$src/mechanisms/bbp/original/ProbAMPANMDA_EMS.mod" -o "$tmp/prob.so"
expect_grep "$tmp/err" "ProbAMPANMDA_EMS.mod:99:1: VERBATIM (C code inside NMODL) is not supported by the code generator" "the untranslatable file's message"
# usage and compiler errors
expect_status 1 "-o without .so" -- "$bin" build-catalogue "$tmp/mods" -o "$tmp/l5.dll"
expect_grep "$tmp/err" "expected a file name ending in .so" "-o message"
expect_status 1 "a missing compiler" -- "$bin" build-catalogue "$tmp/mods" -o "$tmp/x.so" --cc "$tmp/no-cc"
expect_grep "$tmp/err" "cannot run the C compiler '$tmp/no-cc'" "missing compiler message"
expect_status 1 "a failing compiler" -- "$bin" build-catalogue "$tmp/mods" -o "$tmp/x.so" --cc false
expect_grep "$tmp/err" "the C compiler 'false' failed (exit 1)" "failing compiler message"
expect_status 1 "a bad name" -- "$bin" build-catalogue "$tmp/mods" -o "$tmp/x.so" --name "a::b"
expect_grep "$tmp/err" "expected a name without '::'" "name message"
expect_status 2 "--json without --check" -- "$bin" build-catalogue "$tmp/mods" -o "$tmp/x.so" --json
# forged libraries
cat > "$tmp/forge.c" <<'C'
#include "common/mech_abi.h"
const hb_catalogue_t *hb_catalogue_v1(void);
static const hb_catalogue_t cat = {FORGE_ABI, FORGE_SIZE, "forged", "test", 0, 0};
const hb_catalogue_t *hb_catalogue_v1(void) { return &cat; }
C
abi=$(sed -n 's/^#define HB_CAT_ABI \([0-9]*\)$/\1/p' "$src/src/common/mech_abi.h")
older=$((abi - 1)) newer=$((abi + 1))
"$cc" -shared -fPIC -I"$src/src" -DFORGE_ABI=$older "-DFORGE_SIZE=sizeof(hb_cat_mech_t)" "$tmp/forge.c" -o "$tmp/older.so" && ok || bad "forging older.so"
expect_status 0 "an older ABI refused" -- "$test" --refuse "$tmp/older.so" "a catalogue of ABI $older, and this hinesbatch reads ABI $abi"
"$cc" -shared -fPIC -I"$src/src" -DFORGE_ABI=$newer "-DFORGE_SIZE=sizeof(hb_cat_mech_t)" "$tmp/forge.c" -o "$tmp/newer.so" && ok || bad "forging newer.so"
expect_status 0 "a newer ABI refused" -- "$test" --refuse "$tmp/newer.so" "a catalogue of ABI $newer, and this hinesbatch reads ABI $abi"
"$cc" -shared -fPIC -I"$src/src" -DFORGE_ABI=$abi "-DFORGE_SIZE=8" "$tmp/forge.c" -o "$tmp/size8.so" && ok || bad "forging size8.so"
expect_status 0 "another sizeof_mech refused" -- "$test" --refuse "$tmp/size8.so" "mechanisms are 8 bytes"
printf 'int hb_not_a_catalogue(void);\nint hb_not_a_catalogue(void) { return 1; }\n' > "$tmp/plain.c"
"$cc" -shared -fPIC "$tmp/plain.c" -o "$tmp/plain.so" && ok || bad "building plain.so"
expect_status 0 "a library without hb_catalogue_v1 refused" -- "$test" --refuse "$tmp/plain.so" "not a hinesbatch catalogue (no function hb_catalogue_v1)"
expect_status 0 "a text file refused" -- "$test" --refuse "$tmp/forge.c" "cannot load it as a shared library"
expect_status 0 "a missing file refused" -- "$test" --refuse "$tmp/none.so" "no such file"
# CUDA kernels (docs/mechanisms.md section 6): --no-cuda builds none, and the engine refuses
# the catalogue on backend cuda; with nvcc here (no GPU needed), --cuda generates
# hbg_mods_cuda.cu, compiles it with -fmad=false into the same library, which still exports
# hb_catalogue_v1 alone and whose mechanisms carry their launchers
expect_status 0 "build --no-cuda" -- "$bin" build-catalogue "$tmp/mods" --no-cuda -o "$tmp/cpu.so"
[ ! -e "$tmp/cpu.src/hbg_mods_cuda.cu" ] && ok || bad "--no-cuda generated CUDA"
expect_status 0 "--no-cuda: no launchers" -- "$test" --user-no-cuda "$tmp/cpu.so"
expect_status 2 "--nvcc with --no-cuda" -- "$bin" build-catalogue "$tmp/mods" --no-cuda --nvcc nvcc -o "$tmp/x.so"
expect_status 2 "--cuda with --check" -- "$bin" build-catalogue --check --cuda "$tmp/mods"
expect_status 1 "a missing nvcc" -- "$bin" build-catalogue "$tmp/mods" --cuda --nvcc "$tmp/no-nvcc" -o "$tmp/x.so"
expect_grep "$tmp/err" "no CUDA compiler '$tmp/no-nvcc'; expected nvcc on PATH or --nvcc NVCC" "missing nvcc message"
expect_status 1 "a failing nvcc" -- "$bin" build-catalogue "$tmp/mods" --cuda --nvcc false -o "$tmp/x.so"
expect_grep "$tmp/err" "the CUDA compiler '.*false' failed (exit 1) on $tmp/x.src/hbg_mods_cuda.cu" "failing nvcc message"
if command -v nvcc > /dev/null; then
    expect_status 0 "build --cuda" -- "$bin" build-catalogue "$tmp/mods" --cuda --nvcc nvcc -o "$tmp/gpu.so"
    expect_grep "$tmp/out" "C in $tmp/gpu.src, CUDA for sm_[0-9]*$" "--cuda summary"
    grep -q "__global__ void hbgw_mods_NaTs2_t_current" "$tmp/gpu.src/hbg_mods_cuda.cu" && ok || bad "no kernel wrapper in hbg_mods_cuda.cu"
    if command -v nm > /dev/null; then
        syms=$(nm -D --defined-only "$tmp/gpu.so" | awk '{print $3}' | tr '\n' ' ')
        [ "$syms" = "hb_catalogue_v1 " ] && ok || bad "--cuda: exported symbols: '$syms', expected hb_catalogue_v1 alone"
    fi
    expect_status 0 "--cuda: launchers" -- "$test" --user-cuda "$tmp/gpu.so"
    cp -r "$tmp/gpu.src" "$tmp/gpu-first"
    expect_status 0 "build --cuda again" -- "$bin" build-catalogue "$tmp/mods" --cuda --nvcc nvcc -o "$tmp/gpu.so"
    diff -r -x '*.o' "$tmp/gpu-first" "$tmp/gpu.src" > /dev/null && ok || bad "the generated C and CUDA differ between two builds"
    # point processes: NET_RECEIVE's wrapper and launcher too (docs/mechanisms.md section 10)
    mkdir "$tmp/pts" && cp "$src/tests/nmodl/tm/TMSyn.mod" "$src/tests/nmodl/stdp/STDPSyn.mod" "$tmp/pts/"
    expect_status 0 "build point processes --cuda" -- "$bin" build-catalogue "$tmp/pts" --cuda --nvcc nvcc -o "$tmp/pts.so"
    grep -q "__global__ void hbgw_pts_TMSyn_net_receive" "$tmp/pts.src/hbg_pts_cuda.cu" && ok || bad "no NET_RECEIVE wrapper in hbg_pts_cuda.cu"
    expect_status 0 "--cuda: NET_RECEIVE launchers" -- "$test" --points-cuda "$tmp/pts.so"
else
    echo "catalogue_build: no nvcc on PATH: the --cuda build not checked"
fi
echo "catalogue_build: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
