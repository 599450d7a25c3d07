/*
 * The simulator on the GPU: the whole time step in device kernels.
 *
 *   step_kernel   one thread per cell (lane) of a group of one shape: hb_step_lanes from
 *                 src/common/sim_step.h with lanes = 1, i.e. the CPU's fused step
 *                 (currents, assembly, Hines solve, v update, gates) for that cell.
 *                 Groups are Block-Interleaved with a warp's 32 cells per block, so
 *                 every access of a warp is one contiguous 256-byte row.
 *   step_cat_kernel  the same for a group with catalogue mechanisms: hb_step_lanes' passes
 *                 with the mechanisms' currents after the membrane's and their states after
 *                 the update of v (src/common/cat_fused.h: the CPU engine's step_block_cat).
 *                 Where a user catalogue's mechanism sits (its own CUDA kernels, launched
 *                 through its hb_cat_cuda_t), the step is split around it: the fused kernels
 *                 run the items between (hb_cat_fused_end), the user's kernel its item.
 *   tree_step_kernel  one warp per cell of a mixed group (cells of their own shapes, one
 *                 to a block): the same step in phases over the cell's rows and chains
 *                 (src/common/sim_tree.h), with catalogue mechanisms in phases of their own
 *                 (tree_step_kernel<1>).
 *   probe_kernel  one thread per probe: spike detection (hb_spike_test) and, on
 *                 sampling steps, the recorded voltage.
 *   record_kernel on recording steps (set_records), one thread per recorded value:
 *                 hb_rec_value (src/common/record_value.h) into the chunk's row.
 *   check_kernel  every check_every steps and at the run's last, one thread per
 *                 element of a group's v: the first NaN or infinity of the group's cells
 *                 (atomicMin of a key ordered by check, cell, node), read back with the
 *                 chunk's results.
 *
 * Per step the host only launches kernels (one per group, one for the probes) on
 * one stream; it copies results back once per chunk of steps. A chunk is short
 * enough that its sample rows and spikes fit the device buffers: a probe spikes
 * at most every other step, so chunk / 2 + 1 spike slots per probe can never
 * overflow. This file is compiled with -fmad=false (CMakeLists.txt): no FMA
 * contraction, so the GPU performs exactly the CPU's operations.
 */
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "common/status.h"
}
#include "cuda/cuda_check.h"
#include "cuda/sim_cuda.h"
#include "cuda/sim_events_cuda.h"
#include "common/sim_tree.h"
/* the mechanisms' dispatch out of line: one copy of every kernel of the built-in catalogues,
 * called by step_cat_kernel and tree_step_kernel<1>, not one inlined into each */
#define HB_CAT_DISPATCH_QUAL static __host__ __device__ __noinline__
#include "common/cat_fused.h"

#define STEP_THREADS 128 /* four warps: four layout blocks of 32 cells */
#define TREE_WARPS 4     /* tree_step_kernel: warps a thread block (a cell a warp or tile) */
#define TREE_MIN_BLOCKS 8 /* its blocks an SM at least: 64 registers a thread */
#define PROBE_THREADS 256
#define CHUNK_MAX 4096                      /* steps per chunk, at most */
#define CHUNK_BUDGET ((size_t)64 << 20)     /* bytes of sample rows + spike slots */
#define CHECK_SHIFT 52                      /* a fault key: check << 52 | slot * m + node */
#define NO_FAULT 0xffffffffffffffffULL

/* A group's catalogue mechanisms and ions on the device (common/cat_step.h's arrays). */
typedef struct {
    const hb_step_cat_t *host; /* the description's (set_state copies its state) */
    hb_step_cat_t *dev;        /* the step's: device pointers throughout */
    hb_step_cat_mech_t *mech;  /* host copies of the device mechanisms (device pointers) */
    hb_step_ion_t *ion;        /* host copies of the device ions (device pointers) */
    double ***tables;          /* per mechanism: its device tables (host array), or NULL */
    hb_cat_lane_t **lanes;     /* per mechanism: a user's, its views of every slot (device);
                                * a built-in's NULL */
    int n_lanes;               /* slots: blocks x width */
    int user;                  /* 1: some mechanism is a user's: the split step */
} dcat_t;

typedef struct {
    hb_step_group_t k; /* device pointers */
    dcat_t cat;        /* k.cat: catalogue mechanisms (host NULL: none) */
    hb_sim_tree_t tree; /* mixed groups: the plan of tree_step_kernel (device pointers) */
    size_t size;       /* elements of v, d, rhs, ... */
    size_t hh;         /* hh instances (slots x hh nodes) */
    size_t syn_values; /* elements of syn_state */
    const double *host_syn_state; /* the description's (set_state copies it) */
} dgroup_t;

struct hb_cuda_sim {
    int device; /* the CUDA device it runs on (set at every entry) */
    cudaStream_t stream;
    int stream_made;
    int n_groups;
    dgroup_t *groups;
    double *table; /* device, or NULL: formulas */
    double q10, dt, factor;
    int n_probes, interpolate;
    long sample_every, check_every, check_last;
    unsigned long long *fault; /* per group: the smallest fault key (NO_FAULT: none) */
    unsigned long long *h_fault;
    long *h_check_step;        /* per check of the chunk: its step (steps done) */
    double **group_v; /* device array of the groups' v */
    double **group_hh_state;        /* device array of the groups' hh states */
    double **group_syn_state;       /* device arrays of the groups' synapse states, sites */
    hb_syn_site_t **group_syns;
    hb_cuda_events_t *events;       /* the network's events (sim_events.cu) */
    hb_step_group_t *dev_groups;    /* device: the groups' k (point processes' events) */
    double *const *weights;         /* the description's weight vectors (host, borrowed) */
    const int *n_weights;
    int *const *netcon_head;        /* FOR_NETCONS' lists (host, borrowed by address) */
    int *const *netcon_next;
    int weights_on_device;          /* of them, uploaded at the last hb_sim_init */
    int *probe_group;
    size_t *probe_index;
    unsigned char *probe_detect, *above;
    double *probe_threshold, *v_prev;
    int chunk, spike_cap, sample_cap;
    double *rec;    /* sample_cap x n_probes */
    double *spk;    /* spike_cap x n_probes */
    int *spk_count; /* n_probes */
    double *h_rec, *h_spk;
    int *h_count;
    long *h_sample_step;
    /* set_records: n_records values every record_every steps, record_cap rows a chunk */
    int n_records, record_cap;
    long record_every;
    hb_rec_sample_t *records; /* device */
    double *rec_values;       /* device: record_cap x n_records */
    double *h_rec_values;
    long *h_record_step;
    hb_sim_record_sink_t record_sink;
    void *record_user;
    size_t device_bytes; /* device memory taken by create and the connections [bytes] */
    int tree_tile;       /* the tuning's sim.tree_tile (-1: the rule) */
};

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

__global__ void step_kernel(hb_step_group_t g, hb_step_params_t p)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    const int block = (int)(t / HB_SIM_GPU_LANES), lane = (int)(t % HB_SIM_GPU_LANES);
    if (block >= g.blocks) return;
    const size_t base = hb_step_block_base(&g, block) + (size_t)lane;
    /* Shared constants (copies of one model): every thread of a warp reads the
     * same address, one broadcast; the branch is uniform over the grid. */
    if (g.shared)
        hb_step_lanes(&g, &p, block, lane, 1, HB_SIM_GPU_LANES, 1, g.d + base, g.rhs + base);
    else
        hb_step_lanes(&g, &p, block, lane, 1, HB_SIM_GPU_LANES, 0, g.d + base, g.rhs + base);
}

/* A group with catalogue mechanisms, one thread a lane: the CPU engine's step_block_cat for the
 * lane (hb_step_lanes' passes around the mechanisms' currents and states; Crank-Nicolson: the
 * ions' half-step correction from the solve's dv before the update of v). */
template <int SHARED>
__global__ void step_cat_kernel(hb_step_group_t g, hb_step_params_t p, int from, int to)
{
    const long t = (long)blockIdx.x * blockDim.x + threadIdx.x;
    const int block = (int)(t / HB_SIM_GPU_LANES), lane = (int)(t % HB_SIM_GPU_LANES);
    if (block >= g.blocks) return;
    hb_cat_lane_items(&g, &p, block, lane, HB_SIM_GPU_LANES, SHARED, from, to);
}

static_assert(HB_TREE_ROUND == 32, "a round's chains are a tile's lanes, at most a warp");

/* Asks L2 for the 128-byte line holding p: no register waits for it. */
__device__ __forceinline__ void prefetch_line(const void *p)
{
    asm volatile("prefetch.global.L2 [%0];" ::"l"(p));
}

/* The lines a chain's elimination (or substitution: v too) reads, asked for at once: its loop
 * takes its rows two at a time, so it would otherwise wait for each line in turn. The double
 * arrays are allocations of their own (cudaMalloc: 256-byte aligned), so element e lies at
 * the same offset in a line of each: one loop over the chain's lines serves them all (a hint:
 * a line missed would cost time, never bits). The 64-bit pointer loop per array it replaces
 * was a sixth of the kernel's instructions. */
__device__ __forceinline__ void prefetch_chain(const hb_step_group_t *g, const hb_sim_tree_t *t,
                                               hb_tree_cell_t c, int chain, const double *d,
                                               const double *rhs, int substitute)
{
    const int top = t->chain_top[chain], end = t->chain_end[chain];
    const size_t q0 = c.cbase + (size_t)top, q1 = c.cbase + (size_t)end; /* constants, plan */
    const int fixed_end = (t->shape[q1] & HB_TREE_FIXED) != 0;
    const int all_fixed = (t->shape[q0] & HB_TREE_FIXED) != 0;
    const ptrdiff_t line = 128 / sizeof(double); /* elements */
    const ptrdiff_t lead = (ptrdiff_t)(((uintptr_t)(rhs + top) & 127u) / sizeof(double));
    for (ptrdiff_t k = (ptrdiff_t)top - lead; k <= (ptrdiff_t)end; k += line) {
        prefetch_line(rhs + k);
        if (!all_fixed) prefetch_line(d + k);
        if (substitute) prefetch_line(g->v + c.base + (size_t)k);
    }
    if (fixed_end) /* a copy's constants lie elsewhere: lines of their own */
        for (size_t q = q0 & ~(size_t)15; q <= q1; q += 16) prefetch_line(g->fixed_r + q);
    if (g->row_index)
        for (size_t q = q0 & ~(size_t)127; q <= q1; q += 128) prefetch_line(g->row_index + q);
}

/* A mixed group: a tile of t.tile lanes of a warp steps one cell (slot), its rows spread over
 * the lanes phase by phase (src/common/sim_tree.h); __syncwarp over the tile's lanes orders
 * the phases and the rounds. Kept plain:
 * a copy of the row table in shared memory, with the row stride made a constant, ran 4x
 * slower on the H100 (not analysed further). CAT 1 (a group with catalogue mechanisms, whose
 * rows are input rows of the plan): the ions' start with the input rows' pas, after the
 * inputs each mechanism's currents, its instances over the lanes (a point process's on one
 * lane in order: two may share a row), with Crank-Nicolson every row's dv kept by the
 * substitution and the ions' half-step correction over the rows, and after the update of v
 * each mechanism's states, a __syncwarp after each mechanism (common/cat_fused.h); with CAT 1
 * only the split step's items [from, to) (hb_cat_items: [0, items) is the whole step). CAT 0 is
 * the kernel without them, its code and registers unchanged. */
template <int CAT>
__global__ void __launch_bounds__(TREE_WARPS * 32, TREE_MIN_BLOCKS)
tree_step_kernel(hb_step_group_t g, hb_sim_tree_t t, hb_step_params_t p, int from, int to)
{
    const int T = t.tile; /* 8, 16 or 32 */
    const int slot = ((int)blockIdx.x * TREE_WARPS * 32 + (int)threadIdx.x) / T;
    const int lane = (int)(threadIdx.x % 32) % T;
    const unsigned tile = T == 32 ? 0xffffffffu : ((1u << T) - 1u) << ((threadIdx.x % 32) - lane);
    if (slot >= g.count) return; /* the whole tile */
    hb_tree_cell_t c = hb_tree_cell(&g, &t, slot);
    c.w = 1; /* a cell's rows contiguous (checked at upload): the row stride a constant */
    double *d = g.d + c.base, *rhs = g.rhs + c.base;
    /* the split step's items (CAT 1): the membrane with item 0, the solve with item n + 1 */
    const int n_mech = CAT ? g.cat->n_mech : 0;
    const int membrane = !CAT || from == 0, solve = !CAT || (from <= n_mech + 1 && n_mech + 1 < to);
    const int keep_dv = CAT && g.cat->second_order; /* CAT 0: a constant 0 */
    const int n_hh = g.lane_hh[slot];
    int q0 = 0, q1 = 0;
    if (membrane) {
        for (int q = t.input_first[slot] + lane; q < t.input_first[slot + 1]; q += T)
            hb_tree_pas(&g, &t, c, t.input_row[q], d, rhs);
        if (CAT)
            for (int i = lane; i < c.m; i += T) hb_tree_cat_ions(&g, c, i);
        __syncwarp(tile);
        for (int j = lane; j < n_hh; j += T) hb_tree_hh(&g, slot, c, j, d, rhs);
        __syncwarp(tile);
        if (lane == 0) hb_tree_inputs(&g, &p, slot, c, d, rhs);
        __syncwarp(tile);
    }
    if (CAT) {
        hb_cat_item_range(g.cat, from, to, HB_CAT_CURRENT, &q0, &q1);
        for (int q = q0; q < q1; q++) {
            const int n = hb_tree_cat_count(&g, q, slot);
            if (hb_tree_cat_serial(&g, q)) { /* rows shared: one lane, instances in order */
                for (int j = 0; lane == 0 && j < n; j++)
                    hb_tree_cat_kernel(&g, &p, q, slot, j, HB_CAT_CURRENT, d, rhs);
            } else {
                for (int j = lane; j < n; j += T)
                    hb_tree_cat_kernel(&g, &p, q, slot, j, HB_CAT_CURRENT, d, rhs);
            }
            __syncwarp(tile);
        }
    }
    if (solve) {
        for (int i = lane; i < c.m; i += T) {
            if (i + T < c.m) { /* the next rows' lines, while these rows wait for theirs */
                const size_t e = c.base + (size_t)(i + T), q = c.cbase + (size_t)(i + T);
                prefetch_line(g.v + e);
                if (!g.row_index) prefetch_line(g.cfac + q);
                prefetch_line(t.shape + q);
                if (g.row_index) prefetch_line(g.row_index + q);
            }
            hb_tree_axial(&g, &t, c, i, d, rhs);
        }
        __syncwarp(tile);
        const int *bound = t.round_bound + t.round_first[slot], first = t.chain_first[slot];
        const int rounds = t.round_first[slot + 1] - t.round_first[slot] - 1;
        for (int r = 0; r < rounds; r++) { /* at most HB_TREE_ROUND chains: one a lane */
            const int k = bound[r] + lane;
            if (k < bound[r + 1]) {
                prefetch_chain(&g, &t, c, first + k, d, rhs, 0);
                hb_tree_eliminate(&g, &t, c, first + k, d, rhs);
            }
            __syncwarp(tile);
        }
        for (int r = rounds - 1; r >= 0; r--) {
            const int k = bound[r] + lane;
            if (k < bound[r + 1]) {
                prefetch_chain(&g, &t, c, first + k, d, rhs, 1);
                hb_tree_substitute(&g, &t, &p, c, first + k, d, rhs, keep_dv);
            }
            __syncwarp(tile);
        }
        if (keep_dv) { /* every row's dv in rhs: the last round's __syncwarp */
            for (int i = lane; i < c.m; i += T) hb_tree_cat_second_order(&g, c, i, rhs);
            __syncwarp(tile);
        }
        for (int j = lane; j < n_hh; j += T) hb_tree_gates(&g, &p, slot, c, j);
        if (g.syn_start)
            for (int q = g.syn_start[slot] + lane; q < g.syn_start[slot + 1]; q += T)
                hb_tree_synapse(&g, q);
    }
    if (CAT) { /* v complete: the last round's __syncwarp, or an earlier kernel */
        hb_cat_item_range(g.cat, from, to, HB_CAT_STATE, &q0, &q1);
        for (int q = q0; q < q1; q++) {
            const int n = hb_tree_cat_count(&g, q, slot);
            for (int j = lane; j < n; j += T)
                hb_tree_cat_kernel(&g, &p, q, slot, j, HB_CAT_STATE, NULL, NULL);
            __syncwarp(tile);
        }
    }
}

__global__ void probe_kernel(int n, double *const *group_v, const int *probe_group,
                             const size_t *probe_index, const unsigned char *detect,
                             const double *threshold, unsigned char *above, double *v_prev,
                             double t, double dt, int interpolate, double *rec_row, double *spk,
                             int *count, int cap)
{
    const int p = blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    const double v = group_v[probe_group[p]][probe_index[p]];
    const double v0 = v_prev[p];
    v_prev[p] = v;
    double ts;
    if (detect[p] && hb_spike_test(v, v0, threshold[p], &above[p], t, dt, interpolate, &ts)) {
        const int c = count[p];
        if (c < cap) spk[(size_t)c * (size_t)n + (size_t)p] = ts;
        count[p] = c + 1;
    }
    if (rec_row) rec_row[p] = v;
}

__global__ void record_kernel(int n, const hb_rec_sample_t *records, double *const *group_v,
                              double *const *group_hh, double *const *group_syn, double *row)
{
    const int r = blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    const hb_rec_sample_t q = records[r];
    row[r] = hb_rec_value(&q, group_v[q.group], group_hh[q.group], group_syn[q.group]);
}

/* A NaN or infinity among the group's cells: key (check << CHECK_SHIFT) | (slot m + node), the
 * smallest kept, so the chunk's first failing check names its smallest cell, then node. */
__global__ void check_kernel(hb_step_group_t g, size_t size, unsigned long long check,
                             unsigned long long *fault)
{
    const size_t e = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t w = (size_t)g.width, m = (size_t)g.m;
    if (e >= size || isfinite(g.v[e])) return;
    size_t block, node;
    if (g.mixed) { /* the block whose elements hold e, and its rows' node */
        size_t lo = 0, hi = (size_t)g.blocks;
        while (hi - lo > 1) {
            const size_t mid = lo + (hi - lo) / 2;
            if (g.block_start[mid] <= e) lo = mid;
            else hi = mid;
        }
        block = lo;
        node = (e - g.block_start[block]) / w;
    } else {
        block = e / (m * w);
        node = e % (m * w) / w;
    }
    const size_t slot = block * w + e % w;
    if (slot >= (size_t)g.count || (g.mixed && node >= (size_t)g.lane_m[slot])) return;
    atomicMin(fault, (check << CHECK_SHIFT) | (unsigned long long)(slot * m + node));
}

/* ------------------------------------------------------------------------ */
/* Launchers                                                                */
/* ------------------------------------------------------------------------ */

/* The fused kernel of group g over the split step's items [from, to) (all of a group without
 * catalogue mechanisms). */
static hb_status_t launch_fused(const hb_cuda_sim_t *s, const dgroup_t *g,
                                const hb_step_params_t *p, int from, int to)
{
    if (g->k.mixed) {
        const long per_block = TREE_WARPS * 32 / g->tree.tile; /* cells */
        const unsigned grid = (unsigned)((g->k.count + per_block - 1) / per_block);
        if (g->k.cat)
            tree_step_kernel<1><<<grid, TREE_WARPS * 32, 0, s->stream>>>(g->k, g->tree, *p, from,
                                                                         to);
        else
            tree_step_kernel<0><<<grid, TREE_WARPS * 32, 0, s->stream>>>(g->k, g->tree, *p, 0, 0);
        CUDA_CHECK(cudaGetLastError());
        return HB_SUCCESS;
    }
    const long threads = (long)g->k.blocks * HB_SIM_GPU_LANES;
    const unsigned grid = (unsigned)((threads + STEP_THREADS - 1) / STEP_THREADS);
    if (g->k.cat && g->k.shared)
        step_cat_kernel<1><<<grid, STEP_THREADS, 0, s->stream>>>(g->k, *p, from, to);
    else if (g->k.cat)
        step_cat_kernel<0><<<grid, STEP_THREADS, 0, s->stream>>>(g->k, *p, from, to);
    else
        step_kernel<<<grid, STEP_THREADS, 0, s->stream>>>(g->k, *p);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

/* One step of group g: the fused kernel, or with a user catalogue's mechanisms the split step
 * (common/cat_fused.h): the fused kernels over the items between the users' and each user item
 * through its catalogue's launcher, in item order on the stream. */
static hb_status_t launch_step(const hb_cuda_sim_t *s, const dgroup_t *g, const hb_step_params_t *p)
{
    if (!g->cat.user) return launch_fused(s, g, p, 0, g->k.cat ? hb_cat_items(g->cat.host) : 0);
    const hb_step_cat_t *hc = g->cat.host;
    const int items = hb_cat_items(hc);
    for (int item = 0; item < items;) {
        const int end = hb_cat_fused_end(hc, item);
        if (end > item) {
            const hb_status_t st = launch_fused(s, g, p, item, end);
            if (st != HB_SUCCESS) return st;
        }
        if (end >= items) break;
        int kernel;
        const int q = hb_cat_item_mech(hc, end, &kernel);
        const hb_cat_cuda_t *cu = hc->mech[q].mech->cuda;
        const int rc = kernel == HB_CAT_CURRENT
                           ? cu->current(g->cat.lanes[q], g->cat.n_lanes, p->t_mid, p->dt,
                                         (void *)s->stream)
                           : cu->state(g->cat.lanes[q], g->cat.n_lanes, p->t_mid + 0.5 * p->dt,
                                       p->dt, (void *)s->stream);
        if (rc != 0)
            return hb_fail(HB_ERR_BACKEND, "GPU simulation: %s's %s kernel (a user catalogue's): "
                           "%s", hc->mech[q].mech->name,
                           kernel == HB_CAT_CURRENT ? "current" : "state",
                           cudaGetErrorString((cudaError_t)rc));
        item = end + 1;
    }
    return HB_SUCCESS;
}

static hb_status_t launch_check(const hb_cuda_sim_t *s, int g, int check)
{
    const dgroup_t *dg = &s->groups[g];
    const unsigned grid = (unsigned)((dg->size + PROBE_THREADS - 1) / PROBE_THREADS);
    check_kernel<<<grid, PROBE_THREADS, 0, s->stream>>>(dg->k, dg->size,
                                                        (unsigned long long)check, s->fault + g);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

static hb_status_t launch_probes(const hb_cuda_sim_t *s, double t, double *rec_row)
{
    const unsigned grid = (unsigned)((s->n_probes + PROBE_THREADS - 1) / PROBE_THREADS);
    probe_kernel<<<grid, PROBE_THREADS, 0, s->stream>>>(
        s->n_probes, s->group_v, s->probe_group, s->probe_index, s->probe_detect,
        s->probe_threshold, s->above, s->v_prev, t, s->dt, s->interpolate, rec_row, s->spk,
        s->spk_count, s->spike_cap);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

static hb_status_t launch_records(const hb_cuda_sim_t *s, double *row)
{
    const unsigned grid = (unsigned)((s->n_records + PROBE_THREADS - 1) / PROBE_THREADS);
    record_kernel<<<grid, PROBE_THREADS, 0, s->stream>>>(s->n_records, s->records, s->group_v,
                                                         s->group_hh_state, s->group_syn_state,
                                                         row);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Entry points                                                             */
/* ------------------------------------------------------------------------ */

/* cudaMalloc of at least one element, then a copy of `count` elements from host (if any). */
template <typename T>
static hb_status_t upload(T **dst, const T *src, size_t count)
{
    *dst = NULL;
    CUDA_CHECK(cudaMalloc((void **)dst, (count ? count : 1) * sizeof(T)));
    if (src && count) CUDA_CHECK(cudaMemcpy(*dst, src, count * sizeof(T), cudaMemcpyHostToDevice));
    return HB_SUCCESS;
}

/* Elements `pick` (n of them) of the host array src, uploaded in that order; src whole (count
 * elements) where pick is NULL. */
template <typename T>
static hb_status_t upload_pick(T **dst, const T *src, size_t count, const size_t *pick, size_t n)
{
    if (!pick || !src) return upload(dst, src, count);
    *dst = NULL;
    T *tmp = (T *)malloc((n ? n : 1) * sizeof(T));
    if (!tmp) return hb_fail(HB_ERR_ALLOC, "cuda sim: out of host memory for %zu rows", n);
    for (size_t q = 0; q < n; q++) tmp[q] = src[pick[q]];
    const hb_status_t st = upload(dst, tmp, n);
    free(tmp);
    return st;
}

/* A mixed group's rows that hold constants and plan on the device (hb_sim_tree_share): the
 * slots that are their own, block after block (*pick: their elements, *n of them), and each
 * slot's first element there (*cbase). The group's width is 1: a slot's rows are its block. */
static hb_status_t share_rows(const hb_step_group_t *h, hb_sim_tree_plan_t *plan, size_t **pick,
                              size_t *n, size_t **cbase)
{
    *pick = *cbase = NULL;
    size_t own = 0;
    hb_status_t st = hb_sim_tree_share(h, plan, &own);
    if (st != HB_SUCCESS) return st;
    const size_t slots = (size_t)h->blocks;
    size_t rows = 0;
    for (size_t s = 0; s < slots; s++)
        if (plan->cbase[s] == h->block_start[s]) rows += h->block_start[s + 1] - h->block_start[s];
    *pick = (size_t *)malloc((rows ? rows : 1) * sizeof **pick);
    *cbase = (size_t *)malloc((slots ? slots : 1) * sizeof **cbase);
    if (!*pick || !*cbase) {
        free(*pick);
        free(*cbase);
        *pick = *cbase = NULL;
        return hb_fail(HB_ERR_ALLOC, "cuda sim: out of host memory for %zu slots", slots);
    }
    size_t q = 0;
    for (size_t s = 0; s < slots; s++) {
        if (plan->cbase[s] == h->block_start[s]) { /* its own: its rows next */
            (*cbase)[s] = q;
            for (size_t e = h->block_start[s]; e < h->block_start[s + 1]; e++) (*pick)[q++] = e;
        } else { /* a copy of an earlier slot: that slot's, found by its first element */
            size_t lo = 0, hi = s;
            while (hi - lo > 1) {
                const size_t mid = lo + (hi - lo) / 2;
                if (h->block_start[mid] <= plan->cbase[s]) lo = mid;
                else hi = mid;
            }
            (*cbase)[s] = (*cbase)[lo];
        }
    }
    *n = rows;
    return HB_SUCCESS;
}

static hb_status_t upload_arrays(dgroup_t *dg, const hb_step_group_t *h, hb_sim_tree_plan_t *plan,
                                 const size_t *pick, size_t n_pick, const size_t *cbase);

/* 1: mechanism q of group g is a user catalogue's point process (a POINT_PROCESS or an
 * ARTIFICIAL_CELL, which its host cell steps and delivers as one). */
static int is_user_point(const hb_step_group_t *groups, int g, int q)
{
    const hb_step_cat_mech_t *cm = &groups[g].cat->mech[q];
    return cm->builtin < 0 && cm->mech->kind != HB_CAT_DENSITY;
}

/* The user catalogues' point processes of the groups, each once, in the order of the groups and
 * their mechanisms: out[k] is the one numbered k (hb_step_cat_mech_t.user_key), whose
 * NET_RECEIVE launcher the event delivery calls with key k (out NULL: counted alone). Returns
 * their number. */
static int user_points(const hb_step_group_t *groups, int n_groups, const hb_cat_mech_t **out)
{
    int n = 0;
    for (int g = 0; g < n_groups; g++)
        for (int q = 0; groups[g].cat && q < groups[g].cat->n_mech; q++) {
            if (!is_user_point(groups, g, q)) continue;
            const hb_cat_mech_t *m = groups[g].cat->mech[q].mech;
            int seen = 0; /* in an earlier group or mechanism */
            for (int h = 0; h <= g && !seen; h++)
                for (int r = 0; groups[h].cat && r < groups[h].cat->n_mech && !seen; r++) {
                    if (h == g && r == q) break;
                    seen = is_user_point(groups, h, r) && groups[h].cat->mech[r].mech == m;
                }
            if (seen) continue;
            if (out) out[n] = m;
            n++;
        }
    return n;
}

/* The number of user point process m among user_points'. */
static int user_point_key(const hb_step_group_t *groups, int n_groups, const hb_cat_mech_t *m)
{
    const int n = user_points(groups, n_groups, NULL);
    const hb_cat_mech_t **all = (const hb_cat_mech_t **)calloc((size_t)n + 1, sizeof *all);
    int key = -1;
    if (all) {
        user_points(groups, n_groups, all);
        for (int k = 0; k < n && key < 0; k++)
            if (all[k] == m) key = k;
    }
    free(all);
    return key;
}

/* The views of every slot (hb_cat_lane_t) of each user mechanism of the group, on the device:
 * hb_cat_lane_view on the host group with the device's data pointers (the host's indices: the
 * layout of v, the fields and the ions is the same on both). */
static hb_status_t upload_lanes(dgroup_t *dg, const hb_step_group_t *h)
{
    dcat_t *dc = &dg->cat;
    const hb_step_cat_t *hc = h->cat;
    hb_step_cat_t mixed = *hc; /* the host's counts and indices, the device's arrays */
    mixed.mech = (hb_step_cat_mech_t *)calloc((size_t)hc->n_mech + 1, sizeof *mixed.mech);
    mixed.ion = (hb_step_ion_t *)calloc((size_t)hc->n_ion + 1, sizeof *mixed.ion);
    dc->lanes = (hb_cat_lane_t **)calloc((size_t)hc->n_mech + 1, sizeof *dc->lanes);
    dc->n_lanes = h->blocks * h->width;
    hb_cat_lane_t *lanes = (hb_cat_lane_t *)calloc((size_t)dc->n_lanes + 1, sizeof *lanes);
    hb_status_t st = HB_SUCCESS;
    if (!mixed.mech || !mixed.ion || !dc->lanes || !lanes)
        st = hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
    for (int q = 0; st == HB_SUCCESS && q < hc->n_mech; q++) {
        hb_step_cat_mech_t *mm = &mixed.mech[q];
        *mm = hc->mech[q];
        mm->node = dc->mech[q].node;
        mm->field = dc->mech[q].field;
        mm->global = dc->mech[q].global;
        mm->table = dc->mech[q].table;
        mm->area = dc->mech[q].area; /* a point process's rows' areas */
    }
    for (int x = 0; st == HB_SUCCESS && x < hc->n_ion; x++) {
        mixed.ion[x] = hc->ion[x];
        mixed.ion[x].e = dc->ion[x].e;
        mixed.ion[x].ci = dc->ion[x].ci;
        mixed.ion[x].co = dc->ion[x].co;
        mixed.ion[x].i = dc->ion[x].i;
        mixed.ion[x].didv = dc->ion[x].didv;
    }
    hb_step_group_t g = *h;
    g.v = dg->k.v;
    g.d = dg->k.d;
    g.rhs = dg->k.rhs;
    g.cat = &mixed;
    for (int q = 0; st == HB_SUCCESS && q < hc->n_mech; q++) {
        if (hc->mech[q].builtin >= 0) continue;
        for (int slot = 0; slot < dc->n_lanes; slot++) hb_cat_lane_view(&g, q, slot, &lanes[slot]);
        st = upload(&dc->lanes[q], (const hb_cat_lane_t *)lanes, (size_t)dc->n_lanes);
        if (st == HB_SUCCESS && hc->mech[q].mech->kind != HB_CAT_DENSITY)
            dc->mech[q].lanes = dc->lanes[q]; /* the event delivery's (sim_events.cu) */
    }
    free(lanes);
    free(mixed.mech);
    free(mixed.ion);
    return st;
}

/* The group's catalogue mechanisms and ions on the device (k.cat), their state as the host's
 * now (set_state copies it again after hb_sim_init). The built-in catalogues' mechanisms the
 * fused step reaches by index (common/cat_fused.h); a user catalogue's through its CUDA
 * launchers (hb_cat_mech_t.cuda), each slot's view uploaded (upload_lanes; docs/mechanisms.md,
 * section 6); a user's without them is refused. */
static hb_status_t upload_cat(dgroup_t *dg, const hb_step_group_t *h,
                              const hb_step_group_t *groups, int n_groups)
{
    const hb_step_cat_t *hc = h->cat;
    dcat_t *dc = &dg->cat;
    dc->host = hc;
    const size_t W = (size_t)h->width, slots = (size_t)h->blocks * W;
    const int nm = hc->n_mech, ni = hc->n_ion;
    dc->mech = (hb_step_cat_mech_t *)calloc((size_t)nm + 1, sizeof *dc->mech);
    dc->ion = (hb_step_ion_t *)calloc((size_t)ni + 1, sizeof *dc->ion);
    dc->tables = (double ***)calloc((size_t)nm + 1, sizeof *dc->tables);
    if (!dc->mech || !dc->ion || !dc->tables)
        return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
    hb_status_t st;
    for (int q = 0; q < nm; q++) {
        const hb_step_cat_mech_t *hm = &hc->mech[q];
        const hb_cat_mech_t *m = hm->mech;
        if (hm->builtin < 0 && (!m->cuda || !m->cuda->current || !m->cuda->state ||
                                (m->kind != HB_CAT_DENSITY && m->n_weight >= 0 &&
                                 !m->cuda->net_receive)))
            return hb_fail(HB_ERR_NOT_SUPPORTED, "GPU simulation: %s is a user catalogue's "
                           "mechanism without CUDA kernels; expected its catalogue built by "
                           "build-catalogue --cuda, or backend seq or omp", m->name);
        dc->user |= hm->builtin < 0;
        hb_step_cat_mech_t *dm = &dc->mech[q];
        *dm = *hm; /* builtin, index, ion; pointers replaced below */
        dm->mech = NULL;
        dm->inst_start = NULL;
        dm->lane_inst = NULL;
        dm->node = NULL;
        dm->field = dm->global = NULL;
        dm->table = NULL;
        dm->area = NULL;
        dm->lanes = NULL; /* upload_lanes' */
        dm->user_key = hm->builtin < 0 && m->kind != HB_CAT_DENSITY
                           ? user_point_key(groups, n_groups, m)
                           : 0;
        if (dm->user_key < 0) return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
        const size_t inst = hm->inst_start[h->blocks];
        hb_cat_mech_t *desc;
        size_t *inst_start;
        int *lane_inst, *node;
        /* the descriptor's counts (n_field, n_ion) for hb_cat_view; its pointers unused */
        if ((st = upload(&desc, m, 1)) != HB_SUCCESS) return st;
        dm->mech = desc;
        if ((st = upload(&inst_start, hm->inst_start, (size_t)h->blocks + 1)) != HB_SUCCESS)
            return st;
        dm->inst_start = inst_start;
        if ((st = upload(&lane_inst, hm->lane_inst, slots)) != HB_SUCCESS) return st;
        dm->lane_inst = lane_inst;
        if ((st = upload(&node, hm->node, inst * W)) != HB_SUCCESS) return st;
        dm->node = node;
        if ((st = upload(&dm->field, hm->field, inst * (size_t)m->n_field * W)) != HB_SUCCESS ||
            (st = upload(&dm->global, hm->global, (size_t)m->n_global)) != HB_SUCCESS)
            return st;
        if (hm->area && (st = upload(&dm->area, (const double *)hm->area, inst * W)) != HB_SUCCESS)
            return st; /* a point process's rows' areas */
        if (hm->table && m->n_table > 0) {
            dc->tables[q] = (double **)calloc((size_t)m->n_table, sizeof(double *));
            if (!dc->tables[q]) return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
            for (int x = 0; x < m->n_table; x++)
                if ((st = upload(&dc->tables[q][x], (const double *)hm->table[x],
                                 (size_t)m->table_len[x])) != HB_SUCCESS)
                    return st;
            if ((st = upload(&dm->table, (double *const *)dc->tables[q], (size_t)m->n_table)) !=
                HB_SUCCESS)
                return st;
        }
    }
    const size_t size = dg->size;
    for (int x = 0; x < ni; x++) {
        const hb_step_ion_t *hi = &hc->ion[x];
        hb_step_ion_t *di = &dc->ion[x];
        memcpy(di->name, hi->name, sizeof di->name);
        di->valence = hi->valence;
        if ((st = upload(&di->e, (const double *)hi->e, size)) != HB_SUCCESS ||
            (st = upload(&di->ci, (const double *)hi->ci, size)) != HB_SUCCESS ||
            (st = upload(&di->co, (const double *)hi->co, size)) != HB_SUCCESS ||
            (st = upload(&di->i, (const double *)hi->i, size)) != HB_SUCCESS ||
            (st = upload(&di->didv, (const double *)hi->didv, size)) != HB_SUCCESS ||
            (st = upload(&di->style, (const unsigned char *)hi->style, size)) != HB_SUCCESS)
            return st; /* e0, ci0, co0: hb_sim_init's, on the host */
    }
    if (dc->user && (st = upload_lanes(dg, h)) != HB_SUCCESS) return st; /* dc->mech[q].lanes */
    hb_step_cat_t top = *hc;
    top.mech = NULL;
    top.ion = NULL;
    if ((st = upload(&top.mech, (const hb_step_cat_mech_t *)dc->mech, (size_t)nm)) != HB_SUCCESS)
        return st;
    if ((st = upload(&top.ion, (const hb_step_ion_t *)dc->ion, (size_t)ni)) != HB_SUCCESS) {
        cudaFree(top.mech);
        return st;
    }
    if ((st = upload(&dc->dev, (const hb_step_cat_t *)&top, 1)) != HB_SUCCESS) {
        cudaFree(top.mech);
        cudaFree(top.ion);
        return st;
    }
    dg->k.cat = dc->dev;
    return HB_SUCCESS;
}

static void free_cat(dcat_t *dc)
{
    if (dc->dev) {
        hb_step_cat_t top;
        if (cudaMemcpy(&top, dc->dev, sizeof top, cudaMemcpyDeviceToHost) == cudaSuccess) {
            cudaFree(top.mech);
            cudaFree(top.ion);
        }
        cudaFree(dc->dev);
    }
    for (int q = 0; dc->mech && dc->host && q < dc->host->n_mech; q++) {
        hb_step_cat_mech_t *dm = &dc->mech[q];
        cudaFree((void *)dm->mech);
        cudaFree(dm->inst_start);
        cudaFree(dm->lane_inst);
        cudaFree(dm->node);
        cudaFree(dm->field);
        cudaFree(dm->global);
        cudaFree(dm->area);
        cudaFree(dm->table);
        for (int x = 0; dc->tables && dc->tables[q] && x < dc->host->mech[q].mech->n_table; x++)
            cudaFree(dc->tables[q][x]);
        if (dc->tables) free(dc->tables[q]);
        if (dc->lanes) cudaFree(dc->lanes[q]);
    }
    free(dc->lanes);
    for (int x = 0; dc->ion && dc->host && x < dc->host->n_ion; x++) {
        hb_step_ion_t *di = &dc->ion[x];
        cudaFree(di->e);
        cudaFree(di->ci);
        cudaFree(di->co);
        cudaFree(di->i);
        cudaFree(di->didv);
        cudaFree(di->style);
    }
    free(dc->mech);
    free(dc->ion);
    free(dc->tables);
    memset(dc, 0, sizeof *dc);
}

/* The device address of host address `at` in group dg's catalogue arrays (a recorded ion or
 * mechanism value, HB_REC_HOST); NULL: in none. */
static const double *cat_device_address(const dgroup_t *dg, const double *at)
{
    const dcat_t *dc = &dg->cat;
    if (!dc->host) return NULL;
    for (int x = 0; x < dc->host->n_ion; x++) {
        const hb_step_ion_t *hi = &dc->host->ion[x], *di = &dc->ion[x];
        const double *const h[5] = {hi->e, hi->ci, hi->co, hi->i, hi->didv};
        const double *const d[5] = {di->e, di->ci, di->co, di->i, di->didv};
        for (int a = 0; a < 5; a++)
            if (at >= h[a] && at < h[a] + dg->size) return d[a] + (at - h[a]);
    }
    const size_t W = (size_t)dg->k.width;
    for (int q = 0; q < dc->host->n_mech; q++) {
        const hb_step_cat_mech_t *hm = &dc->host->mech[q];
        const size_t n = hm->inst_start[dg->k.blocks] * (size_t)hm->mech->n_field * W;
        if (at >= hm->field && at < hm->field + n) return dc->mech[q].field + (at - hm->field);
    }
    return NULL;
}

/* Lanes a cell of a mixed group (hb_sim_tree_t.tile): a warp, unless the tuning says 16 or 8.
 * Tiles of 8 lanes raise the lanes' use by the rounds of real cells from a quarter to about
 * four fifths, yet measured no faster (docs/sim-engine.md, "Tiles"): the knob stays for other
 * devices' measurements. */
static int tree_tile(int tuned) { return tuned > 0 ? tuned : 32; }

static hb_status_t upload_group(dgroup_t *dg, const hb_step_group_t *h, int tile,
                                const hb_step_group_t *groups, int n_groups)
{
    hb_sim_tree_plan_t plan;
    memset(&plan, 0, sizeof plan);
    size_t *pick = NULL, *cbase = NULL, n_pick = 0;
    hb_status_t st = HB_SUCCESS;
    if (h->mixed) {
        if (h->width != 1) /* tree_step_kernel's rows are contiguous (sim_cuda_ops.c) */
            return hb_fail(HB_ERR_BACKEND, "cuda sim: a mixed group of width %d; expected 1",
                           h->width);
        st = hb_sim_tree_plan(h, tile, &plan);
        if (st == HB_SUCCESS) st = share_rows(h, &plan, &pick, &n_pick, &cbase);
    }
    if (st == HB_SUCCESS) st = upload_arrays(dg, h, h->mixed ? &plan : NULL, pick, n_pick, cbase);
    if (st == HB_SUCCESS && h->cat) st = upload_cat(dg, h, groups, n_groups);
    hb_sim_tree_free(&plan);
    free(pick);
    free(cbase);
    return st;
}

/* The group's arrays on the device; a mixed group's constants and plan only in the rows of
 * `pick` (share_rows), read at cbase. */
static hb_status_t upload_arrays(dgroup_t *dg, const hb_step_group_t *h, hb_sim_tree_plan_t *plan,
                                 const size_t *pick, size_t n_pick, const size_t *cbase)
{
    hb_step_group_t *k = &dg->k;
    *k = *h;
    k->cat = NULL; /* upload_cat's */
    k->parent = k->hh_node = k->site_start = NULL;
    k->block_start = k->hh_start = NULL;
    k->lane_m = k->lane_hh = NULL;
    k->v = k->d = k->rhs = k->hh_state = NULL;
    k->u = k->l = k->cfac = k->pas_g = k->pas_e = k->hh_par = NULL;
    k->sites = NULL;
    k->pulses = NULL;
    k->syn_start = NULL;
    k->syns = NULL;
    k->syn_state = NULL;
    /* the device factors every row of a shared group each step (same bits as the CPU's
     * fixed rows); a mixed group's fixed rows take their factors (fixed_r, uploaded below) */
    k->fixed_row = NULL;
    k->row_index = k->chain_row = NULL; /* the CPU engine's packing of mixed groups */
    k->row_table = k->cfac_table = NULL;
    k->shape_class = NULL; /* the host's: which slots may share constants */
    k->fixed_r = k->fixed_c = k->fixed_f = NULL;
    const size_t slots = (size_t)h->blocks * (size_t)h->width;
    /* a mixed group's blocks have their own rows and hh instances (hb_step_group_t) */
    dg->size = h->mixed ? h->block_start[h->blocks] : slots * (size_t)h->m;
    dg->hh = h->mixed ? h->hh_start[h->blocks] * (size_t)h->width : slots * (size_t)h->n_hh;
    /* Constants: once per node for shared groups (hb_step_group_t), else per lane. */
    const size_t csize = h->shared ? (size_t)h->m : dg->size;
    const size_t psize = (h->shared ? (size_t)h->n_hh : dg->hh) * HB_HH_NPAR;
    const size_t n_sites = (size_t)h->site_start[slots];
    /* synapse states: 2 values a synapse (either layout of hb_step_group_t) */
    const size_t n_syns = h->syn_start ? (size_t)h->syn_start[slots] : 0;
    dg->syn_values = h->syn_lanes ? 2 * slots * (size_t)h->syn_lanes : 2 * n_syns;
    dg->host_syn_state = h->syn_state;
    size_t n_pulses = 0;
    for (size_t q = 0; q < n_sites; q++) n_pulses += (size_t)h->sites[q].count;
    hb_status_t st;
    int *parent, *hh_node, *site_start;
    double *u, *l, *cfac, *pas_g, *pas_e, *hh_par;
    hb_stim_site_t *sites;
    hb_stim_pulse_t *pulses;
#define UP(var, src, n)                                                                      \
    do {                                                                                   \
        if ((st = upload(&var, src, n)) != HB_SUCCESS) return st;                          \
    } while (0)
    /* a mixed group's constants and plan: the shared rows alone (share_rows) */
#define UP_ROWS(var, src, n)                                                                 \
    do {                                                                                   \
        if ((st = upload_pick(&var, src, n, pick, n_pick)) != HB_SUCCESS) return st;       \
    } while (0)
    if (h->mixed) UP_ROWS(parent, h->parent, dg->size);
    else UP(parent, h->parent, (size_t)h->m);
    k->parent = parent;
    UP(hh_node, h->hh_node, h->mixed ? dg->hh : (size_t)h->n_hh);
    k->hh_node = hh_node;
    if (h->mixed) {
        size_t *block_start, *hh_start;
        int *lane_m, *lane_hh;
        UP(block_start, h->block_start, (size_t)h->blocks + 1);
        k->block_start = block_start;
        UP(hh_start, h->hh_start, (size_t)h->blocks + 1);
        k->hh_start = hh_start;
        UP(lane_m, h->lane_m, slots);
        k->lane_m = lane_m;
        UP(lane_hh, h->lane_hh, slots);
        k->lane_hh = lane_hh;
        const hb_sim_tree_plan_t &plan_h = *plan;
        int *child_start = NULL, *child = NULL, *chain_first = NULL, *chain_top = NULL,
            *chain_end = NULL, *round_first = NULL, *round_bound = NULL, *input_first = NULL,
            *input_row = NULL;
        unsigned char *shape = NULL, *row_index = NULL;
        double *row_table = NULL, *cfac_table = NULL;
        size_t *cbase_d = NULL;
        if ((st = upload_pick(&child_start, plan_h.child_start, plan_h.size, pick, n_pick)) ==
                HB_SUCCESS &&
            (st = upload_pick(&child, plan_h.child, plan_h.size, pick, n_pick)) == HB_SUCCESS &&
            (st = upload_pick(&shape, plan_h.shape, plan_h.size, pick, n_pick)) == HB_SUCCESS &&
            (st = upload(&chain_first, plan_h.chain_first, plan_h.slots + 1)) == HB_SUCCESS &&
            (st = upload(&chain_top, plan_h.chain_top, plan_h.chains)) == HB_SUCCESS &&
            (st = upload(&chain_end, plan_h.chain_end, plan_h.chains)) == HB_SUCCESS &&
            (st = upload(&round_first, plan_h.round_first, plan_h.slots + 1)) == HB_SUCCESS &&
            (st = upload(&input_first, plan_h.input_first, plan_h.slots + 1)) == HB_SUCCESS &&
            (st = upload(&input_row, plan_h.input_row, plan_h.inputs)) == HB_SUCCESS &&
            (st = upload(&cbase_d, cbase, cbase ? plan_h.slots : 0)) == HB_SUCCESS)
            st = upload(&round_bound, plan_h.round_bound, plan_h.bounds);
        if (st == HB_SUCCESS && h->row_index) { /* constants by a one-byte index */
            if ((st = upload_pick(&row_index, h->row_index, dg->size, pick, n_pick)) ==
                    HB_SUCCESS &&
                (st = upload(&row_table, h->row_table, 4 * 256)) == HB_SUCCESS)
                st = upload(&cfac_table, h->cfac_table, 256);
            k->row_index = row_index;
            k->row_table = row_table;
            k->cfac_table = cfac_table;
        }
        dg->tree = plan_h.k;
        dg->tree.cbase = cbase ? cbase_d : NULL;
        if (!cbase) cudaFree(cbase_d);
        dg->tree.child_start = child_start;
        dg->tree.child = child;
        dg->tree.shape = shape;
        dg->tree.chain_first = chain_first;
        dg->tree.chain_top = chain_top;
        dg->tree.chain_end = chain_end;
        dg->tree.round_first = round_first;
        dg->tree.round_bound = round_bound;
        dg->tree.input_first = input_first;
        dg->tree.input_row = input_row;
        if (st != HB_SUCCESS) return st;
        if (h->fixed_row && h->fixed_r) { /* the fixed rows' factors (HB_TREE_FIXED) */
            double *fixed_r;
            UP_ROWS(fixed_r, h->fixed_r, dg->size);
            k->fixed_r = fixed_r;
        }
    }
    UP(site_start, h->site_start, slots + 1);
    k->site_start = site_start;
    UP(sites, h->sites, n_sites);
    k->sites = sites;
    UP(pulses, h->pulses, n_pulses);
    k->pulses = pulses;
    /* a mixed group with a row table: the tree step reads u, l, pas_g, pas_e and cfac from it
     * alone */
    const size_t tsize = h->mixed && h->row_index ? 0 : csize;
    UP_ROWS(u, tsize ? h->u : NULL, tsize);
    k->u = u;
    UP_ROWS(l, tsize ? h->l : NULL, tsize);
    k->l = l;
    UP_ROWS(cfac, tsize ? h->cfac : NULL, tsize);
    k->cfac = cfac;
    UP_ROWS(pas_g, tsize ? h->pas_g : NULL, tsize);
    k->pas_g = pas_g;
    UP_ROWS(pas_e, tsize ? h->pas_e : NULL, tsize);
    k->pas_e = pas_e;
    UP(hh_par, h->hh_par, psize);
    k->hh_par = hh_par;
    UP(k->v, (const double *)NULL, dg->size);
    UP(k->d, (const double *)NULL, dg->size);
    UP(k->rhs, (const double *)NULL, dg->size);
    UP(k->hh_state, (const double *)NULL, dg->hh * 3);
    if (h->syn_start) {
        int *syn_start;
        hb_syn_site_t *syns;
        UP(syn_start, h->syn_start, slots + 1);
        k->syn_start = syn_start;
        UP(syns, h->syns, n_syns);
        k->syns = syns;
        UP(k->syn_state, h->syn_state, dg->syn_values);
    }
#undef UP
#undef UP_ROWS
    return HB_SUCCESS;
}

static void free_group(dgroup_t *dg)
{
    hb_step_group_t *k = &dg->k;
    cudaFree((void *)k->parent);
    cudaFree((void *)k->hh_node);
    cudaFree((void *)k->site_start);
    cudaFree((void *)k->sites);
    cudaFree((void *)k->pulses);
    cudaFree((void *)k->u);
    cudaFree((void *)k->l);
    cudaFree((void *)k->cfac);
    cudaFree((void *)k->pas_g);
    cudaFree((void *)k->pas_e);
    cudaFree((void *)k->hh_par);
    cudaFree(k->v);
    cudaFree(k->d);
    cudaFree(k->rhs);
    cudaFree(k->hh_state);
    cudaFree((void *)k->block_start);
    cudaFree((void *)k->hh_start);
    cudaFree((void *)k->lane_m);
    cudaFree((void *)k->lane_hh);
    cudaFree((void *)k->syn_start);
    cudaFree((void *)k->syns);
    cudaFree(k->syn_state);
    cudaFree((void *)dg->tree.child_start);
    cudaFree((void *)dg->tree.child);
    cudaFree((void *)dg->tree.shape);
    cudaFree((void *)k->row_index);
    cudaFree((void *)k->row_table);
    cudaFree((void *)k->cfac_table);
    cudaFree((void *)k->fixed_r);
    cudaFree((void *)dg->tree.chain_first);
    cudaFree((void *)dg->tree.chain_top);
    cudaFree((void *)dg->tree.chain_end);
    cudaFree((void *)dg->tree.round_first);
    cudaFree((void *)dg->tree.round_bound);
    cudaFree((void *)dg->tree.input_first);
    cudaFree((void *)dg->tree.input_row);
    cudaFree((void *)dg->tree.cbase);
    free_cat(&dg->cat);
}

extern "C" void hb_cuda_sim_destroy(hb_cuda_sim_t *s)
{
    if (!s) return;
    cudaSetDevice(s->device);
    if (s->groups)
        for (int g = 0; g < s->n_groups; g++) free_group(&s->groups[g]);
    free(s->groups);
    cudaFree(s->table);
    cudaFree(s->group_v);
    cudaFree(s->group_hh_state);
    cudaFree(s->group_syn_state);
    cudaFree(s->records);
    cudaFree(s->rec_values);
    free(s->h_rec_values);
    free(s->h_record_step);
    cudaFree(s->group_syns);
    cudaFree(s->dev_groups);
    hb_cuda_events_destroy(s->events);
    cudaFree(s->probe_group);
    cudaFree(s->probe_index);
    cudaFree(s->probe_detect);
    cudaFree(s->above);
    cudaFree(s->probe_threshold);
    cudaFree(s->v_prev);
    cudaFree(s->rec);
    cudaFree(s->spk);
    cudaFree(s->spk_count);
    cudaFree(s->fault);
    free(s->h_fault);
    free(s->h_check_step);
    free(s->h_rec);
    free(s->h_spk);
    free(s->h_count);
    free(s->h_sample_step);
    if (s->stream_made) cudaStreamDestroy(s->stream);
    free(s);
}

/* Steps per chunk: sample rows and spike slots of every probe within the budget. */
static int chunk_steps(int n_probes, long sample_every)
{
    int chunk = CHUNK_MAX;
    for (;;) {
        const size_t per_probe = (size_t)(chunk / 2 + 1) + (size_t)(chunk / sample_every + 1);
        if (chunk <= 2 || (size_t)n_probes * per_probe * sizeof(double) <= CHUNK_BUDGET) break;
        chunk /= 2;
    }
    return chunk;
}

static hb_status_t create(hb_cuda_sim_t *s, const hb_sim_desc_t *d)
{
    hb_status_t st;
    s->device = d->device;
    CUDA_CHECK(cudaSetDevice(s->device));
    CUDA_CHECK(cudaStreamCreateWithFlags(&s->stream, cudaStreamNonBlocking));
    s->stream_made = 1;
    s->n_groups = d->n_groups;
    s->q10 = d->q10;
    s->dt = d->dt;
    s->factor = d->factor;
    s->n_probes = d->n_probes;
    s->interpolate = d->interpolate;
    s->sample_every = d->sample_every;
    s->check_every = d->check_every > 0 ? d->check_every : 1;
    s->check_last = d->check_last;
    if (!(s->groups = (dgroup_t *)calloc((size_t)d->n_groups, sizeof *s->groups)))
        return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
    double **views = (double **)calloc((size_t)d->n_groups * 3 + 1, sizeof *views);
    hb_syn_site_t **sites = (hb_syn_site_t **)calloc((size_t)d->n_groups + 1, sizeof *sites);
    if (!views || !sites) {
        free(views);
        free(sites);
        return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
    }
    double **syn_views = views + d->n_groups, **hh_views = views + 2 * d->n_groups;
    for (int g = 0; g < d->n_groups; g++) {
        if (!d->groups[g].mixed && d->groups[g].width != HB_SIM_GPU_LANES) {
            free(views);
            free(sites);
            return hb_fail(HB_ERR_INVALID_VALUE, "GPU simulation: group %d has %d lanes per block; "
                           "expected %d", g, d->groups[g].width, HB_SIM_GPU_LANES);
        }
        if ((st = upload_group(&s->groups[g], &d->groups[g], tree_tile(s->tree_tile), d->groups,
                                d->n_groups)) != HB_SUCCESS) {
            free(views);
            free(sites);
            return st;
        }
        const hb_step_group_t *kg = &s->groups[g].k; /* the fault key's room: slot m + node */
        if ((((size_t)kg->blocks * (size_t)kg->width * (size_t)kg->m) >> CHECK_SHIFT) != 0) {
            free(views);
            free(sites);
            return hb_fail(HB_ERR_NOT_SUPPORTED, "GPU simulation: group %d has %zu elements; "
                           "expected fewer than 2^%d", g, s->groups[g].size, CHECK_SHIFT);
        }
        views[g] = s->groups[g].k.v;
        syn_views[g] = s->groups[g].k.syn_state;
        hh_views[g] = s->groups[g].k.hh_state;
        sites[g] = (hb_syn_site_t *)s->groups[g].k.syns;
    }
    st = upload(&s->group_v, (double *const *)views, (size_t)d->n_groups);
    if (st == HB_SUCCESS)
        st = upload(&s->group_syn_state, (double *const *)syn_views, (size_t)d->n_groups);
    if (st == HB_SUCCESS)
        st = upload(&s->group_hh_state, (double *const *)hh_views, (size_t)d->n_groups);
    if (st == HB_SUCCESS)
        st = upload(&s->group_syns, (hb_syn_site_t *const *)sites, (size_t)d->n_groups);
    free(views);
    free(sites);
    if (st != HB_SUCCESS) return st;
    /* the groups as the step kernels take them: the views of point processes' events */
    hb_step_group_t *ks = (hb_step_group_t *)calloc((size_t)d->n_groups + 1, sizeof *ks);
    if (!ks) return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
    for (int g = 0; g < d->n_groups; g++) ks[g] = s->groups[g].k;
    st = upload(&s->dev_groups, (const hb_step_group_t *)ks, (size_t)d->n_groups);
    free(ks);
    if (st != HB_SUCCESS) return st;
    s->weights = d->weights;
    s->n_weights = d->n_weights;
    s->netcon_head = d->netcon_head;
    s->netcon_next = d->netcon_next;
    if ((st = hb_cuda_events_create(s->stream, d->n_targets, d->targets, s->group_syns,
                                    s->group_syn_state, s->dev_groups, d->dt, &s->events)) !=
        HB_SUCCESS)
        return st;
    { /* the user catalogues' point processes: their NET_RECEIVE launchers, by number */
        const int n_user = user_points(d->groups, d->n_groups, NULL);
        const hb_cat_mech_t **user =
            (const hb_cat_mech_t **)calloc((size_t)n_user + 1, sizeof *user);
        if (!user) return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
        user_points(d->groups, d->n_groups, user);
        st = hb_cuda_events_set_user_points(s->events, n_user, user);
        free(user);
        if (st != HB_SUCCESS) return st;
    }
    { /* the point processes that send themselves events: per target its user key, else -1 */
        int *key = (int *)malloc(((size_t)d->n_targets + 1) * sizeof *key);
        if (!key) return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
        for (int i = 0; i < d->n_targets; i++) {
            const hb_sim_target_t *t = &d->targets[i];
            const hb_cat_mech_t *m =
                t->point ? d->groups[t->group].cat->mech[t->point - 1].mech : NULL;
            key[i] = m && m->cpu->net_receive_self
                         ? user_point_key(d->groups, d->n_groups, m) : -1;
            if (m && m->cpu->net_receive_self && key[i] < 0) {
                free(key);
                return hb_fail(HB_ERR_NOT_SUPPORTED, "GPU simulation: %s's events go the "
                               "self-events' way (net_send, net_move, WATCH, FOR_NETCONS or "
                               "net_event) and it is a built-in catalogue's; expected a user "
                               "catalogue built by build-catalogue --cuda", m->name);
            }
        }
        st = hb_cuda_events_set_self(s->events, d->self_events, key);
        free(key);
        if (st != HB_SUCCESS) return st;
    }
    if (d->table && (st = upload(&s->table, d->table, 6 * (size_t)HB_HH_TABLE_STRIDE)) != HB_SUCCESS)
        return st;
    const size_t np = (size_t)d->n_probes;
    if ((st = upload(&s->probe_group, d->probe_group, np)) != HB_SUCCESS ||
        (st = upload(&s->probe_index, d->probe_index, np)) != HB_SUCCESS ||
        (st = upload(&s->probe_detect, d->probe_detect, np)) != HB_SUCCESS ||
        (st = upload(&s->probe_threshold, d->probe_threshold, np)) != HB_SUCCESS ||
        (st = upload(&s->above, (const unsigned char *)NULL, np)) != HB_SUCCESS ||
        (st = upload(&s->v_prev, (const double *)NULL, np)) != HB_SUCCESS)
        return st;
    s->chunk = chunk_steps(d->n_probes, d->sample_every);
    s->record_every = 1;
    s->spike_cap = s->chunk / 2 + 1;
    s->sample_cap = (int)(s->chunk / d->sample_every + 1);
    if ((st = upload(&s->rec, (const double *)NULL, (size_t)s->sample_cap * np)) != HB_SUCCESS ||
        (st = upload(&s->spk, (const double *)NULL, (size_t)s->spike_cap * np)) != HB_SUCCESS ||
        (st = upload(&s->spk_count, (const int *)NULL, np)) != HB_SUCCESS)
        return st;
    CUDA_CHECK(cudaMemset(s->spk_count, 0, (np ? np : 1) * sizeof(int)));
    /* A drain copies whole rows of slots; those past a probe's count are never read, but
     * are copied, so they hold defined bytes (compute-sanitizer's initcheck) */
    CUDA_CHECK(cudaMemset(s->spk, 0, (np ? (size_t)s->spike_cap * np : 1) * sizeof(double)));
    s->h_rec = (double *)malloc(((size_t)s->sample_cap * np + 1) * sizeof(double));
    s->h_spk = (double *)malloc(((size_t)s->spike_cap * np + 1) * sizeof(double));
    s->h_count = (int *)calloc(np + 1, sizeof(int));
    s->h_sample_step = (long *)malloc(((size_t)s->sample_cap + 1) * sizeof(long));
    /* at most CHUNK_MAX checks a chunk: their numbers fit the key's 64 - CHECK_SHIFT bits */
    s->h_check_step = (long *)malloc(((size_t)s->chunk + 1) * sizeof(long));
    s->h_fault = (unsigned long long *)malloc(((size_t)d->n_groups + 1) * sizeof *s->h_fault);
    if ((st = upload(&s->fault, (const unsigned long long *)NULL, (size_t)d->n_groups)) != HB_SUCCESS)
        return st;
    CUDA_CHECK(cudaMemset(s->fault, 0xff, (size_t)d->n_groups * sizeof *s->fault));
    if (!s->h_rec || !s->h_spk || !s->h_count || !s->h_sample_step || !s->h_check_step ||
        !s->h_fault)
        return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory for %zu probes", np);
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_sim_create(hb_cuda_context_t *ctx, const hb_sim_desc_t *desc,
                                          int tree_tile, hb_cuda_sim_t **out)
{
    if (!ctx || !desc || !out) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_create: NULL argument");
    *out = NULL;
    hb_cuda_sim_t *s = (hb_cuda_sim_t *)calloc(1, sizeof *s);
    if (!s) return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory");
    s->tree_tile = tree_tile;
    size_t free0 = 0, free1 = 0, total = 0;
    const int measured = cudaSetDevice(desc->device) == cudaSuccess &&
                         cudaMemGetInfo(&free0, &total) == cudaSuccess;
    hb_status_t st = create(s, desc);
    /* what the device gave it (its allocations, at the device's granularity) */
    if (st == HB_SUCCESS && measured && cudaMemGetInfo(&free1, &total) == cudaSuccess &&
        free1 < free0)
        s->device_bytes = free0 - free1;
    if (st != HB_SUCCESS) {
        hb_cuda_sim_destroy(s);
        return st;
    }
    *out = s;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_sim_set_state(hb_cuda_sim_t *s, int g, const double *v,
                                             const double *hh_state)
{
    if (!s || g < 0 || g >= s->n_groups || !v || !hh_state)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_set_state: bad argument");
    CUDA_CHECK(cudaSetDevice(s->device));
    const dgroup_t *dg = &s->groups[g];
    CUDA_CHECK(cudaMemcpy(dg->k.v, v, dg->size * sizeof(double), cudaMemcpyHostToDevice));
    if (dg->hh)
        CUDA_CHECK(cudaMemcpy(dg->k.hh_state, hh_state, dg->hh * 3 * sizeof(double),
                              cudaMemcpyHostToDevice));
    if (dg->syn_values)
        CUDA_CHECK(cudaMemcpy(dg->k.syn_state, dg->host_syn_state,
                              dg->syn_values * sizeof(double), cudaMemcpyHostToDevice));
    const hb_step_cat_t *hc = dg->cat.host; /* the catalogue state hb_sim_init set */
    for (int q = 0; hc && q < hc->n_mech; q++) {
        const hb_step_cat_mech_t *hm = &hc->mech[q];
        const size_t n = hm->inst_start[dg->k.blocks] * (size_t)hm->mech->n_field *
                         (size_t)dg->k.width;
        CUDA_CHECK(cudaMemcpy(dg->cat.mech[q].field, hm->field, n * sizeof(double),
                              cudaMemcpyHostToDevice));
    }
    for (int x = 0; hc && x < hc->n_ion; x++) {
        const hb_step_ion_t *hi = &hc->ion[x], *di = &dg->cat.ion[x];
        const size_t bytes = dg->size * sizeof(double);
        CUDA_CHECK(cudaMemcpy(di->e, hi->e, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(di->ci, hi->ci, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(di->co, hi->co, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(di->i, hi->i, bytes, cudaMemcpyHostToDevice));
        CUDA_CHECK(cudaMemcpy(di->didv, hi->didv, bytes, cudaMemcpyHostToDevice));
    }
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_sim_set_probes(hb_cuda_sim_t *s, const unsigned char *above,
                                              const double *v_prev)
{
    if (!s || !above || !v_prev) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_set_probes: NULL argument");
    CUDA_CHECK(cudaSetDevice(s->device));
    const size_t np = (size_t)s->n_probes;
    CUDA_CHECK(cudaMemset(s->fault, 0xff, (size_t)s->n_groups * sizeof *s->fault));
    if (!np) return HB_SUCCESS;
    CUDA_CHECK(cudaMemcpy(s->above, above, np, cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemcpy(s->v_prev, v_prev, np * sizeof(double), cudaMemcpyHostToDevice));
    CUDA_CHECK(cudaMemset(s->spk_count, 0, np * sizeof(int)));
    return HB_SUCCESS;
}

extern "C" hb_cuda_events_t *hb_cuda_sim_events(hb_cuda_sim_t *s)
{
    return cudaSetDevice(s->device) == cudaSuccess ? s->events : NULL;
}

/* The chunk's first fault (h_fault, after a drain's copy): 1 and *fault when a check found a
 * non-finite voltage; the earliest check, then the smallest group, cell and node. */
static int chunk_fault(const hb_cuda_sim_t *s, hb_sim_fault_t *fault)
{
    int best = -1;
    for (int g = 0; g < s->n_groups; g++)
        if (s->h_fault[g] != NO_FAULT &&
            (best < 0 || (s->h_fault[g] >> CHECK_SHIFT) < (s->h_fault[best] >> CHECK_SHIFT)))
            best = g;
    if (best < 0) return 0;
    const unsigned long long key = s->h_fault[best];
    const unsigned long long where = key & ((1ULL << CHECK_SHIFT) - 1);
    const unsigned long long m = (unsigned long long)s->groups[best].k.m;
    fault->step = s->h_check_step[key >> CHECK_SHIFT];
    fault->group = best;
    fault->slot = (int)(where / m);
    fault->node = (int)(where % m);
    return 1;
}

/* Copies a finished chunk to the host and hands it to the sink; at a fault only what was
 * recorded up to its step, then HB_ERR_NONFINITE. */
static hb_status_t drain(hb_cuda_sim_t *s, int n_samples, int n_checks, int n_rows,
                         hb_sim_sink_t sink, void *user, hb_sim_fault_t *fault)
{
    const size_t np = (size_t)s->n_probes;
    if (n_rows)
        CUDA_CHECK(cudaMemcpyAsync(s->h_rec_values, s->rec_values,
                                   (size_t)n_rows * (size_t)s->n_records * sizeof(double),
                                   cudaMemcpyDeviceToHost, s->stream));
    if (n_checks)
        CUDA_CHECK(cudaMemcpyAsync(s->h_fault, s->fault, (size_t)s->n_groups * sizeof *s->fault,
                                   cudaMemcpyDeviceToHost, s->stream));
    if (np) {
        CUDA_CHECK(cudaMemcpyAsync(s->h_count, s->spk_count, np * sizeof(int),
                                   cudaMemcpyDeviceToHost, s->stream));
        if (n_samples)
            CUDA_CHECK(cudaMemcpyAsync(s->h_rec, s->rec, (size_t)n_samples * np * sizeof(double),
                                       cudaMemcpyDeviceToHost, s->stream));
    }
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    int most = 0;
    for (size_t p = 0; p < np; p++) most = s->h_count[p] > most ? s->h_count[p] : most;
    if (most > s->spike_cap) /* cannot happen: a probe spikes at most every other step */
        return hb_fail(HB_ERR_BACKEND, "GPU simulation: %d spikes at one probe in a chunk of %d steps",
                       most, s->chunk);
    if (most) {
        CUDA_CHECK(cudaMemcpyAsync(s->h_spk, s->spk, (size_t)most * np * sizeof(double),
                                   cudaMemcpyDeviceToHost, s->stream));
        CUDA_CHECK(cudaMemsetAsync(s->spk_count, 0, np * sizeof(int), s->stream));
        CUDA_CHECK(cudaStreamSynchronize(s->stream));
    }
    const int failed = n_checks && chunk_fault(s, fault);
    if (failed) { /* nothing recorded after the fault's step */
        const double t = (double)fault->step * s->dt;
        while (n_samples > 0 && s->h_sample_step[n_samples - 1] > fault->step) n_samples--;
        while (n_rows > 0 && s->h_record_step[n_rows - 1] > fault->step) n_rows--;
        for (size_t p = 0; p < np; p++)
            while (s->h_count[p] > 0 && s->h_spk[(size_t)(s->h_count[p] - 1) * np + p] > t)
                s->h_count[p]--;
    }
    hb_status_t st = sink(user, n_samples, s->h_sample_step, s->h_rec, s->h_count, s->h_spk);
    if (st == HB_SUCCESS && n_rows)
        st = s->record_sink(s->record_user, n_rows, s->h_record_step, s->h_rec_values);
    return st != HB_SUCCESS ? st : failed ? HB_ERR_NONFINITE : HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_sim_advance(hb_cuda_sim_t *s, long step0, long steps,
                                           hb_sim_sink_t sink, void *user,
                                           hb_sim_fault_t *fault)
{
    if (!s || !sink || steps < 0 || !fault)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_advance: bad argument");
    CUDA_CHECK(cudaSetDevice(s->device));
    if (s->n_weights && *s->n_weights != s->weights_on_device)
        return hb_fail(HB_ERR_INVALID_VALUE, "GPU simulation: %d weight vectors, %d of them on "
                       "the device; expected hb_sim_init after the last hb_sim_add_weights",
                       *s->n_weights, s->weights_on_device);
    hb_status_t st = HB_SUCCESS;
    hb_step_params_t p;
    p.dt = s->dt;
    p.factor = s->factor;
    p.table = s->table;
    p.q10 = s->q10;
    for (long done = 0; done < steps && st == HB_SUCCESS;) {
        const long k = steps - done < s->chunk ? steps - done : s->chunk;
        int n_samples = 0, n_checks = 0, n_rows = 0;
        for (long j = 0; j < k && st == HB_SUCCESS; j++) {
            const long step = step0 + done + j; /* steps done before this one */
            p.t_mid = ((double)step + 0.5) * s->dt;
            st = hb_cuda_events_deliver(s->events, step);
            for (int g = 0; g < s->n_groups && st == HB_SUCCESS; g++)
                st = launch_step(s, &s->groups[g], &p);
            if (st == HB_SUCCESS) /* WATCH (self-events): after the step, as the CPU's */
                st = hb_cuda_events_watch(s->events, (double)(step + 1) * s->dt);
            if ((step + 1) % s->check_every == 0 || step + 1 == s->check_last) {
                s->h_check_step[n_checks] = step + 1;
                for (int g = 0; g < s->n_groups && st == HB_SUCCESS; g++)
                    st = launch_check(s, g, n_checks);
                n_checks++;
            }
            double *row = NULL;
            if ((step + 1) % s->sample_every == 0) {
                s->h_sample_step[n_samples] = step + 1;
                row = s->rec + (size_t)n_samples * (size_t)s->n_probes;
                n_samples++;
            }
            if (st == HB_SUCCESS && s->n_probes)
                st = launch_probes(s, (double)(step + 1) * s->dt, row);
            if (st == HB_SUCCESS && s->n_records && (step + 1) % s->record_every == 0) {
                s->h_record_step[n_rows] = step + 1;
                st = launch_records(s, s->rec_values + (size_t)n_rows * (size_t)s->n_records);
                n_rows++;
            }
        }
        if (st == HB_SUCCESS) st = drain(s, n_samples, n_checks, n_rows, sink, user, fault);
        done += k;
    }
    return st;
}

extern "C" hb_status_t hb_cuda_sim_set_records(hb_cuda_sim_t *s, int n,
                                               const hb_rec_sample_t *records, long every,
                                               hb_sim_record_sink_t sink, void *user)
{
    if (!s || n < 0 || (n && (!records || every < 1 || !sink)))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_set_records: bad argument");
    for (int r = 0; r < n; r++)
        if (records[r].group < 0 || records[r].group >= s->n_groups)
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_set_records: record %d in group %d "
                           "of %d", r, records[r].group, s->n_groups);
    CUDA_CHECK(cudaSetDevice(s->device));
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    cudaFree(s->records);
    cudaFree(s->rec_values);
    free(s->h_rec_values);
    free(s->h_record_step);
    s->records = NULL;
    s->rec_values = s->h_rec_values = NULL;
    s->h_record_step = NULL;
    s->n_records = 0;
    s->record_every = 1;
    if (!n) return HB_SUCCESS;
    /* the chunk shortened until its rows fit the budget too (the spike and sample room, made
     * for a longer chunk, stays enough) */
    while (s->chunk > 2 &&
           (size_t)n * (size_t)(s->chunk / every + 1) * sizeof(double) > CHUNK_BUDGET)
        s->chunk /= 2;
    const int cap = (int)(s->chunk / every + 1);
    hb_status_t st;
    /* a catalogue value (HB_REC_HOST) read at its device address */
    hb_rec_sample_t *mapped = (hb_rec_sample_t *)malloc((size_t)n * sizeof *mapped);
    if (!mapped) return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory for %d records", n);
    memcpy(mapped, records, (size_t)n * sizeof *mapped);
    for (int r = 0; r < n; r++) {
        if (mapped[r].kind != HB_REC_HOST) continue;
        mapped[r].at = cat_device_address(&s->groups[mapped[r].group], records[r].at);
        if (!mapped[r].at) {
            free(mapped);
            return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_set_records: record %d reads no "
                           "catalogue array of group %d", r, records[r].group);
        }
    }
    st = upload(&s->records, (const hb_rec_sample_t *)mapped, (size_t)n);
    free(mapped);
    if (st != HB_SUCCESS ||
        (st = upload(&s->rec_values, (const double *)NULL, (size_t)cap * (size_t)n)) != HB_SUCCESS)
        return st;
    s->h_rec_values = (double *)malloc((size_t)cap * (size_t)n * sizeof(double));
    s->h_record_step = (long *)malloc(((size_t)cap + 1) * sizeof(long));
    if (!s->h_rec_values || !s->h_record_step)
        return hb_fail(HB_ERR_ALLOC, "GPU simulation: out of host memory for %d records", n);
    s->n_records = n;
    s->record_cap = cap;
    s->record_every = every;
    s->record_sink = sink;
    s->record_user = user;
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_sim_get_v(hb_cuda_sim_t *s, int g, size_t first, size_t count,
                                         double *dst)
{
    if (!s || g < 0 || g >= s->n_groups || !dst || first + count > s->groups[g].size)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_get_v: bad argument");
    CUDA_CHECK(cudaSetDevice(s->device));
    CUDA_CHECK(cudaStreamSynchronize(s->stream));
    CUDA_CHECK(cudaMemcpy(dst, s->groups[g].k.v + first, count * sizeof(double),
                          cudaMemcpyDeviceToHost));
    return HB_SUCCESS;
}

extern "C" size_t hb_cuda_sim_device_bytes(const hb_cuda_sim_t *s) { return s ? s->device_bytes : 0; }

extern "C" hb_status_t hb_cuda_sim_clear_events(hb_cuda_sim_t *s)
{
    if (!s) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cuda_sim_clear_events: sim is NULL");
    CUDA_CHECK(cudaSetDevice(s->device));
    hb_status_t st = hb_cuda_events_clear(s->events);
    const int n = s->n_weights ? *s->n_weights : 0;
    if (st == HB_SUCCESS && n > 0)
        st = hb_cuda_events_set_weights(s->events, (size_t)n, *s->weights);
    if (st == HB_SUCCESS && n > 0 && s->netcon_head && s->netcon_next) /* FOR_NETCONS' lists */
        st = hb_cuda_events_set_netcons(s->events, (size_t)n, *s->netcon_head, *s->netcon_next);
    if (st == HB_SUCCESS) s->weights_on_device = n;
    return st;
}

extern "C" hb_status_t hb_cuda_sim_set_connections(hb_cuda_sim_t *s, size_t n,
                                                   const hb_sim_engine_conn_t *conns,
                                                   long step_limit)
{
    size_t free0 = 0, free1 = 0, total = 0;
    const int measured = cudaSetDevice(s->device) == cudaSuccess &&
                         cudaMemGetInfo(&free0, &total) == cudaSuccess;
    const hb_status_t st = hb_cuda_events_set_connections(s->events, n, conns, step_limit);
    if (st == HB_SUCCESS && measured && cudaMemGetInfo(&free1, &total) == cudaSuccess &&
        free1 < free0)
        s->device_bytes += free0 - free1;
    return st;
}
