/*
 * The README's C example: one morphology's cable equation, one backward-Euler step for 1,000
 * copies solved as a batch, and the residual of copy 0. tests/cli_install.sh builds it against
 * an installed hinesbatch (CMake and pkg-config) and runs it.
 *
 *   cc solve_cell.c $(pkg-config --cflags --libs hinesbatch) -o solve_cell
 *   ./solve_cell cell.swc
 */
#include <stdio.h>
#include <stdlib.h>
#include "hinesbatch.h"

/* Print the library's message and leave when a call fails. */
#define CHECK(call)                                                 \
    do {                                                            \
        if ((call) != HB_SUCCESS) {                                 \
            fprintf(stderr, "solve_cell: %s\n", hb_last_error());   \
            exit(1);                                                \
        }                                                           \
    } while (0)

int main(int argc, char **argv)
{
    const char *path = argc > 1 ? argv[1] : "cell.swc";
    const int copies = 1000;
    hb_morph_t *morph;
    hb_cable_t *cable;
    hb_discretization_t disc;
    CHECK(hb_morph_load_swc(path, NULL, &morph));
    hb_discretization_default(&disc);               /* d_lambda = 0.1 at 100 Hz */
    CHECK(hb_cable_create(morph, &disc, &cable));
    int m = hb_cable_size(cable);
    const int *parent = hb_cable_parent(cable);     /* parent[i] < i */

    double *u = malloc(m * sizeof *u), *l = malloc(m * sizeof *l);
    double *d = malloc(m * sizeof *d), *rhs = malloc(m * sizeof *rhs);
    double *v = malloc(m * sizeof *v), *g = malloc(m * sizeof *g);
    double *dv = malloc(m * sizeof *dv), *ad = malloc(m * sizeof *ad);
    if (!u || !l || !d || !rhs || !v || !g || !dv || !ad) return 1;
    for (int i = 0; i < m; i++) {
        v[i] = -65.0 + 10.0 * i / m;                /* [mV] a gradient, so that dv is not 0 */
        g[i] = 1e-4;                                /* [S/cm^2] */
    }
    CHECK(hb_cable_offdiag(cable, u, l));           /* constant in time */
    CHECK(hb_cable_step_system(cable, 0.025, u, l, v, g, NULL, NULL, d, rhs));

    hb_context_t *ctx;
    hb_batch_t *batch;
    CHECK(hb_context_create(HB_BACKEND_BEST, &ctx));
    CHECK(hb_batch_create(ctx, m, parent, copies, HB_LAYOUT_INTERLEAVED, 1, &batch));
    for (int s = 0; s < copies; s++) CHECK(hb_batch_set(batch, s, u, l, d, rhs));
    CHECK(hb_batch_solve(batch));                   /* rhs <- dv for every copy */
    CHECK(hb_batch_get(batch, 0, NULL, NULL, NULL, dv));

    /* max |A dv - rhs| / max |rhs| */
    CHECK(hb_hines_matvec(m, parent, u, l, d, dv, ad));
    double err = 0.0, norm = 0.0;
    for (int i = 0; i < m; i++) {
        double e = ad[i] > rhs[i] ? ad[i] - rhs[i] : rhs[i] - ad[i];
        double r = rhs[i] > 0 ? rhs[i] : -rhs[i];
        if (e > err) err = e;
        if (r > norm) norm = r;
    }
    printf("%s: %d rows, %d copies on %s, residual %.1e\n", path, m, copies,
           hb_backend_name(hb_context_backend(ctx)), err / norm);

    CHECK(hb_batch_destroy(batch));
    CHECK(hb_context_destroy(ctx));
    CHECK(hb_cable_destroy(cable));
    CHECK(hb_morph_destroy(morph));
    free(u); free(l); free(d); free(rhs); free(v); free(g); free(dv); free(ad);
    return 0;
}
