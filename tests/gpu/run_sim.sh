#!/usr/bin/env bash
# On the GPU machine: build with CUDA, run the simulator's GPU test (GPU vs CPU over
# 10,000 steps, tests/gpu/test_gpu_sim.c), then, when options are given, the
# simulator benchmark `hinesbatch bench cell` with them.
# Usage: tests/gpu/run_sim.sh DATA_DIR [bench cell options...]
#   DATA_DIR: the morphologies folder (the jansson .debs may lie beside it, in DATA_DIR/..)
#   e.g. tests/gpu/run_sim.sh data/morphologies --cells 16384 --gpu-cells 262144 --repeats 7
# Logs, the bench's table and JSON go to $OUT (default ./out).
set -uo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: run_sim.sh DATA_DIR [bench cell options]}
data=$(cd "$data" && pwd)
shift
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  lscpu | grep -E "Model name|^CPU\(s\)"; date -u; cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || true
  echo "command: $0 $data $*"; } > "$out/machine.txt" 2>&1 || true
cat "$out/machine.txt"
source tests/gpu/configure.sh
hb_gpu_configure "$out" "$data/.." "${HB_DEB_DIR:-.device-data}" || exit 1
cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli test_gpu_sim > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
grep -E "hinesbatch:|sim_cuda|registers|spill" "$out/cmake.log" "$out/build.log" | sort -u | head -20 || true
status=0
start=$(date +%s)
./build-dev/test_gpu_sim "$data" > "$out/test_gpu_sim.log" 2>&1 || status=1
echo "test_gpu_sim: exit $status, $(( $(date +%s) - start )) s"
grep -E "FAIL|passed|max relative" "$out/test_gpu_sim.log" | tail -40
if [ "$#" -gt 0 ]; then
  ./build-dev/hinesbatch bench cell --data "$data" "$@" --json-out "$out/bench_cell.json" 2>&1 |
    tee "$out/bench_cell.txt" | tail -60
fi
exit "$status"
