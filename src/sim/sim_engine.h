/*
 * The simulation object shared by the files of the simulator's engine front (src/sim/):
 * sim.c (the hb_sim_* life cycle and the advance loop), sim_layout.c (cells grouped into
 * Block-Interleaved blocks) and sim_record.c (probes, samples, spikes, CSV). The step itself
 * runs in a backend's engine (backend/sim_ops.h).
 */
#ifndef HB_SIM_SIM_ENGINE_H
#define HB_SIM_SIM_ENGINE_H

#include <stddef.h>
#include <stdint.h>

#include "backend/sim_ops.h"
#include "sim/sim.h"

typedef struct {
    hb_step_group_t k;   /* what the step reads and writes (host arrays) */
    int *cells;          /* simulation cell of each slot (count) */
    int *parent, *hh_node;
    double *v, *u, *l, *cfac, *pas_g, *pas_e, *hh_par, *hh_state;
    unsigned char *fixed_row; /* shared groups: see hb_step_group_t */
    double *fixed;            /* 3 m: r, c, f (mixed: r of every element) */
    size_t *block_start, *hh_start; /* mixed groups: see hb_step_group_t */
    int *lane_m, *lane_hh;
    int *shape_class;         /* mixed groups: see hb_step_group_t */
    unsigned char *row_index; /* mixed groups: see hb_step_group_t */
    double *row_table, *cfac_table;
    unsigned char *chain_row;
    int *site_start;
    hb_stim_site_t *sites;
    hb_stim_pulse_t *pulses;
    int *syn_start;      /* NULL when no cell of the group has a synapse */
    hb_syn_site_t *syns;
    double *syn_state;
    size_t n_syn_state;  /* values in syn_state */
    struct hb_step_cat *cat; /* catalogue mechanisms and ions (sim_cat.c); NULL: none */
} group_t;

typedef struct {
    double *data;
    int count, capacity;
} series_t;

/* What the simulation keeps of a cell's model: its sizes, and its shape's hash (matrix shape
 * and hh nodes) to find cells of one group. */
typedef struct {
    int m, n_hh, n_probes, n_synapses, n_iclamps, n_sites; /* n_sites: IClamp nodes */
    int n_cat; /* catalogue mechanisms inserted and point processes (0: the group's catalogue
                * survey skips it) */
    int n_hand; /* of n_synapses: the hard-coded ExpSyn/Exp2Syn (the rest: point processes) */
    int spike_source; /* hb_model_set_spike_source's synapse, -1 */
    uint64_t shape;
} hb_sim_cell_info_t;

struct hb_sim {
    hb_sim_options_t opt;
    int n_cells;
    hb_model_t **cells; /* borrowed (or owned through `owned`); NULL when from `source` */
    hb_sim_cell_source_t source; /* the cells' models (hb_sim_create_from) */
    int build_threads;  /* threads that build the layout (1 unless source.thread_safe) */
    hb_sim_cell_info_t *info; /* per cell */
    int *probe_first;   /* per cell: its first probe (n_cells + 1) */
    int *offset;        /* first node of each cell in vbuf; offset[n_cells] = all nodes */
    int *group_of, *slot_of; /* per cell */
    int n_groups;
    group_t *groups;
    hb_hh_table_t table;
    hb_context_t *ctx;
    const struct hb_sim_ops *ops; /* the context's backend's engine */
    void *engine;                 /* its state */
    int n_probes;
    hb_probe_t *probes;   /* nodes local to the cell, names owned */
    int *probe_group;
    size_t *probe_index;  /* element of the group's v */
    unsigned char *above; /* per probe: v was above threshold (at init) */
    double *v_prev;       /* per probe, for interpolated spike times (at init) */
    series_t times;
    series_t *traces; /* per probe */
    series_t *spikes; /* per probe */
    double *vbuf;     /* hb_sim_voltages: cell by cell */
    long step, sample_every;
    int initialised;
    int failed;             /* stopped at a non-finite state: hb_sim_init before stepping on */
    double memory_bytes;    /* the machine's memory (0: unknown): what recordings may take */
    const char *cell_label; /* with cell_ids: cells named "LABEL ID" in messages */
    const uint32_t *cell_ids;
    hb_sim_owned_t owned;
    int device;              /* hb_sim_create_on's (modulo the devices: the engine's) */
    int *target_first;       /* per cell: its first synapse's target (n_cells + 1) */
    hb_sim_target_t *targets; /* the engine's targets: every cell's synapses */
    hb_sim_engine_event_t *events; /* hb_sim_queue_events' buffer */
    size_t cap_events;
    /* Connections' weight vectors of catalogue point processes (hb_sim_add_weights): vector i
     * at weights[i HB_CAT_MAX_WEIGHT], its target and weight, reset by hb_sim_init. */
    int n_weights, cap_weights;
    /* Point processes' self-events (net_send): the engine's queue, filled by hb_sim_init's
     * INITIALs and the events' NET_RECEIVE (common/self_events.h); self_mechs: how many of the
     * groups' catalogue mechanisms send them (0: the queue stays empty). */
    hb_self_queue_t self_events;
    int self_mechs;
    double *weights;
    int *weight_target;
    double *weight0; /* [uS] */
    /* Per target (n_targets) its first and last connection's vector, per vector the target's
     * next (-1: none): each target's connections in the order they were added, FOR_NETCONS's
     * order (hb_cat_netcons_t); head NULL until the first vector. */
    int *netcon_head, *netcon_tail, *netcon_next;
    int n_records;           /* hb_sim_set_records: values recorded every record_every steps */
    hb_rec_sample_t *records;
    long record_every;
    int records_pushed;      /* the engine has them */
    size_t n_rows, cap_rows; /* rows recorded since hb_sim_recorded_clear */
    long *row_step;          /* per row: steps done */
    double *row_values;      /* n_rows x n_records */
};

/* Cell c's model from the simulation's cells or source, and its release (NULL: failed, the
 * message set). */
const hb_model_t *hb_sim_cell_get(const hb_sim_t *sim, int c);
void hb_sim_cell_put(const hb_sim_t *sim, int c, const hb_model_t *model);

/* hb_for_each_first (sim.h) on sim->build_threads threads. */
hb_status_t hb_sim_for_each(const hb_sim_t *sim, int n, const char *what,
                            hb_status_t (*fn)(void *ctx, int i), void *ctx);

/* sim_layout.c: every cell's hb_sim_cell_info_t (the models asked once each). */
hb_status_t hb_sim_survey(hb_sim_t *sim);
/* sim_layout.c: the groups of the cells in the ops' block widths; their constants filled,
 * state left for hb_sim_init. */
hb_status_t hb_sim_make_groups(hb_sim_t *sim);
void hb_sim_free_groups(hb_sim_t *sim);
/* Group and element of every probe's node (after hb_sim_make_groups). */
void hb_sim_locate_probes(hb_sim_t *sim);

/* The state of synapse `synapse` of cell `cell` (2 values, the second `*stride` after the
 * first), and its site. */
double *hb_sim_synapse_state(hb_sim_t *sim, int cell, int synapse, const hb_syn_site_t **site,
                             size_t *stride);

/* sim_record.c */
/* Room for the probes of all cells (cell order; each cell's copied as its group is filled,
 * hb_sim_copy_probes), the voltage buffer. */
hb_status_t hb_sim_gather(hb_sim_t *sim);
/* Cell c's probes into the simulation's (named "cC.NAME" where there are several cells). */
hb_status_t hb_sim_copy_probes(hb_sim_t *sim, int c, const hb_model_t *md);
void hb_sim_free_records(hb_sim_t *sim);
/* Time and every probe's v now, from the host layout. */
hb_status_t hb_sim_record_sample(hb_sim_t *sim);
/* An engine's recordings (hb_sim_sink_t; user: the hb_sim_t). */
hb_status_t hb_sim_record_sink(void *user, int n_samples, const long *sample_step,
                               const double *samples, const int *spike_count,
                               const double *spikes);
/* Empties the recordings; each probe's threshold state from the host layout (hb_sim_init). */
void hb_sim_reset_records(hb_sim_t *sim);
/* The recorded values' rows emptied, and row 0 (step 0) from the host layout (hb_sim_init). */
hb_status_t hb_sim_record_initial(hb_sim_t *sim);
/* The records to the engine where it has not got them (before stepping). */
hb_status_t hb_sim_push_records(hb_sim_t *sim);

#endif
