#!/usr/bin/env bash
# The SONATA check against its reference (docs/sonata.md): bmtk's NetworkBuilder builds the
# test circuit again (tests/sonata/build_circuit.py, into a copy), bmtk's BioNet runs it on
# NEURON (tests/sonata/bmtk_reference.py), and hinesbatch's spikes.dat of it must be BioNet's
# byte for byte (gid and time to 10 digits), as must the committed reference_spikes.dat.
# Skipped (77) where bmtk or NEURON does not import (bmtk on HB_BMTK_PYTHONPATH, e.g.
# pip install --target DIR bmtk) or NEURON's VecStim cannot be built (nrnivmodl).
# Usage: cli_sonata_bmtk.sh HINESBATCH DATA
set -u
bin=$1
here=$(cd "$(dirname "$0")" && pwd)
circuit=$here/sonata/circuit
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$here/lib_cli.sh"
py=/usr/bin/python3
export PYTHONPATH=${HB_BMTK_PYTHONPATH:-${PYTHONPATH:-}}
skip() { echo "cli_sonata_bmtk: skipped: $*"; exit 77; }
$py -c "import bmtk, neuron" > /dev/null 2>&1 || skip "bmtk or NEURON does not import (HB_BMTK_PYTHONPATH)"
"$bin" run "$circuit/simulation_config.json" -o "$tmp/probe" --quiet --traces none > /dev/null 2>&1 || {
    "$bin" run "$circuit/simulation_config.json" -o "$tmp/probe" --quiet 2>&1 | grep -q "needs HDF5" && skip "no HDF5"; }

# bmtk's virtual cells need VecStim (bmtk's vecevent.mod): built here where NEURON lacks it
if ! $py -c "from neuron import h; assert hasattr(h, 'VecStim')" > /dev/null 2>&1; then
    mod=$($py -c "import bmtk, os; print(os.path.join(os.path.dirname(bmtk.__file__), 'utils/scripts/bionet/mechanisms/modfiles/vecevent.mod'))" 2>/dev/null)
    [ -f "$mod" ] && command -v nrnivmodl > /dev/null || skip "no vecevent.mod or nrnivmodl"
    mkdir -p "$tmp/mech/modfiles" && cp "$mod" "$tmp/mech/modfiles/"
    (cd "$tmp/mech" && nrnivmodl modfiles > build.log 2>&1)
    if [ ! -f "$tmp/mech/x86_64/libnrnmech.so" ]; then # Debian's nrnivmodl: its files elsewhere
        nrnlib=$(dirname "$(find /usr/lib /usr/local/lib -name nrnmech_makefile 2>/dev/null | head -1)")
        mkdir -p "$tmp/nrnhome/bin" "$tmp/nrnhome/lib"
        for f in "$nrnlib/mkthreadsafe" "$nrnlib/nrnmech_makefile" "$(command -v nocmodl)" "$(command -v modlunit)" "$(command -v nrniv)"; do
            [ -e "$f" ] && ln -sf "$f" "$tmp/nrnhome/bin/"
        done
        ln -sf "$nrnlib/libnrniv.so" "$tmp/nrnhome/lib/"
        (cd "$tmp/mech" && rm -rf x86_64 && NRNHOME=$tmp/nrnhome nrnivmodl modfiles > build.log 2>&1)
    fi
    [ -f "$tmp/mech/x86_64/libnrnmech.so" ] || skip "VecStim (vecevent.mod) could not be built"
    export HB_NRNMECH=$tmp/mech/x86_64/libnrnmech.so
fi

# the circuit built again by bmtk, in a copy beside the same configs
cp -r "$circuit" "$tmp/c"
sed -i 's|\$BASE_DIR/../../../data/morphologies|'"$here/../data/morphologies"'|' "$tmp/c/circuit_config.json"
HB_SONATA_CIRCUIT_OUT=$tmp/c timeout 300 $py "$here/sonata/build_circuit.py" > "$tmp/build.log" 2>&1 && ok || {
    bad "build_circuit.py"; tail -5 "$tmp/build.log" >&2; }
timeout 300 $py "$here/sonata/bmtk_reference.py" "$tmp/c/simulation_config.json" "$tmp/bmtk" > "$tmp/bmtk.log" 2>&1 && ok || {
    bad "bmtk_reference.py"; tail -5 "$tmp/bmtk.log" >&2; }
expect_status 0 "hinesbatch on the rebuilt circuit" -- "$bin" run "$tmp/c/simulation_config.json" -o "$tmp/hb" --traces none
if cmp -s "$tmp/hb/spikes.dat" "$tmp/bmtk/spikes.dat"; then ok; else
    bad "hinesbatch's spikes differ from bmtk BioNet's"; diff "$tmp/hb/spikes.dat" "$tmp/bmtk/spikes.dat" | head >&2; fi
cmp -s "$tmp/bmtk/spikes.dat" "$circuit/reference_spikes.dat" && ok || bad "BioNet's spikes differ from the committed reference_spikes.dat"
[ "$(grep -vc '^#' "$tmp/bmtk/spikes.dat")" -gt 50 ] && ok || bad "BioNet's run spiked too little to check anything"
echo "cli_sonata_bmtk: $passed passed, $failed failed ($(grep -vc '^#' "$tmp/hb/spikes.dat") spikes compared)"
[ "$failed" -eq 0 ]
