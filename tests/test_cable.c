/* Compartmentalisation and the cable matrix against closed forms. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "test_data.h"
#include "hinesbatch.h"

#define PI 3.14159265358979323846

static int close_rel(double a, double b, double rel) { return fabs(a - b) <= rel * fabs(b); }

/* A straight cable of one or more pieces along x, samples of type 3. */
static hb_morph_t *cable_morph(int pieces, double length, double r0, double r1)
{
    hb_sample_t s[64];
    for (int i = 0; i <= pieces; i++) {
        double t = (double)i / pieces;
        s[i] = (hb_sample_t){i + 1, 3, length * t, 0, 0, r0 + (r1 - r0) * t, i == 0 ? -1 : i, 0};
    }
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_from_samples(s, pieces + 1, "cable", &m));
    return m;
}

static double sum_area(const hb_cable_t *c)
{
    double a = 0.0;
    hb_node_info_t info;
    for (int i = 0; i < hb_cable_size(c); i++) {
        hb_cable_node(c, i, &info);
        a += info.area_um2;
    }
    return a;
}

/*
 * Steady state of a sealed-end cable with current I into x = 0: one backward
 * Euler step with a huge dt from rest solves G v = I exactly, and
 * V(0) = I r_a lambda coth(L/lambda), V(L) = I r_a lambda / sinh(L/lambda).
 */
static void test_steady_state(hb_scheme_t scheme, int nseg)
{
    const double L = 1000.0, diam = 1.0, ra = 100.0, gm = 2.5e-5, i_nA = 0.1; /* Rallpack 1 */
    hb_morph_t *m = cable_morph(1, L, diam / 2, diam / 2);
    hb_discretization_t opt;
    hb_discretization_default(&opt);
    opt.policy = HB_CPOLICY_FIXED;
    opt.count = nseg;
    opt.scheme = scheme;
    opt.ra_ohm_cm = ra;
    hb_cable_t *c = NULL;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    int n = hb_cable_size(c);
    CHECK(n == (scheme == HB_SCHEME_VERTEX ? nseg + 1 : nseg + 2));
    CHECK(hb_cable_compartments(c) == (scheme == HB_SCHEME_VERTEX ? nseg + 1 : nseg));
    double *buf = calloc((size_t)n * 7, sizeof *buf);
    double *u = buf, *l = u + n, *d = l + n, *rhs = d + n, *v = rhs + n, *g = v + n, *inj = g + n;
    for (int i = 0; i < n; i++) {
        v[i] = -65.0;
        g[i] = gm;
    }
    inj[0] = i_nA; /* node 0 sits at x = 0 in both schemes */
    CHECK_OK(hb_cable_offdiag(c, u, l));
    CHECK_OK(hb_cable_step_system(c, 1e15, u, l, v, g, NULL, inj, d, rhs));
    CHECK_OK(hb_hines_solve(n, hb_cable_parent(c), u, l, d, rhs));

    double lambda = sqrt(diam * 1e-4 / (4.0 * ra * gm)) * 1e4;    /* [um] */
    double r_a = 4.0 * ra / (PI * diam * diam * 1e-8) * 1e-4 * 1e-6; /* [Mohm/um] */
    double v0 = i_nA * r_a * lambda / tanh(L / lambda);             /* nA * Mohm = mV */
    double vl = i_nA * r_a * lambda / sinh(L / lambda);
    hb_node_info_t last;
    hb_cable_node(c, n - 1, &last);
    CHECK(last.x == 1.0);
    double tol = scheme == HB_SCHEME_VERTEX ? 2.0 / ((double)nseg * nseg) : 2.0 / nseg;
    CHECKF(fabs(rhs[0] - v0) / v0 < tol, "scheme %d nseg %d: V(0) %.9g vs %.9g", scheme, nseg,
           rhs[0], v0);
    CHECKF(fabs(rhs[n - 1] - vl) / vl < tol, "scheme %d nseg %d: V(L) %.9g vs %.9g", scheme, nseg,
           rhs[n - 1], vl);
    /* Rallpack 1's analytic trace is at +101.9 mV after 250 ms (6.25 tau), just below
     * the steady state. */
    CHECKF(-65.0 + v0 > 101.9 && -65.0 + v0 < 101.9 + 0.5, "analytic V(0) %.4f", -65.0 + v0);
    free(buf);
    hb_cable_destroy(c);
    hb_morph_destroy(m);
}

/* Second-order convergence of the vertex scheme on the steady state. */
static void test_convergence(void)
{
    double err[3];
    int nsegs[3] = {10, 20, 40};
    for (int k = 0; k < 3; k++) {
        hb_morph_t *m = cable_morph(1, 500.0, 0.5, 0.5);
        hb_discretization_t opt;
        hb_discretization_default(&opt);
        opt.policy = HB_CPOLICY_FIXED;
        opt.count = nsegs[k];
        hb_cable_t *c = NULL;
        CHECK_OK(hb_cable_create(m, &opt, &c));
        int n = hb_cable_size(c);
        double *buf = calloc((size_t)n * 7, sizeof *buf);
        double *u = buf, *l = u + n, *d = l + n, *rhs = d + n, *v = rhs + n, *g = v + n,
               *inj = g + n;
        for (int i = 0; i < n; i++) {
            v[i] = -65.0;
            g[i] = 1e-4;
        }
        inj[0] = 0.05;
        hb_cable_offdiag(c, u, l);
        hb_cable_step_system(c, 1e15, u, l, v, g, NULL, inj, d, rhs);
        hb_hines_solve(n, hb_cable_parent(c), u, l, d, rhs);
        double lambda = sqrt(1e-4 / (4.0 * 100.0 * 1e-4)) * 1e4;
        double r_a = 4.0 * 100.0 / (PI * 1e-8) * 1e-10;
        err[k] = fabs(rhs[0] - 0.05 * r_a * lambda / tanh(500.0 / lambda));
        free(buf);
        hb_cable_destroy(c);
        hb_morph_destroy(m);
    }
    CHECKF(err[0] / err[1] > 3.5 && err[1] / err[2] > 3.5, "errors %g %g %g not O(h^2)", err[0],
           err[1], err[2]);
}

/* Areas and resistances of a tapered cable: frustum closed forms. */
static void test_geometry(void)
{
    const double L = 200.0, r0 = 2.0, r1 = 0.5, ra = 150.0;
    for (int scheme = 0; scheme < 2; scheme++) {
        hb_morph_t *m = cable_morph(4, L, r0, r1);
        hb_morph_stats_t st;
        CHECK_OK(hb_morph_stats(m, &st));
        double area = PI * (r0 + r1) * sqrt(L * L + (r0 - r1) * (r0 - r1));
        CHECKF(fabs(st.area_um2 - area) < 1e-9 * area, "stats area %.12g vs %.12g", st.area_um2,
               area);
        CHECK(fabs(st.length_um - L) < 1e-9);
        hb_discretization_t opt;
        hb_discretization_default(&opt);
        opt.scheme = (hb_scheme_t)scheme;
        opt.policy = HB_CPOLICY_FIXED;
        opt.count = 7;
        opt.ra_ohm_cm = ra;
        hb_cable_t *c = NULL;
        CHECK_OK(hb_cable_create(m, &opt, &c));
        CHECKF(fabs(sum_area(c) - area) < 1e-9 * area, "scheme %d: node areas %.12g vs %.12g",
               scheme, sum_area(c), area);
        /* Total resistance from x=0 to x=L: sum along the path, closed form
         * Ra L / (pi r0 r1) for a linear taper. */
        double total = 0.0;
        hb_node_info_t info;
        for (int i = 1; i < hb_cable_size(c); i++) {
            CHECK_OK(hb_cable_node(c, i, &info));
            CHECK(info.parent == i - 1);
            total += info.r_axial_mohm;
        }
        double expect = ra * L / (PI * r0 * r1) * 1e-2;
        CHECKF(fabs(total - expect) < 1e-9 * expect, "scheme %d: resistance %.12g vs %.12g",
               scheme, total, expect);
        hb_cable_destroy(c);
        hb_morph_destroy(m);
    }
}

/* NEURON's d_lambda nseg for a two-point frustum (lambda_f of stdlib.hoc). */
static int nseg_d_lambda(double L, double d1, double d2)
{
    double lam = L / sqrt(d1 + d2) * sqrt(2.0) * 1e-5 * sqrt(4 * PI * 100.0 * 100.0 * 1.0);
    double lambda_f = L / lam;
    return (int)((L / (0.1 * lambda_f) + 0.9) / 2) * 2 + 1;
}

/* Compartment counts of each policy on a small tree. */
static void test_policies(void)
{
    /* soma sphere r=5; dendrite 300 um (d=2) with a fork into 100 um and 40 um branches */
    hb_sample_t s[] = {
        {1, 1, 0, 0, 0, 5, -1, 0},     {2, 3, 5, 0, 0, 1, 1, 0},
        {3, 3, 105, 0, 0, 1, 2, 0},    {4, 3, 305, 0, 0, 1, 3, 0},
        {5, 3, 405, 0, 0, 0.5, 4, 0},  {6, 3, 305, 40, 0, 0.5, 4, 0},
        {7, 3, 305, 40, 0, 0.5, 6, 0}, /* zero-length segment */
    };
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_from_samples(s, 7, "tree", &m));
    hb_morph_stats_t st;
    CHECK_OK(hb_morph_stats(m, &st));
    CHECK(st.sections == 4);
    CHECK(st.terminals == 2);
    CHECK(st.max_branch_order == 1);
    hb_discretization_t opt;
    hb_discretization_default(&opt);
    hb_cable_t *c = NULL;

    opt.policy = HB_CPOLICY_FIXED;
    opt.count = 3;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    CHECK(hb_cable_compartments(c) == 1 + 3 * 3); /* sphere is one node in the vertex scheme */
    hb_cable_destroy(c);
    opt.scheme = HB_SCHEME_NEURON;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    CHECK(hb_cable_compartments(c) == 4 * 3);
    CHECK(hb_cable_size(c) == 4 * 3 + 4 + 1);
    hb_cable_destroy(c);

    opt.scheme = HB_SCHEME_VERTEX;
    opt.policy = HB_CPOLICY_MAX_LENGTH;
    opt.max_length_um = 30.0;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    CHECK(hb_cable_compartments(c) == 1 + 10 + 4 + 2); /* ceil(300/30), ceil(100/30), ceil(40/30) */
    hb_cable_destroy(c);

    opt.policy = HB_CPOLICY_PER_SEGMENT;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    CHECK(hb_cable_compartments(c) == 1 + 2 + 1 + 1); /* the zero-length segment adds none */
    hb_cable_destroy(c);

    /* d_lambda: NEURON's nseg = int((L/(d_lambda lambda_f) + 0.9)/2)*2 + 1 for cylinders */
    opt.policy = HB_CPOLICY_D_LAMBDA;
    opt.d_lambda = 0.1;
    opt.frequency_hz = 100.0;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    /* stem: 300 um, d 2; fork children start at the shared fork point (d 2 -> 1) */
    int expect = 1 + nseg_d_lambda(300.0, 2.0, 2.0) + nseg_d_lambda(100.0, 2.0, 1.0) +
                 nseg_d_lambda(40.0, 2.0, 1.0);
    CHECKF(hb_cable_compartments(c) == expect, "d_lambda compartments %d vs %d",
           hb_cable_compartments(c), expect);
    hb_cable_destroy(c);

    /* Hines order and consistent node metadata. */
    opt.policy = HB_CPOLICY_FIXED;
    opt.count = 2;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    const int *p = hb_cable_parent(c);
    CHECK(p[0] == -1);
    for (int i = 1; i < hb_cable_size(c); i++) CHECK(p[i] >= 0 && p[i] < i);
    hb_node_info_t info;
    CHECK(hb_cable_node(c, hb_cable_size(c), &info) == HB_ERR_INVALID_VALUE);
    CHECK(hb_cable_node(c, -1, &info) == HB_ERR_INVALID_VALUE);
    hb_cable_destroy(c);

    /* bad options */
    opt.policy = HB_CPOLICY_FIXED;
    opt.count = 0;
    CHECK(hb_cable_create(m, &opt, &c) == HB_ERR_INVALID_VALUE && c == NULL);
    CHECK(strstr(hb_last_error(), "compartments per section") != NULL);
    opt.count = 1;
    opt.ra_ohm_cm = -1;
    CHECK(hb_cable_create(m, &opt, &c) == HB_ERR_INVALID_VALUE);
    opt.ra_ohm_cm = 100;
    opt.policy = (hb_cpolicy_t)42;
    CHECK(hb_cable_create(m, &opt, &c) == HB_ERR_INVALID_VALUE);
    CHECK(hb_cable_create(NULL, &opt, &c) == HB_ERR_INVALID_VALUE);
    hb_morph_destroy(m);
}

/* Residual ||Ax - b|| / ||b|| of one system. */
static double residual(int m, const int *parent, const double *u, const double *l,
                       const double *d, const double *b, const double *x)
{
    double *ax = malloc((size_t)m * sizeof *ax), num = 0.0, den = 0.0;
    CHECK_OK(hb_hines_matvec(m, parent, u, l, d, x, ax));
    for (int i = 0; i < m; i++) {
        num += (ax[i] - b[i]) * (ax[i] - b[i]);
        den += b[i] * b[i];
    }
    free(ax);
    return sqrt(num / den);
}

/* The matrix of one step at random voltages; returns the solved copy in x. */
static double solve_real(const hb_cable_t *c, double *u, double *l, double *d, double *rhs,
                         double *x, unsigned seed)
{
    int m = hb_cable_size(c);
    double *v = malloc((size_t)m * sizeof *v), *g = malloc((size_t)m * sizeof *g);
    double *dd = malloc((size_t)m * sizeof *dd);
    srand(seed);
    for (int i = 0; i < m; i++) {
        v[i] = -65.0 + 30.0 * rand() / RAND_MAX;
        g[i] = 1e-4;
    }
    CHECK_OK(hb_cable_offdiag(c, u, l));
    CHECK_OK(hb_cable_step_system(c, 0.025, u, l, v, g, NULL, NULL, d, rhs));
    memcpy(dd, d, (size_t)m * sizeof *dd);
    memcpy(x, rhs, (size_t)m * sizeof *x);
    CHECK_OK(hb_hines_solve(m, hb_cable_parent(c), u, l, dd, x));
    double r = residual(m, hb_cable_parent(c), u, l, d, rhs, x);
    free(v);
    free(g);
    free(dd);
    return r;
}

/* Every batch layout and backend gives the sequential solution bit for bit. */
static void check_batches(const hb_cable_t *c, const double *u, const double *l,
                          const double *d, const double *rhs, const double *x,
                          const char *name)
{
    int m = hb_cable_size(c), cells = 37;
    const int *parent = hb_cable_parent(c);
    double *out = malloc((size_t)m * sizeof *out);
    for (int backend = HB_BACKEND_SEQ; backend <= HB_BACKEND_OMP; backend++) {
        if (!hb_backend_available((hb_backend_t)backend)) continue;
        hb_context_t *ctx;
        CHECK_OK(hb_context_create((hb_backend_t)backend, &ctx));
        for (int layout = 0; layout < 3; layout++) {
            hb_batch_t *batch;
            CHECK_OK(hb_batch_create(ctx, m, parent, cells, (hb_layout_t)layout, 8, &batch));
            for (int s = 0; s < cells; s++) CHECK_OK(hb_batch_set(batch, s, u, l, d, rhs));
            CHECK_OK(hb_batch_solve(batch));
            int same = 1;
            for (int s = 0; s < cells; s++) {
                CHECK_OK(hb_batch_get(batch, s, NULL, NULL, NULL, out));
                same &= memcmp(out, x, (size_t)m * sizeof *x) == 0;
            }
            CHECKF(same, "%s: backend %d layout %d differs from the sequential solve", name,
                   backend, layout);
            hb_batch_destroy(batch);
        }
        hb_context_destroy(ctx);
    }
    free(out);
}

/*
 * Every real morphology of the shared data, every scheme and policy: Hines
 * order, positive finite resistances, node areas summing to the morphology's
 * area, a residual at round-off, and every layout equal to the sequential solve.
 */
static void test_real_morphologies(void)
{
    static char paths[TEST_MAX_SWC][TEST_PATH_MAX];
    const int count = test_swc_files(paths);
    CHECKF(count >= 0, "cannot open %s/morphologies", HB_DATA_DIR);
    int files = 0;
    for (int f = 0; f < count; f++) {
        const char *name = test_base_name(paths[f]);
        hb_morph_t *m = NULL;
        CHECK_OK(hb_morph_load_swc(paths[f], NULL, &m));
        if (!m) continue;
        files++;
        hb_morph_stats_t st;
        CHECK_OK(hb_morph_stats(m, &st));
        for (int scheme = 0; scheme < 2; scheme++) {
            for (int policy = 0; policy < 4; policy++) {
                hb_discretization_t opt;
                hb_discretization_default(&opt);
                opt.scheme = (hb_scheme_t)scheme;
                opt.policy = (hb_cpolicy_t)policy;
                opt.count = 3;
                hb_cable_t *c = NULL;
                CHECK_OK(hb_cable_create(m, &opt, &c));
                if (!c) continue;
                CHECKF(fabs(sum_area(c) - st.area_um2) < 1e-8 * st.area_um2,
                       "%s scheme %d policy %d: area %.10g vs %.10g", name, scheme,
                       policy, sum_area(c), st.area_um2);
                int n = hb_cable_size(c);
                const int *p = hb_cable_parent(c);
                int ok = p[0] == -1;
                hb_node_info_t info;
                for (int i = 1; i < n; i++) {
                    ok &= p[i] >= 0 && p[i] < i;
                    hb_cable_node(c, i, &info);
                    ok &= info.r_axial_mohm > 0.0 && isfinite(info.r_axial_mohm);
                }
                CHECKF(ok, "%s scheme %d policy %d: Hines order or resistance", name,
                       scheme, policy);
                double *buf = malloc((size_t)n * 5 * sizeof *buf);
                double *u = buf, *l = u + n, *d = l + n, *rhs = d + n, *x = rhs + n;
                double r = solve_real(c, u, l, d, rhs, x, (unsigned)(n + policy));
                CHECKF(r < 1e-12, "%s scheme %d policy %d: residual %.3g", name, scheme,
                       policy, r);
                if (policy == HB_CPOLICY_D_LAMBDA) check_batches(c, u, l, d, rhs, x, name);
                free(buf);
                hb_cable_destroy(c);
            }
        }
        hb_morph_destroy(m);
    }
    CHECKF(files >= 18, "only %d morphologies found", files);
}

/* A non-spherical root: its other children hang from its x = 0 node. */
static void test_root_start_children(void)
{
    /* a 3-sample soma chain along x; one dendrite leaves the root sample itself */
    hb_sample_t s[] = {
        {1, 1, 0, 0, 0, 4, -1, 0},   {2, 1, 5, 0, 0, 5, 1, 0},    {3, 1, 10, 0, 0, 4, 2, 0},
        {4, 3, 0, 20, 0, 1, 1, 0},   {5, 3, 0, 60, 0, 1, 4, 0},   {6, 3, 20, 0, 0, 1, 3, 0},
    };
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_from_samples(s, 6, "root-children", &m));
    for (int scheme = 0; scheme < 2; scheme++) {
        hb_discretization_t opt;
        hb_discretization_default(&opt);
        opt.scheme = (hb_scheme_t)scheme;
        opt.policy = HB_CPOLICY_FIXED;
        opt.count = 2;
        hb_cable_t *c = NULL;
        CHECK_OK(hb_cable_create(m, &opt, &c));
        if (!c) continue;
        /* the dendrite from sample 1 starts at node 0 (x = 0 of the root section) */
        hb_node_info_t info, parent;
        int found = 0;
        for (int i = 1; i < hb_cable_size(c); i++) {
            hb_cable_node(c, i, &info);
            hb_cable_node(c, info.parent, &parent);
            if (info.sample_id == 4 || (info.swc_type == 3 && parent.swc_type == 1 &&
                                        parent.x == 0.0)) {
                found += info.parent == 0;
            }
        }
        CHECKF(found >= 1, "scheme %d: no dendrite node hangs from node 0", scheme);
        hb_node_info_t root;
        hb_cable_node(c, 0, &root);
        CHECK(root.x == 0.0 && root.swc_type == 1);
        hb_cable_destroy(c);
    }
    hb_morph_destroy(m);
}

/* Per-type Ra and cm: the dendrite's resistances scale with its Ra, nodes carry cm. */
static void test_region_parameters(void)
{
    hb_sample_t s[] = {{1, 1, 0, 0, 0, 5, -1, 0}, {2, 3, 5, 0, 0, 1, 1, 0}, {3, 3, 105, 0, 0, 1, 2, 0}};
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_from_samples(s, 3, "ball-and-stick", &m));
    hb_discretization_t opt;
    hb_discretization_default(&opt);
    opt.policy = HB_CPOLICY_FIXED;
    opt.count = 4;
    hb_cable_t *plain = NULL, *region = NULL;
    CHECK_OK(hb_cable_create(m, &opt, &plain));
    opt.ra_by_type[3] = 3.0 * opt.ra_ohm_cm;
    opt.cm_by_type[1] = 2.5;
    CHECK_OK(hb_cable_create(m, &opt, &region));
    int ok = hb_cable_size(plain) == hb_cable_size(region);
    for (int i = 0; ok && i < hb_cable_size(plain); i++) {
        hb_node_info_t a, b;
        hb_cable_node(plain, i, &a);
        hb_cable_node(region, i, &b);
        double ratio = a.r_axial_mohm > 0 ? b.r_axial_mohm / a.r_axial_mohm : 3.0;
        ok &= a.swc_type == 3 ? fabs(ratio - 3.0) < 1e-12 : a.r_axial_mohm == b.r_axial_mohm;
        ok &= b.cm_uf_cm2 == (b.swc_type == 1 ? 2.5 : 1.0) && a.cm_uf_cm2 == 1.0;
    }
    CHECK(ok);
    opt.cm_by_type[1] = -1.0;
    hb_cable_t *bad = NULL;
    CHECK(hb_cable_create(m, &opt, &bad) == HB_ERR_INVALID_VALUE && bad == NULL);
    hb_cable_destroy(plain);
    hb_cable_destroy(region);
    hb_morph_destroy(m);
}

/*
 * A chain of a million samples (1 um apart, radius 1 um), cut by d-lambda and per
 * segment in both schemes: the discretiser is linear, so this takes seconds. The
 * totals are a cylinder's closed forms: area 2 pi r L, path resistance Ra L / (pi r^2).
 */
static void test_million_chain(void)
{
    const int n = 1000000;
    const double r = 1.0, ra = 100.0, length = n - 1.0;
    hb_sample_t *s = malloc((size_t)n * sizeof *s);
    CHECK(s != NULL);
    if (!s) return;
    for (int i = 0; i < n; i++) s[i] = (hb_sample_t){i + 1, 3, i, 0, 0, r, i == 0 ? -1 : i, 0};
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_from_samples(s, n, "chain", &m));
    free(s);
    if (!m) return;
    /* NEURON's d_lambda rule on a uniform cylinder (d = 2r everywhere). */
    const double lambda_f =
        sqrt(4.0 * r) / (sqrt(2.0) * 1e-5 * sqrt(4.0 * PI * 100.0 * ra * 1.0));
    const double q = (length / (0.1 * lambda_f) + 0.9) / 2.0;
    const int d_lambda_n = (int)floor(q) * 2 + 1;
    CHECKF(q - floor(q) > 1e-6 && q - floor(q) < 1.0 - 1e-6, "q = %.9f is at a step", q);
    for (int scheme = 0; scheme < 2; scheme++) {
        for (int per_segment = 0; per_segment < 2; per_segment++) {
            hb_discretization_t opt;
            hb_discretization_default(&opt);
            opt.scheme = (hb_scheme_t)scheme;
            opt.policy = per_segment ? HB_CPOLICY_PER_SEGMENT : HB_CPOLICY_D_LAMBDA;
            opt.ra_ohm_cm = ra;
            const int pieces = per_segment ? n - 1 : d_lambda_n;
            hb_cable_t *c = NULL;
            CHECK_OK(hb_cable_create(m, &opt, &c));
            if (!c) continue;
            const int vertex = scheme == HB_SCHEME_VERTEX;
            CHECKF(hb_cable_size(c) == pieces + (vertex ? 1 : 2) &&
                       hb_cable_compartments(c) == pieces + vertex,
                   "scheme %d per-segment %d: %d rows, %d compartments for %d pieces", scheme,
                   per_segment, hb_cable_size(c), hb_cable_compartments(c), pieces);
            double area = 0.0, resistance = 0.0;
            hb_node_info_t info;
            for (int i = 0; i < hb_cable_size(c); i++) {
                hb_cable_node(c, i, &info);
                area += info.area_um2;
                if (i > 0) resistance += info.r_axial_mohm; /* one path: every node on it */
            }
            CHECKF(close_rel(area, 2.0 * PI * r * length, 1e-9),
                   "scheme %d per-segment %d: area %.12g, expected %.12g", scheme, per_segment,
                   area, 2.0 * PI * r * length);
            const double expected = ra * length / (PI * r * r) * 1e-2;
            CHECKF(close_rel(resistance, expected, 1e-9),
                   "scheme %d per-segment %d: resistance %.12g, expected %.12g", scheme,
                   per_segment, resistance, expected);
            hb_cable_destroy(c);
        }
    }
    hb_morph_destroy(m);
}

/* hb_cable_create must fail with `status` and a message holding `what`. */
static void expect_refused(const hb_morph_t *m, const hb_discretization_t *opt,
                           hb_status_t status, const char *what)
{
    hb_cable_t *c = (hb_cable_t *)&c;
    hb_status_t st = hb_cable_create(m, opt, &c);
    CHECKF(st == status && c == NULL, "got %s (%s), expected %s", hb_status_name(st),
           hb_last_error(), hb_status_name(status));
    CHECKF(strstr(hb_last_error(), what) != NULL, "message '%s' lacks '%s'", hb_last_error(),
           what);
    if (st == HB_SUCCESS) hb_cable_destroy(c);
}

/* The size is planned and checked before anything is allocated. */
static void test_size_limits(void)
{
    /* A 10 um cable whose samples came from lines 5 and 6 of "short". */
    hb_sample_t s[] = {{1, 3, 0, 0, 0, 1, -1, 5}, {2, 3, 10, 0, 0, 1, 1, 6}};
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_from_samples(s, 2, "short", &m));
    hb_discretization_t opt;
    hb_discretization_default(&opt);
    CHECK(opt.max_rows == HB_DEFAULT_MAX_ROWS);
    opt.policy = HB_CPOLICY_FIXED;
    /* Compartments shorter than a nanometre. */
    opt.count = 1000000;
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY,
                   "short:6: section 0 (10 um long) would be cut into 1e+06 compartments of "
                   "1e-05 um under the fixed policy");
    opt.count = 5000;
    hb_cable_t *c = NULL;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    CHECK(hb_cable_size(c) == 5001);
    hb_cable_destroy(c);
    /* More rows than max_rows: refused with the estimate; exactly max_rows is fine. */
    opt.count = 100;
    opt.max_rows = 100;
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY,
                   "short: 101 matrix rows (101 compartments in 1 section) under the fixed "
                   "policy");
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY, "expected at most max_rows = 100 rows");
    opt.max_rows = 101;
    c = NULL;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    hb_cable_destroy(c);
    opt.max_rows = 0; /* the default */
    c = NULL;
    CHECK_OK(hb_cable_create(m, &opt, &c));
    hb_cable_destroy(c);
    opt.max_rows = -1;
    expect_refused(m, &opt, HB_ERR_INVALID_VALUE, "max_rows = -1");
    /* d_lambda of 1e-300: an astronomical count, refused before any allocation (it was
     * capped at 1e7 compartments, 700 MB, before). */
    hb_discretization_default(&opt);
    opt.d_lambda = 1e-300;
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY, "under the d-lambda policy");
    opt.frequency_hz = 1e300;
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY, "would be cut into");
    hb_morph_destroy(m);

    /* A 100 m cable of radius 1 nm, at the geometry limits: d-lambda asks for ~8e7
     * compartments, refused with the estimate. */
    hb_sample_t thin[] = {{1, 1, 0, 0, 0, 5, -1, 1}, {2, 3, 1e8, 0, 0, 0.001, 1, 2}};
    CHECK_OK(hb_morph_from_samples(thin, 2, "thin", &m));
    hb_discretization_default(&opt);
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY, "thin:2: section 1 (1e+08 um long)");
    hb_morph_destroy(m);

    /* A star of 100 stems: the rows of all sections count. */
    hb_sample_t star[101];
    star[0] = (hb_sample_t){1, 1, 0, 0, 0, 5, -1, 1};
    for (int k = 1; k <= 100; k++)
        star[k] = (hb_sample_t){k + 1, 3, 100.0 * cos(k), 100.0 * sin(k), 0, 1, 1, k + 1};
    CHECK_OK(hb_morph_from_samples(star, 101, "star", &m));
    hb_discretization_default(&opt);
    opt.policy = HB_CPOLICY_FIXED;
    opt.count = 10;
    opt.max_rows = 1000;
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY,
                   "star: 1001 matrix rows (1001 compartments in 101 sections)");
    opt.scheme = HB_SCHEME_NEURON;
    expect_refused(m, &opt, HB_ERR_MORPHOLOGY,
                   "star: 1112 matrix rows (1010 compartments in 101 sections)");
    hb_morph_destroy(m);

    /* Two coincident samples, no soma sphere: no membrane, a singular matrix. */
    hb_sample_t point[] = {{1, 3, 0, 0, 0, 1, -1, 1}, {2, 3, 0, 0, 0, 1, 1, 2}};
    CHECK_OK(hb_morph_from_samples(point, 2, "point", &m));
    for (int scheme = 0; scheme < 2; scheme++) {
        hb_discretization_default(&opt);
        opt.scheme = (hb_scheme_t)scheme;
        expect_refused(m, &opt, HB_ERR_MORPHOLOGY,
                       "point:1: all 2 samples are at one point and there is no soma sphere");
    }
    hb_morph_destroy(m);
}

int main(void)
{
    test_size_limits();
    test_million_chain();
    test_region_parameters();
    test_steady_state(HB_SCHEME_VERTEX, 1000);
    test_steady_state(HB_SCHEME_VERTEX, 50);
    test_steady_state(HB_SCHEME_NEURON, 1000);
    test_convergence();
    test_geometry();
    test_policies();
    test_root_start_children();
    test_real_morphologies();
    return check_summary("cable");
}
