#!/usr/bin/env bash
# The l5pc cell against the installed NEURON, live: tests/neuron/l5pc_reference.py compiles
# mechanisms/bbp with nrnivmodl and writes fresh references, then cli_l5pc.sh compares hinesbatch
# with them. Exit 77 (skipped) where NEURON or nrnivmodl is absent.
# Usage: l5pc_neuron.sh HINESBATCH DATA_DIR (HB_NEURON_PYTHON: the interpreter, default
# /usr/bin/python3, Debian's python3-neuron)
set -u
py=${HB_NEURON_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
if ! "$py" -c "from neuron import h; h.load_file('import3d.hoc')" > /dev/null 2>&1; then
    echo "l5pc_neuron: skipped: $py cannot import NEURON"
    exit 77
fi
if ! command -v nrnivmodl > /dev/null; then
    echo "l5pc_neuron: skipped: no nrnivmodl"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
asc=$root/data/morphologies-asc/C060114A7.asc
for variant in "" --no-cadyn; do
    out=$tmp/step3${variant:+_nocadyn}.txt
    "$py" "$here/neuron/l5pc_reference.py" "$asc" "$root/mechanisms/bbp" --step3 $variant \
        > "$out" 2> "$tmp/log" || { cat "$tmp/log"; exit 1; }
done
bash "$here/cli_l5pc.sh" "$1" "$2" "$tmp"
