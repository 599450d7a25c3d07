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
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/status.h"
#include "core/context.h"
#include "registry/registry.h"
#include "sim/sim_cat.h"
#include "sim/sim_engine.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

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
    for (int i = 0; i < owned->n_morphs; i++) {
        hb_morph_destroy(owned->morphs[i]);
        if (owned->morph_keys) free(owned->morph_keys[i]);
    }
    free(owned->models);
    free(owned->morphs);
    free(owned->morph_keys);
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
    /* checked as doubles: the step count is converted to a long only once it fits */
    const double steps = o->t_stop_ms / o->dt_ms;
    if (!(steps <= (double)HB_SIM_MAX_STEPS))
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: t_stop = %g ms at dt = %g ms is %.3g "
                       "steps; expected at most %.0e (HB_SIM_MAX_STEPS)", o->t_stop_ms, o->dt_ms,
                       steps, (double)HB_SIM_MAX_STEPS);
    hb_status_t status;
    if ((status = hb_limit_check(&hb_limit_potential, o->v_init_mv, "simulation: v_init")) != HB_SUCCESS ||
        (status = hb_limit_check(&hb_limit_celsius, o->celsius, "simulation: celsius")) != HB_SUCCESS)
        return status;
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
    if (!(ratio <= (double)HB_SIM_MAX_STEPS)) /* before lround: beyond a long it is undefined */
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: sample_dt = %g ms is %.3g steps of dt = "
                       "%g ms; expected at most %.0e", o->sample_dt_ms, ratio, o->dt_ms,
                       (double)HB_SIM_MAX_STEPS);
    const long every = o->sample_dt_ms == 0.0 ? 1 : lround(ratio);
    if (o->sample_dt_ms > 0.0 && (every < 1 || fabs(ratio - (double)every) > 1e-6 * ratio))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "simulation: sample_dt = %g ms is not a multiple of dt = %g ms", o->sample_dt_ms,
                       o->dt_ms);
    *sample_every = every;
    return HB_SUCCESS;
}

/* The backend's engine over the layout's host arrays. */
/* Catalogue mechanisms: only where the backend's engine steps them. */
static hb_status_t check_catalogue(const hb_sim_t *sim)
{
    for (int g = 0; g < sim->n_groups; g++) {
        const hb_step_cat_t *cat = sim->groups[g].cat;
        if (!cat) continue;
        for (int q = 0; q < cat->n_mech; q++) /* point processes first: their own message */
            if (cat->mech[q].mech->kind != HB_CAT_DENSITY && !sim->ops->points)
                return hb_fail(HB_ERR_NOT_SUPPORTED,
                               "simulation: backend '%s' does not step catalogue point processes "
                               "(%s) yet; expected backend seq or omp, or the hard-coded "
                               "synapses (\"type\": \"expsyn\" or \"exp2syn\")",
                               hb_backend_name(hb_context_backend(sim->ctx)),
                               cat->mech[q].mech->name);
        if (!sim->ops->catalogue)
            return hb_fail(HB_ERR_NOT_SUPPORTED,
                           "simulation: backend '%s' does not step catalogue mechanisms (%s) "
                           "yet; expected backend seq or omp",
                           hb_backend_name(hb_context_backend(sim->ctx)), cat->mech[0].mech->name);
        for (int q = 0; sim->ops->catalogue == HB_SIM_CAT_BUILTIN && q < cat->n_mech; q++) {
            const hb_cat_mech_t *m = cat->mech[q].mech;
            /* the device's delivery has no connection lists; its self-event rounds have, and
             * the generator gives every FOR_NETCONS mechanism their kernels: only a catalogue
             * built before lacks them */
            if (m->for_netcons && !m->cpu->net_receive_self)
                return hb_fail(HB_ERR_NOT_SUPPORTED,
                               "simulation: %s's NET_RECEIVE has FOR_NETCONS, and its catalogue "
                               "has no self-event kernels (net_receive_self), through which "
                               "backend '%s' gives a point process its connections; expected "
                               "the catalogue rebuilt by this version's build-catalogue --cuda, "
                               "or backend seq or omp",
                               m->name, hb_backend_name(hb_context_backend(sim->ctx)));
            if (cat->mech[q].builtin < 0 &&
                (!m->cuda || !m->cuda->current || !m->cuda->state ||
                 (m->kind != HB_CAT_DENSITY && m->n_weight >= 0 && !m->cuda->net_receive)))
                return hb_fail(HB_ERR_NOT_SUPPORTED,
                               "simulation: %s is a user catalogue's mechanism without CUDA "
                               "kernels (its catalogue was built by build-catalogue without "
                               "nvcc), and backend '%s' steps the built-in catalogues' and "
                               "those with CUDA kernels; expected the catalogue rebuilt with "
                               "build-catalogue --cuda, or backend seq or omp",
                               m->name, hb_backend_name(hb_context_backend(sim->ctx)));
        }
    }
    return HB_SUCCESS;
}

/* Cell c's targets where some synapses are catalogue point processes: a hard-coded one's state,
 * or a point process's mechanism in the group and instance (its rank among the cell's
 * synapses of that mechanism, the order sim_cat.c lays them out). */
static hb_status_t point_targets(hb_sim_t *sim, int c)
{
    const hb_model_t *md = hb_sim_cell_get(sim, c);
    if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
    const group_t *gr = &sim->groups[sim->group_of[c]];
    const int slot = sim->slot_of[c];
    int *seen = calloc((size_t)gr->cat->n_mech + 1, sizeof *seen); /* instances so far */
    if (!seen) {
        hb_sim_cell_put(sim, c, md);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    for (int q = 0, h = 0; q < md->n_synapses; q++) {
        hb_sim_target_t *t = &sim->targets[sim->target_first[c] + q];
        const hb_cat_mech_t *mech = md->synapses[q].mech;
        if (!mech) {
            const hb_syn_site_t *site;
            size_t stride = 1;
            const double *state = hb_sim_synapse_state(sim, c, h++, &site, &stride);
            *t = (hb_sim_target_t){sim->group_of[c], (int)(site - gr->syns),
                                   (size_t)(state - gr->syn_state), stride, 0, 0, 0};
            continue;
        }
        int point = 0;
        while (point < gr->cat->n_mech && gr->cat->mech[point].mech != mech) point++;
        *t = (hb_sim_target_t){sim->group_of[c], -1, 0, 0, point + 1, slot, seen[point]++};
    }
    free(seen);
    hb_sim_cell_put(sim, c, md);
    return HB_SUCCESS;
}

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
    desc.check_every = HB_SIM_CHECK_STEPS;
    desc.check_last = hb_sim_steps(sim);
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
    /* the synapses events reach, cell by cell */
    sim->target_first = malloc(((size_t)sim->n_cells + 1) * sizeof *sim->target_first);
    if (!sim->target_first) status = hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    int n_targets = 0;
    for (int c = 0; c < sim->n_cells && status == HB_SUCCESS; c++) {
        sim->target_first[c] = n_targets;
        n_targets += sim->info[c].n_synapses;
    }
    if (status == HB_SUCCESS) {
        sim->target_first[sim->n_cells] = n_targets;
        sim->targets = malloc(((size_t)n_targets + 1) * sizeof *sim->targets);
        if (!sim->targets) status = hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    for (int c = 0; c < sim->n_cells && status == HB_SUCCESS; c++) {
        if (sim->info[c].n_hand < sim->info[c].n_synapses) { /* with point processes */
            status = point_targets(sim, c);
            continue;
        }
        for (int q = 0; q < sim->info[c].n_synapses; q++) {
            const hb_syn_site_t *site;
            size_t stride = 1;
            const double *state = hb_sim_synapse_state(sim, c, q, &site, &stride);
            const group_t *gr = &sim->groups[sim->group_of[c]];
            sim->targets[sim->target_first[c] + q] = (hb_sim_target_t){
                sim->group_of[c], (int)(site - gr->syns), (size_t)(state - gr->syn_state), stride,
                0, 0, 0};
        }
    }
    desc.n_targets = n_targets;
    const int devices = hb_context_devices(sim->ctx);
    desc.device = devices > 0 ? sim->device % devices : 0;
    desc.targets = sim->targets;
    desc.weights = &sim->weights;
    desc.n_weights = &sim->n_weights;
    desc.netcon_head = &sim->netcon_head;
    desc.netcon_next = &sim->netcon_next;
    desc.self_events = &sim->self_events;
    /* self-events (net_send, net_move, WATCH, FOR_NETCONS, net_event): every engine delivers
     * them from the queue, whose requests of net_event are the spikes hb_sim_point_spikes hands
     * the network (the CPU engine's merge and the GPU's rounds alike) */
    for (int g = 0; g < sim->n_groups; g++)
        for (int q = 0; sim->groups[g].k.cat && q < sim->groups[g].k.cat->n_mech; q++)
            if (sim->groups[g].k.cat->mech[q].mech->cpu->net_receive_self) sim->self_mechs++;
    if (status == HB_SUCCESS) status = sim->ops->create(sim->ctx, &desc, &sim->engine);
    free(detect);
    free(threshold);
    free(views);
    return status;
}

double hb_physical_memory(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (double)pages * (double)size : 0.0;
}

hb_status_t hb_sim_create(hb_model_t *const *cells, int n_cells, const hb_sim_options_t *options,
                          hb_sim_t **sim)
{
    return hb_sim_create_on(cells, n_cells, options, 0, sim);
}

static hb_model_t *array_get(void *user, int cell) { return ((hb_model_t *const *)user)[cell]; }

hb_status_t hb_sim_create_on(hb_model_t *const *cells, int n_cells,
                             const hb_sim_options_t *options, int device, hb_sim_t **sim)
{
    if (sim) *sim = NULL;
    if (!cells || n_cells < 1 || !options) {
        hb_clear_error();
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_create: expected at least one cell and options");
    }
    for (int c = 0; c < n_cells; c++)
        if (!cells[c]) {
            hb_clear_error();
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_create: cell %d is NULL", c);
        }
    /* models only read: any thread may read any of them */
    const hb_sim_cell_source_t source = {(void *)cells, array_get, NULL, 1};
    return hb_sim_create_from(&source, n_cells, options, device, sim);
}

hb_status_t hb_sim_create_from(const hb_sim_cell_source_t *source, int n_cells,
                               const hb_sim_options_t *options, int device, hb_sim_t **sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_create: sim is NULL");
    *sim = NULL;
    if (!source || !source->get || n_cells < 1 || !options)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_create: expected at least one cell and options");
    long every;
    hb_status_t status = check_options(options, &every);
    if (status != HB_SUCCESS) return status;
    hb_sim_t *s = calloc(1, sizeof *s);
    if (!s) return hb_fail(HB_ERR_ALLOC, "hb_sim_create: out of memory");
    s->opt = *options;
    s->device = device > 0 ? device : 0;
    s->sample_every = every;
    s->memory_bytes = hb_physical_memory();
    s->n_cells = n_cells;
    s->source = *source;
    s->build_threads = 1;
#ifdef HB_HAVE_OPENMP
    if (source->thread_safe) /* checked above: 0 .. HB_MAX_THREADS */
        s->build_threads = options->threads > 0 ? options->threads : omp_get_max_threads();
#endif
    if (source->get == array_get) { /* the caller's models, kept for the simulation's life */
        s->cells = malloc((size_t)n_cells * sizeof *s->cells);
        if (!s->cells) status = hb_fail(HB_ERR_ALLOC, "hb_sim_create: out of memory");
        else memcpy(s->cells, source->user, (size_t)n_cells * sizeof *s->cells);
    }
    s->info = calloc((size_t)n_cells, sizeof *s->info);
    if (!s->info) status = hb_fail(HB_ERR_ALLOC, "hb_sim_create: out of memory");
    if (status == HB_SUCCESS) status = hb_context_create(options->backend, &s->ctx);
    if (status == HB_SUCCESS) {
        s->ops = s->ctx->ops->sim;
        if (hb_context_backend(s->ctx) == HB_BACKEND_OMP && options->threads > 0)
            status = hb_context_set_threads(s->ctx, options->threads);
    }
    if (status == HB_SUCCESS && !s->ops)
        status = hb_fail(HB_ERR_NOT_SUPPORTED, "simulation: backend '%s' has no simulator",
                         hb_backend_name(hb_context_backend(s->ctx)));
    if (status == HB_SUCCESS) status = hb_sim_survey(s);
    for (int c = 0; c < n_cells && status == HB_SUCCESS && !s->ops->synapses; c++)
        if (s->info[c].n_synapses)
            status = hb_fail(HB_ERR_NOT_SUPPORTED,
                             "simulation: cell %d has synapses, which backend '%s' does not "
                             "step; expected backend seq or omp", c,
                             hb_backend_name(hb_context_backend(s->ctx)));
    hb_hh_table_init(&s->table, options->celsius, options->hh_table);
    if (status == HB_SUCCESS) status = hb_sim_gather(s);
    if (status == HB_SUCCESS) status = hb_sim_make_groups(s);
    if (status == HB_SUCCESS) status = check_catalogue(s);
    if (status == HB_SUCCESS) hb_sim_locate_probes(s);
    if (status == HB_SUCCESS) status = create_engine(s);
    if (status != HB_SUCCESS) {
        hb_sim_destroy(s);
        return status;
    }
    *sim = s;
    return HB_SUCCESS;
}

size_t hb_sim_device_bytes(const hb_sim_t *sim)
{
    return sim && sim->ops && sim->ops->device_bytes && sim->engine
               ? sim->ops->device_bytes(sim->engine)
               : 0;
}

int hb_sim_fused_groups(const hb_sim_t *sim)
{
    return sim && sim->ops && sim->ops->fused_groups && sim->engine
               ? sim->ops->fused_groups(sim->engine)
               : 0;
}

int hb_sim_cell_synapses(const hb_sim_t *sim, int cell)
{
    return sim && cell >= 0 && cell < sim->n_cells ? sim->info[cell].n_synapses : 0;
}

int hb_sim_cell_point_source(const hb_sim_t *sim, int cell)
{
    if (!sim || cell < 0 || cell >= sim->n_cells || sim->info[cell].spike_source < 0) return -1;
    return sim->target_first[cell] + sim->info[cell].spike_source;
}

void hb_sim_keep_point_spikes(hb_sim_t *sim, int keep)
{
    if (sim) sim->self_events.keep_spikes = keep != 0;
}

const hb_self_spike_t *hb_sim_point_spikes(const hb_sim_t *sim, size_t *n)
{
    *n = sim ? sim->self_events.n_spikes : 0;
    return sim ? sim->self_events.spikes : NULL;
}

void hb_sim_point_spikes_clear(hb_sim_t *sim)
{
    if (sim) sim->self_events.n_spikes = 0;
}

int hb_sim_cell_detector(const hb_sim_t *sim, int cell)
{
    if (!sim || cell < 0 || cell >= sim->n_cells) return -1;
    for (int p = sim->probe_first[cell]; p < sim->probe_first[cell + 1]; p++)
        if (sim->probes[p].detect_spikes) return p;
    return -1;
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
    free(sim->info);
    if (sim->ctx) hb_context_destroy(sim->ctx);
    hb_sim_owned_free(&sim->owned);
    free(sim->events);
    free(sim->target_first);
    free(sim->targets);
    free(sim->weights);
    free(sim->weight_target);
    free(sim->weight0);
    free(sim->netcon_head);
    free(sim->netcon_tail);
    free(sim->netcon_next);
    hb_self_free(&sim->self_events);
    free(sim);
    return HB_SUCCESS;
}

/* Cell `cell` as messages name it: "gid 7" (a network's label and id) or "cell 3". */
static void cell_name(const hb_sim_t *sim, int cell, char *who, size_t size)
{
    if (sim->cell_ids) snprintf(who, size, "%s %u", sim->cell_label, sim->cell_ids[cell]);
    else snprintf(who, size, "cell %d", cell);
}

/* HB_ERR_INVALID_VALUE for a point process's refusal at target `target` (the simulation's):
 * `what`, its text (mechanism, time, the count and its bound), where (the synapse and cell),
 * and for a FROM loop's (endless 0) what takes a run there. */
static hb_status_t refused(const hb_sim_t *sim, int target, const char *what, int endless)
{
    int cell = 0, last = sim->n_cells - 1; /* the cell whose targets hold it: the last one */
    while (cell < last) {                  /* whose first is at most `target` */
        const int mid = cell + (last - cell + 1) / 2;
        if (sim->target_first[mid] <= target) cell = mid;
        else last = mid - 1;
    }
    char who[64];
    cell_name(sim, cell, who, sizeof who);
    return hb_fail(HB_ERR_INVALID_VALUE, "simulation: %s, at synapse %d in %s%s", what,
                   target - sim->target_first[cell], who,
                   endless ? "" : "; a STATE or parameter is out of the mechanism's range (a "
                                  "forged checkpoint, or a model's value)");
}

/* The same for a FROM loop's refusal *loop at event time t [ms]. */
static hb_status_t loop_refused(const hb_sim_t *sim, int target, const hb_cat_fault_t *loop,
                                double t)
{
    char what[256];
    hb_cat_fault_text(loop, t, what, sizeof what);
    return refused(sim, target, what, 0);
}

hb_status_t hb_sim_deliver(hb_sim_t *sim, int cell, int synapse, double weight)
{
    if (!sim || cell < 0 || cell >= sim->n_cells || synapse < 0 ||
        synapse >= sim->info[cell].n_synapses)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: event for cell %d, synapse %d: no such "
                       "synapse", cell, synapse);
    if (!sim->ops->steps_in_place)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "simulation: backend '%s' keeps its state on the "
                       "device; events go through hb_sim_queue_events",
                       hb_backend_name(hb_context_backend(sim->ctx)));
    const int target = sim->target_first[cell] + synapse;
    const hb_sim_target_t *t = &sim->targets[target];
    if (t->point) { /* a connection of its own: (weight, 0, ...), its INITIAL, the event */
        const double now = (double)sim->step * sim->opt.dt_ms;
        const hb_cat_netcons_t nc = {sim->weights, sim->netcon_head, sim->netcon_next, target};
        hb_cat_fault_t loop = {NULL, NULL, 0, 0.0};
        hb_status_t st = hb_cat_net_deliver(&sim->self_events, target, &sim->groups[t->group].k,
                                            t->point - 1, t->slot, t->inst, sim->weights, -1,
                                            weight, now, sim->opt.dt_ms, &nc, &loop);
        return loop.line ? loop_refused(sim, target, &loop, now) : st;
    }
    const hb_syn_site_t *site;
    size_t stride = 1;
    double *state = hb_sim_synapse_state(sim, cell, hb_sim_hand_index(sim, cell, synapse), &site,
                                         &stride);
    hb_syn_receive(site, state, stride, weight);
    return HB_SUCCESS;
}

int hb_sim_cell_points(const hb_sim_t *sim, int cell)
{
    return sim && cell >= 0 && cell < sim->n_cells
               ? sim->info[cell].n_synapses - sim->info[cell].n_hand : 0;
}

int hb_sim_hand_index(const hb_sim_t *sim, int cell, int synapse)
{
    int h = 0;
    for (int q = sim->target_first[cell]; q < sim->target_first[cell] + synapse; q++)
        h += sim->targets[q].point == 0;
    return h;
}

hb_status_t hb_sim_add_weights(hb_sim_t *sim, int cell, int synapse, double weight, int *index)
{
    if (!index) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_add_weights: index is NULL");
    *index = -1;
    if (!sim || cell < 0 || cell >= sim->n_cells || synapse < 0 ||
        synapse >= sim->info[cell].n_synapses)
        return hb_fail(HB_ERR_INVALID_VALUE, "simulation: weights for cell %d, synapse %d: no "
                       "such synapse", cell, synapse);
    const int target = sim->target_first[cell] + synapse;
    if (!sim->targets[target].point) return HB_SUCCESS;
    if (sim->n_weights == INT_MAX)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "simulation: more than %d connections to point "
                       "processes", INT_MAX);
    if (!sim->netcon_head) { /* every target's list, empty */
        const size_t n_targets = (size_t)sim->target_first[sim->n_cells];
        sim->netcon_head = malloc((n_targets + 1) * sizeof *sim->netcon_head);
        sim->netcon_tail = malloc((n_targets + 1) * sizeof *sim->netcon_tail);
        if (!sim->netcon_head || !sim->netcon_tail) {
            free(sim->netcon_head);
            free(sim->netcon_tail);
            sim->netcon_head = sim->netcon_tail = NULL;
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for the connections' lists "
                           "of %zu synapses", n_targets);
        }
        for (size_t q = 0; q < n_targets; q++) sim->netcon_head[q] = sim->netcon_tail[q] = -1;
    }
    if (sim->n_weights == sim->cap_weights) {
        const int cap = sim->cap_weights < INT_MAX / 2 ? 2 * sim->cap_weights + 16 : INT_MAX;
        double *w = realloc(sim->weights, (size_t)cap * HB_CAT_MAX_WEIGHT * sizeof *w);
        if (w) sim->weights = w;
        int *tg = realloc(sim->weight_target, (size_t)cap * sizeof *tg);
        if (tg) sim->weight_target = tg;
        double *w0 = realloc(sim->weight0, (size_t)cap * sizeof *w0);
        if (w0) sim->weight0 = w0;
        int *nx = realloc(sim->netcon_next, (size_t)cap * sizeof *nx);
        if (nx) sim->netcon_next = nx;
        if (!w || !tg || !w0 || !nx)
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d weight vectors", cap);
        sim->cap_weights = cap;
    }
    const int i = sim->n_weights++;
    sim->weight_target[i] = target;
    sim->netcon_next[i] = -1; /* the target's last connection (FOR_NETCONS's order) */
    if (sim->netcon_tail[target] >= 0) sim->netcon_next[sim->netcon_tail[target]] = i;
    else sim->netcon_head[target] = i;
    sim->netcon_tail[target] = i;
    sim->weight0[i] = weight;
    memset(sim->weights + (size_t)i * HB_CAT_MAX_WEIGHT, 0, HB_CAT_MAX_WEIGHT * sizeof(double));
    sim->weights[(size_t)i * HB_CAT_MAX_WEIGHT] = weight;
    *index = i;
    return HB_SUCCESS;
}

int hb_sim_weights_of(const hb_sim_t *sim, int cell, int synapse, int64_t weights)
{
    if (weights == -1) return 1;
    return sim && weights >= 0 && weights < sim->n_weights && cell >= 0 &&
           cell < sim->n_cells && synapse >= 0 && synapse < sim->info[cell].n_synapses &&
           sim->weight_target[weights] == sim->target_first[cell] + synapse;
}

/* hb_sim_init: every connection's weight vector (weight, 0, ...) and NET_RECEIVE's INITIAL,
 * in the order the connections were added (NEURON's NetCon init, after the INITIAL blocks). */
static void init_weights(hb_sim_t *sim)
{
    for (int i = 0; i < sim->n_weights; i++) {
        double *w = sim->weights + (size_t)i * HB_CAT_MAX_WEIGHT;
        memset(w, 0, HB_CAT_MAX_WEIGHT * sizeof *w);
        w[0] = sim->weight0[i];
        const hb_sim_target_t *t = &sim->targets[sim->weight_target[i]];
        const hb_cat_netcons_t nc = {sim->weights, sim->netcon_head, sim->netcon_next,
                                     sim->weight_target[i]};
        hb_cat_point_event(&sim->groups[t->group].k, t->point - 1, t->slot, t->inst, w, 0.0,
                           sim->opt.dt_ms, 1, &nc, NULL);
    }
}

/* hb_sim_init, after the other INITIALs: the INITIAL of every instance of a mechanism that
 * sends itself events, target by target, its net_send requests (no weight vector: NEURON's
 * null _args, zeros here) the queue's first events. */
static hb_status_t init_self_events(hb_sim_t *sim)
{
    hb_self_clear(&sim->self_events);
    for (int i = 0; sim->self_mechs && i < sim->target_first[sim->n_cells]; i++) {
        const hb_sim_target_t *t = &sim->targets[i];
        if (!t->point) continue;
        const hb_step_group_t *g = &sim->groups[t->group].k;
        const hb_cat_mech_t *m = g->cat->mech[t->point - 1].mech;
        if (!m->cpu->init_self) continue;
        hb_cat_sends_t sends = {0};
        hb_cat_point_init_self(g, t->point - 1, t->slot, t->inst, sim->opt.dt_ms, &sends);
        hb_status_t st = hb_self_requests(&sim->self_events, i, -1, 0.0, &sends, 0.0,
                                          sim->opt.dt_ms, m->name);
        if (st != HB_SUCCESS) return st;
    }
    return HB_SUCCESS;
}

/* hb_sim_init, after the connections' INITIAL: the self-events at t = 0 (INITIAL's
 * net_send(0, flag), and those their NET_RECEIVE sends with no delay) delivered before the
 * t = 0 sample, as NEURON's finitialize delivers its events at t = 0 before its first record
 * (later in step 0 they wait for the step: NEURON delivers them after the record). Keyed to
 * step -1, they come in the step's order (target, time, sending), round after round: each
 * round's sends of no delay the next's. A target delivered more than HB_SELF_STEP_MAX of them
 * is refused (counted over the rounds). */
static hb_status_t deliver_at_zero(hb_sim_t *sim)
{
    hb_self_queue_t *q = &sim->self_events;
    hb_self_event_t se;
    const double dt = sim->opt.dt_ms;
    int *count = NULL; /* per target, from the first round that delivers something */
    hb_status_t st = HB_SUCCESS;
    while (st == HB_SUCCESS && hb_self_restep(q, 0.0, -1) > 0) {
        if (!count && !(count = calloc((size_t)sim->target_first[sim->n_cells] + 1, sizeof *count)))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for the self-events at t = 0");
        while (st == HB_SUCCESS && hb_self_due(q, -1, &se)) {
            const hb_sim_target_t *t = &sim->targets[se.target];
            const hb_step_group_t *g = &sim->groups[t->group].k;
            if (++count[se.target] > HB_SELF_STEP_MAX) {
                char what[256];
                hb_self_endless_text(g->cat->mech[t->point - 1].mech->name, se.time, what,
                                     sizeof what);
                st = refused(sim, se.target, what, 1);
                break;
            }
            const hb_cat_netcons_t nc = {sim->weights, sim->netcon_head, sim->netcon_next,
                                         se.target};
            hb_cat_fault_t loop = {NULL, NULL, 0, 0.0};
            st = hb_cat_self_deliver(q, &se, g, t->point - 1, t->slot, t->inst, sim->weights, &nc,
                                     dt, &loop);
            if (loop.line) st = loop_refused(sim, se.target, &loop, se.time);
        }
    }
    free(count);
    return st;
}

/* Events in the engine's form (targets); checked as hb_sim_queue_events says when `ordered`. */
static hb_status_t engine_events(hb_sim_t *sim, size_t n, const hb_sim_event_t *events,
                                 int ordered)
{
    if (!sim || (n && !events)) return hb_fail(HB_ERR_INVALID_VALUE, "simulation: events: NULL argument");
    if (n > sim->cap_events) {
        hb_sim_engine_event_t *p = realloc(sim->events, n * sizeof *p);
        if (!p) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu events", n);
        sim->events = p;
        sim->cap_events = n;
    }
    for (size_t k = 0; k < n; k++) {
        const hb_sim_event_t *e = &events[k];
        if (e->cell < 0 || e->cell >= sim->n_cells || e->synapse < 0 ||
            e->synapse >= sim->info[e->cell].n_synapses)
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: event %zu for cell %d, synapse %d: "
                           "no such synapse", k, e->cell, e->synapse);
        const hb_sim_event_t *b = k ? &events[k - 1] : NULL; /* the one before */
        if (e->step < sim->step ||
            (ordered && b && (e->step < b->step ||
                              (e->step == b->step && (e->cell < b->cell ||
                               (e->cell == b->cell && e->synapse < b->synapse))))))
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: event %zu (step %ld, cell %d, "
                           "synapse %d) after %ld steps done; expected events ordered by step, "
                           "cell and synapse, none past", k, e->step, e->cell, e->synapse,
                           sim->step);
        if (e->weights < -1 || e->weights >= sim->n_weights ||
            (e->weights >= 0 &&
             sim->weight_target[e->weights] != sim->target_first[e->cell] + e->synapse))
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: event %zu for cell %d, synapse %d: "
                           "weight vector %d is not one of that synapse's connections", k,
                           e->cell, e->synapse, e->weights);
        sim->events[k] = (hb_sim_engine_event_t){e->step, sim->target_first[e->cell] + e->synapse,
                                                 e->weights, e->time, e->weight};
    }
    return HB_SUCCESS;
}

hb_status_t hb_sim_queue_events(hb_sim_t *sim, size_t n, const hb_sim_event_t *events)
{
    hb_status_t status = engine_events(sim, n, events, 1);
    return status == HB_SUCCESS ? sim->ops->queue_events(sim->engine, n, sim->events) : status;
}

int hb_sim_makes_events(const hb_sim_t *sim) { return sim && sim->ops->add_spikes != NULL; }

static hb_status_t makes_events(const hb_sim_t *sim, const char *fn)
{
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "%s: sim is NULL", fn);
    if (!hb_sim_makes_events(sim))
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: backend '%s' makes no events of its own", fn,
                       hb_backend_name(hb_context_backend(sim->ctx)));
    return HB_SUCCESS;
}

/* hb_sim_set_connections' conversion, a chunk of CONN_CHUNK connections a call. */
#define CONN_CHUNK ((size_t)1 << 20)
typedef struct {
    const hb_sim_t *sim;
    size_t n;
    const hb_sim_connection_t *conns;
    const int *weights;
    hb_sim_engine_conn_t *out;
} conn_job_t;

static hb_status_t convert_connections(void *ctx, int chunk)
{
    const conn_job_t *job = ctx;
    const hb_sim_t *sim = job->sim;
    const size_t end = (size_t)chunk * CONN_CHUNK + CONN_CHUNK < job->n
                           ? (size_t)chunk * CONN_CHUNK + CONN_CHUNK : job->n;
    for (size_t k = (size_t)chunk * CONN_CHUNK; k < end; k++) {
        const hb_sim_connection_t *x = &job->conns[k];
        if (x->cell < 0 || x->cell >= sim->n_cells || x->synapse < 0 ||
            x->synapse >= sim->info[x->cell].n_synapses ||
            (k && x->source < job->conns[k - 1].source))
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_set_connections: connection %zu "
                           "(source %u, cell %d, synapse %d): expected a synapse of the "
                           "simulation, sources in order", k, x->source, x->cell, x->synapse);
        const int target = sim->target_first[x->cell] + x->synapse;
        const int w = job->weights ? job->weights[k] : -1;
        if (w < -1 || w >= sim->n_weights || (w >= 0 && sim->weight_target[w] != target))
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_set_connections: connection %zu "
                           "(cell %d, synapse %d): weight vector %d is not one of that "
                           "synapse's", k, x->cell, x->synapse, w);
        job->out[k] = (hb_sim_engine_conn_t){x->source, target, w, x->weight, x->delay};
    }
    return HB_SUCCESS;
}

hb_status_t hb_sim_set_connections(hb_sim_t *sim, size_t n, const hb_sim_connection_t *conns,
                                   const int *weights, long step_limit)
{
    hb_status_t status = makes_events(sim, "hb_sim_set_connections");
    if (status != HB_SUCCESS) return status;
    if (n / CONN_CHUNK >= (size_t)INT_MAX)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "hb_sim_set_connections: %zu connections; expected "
                       "fewer than %zu", n, (size_t)INT_MAX * CONN_CHUNK);
    hb_sim_engine_conn_t *c = malloc((n + 1) * sizeof *c);
    if (!c) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu connections", n);
    conn_job_t job = {sim, n, conns, weights, c}; /* the first bad connection's message, as in order */
    status = hb_sim_for_each(sim, (int)((n + CONN_CHUNK - 1) / CONN_CHUNK), "connection chunks",
                             convert_connections, &job);
    if (status == HB_SUCCESS) status = sim->ops->set_connections(sim->engine, n, c, step_limit);
    free(c);
    return status;
}

hb_status_t hb_sim_add_spikes(hb_sim_t *sim, size_t n, const hb_spike_t *spikes)
{
    hb_status_t status = makes_events(sim, "hb_sim_add_spikes");
    return status == HB_SUCCESS ? sim->ops->add_spikes(sim->engine, n, spikes) : status;
}

hb_status_t hb_sim_add_events(hb_sim_t *sim, size_t n, const hb_sim_event_t *events)
{
    hb_status_t status = makes_events(sim, "hb_sim_add_events");
    if (status == HB_SUCCESS) status = engine_events(sim, n, events, 0);
    return status == HB_SUCCESS ? sim->ops->add_events(sim->engine, n, sim->events) : status;
}

hb_status_t hb_sim_queue_due(hb_sim_t *sim, long step_end)
{
    hb_status_t status = makes_events(sim, "hb_sim_queue_due");
    return status == HB_SUCCESS ? sim->ops->queue_due(sim->engine, sim->step, step_end) : status;
}

/* a[0 .. n) = value, a chunk of FILL_CHUNK elements a call (hb_sim_init's arrays: hundreds
 * of millions of rows at 262,144 busyring cells). */
#define FILL_CHUNK ((size_t)1 << 22)
typedef struct {
    double *a;
    size_t n;
    double value;
} fill_job_t;

static hb_status_t fill_chunk(void *ctx, int chunk)
{
    const fill_job_t *job = ctx;
    const size_t first = (size_t)chunk * FILL_CHUNK;
    const size_t end = first + FILL_CHUNK < job->n ? first + FILL_CHUNK : job->n;
    for (size_t i = first; i < end; i++) job->a[i] = job->value;
    return HB_SUCCESS;
}

static void fill(const hb_sim_t *sim, double *a, size_t n, double value)
{
    fill_job_t job = {a, n, value};
    if (n / FILL_CHUNK < (size_t)INT_MAX)
        (void)hb_sim_for_each(sim, (int)((n + FILL_CHUNK - 1) / FILL_CHUNK), NULL, fill_chunk,
                              &job); /* not watched: it must finish */
    else
        for (size_t i = 0; i < n; i++) a[i] = value;
}

hb_status_t hb_sim_init(hb_sim_t *sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_init: sim is NULL");
    double inf[3], tau[3];
    hb_hh_table_rates(&sim->table, sim->opt.v_init_mv, inf, tau);
    for (int g = 0; g < sim->n_groups; g++) {
        group_t *gr = &sim->groups[g];
        const size_t size = hb_step_block_base(&gr->k, gr->k.blocks);
        const size_t hh = hb_step_hh_base(&gr->k, gr->k.blocks), w = (size_t)gr->k.width;
        fill(sim, gr->v, size, sim->opt.v_init_mv);
        for (size_t j = 0; j < hh; j++) /* instance j's states, lanes of w */
            for (size_t x = 0; x < 3; x++)
                for (size_t k = 0; k < w; k++) gr->hh_state[(j * 3 + x) * w + k] = inf[x];
        if (gr->syn_state) /* NEURON's INITIAL: g = 0 (A = B = 0) */
            memset(gr->syn_state, 0, gr->n_syn_state * sizeof *gr->syn_state);
        if (gr->cat) hb_sim_cat_ids(&gr->k, gr->cells, sim->cell_ids);
        if (gr->cat) hb_sim_cat_init(&gr->k, sim->opt.dt_ms); /* ions, then INITIAL */
    }
    hb_status_t self = init_self_events(sim);
    if (self != HB_SUCCESS) return self;
    init_weights(sim);
    if ((self = deliver_at_zero(sim)) != HB_SUCCESS) return self;
    sim->step = 0;
    sim->failed = 0;
    hb_sim_reset_records(sim);
    hb_status_t status = hb_sim_record_sample(sim);
    if (status == HB_SUCCESS) status = hb_sim_record_initial(sim); /* before a GPU's poison */
    /* the state to the engine (the CPU's steps these arrays in place) */
    for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
        status = sim->ops->set_state(sim->engine, g, sim->groups[g].v, sim->groups[g].hh_state);
    if (status == HB_SUCCESS) status = sim->ops->set_probes(sim->engine, sim->above, sim->v_prev);
    if (status == HB_SUCCESS) /* no event of an earlier run */
        status = sim->ops->clear_events ? sim->ops->clear_events(sim->engine)
                                        : sim->ops->queue_events(sim->engine, 0, NULL);
    if (!sim->ops->steps_in_place) /* a stale host copy is poisoned: only get_v reads it */
        for (int g = 0; g < sim->n_groups; g++) {
            group_t *gr = &sim->groups[g];
            fill(sim, gr->v, hb_step_block_base(&gr->k, gr->k.blocks), NAN);
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

void hb_sim_label_cells(hb_sim_t *sim, const char *label, const uint32_t *ids)
{
    if (!sim) return;
    sim->cell_label = label;
    sim->cell_ids = ids;
}

/* What `steps` more steps would record in memory must fit: the counts are ints and the bytes
 * the machine's memory (spikes, which depend on the run, are checked as they come). */
static hb_status_t check_recording(const hb_sim_t *sim, long steps)
{
    const long every = sim->sample_every;
    const double samples = (double)sim->times.count +
                           (double)((sim->step + steps) / every - sim->step / every);
    const double bytes = samples * (double)(sim->n_probes + 1) * sizeof(double);
    const double memory = sim->memory_bytes;
    if (samples <= (double)INT_MAX && (memory == 0.0 || bytes <= memory)) return HB_SUCCESS;
    return hb_fail(HB_ERR_ALLOC, "simulation: %.0f samples of %d probe%s and the time (%.3g bytes) "
                   "would be recorded in memory; at most %d samples fit, in %.3g bytes of memory "
                   "here: record less (sample_dt) or write the samples out as the run goes "
                   "(hb_sim_clear_records between advances, as hinesbatch run does)", samples,
                   sim->n_probes, sim->n_probes == 1 ? "" : "s", bytes, INT_MAX, memory);
}

/* HB_ERR_NONFINITE naming the cell, node, section and time of an engine's fault. */
static hb_status_t fault_message(hb_sim_t *sim, const hb_sim_fault_t *f)
{
    const group_t *gr = &sim->groups[f->group];
    const int cell = gr->cells[f->slot];
    if (f->what[0]) /* a point process's refusal (a FROM loop's trip count, endless events) */
        return refused(sim, f->target, f->what, f->endless);
    const size_t e = hb_step_element(&gr->k, f->slot, f->node);
    sim->ops->get_v(sim->engine, f->group, e, 1, &gr->v[e]);
    const double v = gr->v[e];
    hb_node_info_t info;
    memset(&info, 0, sizeof info);
    char where[96] = "";
    const hb_model_t *md = hb_sim_cell_get(sim, cell); /* a source's: built again */
    if (md && hb_cable_node(md->cable, f->node, &info) == HB_SUCCESS)
        snprintf(where, sizeof where, " (section %d, x = %.4g)", info.section, info.x);
    hb_sim_cell_put(sim, cell, md);
    char who[64];
    cell_name(sim, cell, who, sizeof who);
    const long before = (f->step - 1) / HB_SIM_CHECK_STEPS * HB_SIM_CHECK_STEPS; /* last check */
    char value[32];
    if (isnan(v)) snprintf(value, sizeof value, "nan"); /* not "-nan" */
    else snprintf(value, sizeof value, "%g", v);
    return hb_fail(HB_ERR_NONFINITE, "simulation: v = %s mV in %s, node %d%s "
                   "at t = %.10g ms (finite at t = %.10g ms); a parameter or dt drives the cell out "
                   "of range", value, who, f->node, where,
                   (double)f->step * sim->opt.dt_ms, (double)before * sim->opt.dt_ms);
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
    if (sim->failed)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_advance: the simulation stopped at a "
                       "non-finite state at t = %g ms; hb_sim_init starts it again",
                       hb_sim_time(sim));
    if (steps > HB_SIM_MAX_STEPS - sim->step)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_advance: %ld steps after %ld; expected at most "
                       "%ld in all (HB_SIM_MAX_STEPS)", steps, sim->step, HB_SIM_MAX_STEPS);
    hb_status_t status = check_recording(sim, steps);
    if (status == HB_SUCCESS) status = hb_sim_push_records(sim);
    if (status != HB_SUCCESS) return status;
    hb_sim_fault_t fault;
    memset(&fault, 0, sizeof fault);
    status = sim->ops->advance(sim->engine, sim->step, steps, hb_sim_record_sink, sim, &fault);
    if (status == HB_SUCCESS) sim->step += steps;
    if (status == HB_ERR_NONFINITE) {
        sim->step = fault.step;
        sim->failed = 1;
        status = fault_message(sim, &fault);
    }
    return status;
}

long hb_sim_steps(const hb_sim_t *sim)
{
    /* NEURON's run: steps while t < tstop (up to rounding); at most HB_SIM_MAX_STEPS */
    return sim ? (long)ceil(sim->opt.t_stop_ms / sim->opt.dt_ms - 1e-9) : 0;
}

hb_status_t hb_sim_run(hb_sim_t *sim)
{
    hb_status_t status = hb_sim_init(sim);
    if (status != HB_SUCCESS) return status;
    return hb_sim_advance(sim, hb_sim_steps(sim));
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
    const int slot = sim->slot_of[cell], block = slot / gr->k.width;
    const size_t w = (size_t)gr->k.width, m = (size_t)hb_step_slot_rows(&gr->k, slot);
    const size_t first = hb_step_block_base(&gr->k, block), base = first + (size_t)slot % w;
    double *out = sim->vbuf + sim->offset[cell];
    /* the cell's block from the engine, then the cell's lane */
    hb_status_t status = sim->ops->get_v(sim->engine, sim->group_of[cell], first,
                                         (size_t)hb_step_block_rows(&gr->k, block) * w,
                                         gr->v + first);
    if (status != HB_SUCCESS) return status;
    for (size_t i = 0; i < m; i++) out[i] = gr->v[base + i * w];
    *v = out;
    return HB_SUCCESS;
}
