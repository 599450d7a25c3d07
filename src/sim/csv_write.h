/*
 * What the library's CSV writers (sim_record.c) and the CLI's streamed ones (tools/cmd_run.c)
 * write alike: a field, and the order of spikes. Header-only: the CLI may link the shared
 * library, which exports the public API alone.
 */
#ifndef HB_SIM_CSV_WRITE_H
#define HB_SIM_CSV_WRITE_H

#include <stdio.h>
#include <string.h>

/* A CSV field (RFC 4180): quoted, with quotes doubled, when it holds a comma, quote or line
 * break. */
static inline void hb_csv_put_field(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

/* A spike of a probe; sorted by hb_spike_at_compare: by time, probes in order at equal times
 * (the order in which a run streams them). */
typedef struct {
    double t; /* [ms] */
    int probe;
} hb_spike_at_t;

static inline int hb_spike_at_compare(const void *a, const void *b)
{
    const hb_spike_at_t *x = a, *y = b;
    if (x->t != y->t) return x->t < y->t ? -1 : 1;
    return (x->probe > y->probe) - (x->probe < y->probe);
}

#endif
