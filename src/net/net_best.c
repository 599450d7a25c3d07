/*
 * "backend": "best" for a network (hb_net_create): one core, all cores or the GPU, chosen by a
 * trial on this run's own cells. Each candidate builds the simulation of a sample of the
 * rank's cells (every cell up to the sample's size: 32 on one thread, 16 a thread on all
 * threads (32 to 1,024), 2,048 on the GPU; else cells spread evenly over the rank's list) and
 * times calls of 2, 4, 8 ... steps until one takes 10 ms (or 64 steps; a step: the least time
 * a call took a step); the run is predicted as (build + step x steps) x cells / sample, the
 * slowest rank's prediction (an all-reduce, so every rank chooses alike). One thread is tried
 * first: where its predicted run is under HB_BEST_TINY_S, nothing else is (the trials would
 * cost what they could save). The GPU is tried only where the cheaper CPU candidate's
 * prediction is at least HB_BEST_GPU_TRIAL_S: below that its context and copies cannot win
 * back much. Results do not depend on the choice (the same spikes on every backend).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "net/net_engine.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

enum {
    SAMPLE_SEQ = 32,        /* one thread's trial: its time is linear in the cells */
    SAMPLE_PER_THREAD = 16, /* all threads': cells a thread (at least 32, at most 1024) */
    SAMPLE_GPU = 2048, /* a GPU trial's: the GPU needs cells in flight to show its throughput */
    MAX_TRIAL_STEPS = 64
};
#define HB_BEST_GPU_TRIAL_S 1.0 /* [s] the CPU's predicted run below which the GPU is not tried */
#define HB_BEST_TINY_S 0.25     /* [s] one core's predicted run below which nothing else is */
#define TRIAL_STEPS_S 0.01      /* [s] timed steps of a trial, at least (or MAX_TRIAL_STEPS) */

typedef struct {
    hb_net_t *net;
    int n_sample;
} sample_t;

static int sample_cell(const sample_t *s, int k)
{
    return (int)((long long)k * s->net->n_cable / s->n_sample);
}

static hb_model_t *sample_get(void *user, int k)
{
    const sample_t *s = user;
    const int c = sample_cell(s, k);
    if (s->net->models) return s->net->models[c];
    hb_model_t *model = s->net->recipe.cable(s->net->recipe.user, s->net->cable_gid[c]);
    if (!model)
        hb_fail(HB_ERR_INVALID_VALUE, "backend best: gid %u: the recipe made no model",
                s->net->cable_gid[c]);
    return model;
}

static void sample_put(void *user, int k, hb_model_t *model)
{
    const sample_t *s = user;
    if (!s->net->models) s->net->builder.release(s->net->recipe.user,
                                                 s->net->cable_gid[sample_cell(s, k)], model);
}

/* The test hook HB_BEST_TRIAL_COSTS="seq=S,omp=S,cuda=S": S seconds added to that backend's
 * measured step (a forced slow candidate, for tests on machines where the real costs are
 * close). Unset or unnamed: 0. */
static double injected_cost(hb_backend_t b)
{
    const char *env = getenv("HB_BEST_TRIAL_COSTS");
    const char *name = hb_backend_name(b);
    const size_t len = strlen(name);
    for (const char *p = env; p && *p;) {
        if (strncmp(p, name, len) == 0 && p[len] == '=') return atof(p + len + 1);
        p = strchr(p, ',');
        if (p) p++;
    }
    return 0.0;
}

/* One candidate's trial on this rank, `threads` the options' (the build's; omp's steps'): its
 * predicted run [s] (INFINITY where it failed; 0 with no cable cell here). */
static double trial(hb_net_t *net, hb_backend_t b, int threads, int cap, int *sampled)
{
    *sampled = 0;
    if (net->n_cable == 0) return 0.0;
    sample_t s = {net, net->n_cable < cap ? net->n_cable : cap};
    const hb_sim_cell_source_t source = {&s, sample_get, sample_put,
                                         net->models ? 1 : net->builder.thread_safe};
    hb_sim_options_t o = net->opt;
    o.backend = b;
    o.threads = threads;
    o.t_stop_ms = o.dt_ms * (2 * MAX_TRIAL_STEPS + 1);
    o.sample_dt_ms = o.t_stop_ms;
    /* the backend's one-time start (a GPU's driver and context) before the clock: the run
     * does not pay it again, and it must not be scaled with the cells */
    hb_context_t *warm = NULL;
    if (hb_context_create(b, &warm) == HB_SUCCESS) hb_context_destroy(warm);
    const double t0 = hb_clock_seconds();
    hb_sim_t *sim = NULL;
    hb_status_t status = hb_sim_create_from(&source, s.n_sample, &o, net->local_rank, &sim);
    if (status == HB_SUCCESS) status = hb_sim_init(sim);
    if (status == HB_SUCCESS) status = hb_sim_advance(sim, 1); /* first-touch, kernel loads */
    const double build = hb_clock_seconds() - t0;
    /* calls of 2, 4, 8 ... steps until one takes TRIAL_STEPS_S: a step is the least time a
     * step of a call took (a call's own cost spread over its steps; a call that other work
     * on the machine delayed does not count) */
    double step = INFINITY;
    for (long k = 2; status == HB_SUCCESS && k <= MAX_TRIAL_STEPS; k *= 2) {
        const double t1 = hb_clock_seconds();
        status = hb_sim_advance(sim, k);
        const double took = hb_clock_seconds() - t1;
        if (took / (double)k < step) step = took / (double)k;
        if (took >= TRIAL_STEPS_S) break;
    }
    hb_sim_destroy(sim);
    hb_clear_error();
    if (status != HB_SUCCESS) return INFINITY;
    *sampled = s.n_sample;
    step += injected_cost(b);
    return (build + step * (double)net->total_steps) * net->n_cable / s.n_sample;
}

static int all_threads(const hb_net_t *net)
{
#ifdef HB_HAVE_OPENMP
    return net->opt.threads > 0 ? net->opt.threads : omp_get_max_threads();
#else
    (void)net;
    return 1;
#endif
}

hb_status_t hb_net_choose_backend(hb_net_t *net)
{
    enum { SEQ, OMP, GPU, N };
    const hb_backend_t backend[N] = {HB_BACKEND_SEQ, HB_BACKEND_OMP, HB_BACKEND_CUDA};
    const int threads = all_threads(net);
    double p[N] = {INFINITY, INFINITY, INFINITY};
    int sampled[N] = {0, 0, 0};
    const double t0 = hb_clock_seconds();
    int cap = SAMPLE_PER_THREAD * threads;
    cap = cap < 32 ? 32 : cap > 1024 ? 1024 : cap;
    p[SEQ] = trial(net, HB_BACKEND_SEQ, net->opt.threads, SAMPLE_SEQ, &sampled[SEQ]);
    /* the slowest rank's predictions: every rank chooses alike */
    hb_status_t status = net->comm->ops->allreduce(net->comm->state, p, 1, HB_REDUCE_MAX);
    if (status != HB_SUCCESS) return status;
    const int tiny = p[SEQ] < HB_BEST_TINY_S;
    const int omp = !tiny && threads > 1 && hb_backend_available(HB_BACKEND_OMP);
    if (omp) p[OMP] = trial(net, HB_BACKEND_OMP, threads, cap, &sampled[OMP]);
    status = net->comm->ops->allreduce(net->comm->state, &p[OMP], 1, HB_REDUCE_MAX);
    if (status != HB_SUCCESS) return status;
    const double cpu = p[OMP] < p[SEQ] ? p[OMP] : p[SEQ];
    /* asked only where a GPU trial could follow: asking starts the CUDA driver (0.1 s and
     * more), which a run below HB_BEST_GPU_TRIAL_S must not pay; cpu is the same on every
     * rank, so every rank still joins the all-reduce */
    double gpu_here =
        cpu >= HB_BEST_GPU_TRIAL_S && hb_backend_available(HB_BACKEND_CUDA) ? 1.0 : 0.0;
    status = net->comm->ops->allreduce(net->comm->state, &gpu_here, 1, HB_REDUCE_MIN);
    if (status != HB_SUCCESS) return status;
    const int gpu = gpu_here > 0.0;
    if (gpu) {
        p[GPU] = trial(net, HB_BACKEND_CUDA, 0, SAMPLE_GPU, &sampled[GPU]);
        status = net->comm->ops->allreduce(net->comm->state, &p[GPU], 1, HB_REDUCE_MAX);
        if (status != HB_SUCCESS) return status;
    }
    int best = SEQ;
    for (int k = OMP; k < N; k++)
        if (p[k] < p[best]) best = k;
    net->opt.backend = backend[best];
    net->opt.threads = best == OMP ? threads : net->opt.threads;
    net->best_trial_s = hb_clock_seconds() - t0;
    char what[N][128];
    for (int k = 0; k < N; k++) {
        char name[32];
        if (k == OMP) snprintf(name, sizeof name, "omp (%d threads)", threads);
        else snprintf(name, sizeof name, "%s", k == SEQ ? "seq (1 thread)" : "cuda");
        if (isfinite(p[k]))
            snprintf(what[k], sizeof what[k], "%s %.3g s (%d cells tried)", name, p[k],
                     sampled[k]);
        else if (k == OMP && !omp)
            snprintf(what[k], sizeof what[k], "%s not tried (%s)", name,
                     tiny ? "seq's predicted run under 0.25 s"
                          : threads > 1 ? "built without OpenMP" : "1 thread");
        else if (k == GPU && !gpu)
            snprintf(what[k], sizeof what[k], "%s not tried (%s)", name,
                     tiny ? "seq's predicted run under 0.25 s"
                     : cpu < HB_BEST_GPU_TRIAL_S ? "the CPU's predicted run under 1 s"
                                                 : "no GPU");
        else
            snprintf(what[k], sizeof what[k], "%s failed its trial", name);
    }
    snprintf(net->best_reason, sizeof net->best_reason,
             "%s, predicted fastest: %s; %s; %s (each the slowest rank's prediction of this run "
             "from a trial; trials %.3f s)", hb_backend_name(backend[best]), what[SEQ],
             what[OMP], what[GPU], net->best_trial_s);
    net->best_chosen = 1;
    return HB_SUCCESS;
}
