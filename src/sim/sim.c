/*
 * Time stepping as NEURON's fixed step (nrn_fixed_step, secondorder 0 or 1):
 *   1. currents and conductances at v(t) with the gates of t; IClamps at t + dt/2;
 *   2. the matrix (hb_cable_step_system, dt/2 in the capacitive term for CN);
 *   3. Hines solves: cells with the same matrix shape in one hb_hines_solve_batch;
 *   4. v += dv (CN: v += 2 dv);
 *   5. gates with the new v by cnexp: m += (1 - exp(-dt/tau)) (minf - m);
 *   6. t += dt; spike detection and sampling.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "sim/sim.h"

typedef struct {
    int m;         /* rows of each system */
    int count;     /* cells in the group */
    int *cells;    /* simulation cell indices */
    double *u, *l; /* FLAT layout, count * m, constant */
    double *d, *rhs;
} group_t;

typedef struct {
    double *data;
    int count, capacity;
} series_t;

struct hb_sim {
    hb_sim_options_t opt;
    int n_cells;
    hb_model_t **cells; /* borrowed (or owned through `owned`) */
    int *offset;        /* first global node of each cell; offset[n_cells] = all nodes */
    double *v, *g, *im, *inj; /* per global node: [mV], [S/cm^2], [mA/cm^2], [nA] */
    double *pas_g, *pas_e;    /* per global node */
    int n_hh;
    int *hh_node;       /* global node per hh instance */
    double *hh_par;     /* HB_HH_NPAR per instance */
    double *hh_state;   /* m, h, n per instance */
    hb_hh_table_t table;
    int n_stims;
    hb_iclamp_t *stims; /* nodes global */
    int n_groups;
    group_t *groups;
    hb_context_t ctx;
    int n_probes;
    hb_probe_t *probes; /* nodes global, names owned */
    unsigned char *above; /* per probe: v was above threshold */
    double *v_prev;       /* per probe, for interpolated spike times */
    series_t times;
    series_t *traces; /* per probe */
    series_t *spikes; /* per probe */
    long step, sample_every;
    int initialised;
    hb_sim_owned_t owned;
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

/* Cells with the same matrix shape share a group (one batched solve). */
static hb_status_t make_groups(hb_sim_t *sim)
{
    int *group_of = malloc((size_t)sim->n_cells * sizeof *group_of);
    int *first = malloc((size_t)sim->n_cells * sizeof *first); /* a cell of each group */
    sim->groups = calloc((size_t)sim->n_cells, sizeof *sim->groups);
    if (!group_of || !first || !sim->groups) {
        free(group_of);
        free(first);
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    for (int c = 0; c < sim->n_cells; c++) {
        const hb_cable_t *cable = sim->cells[c]->cable;
        const int m = hb_cable_size(cable);
        group_of[c] = -1;
        for (int k = 0; k < sim->n_groups && group_of[c] < 0; k++) {
            const hb_cable_t *other = sim->cells[first[k]]->cable;
            if (other == cable ||
                (hb_cable_size(other) == m &&
                 memcmp(hb_cable_parent(other), hb_cable_parent(cable), (size_t)m * sizeof(int)) == 0))
                group_of[c] = k;
        }
        if (group_of[c] < 0) {
            first[sim->n_groups] = c;
            group_of[c] = sim->n_groups;
            sim->groups[sim->n_groups++].m = m;
        }
        group_t *gr = &sim->groups[group_of[c]];
        gr->count++; /* counted here, filled below */
    }
    hb_status_t status = HB_SUCCESS;
    for (int k = 0; k < sim->n_groups && status == HB_SUCCESS; k++) {
        group_t *gr = &sim->groups[k];
        size_t n = (size_t)gr->count * (size_t)gr->m;
        gr->cells = malloc((size_t)gr->count * sizeof *gr->cells);
        gr->u = malloc(n * sizeof(double));
        gr->l = malloc(n * sizeof(double));
        gr->d = malloc(n * sizeof(double));
        gr->rhs = malloc(n * sizeof(double));
        if (!gr->cells || !gr->u || !gr->l || !gr->d || !gr->rhs)
            status = hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu matrix rows", n);
        gr->count = 0;
    }
    for (int c = 0; c < sim->n_cells && status == HB_SUCCESS; c++) {
        group_t *gr = &sim->groups[group_of[c]];
        size_t base = (size_t)gr->count * (size_t)gr->m;
        gr->cells[gr->count++] = c;
        status = hb_cable_offdiag(sim->cells[c]->cable, gr->u + base, gr->l + base);
    }
    free(group_of);
    free(first);
    return status;
}

/* Global per-node and per-instance arrays from the models. */
static hb_status_t gather(hb_sim_t *sim)
{
    int n_hh = 0, n_stims = 0, n_probes = 0;
    sim->offset = malloc(((size_t)sim->n_cells + 1) * sizeof *sim->offset);
    if (!sim->offset) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    long total = 0;
    for (int c = 0; c < sim->n_cells; c++) {
        const hb_model_t *md = sim->cells[c];
        sim->offset[c] = (int)total;
        total += md->m;
        for (int j = 0; j < md->m; j++) n_hh += md->has_hh[j];
        n_stims += md->n_iclamps;
        n_probes += md->n_probes;
        if (total > 0x7fffffffL)
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: more than 2^31 nodes in all");
    }
    sim->offset[sim->n_cells] = (int)total;
    const size_t n = (size_t)total;
    sim->v = calloc(n, sizeof *sim->v);
    sim->g = calloc(n, sizeof *sim->g);
    sim->im = calloc(n, sizeof *sim->im);
    sim->inj = calloc(n, sizeof *sim->inj);
    sim->pas_g = calloc(n, sizeof *sim->pas_g);
    sim->pas_e = calloc(n, sizeof *sim->pas_e);
    sim->hh_node = calloc((size_t)n_hh + 1, sizeof *sim->hh_node);
    sim->hh_par = calloc(((size_t)n_hh + 1) * HB_HH_NPAR, sizeof *sim->hh_par);
    sim->hh_state = calloc(((size_t)n_hh + 1) * 3, sizeof *sim->hh_state);
    sim->stims = calloc((size_t)n_stims + 1, sizeof *sim->stims);
    sim->probes = calloc((size_t)n_probes + 1, sizeof *sim->probes);
    sim->above = calloc((size_t)n_probes + 1, 1);
    sim->v_prev = calloc((size_t)n_probes + 1, sizeof *sim->v_prev);
    sim->traces = calloc((size_t)n_probes + 1, sizeof *sim->traces);
    sim->spikes = calloc((size_t)n_probes + 1, sizeof *sim->spikes);
    if (!sim->v || !sim->g || !sim->im || !sim->inj || !sim->pas_g || !sim->pas_e ||
        !sim->hh_node || !sim->hh_par || !sim->hh_state || !sim->stims || !sim->probes ||
        !sim->above || !sim->v_prev || !sim->traces || !sim->spikes)
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu nodes", n);
    for (int c = 0; c < sim->n_cells; c++) {
        const hb_model_t *md = sim->cells[c];
        const int off = sim->offset[c];
        for (int j = 0; j < md->m; j++) {
            if (md->has_pas[j]) {
                sim->pas_g[off + j] = md->pas_g[j];
                sim->pas_e[off + j] = md->pas_e[j];
            }
            if (md->has_hh[j]) {
                sim->hh_node[sim->n_hh] = off + j;
                memcpy(&sim->hh_par[(size_t)sim->n_hh * HB_HH_NPAR], &md->hh[(size_t)j * HB_HH_NPAR],
                       HB_HH_NPAR * sizeof(double));
                sim->n_hh++;
            }
        }
        for (int k = 0; k < md->n_iclamps; k++) {
            sim->stims[sim->n_stims] = md->iclamps[k];
            sim->stims[sim->n_stims++].node += off;
        }
        for (int k = 0; k < md->n_probes; k++) {
            const hb_probe_t *p = &md->probes[k];
            size_t len = strlen(p->name) + 24;
            hb_probe_t *q = &sim->probes[sim->n_probes];
            *q = *p;
            q->node += off;
            if (!(q->name = malloc(len)))
                return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
            sim->n_probes++;
            if (sim->n_cells == 1) snprintf(q->name, len, "%s", p->name);
            else snprintf(q->name, len, "c%d.%s", c, p->name);
        }
    }
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
    if (status == HB_SUCCESS) status = gather(s);
    if (status == HB_SUCCESS) status = make_groups(s);
    if (status == HB_SUCCESS) status = hb_context_create(&s->ctx, options->backend);
    if (status != HB_SUCCESS) {
        hb_sim_destroy(s);
        return status;
    }
    hb_hh_table_init(&s->table, options->celsius, options->hh_table);
    *sim = s;
    return HB_SUCCESS;
}

void hb_sim_destroy(hb_sim_t *sim)
{
    if (!sim) return;
    for (int k = 0; k < sim->n_groups; k++) {
        free(sim->groups[k].cells);
        free(sim->groups[k].u);
        free(sim->groups[k].l);
        free(sim->groups[k].d);
        free(sim->groups[k].rhs);
    }
    free(sim->groups);
    for (int p = 0; p < sim->n_probes; p++) {
        free(sim->probes[p].name);
        if (sim->traces) free(sim->traces[p].data);
        if (sim->spikes) free(sim->spikes[p].data);
    }
    free(sim->probes);
    free(sim->traces);
    free(sim->spikes);
    free(sim->times.data);
    free(sim->above);
    free(sim->v_prev);
    free(sim->stims);
    free(sim->hh_node);
    free(sim->hh_par);
    free(sim->hh_state);
    free(sim->v);
    free(sim->g);
    free(sim->im);
    free(sim->inj);
    free(sim->pas_g);
    free(sim->pas_e);
    free(sim->offset);
    free(sim->cells);
    if (sim->ctx) hb_context_destroy(sim->ctx);
    hb_sim_owned_free(&sim->owned);
    free(sim);
}

static hb_status_t record_sample(hb_sim_t *sim)
{
    if (!series_push(&sim->times, (double)sim->step * sim->opt.dt_ms))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording samples");
    for (int p = 0; p < sim->n_probes; p++)
        if (!series_push(&sim->traces[p], sim->v[sim->probes[p].node]))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording samples");
    return HB_SUCCESS;
}

hb_status_t hb_sim_init(hb_sim_t *sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_init: sim is NULL");
    const int n = sim->offset[sim->n_cells];
    for (int i = 0; i < n; i++) sim->v[i] = sim->opt.v_init_mv;
    double inf[3], tau[3];
    hb_hh_table_rates(&sim->table, sim->opt.v_init_mv, inf, tau);
    for (int k = 0; k < sim->n_hh; k++) memcpy(&sim->hh_state[3 * k], inf, sizeof inf);
    sim->step = 0;
    sim->times.count = 0;
    for (int p = 0; p < sim->n_probes; p++) {
        const hb_probe_t *pr = &sim->probes[p];
        sim->traces[p].count = 0;
        sim->spikes[p].count = 0;
        sim->above[p] = sim->v[pr->node] > pr->threshold_mv;
        sim->v_prev[p] = sim->v[pr->node];
    }
    sim->initialised = 1;
    return record_sample(sim);
}

/* Step 1: membrane currents [mA/cm^2] and conductances [S/cm^2] at v(t), stimuli at t + dt/2. */
static void currents(hb_sim_t *sim)
{
    const int n = sim->offset[sim->n_cells];
    const double *v = sim->v;
    for (int i = 0; i < n; i++) {
        sim->g[i] = sim->pas_g[i];
        sim->im[i] = sim->pas_g[i] * (v[i] - sim->pas_e[i]);
        sim->inj[i] = 0.0;
    }
    for (int k = 0; k < sim->n_hh; k++) {
        const int i = sim->hh_node[k];
        const double *p = &sim->hh_par[(size_t)k * HB_HH_NPAR], *s = &sim->hh_state[3 * k];
        const double gna = p[HB_HH_GNABAR] * s[0] * s[0] * s[0] * s[1];
        const double n2 = s[2] * s[2];
        const double gk = p[HB_HH_GKBAR] * n2 * n2;
        sim->im[i] += gna * (v[i] - p[HB_HH_ENA]) + gk * (v[i] - p[HB_HH_EK]) +
                      p[HB_HH_GL] * (v[i] - p[HB_HH_EL]);
        sim->g[i] += gna + gk + p[HB_HH_GL];
    }
    const double tm = ((double)sim->step + 0.5) * sim->opt.dt_ms;
    for (int k = 0; k < sim->n_stims; k++) {
        const hb_iclamp_t *st = &sim->stims[k];
        if (tm >= st->del_ms && tm < st->del_ms + st->dur_ms) sim->inj[st->node] += st->amp_na;
    }
}

/* Steps 2-4 for every group. */
static hb_status_t solve(hb_sim_t *sim)
{
    const int cn = sim->opt.method == HB_METHOD_CN;
    const double dt = cn ? 0.5 * sim->opt.dt_ms : sim->opt.dt_ms, factor = cn ? 2.0 : 1.0;
    hb_status_t status = HB_SUCCESS;
    for (int k = 0; k < sim->n_groups && status == HB_SUCCESS; k++) {
        group_t *gr = &sim->groups[k];
        const size_t m = (size_t)gr->m;
        for (int q = 0; q < gr->count && status == HB_SUCCESS; q++) {
            const int c = gr->cells[q], off = sim->offset[c];
            status = hb_cable_step_system(sim->cells[c]->cable, dt, gr->u + q * m, gr->l + q * m,
                                          sim->v + off, sim->g + off, sim->im + off, sim->inj + off,
                                          gr->d + q * m, gr->rhs + q * m);
        }
        if (status != HB_SUCCESS) break;
        const int *parent = hb_cable_parent(sim->cells[gr->cells[0]]->cable);
        if (gr->count == 1)
            status = hb_hines_solve(gr->m, parent, gr->u, gr->l, gr->d, gr->rhs);
        else
            status = hb_hines_solve_batch(sim->ctx, gr->m, parent, gr->u, gr->l, gr->d, gr->rhs,
                                          HB_LAYOUT_FLAT, 1, gr->count);
        for (int q = 0; q < gr->count && status == HB_SUCCESS; q++) {
            double *v = sim->v + sim->offset[gr->cells[q]];
            const double *dv = gr->rhs + q * m;
            for (size_t i = 0; i < m; i++) v[i] += factor * dv[i];
        }
    }
    return status;
}

/* Step 5: cnexp with the new v. */
static void gates(hb_sim_t *sim)
{
    const double dt = sim->opt.dt_ms;
    double inf[3], tau[3];
    for (int k = 0; k < sim->n_hh; k++) {
        double *s = &sim->hh_state[3 * k];
        hb_hh_table_rates(&sim->table, sim->v[sim->hh_node[k]], inf, tau);
        for (int j = 0; j < 3; j++) s[j] += (1.0 - exp(-dt / tau[j])) * (inf[j] - s[j]);
    }
}

static hb_status_t detect(hb_sim_t *sim)
{
    const double t = (double)sim->step * sim->opt.dt_ms;
    for (int p = 0; p < sim->n_probes; p++) {
        const hb_probe_t *pr = &sim->probes[p];
        const double v = sim->v[pr->node], v0 = sim->v_prev[p];
        sim->v_prev[p] = v;
        if (!pr->detect_spikes) continue;
        const int above = v > pr->threshold_mv;
        if (above && !sim->above[p]) {
            double ts = t;
            if (sim->opt.spike_time == HB_SPIKE_INTERPOLATE && v > v0)
                ts = t - sim->opt.dt_ms * (v - pr->threshold_mv) / (v - v0);
            if (!series_push(&sim->spikes[p], ts))
                return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording spikes");
        }
        sim->above[p] = (unsigned char)above;
    }
    return HB_SUCCESS;
}

hb_status_t hb_sim_advance(hb_sim_t *sim, long steps)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_advance: sim is NULL");
    if (!sim->initialised) {
        hb_status_t status = hb_sim_init(sim);
        if (status != HB_SUCCESS) return status;
    }
    for (long k = 0; k < steps; k++) {
        currents(sim);
        hb_status_t status = solve(sim);
        if (status != HB_SUCCESS) return status;
        gates(sim);
        sim->step++;
        if ((status = detect(sim)) != HB_SUCCESS) return status;
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
    *v = sim->v + sim->offset[cell];
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
