/*
 * Internal: the PARTITION arithmetic of src/cpu/tridiag_cpu.h, written once for
 * both precisions. tridiag_cpu.h includes this file twice, with real_t (the type of
 * the arithmetic, the data's own) double and float and HB_TD_FN naming the
 * functions: in C the float ones end in _f (hb_td_chunk_forward_f); in C++ (the
 * CUDA kernels) both are overloads of one name. No include guard: on purpose.
 */
#if !defined(real_t) || !defined(HB_TD_FN)
#error "tridiag_arith.h is included by tridiag_cpu.h, with real_t and HB_TD_FN defined"
#endif

/* Applies the identity and boundary rules to row i of a system of n rows. */
HB_TD_INLINE void HB_TD_FN(hb_td_fix_row)(int i, int n, real_t *dl, real_t *d, real_t *du,
                                          real_t *b)
{
    if (i >= n) {
        *dl = (real_t)0;
        *d = (real_t)1;
        *du = (real_t)0;
        *b = (real_t)0;
        return;
    }
    if (i == 0) *dl = (real_t)0;
    if (i == n - 1) *du = (real_t)0;
}

/*
 * One chunk of L >= 3 rows: a = dl, b = d, c = du, r = rhs on entry. Rows
 * k >= 1 are eliminated, in order (hb_td_chunk_forward(k) once row k is
 * loaded), into  a[k] x0 + x[k] + c[k] x[k+1] = r[k]  (x0 is the chunk's first
 * unknown); then hb_td_chunk_ends gives the chunk's two rows of the reduced
 * system over the chunk ends (x0 and x[L-1] of every chunk):
 *   red[0..3]: red0 x_last(prev chunk) + red1 x0 + red2 x[L-1] = red3
 *   red[4..7]: red4 x0 + red5 x[L-1] + red6 x_first(next chunk) = red7
 * with red1 = red5 = 1 (normalised for hb_td_pcr_row).
 */
HB_TD_INLINE void HB_TD_FN(hb_td_chunk_forward)(int k, real_t *a, const real_t *b, real_t *c,
                                                real_t *r)
{
    if (k == 1) {
        const real_t inv = (real_t)1 / b[1];
        a[1] *= inv;
        c[1] *= inv;
        r[1] *= inv;
        return;
    }
    const real_t inv = (real_t)1 / (b[k] - a[k] * c[k - 1]);
    r[k] = (r[k] - a[k] * r[k - 1]) * inv;
    a[k] = -a[k] * a[k - 1] * inv;
    c[k] *= inv;
}

HB_TD_INLINE void HB_TD_FN(hb_td_chunk_ends)(int L, const real_t *a, const real_t *b,
                                             const real_t *c, const real_t *r, real_t *red)
{
    /* x[1] = dd - aa x0 - cc x[L-1], by substitution from row L-2 down. */
    real_t aa = a[L - 2], cc = c[L - 2], dd = r[L - 2];
    HB_TD_UNROLL
    for (int k = L - 3; k >= 1; --k) {
        dd = r[k] - c[k] * dd;
        aa = a[k] - c[k] * aa;
        cc = -c[k] * cc;
    }
    const real_t inv = (real_t)1 / (b[0] - c[0] * aa); /* rows normalised: b = 1 */
    red[0] = a[0] * inv;
    red[1] = (real_t)1;
    red[2] = -c[0] * cc * inv;
    red[3] = (r[0] - c[0] * dd) * inv;
    red[4] = a[L - 1];
    red[5] = (real_t)1;
    red[6] = c[L - 1];
    red[7] = r[L - 1];
}

/* With the chunk's end values known, r[] becomes the chunk's solution. */
HB_TD_INLINE void HB_TD_FN(hb_td_chunk_finish)(int L, const real_t *a, const real_t *c,
                                               real_t *r, real_t x0, real_t xlast)
{
    r[L - 1] = xlast;
    HB_TD_UNROLL
    for (int k = L - 2; k >= 1; --k) r[k] = r[k] - a[k] * x0 - c[k] * r[k + 1];
    r[0] = x0;
}

/*
 * One parallel-cyclic-reduction step of a reduced row (a, 1, c, d), rows kept
 * normalised (b = 1), with its neighbours `lo` and `hi` at the step's stride
 * ({0, 1, 0, 0} past the ends): one reciprocal per row and step. After
 * ceil(log2(N)) steps of strides 1, 2, 4, ... every row reads x = d. PARTITION
 * runs the first step on the odd rows only (one step of cyclic reduction: they
 * then form a system of their own), PCR on those, then hb_td_reduced_start.
 * out may be own (each input is read before the output that overwrites it).
 */
HB_TD_INLINE void HB_TD_FN(hb_td_pcr_row)(const real_t *own, const real_t *lo,
                                          const real_t *hi, real_t *out)
{
    const real_t k1 = own[0], k2 = own[2];
    const real_t inv = (real_t)1 / ((real_t)1 - lo[2] * k1 - hi[0] * k2);
    out[3] = (own[3] - lo[3] * k1 - hi[3] * k2) * inv;
    out[0] = -lo[0] * k1 * inv;
    out[2] = -hi[2] * k2 * inv;
    out[1] = (real_t)1;
}

/* A chunk's first unknown from its (normalised) reduced row `start`, once the
 * previous chunk's last unknown and its own last are known. */
HB_TD_INLINE real_t HB_TD_FN(hb_td_reduced_start)(const real_t *start, real_t prev_last,
                                                   real_t last)
{
    return start[3] - start[0] * prev_last - start[2] * last;
}
