/*
 * What can be recorded: the one table of the mechanisms' recordable variables (mechanism ->
 * variable -> how a sample computes it, its unit, NEURON's name for it), the parser of a
 * variable's name, and its resolution into a sample of the simulation's layout
 * (hb_rec_sample_t, src/common/record_value.h) that both backends evaluate. A mechanism added
 * later (a compiled NMODL file) brings its rows of this table. docs/network.md, section 8.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "mech/catalogue.h"
#include "sim/json_util.h"
#include "sim/sim_cat.h"
#include "sim/sim_engine.h"

typedef struct {
    const char *mech;   /* "" (the membrane), "hh", "pas", "expsyn", "exp2syn" */
    const char *name;   /* the variable */
    int kind;           /* hb_rec_kind_t */
    int index;          /* a state's position: hh's m, h, n; Exp2Syn's A, B */
    const char *unit;
    const char *neuron; /* what a NEURON user records for it */
} mech_var_t;

static const mech_var_t vars[] = {
    {"", "v", HB_REC_V, 0, "mV", "sec(x).v"},
    {"hh", "m", HB_REC_HH_STATE, 0, "1", "m_hh"},
    {"hh", "h", HB_REC_HH_STATE, 1, "1", "h_hh"},
    {"hh", "n", HB_REC_HH_STATE, 2, "1", "n_hh"},
    {"hh", "gna", HB_REC_HH_GNA, 0, "S/cm2", "gna_hh"},
    {"hh", "gk", HB_REC_HH_GK, 0, "S/cm2", "gk_hh"},
    {"hh", "ina", HB_REC_HH_INA, 0, "mA/cm2", "ina (hh's part)"},
    {"hh", "ik", HB_REC_HH_IK, 0, "mA/cm2", "ik (hh's part)"},
    {"hh", "il", HB_REC_HH_IL, 0, "mA/cm2", "il_hh"},
    {"pas", "i", HB_REC_PAS_I, 0, "mA/cm2", "i_pas"},
    {"expsyn", "g", HB_REC_SYN_STATE, 0, "uS", "ExpSyn._ref_g"},
    {"expsyn", "i", HB_REC_SYN_I, 0, "nA", "ExpSyn._ref_i"},
    {"exp2syn", "A", HB_REC_SYN_STATE, 0, "uS", "Exp2Syn._ref_A"},
    {"exp2syn", "B", HB_REC_SYN_STATE, 1, "uS", "Exp2Syn._ref_B"},
    {"exp2syn", "g", HB_REC_SYN_G, 0, "uS", "Exp2Syn._ref_g"},
    {"exp2syn", "i", HB_REC_SYN_I, 0, "nA", "Exp2Syn._ref_i"},
};
enum { N_VARS = sizeof vars / sizeof *vars };

/* Every name a variable may have ("syn[K]." for a synapse's), NULL-terminated. */
static const char *const names[] = {"v",      "hh.m",    "hh.h",    "hh.n",     "hh.gna",
                                    "hh.gk",  "hh.ina",  "hh.ik",   "hh.il",    "pas.i",
                                    "syn[0].g", "syn[0].i", "syn[0].A", "syn[0].B", NULL};

static const char *expected =
    "expected v, hh.m, hh.h, hh.n, hh.gna, hh.gk, hh.ina, hh.ik, hh.il, pas.i, or syn[K].g, "
    "syn[K].i (any synapse), syn[K].A, syn[K].B (Exp2Syn)";

/* "syn[K].NAME": K and NAME; 0 when `variable` is not of that form. */
static int synapse_name(const char *variable, int *index, const char **name)
{
    if (strncmp(variable, "syn[", 4) != 0) return 0;
    char *end = NULL;
    const long k = strtol(variable + 4, &end, 10);
    if (end == variable + 4 || k < 0 || k > 0x7fffffffL || strncmp(end, "].", 2) != 0) return 0;
    *index = (int)k;
    *name = end + 2;
    return 1;
}

/* The unit of a built-in catalogue mechanism's "MECH.NAME" (a RANGE PARAMETER, STATE or
 * ASSIGNED) or of an ion variable ("eca", "cai", "cao", "ica") of a species a built-in
 * mechanism uses; NULL: neither. */
static const char *catalogue_unit(const char *variable)
{
    const char *dot = strchr(variable, '.');
    if (dot) {
        char mech_name[128];
        const size_t n = (size_t)(dot - variable);
        if (n == 0 || n >= sizeof mech_name) return NULL;
        memcpy(mech_name, variable, n);
        mech_name[n] = '\0';
        const hb_cat_mech_t *m = NULL;
        if (hb_catalogue_find(NULL, 0, mech_name, &m) != HB_SUCCESS) return NULL;
        const hb_cat_field_t *lists[3] = {m->param, m->state, m->assigned};
        const int counts[3] = {m->n_param, m->n_state, m->n_assigned};
        for (int l = 0; l < 3; l++)
            for (int k = 0; k < counts[l]; k++)
                if (!strcmp(lists[l][k].name, dot + 1))
                    return lists[l][k].unit && *lists[l][k].unit ? lists[l][k].unit : "1";
        return NULL;
    }
    const size_t len = strlen(variable);
    for (int c = 0; c < hb_catalogue_builtin_count(); c++) {
        const hb_catalogue_t *cat = hb_catalogue_builtin(c);
        for (int q = 0; q < cat->n_mech; q++)
            for (int u = 0; u < cat->mech[q].n_ion; u++) {
                const char *ion = cat->mech[q].ion[u].ion;
                const size_t n = strlen(ion);
                if (len != n + 1) continue;
                if (variable[0] == 'e' && !strcmp(variable + 1, ion)) return "mV";
                if (variable[0] == 'i' && !strcmp(variable + 1, ion)) return "mA/cm2";
                if (!strncmp(variable, ion, n) && (variable[n] == 'i' || variable[n] == 'o'))
                    return "mM";
            }
    }
    return NULL;
}

/* Field `name` (a RANGE PARAMETER, STATE or ASSIGNED) of mechanism m: its index in the
 * instance's fields, or -1. */
static int field_of(const hb_cat_mech_t *m, const char *name, const hb_cat_field_t **decl)
{
    const hb_cat_field_t *lists[3] = {m->param, m->state, m->assigned};
    const int counts[3] = {m->n_param, m->n_state, m->n_assigned};
    for (int l = 0, f = 0; l < 3; l++)
        for (int k = 0; k < counts[l]; k++, f++)
            if (!strcmp(lists[l][k].name, name)) {
                if (decl) *decl = &lists[l][k];
                return f;
            }
    return -1;
}

/* The unit of `name`, a field of some catalogue point process (the built-ins', then the users'
 * catalogues loaded: every rank loaded the same from the same file); NULL: none has one. */
static const char *point_field_unit(const char *name)
{
    const int n = hb_catalogue_builtin_count() + hb_catalogue_loaded_count();
    for (int c = 0; c < n; c++) {
        const hb_catalogue_t *cat = c < hb_catalogue_builtin_count()
                                        ? hb_catalogue_builtin(c)
                                        : hb_catalogue_loaded(c - hb_catalogue_builtin_count());
        for (int q = 0; cat && q < cat->n_mech; q++) {
            const hb_cat_field_t *decl = NULL;
            if (cat->mech[q].kind != HB_CAT_DENSITY && field_of(&cat->mech[q], name, &decl) >= 0)
                return decl->unit && *decl->unit ? decl->unit : "1";
        }
    }
    return NULL;
}

/* The nearest name to `name` among A, B and the fields of every point process of the
 * catalogues (hb_json_nearest's rule); NULL: none near. */
static const char *nearest_point_field(const char *name)
{
    const int n = hb_catalogue_builtin_count() + hb_catalogue_loaded_count();
    size_t total = 2;
    for (int pass = 0; pass < 2; pass++) {
        const char **list = pass ? malloc((total + 1) * sizeof *list) : NULL;
        if (pass && !list) return NULL;
        size_t k = 0;
        if (pass) list[k++] = "A", list[k++] = "B";
        for (int c = 0; c < n; c++) {
            const hb_catalogue_t *cat = c < hb_catalogue_builtin_count()
                                            ? hb_catalogue_builtin(c)
                                            : hb_catalogue_loaded(c - hb_catalogue_builtin_count());
            for (int q = 0; cat && q < cat->n_mech; q++) {
                const hb_cat_mech_t *m = &cat->mech[q];
                if (m->kind == HB_CAT_DENSITY) continue;
                const hb_cat_field_t *lists[3] = {m->param, m->state, m->assigned};
                const int counts[3] = {m->n_param, m->n_state, m->n_assigned};
                for (int l = 0; l < 3; l++)
                    for (int f = 0; f < counts[l]; f++) {
                        if (pass && k < total) list[k] = lists[l][f].name;
                        k++;
                    }
            }
        }
        if (!pass) {
            total = k + 2;
            continue;
        }
        list[k < total ? k : total] = NULL;
        const char *near = hb_json_nearest(name, list);
        free(list);
        return near; /* the catalogues' own strings: they outlive the list */
    }
    return NULL;
}

hb_status_t hb_rec_parse(const char *variable, hb_rec_var_t *out)
{
    if (!variable || !out) return hb_fail(HB_ERR_INVALID_VALUE, "record variable: NULL argument");
    memset(out, 0, sizeof *out);
    out->synapse = -1;
    const char *name = NULL;
    if (synapse_name(variable, &out->synapse, &name)) {
        for (int k = 0; k < N_VARS; k++)
            if (strcmp(vars[k].mech, "expsyn") == 0 || strcmp(vars[k].mech, "exp2syn") == 0)
                if (strcmp(vars[k].name, name) == 0) {
                    out->unit = vars[k].unit; /* the same for both kinds */
                    return HB_SUCCESS;
                }
        if ((out->unit = point_field_unit(name)) != NULL) return HB_SUCCESS; /* checked at K */
        const char *near = nearest_point_field(name);
        return hb_fail(HB_ERR_INVALID_VALUE, "variable \"%s\": a synapse has no \"%s\"%s%s%s; "
                       "expected syn[K].g, syn[K].i, for an Exp2Syn syn[K].A, syn[K].B, or a "
                       "catalogue point process's RANGE PARAMETER, STATE or ASSIGNED", variable,
                       name, near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "");
    }
    const char *dot = strchr(variable, '.');
    const size_t mech_len = dot ? (size_t)(dot - variable) : 0;
    name = dot ? dot + 1 : variable;
    for (int k = 0; k < N_VARS; k++)
        if (strlen(vars[k].mech) == mech_len && strncmp(vars[k].mech, variable, mech_len) == 0 &&
            strcmp(vars[k].name, name) == 0 && strcmp(vars[k].mech, "expsyn") != 0 &&
            strcmp(vars[k].mech, "exp2syn") != 0) {
            out->entry = k;
            out->unit = vars[k].unit;
            return HB_SUCCESS;
        }
    if ((out->unit = catalogue_unit(variable)) != NULL) { /* a catalogue mechanism's, an ion's */
        out->entry = -1;
        return HB_SUCCESS;
    }
    const char *near = hb_json_nearest(variable, names);
    return hb_fail(HB_ERR_INVALID_VALUE, "variable \"%s\": nothing of that name is recorded%s%s%s; %s",
                   variable, near ? " (did you mean \"" : "", near ? near : "", near ? "\"?)" : "",
                   expected);
}

void hb_location_label(const hb_location_t *where, char *out, size_t size)
{
    switch (where ? where->kind : HB_LOC_SOMA) {
    case HB_LOC_SAMPLE: snprintf(out, size, "sample%ld", where->sample); break;
    case HB_LOC_SECTION: snprintf(out, size, "sec%d(%g)", where->section, where->x); break;
    case HB_LOC_NODE: snprintf(out, size, "node%d", where->node); break;
    default: snprintf(out, size, "soma"); break;
    }
}

/* Cell c's variable at its node (no synapse): the layout's elements and the constants. */
static hb_status_t resolve_at(hb_sim_t *sim, int c, const hb_model_t *md, const mech_var_t *var,
                              int node, hb_rec_sample_t *r)
{
    const group_t *gr = &sim->groups[sim->group_of[c]];
    const int slot = sim->slot_of[c], W = gr->k.width;
    r->v = hb_step_element(&gr->k, slot, node);
    if (var->kind == HB_REC_V) return HB_SUCCESS;
    if (var->kind == HB_REC_PAS_I) {
        if (!md->has_pas[node])
            return hb_fail(HB_ERR_INVALID_VALUE, "no pas at node %d", node);
        r->g = md->pas_g[node];
        r->e = md->pas_e[node];
        return HB_SUCCESS;
    }
    if (!md->has_hh[node]) return hb_fail(HB_ERR_INVALID_VALUE, "no hh at node %d", node);
    int j = 0; /* the node's hh instance among the cell's, in node order (sim_layout.c) */
    for (int i = 0; i < node; i++) j += md->has_hh[i] != 0;
    const size_t inst = hb_step_hh_base(&gr->k, slot / W) + (size_t)j;
    /* its gate `index` (m for the currents and conductances), then h and n W apart */
    r->stride = (size_t)W;
    r->state = (inst * 3 + (size_t)var->index) * (size_t)W + (size_t)(slot % W);
    const double *par = md->hh + (size_t)node * HB_HH_NPAR;
    switch (var->kind) {
    case HB_REC_HH_STATE: break;
    case HB_REC_HH_GNA:
    case HB_REC_HH_INA: r->g = par[HB_HH_GNABAR]; r->e = par[HB_HH_ENA]; break;
    case HB_REC_HH_GK:
    case HB_REC_HH_IK: r->g = par[HB_HH_GKBAR]; r->e = par[HB_HH_EK]; break;
    default: r->g = par[HB_HH_GL]; r->e = par[HB_HH_EL]; break;
    }
    return HB_SUCCESS;
}

/* Cell c's synapse q, a catalogue point process: its field `name` (RANGE PARAMETER, STATE or
 * ASSIGNED) of its instance (the cell's synapses of its mechanism in list order, sim_cat.c's
 * fill_points), read at its address; a name it lacks refused with its nearest field. */
static hb_status_t resolve_point(const hb_sim_t *sim, int c, const hb_model_t *md, int q,
                                 const char *name, const char *variable, hb_rec_sample_t *r)
{
    const hb_cat_mech_t *m = md->synapses[q].mech;
    const int field = field_of(m, name, NULL);
    if (field < 0) {
        const int n = m->n_param + m->n_state + m->n_assigned;
        const char **list = malloc(((size_t)n + 1) * sizeof *list);
        if (!list) return hb_fail(HB_ERR_ALLOC, "record: out of memory");
        const hb_cat_field_t *lists[3] = {m->param, m->state, m->assigned};
        const int counts[3] = {m->n_param, m->n_state, m->n_assigned};
        for (int l = 0, f = 0; l < 3; l++)
            for (int k = 0; k < counts[l]; k++) list[f++] = lists[l][k].name;
        list[n] = NULL;
        const char *near = hb_json_nearest(name, list);
        const hb_status_t st = hb_fail(
            HB_ERR_INVALID_VALUE, "variable \"%s\": synapse %d is the catalogue point process "
            "%s, which has no \"%s\"%s%s%s; expected one of its RANGE PARAMETERs, STATEs or "
            "ASSIGNED", variable, q, m->name, name, near ? " (did you mean \"" : "",
            near ? near : "", near ? "\"?)" : "");
        free(list);
        return st;
    }
    const group_t *gr = &sim->groups[sim->group_of[c]];
    const hb_step_cat_t *cat = gr->cat;
    const hb_step_cat_mech_t *cm = NULL;
    for (int x = 0; cat && x < cat->n_mech && !cm; x++)
        if (cat->mech[x].mech == m) cm = &cat->mech[x];
    int j = 0; /* its instance among the cell's of m */
    for (int k = 0; k < q; k++) j += md->synapses[k].mech == m;
    const int slot = sim->slot_of[c];
    const size_t W = (size_t)gr->k.width, lane = (size_t)slot % W;
    if (!cm || j >= cm->lane_inst[slot])
        return hb_fail(HB_ERR_INVALID_VALUE, "variable \"%s\": synapse %d (%s) is not in its group's "
                       "layout", variable, q, m->name);
    const size_t inst = cm->inst_start[(size_t)slot / W] + (size_t)j;
    r->kind = HB_REC_HOST;
    r->at = cm->field + (inst * (size_t)m->n_field + (size_t)field) * W + lane;
    r->v = hb_step_element(&gr->k, slot, md->synapses[q].node);
    return HB_SUCCESS;
}

/* Cell c's synapse q: its state's elements, its node's v, its reversal. */
static hb_status_t resolve_synapse(hb_sim_t *sim, int c, const hb_model_t *md, int q,
                                   const char *name, const char *variable, hb_rec_sample_t *r)
{
    if (q >= md->n_synapses)
        return hb_fail(HB_ERR_INVALID_VALUE, "variable \"%s\": no synapse %d (the cell has %d)",
                       variable, q, md->n_synapses);
    if (md->synapses[q].mech) return resolve_point(sim, c, md, q, name, variable, r);
    const hb_syn_kind_t kind = md->synapses[q].syn.kind;
    const char *mech = kind == HB_SYN_EXP2 ? "exp2syn" : "expsyn";
    const mech_var_t *var = NULL;
    for (int k = 0; k < N_VARS && !var; k++)
        if (strcmp(vars[k].mech, mech) == 0 && strcmp(vars[k].name, name) == 0) var = &vars[k];
    if (!var)
        return hb_fail(HB_ERR_INVALID_VALUE, "variable \"%s\": synapse %d is an %s; expected "
                       "syn[%d].g or syn[%d].i", variable, q, hb_synapse_name(kind), q, q);
    const hb_syn_site_t *site = NULL;
    size_t stride = 1;
    const double *state =
        hb_sim_synapse_state(sim, c, hb_model_hand_synapse(md, q), &site, &stride);
    const group_t *gr = &sim->groups[sim->group_of[c]];
    r->kind = var->kind;
    r->syn_kind = site->kind;
    r->state = (size_t)(state - gr->syn_state) + (size_t)var->index * stride;
    r->stride = stride;
    r->v = hb_step_element(&gr->k, sim->slot_of[c], site->node);
    r->e = site->e;
    return HB_SUCCESS;
}

/* A catalogue variable of cell c at `node` (common/cat_step.h): an ion's "eca", "cai", "cao",
 * "ica" at the row, or "MECH.NAME", a RANGE PARAMETER, STATE or ASSIGNED of the mechanism's
 * instance there. 1 with r->at set; 0 when the cell's group has no such thing. */
static int resolve_cat(hb_sim_t *sim, int c, int node, const char *variable,
                       hb_rec_sample_t *r)
{
    const group_t *gr = &sim->groups[sim->group_of[c]];
    hb_step_cat_t *cat = gr->cat;
    if (!cat) return 0;
    const int slot = sim->slot_of[c];
    const size_t e = hb_step_element(&gr->k, slot, node), W = (size_t)gr->k.width;
    for (int x = 0; x < cat->n_ion; x++) {
        hb_step_ion_t *ion = &cat->ion[x];
        const size_t n = strlen(ion->name), len = strlen(variable);
        if (len != n + 1) continue;
        const double *arr = NULL;
        if (variable[0] == 'e' && !strcmp(variable + 1, ion->name)) arr = ion->e;
        else if (variable[0] == 'i' && !strcmp(variable + 1, ion->name)) {
            arr = ion->i;
            ion->observed = 1; /* the CPU engine's currents accumulate it from now on */
        }
        else if (!strncmp(variable, ion->name, n) && variable[n] == 'i') arr = ion->ci;
        else if (!strncmp(variable, ion->name, n) && variable[n] == 'o') arr = ion->co;
        if (arr) {
            r->at = arr + e;
            return 1;
        }
    }
    const char *dot = strchr(variable, '.');
    for (int q = 0; dot && q < cat->n_mech; q++) {
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        const hb_cat_mech_t *m = cm->mech;
        if (strlen(m->name) != (size_t)(dot - variable) ||
            strncmp(m->name, variable, (size_t)(dot - variable)) != 0)
            continue;
        int field = -1, f = 0;
        const hb_cat_field_t *lists[3] = {m->param, m->state, m->assigned};
        const int counts[3] = {m->n_param, m->n_state, m->n_assigned};
        for (int l = 0; l < 3 && field < 0; l++)
            for (int k = 0; k < counts[l]; k++, f++)
                if (field < 0 && !strcmp(lists[l][k].name, dot + 1)) field = f;
        if (field < 0) return 0;
        const size_t i0 = cm->inst_start[(size_t)slot / W], lane = (size_t)slot % W;
        for (int j = 0; j < cm->lane_inst[slot]; j++)
            if (cm->node[(i0 + (size_t)j) * W + lane] == node) {
                r->at = cm->field + ((i0 + (size_t)j) * (size_t)m->n_field + (size_t)field) * W +
                        lane;
                return 1;
            }
        return 0;
    }
    return 0;
}

hb_status_t hb_sim_record_resolve(hb_sim_t *sim, int cell, const hb_location_t *where,
                                  const char *variable, hb_rec_sample_t *out)
{
    if (!sim || !out || cell < 0 || cell >= sim->n_cells)
        return hb_fail(HB_ERR_INVALID_VALUE, "record: bad argument");
    hb_rec_var_t var;
    hb_status_t status = hb_rec_parse(variable, &var);
    if (status != HB_SUCCESS) return status;
    memset(out, 0, sizeof *out);
    out->group = sim->group_of[cell];
    if (var.synapse < 0 && var.entry < 0) { /* a catalogue mechanism's or an ion's */
        const hb_model_t *md = hb_sim_cell_get(sim, cell);
        if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
        int node = 0;
        const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
        status = hb_model_locate(md, where ? where : &soma, &node);
        hb_sim_cell_put(sim, cell, md);
        if (status != HB_SUCCESS) return status;
        out->v = hb_step_element(&sim->groups[out->group].k, sim->slot_of[cell], node);
        out->kind = HB_REC_HOST;
        if (resolve_cat(sim, cell, node, variable, out)) return HB_SUCCESS;
        return hb_fail(HB_ERR_INVALID_VALUE, "the cell has no \"%s\" at node %d (no such "
                       "catalogue mechanism or ion there)", variable, node);
    }
    const hb_model_t *md = hb_sim_cell_get(sim, cell);
    if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
    if (var.synapse >= 0) {
        status = resolve_synapse(sim, cell, md, var.synapse, strchr(variable, '.') + 1, variable, out);
    } else {
        int node = 0;
        out->kind = vars[var.entry].kind;
        const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
        status = hb_model_locate(md, where ? where : &soma, &node);
        if (status == HB_SUCCESS) status = resolve_at(sim, cell, md, &vars[var.entry], node, out);
    }
    hb_sim_cell_put(sim, cell, md);
    return status;
}
