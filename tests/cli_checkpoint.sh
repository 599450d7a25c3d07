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

if command -v mpirun > /dev/null && "$bin" --version 2>&1 | grep -q "communicators: serial, mpi"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1 OMPI_MCA_mpi_yield_when_idle=1
    expect_status 0 "2 ranks with checkpoints" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m2" --quiet --checkpoint-every 50
    same "$tmp/na/spikes.dat" "$tmp/m2/spikes.dat" "2 ranks: spikes.dat"
    [ -s "$tmp/m2/checkpoint.1.bin" ] && ok || bad "2 ranks: no checkpoint.1.bin"
    cp -r "$tmp/m2" "$tmp/m3"
    expect_status 0 "2 ranks restarted" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m3" --quiet --restart "$tmp/m3"
    same "$tmp/na/spikes.dat" "$tmp/m3/spikes.dat" "2 ranks restarted: spikes.dat"
    refused "2 ranks' checkpoint on 1 rank" "2 ranks; this one has 1" -- \
        "$bin" run "$net" -o "$tmp/m4" --quiet --restart "$tmp/m2"
    expect_status 1 "1 rank's checkpoint on 2 ranks" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m4" --quiet --restart "$tmp/nb/checkpoint.0.bin"
    expect_grep "$tmp/err" "expected the directory" "a file on 2 ranks: message"
    # a set of two times (rank 1's from a run checkpointed every 60 ms: 180, not 150)
    expect_status 0 "2 ranks, other times" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m5" --quiet --checkpoint-every 60
    cp "$tmp/m5/checkpoint.1.bin" "$tmp/m3/checkpoint.1.bin"
    expect_status 1 "a set of two times" -- mpirun -np 2 "$bin" run "$net" -o "$tmp/m3" --quiet --restart "$tmp/m3"
    expect_grep "$tmp/err" "different times" "a set of two times: message"
fi

echo "cli_checkpoint: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
