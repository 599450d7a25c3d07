#!/usr/bin/env bash
# On the GPU machine, from the repository root: the issue-4 probes of session 24, in one call
# (about 4 minutes on an H100).
#   1. bench/profile/two_pass_loads.cu: can a two-pass clustered partition read its inputs
#      twice and still move the minimum from DRAM?
#   2. bench/profile/tridiag-phases.patch on a copy of the tree: per-tile phases of the rule's
#      interleaved kernels at m = 2048, 4096, 8192 x 20,000, fp64 and fp32 (pairs), summarised
#      by bench/profile/tridiag_phases.py; the same points unpatched for the probe's cost.
# Output in $OUT (default ./out). Usage: bench/profile/run_probes.sh [JANSSON_DEB_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
out=${OUT:-out}
mkdir -p "$out"
debs=$(cd "${1:-.device-data}" 2>/dev/null && pwd || echo /nonexistent)
{ nvidia-smi --query-gpu=name,driver_version --format=csv; date -u; git rev-parse HEAD 2>/dev/null \
    || cat COMMIT 2>/dev/null; } > "$out/machine.txt" 2>&1
cat "$out/machine.txt"

echo "== two-pass probe"
nvcc -arch=sm_90 -O3 -o /tmp/two_pass_loads bench/profile/two_pass_loads.cu \
  && /tmp/two_pass_loads 20000 10 | tee "$out/two_pass_loads.txt"

echo "== phases"
rm -rf /tmp/hb-phases && mkdir -p /tmp/hb-phases
# the files as they are here (this may be a copy without .git, inside another checkout)
tar --exclude=./build-dev --exclude=./.device-tree -cf - . | tar -xf - -C /tmp/hb-phases
rm -rf /tmp/hb-phases/build-dev /tmp/hb-phases/.device-tree
(cd /tmp/hb-phases && git apply "$root/bench/profile/tridiag-phases.patch" 2>/dev/null \
   || patch -p1 < "$root/bench/profile/tridiag-phases.patch") > "$out/patch.log" 2>&1 \
  || { echo "the phases patch does not apply"; cat "$out/patch.log"; exit 1; }
source tests/gpu/configure.sh
for tree in "$root" /tmp/hb-phases; do
  (cd "$tree" && hb_gpu_configure "$out" "$debs" && \
   cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli > "$out/build-$(basename "$tree").log" 2>&1) \
    || { echo "build failed in $tree"; tail -20 "$out/build-$(basename "$tree").log"; exit 1; }
done
for prec in fp64 fp32; do
  for m in 2048 4096 8192; do
    point=${m}x20000
    echo "-- $prec $point unpatched"
    "$root/build-dev/hinesbatch" bench tridiag --no-cusparse --no-accuracy --precision $prec \
      --repeats 10 --points $point | grep -E "^(fp64|fp32) " | awk '{print $1,$2,$3,$7,$8,$9}'
    HB_TD_PHASES="$out/phases-$prec-$m.txt" /tmp/hb-phases/build-dev/hinesbatch bench tridiag \
      --no-cusparse --no-accuracy --precision $prec --repeats 3 --points $point > /dev/null
    python3 bench/profile/tridiag_phases.py "$out/phases-$prec-$m.txt"
  done
done 2>&1 | tee "$out/phases.txt"

# 3. Small batches: interleaved fp32 at 128 x 256 and 512 x 256 ran 0.84x and 0.93x
#    cuSPARSE's best (-23g: launch-floor points of 12-15 us, 4 and 8 blocks of pairs); smaller
#    blocks and chunks spread them over more multiprocessors.
echo "== small batches"
"$root/build-dev/hinesbatch" bench tridiag --no-accuracy --precision fp32 --repeats 20 \
  --points 64x256,128x256,256x256,512x256 \
  --variants 'threads=128;rows=8,threads=128;pairs=0,threads=128;rows=8,pairs=0,threads=128' \
  2>&1 | tee "$out/small-batches.txt"
