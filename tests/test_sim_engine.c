/*
 * The simulator's fused, Block-Interleaved engine (src/common/sim_step.h)
 * against a straightforward reference step written here from the public
 * pieces (hb_cable_step_system, hb_hines_solve) one cell at a time, the way
 * the first simulator did it. Many cells of several real morphologies,
 * passive, hh in the soma and hh everywhere, with different parameters and
 * clamps per cell (so every lane of a block differs), padding lanes, two
 * clamps at one node and one on a zero-area node; backward Euler and
 * Crank-Nicolson, table and formulas, both spike rules. Every voltage after
 * the run, every probe sample and every spike time are compared.
 *
 * Two references differ only in the solve. (a) ref_solve below: Algorithm 1
 * with one division per row, written here per cell in natural order (the
 * engine's arithmetic, hb_hines_recip_lanes_inline, not its code): the engine
 * performs the same operations in the same order, so they agree bit for bit
 * (checked: max relative difference 0). (b) the library's hb_hines_solve (two
 * divisions per row): every solve differs by a few ulp, which the hh dynamics
 * amplify over thousands of steps, so a bound, with the same spike counts.
 * Also groups of copies of one model (constants stored once per node,
 * hb_sim_shared_groups), against (a) bit for bit. SEQ and OMP agree bit for bit.
 * This is the CPU twin of tests/gpu/test_gpu_sim.c, which runs the same
 * engine on the GPU.
 *
 * Also: hb_exp within 2 ulp of libm's exp over its whole range.
 */
#define _POSIX_C_SOURCE 200809L
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hinesbatch.h"
#include "sim/sim.h"
#include "sim_cells.h"

#ifndef HB_DATA_DIR
#define HB_DATA_DIR "data"
#endif

/* ---- hb_exp ---- */

static double ulp_diff(double a, double b)
{
    if (a == b) return 0.0;
    const double u = b != 0.0 ? fabs(nextafter(b, INFINITY) - b) : DBL_TRUE_MIN;
    return fabs(a - b) / u;
}

static void test_exp(void)
{
    double worst = 0.0, worst_x = 0.0;
    uint64_t state = 0x9e3779b97f4a7c15ULL;
    for (int i = 0; i < 400000; i++) {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        const double u = (double)(state >> 11) / 9007199254740992.0;
        double x;
        switch (i % 4) {
        case 0: x = -745.0 + 1454.7 * u; break; /* everything */
        case 1: x = -2.0 * u; break;             /* cnexp's -dt/tau */
        case 2: x = -20.0 + 40.0 * u; break;     /* hh's rate arguments */
        default: x = -708.0 + 1416.0 * u; break; /* normal results */
        }
        const double e = ulp_diff(hb_exp(x), exp(x));
        if (e > worst) {
            worst = e;
            worst_x = x;
        }
    }
    printf("hb_exp: max %.2f ulp from libm (at x = %.17g)\n", worst, worst_x);
    CHECKF(worst <= 2.0, "hb_exp: %.2f ulp at x = %.17g", worst, worst_x);
    CHECK(hb_exp(0.0) == 1.0);
    CHECK(hb_exp(1.0) == exp(1.0) || ulp_diff(hb_exp(1.0), exp(1.0)) <= 1.0);
    CHECK(isinf(hb_exp(710.0)) && hb_exp(710.0) > 0 && isinf(hb_exp(INFINITY)));
    CHECK(hb_exp(-746.0) == 0.0 && hb_exp(-INFINITY) == 0.0);
    CHECK(isnan(hb_exp(NAN)));
    CHECK(hb_exp(-745.0) > 0.0 && hb_exp(-745.0) < 1e-322); /* subnormal, not flushed */
}

/* ---- the reference step: one cell, FLAT, public pieces ---- */

typedef struct {
    const hb_model_t *md;
    int m;
    double *v, *g, *im, *inj, *u, *l, *d, *rhs, *state; /* state: 3 per node */
} ref_cell_t;

static void ref_init(ref_cell_t *c, const hb_model_t *md, const hb_hh_table_t *table, double v0)
{
    c->md = md;
    c->m = md->m;
    const size_t m = (size_t)c->m;
    c->v = malloc(m * sizeof(double));
    c->g = malloc(m * sizeof(double));
    c->im = malloc(m * sizeof(double));
    c->inj = malloc(m * sizeof(double));
    c->u = malloc(m * sizeof(double));
    c->l = malloc(m * sizeof(double));
    c->d = malloc(m * sizeof(double));
    c->rhs = malloc(m * sizeof(double));
    c->state = malloc(3 * m * sizeof(double));
    CHECK_OK(hb_cable_offdiag(md->cable, c->u, c->l));
    double inf[3], tau[3];
    hb_hh_table_rates(table, v0, inf, tau);
    for (size_t i = 0; i < m; i++) {
        c->v[i] = v0;
        memcpy(&c->state[3 * i], inf, sizeof inf);
    }
}

static void ref_free(ref_cell_t *c)
{
    free(c->v);
    free(c->g);
    free(c->im);
    free(c->inj);
    free(c->u);
    free(c->l);
    free(c->d);
    free(c->rhs);
    free(c->state);
}

/* One division per row: d_i becomes 1/d_i after elimination; the substitution
 * multiplies (the engine's order of operations, docs/sim-engine.md). */
static void ref_solve(int m, const int *parent, const double *u, const double *l, double *d,
                      double *rhs)
{
    for (int i = m - 1; i > 0; i--) {
        const int p = parent[i];
        const double r = 1.0 / d[i];
        d[p] -= (u[i] * l[i]) * r;
        rhs[p] -= (u[i] * r) * rhs[i];
        d[i] = r;
    }
    d[0] = 1.0 / d[0];
    rhs[0] = rhs[0] * d[0];
    for (int i = 1; i < m; i++) rhs[i] = (rhs[i] - l[i] * rhs[parent[i]]) * d[i];
}

static int g_library_solve; /* reference (b): hb_hines_solve */

static void ref_step(ref_cell_t *c, long step, const hb_sim_options_t *o, const hb_hh_table_t *table)
{
    const hb_model_t *md = c->md;
    const int m = c->m, cn = o->method == HB_METHOD_CN;
    for (int i = 0; i < m; i++) {
        const double gp = md->has_pas[i] ? md->pas_g[i] : 0.0, ep = md->has_pas[i] ? md->pas_e[i] : 0.0;
        c->g[i] = gp;
        c->im[i] = gp * (c->v[i] - ep);
        c->inj[i] = 0.0;
        if (!md->has_hh[i]) continue;
        const double *p = &md->hh[(size_t)i * HB_HH_NPAR], *s = &c->state[3 * i];
        const double gna = p[HB_HH_GNABAR] * s[0] * s[0] * s[0] * s[1];
        const double gk = p[HB_HH_GKBAR] * s[2] * s[2] * s[2] * s[2];
        c->im[i] += gna * (c->v[i] - p[HB_HH_ENA]) + gk * (c->v[i] - p[HB_HH_EK]) +
                    p[HB_HH_GL] * (c->v[i] - p[HB_HH_EL]);
        c->g[i] += gna + gk + p[HB_HH_GL];
    }
    const double tm = ((double)step + 0.5) * o->dt_ms;
    for (int k = 0; k < md->n_iclamps; k++) {
        const hb_iclamp_t *st = &md->iclamps[k];
        if (tm >= st->del_ms && tm < st->del_ms + st->dur_ms) c->inj[st->node] += st->amp_na;
    }
    CHECK_OK(hb_cable_step_system(md->cable, cn ? 0.5 * o->dt_ms : o->dt_ms, c->u, c->l, c->v,
                                  c->g, c->im, c->inj, c->d, c->rhs));
    if (g_library_solve)
        CHECK_OK(hb_hines_solve(m, hb_cable_parent(md->cable), c->u, c->l, c->d, c->rhs));
    else
        ref_solve(m, hb_cable_parent(md->cable), c->u, c->l, c->d, c->rhs);
    for (int i = 0; i < m; i++) c->v[i] += (cn ? 2.0 : 1.0) * c->rhs[i];
    for (int i = 0; i < m; i++) {
        if (!md->has_hh[i]) continue;
        double inf[3], tau[3], *s = &c->state[3 * i];
        hb_hh_table_rates(table, c->v[i], inf, tau);
        for (int j = 0; j < 3; j++) s[j] += (1.0 - hb_exp(-o->dt_ms / tau[j])) * (inf[j] - s[j]);
    }
}

typedef struct {
    hb_method_t method;
    hb_spike_time_t rule;
    int table;
    double sample_dt;
    long steps;
} config_t;

/*
 * Runs `cells` with the engine (backend `be`) and with the reference; returns
 * the largest relative difference of voltages, samples and spike times, and
 * counts reference spikes into *spikes. Results of the engine are left in *out.
 */
static double compare_run(hb_model_t **cells, int n, const config_t *cfg, hb_backend_t be,
                          long *spikes, hb_sim_t **out, int *shared)
{
    hb_sim_options_t o;
    hb_sim_options_default(&o);
    o.method = cfg->method;
    o.spike_time = cfg->rule;
    o.hh_table = cfg->table;
    o.sample_dt_ms = cfg->sample_dt;
    o.backend = be;
    o.t_stop_ms = (double)cfg->steps * o.dt_ms;
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(cells, n, &o, &sim));
    *out = sim;
    if (!sim) return INFINITY;
    CHECK_OK(hb_sim_run(sim));
    *shared = hb_sim_shared_groups(sim);
    hb_hh_table_t table;
    hb_hh_table_init(&table, o.celsius, o.hh_table);
    const long every = cfg->sample_dt > 0 ? lround(cfg->sample_dt / o.dt_ms) : 1;
    double worst = 0.0;
    int probe = 0;
    for (int c = 0; c < n; c++) {
        ref_cell_t ref;
        ref_init(&ref, cells[c], &table, o.v_init_mv);
        const int np = cells[c]->n_probes;
        const double *trace[8], *spk[8];
        int nt[8], ns[8], seen[8] = {0}, sample = 1;
        unsigned char above[8];
        double v_prev[8];
        for (int p = 0; p < np; p++) {
            CHECK_OK(hb_sim_probe_trace(sim, probe + p, &trace[p], &nt[p]));
            CHECK_OK(hb_sim_spikes(sim, probe + p, &spk[p], &ns[p]));
            CHECK(nt[p] == (int)(cfg->steps / every) + 1);
            v_prev[p] = o.v_init_mv;
            above[p] = o.v_init_mv > cells[c]->probes[p].threshold_mv;
        }
        for (long s = 0; s < cfg->steps; s++) {
            ref_step(&ref, s, &o, &table);
            for (int p = 0; p < np; p++) {
                const hb_probe_t *pr = &cells[c]->probes[p];
                const double v = ref.v[pr->node], t = (double)(s + 1) * o.dt_ms;
                int up = v > pr->threshold_mv && !above[p];
                double ts = cfg->rule == HB_SPIKE_INTERPOLATE && v > v_prev[p]
                                ? t - o.dt_ms * (v - pr->threshold_mv) / (v - v_prev[p])
                                : t;
                above[p] = v > pr->threshold_mv;
                v_prev[p] = v;
                if (up) {
                    (*spikes)++;
                    if (seen[p] < ns[p]) worst = fmax(worst, fabs(spk[p][seen[p]] - ts) / fabs(ts));
                    else worst = INFINITY;
                    seen[p]++;
                }
                if ((s + 1) % every == 0 && sample < nt[p])
                    worst = fmax(worst, fabs(trace[p][sample] - v) / fabs(v));
            }
            if ((s + 1) % every == 0) sample++;
        }
        for (int p = 0; p < np; p++)
            CHECKF(seen[p] == ns[p], "cell %d probe %d: %d spikes, reference %d", c, p, ns[p], seen[p]);
        const double *v;
        CHECK_OK(hb_sim_voltages(sim, c, &v));
        for (int i = 0; i < ref.m; i++) worst = fmax(worst, fabs(v[i] - ref.v[i]) / fabs(ref.v[i]));
        probe += np;
        ref_free(&ref);
    }
    return worst;
}

/* Every voltage, sample and spike of two runs bitwise equal. */
static int same_results(const hb_sim_t *a, const hb_sim_t *b, hb_model_t *const *cells, int n)
{
    int same = 1;
    for (int c = 0; c < n; c++) {
        const double *va, *vb;
        CHECK_OK(hb_sim_voltages(a, c, &va));
        CHECK_OK(hb_sim_voltages(b, c, &vb));
        same &= memcmp(va, vb, (size_t)hb_cable_size(hb_model_cable(cells[c])) * sizeof *va) == 0;
    }
    for (int p = 0; p < hb_sim_probe_count(a); p++) {
        const double *ta, *tb;
        int na, nb;
        CHECK_OK(hb_sim_probe_trace(a, p, &ta, &na));
        CHECK_OK(hb_sim_probe_trace(b, p, &tb, &nb));
        same &= na == nb && memcmp(ta, tb, (size_t)na * sizeof *ta) == 0;
        CHECK_OK(hb_sim_spikes(a, p, &ta, &na));
        CHECK_OK(hb_sim_spikes(b, p, &tb, &nb));
        same &= na == nb && (na == 0 || memcmp(ta, tb, (size_t)na * sizeof *ta) == 0);
    }
    return same;
}

int main(void)
{
    test_exp();

    static const char *const files[] = {"simple.swc", "1220882a.CNG.swc",
                                        "mp_ma_40984_gc2.CNG.swc"};
    enum { N_FILES = 3, VARIANTS = 3, COPIES = 3 };
    hb_morph_t *morphs[N_FILES] = {NULL};
    hb_model_t *models[N_FILES][SIM_CELL_KINDS][VARIANTS];
    hb_model_t *cells[N_FILES * SIM_CELL_KINDS * VARIANTS * COPIES];
    int n = 0;
    for (int f = 0; f < N_FILES; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/morphologies/%s", HB_DATA_DIR, files[f]);
        CHECK_OK(hb_morph_load_swc(path, NULL, &morphs[f]));
        if (!morphs[f]) return check_summary("test_sim_engine");
        for (int k = 0; k < SIM_CELL_KINDS; k++)
            for (int v = 0; v < VARIANTS; v++) models[f][k][v] = sim_cells_make(morphs[f], k, v);
        /* Cells interleaved across kinds and variants: groups gather them back. */
        for (int c = 0; c < COPIES; c++)
            for (int v = 0; v < VARIANTS; v++)
                for (int k = 0; k < SIM_CELL_KINDS; k++) cells[n++] = models[f][k][v];
    }
    printf("%d cells (%d morphologies x %s/%s/%s x %d variants x %d copies)\n", n, N_FILES,
           sim_cell_kinds[0], sim_cell_kinds[1], sim_cell_kinds[2], VARIANTS, COPIES);

    const config_t configs[] = {
        {HB_METHOD_EULER, HB_SPIKE_STEP, 1, 0.0, 2000},
        {HB_METHOD_CN, HB_SPIKE_INTERPOLATE, 0, 0.1, 1200},
    };
    for (size_t k = 0; k < sizeof configs / sizeof *configs; k++) {
        const config_t *cfg = &configs[k];
        long spikes = 0;
        int shared = -1;
        hb_sim_t *seq = NULL, *omp = NULL;
        g_library_solve = 0;
        const double worst = compare_run(cells, n, cfg, HB_BACKEND_SEQ, &spikes, &seq, &shared);
        printf("%s, %s spikes, table %d, %ld steps: %ld reference spikes; max relative "
               "difference %.3g (%d of the groups shared)\n",
               cfg->method == HB_METHOD_CN ? "CN" : "BE",
               cfg->rule == HB_SPIKE_STEP ? "step" : "interpolated", cfg->table, cfg->steps,
               spikes, worst, shared);
        CHECKF(worst == 0.0, "engine vs reference: max relative difference %.3g (expected 0)", worst);
        CHECKF(spikes >= 20, "only %ld spikes: the comparison would not cover spiking", spikes);
        /* Every group mixes variants: the per-lane constants path. */
        CHECKF(shared == 0, "%d groups of differing cells were taken as copies", shared);
        if (k == 0 && hb_backend_available(HB_BACKEND_OMP)) { /* OMP: all cores, same bits */
            long spikes_omp = 0;
            const double w2 = compare_run(cells, n, cfg, HB_BACKEND_OMP, &spikes_omp, &omp, &shared);
            CHECKF(w2 == 0.0, "OMP engine vs reference: %.3g", w2);
            CHECK(same_results(seq, omp, cells, n));
        }
        hb_sim_destroy(seq);
        hb_sim_destroy(omp);

        /* (b) Against hb_hines_solve: a few ulp per solve (u / d vs u (1/d),
         * x / d vs x (1/d)), grown by the dynamics: measured 3.6e-10 (BE, 2,000
         * steps, 246 spikes) and 1.5e-11 (CN); bound 1e-8, spike counts equal
         * (compare_run checks them). */
        hb_sim_t *lib = NULL;
        long spikes_lib = 0;
        g_library_solve = 1;
        const double wl = compare_run(cells, n, cfg, HB_BACKEND_SEQ, &spikes_lib, &lib, &shared);
        g_library_solve = 0;
        printf("  vs the library's hb_hines_solve (two divisions per row): max relative "
               "difference %.3g\n", wl);
        CHECKF(wl <= 1e-8, "engine vs hb_hines_solve reference: %.3g (bound 1e-8)", wl);
        hb_sim_destroy(lib);
    }

    /* Copies of one model (constants once per node, hb_step_group_t.shared):
     * 19 copies each, so a block of 16 and one of 3 lanes plus padding lanes
     * (which then compute a copy too); every other copy a separately built
     * model with the same parameters (equal bits, not the same object). */
    {
        enum { N_COPIES = 19 };
        hb_model_t *copies[N_FILES * SIM_CELL_KINDS * N_COPIES];
        hb_model_t *twins[N_FILES][SIM_CELL_KINDS];
        int nc = 0;
        for (int f = 0; f < N_FILES; f++)
            for (int k = 0; k < SIM_CELL_KINDS; k++) {
                twins[f][k] = sim_cells_make(morphs[f], k, 1);
                for (int c = 0; c < N_COPIES; c++)
                    copies[nc++] = c % 2 ? twins[f][k] : models[f][k][1];
            }
        for (size_t k = 0; k < sizeof configs / sizeof *configs; k++) {
            config_t cfg = configs[k];
            cfg.steps = cfg.steps / 2;
            long spikes = 0;
            int shared = -1;
            hb_sim_t *sim = NULL;
            const double worst = compare_run(copies, nc, &cfg, HB_BACKEND_SEQ, &spikes, &sim, &shared);
            printf("copies (%d cells, %d groups shared), %s, %ld steps: %ld reference spikes; "
                   "max relative difference %.3g\n",
                   nc, shared, cfg.method == HB_METHOD_CN ? "CN" : "BE", cfg.steps, spikes, worst);
            CHECKF(worst == 0.0, "shared engine vs reference: %.3g (expected 0)", worst);
            CHECKF(shared == N_FILES * SIM_CELL_KINDS, "%d groups shared; expected %d", shared,
                   N_FILES * SIM_CELL_KINDS);
            CHECKF(spikes >= 20, "copies: only %ld spikes", spikes);
            hb_sim_destroy(sim);
        }
        for (int f = 0; f < N_FILES; f++)
            for (int k = 0; k < SIM_CELL_KINDS; k++) hb_model_destroy(twins[f][k]);
    }

    for (int f = 0; f < N_FILES; f++) {
        for (int k = 0; k < SIM_CELL_KINDS; k++)
            for (int v = 0; v < VARIANTS; v++) hb_model_destroy(models[f][k][v]);
        hb_morph_destroy(morphs[f]);
    }
    return check_summary("test_sim_engine");
}
