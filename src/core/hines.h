/* The core's argument checks of Hines trees and batches (hb_hines_*, hb_batch_*, hb_multi_*). */
#ifndef HB_CORE_HINES_H
#define HB_CORE_HINES_H

#include "hinesbatch.h"

/*
 * Validate m and a Hines-ordered parent array (parent[0] = -1, 0 <= parent[i] < i).
 * `fn` prefixes the message. Returns HB_SUCCESS or records the failure.
 */
hb_status_t hb_check_tree(const char *fn, int m, const int *parent);

/* hb_check_tree plus batch_count, layout and (for BLOCK) block_size. */
hb_status_t hb_check_batch(const char *fn, int m, const int *parent, int batch_count,
                           hb_layout_t layout, int block_size);

#endif
