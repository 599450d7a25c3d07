#!/usr/bin/env bash
# On the GPU machine: build with CUDA, run the GPU test, then the Hines benchmark.
# Usage: tests/gpu/run_hines.sh DATA_DIR [bench options...]; logs and JSON go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: run_hines.sh DATA_DIR [bench options]}
shift
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nproc; date -u; cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || true; } > "$out/machine.txt" 2>&1 || true
cat "$out/machine.txt"
source tests/gpu/configure.sh
hb_gpu_configure "$out" "$data/.." "${HB_DEB_DIR:-.device-data}" || exit 1
cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli test_gpu_hines > "$out/build.log" 2>&1 || { tail -30 "$out/build.log"; exit 1; }
grep -E "hinesbatch:|registers|spill" "$out/cmake.log" "$out/build.log" | sort -u | head -20 || true
status=0
./build-dev/test_gpu_hines "$data" > "$out/test_gpu_hines.log" 2>&1 || status=1
grep -v "rel diff" "$out/test_gpu_hines.log" | tail -20
# The branched kernel again with 32-system teams, 64 threads and a stage per node height (the
# most stages, tasks and gathers; its default picks the team size and fewer stages) and 3
# blocks, each solving many teams in turn.
HB_TEST_TUNING=branched.lanes=32,branched.threads=64,branched.stage_cost=0,branched.blocks=3 \
  ./build-dev/test_gpu_hines "$data" > "$out/test_gpu_hines_branched.log" 2>&1 || status=1
grep -v "rel diff" "$out/test_gpu_hines_branched.log" | tail -3
if [ "$#" -gt 0 ]; then
  ./build-dev/hinesbatch bench hines --data "$data" "$@" --json-out "$out/bench_hines.json" 2>&1 |
    tee "$out/bench_hines.txt" | tail -80
fi
exit "$status"
