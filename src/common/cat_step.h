/*
 * Catalogue mechanisms in a group's step (docs/mechanisms.md, sections 2-4): their instances,
 * fields and ions in the group's block layout, and the calls of their kernels around the
 * hard-coded pas/hh/synapse passes of common/sim_step.h. The calls through the catalogue's
 * function pointers are host code (the CPU engine's step and hb_sim_init); the views, the ions'
 * pass and Nernst are HB_HOSTDEV, which the GPU's fused step (common/cat_fused.h, the kernels
 * by index) shares. A group without catalogue mechanisms has hb_step_group_t.cat NULL and
 * never comes here.
 */
#ifndef HB_COMMON_CAT_STEP_H
#define HB_COMMON_CAT_STEP_H

#include <math.h>
#include <stddef.h>
#include <stdio.h>

#include "common/mech_abi.h"
#include "common/self_events.h"
#include "common/sim_step.h"

#define HB_CAT_MAX_ION 8    /* species one mechanism uses (USEION statements) */

/* NEURON's ion_style of an ion at one row (nrn_promote, docs/mechanisms.md section 4). */
enum {
    HB_ION_EINIT = 1,   /* e by Nernst at initialisation (a concentration read or written) */
    HB_ION_EADVANCE = 2 /* and before every step's currents (a concentration written) */
};

/* One catalogue mechanism of a group: instance j of block b is inst_start[b] + j, its row of
 * lane k at node[(inst_start[b] + j) W + k], field q at field[((inst_start[b] + j) n_field + q)
 * W + k] (RANGE PARAMETERs per lane: cl 1). Slot s has lane_inst[s] instances (the same
 * count on every lane of a non-mixed group; padding lanes copy lane 0's rows, fields 0). */
typedef struct {
    const hb_cat_mech_t *mech; /* on the device: a device copy of the descriptor (its counts) */
    int builtin, index;      /* its built-in catalogue (hb_catalogue_builtin's number) and index
                                there: the fused GPU step's dispatch; builtin -1: a user's */
    size_t *inst_start;      /* blocks + 1 */
    int *lane_inst;          /* blocks * width */
    int *node;               /* inst_start[blocks] * width */
    double *field;           /* inst_start[blocks] * n_field * width */
    double *global;          /* n_global: the GLOBAL PARAMETERs (the first cell's values) */
    int ion[HB_CAT_MAX_ION]; /* the group's species of the mechanism's ion q (USEION order) */
    double **table;          /* n_table TABLEs filled at the run's celsius; NULL: none */
    double *area;            /* point processes: inst_start[blocks] * width row areas [um2] */
    /* The CUDA engine's device copy of a user catalogue's point process (else NULL, 0): its
     * slots' views (blocks * width) and its number among the simulation's user point processes,
     * where the event delivery hands its events to the catalogue's launcher. */
    const hb_cat_lane_t *lanes;
    int user_key;
} hb_step_cat_mech_t;

/* One ion species of a group, per element of the group's v layout. */
typedef struct {
    char name[16];
    double valence;
    double *e, *ci, *co;    /* [mV], [mM], [mM] */
    double *i, *didv;       /* the step's total current [mA/cm2] and conductance [mA/cm2/mV] */
    double *e0, *ci0, *co0; /* values at initialisation (NEURON's defaults or the model's) */
    unsigned char *style;   /* HB_ION_EINIT | HB_ION_EADVANCE */
    /* 1: i and di/dv are read, by a mechanism's READ i<x> or a record (sim_cat.c,
     * mech_vars.c). The CPU engine's currents leave the others out (hb_cat_step_mech_currents):
     * nothing reads them. */
    int observed;
} hb_step_ion_t;

typedef struct hb_step_cat {
    int n_mech; /* in name order (nrnivmodl's registration order: the .mod files' names) */
    hb_step_cat_mech_t *mech;
    int n_ion;
    hb_step_ion_t *ion;
    int second_order; /* Crank-Nicolson: the ion currents moved to the half step (NEURON's
                       * secondorder 2, hb_cat_second_order) */
    double celsius;   /* [degC] */
    double ktf;     /* 1e3 R (celsius + 273.15) / F [mV]: NEURON 8.2's constants (sim_cat.c) */
} hb_step_cat_t;

/* NEURON's nrn_nernst: e [mV] of valence z from the concentrations. */
HB_HOSTDEV double hb_cat_nernst(double ktf, double ci, double co, double z)
{
    if (z == 0.0) return 0.0;
    if (ci <= 0.0) return 1e6;
    if (co <= 0.0) return -1e6;
    return ktf / z * hb_log(co / ci); /* the same bits as a GPU step would give */
}

/* The kernels' view of mechanism cm on lanes lane0 .. lane0 + lanes - 1 of block `block` (mixed
 * groups: one lane at a time); d and rhs the block's pass A accumulators from lane0 (NULL
 * outside pass A), ions[] filled for it. Returns the instances to step. */
HB_HOSTDEV int hb_cat_view(const hb_step_group_t *g, const hb_step_cat_mech_t *cm, int block,
                           int lane0, int lanes, double t, double dt, double *d, double *rhs,
                           hb_ion_block_t *ions, hb_cat_block_t *blk)
{
    const hb_step_cat_t *cat = g->cat;
    const size_t W = (size_t)g->width, i0 = cm->inst_start[block];
    const size_t base = hb_step_block_base(g, block) + (size_t)lane0;
    blk->lanes = lanes;
    blk->width = g->width;
    blk->cl = 1;
    blk->dt = dt;
    blk->t = t;
    blk->celsius = cat->celsius;
    blk->v = g->v + base;
    blk->d = d;
    blk->rhs = rhs;
    blk->node = cm->node + i0 * W + (size_t)lane0;
    blk->field = cm->field + i0 * (size_t)cm->mech->n_field * W + (size_t)lane0;
    blk->param = NULL;
    blk->global = cm->global;
    blk->table = (const double *const *)cm->table;
    blk->area = cm->area ? cm->area + i0 * W + (size_t)lane0 : NULL;
    blk->netcon_w = NULL;
    blk->netcon_next = NULL;
    blk->netcon_first = -1;
    blk->fault = NULL; /* hb_cat_point_event's on the CPU; elsewhere FROM refusals poison */
    for (int q = 0; q < cm->mech->n_ion; q++) {
        const hb_step_ion_t *ion = &cat->ion[cm->ion[q]];
        ions[q].e = ion->e + base; /* members one by one: C and CUDA C++ alike */
        ions[q].ci = ion->ci + base;
        ions[q].co = ion->co + base;
        ions[q].i = ion->i + base;
        ions[q].didv = ion->didv + base;
    }
    blk->ion = ions;
    return cm->lane_inst[(size_t)block * W + (size_t)lane0];
}

/* The connections of one target, for FOR_NETCONS (the simulation's lists, hb_sim_add_weights):
 * head[target] its first (-1: none), next[c] the one after c (-1: the last), vector c at
 * w[c HB_CAT_MAX_WEIGHT]. */
typedef struct {
    double *w;
    const int *head, *next; /* head NULL: no connections yet */
    int target;
} hb_cat_netcons_t;

/* The block's netcon_* fields from the target's connections (nc NULL or none: left empty). */
static inline void hb_cat_view_netcons(hb_cat_block_t *blk, const hb_cat_netcons_t *nc)
{
    if (nc && nc->head && nc->head[nc->target] >= 0) {
        blk->netcon_w = nc->w;
        blk->netcon_next = nc->next;
        blk->netcon_first = nc->head[nc->target];
    }
}

/* The view of point process cm on slot `slot`'s lane alone at t [ms], for one instance's kernel:
 * nc the target's connections for FOR_NETCONS (NULL: none), fault where a FROM loop's refusal
 * goes (NULL: none kept). */
static inline void hb_cat_point_view(const hb_step_group_t *g, const hb_step_cat_mech_t *cm,
                                     int slot, double t, double dt, const hb_cat_netcons_t *nc,
                                     hb_cat_fault_t *fault, hb_ion_block_t *ions,
                                     hb_cat_block_t *blk)
{
    hb_cat_view(g, cm, slot / g->width, slot % g->width, 1, t, dt, NULL, NULL, ions, blk);
    hb_cat_view_netcons(blk, nc);
    blk->fault = fault;
}

/* A FROM loop's refusal at event time t [ms] as text: the mechanism, FILE:LINE, the count. */
static inline void hb_cat_fault_text(const hb_cat_fault_t *f, double t, char *text, size_t size)
{
    if (isfinite(f->count))
        snprintf(text, size, "%s (%s:%d) at t = %.10g ms: a FROM loop of %.17g passes; expected at "
                 "most %.0f (HB_CAT_FROM_MAX)", f->mech, f->file, f->line, t, f->count,
                 HB_CAT_FROM_MAX);
    else
        snprintf(text, size, "%s (%s:%d) at t = %.10g ms: a FROM loop's bound is not finite (%g "
                 "passes); expected at most %.0f (HB_CAT_FROM_MAX)", f->mech, f->file, f->line, t,
                 f->count, HB_CAT_FROM_MAX);
}

/* One event (init 0: NET_RECEIVE) or a connection's initialisation (init 1: NET_RECEIVE's
 * INITIAL, NEURON's NetCon init: without one, weight[1 ..] zeroed) at instance `inst` of point
 * process q of the group in slot `slot`; w the connection's weight vector (n_weight doubles,
 * written back: the per-connection state), t the event's time [ms]; nc the target's
 * connections (NULL: none known). A FROM loop's refusal goes to *fault (NULL: none kept, the
 * instance's STATEs NaN). */
static inline void hb_cat_point_event(const hb_step_group_t *g, int q, int slot, int inst,
                                      double *w, double t, double dt, int init,
                                      const hb_cat_netcons_t *nc, hb_cat_fault_t *fault)
{
    const hb_step_cat_mech_t *cm = &g->cat->mech[q];
    const hb_cat_mech_t *m = cm->mech;
    void (*kernel)(const hb_cat_block_t *, int, int, double *, double) =
        init ? m->cpu->net_init : m->cpu->net_receive;
    if (!kernel) {
        for (int a = 1; init && a < m->n_weight; a++) w[a] = 0.0;
        return;
    }
    hb_ion_block_t ions[HB_CAT_MAX_ION];
    hb_cat_block_t blk;
    hb_cat_point_view(g, cm, slot, t, dt, nc, fault, ions, &blk);
    kernel(&blk, inst, 0, w, t);
}

/* hb_cat_point_event's NET_RECEIVE for a mechanism that sends itself events
 * (cpu->net_receive_self): an event of flag `flag` (0: a connection's), its net_send and
 * net_move requests counted into *out (common/self_events.h queues them), a FROM loop's
 * refusal into *fault; nc the target's connections for FOR_NETCONS, on self-events too. */
static inline void hb_cat_point_event_self(const hb_step_group_t *g, int q, int slot, int inst,
                                           double *w, double t, double dt, double flag,
                                           const hb_cat_netcons_t *nc, hb_cat_sends_t *out,
                                           hb_cat_fault_t *fault)
{
    const hb_step_cat_mech_t *cm = &g->cat->mech[q];
    hb_ion_block_t ions[HB_CAT_MAX_ION];
    hb_cat_block_t blk;
    hb_cat_point_view(g, cm, slot, t, dt, nc, fault, ions, &blk);
    cm->mech->cpu->net_receive_self(&blk, inst, 0, w, t, flag, out);
}

/* An event of flag `flag` at instance `inst`: NET_RECEIVE's self-sending kernel where the
 * mechanism has one (its requests into *out), else the plain one (flag 0, *out untouched). */
static inline void hb_cat_point_receive(const hb_step_group_t *g, int q, int slot, int inst,
                                        double *w, double t, double dt, double flag,
                                        const hb_cat_netcons_t *nc, hb_cat_sends_t *out,
                                        hb_cat_fault_t *fault)
{
    if (g->cat->mech[q].mech->cpu->net_receive_self)
        hb_cat_point_event_self(g, q, slot, inst, w, t, dt, flag, nc, out, fault);
    else
        hb_cat_point_event(g, q, slot, inst, w, t, dt, 0, nc, fault);
}

/* The weight vector an event brings to instance `inst`: vector `index` of `all` (a
 * connection's, HB_CAT_MAX_WEIGHT doubles each), or for index -1 `own` as (weight, 0, ...):
 * with `init` a connection of its own, its NET_RECEIVE INITIAL run at t (a recipe's event,
 * hb_sim_deliver's), without it a self-event's vector (weight: that of the connectionless
 * event that sent it, 0 from INITIAL or WATCH, as NEURON passes none). */
static inline double *hb_cat_event_weights(const hb_step_group_t *g, int q, int slot, int inst,
                                           double *all, int index, double weight, int init,
                                           double own[HB_CAT_MAX_WEIGHT], double t, double dt,
                                           const hb_cat_netcons_t *nc, hb_cat_fault_t *fault)
{
    if (index >= 0) return all + (size_t)index * HB_CAT_MAX_WEIGHT;
    own[0] = weight;
    for (int a = 1; a < HB_CAT_MAX_WEIGHT; a++) own[a] = 0.0;
    if (init) hb_cat_point_event(g, q, slot, inst, own, t, dt, 1, nc, fault);
    return own;
}

/* The queue's first event, e (hb_self_due's), popped and delivered to its target, instance
 * `inst` of point process q in slot `slot`: NET_RECEIVE with e's flag and the weight vector it
 * carries (vector e->weights of `weights`, or one of its own), its requests queued. A FROM
 * loop's refusal goes to *fault (fault->line set, nothing queued): the caller names it. */
static inline hb_status_t hb_cat_self_deliver(hb_self_queue_t *queue, const hb_self_event_t *e,
                                              const hb_step_group_t *g, int q, int slot,
                                              int inst, double *weights,
                                              const hb_cat_netcons_t *nc, double dt,
                                              hb_cat_fault_t *fault)
{
    const hb_self_event_t se = *e; /* e may be the heap's first, which the pop overwrites */
    hb_self_pop(queue);
    hb_self_delivered(queue, &se);
    double own[HB_CAT_MAX_WEIGHT];
    double *w = hb_cat_event_weights(g, q, slot, inst, weights, se.weights, se.weight, 0, own,
                                     se.time, dt, nc, fault);
    hb_cat_sends_t sends;
    memset(&sends, 0, sizeof sends); /* not {0}: nvcc's host compiler, C++, warns of req */
    hb_cat_point_event_self(g, q, slot, inst, w, se.time, dt, se.flag, nc, &sends, fault);
    if (fault->line) return HB_SUCCESS;
    return hb_self_requests(queue, se.target, se.weights, se.weight, &sends, se.time, dt,
                            g->cat->mech[q].mech->name);
}

/* A network event of weight `weight` at time t [ms] reaching target `target`, instance `inst`
 * of point process q in slot `slot`: NET_RECEIVE (flag 0) with its connection's weight vector
 * (vector `index` of `weights`; -1: a recipe's event, a connection of its own initialised at
 * t), its net_send and net_move requests queued. A FROM loop's refusal goes to *fault
 * (fault->line set, nothing queued): the caller names it. */
static inline hb_status_t hb_cat_net_deliver(hb_self_queue_t *queue, int target,
                                             const hb_step_group_t *g, int q, int slot, int inst,
                                             double *weights, int index, double weight, double t,
                                             double dt, const hb_cat_netcons_t *nc,
                                             hb_cat_fault_t *fault)
{
    double own[HB_CAT_MAX_WEIGHT];
    double *w = hb_cat_event_weights(g, q, slot, inst, weights, index, weight, 1, own, t, dt, nc,
                                     fault);
    if (fault->line) return HB_SUCCESS;
    hb_cat_sends_t sends;
    memset(&sends, 0, sizeof sends); /* as hb_cat_self_deliver's */
    hb_cat_point_receive(g, q, slot, inst, w, t, dt, 0.0, nc, &sends, fault);
    if (fault->line || !sends.n) return HB_SUCCESS;
    return hb_self_requests(queue, target, index, weight, &sends, t, dt,
                            g->cat->mech[q].mech->name);
}

/* Its INITIAL of instance `inst` alone at t 0 (such a mechanism's INITIAL runs here, not in
 * hb_cat_init_block), the net_send requests into *out. */
static inline void hb_cat_point_init_self(const hb_step_group_t *g, int q, int slot, int inst,
                                          double dt, hb_cat_sends_t *out)
{
    const hb_step_cat_mech_t *cm = &g->cat->mech[q];
    hb_ion_block_t ions[HB_CAT_MAX_ION];
    hb_cat_block_t blk;
    hb_cat_point_view(g, cm, slot, 0.0, dt, NULL, NULL, ions, &blk);
    cm->mech->cpu->init_self(&blk, inst, 0, out);
}

/* Its WATCH conditions on instance `inst` after a step ending at t [ms], crossings into *out. */
static inline void hb_cat_point_watch(const hb_step_group_t *g, int q, int slot, int inst,
                                      double t, double dt, hb_cat_sends_t *out)
{
    const hb_step_cat_mech_t *cm = &g->cat->mech[q];
    hb_ion_block_t ions[HB_CAT_MAX_ION];
    hb_cat_block_t blk;
    hb_cat_point_view(g, cm, slot, t, dt, NULL, NULL, ions, &blk);
    cm->mech->cpu->watch(&blk, inst, 0, t, out);
}

/* Rows of the lanes' cells in block `block` (mixed: lane0's own). */
HB_HOSTDEV int hb_cat_rows(const hb_step_group_t *g, int block, int lane0)
{
    return g->mixed ? g->lane_m[block * g->width + lane0] : g->m;
}

/* Pass A's start for the ions at element e (NEURON's ion_cur): i and di/dv zeroed, e by Nernst
 * where a mechanism writes the concentration (HB_ION_EADVANCE). Elements are independent. */
HB_HOSTDEV void hb_cat_ions_element(const hb_step_cat_t *cat, size_t e)
{
    for (int s = 0; s < cat->n_ion; s++) {
        const hb_step_ion_t *ion = &cat->ion[s];
        ion->i[e] = 0.0;
        ion->didv[e] = 0.0;
        if (ion->style[e] & HB_ION_EADVANCE)
            ion->e[e] = hb_cat_nernst(cat->ktf, ion->ci[e], ion->co[e], ion->valence);
    }
}

/* The same on the lanes' rows. */
HB_HOSTDEV void hb_cat_ions_begin(const hb_step_group_t *g, int block, int lane0, int lanes)
{
    const size_t W = (size_t)g->width, base = hb_step_block_base(g, block) + (size_t)lane0;
    const int rows = hb_cat_rows(g, block, lane0);
    for (int r = 0; r < rows; r++)
        for (int k = 0; k < lanes; k++) hb_cat_ions_element(g->cat, base + (size_t)r * W + (size_t)k);
}

/* The view of mechanism cm's currents at p->t_mid (hb_cat_view's arguments): a species whose
 * i nothing reads has i and di/dv NULL, which tells the kernel to leave it out. */
static inline int hb_cat_current_view(const hb_step_group_t *g, const hb_step_cat_mech_t *cm,
                                      const hb_step_params_t *p, int block, int lane0, int lanes,
                                      double *d, double *rhs, hb_ion_block_t *ions,
                                      hb_cat_block_t *blk)
{
    const int n = hb_cat_view(g, cm, block, lane0, lanes, p->t_mid, p->dt, d, rhs, ions, blk);
    for (int u = 0; u < cm->mech->n_ion; u++)
        if (!g->cat->ion[cm->ion[u]].observed) ions[u].i = ions[u].didv = NULL;
    return n;
}

/* The view of mechanism cm's states, after the update of v: at t + dt, no d and rhs. */
static inline int hb_cat_state_view(const hb_step_group_t *g, const hb_step_cat_mech_t *cm,
                                    const hb_step_params_t *p, int block, int lane0, int lanes,
                                    hb_ion_block_t *ions, hb_cat_block_t *blk)
{
    return hb_cat_view(g, cm, block, lane0, lanes, p->t_mid + 0.5 * p->dt, p->dt, NULL, NULL,
                       ions, blk);
}

/* Pass A's mechanisms [q0, q1), after the ions' start (hb_cat_ions_begin, or the CPU engine's
 * block form of it): their currents into d and rhs (and their ions' i and di/dv where
 * observed), mechanisms in the group's order, instances in order. */
static inline void hb_cat_step_currents_range(const hb_step_group_t *g,
                                              const hb_step_params_t *p, int block, int lane0,
                                              int lanes, double *d, double *rhs, int q0, int q1)
{
    for (int q = q0; q < q1; q++) {
        const hb_step_cat_mech_t *cm = &g->cat->mech[q];
        if (!cm->mech->cpu->current) continue;
        hb_ion_block_t ions[HB_CAT_MAX_ION];
        hb_cat_block_t blk;
        const int n = hb_cat_current_view(g, cm, p, block, lane0, lanes, d, rhs, ions, &blk);
        if (n > 0) cm->mech->cpu->current(&blk, 0, n);
    }
}

/* Every mechanism's currents (hb_cat_step_currents_range). */
static inline void hb_cat_step_mech_currents(const hb_step_group_t *g, const hb_step_params_t *p,
                                             int block, int lane0, int lanes, double *d,
                                             double *rhs)
{
    hb_cat_step_currents_range(g, p, block, lane0, lanes, d, rhs, 0, g->cat->n_mech);
}

/* Pass A, after pas, hh, stimuli and synapses: the ions' start, then the mechanisms' currents. */
static inline void hb_cat_step_current(const hb_step_group_t *g, const hb_step_params_t *p,
                                       int block, int lane0, int lanes, double *d, double *rhs)
{
    hb_cat_ions_begin(g, block, lane0, lanes);
    hb_cat_step_mech_currents(g, p, block, lane0, lanes, d, rhs);
}

/* Crank-Nicolson, after the solve and before the update of v (NEURON's second_order_cur with
 * secondorder 2): each species' current moved from v(t) to v(t + dt/2), i += di/dv dv with dv
 * the solve's (rhs, row stride width, from lane0), so that a concentration mechanism's state
 * reads the current of the half step. The matrix took the currents at v(t) as before. Each
 * element takes one product and one sum of its own: any order of elements (the GPU's tree step
 * spreads the rows over a warp, hb_cat_second_order_element) gives the same bits. */
HB_HOSTDEV void hb_cat_second_order(const hb_step_group_t *g, int block, int lane0, int lanes,
                                    const double *rhs)
{
    const hb_step_cat_t *cat = g->cat;
    const size_t W = (size_t)g->width, base = hb_step_block_base(g, block) + (size_t)lane0;
    const int rows = hb_cat_rows(g, block, lane0);
    for (int s = 0; s < cat->n_ion; s++) {
        const hb_step_ion_t *ion = &cat->ion[s];
        for (int r = 0; r < rows; r++)
            for (int k = 0; k < lanes; k++) {
                const size_t e = base + (size_t)r * W + (size_t)k;
                ion->i[e] += ion->didv[e] * rhs[(size_t)r * W + (size_t)k];
            }
    }
}

/* The same at element e alone, dv its solve's. */
HB_HOSTDEV void hb_cat_second_order_element(const hb_step_cat_t *cat, size_t e, double dv)
{
    for (int s = 0; s < cat->n_ion; s++) {
        const hb_step_ion_t *ion = &cat->ion[s];
        ion->i[e] += ion->didv[e] * dv;
    }
}

/* After the update of v: mechanisms [q0, q1)'s states (SOLVE) at the new v, at t + dt. A
 * concentration mechanism reads the step's total ion current here. */
static inline void hb_cat_step_states_range(const hb_step_group_t *g,
                                            const hb_step_params_t *p, int block, int lane0,
                                            int lanes, int q0, int q1)
{
    for (int q = q0; q < q1; q++) {
        const hb_step_cat_mech_t *cm = &g->cat->mech[q];
        if (!cm->mech->cpu->state) continue;
        hb_ion_block_t ions[HB_CAT_MAX_ION];
        hb_cat_block_t blk;
        const int n = hb_cat_state_view(g, cm, p, block, lane0, lanes, ions, &blk);
        if (n > 0) cm->mech->cpu->state(&blk, 0, n);
    }
}

/* Every mechanism's states (hb_cat_step_states_range). */
static inline void hb_cat_step_state(const hb_step_group_t *g, const hb_step_params_t *p,
                                     int block, int lane0, int lanes)
{
    hb_cat_step_states_range(g, p, block, lane0, lanes, 0, g->cat->n_mech);
}

/* hb_sim_init after v is set: the ions' values (e by Nernst where HB_ION_EINIT), then every
 * mechanism's INITIAL, on every lane of block `block` (mixed: lane by lane). */
static inline void hb_cat_init_block(const hb_step_group_t *g, int block, double dt)
{
    const hb_step_cat_t *cat = g->cat;
    const int W = g->width, per_lane = g->mixed;
    for (int lane0 = 0; lane0 < W; lane0 += per_lane ? 1 : W) {
        const int lanes = per_lane ? 1 : W;
        const size_t base = hb_step_block_base(g, block) + (size_t)lane0;
        const int rows = hb_cat_rows(g, block, lane0);
        for (int s = 0; s < cat->n_ion; s++) {
            const hb_step_ion_t *ion = &cat->ion[s];
            for (int r = 0; r < rows; r++)
                for (int k = 0; k < lanes; k++) {
                    const size_t e = base + (size_t)r * (size_t)W + (size_t)k;
                    ion->ci[e] = ion->ci0[e];
                    ion->co[e] = ion->co0[e];
                    ion->e[e] = ion->style[e] & HB_ION_EINIT
                                    ? hb_cat_nernst(cat->ktf, ion->ci[e], ion->co[e], ion->valence)
                                    : ion->e0[e];
                    ion->i[e] = ion->didv[e] = 0.0;
                }
        }
        for (int q = 0; q < cat->n_mech; q++) {
            const hb_step_cat_mech_t *cm = &cat->mech[q];
            const hb_cat_mech_t *m = cm->mech;
            hb_ion_block_t ions[HB_CAT_MAX_ION];
            hb_cat_block_t blk;
            const int n = hb_cat_view(g, cm, block, lane0, lanes, 0.0, dt, NULL, NULL, ions, &blk);
            for (int j = 0; j < n; j++) /* every STATE at its default first, as nocmodl's x = x0 */
                for (int s = 0; s < m->n_state; s++)
                    for (int k = 0; k < lanes; k++)
                        blk.field[((size_t)j * (size_t)m->n_field + (size_t)(m->n_param + s)) *
                                      (size_t)W + (size_t)k] = m->state[s].value;
            if (n > 0 && m->cpu->init && !m->cpu->init_self) m->cpu->init(&blk, 0, n);
        }
    }
}

#endif
