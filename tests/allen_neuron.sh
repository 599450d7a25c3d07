#!/usr/bin/env bash
# The Allen cell against the installed NEURON, live: tests/neuron/allen_reference.py compiles
# mechanisms/allen with nrnivmodl and writes fresh references (off and on the grid), then cli_allen.sh compares
# hinesbatch with it. Exit 77 (skipped) where NEURON or nrnivmodl is absent.
# Usage: allen_neuron.sh HINESBATCH DATA_DIR (HB_NEURON_PYTHON: the interpreter, default
# /usr/bin/python3, Debian's python3-neuron)
set -u
py=${HB_NEURON_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
if ! "$py" -c "from neuron import h; h.load_file('import3d.hoc')" > /dev/null 2>&1; then
    echo "allen_neuron: skipped: $py cannot import NEURON"
    exit 77
fi
if ! command -v nrnivmodl > /dev/null; then
    echo "allen_neuron: skipped: no nrnivmodl"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for grid in "" --grid; do
    "$py" "$here/neuron/allen_reference.py" "$root/data/morphologies/single_cell_allen.swc" \
        "$root/data/models/single_cell_allen_fit.json" "$root/mechanisms/allen" --short $grid \
        > "$tmp/short${grid:+_grid}.txt" 2> "$tmp/log" || { cat "$tmp/log"; exit 1; }
done
bash "$here/cli_allen.sh" "$1" "$2" "$tmp"
