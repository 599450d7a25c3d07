/*
 * CUDA backend of mixed-morphology batches (docs/multi.md). Kernels:
 *   level_eliminate / level_substitute   LEVELS, the paper's: one launch per level and pass,
 *                                        a thread per branch of the level
 *   grouped                              GROUPED, ours: a block per group of cells; the group
 *                                        is copied to shared memory (u, l, d, rhs and its row
 *                                        table), its levels run there separated by
 *                                        __syncthreads, x is copied back: one launch, 40 bytes
 *                                        of memory traffic per row. A group too large for the
 *                                        block's shared memory runs in global memory.
 *   per_cell                             PER_CELL, the paper's Figure 6 baseline: a thread per
 *                                        cell, Algorithm 1, cells interleaved row by row
 * Every kernel calls the inline per-branch (per-cell) functions of common/multi_arith.h, the
 * ones the CPU backends run, so CI tests this arithmetic; no atomics: a branch reads finished levels
 * and writes only its own slots, so every run gives the same bits.
 */
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern "C" {
#include "backend/multi_ops.h"
#include "common/multi_arith.h"
#include "common/multi_shapes.h"
#include "common/status.h"
}
#include "cuda/backend_cuda.h"
#include "cuda/cuda_check.h"

/* A batch's state on the device (hb_cuda_multi_ops): device 0, a stream of its own, one
 * layout at a time (the algorithm's); the core maps its host copy onto it at upload and
 * download. */
typedef struct hb_cuda_multi hb_cuda_multi_t;
static void hb_cuda_multi_destroy(hb_cuda_multi_t *dm);

#define LEVEL_THREADS 128
#define GROUP_THREADS 256
#define GROUP_BLOCKS_PER_SM 3 /* the group size leaves shared memory, and registers, for three */
#define CELL_THREADS 128

enum { LAYOUT_NONE = 0, LAYOUT_PLAN = 1, LAYOUT_CELLS = 2, LAYOUT_SHAPES = 3 };

/*
 * The levels of view v, leaves to root and back, a block barrier after each: the block's
 * workers first, first + stride, ... share out each level's branches (and the chunks of
 * split branches, before the levels and after). Every thread of the block calls it.
 */
__device__ __forceinline__ void hb_cuda_levels_of_view(const hb_multi_view_t *v, int first,
                                                       int stride)
{
    if (v->n_split > 0) {
        hb_multi_chunk_pass(v, first, stride, 0);
        __syncthreads();
    }
    for (int h = 0; h < v->n_levels; ++h) {
        for (int b = v->level_branch[h] + first; b < v->level_branch[h + 1]; b += stride)
            hb_multi_eliminate(v, h, b);
        __syncthreads();
    }
    for (int h = v->n_levels - 1; h >= 0; --h) {
        for (int b = v->level_branch[h] + first; b < v->level_branch[h + 1]; b += stride)
            hb_multi_substitute(v, h, b);
        __syncthreads();
    }
    if (v->n_split > 0) {
        hb_multi_chunk_pass(v, first, stride, 1);
        __syncthreads();
    }
}

struct hb_cuda_multi {
    int device;
    cudaStream_t stream;
    int sm_count;
    size_t smem_optin;   /* largest dynamic shared memory per block [bytes] */
    size_t smem_per_sm;  /* shared memory of a multiprocessor [bytes] */
    size_t smem_cap;     /* GROUPED: shared memory a block may take (set with the group size) */
    int layout;          /* LAYOUT_* */
    size_t size;         /* elements per array */
    double *u, *l, *d, *rhs;
    /* LAYOUT_PLAN: the plan's tables on the device (host-side struct of device pointers) */
    hb_multi_plan_t plan;
    int *level_branch_host; /* group 0's level_branch (LEVELS launches) */
    int levels0;            /* group 0's levels */
    size_t smem_bytes;      /* GROUPED: dynamic shared memory per block */
    /* LAYOUT_CELLS */
    int cells, max_m;
    int *m, *parent;
    /* LAYOUT_SHAPES: the classes of every tier (tier 0 first) and their plan tables */
    hb_cuda_shape_t *shape_classes;
    int *shape_tables;
    int shape_tier_classes[HB_MULTI_SHAPES_TIERS], shape_tier_teams[HB_MULTI_SHAPES_TIERS];
    int shape_grid[HB_MULTI_SHAPES_TIERS], shape_threads;
    size_t shape_smem[HB_MULTI_SHAPES_TIERS];
    /* SHAPES's tiers side by side: a stream each beside `stream`, the fork and the joins */
    cudaStream_t tier_stream[HB_MULTI_SHAPES_TIERS];
    cudaEvent_t tier_fork, tier_done[HB_MULTI_SHAPES_TIERS];
    /* host staging buffer for the mapped copies */
    double *stage;
    size_t stage_size;
};

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */

__global__ void __launch_bounds__(LEVEL_THREADS)
    level_eliminate_kernel(hb_multi_view_t view, int h)
{
    const hb_multi_view_t v = view;
    const int b = v.level_branch[h] + blockIdx.x * blockDim.x + threadIdx.x;
    if (b < v.level_branch[h + 1]) hb_multi_eliminate(&v, h, b);
}

__global__ void __launch_bounds__(LEVEL_THREADS)
    level_substitute_kernel(hb_multi_view_t view, int h)
{
    const hb_multi_view_t v = view;
    const int b = v.level_branch[h] + blockIdx.x * blockDim.x + threadIdx.x;
    if (b < v.level_branch[h + 1]) hb_multi_substitute(&v, h, b);
}

/*
 * The level loops run in functions of their own, not inlined into grouped_kernel:
 * inlined there, CUDA 13.0's ptxas (-O3, sm_90) produced code that solved a staged
 * group holding one long branch (a chain of 1,001-2,000 rows) wrongly or faulted with
 * illegal addresses, while -G and -Xptxas -O0 builds of the same source solved it
 * exactly; so did every variant that kept the level loops out of the kernel body
 * (tests/gpu/test_gpu_multi.c "chains"; docs/multi.md).
 * A staged group: its arrays (u, l, d, rhs) and tables (hb_multi_stage_tables) lie at
 * the start of the block's shared memory; built here from group_smem, the pointers are
 * known to be shared and the loads are shared-memory loads.
 */
__device__ __noinline__ void staged_levels(const hb_multi_dims_t *t, int split_rows, size_t n,
                                           int tid)
{
    extern __shared__ double group_smem[];
    const hb_multi_view_t v =
        hb_multi_staged_view(t, split_rows, group_smem + 4 * n, group_smem, group_smem + n,
                             group_smem + 2 * n, group_smem + 3 * n);
    hb_cuda_levels_of_view(&v, tid, GROUP_THREADS);
}

/* A group solved in global memory (too large for the block's shared memory). */
__device__ __noinline__ void global_levels(const hb_multi_view_t *v, int tid)
{
    hb_cuda_levels_of_view(v, tid, GROUP_THREADS);
}

/*
 * A block per group. Staged when 32 bytes per row plus its tables fit `smem_bytes`:
 * u, l, d, rhs (coalesced, the group is one contiguous range of each array) and the
 * tables are copied in, the levels are solved in shared memory, and only x goes
 * back: d in memory is left as it was.
 * Both cases solve through the level loops of hb_cuda_levels_of_view, outside the kernel body.
 */
__global__ void __launch_bounds__(GROUP_THREADS, GROUP_BLOCKS_PER_SM)
    grouped_kernel(hb_multi_plan_t plan, size_t smem_bytes, const double *__restrict__ u,
                   const double *__restrict__ l, double *__restrict__ d,
                   double *__restrict__ rhs)
{
    extern __shared__ double group_smem[];
    const int g = blockIdx.x, tid = threadIdx.x;
    const size_t base = plan.slot_base[g], n = plan.slot_base[g + 1] - base;
    const hb_multi_dims_t t = hb_multi_group_dims(&plan, g);
    if (32 * n + hb_multi_table_bytes(&t) <= smem_bytes) {
        double *su = group_smem, *sl = su + n, *sd = sl + n, *sr = sd + n;
        for (size_t i = tid; i < n; i += GROUP_THREADS) {
            su[i] = u[base + i];
            sl[i] = l[base + i];
            sd[i] = d[base + i];
            sr[i] = rhs[base + i];
        }
        hb_multi_stage_tables(&plan, g, &t, sr + n, tid, GROUP_THREADS);
        __syncthreads();
        staged_levels(&t, plan.split_rows, n, tid);
        for (size_t i = tid; i < n; i += GROUP_THREADS) rhs[base + i] = sr[i];
    } else {
        hb_multi_view_t v = hb_multi_group_view(&plan, g);
        v.u = u + base;
        v.l = (double *)l + base; /* not written: split chunks keep spikes in l, so none here */
        v.split_rows = 0;
        v.n_split = 0;
        v.d = d + base;
        v.rhs = rhs + base;
        global_levels(&v, tid);
    }
}

__global__ void __launch_bounds__(CELL_THREADS)
    per_cell_kernel(int cells, const int *__restrict__ m, const int *__restrict__ parent,
                    const double *__restrict__ u, const double *__restrict__ l,
                    double *__restrict__ d, double *__restrict__ rhs)
{
    const int c = blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cells) return;
    hb_multi_cell_solve(m[c], parent + c, (size_t)cells, u + c, l + c, d + c, rhs + c);
}

/* ------------------------------------------------------------------------ */
/* Storage                                                                  */
/* ------------------------------------------------------------------------ */

/* Frees the device tables of a plan made by plan_upload and zeroes it. */
static void plan_free(hb_multi_plan_t *p)
{
    cudaFree(p->slot_base);
    cudaFree(p->level_off);
    cudaFree(p->row_off);
    cudaFree(p->level_branch);
    cudaFree(p->level_row);
    cudaFree(p->row_base);
    cudaFree(p->rows);
    cudaFree(p->child_ptr);
    cudaFree(p->child_top);
    cudaFree(p->parent_slot);
    cudaFree(p->split_off);
    cudaFree(p->split_level);
    cudaFree(p->split_branch);
    memset(p, 0, sizeof *p);
}

static void free_layout(hb_cuda_multi_t *dm)
{
    plan_free(&dm->plan);
    free(dm->level_branch_host);
    dm->level_branch_host = NULL;
    cudaFree(dm->m);
    cudaFree(dm->parent);
    cudaFree(dm->shape_classes);
    cudaFree(dm->shape_tables);
    dm->shape_classes = NULL;
    dm->shape_tables = NULL;
    cudaFree(dm->u);
    cudaFree(dm->l);
    cudaFree(dm->d);
    cudaFree(dm->rhs);
    dm->m = dm->parent = NULL;
    dm->u = dm->l = dm->d = dm->rhs = NULL;
    dm->layout = LAYOUT_NONE;
    dm->size = 0;
}

static hb_status_t hb_cuda_multi_create(hb_cuda_multi_t **out)
{
    *out = NULL;
    hb_cuda_multi_t *dm = (hb_cuda_multi_t *)calloc(1, sizeof *dm);
    if (!dm) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory");
    hb_status_t status = HB_SUCCESS;
    cudaDeviceProp prop;
    dm->device = 0;
    CUDA_TRY(status, cudaSetDevice(dm->device), fail);
    CUDA_TRY(status, cudaGetDeviceProperties(&prop, dm->device), fail);
    CUDA_TRY(status, cudaStreamCreateWithFlags(&dm->stream, cudaStreamNonBlocking), fail);
    CUDA_TRY(status, cudaEventCreateWithFlags(&dm->tier_fork, cudaEventDisableTiming), fail);
    for (int t = 0; t < HB_MULTI_SHAPES_TIERS; ++t) {
        CUDA_TRY(status, cudaStreamCreateWithFlags(&dm->tier_stream[t], cudaStreamNonBlocking),
                 fail);
        CUDA_TRY(status, cudaEventCreateWithFlags(&dm->tier_done[t], cudaEventDisableTiming),
                 fail);
    }
    dm->sm_count = prop.multiProcessorCount;
    dm->smem_optin = prop.sharedMemPerBlockOptin;
    dm->smem_per_sm = prop.sharedMemPerMultiprocessor;
    dm->smem_cap = dm->smem_optin;
    *out = dm;
    return HB_SUCCESS;
fail:
    hb_cuda_multi_destroy(dm);
    return status;
}

static void hb_cuda_multi_destroy(hb_cuda_multi_t *dm)
{
    if (!dm) return;
    cudaSetDevice(dm->device);
    free_layout(dm);
    for (int t = 0; t < HB_MULTI_SHAPES_TIERS; ++t) {
        if (dm->tier_stream[t]) cudaStreamDestroy(dm->tier_stream[t]);
        if (dm->tier_done[t]) cudaEventDestroy(dm->tier_done[t]);
    }
    if (dm->tier_fork) cudaEventDestroy(dm->tier_fork);
    if (dm->stream) cudaStreamDestroy(dm->stream);
    free(dm->stage);
    free(dm);
}

/*
 * Many rows (at least three blocks' worth per multiprocessor): groups of about
 * a third of a multiprocessor's shared memory, so three blocks share it and one
 * loads while others compute. GROUP_ROW_BYTES a row leaves room for the staged
 * tables (32 bytes of arrays, up to 8 of row table, 28 per branch: real cells
 * have about one branch per 4 rows, Figure 6's bushiest one per 2); a group whose
 * tables do not fit after all runs from global memory. Fewer rows: two
 * groups per multiprocessor, any group that fits staged.
 */
#define GROUP_ROW_BYTES 56
static size_t hb_cuda_multi_group_rows(hb_cuda_multi_t *dm, size_t total_rows, int *saturated)
{
    const size_t row_bytes = GROUP_ROW_BYTES;
    const size_t third = dm->smem_optin / 3, rows_third = third / row_bytes;
    *saturated = total_rows >= (size_t)dm->sm_count * GROUP_BLOCKS_PER_SM * rows_third;
    if (*saturated) {
        dm->smem_cap = third;
        return rows_third;
    }
    dm->smem_cap = dm->smem_optin;
    const size_t rows = (total_rows + 2 * (size_t)dm->sm_count - 1) / (2 * (size_t)dm->sm_count);
    return rows < 64 ? 64 : rows;
}

/* A device copy of `count` elements of `elem` bytes (at least one element allocated). */
static hb_status_t copy_table(void **dst, const void *src, size_t count, size_t elem,
                              cudaStream_t stream)
{
    CUDA_CHECK(cudaMalloc(dst, (count ? count : 1) * elem));
    if (count) CUDA_CHECK(cudaMemcpyAsync(*dst, src, count * elem, cudaMemcpyHostToDevice, stream));
    return HB_SUCCESS;
}

#define COPY_TABLE(dst, src, count, stream) \
    copy_table((void **)&(dst), (src), (count), sizeof *(src), (stream))

static hb_status_t alloc_arrays(hb_cuda_multi_t *dm, size_t size)
{
    const size_t bytes = (size ? size : 1) * sizeof(double);
    CUDA_CHECK(cudaMalloc((void **)&dm->u, bytes));
    CUDA_CHECK(cudaMalloc((void **)&dm->l, bytes));
    CUDA_CHECK(cudaMalloc((void **)&dm->d, bytes));
    CUDA_CHECK(cudaMalloc((void **)&dm->rhs, bytes));
    dm->size = size;
    return HB_SUCCESS;
}

/* Device copies of a plan's tables (on the current device); q holds device pointers. On
 * failure q is freed. */
static hb_status_t plan_upload(const hb_multi_plan_t *p, hb_multi_plan_t *q, cudaStream_t stream)
{
    const size_t groups = (size_t)p->n_groups + 1, nb = (size_t)p->n_branches;
    const size_t level_entries = (size_t)p->level_off[p->n_groups];
    const size_t row_entries = (size_t)p->row_off[p->n_groups];
    const size_t split_entries = (size_t)p->split_off[p->n_groups];
    hb_status_t status = HB_SUCCESS;
    memset(q, 0, sizeof *q);
    q->n_groups = p->n_groups;
    q->n_branches = p->n_branches;
    q->n_slots = p->n_slots;
    q->max_group_rows = p->max_group_rows;
    q->max_group_row_entries = p->max_group_row_entries;
    q->max_levels = p->max_levels;
    q->max_branch_rows = p->max_branch_rows;
    q->split_rows = p->split_rows;
    if ((status = COPY_TABLE(q->slot_base, p->slot_base, groups, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->level_off, p->level_off, groups, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->row_off, p->row_off, groups, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->level_branch, p->level_branch, level_entries, stream)) !=
            HB_SUCCESS ||
        (status = COPY_TABLE(q->level_row, p->level_row, level_entries, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->row_base, p->row_base, row_entries, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->rows, p->rows, nb, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->child_ptr, p->child_ptr, nb + 1, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->child_top, p->child_top, nb, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->parent_slot, p->parent_slot, nb, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->split_off, p->split_off, groups, stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(q->split_level, p->split_level, split_entries, stream)) !=
            HB_SUCCESS ||
        (status = COPY_TABLE(q->split_branch, p->split_branch, split_entries, stream)) !=
            HB_SUCCESS)
        plan_free(q);
    return status;
}

static hb_status_t hb_cuda_multi_install_plan(hb_cuda_multi_t *dm, const hb_multi_plan_t *p)
{
    CUDA_CHECK(cudaSetDevice(dm->device));
    free_layout(dm);
    hb_status_t status = plan_upload(p, &dm->plan, dm->stream);
    if (status != HB_SUCCESS || (status = alloc_arrays(dm, p->n_slots)) != HB_SUCCESS) goto fail;
    /* LEVELS launches need group 0's level boundaries on the host. */
    dm->levels0 = p->level_off[1] - p->level_off[0] - 1;
    dm->level_branch_host = (int *)malloc(((size_t)dm->levels0 + 1) * sizeof(int));
    if (!dm->level_branch_host) {
        status = hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory");
        goto fail;
    }
    memcpy(dm->level_branch_host, p->level_branch, ((size_t)dm->levels0 + 1) * sizeof(int));
    /* GROUPED: the shared memory of the largest group that fits the cap (arrays and tables,
     * as grouped_kernel stages them). */
    dm->smem_bytes = 0;
    for (int g = 0; g < p->n_groups; ++g) {
        const hb_multi_dims_t t = hb_multi_group_dims(p, g);
        const size_t need = 32 * (p->slot_base[g + 1] - p->slot_base[g]) + hb_multi_table_bytes(&t);
        if (need <= dm->smem_cap && need > dm->smem_bytes) dm->smem_bytes = need;
    }
    CUDA_TRY(status, cudaStreamSynchronize(dm->stream), fail);
    dm->layout = LAYOUT_PLAN;
    return HB_SUCCESS;
fail:
    free_layout(dm);
    return status;
}

static hb_status_t hb_cuda_multi_install_cells(hb_cuda_multi_t *dm, int cells, int max_m,
                                                   const int *m, const int *parent)
{
    CUDA_CHECK(cudaSetDevice(dm->device));
    free_layout(dm);
    const size_t size = (size_t)max_m * (size_t)cells;
    hb_status_t status = HB_SUCCESS;
    if ((status = COPY_TABLE(dm->m, m, (size_t)cells, dm->stream)) != HB_SUCCESS ||
        (status = COPY_TABLE(dm->parent, parent, size, dm->stream)) != HB_SUCCESS ||
        (status = alloc_arrays(dm, size)) != HB_SUCCESS)
        goto fail;
    CUDA_TRY(status, cudaStreamSynchronize(dm->stream), fail);
    dm->cells = cells;
    dm->max_m = max_m;
    dm->layout = LAYOUT_CELLS;
    return HB_SUCCESS;
fail:
    free_layout(dm);
    return status;
}

static hb_status_t hb_cuda_multi_shape_device(hb_cuda_multi_t *dm,
                                                  hb_multi_shapes_device_t *out)
{
    CUDA_CHECK(cudaSetDevice(dm->device));
    int per_sm = 0; /* registers and threads decide it: a block of 1 KB of shared memory */
    hb_status_t status =
        hb_cuda_shapes_per_sm(HB_MULTI_SHAPES_THREADS, 1024, dm->smem_optin, &per_sm);
    if (status != HB_SUCCESS) return status;
    out->sm_bytes = dm->smem_per_sm;
    out->block_bytes = dm->smem_optin;
    out->max_per_sm = per_sm < HB_MULTI_SHAPES_TIERS ? per_sm : HB_MULTI_SHAPES_TIERS;
    out->sms = dm->sm_count;
    return HB_SUCCESS;
}

static hb_status_t hb_cuda_multi_install_shapes(hb_cuda_multi_t *dm,
                                                    const struct hb_multi_shapes *s)
{
    CUDA_CHECK(cudaSetDevice(dm->device));
    free_layout(dm);
    hb_status_t status = HB_SUCCESS;
    hb_cuda_shape_t *host = (hb_cuda_shape_t *)calloc((size_t)s->n_classes + 1, sizeof *host);
    if (!host) return hb_fail(HB_ERR_ALLOC, "hb_multi: out of memory");
    for (int q = 0; q < s->n_classes; ++q) {
        const hb_multi_shape_t *k = &s->cls[q];
        host[q].m = k->m;
        host[q].lanes = k->lanes;
        host[q].cells = k->cells;
        host[q].team_first = k->team_first;
        host[q].words = (int)k->plan.words;
        host[q].couplings = k->plan.couplings;
        host[q].global_tables = k->global_tables;
        host[q].base = k->base;
        host[q].table_off = k->table_off;
    }
    if ((status = COPY_TABLE(dm->shape_classes, host, (size_t)s->n_classes, dm->stream)) !=
            HB_SUCCESS ||
        (status = COPY_TABLE(dm->shape_tables, s->tables, s->words, dm->stream)) != HB_SUCCESS ||
        (status = alloc_arrays(dm, s->size)) != HB_SUCCESS)
        goto fail;
    CUDA_TRY(status, cudaStreamSynchronize(dm->stream), fail);
    dm->shape_threads = s->threads;
    for (int tier = 0; tier < HB_MULTI_SHAPES_TIERS; ++tier) {
        dm->shape_tier_classes[tier] = s->tier_classes[tier];
        dm->shape_tier_teams[tier] = s->tier_teams[tier];
        dm->shape_smem[tier] = s->tier_bytes[tier];
        dm->shape_grid[tier] = 0;
        if (!s->tier_teams[tier]) continue;
        int per_sm = 0;
        if ((status = hb_cuda_shapes_per_sm(s->threads, s->tier_bytes[tier], dm->smem_optin,
                                            &per_sm)) !=
            HB_SUCCESS)
            goto fail;
        if (per_sm < 1) {
            status = hb_fail(HB_ERR_NOT_SUPPORTED,
                             "hb_multi: shapes: no block of %d threads and %zu bytes fits a "
                             "multiprocessor",
                             s->threads, s->tier_bytes[tier]);
            goto fail;
        }
        /* persistent blocks: one wave */
        const long wave = (long)per_sm * dm->sm_count;
        dm->shape_grid[tier] = (int)(wave < s->tier_teams[tier] ? wave : s->tier_teams[tier]);
    }
    dm->layout = LAYOUT_SHAPES;
    free(host);
    return HB_SUCCESS;
fail:
    free(host);
    free_layout(dm);
    return status;
}

/* A zeroed host buffer of `size` doubles (padding of the PER_CELL layout stays 0). */
static hb_status_t stage_buffer(hb_cuda_multi_t *dm, size_t size)
{
    if (dm->stage && dm->stage_size == size) return HB_SUCCESS;
    free(dm->stage);
    dm->stage = (double *)calloc(size ? size : 1, sizeof(double));
    dm->stage_size = dm->stage ? size : 0;
    if (!dm->stage)
        return hb_fail(HB_ERR_ALLOC, "hb_multi: out of host memory staging %zu doubles", size);
    return HB_SUCCESS;
}

static hb_status_t check_installed(const hb_cuda_multi_t *dm, size_t size)
{
    if (dm->layout == LAYOUT_NONE || dm->size != size)
        return hb_fail(HB_ERR_BACKEND, "hb_multi: device layout of %zu elements expected, %zu held",
                       size, dm->size);
    return HB_SUCCESS;
}

static hb_status_t hb_cuda_multi_upload(hb_cuda_multi_t *dm, size_t n, size_t size,
                                            const size_t *map, const double *u, const double *l,
                                            const double *d, const double *rhs)
{
    hb_status_t status = check_installed(dm, size);
    if (status == HB_SUCCESS) status = stage_buffer(dm, size);
    if (status != HB_SUCCESS) return status;
    CUDA_CHECK(cudaSetDevice(dm->device));
    const double *src[4] = {u, l, d, rhs};
    double *dst[4] = {dm->u, dm->l, dm->d, dm->rhs};
    for (int a = 0; a < 4; ++a) {
        for (size_t k = 0; k < n; ++k) dm->stage[map[k]] = src[a][k];
        /* pageable source: the copy has read it when the call returns */
        CUDA_CHECK(cudaMemcpyAsync(dst[a], dm->stage, size * sizeof(double),
                                   cudaMemcpyHostToDevice, dm->stream));
        CUDA_CHECK(cudaStreamSynchronize(dm->stream));
    }
    return HB_SUCCESS;
}

static hb_status_t hb_cuda_multi_download(hb_cuda_multi_t *dm, size_t n, size_t size,
                                              const size_t *map, double *d, double *rhs)
{
    hb_status_t status = check_installed(dm, size);
    if (status == HB_SUCCESS) status = stage_buffer(dm, size);
    if (status != HB_SUCCESS) return status;
    CUDA_CHECK(cudaSetDevice(dm->device));
    double *dst[2] = {d, rhs};
    const double *src[2] = {dm->d, dm->rhs};
    for (int a = 0; a < 2; ++a) {
        if (!dst[a]) continue;
        CUDA_CHECK(cudaMemcpyAsync(dm->stage, src[a], size * sizeof(double),
                                   cudaMemcpyDeviceToHost, dm->stream));
        CUDA_CHECK(cudaStreamSynchronize(dm->stream));
        for (size_t k = 0; k < n; ++k) dst[a][k] = dm->stage[map[k]];
    }
    return HB_SUCCESS;
}

/* ------------------------------------------------------------------------ */
/* Solves                                                                   */
/* ------------------------------------------------------------------------ */

static int blocks_for(int count, int threads) { return (count + threads - 1) / threads; }

/* Queues one solve on the stream. */
static hb_status_t launch(hb_cuda_multi_t *dm, hb_multi_algo_t algo)
{
    const int want = algo == HB_MULTI_ALGO_PER_CELL ? LAYOUT_CELLS
                     : algo == HB_MULTI_ALGO_SHAPES ? LAYOUT_SHAPES
                                                    : LAYOUT_PLAN;
    if (dm->layout != want)
        return hb_fail(HB_ERR_BACKEND, "hb_multi: the device holds another algorithm's layout");
    switch (algo) {
    case HB_MULTI_ALGO_LEVELS: {
        /* group 0's view, built here: the plan's pointers are device pointers (its level
         * and row tables start at entry 0) */
        hb_multi_view_t v;
        v.n_levels = dm->levels0;
        v.level_branch = dm->plan.level_branch;
        v.level_row = dm->plan.level_row;
        v.row_base = dm->plan.row_base;
        v.rows = dm->plan.rows;
        v.child_ptr = dm->plan.child_ptr;
        v.child_top = dm->plan.child_top;
        v.parent_slot = dm->plan.parent_slot;
        v.u = dm->u;
        v.l = dm->l;
        v.d = dm->d;
        v.rhs = dm->rhs;
        v.split_rows = 0;
        v.n_split = 0;
        v.split_level = v.split_branch = NULL;
        const int *lb = dm->level_branch_host;
        for (int h = 0; h < dm->levels0; ++h) {
            const int width = lb[h + 1] - lb[h];
            if (width > 0)
                level_eliminate_kernel<<<blocks_for(width, LEVEL_THREADS), LEVEL_THREADS, 0,
                                         dm->stream>>>(v, h);
        }
        for (int h = dm->levels0 - 1; h >= 0; --h) {
            const int width = lb[h + 1] - lb[h];
            if (width > 0)
                level_substitute_kernel<<<blocks_for(width, LEVEL_THREADS), LEVEL_THREADS, 0,
                                          dm->stream>>>(v, h);
        }
        break;
    }
    case HB_MULTI_ALGO_GROUPED:
        CUDA_CHECK(hb_cuda_allow_smem((const void *)grouped_kernel, dm->smem_optin));
        grouped_kernel<<<dm->plan.n_groups, GROUP_THREADS, dm->smem_bytes, dm->stream>>>(
            dm->plan, dm->smem_bytes, dm->u, dm->l, dm->d, dm->rhs);
        break;
    case HB_MULTI_ALGO_PER_CELL:
        per_cell_kernel<<<blocks_for(dm->cells, CELL_THREADS), CELL_THREADS, 0, dm->stream>>>(
            dm->cells, dm->m, dm->parent, dm->u, dm->l, dm->d, dm->rhs);
        break;
    case HB_MULTI_ALGO_SHAPES: {
        /* The tiers side by side: the first on `stream`, the others on streams of their own
         * after it forks and joined back. Their classes are disjoint, and a launch's last
         * teams then share the device with the next one's first instead of each launch
         * ending in a tail of its own. */
        int launched = 0, tiers = 0;
        for (int tier = 0; tier < HB_MULTI_SHAPES_TIERS; ++tier)
            tiers += dm->shape_tier_teams[tier] > 0;
        if (tiers > 1) CUDA_CHECK(cudaEventRecord(dm->tier_fork, dm->stream));
        for (int tier = 0, first = 0; tier < HB_MULTI_SHAPES_TIERS;
             first += dm->shape_tier_classes[tier++]) {
            if (!dm->shape_tier_teams[tier]) continue;
            const cudaStream_t s = launched ? dm->tier_stream[tier] : dm->stream;
            if (s != dm->stream) CUDA_CHECK(cudaStreamWaitEvent(s, dm->tier_fork, 0));
            hb_status_t status = hb_cuda_shapes_launch(
                dm->shape_classes + first, dm->shape_tier_classes[tier], dm->shape_tier_teams[tier],
                dm->shape_grid[tier], dm->shape_threads, dm->shape_smem[tier], dm->shape_tables,
                dm->u, dm->l, dm->d, dm->rhs, dm->smem_optin, (void *)s);
            if (status != HB_SUCCESS) return status;
            if (s != dm->stream) {
                CUDA_CHECK(cudaEventRecord(dm->tier_done[tier], s));
                CUDA_CHECK(cudaStreamWaitEvent(dm->stream, dm->tier_done[tier], 0));
            }
            ++launched;
        }
        break;
    }
    default: return hb_fail(HB_ERR_INVALID_VALUE, "hb_multi: unknown algorithm %d", (int)algo);
    }
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

static hb_status_t hb_cuda_multi_solve(hb_cuda_multi_t *dm, hb_multi_algo_t algo)
{
    CUDA_CHECK(cudaSetDevice(dm->device));
    hb_status_t status = launch(dm, algo);
    CUDA_CHECK(cudaStreamSynchronize(dm->stream));
    return status;
}

static hb_status_t hb_cuda_multi_benchmark(hb_cuda_multi_t *dm, hb_multi_algo_t algo,
                                               int repeats, double *seconds)
{
    CUDA_CHECK(cudaSetDevice(dm->device));
    const size_t bytes = dm->size * sizeof(double);
    double *d0 = NULL, *r0 = NULL;
    cudaEvent_t start = NULL, stop = NULL;
    hb_status_t status = HB_SUCCESS;
    CUDA_TRY(status, cudaMalloc((void **)&d0, bytes ? bytes : 1), done);
    CUDA_TRY(status, cudaMalloc((void **)&r0, bytes ? bytes : 1), done);
    CUDA_TRY(status, cudaMemcpyAsync(d0, dm->d, bytes, cudaMemcpyDeviceToDevice, dm->stream), done);
    CUDA_TRY(status, cudaMemcpyAsync(r0, dm->rhs, bytes, cudaMemcpyDeviceToDevice, dm->stream),
             done);
    CUDA_TRY(status, cudaEventCreate(&start), done);
    CUDA_TRY(status, cudaEventCreate(&stop), done);
    for (int r = -1; r < repeats && status == HB_SUCCESS; ++r) { /* one warm-up */
        CUDA_TRY(status, cudaMemcpyAsync(dm->d, d0, bytes, cudaMemcpyDeviceToDevice, dm->stream),
                 done);
        CUDA_TRY(status,
                 cudaMemcpyAsync(dm->rhs, r0, bytes, cudaMemcpyDeviceToDevice, dm->stream), done);
        CUDA_TRY(status, cudaEventRecord(start, dm->stream), done);
        if ((status = launch(dm, algo)) != HB_SUCCESS) break;
        CUDA_TRY(status, cudaEventRecord(stop, dm->stream), done);
        CUDA_TRY(status, cudaEventSynchronize(stop), done);
        float ms = 0.0f;
        CUDA_TRY(status, cudaEventElapsedTime(&ms, start, stop), done);
        if (r >= 0) seconds[r] = ms * 1e-3;
    }
done:
    cudaStreamSynchronize(dm->stream);
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    cudaFree(d0);
    cudaFree(r0);
    return status;
}

/* ------------------------------------------------------------------------ */
/* The table (backend/multi_ops.h)                                          */
/* ------------------------------------------------------------------------ */

static hb_status_t cuda_create(hb_context_t *ctx, void **state)
{
    (void)ctx;
    return hb_cuda_multi_create((hb_cuda_multi_t **)state);
}

static void cuda_destroy(void *state) { hb_cuda_multi_destroy((hb_cuda_multi_t *)state); }

static size_t cuda_group_rows(void *state, size_t total_rows, size_t planned, int *saturated)
{
    (void)planned; /* the device's own rule */
    return hb_cuda_multi_group_rows((hb_cuda_multi_t *)state, total_rows, saturated);
}

static hb_status_t cuda_shape_device(void *state, hb_multi_shapes_device_t *out)
{
    return hb_cuda_multi_shape_device((hb_cuda_multi_t *)state, out);
}

static hb_status_t cuda_install_plan(void *state, const hb_multi_plan_t *plan)
{
    return hb_cuda_multi_install_plan((hb_cuda_multi_t *)state, plan);
}

static hb_status_t cuda_install_cells(void *state, int cells, int max_m, const int *m,
                                      const int *parent)
{
    return hb_cuda_multi_install_cells((hb_cuda_multi_t *)state, cells, max_m, m, parent);
}

static hb_status_t cuda_install_shapes(void *state, const hb_multi_shapes_t *s)
{
    return hb_cuda_multi_install_shapes((hb_cuda_multi_t *)state, s);
}

static hb_status_t cuda_upload(void *state, size_t n, size_t size, const size_t *map,
                               const double *u, const double *l, const double *d,
                               const double *rhs)
{
    return hb_cuda_multi_upload((hb_cuda_multi_t *)state, n, size, map, u, l, d, rhs);
}

static hb_status_t cuda_download(void *state, size_t n, size_t size, const size_t *map,
                                 double *d, double *rhs)
{
    return hb_cuda_multi_download((hb_cuda_multi_t *)state, n, size, map, d, rhs);
}

/* The device holds the installed layout's data: host is not read. */
static hb_status_t cuda_solve(void *state, const hb_multi_host_t *host, hb_multi_algo_t algo)
{
    (void)host;
    return hb_cuda_multi_solve((hb_cuda_multi_t *)state, algo);
}

static hb_status_t cuda_benchmark(void *state, const hb_multi_host_t *host, hb_multi_algo_t algo,
                                  int repeats, double *seconds)
{
    (void)host;
    return hb_cuda_multi_benchmark((hb_cuda_multi_t *)state, algo, repeats, seconds);
}

/* In the order of struct hb_multi_ops (C++17 has no designated initializers). */
extern "C" const struct hb_multi_ops hb_cuda_multi_ops = {
    cuda_create,        cuda_destroy,      cuda_group_rows, cuda_shape_device,
    cuda_install_plan,  cuda_install_cells, cuda_install_shapes, cuda_upload,
    cuda_download,      cuda_solve,        cuda_benchmark,
};
