/*
 * CUDA THOMAS kernels of batched tridiagonal solves (docs/tridiag.md), and their launcher:
 * the paper's cuThomasBatch, one thread per system; the forward sweep's (c', y') go to the
 * caller's buffer (2 m count doubles) and are read back. Double arithmetic for both
 * precisions.
 */
#include "cuda/tridiag_cuda.h"

#define THOMAS_THREADS 128

/* The paper's cuThomasBatch: one thread per system, (c', y') through memory. */
template <typename storage>
__device__ __forceinline__ void thomas_body(const gtsv_args_t &a)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= a.count) return;
    int n, touched;
    system_rows(a, s, &n, &touched);
    const size_t base = (size_t)s * a.sys_stride, plane = (size_t)a.m * (size_t)a.count;
    double *cp = a.work + s, *yp = a.work + plane + s; /* row i at i * count: coalesced */
    double c = 0.0, y = 0.0;
    for (int i = 0; i < a.m; ++i) {
        double dl, d, du, b;
        gtsv_load_row<storage, double>(a, base, i, n, touched, 0, &dl, &d, &du, &b);
        hb_td_thomas_step(dl, d, du, b, &c, &y);
        cp[(size_t)i * a.count] = c;
        yp[(size_t)i * a.count] = y;
    }
    double x = 0.0;
    for (int i = a.m - 1; i >= 0; --i) {
        x = yp[(size_t)i * a.count] - cp[(size_t)i * a.count] * x;
        if (i < touched) store<storage, double>(a.x, base + (size_t)i * a.row_stride, x);
    }
}

__global__ void __launch_bounds__(THOMAS_THREADS) thomas_d(const gtsv_args_t a)
{
    thomas_body<double>(a);
}
__global__ void __launch_bounds__(THOMAS_THREADS) thomas_s(const gtsv_args_t a)
{
    thomas_body<float>(a);
}

hb_status_t hb_cuda_gtsv_thomas(const gtsv_args_t *a, int is_float, cudaStream_t stream)
{
    const int blocks = ceil_div(a->count, THOMAS_THREADS);
    if (is_float)
        thomas_s<<<blocks, THOMAS_THREADS, 0, stream>>>(*a);
    else
        thomas_d<<<blocks, THOMAS_THREADS, 0, stream>>>(*a);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}
