#!/usr/bin/env bash
# On the GPU machine, from the repository root: the small-batch plan of the interleaved
# partition (session 26; docs/tridiag.md, "Small batches").
#   1. build, and the tridiagonal GPU test (every case against the CPU twin);
#   2. ROUNDS rounds (separate processes) of `hinesbatch bench tridiag` on small and
#      middle-sized batches around the rule's boundary (m x systems = 131,072), each point
#      under the rule, small=0 (the large-batch plan) and small=1 (the small-batch plan),
#      beside cuSPARSE;
#   3. a summary: per point the median over rounds of each plan's median, the ratio
#      small=0 / small=1 with its range over rounds, and best cuSPARSE / the rule.
# Output in $OUT (default ./out; the table in summary.txt). HB_COMMIT names the tree (the
# device copy's .git may be older than its files).
# Usage: bench/profile/run_small_batches.sh [JANSSON_DEB_DIR]
set -uo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out}
mkdir -p "$out"
debs=$(cd "${1:-.device-data}" 2>/dev/null && pwd || echo /nonexistent)
rounds=${ROUNDS:-3}
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; date -u
  echo "${HB_COMMIT:-$(cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null)}"; } 2>&1 \
  | tr '\n' ' '
echo
source tests/gpu/configure.sh
hb_gpu_configure "$out" "$debs" > "$out/configure.log" 2>&1 \
  || { echo "configure failed"; tail -20 "$out/configure.log"; exit 1; }
cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli test_gpu_tridiag \
  > "$out/build.log" 2>&1 || { echo "build failed"; tail -30 "$out/build.log"; exit 1; }
echo "== GPU test"
./build-dev/test_gpu_tridiag > "$out/gpu-test.txt" 2>&1
echo "test_gpu_tridiag exit $?"
grep -E "FAIL|passed|largest difference" "$out/gpu-test.txt" | head -20

# POINTS (m x systems, comma-separated) replaces the list below.
points=64x256,64x512,64x1024,64x2048,64x2560,64x4096
points+=,128x256,128x512,128x1024,128x2048,128x2560
points+=,256x128,256x256,256x512,256x1024,256x2560
points+=,512x64,512x128,512x256,512x512,512x2560
points+=,1024x20,1024x32,1024x64,1024x128,1024x200,1024x256
points+=,2048x16,2048x20,2048x32,2048x64,2048x128,2048x200
points+=,4096x8,4096x16,4096x20,4096x32,4096x64,4096x200
points+=,8192x4,8192x8,8192x16,8192x20,8192x32,8192x200
points=${POINTS:-$points}
echo "== bench, $rounds rounds"
for r in $(seq 1 "$rounds"); do
  ./build-dev/hinesbatch bench tridiag --json --no-accuracy --repeats 20 --points "$points" \
    --variants 'small=0;small=1' > "$out/small-$r.json" 2> "$out/small-$r.err" \
    || { echo "round $r failed"; tail -5 "$out/small-$r.err"; }
done
python3 - "$out" "$rounds" <<'PY' | tee "$out/summary.txt"
import json, statistics as st, sys
out, rounds = sys.argv[1], int(sys.argv[2])
runs = [json.load(open(f"{out}/small-{r}.json")) for r in range(1, rounds + 1)]
print(f"device {runs[0]['device']}; copy {runs[0]['copy_bandwidth_Bps']/1e12:.3f} TB/s; "
      f"{rounds} rounds x 20 repeats; interleaved layout; times [us] = median over rounds "
      f"of each round's median")
print("prec     m x systems   rule  small0  small1  s0/s1 (range)      cus/rule  cus/flat  "
      "rule plan")
key = lambda p: (p["precision"], p["m"], p["systems"])
for i, p in enumerate(runs[0]["grid"]):
    ps = [next(q for q in r["grid"] if key(q) == key(p)) for r in runs]
    def var(q, spec):
        return next(v["interleaved"]["median_s"] for v in q["variants"] if v["tuning"] == spec)
    rule = [q["ours_interleaved"]["median_s"] for q in ps]
    s0 = [var(q, "small=0") for q in ps]
    s1 = [var(q, "small=1") for q in ps]
    ratio = [a / b for a, b in zip(s0, s1)]
    cus = [q["best_cusparse_s"] for q in ps]
    flat = [q["ours_flat"]["median_s"] for q in ps]
    plan = p["plan_interleaved"].replace("partition ", "")
    small = "rows=8 " in plan and "threads=128" in plan
    print(f"{p['precision']} {p['m']:5d} x {p['systems']:6d} {1e6*st.median(rule):6.1f} "
          f"{1e6*st.median(s0):6.1f}  {1e6*st.median(s1):6.1f}  {st.median(ratio):5.3f} "
          f"({min(ratio):5.3f}-{max(ratio):5.3f})  {st.median(c/r for c, r in zip(cus, rule)):6.2f}"
          f"    {st.median(c/f for c, f in zip(cus, flat)):6.2f}  {'small' if small else 'large'}")
PY
