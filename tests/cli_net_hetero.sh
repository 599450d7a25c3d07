#!/usr/bin/env bash
# A synapse whose NET_RECEIVE loops over its incoming connections with FOR_NETCONS
# (tests/nmodl/hetero/HeteroSyn.mod, a user catalogue built by build-catalogue: each event
# raises its connection's weight and rescales every incoming weight to a fixed sum;
# docs/mechanisms.md, section 10): against NEURON 8.2 running the same file
# (tests/neuron/hetero_reference.py) every spike in NEURON's step and the soma voltages and the
# synapses' wsum, wfirst and nfirst (what the loops read and wrote, in the connections' order)
# NEURON's to a float32 ulp; the same spikes and traces bit for bit on 2 threads, restarted from
# a checkpoint and, where this build has MPI, on 2 ranks.
# Usage: cli_net_hetero.sh HINESBATCH
set -u
bin=$1
src=$(cd "$(dirname "$0")/.." && pwd)
ref=$src/tests/reference
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
need_python h5py numpy

user_net hetero "FOR_NETCONS network" 50 # $tmp/seq: every spike in NEURON's step
# every cell's soma voltage, wsum, wfirst and nfirst every 0.5 ms: the report stores float32,
# so each value against NEURON's rounded to float32, within one float32 ulp
nrn_python - "$tmp/seq/traces.h5" "$ref/net_hetero.v" <<'PY' && ok || bad "FOR_NETCONS network: voltages or weights differ from NEURON's"
import sys
from compare_trace import report_against
ours, _, ok = report_against("net_hetero", *sys.argv[1:3], 6, [("v", "mV"), ("wsum", "uS"),
                             ("wfirst", "uS"), ("nfirst", "")], 200, ulp=1)
last = ours[-1]
print("net_hetero: final wsum %s uS, wfirst %s uS, nfirst %s" % (
    " ".join("%.5g" % x for x in last[1::4]), " ".join("%.5g" % x for x in last[2::4]),
    " ".join("%g" % x for x in last[3::4])))
# the loops ran: every sum above the budget (the event's raise), each first weight below it,
# and the first connection's own event count (its per-connection state) read through the loop
ok = ok and (last[1::4] > 0.05).all() and (last[2::4] < 0.05).all() and (last[3::4] >= 5).all()
sys.exit(0 if ok else 1)
PY
# FOR_NETCONS on self-events (tests/nmodl/hetero_self: the loop in NET_RECEIVE's flag-1 branch
# only, each connection's event sending one): every synapse's three connections, their weights'
# sum and the first one's, as the connection's events see them
expect_status 0 "build HeteroSyn with self-events" -- "$bin" build-catalogue "$src/tests/nmodl/hetero_self" -o "$tmp/hetero_self.so"
sed -e 's/"hetero.so"/"hetero_self.so"/' "$tmp/hetero.json" > "$tmp/hetero_self.json"
expect_status 0 "FOR_NETCONS on self-events" -- "$bin" run "$tmp/hetero_self.json" -o "$tmp/self" --quiet
/usr/bin/python3 - "$tmp/self/traces.h5" <<'PY' && ok || bad "FOR_NETCONS on self-events: not every connection seen"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    last = np.array(f["report/default/data"])[-1]
print("net_hetero self-events: final nfirst %s, wsum %s uS, wfirst %s uS" % (
    " ".join("%g" % x for x in last[3::4]), " ".join("%.5g" % x for x in last[1::4]),
    " ".join("%.5g" % x for x in last[2::4])))
sys.exit(0 if ((last[3::4] == 3).all() and (np.abs(last[1::4] - 0.06) < 1e-6).all()
               and (np.abs(last[2::4] - 0.02) < 1e-6).all()) else 1)
PY
net_threads hetero "FOR_NETCONS network" seq_same
# a checkpoint at 50 ms (the weight vectors FOR_NETCONS rescaled, the synapses' fields, the
# events waiting), restarted: the run through, bit for bit
net_checkpoints hetero "FOR_NETCONS network" seq_same 50
cp -r "$tmp/ck" "$tmp/rs"
awk '/^#/ || $2 < 50' "$tmp/ck/spikes.dat" > "$tmp/rs/spikes.dat"
expect_status 0 "FOR_NETCONS network, restarted at 50 ms" -- "$bin" run "$tmp/hetero.json" -o "$tmp/rs" --quiet --restart "$tmp/rs"
cmp -s "$tmp/seq/spikes.dat" "$tmp/rs/spikes.dat" && ok || bad "restarted: spikes differ from the run through"
net_ranks hetero "FOR_NETCONS network" seq_same 2

echo "cli_net_hetero: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
