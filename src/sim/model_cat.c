/*
 * Catalogue mechanisms and ion values in a model (docs/mechanisms.md, docs/model.md): which
 * nodes have which mechanism with which RANGE PARAMETERs, the GLOBALs, and the ions' values per
 * region. The simulation's layout (src/sim/sim_cat.c) turns them into the group's arrays.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cat_step.h"
#include "common/nearest_name.h"
#include "common/status.h"
#include "core/morph.h"
#include "mech/catalogue.h"
#include "sim/sim.h"

void hb_ion_defaults(const char *ion, double *e, double *ci, double *co)
{
    /* NEURON 8.2's ion_reg defaults (ena, nai0_na_ion, ...); other species 0 mV, 1 mM, 1 mM */
    if (!strcmp(ion, "na")) *e = 50.0, *ci = 10.0, *co = 140.0;
    else if (!strcmp(ion, "k")) *e = -77.0, *ci = 54.4, *co = 2.5;
    else if (!strcmp(ion, "ca")) *e = 132.4579341637009, *ci = 5e-5, *co = 2.0;
    else *e = 0.0, *ci = 1.0, *co = 1.0;
}

/* The model's entry of `mech`, made (in name order) when `make`; NULL: none or no memory. */
static hb_model_cat_t *model_cat(hb_model_t *model, const hb_cat_mech_t *mech, int make)
{
    int at = 0;
    for (; at < model->n_cat; at++) {
        if (model->cat[at].mech == mech) return &model->cat[at];
        if (strcmp(model->cat[at].mech->name, mech->name) > 0) break;
    }
    if (!make) return NULL;
    hb_model_cat_t *grown = realloc(model->cat, (size_t)(model->n_cat + 1) * sizeof *grown);
    if (!grown) return NULL;
    model->cat = grown;
    hb_model_cat_t mc = {mech, calloc((size_t)model->m + 1, 1),
                         calloc((size_t)model->m * (size_t)mech->n_param + 1, sizeof(double)),
                         calloc((size_t)mech->n_global + 1, sizeof(double))};
    if (!mc.on || !mc.param || !mc.global) {
        free(mc.on);
        free(mc.param);
        free(mc.global);
        return NULL;
    }
    for (int q = 0; q < mech->n_global; q++) mc.global[q] = mech->global[q].value;
    memmove(&model->cat[at + 1], &model->cat[at], (size_t)(model->n_cat - at) * sizeof mc);
    model->cat[at] = mc;
    model->n_cat++;
    return &model->cat[at];
}

/* Index of field `key` among fields[0 .. n), or -1 with the message naming the nearest. */
static int field_index(const hb_cat_field_t *fields, int n, const char *key, const char *mech,
                       const char *what, const char *context)
{
    for (int q = 0; q < n; q++)
        if (!strcmp(fields[q].name, key)) return q;
    const char *names[257];
    const int count = n < 256 ? n : 256;
    for (int q = 0; q < count; q++) names[q] = fields[q].name;
    names[count] = NULL;
    const char *near = hb_nearest_name(key, names);
    char list[512] = "";
    for (int q = 0; q < count && strlen(list) < sizeof list - 80; q++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", q ? ", " : "",
                 names[q]);
    if (near)
        hb_fail(HB_ERR_INVALID_VALUE, "%s: %s has no %s \"%s\"; did you mean \"%s\"?", context,
                mech, what, key, near);
    else
        hb_fail(HB_ERR_INVALID_VALUE, "%s: %s has no %s \"%s\"; expected one of: %s", context,
                mech, what, key, count ? list : "(none)");
    return -1;
}

/* value within the field's <lo,hi> (and finite). */
static hb_status_t check_range(const hb_cat_field_t *f, double value, const char *mech,
                               const char *context)
{
    if (isfinite(value) && value >= f->lo && value <= f->hi) return HB_SUCCESS;
    char range[96] = "a finite number";
    if (isfinite(f->lo) || isfinite(f->hi))
        snprintf(range, sizeof range, "a number from %g to %g", f->lo, f->hi);
    return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s's %s = %g %s; expected %s (the .mod's <lo,hi>)",
                   context, mech, f->name, value, f->unit ? f->unit : "", range);
}

hb_status_t hb_model_insert_cat(hb_model_t *model, int swc_type, const hb_cat_mech_t *mech,
                                int n, const char *const *keys, const double *values,
                                const char *context)
{
    if (!context) context = "hb_model_insert_cat";
    if (!model || !mech || (n > 0 && (!keys || !values)))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", context);
    if (mech->kind != HB_CAT_DENSITY)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: %s is a point process; only density "
                       "mechanisms are inserted in regions", context, mech->name);
    if (mech->n_ion > HB_CAT_MAX_ION)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: %s uses %d ions; at most %d are supported",
                       context, mech->name, mech->n_ion, HB_CAT_MAX_ION);
    if (swc_type != HB_REGION_ALL && (swc_type < 0 || swc_type >= HB_SWC_TYPES))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: region %d; expected -1 (all) or 0..%d",
                       context, swc_type, HB_SWC_TYPES - 1);
    double *set = malloc(((size_t)mech->n_param + 1) * sizeof *set);
    if (!set) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", context);
    for (int q = 0; q < mech->n_param; q++) set[q] = mech->param[q].value;
    for (int i = 0; i < n; i++) {
        const int q = field_index(mech->param, mech->n_param, keys[i], mech->name, "parameter",
                                  context);
        hb_status_t status = q < 0 ? HB_ERR_INVALID_VALUE
                                   : check_range(&mech->param[q], values[i], mech->name, context);
        if (status != HB_SUCCESS) {
            free(set);
            return status;
        }
        set[q] = values[i];
    }
    hb_model_cat_t *mc = model_cat(model, mech, 1);
    if (!mc) {
        free(set);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", context);
    }
    hb_node_info_t info;
    for (int j = 0; j < model->m; j++) {
        hb_cable_node(model->cable, j, &info);
        if (!(info.area_um2 > 0.0) || (swc_type != HB_REGION_ALL && info.swc_type != swc_type))
            continue;
        mc->on[j] = 1;
        memcpy(&mc->param[(size_t)j * (size_t)mech->n_param], set,
               (size_t)mech->n_param * sizeof *set);
    }
    free(set);
    return HB_SUCCESS;
}

/* The RANGE PARAMETERs of mech: the defaults but keys[i] = values[i] (checked); NULL: refused. */
static hb_status_t parameters(const hb_cat_mech_t *mech, int n, const char *const *keys,
                              const double *values, const char *context, double **out)
{
    double *set = malloc(((size_t)mech->n_param + 1) * sizeof *set);
    *out = NULL;
    if (!set) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", context);
    for (int q = 0; q < mech->n_param; q++) set[q] = mech->param[q].value;
    for (int i = 0; i < n; i++) {
        const int q = field_index(mech->param, mech->n_param, keys[i], mech->name, "parameter",
                                  context);
        if (q < 0 || check_range(&mech->param[q], values[i], mech->name, context) != HB_SUCCESS) {
            free(set);
            return HB_ERR_INVALID_VALUE;
        }
        set[q] = values[i];
    }
    *out = set;
    return HB_SUCCESS;
}

hb_status_t hb_model_add_point(hb_model_t *model, const hb_location_t *where,
                               const hb_cat_mech_t *mech, int n, const char *const *keys,
                               const double *values, const char *context, int *index)
{
    if (!context) context = "hb_model_add_point";
    if (!model || !where || !mech || (n > 0 && (!keys || !values)))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", context);
    const hb_cat_kind_t want = model->artificial ? HB_CAT_ARTIFICIAL : HB_CAT_POINT;
    if (mech->kind != want)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s is %s; expected %s", context, mech->name,
                       mech->kind == HB_CAT_DENSITY ? "a density mechanism (SUFFIX; inserted in regions)"
                       : mech->kind == HB_CAT_POINT ? "a point process (POINT_PROCESS; a cell's synapse)"
                                                    : ("an artificial cell (ARTIFICIAL_CELL; "
                                                       "hb_model_create_artificial)"),
                       model->artificial ? "an artificial cell (ARTIFICIAL_CELL)"
                                         : "a point process (POINT_PROCESS)");
    if (model->artificial && model->n_synapses > 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s: the host of an artificial cell holds one; "
                       "expected no other point process", context, mech->name);
    if (mech->n_ion > HB_CAT_MAX_ION)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: %s uses %d ions; at most %d are supported",
                       context, mech->name, mech->n_ion, HB_CAT_MAX_ION);
    int node;
    hb_status_t status = hb_model_locate(model, where, &node);
    if (status != HB_SUCCESS) return status;
    hb_node_info_t info;
    hb_cable_node(model->cable, node, &info);
    if (!(info.area_um2 > 0.0))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s: node %d has no membrane (a zero-area "
                       "node); expected a location inside a segment", context, mech->name, node);
    double *param;
    if ((status = parameters(mech, n, keys, values, context, &param)) != HB_SUCCESS) return status;
    hb_model_synapse_t *grown =
        realloc(model->synapses, ((size_t)model->n_synapses + 1) * sizeof *grown);
    if (!grown) {
        free(param);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", context);
    }
    model->synapses = grown;
    model->cap_synapses = model->n_synapses + 1;
    hb_synapse_t none;
    hb_synapse_default(HB_SYN_EXP, &none);
    if (index) *index = model->n_synapses;
    model->synapses[model->n_synapses++] = (hb_model_synapse_t){node, none, mech, param};
    model->n_points++;
    return HB_SUCCESS;
}

int hb_model_hand_synapse(const hb_model_t *model, int k)
{
    if (model->n_points == 0) return k;
    int h = 0;
    for (int q = 0; q < k; q++) h += model->synapses[q].mech == NULL;
    return h;
}

hb_status_t hb_model_add_point_process(hb_model_t *model, const hb_location_t *where,
                                       const char *name, int n, const char *const *keys,
                                       const double *values, int *index)
{
    hb_clear_error();
    if (!name) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_add_point_process: name is NULL");
    const hb_cat_mech_t *mech = NULL;
    hb_status_t status = hb_catalogue_find_loaded(name, &mech);
    if (status != HB_SUCCESS) return status;
    return hb_model_add_point(model, where, mech, n, keys, values, "hb_model_add_point_process",
                              index);
}

hb_status_t hb_model_artificial(const hb_cat_mech_t *mech, int n, const char *const *keys,
                                const double *values, const char *context, hb_model_t **model)
{
    if (!context) context = "hb_model_artificial";
    if (!model || !mech) return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", context);
    *model = NULL;
    /* one compartment of 10 um x 10 um, nseg 1 in NEURON's scheme: the area is never read (no
     * current), so any host gives the same spikes */
    const hb_section_spec_t host = {"soma", -1, 1.0, 10.0, 10.0, 1};
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.policy = HB_CPOLICY_FIXED;
    disc.count = 1;
    disc.scheme = HB_SCHEME_NEURON;
    hb_morph_t *morph = NULL;
    hb_model_t *out = NULL;
    hb_status_t status = hb_model_build_sections(&host, 1, mech->name, &morph, NULL);
    if (status == HB_SUCCESS) status = hb_model_create(morph, &disc, &out);
    if (status != HB_SUCCESS) {
        hb_morph_destroy(morph);
        return status;
    }
    out->owned_morph = morph; /* freed with the model from here on */
    out->artificial = 1;
    const hb_location_t at = {.kind = HB_LOC_SECTION, .section = 0, .x = 0.5};
    status = hb_model_add_point(out, &at, mech, n, keys, values, context, NULL);
    if (status == HB_SUCCESS && mech->net_event) status = hb_model_set_spike_source(out, 0);
    if (status != HB_SUCCESS) {
        hb_model_destroy(out);
        return status;
    }
    *model = out;
    return HB_SUCCESS;
}

hb_status_t hb_model_create_artificial(const char *name, int n, const char *const *keys,
                                       const double *values, hb_model_t **model)
{
    static const char *const fn = "hb_model_create_artificial";
    hb_clear_error();
    if (!model) return hb_fail(HB_ERR_INVALID_VALUE, "%s: model is NULL", fn);
    *model = NULL;
    if (!name) return hb_fail(HB_ERR_INVALID_VALUE, "%s: name is NULL", fn);
    if (n < 0 || (n > 0 && (!keys || !values)))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %d parameters, keys %s, values %s; expected "
                       "n >= 0 and both arrays for n > 0", fn, n, keys ? "given" : "NULL",
                       values ? "given" : "NULL");
    for (int i = 0; i < n; i++)
        if (!keys[i]) return hb_fail(HB_ERR_INVALID_VALUE, "%s: keys[%d] is NULL", fn, i);
    const hb_cat_mech_t *mech = NULL;
    if (hb_catalogue_find_loaded(name, &mech) != HB_SUCCESS) {
        char why[768];
        snprintf(why, sizeof why, "%s", hb_last_error());
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s", fn, why);
    }
    return hb_model_artificial(mech, n, keys, values, fn, model);
}

hb_status_t hb_model_set_spike_source(hb_model_t *model, int synapse)
{
    hb_clear_error();
    if (!model) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_spike_source: model is NULL");
    if (synapse < -1 || synapse >= model->n_synapses)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_spike_source: synapse %d; expected "
                       "-1 (the detector probe) or a synapse of the model (it has %d)", synapse,
                       model->n_synapses);
    if (synapse >= 0) {
        const hb_cat_mech_t *mech = model->synapses[synapse].mech;
        if (!mech || !mech->net_event)
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_spike_source: synapse %d (%s) "
                           "sends no events; expected a point process whose NET_RECEIVE calls "
                           "net_event", synapse,
                           mech ? mech->name : hb_synapse_name(model->synapses[synapse].syn.kind));
        for (int p = 0; p < model->n_probes; p++)
            if (model->probes[p].detect_spikes)
                return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_spike_source: probe %d "
                               "detects the cell's spikes already; expected one spike source a "
                               "cell (NEURON: one source a gid), a probe without "
                               "spike_threshold", p);
    }
    model->spike_source = synapse;
    return HB_SUCCESS;
}

/* Path distance [um] from the root section's x = 0.5 to (section s, x), through the parents. */
static double soma_distance(const hb_morph_t *morph, int s, double x)
{
    double d = 0.0;
    for (; s > 0; s = morph->sections[s].parent) {
        d += x * morph->sections[s].length;
        x = morph->sections[s].parent_x;
    }
    return d + fabs(x - 0.5) * morph->sections[0].length;
}

hb_status_t hb_model_set_cat_by_distance(hb_model_t *model, int swc_type,
                                         const hb_cat_mech_t *mech, const char *key, double value,
                                         const double abc[3], const char *context)
{
    if (!context) context = "hb_model_set_cat_by_distance";
    if (!model || !mech || !key || !abc)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", context);
    const int q = field_index(mech->param, mech->n_param, key, mech->name, "parameter", context);
    if (q < 0) return HB_ERR_INVALID_VALUE;
    hb_model_cat_t *mc = model_cat(model, mech, 0);
    if (!mc)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s is not inserted; expected it inserted in the "
                       "region before its distribution", context, mech->name);
    hb_node_info_t info;
    for (int j = 0; j < model->m; j++) {
        hb_cable_node(model->cable, j, &info);
        if (!mc->on[j] || (swc_type != HB_REGION_ALL && info.swc_type != swc_type)) continue;
        const double d = soma_distance(model->morph, info.section, info.x);
        const double g = (abc[0] + abc[1] * exp(d * abc[2])) * value;
        hb_status_t status = check_range(&mech->param[q], g, mech->name, context);
        if (status != HB_SUCCESS) return status;
        mc->param[(size_t)j * (size_t)mech->n_param + (size_t)q] = g;
    }
    return HB_SUCCESS;
}

hb_status_t hb_model_set_cat_global(hb_model_t *model, const hb_cat_mech_t *mech,
                                    const char *key, double value, const char *context)
{
    if (!context) context = "hb_model_set_cat_global";
    if (!model || !mech || !key) return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", context);
    hb_model_cat_t *mc = model_cat(model, mech, 0);
    if (!mc)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s is not inserted in the model", context,
                       mech->name);
    const int q = field_index(mech->global, mech->n_global, key, mech->name, "GLOBAL", context);
    if (q < 0) return HB_ERR_INVALID_VALUE;
    hb_status_t status = check_range(&mech->global[q], value, mech->name, context);
    if (status == HB_SUCCESS) mc->global[q] = value;
    return status;
}

hb_status_t hb_model_set_ion(hb_model_t *model, int swc_type, const char *ion, unsigned what,
                             double value)
{
    if (!model || !ion) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_ion: NULL argument");
    if (!*ion || strlen(ion) >= sizeof model->ion_set->ion)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_ion: ion \"%s\"; expected a name of "
                       "1 to %d characters", ion, (int)sizeof model->ion_set->ion - 1);
    if (what != HB_ION_E && what != HB_ION_CI && what != HB_ION_CO)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_ion: what %u; expected HB_ION_E, "
                       "HB_ION_CI or HB_ION_CO", what);
    if (swc_type != HB_REGION_ALL && (swc_type < 0 || swc_type >= HB_SWC_TYPES))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_set_ion: region %d; expected -1 (all) or "
                       "0..%d", swc_type, HB_SWC_TYPES - 1);
    if (what == HB_ION_E) {
        const hb_status_t status = hb_limit_check(&hb_limit_potential, value, "ion: e");
        if (status != HB_SUCCESS) return status;
    } else if (!(value > 0.0 && value < 1e6)) {
        return hb_fail(HB_ERR_INVALID_VALUE, "ion: %s concentration %g mM; expected a number "
                       "above 0 and below 1e6 [mM]", ion, value);
    }
    hb_model_ion_set_t *grown =
        realloc(model->ion_set, (size_t)(model->n_ion_set + 1) * sizeof *grown);
    if (!grown) return hb_fail(HB_ERR_ALLOC, "hb_model_set_ion: out of memory");
    model->ion_set = grown;
    hb_model_ion_set_t *s = &grown[model->n_ion_set++];
    memset(s, 0, sizeof *s);
    memcpy(s->ion, ion, strlen(ion));
    s->swc_type = swc_type;
    s->what = what;
    s->value = value;
    return HB_SUCCESS;
}
