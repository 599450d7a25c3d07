/*
 * Internal: batched tridiagonal solves (hb_gtsv_*), docs/tridiag.md.
 *
 * The arithmetic of both algorithms lives here once, as small inline
 * functions that the CPU backend (src/cpu/tridiag_cpu.c) and the CUDA kernels
 * (src/cuda/tridiag_*.cu, where they become __device__ code kept in
 * registers) share, so the CPU PARTITION solve is the CUDA kernel's twin
 * step for step and CI tests the GPU's arithmetic. PARTITION computes in the
 * data's precision (tridiag_arith.h, included once per precision), THOMAS in
 * double.
 *
 * Row i of a system of n rows: dl x[i-1] + d x[i] + du x[i+1] = b. Rows
 * i >= n (padding up to a chunk or to m_max) are identity rows with b = 0,
 * so they decouple and solve to 0; dl of row 0 and du of row n-1 are zero.
 */
#ifndef HB_COMMON_TRIDIAG_PLAN_H
#define HB_COMMON_TRIDIAG_PLAN_H

#include <stddef.h>

#include "hinesbatch.h"

#include "common/hostdev.h"

/* PARTITION: each system is cut into chunks of L rows, solved by one CUDA
 * block of at most HB_TD_MAX_THREADS threads, one or two chunks a thread (two
 * only for 8-row chunks): at most HB_TD_MAX_CHUNKS chunks. */
#define HB_TD_MAX_THREADS 512
#define HB_TD_MAX_CHUNKS (2 * HB_TD_MAX_THREADS)
#define HB_TD_MAX_PARTITION_M 8192

/* Chunks of L rows per system of m rows: the power of two with P L >= m (the
 * reduced system then has 2P rows); more than HB_TD_MAX_CHUNKS when m > 1024 L. */
HB_HOSTDEV int hb_td_chunks_for(int m, int L)
{
    int p = 1;
    while (p * L < m) p *= 2;
    return p;
}

/*
 * How a solve runs (src/core/tridiag.c builds it: the rule, by layout and m,
 * then the context's tuning, backend/tuning.h's hb_gtsv_tuning_t). rows and chunks
 * (and cluster) fix the PARTITION arithmetic (the CPU twin uses them too); threads, ahead,
 * hint, prefetch and vector only shape the CUDA kernel.
 */
typedef struct hb_gtsv_plan_s {
    hb_gtsv_algo_t algo; /* THOMAS or PARTITION, never AUTO */
    int rows;            /* PARTITION: L, rows per chunk (8 or 16) */
    int chunks;          /* PARTITION: P = hb_td_chunks_for(m, L) <= HB_TD_MAX_CHUNKS */
    int threads;         /* CUDA PARTITION: block size (128, 256 or 512; at least P, or
                            for 8-row chunks P / 2: two chunks a thread) */
    int ahead;           /* CUDA PARTITION: rows of a chunk whose loads are in flight together */
    int hint;            /* CUDA PARTITION loads: 0 plain, 1 / 2: L2 prefetch of 128 / 256 B */
    int prefetch;        /* CUDA PARTITION: 0 none, 1 the chunk's lines asked of L2 at the
                            start, 2 the next `ahead` rows' lines at each load group */
    int vector;          /* CUDA PARTITION, flat layout, where the chunk starts on 16 bytes
                            (replaces hint): 1 rows loaded and x stored 16 bytes at a time;
                            2 the same loads, and x written a warp's contiguous spans at
                            a time through shared memory */
    int cluster;         /* PARTITION: K (1, 2, 4, 8, 16), the blocks of a CUDA cluster that
                            share G systems, each eliminating P / K chunks of each and
                            solving its part of the reduced system alone, then the
                            blocks' interface system (distributed shared memory); changes
                            the arithmetic (the CPU twin follows it). K > 1: one chunk a
                            thread, threads >= P / K */
    int stage;           /* CUDA PARTITION, interleaved layout, one chunk a thread: 1 rows
                            copied into a ring of min(L, 2 ahead) rows a thread of shared
                            memory by cp.async, about 2 ahead rows in flight without
                            holding registers; 0 loads into registers */
    int persist;         /* CUDA PARTITION, staged: 1 as many blocks (clusters) as are resident
                            at once, each solving tiles of G systems in turn and copying the
                            next tile's first rows while it solves the reduced system of the
                            current one; 0 a block (cluster) a tile */
    int pairs;           /* CUDA PARTITION, fp32 interleaved, staged: 1 a thread solves two
                            adjacent systems, a value a pair of floats (8-byte copies; G
                            counts pairs: a block holds 2 G systems, the shared memory and
                            registers of an fp64 block), each system's arithmetic that of
                            one system a thread; where the count and stride are even, the
                            arrays 8-byte aligned and the sizes fixed, else the kernel of
                            one system a thread runs the same plan. 0 one a thread */
} hb_gtsv_plan_t;

/* CUDA PARTITION: chunks a thread, 2 where the block has fewer threads than a
 * system has chunks (8-row chunks only, threads = P / 2; never in clusters). */
HB_HOSTDEV int hb_td_chunks_per_thread(const hb_gtsv_plan_t *plan)
{
    return plan->cluster <= 1 && plan->chunks > plan->threads ? 2 : 1;
}

/* CUDA PARTITION: values a thread stashes in shared memory during the PCR, its chunks'
 * spike columns a'[1..L-2], where it holds 16 rows (one 16-row chunk, two 8-row ones). */
HB_HOSTDEV int hb_td_stash_values(int L, int C)
{
    return L * C == 16 ? C * (L - 2) : 0;
}

/* CUDA PARTITION in clusters: where a block's shared-memory areas start, in
 * values of `esize` bytes, for `threads` threads (one L-row chunk each) holding G
 * systems, K blocks a cluster: the chunk starts (3 values a chunk) from 0, later x
 * at the chunk ends; the ends' rows (a, c, d and the two spike columns), two
 * buffers of 5 values a chunk, from `ends`; with 16-row chunks the stash (14 a
 * thread) from `stash`; the cluster's interface rows (6 K a system) and x_L, x_R (2 a system)
 * from `copies`, in the ends' buffers where they fit (they are copied after the
 * PCR), else past the stash; the block's own interface rows (6 a system), which
 * the others read, from `own_rows`, past the first 64 bytes a thread (where
 * `vector = 2` stages x); `total` values in all. */
typedef struct {
    int ends, stash, copies, own_rows, total;
} hb_td_cluster_layout_t;

HB_HOSTDEV void hb_td_cluster_layout(int L, int threads, int G, int K, int esize,
                                       hb_td_cluster_layout_t *at)
{
    const int copies = (6 * K + 2) * G, in_ends = copies <= 10 * threads;
    at->ends = 3 * threads;
    at->stash = at->ends + 10 * threads;
    const int stash_end = at->stash + hb_td_stash_values(L, 1) * threads;
    at->copies = in_ends ? at->ends : stash_end;
    const int past = in_ends ? stash_end : stash_end + copies;
    const int staged = 64 * threads / esize;
    at->own_rows = past > staged ? past : staged;
    at->total = at->own_rows + 6 * G;
}

#define HB_TD_SLOT_BYTES 16 /* staged plans: the tiles a persistent block has drawn, last */
#define HB_TD_MAX_SMEM (112 * 1024) /* the most a plan may ask (the launcher allows it) */
#define HB_TD_MAX_SMEM_STAGED (227 * 1024) /* the same, staged plans: a block a multiprocessor */

/* Rows of the cp.async ring of a staged plan (0: not staged). */
HB_HOSTDEV int hb_td_stage_rows(const hb_gtsv_plan_t *plan, int C)
{
    if (!plan->stage || C != 1) return 0;
    return plan->rows < 2 * plan->ahead ? plan->rows : 2 * plan->ahead;
}

/* Staged, persistent blocks: rows of the next tile a thread copies into its ring
 * before the current tile's reduced solve, into the ring slots past every area
 * that solve uses (hb_td_partition_smem's layout, in values from the stash; the
 * ring's R rows of 4 values a thread start there): the stash, and with clusters
 * the copies and the block's interface rows. */
HB_HOSTDEV int hb_td_stage_prefetch_rows(int L, int K, int threads, int G, int esize, int R)
{
    int used; /* values past the stash's start in use during the reduced solve */
    if (K > 1) {
        hb_td_cluster_layout_t at;
        hb_td_cluster_layout(L, threads, G, K, esize, &at);
        used = at.total - at.stash;
    } else {
        used = hb_td_stash_values(L, 1) * threads;
    }
    const int first_free = (used + 4 * threads - 1) / (4 * threads);
    return first_free < R ? R - first_free : 0;
}

/* CUDA PARTITION: shared memory of a block in bytes, for L-row chunks, C a thread,
 * clusters of K blocks, `threads` threads holding G systems, values of `esize`
 * bytes (the data's: the arithmetic is in its precision). Without clusters: the
 * reduced rows (4 values of 2 rows a chunk) and, where a thread holds 16 rows, the
 * stash of their spike columns during the PCR (L - 2 a chunk); at least the 64
 * bytes a thread through which `vector = 2` writes x. Clusters: above. A staged
 * block's ring (`ring` rows of 4 values a thread) starts where the stash does (a
 * thread writes its stash after its last ring read) and may run over the areas
 * used only after the loads (clusters: the ends' rows, the copies, the interface
 * rows); then HB_TD_SLOT_BYTES for persistent grids. */
HB_HOSTDEV int hb_td_partition_smem(int L, int C, int K, int threads, int G, int esize,
                                      int ring)
{
    int total, stash; /* values */
    if (K > 1) {
        hb_td_cluster_layout_t at;
        hb_td_cluster_layout(L, threads, G, K, esize, &at);
        total = at.total;
        stash = at.stash;
    } else {
        const int values = 8 * C + hb_td_stash_values(L, C);
        total = threads * (values * esize > 64 ? values : 64 / esize);
        stash = 8 * C * threads; /* past the reduced rows: 4 values of 2 rows a chunk */
    }
    if (ring > 0 && stash + 4 * ring * threads > total) total = stash + 4 * ring * threads;
    return total * esize + (ring > 0 ? HB_TD_SLOT_BYTES : 0);
}

/* The PARTITION arithmetic (and the rows' identity and boundary rules), in the
 * data's precision: double, and float (C: *_f; C++: overloads, with C++ linkage
 * even where this header is included inside extern "C"). */
#if defined(__cplusplus)
extern "C++" {
#endif
#define HB_TD_FN(name) name
#define real_t double
/* The interface sweep's loops not unrolled in fp64: unrolled, their registers made the
 * clustered fp64 kernels spill 24 bytes (16 rolled) and run 1-4% slower;
 * rolled, the fp32 pair kernels spill instead (3-9% slower), so fp32 keeps them. */
#define HB_TD_INTERFACE_LOOP HB_ROLLED
#include "common/tridiag_arith.h"
#undef HB_TD_INTERFACE_LOOP
#undef real_t
#undef HB_TD_FN
#if defined(__cplusplus)
#define HB_TD_FN(name) name
#else
#define HB_TD_FN(name) name##_f
#endif
#define real_t float
#define HB_TD_INTERFACE_LOOP
#include "common/tridiag_arith.h"
#undef HB_TD_INTERFACE_LOOP
#undef real_t
#undef HB_TD_FN
#if defined(__cplusplus)
}
#endif

/* Thomas forward step: (cp, yp) of row i from row i-1's (cp, yp). */
HB_HOSTDEV void hb_td_thomas_step(double dl, double d, double du, double b, double *cp,
                                    double *yp)
{
    const double inv = 1.0 / (d - dl * *cp);
    *yp = (b - dl * *yp) * inv;
    *cp = du * inv;
}

#endif
