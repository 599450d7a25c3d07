/* The self-event queue (common/self_events.h): a binary heap. */
#include "common/self_events.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/event_order.h"
#include "common/grow.h"

static int before(const hb_self_event_t *a, const hb_self_event_t *b)
{
    if (a->step != b->step) return a->step < b->step;
    if (a->target != b->target) return a->target < b->target;
    if (a->time != b->time) return a->time < b->time;
    return a->seq < b->seq;
}

static void swap(hb_self_event_t *a, hb_self_event_t *b)
{
    const hb_self_event_t t = *a;
    *a = *b;
    *b = t;
}

static void sift_up(hb_self_queue_t *q, size_t i)
{
    while (i > 0 && before(&q->heap[i], &q->heap[(i - 1) / 2])) {
        swap(&q->heap[i], &q->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
}

static void sift_down(hb_self_queue_t *q, size_t i)
{
    for (;;) {
        size_t m = i;
        const size_t l = 2 * i + 1, r = l + 1;
        if (l < q->n && before(&q->heap[l], &q->heap[m])) m = l;
        if (r < q->n && before(&q->heap[r], &q->heap[m])) m = r;
        if (m == i) return;
        swap(&q->heap[i], &q->heap[m]);
        i = m;
    }
}

void hb_self_endless_text(const char *mech, double t, char *text, size_t size)
{
    snprintf(text, size, "%s at t = %.10g ms: more than %d self-events to one instance in one "
             "step (HB_SELF_STEP_MAX); expected its NET_RECEIVE to stop sending itself events "
             "of no delay", mech, t, HB_SELF_STEP_MAX);
}

void hb_self_clear(hb_self_queue_t *q)
{
    q->n = 0;
    q->seq = 0;
    q->n_spikes = 0;
}

void hb_self_free(hb_self_queue_t *q)
{
    free(q->heap);
    free(q->spikes);
    *q = (hb_self_queue_t){0};
}

int hb_self_due(const hb_self_queue_t *q, long step, hb_self_event_t *e)
{
    if (q->n == 0 || q->heap[0].step > step) return 0;
    *e = q->heap[0];
    return 1;
}

void hb_self_pop(hb_self_queue_t *q)
{
    if (q->n == 0) return;
    q->heap[0] = q->heap[--q->n];
    sift_down(q, 0);
}

size_t hb_self_restep(hb_self_queue_t *q, double t, long step)
{
    size_t n = 0;
    for (size_t i = 0; i < q->n; i++)
        if (q->heap[i].time <= t && q->heap[i].step > step) {
            q->heap[i].step = step;
            n++;
        }
    if (n) /* earlier keys: the heap rebuilt from its last parent up */
        for (size_t i = q->n / 2; i-- > 0;) sift_down(q, i);
    return n;
}

void hb_self_delivered(hb_self_queue_t *q, const hb_self_event_t *e)
{
    if (e->flag != 1.0) return;
    for (size_t i = 0; i < q->n; i++)
        if (q->heap[i].target == e->target) q->heap[i].movable = 0;
}

hb_status_t hb_self_push(hb_self_queue_t *q, const hb_self_event_t *e)
{
    if (q->n == q->cap) {
        const size_t cap = 2 * q->cap + 64;
        hb_self_event_t *h = realloc(q->heap, cap * sizeof *h);
        if (!h) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu self-events", cap);
        q->heap = h;
        q->cap = cap;
    }
    q->heap[q->n] = *e;
    sift_up(q, q->n++);
    return HB_SUCCESS;
}

hb_status_t hb_self_requests(hb_self_queue_t *q, int target, int weights, double weight,
                             const hb_cat_sends_t *sends, double now, double dt,
                             const char *mech)
{
    if (sends->n > HB_CAT_MAX_SENDS)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: %d net_send/net_move calls in one NET_RECEIVE "
                       "or INITIAL at t = %.17g ms; expected at most %d", mech, sends->n, now,
                       HB_CAT_MAX_SENDS);
    for (int r = 0; r < sends->n; r++) {
        const hb_cat_send_t *s = &sends->req[r];
        if (s->move == 2) { /* net_event: a spike, no event of its own */
            if (s->time != now) /* NaN too */
                return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: net_event at %.17g ms in NET_RECEIVE "
                               "at t = %.17g ms; expected net_event(t), a spike at the event's "
                               "time", mech, s->time, now);
            if (!q->keep_spikes) continue;
            if (q->n_spikes == q->cap_spikes) {
                const size_t cap = q->cap_spikes ? 2 * q->cap_spikes : 64;
                hb_self_spike_t *p = realloc(q->spikes, cap * sizeof *p);
                if (!p) return hb_fail(HB_ERR_ALLOC, "%s: out of memory for net_event's spikes",
                                       mech);
                q->spikes = p;
                q->cap_spikes = cap;
            }
            q->spikes[q->n_spikes++] = (hb_self_spike_t){target, s->time};
            continue;
        }
        if (!(s->time >= now)) /* NaN too */
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s at t = %.17g ms to %.17g ms, before "
                           "now; expected a delay >= 0 (NEURON: \"%s tt < t\")", mech,
                           s->move ? "net_move" : "net_send", now, s->time,
                           s->move ? "net_move" : "net_send");
        if (s->move) {
            size_t i = 0;
            while (i < q->n && !(q->heap[i].target == target && q->heap[i].movable)) i++;
            if (i == q->n)
                return hb_fail(HB_ERR_INVALID_VALUE, "%s: net_move at t = %.17g ms with no "
                               "event of flag 1 waiting; expected net_send(delay, 1) before it "
                               "(NEURON: \"No event with flag=1 for net_move\")", mech, now);
            hb_self_event_t e = q->heap[i];
            e.time = s->time;
            e.step = hb_event_step(s->time, dt);
            /* out and in again: the moved event keeps its sequence */
            q->heap[i] = q->heap[--q->n];
            if (i < q->n) {
                sift_down(q, i);
                sift_up(q, i);
            }
            hb_status_t st = hb_self_push(q, &e);
            if (st != HB_SUCCESS) return st;
            continue;
        }
        if (s->flag == 1.0)
            for (size_t i = 0; i < q->n; i++)
                if (q->heap[i].target == target) q->heap[i].movable = 0;
        const hb_self_event_t e = {hb_event_step(s->time, dt), target, weights, s->time, s->flag,
                                   weight, q->seq++, s->flag == 1.0};
        hb_status_t st = hb_self_push(q, &e);
        if (st != HB_SUCCESS) return st;
    }
    return HB_SUCCESS;
}

void hb_self_scratch_free(hb_self_scratch_t *s)
{
    free(s->due);
    free(s->calls);
    free(s->sends);
    free(s->group);
    for (int k = 0; k < 2; k++) {
        free(s->count_target[k]);
        free(s->count[k]);
    }
    *s = (hb_self_scratch_t){0};
}

hb_status_t hb_self_rounds(hb_self_queue_t *q, long step, const hb_self_call_t *net, size_t n_net,
                           const hb_self_runner_t *runner, hb_self_scratch_t *s)
{
    /* the network events per target: group g is net[start, end), its cursor at group[3g + 2] */
    size_t n_group = 0;
    if (!hb_grow((void **)&s->group, &s->cap_group, 3 * n_net + 3, sizeof *s->group))
        return hb_fail(HB_ERR_ALLOC, "self-events: out of memory for %zu events", n_net);
    for (size_t i = 0; i < n_net; i++)
        if (i == 0 || net[i].target != net[i - 1].target) {
            if (n_group) s->group[3 * (n_group - 1) + 1] = i;
            s->group[3 * n_group] = s->group[3 * n_group + 2] = i;
            n_group++;
        }
    if (n_group) s->group[3 * (n_group - 1) + 1] = n_net;
    s->n_count = 0;
    for (;;) {
        size_t n_due = 0; /* every due self-event, in the queue's order (target, time, sending) */
        hb_self_event_t se;
        while (hb_self_due(q, step, &se)) {
            if (!hb_grow((void **)&s->due, &s->cap_due, n_due + 1, sizeof *s->due))
                return hb_fail(HB_ERR_ALLOC, "self-events: out of memory");
            s->due[n_due++] = se;
            hb_self_pop(q);
        }
        const size_t most = n_due + n_group + 1;
        size_t cap_sends = s->cap_calls, cap_t = s->cap_count[1];
        if (!hb_grow((void **)&s->sends, &cap_sends, most, sizeof *s->sends) ||
            !hb_grow((void **)&s->calls, &s->cap_calls, most, sizeof *s->calls) ||
            !hb_grow((void **)&s->count_target[1], &cap_t, most, sizeof *s->count_target[1]) ||
            !hb_grow((void **)&s->count[1], &s->cap_count[1], most, sizeof *s->count[1]))
            return hb_fail(HB_ERR_ALLOC, "self-events: out of memory for %zu calls", most);
        size_t prev = 0; /* the walk over the last round's counts (targets ascending) */
        int n = 0;
        size_t a = 0, b = 0, taken = 0; /* taken: self-events delivered, due[0, taken) */
        hb_status_t st = HB_SUCCESS;
        for (;;) {
            while (b < n_group && s->group[3 * b + 2] >= s->group[3 * b + 1]) b++;
            const int ta = a < n_due ? s->due[a].target : INT_MAX;
            const int tb = b < n_group ? net[s->group[3 * b + 2]].target : INT_MAX;
            if (ta == INT_MAX && tb == INT_MAX) break;
            const int target = ta < tb ? ta : tb;
            size_t a_end = a;
            while (a_end < n_due && s->due[a_end].target == target) a_end++;
            const hb_self_call_t *e = tb == target ? &net[s->group[3 * b + 2]] : NULL;
            hb_self_call_t *call = &s->calls[n++];
            size_t wait = a; /* this target's due self-events from here wait */
            if (e && (ta != target || e->time <= s->due[a].time)) {
                *call = *e;
                call->flag = 0.0;
                s->group[3 * b + 2]++;
            } else {
                const hb_self_event_t d = s->due[a];
                *call = (hb_self_call_t){d.target, d.weights, 0, d.time, d.weight, d.flag};
                s->due[taken++] = d; /* taken <= a: nothing unread is overwritten */
                wait = a + 1;
            }
            /* only a target's own NET_RECEIVE sends it events, so this round's targets are
             * among the last round's: its count is found walking forward */
            while (prev < s->n_count && s->count_target[0][prev] < target) prev++;
            const long before = prev < s->n_count && s->count_target[0][prev] == target
                                    ? s->count[0][prev] : 0;
            s->count_target[1][n - 1] = target;
            s->count[1][n - 1] = before + (wait > a);
            if (s->count[1][n - 1] > HB_SELF_STEP_MAX) {
                char what[256];
                hb_self_endless_text(runner->mech(runner->user, target), call->time, what,
                                     sizeof what);
                return hb_fail(HB_ERR_INVALID_VALUE, "simulation: %s, at target %d", what, target);
            }
            for (size_t i = wait; i < a_end && st == HB_SUCCESS; i++) st = hb_self_push(q, &s->due[i]);
            if (st != HB_SUCCESS) return st;
            a = a_end;
            if (tb == target) b++;
        }
        if (!n) return HB_SUCCESS;
        { /* this round's counts become the last round's */
            int *ct = s->count_target[0];
            long *c = s->count[0];
            const size_t cap = s->cap_count[0];
            s->count_target[0] = s->count_target[1];
            s->count[0] = s->count[1];
            s->cap_count[0] = s->cap_count[1];
            s->count_target[1] = ct;
            s->count[1] = c;
            s->cap_count[1] = cap;
            s->n_count = (size_t)n;
        }
        for (size_t i = 0; i < taken; i++) hb_self_delivered(q, &s->due[i]);
        for (int c = 0; c < n; c++) s->sends[c].n = 0;
        if ((st = runner->run(runner->user, n, s->calls, s->sends)) != HB_SUCCESS) return st;
        for (int c = 0; c < n; c++) {
            const hb_self_call_t *call = &s->calls[c];
            if (!s->sends[c].n) continue;
            st = hb_self_requests(q, call->target, call->weights, call->weight, &s->sends[c],
                                  call->time, runner->dt, runner->mech(runner->user, call->target));
            if (st != HB_SUCCESS) return st;
        }
    }
}
