/* Ours for many systems: a warp solves 32 (16, 8) adjacent systems; inputs stream once through
 * a cp.async ring, intermediates stay on chip, so memory sees each input read once and the
 * solution written once. */
#include <cuda_runtime.h>

#include "cuda/cuda_check.h"
#include "cuda/hines_cuda.h"

#define STREAM_RING 64  /* rows in flight per warp in the streamed kernel */

/* Queue row `row` of the four arrays into its ring slot (one commit group per row). */
__device__ __forceinline__ void stream_row(double *ring, int lanes, int lane, bool active, int row,
                                           size_t base, size_t stride, const double *u,
                                           const double *l, const double *d, const double *rhs)
{
    if (row >= 0 && active) {
        const size_t r = base + (size_t)row * stride + (size_t)lane;
        double *dst = ring + (size_t)(row % STREAM_RING) * 4 * lanes + lane;
        cp_async8(dst, u + r);
        cp_async8(dst + lanes, l + r);
        cp_async8(dst + 2 * lanes, d + r);
        cp_async8(dst + 3 * lanes, rhs + r);
    }
    cp_async_commit();
}

/*
 * Ours for many systems: a warp of `lanes` threads (32, or 16 / 8 when the
 * intermediates of 32 systems do not fit) solves adjacent systems, lane k the
 * system lanes * block + k, whose rows are `lanes` adjacent doubles `stride`
 * apart (INTERLEAVED, or BLOCK with bs % lanes == 0). Rows arrive in descending
 * order through a STREAM_RING-deep cp.async ring, so each input element is read
 * from memory once. The backward sweep leaves a_i = r'_i / d'_i and
 * b_i = l_i / d'_i in shared memory (slot i accumulates the contributions of
 * the children of i until row i is reached; child i + 1's stays in registers),
 * so the forward sweep x_i = a_i - b_i x_p only writes x to memory.
 */
__global__ void __launch_bounds__(32) streamed_kernel(int m, const int *__restrict__ parent,
                                                     const double *__restrict__ u,
                                                     const double *__restrict__ l,
                                                     const double *__restrict__ d,
                                                     double *__restrict__ rhs, int count,
                                                     int block)
{
    extern __shared__ double2 stream_smem[];
    const int lanes = blockDim.x, lane = threadIdx.x;
    double2 *slot = stream_smem;                            /* [m][lanes] */
    double *ring = (double *)(slot + (size_t)m * lanes);    /* [STREAM_RING][4][lanes] */
    int *sp = (int *)(ring + (size_t)STREAM_RING * 4 * lanes); /* [m] */
    const int first = blockIdx.x * lanes;
    const bool active = first + lane < count;
    const size_t base = system_base(m, block, first), stride = (size_t)block;

    for (int i = lane; i < m; i += lanes) sp[i] = parent[i];
    for (int i = 0; i < m; ++i) slot[(size_t)i * lanes + lane] = make_double2(0.0, 0.0);
    for (int k = 0; k < STREAM_RING; ++k)
        stream_row(ring, lanes, lane, active, m - 1 - k, base, stride, u, l, d, rhs);
    __syncwarp();

    /*
     * Backward sweep. Along a run of rows each carrying its child i + 1, the
     * eliminated diagonal is a ratio d'_i = t_i / t_below of the linear
     * recurrence t_i = D_i t_{i+1} - (u l)_{i+1} t_{i+2} (D: the diagonal plus
     * the other children's contributions), so the only dependent operation per
     * row is one FMA; t and t_below are rescaled together by exact powers of
     * two. 1/d' and everything that needs it (the rhs chain, the (a, b) pair,
     * the contributions to a parent) are done one row later, off the chain.
     */
    double t = 1.0, t_below = 1.0;   /* row i + 1's t and its t_below */
    double ul_below = 0.0;           /* u l of row i + 1 */
    int p_below = -1;                /* parent of row i + 1 */
    double du = 0.0, dl = 0.0, dr = 0.0, dinv = 0.0; /* the delayed row i + 1 */
    double carry_r = 0.0;            /* rhs contribution carried into the delayed row */
    double2 acc_next = make_double2(0.0, 0.0); /* row m - 1 has no children */
    int p_next = sp[m - 1];
    for (int i = m - 1; i >= 0; --i) {
        CP_ASYNC_WAIT(STREAM_RING - 1); /* row i's group has landed */
        __syncwarp();
        const double *row = ring + (size_t)(i % STREAM_RING) * 4 * lanes;
        const double ui = row[lane], li = row[lanes + lane];
        const double di = row[2 * lanes + lane], ri = row[3 * lanes + lane];
        const double2 acc = acc_next;
        const int p = p_next;

        /* The chain: t_i from t_{i+1}. */
        const bool carried = p_below == i;
        const double pick = carried ? t : 1.0;
        double t_new = fma(di + acc.x, pick, carried ? -ul_below * t_below : 0.0);
        double below_new = pick;
        const double mag = fabs(t_new);
        if (mag > 0x1p+600 || mag < 0x1p-600) {
            const double scale = mag > 1.0 ? 0x1p-600 : 0x1p+600;
            t_new *= scale;
            below_new *= scale;
        }
        const double inv_new = below_new * fast_rcp(t_new); /* 1/d'_i, used next row */

        /* Row i + 1, one row late: its rhs, (a, b) and contribution to its parent. */
        if (i + 1 < m) {
            const double r1 = dr + carry_r, f = du * dinv;
            slot[(size_t)(i + 1) * lanes + lane] = make_double2(r1 * dinv, dl * dinv);
            if (p_below == i) {
                carry_r = -f * r1;
            } else {
                double2 *acc_p = &slot[(size_t)p_below * lanes + lane];
                acc_p->x -= du * dl * dinv;
                acc_p->y -= f * r1;
                carry_r = 0.0;
            }
        }
        /* Row i - 1's accumulator is final now (its other children are done). */
        if (i > 0) {
            acc_next = slot[(size_t)(i - 1) * lanes + lane];
            p_next = sp[i - 1];
        }
        __syncwarp(); /* every lane has read the ring slot before it is refilled */
        stream_row(ring, lanes, lane, active, i - STREAM_RING, base, stride, u, l, d, rhs);

        du = ui;
        dl = li;
        dr = ri + acc.y;
        dinv = inv_new;
        ul_below = ui * li;
        t = t_new;
        t_below = below_new;
        p_below = p;
    }
    /* The root, one row late like the others: x_0 = r'_0 / d'_0. */
    slot[lane] = make_double2((dr + carry_r) * dinv, 0.0);
    CP_ASYNC_WAIT(0);

    /* Forward sweep from shared memory; x overwrites a in slot i. */
    double x = slot[lane].x;
    if (active) rhs[base + lane] = x;
    for (int i = 1; i < m; ++i) {
        const int p = sp[i];
        const double2 ab = slot[(size_t)i * lanes + lane];
        const double xp = p == i - 1 ? x : slot[(size_t)p * lanes + lane].x;
        x = ab.x - ab.y * xp;
        slot[(size_t)i * lanes + lane].x = x;
        if (active) rhs[base + (size_t)i * stride + lane] = x;
    }
}

static size_t streamed_smem(int m, int lanes)
{
    return (size_t)m * lanes * sizeof(double2) + (size_t)STREAM_RING * 4 * lanes * sizeof(double) +
           (size_t)m * sizeof(int);
}

/* Lanes (systems per warp) of the streamed kernel: 32, else 16 or 8 when the
 * intermediates do not fit; 0 when the shape cannot use it. Systems handled by
 * one warp must be adjacent in every row: INTERLEAVED, or BLOCK with bs % lanes == 0. */
int hb_cuda_hines_streamed_lanes(const hb_cuda_batch_t *b, size_t optin)
{
    for (int lanes = 32; lanes >= 8; lanes /= 2) {
        if (streamed_smem(b->m, lanes) > optin) continue;
        if (b->layout == HB_LAYOUT_INTERLEAVED ||
            (b->layout == HB_LAYOUT_BLOCK && b->block % lanes == 0))
            return lanes;
        return 0;
    }
    return 0;
}

hb_status_t hb_cuda_hines_streamed(const hb_cuda_batch_t *b, part_t *p)
{
    const int m = b->m;
    const size_t optin = b->ctx->smem_optin[p->device];
    cudaStream_t stream = b->ctx->stream[p->device];
    const int lanes = hb_cuda_hines_streamed_lanes(b, b->ctx->smem_optin[p->device]);
    size_t smem = streamed_smem(m, lanes);
    CUDA_CHECK(hb_cuda_allow_smem((const void *)streamed_kernel, optin));
    streamed_kernel<<<ceil_div(p->count, lanes), lanes, smem, stream>>>(
        m, p->parent, p->u, p->l, p->d, p->rhs, p->count, p->block);
    CUDA_CHECK(cudaGetLastError());
    return HB_SUCCESS;
}
