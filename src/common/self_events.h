/*
 * Self-events of point processes (NEURON's net_send and net_move; docs/mechanisms.md, section
 * 10): one queue per engine (the CPU's: a rank's, every thread's cells), ordered by (step,
 * target, time, sequence), cleared by hb_sim_init and filled by the INITIAL and NET_RECEIVE
 * kernels' requests (mech_abi.h, hb_cat_sends_t). An event is delivered at the start of the
 * step whose interval holds its time, as the network's (hb_event_step), merged with them
 * target by target in time order (a network event before a self-event of the same time).
 * Host code.
 */
#ifndef HB_COMMON_SELF_EVENTS_H
#define HB_COMMON_SELF_EVENTS_H

#include <stddef.h>

#include "common/mech_abi.h"
#include "common/status.h"

#ifdef __cplusplus /* the CUDA engine calls them */
extern "C" {
#endif

typedef struct {
    long step;     /* delivered at the start of this step (steps done before it) */
    int target;    /* the simulation's target (cell, synapse) */
    int weights;   /* the weight vector of the event whose NET_RECEIVE sent it (NEURON's
                    * _args); -1: a vector of its own, (weight, 0, ...) */
    double time;   /* [ms] */
    double flag;
    double weight; /* weights -1: its vector's first value (0: sent by INITIAL) */
    long seq;      /* the order of sending: ties of (step, target, time) */
    int movable;   /* 1: the target's last flag-1 event, which net_move moves */
} hb_self_event_t;

/* A point process's net_event: a spike of target `target` at `time` [ms]. */
typedef struct {
    int target;
    double time; /* [ms] */
} hb_self_spike_t;

typedef struct {
    hb_self_event_t *heap; /* a binary heap on (step, target, time, seq) */
    size_t n, cap;
    long seq;
    /* net_event's spikes in the order they were sent, kept where keep_spikes is 1 (a network
     * with point processes as spike sources takes them after each advance, hb_sim_point_spikes);
     * else dropped */
    hb_self_spike_t *spikes;
    size_t n_spikes, cap_spikes;
    int keep_spikes;
} hb_self_queue_t;

/* Self-events one target may be delivered in one step (at initialisation: at t = 0) before the
 * run is refused: a NET_RECEIVE that sends itself an event of no delay on every event would
 * never end (NEURON loops for ever), as an unbounded FROM loop (HB_CAT_FROM_MAX). */
#define HB_SELF_STEP_MAX 100000

/* That refusal as text: mechanism `mech` at time t [ms], the bound, what was expected. */
void hb_self_endless_text(const char *mech, double t, char *text, size_t size);

/* Drops every event and spike (keeps the memory). */
void hb_self_clear(hb_self_queue_t *q);
void hb_self_free(hb_self_queue_t *q);
/* 1 and *e the first event when it is due at step `step` or before, else 0. */
int hb_self_due(const hb_self_queue_t *q, long step, hb_self_event_t *e);
/* Queues e as it is (a checkpoint's event: its step, sequence and movable kept). */
hb_status_t hb_self_push(hb_self_queue_t *q, const hb_self_event_t *e);
/* Removes the first event. */
void hb_self_pop(hb_self_queue_t *q);
/* Keys every event at time `t` or before to step `step` (before theirs: hb_sim_init's step -1
 * of the events at t = 0), in the queue's order; returns how many it keyed. */
size_t hb_self_restep(hb_self_queue_t *q, double t, long step);
/* Target `target`'s requests of one kernel call at time now [ms] (its event's, 0 at INITIAL):
 * net_send queued at its time (a time before now refused, as NEURON's "net_send td-t < 0"),
 * net_move moving the target's waiting flag-1 event (none: refused, as NEURON's "No event with
 * flag=1 for net_move"); net_event's spike kept (q->keep_spikes) at its time, which must be
 * now (NEURON's net_event(t)). weights and weight as the queued events carry them; mech names the
 * mechanism in messages. */
hb_status_t hb_self_requests(hb_self_queue_t *q, int target, int weights, double weight,
                             const hb_cat_sends_t *sends, double now, double dt,
                             const char *mech);
/* After popping e: where e's flag is 1, no waiting event of its target is movable any more
 * (NEURON clears _tqitem as it delivers a flag-1 event). */
void hb_self_delivered(hb_self_queue_t *q, const hb_self_event_t *e);

/* One event for a NET_RECEIVE that sends itself events, as an engine that delivers them in
 * rounds runs it (hb_self_rounds): at target `target` at `time` [ms] with `flag` (0: a
 * connection's), carrying weight vector `weights` (-1: one of its own, (weight, 0, ...), and
 * `init` 1: a connectionless network event's, NET_RECEIVE's INITIAL run on it first). */
typedef struct {
    int target;
    int weights;
    int init;
    double time; /* [ms] */
    double weight;
    double flag;
} hb_self_call_t;

/* What hb_self_rounds runs a round's calls with: run(user, n, calls, sends) runs NET_RECEIVE of
 * each call (distinct targets, any order), call c's requests into sends[c]; mech(user, target)
 * names the target's mechanism in messages. */
typedef struct {
    hb_status_t (*run)(void *user, int n, const hb_self_call_t *calls, hb_cat_sends_t *sends);
    const char *(*mech)(void *user, int target);
    void *user;
    double dt; /* [ms] */
} hb_self_runner_t;

/* hb_self_rounds' buffers (zeroed before the first use; hb_self_scratch_free). */
typedef struct {
    hb_self_event_t *due;
    hb_self_call_t *calls;
    hb_cat_sends_t *sends;
    size_t *group;
    size_t cap_due, cap_calls, cap_group;
    /* each target's self-events so far in the step (HB_SELF_STEP_MAX): the last round's
     * targets, ascending, and this round's */
    int *count_target[2];
    long *count[2];
    size_t n_count, cap_count[2];
} hb_self_scratch_t;
void hb_self_scratch_free(hb_self_scratch_t *s);

/* The events of step `step` at targets of mechanisms that send themselves events, delivered
 * in the CPU engine's order by rounds (the GPU's way: each round one batch of calls): net[n_net]
 * the step's network events at such targets (flag 0), ordered by target and within one in the
 * delivery's order; each round takes every target's next event (its next network event where
 * its time is at or before the first due self-event's, else that self-event, popped and
 * hb_self_delivered), runs them, queues their requests, until no target has one. A self-event
 * sent into the step comes in a later round of it, as the CPU engine's merge delivers it. The
 * per-target order, and so every target's calls, equal the CPU engine's; only the queue's
 * sequence numbers across targets differ (they order a target's events alone). A target given
 * more than HB_SELF_STEP_MAX self-events in the step is refused (hb_self_endless_text), as the
 * CPU engine refuses it. */
hb_status_t hb_self_rounds(hb_self_queue_t *q, long step, const hb_self_call_t *net, size_t n_net,
                           const hb_self_runner_t *runner, hb_self_scratch_t *scratch);

#ifdef __cplusplus
}
#endif

#endif
