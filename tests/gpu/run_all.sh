#!/usr/bin/env bash
# On the GPU machine: one build (Release, CUDA on), then every GPU test against the CPU:
# test_gpu_hines, test_gpu_tridiag, test_gpu_multi, test_gpu_sim (the last takes about six
# minutes on an H100; the others under a minute together). The call to make after any
# CUDA change, before its benchmarks. Each test's log goes to $OUT (default ./out) with
# machine.txt and a summary; the exit status is non-zero when any test fails.
# Usage: tests/gpu/run_all.sh DATA_DIR [TEST...]   (DATA_DIR: the morphologies folder;
#        TEST: a subset of hines tridiag multi sim, default all)
set -uo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: run_all.sh DATA_DIR [hines tridiag multi sim]}
data=$(cd "$data" && pwd)
shift
tests=("$@")
[ "${#tests[@]}" -gt 0 ] || tests=(hines tridiag multi sim)
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  nproc; date -u; git rev-parse HEAD 2>/dev/null || true; } > "$out/machine.txt" 2>&1 || true
cat "$out/machine.txt"
source tests/gpu/configure.sh
hb_gpu_configure "$out" "$data/.." "${HB_DEB_DIR:-.device-data}" || exit 1
targets=()
for t in "${tests[@]}"; do
  case $t in
    hines | tridiag | multi | sim) targets+=("test_gpu_$t") ;;
    *) echo "run_all.sh: unknown test '$t' (expected hines, tridiag, multi or sim)" >&2; exit 2 ;;
  esac
done
cmake --build build-dev -j "$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
status=0
for t in "${tests[@]}"; do
  args=("$data")
  [ "$t" = tridiag ] && args=()  # test_gpu_tridiag makes its own systems
  start=$(date +%s)
  ./build-dev/test_gpu_$t "${args[@]}" > "$out/test_gpu_$t.log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || status=1
  echo "test_gpu_$t: exit $rc, $(( $(date +%s) - start )) s; $(tail -1 "$out/test_gpu_$t.log")" |
    tee -a "$out/summary.txt"
done
exit "$status"
