/*
 * Running a network (hb_net_run): epochs of at most the smallest delay. Within an epoch each
 * step first delivers the events due then (NEURON's rule: at the start of the step whose
 * midpoint is not before the event), then steps every local cell; detectors' spikes and the
 * spike sources' fill this rank's buffer. At the epoch's end every rank's spikes are gathered
 * on every rank (MPI_Allgather of the counts, MPI_Iallgatherv of the spikes, which overlaps
 * the next epoch where epochs are half the smallest delay), ordered by (time, gid), and turned
 * into events through the connections that end here. Events of one
 * step are delivered ordered by (cell, synapse, time, weight): the same order on any rank and
 * thread count, so the same sums and the same spikes.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

#include "common/event_order.h"
#include "common/philox.h"
#include "common/status.h"
#include "net/net_engine.h"

enum { STREAM_SOURCE_INTERVALS = 1 }; /* Philox stream of the spike sources' draws */

static int compare_event(const void *a, const void *b)
{
    const hb_net_event_t *x = a, *y = b;
    if (x->step != y->step) return x->step < y->step ? -1 : 1;
    if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
    if (x->synapse != y->synapse) return x->synapse < y->synapse ? -1 : 1;
    if (x->time != y->time) return x->time < y->time ? -1 : 1;
    if (x->weight != y->weight) return x->weight < y->weight ? -1 : 1;
    /* alike events of two connections to a point process: the connections' order (their
     * weight vectors' state may differ) */
    return (x->weights > y->weights) - (x->weights < y->weights);
}

static int compare_spike(const void *a, const void *b)
{
    const hb_spike_t *x = a, *y = b;
    if (x->time_ms != y->time_ms) return x->time_ms < y->time_ms ? -1 : 1;
    return (x->gid > y->gid) - (x->gid < y->gid);
}

static hb_status_t push_local(hb_net_t *net, double t, uint32_t gid)
{
    if (!hb_net_reserve((void **)&net->local, net->n_local, &net->cap_local, 1, sizeof *net->local))
        return hb_fail(HB_ERR_ALLOC, "network: out of memory for spikes");
    net->local[net->n_local++] = (hb_spike_t){t, gid, 0};
    return HB_SUCCESS;
}

/* NetStim's invl(): (1 - noise) mean + noise * an exponential draw of that mean. */
static double interval(const hb_net_source_t *src, long k)
{
    const hb_spike_source_t *p = &src->p;
    if (p->noise == 0.0) return p->interval_ms;
    const hb_philox_ctr_t d = hb_philox_draw(p->seed, src->gid, STREAM_SOURCE_INTERVALS,
                                             (uint64_t)k);
    const double u = hb_philox_uniform(d.v[0], d.v[1]);
    return (1.0 - p->noise) * p->interval_ms + p->noise * p->interval_ms * -log(u);
}

void hb_net_source_reset(hb_net_source_t *src)
{
    src->emitted = 0;
    /* NetStim's INITIAL: the first spike at start + invl - interval (1 - noise), not < 0 */
    const double first = src->p.start_ms + interval(src, 0) - src->p.interval_ms * (1.0 - src->p.noise);
    src->next_ms = first > 0.0 ? first : 0.0;
}

hb_status_t hb_net_source_spikes(hb_net_t *net, hb_net_source_t *src, double t_end)
{
    while (src->emitted < src->p.number && src->next_ms <= t_end) {
        hb_status_t status = push_local(net, src->next_ms, src->gid);
        if (status != HB_SUCCESS) return status;
        src->emitted++;
        src->next_ms += interval(src, src->emitted);
    }
    return HB_SUCCESS;
}

/* Every source's spikes up to t_end; none scanned while the earliest next spike is later
 * (a million quiet sources cost nothing an epoch). */
static hb_status_t sources_spikes(hb_net_t *net, double t_end)
{
    if (net->sources_next_ms > t_end) return HB_SUCCESS;
    double next = INFINITY;
    hb_status_t status = HB_SUCCESS;
    for (int s = 0; s < net->n_sources && status == HB_SUCCESS; s++) {
        hb_net_source_t *src = &net->sources[s];
        status = hb_net_source_spikes(net, src, t_end);
        if (src->emitted < src->p.number && src->next_ms < next) next = src->next_ms;
    }
    net->sources_next_ms = status == HB_SUCCESS ? next : -INFINITY;
    return status;
}

/*
 * The exchange of an epoch, without waiting (HB_NET_BLOCKING and HB_NET_IALLGATHERV): the
 * epoch's buffer becomes the one sent (the next epoch fills the other), then two stages, each
 * a non-blocking collective so that no rank waits for another at an epoch's end: the counts
 * (an MPI_Iallgatherv of one int a rank, -1 from a rank that failed), and, once they have
 * arrived (checked after each step, exchange_progress), the spikes (MPI_Iallgatherv into
 * net->incoming). exchange_finish waits for what is left.
 */
/* The epoch's buffer becomes the one sent; the next epoch fills the other. */
static void swap_sending(hb_net_t *net)
{
    hb_spike_t *const filled = net->local;
    const size_t filled_cap = net->cap_local;
    net->local = net->sending;
    net->cap_local = net->cap_sending;
    net->sending = filled;
    net->cap_sending = filled_cap;
    net->n_sending = net->n_local;
    net->n_local = 0;
}

/* The first stage for the spikes of net->sending: the counts' all-gather, started. */
static hb_status_t post_counts(hb_net_t *net, int failing)
{
    hb_comm_t *comm = net->comm;
    net->my_count = failing || net->n_sending > (size_t)0x7fffffff ? -1 : (int)net->n_sending;
    hb_status_t status = comm->ops->iallgatherv(comm->state, &net->my_count, 1, net->count_in,
                                                net->ones, net->iota, sizeof(int),
                                                &net->count_request);
    if (status != HB_SUCCESS) return status;
    net->stage = EXCHANGE_COUNTS;
    net->in_flight = 1;
    return HB_SUCCESS;
}

static hb_status_t exchange_start(hb_net_t *net, int failing)
{
    swap_sending(net);
    return post_counts(net, failing);
}

/* The counts have arrived: the spikes' all-gather starts (none if a rank failed). */
static hb_status_t exchange_spikes(hb_net_t *net)
{
    hb_comm_t *comm = net->comm;
    hb_status_t status = comm->ops->wait(comm->state, net->count_request);
    net->count_request = NULL;
    if (status != HB_SUCCESS) return status;
    size_t total = 0;
    net->exchange_failed = 0;
    for (int r = 0; r < comm->size; r++) {
        net->counts[r] = net->count_in[r];
        net->exchange_failed |= net->counts[r] < 0;
        if (net->counts[r] < 0) net->counts[r] = 0;
        net->displs[r] = (int)total;
        total += (size_t)net->counts[r];
    }
    net->n_incoming = 0;
    net->stage = EXCHANGE_DONE;
    if (net->exchange_failed) return HB_SUCCESS; /* every rank sees the same counts */
    if (total > (size_t)0x7fffffff)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "network: %zu spikes in one epoch", total);
    if (!hb_net_reserve((void **)&net->incoming, 0, &net->cap_incoming, total + 1,
                        sizeof *net->incoming))
        return hb_fail(HB_ERR_ALLOC, "network: out of memory for %zu spikes", total);
    status = comm->ops->iallgatherv(comm->state, net->sending, (int)net->n_sending, net->incoming,
                                    net->counts, net->displs, sizeof *net->incoming,
                                    &net->request);
    if (status != HB_SUCCESS) return status;
    net->n_incoming = total;
    net->stage = EXCHANGE_SPIKES;
    return HB_SUCCESS;
}

/* After a step: the exchange in flight moves on (MPI_Test), never waiting. */
static hb_status_t exchange_progress(hb_net_t *net)
{
    int done = 0;
    hb_status_t status = HB_SUCCESS;
    if (net->stage == EXCHANGE_COUNTS) {
        status = net->comm->ops->progress(net->comm->state, net->count_request, &done);
        if (status == HB_SUCCESS && done) status = exchange_spikes(net);
    } else if (net->stage == EXCHANGE_SPIKES) {
        status = net->comm->ops->progress(net->comm->state, net->request, &done);
    }
    return status;
}

/* Waits for the exchange in flight; its n_new spikes, ordered by (time, gid), in
 * net->incoming and merged into net->spikes. A rank that failed makes every rank fail here. */
static hb_status_t exchange_finish(hb_net_t *net, size_t *n_new)
{
    *n_new = 0;
    if (!net->in_flight) return HB_SUCCESS;
    hb_status_t status = HB_SUCCESS;
    if (net->stage == EXCHANGE_COUNTS) status = exchange_spikes(net);
    if (status == HB_SUCCESS && net->stage == EXCHANGE_SPIKES) {
        status = net->comm->ops->wait(net->comm->state, net->request);
        net->request = NULL;
    }
    net->in_flight = 0;
    net->stage = EXCHANGE_NONE;
    if (status != HB_SUCCESS) return status;
    if (net->exchange_failed)
        return hb_fail(HB_ERR_BACKEND, "hb_net_run: another rank failed");
    const size_t total = net->n_incoming;
    if (!hb_net_reserve((void **)&net->spikes, net->n_spikes, &net->cap_spikes, total + 1,
                 sizeof *net->spikes))
        return hb_fail(HB_ERR_ALLOC, "network: out of memory for %zu spikes", net->n_spikes + total);
    if (total) {
        qsort(net->incoming, total, sizeof *net->incoming, compare_spike);
        memcpy(net->spikes + net->n_spikes, net->incoming, total * sizeof *net->spikes);
        /* a net_event's spike has its event's time, up to half a step before the step that
         * delivered it (an artificial cell's at an epoch's first step may tie with or precede
         * the last epoch's latest spikes): the new ones moved back into (time, gid) order,
         * their events made from net->incoming */
        hb_spike_t *sp = net->spikes;
        for (size_t k = net->n_spikes; k < net->n_spikes + total; k++)
            for (size_t j = k; j > 0 && compare_spike(&sp[j - 1], &sp[j]) > 0; j--) {
                const hb_spike_t x = sp[j];
                sp[j] = sp[j - 1];
                sp[j - 1] = x;
            }
    }
    *n_new = total;
    net->n_spikes += total;
    return HB_SUCCESS;
}

/* A failed run's exchange: waited for, so that no collective is left behind. */
void hb_net_exchange_abandon(hb_net_t *net)
{
    if (!net->in_flight) return;
    /* the others post the spikes' all-gather unless someone failed: so must this rank */
    if (net->stage == EXCHANGE_COUNTS) exchange_spikes(net);
    if (net->stage == EXCHANGE_SPIKES) net->comm->ops->wait(net->comm->state, net->request);
    net->request = NULL;
    net->in_flight = 0;
    net->stage = EXCHANGE_NONE;
}

size_t hb_net_final_spikes(const hb_net_t *net)
{
    size_t n = net->n_spikes;
    if (net->step >= net->total_steps) return n;
    /* a later spike has t > step dt - dt/2: a net_event's, its event's time, up to half a
     * step before the step that delivered it */
    const double t_final = (double)net->step * net->opt.dt_ms - 0.5 * net->opt.dt_ms; /* as hinesbatch run computes it */
    while (n > 0 && net->spikes[n - 1].time_ms > t_final) n--;
    return n;
}

/* The events of the new spikes: every connection from their sources that ends here. */
static hb_status_t make_events(hb_net_t *net, size_t n)
{
    const double dt = net->opt.dt_ms;
    for (size_t k = 0; k < n; k++) {
        const hb_spike_t *sp = &net->incoming[k];
        size_t lo = 0, hi = net->n_conns; /* first connection with source >= gid */
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (net->conns[mid].source < sp->gid) lo = mid + 1;
            else hi = mid;
        }
        for (size_t c = lo; c < net->n_conns && net->conns[c].source == sp->gid; c++) {
            const hb_net_conn_t *e = &net->conns[c];
            const double t = sp->time_ms + e->delay;
            const long step = hb_event_step(t, dt);
            if (step >= net->total_steps) continue;
            if (!hb_net_reserve((void **)&net->pending, net->n_pending, &net->cap_pending, 1,
                         sizeof *net->pending))
                return hb_fail(HB_ERR_ALLOC, "network: out of memory for events");
            net->pending[net->n_pending++] = (hb_net_event_t){
                step, e->cell, e->synapse, net->conn_weights ? net->conn_weights[c] : -1, t,
                e->weight};
        }
    }
    return HB_SUCCESS;
}

/* The events of the new spikes: made here, or by the simulation's engine (the GPU). */
static hb_status_t spike_events(hb_net_t *net, size_t n)
{
    if (net->sim && hb_sim_makes_events(net->sim))
        return hb_sim_add_spikes(net->sim, n, net->incoming);
    return make_events(net, n);
}

/* The detectors' new spikes into this rank's buffer. */
static hb_status_t detect(hb_net_t *net)
{
    hb_status_t status = HB_SUCCESS;
    for (int c = 0; c < net->n_cable && status == HB_SUCCESS; c++) {
        if (net->detector[c] < 0) continue;
        const double *t;
        int count;
        status = hb_sim_spikes(net->sim, net->detector[c], &t, &count);
        for (; net->seen[c] < count && status == HB_SUCCESS; net->seen[c]++)
            status = push_local(net, t[net->seen[c]], net->cable_gid[c]);
    }
    if (status != HB_SUCCESS || !net->n_point_sources) return status;
    /* point processes' net_events (in the engine's delivery order): those of the cells' spike
     * sources are spikes of the cells' gids; the others reach no connection (NEURON: a
     * net_event without a NetCon from its point process) */
    size_t n;
    const hb_self_spike_t *fired = hb_sim_point_spikes(net->sim, &n);
    for (size_t k = 0; k < n && status == HB_SUCCESS; k++) {
        int lo = 0, hi = net->n_point_sources;
        while (lo < hi) {
            const int mid = lo + (hi - lo) / 2;
            if (net->ps_target[mid] < fired[k].target) lo = mid + 1;
            else hi = mid;
        }
        if (lo < net->n_point_sources && net->ps_target[lo] == fired[k].target)
            status = push_local(net, fired[k].time, net->cable_gid[net->ps_cell[lo]]);
    }
    hb_sim_point_spikes_clear(net->sim);
    return status;
}

/* The pending events of steps before s1 (sorted) to the simulation, out of the queue. */
/* The pending events in order: the new ones sorted, then merged with the sorted rest (which
 * a sort of all of them each epoch would sort again and again). */
static hb_status_t sort_pending(hb_net_t *net)
{
    const size_t old = net->n_sorted <= net->n_pending ? net->n_sorted : 0, n = net->n_pending;
    hb_net_event_t *p = net->pending;
    if (n > old) qsort(p + old, n - old, sizeof *p, compare_event);
    if (old && n > old && compare_event(&p[old - 1], &p[old]) > 0) {
        if (!hb_net_reserve((void **)&net->merged, 0, &net->cap_merged, n, sizeof *p))
            return hb_fail(HB_ERR_ALLOC, "network: out of memory for %zu events", n);
        hb_net_event_t *out = net->merged;
        size_t a = 0, b = old, k = 0;
        while (a < old && b < n) out[k++] = compare_event(&p[b], &p[a]) < 0 ? p[b++] : p[a++];
        while (a < old) out[k++] = p[a++];
        while (b < n) out[k++] = p[b++];
        memcpy(p, out, n * sizeof *p);
    }
    net->n_sorted = n;
    return HB_SUCCESS;
}

/* The first n pending events in net->due, as the simulation takes them. */
static hb_status_t sim_events(hb_net_t *net, size_t n)
{
    if (!hb_net_reserve((void **)&net->due, 0, &net->cap_due, n, sizeof *net->due))
        return hb_fail(HB_ERR_ALLOC, "network: out of memory for %zu events", n);
    for (size_t k = 0; k < n; k++) {
        const hb_net_event_t *ev = &net->pending[k];
        net->due[k] = (hb_sim_event_t){ev->step, ev->cell, ev->synapse, ev->weights, ev->time,
                                       ev->weight};
    }
    return HB_SUCCESS;
}

static hb_status_t queue_due(hb_net_t *net, long s0, long s1)
{
    hb_status_t status = sort_pending(net);
    if (status != HB_SUCCESS) return status;
    size_t due = 0;
    while (due < net->n_pending && net->pending[due].step < s1) due++;
    if (due && net->pending[0].step < s0)
        return hb_fail(HB_ERR_BACKEND, "network: an event for step %ld came at step %ld "
                       "(epoch of %d steps, smallest delay %g ms)", net->pending[0].step, s0,
                       net->epoch_steps, net->min_delay);
    if ((status = sim_events(net, due)) != HB_SUCCESS) return status;
    status = hb_sim_queue_events(net->sim, due, net->due);
    /* the delivered events leave the queue */
    if (due) {
        memmove(net->pending, net->pending + due, (net->n_pending - due) * sizeof *net->pending);
        net->n_pending -= due;
    }
    net->n_sorted = net->n_pending;
    return status;
}

/*
 * Local steps [s0, s1): the events due in them handed to the simulation at once (its engine
 * delivers each at the start of its step; the GPU's engine makes and orders them itself),
 * the steps, then the detectors' spikes. The Iallgatherv mode steps one step at a time,
 * moving its exchange on in between (the tasks mode's master thread waits on its own: MPI
 * from its thread alone).
 */
static hb_status_t integrate(hb_net_t *net, long s0, long s1)
{
    const double t0 = hb_clock_seconds();
    hb_status_t status = hb_sim_makes_events(net->sim) ? hb_sim_queue_due(net->sim, s1)
                                                       : queue_due(net, s0, s1);
    const double t1 = hb_clock_seconds();
    net->stats.deliver_s += t1 - t0;
    const long stride = net->overlap == HB_NET_IALLGATHERV && net->in_flight ? 1 : s1 - s0;
    for (long n = s0; n < s1 && status == HB_SUCCESS; n += stride) {
        status = hb_sim_advance(net->sim, stride < s1 - n ? stride : s1 - n);
        if (status == HB_SUCCESS && net->in_flight && net->overlap == HB_NET_IALLGATHERV)
            status = exchange_progress(net);
    }
    const double t2 = hb_clock_seconds();
    net->stats.update_s += t2 - t1;
    if (status == HB_SUCCESS) status = detect(net);
    net->stats.detect_s += hb_clock_seconds() - t2;
    return status;
}

/* The recipe's events of this rank's cells, queued (hb_net_init). */
static hb_status_t generated_events(hb_net_t *net)
{
    if (!net->recipe.events_on) return HB_SUCCESS;
    const double dt = net->opt.dt_ms;
    for (int c = 0; c < net->n_cable; c++) {
        const uint32_t gid = net->cable_gid[c];
        int count = 0;
        hb_status_t status = net->recipe.events_on(net->recipe.user, gid, NULL, &count);
        if (status != HB_SUCCESS || count <= 0) {
            if (status == HB_SUCCESS && count < 0)
                status = hb_fail(HB_ERR_INVALID_VALUE, "hb_net_init: gid %u: %d events; "
                                 "expected >= 0", gid, count);
            if (status != HB_SUCCESS) return status;
            continue;
        }
        hb_event_t *ev = malloc((size_t)count * sizeof *ev);
        if (!ev || !hb_net_reserve((void **)&net->pending, net->n_pending, &net->cap_pending,
                            (size_t)count, sizeof *net->pending)) {
            free(ev);
            return hb_fail(HB_ERR_ALLOC, "hb_net_init: out of memory for the events of gid %u", gid);
        }
        int got = count;
        status = net->recipe.events_on(net->recipe.user, gid, ev, &got);
        const int n_syn = hb_sim_cell_synapses(net->sim, c);
        for (int k = 0; k < got && k < count && status == HB_SUCCESS; k++) {
            if (ev[k].synapse < 0 || ev[k].synapse >= n_syn || !isfinite(ev[k].weight_us) ||
                !(ev[k].time_ms >= 0.0) || !isfinite(ev[k].time_ms))
                status = hb_fail(HB_ERR_INVALID_VALUE, "event %d of gid %u: synapse %d, time %g "
                                 "ms, weight %g uS; expected a synapse of the cell (it has %d), "
                                 "a time >= 0 and a finite weight", k, gid, ev[k].synapse,
                                 ev[k].time_ms, ev[k].weight_us, n_syn);
            const long step = hb_event_step(ev[k].time_ms, dt);
            if (status == HB_SUCCESS && step < net->total_steps)
                net->pending[net->n_pending++] = (hb_net_event_t){
                    step, c, ev[k].synapse, -1, ev[k].time_ms, ev[k].weight_us};
        }
        free(ev);
        if (status != HB_SUCCESS) return status;
    }
    return HB_SUCCESS;
}

/* An engine that makes its events (the GPU) gets the connections (once) and the recipe's
 * events (hb_net_init, after generated_events); nothing stays pending here. */
static hb_status_t engine_events(hb_net_t *net)
{
    if (!net->sim || !hb_sim_makes_events(net->sim)) return HB_SUCCESS;
    hb_status_t status = HB_SUCCESS;
    if (!net->engine_conns) {
        status = hb_sim_set_connections(net->sim, net->n_conns, net->conns, net->conn_weights,
                                        net->total_steps);
        net->engine_conns = status == HB_SUCCESS;
    }
    if (status == HB_SUCCESS && net->n_pending) {
        if ((status = sim_events(net, net->n_pending)) != HB_SUCCESS) return status;
        status = hb_sim_add_events(net->sim, net->n_pending, net->due);
        net->n_pending = 0;
    }
    return status;
}

/* The spike sources' spikes before t_stop on this rank: each source's number, or as many
 * of its (mean) intervals as fit between its start and t_stop, if fewer. */
static double source_spikes(const hb_net_t *net)
{
    double total = 0.0;
    for (int s = 0; s < net->n_sources; s++) {
        const hb_spike_source_t *p = &net->sources[s].p;
        const double first = p->noise == 0.0 ? p->start_ms : fmax(0.0, p->start_ms - p->interval_ms);
        const double fit = first <= net->opt.t_stop_ms
                               ? floor((net->opt.t_stop_ms - first) / p->interval_ms) + 1.0 : 0.0;
        total += fmin((double)p->number, fit);
    }
    return total;
}

/*
 * The spikes' memory, before the run, on every rank alike (their sum is every rank's): each
 * rank holds every spike, HB_NET_SPIKE_BYTES each (the array, grown by doubling), the whole
 * run's when kept (hb_net_set_keep_spikes), else at least one epoch's in the exchange's three
 * buffers (this rank's, the one sent, all ranks'). The detectors' spikes are not known before
 * the run; the sources' are. Refused when more than the machine's memory, with the estimate.
 */
#define HB_NET_SPIKE_BYTES 32.0
static hb_status_t check_spike_memory(const hb_net_t *net, double source_total)
{
    const double memory = hb_physical_memory();
    const double epochs = net->total_steps > 0
                              ? ceil((double)net->total_steps / net->epoch_steps) : 1.0;
    const double held = net->keep_spikes ? source_total : source_total / epochs;
    const double bytes = net->keep_spikes ? held * HB_NET_SPIKE_BYTES
                                          : held * 3.0 * sizeof(hb_spike_t);
    if (memory > 0.0 && bytes > memory)
        return hb_fail(HB_ERR_ALLOC, "hb_net_init: the spike sources emit about %.4g spikes "
                       "before t_stop (%g ms); every rank holds %s (%.4g spikes, about %.3g GB), "
                       "more than this machine's memory (%.3g GB); expected fewer sources or "
                       "spikes (count, number, interval), a shorter t_stop%s", source_total,
                       net->opt.t_stop_ms, net->keep_spikes ? "them all" : "an epoch's",
                       held, bytes / 1e9, memory / 1e9, net->keep_spikes
                       ? ", or a run that streams them (hb_net_set_keep_spikes 0; hinesbatch "
                         "run without --sonata or checkpoints)" : "");
    return HB_SUCCESS;
}

hb_status_t hb_net_init(hb_net_t *net)
{
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_init: net is NULL");
    const double t0 = hb_clock_seconds();
    hb_status_t status = net->sim ? hb_sim_init(net->sim) : HB_SUCCESS;
    hb_net_exchange_abandon(net); /* a failed run's exchange */
    net->n_spikes = net->n_local = net->n_pending = net->n_sending = net->n_sorted = 0;
    net->n_forgotten = 0;
    net->step = 0;
    if (net->n_cable) memset(net->seen, 0, (size_t)net->n_cable * sizeof *net->seen);
    for (int s = 0; s < net->n_sources; s++) hb_net_source_reset(&net->sources[s]);
    net->sources_next_ms = -INFINITY; /* not known: the first epoch scans them */
    if (status == HB_SUCCESS) status = generated_events(net);
    if (status == HB_SUCCESS) status = engine_events(net);
    /* every rank must agree before the first exchange; the spike sources' spikes counted on
     * the way (every rank the same sum) */
    double failed[1] = {status != HB_SUCCESS}, spikes[1] = {source_spikes(net)};
    char message[1024];
    snprintf(message, sizeof message, "%s", hb_last_error());
    hb_status_t agreed = net->comm->ops->allreduce(net->comm->state, failed, 1, HB_REDUCE_MAX);
    if (agreed == HB_SUCCESS)
        agreed = net->comm->ops->allreduce(net->comm->state, spikes, 1, HB_REDUCE_SUM);
    if (status != HB_SUCCESS) hb_fail(status, "%s", message);
    else if (agreed != HB_SUCCESS) status = agreed;
    else if (failed[0] > 0.0)
        status = hb_fail(HB_ERR_INVALID_VALUE, "hb_net_init: another rank failed");
    else
        status = check_spike_memory(net, spikes[0]);
    memset(&net->stats, 0, sizeof net->stats);
    net->stats.build_s = net->build_s;
    net->stats.init_s = hb_clock_seconds() - t0;
    net->t_origin = t0;
    net->n_trace = 0;
    net->initialised = status == HB_SUCCESS;
    return status;
}

/* One interval of the timeline (hb_net_set_trace), if recording and room is left. */
static void trace(hb_net_t *net, const char *name, double begin, double end)
{
    if (net->n_trace >= net->max_trace) return;
    net->trace[net->n_trace++] = (hb_trace_event_t){name, begin - net->t_origin,
                                                    end - net->t_origin, net->step};
}

/* Finishes the exchange in flight and makes its events. */
static hb_status_t collect(hb_net_t *net)
{
    size_t n = 0;
    const double t0 = hb_clock_seconds();
    hb_status_t status = exchange_finish(net, &n);
    const double t1 = hb_clock_seconds();
    if (status == HB_SUCCESS) status = spike_events(net, n);
    const double t2 = hb_clock_seconds();
    net->stats.exchange_s += t1 - t0;
    net->stats.exchange_wait_s += t1 - t0; /* nothing else runs while it is finished */
    net->stats.deliver_s += t2 - t1;
    trace(net, "exchange wait", t0, t1);
    trace(net, "events", t1, t2);
    return status;
}

/*
 * One epoch [s0, s1): its steps, its sources' spikes (times in (s0 dt, s1 dt], t = 0 in the
 * first), then the exchange. Blocking: this epoch's exchange, finished at once (its events
 * reach the next epoch or later). Overlap: the previous epoch's exchange, which ran during
 * these steps, is finished, and this one's started (its events reach two epochs on: epochs
 * are half the smallest delay). A failing rank still takes part, with a count of -1, so that
 * no rank waits for ever and every rank learns of the failure.
 */
static hb_status_t epoch(hb_net_t *net, long s0, long s1)
{
    const double dt = net->opt.dt_ms;
    hb_status_t status = HB_SUCCESS;
    const double t_begin = hb_clock_seconds();
    if (net->sim) status = integrate(net, s0, s1);
    if (status == HB_SUCCESS) status = sources_spikes(net, (double)s1 * dt);
    trace(net, "integrate", t_begin, hb_clock_seconds());
    if (net->overlap == HB_NET_IALLGATHERV) {
        const hb_status_t st = collect(net);
        if (status == HB_SUCCESS) status = st;
    }
    double t = hb_clock_seconds();
    const hb_status_t ex = exchange_start(net, status != HB_SUCCESS);
    net->stats.exchange_s += hb_clock_seconds() - t;
    trace(net, "exchange start", t, hb_clock_seconds());
    if (status != HB_SUCCESS) {
        hb_net_exchange_abandon(net); /* the others learn of it from this count of -1 */
        return status;
    }
    if (ex != HB_SUCCESS) return ex;
    if (net->overlap == HB_NET_BLOCKING) status = collect(net);
    net->step = s1;
    return status;
}

/* The epoch's steps and its sources' spikes (HB_NET_TASKS: run as a task). */
static hb_status_t integrate_epoch(hb_net_t *net, long s0, long s1)
{
    hb_status_t status = net->sim ? integrate(net, s0, s1) : HB_SUCCESS;
    if (status == HB_SUCCESS) status = sources_spikes(net, (double)s1 * net->opt.dt_ms);
    return status;
}

/*
 * HB_NET_TASKS (the paper's Algorithm 2): one OpenMP task steps the epoch's cells (its steps
 * make a task per layout block, src/cpu/sim_cpu.c), while the master thread exchanges the
 * previous epoch's spikes, waiting for each stage (the same two all-gathers as the other
 * modes, exchange_finish appending the spikes, which the steps do not read); then the master
 * makes their events (due two epochs on at the earliest) and the epoch's spikes become the
 * next one's to send. MPI is called by the master thread alone (MPI_THREAD_FUNNELED
 * suffices). Errors are thread-local, so the task's message is carried back.
 */
static hb_status_t epoch_tasks(hb_net_t *net, long s0, long s1)
{
    hb_status_t steps = HB_SUCCESS, ex = HB_SUCCESS;
    char message[1024] = "";
    double t_steps[2] = {0.0, 0.0}, t_ex[2] = {0.0, 0.0};
    size_t n_new = 0;
    const int exchange = s0 > 0; /* epoch 0 has nothing before it */
#ifdef HB_HAVE_OPENMP
    /* omp: the team steps the blocks; cuda: one thread drives the GPU while the master
     * exchanges (the engine is called from the task alone until the taskwait) */
    int threads = net->opt.backend == HB_BACKEND_OMP
                      ? (net->opt.threads > 0 ? net->opt.threads : omp_get_max_threads())
                      : (net->opt.backend == HB_BACKEND_CUDA ? 2 : 1);
    if (threads < 2 || !net->sim) threads = 1;
#pragma omp parallel num_threads(threads)
#pragma omp master
    {
#pragma omp task shared(steps, message, t_steps)
        {
            t_steps[0] = hb_clock_seconds();
            steps = integrate_epoch(net, s0, s1);
            if (steps != HB_SUCCESS) snprintf(message, sizeof message, "%s", hb_last_error());
            t_steps[1] = hb_clock_seconds();
        }
        t_ex[0] = hb_clock_seconds();
        if (exchange && (ex = post_counts(net, 0)) == HB_SUCCESS)
            ex = exchange_finish(net, &n_new);
        t_ex[1] = hb_clock_seconds();
#pragma omp taskwait
    }
#else
    t_ex[0] = hb_clock_seconds();
    if (exchange && (ex = post_counts(net, 0)) == HB_SUCCESS)
        ex = exchange_finish(net, &n_new);
    t_ex[1] = t_steps[0] = hb_clock_seconds();
    steps = integrate_epoch(net, s0, s1);
    if (steps != HB_SUCCESS) snprintf(message, sizeof message, "%s", hb_last_error());
    t_steps[1] = hb_clock_seconds();
#endif
    trace(net, "integrate", t_steps[0], t_steps[1]);
    trace(net, "exchange", t_ex[0], t_ex[1]);
    net->stats.exchange_s += t_ex[1] - t_ex[0];
    /* waited for: what the exchange took past the steps' end (the whole of it when the steps
     * did not run beside it) */
    const double overlapped_until = t_steps[1] > t_ex[0] ? t_steps[1] : t_ex[0];
    if (t_ex[1] > overlapped_until) net->stats.exchange_wait_s += t_ex[1] - overlapped_until;
    if (steps != HB_SUCCESS) {
        /* the other ranks learn of it at their next exchange: -1 as this rank's count */
        swap_sending(net);
        if (post_counts(net, 1) == HB_SUCCESS) hb_net_exchange_abandon(net);
        return hb_fail(steps, "%s", message);
    }
    if (ex != HB_SUCCESS) return ex;
    const double t0 = hb_clock_seconds();
    const hb_status_t status = spike_events(net, n_new);
    net->stats.deliver_s += hb_clock_seconds() - t0;
    trace(net, "events", t0, hb_clock_seconds());
    swap_sending(net);
    net->step = s1;
    return status;
}

/* HB_NET_TASKS: the last epoch's spikes, exchanged at once. */
static hb_status_t finish_tasks(hb_net_t *net)
{
    hb_status_t status = post_counts(net, 0);
    if (status == HB_SUCCESS) status = collect(net);
    net->n_sending = 0;
    return status;
}

hb_status_t hb_net_advance(hb_net_t *net, double t_ms)
{
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_advance: net is NULL");
    if (!net->initialised) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_advance: call "
                                          "hb_net_init first");
    if (!(t_ms >= 0.0)) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_advance: t = %g ms", t_ms);
    /* whole epochs up to t (every rank the same), never past t_stop: a t past it (+inf too)
     * runs to t_stop, its steps compared as doubles (a long would overflow) */
    const double steps = ceil(t_ms / net->opt.dt_ms - 1e-9);
    const long until = steps < (double)net->total_steps ? (long)steps : net->total_steps;
    hb_status_t status = HB_SUCCESS;
    if (!net->keep_spikes) { /* the previous advance's final spikes go (the caller has them) */
        const size_t final = hb_net_final_spikes(net);
        if (final > 0 && net->n_spikes > final) /* (no spikes: a NULL list) */
            memmove(net->spikes, net->spikes + final, (net->n_spikes - final) * sizeof *net->spikes);
        net->n_forgotten += final;
        net->n_spikes -= final;
    }
    while (net->step < until && status == HB_SUCCESS) {
        long s1 = net->step + net->epoch_steps;
        if (s1 > net->total_steps) s1 = net->total_steps;
        status = net->overlap == HB_NET_TASKS ? epoch_tasks(net, net->step, s1)
                                              : epoch(net, net->step, s1);
    }
    /* the last epoch's spikes in hand before returning (every rank ends the same epoch) */
    if (status == HB_SUCCESS)
        status = net->overlap == HB_NET_TASKS ? finish_tasks(net) : collect(net);
    if (status != HB_SUCCESS) net->initialised = 0; /* a failed run must start again */
    return status;
}

hb_status_t hb_net_run(hb_net_t *net)
{
    hb_status_t status = hb_net_init(net);
    return status == HB_SUCCESS ? hb_net_advance(net, net->opt.t_stop_ms) : status;
}

double hb_net_time(const hb_net_t *net) { return net ? (double)net->step * net->opt.dt_ms : NAN; }
size_t hb_net_set_trace(hb_net_t *net, size_t max_events)
{
    if (!net) return 0;
    hb_trace_event_t *p = max_events ? realloc(net->trace, max_events * sizeof *p) : NULL;
    if (max_events && !p) return net->max_trace;
    if (!max_events) free(net->trace);
    net->trace = p;
    net->max_trace = max_events;
    net->n_trace = 0;
    return max_events;
}

hb_status_t hb_net_trace(const hb_net_t *net, const hb_trace_event_t **events, size_t *count)
{
    hb_clear_error();
    if (!net || !events || !count) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_trace: NULL argument");
    *events = net->trace;
    *count = net->n_trace;
    return HB_SUCCESS;
}

double hb_net_stop_time(const hb_net_t *net) { return net ? net->opt.t_stop_ms : NAN; }
double hb_net_dt(const hb_net_t *net) { return net ? net->opt.dt_ms : NAN; }

hb_status_t hb_net_stats(const hb_net_t *net, hb_net_stats_t *stats)
{
    hb_clear_error();
    if (!net || !stats) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_stats: NULL argument");
    *stats = net->stats;
    stats->local_cells = (uint32_t)(net->n_cable + net->n_sources);
    stats->local_connections = net->n_conns;
    stats->spikes = net->n_forgotten + net->n_spikes;
    struct rusage use;
    stats->max_rss_kb = getrusage(RUSAGE_SELF, &use) == 0 ? use.ru_maxrss : 0;
    stats->device_bytes = hb_sim_device_bytes(net->sim);
    return HB_SUCCESS;
}

hb_status_t hb_net_stats_all(const hb_net_t *net, hb_net_stats_t *per_rank)
{
    hb_clear_error();
    if (!net || !per_rank) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_stats_all: NULL argument");
    hb_net_stats_t mine;
    hb_status_t status = hb_net_stats(net, &mine);
    if (status != HB_SUCCESS) return status;
    const hb_comm_t *comm = net->comm;
    for (int r = 0; r < comm->size; r++) {
        net->counts[r] = 1;
        net->displs[r] = r;
    }
    return comm->ops->allgatherv(comm->state, &mine, 1, per_rank, net->counts, net->displs,
                                 sizeof mine);
}
