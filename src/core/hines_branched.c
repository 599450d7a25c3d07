#include <string.h>

#include "core/hines_branched.h"
#include "core/status.h"
#include "cpu/hines_cpu.h"

hb_status_t hb_hines_branched_build(int m, const int *parent, int lanes, int split_rows,
                                    hb_hines_branched_t *br)
{
    memset(br, 0, sizeof *br);
    if (lanes < 1 || lanes > 32)
        return hb_fail(HB_ERR_INVALID_VALUE, "BRANCHED: %d lanes; expected 1 to 32", lanes);
    hb_status_t status = hb_multi_plan_cell(m, parent, split_rows, &br->plan);
    if (status != HB_SUCCESS) return status;
    br->m = m;
    br->lanes = 1;
    br->dims = hb_multi_group_dims(&br->plan, 0);
    return hb_hines_branched_set_lanes(br, lanes);
}

hb_status_t hb_hines_branched_set_lanes(hb_hines_branched_t *br, int lanes)
{
    if (br->lanes != 1 || lanes < 1 || lanes > 32)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "BRANCHED: %d lanes on a plan of %d; expected 1 to 32 on a plan of 1", lanes,
                       br->lanes);
    hb_multi_plan_t *p = &br->plan;
    const size_t L = (size_t)lanes;
    br->lanes = lanes;
    for (int j = 0; j < br->dims.entries; ++j) p->row_base[j] *= L;
    for (int b = 0; b < p->n_branches; ++b)
        if (p->parent_slot[b] != HB_MULTI_NO_PARENT) p->parent_slot[b] *= L;
    for (int c = 0; c < p->child_ptr[p->n_branches]; ++c) p->child_top[c] *= L;
    for (int i = 0; i < br->m; ++i) p->node_slot[i] *= L;
    return HB_SUCCESS;
}

void hb_hines_branched_free(hb_hines_branched_t *br)
{
    hb_multi_plan_free(&br->plan);
    memset(br, 0, sizeof *br);
}

void hb_hines_branched_solve(const hb_hines_branched_t *br, int count, int block, int workers,
                             const double *u, const double *l, const double *d, double *rhs,
                             double *stage)
{
    const int m = br->m, lanes = br->lanes;
    const size_t n = (size_t)m * (size_t)lanes, B = (size_t)block;
    const size_t *slot_of = br->plan.node_slot;
    for (int s0 = 0; s0 < count; s0 += lanes) {
        const int team = count - s0 < lanes ? count - s0 : lanes;
        for (int t = 0; t < lanes * workers; ++t) {
            int k, i0;
            hb_hines_branched_thread(t, lanes, workers, block, &k, &i0);
            const size_t base = k < team ? hb_block_base(m, block, s0 + k) : 0;
            for (int i = i0; i < m; i += workers) {
                const size_t slot = slot_of[i] + (size_t)k;
                if (k < team) {
                    const size_t g = base + (size_t)i * B;
                    stage[slot] = u[g];
                    stage[n + slot] = l[g];
                    stage[2 * n + slot] = d[g];
                    stage[3 * n + slot] = rhs[g];
                } else {
                    stage[slot] = stage[n + slot] = stage[3 * n + slot] = 0.0;
                    stage[2 * n + slot] = 1.0;
                }
            }
        }
        hb_multi_stage_tables(&br->plan, 0, &br->dims, stage + 4 * n, 0, 1);
        for (int k = 0; k < lanes; ++k) {
            const hb_multi_view_t v = hb_hines_branched_view(&br->dims, br->plan.split_rows, stage,
                                                             m, lanes, k);
            hb_multi_cpu_solve_view(&v);
        }
        for (int t = 0; t < lanes * workers; ++t) {
            int k, i0;
            hb_hines_branched_thread(t, lanes, workers, block, &k, &i0);
            if (k >= team) continue;
            const size_t base = hb_block_base(m, block, s0 + k);
            for (int i = i0; i < m; i += workers)
                rhs[base + (size_t)i * B] = stage[3 * n + slot_of[i] + (size_t)k];
        }
    }
}
