#!/usr/bin/env bash
# The pipelined Hines kernel's knobs (src/cuda/hines_cuda.cu) on an H100, beside
# the paper's Full-Interleaved kernel: one bench run per setting.
# Usage (GPU machine, after tests/gpu/run_hines.sh built build-dev):
#   bench/pipelined_variants.sh DATA_DIR [cells] [morphs]
set -uo pipefail
cd "$(dirname "$0")/.."
data=${1:?usage: pipelined_variants.sh DATA_DIR [cells] [morphs]}
cells=${2:-256000}
morphs=${3:-medium-high,big-low}
out=${OUT:-out}
mkdir -p "$out"
run() { # label, env assignments...
  local label=$1; shift
  echo "== $label"
  env "$@" ./build-dev/hinesbatch bench hines --data "$data" --no-cpu --cells "$cells" \
    --morphs "$morphs" --repeats 5 --only "full-interleaved,pipelined" \
    --json-out "$out/variant-$label.json" 2>&1 | grep -E "cells|interleaved|pipelined|rows" | grep -v "^ *[0-9]* cells  config"
}
if [ -n "${VARIANTS:-}" ]; then # "label:VAR=x,VAR=y label2:..." instead of the list below
  for v in $VARIANTS; do
    IFS=, read -r -a assigns <<< "${v#*:}"
    run "${v%%:*}" "${assigns[@]}"
  done
  exit 0
fi
run default
run t256 HB_PIPE_THREADS=256
run tail-max HB_PIPE_TAIL=100000
run t256-tail16 HB_PIPE_THREADS=256 HB_PIPE_TAIL=16
run pf8 HB_PIPE_PREFETCH=8
run pf2 HB_PIPE_PREFETCH=2
run pf2-t256 HB_PIPE_PREFETCH=2 HB_PIPE_THREADS=256
run nodiscard HB_PIPE_DISCARD=0
run percell HB_PIPE_UNIFORM=0
