/*
 * Internal: the CPU engine's reversal potentials by Nernst over a block's contiguous elements
 * (the start of pass A for the ions, src/cpu/sim_cpu.c's cat_ions_begin_block).
 */
#ifndef HB_CPU_CAT_IONS_CPU_H
#define HB_CPU_CAT_IONS_CPU_H

#include <stddef.h>

/* e[x] = hb_cat_nernst(ktf, ci[x], co[x], z) for x < n where style[x] has HB_ION_EADVANCE,
 * the other elements left alone. Arguments are trusted. */
void hb_cpu_cat_nernst(double ktf, double z, const double *ci, const double *co,
                       const unsigned char *style, double *e, size_t n);

#endif
