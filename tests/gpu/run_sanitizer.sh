#!/usr/bin/env bash
# On the GPU machine: the GPU tests under compute-sanitizer. memcheck (out-of-bounds and
# misaligned accesses, device leaks), racecheck (shared-memory hazards between threads of a
# block), synccheck (barriers reached by part of a block or warp), initcheck (device memory
# read before it was written). A run fails on any reported error (--error-exitcode) or on
# the test's own failure. One build with -lineinfo (build-san), so reports name source lines.
# Logs go to $OUT (default ./out), one per run, with summary.txt.
# Usage: tests/gpu/run_sanitizer.sh DATA_DIR [RUN...]
#   RUN: TOOL:TEST[:VAR=VALUE...], TOOL one of memcheck racecheck synccheck initcheck (or
#   none: the same build without the sanitizer), TEST
#   one of hines tridiag multi sim; e.g. racecheck:multi:HB_TEST_PARTS=chains or
#   memcheck:sim:HB_TEST_STEPS=400 (test_gpu_sim takes minutes at its 10,000 steps).
#   Default: the list below, about 390 s of runs and a 65 s build on an H100 (one call).
# HB_SAN_TIMEOUT: seconds a run may take (default 300); one that takes longer fails.
set -uo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: run_sanitizer.sh DATA_DIR [TOOL:TEST[:VAR=VALUE...]...]}
data=$(cd "$data" && pwd) || { echo "run_sanitizer.sh: no folder $1" >&2; exit 2; }
shift
runs=("$@")
if [ "${#runs[@]}" -eq 0 ]; then
  # seconds each took on an H100 (bench/results/sanitizer-h100.txt) in comments;
  # racecheck takes 20-100x a plain run, so it sees parts of the hines and tridiag tests.
  # Not in the default: test_gpu_sim at HB_TEST_STEPS=240 takes 402 s under memcheck, 373 s
  # under initcheck (a device call each), 50 s under racecheck and about 20 s under synccheck
  runs=(memcheck:multi                                             # 19
        racecheck:multi:HB_TEST_PARTS=chains                       # 18
        racecheck:multi:HB_TEST_PARTS=random,fig14,real            # 97
        synccheck:multi:HB_TEST_PARTS=chains,fig14,real            # 4
        initcheck:multi:HB_TEST_PARTS=chains,random,fig14          # 12
        memcheck:hines                                             # 45
        synccheck:hines                                            # 30
        racecheck:hines:HB_TEST_COUNTS=5                           # 122
        initcheck:hines:HB_TEST_COUNTS=5,33                        # 14
        memcheck:tridiag:HB_TEST_CASE=8192,20,0,1,0,1              # 1
        memcheck:tridiag:HB_TEST_CASE=512,300,1,1,1,1              # 0
        racecheck:tridiag:HB_TEST_CASE=8192,20,0,1,0,1             # 24
        racecheck:tridiag:HB_TEST_CASE=512,300,1,1,1,1)            # 1
fi
out=${OUT:-out}
mkdir -p "$out"
command -v compute-sanitizer > /dev/null ||
  { echo "run_sanitizer.sh: compute-sanitizer is not on the PATH" >&2; exit 2; }
{ nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
  compute-sanitizer --version | tail -1; date -u
  cat COMMIT 2>/dev/null || git rev-parse HEAD 2>/dev/null || true; } > "$out/machine.txt" 2>&1
cat "$out/machine.txt"
source tests/gpu/configure.sh
build=build-san
HB_GPU_BUILD=$build HB_GPU_CMAKE_ARGS="-DCMAKE_CUDA_FLAGS=-lineinfo" \
  hb_gpu_configure "$out" "$data/.." "${HB_DEB_DIR:-.device-data}" || exit 1
targets=()
for run in "${runs[@]}"; do
  IFS=: read -r tool test _ <<< "$run"
  case $tool in memcheck | racecheck | synccheck | initcheck | none) ;;
    *) echo "run_sanitizer.sh: unknown tool '$tool' in '$run'" >&2; exit 2 ;; esac
  case $test in hines | tridiag | multi | sim) targets+=("test_gpu_$test") ;;
    *) echo "run_sanitizer.sh: unknown test '$test' in '$run'" >&2; exit 2 ;; esac
done
mapfile -t targets < <(printf '%s\n' "${targets[@]}" | sort -u)
start=$(date +%s)
cmake --build $build -j "$(nproc)" --target "${targets[@]}" > "$out/build.log" 2>&1 ||
  { tail -30 "$out/build.log"; exit 1; }
echo "build: $(( $(date +%s) - start )) s"
status=0
for run in "${runs[@]}"; do
  IFS=: read -r -a fields <<< "$run"
  tool=${fields[0]} test=${fields[1]} vars=("${fields[@]:2}")
  args=("$data")
  [ "$test" = tridiag ] && args=()  # test_gpu_tridiag makes its own systems
  sanitizer=(compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 200
             --show-backtrace device)
  case $tool in
    memcheck) sanitizer+=(--leak-check full) ;;
    racecheck) sanitizer+=(--racecheck-report analysis) ;;
    none) sanitizer=() ;;
  esac
  log="$out/$(echo "$run" | tr ':=,/' '____').log"
  start=$(date +%s)
  env "${vars[@]}" timeout "${HB_SAN_TIMEOUT:-300}" "${sanitizer[@]}" \
    "./$build/test_gpu_$test" "${args[@]}" > "$log" 2>&1
  rc=$?
  [ "$rc" -eq 0 ] || status=1
  { echo "$run: exit $rc, $(( $(date +%s) - start )) s;" \
      "$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY|LEAK SUMMARY" "$log" | tr '\n' ' ')" \
      "$(grep -v "^=" "$log" | tail -1)"
    # where the reports point: source lines with their counts, thread numbers and offsets
    # left out
    [ "$rc" -eq 0 ] || grep -E "^=========" "$log" | grep -oE "[A-Za-z_]+ .* in [^ ]+:[0-9]+" |
      sed -E 's/\([0-9]+,[0-9]+,[0-9]+\)//g; s/\+0x[0-9a-f]+//; s/at 0x[0-9a-f]+ //' |
      sort | uniq -c | sort -rn | head -8
  } | tee -a "$out/summary.txt"
done
exit "$status"
