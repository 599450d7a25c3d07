/*
 * Internal pieces of the simulator (src/sim): the model's per-node data, the
 * hh rate table and the owner list the JSON loader hands to a simulation.
 */
#ifndef HB_SIM_SIM_H
#define HB_SIM_SIM_H

#include "hinesbatch.h"
#include "sim/step_kernels.h"

typedef struct {
    int use_table;
    double celsius; /* [degC] */
    double q10;     /* 3^((celsius - 6.3) / 10) */
    /* minf, hinf, ninf, mtau, htau, ntau [ms]: HB_HH_TABLE_STRIDE entries each
     * (hb_hh_table_lookup in step_kernels.h) */
    double table[6 * HB_HH_TABLE_STRIDE];
} hb_hh_table_t;

void hb_hh_table_init(hb_hh_table_t *table, double celsius, int use_table);
/* NEURON's rates(v): from the table when enabled, else the formulas. */
void hb_hh_table_rates(const hb_hh_table_t *table, double v_mv, double inf[3], double tau_ms[3]);

typedef struct {
    int node;
    double del_ms, dur_ms, amp_na; /* [ms], [ms], [nA] */
} hb_iclamp_t;

typedef struct {
    int node;
    char *name;
    int detect_spikes;
    double threshold_mv; /* [mV] */
} hb_probe_t;

struct hb_model {
    const hb_morph_t *morph; /* borrowed */
    hb_cable_t *cable;
    hb_scheme_t scheme;
    int m;                   /* nodes */
    unsigned char *has_pas, *has_hh; /* per node */
    double *pas_g;           /* per node [S/cm^2] */
    double *pas_e;           /* per node [mV] */
    double *hh;              /* per node, HB_HH_NPAR values */
    int n_iclamps, cap_iclamps;
    hb_iclamp_t *iclamps;
    int n_probes, cap_probes;
    hb_probe_t *probes;
};

/* Things a simulation frees on destroy (what the JSON loader built). */
typedef struct {
    int n_models, n_morphs;
    hb_model_t **models;
    hb_morph_t **morphs;
} hb_sim_owned_t;

void hb_sim_owned_free(hb_sim_owned_t *owned);
/* Hands `owned` to the simulation (on success the simulation frees it). */
void hb_sim_adopt(hb_sim_t *sim, hb_sim_owned_t *owned);

#endif
