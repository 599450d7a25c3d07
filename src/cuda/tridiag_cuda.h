/*
 * The CUDA backend of batched tridiagonal solves (docs/tridiag.md), internal to src/cuda/:
 * what its files share. The kernel families, each file its kernels and their launcher:
 *   tridiag_partition.cu  PARTITION (ours: chunks eliminated in registers, the reduced
 *                         system in shared memory; clustered, staged, persistent, pairs)
 *   tridiag_thomas.cu     THOMAS (the paper's cuThomasBatch, one thread a system)
 *   tridiag_solve.cu      the entry points (solve, benchmark) and hb_cuda_gtsv_ops
 * The arithmetic is common/tridiag_plan.h's, shared with the CPU twin: PARTITION computes in
 * the data's precision (real_t, a template parameter), THOMAS in double (float arrays
 * converted on load and back on store). Device pointers throughout; device 0.
 */
#ifndef HB_CUDA_TRIDIAG_CUDA_H
#define HB_CUDA_TRIDIAG_CUDA_H

#include <cuda_runtime.h>
#include <stdint.h>

extern "C" {
#include "common/status.h"
}
#include "backend/gtsv_ops.h"
#include "common/tridiag_plan.h"
#include "cuda/backend_cuda.h"
#include "cuda/cuda_check.h"

/*
 * Two adjacent fp32 systems a thread (plan->pairs): a value is a pair of floats, 8
 * bytes, and every operation is done on both halves, each what the one-system kernel
 * does for its system. The PARTITION arithmetic (tridiag_arith.h) is compiled a third
 * time for it, so a block holds twice the systems in the registers and shared memory
 * of an fp64 block.
 */
struct __align__(8) hb_pair {
    float x, y;
    hb_pair() = default;
    __host__ __device__ __forceinline__ hb_pair(float v) : x(v), y(v) {}
    __host__ __device__ __forceinline__ hb_pair(float a, float b) : x(a), y(b) {}
};
__host__ __device__ __forceinline__ hb_pair operator+(hb_pair a, hb_pair b)
{
    return hb_pair(a.x + b.x, a.y + b.y);
}
__host__ __device__ __forceinline__ hb_pair operator-(hb_pair a, hb_pair b)
{
    return hb_pair(a.x - b.x, a.y - b.y);
}
__host__ __device__ __forceinline__ hb_pair operator*(hb_pair a, hb_pair b)
{
    return hb_pair(a.x * b.x, a.y * b.y);
}
__host__ __device__ __forceinline__ hb_pair operator/(hb_pair a, hb_pair b)
{
    return hb_pair(a.x / b.x, a.y / b.y);
}
__host__ __device__ __forceinline__ hb_pair operator-(hb_pair a) { return hb_pair(-a.x, -a.y); }
__host__ __device__ __forceinline__ hb_pair &operator*=(hb_pair &a, hb_pair b)
{
    return a = a * b;
}
extern "C++" {
#define HB_TD_FN(name) name
#define real_t hb_pair
#define HB_TD_INTERFACE_LOOP
#include "common/tridiag_arith.h"
#undef HB_TD_INTERFACE_LOOP
#undef real_t
#undef HB_TD_FN
}

typedef struct {
    int m, count;
    int touch_all;  /* Computing-Padding: rows up to m are read and written */
    const int *sizes; /* device; NULL: every system has m rows */
    const void *dl, *d, *du, *b;
    void *x;
    size_t sys_stride, row_stride; /* element (s, i) at s * sys_stride + i * row_stride */
    int chunks, groups;            /* partition: P chunks per system, G systems per block */
    int cluster;                   /* partition: K blocks (a cluster) share G systems, block
                                      rank r holding chunks [r P / K, (r + 1) P / K) */
    int sys_fastest;               /* partition: thread t is system t % G, chunk t / G */
    int prefetch;                  /* partition: 0 none, 1 the whole chunk into L2 at the
                                      start, 2 the next `ahead` rows at each load group */
    double *work;                  /* thomas: (c', y'), 2 m count doubles */
} gtsv_args_t;

/* ------------------------------------------------------------------------ */
/* Memory access of both kernel families                                    */
/* ------------------------------------------------------------------------ */

/* Element e of an array of `storage` values, in `real_t` arithmetic. */
template <typename storage, typename real_t>
__device__ __forceinline__ real_t gtsv_load(const void *a, size_t e)
{
    return (real_t)((const storage *)a)[e];
}

/* A value with an L2 prefetch-size hint (hint 1: 128 B, 2: 256 B): a miss
 * fetches the whole 128/256-byte span from DRAM, so the neighbouring systems'
 * rows (interleaved layout, read by other blocks moments later) are in L2
 * when asked for. Coherent loads (not .nc): in place, x overwrites b. */
#define LOAD_HINT(T, PTX_TYPE, CONSTRAINT)                                                 \
    __device__ __forceinline__ T load_hint(const T *ptr, int hint)                         \
    {                                                                                      \
        T v;                                                                               \
        if (hint == 1)                                                                     \
            asm volatile("ld.global.L2::128B." PTX_TYPE " %0, [%1];"                       \
                         : "=" CONSTRAINT(v)                                               \
                         : "l"(ptr));                                                      \
        else                                                                               \
            asm volatile("ld.global.L2::256B." PTX_TYPE " %0, [%1];"                       \
                         : "=" CONSTRAINT(v)                                               \
                         : "l"(ptr));                                                      \
        return v;                                                                          \
    }
LOAD_HINT(float, "f32", "f")
LOAD_HINT(double, "f64", "d")
#undef LOAD_HINT

__device__ __forceinline__ hb_pair load_hint(const hb_pair *ptr, int hint)
{
    hb_pair v;
    if (hint == 1)
        asm volatile("ld.global.L2::128B.v2.f32 {%0, %1}, [%2];"
                     : "=f"(v.x), "=f"(v.y)
                     : "l"(ptr));
    else
        asm volatile("ld.global.L2::256B.v2.f32 {%0, %1}, [%2];"
                     : "=f"(v.x), "=f"(v.y)
                     : "l"(ptr));
    return v;
}

/* gtsv_load() with the hint (0: none). */
template <typename storage, typename real_t>
__device__ __forceinline__ real_t load_hinted(const void *a, size_t e, int hint)
{
    if (hint == 0) return gtsv_load<storage, real_t>(a, e);
    return (real_t)load_hint((const storage *)a + e, hint);
}

template <typename storage, typename real_t>
__device__ __forceinline__ void store(void *a, size_t e, real_t v)
{
    ((storage *)a)[e] = (storage)v;
}

/* Rows of system s and rows read/written (0 for threads past the batch). */
__device__ __forceinline__ void system_rows(const gtsv_args_t &a, int s, int *n, int *touched)
{
    *n = 0;
    *touched = 0;
    if (s >= a.count) return;
    *n = a.sizes ? min(max(a.sizes[s], 0), a.m) : a.m;
    *touched = a.touch_all ? a.m : *n;
}

/* Row i of a system into (dl, d, du, b), identity and boundary rules applied. */
template <typename storage, typename real_t>
__device__ __forceinline__ void gtsv_load_row(const gtsv_args_t &a, size_t base, int i, int n,
                                         int touched, int hint, real_t *dl, real_t *d,
                                         real_t *du, real_t *b)
{
    *dl = 0;
    *d = 1;
    *du = 0;
    *b = 0;
    if (i < touched) {
        const size_t e = base + (size_t)i * a.row_stride;
        *dl = load_hinted<storage, real_t>(a.dl, e, hint);
        *d = load_hinted<storage, real_t>(a.d, e, hint);
        *du = load_hinted<storage, real_t>(a.du, e, hint);
        *b = load_hinted<storage, real_t>(a.b, e, hint);
    }
    hb_td_fix_row(i, n, dl, d, du, b);
}

static inline int ceil_div(long a, long b) { return (int)((a + b - 1) / b); }

/* G systems per block (per cluster of K blocks, each holding P / K chunks of each): the
 * plan's block size (at least P / K), at least one system, no more systems than the
 * batch has (rounded to a power of two). */
static inline int plan_groups(const hb_gtsv_plan_t *plan, int count)
{
    const int K = plan->cluster > 1 ? plan->cluster : 1;
    int groups = plan->threads * K / plan->chunks;
    if (groups < 1) groups = 1;
    while (groups > 1 && groups / 2 >= count) groups /= 2;
    return groups;
}

/* Launchers (queued on `stream`, not waited for; the launch checked). a: the problem as
 * the kernels read it (tridiag_solve.cu's make_args); is_float: fp32 data. */
hb_status_t hb_cuda_gtsv_thomas(const gtsv_args_t *a, int is_float, cudaStream_t stream);
hb_status_t hb_cuda_gtsv_partition(const gtsv_args_t *given, const hb_gtsv_plan_t *plan,
                                   int is_float, cudaStream_t stream);

/* The entry points behind hb_cuda_gtsv_ops (tridiag_solve.cu): arguments checked by
 * src/core/tridiag.c, the plan its (common/tridiag_plan.h). */
extern "C" hb_status_t hb_cuda_gtsv_solve(hb_cuda_context_t *ctx, const hb_gtsv_problem_t *p,
                                          const hb_gtsv_plan_t *plan);
/* One warm-up solve of each problem, then `repeats` solves timed with events. */
extern "C" hb_status_t hb_cuda_gtsv_benchmark(hb_cuda_context_t *ctx,
                                              const hb_gtsv_problem_t *problems,
                                              const hb_gtsv_plan_t *plans, int n_problems,
                                              int repeats, double *seconds);

#endif
