/* The self-event queue (common/self_events.h): a binary heap. */
#include "common/self_events.h"

#include <stdio.h>
#include <stdlib.h>

#include "common/event_order.h"

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
}

void hb_self_free(hb_self_queue_t *q)
{
    free(q->heap);
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
