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
 * same hh nodes form a group, stored Block-Interleaved in blocks of the
 * backend's width (src/sim/sim_layout.c). Steps 1-5 run as one pass per block
 * (hb_step_lanes, src/common/sim_step.h) in the context's backend's engine
 * (backend/sim_ops.h): on the CPU while the block is in cache, OpenMP spreading
 * the blocks over the cores (src/cpu/sim_cpu.c); with CUDA in a kernel, one
 * thread per cell, the state on the device (src/cuda/sim_cuda.cu). This file:
 * the hb_sim_* life cycle, initial state and the advance loop; the recordings
 * are in src/sim/sim_record.c.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "core/context.h"
#include "registry/registry.h"
#include "sim/sim_engine.h"

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
    if (o->threads < 0 || o->threads > HB_MAX_THREADS)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: threads = %d; expected 0..%d (0: all)",
                       o->threads, HB_MAX_THREADS);
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

/* The backend's engine over the layout's host arrays. */
static hb_status_t create_engine(hb_sim_t *sim)
{
    hb_step_group_t *views = malloc((size_t)sim->n_groups * sizeof *views);
    if (!views) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int g = 0; g < sim->n_groups; g++) views[g] = sim->groups[g].k;
    hb_sim_desc_t desc;
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
    if (status == HB_SUCCESS) status = sim->ops->create(sim->ctx, &desc, &sim->engine);
    free(detect);
    free(threshold);
    free(views);
    return status;
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
        s->ops = s->ctx->ops->sim;
        if (hb_context_backend(s->ctx) == HB_BACKEND_OMP && options->threads > 0)
            status = hb_context_set_threads(s->ctx, options->threads);
    }
    if (status == HB_SUCCESS && !s->ops)
        status = hb_fail(HB_ERR_NOT_SUPPORTED, "simulation: backend '%s' has no simulator",
                         hb_backend_name(hb_context_backend(s->ctx)));
    for (int c = 0; c < n_cells && status == HB_SUCCESS && !s->ops->synapses; c++)
        if (cells[c]->n_synapses)
            status = hb_fail(HB_ERR_NOT_SUPPORTED,
                             "simulation: cell %d has synapses, which backend '%s' does not "
                             "step; expected backend seq or omp", c,
                             hb_backend_name(hb_context_backend(s->ctx)));
    hb_hh_table_init(&s->table, options->celsius, options->hh_table);
    if (status == HB_SUCCESS) status = hb_sim_gather(s);
    if (status == HB_SUCCESS) status = hb_sim_make_groups(s);
    if (status == HB_SUCCESS) hb_sim_locate_probes(s);
    if (status == HB_SUCCESS) status = create_engine(s);
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
    if (sim->engine) sim->ops->destroy(sim->engine);
    hb_sim_free_groups(sim);
    free(sim->group_of);
    free(sim->slot_of);
    hb_sim_free_records(sim);
    free(sim->cells);
    if (sim->ctx) hb_context_destroy(sim->ctx);
    hb_sim_owned_free(&sim->owned);
    free(sim);
    return HB_SUCCESS;
}

hb_status_t hb_sim_deliver(hb_sim_t *sim, int cell, int synapse, double weight)
{
    if (!sim || cell < 0 || cell >= sim->n_cells || synapse < 0 ||
        synapse >= sim->cells[cell]->n_synapses)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: event for cell %d, synapse %d: no such "
                       "synapse", cell, synapse);
    const hb_syn_site_t *site;
    size_t stride = 1;
    double *state = hb_sim_synapse_state(sim, cell, synapse, &site, &stride);
    hb_syn_receive(site, state, stride, weight);
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
        if (gr->syn_state) /* NEURON's INITIAL: g = 0 (A = B = 0) */
            memset(gr->syn_state, 0, gr->n_syn_state * sizeof *gr->syn_state);
    }
    sim->step = 0;
    hb_sim_reset_records(sim);
    hb_status_t status = hb_sim_record_sample(sim);
    /* the state to the engine (the CPU's steps these arrays in place) */
    for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
        status = sim->ops->set_state(sim->engine, g, sim->groups[g].v, sim->groups[g].hh_state);
    if (status == HB_SUCCESS) status = sim->ops->set_probes(sim->engine, sim->above, sim->v_prev);
    if (!sim->ops->steps_in_place) /* a stale host copy is poisoned: only get_v reads it */
        for (int g = 0; g < sim->n_groups; g++) {
            group_t *gr = &sim->groups[g];
            const size_t size = (size_t)gr->k.blocks * (size_t)gr->k.width * (size_t)gr->k.m;
            for (size_t i = 0; i < size; i++) gr->v[i] = NAN;
        }
    if (status != HB_SUCCESS) return status;
    sim->initialised = 1;
    return HB_SUCCESS;
}

int hb_sim_shared_groups(const hb_sim_t *sim)
{
    int n = 0;
    for (int g = 0; sim && g < sim->n_groups; g++) n += sim->groups[g].k.shared != 0;
    return n;
}

hb_status_t hb_sim_solve_benchmark(const hb_cable_t *cable, int cells, double dt_ms,
                                   int in_cache, int repeats, double *seconds)
{
    hb_clear_error();
    if (!cable || cells < 1 || !(dt_ms > 0.0) || repeats < 1 || !seconds)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_solve_benchmark: invalid argument");
    /* the CPU engine's solve, whatever backends this build has */
    const hb_backend_ops_t *cpu = hb_registry_ops(HB_BACKEND_SEQ);
    if (!cpu || !cpu->sim || !cpu->sim->solve_benchmark)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "hb_sim_solve_benchmark: no CPU simulator");
    const int m = hb_cable_size(cable);
    double *u = malloc((size_t)m * sizeof *u), *l = malloc((size_t)m * sizeof *l);
    double *v = malloc((size_t)m * sizeof *v), *g = malloc((size_t)m * sizeof *g);
    double *d1 = malloc((size_t)m * sizeof *d1), *r1 = malloc((size_t)m * sizeof *r1);
    hb_status_t st = HB_SUCCESS;
    if (!u || !l || !v || !g || !d1 || !r1)
        st = hb_fail(HB_ERR_ALLOC, "hb_sim_solve_benchmark: out of memory");
    if (st == HB_SUCCESS) st = hb_cable_offdiag(cable, u, l);
    if (st == HB_SUCCESS) {
        for (int i = 0; i < m; i++) {
            v[i] = -65.0 + 10.0 * sin(0.37 * i);
            g[i] = 1e-4;
        }
        st = hb_cable_step_system(cable, dt_ms, u, l, v, g, NULL, NULL, d1, r1);
    }
    if (st == HB_SUCCESS)
        st = cpu->sim->solve_benchmark(m, hb_cable_parent(cable), u, l, d1, r1, cells, in_cache,
                                       repeats, seconds);
    free(u);
    free(l);
    free(v);
    free(g);
    free(d1);
    free(r1);
    return st;
}

hb_status_t hb_sim_advance(hb_sim_t *sim, long steps)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_advance: sim is NULL");
    if (steps < 0) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_advance: steps = %ld; expected >= 0", steps);
    if (!sim->initialised) {
        hb_status_t status = hb_sim_init(sim);
        if (status != HB_SUCCESS) return status;
    }
    hb_status_t status = sim->ops->advance(sim->engine, sim->step, steps, hb_sim_record_sink, sim);
    if (status == HB_SUCCESS) sim->step += steps;
    return status;
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
    /* the cell's block from the engine, then the cell's lane */
    hb_status_t status = sim->ops->get_v(sim->engine, sim->group_of[cell], base - slot % w, m * w,
                                         gr->v + (base - slot % w));
    if (status != HB_SUCCESS) return status;
    for (size_t i = 0; i < m; i++) out[i] = gr->v[base + i * w];
    *v = out;
    return HB_SUCCESS;
}
