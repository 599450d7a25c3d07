/*
 * Network files (docs/network.md): a model file (sim/model_json.c: options and "cells", the
 * gids in order) with a "network" object: spike sources (gids after the cells), explicit
 * connections, and builders whose connections are computed gid by gid (ring; random with a
 * fixed in-degree drawn from Philox streams keyed by the seed and the target's gid), so that a
 * rank asks only for what ends on its cells.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/philox.h"
#include "net/net_busyring.h"
#include "net/net_engine.h"
#include "net/net_json_record.h"
#include "sim/json_util.h"

enum { STREAM_RANDOM_SOURCES = 2, STREAM_RANDOM_DELAYS = 3 };

typedef struct {
    uint32_t target;
    uint32_t order; /* its place in the file: the sort's tie-break, so a target's keep it */
    hb_connection_t c;
} explicit_t;

typedef struct {
    uint32_t target;
    uint32_t order; /* its place in the file (the sort's tie-break) */
    hb_event_t e;
} event_item_t;

typedef struct {
    uint32_t first, count; /* targets (ring: also the sources) */
    uint32_t src_first, src_count; /* random */
    int synapse, in_degree; /* synapse -1: "each", the q-th source to synapse q */
    double weight, delay_min, delay_max; /* [uS], [ms] */
    uint64_t seed;
    int random;
} builder_t;

typedef struct {
    hb_json_loader_t ld; /* owns the models */
    hb_model_t **cable;  /* per cable gid */
    uint32_t n_cable, n_sources;
    hb_spike_source_t *sources; /* per item of "sources" (its copies share it) */
    uint32_t *source_first;     /* per item: its first source (gid - n_cable) */
    size_t n_source_items;
    explicit_t *explicit_conns; /* sorted by target, then file order */
    size_t n_explicit;
    event_item_t *events; /* "events": sorted by target, then file order */
    size_t n_events;
    builder_t *builders;
    int n_builders;
    int exchange;           /* network.exchange: hb_net_overlap_t */
    int busyring;           /* Arbor's busyring benchmark (net_busyring.c) instead of cells */
    hb_busyring_t br;       /* each cell's model built when asked, released after use */
    int ranks;              /* the communicator's size: a rank builds its share of the cells */
    hb_net_json_records_t records; /* "record" (net_json_record.c) */
} json_net_t;

/* Peak memory of a busyring cell [bytes]: its share of the simulation while it is built, per
 * matrix row, and after it (a mixed group's arrays, the row table's copies freed) beside its
 * connections and their sort's copy, per connection. Measured: 14 KiB a cell of Arbor's
 * default cell (depth 5, 1 connection), 104 KiB a cell of depth 10 with 1,001 connections
 * (1,847 rows on average). */
#define HB_BUSYRING_ROW_BYTES 64.0
#define HB_BUSYRING_ROW_BYTES_BUILT 32.0
#define HB_BUSYRING_CONNECTION_BYTES 64.0

/* A file's cells and sources on the ranks (hb_net_create's shares: the cells, gids 0 ..
 * n_cable - 1, in contiguous blocks, the first n % size ranks one more; the sources likewise). */
static uint32_t block_first(uint32_t n, int rank, int size)
{
    const uint32_t base = n / (uint32_t)size, extra = n % (uint32_t)size, r = (uint32_t)rank;
    return r * base + (r < extra ? r : extra);
}

static int rank_of(uint32_t gid, uint32_t n, int size)
{
    const uint32_t base = n / (uint32_t)size, extra = n % (uint32_t)size;
    const uint64_t big = (uint64_t)extra * (base + 1u); /* gids of the ranks with one more */
    return gid < big ? (int)(gid / (base + 1u)) : (int)(extra + (gid - big) / base);
}

static void json_net_free(void *p)
{
    json_net_t *r = p;
    if (!r) return;
    hb_sim_owned_free(&r->ld.owned);
    free(r->cable);
    free(r->sources);
    free(r->source_first);
    free(r->explicit_conns);
    free(r->events);
    free(r->builders);
    hb_net_json_records_free(&r->records);
    free(r);
}

static hb_cell_kind_t jn_kind(void *user, uint32_t gid)
{
    return gid < ((json_net_t *)user)->n_cable ? HB_CELL_CABLE : HB_CELL_SOURCE;
}

static hb_model_t *jn_cable(void *user, uint32_t gid)
{
    json_net_t *r = user;
    if (gid >= r->n_cable) return NULL;
    if (!r->busyring) return r->cable[gid];
    hb_morph_t *morph = NULL;
    hb_model_t *model = NULL;
    if (hb_busyring_cell(&r->br, gid, &morph, &model) != HB_SUCCESS) return NULL;
    /* the model's cable and tables are all a simulation reads; the morphology only placed its
     * synapse and probe */
    hb_morph_destroy(morph);
    model->morph = NULL;
    return model;
}

/* A busyring cell's model, after use (the file's own models live as long as the network). */
static void jn_release(void *user, uint32_t gid, hb_model_t *model)
{
    (void)gid;
    if (((json_net_t *)user)->busyring) hb_model_destroy(model);
}

static hb_status_t jn_source(void *user, uint32_t gid, hb_spike_source_t *s)
{
    json_net_t *r = user;
    const uint32_t k = gid - r->n_cable;
    size_t lo = 0, hi = r->n_source_items; /* the last item whose first is <= k */
    while (hi - lo > 1) {
        const size_t mid = lo + (hi - lo) / 2;
        if (r->source_first[mid] <= k) lo = mid;
        else hi = mid;
    }
    *s = r->sources[lo];
    return HB_SUCCESS;
}

static int compare_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Random builder: in_degree distinct sources of [src_first, src_first + src_count) without
 * the target itself (Floyd's sampling on the target's stream), in ascending gid order. The
 * candidates taken are kept in a hash set of the call's own (O(in_degree) a gid, and any
 * thread may build any gid); out (in_degree) receives them. */
static hb_status_t random_sources(const builder_t *b, uint32_t gid, uint32_t *out)
{
    const int self = gid >= b->src_first && gid - b->src_first < b->src_count;
    const uint32_t n = b->src_count - (uint32_t)self; /* candidates, self left out */
    const uint32_t k = (uint32_t)b->in_degree;
    size_t size = 16;
    while (size < 2 * (size_t)k) size *= 2;
    uint32_t *set = malloc(size * sizeof *set); /* candidate + 1, 0 empty */
    if (!set) return hb_fail(HB_ERR_ALLOC, "network: out of memory for the sources of gid %u", gid);
    memset(set, 0, size * sizeof *set);
    uint32_t m = 0;
    for (uint32_t j = n - k, draw = 0; j < n; j++, draw++) {
        const hb_philox_ctr_t d = hb_philox_draw(b->seed, gid, STREAM_RANDOM_SOURCES, draw);
        uint32_t t = (uint32_t)hb_philox_below(d.v[0], d.v[1], (uint64_t)j + 1);
        for (int pass = 0; pass < 2; pass++) { /* t, or j when t is taken (j never is) */
            size_t h = ((uint64_t)t * 0x9e3779b97f4a7c15u >> 20) & (size - 1);
            while (set[h] && set[h] != t + 1) h = (h + 1) & (size - 1);
            if (!set[h]) {
                set[h] = t + 1;
                break;
            }
            t = j;
        }
        out[m++] = t;
    }
    free(set);
    qsort(out, m, sizeof *out, compare_u32);
    for (uint32_t q = 0; q < m; q++) { /* candidates to gids, ascending still */
        uint32_t src = b->src_first + out[q];
        if (self && src >= gid) src++;
        out[q] = src;
    }
    return HB_SUCCESS;
}

/* Busyring's kick (Arbor's event generator): an event at 1 ms on each ring's first cell; or
 * the file's "events" of gid (a SONATA circuit's spike trains, each through its edges). */
static hb_status_t jn_events(void *user, uint32_t gid, hb_event_t *out, int *count)
{
    json_net_t *r = user;
    if (!r->busyring) {
        size_t lo = 0, hi = r->n_events;
        while (lo < hi) {
            const size_t mid = lo + (hi - lo) / 2;
            if (r->events[mid].target < gid) lo = mid + 1;
            else hi = mid;
        }
        size_t end = lo;
        while (end < r->n_events && r->events[end].target == gid) end++;
        if (end - lo > 0x7fffffff)
            return hb_fail(HB_ERR_NOT_SUPPORTED, "network: gid %u has %zu events", gid, end - lo);
        const int n = (int)(end - lo);
        if (out) {
            if (*count < n) return hb_fail(HB_ERR_INVALID_VALUE, "network: room for %d events "
                                           "of gid %u, expected %d", *count, gid, n);
            for (int k = 0; k < n; k++) out[k] = r->events[lo + (size_t)k].e;
        }
        *count = n;
        return HB_SUCCESS;
    }
    const int n = gid % r->br.ring_size == 0;
    if (out && *count >= n && n) out[0] = (hb_event_t){0, 1.0, (double)r->br.event_weight};
    *count = n;
    return HB_SUCCESS;
}

static hb_status_t jn_connections(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    json_net_t *r = user;
    if (r->busyring) { /* Arbor's connections */
        const int n = (int)r->br.synapses;
        if (!out) {
            *count = n;
            return HB_SUCCESS;
        }
        if (*count < n) return hb_fail(HB_ERR_INVALID_VALUE, "network: room for %d connections "
                                       "of gid %u, expected %d", *count, gid, n);
        hb_busyring_connections(&r->br, gid, out);
        *count = n;
        return HB_SUCCESS;
    }
    size_t lo = 0, hi = r->n_explicit; /* the explicit connections of gid */
    while (lo < hi) {
        const size_t mid = lo + (hi - lo) / 2;
        if (r->explicit_conns[mid].target < gid) lo = mid + 1;
        else hi = mid;
    }
    size_t end = lo;
    while (end < r->n_explicit && r->explicit_conns[end].target == gid) end++;
    long n = (long)(end - lo);
    for (int k = 0; k < r->n_builders; k++) {
        const builder_t *b = &r->builders[k];
        if (gid >= b->first && gid - b->first < b->count) n += b->random ? b->in_degree : 1;
    }
    if (n > 0x7fffffffL)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "network: gid %u has %ld connections", gid, n);
    if (!out) {
        *count = (int)n;
        return HB_SUCCESS;
    }
    if (*count < (int)n) return hb_fail(HB_ERR_INVALID_VALUE, "network: room for %d connections "
                                        "of gid %u, expected %ld", *count, gid, n);
    int m = 0;
    for (size_t e = lo; e < end; e++) out[m++] = r->explicit_conns[e].c;
    for (int k = 0; k < r->n_builders; k++) {
        const builder_t *b = &r->builders[k];
        if (!(gid >= b->first && gid - b->first < b->count)) continue;
        if (!b->random) {
            const uint32_t prev = gid == b->first ? b->first + b->count - 1 : gid - 1;
            out[m++] = (hb_connection_t){prev, b->synapse, b->weight, b->delay_min};
            continue;
        }
        uint32_t *picked = malloc(((size_t)b->in_degree + 1) * sizeof *picked);
        const hb_status_t status = picked ? random_sources(b, gid, picked)
                                          : hb_fail(HB_ERR_ALLOC, "network: out of memory for "
                                                    "the sources of gid %u", gid);
        if (status != HB_SUCCESS) {
            free(picked);
            return status;
        }
        for (int q = 0; q < b->in_degree; q++) {
            double delay = b->delay_min;
            if (b->delay_max > b->delay_min) {
                const hb_philox_ctr_t d = hb_philox_draw(b->seed, gid, STREAM_RANDOM_DELAYS,
                                                         (uint64_t)q);
                delay += (b->delay_max - b->delay_min) * hb_philox_uniform(d.v[0], d.v[1]);
            }
            out[m++] = (hb_connection_t){picked[q], b->synapse < 0 ? q : b->synapse,
                                         b->weight, delay};
        }
        free(picked);
    }
    *count = m;
    return HB_SUCCESS;
}

/* obj[key] as [first, count] within n gids. */
static hb_status_t gid_range(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                             const char *key, uint32_t n, uint32_t *first, uint32_t *count)
{
    char at[HB_JSON_PATH];
    hb_json_join(at, path, key);
    const json_t *j = json_object_get(obj, key);
    if (!j) return hb_json_fail(ld, at, "missing; expected [first gid, count]");
    const json_t *a = json_array_get(j, 0), *b = json_array_get(j, 1);
    if (!json_is_array(j) || json_array_size(j) != 2 || !json_is_integer(a) ||
        !json_is_integer(b) || json_integer_value(a) < 0 || json_integer_value(b) < 1 ||
        json_integer_value(a) + json_integer_value(b) > (json_int_t)n)
        return hb_json_fail(ld, at, "expected [first gid, count] with count >= 1 within the "
                            "%u gids", n);
    *first = (uint32_t)json_integer_value(a);
    *count = (uint32_t)json_integer_value(b);
    return HB_SUCCESS;
}

/* "delay": a number, or [min, max] drawn uniformly per connection. */
static hb_status_t delays(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                          double *lo, double *hi)
{
    char at[HB_JSON_PATH];
    hb_json_join(at, path, "delay");
    const json_t *j = json_object_get(obj, "delay");
    if (json_is_array(j) && json_array_size(j) == 2 && json_is_number(json_array_get(j, 0)) &&
        json_is_number(json_array_get(j, 1))) {
        *lo = json_number_value(json_array_get(j, 0));
        *hi = json_number_value(json_array_get(j, 1));
        if (!(*lo > 0.0) || !(*hi >= *lo) || !isfinite(*hi))
            return hb_json_fail(ld, at, "expected [min, max] with 0 < min <= max");
        return HB_SUCCESS;
    }
    if (json_is_array(j)) return hb_json_fail(ld, at, "expected a number or [min, max]");
    *lo = 0.0;
    hb_status_t status = hb_json_number(ld, path, obj, "delay", HB_JSON_REQUIRED,
                                        HB_JSON_POSITIVE, lo);
    *hi = *lo;
    return status;
}

static hb_status_t parse_sources(json_net_t *r, const json_t *list, const char *path)
{
    static const char *const keys[] = {"name", "count", "start", "interval", "number", "noise",
                                       "seed", NULL};
    hb_json_loader_t *ld = &r->ld;
    size_t i;
    const json_t *sj;
    hb_status_t status;
    json_array_foreach(list, i, sj) {
        char item[HB_JSON_PATH];
        hb_json_join_index(item, path, i);
        long count = 1, number = 10, seed = 0; /* NetStim's defaults: start 50, interval 10 */
        hb_spike_source_t s = {50.0, 10.0, 10, 0.0, 0};
        if ((status = hb_json_need_object(ld, item, sj)) ||
            (status = hb_json_check_keys(ld, item, sj, keys)) ||
            (status = hb_json_int(ld, item, sj, "count", 1, 100000000L, &count)) ||
            (status = hb_json_number(ld, item, sj, "start", HB_JSON_OPTIONAL,
                                     HB_JSON_NON_NEGATIVE, &s.start_ms)) ||
            (status = hb_json_number(ld, item, sj, "interval", HB_JSON_OPTIONAL,
                                     HB_JSON_POSITIVE, &s.interval_ms)) ||
            (status = hb_json_int(ld, item, sj, "number", 0, 1000000000L, &number)) ||
            (status = hb_json_number(ld, item, sj, "noise", HB_JSON_OPTIONAL,
                                     HB_JSON_NON_NEGATIVE, &s.noise)) ||
            (status = hb_json_int(ld, item, sj, "seed", 0, 0x7fffffffffffffffL, &seed)))
            return status;
        if (s.noise > 1.0) {
            char key[HB_JSON_PATH];
            hb_json_join(key, item, "noise");
            return hb_json_fail(ld, key, "expected 0..1, found %g", s.noise);
        }
        s.number = number;
        s.seed = (uint64_t)seed;
        if ((uint64_t)r->n_sources + (uint64_t)count + r->n_cable > 0xfffffffeu)
            return hb_json_fail(ld, item, "too many gids (at most 2^32 - 1)");
        hb_spike_source_t *p = realloc(r->sources, (r->n_source_items + 1) * sizeof *p);
        if (p) r->sources = p;
        uint32_t *first = p ? realloc(r->source_first, (r->n_source_items + 1) * sizeof *first)
                            : NULL;
        if (!first) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
        r->source_first = first;
        r->sources[r->n_source_items] = s;
        r->source_first[r->n_source_items++] = r->n_sources;
        r->n_sources += (uint32_t)count;
    }
    return HB_SUCCESS;
}

static int compare_explicit(const void *a, const void *b)
{
    const explicit_t *x = a, *y = b;
    if (x->target != y->target) return x->target < y->target ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

static hb_status_t parse_connections(json_net_t *r, const json_t *list, const char *path,
                                     uint32_t n)
{
    static const char *const keys[] = {"source", "target", "synapse", "weight", "delay", NULL};
    hb_json_loader_t *ld = &r->ld;
    if (json_array_size(list) > 0xffffffffu)
        return hb_json_fail(ld, path, "%zu connections; expected at most 2^32 - 1",
                            json_array_size(list));
    r->explicit_conns = calloc(json_array_size(list) + 1, sizeof *r->explicit_conns);
    if (!r->explicit_conns) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    size_t i;
    const json_t *cj;
    hb_status_t status;
    json_array_foreach(list, i, cj) {
        char item[HB_JSON_PATH], key[HB_JSON_PATH];
        hb_json_join_index(item, path, i);
        long source = -1, target = -1, synapse = 0;
        double weight = 0.0, delay = 0.0;
        if ((status = hb_json_need_object(ld, item, cj)) ||
            (status = hb_json_check_keys(ld, item, cj, keys)) ||
            (status = hb_json_int(ld, item, cj, "source", 0, (long)n - 1, &source)) ||
            (status = hb_json_int(ld, item, cj, "target", 0, (long)r->n_cable - 1, &target)) ||
            (status = hb_json_int(ld, item, cj, "synapse", 0, 0x7fffffffL, &synapse)) ||
            (status = hb_json_number(ld, item, cj, "weight", HB_JSON_REQUIRED, HB_JSON_ANY,
                                     &weight)) ||
            (status = hb_json_number(ld, item, cj, "delay", HB_JSON_REQUIRED, HB_JSON_POSITIVE,
                                     &delay)))
            return status;
        if (source < 0 || target < 0) {
            hb_json_join(key, item, source < 0 ? "source" : "target");
            return hb_json_fail(ld, key, "missing; expected a gid (%s)", source < 0
                                ? "any cell or source" : "a cell with synapses");
        }
        r->explicit_conns[r->n_explicit] =
            (explicit_t){(uint32_t)target, (uint32_t)r->n_explicit,
                         {(uint32_t)source, (int)synapse, weight, delay}};
        r->n_explicit++;
    }
    /* by target, a target's connections in the file's order (the order breaks ties: a stable
     * result from qsort, O(n log n)) */
    if (r->n_explicit > 1)
        qsort(r->explicit_conns, r->n_explicit, sizeof *r->explicit_conns, compare_explicit);
    return HB_SUCCESS;
}

static int compare_events(const void *a, const void *b)
{
    const event_item_t *x = a, *y = b;
    if (x->target != y->target) return x->target < y->target ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

/* "events": [{"target", "synapse", "time", "weight"}]: given to a cell's synapse at a time,
 * with no spike behind it (hb_recipe_t.events_on). */
static hb_status_t parse_events(json_net_t *r, const json_t *list, const char *path)
{
    static const char *const keys[] = {"target", "synapse", "time", "weight", NULL};
    hb_json_loader_t *ld = &r->ld;
    if (json_array_size(list) > 0xffffffffu)
        return hb_json_fail(ld, path, "%zu events; expected at most 2^32 - 1",
                            json_array_size(list));
    r->events = calloc(json_array_size(list) + 1, sizeof *r->events);
    if (!r->events) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    size_t i;
    const json_t *ej;
    hb_status_t status;
    json_array_foreach(list, i, ej) {
        char item[HB_JSON_PATH];
        hb_json_join_index(item, path, i);
        long target = -1, synapse = 0;
        double time = -1.0, weight = 0.0;
        if ((status = hb_json_need_object(ld, item, ej)) ||
            (status = hb_json_check_keys(ld, item, ej, keys)) ||
            (status = hb_json_int(ld, item, ej, "target", 0, (long)r->n_cable - 1, &target)) ||
            (status = hb_json_int(ld, item, ej, "synapse", 0, 0x7fffffffL, &synapse)) ||
            (status = hb_json_number(ld, item, ej, "time", HB_JSON_REQUIRED,
                                     HB_JSON_NON_NEGATIVE, &time)) ||
            (status = hb_json_number(ld, item, ej, "weight", HB_JSON_REQUIRED, HB_JSON_ANY,
                                     &weight)))
            return status;
        if (target < 0) {
            char key[HB_JSON_PATH];
            hb_json_join(key, item, "target");
            return hb_json_fail(ld, key, "missing; expected the gid of a cell");
        }
        r->events[r->n_events] = (event_item_t){(uint32_t)target, (uint32_t)r->n_events,
                                                {(int)synapse, time, weight}};
        r->n_events++;
    }
    if (r->n_events > 1) qsort(r->events, r->n_events, sizeof *r->events, compare_events);
    return HB_SUCCESS;
}

static hb_status_t parse_builders(json_net_t *r, const json_t *list, const char *path,
                                  int random, uint32_t n)
{
    static const char *const ring_keys[] = {"first", "count", "synapse", "weight", "delay", NULL};
    static const char *const random_keys[] = {"targets", "sources", "in_degree", "synapse",
                                              "weight", "delay", "seed", NULL};
    hb_json_loader_t *ld = &r->ld;
    size_t i;
    const json_t *bj;
    hb_status_t status;
    json_array_foreach(list, i, bj) {
        char item[HB_JSON_PATH];
        hb_json_join_index(item, path, i);
        builder_t b;
        memset(&b, 0, sizeof b);
        b.random = random;
        long synapse = 0, first = 0, count = 0, in_degree = 0, seed = 0;
        const json_t *each = json_object_get(bj, "synapse");
        const int to_each = random && json_is_string(each) &&
                            strcmp(json_string_value(each), "each") == 0;
        if ((status = hb_json_need_object(ld, item, bj)) ||
            (status = hb_json_check_keys(ld, item, bj, random ? random_keys : ring_keys)) ||
            (!to_each &&
             (status = hb_json_int(ld, item, bj, "synapse", 0, 0x7fffffffL, &synapse))) ||
            (status = hb_json_number(ld, item, bj, "weight", HB_JSON_REQUIRED, HB_JSON_ANY,
                                     &b.weight)) ||
            (status = delays(ld, item, bj, &b.delay_min, &b.delay_max)))
            return status;
        if (random && json_is_string(each) && !to_each) {
            char key[HB_JSON_PATH];
            hb_json_join(key, item, "synapse");
            return hb_json_fail(ld, key, "expected a synapse index or \"each\", found \"%s\"",
                                json_string_value(each));
        }
        b.synapse = to_each ? -1 : (int)synapse;
        if (!random && b.delay_max != b.delay_min) {
            char key[HB_JSON_PATH];
            hb_json_join(key, item, "delay");
            return hb_json_fail(ld, key, "expected a number (a ring's delay is one value)");
        }
        if (!random) {
            if ((status = hb_json_int(ld, item, bj, "first", 0, (long)r->n_cable - 1, &first)) ||
                (status = hb_json_int(ld, item, bj, "count", 2, (long)r->n_cable, &count)))
                return status;
            if (count < 2 || first + count > (long)r->n_cable)
                return hb_json_fail(ld, item, "expected \"first\" and \"count\" >= 2 naming "
                                    "cells (gids 0 to %u)", r->n_cable - 1);
            b.first = (uint32_t)first;
            b.count = (uint32_t)count;
        } else {
            if ((status = gid_range(ld, item, bj, "targets", r->n_cable, &b.first, &b.count)) ||
                (status = gid_range(ld, item, bj, "sources", n, &b.src_first, &b.src_count)) ||
                (status = hb_json_int(ld, item, bj, "in_degree", 1, 0x7fffffffL, &in_degree)) ||
                (status = hb_json_int(ld, item, bj, "seed", 0, 0x7fffffffffffffffL, &seed)))
                return status;
            /* a target among the sources cannot connect to itself */
            const int overlap = b.src_first < b.first + b.count && b.first < b.src_first + b.src_count;
            const long most = (long)b.src_count - (overlap ? 1 : 0);
            if (in_degree < 1 || in_degree > most) {
                char key[HB_JSON_PATH];
                hb_json_join(key, item, "in_degree");
                return hb_json_fail(ld, key, "%ld distinct sources asked of %ld candidates (%u "
                                    "sources%s); expected 1 to %ld", in_degree, most, b.src_count,
                                    overlap ? ", a cell never its own" : "", most);
            }
            b.in_degree = (int)in_degree;
            b.seed = (uint64_t)seed;
        }
        builder_t *grown = realloc(r->builders, ((size_t)r->n_builders + 1) * sizeof *grown);
        if (!grown) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
        r->builders = grown;
        r->builders[r->n_builders++] = b;
    }
    return HB_SUCCESS;
}

/* obj[key]: [a, b] of numbers (integers >= 1 when `integer`), each > 0 when `positive`. */
static hb_status_t pair(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                        const char *key, int integer, int positive, double out[2])
{
    char at[HB_JSON_PATH];
    hb_json_join(at, path, key);
    const json_t *j = json_object_get(obj, key);
    if (!j) return HB_SUCCESS;
    int ok = json_is_array(j) && json_array_size(j) == 2;
    for (size_t k = 0; ok && k < 2; k++) {
        const json_t *e = json_array_get(j, k);
        if (integer) {
            ok = json_is_integer(e) && json_integer_value(e) >= 1 &&
                 json_integer_value(e) <= 1000000;
            if (ok) out[k] = (double)json_integer_value(e);
        } else {
            ok = json_is_number(e) && isfinite(json_number_value(e)) &&
                 (!positive || json_number_value(e) > 0.0);
            if (ok) out[k] = json_number_value(e);
        }
    }
    if (!ok)
        return hb_json_fail(ld, at, "expected [level 0, last level]: two %s", integer
                            ? "integers from 1 to 1000000" : positive ? "numbers > 0" : "numbers");
    return HB_SUCCESS;
}

/* "busyring": Arbor's busyring benchmark with Arbor's keys and defaults; gids 0..N-1 the
 * cells, each ring's first cell kicked by an event at 1 ms (jn_events). "duration" and "dt" are the run's t_stop and dt (a file's t_stop and dt, if given,
 * must be the same). */
static hb_status_t parse_busyring(json_net_t *r, const json_t *root, const json_t *bj,
                                  hb_sim_options_t *opt)
{
    static const char *const keys[] = {"num-cells", "ring-size", "min-delay", "duration", "dt",
                                       "event-weight", "depth", "branch-probs", "compartments",
                                       "lengths", "synapses", "complex", "stdp", "name",
                                       "record", "spikes", "cpu-group-size", "gpu-group-size",
                                       "prefer-gpu", "bind-threads", "event-freq", NULL};
    static const char path[] = "network.busyring";
    hb_json_loader_t *ld = &r->ld;
    hb_busyring_t *p = &r->br;
    hb_busyring_default(p);
    hb_status_t status;
    char at[HB_JSON_PATH];
    if ((status = hb_json_need_object(ld, path, bj)) ||
        (status = hb_json_check_keys(ld, path, bj, keys)))
        return status;
    for (int k = 0; k < 2; k++) { /* Arbor's complex and stdp cells are not built */
        const char *key = k ? "stdp" : "complex";
        const json_t *j = json_object_get(bj, key);
        hb_json_join(at, path, key);
        if (j && !json_is_false(j))
            return hb_json_fail(ld, at, "expected false (only Arbor's simple hh/pas cells are "
                                "built)");
    }
    long num_cells = p->num_cells, ring_size = p->ring_size, depth = p->depth,
         synapses = p->synapses;
    double min_delay = p->min_delay, weight = p->event_weight, duration = 200.0, dt = opt->dt_ms;
    double probs[2] = {p->branch_probs[0], p->branch_probs[1]};
    double comps[2] = {p->compartments[0], p->compartments[1]};
    double lengths[2] = {p->lengths[0], p->lengths[1]};
    if ((status = hb_json_int(ld, path, bj, "num-cells", 2, 0x7ffffffeL, &num_cells)) ||
        (status = hb_json_int(ld, path, bj, "ring-size", 1, 0x7ffffffeL, &ring_size)) ||
        (status = hb_json_number(ld, path, bj, "min-delay", HB_JSON_OPTIONAL, HB_JSON_POSITIVE,
                                 &min_delay)) ||
        (status = hb_json_number(ld, path, bj, "duration", HB_JSON_OPTIONAL, HB_JSON_POSITIVE,
                                 &duration)) ||
        (status = hb_json_number(ld, path, bj, "dt", HB_JSON_OPTIONAL, HB_JSON_POSITIVE, &dt)) ||
        (status = hb_json_number(ld, path, bj, "event-weight", HB_JSON_OPTIONAL, HB_JSON_ANY,
                                 &weight)) ||
        (status = hb_json_int(ld, path, bj, "depth", 0, 30, &depth)) ||
        (status = hb_json_int(ld, path, bj, "synapses", 1, 0x7ffffffeL, &synapses)))
        return status;
    hb_json_join(at, path, "depth");
    if (depth == 1)
        return hb_json_fail(ld, at, "expected 0 (soma only) or 2 to 30 (Arbor's interpolation "
                            "by level divides by depth - 1)");
    if (depth >= 2 && ((status = pair(ld, path, bj, "branch-probs", 0, 0, probs)) ||
                       (status = pair(ld, path, bj, "compartments", 1, 1, comps)) ||
                       (status = pair(ld, path, bj, "lengths", 0, 1, lengths))))
        return status;
    hb_json_join(at, path, "branch-probs");
    if (!(probs[0] >= 0.0 && probs[0] <= 1.0 && probs[1] >= 0.0 && probs[1] <= 1.0))
        return hb_json_fail(ld, at, "[%g, %g]; expected two probabilities from 0 to 1 (a "
                            "branch's chance at level 0 and at the last level)", probs[0], probs[1]);
    hb_json_join(at, path, "event-weight");
    if (!isfinite((float)weight)) return hb_json_fail(ld, at, "expected a finite weight [uS]");
    /* duration and dt: the run's; a file's t_stop and dt must agree (an override wins over
     * both) */
    static const char *const run_keys[2][2] = {{"duration", "t_stop"}, {"dt", "dt"}};
    double *const run_vals[2] = {&duration, &dt};
    double *const opt_vals[2] = {&opt->t_stop_ms, &opt->dt_ms};
    for (int k = 0; k < 2; k++) {
        const unsigned set_bit = k ? HB_SIM_SET_DT : HB_SIM_SET_T_STOP;
        if (ld->overrides && (ld->overrides->set & set_bit)) continue; /* the caller's wins */
        const int mine = json_object_get(bj, run_keys[k][0]) != NULL;
        const int file = json_object_get(root, run_keys[k][1]) != NULL;
        hb_json_join(at, path, run_keys[k][0]);
        if (mine && file && *run_vals[k] != *opt_vals[k])
            return hb_json_fail(ld, at, "%g, but the file's \"%s\" is %g; expected the same (or "
                                "only one of them)", *run_vals[k], run_keys[k][1], *opt_vals[k]);
        if (!file) *opt_vals[k] = *run_vals[k];
    }
    if (!json_object_get(root, "hh_table")) opt->hh_table = 0; /* Arbor computes the rates */
    const double delay = (double)(float)min_delay;
    hb_json_join(at, path, "min-delay");
    if (!(delay >= opt->dt_ms))
        return hb_json_fail(ld, at, "%g ms; expected at least one step (dt = %g ms)", min_delay,
                            opt->dt_ms);
    p->num_cells = (uint32_t)num_cells;
    p->ring_size = (uint32_t)ring_size;
    p->min_delay = min_delay;
    p->event_weight = (float)weight;
    p->depth = (int)depth;
    p->synapses = (uint32_t)synapses;
    for (int k = 0; k < 2; k++) {
        p->branch_probs[k] = probs[k];
        p->compartments[k] = (unsigned)comps[k];
        p->lengths[k] = lengths[k];
    }
    /* Every cell is built (each its own): refused up front when a rank's share cannot fit in
     * the machine's memory, estimated from cell 0's rows (the others differ a little). */
    hb_morph_t *morph0 = NULL;
    hb_model_t *model0 = NULL;
    if ((status = hb_busyring_cell(p, 0, &morph0, &model0)) != HB_SUCCESS) {
        char why[512];
        snprintf(why, sizeof why, "%s", hb_last_error());
        return hb_json_fail(ld, path, "%s", why);
    }
    const int rows0 = model0->m;
    hb_model_destroy(model0);
    hb_morph_destroy(morph0);
    const int ranks = r->ranks > 0 ? r->ranks : 1;
    const double share = ceil((double)p->num_cells / ranks);
    const double built = rows0 * HB_BUSYRING_ROW_BYTES_BUILT +
                         (double)p->synapses * HB_BUSYRING_CONNECTION_BYTES;
    const double bytes = share * fmax(rows0 * HB_BUSYRING_ROW_BYTES, built);
    const double memory = hb_physical_memory();
    if (memory > 0.0 && bytes > memory) {
        hb_json_join(at, path, "num-cells");
        return hb_json_fail(ld, at, "%u cells of about %d rows (cell 0's), %u connections a "
                            "cell, need about %.3g GB on each of %d rank(s), more than this "
                            "machine's memory (%.3g GB); expected fewer cells, smaller cells or "
                            "more ranks", p->num_cells, rows0, p->synapses, bytes / 1e9, ranks,
                            memory / 1e9);
    }
    r->n_cable = p->num_cells;
    r->busyring = 1;
    return HB_SUCCESS;
}

static hb_status_t parse_network(json_net_t *r, const json_t *net)
{
    static const char *const keys[] = {"sources", "connections", "ring", "random", "busyring",
                                       "exchange", "events", "artificial", NULL};
    static const char *const modes[] = {"blocking", "iallgatherv", "tasks"}; /* hb_net_overlap_t */
    hb_json_loader_t *ld = &r->ld;
    hb_status_t status;
    if ((status = hb_json_need_object(ld, "network", net)) ||
        (status = hb_json_check_keys(ld, "network", net, keys)))
        return status;
    r->exchange = HB_NET_BLOCKING;
    const json_t *ex = json_object_get(net, "exchange");
    if (ex) {
        int found = -1;
        for (int k = 0; k < 3; k++)
            if (json_is_string(ex) && strcmp(json_string_value(ex), modes[k]) == 0) found = k;
        if (found < 0)
            return hb_json_fail(ld, "network.exchange", "expected \"blocking\", \"iallgatherv\" "
                                "or \"tasks\", found %s", json_is_string(ex) ? json_string_value(ex)
                                                                       : hb_json_kind(ex));
        r->exchange = found;
    }
    if (json_object_get(net, "busyring")) return HB_SUCCESS; /* load() parses it */
    const char *lists[6] = {"sources", "connections", "ring", "random", "events", "artificial"};
    for (int k = 0; k < 6; k++) {
        const json_t *l = json_object_get(net, lists[k]);
        char at[HB_JSON_PATH];
        hb_json_join(at, "network", lists[k]);
        if (l && !json_is_array(l))
            return hb_json_fail(ld, at, "expected an array, found %s", hb_json_kind(l));
    }
    char at[HB_JSON_PATH];
    /* artificial cells: gids after the file's cells, before the sources */
    const json_t *art = json_object_get(net, "artificial");
    size_t i;
    const json_t *item;
    int n_cells = (int)r->n_cable;
    json_array_foreach(art, i, item) {
        hb_json_join_index(at, "network.artificial", i);
        if ((status = hb_sim_json_artificial(ld, at, item, &r->cable, &n_cells))) return status;
    }
    r->n_cable = (uint32_t)n_cells;
    if ((status = parse_sources(r, json_object_get(net, "sources"), "network.sources")))
        return status;
    const uint32_t n = r->n_cable + r->n_sources;
    hb_json_join(at, "network", "connections");
    if ((status = parse_connections(r, json_object_get(net, "connections"), at, n)) ||
        (status = parse_builders(r, json_object_get(net, "ring"), "network.ring", 0, n)) ||
        (status = parse_builders(r, json_object_get(net, "random"), "network.random", 1, n)) ||
        (status = parse_events(r, json_object_get(net, "events"), "network.events")))
        return status;
    return HB_SUCCESS;
}

/*
 * A file's network, before it is built (busyring has its own, parse_busyring): refused when
 * the largest rank's share cannot fit in the machine's memory. A rank holds, per gid of its
 * block, the engine's arrays (HB_NET_GID_BYTES); per cable cell, its simulation's rows (as a
 * busyring cell's); per connection ending on its cells, the connection and the sort's copy;
 * and the whole file's tables (a model pointer per cell, a source per source gid, the
 * explicit connections). The ranks' blocks are hb_net_create's, so every rank finds the same
 * answer.
 */
#define HB_NET_GID_BYTES (sizeof(uint32_t) + sizeof(hb_model_t *) + sizeof(hb_net_source_t) + \
                          2 * sizeof(int))
#define HB_NET_CONNECTION_BYTES (2.0 * sizeof(hb_net_conn_t))

static hb_status_t check_memory(json_net_t *r)
{
    const int ranks = r->ranks > 0 ? r->ranks : 1;
    double *rows = calloc((size_t)ranks, sizeof *rows), *conns = calloc((size_t)ranks, sizeof *conns);
    if (!rows || !conns) {
        free(rows);
        free(conns);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", r->ld.file);
    }
    const uint32_t nc = r->n_cable, ns = r->n_sources;
    for (int k = 0; k < ranks; k++) { /* each rank's cells' rows and connections */
        const uint32_t first = block_first(nc, k, ranks), end = block_first(nc, k + 1, ranks);
        for (uint32_t g = first; g < end; g++) rows[k] += r->cable[g]->m;
        for (int b = 0; b < r->n_builders; b++) {
            const builder_t *bu = &r->builders[b];
            const uint32_t lo = bu->first > first ? bu->first : first;
            const uint32_t hi = bu->first + bu->count < end ? bu->first + bu->count : end;
            if (hi > lo) conns[k] += (double)(hi - lo) * (bu->random ? bu->in_degree : 1);
        }
    }
    for (size_t e = 0; e < r->n_explicit; e++)
        if (r->explicit_conns[e].target < nc) /* a source's: refused when it is built */
            conns[rank_of(r->explicit_conns[e].target, nc, ranks)] += 1.0;
    const double whole = (double)r->n_cable * sizeof(hb_model_t *) +
                         (double)r->n_source_items * sizeof(hb_spike_source_t) +
                         (double)r->n_explicit * sizeof(explicit_t) +
                         (double)r->n_events * sizeof(event_item_t);
    int worst = 0;
    double bytes = 0.0;
    for (int k = 0; k < ranks; k++) {
        const double gids = (double)(block_first(nc, k + 1, ranks) - block_first(nc, k, ranks) +
                                     block_first(ns, k + 1, ranks) - block_first(ns, k, ranks));
        const double b = whole + gids * (double)HB_NET_GID_BYTES +
                         rows[k] * HB_BUSYRING_ROW_BYTES + conns[k] * HB_NET_CONNECTION_BYTES;
        if (b > bytes) {
            bytes = b;
            worst = k;
        }
    }
    const double worst_conns = conns[worst], worst_rows = rows[worst];
    free(rows);
    free(conns);
    const uint32_t cells = block_first(nc, worst + 1, ranks) - block_first(nc, worst, ranks);
    const uint32_t sources = block_first(ns, worst + 1, ranks) - block_first(ns, worst, ranks);
    const double memory = hb_physical_memory();
    if (memory > 0.0 && bytes > memory)
        return hb_json_fail(&r->ld, "network", "the largest of %d rank(s)' shares, %u cells (%.4g "
                            "rows) and %u spike sources with %.4g connections, needs about %.3g "
                            "GB, more than this machine's memory (%.3g GB); expected fewer cells "
                            "or connections (a random builder's in_degree), or more ranks", ranks,
                            cells, worst_rows, sources, worst_conns, bytes / 1e9,
                            memory / 1e9);
    return HB_SUCCESS;
}

static hb_status_t load(json_net_t *r, const json_t *root, hb_sim_options_t *opt)
{
    static const char *const keys[] = {"t_stop", "dt", "v_init", "celsius", "sample_dt", "method",
                                       "spike_time", "backend", "hh_table", "cells", "network",
                                       "record", "catalogues", NULL};
    hb_json_loader_t *ld = &r->ld;
    hb_status_t status;
    if (!json_is_object(root))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: expected an object at the top, found %s",
                       ld->file, hb_json_kind(root));
    if ((status = hb_json_check_keys(ld, "", root, keys)) || (status = hb_json_catalogues(ld, root)))
        return status;
    const json_t *nj = json_object_get(root, "network");
    if (json_is_object(nj) && json_object_get(nj, "busyring") && !json_object_get(root, "t_stop")) {
        /* busyring's "duration" (or its default) stands for t_stop: parse_busyring sets it */
        json_t *copy = json_copy((json_t *)root);
        if (!copy || json_object_set_new(copy, "t_stop", json_real(200.0))) {
            json_decref(copy);
            return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
        }
        status = hb_sim_json_options(ld, copy, opt);
        json_decref(copy);
    } else {
        status = hb_sim_json_options(ld, root, opt);
    }
    if (status) return status;
    /* no backend named, in the file or by an override: "best" where a GPU exists */
    if (!json_object_get(root, "backend") &&
        !(ld->overrides && (ld->overrides->set & HB_SIM_SET_BACKEND)) &&
        hb_backend_available(HB_BACKEND_CUDA))
        opt->backend = HB_BACKEND_BEST;
    const json_t *cells = json_object_get(root, "cells"), *net = json_object_get(root, "network");
    if (cells && !json_is_array(cells))
        return hb_json_fail(ld, "cells", "expected an array of cells, found %s", hb_json_kind(cells));
    size_t i;
    const json_t *cell;
    int n = 0;
    json_array_foreach(cells, i, cell) {
        char at[HB_JSON_PATH];
        hb_json_join_index(at, "cells", i);
        if ((status = hb_sim_json_cell(ld, at, cell, &r->cable, &n)) != HB_SUCCESS) return status;
    }
    r->n_cable = (uint32_t)n;
    if (!net) return hb_json_fail(ld, "network", "missing; expected an object (a model file "
                                  "without it is for hinesbatch run's cells alone)");
    status = parse_network(r, net);
    const json_t *busy = json_is_object(net) ? json_object_get(net, "busyring") : NULL;
    if (status == HB_SUCCESS && busy) {
        static const char *const others[] = {"sources", "connections", "ring", "random",
                                             "events", "artificial"};
        if (cells)
            return hb_json_fail(ld, "cells", "a busyring network builds its own cells; expected "
                                "no \"cells\"");
        for (int k = 0; k < 6; k++)
            if (json_object_get(net, others[k])) {
                char at[HB_JSON_PATH];
                hb_json_join(at, "network", others[k]);
                return hb_json_fail(ld, at, "a busyring network is the benchmark alone; "
                                    "expected only \"busyring\"");
            }
        status = parse_busyring(r, root, busy, opt);
    }
    if (status == HB_SUCCESS && r->n_cable + r->n_sources == 0)
        status = hb_json_fail(ld, "cells", "no cells and no sources; expected at least one gid");
    if (status == HB_SUCCESS && !r->busyring) status = check_memory(r);
    if (status == HB_SUCCESS)
        status = hb_net_json_records(ld, root, r->n_cable, opt->sample_dt_ms, &r->records);
    return status;
}

/* The network of a parsed file (root is released); `file` names it in messages, `dir` resolves
 * its relative paths; neither is kept. */
static hb_status_t from_root(json_t *root, const char *file, const char *dir,
                             const hb_sim_overrides_t *overrides, hb_comm_t *comm, hb_net_t **net)
{
    json_net_t *r = calloc(1, sizeof *r);
    if (!r) {
        json_decref(root);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", file);
    }
    r->ld.file = file;
    r->ld.base_dir = dir;
    r->ranks = hb_comm_size(comm);
    r->ld.overrides = overrides;
    hb_sim_options_t opt;
    hb_status_t status = load(r, root, &opt);
    json_decref(root);
    r->ld.base_dir = NULL; /* the caller's */
    r->ld.overrides = NULL;
    if (status == HB_SUCCESS) {
        const hb_recipe_t recipe = {r->n_cable + r->n_sources, r, jn_kind, jn_cable, jn_source,
                                    jn_connections, jn_events};
        /* every callback a pure function of the gid (the file's models only read); a busyring's
         * models built per call */
        const hb_net_builder_t builder = {r->busyring ? jn_release : NULL, 1, 1, r->n_cable};
        status = hb_net_create_with(&recipe, &builder, comm, &opt, net);
    }
    r->ld.file = NULL; /* the caller's too */
    if (status != HB_SUCCESS) {
        json_net_free(r);
        return status;
    }
    (*net)->owned = r;
    (*net)->owned_free = json_net_free;
    hb_net_set_overlap(*net, r->exchange);
    if ((status = hb_net_json_records_apply(*net, &r->records, file)) != HB_SUCCESS) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hb_last_error());
        hb_net_destroy(*net);
        *net = NULL;
        return hb_fail(status, "%s", msg);
    }
    return HB_SUCCESS;
}

hb_status_t hb_net_load_json(const char *path, hb_comm_t *comm, hb_net_t **net)
{
    return hb_net_load_json_with(path, NULL, comm, net);
}

hb_status_t hb_net_load_json_with(const char *path, const hb_sim_overrides_t *overrides,
                                  hb_comm_t *comm, hb_net_t **net)
{
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load_json: net is NULL");
    *net = NULL;
    if (!path || !comm) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load_json: NULL argument");
    char dir[4096];
    json_t *root = NULL;
    hb_status_t status = hb_json_load_file(path, dir, sizeof dir, &root);
    if (status != HB_SUCCESS) return status;
    return from_root(root, path, dir, overrides, comm, net);
}

hb_status_t hb_net_parse_json(const char *text, size_t length, const char *name,
                              const char *base_dir, hb_comm_t *comm, hb_net_t **net)
{
    return hb_net_parse_json_with(text, length, name, base_dir, NULL, comm, net);
}

hb_status_t hb_net_parse_json_with(const char *text, size_t length, const char *name,
                                   const char *base_dir, const hb_sim_overrides_t *overrides,
                                   hb_comm_t *comm, hb_net_t **net)
{
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_parse_json: net is NULL");
    *net = NULL;
    if (!text || !comm) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_parse_json: NULL argument");
    if (!name) name = "network";
    json_error_t err;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &err);
    if (!root) return hb_fail(HB_ERR_PARSE, "%s:%d:%d: %s", name, err.line, err.column, err.text);
    return from_root(root, name, base_dir, overrides, comm, net);
}
