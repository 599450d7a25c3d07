/* A reproducible uniform generator for tests (xorshift64*), seeded and printed by the caller. */
#ifndef HB_TESTS_TEST_RANDOM_H
#define HB_TESTS_TEST_RANDOM_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t rng_state;

/* A random pass's seed: HB_TEST_SEED, or one from the clock; printed so a failure can be
 * repeated. */
static inline uint64_t test_seed(const char *test)
{
    const char *env = getenv("HB_TEST_SEED");
    const uint64_t seed =
        env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL) * 2654435761ULL + 1;
    printf("%s: seed %llu (set HB_TEST_SEED to repeat)\n", test, (unsigned long long)seed);
    return seed;
}

/* Uniform in [0, 1). */
static inline double uniform(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (double)((rng_state * 2685821657736338717ULL) >> 11) * (1.0 / 9007199254740992.0);
}

/* A random Hines system on the tree `parent` of m rows: off-diagonals in (-1, 0], diagonal
 * 1-3 plus what makes it diagonally dominant, rhs in [-0.5, 0.5). */
static inline void test_random_system(int m, const int *parent, double *u, double *l, double *d,
                                      double *rhs)
{
    for (int i = 0; i < m; ++i) {
        u[i] = i ? -uniform() : 0.0;
        l[i] = i ? -uniform() : 0.0;
        d[i] = 1.0 + 2.0 * uniform();
        rhs[i] = uniform() - 0.5;
    }
    for (int i = 1; i < m; ++i) {
        d[i] += l[i] < 0.0 ? -l[i] : l[i];
        d[parent[i]] += u[i] < 0.0 ? -u[i] : u[i];
    }
}

#endif
