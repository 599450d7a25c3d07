/*
 * What the JSON loaders (sim/model_json.c: model files; net/net_json.c: network files) share:
 * errors that name the file and the key path, and typed getters of object members.
 */
#ifndef HB_SIM_JSON_UTIL_H
#define HB_SIM_JSON_UTIL_H

#include <jansson.h>

#include "common/mech_abi.h"
#include "common/status.h"
#include "sim/sim.h"

#define HB_JSON_PATH 256 /* a key path's room ("cells[3].probes[0].at") */
#define HB_JSON_MAX_CATALOGUES 64 /* entries of a file's "catalogues" */

typedef struct {
    const char *file;     /* name used in messages */
    const char *base_dir; /* directory that relative paths start from */
    hb_sim_owned_t owned; /* morphologies and models built so far */
    const hb_sim_overrides_t *overrides; /* what replaces the file's options (NULL: none) */
    /* the file's "catalogues", loaded (hb_json_catalogues): searched after the built-ins */
    const hb_catalogue_t *catalogues[HB_JSON_MAX_CATALOGUES];
    int n_catalogues;
} hb_json_loader_t;

enum { HB_JSON_OPTIONAL = 0, HB_JSON_REQUIRED = 1 };
typedef enum { HB_JSON_ANY, HB_JSON_POSITIVE, HB_JSON_NON_NEGATIVE } hb_json_range_t;

/* "an object", "a number", ...: what a value is, for messages. */
const char *hb_json_kind(const json_t *j);
/* HB_ERR_INVALID_VALUE with "FILE: PATH: what". */
hb_status_t hb_json_fail(const hb_json_loader_t *ld, const char *path, const char *fmt, ...)
    HB_PRINTF(3, 4);
/* "cells[0]" + ".mechanisms"; "cells" + "[3]". */
void hb_json_join(char *out, const char *path, const char *key);
void hb_json_join_index(char *out, const char *path, size_t index);
/* Every key of `obj` must be in the NULL-terminated list `allowed`. */
hb_status_t hb_json_check_keys(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                               const char *const *allowed);
hb_status_t hb_json_need_object(const hb_json_loader_t *ld, const char *path, const json_t *j);
/* obj[key] as a finite number in `range`; *out keeps its value when optional and absent. */
hb_status_t hb_json_number(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                           const char *key, int required, hb_json_range_t range, double *out);
/* obj[key] as a number within a parameter's accepted range (sim/sim.h, docs/model.md). */
hb_status_t hb_json_limited(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                            const char *key, int required, const hb_limit_t *limit, double *out);
/* obj[key] as an integer in [lo, hi] (absent: *out unchanged). */
hb_status_t hb_json_int(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                        const char *key, long lo, long hi, long *out);
/* obj[key] as one of `names` (NULL-terminated); *out is its index. */
hb_status_t hb_json_choice(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                           const char *key, const char *const *names, int *out);

/* obj[key] as an array, or NULL when absent (HB_SUCCESS); *at receives the key's path. */
hb_status_t hb_json_array(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                          const char *key, char *at, const json_t **list);
/* Reads a JSON file; *dir receives its folder (relative paths start there). */
hb_status_t hb_json_load_file(const char *path, char *dir, size_t dir_size, json_t **root);

/* model_json.c, for the network loader: a model file's options (the loader's overrides
 * applied), and one entry of "cells"
 * (its `count` copies appended to cells[]; the models owned by ld). */
hb_status_t hb_sim_json_options(const hb_json_loader_t *ld, const json_t *root,
                                hb_sim_options_t *opt);
hb_status_t hb_sim_json_cell(hb_json_loader_t *ld, const char *path, const json_t *cell,
                             hb_model_t ***cells, int *n_cells);
/* One entry of a network's "artificial": `count` hosts of an ARTIFICIAL_CELL appended to
 * cells[] (docs/network.md, "Artificial cells"). */
hb_status_t hb_sim_json_artificial(hb_json_loader_t *ld, const char *path, const json_t *item,
                                   hb_model_t ***cells, int *n_cells);
/* root's "catalogues": ["path.so", ...] (relative to the file's folder), each loaded by
 * hb_catalogue_load into ld->catalogues, so that "mechanisms" find their mechanisms; absent:
 * none. An error names "catalogues[i]", the path and what is wrong. */
hb_status_t hb_json_catalogues(hb_json_loader_t *ld, const json_t *root);

/* The name of the NULL-terminated list `allowed` a misspelt `name` most likely meant (within 2
 * edits, case-insensitive), or NULL: a message's "did you mean". */
const char *hb_json_nearest(const char *name, const char *const *allowed);

#endif
