/* The Hines solves on host arrays (hb_hines_solve, hb_hines_matvec, hb_hines_solve_batch) and
 * the argument checks every Hines facade shares. */
#include "backend/hines_ops.h"
#include "common/hines_lanes.h"
#include "common/layout.h"
#include "common/status.h"
#include "core/context.h"
#include "core/hines.h"

hb_status_t hb_check_tree(const char *fn, int m, const int *parent)
{
    if (m < 1) return hb_fail(HB_ERR_INVALID_VALUE, "%s: m = %d; expected m >= 1", fn, m);
    if (!parent) return hb_fail(HB_ERR_INVALID_VALUE, "%s: parent is NULL", fn);
    if (parent[0] != -1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: parent[0] = %d; expected -1 (root)", fn,
                       parent[0]);
    for (int i = 1; i < m; ++i)
        if (parent[i] < 0 || parent[i] >= i)
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "%s: parent[%d] = %d; expected 0 <= parent[i] < i (Hines order)", fn,
                           i, parent[i]);
    return HB_SUCCESS;
}

hb_status_t hb_check_batch(const char *fn, int m, const int *parent, int batch_count,
                           hb_layout_t layout, int block_size)
{
    hb_status_t status = hb_check_tree(fn, m, parent);
    if (status != HB_SUCCESS) return status;
    if (batch_count < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: batch_count = %d; expected >= 1", fn,
                       batch_count);
    if (layout != HB_LAYOUT_FLAT && layout != HB_LAYOUT_INTERLEAVED && layout != HB_LAYOUT_BLOCK)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: layout = %d is not an hb_layout_t", fn,
                       (int)layout);
    if (layout == HB_LAYOUT_BLOCK && block_size < 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: block_size = %d; expected >= 1 for %s", fn,
                       block_size, hb_layout_name(layout));
    if (hb_layout_size(layout, m, batch_count, block_size) == 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %d systems of %d rows do not fit in memory",
                       fn, batch_count, m);
    return HB_SUCCESS;
}

hb_status_t hb_hines_solve(int m, const int *parent, const double *u, const double *l,
                           double *d, double *rhs)
{
    hb_clear_error();
    hb_status_t status = hb_check_tree("hb_hines_solve", m, parent);
    if (status != HB_SUCCESS) return status;
    if (!u || !l || !d || !rhs)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_hines_solve: u, l, d and rhs must not be NULL");
    hb_hines_lanes_inline(m, parent, 1, 1, u, l, d, rhs);
    return HB_SUCCESS;
}

hb_status_t hb_hines_matvec(int m, const int *parent, const double *u, const double *l,
                            const double *d, const double *x, double *y)
{
    hb_clear_error();
    hb_status_t status = hb_check_tree("hb_hines_matvec", m, parent);
    if (status != HB_SUCCESS) return status;
    if (!u || !l || !d || !x || !y)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_hines_matvec: u, l, d, x and y must not be NULL");
    if (x == y) return hb_fail(HB_ERR_INVALID_VALUE, "hb_hines_matvec: x and y must not alias");
    for (int i = 0; i < m; ++i) y[i] = d[i] * x[i];
    for (int i = 1; i < m; ++i) {
        y[i] += l[i] * x[parent[i]];
        y[parent[i]] += u[i] * x[i];
    }
    return HB_SUCCESS;
}

hb_status_t hb_hines_solve_batch(hb_context_t *ctx, int m, const int *parent, const double *u,
                                 const double *l, double *d, double *rhs, hb_layout_t layout,
                                 int block_size, int batch_count)
{
    static const char fn[] = "hb_hines_solve_batch";
    hb_clear_error();
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "%s: ctx is NULL", fn);
    hb_status_t status = hb_check_batch(fn, m, parent, batch_count, layout, block_size);
    if (status != HB_SUCCESS) return status;
    if (!u || !l || !d || !rhs)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: u, l, d and rhs must not be NULL", fn);
    const hb_hines_host_t host = {ctx, m, batch_count, layout,
                                  hb_layout_block(layout, batch_count, block_size),
                                  parent, u, l, d, rhs};
    /* Host arrays: a backend with its own memory copies in, solves with the library's choice
     * of kernel and copies back. */
    return ctx->ops->hines->solve(&host, NULL, HB_HINES_ALGO_AUTO);
}
