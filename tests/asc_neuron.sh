#!/usr/bin/env bash
# ASC against the installed NEURON, live: tests/neuron/asc_reference.py writes fresh references
# with it, then test_asc (sections, 3-D points, d_lambda segments, areas) and cli_asc.sh (passive
# traces within 0.05 mV) compare hinesbatch with them. Exit 77 (skipped) where no NEURON is found.
# Usage: asc_neuron.sh TEST_ASC HINESBATCH DATA_DIR  (HB_NEURON_PYTHON: the interpreter, default
# /usr/bin/python3, Debian's python3-neuron)
set -u
py=${HB_NEURON_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
if ! "$py" -c "from neuron import h; h.load_file('import3d.hoc')" > /dev/null 2>&1; then
    echo "asc_neuron: skipped: $py cannot import NEURON"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$here/neuron/asc_reference.py" --out "$tmp" "$3" > "$tmp/log" 2>&1 || { cat "$tmp/log"; exit 1; }
"$1" "$tmp" && bash "$here/cli_asc.sh" "$2" "$3" "$tmp"
