/*
 * Connections given as arrays (hb_connections_create, the Python module's numpy path): checked
 * once, then grouped by target with a counting sort that keeps the arrays' order within a
 * target, so that hb_connections_on hands each cell its connections in O(their number) and a
 * network of a million connections is built without a callback per connection.
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "hinesbatch.h"

struct hb_connections {
    uint32_t n_cells;
    size_t count;
    size_t *first;         /* n_cells + 1: target t's connections are conns[first[t] .. first[t+1]) */
    hb_connection_t *conns; /* grouped by target */
};

/* The first bad entry, named by its index, array and value. */
static hb_status_t check(uint32_t n_cells, size_t count, const uint32_t *source,
                         const uint32_t *target, const int *synapse, const double *weight_us,
                         const double *delay_ms)
{
    static const char *const fn = "hb_connections_create";
    for (size_t k = 0; k < count; k++) {
        if (source[k] >= n_cells)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: source[%zu] = %u; expected a gid < n_cells "
                           "= %u", fn, k, source[k], n_cells);
        if (target[k] >= n_cells)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: target[%zu] = %u; expected a gid < n_cells "
                           "= %u", fn, k, target[k], n_cells);
        if (synapse[k] < 0)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: synapse[%zu] = %d; expected a synapse "
                           "index >= 0", fn, k, synapse[k]);
        if (!isfinite(weight_us[k]))
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: weight_us[%zu] = %g; expected a finite "
                           "weight [uS]", fn, k, weight_us[k]);
        if (!(isfinite(delay_ms[k]) && delay_ms[k] > 0.0))
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: delay_ms[%zu] = %g; expected a finite "
                           "delay [ms] > 0", fn, k, delay_ms[k]);
    }
    return HB_SUCCESS;
}

hb_status_t hb_connections_create(uint32_t n_cells, size_t count, const uint32_t *source,
                                  const uint32_t *target, const int *synapse,
                                  const double *weight_us, const double *delay_ms,
                                  hb_connections_t **table)
{
    hb_clear_error();
    if (!table) return hb_fail(HB_ERR_INVALID_VALUE, "hb_connections_create: table is NULL");
    *table = NULL;
    if (count > 0 && (!source || !target || !synapse || !weight_us || !delay_ms))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_connections_create: %s is NULL with count = %zu",
                       !source ? "source" : !target ? "target" : !synapse ? "synapse"
                       : !weight_us ? "weight_us" : "delay_ms", count);
    if (count > SIZE_MAX / sizeof(hb_connection_t))
        return hb_fail(HB_ERR_ALLOC, "hb_connections_create: count = %zu is too many", count);
    hb_status_t status = check(n_cells, count, source, target, synapse, weight_us, delay_ms);
    if (status != HB_SUCCESS) return status;
    hb_connections_t *t = calloc(1, sizeof *t);
    if (t) {
        t->first = calloc((size_t)n_cells + 1, sizeof *t->first);
        t->conns = malloc((count ? count : 1) * sizeof *t->conns);
    }
    if (!t || !t->first || !t->conns) {
        hb_connections_destroy(t);
        return hb_fail(HB_ERR_ALLOC, "hb_connections_create: out of memory for %zu connections "
                       "of %u cells", count, n_cells);
    }
    t->n_cells = n_cells;
    t->count = count;
    for (size_t k = 0; k < count; k++) t->first[target[k] + 1]++;
    for (uint32_t c = 0; c < n_cells; c++) {
        if (t->first[c + 1] > (size_t)INT_MAX) {
            const size_t n = t->first[c + 1];
            hb_connections_destroy(t);
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_connections_create: %zu connections end on "
                           "gid %u; expected at most %d a cell", n, c, INT_MAX);
        }
        t->first[c + 1] += t->first[c];
    }
    /* first[c] is now target c's start; fill moves it to the end, then it is shifted back */
    for (size_t k = 0; k < count; k++) {
        hb_connection_t *c = &t->conns[t->first[target[k]]++];
        c->source = source[k];
        c->synapse = synapse[k];
        c->weight_us = weight_us[k];
        c->delay_ms = delay_ms[k];
    }
    memmove(t->first + 1, t->first, (size_t)n_cells * sizeof *t->first);
    t->first[0] = 0;
    *table = t;
    return HB_SUCCESS;
}

hb_status_t hb_connections_destroy(hb_connections_t *table)
{
    if (!table) return HB_SUCCESS;
    free(table->first);
    free(table->conns);
    free(table);
    return HB_SUCCESS;
}

size_t hb_connections_count(const hb_connections_t *table) { return table ? table->count : 0; }

hb_status_t hb_connections_on(void *table, uint32_t gid, hb_connection_t *out, int *count)
{
    const hb_connections_t *t = table;
    if (!t || !count) return hb_fail(HB_ERR_INVALID_VALUE, "hb_connections_on: NULL argument");
    if (gid >= t->n_cells)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_connections_on: gid %u; the table has %u cells",
                       gid, t->n_cells);
    const int n = (int)(t->first[gid + 1] - t->first[gid]);
    if (out) {
        if (*count < n)
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_connections_on: room for %d connections of "
                           "gid %u; it has %d", *count, gid, n);
        memcpy(out, t->conns + t->first[gid], (size_t)n * sizeof *out);
    }
    *count = n;
    return HB_SUCCESS;
}
