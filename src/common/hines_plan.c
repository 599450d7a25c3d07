#include <stdlib.h>

#include "common/hines_plan.h"
#include "common/status.h"

hb_status_t hb_hines_plan_build(int m, const int *parent, hb_hines_plan_t *plan)
{
    plan->m = m;
    plan->slots = 0;
    plan->code = calloc((size_t)m, sizeof *plan->code);
    int *last = malloc((size_t)m * sizeof *last);      /* last non-carried child, or -1 */
    int *slot = malloc((size_t)m * sizeof *slot);      /* slot of row p, or NO_SLOT */
    int *slot_end = malloc(((size_t)HB_PLAN_MAX_SLOTS) * sizeof *slot_end);
    if (!plan->code || !last || !slot || !slot_end) {
        free(last);
        free(slot);
        free(slot_end);
        hb_hines_plan_free(plan);
        return hb_fail(HB_ERR_ALLOC, "Hines plan: out of memory for %d rows", m);
    }
    for (int i = 0; i < m; ++i) last[i] = -1;
    for (int i = 1; i < m; ++i)
        if (parent[i] != i - 1 && i > last[parent[i]]) last[parent[i]] = i;
    /* Live ranges [p, last[p]] in order of p: reuse a slot whose range ended. */
    hb_status_t status = HB_SUCCESS;
    for (int p = 0; p < m && status == HB_SUCCESS; ++p) {
        slot[p] = HB_PLAN_NO_SLOT;
        if (last[p] < 0) continue;
        int k = 0;
        while (k < plan->slots && slot_end[k] >= p) ++k;
        if (k == plan->slots) {
            if (plan->slots == HB_PLAN_MAX_SLOTS) {
                status = hb_fail(HB_ERR_NOT_SUPPORTED,
                                 "Hines plan: more than %d forks open at once (row %d)",
                                 HB_PLAN_MAX_SLOTS, p);
                break;
            }
            plan->slots++;
        }
        slot_end[k] = last[p];
        slot[p] = k;
    }
    for (int i = 0; i < m && status == HB_SUCCESS; ++i) {
        int code = slot[i] << 2;
        if (i == 0) code |= HB_PLAN_NO_SLOT << 12;
        else if (parent[i] == i - 1) code |= 1 | HB_PLAN_NO_SLOT << 12;
        else code |= (i == last[parent[i]]) << 1 | slot[parent[i]] << 12;
        plan->code[i] = code;
    }
    free(last);
    free(slot);
    free(slot_end);
    if (status != HB_SUCCESS) hb_hines_plan_free(plan);
    return status;
}

void hb_hines_plan_free(hb_hines_plan_t *plan)
{
    free(plan->code);
    plan->code = NULL;
    plan->slots = 0;
}

void hb_hines_plan_solve(const hb_hines_plan_t *plan, int tail, size_t stride, const double *u,
                         const double *l, const double *d, double *rhs, double *tail_ab,
                         double *scratch_ab, double *slots)
{
    const int m = plan->m;
    double carry_d = 0.0, carry_r = 0.0;
    for (int i = m - 1; i >= 1; --i) {
        const int code = plan->code[i], own = hb_plan_own_slot(code);
        const size_t r = (size_t)i * stride;
        const double acc_d = own != HB_PLAN_NO_SLOT ? slots[2 * own] : 0.0;
        const double acc_r = own != HB_PLAN_NO_SLOT ? slots[2 * own + 1] : 0.0;
        double a, b, cd, cr;
        hb_plan_backward_row(u[r], l[r], d[r], rhs[r], acc_d, acc_r, carry_d, carry_r, &a, &b, &cd,
                             &cr);
        double *ab = i < tail ? &tail_ab[2 * i] : &scratch_ab[2 * (i - tail)];
        ab[0] = a;
        ab[1] = b;
        if (hb_plan_carried(code)) {
            carry_d = cd;
            carry_r = cr;
        } else {
            double *acc = &slots[2 * hb_plan_parent_slot(code)];
            acc[0] = hb_plan_first(code) ? cd : acc[0] + cd;
            acc[1] = hb_plan_first(code) ? cr : acc[1] + cr;
            carry_d = carry_r = 0.0;
        }
    }
    const int own0 = hb_plan_own_slot(plan->code[0]);
    const double acc_d = own0 != HB_PLAN_NO_SLOT ? slots[2 * own0] : 0.0;
    const double acc_r = own0 != HB_PLAN_NO_SLOT ? slots[2 * own0 + 1] : 0.0;
    double x = hb_plan_root(d[0], rhs[0], acc_d, acc_r, carry_d, carry_r);
    rhs[0] = x;
    if (own0 != HB_PLAN_NO_SLOT) slots[2 * own0] = x;
    for (int i = 1; i < m; ++i) {
        const int code = plan->code[i], own = hb_plan_own_slot(code);
        const double *ab = i < tail ? &tail_ab[2 * i] : &scratch_ab[2 * (i - tail)];
        const double xp = hb_plan_carried(code) ? x : slots[2 * hb_plan_parent_slot(code)];
        x = ab[0] - ab[1] * xp;
        if (own != HB_PLAN_NO_SLOT) slots[2 * own] = x;
        rhs[(size_t)i * stride] = x;
    }
}
