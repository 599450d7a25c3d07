/*
 * Checkpoints of a simulation (hb_sim_save, hb_sim_load; format in docs/checkpoint.md) and the
 * record format every checkpoint shares (sim/checkpoint.h). The state saved is all a step
 * reads: each cell's v, hh gates, synapse states, catalogue fields and ions in the model's
 * order (format 4: no block or lane, so a restart may use another thread count), the probes'
 * spike-detection state (above threshold, v after the last step), the step count, and what
 * was recorded and not yet cleared, and (format 5) the point processes' waiting self-events.
 * Restored into a simulation built from the same models and
 * options (a fingerprint of both is checked), the steps that follow are the same bits as an
 * uninterrupted run's. Versions 1 to 4 are still read (1 to 3: the engine's layout).
 */
#define _POSIX_C_SOURCE 200809L
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/event_order.h"
#include "common/status.h"
#include "mech/catalogue.h"
#include "sim/checkpoint.h"
#include "sim/sim_cat.h"
#include "sim/sim_engine.h"

/* ---- the record ---- */

static const char magic[8] = {'H', 'B', 'C', 'K', 'P', 'T', '\r', '\n'};
enum { HEADER_SIZE = 32 };
static const uint32_t byte_order = 0x01020304u;

void hb_ckpt_put(hb_ckpt_buf_t *b, const void *p, size_t n)
{
    if (b->failed || n == 0) return;
    if (b->size + n > b->capacity) {
        size_t cap = b->capacity ? b->capacity : 4096;
        while (cap < b->size + n) cap *= 2;
        unsigned char *q = realloc(b->data, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->data = q;
        b->capacity = cap;
    }
    memcpy(b->data + b->size, p, n);
    b->size += n;
}

void hb_ckpt_put_u64(hb_ckpt_buf_t *b, uint64_t x) { hb_ckpt_put(b, &x, sizeof x); }
void hb_ckpt_put_i64(hb_ckpt_buf_t *b, int64_t x) { hb_ckpt_put(b, &x, sizeof x); }
void hb_ckpt_put_f64(hb_ckpt_buf_t *b, double x) { hb_ckpt_put(b, &x, sizeof x); }

void hb_ckpt_buf_free(hb_ckpt_buf_t *b)
{
    free(b->data);
    memset(b, 0, sizeof *b);
}

int hb_ckpt_get(hb_ckpt_in_t *in, void *p, size_t n)
{
    if (n == 0) return !in->bad;
    if (in->bad || n > in->size - in->pos) {
        in->bad = 1;
        memset(p, 0, n);
        return 0;
    }
    memcpy(p, in->data + in->pos, n);
    in->pos += n;
    return 1;
}

uint64_t hb_ckpt_get_u64(hb_ckpt_in_t *in)
{
    uint64_t x;
    hb_ckpt_get(in, &x, sizeof x);
    return x;
}

int64_t hb_ckpt_get_i64(hb_ckpt_in_t *in)
{
    int64_t x;
    hb_ckpt_get(in, &x, sizeof x);
    return x;
}

double hb_ckpt_get_f64(hb_ckpt_in_t *in)
{
    double x;
    hb_ckpt_get(in, &x, sizeof x);
    return x;
}

uint64_t hb_ckpt_hash(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}

uint64_t hb_ckpt_hash_f64(uint64_t h, double x) { return hb_ckpt_hash(h, &x, sizeof x); }
uint64_t hb_ckpt_hash_i64(uint64_t h, int64_t x) { return hb_ckpt_hash(h, &x, sizeof x); }

static const char *kind_name(uint32_t kind)
{
    return kind == HB_CKPT_SIM ? "simulation" : kind == HB_CKPT_NET ? "network" : "unknown";
}

/* magic[8], version u32, byte order u32, sizes of double, int, long, size_t (u8 each), kind
 * u32, payload length u64; the payload; FNV-1a of header and payload, u64. */
static void header(unsigned char h[HEADER_SIZE], uint32_t kind, uint64_t length)
{
    const uint32_t version = HB_CKPT_VERSION;
    memset(h, 0, HEADER_SIZE);
    memcpy(h, magic, 8);
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &byte_order, 4);
    h[16] = (unsigned char)sizeof(double);
    h[17] = (unsigned char)sizeof(int);
    h[18] = (unsigned char)sizeof(long);
    h[19] = (unsigned char)sizeof(size_t);
    memcpy(h + 20, &kind, 4);
    memcpy(h + 24, &length, 8);
}

hb_status_t hb_ckpt_write(FILE *f, const char *name, uint32_t kind, const hb_ckpt_buf_t *b)
{
    if (b->failed) return hb_fail(HB_ERR_ALLOC, "%s: out of memory for the checkpoint", name);
    unsigned char h[HEADER_SIZE];
    header(h, kind, (uint64_t)b->size);
    uint64_t sum = hb_ckpt_hash(hb_ckpt_hash(HB_CKPT_HASH0, h, sizeof h), b->data, b->size);
    if (fwrite(h, 1, sizeof h, f) != sizeof h || (b->size && fwrite(b->data, 1, b->size, f) != b->size) ||
        fwrite(&sum, sizeof sum, 1, f) != 1)
        return hb_fail(HB_ERR_IO, "%s: cannot write the checkpoint", name);
    return HB_SUCCESS;
}

hb_status_t hb_ckpt_read(FILE *f, const char *name, uint32_t kind, unsigned char **data,
                         size_t *size, uint32_t *version_out)
{
    *data = NULL;
    *size = 0;
    *version_out = 0;
    unsigned char h[HEADER_SIZE], want[HEADER_SIZE];
    const size_t got = fread(h, 1, sizeof h, f);
    if (got < 8 || memcmp(h, magic, 8) != 0)
        return hb_fail(HB_ERR_PARSE, "%s: not a hinesbatch checkpoint (%s)", name,
                       got < 8 ? "shorter than its header" : "no HBCKPT magic at the start");
    if (got < sizeof h)
        return hb_fail(HB_ERR_PARSE, "%s: truncated: %zu of the header's %d bytes", name, got,
                       HEADER_SIZE);
    uint32_t version, order, k;
    uint64_t length;
    memcpy(&version, h + 8, 4);
    memcpy(&order, h + 12, 4);
    memcpy(&k, h + 20, 4);
    memcpy(&length, h + 24, 8);
    header(want, kind, length);
    if (version < HB_CKPT_VERSION_OLDEST || version > HB_CKPT_VERSION)
        return hb_fail(HB_ERR_PARSE, "%s: checkpoint format version %u; expected %d to %d",
                       name, version, HB_CKPT_VERSION_OLDEST, HB_CKPT_VERSION);
    if (order != byte_order || memcmp(h + 16, want + 16, 4) != 0)
        return hb_fail(HB_ERR_PARSE, "%s: written on a machine of another byte order or type "
                       "sizes; expected this machine's", name);
    if (k != kind)
        return hb_fail(HB_ERR_PARSE, "%s: a %s checkpoint; expected a %s checkpoint", name,
                       kind_name(k), kind_name(kind));
    /* the length is checked against what is there before anything that size is allocated */
    const long here = ftell(f);
    if (here >= 0 && fseek(f, 0, SEEK_END) == 0) {
        const long end = ftell(f);
        if (end >= here && ((uint64_t)(end - here) < 8 || length > (uint64_t)(end - here) - 8))
            return hb_fail(HB_ERR_PARSE, "%s: truncated: %ld bytes after the header; its "
                           "payload and checksum take %llu", name, end - here,
                           (unsigned long long)length + 8);
        if (fseek(f, here, SEEK_SET) != 0)
            return hb_fail(HB_ERR_IO, "%s: cannot read", name);
    }
    if (length > (uint64_t)SIZE_MAX - 1)
        return hb_fail(HB_ERR_PARSE, "%s: a payload of %llu bytes", name, (unsigned long long)length);
    unsigned char *p = malloc((size_t)length + 1);
    if (!p) return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %llu bytes", name,
                           (unsigned long long)length);
    uint64_t sum = 0;
    const size_t read = fread(p, 1, (size_t)length, f);
    if (read != (size_t)length || fread(&sum, sizeof sum, 1, f) != 1) {
        free(p);
        return hb_fail(HB_ERR_PARSE, "%s: truncated: %zu of the payload's %llu bytes and its "
                       "checksum", name, read, (unsigned long long)length);
    }
    const uint64_t mine = hb_ckpt_hash(hb_ckpt_hash(HB_CKPT_HASH0, h, sizeof h), p, (size_t)length);
    if (mine != sum) {
        free(p);
        return hb_fail(HB_ERR_PARSE, "%s: corrupt: checksum %016llx, the content's %016llx", name,
                       (unsigned long long)sum, (unsigned long long)mine);
    }
    *data = p;
    *size = (size_t)length;
    *version_out = version;
    return HB_SUCCESS;
}

/* ---- the simulation ---- */

/* Models and options: what the state means. The backend and threads are not in it (the steps
 * are the same bits on any); the layout's sizes are checked apart. */
static uint64_t model_digest(const hb_model_t *md)
{
    uint64_t h = hb_ckpt_hash_i64(HB_CKPT_HASH0, md->m);
    const int *parent = hb_cable_parent(md->cable);
    for (int i = 0; i < md->m; i++) {
        hb_node_info_t info;
        memset(&info, 0, sizeof info);
        hb_cable_node(md->cable, i, &info);
        h = hb_ckpt_hash_i64(h, parent ? parent[i] : -1);
        h = hb_ckpt_hash_f64(h, info.area_um2);
        h = hb_ckpt_hash_f64(h, info.r_axial_mohm);
        h = hb_ckpt_hash_f64(h, info.cm_uf_cm2);
        h = hb_ckpt_hash_i64(h, md->has_pas[i] * 2 + md->has_hh[i]);
        h = hb_ckpt_hash_f64(h, md->pas_g[i]);
        h = hb_ckpt_hash_f64(h, md->pas_e[i]);
        for (int q = 0; q < HB_HH_NPAR; q++)
            h = hb_ckpt_hash_f64(h, md->hh[(size_t)i * HB_HH_NPAR + (size_t)q]);
    }
    for (int k = 0; k < md->n_iclamps; k++) {
        const hb_iclamp_t *c = &md->iclamps[k];
        h = hb_ckpt_hash_i64(h, c->node);
        h = hb_ckpt_hash_f64(h, c->del_ms);
        h = hb_ckpt_hash_f64(h, c->dur_ms);
        h = hb_ckpt_hash_f64(h, c->amp_na);
    }
    for (int k = 0; k < md->n_probes; k++) {
        const hb_probe_t *p = &md->probes[k];
        h = hb_ckpt_hash_i64(h, p->node);
        h = hb_ckpt_hash_i64(h, p->detect_spikes);
        h = hb_ckpt_hash_f64(h, p->threshold_mv);
        h = hb_ckpt_hash(h, p->name, strlen(p->name) + 1);
    }
    for (int k = 0; k < md->n_synapses; k++) {
        const hb_model_synapse_t *s = &md->synapses[k];
        h = hb_ckpt_hash_i64(h, s->node);
        h = hb_ckpt_hash_i64(h, s->syn.kind);
        h = hb_ckpt_hash_f64(h, s->syn.tau_ms);
        h = hb_ckpt_hash_f64(h, s->syn.tau1_ms);
        h = hb_ckpt_hash_f64(h, s->syn.tau2_ms);
        h = hb_ckpt_hash_f64(h, s->syn.e_mv);
    }
    h = hb_ckpt_hash_i64(h, ((int64_t)md->n_iclamps << 40) + ((int64_t)md->n_probes << 20) +
                                md->n_synapses);
    if (md->n_cat == 0) return h; /* a version 1 record's fingerprint (ion values: unread) */
    for (int q = 0; q < md->n_cat; q++) { /* catalogue mechanisms: where, parameters, GLOBALs */
        const hb_model_cat_t *mc = &md->cat[q];
        const hb_cat_mech_t *mech = mc->mech;
        h = hb_ckpt_hash(h, mech->name, strlen(mech->name) + 1);
        h = hb_ckpt_hash_i64(h, ((int64_t)mech->n_field << 32) + mech->n_param);
        h = hb_ckpt_hash(h, mc->on, (size_t)md->m);
        for (size_t x = 0; x < (size_t)md->m * (size_t)mech->n_param; x++)
            h = hb_ckpt_hash_f64(h, mc->param[x]);
        for (int x = 0; x < mech->n_global; x++) h = hb_ckpt_hash_f64(h, mc->global[x]);
    }
    for (int a = 0; a < md->n_ion_set; a++) {
        const hb_model_ion_set_t *set = &md->ion_set[a];
        h = hb_ckpt_hash(h, set->ion, strlen(set->ion) + 1);
        h = hb_ckpt_hash_i64(h, ((int64_t)set->swc_type << 8) + set->what);
        h = hb_ckpt_hash_f64(h, set->value);
    }
    return hb_ckpt_hash_i64(h, ((int64_t)md->n_cat << 20) + md->n_ion_set);
}

static uint64_t fingerprint(const hb_sim_t *sim)
{
    const hb_sim_options_t *o = &sim->opt;
    uint64_t h = hb_ckpt_hash_f64(HB_CKPT_HASH0, o->dt_ms);
    h = hb_ckpt_hash_f64(h, o->t_stop_ms);
    h = hb_ckpt_hash_f64(h, o->v_init_mv);
    h = hb_ckpt_hash_f64(h, o->celsius);
    h = hb_ckpt_hash_f64(h, o->sample_dt_ms);
    h = hb_ckpt_hash_i64(h, o->method);
    h = hb_ckpt_hash_i64(h, o->spike_time);
    h = hb_ckpt_hash_i64(h, o->hh_table != 0);
    h = hb_ckpt_hash_i64(h, sim->n_cells);
    uint64_t digest = 0;
    const hb_model_t *prev = NULL;
    for (int c = 0; c < sim->n_cells; c++) { /* copies of one model: digested once */
        const hb_model_t *md = hb_sim_cell_get(sim, c); /* a source's: built again */
        if (!md) return 0; /* no checkpoint matches (the source's message set) */
        if (md != prev) digest = model_digest(md);
        h = hb_ckpt_hash_i64(h, (int64_t)digest);
        hb_sim_cell_put(sim, c, md);
        prev = sim->cells ? md : NULL; /* a released model's address may come again */
    }
    if (sim->n_weights == 0) return h; /* as versions 1 and 2 wrote it */
    h = hb_ckpt_hash_i64(h, sim->n_weights); /* the connections to point processes */
    for (int i = 0; i < sim->n_weights; i++) {
        h = hb_ckpt_hash_i64(h, sim->weight_target[i]);
        h = hb_ckpt_hash_f64(h, sim->weight0[i]);
    }
    return h;
}

static size_t hh_size(const group_t *gr)
{
    return hb_step_hh_base(&gr->k, gr->k.blocks) * (size_t)gr->k.width * 3;
}

static size_t v_size(const group_t *gr)
{
    return hb_step_block_base(&gr->k, gr->k.blocks);
}

/* The layout's sizes of group g: rows (a mixed group's: minus all its blocks' rows), lanes,
 * cells, blocks, hh instances of a block (mixed: of all blocks), synapse state values. */
static void group_dims(const group_t *gr, int64_t dims[6])
{
    const hb_step_group_t *k = &gr->k;
    dims[0] = k->mixed ? -(int64_t)(v_size(gr) / (size_t)k->width) : k->m;
    dims[1] = k->width;
    dims[2] = k->count;
    dims[3] = k->blocks;
    dims[4] = k->mixed ? (int64_t)hb_step_hh_base(k, k->blocks) : k->n_hh;
    dims[5] = (int64_t)gr->n_syn_state;
}

static void put_series(hb_ckpt_buf_t *b, const series_t *s)
{
    hb_ckpt_put_i64(b, s->count);
    hb_ckpt_put(b, s->data, (size_t)s->count * sizeof *s->data);
}

static int64_t bad_value(const unsigned char *p, int64_t n, int ordered, double lo, double hi);

/* ---- catalogue mechanisms (format version 2) ----
 * Per group, after the step: the layout (mechanisms in the group's order: name, fields,
 * parameters, states, assigned, instances; ions: name, valence), checked against this
 * simulation's with any difference named; after the group's synapse states the values: each
 * mechanism's fields, each ion's e, ci, co, i, di/dv (version 4: cell by cell, group_state;
 * versions 2 and 3: every instance and lane, padding too, and every element of the group's v
 * layout, get_cat_values). */

/* Mechanism cm's instances in a record of `version`: those of the group's cells (version 4),
 * or of its layout, padding lanes' included (versions 2 and 3). */
static size_t cat_instances(const group_t *gr, const hb_step_cat_mech_t *cm, uint32_t version)
{
    if (version < 4) return cm->inst_start[gr->k.blocks];
    size_t n = 0;
    for (int s = 0; s < gr->k.count; s++) n += (size_t)cm->lane_inst[s];
    return n;
}

static void put_name(hb_ckpt_buf_t *b, const char *text)
{
    hb_ckpt_put_i64(b, (int64_t)strlen(text));
    hb_ckpt_put(b, text, strlen(text));
}

static void put_cat_layout(hb_ckpt_buf_t *b, const group_t *gr)
{
    const hb_step_cat_t *cat = gr->cat;
    hb_ckpt_put_i64(b, cat ? cat->n_mech : 0);
    for (int q = 0; cat && q < cat->n_mech; q++) {
        const hb_cat_mech_t *m = cat->mech[q].mech;
        put_name(b, m->name);
        const int64_t sizes[5] = {m->n_field, m->n_param, m->n_state, m->n_assigned,
                                  (int64_t)cat_instances(gr, &cat->mech[q], HB_CKPT_VERSION)};
        hb_ckpt_put(b, sizes, sizeof sizes);
        hb_ckpt_put_u64(b, hb_catalogue_identity(m)); /* version 3 */
    }
    hb_ckpt_put_i64(b, cat ? cat->n_ion : 0);
    for (int x = 0; cat && x < cat->n_ion; x++) {
        put_name(b, cat->ion[x].name);
        hb_ckpt_put_f64(b, cat->ion[x].valence);
    }
}

/* A name at in's position into buf (cut to its size); 0: cut short or not a name. */
static int get_name(hb_ckpt_in_t *in, char *buf, size_t size)
{
    const int64_t len = hb_ckpt_get_i64(in);
    if (in->bad || len < 1 || len > 255 || (uint64_t)len > in->size - in->pos) return 0;
    const size_t keep = (size_t)len < size - 1 ? (size_t)len : size - 1;
    memcpy(buf, in->data + in->pos, keep);
    buf[keep] = '\0';
    in->pos += (size_t)len;
    return memchr(buf, '\0', keep) == NULL;
}

/* Appends `text` to list (", " between), cut at its size. */
static void list_add(char *list, size_t size, const char *text)
{
    const size_t used = strlen(list);
    if (used + 3 < size) snprintf(list + used, size - used, "%s%s", used ? ", " : "", text);
}

/* Group g's catalogue layout at in's position against this simulation's: what differs named. */
static hb_status_t get_cat_layout(const group_t *gr, int g, hb_ckpt_in_t *in, const char *name)
{
    const hb_step_cat_t *cat = gr->cat;
    const int n_mech = cat ? cat->n_mech : 0, n_ion = cat ? cat->n_ion : 0;
    char theirs[512] = "", mine[512] = "", text[256];
    const int64_t mechs = hb_ckpt_get_i64(in);
    if (in->bad || mechs < 0 || mechs > 4096)
        return hb_fail(HB_ERR_PARSE, "%s: group %d's catalogue mechanisms: a count of %lld; "
                       "expected 0 to 4096", name, g, (long long)mechs);
    int same = mechs == n_mech;
    for (int64_t q = 0; q < mechs; q++) {
        if (!get_name(in, text, sizeof text))
            return hb_fail(HB_ERR_PARSE, "%s: group %d's catalogue mechanism %lld: its name is cut "
                           "short or not a name", name, g, (long long)q);
        int64_t sizes[5];
        hb_ckpt_get(in, sizes, sizeof sizes);
        const uint64_t identity = in->version >= 3 ? hb_ckpt_get_u64(in) : 0;
        list_add(theirs, sizeof theirs, text);
        if (!same) continue;
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        const hb_cat_mech_t *m = cm->mech;
        if (strcmp(text, m->name) != 0) {
            same = 0;
            continue;
        }
        const int64_t here[5] = {m->n_field, m->n_param, m->n_state, m->n_assigned,
                                 (int64_t)cat_instances(gr, cm, in->version)};
        if (!in->bad && memcmp(sizes, here, sizeof here) != 0)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: group %d's %s has %lld fields (%lld "
                           "parameters, %lld states, %lld assigned) on %lld instances in the "
                           "checkpoint; here %lld (%lld, %lld, %lld) on %lld: expected a "
                           "checkpoint of the same .mod files inserted in the same places",
                           name, g, m->name, (long long)sizes[0], (long long)sizes[1],
                           (long long)sizes[2], (long long)sizes[3], (long long)sizes[4],
                           (long long)here[0], (long long)here[1], (long long)here[2],
                           (long long)here[3], (long long)here[4]);
        if (!in->bad && in->version >= 3 && identity != hb_catalogue_identity(m))
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: group %d's %s is of another catalogue "
                           "build in the checkpoint (identity %016llx; here %016llx): expected a "
                           "checkpoint of the same catalogue, built from the same .mod files",
                           name, g, m->name, (unsigned long long)identity,
                           (unsigned long long)hb_catalogue_identity(m));
    }
    if (in->bad) return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
    for (int q = 0; q < n_mech; q++) list_add(mine, sizeof mine, cat->mech[q].mech->name);
    if (!same)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: group %d's catalogue mechanisms in the "
                       "checkpoint: [%s]; in this simulation: [%s]: expected a checkpoint of "
                       "the same mechanisms", name, g, theirs, mine);
    const int64_t ions = hb_ckpt_get_i64(in);
    if (in->bad || ions < 0 || ions > 4096)
        return hb_fail(HB_ERR_PARSE, "%s: group %d's ions: a count of %lld; expected 0 to 4096",
                       name, g, (long long)ions);
    theirs[0] = mine[0] = '\0';
    same = ions == n_ion;
    for (int64_t x = 0; x < ions; x++) {
        if (!get_name(in, text, sizeof text))
            return hb_fail(HB_ERR_PARSE, "%s: group %d's ion %lld: its name is cut short or not "
                           "a name", name, g, (long long)x);
        const double valence = hb_ckpt_get_f64(in);
        char item[300];
        snprintf(item, sizeof item, "%s (%g)", text, valence);
        list_add(theirs, sizeof theirs, item);
        if (same && (strcmp(text, cat->ion[x].name) != 0 || valence != cat->ion[x].valence))
            same = 0;
    }
    if (in->bad) return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
    for (int x = 0; x < n_ion; x++) {
        char item[64];
        snprintf(item, sizeof item, "%s (%g)", cat->ion[x].name, cat->ion[x].valence);
        list_add(mine, sizeof mine, item);
    }
    if (!same)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: group %d's ions (valence) in the checkpoint: "
                       "[%s]; in this simulation: [%s]: expected a checkpoint of the same "
                       "mechanisms", name, g, theirs, mine);
    return HB_SUCCESS;
}

/* Field f of mechanism m read as x (own: this simulation's value there): a RANGE PARAMETER
 * finite and within its declared <lo,hi> or `own`, a STATE finite, an ASSIGNED not NaN (a rate
 * may be infinite); scratch unchecked (written before it is read) except in a mechanism with
 * RANDOM, whose scratch (its streams' positions among it) must be finite and whose streams'
 * ids integers the draw's casts take. `who` and `at` name the instance in the message (name
 * NULL: no message, only the answer). */
static hb_status_t check_field(const hb_cat_mech_t *m, size_t f, double x, double own,
                               const char *who, const char *at, const char *name)
{
    const size_t nf = (size_t)m->n_field;
    const char *kind = NULL;
    const hb_cat_field_t *decl = NULL;
    if (f < (size_t)m->n_param) {
        decl = &m->param[f];
        if (!(isfinite(x) && ((x >= decl->lo && x <= decl->hi) || x == own))) kind = "parameter";
    } else if (f < (size_t)(m->n_param + m->n_state)) {
        decl = &m->state[f - (size_t)m->n_param];
        if (!isfinite(x)) kind = "state";
    } else if (f < (size_t)(m->n_param + m->n_state + m->n_assigned)) {
        decl = &m->assigned[f - (size_t)m->n_param - (size_t)m->n_state];
        if (isnan(x)) kind = "assigned value";
    } else if (m->n_random) { /* scratch, the RANDOMs' positions among it, then ids */
        const size_t id = f + 3 * (size_t)m->n_random >= nf
                              ? (f + 3 * (size_t)m->n_random - nf) % 3 : 3;
        /* ids: integers that the draw's casts take (id1 to u64, id2 and id3 to u32) */
        const double top = id == 0 ? 0x1p63 : 0x1p32;
        if (!isfinite(x) || (id < 3 && (x < 0.0 || x >= top || x != floor(x)))) {
            if (!name) return HB_ERR_PARSE;
            static const char *const what[4] = {"stream id1", "stream id2", "stream id3",
                                                "stream position or scratch value"};
            return hb_fail(HB_ERR_PARSE, "%s: %s %s field %zu (a RANDOM %s) of %s is %g; "
                           "expected %s", name, who, m->name, f, what[id], at, x,
                           id < 3 ? "an integer from 0 below 2^32 (id1: 2^63)"
                                  : "a finite value");
        }
    }
    if (kind && !name) return HB_ERR_PARSE;
    if (kind)
        return hb_fail(HB_ERR_PARSE, "%s: %s %s.%s (a %s) of %s is %g; expected %s", name, who,
                       m->name, decl->name, kind, at, x, f < (size_t)m->n_param
                       ? "a finite value within its declared range"
                       : "a value the run could have reached");
    return HB_SUCCESS;
}

/* Group g's catalogue values at in's position: checked (apply 0) or set (apply 1). A RANGE
 * PARAMETER must be within its declared <lo,hi> or this simulation's own value (padding lanes
 * hold 0), a STATE finite, an ASSIGNED not NaN (a rate may be infinite), the ions' values
 * finite; the scratch fields are written before they are read. */
static hb_status_t get_cat_values(group_t *gr, int g, hb_ckpt_in_t *in, const char *name,
                                  int apply)
{
    hb_step_cat_t *cat = gr->cat;
    const size_t W = (size_t)gr->k.width, n = v_size(gr);
    for (int q = 0; cat && q < cat->n_mech; q++) {
        hb_step_cat_mech_t *cm = &cat->mech[q];
        const hb_cat_mech_t *m = cm->mech;
        const size_t nf = (size_t)m->n_field, count = cat_instances(gr, cm, 3) * nf * W;
        if (count > (in->size - in->pos) / sizeof(double)) {
            in->bad = 1;
            return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
        }
        const unsigned char *p = in->data + in->pos;
        if (apply) memcpy(cm->field, p, count * sizeof *cm->field);
        for (size_t e = 0; e < count && !apply; e++) {
            const size_t f = e / W % nf, j = e / W / nf;
            double x;
            memcpy(&x, p + e * sizeof x, sizeof x);
            if (check_field(m, f, x, cm->field[e], NULL, NULL, NULL) == HB_SUCCESS) continue;
            char who[64], at[64];
            snprintf(who, sizeof who, "group %d's", g);
            snprintf(at, sizeof at, "instance %zu, lane %zu", j, e % W);
            return check_field(m, f, x, cm->field[e], who, at, name);
        }
        in->pos += count * sizeof(double);
    }
    for (int x = 0; cat && x < cat->n_ion; x++) {
        hb_step_ion_t *ion = &cat->ion[x];
        double *a[5] = {ion->e, ion->ci, ion->co, ion->i, ion->didv};
        static const char *const what[5] = {"reversal potential", "inner concentration",
                                            "outer concentration", "current", "conductance"};
        for (int k = 0; k < 5; k++) {
            if (n > (in->size - in->pos) / sizeof(double)) {
                in->bad = 1;
                return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
            }
            if (apply) memcpy(a[k], in->data + in->pos, n * sizeof(double));
            else {
                const int64_t e = bad_value(in->data + in->pos, (int64_t)n, 0, -HUGE_VAL,
                                            HUGE_VAL);
                if (e >= 0)
                    return hb_fail(HB_ERR_PARSE, "%s: group %d's %s %s at element %lld is not a "
                                   "finite number; expected a state the run could have reached",
                                   name, g, ion->name, what[k], (long long)e);
            }
            in->pos += n * sizeof(double);
        }
    }
    return HB_SUCCESS;
}

/* ---- the state in the model's order (format version 4) ----
 * Per group, each kind of value for the group's cells in the simulation's cell order, and each
 * cell's values in its own order: v per node; the hh gates (m, h, n) per hh instance; the
 * hard-coded synapses' states (g, or A and B) per synapse; per catalogue mechanism its
 * instances' fields; per ion e, ci, co, i and di/dv per node. Nothing says where a cell sits
 * in the blocks (their width follows the thread count, docs/sim-engine.md), so a record written
 * on one thread count restarts on any other to the same bits. Padding lanes are not saved:
 * no cell reads them, and a load leaves them as hb_sim_init set them. */

enum { XFER_PUT, XFER_CHECK, XFER_SET };

typedef struct {
    int mode;
    hb_ckpt_buf_t *b; /* PUT */
    hb_ckpt_in_t *in; /* CHECK, SET */
    double x;         /* CHECK: the value read */
} xfer_t;

/* One value: *p into the record (PUT), or the record's next value into t->x (CHECK) or *p
 * (SET). 0: the record ended. */
static int xfer(xfer_t *t, double *p)
{
    if (t->mode == XFER_PUT) {
        hb_ckpt_put_f64(t->b, *p);
        return 1;
    }
    const double x = hb_ckpt_get_f64(t->in);
    if (t->in->bad) return 0;
    if (t->mode == XFER_SET) *p = x;
    t->x = x;
    return 1;
}

/* The slots of every group's cells in the simulation's cell order: group g's at
 * order[first[g] .. first[g + 1]). 0: out of memory. */
static int cell_order(const hb_sim_t *sim, int **order, int **first)
{
    *order = malloc(((size_t)sim->n_cells + 1) * sizeof **order);
    *first = calloc((size_t)sim->n_groups + 2, sizeof **first);
    int *fill = calloc((size_t)sim->n_groups + 1, sizeof *fill);
    if (!*order || !*first || !fill) {
        free(*order);
        free(*first);
        free(fill);
        return 0;
    }
    for (int c = 0; c < sim->n_cells; c++) (*first)[sim->group_of[c] + 1]++;
    for (int g = 0; g < sim->n_groups; g++) (*first)[g + 1] += (*first)[g];
    for (int c = 0; c < sim->n_cells; c++) {
        const int g = sim->group_of[c];
        (*order)[(*first)[g] + fill[g]++] = sim->slot_of[c];
    }
    free(fill);
    return 1;
}

/* Group g's layout-free sizes: cells, nodes, hh instances and synapse state values of its
 * cells. */
static void cell_dims(const group_t *gr, int64_t dims[4])
{
    const hb_step_group_t *k = &gr->k;
    memset(dims, 0, 4 * sizeof *dims);
    dims[0] = k->count;
    for (int s = 0; s < k->count; s++) {
        dims[1] += hb_step_slot_rows(k, s);
        dims[2] += k->mixed ? k->lane_hh[s] : k->n_hh;
        dims[3] += gr->syn_start ? 2 * (gr->syn_start[s + 1] - gr->syn_start[s]) : 0;
    }
}

static hb_status_t ends_early(hb_ckpt_in_t *in, const char *name)
{
    in->bad = 1;
    return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
}

/* Group g's values (its cells' slots: slots[0 .. n)) into the record, or checked or set from
 * it (t->mode). Checked as a file's would be: voltages, gates, synapse states and ions' values
 * finite, catalogue fields as check_field says. */
static hb_status_t group_state(hb_sim_t *sim, int g, const int *slots, int n, xfer_t *t,
                               const char *name)
{
    group_t *gr = &sim->groups[g];
    const hb_step_group_t *k = &gr->k;
    const size_t W = (size_t)k->width;
    const int check = t->mode == XFER_CHECK;
    for (int a = 0; a < n; a++) { /* voltages */
        const int s = slots[a];
        for (int i = 0; i < hb_step_slot_rows(k, s); i++) {
            if (!xfer(t, &gr->v[hb_step_element(k, s, i)])) return ends_early(t->in, name);
            if (check && !isfinite(t->x))
                return hb_fail(HB_ERR_PARSE, "%s: cell %d's voltage at node %d is not a finite "
                               "number; expected a state the run could have reached", name,
                               gr->cells[s], i);
        }
    }
    for (int a = 0; a < n; a++) { /* hh gates */
        const int s = slots[a], lane = s % k->width, nh = k->mixed ? k->lane_hh[s] : k->n_hh;
        const size_t base = hb_step_hh_base(k, s / k->width);
        for (int j = 0; j < nh; j++)
            for (int x = 0; x < 3; x++) {
                double *p = &gr->hh_state[((base + (size_t)j) * 3 + (size_t)x) * W + (size_t)lane];
                if (!xfer(t, p)) return ends_early(t->in, name);
                if (check && !isfinite(t->x))
                    return hb_fail(HB_ERR_PARSE, "%s: cell %d's hh gate %c of hh instance %d is "
                                   "not a finite number; expected a state the run could have "
                                   "reached", name, gr->cells[s], "mhn"[x], j);
            }
    }
    for (int a = 0; a < n && gr->syn_start; a++) { /* hard-coded synapses */
        const int s = slots[a], c = gr->cells[s];
        for (int q = 0; q < gr->syn_start[s + 1] - gr->syn_start[s]; q++) {
            size_t stride = 1;
            double *p = hb_sim_synapse_state(sim, c, q, NULL, &stride);
            for (int j = 0; j < 2; j++) {
                if (!xfer(t, p + (size_t)j * stride)) return ends_early(t->in, name);
                if (check && !isfinite(t->x))
                    return hb_fail(HB_ERR_PARSE, "%s: cell %d's synapse %d state %d is not a "
                                   "finite number; expected a state the run could have reached",
                                   name, c, q, j);
            }
        }
    }
    hb_step_cat_t *cat = gr->cat;
    for (int q = 0; cat && q < cat->n_mech; q++) { /* catalogue mechanisms */
        const hb_step_cat_mech_t *cm = &cat->mech[q];
        const hb_cat_mech_t *m = cm->mech;
        const size_t nf = (size_t)m->n_field;
        for (int a = 0; a < n; a++) {
            const int s = slots[a], b = s / k->width;
            const size_t lane = (size_t)(s % k->width);
            for (int j = 0; j < cm->lane_inst[s]; j++)
                for (size_t f = 0; f < nf; f++) {
                    double *p = &cm->field[((cm->inst_start[b] + (size_t)j) * nf + f) * W + lane];
                    if (!xfer(t, p)) return ends_early(t->in, name);
                    if (!check || check_field(m, f, t->x, *p, NULL, NULL, NULL) == HB_SUCCESS)
                        continue;
                    char who[64], at[32];
                    snprintf(who, sizeof who, "cell %d's", gr->cells[s]);
                    snprintf(at, sizeof at, "instance %d", j);
                    return check_field(m, f, t->x, *p, who, at, name);
                }
        }
    }
    for (int x = 0; cat && x < cat->n_ion; x++) { /* ions */
        hb_step_ion_t *ion = &cat->ion[x];
        double *arr[5] = {ion->e, ion->ci, ion->co, ion->i, ion->didv};
        static const char *const what[5] = {"reversal potential", "inner concentration",
                                            "outer concentration", "current", "conductance"};
        for (int y = 0; y < 5; y++)
            for (int a = 0; a < n; a++) {
                const int s = slots[a];
                for (int i = 0; i < hb_step_slot_rows(k, s); i++) {
                    if (!xfer(t, &arr[y][hb_step_element(k, s, i)])) return ends_early(t->in, name);
                    if (check && !isfinite(t->x))
                        return hb_fail(HB_ERR_PARSE, "%s: cell %d's %s %s at node %d is not a "
                                       "finite number; expected a state the run could have "
                                       "reached", name, gr->cells[s], ion->name, what[y], i);
                }
            }
    }
    return HB_SUCCESS;
}

/* Every group's values (group_state) in the record's order. */
static hb_status_t cells_state(hb_sim_t *sim, xfer_t *t, const char *name)
{
    int *order = NULL, *first = NULL;
    if (!cell_order(sim, &order, &first))
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", name);
    hb_status_t status = HB_SUCCESS;
    for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
        status = group_state(sim, g, order + first[g], first[g + 1] - first[g], t, name);
    free(order);
    free(first);
    return status;
}

/* ---- the connections' weight vectors (format version 3) ----
 * Their count and width, then per vector its target and HB_CAT_MAX_WEIGHT doubles: the weight
 * and NET_RECEIVE's per-connection state (ProbAMPANMDA_EMS's Psurv, TMSyn's y, z, u, tsyn). */
static void put_weights(hb_ckpt_buf_t *b, const hb_sim_t *sim)
{
    hb_ckpt_put_i64(b, sim->n_weights);
    hb_ckpt_put_i64(b, HB_CAT_MAX_WEIGHT);
    for (int i = 0; i < sim->n_weights; i++) {
        hb_ckpt_put_i64(b, sim->weight_target[i]);
        hb_ckpt_put(b, sim->weights + (size_t)i * HB_CAT_MAX_WEIGHT,
                    HB_CAT_MAX_WEIGHT * sizeof(double));
    }
}

/* The weight vectors at in's position: checked (apply 0: the count, width and targets this
 * simulation's, every value finite) or set (apply 1). */
static hb_status_t get_weights(hb_sim_t *sim, hb_ckpt_in_t *in, const char *name, int apply)
{
    const int64_t n = hb_ckpt_get_i64(in), width = hb_ckpt_get_i64(in);
    if (in->bad) return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
    if (n != sim->n_weights || width != HB_CAT_MAX_WEIGHT)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %lld connection weight vectors of %lld values "
                       "in the checkpoint; this simulation has %d of %d: expected a checkpoint "
                       "of the same connections", name, (long long)n, (long long)width,
                       sim->n_weights, HB_CAT_MAX_WEIGHT);
    const size_t each = sizeof(int64_t) + HB_CAT_MAX_WEIGHT * sizeof(double);
    if ((uint64_t)n > (in->size - in->pos) / each) {
        in->bad = 1;
        return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
    }
    for (int i = 0; i < sim->n_weights; i++) {
        const int64_t target = hb_ckpt_get_i64(in);
        const unsigned char *p = in->data + in->pos;
        if (target != sim->weight_target[i])
            return hb_fail(HB_ERR_PARSE, "%s: weight vector %d targets synapse %lld of the "
                           "simulation; expected %d (its connection's)", name, i,
                           (long long)target, sim->weight_target[i]);
        const int64_t k = bad_value(p, HB_CAT_MAX_WEIGHT, 0, -HUGE_VAL, HUGE_VAL);
        if (k >= 0)
            return hb_fail(HB_ERR_PARSE, "%s: weight vector %d's value %lld is not a finite "
                           "number; expected the weight and NET_RECEIVE's state the run could "
                           "have reached", name, i, (long long)k);
        if (apply)
            memcpy(sim->weights + (size_t)i * HB_CAT_MAX_WEIGHT, p,
                   HB_CAT_MAX_WEIGHT * sizeof(double));
        in->pos += HB_CAT_MAX_WEIGHT * sizeof(double);
    }
    return HB_SUCCESS;
}

/* ---- the point processes' waiting self-events (format version 5) ----
 * The queue's sequence counter and event count, then per event its step, target, weight
 * vector, sequence and movable (int64 each) and its time, flag and own weight (double each):
 * all hb_self_requests and the deliveries read, so net_move finds the event it moves. */
enum { SELF_EVENT_SIZE = 5 * sizeof(int64_t) + 3 * sizeof(double) };

static void put_self_events(hb_ckpt_buf_t *b, const hb_self_queue_t *q)
{
    hb_ckpt_put_i64(b, q->seq);
    hb_ckpt_put_i64(b, (int64_t)q->n);
    for (size_t i = 0; i < q->n; i++) {
        const hb_self_event_t *e = &q->heap[i];
        hb_ckpt_put_i64(b, e->step);
        hb_ckpt_put_i64(b, e->target);
        hb_ckpt_put_i64(b, e->weights);
        hb_ckpt_put_i64(b, e->seq);
        hb_ckpt_put_i64(b, e->movable);
        hb_ckpt_put_f64(b, e->time);
        hb_ckpt_put_f64(b, e->flag);
        hb_ckpt_put_f64(b, e->weight);
    }
}

/* get_self_events' n events; movable[target]: 1 once the target has its movable event. */
static hb_status_t get_self_event_list(hb_sim_t *sim, hb_ckpt_in_t *in, const char *name,
                                       int64_t step, int apply, int64_t seq, int64_t n,
                                       char *movable)
{
    const int targets = sim->target_first[sim->n_cells];
    const double dt = sim->opt.dt_ms;
    for (int64_t i = 0; i < n; i++) {
        hb_self_event_t e;
        int64_t x[5];
        double y[3];
        hb_ckpt_get(in, x, sizeof x);
        hb_ckpt_get(in, y, sizeof y);
        if (x[1] < 0 || x[1] >= targets)
            return hb_fail(HB_ERR_PARSE, "%s: self-event %lld targets synapse %lld; expected "
                           "0..%d (this simulation's)", name, (long long)i, (long long)x[1],
                           targets - 1);
        const hb_sim_target_t *t = &sim->targets[x[1]];
        if (!t->point ||
            !sim->groups[t->group].k.cat->mech[t->point - 1].mech->cpu->net_receive_self)
            return hb_fail(HB_ERR_PARSE, "%s: self-event %lld targets synapse %lld, whose "
                           "mechanism sends itself no events; expected a synapse of one that "
                           "does", name, (long long)i, (long long)x[1]);
        if (x[4] == 1) { /* net_move moves a target's one movable event: at most one each */
            if (movable[x[1]])
                return hb_fail(HB_ERR_PARSE, "%s: self-event %lld is a second movable event of "
                               "synapse %lld; expected at most one a synapse", name,
                               (long long)i, (long long)x[1]);
            movable[x[1]] = 1;
        }
        if (x[2] < -1 || x[2] >= sim->n_weights)
            return hb_fail(HB_ERR_PARSE, "%s: self-event %lld's weight vector is %lld; expected "
                           "-1 (its own weight) or 0..%d (the connections')", name, (long long)i,
                           (long long)x[2], sim->n_weights - 1);
        if (x[3] < 0 || x[3] >= seq || (x[4] != 0 && x[4] != 1))
            return hb_fail(HB_ERR_PARSE, "%s: self-event %lld's sequence %lld or movable %lld; "
                           "expected 0..%lld and 0 or 1", name, (long long)i, (long long)x[3],
                           (long long)x[4], (long long)seq - 1);
        if (!isfinite(y[0]) || x[0] < step ||
            x[0] != hb_event_step(y[0], dt))
            return hb_fail(HB_ERR_PARSE, "%s: self-event %lld at t = %.17g ms (step %lld); "
                           "expected a finite time delivered at step %lld or later (the "
                           "checkpoint's t = %.17g ms) in the step its time falls in", name,
                           (long long)i, y[0], (long long)x[0], (long long)step,
                           (double)step * dt);
        if (!isfinite(y[1]) || !isfinite(y[2]))
            return hb_fail(HB_ERR_PARSE, "%s: self-event %lld's flag %.17g or weight %.17g is "
                           "not a finite number", name, (long long)i, y[1], y[2]);
        if (!apply) continue;
        e = (hb_self_event_t){(long)x[0], (int)x[1], (int)x[2], y[0], y[1], y[2], (long)x[3],
                              (int)x[4]};
        const hb_status_t st = hb_self_push(&sim->self_events, &e);
        if (st != HB_SUCCESS) return st;
    }
    return HB_SUCCESS;
}

/* The self-events at in's position, the record's step `step`: checked (apply 0) or queued in
 * place of those hb_sim_init's INITIALs sent (apply 1). */
static hb_status_t get_self_events(hb_sim_t *sim, hb_ckpt_in_t *in, const char *name,
                                   int64_t step, int apply)
{
    const int64_t seq = hb_ckpt_get_i64(in), n = hb_ckpt_get_i64(in);
    if (in->bad || n < 0 || (uint64_t)n > (in->size - in->pos) / SELF_EVENT_SIZE) {
        in->bad = 1;
        return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
    }
    if (seq < 0 || seq < n)
        return hb_fail(HB_ERR_PARSE, "%s: %lld self-events sent, %lld waiting; expected at "
                       "least as many sent as wait", name, (long long)seq, (long long)n);
    if (n > 0 && !sim->self_mechs)
        return hb_fail(HB_ERR_PARSE, "%s: %lld self-events waiting; this simulation has no point "
                       "process that sends itself events: expected none", name, (long long)n);
    if (apply) hb_self_clear(&sim->self_events);
    char *movable = calloc((size_t)sim->target_first[sim->n_cells] + 1, 1);
    if (!movable) return hb_fail(HB_ERR_ALLOC, "%s: no memory for its self-events", name);
    const hb_status_t st = get_self_event_list(sim, in, name, step, apply, seq, n, movable);
    free(movable);
    if (st != HB_SUCCESS) return st;
    if (apply) sim->self_events.seq = (long)seq;
    return HB_SUCCESS;
}

/* The engine must be one whose state can be read back (the CPU's). */
static hb_status_t check_engine(const hb_sim_t *sim, const char *name)
{
    if (sim->ops->steps_in_place && sim->ops->get_probes) return HB_SUCCESS;
    return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: checkpoints need the CPU engine (backend seq or "
                   "omp); backend '%s' keeps its state on the device", name,
                   hb_backend_name(hb_context_backend(sim->ctx)));
}

hb_status_t hb_sim_checkpoint_put(const hb_sim_t *sim, hb_ckpt_buf_t *b, const char *name)
{
    hb_status_t status = check_engine(sim, name);
    if (status != HB_SUCCESS) return status;
    if (!sim->initialised || sim->failed)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: the simulation is %s; a checkpoint holds one "
                       "after hb_sim_init", name, sim->failed ? "stopped at a non-finite state"
                                                             : "not initialised");
    hb_ckpt_put_u64(b, fingerprint(sim));
    hb_ckpt_put_i64(b, sim->n_cells);
    hb_ckpt_put_i64(b, sim->n_groups);
    hb_ckpt_put_i64(b, sim->n_probes);
    for (int g = 0; g < sim->n_groups; g++) {
        int64_t dims[4];
        cell_dims(&sim->groups[g], dims);
        hb_ckpt_put(b, dims, sizeof dims);
    }
    hb_ckpt_put_i64(b, sim->step);
    for (int g = 0; g < sim->n_groups; g++) put_cat_layout(b, &sim->groups[g]);
    xfer_t t = {XFER_PUT, b, NULL, 0.0};
    status = cells_state((hb_sim_t *)sim, &t, name); /* read only: PUT writes nothing back */
    if (status != HB_SUCCESS) return status;
    put_weights(b, sim); /* version 3 */
    put_self_events(b, &sim->self_events); /* version 5 */
    unsigned char *above = calloc((size_t)sim->n_probes + 1, 1);
    double *v_prev = calloc((size_t)sim->n_probes + 1, sizeof *v_prev);
    if (!above || !v_prev) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", name);
    if (status == HB_SUCCESS) status = sim->ops->get_probes(sim->engine, above, v_prev);
    if (status == HB_SUCCESS) {
        hb_ckpt_put(b, above, (size_t)sim->n_probes);
        hb_ckpt_put(b, v_prev, (size_t)sim->n_probes * sizeof *v_prev);
        put_series(b, &sim->times);
        for (int p = 0; p < sim->n_probes; p++) {
            put_series(b, &sim->traces[p]);
            put_series(b, &sim->spikes[p]);
        }
    }
    free(above);
    free(v_prev);
    return status;
}

/* A series of at most `most` values at in's position: its count (-1: bad) and values. */
static int64_t get_series(hb_ckpt_in_t *in, int64_t most, const unsigned char **values)
{
    const int64_t n = hb_ckpt_get_i64(in);
    if (in->bad || n < 0 || n > most || (uint64_t)n > (in->size - in->pos) / sizeof(double))
        return -1;
    *values = in->data + in->pos;
    in->pos += (size_t)n * sizeof(double);
    return n;
}

/* Values read from a record are checked as a file's would be: the checksum only says the bytes
 * are the ones written, not that whoever wrote them wrote sense. The first of n doubles at p
 * that is not finite, or (ordered) smaller than the one before it, or outside [lo, hi]: its
 * index, or -1 when all are good. */
static int64_t bad_value(const unsigned char *p, int64_t n, int ordered, double lo, double hi)
{
    double before = -HUGE_VAL;
    for (int64_t k = 0; k < n; k++) {
        double x;
        memcpy(&x, p + (size_t)k * sizeof x, sizeof x);
        if (!isfinite(x) || x < lo || x > hi || (ordered && x < before)) return k;
        before = x;
    }
    return -1;
}

static hb_status_t set_series(series_t *s, int64_t n, const unsigned char *values,
                              const char *name)
{
    if (n > s->capacity) {
        double *p = realloc(s->data, (size_t)n * sizeof *p);
        if (!p) return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %lld recorded values", name,
                               (long long)n);
        s->data = p;
        s->capacity = (int)n;
    }
    if (n) memcpy(s->data, values, (size_t)n * sizeof *s->data);
    s->count = (int)n;
    return HB_SUCCESS;
}

/* Reads the state at in's position; apply 0: only checks it (sizes, fingerprint), 1: sets it. */
static hb_status_t get_state(hb_sim_t *sim, hb_ckpt_in_t *in, const char *name, int apply)
{
    const uint64_t print = hb_ckpt_get_u64(in);
    const int64_t cells = hb_ckpt_get_i64(in), groups = hb_ckpt_get_i64(in);
    const int64_t probes = hb_ckpt_get_i64(in);
    if (in->bad) return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
    if (cells != sim->n_cells || groups != sim->n_groups || probes != sim->n_probes)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of %lld cells in %lld groups with "
                       "%lld probes; this simulation has %d cells in %d groups with %d probes: "
                       "expected a checkpoint of the same model", name, (long long)cells,
                       (long long)groups, (long long)probes, sim->n_cells, sim->n_groups,
                       sim->n_probes);
    if (in->version < 2) /* version 1 had no catalogue state */
        for (int g = 0; g < sim->n_groups; g++)
            if (sim->groups[g].cat)
                return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of format version %u, "
                               "which holds no catalogue mechanisms' state; this simulation has "
                               "catalogue mechanisms (%s in group %d): expected version %d",
                               name, in->version, sim->groups[g].cat->mech[0].mech->name, g,
                               HB_CKPT_VERSION);
    if (in->version < 3 && sim->n_weights) /* no weight vectors before version 3 */
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of format version %u, which holds "
                       "no connections to catalogue point processes; this simulation has %d: "
                       "expected version %d", name, in->version, sim->n_weights, HB_CKPT_VERSION);
    if (in->version >= 2) { /* the catalogue layouts first: a difference named, not a hash */
        hb_ckpt_in_t peek = *in;
        peek.pos += (size_t)sim->n_groups * (in->version >= 4 ? 4 : 6) * sizeof(int64_t) +
                    sizeof(int64_t);
        if (peek.pos > peek.size) peek.bad = 1;
        for (int g = 0; g < sim->n_groups; g++) {
            const hb_status_t st = get_cat_layout(&sim->groups[g], g, &peek, name);
            if (st != HB_SUCCESS) return st;
        }
    }
    const uint64_t mine = fingerprint(sim);
    if (print != mine)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of another model or other options "
                       "(fingerprint %016llx; this simulation's %016llx): expected one written "
                       "by a simulation of the same cells, dt, t_stop, v_init, celsius, "
                       "sample_dt, method and spike rule", name, (unsigned long long)print,
                       (unsigned long long)mine);
    for (int g = 0; g < sim->n_groups && in->version >= 4; g++) {
        int64_t dims[4], here[4];
        hb_ckpt_get(in, dims, sizeof dims);
        cell_dims(&sim->groups[g], here);
        if (!in->bad && memcmp(dims, here, sizeof dims) != 0)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: group %d of the checkpoint holds %lld cells "
                           "of %lld nodes, %lld hh instances and %lld synapse values; here %lld, "
                           "%lld, %lld and %lld: expected a checkpoint of the same model", name, g,
                           (long long)dims[0], (long long)dims[1], (long long)dims[2],
                           (long long)dims[3], (long long)here[0], (long long)here[1],
                           (long long)here[2], (long long)here[3]);
    }
    for (int g = 0; g < sim->n_groups && in->version < 4; g++) {
        const group_t *gr = &sim->groups[g];
        const hb_step_group_t *k = &gr->k;
        int64_t dims[6], here[6];
        hb_ckpt_get(in, dims, sizeof dims);
        group_dims(gr, here);
        if (memcmp(dims, here, sizeof dims) != 0)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: group %d of the checkpoint is laid out "
                           "differently (%lld nodes, %lld lanes, %lld cells); here %d nodes, %d "
                           "lanes, %d cells: a checkpoint of format version %u is laid out in the "
                           "blocks of the thread count that wrote it; expected it on that thread "
                           "count (or one keeping its blocks' width), or a checkpoint of version "
                           "%d, which restarts on any",
                           name, g, (long long)dims[0], (long long)dims[1], (long long)dims[2],
                           k->m, k->width, k->count, in->version, HB_CKPT_VERSION);
    }
    const int64_t step = hb_ckpt_get_i64(in);
    const long steps = hb_sim_steps(sim);
    if (!in->bad && (step < 0 || step > steps))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: step %lld; expected 0..%ld", name,
                       (long long)step, steps);
    for (int g = 0; g < sim->n_groups && in->version >= 2; g++) {
        const hb_status_t st = get_cat_layout(&sim->groups[g], g, in, name);
        if (st != HB_SUCCESS) return st;
    }
    if (in->version >= 4 && !in->bad) {
        xfer_t t = {apply ? XFER_SET : XFER_CHECK, NULL, in, 0.0};
        const hb_status_t st = cells_state(sim, &t, name);
        if (st != HB_SUCCESS) return st;
    }
    for (int g = 0; g < sim->n_groups && in->version < 4; g++) {
        group_t *gr = &sim->groups[g];
        double *dst[3] = {gr->v, gr->hh_state, gr->syn_state};
        const size_t n[3] = {v_size(gr), hh_size(gr), gr->n_syn_state};
        for (int a = 0; a < 3; a++) {
            static const char *const what[3] = {"voltage", "hh gate", "synapse state"};
            if (apply) hb_ckpt_get(in, dst[a], n[a] * sizeof(double));
            else if (n[a] > (in->size - in->pos) / sizeof(double)) in->bad = 1;
            else {
                const int64_t k = bad_value(in->data + in->pos, (int64_t)n[a], 0, -HUGE_VAL, HUGE_VAL);
                if (k >= 0)
                    return hb_fail(HB_ERR_PARSE, "%s: group %d's %s %lld is not a finite number; "
                                   "expected a state the run could have reached", name, g,
                                   what[a], (long long)k);
                in->pos += n[a] * sizeof(double);
            }
        }
        if (in->version >= 2 && !in->bad) {
            const hb_status_t st = get_cat_values(gr, g, in, name, apply);
            if (st != HB_SUCCESS) return st;
        }
    }
    if (in->version >= 3 && !in->bad) {
        const hb_status_t st = get_weights(sim, in, name, apply);
        if (st != HB_SUCCESS) return st;
    }
    if (in->version < 5 && sim->self_mechs) /* no self-events before version 5 */
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: a checkpoint of format version %u, which holds "
                       "no waiting self-events; this simulation has %d point processes that send "
                       "themselves events: expected version %d", name, in->version,
                       sim->self_mechs, HB_CKPT_VERSION);
    if (in->version >= 5 && !in->bad) {
        const hb_status_t st = get_self_events(sim, in, name, step, apply);
        if (st != HB_SUCCESS) return st;
    }
    if (in->bad) return hb_fail(HB_ERR_PARSE, "%s: the simulation's record ends early", name);
    const unsigned char *above = in->data + in->pos;
    in->pos += (size_t)sim->n_probes;
    const unsigned char *v_prev = in->data + in->pos;
    in->pos += (size_t)sim->n_probes * sizeof(double);
    if (in->pos > in->size) in->bad = 1;
    if (!in->bad) {
        for (int p = 0; p < sim->n_probes; p++)
            if (above[p] > 1)
                return hb_fail(HB_ERR_PARSE, "%s: probe %d's threshold state is %d; expected 0 "
                               "or 1", name, p, above[p]);
        const int64_t k = bad_value(v_prev, sim->n_probes, 0, -HUGE_VAL, HUGE_VAL);
        if (k >= 0)
            return hb_fail(HB_ERR_PARSE, "%s: probe %lld's last voltage is not a finite number",
                           name, (long long)k);
    }
    /* what was recorded lies in [0, t] of the checkpoint's step, in time order */
    const double t = (double)step * sim->opt.dt_ms, t_hi = t + 0.5 * sim->opt.dt_ms;
    const unsigned char *values = NULL;
    const int64_t samples = in->bad ? -1 : get_series(in, INT_MAX, &values);
    hb_status_t status = HB_SUCCESS;
    if (samples < 0) return hb_fail(HB_ERR_PARSE, "%s: the recorded samples are cut short", name);
    if (samples > step / (sim->sample_every > 0 ? sim->sample_every : 1) + 2) /* and t_stop */
        return hb_fail(HB_ERR_PARSE, "%s: %lld samples recorded by step %lld; expected at most "
                       "one every %ld steps", name, (long long)samples, (long long)step,
                       sim->sample_every);
    int64_t k = bad_value(values, samples, 1, 0.0, t_hi);
    if (k >= 0)
        return hb_fail(HB_ERR_PARSE, "%s: sample time %lld is not finite, out of order or outside "
                       "[0, %g] ms (the checkpoint's t)", name, (long long)k, t);
    if (apply) status = set_series(&sim->times, samples, values, name);
    for (int p = 0; p < sim->n_probes && status == HB_SUCCESS; p++) {
        const int64_t n = get_series(in, samples, &values);
        if (n != samples)
            return hb_fail(HB_ERR_PARSE, "%s: probe %d's samples: %lld; expected %lld", name, p,
                           (long long)n, (long long)samples);
        if ((k = bad_value(values, n, 0, -HUGE_VAL, HUGE_VAL)) >= 0)
            return hb_fail(HB_ERR_PARSE, "%s: probe %d's sample %lld is not a finite number", name,
                           p, (long long)k);
        if (apply) status = set_series(&sim->traces[p], n, values, name);
        const int64_t spikes = get_series(in, INT_MAX, &values);
        if (spikes < 0) return hb_fail(HB_ERR_PARSE, "%s: probe %d's spikes are cut short", name, p);
        if ((k = bad_value(values, spikes, 1, 0.0, t_hi)) >= 0)
            return hb_fail(HB_ERR_PARSE, "%s: probe %d's spike %lld is not finite, out of order or "
                           "outside [0, %g] ms (the checkpoint's t)", name, p, (long long)k, t);
        if (apply && status == HB_SUCCESS) status = set_series(&sim->spikes[p], spikes, values, name);
    }
    if (status != HB_SUCCESS || !apply) return status;
    unsigned char *a = malloc((size_t)sim->n_probes + 1);
    double *vp = malloc(((size_t)sim->n_probes + 1) * sizeof *vp);
    if (!a || !vp) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", name);
    if (status == HB_SUCCESS) {
        memcpy(a, above, (size_t)sim->n_probes);
        memcpy(vp, v_prev, (size_t)sim->n_probes * sizeof *vp);
        memcpy(sim->above, a, (size_t)sim->n_probes);
        memcpy(sim->v_prev, vp, (size_t)sim->n_probes * sizeof *vp);
    }
    for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
        status = sim->ops->set_state(sim->engine, g, sim->groups[g].v, sim->groups[g].hh_state);
    if (status == HB_SUCCESS) status = sim->ops->set_probes(sim->engine, a, vp);
    free(a);
    free(vp);
    if (status == HB_SUCCESS) {
        sim->step = (long)step;
        sim->failed = 0;
        sim->initialised = 1;
        sim->n_rows = 0; /* recorded values: those of the run before are not this one's */
    }
    return status;
}

hb_status_t hb_sim_checkpoint_get(hb_sim_t *sim, hb_ckpt_in_t *in, const char *name)
{
    hb_status_t status = check_engine(sim, name);
    if (status != HB_SUCCESS) return status;
    hb_ckpt_in_t probe = *in;
    status = get_state(sim, &probe, name, 0);
    if (status != HB_SUCCESS) return status;
    /* version 4 holds the cells' values, not the padding lanes': those as a run starts them */
    if (in->version >= 4) status = hb_sim_init(sim);
    if (status == HB_SUCCESS) status = get_state(sim, in, name, 1);
    if (status != HB_SUCCESS) sim->initialised = 0; /* half restored: hb_sim_init first */
    return status;
}

hb_status_t hb_sim_save(const hb_sim_t *sim, FILE *file, const char *name)
{
    hb_clear_error();
    if (!name) name = "checkpoint";
    if (!sim || !file) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_save: NULL argument");
    hb_ckpt_buf_t b;
    memset(&b, 0, sizeof b);
    hb_status_t status = hb_sim_checkpoint_put(sim, &b, name);
    if (status == HB_SUCCESS) status = hb_ckpt_write(file, name, HB_CKPT_SIM, &b);
    hb_ckpt_buf_free(&b);
    return status;
}

hb_status_t hb_sim_load(hb_sim_t *sim, FILE *file, const char *name)
{
    hb_clear_error();
    if (!name) name = "checkpoint";
    if (!sim || !file) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_load: NULL argument");
    hb_status_t status = check_engine(sim, name);
    if (status != HB_SUCCESS) return status;
    unsigned char *data = NULL;
    size_t size = 0;
    uint32_t version = 0;
    status = hb_ckpt_read(file, name, HB_CKPT_SIM, &data, &size, &version);
    if (status != HB_SUCCESS) return status;
    hb_ckpt_in_t in = {data, size, 0, 0, version};
    status = hb_sim_checkpoint_get(sim, &in, name);
    if (status == HB_SUCCESS && in.pos != size)
        status = hb_fail(HB_ERR_PARSE, "%s: %zu bytes after the simulation's state", name,
                         size - in.pos);
    free(data);
    return status;
}

/* ---- a cell's state moved between simulations (a network restarted on another rank count,
 * net_checkpoint.c): the simulations hold other sets of cells of one model, so a cell's values
 * are those group_state gives for its one slot, which follow its own model when the two groups
 * list the same catalogue mechanisms and ions. */

/* Whether groups a and b list the same catalogue mechanisms and ions, in the same order. */
static int same_cat_lists(const group_t *a, const group_t *b)
{
    const hb_step_cat_t *x = a->cat, *y = b->cat;
    if (!x || !y) return !x == !y;
    if (x->n_mech != y->n_mech || x->n_ion != y->n_ion) return 0;
    for (int q = 0; q < x->n_mech; q++)
        if (strcmp(x->mech[q].mech->name, y->mech[q].mech->name) != 0) return 0;
    for (int q = 0; q < x->n_ion; q++)
        if (strcmp(x->ion[q].name, y->ion[q].name) != 0) return 0;
    return 1;
}

hb_status_t hb_sim_checkpoint_move_cell(hb_sim_t *dst, int dc, const hb_sim_t *src, int sc,
                                        const char *name)
{
    const int dg = dst->group_of[dc], sg = src->group_of[sc];
    const int dp = dst->probe_first[dc], sp = src->probe_first[sc];
    const int n_probes = dst->probe_first[dc + 1] - dp;
    if (src->probe_first[sc + 1] - sp != n_probes || dst->info[dc].m != src->info[sc].m)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: cell %d of the checkpoint has %d nodes and %d "
                       "probes; here %d and %d: expected the same cell", name, sc,
                       src->info[sc].m, src->probe_first[sc + 1] - sp, dst->info[dc].m, n_probes);
    if (!same_cat_lists(&dst->groups[dg], &src->groups[sg]))
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: cell %d shares its engine group with cells of "
                       "other catalogue mechanisms or ions in the checkpoint's partition or this "
                       "one; expected groups of the same mechanisms, as in a restart on the rank "
                       "count that wrote it", name, dc);
    hb_ckpt_buf_t b;
    memset(&b, 0, sizeof b);
    int slot = src->slot_of[sc];
    xfer_t put = {XFER_PUT, &b, NULL, 0.0};
    hb_status_t status = group_state((hb_sim_t *)src, sg, &slot, 1, &put, name); /* reads only */
    if (status == HB_SUCCESS && b.failed) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", name);
    if (status == HB_SUCCESS) {
        hb_ckpt_in_t in = {b.data, b.size, 0, 0, HB_CKPT_VERSION};
        xfer_t set = {XFER_SET, NULL, &in, 0.0};
        slot = dst->slot_of[dc];
        status = group_state(dst, dg, &slot, 1, &set, name);
        if (status == HB_SUCCESS && in.pos != in.size)
            status = hb_fail(HB_ERR_INVALID_VALUE, "%s: cell %d holds %zu values in the "
                             "checkpoint, %zu here: expected the same cell", name, dc,
                             b.size / sizeof(double), in.pos / sizeof(double));
    }
    hb_ckpt_buf_free(&b);
    for (int p = 0; p < n_probes && status == HB_SUCCESS; p++) {
        dst->above[dp + p] = src->above[sp + p];
        dst->v_prev[dp + p] = src->v_prev[sp + p];
        const series_t *tr = &src->traces[sp + p], *sk = &src->spikes[sp + p];
        status = set_series(&dst->traces[dp + p], tr->count, (const unsigned char *)tr->data, name);
        if (status == HB_SUCCESS)
            status = set_series(&dst->spikes[dp + p], sk->count, (const unsigned char *)sk->data,
                                name);
    }
    return status;
}

hb_status_t hb_sim_checkpoint_move_weights(hb_sim_t *dst, int dv, const hb_sim_t *src, int sv,
                                           const char *name)
{
    if (dv < 0 || dv >= dst->n_weights || sv < 0 || sv >= src->n_weights)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: weight vector %d of %d in the checkpoint, %d of "
                       "%d here: expected the vectors of the same connections", name, sv,
                       src->n_weights, dv, dst->n_weights);
    memcpy(dst->weights + (size_t)dv * HB_CAT_MAX_WEIGHT,
           src->weights + (size_t)sv * HB_CAT_MAX_WEIGHT, HB_CAT_MAX_WEIGHT * sizeof(double));
    return HB_SUCCESS;
}

void hb_sim_checkpoint_move_begin(hb_sim_t *sim) { hb_self_clear(&sim->self_events); }

static int by_seq(const void *a, const void *b)
{
    const long x = ((const hb_self_event_t *)a)->seq, y = ((const hb_self_event_t *)b)->seq;
    return (x > y) - (x < y);
}

hb_status_t hb_sim_checkpoint_move_self_events(hb_sim_t *dst, const hb_sim_t *src,
                                               const int *cell, const int *vec, int n_vec,
                                               const char *name)
{
    const hb_self_queue_t *q = &src->self_events;
    if (!q->n) return HB_SUCCESS;
    hb_self_event_t *moved = malloc(q->n * sizeof *moved);
    int *cell_of = malloc(((size_t)src->target_first[src->n_cells] + 1) * sizeof *cell_of);
    if (!moved || !cell_of) {
        free(moved);
        free(cell_of);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory for its self-events", name);
    }
    for (int c = 0; c < src->n_cells; c++)
        for (int t = src->target_first[c]; t < src->target_first[c + 1]; t++) cell_of[t] = c;
    size_t n = 0;
    hb_status_t status = HB_SUCCESS;
    for (size_t i = 0; i < q->n && status == HB_SUCCESS; i++) {
        hb_self_event_t e = q->heap[i];
        const int sc = cell_of[e.target], dc = cell[sc];
        if (dc < 0) continue;
        const int k = e.target - src->target_first[sc];
        if (k >= dst->target_first[dc + 1] - dst->target_first[dc] ||
            (e.weights >= 0 && (e.weights >= n_vec || vec[e.weights] < 0)))
            status = hb_fail(HB_ERR_INVALID_VALUE, "%s: a self-event of cell %d's synapse %d "
                             "carries weight vector %d, of no connection to it here, or the "
                             "synapse is not this cell's: expected the same cells and "
                             "connections", name, dc, k, e.weights);
        e.target = dst->target_first[dc] + k;
        if (e.weights >= 0) e.weights = vec[e.weights];
        moved[n++] = e;
    }
    /* ties of (step, target, time) are one target's events, all sent on the rank that held
     * it: their sequences' order is kept, renumbered after the events already moved here */
    if (status == HB_SUCCESS) qsort(moved, n, sizeof *moved, by_seq);
    for (size_t i = 0; i < n && status == HB_SUCCESS; i++) {
        moved[i].seq = dst->self_events.seq++;
        status = hb_self_push(&dst->self_events, &moved[i]);
    }
    free(moved);
    free(cell_of);
    return status;
}

hb_status_t hb_sim_checkpoint_moved(hb_sim_t *sim, const hb_sim_t *from, long step,
                                    const char *name)
{
    hb_status_t status = set_series(&sim->times, from->times.count,
                                    (const unsigned char *)from->times.data, name);
    for (int g = 0; g < sim->n_groups && status == HB_SUCCESS; g++)
        status = sim->ops->set_state(sim->engine, g, sim->groups[g].v, sim->groups[g].hh_state);
    if (status == HB_SUCCESS) status = sim->ops->set_probes(sim->engine, sim->above, sim->v_prev);
    if (status == HB_SUCCESS) {
        sim->step = step;
        sim->failed = 0;
        sim->initialised = 1;
        sim->n_rows = 0;
    } else {
        sim->initialised = 0;
    }
    return status;
}
