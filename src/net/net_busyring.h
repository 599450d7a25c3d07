/*
 * Arbor's busyring benchmark (arbor example/busyring/ring.cpp; docs/network.md, "busyring"):
 * the parameters, the random morphology of a gid (std::mt19937 seeded by the gid, draws as
 * libstdc++ makes them), its model (soma hh, dendrites pas, an ExpSyn and a detector on the
 * soma) and the connections that end on a gid (the ring edge and synapses - 1 zero-weight
 * connections from a fresh std::mt19937(gid)).
 */
#ifndef HB_NET_NET_BUSYRING_H
#define HB_NET_NET_BUSYRING_H

#include <stdint.h>

#include "hinesbatch.h"

/* The 32-bit Mersenne twister (std::mt19937). */
typedef struct {
    uint32_t mt[624];
    int index;
} hb_mt19937_t;

void hb_mt19937_seed(hb_mt19937_t *g, uint32_t seed);
uint32_t hb_mt19937_next(hb_mt19937_t *g);
/* libstdc++'s std::generate_canonical<double, 53> on mt19937 (two draws): [0, 1). */
double hb_mt_canonical(hb_mt19937_t *g);
/* libstdc++'s std::uniform_int_distribution<uint32_t>(lo, hi) (Lemire's method), hi > lo. */
uint32_t hb_mt_uniform_u32(hb_mt19937_t *g, uint32_t lo, uint32_t hi);
/* libstdc++'s std::uniform_real_distribution<float>(lo, hi) (one draw). */
float hb_mt_uniform_float(hb_mt19937_t *g, float lo, float hi);

/* Arbor's parameters (parameters.hpp's defaults from hb_busyring_default). */
typedef struct {
    uint32_t num_cells;    /* "num-cells" (5000) */
    uint32_t ring_size;    /* "ring-size" (5) */
    double min_delay;      /* "min-delay" [ms] (5) */
    float event_weight;    /* "event-weight" [uS] (0.05; a float in Arbor) */
    int depth;             /* "depth" (5): 0, or >= 2 */
    double branch_probs[2]; /* "branch-probs" ({1, 0.5}) */
    unsigned compartments[2]; /* "compartments" ({20, 2}) */
    double lengths[2];     /* "lengths" [um] ({200, 20}) */
    uint32_t synapses;     /* "synapses" (1): connections per cell */
} hb_busyring_t;

void hb_busyring_default(hb_busyring_t *p);

/* The morphology of gid as SWC samples (malloc'd, *count of them): the soma (type 1, two
 * samples), then each dendritic branch's nc samples (type 3 at even levels, 4 at odd ones).
 * per_level (may be NULL; depth + 1 entries) receives the branches of each level, the soma
 * counting as level 0's one. */
hb_status_t hb_busyring_samples(const hb_busyring_t *p, uint32_t gid, hb_sample_t **samples,
                                int *count, int *per_level);

/* The cell of gid: its morphology and model (HB_CPOLICY_PER_SEGMENT, NEURON scheme, Ra 100,
 * cm 1; soma hh, dendrites pas 0.001 / -70; synapse 0 an ExpSyn (tau 2, e 0) at soma(0.5);
 * probe 0 the detector at soma(0), threshold 10 mV). */
hb_status_t hb_busyring_cell(const hb_busyring_t *p, uint32_t gid, hb_morph_t **morph,
                             hb_model_t **model);

/* The p->synapses connections ending on gid (synapse 0): the ring's, then the zero-weight
 * ones in Arbor's order. Delays and weights as Arbor's floats. */
void hb_busyring_connections(const hb_busyring_t *p, uint32_t gid, hb_connection_t *out);

#endif
