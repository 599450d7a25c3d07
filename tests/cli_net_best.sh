#!/usr/bin/env bash
# "backend": "best" on networks (src/net/net_best.c): the choice and its reason on stderr and in
# summary.json, the chosen backend one of the candidates, the spikes those of a named backend,
# and a candidate made slow through the test hook HB_BEST_TRIAL_COSTS (seconds added to its
# trial's step) never chosen: 1 core against all cores, on 2 OpenMP threads (a GPU, where
# there is one, made slow; tests/gpu/test_gpu_net chooses it). No timing is asserted. Usage: cli_net_best.sh HINESBATCH DATA
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib_cli.sh"
net=$here/../examples/ring_network.json

# choice ARGS...: a run with backend best (OMP_NUM_THREADS=2), its choice in $choice
choice=
run_best() {
    local what=$1
    shift
    expect_status 0 "$what" -- env OMP_NUM_THREADS=2 "$@" "$bin" run "$net" --backend best \
        -o "$tmp/best" --quiet --t-stop 50
    expect_grep "$tmp/err" "^hinesbatch run: backend best: [a-z]*, predicted fastest: seq (1 thread) " \
        "$what: the choice on stderr"
    choice=$(grep -o '"backend_choice": {"backend": "[a-z]*"' "$tmp/best/summary.json" | grep -o '[a-z]*"$' | tr -d '"')
    case $choice in seq | omp) ok ;; *) bad "$what: summary.json's choice '$choice'"; esac
    expect_grep "$tmp/best/summary.json" "\"backend\": \"$choice\", \"backend_choice\": {\"backend\": \"$choice\", \"reason\": \"$choice, " \
        "$what: summary.json's backend and reason"
    grep -q "backend best: $choice, " "$tmp/err" && ok || bad "$what: stderr names another choice than summary.json's $choice"
}

expect_status 0 "seq" -- "$bin" run "$net" --backend seq -o "$tmp/seq" --quiet --t-stop 50
expect_grep "$tmp/seq/summary.json" '"backend": "seq",' "a named backend in summary.json"
if grep -q backend_choice "$tmp/seq/summary.json"; then bad "a named backend has a backend_choice"; else ok; fi

run_best "best"
cmp -s "$tmp/seq/spikes.dat" "$tmp/best/spikes.dat" && ok || bad "best's spikes differ from seq's"

"$bin" --version | grep -q "backends: seq, omp" && openmp=1 || openmp=0
run_best "best, 1 core made slow" HB_BEST_TRIAL_COSTS=seq=1,cuda=1
if [ "$openmp" = 1 ]; then
    [ "$choice" = omp ] && ok || bad "1 core made slow: chose $choice, expected omp"
    expect_grep "$tmp/err" "omp (2 threads) [0-9.e+]* s (32 cells tried)" "the all-cores trial in the reason"
else
    [ "$choice" = seq ] && ok || bad "no OpenMP: chose $choice, expected seq (the only candidate)"
fi
cmp -s "$tmp/seq/spikes.dat" "$tmp/best/spikes.dat" && ok || bad "best's spikes (all cores) differ from seq's"
# all cores made slow; 1 core slowed a little so that its run is not "tiny" and all cores are
# tried (the GPU, where there is one, made slow too)
run_best "best, all cores made slow" HB_BEST_TRIAL_COSTS=seq=0.01,omp=1,cuda=1
[ "$choice" = seq ] && ok || bad "all cores made slow: chose $choice, expected seq"
[ "$openmp" = 0 ] || expect_grep "$tmp/err" "omp (2 threads) [0-9.e+]* s (32 cells tried)" "all cores tried"
expect_grep "$tmp/err" "; cuda \(not tried\|[0-9.e+]* s\)" "the GPU's candidacy in the reason"
# seq's predicted run under 0.25 s: nothing else tried; else all cores tried (whichever this
# machine's speed gives: the rule is checked, not the time)
run_best "best, tiny or not"
seq_s=$(sed -n 's/.*predicted fastest: seq (1 thread) \([0-9.e+-]*\) s.*/\1/p' "$tmp/err")
if [ -z "$seq_s" ]; then bad "no seq prediction in: $(cat "$tmp/err")"
elif awk -v s="$seq_s" 'BEGIN { exit !(s < 0.25) }'; then
    expect_grep "$tmp/err" "omp (2 threads) not tried (seq's predicted run under 0.25 s)" "tiny: all cores skipped"
    [ "$choice" = seq ] && ok || bad "tiny: chose $choice"
elif [ "$openmp" = 1 ]; then
    expect_grep "$tmp/err" "omp (2 threads) [0-9.e+]* s (32 cells tried)" "not tiny: all cores tried"
fi

# in the file (the example names a backend: replaced)
sed 's/"backend": *"[a-z]*"/"backend": "best"/' "$net" > "$tmp/best.json"
grep -q '"backend": "best"' "$tmp/best.json" && ok || bad "could not put backend best in the file"
expect_status 0 "file's best" -- "$bin" run "$tmp/best.json" -o "$tmp/file" --quiet --t-stop 50
expect_grep "$tmp/err" "backend best: " "the file's best: choice on stderr"
cmp -s "$tmp/seq/spikes.dat" "$tmp/file/spikes.dat" && ok || bad "the file's best: spikes differ from seq's"

echo "cli_net_best: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
