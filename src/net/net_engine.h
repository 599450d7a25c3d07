/*
 * The network engine (src/net/): this rank's cells in one simulation (src/sim/), the
 * connections that end on them sorted by source, events waiting for their step, and the
 * spikes of the network. net.c builds it from a recipe; net_run.c runs the epochs.
 */
#ifndef HB_NET_NET_ENGINE_H
#define HB_NET_NET_ENGINE_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "backend/comm_ops.h"
#include "common/grow.h"
#include "hinesbatch.h"
#include "sim/sim.h"

/* A connection as this rank keeps it: ends on local cable cell `cell`. */
typedef hb_sim_connection_t hb_net_conn_t;

/* An event waiting for the step that delivers it. */
typedef struct {
    long step; /* delivered at the start of this step */
    int cell, synapse;
    int weights;   /* the connection's weight vector (a point process's: hb_sim_add_weights); -1 */
    double time;   /* [ms] spike time + delay */
    double weight; /* [uS] */
} hb_net_event_t;

/*
 * What a recipe of the library's own (a network file, net_json.c) tells hb_net_create_with
 * beyond hb_recipe_t. release: each `cable` call builds a fresh model, which the network
 * hands back here after use, keeping none (the simulation asks for a cell again only for a
 * fault's message or a checkpoint's fingerprint); NULL: the recipe's models outlive the
 * network, which keeps pointers to them. thread_safe: cable, connections_on and release may
 * run for different gids on several threads at once (the build's threads: the options'
 * `threads`, else OpenMP's default). cells_first: gids 0 .. n_cable - 1 are the cable cells
 * and the others spike sources, so a rank's share is a block of the cells and a block of the
 * sources (0: no such promise; a share is a block of all gids, whose kinds only the recipe
 * knows).
 */
typedef struct {
    void (*release)(void *user, uint32_t gid, hb_model_t *model);
    int thread_safe;
    int cells_first;
    uint32_t n_cable; /* with cells_first */
} hb_net_builder_t;

/* hb_net_create with a builder's promises (NULL: none, hb_net_create's). */
hb_status_t hb_net_create_with(const hb_recipe_t *recipe, const hb_net_builder_t *builder,
                               hb_comm_t *comm, const hb_sim_options_t *options, hb_net_t **out);

/* A spike source of this rank (NetStim) and where its stream stands. */
typedef struct {
    uint32_t gid;
    hb_spike_source_t p;
    long emitted;   /* spikes so far */
    double next_ms; /* the next spike's time */
} hb_net_source_t;

struct hb_net {
    hb_recipe_t recipe;
    hb_comm_t *comm;
    hb_sim_options_t opt;
    /* This rank's gids (hb_net_create's shares): [first[0], end[0]) and [first[1], end[1]) */
    uint32_t first[2], end[2];
    int local_rank;      /* among the ranks of this host: its GPU */
    hb_net_builder_t builder;
    int build_threads;   /* threads that build this rank's part (1 unless thread_safe) */
    int n_cable;
    uint32_t *cable_gid; /* per local cable cell */
    hb_model_t **models; /* per local cable cell, the recipe's; NULL with builder.release */
    int *detector;       /* per local cable cell: the simulation's probe, or -1 */
    int *seen;           /* per local cable cell: its detector's spikes already taken */
    int n_point_sources; /* local cells whose spikes are a point process's net_events */
    int *ps_target;      /* theirs, in cell order (so ascending): the simulation's target */
    int *ps_cell;        /* and the cell */
    int n_sources;
    hb_net_source_t *sources;
    double sources_next_ms;  /* the earliest next spike of any source [ms] (-inf: not known) */
    hb_sim_t *sim;       /* NULL when this rank has no cable cell */
    size_t n_conns, cap_conns;
    hb_net_conn_t *conns; /* sorted by (source, cell, synapse, weight, delay) */
    int *conn_weights;    /* per connection: its weight vector, -1 (NULL: no point process) */
    size_t n_pending, cap_pending;
    hb_net_event_t *pending;  /* sorted (compare_event) up to n_sorted, new events after */
    size_t n_sorted, cap_merged;
    hb_net_event_t *merged;   /* the merge's room */
    size_t cap_due;
    hb_sim_event_t *due;  /* an epoch's events as the simulation takes them */
    int engine_conns;     /* the connections are the engine's (hb_sim_makes_events) */
    size_t n_local, cap_local; /* this epoch's spikes of this rank */
    hb_spike_t *local;
    size_t n_spikes, cap_spikes; /* the spikes held, ordered by (time, gid): every spike, or
                                  * (keep_spikes 0) the last advance's */
    hb_spike_t *spikes;
    int keep_spikes;             /* hb_net_set_keep_spikes: 1 (the default) every spike */
    size_t n_forgotten;          /* spikes no longer held (keep_spikes 0), for the count */
    int *counts, *displs;        /* per rank, for the exchange */
    /* The exchange in flight (overlap): this rank's spikes sent (the epoch's buffer, swapped
     * with `local`, which the next epoch fills meanwhile), all ranks' received. */
    hb_spike_t *sending, *incoming;
    size_t cap_sending, cap_incoming, n_incoming;
    void *request;               /* the spikes' all-gather */
    void *count_request;         /* the counts' all-gather */
    int stage;                   /* exchange_stage_t */
    int my_count;                /* this rank's count sent (-1: it failed) */
    int *count_in, *ones, *iota; /* per rank: counts received; 1s and 0..size-1 to gather them */
    int exchange_failed;         /* a rank sent -1 */
    int in_flight;
    int overlap;                 /* hb_net_overlap_t: exchange of epoch k during epoch k + 1 */
    size_t n_sending;            /* HB_NET_TASKS: the spikes of `sending` still to exchange */
    int epoch_blocking, epoch_overlap; /* epoch steps: min delay, its half (0: too short) */
    void *owned;                 /* what the recipe reads (a loaded file), freed with the net */
    void (*owned_free)(void *);
    hb_net_stats_t stats;        /* this run's, on this rank */
    hb_trace_event_t *trace;     /* the timeline (hb_net_set_trace): room for max_trace */
    size_t n_trace, max_trace;
    double t_origin;             /* hb_net_init's start [s], the timeline's zero */
    double build_s;              /* hb_net_create's time [s] */
    int initialised;
    double min_delay;            /* [ms] */
    int epoch_steps;
    long total_steps, step;
    struct hb_net_recording *rec; /* hb_net_record's columns (net_record.c); NULL: none */
    int best_chosen;             /* the backend was "best", chosen by hb_net_choose_backend */
    double best_trial_s;         /* its trials' time [s] */
    char best_reason[640];       /* what it chose and why */
};

/* "backend": "best": one core, all cores or the GPU by a timed trial on a sample of the
 * rank's cells (net_best.c); sets net->opt.backend (and threads) and best_reason. Every rank
 * calls it (all-reduces). */
hb_status_t hb_net_choose_backend(hb_net_t *net);

/* Where the exchange in flight stands (net_run.c). */
typedef enum { EXCHANGE_NONE, EXCHANGE_COUNTS, EXCHANGE_SPIKES, EXCHANGE_DONE } exchange_stage_t;

/* Room for `more` items after `count` in a growing array (common/grow.h); 0 when out of
 * memory, the array unchanged. */
static inline int hb_net_reserve(void **items, size_t count, size_t *capacity, size_t more,
                                 size_t size)
{
    return hb_grow(items, capacity, count + more, size);
}

/* Whether gid is one of this rank's cable cells or spike sources (inline: net_record.c asks
 * it, and net.c calls net_record.c). */
static inline int hb_net_owns(const hb_net_t *net, uint32_t gid)
{
    return net && ((gid >= net->first[0] && gid < net->end[0]) ||
                   (gid >= net->first[1] && gid < net->end[1]));
}

/* The local index of cable cell gid, or -1 where it is not this rank's (cable_gid ascending:
 * a binary search). */
static inline int hb_net_local_cable(const hb_net_t *net, uint32_t gid)
{
    int lo = 0, hi = net->n_cable;
    while (lo < hi) {
        const int mid = lo + (hi - lo) / 2;
        if (net->cable_gid[mid] < gid) lo = mid + 1;
        else hi = mid;
    }
    return lo < net->n_cable && net->cable_gid[lo] == gid ? lo : -1;
}

/* net_run.c: the spikes of a source up to t_end [ms] into the local buffer. */
hb_status_t hb_net_source_spikes(hb_net_t *net, hb_net_source_t *src, double t_end);
/* A failed run's exchange in flight, waited for (no collective left behind). */
void hb_net_exchange_abandon(hb_net_t *net);
/* The source's first spike time (NetStim's INITIAL). */
void hb_net_source_reset(hb_net_source_t *src);
/* net_record.c: the recording's columns and buffers freed (hb_net_destroy). */
void hb_net_record_free(hb_net_t *net);

/* How many of net->spikes are final: those no later spike can precede or tie in (time, gid)
 * order, times up to step dt - dt/2 (all of them once the run is over); hb_net_advance lets
 * only those go (hb_net_set_keep_spikes 0). */
size_t hb_net_final_spikes(const hb_net_t *net);

#endif
