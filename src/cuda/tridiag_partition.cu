/*
 * CUDA PARTITION kernels of batched tridiagonal solves (docs/tridiag.md), and their
 * launcher: each system cut into P chunks of L rows (L = 8 or 16), one
 * thread a chunk (or two 8-row chunks), the chunk eliminated in registers
 * (hb_td_chunk_forward, hb_td_chunk_ends) down to two rows of a reduced system over
 * the chunk ends; that system (2P rows) is solved in shared memory
 * (one cyclic-reduction step, PCR on the P chunk ends, the starts by
 * substitution), then every thread finishes its chunk from registers.
 * Memory sees each input read once and x written once, and the
 * parallelism is batch_count x P threads whatever the batch.
 * Clustered (_k): K blocks of a thread-block cluster share G
 * systems, each eliminating P / K chunks of each and solving its
 * part of the reduced system alone (two spike columns); the
 * blocks then solve their interface rows, read from each other's
 * shared memory (cluster_reduced).
 *
 * The kernel is compiled for every shape the plan (hb_gtsv_plan_t,
 * built by src/core/tridiag.c: the rule, or the context's tuning) can ask for:
 * rows per chunk L (8, 16) and chunks a thread (1; 2 for L = 8), rows of loads
 * in flight (4 or 8), clusters or not (one chunk a thread),
 * load mode (plain, L2 prefetch hint 128 B or 256 B, flat 16-byte loads and
 * stores, interleaved rows staged through shared memory by cp.async) and
 * precision; L2 prefetch instructions are a run-time choice
 * (gtsv_args_t); the block size is a launch parameter (every partition kernel
 * has at most 128 registers, so 512-thread blocks launch; registers and spills
 * are in the build log: `--resource-usage`).
 */
#include "cuda/tridiag_cuda.h"

#define PARTITION_MAX_THREADS HB_TD_MAX_THREADS /* the largest partition block */

/* ------------------------------------------------------------------------ */
/* Kernels                                                                  */
/* ------------------------------------------------------------------------ */


/* Asks L2 for the lines of rows [q0, q1) of this thread's chunk (rows from
 * `first`), one request per array and 128-byte line, without a register: DRAM
 * then sees the chunk's requests at once and the loads below hit L2. In the
 * flat layout a chunk's rows share lines, so only a row that starts a line
 * (or the first) asks. */
template <typename real_t>
__device__ __forceinline__ void prefetch_rows(const gtsv_args_t &a, size_t base, int first,
                                              int q0, int q1, int touched)
{
    const size_t esize = sizeof(real_t);
    const char *arrays[4] = {(const char *)a.dl, (const char *)a.d, (const char *)a.du,
                             (const char *)a.b};
#pragma unroll
    for (int q = q0; q < q1; ++q) {
        const int i = first + q;
        if (i >= touched) break;
        const size_t e = base + (size_t)i * a.row_stride;
#pragma unroll
        for (int c = 0; c < 4; ++c) {
            const char *ptr = arrays[c] + e * esize;
            if (q == q0 || a.row_stride != 1 || ((size_t)ptr & 127) < esize)
                asm volatile("prefetch.global.L2 [%0];" ::"l"(ptr));
        }
    }
}

/* Element e of all four inputs starts on 16 bytes (flat vector loads). */
template <typename real_t>
__device__ __forceinline__ int aligned16(const gtsv_args_t &a, size_t e)
{
    const size_t off = e * sizeof(real_t);
    return ((((size_t)a.dl + off) | ((size_t)a.d + off) | ((size_t)a.du + off) |
             ((size_t)a.b + off)) & 15) == 0;
}

/* 16 bytes from element e (aligned): 4 floats or 2 doubles into out[0..]. */
__device__ __forceinline__ void load_vector(const void *array, size_t e, float *out)
{
    const float4 v = *((const float4 *)((const float *)array + e));
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
    out[3] = v.w;
}

__device__ __forceinline__ void load_vector(const void *array, size_t e, double *out)
{
    const double2 v = *((const double2 *)((const double *)array + e));
    out[0] = v.x;
    out[1] = v.y;
}

__device__ __forceinline__ void load_vector(const void *array, size_t e, hb_pair *out)
{
    const float4 v = *((const float4 *)((const hb_pair *)array + e));
    out[0] = hb_pair(v.x, v.y);
    out[1] = hb_pair(v.z, v.w);
}

/* 16 bytes of v (4 floats or 2 doubles) to dst (aligned). */
__device__ __forceinline__ void pack16(void *dst, const float *v)
{
    *(float4 *)dst = make_float4(v[0], v[1], v[2], v[3]);
}

__device__ __forceinline__ void pack16(void *dst, const double *v)
{
    *(double2 *)dst = make_double2(v[0], v[1]);
}

__device__ __forceinline__ void pack16(void *dst, const hb_pair *v)
{
    *(float4 *)dst = make_float4(v[0].x, v[0].y, v[1].x, v[1].y);
}

/* Mode 4 stores: a warp's 32 chunks are contiguous (flat layout, one system,
 * P >= 32), so x goes through the warp's 2 KB of shared memory and out as
 * whole 64-byte spans of lines, 8 chunks an instruction, instead of one
 * 16-byte piece of 32 lines. Unit u (16 bytes) of chunk t sits at 16-byte
 * slot swizzled so that 8 threads' writes and reads both hit distinct banks. */
__device__ __forceinline__ int store_slot(int t, int u, int units)
{
    return units == 4 ? t * 4 + (u ^ ((t >> 1) & 3)) : t * 2 + (u ^ ((t >> 2) & 1));
}

/* cp.async (staged plans): one value from global to shared memory without a
 * register, with the 128-byte L2 prefetch-size hint of load_hint. */
template <typename real_t>
__device__ __forceinline__ void copy_async(real_t *dst, const void *src)
{
    const unsigned to = (unsigned)__cvta_generic_to_shared(dst);
    asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], %2;" ::"r"(to), "l"(src),
                 "n"(sizeof(real_t)));
}

__device__ __forceinline__ void copy_async_commit() { asm volatile("cp.async.commit_group;"); }

/* Waits until at most `pending` of this thread's copy groups are in flight
 * (`pending` folds to a constant in the unrolled loops: wait_group takes one). */
__device__ __forceinline__ void copy_async_wait(int pending)
{
    switch (pending) {
#define WAIT_CASE(N)                                                                       \
    case N: asm volatile("cp.async.wait_group " #N ";" ::: "memory"); break;
        WAIT_CASE(1) WAIT_CASE(2) WAIT_CASE(3) WAIT_CASE(4) WAIT_CASE(5) WAIT_CASE(6)
        WAIT_CASE(7) WAIT_CASE(8) WAIT_CASE(9) WAIT_CASE(10) WAIT_CASE(11) WAIT_CASE(12)
        WAIT_CASE(13) WAIT_CASE(14) WAIT_CASE(15)
#undef WAIT_CASE
    default: asm volatile("cp.async.wait_group 0;" ::: "memory");
    }
}

/* Persistent grids: tiles drawn so far in this launch (zeroed before each; launches
 * of the library run in order on one stream, so no two use it at once). */
__device__ unsigned int partition_tile_counter;

/* x, which the compiler cannot see through (nor hoist what derives from it out of a loop). */
__device__ __forceinline__ int opaque(unsigned x)
{
    int y;
    asm volatile("mov.b32 %0, %1;" : "=r"(y) : "r"(x));
    return y;
}

/* Staged plans: row i (row q of the chunk) into ring slot q % R of this thread
 * (4 values, one column a thread: [slot][value][thread]), rows past `touched` not
 * copied. */
template <typename real_t>
__device__ __forceinline__ void stage_row(const gtsv_args_t &a, size_t base, int i, int touched,
                                          real_t *slot, int T)
{
    if (i >= touched) return;
    const size_t e = (base + (size_t)i * a.row_stride) * sizeof(real_t);
    copy_async(slot, (const char *)a.dl + e);
    copy_async(slot + T, (const char *)a.d + e);
    copy_async(slot + 2 * T, (const char *)a.du + e);
    copy_async(slot + 3 * T, (const char *)a.b + e);
}

/* Where chunk j of system g (of the block's G, PL chunks each) keeps a value in a
 * shared-memory plane of G PL values: in chunk order, system fastest where threads
 * are, so that every access of a warp, at any stride, reads adjacent values. */
__device__ __forceinline__ int chunk_index(int j, int PL, int G, int g, int sys_fastest)
{
    return sys_fastest ? j * G + g : g * PL + j;
}

/* Where reduced row q of a system lives in its block's shared memory: even and odd
 * rows (chunk q / 2's start and end) in separate parts, each in chunk order. */
__device__ __forceinline__ int reduced_index(int q, int PL, int G, int g, int sys_fastest)
{
    return (q & 1) * (PL * G) + chunk_index(q >> 1, PL, G, g, sys_fastest);
}

/* Where `local` of this block's shared memory is in block `rank`'s (distributed
 * shared memory: the blocks of a cluster see each other's). */
__device__ __forceinline__ unsigned cluster_address(const void *local, int rank)
{
    const unsigned addr = (unsigned)__cvta_generic_to_shared(local);
    unsigned remote;
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;" : "=r"(remote) : "r"(addr), "r"(rank));
    return remote;
}

/* The value of block `rank`'s shared memory at the place of `local` in this block's
 * (one overload per precision: the PTX type and the register constraint). */
#define LOAD_CLUSTER(T, PTX_TYPE, CONSTRAINT)                                              \
    __device__ __forceinline__ T load_cluster(const T *local, int rank)                    \
    {                                                                                      \
        T v;                                                                               \
        asm volatile("ld.shared::cluster." PTX_TYPE " %0, [%1];"                           \
                     : "=" CONSTRAINT(v)                                                   \
                     : "r"(cluster_address(local, rank))                                   \
                     : "memory");                                                          \
        return v;                                                                          \
    }
LOAD_CLUSTER(double, "f64", "d")
LOAD_CLUSTER(float, "f32", "f")
LOAD_CLUSTER(int, "s32", "r")
#undef LOAD_CLUSTER

__device__ __forceinline__ hb_pair load_cluster(const hb_pair *local, int rank)
{
    hb_pair v;
    asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];"
                 : "=f"(v.x), "=f"(v.y)
                 : "r"(cluster_address(local, rank))
                 : "memory");
    return v;
}

/* Every thread of the cluster, its shared-memory writes visible to the others'
 * reads after it; split in two, the arrival (after this block's last read of the
 * others' shared memory) and the wait (before it leaves, so that its own shared
 * memory outlives the others' reads). */
__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release.aligned;\n\t"
                 "barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_arrive()
{
    asm volatile("barrier.cluster.arrive.release.aligned;" ::: "memory");
}

__device__ __forceinline__ void cluster_wait()
{
    asm volatile("barrier.cluster.wait.acquire.aligned;" ::: "memory");
}

/* Value v (a, b, c, d) of reduced row q (of N) of system g; the identity row past the
 * ends. */
template <typename real_t>
__device__ __forceinline__ real_t reduced_value(const real_t *smem, int rows, int q, int v, int N,
                                                int PL, int G, int g, int sys_fastest)
{
    if (q < 0 || q >= N) return v == 1 ? (real_t)1 : (real_t)0;
    return smem[v * rows + reduced_index(q, PL, G, g, sys_fastest)];
}

/* A reduced row {a, 1, c, d}, by value. */
template <typename real_t> struct row4 {
    real_t v[4];
};

/* Clusters: the chunk start row at index q of S (planes a, c, d of nt values), read back
 * where it is needed rather than held in registers through the reduced solve (the 8
 * registers of an fp64 row were what the clustered fp64 kernels spilled). */
template <typename real_t>
__device__ __forceinline__ row4<real_t> start_row(const real_t *S, int q, int nt)
{
    row4<real_t> r;
    r.v[0] = S[q];
    r.v[1] = (real_t)1;
    r.v[2] = S[nt + q];
    r.v[3] = S[2 * nt + q];
    return r;
}

/*
 * Clusters: the reduced solve of block `rank` of K (chunks [rank PL, (rank + 1) PL)
 * of each of G systems; this thread chunk rank PL + jl of system g) with the
 * blocks meeting twice, not at every PCR step (tridiag_arith.h, "Clusters"). own[]
 * holds the chunk's start row (own[0..3]) and end row (own[4..7]); on return own[3]
 * and own[7] are x at the chunk's start and end. The start rows are already in
 * S (planes a, c, d) and the block's threads past their barrier. Shared memory
 * (hb_td_cluster_layout): S (later x at the chunk ends), E (the ends' rows: a, c,
 * d, vl, vr; two buffers, so that a PCR step needs one barrier), X (the cluster's
 * interface rows, then x_L and x_R a system), I (this block's interface rows,
 * which the others read).
 */
template <typename real_t>
__device__ __forceinline__ void cluster_reduced(real_t *smem, int K, int rank, int PL, int G,
                                                int g, int jl, int sys_fastest, int L,
                                                real_t *own, int tid)
{
    const int nt = G * PL;
    hb_td_cluster_layout_t at;
    hb_td_cluster_layout(L, nt, G, K, (int)sizeof(real_t), &at);
    real_t *S = smem, *E = smem + at.ends, *X = smem + at.copies, *I = smem + at.own_rows;
#define AT(jj) chunk_index((jj), PL, G, g, sys_fastest)
    /* The cyclic-reduction step, with the next chunk's start (in the block). */
    real_t e[6], next[4] = {0, 1, 0, 0};
    if (jl + 1 < PL) {
        next[0] = S[AT(jl + 1)];
        next[2] = S[nt + AT(jl + 1)];
        next[3] = S[2 * nt + AT(jl + 1)];
    }
    hb_td_cluster_end_row(jl, PL, own, own + 4, next, e);
    /* PCR on the block's ends, block barriers only; a buffer is written again two
     * steps after it was read, with a barrier between. */
    for (int stride = 1; stride < PL; stride *= 2) {
        E[AT(jl)] = e[0];
        E[nt + AT(jl)] = e[2];
        E[2 * nt + AT(jl)] = e[3];
        E[3 * nt + AT(jl)] = e[4];
        E[4 * nt + AT(jl)] = e[5];
        __syncthreads();
        real_t l6[6] = {0, 1, 0, 0, 0, 0}, h6[6] = {0, 1, 0, 0, 0, 0};
        if (jl >= stride) {
            const int q = AT(jl - stride);
            l6[0] = E[q];
            l6[2] = E[nt + q];
            l6[3] = E[2 * nt + q];
            l6[4] = E[3 * nt + q];
            l6[5] = E[4 * nt + q];
        }
        if (jl + stride < PL) {
            const int q = AT(jl + stride);
            h6[0] = E[q];
            h6[2] = E[nt + q];
            h6[3] = E[2 * nt + q];
            h6[4] = E[3 * nt + q];
            h6[5] = E[4 * nt + q];
        }
        hb_td_pcr_columns(3, e, l6, h6, e);
        E = E == smem + at.ends ? E + 5 * nt : smem + at.ends;
    }
    /* The block's interface rows, {R, P, Q, Z, U, W} a system, plane by plane. */
    if (jl == 0) {
        real_t rpq[3];
        hb_td_interface_start(start_row(S, AT(jl), nt).v, e, rpq);
        I[g] = rpq[0];
        I[G + g] = rpq[1];
        I[2 * G + g] = rpq[2];
    }
    if (jl == PL - 1) {
        I[3 * G + g] = e[3];
        I[4 * G + g] = e[4];
        I[5 * G + g] = e[5];
    }
    /* Every block's rows copied here (block r's value v of system g' at
     * X[(6 r + v) G + g']), then solved, one thread a system. X may be E's buffers:
     * the cluster barrier keeps it until every thread's PCR is done. */
    cluster_sync();
    for (int q = tid; q < 6 * G * K; q += nt) X[q] = load_cluster(I + q % (6 * G), q / (6 * G));
    cluster_arrive();
    __syncthreads();
    if (tid < G) {
        real_t xl, xr;
        hb_td_interface_forward(K, X + tid, G);
        hb_td_interface_boundary(K, rank, X + tid, G, &xl, &xr);
        X[6 * G * K + tid] = xl;
        X[6 * G * K + G + tid] = xr;
    }
    __syncthreads();
    const real_t xl = X[6 * G * K + g], xr = X[6 * G * K + G + g];
    const real_t last = hb_td_spike_value(e, xl, xr);
    const row4<real_t> start = start_row(S, AT(jl), nt); /* before x overwrites it */
    S[AT(jl)] = last;
    __syncthreads();
    own[3] = hb_td_reduced_start(start.v, jl > 0 ? S[AT(jl - 1)] : xl, last);
    own[7] = last;
#undef AT
}

/* mode: loads plain (0), with the 128 B or 256 B L2 hint (1, 2), or 16 bytes
 * at a time in the flat layout (3: rows start on 16 bytes; plain otherwise;
 * 4: the same, x stored a warp's contiguous spans at a time: store_slot), or
 * staged (5, one chunk a thread: through a ring of shared memory by cp.async,
 * with the 128 B hint; two chunks a thread load as mode 1).
 * C chunks a thread (1; 2 for 8-row chunks beyond 512 of them): thread j of a
 * system holds chunks j and j + P / C, so a warp's loads still cover
 * adjacent chunks, and its rows sit in registers [c L, c L + L).
 * clustered (C = 1): a cluster of K = a.cluster blocks solves G systems, block
 * rank r eliminating chunks [r PL, (r + 1) PL) (PL = P / K) and solving its part
 * of the reduced system alone, the blocks meeting twice (cluster_reduced).
 * One tile: systems [tile G, tile G + G), the block's nth (from 0); next_tile: the block's
 * next tile (in: the fixed second, for nth = 0; out: the next, drawn in a persistent
 * grid); tid, nt: the thread index
 * and block size; prefetched: rows of this tile in flight (in), of the next (out). */
template <typename real_t>
__device__ __forceinline__ void partition_tile(const gtsv_args_t &a, const int L, const int C,
                                               const int ahead, const int mode,
                                               const int clustered, const int tile,
                                               const int nth, int &next_tile,
                                               const int persistent,
                                               const int tid, const int nt, int &prefetched)
{
    extern __shared__ __align__(16) unsigned char smem_bytes[];
    /* [4][G * 2PL]: a, b, c, d of the block's reduced rows (clustered: the areas of
     * hb_td_cluster_layout); 16 rows a thread: then [C (L - 2)][threads], the stash */
    real_t *reduced = (real_t *)smem_bytes;
    const int K = clustered ? a.cluster : 1, rank = clustered ? (int)blockIdx.x % K : 0;
    const int P = a.chunks, PL = P / K, T = PL / C, G = a.groups, N = 2 * P;
    const int rows = 2 * G * PL;
    const int g = a.sys_fastest ? tid % G : tid / T;
    const int j = rank * PL + (a.sys_fastest ? tid / G : tid % T); /* the thread's first chunk */
    /* Mode 5 (staged): rows come through a ring of R rows a thread in shared memory
     * (cp.async, the 128-byte hint), about 2 `ahead` in flight at all times; two
     * chunks a thread load with the hint's plain loads (mode 1's path). */
    const int staged = mode == 5 && C == 1;
    const int R = L < 2 * ahead ? L : 2 * ahead;
    const int hint = mode == 5 ? 1 : mode >= 3 ? 0 : mode;
    /* Persistent grids (staged): the next tile's first F rows go into ring slots
     * R - F.., past what the reduced solve uses, before the current tile's reduced
     * solve; that tile's row q then sits in slot (q + R - F) % R. */
    const int F = staged ? hb_td_stage_prefetch_rows(L, K, G * PL, G, (int)sizeof(real_t), R) : 0;
    hb_td_cluster_layout_t at; /* clusters: where the areas start */
    if (clustered) hb_td_cluster_layout(L, G * PL, G, K, (int)sizeof(real_t), &at);
    real_t *stash = reduced + (clustered ? at.stash : 4 * rows);
    /* The ring starts at the stash, whose column a thread writes after its last
     * ring read (hb_td_partition_smem). */
    real_t *ring = stash + tid;
    const int s = tile * G + g;
    int n, touched;
    system_rows(a, s, &n, &touched);
    const size_t base = s < a.count ? (size_t)s * a.sys_stride : 0;
    /* Flat 16-byte loads, by groups of `ahead` rows that exist: every group
     * starts on 16 bytes when the chunk does (ahead and L rows are multiples of
     * 16 bytes in either precision; so are the T L rows between a thread's
     * chunks); else plain loads. */
    const int vector =
        (mode == 3 || mode == 4) && a.row_stride == 1 &&
        aligned16<real_t>(a, base + (size_t)j * L);
    /* The chunks (16 rows at most) in registers, eliminated as they arrive; the
     * compiler barrier keeps at most `ahead` rows of loads in flight, which
     * hides latency without running out of registers. */
    real_t ra[16], rb[16], rc[16], rr[16];
    real_t own[16]; /* chunk c's two reduced rows: own[8 c ..] (start), own[8 c + 4 ..] (end) */
    /* The reduced system (2P rows; chunk j owns rows 2j, 2j+1): one step of
     * cyclic reduction leaves the odd rows (chunk ends) a system of their own,
     * which PCR solves, one row a chunk; each chunk start then follows from its
     * row. Stored conflict-free (reduced_index: with a thread's two rows side by
     * side each access took two wavefronts, and the PCR was bound by shared
     * memory); a thread writes only its own chunks' rows, in its own block. */
#define REDUCED_AT(q) reduced_index((q), PL, G, g, a.sys_fastest)
#define REDUCED_VALUE(q, v) reduced_value(reduced, rows, (q), (v), N, PL, G, g, a.sys_fastest)
#define REDUCED_ROW(q, out) for (int v_ = 0; v_ < 4; ++v_) (out)[v_] = REDUCED_VALUE((q), v_)
    if (a.prefetch == 1)
        for (int c = 0; c < C; ++c)
            prefetch_rows<real_t>(a, base, (j + c * T) * L, 0, L, touched);
    const int off = (R - prefetched) & (R - 1); /* ring slot of the tile's row 0 */
#define RING_SLOT(q) (ring + 4 * (((q) + off) & (R - 1)) * nt)
    /* Later tiles: every thread is past its reads of the last tile's shared memory. */
    if (nth > 0) __syncthreads();
    if (persistent) {
        /* The tiles drawn: two ints past the block's areas. */
        int *slots = (int *)(smem_bytes + hb_td_partition_smem(L, 1, K, nt, G, (int)sizeof(real_t),
                                                               R) -
                             HB_TD_SLOT_BYTES);
        /* Persistent grids: this tile's successor was drawn at the last tile's start
         * (the barrier above, or with clusters the last tile's cluster barrier, made
         * it visible; the others read cluster rank 0's); the one after it is drawn
         * now, two ahead, so that it is known before this tile's reduced solve. */
        if (nth > 0)
            next_tile =
                clustered ? load_cluster(slots + ((nth - 1) & 1), 0) : slots[(nth - 1) & 1];
        if (rank == 0 && tid == 0)
            slots[nth & 1] = 2 * ((int)gridDim.x / K) + (int)atomicAdd(&partition_tile_counter, 1u);
    }
    if (staged) {
#pragma unroll
        for (int q = 0; q < R; ++q) {
            if (q < prefetched) continue;
            stage_row<real_t>(a, base, j * L + q, touched, RING_SLOT(q), nt);
            copy_async_commit();
        }
    }
#pragma unroll
    for (int k = 0; k < L * C; ++k) {
        const int c = k / L, kk = k % L, first = (j + c * T) * L;
        if (staged) {
            /* Row k is copy group k: R groups before the loop, one a row from k = 1 on
             * (empty at the end). Its slot is refilled only after row k + 1's
             * elimination has read every value of row k into registers and used
             * them (row 0: at the next row's step, which waits on memory). */
            copy_async_wait(k == 0 ? R - 1 : R - 2);
            const real_t *slot = RING_SLOT(k);
            ra[k] = 0;
            rb[k] = 1;
            rc[k] = 0;
            rr[k] = 0;
            if (first + kk < touched) {
                ra[k] = slot[0];
                rb[k] = slot[nt];
                rc[k] = slot[2 * nt];
                rr[k] = slot[3 * nt];
            }
            hb_td_fix_row(first + kk, n, &ra[k], &rb[k], &rc[k], &rr[k]);
        } else if (kk % ahead == 0) {
            if (a.prefetch == 2 && kk + ahead < L)
                prefetch_rows<real_t>(a, base, first, kk + ahead, min(kk + 2 * ahead, L),
                                      touched);
            if (vector && first + kk + ahead <= touched) {
                /* Flat layout, a group of rows that exist and start on 16 bytes:
                 * 16-byte loads, 2 (double) or 4 (float) rows each. */
                const int W = 16 / sizeof(real_t);
#pragma unroll
                for (int q = kk; q < kk + ahead && q < L; q += W) {
                    const size_t e = base + (size_t)(first + q);
                    load_vector(a.dl, e, &ra[c * L + q]);
                    load_vector(a.d, e, &rb[c * L + q]);
                    load_vector(a.du, e, &rc[c * L + q]);
                    load_vector(a.b, e, &rr[c * L + q]);
                }
#pragma unroll
                for (int q = kk; q < kk + ahead && q < L; ++q)
                    hb_td_fix_row(first + q, n, &ra[c * L + q], &rb[c * L + q],
                                  &rc[c * L + q], &rr[c * L + q]);
            } else {
#pragma unroll
                for (int q = kk; q < kk + ahead && q < L; ++q)
                    gtsv_load_row<real_t>(a, base, first + q, n, touched, hint, &ra[c * L + q],
                                     &rb[c * L + q], &rc[c * L + q], &rr[c * L + q]);
            }
            asm volatile("" ::: "memory");
        }
        if (kk >= 1) hb_td_chunk_forward(kk, ra + c * L, rb + c * L, rc + c * L, rr + c * L);
        if (staged && k >= 1) {
            if (k - 1 + R < L)
                stage_row<real_t>(a, base, first + k - 1 + R, touched, RING_SLOT(k - 1),
                                  nt);
            copy_async_commit();
        }
        if (kk == L - 1) {
            /* The chunk's two reduced rows; its start goes to shared memory at once,
             * and with 16 rows a thread its spike column a'[1..L-2] waits out the
             * PCR there (after the reduced rows, one column per thread:
             * conflict-free), which keeps a thread's second chunk and the PCR
             * under 128 registers. */
            hb_td_chunk_ends(L, ra + c * L, rb + c * L, rc + c * L, rr + c * L, own + 8 * c);
            if (clustered) { /* a, c, d (b = 1), planes of G PL */
                const int q = chunk_index(j - rank * PL, PL, G, g, a.sys_fastest);
                reduced[q] = own[0];
                reduced[G * PL + q] = own[2];
                reduced[2 * G * PL + q] = own[3];
            } else {
#pragma unroll
                for (int v = 0; v < 4; ++v)
                    reduced[v * rows + REDUCED_AT(2 * (j + c * T))] = own[8 * c + v];
            }
            if (L * C == 16) {
#pragma unroll
                for (int q = 1; q < L - 1; ++q)
                    stash[(c * (L - 2) + q - 1) * nt + tid] = ra[c * L + q];
            }
        }
    }

    /* Persistent blocks: the next tile's first F rows, while the reduced solve runs. */
    prefetched = 0;
    if (F > 0 && next_tile < (a.count + G - 1) / G) {
        const int ns = next_tile * G + g;
        int nn, ntouched;
        system_rows(a, ns, &nn, &ntouched);
        const size_t nbase = ns < a.count ? (size_t)ns * a.sys_stride : 0;
#pragma unroll
        for (int q = 0; q < R; ++q) {
            if (q >= F) break;
            stage_row<real_t>(a, nbase, j * L + q, ntouched, ring + 4 * (R - F + q) * nt,
                              nt);
            copy_async_commit();
        }
        prefetched = F;
    }
#undef RING_SLOT

    __syncthreads();
    if (clustered) {
        cluster_reduced(reduced, K, rank, PL, G, g, j - rank * PL, a.sys_fastest, L, own, tid);
    } else {
        /* The odd rows (chunk ends): one step of cyclic reduction, then PCR. */
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const int q1 = 2 * (j + c * T) + 1;
            real_t hi[4]; /* the next chunk's start; the even rows stay as they are */
            REDUCED_ROW(q1 + 1, hi);
            hb_td_pcr_row(own + 8 * c + 4, own + 8 * c, hi, own + 8 * c + 4);
        }
        /* The odd rows are not read above, so the first write needs no barrier. A
         * step's rows are read after one barrier and overwritten after the next. */
        for (int stride = 2; stride < N; stride *= 2) {
#pragma unroll
            for (int c = 0; c < C; ++c)
                for (int v = 0; v < 4; ++v)
                    reduced[v * rows + REDUCED_AT(2 * (j + c * T) + 1)] = own[8 * c + 4 + v];
            __syncthreads();
#pragma unroll
            for (int c = 0; c < C; ++c) {
                const int q1 = 2 * (j + c * T) + 1;
                real_t lo[4], hi[4]; /* the own row updates in place: memory holds the old */
                REDUCED_ROW(q1 - stride, lo);
                REDUCED_ROW(q1 + stride, hi);
                hb_td_pcr_row(own + 8 * c + 4, lo, hi, own + 8 * c + 4);
            }
            __syncthreads();
        }
#pragma unroll
        for (int c = 0; c < C; ++c) /* x at the chunk's end */
            reduced[3 * rows + REDUCED_AT(2 * (j + c * T) + 1)] = own[8 * c + 7];
        __syncthreads();
#pragma unroll
        for (int c = 0; c < C; ++c) {
            const int q1 = 2 * (j + c * T) + 1;
            real_t start[4]; /* read back: registers free during the PCR */
            REDUCED_ROW(q1 - 1, start);
            /* x at the previous chunk's end (0 before the first) */
            own[8 * c + 3] =
                hb_td_reduced_start(start, REDUCED_VALUE(q1 - 2, 3), own[8 * c + 7]);
        }
    }
#undef REDUCED_ROW
#undef REDUCED_VALUE
#undef REDUCED_AT

    if (L * C == 16) {
#pragma unroll
        for (int c = 0; c < C; ++c)
#pragma unroll
            for (int k = 1; k < L - 1; ++k)
                ra[c * L + k] = stash[(c * (L - 2) + k - 1) * nt + tid];
    }
    /* Mode 4 stages x through the first 64 bytes a thread (16 values in fp32: past
     * the reduced rows, into the stash, which starts 8 or 13 values a thread in), so
     * every thread must have read both first. When the stash was once read
     * after this barrier, and a warp's x could overwrite a slower warp's spike
     * columns (flat fp32 16-row kernels; found by the GPU test's persistent shapes). */
    if (mode == 4) __syncthreads();
#pragma unroll
    for (int c = 0; c < C; ++c)
        hb_td_chunk_finish(L, ra + c * L, rc + c * L, rr + c * L, own[8 * c + 3],
                           own[8 * c + 7]);
    /* Flat 16-byte stores where x starts on 16 bytes too: a warp's scalar stores
     * would each write a few bytes of 32 sectors, which L2 then merges. */
    const int esize = (int)sizeof(real_t);
#pragma unroll
    for (int c = 0; c < C; ++c) {
        const int jc = j + c * T;
        const real_t *xr = rr + c * L;
        const size_t first = base + (size_t)jc * L;
        const int x_aligned = ((size_t)a.x + first * esize) % 16 == 0;
        /* Mode 4: the warp writes contiguous spans (store_slot) where its 32 chunks
         * all exist, lie in one system and start on 16 bytes. The PCR's last
         * barrier has passed, so the warp's slice of the reduced rows is free. */
        if (mode == 4 &&
            __all_sync(0xffffffffu, vector && x_aligned && T >= 32 && jc * L + L <= touched)) {
            const int lane = threadIdx.x & 31;
            char *slice = (char *)smem_bytes + (threadIdx.x & ~31) * 64; /* 64 bytes a thread */
            const int span = L * esize < 64 ? L * esize : 64;           /* bytes a round */
            const int units = span / 16;
            char *warp_x = (char *)a.x + (first - (size_t)lane * L) * esize;
#pragma unroll
            for (int r = 0; r < L * esize / span; ++r) {
#pragma unroll
                for (int u = 0; u < units; ++u)
                    pack16(slice + 16 * store_slot(lane, u, units),
                           &xr[(r * span + u * 16) / esize]);
                __syncwarp();
#pragma unroll
                for (int i = 0; i < units; ++i) {
                    const int t = i * (32 / units) + lane / units, u = lane % units;
                    *(uint4 *)(warp_x + (size_t)t * L * esize + r * span + u * 16) =
                        *(const uint4 *)(slice + 16 * store_slot(t, u, units));
                }
                __syncwarp();
            }
        } else if (vector && x_aligned) {
            const int W = 16 / sizeof(real_t);
#pragma unroll
            for (int k = 0; k < L; k += W) {
                if (jc * L + k + W <= touched) {
                    pack16((real_t *)a.x + first + k, &xr[k]);
                } else {
#pragma unroll
                    for (int q = k; q < k + W; ++q)
                        if (jc * L + q < touched) store<real_t, real_t>(a.x, first + q, xr[q]);
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < L; ++k) {
                const int i = jc * L + k;
                if (i < touched)
                    store<real_t, real_t>(a.x, base + (size_t)i * a.row_stride, xr[k]);
            }
        }
    }
    /* The others may still read this block's interface rows (cluster_reduced). */
    if (clustered) cluster_wait();
}

/*
 * The kernel body: a block (cluster) a tile of G systems; staged plans may run a
 * persistent grid of fewer blocks than tiles, each taking tiles in turn (the ring
 * carries the next tile's first rows across).
 */
template <typename real_t>
__device__ __forceinline__ void partition_body(const gtsv_args_t &a, const int L, const int C,
                                               const int ahead, const int mode,
                                               const int clustered)
{
    const int K = clustered ? a.cluster : 1, first = (int)blockIdx.x / K;
    int prefetched = 0; /* rows of the tile already in flight */
    if (mode != 5) {
        int none = -1;
        partition_tile<real_t>(a, L, C, ahead, mode, clustered, first, 0, none, 0, threadIdx.x,
                               blockDim.x, prefetched);
        return;
    }
    const int tiles = (a.count + a.groups - 1) / a.groups, stride = (int)gridDim.x / K;
    int following = first + stride; /* a block's first two tiles are fixed, then drawn */
    for (int tile = first, nth = 0; tile < tiles; ++nth) {
        /* The thread index and block size through an opaque copy: what derives from
         * them (the ring's, the stash's addresses) is computed in each tile, not
         * hoisted out of the loop into registers (which spilled hundreds of bytes). */
        partition_tile<real_t>(a, L, C, ahead, mode, clustered, tile, nth, following,
                               stride < tiles, opaque(threadIdx.x), opaque(blockDim.x),
                               prefetched);
        tile = following;
    }
}

/* partition_<shape>_<ahead>_<mode>_<d|s>: every shape a plan can ask for
 * (8, 16: one chunk of that many rows a thread; 8x2: two 8-row chunks). The
 * load mode is compiled in, so the interleaved kernels carry no flat path.
 * Registers: at most 128, so that 512-thread blocks launch; one 8-row chunk
 * at most 96, five 128-thread blocks a multiprocessor (flat 16-byte stores
 * took them to 98 and four blocks); staged fp32 at most 80, three 256-thread
 * blocks a multiprocessor (the clustered 16-row ones had 94-96, two blocks; 80
 * spills 8-12 bytes and gave 1.06-1.16x at m = 1024..8192 x 20,000). */
#define PARTITION_REGISTERS(L, C, MODE, REAL)                                                \
    ((L) * (C) == 8 ? 96 : (MODE) == 5 && sizeof(REAL) == 4 ? 80 : 128)
#define PARTITION_KERNEL(SHAPE, L, C, AHEAD, MODE, PREC, REAL, K, CLUSTERED)                 \
    __global__ void __maxnreg__(PARTITION_REGISTERS(L, C, MODE, REAL))                       \
        partition_##SHAPE##_##AHEAD##_##MODE##_##PREC##K(const gtsv_args_t a)               \
    {                                                                                        \
        partition_body<REAL>(a, L, C, AHEAD, MODE, CLUSTERED);                               \
    }
#define PARTITION_UNSTAGED_KERNELS(SHAPE, L, C, AHEAD, K, CLUSTERED)                         \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 0, d, double, K, CLUSTERED)                         \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 0, s, float, K, CLUSTERED)                          \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 1, d, double, K, CLUSTERED)                         \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 1, s, float, K, CLUSTERED)                          \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 2, d, double, K, CLUSTERED)                         \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 2, s, float, K, CLUSTERED)                          \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 3, d, double, K, CLUSTERED)                         \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 3, s, float, K, CLUSTERED)                          \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 4, d, double, K, CLUSTERED)                         \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 4, s, float, K, CLUSTERED)
#define PARTITION_KERNELS(SHAPE, L, C, AHEAD, K, CLUSTERED)                                  \
    PARTITION_UNSTAGED_KERNELS(SHAPE, L, C, AHEAD, K, CLUSTERED)                             \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 5, d, double, K, CLUSTERED)                         \
    PARTITION_KERNEL(SHAPE, L, C, AHEAD, 5, s, float, K, CLUSTERED)
PARTITION_KERNELS(8, 8, 1, 4, , 0)
PARTITION_KERNELS(8, 8, 1, 8, , 0)
PARTITION_KERNELS(16, 16, 1, 4, , 0)
PARTITION_KERNELS(16, 16, 1, 8, , 0)
/* Two chunks a thread are never staged (hb_td_stage_rows): no mode 5. */
PARTITION_UNSTAGED_KERNELS(8x2, 8, 2, 4, , 0)
PARTITION_UNSTAGED_KERNELS(8x2, 8, 2, 8, , 0)
/* Clustered (_k): one chunk a thread, 8 or 16 rows. */
PARTITION_KERNELS(8, 8, 1, 4, _k, 1)
PARTITION_KERNELS(8, 8, 1, 8, _k, 1)
PARTITION_KERNELS(16, 16, 1, 4, _k, 1)
PARTITION_KERNELS(16, 16, 1, 8, _k, 1)
/* Pairs of fp32 systems a thread (_p): staged only, one chunk of 8 or 16 rows a thread,
 * clustered or not. */
#define PARTITION_PAIR_KERNELS(SHAPE, L, AHEAD)                                              \
    PARTITION_KERNEL(SHAPE, L, 1, AHEAD, 5, p, hb_pair, , 0)                                 \
    PARTITION_KERNEL(SHAPE, L, 1, AHEAD, 5, p, hb_pair, _k, 1)
PARTITION_PAIR_KERNELS(8, 8, 4)
PARTITION_PAIR_KERNELS(8, 8, 8)
PARTITION_PAIR_KERNELS(16, 16, 4)
PARTITION_PAIR_KERNELS(16, 16, 8)

typedef void (*partition_kernel_t)(const gtsv_args_t);
#define PARTITION_UNSTAGED_ROW(SHAPE, AHEAD, K)                                              \
    {partition_##SHAPE##_##AHEAD##_0_d##K, partition_##SHAPE##_##AHEAD##_0_s##K},            \
        {partition_##SHAPE##_##AHEAD##_1_d##K, partition_##SHAPE##_##AHEAD##_1_s##K},        \
        {partition_##SHAPE##_##AHEAD##_2_d##K, partition_##SHAPE##_##AHEAD##_2_s##K},        \
        {partition_##SHAPE##_##AHEAD##_3_d##K, partition_##SHAPE##_##AHEAD##_3_s##K},        \
        {partition_##SHAPE##_##AHEAD##_4_d##K, partition_##SHAPE##_##AHEAD##_4_s##K}
#define PARTITION_ROW(SHAPE, AHEAD, K)                                                       \
    {PARTITION_UNSTAGED_ROW(SHAPE, AHEAD, K),                                                \
     {partition_##SHAPE##_##AHEAD##_5_d##K, partition_##SHAPE##_##AHEAD##_5_s##K}}
/* [shape: 8, 16, 8x2][ahead == 8][mode][is_float]; NULL: not compiled (8x2 staged). */
static const partition_kernel_t partition_kernels[3][2][6][2] = {
    {PARTITION_ROW(8, 4, ), PARTITION_ROW(8, 8, )},
    {PARTITION_ROW(16, 4, ), PARTITION_ROW(16, 8, )},
    {{PARTITION_UNSTAGED_ROW(8x2, 4, ), {NULL, NULL}},
     {PARTITION_UNSTAGED_ROW(8x2, 8, ), {NULL, NULL}}}};
/* [shape: 8, 16][ahead == 8][mode][is_float]. */
static const partition_kernel_t partition_cluster_kernels[2][2][6][2] = {
    {PARTITION_ROW(8, 4, _k), PARTITION_ROW(8, 8, _k)},
    {PARTITION_ROW(16, 4, _k), PARTITION_ROW(16, 8, _k)}};
/* [shape: 8, 16][ahead == 8][clustered]. */
static const partition_kernel_t partition_pair_kernels[2][2][2] = {
    {{partition_8_4_5_p, partition_8_4_5_p_k}, {partition_8_8_5_p, partition_8_8_5_p_k}},
    {{partition_16_4_5_p, partition_16_4_5_p_k}, {partition_16_8_5_p, partition_16_8_5_p_k}}};

/* ------------------------------------------------------------------------ */
/* Launcher                                                                 */
/* ------------------------------------------------------------------------ */

/* A launch of `blocks` blocks in clusters of K (config points at attribute). */
static void cluster_launch(cudaLaunchConfig_t *config, cudaLaunchAttribute *attribute, int K,
                           int blocks, int threads, size_t smem, cudaStream_t stream)
{
    *config = cudaLaunchConfig_t{};
    *attribute = cudaLaunchAttribute{};
    attribute->id = cudaLaunchAttributeClusterDimension;
    attribute->val.clusterDim.x = (unsigned)K;
    attribute->val.clusterDim.y = 1;
    attribute->val.clusterDim.z = 1;
    config->gridDim = dim3((unsigned)blocks);
    config->blockDim = dim3((unsigned)threads);
    config->dynamicSmemBytes = smem;
    config->stream = stream;
    config->attrs = attribute;
    config->numAttrs = 1;
}

/*
 * Persistent grids: how many tiles (blocks, or clusters of K blocks) of `kernel` with
 * `threads` threads and `smem` bytes run at once on the current device (at least 1).
 * Asked once per kernel, shape and device: the occupancy calls cost host time that a
 * small solve would pay at every launch.
 */
static cudaError_t resident_tiles(const void *kernel, int threads, size_t smem, int K,
                                  int *tiles)
{
    enum { SLOTS = 256 };
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static const void *kernels[SLOTS];
    static int devices[SLOTS], shapes[SLOTS][3], counts[SLOTS], used;
    int device = 0;
    cudaError_t err = cudaGetDevice(&device);
    if (err != cudaSuccess) return err;
    pthread_mutex_lock(&lock);
    int k = 0;
    while (k < used && (kernels[k] != kernel || devices[k] != device ||
                        shapes[k][0] != threads || shapes[k][1] != (int)smem || shapes[k][2] != K))
        ++k;
    if (k < used) {
        *tiles = counts[k];
    } else {
        int count = 0;
        if (K == 1) {
            int per_sm = 0, sms = 0;
            err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem);
            if (err == cudaSuccess)
                err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
            count = per_sm * sms;
        } else {
            cudaLaunchConfig_t config;
            cudaLaunchAttribute attribute;
            cluster_launch(&config, &attribute, K, K, threads, smem, 0);
            err = cudaOccupancyMaxActiveClusters(&count, kernel, &config);
        }
        *tiles = count > 1 ? count : 1;
        if (err == cudaSuccess && used < SLOTS) {
            kernels[used] = kernel;
            devices[used] = device;
            shapes[used][0] = threads;
            shapes[used][1] = (int)smem;
            shapes[used][2] = K;
            counts[used++] = *tiles;
        }
    }
    pthread_mutex_unlock(&lock);
    return err;
}


/* Pairs (plan->pairs): the same solve as count / 2 systems of 8-byte values (two
 * adjacent fp32 systems each), where the pairs lie whole on 8 bytes: an even count
 * and stride, aligned arrays, one size for all (a pair's halves share their rows). */
static int pairs_fit(const gtsv_args_t *a)
{
    const uintptr_t any = (uintptr_t)a->dl | (uintptr_t)a->d | (uintptr_t)a->du |
                          (uintptr_t)a->b | (uintptr_t)a->x;
    return a->sys_fastest && !a->sizes && a->count % 2 == 0 && a->row_stride % 2 == 0 &&
           any % 8 == 0;
}

static gtsv_args_t pair_args(const gtsv_args_t *a, const hb_gtsv_plan_t *plan)
{
    gtsv_args_t q = *a;
    q.count = a->count / 2;
    q.row_stride = a->row_stride / 2;
    q.groups = plan_groups(plan, q.count);
    return q;
}
hb_status_t hb_cuda_gtsv_partition(const gtsv_args_t *given, const hb_gtsv_plan_t *plan,
                                   int is_float, cudaStream_t stream)
{
    /* Staged (interleaved, one chunk a thread): rows through shared memory. */
    const int C = hb_td_chunks_per_thread(plan);
    const int ring = plan->algo == HB_GTSV_ALGO_PARTITION && given->row_stride != 1
                         ? hb_td_stage_rows(plan, C)
                         : 0;
    /* Pairs of fp32 systems a thread where they fit; else one a thread, same plan. */
    const int pairs = is_float && ring && plan->pairs && pairs_fit(given);
    const gtsv_args_t run = pairs ? pair_args(given, plan) : *given, *a = &run;
    const int K = a->cluster, PL = a->chunks / K;
    const int threads = a->groups * PL / C, tiles = ceil_div(a->count, a->groups);
    int blocks = tiles * K;
    const int shape = C == 2 ? 2 : plan->rows == 16;
    const int esize = pairs ? (int)sizeof(hb_pair)
                      : is_float ? (int)sizeof(float) : (int)sizeof(double);
    const size_t smem =
        (size_t)hb_td_partition_smem(plan->rows, C, K, threads, a->groups, esize, ring);
    const size_t most = ring ? HB_TD_MAX_SMEM_STAGED : HB_TD_MAX_SMEM;
    /* Load mode: 16-byte loads (flat layout, plan->vector) replace the hint. */
    const int mode = ring                                 ? 5
                     : plan->vector && a->row_stride == 1 ? (plan->vector == 2 ? 4 : 3)
                     : plan->hint < 0                     ? 0
                     : plan->hint > 2                     ? 2
                                                          : plan->hint;
    const partition_kernel_t kernel =
        pairs   ? partition_pair_kernels[shape][plan->ahead == 8][K > 1]
        : K > 1 ? partition_cluster_kernels[shape][plan->ahead == 8][mode][is_float != 0]
                : partition_kernels[shape][plan->ahead == 8][mode][is_float != 0];
    if (!kernel || threads > PARTITION_MAX_THREADS || (C == 2 && plan->rows != 8) ||
        PL * K != a->chunks || PL > C * plan->threads || smem > most)
        return hb_fail(HB_ERR_BACKEND, "hb_gtsv: a partition block of %d threads, %d chunks "
                       "of %d rows, clusters of %d", threads, a->chunks, plan->rows, K);
    /* 16 rows a thread: up to 88 (one 16-row chunk), 110 (clustered) or 112 KB
     * (two 8-row chunks) of shared memory, above the 48 KB a launch gets
     * without asking: asked once per kernel and device for the most a plan takes. */
    if (smem > 48 * 1024) CUDA_CHECK(hb_cuda_allow_smem((const void *)kernel, most));
    if (K > 8)
        CUDA_CHECK(hb_cuda_func_attribute_once(
            (const void *)kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    /* Persistent (staged plans): no more tiles at once than are resident, each
     * block copying its next tile's first rows during a reduced solve. */
    if (ring && plan->persist) {
        int resident = 0;
        CUDA_CHECK(resident_tiles((const void *)kernel, threads, smem, K, &resident));
        if (resident < tiles) {
            blocks = resident * K;
            void *counter = NULL; /* the tiles drawn, from 0 */
            CUDA_CHECK(cudaGetSymbolAddress(&counter, partition_tile_counter));
            CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof(unsigned int), stream));
        }
    }
    if (K == 1) {
        kernel<<<blocks, threads, smem, stream>>>(*a);
    } else { /* clusters of K blocks (more than 8: a non-portable size, allowed) */
        cudaLaunchConfig_t config;
        cudaLaunchAttribute attribute;
        cluster_launch(&config, &attribute, K, blocks, threads, smem, stream);
        void *args[] = {(void *)a};
        CUDA_CHECK(cudaLaunchKernelExC(&config, (const void *)kernel, args));
    }
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}
