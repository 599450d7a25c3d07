#!/usr/bin/env bash
# The model file read once (issue 56, defect 6): through a shell's <(...) and a FIFO fed once
# (re-opening it would block: every run under `timeout`); what cannot be a model file is named
# as what it is (a directory, a device, a NUL byte, a file past HB_MODEL_MAX_BYTES), a too long
# -o name with its limit; under mpirun a parse error is printed once, by rank 0.
# Usage: cli_input.sh HINESBATCH DATA_DIR
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"

net=$examples/ring_network.json
cells=$examples/ball_and_stick.json
expect_status 0 "ring network" -- timeout 60 "$bin" run "$net" -o "$tmp/ref" --quiet
expect_status 0 "ring network through <(cat ...)" -- timeout 60 "$bin" run <(cat "$net") -o "$tmp/ps" --quiet
cmp -s "$tmp/ref/spikes.dat" "$tmp/ps/spikes.dat" && ok || bad "<(cat ...): other spikes"
# a FIFO fed once, by one writer: a second open would wait for a writer forever
mkfifo "$tmp/fifo"
cat "$net" > "$tmp/fifo" &
writer=$!
expect_status 0 "ring network through a FIFO" -- timeout 60 "$bin" run "$tmp/fifo" -o "$tmp/ff" --quiet
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
cmp -s "$tmp/ref/spikes.dat" "$tmp/ff/spikes.dat" && ok || bad "FIFO: other spikes"
# a cell run too, with a checkpoint (its model hash is the text's)
cat "$cells" > "$tmp/fifo" &
writer=$!
expect_status 0 "cells through a FIFO" -- timeout 60 "$bin" run "$tmp/fifo" -o "$tmp/fc" --quiet --traces csv --checkpoint-every 45
kill "$writer" 2>/dev/null
wait "$writer" 2>/dev/null
expect_status 0 "cells, same file" -- timeout 60 "$bin" run "$cells" -o "$tmp/fr" --quiet --traces csv
cmp -s "$tmp/fr/traces.csv" "$tmp/fc/traces.csv" && ok || bad "cells through a FIFO: other traces"
expect_status 0 "restart from the FIFO's checkpoint, by the file" -- timeout 60 "$bin" run "$cells" -o "$tmp/fc" --quiet --traces csv --restart "$tmp/fc"

# docs/network.md shows the run's own words: its example's first line, the default exchange
docs=$(dirname "$0")/../docs/network.md
expect_status 0 "ring network, printed" -- timeout 60 "$bin" run "$net" -o "$tmp/printed"
line=$(head -1 "$tmp/out" | sed "s|^$examples/|examples/|; s| spikes in .*||")
grep -qF "$line" "$docs" && ok || bad "docs/network.md lacks the run's line '$line'"
grep -q '^| `exchange` | .* | `"blocking"` |$' "$docs" && ok ||
    bad "docs/network.md: the exchange's default is not blocking (net_json.c: HB_NET_BLOCKING)"
grep -q 'r->exchange = HB_NET_BLOCKING;' "$(dirname "$0")/../src/net/net_json.c" && ok ||
    bad "net_json.c's default exchange changed: update docs/network.md and this test"

# what is not a model file, named as what it is
expect_status 1 "a directory" -- timeout 10 "$bin" run "$tmp" -o "$tmp/o"
expect_grep "$tmp/err" "$tmp: is a directory; expected a model file" "directory: message"
expect_status 1 "/dev/zero" -- timeout 10 "$bin" run /dev/zero -o "$tmp/o"
expect_grep "$tmp/err" "/dev/zero: a character device; expected a model file" "/dev/zero: message"
printf '{"t_stop": 1,\0 "cells": []}' > "$tmp/nul.json"
expect_status 1 "a NUL byte" -- timeout 10 "$bin" run "$tmp/nul.json" -o "$tmp/o"
expect_grep "$tmp/err" "nul.json: a NUL byte at offset 13: binary, not JSON text" "NUL: message"
if truncate -s 1100M "$tmp/huge.json" 2>/dev/null; then # sparse: no disk used
    expect_status 1 "a file past 1 GiB" -- timeout 10 "$bin" run "$tmp/huge.json" -o "$tmp/o"
    expect_grep "$tmp/err" "huge.json: 1153433600 bytes, too large; expected a model file of at most 1073741824 bytes" "huge: message"
    rm -f "$tmp/huge.json"
fi
# a FIFO that never ends (zeros) is refused at its first NUL, not read to the end
expect_status 1 "endless zeros through <(...)" -- timeout 10 "$bin" run <(cat /dev/zero) -o "$tmp/o"
expect_grep "$tmp/err" "a NUL byte at offset 0" "endless zeros: message"
long=$(printf 'a%.0s' $(seq 5000))
expect_status 1 "a 5,000-byte -o" -- "$bin" run "$net" -o "$tmp/$long" --quiet
expect_grep "$tmp/err" "-o: an output directory name of [0-9]* bytes, too long; expected at most 4096 bytes" "long -o: message"
expect_status 1 "a 300-byte name in -o" -- "$bin" run "$net" -o "$tmp/${long:0:300}" --quiet
expect_grep "$tmp/err" "File name too long" "long name: message"

# under mpirun, a malformed file is reported once (rank 0), each rank exits non-zero
"$bin" --version > "$tmp/version" 2>&1
if command -v mpirun > /dev/null && grep -q "communicators: serial, mpi" "$tmp/version"; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
    printf '{"network": {"ring": [1, 2]}, "cells": [' > "$tmp/broken.json"
    expect_status 1 "mpirun, a JSON syntax error" -- timeout 120 mpirun -np 3 "$bin" run "$tmp/broken.json" -o "$tmp/m"
    n=$(grep -c "broken.json" "$tmp/err")
    [ "$n" -eq 1 ] && ok || bad "mpirun syntax error: $n messages, expected 1: $(cat "$tmp/err")"
    sed 's/"dt": 0.025/"dt": -1/' "$net" > "$tmp/bad_dt.json"
    expect_status 1 "mpirun, a bad key" -- timeout 120 mpirun -np 3 "$bin" run "$tmp/bad_dt.json" -o "$tmp/m"
    n=$(grep -c "bad_dt.json: dt" "$tmp/err")
    [ "$n" -eq 1 ] && ok || bad "mpirun bad key: $n messages, expected 1: $(cat "$tmp/err")"
    expect_status 1 "mpirun, a directory" -- timeout 120 mpirun -np 3 "$bin" run "$tmp" -o "$tmp/m"
    n=$(grep -c "is a directory" "$tmp/err")
    [ "$n" -eq 1 ] && ok || bad "mpirun directory: $n messages, expected 1: $(cat "$tmp/err")"
fi

echo "cli_input: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
