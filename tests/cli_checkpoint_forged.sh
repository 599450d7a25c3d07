#!/usr/bin/env bash
# Checkpoints forged with their checksums recomputed (tests/ckpt_forge.py) are refused by their
# values, as a file's would be (issue 56, defect 8): non-finite, negative or future spike times,
# gids the network does not have (2^32 - 1, 2^40), spikes out of (time, gid) order, a NaN
# event weight, a source's next spike before 0, more spikes taken than a detector recorded, a
# NaN voltage, a negative count in the CLI's record; a checkpoint path that is a directory is
# named as one. An unforged copy still restarts. Usage: cli_checkpoint_forged.sh HINESBATCH DATA
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
forged "$net" "$tmp/n" voltage-nan "group 0's voltage 0 is not a finite number"
t_stop=100 traces=csv forged "$cells" "$tmp/c" voltage-nan "group 0's voltage 0 is not a finite number"
t_stop=100 traces=csv forged "$cells" "$tmp/c" cells-count-negative "corrupt: its run record holds a negative count"

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
