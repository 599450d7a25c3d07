# Helpers for the CLI test scripts (sourced; not a test itself). Needs $tmp.
passed=0
failed=0
ok() { passed=$((passed + 1)); }
bad() { failed=$((failed + 1)); echo "FAIL: $*" >&2; }
# expect_status CODE DESCRIPTION -- command...: output in $tmp/out and $tmp/err
expect_status() {
    local want=$1 what=$2
    shift 3
    "$@" >"$tmp/out" 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq "$want" ]; then ok; else bad "$what: exit $rc, expected $want"; cat "$tmp/err" >&2; fi
}
expect_grep() { # FILE PATTERN DESCRIPTION
    if grep -q -- "$2" "$1"; then ok; else bad "$3: '$2' not in $(head -c 400 "$1")"; fi
}
# compare_neuron REFERENCE RUN-DIR SAMPLES LIMIT-MV DESCRIPTION: a `run --traces wide` output
# against NEURON's trace (tests/neuron/compare_trace.py: spikes in NEURON's steps, v within
# LIMIT-MV at each of SAMPLES samples)
compare_neuron() {
    /usr/bin/python3 "$(dirname "${BASH_SOURCE[0]}")/neuron/compare_trace.py" "$1" "$2/probes.csv" \
        "$2/spikes.dat" "$3" "$4" && ok || bad "$5: hinesbatch against NEURON"
}
