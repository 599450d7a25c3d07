/* Philox4x32-10 (src/common/philox.h): the known-answer vectors of its authors' Random123
 * distribution, and the properties the network's streams rely on. */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "common/philox.h"

static int equal(hb_philox_ctr_t a, uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3)
{
    return a.v[0] == x0 && a.v[1] == x1 && a.v[2] == x2 && a.v[3] == x3;
}

int main(void)
{
    /* Random123's kat_vectors for philox4x32 with 10 rounds */
    CHECK(equal(hb_philox4x32((hb_philox_ctr_t){{0, 0, 0, 0}}, (hb_philox_key_t){{0, 0}}),
                0x6627e8d5u, 0xe169c58du, 0xbc57ac4cu, 0x9b00dbd8u));
    CHECK(equal(hb_philox4x32((hb_philox_ctr_t){{~0u, ~0u, ~0u, ~0u}},
                              (hb_philox_key_t){{~0u, ~0u}}),
                0x408f276du, 0x41c83b0eu, 0xa20bc7c6u, 0x6d5451fdu));
    CHECK(equal(hb_philox4x32((hb_philox_ctr_t){{0x243f6a88u, 0x85a308d3u, 0x13198a2eu,
                                                  0x03707344u}},
                              (hb_philox_key_t){{0xa4093822u, 0x299f31d0u}}),
                0xd16cfe09u, 0x94fdccebu, 0x5001e420u, 0x24126ea1u));

    /* Draws depend on every part of (seed, gid, stream, index) */
    const hb_philox_ctr_t base = hb_philox_draw(42, 7, 1, 5);
    CHECK(!equal(hb_philox_draw(43, 7, 1, 5), base.v[0], base.v[1], base.v[2], base.v[3]));
    CHECK(!equal(hb_philox_draw(42, 8, 1, 5), base.v[0], base.v[1], base.v[2], base.v[3]));
    CHECK(!equal(hb_philox_draw(42, 7, 2, 5), base.v[0], base.v[1], base.v[2], base.v[3]));
    CHECK(!equal(hb_philox_draw(42, 7, 1, 6), base.v[0], base.v[1], base.v[2], base.v[3]));
    CHECK(!equal(hb_philox_draw(42ull | 1ull << 40, 7, 1, 5), base.v[0], base.v[1], base.v[2],
                 base.v[3]));
    CHECK(equal(hb_philox_draw(42, 7, 1, 5), base.v[0], base.v[1], base.v[2], base.v[3]));

    /* uniform: strictly inside (0, 1) at the extremes; mean and variance of 2^16 draws */
    CHECK(hb_philox_uniform(0, 0) > 0.0 && hb_philox_uniform(~0u, ~0u) < 1.0);
    double sum = 0, sum2 = 0;
    const int n = 1 << 16;
    for (int i = 0; i < n; ++i) {
        const hb_philox_ctr_t d = hb_philox_draw(1, 2, 3, (uint64_t)i);
        const double u = hb_philox_uniform(d.v[0], d.v[1]);
        sum += u;
        sum2 += u * u;
    }
    const double mean = sum / n, var = sum2 / n - mean * mean;
    CHECKF(fabs(mean - 0.5) < 0.01 && fabs(var - 1.0 / 12) < 0.005, "mean %g var %g", mean, var);

    /* below(n): the exact floor(x n / 2^64), against a 32-bit long multiplication */
    const uint64_t xs[] = {0, 1, 0xdeadbeefcafebabeull, ~0ull, 1ull << 63};
    const uint64_t ns[] = {1, 2, 3, 1000003, 1ull << 40, ~0ull};
    for (size_t i = 0; i < sizeof xs / sizeof *xs; ++i)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; ++j) {
            const uint64_t x = xs[i], m = ns[j];
            const uint64_t xl = (uint32_t)x, xh = x >> 32, ml = (uint32_t)m, mh = m >> 32;
            const uint64_t ll = xl * ml, lh = xl * mh, hl = xh * ml, hh = xh * mh;
            const uint64_t mid = (ll >> 32) + (uint32_t)lh + (uint32_t)hl;
            const uint64_t want = hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
            const uint64_t got = hb_philox_below((uint32_t)(x >> 32), (uint32_t)x, m);
            CHECKF(got == want && got < m, "x %" PRIx64 " n %" PRIu64 ": %" PRIu64, x, m, got);
        }
    return check_summary("test_philox");
}
