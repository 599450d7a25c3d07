/* The paper's kernels: a thread per system (Flat, Full- and Block-Interleaved are the same code
 * with B systems a block) and Block-Shared (docs/gpu.md). */
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"
#include "cuda/hines_cuda.h"

#define PER_THREAD_BLOCK 128

/* Algorithm 1, one thread per system: the paper's Flat / Full- / Block-Interleaved. */
__global__ void per_thread_kernel(int m, const int *__restrict__ parent,
                                  const double *__restrict__ u, const double *__restrict__ l,
                                  double *__restrict__ d, double *__restrict__ rhs, int count,
                                  int block)
{
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= count) return;
    const size_t base = system_base(m, block, s), stride = (size_t)block;
    for (int i = m - 1; i > 0; --i) {
        const size_t r = base + (size_t)i * stride, pr = base + (size_t)__ldg(&parent[i]) * stride;
        const double factor = u[r] / d[r];
        d[pr] -= factor * l[r];
        rhs[pr] -= factor * rhs[r];
    }
    rhs[base] /= d[base];
    for (int i = 1; i < m; ++i) {
        const size_t r = base + (size_t)i * stride, pr = base + (size_t)__ldg(&parent[i]) * stride;
        rhs[r] -= l[r] * rhs[pr];
        rhs[r] /= d[r];
    }
}

/* The paper's Block-Shared: a CUDA block per layout block, its rhs in shared memory. */
__global__ void block_shared_kernel(int m, const int *__restrict__ parent,
                                    const double *__restrict__ u, const double *__restrict__ l,
                                    double *__restrict__ d, double *__restrict__ rhs)
{
    extern __shared__ double shared_rhs[]; /* [m][bs] */
    const int bs = blockDim.x, lane = threadIdx.x;
    const size_t base = (size_t)blockIdx.x * (size_t)m * (size_t)bs + (size_t)lane;
    for (int i = 0; i < m; ++i) shared_rhs[i * bs + lane] = rhs[base + (size_t)i * bs];
    for (int i = m - 1; i > 0; --i) {
        const int p = __ldg(&parent[i]);
        const size_t r = base + (size_t)i * bs, pr = base + (size_t)p * bs;
        const double factor = u[r] / d[r];
        d[pr] -= factor * l[r];
        shared_rhs[p * bs + lane] -= factor * shared_rhs[i * bs + lane];
    }
    shared_rhs[lane] /= d[base];
    for (int i = 1; i < m; ++i) {
        const int p = __ldg(&parent[i]);
        const size_t r = base + (size_t)i * bs;
        double x = shared_rhs[i * bs + lane] - l[r] * shared_rhs[p * bs + lane];
        shared_rhs[i * bs + lane] = x / d[r];
    }
    for (int i = 0; i < m; ++i) rhs[base + (size_t)i * bs] = shared_rhs[i * bs + lane];
}

hb_status_t hb_cuda_hines_per_thread(const hb_cuda_batch_t *b, part_t *p)
{
    const int m = b->m;
    cudaStream_t stream = b->ctx->stream[p->device];
    per_thread_kernel<<<ceil_div(p->count, PER_THREAD_BLOCK), PER_THREAD_BLOCK, 0, stream>>>(
        m, p->parent, p->u, p->l, p->d, p->rhs, p->count, p->block);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}

hb_status_t hb_cuda_hines_block_shared(const hb_cuda_batch_t *b, part_t *p)
{
    const int m = b->m;
    const size_t optin = b->ctx->smem_optin[p->device];
    cudaStream_t stream = b->ctx->stream[p->device];
    size_t smem = (size_t)m * (size_t)p->block * sizeof(double);
    CUDA_CHECK(hb_cuda_allow_smem((const void *)block_shared_kernel, optin));
    block_shared_kernel<<<ceil_div(p->count, p->block), p->block, smem, stream>>>(
        m, p->parent, p->u, p->l, p->d, p->rhs);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}
