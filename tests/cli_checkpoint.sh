#!/usr/bin/env bash
# hinesbatch run --checkpoint-every and --restart (docs/checkpoint.md): a run restarted from a
# checkpoint writes the same bytes as one that ran through (a cell run: probes.csv and
# spikes.csv cut back to the checkpoint and continued; a network: spikes.dat, on 1 and 2
# ranks); a truncated, corrupt or foreign checkpoint is refused before anything runs, the
# outputs untouched. Usage: cli_checkpoint.sh HINESBATCH DATA_DIR
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

# same A B WHAT: the files are byte for byte the same
same() { if cmp -s "$1" "$2"; then ok; else bad "$3: $1 and $2 differ"; fi; }
# refused WHAT PATTERN -- command: exit 1, PATTERN in the message
refused() {
    local what=$1 pattern=$2
    shift 2
    expect_status 1 "$what" "$@"
    expect_grep "$tmp/err" "$pattern" "$what: message"
}

# ---- a cell run (checkpoints at 45 and 90 ms of 100)
cells=$examples/ball_and_stick.json
expect_status 0 "cell run" -- "$bin" run "$cells" --traces wide -o "$tmp/a" --quiet
expect_status 0 "cell run with checkpoints" -- "$bin" run "$cells" --traces wide -o "$tmp/b" --quiet --checkpoint-every 45
same "$tmp/a/probes.csv" "$tmp/b/probes.csv" "checkpoints change nothing"
[ -s "$tmp/b/checkpoint.0.bin" ] && ok || bad "no checkpoint.0.bin"
[ ! -e "$tmp/b/checkpoint.0.bin.tmp" ] && ok || bad "a temporary checkpoint was left"
cp -r "$tmp/b" "$tmp/c"
expect_status 0 "cell restart" -- "$bin" run "$cells" --traces wide -o "$tmp/c" --quiet --restart "$tmp/c/checkpoint.0.bin"
same "$tmp/a/probes.csv" "$tmp/c/probes.csv" "cell restart: probes.csv"
same "$tmp/a/spikes.csv" "$tmp/c/spikes.csv" "cell restart: spikes.csv"
same "$tmp/a/spikes.dat" "$tmp/c/spikes.dat" "cell restart: spikes.dat"
# the traces' format is the checkpointed run's
refused "another --traces" "a run with --traces wide; this one has --traces csv" -- \
    "$bin" run "$cells" -o "$tmp/c" --quiet --traces csv --restart "$tmp/b/checkpoint.0.bin"
expect_grep "$tmp/c/summary.json" '"samples": 1001' "cell restart: samples in the summary"
expect_grep "$tmp/c/summary.json" '"spikes": 18' "cell restart: spikes in the summary"
# outputs cut short after the checkpoint (a run killed then): continued all the same
cp -r "$tmp/b" "$tmp/d"
head -c 58000 "$tmp/b/probes.csv" > "$tmp/d/probes.csv"
expect_status 0 "cell restart after a cut" -- "$bin" run "$cells" --traces wide -o "$tmp/d" --quiet --restart "$tmp/d"
same "$tmp/a/probes.csv" "$tmp/d/probes.csv" "cell restart after a cut: probes.csv"
# outputs shorter than the checkpoint's, or missing: refused
head -c 1000 "$tmp/b/probes.csv" > "$tmp/d/probes.csv"
refused "outputs shorter than the checkpoint" "the checkpoint's run had written" -- \
    "$bin" run "$cells" --traces wide -o "$tmp/d" --quiet --restart "$tmp/b/checkpoint.0.bin"
refused "no outputs to continue" "probes.csv: cannot open to continue" -- \
    "$bin" run "$cells" --traces wide -o "$tmp/empty" --quiet --restart "$tmp/b/checkpoint.0.bin"

# ---- refused before anything runs: the outputs stay as they were
cp -r "$tmp/b" "$tmp/e"
ck=$tmp/b/checkpoint.0.bin
size=$(stat -c %s "$ck")
head -c $((size - 3)) "$ck" > "$tmp/cut.bin"
refused "truncated checkpoint" "truncated" -- "$bin" run "$cells" --traces wide -o "$tmp/e" --quiet --restart "$tmp/cut.bin"
head -c 100 "$ck" > "$tmp/cut2.bin"
refused "checkpoint cut in its run record" "truncated" -- "$bin" run "$cells" --traces wide -o "$tmp/e" --quiet --restart "$tmp/cut2.bin"
for at in 30 $((size / 2)) $((size - 20)); do
    cp "$ck" "$tmp/flip.bin"
    printf '\x5a' | dd of="$tmp/flip.bin" bs=1 seek="$at" conv=notrunc status=none
    refused "corrupt checkpoint (byte $at)" "corrupt" -- "$bin" run "$cells" --traces wide -o "$tmp/e" --quiet --restart "$tmp/flip.bin"
done
printf 'not a checkpoint\n' > "$tmp/junk.bin"
refused "not a checkpoint" "not a checkpoint" -- "$bin" run "$cells" --traces wide -o "$tmp/e" --quiet --restart "$tmp/junk.bin"
sed -e 's/"amp": 0.3/"amp": 0.31/' "$cells" > "$tmp/other.json"
refused "another model file" "another model file" -- "$bin" run "$tmp/other.json" --traces wide -o "$tmp/e" --quiet --restart "$ck"
same "$tmp/b/probes.csv" "$tmp/e/probes.csv" "refused restarts left probes.csv alone"
same "$tmp/b/spikes.csv" "$tmp/e/spikes.csv" "refused restarts left spikes.csv alone"
expect_status 2 "--checkpoint-every 0" -- "$bin" run "$cells" --traces wide -o "$tmp/e" --checkpoint-every 0
expect_status 2 "--checkpoint-every abc" -- "$bin" run "$cells" --traces wide -o "$tmp/e" --checkpoint-every abc
refused "--restart of nothing" "no-such" -- "$bin" run "$cells" --traces wide -o "$tmp/e" --restart "$tmp/no-such"

# ---- a network: the ring with noisy NetStims (random streams); checkpoints every 50 ms of 200
net=$tmp/ring.json
sed -e 's/"interval": 50, "number": 1}/"interval": 10, "number": 30, "noise": 0.8, "seed": 5}/' \
    "$examples/ring_network.json" > "$net"
grep -q '"noise": 0.8' "$net" && ok || bad "the test's network has no noisy sources"
expect_status 0 "network" -- "$bin" run "$net" -o "$tmp/na" --quiet
[ "$(wc -l < "$tmp/na/spikes.dat")" -gt 100 ] && ok || bad "the test network spikes too little"
expect_status 0 "network with checkpoints" -- "$bin" run "$net" -o "$tmp/nb" --quiet --checkpoint-every 50
same "$tmp/na/spikes.dat" "$tmp/nb/spikes.dat" "network checkpoints change nothing"
cp -r "$tmp/nb" "$tmp/nc"
head -n 3 "$tmp/nb/spikes.dat" > "$tmp/nc/spikes.dat" # spikes.dat is rewritten from the checkpoint
expect_status 0 "network restart" -- "$bin" run "$net" -o "$tmp/nc" --quiet --restart "$tmp/nc"
same "$tmp/na/spikes.dat" "$tmp/nc/spikes.dat" "network restart: spikes.dat"
refused "a cell run's checkpoint for a network" "another model file" -- \
    "$bin" run "$net" -o "$tmp/nd" --quiet --restart "$tmp/b/checkpoint.0.bin"
refused "a network's checkpoint for a cell run" "another model file" -- \
    "$bin" run "$cells" --traces wide -o "$tmp/b" --quiet --restart "$tmp/nb"

sed -e 's/"seed": 5}/"seed": 6}/' "$net" > "$tmp/other_net.json"
grep -q '"seed": 6' "$tmp/other_net.json" && ok || bad "the other network is the same"
if command -v mpirun > /dev/null && "$bin" --version 2>&1 | grep -q "communicators: serial, mpi"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
    expect_status 0 "2 ranks with checkpoints" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m2" --quiet --checkpoint-every 50
    same "$tmp/na/spikes.dat" "$tmp/m2/spikes.dat" "2 ranks: spikes.dat"
    [ -s "$tmp/m2/checkpoint.1.bin" ] && ok || bad "2 ranks: no checkpoint.1.bin"
    cp -r "$tmp/m2" "$tmp/m3"
    expect_status 0 "2 ranks restarted" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m3" --quiet --restart "$tmp/m3"
    same "$tmp/na/spikes.dat" "$tmp/m3/spikes.dat" "2 ranks restarted: spikes.dat"
    # another rank count (docs/checkpoint.md, "Ranks"): each rank gathers its cells from the
    # files of the ranks that wrote them; N ranks x T threads -> M x U, the run through's bits
    restart_on() { # WHAT FROM NP THREADS: FROM's checkpoint restarted on NP ranks of THREADS
        local what=$1 from=$2 np=$3 threads=$4 dir=$tmp/r$RANDOM
        cp -r "$from" "$dir"
        expect_status 0 "$what" -- mpirun -np "$np" "$bin" run "$net" -o "$dir" --quiet \
            --backend omp --threads "$threads" --restart "$dir"
        same "$tmp/na/spikes.dat" "$dir/spikes.dat" "$what: spikes.dat"
    }
    restart_on "2 ranks' checkpoint on 1 rank" "$tmp/m2" 1 1
    restart_on "1 rank's checkpoint on 2 ranks" "$tmp/nb" 2 1
    restart_on "2 ranks' checkpoint on 3 ranks of 2 threads" "$tmp/m2" 3 2
    expect_status 0 "3 ranks of 2 threads with checkpoints" -- mpirun -np 3 "$bin" run "$net" \
        -o "$tmp/m6" --quiet --backend omp --threads 2 --checkpoint-every 50
    same "$tmp/na/spikes.dat" "$tmp/m6/spikes.dat" "3 ranks: spikes.dat"
    restart_on "3 ranks' checkpoint on 2 ranks" "$tmp/m6" 2 1
    restart_on "3 ranks' checkpoint on 1 rank of 3 threads" "$tmp/m6" 1 3
    expect_status 0 "1 rank's file on 2 ranks" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m4" --quiet --restart "$tmp/nb/checkpoint.0.bin"
    same "$tmp/na/spikes.dat" "$tmp/m4/spikes.dat" "1 rank's file on 2 ranks: spikes.dat"
    refused "a file of 2 ranks' checkpoint" "a file of a run on 2 ranks; expected the directory" -- \
        "$bin" run "$net" -o "$tmp/m4" --quiet --restart "$tmp/m2/checkpoint.0.bin"
    # bad sets on another rank count: refused naming the file and what was expected
    cp -r "$tmp/m6" "$tmp/bad"
    rm "$tmp/bad/checkpoint.2.bin"
    refused "a missing rank's file" "checkpoint.2.bin: missing.*written on 3 ranks" -- \
        "$bin" run "$net" -o "$tmp/bad" --quiet --restart "$tmp/bad"
    cp "$tmp/m6/checkpoint.0.bin" "$tmp/bad/checkpoint.2.bin"
    refused "rank 0's file as rank 2's" "checkpoint.2.bin: the checkpoint of rank 0 of 3; expected rank 2 of 3" -- \
        "$bin" run "$net" -o "$tmp/bad" --quiet --restart "$tmp/bad"
    cp "$tmp/m2/checkpoint.1.bin" "$tmp/bad/checkpoint.2.bin"
    refused "a file of a checkpoint of 2 ranks among 3" "checkpoint.2.bin: written by a run on 2 ranks; expected 3" -- \
        "$bin" run "$net" -o "$tmp/bad" --quiet --restart "$tmp/bad"
    cp "$tmp/nb/checkpoint.0.bin" "$tmp/bad/checkpoint.1.bin"
    refused "a 1 rank file among 3" "checkpoint.1.bin: written by a run on 1 ranks; expected 3" -- \
        "$bin" run "$net" -o "$tmp/bad" --quiet --restart "$tmp/bad"
    refused "another model's files" "another model file" -- \
        "$bin" run "$tmp/other_net.json" -o "$tmp/bad" --quiet --restart "$tmp/m6"
    # a set of two times (rank 1's from a run checkpointed every 60 ms: 180, not 150)
    expect_status 0 "2 ranks, other times" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m5" --quiet --checkpoint-every 60
    cp "$tmp/m5/checkpoint.1.bin" "$tmp/m3/checkpoint.1.bin"
    expect_status 1 "a set of two times" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m3" --quiet --restart "$tmp/m3"
    expect_grep "$tmp/err" "different times" "a set of two times: message"
    refused "a set of two times on 1 rank" "checkpoint.1.bin: t = 180 ms; .*checkpoint.0.bin: t = 150 ms: expected the files of one checkpoint" -- \
        "$bin" run "$net" -o "$tmp/m3" --quiet --restart "$tmp/m3"
fi

echo "cli_checkpoint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
