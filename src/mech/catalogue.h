/* Mechanism catalogues (docs/mechanisms.md): the built-in ones, generated from mechanisms/ at
 * build time, and users' from shared libraries built by `hinesbatch build-catalogue`.
 * Agreed interface; implemented in src/mech/catalogue.c. */
#ifndef HB_MECH_CATALOGUE_H
#define HB_MECH_CATALOGUE_H

#include <stdint.h>

#include "common/mech_abi.h"
#include "hinesbatch.h"

/* The built-in catalogues, in lookup order: "default" (mechanisms/nrn: hh, pas, ExpSyn,
 * Exp2Syn), "bbp", "allen". */
int hb_catalogue_builtin_count(void);
const hb_catalogue_t *hb_catalogue_builtin(int i);

/* A user's catalogue: dlopen(path) and its hb_catalogue_v1(), refused (a message naming the
 * path and both numbers) when its abi or sizeof_mech differ from this build's. The library
 * stays loaded for the process. */
hb_status_t hb_catalogue_load(const char *path, const hb_catalogue_t **out);

/* The users' catalogues hb_catalogue_load loaded in this process, in load order. */
int hb_catalogue_loaded_count(void);
const hb_catalogue_t *hb_catalogue_loaded(int i);

/* A mechanism's identity for checkpoints (docs/checkpoint.md): an FNV-1a hash of its
 * catalogue's name and generator string (which carries the hash of the .mod files' bytes,
 * hb_nmodl_emit_catalogue) and its own name; a mechanism of no catalogue this process knows
 * (neither built in nor loaded by hb_catalogue_load): its name's. */
uint64_t hb_catalogue_identity(const hb_cat_mech_t *mech);

/* Mechanism `name` ("NaTs2_t", or "bbp::Ca_HVA" where two catalogues have one) among the
 * built-ins then the n given catalogues. Not found, or ambiguous without its catalogue's
 * name: HB_ERR_INVALID_VALUE, the message naming it with a "did you mean" or the catalogues
 * that have it. */
hb_status_t hb_catalogue_find(const hb_catalogue_t *const *extra, int n_extra, const char *name,
                              const hb_cat_mech_t **out);

/* hb_catalogue_find among the built-ins, then the catalogues hb_catalogue_load loaded in this
 * process (the C API's names: hb_model_add_point_process, hb_model_create_artificial). */
hb_status_t hb_catalogue_find_loaded(const char *name, const hb_cat_mech_t **out);

#endif
