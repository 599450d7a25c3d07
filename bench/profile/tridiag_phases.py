"""Summary of the per-tile phase probe of bench/profile/tridiag-phases.patch (session 24).

On a GPU machine (docs/tridiag.md, "Known limits"):
    git apply bench/profile/tridiag-phases.patch   # then build (tests/gpu/configure.sh)
    HB_TD_PHASES=/tmp/ph-8192 build-dev/hinesbatch bench tridiag --no-cusparse --no-accuracy \
        --precision fp64 --repeats 3 --points 8192x20000
    python3 bench/profile/tridiag_phases.py /tmp/ph-8192
The probe rewrites its file at every launch of a partition kernel, so it holds the last one
(one point per file: one bench point per run, the layout of interest last; bench tridiag runs
flat before interleaved). Each line: block, tile (nth of the block), multiprocessor, clocks of
slots 2..7 after slot 1 (tile start), slot 1's clock. Prints, over tiles after each block's
first, the median and quartiles of each phase in cycles and microseconds, its share of a tile,
the gap between a block's tiles, and the blocks a multiprocessor held at once.
Not part of the library: the probe is a measurement aid, kept out of the tree's kernels.
"""
import statistics as st
import sys

PHASES = [  # (name, from slot, to slot); slot 1 is 0
    ("rows loaded, eliminated", 1, 2),
    ("block PCR", 2, 3),
    ("cluster barrier 1", 3, 4),
    ("copies + interface solve", 4, 5),
    ("back-substitution + stores", 5, 6),
    ("cluster wait", 6, 7),
    ("tile", 1, 7),
]


def quartiles(v):
    v = sorted(v)
    n = len(v)
    return v[n // 4], st.median(v), v[(3 * n) // 4]


def main(path):
    lines = open(path).read().splitlines()
    head = lines[0]
    khz = int(head.split("clock_khz")[1])
    tiles = {}
    for line in lines[1:]:
        f = list(map(int, line.split()))
        block, nth, sm = f[0], f[1], f[2]
        rel = {1: 0}
        for slot, value in zip(range(2, 8), f[3:9]):
            if value >= 0:
                rel[slot] = value
        tiles[(block, nth)] = (sm, f[9], rel)
    print(f"{path}: {head}; {len(tiles)} tiles recorded")
    later = [t for (b, n), t in tiles.items() if n > 0]
    if not later:
        later = list(tiles.values())
    ends = [t[2][7] for t in later if 7 in t[2]]
    tile_med = st.median(ends) if ends else 0
    print(f"{'phase':30s} {'q1':>9s} {'median':>9s} {'q3':>9s} {'us':>8s} {'share':>6s}")
    for name, a, b in PHASES:
        v = [t[2][b] - t[2][a] for t in later if a in t[2] and b in t[2]]
        if not v:
            continue
        q1, med, q3 = quartiles(v)
        share = f"{100 * med / tile_med:5.1f}%" if tile_med else ""
        print(f"{name:30s} {q1:9.0f} {med:9.0f} {q3:9.0f} {1e3 * med / khz:8.2f} {share:>6s}")
    gaps = []
    for (b, n), (sm, start, rel) in tiles.items():
        nxt = tiles.get((b, n + 1))
        if nxt and 7 in rel:
            gaps.append(nxt[1] - (start + rel[7]))
    if gaps:
        q1, med, q3 = quartiles(gaps)
        print(f"{'gap to the next tile':30s} {q1:9.0f} {med:9.0f} {q3:9.0f} {1e3 * med / khz:8.2f}")
    per_sm = {}
    for (b, n), (sm, start, rel) in tiles.items():
        per_sm.setdefault(sm, set()).add(b)
    print(f"multiprocessors {len(per_sm)}; blocks a multiprocessor (median) "
          f"{st.median(len(v) for v in per_sm.values())}")


if __name__ == "__main__":
    for p in sys.argv[1:]:
        main(p)
