#!/usr/bin/env bash
# libsonata (the package index's, BBP's SONATA reader) reads hinesbatch's outputs of the SONATA
# circuit back: spikes.h5 (population, sorting, every spike of spikes.dat) and traces.h5 (an
# element report: node ids of the report's node set, times, units, frames), and opens the
# circuit's own node files. Skipped (77) where libsonata does not import: put it on
# HB_LIBSONATA_PYTHONPATH (e.g. pip install --target DIR libsonata). docs/sonata.md.
# Usage: cli_sonata_libsonata.sh HINESBATCH DATA
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
circuit=$here/sonata/circuit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib_cli.sh"
py=/usr/bin/python3
export PYTHONPATH=${HB_LIBSONATA_PYTHONPATH:-${PYTHONPATH:-}}
if ! $py -c "import libsonata" > /dev/null 2>&1; then
    echo "cli_sonata_libsonata: skipped: libsonata does not import (HB_LIBSONATA_PYTHONPATH)"
    exit 77
fi
if ! "$bin" run "$circuit/simulation_config.json" -o "$tmp/run" --sonata --quiet 2> "$tmp/err"; then
    if grep -q "needs HDF5" "$tmp/err"; then echo "cli_sonata_libsonata: skipped: no HDF5"; exit 77; fi
    bad "the circuit's run"; cat "$tmp/err" >&2
fi
$py - "$tmp/run" "$circuit" <<'PYEOF' 2>&1 | grep -v "DISPLAY\|graphics" >&2
import sys
import libsonata
out, circuit = sys.argv[1:]
rows = [l.split() for l in open(out + "/spikes.dat") if not l.startswith("#")]
want = [(int(g), float(t)) for g, t in rows]
r = libsonata.SpikeReader(out + "/spikes.h5")
assert r.get_population_names() == ["cortex"], r.get_population_names()
p = r["cortex"]
got = p.get()
assert str(p.sorting).endswith("by_time"), p.sorting
assert len(got) == len(want) == 73, (len(got), len(want))
assert all(g == w[0] and abs(t - w[1]) <= 1e-9 * abs(w[1]) for (g, t), w in zip(got, want))
e = libsonata.ElementReportReader(out + "/traces.h5")
q = e["cortex"]
assert list(q.get_node_ids()) == [0, 1, 2, 3, 4, 5, 6, 7, 8, 10], q.get_node_ids()
assert q.time_units == "ms" and q.data_units == "mV", (q.time_units, q.data_units)
assert q.times[0] == 0.0 and abs(q.times[2] - 0.025) < 1e-12, q.times
d = q.get(node_ids=[0])
v = [row[0] for row in d.data]
assert len(v) == 6001 and abs(v[0] + 65.0) < 1e-4 and max(v) > 0.0, (len(v), v[0], max(v))
n = libsonata.NodeStorage(circuit + "/network/cortex_nodes.h5").open_population("cortex")
assert n.size == 12
n = libsonata.NodeStorage(circuit + "/network/input_nodes.h5").open_population("input")
assert n.size == 4
# (the edge files have two groups each, which libsonata 0.2.2 does not open: "Only
# single-group populations are supported")
print("ok")
PYEOF
[ "${PIPESTATUS[0]}" -eq 0 ] && ok || bad "libsonata read hinesbatch's spikes.h5 and traces.h5 back"
echo "cli_sonata_libsonata: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
