#!/usr/bin/python3
"""NEURON 8.2 references for multi-point somas, zero radii and Import3d's stem rules.

Writes tests/reference/neuron-soma/ (read by tests/test_neuron_soma.c). Run from the repository root
with Debian's NEURON (python3-neuron):

    /usr/bin/python3 tests/neuron/soma_reference.py [DATA_DIR]

DATA_DIR defaults to data. Every cell is loaded as NEURON users load SWC: Import3d_SWC_read,
then Import3d_GUI(...).instantiate(None). Ra 100 ohm cm, cm 1 uF/cm2, pas (g 1e-4 S/cm2, e -65 mV)
everywhere, dt 0.025 ms, backward Euler (secondorder 0).

NAME_matrix.txt: the matrix of one step after finitialize(-65) (fcurrent, then fmatrix per node): a, b,
d of every node, with its area and ri. NEURON keeps 3-D points in single precision, so the matrix
files are made from a copy of the cell on a grid that single precision holds exactly (coordinates
rounded to 1/8 um, radii to 1/16 um, at least 1/16 um; quantize() below, which the C test repeats):
then the matrices must agree to rounding.
NAME_trace.txt: the original file (no grid), hh in the soma sections, IClamp 2 nA at the root
section's 0.5 from 1 ms, 20 ms: voltage at the soma, a stem's first segment and a tip every 0.25 ms,
and the soma's spike times.
"""
import math
import os
import sys
import tempfile

from neuron import h
from nrnref import on_grid

h.load_file("stdlib.hoc")
h.load_file("import3d.hoc")

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "reference", "neuron-soma")
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "data")

# Hand-made cells (ids, types, coordinates and radii exact in single precision).
# contour: a 9-point contour-stack soma in two branches from the root (as NeuroMorpho.Org
# writes them), with stems at the root, at an interior soma point, at both soma ends, a stem
# listed out of order, a branch at a stem's first point, and a type change along a dendrite.
CONTOUR = """# hand-made contour-stack soma
1 1 0 0 0 4 -1
2 1 0 2 0 5.5 1
3 1 0.25 4 0 6 2
4 1 0.5 6 0.25 5 3
5 1 0.5 8 0.5 3 4
6 3 1 12 0.5 1.5 5
7 3 2 20 1 1.25 6
8 3 4 28 1.5 1 7
9 3 1 36 2 0.75 8
10 3 6 32 2 0.75 8
11 1 0 -2 0 5 1
12 1 -0.25 -4 0 3.5 11
13 1 -0.25 -5 0 2 12
14 2 0 -9 0 0.5 13
15 2 0.5 -30 0 0.5 14
16 2 1 -60 1 0.375 15
17 3 8 3 0 1 3
18 3 16 3 1 0.875 17
19 3 28 4 1 0.75 18
20 4 40 5 1 0.75 19
21 4 60 6 2 0.5 20
22 3 -8 0 0 1 1
23 3 -20 1 0 0.75 22
24 3 -30 2 0 0.5 23
25 3 -14 -8 0 0.625 22
26 3 -20 -16 0 0.5 25
27 3 4 -1 0 0.75 1
28 3 12 -3 0 0.625 27
"""

# zero: a 1-point soma and dendrites with radius-0 samples inside, at a fork and at a tip.
ZERO = """# hand-made cell with zero radii
1 1 0 0 0 5 -1
2 3 6 0 0 1 1
3 3 14 0 0 0.75 2
4 3 22 0 0 0 3
5 3 30 0 0 0.75 4
6 3 38 0 0 0.5 5
7 3 46 4 0 0 6
8 3 50 -6 0 0.5 6
9 3 58 -10 0 0.375 8
10 3 -6 0 0 1 1
11 3 -16 2 0 0.75 10
12 3 -26 4 0 0.5 11
13 3 -36 6 0 0 12
"""

# soma3: a 3-point soma that is not NeuroMorpho.Org's sphere (unequal diameters): two sections.
SOMA3 = """# hand-made 3-point soma, not a sphere
1 1 0 0 0 5 -1
2 1 0 -4 0 4 1
3 1 0 4 0 4.5 1
4 3 0 10 0 1 3
5 3 2 30 0 0.75 4
6 3 -2 -10 0 1 2
7 3 -4 -30 0 0.5 6
8 2 6 0 0 0.5 1
9 2 20 0 0 0.375 8
"""


# removed: Import3d's chk_valid removes a one-point stem (a wire from a root with two soma
# children) and a stem of two coincident points, whose children take its place.
REMOVED = """# hand-made cell with sections Import3d removes
1 1 0 0 0 4 -1
2 1 0 4 0 3 1
3 1 0 -4 0 3 1
4 3 5 0 0 1 1
5 3 0 4 0 1 2
6 3 0 12 0 1 5
7 3 3 12 0 0.75 5
8 3 6 20 0 0.5 7
"""

def quantize(path):
    """The SWC text on the grid (nrnref.on_grid)."""
    with open(path) as f:
        return on_grid(f.read())


def clear():
    for sec in list(h.allsec()):
        h.delete_section(sec=sec)


def load(text):
    """Import3d as NEURON users do; returns (sections in creation order, end SWC id of each, root is sphere)."""
    clear()
    with tempfile.NamedTemporaryFile("w", suffix=".swc", delete=False) as f:
        f.write(text)
        name = f.name
    swc = h.Import3d_SWC_read()
    swc.quiet = 1
    swc.input(name)
    gui = h.Import3d_GUI(swc, 0)
    gui.instantiate(None)
    os.unlink(name)
    secs = list(h.allsec())  # TYPE order; the root section goes first
    secs.sort(key=lambda sec: h.SectionRef(sec=sec).has_parent())
    # instantiate() names the sections TYPE[k], k counting per type in swc.sections order (what
    # chk_valid kept); the last raw point of each is the SWC sample ending it.
    kept = [swc.sections.o(i) for i in range(int(swc.sections.count()))]
    assert len(kept) == len(secs), (len(kept), len(secs))
    names = {1: "soma", 2: "axon", 3: "dend", 4: "apic"}
    count, end_of = {}, {}
    for s in kept:
        t = int(s.type)
        base = names.get(t, "dend_%d" % t if t >= 0 else "minus_%d" % -t)
        end_of["%s[%d]" % (base, count.get(t, 0))] = int(
            swc.id.x[int(s.id + s.raw.ncol() - 1 - (1 if s.parentsec is not None else 0))])
        count[t] = count.get(t, 0) + 1
    ends = [end_of[sec.name()] for sec in secs]
    sphere = int(kept[0].raw.ncol()) == 1
    return secs, ends, sphere


def set_nseg(secs, sphere, policy):
    for k, sec in enumerate(secs):
        sec.Ra = 100  # lambda_f reads Ra and cm
        sec.cm = 1
        if policy == "per-segment":
            n = sum(1 for i in range(1, sec.n3d()) if sec.arc3d(i) > sec.arc3d(i - 1))
            sec.nseg = 1 if (k == 0 and sphere) or n < 1 else n
        else:  # NEURON's d_lambda rule, 0.1 at 100 Hz
            sec.nseg = int((sec.L / (0.1 * h.lambda_f(100, sec=sec)) + 0.9) / 2) * 2 + 1


def setup(secs, hh):
    for sec in secs:
        sec.Ra = 100
        sec.cm = 1
        sec.insert("pas")
        for seg in sec:
            seg.pas.g = 1e-4
            seg.pas.e = -65
        if hh and sec.name().startswith("soma"):
            sec.insert("hh")
    h.dt = 0.025
    h.secondorder = 0
    h.celsius = 6.3


def nodes(secs):
    """NEURON's nodes: (section index, x, kind): root x=0 (kind 0), centres (1), x=1 ends (2)."""
    out = [(0, 0.0, 0)]
    for k, sec in enumerate(secs):
        for seg in sec:
            out.append((k, seg.x, 1))
        out.append((k, 1.0, 2))
    return out


def write_matrix(name, text, policy, keep_note=""):
    secs, ends, sphere = load(text)
    set_nseg(secs, sphere, policy)
    setup(secs, hh=False)
    h.finitialize(-65)
    h.fcurrent()
    index = {s.name(): k for k, s in enumerate(secs)}
    rows = []
    for k, x, kind in nodes(secs):
        sec = secs[k]
        seg = sec(x)
        a, d, b = (h.fmatrix(seg, j) for j in (1, 2, 3))
        if kind == 1:
            area, ri = seg.area(), seg.ri()
        else:  # zero-area nodes: NEURON's nominal 100 um2; ri of the x=1 node via its SectionRef
            area = 100.0
            ri = seg.ri() if kind == 2 else -1.0
        rows.append((k, x, kind, area, ri, a, b, d))
    path = os.path.join(OUT, name + "_matrix.txt")
    with open(path, "w") as f:
        f.write("# NEURON %s Import3d; %s; policy %s; Ra 100, cm 1, pas g 1e-4 e -65, dt 0.025, "
                "finitialize(-65), fcurrent(), fmatrix(seg, 1..3)%s\n" % (h.nrnversion(), name, policy, keep_note))
        f.write("# sections %d: index name parent parent_x nseg end_swc_id\n" % len(secs))
        for k, sec in enumerate(secs):
            ref = h.SectionRef(sec=sec)
            if ref.has_parent():
                ps = sec.parentseg()
                parent, px = index[ps.sec.name()], ps.x
            else:
                parent, px = -1, 0.0
            f.write("S %d %s %d %.17g %d %d\n" % (k, sec.name(), parent, px, sec.nseg, ends[k]))
        f.write("# rows: section x kind area_um2 ri_Mohm a b d (kind 0 root x=0, 1 centre, 2 x=1 end;"
                " zero-area nodes have area 100 and the root no ri)\n")
        for r in rows:
            f.write("%d %.10g %d %.14g %.14g %.14g %.14g %.14g\n" % r)
    return len(rows)


def stem_and_tip(secs, ends):
    """First non-soma child of the root section (its first segment) and the farthest tip."""
    stem = next(k for k, s in enumerate(secs) if not s.name().startswith("soma") and
                h.SectionRef(sec=s).has_parent() and h.SectionRef(sec=s).parent.name().startswith("soma"))
    h.distance(0, 0.5, sec=secs[0])
    tips = [k for k, s in enumerate(secs) if h.SectionRef(sec=s).nchild() == 0]
    tip = max(tips, key=lambda k: h.distance(1.0, sec=secs[k]))
    return stem, tip


def write_trace(name, text, policy):
    secs, ends, sphere = load(text)
    set_nseg(secs, sphere, policy)
    setup(secs, hh=True)
    stim = h.IClamp(secs[0](0.5))
    stim.delay, stim.dur, stim.amp = 1.0, 1e9, 2.0
    stem, tip = stem_and_tip(secs, ends)
    sites = [(0, 0.5), (stem, 0.5 / secs[stem].nseg), (tip, 1.0 - 0.5 / secs[tip].nseg)]
    nc = h.NetCon(secs[0](0.5)._ref_v, None, sec=secs[0])
    nc.threshold = 0
    spikes = h.Vector()
    nc.record(spikes)
    h.finitialize(-65)
    rows = []
    step = 0
    while True:
        t = step * h.dt
        if step % 10 == 0:
            rows.append((t,) + tuple(secs[k](x).v for k, x in sites))
        if t >= 20.0 - 1e-9:
            break
        h.fadvance()
        step += 1
    path = os.path.join(OUT, name + "_trace.txt")
    with open(path, "w") as f:
        f.write("# NEURON %s Import3d; %s; policy %s; pas everywhere, hh in soma sections, IClamp "
                "del=1 amp=2 nA at %s(0.5); dt 0.025, 20 ms, BE\n" % (h.nrnversion(), name, policy, secs[0].name()))
        for label, (k, x) in zip(("soma", "stem", "tip"), sites):
            f.write("# probe %s %s end_swc_id=%d x=%.17g nseg=%d\n" % (label, secs[k].name(), ends[k], x, secs[k].nseg))
        f.write("# spikes (NetCon threshold 0 at the soma probe): %s\n" % " ".join("%.6f" % t for t in spikes))
        f.write("# t_ms v_soma v_stem v_tip\n")
        for r in rows:
            f.write("%.6f %.17g %.17g %.17g\n" % r)
    return len(rows), len(spikes)


def main():
    os.makedirs(OUT, exist_ok=True)
    morph = os.path.join(DATA, "morphologies")
    real = [("l22", "l22.CNG.swc"), ("ca1_n120", "morph_ca1_n120.swc"), ("l5pc", "morph_l5pc_with_axon.swc")]
    made = [("contour", CONTOUR), ("zero", ZERO), ("soma3", SOMA3), ("removed", REMOVED)]
    for name, text in made:
        with open(os.path.join(OUT, name + ".swc"), "w") as f:
            f.write(text)
        n = write_matrix(name, text, "per-segment")
        print(name, "matrix rows", n, "trace", write_trace(name, text, "per-segment"))
    for name, file in real:
        path = os.path.join(morph, file)
        n = write_matrix(name, quantize(path), "d-lambda")
        with open(path) as f:
            text = f.read()
        print(name, "matrix rows", n, "trace", write_trace(name, text, "per-segment"))


if __name__ == "__main__":
    main()
