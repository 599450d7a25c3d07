/*
 * How fast can a block stream the interleaved layout's rows, by load path, when it
 * reads G adjacent systems (8 G contiguous bytes a row, fp64)? A probe for issue 4
 * (docs/tridiag.md, "Known limits": the interleaved kernels' bandwidth follows G).
 *
 * Four arrays of m rows x `count` systems (row pitch = count) are read and
 * x = a + b + c + d written, 40 bytes a row of a system, as a solve moves. A block
 * of 256 threads holds G systems x C = 256 / G chunks of 16 rows (thread t: system
 * t % G, chunk t / G), as the partition kernels do. Load paths:
 *   0 direct   ld.global, the 16 rows of 4 arrays issued together;
 *   1 cpasync  cp.async 8 bytes a value (128-byte L2 hint) into a ring of 8 rows a
 *              thread, a commit group a row, as the staged kernels do;
 *   2 bulk     cp.async.bulk (the TMA unit): a row piece of G systems (8 G bytes) a
 *              copy, into the same ring, completion counted by an mbarrier a slot;
 *              a block barrier a row before a slot is refilled.
 * Build: nvcc -arch=sm_90 -O3 -o interleaved_loads interleaved_loads.cu
 * Run:   ./interleaved_loads [m] [count] [repeats]
 */
#include "probe_common.h"

enum { THREADS = 256, ROWS = 16, RING = 8 };

struct arrays {
    const double *v[4];
    double *x;
    long pitch; /* [values] between rows */
    int m, count, G, row_fastest;
};

/* block -> (tile of G systems, chunk rows [row0, row0 + C ROWS)) */
__device__ void block_place(const arrays &A, int *sys0, int *row0)
{
    const int C = THREADS / A.G, row_blocks = (A.m + C * ROWS - 1) / (C * ROWS);
    const int b = blockIdx.x;
    const int tile = A.row_fastest ? b / row_blocks : b % (A.count / A.G);
    const int rb = A.row_fastest ? b % row_blocks : b / (A.count / A.G);
    *sys0 = tile * A.G;
    *row0 = rb * C * ROWS;
}

__global__ void __launch_bounds__(THREADS) direct_kernel(arrays A)
{
    int sys0, row0;
    block_place(A, &sys0, &row0);
    const int t = threadIdx.x, g = t % A.G, c = t / A.G;
    const long base = (long)(row0 + c * ROWS) * A.pitch + sys0 + g;
    if (row0 + c * ROWS >= A.m) return;
    double acc[ROWS];
#pragma unroll
    for (int k = 0; k < ROWS; ++k) {
        const long at = base + k * A.pitch;
        acc[k] = __ldg(A.v[0] + at) + __ldg(A.v[1] + at) + __ldg(A.v[2] + at) +
                 __ldg(A.v[3] + at);
    }
#pragma unroll
    for (int k = 0; k < ROWS; ++k) A.x[base + k * A.pitch] = acc[k];
}

__device__ __forceinline__ unsigned smem_addr(const void *p)
{
    return (unsigned)__cvta_generic_to_shared(p);
}

__device__ __forceinline__ void wait_groups(int allowed)
{
    switch (allowed) {
    case 7: asm volatile("cp.async.wait_group 7;" ::: "memory"); break;
    case 6: asm volatile("cp.async.wait_group 6;" ::: "memory"); break;
    default: asm volatile("cp.async.wait_group 0;" ::: "memory");
    }
}

__global__ void __launch_bounds__(THREADS) cpasync_kernel(arrays A)
{
    extern __shared__ double ring[]; /* [slot][value][thread] */
    int sys0, row0;
    block_place(A, &sys0, &row0);
    const int t = threadIdx.x, g = t % A.G, c = t / A.G;
    if (row0 + c * ROWS >= A.m) return;
    const long base = (long)(row0 + c * ROWS) * A.pitch + sys0 + g;
    for (int k = 0; k < RING - 1; ++k) {
        for (int v = 0; v < 4; ++v) {
            double *to = ring + (k * 4 + v) * THREADS + t;
            asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 8;" ::"r"(smem_addr(to)),
                         "l"(A.v[v] + base + k * A.pitch));
        }
        asm volatile("cp.async.commit_group;");
    }
    for (int k = 0; k < ROWS; ++k) {
        const int ahead = k + RING - 1;
        if (ahead < ROWS) {
            for (int v = 0; v < 4; ++v) {
                double *to = ring + ((ahead % RING) * 4 + v) * THREADS + t;
                asm volatile("cp.async.ca.shared.global.L2::128B [%0], [%1], 8;" ::"r"(
                                 smem_addr(to)),
                             "l"(A.v[v] + base + (long)ahead * A.pitch));
            }
        }
        asm volatile("cp.async.commit_group;");
        wait_groups(RING - 1);
        const double *row = ring + (k % RING) * 4 * THREADS + t;
        A.x[base + k * A.pitch] = row[0] + row[THREADS] + row[2 * THREADS] + row[3 * THREADS];
    }
}

__device__ __forceinline__ void bulk_copy(void *to, const void *from, unsigned bytes,
                                          unsigned long long *bar)
{
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], "
                 "%2, [%3];" ::"r"(smem_addr(to)),
                 "l"(from), "r"(bytes), "r"(smem_addr(bar))
                 : "memory");
}

__device__ __forceinline__ void expect_bytes(unsigned long long *bar, unsigned bytes)
{
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)),
                 "r"(bytes)
                 : "memory");
}

__device__ __forceinline__ void wait_parity(unsigned long long *bar, unsigned parity)
{
    asm volatile("{\n"
                 ".reg .pred done;\n"
                 "retry:\n"
                 "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
                 "@!done bra retry;\n"
                 "}\n" ::"r"(smem_addr(bar)),
                 "r"(parity)
                 : "memory");
}

/* thread i < 4 C issues the copies of chunk i / 4, value i % 4, of one row */
__device__ void bulk_fill(const arrays &A, double *ring, unsigned long long *bars, int row0,
                          int sys0, int k)
{
    const int C = THREADS / A.G, t = threadIdx.x;
    if (t >= 4 * C) return;
    const int c = t / 4, v = t % 4, slot = k % RING;
    const long at = (long)(row0 + c * ROWS + k) * A.pitch + sys0;
    expect_bytes(bars + slot, 8u * A.G);
    bulk_copy(ring + (slot * 4 + v) * THREADS + c * A.G, A.v[v] + at, 8u * A.G, bars + slot);
}

__global__ void __launch_bounds__(THREADS) bulk_kernel(arrays A)
{
    extern __shared__ double ring[];
    __shared__ __align__(8) unsigned long long bars[RING];
    int sys0, row0;
    block_place(A, &sys0, &row0);
    const int t = threadIdx.x, g = t % A.G, c = t / A.G, C = THREADS / A.G;
    const int chunks = min(C, (A.m - row0) / ROWS); /* whole chunks in this block */
    if (t < RING)
        asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bars + t)),
                     "r"(4 * chunks));
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
    __syncthreads();
    for (int k = 0; k < RING && k < ROWS; ++k)
        if (t < 4 * chunks) bulk_fill(A, ring, bars, row0, sys0, k);
    const long base = (long)(row0 + c * ROWS) * A.pitch + sys0 + g;
    for (int k = 0; k < ROWS; ++k) {
        wait_parity(bars + k % RING, (unsigned)(k / RING) & 1u);
        if (c < chunks) {
            const double *row = ring + (k % RING) * 4 * THREADS + t;
            A.x[base + k * A.pitch] =
                row[0] + row[THREADS] + row[2 * THREADS] + row[3 * THREADS];
        }
        if (k + RING < ROWS) {
            __syncthreads(); /* every thread has read slot k % RING */
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            if (t < 4 * chunks) bulk_fill(A, ring, bars, row0, sys0, k + RING);
        }
    }
}

struct launch_args {
    arrays A;
    int path, blocks;
    size_t smem;
};

static void launch_path(void *arg)
{
    const launch_args *l = (const launch_args *)arg;
    if (l->path == 0) direct_kernel<<<l->blocks, THREADS>>>(l->A);
    if (l->path == 1) cpasync_kernel<<<l->blocks, THREADS, l->smem>>>(l->A);
    if (l->path == 2) bulk_kernel<<<l->blocks, THREADS, l->smem>>>(l->A);
}

int main(int argc, char **argv)
{
    const int m = argc > 1 ? atoi(argv[1]) : 2048;
    const int count = argc > 2 ? atoi(argv[2]) : 20000;
    const int repeats = argc > 3 ? atoi(argv[3]) : 10;
    const size_t bytes = (size_t)m * count * sizeof(double);
    double *buf[5];
    probe_buffers(buf, bytes);
    const double copy_bw = probe_copy_bandwidth(buf[1], bytes, repeats);
    printf("m %d, count %d, %d repeats (median); copy %.0f GB/s (read + written)\n", m, count,
           repeats, copy_bw / 1e9);
    printf("%-8s %3s %-6s %10s %8s %7s\n", "path", "G", "order", "us", "GB/s", "%copy");
    const int Gs[] = {4, 8, 16, 32};
    CHECK(cudaFuncSetAttribute(cpasync_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               RING * 4 * THREADS * 8));
    CHECK(cudaFuncSetAttribute(bulk_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               RING * 4 * THREADS * 8));
    for (int path = 0; path < 3; ++path)
        for (int gi = 0; gi < 4; ++gi)
            for (int order = 0; order < 2; ++order) {
                launch_args l;
                arrays &A = l.A;
                for (int v = 0; v < 4; ++v) A.v[v] = buf[v];
                A.x = buf[4];
                A.pitch = count;
                A.m = m;
                A.count = count;
                A.G = Gs[gi];
                A.row_fastest = order;
                const int C = THREADS / A.G;
                l.path = path;
                l.blocks = (count / A.G) * ((m + C * ROWS - 1) / (C * ROWS));
                l.smem = path == 0 ? 0 : (size_t)RING * 4 * THREADS * 8;
                const float t = probe_time(launch_path, &l, repeats);
                const size_t at[2] = {(size_t)(m - 1) * count + (count / A.G) * A.G - 1, 0};
                const int ok = probe_x_is_four_a(buf, at, bytes);
                const double bw = 40.0 * (double)m * (count / A.G) * A.G / (t * 1e-3);
                printf("%-8s %3d %-6s %10.1f %8.0f %6.1f%%%s\n",
                       path == 0 ? "direct" : path == 1 ? "cpasync" : "bulk", A.G,
                       order ? "rows" : "tiles", t * 1e3, bw / 1e9, 100.0 * bw / copy_bw,
                       ok ? "" : "  WRONG");
            }
    probe_free(buf);
    return 0;
}
