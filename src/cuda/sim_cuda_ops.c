/* The CUDA backend's simulator engine (backend/sim_ops.h) over src/cuda/sim_cuda.cu. */
#include "backend/sim_ops.h"
#include "cuda/sim_cuda.h"
#include "cuda/sim_events_cuda.h"

/* A warp per layout block: every access of a warp is one contiguous row. */
static int cuda_block_width(const hb_context_t *ctx, int count)
{
    (void)ctx;
    (void)count;
    return HB_SIM_GPU_LANES;
}

/*
 * Copies of one shape step a thread a cell in a group of their own (step_kernel: coalesced,
 * constants once a row) or a warp a cell in the mixed group (tree_step_kernel, constants once
 * a model). A thread walks its cell's rows in turn: until the copies fill the device, a step
 * takes about 5.3 us a row whatever their count (the latency of one thread's rows); a warp a
 * cell streams them at about 0.07 + 25 / rows ns a row and cell (small cells leave lanes
 * idle). So copies go to the mixed group while count (0.07 + 25 / rows) ns < 5.3 us.
 * Calibrated on an H200 (docs/sim-engine.md, "Copies on the GPU"): HSN-fluoro01 (456 rows)
 * 32,768 copies mixed 0.92 s against 1.17 s, 131,072 copies 3.26 s against 2.77 s; a
 * 139-row cell 65,536 copies 0.94 s against 0.28 s; ball and stick (8 rows) 8,192 copies
 * 0.020 s against 0.009 s.
 */
static int cuda_mixed_copies(int count, int rows)
{
    return rows > 0 && (double)count * (70.0 + 25000.0 / (double)rows) < 5.3e6; /* [ps] */
}

static hb_status_t cuda_create(hb_context_t *ctx, const hb_sim_desc_t *desc, void **engine)
{
    hb_cuda_sim_t *s = NULL;
    hb_status_t status =
        hb_cuda_sim_create(ctx ? (hb_cuda_context_t *)ctx->device : NULL, desc,
                           ctx ? ctx->tuning.sim_tree_tile : -1, &s);
    *engine = s;
    return status;
}

static void cuda_destroy(void *engine) { hb_cuda_sim_destroy((hb_cuda_sim_t *)engine); }

static hb_status_t cuda_set_state(void *engine, int g, const double *v, const double *hh_state)
{
    return hb_cuda_sim_set_state((hb_cuda_sim_t *)engine, g, v, hh_state);
}

static hb_status_t cuda_set_probes(void *engine, const unsigned char *above, const double *v_prev)
{
    return hb_cuda_sim_set_probes((hb_cuda_sim_t *)engine, above, v_prev);
}

static hb_status_t cuda_queue_events(void *engine, size_t n, const hb_sim_engine_event_t *events)
{
    return hb_cuda_events_queue(hb_cuda_sim_events((hb_cuda_sim_t *)engine), n, events);
}

static hb_status_t cuda_set_connections(void *engine, size_t n, const hb_sim_engine_conn_t *conns,
                                        long step_limit)
{
    return hb_cuda_sim_set_connections((hb_cuda_sim_t *)engine, n, conns, step_limit);
}

static size_t cuda_device_bytes(const void *engine)
{
    return hb_cuda_sim_device_bytes((const hb_cuda_sim_t *)engine);
}

static hb_status_t cuda_add_spikes(void *engine, size_t n, const hb_spike_t *spikes)
{
    return hb_cuda_events_add_spikes(hb_cuda_sim_events((hb_cuda_sim_t *)engine), n, spikes);
}

static hb_status_t cuda_add_events(void *engine, size_t n, const hb_sim_engine_event_t *events)
{
    return hb_cuda_events_add(hb_cuda_sim_events((hb_cuda_sim_t *)engine), n, events);
}

static hb_status_t cuda_queue_due(void *engine, long step_begin, long step_end)
{
    return hb_cuda_events_due(hb_cuda_sim_events((hb_cuda_sim_t *)engine), step_begin, step_end);
}

static hb_status_t cuda_clear_events(void *engine)
{
    return hb_cuda_sim_clear_events((hb_cuda_sim_t *)engine);
}

static hb_status_t cuda_advance(void *engine, long step0, long steps, hb_sim_sink_t sink,
                                void *user, hb_sim_fault_t *fault)
{
    return hb_cuda_sim_advance((hb_cuda_sim_t *)engine, step0, steps, sink, user, fault);
}

static hb_status_t cuda_set_records(void *engine, int n, const hb_rec_sample_t *records,
                                   long every, hb_sim_record_sink_t sink, void *user)
{
    return hb_cuda_sim_set_records((hb_cuda_sim_t *)engine, n, records, every, sink, user);
}

static hb_status_t cuda_get_v(void *engine, int g, size_t first, size_t count, double *dst)
{
    return hb_cuda_sim_get_v((hb_cuda_sim_t *)engine, g, first, count, dst);
}

const struct hb_sim_ops hb_cuda_sim_ops = {
    .steps_in_place = 0,
    .synapses = 1,
    .catalogue = HB_SIM_CAT_BUILTIN, /* by index in the fused kernels (common/cat_fused.h) */
    .points = 1, /* NET_RECEIVE by index in the event delivery (sim_events.cu) */
    .block_width = cuda_block_width,
    .mixed_width = 1, /* a cell's rows contiguous: a warp steps them (tree_step_kernel) */
    .mixed_copies = cuda_mixed_copies,
    .device_bytes = cuda_device_bytes,
    .create = cuda_create,
    .destroy = cuda_destroy,
    .set_state = cuda_set_state,
    .set_probes = cuda_set_probes,
    .queue_events = cuda_queue_events,
    .set_connections = cuda_set_connections,
    .add_spikes = cuda_add_spikes,
    .add_events = cuda_add_events,
    .queue_due = cuda_queue_due,
    .clear_events = cuda_clear_events,
    .advance = cuda_advance,
    .set_records = cuda_set_records,
    .get_v = cuda_get_v,
    .solve_benchmark = NULL,
};
