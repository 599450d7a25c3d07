/*
 * Helpers shared by the simulator tests (tests/test_sim_*.c): reference traces,
 * error measures and models built from sections.
 */
#ifndef HB_TESTS_SIM_COMMON_H
#define HB_TESTS_SIM_COMMON_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hinesbatch.h"

typedef struct {
    int n;
    double *t, *v; /* as in the file */
} trace_t;

/* Two numeric columns (t, v) per line; lines that do not start with two numbers are skipped. */
static inline int trace_read(const char *path, trace_t *tr)
{
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    memset(tr, 0, sizeof *tr);
    if (!f) return 0;
    int cap = 0;
    char line[512];
    double a, b;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "%lf %lf", &a, &b) != 2) continue;
        if (tr->n == cap) {
            cap = cap ? 2 * cap : 1024;
            tr->t = realloc(tr->t, (size_t)cap * sizeof *tr->t);
            tr->v = realloc(tr->v, (size_t)cap * sizeof *tr->v);
        }
        tr->t[tr->n] = a;
        tr->v[tr->n++] = b;
    }
    fclose(f);
    return tr->n;
}

static inline void trace_free(trace_t *tr)
{
    free(tr->t);
    free(tr->v);
    memset(tr, 0, sizeof *tr);
}

typedef struct {
    int matched;    /* reference points that had a sample at the same time */
    double rms;     /* [units of the reference] */
    double max_abs; /* max |difference| */
    double range;   /* max - min of the reference over the matched points */
    double peak;    /* max |reference| */
} trace_error_t;

/*
 * Our samples (t [ms], v [mV]) against a reference at the times they share;
 * t_scale and v_scale convert ours to the reference's units (1e-3 for s and V).
 */
static inline trace_error_t trace_compare(const double *t, const double *v, int n,
                                          const trace_t *ref, double t_scale, double v_scale)
{
    trace_error_t e = {0, 0.0, 0.0, 0.0, 0.0};
    double lo = INFINITY, hi = -INFINITY, sum = 0.0;
    int k = 0;
    for (int r = 0; r < ref->n; r++) {
        const double tol = 1e-6 * fmax(1.0, fabs(ref->t[r]));
        while (k < n && t[k] * t_scale < ref->t[r] - tol) k++;
        if (k == n) break;
        if (fabs(t[k] * t_scale - ref->t[r]) > tol) continue;
        const double d = v[k] * v_scale - ref->v[r];
        sum += d * d;
        e.max_abs = fmax(e.max_abs, fabs(d));
        lo = fmin(lo, ref->v[r]);
        hi = fmax(hi, ref->v[r]);
        e.peak = fmax(e.peak, fabs(ref->v[r]));
        e.matched++;
    }
    if (e.matched) {
        e.rms = sqrt(sum / e.matched);
        e.range = hi - lo;
    }
    return e;
}

/*
 * A cell from sections, NEURON scheme: nseg compartments per section, but one
 * per soma (type 1) section as NEURON models have; map (may be NULL) receives
 * the morphology section of each spec.
 */
static inline hb_model_t *sections_model(const hb_section_spec_t *secs, int count, int nseg,
                                         double ra, double cm, hb_morph_t **morph, int *map)
{
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.policy = HB_CPOLICY_FIXED;
    disc.count = nseg;
    disc.count_by_type[1] = 1;
    disc.scheme = HB_SCHEME_NEURON;
    disc.ra_ohm_cm = ra;
    disc.cm_uf_cm2 = cm;
    hb_model_t *model = NULL;
    *morph = NULL;
    CHECK_OK(hb_model_build_sections(secs, count, "sections", morph, map));
    if (*morph) CHECK_OK(hb_model_create(*morph, &disc, &model));
    return model;
}

/* A simulation of one model, run to t_stop; NULL after a failure. */
static inline hb_sim_t *run_model(hb_model_t *model, const hb_sim_options_t *opt)
{
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(&model, 1, opt, &sim));
    if (sim && hb_sim_run(sim) != HB_SUCCESS) {
        CHECKF(0, "run: %s", hb_last_error());
        hb_sim_destroy(sim);
        sim = NULL;
    }
    return sim;
}

/* Default options with dt, t_stop and sample_dt [ms]. */
static inline hb_sim_options_t sim_options(double dt, double t_stop, double sample_dt)
{
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.dt_ms = dt;
    opt.t_stop_ms = t_stop;
    opt.sample_dt_ms = sample_dt;
    return opt;
}

static inline hb_location_t at_section(int section, double x)
{
    hb_location_t loc = {HB_LOC_SECTION, 0, section, x, 0};
    return loc;
}

/* Adds a probe; returns its index. */
static inline int add_probe(hb_model_t *model, hb_location_t where, const char *name,
                            int spikes, double threshold)
{
    hb_probe_spec_t p = {where, name, spikes, threshold};
    int index = -1;
    CHECK_OK(hb_model_add_probe(model, &p, &index));
    return index;
}

/* A run's probes 0..n_probes-1 against NEURON's traces ref[] (every reference sample matched,
 * checked) and probe 0's spikes against NEURON's want[]: the largest |v - NEURON| [mV] into
 * *worst_v, the largest |t - NEURON| [ms] into *worst_t (INFINITY when the counts differ);
 * returns the run's spike count. */
static inline int against_neuron(hb_sim_t *sim, const trace_t *ref, int n_probes,
                                 const double *want, int n_want, const char *name,
                                 double *worst_v, double *worst_t)
{
    const double *ts, *v, *spikes;
    int nt, n_spikes = 0;
    *worst_v = 0.0;
    CHECK_OK(hb_sim_sample_times(sim, &ts, &nt));
    for (int p = 0; p < n_probes; p++) {
        CHECK_OK(hb_sim_probe_trace(sim, p, &v, &nt));
        trace_error_t e = trace_compare(ts, v, nt, &ref[p], 1.0, 1.0);
        CHECKF(e.matched == ref[p].n, "%s: %d of %d samples matched", name, e.matched, ref[p].n);
        *worst_v = fmax(*worst_v, e.max_abs);
    }
    CHECK_OK(hb_sim_spikes(sim, 0, &spikes, &n_spikes));
    *worst_t = n_spikes == n_want ? 0.0 : INFINITY;
    for (int k = 0; k < n_spikes && k < n_want; k++)
        *worst_t = fmax(*worst_t, fabs(spikes[k] - want[k]));
    return n_spikes;
}

#endif
