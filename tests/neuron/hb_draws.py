"""hinesbatch's random draws in Python, for NEURON scripts that rebuild a network file
(tests/neuron/l5pc_net_reference.py): the Philox4x32-10 streams of src/common/philox.h, a
random builder's sources and delays (src/net/net_json.c: Floyd's sampling, Lemire's
multiply-shift) and a spike source's times (src/net/net_run.c: NetStim's formulas), as
docs/network.md (sections 1 and 5) defines them. The same operations in the same order, in
doubles and 32/64-bit integers, so the same numbers bit for bit."""
import math

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = 0xFFFFFFFF
STREAM_SOURCE_INTERVALS, STREAM_RANDOM_SOURCES, STREAM_RANDOM_DELAYS = 1, 2, 3


def philox4x32(c, k):
    """The 10-round bijection of counter c (4 words) under key k (2 words)."""
    c0, c1, c2, c3 = c
    k0, k1 = k
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & MASK32, (k1 + W1) & MASK32
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0, p1 & MASK32, (p0 >> 32) ^ c3 ^ k1, p0 & MASK32)
    return c0, c1, c2, c3


def draw(seed, gid, stream, index):
    """hb_philox_draw: key (seed low, gid), counter (index low, index high, stream, seed high)."""
    return philox4x32((index & MASK32, index >> 32, stream, seed >> 32), (seed & MASK32, gid))


def uniform(hi, lo):
    """hb_philox_uniform: 52 bits and a half, in (0, 1)."""
    return (float(((hi << 32) | lo) >> 12) + 0.5) * (1.0 / 4503599627370496.0)


def below(hi, lo, n):
    """hb_philox_below: an integer in [0, n) by Lemire's multiply-shift."""
    return (((hi << 32) | lo) * n) >> 64


def random_sources(seed, gid, src_first, src_count, in_degree):
    """A random builder's sources of target gid, ascending (Floyd's sampling, self left out)."""
    self_in = src_first <= gid < src_first + src_count
    n = src_count - (1 if self_in else 0)
    taken = set()
    for d, j in enumerate(range(n - in_degree, n)):
        x = draw(seed, gid, STREAM_RANDOM_SOURCES, d)
        t = below(x[0], x[1], j + 1)
        taken.add(j if t in taken else t)
    out = []
    for t in sorted(taken):
        src = src_first + t
        if self_in and src >= gid:
            src += 1
        out.append(src)
    return out


def random_delay(seed, gid, q, dmin, dmax):
    """The q-th connection's delay of a random builder: min + (max - min) u."""
    if dmax <= dmin:
        return float(dmin)
    x = draw(seed, gid, STREAM_RANDOM_DELAYS, q)
    return dmin + (dmax - dmin) * uniform(x[0], x[1])


def source_times(gid, start, interval, number, noise, seed, t_stop):
    """A spike source's spikes up to t_stop: NetStim's invl, first and next, in double."""
    def invl(k):
        if noise == 0.0:
            return interval
        x = draw(seed, gid, STREAM_SOURCE_INTERVALS, k)
        return (1.0 - noise) * interval + noise * interval * -math.log(uniform(x[0], x[1]))
    t = start + invl(0) - interval * (1.0 - noise)
    t = t if t > 0.0 else 0.0
    out = []
    while len(out) < number and t <= t_stop:
        out.append(t)
        t += invl(len(out))
    return out
