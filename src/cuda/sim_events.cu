/*
 * A network's events on the GPU (sim_events_cuda.h says what and why).
 *
 *   count_kernel    one thread per exchanged spike: its source's connections (a binary
 *                   search of the connection table, sorted by source)
 *   expand_kernel   one thread per event: which spike and connection it is (a binary search
 *                   of the counts' exclusive sum), its time and step (hb_event_step), appended
 *                   to the pool of waiting events
 *   key_kernel      per waiting event: due before the epoch's end or not; the key
 *                   (step - step_begin) << 40 | target of a due one, then NOT_DUE, then
 *                   NEVER (at or past the run's last step: dropped)
 *   (CUB's radix sort of the keys, stable: the waiting ones keep their order)
 *   split_kernel    the due ones, sorted, become the queue; the rest the new pool
 *   offsets_kernel  per step of the epoch: its first event in the queue, copied to the host
 *   deliver_kernel  per step: one thread per target with events, which adds them in
 *                   (time, weight, weight vector) order (hb_event_before), as the CPU's sorted
 *                   queue does; at a catalogue point process, NET_RECEIVE by index
 *                   (common/cat_fused.h) with the connection's weight vector on the device;
 *                   at a user catalogue's, the run handed over (hb_cat_run_t, hb_cat_event_t
 *                   in delivery order) to that catalogue's NET_RECEIVE kernel, launched after
 *                   it on the same stream, one launch per user point process
 *
 * Compiled with -fmad=false (CMakeLists.txt): an event's weight times Exp2Syn's factor is the
 * CPU's product, not a fused one.
 */
#include <cuda_runtime.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_scan.cuh>

extern "C" {
#include "common/status.h"
}
#include "cuda/cuda_check.h"
#include "cuda/sim_events_cuda.h"
#include "common/cat_fused.h"
#include "common/grow.h"

#define EVENT_THREADS 256
#define KEY_SHIFT 40 /* a due event's key: step offset above, target below */
#define NOT_DUE 0xfffffffffffffffeULL /* waits for a later epoch */
#define NEVER 0xffffffffffffffffULL   /* at or past the step limit: dropped */

/* A step's network event at a self-event mechanism, with its place in the step's queue. */
struct self_net {
    hb_sim_engine_event_t e;
    long pos;
};

struct hb_cuda_events {
    cudaStream_t stream;
    double dt;
    int n_targets;
    hb_sim_target_t *targets; /* device */
    hb_syn_site_t *const *group_syns;
    double *const *group_state;
    const hb_step_group_t *groups; /* device: the groups (point processes' views) */
    /* the connections' weight vectors of point processes, HB_CAT_MAX_WEIGHT doubles each */
    double *weights;
    size_t n_weights, cap_weights;
    /* user catalogues' point processes (hb_step_cat_mech_t.user_key k: user[k]) and a step's
     * runs and events handed to their NET_RECEIVE launchers */
    int n_user;
    const hb_cat_mech_t **user;
    hb_cat_run_t *runs;
    hb_cat_event_t *user_ev;
    size_t cap_runs, cap_user_ev;
    /* Self-events (docs/mechanisms.md, section 10): the simulation's host queue (NULL: no
     * mechanism sends them), per target its user key (-1: not such a mechanism; host) and on the
     * device whether the delivery leaves its events to deliver_self; the targets with WATCH; a
     * round's calls and their requests, device and host; the step's events on the host. */
    hb_self_queue_t *self_q;
    int *self_key;
    unsigned char *self_skip;
    int *watch_targets, n_watch;
    hb_cat_self_call_t *calls, *h_calls;
    hb_cat_sends_t *sends, *h_sends;
    size_t cap_calls, cap_sends, cap_h_calls, cap_h_sends;
    struct self_net *h_net;
    hb_self_call_t *h_net_calls;
    size_t cap_h_net, cap_h_net_calls;
    hb_self_scratch_t scratch; /* hb_self_rounds' */
    /* FOR_NETCONS of such mechanisms: per target whether its mechanism has it (host), each
     * target's first connection (host) and per vector the target's next (device) */
    unsigned char *netcons;
    int *netcon_head, *netcon_next;
    size_t cap_netcon_head, cap_netcon_next;
    /* connections, sorted by source */
    size_t n_conns;
    uint32_t *conn_source;
    hb_sim_engine_conn_t *conns;
    long step_limit;
    /* waiting events (pool, pool2: the next pool) and the queue */
    hb_sim_engine_event_t *pool, *pool2, *queue;
    size_t n_pool, cap_pool, cap_pool2, n_queue, cap_queue;
    unsigned long long *keys, *keys_sorted;
    unsigned *index, *index_sorted;
    size_t cap_keys;
    unsigned long long *counted; /* device: due and dropped events (key_kernel) */
    char *cub_temp;
    size_t cap_cub;
    /* the queue's steps: queue_step0 .. + queue_steps, step r's events from h_off[r] */
    long queue_step0;
    long queue_steps;
    long *off, *h_off;
    size_t cap_off;
    /* spikes being expanded */
    hb_spike_t *spikes;
    size_t *first;
    unsigned long long *counts, *offsets;
    size_t cap_spikes;
};

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

/* The first element of a (ascending, n) not below x. */
__device__ static size_t first_not_below(const uint32_t *a, size_t n, uint64_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if ((uint64_t)a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The connections' sources, apart: what count_kernel bisects. */
__global__ void source_kernel(const hb_sim_engine_conn_t *conns, size_t n, uint32_t *source)
{
    const size_t k = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (k < n) source[k] = conns[k].source;
}

__global__ void count_kernel(const hb_spike_t *spikes, long n, const uint32_t *source,
                             size_t n_conns, size_t *first, unsigned long long *count)
{
    const long i = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const uint64_t gid = spikes[i].gid;
    const size_t lo = first_not_below(source, n_conns, gid);
    first[i] = lo;
    count[i] = first_not_below(source, n_conns, gid + 1) - lo;
}

__global__ void expand_kernel(const hb_spike_t *spikes, long n, const unsigned long long *offsets,
                              const size_t *first, const hb_sim_engine_conn_t *conns, double dt,
                              unsigned long long total, hb_sim_engine_event_t *out)
{
    const unsigned long long e = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= total) return;
    long lo = 0, hi = n; /* the last spike whose offset is <= e */
    while (hi - lo > 1) {
        const long mid = lo + (hi - lo) / 2;
        if (offsets[mid] <= e) lo = mid;
        else hi = mid;
    }
    const hb_sim_engine_conn_t c = conns[first[lo] + (size_t)(e - offsets[lo])];
    const double t = spikes[lo].time_ms + c.delay;
    hb_sim_engine_event_t ev;
    ev.step = hb_event_step(t, dt);
    ev.target = c.target;
    ev.weights = c.weights;
    ev.time = t;
    ev.weight = c.weight;
    out[e] = ev;
}

/* counted[0]: due events, counted[1]: dropped ones */
__global__ void key_kernel(const hb_sim_engine_event_t *pool, long n, long step_begin,
                           long step_end, long step_limit, unsigned long long *keys,
                           unsigned *index, unsigned long long *counted)
{
    const long e = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    const long step = pool[e].step;
    const unsigned long long r = (unsigned long long)(step > step_begin ? step - step_begin : 0);
    index[e] = (unsigned)e;
    if (step >= step_limit) {
        keys[e] = NEVER;
        atomicAdd(&counted[1], 1ULL);
    } else if (step < step_end) {
        keys[e] = (r << KEY_SHIFT) | (unsigned long long)(unsigned)pool[e].target;
        atomicAdd(&counted[0], 1ULL);
    } else {
        keys[e] = NOT_DUE;
    }
}

__global__ void split_kernel(const hb_sim_engine_event_t *pool, long n, const unsigned *index,
                             long n_due, hb_sim_engine_event_t *queue,
                             hb_sim_engine_event_t *rest)
{
    const long j = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n) return;
    const hb_sim_engine_event_t ev = pool[index[j]];
    if (j < n_due) queue[j] = ev;
    else rest[j - n_due] = ev;
}

__global__ void offsets_kernel(const hb_sim_engine_event_t *queue, long n, long step0,
                               long steps, long *off)
{
    const long r = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r > steps) return;
    long lo = 0, hi = n;
    while (lo < hi) {
        const long mid = lo + (hi - lo) / 2;
        if (queue[mid].step < step0 + r) lo = mid + 1;
        else hi = mid;
    }
    off[r] = lo;
}

/* (time, weight, weight vector, position) order: a before b. Alike events of two connections
 * to a point process in the connections' order (their vectors'), as the CPU's queue has them;
 * the hard-coded synapses' events have none (-1): their position decides, which alike
 * events' sums do not see. */
__device__ static int event_before(const hb_sim_engine_event_t *ev, long a, long b)
{
    if (hb_event_before(ev[a].time, ev[a].weight, ev[b].time, ev[b].weight)) return 1;
    if (hb_event_before(ev[b].time, ev[b].weight, ev[a].time, ev[a].weight)) return 0;
    if (ev[a].weights != ev[b].weights) return ev[a].weights < ev[b].weights;
    return a < b;
}

/* Event e at point process t: NET_RECEIVE with the connection's weight vector (an event
 * without one: a connection of its own, (weight, 0, ...) and NET_RECEIVE's INITIAL first), as
 * the CPU engine's deliver_events. Out of line: the hard-coded synapses' delivery keeps its
 * code and registers. */
__device__ static __noinline__ void point_receive(const hb_sim_engine_event_t *e,
                                                  const hb_sim_target_t *t,
                                                  const hb_step_group_t *groups, double *weights,
                                                  double dt)
{
    double own[HB_CAT_MAX_WEIGHT] = {e->weight};
    double *w = own;
    const hb_step_group_t *g = &groups[t->group];
    if (e->weights >= 0) w = weights + (size_t)e->weights * HB_CAT_MAX_WEIGHT;
    else hb_cat_fused_point_event(g, t->point - 1, t->slot, t->inst, w, e->time, dt, 1);
    hb_cat_fused_point_event(g, t->point - 1, t->slot, t->inst, w, e->time, dt, 0);
}

/* Target t's point process when it is a user catalogue's (its NET_RECEIVE is that catalogue's
 * kernel: hb_cuda_events_deliver launches it), else NULL. */
__device__ static const hb_step_cat_mech_t *user_point(const hb_sim_target_t *t,
                                                       const hb_step_group_t *groups)
{
    if (!t->point) return NULL;
    const hb_step_cat_mech_t *cm = &groups[t->group].cat->mech[t->point - 1];
    return cm->builtin < 0 ? cm : NULL;
}

/* Event e as a user catalogue's NET_RECEIVE takes it (its weight vector on the device). */
__device__ static hb_cat_event_t user_event(const hb_sim_engine_event_t *e, double *weights)
{
    hb_cat_event_t u;
    u.t = e->time;
    u.weight = e->weight;
    u.w = e->weights >= 0 ? weights + (size_t)e->weights * HB_CAT_MAX_WEIGHT : NULL;
    return u;
}

/* Event e at target t: the hard-coded synapse's state, or the point process's NET_RECEIVE. */
__device__ static void receive(const hb_sim_engine_event_t *e, const hb_sim_target_t *t,
                               hb_syn_site_t *const *syns, double *const *state,
                               const hb_step_group_t *groups, double *weights, double dt)
{
    if (t->point) point_receive(e, t, groups, weights, dt);
    else hb_syn_receive(&syns[t->group][t->site], state[t->group] + t->state, t->stride,
                        e->weight);
}

/* Each call's view, instance and key from its target (the simulation's, on the device). */
__global__ void self_calls_kernel(hb_cat_self_call_t *call, int n, const hb_sim_target_t *targets,
                                  const hb_step_group_t *groups)
{
    const int p = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (p >= n) return;
    const hb_sim_target_t t = targets[call[p].target];
    const hb_step_cat_mech_t *cm = &groups[t.group].cat->mech[t.point - 1];
    call[p].lane = cm->lanes + t.slot;
    call[p].inst = t.inst;
    call[p].key = cm->user_key;
}

/* runs and user_ev (n each, NULL where the simulation has no user point process): a run at a
 * user catalogue's point process is not delivered here but written there, its events in
 * delivery order from its first position, for the catalogue's NET_RECEIVE kernel (run[p].n 0
 * at every other position). */
__global__ void deliver_kernel(const hb_sim_engine_event_t *ev, long n,
                               const hb_sim_target_t *targets, hb_syn_site_t *const *syns,
                               double *const *state, const hb_step_group_t *groups,
                               double *weights, double dt, hb_cat_run_t *runs,
                               hb_cat_event_t *user_ev, const unsigned char *skip)
{
    const long e = (long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= n) return;
    const int target = ev[e].target;
    if (runs) runs[e].n = 0;
    if (skip && skip[target]) return; /* a self-event mechanism's: the host's rounds */
    if (e > 0 && ev[e - 1].target == target) return; /* the run's first thread adds it */
    long end = e + 1;
    int in_order = 1;
    for (; end < n && ev[end].target == target; end++)
        if (event_before(ev, end, end - 1)) in_order = 0;
    const hb_sim_target_t t = targets[target];
    const hb_step_cat_mech_t *user = runs ? user_point(&t, groups) : NULL;
    if (user) {
        runs[e].lane = user->lanes + t.slot;
        runs[e].inst = t.inst;
        runs[e].key = user->user_key;
        runs[e].n = (int)(end - e);
    }
    if (in_order) {
        for (long k = e; k < end; k++)
            if (user) user_ev[k] = user_event(&ev[k], weights);
            else receive(&ev[k], &t, syns, state, groups, weights, dt);
        return;
    }
    long last = -1; /* a run out of order (the host's queue never is): the next smallest */
    for (long done = e; done < end; done++) {
        long best = -1;
        for (long j = e; j < end; j++)
            if ((last < 0 || event_before(ev, last, j)) && (best < 0 || event_before(ev, j, best)))
                best = j;
        if (user) user_ev[done] = user_event(&ev[best], weights);
        else receive(&ev[best], &t, syns, state, groups, weights, dt);
        last = best;
    }
}

/* ------------------------------------------------------------------------ */
/* Memory                                                                   */
/* ------------------------------------------------------------------------ */

static unsigned blocks_for(unsigned long long n)
{
    return (unsigned)((n + EVENT_THREADS - 1) / EVENT_THREADS);
}

/* Room for `need` elements of `size` bytes in device array *p (capacity *cap), the first
 * `keep` copied over when it grows (doubling). */
static hb_status_t reserve(void **p, size_t *cap, size_t need, size_t size, size_t keep,
                           cudaStream_t stream, const char *what)
{
    if (need <= *cap) return HB_SUCCESS;
    size_t c = *cap ? *cap : 1024;
    while (c < need) c *= 2;
    void *q = NULL;
    if (cudaMalloc(&q, c * size) != cudaSuccess) {
        (void)cudaGetLastError();
        return hb_fail(HB_ERR_ALLOC, "GPU network: out of device memory for %zu %s", need, what);
    }
    if (keep) {
        if (cudaMemcpyAsync(q, *p, keep * size, cudaMemcpyDeviceToDevice, stream) != cudaSuccess ||
            cudaStreamSynchronize(stream) != cudaSuccess) {
            cudaFree(q);
            return hb_fail(HB_ERR_BACKEND, "GPU network: CUDA: %s", cudaGetErrorString(cudaGetLastError()));
        }
    }
    cudaFree(*p);
    *p = q;
    *cap = c;
    return HB_SUCCESS;
}

#define RESERVE(ptr, cap, need, keep, what) \
    reserve((void **)&(ptr), &(cap), (need), sizeof *(ptr), (keep), ev->stream, (what))

extern "C" hb_status_t hb_cuda_events_create(void *stream, int n_targets,
                                             const hb_sim_target_t *targets,
                                             hb_syn_site_t *const *group_syns,
                                             double *const *group_state,
                                             const hb_step_group_t *groups, double dt,
                                             hb_cuda_events_t **out)
{
    *out = NULL;
    hb_cuda_events_t *ev = (hb_cuda_events_t *)calloc(1, sizeof *ev);
    if (!ev) return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory");
    ev->stream = (cudaStream_t)stream;
    ev->dt = dt;
    ev->n_targets = n_targets;
    ev->group_syns = group_syns;
    ev->group_state = group_state;
    ev->groups = groups;
    hb_status_t st = HB_SUCCESS;
    if (cudaMalloc((void **)&ev->targets, ((size_t)n_targets + 1) * sizeof *ev->targets) != cudaSuccess ||
        cudaMalloc((void **)&ev->counted, 2 * sizeof *ev->counted) != cudaSuccess) {
        (void)cudaGetLastError();
        st = hb_fail(HB_ERR_ALLOC, "GPU network: out of device memory for %d synapses", n_targets);
    }
    if (st == HB_SUCCESS && n_targets &&
        cudaMemcpy(ev->targets, targets, (size_t)n_targets * sizeof *targets,
                   cudaMemcpyHostToDevice) != cudaSuccess)
        st = hb_fail(HB_ERR_BACKEND, "GPU network: CUDA: %s", cudaGetErrorString(cudaGetLastError()));
    if (st != HB_SUCCESS) {
        hb_cuda_events_destroy(ev);
        return st;
    }
    *out = ev;
    return HB_SUCCESS;
}

extern "C" void hb_cuda_events_destroy(hb_cuda_events_t *ev)
{
    if (!ev) return;
    cudaFree(ev->targets);
    cudaFree(ev->weights);
    free(ev->user);
    cudaFree(ev->runs);
    cudaFree(ev->user_ev);
    cudaFree(ev->conn_source);
    cudaFree(ev->conns);
    cudaFree(ev->pool);
    cudaFree(ev->pool2);
    cudaFree(ev->queue);
    cudaFree(ev->keys);
    cudaFree(ev->keys_sorted);
    cudaFree(ev->index);
    cudaFree(ev->index_sorted);
    cudaFree(ev->counted);
    cudaFree(ev->cub_temp);
    cudaFree(ev->off);
    free(ev->h_off);
    free(ev->self_key);
    cudaFree(ev->self_skip);
    free(ev->watch_targets);
    cudaFree(ev->calls);
    cudaFree(ev->sends);
    free(ev->h_calls);
    free(ev->h_sends);
    free(ev->h_net);
    free(ev->h_net_calls);
    hb_self_scratch_free(&ev->scratch);
    free(ev->netcons);
    free(ev->netcon_head);
    cudaFree(ev->netcon_next);
    cudaFree(ev->spikes);
    cudaFree(ev->first);
    cudaFree(ev->counts);
    cudaFree(ev->offsets);
    free(ev);
}

/* Room for the offsets of `steps` steps, device and host. */
static hb_status_t reserve_offsets(hb_cuda_events_t *ev, long steps)
{
    const size_t need = (size_t)steps + 1;
    if (need <= ev->cap_off) return HB_SUCCESS;
    size_t cap = ev->cap_off;
    hb_status_t st = RESERVE(ev->off, cap, need, 0, "step offsets");
    if (st != HB_SUCCESS) return st;
    long *h = (long *)realloc(ev->h_off, cap * sizeof *h);
    if (!h) return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory for %zu step offsets", need);
    ev->h_off = h;
    ev->cap_off = cap;
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

extern "C" hb_status_t hb_cuda_events_queue(hb_cuda_events_t *ev, size_t n,
                                            const hb_sim_engine_event_t *events)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    CUDA_CHECK(cudaStreamSynchronize(ev->stream)); /* no kernel reads the old queue */
    ev->n_queue = 0;
    ev->queue_steps = 0;
    if (!n) return HB_SUCCESS;
    hb_status_t st = RESERVE(ev->queue, ev->cap_queue, n, 0, "events");
    if (st != HB_SUCCESS) return st;
    const long step0 = events[0].step, steps = events[n - 1].step - step0 + 1;
    if ((st = reserve_offsets(ev, steps)) != HB_SUCCESS) return st;
    size_t k = 0; /* the host's queue is ordered by step: its offsets here */
    for (long r = 0; r <= steps; r++) {
        while (k < n && events[k].step < step0 + r) k++;
        ev->h_off[r] = (long)k;
    }
    CUDA_CHECK(cudaMemcpyAsync(ev->queue, events, n * sizeof *events, cudaMemcpyHostToDevice,
                               ev->stream));
    CUDA_CHECK(cudaStreamSynchronize(ev->stream)); /* `events` is the caller's */
    ev->n_queue = n;
    ev->queue_step0 = step0;
    ev->queue_steps = steps;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_events_set_connections(hb_cuda_events_t *ev, size_t n,
                                                      const hb_sim_engine_conn_t *conns,
                                                      long step_limit)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    cudaFree(ev->conn_source);
    cudaFree(ev->conns);
    ev->conn_source = NULL;
    ev->conns = NULL;
    ev->n_conns = 0;
    ev->step_limit = step_limit;
    hb_status_t st = HB_SUCCESS;
    if (cudaMalloc((void **)&ev->conn_source, (n + 1) * sizeof *ev->conn_source) != cudaSuccess ||
        cudaMalloc((void **)&ev->conns, (n + 1) * sizeof *conns) != cudaSuccess) {
        (void)cudaGetLastError();
        st = hb_fail(HB_ERR_ALLOC, "GPU network: out of device memory for %zu connections", n);
    }
    if (st == HB_SUCCESS && n) { /* the sources split off on the device, not on one host thread */
        cudaError_t e = cudaMemcpyAsync(ev->conns, conns, n * sizeof *conns,
                                        cudaMemcpyHostToDevice, ev->stream);
        if (e == cudaSuccess) {
            source_kernel<<<(unsigned)((n + 255) / 256), 256, 0, ev->stream>>>(ev->conns, n,
                                                                              ev->conn_source);
            e = cudaGetLastError();
        }
        if (e == cudaSuccess) e = cudaStreamSynchronize(ev->stream);
        if (e != cudaSuccess)
            st = hb_fail(HB_ERR_BACKEND, "GPU network: CUDA: %s", cudaGetErrorString(e));
    }
    if (st == HB_SUCCESS) ev->n_conns = n;
    return st;
}

extern "C" hb_status_t hb_cuda_events_add_spikes(hb_cuda_events_t *ev, size_t n,
                                                 const hb_spike_t *spikes)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    if (!n || !ev->n_conns) return HB_SUCCESS;
    hb_status_t st;
    size_t cap = ev->cap_spikes;
    if ((st = RESERVE(ev->spikes, cap, n + 1, 0, "spikes")) != HB_SUCCESS) return st;
    cap = ev->cap_spikes;
    if ((st = RESERVE(ev->first, cap, n + 1, 0, "spikes")) != HB_SUCCESS) return st;
    cap = ev->cap_spikes;
    if ((st = RESERVE(ev->counts, cap, n + 1, 0, "spikes")) != HB_SUCCESS) return st;
    cap = ev->cap_spikes;
    if ((st = RESERVE(ev->offsets, cap, n + 1, 0, "spikes")) != HB_SUCCESS) return st;
    ev->cap_spikes = cap;
    CUDA_CHECK(cudaMemcpyAsync(ev->spikes, spikes, n * sizeof *spikes, cudaMemcpyHostToDevice,
                               ev->stream));
    CUDA_CHECK(cudaMemsetAsync(ev->counts + n, 0, sizeof *ev->counts, ev->stream));
    count_kernel<<<blocks_for(n), EVENT_THREADS, 0, ev->stream>>>(
        ev->spikes, (long)n, ev->conn_source, ev->n_conns, ev->first, ev->counts);
    CUDA_CHECK(cudaGetLastError());
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(NULL, bytes, ev->counts, ev->offsets, (int)(n + 1),
                                             ev->stream));
    if ((st = RESERVE(ev->cub_temp, ev->cap_cub, bytes, 0, "scan bytes")) != HB_SUCCESS)
        return st;
    CUDA_CHECK(cub::DeviceScan::ExclusiveSum(ev->cub_temp, bytes, ev->counts, ev->offsets,
                                             (int)(n + 1), ev->stream));
    unsigned long long total = 0;
    CUDA_CHECK(cudaMemcpyAsync(&total, ev->offsets + n, sizeof total, cudaMemcpyDeviceToHost,
                               ev->stream));
    CUDA_CHECK(cudaStreamSynchronize(ev->stream)); /* and `spikes` is the caller's again */
    if (!total) return HB_SUCCESS;
    if (ev->n_pool + total >= 0x7fffffffULL)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "GPU network: %zu events waiting; expected fewer "
                       "than 2^31", ev->n_pool + (size_t)total);
    if ((st = RESERVE(ev->pool, ev->cap_pool, ev->n_pool + total, ev->n_pool, "events")) != HB_SUCCESS)
        return st;
    expand_kernel<<<blocks_for(total), EVENT_THREADS, 0, ev->stream>>>(
        ev->spikes, (long)n, ev->offsets, ev->first, ev->conns, ev->dt, total,
        ev->pool + ev->n_pool);
    CUDA_CHECK(cudaGetLastError());
    ev->n_pool += (size_t)total;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_events_add(hb_cuda_events_t *ev, size_t n,
                                          const hb_sim_engine_event_t *events)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    if (!n) return HB_SUCCESS;
    if (ev->n_pool + n >= 0x7fffffffULL)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "GPU network: %zu events waiting; expected fewer "
                       "than 2^31", ev->n_pool + n);
    hb_status_t st = RESERVE(ev->pool, ev->cap_pool, ev->n_pool + n, ev->n_pool, "events");
    if (st != HB_SUCCESS) return st;
    CUDA_CHECK(cudaMemcpyAsync(ev->pool + ev->n_pool, events, n * sizeof *events,
                               cudaMemcpyHostToDevice, ev->stream));
    CUDA_CHECK(cudaStreamSynchronize(ev->stream));
    ev->n_pool += n;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_events_due(hb_cuda_events_t *ev, long step_begin, long step_end)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    CUDA_CHECK(cudaStreamSynchronize(ev->stream)); /* no kernel reads the old queue */
    ev->n_queue = 0;
    ev->queue_steps = 0;
    const size_t n = ev->n_pool;
    if (!n || step_end <= step_begin) return HB_SUCCESS;
    hb_status_t st;
    size_t cap = ev->cap_keys;
    if ((st = RESERVE(ev->keys, cap, n, 0, "event keys")) != HB_SUCCESS) return st;
    cap = ev->cap_keys;
    if ((st = RESERVE(ev->keys_sorted, cap, n, 0, "event keys")) != HB_SUCCESS) return st;
    cap = ev->cap_keys;
    if ((st = RESERVE(ev->index, cap, n, 0, "event keys")) != HB_SUCCESS) return st;
    cap = ev->cap_keys;
    if ((st = RESERVE(ev->index_sorted, cap, n, 0, "event keys")) != HB_SUCCESS) return st;
    ev->cap_keys = cap;
    CUDA_CHECK(cudaMemsetAsync(ev->counted, 0, 2 * sizeof *ev->counted, ev->stream));
    key_kernel<<<blocks_for(n), EVENT_THREADS, 0, ev->stream>>>(
        ev->pool, (long)n, step_begin, step_end, ev->step_limit, ev->keys, ev->index, ev->counted);
    CUDA_CHECK(cudaGetLastError());
    size_t bytes = 0;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(NULL, bytes, ev->keys, ev->keys_sorted, ev->index,
                                               ev->index_sorted, (int)n, 0, 64, ev->stream));
    if ((st = RESERVE(ev->cub_temp, ev->cap_cub, bytes, 0, "sort bytes")) != HB_SUCCESS)
        return st;
    CUDA_CHECK(cub::DeviceRadixSort::SortPairs(ev->cub_temp, bytes, ev->keys, ev->keys_sorted,
                                               ev->index, ev->index_sorted, (int)n, 0, 64,
                                               ev->stream));
    unsigned long long counted[2] = {0, 0};
    CUDA_CHECK(cudaMemcpyAsync(counted, ev->counted, sizeof counted, cudaMemcpyDeviceToHost,
                               ev->stream));
    CUDA_CHECK(cudaStreamSynchronize(ev->stream));
    const unsigned long long n_due = counted[0], kept = n - counted[1];
    if (!n_due && kept == n) return HB_SUCCESS;
    if ((st = RESERVE(ev->queue, ev->cap_queue, n_due, 0, "events")) != HB_SUCCESS) return st;
    if ((st = RESERVE(ev->pool2, ev->cap_pool2, n - n_due + 1, 0, "events")) != HB_SUCCESS)
        return st;
    if (kept) { /* none when every waiting event was dropped */
        split_kernel<<<blocks_for(kept), EVENT_THREADS, 0, ev->stream>>>(
            ev->pool, (long)kept, ev->index_sorted, (long)n_due, ev->queue, ev->pool2);
        CUDA_CHECK(cudaGetLastError());
    }
    const long steps = step_end - step_begin;
    if ((st = reserve_offsets(ev, steps)) != HB_SUCCESS) return st;
    offsets_kernel<<<blocks_for((unsigned long long)steps + 1), EVENT_THREADS, 0, ev->stream>>>(
        ev->queue, (long)n_due, step_begin, steps, ev->off);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaMemcpyAsync(ev->h_off, ev->off, ((size_t)steps + 1) * sizeof *ev->h_off,
                               cudaMemcpyDeviceToHost, ev->stream));
    CUDA_CHECK(cudaStreamSynchronize(ev->stream));
    /* the rest is the pool now */
    hb_sim_engine_event_t *p = ev->pool;
    const size_t cap_p = ev->cap_pool;
    ev->pool = ev->pool2;
    ev->cap_pool = ev->cap_pool2;
    ev->pool2 = p;
    ev->cap_pool2 = cap_p;
    ev->n_pool = (size_t)(kept - n_due);
    ev->n_queue = (size_t)n_due;
    ev->queue_step0 = step_begin;
    ev->queue_steps = steps;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_events_set_weights(hb_cuda_events_t *ev, size_t n,
                                                  const double *weights)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    if (!n) return HB_SUCCESS;
    if (!weights) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_events_set_weights: NULL weights");
    CUDA_CHECK(cudaStreamSynchronize(ev->stream)); /* no delivery reads the old ones */
    const size_t count = n * HB_CAT_MAX_WEIGHT;
    hb_status_t st = RESERVE(ev->weights, ev->cap_weights, count, 0, "weight vector doubles");
    if (st != HB_SUCCESS) return st;
    CUDA_CHECK(cudaMemcpy(ev->weights, weights, count * sizeof *weights, cudaMemcpyHostToDevice));
    ev->n_weights = n;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_events_set_user_points(hb_cuda_events_t *ev, int n,
                                                      const hb_cat_mech_t *const *mechs)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    if (n < 0 || (n && !mechs))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_events_set_user_points: %d mechanisms", n);
    for (int k = 0; k < n; k++)
        if (!mechs[k] || (mechs[k]->n_weight >= 0 &&
                          (!mechs[k]->cuda || !mechs[k]->cuda->net_receive)))
            return hb_fail(HB_ERR_NOT_SUPPORTED, "GPU network: %s is a user catalogue's point "
                           "process without a CUDA NET_RECEIVE kernel; expected its catalogue "
                           "built by build-catalogue --cuda", mechs[k] ? mechs[k]->name : "?");
    const hb_cat_mech_t **user =
        (const hb_cat_mech_t **)calloc((size_t)n + 1, sizeof *user);
    if (!user) return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory");
    for (int k = 0; k < n; k++) user[k] = mechs[k];
    free(ev->user);
    ev->user = user;
    ev->n_user = n;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_events_clear(hb_cuda_events_t *ev)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    CUDA_CHECK(cudaStreamSynchronize(ev->stream));
    ev->n_pool = 0;
    ev->n_queue = 0;
    ev->queue_steps = 0;
    return HB_SUCCESS;
}

static hb_status_t deliver_net(hb_cuda_events_t *ev, long first, long count);
static hb_status_t deliver_self(hb_cuda_events_t *ev, long step, long first, long count);

extern "C" hb_status_t hb_cuda_events_deliver(hb_cuda_events_t *ev, long step)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    const long r = step - ev->queue_step0;
    long first = 0, count = 0;
    if (ev->n_queue && r >= 0 && r < ev->queue_steps) {
        first = ev->h_off[r];
        count = ev->h_off[r + 1] - first;
    }
    hb_status_t st = count > 0 ? deliver_net(ev, first, count) : HB_SUCCESS;
    if (st == HB_SUCCESS && ev->self_q) st = deliver_self(ev, step, first, count > 0 ? count : 0);
    return st;
}

/* The step's events ev->queue[first, first + count) but those of self-event mechanisms. */
static hb_status_t deliver_net(hb_cuda_events_t *ev, long first, long count)
{
    if (ev->n_user) { /* room for the step's runs handed to the users' kernels */
        hb_status_t st = RESERVE(ev->runs, ev->cap_runs, (size_t)count, 0, "event runs");
        if (st == HB_SUCCESS)
            st = RESERVE(ev->user_ev, ev->cap_user_ev, (size_t)count, 0, "user events");
        if (st != HB_SUCCESS) return st;
    }
    deliver_kernel<<<blocks_for((unsigned long long)count), EVENT_THREADS, 0, ev->stream>>>(
        ev->queue + first, count, ev->targets, ev->group_syns, ev->group_state, ev->groups,
        ev->weights, ev->dt, ev->n_user ? ev->runs : NULL, ev->n_user ? ev->user_ev : NULL,
        ev->self_skip);
    CUDA_CHECK(cudaGetLastError());
    for (int k = 0; k < ev->n_user; k++) { /* distinct targets: any order of the launches */
        const hb_cat_cuda_t *cu = ev->user[k]->cuda;
        if (!cu || !cu->net_receive) continue; /* no NET_RECEIVE: no event reaches it */
        const int rc = cu->net_receive(ev->runs, ev->user_ev, (int)count, k, ev->dt,
                                       (void *)ev->stream);
        if (rc != 0)
            return hb_fail(HB_ERR_BACKEND, "GPU network: %s's NET_RECEIVE kernel (a user "
                           "catalogue's): %s", ev->user[k]->name,
                           cudaGetErrorString((cudaError_t)rc));
    }
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Self-events (net_send, net_move, WATCH)                                  */
/* ------------------------------------------------------------------------ */

/* (target, time, weight, weight vector, position): the device delivery's event_before per
 * target, the CPU queue's order. */
static int self_net_order(const void *pa, const void *pb)
{
    const struct self_net *a = (const struct self_net *)pa, *b = (const struct self_net *)pb;
    if (a->e.target != b->e.target) return a->e.target < b->e.target ? -1 : 1;
    if (hb_event_before(a->e.time, a->e.weight, b->e.time, b->e.weight)) return -1;
    if (hb_event_before(b->e.time, b->e.weight, a->e.time, a->e.weight)) return 1;
    if (a->e.weights != b->e.weights) return a->e.weights < b->e.weights ? -1 : 1;
    return a->pos < b->pos ? -1 : a->pos > b->pos;
}

/* Room for n calls and their requests, on the device and the host. */
static hb_status_t reserve_calls(hb_cuda_events_t *ev, size_t n)
{
    if (!hb_grow((void **)&ev->h_calls, &ev->cap_h_calls, n, sizeof *ev->h_calls) ||
        !hb_grow((void **)&ev->h_sends, &ev->cap_h_sends, n, sizeof *ev->h_sends))
        return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory for %zu self-event calls", n);
    hb_status_t st = RESERVE(ev->calls, ev->cap_calls, n, 0, "self-event calls");
    if (st == HB_SUCCESS) st = RESERVE(ev->sends, ev->cap_sends, n, 0, "self-event requests");
    return st;
}

/* The n calls of h_calls (target, event set) run on the device by their mechanisms' launchers
 * (watch: the WATCH checks, else NET_RECEIVE), their requests back in sends[n] (host). */
static hb_status_t run_calls(hb_cuda_events_t *ev, int n, int watch, hb_cat_sends_t *sends)
{
    CUDA_CHECK(cudaMemcpyAsync(ev->calls, ev->h_calls, (size_t)n * sizeof *ev->calls,
                               cudaMemcpyHostToDevice, ev->stream));
    self_calls_kernel<<<blocks_for((unsigned long long)n), EVENT_THREADS, 0, ev->stream>>>(
        ev->calls, n, ev->targets, ev->groups);
    CUDA_CHECK(cudaGetLastError());
    for (int k = 0; k < ev->n_user; k++) { /* distinct targets: any order of the launches */
        const hb_cat_cuda_t *cu = ev->user[k]->cuda;
        int (*fn)(const hb_cat_self_call_t *, int, int, double, hb_cat_sends_t *, void *) =
            watch ? cu->watch : cu->net_receive_self;
        if (!fn) continue;
        const int rc = fn(ev->calls, n, k, ev->dt, ev->sends, (void *)ev->stream);
        if (rc != 0)
            return hb_fail(HB_ERR_BACKEND, "GPU network: %s's %s kernel (a user catalogue's): %s",
                           ev->user[k]->name, watch ? "WATCH" : "NET_RECEIVE",
                           cudaGetErrorString((cudaError_t)rc));
    }
    CUDA_CHECK(cudaMemcpyAsync(sends, ev->sends, (size_t)n * sizeof *ev->sends,
                               cudaMemcpyDeviceToHost, ev->stream));
    CUDA_CHECK(cudaStreamSynchronize(ev->stream));
    return HB_SUCCESS;
}

/* hb_self_runner_t's run: a round's calls on the device. */
static hb_status_t run_round(void *user, int n, const hb_self_call_t *calls, hb_cat_sends_t *sends)
{
    hb_cuda_events_t *ev = (hb_cuda_events_t *)user;
    hb_status_t st = reserve_calls(ev, (size_t)n);
    if (st != HB_SUCCESS) return st;
    for (int c = 0; c < n; c++) {
        hb_cat_self_call_t *call = &ev->h_calls[c];
        memset(call, 0, sizeof *call);
        call->target = calls[c].target;
        call->init = calls[c].init;
        call->t = calls[c].time;
        call->weight = calls[c].weight;
        call->flag = calls[c].flag;
        call->w = calls[c].weights >= 0
                      ? ev->weights + (size_t)calls[c].weights * HB_CAT_MAX_WEIGHT : NULL;
        if (ev->netcons[call->target]) { /* FOR_NETCONS: the target's connections */
            call->netcon_w = ev->weights;
            call->netcon_next = ev->netcon_next;
            call->netcon_first = ev->netcon_head ? ev->netcon_head[call->target] : -1;
        }
    }
    return run_calls(ev, n, 0, sends);
}

/* hb_self_runner_t's mech: the target's mechanism's name. */
static const char *self_mech(void *user, int target)
{
    const hb_cuda_events_t *ev = (const hb_cuda_events_t *)user;
    return ev->user[ev->self_key[target]]->name;
}

/* The events of step `step` at self-event mechanisms' targets (those of the queue's [first,
 * first + count), and the self-events due) in the CPU engine's order: hb_self_rounds
 * (common/self_events.h), each round a launch of the mechanisms' net_receive_self kernels. */
static hb_status_t deliver_self(hb_cuda_events_t *ev, long step, long first, long count)
{
    size_t n_net = 0;
    if (count > 0) { /* the step's network events at such targets, per target in order */
        if (!hb_grow((void **)&ev->h_net, &ev->cap_h_net, (size_t)count, sizeof *ev->h_net) ||
            !hb_grow((void **)&ev->h_net_calls, &ev->cap_h_net_calls, (size_t)count,
                  sizeof *ev->h_net_calls))
            return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory for %ld events", count);
        hb_sim_engine_event_t *raw = (hb_sim_engine_event_t *)ev->h_net; /* widened below */
        CUDA_CHECK(cudaMemcpyAsync(raw, ev->queue + first, (size_t)count * sizeof *raw,
                                   cudaMemcpyDeviceToHost, ev->stream));
        CUDA_CHECK(cudaStreamSynchronize(ev->stream));
        for (long i = count - 1; i >= 0; i--) { /* in place, backwards: a wider element */
            const hb_sim_engine_event_t e = raw[i];
            ev->h_net[i].e = e;
            ev->h_net[i].pos = i;
        }
        for (long i = 0; i < count; i++)
            if (ev->self_key[ev->h_net[i].e.target] >= 0) ev->h_net[n_net++] = ev->h_net[i];
        qsort(ev->h_net, n_net, sizeof *ev->h_net, self_net_order);
        for (size_t i = 0; i < n_net; i++) {
            const hb_sim_engine_event_t *e = &ev->h_net[i].e;
            hb_self_call_t *c = &ev->h_net_calls[i];
            c->target = e->target;
            c->weights = e->weights;
            c->init = e->weights < 0;
            c->time = e->time;
            c->weight = e->weight;
            c->flag = 0.0;
        }
    }
    const hb_self_runner_t runner = {run_round, self_mech, ev, ev->dt};
    return hb_self_rounds(ev->self_q, step, ev->h_net_calls, n_net, &runner, &ev->scratch);
}

extern "C" hb_status_t hb_cuda_events_set_self(hb_cuda_events_t *ev, hb_self_queue_t *queue,
                                               const int *key)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    int n_self = 0, n_watch = 0;
    for (int i = 0; key && i < ev->n_targets; i++) {
        if (key[i] < 0) continue;
        if (key[i] >= ev->n_user || !ev->user[key[i]]->cuda ||
            !ev->user[key[i]]->cuda->net_receive_self ||
            (ev->user[key[i]]->cpu->watch && !ev->user[key[i]]->cuda->watch))
            return hb_fail(HB_ERR_NOT_SUPPORTED, "GPU network: %s's events go the self-events' "
                           "way and its catalogue has no CUDA kernel for them; expected its "
                           "catalogue built by build-catalogue --cuda", key[i] < ev->n_user ?
                           ev->user[key[i]]->name : "?");
        n_self++;
        n_watch += ev->user[key[i]]->cpu->watch != NULL;
    }
    if (!n_self) return HB_SUCCESS;
    if (!queue) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_events_set_self: no queue");
    const size_t n = (size_t)ev->n_targets;
    ev->self_key = (int *)malloc(n * sizeof *ev->self_key);
    unsigned char *skip = (unsigned char *)calloc(n, 1);
    ev->watch_targets = (int *)malloc(((size_t)n_watch + 1) * sizeof *ev->watch_targets);
    if (!ev->self_key || !skip || !ev->watch_targets) {
        free(skip);
        return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory");
    }
    ev->netcons = (unsigned char *)calloc(n, 1);
    if (!ev->netcons) {
        free(skip);
        return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory");
    }
    for (size_t i = 0; i < n; i++) {
        ev->self_key[i] = key[i];
        ev->netcons[i] = key[i] >= 0 && ev->user[key[i]]->for_netcons;
        skip[i] = key[i] >= 0;
        if (key[i] >= 0 && ev->user[key[i]]->cpu->watch) ev->watch_targets[ev->n_watch++] = (int)i;
    }
    if (cudaMalloc((void **)&ev->self_skip, n) != cudaSuccess ||
        cudaMemcpy(ev->self_skip, skip, n, cudaMemcpyHostToDevice) != cudaSuccess) {
        free(skip);
        return hb_fail(HB_ERR_ALLOC, "GPU network: out of device memory for %zu targets", n);
    }
    free(skip);
    ev->self_q = queue;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_events_watch(hb_cuda_events_t *ev, double t)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    if (!ev->n_watch) return HB_SUCCESS;
    hb_status_t st = reserve_calls(ev, (size_t)ev->n_watch);
    if (st != HB_SUCCESS) return st;
    for (int c = 0; c < ev->n_watch; c++) {
        hb_cat_self_call_t *call = &ev->h_calls[c];
        memset(call, 0, sizeof *call);
        call->target = ev->watch_targets[c];
        call->t = t;
    }
    if ((st = run_calls(ev, ev->n_watch, 1, ev->h_sends)) != HB_SUCCESS) return st;
    for (int c = 0; c < ev->n_watch && st == HB_SUCCESS; c++) /* target order, as the CPU's */
        if (ev->h_sends[c].n) /* a WATCH event carries no vector: zeros */
            st = hb_self_requests(ev->self_q, ev->watch_targets[c], -1, 0.0, &ev->h_sends[c], t,
                                  ev->dt, self_mech(ev, ev->watch_targets[c]));
    return st;
}

extern "C" hb_status_t hb_cuda_events_set_netcons(hb_cuda_events_t *ev, size_t n, const int *head,
                                                  const int *next)
{
    if (!ev) return hb_fail(HB_ERR_BACKEND, "GPU network: the simulation's device is unavailable");
    if (!ev->netcons || !head || !next || !n) return HB_SUCCESS; /* none: netcon_first -1 */
    CUDA_CHECK(cudaStreamSynchronize(ev->stream)); /* no call reads the old ones */
    const size_t nt = (size_t)ev->n_targets;
    if (!hb_grow((void **)&ev->netcon_head, &ev->cap_netcon_head, nt, sizeof *ev->netcon_head))
        return hb_fail(HB_ERR_ALLOC, "GPU network: out of host memory");
    memcpy(ev->netcon_head, head, nt * sizeof *head);
    hb_status_t st = RESERVE(ev->netcon_next, ev->cap_netcon_next, n, 0, "connection lists");
    if (st != HB_SUCCESS) return st;
    CUDA_CHECK(cudaMemcpy(ev->netcon_next, next, n * sizeof *next, cudaMemcpyHostToDevice));
    return HB_SUCCESS;
}
