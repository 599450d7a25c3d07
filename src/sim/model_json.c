/*
 * Model files: a whole simulation described in JSON (docs/model.md), read with
 * libjansson. Every error names the file, the key path and what was expected:
 *   model.json: cells[0].mechanisms[1].gbar: expected a number >= 0, found string
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "core/morphology.h"
#include "mech/catalogue.h"
#include "sim/json_util.h"
#include "sim/sim.h"

/* A region: "all", "soma", "axon", "dend", "basal", "apical" or an SWC type code. */
static hb_status_t parse_region(const hb_json_loader_t *ld, const char *path, const json_t *j, int *type)
{
    static const struct { const char *name; int type; } names[] = {
        {"all", HB_REGION_ALL}, {"soma", 1}, {"axon", 2}, {"dend", 3}, {"basal", 3}, {"apical", 4}};
    if (json_is_integer(j) && json_integer_value(j) >= 0 && json_integer_value(j) < HB_SWC_TYPES) {
        *type = (int)json_integer_value(j);
        return HB_SUCCESS;
    }
    if (json_is_string(j))
        for (size_t k = 0; k < sizeof names / sizeof *names; k++)
            if (strcmp(json_string_value(j), names[k].name) == 0) {
                *type = names[k].type;
                return HB_SUCCESS;
            }
    return hb_json_fail(ld, path,
                   "expected a region: \"all\", \"soma\", \"axon\", \"dend\", \"basal\", \"apical\" "
                   "or an SWC type 0..%d, found %s",
                   HB_SWC_TYPES - 1, json_is_string(j) ? json_string_value(j) : hb_json_kind(j));
}

/* ---- geometry ---- */

typedef struct {
    hb_morph_t *morph;
    const hb_morph_t *given; /* hb_model_parse_json's morphology, instead of morph */
    int shared;         /* morph is the loader's, read for an earlier cell (not this one's) */
    char *key;          /* the file and options morph was read with (NULL: not a file) */
    int n_specs;        /* sections given in the file (0 for SWC) */
    char **names;       /* their names */
    int *map;           /* morphology section per spec */
} geometry_t;

static void geometry_free(geometry_t *g)
{
    for (int i = 0; i < g->n_specs; i++) free(g->names[i]);
    free(g->names);
    free(g->map);
    free(g->key);
}

static hb_status_t section_type(const hb_json_loader_t *ld, const char *path, const json_t *sec, int *type)
{
    const json_t *j = json_object_get(sec, "type");
    if (!j) return HB_SUCCESS;
    char at[HB_JSON_PATH];
    hb_json_join(at, path, "type");
    hb_status_t status = parse_region(ld, at, j, type);
    if (status == HB_SUCCESS && *type < 0) return hb_json_fail(ld, at, "expected one region, found \"all\"");
    return status;
}

static hb_status_t parse_sections(hb_json_loader_t *ld, const char *path, const json_t *list, geometry_t *g)
{
    static const char *const keys[] = {"name", "parent", "parent_x", "length", "diam", "type", NULL};
    if (!json_is_array(list) || json_array_size(list) == 0)
        return hb_json_fail(ld, path, "expected a non-empty array of sections, found %s",
                       json_is_array(list) ? "an empty array" : hb_json_kind(list));
    const int n = (int)json_array_size(list);
    hb_section_spec_t *specs = calloc((size_t)n, sizeof *specs);
    g->names = calloc((size_t)n, sizeof *g->names);
    g->map = calloc((size_t)n, sizeof *g->map);
    if (!specs || !g->names || !g->map) {
        free(specs);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    }
    g->n_specs = n;
    hb_status_t status = HB_SUCCESS;
    for (int i = 0; i < n && status == HB_SUCCESS; i++) {
        char at[HB_JSON_PATH], key[HB_JSON_PATH];
        hb_json_join_index(at, path, (size_t)i);
        const json_t *sec = json_array_get(list, (size_t)i);
        if ((status = hb_json_need_object(ld, at, sec)) != HB_SUCCESS ||
            (status = hb_json_check_keys(ld, at, sec, keys)) != HB_SUCCESS)
            break;
        hb_section_spec_t *s = &specs[i];
        const json_t *name = json_object_get(sec, "name");
        char fallback[32];
        snprintf(fallback, sizeof fallback, "%d", i);
        if (name && !json_is_string(name)) {
            hb_json_join(key, at, "name");
            status = hb_json_fail(ld, key, "expected a string, found %s", hb_json_kind(name));
            break;
        }
        const char *nm = name ? json_string_value(name) : fallback;
        for (int k = 0; k < i; k++) /* locations name sections: each name must say which */
            if (strcmp(g->names[k], nm) == 0) {
                hb_json_join(key, at, "name");
                status = hb_json_fail(ld, name ? key : at, "the name \"%s\" is taken by %s[%d]; "
                                      "expected a name of its own", nm, path, k);
                break;
            }
        if (status != HB_SUCCESS) break;
        if (!(g->names[i] = malloc(strlen(nm) + 1))) {
            status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
            break;
        }
        strcpy(g->names[i], nm);
        s->name = g->names[i];
        s->swc_type = i == 0 ? 1 : 3;
        s->parent_x = 1.0;
        s->parent = -1;
        const json_t *parent = json_object_get(sec, "parent");
        hb_json_join(key, at, "parent");
        if (i == 0 && parent && !json_is_null(parent)) {
            status = hb_json_fail(ld, key, "expected null: the first section is the root");
            break;
        }
        if (i > 0) {
            if (json_is_string(parent)) {
                for (int k = 0; k < i && s->parent < 0; k++)
                    if (strcmp(g->names[k], json_string_value(parent)) == 0) s->parent = k;
            } else if (json_is_integer(parent) && json_integer_value(parent) >= 0 &&
                       json_integer_value(parent) < i) {
                s->parent = (int)json_integer_value(parent);
            }
            if (s->parent < 0) {
                status = hb_json_fail(ld, key, "expected the name or index of an earlier section, found %s%s%s",
                                 json_is_string(parent) ? "\"" : "",
                                 json_is_string(parent) ? json_string_value(parent)
                                                        : parent ? hb_json_kind(parent) : "nothing",
                                 json_is_string(parent) ? "\"" : "");
                break;
            }
        }
        if ((status = hb_json_number(ld, at, sec, "parent_x", HB_JSON_OPTIONAL, HB_JSON_NON_NEGATIVE, &s->parent_x)) ||
            (status = hb_json_limited(ld, at, sec, "length", HB_JSON_REQUIRED, &hb_limit_length, &s->length_um)) ||
            (status = hb_json_limited(ld, at, sec, "diam", HB_JSON_REQUIRED, &hb_limit_diam, &s->diam_um)) ||
            (status = section_type(ld, at, sec, &s->swc_type)))
            break;
        if (i > 0 && s->parent_x != 1.0 && !(s->parent_x == 0.0 && s->parent == 0)) {
            hb_json_join(key, at, "parent_x");
            status = hb_json_fail(ld, key, "expected 1 (or 0 on the root section), found %g", s->parent_x);
        }
    }
    if (status == HB_SUCCESS) {
        status = hb_model_build_sections(specs, n, ld->file, &g->morph, g->map);
        if (status != HB_SUCCESS) {
            char msg[512];
            snprintf(msg, sizeof msg, "%s", hb_last_error());
            status = hb_fail(status, "%s (at %s)", msg, path);
        }
    }
    free(specs);
    return status;
}

/* "morphology" (SWC path), "cable" or "sections": exactly one. */
static hb_status_t parse_geometry(hb_json_loader_t *ld, const char *path, const json_t *cell,
                                  hb_scheme_t scheme, geometry_t *g)
{
    const json_t *swc = json_object_get(cell, "morphology"), *cable = json_object_get(cell, "cable"),
                 *secs = json_object_get(cell, "sections");
    char at[HB_JSON_PATH];
    if (!!swc + !!cable + !!secs != 1)
        return hb_json_fail(ld, path, "expected exactly one of \"morphology\" (an SWC file), \"cable\" "
                                 "or \"sections\", found %d",
                       !!swc + !!cable + !!secs);
    if (secs) {
        hb_json_join(at, path, "sections");
        return parse_sections(ld, at, secs, g);
    }
    if (cable) {
        static const char *const keys[] = {"length", "diam", "type", NULL};
        hb_section_spec_t s = {"cable", -1, 0.0, 0.0, 0.0, 3};
        hb_status_t status;
        hb_json_join(at, path, "cable");
        if ((status = hb_json_need_object(ld, at, cable)) || (status = hb_json_check_keys(ld, at, cable, keys)) ||
            (status = hb_json_limited(ld, at, cable, "length", HB_JSON_REQUIRED, &hb_limit_length, &s.length_um)) ||
            (status = hb_json_limited(ld, at, cable, "diam", HB_JSON_REQUIRED, &hb_limit_diam, &s.diam_um)) ||
            (status = section_type(ld, at, cable, &s.swc_type)))
            return status;
        return hb_model_build_sections(&s, 1, ld->file, &g->morph, NULL);
    }
    hb_json_join(at, path, "morphology");
    if (!json_is_string(swc))
        return hb_json_fail(ld, at, "expected the path of an SWC file, found %s", hb_json_kind(swc));
    const char *file = json_string_value(swc);
    char full[4096];
    if (file[0] == '/' || !ld->base_dir || !ld->base_dir[0]) snprintf(full, sizeof full, "%s", file);
    else snprintf(full, sizeof full, "%s/%s", ld->base_dir, file);
    hb_swc_options_t swc_opt;
    hb_swc_options_default(&swc_opt);
    int units = 0;
    static const char *const unit_names[] = {"um", "nm", NULL};
    hb_status_t status = hb_json_choice(ld, path, cell, "units", unit_names, &units);
    if (status != HB_SUCCESS) return status;
    swc_opt.units = units ? HB_UNITS_NM : HB_UNITS_UM;
    /* NEURON's scheme reads the file as NEURON's Import3d does (docs/discretisation.md). */
    static const char *const rules[] = {"hinesbatch", "import3d", NULL}, *const zero[] = {"repair", "keep", NULL};
    /* "float": 3-D points as NEURON's pt3d stores them (docs/model.md) */
    static const char *const precisions[] = {"double", "float", NULL};
    int rule = scheme == HB_SCHEME_NEURON, keep = 0, single = 0;
    if ((status = hb_json_choice(ld, path, cell, "section_rule", rules, &rule)) ||
        (status = hb_json_choice(ld, path, cell, "zero_radius", zero, &keep)) ||
        (status = hb_json_choice(ld, path, cell, "point_precision", precisions, &single)))
        return status;
    if (single && !rule) {
        hb_json_join(at, path, "point_precision");
        return hb_json_fail(ld, at, "\"float\" (NEURON's 3-D points) with section_rule "
                            "\"hinesbatch\"; expected section_rule \"import3d\" (NEURON's sections)");
    }
    swc_opt.sections = rule ? HB_SECTIONS_IMPORT3D : HB_SECTIONS_HINESBATCH;
    swc_opt.keep_zero_radius = keep;
    swc_opt.single_points = single;
    /* a file the loader read already with the same options (a sweep's cells): that
     * morphology, read-only to the models built on it, not a second parse */
    char key[4200];
    snprintf(key, sizeof key, "%d %d %d %d %s", (int)swc_opt.units, (int)swc_opt.sections,
             keep, single, full);
    for (int i = 0; i < ld->owned.n_morphs; i++)
        if (ld->owned.morph_keys && ld->owned.morph_keys[i] &&
            strcmp(ld->owned.morph_keys[i], key) == 0) {
            g->morph = ld->owned.morphs[i];
            g->shared = 1;
            return HB_SUCCESS;
        }
    if (!(g->key = malloc(strlen(key) + 1)))
        return hb_fail(HB_ERR_ALLOC, "%s: %s: out of memory", ld->file, at);
    strcpy(g->key, key);
    status = hb_morph_load(full, &swc_opt, &g->morph);
    if (status != HB_SUCCESS) {
        char msg[768];
        snprintf(msg, sizeof msg, "%s", hb_last_error());
        return hb_fail(status, "%s: %s: %s", ld->file, at, msg);
    }
    return HB_SUCCESS;
}

/* ---- discretisation and regions ---- */

static hb_status_t parse_discretization(const hb_json_loader_t *ld, const char *path, const json_t *cell,
                                        hb_discretization_t *disc)
{
    static const char *const keys[] = {"policy", "nseg", "max_length", "d_lambda", "frequency", "scheme", NULL};
    static const char *const policies[] = {"fixed", "max-length", "d-lambda", "per-segment",
                                            "odd-length", NULL};
    static const char *const schemes[] = {"vertex", "neuron", NULL};
    hb_discretization_default(disc);
    disc->policy = HB_CPOLICY_FIXED; /* NEURON's defaults: nseg 1, its scheme */
    disc->count = 1;
    disc->scheme = HB_SCHEME_NEURON;
    hb_status_t status;
    if ((status = hb_json_limited(ld, path, cell, "Ra", HB_JSON_OPTIONAL, &hb_limit_ra, &disc->ra_ohm_cm)) ||
        (status = hb_json_limited(ld, path, cell, "cm", HB_JSON_OPTIONAL, &hb_limit_cm, &disc->cm_uf_cm2)))
        return status;
    const json_t *d = json_object_get(cell, "discretization");
    char at[HB_JSON_PATH];
    hb_json_join(at, path, "discretization");
    if (!d) return HB_SUCCESS;
    if ((status = hb_json_need_object(ld, at, d)) || (status = hb_json_check_keys(ld, at, d, keys))) return status;
    int policy = 0, scheme = 1;
    long nseg = disc->count;
    if ((status = hb_json_choice(ld, at, d, "policy", policies, &policy)) ||
        (status = hb_json_choice(ld, at, d, "scheme", schemes, &scheme)) ||
        (status = hb_json_int(ld, at, d, "nseg", 1, 1000000, &nseg)) ||
        (status = hb_json_number(ld, at, d, "max_length", HB_JSON_OPTIONAL, HB_JSON_POSITIVE, &disc->max_length_um)) ||
        (status = hb_json_number(ld, at, d, "d_lambda", HB_JSON_OPTIONAL, HB_JSON_POSITIVE, &disc->d_lambda)) ||
        (status = hb_json_number(ld, at, d, "frequency", HB_JSON_OPTIONAL, HB_JSON_POSITIVE, &disc->frequency_hz)))
        return status;
    static const hb_cpolicy_t policy_of[] = {HB_CPOLICY_FIXED, HB_CPOLICY_MAX_LENGTH, HB_CPOLICY_D_LAMBDA,
                                             HB_CPOLICY_PER_SEGMENT, HB_CPOLICY_ODD_LENGTH};
    disc->policy = policy_of[policy];
    disc->scheme = scheme ? HB_SCHEME_NEURON : HB_SCHEME_VERTEX;
    disc->count = (int)nseg;
    return HB_SUCCESS;
}

/* "regions": [{"region": R, "Ra": .., "cm": .., "nseg": ..}] into per-type overrides. */
static hb_status_t parse_regions(const hb_json_loader_t *ld, const char *path, const json_t *cell,
                                 hb_discretization_t *disc)
{
    static const char *const keys[] = {"region", "Ra", "cm", "nseg", NULL};
    const json_t *list = json_object_get(cell, "regions");
    char at[HB_JSON_PATH], item[HB_JSON_PATH], key[HB_JSON_PATH];
    hb_json_join(at, path, "regions");
    if (!list) return HB_SUCCESS;
    if (!json_is_array(list)) return hb_json_fail(ld, at, "expected an array, found %s", hb_json_kind(list));
    size_t i;
    const json_t *r;
    hb_status_t status;
    json_array_foreach(list, i, r) {
        hb_json_join_index(item, at, i);
        if ((status = hb_json_need_object(ld, item, r)) || (status = hb_json_check_keys(ld, item, r, keys))) return status;
        int type = 0;
        hb_json_join(key, item, "region");
        const json_t *name = json_object_get(r, "region");
        if (!name) return hb_json_fail(ld, key, "missing; expected a region name or SWC type");
        if ((status = parse_region(ld, key, name, &type))) return status;
        double ra = 0.0, cm = 0.0;
        long nseg = 0;
        if ((status = hb_json_limited(ld, item, r, "Ra", HB_JSON_OPTIONAL, &hb_limit_ra, &ra)) ||
            (status = hb_json_limited(ld, item, r, "cm", HB_JSON_OPTIONAL, &hb_limit_cm, &cm)) ||
            (status = hb_json_int(ld, item, r, "nseg", 1, 1000000, &nseg)))
            return status;
        for (int t = 0; t < HB_SWC_TYPES; t++) {
            if (type != HB_REGION_ALL && t != type) continue;
            if (ra > 0.0) disc->ra_by_type[t] = ra;
            if (cm > 0.0) disc->cm_by_type[t] = cm;
            if (nseg > 0) disc->count_by_type[t] = (int)nseg;
        }
    }
    return HB_SUCCESS;
}

/* ---- mechanisms, stimuli, probes ---- */

/* A parameter's distribution along the cell, {"value": V, "exp_distance": [a, b, c]}:
 * V (a + b exp(c d)) at path distance d [um] from the soma's centre (BluePyOpt's "exp"). */
static hb_status_t parse_distribution(const hb_json_loader_t *ld, const char *key,
                                      const json_t *val, double *value, double abc[3])
{
    static const char *const keys[] = {"value", "exp_distance", NULL};
    hb_status_t status;
    if ((status = hb_json_check_keys(ld, key, val, keys)) ||
        (status = hb_json_number(ld, key, val, "value", HB_JSON_REQUIRED, HB_JSON_ANY, value)))
        return status;
    const json_t *list = json_object_get(val, "exp_distance");
    char at[HB_JSON_PATH];
    hb_json_join(at, key, "exp_distance");
    if (!json_is_array(list) || json_array_size(list) != 3)
        return hb_json_fail(ld, at, "expected [a, b, c]: value (a + b exp(c d)), d the distance "
                            "[um] from the soma's centre");
    for (int i = 0; i < 3; i++) {
        const json_t *x = json_array_get(list, (size_t)i);
        if (!json_is_number(x) || !isfinite(json_number_value(x)))
            return hb_json_fail(ld, at, "expected three numbers, found %s", hb_json_kind(x));
        abc[i] = json_number_value(x);
    }
    return HB_SUCCESS;
}

/* The catalogue mechanism `name` of the built-in catalogues or the file's "catalogues"
 * (hb_catalogue_find: "bbp::Ih" where two have one), of kind `kind`; errors at `key`. */
static hb_status_t find_mech(const hb_json_loader_t *ld, const char *key, const char *name,
                             hb_cat_kind_t kind, const hb_cat_mech_t **mech)
{
    if (hb_catalogue_find(ld->catalogues, ld->n_catalogues, name, mech) != HB_SUCCESS) {
        char why[512];
        snprintf(why, sizeof why, "%s", hb_last_error());
        return hb_json_fail(ld, key, "%s", why);
    }
    if ((*mech)->kind == kind) return HB_SUCCESS;
    static const char *const what[] = {"a density mechanism (SUFFIX; in a cell's \"mechanisms\")",
                                       "a point process (POINT_PROCESS; in a cell's \"synapses\")",
                                       ("an artificial cell (ARTIFICIAL_CELL; in the network's "
                                        "\"artificial\")")};
    static const char *const wanted[] = {"a density mechanism", "a point process",
                                         "an artificial cell"};
    return hb_json_fail(ld, key, "%s is %s; expected %s here", (*mech)->name,
                        what[(*mech)->kind <= HB_CAT_ARTIFICIAL ? (*mech)->kind : 0],
                        wanted[kind]);
}

/* A catalogue mechanism's parameters from its object: names (the object's keys) and values. */
typedef struct {
    const char **keys;
    double *values;
    int n;
} params_t;

/* Room for the parameters of object `obj` (at most its keys). */
static hb_status_t params_alloc(const hb_json_loader_t *ld, const json_t *obj, params_t *p)
{
    const size_t n = json_object_size(obj);
    p->keys = calloc(n + 1, sizeof *p->keys);
    p->values = calloc(n + 1, sizeof *p->values);
    p->n = 0;
    if (p->keys && p->values) return HB_SUCCESS;
    free(p->keys);
    free(p->values);
    return hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
}

static void params_free(params_t *p)
{
    free(p->keys);
    free(p->values);
}

/* Parameter k's value val (at `key`), a number. */
static hb_status_t params_number(const hb_json_loader_t *ld, const char *key, const char *k,
                                 const json_t *val, params_t *p)
{
    if (!json_is_number(val))
        return hb_json_fail(ld, key, "expected a number, found %s", hb_json_kind(val));
    p->keys[p->n] = k;
    p->values[p->n++] = json_number_value(val);
    return HB_SUCCESS;
}

/* 1 where k is one of the mechanism's GLOBALs. */
static int is_global(const hb_cat_mech_t *mech, const char *k)
{
    for (int q = 0; q < mech->n_global; q++)
        if (!strcmp(mech->global[q].name, k)) return 1;
    return 0;
}

/* A catalogue mechanism ({"name": "NaTs2_t", "region": R, "gNaTs2_tbar": 0.9, ...}): the
 * built-in catalogues' or the file's "catalogues"' (hb_catalogue_find: "bbp::Ih" where two
 * have one); its keys are its
 * RANGE PARAMETERs, or GLOBALs (one value per model, as NEURON has). */
static hb_status_t parse_catalogue_mechanism(const hb_json_loader_t *ld, const char *item,
                                             const json_t *mj, hb_model_t *model)
{
    char key[HB_JSON_PATH], context[HB_JSON_PATH + 256];
    hb_json_join(key, item, "name");
    const hb_cat_mech_t *mech = NULL;
    const char *name = json_string_value(json_object_get(mj, "name"));
    hb_status_t status = find_mech(ld, key, name, HB_CAT_DENSITY, &mech);
    if (status) return status;
    int type = HB_REGION_ALL;
    const json_t *region = json_object_get(mj, "region");
    hb_json_join(key, item, "region");
    if (region && (status = parse_region(ld, key, region, &type))) return status;
    params_t par;
    if ((status = params_alloc(ld, mj, &par))) return status;
    const char *k;
    const json_t *val;
    json_object_foreach((json_t *)mj, k, val) { /* RANGE PARAMETERs, and unknown keys */
        if (!strcmp(k, "name") || !strcmp(k, "region") || is_global(mech, k)) continue;
        hb_json_join(key, item, k);
        if (json_is_object(val)) { /* a distribution: inserted at its value, then scaled */
            double abc[3];
            if ((status = parse_distribution(ld, key, val, &par.values[par.n], abc))) break;
            par.keys[par.n++] = k;
            continue;
        }
        if ((status = params_number(ld, key, k, val, &par))) break;
    }
    snprintf(context, sizeof context, "%s: %s", ld->file, item);
    if (status == HB_SUCCESS)
        status = hb_model_insert_cat(model, type, mech, par.n, par.keys, par.values, context);
    json_object_foreach((json_t *)mj, k, val) { /* distributions */
        if (status != HB_SUCCESS) break;
        if (is_global(mech, k) || !json_is_object(val)) continue;
        double value, abc[3];
        char where[HB_JSON_PATH + 256];
        hb_json_join(key, item, k);
        snprintf(where, sizeof where, "%s: %s", ld->file, key);
        if (!(status = parse_distribution(ld, key, val, &value, abc)))
            status = hb_model_set_cat_by_distance(model, type, mech, k, value, abc, where);
    }
    json_object_foreach((json_t *)mj, k, val) { /* GLOBALs */
        if (status != HB_SUCCESS) break;
        if (!is_global(mech, k)) continue;
        hb_json_join(key, item, k);
        if (!json_is_number(val))
            status = hb_json_fail(ld, key, "expected a number, found %s", hb_json_kind(val));
        else
            status = hb_model_set_cat_global(model, mech, k, json_number_value(val), context);
    }
    params_free(&par);
    return status;
}

/* "ions": [{"region": R, "ena": 50, "ek": -85, "cai": 5e-5, "cao": 2}]: per region, as NEURON's
 * `soma.ek = -85`: e<ion> [mV], <ion>i and <ion>o [mM] of the species the cell's catalogue
 * mechanisms use; entries apply in order. */
static hb_status_t parse_ions(const hb_json_loader_t *ld, const char *path, const json_t *cell,
                              hb_model_t *model)
{
    char at[HB_JSON_PATH], item[HB_JSON_PATH], key[HB_JSON_PATH];
    const json_t *list;
    hb_status_t status = hb_json_array(ld, path, cell, "ions", at, &list);
    if (status != HB_SUCCESS || !list) return status;
    size_t i;
    const json_t *entry;
    json_array_foreach(list, i, entry) {
        hb_json_join_index(item, at, i);
        if ((status = hb_json_need_object(ld, item, entry))) return status;
        int type = HB_REGION_ALL;
        const json_t *region = json_object_get(entry, "region");
        hb_json_join(key, item, "region");
        if (region && (status = parse_region(ld, key, region, &type))) return status;
        const char *k;
        const json_t *val;
        json_object_foreach((json_t *)entry, k, val) {
            if (!strcmp(k, "region")) continue;
            hb_json_join(key, item, k);
            const size_t len = strlen(k);
            char ion[16] = "";
            unsigned what = 0;
            if (len >= 2 && len < sizeof ion && k[0] == 'e') {
                memcpy(ion, k + 1, len - 1);
                what = HB_ION_E;
            } else if (len >= 2 && len < sizeof ion && (k[len - 1] == 'i' || k[len - 1] == 'o')) {
                memcpy(ion, k, len - 1);
                what = k[len - 1] == 'i' ? HB_ION_CI : HB_ION_CO;
            }
            int used = 0;
            for (int q = 0; what && q < model->n_cat; q++)
                for (int u = 0; u < model->cat[q].mech->n_ion; u++)
                    used |= !strcmp(model->cat[q].mech->ion[u].ion, ion);
            if (!used)
                return hb_json_fail(ld, key, "expected \"region\" or e<ion> [mV], <ion>i or "
                                    "<ion>o [mM] of an ion the cell's mechanisms use (\"ek\", "
                                    "\"cai\", ...)");
            if (!json_is_number(val))
                return hb_json_fail(ld, key, "expected a number, found %s", hb_json_kind(val));
            if ((status = hb_model_set_ion(model, type, ion, what, json_number_value(val)))) {
                char why[512];
                snprintf(why, sizeof why, "%s", hb_last_error());
                return hb_json_fail(ld, key, "%s", why);
            }
        }
    }
    return HB_SUCCESS;
}

hb_status_t hb_json_catalogues(hb_json_loader_t *ld, const json_t *root)
{
    char at[HB_JSON_PATH], item[HB_JSON_PATH];
    const json_t *list;
    hb_status_t status = hb_json_array(ld, "", root, "catalogues", at, &list);
    if (status != HB_SUCCESS || !list) return status;
    if (json_array_size(list) > HB_JSON_MAX_CATALOGUES)
        return hb_json_fail(ld, at, "%zu catalogues; expected at most %d", json_array_size(list),
                            HB_JSON_MAX_CATALOGUES);
    size_t i;
    const json_t *entry;
    json_array_foreach(list, i, entry) {
        hb_json_join_index(item, at, i);
        const char *file = json_string_value(entry);
        if (!file || !file[0])
            return hb_json_fail(ld, item, "%s; expected the path of a catalogue (.so) built by "
                                "hinesbatch build-catalogue, relative to this file",
                                file ? "an empty string" : hb_json_kind(entry));
        char full[4096];
        if (file[0] == '/' || !ld->base_dir || !ld->base_dir[0])
            snprintf(full, sizeof full, "%s", file);
        else
            snprintf(full, sizeof full, "%s/%s", ld->base_dir, file);
        const hb_catalogue_t *cat = NULL;
        if (hb_catalogue_load(full, &cat) != HB_SUCCESS) {
            char why[1024];
            snprintf(why, sizeof why, "%s", hb_last_error());
            return hb_json_fail(ld, item, "%s", why);
        }
        int again = 0; /* the same library twice: dlopen gave the same catalogue */
        for (int k = 0; k < ld->n_catalogues; k++) again |= ld->catalogues[k] == cat;
        if (again) continue;
        for (int k = 0; k < ld->n_catalogues; k++)
            if (strcmp(ld->catalogues[k]->name, cat->name) == 0)
                return hb_json_fail(ld, item, "%s: a second catalogue named %s; expected "
                                    "catalogues of different names (build-catalogue --name)",
                                    full, cat->name);
        for (int b = 0; b < hb_catalogue_builtin_count(); b++)
            if (strcmp(hb_catalogue_builtin(b)->name, cat->name) == 0)
                return hb_json_fail(ld, item, "%s: the catalogue is named %s, as a built-in one; "
                                    "expected another name (build-catalogue --name)", full,
                                    cat->name);
        ld->catalogues[ld->n_catalogues++] = cat;
    }
    return HB_SUCCESS;
}

static hb_status_t parse_mechanisms(const hb_json_loader_t *ld, const char *path, const json_t *cell,
                                    hb_model_t *model)
{
    static const char *const pas_keys[] = {"name", "region", "g", "e", NULL};
    static const char *const hh_keys[] = {"name", "region", "gnabar", "gkbar", "gl", "el", "ena", "ek", NULL};
    const json_t *list = json_object_get(cell, "mechanisms");
    char at[HB_JSON_PATH], item[HB_JSON_PATH], key[HB_JSON_PATH];
    hb_json_join(at, path, "mechanisms");
    if (!list) return HB_SUCCESS;
    if (!json_is_array(list)) return hb_json_fail(ld, at, "expected an array, found %s", hb_json_kind(list));
    size_t i;
    const json_t *mj;
    hb_status_t status;
    json_array_foreach(list, i, mj) {
        hb_json_join_index(item, at, i);
        if ((status = hb_json_need_object(ld, item, mj))) return status;
        const json_t *name = json_object_get(mj, "name");
        hb_json_join(key, item, "name");
        hb_mech_t mech;
        if (json_is_string(name) && strcmp(json_string_value(name), "pas") == 0) {
            hb_mech_default(HB_MECH_PAS, &mech);
            if ((status = hb_json_check_keys(ld, item, mj, pas_keys)) ||
                (status = hb_json_limited(ld, item, mj, "g", HB_JSON_OPTIONAL, &hb_limit_conductance, &mech.g_pas)) ||
                (status = hb_json_limited(ld, item, mj, "e", HB_JSON_OPTIONAL, &hb_limit_potential, &mech.e_pas)))
                return status;
        } else if (json_is_string(name) && strcmp(json_string_value(name), "hh") == 0) {
            hb_mech_default(HB_MECH_HH, &mech);
            if ((status = hb_json_check_keys(ld, item, mj, hh_keys)) ||
                (status = hb_json_limited(ld, item, mj, "gnabar", HB_JSON_OPTIONAL, &hb_limit_conductance, &mech.gnabar)) ||
                (status = hb_json_limited(ld, item, mj, "gkbar", HB_JSON_OPTIONAL, &hb_limit_conductance, &mech.gkbar)) ||
                (status = hb_json_limited(ld, item, mj, "gl", HB_JSON_OPTIONAL, &hb_limit_conductance, &mech.gl)) ||
                (status = hb_json_limited(ld, item, mj, "el", HB_JSON_OPTIONAL, &hb_limit_potential, &mech.el)) ||
                (status = hb_json_limited(ld, item, mj, "ena", HB_JSON_OPTIONAL, &hb_limit_potential, &mech.ena)) ||
                (status = hb_json_limited(ld, item, mj, "ek", HB_JSON_OPTIONAL, &hb_limit_potential, &mech.ek)))
                return status;
        } else if (json_is_string(name)) {
            if ((status = parse_catalogue_mechanism(ld, item, mj, model)) != HB_SUCCESS) return status;
            continue;
        } else {
            return hb_json_fail(ld, key, "%s; expected \"pas\", \"hh\" or a catalogue mechanism",
                           name ? hb_json_kind(name) : "missing");
        }
        int type = HB_REGION_ALL;
        const json_t *region = json_object_get(mj, "region");
        hb_json_join(key, item, "region");
        if (region && (status = parse_region(ld, key, region, &type))) return status;
        if ((status = hb_model_insert(model, type, &mech))) return status;
    }
    return HB_SUCCESS;
}

static hb_status_t parse_location(const hb_json_loader_t *ld, const char *path, const json_t *j,
                                  const geometry_t *g, hb_location_t *loc)
{
    static const char *const keys_section[] = {"section", "x", NULL};
    static const char *const keys_sample[] = {"sample", NULL};
    static const char *const keys_node[] = {"node", NULL};
    memset(loc, 0, sizeof *loc);
    const char *expect = "expected \"soma\", {\"sample\": ID}, {\"section\": NAME or INDEX, \"x\": 0..1} "
                         "or {\"node\": INDEX}";
    char key[HB_JSON_PATH];
    hb_status_t status;
    if (json_is_string(j) && strcmp(json_string_value(j), "soma") == 0) {
        loc->kind = HB_LOC_SOMA;
        return HB_SUCCESS;
    }
    if (!json_is_object(j)) return hb_json_fail(ld, path, "%s, found %s", expect, hb_json_kind(j));
    const json_t *sec = json_object_get(j, "section");
    if (json_object_get(j, "sample")) {
        long id = 0;
        if ((status = hb_json_check_keys(ld, path, j, keys_sample)) ||
            (status = hb_json_int(ld, path, j, "sample", 0, 0x7fffffffL, &id)))
            return status;
        loc->kind = HB_LOC_SAMPLE;
        loc->sample = id;
        return HB_SUCCESS;
    }
    if (json_object_get(j, "node")) {
        long node = 0;
        if ((status = hb_json_check_keys(ld, path, j, keys_node)) ||
            (status = hb_json_int(ld, path, j, "node", 0, 0x7fffffffL, &node)))
            return status;
        loc->kind = HB_LOC_NODE;
        loc->node = (int)node;
        return HB_SUCCESS;
    }
    if (!sec) return hb_json_fail(ld, path, "%s", expect);
    if ((status = hb_json_check_keys(ld, path, j, keys_section))) return status;
    loc->kind = HB_LOC_SECTION;
    loc->x = 0.5;
    hb_json_join(key, path, "section");
    loc->section = -1;
    if (json_is_string(sec)) {
        for (int k = 0; k < g->n_specs && loc->section < 0; k++)
            if (strcmp(g->names[k], json_string_value(sec)) == 0) loc->section = g->map[k];
        if (loc->section < 0)
            return hb_json_fail(ld, key, "no section named \"%s\"", json_string_value(sec));
    } else if (json_is_integer(sec)) {
        /* an index of the file's sections, or of the morphology's (SWC): in range before any
         * conversion to int */
        const json_int_t s = json_integer_value(sec);
        const int n = g->n_specs ? g->n_specs : (g->given ? g->given : g->morph)->n_sections;
        if (s < 0 || s >= n)
            return hb_json_fail(ld, key, "expected a section index from 0 to %d, found %" JSON_INTEGER_FORMAT,
                                n - 1, s);
        loc->section = g->n_specs ? g->map[s] : (int)s;
    } else {
        return hb_json_fail(ld, key, "expected a section name or index, found %s", hb_json_kind(sec));
    }
    hb_json_join(key, path, "x");
    status = hb_json_number(ld, path, j, "x", HB_JSON_OPTIONAL, HB_JSON_NON_NEGATIVE, &loc->x);
    if (status == HB_SUCCESS && loc->x > 1.0) return hb_json_fail(ld, key, "expected 0..1, found %g", loc->x);
    return status;
}

/* Library errors about a location get the key path in front. */
static hb_status_t located(const hb_json_loader_t *ld, const char *path, hb_status_t status)
{
    if (status == HB_SUCCESS) return status;
    char msg[768];
    snprintf(msg, sizeof msg, "%s", hb_last_error());
    return hb_fail(status, "%s: %s: %s", ld->file, path, msg);
}

static hb_status_t parse_stimuli(const hb_json_loader_t *ld, const char *path, const json_t *cell,
                                 const geometry_t *g, hb_model_t *model)
{
    static const char *const keys[] = {"type", "at", "del", "dur", "amp", NULL};
    static const char *const types[] = {"iclamp", NULL};
    const json_t *list;
    char at[HB_JSON_PATH], item[HB_JSON_PATH], key[HB_JSON_PATH];
    hb_status_t status = hb_json_array(ld, path, cell, "stimuli", at, &list);
    if (status != HB_SUCCESS || !list) return status;
    size_t i;
    const json_t *sj;
    json_array_foreach(list, i, sj) {
        hb_json_join_index(item, at, i);
        int type = 0;
        double del = 0.0, dur = 0.0, amp = 0.0;
        hb_location_t loc;
        hb_json_join(key, item, "at");
        if ((status = hb_json_need_object(ld, item, sj)) || (status = hb_json_check_keys(ld, item, sj, keys)) ||
            (status = hb_json_choice(ld, item, sj, "type", types, &type)) ||
            (status = hb_json_number(ld, item, sj, "del", HB_JSON_REQUIRED, HB_JSON_NON_NEGATIVE, &del)) ||
            (status = hb_json_number(ld, item, sj, "dur", HB_JSON_REQUIRED, HB_JSON_NON_NEGATIVE, &dur)) ||
            (status = hb_json_limited(ld, item, sj, "amp", HB_JSON_REQUIRED, &hb_limit_amp, &amp)))
            return status;
        if (!json_object_get(sj, "at")) return hb_json_fail(ld, key, "missing; expected a location");
        if ((status = parse_location(ld, key, json_object_get(sj, "at"), g, &loc)) ||
            (status = located(ld, key, hb_model_add_iclamp(model, &loc, del, dur, amp))))
            return status;
    }
    return HB_SUCCESS;
}

static hb_status_t parse_probes(const hb_json_loader_t *ld, const char *path, const json_t *cell,
                                const geometry_t *g, hb_model_t *model)
{
    static const char *const keys[] = {"name", "at", "spike_threshold", NULL};
    const json_t *list;
    char at[HB_JSON_PATH], item[HB_JSON_PATH], key[HB_JSON_PATH];
    hb_status_t status = hb_json_array(ld, path, cell, "probes", at, &list);
    if (status != HB_SUCCESS || !list) return status;
    size_t i;
    const json_t *pj;
    json_array_foreach(list, i, pj) {
        hb_json_join_index(item, at, i);
        hb_probe_spec_t spec;
        memset(&spec, 0, sizeof spec);
        if ((status = hb_json_need_object(ld, item, pj)) || (status = hb_json_check_keys(ld, item, pj, keys))) return status;
        const json_t *name = json_object_get(pj, "name");
        hb_json_join(key, item, "name");
        if (name && !json_is_string(name))
            return hb_json_fail(ld, key, "expected a string, found %s", hb_json_kind(name));
        if (name && strpbrk(json_string_value(name), ",\"\r\n"))
            return hb_json_fail(ld, key, "expected a name without commas, quotes or line breaks "
                                "(a CSV column), found \"%s\"", json_string_value(name));
        spec.name = name ? json_string_value(name) : NULL;
        char fallback[32]; /* hb_model_add_probe's name for a probe without one */
        snprintf(fallback, sizeof fallback, "v%d", model->n_probes);
        const char *nm = name ? json_string_value(name) : fallback;
        for (int p = 0; p < model->n_probes; p++)
            if (strcmp(model->probes[p].name, nm) == 0)
                return hb_json_fail(ld, name ? key : item, "the name \"%s\" is taken by %s[%d]; "
                                    "expected a name of its own (a CSV column)", nm, at, p);
        if (json_object_get(pj, "spike_threshold")) {
            spec.detect_spikes = 1;
            if ((status = hb_json_number(ld, item, pj, "spike_threshold", HB_JSON_REQUIRED, HB_JSON_ANY, &spec.threshold_mv)))
                return status;
        }
        hb_json_join(key, item, "at");
        if (!json_object_get(pj, "at")) return hb_json_fail(ld, key, "missing; expected a location");
        if ((status = parse_location(ld, key, json_object_get(pj, "at"), g, &spec.where)) ||
            (status = located(ld, key, hb_model_add_probe(model, &spec, NULL))))
            return status;
    }
    return HB_SUCCESS;
}

/* A catalogue point process among the synapses ({"name": "ExpSyn", "at": LOC, "tau": 2}): a
 * POINT_PROCESS of the built-in catalogues or the file's "catalogues" (hb_catalogue_find), its
 * other keys RANGE PARAMETERs. */
static hb_status_t parse_point(const hb_json_loader_t *ld, const char *item, const json_t *sj,
                               const geometry_t *g, hb_model_t *model)
{
    char key[HB_JSON_PATH], context[HB_JSON_PATH + 256];
    hb_json_join(key, item, "name");
    const char *name = json_string_value(json_object_get(sj, "name"));
    if (!name) return hb_json_fail(ld, key, "expected a catalogue point process's name (a string)");
    if (json_object_get(sj, "type")) {
        hb_json_join(key, item, "type");
        return hb_json_fail(ld, key, "not with \"name\"; expected \"type\" (the hard-coded "
                            "expsyn, exp2syn) or \"name\" (a catalogue point process)");
    }
    const hb_cat_mech_t *mech = NULL;
    hb_status_t status = find_mech(ld, key, name, HB_CAT_POINT, &mech);
    if (status) return status;
    params_t par;
    if ((status = params_alloc(ld, sj, &par))) return status;
    const char *k;
    const json_t *val;
    json_object_foreach((json_t *)sj, k, val) {
        if (!strcmp(k, "name") || !strcmp(k, "at")) continue;
        hb_json_join(key, item, k);
        if ((status = params_number(ld, key, k, val, &par))) break;
    }
    hb_location_t loc;
    hb_json_join(key, item, "at");
    if (status == HB_SUCCESS && !json_object_get(sj, "at"))
        status = hb_json_fail(ld, key, "missing; expected a location");
    if (status == HB_SUCCESS) status = parse_location(ld, key, json_object_get(sj, "at"), g, &loc);
    snprintf(context, sizeof context, "%s: %s", ld->file, item);
    if (status == HB_SUCCESS)
        status = hb_model_add_point(model, &loc, mech, par.n, par.keys, par.values, context, NULL);
    params_free(&par);
    return status;
}

/* "synapses": [{"type": "expsyn" | "exp2syn", "at": LOCATION, "tau", "tau1", "tau2", "e"} or
 * {"name": POINT_PROCESS, "at": LOCATION, its RANGE PARAMETERs}], in file order: synapse k of
 * the cell is a connection's "synapse": k. */
static hb_status_t parse_synapses(const hb_json_loader_t *ld, const char *path, const json_t *cell,
                                  const geometry_t *g, hb_model_t *model)
{
    static const char *const keys[] = {"type", "at", "tau", "tau1", "tau2", "e", NULL};
    static const char *const types[] = {"expsyn", "exp2syn", NULL};
    const json_t *list;
    char at[HB_JSON_PATH], item[HB_JSON_PATH], key[HB_JSON_PATH];
    hb_status_t status = hb_json_array(ld, path, cell, "synapses", at, &list);
    if (status != HB_SUCCESS || !list) return status;
    size_t i;
    const json_t *sj;
    json_array_foreach(list, i, sj) {
        hb_json_join_index(item, at, i);
        int type = 0;
        hb_synapse_t syn;
        hb_location_t loc;
        hb_json_join(key, item, "at");
        if ((status = hb_json_need_object(ld, item, sj))) return status;
        if (json_object_get(sj, "name")) {
            if ((status = parse_point(ld, item, sj, g, model))) return status;
            continue;
        }
        if ((status = hb_json_check_keys(ld, item, sj, keys)) ||
            (status = hb_json_choice(ld, item, sj, "type", types, &type)))
            return status;
        hb_synapse_default(type ? HB_SYN_EXP2 : HB_SYN_EXP, &syn);
        /* each type its own time constants: a key of the other type is a mistake */
        const char *foreign = type ? (json_object_get(sj, "tau") ? "tau" : NULL)
                                   : json_object_get(sj, "tau1") ? "tau1"
                                   : json_object_get(sj, "tau2") ? "tau2" : NULL;
        if (foreign) {
            hb_json_join(key, item, foreign);
            return hb_json_fail(ld, key, "not a key of %s; expected %s", type ? "exp2syn" : "expsyn",
                                type ? "tau1 and tau2" : "tau");
        }
        if ((status = hb_json_number(ld, item, sj, "tau", HB_JSON_OPTIONAL, HB_JSON_POSITIVE,
                                     &syn.tau_ms)) ||
            (status = hb_json_number(ld, item, sj, "tau1", HB_JSON_OPTIONAL, HB_JSON_POSITIVE,
                                     &syn.tau1_ms)) ||
            (status = hb_json_number(ld, item, sj, "tau2", HB_JSON_OPTIONAL, HB_JSON_POSITIVE,
                                     &syn.tau2_ms)) ||
            (status = hb_json_limited(ld, item, sj, "e", HB_JSON_OPTIONAL, &hb_limit_potential, &syn.e_mv)))
            return status;
        if (!json_object_get(sj, "at")) return hb_json_fail(ld, key, "missing; expected a location");
        if ((status = parse_location(ld, key, json_object_get(sj, "at"), g, &loc)) ||
            (status = located(ld, item, hb_model_add_synapse(model, &loc, &syn, NULL))))
            return status;
    }
    return HB_SUCCESS;
}

/* Adds a pointer to one of the owner lists; 0 when out of memory. */
static int own(void ***items, int *count, void *item)
{
    void **p = realloc(*items, ((size_t)*count + 1) * sizeof *p);
    if (!p) return 0;
    p[(*count)++] = item;
    *items = p;
    return 1;
}

/* The loader takes morph and its key (may be NULL): 0 when out of memory (neither taken). */
static int own_file_morph(hb_json_loader_t *ld, hb_morph_t *morph, char *key)
{
    hb_sim_owned_t *o = &ld->owned;
    char **keys = realloc(o->morph_keys, ((size_t)o->n_morphs + 1) * sizeof *keys);
    if (!keys) return 0;
    o->morph_keys = keys;
    keys[o->n_morphs] = key;
    if (!own((void ***)&o->morphs, &o->n_morphs, morph)) return 0;
    return 1;
}

/* "spike_source": {"synapse": k}: the cell's spikes are its point process k's net_events
 * (hb_model_set_spike_source, docs/network.md). */
static hb_status_t parse_spike_source(hb_json_loader_t *ld, const char *path, const json_t *cell,
                                      hb_model_t *model)
{
    static const char *const keys[] = {"synapse", NULL};
    const json_t *src = json_object_get(cell, "spike_source");
    if (!src) return HB_SUCCESS;
    char at[HB_JSON_PATH];
    hb_json_join(at, path, "spike_source");
    hb_status_t status;
    if ((status = hb_json_need_object(ld, at, src)) || (status = hb_json_check_keys(ld, at, src, keys)))
        return status;
    long k = -1;
    if ((status = hb_json_int(ld, at, src, "synapse", 0, 1000000000, &k))) return status;
    if (k < 0) return hb_json_fail(ld, at, "expected {\"synapse\": INDEX}, a point process of the "
                                   "cell's \"synapses\" whose NET_RECEIVE calls net_event");
    if (hb_model_set_spike_source(model, (int)k) == HB_SUCCESS) return HB_SUCCESS;
    const char *why = hb_last_error();
    const char *prefix = "hb_model_set_spike_source: ";
    if (strncmp(why, prefix, strlen(prefix)) == 0) why += strlen(prefix);
    char copy[512];
    snprintf(copy, sizeof copy, "%s", why);
    return hb_json_fail(ld, at, "%s", copy);
}

/* A cell object's model: its geometry (or `given`, which then must be the only one), its
 * discretisation, mechanisms, stimuli, probes and synapses. The caller frees *morph (the
 * geometry built here, NULL with `given` or where the loader's from an earlier cell is
 * used), *key (the file and options *morph was read with, or NULL) and *model, also after a
 * failure. */
static hb_status_t cell_model(hb_json_loader_t *ld, const char *path, const json_t *cell,
                              const hb_morph_t *given, hb_morph_t **morph, char **key,
                              hb_model_t **model)
{
    *key = NULL;
    static const char *const geometry_keys[] = {"morphology", "units", "section_rule",
                                                "zero_radius", "point_precision", "cable", "sections", NULL};
    *morph = NULL;
    *model = NULL;
    hb_discretization_t disc;
    hb_status_t status;
    if ((status = parse_discretization(ld, path, cell, &disc)) ||
        (status = parse_regions(ld, path, cell, &disc)))
        return status;
    geometry_t g;
    memset(&g, 0, sizeof g);
    g.given = given;
    if (given) {
        for (int k = 0; geometry_keys[k]; k++)
            if (json_object_get(cell, geometry_keys[k])) {
                char at[HB_JSON_PATH];
                hb_json_join(at, path, geometry_keys[k]);
                return hb_json_fail(ld, at, "expected no geometry: the morphology is given");
            }
    } else {
        status = parse_geometry(ld, path, cell, disc.scheme, &g);
        if (!g.shared) {
            *morph = g.morph;
            *key = g.key;
            g.key = NULL;
        }
    }
    if (status == HB_SUCCESS) status = hb_model_create(given ? given : g.morph, &disc, model);
    if (status == HB_SUCCESS && (status = parse_mechanisms(ld, path, cell, *model)) == HB_SUCCESS &&
        (status = parse_ions(ld, path, cell, *model)) == HB_SUCCESS &&
        (status = parse_stimuli(ld, path, cell, &g, *model)) == HB_SUCCESS &&
        (status = parse_probes(ld, path, cell, &g, *model)) == HB_SUCCESS &&
        (status = parse_synapses(ld, path, cell, &g, *model)) == HB_SUCCESS)
        status = parse_spike_source(ld, path, cell, *model);
    geometry_free(&g);
    return status;
}

/* The end of a "cells" or "artificial" entry: the loader takes `morph` (a geometry read with
 * `key`; either may be NULL) and `model` (may be NULL) into its owned lists, whatever `status`
 * (the entry's build so far), then, where all went well, appends `count` copies of model to
 * cells[]. Returns status or the first failure here. */
static hb_status_t adopt_copies(hb_json_loader_t *ld, hb_status_t status, hb_morph_t *morph,
                                char *key, hb_model_t *model, long count, hb_model_t ***cells,
                                int *n_cells)
{
    if (morph && !own_file_morph(ld, morph, key)) {
        hb_morph_destroy(morph);
        free(key);
        if (status == HB_SUCCESS) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    } else if (!morph) {
        free(key);
    }
    if (model && !own((void ***)&ld->owned.models, &ld->owned.n_models, model)) {
        hb_model_destroy(model);
        if (status == HB_SUCCESS) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", ld->file);
    }
    if (status != HB_SUCCESS) return status;
    hb_model_t **p = realloc(*cells, ((size_t)*n_cells + (size_t)count) * sizeof *p);
    if (!p) return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %ld cells", ld->file, count);
    for (long k = 0; k < count; k++) p[(*n_cells)++] = model;
    *cells = p;
    return HB_SUCCESS;
}

/* One entry of "cells": appends `count` copies to cells[]. */
hb_status_t hb_sim_json_cell(hb_json_loader_t *ld, const char *path, const json_t *cell,
                              hb_model_t ***cells, int *n_cells)
{
    static const char *const keys[] = {"name", "count", "morphology", "units", "section_rule",
                                       "zero_radius", "point_precision", "cable", "sections", "discretization", "Ra",
                                       "cm", "regions", "mechanisms", "ions", "stimuli", "probes",
                                       "synapses", "spike_source", NULL};
    hb_status_t status;
    if ((status = hb_json_need_object(ld, path, cell)) || (status = hb_json_check_keys(ld, path, cell, keys))) return status;
    const json_t *name = json_object_get(cell, "name");
    if (name && !json_is_string(name)) {
        char key[HB_JSON_PATH];
        hb_json_join(key, path, "name");
        return hb_json_fail(ld, key, "expected a string, found %s", hb_json_kind(name));
    }
    long count = 1;
    if ((status = hb_json_int(ld, path, cell, "count", 1, 1000000, &count))) return status;
    hb_morph_t *morph = NULL;
    hb_model_t *model = NULL;
    char *key = NULL;
    status = cell_model(ld, path, cell, NULL, &morph, &key, &model);
    return adopt_copies(ld, status, morph, key, model, count, cells, n_cells);
}

/* One entry of a network's "artificial" ({"mechanism": "IntFire1", "count": N, "tau": 10}):
 * appends `count` copies of an artificial cell's host (hb_model_artificial, the model
 * hb_model_create_artificial makes) to cells[]. The host is a cell of one compartment without
 * mechanisms (v stays at v_init: the ARTIFICIAL_CELL reads no v and carries no current), its one
 * point process the artificial cell, its spike source where the NET_RECEIVE calls net_event;
 * the engine steps and delivers it as any cell's point process. */
hb_status_t hb_sim_json_artificial(hb_json_loader_t *ld, const char *path, const json_t *item,
                                   hb_model_t ***cells, int *n_cells)
{
    hb_status_t status;
    char key[HB_JSON_PATH], context[HB_JSON_PATH + 256];
    if ((status = hb_json_need_object(ld, path, item))) return status;
    const json_t *name = json_object_get(item, "name");
    if (name && !json_is_string(name)) {
        hb_json_join(key, path, "name");
        return hb_json_fail(ld, key, "expected a string, found %s", hb_json_kind(name));
    }
    long count = 1;
    if ((status = hb_json_int(ld, path, item, "count", 1, 1000000, &count))) return status;
    hb_json_join(key, path, "mechanism");
    const char *mname = json_string_value(json_object_get(item, "mechanism"));
    if (!mname) return hb_json_fail(ld, key, "expected an artificial cell's name (a string: an "
                                    "ARTIFICIAL_CELL of the built-in or the file's catalogues)");
    const hb_cat_mech_t *mech = NULL;
    if ((status = find_mech(ld, key, mname, HB_CAT_ARTIFICIAL, &mech))) return status;
    params_t par;
    if ((status = params_alloc(ld, item, &par))) return status;
    const char *k;
    const json_t *val;
    json_object_foreach((json_t *)item, k, val) {
        if (!strcmp(k, "name") || !strcmp(k, "count") || !strcmp(k, "mechanism")) continue;
        hb_json_join(key, path, k);
        if ((status = params_number(ld, key, k, val, &par))) break;
    }
    hb_model_t *model = NULL;
    if (!status) {
        snprintf(context, sizeof context, "%s: %s", ld->file, path);
        status = hb_model_artificial(mech, par.n, par.keys, par.values, context, &model);
    }
    params_free(&par);
    return adopt_copies(ld, status, NULL, NULL, model, count, cells, n_cells);
}

hb_status_t hb_model_parse_json(const char *text, size_t length, const char *name,
                                const char *base_dir, const hb_morph_t *morph, hb_model_t **model)
{
    static const char *const keys[] = {"name", "morphology", "units", "section_rule",
                                       "zero_radius", "point_precision", "cable", "sections", "discretization", "Ra",
                                       "cm", "regions", "mechanisms", "ions", "stimuli",
                                       "probes", "synapses", "spike_source", "catalogues", NULL};
    hb_clear_error();
    if (!model) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_parse_json: model is NULL");
    *model = NULL;
    if (!text) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_parse_json: text is NULL");
    hb_json_loader_t ld = {name ? name : "cell", base_dir, {0, 0, NULL, NULL, NULL}, NULL, {NULL}, 0};
    json_error_t err;
    json_t *cell = json_loadb(text, length, JSON_REJECT_DUPLICATES, &err);
    if (!cell)
        return hb_fail(HB_ERR_PARSE, "%s:%d:%d: %s", ld.file, err.line, err.column, err.text);
    hb_morph_t *own_morph = NULL;
    hb_model_t *out = NULL;
    char *key = NULL;
    hb_status_t status;
    if (!json_is_object(cell))
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: expected a cell object, found %s", ld.file,
                         hb_json_kind(cell));
    else if ((status = hb_json_check_keys(&ld, "", cell, keys)) == HB_SUCCESS &&
             (status = hb_json_catalogues(&ld, cell)) == HB_SUCCESS)
        status = cell_model(&ld, "", cell, morph, &own_morph, &key, &out);
    free(key);
    json_decref(cell);
    if (status != HB_SUCCESS) {
        hb_model_destroy(out);
        hb_morph_destroy(own_morph);
        return status;
    }
    out->owned_morph = own_morph;
    *model = out;
    return HB_SUCCESS;
}

/* Whether the loader's overrides replace any of the options in `bits`. */
static int overridden(const hb_json_loader_t *ld, unsigned bits)
{
    return ld->overrides && (ld->overrides->set & bits);
}

/* The caller's overrides replace the file's options, checked as the file's would be (the
 * backend once the file's is read). */
static hb_status_t apply_overrides(const hb_json_loader_t *ld, hb_sim_options_t *opt)
{
    const hb_sim_overrides_t *o = ld->overrides;
    if (!o) return HB_SUCCESS;
    const hb_sim_options_t *v = &o->options;
    if (o->set & ~(unsigned)(HB_SIM_SET_DT | HB_SIM_SET_T_STOP | HB_SIM_SET_BACKEND |
                             HB_SIM_SET_THREADS))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: overrides: set = 0x%x; expected HB_SIM_SET_* "
                       "bits", ld->file, o->set);
    if ((o->set & HB_SIM_SET_DT) && !(isfinite(v->dt_ms) && v->dt_ms > 0.0))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: dt override %g ms; expected a finite number "
                       "> 0", ld->file, v->dt_ms);
    if ((o->set & HB_SIM_SET_T_STOP) && !(isfinite(v->t_stop_ms) && v->t_stop_ms >= 0.0))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: t_stop override %g ms; expected a finite "
                       "number >= 0", ld->file, v->t_stop_ms);
    if ((o->set & HB_SIM_SET_BACKEND) &&
        !(v->backend == HB_BACKEND_SEQ || v->backend == HB_BACKEND_OMP ||
          v->backend == HB_BACKEND_CUDA || v->backend == HB_BACKEND_BEST))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: backend override %d; expected an "
                       "hb_backend_t", ld->file, (int)v->backend);
    if ((o->set & HB_SIM_SET_THREADS) && (v->threads < 0 || v->threads > HB_MAX_THREADS))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: threads override %d; expected 0..%d",
                       ld->file, v->threads, HB_MAX_THREADS);
    if (o->set & HB_SIM_SET_DT) opt->dt_ms = v->dt_ms;
    if (o->set & HB_SIM_SET_T_STOP) opt->t_stop_ms = v->t_stop_ms;
    if (o->set & HB_SIM_SET_THREADS) opt->threads = v->threads;
    return HB_SUCCESS;
}

hb_status_t hb_sim_json_options(const hb_json_loader_t *ld, const json_t *root, hb_sim_options_t *opt)
{
    static const char *const methods[] = {"euler", "cn", NULL};
    static const char *const rules[] = {"step", "interpolate", NULL};
    static const char *const backends[] = {"seq", "omp", "cuda", "best", NULL};
    hb_sim_options_default(opt);
    int method = 0, rule = 0, backend = 0;
    hb_status_t status;
    if ((status = hb_json_number(ld, "", root, "t_stop", HB_JSON_REQUIRED, HB_JSON_NON_NEGATIVE, &opt->t_stop_ms)) ||
        (status = hb_json_number(ld, "", root, "dt", HB_JSON_OPTIONAL, HB_JSON_POSITIVE, &opt->dt_ms)) ||
        (status = hb_json_limited(ld, "", root, "v_init", HB_JSON_OPTIONAL, &hb_limit_potential, &opt->v_init_mv)) ||
        (status = hb_json_limited(ld, "", root, "celsius", HB_JSON_OPTIONAL, &hb_limit_celsius, &opt->celsius)) ||
        (status = hb_json_number(ld, "", root, "sample_dt", HB_JSON_OPTIONAL, HB_JSON_NON_NEGATIVE, &opt->sample_dt_ms)) ||
        (status = hb_json_choice(ld, "", root, "method", methods, &method)) ||
        (status = hb_json_choice(ld, "", root, "spike_time", rules, &rule)) ||
        (status = hb_json_choice(ld, "", root, "backend", backends, &backend)))
        return status;
    if ((status = apply_overrides(ld, opt))) return status;
    /* the step count fits a long only up to HB_SIM_MAX_STEPS (checked as doubles) */
    const double steps = opt->t_stop_ms / opt->dt_ms, every = opt->sample_dt_ms / opt->dt_ms;
    if (!(steps <= (double)HB_SIM_MAX_STEPS))
        return hb_json_fail(ld, overridden(ld, HB_SIM_SET_T_STOP | HB_SIM_SET_DT) ?
                            "t_stop (with the overrides)" : "t_stop", "%g ms at dt = %g ms is %.3g steps; expected at most %.0e "
                            "steps", opt->t_stop_ms, opt->dt_ms, steps, (double)HB_SIM_MAX_STEPS);
    if (!(every <= (double)HB_SIM_MAX_STEPS))
        return hb_json_fail(ld, "sample_dt", "%g ms at dt = %g ms is %.3g steps; expected at most "
                            "%.0e steps", opt->sample_dt_ms, opt->dt_ms, every,
                            (double)HB_SIM_MAX_STEPS);
    const json_t *table = json_object_get(root, "hh_table");
    if (table && !json_is_boolean(table))
        return hb_json_fail(ld, "hh_table", "expected true or false, found %s", hb_json_kind(table));
    opt->hh_table = table ? json_is_true(table) : 1;
    opt->method = method ? HB_METHOD_CN : HB_METHOD_EULER;
    opt->spike_time = rule ? HB_SPIKE_INTERPOLATE : HB_SPIKE_STEP;
    opt->backend = (hb_backend_t)backend; /* in hb_backend_t's order */
    if (overridden(ld, HB_SIM_SET_BACKEND)) opt->backend = ld->overrides->options.backend;
    return HB_SUCCESS;
}

static hb_status_t load(hb_json_loader_t *ld, const json_t *root, hb_sim_t **sim)
{
    static const char *const keys[] = {"t_stop", "dt", "v_init", "celsius", "sample_dt", "method",
                                       "spike_time", "backend", "hh_table", "cells",
                                       "catalogues", NULL};
    hb_status_t status;
    if (!json_is_object(root))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: expected an object at the top, found %s", ld->file,
                       hb_json_kind(root));
    if ((status = hb_json_check_keys(ld, "", root, keys)) || (status = hb_json_catalogues(ld, root)))
        return status;
    hb_sim_options_t opt;
    if ((status = hb_sim_json_options(ld, root, &opt))) return status;
    const json_t *cells = json_object_get(root, "cells");
    if (!json_is_array(cells) || json_array_size(cells) == 0)
        return hb_json_fail(ld, "cells", "expected a non-empty array of cells, found %s",
                       !cells ? "nothing" : json_is_array(cells) ? "an empty array" : hb_json_kind(cells));
    hb_model_t **list = NULL;
    int n = 0;
    size_t i;
    const json_t *cell;
    json_array_foreach(cells, i, cell) {
        char at[HB_JSON_PATH];
        hb_json_join_index(at, "cells", i);
        if ((status = hb_sim_json_cell(ld, at, cell, &list, &n)) != HB_SUCCESS) break;
    }
    if (status == HB_SUCCESS) status = hb_sim_create(list, n, &opt, sim);
    if (status == HB_SUCCESS) hb_sim_adopt(*sim, &ld->owned);
    free(list);
    return status;
}

static hb_status_t finish(hb_json_loader_t *ld, json_t *root, const json_error_t *err, hb_sim_t **sim)
{
    hb_status_t status;
    if (!root) {
        status = hb_fail(HB_ERR_PARSE, "%s:%d:%d: %s", ld->file, err->line, err->column, err->text);
    } else {
        status = load(ld, root, sim);
        json_decref(root);
    }
    hb_sim_owned_free(&ld->owned); /* empty when the simulation took it */
    return status;
}

hb_status_t hb_sim_parse_json(const char *text, size_t length, const char *name,
                              const char *base_dir, hb_sim_t **sim)
{
    return hb_sim_parse_json_with(text, length, name, base_dir, NULL, sim);
}

hb_status_t hb_sim_parse_json_with(const char *text, size_t length, const char *name,
                                   const char *base_dir, const hb_sim_overrides_t *overrides,
                                   hb_sim_t **sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_parse_json: sim is NULL");
    *sim = NULL;
    if (!text) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_parse_json: text is NULL");
    hb_json_loader_t ld = {name ? name : "model", base_dir, {0, 0, NULL, NULL, NULL}, overrides, {NULL}, 0};
    json_error_t err;
    json_t *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &err);
    return finish(&ld, root, &err, sim);
}

hb_status_t hb_sim_load_json(const char *path, hb_sim_t **sim)
{
    return hb_sim_load_json_with(path, NULL, sim);
}

hb_status_t hb_sim_load_json_with(const char *path, const hb_sim_overrides_t *overrides,
                                  hb_sim_t **sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_load_json: sim is NULL");
    *sim = NULL;
    if (!path) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_load_json: path is NULL");
    char dir[4096];
    json_t *root = NULL;
    hb_status_t status = hb_json_load_file(path, dir, sizeof dir, &root);
    if (status != HB_SUCCESS) return status;
    hb_json_loader_t ld = {path, dir, {0, 0, NULL, NULL, NULL}, overrides, {NULL}, 0};
    json_error_t err;
    memset(&err, 0, sizeof err);
    return finish(&ld, root, &err, sim);
}
