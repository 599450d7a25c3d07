/*
 * The simulator's layout: cells with the same matrix shape and the same hh nodes form a
 * group, stored Block-Interleaved in blocks of the backend's width (hb_sim_ops.block_width:
 * HB_SIM_CPU_LANES or fewer on the CPU, a warp on the GPU); the constants of copies of one
 * model are kept once per node, and the fixed rows of such groups factored once. Host
 * arrays, which the CPU engine steps in place and the CUDA engine copies.
 *
 * factor_fixed_rows runs the step's own row functions (common/sim_step.h): compiled with the
 * CPU step's flags (CMakeLists.txt), so its factors are the bits the step would compute.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "sim/sim_engine.h"

/* Same matrix shape and the same hh nodes: one group. */
static int same_group(const hb_model_t *a, const hb_model_t *b)
{
    if (a == b) return 1;
    const int m = hb_cable_size(a->cable);
    return hb_cable_size(b->cable) == m &&
           memcmp(hb_cable_parent(a->cable), hb_cable_parent(b->cable), (size_t)m * sizeof(int)) == 0 &&
           memcmp(a->has_hh, b->has_hh, (size_t)m) == 0;
}

#define ALLOC(ptr, n) (((ptr) = calloc((size_t)(n) + 1, sizeof *(ptr))) != NULL)

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

/*
 * Shared groups: the factors of the rows whose subtree has no hh node, from the
 * step's own row functions on one lane (v = 0: only d matters), eliminated as
 * hb_hines_recip_eliminate_row does. The step then skips their divisions and
 * gets the same bits (tests/test_sim_engine.c compares the step with a per-cell
 * reference; tests/gpu/test_gpu_sim.c with the GPU, which factors every row).
 */
static hb_status_t factor_fixed_rows(group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    const int m = k->m;
    if (!k->shared) return HB_SUCCESS;
    unsigned char *fixed = malloc((size_t)m);
    double *f = malloc(3 * (size_t)m * sizeof *f);
    double *d = malloc((size_t)m * sizeof *d), *rhs = malloc((size_t)m * sizeof *rhs);
    double *v0 = calloc((size_t)m, sizeof *v0);
    if (!fixed || !f || !d || !rhs || !v0) {
        free(fixed);
        free(f);
        free(d);
        free(rhs);
        free(v0);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    const int *parent = k->parent;
    memset(fixed, 1, (size_t)m);
    for (int j = 0; j < k->n_hh; j++) fixed[k->hh_node[j]] = 0;
    /* a synapse's conductance changes the row every step, in any lane */
    if (k->syn_start)
        for (int q = 0; q < k->syn_start[(size_t)k->blocks * (size_t)k->width]; q++)
            fixed[k->syns[q].node] = 0;
    for (int i = m - 1; i > 0; i--)
        if (!fixed[i]) fixed[parent[i]] = 0;
    for (int i = 0; i < m; i++)
        hb_step_pas_row(1, 0, v0 + i, k->pas_g + i, k->pas_e + i, d + i, rhs + i);
    hb_step_root_row(1, 0, k->cfac, d, rhs);
    for (int i = 1; i < m; i++) {
        const int p = parent[i];
        hb_step_axial_row(1, 0, k->cfac + i, k->u + i, k->l + i, v0 + i, v0 + p, d + i, rhs + i,
                          d + p, rhs + p);
    }
    double *fr = f, *fc = f + m, *ff = f + 2 * (size_t)m;
    hb_step_factor_fixed(m, parent, k->u, k->l, fixed, d, fr, fc, ff);
    free(d);
    free(rhs);
    free(v0);
    gr->fixed_row = fixed;
    gr->fixed = f;
    k->fixed_row = fixed;
    k->fixed_r = fr;
    k->fixed_c = fc;
    k->fixed_f = ff;
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
        /* NEURON's exp2syn.mod: g = B - A peaks at the weight, at t_peak after an event */
        const double t1 = syn->tau1_ms, t2 = syn->tau2_ms;
        const double t_peak = (t1 * t2) / (t2 - t1) * log(t2 / t1);
        site->factor = 1.0 / (-exp(-t_peak / t1) + exp(-t_peak / t2));
        site->decay1 = 1.0 - exp(-dt / t1);
        site->decay2 = 1.0 - exp(-dt / t2);
    } else {
        site->factor = 1.0;
        site->decay1 = 1.0 - exp(-dt / syn->tau_ms);
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

/* Storage of one group: constants filled, state left for hb_sim_init. */
static hb_status_t fill_group(hb_sim_t *sim, group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    /* the backend's lanes per block for this many cells */
    const int W = sim->ops->block_width(k->count);
    const int m = k->m;
    const hb_model_t *first = sim->cells[gr->cells[0]];
    k->width = W;
    k->blocks = (k->count + W - 1) / W;
    const size_t slots = (size_t)k->blocks * (size_t)W, size = slots * (size_t)m;
    if ((size_t)m > ((size_t)-1 / sizeof(double)) / slots / 16)
        return hb_fail(HB_ERR_ALLOC, "simulation: %d cells of %d nodes do not fit in memory",
                       k->count, m);
    k->n_hh = 0;
    for (int j = 0; j < m; j++) k->n_hh += first->has_hh[j];
    const size_t hh = slots * (size_t)k->n_hh;
    int n_sites = 0, n_pulses = 0, n_syns = 0, most_syns = 0;
    for (int q = 0; q < k->count; q++) {
        const hb_model_t *md = sim->cells[gr->cells[q]];
        n_pulses += md->n_iclamps;
        n_sites += md->n_iclamps; /* at most */
        n_syns += md->n_synapses;
        most_syns = md->n_synapses > most_syns ? md->n_synapses : most_syns;
    }
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
    double *u = NULL, *l = NULL;
    if (ok) ok = ALLOC(u, m) && ALLOC(l, m);
    if (!ok) {
        free(u);
        free(l);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d cells of %d nodes",
                       k->count, m);
    }
    memcpy(gr->parent, hb_cable_parent(first->cable), (size_t)m * sizeof(int));
    for (int j = 0, n = 0; j < m; j++)
        if (first->has_hh[j]) gr->hh_node[n++] = j;
    const int cn = sim->opt.method == HB_METHOD_CN;
    const double dt = cn ? 0.5 * sim->opt.dt_ms : sim->opt.dt_ms;
    hb_status_t status = HB_SUCCESS;
    n_sites = n_pulses = n_syns = 0;
    for (size_t s = 0; s < slots && status == HB_SUCCESS; s++) {
        const size_t base = (s / (size_t)W) * (size_t)m * (size_t)W + s % (size_t)W;
        gr->site_start[s] = n_sites;
        if (gr->syn_start) gr->syn_start[s] = n_syns;
        if (s >= (size_t)k->count) { /* padding: identity rows (d = 1, rhs = 0) */
            for (int i = 0; i < m; i++) gr->cfac[base + (size_t)i * W] = 1.0;
            continue;
        }
        const int c = gr->cells[s];
        const hb_model_t *md = sim->cells[c];
        sim->group_of[c] = (int)(gr - sim->groups);
        sim->slot_of[c] = (int)s;
        if ((status = hb_cable_offdiag(md->cable, u, l)) != HB_SUCCESS) break;
        for (int i = 0, j = 0; i < m; i++) {
            const size_t e = base + (size_t)i * W;
            hb_node_info_t node;
            if ((status = hb_cable_node(md->cable, i, &node)) != HB_SUCCESS) break;
            gr->u[e] = u[i];
            gr->l[e] = l[i];
            gr->cfac[e] = node.area_um2 > 0.0 ? 1e-3 * node.cm_uf_cm2 / dt : 0.0;
            if (md->has_pas[i]) {
                gr->pas_g[e] = md->pas_g[i];
                gr->pas_e[e] = md->pas_e[i];
            }
            if (md->has_hh[i]) { /* instance (block, j), lane s % W */
                const size_t inst = (s / (size_t)W) * (size_t)k->n_hh + (size_t)j++;
                for (int q = 0; q < HB_HH_NPAR; q++)
                    gr->hh_par[(inst * HB_HH_NPAR + (size_t)q) * W + s % (size_t)W] =
                        md->hh[(size_t)i * HB_HH_NPAR + q];
            }
        }
        /* IClamps grouped by node (model order kept within a node). */
        for (int a = 0; a < md->n_iclamps && status == HB_SUCCESS; a++) {
            const int node = md->iclamps[a].node;
            int seen = 0;
            for (int b = 0; b < a; b++) seen |= md->iclamps[b].node == node;
            if (seen) continue;
            hb_node_info_t info;
            if ((status = hb_cable_node(md->cable, node, &info)) != HB_SUCCESS) break;
            hb_stim_site_t *site = &gr->sites[n_sites++];
            site->node = node;
            site->first = n_pulses;
            site->area_um2 = info.area_um2 > 0.0 ? info.area_um2 : HB_ZERO_AREA_ROW_UM2;
            for (int b = a; b < md->n_iclamps; b++)
                if (md->iclamps[b].node == node)
                    gr->pulses[n_pulses++] = (hb_stim_pulse_t){
                        md->iclamps[b].del_ms, md->iclamps[b].dur_ms, md->iclamps[b].amp_na};
            site->count = n_pulses - site->first;
        }
        for (int q = 0; q < md->n_synapses && status == HB_SUCCESS; q++)
            status = synapse_site(md, &md->synapses[q], sim->opt.dt_ms, &gr->syns[n_syns++]);
    }
    gr->site_start[slots] = n_sites;
    if (gr->syn_start) gr->syn_start[slots] = n_syns;
    free(u);
    free(l);
    if (status == HB_SUCCESS) share_constants(gr);
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
    k->syn_lanes = status == HB_SUCCESS && gr->syn_start && same_synapses(gr)
                       ? gr->syn_start[1] - gr->syn_start[0] : 0;
    if (status == HB_SUCCESS) status = factor_fixed_rows(gr);
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
    for (int c = 0; c < sim->n_cells; c++) {
        int g = -1;
        for (int k = 0; k < sim->n_groups && g < 0; k++)
            if (same_group(sim->cells[first[k]], sim->cells[c])) g = k;
        if (g < 0) {
            first[sim->n_groups] = c;
            g = sim->n_groups++;
            sim->groups[g].k.m = hb_cable_size(sim->cells[c]->cable);
        }
        sim->group_of[c] = g;
        sim->groups[g].k.count++;
    }
    free(first);
    for (int g = 0; g < sim->n_groups; g++) {
        group_t *gr = &sim->groups[g];
        if (!(gr->cells = malloc((size_t)gr->k.count * sizeof *gr->cells)))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
        gr->k.count = 0;
    }
    for (int c = 0; c < sim->n_cells; c++) {
        group_t *gr = &sim->groups[sim->group_of[c]];
        gr->cells[gr->k.count++] = c;
    }
    hb_status_t status = HB_SUCCESS;
    for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
        status = fill_group(sim, &sim->groups[g]);
    return status;
}

void hb_sim_locate_probes(hb_sim_t *sim)
{
    for (int c = 0, p = 0; c < sim->n_cells; c++) {
        const group_t *gr = &sim->groups[sim->group_of[c]];
        const size_t slot = (size_t)sim->slot_of[c], w = (size_t)gr->k.width;
        const size_t base = (slot / w) * (size_t)gr->k.m * w + slot % w;
        for (int k = 0; k < sim->cells[c]->n_probes; k++, p++) {
            sim->probe_group[p] = sim->group_of[c];
            sim->probe_index[p] = base + (size_t)sim->probes[p].node * w;
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
    }
    free(sim->groups);
    sim->groups = NULL;
}
