/* The CUDA table of Hines batches (backend/hines_ops.h) over the CUDA batch (cuda/hines_batch.cu):
 * the state is an hb_cuda_batch_t on the context's devices. */
#include "backend/hines_ops.h"
#include "cuda/hines_batch_cuda.h"

static hb_status_t cuda_create(const hb_hines_host_t *h, const hb_tuning_t *tuning, void **state)
{
    hb_cuda_batch_t *b = NULL;
    hb_status_t status = hb_cuda_batch_create((hb_cuda_context_t *)h->ctx->device, h->m,
                                              h->parent, h->count, h->layout, h->block, tuning,
                                              &b);
    *state = b;
    return status;
}

static void cuda_destroy(void *state) { hb_cuda_batch_destroy((hb_cuda_batch_t *)state); }

static hb_status_t cuda_upload(void *state, const double *u, const double *l, const double *d,
                               const double *rhs)
{
    return hb_cuda_batch_upload((hb_cuda_batch_t *)state, u, l, d, rhs);
}

static hb_status_t cuda_download(void *state, double *u, double *l, double *d, double *rhs)
{
    return hb_cuda_batch_download((hb_cuda_batch_t *)state, u, l, d, rhs);
}

static hb_hines_algo_t cuda_resolve(const void *state, hb_hines_algo_t algo)
{
    return hb_cuda_batch_resolve((const hb_cuda_batch_t *)state, algo);
}

static hb_status_t cuda_solve(const hb_hines_host_t *h, void *state, hb_hines_algo_t algo)
{
    if (state) return hb_cuda_batch_solve((hb_cuda_batch_t *)state, algo);
    /* Host arrays: copy in, solve, copy back. */
    hb_cuda_batch_t *dev = NULL;
    hb_status_t status = hb_cuda_batch_create((hb_cuda_context_t *)h->ctx->device, h->m,
                                              h->parent, h->count, h->layout, h->block,
                                              &h->ctx->tuning, &dev);
    if (status == HB_SUCCESS) status = hb_cuda_batch_upload(dev, h->u, h->l, h->d, h->rhs);
    if (status == HB_SUCCESS) status = hb_cuda_batch_solve(dev, algo);
    if (status == HB_SUCCESS) status = hb_cuda_batch_download(dev, NULL, NULL, h->d, h->rhs);
    hb_cuda_batch_destroy(dev);
    return status;
}

static hb_status_t cuda_copy(void *dst, const void *src)
{
    return hb_cuda_batch_copy((hb_cuda_batch_t *)dst, (const hb_cuda_batch_t *)src);
}

static hb_status_t cuda_benchmark(const hb_hines_host_t *host, void *state,
                                  const hb_hines_host_t *source, const void *source_state,
                                  hb_hines_algo_t algo, int repeats, double *seconds)
{
    (void)host;
    (void)source;
    return hb_cuda_batch_benchmark((hb_cuda_batch_t *)state, (const hb_cuda_batch_t *)source_state,
                                   algo, repeats, seconds);
}

const struct hb_hines_ops hb_cuda_hines_ops = {
    .create = cuda_create,
    .destroy = cuda_destroy,
    .upload = cuda_upload,
    .download = cuda_download,
    .resolve = cuda_resolve,
    .solve = cuda_solve,
    .copy = cuda_copy,
    .benchmark = cuda_benchmark,
};
