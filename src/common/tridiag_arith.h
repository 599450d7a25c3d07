/*
 * Internal: the PARTITION arithmetic of common/tridiag_plan.h, written once for
 * both precisions. common/tridiag_plan.h includes this file twice (the CUDA backend a third
 * time, for pairs of floats), with real_t (the type of
 * the arithmetic, the data's own) double and float and HB_TD_FN naming the
 * functions: in C the float ones end in _f (hb_td_chunk_forward_f); in C++ (the
 * CUDA kernels) both are overloads of one name. No include guard: on purpose.
 */
#if !defined(real_t) || !defined(HB_TD_FN) || !defined(HB_TD_INTERFACE_LOOP)
#error "tridiag_arith.h is included by common/tridiag_plan.h: real_t, HB_TD_FN, HB_TD_INTERFACE_LOOP"
#endif

/* Applies the identity and boundary rules to row i of a system of n rows. */
HB_HOSTDEV void HB_TD_FN(hb_td_fix_row)(int i, int n, real_t *dl, real_t *d, real_t *du,
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
HB_HOSTDEV void HB_TD_FN(hb_td_chunk_forward)(int k, real_t *a, const real_t *b, real_t *c,
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

HB_HOSTDEV void HB_TD_FN(hb_td_chunk_ends)(int L, const real_t *a, const real_t *b,
                                             const real_t *c, const real_t *r, real_t *red)
{
    /* x[1] = dd - aa x0 - cc x[L-1], by substitution from row L-2 down. */
    real_t aa = a[L - 2], cc = c[L - 2], dd = r[L - 2];
    HB_UNROLL
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
HB_HOSTDEV void HB_TD_FN(hb_td_chunk_finish)(int L, const real_t *a, const real_t *c,
                                               real_t *r, real_t x0, real_t xlast)
{
    r[L - 1] = xlast;
    HB_UNROLL
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
 * `columns` right-hand columns from index 3: 1 (d), or 3 in clusters (d and the
 * two spike columns, below). out may be own (each input is read before the
 * output that overwrites it).
 */
HB_HOSTDEV void HB_TD_FN(hb_td_pcr_columns)(int columns, const real_t *own, const real_t *lo,
                                              const real_t *hi, real_t *out)
{
    const real_t k1 = own[0], k2 = own[2];
    const real_t inv = (real_t)1 / ((real_t)1 - lo[2] * k1 - hi[0] * k2);
    HB_UNROLL
    for (int q = 3; q < 3 + columns; ++q) out[q] = (own[q] - lo[q] * k1 - hi[q] * k2) * inv;
    out[0] = -lo[0] * k1 * inv;
    out[2] = -hi[2] * k2 * inv;
    out[1] = (real_t)1;
}

HB_HOSTDEV void HB_TD_FN(hb_td_pcr_row)(const real_t *own, const real_t *lo,
                                          const real_t *hi, real_t *out)
{
    HB_TD_FN(hb_td_pcr_columns)(1, own, lo, hi, out);
}

/*
 * Clusters (SPIKE-like): block r of K holds chunks [r PL, (r + 1) PL) of a
 * system and solves its part of the reduced system alone. Its rows carry two
 * more columns, for the two unknowns outside the block that they touch: x_L,
 * the previous block's last chunk end, and x_R, the next block's first chunk
 * start. A row is {a, 1, c, d, vl, vr}:
 *   a x[i - s] + x[i] + c x[i + s] + vl x_L + vr x_R = d,
 * and after the block's PCR (hb_td_pcr_columns with 3 columns) a chunk end
 * reads x = d - vl x_L - vr x_R (hb_td_spike_value). The blocks then need only
 * each other's two interface rows, for their first chunk start s_r and last
 * chunk end e_r, {R, P, Q, Z, U, W}:
 *   s_r + P e_{r-1} + Q s_{r+1} = R,   e_r + U e_{r-1} + W s_{r+1} = Z.
 */
/* The cyclic-reduction step of the end row of chunk jl (of the block's PL): the
 * end row takes in its own chunk's start row and the next chunk's (`next`, read
 * only where jl < PL - 1); the previous chunk's end (jl = 0) and the next chunk's
 * start (jl = PL - 1) are outside the block, x_L and x_R, and go to the spike
 * columns. start, end, next: {a, 1, c, d}; out: {a, 1, c, d, vl, vr}. */
HB_HOSTDEV void HB_TD_FN(hb_td_cluster_end_row)(int jl, int PL, const real_t *start,
                                                  const real_t *end, const real_t *next,
                                                  real_t *out)
{
    real_t lo[6] = {start[0], (real_t)1, start[2], start[3], (real_t)0, (real_t)0};
    real_t own[6] = {end[0], (real_t)1, end[2], end[3], (real_t)0, (real_t)0};
    real_t hi[6] = {(real_t)0, (real_t)1, (real_t)0, (real_t)0, (real_t)0, (real_t)0};
    if (jl == 0) {
        lo[4] = lo[0];
        lo[0] = (real_t)0;
    }
    if (jl == PL - 1) {
        own[5] = own[2];
        own[2] = (real_t)0;
    } else {
        hi[0] = next[0];
        hi[2] = next[2];
        hi[3] = next[3];
    }
    HB_TD_FN(hb_td_pcr_columns)(3, own, lo, hi, out);
}

HB_HOSTDEV real_t HB_TD_FN(hb_td_spike_value)(const real_t *row, real_t xl, real_t xr)
{
    return row[3] - row[4] * xl - row[5] * xr;
}

/* R, P, Q of the interface row of the block's first chunk start, from its start
 * row {a, 1, c, d} (a on x_L) and its chunk end's solved row; Z, U, W are the
 * last chunk end's solved row (d, vl, vr). */
HB_HOSTDEV void HB_TD_FN(hb_td_interface_start)(const real_t *start, const real_t *end,
                                                  real_t *out)
{
    out[0] = start[3] - start[2] * end[3];
    out[1] = start[0] - start[2] * end[4];
    out[2] = -start[2] * end[5];
}

/* The forward sweep over the K blocks' interface rows (value v of block r's row at
 * rows[(6 r + v) stride]), in place: row r becomes {g1, g2, h1, h2} with
 * s_r = g1 - h1 s_{r+1} and e_r = g2 - h2 s_{r+1}. */
HB_HOSTDEV void HB_TD_FN(hb_td_interface_forward)(int K, real_t *rows, int stride)
{
    real_t g2 = (real_t)0, h2 = (real_t)0; /* e_{r-1} = g2 - h2 s_r */
    HB_TD_INTERFACE_LOOP /* unroll 1 or none, by precision: common/tridiag_plan.h */
    for (int r = 0; r < K; ++r) {
        real_t *row = rows + 6 * r * stride;
        const real_t R = row[0], P = row[stride], Q = row[2 * stride];
        const real_t Z = row[3 * stride], U = row[4 * stride], W = row[5 * stride];
        const real_t inv = (real_t)1 / ((real_t)1 - P * h2);
        const real_t g1 = (R - P * g2) * inv, h1 = Q * inv, uh = U * h2;
        g2 = Z - U * g2 + uh * g1;
        h2 = W + uh * h1;
        row[0] = g1;
        row[stride] = g2;
        row[2 * stride] = h1;
        row[3 * stride] = h2;
    }
}

/* Then x_L (0 for the first block) and x_R (0 for the last) of block `rank`. */
HB_HOSTDEV void HB_TD_FN(hb_td_interface_boundary)(int K, int rank, const real_t *rows,
                                                     int stride, real_t *xl, real_t *xr)
{
    real_t s = (real_t)0; /* s_{r+1} */
    HB_TD_INTERFACE_LOOP
    for (int r = K - 1; r > rank; --r) s = rows[6 * r * stride] - rows[(6 * r + 2) * stride] * s;
    *xr = s;
    const real_t own = rows[6 * rank * stride] - rows[(6 * rank + 2) * stride] * s;
    *xl = rank > 0 ? rows[(6 * rank - 5) * stride] - rows[(6 * rank - 3) * stride] * own
                   : (real_t)0;
}

/* A chunk's first unknown from its (normalised) reduced row `start`, once the
 * previous chunk's last unknown and its own last are known. */
HB_HOSTDEV real_t HB_TD_FN(hb_td_reduced_start)(const real_t *start, real_t prev_last,
                                                   real_t last)
{
    return start[3] - start[0] * prev_last - start[2] * last;
}
