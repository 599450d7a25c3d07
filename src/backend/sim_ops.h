/*
 * The simulator's seam (backend/backend.h): what src/sim/ needs of a backend to step cells.
 * src/sim/ lays the cells out (groups of one matrix shape, Block-Interleaved, the step's
 * hb_step_group_t of common/sim_step.h), sets the initial state, and keeps what was recorded;
 * a backend's engine holds the state and runs the fused step (common/sim_step.h) and the
 * probes (spike tests, samples). The CPU engine steps the host arrays of the description in
 * place; the CUDA engine copies them to the device and keeps the state there.
 */
#ifndef HB_BACKEND_SIM_OPS_H
#define HB_BACKEND_SIM_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "backend/backend.h"
#include "common/event_order.h"
#include "common/record_value.h"
#include "common/self_events.h"
#include "common/sim_step.h"
#include "hinesbatch.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A synapse as events reach it (a target): site `site` of group `group`, its state's first
 * value at element `state` of the group's syn_state and its second `stride` after
 * (hb_syn_receive). src/sim numbers the targets cell by cell, synapse by synapse. A catalogue
 * point process (point > 0; engines with hb_sim_ops.points): instance `inst` of the group's
 * catalogue mechanism point - 1 in slot `slot`'s block (common/cat_step.h, hb_cat_point_event;
 * the GPU's by index, common/cat_fused.h).
 */
typedef struct {
    int group, site;
    size_t state, stride;
    int point, slot, inst;
} hb_sim_target_t;

/*
 * An event: at the start of step `step` (steps done before it), before that step's update,
 * its weight is added to its target's state. Events of one step at one target are added in
 * the order of (time, weight): the same sums on every backend.
 */
typedef struct {
    long step;
    int target;
    int weights;   /* a catalogue point process's connection: its weight vector's index among
                      the simulation's (hb_sim_add_weights); -1: none */
    double time;   /* [ms]: the spike's time plus the delay */
    double weight; /* [uS] */
} hb_sim_engine_event_t;

/* A connection as an engine expands spikes through it (expand_spikes). */
typedef struct {
    uint32_t source; /* gid */
    int target;
    int weights;   /* a point process's connection: its weight vector (as the event's) */
    double weight; /* [uS] */
    double delay;  /* [ms] */
} hb_sim_engine_conn_t;

/*
 * A simulation as an engine is made from. The groups' host arrays and the table are borrowed
 * for the engine's life (the CPU steps v and hh_state in place); the rest is copied at create.
 */
typedef struct {
    int n_groups;
    const hb_step_group_t *groups; /* host arrays, width from block_width (d, rhs unused) */
    const double *table;           /* hh table (6 * HB_HH_TABLE_STRIDE) or NULL: formulas */
    double q10, dt, factor;        /* as hb_step_params_t; dt [ms] */
    int n_probes;
    const int *probe_group;        /* per probe: group */
    const size_t *probe_index;     /* per probe: element of the group's v */
    const unsigned char *probe_detect;
    const double *probe_threshold; /* [mV] */
    int interpolate;               /* spike times interpolated within the step */
    long sample_every;             /* record every this many steps */
    long check_every;              /* check the voltages after every step that is a multiple
                                      of this (HB_SIM_CHECK_STEPS) */
    long check_last;               /* and after this step (the run's last, at t_stop) */
    int n_targets;
    const hb_sim_target_t *targets; /* the synapses events reach */
    /* The connections' weight vectors of catalogue point processes (HB_CAT_MAX_WEIGHT doubles
     * each, vector i at (*weights)[i HB_CAT_MAX_WEIGHT]): the simulation's, which grows while a
     * network is built, so borrowed by address. */
    double *const *weights;
    const int *n_weights;           /* their number, borrowed by address too */
    /* FOR_NETCONS: per target its first vector and per vector the target's next (-1: none),
     * the connections in the order added (hb_cat_netcons_t), borrowed by address too */
    int *const *netcon_head;
    int *const *netcon_next;
    /* The self-events of point processes that send them (net_send, common/self_events.h): the
     * simulation's queue, which hb_sim_init fills; engines without self-events ignore it. */
    hb_self_queue_t *self_events;
    int device;                     /* the context's device to run on (GPUs) */
} hb_sim_desc_t;

/* The first non-finite voltage a check found: the check's step (steps done), the group, and
 * the cell's slot in the group and its node (the smallest slot, then node, of the group with
 * the smallest index), or a mechanism's refusal (what). Lanes past the group's cells (padding)
 * are never reported. */
typedef struct {
    long step;
    int group, slot, node;
    /* "" for a voltage; else a point process's refusal that stopped the step (a generated FROM
     * loop's trip count, docs/nmodl.md section 4; endless 1: its self-events past
     * HB_SELF_STEP_MAX, docs/mechanisms.md section 10), the message's start, at that cell's
     * target `target` (the simulation's) */
    char what[256];
    int target, endless;
} hb_sim_fault_t;

/*
 * What the engine recorded over a chunk of steps: n_samples rows of n_probes voltages [mV]
 * (row r taken after step sample_step[r]), and per probe spike_count[p] spike times [ms],
 * spike c of probe p at spikes[c * n_probes + p]. A chunk with nothing may be skipped.
 */
typedef hb_status_t (*hb_sim_sink_t)(void *user, int n_samples, const long *sample_step,
                                     const double *samples, const int *spike_count,
                                     const double *spikes);

/*
 * Recorded values (set_records): n_rows rows of the records' values, row r taken after step
 * step[r] (steps done), values[r * n + k] record k's. Called chunk by chunk, in step order.
 */
typedef hb_status_t (*hb_sim_record_sink_t)(void *user, int n_rows, const long *step,
                                            const double *values);

enum { HB_SIM_CAT_NONE = 0, HB_SIM_CAT_ALL = 1, HB_SIM_CAT_BUILTIN = 2 };

struct hb_sim_ops {
    /* 1: the engine steps the description's host v and hh_state in place (CPU); 0: it keeps
     * its own copy (CUDA), and the host arrays are stale after set_state. */
    int steps_in_place;
    /* 1: the step runs the groups' synapses (syn_start, syns, syn_state), events reach them
     * through queue_events; 0: cells with synapses are refused. */
    int synapses;
    /* The groups' catalogue mechanisms (hb_step_group_t.cat, common/cat_step.h) the step runs:
     * HB_SIM_CAT_ALL (through the catalogues' function pointers: the CPU), HB_SIM_CAT_BUILTIN
     * (the built-in catalogues' kernels by index, common/cat_fused.h: the GPU's fused step, and
     * users' mechanisms through their CUDA launchers, hb_cat_mech_t.cuda, the split step) or
     * HB_SIM_CAT_NONE; a model with another is refused (HB_ERR_NOT_SUPPORTED). */
    int catalogue;
    /* 1: and catalogue point processes (targets with point > 0, NET_RECEIVE through
     * hb_cat_point_event); 0: a model with one is refused (HB_ERR_NOT_SUPPORTED). */
    int points;
    /* Lanes per layout block for a group of `count` cells on the context's backend (the step's
     * vector or warp width; the CPU's narrower where wide blocks would leave threads idle). */
    int (*block_width)(const hb_context_t *ctx, int count);
    /* Lanes per block of a mixed group (hb_step_group_t.mixed: the cells that would each be a
     * group of one, packed together); 0: no mixed groups, each such cell a group of its own. */
    int mixed_width;
    /* 1: a group of `count` copies of one shape of `rows` rows steps in the mixed group
     * instead, as cells of their own shape (the engine's rule; the context's tuning
     * sim.mixed_copies overrides it). Where the mixed group steps a cell with more parallelism
     * than a group of copies (the GPU: a warp a cell, against a thread a cell), copies too
     * few to fill the device go there. Same bits either way. */
    int (*mixed_copies)(int count, int rows);
    /* Device memory the engine took [bytes] (NULL: none, the CPU's). */
    size_t (*device_bytes)(const void *engine);
    /* Groups whose steps end fused now (the CPU's cat_fused_end; NULL: never, the GPU's). */
    int (*fused_groups)(const void *engine);
    /* An engine for `desc` on the context's backend (threads, device); errors recorded. */
    hb_status_t (*create)(hb_context_t *ctx, const hb_sim_desc_t *desc, void **engine);
    void (*destroy)(void *engine);
    /* State of group g from host arrays in the group's layout: v [mV] and hh states; the
     * synapse states from the description's group (its syn_state, borrowed). */
    hb_status_t (*set_state)(void *engine, int g, const double *v, const double *hh_state);
    /* Probe state: above threshold, v [mV] after the last step. */
    hb_status_t (*set_probes)(void *engine, const unsigned char *above, const double *v_prev);
    /* The same back to the host (checkpoints); NULL where the backend has none (CUDA). */
    hb_status_t (*get_probes)(void *engine, unsigned char *above, double *v_prev);
    /* Events for the coming advances, ordered by step, then target (copied): they replace
     * any still queued, and each advance delivers those of its steps, each at the start of
     * its step. */
    hb_status_t (*queue_events)(void *engine, size_t n, const hb_sim_engine_event_t *events);
    /*
     * Events made by the engine itself (NULL where the network makes them on the host, CPU):
     * the connections (sorted by source) through which add_spikes expands spikes into events
     * of steps before step_limit; events added as they are (add_events); and queue_due, which
     * makes the waiting events of the steps before step_end the queue (as queue_events), in
     * its order. clear_events drops every waiting event (a new run, after hb_sim_init's
     * set_state: it also takes the weight vectors of point processes as hb_sim_init left them).
     */
    hb_status_t (*set_connections)(void *engine, size_t n, const hb_sim_engine_conn_t *conns,
                                   long step_limit);
    hb_status_t (*add_spikes)(void *engine, size_t n, const hb_spike_t *spikes);
    hb_status_t (*add_events)(void *engine, size_t n, const hb_sim_engine_event_t *events);
    hb_status_t (*queue_due)(void *engine, long step_begin, long step_end);
    hb_status_t (*clear_events)(void *engine);
    /* Steps step0 + 1 .. step0 + steps (step0: steps done so far); the sink gets the
     * recordings chunk by chunk, in step order. Returns when the last chunk is delivered.
     * After each step that is a multiple of check_every, and after step check_last, the
     * voltages are checked: at a NaN or
     * infinity it fills *fault and returns HB_ERR_NONFINITE (no message) once the sink has
     * had the recordings up to and including that step, and none after it. */
    hb_status_t (*advance)(void *engine, long step0, long steps, hb_sim_sink_t sink, void *user,
                           hb_sim_fault_t *fault);
    /*
     * Values recorded after every step that is a multiple of `every` (n records, copied;
     * replacing any set before; n = 0: none, and the step pays nothing): each such step's row,
     * hb_rec_value of every record, to `sink` (with `user`) in the advances that follow, as the
     * probes' samples go to theirs (at a fault: the rows up to its step).
     */
    hb_status_t (*set_records)(void *engine, int n, const hb_rec_sample_t *records, long every,
                               hb_sim_record_sink_t sink, void *user);
    /* count elements of group g's v from element `first`, to host `dst`. */
    hb_status_t (*get_v)(void *engine, int g, size_t first, size_t count, double *dst);
    /*
     * The fused step's Hines solve alone (hb_sim_solve_benchmark, src/sim/sim.h): `cells`
     * copies of one matrix (d, rhs: m each; u, l shared), seconds[r] of `repeats` solves after
     * a warm-up. NULL where the backend has none (CUDA).
     */
    hb_status_t (*solve_benchmark)(int m, const int *parent, const double *u, const double *l,
                                   const double *d, const double *rhs, int cells, int in_cache,
                                   int repeats, double *seconds);
};

extern const struct hb_sim_ops hb_cpu_sim_ops;
extern const struct hb_sim_ops hb_cuda_sim_ops;

#ifdef __cplusplus
}
#endif
#endif
