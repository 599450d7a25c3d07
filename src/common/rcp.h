/* The reciprocal that the mixed-batch and branched kernels share with their CPU twins. */
#ifndef HB_COMMON_RCP_H
#define HB_COMMON_RCP_H

#include <math.h>

#include "common/hostdev.h"

/* 1/x. On the GPU a division is a slow subroutine on a branch's critical path: there the
 * hardware estimate refined once to about 1 ulp (as the Hines kernels' fast_rcp); the CPU
 * divides, so its results are those of hb_td_thomas_step. */
HB_HOSTDEV double hb_rcp(double x)
{
#if defined(__CUDA_ARCH__)
    double y;
    asm("rcp.approx.ftz.f64 %0, %1;" : "=d"(y) : "d"(x));
    double e = fma(-x, y, 1.0);
    e = fma(e, e, e);
    return fma(y, e, y);
#else
    return 1.0 / x;
#endif
}

#endif
