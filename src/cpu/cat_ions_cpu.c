/*
 * The CPU engine's reversal potentials by Nernst (cat_ions_cpu.h). A function of its own, in a
 * file of its own, with AVX-512 and x86-64-v3 clones, called through the loader's pick: GCC
 * binds a call within one file to the clone of the caller's target, and the step's is
 * x86-64-v3. Sixteen elements at a time, skipped where none of them has HB_ION_EADVANCE: every
 * one computes hb_cat_nernst in a loop of doubles alone, then its style picks in a loop of its
 * own. Mixed with the style's bytes, the loop's vector length would be the bytes' (16 and more),
 * too many for hb_log's registers: GCC split it into 2-lane vectors and spills, 2.6x slower on
 * this project's VM (AVX-512). The operations of hb_cat_ions_element: the same bits.
 */
#include "cpu/cat_ions_cpu.h"

#include "common/cat_step.h"

enum { NERNST_CHUNK = 16 };

HB_CPU_CLONES
void hb_cpu_cat_nernst(double ktf, double z, const double *HB_RESTRICT ci,
                       const double *HB_RESTRICT co, const unsigned char *HB_RESTRICT style,
                       double *HB_RESTRICT e, size_t n)
{
    size_t o = 0;
    for (; o + NERNST_CHUNK <= n; o += NERNST_CHUNK) {
        int any = 0;
        for (size_t k = 0; k < NERNST_CHUNK; k++) any |= style[o + k] & HB_ION_EADVANCE;
        if (!any) continue;
        double en[NERNST_CHUNK];
        HB_SIMD
        for (size_t k = 0; k < NERNST_CHUNK; k++)
            en[k] = hb_cat_nernst(ktf, ci[o + k], co[o + k], z);
        for (size_t k = 0; k < NERNST_CHUNK; k++)
            if (style[o + k] & HB_ION_EADVANCE) e[o + k] = en[k];
    }
    for (; o < n; o++)
        if (style[o] & HB_ION_EADVANCE) e[o] = hb_cat_nernst(ktf, ci[o], co[o], z);
}
