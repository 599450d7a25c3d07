/*
 * The layouts' geometry, shared by the core (batch.c), the CPU kernel and the planners.
 *
 * Every layout is Block-Interleaved with some number B of systems per block
 * (FLAT: B = 1, INTERLEAVED: B = batch_count, BLOCK: B = block_size), so
 * element (s, i) lives at (s / B) * m * B + i * B + s % B: a system is a base
 * offset plus rows B apart, and systems s..s+n-1 of one block are n adjacent
 * lanes (docs/layouts.md).
 */
#ifndef HB_COMMON_LAYOUT_H
#define HB_COMMON_LAYOUT_H

#include <stddef.h>

#include "common/hostdev.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Systems per block B of a layout (see above); 0 when the arguments are invalid. */
int hb_layout_block(hb_layout_t layout, int batch_count, int block_size);

#ifdef __cplusplus
}
#endif

/* Offset of row 0 of system s when B systems share a block of m rows. */
HB_HOSTDEV size_t hb_block_base(int m, int block, int s)
{
    return (size_t)(s / block) * (size_t)m * (size_t)block + (size_t)(s % block);
}

#endif
