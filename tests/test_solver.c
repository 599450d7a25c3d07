/*
 * Hines solver, layouts, batches and contexts.
 *
 * (1) hb_hines_solve against dense LU with partial pivoting on many tree
 *     shapes and sizes; (2) every layout x backend x block size x batch count
 *     bitwise against per-system solves; (3) conversions, layout index
 *     bijection, padding; (4) errors; (5) OMP thread counts.
 * Runs once with a fixed seed and once with HB_TEST_SEED or the time.
 */
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "hinesbatch.h"

#if defined(__SANITIZE_ADDRESS__)
/* The out-of-memory test needs calloc to fail with NULL, not abort. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

/* ------------------------------------------------------------------------ */
/* Random numbers (splitmix64): reproducible from the printed seed.          */
/* ------------------------------------------------------------------------ */
static uint64_t rng_state;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15u);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9u;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBu;
    return z ^ (z >> 31);
}

static double rng_uniform(double lo, double hi)
{
    return lo + (hi - lo) * (double)(rng_next() >> 11) * 0x1.0p-53;
}

static int rng_int(int n) { return (int)(rng_next() % (uint64_t)n); }

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "test_solver: out of memory\n");
        exit(2);
    }
    return p;
}

/* ------------------------------------------------------------------------ */
/* Trees (Hines order) and matrices.                                         */
/* ------------------------------------------------------------------------ */
typedef enum {
    TREE_CHAIN,       /* tridiagonal */
    TREE_STAR,        /* every node a child of the root */
    TREE_BINARY,      /* complete binary tree */
    TREE_RANDOM,      /* random recursive tree: parent[i] uniform in [0, i) */
    TREE_CATERPILLAR, /* spine 0, 2, 4, ... with a leaf on each spine node */
    TREE_DEEP,        /* parent among the 3 previous nodes: long random branches */
    TREE_COUNT
} tree_shape_t;

static const char *const tree_names[TREE_COUNT] = {"chain",  "star",        "binary",
                                                   "random", "caterpillar", "deep"};

static void make_tree(tree_shape_t shape, int m, int *parent)
{
    parent[0] = -1;
    for (int i = 1; i < m; ++i) {
        switch (shape) {
        case TREE_CHAIN: parent[i] = i - 1; break;
        case TREE_STAR: parent[i] = 0; break;
        case TREE_BINARY: parent[i] = (i - 1) / 2; break;
        case TREE_RANDOM: parent[i] = rng_int(i); break;
        case TREE_CATERPILLAR: parent[i] = i % 2 ? i - 1 : i - 2; break;
        default: parent[i] = i - 1 - rng_int(i < 3 ? i : 3); break;
        }
    }
}

typedef enum { MATRIX_DOMINANT, MATRIX_NONDOMINANT, MATRIX_KIND_COUNT } matrix_kind_t;
static const char *const matrix_names[MATRIX_KIND_COUNT] = {"dominant", "non-dominant"};

/*
 * Dominant: u, l in [-1, 0), d = 1 + |off-diagonals| of row and column + U[0,1).
 * Non-dominant: |u|, |l| up to 2 against d in [0.5, 1.5), but u l < 0, so every
 * elimination step grows the pivot: well conditioned without dominance.
 * u[0] and l[0] are NaN: the algorithm must never read them.
 */
static void make_system(matrix_kind_t kind, int m, const int *parent, double *u, double *l,
                        double *d, double *rhs)
{
    u[0] = l[0] = NAN;
    for (int i = 0; i < m; ++i) {
        d[i] = kind == MATRIX_DOMINANT ? 1.0 + rng_uniform(0, 1) : rng_uniform(0.5, 1.5);
        rhs[i] = rng_uniform(-1, 1);
    }
    for (int i = 1; i < m; ++i) {
        if (kind == MATRIX_DOMINANT) {
            u[i] = rng_uniform(-1, 0);
            l[i] = rng_uniform(-1, 0);
            d[i] += fabs(u[i]) + fabs(l[i]);
            d[parent[i]] += fabs(u[i]) + fabs(l[i]);
        } else {
            u[i] = rng_uniform(0.5, 2) * (rng_int(2) ? 1 : -1);
            l[i] = -copysign(rng_uniform(0.5, 2), u[i]);
        }
    }
}

static void dense_from_hines(int m, const int *parent, const double *u, const double *l,
                             const double *d, double *a)
{
    memset(a, 0, (size_t)m * (size_t)m * sizeof *a);
    for (int i = 0; i < m; ++i) a[(size_t)i * m + i] = d[i];
    for (int i = 1; i < m; ++i) {
        a[(size_t)parent[i] * m + i] = u[i];
        a[(size_t)i * m + parent[i]] = l[i];
    }
}

/* Gaussian elimination with partial pivoting; a is overwritten, b becomes x. */
static int dense_solve(int m, double *a, double *b)
{
    for (int k = 0; k < m; ++k) {
        int p = k;
        for (int i = k + 1; i < m; ++i)
            if (fabs(a[(size_t)i * m + k]) > fabs(a[(size_t)p * m + k])) p = i;
        if (a[(size_t)p * m + k] == 0.0) return 0;
        if (p != k) {
            for (int j = 0; j < m; ++j) {
                const double t = a[(size_t)k * m + j];
                a[(size_t)k * m + j] = a[(size_t)p * m + j];
                a[(size_t)p * m + j] = t;
            }
            const double t = b[k];
            b[k] = b[p];
            b[p] = t;
        }
        for (int i = k + 1; i < m; ++i) {
            const double f = a[(size_t)i * m + k] / a[(size_t)k * m + k];
            if (f == 0.0) continue;
            for (int j = k; j < m; ++j) a[(size_t)i * m + j] -= f * a[(size_t)k * m + j];
            b[i] -= f * b[k];
        }
    }
    for (int i = m - 1; i >= 0; --i) {
        double s = b[i];
        for (int j = i + 1; j < m; ++j) s -= a[(size_t)i * m + j] * b[j];
        b[i] = s / a[(size_t)i * m + i];
    }
    return 1;
}

static double max_abs(int n, const double *x)
{
    double r = 0;
    for (int i = 0; i < n; ++i) r = fmax(r, fabs(x[i]));
    return r;
}

static double max_abs_diff(int n, const double *x, const double *y)
{
    double r = 0;
    for (int i = 0; i < n; ++i) r = fmax(r, fabs(x[i] - y[i]));
    return r;
}

static int same_bits(size_t n, const double *x, const double *y)
{
    return memcmp(x, y, n * sizeof *x) == 0;
}

/* ------------------------------------------------------------------------ */
/* (1) Accuracy of one system.                                               */
/* ------------------------------------------------------------------------ */
enum { LU_MAX_ROWS = 200 };

static void check_one_system(tree_shape_t shape, matrix_kind_t kind, int m)
{
    int *parent = xcalloc((size_t)m, sizeof *parent);
    double *u = xcalloc((size_t)m, sizeof *u), *l = xcalloc((size_t)m, sizeof *l);
    double *d0 = xcalloc((size_t)m, sizeof *d0), *b = xcalloc((size_t)m, sizeof *b);
    double *d = xcalloc((size_t)m, sizeof *d), *x = xcalloc((size_t)m, sizeof *x);
    double *y = xcalloc((size_t)m, sizeof *y);
    make_tree(shape, m, parent);
    make_system(kind, m, parent, u, l, d0, b);
    memcpy(d, d0, (size_t)m * sizeof *d);
    memcpy(x, b, (size_t)m * sizeof *x);

    CHECK_OK(hb_hines_solve(m, parent, u, l, d, x));
    CHECK_OK(hb_hines_matvec(m, parent, u, l, d0, x, y));
    const double residual = max_abs_diff(m, y, b) / max_abs(m, b);
    CHECKF(residual < 1e-12, "%s %s m=%d: ||Ax-b||/||b|| = %.3g", tree_names[shape],
           matrix_names[kind], m, residual);

    if (m <= LU_MAX_ROWS) {
        double *a = xcalloc((size_t)m * (size_t)m, sizeof *a);
        double *x_lu = xcalloc((size_t)m, sizeof *x_lu);
        /* matvec against the dense product (its sums run in another order) */
        dense_from_hines(m, parent, u, l, d0, a);
        for (int i = 0; i < m; ++i) {
            double s = 0;
            for (int j = 0; j < m; ++j) s += a[(size_t)i * m + j] * x[j];
            x_lu[i] = s;
        }
        CHECKF(max_abs_diff(m, x_lu, y) <= 1e-13 * (max_abs(m, y) + 1), "%s %s m=%d: matvec",
               tree_names[shape], matrix_names[kind], m);

        memcpy(x_lu, b, (size_t)m * sizeof *x_lu);
        CHECK(dense_solve(m, a, x_lu));
        const double diff = max_abs_diff(m, x, x_lu) / max_abs(m, x_lu);
        CHECKF(diff < 1e-10, "%s %s m=%d: |x - x_LU| / |x_LU| = %.3g", tree_names[shape],
               matrix_names[kind], m, diff);
        free(a);
        free(x_lu);
    }
    free(parent);
    free(u);
    free(l);
    free(d0);
    free(b);
    free(d);
    free(x);
    free(y);
}

static void test_accuracy(void)
{
    static const int sizes[] = {1,  2,  3,  4,   5,   6,   7,   8,   9,   10,  11,   13,  16,
                                17, 31, 32, 33,  64,  99,  100, 127, 128, 200, 201,  257, 500,
                                511, 1000, 1024, 1999, 2000};
    for (int shape = 0; shape < TREE_COUNT; ++shape)
        for (int kind = 0; kind < MATRIX_KIND_COUNT; ++kind)
            for (size_t k = 0; k < sizeof sizes / sizeof *sizes; ++k)
                for (int rep = 0; rep < 2; ++rep)
                    check_one_system((tree_shape_t)shape, (matrix_kind_t)kind, sizes[k]);
}

/* ------------------------------------------------------------------------ */
/* Layout formulas, written here independently of the library.               */
/* ------------------------------------------------------------------------ */
typedef struct {
    hb_layout_t layout;
    int bs; /* BLOCK only */
} layout_cfg_t;

static const layout_cfg_t layout_cfgs[] = {
    {HB_LAYOUT_FLAT, 0},   {HB_LAYOUT_INTERLEAVED, 0}, {HB_LAYOUT_BLOCK, 1},
    {HB_LAYOUT_BLOCK, 2},  {HB_LAYOUT_BLOCK, 3},       {HB_LAYOUT_BLOCK, 7},
    {HB_LAYOUT_BLOCK, 32}, {HB_LAYOUT_BLOCK, 64},
};
enum { N_LAYOUT_CFGS = sizeof layout_cfgs / sizeof *layout_cfgs };
static const int batch_counts[] = {1, 2, 5, 63, 64, 65, 200};
enum { N_BATCH_COUNTS = sizeof batch_counts / sizeof *batch_counts };

/* Systems the storage holds: BLOCK pads to a whole number of blocks. */
static int padded_count(layout_cfg_t c, int count)
{
    return c.layout == HB_LAYOUT_BLOCK ? (count + c.bs - 1) / c.bs * c.bs : count;
}

static size_t expect_size(layout_cfg_t c, int m, int count)
{
    return (size_t)padded_count(c, count) * (size_t)m;
}

/* The header's formulas; valid for padding systems of BLOCK too. */
static size_t expect_index(layout_cfg_t c, int m, int count, int s, int i)
{
    switch (c.layout) {
    case HB_LAYOUT_FLAT: return (size_t)s * m + i;
    case HB_LAYOUT_INTERLEAVED: return (size_t)i * count + s;
    default: return (size_t)(s / c.bs) * ((size_t)m * c.bs) + (size_t)i * c.bs + s % c.bs;
    }
}

static int expect_block_size(layout_cfg_t c, int count)
{
    return c.layout == HB_LAYOUT_FLAT ? 1 : c.layout == HB_LAYOUT_INTERLEAVED ? count : c.bs;
}

static const char *cfg_name(layout_cfg_t c)
{
    static char name[64];
    snprintf(name, sizeof name, "%s/bs=%d", hb_layout_name(c.layout), c.bs);
    return name;
}

/* Bit pattern left in padding of caller-owned arrays: the solver must not touch it. */
static double sentinel(void)
{
    const uint64_t bits = 0x7FF8DEADBEEF0001u;
    double v;
    memcpy(&v, &bits, sizeof v);
    return v;
}

/* `count` random systems in natural order (system s at s * m) and their per-system solutions. */
typedef struct {
    int m, count;
    int *parent;
    double *u, *l, *d, *rhs;   /* inputs */
    double *d_ref, *x_ref;     /* hb_hines_solve results */
} systems_t;

static systems_t systems_make(tree_shape_t shape, int m, int count)
{
    systems_t s = {m, count, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    const size_t n = (size_t)m * (size_t)count;
    s.parent = xcalloc((size_t)m, sizeof *s.parent);
    s.u = xcalloc(n, sizeof *s.u);
    s.l = xcalloc(n, sizeof *s.l);
    s.d = xcalloc(n, sizeof *s.d);
    s.rhs = xcalloc(n, sizeof *s.rhs);
    s.d_ref = xcalloc(n, sizeof *s.d_ref);
    s.x_ref = xcalloc(n, sizeof *s.x_ref);
    make_tree(shape, m, s.parent);
    for (int k = 0; k < count; ++k) {
        const size_t o = (size_t)k * m;
        make_system((matrix_kind_t)(k % MATRIX_KIND_COUNT), m, s.parent, s.u + o, s.l + o,
                    s.d + o, s.rhs + o);
    }
    memcpy(s.d_ref, s.d, n * sizeof *s.d);
    memcpy(s.x_ref, s.rhs, n * sizeof *s.rhs);
    for (int k = 0; k < count; ++k) {
        const size_t o = (size_t)k * m;
        CHECK_OK(hb_hines_solve(m, s.parent, s.u + o, s.l + o, s.d_ref + o, s.x_ref + o));
    }
    return s;
}

static void systems_free(systems_t *s)
{
    free(s->parent);
    free(s->u);
    free(s->l);
    free(s->d);
    free(s->rhs);
    free(s->d_ref);
    free(s->x_ref);
}

/* Lay the natural-order arrays `from` out in caller-owned storage (padding = sentinel). */
static double *lay_out(layout_cfg_t c, const systems_t *s, const double *from)
{
    const size_t size = expect_size(c, s->m, s->count);
    double *to = xcalloc(size, sizeof *to);
    for (size_t k = 0; k < size; ++k) to[k] = sentinel();
    for (int k = 0; k < s->count; ++k)
        for (int i = 0; i < s->m; ++i)
            to[expect_index(c, s->m, s->count, k, i)] = from[(size_t)k * s->m + i];
    return to;
}

/* Every element of `laid` (in layout c) equals natural-order `ref`; padding holds `pad`. */
static int matches_layout(layout_cfg_t c, const systems_t *s, const double *laid,
                          const double *ref, double pad)
{
    int ok = 1;
    for (int k = 0; k < padded_count(c, s->count); ++k)
        for (int i = 0; i < s->m; ++i) {
            const double want = k < s->count ? ref[(size_t)k * s->m + i] : pad;
            ok &= same_bits(1, &laid[expect_index(c, s->m, s->count, k, i)], &want);
        }
    return ok;
}

/* ------------------------------------------------------------------------ */
/* (2) Batched solves are bitwise equal to per-system solves.                */
/* ------------------------------------------------------------------------ */

/* hb_hines_solve_batch on caller-owned arrays laid out by the test. */
static void check_solve_batch(hb_context_t *ctx, layout_cfg_t c, const systems_t *s)
{
    double *u = lay_out(c, s, s->u), *l = lay_out(c, s, s->l);
    double *d = lay_out(c, s, s->d), *rhs = lay_out(c, s, s->rhs);
    CHECK_OK(hb_hines_solve_batch(ctx, s->m, s->parent, u, l, d, rhs, c.layout, c.bs, s->count));
    CHECKF(matches_layout(c, s, d, s->d_ref, sentinel()) &&
               matches_layout(c, s, rhs, s->x_ref, sentinel()),
           "%s %s m=%d count=%d: solve_batch differs from hb_hines_solve or touched padding",
           hb_backend_name(hb_context_backend(ctx)), cfg_name(c), s->m, s->count);
    CHECKF(matches_layout(c, s, u, s->u, sentinel()) && matches_layout(c, s, l, s->l, sentinel()),
           "%s m=%d count=%d: u or l modified", cfg_name(c), s->m, s->count);
    free(u);
    free(l);
    free(d);
    free(rhs);
}

/* The same through an hb_batch_t: set, solve, get; padding stays identity. */
static void check_batch_object(hb_context_t *ctx, layout_cfg_t c, const systems_t *s)
{
    hb_batch_t *batch = NULL;
    CHECK_OK(hb_batch_create(ctx, s->m, s->parent, s->count, c.layout, c.bs, &batch));
    if (!batch) return;
    for (int k = 0; k < s->count; ++k) {
        const size_t o = (size_t)k * s->m;
        CHECK_OK(hb_batch_set(batch, k, s->u + o, s->l + o, s->d + o, s->rhs + o));
    }
    CHECK_OK(hb_batch_solve(batch));
    double *d = xcalloc((size_t)s->m, sizeof *d), *x = xcalloc((size_t)s->m, sizeof *x);
    int ok = 1;
    for (int k = 0; k < s->count; ++k) {
        const size_t o = (size_t)k * s->m;
        CHECK_OK(hb_batch_get(batch, k, NULL, NULL, d, x));
        ok &= same_bits((size_t)s->m, d, s->d_ref + o) && same_bits((size_t)s->m, x, s->x_ref + o);
    }
    CHECKF(ok, "%s %s m=%d count=%d: hb_batch_solve differs from hb_hines_solve",
           hb_backend_name(hb_context_backend(ctx)), cfg_name(c), s->m, s->count);
    double *bu, *bl, *bd, *brhs;
    CHECK_OK(hb_batch_arrays(batch, &bu, &bl, &bd, &brhs));
    ok = 1;
    for (int k = s->count; k < padded_count(c, s->count); ++k)
        for (int i = 0; i < s->m; ++i) {
            const size_t j = expect_index(c, s->m, s->count, k, i);
            ok &= bu[j] == 0 && bl[j] == 0 && bd[j] == 1 && brhs[j] == 0;
        }
    CHECKF(ok, "%s count=%d: padding is not identity after solve", cfg_name(c), s->count);
    free(d);
    free(x);
    hb_batch_destroy(batch);
}

static void test_batched(hb_backend_t backend)
{
    static const int rows[] = {1, 4, 37};
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(backend, &ctx));
    if (!ctx) return;
    for (size_t r = 0; r < sizeof rows / sizeof *rows; ++r)
        for (int n = 0; n < N_BATCH_COUNTS; ++n) {
            systems_t s = systems_make((tree_shape_t)((r + (size_t)n) % TREE_COUNT), rows[r],
                                       batch_counts[n]);
            for (int c = 0; c < N_LAYOUT_CFGS; ++c) {
                check_solve_batch(ctx, layout_cfgs[c], &s);
                check_batch_object(ctx, layout_cfgs[c], &s);
            }
            systems_free(&s);
        }
    hb_context_destroy(ctx);
}

/* ------------------------------------------------------------------------ */
/* (3) Layout index, sizes, conversions.                                     */
/* ------------------------------------------------------------------------ */
static void test_layout_index(void)
{
    static const int rows[] = {1, 3, 17};
    for (size_t r = 0; r < sizeof rows / sizeof *rows; ++r)
        for (int n = 0; n < N_BATCH_COUNTS; ++n)
            for (int c = 0; c < N_LAYOUT_CFGS; ++c) {
                const layout_cfg_t cfg = layout_cfgs[c];
                const int m = rows[r], count = batch_counts[n];
                const size_t size = hb_layout_size(cfg.layout, m, count, cfg.bs);
                CHECKF(size == expect_size(cfg, m, count), "%s m=%d count=%d: size %zu",
                       cfg_name(cfg), m, count, size);
                if (size != expect_size(cfg, m, count)) continue;
                unsigned char *seen = xcalloc(size, 1);
                int ok = 1;
                for (int s = 0; s < count; ++s)
                    for (int i = 0; i < m; ++i) {
                        const size_t j = hb_layout_index(cfg.layout, m, count, cfg.bs, s, i);
                        ok &= j == expect_index(cfg, m, count, s, i) && j < size && !seen[j];
                        if (j < size) seen[j] = 1;
                    }
                CHECKF(ok, "%s m=%d count=%d: index is not the header's bijection",
                       cfg_name(cfg), m, count);
                /* the unused slots are exactly the padding systems */
                size_t unused = 0;
                for (size_t j = 0; j < size; ++j) unused += !seen[j];
                CHECK(unused == (size_t)(padded_count(cfg, count) - count) * (size_t)m);
                CHECK(hb_layout_index(cfg.layout, m, count, cfg.bs, count, 0) == SIZE_MAX);
                CHECK(hb_layout_index(cfg.layout, m, count, cfg.bs, 0, m) == SIZE_MAX);
                CHECK(hb_layout_index(cfg.layout, m, count, cfg.bs, -1, 0) == SIZE_MAX);
                free(seen);
            }
    CHECK(hb_layout_size(HB_LAYOUT_BLOCK, 3, 5, 0) == 0);
    CHECK(hb_layout_size(HB_LAYOUT_FLAT, 0, 5, 1) == 0);
    CHECK(hb_layout_size(HB_LAYOUT_FLAT, 3, 0, 1) == 0);
    CHECK(hb_layout_size((hb_layout_t)7, 3, 5, 1) == 0);
    /* int-overflow safety: count + bs - 1 exceeds INT_MAX */
    CHECK(hb_layout_size(HB_LAYOUT_BLOCK, 1, INT_MAX, 2) == (size_t)INT_MAX + 1);
    if (SIZE_MAX / (size_t)INT_MAX >= (size_t)INT_MAX)
        CHECK(hb_layout_size(HB_LAYOUT_INTERLEAVED, INT_MAX, INT_MAX, 0) ==
              (size_t)INT_MAX * (size_t)INT_MAX);
    CHECK(strcmp(hb_layout_name(HB_LAYOUT_FLAT), "flat") == 0);
    CHECK(strcmp(hb_layout_name(HB_LAYOUT_INTERLEAVED), "interleaved") == 0);
    CHECK(strcmp(hb_layout_name(HB_LAYOUT_BLOCK), "block") == 0);
    CHECK(strcmp(hb_layout_name((hb_layout_t)7), "unknown") == 0);
}

static hb_batch_t *batch_new(hb_context_t *ctx, const systems_t *s, layout_cfg_t c)
{
    hb_batch_t *b = NULL;
    CHECK_OK(hb_batch_create(ctx, s->m, s->parent, s->count, c.layout, c.bs, &b));
    return b;
}

static int batch_equals_systems(hb_batch_t *b, const systems_t *s)
{
    double *v[4];
    int ok = 1;
    for (int a = 0; a < 4; ++a) v[a] = xcalloc((size_t)s->m, sizeof(double));
    for (int k = 0; k < s->count; ++k) {
        const size_t o = (size_t)k * s->m;
        CHECK_OK(hb_batch_get(b, k, v[0], v[1], v[2], v[3]));
        ok &= same_bits((size_t)s->m, v[0], s->u + o) && same_bits((size_t)s->m, v[1], s->l + o) &&
              same_bits((size_t)s->m, v[2], s->d + o) && same_bits((size_t)s->m, v[3], s->rhs + o);
    }
    for (int a = 0; a < 4; ++a) free(v[a]);
    return ok;
}

/* All four arrays of two same-configuration batches are bitwise equal (padding too). */
static int batch_storage_equal(hb_batch_t *a, hb_batch_t *b, size_t size)
{
    double *x[4], *y[4];
    CHECK_OK(hb_batch_arrays(a, &x[0], &x[1], &x[2], &x[3]));
    CHECK_OK(hb_batch_arrays(b, &y[0], &y[1], &y[2], &y[3]));
    int ok = 1;
    for (int k = 0; k < 4; ++k) ok &= same_bits(size, x[k], y[k]);
    return ok;
}

static void test_conversions(hb_context_t *ctx)
{
    static const int counts[] = {1, 5, 65};
    for (size_t n = 0; n < sizeof counts / sizeof *counts; ++n) {
        systems_t s = systems_make(TREE_RANDOM, 6, counts[n]);
        for (int a = 0; a < N_LAYOUT_CFGS; ++a) {
            const layout_cfg_t ca = layout_cfgs[a];
            hb_batch_t *src = batch_new(ctx, &s, ca);
            if (!src) continue;
            CHECK(hb_batch_rows(src) == s.m && hb_batch_count(src) == s.count);
            CHECK(hb_batch_layout(src) == ca.layout);
            CHECK(hb_batch_block_size(src) == expect_block_size(ca, s.count));
            for (int k = 0; k < s.count; ++k) {
                const size_t o = (size_t)k * s.m;
                CHECK_OK(hb_batch_set(src, k, s.u + o, s.l + o, s.d + o, s.rhs + o));
            }
            CHECK(batch_equals_systems(src, &s));
            for (int b = 0; b < N_LAYOUT_CFGS; ++b) {
                const layout_cfg_t cb = layout_cfgs[b];
                hb_batch_t *dst = batch_new(ctx, &s, cb), *back = batch_new(ctx, &s, ca);
                CHECK_OK(hb_batch_convert(src, dst));
                CHECKF(batch_equals_systems(dst, &s), "convert %s -> %s count=%d",
                       cfg_name(ca), cfg_name(cb), s.count);
                CHECK_OK(hb_batch_convert(dst, back));
                CHECKF(batch_storage_equal(src, back, expect_size(ca, s.m, s.count)),
                       "round trip %s -> %s count=%d", cfg_name(ca), cfg_name(cb), s.count);
                hb_batch_destroy(dst);
                hb_batch_destroy(back);
            }
            CHECK_OK(hb_batch_convert(src, src));
            CHECK(batch_equals_systems(src, &s));
            hb_batch_destroy(src);
        }
        systems_free(&s);
    }
}

/* ------------------------------------------------------------------------ */
/* (4) Errors: right status and a message.                                   */
/* ------------------------------------------------------------------------ */
#define CHECK_ERR(call, expected, needle)                                                  \
    do {                                                                                   \
        hb_status_t st_ = (call);                                                          \
        CHECKF(st_ == (expected) && hb_last_error()[0] != '\0' &&                          \
                   strstr(hb_last_error(), (needle)) != NULL,                              \
               "%s -> %s: \"%s\"", #call, hb_status_name(st_), hb_last_error());           \
    } while (0)

static void test_errors(hb_context_t *ctx)
{
    enum { M = 10 };
    int parent[M];
    double u[M], l[M], d[M], rhs[M], y[M];
    make_tree(TREE_RANDOM, M, parent);
    make_system(MATRIX_DOMINANT, M, parent, u, l, d, rhs);

    CHECK_ERR(hb_hines_solve(0, parent, u, l, d, rhs), HB_ERR_INVALID_VALUE, "m = 0");
    CHECK_ERR(hb_hines_solve(-3, parent, u, l, d, rhs), HB_ERR_INVALID_VALUE, "m = -3");
    CHECK_ERR(hb_hines_solve(M, NULL, u, l, d, rhs), HB_ERR_INVALID_VALUE, "parent");
    CHECK_ERR(hb_hines_solve(M, parent, NULL, l, d, rhs), HB_ERR_INVALID_VALUE, "NULL");
    CHECK_ERR(hb_hines_solve(M, parent, u, l, d, NULL), HB_ERR_INVALID_VALUE, "NULL");
    int bad[M];
    memcpy(bad, parent, sizeof bad);
    bad[0] = 0;
    CHECK_ERR(hb_hines_solve(M, bad, u, l, d, rhs), HB_ERR_INVALID_VALUE, "parent[0] = 0");
    bad[0] = -1;
    bad[7] = 9;
    CHECK_ERR(hb_hines_solve(M, bad, u, l, d, rhs), HB_ERR_INVALID_VALUE,
              "parent[7] = 9; expected 0 <= parent[i] < i (Hines order)");
    bad[7] = 7;
    CHECK_ERR(hb_hines_solve(M, bad, u, l, d, rhs), HB_ERR_INVALID_VALUE, "parent[7] = 7");
    bad[7] = -1;
    CHECK_ERR(hb_hines_solve(M, bad, u, l, d, rhs), HB_ERR_INVALID_VALUE, "parent[7] = -1");
    CHECK_ERR(hb_hines_matvec(M, bad, u, l, d, rhs, y), HB_ERR_INVALID_VALUE, "parent[7]");
    CHECK_ERR(hb_hines_matvec(M, parent, u, l, d, rhs, rhs), HB_ERR_INVALID_VALUE, "alias");
    CHECK_ERR(hb_hines_matvec(M, parent, u, l, d, NULL, y), HB_ERR_INVALID_VALUE, "NULL");
    /* a success clears the previous message */
    CHECK_OK(hb_hines_matvec(M, parent, u, l, d, rhs, y));
    CHECK(hb_last_error()[0] == '\0');

    CHECK_ERR(hb_hines_solve_batch(NULL, M, parent, u, l, d, rhs, HB_LAYOUT_FLAT, 0, 1),
              HB_ERR_INVALID_VALUE, "ctx");
    CHECK_ERR(hb_hines_solve_batch(ctx, M, bad, u, l, d, rhs, HB_LAYOUT_FLAT, 0, 1),
              HB_ERR_INVALID_VALUE, "parent[7]");
    CHECK_ERR(hb_hines_solve_batch(ctx, M, parent, u, l, d, rhs, HB_LAYOUT_FLAT, 0, 0),
              HB_ERR_INVALID_VALUE, "batch_count = 0");
    CHECK_ERR(hb_hines_solve_batch(ctx, M, parent, u, l, d, rhs, (hb_layout_t)7, 1, 1),
              HB_ERR_INVALID_VALUE, "layout = 7");
    CHECK_ERR(hb_hines_solve_batch(ctx, M, parent, u, l, d, rhs, (hb_layout_t)-1, 1, 1),
              HB_ERR_INVALID_VALUE, "layout = -1");
    CHECK_ERR(hb_hines_solve_batch(ctx, M, parent, u, l, d, rhs, HB_LAYOUT_BLOCK, 0, 1),
              HB_ERR_INVALID_VALUE, "block_size = 0");
    CHECK_ERR(hb_hines_solve_batch(ctx, M, parent, u, l, NULL, rhs, HB_LAYOUT_FLAT, 0, 1),
              HB_ERR_INVALID_VALUE, "NULL");

    hb_batch_t *b = (hb_batch_t *)&b; /* must be reset to NULL on failure */
    CHECK_ERR(hb_batch_create(ctx, M, bad, 3, HB_LAYOUT_FLAT, 0, &b), HB_ERR_INVALID_VALUE,
              "parent[7]");
    CHECK(b == NULL);
    CHECK_ERR(hb_batch_create(ctx, 0, parent, 3, HB_LAYOUT_FLAT, 0, &b), HB_ERR_INVALID_VALUE,
              "m = 0");
    CHECK_ERR(hb_batch_create(NULL, M, parent, 3, HB_LAYOUT_FLAT, 0, &b), HB_ERR_INVALID_VALUE,
              "ctx");
    CHECK_ERR(hb_batch_create(ctx, M, parent, 3, HB_LAYOUT_FLAT, 0, NULL), HB_ERR_INVALID_VALUE,
              "batch");
    CHECK_ERR(hb_batch_create(ctx, M, parent, -1, HB_LAYOUT_FLAT, 0, &b), HB_ERR_INVALID_VALUE,
              "batch_count = -1");
    CHECK_ERR(hb_batch_create(ctx, M, parent, 3, (hb_layout_t)3, 2, &b), HB_ERR_INVALID_VALUE,
              "layout = 3");
    CHECK_ERR(hb_batch_create(ctx, M, parent, 3, HB_LAYOUT_BLOCK, -2, &b), HB_ERR_INVALID_VALUE,
              "block_size = -2");

    CHECK_OK(hb_batch_create(ctx, M, parent, 3, HB_LAYOUT_BLOCK, 2, &b));
    CHECK_ERR(hb_batch_set(b, 3, u, l, d, rhs), HB_ERR_INVALID_VALUE, "system = 3");
    CHECK_ERR(hb_batch_set(b, -1, u, l, d, rhs), HB_ERR_INVALID_VALUE, "system = -1");
    CHECK_ERR(hb_batch_get(b, 3, u, l, d, rhs), HB_ERR_INVALID_VALUE, "system = 3");
    CHECK_ERR(hb_batch_set(NULL, 0, u, l, d, rhs), HB_ERR_INVALID_VALUE, "batch");
    CHECK_ERR(hb_batch_get(NULL, 0, u, l, d, rhs), HB_ERR_INVALID_VALUE, "batch");
    CHECK_ERR(hb_batch_solve(NULL), HB_ERR_INVALID_VALUE, "batch");
    CHECK_ERR(hb_batch_arrays(NULL, NULL, NULL, NULL, NULL), HB_ERR_INVALID_VALUE, "batch");
    /* NULL arrays are skipped: only d changes */
    double u2[M], d2[M];
    CHECK_OK(hb_batch_set(b, 1, u, NULL, NULL, NULL));
    CHECK_OK(hb_batch_set(b, 1, NULL, NULL, d, NULL));
    CHECK_OK(hb_batch_get(b, 1, u2, NULL, d2, NULL));
    CHECK(same_bits(M, u, u2) && same_bits(M, d, d2));

    hb_batch_t *other = NULL;
    CHECK_OK(hb_batch_create(ctx, M - 1, parent, 3, HB_LAYOUT_FLAT, 0, &other));
    CHECK_ERR(hb_batch_convert(b, other), HB_ERR_INVALID_VALUE, "rows");
    hb_batch_destroy(other);
    CHECK_OK(hb_batch_create(ctx, M, parent, 4, HB_LAYOUT_FLAT, 0, &other));
    CHECK_ERR(hb_batch_convert(b, other), HB_ERR_INVALID_VALUE, "systems");
    hb_batch_destroy(other);
    int moved[M];
    memcpy(moved, parent, sizeof moved);
    moved[M - 1] = parent[M - 1] == 0 ? 1 : 0;
    CHECK_OK(hb_batch_create(ctx, M, moved, 3, HB_LAYOUT_INTERLEAVED, 0, &other));
    CHECK_ERR(hb_batch_convert(b, other), HB_ERR_INVALID_VALUE, "parent[9]");
    CHECK_ERR(hb_batch_convert(NULL, other), HB_ERR_INVALID_VALUE, "NULL");
    hb_batch_destroy(other);
    hb_batch_destroy(b);
    CHECK_OK(hb_batch_destroy(NULL));

    /* 2^31 systems of 2^20 rows: 2^54 bytes per array cannot be allocated */
    const int big_m = 1 << 20;
    int *chain = xcalloc((size_t)big_m, sizeof *chain);
    make_tree(TREE_CHAIN, big_m, chain);
    b = (hb_batch_t *)&b;
    CHECK_ERR(hb_batch_create(ctx, big_m, chain, INT_MAX, HB_LAYOUT_BLOCK, 64, &b), HB_ERR_ALLOC,
              "out of memory");
    CHECK(b == NULL);
    free(chain);
    CHECK(hb_batch_rows(NULL) == 0 && hb_batch_count(NULL) == 0);

    hb_context_t *c = (hb_context_t *)&c;
    CHECK_ERR(hb_context_create((hb_backend_t)9, &c), HB_ERR_INVALID_VALUE, "backend = 9");
    CHECK(c == NULL);
    CHECK_ERR(hb_context_create(HB_BACKEND_SEQ, NULL), HB_ERR_INVALID_VALUE, "NULL");
    if (!hb_backend_available(HB_BACKEND_CUDA))
        CHECK_ERR(hb_context_create(HB_BACKEND_CUDA, &c), HB_ERR_NOT_SUPPORTED, "cuda");
    if (!hb_backend_available(HB_BACKEND_OMP))
        CHECK_ERR(hb_context_create(HB_BACKEND_OMP, &c), HB_ERR_NOT_SUPPORTED, "OpenMP");
    CHECK_ERR(hb_context_set_threads(ctx, -1), HB_ERR_INVALID_VALUE, "threads = -1");
    CHECK_ERR(hb_context_set_threads(NULL, 2), HB_ERR_INVALID_VALUE, "NULL");
    CHECK(hb_context_threads(NULL) == -1);
    CHECK_OK(hb_context_destroy(NULL));
}

/* ------------------------------------------------------------------------ */
/* Contexts and (5) thread counts.                                           */
/* ------------------------------------------------------------------------ */
static void test_contexts(void)
{
    static const hb_backend_t all[] = {HB_BACKEND_SEQ, HB_BACKEND_OMP, HB_BACKEND_CUDA,
                                       HB_BACKEND_BEST};
    static const char *const names[] = {"seq", "omp", "cuda", "best"};
    for (int k = 0; k < 4; ++k) CHECK(strcmp(hb_backend_name(all[k]), names[k]) == 0);
    CHECK(strcmp(hb_backend_name((hb_backend_t)9), "unknown") == 0);
    CHECKF(hb_version() == HB_VERSION && HB_VERSION >= 100, "the library's version %d, the "
           "header's %d", hb_version(), HB_VERSION);
    CHECK(hb_backend_available(HB_BACKEND_SEQ) && hb_backend_available(HB_BACKEND_BEST));
    CHECK(!hb_backend_available((hb_backend_t)9));

    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_BEST, &ctx));
    const hb_backend_t best = hb_backend_available(HB_BACKEND_CUDA) ? HB_BACKEND_CUDA
                              : hb_backend_available(HB_BACKEND_OMP) ? HB_BACKEND_OMP
                                                                     : HB_BACKEND_SEQ;
    CHECK(hb_context_backend(ctx) == best);
    /* 0 = OpenMP's default: reported as the count a solve will use */
    CHECK(hb_context_threads(ctx) >= 1);
    CHECK_OK(hb_context_set_threads(ctx, 3));
    CHECK(hb_context_threads(ctx) == (best == HB_BACKEND_OMP ? 3 : 1));
    hb_context_destroy(ctx);
}

static void test_threads(void)
{
    if (!hb_backend_available(HB_BACKEND_OMP)) {
        printf("test_solver: no OpenMP in this build, thread tests skipped\n");
        return;
    }
    static const int threads[] = {1, 2, 3, 0};
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_OMP, &ctx));
    if (!ctx) return;
    systems_t s = systems_make(TREE_RANDOM, 57, 200);
    for (size_t t = 0; t < sizeof threads / sizeof *threads; ++t) {
        CHECK_OK(hb_context_set_threads(ctx, threads[t]));
        for (int c = 0; c < N_LAYOUT_CFGS; ++c) check_solve_batch(ctx, layout_cfgs[c], &s);
    }
    systems_free(&s);
    hb_context_destroy(ctx);
}

static void run_all(uint64_t seed)
{
    printf("test_solver: seed %llu (rerun with HB_TEST_SEED=%llu)\n", (unsigned long long)seed,
           (unsigned long long)seed);
    fflush(stdout);
    rng_state = seed;
    const int failed_before = check_failed;

    test_accuracy();
    test_batched(HB_BACKEND_SEQ);
    if (hb_backend_available(HB_BACKEND_OMP)) test_batched(HB_BACKEND_OMP);
    test_layout_index();
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_SEQ, &ctx));
    test_conversions(ctx);
    test_errors(ctx);
    hb_context_destroy(ctx);
    test_contexts();
    test_threads();

    if (check_failed > failed_before)
        fprintf(stderr, "test_solver: %d failures with seed %llu\n", check_failed - failed_before,
                (unsigned long long)seed);
}

int main(void)
{
    run_all(20170612u);
    const char *env = getenv("HB_TEST_SEED");
    run_all(env && *env ? strtoull(env, NULL, 10) : (uint64_t)time(NULL));
    return check_summary("solver");
}
