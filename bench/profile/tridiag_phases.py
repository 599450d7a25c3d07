"""Summary of the per-block phase probe of bench/profile/tridiag-phases.patch.

On a GPU machine (docs/tridiag.md, "Known limits"):
    git apply bench/profile/tridiag-phases.patch   # then build (tests/gpu/configure.sh)
    HB_TD_PHASES_FILE=/tmp/ph/ph build-dev/hinesbatch bench tridiag --no-cusparse \
        --no-accuracy --precision fp64 --repeats 5 --points 2048x20000,8192x20000
    python3 bench/profile/tridiag_phases.py /tmp/ph/ph
Prints, per file (one per flat-layout point), the median cycles of a block's phases (load and
forward elimination, PCR, finish and stores; thread 0's clock64) and, per multiprocessor, the
mean number of blocks in flight and the share of time with at least one block loading.
Not part of the library: the probe is a measurement aid, kept out of the tree's kernels.
"""
import sys, glob, statistics as st
for fn in sorted(glob.glob(sys.argv[1] + "*")):
    lines = open(fn).read().split("\n")
    head = lines[0]
    rows = [list(map(int, l.split())) for l in lines[1:] if l.strip()]
    per_sm = {}
    for r in rows:
        per_sm.setdefault(r[0], []).append(r[1:])
    ld = [r[2]-r[1] for r in rows]; pc = [r[3]-r[2] for r in rows]; fi = [r[4]-r[3] for r in rows]; tot=[r[4]-r[1] for r in rows]
    conc=[]; loadfrac=[]; busy=[]; gaps=[]
    for sm, bl in per_sm.items():
        t0 = min(b[0] for b in bl); t1 = max(b[3] for b in bl); span = t1 - t0
        conc.append(sum(b[3]-b[0] for b in bl) / span)
        def union(iv):
            iv = sorted(iv); tot = 0; cs, ce = iv[0]
            for s_, e_ in iv[1:]:
                if s_ > ce: tot += ce - cs; cs, ce = s_, e_
                else: ce = max(ce, e_)
            return tot + ce - cs
        loadfrac.append(union([(b[0], b[1]) for b in bl]) / span)
        busy.append(union([(b[0], b[3]) for b in bl]) / span)
    print(f"{fn.split('/')[-1]} {head}: blocks {len(rows)}, SMs {len(per_sm)}")
    print(f"  per block [cycles] median: load+forward {st.median(ld):.0f}, pcr {st.median(pc):.0f}, finish+store {st.median(fi):.0f}, total {st.median(tot):.0f}")
    print(f"  per SM: blocks in flight (mean) {st.mean(conc):.2f}; time with >=1 block loading {100*st.mean(loadfrac):.1f}%; time with >=1 block {100*st.mean(busy):.1f}%")
