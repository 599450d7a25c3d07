#!/usr/bin/env bash
# Point processes that send themselves events (net_send, flag, net_move: docs/mechanisms.md,
# section 10): tests/nmodl/selfev's PulseSyn (opened by each event for dur, closed by its
# net_send(dur, 1) with the same connection's weight; kicks of its own from INITIAL's
# net_send(start, 2)), RetrigSyn (net_move extends its opening through a burst) and AhpWatch
# (WATCH (v > thresh) 2, activated by INITIAL's net_send(0, 1): each spike of its cell opens an
# afterhyperpolarising conductance), a user catalogue, in a 6-cell network against NEURON 8.2 running the same files
# (tests/neuron/selfev_reference.py): every spike in NEURON's step, the soma voltages and both
# conductances within NEURON's float32; the same spikes and traces bit for bit on 2 threads
# and, where this build has MPI, 2 ranks; checkpoints and bad .mod uses refused by name.
# Usage: cli_net_selfev.sh HINESBATCH
set -u
bin=$1
src=$(cd "$(dirname "$0")/.." && pwd)
ref=$src/tests/reference
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/lib_cli.sh"
need_python h5py numpy

user_net selfev "self-event network" 60 # $tmp/seq: every spike in NEURON's step
# every cell's soma v, PulseSyn's, RetrigSyn's and AhpWatch's g every 0.25 ms: the report stores
# float32, so each value against NEURON's rounded to float32; the kicks (INITIAL's self-events),
# the closings (flag 1 with the opening connection's weight), the moved closings and the
# WATCH-timed openings all show in g
nrn_python - "$tmp/seq/traces.h5" "$ref/net_selfev.v" <<'PY' && ok || bad "self-event network: voltages or conductances differ from NEURON's"
import sys, numpy as np
from compare_trace import report_against
ours, t, ok = report_against("net_selfev", *sys.argv[1:3], 6, [("v", "mV"), ("PulseSyn g", "uS"),
                             ("RetrigSyn g", "uS"), ("AhpWatch g", "uS")], 480,
                             within=[1e-4, 1e-8, 1e-8, 1e-8])
kick = (t > 3.5) & (t < 3.9)        # the first kick (3 to 4 ms): g = gkick
burst = (t > 64.5) & (t < 66)       # RetrigSyn held open by net_move past 60.5 + 2 ms
ok = ok and (ours[kick, 1::4] == np.float32(0.01)).all() and (ours[burst, 2] == np.float32(0.006)).all()
ok = ok and ours[:, 1::4].max() > 0.03 and ours[:, 2::4].min() == 0.0
ok = ok and ours[:, 3::4].max() > 0.004 and (ours[t < 3.5, 3::4] == 0).all()  # no AHP before the first spike
sys.exit(0 if ok else 1)
PY
net_threads selfev "self-event network" seq_same
net_ranks selfev "self-event network" seq_same 2
# a second run of the same file: the queue starts empty at each initialisation
net_again selfev "self-event network" seq_same
# checkpoints (format 5) hold the waiting self-events: at 72.5 ms 13 wait (PulseSyn's kicks
# mid-pulse, their closings, RetrigSyn's closings net_move moves, with their connections'
# vectors); a restart there is the run through, bit for bit (a restart keeping INITIAL's queue
# instead differs in spikes and traces)
net_checkpoints selfev "self-event network" seq_same 72.5
[ -s "$tmp/ck/checkpoint.0.bin" ] && ok || bad "no checkpoint written"
cp -r "$tmp/ck" "$tmp/ck12"
cp -r "$tmp/ck" "$tmp/ckr1"
expect_status 0 "self-event network, restarted at 72.5 ms" -- "$bin" run "$tmp/selfev.json" -o "$tmp/ck" --quiet \
    --restart "$tmp/ck"
seq_same "$tmp/ck" "self-event network restarted"
expect_status 0 "self-event network, a one-thread checkpoint restarted on 2 threads" -- "$bin" run \
    "$tmp/selfev.json" -o "$tmp/ck12" --quiet --restart "$tmp/ck12" --backend omp --threads 2
seq_same "$tmp/ck12" "self-event network, a one-thread checkpoint restarted on 2 threads"
if [ -d "$tmp/mpi2" ]; then
    expect_status 0 "self-event network, 2 ranks, checkpoints" -- mpi_ranks 2 "$bin" run "$tmp/selfev.json" -o "$tmp/mck" --quiet --checkpoint-every 72.5
    cp -r "$tmp/mck" "$tmp/mck1"
    cp -r "$tmp/mck" "$tmp/mck3"
    expect_status 0 "self-event network, 2 ranks, restarted" -- mpi_ranks 2 "$bin" run "$tmp/selfev.json" -o "$tmp/mck" --quiet --restart "$tmp/mck"
    seq_same "$tmp/mck" "self-event network, 2 ranks restarted"
    # on another rank count the waiting self-events move with their cells (their targets and
    # weight vectors renumbered; one synapse's ties, all sent on one rank, keep their order)
    expect_status 0 "self-event network, 1 rank -> 2" -- mpi_ranks 2 "$bin" run "$tmp/selfev.json" -o "$tmp/ckr1" --quiet --restart "$tmp/ckr1"
    seq_same "$tmp/ckr1" "self-event network, 1 rank -> 2"
    expect_status 0 "self-event network, 2 ranks -> 1" -- "$bin" run "$tmp/selfev.json" -o "$tmp/mck1" --quiet --restart "$tmp/mck1"
    seq_same "$tmp/mck1" "self-event network, 2 ranks -> 1"
    expect_status 0 "self-event network, 2 ranks -> 3" -- mpi_ranks 3 "$bin" run "$tmp/selfev.json" -o "$tmp/mck3" --quiet --restart "$tmp/mck3"
    seq_same "$tmp/mck3" "self-event network, 2 ranks -> 3"
fi
# samples at events' times (tests/reference/net_coincide.*: the same synapses on 2 cells for
# 12 ms, recorded every step, every event at a sample's time): NEURON records a step's values
# before the events of its time and the t = 0 values after INITIAL's events of t = 0; every
# value within NEURON's float32 as above, on 1 and 2 threads and 2 ranks alike
cp "$ref/net_coincide.json" "$tmp/coincide.json"
sed -e 's/"backend": "seq"/"backend": "omp"/' "$tmp/coincide.json" > "$tmp/coincide_omp.json"
expect_status 0 "events at samples' times" -- "$bin" run "$tmp/coincide.json" -o "$tmp/co" --quiet
spikes_match net_coincide "$ref/net_coincide.spikes" "$tmp/co/spikes.dat" 0.025 "" 11 &&
    ok || bad "events at samples' times: the spikes differ from NEURON's"
/usr/bin/python3 - "$tmp/co/traces.h5" "$ref/net_coincide.v" <<'PY' && ok || bad "events at samples' times: values differ from NEURON's"
import sys, h5py, numpy as np
with h5py.File(sys.argv[1], "r") as f:
    ours = np.array(f["report/default/data"])
ref = np.loadtxt(sys.argv[2])
t, theirs = ref[:, 0], ref[:, 1:]
g = np.delete(np.arange(theirs.shape[1]), np.s_[0::4])  # the conductances
# a sample at an event's time: a conductance that jumps (> 1e-4 uS) in the step after it
at = (np.abs(np.diff(theirs[:, g], axis=0)) > 1e-4).any(axis=1)
dv = np.abs(ours[:, 0::4] - theirs[:, 0::4]).max() if ours.shape == theirs.shape else np.inf
dg = np.abs(ours[:, g] - theirs[:, g]).max() if ours.shape == theirs.shape else np.inf
before = (np.abs(ours[:-1][at][:, g] - theirs[:-1][at][:, g]) < 1e-8).all(axis=1).sum() \
    if ours.shape == theirs.shape else 0
print("net_coincide: %d samples of 2 cells, %d at an event's time; largest difference v %.3g mV, "
      "g %.3g uS; t = 0: PulseSyn's g %s uS (NEURON %s, its kick of t = 0 delivered); %d of %d "
      "samples at events' times as NEURON's (before them)" % (len(ours), at.sum(), dv, dg,
      ours[0, 1::4], theirs[0, 1::4], before, at.sum()))
ok = ours.shape == (481, 8) and at.sum() >= 15 and dv < 1e-4 and dg < 1e-8
ok = ok and (ours[0, 1::4] == np.float32(0.01)).all() and before == at.sum()
sys.exit(0 if ok else 1)
PY
expect_status 0 "events at samples' times, 2 threads" -- env OMP_NUM_THREADS=2 "$bin" run "$tmp/coincide_omp.json" -o "$tmp/co_omp" --quiet
same_run "$tmp/co" "$tmp/co_omp" "events at samples' times on 2 threads"
if [ -d "$tmp/mpi2" ]; then
    expect_status 0 "events at samples' times, 2 ranks" -- mpi_ranks 2 "$bin" run "$tmp/coincide.json" -o "$tmp/co_mpi2" --quiet
    same_run "$tmp/co" "$tmp/co_mpi2" "events at samples' times on 2 ranks"
fi
# bad uses in .mod files: FILE:LINE:COLUMN and where they belong
mkdir -p "$tmp/bad1" "$tmp/bad2" "$tmp/bad3"
sed -e 's/^    g = 0$/    g = 0\n    net_move(t + 1)/' "$src/tests/nmodl/selfev/RetrigSyn.mod" > "$tmp/bad1/RetrigSyn.mod"
expect_status 1 "net_move in INITIAL" -- "$bin" build-catalogue "$tmp/bad1" -o "$tmp/bad1.so"
expect_grep "$tmp/err" "RetrigSyn.mod:35:5: net_move in INITIAL is not supported; expected it in NET_RECEIVE" "net_move in INITIAL"
sed -e 's/^    i = g\*(v - e)$/    i = g*(v - e)\n    net_send(1, 1)/' "$src/tests/nmodl/selfev/RetrigSyn.mod" > "$tmp/bad2/RetrigSyn.mod"
expect_status 1 "net_send in BREAKPOINT" -- "$bin" build-catalogue "$tmp/bad2" -o "$tmp/bad2.so"
expect_grep "$tmp/err" "RetrigSyn.mod:41:5: net_send in BREAKPOINT is not supported; expected it in NET_RECEIVE or the mechanism's INITIAL" "net_send in BREAKPOINT"
sed -e 's/^    INITIAL { n = 0 }$/    INITIAL { n = 0 net_send(0, 1) }/' "$src/tests/nmodl/selfev/PulseSyn.mod" > "$tmp/bad3/PulseSyn.mod"
expect_status 1 "net_send in NET_RECEIVE's INITIAL" -- "$bin" build-catalogue "$tmp/bad3" -o "$tmp/bad3.so"
expect_grep "$tmp/err" "PulseSyn.mod:53:21: net_send in NET_RECEIVE's INITIAL is not supported" "net_send in NET_RECEIVE's INITIAL"
mkdir -p "$tmp/bad4"
sed -e 's/^    net_send(0, 1)$/    WATCH (v > thresh) 2/' "$src/tests/nmodl/selfev/AhpWatch.mod" > "$tmp/bad4/AhpWatch.mod"
expect_status 1 "WATCH in INITIAL" -- "$bin" build-catalogue "$tmp/bad4" -o "$tmp/bad4.so"
expect_grep "$tmp/err" "AhpWatch.mod:41:5: WATCH outside NET_RECEIVE; expected WATCH (condition) flag" "WATCH in INITIAL"

echo "cli_net_selfev: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
