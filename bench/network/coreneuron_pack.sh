#!/usr/bin/env bash
# The parts of the package index's neuron-gpu wheel (NEURON 8.2.2 with CoreNEURON built by
# NVHPC 22.1 for CUDA 11.5) that run busyring on a GPU without Python 3.11 or NVHPC, packed
# for a machine that cannot download (bench/network/README.md, "CoreNEURON GPU"):
#   nrniv-core   CoreNEURON with NEURON's own mechanisms (hh, pas, ExpSyn, NetStim), GPU code
#   nrniv, libnrniv.so, share/nrn/lib   NEURON without Python: writes CoreNEURON's input
#                (coreneuron_busyring.hoc), version 1.5 with this wheel's mechanism layout
#   NEURON_gpu.libs/   the NVHPC and CUDA 11.5 runtimes both need (the rest is left out)
# in the wheel's own layout, which their RPATHs ($ORIGIN/../../../NEURON_gpu.libs) expect.
#
# usage: bench/network/coreneuron_pack.sh OUT.tar.xz     (about 6.4 MB; run.sh coreneuron)
set -euo pipefail
out=${1:?output .tar.xz}
case $out in /*) ;; *) out=$PWD/$out ;; esac
version=8.2.2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# any CPython tag will do (only the binaries are used); cp311 is one the wheel has
pip download "neuron-gpu==$version" --no-deps --only-binary=:all: --python-version 3.11 \
  --platform manylinux2014_x86_64 -d "$work/whl" > "$work/pip.log" 2>&1 \
  || { cat "$work/pip.log"; exit 1; }
whl=$(ls "$work"/whl/*.whl)
mkdir "$work/x"
(cd "$work/x" && unzip -q "$whl" \
  'neuron/.data/bin/nrniv-core' 'neuron/.data/bin/nrniv' 'neuron/.data/lib/libnrniv.so' \
  'neuron/.data/share/nrn/lib/*' 'neuron/.data/lib/libnrnmpi_*' \
  'NEURON_gpu.libs/libacchost-*' 'NEURON_gpu.libs/libaccdevaux-*' \
  'NEURON_gpu.libs/libacccuda-*' 'NEURON_gpu.libs/libcudart-*' \
  'NEURON_gpu.libs/libcudadevice-*' 'NEURON_gpu.libs/libcudanvhpc-*' \
  'NEURON_gpu.libs/libnvhpcatm-*' 'NEURON_gpu.libs/libnvomp-*' \
  'NEURON_gpu.libs/libnvcpumath-avx2-*' 'NEURON_gpu.libs/libnvc-*')
chmod +x "$work/x/neuron/.data/bin/"*
echo "$(basename "$whl") $(wc -c < "$whl") bytes" > "$work/x/WHEEL"
tar cf - -C "$work/x" . | xz -T2 -9 > "$out"
echo "$out: $(wc -c < "$out") bytes from $(cat "$work/x/WHEEL")"
