/*
 * A network file's "record" section (net_json_record.c), parsed with the file and applied to
 * the network once it is built (net_json.c).
 */
#ifndef HB_NET_NET_JSON_RECORD_H
#define HB_NET_NET_JSON_RECORD_H

#include "hinesbatch.h"
#include "sim/json_util.h"

typedef struct {
    int n, cap;
    hb_net_record_t *records; /* in file order: section, gid, location, variable */
    int *section;             /* per record: its section's index */
    int n_sections, listed;   /* listed: "record" is a list (paths "record[i]") */
    double sample_dt;         /* [ms], every section's */
    char **vars;              /* the variables' names the records point at */
    int n_vars;
} hb_net_json_records_t;

/* root's "record" (absent: none) for a network of n_cable cable cells (gids 0 .. n_cable - 1);
 * default_dt: the file's sample_dt [ms]. */
hb_status_t hb_net_json_records(const hb_json_loader_t *ld, const json_t *root, uint32_t n_cable,
                                double default_dt, hb_net_json_records_t *rs);
/* The records added to the built network (hb_net_record, section by section); errors name
 * the file and the section. */
hb_status_t hb_net_json_records_apply(hb_net_t *net, const hb_net_json_records_t *rs,
                                      const char *file);
void hb_net_json_records_free(hb_net_json_records_t *rs);

#endif
