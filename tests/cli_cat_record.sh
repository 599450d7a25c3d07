#!/usr/bin/env bash
# Catalogue mechanisms in a network file (docs/model.md section 2, docs/network.md section 8):
# the example ring with bbp's NaTs2_t and SK_E2 in every soma and ek set there, run by
# hinesbatch run, recording a mechanism's state and ion values (NaTs2_t.m, cai, eca, ik) as
# NEURON's Vector.record would: the rows there, m in (0, 1), cai NEURON's default 5e-5 mM
# (SK_E2 reads it, nothing writes it), eca its Nernst potential at 6.3 degC (ion_style; to
# the csv's digits); ik and ina, species whose total current no mechanism reads (the CPU engine
# accumulates them only where recorded: cat_step.h), not 0; a misspelt parameter refused naming
# its key.
# Usage: cli_cat_record.sh HINESBATCH DATA
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
py=/usr/bin/python3

with_cat() { # MECHANISM-JSON OUT
    $py - "$examples/ring_network.json" "$1" "$2" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
d["t_stop"] = 20
c = d["cells"][0]
c["mechanisms"] += [json.loads(sys.argv[2]), {"name": "SK_E2", "region": "soma", "gSK_E2bar": 0.001}]
c["ions"] = [{"region": "soma", "ek": -85}]
d["record"] = {"gids": [0, 5], "variables": ["v", "NaTs2_t.m", "cai", "eca", "ik", "ina"], "sample_dt": 1}
json.dump(d, open(sys.argv[3], "w"))
PY
}
with_cat '{"name": "NaTs2_t", "region": "soma", "gNaTs2_tbar": 0.01}' "$tmp/net.json"
expect_status 0 "a network with catalogue mechanisms, recorded" -- "$bin" run "$tmp/net.json" -o "$tmp/run" --traces csv --quiet
$py - "$tmp/run/traces.csv" <<'PY' && ok || bad "traces.csv: catalogue variables"
import csv, math, sys
rows = list(csv.DictReader(open(sys.argv[1])))
assert len(rows) == 21 * 2 * 6, len(rows)
get = lambda gid, name: [float(r["value"]) for r in rows if r["gid"] == gid and r["name"] == name]
for gid in ("0", "5"):
    m = get(gid, "soma.NaTs2_t.m")
    assert len(m) == 21 and all(0 < x < 1 for x in m), m
    assert all(x == 5e-5 for x in get(gid, "soma.cai")), get(gid, "soma.cai")
    R, F = 1.380649e-23 * 6.02214076e23, 1.602176634e-19 * 6.02214076e23
    eca = 1000 * R * (6.3 + 273.15) / F / 2 * math.log(2 / 5e-5)
    assert all(abs(x - eca) < 1e-5 for x in get(gid, "soma.eca")), (get(gid, "soma.eca"), eca)
    assert any(x != 0 for x in get(gid, "soma.ik"))
    assert any(x != 0 for x in get(gid, "soma.ina"))
PY
with_cat '{"name": "NaTs2_t", "region": "soma", "gNaTs2_tbr": 0.01}' "$tmp/bad.json"
expect_status 1 "a misspelt parameter" -- "$bin" run "$tmp/bad.json" -o "$tmp/badrun" --quiet
expect_grep "$tmp/err" 'mechanisms\[2\]: NaTs2_t has no parameter "gNaTs2_tbr"; did you mean "gNaTs2_tbar"?' "the key and what it meant"
echo "cli_cat_record: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
