/*
 * Can a partition solve of interleaved systems read each tile twice, the second time from
 * L2, if the two reads are close in time? A probe for issue 4 (docs/tridiag.md, sessions 25
 * and 27). Session 25's two-pass probe read a cluster's whole tile (G systems x m rows)
 * twice, with every cluster of the GPU between the reads (127 MB or more): the second pass
 * came from DRAM. Session 27's look-back probe spreads a group of systems over the whole GPU
 * in small tiles (G systems x R rows) and keeps each tile's eliminated rows in registers
 * while the group's reduced system is solved; that state, not memory, is what it runs out
 * of. If a small tile could be read again from L2 after the reduced solve, a block would keep
 * nothing a row between the passes.
 *
 * The memory pattern only (no solve): four arrays of m rows x `count` systems, interleaved;
 * x = a + b + c + d written, 40 bytes a row counted. Persistent blocks (every resident
 * block), block i on tiles i, i + grid, ...; thread (g, p) of a block holds L rows of system
 * g. In round r a block reads tile i + r grid (pass 1, summed into a register) and then reads
 * tile i + (r - D) grid again and writes its x (pass 2), so D rounds of the whole grid's
 * tiles lie between a tile's two reads: D grid tile bytes. D = -1 is one pass (each tile read
 * once, x written at once): the floor's pattern. D is given in rounds (quarters of them).
 * Hint 1: pass 1 loads L2 evict_last, pass 2 loads evict_first, x stored streaming (.cs).
 * A second run sets L2's persisting set-aside to its largest size.
 *
 * Build: nvcc -arch=sm_90 -O3 -o reread_probe reread_probe.cu
 * Run:   ./reread_probe [count] [repeats]
 */
#include "probe_common.h"

struct args {
    const double *v[4];
    double *x;
    long pitch; /* [values] between rows = systems */
    int m, nk;  /* rows; tiles a group of G systems */
    int Dq, hinted; /* reuse distance [quarter rounds]; L2 hints */
};

/* hinted: a streaming store (.cs), so that x does not take L2 from the inputs */
__device__ __forceinline__ void store(double *p, double v, int hinted)
{
    if (hinted)
        __stcs(p, v);
    else
        *p = v;
}

/* the thread's L rows of `tile`, a + b + c + d each; *at: the first row's index */
template <int G, int P, int L>
__device__ __forceinline__ void load_rows(const args &A, long tile, unsigned long long policy,
                                          double (&sum)[L], long *at)
{
    const int t = threadIdx.x, g = t % G, p = t / G;
    const long group = tile / A.nk;
    const long row0 = (tile - group * A.nk) * (P * L) + p * L;
    const long e = row0 * A.pitch + group * G + g;
    double v[L][4];
#pragma unroll
    for (int j = 0; j < L; ++j)
#pragma unroll
        for (int a = 0; a < 4; ++a) v[j][a] = probe_load(A.v[a] + e + j * A.pitch, policy, A.hinted);
#pragma unroll
    for (int j = 0; j < L; ++j) sum[j] = v[j][0] + v[j][1] + v[j][2] + v[j][3];
    *at = e;
}

template <int G, int P, int L, int MINB>
__global__ void __launch_bounds__(G *P, MINB) reread_kernel(const args A)
{
    const long tiles = (long)A.nk * (A.pitch / G), grid = gridDim.x;
    unsigned long long keep = 0, drop = 0;
    if (A.hinted) probe_l2_policies(&keep, &drop);
    double carried = 0; /* what pass 1 leaves (a tile's aggregate, in a solve) */
#pragma unroll 1
    for (long r = 0;; ++r) {
        const long t1 = blockIdx.x + r * grid, t2 = t1 - (A.Dq < 0 ? 0 : A.Dq * grid / 4);
        if (t2 >= tiles) break;
        double sum[L];
        long at;
        if (A.Dq < 0) {
            load_rows<G, P, L>(A, t1, keep, sum, &at);
#pragma unroll
            for (int j = 0; j < L; ++j) A.x[at + j * A.pitch] = sum[j];
            continue;
        }
        if (t1 < tiles) {
            load_rows<G, P, L>(A, t1, keep, sum, &at);
#pragma unroll
            for (int j = 0; j < L; ++j) carried += sum[j];
        }
        if (t2 >= 0) {
            load_rows<G, P, L>(A, t2, drop, sum, &at);
            const double scale = carried * 1e-300; /* 0 in effect; pass 1 must happen */
#pragma unroll
            for (int j = 0; j < L; ++j) store(A.x + at + j * A.pitch, sum[j] + scale, A.hinted);
        }
    }
}

struct launch_state {
    args A;
    void (*kernel)(args);
    int blocks, threads;
};

static void launch(void *arg)
{
    const launch_state *l = (const launch_state *)arg;
    l->kernel<<<l->blocks, l->threads>>>(l->A);
}

template <int G, int P, int L, int MINB>
static void run_config(double *buf[5], int m, int count, int repeats, double copy_bw,
                       const int *Dqs, int nD, int hint_from)
{
    constexpr int R = P * L;
    if (m % R || count % G) return;
    launch_state l = {};
    args &A = l.A;
    for (int i = 0; i < 4; ++i) A.v[i] = buf[i];
    A.x = buf[4];
    A.pitch = count;
    A.m = m;
    A.nk = m / R;
    l.kernel = reread_kernel<G, P, L, MINB>;
    l.threads = G * P;
    int per_sm = 0, sms = 0;
    cudaFuncAttributes fa;
    probe_residency(l.kernel, l.threads, &per_sm, &sms, &fa);
    l.blocks = per_sm * sms;
    const double tile_mb = 32.0 * G * R / 1e6, n = (double)m * count;
    for (int i = 0; i < nD; ++i)
        for (int hinted = hint_from; hinted < (Dqs[i] >= 0 ? 2 : hint_from + 1); ++hinted) {
            A.Dq = Dqs[i];
            A.hinted = hinted;
            const float ms = probe_time(launch, &l, repeats);
            const size_t at[2] = {(size_t)count + 5, (size_t)(m - 1) * count + count - 1};
            const int ok = probe_x_is_four_a(buf, at, n * sizeof(double));
            const double bw = 40.0 * n / (ms * 1e-3);
            printf("%5d %3d %3d %3d %5d %4d %3d %5.2f %2d %5.1f %7.1f %8.1f %7.0f %6.1f%%%s\n", m,
                   G, P, L, l.threads, fa.numRegs, per_sm, A.Dq / 4.0, hinted, tile_mb * 1e3,
                   A.Dq > 0 ? A.Dq / 4.0 * l.blocks * tile_mb : 0.0, ms * 1e3, bw / 1e9,
                   100.0 * bw / copy_bw, ok ? "" : "  WRONG");
        }
}

int main(int argc, char **argv)
{
    int count, repeats;
    double *buf[5];
    const double copy_bw = probe_start(argc, argv, 8192, buf, &count, &repeats);
    printf("count %d, %d repeats (median); copy %.0f GB/s (read + written); L2 %d MB\n", count,
           repeats, copy_bw / 1e9, probe_l2_mb());
    printf("%5s %3s %3s %3s %5s %4s %3s %5s %2s %5s %7s %8s %7s %7s\n", "m", "G", "P", "L", "T",
           "regs", "bps", "D", "h", "KB", "gap MB", "us", "GB/s", "%copy");
    const int Dqs[] = {-1, 0, 1, 2, 3, 4, 6, 8}; /* quarter rounds; -1: one pass */
    const int nD = sizeof Dqs / sizeof Dqs[0];
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    for (int setaside = 0; setaside < 2; ++setaside) {
        /* evict_last lines within the persisting set-aside of L2 (0 by default) */
        const size_t limit = setaside ? (size_t)prop.persistingL2CacheMaxSize : 0;
        CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit));
        printf("# persisting L2 set-aside %.1f MB\n", limit / 1e6);
        const int m = 8192, hint_from = setaside;
        run_config<32, 8, 4, 2>(buf, m, count, repeats, copy_bw, Dqs, nD, hint_from);
        run_config<32, 8, 2, 4>(buf, m, count, repeats, copy_bw, Dqs, nD, hint_from);
        run_config<16, 8, 4, 4>(buf, m, count, repeats, copy_bw, Dqs, nD, hint_from);
    }
    probe_free(buf);
    return 0;
}
