/* Mechanism catalogues (docs/mechanisms.md): the built-in ones, generated from mechanisms/ at
 * build time, and users' from shared libraries built by `hinesbatch build-catalogue`.
 * Agreed interface; implemented in src/mech/catalogue.c. */
#ifndef HB_MECH_CATALOGUE_H
#define HB_MECH_CATALOGUE_H

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

/* Mechanism `name` ("NaTs2_t", or "bbp::Ca_HVA" where two catalogues have one) among the
 * built-ins then the n given catalogues. Not found, or ambiguous without its catalogue's
 * name: HB_ERR_INVALID_VALUE, the message naming it with a "did you mean" or the catalogues
 * that have it. */
hb_status_t hb_catalogue_find(const hb_catalogue_t *const *extra, int n_extra, const char *name,
                              const hb_cat_mech_t **out);

#endif
