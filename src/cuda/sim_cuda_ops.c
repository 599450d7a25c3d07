/* The CUDA backend's simulator engine (backend/sim_ops.h) over src/cuda/sim_cuda.cu. */
#include "backend/sim_ops.h"
#include "cuda/sim_cuda.h"
#include "cuda/sim_events_cuda.h"

/* A warp per layout block: every access of a warp is one contiguous row. */
static int cuda_block_width(int count)
{
    (void)count;
    return HB_SIM_GPU_LANES;
}

/* Copies of one shape step a thread a cell in a group of their own (step_kernel: coalesced,
 * constants once a row) or a warp a cell in the mixed group (tree_step_kernel). A thread a
 * cell walks every row in turn, so with few cells the step is the latency of the largest
 * cell's rows, one after the other: a warp a cell wins until the copies are enough to keep
 * the device's warps busy (docs/sim-engine.md, "Copies on the GPU": measured on the H200). */
enum { MIXED_COPIES_MAX = 65536, MIXED_COPIES_ROWS = 32 };

static int cuda_mixed_copies(int count, int rows)
{
    return count <= MIXED_COPIES_MAX && rows >= MIXED_COPIES_ROWS;
}

static hb_status_t cuda_create(hb_context_t *ctx, const hb_sim_desc_t *desc, void **engine)
{
    hb_cuda_sim_t *s = NULL;
    hb_status_t status =
        hb_cuda_sim_create(ctx ? (hb_cuda_context_t *)ctx->device : NULL, desc, &s);
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
    return hb_cuda_events_set_connections(hb_cuda_sim_events((hb_cuda_sim_t *)engine), n, conns,
                                          step_limit);
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
    return hb_cuda_events_clear(hb_cuda_sim_events((hb_cuda_sim_t *)engine));
}

static hb_status_t cuda_advance(void *engine, long step0, long steps, hb_sim_sink_t sink,
                                void *user, hb_sim_fault_t *fault)
{
    return hb_cuda_sim_advance((hb_cuda_sim_t *)engine, step0, steps, sink, user, fault);
}

static hb_status_t cuda_get_v(void *engine, int g, size_t first, size_t count, double *dst)
{
    return hb_cuda_sim_get_v((hb_cuda_sim_t *)engine, g, first, count, dst);
}

const struct hb_sim_ops hb_cuda_sim_ops = {
    .steps_in_place = 0,
    .synapses = 1,
    .block_width = cuda_block_width,
    .mixed_width = 1, /* a cell's rows contiguous: a warp steps them (tree_step_kernel) */
    .mixed_copies = cuda_mixed_copies,
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
    .get_v = cuda_get_v,
    .solve_benchmark = NULL,
};
