/*
 * A single-pass partition solve of interleaved tridiagonal systems spread over the whole
 * GPU, with the reduced system passed between blocks through L2 (decoupled look-back and
 * look-ahead), not through a cluster. A probe for issue 4 (docs/tridiag.md, "What bounds
 * m >= 2048"): a cluster keeps a whole tile (G systems x m rows) on at most 16
 * multiprocessors, 393 KB a multiprocessor for two tiles in flight at m = 8192. Here a
 * block holds G systems x R rows (R << m) and the m / R blocks of a group of systems
 * may run anywhere on the GPU, so a group's state is spread over all multiprocessors
 * and several blocks a multiprocessor overlap one another's waits.
 *
 * A block: T = G * P threads, thread (g, p) = (t % G, t / G) holds rows [p L, p L + L) of
 * its tile for system g in registers. Each chunk of L rows is solved with its two
 * neighbouring unknowns left open: x_i = y_i + v_i xl + w_i xr. A segment's aggregate is
 * its first and last row in that form (6 numbers); two adjacent aggregates compose into
 * one (an associative operation, one division). The block composes its P chunks in shared
 * memory, publishes the tile's aggregate (global memory, a flag a tile), then reads the
 * aggregates of every tile before it and after it in the group (waiting on their flags),
 * solves for its tile's two outside unknowns, then its chunks' ones, and writes x.
 * Two kernels: lookback_kernel takes tiles in order from an atomic counter, a block a tile; a
 * block waits only on tiles of its own group, so no deadlock while m / R blocks fit on the
 * GPU at once. persistent_kernel runs every resident block (rounded down to whole groups),
 * block i on tiles i, i + grid, ..., the next tile's rows loaded before this one is solved.
 *
 * reread_kernel (session 28, `./lookback_probe 20000 10 0.5 reread`) reads each tile twice, the
 * second time from L2, and keeps nothing a row between the passes (its comment, below).
 * Modes (a run prints each): 0 the whole solve, checked against a long-double Thomas solve of
 * 7 systems; 1 each tile alone (no look-back: what the block folds cost); 2 each chunk alone
 * (loads, a chunk's elimination, stores: the floor of a block that loads, works and leaves).
 * Column KM: b (a block a tile), p (persistent) or r (reread), then the mode. Results and
 * reading: bench/results/tridiag-lookback-h100-2026-11-23l.txt (session 27; since then the
 * tile's aggregate is published after the block folds' second barrier, one barrier more),
 * tridiag-reread-h100-2026-11-23m.txt (reread); docs/tridiag.md (sessions 27 and 28).
 *
 * Build: nvcc -arch=sm_90 -O3 -o lookback_probe lookback_probe.cu
 * Run:   ./lookback_probe [count] [repeats] [margin] [reread]
 */
#include "probe_common.h"

#include <math.h>
#include <string.h>

struct agg {
    double yt, vt, wt; /* first row: x = yt + vt xl + wt xr */
    double yb, vb, wb; /* last row */
};

/* A then B (B's first row follows A's last): the aggregate of both. */
__host__ __device__ __forceinline__ agg compose(const agg &A, const agg &B)
{
    const double inv = 1.0 / (1.0 - A.wb * B.vt);
    const double ya = (A.yb + A.wb * B.yt) * inv, va = A.vb * inv, wa = A.wb * B.wt * inv;
    const double yb = B.yt + B.vt * ya, vb = B.vt * va, wb = B.vt * wa + B.wt;
    agg r;
    r.yt = A.yt + A.wt * yb;
    r.vt = A.vt + A.wt * vb;
    r.wt = A.wt * wb;
    r.yb = B.yb + B.vb * ya;
    r.vb = B.vb * va;
    r.wb = B.vb * wa + B.wb;
    return r;
}

/* The unknowns just outside a segment T, from the equations of its left neighbour
 * (xl = yl + wl x_first) and right neighbour (xr = yr + vr x_last). */
__device__ __forceinline__ void outside(double yl, double wl, const agg &T, double yr, double vr,
                                        double *xl, double *xr)
{
    const double al = 1.0 - wl * T.vt, be = -wl * T.wt, e = yl + wl * T.yt;
    const double ga = -vr * T.vb, de = 1.0 - vr * T.wb, f = yr + vr * T.yb;
    const double inv = 1.0 / (al * de - be * ga);
    *xl = (e * de - be * f) * inv;
    *xr = (al * f - ga * e) * inv;
}

struct args {
    const double *a, *b, *c, *d;
    double *x;
    long pitch; /* [values] between rows = systems */
    int m, nk;  /* rows; tiles a group */
    unsigned *counter, *flags;
    double *aggs; /* [tile][6][G] */
    int *error;
    int mode; /* 0 whole solve; 1 tiles independent (no look-back); 2 chunks independent */
    /* reread_kernel only */
    unsigned *group_count; /* tiles of a group past pass 1 */
    double *bounds;        /* [tile][2][G]: the tile's outside unknowns xl, xr */
    double *left;          /* [tile][2][G]: the group solve's left relations (scratch) */
};

__device__ __forceinline__ void store_flag(unsigned *f, unsigned v)
{
    asm volatile("st.release.gpu.global.u32 [%0], %1;" ::"l"(f), "r"(v) : "memory");
}

template <int G>
__device__ __forceinline__ agg read_agg(const args &A, long tile, int g)
{
    const double *p = A.aggs + tile * 6 * G + g;
    agg r;
    r.yt = __ldcg(p);
    r.vt = __ldcg(p + G);
    r.wt = __ldcg(p + 2 * G);
    r.yb = __ldcg(p + 3 * G);
    r.vb = __ldcg(p + 4 * G);
    r.wb = __ldcg(p + 5 * G);
    return r;
}

__device__ __forceinline__ unsigned peek_flag(const unsigned *f)
{
    unsigned v;
    asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(v) : "l"(f) : "memory");
    return v;
}

/* Wait until tiles [first, last) of the group at base have published; then an acquire
 * fence, so that their aggregates are seen. Gives up (error flag) after about 4 s. */
__device__ __forceinline__ void wait_flags(const args &A, long first, long last)
{
    long spins = 0;
    for (;;) {
        unsigned all = 1;
        for (long k = first; k < last; ++k) all &= peek_flag(A.flags + k) != 0;
        if (all) break;
        __nanosleep(64);
        if (++spins > (1L << 26)) {
            atomicExch(A.error, 1);
            break;
        }
    }
    __threadfence();
}

/* Fold the aggregates of tiles [first, last) of the group into *out; 0 if none. */
template <int G>
__device__ __forceinline__ int fold_range(const args &A, long base, int first, int last, int g,
                                          agg *out)
{
    if (first >= last) return 0;
    wait_flags(A, base + first, base + last);
    agg acc = read_agg<G>(A, base + first, g);
    for (int k = first + 1; k < last; ++k) acc = compose(acc, read_agg<G>(A, base + k, g));
    *out = acc;
    return 1;
}

/* The range folds part[q][g] for q = from, from + step, .. up to (not) to, composed in row
 * order (step -1: from the right); 0 if none of them holds a tile. */
template <int G>
__device__ __forceinline__ int fold_parts(const agg (*part)[G], const int (*has)[G], int from,
                                          int to, int step, int g, agg *out)
{
    int have = 0;
    agg acc;
    for (int q = from; q != to; q += step)
        if (has[q][g]) {
            acc = !have ? part[q][g] : step > 0 ? compose(acc, part[q][g])
                                                : compose(part[q][g], acc);
            have = 1;
        }
    if (have) *out = acc;
    return have;
}

template <int G, int P, int L> struct tile_smem {
    agg chunk[P][G];      /* the chunks' aggregates, then the range folds' */
    double pre[3][P][G];  /* chunks before p in the tile: last row yb, vb, wb */
    double suf[3][P][G];  /* chunks after p: first row yt, vt, wt */
    int has[P][G];
    agg tile_agg[G];
    double lr[4][G];      /* the group's equations left (yl, wl) and right (yr, vr) */
};

/* Thread (g, p)'s rows of a tile: L rows of system g from row k R + p L. */
template <int G, int P, int L>
__device__ __forceinline__ void load_tile(const args &A, long tile, double (&a)[L],
                                          double (&b)[L], double (&c)[L], double (&d)[L])
{
    const int t = threadIdx.x, g = t % G, p = t / G;
    const long group = tile / A.nk;
    const int row0 = (int)(tile - group * A.nk) * P * L + p * L;
    const long s = group * G + g;
#pragma unroll
    for (int j = 0; j < L; ++j) {
        const long e = (long)(row0 + j) * A.pitch + s;
        a[j] = A.a[e];
        b[j] = A.b[e];
        c[j] = A.c[e];
        d[j] = A.d[e];
    }
}

/* The thread's chunk solved with both outside unknowns open: y in d, v in a, w in c; its
 * aggregate returned. row0: the chunk's first row in its system. */
template <int L>
__device__ __forceinline__ agg chunk_sweeps(int row0, int m, double (&a)[L], double (&b)[L],
                                            double (&c)[L], double (&d)[L])
{
    if (row0 == 0) a[0] = 0;
    if (row0 + L == m) c[L - 1] = 0;
    /* forward: c' in c, d' in d, v' in a (w' is 0 above the last row) */
    {
        double inv = 1.0 / b[0];
        c[0] *= inv;
        d[0] *= inv;
        a[0] = -a[0] * inv;
#pragma unroll
        for (int j = 1; j < L; ++j) {
            inv = 1.0 / (b[j] - a[j] * c[j - 1]);
            d[j] = (d[j] - a[j] * d[j - 1]) * inv;
            const double vj = -a[j] * a[j - 1] * inv;
            a[j] = vj;
            c[j] = j == L - 1 ? -c[j] * inv : c[j] * inv; /* last row: w' */
        }
        if (L == 1) c[0] = -c[0];
    }
    /* backward: y in d, v in a, w in c */
#pragma unroll
    for (int j = L - 2; j >= 0; --j) {
        d[j] -= c[j] * d[j + 1];
        a[j] -= c[j] * a[j + 1];
        c[j] = -c[j] * c[j + 1];
    }
    const agg r = {d[0], a[0], c[0], d[L - 1], a[L - 1], c[L - 1]};
    return r;
}

/* The block's P segments of each system (thread (g, p) gives segment p's aggregate) composed:
 * S.pre[.][p][g] the segments before p (last row, in terms of the outside xl and p's first
 * row), S.suf[.][p][g] those after p, S.tile_agg[g] all of them. Two barriers. */
template <int G, int P, int L>
__device__ __forceinline__ void block_folds(tile_smem<G, P, L> &S, const agg &mine)
{
    constexpr int RIGHT = (32 / G < P) ? 32 / G : 1;
    const int t = threadIdx.x, g = t % G, p = t / G;
    S.chunk[p][g] = mine;
    __syncthreads();
    if (p == 0) { /* left fold: exclusive prefixes and the whole's aggregate */
        S.pre[0][0][g] = 0;
        S.pre[1][0][g] = 1; /* xl itself */
        S.pre[2][0][g] = 0;
        agg acc = S.chunk[0][g];
        for (int q = 1; q < P; ++q) {
            S.pre[0][q][g] = acc.yb;
            S.pre[1][q][g] = acc.vb;
            S.pre[2][q][g] = acc.wb;
            acc = compose(acc, S.chunk[q][g]);
        }
        S.tile_agg[g] = acc;
    } else if (p == RIGHT) { /* right fold (another warp): exclusive suffixes */
        S.suf[0][P - 1][g] = 0;
        S.suf[1][P - 1][g] = 0;
        S.suf[2][P - 1][g] = 1; /* xr itself */
        agg acc = S.chunk[P - 1][g];
        for (int q = P - 2; q >= 0; --q) {
            S.suf[0][q][g] = acc.yt;
            S.suf[1][q][g] = acc.vt;
            S.suf[2][q][g] = acc.wt;
            acc = compose(S.chunk[q][g], acc);
        }
    }
    __syncthreads();
}

template <int G> __device__ __forceinline__ void publish_agg(const args &A, long tile, const agg &v)
{
    double *out = A.aggs + tile * 6 * G + threadIdx.x % G;
    out[0] = v.yt;
    out[G] = v.vt;
    out[2 * G] = v.wt;
    out[3 * G] = v.yb;
    out[4 * G] = v.vb;
    out[5 * G] = v.wb;
    __threadfence();
}

/* The solve of a loaded tile, from the chunks' elimination to the stores of x. */
template <int G, int P, int L>
__device__ __forceinline__ void finish_tile(const args &A, long tile, tile_smem<G, P, L> &S,
                                            double (&a)[L], double (&b)[L], double (&c)[L],
                                            double (&d)[L])
{
    constexpr int R = P * L, H = P / 2, RIGHT = (32 / G < P) ? 32 / G : 1;
    const int t = threadIdx.x, g = t % G, p = t / G;
    const long group = tile / A.nk, base = group * A.nk;
    const int k = (int)(tile - base);
    const int row0 = k * R + p * L;
    const long s = group * G + g;
    const agg mine = chunk_sweeps<L>(row0, A.m, a, b, c, d);
    if (A.mode == 2) {
#pragma unroll
        for (int j = 0; j < L; ++j) A.x[(long)(row0 + j) * A.pitch + s] = d[j];
        return;
    }
    block_folds<G, P, L>(S, mine);
    if (p == 0) publish_agg<G>(A, tile, S.tile_agg[g]);
    __syncthreads();
    if (t == 0) store_flag(A.flags + tile, 1u);
    agg (*part)[G] = S.chunk; /* free once both folds are done */

    /* the group's tiles before k (threads p < H) and after k (p >= H), a range each */
    {
        const int q = p < H ? p : p - H;
        const int lo = p < H ? 0 : k + 1, n = p < H ? k : A.nk - k - 1;
        const int first = lo + (int)((long)n * q / H), last = lo + (int)((long)n * (q + 1) / H);
        agg mine_part;
        S.has[p][g] = A.mode == 1 ? 0 : fold_range<G>(A, base, first, last, g, &mine_part);
        part[p][g] = mine_part;
    }
    __syncthreads();
    if (p == 0) { /* the tiles before (a warp of its own from the right fold) */
        agg acc;
        const int have = fold_parts<G>(part, S.has, 0, H, 1, g, &acc);
        S.lr[0][g] = have ? acc.yb : 0;
        S.lr[1][g] = have ? acc.wb : 0;
    } else if (p == RIGHT) { /* the tiles after */
        agg acc;
        const int have = fold_parts<G>(part, S.has, P - 1, H - 1, -1, g, &acc);
        S.lr[2][g] = have ? acc.yt : 0;
        S.lr[3][g] = have ? acc.vt : 0;
    }
    __syncthreads();
    {
        double XL, XR; /* each thread solves its tile's 2 x 2 itself: no more barriers */
        outside(S.lr[0][g], S.lr[1][g], S.tile_agg[g], S.lr[2][g], S.lr[3][g], &XL, &XR);
        const double yl = S.pre[0][p][g] + S.pre[1][p][g] * XL, wl = S.pre[2][p][g];
        const double yr = S.suf[0][p][g] + S.suf[2][p][g] * XR, vr = S.suf[1][p][g];
        double xl, xr;
        outside(yl, wl, mine, yr, vr, &xl, &xr);
#pragma unroll
        for (int j = 0; j < L; ++j) {
            const long e = (long)(row0 + j) * A.pitch + s;
            A.x[e] = d[j] + a[j] * xl + c[j] * xr;
        }
    }
}

/* A block a tile, tiles in order from an atomic counter. */
template <int G, int P, int L, int MINB>
__global__ void __launch_bounds__(G *P, MINB) lookback_kernel(const args A)
{
    __shared__ tile_smem<G, P, L> S;
    __shared__ int s_tile;
    if (threadIdx.x == 0) s_tile = (int)atomicAdd(A.counter, 1u);
    __syncthreads();
    double a[L], b[L], c[L], d[L];
    load_tile<G, P, L>(A, s_tile, a, b, c, d);
    finish_tile<G, P, L>(A, s_tile, S, a, b, c, d);
}

/* Persistent blocks, tile blockIdx.x + i gridDim.x in round i, the next tile's rows loaded
 * before this one's folds and waits. gridDim.x is a multiple of nk and every block is
 * resident, so a group lies in one round and each block publishes before it waits. */
template <int G, int P, int L, int MINB>
__global__ void __launch_bounds__(G *P, MINB) persistent_kernel(const args A)
{
    __shared__ tile_smem<G, P, L> S;
    const long tiles = (long)A.nk * (A.pitch / G);
    long tile = blockIdx.x;
    if (tile >= tiles) return;
    double a[L], b[L], c[L], d[L];
    load_tile<G, P, L>(A, tile, a, b, c, d);
    for (; tile < tiles; tile += gridDim.x) {
        double na[L], nb[L], nc[L], nd[L];
        const long next = tile + gridDim.x;
        if (next < tiles) load_tile<G, P, L>(A, next, na, nb, nc, nd);
        finish_tile<G, P, L>(A, tile, S, a, b, c, d);
#pragma unroll
        for (int j = 0; j < L; ++j) {
            a[j] = na[j];
            b[j] = nb[j];
            c[j] = nc[j];
            d[j] = nd[j];
        }
    }
}

/* ---- reread: each tile read twice, the second time from L2 (bench/profile/reread_probe.cu) ----
 *
 * Persistent blocks, tile i + r grid in round r. Pass 1 of a tile: its rows loaded (L2
 * evict_last), the chunks solved with their outside unknowns open, the block folds, the tile's
 * aggregate published; the last tile of a group to arrive solves the group's reduced system
 * (below) and raises the group's flag. Pass 2 of the previous round's tile: wait for its
 * group's flag, its rows loaded again (evict_first: L2, if the round between them is small
 * enough), each chunk solved by Thomas with its outside unknowns known, x stored (streaming).
 * A block keeps 12 numbers a chunk between the passes, nothing a row. Modes: 0 whole solve;
 * 1 no group solve and no wait (the passes alone); 2 the whole solve without L2 hints. */

template <int G, int P, int L>
__device__ __forceinline__ void load_tile_hinted(const args &A, long tile,
                                                 unsigned long long policy, double (&a)[L],
                                                 double (&b)[L], double (&c)[L], double (&d)[L])
{
    const int t = threadIdx.x, g = t % G, p = t / G;
    const long group = tile / A.nk;
    const int row0 = (int)(tile - group * A.nk) * P * L + p * L;
    const long s = group * G + g;
    const int hinted = A.mode != 2;
#pragma unroll
    for (int j = 0; j < L; ++j) {
        const long e = (long)(row0 + j) * A.pitch + s;
        a[j] = probe_load(A.a + e, policy, hinted);
        b[j] = probe_load(A.b + e, policy, hinted);
        c[j] = probe_load(A.c + e, policy, hinted);
        d[j] = probe_load(A.d + e, policy, hinted);
    }
}

/* What a chunk keeps between the passes: the chunks before it in its tile (last row yb, vb,
 * wb), those after it (first row yt, vt, wt), and its own aggregate. */
struct carried {
    double pre_y, pre_v, pre_w, suf_y, suf_v, suf_w;
    agg mine;
};

/* The reduced system of the group: its nk tile aggregates (a system each) -> each tile's
 * outside unknowns in A.bounds. Thread (g, p) walks tiles [k0, k1) of system g. */
template <int G, int P, int L>
__device__ void group_solve(const args &A, long group, tile_smem<G, P, L> &S)
{
    const int t = threadIdx.x, g = t % G, p = t / G, nk = A.nk;
    const long base = group * nk;
    const int k0 = (int)((long)nk * p / P), k1 = (int)((long)nk * (p + 1) / P);
    __threadfence(); /* the other tiles' aggregates, published before their arrivals */
    agg range = read_agg<G>(A, base + k0, g); /* k0 < k1: nk >= P (run_config) */
    for (int k = k0 + 1; k < k1; ++k) range = compose(range, read_agg<G>(A, base + k, g));
    block_folds<G, P, L>(S, range);
    /* the system's ends have no outside rows (a = 0 at its first row, c = 0 at its last),
     * so the group's own xl and xr are 0 */
    double ly = S.pre[0][p][g], lw = S.pre[2][p][g]; /* before tile k: x = ly + lw x_first(k) */
    for (int k = k0; k < k1; ++k) {
        double *out = A.left + (base + k) * 2 * G + g;
        out[0] = ly;
        out[G] = lw;
        const agg B = read_agg<G>(A, base + k, g);
        const agg before = {0, 0, 0, ly, 0, lw};
        const agg r = compose(before, B);
        ly = r.yb;
        lw = r.wb;
    }
    double ry = S.suf[0][p][g], rv = S.suf[1][p][g]; /* after tile k: x = ry + rv x_last(k) */
    for (int k = k1 - 1; k >= k0; --k) {
        const agg B = read_agg<G>(A, base + k, g);
        const double *in = A.left + (base + k) * 2 * G + g;
        double xl, xr;
        outside(in[0], in[G], B, ry, rv, &xl, &xr);
        double *out = A.bounds + (base + k) * 2 * G + g;
        out[0] = xl;
        out[G] = xr;
        const agg after = {ry, rv, 0, 0, 0, 0};
        const agg r = compose(B, after);
        ry = r.yt;
        rv = r.vt;
    }
    __threadfence();
    __syncthreads();
    if (t == 0) store_flag(A.flags + group, 1u);
}

template <int G, int P, int L>
__device__ __forceinline__ void reread_pass1(const args &A, long tile, tile_smem<G, P, L> &S,
                                             int *s_last, unsigned long long keep, carried *out)
{
    const int t = threadIdx.x, g = t % G, p = t / G;
    const long group = tile / A.nk;
    const int row0 = (int)(tile - group * A.nk) * P * L + p * L;
    double a[L], b[L], c[L], d[L];
    load_tile_hinted<G, P, L>(A, tile, keep, a, b, c, d);
    out->mine = chunk_sweeps<L>(row0, A.m, a, b, c, d);
    block_folds<G, P, L>(S, out->mine);
    out->pre_y = S.pre[0][p][g];
    out->pre_v = S.pre[1][p][g];
    out->pre_w = S.pre[2][p][g];
    out->suf_y = S.suf[0][p][g];
    out->suf_v = S.suf[1][p][g];
    out->suf_w = S.suf[2][p][g];
    if (A.mode == 1) return;
    if (p == 0) publish_agg<G>(A, tile, S.tile_agg[g]);
    __syncthreads();
    if (t == 0) *s_last = atomicAdd(A.group_count + group, 1u) == (unsigned)A.nk - 1;
    __syncthreads();
    if (*s_last) group_solve<G, P, L>(A, group, S);
}

template <int G, int P, int L>
__device__ __forceinline__ void reread_pass2(const args &A, long tile, const carried &k,
                                             unsigned long long drop)
{
    const int t = threadIdx.x, g = t % G, p = t / G;
    const long group = tile / A.nk;
    const int row0 = (int)(tile - group * A.nk) * P * L + p * L;
    const long s = group * G + g;
    double XL = 0, XR = 0;
    if (A.mode != 1) {
        if (t == 0) wait_flags(A, group, group + 1); /* the group's flag, at A.flags[group] */
        __syncthreads();
        XL = __ldcg(A.bounds + tile * 2 * G + g);
        XR = __ldcg(A.bounds + tile * 2 * G + G + g);
    }
    double xl, xr;
    outside(k.pre_y + k.pre_v * XL, k.pre_w, k.mine, k.suf_y + k.suf_w * XR, k.suf_v, &xl, &xr);
    double a[L], b[L], c[L], d[L];
    load_tile_hinted<G, P, L>(A, tile, drop, a, b, c, d);
    if (row0 == 0) a[0] = 0;
    if (row0 + L == A.m) c[L - 1] = 0;
    d[0] -= a[0] * xl;
    d[L - 1] -= c[L - 1] * xr;
    double inv = 1.0 / b[0];
    c[0] *= inv;
    d[0] *= inv;
#pragma unroll
    for (int j = 1; j < L; ++j) {
        inv = 1.0 / (b[j] - a[j] * c[j - 1]);
        c[j] *= inv;
        d[j] = (d[j] - a[j] * d[j - 1]) * inv;
    }
#pragma unroll
    for (int j = L - 2; j >= 0; --j) d[j] -= c[j] * d[j + 1];
#pragma unroll
    for (int j = 0; j < L; ++j) __stcs(A.x + (long)(row0 + j) * A.pitch + s, d[j]);
}

/* gridDim.x is a multiple of nk and every block is resident, so a group lies in one round;
 * a block's pass 2 waits on the previous round, whose pass 1 every block has done. */
template <int G, int P, int L, int MINB>
__global__ void __launch_bounds__(G *P, MINB) reread_kernel(const args A)
{
    __shared__ tile_smem<G, P, L> S;
    __shared__ int s_last;
    const long tiles = (long)A.nk * (A.pitch / G);
    unsigned long long keep, drop;
    probe_l2_policies(&keep, &drop);
    carried before = {}, now = {};
    long prev = -1;
    for (long tile = blockIdx.x;; tile += gridDim.x) {
        if (tile < tiles) reread_pass1<G, P, L>(A, tile, S, &s_last, keep, &now);
        if (prev >= 0) reread_pass2<G, P, L>(A, prev, before, drop);
        if (tile >= tiles) break;
        before = now;
        prev = tile;
    }
}

/* ---- host ---- */

__device__ __forceinline__ double hash01(unsigned long long z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0);
}

/* diagonally dominant: a, c in (-1, 0], b = margin + |a| + |c| + u, d in [-1, 1) */
__global__ void fill(double *a, double *b, double *c, double *d, size_t n, unsigned long long seed,
                     double margin)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;
         i += (size_t)gridDim.x * blockDim.x) {
        const unsigned long long z = (seed + i) * 4;
        const double av = -hash01(z), cv = -hash01(z + 1);
        a[i] = av;
        c[i] = cv;
        b[i] = margin - av - cv + 0.5 * hash01(z + 2);
        d[i] = 2 * hash01(z + 3) - 1;
    }
}

struct launch_state {
    args A;
    void (*kernel)(args);
    int blocks, threads;
    size_t flag_bytes, count_bytes;
};

static void launch_lookback(void *arg)
{
    const launch_state *l = (const launch_state *)arg;
    CHECK(cudaMemsetAsync(l->A.counter, 0, sizeof(unsigned)));
    CHECK(cudaMemsetAsync(l->A.flags, 0, l->flag_bytes));
    if (l->count_bytes) CHECK(cudaMemsetAsync(l->A.group_count, 0, l->count_bytes));
    l->kernel<<<l->blocks, l->threads>>>(l->A);
}

/* Thomas in long double on one system, x compared; max |x - ref| / max |ref|. */
static double check_system(const double *buf[5], long pitch, int m, long s)
{
    double *col[5];
    for (int v = 0; v < 5; ++v) {
        col[v] = (double *)malloc(sizeof(double) * m);
        CHECK(cudaMemcpy2D(col[v], sizeof(double), buf[v] + s, pitch * sizeof(double),
                           sizeof(double), m, cudaMemcpyDeviceToHost));
    }
    long double *cp = (long double *)malloc(sizeof(long double) * m);
    long double *dp = (long double *)malloc(sizeof(long double) * m);
    cp[0] = col[2][0] / (long double)col[1][0];
    dp[0] = col[3][0] / (long double)col[1][0];
    for (int i = 1; i < m; ++i) {
        const long double den = col[1][i] - col[0][i] * cp[i - 1];
        cp[i] = (i == m - 1 ? 0 : col[2][i]) / den;
        dp[i] = (col[3][i] - col[0][i] * dp[i - 1]) / den;
    }
    long double x = dp[m - 1], err = 0, ref = 0;
    for (int i = m - 1; i >= 0; --i) {
        if (i < m - 1) x = dp[i] - cp[i] * x;
        const long double e = fabsl(x - col[4][i]);
        if (e > err || e != e) err = e;
        if (fabsl(x) > ref) ref = fabsl(x);
    }
    for (int v = 0; v < 5; ++v) free(col[v]);
    free(cp);
    free(dp);
    return (double)(err / ref);
}

template <int G, int P, int L, int MINB>
static void run_config(double *buf[5], int m, int count, int repeats, double copy_bw, int seed,
                       double margin, int mode, char kind)
{
    constexpr int R = P * L;
    if (m % R || count % G) return;
    launch_state l = {};
    args &A = l.A;
    A.a = buf[0];
    A.b = buf[1];
    A.c = buf[2];
    A.d = buf[3];
    A.x = buf[4];
    A.pitch = count;
    A.m = m;
    A.nk = m / R;
    const long tiles = (long)A.nk * (count / G);
    l.kernel = kind == 'p'   ? persistent_kernel<G, P, L, MINB>
               : kind == 'r' ? reread_kernel<G, P, L, MINB>
                             : lookback_kernel<G, P, L, MINB>;
    if (kind == 'r' && A.nk < P) return; /* the group solve gives each thread a tile or more */
    A.mode = mode;
    l.threads = G * P;
    int per_sm = 0, sms = 0;
    cudaFuncAttributes fa;
    probe_residency(l.kernel, l.threads, &per_sm, &sms, &fa);
    if (per_sm * sms < A.nk + 1) {
        printf("%5d %3d %3d %3d  too few resident blocks (%d) for %d tiles a group\n", m, G, P,
               L, per_sm * sms, A.nk);
        return;
    }
    l.flag_bytes = sizeof(unsigned) * tiles;
    CHECK(cudaMalloc(&A.counter, sizeof(unsigned)));
    CHECK(cudaMalloc(&A.flags, l.flag_bytes));
    CHECK(cudaMalloc(&A.aggs, sizeof(double) * 6 * G * tiles));
    CHECK(cudaMalloc(&A.error, sizeof(int)));
    CHECK(cudaMemset(A.error, 0, sizeof(int)));
    if (kind == 'r') {
        l.count_bytes = sizeof(unsigned) * (tiles / A.nk);
        CHECK(cudaMalloc(&A.group_count, l.count_bytes));
        CHECK(cudaMalloc(&A.bounds, sizeof(double) * 2 * G * tiles));
        CHECK(cudaMalloc(&A.left, sizeof(double) * 2 * G * tiles));
    }
    /* persistent: every block resident, a whole number of groups a round; reread: at most
     * MINB blocks a multiprocessor (what lies between a tile's two reads) */
    if (kind == 'r' && per_sm > MINB) per_sm = MINB;
    const long round = (long)(per_sm * sms / A.nk) * A.nk;
    l.blocks = (int)(kind != 'b' && round < tiles ? round : tiles);
    const size_t n = (size_t)m * count;
    fill<<<1024, 256>>>(buf[0], buf[1], buf[2], buf[3], n, 1000003ull * seed, margin);
    CHECK(cudaGetLastError());
    CHECK(cudaMemset(buf[4], 0, n * sizeof(double)));
    const float ms = probe_time(launch_lookback, &l, repeats);
    int error = 0;
    CHECK(cudaMemcpy(&error, A.error, sizeof(int), cudaMemcpyDeviceToHost));
    double worst = 0;
    const long picks[] = {0, 1, G - 1, G, count / 2 + 3, count - G, count - 1};
    for (int i = 0; i < 7; ++i) {
        const double e = check_system((const double **)buf, count, m, picks[i]);
        if (e > worst || e != e) worst = e;
    }
    const double bw = 40.0 * (double)n / (ms * 1e-3);
    const int exact = mode == 0 || (kind == 'r' && mode == 2);
    printf("%5d %3d %3d %3d %c%d %4d %4d %3d %6.1f KB %8.1f %7.0f %6.1f%% %9.2e%s\n", m, G, P,
           L, kind, mode, A.nk, fa.numRegs, per_sm, fa.sharedSizeBytes / 1024.0,
           ms * 1e3, bw / 1e9, 100.0 * bw / copy_bw, worst,
           error ? "  TIMEOUT" : (worst < 1e-10 || !exact ? "" : "  WRONG"));
    CHECK(cudaFree(A.counter));
    CHECK(cudaFree(A.flags));
    CHECK(cudaFree(A.aggs));
    CHECK(cudaFree(A.error));
    if (kind == 'r') {
        CHECK(cudaFree(A.group_count));
        CHECK(cudaFree(A.bounds));
        CHECK(cudaFree(A.left));
    }
}

int main(int argc, char **argv)
{
    const double margin = argc > 3 ? atof(argv[3]) : 0.5;
    int count, repeats;
    double *buf[5];
    const double copy_bw = probe_start(argc, argv, 8192, buf, &count, &repeats);
    printf("count %d, %d repeats (median); copy %.0f GB/s (read + written); margin %.2f\n",
           count, repeats, copy_bw / 1e9, margin);
    printf("%5s %3s %3s %3s %s %4s %4s %3s %9s %8s %7s %7s %9s\n", "m", "G", "P", "L", "KM", "nk",
           "regs", "bps", "smem", "us", "GB/s", "%copy", "rel err");
    const int ms[] = {1024, 2048, 4096, 8192};
    const int reread = argc > 4 && !strcmp(argv[4], "reread");
    int seed = 1;
    for (int mi = 0; mi < 4; ++mi) {
        const int m = ms[mi];
        if (reread) { /* r: reread (modes 0, 1, 2); p2: the persistent floor, for reference */
            run_config<32, 8, 4, 2>(buf, m, count, repeats, copy_bw, seed++, margin, 2, 'p');
            for (int mode = 0; mode < 3; ++mode) {
                run_config<32, 8, 4, 2>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'r');
                run_config<32, 8, 2, 4>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'r');
                run_config<32, 4, 4, 4>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'r');
                run_config<16, 8, 4, 4>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'r');
            }
            continue;
        }
        /* b: a block a tile; p: persistent */
        run_config<16, 16, 8, 3>(buf, m, count, repeats, copy_bw, seed++, margin, 0, 'b');
        for (int mode = 0; mode < 3; ++mode) {
            run_config<16, 16, 4, 2>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'p');
            run_config<16, 16, 4, 3>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'p');
            run_config<16, 16, 8, 1>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'p');
            run_config<16, 8, 8, 2>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'p');
            run_config<32, 8, 4, 2>(buf, m, count, repeats, copy_bw, seed++, margin, mode, 'p');
        }
    }
    probe_free(buf);
    return 0;
}
