#!/usr/bin/env bash
# Checkpoints forged with their checksums recomputed (tests/ckpt_forge.py) are refused by their
# values, as a file's would be (issue 56, defect 8): non-finite, negative or future spike times,
# gids the network does not have (2^32 - 1, 2^40), spikes out of (time, gid) order, a NaN
# event weight, a source's next spike before 0, more spikes taken than a detector recorded, a
# NaN voltage, a negative count in the CLI's record; a catalogue mechanism's state, parameter,
# ion concentration, name, count, or a version 1 header on catalogue state; a point process
# network's weight vector (NaN, another target), an event's vector, a mechanism's catalogue
# identity, a RANDOM stream's id, or a version 2 header on it; a forged count of release sites
# (finite, loaded) stops the run at the next event's FROM loop; a checkpoint path that is a
# directory is named as one. An unforged copy still restarts, a catalogue run and a point
# process network restarted are the runs through, and version 1 and 2 checkpoints (converted)
# still restart. Usage: cli_checkpoint_forged.sh HINESBATCH DATA
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
examples=$(cd "$here/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib_cli.sh"
py=$(command -v python3) || { echo "no python3: skipped"; exit 77; }

net=$examples/ring_network.json
expect_status 0 "network with a checkpoint" -- "$bin" run "$net" -o "$tmp/n" --quiet --t-stop 150 --checkpoint-every 100
cells=$examples/ball_and_stick.json
expect_status 0 "cells with a checkpoint" -- "$bin" run "$cells" -o "$tmp/c" --quiet --traces csv --checkpoint-every 45

# forged MODEL DIR CASE PATTERN: a copy of DIR with CASE forged is refused naming the value
forged() {
    local model=$1 dir=$2 case=$3 pattern=$4 copy=$tmp/$3
    rm -rf "$copy"
    cp -r "$dir" "$copy"
    "$py" "$here/ckpt_forge.py" "$dir/checkpoint.0.bin" "$copy/checkpoint.0.bin" "$case"
    local rc=$?
    if [ $rc -ne 0 ]; then bad "$case: could not forge (exit $rc)"; return; fi
    cmp -s "$dir/spikes.dat" "$copy/spikes.dat" || bad "$case: the copy differs before the restart"
    expect_status 1 "$case" -- timeout 60 "$bin" run "$model" -o "$copy" --quiet --restart "$copy" \
        --t-stop "${t_stop:-150}" --traces "${traces:-none}"
    expect_grep "$tmp/err" "checkpoint.0.bin: .*$pattern" "$case: message"
    # refused before anything ran: the outputs are as they were
    cmp -s "$dir/spikes.dat" "$copy/spikes.dat" && ok || bad "$case: spikes.dat changed"
}
forged "$net" "$tmp/n" spike-nan "spike 0: gid 64 at nan ms; expected a gid below 68 at a finite time"
forged "$net" "$tmp/n" spike-inf "at inf ms; expected"
forged "$net" "$tmp/n" spike-negative "at -1 ms; expected"
forged "$net" "$tmp/n" spike-future "at 1e+09 ms; expected .* \[0, 100\] ms"
forged "$net" "$tmp/n" spike-gid-max "gid 4294967295 at 1 ms; expected a gid below 68"
forged "$net" "$tmp/n" spike-gid-2e40 "gid 1099511627776 at 1 ms; expected a gid below 68"
forged "$net" "$tmp/n" spike-order "expected the spikes in (time, gid) order"
forged "$net" "$tmp/n" event-nan "weight nan uS; expected finite numbers"
forged "$net" "$tmp/n" source-next-negative "source gid 64: .* the next at -5 ms"
forged "$net" "$tmp/n" seen-too-many "cell 0: 1073741824 of its spikes taken; its detector recorded"
forged "$net" "$tmp/n" voltage-nan "cell 0's voltage at node 0 is not a finite number"
t_stop=100 traces=csv forged "$cells" "$tmp/c" voltage-nan "cell 0's voltage at node 0 is not a finite number"
t_stop=100 traces=csv forged "$cells" "$tmp/c" cells-count-negative "corrupt: its run record holds a negative count"

# catalogue mechanisms (format version 2): the bbp channels with CaDynamics_E2 writing cai
cat > "$tmp/cat.json" <<'EOF'
{"t_stop": 50, "dt": 0.025, "celsius": 34, "sample_dt": 0.1,
 "cells": [{"name": "bs", "count": 2, "sections": [
   {"name": "soma", "parent": null, "length": 12.6157, "diam": 12.6157, "type": "soma"},
   {"name": "dend", "parent": "soma", "parent_x": 1, "length": 200, "diam": 1, "type": "dend"}],
  "Ra": 100, "regions": [{"region": "dend", "nseg": 5}],
  "mechanisms": [{"name": "pas", "g": 1e-4, "e": -65},
   {"name": "NaTs2_t", "region": "soma", "gNaTs2_tbar": 0.9},
   {"name": "K_Pst", "region": "soma", "gK_Pstbar": 0.1},
   {"name": "SKv3_1", "region": "soma", "gSKv3_1bar": 0.5},
   {"name": "bbp::Ca_HVA", "region": "soma", "gCa_HVAbar": 0.001},
   {"name": "SK_E2", "region": "soma", "gSK_E2bar": 0.005},
   {"name": "CaDynamics_E2", "region": "soma", "gamma": 0.5},
   {"name": "bbp::Ih", "region": "dend", "gIhbar": 2e-4}],
  "ions": [{"region": "soma", "ek": -85}],
  "stimuli": [{"type": "iclamp", "at": "soma", "del": 2, "dur": 2, "amp": 0.4},
   {"type": "iclamp", "at": "soma", "del": 42, "dur": 2, "amp": 1}],
  "probes": [{"name": "soma", "at": "soma", "spike_threshold": 0}]}]}
EOF
kat=$tmp/cat.json
expect_status 0 "catalogue cells" -- "$bin" run "$kat" -o "$tmp/ka" --quiet --traces csv
expect_status 0 "catalogue cells with a checkpoint" -- "$bin" run "$kat" -o "$tmp/k" --quiet --traces csv --checkpoint-every 20
cp -r "$tmp/k" "$tmp/k2"
expect_status 0 "catalogue cells restarted" -- "$bin" run "$kat" -o "$tmp/k2" --quiet --traces csv --restart "$tmp/k2"
for f in traces.csv spikes.csv; do
    cmp -s "$tmp/ka/$f" "$tmp/k2/$f" && ok || bad "catalogue restart: $f differs from the run through"
done
[ "$(grep -c soma "$tmp/ka/spikes.csv")" -ge 4 ] && ok || bad "catalogue cells: expected 2 spikes a cell"
t_stop=50 traces=csv forged "$kat" "$tmp/k" cat-state-nan "cell 0's CaDynamics_E2.cai (a state) of instance 0 is nan"
t_stop=50 traces=csv forged "$kat" "$tmp/k" cat-param-inf "cell 0's CaDynamics_E2.gamma (a parameter) of instance 0 is inf; expected a finite value"
t_stop=50 traces=csv forged "$kat" "$tmp/k" cat-ion-nan "cell 0's ca inner concentration at node 0 is not a finite number"
t_stop=50 traces=csv forged "$kat" "$tmp/k" cat-name "catalogue mechanisms in the checkpoint: \[XaDynamics_E2, Ca_HVA, .*in this simulation: \[CaDynamics_E2, Ca_HVA,"
t_stop=50 traces=csv forged "$kat" "$tmp/k" cat-count "catalogue mechanisms: a count of 1099511627776; expected 0 to 4096"
t_stop=50 traces=csv forged "$kat" "$tmp/k" version-1 "format version 1, which holds no catalogue mechanisms' state; .*expected version 5"

# point processes (format version 3): ProbAMPANMDA_EMS with its RANDOM streams, connections'
# weight vectors and events naming them; restarted, the run through
pt=$here/reference/net_prob.json
expect_status 0 "point processes" -- "$bin" run "$pt" -o "$tmp/pa" --quiet --traces none --t-stop 120
expect_status 0 "point processes with a checkpoint" -- "$bin" run "$pt" -o "$tmp/p" --quiet --traces none --t-stop 120 --checkpoint-every 50
cp -r "$tmp/p" "$tmp/p2"
expect_status 0 "point processes restarted" -- "$bin" run "$pt" -o "$tmp/p2" --quiet --traces none --t-stop 120 --restart "$tmp/p2"
cmp -s "$tmp/pa/spikes.dat" "$tmp/p2/spikes.dat" && ok || bad "point processes restarted: spikes.dat differs from the run through"
t_stop=120 forged "$pt" "$tmp/p" pt-weight-nan "weight vector 0's value 1 is not a finite number"
t_stop=120 forged "$pt" "$tmp/p" pt-weight-target "weight vector 0 targets synapse 1073741824"
t_stop=120 forged "$pt" "$tmp/p" pt-event-vector "weight vector 1048576; expected -1 (none) or one of the connections"
t_stop=120 forged "$pt" "$tmp/p" pt-identity "ProbAMPANMDA_EMS is of another catalogue build"
t_stop=120 forged "$pt" "$tmp/p" pt-random-id "(a RANDOM stream id3) of instance 0 is 0.5"
t_stop=120 forged "$pt" "$tmp/p" pt-version-2 "format version 2, which holds no connections to catalogue point processes"
# a count of release sites near 2^31 is finite, so loaded; the next event's FROM loop of draws
# (minutes before) stops the run at once, naming the mechanism, its .mod line and the count
rm -rf "$tmp/pu"
cp -r "$tmp/p" "$tmp/pu"
"$py" "$here/ckpt_forge.py" "$tmp/p/checkpoint.0.bin" "$tmp/pu/checkpoint.0.bin" pt-unoccupied-huge ||
    bad "pt-unoccupied-huge: could not forge"
expect_status 1 "pt-unoccupied-huge" -- timeout 60 "$bin" run "$pt" -o "$tmp/pu" --quiet \
    --restart "$tmp/pu" --t-stop 120 --traces none
expect_grep "$tmp/err" "ProbAMPANMDA_EMS (mechanisms/bbp/ProbAMPANMDA_EMS.mod:230) at t = .* ms: a FROM loop of 2147483647 passes; expected at most 1000000" "pt-unoccupied-huge: message"

# a RANDOM's stream position far past 2^64 is finite, so loaded; the draw took it by a C cast,
# undefined there (fuzz_checkpoint under UBSan, 2026-11-29): now position 0's draw, the same on
# every backend, and the run goes on to t_stop with finite spikes
rm -rf "$tmp/pr"
cp -r "$tmp/p" "$tmp/pr"
"$py" "$here/ckpt_forge.py" "$tmp/p/checkpoint.0.bin" "$tmp/pr/checkpoint.0.bin" pt-random-position-huge ||
    bad "pt-random-position-huge: could not forge"
expect_status 0 "pt-random-position-huge" -- timeout 60 "$bin" run "$pt" -o "$tmp/pr" --quiet \
    --restart "$tmp/pr" --t-stop 120 --traces none
awk '/^#/ { next } NF != 2 || $2 + 0 != $2 || $2 > 120 { bad = 1 } { n++ }
     END { exit bad || n == 0 }' "$tmp/pr/spikes.dat" &&
    ok || bad "pt-random-position-huge: spikes.dat empty or not (gid t) rows up to 120 ms"

# format version 2 (catalogue mechanisms, no point processes) still restarts, the same bytes
cp -r "$tmp/k" "$tmp/k3"
"$py" "$here/ckpt_forge.py" "$tmp/k/checkpoint.0.bin" "$tmp/k3/checkpoint.0.bin" to-v2 || bad "to-v2"
expect_status 0 "a version 2 checkpoint" -- "$bin" run "$kat" -o "$tmp/k3" --quiet --traces csv --restart "$tmp/k3"
for f in traces.csv spikes.csv; do
    cmp -s "$tmp/ka/$f" "$tmp/k3/$f" && ok || bad "version 2 restart: $f differs from the run through"
done
cp -r "$tmp/n" "$tmp/n3"
"$py" "$here/ckpt_forge.py" "$tmp/n/checkpoint.0.bin" "$tmp/n3/checkpoint.0.bin" to-v2 || bad "to-v2 (network)"
expect_status 0 "a network's version 2 checkpoint" -- "$bin" run "$net" -o "$tmp/n3" --quiet --restart "$tmp/n3" --t-stop 150
cmp -s "$tmp/n/spikes.dat" "$tmp/n3/spikes.dat" && ok || bad "version 2 network restart: spikes.dat differs"
"$py" "$here/ckpt_forge.py" "$tmp/p/checkpoint.0.bin" "$tmp/p.v2" to-v2
[ $? -eq 2 ] && ok || bad "to-v2 wrote a version 2 checkpoint of point processes' connections"

# format version 1 (older builds, no catalogue mechanisms) still restarts, the same bytes
cp -r "$tmp/c" "$tmp/c1"
"$py" "$here/ckpt_forge.py" "$tmp/c/checkpoint.0.bin" "$tmp/c1/checkpoint.0.bin" to-v1 || bad "to-v1"
expect_status 0 "a version 1 checkpoint" -- "$bin" run "$cells" -o "$tmp/c1" --quiet --traces csv --restart "$tmp/c1"
for f in traces.csv spikes.csv; do
    cmp -s "$tmp/c/$f" "$tmp/c1/$f" && ok || bad "version 1 restart: $f differs"
done
cp -r "$tmp/n" "$tmp/n1"
"$py" "$here/ckpt_forge.py" "$tmp/n/checkpoint.0.bin" "$tmp/n1/checkpoint.0.bin" to-v1 || bad "to-v1 (network)"
expect_status 0 "a network's version 1 checkpoint" -- "$bin" run "$net" -o "$tmp/n1" --quiet --restart "$tmp/n1" --t-stop 150
cmp -s "$tmp/n/spikes.dat" "$tmp/n1/spikes.dat" && ok || bad "version 1 network restart: spikes.dat differs"

# format 4 holds the state in the model's order: the ring's 64 cells, 4 blocks of 16 lanes on
# the thread that wrote it, restart on 8 threads (8 blocks of 8) and on 3 to the same spikes;
# a version 3 checkpoint (the blocks' layout) restarts on the width that wrote it, and on
# another is refused saying so
for th in 8 3; do
    cp -r "$tmp/n" "$tmp/nt$th"
    expect_status 0 "network restarted on $th threads" -- "$bin" run "$net" -o "$tmp/nt$th" --quiet --restart "$tmp/nt$th" --t-stop 150 --backend omp --threads $th
    cmp -s "$tmp/n/spikes.dat" "$tmp/nt$th/spikes.dat" && ok || bad "restart on $th threads: spikes.dat differs"
done
cp -r "$tmp/p" "$tmp/pt3"
expect_status 0 "point processes restarted on 3 threads" -- "$bin" run "$pt" -o "$tmp/pt3" --quiet --traces none --t-stop 120 --restart "$tmp/pt3" --backend omp --threads 3
cmp -s "$tmp/pa/spikes.dat" "$tmp/pt3/spikes.dat" && ok || bad "point processes restarted on 3 threads: spikes.dat differs from the run through"
cp -r "$tmp/n" "$tmp/n3v"
"$py" "$here/ckpt_forge.py" "$tmp/n/checkpoint.0.bin" "$tmp/n3v/checkpoint.0.bin" to-v3 || bad "to-v3 (network)"
cp -r "$tmp/n3v" "$tmp/n3w"
expect_status 0 "a network's version 3 checkpoint" -- "$bin" run "$net" -o "$tmp/n3v" --quiet --restart "$tmp/n3v" --t-stop 150
cmp -s "$tmp/n/spikes.dat" "$tmp/n3v/spikes.dat" && ok || bad "version 3 network restart: spikes.dat differs"
expect_status 1 "a version 3 checkpoint on another block width" -- "$bin" run "$net" -o "$tmp/n3w" --quiet --restart "$tmp/n3w" --t-stop 150 --backend omp --threads 8
expect_grep "$tmp/err" "group 0 of the checkpoint is laid out differently (15 nodes, 16 lanes, 64 cells); here 15 nodes, 8 lanes, 64 cells: a checkpoint of format version 3 is laid out" "version 3 on another width: message"
cp -r "$tmp/p" "$tmp/p3"
"$py" "$here/ckpt_forge.py" "$tmp/p/checkpoint.0.bin" "$tmp/p3/checkpoint.0.bin" to-v3 || bad "to-v3 (point processes)"
expect_status 0 "point processes' version 3 checkpoint" -- "$bin" run "$pt" -o "$tmp/p3" --quiet --traces none --t-stop 120 --restart "$tmp/p3"
cmp -s "$tmp/pa/spikes.dat" "$tmp/p3/spikes.dat" && ok || bad "version 3 point processes restart: spikes.dat differs"
cp -r "$tmp/p" "$tmp/p4"
"$py" "$here/ckpt_forge.py" "$tmp/p/checkpoint.0.bin" "$tmp/p4/checkpoint.0.bin" to-v4 || bad "to-v4 (point processes)"
expect_status 0 "point processes' version 4 checkpoint" -- "$bin" run "$pt" -o "$tmp/p4" --quiet --traces none --t-stop 120 --restart "$tmp/p4"
cmp -s "$tmp/pa/spikes.dat" "$tmp/p4/spikes.dat" && ok || bad "version 4 point processes restart: spikes.dat differs"

# waiting self-events (format version 5): the PulseSyn/RetrigSyn/AhpWatch network at 72.5 ms
# (13 waiting); a version 4 form cannot hold them, nor is one read for this model
expect_status 0 "build selfev" -- "$bin" build-catalogue "$here/nmodl/selfev" -o "$tmp/selfev.so"
sev=$tmp/selfev.json
cp "$here/reference/net_selfev.json" "$sev"
expect_status 0 "self-events with a checkpoint" -- "$bin" run "$sev" -o "$tmp/s" --quiet --traces none --checkpoint-every 72.5
t_stop=120 forged "$sev" "$tmp/s" selfev-target "self-event 0 targets synapse 1073741824; expected 0..17"
t_stop=120 forged "$sev" "$tmp/s" selfev-time "self-event 0 at t = nan ms (step 2910); expected a finite time"
t_stop=120 forged "$sev" "$tmp/s" selfev-vector "self-event 0's weight vector is 1048576; expected -1 (its own weight) or 0..17"
t_stop=120 forged "$sev" "$tmp/s" selfev-movable "self-event 1 is a second movable event of synapse"
t_stop=120 forged "$sev" "$tmp/s" selfev-version-4 "format version 4, which holds no waiting self-events; this simulation has 3 point processes that send themselves events: expected version 5"
"$py" "$here/ckpt_forge.py" "$tmp/s/checkpoint.0.bin" "$tmp/s.v4" to-v4
[ $? -eq 2 ] && ok || bad "to-v4 wrote a version 4 checkpoint of waiting self-events"

# the unforged checkpoints restart
cp -r "$tmp/n" "$tmp/n2"
expect_status 0 "network restarted" -- "$bin" run "$net" -o "$tmp/n2" --quiet --restart "$tmp/n2" --t-stop 150
cmp -s "$tmp/n/spikes.dat" "$tmp/n2/spikes.dat" && ok || bad "the restart changed spikes.dat"

# a checkpoint path that is a directory is named as one, not "no HBRUN magic"
mkdir -p "$tmp/d/checkpoint.0.bin"
expect_status 1 "a directory as the checkpoint" -- "$bin" run "$net" -o "$tmp/d" --quiet --restart "$tmp/d"
expect_grep "$tmp/err" "checkpoint.0.bin: a directory; expected a checkpoint file" "directory checkpoint: message"

echo "cli_checkpoint_forged: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
