#!/usr/bin/env bash
# On the GPU machine: build (Release, CUDA on), run the tridiagonal GPU test,
# then `hinesbatch bench tridiag` (table and JSON). Logs and JSON go to $OUT.
# Usage: tests/gpu/run_tridiag.sh [bench options...]
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-out}
mkdir -p "$out"
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem --format=csv
  nproc; date -u; git rev-parse HEAD 2>/dev/null || true; } > "$out/machine.txt" 2>&1 || true
cat "$out/machine.txt"
cmake -S . -B build-dev -DHB_MPI=OFF -DHB_CUDA=ON -DCMAKE_BUILD_TYPE=Release > "$out/cmake.log" 2>&1
cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli test_gpu_tridiag > "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; exit 1; }
grep -A3 -E "partition|thomas_" "$out/build.log" | grep -E "registers|spill" | sort | uniq -c || true
./build-dev/test_gpu_tridiag 2>&1 | tee "$out/test_gpu_tridiag.log" | tail -15
./build-dev/hinesbatch bench tridiag --json "$@" > "$out/tridiag.json"
python3 - "$out/tridiag.json" <<'PY' | tee "$out/tridiag.txt"
import json, sys
r = json.load(open(sys.argv[1]))
bw = r["copy_bandwidth_Bps"]
print(f"device {r['device']}; copy {bw/1e12:.3f} TB/s; seed {r['seed']}")
cols = ["ours_flat", "ours_interleaved", "ours_thomas_interleaved", "cusparse_strided",
        "cusparse_interleaved_algo0", "cusparse_interleaved_algo1"]
print("    m systems | " + " | ".join(f"{c[:22]:>22}" for c in cols) + " | r.flat   r.il")
for p in r["grid"]:
    cells = []
    for c in cols:
        t = p.get(c)
        cells.append(f"{t['median_s']*1e6:9.1f}us {t['copy_fraction']*100:5.1f}%{(t['max_s']-t['min_s'])/t['median_s']*100:4.0f}" if t else " " * 22)
    print(f"{p['m']:5d} {p['systems']:7d} | " + " | ".join(cells) +
          f" | {p.get('ratio_flat', 0):6.2f} {p.get('ratio_interleaved', 0):6.2f}")
PY
