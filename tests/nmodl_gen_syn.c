/* The NMODL code generator on NEURON's expsyn.mod and exp2syn.mod (build/gen/hbg_expsyn.h,
 * hbg_exp2syn.h, made at build time by nmodl_emit) against the engine's synapses of
 * common/sim_step.h (which call the default catalogue's generated ExpSyn and Exp2Syn), on
 * random states, weights, areas, v and dt: INITIAL (Exp2Syn's factor),
 * NET_RECEIVE (hb_syn_receive), the cnexp decay (hb_step_synapse_decay), the current and
 * conductance as densities of the row (hb_step_synapse_current, hb_syn_conductance), all
 * bitwise, with the hand-written site's constants computed as the .mod computes them
 * (hb_exp, hb_log), as src/sim/sim_layout.c now does; the test counts how often libm's exp
 * and log (which the layout used before) differ (docs/nmodl.md, section 5). The port of BBP's ProbAMPANMDA_EMS: its
 * release draws are its RANDOM stream's Philox numbers (so independent of the order events of
 * other synapses are processed in), its release rate is Use, its NET_RECEIVE writes its
 * per-connection weights back, and its conductance is NEURON's difference of the currents. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "check.h"
#include "hbg_exp2syn.h"
#include "hbg_expsyn.h"
#include "hbg_probampanmda.h"
#include "sim/sim.h"

#define W 8
#define TRIALS 4000
#define STEPS 6

static int same(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static uint64_t rng = 0x9E3779B97F4A7C15u;
static double uniform(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * 0x1.0p-53;
}

/* A block of W lanes, one synapse each on row 0 of its lane. */
typedef struct {
    double v[W], d[W], rhs[W], area[W], field[8 * W];
    int node[W];
    hb_cat_block_t blk;
} block_t;

static void make_block(block_t *b, double dt, double t)
{
    memset(b, 0, sizeof *b);
    for (int k = 0; k < W; k++) {
        b->v[k] = -100.0 + 160.0 * uniform();
        b->d[k] = uniform();
        b->rhs[k] = uniform() - 0.5;
        b->area[k] = 10.0 + 5000.0 * uniform(); /* [um2] */
    }
    b->blk = (hb_cat_block_t){W,      W,       1,        dt,   t,    6.3,    b->v, b->d,
                              b->rhs, b->node, b->field, NULL, NULL, NULL, NULL, b->area,
                              NULL,   NULL,    -1, NULL};
}

typedef struct {
    long compared, differ, libm_differ;
} tally_t;

static void tally(tally_t *t, int ok) { t->compared++, t->differ += !ok; }

static void test_expsyn(void)
{
    CHECK(hbg_expsyn_N_FIELD == 4 && hbg_expsyn_N_PARAM == 2); /* tau, e, g, i */
    CHECK(hbg_expsyn_NUMERIC_DIDV == 0 && hbg_expsyn_N_WEIGHT == 1); /* i = g*(v - e) */
    tally_t init = {0}, receive = {0}, decay = {0}, current = {0};
    for (int trial = 0; trial < TRIALS; trial++) {
        const double dt = 0.001 + 0.1 * uniform();
        block_t b;
        make_block(&b, dt, 0.0);
        hb_syn_site_t site[W], site_libm[W];
        double state[W], state_libm[W];
        for (int k = 0; k < W; k++) {
            const double tau = 0.05 + 20.0 * uniform(), e = -80.0 + 100.0 * uniform();
            b.field[0 * W + k] = tau;
            b.field[1 * W + k] = e;
            b.field[2 * W + k] = uniform(); /* g before INITIAL */
            site[k] = (hb_syn_site_t){0, HB_SYN_EXP, 1e2 / b.area[k], e, 0.0, 0.0, 1.0};
            site[k].decay1 = 1.0 - hb_exp(-dt / tau); /* the .mod's exp */
            site_libm[k] = site[k];
            site_libm[k].decay1 = 1.0 - exp(-dt / tau); /* the layout's before hb_exp */
            state[k] = state_libm[k] = 0.0;
        }
        hbg_expsyn_init_kernel(&b.blk, 0, 1);
        for (int k = 0; k < W; k++) tally(&init, same(b.field[2 * W + k], 0.0));
        for (int step = 0; step < STEPS; step++) {
            for (int k = 0; k < W; k++) { /* an event on some lanes */
                if (uniform() < 0.5) continue;
                double w = 0.1 * uniform();
                hbg_expsyn_net_receive_kernel(&b.blk, 0, k, &w, dt * step);
                hb_syn_receive(&site[k], &state[k], 1, w);
                hb_syn_receive(&site_libm[k], &state_libm[k], 1, w);
                tally(&receive, same(b.field[2 * W + k], state[k]));
            }
            double d[W], rhs[W];
            memcpy(d, b.d, sizeof d);
            memcpy(rhs, b.rhs, sizeof rhs);
            hbg_expsyn_current_kernel(&b.blk, 0, 1);
            for (int k = 0; k < W; k++) {
                hb_step_synapse_current(&site[k], &state[k], (size_t)k, b.v, d, rhs);
                tally(&current, same(b.d[k], d[k]) && same(b.rhs[k], rhs[k]) &&
                                    same(b.field[2 * W + k], hb_syn_conductance(&site[k], &state[k])));
            }
            hbg_expsyn_state_kernel(&b.blk, 0, 1);
            for (int k = 0; k < W; k++) {
                hb_step_synapse_decay(&site[k], &state[k]);
                hb_step_synapse_decay(&site_libm[k], &state_libm[k]);
                tally(&decay, same(b.field[2 * W + k], state[k]));
                decay.libm_differ += !same(state_libm[k], state[k]);
                state_libm[k] = state[k];
            }
        }
    }
    CHECKF(init.differ == 0, "%ld of %ld", init.differ, init.compared);
    CHECKF(receive.differ == 0 && receive.compared > 10000, "%ld of %ld", receive.differ,
           receive.compared);
    CHECKF(current.differ == 0 && current.compared == TRIALS * STEPS * W, "%ld of %ld",
           current.differ, current.compared);
    CHECKF(decay.differ == 0 && decay.compared == TRIALS * STEPS * W, "%ld of %ld", decay.differ,
           decay.compared);
    printf("ExpSyn: init %ld, NET_RECEIVE %ld, current %ld, decay %ld bitwise; with libm's exp "
           "in decay1 (sim_layout.c today) %ld of %ld decays differ\n",
           init.compared, receive.compared, current.compared, decay.compared, decay.libm_differ,
           decay.compared);
}

static void test_exp2syn(void)
{
    /* tau1, tau2, e, A, B, i, g, factor */
    CHECK(hbg_exp2syn_N_FIELD == 8 && hbg_exp2syn_N_PARAM == 3);
    tally_t factor = {0}, receive = {0}, decay = {0}, current = {0};
    for (int trial = 0; trial < TRIALS; trial++) {
        const double dt = 0.001 + 0.1 * uniform();
        block_t b;
        make_block(&b, dt, 0.0);
        hb_syn_site_t site[W];
        double state[W][2];
        for (int k = 0; k < W; k++) {
            /* 1e-9 < tau1/tau2 < 0.9999: exp2syn.mod's INITIAL leaves tau1 as it is */
            const double t2 = 0.5 + 30.0 * uniform(), t1 = t2 * (0.001 + 0.99 * uniform());
            const double e = -80.0 + 100.0 * uniform();
            b.field[0 * W + k] = t1;
            b.field[1 * W + k] = t2;
            b.field[2 * W + k] = e;
            b.field[3 * W + k] = b.field[4 * W + k] = uniform();
            /* src/sim/sim_layout.c's constants, with the .mod's hb_exp and hb_log */
            const double t_peak = (t1 * t2) / (t2 - t1) * hb_log(t2 / t1);
            site[k] = (hb_syn_site_t){0, HB_SYN_EXP2, 1e2 / b.area[k], e, 0.0, 0.0, 0.0};
            site[k].factor = 1.0 / (-hb_exp(-t_peak / t1) + hb_exp(-t_peak / t2));
            site[k].decay1 = 1.0 - hb_exp(-dt / t1);
            site[k].decay2 = 1.0 - hb_exp(-dt / t2);
            state[k][0] = state[k][1] = 0.0;
            const double libm = 1.0 / (-exp(-t_peak / t1) + exp(-t_peak / t2));
            factor.libm_differ += !same(libm, site[k].factor);
        }
        hbg_exp2syn_init_kernel(&b.blk, 0, 1);
        for (int k = 0; k < W; k++)
            tally(&factor, same(b.field[7 * W + k], site[k].factor) &&
                               same(b.field[3 * W + k], 0.0) && same(b.field[4 * W + k], 0.0));
        for (int step = 0; step < STEPS; step++) {
            for (int k = 0; k < W; k++) {
                if (uniform() < 0.5) continue;
                double w = 0.1 * uniform();
                hbg_exp2syn_net_receive_kernel(&b.blk, 0, k, &w, dt * step);
                hb_syn_receive(&site[k], state[k], 1, w);
                tally(&receive, same(b.field[3 * W + k], state[k][0]) &&
                                    same(b.field[4 * W + k], state[k][1]));
            }
            double d[W], rhs[W];
            memcpy(d, b.d, sizeof d);
            memcpy(rhs, b.rhs, sizeof rhs);
            hbg_exp2syn_current_kernel(&b.blk, 0, 1);
            for (int k = 0; k < W; k++) {
                hb_step_synapse_current(&site[k], state[k], (size_t)k, b.v, d, rhs);
                tally(&current, same(b.d[k], d[k]) && same(b.rhs[k], rhs[k]) &&
                                    same(b.field[6 * W + k], hb_syn_conductance(&site[k], state[k])));
            }
            hbg_exp2syn_state_kernel(&b.blk, 0, 1);
            for (int k = 0; k < W; k++) {
                hb_step_synapse_decay(&site[k], state[k]);
                tally(&decay, same(b.field[3 * W + k], state[k][0]) &&
                                  same(b.field[4 * W + k], state[k][1]));
            }
        }
    }
    CHECKF(factor.differ == 0, "%ld of %ld", factor.differ, factor.compared);
    CHECKF(receive.differ == 0 && receive.compared > 10000, "%ld of %ld", receive.differ,
           receive.compared);
    CHECKF(current.differ == 0 && current.compared == TRIALS * STEPS * W, "%ld of %ld",
           current.differ, current.compared);
    CHECKF(decay.differ == 0 && decay.compared == TRIALS * STEPS * W, "%ld of %ld", decay.differ,
           decay.compared);
    printf("Exp2Syn: INITIAL %ld, NET_RECEIVE %ld, current %ld, decay %ld bitwise; with libm's "
           "exp (sim_layout.c today) %ld of %ld factors differ\n",
           factor.compared, receive.compared, current.compared, decay.compared,
           factor.libm_differ, factor.compared);
}

/* exp2syn.mod's INITIAL moves tau1 to 0.9999 tau2 when tau1/tau2 > 0.9999 (NEURON's rule);
 * the generated INITIAL does so (and the factor follows), the hand-written site does not. */
static void test_exp2syn_clamp(void)
{
    block_t b;
    make_block(&b, 0.025, 0.0);
    for (int k = 0; k < W; k++) {
        b.field[0 * W + k] = 9.9995;
        b.field[1 * W + k] = 10.0;
    }
    hbg_exp2syn_vars_t s;
    hbg_exp2syn_load(&b.blk, 0, 0, &s);
    hbg_exp2syn_initial(&s);
    CHECKF(same(s.tau1, 0.9999 * 10.0), "tau1 %.17g", s.tau1);
    const double t1 = 0.9999 * 10.0, t2 = 10.0;
    const double tp = (t1 * t2) / (t2 - t1) * hb_log(t2 / t1);
    CHECK(same(s.factor, 1.0 / (-hb_exp(-tp / t1) + hb_exp(-tp / t2))));
    /* the clamped tau1 stays (parameters per lane): the decays use it, as NEURON's do */
    hbg_exp2syn_store(&b.blk, 0, 0, &s);
    CHECKF(same(b.field[0 * W + 0], 0.9999 * 10.0), "stored tau1 %.17g", b.field[0]);
    CHECKF(same(b.field[0 * W + 1], 9.9995), "lane 1's tau1 %.17g", b.field[1]);
}

static void test_probampanmda(void)
{
    enum { NF = hbg_probampanmda_N_FIELD, BLOCKS = 512 };
    CHECK(NF == 35 && hbg_probampanmda_N_PARAM == 12);
    CHECK(hbg_probampanmda_NUMERIC_DIDV == 1 && hbg_probampanmda_N_WEIGHT == 5); /* mggate(v) */
    /* GLOBALs: tau_r_AMPA, tau_r_NMDA, tau_d_NMDA, e, slope_mg, scale_mg, gmax,
     * nc_type_param, minis_single_vesicle, init_depleted */
    const double global[] = {0.2, 0.29, 43, 0, 0.062, 3.57, 0.001, 4, 0, 0};
    static const double param[12] = {1.7, 0.5, 100, 0, 1, 0, 1, 0, 0, 0, 0.71, 0};
    long released = 0, draws_ok = 0, weights_ok = 0, order_ok = 0, didv_ok = 0, n = 0;
    for (int b = 0; b < BLOCKS; b++) {
        double v[W], d[W] = {0}, rhs[W] = {0}, area[W], field[NF * W], again[NF * W];
        int node[W] = {0};
        hb_cat_block_t blk = {W,   W,    1,      0.025,  0.0,  34.0, v,    d,
                              rhs, node, field, NULL, global, NULL, NULL, area,
                              NULL, NULL, -1, NULL};
        for (int k = 0; k < W; k++) {
            v[k] = -90.0 + 100.0 * uniform();
            area[k] = 100.0 + 1000.0 * uniform();
            for (int q = 0; q < 12; q++) field[q * W + k] = param[q];
            field[32 * W + k] = 7.0;             /* id1: the run's seed */
            field[33 * W + k] = (double)b;       /* id2: the cell's gid */
            field[34 * W + k] = (double)(k + 3); /* id3: the synapse */
        }
        hbg_probampanmda_init_kernel(&blk, 0, 1);
        memcpy(again, field, sizeof field);
        for (int k = 0; k < W; k++) { /* an event of weight 1 on every lane */
            double w[5] = {1.0, 0.0, 0.0, 0.0, 0.0};
            hbg_probampanmda_net_receive_kernel(&blk, 0, k, w, 1.0);
            weights_ok += w[0] == 1.0 && w[1] == 1.0 && w[2] == 0.71;
            /* occupied from INITIAL (Nrrp 1), Fac 0: u = Use; one draw, release if < u */
            const hb_philox_ctr_t c = hb_philox_draw(7, (uint32_t)b, 0x80000000u | (uint32_t)(k + 3), 0);
            const int release = hb_philox_uniform(c.v[0], c.v[1]) < 0.5;
            const double a = field[12 * W + k], expect = ((1.0 / 1.0) * 1.0) * field[29 * W + k];
            draws_ok += field[31 * W + k] == 1.0 && (release ? same(a, expect) : a == 0.0) &&
                        field[26 * W + k] == (release ? 0.0 : 1.0);
            released += release;
            n++;
        }
        hb_cat_block_t blk2 = blk; /* the same events, lanes in the other order */
        blk2.field = again;
        for (int k = W - 1; k >= 0; k--) {
            double w[5] = {1.0, 0.0, 0.0, 0.0, 0.0};
            hbg_probampanmda_net_receive_kernel(&blk2, 0, k, w, 1.0);
        }
        order_ok += memcmp(again, field, sizeof field) == 0;
        for (int step = 0; step < 40; step++) hbg_probampanmda_state_kernel(&blk, 0, 1); /* 1 ms */
        hbg_probampanmda_current_kernel(&blk, 0, 1);
        for (int k = 0; k < W; k++) { /* NEURON's difference against the derivative */
            hbg_probampanmda_vars_t s;
            hbg_probampanmda_load(&blk, 0, k, &s);
            const double gn = s.gmax * (s.B_NMDA - s.A_NMDA), x = hb_exp(s.slope_mg * -s.v);
            const double mgg = 1.0 / (1.0 + x * (s.mg / s.scale_mg));
            const double dmgg = mgg * mgg * x * (s.mg / s.scale_mg) * s.slope_mg;
            const double exact = (s.gmax * (s.B_AMPA - s.A_AMPA) + gn * mgg + gn * dmgg * (s.v - s.e)) *
                                 (1e2 / area[k]);
            didv_ok += fabs(d[k] - exact) <= 1e-3 * fabs(exact) + 1e-300 &&
                       same(rhs[k], 0.0 + (s.i_AMPA + s.i_NMDA) * (1e2 / area[k])) &&
                       (s.A_AMPA == 0.0 || exact != 0.0);
        }
    }
    CHECKF(draws_ok == n, "%ld of %ld events drew the synapse's Philox numbers", draws_ok, n);
    CHECKF(weights_ok == n, "%ld of %ld weight vectors written back", weights_ok, n);
    CHECKF(order_ok == BLOCKS, "%ld of %d blocks the same in the other order", order_ok, BLOCKS);
    CHECKF(didv_ok == n, "%ld of %ld conductances within 1e-3 of di/dv", didv_ok, n);
    /* Use 0.5: the releases are binomial(n, 0.5); 5 sigma */
    CHECKF(fabs((double)released - 0.5 * (double)n) < 5.0 * sqrt(0.25 * (double)n),
           "%ld releases of %ld", released, n);
    printf("ProbAMPANMDA_EMS (port): %ld events drew their synapse's Philox stream, %ld released "
           "(Use 0.5), order-independent, di/dv by NEURON's difference\n",
           n, released);
}

int main(void)
{
    test_expsyn();
    test_exp2syn();
    test_exp2syn_clamp();
    test_probampanmda();
    return check_summary("nmodl_gen_syn");
}
