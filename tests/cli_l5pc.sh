#!/usr/bin/env bash
# BluePyOpt's l5pc cell (examples/l5pc.json: its ASC morphology, nseg 1 + 2 int(L/40), the
# release parameters of BBP's 13 mechanisms, Ih exponential along the apical tree) against
# NEURON 8.2 (tests/neuron/l5pc_reference.py; docs/validation.md): the soma's spikes in NEURON's
# steps and its v within 0.05 mV at every 0.25 ms sample, the whole cell (step3.txt) and without
# CaDynamics_E2 (step3_nocadyn.txt); NEURON's 1463 segments; a bad distribution, and one of a
# GLOBAL, refused naming its key.
# Usage: cli_l5pc.sh HINESBATCH DATA [REFDIR] (REFDIR: the references, default the committed
# tests/reference/neuron-l5pc; tests/l5pc_neuron.sh passes fresh ones from the installed NEURON)
set -u
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${3:-$root/tests/reference/neuron-l5pc}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
py=/usr/bin/python3

variant() { # OUT [MECHANISM-LEFT-OUT] [DISTRIBUTION-JSON [KEY]]: examples/l5pc.json, changed
    $py - "$root/examples/l5pc.json" "$@" <<'PY'
import json, os, sys
src, out = sys.argv[1], sys.argv[2]
d = json.load(open(src))
c = d["cells"][0]
c["morphology"] = os.path.join(os.path.dirname(src), c["morphology"])
if len(sys.argv) > 3 and sys.argv[3]:
    c["mechanisms"] = [m for m in c["mechanisms"] if m["name"] != sys.argv[3]]
if len(sys.argv) > 4:
    c["mechanisms"][-5][sys.argv[5] if len(sys.argv) > 5 else "gIhbar"] = json.loads(sys.argv[4])
json.dump(d, open(out, "w"))
PY
}

compare() { # REFERENCE RUN-DIR WHAT: 401 samples (100 ms), v within 0.05 mV
    compare_neuron "$1" "$2" 401 0.05 "$3"
}

expect_status 0 "info: BluePyOpt's nseg rule" -- "$bin" info --scheme neuron --policy odd-length --max-length 20 "$root/data/morphologies-asc/C060114A7.asc"
expect_grep "$tmp/out" "compartments *1463$" "NEURON's 1463 segments"

variant "$tmp/nocadyn.json" CaDynamics_E2
expect_status 0 "l5pc without CaDynamics_E2" -- "$bin" run "$tmp/nocadyn.json" -o "$tmp/nocadyn" --traces wide --quiet
compare "$ref/step3_nocadyn.txt" "$tmp/nocadyn" "l5pc without CaDynamics_E2"

variant "$tmp/whole.json"
expect_status 0 "l5pc, the whole cell" -- "$bin" run "$tmp/whole.json" -o "$tmp/whole" --traces wide --quiet
compare "$ref/step3.txt" "$tmp/whole" "l5pc, the whole cell (CaDynamics_E2's cai through the ion)"

variant "$tmp/bad.json" CaDynamics_E2 '{"value": 8e-05, "exp_distance": [-0.8696, 2.087]}'
expect_status 1 "a distribution of two numbers" -- "$bin" run "$tmp/bad.json" -o "$tmp/badrun" --quiet
expect_grep "$tmp/err" 'mechanisms\[15\].gIhbar.exp_distance: expected \[a, b, c\]' "the key and what is expected"
variant "$tmp/neg.json" CaDynamics_E2 '{"value": 8e-05, "exp_distance": [0, 1, 1000]}'
expect_status 1 "a distribution that overflows" -- "$bin" run "$tmp/neg.json" -o "$tmp/negrun" --quiet
expect_grep "$tmp/err" "mechanisms\[15\].gIhbar: Ih's gIhbar = inf" "the overflow at its key"
variant "$tmp/global.json" CaDynamics_E2 '{"value": -45, "exp_distance": [1, 0, 0]}' ehcn
expect_status 1 "a distribution of a GLOBAL" -- "$bin" run "$tmp/global.json" -o "$tmp/globalrun" --quiet
expect_grep "$tmp/err" 'mechanisms\[15\].ehcn: expected a number, found an object' "one value per model"
echo "cli_l5pc: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
