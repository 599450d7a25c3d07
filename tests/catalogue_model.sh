#!/usr/bin/env bash
# A model file's "catalogues" (docs/model.md section 6): a user catalogue built by hinesbatch
# build-catalogue from copies of bbp's K_Tst.mod (its SUFFIX renamed K_Tst_user) and
# SK_E2.mod, named in a model file by a path relative to it, runs as "K_Tst_user" and
# "mycat::SK_E2" with traces and spikes bitwise the built-in bbp::K_Tst's and bbp::SK_E2's;
# also from a network file and with an absolute path. Bad input: not an array, not a string,
# a missing file, a file that is not a shared library, a library that is not a catalogue, a
# catalogue of another ABI, a catalogue named as a built-in one, a mechanism not in it, an
# ambiguous name: each an error naming catalogues[i], the path and what is wrong, exit 1.
# Usage: catalogue_model.sh HINESBATCH CC
set -u
bin=$1 cc=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
py=/usr/bin/python3

mkdir -p "$tmp/mods" "$tmp/lib" "$tmp/models"
sed "s/\\bK_Tst\\b/K_Tst_user/g" \
    "$src/mechanisms/bbp/K_Tst.mod" > "$tmp/mods/K_Tst_user.mod"
cp "$src/mechanisms/bbp/SK_E2.mod" "$tmp/mods/"
expect_status 0 "build mycat" -- "$bin" build-catalogue "$tmp/mods" --name mycat -o "$tmp/lib/mycat.so"
expect_grep "$tmp/out" "the catalogue mycat, 2 mechanisms (K_Tst_user, SK_E2)" "build summary"

# model FILE K_TST SK_E2 [CATALOGUES-JSON]: a soma and a dendrite, hh on the soma, the two
# mechanisms on the dendrite (SK_E2 reads cai), a step current
model() {
    $py - "$@" <<'PY'
import json, sys
out, k, sk = sys.argv[1:4]
cats = json.loads(sys.argv[4]) if len(sys.argv) > 4 else None
d = {"t_stop": 30, "dt": 0.025, "v_init": -65, "celsius": 34, "sample_dt": 0.25,
     "cells": [{"name": "cat", "Ra": 100, "cm": 1,
                "sections": [{"name": "soma", "parent": None, "length": 20, "diam": 20, "type": "soma"},
                             {"name": "dend", "parent": "soma", "parent_x": 1, "length": 200,
                              "diam": 2, "type": "dend"}],
                "regions": [{"region": "dend", "nseg": 5}],
                "mechanisms": [{"name": "hh", "region": "soma"},
                               {"name": "pas", "region": "dend", "g": 1e-4, "e": -70},
                               {"name": k, "region": "dend", "gK_Tstbar": 0.005},
                               {"name": sk, "region": "dend", "gSK_E2bar": 0.01}],
                "ions": [{"region": "dend", "ek": -85, "cai": 2e-4}],
                "stimuli": [{"type": "iclamp", "at": "soma", "del": 2, "dur": 25, "amp": 2.0}],
                "probes": [{"name": "soma", "at": "soma", "spike_threshold": -20},
                           {"name": "dend", "at": {"section": "dend", "x": 0.9}}]}]}
if cats is not None:
    d["catalogues"] = cats
json.dump(d, open(out, "w"), indent=1)
PY
}
run() { # NAME MODEL: traces and spikes in $tmp/NAME
    expect_status 0 "run $1" -- "$bin" run "$2" -o "$tmp/$1" --traces wide --quiet
}
model "$tmp/models/builtin.json" bbp::K_Tst bbp::SK_E2
run builtin "$tmp/models/builtin.json"
model "$tmp/models/user.json" K_Tst_user mycat::SK_E2 '["../lib/mycat.so"]'
run user "$tmp/models/user.json"
model "$tmp/models/abs.json" mycat::K_Tst_user mycat::SK_E2 "[\"$tmp/lib/mycat.so\", \"../lib/mycat.so\"]"
run abs "$tmp/models/abs.json"
for name in user abs; do
    for f in probes.csv spikes.dat; do # 17 digits: the same bits
        cmp -s "$tmp/builtin/$f" "$tmp/$name/$f" && ok || bad "$name/$f differs from the built-ins'"
    done
done
$py - "$tmp/builtin/probes.csv" "$tmp/builtin/spikes.dat" <<'PY' && ok || bad "the built-ins' run: no spike, or the dendrite still"
import csv, sys
d = [float(r["dend"]) for r in csv.DictReader(open(sys.argv[1]))]
assert len(d) == 121 and max(d) - min(d) > 10, (len(d), min(d), max(d))
spikes = [l for l in open(sys.argv[2]) if not l.startswith("#")]
assert len(spikes) >= 1, spikes
PY
# a network file names its catalogues the same way
$py - "$tmp/models/user.json" "$tmp/models/net.json" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["network"] = {"connections": []}
json.dump(d, open(sys.argv[2], "w"))
PY
expect_status 0 "a network file with catalogues" -- "$bin" run "$tmp/models/net.json" -o "$tmp/net" --quiet
cmp -s "$tmp/builtin/spikes.dat" "$tmp/net/spikes.dat" && ok || bad "the network's spikes differ from the built-ins'"

# bad input: each names its key, the path and what is wrong
bad_model() { # NAME K SK CATALOGUES-JSON PATTERN
    model "$tmp/models/$1.json" "$2" "$3" "$4"
    expect_status 1 "$1" -- "$bin" run "$tmp/models/$1.json" -o "$tmp/$1" --quiet
    expect_grep "$tmp/err" "$5" "$1's message"
}
bad_model not_array bbp::K_Tst bbp::SK_E2 '"../lib/mycat.so"' "catalogues: expected an array"
bad_model not_string bbp::K_Tst bbp::SK_E2 '[42]' "catalogues\[0\]: a number; expected the path of a catalogue"
bad_model missing bbp::K_Tst bbp::SK_E2 '["../lib/mycat.so", "none.so"]' \
    "catalogues\[1\]: $tmp/models/none.so: no such file"
echo 'not a library' > "$tmp/lib/text.so"
bad_model text bbp::K_Tst bbp::SK_E2 '["../lib/text.so"]' \
    "catalogues\[0\]: $tmp/models/../lib/text.so: cannot load it as a shared library"
printf 'int hb_not_a_catalogue(void);\nint hb_not_a_catalogue(void) { return 1; }\n' > "$tmp/plain.c"
"$cc" -shared -fPIC "$tmp/plain.c" -o "$tmp/lib/plain.so" && ok || bad "building plain.so"
bad_model plain bbp::K_Tst bbp::SK_E2 '["../lib/plain.so"]' \
    "catalogues\[0\]: .*plain.so: not a hinesbatch catalogue (no function hb_catalogue_v1)"
cat > "$tmp/forge.c" <<'C'
#include "common/mech_abi.h"
const hb_catalogue_t *hb_catalogue_v1(void);
static const hb_catalogue_t cat = {2, sizeof(hb_cat_mech_t), "forged", "test", 0, 0};
const hb_catalogue_t *hb_catalogue_v1(void) { return &cat; }
C
"$cc" -shared -fPIC -I"$src/src" "$tmp/forge.c" -o "$tmp/lib/abi2.so" && ok || bad "forging abi2.so"
bad_model abi bbp::K_Tst bbp::SK_E2 '["../lib/abi2.so"]' \
    "catalogues\[0\]: .*abi2.so: a catalogue of ABI 2, and this hinesbatch reads ABI 1"
expect_status 0 "build a catalogue named bbp" -- "$bin" build-catalogue "$tmp/mods" --name bbp -o "$tmp/lib/bbp.so"
bad_model builtin_name bbp::K_Tst bbp::SK_E2 '["../lib/bbp.so"]' \
    "catalogues\[0\]: .*bbp.so: the catalogue is named bbp, as a built-in one"
bad_model no_such_mech mycat::K_Tst bbp::SK_E2 '["../lib/mycat.so"]' "mycat::K_Tst"
bad_model ambiguous K_Tst_user SK_E2 '["../lib/mycat.so"]' "SK_E2"
bad_model no_catalogues K_Tst_user bbp::SK_E2 '[]' "K_Tst_user"
echo "catalogue_model: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
