#!/usr/bin/env bash
# On the GPU machine: one build (Release, CUDA on), then every GPU test against the CPU:
# test_gpu_hines, test_gpu_tridiag, test_gpu_multi, test_gpu_sim, test_gpu_net, test_gpu_catalogue (test_gpu_sim takes about six
# minutes on an H100; the others under a minute together). The call to make after any
# CUDA change, before its benchmarks. Each test's log goes to $OUT (default ./out) with
# machine.txt and a summary; the exit status is non-zero when any test fails. machine.txt
# names the commit from a COMMIT file at the root when there is one (a `git archive` copy
# inside another checkout would otherwise report that checkout's HEAD).
# Usage: tests/gpu/run_all.sh DATA_DIR [TEST...]   (DATA_DIR: the morphologies folder;
#        TEST: a subset of hines tridiag multi sim net catalogue, default all)
# The same six tests, without the variants below, are ctest tests labelled gpu
# (cd BUILD && ctest -L gpu: they take DATA_DIR from HB_DATA_DIR); without a device each
# exits 77, which ctest reports as skipped.
set -uo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: run_all.sh DATA_DIR [hines tridiag multi sim net catalogue]}
data=$(cd "$data" && pwd) || { echo "run_all.sh: no folder $1 (from $(pwd))" >&2; exit 2; }
shift
tests=("$@")
[ "${#tests[@]}" -gt 0 ] || tests=(hines tridiag multi sim net catalogue)
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nproc; date -u; cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || true; } > "$out/machine.txt" 2>&1 || true
cat "$out/machine.txt"
source tests/gpu/configure.sh
hb_gpu_configure "$out" "$data/.." "${HB_DEB_DIR:-.device-data}" || exit 1
targets=()
for t in "${tests[@]}"; do
  case $t in
    hines | tridiag | multi | sim | net | catalogue) targets+=("test_gpu_$t") ;;
    *) echo "run_all.sh: unknown test '$t' (expected hines, tridiag, multi, sim, net or catalogue)" >&2; exit 2 ;;
  esac
done
cmake --build build-dev -j "$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
status=0
# run_test NAME LOG LABEL [VAR=VALUE...]: one GPU test binary with the knobs given, its exit
# status and last line into the summary.
run_test() {
  local name=$1 log=$2 label=$3 args=("$data") start rc
  shift 3
  [ "$name" = tridiag ] && args=()  # test_gpu_tridiag makes its own systems
  [ "$name" = catalogue ] && args=()  # test_gpu_catalogue: the built-in catalogues
  [ "$name" = net ] && args=(tests/reference/net_ring.json tests/reference/net_random.json
                             examples/busyring_small.json tests/gpu/net_synapses.json
                             tests/reference/net_prob.json tests/gpu/net_prob_sto.json "$data")
  start=$(date +%s)
  env "$@" ./build-dev/test_gpu_$name "${args[@]}" > "$out/$log.log" 2>&1
  rc=$?
  # 77: no CUDA device (the tests' ctest skip code); here, on the GPU machine, a failure too
  [ "$rc" -eq 0 ] || status=1
  echo "$label: exit $rc$([ "$rc" -eq 77 ] && echo " (skipped: no CUDA device)")," \
    "$(( $(date +%s) - start )) s; $(tail -1 "$out/$log.log")" |
    tee -a "$out/summary.txt"
}
for t in "${tests[@]}"; do
  run_test "$t" "test_gpu_$t" "test_gpu_$t"
  if [ "$t" = hines ]; then
    # the branched kernel again: 32-system teams, 64 threads, a stage per node height, chains
    # split from 4 rows, 3 blocks (each solves many teams in turn)
    run_test hines test_gpu_hines_branched \
      "test_gpu_hines (branched 32 lanes, stage cost 0, split 4, 3 blocks)" \
      HB_TEST_TUNING=branched.lanes=32,branched.threads=64,branched.stage_cost=0,branched.blocks=3,branched.split_rows=4
    # and teams of 20 (not a power of two; a warp holds parts of two workers), 160 threads,
    # the whole tree one serial task, no split chains, 5 blocks
    run_test hines test_gpu_hines_branched20 \
      "test_gpu_hines (branched 20 lanes, one stage, no split, 5 blocks)" \
      HB_TEST_TUNING=branched.lanes=20,branched.threads=160,branched.stage_cost=100000,branched.blocks=5,branched.split_rows=0
  fi
  if [ "$t" = multi ]; then
    # SHAPES with a 16 KB budget per team: fewer lanes, most classes in tier 1 (one lane);
    # chains split from 4 rows
    run_test multi test_gpu_multi_shapes16k "test_gpu_multi (shapes, 16 KB teams, split 4)" \
      HB_TEST_TUNING=multi.shapes_bytes=16384,multi.shapes_split_rows=4
    # SHAPES with each class at its fastest occupancy: up to three launches (1, 2 and 3 blocks
    # a multiprocessor), lanes that need not divide the block (idle threads)
    run_test multi test_gpu_multi_shapes_fastest "test_gpu_multi (shapes, each class's fastest)" \
      HB_TEST_TUNING=multi.shapes_choice=-1
  fi
done
exit "$status"
