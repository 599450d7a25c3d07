/*
 * Building a network on one rank (hb_net_create): the rank's block of gids asked of the
 * recipe, its cable cells in one simulation, the connections that end on them, checked and
 * sorted by source; the smallest delay of the whole network (an all-reduce) sets the epoch.
 */
#define _POSIX_C_SOURCE 200809L /* gethostname */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/status.h"
#include "net/net_engine.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

static int compare_conn(const void *a, const void *b)
{
    const hb_net_conn_t *x = a, *y = b;
    if (x->source != y->source) return x->source < y->source ? -1 : 1;
    if (x->cell != y->cell) return x->cell < y->cell ? -1 : 1;
    if (x->synapse != y->synapse) return x->synapse < y->synapse ? -1 : 1;
    if (x->weight != y->weight) return x->weight < y->weight ? -1 : 1;
    return (x->delay > y->delay) - (x->delay < y->delay);
}

/* Within one cell: (synapse, weight, delay). */
static int compare_in_cell(const void *a, const void *b)
{
    const hb_net_conn_t *x = a, *y = b;
    if (x->synapse != y->synapse) return x->synapse < y->synapse ? -1 : 1;
    if (x->weight != y->weight) return x->weight < y->weight ? -1 : 1;
    return (x->delay > y->delay) - (x->delay < y->delay);
}

static int in_cell_before(const hb_net_conn_t *x, const hb_net_conn_t *y)
{
    return compare_in_cell(x, y) < 0;
}

/* A cell's connections by compare_in_cell, stably (as glibc's qsort, a merge sort, left them):
 * runs of 8 by insertion, then merges, the comparison inlined (qsort's call a comparison was
 * a seventh of a busyring's build). scratch: n elements. */
static void sort_in_cell(hb_net_conn_t *a, size_t n, hb_net_conn_t *scratch)
{
    enum { RUN = 8 };
    for (size_t lo = 0; lo < n; lo += RUN) {
        const size_t hi = lo + RUN < n ? lo + RUN : n;
        for (size_t i = lo + 1; i < hi; i++) {
            const hb_net_conn_t x = a[i];
            size_t j = i;
            for (; j > lo && in_cell_before(&x, &a[j - 1]); j--) a[j] = a[j - 1];
            a[j] = x;
        }
    }
    hb_net_conn_t *from = a, *to = scratch;
    for (size_t width = RUN; width < n; width *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * width) {
            const size_t mid = lo + width < n ? lo + width : n;
            const size_t hi = lo + 2 * width < n ? lo + 2 * width : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) /* ties: the left run's first (stable) */
                to[k++] = in_cell_before(&from[j], &from[i]) ? from[j++] : from[i++];
            while (i < mid) to[k++] = from[i++];
            while (j < hi) to[k++] = from[j++];
        }
        hb_net_conn_t *t = from;
        from = to;
        to = t;
    }
    if (from != a) memcpy(a, from, n * sizeof *a);
}

/*
 * The connections in compare_conn's order. They come cell by cell (cells ascending), each
 * cell's sorted by add_connections (compare_in_cell), so a stable sort by source alone gives
 * (source, cell, synapse, weight, delay): an LSD radix sort of the 32-bit source, 8 bits a
 * pass (a general sort of 65 million connections took a quarter of a busyring's build), each
 * pass over `threads` contiguous chunks: chunk t's items of digit d go after every chunk's
 * items of smaller digits and chunk 0 .. t - 1's of digit d, so the order is the serial one.
 */
static hb_status_t sort_connections(hb_net_t *net)
{
    const size_t n = net->n_conns;
    if (n < 2) return HB_SUCCESS;
    int threads = net->build_threads;
    if ((size_t)threads > n / 65536 + 1) threads = (int)(n / 65536 + 1); /* chunks worth it */
    hb_net_conn_t *tmp = malloc(n * sizeof *tmp);
    size_t(*count)[256] = calloc((size_t)threads, sizeof *count);
    if (!tmp || !count) { /* no room for the radix sort's copy: the general sort, in place */
        free(tmp);
        free(count);
        qsort(net->conns, n, sizeof *net->conns, compare_conn);
        return HB_SUCCESS;
    }
    hb_net_conn_t *from = net->conns, *to = tmp;
    for (int shift = 0; shift < 32; shift += 8) {
        int one_digit = 1; /* every source has the same digit here: the pass changes nothing */
        const uint32_t d0 = (from[0].source >> shift) & 0xffu;
#ifdef HB_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) if (threads > 1) reduction(&& : one_digit)
#endif
        for (int t = 0; t < threads; t++) {
            const size_t a = n / (size_t)threads * (size_t)t;
            const size_t b = t == threads - 1 ? n : n / (size_t)threads * (size_t)(t + 1);
            memset(count[t], 0, sizeof count[t]);
            for (size_t k = a; k < b; k++) {
                const uint32_t d = (from[k].source >> shift) & 0xffu;
                count[t][d]++;
                one_digit = one_digit && d == d0;
            }
        }
        if (one_digit) continue;
        size_t at = 0; /* the chunks' starts per digit */
        for (int d = 0; d < 256; d++)
            for (int t = 0; t < threads; t++) {
                const size_t c = count[t][d];
                count[t][d] = at;
                at += c;
            }
#ifdef HB_HAVE_OPENMP
#pragma omp parallel for num_threads(threads) if (threads > 1)
#endif
        for (int t = 0; t < threads; t++) {
            const size_t a = n / (size_t)threads * (size_t)t;
            const size_t b = t == threads - 1 ? n : n / (size_t)threads * (size_t)(t + 1);
            size_t *c = count[t];
            for (size_t k = a; k < b; k++) to[c[(from[k].source >> shift) & 0xffu]++] = from[k];
        }
        hb_net_conn_t *t = from;
        from = to;
        to = t;
    }
    if (from != net->conns) memcpy(net->conns, from, n * sizeof *from);
    free(tmp);
    free(count);
    return HB_SUCCESS;
}

/* The connections of local cable cell c: counted first (first[c], the room), then fetched
 * into their room, checked and sorted by compare_in_cell; min_delay per cell. */
typedef struct {
    hb_net_t *net;
    size_t *first;     /* per cell: its first connection (n_cable + 1) */
    double *min_delay; /* per cell [ms] */
} conn_job_t;

static hb_status_t count_connections(void *ctx, int c)
{
    static const char fn[] = "hb_net_create";
    const conn_job_t *job = ctx;
    hb_net_t *net = job->net;
    const uint32_t gid = net->cable_gid[c];
    int count = 0;
    hb_status_t status = net->recipe.connections_on(net->recipe.user, gid, NULL, &count);
    if (status != HB_SUCCESS) return status;
    if (count < 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: gid %u: %d connections; expected >= 0", fn,
                       gid, count);
    job->first[c] = (size_t)count;
    return HB_SUCCESS;
}

static hb_status_t add_connections(void *ctx, int c)
{
    static const char fn[] = "hb_net_create";
    const conn_job_t *job = ctx;
    hb_net_t *net = job->net;
    const uint32_t gid = net->cable_gid[c];
    const size_t first = job->first[c];
    const int count = (int)(job->first[c + 1] - first);
    job->min_delay[c] = INFINITY;
    if (count == 0) return HB_SUCCESS;
    /* the recipe's connections, then the sort's scratch (a connection is the larger) */
    hb_connection_t *in = malloc((size_t)count * (sizeof *in > sizeof *net->conns
                                                  ? sizeof *in : sizeof *net->conns));
    if (!in) return hb_fail(HB_ERR_ALLOC, "%s: out of memory for the connections of gid %u", fn, gid);
    int got = count;
    hb_status_t status = net->recipe.connections_on(net->recipe.user, gid, in, &got);
    if (status == HB_SUCCESS && got != count)
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: gid %u: the recipe gave %d connections after "
                         "counting %d", fn, gid, got, count);
    const int n_syn = hb_sim_cell_synapses(net->sim, c);
    for (int k = 0; k < count && status == HB_SUCCESS; k++) {
        const hb_connection_t *e = &in[k];
        if (e->source >= net->recipe.n_cells)
            status = hb_fail(HB_ERR_INVALID_VALUE, "connection %d of gid %u: source gid %u does "
                             "not exist (the network has gids 0 to %u)", k, gid, e->source,
                             net->recipe.n_cells - 1);
        else if (e->synapse < 0 || e->synapse >= n_syn)
            status = hb_fail(HB_ERR_INVALID_VALUE, "connection %d of gid %u (from gid %u): "
                             "synapse %d does not exist (the cell has %d)", k, gid, e->source,
                             e->synapse, n_syn);
        else if (!isfinite(e->weight_us))
            status = hb_fail(HB_ERR_INVALID_VALUE, "connection %d of gid %u (from gid %u): weight "
                             "%g uS; expected a finite weight", k, gid, e->source, e->weight_us);
        else if (!(e->delay_ms >= net->opt.dt_ms) || !isfinite(e->delay_ms))
            status = hb_fail(HB_ERR_INVALID_VALUE, "connection %d of gid %u (from gid %u): delay "
                             "%g ms; expected a finite delay of at least one step (dt = %g ms)",
                             k, gid, e->source, e->delay_ms, net->opt.dt_ms);
        else {
            net->conns[first + (size_t)k] =
                (hb_net_conn_t){e->source, c, e->synapse, e->weight_us, e->delay_ms};
            if (e->delay_ms < job->min_delay[c]) job->min_delay[c] = e->delay_ms;
        }
    }
    if (status == HB_SUCCESS) sort_in_cell(net->conns + first, (size_t)count, (hb_net_conn_t *)in);
    free(in);
    return status;
}

/* Every local cable cell's connections, in cell order, in an array of their exact size. */
static hb_status_t build_connections(hb_net_t *net)
{
    const int n = net->n_cable;
    size_t *first = calloc((size_t)n + 1, sizeof *first);
    double *min_delay = malloc(((size_t)n + 1) * sizeof *min_delay);
    if (!first || !min_delay) {
        free(first);
        free(min_delay);
        return hb_fail(HB_ERR_ALLOC, "hb_net_create: out of memory for %d cells", n);
    }
    conn_job_t job = {net, first, min_delay};
    hb_status_t status = hb_for_each_first(net->build_threads, n, "cells' connections counted",
                                           count_connections, &job);
    size_t total = 0; /* counts to starts */
    for (int c = 0; c < n && status == HB_SUCCESS; c++) {
        const size_t k = first[c];
        first[c] = total;
        total += k;
    }
    first[n] = total;
    if (status == HB_SUCCESS && total > 0) {
        net->conns = malloc(total * sizeof *net->conns);
        if (!net->conns)
            status = hb_fail(HB_ERR_ALLOC, "hb_net_create: out of memory for %zu connections "
                             "(%zu bytes)", total, total * sizeof *net->conns);
        else
            net->n_conns = net->cap_conns = total;
    }
    if (status == HB_SUCCESS)
        status = hb_for_each_first(net->build_threads, n, "cells connected", add_connections, &job);
    for (int c = 0; c < n && status == HB_SUCCESS; c++) /* a minimum: any order, the same */
        if (min_delay[c] < net->min_delay) net->min_delay = min_delay[c];
    free(first);
    free(min_delay);
    return status;
}

static hb_status_t check_recipe(const hb_recipe_t *r)
{
    if (!r->kind || !r->connections_on)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_create: the recipe needs kind and "
                       "connections_on");
    if (r->n_cells == 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_create: the network has no cells; expected "
                       "n_cells >= 1");
    return HB_SUCCESS;
}

/* Block `rank` of `size` contiguous blocks of n items: [*first, *end), the first n % size
 * blocks one more. */
static void my_block(uint32_t n, int rank, int size, uint32_t *first, uint32_t *end)
{
    const uint32_t base = n / (uint32_t)size, extra = n % (uint32_t)size, r = (uint32_t)rank;
    *first = r * base + (r < extra ? r : extra);
    *end = *first + base + (r < extra ? 1 : 0);
}

/* This rank's gids. A network file's cells come first, its sources after them: a block of
 * each, so that every rank steps as many cells (blocks of all gids put the L5PC network's N
 * cells and N sources all cells on half of the ranks). Otherwise a block of all gids: a rank
 * asks the recipe about its own gids only. */
static void my_share(hb_net_t *net)
{
    const int rank = net->comm->rank, size = net->comm->size;
    const uint32_t n = net->recipe.n_cells;
    const uint32_t cells = net->builder.cells_first && net->builder.n_cable <= n
                               ? net->builder.n_cable : n;
    my_block(cells, rank, size, &net->first[0], &net->end[0]);
    my_block(n - cells, rank, size, &net->first[1], &net->end[1]);
    net->first[1] += cells;
    net->end[1] += cells;
}

/* The simulation's cells from the recipe, one at a time (a builder that releases them). */
static hb_model_t *recipe_get(void *user, int c)
{
    const hb_net_t *net = user;
    const uint32_t gid = net->cable_gid[c];
    hb_model_t *model = net->recipe.cable(net->recipe.user, gid);
    if (!model) { /* the recipe's own message, where it left one, says why */
        char why[512];
        snprintf(why, sizeof why, "%s", hb_last_error());
        hb_fail(HB_ERR_INVALID_VALUE, "hb_net_create: gid %u is a cable cell without a model%s%s",
                gid, why[0] ? ": " : "", why);
    }
    return model;
}

static void recipe_put(void *user, int c, hb_model_t *model)
{
    const hb_net_t *net = user;
    net->builder.release(net->recipe.user, net->cable_gid[c], model);
}

/* This rank's cells in one simulation: its detectors its cells' first detecting probes. */
static hb_status_t build_sim(hb_net_t *net)
{
    hb_sim_options_t o = net->opt;
    o.sample_dt_ms = o.dt_ms * (double)(net->total_steps > 0 ? net->total_steps : 1);
    hb_status_t status;
    if (net->builder.release) {
        const hb_sim_cell_source_t source = {net, recipe_get, recipe_put,
                                             net->builder.thread_safe};
        status = hb_sim_create_from(&source, net->n_cable, &o, net->local_rank, &net->sim);
    } else {
        status = hb_sim_create_on(net->models, net->n_cable, &o, net->local_rank, &net->sim);
    }
    if (status != HB_SUCCESS) return status;
    hb_sim_label_cells(net->sim, "gid", net->cable_gid);
    net->detector = calloc((size_t)net->n_cable + 1, sizeof *net->detector);
    net->seen = calloc((size_t)net->n_cable + 1, sizeof *net->seen);
    if (!net->detector || !net->seen) return hb_fail(HB_ERR_ALLOC, "hb_net_create: out of memory");
    for (int c = 0; c < net->n_cable; c++) net->detector[c] = hb_sim_cell_detector(net->sim, c);
    /* cells whose spikes are their point process's net_events (hb_model_set_spike_source) */
    net->ps_target = calloc((size_t)net->n_cable + 1, sizeof *net->ps_target);
    net->ps_cell = calloc((size_t)net->n_cable + 1, sizeof *net->ps_cell);
    if (!net->ps_target || !net->ps_cell) return hb_fail(HB_ERR_ALLOC, "hb_net_create: out of memory");
    for (int c = 0; c < net->n_cable; c++) {
        const int target = hb_sim_cell_point_source(net->sim, c);
        if (target < 0) continue;
        net->ps_target[net->n_point_sources] = target;
        net->ps_cell[net->n_point_sources++] = c;
    }
    hb_sim_keep_point_spikes(net->sim, net->n_point_sources > 0);
    return HB_SUCCESS;
}

/* This rank's cells and sources (no collective: a failure here is agreed on by all ranks
 * afterwards). */
static hb_status_t build_local(hb_net_t *net)
{
    static const char fn[] = "hb_net_create";
    const hb_recipe_t *r = &net->recipe;
    const uint32_t n = net->end[0] - net->first[0] + net->end[1] - net->first[1];
    net->cable_gid = malloc(((size_t)n + 1) * sizeof *net->cable_gid);
    if (!net->builder.release) net->models = malloc(((size_t)n + 1) * sizeof *net->models);
    net->sources = calloc((size_t)n + 1, sizeof *net->sources);
    net->counts = malloc((size_t)net->comm->size * sizeof *net->counts);
    net->displs = malloc((size_t)net->comm->size * sizeof *net->displs);
    net->count_in = malloc((size_t)net->comm->size * sizeof *net->count_in);
    net->ones = malloc((size_t)net->comm->size * sizeof *net->ones);
    net->iota = malloc((size_t)net->comm->size * sizeof *net->iota);
    if (!net->cable_gid || (!net->builder.release && !net->models) || !net->sources ||
        !net->counts || !net->displs || !net->count_in || !net->ones || !net->iota)
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %u cells", fn, n);
    for (int k = 0; k < net->comm->size; k++) {
        net->ones[k] = 1;
        net->iota[k] = k;
    }
    hb_status_t status = HB_SUCCESS;
    const uint32_t n0 = net->end[0] - net->first[0];
    for (uint32_t i = 0; i < n && status == HB_SUCCESS; i++) {
        const uint32_t gid = i < n0 ? net->first[0] + i : net->first[1] + (i - n0);
        const hb_cell_kind_t kind = r->kind(r->user, gid);
        if (kind == HB_CELL_CABLE) {
            if (!r->cable)
                return hb_fail(HB_ERR_INVALID_VALUE, "%s: gid %u is a cable cell without a "
                               "model: the recipe has no cable()", fn, gid);
            net->cable_gid[net->n_cable] = gid;
            /* the recipe's models, kept (recipe_get records why one is missing) */
            if (!net->builder.release &&
                !(net->models[net->n_cable] = recipe_get(net, net->n_cable)))
                return HB_ERR_INVALID_VALUE;
            net->n_cable++;
        } else if (kind == HB_CELL_SOURCE) {
            hb_net_source_t *src = &net->sources[net->n_sources];
            src->gid = gid;
            status = r->source ? r->source(r->user, gid, &src->p)
                               : hb_fail(HB_ERR_INVALID_VALUE, "%s: gid %u is a spike source, "
                                         "and the recipe has no source()", fn, gid);
            const hb_spike_source_t *p = &src->p;
            if (status == HB_SUCCESS &&
                (!(p->start_ms >= 0.0) || !(p->interval_ms > 0.0) || p->number < 0 ||
                 !(p->noise >= 0.0 && p->noise <= 1.0) || !isfinite(p->start_ms + p->interval_ms)))
                status = hb_fail(HB_ERR_INVALID_VALUE, "spike source gid %u: start %g ms, "
                                 "interval %g ms, number %ld, noise %g; expected start >= 0, "
                                 "interval > 0, number >= 0, 0 <= noise <= 1", gid, p->start_ms,
                                 p->interval_ms, p->number, p->noise);
            net->n_sources++;
        } else {
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: gid %u: kind %d is not an "
                           "hb_cell_kind_t", fn, gid, (int)kind);
        }
    }
    net->min_delay = INFINITY;
    net->total_steps = (long)ceil(net->opt.t_stop_ms / net->opt.dt_ms - 1e-9);
    return status;
}

/* This rank's simulation and the connections that end on its cells (no collective). */
static hb_status_t build_cells(hb_net_t *net)
{
    /* the simulation first: it knows each cell's synapses, which the connections are checked
     * against, and with a releasing builder no model outlives it */
    hb_status_t status = net->n_cable ? build_sim(net) : HB_SUCCESS;
    if (status == HB_SUCCESS) status = build_connections(net);
    return status;
}

/* After the collectives: the connections' order, the epoch. */
/* The weight vectors of the connections to catalogue point processes (hb_sim_add_weights), in
 * the connections' order, so that alike events of two connections are added in the same order
 * on every rank count, and FOR_NETCONS visits a synapse's connections in that order (by source
 * gid, weight, delay); none where no connection ends on one. */
static hb_status_t connection_weights(hb_net_t *net)
{
    if (!net->sim) return HB_SUCCESS;
    int any = 0;
    for (int c = 0; c < net->n_cable && !any; c++)
        any = hb_sim_cell_points(net->sim, c) > 0;
    if (!any) return HB_SUCCESS;
    net->conn_weights = malloc((net->n_conns + 1) * sizeof *net->conn_weights);
    if (!net->conn_weights)
        return hb_fail(HB_ERR_ALLOC, "hb_net_create: out of memory for the weight vectors");
    hb_status_t status = HB_SUCCESS;
    for (size_t k = 0; k < net->n_conns && status == HB_SUCCESS; k++)
        status = hb_sim_add_weights(net->sim, net->conns[k].cell, net->conns[k].synapse,
                                    net->conns[k].weight, &net->conn_weights[k]);
    return status;
}

static hb_status_t build_engine(hb_net_t *net)
{
    hb_status_t status = sort_connections(net);
    if (status == HB_SUCCESS) status = connection_weights(net);
    /* An epoch no longer than the smallest delay: a spike's events reach the next epoch.
     * Without a connection, a hundredth of the run: spikes still go out (and are let go,
     * hb_net_set_keep_spikes) epoch by epoch, not all at the end. */
    const double steps = isfinite(net->min_delay) ? floor(net->min_delay / net->opt.dt_ms + 1e-9)
                                                  : ceil((double)net->total_steps / 100.0);
    net->epoch_blocking = steps < 1.0 ? 1 : steps > 1e6 ? 1000000 : (int)steps;
    /* Overlapping the exchange of an epoch with the next one needs epochs of half the delay:
     * a spike's events then land two epochs on. */
    net->epoch_overlap = net->epoch_blocking / 2;
    hb_net_set_overlap(net, HB_NET_BLOCKING); /* measured fastest: docs/network.md */
    return status;
}

/* This rank's index among the ranks of its host (their names gathered): its GPU. */
static hb_status_t find_local_rank(hb_net_t *net)
{
    enum { NAME = 64 };
    hb_comm_t *comm = net->comm;
    char mine[NAME];
    memset(mine, 0, sizeof mine);
    if (gethostname(mine, NAME - 1) != 0) snprintf(mine, sizeof mine, "?");
    char *all = calloc((size_t)comm->size, NAME);
    int *counts = calloc((size_t)comm->size, sizeof *counts);
    int *displs = calloc((size_t)comm->size, sizeof *displs);
    hb_status_t status = HB_SUCCESS;
    if (!all || !counts || !displs) status = hb_fail(HB_ERR_ALLOC, "hb_net_create: out of memory");
    for (int r = 0; r < comm->size && status == HB_SUCCESS; r++) {
        counts[r] = NAME;
        displs[r] = r * NAME;
    }
    if (status == HB_SUCCESS)
        status = comm->ops->allgatherv(comm->state, mine, NAME, all, counts, displs, 1);
    net->local_rank = 0;
    for (int r = 0; r < comm->rank && status == HB_SUCCESS; r++)
        net->local_rank += memcmp(all + (size_t)r * NAME, mine, NAME) == 0;
    free(all);
    free(counts);
    free(displs);
    return status;
}

/* Every rank calls this with its own status: a failure anywhere fails everywhere (no rank is
 * left waiting in a collective), with the failing rank's own message kept there. */
static hb_status_t agree(hb_net_t *net, hb_status_t status)
{
    char message[1024];
    snprintf(message, sizeof message, "%s", hb_last_error());
    /* 2: interrupted (hb_set_progress), which every rank then reports as such */
    double failed[1] = {status == HB_ERR_INTERRUPTED ? 2.0 : status != HB_SUCCESS};
    const hb_status_t agreed = net->comm->ops->allreduce(net->comm->state, failed, 1,
                                                         HB_REDUCE_MAX);
    if (status != HB_SUCCESS) return hb_fail(status, "%s", message);
    if (agreed != HB_SUCCESS) return agreed;
    if (failed[0] > 1.0)
        return hb_fail(HB_ERR_INTERRUPTED, "hb_net_create: another rank's build was interrupted");
    if (failed[0] > 0.0)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_create: another rank failed to build its "
                       "part of the network (its message is on that rank)");
    return HB_SUCCESS;
}

hb_status_t hb_net_create(const hb_recipe_t *recipe, hb_comm_t *comm,
                          const hb_sim_options_t *options, hb_net_t **out)
{
    return hb_net_create_with(recipe, NULL, comm, options, out);
}

hb_status_t hb_net_create_with(const hb_recipe_t *recipe, const hb_net_builder_t *builder,
                               hb_comm_t *comm, const hb_sim_options_t *options, hb_net_t **out)
{
    hb_clear_error();
    if (!out) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_create: net is NULL");
    *out = NULL;
    if (!recipe || !comm || !options)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_create: NULL argument");
    hb_status_t status = check_recipe(recipe);
    if (status != HB_SUCCESS) return status;
    if (!(options->dt_ms > 0.0) || !(options->t_stop_ms >= 0.0) ||
        !isfinite(options->t_stop_ms / options->dt_ms) || options->t_stop_ms / options->dt_ms > 1e12)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_create: dt %g ms, t_stop %g ms; expected "
                       "dt > 0, t_stop >= 0 and at most 1e12 steps", options->dt_ms,
                       options->t_stop_ms);
    hb_net_t *net = calloc(1, sizeof *net);
    if (!net) return hb_fail(HB_ERR_ALLOC, "hb_net_create: out of memory");
    const double t0 = hb_clock_seconds();
    net->recipe = *recipe;
    net->comm = comm;
    net->opt = *options;
    if (builder) net->builder = *builder;
    net->build_threads = 1;
    net->keep_spikes = 1;
#ifdef HB_HAVE_OPENMP
    if (net->builder.thread_safe) /* options->threads is checked with the simulation */
        net->build_threads = options->threads > 0 && options->threads <= HB_MAX_THREADS
                                 ? options->threads : omp_get_max_threads();
#endif
    my_share(net);
    status = find_local_rank(net); /* the simulation's GPU */
    if (status == HB_SUCCESS) status = agree(net, build_local(net));
    if (status == HB_SUCCESS && net->opt.backend == HB_BACKEND_BEST)
        status = hb_net_choose_backend(net); /* every rank: all-reduces */
    if (status == HB_SUCCESS) status = agree(net, build_cells(net));
    if (status == HB_SUCCESS) { /* the smallest delay of the whole network */
        double v[1] = {net->min_delay};
        status = comm->ops->allreduce(comm->state, v, 1, HB_REDUCE_MIN);
        net->min_delay = v[0];
    }
    if (status == HB_SUCCESS) status = agree(net, build_engine(net));
    if (status != HB_SUCCESS) {
        hb_net_destroy(net);
        return status;
    }
    net->build_s = hb_clock_seconds() - t0;
    *out = net;
    return HB_SUCCESS;
}

hb_status_t hb_net_destroy(hb_net_t *net)
{
    if (!net) return HB_SUCCESS;
    hb_net_exchange_abandon(net); /* before its buffers go */
    hb_net_record_free(net);
    hb_sim_destroy(net->sim);
    free(net->cable_gid);
    free(net->models);
    free(net->detector);
    free(net->seen);
    free(net->ps_target);
    free(net->ps_cell);
    free(net->sources);
    free(net->conns);
    free(net->conn_weights);
    free(net->pending);
    free(net->due);
    free(net->merged);
    free(net->local);
    free(net->spikes);
    free(net->counts);
    free(net->displs);
    free(net->count_in);
    free(net->ones);
    free(net->iota);
    free(net->sending);
    free(net->trace);
    free(net->incoming);
    if (net->owned_free) net->owned_free(net->owned);
    free(net);
    return HB_SUCCESS;
}

int hb_net_local_cells(const hb_net_t *net) { return net ? net->n_cable + net->n_sources : 0; }
double hb_net_min_delay(const hb_net_t *net) { return net ? net->min_delay : NAN; }
int hb_net_epoch_steps(const hb_net_t *net) { return net ? net->epoch_steps : 0; }

hb_status_t hb_net_backend(const hb_net_t *net, hb_backend_t *backend, const char **reason)
{
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_backend: net is NULL");
    if (backend) *backend = net->opt.backend; /* "best" resolved at hb_net_create */
    if (reason) *reason = net->best_chosen ? net->best_reason : "";
    return HB_SUCCESS;
}

int hb_net_set_overlap(hb_net_t *net, int overlap)
{
    if (!net || net->in_flight) return net ? net->overlap : 0;
    const int known = overlap == HB_NET_IALLGATHERV || overlap == HB_NET_TASKS;
    net->overlap = known && net->epoch_overlap >= 1 ? overlap : HB_NET_BLOCKING;
    net->epoch_steps = net->overlap ? net->epoch_overlap : net->epoch_blocking;
    return net->overlap;
}

int hb_net_set_keep_spikes(hb_net_t *net, int keep)
{
    if (!net) return 0;
    if (!net->in_flight) net->keep_spikes = keep != 0;
    return net->keep_spikes;
}

hb_status_t hb_net_spikes(const hb_net_t *net, const hb_spike_t **spikes, size_t *count)
{
    hb_clear_error();
    if (!net || !spikes || !count) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_spikes: NULL argument");
    *spikes = net->spikes;
    *count = net->n_spikes;
    return HB_SUCCESS;
}
