/*
 * One time step of the simulator, written once for the CPU and the GPU.
 *
 * Cells of one group (same matrix shape, same hh nodes) are stored
 * Block-Interleaved: blocks of `width` lanes (cells), element (node i, lane k)
 * of block b at b * m * width + i * width + k (docs/layouts.md); the blocks of a
 * mixed group hold cells of different shapes, each block its own rows and start
 * (hb_step_group_t.mixed, hb_step_mixed_lane). The CPU runs
 * hb_step_lanes on a whole block (lanes = width, a compile-time constant, so
 * every lane loop becomes vector instructions) while the block is in cache;
 * the CUDA kernel (src/cuda/sim_cuda.cu) runs it with one thread per lane
 * (lanes = 1, the base pointer moved to the lane). Same code, same operations
 * in the same order: the GPU (compiled without FMA contraction) reproduces the
 * CPU bit for bit.
 *
 * Plain C11 and CUDA C (HB_HOSTDEV from src/common/hostdev.h).
 */
#ifndef HB_COMMON_SIM_STEP_H
#define HB_COMMON_SIM_STEP_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "common/hb_math.h"
#include "common/hines_lanes.h"
#include "hinesbatch.h"
/* The built-in mechanisms' arithmetic, generated from NEURON's hh.mod, passive.mod, expsyn.mod
 * and exp2syn.mod (mechanisms/nrn/) by the NMODL code generator: the default catalogue's
 * headers, checked in and compared with the build's by nmodl_catalogue_repro. */
#include "common/builtin/hbg_default_Exp2Syn.h"
#include "common/builtin/hbg_default_ExpSyn.h"
#include "common/builtin/hbg_default_hh.h"
#include "common/builtin/hbg_default_pas.h"

/* Lanes per block: CPU (four AVX2 vectors: four independent chains in the
 * solve's latency-bound row recurrences; a block's d and rhs, 16 x 16 bytes a
 * row, stay in L2) and GPU (a warp). */
#define HB_SIM_CPU_LANES 16
#define HB_SIM_GPU_LANES 32

/* hh.mod's TABLE (FROM -100 TO 100 WITH 200, 1 mV), as the generated hh fills and reads it:
 * rows minf, mtau, hinf, htau, ninf, ntau, each with one repeated entry past the end, so that
 * the interpolation never branches. */
#define HB_HH_TABLE_STRIDE hbg_default_hh_rates_TABLE_STRIDE
#define HB_HH_TABLE_ROWS hbg_default_hh_rates_TABLE_ROWS

/* The area [um^2] a zero-area row uses for point currents: the cable's
 * nominal 100 um^2 (src/core/cable.c, ZERO_AREA_ROW_SCALE; tests/test_sim_engine.c
 * checks an IClamp on such a node against hb_cable_step_system). */
#define HB_ZERO_AREA_ROW_UM2 100.0

/* hh parameters per instance, in this order. */
enum { HB_HH_GNABAR, HB_HH_GKBAR, HB_HH_GL, HB_HH_EL, HB_HH_ENA, HB_HH_EK, HB_HH_NPAR };

/* ------------------------------------------------------------------------ */
/* The built-ins' formulas, one lane: the generated functions                */
/* ------------------------------------------------------------------------ */
/* hh.mod's q10 = 3^((celsius - 6.3)/10) at celsius [degC]: the generated code hoists this LOCAL
 * of rates() (it depends on celsius alone), so the engine computes it once per run. */
HB_HOSTDEV double hb_hh_q10(double celsius)
{
    hbg_default_hh_vars_t s = HB_ZERO_INIT;
    s.celsius = celsius;
    hbg_default_hh_celsius(&s);
    return s.hc_rates_q10;
}

/* hh.mod's rates(v) [mV]: steady states (m, h, n) and time constants [ms], from its TABLE
 * (`table`, HB_HH_TABLE_ROWS rows of HB_HH_TABLE_STRIDE) or, table NULL, its formulas with
 * q10 = hb_hh_q10(celsius). */
HB_HOSTDEV void hb_hh_rates_at(double v, double q10, const double *table, double inf[3],
                               double tau[3])
{
    hbg_default_hh_vars_t s = HB_ZERO_INIT;
    s.hc_rates_q10 = q10;
    s.table_rates = table;
    (void)hbg_default_hh_rates(&s, v);
    inf[0] = s.minf;
    inf[1] = s.hinf;
    inf[2] = s.ninf;
    tau[0] = s.mtau;
    tau[1] = s.htau;
    tau[2] = s.ntau;
}

/* pas (passive.mod) at v [mV] with g [S/cm^2], e [mV]: its current [mA/cm^2] and conductance. */
HB_HOSTDEV void hb_pas_current(double v, double g, double e, double *i, double *gi)
{
    hbg_default_pas_vars_t s = HB_ZERO_INIT;
    s.v = v;
    s.g = g;
    s.e = e;
    hbg_default_pas_currents(&s);
    *i = s.i;
    *gi = s.g_i;
}

/* ------------------------------------------------------------------------ */
/* A group of cells and one step over a run of its lanes                    */
/* ------------------------------------------------------------------------ */
/* IClamps of one cell at one node: pulses[first .. first + count). */
typedef struct {
    int node, first, count;
    double area_um2; /* the row's area (100 um^2 for zero-area nodes, as the cable) */
} hb_stim_site_t;

typedef struct {
    double del_ms, dur_ms, amp_na;
} hb_stim_pulse_t;

/* One synapse of one cell (hb_model_add_synapse): its row, and the constants of its step. */
typedef struct {
    int node;              /* matrix node */
    int kind;              /* HB_SYN_EXP or HB_SYN_EXP2 */
    double scale;          /* 1e2 / the row's membrane area [um^2]: [nA] -> [mA/cm^2] */
    double e;              /* reversal [mV] */
    double decay1, decay2; /* cnexp: 1 - exp(-dt/tau) of g (ExpSyn); of A (tau1), B (tau2) */
    double factor;         /* Exp2Syn: an event adds weight * factor to A and B; ExpSyn 1 */
} hb_syn_site_t;

/* Pointers are host memory on the CPU and device memory in a kernel. */
typedef struct {
    int m, width, count, blocks; /* nodes, lanes per block, cells, blocks */
    int n_hh;                    /* hh nodes (the same on every lane) */
    int shared;                  /* 1: copies of one model, constants once per node (below) */
    const int *parent;           /* m: Hines order */
    const int *hh_node;          /* n_hh */
    double *v;                   /* blocks * m * width */
    double *d, *rhs;             /* GPU: blocks * m * width scratch (CPU: NULL, per thread) */
    /* Constants. Per lane (shared 0): blocks * m * width in the layout, hh_par
     * blocks * n_hh * HB_HH_NPAR * width. Shared (1: every cell of the group has
     * the same bits in all of them): m values, one per node, and hh_par
     * n_hh * HB_HH_NPAR; padding lanes then compute an unclamped copy. */
    const double *u, *l;         /* off-diagonals */
    const double *cfac;          /* 1e-3 cm / dt [mA/cm^2/mV], 0 on zero-area nodes */
    const double *pas_g, *pas_e; /* 0 where there is no pas */
    const double *hh_par;
    double *hh_state;            /* blocks * n_hh * 3 * width: m, h, n */
    const int *site_start;       /* blocks * width + 1: stimulus sites of each slot */
    const hb_stim_site_t *sites;
    const hb_stim_pulse_t *pulses;
    /* Synapses (NULL: none): slot s has syns[syn_start[s] .. syn_start[s + 1]). State:
     * g [uS] (ExpSyn), or A, B [uS] (Exp2Syn, g = B - A). syn_lanes 0: synapse q's state at
     * syn_state[2 q], q = syn_start[s] + the cell's index. syn_lanes > 0: every cell of the
     * group has the same syn_lanes sites (those of slot 0, syns[0 .. syn_lanes)), so a
     * block's synapses are stepped as vectors over its lanes, the state lane-interleaved:
     * synapse q of lane k of block b at syn_state[((b syn_lanes + q) 2 + j) width + k],
     * j = 0 (g, A), 1 (B). Both orders add into a row's d and rhs in the same order. */
    const int *syn_start;
    const hb_syn_site_t *syns;
    double *syn_state;
    int syn_lanes;
    /* Shared groups on the CPU (else NULL): rows whose subtree has no hh node have
     * the same eliminated diagonal every step (cm/dt, pas and the axial terms are
     * constant), so its factors are computed once (src/sim/sim_layout.c, factor_fixed_rows)
     * and the step's solve skips their divisions: 1 / d (r), the parent's diagonal
     * update (u l) r (c), the rhs factor u r (f), per row. Same bits as computing
     * them each step. */
    const unsigned char *fixed_row; /* m: 1 for such a row */
    const double *fixed_r, *fixed_c, *fixed_f; /* m each */
    /* Mixed groups (mixed 1; else 0 and these NULL): the `width` lanes of a block hold cells of
     * different shapes (docs/layouts.md). Block b has (block_start[b + 1] - block_start[b]) /
     * width rows, element (row i, lane k) at block_start[b] + i width + k in v, d, rhs, the
     * constants (per lane: shared 0) and `parent` (each lane's parents, its own Hines order);
     * m is the largest block's rows. Its hh instances are hh_start[b] .. hh_start[b + 1] (n_hh:
     * the most of a block), instance j's node of lane k at hh_node[j width + k], parameters and
     * states as in other groups. Slot s steps its lane_m[s] rows and lane_hh[s] hh instances
     * (0 and 0: a padding lane); the rows and instances past them are padding (u = l = 0,
     * cfac = 1, parent 0, hh parameters 0), which the step never reads or writes. Synapses:
     * per slot (syn_lanes 0). fixed_row and fixed_r (CPU): per element, in the layout; the
     * factors c and f computed from them as hb_step_factor_fixed does (fixed_c, fixed_f NULL). */
    int mixed;
    const size_t *block_start; /* blocks + 1 */
    const size_t *hh_start;    /* blocks + 1 */
    const int *lane_m, *lane_hh; /* blocks * width */
    /* Mixed groups (else NULL): element e's u, l, pas_g and pas_e are
     * row_table[4 row_index[e] + 0 .. 3] (one byte streamed, not 32; NULL where the group has
     * more than 256 such quintuples with cfac), and its cfac is cfac_table[row_index[e]] (the
     * tree step's; the CPU's block step streams cfac with v). */
    const unsigned char *row_index;
    const double *row_table;
    const double *cfac_table; /* 256 [mA/cm^2/mV] */
    /* Mixed groups on the host (else NULL): per slot, the number of its shape where cells of
     * that shape are copies in the group (several slots with one number), else -1 (a cell of
     * its own shape): only copies can share constants (hb_sim_tree_share). */
    const int *shape_class;
    /* Mixed groups on the CPU (else NULL): row i of block b (byte block_start[b] / width + i)
     * is 1 where every lane has that row, fixed, with parent i - 1, itself fixed: the row's
     * axial terms and solve are then the same operations on contiguous lanes (vector code). */
    const unsigned char *chain_row;
    /* Catalogue mechanisms and ions of the group (src/common/cat_step.h; NULL: none, and the
     * step is exactly the hard-coded pas/hh/synapse step). Host arrays on the CPU, the device
     * copy in a kernel (common/cat_fused.h). */
    const struct hb_step_cat *cat;
} hb_step_group_t;

/* Element of (row 0, lane 0) of block b (b = blocks: the elements of v). */
HB_HOSTDEV size_t hb_step_block_base(const hb_step_group_t *g, int b)
{
    return g->mixed ? g->block_start[b] : (size_t)b * (size_t)g->m * (size_t)g->width;
}

/* Rows of block b. */
HB_HOSTDEV int hb_step_block_rows(const hb_step_group_t *g, int b)
{
    return g->mixed ? (int)((g->block_start[b + 1] - g->block_start[b]) / (size_t)g->width) : g->m;
}

/* First hh instance of block b (b = blocks: all instances; hh_state holds 3 width each). */
HB_HOSTDEV size_t hb_step_hh_base(const hb_step_group_t *g, int b)
{
    return g->mixed ? g->hh_start[b] : (size_t)b * (size_t)g->n_hh;
}

/* Element of node `node` of slot `slot`. */
HB_HOSTDEV size_t hb_step_element(const hb_step_group_t *g, int slot, int node)
{
    const int w = g->width;
    return hb_step_block_base(g, slot / w) + (size_t)node * (size_t)w + (size_t)(slot % w);
}

/* Rows of the cell in slot `slot`. */
HB_HOSTDEV int hb_step_slot_rows(const hb_step_group_t *g, int slot)
{
    return g->mixed ? g->lane_m[slot] : g->m;
}

typedef struct {
    double dt;           /* [ms]: cnexp */
    double factor;       /* v += factor dv: 1 backward Euler, 2 Crank-Nicolson */
    double t_mid;        /* (step + 1/2) dt: IClamps */
    const double *table; /* hh table (hb_hh_rates_at) or NULL: the formulas */
    double q10;          /* for the formulas: hb_hh_q10 */
} hb_step_params_t;

/* Pass A, one row: pas conductance into d and its current into rhs. */
/* Constants are read at c[k * cl]: cl = 1 per lane, cl = 0 one value for all
 * lanes (shared groups; the callers pass a constant, so either way the lane
 * loop is vector code). */
HB_HOSTDEV void hb_step_pas_row(int lanes, int cl, const double *HB_RESTRICT v,
                                              const double *HB_RESTRICT g,
                                              const double *HB_RESTRICT e,
                                              double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    HB_SIMD
    for (int k = 0; k < lanes; k++) {
        double i, gi;
        hb_pas_current(v[k], g[k * cl], e[k * cl], &i, &gi);
        d[k] = gi;
        rhs[k] = i;
    }
}

/* hh's currents at one node: conductance added to d, current to rhs.
 * Parameter q of lane k at par[q * pq + k * cl]. */
HB_HOSTDEV void hb_step_hh_row(int lanes, int width, int pq, int cl,
                                             const double *HB_RESTRICT v,
                                             const double *HB_RESTRICT par,
                                             const double *HB_RESTRICT s,
                                             double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    HB_SIMD
    for (int k = 0; k < lanes; k++) {
        hbg_default_hh_vars_t x = HB_ZERO_INIT;
        x.v = v[k];
        x.gnabar = par[HB_HH_GNABAR * pq + k * cl];
        x.gkbar = par[HB_HH_GKBAR * pq + k * cl];
        x.gl = par[HB_HH_GL * pq + k * cl];
        x.el = par[HB_HH_EL * pq + k * cl];
        x.ena = par[HB_HH_ENA * pq + k * cl];
        x.ek = par[HB_HH_EK * pq + k * cl];
        x.m = s[k];
        x.h = s[width + k];
        x.n = s[2 * width + k];
        hbg_default_hh_currents(&x);
        /* the currents and conductances summed in the BREAKPOINT's order, as the generated
         * current kernel does */
        rhs[k] += x.ina + x.ik + x.il;
        d[k] += x.g_ina + x.g_ik + x.g_il;
    }
}

/* Pass B, one row i >= 1: finish the row (d = cm/dt + g, rhs = -i), then the
 * axial terms with the parent row p (already finished, p < i). */
HB_HOSTDEV void hb_step_axial_row(int lanes, int cl, const double *HB_RESTRICT cfac,
                                                const double *HB_RESTRICT u,
                                                const double *HB_RESTRICT l,
                                                const double *HB_RESTRICT v_i,
                                                const double *HB_RESTRICT v_p,
                                                double *HB_RESTRICT d_i, double *HB_RESTRICT rhs_i,
                                                double *HB_RESTRICT d_p, double *HB_RESTRICT rhs_p)
{
    HB_SIMD
    for (int k = 0; k < lanes; k++) {
        const double dv = v_p[k] - v_i[k];
        const double r = (0.0 - rhs_i[k]) - l[k * cl] * dv;
        rhs_p[k] += u[k * cl] * dv;
        d_i[k] = (cfac[k * cl] + d_i[k]) - l[k * cl];
        d_p[k] -= u[k * cl];
        rhs_i[k] = r;
    }
}

HB_HOSTDEV void hb_step_root_row(int lanes, int cl, const double *HB_RESTRICT cfac,
                                               double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    HB_SIMD
    for (int k = 0; k < lanes; k++) {
        d[k] = cfac[k * cl] + d[k];
        rhs[k] = 0.0 - rhs[k];
    }
}

HB_HOSTDEV void hb_step_update_row(int lanes, double factor,
                                                 const double *HB_RESTRICT dv,
                                                 double *HB_RESTRICT v)
{
    HB_SIMD
    for (int k = 0; k < lanes; k++) v[k] += factor * dv[k];
}

/* hh.mod's DERIVATIVE at one hh node with the new v (cnexp: s += (1 - exp(-dt / tau)) (inf - s)).
 * The rates first (table gathers, lane by lane), then the generated update of all lanes
 * (exp and division: vector code). lanes <= HB_SIM_CPU_LANES. */
HB_HOSTDEV void hb_step_gates_row(int lanes, int width, const hb_step_params_t *p,
                                                const double *HB_RESTRICT v,
                                                double *HB_RESTRICT s)
{
    double inf[3][HB_SIM_CPU_LANES], tau[3][HB_SIM_CPU_LANES];
    for (int k = 0; k < lanes; k++) {
        double a[3], b[3];
        hb_hh_rates_at(v[k], p->q10, p->table, a, b);
        for (int q = 0; q < 3; q++) {
            inf[q][k] = a[q];
            tau[q][k] = b[q];
        }
    }
    HB_SIMD
    for (int k = 0; k < lanes; k++) {
        hbg_default_hh_vars_t x = HB_ZERO_INIT;
        x.dt = p->dt;
        x.m = s[k];
        x.h = s[width + k];
        x.n = s[2 * width + k];
        x.minf = inf[0][k];
        x.hinf = inf[1][k];
        x.ninf = inf[2][k];
        x.mtau = tau[0][k];
        x.htau = tau[1][k];
        x.ntau = tau[2][k];
        hbg_default_hh_cnexp(&x);
        s[k] = x.m;
        s[width + k] = x.h;
        s[2 * width + k] = x.n;
    }
}

/*
 * hb_hines_recip_lanes_inline (one division per row) for a shared group whose
 * fixed rows (hb_step_group_t.fixed_row) bring their factors: the same
 * operations on the same values, so the same bits, without those rows' divisions.
 * A fixed row's parent diagonal is only updated when the parent is not fixed
 * (a fixed parent's 1 / d is already known). Its rows one by one below (the CPU engine also
 * interleaves them over cells), then the whole solve.
 */
/* Its elimination of row i (elements from `row`, its parent p's from `prow`). */
HB_HOSTDEV void hb_step_fixed_eliminate(int i, int p, size_t row, size_t prow, int lanes,
                                        const double *HB_RESTRICT u,
                                        const double *HB_RESTRICT l,
                                        const unsigned char *HB_RESTRICT fixed,
                                        const double *HB_RESTRICT fc,
                                        const double *HB_RESTRICT ff, double *HB_RESTRICT d,
                                        double *HB_RESTRICT rhs)
{
    if (fixed[i]) {
        const double c = fc[i], f = ff[i];
        double *HB_RESTRICT rhs_p = rhs + prow;
        const double *HB_RESTRICT rhs_i = rhs + row;
        if (!fixed[p]) {
            double *HB_RESTRICT d_p = d + prow;
            HB_SIMD
            for (int k = 0; k < lanes; ++k) d_p[k] -= c;
        }
        HB_SIMD
        for (int k = 0; k < lanes; ++k) rhs_p[k] -= f * rhs_i[k];
    } else {
        hb_hines_recip_eliminate_row((size_t)lanes, 0, u[i], l[i], u + i, l + i, d + row,
                                     rhs + row, d + prow, rhs + prow);
    }
}

/* Its root row. */
HB_HOSTDEV void hb_step_fixed_root(int lanes, const unsigned char *HB_RESTRICT fixed,
                                   const double *HB_RESTRICT fr, double *HB_RESTRICT d,
                                   double *HB_RESTRICT rhs)
{
    if (fixed[0]) {
        const double r = fr[0];
        HB_SIMD
        for (int k = 0; k < lanes; ++k) rhs[k] = rhs[k] * r;
    } else {
        hb_hines_recip_root((size_t)lanes, d, rhs);
    }
}

/* Its substitution of row i. */
HB_HOSTDEV void hb_step_fixed_substitute(int i, size_t row, size_t prow, int lanes,
                                         const double *HB_RESTRICT l,
                                         const unsigned char *HB_RESTRICT fixed,
                                         const double *HB_RESTRICT fr,
                                         const double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    const double li = l[i];
    const double *HB_RESTRICT rhs_p = rhs + prow;
    double *HB_RESTRICT rhs_i = rhs + row;
    if (fixed[i]) {
        const double r = fr[i];
        HB_SIMD
        for (int k = 0; k < lanes; ++k) rhs_i[k] = (rhs_i[k] - li * rhs_p[k]) * r;
    } else {
        hb_hines_recip_substitute_row((size_t)lanes, 0, li, l + i, d + row, rhs_p, rhs_i);
    }
}

HB_HOSTDEV void hb_step_solve_fixed(int m, const int *HB_RESTRICT parent, size_t w,
                                                  int lanes, const double *HB_RESTRICT u,
                                                  const double *HB_RESTRICT l,
                                                  const unsigned char *HB_RESTRICT fixed,
                                                  const double *HB_RESTRICT fr,
                                                  const double *HB_RESTRICT fc,
                                                  const double *HB_RESTRICT ff,
                                                  double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    for (int i = m - 1; i > 0; --i)
        hb_step_fixed_eliminate(i, parent[i], (size_t)i * w, (size_t)parent[i] * w, lanes, u, l,
                                fixed, fc, ff, d, rhs);
    hb_step_fixed_root(lanes, fixed, fr, d, rhs);
    for (int i = 1; i < m; ++i)
        hb_step_fixed_substitute(i, (size_t)i * w, (size_t)parent[i] * w, lanes, l, fixed, fr, d,
                                 rhs);
}

/*
 * The factors hb_step_solve_fixed uses, from the assembled diagonal d (one lane; d is
 * consumed): the rows marked in `fixed` eliminated as hb_hines_recip_eliminate_row does,
 * r = 1 / d_i, c = (u l) r, f = u r, d_p -= c; 0 for the other rows (and c, f of the root).
 */
static inline void hb_step_factor_fixed(int m, const int *parent, const double *u,
                                        const double *l, const unsigned char *fixed, double *d,
                                        double *fr, double *fc, double *ff)
{
    for (int i = m - 1; i >= 0; i--) {
        fr[i] = fc[i] = ff[i] = 0.0;
        if (!fixed[i]) continue;
        const double r = 1.0 / d[i];
        fr[i] = r;
        if (i == 0) break;
        fc[i] = (u[i] * l[i]) * r;
        ff[i] = u[i] * r;
        d[parent[i]] -= fc[i];
    }
}

/* A synapse's current [nA] (*i) and conductance [uS] (*g) at v [mV] from its state a (ExpSyn's
 * g, Exp2Syn's A) and b (Exp2Syn's B): the generated BREAKPOINTs. */
HB_HOSTDEV void hb_syn_current(int kind, double e, double a, double b, double v, double *i,
                               double *g)
{
    if (kind == HB_SYN_EXP2) {
        hbg_default_Exp2Syn_vars_t s = HB_ZERO_INIT;
        s.v = v;
        s.e = e;
        s.A = a;
        s.B = b;
        hbg_default_Exp2Syn_currents(&s);
        *i = s.i;
        *g = s.g_i;
    } else {
        hbg_default_ExpSyn_vars_t s = HB_ZERO_INIT;
        s.v = v;
        s.e = e;
        s.g = a;
        hbg_default_ExpSyn_currents(&s);
        *i = s.i;
        *g = s.g_i;
    }
}

/* A synapse's conductance [uS] from its state. */
HB_HOSTDEV double hb_syn_conductance(const hb_syn_site_t *syn, const double *state)
{
    double i, g;
    hb_syn_current(syn->kind, syn->e, state[0], syn->kind == HB_SYN_EXP2 ? state[1] : 0.0, 0.0,
                   &i, &g);
    return g;
}

/* Pass H for a synapse (element `at` of the block's rows): its current g (v - e) [nA] and
 * conductance, as densities of its row (NEURON's nrn_cur: times 1e2 / area), into rhs (still
 * +i) and d. */
HB_HOSTDEV void hb_step_synapse_current(const hb_syn_site_t *syn, const double *state,
                                        size_t at, const double *v, double *d, double *rhs)
{
    double i, g;
    hb_syn_current(syn->kind, syn->e, state[0], syn->kind == HB_SYN_EXP2 ? state[1] : 0.0, v[at],
                   &i, &g);
    rhs[at] += i * syn->scale;
    d[at] += g * syn->scale;
}

/* Pass S for the cell in slot `slot`: its IClamps at t + dt/2 into rhs (still +i). rhs points
 * at the slot's row 0 (row stride w). */
HB_HOSTDEV void hb_step_slot_stimuli(const hb_step_group_t *g, const hb_step_params_t *p,
                                     int slot, size_t w, double *rhs)
{
    for (int q = g->site_start[slot]; q < g->site_start[slot + 1]; q++) {
        const hb_stim_site_t *site = &g->sites[q];
        double inj = 0.0; /* [nA] */
        for (int c = site->first; c < site->first + site->count; c++) {
            const hb_stim_pulse_t *pulse = &g->pulses[c];
            if (p->t_mid >= pulse->del_ms && p->t_mid < pulse->del_ms + pulse->dur_ms)
                inj += pulse->amp_na;
        }
        rhs[(size_t)site->node * w] -= inj * 1e2 / site->area_um2;
    }
}

/* Pass Y for the cell in slot `slot`, its synapses' state per slot (syn_lanes 0); v, d and rhs
 * point at the slot's row 0 (row stride w). */
HB_HOSTDEV void hb_step_slot_synapses(const hb_step_group_t *g, int slot, size_t w,
                                      const double *v, double *d, double *rhs)
{
    for (int q = g->syn_start[slot]; q < g->syn_start[slot + 1]; q++)
        hb_step_synapse_current(&g->syns[q], g->syn_state + 2 * (size_t)q,
                                (size_t)g->syns[q].node * w, v, d, rhs);
}

/* Pass G for a synapse: cnexp with the new v, x += (1 - exp(-dt/tau)) (0 - x). */
HB_HOSTDEV void hb_step_synapse_decay(const hb_syn_site_t *syn, double *state)
{
    state[0] += syn->decay1 * (0.0 - state[0]);
    if (syn->kind == HB_SYN_EXP2) state[1] += syn->decay2 * (0.0 - state[1]);
}

/* An event of weight w [uS] (NEURON's NET_RECEIVE); the state's second value (Exp2Syn's B)
 * `stride` after its first. */
HB_HOSTDEV void hb_syn_receive(const hb_syn_site_t *syn, double *state, size_t stride, double w)
{
    double weight[1] = {w};
    if (syn->kind == HB_SYN_EXP2) {
        hbg_default_Exp2Syn_vars_t s = HB_ZERO_INIT;
        s.A = state[0];
        s.B = state[stride];
        s.factor = syn->factor;
        hbg_default_Exp2Syn_net_receive(NULL, &s, weight); /* no FOR_NETCONS: no block */
        state[0] = s.A;
        state[stride] = s.B;
    } else {
        hbg_default_ExpSyn_vars_t s = HB_ZERO_INIT;
        s.g = state[0];
        hbg_default_ExpSyn_net_receive(NULL, &s, weight);
        state[0] = s.g;
    }
}

/*
 * One whole step (NEURON's fixed step, docs/sim-engine.md) of lanes
 * lane0 .. lane0 + lanes - 1 of block `block`; `width` must equal g->width
 * and `shared` g->shared (passed separately so that callers make them
 * constants: shared groups read each constant once per row for all lanes). d and rhs are the
 * matrix's scratch rows for these lanes (row stride `width`): the CPU passes
 * one cache-resident block buffer per thread, the GPU g->d, g->rhs + base.
 *   A  pas: d = g, rhs = i at v(t)            (per row)
 *   H  hh:  d += g_hh, rhs += i_hh             (per hh node)
 *   S  IClamps at t + dt/2: rhs -= amp/area    (per site; rhs is still +i)
 *   Y  synapses: rhs += g (v - e)/area, d += g/area (per synapse)
 *   B  d = cm/dt + d, rhs = -rhs, axial terms  (per row, root first)
 *   .  Hines solve (hb_hines_recip_lanes_inline, one division per row): rhs = dv
 *   C  v += factor dv                          (per row)
 *   G  gates with the new v                    (per hh node), synapse states (cnexp)
 * The order of the floating-point operations of every node is that of
 * hb_cable_step_system on g and i summed as pas + hh, then the solve above;
 * shared and per-lane groups give the same bits.
 */
/* Passes A to Y of hb_step_lanes: the membrane's conductance in d and current in rhs. */
HB_HOSTDEV void hb_step_lanes_membrane(const hb_step_group_t *g, const hb_step_params_t *p,
                                       int block, int lane0, int lanes, int width, int shared,
                                       double *d, double *rhs)
{
    const int m = g->m;
    const size_t base = (size_t)block * (size_t)m * (size_t)width + (size_t)lane0;
    const size_t w = (size_t)width;
    /* Constant (node i, lane k) at cbase + i * crow + k * cl. */
    const int cl = shared ? 0 : 1;
    const size_t cbase = shared ? 0 : base, crow = shared ? 1 : w;
    double *v = g->v + base;
    const double *pg = g->pas_g + cbase, *pe = g->pas_e + cbase;
    const size_t hh_base = (size_t)block * (size_t)g->n_hh;


    for (int i = 0; i < m; i++) {
        const size_t r = (size_t)i * w, c = (size_t)i * crow;
        hb_step_pas_row(lanes, cl, v + r, pg + c, pe + c, d + r, rhs + r);
    }
    for (int j = 0; j < g->n_hh; j++) {
        const size_t r = (size_t)g->hh_node[j] * w;
        const double *par = shared ? g->hh_par + (size_t)j * HB_HH_NPAR
                                   : g->hh_par + (hh_base + (size_t)j) * HB_HH_NPAR * w +
                                         (size_t)lane0;
        hb_step_hh_row(lanes, width, shared ? 1 : width, cl, v + r, par,
                       g->hh_state + (hh_base + (size_t)j) * 3 * w + (size_t)lane0, d + r,
                       rhs + r);
    }
    for (int k = 0; k < lanes; k++)
        hb_step_slot_stimuli(g, p, block * width + lane0 + k, w, rhs + k);
    if (g->syn_start && g->syn_lanes) {
        const int nq = g->syn_lanes;
        double *st = g->syn_state + (size_t)block * (size_t)nq * 2 * w + (size_t)lane0;
        for (int q = 0; q < nq; q++) {
            const hb_syn_site_t *syn = &g->syns[q];
            const size_t r = (size_t)syn->node * w;
            const double *a = st + (size_t)q * 2 * w, *b = a + w, e = syn->e, scale = syn->scale;
            const int kind = syn->kind;
            for (int k = 0; k < lanes; k++) {
                double ik, gk;
                hb_syn_current(kind, e, a[k], kind == HB_SYN_EXP2 ? b[k] : 0.0,
                               v[r + (size_t)k], &ik, &gk);
                rhs[r + (size_t)k] += ik * scale;
                d[r + (size_t)k] += gk * scale;
            }
        }
    } else if (g->syn_start)
        for (int k = 0; k < lanes; k++)
            hb_step_slot_synapses(g, block * width + lane0 + k, w, v + k, d + k, rhs + k);
}

/* Pass B of hb_step_lanes: d = cm/dt + g, rhs = -i, the axial terms. */
HB_HOSTDEV void hb_step_lanes_axial(const hb_step_group_t *g, int block, int lane0, int lanes,
                                    int width, int shared, double *d, double *rhs)
{
    const int m = g->m;
    const size_t base = (size_t)block * (size_t)m * (size_t)width + (size_t)lane0;
    const size_t w = (size_t)width;
    const int cl = shared ? 0 : 1;
    const size_t cbase = shared ? 0 : base, crow = shared ? 1 : w;
    const double *v = g->v + base;
    const double *u = g->u + cbase, *l = g->l + cbase, *cfac = g->cfac + cbase;
    const int *parent = g->parent;
    hb_step_root_row(lanes, cl, cfac, d, rhs);
    for (int i = 1; i < m; i++) {
        const size_t r = (size_t)i * w, pr = (size_t)parent[i] * w, c = (size_t)i * crow;
        hb_step_axial_row(lanes, cl, cfac + c, u + c, l + c, v + r, v + pr, d + r, rhs + r,
                          d + pr, rhs + pr);
    }
}

/* Passes A to B of hb_step_lanes: the block's matrix assembled in d and rhs. */
HB_HOSTDEV void hb_step_lanes_assemble(const hb_step_group_t *g, const hb_step_params_t *p,
                                       int block, int lane0, int lanes, int width, int shared,
                                       double *d, double *rhs)
{
    hb_step_lanes_membrane(g, p, block, lane0, lanes, width, shared, d, rhs);
    hb_step_lanes_axial(g, block, lane0, lanes, width, shared, d, rhs);
}

/* The solve of hb_step_lanes: rhs = dv. */
HB_HOSTDEV void hb_step_lanes_solve(const hb_step_group_t *g, int block, int lane0, int lanes,
                                    int width, int shared, double *d, double *rhs)
{
    const int m = g->m;
    const size_t base = (size_t)block * (size_t)m * (size_t)width + (size_t)lane0;
    const size_t w = (size_t)width;
    const int cl = shared ? 0 : 1;
    const size_t cbase = shared ? 0 : base, crow = shared ? 1 : w;
    const double *u = g->u + cbase, *l = g->l + cbase;
    const int *parent = g->parent;
    if (shared && g->fixed_row)
        hb_step_solve_fixed(m, parent, w, lanes, u, l, g->fixed_row, g->fixed_r, g->fixed_c,
                            g->fixed_f, d, rhs);
    else
        hb_hines_recip_lanes_inline(m, parent, w, (size_t)lanes, u, l, crow, (size_t)cl, d, rhs);
}

/* Passes C and G of hb_step_lanes: v += factor dv, then gates and synapse states. */
HB_HOSTDEV void hb_step_lanes_update(const hb_step_group_t *g, const hb_step_params_t *p,
                                     int block, int lane0, int lanes, int width,
                                     const double *rhs)
{
    const int m = g->m;
    const size_t base = (size_t)block * (size_t)m * (size_t)width + (size_t)lane0;
    const size_t w = (size_t)width;
    double *v = g->v + base;
    const size_t hh_base = (size_t)block * (size_t)g->n_hh;
    for (int i = 0; i < m; i++) {
        const size_t r = (size_t)i * w;
        hb_step_update_row(lanes, p->factor, rhs + r, v + r);
    }
    for (int j = 0; j < g->n_hh; j++)
        hb_step_gates_row(lanes, width, p, v + (size_t)g->hh_node[j] * w,
                          g->hh_state + (hh_base + (size_t)j) * 3 * w + (size_t)lane0);
    if (g->syn_start && g->syn_lanes) {
        const int nq = g->syn_lanes;
        double *st = g->syn_state + (size_t)block * (size_t)nq * 2 * w + (size_t)lane0;
        for (int q = 0; q < nq; q++) {
            const hb_syn_site_t *syn = &g->syns[q];
            double *a = st + (size_t)q * 2 * w, *b = a + w;
            const double k1 = syn->decay1, k2 = syn->decay2;
            for (int k = 0; k < lanes; k++) a[k] += k1 * (0.0 - a[k]);
            if (syn->kind == HB_SYN_EXP2)
                for (int k = 0; k < lanes; k++) b[k] += k2 * (0.0 - b[k]);
        }
    } else if (g->syn_start) {
        const int first = block * width + lane0;
        for (int q = g->syn_start[first]; q < g->syn_start[first + lanes]; q++)
            hb_step_synapse_decay(&g->syns[q], g->syn_state + 2 * (size_t)q);
    }
}

/*
 * One lane of a mixed block (hb_step_group_t.mixed): hb_step_lanes' passes for the cell in slot
 * block * width + lane, on its own rows (lane_m), parents and hh instances; d and rhs point at
 * the lane's row 0 of the block's scratch (row stride width). Every operation on the cell's
 * values is the one hb_step_lanes performs on it in a group of its own, in the same order, so
 * the bits do not depend on which cells share its block (tests/test_sim_mixed.c). A padding
 * lane does nothing.
 */
HB_HOSTDEV void hb_step_mixed_membrane(const hb_step_group_t *g, const hb_step_params_t *p,
                                       int block, int lane, double *d, double *rhs)
{
    const size_t w = (size_t)g->width, base = g->block_start[block] + (size_t)lane;
    const int slot = block * g->width + lane, m = g->lane_m[slot];
    double *v = g->v + base;
    const double *pg = g->pas_g + base, *pe = g->pas_e + base;
    const size_t hh0 = g->hh_start[block];
    if (m < 1) return;
    for (int i = 0; i < m; i++) {
        const size_t r = (size_t)i * w;
        hb_step_pas_row(1, 1, v + r, pg + r, pe + r, d + r, rhs + r);
    }
    for (int j = 0; j < g->lane_hh[slot]; j++) {
        const size_t inst = hh0 + (size_t)j, r = (size_t)g->hh_node[inst * w + (size_t)lane] * w;
        hb_step_hh_row(1, (int)w, (int)w, 1, v + r,
                       g->hh_par + inst * HB_HH_NPAR * w + (size_t)lane,
                       g->hh_state + inst * 3 * w + (size_t)lane, d + r, rhs + r);
    }
    hb_step_slot_stimuli(g, p, slot, w, rhs);
    if (g->syn_start) hb_step_slot_synapses(g, slot, w, v, d, rhs);
}

HB_HOSTDEV void hb_step_mixed_axial(const hb_step_group_t *g, int block, int lane, double *d,
                                    double *rhs)
{
    const size_t w = (size_t)g->width, base = g->block_start[block] + (size_t)lane;
    const int m = g->lane_m[block * g->width + lane];
    const double *v = g->v + base;
    const double *u = g->u + base, *l = g->l + base, *cfac = g->cfac + base;
    const int *parent = g->parent + base;
    if (m < 1) return;
    hb_step_root_row(1, 1, cfac, d, rhs);
    for (int i = 1; i < m; i++) {
        const size_t r = (size_t)i * w, pr = (size_t)parent[r] * w;
        hb_step_axial_row(1, 1, cfac + r, u + r, l + r, v + r, v + pr, d + r, rhs + r, d + pr,
                          rhs + pr);
    }
}

HB_HOSTDEV void hb_step_mixed_assemble(const hb_step_group_t *g, const hb_step_params_t *p,
                                       int block, int lane, double *d, double *rhs)
{
    hb_step_mixed_membrane(g, p, block, lane, d, rhs);
    hb_step_mixed_axial(g, block, lane, d, rhs);
}

/* The solve's rows of one lane of a mixed block (elements r and its parent's pr from the lane's
 * row 0): hb_hines_recip_* or, where fixed (may be NULL) marks the row, hb_step_fixed_*'s
 * operations, 1 / d kept per element (fr) and the other factors computed from it as
 * hb_step_factor_fixed does: the same bits. */
HB_HOSTDEV void hb_step_mixed_eliminate(size_t r, size_t pr, const double *HB_RESTRICT u,
                                        const double *HB_RESTRICT l,
                                        const unsigned char *HB_RESTRICT fixed,
                                        const double *HB_RESTRICT fr, double *HB_RESTRICT d,
                                        double *HB_RESTRICT rhs)
{
    if (fixed && fixed[r]) { /* c = (u l) r, f = u r: hb_step_factor_fixed's */
        if (!fixed[pr]) d[pr] -= (u[r] * l[r]) * fr[r];
        rhs[pr] -= (u[r] * fr[r]) * rhs[r];
    } else {
        hb_hines_recip_eliminate_row(1, 1, 0.0, 0.0, u + r, l + r, d + r, rhs + r, d + pr,
                                     rhs + pr);
    }
}

HB_HOSTDEV void hb_step_mixed_root(const unsigned char *HB_RESTRICT fixed,
                                   const double *HB_RESTRICT fr, double *HB_RESTRICT d,
                                   double *HB_RESTRICT rhs)
{
    if (fixed && fixed[0]) rhs[0] = rhs[0] * fr[0];
    else hb_hines_recip_root(1, d, rhs);
}

HB_HOSTDEV void hb_step_mixed_substitute(size_t r, size_t pr, const double *HB_RESTRICT l,
                                         const unsigned char *HB_RESTRICT fixed,
                                         const double *HB_RESTRICT fr,
                                         const double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    if (fixed && fixed[r]) rhs[r] = (rhs[r] - l[r] * rhs[pr]) * fr[r];
    else hb_hines_recip_substitute_row(1, 1, 0.0, l + r, d + r, rhs + pr, rhs + r);
}

/* The lane's solve: rhs = dv. */
HB_HOSTDEV void hb_step_mixed_solve(const hb_step_group_t *g, int block, int lane, double *d,
                                    double *rhs)
{
    const size_t w = (size_t)g->width, base = g->block_start[block] + (size_t)lane;
    const int m = g->lane_m[block * g->width + lane];
    const double *u = g->u + base, *l = g->l + base;
    const int *parent = g->parent + base;
    const unsigned char *fixed = g->fixed_row ? g->fixed_row + base : NULL;
    const double *fr = fixed ? g->fixed_r + base : NULL;
    if (m < 1) return;
    for (int i = m - 1; i > 0; --i) {
        const size_t r = (size_t)i * w;
        hb_step_mixed_eliminate(r, (size_t)parent[r] * w, u, l, fixed, fr, d, rhs);
    }
    hb_step_mixed_root(fixed, fr, d, rhs);
    for (int i = 1; i < m; ++i) {
        const size_t r = (size_t)i * w;
        hb_step_mixed_substitute(r, (size_t)parent[r] * w, l, fixed, fr, d, rhs);
    }
}

/* The lane's v += factor dv, gates and synapse states. */
HB_HOSTDEV void hb_step_mixed_update(const hb_step_group_t *g, const hb_step_params_t *p,
                                     int block, int lane, const double *rhs)
{
    const size_t w = (size_t)g->width, base = g->block_start[block] + (size_t)lane;
    const int slot = block * g->width + lane, m = g->lane_m[slot];
    double *v = g->v + base;
    const size_t hh0 = g->hh_start[block];
    for (int i = 0; i < m; i++) {
        const size_t r = (size_t)i * w;
        hb_step_update_row(1, p->factor, rhs + r, v + r);
    }
    for (int j = 0; j < g->lane_hh[slot]; j++) {
        const size_t inst = hh0 + (size_t)j;
        hb_step_gates_row(1, (int)w, p, v + (size_t)g->hh_node[inst * w + (size_t)lane] * w,
                          g->hh_state + inst * 3 * w + (size_t)lane);
    }
    if (g->syn_start)
        for (int q = g->syn_start[slot]; q < g->syn_start[slot + 1]; q++)
            hb_step_synapse_decay(&g->syns[q], g->syn_state + 2 * (size_t)q);
}

HB_HOSTDEV void hb_step_mixed_lane(const hb_step_group_t *g, const hb_step_params_t *p,
                                   int block, int lane, double *d, double *rhs)
{
    hb_step_mixed_assemble(g, p, block, lane, d, rhs);
    hb_step_mixed_solve(g, block, lane, d, rhs);
    hb_step_mixed_update(g, p, block, lane, rhs);
}

HB_HOSTDEV void hb_step_lanes(const hb_step_group_t *g, const hb_step_params_t *p,
                                            int block, int lane0, int lanes, int width,
                                            int shared, double *d, double *rhs)
{
    if (g->mixed) { /* each lane on its own rows */
        for (int k = 0; k < lanes; k++) hb_step_mixed_lane(g, p, block, lane0 + k, d + k, rhs + k);
        return;
    }
    hb_step_lanes_assemble(g, p, block, lane0, lanes, width, shared, d, rhs);
    hb_step_lanes_solve(g, block, lane0, lanes, width, shared, d, rhs);
    hb_step_lanes_update(g, p, block, lane0, lanes, width, rhs);
}

/*
 * Spike detection at a probe after a step ending at t: an upward crossing of
 * `threshold` (v above it, not above after the previous step). Returns 1 with
 * *t_spike set: t (NEURON's NetCon rule) or, with `interpolate`, the linear
 * crossing within the step (v0: v after the previous step).
 */
HB_HOSTDEV int hb_spike_test(double v, double v0, double threshold,
                                           unsigned char *above, double t, double dt,
                                           int interpolate, double *t_spike)
{
    const int now = v > threshold;
    const int spike = now && !*above;
    *above = (unsigned char)now;
    if (!spike) return 0;
    *t_spike = interpolate && v > v0 ? t - dt * (v - threshold) / (v - v0) : t;
    return 1;
}

#endif
