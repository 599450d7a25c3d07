#!/usr/bin/env bash
# hinesbatch run on a network file with a "record" section (docs/network.md, section 8): one
# SONATA report for all ranks (traces.h5 read back with h5py: shape, gids, element names,
# units, times), traces.csv (--traces csv, the same values), the same bits on 2 ranks, bad
# sections refused by key path, an interrupted run's traces a prefix of the full run's, and a
# restart from a checkpoint continuing the report to the uninterrupted run's bits.
# Usage: cli_net_record.sh HINESBATCH DATA
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
need_python h5py numpy
py=/usr/bin/python3

# the example ring with RECORD as its "record" section, t_stop 40 ms
with_record() { # RECORD OUT
    $py - "$examples/ring_network.json" "$1" "$2" <<'EOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["t_stop"] = 40
d["record"] = json.loads(sys.argv[2])
json.dump(d, open(sys.argv[3], "w"))
EOF
}
rec='[{"gids": [0, "16-17", 63], "variables": ["v", "hh.m", "hh.ina", "syn[0].g", "syn[1].i"], "sample_dt": 0.1},
      {"gids": [1], "locations": [{"section": 1, "x": 0.5}], "variables": ["v", "pas.i"], "sample_dt": 0.1}]'
with_record "$rec" "$tmp/net.json"

expect_status 0 "recording network" -- "$bin" run "$tmp/net.json" -o "$tmp/h5"
expect_grep "$tmp/out" "traces.h5" "the summary names traces.h5"
if $py -c "import h5py" 2> /dev/null; then
    $py - "$tmp/h5/traces.h5" <<'EOF' && ok || bad "traces.h5 read back with h5py"
import sys, h5py, numpy as np
f = h5py.File(sys.argv[1], "r")
r = f["report/default"]
d, m = r["data"], r["mapping"]
assert d.shape == (401, 22), d.shape                      # 0..40 ms every 0.1 ms; 4x5 + 2
assert list(m["node_ids"][:]) == [0, 1, 16, 17, 63], m["node_ids"][:]
assert list(m["index_pointers"][:]) == [0, 5, 7, 12, 17, 22], m["index_pointers"][:]
names = [x.decode() for x in m["element_names"][:]]
assert names[:7] == ["soma.v", "soma.hh.m", "soma.hh.ina", "syn[0].g", "syn[1].i",
                     "sec1(0.5).v", "sec1(0.5).pas.i"], names[:7]
units = [x.decode() for x in m["element_units"][:]]
assert units[:7] == ["mV", "1", "mA/cm2", "uS", "nA", "mV", "mA/cm2"], units
assert d.attrs["units"] in ("mixed", b"mixed"), d.attrs["units"]
assert np.allclose(m["time"][:], [0, 40.1, 0.1]), m["time"][:]
x = d[:]
assert np.all(x[0, [0, 5, 7, 12, 17]] == np.float32(-65)), x[0]
assert x[:, 0].max() > 0, "gid 0 fires (its kick)"
assert list(m["element_ids"][:7]) == [0, 1, 2, 3, 4, 0, 1]
EOF
fi

# CSV: the same values (6+ significant digits), every row a (gid, name, t, value)
expect_status 0 "recording network, csv" -- "$bin" run "$tmp/net.json" -o "$tmp/csv" --traces csv --quiet
[ "$(head -1 "$tmp/csv/traces.csv")" = "gid,name,t_ms,value" ] && ok || bad "traces.csv header: $(head -1 "$tmp/csv/traces.csv")"
n=$(($(wc -l < "$tmp/csv/traces.csv") - 1))
[ "$n" -eq $((401 * 22)) ] && ok || bad "traces.csv: $n rows, expected $((401 * 22))"
grep -q '^1,sec1(0.5).pas.i,0.1,' "$tmp/csv/traces.csv" && ok || bad "traces.csv: no gid 1 pas.i row at 0.1 ms"
if $py -c "import h5py" 2> /dev/null; then
    $py - "$tmp/h5/traces.h5" "$tmp/csv/traces.csv" <<'EOF' && ok || bad "traces.csv and traces.h5 differ"
import sys, h5py, numpy as np
d = h5py.File(sys.argv[1], "r")["report/default/data"][:]
v = np.loadtxt(sys.argv[2], delimiter=",", skiprows=1, usecols=3).reshape(d.shape)
assert np.allclose(v, d, rtol=1e-6, atol=1e-12), abs(v - d).max()
EOF
fi
expect_status 2 "--traces wide on a network" -- "$bin" run "$tmp/net.json" -o "$tmp/wide" --traces wide
expect_grep "$tmp/err" "expected --traces h5, csv or none" "--traces wide refused"
expect_status 0 "--traces none" -- "$bin" run "$tmp/net.json" -o "$tmp/none" --traces none --quiet
[ ! -e "$tmp/none/traces.h5" ] && [ ! -e "$tmp/none/traces.csv" ] && ok || bad "--traces none wrote traces"

# the same traces on 2 ranks (the gids split between them; rank 0 writes)
expect_status 0 "version" -- "$bin" --version
cp "$tmp/out" "$tmp/version"
if command -v mpirun > /dev/null && grep -q "communicators: serial, mpi" "$tmp/version"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    export OMPI_MCA_mpi_yield_when_idle=1
    expect_status 0 "recording on 2 ranks" -- mpirun -np 2 "$bin" run "$tmp/net.json" -o "$tmp/csv2" --traces csv --quiet
    cmp -s "$tmp/csv/traces.csv" "$tmp/csv2/traces.csv" && ok || bad "traces.csv differs on 2 ranks"
fi

# bad sections: the key path and what is wrong
refuse() { # RECORD PATTERN
    with_record "$1" "$tmp/bad.json"
    expect_status 1 "record $1" -- "$bin" run "$tmp/bad.json" -o "$tmp/bad"
    expect_grep "$tmp/err" "$2" "record $1"
}
refuse '{"gids": [0], "variables": ["hh.mm"]}' 'record.variables\[0\]: variable "hh.mm".*did you mean "hh.m"'
refuse '{"gids": [0, 70]}' 'record.gids\[1\]: gid 70 is not a cell; expected cells'"'"' gids, 0 to 63'
refuse '{"gids": [1], "locations": [{"section": 1}], "variables": ["hh.n"]}' 'record: gid 1, "hh.n" at sec1(0.5): no hh at node'
refuse '{"gids": [0], "variables": ["syn[5].g"]}' 'no synapse 5 (the cell has 2)'
refuse '{"gids": "all", "sample_dt": -1}' 'record.sample_dt'

# interrupted: traces.csv a fifo; SIGTERM after 20 lines; what was written is a prefix of the
# full run's (exit 143, summary interrupted)
mkdir -p "$tmp/int"
mkfifo "$tmp/int/traces.csv"
"$bin" run "$tmp/net.json" -o "$tmp/int" --quiet --traces csv 2> "$tmp/int/stderr" &
pid=$!
exec 3< "$tmp/int/traces.csv"
: > "$tmp/int/got"
for _ in $(seq 20); do IFS= read -r line <&3 && printf '%s\n' "$line" >> "$tmp/int/got"; done
kill -TERM "$pid"
cat <&3 >> "$tmp/int/got"
exec 3<&-
wait "$pid"
status=$?
[ "$status" -eq 143 ] && ok || bad "interrupted recording: exit $status, expected 143"
expect_grep "$tmp/int/summary.json" '"status": "interrupted"' "interrupted summary"
got=$(wc -l < "$tmp/int/got")
full=$(wc -l < "$tmp/csv/traces.csv")
if [ "$got" -gt 22 ] && [ "$got" -lt "$full" ] && cmp -s "$tmp/int/got" <(head -n "$got" "$tmp/csv/traces.csv"); then ok
else bad "interrupted traces.csv: $got lines, not a proper prefix of the full run's $full"; fi

# checkpoint every 10 ms, restart from the last (30 ms): the report continued is the full run's
for fmt in h5 csv; do
    expect_status 0 "checkpointed recording ($fmt)" -- "$bin" run "$tmp/net.json" -o "$tmp/ck_$fmt" \
        --traces $fmt --checkpoint-every 10 --quiet
    file=traces.$fmt
    # (rows after the checkpoint that the restart must cut off)
    [ "$fmt" = csv ] && echo "0,soma.v,39.9,12345" >> "$tmp/ck_csv/traces.csv"
    expect_status 0 "restart of a recording ($fmt)" -- "$bin" run "$tmp/net.json" -o "$tmp/ck_$fmt" \
        --traces $fmt --restart "$tmp/ck_$fmt" --quiet
    if [ "$fmt" = csv ]; then
        cmp -s "$tmp/ck_csv/traces.csv" "$tmp/csv/traces.csv" && ok || bad "restarted traces.csv differs"
    elif $py -c "import h5py" 2> /dev/null; then
        $py - "$tmp/ck_h5/traces.h5" "$tmp/h5/traces.h5" <<'EOF' && ok || bad "restarted traces.h5 differs"
import sys, h5py, numpy as np
a, b = (h5py.File(p, "r")["report/default"] for p in sys.argv[1:])
assert a["data"].shape == b["data"].shape, (a["data"].shape, b["data"].shape)
assert np.array_equal(a["data"][:], b["data"][:])
assert np.array_equal(a["mapping/time"][:], b["mapping/time"][:])
EOF
    fi
done

echo "cli_net_record: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
