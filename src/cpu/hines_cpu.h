/*
 * Internal: the CPU Hines kernel and the layout geometry it (and batch.c)
 * relies on.
 *
 * Every layout is Block-Interleaved with some number B of systems per block
 * (FLAT: B = 1, INTERLEAVED: B = batch_count, BLOCK: B = block_size), so
 * element (s, i) lives at (s / B) * m * B + i * B + s % B: a system is a base
 * offset plus rows B apart, and systems s..s+n-1 of one block are n adjacent
 * lanes. The kernel solves such a run of lanes; the drivers only pick runs.
 */
#ifndef HB_CPU_HINES_CPU_H
#define HB_CPU_HINES_CPU_H

#include <stddef.h>

#include "hinesbatch.h"

/* Systems per block B of a layout (see above); 0 when the arguments are invalid. */
int hb_layout_block(hb_layout_t layout, int batch_count, int block_size);

/* Offset of row 0 of system s when B systems share a block of m rows. */
static inline size_t hb_block_base(int m, int block, int s)
{
    return (size_t)(s / block) * (size_t)m * (size_t)block + (size_t)(s % block);
}

/*
 * Validate m and a Hines-ordered parent array (parent[0] = -1, 0 <= parent[i] < i).
 * `fn` prefixes the message. Returns HB_SUCCESS or records the failure.
 */
hb_status_t hb_check_tree(const char *fn, int m, const int *parent);

/* hb_check_tree plus batch_count, layout and (for BLOCK) block_size. */
hb_status_t hb_check_batch(const char *fn, int m, const int *parent, int batch_count,
                           hb_layout_t layout, int block_size);

/*
 * Algorithm 1 on `lanes` systems at once: element (row i, lane k) of each
 * array is at i * row_stride + k, lanes <= row_stride (or m == 1). Arguments
 * are trusted. No pivot check: cable matrices are diagonally dominant, so the
 * eliminated diagonal never reaches zero; other matrices get inf/NaN results.
 * The code is hb_hines_lanes_inline (src/cpu/hines_lanes.h), shared with the
 * simulator's fused CPU step and its CUDA kernel.
 */
void hb_hines_lanes(int m, const int *restrict parent, size_t row_stride, size_t lanes,
                    const double *restrict u, const double *restrict l, double *restrict d,
                    double *restrict rhs);

#endif
