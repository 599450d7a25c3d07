/*
 * Network files (docs/network.md): a model file (sim/model_json.c: options and "cells", the
 * gids in order) with a "network" object: spike sources (gids after the cells), explicit
 * connections, and builders whose connections are computed gid by gid (ring; random with a
 * fixed in-degree drawn from Philox streams keyed by the seed and the target's gid), so that a
 * rank asks only for what ends on its cells.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/philox.h"
#include "net/net_engine.h"
#include "sim/json_util.h"

enum { STREAM_RANDOM_SOURCES = 2, STREAM_RANDOM_DELAYS = 3 };

typedef struct {
    uint32_t target;
    hb_connection_t c;
} explicit_t;

typedef struct {
    uint32_t first, count; /* targets (ring: also the sources) */
    uint32_t src_first, src_count; /* random */
    int synapse, in_degree;
    double weight, delay_min, delay_max; /* [uS], [ms] */
    uint64_t seed;
    int random;
} builder_t;

typedef struct {
    hb_json_loader_t ld; /* owns the models */
    hb_model_t **cable;  /* per cable gid */
    uint32_t n_cable, n_sources;
    hb_spike_source_t *sources; /* per source gid (after the cable gids) */
    explicit_t *explicit_conns; /* sorted by target, then file order */
    size_t n_explicit;
    builder_t *builders;
    int n_builders;
    unsigned char *taken; /* scratch of the random builders: a byte per source, */
    uint32_t *picked;     /* the sources picked */
    size_t taken_size, picked_size;
} json_net_t;

static void json_net_free(void *p)
{
    json_net_t *r = p;
    if (!r) return;
    hb_sim_owned_free(&r->ld.owned);
    free(r->cable);
    free(r->sources);
    free(r->explicit_conns);
    free(r->builders);
    free(r->taken);
    free(r->picked);
    free(r);
}

static hb_cell_kind_t jn_kind(void *user, uint32_t gid)
{
    return gid < ((json_net_t *)user)->n_cable ? HB_CELL_CABLE : HB_CELL_SOURCE;
}

static hb_model_t *jn_cable(void *user, uint32_t gid)
{
    json_net_t *r = user;
    return gid < r->n_cable ? r->cable[gid] : NULL;
}

static hb_status_t jn_source(void *user, uint32_t gid, hb_spike_source_t *s)
{
    json_net_t *r = user;
    *s = r->sources[gid - r->n_cable];
    return HB_SUCCESS;
}

static int compare_u32(const void *a, const void *b)
{
    const uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* Random builder: in_degree distinct sources of [src_first, src_first + src_count) without
 * the target itself (Floyd's sampling on the target's stream), in ascending gid order. */
static void random_sources(json_net_t *r, const builder_t *b, uint32_t gid, uint32_t *out)
{
    const int self = gid >= b->src_first && gid - b->src_first < b->src_count;
    const uint32_t n = b->src_count - (uint32_t)self; /* candidates, self left out */
    const uint32_t k = (uint32_t)b->in_degree;
    memset(r->taken, 0, n);
    for (uint32_t j = n - k, draw = 0; j < n; j++, draw++) {
        const hb_philox_ctr_t d = hb_philox_draw(b->seed, gid, STREAM_RANDOM_SOURCES, draw);
        uint32_t t = (uint32_t)hb_philox_below(d.v[0], d.v[1], (uint64_t)j + 1);
        if (r->taken[t]) t = j;
        r->taken[t] = 1;
    }
    uint32_t m = 0;
    for (uint32_t t = 0; t < n; t++)
        if (r->taken[t]) {
            uint32_t src = b->src_first + t;
            if (self && src >= gid) src++;
            out[m++] = src;
        }
    qsort(out, m, sizeof *out, compare_u32);
}

static hb_status_t jn_connections(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    json_net_t *r = user;
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
        random_sources(r, b, gid, r->picked);
        for (int q = 0; q < b->in_degree; q++) {
            double delay = b->delay_min;
            if (b->delay_max > b->delay_min) {
                const hb_philox_ctr_t d = hb_philox_draw(b->seed, gid, STREAM_RANDOM_DELAYS,
                                                         (uint64_t)q);
                delay += (b->delay_max - b->delay_min) * hb_philox_uniform(d.v[0], d.v[1]);
            }
            out[m++] = (hb_connection_t){r->picked[q], b->synapse, b->weight, delay};
        }
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
        hb_spike_source_t *p = realloc(r->sources, (r->n_sources + (size_t)count) * sizeof *p);
        if (!p) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
        r->sources = p;
        for (long k = 0; k < count; k++) r->sources[r->n_sources++] = s;
    }
    return HB_SUCCESS;
}

static int compare_explicit(const void *a, const void *b)
{
    const explicit_t *x = a, *y = b;
    return (x->target > y->target) - (x->target < y->target);
}

static hb_status_t parse_connections(json_net_t *r, const json_t *list, const char *path,
                                     uint32_t n)
{
    static const char *const keys[] = {"source", "target", "synapse", "weight", "delay", NULL};
    hb_json_loader_t *ld = &r->ld;
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
        r->explicit_conns[r->n_explicit++] =
            (explicit_t){(uint32_t)target, {(uint32_t)source, (int)synapse, weight, delay}};
    }
    /* stable: a target's connections keep the file's order */
    for (size_t a = 1; a < r->n_explicit; a++)
        for (size_t b = a; b > 0 && compare_explicit(&r->explicit_conns[b - 1],
                                                     &r->explicit_conns[b]) > 0; b--) {
            const explicit_t t = r->explicit_conns[b];
            r->explicit_conns[b] = r->explicit_conns[b - 1];
            r->explicit_conns[b - 1] = t;
        }
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
        if ((status = hb_json_need_object(ld, item, bj)) ||
            (status = hb_json_check_keys(ld, item, bj, random ? random_keys : ring_keys)) ||
            (status = hb_json_int(ld, item, bj, "synapse", 0, 0x7fffffffL, &synapse)) ||
            (status = hb_json_number(ld, item, bj, "weight", HB_JSON_REQUIRED, HB_JSON_ANY,
                                     &b.weight)) ||
            (status = delays(ld, item, bj, &b.delay_min, &b.delay_max)))
            return status;
        b.synapse = (int)synapse;
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
            if (b.src_count > r->taken_size) {
                unsigned char *t = realloc(r->taken, b.src_count);
                if (!t) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
                r->taken = t;
                r->taken_size = b.src_count;
            }
            if ((size_t)in_degree > r->picked_size) {
                uint32_t *p = realloc(r->picked, (size_t)in_degree * sizeof *p);
                if (!p) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
                r->picked = p;
                r->picked_size = (size_t)in_degree;
            }
        }
        builder_t *grown = realloc(r->builders, ((size_t)r->n_builders + 1) * sizeof *grown);
        if (!grown) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
        r->builders = grown;
        r->builders[r->n_builders++] = b;
    }
    return HB_SUCCESS;
}

static hb_status_t parse_network(json_net_t *r, const json_t *net)
{
    static const char *const keys[] = {"sources", "connections", "ring", "random", NULL};
    hb_json_loader_t *ld = &r->ld;
    hb_status_t status;
    if ((status = hb_json_need_object(ld, "network", net)) ||
        (status = hb_json_check_keys(ld, "network", net, keys)))
        return status;
    const char *lists[4] = {"sources", "connections", "ring", "random"};
    for (int k = 0; k < 4; k++) {
        const json_t *l = json_object_get(net, lists[k]);
        char at[HB_JSON_PATH];
        hb_json_join(at, "network", lists[k]);
        if (l && !json_is_array(l))
            return hb_json_fail(ld, at, "expected an array, found %s", hb_json_kind(l));
    }
    char at[HB_JSON_PATH];
    if ((status = parse_sources(r, json_object_get(net, "sources"), "network.sources")))
        return status;
    const uint32_t n = r->n_cable + r->n_sources;
    hb_json_join(at, "network", "connections");
    if ((status = parse_connections(r, json_object_get(net, "connections"), at, n)) ||
        (status = parse_builders(r, json_object_get(net, "ring"), "network.ring", 0, n)) ||
        (status = parse_builders(r, json_object_get(net, "random"), "network.random", 1, n)))
        return status;
    return HB_SUCCESS;
}

static hb_status_t load(json_net_t *r, const json_t *root, hb_sim_options_t *opt)
{
    static const char *const keys[] = {"t_stop", "dt", "v_init", "celsius", "sample_dt", "method",
                                       "spike_time", "backend", "hh_table", "cells", "network",
                                       NULL};
    hb_json_loader_t *ld = &r->ld;
    hb_status_t status;
    if (!json_is_object(root))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: expected an object at the top, found %s",
                       ld->file, hb_json_kind(root));
    if ((status = hb_json_check_keys(ld, "", root, keys)) ||
        (status = hb_sim_json_options(ld, root, opt)))
        return status;
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
    if (status == HB_SUCCESS && r->n_cable + r->n_sources == 0)
        status = hb_json_fail(ld, "cells", "no cells and no sources; expected at least one gid");
    return status;
}

hb_status_t hb_net_load_json(const char *path, hb_comm_t *comm, hb_net_t **net)
{
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load_json: net is NULL");
    *net = NULL;
    if (!path || !comm) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_load_json: NULL argument");
    char dir[4096];
    json_t *root = NULL;
    hb_status_t status = hb_json_load_file(path, dir, sizeof dir, &root);
    if (status != HB_SUCCESS) return status;
    json_net_t *r = calloc(1, sizeof *r);
    if (!r) {
        json_decref(root);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", path);
    }
    r->ld.file = path;
    r->ld.base_dir = dir;
    hb_sim_options_t opt;
    status = load(r, root, &opt);
    json_decref(root);
    r->ld.base_dir = NULL; /* dir is this frame's */
    if (status == HB_SUCCESS) {
        const hb_recipe_t recipe = {r->n_cable + r->n_sources, r, jn_kind, jn_cable, jn_source,
                                    jn_connections};
        status = hb_net_create(&recipe, comm, &opt, net);
    }
    if (status != HB_SUCCESS) {
        json_net_free(r);
        return status;
    }
    (*net)->owned = r;
    (*net)->owned_free = json_net_free;
    return HB_SUCCESS;
}
