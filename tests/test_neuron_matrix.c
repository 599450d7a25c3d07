/*
 * NEURON-compatible mode against NEURON 8.2's own Hines matrices and passive
 * traces (data/reference/neuron-matrix/, one segment per SWC segment), with
 * hinesbatch's section rules and with Import3d's (test_neuron_soma.c covers the somas where
 * they differ).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hinesbatch.h"

#define MAX_ROWS 4096

typedef struct {
    int i, parent, kind;
    long swc_id;
    double a, b, d, rhs, dv, v_before, v_after, area, ri, x;
    char sec[64];
} neuron_row_t;

static int read_matrix(const char *path, neuron_row_t *rows)
{
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    if (!f) return 0;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f) && n < MAX_ROWS) {
        if (line[0] == '#') continue;
        neuron_row_t *r = &rows[n];
        if (sscanf(line, "%d %d %d %ld %lf %lf %lf %lf %lf %lf %lf %lf %lf %63s %lf", &r->i,
                   &r->parent, &r->kind, &r->swc_id, &r->a, &r->b, &r->d, &r->rhs, &r->dv,
                   &r->v_before, &r->v_after, &r->area, &r->ri, r->sec, &r->x) == 15)
            n++;
    }
    fclose(f);
    return n;
}

/* SWC id ending the section `sec`: the id of its kind-2 (x = 1) row. */
static long section_end_id(const neuron_row_t *rows, int n, const char *sec)
{
    for (int k = 0; k < n; k++)
        if (rows[k].kind == 2 && strcmp(rows[k].sec, sec) == 0) return rows[k].swc_id;
    return -2;
}

static double rel(double a, double b, double scale) { return fabs(a - b) / scale; }

static double max_abs(const double *x, int n)
{
    double m = 0.0;
    for (int i = 0; i < n; i++)
        if (fabs(x[i]) > m) m = fabs(x[i]);
    return m;
}

/* How the SWC file becomes sections: on a one-point soma both rules give NEURON's sections. */
static hb_sections_rule_t rule = HB_SECTIONS_HINESBATCH;

static hb_cable_t *neuron_cable(const char *name, hb_morph_t **morph)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/%s.swc", HB_DATA_DIR, name);
    hb_swc_options_t swc;
    hb_swc_options_default(&swc);
    swc.sections = rule;
    CHECK_OK(hb_morph_load_swc(path, &swc, morph));
    if (!*morph) return NULL;
    hb_discretization_t opt;
    hb_discretization_default(&opt);
    opt.scheme = HB_SCHEME_NEURON;
    opt.policy = HB_CPOLICY_PER_SEGMENT;
    opt.ra_ohm_cm = 100.0;
    opt.cm_uf_cm2 = 1.0;
    hb_cable_t *c = NULL;
    CHECK_OK(hb_cable_create(*morph, &opt, &c));
    return c;
}

/* map[neuron row] = our node, matched by (kind, section end id, x). */
static int match_nodes(const hb_cable_t *c, const neuron_row_t *rows, int n, int *map)
{
    int m = hb_cable_size(c);
    long *end_id = calloc((size_t)m, sizeof *end_id); /* per our section index */
    hb_node_info_t info;
    for (int j = 0; j < m; j++) {
        hb_cable_node(c, j, &info);
        if (info.kind == HB_NODE_SECTION_END && info.section < m) end_id[info.section] = info.sample_id;
    }
    int matched = 0;
    for (int k = 0; k < n; k++) {
        long want = section_end_id(rows, n, rows[k].sec);
        map[k] = -1;
        for (int j = 0; j < m; j++) {
            hb_cable_node(c, j, &info);
            if ((int)info.kind == rows[k].kind && end_id[info.section] == want &&
                fabs(info.x - rows[k].x) < 1e-9) {
                map[k] = j;
                matched++;
                break;
            }
        }
    }
    free(end_id);
    return matched;
}

static void test_matrix(const char *name, int expect_nodes, int expect_compartments)
{
    static neuron_row_t rows[MAX_ROWS];
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/%s_matrix.txt", HB_DATA_DIR, name);
    int n = read_matrix(path, rows);
    CHECKF(n == expect_nodes, "%s: %d rows read", name, n);
    hb_morph_t *morph = NULL;
    hb_cable_t *c = neuron_cable(name, &morph);
    if (!c || n != expect_nodes) goto out;
    CHECKF(hb_cable_size(c) == n, "%s: %d nodes vs NEURON's %d", name, hb_cable_size(c), n);
    CHECK(hb_cable_compartments(c) == expect_compartments);
    int map[MAX_ROWS];
    int matched = match_nodes(c, rows, n, map);
    CHECKF(matched == n, "%s: %d of %d NEURON nodes matched", name, matched, n);
    if (matched != n) goto out;

    /* Geometry: NEURON stores 3-D points in single precision. */
    const int *parent = hb_cable_parent(c);
    double worst_area = 0, worst_ri = 0;
    int parents_ok = 1;
    hb_node_info_t info;
    for (int k = 0; k < n; k++) {
        hb_cable_node(c, map[k], &info);
        double area = info.area_um2 > 0 ? info.area_um2 : 100.0;
        worst_area = fmax(worst_area, rel(area, rows[k].area, rows[k].area));
        if (rows[k].parent >= 0) {
            worst_ri = fmax(worst_ri, rel(info.r_axial_mohm, rows[k].ri, rows[k].ri));
            parents_ok &= parent[map[k]] == map[rows[k].parent];
        } else {
            parents_ok &= parent[map[k]] == -1;
        }
    }
    CHECK(parents_ok);
    CHECKF(worst_area < 2e-6, "%s: area rel diff %.3g", name, worst_area);
    CHECKF(worst_ri < 2e-6, "%s: ri rel diff %.3g", name, worst_ri);

    /* Coefficients of one backward-Euler step: pas g = 1e-4 S/cm2, e = -65 mV,
     * IClamp 0.1 nA at soma(0.5), dt = 0.025 ms, from NEURON's voltages. */
    int m = n;
    double *buf = calloc((size_t)m * 9, sizeof *buf);
    double *u = buf, *l = u + m, *d = l + m, *rhs = d + m, *v = rhs + m, *g = v + m,
           *im = g + m, *inj = im + m, *dv_ref = inj + m;
    for (int k = 0; k < n; k++) {
        int j = map[k];
        v[j] = rows[k].v_before;
        g[j] = 1e-4;
        im[j] = 1e-4 * (rows[k].v_before + 65.0);
        dv_ref[j] = rows[k].dv;
        if (k == 1) inj[j] = 0.1; /* soma(0.5) is NEURON's node 1 */
    }
    CHECK_OK(hb_cable_offdiag(c, u, l));
    CHECK_OK(hb_cable_step_system(c, 0.025, u, l, v, g, im, inj, d, rhs));
    double wa = 0, wb = 0, wd = 0, wr = 0, rhs_scale = 0;
    for (int k = 0; k < n; k++) rhs_scale = fmax(rhs_scale, fabs(rows[k].rhs));
    for (int k = 1; k < n; k++) {
        int j = map[k];
        wa = fmax(wa, rel(u[j], rows[k].a, fabs(rows[k].a)));
        wb = fmax(wb, rel(l[j], rows[k].b, fabs(rows[k].b)));
    }
    for (int k = 0; k < n; k++) {
        int j = map[k];
        wd = fmax(wd, rel(d[j], rows[k].d, fabs(rows[k].d)));
        wr = fmax(wr, rel(rhs[j], rows[k].rhs, rhs_scale));
    }
    CHECKF(wa < 2e-6 && wb < 2e-6, "%s: a %.3g b %.3g", name, wa, wb);
    CHECKF(wd < 2e-6, "%s: d rel diff %.3g", name, wd);
    CHECKF(wr < 2e-6, "%s: rhs rel diff %.3g", name, wr);

    /* Our solve of our system against NEURON's dv. */
    CHECK_OK(hb_hines_solve(m, parent, u, l, d, rhs));
    double scale = max_abs(dv_ref, m), wdv = 0;
    for (int j = 0; j < m; j++) wdv = fmax(wdv, rel(rhs[j], dv_ref[j], scale));
    CHECKF(wdv < 1e-5, "%s: dv rel diff %.3g", name, wdv);

    /* NEURON's own coefficients through our solver: the same numbers. */
    int *np = malloc((size_t)n * sizeof *np);
    for (int k = 0; k < n; k++) {
        np[k] = rows[k].parent;
        u[k] = rows[k].a;
        l[k] = rows[k].b;
        d[k] = rows[k].d;
        rhs[k] = rows[k].rhs;
    }
    u[0] = l[0] = 0;
    CHECK_OK(hb_hines_solve(n, np, u, l, d, rhs));
    double exact = 0;
    for (int k = 0; k < n; k++) exact = fmax(exact, rel(rhs[k], rows[k].dv, fabs(rows[k].dv)));
    CHECKF(exact < 1e-12, "%s: NEURON's rows solved, rel diff %.3g", name, exact);
    free(np);
    free(buf);
out:
    hb_cable_destroy(c);
    hb_morph_destroy(morph);
}

/*
 * The passive trace: backward Euler from rest with an IClamp at soma(0.5),
 * against NEURON's soma and tip voltages (within 0.5 mV; expect far better).
 */
static void test_passive_trace(const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/%s_trace_pas.txt", HB_DATA_DIR, name);
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    if (!f) return;
    double del = -1, dur = -1, amp = 0;
    int tip_node = -1;
    char line[1024];
    static double ref_t[20000], ref_soma[20000], ref_tip[20000];
    int nref = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p;
        if (line[0] == '#') {
            if ((p = strstr(line, "del="))) sscanf(p, "del=%lf", &del);
            if ((p = strstr(line, "dur="))) sscanf(p, "dur=%lf", &dur);
            if ((p = strstr(line, "amp="))) sscanf(p, "amp=%lf", &amp);
            if ((p = strstr(line, " node "))) sscanf(p, " node %d", &tip_node);
            continue;
        }
        if (nref < 20000 &&
            sscanf(line, "%lf %lf %lf", &ref_t[nref], &ref_soma[nref], &ref_tip[nref]) == 3)
            nref++;
    }
    fclose(f);
    CHECKF(del >= 0 && amp != 0 && tip_node > 0 && nref > 10,
           "%s: header del=%g amp=%g node=%d rows=%d", name, del, amp, tip_node, nref);
    if (dur < 0) dur = 1e9;

    /* NEURON's node numbering of the tip, through the matrix file. */
    static neuron_row_t rows[MAX_ROWS];
    snprintf(path, sizeof path, "%s/reference/neuron-matrix/%s_matrix.txt", HB_DATA_DIR, name);
    int n = read_matrix(path, rows);
    hb_morph_t *morph = NULL;
    hb_cable_t *c = neuron_cable(name, &morph);
    int map[MAX_ROWS];
    if (!c || n != hb_cable_size(c) || match_nodes(c, rows, n, map) != n || tip_node >= n) {
        CHECKF(0, "%s: cannot map nodes", name);
        goto out;
    }
    int m = n, soma = map[1], tip = map[tip_node];
    double *buf = calloc((size_t)m * 8, sizeof *buf);
    double *u = buf, *l = u + m, *d = l + m, *rhs = d + m, *v = rhs + m, *g = v + m,
           *im = g + m, *inj = im + m;
    hb_node_info_t info;
    for (int j = 0; j < m; j++) {
        v[j] = -65.0;
        hb_cable_node(c, j, &info);
        g[j] = info.area_um2 > 0 ? 1e-4 : 0.0;
    }
    hb_cable_offdiag(c, u, l);
    const double dt = 0.025;
    double worst = 0.0;
    int k = 0;
    for (int step = 0; k < nref; step++) {
        double t = step * dt;
        if (fabs(t - ref_t[k]) < 1e-9) {
            worst = fmax(worst, fmax(fabs(v[soma] - ref_soma[k]), fabs(v[tip] - ref_tip[k])));
            k++;
        }
        for (int j = 0; j < m; j++) im[j] = g[j] * (v[j] + 65.0);
        /* NEURON evaluates the IClamp at t + dt/2 in the step from t. */
        double tm = t + 0.5 * dt;
        inj[soma] = (tm >= del && tm < del + dur) ? amp : 0.0;
        hb_cable_step_system(c, dt, u, l, v, g, im, inj, d, rhs);
        hb_hines_solve(m, hb_cable_parent(c), u, l, d, rhs);
        for (int j = 0; j < m; j++) v[j] += rhs[j];
    }
    printf("%s passive trace: %d samples, max |v - NEURON| = %.3g mV\n", name, k, worst);
    CHECKF(worst < 0.5, "%s: passive trace differs by %.3g mV", name, worst);
    CHECKF(worst < 1e-3, "%s: passive trace differs by %.3g mV (expected float-geometry level)",
           name, worst);
    free(buf);
out:
    hb_cable_destroy(c);
    hb_morph_destroy(morph);
}

int main(void)
{
    for (int k = 0; k < 2; k++) {
        rule = k == 0 ? HB_SECTIONS_HINESBATCH : HB_SECTIONS_IMPORT3D;
        test_matrix("small", 27, 19);
        test_matrix("cell300", 339, 309);
        test_passive_trace("small");
        test_passive_trace("cell300");
    }
    return check_summary("neuron_matrix");
}
