/*
 * A network's events on the GPU (src/cuda/sim_events.cu), for the simulator's GPU engine
 * (sim_cuda.cu): the connections kept on the device, sorted by source; each epoch's
 * exchanged spikes copied once and expanded through them into events; the events of the
 * coming epoch selected and ordered by (step, target) on the device, and delivered at the
 * start of each step by a kernel that adds each target's events in (time, weight) order
 * (common/event_order.h; at a point process then its connections' order): the CPU's sums and
 * NET_RECEIVE calls, bit for bit. Only spikes cross PCIe, and per epoch
 * the step offsets of its events (a few hundred bytes). Plain C interface, no CUDA headers.
 */
#ifndef HB_CUDA_SIM_EVENTS_CUDA_H
#define HB_CUDA_SIM_EVENTS_CUDA_H

#include <stddef.h>

#include "backend/sim_ops.h"
#include "common/mech_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hb_cuda_events hb_cuda_events_t;

/* Events of `n_targets` synapses (host table, copied) whose sites and states are the groups'
 * (device arrays of the groups' device pointers, borrowed), and whose point processes are
 * the groups' catalogue mechanisms (`groups`: a device array of the groups with device
 * pointers, borrowed), on `stream` (a cudaStream_t). */
hb_status_t hb_cuda_events_create(void *stream, int n_targets, const hb_sim_target_t *targets,
                                  hb_syn_site_t *const *group_syns, double *const *group_state,
                                  const hb_step_group_t *groups, double dt,
                                  hb_cuda_events_t **out);
void hb_cuda_events_destroy(hb_cuda_events_t *ev);
/* backend/sim_ops.h's queue_events, set_connections, add_spikes, add_events, queue_due and
 * clear_events. */
hb_status_t hb_cuda_events_queue(hb_cuda_events_t *ev, size_t n, const hb_sim_engine_event_t *events);
hb_status_t hb_cuda_events_set_connections(hb_cuda_events_t *ev, size_t n,
                                           const hb_sim_engine_conn_t *conns, long step_limit);
hb_status_t hb_cuda_events_add_spikes(hb_cuda_events_t *ev, size_t n, const hb_spike_t *spikes);
hb_status_t hb_cuda_events_add(hb_cuda_events_t *ev, size_t n, const hb_sim_engine_event_t *events);
hb_status_t hb_cuda_events_due(hb_cuda_events_t *ev, long step_begin, long step_end);
hb_status_t hb_cuda_events_clear(hb_cuda_events_t *ev);
/* The connections' weight vectors of point processes (n of HB_CAT_MAX_WEIGHT doubles, host,
 * copied): the device's from now on, which NET_RECEIVE updates (hb_sim_init's, at a run's
 * start). */
hb_status_t hb_cuda_events_set_weights(hb_cuda_events_t *ev, size_t n, const double *weights);
/* The simulation's user catalogues' point processes (hb_step_cat_mech_t.user_key k: mechs[k],
 * host descriptors, borrowed): their events go to their catalogues' NET_RECEIVE launchers. */
hb_status_t hb_cuda_events_set_user_points(hb_cuda_events_t *ev, int n,
                                           const hb_cat_mech_t *const *mechs);
/* Point processes that send themselves events (docs/mechanisms.md, section 10): queue the
 * simulation's self-event queue (host, borrowed), key[target] the target's user point process
 * number (set_user_points') where its mechanism sends them, else -1 (n_targets, copied). Their
 * events, and the self-events due, are delivered in the CPU engine's order by hb_cuda_events_deliver
 * (host-driven rounds of their catalogues' net_receive_self launchers); a mechanism without the
 * launchers is refused by name. */
hb_status_t hb_cuda_events_set_self(hb_cuda_events_t *ev, hb_self_queue_t *queue, const int *key);
/* FOR_NETCONS of those mechanisms (hb_cat_mech_t.for_netcons): per target its first connection's
 * vector (n_targets) and per vector (n) the target's next, -1 ending a list (host, copied; the
 * simulation's, hb_sim_init's: with set_weights). */
hb_status_t hb_cuda_events_set_netcons(hb_cuda_events_t *ev, size_t n, const int *head,
                                       const int *next);
/* After a step ending at t [ms]: the WATCH checks of every such target, their crossings queued
 * (the CPU engine's check_watches). */
hb_status_t hb_cuda_events_watch(hb_cuda_events_t *ev, double t);
/* Launches the delivery of the queued events of step `step` (steps done before it), if any
 * (users' point processes: their catalogues' kernels after it, on the same stream). */
hb_status_t hb_cuda_events_deliver(hb_cuda_events_t *ev, long step);

#ifdef __cplusplus
}
#endif
#endif
