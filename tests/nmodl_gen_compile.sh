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
    # constants folded at generation: each literal the kernel's own value, hb_math.h's functions
    # run here on values the compiler cannot see (volatile), without FMA contraction
    for call in "hb_pow(s->a, (1.0 / 2.0))" "hb_powi(s->gq, 2)"; do # names are not folded
        grep -qF -- "$call" "$tmp/mathfn.h" || { echo "FAIL: $mathfn: no '$call' in the C" >&2; failed=$((failed + 1)); }
    done
    cat > "$tmp/fold.c" << 'EOF'
#include <stdio.h>
#include "common/hb_math.h"
int main(void)
{
    volatile double x23 = 2.3, x34 = 34.0, x21 = 21.0, x10 = 10.0, m15 = -1.5, x2 = 2.0;
    printf("(%a /* hb_pow(2.2999999999999998, ((34.0 - 21.0) / 10.0)) */)\n",
           hb_pow(x23, (x34 - x21) / x10));
    printf("(%a /* hb_exp((-(1.5))) */)\n", hb_exp(m15));
    printf("(%a /* (hb_log(10.0) * 2.0) */)\n", hb_log(x10) * x2);
    printf("(%a /* hb_powi(2.0, -3) */)\n", hb_powi(x2, -3));
    printf("(%a /* sqrt(2.0) */)\n", sqrt(x2));
    return 0;
}
EOF
    if "$cc" -std=c11 -O2 -ffp-contract=off -I"$src/src" -o "$tmp/fold" "$tmp/fold.c" -lm; then
        while IFS= read -r literal; do
            grep -qF -- "$literal" "$tmp/mathfn.h" ||
                { echo "FAIL: $mathfn: no folded '$literal' in the C" >&2; failed=$((failed + 1)); }
        done < <("$tmp/fold")
    else
        echo "FAIL: the folding check does not compile" >&2
        failed=$((failed + 1))
    fi
else
    echo "FAIL: $mathfn not generated" >&2
    failed=$((failed + 1))
fi
[ "$translated" -eq 33 ] || { echo "FAIL: $translated files translated, expected 33" >&2; failed=$((failed + 1)); }
echo "nmodl_gen_compile: $translated generated, $failed failures"
[ "$failed" -eq 0 ]
