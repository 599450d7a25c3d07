/* A reproducible uniform generator for tests (xorshift64*), seeded and printed by the caller. */
#ifndef HB_TESTS_TEST_RANDOM_H
#define HB_TESTS_TEST_RANDOM_H

#include <stdint.h>

static uint64_t rng_state;

/* Uniform in [0, 1). */
static inline double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

#endif
