#!/usr/bin/env bash
# Writes fuzz_checkpoint's seeds of hb_net_load_ranks (sets of rank files, first byte's bit 3):
# its two networks (HB_FUZZ_WRITE_MODELS) run by hinesbatch on 2 and 3 MPI ranks with a
# checkpoint at 16 ms, each rank's file stripped of hinesbatch run's record (the library's
# record follows it) and put in one input as a u32 length and its bytes, with and without the
# resealing bit. A seed, not a test: regenerate after a change of the format or of the models.
#   fuzz/rank_seeds.sh FUZZ_CHECKPOINT HINESBATCH_WITH_MPI OUT_DIR
set -euo pipefail
fuzzer=${1:?usage: fuzz/rank_seeds.sh FUZZ_CHECKPOINT HINESBATCH OUT_DIR} bin=${2:?} out=${3:?}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
HB_FUZZ_WRITE_MODELS=$tmp "$fuzzer" -runs=0 > /dev/null 2>&1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
for model in net net_pt; do
  for np in 2 3; do
    mpirun --allow-run-as-root -np "$np" "$bin" run "$tmp/$model.json" -o "$tmp/$model$np" \
      --quiet --checkpoint-every 16 --backend seq
    for sealed in 0 1; do
      name=$out/${model}_ranks$np$([ $sealed = 1 ] && echo _resealed || true).bin
      /usr/bin/python3 - "$tmp/$model$np" "$np" "$model" "$sealed" "$name" <<'PY'
import struct, sys
d, np, model, sealed, name = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), sys.argv[5]
first = 1 | (sealed << 1) | ((model == "net_pt") << 2) | 8
out = bytes([first])
for r in range(np):
    b = open(f"{d}/checkpoint.{r}.bin", "rb").read()
    assert b[:5] == b"HBRUN"
    (length,) = struct.unpack_from("<Q", b, 16)
    lib = b[24 + length + 8:]
    assert lib[:6] == b"HBCKPT"
    out += struct.pack("<I", len(lib)) + lib
open(name, "wb").write(out)
PY
    done
  done
done
ls -l "$out"/*_ranks*.bin
