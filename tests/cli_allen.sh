#!/usr/bin/env bash
# The Allen Cell Types model of Arbor's single_cell_allen example (examples/allen.json: the SWC,
# nseg 1 + 2 int(L/40), the fit's 42 genome values with the allen catalogue, its own axon)
# against NEURON 8.2 (tests/neuron/allen_reference.py; docs/validation.md, "The Allen cell"):
# the model file restates data/models/single_cell_allen_fit.json, value for value; NEURON's 287
# segments; the soma's spikes (-40 mV) in NEURON's steps and its v within 0.05 mV at every
# 0.25 ms sample of the short protocol (0.3 nA from 20 to 120 ms: seconds, where Arbor's
# 1400 ms take twenty), and on a grid single precision holds (NEURON's 3-D points are then
# hinesbatch's) within 1e-6 mV, and off it with "point_precision": "float" (the points as
# NEURON's pt3d stores them) within 1e-8 mV, refused with the hinesbatch section rule; a name two
# catalogues have refused with its qualified names.
# Usage: cli_allen.sh HINESBATCH DATA [REFDIR] (REFDIR: the references, default the committed
# tests/reference/neuron-allen; tests/allen_neuron.sh passes fresh ones from the installed NEURON)
set -u
bin=$1
root=$(cd "$(dirname "$0")/.." && pwd)
ref=${3:-$root/tests/reference/neuron-allen}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
py=/usr/bin/python3
model=$root/examples/allen.json
fit=$root/data/models/single_cell_allen_fit.json

# Every genome value, condition and reversal potential of the fit, at its place in the model
# file, and nothing else there.
$py - "$model" "$fit" <<'PY' && ok || bad "examples/allen.json restates the fit"
import json, sys
model, fit = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
cell = model["cells"][0]
region = {"soma": "soma", "axon": "axon", "apic": "apical", "dend": "dend"}
cond = fit["conditions"][0]
assert model["celsius"] == cond["celsius"] and model["v_init"] == cond["v_init"]
assert cell["Ra"] == fit["passive"][0]["ra"]
want = {}  # (region, mechanism or "", key) -> value
for p in fit["genome"]:
    r, m, name = region[p["section"]], p["mechanism"], p["name"]
    if not m and name in ("cm", "Ra"):
        want[(r, "", name)] = float(p["value"])
    elif not m:  # g_pas, e_pas
        want[(r, "pas", name.split("_")[0])] = float(p["value"])
    else:
        assert name.endswith("_" + m), name
        want[(r, m, name[:-len(m) - 1])] = float(p["value"])
got = {}
for reg in cell["regions"]:
    for k in ("cm", "Ra"):
        got[(reg["region"], "", k)] = reg[k]
for mech in cell["mechanisms"]:
    m = mech["name"].split("::")[-1]
    for k, v in mech.items():
        if k not in ("name", "region"):
            assert (mech["region"], m, k) not in got, (mech, k)
            got[(mech["region"], m, k)] = v
assert got == want, sorted(set(got.items()) ^ set(want.items()))
ions = {(i["region"], k): v for i in cell["ions"] for k, v in i.items() if k != "region"}
assert ions == {(region[e["section"]], k): e[k] for e in cond["erev"] for k in ("ena", "ek")}
print("examples/allen.json: %d genome values, %d reversal potentials, celsius, v_init, Ra: "
      "the fit's" % (len(want), len(ions)))
PY

expect_status 0 "info: the Allen SDK's nseg rule" -- "$bin" info --scheme neuron --policy odd-length --max-length 20 "$root/data/morphologies/single_cell_allen.swc"
expect_grep "$tmp/out" "compartments *287$" "NEURON's 287 segments"

variant() { # OUT [grid | NAME-FROM NAME-TO]: examples/allen.json on the short protocol
    $py - "$model" "$root/tests/neuron" "$@" <<'PY'
import json, os, sys
src, here, out = sys.argv[1], sys.argv[2], sys.argv[3]
d = json.load(open(src))
d["t_stop"] = 120
c = d["cells"][0]
c["morphology"] = os.path.join(os.path.dirname(src), c["morphology"])
c["stimuli"] = [{"type": "iclamp", "at": "soma", "del": 20, "dur": 100, "amp": 0.3}]
if sys.argv[4:] == ["float"]:  # NEURON's 3-D points: the real SWC as NEURON's pt3d stores it
    c["point_precision"] = "float"
elif sys.argv[4:] == ["float", "vertex"]:  # refused: NEURON's points need NEURON's sections
    c["point_precision"] = "float"
    c["section_rule"] = "hinesbatch"
elif sys.argv[4:] == ["grid"]:  # the reference script's grid, the same text
    sys.path.insert(0, here)
    from nrnref import on_grid
    text = on_grid(open(c["morphology"]).read())
    c["morphology"] = out[:-5] + ".swc"
    open(c["morphology"], "w").write(text)
elif len(sys.argv) > 4:
    next(m for m in c["mechanisms"] if m["name"] == sys.argv[4])["name"] = sys.argv[5]
json.dump(d, open(out, "w"))
PY
}

compare() { # REFERENCE RUN-DIR LIMIT-MV WHAT: 481 samples (120 ms)
    compare_neuron "$1" "$2" 481 "$3" "$4"
}

variant "$tmp/short.json"
expect_status 0 "the Allen cell, short protocol" -- "$bin" run "$tmp/short.json" -o "$tmp/short" --traces wide --quiet
compare "$ref/short.txt" "$tmp/short" 0.05 "the Allen cell"
# On the grid single precision holds, NEURON's 3-D points are hinesbatch's: the same cell, to
# rounding (off the grid the one-point soma's length alone differs by 1.2e-6 relative).
variant "$tmp/grid.json" grid
expect_status 0 "the Allen cell on the grid" -- "$bin" run "$tmp/grid.json" -o "$tmp/grid" --traces wide --quiet
compare "$ref/short_grid.txt" "$tmp/grid" 1e-6 "the Allen cell on the grid"

# With point_precision "float" the real SWC's points are NEURON's floats (the soma's length
# included): the same cell as NEURON's off the grid, to rounding.
variant "$tmp/float.json" float
expect_status 0 "the Allen cell, NEURON's float points" -- "$bin" run "$tmp/float.json" -o "$tmp/float" --traces wide --quiet
compare "$ref/short.txt" "$tmp/float" 1e-8 "the Allen cell with point_precision float"
variant "$tmp/floatvertex.json" float vertex
expect_status 1 "float points with hinesbatch sections" -- "$bin" run "$tmp/floatvertex.json" -o "$tmp/floatvertexrun" --quiet
expect_grep "$tmp/err" 'cells\[0\].point_precision: "float" .*expected section_rule "import3d"' "float points need Import3d's sections"

variant "$tmp/ambiguous.json" allen::Ih Ih
expect_status 1 "Ih unqualified" -- "$bin" run "$tmp/ambiguous.json" -o "$tmp/ambiguousrun" --quiet
expect_grep "$tmp/err" 'mechanisms\[19\].name: ambiguous mechanism "Ih".*bbp::Ih, allen::Ih' "the catalogues' names"
echo "cli_allen: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
