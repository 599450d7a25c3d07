/*
 * The simulator's CPU engine (backend/sim_ops.h): the fused step (common/sim_step.h) one
 * block at a time while the block is in cache, OpenMP spreading the blocks over the cores,
 * on the host arrays of the layout (stepped in place); spike tests and samples after every
 * step. Compiled with -fno-trapping-math (CMakeLists.txt): FP exceptions are never inspected,
 * so GCC may turn the selects of hb_exp into vector code; values unchanged.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

#include "backend/sim_ops.h"
#include "common/cat_step.h"
#include "common/status.h"
#include "cpu/cat_ions_cpu.h"

typedef struct {
    const hb_context_t *ctx; /* backend (SEQ, OMP) and threads */
    int n_groups;
    hb_step_group_t *groups; /* the layout's host arrays, stepped in place */
    int total_blocks;
    int *block_group, *block_index; /* per block of all groups */
    /* Work items: a block, or up to INTERLEAVE consecutive one-lane blocks (cells of their own
     * shape) whose solves are interleaved; item i is blocks item_first[i] .. + item_count[i]. */
    int n_items;
    int *item_first, *item_count;
    /* Per group: mixed groups' gather rows (step_mixed_lanes), a byte per row as chain_row;
     * else NULL. */
    unsigned char **gather_row;
    int threads;         /* CPU threads stepping blocks */
    size_t scratch_size; /* per thread: d and rhs of one block */
    double *scratch;
    const double *table;
    double q10, dt, factor;
    int n_probes, interpolate;
    long sample_every, check_every, check_last;
    unsigned char *bad; /* per block: a non-finite voltage at the last check */
    int *probe_group;
    size_t *probe_index;
    unsigned char *detect, *above;
    double *threshold, *v_prev;
    double *row, *spikes; /* per probe: the step's sample and spike */
    int *spike_count;     /* per probe: 0 or 1 this step */
    hb_sim_target_t *targets;      /* the synapses events reach */
    double *const *weights;        /* the simulation's weight vectors (hb_sim_desc_t) */
    int *const *netcon_head;       /* and their lists per target (FOR_NETCONS) */
    int *const *netcon_next;
    hb_sim_engine_event_t *events; /* queued (queue_events): events[next_event ..) wait */
    hb_self_queue_t *self;         /* the simulation's self-events (hb_sim_desc_t) */
    int *watch_targets, n_watch;   /* targets whose mechanism has WATCH (cpu->watch) */
    size_t n_events, next_event, cap_events;
    int n_records;               /* set_records: values recorded every record_every steps */
    long record_every;
    hb_rec_sample_t *records;
    double *record_row;
    hb_sim_record_sink_t record_sink;
    void *record_user;
    /* Per group, the fused end of a step (cat_fused_end): kept[g] its blocks' d and rhs, kept
     * across steps (NULL: the group cannot fuse, cat_fusable), [prefix[g], stop[g]) its
     * mechanisms that fuse (cat_prefix, cat_stop), fuse[g] 1 while it fuses (no record reads its
     * catalogue fields or ions, and the tuning allows it); n_fuse of them. */
    double **kept;
    int *prefix, *stop;
    unsigned char *fuse;
    int n_fuse;
} cpu_sim_t;

/* Lanes of a mixed block (busyring, one core, against 4 and 16: 0.91x and 0.70x their time):
 * two AVX2 vectors a row, two independent recurrences in the solve's chain rows. */
enum { MIXED_LANES = 8 };

/* CPU: HB_SIM_CPU_LANES, or fewer for small groups (a lone cell must not pay for eight); while
 * the group's blocks are fewer than the threads, 8 lanes and then 1 (a cell a block, its
 * kernels vector code over its compartments): on the H200 host's 16 threads the 64-cell L5PC
 * sweep took 0.50 s with 1 lane a block, 0.57-0.64 s with 4 and 1.22-1.31 s with 16, and 4
 * and 2 lanes were the slowest widths on one thread (bench/results/mech-h200.md). A lane's
 * arithmetic does not depend on the width, so the bits do not either (test_sim_cat, the thread
 * tests). */
static int cpu_block_width(const hb_context_t *ctx, int count)
{
    int W = HB_SIM_CPU_LANES, threads = 1;
#ifdef HB_HAVE_OPENMP
    if (ctx->backend == HB_BACKEND_OMP)
        threads = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
#else
    (void)ctx;
#endif
    if (ctx->tuning.sim_cpu_lanes > 0) return ctx->tuning.sim_cpu_lanes; /* measurements */
    while (W > 1 && W / 2 >= count) W /= 2;
    if (W > 8 && (count + W - 1) / W < threads) W = 8;
    if (W > 1 && (count + W - 1) / W < threads) W = 1;
    return W;
}

/*
 * A block of a mixed group (cells of different shapes, hb_step_group_t.mixed), its W lanes
 * row by row: pas and the update as vectors over the block's rows (padding rows compute
 * d = rhs = 0 in their scratch and keep v: pas_g, pas_e 0), u and l copied from the group's
 * table into the scratch on the way (row_index: a byte a row streamed instead of 32); the
 * lanes' axial terms and solves row by row in turn (each lane's rows in its own order), so
 * that the core overlaps the lanes' independent chains. Rows come in three kinds: chain rows
 * (hb_step_group_t.chain_row) as vectors, the solve a run of them at a time (chain_eliminate,
 * chain_substitute); gather rows (cpu_sim_t.gather_row: every lane has the row, fixed, with a
 * fixed parent of its own) branch-free, each lane reading and writing its parent's element (no
 * two lanes share one), four lanes a vector (gather_axial and the others); the rest lane by lane.
 * Every cell's values see hb_step_mixed_lane's operations in its order, those of a group of
 * its own (tests/test_sim_mixed.c). The diagonal of a fixed row is never read (its factors
 * are known): the axial pass leaves it, updating only a parent that is not fixed.
 */
/* The streamed arrays of a mixed block's row at element e, W lanes: a prefetch per cache
 * line they start. */
#if defined(__GNUC__)
#define HB_PREFETCH(p) __builtin_prefetch((p), 0, 3)
#else
#define HB_PREFETCH(p) ((void)(p))
#endif
HB_HOSTDEV void prefetch_row(const hb_step_group_t *g, size_t e, const int W)
{
    if ((e * sizeof(double)) % 64 < (size_t)W * sizeof(double)) {
        HB_PREFETCH(g->v + e);
        HB_PREFETCH(g->fixed_r + e);
        if (!g->row_index) {
            HB_PREFETCH(g->u + e);
            HB_PREFETCH(g->l + e);
        }
    }
    if ((e * sizeof(int)) % 64 < (size_t)W * sizeof(int)) HB_PREFETCH(g->parent + e);
    if (e % 64 < (size_t)W) {
        HB_PREFETCH(g->fixed_row + e);
        if (g->row_index) HB_PREFETCH(g->row_index + e);
    }
}

/* Elements 0 .. n - 1 of a mixed block from the group's row table (hb_step_group_t.row_index):
 * u, l, and pas (hb_step_pas_row: d = g, rhs = g (v - e)). Each element's quadruple is one
 * 32-byte load, four of them transposed into vectors (where the compiler has vector
 * extensions; a compiler's own vectorisation gathers each value with a scalar load). */
#if defined(__clang__) || (defined(__GNUC__) && __GNUC__ >= 12)
typedef double hb_v4d __attribute__((vector_size(32)));
#define HB_SHUF __builtin_shufflevector
HB_HOSTDEV void table_rows(const unsigned char *HB_RESTRICT ix, const double *HB_RESTRICT tab,
                           const double *HB_RESTRICT v, int n, double *HB_RESTRICT u,
                           double *HB_RESTRICT l, double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    int e = 0;
    for (; e + 4 <= n; e += 4) {
        hb_v4d q0, q1, q2, q3, x;
        memcpy(&q0, tab + 4 * (int)ix[e], sizeof q0); /* u l g e of element e */
        memcpy(&q1, tab + 4 * (int)ix[e + 1], sizeof q1);
        memcpy(&q2, tab + 4 * (int)ix[e + 2], sizeof q2);
        memcpy(&q3, tab + 4 * (int)ix[e + 3], sizeof q3);
        memcpy(&x, v + e, sizeof x);
        const hb_v4d t0 = HB_SHUF(q0, q1, 0, 4, 2, 6), t1 = HB_SHUF(q0, q1, 1, 5, 3, 7);
        const hb_v4d t2 = HB_SHUF(q2, q3, 0, 4, 2, 6), t3 = HB_SHUF(q2, q3, 1, 5, 3, 7);
        const hb_v4d uu = HB_SHUF(t0, t2, 0, 1, 4, 5), gg = HB_SHUF(t0, t2, 2, 3, 6, 7);
        const hb_v4d ll = HB_SHUF(t1, t3, 0, 1, 4, 5), ee = HB_SHUF(t1, t3, 2, 3, 6, 7);
        const hb_v4d rr = gg * (x - ee);
        memcpy(u + e, &uu, sizeof uu);
        memcpy(l + e, &ll, sizeof ll);
        memcpy(d + e, &gg, sizeof gg);
        memcpy(rhs + e, &rr, sizeof rr);
    }
    for (; e < n; e++) {
        const double *q = tab + 4 * (int)ix[e];
        u[e] = q[0];
        l[e] = q[1];
        double i, gi;
        hb_pas_current(v[e], q[2], q[3], &i, &gi);
        d[e] = gi;
        rhs[e] = i;
    }
}
#undef HB_SHUF
/* the chain runs and the gather rows as 4-wide vectors (W 4 or 8) */
#define HB_V4D_ROWS 1
/* 32-byte loads and stores through memcpy (no vector passed by value: the ABI differs with and
 * without AVX) */
#define LOAD4(x, p) memcpy(&(x), (p), sizeof(hb_v4d))
#define STORE4(p, x) memcpy((p), &(x), sizeof(hb_v4d))

/* A run of chain rows (parent i - 1 on every lane) from row i down, W 4 or 8: the elimination
 * (hb_step_mixed_eliminate's rhs_p -= (u_i f_i) rhs_i) with the row just finished carried in
 * registers, not reloaded from the store it made. Returns the first row below the run. */
HB_HOSTDEV int chain_eliminate(const unsigned char *chain, const double *HB_RESTRICT u,
                               const double *HB_RESTRICT fr, double *HB_RESTRICT rhs, int i,
                               const int W)
{
    const size_t w = (size_t)W;
    hb_v4d x0, x1, p, a, b;
    LOAD4(x0, rhs + (size_t)i * w);
    x1 = x0;
    if (W == 8) LOAD4(x1, rhs + (size_t)i * w + 4);
    for (; i > 0 && chain[i]; i--) {
        const size_t r = (size_t)i * w;
        LOAD4(p, rhs + r - w);
        LOAD4(a, u + r);
        LOAD4(b, fr + r);
        x0 = p - (a * b) * x0;
        STORE4(rhs + r - w, x0);
        if (W == 8) {
            LOAD4(p, rhs + r - w + 4);
            LOAD4(a, u + r + 4);
            LOAD4(b, fr + r + 4);
            x1 = p - (a * b) * x1;
            STORE4(rhs + r - w + 4, x1);
        }
    }
    return i;
}

/* The substitution of a run of chain rows from row i up (rhs_i = (rhs_i - l_i rhs_p) f_i), the
 * parent's value in registers. Returns the first row past the run (or most). */
HB_HOSTDEV int chain_substitute(const unsigned char *chain, const double *HB_RESTRICT l,
                                const double *HB_RESTRICT fr, double *HB_RESTRICT rhs, int i,
                                int most, const int W)
{
    const size_t w = (size_t)W;
    hb_v4d x0, x1, c, a, b;
    LOAD4(x0, rhs + (size_t)(i - 1) * w);
    x1 = x0;
    if (W == 8) LOAD4(x1, rhs + (size_t)(i - 1) * w + 4);
    for (; i < most && chain[i]; i++) {
        const size_t r = (size_t)i * w;
        LOAD4(c, rhs + r);
        LOAD4(a, l + r);
        LOAD4(b, fr + r);
        x0 = (c - a * x0) * b;
        STORE4(rhs + r, x0);
        if (W == 8) {
            LOAD4(c, rhs + r + 4);
            LOAD4(a, l + r + 4);
            LOAD4(b, fr + r + 4);
            x1 = (c - a * x1) * b;
            STORE4(rhs + r + 4, x1);
        }
    }
    return i;
}

/* Gather rows (cpu_sim_t.gather_row), W 4 or 8, four lanes a vector: each lane's parent element
 * loaded into a vector, the arithmetic as vectors, the parents' results stored back one by one
 * (no two lanes share a parent). hb_step_mixed_lane's operations, in its order, on every lane. */
#define GATHER4(a, p) (hb_v4d){(a)[(p)[0]], (a)[(p)[1]], (a)[(p)[2]], (a)[(p)[3]]}
#define SCATTER4(a, p, x)                                                                       \
    do {                                                                                        \
        (a)[(p)[0]] = (x)[0];                                                                   \
        (a)[(p)[1]] = (x)[1];                                                                   \
        (a)[(p)[2]] = (x)[2];                                                                   \
        (a)[(p)[3]] = (x)[3];                                                                   \
    } while (0)

/* the parents' elements of lanes q .. q + 3 of row r */
HB_HOSTDEV void parent_elements(const int *par, size_t r, int q, const int W, size_t pe[4])
{
    for (int k = 0; k < 4; k++)
        pe[k] = (size_t)par[r + (size_t)(q + k)] * (size_t)W + (size_t)(q + k);
}

HB_HOSTDEV void gather_axial(const int *par, const double *v, const double *u, const double *l,
                             double *rhs, size_t r, const int W)
{
    for (int q = 0; q < W; q += 4) {
        size_t pe[4];
        parent_elements(par, r, q, W, pe);
        hb_v4d vi, ui, li, ri;
        LOAD4(vi, v + r + q);
        LOAD4(ui, u + r + q);
        LOAD4(li, l + r + q);
        LOAD4(ri, rhs + r + q);
        const hb_v4d dv = GATHER4(v, pe) - vi;
        const hb_v4d x = (0.0 - ri) - li * dv;
        const hb_v4d np = GATHER4(rhs, pe) + ui * dv;
        SCATTER4(rhs, pe, np);
        STORE4(rhs + r + q, x);
    }
}

HB_HOSTDEV void gather_eliminate(const int *par, const double *u, const double *fr, double *rhs,
                                 size_t r, const int W)
{
    for (int q = 0; q < W; q += 4) {
        size_t pe[4];
        parent_elements(par, r, q, W, pe);
        hb_v4d ui, fi, ri;
        LOAD4(ui, u + r + q);
        LOAD4(fi, fr + r + q);
        LOAD4(ri, rhs + r + q);
        const hb_v4d np = GATHER4(rhs, pe) - (ui * fi) * ri;
        SCATTER4(rhs, pe, np);
    }
}

HB_HOSTDEV void gather_substitute(const int *par, const double *l, const double *fr, double *rhs,
                                  size_t r, const int W)
{
    for (int q = 0; q < W; q += 4) {
        size_t pe[4];
        parent_elements(par, r, q, W, pe);
        hb_v4d li, fi, ri;
        LOAD4(li, l + r + q);
        LOAD4(fi, fr + r + q);
        LOAD4(ri, rhs + r + q);
        const hb_v4d x = (ri - li * GATHER4(rhs, pe)) * fi;
        STORE4(rhs + r + q, x);
    }
}
#else
HB_HOSTDEV void table_rows(const unsigned char *HB_RESTRICT ix, const double *HB_RESTRICT tab,
                           const double *HB_RESTRICT v, int n, double *HB_RESTRICT u,
                           double *HB_RESTRICT l, double *HB_RESTRICT d, double *HB_RESTRICT rhs)
{
    for (int e = 0; e < n; e++) {
        const double *q = tab + 4 * (int)ix[e];
        u[e] = q[0];
        l[e] = q[1];
        double i, gi;
        hb_pas_current(v[e], q[2], q[3], &i, &gi);
        d[e] = gi;
        rhs[e] = i;
    }
}
#endif

HB_HOSTDEV void
step_mixed_lanes(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                 const unsigned char *gather_row, double *scratch, const int W)
{
    const size_t w = (size_t)W, base = g->block_start[block];
    const int rows = hb_step_block_rows(g, block);
    double *d = scratch, *rhs = scratch + (size_t)rows * w;
    const int *lm = g->lane_m + (size_t)block * w;
    double *v = g->v + base;
    const int *par = g->parent + base;
    /* a tabled group keeps u, l, pas_g and pas_e in its row table alone (NULL arrays) */
    const double *u = g->u ? g->u + base : NULL, *l = g->l ? g->l + base : NULL;
    const double *cfac = g->cfac + base;
    const double *pg = g->pas_g ? g->pas_g + base : NULL;
    const double *pe = g->pas_e ? g->pas_e + base : NULL;
    const unsigned char *fixed = g->fixed_row + base;
    const double *fr = g->fixed_r + base;
    const unsigned char *chain = g->chain_row + base / w, *gath = gather_row + base / w;
    if (g->row_index) { /* u and l from the table into the scratch; pas (hb_step_pas_row) */
        double *ub = rhs + (size_t)rows * w, *lb = ub + (size_t)rows * w;
        table_rows(g->row_index + base, g->row_table, v, rows * W, ub, lb, d, rhs);
        u = ub;
        l = lb;
    } else {
        for (int i = 0; i < rows; i++) {
            const size_t r = (size_t)i * w;
            hb_step_pas_row(W, 1, v + r, pg + r, pe + r, d + r, rhs + r);
        }
    }
    const size_t hh0 = g->hh_start[block];
    for (int k = 0; k < W; k++) {
        const int slot = block * W + k;
        for (int j = 0; j < g->lane_hh[slot]; j++) {
            const size_t inst = hh0 + (size_t)j;
            const size_t r = (size_t)g->hh_node[inst * w + (size_t)k] * w + (size_t)k;
            hb_step_hh_row(1, W, W, 1, v + r, g->hh_par + inst * HB_HH_NPAR * w + (size_t)k,
                           g->hh_state + inst * 3 * w + (size_t)k, d + r, rhs + r);
        }
        hb_step_slot_stimuli(g, p, slot, w, rhs + k);
        if (g->syn_start) hb_step_slot_synapses(g, slot, w, v + k, d + k, rhs + k);
    }
    hb_step_root_row(W, 1, cfac, d, rhs);
    int most = 0;
    for (int k = 0; k < W; k++) most = lm[k] > most ? lm[k] : most;
    /* the next block's streams into the cache while this one computes (its rows from memory
     * would stall the row loops below, which look only a few rows ahead) */
    const int next_rows = block + 1 < g->blocks ? hb_step_block_rows(g, block + 1) : 0;
    const size_t nb = next_rows ? g->block_start[block + 1] : 0;
    const int per = most > 1 ? (next_rows + most - 2) / (most - 1) : 0; /* rows per axial row */
    for (int i = 1; i < most; i++) {
        for (int j = (i - 1) * per; j < i * per && j < next_rows; j++)
            prefetch_row(g, nb + (size_t)j * w, W);
        if (chain[i]) { /* the fixed rows' terms below, as vectors */
            const size_t r = (size_t)i * w;
            const double *HB_RESTRICT vi = v + r, *HB_RESTRICT vp = v + r - w;
            const double *HB_RESTRICT ui = u + r, *HB_RESTRICT li = l + r;
            double *HB_RESTRICT ri = rhs + r, *HB_RESTRICT rp = rhs + r - w;
            HB_SIMD
            for (int k = 0; k < W; k++) {
                const double dv = vp[k] - vi[k];
                const double x = (0.0 - ri[k]) - li[k] * dv;
                rp[k] += ui[k] * dv;
                ri[k] = x;
            }
            continue;
        }
#ifdef HB_V4D_ROWS
        if (gath[i] && W % 4 == 0) {
            gather_axial(par, v, u, l, rhs, (size_t)i * w, W);
            continue;
        }
#endif
        if (gath[i]) { /* the same on each lane's parent: no two lanes share one */
            const size_t r = (size_t)i * w;
            const int *HB_RESTRICT pi = par + r;
            const double *HB_RESTRICT vi = v + r, *HB_RESTRICT ui = u + r, *HB_RESTRICT li = l + r;
            double *HB_RESTRICT ri = rhs + r;
            HB_SIMD
            for (int k = 0; k < W; k++) {
                const size_t pr = (size_t)pi[k] * w + (size_t)k;
                const double dv = v[pr] - vi[k];
                const double x = (0.0 - ri[k]) - li[k] * dv;
                rhs[pr] += ui[k] * dv;
                ri[k] = x;
            }
            continue;
        }
        for (int k = 0; k < W; k++) {
            if (i >= lm[k]) continue;
            const size_t r = (size_t)i * w + (size_t)k, pr = (size_t)par[r] * w + (size_t)k;
            if (fixed[r]) { /* hb_step_axial_row without d_i */
                const double dv = v[pr] - v[r];
                const double x = (0.0 - rhs[r]) - l[r] * dv;
                rhs[pr] += u[r] * dv;
                if (!fixed[pr]) d[pr] -= u[r];
                rhs[r] = x;
            } else {
                hb_step_axial_row(1, 1, cfac + r, u + r, l + r, v + r, v + pr, d + r, rhs + r,
                                  d + pr, rhs + pr);
            }
        }
    }
    /* Without the 4-wide rows (two lanes, or no vector extensions): the chain rows' solve row by
     * row, the row just finished in cur (valid after a chain row: it changed its parent last). */
    double cur[HB_SIM_CPU_LANES];
    int have = 0;
    for (int i = most - 1; i > 0; i--) { /* each lane's rows from its last down to 1 */
#ifdef HB_V4D_ROWS
        if (chain[i] && W % 4 == 0) {
            i = chain_eliminate(chain, u, fr, rhs, i, W) + 1;
            continue;
        }
#endif
        if (chain[i]) {
            const size_t r = (size_t)i * w;
            const double *HB_RESTRICT ui = u + r, *HB_RESTRICT fi = fr + r;
            const double *HB_RESTRICT ri = have ? cur : rhs + r;
            double *HB_RESTRICT rp = rhs + r - w;
            double next[HB_SIM_CPU_LANES];
            HB_SIMD
            for (int k = 0; k < W; k++) next[k] = rp[k] - (ui[k] * fi[k]) * ri[k];
            for (int k = 0; k < W; k++) rp[k] = cur[k] = next[k];
            have = 1;
            continue;
        }
        have = 0;
#ifdef HB_V4D_ROWS
        if (gath[i] && W % 4 == 0) {
            gather_eliminate(par, u, fr, rhs, (size_t)i * w, W);
            continue;
        }
#endif
        if (gath[i]) {
            const size_t r = (size_t)i * w;
            const int *HB_RESTRICT pi = par + r;
            const double *HB_RESTRICT ui = u + r, *HB_RESTRICT fi = fr + r, *HB_RESTRICT ri = rhs + r;
            HB_SIMD
            for (int k = 0; k < W; k++) {
                const size_t pr = (size_t)pi[k] * w + (size_t)k;
                rhs[pr] -= (ui[k] * fi[k]) * ri[k];
            }
            continue;
        }
        for (int k = 0; k < W; k++) {
            if (i >= lm[k]) continue;
            const size_t r = (size_t)i * w + (size_t)k;
            hb_step_mixed_eliminate(r, (size_t)par[r] * w + (size_t)k, u, l, fixed, fr, d, rhs);
        }
    }
    for (int k = 0; k < W; k++)
        if (lm[k] > 0) hb_step_mixed_root(fixed + k, fr + k, d + k, rhs + k);
    have = 0;
    for (int i = 1; i < most; i++) {
#ifdef HB_V4D_ROWS
        if (chain[i] && W % 4 == 0) {
            i = chain_substitute(chain, l, fr, rhs, i, most, W) - 1;
            continue;
        }
#endif
        if (chain[i]) {
            const size_t r = (size_t)i * w;
            const double *HB_RESTRICT li = l + r, *HB_RESTRICT fi = fr + r;
            const double *HB_RESTRICT rp = have ? cur : rhs + r - w;
            double *HB_RESTRICT ri = rhs + r;
            double next[HB_SIM_CPU_LANES];
            HB_SIMD
            for (int k = 0; k < W; k++) next[k] = (ri[k] - li[k] * rp[k]) * fi[k];
            for (int k = 0; k < W; k++) ri[k] = cur[k] = next[k];
            have = 1;
            continue;
        }
        have = 0;
#ifdef HB_V4D_ROWS
        if (gath[i] && W % 4 == 0) {
            gather_substitute(par, l, fr, rhs, (size_t)i * w, W);
            continue;
        }
#endif
        if (gath[i]) {
            const size_t r = (size_t)i * w;
            const int *HB_RESTRICT pi = par + r;
            const double *HB_RESTRICT li = l + r, *HB_RESTRICT fi = fr + r;
            double *HB_RESTRICT ri = rhs + r;
            HB_SIMD
            for (int k = 0; k < W; k++)
                ri[k] = (ri[k] - li[k] * rhs[(size_t)pi[k] * w + (size_t)k]) * fi[k];
            continue;
        }
        for (int k = 0; k < W; k++) {
            if (i >= lm[k]) continue;
            const size_t r = (size_t)i * w + (size_t)k;
            hb_step_mixed_substitute(r, (size_t)par[r] * w + (size_t)k, l, fixed, fr, d, rhs);
        }
    }
    for (int i = 0; i < rows; i++) {
        const size_t r = (size_t)i * w;
        hb_step_update_row(W, p->factor, rhs + r, v + r);
    }
    for (int k = 0; k < W; k++) {
        const int slot = block * W + k;
        for (int j = 0; j < g->lane_hh[slot]; j++) {
            const size_t inst = hh0 + (size_t)j;
            hb_step_gates_row(1, W, p, v + (size_t)g->hh_node[inst * w + (size_t)k] * w + (size_t)k,
                              g->hh_state + inst * 3 * w + (size_t)k);
        }
        if (g->syn_start)
            for (int q = g->syn_start[slot]; q < g->syn_start[slot + 1]; q++)
                hb_step_synapse_decay(&g->syns[q], g->syn_state + 2 * (size_t)q);
    }
}

#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
static void step_mixed(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                       const unsigned char *gather_row, double *scratch)
{
    switch (g->width) {
    case 8: step_mixed_lanes(g, p, block, gather_row, scratch, 8); break;
    case 4: step_mixed_lanes(g, p, block, gather_row, scratch, 4); break;
    default: step_mixed_lanes(g, p, block, gather_row, scratch, 2); break;
    }
}

/* hb_cat_ions_begin on a whole block of a group of one shape (its elements contiguous: rows W
 * from base), species by species: i and di/dv zeroed where observed (the currents leave the
 * others alone: hb_cat_step_mech_currents), then e by Nernst where HB_ION_EADVANCE
 * (hb_cpu_cat_nernst, cpu/cat_ions_cpu.c). Each element gets the operations of
 * hb_cat_ions_element: the same bits. */
HB_HOSTDEV void cat_ions_begin_block(const hb_step_cat_t *cat, size_t base, int rows,
                                 const int W)
{
    const size_t n = (size_t)rows * (size_t)W;
    const double ktf = cat->ktf;
    for (int s = 0; s < cat->n_ion; s++) {
        const hb_step_ion_t *ion = &cat->ion[s];
        double *HB_RESTRICT i = ion->i + base, *HB_RESTRICT didv = ion->didv + base;
        double *HB_RESTRICT e = ion->e + base;
        const double *HB_RESTRICT ci = ion->ci + base, *HB_RESTRICT co = ion->co + base;
        const unsigned char *HB_RESTRICT style = ion->style + base;
        const double z = ion->valence;
        if (ion->observed) {
            HB_SIMD
            for (size_t x = 0; x < n; x++) {
                i[x] = 0.0;
                didv[x] = 0.0;
            }
        }
        hb_cpu_cat_nernst(ktf, z, ci, co, style, e, n);
    }
}

/*
 * The fused end of a step (docs/sim-engine.md, "Fused states and currents"). A mechanism's
 * state pass of one step and its current pass of the next read the same fields, and between
 * them the other mechanisms' passes evict them from the cache (the L5PC's fields of a block are
 * megabytes). Where nothing between the two passes can change what the currents read, the
 * step ends with the next step's assembly: pas, hh and stimuli at the next step's time, then
 * mechanism by mechanism its states and at once its next currents (fuse_chunk instances at
 * a time), into d and rhs kept for the next step. The mechanisms from the first point process
 * on (events reach them at the next step's start) only have their states there; the next step
 * starts with their currents, then the axial terms. Every operation is the one of the passes
 * apart, on the same values, in the same order into each row and ion: the same bits. A group
 * fuses (cat_fusable) with one shape (not a mixed group), without the built-in synapses
 * (their currents come first, after their events), and while no record reads its mechanisms'
 * fields or ions (a current's ASSIGNED holds the next step's value between the steps of one
 * advance; the advance's last step ends as before).
 */
/* Instances a state call and a current call: 8 in blocks of 8 or more lanes (the 64-cell L5PC
 * sweep, one core of the development VM: 8 and 4 alike, the whole block 1.03x slower); in
 * narrower blocks the whole block, a mechanism's states and then its currents (the L5PC cell
 * alone, a lane a block: 128 instances a call 1.19x slower than the passes apart, 1,024 and
 * the whole block alike; a cell's fields stay in L2 anyway). */
static inline int fuse_chunk(int W, int n)
{
    return W >= 8 ? 8 : n;
}

typedef struct {
    const hb_step_params_t *next; /* the next step's; NULL: the advance's last step */
    int primed; /* 1: d and rhs hold this step's assembly but mechanisms [stop, n)'s currents */
    int prefix, stop; /* mechanisms [prefix, stop) fuse (cat_prefix, cat_stop) */
} cat_fuse_t;

/* The mechanisms [0, prefix) of a group keep their passes apart: those up to the last one that
 * reads an ion's current, writes a concentration or a reversal potential, or reads the reversal
 * potential of a species whose concentration a mechanism writes (Nernst at the next step's
 * start changes it). Past them, a state kernel reads nothing the ions' start or the earlier
 * currents write, and a current nothing a later state writes. */
static int cat_prefix(const hb_step_cat_t *cat)
{
    unsigned char advanced[64] = {0}; /* species whose concentration a mechanism writes */
    for (int q = 0; q < cat->n_mech; q++)
        for (int u = 0; u < cat->mech[q].mech->n_ion; u++)
            if (cat->mech[q].mech->ion[u].write & (HB_ION_CI | HB_ION_CO) &&
                cat->mech[q].ion[u] < 64)
                advanced[cat->mech[q].ion[u]] = 1;
    int prefix = 0;
    for (int q = 0; q < cat->n_mech; q++) {
        const hb_cat_mech_t *m = cat->mech[q].mech;
        int coupled = m->writes_conc;
        for (int u = 0; u < m->n_ion; u++) {
            const int s = cat->mech[q].ion[u];
            coupled |= (m->ion[u].read & HB_ION_I) ||
                       (m->ion[u].write & (HB_ION_CI | HB_ION_CO | HB_ION_E)) ||
                       ((m->ion[u].read & HB_ION_E) && (s >= 64 || advanced[s]));
        }
        if (coupled) prefix = q + 1;
    }
    return prefix;
}

/* The end of the fused mechanisms: the first point process from the prefix on, or n_mech. */
static int cat_stop(const hb_step_cat_t *cat, int prefix)
{
    int q = prefix;
    while (q < cat->n_mech && cat->mech[q].mech->kind == HB_CAT_DENSITY) q++;
    return q;
}

/* 1: a group whose step may end fused (above): catalogue mechanisms in one shape, no built-in
 * synapses (make_fused then asks for a mechanism to fuse). */
static int cat_fusable(const hb_step_group_t *g)
{
    return g->cat && !g->mixed && !g->syn_start;
}

/* After the update of v of a block of a fusing group: the next step's pas, hh and stimuli
 * into d and rhs; the prefix's states, the ions' start and the prefix's currents as their
 * passes; then the fused mechanisms' states and next currents a chunk at a time; then the
 * states of the mechanisms past them. */
static inline __attribute__((always_inline)) void
cat_fused_end(const hb_step_group_t *g, const hb_step_params_t *p, const cat_fuse_t *f,
              int block, double *d, double *rhs, const int W, const int shared)
{
    const hb_step_cat_t *cat = g->cat;
    const hb_step_params_t *pn = f->next;
    hb_step_lanes_membrane(g, pn, block, 0, W, W, shared, d, rhs);
    hb_cat_step_states_range(g, p, block, 0, W, 0, f->prefix);
    cat_ions_begin_block(cat, hb_step_block_base(g, block), g->m, W);
    hb_cat_step_currents_range(g, pn, block, 0, W, d, rhs, 0, f->prefix);
    for (int q = f->prefix; q < f->stop; q++) {
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        const hb_cat_cpu_t *k = cm->mech->cpu;
        hb_ion_block_t state_ions[HB_CAT_MAX_ION], current_ions[HB_CAT_MAX_ION];
        hb_cat_block_t state_blk, current_blk;
        const int n = hb_cat_state_view(g, cm, p, block, 0, W, state_ions, &state_blk);
        hb_cat_current_view(g, cm, pn, block, 0, W, d, rhs, current_ions, &current_blk);
        const int chunk = fuse_chunk(W, n);
        for (int j = 0; j < n; j += chunk) {
            const int e = n - j < chunk ? n : j + chunk;
            if (k->state) k->state(&state_blk, j, e);
            if (k->current) k->current(&current_blk, j, e);
        }
    }
    hb_cat_step_states_range(g, p, block, 0, W, f->stop, cat->n_mech);
}

/* A block of a group with catalogue mechanisms (common/cat_step.h), one shape: hb_step_lanes'
 * passes with the mechanisms' currents after pas, hh, stimuli and synapses (hb_cat_step_current
 * with the ions' start above), with Crank-Nicolson the ion currents' correction after the
 * solve, and their states after the update of v; f non-NULL: a fusing group's (above), whose
 * assembly a primed step skips and whose end is fused where f->next is set. W and shared
 * constants where inlined. */
static inline __attribute__((always_inline)) void
step_block_cat_lanes(const hb_step_group_t *g, const hb_step_params_t *p, int block, double *d,
                     double *rhs, const cat_fuse_t *f, const int W, const int shared)
{
    const hb_step_cat_t *cat = g->cat;
    if (!f || !f->primed) {
        hb_step_lanes_membrane(g, p, block, 0, W, W, shared, d, rhs);
        cat_ions_begin_block(cat, hb_step_block_base(g, block), g->m, W);
        hb_cat_step_mech_currents(g, p, block, 0, W, d, rhs);
    } else {
        hb_cat_step_currents_range(g, p, block, 0, W, d, rhs, f->stop, cat->n_mech);
    }
    hb_step_lanes_axial(g, block, 0, W, W, shared, d, rhs);
    hb_step_lanes_solve(g, block, 0, W, W, shared, d, rhs);
    if (cat->second_order) hb_cat_second_order(g, block, 0, W, rhs);
    hb_step_lanes_update(g, p, block, 0, W, W, rhs);
    if (f && f->next)
        cat_fused_end(g, p, f, block, d, rhs, W, shared);
    else
        hb_cat_step_state(g, p, block, 0, W);
}

/* The same for any group with catalogue mechanisms: a mixed block lane by lane
 * (hb_step_mixed_*, the arrays, not the row table); else the widths a sweep's blocks have
 * (16, 8, 4) with their lane loops of constant count, other widths at run time. */
HB_CPU_CLONES
static void step_block_cat(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                           double *d, double *rhs, const cat_fuse_t *f)
{
    const int W = g->width;
    if (g->mixed) {
        for (int k = 0; k < W; k++) {
            if (g->lane_m[block * W + k] < 1) continue;
            hb_step_mixed_membrane(g, p, block, k, d + k, rhs + k);
            hb_cat_step_current(g, p, block, k, 1, d + k, rhs + k);
            hb_step_mixed_axial(g, block, k, d + k, rhs + k);
            hb_step_mixed_solve(g, block, k, d + k, rhs + k);
            if (g->cat->second_order) hb_cat_second_order(g, block, k, 1, rhs + k);
            hb_step_mixed_update(g, p, block, k, rhs + k);
            hb_cat_step_state(g, p, block, k, 1);
        }
        return;
    }
    switch (W * 2 + (g->shared != 0)) {
#if HB_SIM_CPU_LANES == 16
    case 33: step_block_cat_lanes(g, p, block, d, rhs, f, 16, 1); break;
    case 32: step_block_cat_lanes(g, p, block, d, rhs, f, 16, 0); break;
#endif
    case 17: step_block_cat_lanes(g, p, block, d, rhs, f, 8, 1); break;
    case 16: step_block_cat_lanes(g, p, block, d, rhs, f, 8, 0); break;
    case 9: step_block_cat_lanes(g, p, block, d, rhs, f, 4, 1); break;
    case 8: step_block_cat_lanes(g, p, block, d, rhs, f, 4, 0); break;
    default: step_block_cat_lanes(g, p, block, d, rhs, f, W, g->shared != 0); break;
    }
}

/* One block with the lane count a constant: the lane loops become vector code
 * (with GCC on x86-64 also an x86-64-v3 clone, AVX2 with FMA for hb_exp's fma(),
 * picked at load time where the CPU has it; without FMA contraction, so the results
 * are the same bits). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
static void step_block(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                       const unsigned char *gather_row, double *scratch, const cat_fuse_t *f)
{
    double *d = scratch, *rhs = scratch + (size_t)g->m * (size_t)g->width;
    if (g->cat) {
        step_block_cat(g, p, block, d, rhs, f);
        return;
    }
    if (g->mixed) {
        step_mixed(g, p, block, gather_row, scratch);
        return;
    }
    switch (g->width * 2 + (g->shared != 0)) {
#if HB_SIM_CPU_LANES == 16
    case 33: hb_step_lanes(g, p, block, 0, 16, 16, 1, d, rhs); break;
    case 32: hb_step_lanes(g, p, block, 0, 16, 16, 0, d, rhs); break;
#endif
    case 17: hb_step_lanes(g, p, block, 0, 8, 8, 1, d, rhs); break;
    case 16: hb_step_lanes(g, p, block, 0, 8, 8, 0, d, rhs); break;
    case 9: hb_step_lanes(g, p, block, 0, 4, 4, 1, d, rhs); break;
    case 8: hb_step_lanes(g, p, block, 0, 4, 4, 0, d, rhs); break;
    case 5: hb_step_lanes(g, p, block, 0, 2, 2, 1, d, rhs); break;
    case 4: hb_step_lanes(g, p, block, 0, 2, 2, 0, d, rhs); break;
    case 3: hb_step_lanes(g, p, block, 0, 1, 1, 1, d, rhs); break;
    default: hb_step_lanes(g, p, block, 0, 1, 1, 0, d, rhs); break;
    }
}

/*
 * Cells of their own shape (one-lane blocks: busyring's random trees) have no lanes to
 * vectorise over, and each row of their solve waits for the row before (latency, not
 * throughput). Up to INTERLEAVE of them are stepped together: each assembled on its own, then
 * their solves row by row in turn, so that the core overlaps the independent chains, then
 * each updated. Every cell's operations are those of hb_step_lanes in the same order: the same
 * bits.
 */
enum { INTERLEAVE = 4 }; /* 4 and 8 measured alike (busyring, one core) */

/* A one-lane block that can join an interleaved item: shared constants, fixed rows known. */
static int interleavable(const hb_step_group_t *g)
{
    return g->width == 1 && g->shared && g->fixed_row != NULL && !g->cat;
}

static inline void solve_interleaved(int n, const hb_step_group_t *const *g, double *const *d,
                                     double *const *rhs)
{
    /* each cell's arrays in locals: the row loop reads no struct (1.4x faster than reading
     * them from the groups in the loop) */
    const int *par[INTERLEAVE];
    const unsigned char *fix[INTERLEAVE];
    const double *fr[INTERLEAVE], *fc[INTERLEAVE], *ff[INTERLEAVE], *u[INTERLEAVE], *l[INTERLEAVE];
    int m[INTERLEAVE], most = 0;
    for (int k = 0; k < n; k++) {
        par[k] = g[k]->parent;
        fix[k] = g[k]->fixed_row;
        fr[k] = g[k]->fixed_r;
        fc[k] = g[k]->fixed_c;
        ff[k] = g[k]->fixed_f;
        u[k] = g[k]->u;
        l[k] = g[k]->l;
        m[k] = g[k]->m;
        most = m[k] > most ? m[k] : most;
    }
    for (int t = 1; t < most; t++) /* row m - t of each cell: m - 1 down to 1 */
        for (int k = 0; k < n; k++) {
            const int i = m[k] - t;
            if (i >= 1)
                hb_step_fixed_eliminate(i, par[k][i], (size_t)i, (size_t)par[k][i], 1, u[k], l[k],
                                        fix[k], fc[k], ff[k], d[k], rhs[k]);
        }
    for (int k = 0; k < n; k++) hb_step_fixed_root(1, fix[k], fr[k], d[k], rhs[k]);
    for (int i = 1; i < most; i++)
        for (int k = 0; k < n; k++)
            if (i < m[k])
                hb_step_fixed_substitute(i, (size_t)i, (size_t)par[k][i], 1, l[k], fix[k], fr[k],
                                         d[k], rhs[k]);
}

/* An item of n interleaved one-lane blocks (block index blk[k] of group g[k]). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
static void step_interleaved(int n, const hb_step_group_t *const *g, const int *blk,
                             const hb_step_params_t *p, double *scratch)
{
    double *d[INTERLEAVE] = {NULL}, *rhs[INTERLEAVE] = {NULL};
    size_t at = 0;
    for (int k = 0; k < n; k++) {
        d[k] = scratch + at;
        rhs[k] = d[k] + g[k]->m;
        at += 2 * (size_t)g[k]->m;
        hb_step_lanes_assemble(g[k], p, blk[k], 0, 1, 1, 1, d[k], rhs[k]);
    }
    solve_interleaved(n, g, d, rhs);
    for (int k = 0; k < n; k++) hb_step_lanes_update(g[k], p, blk[k], 0, 1, 1, rhs[k]);
}

/* The step's solve of one block of HB_SIM_CPU_LANES lanes, shared u and l (the
 * same code and clones as step_block). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
static void solve_block(int m, const int *parent, const double *u, const double *l, double *d,
                        double *rhs)
{
    hb_hines_recip_lanes_inline(m, parent, HB_SIM_CPU_LANES, HB_SIM_CPU_LANES, u, l, 1, 0, d,
                                rhs);
}

/* The same with every row's factors given (a matrix that is the same every step). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
static void solve_block_fixed(int m, const int *parent, const double *u, const double *l,
                              const unsigned char *fixed, const double *fr, const double *fc,
                              const double *ff, double *d, double *rhs)
{
    hb_step_solve_fixed(m, parent, HB_SIM_CPU_LANES, HB_SIM_CPU_LANES, u, l, fixed, fr, fc, ff, d,
                        rhs);
}

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static hb_status_t cpu_solve_benchmark(int m, const int *parent, const double *u, const double *l,
                                       const double *d1, const double *r1, int cells,
                                       int in_cache, int repeats, double *seconds)
{
    const int W = HB_SIM_CPU_LANES;
    const int blocks = (cells + W - 1) / W;
    const size_t bsize = (size_t)m * (size_t)W, size = (size_t)blocks * bsize;
    double *src_d = malloc(size * sizeof *src_d), *src_r = malloc(size * sizeof *src_r);
    double *d = malloc(size * sizeof *d), *rhs = malloc(size * sizeof *rhs);
    double *buf = malloc(2 * bsize * sizeof *buf);
    double *fac = malloc(3 * (size_t)m * sizeof *fac), *dw = malloc((size_t)m * sizeof *dw);
    unsigned char *fixed = malloc((size_t)m);
    hb_status_t st = HB_SUCCESS;
    if (!src_d || !src_r || !d || !rhs || !buf || !fac || !dw || !fixed)
        st = hb_fail(HB_ERR_ALLOC, "hb_sim_solve_benchmark: out of memory");
    if (st == HB_SUCCESS) { /* every lane the model's matrix, right-hand sides differ */
        for (size_t b = 0; b < (size_t)blocks; b++)
            for (size_t i = 0; i < (size_t)m; i++)
                for (size_t k = 0; k < (size_t)W; k++) {
                    const size_t e = b * bsize + i * (size_t)W + k;
                    src_d[e] = d1[i];
                    src_r[e] = r1[i] * (1.0 + 1e-3 * (double)((b * (size_t)W + k) % 97));
                }
        double *bd = buf, *br = buf + bsize;
        /* in_cache 2: every row's factors computed once, as the layout's factor_fixed_rows */
        double *fr = fac, *fc = fac + m, *ff = fac + 2 * (size_t)m;
        if (in_cache == 2) {
            memcpy(dw, d1, (size_t)m * sizeof *dw);
            memset(fixed, 1, (size_t)m);
            hb_step_factor_fixed(m, parent, u, l, fixed, dw, fr, fc, ff);
        }
        for (int r = -1; r < repeats; r++) { /* one warm-up */
            double t = 0.0;
            if (in_cache) {
                for (size_t b = 0; b < (size_t)blocks; b++) {
                    memcpy(bd, src_d + b * bsize, bsize * sizeof *bd);
                    memcpy(br, src_r + b * bsize, bsize * sizeof *br);
                    const double t0 = now_seconds();
                    if (in_cache == 2)
                        solve_block_fixed(m, parent, u, l, fixed, fr, fc, ff, bd, br);
                    else
                        solve_block(m, parent, u, l, bd, br);
                    t += now_seconds() - t0;
                }
            } else {
                memcpy(d, src_d, size * sizeof *d);
                memcpy(rhs, src_r, size * sizeof *rhs);
                const double t0 = now_seconds();
                for (size_t b = 0; b < (size_t)blocks; b++)
                    solve_block(m, parent, u, l, d + b * bsize, rhs + b * bsize);
                t = now_seconds() - t0;
            }
            if (r >= 0) seconds[r] = t;
        }
    }
    free(src_d);
    free(src_r);
    free(d);
    free(rhs);
    free(buf);
    free(fac);
    free(dw);
    free(fixed);
    return st;
}

/* Cells (lanes) of block b of group g: the last block's padding lanes are not cells. */
static int block_cells(const hb_step_group_t *g, int b)
{
    const int rest = g->count - b * g->width;
    return rest < g->width ? rest : g->width;
}

/* 1 when a voltage of lanes 0 .. cells - 1 is NaN or infinite: v * 0 is 0 for a finite v and
 * NaN otherwise, summed lane by lane (the lane loop of constant length W, so vector code). */
static inline int nonfinite_lanes(const double *v, size_t m, int W, int cells)
{
    double acc[HB_SIM_CPU_LANES] = {0.0};
    for (size_t i = 0; i < m; i++) {
        const double *row = v + i * (size_t)W;
        HB_SIMD
        for (int k = 0; k < W; k++) acc[k] += row[k] * 0.0;
    }
    int bad = 0;
    for (int k = 0; k < cells && k < W; k++) bad |= acc[k] != 0.0; /* NaN: unequal to anything */
    return bad;
}

/* The check of block b of group g, while the block is still in cache after its step. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("arch=x86-64-v3", "default")))
#endif
static int block_nonfinite(const hb_step_group_t *g, int b)
{
    const size_t m = (size_t)hb_step_block_rows(g, b);
    const double *v = g->v + hb_step_block_base(g, b);
    const int cells = block_cells(g, b);
    switch (g->width) {
#if HB_SIM_CPU_LANES == 16
    case 16: return nonfinite_lanes(v, m, 16, cells);
#endif
    case 8: return nonfinite_lanes(v, m, 8, cells);
    case 4: return nonfinite_lanes(v, m, 4, cells);
    case 2: return nonfinite_lanes(v, m, 2, cells);
    default: return nonfinite_lanes(v, m, 1, cells);
    }
}

/* Work item `item` (a block, or interleaved one-lane blocks); check: then its blocks'
 * voltages, right after their step, into sim->bad. A fusing group's block steps on its kept d
 * and rhs: primed (the step before ended fused), ending fused where next is set. */
static void step_item(cpu_sim_t *sim, int item, const hb_step_params_t *p,
                      const hb_step_params_t *next, int primed, double *scratch, int check)
{
    const int first = sim->item_first[item], n = sim->item_count[item];
    if (n == 1) {
        const int gi = sim->block_group[first], b = sim->block_index[first];
        const hb_step_group_t *g = &sim->groups[gi];
        if (sim->fuse[gi]) {
            const cat_fuse_t f = {next, primed, sim->prefix[gi], sim->stop[gi]};
            step_block(g, p, b, NULL, sim->kept[gi] + 2 * hb_step_block_base(g, b), &f);
        } else {
            step_block(g, p, b, sim->gather_row[gi], scratch, NULL);
        }
    } else {
        const hb_step_group_t *g[INTERLEAVE];
        int blk[INTERLEAVE];
        for (int k = 0; k < n; k++) {
            g[k] = &sim->groups[sim->block_group[first + k]];
            blk[k] = sim->block_index[first + k];
        }
        step_interleaved(n, g, blk, p, scratch);
    }
    for (int b = first; check && b < first + n; b++)
        sim->bad[b] = (unsigned char)block_nonfinite(&sim->groups[sim->block_group[b]],
                                                     sim->block_index[b]);
}

/* Steps 1-5 on every block; step: steps done before this one. check: then the voltages of
 * each block, right after its step, into sim->bad. primed: the fusing groups' assembly was
 * done by the step before; fuse: they end this step fused (cat_fused_end). */
static void cpu_step(cpu_sim_t *sim, long step, int check, int primed, int fuse)
{
    const hb_step_params_t p = {sim->dt, sim->factor, ((double)step + 0.5) * sim->dt, sim->table,
                                sim->q10};
    const hb_step_params_t pn = {sim->dt, sim->factor, ((double)(step + 1) + 0.5) * sim->dt,
                                 sim->table, sim->q10}; /* the next step's, as it computes them */
    const hb_step_params_t *next = fuse ? &pn : NULL;
    const int n = sim->n_items;
#ifdef HB_HAVE_OPENMP
    if (sim->ctx->backend == HB_BACKEND_OMP && omp_in_parallel()) {
        /* inside a network's task region (HB_NET_TASKS): a task per item, for the team's
         * threads that are not exchanging spikes; the team is at most sim->threads */
#pragma omp taskloop grainsize(1)
        for (int i = 0; i < n; i++) {
            const int t = omp_get_thread_num() < sim->threads ? omp_get_thread_num() : 0;
            step_item(sim, i, &p, next, primed, sim->scratch + (size_t)t * sim->scratch_size,
                      check);
        }
        return;
    }
    if (sim->ctx->backend == HB_BACKEND_OMP) {
        const int threads = sim->ctx->threads > 0 ? sim->ctx->threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int i = 0; i < n; i++) {
            const int t = omp_get_thread_num() < sim->threads ? omp_get_thread_num() : 0;
            step_item(sim, i, &p, next, primed, sim->scratch + (size_t)t * sim->scratch_size,
                      check);
        }
        return;
    }
#endif
    for (int i = 0; i < n; i++) step_item(sim, i, &p, next, primed, sim->scratch, check);
}

/* After a check: the first non-finite voltage (first flagged block, then its smallest cell,
 * then node), or 0 when every block was finite. */
static int first_fault(const cpu_sim_t *sim, long step, hb_sim_fault_t *fault)
{
    for (int b = 0; b < sim->total_blocks; b++) {
        if (!sim->bad[b]) continue;
        const hb_step_group_t *g = &sim->groups[sim->block_group[b]];
        const int block = sim->block_index[b], cells = block_cells(g, block);
        const size_t w = (size_t)g->width;
        const double *v = g->v + hb_step_block_base(g, block);
        for (int k = 0; k < cells; k++)
            for (int i = 0; i < hb_step_slot_rows(g, block * g->width + k); i++)
                if (!isfinite(v[(size_t)i * w + (size_t)k])) {
                    *fault = (hb_sim_fault_t){.step = step, .group = sim->block_group[b],
                                              .slot = block * g->width + k, .node = i};
                    return 1;
                }
    }
    return 0;
}

static void cpu_destroy(void *engine)
{
    cpu_sim_t *s = engine;
    if (!s) return;
    for (int g = 0; s->gather_row && g < s->n_groups; g++) free(s->gather_row[g]);
    free(s->gather_row);
    free(s->groups);
    free(s->block_group);
    free(s->block_index);
    free(s->item_first);
    free(s->item_count);
    free(s->bad);
    free(s->scratch);
    free(s->probe_group);
    free(s->probe_index);
    free(s->detect);
    free(s->above);
    free(s->threshold);
    free(s->v_prev);
    free(s->row);
    free(s->spikes);
    free(s->spike_count);
    free(s->events);
    free(s->targets);
    free(s->watch_targets);
    free(s->records);
    free(s->record_row);
    for (int g = 0; s->kept && g < s->n_groups; g++) free(s->kept[g]);
    free(s->kept);
    free(s->prefix);
    free(s->stop);
    free(s->fuse);
    free(s);
}

#define ALLOC(ptr, n) (((ptr) = calloc((size_t)(n) + 1, sizeof *(ptr))) != NULL)

/* The gather rows of each mixed group (cpu_sim_t.gather_row): rows that are not chain rows
 * where every lane has the row, fixed, with a fixed parent. */
static hb_status_t make_gather_rows(cpu_sim_t *s)
{
    if (!ALLOC(s->gather_row, s->n_groups))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int g = 0; g < s->n_groups; g++) {
        const hb_step_group_t *k = &s->groups[g];
        if (!k->mixed) continue;
        const size_t W = (size_t)k->width;
        if (!ALLOC(s->gather_row[g], k->block_start[k->blocks] / W))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
        for (int b = 0; b < k->blocks; b++) {
            const size_t first = k->block_start[b];
            for (int i = 1; i < hb_step_block_rows(k, b); i++) {
                int all = !k->chain_row[first / W + (size_t)i];
                for (size_t q = 0; q < W && all; q++) {
                    const size_t e = first + (size_t)i * W + q;
                    all = i < k->lane_m[(size_t)b * W + q] && k->fixed_row[e] &&
                          k->fixed_row[first + (size_t)k->parent[e] * W + q];
                }
                s->gather_row[g][first / W + (size_t)i] = (unsigned char)all;
            }
        }
    }
    return HB_SUCCESS;
}

/* Blocks of all groups in order; the matrix (d, rhs) of one block per thread: it never
 * leaves the cache. */
static hb_status_t make_blocks(cpu_sim_t *s)
{
    for (int g = 0; g < s->n_groups; g++) s->total_blocks += s->groups[g].blocks;
    if (!ALLOC(s->block_group, s->total_blocks) || !ALLOC(s->block_index, s->total_blocks) ||
        !ALLOC(s->bad, s->total_blocks))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int g = 0, n = 0; g < s->n_groups; g++)
        for (int b = 0; b < s->groups[g].blocks; b++, n++) {
            s->block_group[n] = g;
            s->block_index[n] = b;
        }
    s->threads = 1;
#ifdef HB_HAVE_OPENMP
    if (s->ctx->backend == HB_BACKEND_OMP)
        s->threads = s->ctx->threads > 0 ? s->ctx->threads : omp_get_max_threads();
#endif
    size_t most = 1;
    for (int g = 0; g < s->n_groups; g++) {
        /* a mixed block's scratch also holds its u and l (step_mixed_lanes) */
        const size_t n = (size_t)s->groups[g].m * (size_t)s->groups[g].width *
                         (s->groups[g].mixed ? 2 : 1);
        most = n > most ? n : most;
    }
    /* work items: runs of up to INTERLEAVE interleavable one-lane blocks, else single blocks */
    if (!ALLOC(s->item_first, s->total_blocks) || !ALLOC(s->item_count, s->total_blocks))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int b = 0; b < s->total_blocks;) {
        int n = 1;
        size_t rows = (size_t)s->groups[s->block_group[b]].m;
        if (interleavable(&s->groups[s->block_group[b]]))
            while (n < INTERLEAVE && b + n < s->total_blocks &&
                   interleavable(&s->groups[s->block_group[b + n]]))
                rows += (size_t)s->groups[s->block_group[b + n++]].m;
        most = rows > most ? rows : most; /* an item's d and rhs, one after the other */
        s->item_first[s->n_items] = b;
        s->item_count[s->n_items++] = n;
        b += n;
    }
    s->scratch_size = (2 * most + 7) & ~(size_t)7; /* each thread's on a cache line of its own */
    if (!(s->scratch = aligned_alloc(64, (size_t)s->threads * s->scratch_size * sizeof(double))))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    return HB_SUCCESS;
}

static size_t group_size(const hb_step_group_t *k)
{
    return hb_step_block_base(k, k->blocks);
}

/* Which groups fuse the end of a step (cat_fused_end; the tuning's sim.cpu_fuse 0: none),
 * with no records yet, and their kept d and rhs. */
static hb_status_t make_fused(cpu_sim_t *s)
{
    if (!ALLOC(s->kept, s->n_groups) || !ALLOC(s->prefix, s->n_groups) ||
        !ALLOC(s->stop, s->n_groups) || !ALLOC(s->fuse, s->n_groups))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int g = 0; g < s->n_groups; g++) {
        const hb_step_group_t *k = &s->groups[g];
        if (s->ctx->tuning.sim_cpu_fuse == 0 || !cat_fusable(k)) continue;
        s->prefix[g] = cat_prefix(k->cat);
        s->stop[g] = cat_stop(k->cat, s->prefix[g]);
        if (s->stop[g] == s->prefix[g]) continue; /* nothing to fuse */
        if (!(s->kept[g] = aligned_alloc(64, ((2 * group_size(k) + 7) & ~(size_t)7) *
                                                 sizeof(double))))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
        s->fuse[g] = 1;
        s->n_fuse++;
    }
    return HB_SUCCESS;
}

static hb_status_t create(cpu_sim_t *s, const hb_sim_desc_t *d)
{
    const int np = d->n_probes;
    s->n_groups = d->n_groups;
    s->table = d->table;
    s->q10 = d->q10;
    s->dt = d->dt;
    s->factor = d->factor;
    s->n_probes = np;
    s->interpolate = d->interpolate;
    s->sample_every = d->sample_every;
    s->check_every = d->check_every > 0 ? d->check_every : 1;
    s->check_last = d->check_last;
    if (!ALLOC(s->groups, d->n_groups) || !ALLOC(s->probe_group, np) ||
        !ALLOC(s->probe_index, np) || !ALLOC(s->detect, np) || !ALLOC(s->above, np) ||
        !ALLOC(s->threshold, np) || !ALLOC(s->v_prev, np) || !ALLOC(s->row, np) ||
        !ALLOC(s->spikes, np) || !ALLOC(s->spike_count, np) || !ALLOC(s->targets, d->n_targets))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    if (d->n_targets) memcpy(s->targets, d->targets, (size_t)d->n_targets * sizeof *s->targets);
    s->weights = d->weights;
    s->netcon_head = d->netcon_head;
    s->netcon_next = d->netcon_next;
    s->self = d->self_events;
    for (int pass = 0; pass < 2; pass++) { /* count, then list */
        s->n_watch = 0;
        for (int i = 0; i < d->n_targets; i++) {
            const hb_sim_target_t *t = &d->targets[i];
            if (!t->point || !d->groups[t->group].cat->mech[t->point - 1].mech->cpu->watch)
                continue;
            if (pass) s->watch_targets[s->n_watch] = i;
            s->n_watch++;
        }
        if (!pass && !ALLOC(s->watch_targets, s->n_watch + 1))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    memcpy(s->groups, d->groups, (size_t)d->n_groups * sizeof *s->groups);
    for (int p = 0; p < np; p++) {
        s->probe_group[p] = d->probe_group[p];
        s->probe_index[p] = d->probe_index[p];
        s->detect[p] = d->probe_detect[p];
        s->threshold[p] = d->probe_threshold[p];
    }
    hb_status_t st = make_gather_rows(s);
    if (st == HB_SUCCESS) st = make_blocks(s);
    return st == HB_SUCCESS ? make_fused(s) : st;
}

static hb_status_t cpu_create(hb_context_t *ctx, const hb_sim_desc_t *desc, void **engine)
{
    if (!ctx || !desc || !engine) return hb_fail(HB_ERR_INVALID_VALUE, "simulation: NULL argument");
    *engine = NULL;
    cpu_sim_t *s = calloc(1, sizeof *s);
    if (!s) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    s->ctx = ctx;
    hb_status_t st = create(s, desc);
    if (st != HB_SUCCESS) {
        cpu_destroy(s);
        return st;
    }
    *engine = s;
    return HB_SUCCESS;
}

static hb_status_t cpu_set_state(void *engine, int g, const double *v, const double *hh_state)
{
    cpu_sim_t *s = engine;
    if (!s || g < 0 || g >= s->n_groups || !v || !hh_state)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: set_state: bad argument");
    const hb_step_group_t *k = &s->groups[g];
    const size_t hh = hb_step_hh_base(k, k->blocks) * (size_t)k->width * 3;
    if (v != k->v) memcpy(k->v, v, group_size(k) * sizeof *v);
    if (hh && hh_state != k->hh_state) memcpy(k->hh_state, hh_state, hh * sizeof *hh_state);
    return HB_SUCCESS;
}

static hb_status_t cpu_set_probes(void *engine, const unsigned char *above, const double *v_prev)
{
    cpu_sim_t *s = engine;
    if (!s || !above || !v_prev)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: set_probes: NULL argument");
    memcpy(s->above, above, (size_t)s->n_probes);
    memcpy(s->v_prev, v_prev, (size_t)s->n_probes * sizeof *v_prev);
    return HB_SUCCESS;
}

static hb_status_t cpu_get_probes(void *engine, unsigned char *above, double *v_prev)
{
    cpu_sim_t *s = engine;
    if (!s || !above || !v_prev)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: get_probes: NULL argument");
    memcpy(above, s->above, (size_t)s->n_probes);
    memcpy(v_prev, s->v_prev, (size_t)s->n_probes * sizeof *v_prev);
    return HB_SUCCESS;
}

static hb_status_t cpu_queue_events(void *engine, size_t n, const hb_sim_engine_event_t *events)
{
    cpu_sim_t *s = engine;
    if (!s || (n && !events)) return hb_fail(HB_ERR_INVALID_VALUE, "simulation: queue_events: bad argument");
    if (n > s->cap_events) {
        hb_sim_engine_event_t *p = realloc(s->events, n * sizeof *p);
        if (!p) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu events", n);
        s->events = p;
        s->cap_events = n;
    }
    if (n) memcpy(s->events, events, n * sizeof *events);
    s->n_events = n;
    s->next_event = 0;
    return HB_SUCCESS;
}

/* Target `target`'s connections for FOR_NETCONS (the simulation's lists, read when used: the
 * network may add connections after create). */
static hb_cat_netcons_t netcons(const cpu_sim_t *s, int target)
{
    const hb_cat_netcons_t nc = {*s->weights, s->netcon_head ? *s->netcon_head : NULL,
                                 s->netcon_next ? *s->netcon_next : NULL, target};
    return nc;
}

/* A point process's FROM-loop refusal at target `target` at event time `time` of step `step`
 * into *fault. */
static hb_status_t point_fault(hb_sim_fault_t *fault, const hb_cat_fault_t *loop, long step,
                               int target, const hb_sim_target_t *t, double time)
{
    *fault = (hb_sim_fault_t){.step = step, .group = t->group, .slot = t->slot, .target = target};
    hb_cat_fault_text(loop, time, fault->what, sizeof fault->what);
    return HB_ERR_NONFINITE;
}

/* Target `target`'s self-events past HB_SELF_STEP_MAX in step `step`, at event time `time`,
 * into *fault. */
static hb_status_t endless_fault(const cpu_sim_t *s, hb_sim_fault_t *fault, long step,
                                 int target, double time)
{
    const hb_sim_target_t *t = &s->targets[target];
    *fault = (hb_sim_fault_t){.step = step, .group = t->group, .slot = t->slot, .target = target,
                              .endless = 1};
    hb_self_endless_text(s->groups[t->group].cat->mech[t->point - 1].mech->name, time,
                         fault->what, sizeof fault->what);
    return HB_ERR_NONFINITE;
}

/* The queued events of step `step` (steps done before it), in their order, merged target by
 * target in time order with the self-events due (a network event first at equal times); a
 * self-event sent now with a delay that keeps it in this step comes in this step too, as
 * NEURON's loop over its queue up to t + dt/2 delivers it. HB_ERR_NONFINITE and *fault at a
 * point process's refusal (a FROM loop's trip count): the events after it not delivered. */
static hb_status_t deliver_events(cpu_sim_t *s, long step, hb_sim_fault_t *fault)
{
    int last = -1; /* the target of the last self-event delivered, and its count this step */
    long count = 0;
    for (;;) {
        hb_self_event_t se;
        const int net = s->next_event < s->n_events && s->events[s->next_event].step <= step;
        const int self = s->self && hb_self_due(s->self, step, &se);
        if (!net && !self) return HB_SUCCESS;
        const hb_sim_engine_event_t *e = net ? &s->events[s->next_event] : NULL;
        if (e && (!self || e->target < se.target ||
                  (e->target == se.target && e->time <= se.time))) {
            s->next_event++;
            const hb_sim_target_t *t = &s->targets[e->target];
            const hb_step_group_t *g = &s->groups[t->group];
            if (!t->point) {
                hb_syn_receive(&g->syns[t->site], g->syn_state + t->state, t->stride, e->weight);
                continue;
            }
            /* a catalogue point process's NET_RECEIVE with its connection's weight vector; an
             * event without one (a recipe's events_on) as a connection of its own, initialised */
            const hb_cat_netcons_t nc = netcons(s, e->target);
            hb_cat_fault_t loop = {NULL, NULL, 0, 0.0};
            hb_status_t st = hb_cat_net_deliver(s->self, e->target, g, t->point - 1, t->slot,
                                                t->inst, *s->weights, e->weights, e->weight,
                                                e->time, s->dt, &nc, &loop);
            if (loop.line) return point_fault(fault, &loop, step, e->target, t, e->time);
            if (st != HB_SUCCESS) return st;
            continue;
        }
        /* a self-event: NET_RECEIVE with its flag and the vector of the event that sent it; a
         * target's come one after the other (the queue's order is the target's, and only the
         * target sends itself events), so the count is its step's */
        if (se.target != last) {
            last = se.target;
            count = 0;
        }
        if (++count > HB_SELF_STEP_MAX) return endless_fault(s, fault, step, se.target, se.time);
        const hb_sim_target_t *t = &s->targets[se.target];
        const hb_cat_netcons_t nc = netcons(s, se.target);
        hb_cat_fault_t loop = {NULL, NULL, 0, 0.0};
        hb_status_t st = hb_cat_self_deliver(s->self, &se, &s->groups[t->group], t->point - 1,
                                             t->slot, t->inst, *s->weights, &nc, s->dt, &loop);
        if (loop.line) return point_fault(fault, &loop, step, se.target, t, se.time);
        if (st != HB_SUCCESS) return st;
    }
}

/* After a step ending at t: the WATCH conditions of every instance that has them, target by
 * target; a crossing queues a self-event at t, delivered at the start of the next step (NEURON's
 * check_thresh after the step, its event at t delivered before the next one). */
static hb_status_t check_watches(cpu_sim_t *s, double t)
{
    for (int i = 0; i < s->n_watch; i++) {
        const int target = s->watch_targets[i];
        const hb_sim_target_t *tg = &s->targets[target];
        const hb_step_group_t *g = &s->groups[tg->group];
        hb_cat_sends_t sends = {0};
        hb_cat_point_watch(g, tg->point - 1, tg->slot, tg->inst, t, s->dt, &sends);
        if (sends.n == 0) continue;
        hb_status_t st = hb_self_requests(s->self, target, -1, 0.0, &sends, t, s->dt,
                                          g->cat->mech[tg->point - 1].mech->name);
        if (st != HB_SUCCESS) return st;
    }
    return HB_SUCCESS;
}

/* After each step: the probes' spike tests and, on sampling steps, their voltages; one chunk
 * per step that recorded something. */
static hb_status_t cpu_advance(void *engine, long step0, long steps, hb_sim_sink_t sink,
                               void *user, hb_sim_fault_t *fault)
{
    cpu_sim_t *s = engine;
    if (!s || !sink || steps < 0 || !fault)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: advance: bad argument");
    int primed = 0; /* priming never outlives the call: between advances the fields are as
                       the passes apart leave them (checkpoints, state changes, readers) */
    for (long k = 0; k < steps; k++) {
        const long step = step0 + k + 1; /* steps done after this one */
        const int check = step % s->check_every == 0 || step == s->check_last;
        hb_status_t delivered = deliver_events(s, step - 1, fault);
        if (delivered != HB_SUCCESS) return delivered;
        const int fuse = s->n_fuse > 0 && k + 1 < steps;
        cpu_step(s, step - 1, check, primed, fuse);
        primed = fuse;
        const double t = (double)step * s->dt;
        hb_status_t watched = check_watches(s, t);
        if (watched != HB_SUCCESS) return watched;
        const int sample = step % s->sample_every == 0;
        int spiked = 0;
        for (int p = 0; p < s->n_probes; p++) {
            const double v = s->groups[s->probe_group[p]].v[s->probe_index[p]], v0 = s->v_prev[p];
            s->v_prev[p] = v;
            double ts;
            s->spike_count[p] = 0;
            if (s->detect[p] && hb_spike_test(v, v0, s->threshold[p], &s->above[p], t, s->dt,
                                              s->interpolate, &ts)) {
                s->spikes[p] = ts;
                s->spike_count[p] = 1;
                spiked = 1;
            }
            s->row[p] = v;
        }
        if (sample || spiked) {
            hb_status_t st = sink(user, sample, &step, s->row, s->spike_count, s->spikes);
            if (st != HB_SUCCESS) return st;
        }
        if (s->n_records && step % s->record_every == 0) {
            for (int r = 0; r < s->n_records; r++) {
                const hb_step_group_t *g = &s->groups[s->records[r].group];
                s->record_row[r] = hb_rec_value(&s->records[r], g->v, g->hh_state, g->syn_state);
            }
            hb_status_t st = s->record_sink(s->record_user, 1, &step, s->record_row);
            if (st != HB_SUCCESS) return st;
        }
        if (check && first_fault(s, step, fault)) return HB_ERR_NONFINITE;
    }
    return HB_SUCCESS;
}

static hb_status_t cpu_set_records(void *engine, int n, const hb_rec_sample_t *records,
                                   long every, hb_sim_record_sink_t sink, void *user)
{
    cpu_sim_t *s = engine;
    if (!s || n < 0 || (n && (!records || every < 1 || !sink)))
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: set_records: bad argument");
    for (int r = 0; r < n; r++)
        if (records[r].group < 0 || records[r].group >= s->n_groups)
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: set_records: record %d in group %d "
                           "of %d", r, records[r].group, s->n_groups);
    hb_rec_sample_t *copy = malloc(((size_t)n + 1) * sizeof *copy);
    double *row = malloc(((size_t)n + 1) * sizeof *row);
    if (!copy || !row) {
        free(copy);
        free(row);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d records", n);
    }
    if (n) memcpy(copy, records, (size_t)n * sizeof *copy);
    free(s->records);
    free(s->record_row);
    s->records = copy;
    s->record_row = row;
    s->n_records = n;
    s->record_every = n ? every : 1;
    s->record_sink = sink;
    s->record_user = user;
    s->n_fuse = 0;
    for (int g = 0; g < s->n_groups; g++) {
        s->fuse[g] = s->kept[g] != NULL;
        for (int r = 0; r < n && s->fuse[g]; r++)
            if (records[r].group == g && records[r].kind == HB_REC_HOST) s->fuse[g] = 0;
        s->n_fuse += s->fuse[g];
    }
    return HB_SUCCESS;
}

static hb_status_t cpu_get_v(void *engine, int g, size_t first, size_t count, double *dst)
{
    cpu_sim_t *s = engine;
    if (!s || g < 0 || g >= s->n_groups || !dst || first + count > group_size(&s->groups[g]))
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: get_v: bad argument");
    const double *src = s->groups[g].v + first;
    if (dst != src) memcpy(dst, src, count * sizeof *dst);
    return HB_SUCCESS;
}

static int cpu_fused_groups(const void *engine)
{
    return engine ? ((const cpu_sim_t *)engine)->n_fuse : 0;
}

const struct hb_sim_ops hb_cpu_sim_ops = {
    .steps_in_place = 1,
    .catalogue = HB_SIM_CAT_ALL,
    .points = 1,
    .synapses = 1,
    .block_width = cpu_block_width,
    .mixed_width = MIXED_LANES,
    .mixed_copies = NULL, /* copies keep their group: its lanes are vectors of copies */
    .create = cpu_create,
    .destroy = cpu_destroy,
    .set_state = cpu_set_state,
    .set_probes = cpu_set_probes,
    .get_probes = cpu_get_probes,
    .queue_events = cpu_queue_events,
    .advance = cpu_advance,
    .set_records = cpu_set_records,
    .get_v = cpu_get_v,
    .fused_groups = cpu_fused_groups,
    .solve_benchmark = cpu_solve_benchmark,
};
