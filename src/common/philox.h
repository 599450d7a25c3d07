/*
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2, 3", SC 2011): a
 * counter-based generator. A draw is a pure function of (key, counter), so a stream keyed by
 * a cell's gid gives the same numbers on any rank, thread or backend, in any order.
 * Host and device (HB_HOSTDEV); plain C integer arithmetic only.
 */
#ifndef HB_COMMON_PHILOX_H
#define HB_COMMON_PHILOX_H

#include <stdint.h>

#include "common/hostdev.h"

typedef struct {
    uint32_t v[4];
} hb_philox_ctr_t;

typedef struct {
    uint32_t v[2];
} hb_philox_key_t;

#define HB_PHILOX_M0 0xD2511F53u
#define HB_PHILOX_M1 0xCD9E8D57u
#define HB_PHILOX_W0 0x9E3779B9u /* golden ratio */
#define HB_PHILOX_W1 0xBB67AE85u /* sqrt(3) - 1 */

HB_HOSTDEV void hb_philox_round(hb_philox_ctr_t *c, const hb_philox_key_t *k)
{
    const uint64_t p0 = (uint64_t)HB_PHILOX_M0 * c->v[0];
    const uint64_t p1 = (uint64_t)HB_PHILOX_M1 * c->v[2];
    const uint32_t hi0 = (uint32_t)(p0 >> 32), lo0 = (uint32_t)p0;
    const uint32_t hi1 = (uint32_t)(p1 >> 32), lo1 = (uint32_t)p1;
    hb_philox_ctr_t out;
    out.v[0] = hi1 ^ c->v[1] ^ k->v[0];
    out.v[1] = lo1;
    out.v[2] = hi0 ^ c->v[3] ^ k->v[1];
    out.v[3] = lo0;
    *c = out;
}

/* The 10-round bijection of counter c under key k. */
HB_HOSTDEV hb_philox_ctr_t hb_philox4x32(hb_philox_ctr_t c, hb_philox_key_t k)
{
    for (int r = 0; r < 10; ++r) {
        if (r) {
            k.v[0] += HB_PHILOX_W0;
            k.v[1] += HB_PHILOX_W1;
        }
        hb_philox_round(&c, &k);
    }
    return c;
}

/*
 * The streams hinesbatch draws from: key = (seed low 32 bits, gid), counter = (index low,
 * index high, stream, seed high 32 bits). `stream` names the use (connections, spike source
 * intervals, ...), `index` counts the draws of one use.
 */
HB_HOSTDEV hb_philox_ctr_t hb_philox_draw(uint64_t seed, uint32_t gid, uint32_t stream,
                                          uint64_t index)
{
    hb_philox_ctr_t c = {{(uint32_t)index, (uint32_t)(index >> 32), stream,
                          (uint32_t)(seed >> 32)}};
    hb_philox_key_t k = {{(uint32_t)seed, gid}};
    return hb_philox4x32(c, k);
}

/* A double as a draw's integer (a RANDOM's ids and position, kept as doubles in a
 * mechanism's fields): its integer part where it fits 64 bits, else 0 (negative, NaN, or a
 * checkpoint's forged 1e77), as C's cast of such a value is undefined. */
HB_HOSTDEV uint64_t hb_philox_u64_of(double x)
{
    return x >= 0.0 && x < 18446744073709551616.0 ? (uint64_t)x : 0;
}

/* A double uniform in (0, 1) from two words: 52 bits and a half, so never 0 or 1 (with 53
 * bits the largest value would round to 1). */
HB_HOSTDEV double hb_philox_uniform(uint32_t hi, uint32_t lo)
{
    const uint64_t bits = (((uint64_t)hi << 32) | lo) >> 12;
    return ((double)bits + 0.5) * (1.0 / 4503599627370496.0);
}

/* An integer uniform in [0, n) from one 64-bit draw (n >= 1), by Lemire's multiply-shift:
 * the bias is below n / 2^64, far under any test's resolution. */
HB_HOSTDEV uint64_t hb_philox_below(uint32_t hi, uint32_t lo, uint64_t n)
{
    const uint64_t x = ((uint64_t)hi << 32) | lo;
#if defined(__SIZEOF_INT128__) && !defined(__CUDA_ARCH__)
    __extension__ typedef unsigned __int128 hb_u128;
    return (uint64_t)(((hb_u128)x * n) >> 64);
#elif defined(__CUDA_ARCH__)
    return __umul64hi(x, n);
#else
    const uint64_t xl = (uint32_t)x, xh = x >> 32, nl = (uint32_t)n, nh = n >> 32;
    const uint64_t ll = xl * nl, lh = xl * nh, hl = xh * nl, hh = xh * nh;
    const uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
    return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
#endif
}

#endif
