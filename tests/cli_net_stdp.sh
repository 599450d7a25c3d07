#!/usr/bin/env bash
# An STDP synapse from a .mod file (tests/nmodl/stdp/STDPSyn.mod, a user catalogue built by
# build-catalogue) in a network whose cells' own spikes reach it as events (docs/mechanisms.md,
# section 10): against NEURON 8.2 running the same file (tests/neuron/stdp_reference.py) every
# spike in NEURON's step, the soma voltages and the plastic weights (syn[1].wsyn) close to
# NEURON's, the weights both potentiated (to wmax) and depressed (to 0); the same spikes and
# traces bit for bit on 2 threads, where this build has MPI on 2 ranks, and where it has a CUDA
# device on the GPU (STDPSyn's NET_RECEIVE a kernel of its catalogue's, build-catalogue --cuda).
# Usage: cli_net_stdp.sh HINESBATCH
set -u
bin=$1
src=$(cd "$(dirname "$0")/.." && pwd)
ref=$src/tests/reference
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
need_python h5py numpy

user_net stdp "STDP network" 40 # $tmp/seq: every spike in NEURON's step
# every cell's soma voltage and wsyn every 0.5 ms (columns v0 w0 v1 w1 ...): the report stores
# float32, so each value against NEURON's rounded to float32, within one float32 ulp
nrn_python - "$tmp/seq/traces.h5" "$ref/net_stdp.v" <<'PY' && ok || bad "STDP network: voltages or weights differ from NEURON's"
import sys, numpy as np
from compare_trace import report_against
ours, _, ok = report_against("net_stdp", *sys.argv[1:3], 6, [("v", "mV"), ("wsyn", "uS")], 220, ulp=1)
w = ours[-1, 1::2]
print("net_stdp: final wsyn %s uS" % " ".join("%.5g" % x for x in w))
ok = ok and w.max() == np.float32(0.012) and w.min() == 0.0 and 0 < w[1] < 0.006  # wmax, 0, between
sys.exit(0 if ok else 1)
PY
net_threads stdp "STDP network" seq_same
expect_status 0 "version" -- "$bin" --version
if grep -q "backends: [a-z, ]*cuda" "$tmp/out"; then # a user's point process on the GPU
    expect_status 0 "build STDPSyn --cuda" -- "$bin" build-catalogue "$src/tests/nmodl/stdp" --cuda -o "$tmp/stdp_gpu.so"
    sed -e 's/"backend": "seq"/"backend": "cuda"/' -e 's/"stdp.so"/"stdp_gpu.so"/' "$tmp/stdp.json" > "$tmp/stdp_gpu.json"
    expect_status 0 "STDP network on CUDA" -- "$bin" run "$tmp/stdp_gpu.json" -o "$tmp/gpu" --quiet
    seq_same "$tmp/gpu" "STDP network on the GPU"
fi
net_ranks stdp "STDP network" seq_same 2
# a point process's variable it does not have, refused with the nearest name
sed -e 's/"syn\[1\].wsyn"/"syn[1].wsyn_"/' "$tmp/stdp.json" > "$tmp/bad.json"
expect_status 1 "recording an unknown variable" -- "$bin" run "$tmp/bad.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'a synapse has no "wsyn_" (did you mean "wsyn"?)' "unknown variable"

echo "cli_net_stdp: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
