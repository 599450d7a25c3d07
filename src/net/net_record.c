/*
 * Recording in a network (docs/network.md, section 8): the columns every rank knows (gid,
 * name, unit; sorted by gid, then order of addition), each resolved by the rank that owns its
 * gid into a sample of its simulation (src/sim/mech_vars.c), recorded by the engine (CPU or
 * GPU, the same bits), and gathered by hb_net_traces into rows of all columns on every rank.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "net/net_engine.h"

typedef struct {
    uint32_t gid;
    long order;       /* addition order: ties of gid keep it */
    char *name;       /* "soma.v", "syn[0].g" */
    const char *unit; /* the table's */
    hb_rec_sample_t sample; /* the owner's */
} column_t;

struct hb_net_recording {
    int n, cap;
    column_t *columns;     /* sorted by (gid, order) */
    double sample_dt;      /* [ms] */
    long every;            /* steps */
    long next_order;
    double *times, *values, *scratch; /* hb_net_traces' results and its gather's room */
    size_t cap_times, cap_values, cap_scratch;
    int *counts, *displs;  /* per rank */
};

static int compare_column(const void *a, const void *b)
{
    const column_t *x = a, *y = b;
    if (x->gid != y->gid) return x->gid < y->gid ? -1 : 1;
    return (x->order > y->order) - (x->order < y->order);
}

void hb_net_record_free(hb_net_t *net)
{
    struct hb_net_recording *rec = net ? net->rec : NULL;
    if (!rec) return;
    for (int k = 0; k < rec->n; k++) free(rec->columns[k].name);
    free(rec->columns);
    free(rec->times);
    free(rec->values);
    free(rec->scratch);
    free(rec->counts);
    free(rec->displs);
    free(rec);
    net->rec = NULL;
}

/* The simulation's records: this rank's columns, in column order. */
static hb_status_t set_local(hb_net_t *net)
{
    struct hb_net_recording *rec = net->rec;
    if (!net->sim) return HB_SUCCESS;
    hb_rec_sample_t *mine = malloc(((size_t)rec->n + 1) * sizeof *mine);
    if (!mine) return hb_fail(HB_ERR_ALLOC, "hb_net_record: out of memory");
    int n = 0;
    for (int k = 0; k < rec->n; k++)
        if (hb_net_local_cable(net, rec->columns[k].gid) >= 0)
            mine[n++] = rec->columns[k].sample;
    const hb_status_t status = hb_sim_set_records(net->sim, n, mine, rec->every);
    free(mine);
    return status;
}

/* Record k of `records`: its column (name, unit), resolved where this rank owns its gid. */
static hb_status_t add_one(hb_net_t *net, const hb_net_record_t *r, int k, column_t *col)
{
    static const char fn[] = "hb_net_record";
    memset(col, 0, sizeof *col);
    if (!r->variable) return hb_fail(HB_ERR_INVALID_VALUE, "%s: record %d: variable is NULL", fn, k);
    if (r->gid >= net->recipe.n_cells)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: record %d: gid %u; expected a cable cell's gid "
                       "(0 to %u)", fn, k, r->gid, net->recipe.n_cells - 1);
    hb_rec_var_t var;
    hb_status_t status = hb_rec_parse(r->variable, &var);
    if (status != HB_SUCCESS) {
        char msg[640];
        snprintf(msg, sizeof msg, "%s", hb_last_error());
        return hb_fail(status, "%s: record %d, gid %u: %s", fn, k, r->gid, msg);
    }
    char where[96];
    hb_location_label(&r->where, where, sizeof where);
    const size_t len = strlen(where) + strlen(r->variable) + 2;
    if (!(col->name = malloc(len))) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    if (var.synapse >= 0) snprintf(col->name, len, "%s", r->variable);
    else snprintf(col->name, len, "%s.%s", where, r->variable);
    col->gid = r->gid;
    col->unit = var.unit;
    if (!hb_net_owns(net, r->gid)) return HB_SUCCESS;
    const int c = hb_net_local_cable(net, r->gid);
    if (c < 0 || !net->sim)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: record %d, gid %u: a spike source; expected "
                       "a cable cell", fn, k, r->gid);
    if ((status = hb_sim_record_resolve(net->sim, c, &r->where, r->variable, &col->sample)) !=
        HB_SUCCESS) {
        char msg[640];
        snprintf(msg, sizeof msg, "%s", hb_last_error());
        return hb_fail(status, "%s: record %d, gid %u, \"%s\" at %s: %s", fn, k, r->gid,
                       r->variable, where, msg);
    }
    return HB_SUCCESS;
}

hb_status_t hb_net_record(hb_net_t *net, int count, const hb_net_record_t *records,
                          double sample_dt_ms)
{
    static const char fn[] = "hb_net_record";
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "%s: net is NULL", fn);
    hb_status_t status = HB_SUCCESS;
    if (count < 0 || (count && !records))
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: %d records at %p; expected count >= 0 and "
                         "records for them", fn, count, (const void *)records);
    else if (net->initialised)
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: the network is initialised; expected the "
                         "records before hb_net_init (or hb_net_run)", fn);
    const double dt = net->opt.dt_ms, ratio = sample_dt_ms / dt;
    const long every = sample_dt_ms == 0.0 ? 1 : lround(ratio);
    if (status == HB_SUCCESS &&
        (!isfinite(sample_dt_ms) || sample_dt_ms < 0.0 || ratio > 1e9 ||
         (sample_dt_ms > 0.0 && (every < 1 || fabs(ratio - (double)every) > 1e-6 * ratio))))
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: sample_dt = %g ms; expected 0 (every step) "
                         "or a multiple of dt = %g ms", fn, sample_dt_ms, dt);
    struct hb_net_recording *rec = net->rec;
    if (status == HB_SUCCESS && rec && rec->n && rec->every != every)
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: sample_dt = %g ms; expected %g ms, the "
                         "earlier records' (one report, one interval)", fn, sample_dt_ms,
                         rec->sample_dt);
    if (status == HB_SUCCESS && !rec) {
        rec = net->rec = calloc(1, sizeof *rec);
        if (rec) {
            rec->counts = calloc((size_t)net->comm->size + 1, sizeof *rec->counts);
            rec->displs = calloc((size_t)net->comm->size + 1, sizeof *rec->displs);
        }
        if (!rec || !rec->counts || !rec->displs)
            status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    }
    if (status == HB_SUCCESS && count > 0x7fffffff - 1 - rec->n)
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: more than 2^31 records", fn);
    if (status == HB_SUCCESS && rec->n + count > rec->cap) {
        const int cap = rec->n + count;
        column_t *p = realloc(rec->columns, ((size_t)cap + 1) * sizeof *p);
        if (!p) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory for %d records", fn, cap);
        else {
            rec->columns = p;
            rec->cap = cap;
        }
    }
    const int before = rec ? rec->n : 0;
    for (int k = 0; k < count && status == HB_SUCCESS; k++) {
        column_t *col = &rec->columns[rec->n];
        status = add_one(net, &records[k], k, col);
        if (status == HB_SUCCESS) {
            col->order = rec->next_order++;
            rec->n++;
        } else {
            free(col->name);
        }
    }
    if (status == HB_SUCCESS && count) {
        rec->sample_dt = sample_dt_ms;
        rec->every = every;
        qsort(rec->columns, (size_t)rec->n, sizeof *rec->columns, compare_column);
        status = set_local(net);
    }
    /* every rank fails alike (the owner of a bad record names it) */
    double failed = status != HB_SUCCESS;
    const hb_status_t agreed = net->comm->ops->allreduce(net->comm->state, &failed, 1, HB_REDUCE_MAX);
    if (agreed != HB_SUCCESS) status = agreed;
    else if (failed != 0.0 && status == HB_SUCCESS)
        status = hb_fail(HB_ERR_INVALID_VALUE, "%s: another rank refused a record (its message "
                         "is on that rank)", fn);
    if (status != HB_SUCCESS && rec) { /* the records added by this call dropped */
        int n = 0;
        for (int k = 0; k < rec->n; k++) {
            if (rec->columns[k].order >= rec->next_order - (rec->n - before)) free(rec->columns[k].name);
            else rec->columns[n++] = rec->columns[k];
        }
        rec->next_order -= rec->n - before;
        rec->n = n;
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", hb_last_error());
        if (net->sim) (void)set_local(net);
        (void)hb_fail(status, "%s", msg);
    }
    return status;
}

int hb_net_record_count(const hb_net_t *net) { return net && net->rec ? net->rec->n : 0; }

double hb_net_record_sample_dt(const hb_net_t *net)
{
    return net && net->rec && net->rec->n ? (double)net->rec->every * net->opt.dt_ms : 0.0;
}

hb_status_t hb_net_record_column(const hb_net_t *net, int column, uint32_t *gid,
                                 const char **name, const char **unit)
{
    hb_clear_error();
    const int n = hb_net_record_count(net);
    if (column < 0 || column >= n)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_record_column: column %d; expected 0 to %d",
                       column, n - 1);
    const column_t *c = &net->rec->columns[column];
    if (gid) *gid = c->gid;
    if (name) *name = c->name;
    if (unit) *unit = c->unit;
    return HB_SUCCESS;
}

/* Room for n doubles in *p (capacity *cap); 0 when out of memory. */
static int room(double **p, size_t *cap, size_t n)
{
    if (n <= *cap) return 1;
    double *q = realloc(*p, (n + 1) * sizeof *q);
    if (!q) return 0;
    *p = q;
    *cap = n;
    return 1;
}

hb_status_t hb_net_traces(hb_net_t *net, const double **times_ms, const double **values,
                          size_t *rows)
{
    static const char fn[] = "hb_net_traces";
    hb_clear_error();
    if (!net || !times_ms || !values || !rows) return hb_fail(HB_ERR_INVALID_VALUE, "%s: NULL argument", fn);
    *rows = 0;
    *times_ms = *values = NULL;
    struct hb_net_recording *rec = net->rec;
    if (!rec || !rec->n) return HB_SUCCESS; /* the same on every rank: no collective */
    size_t n_local = 0;
    const long *steps = NULL;
    const double *mine = NULL;
    hb_sim_recorded(net->sim, &n_local, &steps, &mine);
    int local_cols = 0;
    for (int k = 0; k < rec->n; k++)
        local_cols += hb_net_local_cable(net, rec->columns[k].gid) >= 0;
    if (!local_cols) n_local = 0; /* a simulation without records holds no rows */
    /* rows and their first step: ranks without columns have none */
    double agree[2] = {(double)n_local, n_local ? -(double)steps[0] : -INFINITY};
    hb_status_t status = net->comm->ops->allreduce(net->comm->state, agree, 2, HB_REDUCE_MAX);
    if (status != HB_SUCCESS) return status;
    const size_t n_rows = (size_t)agree[0];
    const long first = n_rows ? (long)-agree[1] : 0;
    /* (the all-gather counts values in ints: at most 2^31 - 1 in all) */
    int failed = (n_local && n_local != n_rows) || (size_t)rec->n * n_rows > 0x7fffffffu;
    if (!failed && (!room(&rec->times, &rec->cap_times, n_rows) ||
                    !room(&rec->values, &rec->cap_values, n_rows * (size_t)rec->n) ||
                    !room(&rec->scratch, &rec->cap_scratch, n_rows * (size_t)rec->n)))
        failed = 2;
    status = net->comm->ops->allgather_int(net->comm->state, failed ? -1 : local_cols, rec->counts);
    if (status != HB_SUCCESS) return status;
    for (int r = 0; r < net->comm->size; r++)
        if (rec->counts[r] < 0)
            return hb_fail(failed == 2 ? HB_ERR_ALLOC : HB_ERR_INVALID_VALUE, "%s: %s", fn,
                           failed == 2 ? "out of memory for the rows"
                           : failed ? "this rank's rows disagree with the others' (or are too many: "
                                      "clear them once written)"
                                    : "another rank failed to gather its rows");
    int displ = 0;
    for (int r = 0; r < net->comm->size; r++) {
        rec->displs[r] = displ;
        displ += rec->counts[r];
        rec->counts[r] *= (int)n_rows; /* doubles: each rank's [rows][its columns] */
    }
    int *col0 = malloc(((size_t)net->comm->size + 1) * sizeof *col0);
    if (!col0) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    for (int r = 0; r < net->comm->size; r++) {
        col0[r] = rec->displs[r];
        rec->displs[r] *= (int)n_rows;
    }
    status = net->comm->ops->allgatherv(net->comm->state, mine, local_cols * (int)n_rows,
                                        rec->scratch, rec->counts, rec->displs, sizeof(double));
    if (status == HB_SUCCESS) {
        const size_t w = (size_t)rec->n;
        for (int r = 0; r < net->comm->size; r++) {
            const size_t cols = (size_t)rec->counts[r] / (n_rows ? n_rows : 1);
            const double *block = rec->scratch + rec->displs[r];
            for (size_t i = 0; i < n_rows; i++)
                memcpy(rec->values + i * w + (size_t)col0[r], block + i * cols, cols * sizeof(double));
        }
        for (size_t i = 0; i < n_rows; i++)
            rec->times[i] = (double)(first + (long)i * rec->every) * net->opt.dt_ms;
        *times_ms = rec->times;
        *values = rec->values;
        *rows = n_rows;
    }
    free(col0);
    return status;
}

hb_status_t hb_net_traces_clear(hb_net_t *net)
{
    hb_clear_error();
    if (!net) return hb_fail(HB_ERR_INVALID_VALUE, "hb_net_traces_clear: net is NULL");
    hb_sim_recorded_clear(net->sim);
    return HB_SUCCESS;
}
