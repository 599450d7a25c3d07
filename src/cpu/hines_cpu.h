/*
 * Internal: the CPU Hines kernel. Layouts are Block-Interleaved (common/layout.h): the kernel
 * solves a run of adjacent lanes of one block; the driver only picks runs.
 */
#ifndef HB_CPU_HINES_CPU_H
#define HB_CPU_HINES_CPU_H

#include <stddef.h>

#include "hinesbatch.h"

/*
 * Algorithm 1 on `lanes` systems at once: element (row i, lane k) of each
 * array is at i * row_stride + k, lanes <= row_stride (or m == 1). Arguments
 * are trusted. No pivot check: cable matrices are diagonally dominant, so the
 * eliminated diagonal never reaches zero; other matrices get inf/NaN results.
 * The code is hb_hines_lanes_inline (common/hines_lanes.h), shared with the
 * simulator's fused CPU step and its CUDA kernel.
 */
void hb_hines_lanes(int m, const int *restrict parent, size_t row_stride, size_t lanes,
                    const double *restrict u, const double *restrict l, double *restrict d,
                    double *restrict rhs);

#endif
