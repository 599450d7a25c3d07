#!/usr/bin/env bash
# The L5PC network of cli_l5pc_net.sh against the installed NEURON, live:
# tests/neuron/l5pc_net_reference.py writes the network file and NEURON's spikes and voltages
# afresh (nrnivmodl on mechanisms/bbp and BBP's original ProbAMPANMDA_EMS.mod), then
# cli_l5pc_net.sh compares hinesbatch with them. Exit 77 (skipped) where NEURON or nrnivmodl
# is absent.
# Usage: l5pc_net_neuron.sh HINESBATCH DATA_DIR (HB_NEURON_PYTHON: the interpreter, default
# /usr/bin/python3, Debian's python3-neuron)
set -u
py=${HB_NEURON_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
if ! "$py" -c "from neuron import h; h.load_file('import3d.hoc')" > /dev/null 2>&1; then
    echo "l5pc_net_neuron: skipped: $py cannot import NEURON"
    exit 77
fi
if ! command -v nrnivmodl > /dev/null; then
    echo "l5pc_net_neuron: skipped: no nrnivmodl"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$py" "$here/neuron/l5pc_net_reference.py" --write-reference "$tmp" > "$tmp/log" 2>&1 ||
    { cat "$tmp/log"; exit 1; }
tail -1 "$tmp/log"
bash "$here/cli_l5pc_net.sh" "$1" "$2" "$tmp"
