/*
 * The morphology builder (morphology.c): from samples (SWC's, ASC's, the caller's) to a
 * validated morphology, its sections cut by the options' rule. The object itself is
 * core/morph.h's.
 */
#ifndef HB_CORE_MORPHOLOGY_H
#define HB_CORE_MORPHOLOGY_H

#include "core/morph.h"

/* hb_morph_from_samples with the section rule and zero-radius choice of `options`
 * (NULL: the defaults); units and max_type belong to the reader and are ignored. */
hb_status_t hb_morph_build(const hb_sample_t *samples, int count, const char *name,
                           const hb_swc_options_t *options, hb_morph_t **morph);

#endif
