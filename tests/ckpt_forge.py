#!/usr/bin/env python3
"""Forges a field of a hinesbatch run checkpoint (docs/checkpoint.md) and recomputes every
FNV-1a checksum, as an attacker would: what the reader must then refuse is the value, not the
checksum. Usage: ckpt_forge.py IN OUT CASE (cases: see FORGERIES; "to-v2" instead writes the
format version 2 form of a checkpoint without connections to point processes, "to-v1" the
version 1 form of one without catalogue state, "to-v4" the version 4 form of one without
waiting self-events, "to-v3" the version 3 form (the engine's
blocks as one thread laid them out), as older builds wrote them); exit 2 when the
checkpoint lacks what CASE changes (e.g. no spikes yet, no catalogue mechanisms)."""
import math
import struct
import sys

H0, PRIME, MASK = 0xcbf29ce484222325, 0x100000001b3, (1 << 64) - 1


def fnv(data, h=H0):
    for c in data:
        h = ((h ^ c) * PRIME) & MASK
    return h


def split(blob):
    """The run's record and the library's record: (header, payload) each, in file order."""
    n = struct.unpack_from("<Q", blob, 16)[0]
    run = (blob[:24], bytearray(blob[24:24 + n]))
    at = 24 + n + 8
    m = struct.unpack_from("<Q", blob, at + 24)[0]
    lib = (blob[at:at + 32], bytearray(blob[at + 32:at + 32 + m]))
    return run, lib


def join(run, lib):
    out = bytearray()
    for head, payload in (run, lib):
        out += head + payload + struct.pack("<Q", fnv(payload, fnv(head)))
    return bytes(out)


def net_layout(p, version=3):
    """Offsets in a network payload: spikes' start and count, events' start, count and size
    (version 3: each with its weight vector), the sources' start and count, the simulation's
    start (or None)."""
    cable, sources = struct.unpack_from("<qq", p, 24)
    at = 48 + 8 * cable
    src_at = at
    at += 16 * sources
    pending = struct.unpack_from("<Q", p, at)[0]
    ev_at = at + 8
    ev_size = 48 if version >= 3 else 40
    at = ev_at + ev_size * pending
    spikes = struct.unpack_from("<Q", p, at)[0]
    sp_at = at + 8
    at = sp_at + 16 * spikes
    has_sim = struct.unpack_from("<q", p, at)[0]
    return {"cable": cable, "seen": 48, "src": src_at, "sources": sources, "ev": ev_at,
            "events": pending, "ev_size": ev_size, "sp": sp_at, "spikes": spikes, "sim": at + 8 if has_sim else None}


def lib_version(lib):
    return struct.unpack_from("<I", lib[0], 8)[0]


def sim_layout(p, at, version=4):
    """Offsets in a simulation payload from `at`: the step, group 0's first voltage, and from
    version 2 each group's catalogue layout (offsets of its mechanism count, first name, ...,
    version 3 each mechanism's catalogue identity) and values (each mechanism's fields, each
    ion's five arrays), and from version 3 the weight vectors (count, then target and 8 values
    each). Version 4 holds each group's values cell by cell (sizes: cells, nodes, hh instances,
    synapse values; a mechanism's instances those of the cells), versions 2 and 3 in the
    engine's blocks (sizes: nodes, lanes, cells, blocks, hh instances, synapse values)."""
    groups = struct.unpack_from("<q", p, at + 16)[0]
    nd = 4 if version >= 4 else 6
    dims = [struct.unpack_from(f"<{nd}q", p, at + 32 + 8 * nd * g) for g in range(groups)]
    step_at = at + 32 + 8 * nd * groups
    L = {"dims": dims, "dims_at": at + 32}
    L.update({"step": step_at, "groups": groups, "cat": []})
    o = step_at + 8
    for g in range(groups if version >= 2 else 0):
        cat = {"count": o, "mechs": [], "ions": []}
        n = struct.unpack_from("<q", p, o)[0]
        o += 8
        for _ in range(n):
            k = struct.unpack_from("<q", p, o)[0]
            sizes = struct.unpack_from("<5q", p, o + 8 + k)
            name = bytes(p[o + 8:o + 8 + k]).decode()
            cat["mechs"].append({"name": o + 8, "text": name, "sizes": sizes,
                                 "identity": o + 8 + k + 40 if version >= 3 else None})
            o += 8 + k + 40 + (8 if version >= 3 else 0)
        n = struct.unpack_from("<q", p, o)[0]
        o += 8
        for _ in range(n):
            k = struct.unpack_from("<q", p, o)[0]
            cat["ions"].append({"name": o + 8})
            o += 8 + k + 8
        L["cat"].append(cat)
    L["v"] = o
    for g in range(groups if version >= 2 else 0):  # v, hh gates, synapse states, catalogue
        if version >= 4:
            count, v_size, hh, syn = dims[g]
            width, hh_size = 1, hh * 3
        else:
            m, width, count, blocks, hh, syn = dims[g]
            v_size = -m * width if m < 0 else blocks * m * width
            hh_size = (hh if m < 0 else blocks * hh) * width * 3
        L["cat"][g]["at"] = o
        o += 8 * (v_size + hh_size + syn)
        if g == 0:
            L["width"], L["v_size"] = width, v_size
        for mech in L["cat"][g]["mechs"]:
            mech["fields"] = o
            n_field, _, _, _, inst = mech["sizes"]
            o += 8 * inst * n_field * width
        for ion in L["cat"][g]["ions"]:
            ion["arrays"] = o
            o += 8 * 5 * v_size
    if version >= 3:
        L["weights"] = o
        L["n_weights"] = struct.unpack_from("<q", p, o)[0]
    if version >= 5:  # the self-events: sequence, count, then 5 int64 and 3 doubles each
        L["self"] = o + 16 + L["n_weights"] * (8 + 8 * 8)
        L["n_self"] = struct.unpack_from("<q", p, L["self"] + 8)[0]
    return L


def sim_drop_self(p, at):
    """A version 5 simulation payload from `at` without its (empty: else exit 2) self-events,
    as version 4 wrote it."""
    L = sim_layout(p, at, 5)
    if L["n_self"]:
        sys.exit(2)  # waiting self-events: version 4 cannot hold them
    del p[L["self"]:L["self"] + 16]
    return p


def to_v4(blob):
    """A version 5 checkpoint without self-events in format version 4."""
    run, lib = split(blob)
    if lib_version(lib) < 5:
        return blob
    p = bytearray(lib[1])
    net = lib[0][20:24] == struct.pack("<I", 2)
    sim_at = net_layout(p, 5)["sim"] if net else 0
    if sim_at is not None:
        p = sim_drop_self(p, sim_at)
    head = bytearray(lib[0])
    struct.pack_into("<I", head, 8, 4)
    struct.pack_into("<Q", head, 24, len(p))
    return join(run, (bytes(head), p))


def sim_to_v3(p, at):
    """A version 4 simulation payload from `at` to the end, in version 3's layout as a run on
    one thread (backend seq) laid it out: every group's cells copies of one shape (else exit
    2), 16 lanes halved while half of them hold every cell, the cells in order, lane
    k of block b cell b W + k; hh instances, synapses (lane-interleaved: the same sites on every
    cell) and catalogue instances per block; padding lanes copies of their block's lane 0
    (catalogue fields 0, as the engine keeps them)."""
    L = sim_layout(p, at, 4)
    groups, dims = L["groups"], L["dims"]
    d = lambda o, n: list(struct.unpack_from(f"<{n}d", p, o))
    head = bytearray(p[at:L["dims_at"]])
    six, values = [], bytearray()
    for g in range(groups):
        count, rows, hh, syn = dims[g]
        if count < 1 or rows % count or hh % count or syn % (2 * count):
            sys.exit(2)
        m, nh, nq = rows // count, hh // count, syn // (2 * count)
        W = 16
        while W > 1 and W // 2 >= count:
            W //= 2
        blocks = (count + W - 1) // W
        def lanes(src, per, pad_zero=False):
            """`per` values a cell, cell-major, into per-block [per][W] lanes."""
            out = []
            for b in range(blocks):
                for e in range(per):
                    for k in range(W):
                        c = b * W + k
                        if c < count:
                            out.append(src[c * per + e])
                        else:
                            out.append(0.0 if pad_zero else src[(b * W) * per + e])
            return out
        o = L["cat"][g]["at"]
        vals = []
        vals += lanes(d(o, rows), m); o += 8 * rows
        vals += lanes(d(o, 3 * hh), 3 * nh); o += 24 * hh
        vals += lanes(d(o, syn), 2 * nq); o += 8 * syn
        for mech in L["cat"][g]["mechs"]:
            n_field, inst = mech["sizes"][0], mech["sizes"][4]
            if inst % count:
                sys.exit(2)
            vals += lanes(d(o, inst * n_field), inst // count * n_field, True)
            o += 8 * inst * n_field
            struct.pack_into("<q", p, mech["name"] + len(mech["text"]) + 32, inst // count * blocks)
        for ion in L["cat"][g]["ions"]:
            for _ in range(5):
                vals += lanes(d(o, rows), m); o += 8 * rows
        six.append((m, W, count, blocks, nh, 2 * nq * W * blocks))
        values += struct.pack(f"<{len(vals)}d", *vals)
    # header (fingerprint, counts), six sizes a group, the step and catalogue layouts, values,
    # then what follows the values (weights, probes, records) unchanged
    out = bytearray(head)
    for x in six:
        out += struct.pack("<6q", *x)
    first = L["cat"][0]["at"] if groups else L["weights"]
    out += p[L["step"]:first] + values + p[L["weights"]:]
    return out


def to_v3(blob):
    """A version 4 checkpoint in format version 3 (sim_to_v3), as older builds wrote them."""
    run, lib = split(to_v4(blob))
    if lib_version(lib) < 4:
        return blob
    p = lib[1]
    net = lib[0][20:24] == struct.pack("<I", 2)
    sim_at = net_layout(p, 4)["sim"] if net else 0
    if sim_at is not None:
        p = p[:sim_at] + sim_to_v3(bytearray(p), sim_at)
    head = bytearray(lib[0])
    struct.pack_into("<I", head, 8, 3)
    struct.pack_into("<Q", head, 24, len(p))
    return join(run, (bytes(head), bytearray(p)))


def to_v2(blob):
    """A checkpoint without connections to point processes in format version 2: the version 3
    record without the mechanisms' identities, the (empty) weight vectors and the events'
    vectors (all -1)."""
    run, lib = split(to_v3(blob))
    p = lib[1]
    if lib_version(lib) < 3:
        return blob
    net = lib[0][20:24] == struct.pack("<I", 2)
    N = net_layout(p, 3) if net else None
    sim_at = N["sim"] if net else 0
    if sim_at is not None:
        L = sim_layout(p, sim_at, 3)
        if L["n_weights"]:
            sys.exit(2)  # connections to point processes: version 2 cannot hold them
        del p[L["weights"]:L["weights"] + 16]
        for cat in reversed(L["cat"]):
            for mech in reversed(cat["mechs"]):
                del p[mech["identity"]:mech["identity"] + 8]
    if net:
        for k in reversed(range(N["events"])):
            at = N["ev"] + 48 * k + 40
            if struct.unpack_from("<q", p, at)[0] != -1:
                sys.exit(2)
            del p[at:at + 8]
    head = bytearray(lib[0])
    struct.pack_into("<I", head, 8, 2)
    struct.pack_into("<Q", head, 24, len(p))
    return join(run, (bytes(head), p))


def to_v1(blob):
    """A checkpoint of no catalogue mechanism in format version 1 (what older builds wrote):
    the version 2 record without its per-group catalogue counts."""
    run, lib = split(to_v2(blob))
    p = lib[1]
    net = lib[0][20:24] == struct.pack("<I", 2)
    sim_at = net_layout(p, 2)["sim"] if net else 0
    if sim_at is not None:
        L = sim_layout(p, sim_at, 2)
        if any(c["mechs"] or c["ions"] for c in L["cat"]):
            sys.exit(2)  # catalogue state: version 1 cannot hold it
        del p[L["step"] + 8:L["v"]]
    head = bytearray(lib[0])
    struct.pack_into("<I", head, 8, 1)
    struct.pack_into("<Q", head, 24, len(p))
    return join(run, (bytes(head), p))


CAT = ["cat-state-nan", "cat-param-inf", "cat-ion-nan", "cat-name", "cat-count", "version-1"]


def forge_cat(run, lib, case):
    """A catalogue forgery of a cell run's checkpoint (exit 2: it has no catalogue state)."""
    p = lib[1]
    L = sim_layout(p, 0, lib_version(lib))
    if not L["cat"] or not L["cat"][0]["mechs"]:
        sys.exit(2)
    cat = L["cat"][0]
    mech, W = cat["mechs"][0], L["width"]
    n_field, n_param, n_state = mech["sizes"][:3]
    if case == "cat-state-nan":
        if n_state < 1:
            sys.exit(2)
        struct.pack_into("<d", p, mech["fields"] + 8 * n_param * W, math.nan)
    elif case == "cat-param-inf":
        if n_param < 1:
            sys.exit(2)
        struct.pack_into("<d", p, mech["fields"], math.inf)
    elif case == "cat-ion-nan":
        if not cat["ions"]:
            sys.exit(2)
        struct.pack_into("<d", p, cat["ions"][0]["arrays"] + 8 * L["v_size"], math.nan)  # ci
    elif case == "cat-name":
        p[mech["name"]] = ord("X")
    elif case == "cat-count":
        struct.pack_into("<q", p, cat["count"], 1 << 40)
    elif case == "version-1":
        head = bytearray(lib[0])
        struct.pack_into("<I", head, 8, 1)
        return join(run, (bytes(head), p))
    return join(run, lib)


SELF = ["selfev-target", "selfev-time", "selfev-vector", "selfev-version-4", "selfev-movable"]


def forge_self(run, lib, case):
    """A forgery of a network's checkpoint with waiting self-events (exit 2: none)."""
    p = lib[1]
    N = net_layout(p, lib_version(lib))
    if N["sim"] is None or lib_version(lib) < 5:
        sys.exit(2)
    L = sim_layout(p, N["sim"], lib_version(lib))
    if L["n_self"] < 1:
        sys.exit(2)
    e = L["self"] + 16  # event 0: step, target, vector, sequence, movable, time, flag, weight
    if case == "selfev-target":
        struct.pack_into("<q", p, e + 8, 1 << 30)
    elif case == "selfev-time":
        struct.pack_into("<d", p, e + 40, math.nan)
    elif case == "selfev-vector":
        struct.pack_into("<q", p, e + 16, 1 << 20)
    elif case == "selfev-version-4":
        head = bytearray(lib[0])
        struct.pack_into("<I", head, 8, 4)
        return join(run, (bytes(head), p))
    elif case == "selfev-movable":  # events 0 and 1 both the movable one of event 0's target
        if L["n_self"] < 2:
            sys.exit(2)
        target = struct.unpack_from("<q", p, e + 8)[0]
        struct.pack_into("<q", p, e + 32, 1)
        struct.pack_into("<q", p, e + 64 + 8, target)
        struct.pack_into("<q", p, e + 64 + 32, 1)
    return join(run, lib)


PT = ["pt-weight-nan", "pt-weight-target", "pt-event-vector", "pt-identity", "pt-random-id",
      "pt-version-2", "pt-unoccupied-huge", "pt-random-position-huge"]


def forge_pt(run, lib, case):
    """A forgery of a network's checkpoint with catalogue point processes (exit 2: none)."""
    p = lib[1]
    N = net_layout(p, lib_version(lib))
    if N["sim"] is None:
        sys.exit(2)
    L = sim_layout(p, N["sim"], lib_version(lib))
    if case == "pt-weight-nan":
        if L["n_weights"] < 1:
            sys.exit(2)
        struct.pack_into("<d", p, L["weights"] + 16 + 8 + 8, math.nan)  # vector 0, value 1
    elif case == "pt-weight-target":
        if L["n_weights"] < 1:
            sys.exit(2)
        struct.pack_into("<q", p, L["weights"] + 16, 1 << 30)
    elif case == "pt-event-vector":
        k = next((k for k in range(N["events"])
                  if struct.unpack_from("<q", p, N["ev"] + 48 * k + 40)[0] >= 0), None)
        if k is None:
            sys.exit(2)
        struct.pack_into("<q", p, N["ev"] + 48 * k + 40, 1 << 20)
    elif case == "pt-identity":
        mechs = L["cat"][0]["mechs"] if L["cat"] else []
        if not mechs:
            sys.exit(2)
        p[mechs[0]["identity"]] ^= 1
    elif case == "pt-random-id":
        mech = next((m for m in L["cat"][0]["mechs"] if m["text"] == "ProbAMPANMDA_EMS"), None)
        if mech is None:
            sys.exit(2)
        n_field = mech["sizes"][0]
        struct.pack_into("<d", p, mech["fields"] + 8 * (n_field - 1) * L["width"], 0.5)  # id3
    elif case == "pt-version-2":
        head = bytearray(lib[0])
        struct.pack_into("<I", head, 8, 2)
        return join(run, (bytes(head), p))
    elif case == "pt-unoccupied-huge":  # finite, so loaded: the run's FROM loop refuses it
        mech = next((m for m in L["cat"][0]["mechs"] if m["text"] == "ProbAMPANMDA_EMS"), None)
        if mech is None or mech["sizes"][:3] != (35, 12, 4):
            sys.exit(2)  # field 25 is unoccupied in this layout (its generated header's load)
        n_field, inst, W = 35, mech["sizes"][4], L["width"]
        for i in range(inst):
            for k in range(W):
                struct.pack_into("<d", p, mech["fields"] + 8 * ((i * n_field + 25) * W + k),
                                 2147483647.0)
    elif case == "pt-random-position-huge":  # finite, so loaded: the draw takes it as 0
        mech = next((m for m in L["cat"][0]["mechs"] if m["text"] == "ProbAMPANMDA_EMS"), None)
        if mech is None or mech["sizes"][:3] != (35, 12, 4):
            sys.exit(2)  # field 31 is rng's position in this layout (its generated header's load)
        n_field, inst, W = 35, mech["sizes"][4], L["width"]
        for i in range(inst):
            for k in range(W):
                struct.pack_into("<d", p, mech["fields"] + 8 * ((i * n_field + 31) * W + k),
                                 8.10545e+77)
    return join(run, lib)


def forge(blob, case):
    run, lib = split(blob)
    p = lib[1]
    net = lib[0][20:24] == struct.pack("<I", 2)
    if case in SELF:
        if not net:
            sys.exit(2)
        return forge_self(run, lib, case)
    if case in PT:
        if not net:
            sys.exit(2)
        return forge_pt(run, lib, case)
    if case in CAT:
        if net:
            sys.exit(2)
        return forge_cat(run, lib, case)
    if not net and case not in ("voltage-nan", "cells-count-negative"):
        sys.exit(2)  # a cell run's checkpoint has no network
    if net:
        L = net_layout(p, lib_version(lib))
        sim_at = L["sim"]
    else:
        sim_at = 0
    def spike(k, t=None, gid=None):
        if L["spikes"] <= k:
            sys.exit(2)
        off = L["sp"] + 16 * k
        if t is not None:
            struct.pack_into("<d", p, off, t)
        if gid is not None:
            struct.pack_into("<Q", p, off + 8, gid)
    if case == "spike-nan":
        spike(0, t=math.nan)
    elif case == "spike-inf":
        spike(0, t=math.inf)
    elif case == "spike-negative":
        spike(0, t=-1.0)
    elif case == "spike-future":
        spike(L["spikes"] - 1, t=1e9)
    elif case == "spike-gid-max":
        spike(0, gid=4294967295)
    elif case == "spike-gid-2e40":
        spike(0, gid=1 << 40)
    elif case == "spike-order":
        if L["spikes"] < 2:
            sys.exit(2)
        a, b = bytes(p[L["sp"]:L["sp"] + 16]), bytes(p[L["sp"] + 16:L["sp"] + 32])
        if a[:8] == b[:8]:  # same time: make the first later than the second
            struct.pack_into("<d", p, L["sp"], struct.unpack("<d", b[:8])[0] + 0.5)
        else:
            p[L["sp"]:L["sp"] + 16], p[L["sp"] + 16:L["sp"] + 32] = b, a
    elif case == "event-nan":
        if L["events"] < 1:
            sys.exit(2)
        struct.pack_into("<d", p, L["ev"] + 32, math.nan)
    elif case == "source-next-negative":
        if L["sources"] < 1:
            sys.exit(2)
        struct.pack_into("<d", p, L["src"] + 8, -5.0)
    elif case == "seen-too-many":
        if L["cable"] < 1:
            sys.exit(2)
        struct.pack_into("<q", p, L["seen"], 1 << 30)
    elif case == "voltage-nan":
        if sim_at is None:
            sys.exit(2)
        struct.pack_into("<d", p, sim_layout(p, sim_at, lib_version(lib))["v"], math.nan)
    elif case == "cells-count-negative":
        if net:
            sys.exit(2)
        struct.pack_into("<q", run[1], 24 + 16, -3)  # probe 0's spike count
    else:
        sys.exit(f"unknown case {case}")
    return join(run, lib)


FORGERIES = ["spike-nan", "spike-inf", "spike-negative", "spike-future", "spike-gid-max",
             "spike-gid-2e40", "spike-order", "event-nan", "source-next-negative",
             "seen-too-many", "voltage-nan", "cells-count-negative"] + CAT + PT + SELF

if __name__ == "__main__":
    src, dst, case = sys.argv[1:4]
    with open(src, "rb") as f:
        blob = f.read()
    convert = {"to-v1": to_v1, "to-v2": to_v2, "to-v3": to_v3, "to-v4": to_v4}.get(case, lambda b: forge(b, case))
    out = convert(blob)
    with open(dst, "wb") as f:
        f.write(out)
