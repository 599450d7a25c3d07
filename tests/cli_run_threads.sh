#!/usr/bin/env bash
# hinesbatch run with more OpenMP threads than the host's cores (issue 56; tools/run_threads.h):
# the threads wait passively (the program runs itself again with OMP_WAIT_POLICY=passive, and
# says so), the spikes are the same; a user's OMP_WAIT_POLICY is kept, with a warning; threads
# within the cores change nothing. Usage: cli_run_threads.sh HINESBATCH DATA
set -u
bin=$1
examples=$(cd "$(dirname "$0")/../examples" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
cores=$(getconf _NPROCESSORS_ONLN)
over=$((cores + 1))
net=$examples/ring_network.json

expect_status 0 "one thread" -- env -u OMP_WAIT_POLICY "$bin" run "$net" -o "$tmp/one" --threads 1
[ ! -s "$tmp/err" ] && ok || bad "one thread: stderr $(head -c 300 "$tmp/err")"
expect_status 0 "$over threads" -- env -u OMP_WAIT_POLICY "$bin" run "$net" -o "$tmp/over" --threads "$over" --backend omp
expect_grep "$tmp/err" "$over OpenMP threads (1 rank(s) x $over) on this host's $cores cores: they wait passively (OMP_WAIT_POLICY=passive)" "passive message"
[ "$(grep -c "OpenMP threads" "$tmp/err")" -eq 1 ] && ok || bad "the message is not said once"
cmp -s "$tmp/one/spikes.dat" "$tmp/over/spikes.dat" && ok || bad "$over threads: other spikes"
expect_status 0 "$over threads, quiet" -- env -u OMP_WAIT_POLICY "$bin" run "$net" -o "$tmp/q" --threads "$over" --quiet
[ ! -s "$tmp/err" ] && ok || bad "quiet: stderr $(head -c 300 "$tmp/err")"
expect_status 0 "OMP_WAIT_POLICY=active kept" -- env OMP_WAIT_POLICY=active "$bin" run "$net" -o "$tmp/act" --threads "$over"
expect_grep "$tmp/err" "OMP_WAIT_POLICY is set, and kept" "active kept message"
# as many ranks on this host as cores (MPICH's variable, which a serial run only reads), each
# with OpenMP's default of every core
expect_status 0 "ranks x default threads" -- env -u OMP_WAIT_POLICY -u OMP_NUM_THREADS MPI_LOCALNRANKS="$cores" "$bin" run "$net" -o "$tmp/ranks"
if [ "$cores" -gt 1 ]; then
    expect_grep "$tmp/err" "OpenMP threads ($cores rank(s) x [0-9]*) on this host's $cores cores: they wait passively" "ranks message"
fi

echo "cli_run_threads: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
