/*
 * Batched tridiagonal solves (hb_gtsv_*), the backend-neutral facade: argument checks, the
 * algorithm rule, the plan (the rule, then the context's tuning), then the backend's
 * table (backend/gtsv_ops.h: src/cpu/tridiag_cpu.c, src/cuda/tridiag_solve.cu).
 */
#include "core/tridiag.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/gtsv_ops.h"
#include "common/status.h"
#include "common/tridiag_plan.h"
#include "core/bench.h"
#include "core/context.h"

const char *hb_gtsv_algo_name(hb_gtsv_algo_t algo)
{
    switch (algo) {
    case HB_GTSV_ALGO_AUTO: return "auto";
    case HB_GTSV_ALGO_THOMAS: return "thomas";
    case HB_GTSV_ALGO_PARTITION: return "partition";
    }
    return "unknown";
}

static size_t element_size(hb_precision_t precision)
{
    return precision == HB_FLOAT32 ? sizeof(float) : sizeof(double);
}

/* The algorithm a solve runs; docs/tridiag.md explains the rule. */
static hb_gtsv_algo_t resolve(const struct hb_context *ctx, const hb_gtsv_problem_t *p)
{
    if (p->algo != HB_GTSV_ALGO_AUTO) return p->algo;
    if (!ctx->ops->gtsv->auto_partition) return HB_GTSV_ALGO_THOMAS;
    return p->m <= HB_TD_MAX_PARTITION_M ? HB_GTSV_ALGO_PARTITION : HB_GTSV_ALGO_THOMAS;
}

/* Elements one array spans (last element + 1). */
static size_t span_elements(const hb_gtsv_problem_t *p)
{
    const size_t last_sys = (size_t)p->batch_count - 1, last_row = (size_t)p->m - 1;
    const size_t stride = (size_t)p->batch_stride;
    return p->layout == HB_LAYOUT_INTERLEAVED ? last_row * stride + last_sys + 1
                                              : last_sys * stride + last_row + 1;
}

/* Checks the shape (everything buffer_size needs). */
static hb_status_t check_shape(const char *fn, const struct hb_context *ctx,
                               const hb_gtsv_problem_t *p)
{
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "%s: ctx is NULL", fn);
    if (!p) return hb_fail(HB_ERR_INVALID_VALUE, "%s: problem is NULL", fn);
    if (p->precision != HB_FLOAT64 && p->precision != HB_FLOAT32)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: precision = %d is not an hb_precision_t", fn,
                       (int)p->precision);
    if ((int)p->algo < HB_GTSV_ALGO_AUTO || p->algo > HB_GTSV_ALGO_PARTITION)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: algo = %d is not an hb_gtsv_algo_t", fn,
                       (int)p->algo);
    if (p->m < 1) return hb_fail(HB_ERR_INVALID_VALUE, "%s: m = %d; expected m >= 1", fn, p->m);
    if (p->batch_count < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: batch_count = %d; expected >= 1", fn,
                       p->batch_count);
    if (p->layout == HB_LAYOUT_BLOCK)
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "%s: layout block is not supported for tridiagonal solves; use flat "
                       "(strided) or interleaved", fn);
    if (p->layout != HB_LAYOUT_FLAT && p->layout != HB_LAYOUT_INTERLEAVED)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: layout = %d is not an hb_layout_t", fn,
                       (int)p->layout);
    if (p->layout == HB_LAYOUT_FLAT && p->batch_stride < p->m)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: batch_stride = %d < m = %d; the flat layout needs batch_stride >= m",
                       fn, p->batch_stride, p->m);
    if (p->layout == HB_LAYOUT_INTERLEAVED && p->batch_stride < p->batch_count)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: batch_stride = %d < batch_count = %d; the interleaved layout needs "
                       "batch_stride >= batch_count", fn, p->batch_stride, p->batch_count);
    const size_t other = p->layout == HB_LAYOUT_INTERLEAVED ? (size_t)p->m : (size_t)p->batch_count;
    if (other > SIZE_MAX / 16 / (size_t)p->batch_stride)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %d systems of %d rows do not fit in memory", fn,
                       p->batch_count, p->m);
    const hb_gtsv_algo_t algo = resolve(ctx, p);
    if (algo == HB_GTSV_ALGO_PARTITION && p->m > HB_TD_MAX_PARTITION_M)
        return hb_fail(HB_ERR_NOT_SUPPORTED,
                       "%s: the partition algorithm handles m <= %d (m = %d); use thomas or auto",
                       fn, HB_TD_MAX_PARTITION_M, p->m);
    return HB_SUCCESS;
}

/* The caller's buffer: the backend's (CUDA THOMAS keeps the forward sweep there). */
static size_t required_bytes(const struct hb_context *ctx, const hb_gtsv_problem_t *p)
{
    return ctx->ops->gtsv->buffer_bytes(p, resolve(ctx, p));
}

hb_status_t hb_gtsv_buffer_size(hb_context_t *ctx, const hb_gtsv_problem_t *problem, size_t *bytes)
{
    static const char fn[] = "hb_gtsv_buffer_size";
    hb_clear_error();
    if (!bytes) return hb_fail(HB_ERR_INVALID_VALUE, "%s: bytes is NULL", fn);
    *bytes = 0;
    hb_status_t status = check_shape(fn, ctx, problem);
    if (status == HB_SUCCESS) *bytes = required_bytes(ctx, problem);
    return status;
}

hb_status_t hb_gtsv_resolve(hb_context_t *ctx, const hb_gtsv_problem_t *problem,
                            hb_gtsv_algo_t *algo)
{
    static const char fn[] = "hb_gtsv_resolve";
    hb_clear_error();
    if (!algo) return hb_fail(HB_ERR_INVALID_VALUE, "%s: algo is NULL", fn);
    hb_status_t status = check_shape(fn, ctx, problem);
    if (status == HB_SUCCESS) *algo = resolve(ctx, problem);
    return status;
}

/* Interleaved batches of at most this many rows in all take the small-batch plan. */
#define HB_TD_SMALL_BATCH_ROWS 131072.0

/* Whether the rule gives an interleaved batch the small-batch plan: at most
 * HB_TD_SMALL_BATCH_ROWS rows in all (about one 128-thread block a multiprocessor), half
 * that above m = 4096 (8192 x 16 loses 1-9%), twice that for fp32 to m = 512 (1.06-1.19x
 * at 262,144 rows), three times for fp32 to m = 128 (1.05-1.10x at 327,680 and 393,216
 * rows; 1.00-1.01x at 524,288), and never fp64 at m = 513..1024 (0.86-0.97x; its plan
 * has no clusters, and 8-row chunks double each block's interface system: not
 * profiled). docs/tridiag.md, "Small batches" */
static int small_batch(const hb_gtsv_problem_t *p)
{
    const double rows = (double)p->m * p->batch_count;
    if (p->precision == HB_FLOAT64 && p->m > 512 && p->m <= 1024) return 0;
    if (p->m > 4096) return rows <= HB_TD_SMALL_BATCH_ROWS / 2;
    if (p->precision == HB_FLOAT32 && p->m <= 128) return rows <= 3 * HB_TD_SMALL_BATCH_ROWS;
    if (p->precision == HB_FLOAT32 && p->m <= 512) return rows <= 2 * HB_TD_SMALL_BATCH_ROWS;
    return rows <= HB_TD_SMALL_BATCH_ROWS;
}

/* Pairs of fp32 systems a thread (the plan's `pairs`): interleaved fp32 with an even
 * count and stride and one size for all, so that every pair lies whole in 8 bytes (the
 * launcher also checks the arrays' alignment, and else runs the same plan one system
 * a thread). */
static int pairs_fit(const hb_gtsv_problem_t *p)
{
    return p->precision == HB_FLOAT32 && p->layout == HB_LAYOUT_INTERLEAVED && !p->sizes &&
           p->batch_count % 2 == 0 && p->batch_stride % 2 == 0;
}

/* The rule's plan for PARTITION: the best tuning of each measured shape of
 * the H100 variants runs (docs/design-notes.md, "Tridiagonal"; docs/tridiag.md,
 * "The plan rule"), by layout, m and (interleaved m <= 128)
 * precision. Boundaries sit at powers of two, where the chunk count P
 * changes, so a shape between two measured points runs the kernel geometry
 * (P, G = threads / P) of the point above it. Every plan here is compiled:
 * chunks load 4 or 8 rows ahead; 8-row chunks run two a thread in blocks of
 * P / 2 threads (always beyond P = 512, m > 4096). */
static void rule_plan(const hb_gtsv_problem_t *p, int small, hb_gtsv_plan_t *plan)
{
    const int m = p->m;
    plan->hint = 0;
    plan->prefetch = 0;
    plan->vector = 0;
    plan->cluster = 1;
    plan->stage = 0;
    plan->persist = 0;
    /* fp32 interleaved in pairs wherever they fit: 1.03-1.07x at m = 64, 128 x 256,000
     * (docs/design-notes.md, "Tridiagonal"), more above */
    plan->pairs = pairs_fit(p);
    if (p->layout != HB_LAYOUT_INTERLEAVED) {
        plan->vector = 1; /* 16-byte loads and stores: 1.15-1.6x at every measured point */
        /* x written a warp's contiguous spans at a time: fp64 m = 256..8192 and fp32
         * m = 2048..8192 gain 2-12%; fp32 m <= 1024 loses 2-4% */
        if ((p->precision == HB_FLOAT64 && m > 128) || m > 1024) plan->vector = 2;
        if (m <= 1024 || p->precision == HB_FLOAT64) {
            /* 8-row chunks, 8 rows ahead; 128 threads to m = 1024 (+4..10% over 256
             * at m = 128..1024), then a block of 256 threads for one system, a
             * chunk a thread to m = 2048, two above (m = 4096: 1.06x 512 threads),
             * 512 above 4096: fp64 m = 2048..8192 1.09-1.23x 16-row chunks */
            plan->rows = 8;
            plan->threads = m <= 1024 ? 128 : m <= 4096 ? 256 : 512;
            plan->ahead = 8;
        } else { /* fp32: 16-row chunks in blocks of P threads (128, 256; 512 above */
            plan->rows = 16; /* 4096), 8 rows ahead: 1.11-1.28x 4 rows ahead, 1.2-1.3x */
            plan->threads = 128; /* 8-row chunks (2048..8192 x 20,000) */
            plan->ahead = 8;
            /* rolling L2 prefetch above m = 2048: 1.03-1.06x at x 20,000 (0.97-1.03x
             * at x 2,000) */
            if (m > 2048) plan->prefetch = 2;
        }
    } else if (m <= 128) {
        /* Interleaved, every m: rows staged through shared memory (cp.async, about 2
         * `ahead` rows in flight a thread, no registers held; 1.05-1.3x at m <= 512,
         * 1.2-1.5x above: the loads into registers kept 4 rows in flight, and the
         * multiprocessor, one or two blocks of 128 registers a thread, waited on them) */
        plan->stage = 1;
        if (p->precision == HB_FLOAT32) { /* 16-row chunks, G = 32 (128-byte rows), L2 */
            plan->rows = 16; /* prefetch instructions: 1.2-1.3x (64, 128 x 256,000); */
            plan->threads = m <= 64 ? 128 : 256; /* 256 threads at m = 128: 1.09x 128 */
            plan->ahead = 4;
            plan->prefetch = 2;
        } else { /* G = 32 (m = 64) or 16 (m = 128) systems a block: staged, 256 */
            plan->rows = 8; /* threads: 1.06x 128 at 64 x 256,000 */
            plan->threads = 256;
            plan->ahead = 8;
        }
    } else { /* 16-row chunks, the 128-byte L2 hint: G = 16 at m = 256 (256 threads), */
        plan->rows = 16; /* 16 and 8 at m = 512, 1024 (512 threads), then 4 */
        /* Values of 8 bytes: fp64, and fp32 in pairs, which run fp64's geometry (G
         * pairs a block: 1.05-1.26x the fp32 geometry alone at m = 256..8192; fp32
         * without pairs keeps its own) */
        const int wide = p->precision == HB_FLOAT64 || plan->pairs;
        plan->stage = 1;
        /* m > 256: persistent grids, blocks drawing tiles of systems and copying the
         * next one's first rows during a reduced solve: 1.02-1.10x (fp64), 1.03-1.06x
         * (fp32); at m <= 256 they lose 1-18% */
        plan->persist = m > 256;
        plan->threads = m <= 256 ? 256 : 512;
        plan->ahead = 4;
        plan->hint = 1;
        /* L2 prefetch instructions while G >= 8: 1.09-1.18x; at G <= 4 they lose a third */
        plan->prefetch = m <= 1024 ? 2 : 0;
        /* m > 2048: clusters share G systems (alone a block holds G = 2 or 1, a
         * quarter of each sector; 1.5-2.3x). Persistent: fp64 clusters of
         * 8 blocks of 512 threads (G = 16 at m = 4096: 76 against 72% of copy for
         * 256), fp32 of 8 blocks of 256 to m = 4096, then of 16 blocks of 256 (two
         * blocks a multiprocessor, G = 8: 49 against 41% at 8192 x 20,000 for 8 of 512;
         * three under the 80-register cap: 56%). fp32 from m = 1025: clusters
         * of 8 (G = 16 at m = 2048: 1.08x clusters of 4 under the cap, 66.9 against
         * 61.9% at x 20,000, 1.04x at x 2,000) */
        if (m > 2048 || (m > 1024 && !wide)) {
            plan->cluster = !wide && m > 4096 ? 16 : 8;
            plan->threads = wide ? 512 : 256;
        } else if (m > 1024 && wide) {
            /* staged fp64: clusters of 8 blocks of 256 threads (G = 16) at m = 2048,
             * 75% of copy against 54% for 512 threads alone (G = 4) */
            plan->cluster = 8;
            plan->threads = 256;
        } else if (m > 256 && m <= 512 && p->precision == HB_FLOAT64) {
            /* fp64: clusters of 4 blocks of 256 threads, G = 32 (the blocks meet
             * twice a solve: cluster_reduced): 1.13x at 512 x 256,000; fp32 pairs
             * run as fast in one block of 512 (91.5 against 92.1% of copy), without
             * the interface solve's rounding (1.3e-5 against 3e-6 in the accuracy
             * table: docs/tridiag.md, "Accuracy") */
            plan->cluster = 4;
            plan->threads = 256;
        } else if (m > 512 && !wide) {
            /* fp32 (float arithmetic: fewer registers, more blocks a multiprocessor):
             * clusters of 4 blocks of 256 threads, G = 16 at m = 1024: 1.15x at
             * x 20,000 (fp64 loses: 0.54-0.58x) */
            plan->cluster = 4;
            plan->threads = 256;
        }
    }
    /* Small interleaved batches (small_batch, or the tuning's small=1): the solve is a few
     * microseconds of latency, and the plans above, built for G systems a block, leave
     * most multiprocessors idle (fp32 in pairs at 128 x 256: 4 blocks). 8-row chunks,
     * 128 threads, one system a thread spread it over 4-16 times more blocks: 1.00-1.47x
     * (docs/tridiag.md, "Small batches"). */
    if (p->layout == HB_LAYOUT_INTERLEAVED && (small > 0 || (small < 0 && small_batch(p)))) {
        plan->rows = 8;
        plan->threads = 128;
        plan->pairs = 0;
    }
}

/* Shared memory of a plan's block (one chunk a thread) with a ring of `ring` rows. */
static int plan_smem(const hb_gtsv_plan_t *plan, int esize, int ring)
{
    const int G = plan->threads * plan->cluster / plan->chunks; /* systems a block */
    return hb_td_partition_smem(plan->rows, 1, plan->cluster, plan->threads, G > 0 ? G : 1,
                                esize, ring);
}

/* The plan of a solve whose shape is checked: the rule, then the context's tuning
 * (backend/tuning.h: 0 or -1 leave the rule's value). */
static hb_status_t make_plan(const struct hb_context *ctx, const hb_gtsv_problem_t *p,
                             hb_gtsv_plan_t *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->algo = resolve(ctx, p);
    if (plan->algo != HB_GTSV_ALGO_PARTITION) return HB_SUCCESS;
    const hb_gtsv_tuning_t t = ctx->tuning.gtsv;
    rule_plan(p, t.small, plan);
    if (t.rows) plan->rows = t.rows;
    if (t.threads) plan->threads = t.threads;
    if (t.ahead) plan->ahead = t.ahead;
    if (t.hint >= 0) plan->hint = t.hint;
    if (t.prefetch >= 0) plan->prefetch = t.prefetch;
    if (t.vector >= 0) plan->vector = t.vector;
    if (t.cluster) plan->cluster = t.cluster;
    if (t.stage >= 0) plan->stage = t.stage;
    if (t.persist >= 0) plan->persist = t.persist;
    if (t.pairs >= 0) plan->pairs = t.pairs;
    plan->chunks = hb_td_chunks_for(p->m, plan->rows);
    /* A cluster's blocks hold P / K chunks of each system, at least one. */
    if (plan->cluster > plan->chunks) plan->cluster = plan->chunks;
    const int per_block = plan->chunks / plan->cluster;
    /* A thread a chunk; 8-row chunks two a thread where the block has P / 2
     * threads (always beyond 512 chunks; never in clusters, where P / K <= 512).
     * Fewer threads are raised to that. */
    int fewest = per_block < HB_TD_MAX_THREADS ? per_block : HB_TD_MAX_THREADS;
    if (plan->cluster == 1 && plan->rows == 8 && plan->chunks >= 2) fewest = plan->chunks / 2;
    if (plan->threads < fewest) plan->threads = fewest;
    /* Pairs of fp32 systems a thread: values of 8 bytes, G counting pairs. */
    if (p->precision != HB_FLOAT32 || p->layout != HB_LAYOUT_INTERLEAVED) plan->pairs = 0;
    const int esize = p->precision == HB_FLOAT32 ? (int)sizeof(float) : (int)sizeof(double);
    /* Clusters: the shared memory grows with the cluster's interface rows (6 K
     * values a system, G = threads K / P systems); where it would pass the most a
     * plan may ask, fewer threads (down to 128, and P / K), else fewer blocks. */
    while (plan->cluster > 1) {
        if (plan_smem(plan, plan->pairs ? 2 * esize : esize, 0) <= HB_TD_MAX_SMEM) break;
        if (plan->threads > 128 && plan->threads / 2 >= plan->chunks / plan->cluster) {
            plan->threads /= 2;
        } else {
            plan->cluster /= 2;
            const int least = plan->chunks / plan->cluster;
            if (plan->threads < least) plan->threads = least;
        }
    }
    /* Staging: interleaved, one chunk a thread (flat 16-byte loads need none); a ring
     * too large for a block's shared memory takes 4 rows ahead, else no staging. */
    if (p->layout != HB_LAYOUT_INTERLEAVED || hb_td_chunks_per_thread(plan) != 1)
        plan->stage = 0;
    for (int tries = 0; plan->stage && tries < 3; ++tries) {
        const int value = plan->pairs ? 2 * esize : esize;
        if (plan_smem(plan, value, hb_td_stage_rows(plan, 1)) <= HB_TD_MAX_SMEM_STAGED) break;
        if (plan->ahead > 4) plan->ahead = 4;
        else if (plan->pairs) plan->pairs = 0;
        else plan->stage = 0;
    }
    /* Persistent blocks prefetch through the ring; pairs are staged kernels only. */
    if (!plan->stage) plan->persist = plan->pairs = 0;
    return HB_SUCCESS;
}

hb_status_t hb_gtsv_make_plan(hb_context_t *ctx, const hb_gtsv_problem_t *problem,
                              hb_gtsv_plan_t *plan)
{
    static const char fn[] = "hb_gtsv_make_plan";
    hb_clear_error();
    if (!plan) return hb_fail(HB_ERR_INVALID_VALUE, "%s: plan is NULL", fn);
    hb_status_t status = check_shape(fn, ctx, problem);
    if (status == HB_SUCCESS) status = make_plan(ctx, problem, plan);
    return status;
}

static int overlaps(const void *a, const void *b, size_t bytes)
{
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return x < y + bytes && y < x + bytes;
}

/* Everything a solve needs beyond the shape. */
static hb_status_t check_solve(const char *fn, const struct hb_context *ctx,
                               const hb_gtsv_problem_t *p)
{
    hb_status_t status = check_shape(fn, ctx, p);
    if (status != HB_SUCCESS) return status;
    if (!p->dl || !p->d || !p->du || !p->b || !p->x)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: dl, d, du, b and x must not be NULL", fn);
    if (p->flags & ~(HB_GTSV_IN_PLACE | HB_GTSV_PAD_COMPUTE))
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: flags = 0x%x has unknown bits", fn, p->flags);
    if ((p->flags & HB_GTSV_PAD_COMPUTE) && !p->sizes)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: HB_GTSV_PAD_COMPUTE needs per-system sizes (the vbatch solvers)", fn);
    const size_t bytes = span_elements(p) * element_size(p->precision);
    const void *inputs[4] = {p->dl, p->d, p->du, p->b};
    static const char *const names[4] = {"dl", "d", "du", "b"};
    for (int k = 0; k < 4; ++k) {
        if (k == 3 && (p->flags & HB_GTSV_IN_PLACE)) {
            if (p->x != p->b)
                return hb_fail(HB_ERR_INVALID_VALUE,
                               "%s: HB_GTSV_IN_PLACE needs x == b (the solution overwrites b)",
                               fn);
            continue;
        }
        if (overlaps(p->x, inputs[k], bytes))
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "%s: x overlaps %s; inputs are kept intact (pass x == b with "
                           "HB_GTSV_IN_PLACE to overwrite b)", fn, names[k]);
    }
    if (required_bytes(ctx, p) > 0 && !p->buffer)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: buffer is NULL; this solve needs %zu bytes (hb_gtsv_buffer_size)", fn,
                       required_bytes(ctx, p));
    if (p->sizes && ctx->ops->gtsv->host_arrays) /* device sizes: not readable here */
        for (int s = 0; s < p->batch_count; ++s)
            if (p->sizes[s] < 1 || p->sizes[s] > p->m)
                return hb_fail(HB_ERR_INVALID_VALUE,
                               "%s: sizes[%d] = %d; expected 1 <= size <= m_max = %d", fn, s,
                               p->sizes[s], p->m);
    return HB_SUCCESS;
}

static hb_status_t dispatch(struct hb_context *ctx, const hb_gtsv_problem_t *p)
{
    hb_gtsv_plan_t plan;
    hb_status_t status = make_plan(ctx, p, &plan);
    if (status != HB_SUCCESS) return status;
    return ctx->ops->gtsv->solve(ctx->device, hb_context_threads(ctx), p, &plan);
}

hb_status_t hb_gtsv_describe(hb_context_t *ctx, const hb_gtsv_problem_t *problem, char *text,
                             size_t size)
{
    static const char fn[] = "hb_gtsv_describe";
    hb_clear_error();
    if (!text || size == 0) return hb_fail(HB_ERR_INVALID_VALUE, "%s: text is NULL or size 0", fn);
    text[0] = '\0';
    hb_status_t status = check_shape(fn, ctx, problem);
    hb_gtsv_plan_t plan;
    if (status == HB_SUCCESS) status = make_plan(ctx, problem, &plan);
    if (status != HB_SUCCESS) return status;
    if (plan.algo != HB_GTSV_ALGO_PARTITION)
        snprintf(text, size, "%s", hb_gtsv_algo_name(plan.algo));
    else
        ctx->ops->gtsv->describe(&plan, text, size);
    return HB_SUCCESS;
}

hb_status_t hb_gtsv_solve(hb_context_t *ctx, const hb_gtsv_problem_t *problem)
{
    hb_clear_error();
    hb_status_t status = check_solve("hb_gtsv_solve", ctx, problem);
    return status == HB_SUCCESS ? dispatch(ctx, problem) : status;
}

/* ---- the cuSPARSE-style entry points: one problem each ---- */

static hb_status_t shape_bytes(hb_context_t *ctx, hb_precision_t precision, hb_gtsv_algo_t algo,
                               int m, int vbatch, hb_layout_t layout, int batch_count,
                               int batch_stride, size_t *bytes)
{
    static const int one = 1;
    const hb_gtsv_problem_t p = {.precision = precision,
                                 .algo = algo,
                                 .m = m,
                                 .sizes = vbatch ? &one : NULL,
                                 .layout = layout,
                                 .batch_count = batch_count,
                                 .batch_stride = batch_stride};
    return hb_gtsv_buffer_size(ctx, &p, bytes);
}

hb_status_t hb_dgtsv_batch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m,
                                       hb_layout_t layout, int batch_count, int batch_stride,
                                       size_t *bytes)
{
    return shape_bytes(ctx, HB_FLOAT64, algo, m, 0, layout, batch_count, batch_stride, bytes);
}

hb_status_t hb_sgtsv_batch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m,
                                       hb_layout_t layout, int batch_count, int batch_stride,
                                       size_t *bytes)
{
    return shape_bytes(ctx, HB_FLOAT32, algo, m, 0, layout, batch_count, batch_stride, bytes);
}

hb_status_t hb_dgtsv_vbatch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max,
                                        hb_layout_t layout, int batch_count, int batch_stride,
                                        size_t *bytes)
{
    return shape_bytes(ctx, HB_FLOAT64, algo, m_max, 1, layout, batch_count, batch_stride, bytes);
}

hb_status_t hb_sgtsv_vbatch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max,
                                        hb_layout_t layout, int batch_count, int batch_stride,
                                        size_t *bytes)
{
    return shape_bytes(ctx, HB_FLOAT32, algo, m_max, 1, layout, batch_count, batch_stride, bytes);
}

/* Builds the problem of one cuSPARSE-style call and solves it. */
static hb_status_t solve_args(hb_context_t *ctx, hb_precision_t precision, hb_gtsv_algo_t algo,
                              int m, const int *sizes, const void *dl, const void *d,
                              const void *du, const void *b, void *x, hb_layout_t layout,
                              int batch_count, int batch_stride, unsigned flags, void *buffer)
{
    const hb_gtsv_problem_t p = {.precision = precision,
                                 .algo = algo,
                                 .m = m,
                                 .sizes = sizes,
                                 .dl = dl,
                                 .d = d,
                                 .du = du,
                                 .b = b,
                                 .x = x,
                                 .layout = layout,
                                 .batch_count = batch_count,
                                 .batch_stride = batch_stride,
                                 .flags = flags,
                                 .buffer = buffer};
    return hb_gtsv_solve(ctx, &p);
}

hb_status_t hb_dgtsv_batch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m, const double *dl,
                           const double *d, const double *du, const double *b, double *x,
                           hb_layout_t layout, int batch_count, int batch_stride,
                           unsigned flags, void *buffer)
{
    return solve_args(ctx, HB_FLOAT64, algo, m, NULL, dl, d, du, b, x, layout, batch_count,
                      batch_stride, flags, buffer);
}

hb_status_t hb_sgtsv_batch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m, const float *dl,
                           const float *d, const float *du, const float *b, float *x,
                           hb_layout_t layout, int batch_count, int batch_stride,
                           unsigned flags, void *buffer)
{
    return solve_args(ctx, HB_FLOAT32, algo, m, NULL, dl, d, du, b, x, layout, batch_count,
                      batch_stride, flags, buffer);
}

hb_status_t hb_dgtsv_vbatch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max, const int *sizes,
                            const double *dl, const double *d, const double *du,
                            const double *b, double *x, hb_layout_t layout, int batch_count,
                            int batch_stride, unsigned flags, void *buffer)
{
    hb_clear_error();
    if (!sizes) return hb_fail(HB_ERR_INVALID_VALUE, "hb_dgtsv_vbatch: sizes is NULL");
    return solve_args(ctx, HB_FLOAT64, algo, m_max, sizes, dl, d, du, b, x, layout, batch_count,
                      batch_stride, flags, buffer);
}

hb_status_t hb_sgtsv_vbatch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max, const int *sizes,
                            const float *dl, const float *d, const float *du, const float *b,
                            float *x, hb_layout_t layout, int batch_count, int batch_stride,
                            unsigned flags, void *buffer)
{
    hb_clear_error();
    if (!sizes) return hb_fail(HB_ERR_INVALID_VALUE, "hb_sgtsv_vbatch: sizes is NULL");
    return solve_args(ctx, HB_FLOAT32, algo, m_max, sizes, dl, d, du, b, x, layout, batch_count,
                      batch_stride, flags, buffer);
}

/* ---- timing ---- */

hb_status_t hb_gtsv_benchmark(hb_context_t *ctx, const hb_gtsv_problem_t *problems,
                              int n_problems, int repeats, double *seconds)
{
    static const char fn[] = "hb_gtsv_benchmark";
    hb_clear_error();
    if (!problems || !seconds || n_problems < 1 || repeats < 1)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: expected problems, seconds, n_problems >= 1 and repeats >= 1", fn);
    for (int k = 0; k < n_problems; ++k) {
        hb_status_t status = check_solve(fn, ctx, &problems[k]);
        if (status != HB_SUCCESS) return status;
        if (problems[k].flags & HB_GTSV_IN_PLACE)
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "%s: problem %d is HB_GTSV_IN_PLACE; a benchmark needs its inputs "
                           "kept intact", fn, k);
    }
    hb_gtsv_plan_t *plans = malloc((size_t)n_problems * sizeof *plans);
    if (!plans) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    hb_status_t status = HB_SUCCESS;
    for (int k = 0; k < n_problems && status == HB_SUCCESS; ++k)
        status = make_plan(ctx, &problems[k], &plans[k]);
    if (status == HB_SUCCESS)
        status = ctx->ops->gtsv->benchmark(ctx->device, hb_context_threads(ctx), problems,
                                           plans, n_problems, repeats, seconds);
    free(plans);
    return status;
}
