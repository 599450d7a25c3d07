#!/usr/bin/env bash
# The C the NMODL code generator writes compiles with the project's warnings as errors, for
# every committed .mod file it translates (docs/nmodl.md, section 5), and the count is the
# one docs/nmodl.md gives.
# Usage: nmodl_gen_compile.sh NMODL_EMIT CC SOURCE_DIR [FLAGS...]
set -u
emit=$1 cc=$2 src=$3
shift 3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
translated=0 failed=0
for mod in "$src"/mechanisms/*/*.mod; do
    folder=$(basename "$(dirname "$mod")")
    name=$(basename "$mod" .mod)
    header=$tmp/${folder}_$name.h
    "$emit" "$mod" "hbg_${folder}_$name" "$header" 2> /dev/null || continue # refused: test_nmodl says why
    translated=$((translated + 1))
    printf '#include "%s"\n' "$header" > "$tmp/tu.c"
    if ! "$cc" -std=c11 -fsyntax-only "$@" -Werror -I"$src/src" -I"$src/include" "$tmp/tu.c" 2> "$tmp/err"; then
        echo "FAIL: the C generated from $mod does not compile:" >&2
        head -20 "$tmp/err" >&2
        failed=$((failed + 1))
    fi
done
[ "$translated" -eq 33 ] || { echo "FAIL: $translated files translated, expected 33" >&2; failed=$((failed + 1)); }
echo "nmodl_gen_compile: $translated generated, $failed failures"
[ "$failed" -eq 0 ]
