/*
 * Can a clustered partition solve read its inputs twice and still move only the
 * minimum from DRAM? A probe for issue 4 (docs/tridiag.md, "Known limits": the
 * interleaved kernels at m >= 2048 hold a tile's eliminated rows, 3 values a row, on
 * chip, so one tile fits a multiprocessor at a time and its reduced solve is not
 * overlapped). A two-pass partition would keep nothing a row: pass 1 reads a chunk and
 * keeps only its reduced rows; after the cluster's reduced solve, pass 2 reads the
 * chunk again (from L2, if it is still there) and solves it with both boundaries
 * known. Fewer registers, more tiles a multiprocessor, overlap by the scheduler.
 *
 * The memory pattern only (no solve): four arrays of m rows x `count` systems,
 * interleaved (row pitch = count); x = a + b + c + d written, 40 bytes a row counted.
 * A block of T threads holds G adjacent systems x C = T / G chunks of 16 rows; a
 * cluster of K = m / (16 C) blocks holds a whole tile of G systems (K <= 16), as the
 * clustered kernels do. Modes:
 *   one    one pass: rows read and x written in the same loop (the floor's pattern);
 *   two    pass 1 reads every row, the cluster barrier (every block of the tile has
 *          read its rows, as before a reduced solve), pass 2 reads them again and
 *          writes x;
 *   hint   two, with pass 1's loads L2 evict_last and pass 2's evict_first
 *          (createpolicy + ld.global.L2::cache_hint).
 * Each pass loads 4 rows (16 values) at a time. Time = median of `repeats` after two
 * warm-ups, CUDA events; % of a device-to-device copy measured in the same run.
 * Build: nvcc -arch=sm_90 -O3 -o two_pass_loads two_pass_loads.cu
 * Run:   ./two_pass_loads [count] [repeats]
 */
#include "probe_common.h"

enum { ROWS = 16, GROUP = 4 };
enum { MODE_ONE, MODE_TWO, MODE_HINT };

struct arrays {
    const double *v[4];
    double *x;
    long pitch; /* [values] between rows */
    int m, G, mode;
};

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ unsigned cluster_blocks()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_nctarank;" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_barrier()
{
    asm volatile("barrier.cluster.arrive.aligned;\n\tbarrier.cluster.wait.aligned;" ::: "memory");
}

/* rows [k, k + GROUP) of the thread's chunk: a + b + c + d each */
__device__ __forceinline__ void load_group(const arrays &A, long at, unsigned long long policy,
                                           int hinted, double *sum)
{
    double v[GROUP][4];
#pragma unroll
    for (int q = 0; q < GROUP; ++q)
#pragma unroll
        for (int a = 0; a < 4; ++a) v[q][a] = probe_load(A.v[a] + at + q * A.pitch, policy, hinted);
#pragma unroll
    for (int q = 0; q < GROUP; ++q) sum[q] = v[q][0] + v[q][1] + v[q][2] + v[q][3];
}

__global__ void __launch_bounds__(1024) two_pass_kernel(arrays A)
{
    const int T = blockDim.x, G = A.G, C = T / G, t = threadIdx.x, g = t % G, c = t / G;
    const int K = (int)cluster_blocks(), rank = (int)cluster_rank();
    const int tile = blockIdx.x / K, row0 = (rank * C + c) * ROWS;
    const long base = (long)row0 * A.pitch + (long)tile * G + g;
    unsigned long long keep = 0, drop = 0;
    const int hinted = A.mode == MODE_HINT;
    if (hinted) probe_l2_policies(&keep, &drop);
    double carried = 0; /* what pass 1 leaves a chunk (its reduced rows, in a solve) */
#pragma unroll 1
    for (int k = 0; k < ROWS; k += GROUP) {
        double sum[GROUP];
        load_group(A, base + (long)k * A.pitch, keep, hinted, sum);
        if (A.mode == MODE_ONE) {
#pragma unroll
            for (int q = 0; q < GROUP; ++q) A.x[base + (long)(k + q) * A.pitch] = sum[q];
        } else {
#pragma unroll
            for (int q = 0; q < GROUP; ++q) carried += sum[q];
        }
    }
    if (A.mode == MODE_ONE) return;
    cluster_barrier();
    const double scale = carried * 1e-300; /* 0 in effect, but pass 1 must happen */
#pragma unroll 1
    for (int k = 0; k < ROWS; k += GROUP) {
        double sum[GROUP];
        load_group(A, base + (long)k * A.pitch, drop, hinted, sum);
#pragma unroll
        for (int q = 0; q < GROUP; ++q) A.x[base + (long)(k + q) * A.pitch] = sum[q] + scale;
    }
}

struct launch_args {
    cudaLaunchConfig_t cfg;
    arrays A;
};

static void launch_clusters(void *arg)
{
    const launch_args *l = (const launch_args *)arg;
    CHECK(cudaLaunchKernelEx(&l->cfg, two_pass_kernel, l->A));
}

int main(int argc, char **argv)
{
    const int m_max = 8192;
    int count, repeats;
    double *buf[5];
    const double copy_bw = probe_start(argc, argv, m_max, buf, &count, &repeats);
    const size_t bytes = (size_t)m_max * count * sizeof(double);
    printf("count %d, %d repeats (median); copy %.0f GB/s (read + written); L2 %d MB\n", count,
           repeats, copy_bw / 1e9, probe_l2_mb());
    printf("%5s %3s %5s %3s %-5s %10s %8s %7s %8s\n", "m", "G", "T", "K", "mode", "us", "GB/s",
           "%copy", "clusters");
    CHECK(cudaFuncSetAttribute(two_pass_kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    const int ms[] = {2048, 4096, 8192}, Gs[] = {8, 16, 32}, Ts[] = {256, 512, 1024};
    const char *names[] = {"one", "two", "hint"};
    for (int mi = 0; mi < 3; ++mi)
        for (int gi = 0; gi < 3; ++gi)
            for (int ti = 0; ti < 3; ++ti) {
                const int m = ms[mi], G = Gs[gi], T = Ts[ti], C = T / G;
                if (m % (C * ROWS)) continue;
                const int K = m / (C * ROWS);
                if (K > 16) continue;
                for (int mode = 0; mode < 3; ++mode) {
                    launch_args l = {};
                    arrays &A = l.A;
                    for (int v = 0; v < 4; ++v) A.v[v] = buf[v];
                    A.x = buf[4];
                    A.pitch = count;
                    A.m = m;
                    A.G = G;
                    A.mode = mode;
                    cudaLaunchAttribute attr[1];
                    attr[0].id = cudaLaunchAttributeClusterDimension;
                    attr[0].val.clusterDim.x = K;
                    attr[0].val.clusterDim.y = 1;
                    attr[0].val.clusterDim.z = 1;
                    l.cfg.gridDim = dim3((count / G) * K);
                    l.cfg.blockDim = dim3(T);
                    l.cfg.attrs = attr;
                    l.cfg.numAttrs = 1;
                    int clusters = 0;
                    if (cudaOccupancyMaxActiveClusters(&clusters, two_pass_kernel, &l.cfg) !=
                            cudaSuccess ||
                        clusters == 0) {
                        cudaGetLastError();
                        printf("%5d %3d %5d %3d %-5s  (no cluster fits)\n", m, G, T, K,
                               names[mode]);
                        continue;
                    }
                    const float t = probe_time(launch_clusters, &l, repeats);
                    const size_t at[2] = {(size_t)(m - 1) * count + (count / G) * G - 1, 0};
                    const int ok = probe_x_is_four_a(buf, at, bytes);
                    const double bw = 40.0 * (double)m * (count / G) * G / (t * 1e-3);
                    printf("%5d %3d %5d %3d %-5s %10.1f %8.0f %6.1f%% %8d%s\n", m, G, T, K,
                           names[mode], t * 1e3, bw / 1e9, 100.0 * bw / copy_bw, clusters,
                           ok ? "" : "  WRONG");
                }
            }
    probe_free(buf);
    return 0;
}
