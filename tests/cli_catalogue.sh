#!/usr/bin/env bash
# hinesbatch build-catalogue --check: the committed catalogues check clean, their interfaces
# print as text and JSON, and a folder with a bad file names its FILE:LINE:COLUMN, still
# describes the good ones and exits 1.
# Usage: cli_catalogue.sh HINESBATCH DATA_DIR
set -u
bin=$1
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

for dir in nrn bbp bbp/original allen; do
    expect_status 0 "check mechanisms/$dir" -- "$bin" build-catalogue --check "$src/mechanisms/$dir"
done
expect_status 0 "hh.mod as text" -- "$bin" build-catalogue --check "$src/mechanisms/nrn/hh.mod"
expect_grep "$tmp/out" "^hh (density) " "hh's kind"
expect_grep "$tmp/out" "states      m, h, n" "hh's states"
expect_grep "$tmp/out" "ion         na READ ena WRITE ina VALENCE 1" "hh's sodium"
expect_grep "$tmp/out" "solve       states METHOD cnexp (DERIVATIVE, in BREAKPOINT)" "hh's solve"
expect_status 0 "bbp as JSON" -- "$bin" build-catalogue --check --json "$src/mechanisms/bbp"
python3 - "$tmp/out" <<'PY' && ok || bad "bbp JSON content"
import json, sys
d = json.load(open(sys.argv[1]))
m = {x["name"]: x for x in d["mechanisms"]}
assert len(m) == 13 and d["errors"] == [], (len(m), d["errors"])
assert [i["write"] for i in m["CaDynamics_E2"]["ions"]] == [["cai"]]
assert m["Ih"]["currents"] == ["ihcn"] and m["Ih"]["ions"] == []
p = {x["name"]: x for x in m["NaTs2_t"]["parameters"]}
assert p["gNaTs2_tbar"]["default"] == 1e-05 and p["gNaTs2_tbar"]["unit"] == "S/cm2"
assert m["ProbAMPANMDA_EMS"]["kind"] == "point" and m["ProbAMPANMDA_EMS"]["net_receive_args"][0] == "weight"
assert m["ProbAMPANMDA_EMS"]["generator"] == "translatable" and m["SK_E2"]["generator"] == "translatable"
PY
# BBP's original ProbAMPANMDA_EMS (the folder's is its port): VERBATIM, refused by the generator
expect_status 0 "bbp/original as JSON" -- "$bin" build-catalogue --check --json "$src/mechanisms/bbp/original"
python3 - "$tmp/out" <<'PY' && ok || bad "bbp/original JSON content"
import json, sys
m = {x["name"]: x for x in json.load(open(sys.argv[1]))["mechanisms"]}
assert "VERBATIM" in m["ProbAMPANMDA_EMS"]["generator"], m["ProbAMPANMDA_EMS"]["generator"]
PY
# a folder with one bad file among good ones
mkdir "$tmp/mods"
cp "$src/mechanisms/nrn/hh.mod" "$src/mechanisms/nrn/expsyn.mod" "$tmp/mods/"
printf 'NEURON { SUFFIX bad USEION na READ eca }\n' > "$tmp/mods/bad.mod"
expect_status 1 "a bad file in the folder" -- "$bin" build-catalogue --check "$tmp/mods"
expect_grep "$tmp/err" "^$tmp/mods/bad.mod:1:36: USEION na READ 'eca', which is not a variable of the ion na; expected ena, nai, nao or ina$" "bad file's message"
expect_grep "$tmp/out" "^ExpSyn (point) " "the good files still described"
cp "$tmp/mods/hh.mod" "$tmp/mods/hh2.mod"
rm "$tmp/mods/bad.mod"
expect_status 1 "two files, one mechanism" -- "$bin" build-catalogue --check "$tmp/mods"
expect_grep "$tmp/err" "hh2.mod: the mechanism hh is also defined by .*/hh.mod; expected one file per mechanism name" "duplicate message"
# usage errors
expect_status 2 "without --check or -o" -- "$bin" build-catalogue "$src/mechanisms/nrn"
expect_grep "$tmp/err" "nothing to do; expected -o NAME.so (build) or --check" "without --check or -o message"
expect_status 1 "no such folder" -- "$bin" build-catalogue --check "$tmp/none"
expect_grep "$tmp/err" "no such file or folder" "missing folder message"
mkdir "$tmp/empty"
expect_status 1 "a folder without .mod files" -- "$bin" build-catalogue --check "$tmp/empty"
expect_grep "$tmp/err" "no .mod file in the folder" "empty folder message"

echo "cli_catalogue: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
