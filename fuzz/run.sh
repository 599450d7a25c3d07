#!/usr/bin/env bash
# Runs each libFuzzer target of BUILD_DIR/fuzz for SECONDS (default 60) from the seed corpora
# in fuzz/corpus, and for fuzz_nmodl the committed .mod files of mechanisms/ (copied: the
# repository's seeds stay as they are). A crash, a leak, an input
# slower than 120 seconds or one using more than 3 GB fails the run; its input is left in
# WORK_DIR/<target>/ as crash-*, leak-*, timeout-* or oom-*, to be replayed with
# `BUILD_DIR/fuzz/<target> FILE`.
#   fuzz/run.sh BUILD_DIR [SECONDS] [WORK_DIR]
set -euo pipefail
build=${1:?usage: fuzz/run.sh BUILD_DIR [SECONDS] [WORK_DIR]}
seconds=${2:-60}
here=$(cd "$(dirname "$0")" && pwd)
work=${3:-$build/fuzz-work}
timeout_s=120
failed=0
for target in swc asc model net checkpoint nmodl; do
  exe=$build/fuzz/fuzz_$target
  [ -x "$exe" ] || { echo "fuzz/run.sh: $exe not built (cmake -DHB_FUZZ=ON)" >&2; exit 1; }
  dir=$work/$target
  mkdir -p "$dir/corpus"
  if [ "$target" = nmodl ]; then
    # folder names keep same-named files apart (bbp/ProbAMPANMDA_EMS.mod is the port of
    # bbp/original/'s); tests/nmodl/ has the solvers' small files
    for mod in "$here"/../mechanisms/*/*.mod "$here"/../mechanisms/*/*/*.mod "$here"/../tests/nmodl/*.mod; do
      cp -n "$mod" "$dir/corpus/$(basename "$(dirname "$mod")")_$(basename "$mod")"
    done
  else
    cp -n "$here/corpus/$target"/* "$dir/corpus/"
  fi
  dict=()
  case $target in
    swc) ;;
    asc) dict=(-dict="$here/asc.dict") ;;
    checkpoint) export HB_FUZZ_WRITE_SEEDS=$dir/corpus ;; # this build's checkpoints as seeds too
    nmodl) dict=(-dict="$here/nmodl.dict") ;;
    *) dict=(-dict="$here/json.dict") ;;
  esac
  echo "== fuzz_$target: $seconds s"
  if ! "$exe" -max_total_time="$seconds" -timeout="$timeout_s" -rss_limit_mb=3072 \
       -print_final_stats=1 -artifact_prefix="$dir/" "${dict[@]}" "$dir/corpus" \
       > "$dir/log" 2>&1; then
    echo "fuzz_$target FAILED (log: $dir/log):" >&2
    tail -n 40 "$dir/log" >&2
    failed=1
  fi
  grep -E '^(stat::number_of_executed_units|stat::new_units_added|stat::peak_rss_mb)|^#[0-9]+[[:space:]]+DONE' \
       "$dir/log" || true
done
exit $failed
