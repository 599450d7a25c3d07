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
# The GPU image cannot install packages: libjansson (model files) may come as
# Debian packages in $HB_DEB_DIR (default .device-data; apt-get download
# libjansson-dev libjansson4).
debs=${HB_DEB_DIR:-.device-data}
extra=()
if ! pkg-config --exists jansson 2>/dev/null && ls "$debs"/libjansson-dev_*.deb >/dev/null 2>&1; then
  rm -rf /tmp/hb-jansson && mkdir -p /tmp/hb-jansson
  for deb in "$debs"/libjansson*.deb; do dpkg -x "$deb" /tmp/hb-jansson; done
  extra=(-DHB_JANSSON_INCLUDE=/tmp/hb-jansson/usr/include
         -DHB_JANSSON_LIB=/tmp/hb-jansson/usr/lib/x86_64-linux-gnu/libjansson.a)
fi
cmake -S . -B build-dev -DHB_MPI=OFF -DHB_CUDA=ON -DCMAKE_BUILD_TYPE=Release "${extra[@]}" \
  > "$out/cmake.log" 2>&1 || { tail -20 "$out/cmake.log"; exit 1; }
cmake --build build-dev -j "$(nproc)" --target hinesbatch_cli test_gpu_tridiag > "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log"; exit 1; }
grep -A3 -E "partition|thomas_" "$out/build.log" | grep -E "registers|spill" | sort | uniq -c || true
status=0  # the bench runs even when the test fails; the script then fails
./build-dev/test_gpu_tridiag > "$out/test_gpu_tridiag.log" 2>&1 || status=1
grep -v "^ok" "$out/test_gpu_tridiag.log" | tail -15
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
print("    m systems | " + " | ".join(f"{c[:22]:>22}" for c in cols) + " | r.flat   r.il")
for p in r["grid"]:
    cells = []
    for c in cols:
        t = p.get(c)
        cells.append(f"{t['median_s']*1e6:9.1f}us {t['copy_fraction']*100:5.1f}%{(t['max_s']-t['min_s'])/t['median_s']*100:4.0f}" if t else " " * 22)
    print(f"{p['m']:5d} {p['systems']:7d} | " + " | ".join(cells) +
          f" | {p.get('ratio_flat', 0):6.2f} {p.get('ratio_interleaved', 0):6.2f}")
PY
exit $status
