#!/usr/bin/env bash
# On the GPU machine: build (Release, CUDA on), then
#   (default)  run the tridiagonal GPU test, then `hinesbatch bench tridiag`
#              on the whole grid, fp64 and fp32, beside cuSPARSE (JSON + table);
#   --variants run only the A/B comparison of partition-kernel tunings on the
#              points that matter (fp64, no cuSPARSE, no accuracy), then a
#              table of the best tuning per point and layout.
# Logs, JSON and tables go to $OUT (default ./out).
# Usage: tests/gpu/run_tridiag.sh [bench options...]
#        tests/gpu/run_tridiag.sh --variants ['SPEC;SPEC;...'] [bench options...]
#        (HB_SKIP_TEST=1 skips the GPU test in the default mode)
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out}
mkdir -p "$out"
mode=grid
variants="gtsv.hint=1;gtsv.hint=2;gtsv.ahead=4;gtsv.threads=128;gtsv.threads=512;gtsv.rows=16;gtsv.rows=8;gtsv.threads=128,gtsv.ahead=4;gtsv.rows=16,gtsv.hint=1"
if [[ ${1:-} == --variants ]]; then
  mode=variants
  shift
  if [[ $# -gt 0 && ${1:0:2} != -- ]]; then variants=$1; shift; fi
fi
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nproc; date -u; cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || true; } > "$out/machine.txt" 2>&1 || true
cat "$out/machine.txt"
source tests/gpu/configure.sh
hb_gpu_configure "$out" "${HB_DEB_DIR:-.device-data}" || exit 1
cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli test_gpu_tridiag > "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; exit 1; }
# Registers and spills of every tridiagonal kernel (none may spill).
grep -A3 -E "Compiling entry function '_Z[0-9]+(partition|thomas_)" "$out/build.log" \
  | grep -E "registers|spill" | sed 's/ptxas info *: //' | sort | uniq -c | tee "$out/registers.txt" || true
status=0  # the bench runs even when the test fails; the script then fails

if [[ $mode == variants ]]; then
  points=64x256000,128x256000,256x256000,512x256000,512x25600,1024x20000,2048x20000,4096x20000,8192x20000,8192x200,4096x200
  cmd=(./build-dev/hinesbatch bench tridiag --json --no-accuracy --no-cusparse --precision fp64
       --repeats 10 --points "$points" --variants "$variants" "$@")
  echo "${cmd[*]}" > "$out/variants.cmd"
  "${cmd[@]}" > "$out/variants.json" || status=1
  python3 - "$out/variants.json" <<'PY' | tee "$out/variants.txt"
import json, sys
r = json.load(open(sys.argv[1]))
bw = r["copy_bandwidth_Bps"]
print(f"device {r['device']}; copy {bw/1e12:.3f} TB/s; seed {r['seed']}; % of copy per tuning (rule = no override)")
for p in r["grid"]:
    for lay in ("flat", "interleaved"):
        rule = p.get("ours_" + lay)
        if not rule:
            continue
        rows = [("rule", rule["median_s"], p["plan_" + lay])]
        for v in p.get("variants", []):
            if lay in v:
                rows.append((v["tuning"] or "''", v[lay]["median_s"], v["plan_" + lay]))
        best = min(rows, key=lambda x: x[1])
        cells = "  ".join(f"{n}:{100*p['min_bytes']/t/bw:5.1f}%" for n, t, _ in rows)
        print(f"{p['precision']} {p['m']:5d} x {p['systems']:6d} {lay[:5]:5s} best {best[0]} "
              f"({rule['median_s']/best[1]:.3f}x the rule; {best[2]})\n    {cells}")
PY
  exit $status
fi

if [[ ${HB_SKIP_TEST:-0} != 1 ]]; then
  ./build-dev/test_gpu_tridiag > "$out/test_gpu_tridiag.log" 2>&1 || status=1
  grep -v -E "^(ok|tuning )" "$out/test_gpu_tridiag.log" | tail -15
fi
cmd="hinesbatch bench tridiag --json $*"
./build-dev/hinesbatch bench tridiag --json "$@" > "$out/tridiag.json" || status=1
python3 - "$out/tridiag.json" "$cmd" <<'PY' || status=1
import json, sys, datetime
r = json.load(open(sys.argv[1]))
r["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
r["command"] = sys.argv[2]
json.dump(r, open(sys.argv[1], "w"), indent=1)
PY
python3 - "$out/tridiag.json" <<'PY' | tee "$out/tridiag.txt"
import json, sys
r = json.load(open(sys.argv[1]))
bw = r["copy_bandwidth_Bps"]
print(f"device {r['device']}; copy {bw/1e12:.3f} TB/s; seed {r['seed']}")
cols = ["ours_flat", "ours_interleaved", "ours_thomas_interleaved", "cusparse_strided",
        "cusparse_interleaved_algo0", "cusparse_interleaved_algo1"]
print("prec     m systems | " + " | ".join(f"{c[:22]:>22}" for c in cols) + " | r.flat   r.il  target")
for p in r["grid"]:
    cells = []
    for c in cols:
        t = p.get(c)
        cells.append(f"{t['median_s']*1e6:9.1f}us {t['copy_fraction']*100:5.1f}%{(t['max_s']-t['min_s'])/t['median_s']*100:4.0f}" if t else " " * 22)
    best = max(p.get("ratio_flat", 0), p.get("ratio_interleaved", 0))
    big = p["m"] * p["systems"] >= 1000000
    target = ("met" if best >= 1.5 else "MISSED") if big else ("met" if best >= 1.0 else "SLOWER")
    if "best_cusparse_s" not in p:
        target = "-"
    print(f"{p['precision']} {p['m']:5d} {p['systems']:7d} | " + " | ".join(cells) +
          f" | {p.get('ratio_flat', 0):6.2f} {p.get('ratio_interleaved', 0):6.2f} {target}")
PY
exit $status
