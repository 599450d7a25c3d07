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

/* hb_cat_step_current's calls by index: lanes lane0 .. lane0 + lanes - 1 of a block. */
HB_HOSTDEV void hb_cat_fused_current(const hb_step_group_t *g, const hb_step_params_t *p,
                                     int block, int lane0, int lanes, double *d, double *rhs)
{
    const hb_step_cat_t *cat = g->cat;
    hb_cat_ions_begin(g, block, lane0, lanes);
    for (int q = 0; q < cat->n_mech; q++) {
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        hb_ion_block_t ions[HB_CAT_MAX_ION];
        hb_cat_block_t blk;
        const int n = hb_cat_view(g, cm, block, lane0, lanes, p->t_mid, p->dt, d, rhs, ions, &blk);
        if (n > 0) hb_cat_dispatch(cm->builtin, cm->index, HB_CAT_CURRENT, &blk, 0, n);
    }
}

/* hb_cat_step_state's calls by index. */
HB_HOSTDEV void hb_cat_fused_state(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                                   int lane0, int lanes)
{
    const hb_step_cat_t *cat = g->cat;
    for (int q = 0; q < cat->n_mech; q++) {
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        hb_ion_block_t ions[HB_CAT_MAX_ION];
        hb_cat_block_t blk;
        const int n = hb_cat_view(g, cm, block, lane0, lanes, p->t_mid + 0.5 * p->dt, p->dt, NULL,
                                  NULL, ions, &blk);
        if (n > 0) hb_cat_dispatch(cm->builtin, cm->index, HB_CAT_STATE, &blk, 0, n);
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

/* Assembly, after the inputs: kernel `kernel` (HB_CAT_CURRENT, with the cell's d and rhs, or
 * HB_CAT_STATE, after the update of v) of instance j of mechanism q in the cell of slot `slot`.
 * A mechanism's instances lie on distinct rows, so they run in any order; mechanism q + 1 only
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
