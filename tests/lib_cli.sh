# Helpers for the CLI test scripts (sourced; not a test itself). Needs $tmp.
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
# expect_status CODE DESCRIPTION -- command...: output in $tmp/out and $tmp/err
expect_status() {
    local want=$1 what=$2
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, expected $want"; cat "$tmp/err" >&2; fi
}
# need_python MODULE...: /usr/bin/python3 imports them (the comparisons below read traces.h5 and
# arrays with them); else one failure naming what is missing, before the comparisons' own
need_python() {
    local m
    for m in "$@"; do
        /usr/bin/python3 -c "import $m" 2>/dev/null && ok ||
            bad "/usr/bin/python3 cannot import $m, which this test's comparisons need (Debian: python3-$m)"
    done
}
# same_run BASE DIR WHAT: DIR's spikes.dat and traces.h5 (the report's data) bitwise BASE's
same_run() {
    cmp -s "$1/spikes.dat" "$2/spikes.dat" && ok || bad "$3: spikes differ"
    /usr/bin/python3 -c '
import sys, h5py, numpy as np
a, b = (np.array(h5py.File(p, "r")["report/default/data"]) for p in sys.argv[1:])
sys.exit(0 if a.shape == b.shape and a.tobytes() == b.tobytes() else 1)' "$1/traces.h5" "$2/traces.h5" &&
        ok || bad "$3: traces differ"
}
expect_grep() { # FILE PATTERN DESCRIPTION
    if grep -q -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 400 "$1")"; fi
}
# compare_neuron REFERENCE RUN-DIR SAMPLES LIMIT-MV DESCRIPTION: a `run --traces wide` output
# against NEURON's trace (tests/neuron/compare_trace.py: spikes in NEURON's steps, v within
# LIMIT-MV at each of SAMPLES samples)
compare_neuron() {
    /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/neuron/compare_trace.py" "$1" "$2/probes.csv" \
        "$2/spikes.dat" "$3" "$4" && ok || bad "$5: hinesbatch against NEURON"
}
# nrn_python ARGS...: /usr/bin/python3 with tests/neuron on its path (compare_trace's
# report_against: a network's traces.h5 against NEURON's samples)
nrn_python() {
    PYTHONPATH="$(cd "$(dirname "${BASH_SOURCE[0]}")/neuron" && pwd)" /usr/bin/python3 "$@"
}
# user_net NAME WHAT MIN-SPIKES: tests/reference/net_NAME.json, a network with the user
# catalogue tests/nmodl/NAME (built by $bin as $tmp/NAME.so), run into $tmp/seq; its k-th
# spike of each gid against NEURON's (net_NAME.spikes) within half a step, NEURON's at least
# MIN-SPIKES. The file stays as $tmp/NAME.json beside its omp twin $tmp/NAME_omp.json.
user_net() {
    local dir
    dir=$(dirname "${BASH_SOURCE[0]}")
    expect_status 0 "build $1's catalogue" -- "$bin" build-catalogue "$dir/nmodl/$1" -o "$tmp/$1.so"
    cp "$dir/reference/net_$1.json" "$tmp/$1.json"
    sed -e 's/"backend": "seq"/"backend": "omp"/' "$tmp/$1.json" > "$tmp/$1_omp.json"
    expect_status 0 "$2" -- "$bin" run "$tmp/$1.json" -o "$tmp/seq" --quiet
    spikes_match "net_$1" "$dir/reference/net_$1.spikes" "$tmp/seq/spikes.dat" 0.025 "" "$3" &&
        ok || bad "$2: the spikes differ from NEURON's"
}
# mpi_ranks N COMMAND...: COMMAND on N MPI ranks (Open MPI: allowed as root, oversubscribed,
# yielding when idle: CI's 2 cores run it beside the other tests)
mpi_ranks() {
    local n=$1
    shift
    env OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        OMPI_MCA_mpi_yield_when_idle=1 mpirun --allow-run-as-root -np "$n" "$@"
}
# spikes_match NAME NEURON-SPIKES OURS DT T_STOP MIN [BELOW MIN_BELOW]: OURS (hinesbatch's
# spikes.dat) against NEURON's spikes ("gid time" lines, '#' lines skipped): the same count,
# and the k-th spike of every gid at NEURON's time within DT/2; NEURON's at least MIN spikes,
# with BELOW at least MIN_BELOW of them of gids below BELOW. T_STOP (or ""): our spikes after
# T_STOP - DT/2 are counted and left out (NEURON reports a crossing in the run's last step only
# if the run goes on). Prints a summary line and the first 5 differences; status 0 on a match.
spikes_match() {
    awk -v name="$1" -v dt="$4" -v t_stop="$5" -v min="$6" -v below="${7:-}" -v min_below="${8:-0}" '
        FNR == 1 { file++ }
        /^#/ { next }
        file == 1 { nref++; r[$1, kr[$1]++] = $2; if (below != "" && $1 < below + 0) cells++; next }
        t_stop != "" && $2 > t_stop - dt / 2 { at_end++; next }
        { nours++; k = ko[$1]++
          if (($1, k) in r) {
              d = $2 - r[$1, k]; if (d < 0) d = -d
              if (d < dt / 2) { m++; if (d > maxd) maxd = d }
              else if (shown++ < 5) printf "  gid %d spike %d: %.17g, NEURON %.17g\n", $1, k, $2, r[$1, k]
          } else if (shown++ < 5) printf "  gid %d spike %d at %.17g: NEURON has none\n", $1, k, $2
        }
        END {
            printf "%s: NEURON %d spikes", name, nref
            if (below != "") printf " (%d of gids below %d)", cells, below
            printf ", hinesbatch %d, %d in NEURON'"'"'s step (|dt| < %g ms), largest difference %.3g ms\n",
                nours, m, dt / 2, maxd
            if (at_end) printf "%s: %d spike(s) of hinesbatch at t_stop = %g ms left out\n", name, at_end, t_stop
            exit !(nref == nours && m == nref && nref >= min + 0 && (below == "" || cells >= min_below + 0))
        }' "$2" "$3"
}
# json_edit FROM NAME PYTHON-STATEMENT: $tmp/NAME.json, $tmp/FROM.json with its dict m changed
# by the statement (a bad-input variant of a network)
json_edit() {
    /usr/bin/python3 - "$tmp/$1.json" "$tmp/$2.json" "$3" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
exec(sys.argv[3])
json.dump(m, open(sys.argv[2], "w"))
PY
}
# have_mpi: this build has MPI and mpirun is here (`--version` checked on the way; its output
# left in $tmp/out)
have_mpi() {
    expect_status 0 "version" -- "$bin" --version
    command -v mpirun > /dev/null && grep -q "communicators: serial, mpi" "$tmp/out"
}
# The checks below follow user_net: each runs $tmp/NAME.json (or its omp twin) again, into a
# directory of its own, and CHECK (seq_spikes or seq_same) holds the run to $tmp/seq's.
# seq_spikes DIR WHAT: DIR's spikes.dat bitwise $tmp/seq's
seq_spikes() { cmp -s "$tmp/seq/spikes.dat" "$1/spikes.dat" && ok || bad "$2: spikes differ"; }
# seq_same DIR WHAT: DIR's spikes and traces bitwise $tmp/seq's
seq_same() { same_run "$tmp/seq" "$@"; }
# net_threads NAME WHAT CHECK: $tmp/NAME_omp.json on 2 threads, into $tmp/omp
net_threads() {
    expect_status 0 "$2, 2 threads" -- env OMP_NUM_THREADS=2 "$bin" run "$tmp/$1_omp.json" -o "$tmp/omp" --quiet
    "$3" "$tmp/omp" "$2 on 2 threads"
}
# net_ranks NAME WHAT CHECK N...: where have_mpi, $tmp/NAME.json on each N ranks, into $tmp/mpiN
net_ranks() {
    local name=$1 what=$2 check=$3 n
    shift 3
    have_mpi || return 0
    for n in "$@"; do
        expect_status 0 "$what, $n ranks" -- mpi_ranks "$n" "$bin" run "$tmp/$name.json" -o "$tmp/mpi$n" --quiet
        "$check" "$tmp/mpi$n" "$what on $n ranks"
    done
}
# net_again NAME WHAT CHECK: a second run of the same file, into $tmp/again (nothing of the
# first left over)
net_again() {
    expect_status 0 "$2 again" -- "$bin" run "$tmp/$1.json" -o "$tmp/again" --quiet
    "$3" "$tmp/again" "$2 run again"
}
# net_checkpoints NAME WHAT CHECK EVERY: a checkpoint every EVERY ms, into $tmp/ck
net_checkpoints() {
    expect_status 0 "$2, checkpoints" -- "$bin" run "$tmp/$1.json" -o "$tmp/ck" --quiet --checkpoint-every "$4"
    "$3" "$tmp/ck" "$2 with checkpoints"
}
# net_restarted NAME WHAT CHECK: restarted from net_checkpoints' last, in $tmp/ck
net_restarted() {
    expect_status 0 "$2, restarted" -- "$bin" run "$tmp/$1.json" -o "$tmp/ck" --quiet --restart "$tmp/ck"
    "$3" "$tmp/ck" "$2 restarted"
}
