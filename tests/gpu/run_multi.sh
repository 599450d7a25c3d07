#!/usr/bin/env bash
# On the GPU machine: build with CUDA, run the mixed-morphology GPU test, then
# (given options) `hinesbatch bench multi`. Logs and JSON go to $OUT.
# Usage: tests/gpu/run_multi.sh DATA_DIR [bench multi options...]
# libjansson may come as Debian packages beside DATA_DIR or in $HB_DEB_DIR
# (apt-get download libjansson-dev libjansson4): the GPU image cannot install packages.
set -uo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: run_multi.sh DATA_DIR [bench multi options]}
shift
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nproc; date -u; cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || true; } > "$out/machine.txt" 2>&1 || true
cat "$out/machine.txt"
source tests/gpu/configure.sh
hb_gpu_configure "$out" "$data/.." "${HB_DEB_DIR:-.device-data}" || exit 1
cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli test_gpu_multi > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
# registers and spills of the multi kernels
grep -A2 -E "Function properties for .*(grouped_kernel|level_eliminate|level_substitute|per_cell_kernel)" \
  "$out/build.log" | grep -E "properties|registers|spill" | sed 's/ptxas info *: //' || true
status=0
./build-dev/test_gpu_multi "$data" > "$out/test_gpu_multi.log" 2>&1 || status=1
grep -v "^  " "$out/test_gpu_multi.log" | tail -25
if [ "$#" -gt 0 ]; then
  echo "hinesbatch bench multi --data $data $* --json-out $out/bench_multi.json" > "$out/bench_command.txt"
  ./build-dev/hinesbatch bench multi --data "$data" "$@" --json-out "$out/bench_multi.json" 2>&1 |
    tee "$out/bench_multi.txt" | tail -120
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi
exit "$status"
