#!/usr/bin/env bash
# On the GPU machine, from the repository root: issue 5's SHAPES with streamed u and l
# (session 25; docs/multi.md, "Streamed u and l": measured, slower, not kept). The code is
# bench/profile/multi-shapes-streamed.patch, applied here to a copy of the tree. One call
# (about 4 minutes on an H100, most of it the three builds):
#   1. build (Release, CUDA); registers and spills of shapes_kernel and its stage functions;
#   2. test_gpu_multi with HB_MULTI_SHAPES_STREAM=1 (every cell of every batch against the CPU);
#   3. bench multi --gpu shapes, staged then streamed, same binary, two rounds: real cells 256,
#      2,560, 25,600; Figures 6 and 14 at 25,600;
#   4. rings of 4 and 16 slots (copies of the tree with another HB_BRANCHED_RING), real cells.
# Output in $OUT (default ./out). Usage: bench/profile/run_streamed.sh DATA_DIR [JANSSON_DEB_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
data=$(cd "${1:?usage: run_streamed.sh DATA_DIR [JANSSON_DEB_DIR]}" && pwd) || exit 2
debs=$(cd "${2:-.device-data}" 2>/dev/null && pwd || echo /nonexistent)
out=${OUT:-out}
mkdir -p "$out" && out=$(cd "$out" && pwd)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; cat COMMIT 2>/dev/null \
    || git rev-parse HEAD 2>/dev/null; } > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
source tests/gpu/configure.sh

# the trees: this one with the patch (streamed), and copies of that whose ring has 4 and 16 slots
rm -rf /tmp/hb-streamed && mkdir -p /tmp/hb-streamed
tar --exclude=./build-dev --exclude=./.device-tree -cf - . | tar -xf - -C /tmp/hb-streamed
(cd /tmp/hb-streamed && git apply "$root/bench/profile/multi-shapes-streamed.patch") \
  || { echo "the streamed patch does not apply"; exit 1; }
root=/tmp/hb-streamed
cd "$root"
for ring in 4 16; do
  rm -rf "/tmp/hb-ring$ring" && mkdir -p "/tmp/hb-ring$ring"
  # the files as they are here (this may be a copy without .git, inside another checkout)
  tar --exclude=./build-dev --exclude=./.device-tree -cf - . | tar -xf - -C "/tmp/hb-ring$ring"
  rm -rf "/tmp/hb-ring$ring/build-dev" "/tmp/hb-ring$ring/.device-tree"
  sed -i "s/^#define HB_BRANCHED_RING 8 /#define HB_BRANCHED_RING $ring /" \
    "/tmp/hb-ring$ring/src/core/hines_branched.h"
  grep -q "^#define HB_BRANCHED_RING $ring " "/tmp/hb-ring$ring/src/core/hines_branched.h" \
    || { echo "ring $ring: the define was not found"; exit 1; }
done
for tree in "$root" /tmp/hb-ring4 /tmp/hb-ring16; do
  (cd "$tree" && hb_gpu_configure "$out" "$data/.." "$debs") || exit 1
done
pids=()
for tree in "$root" /tmp/hb-ring4 /tmp/hb-ring16; do
  targets=(hinesbatch_cli)
  [ "$tree" = "$root" ] && targets+=(test_gpu_multi)
  (cd "$tree" && cmake --build build-dev -j 5 --target "${targets[@]}" \
     > "$out/build-$(basename "$tree").log" 2>&1) &
  pids+=($!)
done
for p in "${pids[@]}"; do wait "$p" || { echo "a build failed"; tail -20 "$out"/build-*.log; exit 1; }; done
grep -A2 -E "Function properties for .*(shapes_kernel|shapes_stages_streamed|branched_stages_of)" \
  "$out/build-$(basename "$root").log" | grep -E "properties|registers|spill" \
  | sed 's/ptxas info *: //' | tee "$out/registers.txt"

status=0
echo "== test_gpu_multi, streamed"
HB_MULTI_SHAPES_STREAM=1 ./build-dev/test_gpu_multi "$data" > "$out/test_gpu_multi_streamed.log" 2>&1 \
  || status=1
grep -v "^  " "$out/test_gpu_multi_streamed.log" | tail -8

bench() { # bench BINARY LABEL [bench options...]: SHAPES only, its rows labelled
  local bin=$1 label=$2
  shift 2
  "$bin" bench multi --data "$data" --no-cpu --gpu shapes --repeats 10 "$@" 2>&1 |
    grep -E "^device|^  [a-z]|cuda shapes|rror" | sed "s/^/$label /"
}
echo "== bench"
for round in 1 2; do
  for mode in 0 1; do
    label="r$round-$([ $mode = 1 ] && echo streamed || echo staged)"
    HB_MULTI_SHAPES_STREAM=$mode bench ./build-dev/hinesbatch "$label" --parts real,fig6,fig14 \
      --cells 256,2560,25600 --fig6-cells 25600 --fig14-cells 25600
  done
done 2>&1 | tee "$out/bench.txt"
echo "== rings"
for ring in 4 16; do
  HB_MULTI_SHAPES_STREAM=1 bench "/tmp/hb-ring$ring/build-dev/hinesbatch" "ring$ring" \
    --parts real,fig6 --cells 2560,25600 --fig6-cells 25600
done 2>&1 | tee "$out/rings.txt"
exit "$status"
