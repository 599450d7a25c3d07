#!/usr/bin/env bash
# The catalogue generator is reproducible: generating each built-in catalogue twice, from the
# source folder as the build does, gives the same bytes both times and the build's own; and the
# engine's copy of the default catalogue's headers (src/common/builtin/: hh, pas, ExpSyn and
# Exp2Syn, which common/sim_step.h steps) is what the generator writes today.
# Usage: nmodl_catalogue_repro.sh HB_NMODLGEN SOURCE_DIR BUILD_CATALOGUE_DIR
set -u
gen=$1 src=$2 built=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failed=0
cd "$src" || exit 1
for cat in default:nrn bbp:bbp allen:allen; do
    name=${cat%%:*} dir=${cat##*:}
    for run in 1 2; do
        mkdir -p "$tmp/$run"
        # the files in another order on the second run: the generator orders them itself
        if [ $run = 1 ]; then mods=$(ls mechanisms/$dir/*.mod); else mods=$(ls -r mechanisms/$dir/*.mod); fi
        # shellcheck disable=SC2086
        "$gen" --name "$name" --symbol "hb_catalogue_builtin_$name" "$tmp/$run" $mods ||
            { echo "FAIL: hb_nmodlgen $name exits non-zero" >&2; failed=$((failed + 1)); }
    done
done
n=$(ls "$tmp/1" | wc -l)
[ "$n" -ge 6 ] || { echo "FAIL: $n files generated" >&2; failed=$((failed + 1)); }
diff -r "$tmp/1" "$tmp/2" > "$tmp/diff" || { echo "FAIL: two runs differ:" >&2; head -20 "$tmp/diff" >&2; failed=$((failed + 1)); }
for f in "$tmp"/1/*; do
    cmp -s "$f" "$built/$(basename "$f")" || { echo "FAIL: $(basename "$f") differs from the build's" >&2; failed=$((failed + 1)); }
done
copies=0
for f in "$src"/src/common/builtin/hbg_default_*.h; do
    copies=$((copies + 1))
    cmp -s "$f" "$tmp/1/$(basename "$f")" ||
        { echo "FAIL: src/common/builtin/$(basename "$f") is not the generator's output; regenerate it (hb_nmodlgen --name default --symbol hb_catalogue_builtin_default DIR mechanisms/nrn/*.mod)" >&2; failed=$((failed + 1)); }
done
[ "$copies" -eq 4 ] || { echo "FAIL: $copies headers in src/common/builtin, expected 4" >&2; failed=$((failed + 1)); }
echo "nmodl_catalogue_repro: $n files, $copies engine copies, $failed failures"
[ "$failed" -eq 0 ]
