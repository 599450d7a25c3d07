/*
 * The step of a mixed group with parallelism inside each cell (the GPU's: one warp a cell,
 * src/cuda/sim_cuda.cu). hb_step_mixed_lane walks a cell's rows in order, one thread a cell;
 * here each phase of the step is split by rows, and a row *gathers* what its children would
 * have added to it, in the order the row-ordered step adds them:
 *
 *   assembly   rows with inputs (hh, IClamps, synapses, catalogue instances): pas; then hh
 *              (every instance at once), then the cell's IClamps and synapses (one thread,
 *              their order), then catalogue mechanisms (common/cat_fused.h); then
 *              every row at once: pas (rows without inputs), its own axial terms
 *              ((cfac + d) - l, (0 - rhs) - l dv), then its children's (d -= u_c,
 *              rhs += u_c (v - v_c)) in ascending child order, as the row loop (ascending)
 *              adds them;
 *   eliminate  chains (runs of rows each with one child, the next row) in rounds, each
 *              chain's child chains in earlier rounds, a chain's rows from its end up: each
 *              row its children's
 *              (d -= (u_c l_c) r_c, rhs -= (u_c r_c) rhs_c) in descending child order, as
 *              the backward loop adds them, then its own r = 1 / d kept in d (the root: rhs
 *              r too);
 *   substitute chains by round, the last round (the root's) first, each from its top down:
 *              dv = (rhs - l dv_parent) r, and v += factor dv in the same pass;
 *   update     every hh instance and synapse, with the new v; catalogue states.
 *
 * Each value sees the same floating-point operations in the same order as in
 * hb_step_mixed_lane, so the bits are the same (tests/test_sim_mixed.c runs this step on the
 * host, rows and chains of a phase in reverse order, against the CPU engine). Chains of one
 * round, and rows of the other phases, touch disjoint values: any order or parallelism among
 * them is exact.
 *
 * The plan (hb_sim_tree_t, made on the host by hb_sim_tree_plan) is per element in the
 * group's layout: element (row i, lane k) of block b at block_start[b] + i width + k.
 */
#ifndef HB_COMMON_SIM_TREE_H
#define HB_COMMON_SIM_TREE_H

#include <stddef.h>

#include "common/hostdev.h"
#include "common/sim_step.h"
#include "common/status.h"

/* A row's shape (hb_sim_tree_t.shape): what the step reads of its neighbours. */
#define HB_TREE_INPUT 1 /* an hh instance, IClamp or synapse: pas done before those */
#define HB_TREE_NEXT 2  /* one child, the next row */
#define HB_TREE_LEAF 4  /* no child */
#define HB_TREE_PREV 8  /* its parent is the previous row */
#define HB_TREE_FIXED 16 /* its eliminated diagonal is constant: 1 / d is the group's fixed_r */

/* Pointers are host memory on the CPU and device memory in a kernel. */
typedef struct {
    /* Per element: row i's children are child[c] (ascending), c from child_start[i] to
     * child_start[i + 1] (the cell's last row: to lane_m - 1), each c an element of the same
     * lane (row c stored as element base + c width); their values are row numbers. */
    const int *child_start;
    const int *child;
    const unsigned char *shape; /* per element: HB_TREE_* */
    /* Chains: runs of rows top .. end where each row but the end has one child, the next
     * row (parent[j] = j - 1 inside). Slot s has chains chain_first[s] .. chain_first[s + 1] - 1
     * in rounds: round r of slot s has chains chain_first[s] + bound[r] ..
     * chain_first[s] + bound[r + 1] - 1, bound = round_bound + round_first[s] (rounds + 1
     * entries a slot; none for padding lanes), at most `tile`, each with its child
     * chains in earlier rounds. The rounds are list scheduling, the chains with the most rows
     * to the root first: the elimination's critical path. */
    const int *chain_first;
    const int *chain_top, *chain_end;
    const int *round_first;
    const int *round_bound;
    /* Slot s's rows with an input (HB_TREE_INPUT), ascending: input_row[input_first[s] ..
     * input_first[s + 1] - 1] (the assembly's pas before the inputs visits only them). */
    const int *input_first;
    const int *input_row;
    /* Per slot (NULL: every slot its own): the element of row 0 of the rows whose constants
     * (u, l, cfac, pas_g, pas_e, row_index, fixed_r, parent) and plan (child_start, child,
     * shape) slot s reads, row i at cbase[s] + i width: a copy's the first slot with the
     * same bits in all of them (hb_sim_tree_share), so the GPU keeps them once per model.
     * v, d, rhs and the inputs stay the slot's own. */
    const size_t *cbase;
    /* Lanes a cell (8, 16 or 32: a tile of a warp, 32 / tile cells a warp), and so the
     * chains of a round at most. */
    int tile;
} hb_sim_tree_t;

#define HB_TREE_ROUND 32 /* chains a round, at most: a warp's lanes (the widest tile) */

/* Host arrays of a plan (hb_sim_tree_plan), freed by hb_sim_tree_free. */
typedef struct {
    hb_sim_tree_t k;
    int *child_start, *child, *chain_first, *chain_top, *chain_end, *round_first, *round_bound;
    int *input_first, *input_row;
    size_t *cbase; /* hb_sim_tree_share's (NULL before) */
    unsigned char *shape;
    size_t size;   /* elements of child_start, child and shape */
    size_t slots;  /* chain_first and round_first have slots + 1 */
    size_t chains; /* elements of chain_top and chain_end */
    size_t bounds; /* elements of round_bound */
    size_t inputs; /* elements of input_row */
} hb_sim_tree_plan_t;

#ifdef __cplusplus /* the CUDA files call them */
extern "C" {
#endif
/* The plan of mixed group g (g->mixed, host arrays) for `tile` lanes a cell (8, 16 or 32):
 * rounds of at most `tile` chains. */
hb_status_t hb_sim_tree_plan(const hb_step_group_t *g, int tile, hb_sim_tree_plan_t *plan);
/* plan->cbase (and plan->k.cbase): each slot of g its first slot with the same rows, the same
 * bits in every constant and plan array that the step reads by cbase (a copy of one model),
 * else its own; *templates (may be NULL) the slots that are their own. Only slots of one
 * shape (g->shape_class) are candidates, found by hashes and compared exactly. */
hb_status_t hb_sim_tree_share(const hb_step_group_t *g, hb_sim_tree_plan_t *plan,
                              size_t *templates);
void hb_sim_tree_free(hb_sim_tree_plan_t *plan);
#ifdef __cplusplus
}
#endif

/* Where a slot's rows are: element of row 0 of its state (base) and of its constants and
 * plan (cbase: hb_sim_tree_t.cbase), row stride, rows. */
typedef struct {
    size_t base, cbase, w;
    int m;
} hb_tree_cell_t;

HB_HOSTDEV hb_tree_cell_t hb_tree_cell(const hb_step_group_t *g, const hb_sim_tree_t *t,
                                       int slot)
{
    const int b = slot / g->width;
    hb_tree_cell_t c;
    c.w = (size_t)g->width;
    c.base = g->block_start[b] + (size_t)(slot % g->width);
    c.cbase = t->cbase ? t->cbase[slot] : c.base;
    c.m = g->lane_m[slot];
    return c;
}

/* Children of row i: [*c0, *c1) of t->child (positions; elements cbase + c w). */
HB_HOSTDEV void hb_tree_children(const hb_sim_tree_t *t, hb_tree_cell_t c, int i, int *c0, int *c1)
{
    *c0 = t->child_start[c.cbase + (size_t)i * c.w];
    *c1 = i + 1 < c.m ? t->child_start[c.cbase + (size_t)(i + 1) * c.w] : c.m - 1;
}

/* A row's constants: from the group's one-byte table where it has one (row_index), else the
 * arrays; the same values either way. */
HB_HOSTDEV double hb_tree_u(const hb_step_group_t *g, size_t e)
{
    return g->row_index ? g->row_table[4 * (size_t)g->row_index[e]] : g->u[e];
}
HB_HOSTDEV double hb_tree_l(const hb_step_group_t *g, size_t e)
{
    return g->row_index ? g->row_table[4 * (size_t)g->row_index[e] + 1] : g->l[e];
}
HB_HOSTDEV double hb_tree_pas_g(const hb_step_group_t *g, size_t e)
{
    return g->row_index ? g->row_table[4 * (size_t)g->row_index[e] + 2] : g->pas_g[e];
}
HB_HOSTDEV double hb_tree_pas_e(const hb_step_group_t *g, size_t e)
{
    return g->row_index ? g->row_table[4 * (size_t)g->row_index[e] + 3] : g->pas_e[e];
}
HB_HOSTDEV double hb_tree_cfac(const hb_step_group_t *g, size_t e)
{
    return g->row_index ? g->cfac_table[g->row_index[e]] : g->cfac[e];
}

/* In the phases below, d and rhs are the cell's own: row i at [i w] (the group's arrays from
 * the cell's row 0). */

/* Assembly, per input row (HB_TREE_INPUT): pas into d and rhs (hb_step_pas_row's operations).
 * The other rows' pas is done by hb_tree_axial. */
HB_HOSTDEV void hb_tree_pas(const hb_step_group_t *g, const hb_sim_tree_t *t, hb_tree_cell_t c,
                            int i, double *d, double *rhs)
{
    const size_t e = c.base + (size_t)i * c.w, q = c.cbase + (size_t)i * c.w;
    if (!(t->shape[q] & HB_TREE_INPUT)) return;
    double ip, gp;
    hb_pas_current(g->v[e], hb_tree_pas_g(g, q), hb_tree_pas_e(g, q), &ip, &gp);
    d[(size_t)i * c.w] = gp;
    rhs[(size_t)i * c.w] = ip;
}

/* Assembly, per hh instance j of the slot. */
HB_HOSTDEV void hb_tree_hh(const hb_step_group_t *g, int slot, hb_tree_cell_t c, int j, double *d,
                           double *rhs)
{
    const size_t lane = (size_t)(slot % g->width);
    const size_t inst = g->hh_start[slot / g->width] + (size_t)j;
    const size_t r = (size_t)g->hh_node[inst * c.w + lane] * c.w;
    hb_step_hh_row(1, (int)c.w, (int)c.w, 1, g->v + c.base + r,
                   g->hh_par + inst * HB_HH_NPAR * c.w + lane, g->hh_state + inst * 3 * c.w + lane,
                   d + r, rhs + r);
}

/* Assembly, per slot (one thread): IClamps, then synapses, in their order. */
HB_HOSTDEV void hb_tree_inputs(const hb_step_group_t *g, const hb_step_params_t *p, int slot,
                               hb_tree_cell_t c, double *d, double *rhs)
{
    hb_step_slot_stimuli(g, p, slot, c.w, rhs);
    if (g->syn_start) hb_step_slot_synapses(g, slot, c.w, g->v + c.base, d, rhs);
}

/* Assembly, per row: pas unless done before (input rows), its own axial terms, then its
 * children's, ascending (hb_step_axial_row's and hb_step_root_row's operations). */
HB_HOSTDEV void hb_tree_axial(const hb_step_group_t *g, const hb_sim_tree_t *t,
                              hb_tree_cell_t c, int i, double *d, double *rhs)
{
    const size_t w = c.w, e = c.base + (size_t)i * w, q = c.cbase + (size_t)i * w;
    const double *v = g->v;
    const unsigned shape = t->shape[q];
    const double vi = v[e];
    double di, ri;
    if (shape & HB_TREE_INPUT) {
        di = d[(size_t)i * w];
        ri = rhs[(size_t)i * w];
    } else {
        hb_pas_current(vi, hb_tree_pas_g(g, q), hb_tree_pas_e(g, q), &ri, &di);
    }
    if (i == 0) {
        di = hb_tree_cfac(g, q) + di;
        ri = 0.0 - ri;
    } else {
        const size_t pe = shape & HB_TREE_PREV ? e - w : c.base + (size_t)g->parent[q] * w;
        const double li = hb_tree_l(g, q), dv = v[pe] - vi;
        ri = (0.0 - ri) - li * dv;
        di = (hb_tree_cfac(g, q) + di) - li;
    }
    if (shape & HB_TREE_NEXT) {
        const double uc = hb_tree_u(g, q + w);
        ri += uc * (vi - v[e + w]);
        di -= uc;
    } else if (!(shape & HB_TREE_LEAF)) {
        int c0, c1;
        hb_tree_children(t, c, i, &c0, &c1);
        for (int k = c0; k < c1; k++) {
            const size_t row = (size_t)t->child[c.cbase + (size_t)k * w] * w;
            const double uc = hb_tree_u(g, c.cbase + row);
            ri += uc * (vi - v[c.base + row]);
            di -= uc;
        }
    }
    if (!(shape & HB_TREE_FIXED)) d[(size_t)i * w] = di; /* else never read */
    rhs[(size_t)i * w] = ri;
}

#define HB_TREE_BLOCK 2 /* rows a chain loop loads before it computes them (1, 3: slower) */

/* Row i's reciprocal pivot where it is fixed (HB_TREE_FIXED; else d[i w], computed this step). */
HB_HOSTDEV double hb_tree_r(const hb_step_group_t *g, const hb_sim_tree_t *t, hb_tree_cell_t c,
                            int i, const double *d)
{
    const size_t q = c.cbase + (size_t)i * c.w;
    return t->shape[q] & HB_TREE_FIXED ? g->fixed_r[q] : d[(size_t)i * c.w];
}

/* Elimination of a chain (its end's child chains done): each row its children's terms, in
 * descending order (the end's from the lists, the others' only child the next row, carried
 * in registers), then its own reciprocal r = 1 / d kept in d: hb_hines_recip_eliminate_row's
 * and hb_hines_recip_root's operations. A fixed row (HB_TREE_FIXED: no hh or synapse below
 * it) has its r from the group's fixed_r, the bits the division gives (the CPU's factors), so
 * its d is neither updated nor divided, and the recurrence is rhs's alone. Rows after the end
 * are taken HB_TREE_BLOCK at a time, their loads before the recurrence. */
HB_HOSTDEV void hb_tree_eliminate(const hb_step_group_t *g, const hb_sim_tree_t *t,
                                  hb_tree_cell_t c, int chain, double *d, double *rhs)
{
    const size_t w = c.w;
    const int top = t->chain_top[chain], end = t->chain_end[chain];
    const size_t e = c.cbase + (size_t)end * w; /* constants and plan */
    const unsigned shape = t->shape[e];
    const int fixed = (shape & HB_TREE_FIXED) != 0;
    double di = fixed ? 0.0 : d[(size_t)end * w], ri = rhs[(size_t)end * w];
    if (!(shape & HB_TREE_LEAF)) {
        int c0, c1;
        hb_tree_children(t, c, end, &c0, &c1);
        for (int k = c1 - 1; k >= c0; k--) {
            const int cr = t->child[c.cbase + (size_t)k * w];
            const size_t ce = c.cbase + (size_t)cr * w;
            const double uc = hb_tree_u(g, ce), rc = hb_tree_r(g, t, c, cr, d);
            if (!fixed) di -= (uc * hb_tree_l(g, ce)) * rc;
            ri -= (uc * rc) * rhs[(size_t)cr * w];
        }
    }
    double r;
    if (fixed) {
        r = g->fixed_r[e];
    } else {
        r = 1.0 / di;
        d[(size_t)end * w] = r;
    }
    rhs[(size_t)end * w] = end == 0 ? ri * r : ri;
    double u_c = hb_tree_u(g, e), l_c = hb_tree_l(g, e); /* the child of the next row up */
    for (int j = end - 1; j >= top; j -= HB_TREE_BLOCK) {
        const int n = j - top + 1 < HB_TREE_BLOCK ? j - top + 1 : HB_TREE_BLOCK;
        double dr[HB_TREE_BLOCK] = {0}, rr[HB_TREE_BLOCK] = {0}, ul[HB_TREE_BLOCK] = {0},
               uu[HB_TREE_BLOCK] = {0};
        int fx[HB_TREE_BLOCK] = {0};
        HB_UNROLL
        for (int k = 0; k < HB_TREE_BLOCK; k++) {
            if (k >= n) break;
            const size_t row = (size_t)(j - k) * w, ei = c.cbase + row;
            fx[k] = (t->shape[ei] & HB_TREE_FIXED) != 0;
            dr[k] = fx[k] ? g->fixed_r[ei] : d[row]; /* fixed: r itself */
            rr[k] = rhs[row];
            ul[k] = u_c * l_c;
            uu[k] = u_c;
            u_c = hb_tree_u(g, ei);
            l_c = hb_tree_l(g, ei);
        }
        HB_UNROLL
        for (int k = 0; k < HB_TREE_BLOCK; k++) {
            if (k >= n) break;
            const double rc = r, rhs_c = ri;
            const size_t row = (size_t)(j - k) * w;
            ri = rr[k] - (uu[k] * rc) * rhs_c;
            if (fx[k]) {
                r = dr[k];
            } else {
                di = dr[k] - ul[k] * rc;
                r = 1.0 / di;
                d[row] = r;
            }
            rhs[row] = j - k == 0 ? ri * r : ri;
        }
    }
}

/* Substitution of a chain (its parent row done), top down: dv = (rhs - l dv_parent) r, the
 * parent's carried in a register, then v += factor dv (hb_step_update_row's operation); the
 * root's dv is its elimination's. Rows HB_TREE_BLOCK at a time, loads first. The chain's end
 * keeps its dv in rhs (its child chains read it); keep_dv 1: every row does (Crank-Nicolson's
 * ion currents read it, hb_cat_second_order_element). Callers without catalogue mechanisms pass
 * a literal 0, so their code has no store more. */
HB_HOSTDEV void hb_tree_substitute(const hb_step_group_t *g, const hb_sim_tree_t *t,
                                   const hb_step_params_t *p, hb_tree_cell_t c, int chain,
                                   const double *d, double *rhs, int keep_dv)
{
    const size_t w = c.w;
    const int top = t->chain_top[chain], end = t->chain_end[chain];
    double *v = g->v + c.base, dv;
    int j = top;
    if (top == 0) {
        dv = rhs[0];
        v[0] += p->factor * dv;
        j = 1;
    } else {
        dv = rhs[(size_t)g->parent[c.cbase + (size_t)top * w] * w];
    }
    for (; j <= end; j += HB_TREE_BLOCK) {
        const int n = end - j + 1 < HB_TREE_BLOCK ? end - j + 1 : HB_TREE_BLOCK;
        double rr[HB_TREE_BLOCK] = {0}, lr[HB_TREE_BLOCK] = {0}, dr[HB_TREE_BLOCK] = {0},
               vr[HB_TREE_BLOCK] = {0};
        HB_UNROLL
        for (int k = 0; k < HB_TREE_BLOCK; k++) {
            if (k >= n) break;
            const size_t row = (size_t)(j + k) * w;
            rr[k] = rhs[row];
            lr[k] = hb_tree_l(g, c.cbase + row);
            dr[k] = hb_tree_r(g, t, c, j + k, d);
            vr[k] = v[row];
        }
        HB_UNROLL
        for (int k = 0; k < HB_TREE_BLOCK; k++) {
            if (k >= n) break;
            dv = (rr[k] - lr[k] * dv) * dr[k];
            v[(size_t)(j + k) * w] = vr[k] + p->factor * dv;
            if (keep_dv) rhs[(size_t)(j + k) * w] = dv;
        }
    }
    if (end > 0) rhs[(size_t)end * w] = dv;
}

/* Update, per hh instance j of the slot (after every row's v). */
HB_HOSTDEV void hb_tree_gates(const hb_step_group_t *g, const hb_step_params_t *p, int slot,
                              hb_tree_cell_t c, int j)
{
    const size_t lane = (size_t)(slot % g->width);
    const size_t inst = g->hh_start[slot / g->width] + (size_t)j;
    hb_step_gates_row(1, (int)c.w, p, g->v + c.base + (size_t)g->hh_node[inst * c.w + lane] * c.w,
                      g->hh_state + inst * 3 * c.w + lane);
}

/* Update, per synapse q of the slot (k-th: q = syn_start[slot] + k). */
HB_HOSTDEV void hb_tree_synapse(const hb_step_group_t *g, int q)
{
    hb_step_synapse_decay(&g->syns[q], g->syn_state + 2 * (size_t)q);
}

#endif
