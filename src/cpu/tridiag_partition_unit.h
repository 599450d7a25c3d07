/*
 * Internal to tridiag_cpu.c, which includes it once per precision (real_t and
 * HB_TD_FN as for tridiag_arith.h): the CUDA PARTITION kernel for system s in
 * the data's precision, its P chunk threads run in turn and its PCR steps (on
 * the chunk ends) double-buffered as the barriers make them on the GPU.
 * ws holds 4 P L + 16 P values. No include guard: on purpose.
 */
#if !defined(real_t) || !defined(HB_TD_FN)
#error "tridiag_partition_unit.h is included by tridiag_cpu.c, with real_t and HB_TD_FN"
#endif

static void HB_TD_FN(partition_unit)(const job_t *job, int s, real_t *ws)
{
    const hb_gtsv_problem_t *p = job->p;
    const int L = job->rows, P = job->chunks, N = 2 * P;
    const int n = rows_of(p, s), touched = rows_touched(p, s);
    real_t *a = ws, *b = a + (size_t)P * L, *c = b + (size_t)P * L, *r = c + (size_t)P * L;
    real_t *red = r + (size_t)P * L, *next = red + (size_t)N * 4;
    static const real_t identity[4] = {0, 1, 0, 0};
    for (int i = 0; i < P * L; ++i) { /* exact: the values are the data's, 0 or 1 */
        double row[4];
        load_row(job, s, 1, i, &n, &touched, &row[0], &row[1], &row[2], &row[3]);
        a[i] = (real_t)row[0];
        b[i] = (real_t)row[1];
        c[i] = (real_t)row[2];
        r[i] = (real_t)row[3];
    }
    for (int j = 0; j < P; ++j) {
        const size_t o = (size_t)j * L;
        for (int k = 1; k < L; ++k) HB_TD_FN(hb_td_chunk_forward)(k, a + o, b + o, c + o, r + o);
        HB_TD_FN(hb_td_chunk_ends)(L, a + o, b + o, c + o, r + o, red + (size_t)j * 8);
    }
    /* Chunk j's reduced rows are red[8 j ..] (start) and red[8 j + 4 ..] (end). One
     * cyclic-reduction step on the ends, PCR on them (end of chunk j: ends[4 j ..]),
     * then the starts by substitution. */
    real_t *ends = next, *ends_next = next + (size_t)P * 4;
    for (int j = 0; j < P; ++j)
        HB_TD_FN(hb_td_pcr_row)(red + (size_t)j * 8 + 4, red + (size_t)j * 8,
                                j + 1 < P ? red + (size_t)(j + 1) * 8 : identity,
                                ends + (size_t)j * 4);
    for (int stride = 1; stride < P; stride *= 2) {
        for (int j = 0; j < P; ++j) {
            const real_t *lo = j - stride >= 0 ? ends + (size_t)(j - stride) * 4 : identity;
            const real_t *hi = j + stride < P ? ends + (size_t)(j + stride) * 4 : identity;
            HB_TD_FN(hb_td_pcr_row)(ends + (size_t)j * 4, lo, hi, ends_next + (size_t)j * 4);
        }
        real_t *t = ends;
        ends = ends_next;
        ends_next = t;
    }
    for (int j = 0; j < P; ++j) {
        const size_t o = (size_t)j * L;
        const real_t last = ends[(size_t)j * 4 + 3];
        const real_t first = HB_TD_FN(hb_td_reduced_start)(
            red + (size_t)j * 8, j > 0 ? ends[(size_t)(j - 1) * 4 + 3] : (real_t)0, last);
        HB_TD_FN(hb_td_chunk_finish)(L, a + o, c + o, r + o, first, last);
    }
    const size_t sys = (size_t)s * job->sys_stride;
    for (int i = 0; i < p->m; ++i) {
        const double x = (double)r[i]; /* exact, and back to the data's type exactly */
        scatter(p->x, p->precision, sys + (size_t)i * job->row_stride, 0, 1, i, &touched, &x);
    }
}
