/*
 * The simulator's GPU engine in plain C, no CUDA headers: implemented in
 * src/cuda/sim_cuda.cu, handed to src/sim/ as hb_cuda_sim_ops (src/cuda/sim_cuda_ops.c,
 * backend/sim_ops.h). Device 0 of the context; the state lives on the device, every
 * step is device kernels only, and the host sees results a chunk of steps at a time.
 */
#ifndef HB_CUDA_SIM_CUDA_H
#define HB_CUDA_SIM_CUDA_H

#include <stddef.h>

#include "backend/sim_ops.h"
#include "cuda/backend_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hb_cuda_sim hb_cuda_sim_t;

/* Copies the constants to the device and allocates the state (OOM: HB_ERR_ALLOC). */
/* tree_tile: the tuning's sim.tree_tile (lanes a cell of a mixed group; -1: the rule). */
hb_status_t hb_cuda_sim_create(hb_cuda_context_t *ctx, const hb_sim_desc_t *desc, int tree_tile,
                               hb_cuda_sim_t **out);
void hb_cuda_sim_destroy(hb_cuda_sim_t *sim);
/* State of group g from the host: v and hh states (the group's layout). */
hb_status_t hb_cuda_sim_set_state(hb_cuda_sim_t *sim, int g, const double *v,
                                  const double *hh_state);
/* Probe state: above threshold, v after the last step. */
hb_status_t hb_cuda_sim_set_probes(hb_cuda_sim_t *sim, const unsigned char *above,
                                   const double *v_prev);

/* Its network events (sim_events_cuda.h), delivered at the start of each step. */
struct hb_cuda_events;
struct hb_cuda_events *hb_cuda_sim_events(hb_cuda_sim_t *sim);
/* The network's connections (hb_cuda_events_set_connections), their device memory counted. */
hb_status_t hb_cuda_sim_set_connections(hb_cuda_sim_t *sim, size_t n,
                                        const hb_sim_engine_conn_t *conns, long step_limit);
/* A new run (backend/sim_ops.h, clear_events): no waiting events, and the point processes'
 * weight vectors as hb_sim_init left them on the host (the description's) to the device. */
hb_status_t hb_cuda_sim_clear_events(hb_cuda_sim_t *sim);
/* Device memory the engine took: at create and for the connections [bytes]. */
size_t hb_cuda_sim_device_bytes(const hb_cuda_sim_t *sim);

/* Steps step0 + 1 .. step0 + steps (step0: steps done so far); the sink gets
 * each chunk's results. Returns when the last chunk is delivered, or at a
 * non-finite voltage HB_ERR_NONFINITE with *fault (backend/sim_ops.h). */
hb_status_t hb_cuda_sim_advance(hb_cuda_sim_t *sim, long step0, long steps,
                                hb_sim_sink_t sink, void *user, hb_sim_fault_t *fault);
/* Values recorded every `every` steps (backend/sim_ops.h, set_records). */
hb_status_t hb_cuda_sim_set_records(hb_cuda_sim_t *sim, int n, const hb_rec_sample_t *records,
                                    long every, hb_sim_record_sink_t sink, void *user);
/* count elements of group g's v from element `first`, to host `dst`. */
hb_status_t hb_cuda_sim_get_v(hb_cuda_sim_t *sim, int g, size_t first, size_t count,
                              double *dst);

#ifdef __cplusplus
}
#endif
#endif
