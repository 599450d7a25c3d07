/*
 * A network run's recorded values (the file's "record" section, docs/network.md section 8):
 * gathered from every rank after each chunk of the run (hb_net_traces, collective) and
 * appended by rank 0 to DIR/traces.h5 (one SONATA report for all ranks) or DIR/traces.csv,
 * then dropped, so that memory holds one chunk. A restart continues the file of the run it
 * restarts, cut back to the checkpoint.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"
#include "net_traces.h"
#include "sim/csv_write.h"
#include "sonata/sonata.h"

struct net_traces {
    int rank, h5;
    int n;                 /* columns */
    cli_report_t *report;  /* rank 0, h5 */
    FILE *csv;             /* rank 0, csv */
    char path[4200];
    float *frames;
    size_t frames_cap;
    long rows;             /* written */
};

/* The CSV file cut back after its rows of t <= t_ms (rows come in time order). */
static FILE *csv_continue(const char *path, double t_ms, double dt_ms)
{
    FILE *f = fopen(path, "r+");
    if (!f) {
        cli_fail("run", "%s: cannot open to continue it: %s (a restart continues the outputs of "
                 "the checkpointed run in the same directory)", path, strerror(errno));
        return NULL;
    }
    char line[1024];
    long keep = 0;
    int header = 1;
    while (fgets(line, sizeof line, f)) {
        if (!header) { /* gid,name,t_ms,value */
            const char *c = strchr(line, ',');
            c = c ? strchr(c + 1, ',') : NULL;
            if (!c || strtod(c + 1, NULL) > t_ms + 0.5 * dt_ms) break;
        }
        header = 0;
        keep = ftell(f);
    }
    if (keep <= 0 || ftruncate(fileno(f), (off_t)keep) != 0 || fseek(f, keep, SEEK_SET) != 0) {
        cli_fail("run", "%s: cannot cut back to the checkpoint (t = %g ms): expected the traces "
                 "of the checkpointed run", path, t_ms);
        fclose(f);
        return NULL;
    }
    return f;
}

/* Rank 0's file: a new one, or (restart) the run's own continued after the checkpoint's rows. */
static int open_file(net_traces_t *t, hb_net_t *net, const char *dir, int restart)
{
    const int n = t->n;
    const double dt = hb_net_record_sample_dt(net), sdt = hb_net_dt(net);
    snprintf(t->path, sizeof t->path, "%s/%s", dir, t->h5 ? "traces.h5" : "traces.csv");
    if (!t->h5) {
        if (restart) return (t->csv = csv_continue(t->path, hb_net_time(net), sdt)) ? 0 : 1;
        if (!(t->csv = fopen(t->path, "w")))
            return cli_fail("run", "%s: cannot write: %s", t->path, strerror(errno));
        fputs("gid,name,t_ms,value\n", t->csv);
        return 0;
    }
    if (restart) { /* the rows at steps 0, every, ... up to the checkpoint's */
        const long every = lround(dt / sdt), step = lround(hb_net_time(net) / sdt);
        return cli_report_reopen(t->path, cli_sonata_population, (size_t)n, step / every + 1, &t->report);
    }
    uint64_t *gid = malloc(((size_t)n + 1) * sizeof *gid);
    uint32_t *element = malloc(((size_t)n + 1) * sizeof *element);
    const char **name = malloc(((size_t)n + 1) * sizeof *name);
    const char **unit = malloc(((size_t)n + 1) * sizeof *unit);
    int rc = gid && element && name && unit ? 0 : cli_fail("run", "out of memory");
    int same = 1;
    for (int k = 0; rc == 0 && k < n; k++) {
        uint32_t g = 0;
        hb_net_record_column(net, k, &g, &name[k], &unit[k]);
        gid[k] = g;
        element[k] = k > 0 && gid[k] == gid[k - 1] ? element[k - 1] + 1 : 0;
        same = same && strcmp(unit[k], unit[0]) == 0;
    }
    if (rc == 0)
        rc = cli_report_create(t->path, cli_sonata_population, (size_t)n, gid, element, name, 0.0, dt, &t->report);
    if (rc == 0) rc = cli_report_set_units(t->report, cli_sonata_population, same ? unit[0] : "mixed", unit);
    free(gid);
    free(element);
    free(name);
    free(unit);
    return rc;
}

int net_traces_open(hb_net_t *net, const char *dir, int h5, int restart, int rank,
                    net_traces_t **out)
{
    *out = NULL;
    if (hb_net_record_count(net) == 0) return 0;
    net_traces_t *t = calloc(1, sizeof *t);
    if (!t) return cli_fail("run", "out of memory");
    t->rank = rank;
    t->h5 = h5;
    t->n = hb_net_record_count(net);
    *out = t;
    return rank == 0 ? open_file(t, net, dir, restart) : 0;
}

int net_traces_write(net_traces_t *t, hb_net_t *net)
{
    if (!t) return 0;
    const double *times = NULL, *values = NULL;
    size_t rows = 0;
    hb_status_t status = hb_net_traces(net, &times, &values, &rows); /* collective */
    if (status != HB_SUCCESS) return cli_fail_status("run", status);
    hb_net_traces_clear(net);
    if (t->rank != 0 || rows == 0) return 0;
    const size_t n = (size_t)t->n;
    if (t->report) {
        if (rows * n > t->frames_cap) {
            float *grown = realloc(t->frames, rows * n * sizeof *grown);
            if (!grown) return cli_fail("run", "out of memory for %zu values", rows * n);
            t->frames = grown;
            t->frames_cap = rows * n;
        }
        for (size_t k = 0; k < rows * n; k++) t->frames[k] = (float)values[k];
        t->rows += (long)rows;
        return cli_report_append(t->report, rows, t->frames);
    }
    if (!t->csv) return 0;
    for (size_t r = 0; r < rows; r++)
        for (size_t k = 0; k < n; k++) {
            uint32_t gid = 0;
            const char *name = NULL;
            hb_net_record_column(net, (int)k, &gid, &name, NULL);
            fprintf(t->csv, "%u,", gid);
            hb_csv_put_field(t->csv, name);
            fprintf(t->csv, ",%.10g,%.9g\n", times[r], values[r * n + k]);
        }
    t->rows += (long)rows;
    if (fflush(t->csv) != 0 || ferror(t->csv))
        return cli_fail("run", "%s: cannot write: %s", t->path, strerror(errno));
    return 0;
}

const char *net_traces_path(const net_traces_t *t) { return t && t->rank == 0 ? t->path : NULL; }

int net_traces_close(net_traces_t *t)
{
    if (!t) return 0;
    int rc = 0;
    if (t->report) rc = cli_report_close(t->report);
    if (t->csv && fclose(t->csv) != 0) rc = cli_fail("run", "%s: cannot write", t->path);
    free(t->frames);
    free(t);
    return rc;
}
