#!/usr/bin/python3
"""NEURON 8.2 references for Neurolucida ASC files read by Import3d_Neurolucida3.

Writes tests/reference/neuron-asc/ (read by tests/test_asc.c and tests/cli_asc.sh). Run from the
repository root with Debian's NEURON (python3-neuron):

    /usr/bin/python3 tests/neuron/asc_reference.py [--out DIR] [DATA_DIR]

DATA_DIR defaults to data; DIR to tests/reference/neuron-asc. Each cell is loaded as NEURON users
load ASC: Import3d_Neurolucida3().input(file), then Import3d_GUI(reader, 0).instantiate(None).

NAME.txt, one line per section in Import3d's order (soma first, then the trees' sections depth
first), as hinesbatch orders them:
    s NAME TYPE PARENT PARENTX N3D NSEG AREA
PARENT is the parent's line index (-1 for the soma); NSEG is the d_lambda rule (0.1 of lambda_f at
100 Hz, Ra 100 ohm cm, cm 1 uF/cm2, as stdlib.hoc's geom_nseg); AREA the sum of area(x) over its
segments [um2]. Then its 3-D points in double precision, as Import3d computes them before pt3dadd
stores them in single precision (contour2centroid for the soma): "p X Y Z D" per point (--full,
the small files), or for a large cell "f" (first), "l" (last) and "S" (sums of x, y, z, d).
The double-precision points come from Import3d_GUI's own contour2centroid, reached through a copy
of NEURON's installed import3d_gui.hoc made at run time under another template name with that
procedure public (nothing of it is kept).

NAME_trace.txt: the passive cell (pas g 1e-4 S/cm2, e -65 mV everywhere, Ra 100, cm 1, d_lambda
nseg), IClamp 0.5 nA at soma(0.5) from 5 ms for 50 ms, dt 0.025 ms, v_init -65, 80 ms: t and
v(soma(0.5)) and v at the distal end (x = 1) of the section named in the header, every 0.5 ms.
"""
import os
import re
import sys

from neuron import h

h.load_file("stdrun.hoc")
h.load_file("import3d.hoc")

HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
OUT = os.path.join(HERE, "..", "reference", "neuron-asc")
for k, a in enumerate(sys.argv):
    if a == "--out":
        OUT = sys.argv[k + 1]
        ARGS.remove(a) if a in ARGS else None
        ARGS = [x for x in ARGS if x != OUT]
DATA = ARGS[0] if ARGS else os.path.join(HERE, "..", "..", "data")

# (file, full points, probe section for the trace)
CELLS = [
    (os.path.join(HERE, "..", "reference", "neuron-asc", "small.asc"), True, "apic[3]"),
    (os.path.join(HERE, "..", "reference", "neuron-asc", "stack.asc"), True, "dend[2]"),
    (os.path.join(DATA, "morphologies-asc", "C060114A7.asc"), False, "apic[100]"),
]


def gui_template():
    """Import3d_GUI with contour2centroid public, under another name (loaded once)."""
    if hasattr(h, "Import3d_GUI_asc_ref"):
        return h.Import3d_GUI_asc_ref
    path = None
    for d in (os.environ.get("NEURONHOME", ""), "/usr/share/nrn", "/usr/lib/nrn"):
        p = os.path.join(d, "lib", "hoc", "import3d", "import3d_gui.hoc")
        if os.path.exists(p):
            path = p
    if path is None:
        sys.exit("import3d_gui.hoc not found")
    text = open(path).read()
    text = re.sub(r"\bImport3d_GUI\b", "Import3d_GUI_asc_ref", text)
    text = text.replace("public swc,", "public contour2centroid, swc,", 1)
    h(text)
    return h.Import3d_GUI_asc_ref


def load(path):
    for s in list(h.allsec()):
        h.delete_section(sec=s)
    r = h.Import3d_Neurolucida3()
    r.quiet = 1
    r.input(path)
    g = gui_template()(r, 0)
    g.instantiate(None)
    byname = {s.name(): s for s in h.allsec()}
    names, types, secs, raw = [], [], [], []
    count = {}
    tname = {1: "soma", 2: "axon", 3: "dend", 4: "apic"}
    for i in range(int(r.sections.count())):
        sec = r.sections.object(i)
        if sec.is_subsidiary:
            continue
        t = int(sec.type)
        base = tname.get(t, "dend_%d" % t)
        names.append("%s[%d]" % (base, count.get(t, 0)))
        count[t] = count.get(t, 0) + 1
        types.append(t)
        secs.append(sec)
        j = int(sec.first)
        xx, yy, zz, dd = (sec.raw.getrow(0).c(j), sec.raw.getrow(1).c(j), sec.raw.getrow(2).c(j),
                          sec.d.c(j))
        if sec.iscontour_:  # through hoc: contour2centroid assigns its objref arguments
            h("objref asc_ref_v[4], asc_ref_g, asc_ref_sec")
            for c, v in enumerate((xx, yy, zz, dd)):
                h.asc_ref_v[c] = v
            h.asc_ref_g, h.asc_ref_sec = g, sec
            h("asc_ref_g.contour2centroid(asc_ref_v[0], asc_ref_v[1], asc_ref_v[2], asc_ref_v[3], asc_ref_sec)")
            xx, yy, zz, dd = (h.asc_ref_v[c] for c in range(4))
        raw.append([(xx.x[k], yy.x[k], zz.x[k], dd.x[k]) for k in range(int(dd.size()))])
    index = {secs[k].hname(): k for k in range(len(secs))}
    rows = []
    for k, sec in enumerate(secs):
        ps = sec.parentsec
        parent = index[ps.hname()] if ps is not None else -1
        nsec = byname[names[k]]
        rows.append((names[k], types[k], parent, float(sec.parentx) if parent >= 0 else 0.0, nsec))
    return g, r, rows, raw


def passive(rows):
    for (_, _, _, _, s) in rows:
        s.Ra = 100
        s.cm = 1
    for (_, _, _, _, s) in rows:  # geom_nseg: d_lambda 0.1 at 100 Hz
        s.nseg = int((s.L / (0.1 * h.lambda_f(100, sec=s)) + 0.9) / 2) * 2 + 1
        s.insert("pas")
        for seg in s:
            seg.pas.g = 1e-4
            seg.pas.e = -65


def write_geometry(path, name, rows, raw, full):
    with open(path, "w") as f:
        f.write("# NEURON %s Import3d_Neurolucida3 of %s: written by tests/neuron/asc_reference.py\n"
                % (h.nrnversion(5), name))
        f.write("# s NAME TYPE PARENT PARENTX N3D NSEG AREA; then p X Y Z D per 3-D point, or f, l, S\n")
        f.write("sections %d\n" % len(rows))
        for k, (nm, t, parent, px, s) in enumerate(rows):
            area = sum(seg.area() for seg in s)
            assert int(s.n3d()) == len(raw[k]), nm
            f.write("s %s %d %d %.17g %d %d %.17g\n" % (nm, t, parent, px, len(raw[k]), s.nseg, area))
            pts = raw[k]
            if full:
                for p in pts:
                    f.write("p %.17g %.17g %.17g %.17g\n" % p)
            else:
                f.write("f %.17g %.17g %.17g %.17g\n" % pts[0])
                f.write("l %.17g %.17g %.17g %.17g\n" % pts[-1])
                f.write("S %.17g %.17g %.17g %.17g\n" % tuple(sum(p[c] for p in pts) for c in range(4)))


def write_trace(path, name, rows, probe):
    soma = rows[0][4]
    tip = dict((r[0], r[4]) for r in rows)[probe]
    stim = h.IClamp(soma(0.5))
    stim.delay, stim.dur, stim.amp = 5, 50, 0.5
    t, vs, vt = h.Vector(), h.Vector(), h.Vector()
    t.record(h._ref_t, 0.5)
    vs.record(soma(0.5)._ref_v, 0.5)
    vt.record(tip(1)._ref_v, 0.5)
    h.dt = 0.025
    h.steps_per_ms = 40
    h.tstop = 80
    h.v_init = -65
    h.finitialize(-65)
    h.continuerun(80)
    index = [r[0] for r in rows].index(probe)
    with open(path, "w") as f:
        f.write("# NEURON %s, %s passive, IClamp 0.5 nA soma(0.5) 5-55 ms: t_ms v_soma v_%s(1) "
                "(section %d): written by tests/neuron/asc_reference.py\n"
                % (h.nrnversion(5), name, probe, index))
        for k in range(len(t)):
            f.write("%.3f %.9f %.9f\n" % (t[k], vs[k], vt[k]))


def main():
    os.makedirs(OUT, exist_ok=True)
    for path, full, probe in CELLS:
        name = os.path.splitext(os.path.basename(path))[0]
        g, r, rows, raw = load(path)
        passive(rows)
        write_geometry(os.path.join(OUT, name + ".txt"), os.path.basename(path), rows, raw, full)
        write_trace(os.path.join(OUT, name + "_trace.txt"), os.path.basename(path), rows, probe)
        print("%s: %d sections, %d 3-D points" % (name, len(rows), sum(len(p) for p in raw)))


if __name__ == "__main__":
    main()
