/*
 * A group's catalogue mechanisms and ions from its cells' models (sim_cat.c): built with the
 * layout (src/sim/sim_layout.c), initialised by hb_sim_init, stepped by the CPU engine
 * (common/cat_step.h).
 */
#ifndef HB_SIM_SIM_CAT_H
#define HB_SIM_SIM_CAT_H

#include <stdint.h>

#include "common/cat_step.h"
#include "sim/sim_engine.h"

/* The same catalogue mechanisms on the same nodes (one non-mixed group). */
int hb_sim_cat_same(const hb_model_t *a, const hb_model_t *b);
/* h mixed with the catalogue mechanisms' nodes (the shape hash). */
uint64_t hb_sim_cat_hash(const hb_model_t *md, uint64_t h);
/* The catalogue data of group k (its slots filled; cells: the cell of each slot); *out NULL
 * when no cell has a catalogue mechanism. */
hb_status_t hb_sim_cat_build(hb_sim_t *sim, const hb_step_group_t *k, const int *cells,
                             hb_step_cat_t **out);
void hb_sim_cat_free(hb_step_cat_t *cat);
/* fixed[row] = 0 for the rows of slot s's catalogue instances (their conductance changes). */
void hb_sim_cat_rows(const hb_step_cat_t *cat, const hb_step_group_t *k, int s,
                     unsigned char *fixed);
/* Point processes' RANDOM streams: id2 = the cell's gid (gids: per cell; NULL: the cell's
 * index), id1 = 0 and id3 = the synapse's index in its cell set by the layout. */
void hb_sim_cat_ids(const hb_step_group_t *k, const int *cells, const uint32_t *gids);
/* The ions and every mechanism's INITIAL (v set). */
void hb_sim_cat_init(const hb_step_group_t *k, double dt);

#endif
