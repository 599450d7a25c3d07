/* Every real morphology of the shared data as one Hines system, for the tests of solvers. */
#ifndef HB_TESTS_TEST_REAL_SYSTEMS_H
#define HB_TESTS_TEST_REAL_SYSTEMS_H

#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "hinesbatch.h"
#include "test_data.h"
#include "test_random.h"

typedef void (*test_system_fn)(const char *name, int m, const int *parent, const double *u,
                               const double *l, const double *d, const double *rhs);

/*
 * For each SWC file of HB_DATA_DIR/morphologies: the cable (default discretisation) and the
 * system of one implicit step (dt 0.025 ms, V uniform in -75..-55 mV from uniform(), g 1e-4
 * S/cm2), given to fn. Fails a check when there is no morphology or one does not load.
 */
static inline void test_each_real_system(test_system_fn fn)
{
    static char paths[TEST_MAX_SWC][TEST_PATH_MAX];
    const int n = test_swc_files(paths);
    CHECKF(n > 0, "no morphologies under %s", HB_DATA_DIR);
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    for (int f = 0; f < n; ++f) {
        hb_morph_t *morph = NULL;
        hb_cable_t *cable = NULL;
        CHECK_OK(hb_morph_load_swc(paths[f], NULL, &morph));
        if (morph) CHECK_OK(hb_cable_create(morph, &disc, &cable));
        if (cable) {
            const int m = hb_cable_size(cable);
            double *u = malloc(6 * (size_t)m * sizeof *u);
            if (!u) {
                fprintf(stderr, "%s: out of memory\n", paths[f]);
                exit(2);
            }
            double *l = u + m, *d = l + m, *r = d + m, *v = r + m, *g = v + m;
            for (int i = 0; i < m; ++i) {
                v[i] = -65.0 + 20.0 * (uniform() - 0.5);
                g[i] = 1e-4;
            }
            CHECK_OK(hb_cable_offdiag(cable, u, l));
            CHECK_OK(hb_cable_step_system(cable, 0.025, u, l, v, g, NULL, NULL, d, r));
            fn(test_base_name(paths[f]), m, hb_cable_parent(cable), u, l, d, r);
            free(u);
        }
        hb_cable_destroy(cable);
        hb_morph_destroy(morph);
    }
}

#endif
