/*
 * A group's catalogue mechanisms and ions (common/cat_step.h, docs/mechanisms.md sections 2
 * and 4) from its cells' models: the mechanisms in name order, each instance's row and fields
 * per lane, and per ion species the values and NEURON's ion_style of every row.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "mech/catalogue.h"
#include "sim/sim_cat.h"

/* The next point process of md after synapse *k (from -1), or NULL; *k moves to it. */
static const hb_model_synapse_t *next_point(const hb_model_t *md, int *k)
{
    for ((*k)++; *k < md->n_synapses; (*k)++)
        if (md->synapses[*k].mech) return &md->synapses[*k];
    return NULL;
}

int hb_sim_cat_same(const hb_model_t *a, const hb_model_t *b)
{
    if (a->n_cat != b->n_cat || a->n_points != b->n_points) return 0;
    /* the same point processes on the same nodes in the same order (their parameters per lane) */
    for (int i = -1, j = -1;;) {
        const hb_model_synapse_t *x = next_point(a, &i), *y = next_point(b, &j);
        if (!x || !y) break;
        if (x->mech != y->mech || x->node != y->node) return 0;
    }
    for (int q = 0; q < a->n_cat; q++)
        if (a->cat[q].mech != b->cat[q].mech ||
            memcmp(a->cat[q].on, b->cat[q].on, (size_t)a->m) != 0)
            return 0;
    return 1;
}

uint64_t hb_sim_cat_hash(const hb_model_t *md, uint64_t h)
{
    for (int k = -1; next_point(md, &k);) {
        h ^= (uint64_t)(uintptr_t)md->synapses[k].mech ^ (uint64_t)md->synapses[k].node << 40;
        h *= 0xff51afd7ed558ccdu;
        h ^= h >> 32;
    }
    for (int q = 0; q < md->n_cat; q++)
        for (int i = 0; i < md->m; i++) {
            h ^= (uint64_t)(q + 1) << 33 | (uint64_t)i << 1 | md->cat[q].on[i];
            h *= 0xff51afd7ed558ccdu;
            h ^= h >> 32;
        }
    return h;
}

/* The species' index in cat (added when new); -1: no memory. */
static int species(hb_step_cat_t *cat, const hb_cat_ion_t *ion)
{
    for (int s = 0; s < cat->n_ion; s++)
        if (!strcmp(cat->ion[s].name, ion->ion)) return s;
    hb_step_ion_t *grown = realloc(cat->ion, (size_t)(cat->n_ion + 1) * sizeof *grown);
    if (!grown) return -1;
    cat->ion = grown;
    hb_step_ion_t *x = &grown[cat->n_ion];
    memset(x, 0, sizeof *x);
    strncpy(x->name, ion->ion, sizeof x->name - 1);
    x->valence = ion->valence;
    return cat->n_ion++;
}

/* The mechanism's index in cat, added in name order when new; -1: no memory. */
static int add_mech(hb_step_cat_t *cat, const hb_cat_mech_t *mech)
{
    int at = 0;
    for (; at < cat->n_mech; at++) {
        if (cat->mech[at].mech == mech) return at;
        if (strcmp(cat->mech[at].mech->name, mech->name) > 0) break;
    }
    hb_step_cat_mech_t *grown = realloc(cat->mech, (size_t)(cat->n_mech + 1) * sizeof *grown);
    if (!grown) return -1;
    cat->mech = grown;
    memmove(&grown[at + 1], &grown[at], (size_t)(cat->n_mech - at) * sizeof *grown);
    memset(&grown[at], 0, sizeof *grown);
    grown[at].mech = mech;
    grown[at].builtin = -1; /* a user's catalogue unless found among the built-ins */
    for (int c = 0; c < hb_catalogue_builtin_count(); c++) {
        const hb_catalogue_t *b = hb_catalogue_builtin(c);
        if (b && mech >= b->mech && mech < b->mech + b->n_mech) {
            grown[at].builtin = c;
            grown[at].index = (int)(mech - b->mech);
        }
    }
    cat->n_mech++;
    return at;
}

void hb_sim_cat_free(hb_step_cat_t *cat)
{
    if (!cat) return;
    for (int q = 0; q < cat->n_mech; q++) {
        hb_step_cat_mech_t *cm = &cat->mech[q];
        free(cm->inst_start);
        free(cm->lane_inst);
        free(cm->node);
        free(cm->field);
        free(cm->global);
        free(cm->area);
        for (int t = 0; cm->table && t < cm->mech->n_table; t++) free(cm->table[t]);
        free(cm->table);
    }
    for (int s = 0; s < cat->n_ion; s++) {
        hb_step_ion_t *x = &cat->ion[s];
        free(x->e), free(x->ci), free(x->co), free(x->i), free(x->didv);
        free(x->e0), free(x->ci0), free(x->co0), free(x->style);
    }
    free(cat->mech);
    free(cat->ion);
    free(cat);
}

#define ALLOC(ptr, n) (((ptr) = calloc((size_t)(n) + 1, sizeof *(ptr))) != NULL)

/* The mechanisms and species of the group's cells, and each slot's instances. */
static hb_status_t survey(hb_sim_t *sim, const hb_step_group_t *k, const int *cells,
                          hb_step_cat_t *cat)
{
    for (int s = 0; s < k->count; s++) {
        const hb_model_t *md = hb_sim_cell_get(sim, cells[s]);
        if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
        int ok = 1;
        for (int q = 0; q < md->n_cat + md->n_synapses && ok; q++) {
            const hb_cat_mech_t *mech =
                q < md->n_cat ? md->cat[q].mech : md->synapses[q - md->n_cat].mech;
            if (!mech) continue; /* a hard-coded synapse */
            ok = add_mech(cat, mech) >= 0;
            for (int i = 0; i < mech->n_ion && ok; i++) ok = species(cat, &mech->ion[i]) >= 0;
        }
        hb_sim_cell_put(sim, cells[s], md);
        if (!ok) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    }
    return HB_SUCCESS;
}

/* Instances per slot, per block, and the arrays of mechanism cm. */
static hb_status_t lay_out(hb_sim_t *sim, const hb_step_group_t *k, const int *cells,
                           hb_step_cat_mech_t *cm)
{
    const size_t W = (size_t)k->width, slots = (size_t)k->blocks * W;
    if (!ALLOC(cm->inst_start, k->blocks + 1) || !ALLOC(cm->lane_inst, slots))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    for (int s = 0; s < k->count; s++) {
        const hb_model_t *md = hb_sim_cell_get(sim, cells[s]);
        if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
        for (int q = 0; q < md->n_cat; q++)
            if (md->cat[q].mech == cm->mech)
                for (int i = 0; i < md->m; i++) cm->lane_inst[s] += md->cat[q].on[i];
        for (int q = 0; q < md->n_synapses; q++) cm->lane_inst[s] += md->synapses[q].mech == cm->mech;
        hb_sim_cell_put(sim, cells[s], md);
    }
    for (int b = 0; b < k->blocks; b++) {
        int most = 0;
        for (size_t s = (size_t)b * W; s < (size_t)(b + 1) * W; s++)
            most = cm->lane_inst[s] > most ? cm->lane_inst[s] : most;
        if (!k->mixed) /* every lane (padding too) steps the block's instances */
            for (size_t s = (size_t)b * W; s < (size_t)(b + 1) * W; s++) cm->lane_inst[s] = most;
        cm->inst_start[b + 1] = cm->inst_start[b] + (size_t)most;
    }
    const size_t inst = cm->inst_start[k->blocks];
    if (!ALLOC(cm->node, inst * W) || !ALLOC(cm->field, inst * (size_t)cm->mech->n_field * W) ||
        !ALLOC(cm->global, cm->mech->n_global) ||
        (cm->mech->kind != HB_CAT_DENSITY && !ALLOC(cm->area, inst * W)))
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %s's %zu instances",
                       cm->mech->name, inst);
    for (int q = 0; q < cm->mech->n_global; q++) cm->global[q] = cm->mech->global[q].value;
    return HB_SUCCESS;
}

/* Slot s's instances of cm (its model's entry mc): rows, parameters, initial states. */
static hb_status_t fill_slot(const hb_step_group_t *k, hb_step_cat_mech_t *cm,
                             const hb_model_cat_t *mc, int s, int *global_set)
{
    const size_t W = (size_t)k->width, lane = (size_t)s % W;
    const hb_cat_mech_t *mech = cm->mech;
    const size_t i0 = cm->inst_start[(size_t)s / W], nf = (size_t)mech->n_field;
    const int m = hb_step_slot_rows(k, s);
    if (!*global_set) {
        memcpy(cm->global, mc->global, (size_t)mech->n_global * sizeof *cm->global);
        *global_set = 1;
    }
    for (int i = 0, j = 0; i < m; i++) {
        if (!mc->on[i]) continue;
        const size_t inst = i0 + (size_t)j++;
        cm->node[inst * W + lane] = i;
        double *f = cm->field + inst * nf * W + lane;
        for (int q = 0; q < mech->n_param; q++)
            f[(size_t)q * W] = mc->param[(size_t)i * (size_t)mech->n_param + (size_t)q];
        for (int q = 0; q < mech->n_state; q++)
            f[(size_t)(mech->n_param + q) * W] = mech->state[q].value;
        for (int q = 0; q < mech->n_assigned; q++)
            f[(size_t)(mech->n_param + mech->n_state + q) * W] = mech->assigned[q].value;
    }
    return HB_SUCCESS;
}

/* Slot s's point processes of cm, in the model's synapse order: rows, areas, parameters,
 * initial states; the GLOBALs at their defaults (no model sets a point process's). */
static hb_status_t fill_points(const hb_step_group_t *k, hb_step_cat_mech_t *cm,
                               const hb_model_t *md, int s)
{
    const size_t W = (size_t)k->width, lane = (size_t)s % W;
    const hb_cat_mech_t *mech = cm->mech;
    const size_t i0 = cm->inst_start[(size_t)s / W], nf = (size_t)mech->n_field;
    for (int q = 0, j = 0; q < md->n_synapses; q++) {
        const hb_model_synapse_t *ms = &md->synapses[q];
        if (ms->mech != mech) continue;
        hb_node_info_t info;
        hb_status_t status = hb_cable_node(md->cable, ms->node, &info);
        if (status != HB_SUCCESS) return status;
        const size_t inst = i0 + (size_t)j++;
        cm->node[inst * W + lane] = ms->node;
        cm->area[inst * W + lane] = info.area_um2;
        double *f = cm->field + inst * nf * W + lane;
        for (int p = 0; p < mech->n_param; p++) f[(size_t)p * W] = ms->param[p];
        for (int p = 0; p < mech->n_state; p++)
            f[(size_t)(mech->n_param + p) * W] = mech->state[p].value;
        for (int p = 0; p < mech->n_assigned; p++)
            f[(size_t)(mech->n_param + mech->n_state + p) * W] = mech->assigned[p].value;
        for (int r = 0; r < mech->n_random; r++) { /* streams (0, gid: hb_sim_cat_ids, q) */
            double *id = f + (nf - 3 * (size_t)(mech->n_random - r)) * W;
            id[0] = 0.0;
            id[2 * W] = (double)q;
        }
    }
    return HB_SUCCESS;
}

/* Every element's ion values: NEURON's defaults, the model's values by region in the order
 * set, and the style from the mechanisms at the row (nrn_promote). */
static hb_status_t fill_ions(hb_sim_t *sim, const hb_step_group_t *k, const int *cells,
                             hb_step_cat_t *cat)
{
    const size_t W = (size_t)k->width, slots = (size_t)k->blocks * W;
    const size_t size = hb_step_block_base(k, k->blocks);
    for (int x = 0; x < cat->n_ion; x++) {
        hb_step_ion_t *ion = &cat->ion[x];
        if (!ALLOC(ion->e, size) || !ALLOC(ion->ci, size) || !ALLOC(ion->co, size) ||
            !ALLOC(ion->i, size) || !ALLOC(ion->didv, size) || !ALLOC(ion->e0, size) ||
            !ALLOC(ion->ci0, size) || !ALLOC(ion->co0, size) || !ALLOC(ion->style, size))
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for the ions");
        double e, ci, co;
        hb_ion_defaults(ion->name, &e, &ci, &co);
        for (size_t q = 0; q < size; q++) ion->e0[q] = e, ion->ci0[q] = ci, ion->co0[q] = co;
    }
    for (size_t s = 0; s < slots; s++) {
        /* padding lanes of a non-mixed group: the defaults, their own state */
        if (s >= (size_t)k->count) continue;
        const hb_model_t *md = hb_sim_cell_get(sim, cells[s]);
        if (!md) return hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
        const int m = hb_step_slot_rows(k, (int)s);
        for (int i = 0; i < m; i++) {
            const size_t e = hb_step_element(k, (int)s, i);
            hb_node_info_t info;
            hb_cable_node(md->cable, i, &info);
            for (int a = 0; a < md->n_ion_set; a++) {
                const hb_model_ion_set_t *set = &md->ion_set[a];
                if (set->swc_type != HB_REGION_ALL && set->swc_type != info.swc_type) continue;
                for (int x = 0; x < cat->n_ion; x++) {
                    hb_step_ion_t *ion = &cat->ion[x];
                    if (strcmp(ion->name, set->ion) != 0) continue;
                    double *to = set->what == HB_ION_E ? ion->e0 : set->what == HB_ION_CI ? ion->ci0
                                                                                          : ion->co0;
                    to[e] = set->value;
                }
            }
            for (int x = 0; x < cat->n_ion; x++) {
                int conc = 0, rev = 0;
                for (int q = 0; q < md->n_cat + md->n_synapses; q++) {
                    const hb_cat_mech_t *mech = NULL; /* at row i: a density one, a point one */
                    if (q < md->n_cat) mech = md->cat[q].on[i] ? md->cat[q].mech : NULL;
                    else if (md->synapses[q - md->n_cat].node == i)
                        mech = md->synapses[q - md->n_cat].mech;
                    if (!mech) continue;
                    for (int u = 0; u < mech->n_ion; u++) {
                        const hb_cat_ion_t *use = &mech->ion[u];
                        if (strcmp(use->ion, cat->ion[x].name) != 0) continue;
                        const unsigned c = HB_ION_CI | HB_ION_CO;
                        const int cs = use->write & c ? 3 : use->read & c ? 1 : 0;
                        const int rs = use->write & HB_ION_E ? 3 : use->read & HB_ION_E ? 1 : 0;
                        conc = cs > conc ? cs : conc;
                        rev = rs > rev ? rs : rev;
                    }
                }
                if (conc > 0 && rev < 2) rev = 2; /* nrn_promote */
                unsigned char style = 0;
                if (conc > 0 && rev == 2) style |= HB_ION_EINIT;
                if (conc == 3 && rev == 2) style |= HB_ION_EADVANCE;
                cat->ion[x].style[e] = style;
            }
        }
        hb_sim_cell_put(sim, cells[s], md);
    }
    return HB_SUCCESS;
}

hb_status_t hb_sim_cat_build(hb_sim_t *sim, const hb_step_group_t *k, const int *cells,
                             hb_step_cat_t **out)
{
    *out = NULL;
    int any = 0; /* without catalogue mechanisms, no cell is asked again (a recipe's is rebuilt) */
    for (int s = 0; s < k->count && !any; s++) any = sim->info[cells[s]].n_cat > 0;
    if (!any) return HB_SUCCESS;
    hb_step_cat_t *cat = calloc(1, sizeof *cat);
    if (!cat) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    hb_status_t status = survey(sim, k, cells, cat);
    if (status != HB_SUCCESS || cat->n_mech == 0) {
        hb_sim_cat_free(cat);
        return status;
    }
    cat->celsius = sim->opt.celsius;
    cat->second_order = sim->opt.method == HB_METHOD_CN;
    /* NEURON 8.2's nrn_nernst with its default units: the 2019 SI's exact constants, R = k NA
     * [J/(mol K)] and F = e NA [C/mol] as products of doubles (as nrnunits.lib defines them) */
    const double na = 6.02214076e23, R = 1.380649e-23 * na, F = 1.602176634e-19 * na;
    cat->ktf = 1000.0 * R * (cat->celsius + 273.15) / F;
    for (int q = 0; q < cat->n_mech && status == HB_SUCCESS; q++) {
        hb_step_cat_mech_t *cm = &cat->mech[q];
        for (int u = 0; u < cm->mech->n_ion; u++) {
            cm->ion[u] = species(cat, &cm->mech->ion[u]);
            if (cm->ion[u] >= 0 && (cm->mech->ion[u].read & HB_ION_I))
                cat->ion[cm->ion[u]].observed = 1;
        }
        status = lay_out(sim, k, cells, cm);
        int global_set = 0;
        for (int s = 0; s < k->count && status == HB_SUCCESS; s++) {
            const hb_model_t *md = hb_sim_cell_get(sim, cells[s]);
            if (!md) {
                status = hb_fail(HB_ERR_INVALID_VALUE, "%s", hb_last_error());
                break;
            }
            for (int x = 0; x < md->n_cat; x++)
                if (md->cat[x].mech == cm->mech)
                    status = fill_slot(k, cm, &md->cat[x], s, &global_set);
            if (status == HB_SUCCESS && cm->mech->kind != HB_CAT_DENSITY)
                status = fill_points(k, cm, md, s);
            hb_sim_cell_put(sim, cells[s], md);
        }
        if (status == HB_SUCCESS && !k->mixed) { /* padding lanes: lane 0's rows and fields
                                                   * (parameters of 0 could divide by 0:
                                                   * CaDynamics_E2's decay) */
            const size_t W = (size_t)k->width, nf = (size_t)cm->mech->n_field;
            for (int b = 0; b < k->blocks; b++)
                for (size_t s = (size_t)b * W; s < (size_t)(b + 1) * W; s++)
                    if (s >= (size_t)k->count)
                        for (size_t j = cm->inst_start[b]; j < cm->inst_start[b + 1]; j++) {
                            cm->node[j * W + s % W] = cm->node[j * W];
                            for (size_t f = 0; f < nf; f++)
                                cm->field[(j * nf + f) * W + s % W] = cm->field[(j * nf + f) * W];
                            if (cm->area) cm->area[j * W + s % W] = cm->area[j * W];
                        }
        }
        if (status == HB_SUCCESS && cm->mech->n_table > 0 && cm->mech->cpu->tables) {
            if (!ALLOC(cm->table, cm->mech->n_table)) status = hb_fail(HB_ERR_ALLOC, "out of memory");
            for (int t = 0; t < cm->mech->n_table && status == HB_SUCCESS; t++)
                if (!ALLOC(cm->table[t], cm->mech->table_len[t]))
                    status = hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
            if (status == HB_SUCCESS) cm->mech->cpu->tables(cat->celsius, cm->global, cm->table);
        }
    }
    if (status == HB_SUCCESS) status = fill_ions(sim, k, cells, cat);
    if (status != HB_SUCCESS) {
        hb_sim_cat_free(cat);
        return status;
    }
    *out = cat;
    return HB_SUCCESS;
}

void hb_sim_cat_rows(const hb_step_cat_t *cat, const hb_step_group_t *k, int s,
                     unsigned char *fixed)
{
    const size_t W = (size_t)k->width;
    for (int q = 0; cat && q < cat->n_mech; q++) {
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        const size_t i0 = cm->inst_start[(size_t)s / W];
        for (int j = 0; j < cm->lane_inst[s]; j++)
            fixed[cm->node[(i0 + (size_t)j) * W + (size_t)s % W]] = 0;
    }
}

void hb_sim_cat_init(const hb_step_group_t *k, double dt)
{
    for (int b = 0; k->cat && b < k->blocks; b++) hb_cat_init_block(k, b, dt);
}

void hb_sim_cat_ids(const hb_step_group_t *k, const int *cells, const uint32_t *gids)
{
    const size_t W = (size_t)k->width;
    for (int q = 0; k->cat && q < k->cat->n_mech; q++) {
        const hb_step_cat_mech_t *cm = &k->cat->mech[q];
        const hb_cat_mech_t *m = cm->mech;
        if (m->kind == HB_CAT_DENSITY || m->n_random == 0) continue;
        const size_t nf = (size_t)m->n_field;
        for (int s = 0; s < k->count; s++) {
            const double gid = gids ? (double)gids[cells[s]] : (double)cells[s];
            const size_t i0 = cm->inst_start[(size_t)s / W];
            for (int j = 0; j < cm->lane_inst[s]; j++)
                for (int r = 0; r < m->n_random; r++)
                    cm->field[((i0 + (size_t)j) * nf + nf - 3 * (size_t)(m->n_random - r) + 1) * W +
                              (size_t)s % W] = gid;
        }
    }
}
