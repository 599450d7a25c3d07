#!/usr/bin/env bash
# Catalogue point processes in a network (docs/mechanisms.md, section 10): the ring network with
# its synapses as the generated ExpSyn and Exp2Syn ({"name": "ExpSyn"}) gives the spikes and
# recorded voltages of the hard-coded ones ({"type": "expsyn"}) bit for bit, on 1 and 2 threads
# and, where this build has MPI, 2 ranks, and on a CUDA device (the GPU engine's NET_RECEIVE);
# bad entries are refused by name.
# Usage: cli_net_point.sh HINESBATCH DATA
set -u
bin=$1
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
need_python h5py numpy

# net.json with SYN0, SYN1 the two synapse entries, BACKEND the backend
write_net() { # FILE SYN0 SYN1 BACKEND
    cat > "$1" <<JSON
{
  "t_stop": 100, "dt": 0.025, "backend": "$4",
  "cells": [{
      "name": "ball_and_stick", "count": 24,
      "sections": [
        {"name": "soma", "parent": null, "length": 12.6157, "diam": 12.6157, "type": "soma"},
        {"name": "dend", "parent": "soma", "parent_x": 1, "length": 200, "diam": 1, "type": "dend"}
      ],
      "Ra": 100,
      "regions": [{"region": "soma", "nseg": 1}, {"region": "dend", "nseg": 11}],
      "mechanisms": [{"name": "hh", "region": "soma"}, {"name": "pas", "region": "dend", "g": 0.001, "e": -65}],
      "synapses": [$2, $3],
      "probes": [{"name": "soma", "at": "soma", "spike_threshold": -10}]
  }],
  "network": {
    "sources": [{"name": "kick", "count": 2, "start": 1, "interval": 30, "number": 3}],
    "ring": [{"first": 0, "count": 12, "synapse": 0, "weight": 0.05, "delay": 4},
             {"first": 12, "count": 12, "synapse": 0, "weight": 0.05, "delay": 4}],
    "connections": [{"source": 24, "target": 0, "synapse": 0, "weight": 0.05, "delay": 1},
                    {"source": 25, "target": 12, "synapse": 0, "weight": 0.05, "delay": 1}],
    "random": [{"targets": [0, 24], "sources": [0, 24], "in_degree": 6, "synapse": 1,
                "weight": 0.003, "delay": [2, 9], "seed": 7}]
  },
  "record": {"gids": [0, 5, 13], "locations": ["soma", {"section": 1, "x": 0.5}],
             "variables": ["v"], "sample_dt": 0.1}
}
JSON
}
hand0='{"type": "expsyn", "at": {"section": "dend", "x": 0.5}, "tau": 2, "e": 0}'
hand1='{"type": "exp2syn", "at": "soma", "tau1": 0.5, "tau2": 3, "e": -80}'
gen0='{"name": "ExpSyn", "at": {"section": "dend", "x": 0.5}, "tau": 2, "e": 0}'
gen1='{"name": "default::Exp2Syn", "at": "soma", "tau1": 0.5, "tau2": 3, "e": -80}'
write_net "$tmp/hand.json" "$hand0" "$hand1" seq
write_net "$tmp/gen.json" "$gen0" "$gen1" seq
write_net "$tmp/gen_omp.json" "$gen0" "$gen1" omp
write_net "$tmp/mixed.json" "$gen0" "$hand1" seq

same() { # DIR_A DIR_B WHAT: spikes and traces bit for bit
    cmp -s "$1/spikes.dat" "$2/spikes.dat" && ok || bad "$3: spikes differ"
    if [ -e "$1/traces.csv" ]; then
        cmp -s "$1/traces.csv" "$2/traces.csv" && ok || bad "$3: traces differ"
    elif [ -e "$1/traces.h5" ]; then
        /usr/bin/python3 - "$1/traces.h5" "$2/traces.h5" <<'PY' && ok || bad "$3: traces differ"
import sys, h5py, numpy as np
def data(path):
    out = []
    with h5py.File(path, "r") as f:
        f.visit(lambda n: out.append((n, np.array(f[n]).tolist())) if isinstance(f[n], h5py.Dataset) else None)
    return out
a, b = data(sys.argv[1]), data(sys.argv[2])
sys.exit(0 if a == b and any(n.endswith("/data") for n, _ in a) else 1)
PY
    else
        bad "$3: no traces written"
    fi
}
expect_status 0 "hard-coded synapses" -- "$bin" run "$tmp/hand.json" -o "$tmp/hand" --quiet
n=$(($(wc -l < "$tmp/hand/spikes.dat") - 1))
[ "$n" -ge 40 ] && ok || bad "the ring fired $n spikes, expected at least 40 (a network that talks)"
expect_status 0 "generated synapses" -- "$bin" run "$tmp/gen.json" -o "$tmp/gen" --quiet
same "$tmp/hand" "$tmp/gen" "generated ExpSyn and Exp2Syn against the hard-coded"
expect_status 0 "generated and hard-coded together" -- "$bin" run "$tmp/mixed.json" -o "$tmp/mixed" --quiet
same "$tmp/hand" "$tmp/mixed" "generated ExpSyn beside a hard-coded Exp2Syn"
expect_status 0 "generated synapses, 2 threads" -- env OMP_NUM_THREADS=2 "$bin" run "$tmp/gen_omp.json" -o "$tmp/omp" --quiet
same "$tmp/hand" "$tmp/omp" "generated synapses on 2 threads"

if have_mpi; then
    expect_status 0 "generated synapses, 2 ranks" -- mpi_ranks 2 "$bin" run "$tmp/gen.json" -o "$tmp/mpi2" --quiet
    same "$tmp/hand" "$tmp/mpi2" "generated synapses on 2 ranks"
fi

# Crank-Nicolson: the generated synapses are the hard-coded ones' bits there too
sed -e 's/"dt": 0.025,/"dt": 0.025, "method": "cn",/' "$tmp/hand.json" > "$tmp/hand_cn.json"
sed -e 's/"dt": 0.025,/"dt": 0.025, "method": "cn",/' "$tmp/gen.json" > "$tmp/gen_cn.json"
expect_status 0 "hard-coded synapses, CN" -- "$bin" run "$tmp/hand_cn.json" -o "$tmp/hand_cn" --quiet
expect_status 0 "generated synapses, CN" -- "$bin" run "$tmp/gen_cn.json" -o "$tmp/gen_cn" --quiet
same "$tmp/hand_cn" "$tmp/gen_cn" "generated synapses under Crank-Nicolson"
cmp -s "$tmp/hand/spikes.dat" "$tmp/hand_cn/spikes.dat" && bad "CN gave backward Euler's spikes" || ok
# checkpoints (format 3): restarted at 40 and 80 ms of 100, the run through bit for bit
expect_status 0 "generated synapses, checkpoints" -- "$bin" run "$tmp/gen.json" -o "$tmp/ck" --quiet --checkpoint-every 40
same "$tmp/hand" "$tmp/ck" "generated synapses with checkpoints"
cp -r "$tmp/ck" "$tmp/rs"
head -n 3 "$tmp/ck/spikes.dat" > "$tmp/rs/spikes.dat"
expect_status 0 "generated synapses, restarted" -- "$bin" run "$tmp/gen.json" -o "$tmp/rs" --quiet --restart "$tmp/rs"
cmp -s "$tmp/hand/spikes.dat" "$tmp/rs/spikes.dat" && ok || bad "restarted: spikes differ from the run through"
# a checkpoint of the hard-coded synapses is not one of the generated ones
expect_status 0 "hard-coded synapses, checkpoints" -- "$bin" run "$tmp/hand.json" -o "$tmp/hck" --quiet --checkpoint-every 40
cp "$tmp/hck/checkpoint.0.bin" "$tmp/rs/checkpoint.0.bin"
expect_status 1 "a hard-coded run's checkpoint" -- "$bin" run "$tmp/gen.json" -o "$tmp/rs" --quiet --restart "$tmp/rs"
expect_grep "$tmp/err" "another model file" "another run's checkpoint refused"

# recording the generated synapses' variables: ExpSyn's g (a STATE) and Exp2Syn's A and B are
# the hard-coded synapses' bit for bit; Exp2Syn's g (an ASSIGNED, B - A at the step's current,
# as NEURON records it) within a step's decay of theirs
vars='"variables": ["v", "syn[0].g", "syn[1].A", "syn[1].B", "syn[1].g"]'
sed -e "s/\"variables\": \[\"v\"\]/$vars/" "$tmp/gen.json" > "$tmp/rec.json"
sed -e "s/\"variables\": \[\"v\"\]/$vars/" "$tmp/hand.json" > "$tmp/rec_hand.json"
expect_status 0 "recording the generated synapses" -- "$bin" run "$tmp/rec.json" -o "$tmp/rec" --quiet --traces csv
expect_status 0 "recording the hard-coded synapses" -- "$bin" run "$tmp/rec_hand.json" -o "$tmp/rec_hand" --quiet --traces csv
/usr/bin/python3 - "$tmp/rec/traces.csv" "$tmp/rec_hand/traces.csv" <<'PY' && ok || bad "recorded synapse variables differ from the hard-coded synapses'"
import csv, sys
def load(path):  # gid,name,t_ms,value: (gid, name) -> the values' text, in time order
    out = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            out.setdefault((row["gid"], row["name"]), []).append(row[list(row)[-1]])
    return out
a, b = load(sys.argv[1]), load(sys.argv[2])
assert a.keys() == b.keys(), (sorted(a), sorted(b))
exact = [k for k in a if k[1].endswith(("syn[0].g", "syn[1].A", "syn[1].B"))]
loose = [k for k in a if k[1].endswith("syn[1].g")]
same = all(a[k] == b[k] for k in exact)
top = max(abs(float(x)) for k in exact for x in b[k])
gtop = max(abs(float(x)) for k in loose for x in b[k])
dg = max(abs(float(x) - float(y)) for k in loose for x, y in zip(a[k], b[k]))
n = sum(len(a[k]) for k in exact)
print("%d series; syn[0].g, syn[1].A, syn[1].B: %d values, the same text: %s (up to %.3g uS); "
      "syn[1].g within %.3g of %.3g uS" % (len(a), n, same, top, dg, gtop))
sys.exit(0 if len(exact) == 9 and n > 9000 and same and top > 1e-4 and gtop > 1e-4 and
         0 < dg < 0.05 * gtop else 1)
PY
sed -e 's/"variables": \["v"\]/"variables": ["v", "syn[0].gg"]/' "$tmp/gen.json" > "$tmp/bad_rec.json"
expect_status 1 "recording a name the point process lacks" -- "$bin" run "$tmp/bad_rec.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'a synapse has no "gg"' "an unknown synapse variable refused"
sed -e 's/"variables": \["v"\]/"variables": ["v", "syn[1].tau"]/' "$tmp/gen.json" > "$tmp/bad_rec2.json"
expect_status 1 "recording another point process's name" -- "$bin" run "$tmp/bad_rec2.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'synapse 1 is the catalogue point process Exp2Syn, which has no "tau" (did you mean "tau1"?)' "a name of ExpSyn on the Exp2Syn refused with its nearest"

# refused: a density mechanism as a synapse, an unknown parameter, "type" with "name", CUDA
write_net "$tmp/bad1.json" '{"name": "hh", "at": "soma"}' "$hand1" seq
expect_status 1 "a density mechanism as a synapse" -- "$bin" run "$tmp/bad1.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'synapses\[0\].name: hh is a density mechanism (SUFFIX; in a cell.s "mechanisms"); expected a point process here' "density refused"
write_net "$tmp/bad2.json" '{"name": "ExpSyn", "at": "soma", "taux": 2}' "$hand1" seq
expect_status 1 "an unknown parameter" -- "$bin" run "$tmp/bad2.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'ExpSyn has no parameter "taux"; did you mean "tau"?' "unknown parameter"
write_net "$tmp/bad3.json" '{"name": "ExpSyn", "type": "expsyn", "at": "soma"}' "$hand1" seq
expect_status 1 "type and name" -- "$bin" run "$tmp/bad3.json" -o "$tmp/bad" --quiet
expect_grep "$tmp/err" 'not with "name"' "type with name"
if "$bin" --version | grep -q "backends: [a-z, ]*cuda"; then
    write_net "$tmp/cuda.json" "$gen0" "$gen1" cuda
    expect_status 0 "point processes on CUDA" -- "$bin" run "$tmp/cuda.json" -o "$tmp/cuda" --quiet
    same "$tmp/hand" "$tmp/cuda" "generated synapses on the GPU"
fi

echo "cli_net_point: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
