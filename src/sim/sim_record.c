/*
 * The simulator's recordings: the probes of all cells, the sampled voltages and the spike
 * times an engine reports (hb_sim_sink_t), the hb_sim_* queries on them, and their CSV files.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "sim/csv_write.h"
#include "sim/sim_engine.h"

/* 0 when out of memory or full (counts are ints: at most INT_MAX values). */
static int series_push(series_t *s, double x)
{
    if (s->count == s->capacity) {
        if (s->capacity == INT_MAX) return 0;
        int cap = !s->capacity ? 64 : s->capacity > INT_MAX / 2 ? INT_MAX : 2 * s->capacity;
        double *p = realloc(s->data, (size_t)cap * sizeof *p);
        if (!p) return 0;
        s->data = p;
        s->capacity = cap;
    }
    s->data[s->count++] = x;
    return 1;
}

/* Least memory of a simulation per node [bytes]. */
#define HB_SIM_NODE_BYTES 48

/* Room for the probes of all cells (cell order), the voltage buffer. */
hb_status_t hb_sim_gather(hb_sim_t *sim)
{
    int n_probes = 0;
    sim->offset = malloc(((size_t)sim->n_cells + 1) * sizeof *sim->offset);
    sim->probe_first = malloc(((size_t)sim->n_cells + 1) * sizeof *sim->probe_first);
    if (!sim->offset || !sim->probe_first) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
    long total = 0;
    for (int c = 0; c < sim->n_cells; c++) {
        const hb_sim_cell_info_t *in = &sim->info[c];
        sim->offset[c] = (int)total;
        sim->probe_first[c] = n_probes;
        total += in->m;
        if (in->n_probes > 0x7fffffff - n_probes)
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: more than 2^31 probes in all");
        n_probes += in->n_probes;
        if (total > 0x7fffffffL)
            return hb_fail(HB_ERR_INVALID_VALUE, "simulation: more than 2^31 nodes in all");
    }
    sim->offset[sim->n_cells] = (int)total;
    sim->probe_first[sim->n_cells] = n_probes;
    /* The state (voltages, matrix, gates) costs at least HB_SIM_NODE_BYTES a node (measured: 48
     * with pas, 100 with hh): refused up front where even that cannot fit. */
    const double need = (double)total * HB_SIM_NODE_BYTES;
    if (sim->memory_bytes > 0.0 && need > sim->memory_bytes)
        return hb_fail(HB_ERR_ALLOC, "simulation: %ld nodes in %d cells need at least %.3g GB "
                       "(%d bytes a node), more than this machine's memory (%.3g GB); expected "
                       "fewer or smaller cells", total, sim->n_cells, need / 1e9,
                       HB_SIM_NODE_BYTES, sim->memory_bytes / 1e9);
    const size_t n = (size_t)total;
    sim->vbuf = calloc(n, sizeof *sim->vbuf); /* pages touched only by hb_sim_voltages */
    sim->probes = calloc((size_t)n_probes + 1, sizeof *sim->probes);
    sim->probe_group = calloc((size_t)n_probes + 1, sizeof *sim->probe_group);
    sim->probe_index = calloc((size_t)n_probes + 1, sizeof *sim->probe_index);
    sim->above = calloc((size_t)n_probes + 1, 1);
    sim->v_prev = calloc((size_t)n_probes + 1, sizeof *sim->v_prev);
    sim->traces = calloc((size_t)n_probes + 1, sizeof *sim->traces);
    sim->spikes = calloc((size_t)n_probes + 1, sizeof *sim->spikes);
    if (!sim->vbuf || !sim->probes || !sim->probe_group || !sim->probe_index || !sim->above ||
        !sim->v_prev || !sim->traces || !sim->spikes)
        return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %zu nodes", n);
    sim->n_probes = n_probes;
    return HB_SUCCESS;
}

hb_status_t hb_sim_copy_probes(hb_sim_t *sim, int c, const hb_model_t *md)
{
    for (int k = 0; k < md->n_probes; k++) {
        const hb_probe_t *p = &md->probes[k];
        const size_t len = strlen(p->name) + 24;
        hb_probe_t *q = &sim->probes[sim->probe_first[c] + k];
        *q = *p;
        if (!(q->name = malloc(len))) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory");
        if (sim->n_cells == 1) snprintf(q->name, len, "%s", p->name);
        else snprintf(q->name, len, "c%d.%s", c, p->name);
    }
    return HB_SUCCESS;
}

void hb_sim_free_records(hb_sim_t *sim)
{
    for (int p = 0; p < sim->n_probes; p++) {
        free(sim->probes[p].name);
        if (sim->traces) free(sim->traces[p].data);
        if (sim->spikes) free(sim->spikes[p].data);
    }
    free(sim->probes);
    free(sim->probe_group);
    free(sim->probe_index);
    free(sim->traces);
    free(sim->spikes);
    free(sim->times.data);
    free(sim->above);
    free(sim->v_prev);
    free(sim->vbuf);
    free(sim->offset);
    free(sim->probe_first);
    free(sim->records);
    free(sim->row_step);
    free(sim->row_values);
}

static double probe_v(const hb_sim_t *sim, int p)
{
    return sim->groups[sim->probe_group[p]].v[sim->probe_index[p]];
}

static hb_status_t full(const char *what, const series_t *s)
{
    return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording %s (%d held; at most %d: "
                   "hb_sim_clear_records once they are written out)", what, s->count, INT_MAX);
}

hb_status_t hb_sim_record_sample(hb_sim_t *sim)
{
    if (!series_push(&sim->times, (double)sim->step * sim->opt.dt_ms))
        return full("samples", &sim->times);
    for (int p = 0; p < sim->n_probes; p++)
        if (!series_push(&sim->traces[p], probe_v(sim, p))) return full("samples", &sim->traces[p]);
    return HB_SUCCESS;
}

hb_status_t hb_sim_clear_records(hb_sim_t *sim)
{
    hb_clear_error();
    if (!sim) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_clear_records: sim is NULL");
    sim->times.count = 0;
    for (int p = 0; p < sim->n_probes; p++) sim->traces[p].count = sim->spikes[p].count = 0;
    return HB_SUCCESS;
}

void hb_sim_reset_records(hb_sim_t *sim)
{
    sim->times.count = 0;
    for (int p = 0; p < sim->n_probes; p++) {
        const hb_probe_t *pr = &sim->probes[p];
        sim->traces[p].count = 0;
        sim->spikes[p].count = 0;
        sim->above[p] = probe_v(sim, p) > pr->threshold_mv;
        sim->v_prev[p] = probe_v(sim, p);
    }
}

/* What an engine recorded over a chunk of steps. */
hb_status_t hb_sim_record_sink(void *user, int n_samples, const long *sample_step,
                               const double *samples, const int *spike_count,
                               const double *spikes)
{
    hb_sim_t *sim = user;
    for (int r = 0; r < n_samples; r++) {
        if (!series_push(&sim->times, (double)sample_step[r] * sim->opt.dt_ms))
            return full("samples", &sim->times);
        for (int p = 0; p < sim->n_probes; p++)
            if (!series_push(&sim->traces[p], samples[(size_t)r * (size_t)sim->n_probes + (size_t)p]))
                return full("samples", &sim->traces[p]);
    }
    for (int p = 0; p < sim->n_probes; p++)
        for (int c = 0; c < spike_count[p]; c++)
            if (!series_push(&sim->spikes[p], spikes[(size_t)c * (size_t)sim->n_probes + (size_t)p]))
                return full("spikes", &sim->spikes[p]);
    return HB_SUCCESS;
}

int hb_sim_probe_count(const hb_sim_t *sim) { return sim ? sim->n_probes : 0; }

const char *hb_sim_probe_name(const hb_sim_t *sim, int probe)
{
    return sim && probe >= 0 && probe < sim->n_probes ? sim->probes[probe].name : NULL;
}

hb_status_t hb_sim_sample_times(const hb_sim_t *sim, const double **t, int *count)
{
    if (!sim || !t || !count) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_sample_times: NULL argument");
    *t = sim->times.data;
    *count = sim->times.count;
    return HB_SUCCESS;
}

static hb_status_t probe_series(const hb_sim_t *sim, int probe, const series_t *all,
                                const double **x, int *count)
{
    if (!sim || !x || !count) return hb_fail(HB_ERR_INVALID_VALUE, "probe query: NULL argument");
    if (probe < 0 || probe >= sim->n_probes)
        return hb_fail(HB_ERR_INVALID_VALUE, "probe %d; expected 0..%d", probe, sim->n_probes - 1);
    *x = all[probe].data;
    *count = all[probe].count;
    return HB_SUCCESS;
}

hb_status_t hb_sim_probe_trace(const hb_sim_t *sim, int probe, const double **v, int *count)
{
    return probe_series(sim, probe, sim ? sim->traces : NULL, v, count);
}

hb_status_t hb_sim_spikes(const hb_sim_t *sim, int probe, const double **t, int *count)
{
    return probe_series(sim, probe, sim ? sim->spikes : NULL, t, count);
}

static FILE *open_in(const char *dir, const char *file, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", dir, file);
    return fopen(path, "w");
}

/* Spikes of all probes in time order, probes in order at equal times (the order in which a
 * run streams them); 0 when out of memory. */
static int put_spikes(FILE *f, const hb_sim_t *sim)
{
    size_t n = 0;
    for (int p = 0; p < sim->n_probes; p++) n += (size_t)sim->spikes[p].count;
    hb_spike_at_t *all = malloc((n + 1) * sizeof *all);
    if (!all) return 0;
    n = 0;
    for (int p = 0; p < sim->n_probes; p++)
        for (int k = 0; k < sim->spikes[p].count; k++)
            all[n++] = (hb_spike_at_t){sim->spikes[p].data[k], p};
    qsort(all, n, sizeof *all, hb_spike_at_compare);
    for (size_t k = 0; k < n; k++) {
        hb_csv_put_field(f, sim->probes[all[k].probe].name);
        fprintf(f, ",%.12g\n", all[k].t);
    }
    free(all);
    return 1;
}

hb_status_t hb_sim_write_csv(const hb_sim_t *sim, const char *dir)
{
    hb_clear_error();
    if (!sim || !dir) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_write_csv: NULL argument");
    char path[4096];
    FILE *f = open_in(dir, "probes.csv", path, sizeof path);
    if (!f) return hb_fail(HB_ERR_IO, "%s: cannot open for writing", path);
    fputs("t_ms", f);
    for (int p = 0; p < sim->n_probes; p++) {
        fputc(',', f);
        hb_csv_put_field(f, sim->probes[p].name);
    }
    fputc('\n', f);
    for (int k = 0; k < sim->times.count; k++) {
        fprintf(f, "%.10g", sim->times.data[k]);
        for (int p = 0; p < sim->n_probes; p++) fprintf(f, ",%.17g", sim->traces[p].data[k]);
        fputc('\n', f);
    }
    if (fclose(f) != 0) return hb_fail(HB_ERR_IO, "%s: write failed", path);
    if (!(f = open_in(dir, "spikes.csv", path, sizeof path)))
        return hb_fail(HB_ERR_IO, "%s: cannot open for writing", path);
    fputs("probe,t_ms\n", f);
    const int broken = !put_spikes(f, sim) || ferror(f) != 0;
    if (fclose(f) != 0 || broken) return hb_fail(HB_ERR_IO, "%s: write failed", path);
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Recorded values (hb_sim_set_records)                                     */
/* ------------------------------------------------------------------------ */

/* `n` rows appended (0 rows: nothing). */
static hb_status_t push_rows(hb_sim_t *sim, int n, const long *step, const double *values)
{
    const size_t w = (size_t)sim->n_records;
    if (sim->n_rows + (size_t)n > sim->cap_rows) {
        size_t cap = sim->cap_rows ? sim->cap_rows : 64;
        while (cap < sim->n_rows + (size_t)n) cap *= 2;
        long *st = realloc(sim->row_step, cap * sizeof *st);
        if (st) sim->row_step = st;
        double *v = st ? realloc(sim->row_values, (cap * w + 1) * sizeof *v) : NULL;
        if (!v)
            return hb_fail(HB_ERR_ALLOC, "simulation: out of memory recording %zu rows of %zu "
                           "values (clear them once they are written out)", sim->n_rows + (size_t)n, w);
        sim->row_values = v;
        sim->cap_rows = cap;
    }
    memcpy(sim->row_step + sim->n_rows, step, (size_t)n * sizeof *step);
    memcpy(sim->row_values + sim->n_rows * w, values, (size_t)n * w * sizeof *values);
    sim->n_rows += (size_t)n;
    return HB_SUCCESS;
}

static hb_status_t record_sink(void *user, int n_rows, const long *step, const double *values)
{
    return push_rows(user, n_rows, step, values);
}

hb_status_t hb_sim_set_records(hb_sim_t *sim, int n, const hb_rec_sample_t *records, long every)
{
    if (!sim || n < 0 || (n && (!records || every < 1)))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_set_records: bad argument");
    for (int r = 0; r < n; r++)
        if (records[r].group < 0 || records[r].group >= sim->n_groups)
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_sim_set_records: record %d in group %d; "
                           "expected 0..%d", r, records[r].group, sim->n_groups - 1);
    hb_rec_sample_t *copy = malloc(((size_t)n + 1) * sizeof *copy);
    if (!copy) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d records", n);
    if (n) memcpy(copy, records, (size_t)n * sizeof *copy);
    free(sim->records);
    sim->records = copy;
    sim->n_records = n;
    sim->record_every = n ? every : 1;
    sim->records_pushed = 0;
    sim->n_rows = 0;
    return HB_SUCCESS;
}

hb_status_t hb_sim_push_records(hb_sim_t *sim)
{
    if (sim->records_pushed) return HB_SUCCESS;
    if (!sim->ops->set_records && sim->n_records)
        return hb_fail(HB_ERR_NOT_SUPPORTED, "simulation: this backend records no values");
    hb_status_t status = sim->ops->set_records
                             ? sim->ops->set_records(sim->engine, sim->n_records, sim->records,
                                                     sim->record_every, record_sink, sim)
                             : HB_SUCCESS;
    if (status == HB_SUCCESS) sim->records_pushed = 1;
    return status;
}

hb_status_t hb_sim_record_initial(hb_sim_t *sim)
{
    sim->n_rows = 0;
    if (!sim->n_records) return HB_SUCCESS;
    double *row = malloc((size_t)sim->n_records * sizeof *row);
    if (!row) return hb_fail(HB_ERR_ALLOC, "simulation: out of memory for %d records", sim->n_records);
    for (int r = 0; r < sim->n_records; r++) {
        const group_t *gr = &sim->groups[sim->records[r].group];
        row[r] = hb_rec_value(&sim->records[r], gr->v, gr->hh_state, gr->syn_state);
    }
    const long step = 0;
    const hb_status_t status = push_rows(sim, 1, &step, row);
    free(row);
    return status;
}

void hb_sim_recorded(const hb_sim_t *sim, size_t *rows, const long **steps, const double **values)
{
    *rows = sim ? sim->n_rows : 0;
    *steps = sim ? sim->row_step : NULL;
    *values = sim ? sim->row_values : NULL;
}

void hb_sim_recorded_clear(hb_sim_t *sim)
{
    if (sim) sim->n_rows = 0;
}
