/* Ours for few systems: a warp per system, the system staged in shared memory and eliminated
 * there with register-carried chains. */
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"
#include "cuda/hines_cuda.h"

#define STAGED_WARPS 4  /* systems per CUDA block in the staged kernel, at most */

/*
 * One row of the backward sweep. d_row and r_row already hold the row's
 * inputs plus the contributions of every child but the carried one (child
 * i + 1). Returns the forward-sweep pair (a, b) = (r'/d', l/d') and the
 * contributions (cd, cr) this row makes to its parent. Only d' -> 1/d' -> cd
 * is on the critical path.
 */
__device__ __forceinline__ double2 backward_row(double ui, double li, double d_row, double r_row,
                                                double carry_d, double carry_r, double *cd,
                                                double *cr)
{
    const double ul = ui * li; /* independent of the chain */
    const double r = r_row + carry_r;
    const double inv = fast_rcp(d_row + carry_d);
    *cd = -ul * inv;
    *cr = -(ui * inv) * r;
    return make_double2(r * inv, li * inv);
}

/*
 * Elimination of one system held in shared memory (su, sl, sd, sr; sd and sr
 * are overwritten with b and a, then sr with x). The contribution of child
 * i + 1 to row i (the usual case in Hines order) stays in registers; other
 * children accumulate in sd/sr[parent], which is final one row early, so it is
 * loaded ahead.
 */
__device__ void solve_shared_system(int m, const int *sp, const double *su, const double *sl,
                                    double *sd, double *sr)
{
    double carry_d = 0.0, carry_r = 0.0;
    double d_next = sd[m - 1], r_next = sr[m - 1];
    for (int i = m - 1; i > 0; --i) {
        const double d_row = d_next, r_row = r_next;
        d_next = sd[i - 1]; /* row i - 1 only waits for this row's carry */
        r_next = sr[i - 1];
        double cd, cr;
        const double2 ab = backward_row(su[i], sl[i], d_row, r_row, carry_d, carry_r, &cd, &cr);
        sr[i] = ab.x;
        sd[i] = ab.y;
        const int p = sp[i];
        if (p == i - 1) {
            carry_d = cd;
            carry_r = cr;
        } else {
            sd[p] += cd;
            sr[p] += cr;
            carry_d = carry_r = 0.0;
        }
    }
    double x = (r_next + carry_r) / (d_next + carry_d);
    sr[0] = x;
    for (int i = 1; i < m; ++i) {
        const int p = sp[i];
        const double xp = p == i - 1 ? x : sr[p];
        x = sr[i] - sd[i] * xp;
        sr[i] = x;
    }
}

/* Ours for few systems: a warp per system, staged in shared memory. */
__global__ void staged_kernel(int m, const int *__restrict__ parent, const double *__restrict__ u,
                              const double *__restrict__ l, const double *__restrict__ d,
                              double *__restrict__ rhs, int count, int block)
{
    extern __shared__ double staged[]; /* warps x [u l d rhs][m], then parent[m] */
    const int warps = blockDim.x / 32, warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    int *sp = (int *)(staged + (size_t)warps * 4 * m);
    for (int i = threadIdx.x; i < m; i += blockDim.x) sp[i] = parent[i];
    const int s = blockIdx.x * warps + warp;
    double *su = staged + (size_t)warp * 4 * m, *sl = su + m, *sd = sl + m, *sr = sd + m;
    const size_t base = s < count ? system_base(m, block, s) : 0, stride = (size_t)block;
    if (s < count) {
        for (int i = lane; i < m; i += 32) {
            const size_t r = base + (size_t)i * stride;
            su[i] = u[r];
            sl[i] = l[r];
            sd[i] = d[r];
            sr[i] = rhs[r];
        }
    }
    __syncthreads();
    if (s >= count) return;
    if (lane == 0) solve_shared_system(m, sp, su, sl, sd, sr);
    __syncwarp();
    for (int i = lane; i < m; i += 32) rhs[base + (size_t)i * stride] = sr[i];
}

size_t hb_cuda_hines_staged_smem(int m, int warps)
{
    return (size_t)warps * 4 * (size_t)m * sizeof(double) + (size_t)m * sizeof(int);
}

hb_status_t hb_cuda_hines_staged(const hb_cuda_batch_t *b, part_t *p)
{
    const int m = b->m;
    const size_t optin = b->ctx->smem_optin[p->device];
    cudaStream_t stream = b->ctx->stream[p->device];
    int warps = STAGED_WARPS;
    while (warps > 1 && hb_cuda_hines_staged_smem(m, warps) > b->ctx->smem_optin[p->device])
        warps--;
    size_t smem = hb_cuda_hines_staged_smem(m, warps);
    CUDA_CHECK(hb_cuda_allow_smem((const void *)staged_kernel, optin));
    staged_kernel<<<ceil_div(p->count, warps), 32 * warps, smem, stream>>>(
        m, p->parent, p->u, p->l, p->d, p->rhs, p->count, p->block);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}
