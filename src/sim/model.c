/*
 * A cell model: the compartments of a morphology (hb_cable_t), mechanisms per
 * region, IClamps and probes at locations; and geometry given as sections.
 */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/morphology.h"
#include "common/status.h"
#include "sim/sim.h"

/* ---- the accepted ranges (docs/model.md, section 6) ---- */

const hb_limit_t hb_limit_ra = {"Ra", 1e-3, 1e9, 0, "ohm cm"};
const hb_limit_t hb_limit_cm = {"cm", 1e-3, 1e3, 0, "uF/cm2"};
const hb_limit_t hb_limit_length = {"length", 1e-3, 1e7, 0, "um"};
const hb_limit_t hb_limit_diam = {"diam", 1e-3, 1e5, 0, "um"};
const hb_limit_t hb_limit_celsius = {"celsius", -273.15, 100.0, 0, "degC"};
const hb_limit_t hb_limit_potential = {"potential", -1e3, 1e3, 0, "mV"};
const hb_limit_t hb_limit_conductance = {"conductance", 0.0, 1e3, 0, "S/cm2"};
const hb_limit_t hb_limit_amp = {"amp", -1e6, 1e6, 0, "nA"};

int hb_limit_ok(const hb_limit_t *l, double x)
{
    return (l->lo_open ? x > l->lo : x >= l->lo) && x <= l->hi;
}

void hb_limit_expect(const hb_limit_t *l, char *out, size_t size)
{
    if (l->lo_open) snprintf(out, size, "a number > %g and <= %g [%s]", l->lo, l->hi, l->unit);
    else snprintf(out, size, "a number from %g to %g [%s]", l->lo, l->hi, l->unit);
}

hb_status_t hb_limit_check(const hb_limit_t *l, double x, const char *context)
{
    if (hb_limit_ok(l, x)) return HB_SUCCESS;
    char expect[128];
    hb_limit_expect(l, expect, sizeof expect);
    return hb_fail(HB_ERR_INVALID_VALUE, "%s = %g %s; expected %s", context, x, l->unit, expect);
}

/* ---- sections to samples ---- */

static hb_status_t check_section_spec(const hb_section_spec_t *s, int i, const char *name)
{
    const char *sn = s->name ? s->name : "";
    if (i == 0 && s->parent != -1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: section 0 '%s' must be the root (parent -1)", name, sn);
    if (i > 0 && (s->parent < 0 || s->parent >= i))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: section %d '%s' has parent %d; expected a section before it (0..%d)",
                       name, i, sn, s->parent, i - 1);
    if (i > 0 && s->parent_x != 1.0 && !(s->parent_x == 0.0 && s->parent == 0))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: section %d '%s' attaches at x = %g; expected 1 (or 0 on the root)",
                       name, i, sn, s->parent_x);
    char length[512], diam[512];
    snprintf(length, sizeof length, "%s: section %d '%s': length", name, i, sn);
    snprintf(diam, sizeof diam, "%s: section %d '%s': diam", name, i, sn);
    hb_status_t status;
    if ((status = hb_limit_check(&hb_limit_length, s->length_um, length)) != HB_SUCCESS ||
        (status = hb_limit_check(&hb_limit_diam, s->diam_um, diam)) != HB_SUCCESS)
        return status;
    if (s->swc_type < 0 || s->swc_type >= HB_SWC_TYPES)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: section %d '%s' has type %d; expected 0..%d",
                       name, i, sn, s->swc_type, HB_SWC_TYPES - 1);
    return HB_SUCCESS;
}

/*
 * Samples: the root section has a start sample (id 0); section k ends at sample
 * k + 1, whose parent is the parent's end (x = 1) or the root's start (x = 0).
 * Sections are straight lines fanned out in the x-y plane (the geometry does not
 * matter electrically). A child starts at its parent's branch sample with that
 * sample's radius (docs/swc.md); the first radius is set to the section's own
 * afterwards, so that every section is a cylinder.
 */
hb_status_t hb_model_build_sections(const hb_section_spec_t *sections, int count,
                                    const char *name, hb_morph_t **morph, int *morph_section)
{
    hb_clear_error();
    if (!morph) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_build_sections: morph is NULL");
    *morph = NULL;
    if (!name) name = "sections";
    if (!sections || count < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: no sections; expected at least one", name);
    hb_status_t status;
    for (int i = 0; i < count; i++)
        if ((status = check_section_spec(&sections[i], i, name)) != HB_SUCCESS) return status;
    int *children = calloc((size_t)count, sizeof *children);
    hb_sample_t *samples = calloc((size_t)count + 1, sizeof *samples);
    double *angle = calloc((size_t)count, sizeof *angle);
    if (!children || !samples || !angle) {
        status = hb_fail(HB_ERR_ALLOC, "%s: out of memory building sections", name);
        goto done;
    }
    for (int i = 1; i < count; i++)
        if (sections[i].parent_x == 1.0) children[sections[i].parent]++;
    for (int i = 1; i < count; i++) {
        const hb_section_spec_t *s = &sections[i];
        if (s->parent_x == 1.0 && children[s->parent] == 1 &&
            sections[s->parent].swc_type == s->swc_type) {
            status = hb_fail(HB_ERR_INVALID_VALUE,
                             "%s: section %d '%s' is the only child of '%s' and has its type %d, so "
                             "the two would be one section; give it another type or merge them",
                             name, i, s->name ? s->name : "",
                             sections[s->parent].name ? sections[s->parent].name : "", s->swc_type);
            goto done;
        }
    }
    samples[0].id = 0;
    samples[0].type = sections[0].swc_type;
    samples[0].radius = 0.5 * sections[0].diam_um;
    samples[0].parent = -1;
    for (int i = 0; i < count; i++) {
        const hb_section_spec_t *s = &sections[i];
        hb_sample_t *start = i == 0 || s->parent_x == 0.0 ? &samples[0] : &samples[s->parent + 1];
        angle[i] = i == 0 ? 0.0 : angle[s->parent] + 0.3 * (double)(i % 7 - 3);
        hb_sample_t *end = &samples[i + 1];
        end->id = i + 1;
        end->type = s->swc_type;
        end->x = start->x + s->length_um * cos(angle[i]);
        end->y = start->y + s->length_um * sin(angle[i]);
        end->z = 0.0;
        end->radius = 0.5 * s->diam_um;
        end->parent = start->id;
    }
    hb_morph_t *mo = NULL;
    status = hb_morph_from_samples(samples, count + 1, name, &mo);
    if (status != HB_SUCCESS) goto done;
    if (mo->n_sections != count) {
        status = hb_fail(HB_ERR_MORPHOLOGY, "%s: %d sections became %d", name, count, mo->n_sections);
        hb_morph_destroy(mo);
        goto done;
    }
    for (int k = 0; k < mo->n_sections; k++) {
        hb_section_t *sec = &mo->sections[k];
        long end_id = mo->samples[sec->sample[sec->n_points - 1]].id;
        int i = (int)end_id - 1;
        sec->radius[0] = 0.5 * sections[i].diam_um; /* a cylinder, not a taper from the parent */
        if (morph_section) morph_section[i] = k;
    }
    *morph = mo;
done:
    free(children);
    free(samples);
    free(angle);
    return status;
}

/* ---- the model ---- */

/* Models alive now and the most since the last reset (hb_model_live). */
static _Atomic long live_models, peak_models;

long hb_model_live(int reset_peak, long *peak)
{
    if (reset_peak) atomic_store(&peak_models, atomic_load(&live_models));
    if (peak) *peak = atomic_load(&peak_models);
    return atomic_load(&live_models);
}

static void count_model(long change)
{
    const long now = atomic_fetch_add(&live_models, change) + change;
    long most = atomic_load(&peak_models);
    while (now > most && !atomic_compare_exchange_weak(&peak_models, &most, now)) {
    }
}

hb_status_t hb_model_create(const hb_morph_t *morph, const hb_discretization_t *disc,
                            hb_model_t **model)
{
    hb_clear_error();
    if (!model) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_create: model is NULL");
    *model = NULL;
    if (!morph || !disc)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_create: morphology or options is NULL");
    hb_status_t status;
    if ((status = hb_limit_check(&hb_limit_ra, disc->ra_ohm_cm, "hb_model_create: Ra")) != HB_SUCCESS ||
        (status = hb_limit_check(&hb_limit_cm, disc->cm_uf_cm2, "hb_model_create: cm")) != HB_SUCCESS)
        return status;
    for (int t = 0; t < HB_SWC_TYPES; t++) { /* 0: unset */
        char ra[64], cm[64];
        snprintf(ra, sizeof ra, "hb_model_create: Ra of region %d", t);
        snprintf(cm, sizeof cm, "hb_model_create: cm of region %d", t);
        if ((disc->ra_by_type[t] != 0.0 &&
             (status = hb_limit_check(&hb_limit_ra, disc->ra_by_type[t], ra)) != HB_SUCCESS) ||
            (disc->cm_by_type[t] != 0.0 &&
             (status = hb_limit_check(&hb_limit_cm, disc->cm_by_type[t], cm)) != HB_SUCCESS))
            return status;
    }
    hb_model_t *md = calloc(1, sizeof *md);
    if (!md) return hb_fail(HB_ERR_ALLOC, "hb_model_create: out of memory");
    status = hb_cable_create(morph, disc, &md->cable);
    if (status != HB_SUCCESS) {
        free(md);
        return status;
    }
    count_model(1);
    md->spike_source = -1;
    md->morph = morph;
    md->scheme = disc->scheme;
    md->m = hb_cable_size(md->cable);
    const size_t m = (size_t)md->m;
    md->has_pas = calloc(m, 1);
    md->has_hh = calloc(m, 1);
    md->pas_g = calloc(m, sizeof *md->pas_g);
    md->pas_e = calloc(m, sizeof *md->pas_e);
    md->hh = calloc(m * HB_HH_NPAR, sizeof *md->hh);
    if (!md->has_pas || !md->has_hh || !md->pas_g || !md->pas_e || !md->hh) {
        hb_model_destroy(md);
        return hb_fail(HB_ERR_ALLOC, "hb_model_create: out of memory for %d nodes", (int)m);
    }
    *model = md;
    return HB_SUCCESS;
}

/* The model's catalogue mechanisms and ion values (model_cat.c fills them). */
static void free_cat(hb_model_t *model)
{
    for (int q = 0; q < model->n_cat; q++) {
        free(model->cat[q].on);
        free(model->cat[q].param);
        free(model->cat[q].global);
    }
    free(model->cat);
    free(model->ion_set);
    model->cat = NULL;
    model->ion_set = NULL;
    model->n_cat = model->n_ion_set = 0;
}

hb_status_t hb_model_destroy(hb_model_t *model)
{
    if (!model) return HB_SUCCESS;
    for (int p = 0; p < model->n_probes; p++) free(model->probes[p].name);
    free(model->probes);
    free(model->iclamps);
    for (int k = 0; k < model->n_synapses; k++) free(model->synapses[k].param);
    free(model->synapses);
    free(model->has_pas);
    free(model->has_hh);
    free(model->pas_g);
    free(model->pas_e);
    free(model->hh);
    free_cat(model);
    hb_cable_destroy(model->cable);
    hb_morph_destroy(model->owned_morph);
    free(model);
    count_model(-1);
    return HB_SUCCESS;
}

const hb_cable_t *hb_model_cable(const hb_model_t *model) { return model ? model->cable : NULL; }

int hb_model_probe_count(const hb_model_t *model) { return model ? model->n_probes : 0; }

/* Section and x of an SWC sample: the section where it is a point of its own. */
static hb_status_t sample_position(const hb_morph_t *morph, long id, int *section, double *x)
{
    for (int s = 0; s < morph->n_sections; s++) {
        const hb_section_t *sec = &morph->sections[s];
        for (int k = s == 0 ? 0 : 1; k < sec->n_points; k++) {
            int index = sec->sample[k];
            if (index >= 0 && morph->samples[index].id == id) {
                *section = s;
                *x = sec->length > 0.0 ? sec->arc[k] / sec->length : 0.0;
                return HB_SUCCESS;
            }
        }
    }
    for (int i = 0; i < morph->n_samples; i++)
        if (morph->samples[i].id == id && morph->samples[i].type == 1 &&
            morph->sections[0].is_sphere) { /* the sphere's centre or a 3-point side */
            *section = 0;
            *x = 0.5;
            return HB_SUCCESS;
        }
    return hb_fail(HB_ERR_INVALID_VALUE, "%s: no sample with id %ld on the cell", morph->name, id);
}

/*
 * The node holding (section, x). NEURON scheme: x = 0 and 1 are the end nodes
 * (x = 0 of a child is the node it hangs from), else the segment floor(x n)
 * (NEURON's node_index). Vertex scheme: the nearest node, ties to the lower x.
 */
static hb_status_t section_node(const hb_model_t *model, int section, double x, int *node)
{
    const hb_morph_t *morph = model->morph;
    const char *name = morph ? morph->name : "cell";
    hb_node_info_t info;
    int n_sections = morph ? morph->n_sections : 0; /* without it: the cable's sections */
    for (int j = 0; !morph && j < model->m; j++)
        if (hb_cable_node(model->cable, j, &info) == HB_SUCCESS && info.section >= n_sections)
            n_sections = info.section + 1;
    if (section < 0 || section >= n_sections)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: section %d; expected 0..%d", name, section,
                       n_sections - 1);
    if (!(x >= 0.0 && x <= 1.0))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: x = %g on section %d; expected 0..1", name,
                       x, section);
    int start = -1, end = -1, n = 0, nearest = -1, first = -1;
    double nearest_d = INFINITY;
    for (int j = 0; j < model->m; j++) {
        hb_cable_node(model->cable, j, &info);
        if (info.section != section) continue;
        if (info.kind == HB_NODE_SECTION_END) end = j;
        if (info.kind == HB_NODE_ROOT_END) start = j;
        if (info.kind != HB_NODE_COMPARTMENT) continue;
        if (n++ == 0) {
            first = j;
            if (start < 0) start = info.x == 0.0 || info.parent < 0 ? j : info.parent;
        }
        if (fabs(info.x - x) < nearest_d) {
            nearest_d = fabs(info.x - x);
            nearest = j;
        }
    }
    if (n == 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: section %d has no compartments (zero length)",
                       name, section);
    if (model->scheme == HB_SCHEME_NEURON) {
        int k = (int)(x * n);
        *node = x == 0.0 ? start : x == 1.0 ? end : first + (k < n ? k : n - 1);
        return HB_SUCCESS;
    }
    /* x = 0 of a non-root section is its parent's node (not a sphere's own node). */
    const int sphere = morph && morph->sections[section].is_sphere;
    *node = !sphere && start != first && x <= nearest_d ? start : nearest;
    return HB_SUCCESS;
}

hb_status_t hb_model_locate(const hb_model_t *model, const hb_location_t *where, int *node)
{
    hb_clear_error();
    if (!model || !where || !node) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_locate: NULL argument");
    /* morph NULL: a model that outlived its morphology (a network's busyring cell): sections
     * and types from the cable, no samples */
    const hb_morph_t *morph = model->morph;
    const char *name = morph ? morph->name : "cell";
    int section = -1;
    double x = 0.5;
    hb_status_t status;
    hb_node_info_t info;
    switch (where->kind) {
    case HB_LOC_NODE:
        if (where->node < 0 || where->node >= model->m)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: node %d; expected 0..%d", name,
                           where->node, model->m - 1);
        *node = where->node;
        return HB_SUCCESS;
    case HB_LOC_SOMA:
        for (int s = 0; morph && s < morph->n_sections && section < 0; s++)
            if (morph->sections[s].type == 1) section = s;
        for (int j = 0; !morph && j < model->m && section < 0; j++)
            if (hb_cable_node(model->cable, j, &info) == HB_SUCCESS && info.swc_type == 1 &&
                info.kind == HB_NODE_COMPARTMENT)
                section = info.section;
        if (section < 0)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: no soma (no section of SWC type 1)", name);
        break;
    case HB_LOC_SAMPLE:
        if (!morph)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: its morphology is not kept, so no sample "
                           "names a place; expected a section or node location", name);
        if ((status = sample_position(morph, where->sample, &section, &x)) != HB_SUCCESS) return status;
        break;
    case HB_LOC_SECTION:
        section = where->section;
        x = where->x;
        break;
    default: return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_locate: unknown kind %d", (int)where->kind);
    }
    return section_node(model, section, x, node);
}

static hb_status_t check_mech(const hb_mech_t *m)
{
    const double g[] = {m->g_pas, m->gnabar, m->gkbar, m->gl};
    const double e[] = {m->e_pas, m->el, m->ena, m->ek};
    static const char *const gname[] = {"g_pas", "gnabar", "gkbar", "gl"};
    static const char *const ename[] = {"e_pas", "el", "ena", "ek"};
    const int first = m->kind == HB_MECH_PAS ? 0 : 1, last = m->kind == HB_MECH_PAS ? 1 : 4;
    for (int k = first; k < last; k++) {
        char context[64];
        snprintf(context, sizeof context, "%s: %s", hb_mech_name(m->kind), gname[k]);
        hb_status_t status = hb_limit_check(&hb_limit_conductance, g[k], context);
        if (status == HB_SUCCESS) {
            snprintf(context, sizeof context, "%s: %s", hb_mech_name(m->kind), ename[k]);
            status = hb_limit_check(&hb_limit_potential, e[k], context);
        }
        if (status != HB_SUCCESS) return status;
    }
    return HB_SUCCESS;
}

hb_status_t hb_model_insert(hb_model_t *model, int swc_type, const hb_mech_t *mech)
{
    hb_clear_error();
    if (!model || !mech) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_insert: NULL argument");
    if (mech->kind != HB_MECH_PAS && mech->kind != HB_MECH_HH)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_insert: unknown mechanism %d", (int)mech->kind);
    if (swc_type != HB_REGION_ALL && (swc_type < 0 || swc_type >= HB_SWC_TYPES))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_insert: region %d; expected -1 (all) or 0..%d",
                       swc_type, HB_SWC_TYPES - 1);
    hb_status_t status = check_mech(mech);
    if (status != HB_SUCCESS) return status;
    hb_node_info_t info;
    for (int j = 0; j < model->m; j++) {
        hb_cable_node(model->cable, j, &info);
        if (!(info.area_um2 > 0.0) || (swc_type != HB_REGION_ALL && info.swc_type != swc_type))
            continue;
        if (mech->kind == HB_MECH_PAS) {
            model->has_pas[j] = 1;
            model->pas_g[j] = mech->g_pas;
            model->pas_e[j] = mech->e_pas;
        } else {
            double *p = &model->hh[(size_t)j * HB_HH_NPAR];
            model->has_hh[j] = 1;
            p[HB_HH_GNABAR] = mech->gnabar;
            p[HB_HH_GKBAR] = mech->gkbar;
            p[HB_HH_GL] = mech->gl;
            p[HB_HH_EL] = mech->el;
            p[HB_HH_ENA] = mech->ena;
            p[HB_HH_EK] = mech->ek;
        }
    }
    return HB_SUCCESS;
}

/* Grows an array of `size`-byte items to hold one more; 0 on failure. */
static int grow(void **items, int count, int *capacity, size_t size)
{
    if (count < *capacity) return 1;
    int cap = *capacity ? 2 * *capacity : 4;
    void *p = realloc(*items, (size_t)cap * size);
    if (!p) return 0;
    *items = p;
    *capacity = cap;
    return 1;
}

hb_status_t hb_model_add_iclamp(hb_model_t *model, const hb_location_t *where, double del_ms,
                                double dur_ms, double amp_na)
{
    hb_clear_error();
    if (!model || !where) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_add_iclamp: NULL argument");
    if (!(del_ms >= 0.0) || !(dur_ms >= 0.0) || isnan(del_ms + dur_ms))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "IClamp: del %g ms, dur %g ms; expected del >= 0, dur >= 0", del_ms, dur_ms);
    hb_status_t status = hb_limit_check(&hb_limit_amp, amp_na, "IClamp: amp");
    if (status != HB_SUCCESS) return status;
    int node;
    status = hb_model_locate(model, where, &node);
    if (status != HB_SUCCESS) return status;
    if (!grow((void **)&model->iclamps, model->n_iclamps, &model->cap_iclamps, sizeof *model->iclamps))
        return hb_fail(HB_ERR_ALLOC, "IClamp: out of memory");
    model->iclamps[model->n_iclamps++] = (hb_iclamp_t){node, del_ms, dur_ms, amp_na};
    return HB_SUCCESS;
}

void hb_synapse_default(hb_syn_kind_t kind, hb_synapse_t *syn)
{
    if (!syn) return;
    *syn = (hb_synapse_t){kind, 0.1, 0.1, 10.0, 0.0};
}

const char *hb_synapse_name(hb_syn_kind_t kind)
{
    return kind == HB_SYN_EXP ? "ExpSyn" : kind == HB_SYN_EXP2 ? "Exp2Syn" : "unknown";
}

hb_status_t hb_model_add_synapse(hb_model_t *model, const hb_location_t *where,
                                 const hb_synapse_t *syn, int *index)
{
    static const char fn[] = "hb_model_add_synapse";
    hb_clear_error();
    if (!model || !where || !syn) return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", fn);
    if (syn->kind == HB_SYN_EXP) {
        if (!(syn->tau_ms > 0.0) || !isfinite(syn->tau_ms))
            return hb_fail(HB_ERR_INVALID_VALUE, "ExpSyn: tau %g ms; expected a finite tau > 0",
                           syn->tau_ms);
    } else if (syn->kind == HB_SYN_EXP2) {
        if (!(syn->tau1_ms > 0.0) || !(syn->tau2_ms > syn->tau1_ms) || !isfinite(syn->tau2_ms))
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "Exp2Syn: tau1 %g ms, tau2 %g ms; expected 0 < tau1 < tau2, finite",
                           syn->tau1_ms, syn->tau2_ms);
    } else {
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: kind %d is not an hb_syn_kind_t", fn,
                       (int)syn->kind);
    }
    char context[64];
    snprintf(context, sizeof context, "%s: e", hb_synapse_name(syn->kind));
    hb_status_t status = hb_limit_check(&hb_limit_potential, syn->e_mv, context);
    if (status != HB_SUCCESS) return status;
    int node;
    status = hb_model_locate(model, where, &node);
    if (status != HB_SUCCESS) return status;
    hb_node_info_t info;
    hb_cable_node(model->cable, node, &info);
    if (!(info.area_um2 > 0.0))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: node %d has no membrane (a zero-area node); expected a location "
                       "inside a segment", hb_synapse_name(syn->kind), node);
    if (!grow((void **)&model->synapses, model->n_synapses, &model->cap_synapses,
              sizeof *model->synapses))
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    if (index) *index = model->n_synapses;
    model->synapses[model->n_synapses++] = (hb_model_synapse_t){node, *syn, NULL, NULL};
    return HB_SUCCESS;
}

int hb_model_synapse_count(const hb_model_t *model) { return model ? model->n_synapses : 0; }

hb_status_t hb_model_add_probe(hb_model_t *model, const hb_probe_spec_t *probe, int *index)
{
    hb_clear_error();
    if (!model || !probe) return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_add_probe: NULL argument");
    if (probe->detect_spikes && !isfinite(probe->threshold_mv))
        return hb_fail(HB_ERR_INVALID_VALUE, "probe: spike threshold %g mV; expected a finite number",
                       probe->threshold_mv);
    if (probe->detect_spikes && model->spike_source >= 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "probe: a spike threshold on a cell whose spikes are "
                       "synapse %d's net_events; expected one spike source a cell (NEURON: one "
                       "source a gid), a probe without spike_threshold", model->spike_source);
    int node;
    hb_status_t status = hb_model_locate(model, &probe->where, &node);
    if (status != HB_SUCCESS) return status;
    char fallback[32];
    snprintf(fallback, sizeof fallback, "v%d", model->n_probes);
    const char *name = probe->name ? probe->name : fallback;
    /* a column each: a name twice would make two columns no reader can tell apart */
    for (int p = 0; p < model->n_probes; p++)
        if (strcmp(model->probes[p].name, name) == 0)
            return hb_fail(HB_ERR_INVALID_VALUE, "probe: the name \"%s\" is taken by probe %d; "
                           "expected a name of its own", name, p);
    char *copy = malloc(strlen(name) + 1);
    if (!copy || !grow((void **)&model->probes, model->n_probes, &model->cap_probes, sizeof *model->probes)) {
        free(copy);
        return hb_fail(HB_ERR_ALLOC, "probe: out of memory");
    }
    strcpy(copy, name);
    model->probes[model->n_probes] =
        (hb_probe_t){node, copy, probe->detect_spikes != 0, probe->threshold_mv};
    if (index) *index = model->n_probes;
    model->n_probes++;
    return HB_SUCCESS;
}
