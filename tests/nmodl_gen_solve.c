/* The NMODL code generator's solvers (nmodl_gen_solve.c) on small .mod files of tests/nmodl/
 * and on Allen's NaV.mod (build/gen/hbg_*.h, made at build time by nmodl_emit):
 *   - derivimplicit: a linear ODE's step equals the closed-form backward-Euler value, and
 *     Newton converges for a nonlinear one (the root of its backward-Euler equation);
 *   - KINETIC sparse with CONSERVE: the states sum to the conserved total after many steps,
 *     STEADYSTATE sparse is the analytic equilibrium and the steps converge to it;
 *   - NaV: INITIAL's LINEAR equilibrium is a fixed point of the KINETIC steps at that v. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "hbg_implicit.h"
#include "hbg_nav.h"
#include "hbg_scheme.h"

#define W 4

static uint64_t rng = 0x2545F4914F6CDD1Du;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53;
}

static hb_cat_block_t block(double *v, int *node, double *field, double *d, double *rhs,
                            hb_ion_block_t *ion, double dt)
{
    return (hb_cat_block_t){W, W, 1, dt, 0.0, 37.0, v, d, rhs, node, field, NULL, NULL, ion,
                            NULL, NULL, NULL, NULL, -1, NULL};
}

static void test_derivimplicit(void)
{
    double v[W] = {0}, d[W] = {0}, rhs[W] = {0}, field[hbg_implicit_N_FIELD * W];
    int node[W] = {0};
    double worst_linear = 0.0, worst_nonlinear = 0.0;
    long steps = 0;
    for (int trial = 0; trial < 200; trial++) {
        const double dt = 0.01 + 0.5 * uniform();
        hb_cat_block_t blk = block(v, node, field, d, rhs, NULL, dt);
        for (int k = 0; k < W; k++) {
            field[0 * W + k] = 0.01 + 2.0 * uniform(); /* k [/ms] */
            field[1 * W + k] = 0.01 + 5.0 * uniform(); /* c [/ms] */
        }
        hbg_implicit_init_kernel(&blk, 0, 1);
        for (int k = 0; k < W; k++) CHECK(field[2 * W + k] == 1.0 && field[3 * W + k] == 0.5);
        for (int step = 0; step < 20; step++) {
            double x0[W], y0[W];
            for (int k = 0; k < W; k++) x0[k] = field[2 * W + k], y0[k] = field[3 * W + k];
            hbg_implicit_state_kernel(&blk, 0, 1);
            for (int k = 0; k < W; k++) {
                const double kk = field[0 * W + k], c = field[1 * W + k];
                const double x1 = x0[k] / (1.0 + kk * dt);
                const double y1 = 2.0 * y0[k] / (1.0 + sqrt(1.0 + 4.0 * c * dt * y0[k]));
                const double ex = fabs(field[2 * W + k] - x1) / x1;
                const double ey = fabs(field[3 * W + k] - y1) / y1;
                worst_linear = ex > worst_linear ? ex : worst_linear;
                worst_nonlinear = ey > worst_nonlinear ? ey : worst_nonlinear;
                steps++;
            }
        }
    }
    CHECKF(worst_linear < 1e-12, "linear: worst relative error %.3g", worst_linear);
    /* Newton stops at NEURON's tolerance (relative change 1e-6, residual 1e-8), with the
     * Jacobian kept once the change is below 5 % */
    CHECKF(worst_nonlinear < 1e-6, "nonlinear: worst relative error %.3g", worst_nonlinear);
    printf("derivimplicit: %ld steps; worst relative error against backward Euler's closed form "
           "%.3g (x' = -k x), %.3g (y' = -c y^2)\n",
           steps, worst_linear, worst_nonlinear);
}

static void test_kinetic(void)
{
    double v[W] = {0}, d[W] = {0}, rhs[W] = {0}, field[hbg_scheme_N_FIELD * W];
    int node[W] = {0};
    double worst_sum = 0.0, worst_eq = 0.0, worst_init = 0.0;
    for (int trial = 0; trial < 200; trial++) {
        const double dt = 0.5 + uniform();
        hb_cat_block_t blk = block(v, node, field, d, rhs, NULL, dt);
        for (int k = 0; k < W; k++)
            for (int q = 0; q < 5; q++) field[q * W + k] = 0.05 + uniform(); /* rates, total */
        hbg_scheme_init_kernel(&blk, 0, 1);
        double eq[W][3];
        for (int k = 0; k < W; k++) {
            const double kf1 = field[0 * W + k], kb1 = field[1 * W + k], kf2 = field[2 * W + k],
                         kb2 = field[3 * W + k], total = field[4 * W + k];
            const double b_a = kf1 / kb1, c_a = b_a * kf2 / kb2;
            eq[k][0] = total / (1.0 + b_a + c_a);
            eq[k][1] = eq[k][0] * b_a;
            eq[k][2] = eq[k][0] * c_a;
            for (int q = 0; q < 3; q++) {
                const double e = fabs(field[(5 + q) * W + k] - eq[k][q]) / total;
                worst_init = e > worst_init ? e : worst_init;
            }
            /* LINEAR lin: 2 P + Q = 3 total, P - Q = kf1 */
            const double p = (3.0 * total + kf1) / 3.0;
            CHECK(fabs(field[8 * W + k] - p) < 1e-14 * (1.0 + p) &&
                  fabs(field[9 * W + k] - (p - kf1)) < 1e-14 * (1.0 + p));
            /* then start away from equilibrium: everything in A */
            field[5 * W + k] = total;
            field[6 * W + k] = field[7 * W + k] = 0.0;
        }
        for (int step = 0; step < 2000; step++) {
            hbg_scheme_state_kernel(&blk, 0, 1);
            for (int k = 0; k < W; k++) {
                const double sum = field[5 * W + k] + field[6 * W + k] + field[7 * W + k];
                const double e = fabs(sum - field[4 * W + k]) / field[4 * W + k];
                worst_sum = e > worst_sum ? e : worst_sum;
            }
        }
        for (int k = 0; k < W; k++)
            for (int q = 0; q < 3; q++) {
                const double e = fabs(field[(5 + q) * W + k] - eq[k][q]) / field[4 * W + k];
                worst_eq = e > worst_eq ? e : worst_eq;
            }
    }
    CHECKF(worst_init < 1e-14, "STEADYSTATE: worst %.3g of the total", worst_init);
    CHECKF(worst_sum < 1e-13, "CONSERVE: worst sum error %.3g of the total", worst_sum);
    CHECKF(worst_eq < 1e-12, "steps: worst distance to the equilibrium %.3g", worst_eq);
    printf("KINETIC: STEADYSTATE within %.3g of the analytic equilibrium; 2000 steps keep the "
           "sum within %.3g of the total and end within %.3g of the equilibrium\n",
           worst_init, worst_sum, worst_eq);
}

/* NaV: 12 states, 16 reactions and CONSERVE. Its INITIAL (a LINEAR block) is not the
 * scheme's equilibrium: NaV.mod's I3 row reads I4*bi3 where the scheme has I4 <-> I3 (f13, b13),
 * in NEURON as here. So: the KINETIC steps from INITIAL keep the sum 1 and converge to a point
 * where every state's net flux, from the 16 reactions, is 0. */
static void test_nav(void)
{
    enum { NF = hbg_nav_N_FIELD };
    double v[W], d[W] = {0}, rhs[W] = {0}, field[NF * W], ena[W], ina[W] = {0}, didv[W] = {0};
    int node[W] = {0};
    hb_ion_block_t ion = {ena, NULL, NULL, ina, didv};
    /* NaV.mod's GLOBAL PARAMETERs: Con, Coff, Oon, Ooff, alpha, beta, gamma, delta, alfac,
     * btfac, x1, x2 */
    const double global[] = {0.01, 40, 8, 0.05, 400, 12, 250, 60, 2.51, 5.32, 24, -24};
    hb_cat_block_t blk = block(v, node, field, d, rhs, &ion, 0.025);
    blk.global = global;
    double worst_sum = 0.0, worst_flux = 0.0;
    for (int trial = 0; trial < 10; trial++) {
        for (int k = 0; k < W; k++) {
            v[k] = -90.0 + 120.0 * uniform();
            ena[k] = 50.0;
            field[0 * W + k] = 0.015; /* gbar */
        }
        hbg_nav_init_kernel(&blk, 0, 1);
        for (int step = 0; step < 4000; step++) {
            hbg_nav_state_kernel(&blk, 0, 1);
            for (int k = 0; k < W; k++) {
                double sum = 0.0;
                for (int q = 0; q < 12; q++) sum += field[(1 + q) * W + k];
                worst_sum = fabs(sum - 1.0) > worst_sum ? fabs(sum - 1.0) : worst_sum;
            }
        }
        for (int k = 0; k < W; k++) {
            hbg_nav_vars_t s;
            hbg_nav_load(&blk, 0, k, &s);
            (void)hbg_nav_rates(&s, s.v);
            double net[12] = {0}; /* C1..C5 0-4, I1..I5 5-9, O 10, I6 11 */
            const struct {
                int a, b;
                double kf, kb;
            } r[16] = {{0, 1, s.f01, s.b01},  {1, 2, s.f02, s.b02},  {2, 3, s.f03, s.b03},
                       {3, 4, s.f04, s.b04},  {4, 10, s.f0O, s.b0O}, {10, 11, s.fin, s.bin},
                       {5, 6, s.f11, s.b11},  {6, 7, s.f12, s.b12},  {7, 8, s.f13, s.b13},
                       {8, 9, s.f14, s.b14},  {9, 11, s.f1n, s.b1n}, {0, 5, s.fi1, s.bi1},
                       {1, 6, s.fi2, s.bi2},  {2, 7, s.fi3, s.bi3},  {3, 8, s.fi4, s.bi4},
                       {4, 9, s.fi5, s.bi5}};
            const double st[12] = {s.C1, s.C2, s.C3, s.C4, s.C5, s.I1,
                                   s.I2, s.I3, s.I4, s.I5, s.O,  s.I6};
            double scale = 0.0;
            for (int q = 0; q < 16; q++) {
                const double flux = r[q].kf * st[r[q].a] - r[q].kb * st[r[q].b];
                net[r[q].a] -= flux;
                net[r[q].b] += flux;
                scale = fmax(scale, fmax(r[q].kf * st[r[q].a], r[q].kb * st[r[q].b]));
            }
            for (int q = 0; q < 12; q++)
                worst_flux = fmax(worst_flux, fabs(net[q]) / (scale > 0.0 ? scale : 1.0));
        }
    }
    CHECKF(worst_sum < 1e-13, "KINETIC: the states sum to 1 within %.3g", worst_sum);
    CHECKF(worst_flux < 1e-10, "KINETIC: net flux %.3g of the largest flux at the end", worst_flux);
    printf("NaV: 4000 KINETIC steps keep the sum within %.3g of 1 and end where the net fluxes "
           "are %.3g of the largest\n",
           worst_sum, worst_flux);
}

int main(void)
{
    test_derivimplicit();
    test_kinetic();
    test_nav();
    return check_summary("nmodl_gen_solve");
}
