/*
 * Ours for few systems, and for many: a block per team of adjacent systems staged on chip, the
 * tree's subtrees shared out stage by stage (common/hines_branched.h); the plan rule choosing
 * the team size, threads and chain splits; and SHAPES of mixed batches (hb_cuda_shapes_*,
 * cuda/hines_branched_cuda.h), the same stages for several trees in one launch.
 */
#include <cuda_runtime.h>
#include <string.h>

extern "C" {
#include "common/hines_branched.h"
}
#include "cuda/cuda_check.h"
#include "cuda/hines_branched_cuda.h"
#include "cuda/hines_cuda.h"

#define BRANCHED_THREADS 256 /* threads per block of the branched kernel (lanes x workers) */
#define BRANCHED_WIDE_THREADS 512 /* its wide blocks, for latency-bound plans (docs/gpu.md) */


/*
 * Ours for few systems, and for many: a team is L = lanes adjacent systems, staged in shared
 * memory (common/hines_branched.h, hb_branched_layout); thread t works on lane t % L, and the
 * block's blockDim.x / L workers share out each stage's tasks. Only x goes back to memory.
 * Blocks are persistent: block k solves teams k, k + gridDim.x, ..., so the tables, the shared
 * u and l of a uniform batch, and the sink and zero nodes are staged once a block. (A second
 * team buffer, filled by cp.async while a team is solved, halves the teams on chip and was
 * slower at every point measured on an H100: docs/design-notes.md, "Hines GPU kernels".)
 * The stage loops run in a function of their own, as GROUPED's level loops (multi_cuda.cu
 * says why).
 */
template <bool GLOBAL_TABLES, bool SPLIT>
__device__ __noinline__ void branched_stages_of(int m, int couplings, int lanes, int uniform,
                                                int words, const int *__restrict__ global_tables)
{
    extern __shared__ double team_smem[];
    const hb_branched_layout_t a =
        hb_branched_layout(m, couplings, lanes, GLOBAL_TABLES ? 0 : (size_t)words, uniform);
    const int k = threadIdx.x % lanes, first = threadIdx.x / lanes, workers = blockDim.x / lanes;
    /* staged tables: shared-memory loads; a cell too large for them reads them from memory */
    const hb_branched_tables_t t = hb_branched_tables_at(
        m, GLOBAL_TABLES ? global_tables : (const int *)(team_smem + a.tables));
    const hb_branched_lane_t v = hb_branched_lane(team_smem, &a, lanes, uniform, k);
    const int idle = first >= workers; /* SHAPES: lanes need not divide the block */
    for (int s = 0; s < t.n_stages; ++s) {
        if (!idle) hb_branched_eliminate_stage(&t, &v, s, first, workers, SPLIT);
        __syncthreads();
    }
    for (int s = t.n_stages - 1; s >= 0; --s) {
        if (!idle) hb_branched_substitute_stage(&t, &v, s, first, workers, SPLIT);
        __syncthreads();
    }
}

/* SHAPES's choice among the four at run time, per class: tables in memory (global_tables)
 * or staged (NULL); a plan with split chains has coupling nodes, one without runs row loops
 * free of them. */
__device__ __forceinline__ void branched_stages(int m, int couplings, int lanes, int uniform,
                                                int words, const int *global_tables)
{
    const int *g = global_tables;
    if (g && couplings) branched_stages_of<true, true>(m, couplings, lanes, uniform, words, g);
    else if (g) branched_stages_of<true, false>(m, couplings, lanes, uniform, words, g);
    else if (couplings) branched_stages_of<false, true>(m, couplings, lanes, uniform, words, g);
    else branched_stages_of<false, false>(m, couplings, lanes, uniform, words, g);
}

/* Row i of lane v's system (its elements at g in the arrays) into shared memory by cp.async:
 * d and rhs, and u and l unless the batch is uniform. */
__device__ __forceinline__ void branched_copy_row(const hb_branched_lane_t *v, int i, size_t g,
                                                  int uniform, const double *__restrict__ u,
                                                  const double *__restrict__ l,
                                                  const double *__restrict__ d,
                                                  const double *__restrict__ rhs)
{
    double *dr = v->dr + i * v->dr_row;
    cp_async8(dr, d + g);
    cp_async8(dr + 1, rhs + g);
    if (!uniform) {
        double *ul = v->ul + i * v->ul_row;
        cp_async8(ul, u + g);
        cp_async8(ul + 1, l + g);
    }
}

/* This thread's share of team `team`'s rows, copied into shared memory (cp.async, one group).
 * A missing system (the last team's) is a copy of the team's first. */
__device__ __forceinline__ void branched_load(const hb_branched_layout_t *a, int m, int lanes,
                                              int block, int uniform, int team,
                                              int count, const double *__restrict__ u,
                                              const double *__restrict__ l,
                                              const double *__restrict__ d,
                                              const double *__restrict__ rhs)
{
    extern __shared__ double team_smem[];
    const int workers = blockDim.x / lanes, s0 = team * lanes;
    int k, i0;
    hb_hines_branched_thread(threadIdx.x, lanes, workers, block, &k, &i0);
    const hb_branched_lane_t v = hb_branched_lane(team_smem, a, lanes, uniform, k);
    const size_t base = system_base(m, block, s0 + k < count ? s0 + k : s0), B = (size_t)block;
#pragma unroll 4
    for (int i = i0; i < m && i0 < workers; i += workers)
        branched_copy_row(&v, i, base + (size_t)i * B, uniform, u, l, d, rhs);
    cp_async_commit();
}

/* A block's once-per-plan staging: the tables (one image, 16 bytes a load), the shared u and l
 * of a uniform batch, the sink and zero nodes of every lane. */
__device__ __forceinline__ void branched_stage_plan(const hb_branched_layout_t *a, int m,
                                                    int lanes, int uniform,
                                                    const int *__restrict__ tables, int words,
                                                    const double *__restrict__ cu,
                                                    const double *__restrict__ cl)
{
    extern __shared__ double team_smem[];
    int *staged = (int *)(team_smem + a->tables);
    const int quads = words / 4;
    for (int j = threadIdx.x; j < quads; j += blockDim.x)
        ((int4 *)staged)[j] = __ldg(&((const int4 *)tables)[j]);
    for (int j = 4 * quads + threadIdx.x; j < words; j += blockDim.x) staged[j] = __ldg(&tables[j]);
    for (int i = threadIdx.x; uniform && i < m; i += blockDim.x)
        ((double2 *)(team_smem + a->ul))[i] = make_double2(__ldg(&cu[i]), __ldg(&cl[i]));
    for (int j = threadIdx.x; j < 2 * lanes; j += blockDim.x)
        ((double2 *)team_smem)[(size_t)m * lanes + j] = make_double2(0.0, 0.0);
}

/* x of this thread's share of team `team` written back (after branched_stages): lane k, rows
 * i0, i0 + workers, ... (hb_hines_branched_thread). */
__device__ __forceinline__ void branched_store(const hb_branched_layout_t *a, int m, int lanes,
                                               int block, int uniform, int team, int count,
                                               double *__restrict__ rhs, int k, int i0,
                                               int workers)
{
    extern __shared__ double team_smem[];
    const int s = team * lanes + k;
    if (s >= count || i0 >= workers) return; /* i0 >= workers: an idle thread (SHAPES) */
    const hb_branched_lane_t v = hb_branched_lane(team_smem, a, lanes, uniform, k);
    const size_t base = system_base(m, block, s), B = (size_t)block;
#pragma unroll 4
    for (int i = i0; i < m; i += workers) rhs[base + (size_t)i * B] = v.dr[i * v.dr_row + 1];
}

/* branched_store of team `team`, and branched_load of team `next` into the same slots, row by
 * row: a thread loads exactly the slots it wrote back (hb_hines_branched_thread), so no barrier
 * parts the two, and the next team's copies are in flight while x goes out. A slot's x is in a
 * register (the store waits for it) before its cp.async is issued. */
__device__ __forceinline__ void branched_store_load(
    const hb_branched_layout_t *a, int m, int lanes, int block, int uniform, int team, int next,
    int count, const double *__restrict__ u, const double *__restrict__ l,
    const double *__restrict__ d, double *__restrict__ rhs, int k, int i0, int workers)
{
    extern __shared__ double team_smem[];
    const hb_branched_lane_t v = hb_branched_lane(team_smem, a, lanes, uniform, k);
    const int s = team * lanes + k, s_next = next * lanes + k, s0 = next * lanes;
    const int active = s < count;
    const size_t B = (size_t)block, base = system_base(m, block, active ? s : team * lanes);
    const size_t base_next = system_base(m, block, s_next < count ? s_next : s0);
#pragma unroll 4
    for (int i = i0; i < m && i0 < workers; i += workers) { /* i0 >= workers: idle (SHAPES) */
        double *dr = v.dr + i * v.dr_row;
        const double x = dr[1];
        if (active) rhs[base + (size_t)i * B] = x;
        branched_copy_row(&v, i, base_next + (size_t)i * B, uniform, u, l, d, rhs);
    }
    cp_async_commit();
}

/* SPLIT: the plan has split chains (couplings > 0): one kernel each, so that a plan without
 * keeps the row loops and registers it had before split chains existed. */
template <bool SPLIT>
__global__ void __launch_bounds__(BRANCHED_WIDE_THREADS)
    branched_kernel(const int *__restrict__ tables, int words, int couplings, int m, int lanes,
                    int count, int block, int uniform, const double *__restrict__ u,
                    const double *__restrict__ l, const double *__restrict__ d,
                    double *__restrict__ rhs, const double *__restrict__ cu,
                    const double *__restrict__ cl)
{
    extern __shared__ double team_smem[];
    const hb_branched_layout_t a = hb_branched_layout(m, couplings, lanes, (size_t)words, uniform);
    const int teams = (count + lanes - 1) / lanes;
    int team = blockIdx.x;
    if (team < teams) branched_load(&a, m, lanes, block, uniform, team, count, u, l, d, rhs);
    branched_stage_plan(&a, m, lanes, uniform, tables, words, cu, cl);
    const int workers = blockDim.x / lanes;
    int k, i0;
    hb_hines_branched_thread(threadIdx.x, lanes, workers, block, &k, &i0);
    for (; team < teams; team += gridDim.x) {
        CP_ASYNC_WAIT(0);
        __syncthreads();
        branched_stages_of<false, SPLIT>(m, couplings, lanes, uniform, words, NULL);
        const int next = team + (int)gridDim.x;
        if (next < teams)
            branched_store_load(&a, m, lanes, block, uniform, team, next, count, u, l, d, rhs, k,
                                i0, workers);
        else
            branched_store(&a, m, lanes, block, uniform, team, count, rhs, k, i0, workers);
    }
}

/*
 * SHAPES of mixed batches (common/multi_shapes.h): the classes of one tier, each a same-tree
 * batch with its own plan and lanes, in one launch. Teams are numbered class after class;
 * block k solves teams k, k + gridDim.x, ..., staging a class's tables when it enters the
 * class (teams rise, so at most once per class). A class's team is one contiguous range
 * (block = lanes); u and l are every cell's own.
 */
__global__ void __launch_bounds__(BRANCHED_THREADS)
    shapes_kernel(const hb_cuda_shape_t *__restrict__ classes, int n_classes, int teams,
                  const int *__restrict__ tables, const double *__restrict__ u,
                  const double *__restrict__ l, const double *__restrict__ d,
                  double *__restrict__ rhs)
{
    int c = -1, loaded = -1; /* loaded: the team whose rows are already on their way in */
    hb_cuda_shape_t k = {};
    hb_branched_layout_t a = {};
    for (int team = blockIdx.x; team < teams; team += gridDim.x) {
        int next = c < 0 ? 0 : c;
        while (next + 1 < n_classes && classes[next + 1].team_first <= team) ++next;
        __syncthreads(); /* the previous team's x read out before its buffer is reused */
        if (next != c) {
            c = next;
            k = classes[c];
            a = hb_branched_layout(k.m, k.couplings, k.lanes, k.global_tables ? 0 : (size_t)k.words,
                                   0);
            branched_stage_plan(&a, k.m, k.lanes, 0, tables + k.table_off,
                                k.global_tables ? 0 : k.words, NULL, NULL);
        }
        const int local = team - k.team_first;
        if (loaded != team)
            branched_load(&a, k.m, k.lanes, k.lanes, 0, local, k.cells, u + k.base, l + k.base,
                          d + k.base, rhs + k.base);
        CP_ASYNC_WAIT(0);
        __syncthreads();
        branched_stages(k.m, k.couplings, k.lanes, 0, k.words,
                        k.global_tables ? tables + k.table_off : NULL);
        const int workers = blockDim.x / k.lanes;
        int lane, i0;
        hb_hines_branched_thread(threadIdx.x, k.lanes, workers, k.lanes, &lane, &i0);
        /* the block's next team in the same class: its rows go in as x goes out (a thread
         * loads the slots it wrote back, so no barrier parts the two) */
        const int after = team + (int)gridDim.x;
        const int class_end = c + 1 < n_classes ? classes[c + 1].team_first : teams;
        if (after < class_end) {
            branched_store_load(&a, k.m, k.lanes, k.lanes, 0, local, after - k.team_first, k.cells,
                                u + k.base, l + k.base, d + k.base, rhs + k.base, lane, i0,
                                workers);
            loaded = after;
        } else {
            branched_store(&a, k.m, k.lanes, k.lanes, 0, local, k.cells, rhs + k.base, lane, i0,
                           workers);
        }
    }
}

extern "C" hb_status_t hb_cuda_shapes_per_sm(int threads, size_t smem, size_t smem_optin,
                                             int *per_sm)
{
    *per_sm = 0;
    CUDA_CHECK(hb_cuda_allow_smem((const void *)shapes_kernel, smem_optin));
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(per_sm, shapes_kernel, threads, smem));
    return HB_SUCCESS;
}

extern "C" hb_status_t hb_cuda_shapes_launch(const hb_cuda_shape_t *classes, int n_classes,
                                             int teams, int grid, int threads, size_t smem,
                                             const int *tables, const double *u, const double *l,
                                             const double *d, double *rhs, size_t smem_optin,
                                             void *stream)
{
    if (threads < 1 || threads > BRANCHED_THREADS)
        return hb_fail(HB_ERR_INVALID_VALUE, "shapes: %d threads; expected 1 to %d", threads,
                       BRANCHED_THREADS);
    CUDA_CHECK(hb_cuda_allow_smem((const void *)shapes_kernel, smem_optin));
    shapes_kernel<<<grid, threads, smem, (cudaStream_t)stream>>>(classes, n_classes, teams, tables,
                                                                 u, l, d, rhs);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* The branched kernel's shape                                              */
/* ------------------------------------------------------------------------ */

/*
 * The branched kernel's shape for batches with their own u and l (uniform 0) or shared ones.
 * When one round of blocks holds every team (latency: 256 and 2,560 systems), lanes L (1 to
 * 32; 1 only when 2 systems' rows exceed shared memory) are chosen for the fewest rounds, the
 * smallest L among equals: more workers per system share its branches. Any L, not only
 * powers of two: on an H100, 2,560 systems of 305-319 rows run one round as 256 teams of 10
 * (two 100 KB blocks a multiprocessor), 1.5x faster than two rounds of teams of 4 and 1.2x
 * faster than one round of teams of 20; 256 systems of 300-700 rows run 8-10% faster as teams
 * of 2 than of 4, and 2-7% faster than teams of 1 (docs/design-notes.md, "Hines GPU kernels").
 * With more teams (throughput), teams of 16, unless another power of two holds more systems
 * on chip (76-row cells: 32): on an H100 at 25,600 and 256,000 systems of 305-695 rows, 16 was
 * the fastest of 2-32 lanes, and 6, 12 and 24 (workers astride warps) were 1.3-2.5x slower
 * than 16 (docs/design-notes.md, "Hines GPU kernels"). A block has the most whole
 * workers that fit BRANCHED_THREADS threads, or BRANCHED_WIDE_THREADS for a latency-bound
 * plan with many teams when that keeps its blocks a multiprocessor; a plan is made for each L
 * (and width) tried (its stages depend on the workers). The batch's tuning (backend/tuning.h)
 * may fix them: branched.lanes fixes L, branched.threads the threads and branched.stage_cost
 * and branched.split_rows the plan's stage cost and chain split (experiments);
 * branched.blocks caps the grid (tests: many teams a block). The kernel cannot run when one system exceeds shared memory:
 * lanes stay 0.
 */
/* A plan for `lanes` lanes and `threads` threads, its shared memory and blocks a
 * multiprocessor (0 when it does not fit). */
static hb_status_t branched_plan(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                 int lanes, int threads, int stage_cost, int split_rows,
                                 size_t optin, hb_hines_branched_t *plan, size_t *smem,
                                 int *per_sm)
{
    *per_sm = 0;
    hb_status_t status = hb_hines_branched_build(b->m, parent, lanes, threads / lanes, stage_cost,
                                                 split_rows, plan);
    if (status != HB_SUCCESS) return status;
    *smem = hb_branched_layout(b->m, plan->couplings, lanes, plan->words, uniform).bytes;
    cudaError_t e = *smem <= optin
                        ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(
                              per_sm, plan->couplings ? branched_kernel<true> : branched_kernel<false>,
                              threads, *smem)
                        : cudaSuccess;
    if (e != cudaSuccess) {
        hb_hines_branched_free(plan);
        CUDA_CHECK(e);
    }
    return HB_SUCCESS;
}

/* Plans the same teams again, `threads` threads a block and chains split from `split_rows`,
 * and keeps that plan in *cur where it holds at least `min_per_sm` blocks a multiprocessor
 * (and, with `need_items`, has split chains). A failed plan frees *cur. */
static hb_status_t branched_replan(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                   int lanes, int threads, int stage_cost, int split_rows,
                                   size_t optin, int need_items, int min_per_sm,
                                   branched_config_t *cur)
{
    branched_config_t alt;
    memset(&alt, 0, sizeof alt);
    alt.threads = threads;
    hb_status_t status = branched_plan(b, parent, uniform, lanes, threads, stage_cost,
                                       split_rows, optin, &alt.plan, &alt.smem, &alt.per_sm);
    if (status != HB_SUCCESS) {
        hb_hines_branched_free(&cur->plan);
        return status;
    }
    if ((!need_items || alt.plan.n_items > 0) && alt.per_sm >= min_per_sm) {
        hb_hines_branched_free(&cur->plan);
        *cur = alt;
    } else {
        hb_hines_branched_free(&alt.plan);
    }
    return HB_SUCCESS;
}

static hb_status_t branched_try(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                int throughput, branched_config_t *cfg, long *best_rounds)
{
    /* Throughput: teams of 16 first, others only when they hold more systems on chip. */
    static const int throughput_lanes[] = {16, 32, 8, 4, 2, 1};
    const part_t *p0 = &b->part[0];
    const size_t optin = b->ctx->smem_optin[p0->device];
    const long sms = b->ctx->sm_count[p0->device] > 0 ? b->ctx->sm_count[p0->device] : 1;
    int knob = b->tuning.branched_lanes;
    if (knob < 1 || knob > 32) knob = 0;
    int stage_cost = b->tuning.branched_stage_cost;
    if (stage_cost < 0) stage_cost = HB_BRANCHED_STAGE_COST;
    const int threads_knob = b->tuning.branched_threads;
    /* Split chains: branched.split_rows forces the threshold (0: none); else they are used
     * with few teams (one round: the critical path is the time) in systems of 128 rows or
     * more, and, with many teams, where the plan without them is latency-bound
     * (hb_branched_split_pays). */
    int split_knob = b->tuning.branched_split_rows;
    if (split_knob > 0 && split_knob < HB_BRANCHED_MIN_SPLIT_ROWS) split_knob = -1;
    memset(cfg, 0, sizeof *cfg);
    *best_rounds = 0;
    for (int q = 0; q < (throughput ? 6 : 32); ++q) {
        const int lanes = throughput ? throughput_lanes[q] : 32 - q;
        if (knob && lanes != knob) continue;
        if (!knob && !throughput && lanes < 2 && cfg->plan.lanes >= 2) break;
        if (hb_branched_layout(b->m, 0, lanes, 0, uniform).bytes > optin)
            continue; /* before planning */
        /* All BRANCHED_THREADS: fewer workers, sized to the widest level, were slower on an
         * H100 (docs/gpu.md): the staging loops share the threads. */
        int threads = BRANCHED_THREADS / lanes * lanes;
        if (threads_knob >= lanes && threads_knob <= BRANCHED_WIDE_THREADS &&
            threads_knob % lanes == 0)
            threads = threads_knob;
        const int split_rows =
            split_knob >= 0                                              ? split_knob
            : throughput || b->m < HB_BRANCHED_SPLIT_MIN_ROWS_LATENCY ? 0
                                                                         : HB_BRANCHED_SPLIT_ROWS;
        branched_config_t cand;
        memset(&cand, 0, sizeof cand);
        cand.threads = threads;
        hb_status_t status = branched_plan(b, parent, uniform, lanes, threads, stage_cost,
                                           split_rows, optin, &cand.plan, &cand.smem,
                                           &cand.per_sm);
        const int latency_bound =
            status == HB_SUCCESS && hb_branched_latency_bound(&cand.plan, cand.per_sm);
        /* Split chains where they pay, if the plan still fits twice a multiprocessor. */
        if (status == HB_SUCCESS && split_knob < 0 && throughput &&
            hb_branched_split_pays(&cand.plan, cand.per_sm))
            status = branched_replan(b, parent, uniform, lanes, threads, stage_cost,
                                     HB_BRANCHED_SPLIT_ROWS, optin, 1, 2, &cand);
        /* Wide blocks: a latency-bound plan gets twice the workers when the block still fits
         * as many times a multiprocessor (its teams on chip stay; the extra threads run the
         * stages' other tasks and the copies). */
        if (status == HB_SUCCESS && throughput && latency_bound && !threads_knob)
            status = branched_replan(b, parent, uniform, lanes,
                                     BRANCHED_WIDE_THREADS / lanes * lanes, stage_cost,
                                     cand.plan.n_items ? HB_BRANCHED_SPLIT_ROWS : split_rows,
                                     optin, 0, cand.per_sm, &cand);
        if (status != HB_SUCCESS) {
            hb_hines_branched_free(&cfg->plan);
            memset(cfg, 0, sizeof *cfg);
            return status;
        }
        const long wave = (long)cand.per_sm * sms;
        const long rounds =
            cand.per_sm > 0 ? (ceil_div(p0->count, lanes) + wave - 1) / wave : 0;
        const int better =
            throughput ? (long)lanes * cand.per_sm > (long)cfg->plan.lanes * cfg->per_sm
                       : !cfg->plan.lanes || rounds <= *best_rounds;
        if (cand.per_sm > 0 && better) {
            hb_hines_branched_free(&cfg->plan);
            *cfg = cand;
            *best_rounds = rounds;
        } else {
            hb_hines_branched_free(&cand.plan);
        }
    }
    return HB_SUCCESS;
}

static hb_status_t branched_configure(const hb_cuda_batch_t *b, const int *parent, int uniform,
                                      branched_config_t *cfg)
{
    long rounds = 0;
    hb_status_t status = branched_try(b, parent, uniform, 0, cfg, &rounds);
    if (status != HB_SUCCESS || (cfg->plan.lanes && rounds <= 1)) return status;
    branched_config_t many;
    if ((status = branched_try(b, parent, uniform, 1, &many, &rounds)) != HB_SUCCESS) {
        hb_hines_branched_free(&cfg->plan);
        memset(cfg, 0, sizeof *cfg);
        return status;
    }
    if (many.plan.lanes) {
        hb_hines_branched_free(&cfg->plan);
        *cfg = many;
    }
    return HB_SUCCESS;
}

/* Both shapes of the branched kernel, and their tables on every device. */
hb_status_t hb_cuda_hines_branched_setup(hb_cuda_batch_t *b, const int *parent)
{
    const part_t *p0 = &b->part[0];
    CUDA_CHECK(cudaSetDevice(b->ctx->id[p0->device]));
    for (int split = 0; split < 2; ++split) /* for the occupancy */
        CUDA_CHECK(hb_cuda_allow_smem(
            split ? (const void *)branched_kernel<true> : (const void *)branched_kernel<false>,
            b->ctx->smem_optin[p0->device]));
    hb_status_t status = HB_SUCCESS;
    for (int uniform = 0; uniform < 2 && status == HB_SUCCESS; ++uniform) {
        branched_config_t *cfg = &b->branched[uniform];
        if ((status = branched_configure(b, parent, uniform, cfg)) != HB_SUCCESS || !cfg->plan.lanes)
            continue;
        cfg->max_blocks = b->tuning.branched_blocks;
        const size_t bytes = cfg->plan.words * sizeof(int);
        for (int k = 0; k < b->parts && status == HB_SUCCESS; ++k) {
            part_t *p = &b->part[k];
            cudaError_t e = cudaSetDevice(b->ctx->id[p->device]);
            if (e == cudaSuccess) e = cudaMalloc((void **)&p->branched_tables[uniform], bytes);
            if (e == cudaSuccess)
                e = cudaMemcpy(p->branched_tables[uniform], cfg->plan.tables, bytes,
                               cudaMemcpyHostToDevice);
            if (e != cudaSuccess)
                status = hb_fail(HB_CUDA_STATUS(e), "branched: %zu bytes of plan tables: %s",
                                 bytes, cudaGetErrorString(e));
        }
    }
    return status;
}

hb_status_t hb_cuda_hines_branched(const hb_cuda_batch_t *b, part_t *p)
{
    const int m = b->m;
    const size_t optin = b->ctx->smem_optin[p->device];
    cudaStream_t stream = b->ctx->stream[p->device];
    const int uniform = p->uniform ? 1 : 0;
    const branched_config_t *cfg = &b->branched[uniform];
    const hb_hines_branched_t *br = &cfg->plan;
    const int teams = ceil_div(p->count, br->lanes);
    int grid = cfg->per_sm * b->ctx->sm_count[p->device]; /* persistent: one wave */
    if (cfg->max_blocks > 0 && cfg->max_blocks < grid) grid = cfg->max_blocks;
    void (*kernel)(const int *, int, int, int, int, int, int, int, const double *,
                   const double *, const double *, double *, const double *,
                   const double *) =
        br->couplings ? branched_kernel<true> : branched_kernel<false>;
    CUDA_CHECK(hb_cuda_allow_smem((const void *)kernel, optin));
    kernel<<<teams < grid ? teams : grid, cfg->threads, cfg->smem, stream>>>(
        p->branched_tables[uniform], (int)br->words, br->couplings, m, br->lanes, p->count,
        p->block, uniform, p->u, p->l, p->d, p->rhs, p->cu, p->cl);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}
