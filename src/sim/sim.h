/*
 * Internal pieces of the simulator (src/sim): the model's per-node data, the
 * hh rate table and the owner list the JSON loader hands to a simulation.
 */
#ifndef HB_SIM_SIM_H
#define HB_SIM_SIM_H

#include "hinesbatch.h"
#include "common/mech_abi.h"
#include "common/record_value.h"
#include "common/self_events.h"
#include "common/sim_step.h"

/*
 * The accepted range of a model parameter (docs/model.md, section 6): outside it a value means
 * nothing physical, and far outside it the step's arithmetic leaves the doubles (inf, NaN).
 * The model API refuses such values; the JSON loader says so with the key path.
 */
typedef struct {
    const char *what; /* "Ra", ... */
    double lo, hi;
    int lo_open;      /* 1: lo itself is refused (x > lo) */
    const char *unit; /* "ohm cm", ... */
} hb_limit_t;

extern const hb_limit_t hb_limit_ra, hb_limit_cm, hb_limit_length, hb_limit_diam,
    hb_limit_celsius, hb_limit_potential, hb_limit_conductance, hb_limit_amp;

int hb_limit_ok(const hb_limit_t *limit, double x);
/* "a number from -1000 to 1000 [mV]": what a message expects (out: 96 bytes at least). */
void hb_limit_expect(const hb_limit_t *limit, char *out, size_t size);
/* HB_ERR_INVALID_VALUE "CONTEXT: WHAT = x UNIT; expected ..." unless hb_limit_ok. */
hb_status_t hb_limit_check(const hb_limit_t *limit, double x, const char *context);

typedef struct {
    int use_table;
    double celsius; /* [degC] */
    double q10;     /* hh.mod's 3^((celsius - 6.3) / 10): hb_hh_q10 */
    /* hh.mod's TABLE as the generated hh fills and reads it (common/sim_step.h's
     * hb_hh_rates_at): minf, mtau, hinf, htau, ninf, ntau [ms], HB_HH_TABLE_STRIDE each */
    double table[HB_HH_TABLE_ROWS * HB_HH_TABLE_STRIDE];
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

/* Synapse k of a model: the hard-coded ExpSyn/Exp2Syn (mech NULL: syn), or a catalogue point
 * process (hb_model_add_point: mech and its RANGE PARAMETERs). One index space: a connection's
 * "synapse" names either. */
typedef struct {
    int node;
    hb_synapse_t syn;
    const hb_cat_mech_t *mech; /* NULL: the hard-coded synapse syn */
    double *param;             /* mech->n_param RANGE PARAMETERs (mech only) */
} hb_model_synapse_t;

/* A catalogue mechanism inserted in a model (hb_model_insert_cat). */
typedef struct {
    const hb_cat_mech_t *mech;
    unsigned char *on; /* per node: inserted there */
    double *param;     /* per node: mech->n_param RANGE PARAMETERs */
    double *global;    /* mech->n_global GLOBAL PARAMETERs (the defaults unless set) */
} hb_model_cat_t;

/* An ion value of a region (hb_model_set_ion), applied in the order set. */
typedef struct {
    char ion[16];  /* "na", "k", "ca", ... */
    int swc_type;  /* HB_REGION_ALL or a region */
    unsigned what; /* HB_ION_E, HB_ION_CI or HB_ION_CO */
    double value;  /* [mV] or [mM] */
} hb_model_ion_set_t;

struct hb_model {
    const hb_morph_t *morph; /* borrowed, unless owned_morph */
    hb_morph_t *owned_morph; /* hb_model_parse_json's own geometry, freed with the model */
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
    int n_synapses, cap_synapses;
    hb_model_synapse_t *synapses;
    int n_points;               /* of n_synapses: catalogue point processes */
    int spike_source;           /* the point process whose net_events are the cell's spikes
                                 * (hb_model_set_spike_source); -1: its detector probe */
    int artificial;             /* 1: the host of one ARTIFICIAL_CELL (a network's
                                 * "artificial"), its only point process; 0: a cell */
    int n_cat;                  /* catalogue mechanisms, in name order */
    hb_model_cat_t *cat;
    int n_ion_set;
    hb_model_ion_set_t *ion_set;
};

/*
 * Catalogue mechanism `mech` (a density mechanism) on every node of region swc_type
 * (HB_REGION_ALL: all) with a membrane, its RANGE PARAMETERs the defaults but keys[i] =
 * values[i]: an unknown key is refused with the nearest parameter name, a value outside the
 * parameter's <lo,hi> with its range. Inserting it again sets those nodes' values again.
 * `context` names the caller in messages ("model.json: mechanisms[2]").
 */
hb_status_t hb_model_insert_cat(hb_model_t *model, int swc_type, const hb_cat_mech_t *mech,
                                int n, const char *const *keys, const double *values,
                                const char *context);
/* Catalogue point process `mech` (HB_CAT_POINT) at `where` (a node with membrane), its RANGE
 * PARAMETERs the defaults but keys[i] = values[i] (checked as hb_model_insert_cat's), as the
 * model's next synapse (*index, may be NULL). */
hb_status_t hb_model_add_point(hb_model_t *model, const hb_location_t *where,
                               const hb_cat_mech_t *mech, int n, const char *const *keys,
                               const double *values, const char *context, int *index);
/* The host of ARTIFICIAL_CELL `mech` (hb_model_create_artificial, a network file's
 * "artificial"): a model of one compartment without mechanisms, which owns its geometry, its one
 * point process `mech` with keys[i] = values[i] (checked as hb_model_add_point's, `context`
 * leading the messages), its spike source where the NET_RECEIVE calls net_event. */
hb_status_t hb_model_artificial(const hb_cat_mech_t *mech, int n, const char *const *keys,
                                const double *values, const char *context, hb_model_t **model);
/* The hard-coded synapses before synapse k of the model (its index among them when it is one). */
int hb_model_hand_synapse(const hb_model_t *model, int k);
/* RANGE PARAMETER `key` of `mech` (inserted there before) on the region's nodes = value (a + b
 * exp(c d)), d the path distance [um] from the root section's centre (NEURON's h.distance from
 * soma(0.5)) to the node: BluePyOpt's "exp" distribution, NrnSegmentSomaDistanceScaler. */
hb_status_t hb_model_set_cat_by_distance(hb_model_t *model, int swc_type,
                                         const hb_cat_mech_t *mech, const char *key, double value,
                                         const double abc[3], const char *context);
/* GLOBAL PARAMETER `key` of the model's mechanism `mech` (inserted before) = value. */
hb_status_t hb_model_set_cat_global(hb_model_t *model, const hb_cat_mech_t *mech,
                                    const char *key, double value, const char *context);
/* Ion `ion`'s reversal potential (what HB_ION_E, [mV]) or concentration (HB_ION_CI,
 * HB_ION_CO, [mM]) in region swc_type: NEURON's `ena = 50` or `cai0_ca_ion`, per region. */
hb_status_t hb_model_set_ion(hb_model_t *model, int swc_type, const char *ion, unsigned what,
                             double value);
/* NEURON 8.2's defaults of ion `ion`: e [mV], ci, co [mM] (other species: 0, 1, 1). */
void hb_ion_defaults(const char *ion, double *e, double *ci, double *co);

/* Models alive in the process now (hb_model_create less hb_model_destroy); *peak (may be NULL)
 * the most alive at once since the last reset_peak (which starts it at now). For tests of
 * what a build keeps. */
long hb_model_live(int reset_peak, long *peak);

/* Things a simulation frees on destroy (what the JSON loader built). */
typedef struct {
    int n_models, n_morphs;
    hb_model_t **models;
    hb_morph_t **morphs;
    char **morph_keys; /* per morph: the file and options it was read with (the loader's
                          cache: cells naming one file alike share it), or NULL */
} hb_sim_owned_t;

void hb_sim_owned_free(hb_sim_owned_t *owned);
/* Hands `owned` to the simulation (on success the simulation frees it). */
void hb_sim_adopt(hb_sim_t *sim, hb_sim_owned_t *owned);

/* An event of weight w [uS] at synapse `synapse` of cell `cell`, now (NEURON's NET_RECEIVE),
 * into the host state: for engines that step it in place (steps_in_place), between steps. */
hb_status_t hb_sim_deliver(hb_sim_t *sim, int cell, int synapse, double weight);

/* An event: at the start of step `step` (steps done before it; hb_event_step of its time). */
typedef struct {
    long step;
    int cell, synapse;
    int weights;   /* the connection's weight vector (hb_sim_add_weights); -1: none */
    double time;   /* [ms] */
    double weight; /* [uS] */
} hb_sim_event_t;

/* A connection to synapse `synapse` of cell `cell` of weight w [uS]: where the synapse is a
 * catalogue point process, its weight vector (NEURON's NetCon.weight: w, then NET_RECEIVE's
 * per-connection state; reset with NET_RECEIVE's INITIAL by hb_sim_init) in *index, which
 * its events carry (hb_sim_event_t.weights); else *index = -1. Indices count up from 0 in the
 * order of the calls: their order is the connections' among events alike, and a synapse's
 * connections' order in NET_RECEIVE's FOR_NETCONS (NEURON's NetCon creation order). */
hb_status_t hb_sim_add_weights(hb_sim_t *sim, int cell, int synapse, double weight, int *index);
/* 1 when `weights` is -1 (none) or a weight vector of a connection to cell's synapse. */
int hb_sim_weights_of(const hb_sim_t *sim, int cell, int synapse, int64_t weights);
/* Cell `cell`'s catalogue point processes (among its synapses). */
int hb_sim_cell_points(const hb_sim_t *sim, int cell);
/* Synapse `synapse` of cell `cell`'s index among the cell's hard-coded synapses. */
int hb_sim_hand_index(const hb_sim_t *sim, int cell, int synapse);

/* Events for the coming hb_sim_advance calls, ordered by step, then cell and synapse, each
 * synapse's by (time, weight) (the network's order); steps not before the steps done. They
 * replace any still queued; each advance delivers those of its steps, at the start of each,
 * in the engine (on the GPU: copied once, delivered by the device). */
hb_status_t hb_sim_queue_events(hb_sim_t *sim, size_t n, const hb_sim_event_t *events);

/* A connection ending on cell `cell` of the simulation. */
typedef struct {
    uint32_t source; /* gid */
    int cell, synapse;
    double weight; /* [uS] */
    double delay;  /* [ms] */
} hb_sim_connection_t;

/*
 * Engines that make events themselves (the GPU): 1 when the simulation's engine does. Then
 * the network hands it the connections once (sorted by source; events of steps from
 * step_limit on are never delivered), every exchanged spike (hb_sim_add_spikes: expanded
 * through the connections on the device) and its own events (hb_sim_add_events, any order),
 * and before each epoch hb_sim_queue_due makes the events of the steps before step_end the
 * queue, ordered as hb_sim_queue_events wants them. hb_sim_init drops the waiting events.
 * weights: per connection its weight vector (hb_sim_add_weights' index, -1: none), or NULL
 * where no connection ends on a catalogue point process.
 */
int hb_sim_makes_events(const hb_sim_t *sim);
hb_status_t hb_sim_set_connections(hb_sim_t *sim, size_t n, const hb_sim_connection_t *conns,
                                   const int *weights, long step_limit);
hb_status_t hb_sim_add_spikes(hb_sim_t *sim, size_t n, const hb_spike_t *spikes);
hb_status_t hb_sim_add_events(hb_sim_t *sim, size_t n, const hb_sim_event_t *events);
hb_status_t hb_sim_queue_due(hb_sim_t *sim, long step_end);

/* hb_sim_create on the backend's device `device` modulo its devices (GPUs; a network gives
 * each rank of a node its own). */
hb_status_t hb_sim_create_on(hb_model_t *const *cells, int n_cells,
                             const hb_sim_options_t *options, int device, hb_sim_t **sim);

/*
 * Cells asked one at a time, for a simulation that keeps none of them (a network's own
 * builder, whose every cell has its own model): `get` builds cell `cell`'s model (NULL on
 * failure, with hb_last_error's message), `put` releases it. A simulation asks for each cell
 * twice while it is created (its sizes, then its constants; once more, with the cell it may
 * share a group with, where their shapes' hashes match) and again only for a fault's message
 * and a checkpoint's fingerprint, so that at most a few models (one per thread) live at once.
 * thread_safe: get and put may run for different cells on several threads at once.
 */
typedef struct {
    void *user;
    hb_model_t *(*get)(void *user, int cell);
    void (*put)(void *user, int cell, hb_model_t *model);
    int thread_safe;
} hb_sim_cell_source_t;

hb_status_t hb_sim_create_from(const hb_sim_cell_source_t *source, int n_cells,
                               const hb_sim_options_t *options, int device, hb_sim_t **sim);

/* Device memory the simulation's engine took [bytes] (0 on the CPU). */
size_t hb_sim_device_bytes(const hb_sim_t *sim);

/* Groups whose CPU steps end with the next step's currents fused into the states now
 * (docs/sim-engine.md, "Fused states and currents"; 0 on the GPU): for tests. */
int hb_sim_fused_groups(const hb_sim_t *sim);

/* Synapses of cell `cell` (0 when out of range). */
int hb_sim_cell_synapses(const hb_sim_t *sim, int cell);
/* Cell `cell`'s first probe that detects spikes, as a probe index of the whole simulation
 * (cell order), or -1. */
int hb_sim_cell_detector(const hb_sim_t *sim, int cell);
/* Cell `cell`'s point process whose net_events are its spikes (hb_model_set_spike_source) as
 * the simulation's target (an hb_self_spike_t's), or -1: none. */
int hb_sim_cell_point_source(const hb_sim_t *sim, int cell);
/* Point processes' net_event spikes (the CPU engine's): kept from now on where keep is 1 (a
 * network with such sources; else dropped as they come); the kept ones in the order sent
 * (deterministic: the engine's delivery order), and their clearing. hb_sim_init clears them. */
void hb_sim_keep_point_spikes(hb_sim_t *sim, int keep);
const hb_self_spike_t *hb_sim_point_spikes(const hb_sim_t *sim, size_t *n);
void hb_sim_point_spikes_clear(hb_sim_t *sim);

/* Cells named "LABEL ID" in messages (a network: "gid 42") instead of "cell INDEX"; ids
 * (n_cells of them) are borrowed for the simulation's life. */
void hb_sim_label_cells(hb_sim_t *sim, const char *label, const uint32_t *ids);

/* Groups whose constants are stored once per node (copies of one model,
 * hb_step_group_t.shared); for tests. */
int hb_sim_shared_groups(const hb_sim_t *sim);

/*
 * The engine's Hines solve alone (hb_hines_recip_lanes_inline as the fused
 * step runs it: blocks of HB_SIM_CPU_LANES copies of `cable`'s matrix, u and
 * l once per row, one division per row), for `hinesbatch bench cell`.
 * seconds[r] of each of `repeats` solves of all `cells` (after one warm-up).
 * in_cache 0: d and rhs of all blocks restored in memory (not timed), then
 * every block solved from there (at many cells: from DRAM); in_cache 1: each
 * block's d and rhs first copied into a block buffer (not timed), as the step
 * finds them, and only the solve of that buffer timed; in_cache 2: as 1, with
 * every row's factors computed once (the step's solve for cells without hh,
 * hb_step_solve_fixed: no division).
 */
hb_status_t hb_sim_solve_benchmark(const hb_cable_t *cable, int cells, double dt_ms,
                                   int in_cache, int repeats, double *seconds);

/* The machine's memory [bytes] (0 where unknown), which up-front estimates are held against;
 * asked once per simulation or network, not per advance. */
double hb_physical_memory(void);

/* fn(ctx, i) for i in [0, n), on `threads` threads (each i once, in any order); the status of
 * the smallest failing i, with its message: the failure one thread in order would see (the
 * builds of simulations and networks). `what` names the items for hb_set_progress's hook,
 * told how far the loop is; when it asks to stop, the items not begun are skipped and the
 * loop fails with HB_ERR_INTERRUPTED. A loop that must finish passes NULL: not watched. */
hb_status_t hb_for_each_first(int threads, int n, const char *what,
                              hb_status_t (*fn)(void *ctx, int i), void *ctx);

/*
 * Recorded values (src/sim/mech_vars.c, docs/network.md section 8): variables named "v",
 * "hh.m", "pas.i", "syn[K].g", ... (one table of the mechanisms' recordable variables).
 */
typedef struct {
    int entry;        /* the table's row (not a synapse's variable) */
    int synapse;      /* K of "syn[K].NAME", else -1 */
    const char *unit; /* "mV", "1", "S/cm2", "mA/cm2", "uS", "nA" */
} hb_rec_var_t;

/* A variable's name parsed (the model not asked: every rank alike); a message naming what
 * exists (and what it most likely meant) when it names nothing. */
hb_status_t hb_rec_parse(const char *variable, hb_rec_var_t *out);
/* "soma", "sec3(0.5)", "node7", "sample42": a location in a column's name. */
void hb_location_label(const hb_location_t *where, char *out, size_t size);

/* Cell `cell`'s `variable` at `where` (NULL: the soma; not read for a synapse's variable) as a
 * sample of the simulation's layout; a message saying what the cell lacks when it cannot. */
hb_status_t hb_sim_record_resolve(hb_sim_t *sim, int cell, const hb_location_t *where,
                                  const char *variable, hb_rec_sample_t *out);
/* The values recorded from now on: n samples (copied; 0: none) every `every` steps, from
 * t = 0 (hb_sim_init records row 0). Replaces those set before. */
hb_status_t hb_sim_set_records(hb_sim_t *sim, int n, const hb_rec_sample_t *records, long every);
/* The rows recorded since hb_sim_init or hb_sim_recorded_clear: rows x n values (row-major),
 * row r taken after steps[r] steps; valid until the simulation advances or is cleared. */
void hb_sim_recorded(const hb_sim_t *sim, size_t *rows, const long **steps, const double **values);
void hb_sim_recorded_clear(hb_sim_t *sim);

#endif
