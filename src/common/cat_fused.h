/*
 * Catalogue mechanisms in the GPU's fused step (docs/mechanisms.md section 9, docs/sim-engine.md
 * section 3): the calls of common/cat_step.h with each kernel reached by its built-in
 * catalogue's number and index through the generated dispatch headers (hbg_<cat>_dispatch.h:
 * no function pointers on the device), for one lane of a group of one shape (step_cat_kernel)
 * and per instance of a cell of a mixed group (tree_step_kernel's phases). HB_HOSTDEV: the
 * host runs the same calls in the CPU twins (tests/test_sim_mixed.c). Every row receives the
 * mechanisms' terms in the CPU engine's order (mechanisms in the group's order; one instance of
 * a mechanism a row), so the sums are the CPU's bits.
 *
 * The includer may define HB_CAT_DISPATCH_QUAL (the dispatch function's qualifiers: the CUDA
 * step keeps it out of line, one copy for every kernel, instead of HB_HOSTDEV's inlining).
 */
#ifndef HB_COMMON_CAT_FUSED_H
#define HB_COMMON_CAT_FUSED_H

#include "common/cat_step.h"
#include "common/sim_tree.h"
#include "hbg_allen_dispatch.h"
#include "hbg_bbp_dispatch.h"
#include "hbg_default_dispatch.h"

#ifndef HB_CAT_DISPATCH_QUAL
#define HB_CAT_DISPATCH_QUAL HB_HOSTDEV
#endif

enum { HB_CAT_INIT = 0, HB_CAT_CURRENT = 1, HB_CAT_STATE = 2 }; /* a kernel of hb_cat_cpu_t */

/* Kernel `kernel` of mechanism `index` of built-in catalogue `builtin` (hb_catalogue_builtin's
 * numbers: default, bbp, allen) over instances [j0, j1) of blk; nothing for another number. */
HB_CAT_DISPATCH_QUAL void hb_cat_dispatch(int builtin, int index, int kernel,
                                          const hb_cat_block_t *blk, int j0, int j1)
{
    switch (builtin * 3 + kernel) {
    case 0: hbg_default_init(index, blk, j0, j1); return;
    case 1: hbg_default_current(index, blk, j0, j1); return;
    case 2: hbg_default_state(index, blk, j0, j1); return;
    case 3: hbg_bbp_init(index, blk, j0, j1); return;
    case 4: hbg_bbp_current(index, blk, j0, j1); return;
    case 5: hbg_bbp_state(index, blk, j0, j1); return;
    case 6: hbg_allen_init(index, blk, j0, j1); return;
    case 7: hbg_allen_current(index, blk, j0, j1); return;
    case 8: hbg_allen_state(index, blk, j0, j1); return;
    default: return;
    }
}

/* NET_RECEIVE (init 0) or its INITIAL (init 1) of mechanism `index` of built-in catalogue
 * `builtin` on instance j of lane k of blk: 1, or 0 where it has none. */
HB_HOSTDEV int hb_cat_dispatch_event(int builtin, int index, const hb_cat_block_t *blk, int j,
                                     int k, double *w, double t, int init)
{
    switch (builtin) {
    case 0: return hbg_default_net_receive(index, blk, j, k, w, t, init);
    case 1: return hbg_bbp_net_receive(index, blk, j, k, w, t, init);
    case 2: return hbg_allen_net_receive(index, blk, j, k, w, t, init);
    default: return 0;
    }
}

/* common/cat_step.h's hb_cat_point_event by index (the GPU's event delivery): one event (init
 * 0) or a connection's initialisation (init 1, without a NET_RECEIVE INITIAL w[1 ..] zeroed)
 * at instance `inst` of point process q of the group in slot `slot`, weight vector w. */
HB_HOSTDEV void hb_cat_fused_point_event(const hb_step_group_t *g, int q, int slot, int inst,
                                         double *w, double t, double dt, int init)
{
    const hb_step_cat_mech_t *cm = &g->cat->mech[q];
    hb_ion_block_t ions[HB_CAT_MAX_ION];
    hb_cat_block_t blk;
    hb_cat_view(g, cm, slot / g->width, slot % g->width, 1, t, dt, NULL, NULL, ions, &blk);
    if (!hb_cat_dispatch_event(cm->builtin, cm->index, &blk, inst, 0, w, t, init) && init)
        for (int a = 1; a < cm->mech->n_weight; a++) w[a] = 0.0;
}

/* hb_cat_step_current's calls by index for mechanisms [q0, q1): lanes lane0 .. lane0 + lanes - 1
 * of a block (the ions' start not included: hb_cat_ions_begin). */
HB_HOSTDEV void hb_cat_fused_current_range(const hb_step_group_t *g, const hb_step_params_t *p,
                                           int block, int lane0, int lanes, double *d,
                                           double *rhs, int q0, int q1)
{
    const hb_step_cat_t *cat = g->cat;
    for (int q = q0; q < q1; q++) {
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        hb_ion_block_t ions[HB_CAT_MAX_ION];
        hb_cat_block_t blk;
        const int n = hb_cat_view(g, cm, block, lane0, lanes, p->t_mid, p->dt, d, rhs, ions, &blk);
        if (n > 0) hb_cat_dispatch(cm->builtin, cm->index, HB_CAT_CURRENT, &blk, 0, n);
    }
}

/* hb_cat_step_current's calls by index: the ions' start, then every mechanism's currents. */
HB_HOSTDEV void hb_cat_fused_current(const hb_step_group_t *g, const hb_step_params_t *p,
                                     int block, int lane0, int lanes, double *d, double *rhs)
{
    hb_cat_ions_begin(g, block, lane0, lanes);
    hb_cat_fused_current_range(g, p, block, lane0, lanes, d, rhs, 0, g->cat->n_mech);
}

/* hb_cat_step_state's calls by index for mechanisms [q0, q1). */
HB_HOSTDEV void hb_cat_fused_state_range(const hb_step_group_t *g, const hb_step_params_t *p,
                                         int block, int lane0, int lanes, int q0, int q1)
{
    const hb_step_cat_t *cat = g->cat;
    for (int q = q0; q < q1; q++) {
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        hb_ion_block_t ions[HB_CAT_MAX_ION];
        hb_cat_block_t blk;
        const int n = hb_cat_view(g, cm, block, lane0, lanes, p->t_mid + 0.5 * p->dt, p->dt, NULL,
                                  NULL, ions, &blk);
        if (n > 0) hb_cat_dispatch(cm->builtin, cm->index, HB_CAT_STATE, &blk, 0, n);
    }
}

/* hb_cat_step_state's calls by index. */
HB_HOSTDEV void hb_cat_fused_state(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                                   int lane0, int lanes)
{
    hb_cat_fused_state_range(g, p, block, lane0, lanes, 0, g->cat->n_mech);
}

/* The split step (docs/mechanisms.md, section 6). A user catalogue's CUDA kernels cannot be
 * called from the fused kernels, so a group with such mechanisms steps as a sequence of items,
 * the CPU engine's order: item 0 the membrane (pas, hh, stimuli, synapses) and the ions' start;
 * 1 + q mechanism q's currents; n + 1 the axial terms, the solve (with Crank-Nicolson the ions'
 * half-step correction) and the update of v (hh's gates, the synapses' decay); n + 2 + q
 * mechanism q's states (n mechanisms, in name order; point processes too). The fused
 * kernels run maximal ranges of items without a user's mechanism, and each user item is a kernel
 * of its own between them on the same stream: every row still receives pas, then the
 * mechanisms' terms in name order, whatever catalogue each comes from, so the bits are the
 * CPU's. A group without user mechanisms is one range: the fused step as before. */
HB_HOSTDEV int hb_cat_items(const hb_step_cat_t *cat)
{
    return 2 * cat->n_mech + 2;
}

/* The mechanism of item `item` and its kernel (HB_CAT_CURRENT or HB_CAT_STATE); -1: none. */
HB_HOSTDEV int hb_cat_item_mech(const hb_step_cat_t *cat, int item, int *kernel)
{
    const int n = cat->n_mech;
    if (item >= 1 && item <= n) {
        *kernel = HB_CAT_CURRENT;
        return item - 1;
    }
    if (item >= n + 2 && item < 2 * n + 2) {
        *kernel = HB_CAT_STATE;
        return item - n - 2;
    }
    *kernel = -1;
    return -1;
}

/* The end of the fused range that starts at item `from`: the first user mechanism's item at or
 * after it, or hb_cat_items. */
HB_HOSTDEV int hb_cat_fused_end(const hb_step_cat_t *cat, int from)
{
    const int items = hb_cat_items(cat);
    for (int item = from; item < items; item++) {
        int kernel;
        const int q = hb_cat_item_mech(cat, item, &kernel);
        if (q >= 0 && cat->mech[q].builtin < 0) return item;
    }
    return items;
}

/* The mechanisms [*q0, *q1) whose `kernel` items lie in [from, to). */
HB_HOSTDEV void hb_cat_item_range(const hb_step_cat_t *cat, int from, int to, int kernel, int *q0,
                                  int *q1)
{
    const int n = cat->n_mech, first = kernel == HB_CAT_CURRENT ? 1 : n + 2;
    const int a = from > first ? from : first, b = to < first + n ? to : first + n;
    *q0 = a - first;
    *q1 = b > a ? b - first : a - first;
}

/* Items [from, to) of a group of one shape for lane `lane` of block `block` (step_cat_kernel, a
 * thread a lane; W the group's width, shared its g->shared): the fused step is [0, items). */
HB_HOSTDEV void hb_cat_lane_items(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                                  int lane, int W, int shared, int from, int to)
{
    const size_t base = hb_step_block_base(g, block) + (size_t)lane;
    double *d = g->d + base, *rhs = g->rhs + base;
    const int n = g->cat->n_mech;
    int q0, q1;
    if (from == 0) {
        hb_step_lanes_membrane(g, p, block, lane, 1, W, shared, d, rhs);
        hb_cat_ions_begin(g, block, lane, 1);
    }
    hb_cat_item_range(g->cat, from, to, HB_CAT_CURRENT, &q0, &q1);
    if (q0 < q1) hb_cat_fused_current_range(g, p, block, lane, 1, d, rhs, q0, q1);
    if (from <= n + 1 && n + 1 < to) {
        hb_step_lanes_axial(g, block, lane, 1, W, shared, d, rhs);
        hb_step_lanes_solve(g, block, lane, 1, W, shared, d, rhs);
        if (g->cat->second_order) hb_cat_second_order(g, block, lane, 1, rhs); /* rhs: dv */
        hb_step_lanes_update(g, p, block, lane, 1, W, rhs);
    }
    hb_cat_item_range(g->cat, from, to, HB_CAT_STATE, &q0, &q1);
    if (q0 < q1) hb_cat_fused_state_range(g, p, block, lane, 1, q0, q1);
}

/* Slot `slot`'s view of mechanism q for a user's CUDA kernels (hb_cat_lane_t, lanes 1: what
 * hb_cat_view gives the fused step's thread for the slot, with d and rhs the group's): on the
 * device's pointers where g's data pointers are the device's (the engine builds them on the host
 * with the host's indices). A mixed group's slots past its cells: no instances. */
HB_HOSTDEV void hb_cat_lane_view(const hb_step_group_t *g, int q, int slot, hb_cat_lane_t *out)
{
    const int w = g->width, block = slot / w, lane = slot % w;
    const hb_step_cat_mech_t *cm = &g->cat->mech[q];
    hb_ion_block_t ions[HB_CAT_MAX_ION];
    const size_t base = hb_step_block_base(g, block) + (size_t)lane;
    int n = 0;
    if (!g->mixed || slot < g->count)
        n = hb_cat_view(g, cm, block, lane, 1, 0.0, 0.0, g->d + base, g->rhs + base, ions,
                        &out->blk);
    out->blk.ion = NULL;
    for (int x = 0; x < HB_CAT_LANE_ION; x++) {
        const hb_ion_block_t none = {NULL, NULL, NULL, NULL, NULL};
        out->ion[x] = n > 0 && x < cm->mech->n_ion ? ions[x] : none;
    }
    out->n_inst = n;
}

/* What a user's generated CUDA wrapper does for one lane (hbg_<cat>_cuda.cu), with the
 * mechanism's CPU kernel: the split step's host twin (tests/test_sim_mixed.c). */
static inline void hb_cat_lane_run_cpu(const hb_cat_lane_t *lane, const hb_cat_mech_t *m,
                                       int kernel, double t, double dt)
{
    if (lane->n_inst <= 0) return;
    hb_cat_block_t blk = lane->blk;
    blk.ion = (hb_ion_block_t *)lane->ion;
    blk.t = t;
    blk.dt = dt;
    if (kernel != HB_CAT_CURRENT) blk.d = blk.rhs = NULL;
    void (*run)(const hb_cat_block_t *, int, int) = kernel == HB_CAT_CURRENT ? m->cpu->current
                                                    : kernel == HB_CAT_STATE ? m->cpu->state
                                                                             : m->cpu->init;
    if (run) run(&blk, 0, lane->n_inst);
}

/* What a user's generated NET_RECEIVE wrapper does for position p of a step's events
 * (hbg_<cat>_cuda.cu; common/mech_abi.h's hb_cat_run_t), with the mechanism's CPU kernels: the
 * event delivery's host twin (tests/test_sim_mixed.c). */
static inline void hb_cat_run_cpu(const hb_cat_run_t *run, const hb_cat_event_t *ev, int p,
                                  int key, const hb_cat_mech_t *m, double dt)
{
    if (run[p].n <= 0 || run[p].key != key || !m->cpu->net_receive) return;
    const hb_cat_lane_t *lane = run[p].lane;
    hb_cat_block_t blk = lane->blk;
    blk.ion = (hb_ion_block_t *)lane->ion;
    blk.dt = dt;
    blk.d = blk.rhs = NULL;
    for (int e = p; e < p + run[p].n; e++) {
        double own[HB_CAT_MAX_WEIGHT] = {ev[e].weight};
        double *w = ev[e].w ? ev[e].w : own;
        blk.t = ev[e].t;
        if (!ev[e].w && m->cpu->net_init) m->cpu->net_init(&blk, run[p].inst, 0, w, ev[e].t);
        m->cpu->net_receive(&blk, run[p].inst, 0, w, ev[e].t);
    }
}

/* The tree step (common/sim_tree.h), assembly: the ions' start at row i of the cell (any row
 * order; before every mechanism's currents). */
HB_HOSTDEV void hb_tree_cat_ions(const hb_step_group_t *g, hb_tree_cell_t c, int i)
{
    hb_cat_ions_element(g->cat, c.base + (size_t)i * c.w);
}

/* Crank-Nicolson, after every row's substitution (hb_tree_substitute with keep_dv 1: rhs holds
 * each row's dv) and before the states: the ions' half-step correction at row i of the cell
 * (any row order). */
HB_HOSTDEV void hb_tree_cat_second_order(const hb_step_group_t *g, hb_tree_cell_t c, int i,
                                         const double *rhs)
{
    hb_cat_second_order_element(g->cat, c.base + (size_t)i * c.w, rhs[(size_t)i * c.w]);
}

/* Instances of mechanism q in the cell of slot `slot`. */
HB_HOSTDEV int hb_tree_cat_count(const hb_step_group_t *g, int q, int slot)
{
    return g->cat->mech[q].lane_inst[slot];
}

/* 1: mechanism q's currents one instance after another, in order (a point process: two
 * instances may share a row, whose sum takes them in the CPU's order); 0: in any order. */
HB_HOSTDEV int hb_tree_cat_serial(const hb_step_group_t *g, int q)
{
    return g->cat->mech[q].mech->kind != HB_CAT_DENSITY;
}

/* Assembly, after the inputs: kernel `kernel` (HB_CAT_CURRENT, with the cell's d and rhs, or
 * HB_CAT_STATE, after the update of v) of instance j of mechanism q in the cell of slot `slot`.
 * A density mechanism's instances lie on distinct rows, so they run in any order (a point
 * process's currents in order: hb_tree_cat_serial); mechanism q + 1 only
 * after all of q's (the rows' sums in the CPU's order, and a concentration written in q's state
 * read by q + 1's: CaDynamics_E2's cai by SK_E2). */
HB_HOSTDEV void hb_tree_cat_kernel(const hb_step_group_t *g, const hb_step_params_t *p, int q,
                                   int slot, int j, int kernel, double *d, double *rhs)
{
    const hb_step_cat_mech_t *cm = &g->cat->mech[q];
    const int w = g->width;
    hb_ion_block_t ions[HB_CAT_MAX_ION];
    hb_cat_block_t blk;
    const double t = kernel == HB_CAT_CURRENT ? p->t_mid : p->t_mid + 0.5 * p->dt;
    hb_cat_view(g, cm, slot / w, slot % w, 1, t, p->dt, d, rhs, ions, &blk);
    hb_cat_dispatch(cm->builtin, cm->index, kernel, &blk, j, j + 1);
}

#endif
