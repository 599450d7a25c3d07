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
