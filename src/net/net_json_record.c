/*
 * A network file's "record" section (docs/network.md, section 8): one object or a list of
 * them, each {"gids": [...] | "all" or "fraction": f, "locations": [...], "variables": [...],
 * "sample_dt": ms}, expanded into hb_net_record_t's (gid, then location, then variable), and
 * handed to hb_net_record once the network is built. Errors name the key path.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_json_record.h"

void hb_net_json_records_free(hb_net_json_records_t *rs)
{
    if (!rs) return;
    for (int k = 0; k < rs->n_vars; k++) free(rs->vars[k]);
    free(rs->vars);
    free(rs->records);
    free(rs->section);
    memset(rs, 0, sizeof *rs);
}

/* Room for one more record; 0 when out of memory (or past 2^31 - 2). */
static int grow(hb_net_json_records_t *rs)
{
    if (rs->n < rs->cap) return 1;
    if (rs->cap > 0x3fffffff) return 0;
    const int cap = rs->cap ? 2 * rs->cap : 64;
    hb_net_record_t *r = realloc(rs->records, (size_t)cap * sizeof *r);
    if (r) rs->records = r;
    int *s = r ? realloc(rs->section, (size_t)cap * sizeof *s) : NULL;
    if (!s) return 0;
    rs->section = s;
    rs->cap = cap;
    return 1;
}

/* A variable's name kept for the records (the strings live with rs). */
static const char *keep(hb_net_json_records_t *rs, const char *name)
{
    char **v = realloc(rs->vars, ((size_t)rs->n_vars + 1) * sizeof *v);
    if (!v) return NULL;
    rs->vars = v;
    const size_t len = strlen(name) + 1;
    if (!(v[rs->n_vars] = malloc(len))) return NULL;
    memcpy(v[rs->n_vars], name, len);
    return v[rs->n_vars++];
}

/* "soma", {"section": INDEX, "x": 0..1}, {"node": INDEX} or {"sample": ID}. */
static hb_status_t location(const hb_json_loader_t *ld, const char *path, const json_t *j,
                            hb_location_t *loc)
{
    static const char *const keys_section[] = {"section", "x", NULL};
    static const char *const keys_node[] = {"node", NULL};
    static const char *const keys_sample[] = {"sample", NULL};
    static const char *const expect = "expected \"soma\", {\"section\": INDEX, \"x\": 0..1}, "
                                      "{\"node\": INDEX} or {\"sample\": ID}";
    memset(loc, 0, sizeof *loc);
    hb_status_t status;
    if (json_is_string(j) && strcmp(json_string_value(j), "soma") == 0) {
        loc->kind = HB_LOC_SOMA;
        return HB_SUCCESS;
    }
    if (!json_is_object(j)) return hb_json_fail(ld, path, "%s, found %s", expect, hb_json_kind(j));
    long v = 0;
    if (json_object_get(j, "section")) {
        loc->kind = HB_LOC_SECTION;
        loc->x = 0.5;
        if ((status = hb_json_check_keys(ld, path, j, keys_section)) ||
            (status = hb_json_int(ld, path, j, "section", 0, 0x7fffffffL, &v)) ||
            (status = hb_json_number(ld, path, j, "x", HB_JSON_OPTIONAL, HB_JSON_NON_NEGATIVE, &loc->x)))
            return status;
        loc->section = (int)v;
        if (loc->x > 1.0) {
            char at[HB_JSON_PATH];
            hb_json_join(at, path, "x");
            return hb_json_fail(ld, at, "expected 0..1, found %g", loc->x);
        }
        return HB_SUCCESS;
    }
    if (json_object_get(j, "node")) {
        loc->kind = HB_LOC_NODE;
        if ((status = hb_json_check_keys(ld, path, j, keys_node)) ||
            (status = hb_json_int(ld, path, j, "node", 0, 0x7fffffffL, &v)))
            return status;
        loc->node = (int)v;
        return HB_SUCCESS;
    }
    if (json_object_get(j, "sample")) {
        loc->kind = HB_LOC_SAMPLE;
        if ((status = hb_json_check_keys(ld, path, j, keys_sample)) ||
            (status = hb_json_int(ld, path, j, "sample", 0, 0x7fffffffL, &v)))
            return status;
        loc->sample = v;
        return HB_SUCCESS;
    }
    return hb_json_fail(ld, path, "%s", expect);
}

/* "a-b" (gids a to b) or a single integer in a string: 1 and the range, else 0. */
static int gid_text(const char *s, long *a, long *b)
{
    char *end = NULL;
    *a = strtol(s, &end, 10);
    if (end == s || *a < 0) return 0;
    if (!*end) {
        *b = *a;
        return 1;
    }
    if (*end != '-') return 0;
    const char *t = end + 1;
    *b = strtol(t, &end, 10);
    return end != t && !*end && *b >= *a;
}

/* One section's gids: the list, "all", or a fraction (gid floor(k / f), k = 0, 1, ...). */
typedef struct {
    long *first, *last; /* ranges */
    int n;
} gids_t;

static hb_status_t parse_gids(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                              uint32_t n_cable, gids_t *g)
{
    const json_t *list = json_object_get(obj, "gids"), *frac = json_object_get(obj, "fraction");
    char at[HB_JSON_PATH];
    if (list && frac)
        return hb_json_fail(ld, path, "\"gids\" and \"fraction\" both given; expected one of them");
    if (!list && !frac)
        return hb_json_fail(ld, path, "no cells chosen; expected \"gids\" (a list of gids and "
                            "\"first-last\" ranges, or \"all\") or \"fraction\" (0 < f <= 1)");
    if (frac) {
        double f = 0.0;
        hb_status_t status = hb_json_number(ld, path, obj, "fraction", HB_JSON_REQUIRED, HB_JSON_POSITIVE, &f);
        hb_json_join(at, path, "fraction");
        if (status) return status;
        if (f > 1.0) return hb_json_fail(ld, at, "expected 0 < f <= 1, found %g", f);
        const double count = ceil((double)n_cable * f);
        g->first = malloc(((size_t)count + 1) * sizeof *g->first);
        g->last = malloc(((size_t)count + 1) * sizeof *g->last);
        if (!g->first || !g->last) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
        for (long k = 0;; k++) {
            const double gid = floor((double)k / f);
            if (gid >= (double)n_cable) break;
            g->first[g->n] = g->last[g->n] = (long)gid;
            g->n++;
        }
        return HB_SUCCESS;
    }
    hb_json_join(at, path, "gids");
    const char *expect = "expected \"all\" or a list of gids (integers, or \"first-last\" ranges)";
    if (json_is_string(list)) {
        if (strcmp(json_string_value(list), "all") != 0)
            return hb_json_fail(ld, at, "%s, found \"%s\"", expect, json_string_value(list));
        g->first = malloc(sizeof *g->first);
        g->last = malloc(sizeof *g->last);
        if (!g->first || !g->last) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
        g->first[0] = 0;
        g->last[0] = (long)n_cable - 1;
        g->n = n_cable > 0;
        return HB_SUCCESS;
    }
    if (!json_is_array(list) || json_array_size(list) == 0)
        return hb_json_fail(ld, at, "%s, found %s", expect, json_is_array(list) ? "an empty list" : hb_json_kind(list));
    const size_t n = json_array_size(list);
    g->first = malloc((n + 1) * sizeof *g->first);
    g->last = malloc((n + 1) * sizeof *g->last);
    if (!g->first || !g->last) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    size_t i;
    const json_t *e;
    json_array_foreach(list, i, e) {
        char item[HB_JSON_PATH];
        hb_json_join_index(item, at, i);
        long a = -1, b = -1;
        if (json_is_integer(e)) a = b = json_integer_value(e) >= 0 && json_integer_value(e) <= 0xffffffffLL
                                            ? (long)json_integer_value(e) : -1;
        else if (!json_is_string(e) || !gid_text(json_string_value(e), &a, &b)) a = -2;
        if (a == -2 || a < 0)
            return hb_json_fail(ld, item, "%s; found %s", expect, hb_json_kind(e));
        if (b >= (long)n_cable)
            return hb_json_fail(ld, item, "gid %ld is not a cell; expected cells' gids, 0 to %ld%s",
                                b, (long)n_cable - 1, n_cable ? "" : " (there are none)");
        g->first[g->n] = a;
        g->last[g->n] = b;
        g->n++;
    }
    return HB_SUCCESS;
}

static hb_status_t parse_section(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                                 uint32_t n_cable, double default_dt, int index,
                                 hb_net_json_records_t *rs)
{
    static const char *const keys[] = {"gids", "fraction", "locations", "variables", "sample_dt", NULL};
    hb_status_t status;
    if ((status = hb_json_need_object(ld, path, obj)) || (status = hb_json_check_keys(ld, path, obj, keys)))
        return status;
    double dt = default_dt;
    if ((status = hb_json_number(ld, path, obj, "sample_dt", HB_JSON_OPTIONAL, HB_JSON_NON_NEGATIVE, &dt)))
        return status;
    char at[HB_JSON_PATH];
    if (index > 0 && dt != rs->sample_dt) {
        hb_json_join(at, path, "sample_dt");
        return hb_json_fail(ld, at, "%g ms; expected %g ms, record[0]'s (one report has one "
                            "interval)", dt, rs->sample_dt);
    }
    rs->sample_dt = dt;
    /* locations (default: the soma) */
    const json_t *locs = NULL;
    char locs_at[HB_JSON_PATH];
    if ((status = hb_json_array(ld, path, obj, "locations", locs_at, &locs))) return status;
    const size_t n_locs = locs ? json_array_size(locs) : 1;
    if (locs && !n_locs) return hb_json_fail(ld, locs_at, "an empty list; expected locations");
    hb_location_t *where = calloc(n_locs, sizeof *where);
    if (!where) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    for (size_t k = 0; locs && k < n_locs && status == HB_SUCCESS; k++) {
        hb_json_join_index(at, locs_at, k);
        status = location(ld, at, json_array_get(locs, k), &where[k]);
    }
    /* variables (default: v) */
    const json_t *vars = NULL;
    char vars_at[HB_JSON_PATH];
    if (status == HB_SUCCESS) status = hb_json_array(ld, path, obj, "variables", vars_at, &vars);
    const size_t n_vars = vars ? json_array_size(vars) : 1;
    if (status == HB_SUCCESS && vars && !n_vars)
        status = hb_json_fail(ld, vars_at, "an empty list; expected variables");
    const char **name = calloc(n_vars + 1, sizeof *name);
    int *synaptic = calloc(n_vars + 1, sizeof *synaptic);
    if (status == HB_SUCCESS && (!name || !synaptic)) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    for (size_t k = 0; k < n_vars && status == HB_SUCCESS; k++) {
        const json_t *v = vars ? json_array_get(vars, k) : NULL;
        hb_json_join_index(at, vars_at, k);
        if (v && !json_is_string(v)) {
            status = hb_json_fail(ld, at, "expected a variable's name (\"v\", \"hh.m\", "
                                  "\"syn[0].g\", ...), found %s", hb_json_kind(v));
            break;
        }
        hb_rec_var_t parsed;
        const char *s = v ? json_string_value(v) : "v";
        if (hb_rec_parse(s, &parsed) != HB_SUCCESS) {
            char msg[768];
            snprintf(msg, sizeof msg, "%s", hb_last_error());
            status = hb_json_fail(ld, at, "%s", msg);
            break;
        }
        synaptic[k] = parsed.synapse >= 0;
        if (!(name[k] = keep(rs, s))) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    }
    gids_t g = {NULL, NULL, 0};
    if (status == HB_SUCCESS) status = parse_gids(ld, path, obj, n_cable, &g);
    /* gid, then location, then variable; a synapse's variable once per gid */
    for (int q = 0; q < g.n && status == HB_SUCCESS; q++)
        for (long gid = g.first[q]; gid <= g.last[q] && status == HB_SUCCESS; gid++)
            for (size_t l = 0; l < n_locs && status == HB_SUCCESS; l++)
                for (size_t k = 0; k < n_vars; k++) {
                    if (synaptic[k] && l > 0) continue;
                    if (!grow(rs)) {
                        status = hb_fail(HB_ERR_ALLOC, "%s: %s: out of memory for %d records",
                                         ld->file, path, rs->n);
                        break;
                    }
                    rs->records[rs->n] = (hb_net_record_t){(uint32_t)gid, where[l], name[k]};
                    rs->section[rs->n++] = index;
                }
    free(g.first);
    free(g.last);
    free(where);
    free(name);
    free(synaptic);
    return status;
}

hb_status_t hb_net_json_records(const hb_json_loader_t *ld, const json_t *root, uint32_t n_cable,
                                double default_dt, hb_net_json_records_t *rs)
{
    memset(rs, 0, sizeof *rs);
    const json_t *rj = json_object_get(root, "record");
    if (!rj) return HB_SUCCESS;
    if (json_is_object(rj)) {
        rs->n_sections = 1;
        return parse_section(ld, "record", rj, n_cable, default_dt, 0, rs);
    }
    if (!json_is_array(rj) || json_array_size(rj) == 0)
        return hb_json_fail(ld, "record", "expected an object {\"gids\", \"locations\", "
                            "\"variables\", \"sample_dt\"} or a list of them, found %s",
                            json_is_array(rj) ? "an empty list" : hb_json_kind(rj));
    hb_status_t status = HB_SUCCESS;
    for (size_t i = 0; i < json_array_size(rj) && status == HB_SUCCESS; i++) {
        char at[HB_JSON_PATH];
        hb_json_join_index(at, "record", i);
        status = parse_section(ld, at, json_array_get(rj, i), n_cable, default_dt, (int)i, rs);
    }
    rs->n_sections = (int)json_array_size(rj);
    rs->listed = 1;
    return status;
}

hb_status_t hb_net_json_records_apply(hb_net_t *net, const hb_net_json_records_t *rs,
                                      const char *file)
{
    if (!rs->n) return HB_SUCCESS;
    /* one call per section: a failure names its section */
    hb_status_t status = HB_SUCCESS;
    for (int s = 0, k = 0; s < rs->n_sections && status == HB_SUCCESS; s++) {
        int n = 0;
        while (k + n < rs->n && rs->section[k + n] == s) n++;
        status = hb_net_record(net, n, rs->records + k, rs->sample_dt);
        if (status != HB_SUCCESS) {
            char msg[1024];
            snprintf(msg, sizeof msg, "%s", hb_last_error());
            const char *rest = strncmp(msg, "hb_net_record: ", 15) == 0 ? msg + 15 : msg;
            if (strncmp(rest, "record ", 7) == 0 && strstr(rest, ", ")) rest = strstr(rest, ", ") + 2;
            if (!rs->listed)
                return hb_fail(status, "%s: record: %s", file, rest);
            return hb_fail(status, "%s: record[%d]: %s", file, s, rest);
        }
        k += n;
    }
    return status;
}
