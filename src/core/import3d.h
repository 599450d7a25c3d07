/* NEURON's Import3d sections of a morphology's samples (import3d.c). */
#ifndef HB_CORE_IMPORT3D_H
#define HB_CORE_IMPORT3D_H

#include "core/morph.h"

/* NEURON's Import3d sections of m's samples (import3d.c); fills m->sections. */
hb_status_t hb_import3d_sections(hb_morph_t *m);

#endif
