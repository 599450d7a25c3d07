/*
 * Time stepping as NEURON's fixed step (nrn_fixed_step, secondorder 0 or 1):
 *   1. currents and conductances at v(t) with the gates of t; IClamps at t + dt/2;
 *   2. the matrix (hb_cable_step_system's arithmetic, dt/2 in the capacitive term for CN);
 *   3. Hines solves;
 *   4. v += dv (CN: v += 2 dv);
 *   5. gates with the new v by cnexp: m += (1 - exp(-dt/tau)) (minf - m);
 *   6. t += dt; spike detection and sampling.
 *
 * The engine (docs/sim-engine.md): cells with the same matrix shape and the
 * same hh nodes form a group, stored Block-Interleaved with HB_SIM_CPU_LANES
 * cells per block (HB_SIM_GPU_LANES on the GPU). Steps 1-5 run as one pass per
 * block (hb_step_lanes, src/sim/step_kernels.h) while the block is in cache;
 * OpenMP spreads the blocks over the cores. With the CUDA backend the same
 * code runs in a kernel, one thread per cell (src/cuda/sim_cuda.cu), and the
 * state stays on the device.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/context.h"
#include "common/status.h"
#include "sim/sim.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif
#ifdef HB_HAVE_CUDA
#include "cuda/sim_cuda.h"
#endif

typedef struct {
    hb_step_group_t k;   /* what the step reads and writes (host arrays) */
    int *cells;          /* simulation cell of each slot (count) */
    int *parent, *hh_node;
    double *v, *u, *l, *cfac, *pas_g, *pas_e, *hh_par, *hh_state;
    unsigned char *fixed_row; /* shared groups: see hb_step_group_t */
    double *fixed;            /* 3 m: r, c, f */
    int *site_start;
    hb_stim_site_t *sites;
    hb_stim_pulse_t *pulses;
} group_t;

typedef struct {
    double *data;
    int count, capacity;
} series_t;

struct hb_sim {
    hb_sim_options_t opt;
    int n_cells;
    hb_model_t **cells; /* borrowed (or owned through `owned`) */
    int *offset;        /* first node of each cell in vbuf; offset[n_cells] = all nodes */
    int *group_of, *slot_of; /* per cell */
    int width;          /* lanes per block: HB_SIM_GPU_LANES, or at most HB_SIM_CPU_LANES */
    int n_groups;
    group_t *groups;
    int total_blocks;
    int *block_group, *block_index; /* per block of all groups */
    int threads;        /* CPU threads stepping blocks */
    size_t scratch_size; /* per thread: d and rhs of one block */
    double *scratch;
    hb_hh_table_t table;
    hb_context_t *ctx;
    hb_backend_t backend; /* resolved */
    int n_probes;
    hb_probe_t *probes;   /* nodes local to the cell, names owned */
    int *probe_group;
    size_t *probe_index;  /* element of the group's v */
    unsigned char *above; /* per probe: v was above threshold */
    double *v_prev;       /* per probe, for interpolated spike times */
    series_t times;
    series_t *traces; /* per probe */
    series_t *spikes; /* per probe */
    double *vbuf;     /* hb_sim_voltages: cell by cell */
    long step, sample_every;
    int initialised;
    hb_sim_owned_t owned;
#ifdef HB_HAVE_CUDA
    hb_cuda_sim_t *gpu;
#endif
};

void hb_sim_options_default(hb_sim_options_t *o)
{
    if (!o) return;
    memset(o, 0, sizeof *o);
    o->dt_ms = 0.025;
    o->t_stop_ms = 5.0;
    o->v_init_mv = -65.0;
    o->celsius = 6.3;
    o->sample_dt_ms = 0.0;
    o->method = HB_METHOD_EULER;
    o->spike_time = HB_SPIKE_STEP;
    o->hh_table = 1;
    o->backend = HB_BACKEND_SEQ;
    o->threads = 0;
}

void hb_sim_owned_free(hb_sim_owned_t *owned)
{
    for (int i = 0; i < owned->n_models; i++) hb_model_destroy(owned->models[i]);
    for (int i = 0; i < owned->n_morphs; i++) hb_morph_destroy(owned->morphs[i]);
    free(owned->models);
    free(owned->morphs);
    memset(owned, 0, sizeof *owned);
}

void hb_sim_adopt(hb_sim_t *sim, hb_sim_owned_t *owned)
{
    sim->owned = *owned;
    memset(owned, 0, sizeof *owned);
}

static int series_push(series_t *s, double x)
{
    if (s->count == s->capacity) {
        int cap = s->capacity ? 2 * s->capacity : 64;
        double *p = realloc(s->data, (size_t)cap * sizeof *p);
        if (!p) return 0;
        s->data = p;
        s->capacity = cap;
    }
    s->data[s->count++] = x;
    return 1;
}

static hb_status_t check_options(const hb_sim_options_t *o, long *sample_every)
{
    if (!(o->dt_ms > 0.0) || !isfinite(o->dt_ms))
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: dt = %g ms; expected > 0", o->dt_ms);
    if (!(o->t_stop_ms >= 0.0) || !isfinite(o->t_stop_ms))
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: t_stop = %g ms; expected >= 0", o->t_stop_ms);
    if (!isfinite(o->v_init_mv) || !isfinite(o->celsius))
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: v_init %g mV, celsius %g; expected finite",
                       o->v_init_mv, o->celsius);
    if (o->method != HB_METHOD_EULER && o->method != HB_METHOD_CN)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: unknown method %d", (int)o->method);
    if (o->spike_time != HB_SPIKE_STEP && o->spike_time != HB_SPIKE_INTERPOLATE)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: unknown spike time rule %d", (int)o->spike_time);
    if (o->threads < 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: threads = %d; expected >= 0 (0: all)",
                       o->threads);
    if (!(o->sample_dt_ms >= 0.0) || !isfinite(o->sample_dt_ms))
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: sample_dt = %g ms; expected >= 0",
                       o->sample_dt_ms);
    const double ratio = o->sample_dt_ms / o->dt_ms;
    const long every = o->sample_dt_ms == 0.0 ? 1 : lround(ratio);
    if (o->sample_dt_ms > 0.0 && (every < 1 || fabs(ratio - (double)every) > 1e-6 * ratio))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "simulation: sample_dt = %g ms is not a multiple of dt = %g ms", o->sample_dt_ms,
                       o->dt_ms);
    *sample_every = every;
    return HB_SUCCESS;
}

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

/* Storage of one group: constants filled, state left for hb_sim_init. */
static hb_status_t fill_group(hb_sim_t *sim, group_t *gr)
{
    hb_step_group_t *k = &gr->k;
    /* GPU: a warp per block. CPU: HB_SIM_CPU_LANES, or fewer for small groups
     * (a lone cell must not pay for eight). */
    int W = sim->width;
    if (W == HB_SIM_CPU_LANES)
        while (W > 1 && W / 2 >= k->count) W /= 2;
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
    int n_sites = 0, n_pulses = 0;
    for (int q = 0; q < k->count; q++) {
        const hb_model_t *md = sim->cells[gr->cells[q]];
        n_pulses += md->n_iclamps;
        n_sites += md->n_iclamps; /* at most */
    }
    int ok = ALLOC(gr->parent, m) && ALLOC(gr->hh_node, k->n_hh) && ALLOC(gr->v, size) &&
             ALLOC(gr->u, size) && ALLOC(gr->l, size) && ALLOC(gr->cfac, size) &&
             ALLOC(gr->pas_g, size) && ALLOC(gr->pas_e, size) &&
             ALLOC(gr->hh_par, hh * HB_HH_NPAR) && ALLOC(gr->hh_state, hh * 3) &&
             ALLOC(gr->site_start, slots + 1) && ALLOC(gr->sites, n_sites) &&
             ALLOC(gr->pulses, n_pulses);
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
    n_sites = n_pulses = 0;
    for (size_t s = 0; s < slots && status == HB_SUCCESS; s++) {
        const size_t base = (s / (size_t)W) * (size_t)m * (size_t)W + s % (size_t)W;
        gr->site_start[s] = n_sites;
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
    }
    gr->site_start[slots] = n_sites;
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
    if (status == HB_SUCCESS) status = factor_fixed_rows(gr);
    return status;
}

static hb_status_t make_groups(hb_sim_t *sim)
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
    if (status != HB_SUCCESS) return status;
    for (int g = 0; g < sim->n_groups; g++) sim->total_blocks += sim->groups[g].k.blocks;
    sim->block_group = malloc((size_t)sim->total_blocks * sizeof *sim->block_group);
    sim->block_index = malloc((size_t)sim->total_blocks * sizeof *sim->block_index);
    if (!sim->block_group || !sim->block_index)
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int g = 0, n = 0; g < sim->n_groups; g++)
        for (int b = 0; b < sim->groups[g].k.blocks; b++, n++) {
            sim->block_group[n] = g;
            sim->block_index[n] = b;
        }
    return HB_SUCCESS;
}

/* Probes of all cells (cell order), the voltage buffer. */
static hb_status_t gather(hb_sim_t *sim)
{
    int n_probes = 0;
    sim->offset = malloc(((size_t)sim->n_cells + 1) * sizeof *sim->offset);
    if (!sim->offset) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    long total = 0;
    for (int c = 0; c < sim->n_cells; c++) {
        const hb_model_t *md = sim->cells[c];
        sim->offset[c] = (int)total;
        total += md->m;
        n_probes += md->n_probes;
        if (total > 0x7fffffffL)
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: more than 2^31 nodes in all");
    }
    sim->offset[sim->n_cells] = (int)total;
    const size_t n = (size_t)total;
    sim->vbuf = calloc(n, sizeof *sim->vbuf);
    sim->probes = calloc((size_t)n_probes + 1, sizeof *sim->probes);
    sim->probe_group = calloc((size_t)n_probes + 1, sizeof *sim->probe_group);
    sim->probe_index = calloc((size_t)n_probes + 1, sizeof *sim->probe_index);
    sim->above = calloc((size_t)n_probes + 1, 1);
    sim->v_prev = calloc((size_t)n_probes + 1, sizeof *sim->v_prev);
    sim->traces = calloc((size_t)n_probes + 1, sizeof *sim->traces);
    sim->spikes = calloc((size_t)n_probes + 1, sizeof *sim->spikes);
    if (!sim->vbuf || !sim->probes || !sim->probe_group || !sim->probe_index || !sim->above ||
        !sim->v_prev || !sim->traces || !sim->spikes)
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu nodes", n);
    for (int c = 0; c < sim->n_cells; c++) {
        const hb_model_t *md = sim->cells[c];
        for (int k = 0; k < md->n_probes; k++) {
            const hb_probe_t *p = &md->probes[k];
            size_t len = strlen(p->name) + 24;
            hb_probe_t *q = &sim->probes[sim->n_probes];
            *q = *p;
            if (!(q->name = malloc(len)))
                return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
            sim->n_probes++;
            if (sim->n_cells == 1) snprintf(q->name, len, "%s", p->name);
            else snprintf(q->name, len, "c%d.%s", c, p->name);
        }
    }
    return HB_SUCCESS;
}

static void locate_probes(hb_sim_t *sim)
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

static void free_groups(hb_sim_t *sim)
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
    }
    free(sim->groups);
    sim->groups = NULL;
}

#ifdef HB_HAVE_CUDA
static hb_status_t create_gpu(hb_sim_t *sim)
{
    hb_step_group_t *views = malloc((size_t)sim->n_groups * sizeof *views);
    if (!views) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int g = 0; g < sim->n_groups; g++) views[g] = sim->groups[g].k;
    hb_cuda_sim_desc_t desc;
    memset(&desc, 0, sizeof desc);
    desc.n_groups = sim->n_groups;
    desc.groups = views;
    desc.table = sim->table.use_table ? sim->table.table : NULL;
    desc.q10 = sim->table.q10;
    desc.dt = sim->opt.dt_ms;
    desc.factor = sim->opt.method == HB_METHOD_CN ? 2.0 : 1.0;
    desc.n_probes = sim->n_probes;
    desc.probe_group = sim->probe_group;
    desc.probe_index = sim->probe_index;
    desc.interpolate = sim->opt.spike_time == HB_SPIKE_INTERPOLATE;
    desc.sample_every = sim->sample_every;
    unsigned char *detect = calloc((size_t)sim->n_probes + 1, 1);
    double *threshold = calloc((size_t)sim->n_probes + 1, sizeof *threshold);
    hb_status_t status = HB_SUCCESS;
    if (!detect || !threshold) status = hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int p = 0; p < sim->n_probes && status == HB_SUCCESS; p++) {
        detect[p] = (unsigned char)(sim->probes[p].detect_spikes != 0);
        threshold[p] = sim->probes[p].threshold_mv;
    }
    desc.probe_detect = detect;
    desc.probe_threshold = threshold;
    if (status == HB_SUCCESS)
        status = hb_cuda_sim_create((hb_cuda_context_t *)sim->ctx->device, &desc, &sim->gpu);
    free(detect);
    free(threshold);
    free(views);
    return status;
}
#endif

/* The matrix (d, rhs) of one block per thread: it never leaves the cache. */
static hb_status_t make_scratch(hb_sim_t *sim)
{
    sim->threads = 1;
#ifdef HB_HAVE_OPENMP
    if (sim->backend == HB_BACKEND_OMP)
        sim->threads = sim->ctx->threads > 0 ? sim->ctx->threads : omp_get_max_threads();
#endif
    size_t most = 1;
    for (int g = 0; g < sim->n_groups; g++) {
        const size_t n = (size_t)sim->groups[g].k.m * (size_t)sim->groups[g].k.width;
        most = n > most ? n : most;
    }
    sim->scratch_size = 2 * most;
    if (!(sim->scratch = malloc((size_t)sim->threads * sim->scratch_size * sizeof(double))))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    return HB_SUCCESS;
}

hb_status_t hb_sim_create(hb_model_t *const *cells, int n_cells, const hb_sim_options_t *options,
                          hb_sim_t **sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_create: sim is NULL");
    *sim = NULL;
    if (!cells || n_cells < 1 || !options)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_create: expected at least one cell and options");
    for (int c = 0; c < n_cells; c++)
        if (!cells[c]) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_create: cell %d is NULL", c);
    long every;
    hb_status_t status = check_options(options, &every);
    if (status != HB_SUCCESS) return status;
    hb_sim_t *s = calloc(1, sizeof *s);
    if (!s) return hb_fail(HB_ERR_ALLOC, "hb_sim_create: out of memory");
    s->opt = *options;
    s->sample_every = every;
    s->n_cells = n_cells;
    s->cells = malloc((size_t)n_cells * sizeof *s->cells);
    if (!s->cells) status = hb_fail(HB_ERR_ALLOC, "hb_sim_create: out of memory");
    else memcpy(s->cells, cells, (size_t)n_cells * sizeof *s->cells);
    if (status == HB_SUCCESS) status = hb_context_create(options->backend, &s->ctx);
    if (status == HB_SUCCESS) {
        s->backend = hb_context_backend(s->ctx);
        if (s->backend == HB_BACKEND_OMP && options->threads > 0)
            status = hb_context_set_threads(s->ctx, options->threads);
    }
    const int gpu = status == HB_SUCCESS && s->backend == HB_BACKEND_CUDA;
    s->width = gpu ? HB_SIM_GPU_LANES : HB_SIM_CPU_LANES;
    hb_hh_table_init(&s->table, options->celsius, options->hh_table);
    if (status == HB_SUCCESS) status = gather(s);
    if (status == HB_SUCCESS) status = make_groups(s);
    if (status == HB_SUCCESS && !gpu) status = make_scratch(s);
    if (status == HB_SUCCESS) locate_probes(s);
#ifdef HB_HAVE_CUDA
    if (status == HB_SUCCESS && gpu) status = create_gpu(s);
#endif
    if (status != HB_SUCCESS) {
        hb_sim_destroy(s);
        return status;
    }
    *sim = s;
    return HB_SUCCESS;
}

hb_status_t hb_sim_destroy(hb_sim_t *sim)
{
    if (!sim) return HB_SUCCESS;
#ifdef HB_HAVE_CUDA
    hb_cuda_sim_destroy(sim->gpu);
#endif
    free_groups(sim);
    free(sim->scratch);
    free(sim->block_group);
    free(sim->block_index);
    free(sim->group_of);
    free(sim->slot_of);
    for (int p = 0; p < sim->n_probes; p++) {
        free(sim->probes[p].name);
        if (sim->traces) free(sim->traces[p].data);
        if (sim->spikes) free(sim->spikes[p].data);
    }
    free(sim->probes);
    free(sim->probe_group);
    free(sim->probe_index);
    free(sim->traces);
    free(sim->spikes);
    free(sim->times.data);
    free(sim->above);
    free(sim->v_prev);
    free(sim->vbuf);
    free(sim->offset);
    free(sim->cells);
    if (sim->ctx) hb_context_destroy(sim->ctx);
    hb_sim_owned_free(&sim->owned);
    free(sim);
    return HB_SUCCESS;
}

static double probe_v(const hb_sim_t *sim, int p)
{
    return sim->groups[sim->probe_group[p]].v[sim->probe_index[p]];
}

static hb_status_t record_sample(hb_sim_t *sim)
{
    if (!series_push(&sim->times, (double)sim->step * sim->opt.dt_ms))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording samples");
    for (int p = 0; p < sim->n_probes; p++)
        if (!series_push(&sim->traces[p], probe_v(sim, p)))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording samples");
    return HB_SUCCESS;
}

hb_status_t hb_sim_init(hb_sim_t *sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_init: sim is NULL");
    double inf[3], tau[3];
    hb_hh_table_rates(&sim->table, sim->opt.v_init_mv, inf, tau);
    for (int g = 0; g < sim->n_groups; g++) {
        group_t *gr = &sim->groups[g];
        const size_t slots = (size_t)gr->k.blocks * (size_t)gr->k.width;
        const size_t size = slots * (size_t)gr->k.m, hh = slots * (size_t)gr->k.n_hh;
        for (size_t i = 0; i < size; i++) gr->v[i] = sim->opt.v_init_mv;
        for (size_t j = 0; j < hh; j++) { /* instance j: block b, node q, lane k */
            const size_t w = (size_t)gr->k.width, b = j / (w * (size_t)gr->k.n_hh);
            const size_t rest = j % (w * (size_t)gr->k.n_hh), q = rest / w, k = rest % w;
            for (int x = 0; x < 3; x++)
                gr->hh_state[((b * (size_t)gr->k.n_hh + q) * 3 + (size_t)x) * w + k] = inf[x];
        }
    }
    sim->step = 0;
    sim->times.count = 0;
    for (int p = 0; p < sim->n_probes; p++) {
        const hb_probe_t *pr = &sim->probes[p];
        sim->traces[p].count = 0;
        sim->spikes[p].count = 0;
        sim->above[p] = probe_v(sim, p) > pr->threshold_mv;
        sim->v_prev[p] = probe_v(sim, p);
    }
    hb_status_t status = record_sample(sim);
#ifdef HB_HAVE_CUDA
    if (sim->gpu) { /* the state moves to the device; the host copy is poisoned */
        for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
            status = hb_cuda_sim_set_state(sim->gpu, g, sim->groups[g].v, sim->groups[g].hh_state);
        if (status == HB_SUCCESS) status = hb_cuda_sim_set_probes(sim->gpu, sim->above, sim->v_prev);
        for (int g = 0; g < sim->n_groups; g++) {
            group_t *gr = &sim->groups[g];
            const size_t size = (size_t)gr->k.blocks * (size_t)gr->k.width * (size_t)gr->k.m;
            for (size_t i = 0; i < size; i++) gr->v[i] = NAN;
        }
    }
#endif
    if (status != HB_SUCCESS) return status;
    sim->initialised = 1;
    return HB_SUCCESS;
}

/* One block with the lane count a constant: the lane loops become vector code
 * (with GCC on x86-64 also an AVX2 clone, picked at load time where the CPU has
 * it; without FMA contraction, so the results are the same bits). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void step_block(const hb_step_group_t *g, const hb_step_params_t *p, int block,
                       double *scratch)
{
    double *d = scratch, *rhs = scratch + (size_t)g->m * (size_t)g->width;
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

int hb_sim_shared_groups(const hb_sim_t *sim)
{
    int n = 0;
    for (int g = 0; sim && g < sim->n_groups; g++) n += sim->groups[g].k.shared != 0;
    return n;
}

/* The step's solve of one block of HB_SIM_CPU_LANES lanes, shared u and l (the
 * same code and clones as step_block). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
#endif
static void solve_block(int m, const int *parent, const double *u, const double *l, double *d,
                        double *rhs)
{
    hb_hines_recip_lanes_inline(m, parent, HB_SIM_CPU_LANES, HB_SIM_CPU_LANES, u, l, 1, 0, d,
                                rhs);
}

/* The same with every row's factors given (a matrix that is the same every step). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__)
__attribute__((target_clones("avx2", "default")))
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

hb_status_t hb_sim_solve_benchmark(const hb_cable_t *cable, int cells, double dt_ms,
                                   int in_cache, int repeats, double *seconds)
{
    hb_clear_error();
    if (!cable || cells < 1 || !(dt_ms > 0.0) || repeats < 1 || !seconds)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_solve_benchmark: invalid argument");
    const int m = hb_cable_size(cable), W = HB_SIM_CPU_LANES;
    const int blocks = (cells + W - 1) / W;
    const size_t bsize = (size_t)m * (size_t)W, size = (size_t)blocks * bsize;
    double *u = malloc((size_t)m * sizeof *u), *l = malloc((size_t)m * sizeof *l);
    double *v = malloc((size_t)m * sizeof *v), *g = malloc((size_t)m * sizeof *g);
    double *d1 = malloc((size_t)m * sizeof *d1), *r1 = malloc((size_t)m * sizeof *r1);
    double *src_d = malloc(size * sizeof *src_d), *src_r = malloc(size * sizeof *src_r);
    double *d = malloc(size * sizeof *d), *rhs = malloc(size * sizeof *rhs);
    double *buf = malloc(2 * bsize * sizeof *buf);
    double *fac = malloc(3 * (size_t)m * sizeof *fac), *dw = malloc((size_t)m * sizeof *dw);
    unsigned char *fixed = malloc((size_t)m);
    hb_status_t st = HB_SUCCESS;
    if (!u || !l || !v || !g || !d1 || !r1 || !src_d || !src_r || !d || !rhs || !buf || !fac ||
        !dw || !fixed)
        st = hb_fail(HB_ERR_ALLOC, "hb_sim_solve_benchmark: out of memory");
    if (st == HB_SUCCESS) st = hb_cable_offdiag(cable, u, l);
    if (st == HB_SUCCESS) {
        for (int i = 0; i < m; i++) {
            v[i] = -65.0 + 10.0 * sin(0.37 * i);
            g[i] = 1e-4;
        }
        st = hb_cable_step_system(cable, dt_ms, u, l, v, g, NULL, NULL, d1, r1);
    }
    if (st == HB_SUCCESS) { /* every lane the model's matrix, right-hand sides differ */
        for (size_t b = 0; b < (size_t)blocks; b++)
            for (size_t i = 0; i < (size_t)m; i++)
                for (size_t k = 0; k < (size_t)W; k++) {
                    const size_t e = b * bsize + i * (size_t)W + k;
                    src_d[e] = d1[i];
                    src_r[e] = r1[i] * (1.0 + 1e-3 * (double)((b * (size_t)W + k) % 97));
                }
        const int *parent = hb_cable_parent(cable);
        double *bd = buf, *br = buf + bsize;
        /* in_cache 2: every row's factors computed once, as factor_fixed_rows does */
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
    free(u);
    free(l);
    free(v);
    free(g);
    free(d1);
    free(r1);
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

/* Steps 1-5 on every block. */
static void cpu_step(hb_sim_t *sim)
{
    const hb_step_params_t p = {sim->opt.dt_ms, sim->opt.method == HB_METHOD_CN ? 2.0 : 1.0,
                                ((double)sim->step + 0.5) * sim->opt.dt_ms,
                                sim->table.use_table ? sim->table.table : NULL, sim->table.q10};
    const int n = sim->total_blocks;
#ifdef HB_HAVE_OPENMP
    if (sim->backend == HB_BACKEND_OMP) {
        const int threads = sim->ctx->threads > 0 ? sim->ctx->threads : omp_get_max_threads();
#pragma omp parallel for schedule(static) num_threads(threads)
        for (int b = 0; b < n; b++) {
            const int t = omp_get_thread_num() < sim->threads ? omp_get_thread_num() : 0;
            step_block(&sim->groups[sim->block_group[b]].k, &p, sim->block_index[b],
                       sim->scratch + (size_t)t * sim->scratch_size);
        }
        return;
    }
#endif
    for (int b = 0; b < n; b++)
        step_block(&sim->groups[sim->block_group[b]].k, &p, sim->block_index[b], sim->scratch);
}

static hb_status_t detect(hb_sim_t *sim)
{
    const double t = (double)sim->step * sim->opt.dt_ms;
    const int interpolate = sim->opt.spike_time == HB_SPIKE_INTERPOLATE;
    for (int p = 0; p < sim->n_probes; p++) {
        const hb_probe_t *pr = &sim->probes[p];
        const double v = probe_v(sim, p), v0 = sim->v_prev[p];
        sim->v_prev[p] = v;
        double ts;
        if (pr->detect_spikes &&
            hb_spike_test(v, v0, pr->threshold_mv, &sim->above[p], t, sim->opt.dt_ms, interpolate,
                          &ts) &&
            !series_push(&sim->spikes[p], ts))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording spikes");
    }
    return HB_SUCCESS;
}

#ifdef HB_HAVE_CUDA
/* What the GPU recorded over a chunk of steps. */
static hb_status_t gpu_sink(void *user, int n_samples, const long *sample_step,
                            const double *samples, const int *spike_count, const double *spikes)
{
    hb_sim_t *sim = user;
    for (int r = 0; r < n_samples; r++) {
        if (!series_push(&sim->times, (double)sample_step[r] * sim->opt.dt_ms))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording samples");
        for (int p = 0; p < sim->n_probes; p++)
            if (!series_push(&sim->traces[p], samples[(size_t)r * (size_t)sim->n_probes + (size_t)p]))
                return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording samples");
    }
    for (int p = 0; p < sim->n_probes; p++)
        for (int c = 0; c < spike_count[p]; c++)
            if (!series_push(&sim->spikes[p], spikes[(size_t)c * (size_t)sim->n_probes + (size_t)p]))
                return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording spikes");
    return HB_SUCCESS;
}
#endif

hb_status_t hb_sim_advance(hb_sim_t *sim, long steps)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_advance: sim is NULL");
    if (steps < 0) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_advance: steps = %ld; expected >= 0", steps);
    if (!sim->initialised) {
        hb_status_t status = hb_sim_init(sim);
        if (status != HB_SUCCESS) return status;
    }
#ifdef HB_HAVE_CUDA
    if (sim->gpu) {
        hb_status_t status = hb_cuda_sim_advance(sim->gpu, sim->step, steps, gpu_sink, sim);
        if (status == HB_SUCCESS) sim->step += steps;
        return status;
    }
#endif
    for (long k = 0; k < steps; k++) {
        cpu_step(sim);
        sim->step++;
        hb_status_t status = detect(sim);
        if (status != HB_SUCCESS) return status;
        if (sim->step % sim->sample_every == 0 && (status = record_sample(sim)) != HB_SUCCESS)
            return status;
    }
    return HB_SUCCESS;
}

hb_status_t hb_sim_run(hb_sim_t *sim)
{
    hb_status_t status = hb_sim_init(sim);
    if (status != HB_SUCCESS) return status;
    /* NEURON's run: steps while t < tstop (up to rounding). */
    long steps = (long)ceil(sim->opt.t_stop_ms / sim->opt.dt_ms - 1e-9);
    return hb_sim_advance(sim, steps);
}

double hb_sim_time(const hb_sim_t *sim) { return sim ? (double)sim->step * sim->opt.dt_ms : 0.0; }

hb_status_t hb_sim_options(const hb_sim_t *sim, hb_sim_options_t *options)
{
    if (!sim || !options) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_options: NULL argument");
    *options = sim->opt;
    return HB_SUCCESS;
}

int hb_sim_cell_count(const hb_sim_t *sim) { return sim ? sim->n_cells : 0; }

hb_status_t hb_sim_voltages(const hb_sim_t *sim, int cell, const double **v)
{
    if (!sim || !v) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_voltages: NULL argument");
    if (cell < 0 || cell >= sim->n_cells)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_voltages: cell %d; expected 0..%d", cell,
                       sim->n_cells - 1);
    /* Gathered from the group's interleaved storage into the cell's slice of vbuf. */
    const group_t *gr = &sim->groups[sim->group_of[cell]];
    const size_t slot = (size_t)sim->slot_of[cell], w = (size_t)gr->k.width, m = (size_t)gr->k.m;
    const size_t base = (slot / w) * m * w + slot % w;
    double *out = sim->vbuf + sim->offset[cell];
#ifdef HB_HAVE_CUDA
    if (sim->gpu) { /* the cell's block from the device, then the cell's lane */
        hb_status_t status = hb_cuda_sim_get_v(sim->gpu, sim->group_of[cell], base - slot % w,
                                               m * w, gr->v + (base - slot % w));
        if (status != HB_SUCCESS) return status;
    }
#endif
    for (size_t i = 0; i < m; i++) out[i] = gr->v[base + i * w];
    *v = out;
    return HB_SUCCESS;
}

int hb_sim_probe_count(const hb_sim_t *sim) { return sim ? sim->n_probes : 0; }

const char *hb_sim_probe_name(const hb_sim_t *sim, int probe)
{
    return sim && probe >= 0 && probe < sim->n_probes ? sim->probes[probe].name : NULL;
}

hb_status_t hb_sim_sample_times(const hb_sim_t *sim, const double **t, int *count)
{
    if (!sim || !t || !count) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_sample_times: NULL argument");
    *t = sim->times.data;
    *count = sim->times.count;
    return HB_SUCCESS;
}

static hb_status_t probe_series(const hb_sim_t *sim, int probe, const series_t *all,
                                const double **x, int *count)
{
    if (!sim || !x || !count) return hb_fail(HB_ERR_INVALID_VALUE, "probe query: NULL argument");
    if (probe < 0 || probe >= sim->n_probes)
        return hb_fail(HB_ERR_INVALID_VALUE, "probe %d; expected 0..%d", probe, sim->n_probes - 1);
    *x = all[probe].data;
    *count = all[probe].count;
    return HB_SUCCESS;
}

hb_status_t hb_sim_probe_trace(const hb_sim_t *sim, int probe, const double **v, int *count)
{
    return probe_series(sim, probe, sim ? sim->traces : NULL, v, count);
}

hb_status_t hb_sim_spikes(const hb_sim_t *sim, int probe, const double **t, int *count)
{
    return probe_series(sim, probe, sim ? sim->spikes : NULL, t, count);
}

static FILE *open_in(const char *dir, const char *file, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, file);
    return fopen(path, "w");
}

hb_status_t hb_sim_write_csv(const hb_sim_t *sim, const char *dir)
{
    hb_clear_error();
    if (!sim || !dir) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_write_csv: NULL argument");
    char path[4096];
    FILE *f = open_in(dir, "probes.csv", path, sizeof path);
    if (!f) return hb_fail(HB_ERR_IO, "%s: cannot open for writing", path);
    fputs("t_ms", f);
    for (int p = 0; p < sim->n_probes; p++) fprintf(f, ",%s", sim->probes[p].name);
    fputc('\n', f);
    for (int k = 0; k < sim->times.count; k++) {
        fprintf(f, "%.10g", sim->times.data[k]);
        for (int p = 0; p < sim->n_probes; p++) fprintf(f, ",%.17g", sim->traces[p].data[k]);
        fputc('\n', f);
    }
    if (fclose(f) != 0) return hb_fail(HB_ERR_IO, "%s: write failed", path);
    if (!(f = open_in(dir, "spikes.csv", path, sizeof path)))
        return hb_fail(HB_ERR_IO, "%s: cannot open for writing", path);
    fputs("probe,t_ms\n", f);
    for (int p = 0; p < sim->n_probes; p++)
        for (int k = 0; k < sim->spikes[p].count; k++)
            fprintf(f, "%s,%.12g\n", sim->probes[p].name, sim->spikes[p].data[k]);
    if (fclose(f) != 0) return hb_fail(HB_ERR_IO, "%s: write failed", path);
    return HB_SUCCESS;
}
