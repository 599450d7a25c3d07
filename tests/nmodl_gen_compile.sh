#!/usr/bin/env bash
# The C the NMODL code generator writes compiles with the project's warnings as errors, for
# every committed .mod file it translates (docs/nmodl.md, section 5), and the count is the
# one docs/nmodl.md gives; tests/nmodl/mathfn.mod's math functions are hb_math.h's where libm and
# CUDA may differ.
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
# every math function: those libm and CUDA may round differently as src/common/hb_math.h's
# (the same bits on both backends), the exact ones and the rest as libm's; the C compiles
mathfn=$src/tests/nmodl/mathfn.mod
if "$emit" "$mathfn" hbg_mathfn "$tmp/mathfn.h"; then
    for call in "hb_exp(s->a)" "hb_log(s->a)" "hb_log10(s->a)" "hb_pow(s->a, 2.5)" "hb_powi(s->a, 3)" "hb_powi(s->a, -2)" "hb_pow(s->a, 1.5)" \
                "hb_sinh(s->a)" "hb_cosh(s->a)" "hb_tanh(s->a)" " sqrt(s->a)" " fabs(s->a)" " floor(s->a)" \
                " fmod(s->a, " " sin(s->a)" " atan2(s->a, 2.0)" " erfc(s->a)"; do
        grep -qF -- "$call" "$tmp/mathfn.h" || { echo "FAIL: $mathfn: no '$call' in the C" >&2; failed=$((failed + 1)); }
    done
    if grep -qE '[^_a-z](exp|log|log10|pow|sinh|cosh|tanh)\(' "$tmp/mathfn.h"; then
        echo "FAIL: $mathfn: libm's exp, log, log10, pow, sinh, cosh or tanh in the C" >&2
        failed=$((failed + 1))
    fi
    printf '#include "%s"\n' "$tmp/mathfn.h" > "$tmp/tu.c"
    "$cc" -std=c11 -fsyntax-only "$@" -Werror -I"$src/src" -I"$src/include" "$tmp/tu.c" ||
        { echo "FAIL: the C generated from $mathfn does not compile" >&2; failed=$((failed + 1)); }
else
    echo "FAIL: $mathfn not generated" >&2
    failed=$((failed + 1))
fi
[ "$translated" -eq 33 ] || { echo "FAIL: $translated files translated, expected 33" >&2; failed=$((failed + 1)); }
echo "nmodl_gen_compile: $translated generated, $failed failures"
[ "$failed" -eq 0 ]
