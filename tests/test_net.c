/*
 * Networks (src/net/): a ring of ball-and-stick cells kicked by a spike source, against a lone
 * cell given the same event by hand; a random network of Exp2Syn cells driven by Poisson
 * sources, whose spikes must be bitwise the same on any rank count and thread count; every
 * malformed connection refused by name. ctest runs it on 1 rank and, with MPI, on 3 and 4
 * (test_net_mpi3, test_net_mpi4): each rank then also runs the whole network alone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_engine.h"
#include "sim/sim.h"
#include "sim_common.h"

#define RING 8
#define RING_DELAY 5.0
#define RING_WEIGHT 0.02

/* Ball and stick: soma hh (L = diam = 12.6157), dendrite pas (200 x 1 um, nseg 5); an ExpSyn
 * (tau 2, e 0) or Exp2Syn (0.5, 3) at the soma; detector soma(0.5) at -10 mV. */
typedef struct {
    hb_morph_t *morph;
    hb_model_t *model;
} cell_t;

static int cell_make(cell_t *c, hb_syn_kind_t kind)
{
    const hb_section_spec_t secs[2] = {{"soma", -1, 0.0, 12.6157, 12.6157, 1},
                                       {"dend", 0, 1.0, 200.0, 1.0, 3}};
    int map[2];
    c->model = sections_model(secs, 2, 5, 100.0, 1.0, &c->morph, map);
    if (!c->model) return 0;
    hb_mech_t hh, pas;
    hb_mech_default(HB_MECH_HH, &hh);
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.e_pas = -65.0;
    CHECK_OK(hb_model_insert(c->model, 1, &hh));
    CHECK_OK(hb_model_insert(c->model, 3, &pas));
    hb_synapse_t syn;
    hb_synapse_default(kind, &syn);
    syn.tau_ms = 2.0;
    syn.tau1_ms = 0.5;
    syn.tau2_ms = 3.0;
    const hb_location_t soma = at_section(map[0], 0.5);
    CHECK_OK(hb_model_add_synapse(c->model, &soma, &syn, NULL));
    add_probe(c->model, soma, "soma", 1, -10.0);
    return 1;
}

static void cell_free(cell_t *c)
{
    hb_model_destroy(c->model);
    hb_morph_destroy(c->morph);
}

/* ---- the ring: gids 0..RING-1 cells, gid RING a source firing once at 1 ms into cell 0 */

typedef struct {
    hb_model_t *model;
    int bad; /* 0: none; 1 unknown source; 2 synapse; 3 NaN weight; 4 delay < dt */
    int no_source; /* the kick comes as an event instead (no gid RING) */
} ring_t;

static hb_cell_kind_t ring_kind(void *user, uint32_t gid)
{
    (void)user;
    return gid < RING ? HB_CELL_CABLE : HB_CELL_SOURCE;
}

static hb_model_t *ring_cable(void *user, uint32_t gid)
{
    (void)gid;
    return ((ring_t *)user)->model;
}

static hb_status_t ring_source(void *user, uint32_t gid, hb_spike_source_t *s)
{
    (void)user;
    (void)gid;
    *s = (hb_spike_source_t){1.0, 10.0, 1, 0.0, 0};
    return HB_SUCCESS;
}

static hb_status_t ring_connections(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    const ring_t *r = user;
    const int n = gid == 0 && !r->no_source ? 2 : 1;
    if (!out) {
        *count = n;
        return HB_SUCCESS;
    }
    out[0] = (hb_connection_t){gid == 0 ? RING - 1 : gid - 1, 0, RING_WEIGHT, RING_DELAY};
    if (n == 2) out[1] = (hb_connection_t){RING, 0, RING_WEIGHT, RING_DELAY};
    if (gid == 3) {
        if (r->bad == 1) out[0].source = 1000;
        if (r->bad == 2) out[0].synapse = 1;
        if (r->bad == 3) out[0].weight_us = NAN;
        if (r->bad == 4) out[0].delay_ms = 0.01;
    }
    return HB_SUCCESS;
}

/* An event generator: gid 0 gets `n` events (synapse `synapse`) at 1 ms. */
static int event_synapse = 0;
static hb_status_t ring_events(void *user, uint32_t gid, hb_event_t *out, int *count)
{
    (void)user;
    const int n = gid == 0 ? 1 : 0;
    if (out && *count >= n && n) out[0] = (hb_event_t){event_synapse, 1.0 + RING_DELAY, RING_WEIGHT};
    *count = n;
    return HB_SUCCESS;
}

static hb_recipe_t ring_recipe(ring_t *r)
{
    return (hb_recipe_t){RING + 1,         r,    ring_kind, ring_cable, ring_source,
                         ring_connections, NULL};
}

static hb_sim_options_t net_options(double t_stop, hb_backend_t backend, int threads)
{
    hb_sim_options_t o = sim_options(0.025, t_stop, 0.0);
    o.backend = backend;
    o.threads = threads;
    return o;
}

static void test_ring(hb_comm_t *comm)
{
    cell_t cell;
    if (!cell_make(&cell, HB_SYN_EXP)) return;
    ring_t r = {cell.model, 0, 0};
    const hb_recipe_t recipe = ring_recipe(&r);
    const hb_sim_options_t opt = net_options(100.0, HB_BACKEND_SEQ, 0);
    hb_net_t *net = NULL;
    CHECK_OK(hb_net_create(&recipe, comm, &opt, &net));
    if (!net) goto out;
    CHECKF(hb_net_min_delay(net) == RING_DELAY && hb_net_epoch_steps(net) == 200,
           "min delay %g, epoch %d steps (blocking, the default: the delay)", hb_net_min_delay(net),
           hb_net_epoch_steps(net));
    CHECK_OK(hb_net_run(net));
    const hb_spike_t *sp;
    size_t n;
    CHECK_OK(hb_net_spikes(net, &sp, &n));
    /* the source at 1 ms, then the cells in ring order, lap after lap */
    CHECKF(n > 2 * RING, "ring: %zu spikes", n);
    CHECK(n > 0 && sp[0].gid == RING && sp[0].time_ms == 1.0);
    int order_ok = 1, times_ok = 1;
    for (size_t k = 1; k < n; k++) {
        order_ok &= sp[k].gid == (uint32_t)((k - 1) % RING);
        times_ok &= sp[k].time_ms > sp[k - 1].time_ms + RING_DELAY;
    }
    CHECK(order_ok && times_ok);
    /* cell 0 alone, given the kick by hand at its step, spikes at the ring's time */
    hb_sim_t *sim = NULL;
    hb_sim_options_t one = opt;
    one.t_stop_ms = 20.0;
    CHECK_OK(hb_sim_create(&cell.model, 1, &one, &sim));
    if (sim && n > 1) {
        CHECK_OK(hb_sim_init(sim));
        const long at = (long)ceil((1.0 + RING_DELAY) / 0.025 - 0.5);
        CHECK_OK(hb_sim_advance(sim, at));
        CHECK_OK(hb_sim_deliver(sim, 0, 0, RING_WEIGHT));
        CHECK_OK(hb_sim_advance(sim, 800 - at));
        const double *t;
        int count;
        CHECK_OK(hb_sim_spikes(sim, 0, &t, &count));
        CHECKF(count == 1 && t[0] == sp[1].time_ms, "lone cell: %d spikes, first %g; ring %g",
               count, count ? t[0] : -1.0, sp[1].time_ms);
        if (hb_comm_rank(comm) == 0)
            printf("ring of %d: %zu spikes in 100 ms, lap %.3f ms\n", RING, n,
                   sp[1 + RING].time_ms - sp[1].time_ms);
    }
    /* the same kick queued ahead (hb_sim_queue_events, as the network hands over an epoch's
     * events): the same spike; events out of order or past are refused */
    if (sim && n > 1) {
        CHECK_OK(hb_sim_init(sim));
        const long at = (long)ceil((1.0 + RING_DELAY) / 0.025 - 0.5);
        const hb_sim_event_t kick[2] = {{at, 0, 0, -1, 1.0 + RING_DELAY, RING_WEIGHT},
                                        {at - 1, 0, 0, -1, 1.0, RING_WEIGHT}};
        CHECK(hb_sim_queue_events(sim, 2, kick) == HB_ERR_INVALID_VALUE &&
              strstr(hb_last_error(), "ordered by step"));
        CHECK_OK(hb_sim_queue_events(sim, 1, kick));
        CHECK_OK(hb_sim_advance(sim, 800));
        const double *t;
        int count;
        CHECK_OK(hb_sim_spikes(sim, 0, &t, &count));
        CHECKF(count == 1 && t[0] == sp[1].time_ms, "queued kick: %d spikes, first %g; ring %g",
               count, count ? t[0] : -1.0, sp[1].time_ms);
        CHECK(hb_sim_queue_events(sim, 1, kick) == HB_ERR_INVALID_VALUE); /* step past */
        CHECK(hb_sim_makes_events(sim) == 0 &&
              hb_sim_add_spikes(sim, 0, NULL) == HB_ERR_NOT_SUPPORTED);
    }
    hb_sim_destroy(sim);
    /* malformed connections: each names itself; every rank fails */
    static const char *const what[] = {"", "source gid 1000 does not exist",
                                       "synapse 1 does not exist", "weight nan",
                                       "delay 0.01 ms"};
    for (int bad = 1; bad <= 4; bad++) {
        r.bad = bad;
        hb_net_t *broken = NULL;
        const hb_status_t st = hb_net_create(&recipe, comm, &opt, &broken);
        CHECK(st == HB_ERR_INVALID_VALUE && broken == NULL);
        const int owner = hb_comm_size(comm) == 1 || strstr(hb_last_error(), "gid 3") != NULL;
        CHECKF(!owner || strstr(hb_last_error(), what[bad]), "bad %d: %s", bad, hb_last_error());
    }
    r.bad = 0;
    /* the kick as an event (no source): the same spikes of the cells */
    hb_recipe_t kicked = recipe;
    kicked.n_cells = RING; /* no source gid */
    kicked.events_on = ring_events;
    r.no_source = 1;
    hb_net_t *ev = NULL;
    CHECK_OK(hb_net_create(&kicked, comm, &opt, &ev));
    if (ev && hb_net_run(ev) == HB_SUCCESS && net) {
        const hb_spike_t *a, *b;
        size_t na, nb;
        hb_net_spikes(net, &a, &na);
        hb_net_spikes(ev, &b, &nb);
        CHECKF(nb + 1 == na && na > 0 && memcmp(a + 1, b, nb * sizeof *b) == 0,
               "kick as an event: %zu spikes, as a source %zu (less its own)", nb, na);
    }
    event_synapse = 3; /* no such synapse: refused at init, on every rank */
    CHECK(ev && hb_net_init(ev) == HB_ERR_INVALID_VALUE);
    const int owner = hb_comm_rank(comm) == 0;
    CHECKF(!owner || strstr(hb_last_error(), "event 0 of gid 0: synapse 3"), "%s", hb_last_error());
    event_synapse = 0;
    r.no_source = 0;
    hb_net_destroy(ev);
    hb_recipe_t empty = recipe;
    empty.n_cells = 0;
    hb_net_t *none = NULL;
    CHECK(hb_net_create(&empty, comm, &opt, &none) == HB_ERR_INVALID_VALUE && !none);
out:
    hb_net_destroy(net);
    cell_free(&cell);
}

/* ---- a random network: N cells, each with IN_DEGREE inputs drawn from all gids; the last
 * SOURCES gids Poisson sources (noise 1, 20 Hz) */

#define N_CELLS 48
#define SOURCES 8
#define IN_DEGREE 6

typedef struct {
    hb_model_t *model;
} random_t;

static hb_cell_kind_t random_kind(void *user, uint32_t gid)
{
    (void)user;
    return gid < N_CELLS ? HB_CELL_CABLE : HB_CELL_SOURCE;
}

static hb_model_t *random_cable(void *user, uint32_t gid)
{
    (void)gid;
    return ((random_t *)user)->model;
}

static hb_status_t random_source(void *user, uint32_t gid, hb_spike_source_t *s)
{
    (void)user;
    (void)gid;
    *s = (hb_spike_source_t){2.0, 50.0, 1000, 1.0, 12345};
    return HB_SUCCESS;
}

/* A small integer hash: the test's own fixed connectivity. */
static uint32_t mix(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

static hb_status_t random_connections(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    (void)user;
    if (!out) {
        *count = IN_DEGREE;
        return HB_SUCCESS;
    }
    for (int k = 0; k < IN_DEGREE; k++) {
        const uint32_t h = mix(gid * 977u + (uint32_t)k * 131u + 7u);
        uint32_t src = h % (N_CELLS + SOURCES - 1);
        if (src >= gid) src++; /* no self-connection */
        const double w = src >= N_CELLS ? 0.004 : 0.0015 + 0.001 * (double)(h % 7);
        const double delay = 1.0 + 0.025 * (double)(h % 120);
        out[k] = (hb_connection_t){src, 0, w, delay};
    }
    return HB_SUCCESS;
}

/* The network's spikes on `comm` with `backend`, copied (caller frees); NULL on failure. */
static hb_spike_t *random_run(hb_comm_t *comm, hb_backend_t backend, int threads, int overlap,
                              size_t *n)
{
    cell_t cell;
    *n = 0;
    if (!cell_make(&cell, HB_SYN_EXP2)) return NULL;
    random_t r = {cell.model};
    const hb_recipe_t recipe = {N_CELLS + SOURCES, &r, random_kind, random_cable, random_source,
                                random_connections, NULL};
    const hb_sim_options_t opt = net_options(200.0, backend, threads);
    hb_net_t *net = NULL;
    hb_spike_t *copy = NULL;
    CHECK_OK(hb_net_create(&recipe, comm, &opt, &net));
    if (net) {
        CHECK(hb_net_set_overlap(net, overlap) == overlap);
        const int whole = (int)floor(hb_net_min_delay(net) / 0.025 + 1e-9);
        CHECKF(hb_net_min_delay(net) >= 1.0 &&
                   hb_net_epoch_steps(net) == (overlap ? whole / 2 : whole),
               "overlap %d: epoch %d steps, smallest delay %g ms", overlap,
               hb_net_epoch_steps(net), hb_net_min_delay(net));
    }
    if (net && hb_net_run(net) == HB_SUCCESS) {
        const hb_spike_t *sp;
        CHECK_OK(hb_net_spikes(net, &sp, n));
        copy = check_malloc((*n + 1) * sizeof *copy);
        memcpy(copy, sp, *n * sizeof *copy);
    } else if (net) {
        CHECKF(0, "random network: %s", hb_last_error());
    }
    hb_net_destroy(net);
    cell_free(&cell);
    return copy;
}

static void test_random(hb_comm_t *comm, hb_comm_t *alone)
{
    size_t n = 0, n_ref = 0;
    hb_spike_t *spikes = random_run(comm, HB_BACKEND_SEQ, 0, HB_NET_IALLGATHERV, &n);
    hb_spike_t *ref = random_run(alone, HB_BACKEND_SEQ, 0, HB_NET_BLOCKING, &n_ref);
    size_t n_seq_tasks = 0; /* tasks mode on one thread: exchange, then steps */
    hb_spike_t *seq_tasks = random_run(comm, HB_BACKEND_SEQ, 0, HB_NET_TASKS, &n_seq_tasks);
    CHECKF(seq_tasks && ref && n_seq_tasks == n_ref &&
               memcmp(seq_tasks, ref, n_ref * sizeof *ref) == 0,
           "tasks mode on one thread differs from the blocking exchange");
    free(seq_tasks);
    if (!spikes || !ref) goto out;
    size_t cells = 0;
    for (size_t k = 0; k < n; k++) cells += spikes[k].gid < N_CELLS;
    CHECKF(cells > 20 && n - cells > 20, "random network: %zu cell spikes, %zu source spikes",
           cells, n - cells);
    CHECKF(n == n_ref && memcmp(spikes, ref, n * sizeof *spikes) == 0,
           "%d ranks: %zu spikes, alone %zu: not bitwise the same", hb_comm_size(comm), n, n_ref);
    int ordered = 1;
    for (size_t k = 1; k < n; k++)
        ordered &= spikes[k - 1].time_ms < spikes[k].time_ms ||
                   (spikes[k - 1].time_ms == spikes[k].time_ms && spikes[k - 1].gid < spikes[k].gid);
    CHECK(ordered);
    if (hb_backend_available(HB_BACKEND_OMP)) {
        size_t n_omp = 0;
        hb_spike_t *omp = random_run(comm, HB_BACKEND_OMP, 2, 1, &n_omp);
        CHECKF(omp && n_omp == n && memcmp(omp, spikes, n * sizeof *omp) == 0,
               "OMP (2 threads) differs from one thread");
        free(omp);
        /* the paper's OpenMP tasks: the exchange on the master, the steps in tasks */
        size_t n_tasks = 0;
        hb_spike_t *tasks = random_run(comm, HB_BACKEND_OMP, 2, HB_NET_TASKS, &n_tasks);
        CHECKF(tasks && n_tasks == n && memcmp(tasks, spikes, n * sizeof *tasks) == 0,
               "OpenMP tasks (2 threads) differ from one thread");
        free(tasks);
    }
    if (hb_comm_rank(comm) == 0)
        printf("random network of %d cells and %d sources on %d ranks (overlapped exchange): "
               "%zu spikes (%zu of cells), bitwise those of one rank (blocking)\n", N_CELLS,
               SOURCES, hb_comm_size(comm), n, cells);
out:
    free(spikes);
    free(ref);
}

/* The ranks' shares (hb_net_create_with): a recipe whose cells come first (a network file's
 * promise, hb_net_builder_t.cells_first) gives rank r of R the r-th contiguous block of the
 * cells and the r-th of the spike sources (blocks of all gids left the L5PC network's cells
 * all on half of the ranks); any other recipe the r-th block of all gids, each rank asking
 * about its own gids alone. */
enum { SHARE_CELLS = 7, SHARE_SOURCES = 5, SHARE_GIDS = SHARE_CELLS + SHARE_SOURCES };
static int share_asked[SHARE_GIDS];
static hb_cell_kind_t share_kind(void *user, uint32_t gid)
{
    (void)user;
    if (gid < SHARE_GIDS) share_asked[gid] = 1;
    return gid < SHARE_CELLS ? HB_CELL_CABLE : HB_CELL_SOURCE;
}

static hb_status_t share_connections(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    (void)user;
    (void)gid;
    (void)out;
    *count = 0;
    return HB_SUCCESS;
}

/* [first, end) of block `rank` of n items in `size` blocks, the first n % size one more. */
static void share_block(int n, int rank, int size, int *first, int *end)
{
    *first = rank * (n / size) + (rank < n % size ? rank : n % size);
    *end = *first + n / size + (rank < n % size);
}

static void test_shares(hb_comm_t *comm)
{
    cell_t cell;
    if (!cell_make(&cell, HB_SYN_EXP)) return;
    random_t r = {cell.model};
    const int size = hb_comm_size(comm), rank = hb_comm_rank(comm);
    const hb_recipe_t recipe = {SHARE_GIDS, &r, share_kind, random_cable, random_source,
                                share_connections, NULL};
    const hb_sim_options_t opt = net_options(1.0, HB_BACKEND_SEQ, 0);
    for (int promise = 0; promise < 2; promise++) {
        const hb_net_builder_t builder = {NULL, 0, promise, SHARE_CELLS};
        memset(share_asked, 0, sizeof share_asked);
        hb_net_t *net = NULL;
        CHECK_OK(hb_net_create_with(&recipe, &builder, comm, &opt, &net));
        if (!net) continue;
        int c0, c1, s0, s1, g0, g1;
        share_block(SHARE_CELLS, rank, size, &c0, &c1);
        share_block(SHARE_SOURCES, rank, size, &s0, &s1);
        share_block(SHARE_GIDS, rank, size, &g0, &g1);
        int right = 1; /* owns, and asked about, its share's gids and no other */
        for (int gid = 0; gid < SHARE_GIDS; gid++) {
            const int mine = promise ? (gid < SHARE_CELLS ? gid >= c0 && gid < c1
                                                          : gid - SHARE_CELLS >= s0 &&
                                                                gid - SHARE_CELLS < s1)
                                     : gid >= g0 && gid < g1;
            right &= hb_net_owns(net, (uint32_t)gid) == mine && share_asked[gid] == mine;
        }
        const int g0c = g0 < SHARE_CELLS ? g0 : SHARE_CELLS, g1c = g1 < SHARE_CELLS ? g1 : SHARE_CELLS;
        const int cells = promise ? c1 - c0 : g1c - g0c; /* a block of gids: its cells */
        CHECKF(right && net->n_cable == cells &&
                   hb_net_local_cells(net) == net->n_cable + net->n_sources,
               "rank %d of %d (%s): %d cells and %d sources, expected %d cells; owns or asked "
               "about gids outside its share: %d", rank, size,
               promise ? "cells first" : "blocks of gids", net->n_cable, net->n_sources, cells,
               !right);
        hb_net_destroy(net);
    }
    cell_free(&cell);
}

/* "best" (net_best.c): a candidate chosen with its reason, the spikes those of seq; a named
 * backend has no reason. */
static void test_best(hb_comm_t *comm)
{
    cell_t cell;
    if (!cell_make(&cell, HB_SYN_EXP)) return;
    ring_t r = {cell.model, 0, 0};
    const hb_recipe_t recipe = ring_recipe(&r);
    hb_net_t *net[2] = {NULL, NULL};
    const hb_backend_t asked[2] = {HB_BACKEND_SEQ, HB_BACKEND_BEST};
    const hb_spike_t *sp[2] = {NULL, NULL};
    size_t n[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        const hb_sim_options_t opt = net_options(100.0, asked[k], 0);
        CHECK_OK(hb_net_create(&recipe, comm, &opt, &net[k]));
        if (!net[k]) continue;
        hb_backend_t b = HB_BACKEND_BEST;
        const char *reason = NULL;
        CHECK_OK(hb_net_backend(net[k], &b, &reason));
        if (k == 0) {
            CHECKF(b == HB_BACKEND_SEQ && reason && !reason[0], "named seq: %s, reason '%s'",
                   hb_backend_name(b), reason ? reason : "(null)");
        } else {
            CHECKF(b == HB_BACKEND_SEQ || b == HB_BACKEND_OMP || b == HB_BACKEND_CUDA,
                   "best chose %d", (int)b);
            CHECKF(b == HB_BACKEND_CUDA || hb_backend_available(b), "best chose %s, unavailable",
                   hb_backend_name(b));
            const size_t len = strlen(hb_backend_name(b));
            CHECKF(reason && strncmp(reason, hb_backend_name(b), len) == 0 &&
                       reason[len] == ',' && strstr(reason, "seq (1 thread) "),
                   "best's reason: %s", reason ? reason : "(null)");
        }
        CHECK_OK(hb_net_run(net[k]));
        CHECK_OK(hb_net_spikes(net[k], &sp[k], &n[k]));
    }
    int same = n[0] == n[1] && n[0] > 0;
    for (size_t i = 0; i < n[0] && same; i++)
        same = sp[0][i].gid == sp[1][i].gid &&
               memcmp(&sp[0][i].time_ms, &sp[1][i].time_ms, sizeof(double)) == 0;
    CHECKF(same, "best's spikes (%zu) differ from seq's (%zu)", n[1], n[0]);
    CHECK(hb_net_backend(NULL, NULL, NULL) == HB_ERR_INVALID_VALUE);
    hb_net_destroy(net[0]);
    hb_net_destroy(net[1]);
    cell_free(&cell);
}

int main(void)
{
    hb_comm_t *comm = NULL, *alone = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_BEST, &comm));
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &alone));
    if (!comm || !alone) return check_summary("test_net");
    test_ring(comm);
    test_shares(comm);
    test_random(comm, alone);
    test_best(comm);
    const int rank = hb_comm_rank(comm);
    hb_comm_destroy(alone);
    hb_comm_destroy(comm);
    if (rank != 0) return check_failed ? 1 : 0;
    return check_summary("test_net");
}
