#!/usr/bin/env bash
# Crank-Nicolson with catalogue mechanisms against the installed NEURON, live: neuron_cat_bbp.py
# --cadyn --cn writes NEURON's secondorder 2 reference afresh (small.swc, the bbp channels,
# CaDynamics_E2 writing cai), test_sim_cat compares hinesbatch with it (every spike in NEURON's
# step, the soma within 0.05 mV, cai to 1e-6), and where this NEURON is the one that wrote the
# committed tests/neuron_cat_bbp_cn.txt the two are the same bytes. Exit 77 (skipped) where
# NEURON or nrnivmodl is absent.
# Usage: cat_cn_neuron.sh TEST_SIM_CAT DATA_DIR (HB_NEURON_PYTHON: the interpreter, default
# /usr/bin/python3, Debian's python3-neuron)
set -u
py=${HB_NEURON_PYTHON:-/usr/bin/python3}
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
if ! "$py" -c "from neuron import h; h.load_file('import3d.hoc')" > /dev/null 2>&1; then
    echo "cat_cn_neuron: skipped: $py cannot import NEURON"
    exit 77
fi
if ! command -v nrnivmodl > /dev/null; then
    echo "cat_cn_neuron: skipped: no nrnivmodl"
    exit 77
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/neuron_cat_bbp_cn.txt
"$py" "$here/neuron_cat_bbp.py" "$2/reference/neuron-matrix/small.swc" "$root/mechanisms/bbp" \
    --cadyn --cn > "$out" 2> "$tmp/log" || { cat "$tmp/log"; exit 1; }
status=0
if [ "$(head -c 120 "$out")" = "$(head -c 120 "$here/neuron_cat_bbp_cn.txt")" ]; then
    if cmp -s "$out" "$here/neuron_cat_bbp_cn.txt"; then
        echo "cat_cn_neuron: NEURON wrote the committed reference byte for byte"
    else
        echo "cat_cn_neuron: FAIL: the same NEURON now writes another reference:"
        diff "$out" "$here/neuron_cat_bbp_cn.txt" | head -20
        status=1
    fi
else
    echo "cat_cn_neuron: another NEURON than the committed reference's: compared live only"
fi
"$1" "$tmp" || status=1
exit $status
