/*
 * Checkpoints of a network (hb_net_save, hb_net_load; docs/checkpoint.md), one record per
 * rank. They are taken between advances: hb_net_advance finishes the exchange in flight before
 * it returns, so the state is then this rank's simulation, the events waiting (which hold all
 * that past spikes will still cause), the spike sources' streams (spikes emitted and the next
 * one's time: the draws are counter-based, so the count is the stream's position), each
 * detector's spikes taken, every spike so far (hb_net_spikes) and the step.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "net/net_engine.h"
#include "sim/checkpoint.h"

/* This rank's share of the network: what its state means. */
static uint64_t fingerprint(const hb_net_t *net)
{
    uint64_t h = hb_ckpt_hash_i64(HB_CKPT_HASH0, net->comm->size);
    h = hb_ckpt_hash_i64(h, net->comm->rank);
    for (int k = 0; k < 2; k++) {
        h = hb_ckpt_hash_i64(h, net->first[k]);
        h = hb_ckpt_hash_i64(h, net->end[k]);
    }
    h = hb_ckpt_hash_i64(h, net->n_cable);
    h = hb_ckpt_hash_i64(h, net->total_steps);
    h = hb_ckpt_hash_i64(h, net->epoch_steps);
    h = hb_ckpt_hash_f64(h, net->min_delay);
    h = hb_ckpt_hash_f64(h, net->opt.dt_ms);
    for (int c = 0; c < net->n_cable; c++) {
        h = hb_ckpt_hash_i64(h, net->cable_gid[c]);
        h = hb_ckpt_hash_i64(h, net->detector[c]);
    }
    for (int s = 0; s < net->n_sources; s++) {
        const hb_net_source_t *src = &net->sources[s];
        h = hb_ckpt_hash_i64(h, src->gid);
        h = hb_ckpt_hash_f64(h, src->p.start_ms);
        h = hb_ckpt_hash_f64(h, src->p.interval_ms);
        h = hb_ckpt_hash_i64(h, src->p.number);
        h = hb_ckpt_hash_f64(h, src->p.noise);
        h = hb_ckpt_hash_i64(h, (int64_t)src->p.seed);
    }
    h = hb_ckpt_hash_i64(h, (int64_t)net->n_conns);
    for (size_t k = 0; k < net->n_conns; k++) {
        const hb_net_conn_t *e = &net->conns[k];
        h = hb_ckpt_hash_i64(h, ((int64_t)e->source << 32) ^ ((int64_t)e->cell << 12) ^ e->synapse);
        h = hb_ckpt_hash_f64(h, e->weight);
        h = hb_ckpt_hash_f64(h, e->delay);
    }
    return h;
}

static hb_status_t put_state(const hb_net_t *net, hb_ckpt_buf_t *b, const char *name)
{
    if (!net->initialised)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: the network is not initialised (or its run "
                       "failed); a checkpoint holds one after hb_net_init or hb_net_advance", name);
    if (net->in_flight || net->n_local)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: an exchange is under way; a checkpoint is "
                       "taken between advances", name);
    hb_ckpt_put_u64(b, fingerprint(net));
    hb_ckpt_put_i64(b, net->comm->size);
    hb_ckpt_put_i64(b, net->comm->rank);
    hb_ckpt_put_i64(b, net->n_cable);
    hb_ckpt_put_i64(b, net->n_sources);
    hb_ckpt_put_i64(b, net->step);
    for (int c = 0; c < net->n_cable; c++) hb_ckpt_put_i64(b, net->seen[c]);
    for (int s = 0; s < net->n_sources; s++) {
        hb_ckpt_put_i64(b, net->sources[s].emitted);
        hb_ckpt_put_f64(b, net->sources[s].next_ms);
    }
    hb_ckpt_put_u64(b, net->n_pending);
    for (size_t k = 0; k < net->n_pending; k++) {
        const hb_net_event_t *ev = &net->pending[k];
        hb_ckpt_put_i64(b, ev->step);
        hb_ckpt_put_i64(b, ev->cell);
        hb_ckpt_put_i64(b, ev->synapse);
        hb_ckpt_put_f64(b, ev->time);
        hb_ckpt_put_f64(b, ev->weight);
        hb_ckpt_put_i64(b, ev->weights); /* version 3: its connection's weight vector */
    }
    hb_ckpt_put_u64(b, net->n_spikes);
    for (size_t k = 0; k < net->n_spikes; k++) {
        hb_ckpt_put_f64(b, net->spikes[k].time_ms);
        hb_ckpt_put_u64(b, net->spikes[k].gid);
    }
    hb_ckpt_put_i64(b, net->sim != NULL);
    return net->sim ? hb_sim_checkpoint_put(net->sim, b, name) : HB_SUCCESS;
}

hb_status_t hb_net_save(const hb_net_t *net, FILE *file, const char *name)
{
    hb_clear_error();
    if (!name) name = "checkpoint";
    if (!net || !file) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_save: NULL argument");
    hb_ckpt_buf_t b;
    memset(&b, 0, sizeof b);
    hb_status_t status = put_state(net, &b, name);
    if (status == HB_SUCCESS) status = hb_ckpt_write(file, name, HB_CKPT_NET, &b);
    hb_ckpt_buf_free(&b);
    return status;
}

/* Reads this rank's record (nothing of the network changed yet but the arrays' room); *step:
 * its step. */
static hb_status_t get_state(hb_net_t *net, hb_ckpt_in_t *in, const char *name, long *step)
{
    const uint64_t print = hb_ckpt_get_u64(in);
    const int64_t size = hb_ckpt_get_i64(in), rank = hb_ckpt_get_i64(in);
    const int64_t cable = hb_ckpt_get_i64(in), sources = hb_ckpt_get_i64(in);
    const int64_t at = hb_ckpt_get_i64(in);
    if (in->bad) return hb_fail(HB_ERR_PARSE, "%s: the network's record ends early", name);
    if (size != net->comm->size || rank != net->comm->rank)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: the checkpoint of rank %lld of %lld; expected "
                       "rank %d of %d's own file (hb_net_load_ranks reads the files of another "
                       "rank count)", name, (long long)rank, (long long)size, net->comm->rank,
                       net->comm->size);
    if (cable != net->n_cable || sources != net->n_sources)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of %lld cable cells and %lld "
                       "sources on this rank; here %d and %d: expected a checkpoint of the same "
                       "network", name, (long long)cable, (long long)sources, net->n_cable,
                       net->n_sources);
    const uint64_t mine = fingerprint(net);
    if (print != mine)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of another network (fingerprint "
                       "%016llx; this rank's %016llx): expected one written by the same cells, "
                       "connections, sources, dt and t_stop on as many ranks", name,
                       (unsigned long long)print, (unsigned long long)mine);
    size_t to_points = 0; /* connections to catalogue point processes: version 3 holds them */
    for (size_t k = 0; net->conn_weights && k < net->n_conns; k++) to_points += net->conn_weights[k] >= 0;
    if (in->version < 3 && to_points)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of format version %u, which holds "
                       "no connections to catalogue point processes; this rank has %zu: expected "
                       "version %d", name, in->version, to_points, HB_CKPT_VERSION);
    if (at < 0 || at > net->total_steps)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: step %lld; expected 0..%ld", name,
                       (long long)at, net->total_steps);
    *step = (long)at;
    int *seen = calloc((size_t)net->n_cable + 1, sizeof *seen);
    hb_net_source_t *src = malloc(((size_t)net->n_sources + 1) * sizeof *src);
    if (!seen || !src) {
        free(seen);
        free(src);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", name);
    }
    for (int c = 0; c < net->n_cable; c++) {
        const int64_t n = hb_ckpt_get_i64(in);
        seen[c] = n >= 0 && n <= 0x7fffffff ? (int)n : -1;
        if (seen[c] < 0) in->bad = 1;
    }
    if (net->n_sources) memcpy(src, net->sources, (size_t)net->n_sources * sizeof *src);
    int bad_source = -1;
    for (int s = 0; s < net->n_sources; s++) {
        src[s].emitted = (long)hb_ckpt_get_i64(in);
        src[s].next_ms = hb_ckpt_get_f64(in);
        if ((src[s].emitted < 0 || src[s].emitted > src[s].p.number || isnan(src[s].next_ms) ||
             src[s].next_ms < 0.0) && bad_source < 0)
            bad_source = s;
    }
    const uint64_t pending = hb_ckpt_get_u64(in);
    hb_status_t status = HB_SUCCESS;
    if (bad_source >= 0 && !in->bad)
        status = hb_fail(HB_ERR_PARSE, "%s: source gid %u: %ld spikes emitted, the next at %g ms; "
                         "expected 0..%ld emitted and a next time of at least 0", name,
                         src[bad_source].gid, src[bad_source].emitted, src[bad_source].next_ms,
                         src[bad_source].p.number);
    else if (in->bad || pending > (in->size - in->pos) / (in->version >= 3 ? 48 : 40))
        status = hb_fail(HB_ERR_PARSE, "%s: the network's record is cut short or holds bad "
                         "counts", name);
    if (status == HB_SUCCESS &&
        !hb_net_reserve((void **)&net->pending, 0, &net->cap_pending, (size_t)pending + 1,
                        sizeof *net->pending))
        status = hb_fail(HB_ERR_ALLOC, "%s: out of memory for %llu events", name,
                         (unsigned long long)pending);
    for (size_t k = 0; k < pending && status == HB_SUCCESS; k++) {
        hb_net_event_t ev;
        ev.step = (long)hb_ckpt_get_i64(in);
        const int64_t cell = hb_ckpt_get_i64(in), syn = hb_ckpt_get_i64(in);
        ev.time = hb_ckpt_get_f64(in);
        ev.weight = hb_ckpt_get_f64(in);
        const int64_t vec = in->version >= 3 ? hb_ckpt_get_i64(in) : -1;
        if (cell < 0 || cell >= net->n_cable || syn < 0 ||
            syn >= hb_sim_cell_synapses(net->sim, cell) || ev.step < at)
            status = hb_fail(HB_ERR_PARSE, "%s: event %zu: cell %lld, synapse %lld, step %ld; "
                             "expected a synapse of this rank's cells, due at step %lld or "
                             "later", name, k, (long long)cell, (long long)syn, ev.step,
                             (long long)at);
        else if (!isfinite(ev.time) || ev.time < 0.0 || !isfinite(ev.weight))
            status = hb_fail(HB_ERR_PARSE, "%s: event %zu: time %g ms, weight %g uS; expected "
                             "finite numbers, the time at least 0", name, k, ev.time, ev.weight);
        else if (!hb_sim_weights_of(net->sim, (int)cell, (int)syn, vec))
            status = hb_fail(HB_ERR_PARSE, "%s: event %zu: weight vector %lld; expected -1 (none) "
                             "or one of the connections to cell %lld's synapse %lld", name, k,
                             (long long)vec, (long long)cell, (long long)syn);
        ev.cell = (int)cell;
        ev.synapse = (int)syn;
        ev.weights = (int)vec; /* -1 before version 3, which held no point processes */
        net->pending[k] = ev;
    }
    const uint64_t spikes = status == HB_SUCCESS ? hb_ckpt_get_u64(in) : 0;
    if (status == HB_SUCCESS && (in->bad || spikes > (in->size - in->pos) / 16))
        status = hb_fail(HB_ERR_PARSE, "%s: the spikes are cut short", name);
    if (status == HB_SUCCESS &&
        !hb_net_reserve((void **)&net->spikes, 0, &net->cap_spikes, (size_t)spikes + 1,
                        sizeof *net->spikes))
        status = hb_fail(HB_ERR_ALLOC, "%s: out of memory for %llu spikes", name,
                         (unsigned long long)spikes);
    /* every spike so far: finite times in [0, t], gids of the network, in (time, gid) order,
     * as the run keeps them (spikes.dat is written from them) */
    const double t_at = (double)at * net->opt.dt_ms, t_hi = t_at + 0.5 * net->opt.dt_ms;
    for (size_t k = 0; k < spikes && status == HB_SUCCESS; k++) {
        const double t = hb_ckpt_get_f64(in);
        const uint64_t gid = hb_ckpt_get_u64(in);
        const hb_spike_t *before = k ? &net->spikes[k - 1] : NULL;
        if (!isfinite(t) || t < 0.0 || t > t_hi || gid >= net->recipe.n_cells)
            status = hb_fail(HB_ERR_PARSE, "%s: spike %zu: gid %llu at %g ms; expected a gid "
                             "below %u at a finite time in [0, %g] ms (the checkpoint's t)", name,
                             k, (unsigned long long)gid, t, net->recipe.n_cells, t_at);
        else if (before && (t < before->time_ms || (t == before->time_ms && gid < before->gid)))
            status = hb_fail(HB_ERR_PARSE, "%s: spike %zu: gid %llu at %g ms comes after gid %u "
                             "at %g ms; expected the spikes in (time, gid) order", name, k,
                             (unsigned long long)gid, t, before->gid, before->time_ms);
        net->spikes[k] = (hb_spike_t){t, (uint32_t)gid, 0};
    }
    const int64_t has_sim = status == HB_SUCCESS ? hb_ckpt_get_i64(in) : 0;
    if (status == HB_SUCCESS && (in->bad || has_sim != (net->sim != NULL)))
        status = hb_fail(HB_ERR_PARSE, "%s: the network's record is cut short", name);
    if (status == HB_SUCCESS && net->sim) status = hb_sim_checkpoint_get(net->sim, in, name);
    if (status == HB_SUCCESS && net->sim && fabs(hb_sim_time(net->sim) - t_at) > 0.5 * net->opt.dt_ms)
        status = hb_fail(HB_ERR_PARSE, "%s: the cells are at t = %g ms, the network at %g ms; "
                         "expected one time", name, hb_sim_time(net->sim), t_at);
    /* each detector's spikes taken: no more than its probe recorded */
    for (int c = 0; c < net->n_cable && status == HB_SUCCESS; c++) {
        int count = 0;
        const double *times;
        if (net->detector[c] >= 0) hb_sim_spikes(net->sim, net->detector[c], &times, &count);
        if (seen[c] > count)
            status = hb_fail(HB_ERR_PARSE, "%s: cell %u: %d of its spikes taken; its detector "
                             "recorded %d: expected at most that", name, net->cable_gid[c],
                             seen[c], count);
    }
    if (status == HB_SUCCESS && in->pos != in->size)
        status = hb_fail(HB_ERR_PARSE, "%s: %zu bytes after the network's state", name,
                         in->size - in->pos);
    if (status == HB_SUCCESS) {
        net->n_pending = (size_t)pending;
        net->n_sorted = 0;
        net->n_spikes = (size_t)spikes;
        if (net->n_cable) memcpy(net->seen, seen, (size_t)net->n_cable * sizeof *seen);
        if (net->n_sources) memcpy(net->sources, src, (size_t)net->n_sources * sizeof *src);
        net->step = (long)at;
    }
    free(seen);
    free(src);
    return status;
}

/* Every rank must agree (as hb_net_init) and be at the same step; then the network is
 * initialised at it. status and step: this rank's load. */
static hb_status_t agree_loaded(hb_net_t *net, hb_status_t status, long step, const char *name,
                                double t0)
{
    double v[3] = {status != HB_SUCCESS, status == HB_SUCCESS ? (double)step : -HUGE_VAL,
                   status == HB_SUCCESS ? -(double)step : -HUGE_VAL};
    char message[1024];
    snprintf(message, sizeof message, "%s", hb_last_error());
    const hb_status_t agreed = net->comm->ops->allreduce(net->comm->state, v, 3, HB_REDUCE_MAX);
    if (status != HB_SUCCESS) hb_fail(status, "%s", message);
    else if (agreed != HB_SUCCESS) status = agreed;
    else if (v[0] > 0.0)
        status = hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load: another rank's checkpoint was "
                         "refused (its message is on that rank)");
    else if (v[1] != -v[2])
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: the ranks' checkpoints are of different "
                         "times (t = %g ms here, from %g to %g ms on all): expected one set, "
                         "written together", name, (double)step * net->opt.dt_ms,
                         -v[2] * net->opt.dt_ms, v[1] * net->opt.dt_ms);
    if (status != HB_SUCCESS) {
        snprintf(message, sizeof message, "%s", hb_last_error());
        net->n_pending = net->n_spikes = net->n_sorted = 0;
        net->step = 0;
        if (net->sim) hb_sim_init(net->sim); /* nothing half restored stays */
        return hb_fail(status, "%s", message);
    }
    memset(&net->stats, 0, sizeof net->stats);
    net->stats.build_s = net->build_s;
    net->stats.init_s = hb_clock_seconds() - t0;
    net->t_origin = t0;
    net->n_trace = 0;
    net->initialised = 1;
    return HB_SUCCESS;
}

/* What a load starts from: no run, nothing held. */
static void forget_run(hb_net_t *net)
{
    hb_net_exchange_abandon(net); /* a failed run's exchange */
    net->initialised = 0;
    net->n_local = net->n_sending = net->n_pending = net->n_spikes = net->n_sorted = 0;
    net->n_forgotten = 0;
    net->sources_next_ms = -INFINITY; /* the restored streams: scanned at the next epoch */
}

hb_status_t hb_net_load(hb_net_t *net, FILE *file, const char *name)
{
    hb_clear_error();
    if (!name) name = "checkpoint";
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load: net is NULL");
    forget_run(net);
    const double t0 = hb_clock_seconds();
    unsigned char *data = NULL;
    size_t size = 0;
    long step = -1;
    uint32_t version = 0;
    hb_status_t status = file ? hb_ckpt_read(file, name, HB_CKPT_NET, &data, &size, &version)
                              : hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load: file is NULL");
    if (status == HB_SUCCESS) {
        hb_ckpt_in_t in = {data, size, 0, 0, version};
        status = get_state(net, &in, name, &step);
    }
    free(data);
    return agree_loaded(net, status, step, name, t0);
}

/* ---- a checkpoint of another rank count (hb_net_load_ranks) ----
 * Each of the checkpoint's records is read into a network of that old rank's share, built
 * from the same recipe on a stand-in communicator of the old rank and rank count, and checked
 * there as that rank would check it (fingerprint, values). This rank then takes, by gid, its
 * cells' state, its sources' streams and the events waiting on its cells; every rank holds
 * every spike. */

typedef struct {
    int rank, size;
    double min_delay; /* [ms] the whole network's, which this rank's network knows */
} stand_in_t;

static int stand_in_available(void) { return 1; }

static hb_status_t stand_in_allgather_int(void *state, int mine, int *all)
{
    const stand_in_t *s = state;
    for (int r = 0; r < s->size; r++) all[r] = mine;
    return HB_SUCCESS;
}

static hb_status_t stand_in_allgatherv(void *state, const void *send, int send_count, void *recv,
                                       const int *counts, const int *displs, size_t elem_bytes)
{
    const stand_in_t *s = state;
    (void)counts;
    if (send_count > 0)
        memcpy((char *)recv + (size_t)displs[s->rank] * elem_bytes, send,
               (size_t)send_count * elem_bytes);
    return HB_SUCCESS;
}

/* hb_net_create's only MIN is the smallest delay over all ranks; its MAXes ask whether any
 * rank failed, and this one speaks for itself. */
static hb_status_t stand_in_allreduce(void *state, double *values, int n, hb_reduce_t op)
{
    const stand_in_t *s = state;
    for (int i = 0; i < n && op == HB_REDUCE_MIN; i++)
        if (s->min_delay < values[i]) values[i] = s->min_delay;
    return HB_SUCCESS;
}

static const struct hb_comm_ops stand_in_ops = {
    "checkpoint's partition", stand_in_available, NULL, NULL, stand_in_allgather_int,
    stand_in_allgatherv, NULL, NULL, NULL, stand_in_allreduce, NULL};

static int local_source(const hb_net_t *net, uint32_t gid)
{
    for (int s = 0; s < net->n_sources; s++)
        if (net->sources[s].gid == gid) return s;
    return -1;
}

/* Old rank r's network (*old), its record read from file and checked; *step: its step. */
static hb_status_t load_old_rank(hb_net_t *net, int r, int n_ranks, FILE *file, const char *name,
                                 hb_comm_t *comm, stand_in_t *si, hb_net_t **old, long *step)
{
    *si = (stand_in_t){r, n_ranks, net->min_delay};
    *comm = (hb_comm_t){net->comm->kind, &stand_in_ops, si, r, n_ranks, 0};
    hb_sim_options_t opt = net->opt;
    opt.threads = 1; /* a record of format 4 or later holds no layout: any width reads it */
    hb_status_t status = hb_net_create_with(&net->recipe, &net->builder, comm, &opt, old);
    if (status != HB_SUCCESS)
        return hb_fail(status, "%s: building the share of rank %d of %d to read it: %s", name, r,
                       n_ranks, hb_last_error());
    hb_net_set_overlap(*old, net->overlap);
    unsigned char *data = NULL;
    size_t size = 0;
    uint32_t version = 0;
    status = file ? hb_ckpt_read(file, name, HB_CKPT_NET, &data, &size, &version)
                  : hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load_ranks: file %d is NULL", r);
    if (status == HB_SUCCESS && version < 4)
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of format version %u, laid out "
                         "in its engine's blocks; expected version 4 or later to restart on "
                         "another rank count (%d here, %d wrote it), or the rank count that "
                         "wrote it", name, version, net->comm->size, n_ranks);
    if (status == HB_SUCCESS) {
        hb_ckpt_in_t in = {data, size, 0, 0, version};
        status = get_state(*old, &in, name, step);
    }
    free(data);
    return status;
}

/* old's weight vectors: one past the largest connection's. */
static int n_vec_of(const hb_net_t *old)
{
    int n = 0;
    for (size_t k = 0; old->conn_weights && k < old->n_conns; k++)
        if (old->conn_weights[k] >= n) n = old->conn_weights[k] + 1;
    return n;
}

static hb_status_t take_cells(hb_net_t *net, const hb_net_t *old, const char *name,
                              const char **claimed, int *vec);

/* The weight vectors of the connections to this rank's cells among old's: moved, and
 * vec[old's vector] = this rank's (-1: not here). Both ranks keep their connections sorted by
 * (source, cell, synapse, weight, delay), and a block's local cells are in gid order, so the
 * connections both hold come in the same order in each. */
static hb_status_t take_weights(hb_net_t *net, const hb_net_t *old, const char *name, int *vec)
{
    size_t j = 0;
    for (size_t k = 0; k < old->n_conns; k++) {
        const hb_net_conn_t *e = &old->conns[k];
        const int d = hb_net_local_cable(net, old->cable_gid[e->cell]);
        if (d < 0) continue;
        while (j < net->n_conns &&
               hb_net_local_cable(old, net->cable_gid[net->conns[j].cell]) < 0)
            j++;
        const hb_net_conn_t *h = j < net->n_conns ? &net->conns[j] : NULL;
        if (!h || h->source != e->source || h->cell != d || h->synapse != e->synapse ||
            h->weight != e->weight || h->delay != e->delay)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: the connection from %u to cell %u's synapse "
                           "%d is not this network's next one: expected a checkpoint of the same "
                           "connections", name, e->source, old->cable_gid[e->cell], e->synapse);
        const int ov = old->conn_weights ? old->conn_weights[k] : -1;
        const int nv = net->conn_weights ? net->conn_weights[j] : -1;
        if ((ov < 0) != (nv < 0))
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: the connection from %u to cell %u's synapse "
                           "%d has %s weight vector here: expected the same connections", name,
                           e->source, old->cable_gid[e->cell], e->synapse, nv < 0 ? "no" : "a");
        if (ov >= 0) {
            vec[ov] = nv;
            const hb_status_t st = hb_sim_checkpoint_move_weights(net->sim, nv, old->sim, ov, name);
            if (st != HB_SUCCESS) return st;
        }
        j++;
    }
    return HB_SUCCESS;
}

/* This rank's part of old rank r's network (old, its record from `name`): its cells, sources
 * and events; claimed[c] / [n_cable + s]: the file that gave cell c or source s. */
static hb_status_t take_share(hb_net_t *net, const hb_net_t *old, const char *name,
                              const char **claimed)
{
    const int n_vec = n_vec_of(old);
    int *vec = malloc(((size_t)n_vec + 1) * sizeof *vec);
    if (!vec) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", name);
    for (int v = 0; v < n_vec; v++) vec[v] = -1;
    const hb_status_t st = take_cells(net, old, name, claimed, vec);
    free(vec);
    return st;
}

static hb_status_t take_cells(hb_net_t *net, const hb_net_t *old, const char *name,
                              const char **claimed, int *vec)
{
    for (int c = 0; c < old->n_cable; c++) {
        const int d = hb_net_local_cable(net, old->cable_gid[c]);
        if (d < 0) continue;
        if (claimed[d])
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: cell %u is in %s too: expected each cell in "
                           "one rank's file", name, old->cable_gid[c], claimed[d]);
        claimed[d] = name;
        net->seen[d] = old->seen[c];
        const hb_status_t st = hb_sim_checkpoint_move_cell(net->sim, d, old->sim, c, name);
        if (st != HB_SUCCESS) return st;
    }
    for (int s = 0; s < old->n_sources; s++) {
        const int d = local_source(net, old->sources[s].gid);
        if (d < 0) continue;
        if (claimed[net->n_cable + d])
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: source %u is in %s too: expected each "
                           "source in one rank's file", name, old->sources[s].gid,
                           claimed[net->n_cable + d]);
        claimed[net->n_cable + d] = name;
        net->sources[d].emitted = old->sources[s].emitted;
        net->sources[d].next_ms = old->sources[s].next_ms;
    }
    hb_status_t st = take_weights(net, old, name, vec);
    if (st != HB_SUCCESS) return st;
    const int n_vec = n_vec_of(old);
    if (old->sim && net->sim) { /* the point processes' waiting self-events, with their cells */
        int *cell = malloc(((size_t)old->n_cable + 1) * sizeof *cell);
        if (!cell) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", name);
        for (int c = 0; c < old->n_cable; c++) cell[c] = hb_net_local_cable(net, old->cable_gid[c]);
        st = hb_sim_checkpoint_move_self_events(net->sim, old->sim, cell, vec, n_vec, name);
        free(cell);
        if (st != HB_SUCCESS) return st;
    }
    for (size_t k = 0; k < old->n_pending; k++) {
        hb_net_event_t ev = old->pending[k];
        const int d = hb_net_local_cable(net, old->cable_gid[ev.cell]);
        if (d < 0) continue;
        if (!hb_net_reserve((void **)&net->pending, net->n_pending, &net->cap_pending, 1,
                            sizeof *net->pending))
            return hb_fail(HB_ERR_ALLOC, "%s: out of memory for the events", name);
        if (ev.weights >= 0 && (ev.weights >= n_vec || vec[ev.weights] < 0))
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: event %zu carries weight vector %d, of no "
                           "connection to cell %u here: expected the same connections", name, k,
                           ev.weights, old->cable_gid[ev.cell]);
        ev.cell = d;
        if (ev.weights >= 0) ev.weights = vec[ev.weights];
        net->pending[net->n_pending++] = ev;
    }
    return HB_SUCCESS;
}

/* The checkpoint's every spike: old rank 0's (each rank held them all), the others' the same
 * count. */
static hb_status_t take_spikes(hb_net_t *net, const hb_net_t *old, int r, const char *name,
                               const char *first)
{
    if (r > 0) {
        if (old->n_spikes == net->n_spikes) return HB_SUCCESS;
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %zu spikes; %s holds %zu: expected the files "
                       "of one checkpoint", name, old->n_spikes, first, net->n_spikes);
    }
    if (!hb_net_reserve((void **)&net->spikes, 0, &net->cap_spikes, old->n_spikes + 1,
                        sizeof *net->spikes))
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %zu spikes", name, old->n_spikes);
    if (old->n_spikes) memcpy(net->spikes, old->spikes, old->n_spikes * sizeof *net->spikes);
    net->n_spikes = old->n_spikes;
    return HB_SUCCESS;
}

static hb_status_t load_other_ranks(hb_net_t *net, int n_ranks, FILE *const *files,
                                    const char *const *names, long *step)
{
    const char **claimed = calloc((size_t)net->n_cable + (size_t)net->n_sources + 1,
                                  sizeof *claimed);
    if (!claimed) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", names[0]);
    hb_status_t status = net->sim ? hb_sim_init(net->sim) : HB_SUCCESS;
    if (status == HB_SUCCESS && net->sim) hb_sim_checkpoint_move_begin(net->sim);
    hb_net_t *from = NULL; /* an old rank's network with cells: the sample times */
    for (int r = 0; r < n_ranks && status == HB_SUCCESS; r++) {
        const char *name = names[r] ? names[r] : "checkpoint";
        hb_comm_t comm;
        stand_in_t si;
        hb_net_t *old = NULL;
        long at = -1;
        status = load_old_rank(net, r, n_ranks, files[r], name, &comm, &si, &old, &at);
        if (status == HB_SUCCESS && r > 0 && at != *step)
            status = hb_fail(HB_ERR_INVALID_VALUE, "%s: t = %g ms; %s: t = %g ms: expected the "
                             "files of one checkpoint, written together", name,
                             (double)at * net->opt.dt_ms, names[0], (double)*step * net->opt.dt_ms);
        if (status == HB_SUCCESS) {
            *step = at;
            status = take_spikes(net, old, r, name, names[0]);
        }
        if (status == HB_SUCCESS) status = take_share(net, old, name, claimed);
        if (status == HB_SUCCESS && !from && old->sim) {
            from = old;
            old = NULL;
        }
        hb_net_destroy(old);
    }
    for (int k = 0; k < net->n_cable + net->n_sources && status == HB_SUCCESS; k++)
        if (!claimed[k])
            status = hb_fail(HB_ERR_INVALID_VALUE, "%s: no file of the checkpoint holds %s %u: "
                             "expected the files of all %d ranks that wrote it", names[0],
                             k < net->n_cable ? "cell" : "source",
                             k < net->n_cable ? net->cable_gid[k]
                                              : net->sources[k - net->n_cable].gid, n_ranks);
    if (status == HB_SUCCESS && net->sim)
        status = hb_sim_checkpoint_moved(net->sim, from->sim, *step, names[0]);
    if (status == HB_SUCCESS) {
        net->n_sorted = 0;
        net->step = *step;
    }
    hb_net_destroy(from);
    free(claimed);
    return status;
}

hb_status_t hb_net_load_ranks(hb_net_t *net, int n_files, FILE *const *files,
                              const char *const *names)
{
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load_ranks: net is NULL");
    const char *first = names && names[0] ? names[0] : "checkpoint";
    if (files && names && n_files == net->comm->size)
        return hb_net_load(net, files[net->comm->rank], names[net->comm->rank]);
    forget_run(net);
    const double t0 = hb_clock_seconds();
    long step = -1;
    hb_status_t status = HB_SUCCESS;
    if (!files || !names || n_files < 1)
        status = hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load_ranks: %d files%s; expected one per "
                         "rank that wrote the checkpoint", n_files,
                         files && names ? "" : " (NULL)");
    else
        status = load_other_ranks(net, n_files, files, names, &step);
    return agree_loaded(net, status, step, first, t0);
}
