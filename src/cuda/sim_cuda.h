/*
 * The simulator's GPU engine as src/sim/sim.c sees it: plain C, no CUDA
 * headers. Implemented in src/cuda/sim_cuda.cu; compiled when HB_HAVE_CUDA is
 * defined. Device 0 of the context; the state lives on the device, every step
 * is device kernels only, and the host sees results a chunk of steps at a time.
 */
#ifndef HB_CUDA_SIM_CUDA_H
#define HB_CUDA_SIM_CUDA_H

#include <stddef.h>

#include "cuda/backend_cuda.h"
#include "common/sim_step.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hb_cuda_sim hb_cuda_sim_t;

typedef struct {
    int n_groups;
    const hb_step_group_t *groups; /* host arrays, width HB_SIM_GPU_LANES (d, rhs unused) */
    const double *table;           /* hh table (6 * HB_HH_TABLE_STRIDE) or NULL: formulas */
    double q10, dt, factor;        /* as hb_step_params_t */
    int n_probes;
    const int *probe_group;        /* per probe: group */
    const size_t *probe_index;     /* per probe: element of the group's v */
    const unsigned char *probe_detect;
    const double *probe_threshold; /* [mV] */
    int interpolate;               /* spike times interpolated within the step */
    long sample_every;             /* record every this many steps */
} hb_cuda_sim_desc_t;

/* Copies the constants to the device and allocates the state (OOM: HB_ERR_ALLOC). */
hb_status_t hb_cuda_sim_create(hb_cuda_context_t *ctx, const hb_cuda_sim_desc_t *desc,
                               hb_cuda_sim_t **out);
void hb_cuda_sim_destroy(hb_cuda_sim_t *sim);
/* State of group g from the host: v and hh states (the group's layout). */
hb_status_t hb_cuda_sim_set_state(hb_cuda_sim_t *sim, int g, const double *v,
                                  const double *hh_state);
/* Probe state: above threshold, v after the last step. */
hb_status_t hb_cuda_sim_set_probes(hb_cuda_sim_t *sim, const unsigned char *above,
                                   const double *v_prev);

/*
 * What the device recorded over a chunk of steps: n_samples rows of n_probes
 * voltages (row r taken after step sample_step[r]), and per probe
 * spike_count[p] spike times, spike c of probe p at spikes[c * n_probes + p].
 */
typedef hb_status_t (*hb_cuda_sim_sink_t)(void *user, int n_samples, const long *sample_step,
                                          const double *samples, const int *spike_count,
                                          const double *spikes);

/* Steps step0 + 1 .. step0 + steps (step0: steps done so far); the sink gets
 * each chunk's results. Returns when the last chunk is delivered. */
hb_status_t hb_cuda_sim_advance(hb_cuda_sim_t *sim, long step0, long steps,
                                hb_cuda_sim_sink_t sink, void *user);
/* count elements of group g's v from element `first`, to host `dst`. */
hb_status_t hb_cuda_sim_get_v(hb_cuda_sim_t *sim, int g, size_t first, size_t count,
                              double *dst);

#ifdef __cplusplus
}
#endif
#endif
