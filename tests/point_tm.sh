#!/usr/bin/env bash
# A user's point process with per-connection state: tests/nmodl/tm/TMSyn.mod (a facilitating
# and depressing synapse) built by build-catalogue, then test_sim_cat --tm: two connections,
# each its own resources in its weight vector, against NEURON 8.2 (tests/neuron/tm_reference.py).
# Usage: point_tm.sh HINESBATCH TEST_SIM_CAT
set -u
bin=$1 test=$2
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

expect_status 0 "build TMSyn" -- "$bin" build-catalogue "$src/tests/nmodl/tm" -o "$tmp/tm.so"
expect_status 0 "TMSyn against NEURON" -- "$test" --tm "$tmp/tm.so" "$src/tests/reference/tm_neuron.txt"
cat "$tmp/out"
# the same point process named in a model file through its "catalogues" key (relative to the
# file), plain and qualified, with a parameter; an unknown key refused with the nearest name
model() { # FILE SYNAPSE-ENTRY
    printf '{"catalogues": ["tm.so"], "t_stop": 1, "cells": [{"cable": {"length": 20, "diam": 20,
 "type": 1}, "synapses": [%s]}]}\n' "$2" > "$tmp/$1"
}
model plain.json '{"name": "TMSyn", "at": "soma"}'
model qualified.json '{"name": "tm::TMSyn", "at": "soma", "U": 0.5}'
model typo.json '{"name": "TMSyn", "at": "soma", "tau_recc": 50}'
expect_status 0 "a model file's TMSyn" -- "$bin" run "$tmp/plain.json" -o "$tmp/o1" --quiet
expect_status 0 "a model file's tm::TMSyn with U" -- "$bin" run "$tmp/qualified.json" -o "$tmp/o2" --quiet
expect_status 1 "a model file's TMSyn with an unknown key" -- "$bin" run "$tmp/typo.json" -o "$tmp/o3" --quiet
expect_grep "$tmp/err" "tau_rec" "the unknown key's nearest name"
# a checkpoint holds its mechanisms' catalogue identity: the catalogue rebuilt from a changed
# TMSyn.mod (another decay, the same fields) at the same path is refused on restart, the
# unchanged one restarts
printf '{"catalogues": ["tm.so"], "t_stop": 10, "cells": [{"cable": {"length": 20, "diam": 20,
 "type": 1}, "synapses": [{"name": "TMSyn", "at": "soma"}]}]}\n' > "$tmp/ck.json"
expect_status 0 "TMSyn with checkpoints" -- "$bin" run "$tmp/ck.json" -o "$tmp/ck" --quiet --checkpoint-every 4
cp -r "$tmp/ck" "$tmp/ck2"
expect_status 0 "TMSyn restarted" -- "$bin" run "$tmp/ck.json" -o "$tmp/ck2" --quiet --restart "$tmp/ck2"
mkdir -p "$tmp/changed/tm"
sed -e "s|g' = -g/tau_1|g' = -2*g/tau_1|" "$src/tests/nmodl/tm/TMSyn.mod" > "$tmp/changed/tm/TMSyn.mod"
cmp -s "$src/tests/nmodl/tm/TMSyn.mod" "$tmp/changed/tm/TMSyn.mod" && bad "TMSyn.mod not changed" || ok
expect_status 0 "build the changed TMSyn" -- "$bin" build-catalogue "$tmp/changed/tm" -o "$tmp/tm.so"
expect_status 1 "a checkpoint of another build of the catalogue" -- "$bin" run "$tmp/ck.json" -o "$tmp/ck" --quiet --restart "$tmp/ck"
expect_grep "$tmp/err" "TMSyn is of another catalogue build in the checkpoint" "another catalogue build refused"
# TMSyn's per-connection state and the cells' state across thread counts: a ring of 16 hh cells
# through TMSyn, kicked by NetStims (one thread: a block of 16 lanes; 2: two of 8; 3: four of
# 4); a checkpoint at 40 of 80 ms restarts on another count to the run through's spikes
expect_status 0 "rebuild TMSyn" -- "$bin" build-catalogue "$src/tests/nmodl/tm" -o "$tmp/tm.so"
cat > "$tmp/net.json" <<'EOF2'
{"catalogues": ["tm.so"], "t_stop": 80, "dt": 0.025, "backend": "seq",
 "cells": [{"name": "c", "count": 16, "cable": {"length": 20, "diam": 20, "type": 1},
  "mechanisms": [{"name": "hh"}],
  "synapses": [{"name": "TMSyn", "at": "soma", "e": 0, "tau_1": 3, "U": 0.3}],
  "probes": [{"name": "soma", "at": "soma", "spike_threshold": -10}]}],
 "network": {"sources": [{"name": "kick", "count": 4, "start": 1, "interval": 5, "number": 40,
   "noise": 0.5, "seed": 3}],
  "ring": [{"first": 0, "count": 16, "synapse": 0, "weight": 0.05, "delay": 2}],
  "connections": [{"source": 16, "target": 0, "synapse": 0, "weight": 0.05, "delay": 1},
   {"source": 17, "target": 4, "synapse": 0, "weight": 0.05, "delay": 1},
   {"source": 18, "target": 8, "synapse": 0, "weight": 0.05, "delay": 1},
   {"source": 19, "target": 12, "synapse": 0, "weight": 0.05, "delay": 1}]}}
EOF2
expect_status 0 "TMSyn ring" -- "$bin" run "$tmp/net.json" -o "$tmp/ra" --quiet
n=$(awk '!/^#/ && $1 < 16' "$tmp/ra/spikes.dat" | wc -l)
[ "$n" -ge 32 ] && ok || bad "TMSyn ring: $n cell spikes, expected at least 32"
expect_status 0 "TMSyn ring, checkpoint on one thread" -- "$bin" run "$tmp/net.json" -o "$tmp/r1" --quiet --checkpoint-every 40
expect_status 0 "TMSyn ring, restarted on 3 threads" -- "$bin" run "$tmp/net.json" -o "$tmp/r1" --quiet --restart "$tmp/r1" --backend omp --threads 3
cmp -s "$tmp/ra/spikes.dat" "$tmp/r1/spikes.dat" && ok || bad "TMSyn ring 1 -> 3 threads: spikes differ"
expect_status 0 "TMSyn ring, checkpoint on 2 threads" -- "$bin" run "$tmp/net.json" -o "$tmp/r2" --quiet --checkpoint-every 40 --backend omp --threads 2
expect_status 0 "TMSyn ring, restarted on one thread" -- "$bin" run "$tmp/net.json" -o "$tmp/r2" --quiet --restart "$tmp/r2"
cmp -s "$tmp/ra/spikes.dat" "$tmp/r2/spikes.dat" && ok || bad "TMSyn ring 2 -> 1 threads: spikes differ"
# ... and across rank counts (docs/checkpoint.md, "Ranks"): each new rank takes its cells'
# connections' weight vectors (TMSyn's y, z, u and tsyn per connection) from the old ranks'
# files; 1 -> 2, 2 -> 1 and 2 -> 3 ranks restart to the run through's spikes (with the vectors
# left as INITIAL sets them, the resources restart recovered and the spikes differ)
if have_mpi; then
    expect_status 0 "TMSyn ring, checkpoint on one rank" -- "$bin" run "$tmp/net.json" -o "$tmp/k1" --quiet --checkpoint-every 40
    expect_status 0 "TMSyn ring, checkpoint on 2 ranks" -- mpi_ranks 2 "$bin" run "$tmp/net.json" -o "$tmp/k2" --quiet --checkpoint-every 40
    cmp -s "$tmp/ra/spikes.dat" "$tmp/k2/spikes.dat" && ok || bad "TMSyn ring on 2 ranks: spikes differ"
    restart_ranks() { # WHAT FROM NP: FROM's checkpoint restarted on NP ranks
        local dir=$tmp/k$RANDOM
        cp -r "$2" "$dir"
        expect_status 0 "$1" -- mpi_ranks "$3" "$bin" run "$tmp/net.json" -o "$dir" --quiet --restart "$dir"
        cmp -s "$tmp/ra/spikes.dat" "$dir/spikes.dat" && ok || bad "$1: spikes differ"
    }
    restart_ranks "TMSyn ring, 1 rank -> 2" "$tmp/k1" 2
    restart_ranks "TMSyn ring, 2 ranks -> 1" "$tmp/k2" 1
    restart_ranks "TMSyn ring, 2 ranks -> 3" "$tmp/k2" 3
fi
echo "point_tm: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
