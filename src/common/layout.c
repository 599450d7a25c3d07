/* Layout geometry: the public hb_layout_* calls and the block width every backend uses. */
#include <stdint.h>

#include "common/layout.h"

int hb_layout_block(hb_layout_t layout, int batch_count, int block_size)
{
    if (batch_count < 1) return 0;
    switch (layout) {
    case HB_LAYOUT_FLAT: return 1;
    case HB_LAYOUT_INTERLEAVED: return batch_count;
    case HB_LAYOUT_BLOCK: return block_size >= 1 ? block_size : 0;
    }
    return 0;
}

const char *hb_layout_name(hb_layout_t layout)
{
    switch (layout) {
    case HB_LAYOUT_FLAT: return "flat";
    case HB_LAYOUT_INTERLEAVED: return "interleaved";
    case HB_LAYOUT_BLOCK: return "block";
    }
    return "unknown";
}

/* 0 for invalid arguments or when the size does not fit in size_t. */
size_t hb_layout_size(hb_layout_t layout, int m, int batch_count, int block_size)
{
    const int block = hb_layout_block(layout, batch_count, block_size);
    if (block == 0 || m < 1) return 0;
    /* size_t throughout: batch_count + block - 1 may overflow int. */
    const size_t blocks = ((size_t)batch_count + (size_t)block - 1) / (size_t)block;
    const size_t padded = blocks * (size_t)block; /* < 2 * INT_MAX */
    if (padded / (size_t)block != blocks || padded > SIZE_MAX / (size_t)m) return 0;
    return padded * (size_t)m;
}

/* SIZE_MAX for invalid arguments or an element outside the real systems. */
size_t hb_layout_index(hb_layout_t layout, int m, int batch_count, int block_size, int system,
                       int row)
{
    if (system < 0 || system >= batch_count || row < 0 || row >= m ||
        hb_layout_size(layout, m, batch_count, block_size) == 0)
        return SIZE_MAX;
    const int block = hb_layout_block(layout, batch_count, block_size);
    return hb_block_base(m, block, system) + (size_t)row * (size_t)block;
}
