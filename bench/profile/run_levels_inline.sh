#!/usr/bin/env bash
# On the GPU machine: the ptxas defect of docs/multi.md ("A compiler defect"). A copy of the
# tree with GROUPED's level loops inlined into grouped_kernel (staged_levels and
# global_levels __forceinline__ instead of __noinline__), then the chain tests of
# test_gpu_multi in that build, plain and under compute-sanitizer (tests/gpu/run_sanitizer.sh):
# a race or an out-of-bounds access reported there would be ours, not the compiler's.
# Usage: bench/profile/run_levels_inline.sh DATA_DIR [RUN...]   (RUN as run_sanitizer.sh's;
# default: none, memcheck, racecheck and synccheck of the chains). Logs go to $OUT/inline.
set -uo pipefail
cd "$(dirname "$0")/../.."
data=${1:?usage: run_levels_inline.sh DATA_DIR [RUN...]}
data=$(cd "$data" && pwd) || exit 2
shift
runs=("$@")
[ "${#runs[@]}" -gt 0 ] || runs=(none:multi:HB_TEST_PARTS=chains memcheck:multi:HB_TEST_PARTS=chains
                                 racecheck:multi:HB_TEST_PARTS=chains
                                 synccheck:multi:HB_TEST_PARTS=chains)
tree=/tmp/hb-levels-inline
rm -rf "$tree" && mkdir -p "$tree"
tar --exclude='./build*' --exclude=./.git --exclude=./out -cf - . | tar -xf - -C "$tree"
sed -i -E 's/__device__ __noinline__ void (staged|global)_levels/__device__ __forceinline__ void \1_levels/' \
  "$tree/src/cuda/multi_cuda.cu"
inlined=$(grep -c -E "__forceinline__ void (staged|global)_levels" "$tree/src/cuda/multi_cuda.cu")
[ "$inlined" -eq 2 ] || { echo "run_levels_inline.sh: $inlined of 2 functions inlined" >&2; exit 1; }
out=${OUT:-out}
mkdir -p "$out/inline"
OUT=$(cd "$out/inline" && pwd) HB_DEB_DIR=$(cd "${HB_DEB_DIR:-.device-data}" 2>/dev/null && pwd) \
  bash "$tree/tests/gpu/run_sanitizer.sh" "$data" "${runs[@]}"
