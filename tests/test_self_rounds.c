#define _POSIX_C_SOURCE 200809L
/*
 * hb_self_rounds (common/self_events.h): the GPU engine's delivery of self-events in rounds
 * (src/cuda/sim_events.cu, a batch of NET_RECEIVE calls a round) against the CPU engine's merge
 * (src/cpu/sim_cpu.c's deliver_events: the next network event, or the first due self-event,
 * one call at a time). A scripted NET_RECEIVE on 8 targets sends itself events into the same
 * step (net_send(0, 1)), a fraction of a step on (flag 3), further (flag 2), and net_moves its
 * waiting flag-1 event; the network's events come at random times of their steps, ties among
 * them and with self-events. Both must call every target with the same events in the same order
 * (time, flag, weight vector, weight: bitwise) and leave the same events waiting. The rounds stopped after
 * one a step (what sends into the step undelivered) must differ: the test sees them. The script
 * also calls net_event(t) (a request of move 2: a spike of its target, a point process as its
 * cell's spike source, docs/network.md): the queues keep the same spikes, each target's in the
 * same order with the same times, and the same sequence once ordered by (time, target) as the
 * network orders every rank's spikes (net_run.c's compare_spike, gid for target), though the
 * rounds send them round by round and the merge target by target.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/event_order.h"
#include "common/self_events.h"
#include "hinesbatch.h"

#define TARGETS 8
#define STEPS 400
#define MAX_LOG 4096
#define DT 0.025

typedef struct {
    double time, flag, weight;
    int weights;
} entry_t;

typedef struct {
    entry_t log[TARGETS][MAX_LOG];
    int n_log[TARGETS];
    int pending1[TARGETS]; /* the script's own view: a flag-1 event waits */
    int overflow;
    int one_round; /* the broken variant: stop after the first round */
    int rounds;
} fake_t;

/* The scripted NET_RECEIVE of one event at target `target`. */
static void receive(fake_t *f, int target, double t, double flag, int weights, double weight,
                    hb_cat_sends_t *out)
{
    if (f->n_log[target] >= MAX_LOG) {
        f->overflow = 1;
        return;
    }
    const int count = f->n_log[target];
    f->log[target][f->n_log[target]++] = (entry_t){t, flag, weight, weights};
    out->n = 0;
    if (count > 200) return; /* a bounded script */
    if (flag == 1.0) f->pending1[target] = 0;
    if (flag == 0.0) {
        if (f->pending1[target] && count % 3 == 1) /* push the waiting closing on */
            out->req[out->n++] = (hb_cat_send_t){t + 0.4 * DT, 0.0, 1};
        else if (!f->pending1[target]) {
            out->req[out->n++] = (hb_cat_send_t){t + (count % 2 ? 0.0 : 1.7 * DT), 1.0, 0};
            f->pending1[target] = 1;
        }
        out->req[out->n++] = (hb_cat_send_t){t + 0.3 * DT, 3.0, 0};
    } else if (flag == 1.0) {
        out->req[out->n++] = (hb_cat_send_t){t + 2.0 * DT, 2.0, 0};
    } else if (flag == 3.0 && count % 4 == 0) {
        out->req[out->n++] = (hb_cat_send_t){t, 2.0, 0};
    }
    if (flag == 2.0 || (flag == 0.0 && count % 5 == 2)) /* net_event(t) */
        out->req[out->n++] = (hb_cat_send_t){t, 0.0, 2};
}

static hb_status_t run_round(void *user, int n, const hb_self_call_t *calls, hb_cat_sends_t *sends)
{
    fake_t *f = user;
    f->rounds++;
    for (int c = 0; c < n; c++)
        receive(f, calls[c].target, calls[c].time, calls[c].flag, calls[c].weights,
                calls[c].weight, &sends[c]);
    return HB_SUCCESS;
}

static const char *mech_name(void *user, int target)
{
    (void)user;
    (void)target;
    return "Scripted";
}

/* The step's network events: sorted by target, then (time, weight, vector) */
static int by_target(const void *pa, const void *pb)
{
    const hb_self_call_t *a = pa, *b = pb;
    if (a->target != b->target) return a->target < b->target ? -1 : 1;
    if (hb_event_before(a->time, a->weight, b->time, b->weight)) return -1;
    if (hb_event_before(b->time, b->weight, a->time, a->weight)) return 1;
    return (a->weights > b->weights) - (a->weights < b->weights);
}

static size_t make_events(long step, unsigned *seed, hb_self_call_t *ev)
{
    size_t n = 0;
    for (int target = 0; target < TARGETS; target++) {
        const int k = (int)(rand_r(seed) % 4);
        for (int i = 0; i < k; i++) {
            /* a time of this step (NEURON's rule), some on the step's grid to tie */
            const int where = (int)(rand_r(seed) % 5);
            const double t = where == 0 ? (double)step * DT
                                        : ((double)step - 0.5 + 0.2 * where) * DT;
            const int w = (int)(rand_r(seed) % 4) - 1;
            ev[n++] = (hb_self_call_t){target, w, w < 0, t, 0.5 * (double)(rand_r(seed) % 3),
                                       0.0};
        }
    }
    for (size_t i = 0; i < n; i++) /* keep only events whose step this is */
        if (hb_event_step(ev[i].time, DT) != step) ev[i].time = (double)step * DT;
    qsort(ev, n, sizeof *ev, by_target);
    return n;
}

/* The CPU engine's merge (sim_cpu.c's deliver_events), one call at a time. */
static hb_status_t cpu_merge(hb_self_queue_t *q, fake_t *f, long step, const hb_self_call_t *net,
                             size_t n_net)
{
    size_t next = 0;
    for (;;) {
        hb_self_event_t se;
        const int has_net = next < n_net;
        const int self = hb_self_due(q, step, &se);
        if (!has_net && !self) return HB_SUCCESS;
        const hb_self_call_t *e = has_net ? &net[next] : NULL;
        hb_cat_sends_t sends;
        memset(&sends, 0, sizeof sends);
        if (e && (!self || e->target < se.target ||
                  (e->target == se.target && e->time <= se.time))) {
            next++;
            receive(f, e->target, e->time, 0.0, e->weights, e->weight, &sends);
            if (!sends.n) continue;
            hb_status_t st = hb_self_requests(q, e->target, e->weights, e->weight, &sends,
                                              e->time, DT, "Scripted");
            if (st != HB_SUCCESS) return st;
            continue;
        }
        const hb_self_event_t d = se;
        hb_self_pop(q);
        hb_self_delivered(q, &d);
        receive(f, d.target, d.time, d.flag, d.weights, d.weight, &sends);
        hb_status_t st = hb_self_requests(q, d.target, d.weights, d.weight, &sends, d.time, DT,
                                          "Scripted");
        if (st != HB_SUCCESS) return st;
    }
}

/* The rounds' variant stopped after one round a step (self-events sent into the step wait). */
static hb_status_t one_round(void *user, int n, const hb_self_call_t *calls, hb_cat_sends_t *sends)
{
    fake_t *f = user;
    if (f->rounds > 0) {
        for (int c = 0; c < n; c++) sends[c].n = 0;
        return HB_ERR_NOT_SUPPORTED; /* ends this step's rounds */
    }
    return run_round(user, n, calls, sends);
}

/* net_event's spikes: ascending (time, target), as the network's compare_spike by gid */
static int by_time_target(const void *pa, const void *pb)
{
    const hb_self_spike_t *a = pa, *b = pb;
    if (a->time != b->time) return a->time < b->time ? -1 : 1;
    return (a->target > b->target) - (a->target < b->target);
}

/* The spikes both queues kept: each target's in order bitwise, and the same sequence in (time,
 * target) order; 1 when they agree. report: print the counts and check there are many. */
static int same_spikes(const hb_self_queue_t *qc, const hb_self_queue_t *qg, int report)
{
    int ok = qc->n_spikes == qg->n_spikes, reordered = 0;
    for (int t = 0; t < TARGETS && ok; t++) {
        size_t i = 0, j = 0;
        for (;;) {
            while (i < qc->n_spikes && qc->spikes[i].target != t) i++;
            while (j < qg->n_spikes && qg->spikes[j].target != t) j++;
            if (i == qc->n_spikes || j == qg->n_spikes) {
                ok = ok && i == qc->n_spikes && j == qg->n_spikes;
                break;
            }
            ok = ok && !memcmp(&qc->spikes[i].time, &qg->spikes[j].time, sizeof(double));
            i++;
            j++;
        }
    }
    const size_t n = qc->n_spikes;
    hb_self_spike_t *a = malloc((n + 1) * sizeof *a), *b = malloc((n + 1) * sizeof *b);
    CHECK(a && b);
    if (ok && a && b) {
        for (size_t k = 0; k < n; k++)
            reordered += qc->spikes[k].target != qg->spikes[k].target ||
                         qc->spikes[k].time != qg->spikes[k].time;
        memcpy(a, qc->spikes, n * sizeof *a);
        memcpy(b, qg->spikes, n * sizeof *b);
        qsort(a, n, sizeof *a, by_time_target);
        qsort(b, n, sizeof *b, by_time_target);
        for (size_t k = 0; k < n; k++)
            ok = ok && a[k].target == b[k].target && !memcmp(&a[k].time, &b[k].time, sizeof(double));
    }
    free(a);
    free(b);
    if (report) {
        printf("net_event: %zu spikes on each side, %d sent in another order across targets, "
               "the same per target and by (time, target): %s\n", n, reordered,
               ok ? "yes" : "NO");
        CHECKF(ok && n > 300, "net_event's spikes: CPU merge %zu, rounds %zu, or others", n,
               qg->n_spikes);
    }
    return ok;
}

/* Runs STEPS steps both ways (or the broken one); 1 when every log and the queues agree. */
static int compare(int broken)
{
    static fake_t cpu, gpu;
    memset(&cpu, 0, sizeof cpu);
    memset(&gpu, 0, sizeof gpu);
    hb_self_queue_t qc = {0}, qg = {0};
    qc.keep_spikes = qg.keep_spikes = 1; /* net_event's spikes kept, as a network's */
    hb_self_scratch_t scratch = {0};
    static hb_self_call_t ev[TARGETS * 4];
    unsigned seed = 12345;
    int ok = 1;
    for (long step = 0; step < STEPS && ok; step++) {
        const size_t n = make_events(step, &seed, ev);
        hb_status_t a = cpu_merge(&qc, &cpu, step, ev, n);
        gpu.rounds = 0;
        const hb_self_runner_t runner = {broken ? one_round : run_round, mech_name, &gpu, DT};
        hb_status_t b = hb_self_rounds(&qg, step, ev, n, &runner, &scratch);
        if (broken && b == HB_ERR_NOT_SUPPORTED) b = HB_SUCCESS;
        if (!broken) CHECKF(a == HB_SUCCESS && b == HB_SUCCESS, "step %ld: %d, %d", step, a, b);
        ok = a == HB_SUCCESS && b == HB_SUCCESS;
    }
    CHECK(!cpu.overflow && !gpu.overflow);
    int calls = 0, flags[4] = {0};
    for (int t = 0; t < TARGETS; t++) {
        if (cpu.n_log[t] != gpu.n_log[t]) ok = 0;
        for (int i = 0; i < cpu.n_log[t] && i < gpu.n_log[t]; i++) {
            const entry_t *x = &cpu.log[t][i], *y = &gpu.log[t][i];
            if (memcmp(&x->time, &y->time, sizeof x->time) || x->flag != y->flag ||
                x->weights != y->weights || memcmp(&x->weight, &y->weight, sizeof x->weight))
                ok = 0;
            const int fl = (int)x->flag;
            if (fl >= 0 && fl < 4) flags[fl]++;
        }
        calls += cpu.n_log[t];
    }
    hb_self_event_t x, y; /* the events left waiting, in the queues' order */
    while (hb_self_due(&qc, HB_EVENT_STEP_NEVER, &x)) {
        if (!hb_self_due(&qg, HB_EVENT_STEP_NEVER, &y) || x.step != y.step ||
            x.target != y.target || x.time != y.time || x.flag != y.flag ||
            x.weights != y.weights || x.movable != y.movable)
            ok = 0;
        hb_self_pop(&qc);
        if (qg.n) hb_self_pop(&qg);
    }
    if (qg.n) ok = 0;
    const int spikes_same = same_spikes(&qc, &qg, !broken);
    ok = ok && spikes_same;
    if (!broken) {
        printf("%d calls on %d targets over %d steps (flags 0..3: %d, %d, %d, %d)\n", calls,
               TARGETS, STEPS, flags[0], flags[1], flags[2], flags[3]);
        CHECKF(calls > 2000 && flags[1] > 100 && flags[2] > 100 && flags[3] > 100,
               "expected every kind of event often: %d calls", calls);
    }
    hb_self_free(&qc);
    hb_self_free(&qg);
    hb_self_scratch_free(&scratch);
    return ok;
}

/* An endless NET_RECEIVE: target 0 sends itself net_send(0, 1) on every event until `limit`
 * self-events (limit < 0: for ever). */
typedef struct {
    long calls, limit;
} endless_t;

static hb_status_t endless_round(void *user, int n, const hb_self_call_t *calls,
                                 hb_cat_sends_t *sends)
{
    endless_t *e = user;
    for (int c = 0; c < n; c++) {
        sends[c].n = 0;
        if (calls[c].flag != 0.0) e->calls++;
        if (e->limit < 0 || e->calls < e->limit)
            sends[c].req[sends[c].n++] = (hb_cat_send_t){calls[c].time, 1.0, 0};
    }
    return HB_SUCCESS;
}

/* The rounds' bound (HB_SELF_STEP_MAX self-events to one target in one step, as the CPU engine's
 * deliver_events counts them): exactly the bound is delivered, one more is refused by name. */
static void endless(void)
{
    for (int k = 0; k < 2; k++) {
        endless_t e = {0, k ? -1 : HB_SELF_STEP_MAX};
        hb_self_queue_t q = {0};
        hb_self_scratch_t scratch = {0};
        const hb_self_runner_t runner = {endless_round, mech_name, &e, DT};
        const hb_self_call_t net = {0, -1, 0, 0.5 * DT, 1.0, 0.0};
        hb_clear_error();
        const hb_status_t st = hb_self_rounds(&q, 0, &net, 1, &runner, &scratch);
        if (k) {
            CHECKF(st == HB_ERR_INVALID_VALUE && e.calls == HB_SELF_STEP_MAX,
                   "an endless NET_RECEIVE: status %d after %ld self-events, expected the refusal "
                   "of the next after %d", (int)st, e.calls, HB_SELF_STEP_MAX);
            CHECKF(strstr(hb_last_error(), "Scripted") &&
                       strstr(hb_last_error(), "HB_SELF_STEP_MAX"),
                   "the refusal names the mechanism and the bound: '%s'", hb_last_error());
        } else {
            CHECKF(st == HB_SUCCESS && e.calls == HB_SELF_STEP_MAX,
                   "exactly HB_SELF_STEP_MAX self-events: status %d after %ld", (int)st, e.calls);
        }
        hb_self_free(&q);
        hb_self_scratch_free(&scratch);
    }
}

int main(void)
{
    endless();
    CHECKF(compare(0), "the rounds' calls differ from the CPU merge's");
    CHECKF(!compare(1), "one round a step gave the CPU merge's calls: the test sees no rounds");
    return check_summary("test_self_rounds");
}
