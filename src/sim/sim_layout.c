/*
 * The simulator's layout: cells with the same matrix shape and the same hh nodes form a
 * group, stored Block-Interleaved in blocks of the backend's width (hb_sim_ops.block_width:
 * HB_SIM_CPU_LANES or fewer on the CPU, a warp on the GPU); the constants of copies of one
 * model are kept once per node, and the fixed rows of such groups factored once. The cells
 * that would each be a group of one form one mixed group (hb_sim_ops.mixed_width lanes a
 * block, docs/layouts.md), their fixed rows factored per lane. Host arrays, which the CPU
 * engine steps in place and the CUDA engine copies.
 *
 * factor_fixed_rows runs the step's own row functions (common/sim_step.h): compiled with the
 * CPU step's flags (CMakeLists.txt), so its factors are the bits the step would compute.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "sim/sim_cat.h"
#include "sim/sim_engine.h"

/* Same matrix shape and the same hh nodes: one group. */
static int same_group(const hb_model_t *a, const hb_model_t *b)
{
    if (a == b) return 1;
    const int m = hb_cable_size(a->cable);
    return hb_cable_size(b->cable) == m &&
           memcmp(hb_cable_parent(a->cable), hb_cable_parent(b->cable), (size_t)m * sizeof(int)) == 0 &&
           memcmp(a->has_hh, b->has_hh, (size_t)m) == 0 && hb_sim_cat_same(a, b);
}

#define ALLOC(ptr, n) (((ptr) = calloc((size_t)(n) + 1, sizeof *(ptr))) != NULL)

/* The shape's hash: rows, parents and hh nodes (same_group's), mixed word by word. */
static uint64_t shape_hash(const hb_model_t *md)
{
    const int m = hb_cable_size(md->cable);
    const int *parent = hb_cable_parent(md->cable);
    uint64_t h = 0x9e3779b97f4a7c15u ^ (uint64_t)m;
    for (int i = 0; i < m; i++) {
        h ^= (uint64_t)(uint32_t)parent[i] << 1 | md->has_hh[i];
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    return md->n_cat || md->n_points ? hb_sim_cat_hash(md, h) : h;
}

/* A copy of the cell before it (the same model): surveyed once. */
static int repeats(const hb_sim_t *sim, int c)
{
    return sim->cells && c > 0 && sim->cells[c] == sim->cells[c - 1];
}

static hb_status_t survey_cell(void *ctx, int c)
{
    hb_sim_t *sim = ctx;
    if (repeats(sim, c)) return HB_SUCCESS; /* copied after */
    const hb_model_t *md = hb_sim_cell_get(sim, c);
    if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error()) /* the source names the cell */;
    hb_sim_cell_info_t *in = &sim->info[c];
    in->m = hb_cable_size(md->cable);
    in->n_hh = 0;
    for (int i = 0; i < in->m; i++) in->n_hh += md->has_hh[i];
    in->n_probes = md->n_probes;
    in->n_synapses = md->n_synapses;
    in->n_iclamps = md->n_iclamps;
    in->n_cat = md->n_cat + md->n_points;
    in->n_hand = md->n_synapses - md->n_points;
    in->spike_source = md->spike_source;
    in->n_sites = 0;
    for (int a = 0; a < md->n_iclamps; a++) { /* distinct nodes, as fill_cell groups them */
        int seen = 0;
        for (int b = 0; b < a; b++) seen |= md->iclamps[b].node == md->iclamps[a].node;
        in->n_sites += !seen;
    }
    in->shape = shape_hash(md);
    hb_sim_cell_put(sim, c, md);
    return HB_SUCCESS;
}

hb_status_t hb_sim_survey(hb_sim_t *sim)
{
    const hb_status_t status = hb_sim_for_each(sim, sim->n_cells, "cells surveyed", survey_cell,
                                               sim);
    for (int c = 1; c < sim->n_cells && status == HB_SUCCESS; c++)
        if (repeats(sim, c)) sim->info[c] = sim->info[c - 1];
    return status;
}

/* n values of every real slot (stride `row` between nodes, lanes of `W`, blocks
 * of `block` values) bitwise equal to slot 0's: then they move to the front,
 * n values, one per node (the array keeps its allocation). */
static int same_bits(const double *a, const double *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

static int uniform(const double *x, int n, int count, int W, size_t block)
{
    for (int s = 1; s < count; s++) {
        const double *y = x + (size_t)(s / W) * block + (size_t)(s % W);
        for (int i = 0; i < n; i++)
            if (!same_bits(&x[(size_t)i * (size_t)W], &y[(size_t)i * (size_t)W])) return 0;
    }
    return 1;
}

static void compact(double *x, int n, int W)
{
    for (int i = 0; i < n; i++) x[i] = x[(size_t)i * (size_t)W]; /* i <= i W: no overlap issue */
}

/* Copies of one model (every constant the same bits in every cell): keep the
 * constants once per node, so that a step streams only the state. */
static void share_constants(group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    const int W = k->width, m = k->m, n = k->n_hh * HB_HH_NPAR;
    const size_t block = (size_t)m * (size_t)W, hh_block = (size_t)n * (size_t)W;
    k->shared = uniform(gr->u, m, k->count, W, block) && uniform(gr->l, m, k->count, W, block) &&
                uniform(gr->cfac, m, k->count, W, block) &&
                uniform(gr->pas_g, m, k->count, W, block) &&
                uniform(gr->pas_e, m, k->count, W, block) &&
                uniform(gr->hh_par, n, k->count, W, hh_block);
    if (!k->shared) return;
    compact(gr->u, m, W);
    compact(gr->l, m, W);
    compact(gr->cfac, m, W);
    compact(gr->pas_g, m, W);
    compact(gr->pas_e, m, W);
    compact(gr->hh_par, n, W);
}

/* The rows of a cell (one lane, contiguous: m each) whose subtree has no hh node and no
 * synapse (fixed: 1 for them, from the hh and synapse rows marked 0), and their factors, from
 * the step's own row functions (v = 0: only d matters), eliminated as
 * hb_hines_recip_eliminate_row does. */
static hb_status_t factor_rows(int m, const int *parent, const double *u, const double *l,
                               const double *cfac, const double *pas_g, const double *pas_e,
                               unsigned char *fixed, double *fr, double *fc, double *ff)
{
    double *d = malloc((size_t)m * sizeof *d), *rhs = malloc((size_t)m * sizeof *rhs);
    double *v0 = calloc((size_t)m, sizeof *v0);
    if (!d || !rhs || !v0) {
        free(d);
        free(rhs);
        free(v0);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    for (int i = m - 1; i > 0; i--)
        if (!fixed[i]) fixed[parent[i]] = 0;
    for (int i = 0; i < m; i++)
        hb_step_pas_row(1, 0, v0 + i, pas_g + i, pas_e + i, d + i, rhs + i);
    hb_step_root_row(1, 0, cfac, d, rhs);
    for (int i = 1; i < m; i++) {
        const int p = parent[i];
        hb_step_axial_row(1, 0, cfac + i, u + i, l + i, v0 + i, v0 + p, d + i, rhs + i, d + p,
                          rhs + p);
    }
    hb_step_factor_fixed(m, parent, u, l, fixed, d, fr, fc, ff);
    free(d);
    free(rhs);
    free(v0);
    return HB_SUCCESS;
}

/*
 * Shared groups: the factors of the rows whose subtree has no hh node (factor_rows). The step
 * then skips their divisions and gets the same bits (tests/test_sim_engine.c compares the step
 * with a per-cell reference; tests/gpu/test_gpu_sim.c with the GPU, which factors every row).
 */
static hb_status_t factor_fixed_rows(group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    const int m = k->m;
    if (!k->shared) return HB_SUCCESS;
    unsigned char *fixed = malloc((size_t)m);
    double *f = malloc(3 * (size_t)m * sizeof *f);
    if (!fixed || !f) {
        free(fixed);
        free(f);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    memset(fixed, 1, (size_t)m);
    for (int j = 0; j < k->n_hh; j++) fixed[k->hh_node[j]] = 0;
    /* a synapse's conductance changes the row every step, in any lane */
    if (k->syn_start)
        for (int q = 0; q < k->syn_start[(size_t)k->blocks * (size_t)k->width]; q++)
            fixed[k->syns[q].node] = 0;
    hb_sim_cat_rows(gr->cat, k, 0, fixed); /* the same rows on every lane */
    double *fr = f, *fc = f + m, *ff = f + 2 * (size_t)m;
    hb_status_t status = factor_rows(m, k->parent, k->u, k->l, k->cfac, k->pas_g, k->pas_e,
                                     fixed, fr, fc, ff);
    if (status != HB_SUCCESS) {
        free(fixed);
        free(f);
        return status;
    }
    gr->fixed_row = fixed;
    gr->fixed = f;
    k->fixed_row = fixed;
    k->fixed_r = fr;
    k->fixed_c = fc;
    k->fixed_f = ff;
    return HB_SUCCESS;
}

/* Mixed groups: each lane's fixed rows and factors (factor_rows on the lane's constants), kept
 * per element in the layout, lanes on the build's threads. */
typedef struct {
    group_t *gr;
    unsigned char *fixed;
    double *f;
} factor_job_t;

static hb_status_t factor_lane(void *ctx, int s)
{
    const factor_job_t *job = ctx;
    group_t *gr = job->gr;
    hb_step_group_t *k = &gr->k;
    const size_t W = (size_t)k->width;
    const int m = k->lane_m[s];
    unsigned char *fx = malloc((size_t)m + 1);
    double *buf = malloc((8 * (size_t)m + 1) * sizeof *buf);
    int *par = malloc(((size_t)m + 1) * sizeof *par);
    hb_status_t status = HB_SUCCESS;
    if (!fx || !buf || !par) status = hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    double *u = buf, *l = buf + m, *cfac = buf + 2 * (size_t)m, *pg = buf + 3 * (size_t)m;
    double *pe = buf + 4 * (size_t)m, *fr = buf + 5 * (size_t)m, *fc = buf + 6 * (size_t)m;
    double *ff = buf + 7 * (size_t)m;
    if (status == HB_SUCCESS) {
        const size_t base = hb_step_element(k, s, 0), hh0 = gr->hh_start[s / (int)W];
        for (int i = 0; i < m; i++) {
            const size_t e = base + (size_t)i * W;
            par[i] = gr->parent[e];
            u[i] = gr->u[e];
            l[i] = gr->l[e];
            cfac[i] = gr->cfac[e];
            pg[i] = gr->pas_g[e];
            pe[i] = gr->pas_e[e];
        }
        memset(fx, 1, (size_t)m);
        for (int j = 0; j < k->lane_hh[s]; j++)
            fx[gr->hh_node[(hh0 + (size_t)j) * W + (size_t)s % W]] = 0;
        if (k->syn_start)
            for (int q = k->syn_start[s]; q < k->syn_start[s + 1]; q++) fx[k->syns[q].node] = 0;
        hb_sim_cat_rows(gr->cat, k, s, fx);
        status = factor_rows(m, par, u, l, cfac, pg, pe, fx, fr, fc, ff);
        for (int i = 0; i < m && status == HB_SUCCESS; i++) {
            const size_t e = base + (size_t)i * W;
            job->fixed[e] = fx[i];
            job->f[e] = fr[i];
        }
    }
    free(fx);
    free(buf);
    free(par);
    return status;
}

static hb_status_t factor_mixed_rows(const hb_sim_t *sim, group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    const size_t size = gr->block_start[k->blocks];
    unsigned char *fixed = calloc(size + 1, 1);
    double *f = calloc(size + 1, sizeof *f);
    hb_status_t status = HB_SUCCESS;
    if (!fixed || !f) status = hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    factor_job_t job = {gr, fixed, f};
    if (status == HB_SUCCESS)
        status = hb_sim_for_each(sim, k->count, "lanes factored", factor_lane, &job);
    if (status != HB_SUCCESS) {
        free(fixed);
        free(f);
        return status;
    }
    gr->fixed_row = fixed;
    gr->fixed = f;
    k->fixed_row = fixed;
    k->fixed_r = f;
    k->fixed_c = k->fixed_f = NULL; /* from u, l and fixed_r (hb_step_mixed_eliminate) */
    return HB_SUCCESS;
}

/* Mixed groups: the rows every lane of a block has, fixed, as a child of the row before, itself
 * fixed (hb_step_group_t.chain_row). */
static hb_status_t find_chains(group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    const size_t W = (size_t)k->width;
    unsigned char *chain = calloc(gr->block_start[k->blocks] / W + 1, 1);
    if (!chain) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int b = 0; b < k->blocks; b++) {
        const size_t first = gr->block_start[b];
        const int rows = hb_step_block_rows(k, b);
        for (int i = 1; i < rows; i++) {
            int all = 1;
            for (size_t q = 0; q < W && all; q++) {
                const size_t e = first + (size_t)i * W + q;
                all = i < k->lane_m[(size_t)b * W + q] && gr->parent[e] == i - 1 &&
                      gr->fixed_row[e] && gr->fixed_row[e - W];
            }
            chain[first / W + (size_t)i] = (unsigned char)all;
        }
    }
    gr->chain_row = chain;
    k->chain_row = chain;
    return HB_SUCCESS;
}

/* Entry j of index_rows' tables is the quintuple (x, c), bitwise. */
static int same_row(const double *tab, const double *ctab, int j, const double x[4], double c)
{
    return memcmp(&tab[4 * j], x, 4 * sizeof *x) == 0 && memcmp(&ctab[j], &c, sizeof c) == 0;
}

/* Mixed groups: the (u, l, pas_g, pas_e, cfac) of the group's elements as indices into a table
 * of the distinct quintuples (bitwise), when there are at most 256 of them (busyring's random
 * trees: a few dozen, the branches' geometries): row_table the first four of each, cfac_table
 * the fifth. */
static hb_status_t index_rows(group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    const size_t size = gr->block_start[k->blocks];
    double *tab = malloc(4 * 256 * sizeof *tab), *ctab = malloc(256 * sizeof *ctab);
    unsigned char *index = malloc(size + 1);
    if (!tab || !ctab || !index) {
        free(tab);
        free(ctab);
        free(index);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    enum { SLOTS = 1024 }; /* the table's entries by a hash of their bits: open addressing */
    short slot[SLOTS];
    memset(slot, 0xff, sizeof slot);
    int n = 0;
    for (size_t e = 0; e < size; e++) {
        const double x[4] = {gr->u[e], gr->l[e], gr->pas_g[e], gr->pas_e[e]}, c = gr->cfac[e];
        int j = e > 0 ? index[e - 1] : -1; /* runs of one quintuple first */
        if (j >= 0 && same_row(tab, ctab, j, x, c)) {
            index[e] = (unsigned char)j;
            continue;
        }
        uint64_t bits[5], h = 0;
        memcpy(bits, x, sizeof x);
        memcpy(&bits[4], &c, sizeof c);
        for (int q = 0; q < 5; q++) h = (h ^ bits[q]) * 0x9e3779b97f4a7c15u;
        size_t at = (size_t)(h >> 54) & (SLOTS - 1);
        while (slot[at] >= 0 && !same_row(tab, ctab, slot[at], x, c)) at = (at + 1) & (SLOTS - 1);
        j = slot[at];
        if (j < 0) {
            if (n == 256) { /* too many: the step reads the arrays */
                free(tab);
                free(ctab);
                free(index);
                return HB_SUCCESS;
            }
            memcpy(&tab[4 * n], x, sizeof x);
            ctab[n] = c;
            slot[at] = (short)n;
            j = n++;
        }
        index[e] = (unsigned char)j;
    }
    gr->row_index = index;
    gr->row_table = tab;
    gr->cfac_table = ctab;
    k->row_index = index;
    k->row_table = tab;
    k->cfac_table = ctab;
    return HB_SUCCESS;
}

/* The step's constants of a synapse: its row's density factor and the cnexp factors for dt [ms]. */
static hb_status_t synapse_site(const hb_model_t *md, const hb_model_synapse_t *ms, double dt,
                                hb_syn_site_t *site)
{
    hb_node_info_t info;
    hb_status_t status = hb_cable_node(md->cable, ms->node, &info);
    if (status != HB_SUCCESS) return status;
    const hb_synapse_t *syn = &ms->syn;
    site->node = ms->node;
    site->kind = (int)syn->kind;
    site->scale = 1e2 / info.area_um2; /* once, not per step: the same bits */
    site->e = syn->e_mv;
    if (syn->kind == HB_SYN_EXP2) {
        /* exp2syn.mod's INITIAL, generated: g = B - A peaks at the weight, `factor` */
        hbg_default_Exp2Syn_vars_t x;
        memset(&x, 0, sizeof x);
        x.tau1 = syn->tau1_ms;
        x.tau2 = syn->tau2_ms;
        hbg_default_Exp2Syn_initial(&x);
        site->factor = x.factor;
        /* the cnexp factors of its DERIVATIVE (the generated update's 1 - exp(-dt/tau), hb_exp),
         * once per run rather than every step */
        site->decay1 = 1.0 - hb_exp(-dt / x.tau1);
        site->decay2 = 1.0 - hb_exp(-dt / x.tau2);
    } else {
        site->factor = 1.0;
        site->decay1 = 1.0 - hb_exp(-dt / syn->tau_ms);
        site->decay2 = 0.0;
    }
    return HB_SUCCESS;
}

double *hb_sim_synapse_state(hb_sim_t *sim, int cell, int synapse, const hb_syn_site_t **site,
                              size_t *stride)
{
    group_t *gr = &sim->groups[sim->group_of[cell]];
    const hb_step_group_t *k = &gr->k;
    const int slot = sim->slot_of[cell];
    if (site) *site = &gr->syns[gr->syn_start[slot] + synapse];
    if (k->syn_lanes) { /* lane-interleaved (hb_step_group_t) */
        const size_t w = (size_t)k->width, block = (size_t)slot / w, lane = (size_t)slot % w;
        if (stride) *stride = w;
        return gr->syn_state + ((block * (size_t)k->syn_lanes + (size_t)synapse) * 2) * w + lane;
    }
    if (stride) *stride = 1;
    return gr->syn_state + 2 * (size_t)(gr->syn_start[slot] + synapse);
}

/* Every cell of the group with the same synapse sites: the lane-interleaved state. */
static int same_synapses(const group_t *gr)
{
    const hb_step_group_t *k = &gr->k;
    const int nq = gr->syn_start[1] - gr->syn_start[0];
    if (nq < 1) return 0;
    for (int s = 1; s < k->count; s++)
        if (gr->syn_start[s + 1] - gr->syn_start[s] != nq ||
            memcmp(&gr->syns[gr->syn_start[s]], gr->syns, (size_t)nq * sizeof *gr->syns) != 0)
            return 0;
    return 1;
}

/* The constants, stimuli, synapses and probes of model md in slot s: its row i at element
 * base + i width, its hh instance j at hh0 + j (lane s % width); its first stimulus site,
 * pulse and synapse of the group at n[0 .. 2]. u, l: scratch of the cell's rows. */
static hb_status_t fill_model(hb_sim_t *sim, group_t *gr, const hb_model_t *md, size_t s,
                              size_t base, size_t hh0, double dt, int n[3], double *u, double *l)
{
    hb_step_group_t *k = &gr->k;
    const size_t W = (size_t)k->width, lane = s % W;
    const int c = gr->cells[s];
    const int m = hb_cable_size(md->cable);
    const int *parent = hb_cable_parent(md->cable);
    sim->group_of[c] = (int)(gr - sim->groups);
    sim->slot_of[c] = (int)s;
    hb_status_t status = hb_sim_copy_probes(sim, c, md);
    if (status == HB_SUCCESS) status = hb_cable_offdiag(md->cable, u, l);
    if (status != HB_SUCCESS) return status;
    for (int i = 0, j = 0; i < m; i++) {
        const size_t e = base + (size_t)i * W;
        hb_node_info_t node;
        if ((status = hb_cable_node(md->cable, i, &node)) != HB_SUCCESS) return status;
        gr->u[e] = u[i];
        gr->l[e] = l[i];
        gr->cfac[e] = node.area_um2 > 0.0 ? 1e-3 * node.cm_uf_cm2 / dt : 0.0;
        if (k->mixed) gr->parent[e] = i > 0 ? parent[i] : 0;
        if (md->has_pas[i]) {
            gr->pas_g[e] = md->pas_g[i];
            gr->pas_e[e] = md->pas_e[i];
        }
        if (md->has_hh[i]) { /* instance hh0 + j, lane s % W */
            const size_t inst = hh0 + (size_t)j++;
            if (k->mixed) gr->hh_node[inst * W + lane] = i;
            for (int q = 0; q < HB_HH_NPAR; q++)
                gr->hh_par[(inst * HB_HH_NPAR + (size_t)q) * W + lane] =
                    md->hh[(size_t)i * HB_HH_NPAR + q];
        }
    }
    /* IClamps grouped by node (model order kept within a node). */
    for (int a = 0; a < md->n_iclamps; a++) {
        const int node = md->iclamps[a].node;
        int seen = 0;
        for (int b = 0; b < a; b++) seen |= md->iclamps[b].node == node;
        if (seen) continue;
        hb_node_info_t info;
        if ((status = hb_cable_node(md->cable, node, &info)) != HB_SUCCESS) return status;
        hb_stim_site_t *site = &gr->sites[n[0]++];
        site->node = node;
        site->first = n[1];
        site->area_um2 = info.area_um2 > 0.0 ? info.area_um2 : HB_ZERO_AREA_ROW_UM2;
        for (int b = a; b < md->n_iclamps; b++)
            if (md->iclamps[b].node == node)
                gr->pulses[n[1]++] = (hb_stim_pulse_t){
                    md->iclamps[b].del_ms, md->iclamps[b].dur_ms, md->iclamps[b].amp_na};
        site->count = n[1] - site->first;
    }
    for (int q = 0; q < md->n_synapses && status == HB_SUCCESS; q++)
        if (!md->synapses[q].mech) /* point processes: the catalogue's (sim_cat.c) */
            status = synapse_site(md, &md->synapses[q], sim->opt.dt_ms, &gr->syns[n[2]++]);
    return status;
}

/* A group's slots filled, on the simulation's build threads: slot s at base[s] (element) and
 * hh0[s] (hh instance), its first site, pulse and synapse from the counts of the slots before. */
typedef struct {
    hb_sim_t *sim;
    group_t *gr;
    const size_t *base, *hh0;
    const int *first_pulse;
    double dt;
} fill_job_t;

static hb_status_t fill_slot(void *ctx, int s)
{
    const fill_job_t *job = ctx;
    group_t *gr = job->gr;
    const int c = gr->cells[s];
    const hb_model_t *md = hb_sim_cell_get(job->sim, c);
    if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error()) /* the source names the cell */;
    const size_t m = (size_t)hb_cable_size(md->cable);
    double *u = malloc((m + 1) * sizeof *u), *l = malloc((m + 1) * sizeof *l);
    int n[3] = {gr->site_start[s], job->first_pulse[s], gr->syn_start ? gr->syn_start[s] : 0};
    hb_status_t status = u && l ? fill_model(job->sim, gr, md, (size_t)s, job->base[s],
                                             job->hh0[s], job->dt, n, u, l)
                                : hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    free(u);
    free(l);
    hb_sim_cell_put(job->sim, c, md);
    return status;
}

/* The slots' first stimulus sites and synapses (site_start, syn_start) and pulses, then every
 * real slot filled. */
static hb_status_t fill_slots(hb_sim_t *sim, group_t *gr, size_t slots, const size_t *base,
                              const size_t *hh0, double dt)
{
    int *first_pulse = malloc((slots + 1) * sizeof *first_pulse);
    if (!first_pulse) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    int n[3] = {0, 0, 0};
    for (size_t s = 0; s < slots; s++) {
        gr->site_start[s] = n[0];
        first_pulse[s] = n[1];
        if (gr->syn_start) gr->syn_start[s] = n[2];
        if (s >= (size_t)gr->k.count) continue;
        const hb_sim_cell_info_t *in = &sim->info[gr->cells[s]];
        n[0] += in->n_sites;
        n[1] += in->n_iclamps;
        n[2] += in->n_hand;
    }
    gr->site_start[slots] = n[0];
    if (gr->syn_start) gr->syn_start[slots] = n[2];
    const fill_job_t job = {sim, gr, base, hh0, first_pulse, dt};
    hb_status_t status = hb_sim_for_each(sim, gr->k.count, "cells built", fill_slot, (void *)&job);
    free(first_pulse);
    return status;
}

/* The step's view of the group's arrays. */
static void publish(group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    k->parent = gr->parent;
    k->hh_node = gr->hh_node;
    k->v = gr->v;
    k->d = k->rhs = NULL; /* CPU: per-thread scratch; GPU: device arrays */
    k->u = gr->u;
    k->l = gr->l;
    k->cfac = gr->cfac;
    k->pas_g = gr->pas_g;
    k->pas_e = gr->pas_e;
    k->hh_par = gr->hh_par;
    k->hh_state = gr->hh_state;
    k->site_start = gr->site_start;
    k->sites = gr->sites;
    k->pulses = gr->pulses;
    k->syn_start = gr->syn_start;
    k->syns = gr->syns;
    k->syn_state = gr->syn_state;
    k->block_start = gr->block_start;
    k->hh_start = gr->hh_start;
    k->lane_m = gr->lane_m;
    k->lane_hh = gr->lane_hh;
    k->shape_class = gr->shape_class;
}

/* Stimulus sites (at most), pulses and synapses of the group's cells; the most synapses of one. */
static void count_inputs(const hb_sim_t *sim, const group_t *gr, int *sites, int *pulses,
                         int *syns, int *most_syns)
{
    *sites = *pulses = *syns = *most_syns = 0;
    for (int q = 0; q < gr->k.count; q++) {
        const hb_sim_cell_info_t *in = &sim->info[gr->cells[q]];
        *pulses += in->n_iclamps;
        *sites += in->n_sites;
        *syns += in->n_hand;
        *most_syns = in->n_hand > *most_syns ? in->n_hand : *most_syns;
    }
}

/* Storage of one group of one shape: constants filled, state left for hb_sim_init. */
static hb_status_t fill_group(hb_sim_t *sim, group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    /* the backend's lanes per block for this many cells */
    const int W = sim->ops->block_width(sim->ctx, k->count);
    const int m = k->m;
    k->width = W;
    k->blocks = (k->count + W - 1) / W;
    const size_t slots = (size_t)k->blocks * (size_t)W, size = slots * (size_t)m;
    if ((size_t)m > ((size_t)-1 / sizeof(double)) / slots / 16)
        return hb_fail(HB_ERR_ALLOC, "simulation: %d cells of %d nodes do not fit in memory",
                       k->count, m);
    k->n_hh = sim->info[gr->cells[0]].n_hh;
    const size_t hh = slots * (size_t)k->n_hh;
    int n_sites, n_pulses, n_syns, most_syns;
    count_inputs(sim, gr, &n_sites, &n_pulses, &n_syns, &most_syns);
    /* room for either state layout: per slot, or lane-interleaved with padding lanes */
    gr->n_syn_state = 2 * slots * (size_t)most_syns;
    int ok = ALLOC(gr->parent, m) && ALLOC(gr->hh_node, k->n_hh) && ALLOC(gr->v, size) &&
             ALLOC(gr->u, size) && ALLOC(gr->l, size) && ALLOC(gr->cfac, size) &&
             ALLOC(gr->pas_g, size) && ALLOC(gr->pas_e, size) &&
             ALLOC(gr->hh_par, hh * HB_HH_NPAR) && ALLOC(gr->hh_state, hh * 3) &&
             ALLOC(gr->site_start, slots + 1) && ALLOC(gr->sites, n_sites) &&
             ALLOC(gr->pulses, n_pulses);
    if (ok && n_syns)
        ok = ALLOC(gr->syn_start, slots + 1) && ALLOC(gr->syns, n_syns) &&
             ALLOC(gr->syn_state, gr->n_syn_state);
    size_t *base = NULL, *hh0 = NULL;
    if (ok) ok = ALLOC(base, slots) && ALLOC(hh0, slots);
    const hb_model_t *first = ok ? hb_sim_cell_get(sim, gr->cells[0]) : NULL;
    if (!ok || !first) {
        free(base);
        free(hh0);
        return ok ? hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error())
                  : hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d cells of %d nodes",
                            k->count, m);
    }
    memcpy(gr->parent, hb_cable_parent(first->cable), (size_t)m * sizeof(int));
    for (int j = 0, n = 0; j < m; j++)
        if (first->has_hh[j]) gr->hh_node[n++] = j;
    hb_sim_cell_put(sim, gr->cells[0], first);
    const int cn = sim->opt.method == HB_METHOD_CN;
    const double dt = cn ? 0.5 * sim->opt.dt_ms : sim->opt.dt_ms;
    for (size_t s = 0; s < slots; s++) {
        base[s] = (s / (size_t)W) * (size_t)m * (size_t)W + s % (size_t)W;
        hh0[s] = (s / (size_t)W) * (size_t)k->n_hh;
        if (s >= (size_t)k->count) /* padding: identity rows (d = 1, rhs = 0) */
            for (int i = 0; i < m; i++) gr->cfac[base[s] + (size_t)i * W] = 1.0;
    }
    hb_status_t status = fill_slots(sim, gr, slots, base, hh0, dt);
    free(base);
    free(hh0);
    if (status == HB_SUCCESS) share_constants(gr);
    publish(gr);
    if (status == HB_SUCCESS) status = hb_sim_cat_build(sim, k, gr->cells, &gr->cat);
    k->cat = gr->cat;
    k->syn_lanes = status == HB_SUCCESS && gr->syn_start && same_synapses(gr)
                       ? gr->syn_start[1] - gr->syn_start[0] : 0;
    if (status == HB_SUCCESS) status = factor_fixed_rows(gr);
    return status;
}

/*
 * Storage of a mixed group (hb_step_group_t.mixed): its cells (sorted by rows) `width` to a
 * block, each block as many rows as its largest cell and as many hh instances as the cell with
 * the most; padding rows, instances and lanes decoupled (cfac 1, the rest 0).
 */
static hb_status_t fill_mixed(hb_sim_t *sim, group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    const int W = sim->ops->mixed_width;
    k->width = W;
    k->shared = 0;
    k->blocks = (k->count + W - 1) / W;
    const size_t slots = (size_t)k->blocks * (size_t)W;
    if (!ALLOC(gr->block_start, k->blocks + 1) || !ALLOC(gr->hh_start, k->blocks + 1) ||
        !ALLOC(gr->lane_m, slots) || !ALLOC(gr->lane_hh, slots))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d cells", k->count);
    k->m = k->n_hh = 0;
    for (int b = 0; b < k->blocks; b++) {
        int rows = 0, hh = 0;
        for (int s = b * W; s < (b + 1) * W && s < k->count; s++) {
            const hb_sim_cell_info_t *in = &sim->info[gr->cells[s]];
            gr->lane_m[s] = in->m;
            gr->lane_hh[s] = in->n_hh;
            rows = gr->lane_m[s] > rows ? gr->lane_m[s] : rows;
            hh = gr->lane_hh[s] > hh ? gr->lane_hh[s] : hh;
        }
        if ((size_t)rows * (size_t)W > ((size_t)-1 / sizeof(double)) / 16 - gr->block_start[b])
            return hb_fail(HB_ERR_ALLOC, "simulation: %d cells do not fit in memory", k->count);
        gr->block_start[b + 1] = gr->block_start[b] + (size_t)rows * (size_t)W;
        gr->hh_start[b + 1] = gr->hh_start[b] + (size_t)hh;
        k->m = rows > k->m ? rows : k->m;
        k->n_hh = hh > k->n_hh ? hh : k->n_hh;
    }
    const size_t size = gr->block_start[k->blocks], hh = gr->hh_start[k->blocks] * (size_t)W;
    int n_sites, n_pulses, n_syns, most_syns;
    count_inputs(sim, gr, &n_sites, &n_pulses, &n_syns, &most_syns);
    gr->n_syn_state = 2 * (size_t)n_syns; /* per slot */
    int ok = ALLOC(gr->parent, size) && ALLOC(gr->hh_node, hh) && ALLOC(gr->v, size) &&
             ALLOC(gr->u, size) && ALLOC(gr->l, size) && ALLOC(gr->cfac, size) &&
             ALLOC(gr->pas_g, size) && ALLOC(gr->pas_e, size) &&
             ALLOC(gr->hh_par, hh * HB_HH_NPAR) && ALLOC(gr->hh_state, hh * 3) &&
             ALLOC(gr->site_start, slots + 1) && ALLOC(gr->sites, n_sites) &&
             ALLOC(gr->pulses, n_pulses);
    if (ok && n_syns)
        ok = ALLOC(gr->syn_start, slots + 1) && ALLOC(gr->syns, n_syns) &&
             ALLOC(gr->syn_state, gr->n_syn_state);
    size_t *base = NULL, *hh0 = NULL;
    if (ok) ok = ALLOC(base, slots) && ALLOC(hh0, slots);
    if (!ok) {
        free(base);
        free(hh0);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d cells of up to %d nodes",
                       k->count, k->m);
    }
    for (size_t e = 0; e < size; e++) gr->cfac[e] = 1.0; /* padding: d = 1 */
    const int cn = sim->opt.method == HB_METHOD_CN;
    const double dt = cn ? 0.5 * sim->opt.dt_ms : sim->opt.dt_ms;
    for (size_t s = 0; s < slots; s++) {
        const size_t b = s / (size_t)W;
        base[s] = gr->block_start[b] + s % (size_t)W;
        hh0[s] = gr->hh_start[b];
    }
    hb_status_t status = fill_slots(sim, gr, slots, base, hh0, dt);
    free(base);
    free(hh0);
    publish(gr);
    if (status == HB_SUCCESS) status = hb_sim_cat_build(sim, k, gr->cells, &gr->cat);
    k->cat = gr->cat;
    k->syn_lanes = 0;
    if (status == HB_SUCCESS) status = factor_mixed_rows(sim, gr);
    /* catalogue mechanisms: the per-lane step (hb_step_mixed_*), which reads the arrays */
    if (status == HB_SUCCESS && !gr->cat) status = index_rows(gr);
    if (status == HB_SUCCESS) status = find_chains(gr);
    if (status == HB_SUCCESS && gr->row_index) {
        /* Both engines read a tabled group's u, l, pas_g and pas_e through row_index alone
         * (the GPU's copies the table): the arrays are a second copy of it (half the group's
         * bytes). */
        double **dup[4] = {&gr->u, &gr->l, &gr->pas_g, &gr->pas_e};
        for (int q = 0; q < 4; q++) {
            free(*dup[q]);
            *dup[q] = NULL;
        }
        k->u = k->l = k->pas_g = k->pas_e = NULL;
    }
    return status;
}

/* A cell of a mixed group: sorted by rows, then index (the order of gids). */
typedef struct {
    int rows, cell;
} mixed_key_t;

static int by_rows(const void *a, const void *b)
{
    const mixed_key_t *x = a, *y = b;
    if (x->rows != y->rows) return x->rows < y->rows ? -1 : 1;
    return (x->cell > y->cell) - (x->cell < y->cell);
}

/* Cells a and b of one group (same_group on their models; with a source, each built again). */
static hb_status_t same_cells(const hb_sim_t *sim, int a, int b, int *same)
{
    *same = 0;
    const hb_model_t *x = hb_sim_cell_get(sim, a);
    const hb_model_t *y = x ? hb_sim_cell_get(sim, b) : NULL;
    hb_status_t status = HB_SUCCESS;
    if (!x || !y)
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
    else
        *same = same_group(x, y);
    hb_sim_cell_put(sim, b, y);
    hb_sim_cell_put(sim, a, x);
    return status;
}

/* Each cell's group (group_of, groups' m and count): the first group of the same shape in
 * cell order, else a new one (first: its first cell). The shape hashes find the candidates in
 * a table (one pass, not a search of every group), compared exactly. */
static hb_status_t find_groups(hb_sim_t *sim, int *first)
{
    size_t size = 64;
    while (size < 2 * (size_t)sim->n_cells) size *= 2;
    int *table = malloc(size * sizeof *table); /* open addressing: a group, or -1 */
    if (!table) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    memset(table, 0xff, size * sizeof *table);
    hb_status_t status = HB_SUCCESS;
    for (int c = 0; c < sim->n_cells && status == HB_SUCCESS; c++) {
        const hb_sim_cell_info_t *in = &sim->info[c];
        size_t h = (size_t)(in->shape ^ in->shape >> 29) & (size - 1);
        int g = -1;
        for (; table[h] >= 0; h = (h + 1) & (size - 1)) { /* the same hash: compared */
            const int k = table[h];
            const hb_sim_cell_info_t *o = &sim->info[first[k]];
            if (o->shape != in->shape || o->m != in->m) continue;
            int same = 0;
            status = same_cells(sim, first[k], c, &same);
            if (status != HB_SUCCESS || same) {
                g = k;
                break;
            }
        }
        if (status != HB_SUCCESS) break;
        if (g < 0) {
            first[sim->n_groups] = c;
            g = sim->n_groups++;
            table[h] = g; /* the empty slot the probe ended on */
            sim->groups[g].k.m = in->m;
        }
        sim->group_of[c] = g;
        sim->groups[g].k.count++;
    }
    free(table);
    return status;
}

hb_status_t hb_sim_make_groups(hb_sim_t *sim)
{
    if (sim->n_cells < 1) return hb_fail(HB_ERR_INVALID_VALUE, "simulation: no cells");
    int *first = malloc((size_t)sim->n_cells * sizeof *first); /* a cell of each group */
    sim->groups = calloc((size_t)sim->n_cells, sizeof *sim->groups);
    sim->group_of = malloc((size_t)sim->n_cells * sizeof *sim->group_of);
    sim->slot_of = malloc((size_t)sim->n_cells * sizeof *sim->slot_of);
    if (!first || !sim->groups || !sim->group_of || !sim->slot_of) {
        free(first);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    hb_status_t status = find_groups(sim, first);
    if (status != HB_SUCCESS) {
        free(first);
        return status;
    }
    /* Cells that would each be a group of one, and copies the engine steps better as cells
     * of their own shape (hb_sim_ops.mixed_copies, or the tuning's sim.mixed_copies): one
     * mixed group, after the others. */
    unsigned char *to_mixed = calloc((size_t)sim->n_groups, 1);
    if (!to_mixed) {
        free(first);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    const int forced = sim->ctx->tuning.sim_mixed_copies;
    /* each cell's shape number where its shape's copies go to the mixed group, else -1 */
    int *klass = malloc((size_t)sim->n_cells * sizeof *klass);
    if (!klass) {
        free(to_mixed);
        free(first);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    int singles = 0; /* cells of the mixed group */
    for (int g = 0; g < sim->n_groups && sim->ops->mixed_width > 0; g++) {
        const int count = sim->groups[g].k.count;
        to_mixed[g] = count == 1 ||
                      (forced > 0 ? count <= forced
                                  : sim->ops->mixed_copies &&
                                        sim->ops->mixed_copies(count, sim->groups[g].k.m));
        if (to_mixed[g]) singles += count;
    }
    for (int c = 0; c < sim->n_cells; c++) {
        const int g = sim->group_of[c];
        klass[c] = to_mixed[g] && sim->groups[g].k.count > 1 ? g : -1;
    }
    if (sim->ops->mixed_width > 0 && singles >= 2) {
        int *to = first, n = 0; /* first's cells are no longer needed: the new group numbers */
        for (int g = 0; g < sim->n_groups; g++)
            if (!to_mixed[g]) {
                to[g] = n;
                sim->groups[n++] = sim->groups[g];
            } else {
                to[g] = -1;
            }
        for (int g = 0; g < sim->n_groups; g++)
            if (to[g] < 0) to[g] = n;
        memset(&sim->groups[n], 0, sizeof sim->groups[n]);
        sim->groups[n].k.mixed = 1;
        sim->groups[n].k.count = singles;
        sim->n_groups = n + 1;
        for (int c = 0; c < sim->n_cells; c++) sim->group_of[c] = to[sim->group_of[c]];
    }
    free(to_mixed);
    free(first);
    for (int g = 0; g < sim->n_groups; g++) {
        group_t *gr = &sim->groups[g];
        if (!(gr->cells = malloc((size_t)gr->k.count * sizeof *gr->cells))) {
            free(klass);
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
        }
        gr->k.count = 0;
    }
    for (int c = 0; c < sim->n_cells; c++) {
        group_t *gr = &sim->groups[sim->group_of[c]];
        gr->cells[gr->k.count++] = c;
    }
    group_t *mixed = &sim->groups[sim->n_groups - 1];
    if (mixed->k.mixed) { /* neighbours of similar size */
        mixed_key_t *key = malloc((size_t)mixed->k.count * sizeof *key);
        if (!key) {
            free(klass);
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
        }
        for (int s = 0; s < mixed->k.count; s++)
            key[s] = (mixed_key_t){sim->info[mixed->cells[s]].m, mixed->cells[s]};
        qsort(key, (size_t)mixed->k.count, sizeof *key, by_rows);
        for (int s = 0; s < mixed->k.count; s++) mixed->cells[s] = key[s].cell;
        free(key);
        int copies = 0;
        for (int s = 0; s < mixed->k.count && !copies; s++) copies = klass[mixed->cells[s]] >= 0;
        if (copies) { /* slots past count (padding) keep -1 */
            const int W = sim->ops->mixed_width;
            const size_t slots = (size_t)((mixed->k.count + W - 1) / W) * (size_t)W;
            if (!(mixed->shape_class = malloc(slots * sizeof *mixed->shape_class))) {
                free(klass);
                return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
            }
            for (size_t s = 0; s < slots; s++)
                mixed->shape_class[s] =
                    s < (size_t)mixed->k.count ? klass[mixed->cells[s]] : -1;
        }
    }
    free(klass);
    for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
        status = sim->groups[g].k.mixed ? fill_mixed(sim, &sim->groups[g])
                                        : fill_group(sim, &sim->groups[g]);
    return status;
}

void hb_sim_locate_probes(hb_sim_t *sim)
{
    for (int c = 0, p = 0; c < sim->n_cells; c++) {
        const group_t *gr = &sim->groups[sim->group_of[c]];
        for (int k = 0; k < sim->info[c].n_probes; k++, p++) {
            sim->probe_group[p] = sim->group_of[c];
            sim->probe_index[p] = hb_step_element(&gr->k, sim->slot_of[c], sim->probes[p].node);
        }
    }
}

void hb_sim_free_groups(hb_sim_t *sim)
{
    for (int g = 0; g < sim->n_groups; g++) {
        group_t *gr = &sim->groups[g];
        free(gr->cells);
        free(gr->parent);
        free(gr->hh_node);
        free(gr->v);
        free(gr->u);
        free(gr->l);
        free(gr->cfac);
        free(gr->pas_g);
        free(gr->pas_e);
        free(gr->hh_par);
        free(gr->hh_state);
        free(gr->fixed_row);
        free(gr->fixed);
        free(gr->site_start);
        free(gr->sites);
        free(gr->pulses);
        free(gr->syn_start);
        free(gr->syns);
        free(gr->syn_state);
        free(gr->block_start);
        free(gr->hh_start);
        free(gr->lane_m);
        free(gr->lane_hh);
        free(gr->shape_class);
        free(gr->row_index);
        free(gr->row_table);
        free(gr->cfac_table);
        free(gr->chain_row);
        hb_sim_cat_free(gr->cat);
    }
    free(sim->groups);
    sim->groups = NULL;
}
