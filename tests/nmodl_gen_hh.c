/* hh in the engine is the code generated from NEURON's hh.mod (common/builtin/hbg_default_hh.h,
 * through common/sim_step.h), and this test holds it to the hand-written hh it replaced, kept
 * below as the reference (ref_*: the formulas, TABLE, cnexp and currents as the engine computed
 * them until the generated code took their place): the engine's rates (hb_hh_rates_at) bitwise
 * the hand-written formulas over a sweep of v, its TABLE (hb_hh_table_init) and reads bitwise,
 * the engine's gate update (hb_step_gates_row) and currents (hb_step_hh_row) bitwise the
 * hand-written ones; and the catalogue's kernels (build/gen/hbg_hh.h from nmodl_emit) bitwise
 * the engine's fused rows. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "hbg_hh.h"
#include "sim/sim.h"

/* ---- the hand-written hh the generated code replaced (the reference) ---- */
#define REF_TABLE_MIN (-100.0)
#define REF_TABLE_MAX 100.0
#define REF_TABLE_N 201
#define REF_TABLE_STRIDE (REF_TABLE_N + 1)

static double ref_vtrap(double x, double y)
{
    return fabs(x / y) < 1e-6 ? y * (1.0 - x / y / 2.0) : x / (hb_exp(x / y) - 1.0);
}

static void ref_formulas(double v, double q10, double inf[3], double tau[3])
{
    double alpha[3], beta[3];
    alpha[0] = 0.1 * ref_vtrap(-(v + 40.0), 10.0);
    beta[0] = 4.0 * hb_exp(-(v + 65.0) / 18.0);
    alpha[1] = 0.07 * hb_exp(-(v + 65.0) / 20.0);
    beta[1] = 1.0 / (hb_exp(-(v + 35.0) / 10.0) + 1.0);
    alpha[2] = 0.01 * ref_vtrap(-(v + 55.0), 10.0);
    beta[2] = 0.125 * hb_exp(-(v + 65.0) / 80.0);
    for (int k = 0; k < 3; k++) {
        const double sum = alpha[k] + beta[k];
        tau[k] = 1.0 / (q10 * sum);
        inf[k] = alpha[k] / sum;
    }
}

/* rows minf, hinf, ninf, mtau, htau, ntau */
static void ref_table_init(double *table, double q10)
{
    const double dx = (REF_TABLE_MAX - REF_TABLE_MIN) / (REF_TABLE_N - 1);
    double x = REF_TABLE_MIN;
    for (int i = 0; i < REF_TABLE_N; i++, x += dx) {
        double inf[3], tau[3];
        ref_formulas(x, q10, inf, tau);
        for (int k = 0; k < 3; k++) {
            table[k * REF_TABLE_STRIDE + i] = inf[k];
            table[(k + 3) * REF_TABLE_STRIDE + i] = tau[k];
        }
    }
    for (int k = 0; k < 6; k++)
        table[k * REF_TABLE_STRIDE + REF_TABLE_N] = table[k * REF_TABLE_STRIDE + REF_TABLE_N - 1];
}

static void ref_table_lookup(const double *table, double v, double inf[3], double tau[3])
{
    const double xi = (REF_TABLE_N - 1) / (REF_TABLE_MAX - REF_TABLE_MIN) * (v - REF_TABLE_MIN);
    double xc = xi > 0.0 ? xi : 0.0;
    xc = xc < (double)(REF_TABLE_N - 1) ? xc : (double)(REF_TABLE_N - 1);
    const int i = (int)xc;
    const double theta = xc - (double)i;
    for (int k = 0; k < 3; k++) {
        const double *a = table + k * REF_TABLE_STRIDE + i;
        const double *b = table + (k + 3) * REF_TABLE_STRIDE + i;
        inf[k] = a[0] + theta * (a[1] - a[0]);
        tau[k] = b[0] + theta * (b[1] - b[0]);
    }
}

static void ref_gates(int lanes, int width, double dt, const double *table, double q10,
                      const double *v, double *s)
{
    for (int k = 0; k < lanes; k++) {
        double inf[3], tau[3];
        if (table) ref_table_lookup(table, v[k], inf, tau);
        else ref_formulas(v[k], q10, inf, tau);
        for (int q = 0; q < 3; q++)
            s[q * width + k] += (1.0 - hb_exp(-dt / tau[q])) * (inf[q] - s[q * width + k]);
    }
}

static void ref_hh_row(int lanes, int width, const double *v, const double *par, const double *s,
                       double *d, double *rhs)
{
    for (int k = 0; k < lanes; k++) {
        const double m = s[k], h = s[width + k], n = s[2 * width + k];
        const double gna = par[HB_HH_GNABAR * width + k] * m * m * m * h;
        const double gk = par[HB_HH_GKBAR * width + k] * n * n * n * n;
        const double gl = par[HB_HH_GL * width + k];
        rhs[k] += gna * (v[k] - par[HB_HH_ENA * width + k]) +
                  gk * (v[k] - par[HB_HH_EK * width + k]) + gl * (v[k] - par[HB_HH_EL * width + k]);
        d[k] += gna + gk + gl;
    }
}

#define W 8

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static uint64_t rng = 88172645463325252u;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53;
}

static void test_rates(void)
{
    static const double temperatures[] = {6.3, 16.0, 37.0};
    long points = 0, differ = 0;
    for (int t = 0; t < 3; t++) {
        const double q10 = pow(3.0, (temperatures[t] - 6.3) / 10.0);
        for (long i = -200000; i <= 200000; i++) {
            /* -200..200 mV in 1 uV steps, hitting vtrap's singular points -40 and -55 */
            const double v = (double)i * 1e-3;
            hbg_hh_vars_t s;
            memset(&s, 0, sizeof s);
            s.celsius = temperatures[t];
            hbg_hh_celsius(&s);
            hbg_hh_rates(&s, v);
            double inf[3], tau[3], e_inf[3], e_tau[3];
            ref_formulas(v, q10, inf, tau);
            hb_hh_rates_at(v, hb_hh_q10(temperatures[t]), NULL, e_inf, e_tau);
            const int ok = same(s.minf, inf[0]) && same(s.hinf, inf[1]) && same(s.ninf, inf[2]) &&
                           same(s.mtau, tau[0]) && same(s.htau, tau[1]) && same(s.ntau, tau[2]) &&
                           memcmp(e_inf, inf, sizeof inf) == 0 &&
                           memcmp(e_tau, tau, sizeof tau) == 0;
            differ += !ok;
            points++;
        }
    }
    CHECKF(differ == 0, "%ld of %ld points differ from the hand-written formulas", differ,
           points);
    CHECK(points == 3 * 400001);
}

/* A block of W lanes, one hh instance each on row 0. */
typedef struct {
    double v[W], d[W], rhs[W], field[9 * W];
    double e_na[W], e_k[W], i_na[W], i_k[W], didv_na[W], didv_k[W];
    int node[W];
    hb_ion_block_t ion[2];
    hb_cat_block_t blk;
} block_t;

static void make_block(block_t *b, double dt, double celsius)
{
    memset(b, 0, sizeof *b);
    for (int k = 0; k < W; k++) {
        b->v[k] = -100.0 + 160.0 * uniform();
        b->e_na[k] = 50.0 + uniform();
        b->e_k[k] = -77.0 - uniform();
        b->field[0 * W + k] = 0.12 * (0.5 + uniform());
        b->field[1 * W + k] = 0.036 * (0.5 + uniform());
        b->field[2 * W + k] = 0.0003 * (0.5 + uniform());
        b->field[3 * W + k] = -54.3 + uniform();
        for (int q = 4; q < 7; q++) b->field[q * W + k] = uniform();
    }
    b->ion[0] = (hb_ion_block_t){b->e_na, NULL, NULL, b->i_na, b->didv_na};
    b->ion[1] = (hb_ion_block_t){b->e_k, NULL, NULL, b->i_k, b->didv_k};
    b->blk = (hb_cat_block_t){W,      W,       1,        dt,   0.0,  celsius, b->v, b->d,
                              b->rhs, b->node, b->field, NULL, NULL, b->ion,  NULL, NULL,
                              NULL,   NULL,    -1, NULL};
}

/* hh.mod's TABLE (minf, mtau, hinf, htau, ninf, ntau), the catalogue's and the engine's,
 * against the hand-written one (minf, hinf, ninf, mtau, htau, ntau), row by row, and their
 * reads over a sweep of v. */
static double generated_table[3][hbg_hh_rates_TABLE_ROWS * hbg_hh_rates_TABLE_STRIDE];
static hb_hh_table_t engine_table[3];
static double written_table[3][6 * REF_TABLE_STRIDE];
static const double table_celsius[3] = {6.3, 16.0, 37.0};

static void test_table(void)
{
    static const int row_of[6] = {0, 3, 1, 4, 2, 5};
    CHECK((int)hbg_hh_rates_TABLE_STRIDE == (int)HB_HH_TABLE_STRIDE && hbg_hh_N_TABLE == 1 &&
          HB_HH_TABLE_STRIDE == REF_TABLE_STRIDE && HB_HH_TABLE_ROWS == 6);
    long differ = 0, points = 0;
    for (int t = 0; t < 3; t++) {
        hbg_hh_vars_t s;
        memset(&s, 0, sizeof s);
        s.celsius = table_celsius[t];
        hbg_hh_table_rates(&s, generated_table[t]);
        hb_hh_table_init(&engine_table[t], table_celsius[t], 1);
        ref_table_init(written_table[t], pow(3.0, (table_celsius[t] - 6.3) / 10.0));
        for (int q = 0; q < 6; q++)
            CHECKF(memcmp(generated_table[t] + q * HB_HH_TABLE_STRIDE,
                          written_table[t] + row_of[q] * HB_HH_TABLE_STRIDE,
                          sizeof(double) * HB_HH_TABLE_STRIDE) == 0,
                   "celsius %g, row %d", table_celsius[t], q);
        CHECKF(memcmp(generated_table[t], engine_table[t].table, sizeof generated_table[t]) == 0,
               "celsius %g: the engine's table is not the catalogue's", table_celsius[t]);
        s.table_rates = generated_table[t];
        for (long i = -120000; i <= 120000; i++, points++) { /* past both ends, by 1 uV */
            const double v = (double)i * 1e-3;
            hbg_hh_rates(&s, v);
            double inf[3], tau[3], e_inf[3], e_tau[3];
            ref_table_lookup(written_table[t], v, inf, tau);
            hb_hh_table_rates(&engine_table[t], v, e_inf, e_tau);
            differ += !(same(s.minf, inf[0]) && same(s.hinf, inf[1]) && same(s.ninf, inf[2]) &&
                        same(s.mtau, tau[0]) && same(s.htau, tau[1]) && same(s.ntau, tau[2]) &&
                        memcmp(e_inf, inf, sizeof inf) == 0 && memcmp(e_tau, tau, sizeof tau) == 0);
        }
    }
    CHECKF(differ == 0, "%ld of %ld table reads differ from the hand-written lookup", differ,
           points);
}

static void test_states(void)
{
    long differ = 0, values = 0;
    for (int trial = 0; trial < 4000; trial++) {
        block_t b;
        const int t = trial % 3, use_table = trial % 2;
        const double celsius = table_celsius[t];
        make_block(&b, trial % 5 ? 0.025 : 0.1, celsius);
        const double *tables[1] = {generated_table[t]};
        if (use_table) b.blk.table = tables;
        double gates[3 * W], ref[3 * W];
        for (int q = 0; q < 3; q++)
            memcpy(gates + q * W, b.field + (4 + q) * W, sizeof(double) * W);
        memcpy(ref, gates, sizeof gates);
        const hb_step_params_t p = {b.blk.dt, 1.0, 0.0, use_table ? engine_table[t].table : NULL,
                                    hb_hh_q10(celsius)};
        hb_step_gates_row(W, W, &p, b.v, gates);
        ref_gates(W, W, b.blk.dt, use_table ? written_table[t] : NULL,
                  pow(3.0, (celsius - 6.3) / 10.0), b.v, ref);
        hbg_hh_state_kernel(&b.blk, 0, 1);
        for (int i = 0; i < 3 * W; i++, values++)
            differ += !same(gates[i], b.field[4 * W + i]) || !same(gates[i], ref[i]);
    }
    CHECKF(differ == 0,
           "cnexp: %ld of %ld gate values differ between hb_step_gates_row, the catalogue's "
           "kernel and the hand-written update",
           differ, values);
}

static void test_currents(void)
{
    long exact = 0, values = 0, exact_no_k = 0, values_no_k = 0;
    double worst = 0.0;
    for (int trial = 0; trial < 4000; trial++) {
        block_t b;
        make_block(&b, 0.025, 6.3);
        const int no_k = trial % 2; /* gkbar 0: the n^4 product drops out */
        double par[6 * W], s[3 * W], d[W], rhs[W], ref_d[W], ref_rhs[W];
        for (int k = 0; k < W; k++) {
            if (no_k) b.field[1 * W + k] = 0.0;
            par[HB_HH_GNABAR * W + k] = b.field[0 * W + k];
            par[HB_HH_GKBAR * W + k] = b.field[1 * W + k];
            par[HB_HH_GL * W + k] = b.field[2 * W + k];
            par[HB_HH_EL * W + k] = b.field[3 * W + k];
            par[HB_HH_ENA * W + k] = b.e_na[k];
            par[HB_HH_EK * W + k] = b.e_k[k];
            for (int q = 0; q < 3; q++) s[q * W + k] = b.field[(4 + q) * W + k];
            d[k] = rhs[k] = 0.0;
            ref_d[k] = ref_rhs[k] = 0.0;
        }
        hb_step_hh_row(W, W, W, 1, b.v, par, s, d, rhs);
        ref_hh_row(W, W, b.v, par, s, ref_d, ref_rhs);
        hbg_hh_current_kernel(&b.blk, 0, 1);
        for (int k = 0; k < W; k++) {
            const int e = same(d[k], b.d[k]) && same(rhs[k], b.rhs[k]) && same(d[k], ref_d[k]) &&
                          same(rhs[k], ref_rhs[k]);
            if (no_k) {
                exact_no_k += e;
                values_no_k++;
            } else {
                exact += e;
                values++;
            }
            /* rhs relative to the size of its terms (it can cancel to near 0) */
            const double m = s[k], h = s[W + k], n = s[2 * W + k];
            const double terms =
                fabs(par[HB_HH_GNABAR * W + k] * m * m * m * h * (b.v[k] - b.e_na[k])) +
                fabs(par[HB_HH_GKBAR * W + k] * n * n * n * n * (b.v[k] - b.e_k[k])) +
                fabs(par[HB_HH_GL * W + k] * (b.v[k] - par[HB_HH_EL * W + k]));
            const double rel =
                fmax(fabs(d[k] - b.d[k]) / fabs(d[k]), fabs(rhs[k] - b.rhs[k]) / terms);
            worst = fmax(worst, rel);
            CHECK(
                same(b.i_na[k], b.field[7 * W + k] * (b.v[k] - b.e_na[k]))); /* ina into the ion */
        }
    }
    CHECKF(exact_no_k == values_no_k, "without gk: %ld of %ld bitwise", exact_no_k, values_no_k);
    CHECKF(exact == values, "with gk: %ld of %ld bitwise (worst relative difference %.3g)", exact,
           values, worst);
    printf("currents: %ld of %ld lanes bitwise: hb_step_hh_row, the catalogue's kernel and the "
           "hand-written row\n",
           exact + exact_no_k, values + values_no_k);
}

int main(void)
{
    test_rates();
    test_table();
    test_states();
    test_currents();
    return check_summary("nmodl_gen");
}
