/*
 * NEURON's Import3d sections (HB_SECTIONS_IMPORT3D) and kept zero radii under the NEURON scheme
 * against NEURON 8.2's own matrices and traces (tests/reference/neuron-soma/, written by
 * tests/neuron/soma_reference.py):
 *   - matrices: multi-point somas of the shared data (l22 10 soma points, ca1_n120 12, l5pc 21) on
 *     the single-precision-exact grid of the script (d_lambda policy), and hand-made cells (a
 *     contour-stack soma, a non-spherical 3-point soma, zero radii, sections Import3d removes;
 *     per-segment policy): area, ri,
 *     a, b and d of every row, relative difference < 1e-9;
 *   - traces: the original files, hh soma, IClamp 2 nA, 20 ms: < 1e-3 mV (NEURON keeps 3-D points
 *     in single precision) and the soma's spikes in NEURON's steps.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hinesbatch.h"
#include "sim_common.h"

#define MATRIX_TOL 1e-9
#define TRACE_TOL_MV 1e-3
#define MAX_SECTIONS 1024
#define MAX_ROWS 8192

typedef struct {
    int parent, nseg;
    double parent_x;
    long end_id;
} ref_section_t;

typedef struct {
    int sec, kind;
    double x, area, ri, a, b, d;
} ref_row_t;

typedef struct {
    int n_sec, n_rows;
    ref_section_t sec[MAX_SECTIONS];
    ref_row_t row[MAX_ROWS];
} ref_matrix_t;

static char ref_dir[1024];

/* tests/reference/neuron-soma beside this file. */
static void find_ref_dir(void)
{
    snprintf(ref_dir, sizeof ref_dir, "%s", __FILE__);
    char *slash = strrchr(ref_dir, '/');
    if (slash) *slash = '\0';
    else snprintf(ref_dir, sizeof ref_dir, ".");
    strncat(ref_dir, "/reference/neuron-soma", sizeof ref_dir - strlen(ref_dir) - 1);
}

static int read_matrix(const char *name, ref_matrix_t *r)
{
    char path[1200], line[512], sec_name[64];
    snprintf(path, sizeof path, "%s/%s_matrix.txt", ref_dir, name);
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    r->n_sec = r->n_rows = 0;
    if (!f) return 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#') continue;
        if (line[0] == 'S') {
            ref_section_t *s = &r->sec[r->n_sec];
            int k;
            if (r->n_sec < MAX_SECTIONS &&
                sscanf(line, "S %d %63s %d %lf %d %ld", &k, sec_name, &s->parent, &s->parent_x,
                       &s->nseg, &s->end_id) == 6 && k == r->n_sec)
                r->n_sec++;
            continue;
        }
        ref_row_t *w = &r->row[r->n_rows];
        if (r->n_rows < MAX_ROWS && sscanf(line, "%d %lf %d %lf %lf %lf %lf %lf", &w->sec, &w->x,
                                           &w->kind, &w->area, &w->ri, &w->a, &w->b, &w->d) == 8)
            r->n_rows++;
    }
    fclose(f);
    return r->n_rows;
}

/* The script's grid: x, y, z to 1/8 um, radius to 1/16 um (at least 1/16), as SWC text. */
static char *quantized_swc(const char *path, size_t *length)
{
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    if (!f) return NULL;
    size_t cap = 1 << 16, len = 0;
    char *text = malloc(cap), line[1024];
    while (text && fgets(line, sizeof line, f)) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        char id[64], type[64], parent[64];
        double x, y, z, r;
        if (sscanf(line, "%63s %63s %lf %lf %lf %lf %63s", id, type, &x, &y, &z, &r, parent) != 7)
            continue;
        if (cap - len < 512) text = realloc(text, cap *= 2);
        if (!text) break;
        len += (size_t)snprintf(text + len, cap - len, "%s %s %.4f %.4f %.4f %.4f %s\n", id, type,
                                rint(x * 8.0) / 8.0, rint(y * 8.0) / 8.0, rint(z * 8.0) / 8.0,
                                fmax(rint(r * 16.0) / 16.0, 1.0 / 16.0), parent);
    }
    fclose(f);
    *length = len;
    return text;
}

static hb_morph_t *load_cell(const char *name, const char *file, int quantize, int rule, int keep)
{
    hb_swc_options_t swc;
    hb_swc_options_default(&swc);
    swc.sections = rule;
    swc.keep_zero_radius = keep;
    hb_morph_t *morph = NULL;
    char path[1200];
    if (file) snprintf(path, sizeof path, "%s/morphologies/%s", HB_DATA_DIR, file);
    else snprintf(path, sizeof path, "%s/%s.swc", ref_dir, name);
    if (quantize) {
        size_t length = 0;
        char *text = quantized_swc(path, &length);
        if (text) CHECK_OK(hb_morph_parse_swc(text, length, name, &swc, &morph));
        free(text);
    } else {
        CHECK_OK(hb_morph_load_swc(path, &swc, &morph));
    }
    return morph;
}

static void neuron_disc(hb_discretization_t *disc, hb_cpolicy_t policy)
{
    hb_discretization_default(disc);
    disc->scheme = HB_SCHEME_NEURON;
    disc->policy = policy;
    disc->ra_ohm_cm = 100.0;
    disc->cm_uf_cm2 = 1.0;
}

/* Our node of each NEURON row, by (section end id, kind, x); -1 when missing. */
static int match(const hb_cable_t *c, const ref_matrix_t *r, int *map)
{
    int m = hb_cable_size(c), matched = 0;
    long *end_id = calloc((size_t)m, sizeof *end_id);
    hb_node_info_t info;
    for (int j = 0; j < m; j++) {
        hb_cable_node(c, j, &info);
        if (info.kind == HB_NODE_SECTION_END) end_id[info.section] = info.sample_id;
    }
    for (int k = 0; k < r->n_rows; k++) {
        const ref_row_t *w = &r->row[k];
        map[k] = -1;
        for (int j = 0; j < m && map[k] < 0; j++) {
            hb_cable_node(c, j, &info);
            if ((int)info.kind == w->kind && end_id[info.section] == r->sec[w->sec].end_id &&
                fabs(info.x - w->x) < 1e-9)
                map[k] = j;
        }
        matched += map[k] >= 0;
    }
    free(end_id);
    return matched;
}

static double rel(double ours, double ref) { return fabs(ours - ref) / fmax(fabs(ref), 1e-300); }

/*
 * The worst relative difference of area, ri, a, b, d over all rows (INFINITY when the nodes do not
 * correspond); one backward-Euler step, pas g = 1e-4 S/cm2, dt 0.025 ms.
 */
static double compare_matrix(const hb_morph_t *morph, const ref_matrix_t *r, hb_cpolicy_t policy,
                             const char *name, int verbose)
{
    hb_discretization_t disc;
    neuron_disc(&disc, policy);
    hb_cable_t *c = NULL;
    if (hb_cable_create(morph, &disc, &c) != HB_SUCCESS) {
        CHECKF(0, "%s: %s", name, hb_last_error());
        return INFINITY;
    }
    int m = hb_cable_size(c);
    double worst = INFINITY;
    int *map = malloc((size_t)r->n_rows * sizeof *map);
    double *buf = calloc((size_t)m * 6, sizeof *buf);
    double *u = buf, *l = u + m, *d = l + m, *rhs = d + m, *v = rhs + m, *g = v + m;
    int matched = match(c, r, map);
    if (verbose)
        printf("%s: %d rows (NEURON %d), %d matched\n", name, m, r->n_rows, matched);
    if (m != r->n_rows || matched != r->n_rows) goto out;
    hb_node_info_t info;
    for (int j = 0; j < m; j++) {
        hb_cable_node(c, j, &info);
        v[j] = -65.0;
        g[j] = info.area_um2 > 0.0 ? 1e-4 : 0.0;
    }
    hb_cable_offdiag(c, u, l);
    hb_cable_step_system(c, 0.025, u, l, v, g, NULL, NULL, d, rhs);
    double w_area = 0, w_ri = 0, w_a = 0, w_b = 0, w_d = 0;
    for (int k = 0; k < r->n_rows; k++) {
        const ref_row_t *w = &r->row[k];
        int j = map[k];
        hb_cable_node(c, j, &info);
        w_area = fmax(w_area, rel(info.area_um2 > 0.0 ? info.area_um2 : 100.0, w->area));
        w_d = fmax(w_d, rel(d[j], w->d));
        if (w->kind == 0) continue; /* the root: no parent */
        w_ri = fmax(w_ri, rel(info.r_axial_mohm, w->ri));
        w_a = fmax(w_a, rel(u[j], w->a));
        w_b = fmax(w_b, rel(l[j], w->b));
    }
    worst = fmax(fmax(w_area, w_ri), fmax(w_a, fmax(w_b, w_d)));
    if (verbose)
        printf("%s: max relative difference area %.2g ri %.2g a %.2g b %.2g d %.2g\n", name, w_area,
               w_ri, w_a, w_b, w_d);
out:
    free(map);
    free(buf);
    hb_cable_destroy(c);
    return worst;
}

static ref_matrix_t ref;

static void test_matrix(const char *name, const char *file, hb_cpolicy_t policy, int keep)
{
    CHECKF(read_matrix(name, &ref) >= 10, "%s: reference rows %d", name, ref.n_rows);
    hb_morph_t *morph = load_cell(name, file, file != NULL, HB_SECTIONS_IMPORT3D, keep);
    if (!morph) return;
    double worst = compare_matrix(morph, &ref, policy, name, 1);
    CHECKF(worst < MATRIX_TOL, "%s: matrix differs from NEURON's by %.3g (relative)", name, worst);
    hb_morph_destroy(morph);
}

/* hinesbatch's own rules (the default) do not give NEURON's matrix on a multi-point soma. */
static void test_default_rules_differ(const char *name, const char *file)
{
    CHECK(read_matrix(name, &ref) > 10);
    hb_morph_t *morph = load_cell(name, file, file != NULL, HB_SECTIONS_HINESBATCH, 0);
    if (!morph) return;
    double worst = compare_matrix(morph, &ref, HB_CPOLICY_PER_SEGMENT, name, 0);
    CHECKF(!(worst < MATRIX_TOL), "%s: hinesbatch's own soma rules match NEURON (%.3g)", name, worst);
    hb_morph_destroy(morph);
}

/* NAME_trace.txt: soma, stem and tip voltages and the soma's spikes. */
static void test_trace(const char *name, const char *file, int keep)
{
    char path[1200], line[512];
    snprintf(path, sizeof path, "%s/%s_trace.txt", ref_dir, name);
    FILE *f = fopen(path, "r");
    CHECKF(f != NULL, "cannot open %s", path);
    if (!f) return;
    long end_id[3] = {-1, -1, -1};
    double x[3] = {0, 0, 0}, want[64];
    int n_probe = 0, n_want = 0;
    trace_t tr[3];
    memset(tr, 0, sizeof tr);
    int cap = 0;
    while (fgets(line, sizeof line, f)) {
        const char *p;
        if (line[0] == '#') {
            if (strncmp(line, "# probe ", 8) == 0 && n_probe < 3 && (p = strstr(line, "end_swc_id=")) &&
                sscanf(p, "end_swc_id=%ld x=%lf", &end_id[n_probe], &x[n_probe]) == 2)
                n_probe++;
            if (strncmp(line, "# spikes", 8) == 0 && (p = strstr(line, "): "))) {
                int used;
                for (p += 3; n_want < 64 && sscanf(p, "%lf%n", &want[n_want], &used) == 1; p += used)
                    n_want++;
            }
            continue;
        }
        double t, v[3];
        if (sscanf(line, "%lf %lf %lf %lf", &t, &v[0], &v[1], &v[2]) != 4) continue;
        if (tr[0].n == cap) {
            cap = cap ? 2 * cap : 128;
            for (int k = 0; k < 3; k++) {
                tr[k].t = realloc(tr[k].t, (size_t)cap * sizeof(double));
                tr[k].v = realloc(tr[k].v, (size_t)cap * sizeof(double));
            }
        }
        for (int k = 0; k < 3; k++) {
            tr[k].t[tr[k].n] = t;
            tr[k].v[tr[k].n++] = v[k];
        }
    }
    fclose(f);
    CHECKF(n_probe == 3 && tr[0].n > 50 && n_want > 0, "%s: header probes %d rows %d spikes %d", name,
           n_probe, tr[0].n, n_want);
    hb_morph_t *morph = load_cell(name, file, 0, HB_SECTIONS_IMPORT3D, keep);
    hb_model_t *model = NULL;
    hb_sim_t *sim = NULL;
    hb_discretization_t disc;
    neuron_disc(&disc, HB_CPOLICY_PER_SEGMENT);
    if (morph) CHECK_OK(hb_model_create(morph, &disc, &model));
    if (!model || n_probe != 3) goto out;
    hb_mech_t pas, hh;
    hb_mech_default(HB_MECH_PAS, &pas);
    hb_mech_default(HB_MECH_HH, &hh);
    pas.g_pas = 1e-4;
    pas.e_pas = -65.0;
    CHECK_OK(hb_model_insert(model, HB_REGION_ALL, &pas));
    CHECK_OK(hb_model_insert(model, 1, &hh));
    CHECK_OK(hb_model_add_iclamp(model, &(hb_location_t){HB_LOC_SECTION, 0, 0, 0.5, 0}, 1.0, 1e9, 2.0));
    for (int k = 0; k < 3; k++) {
        hb_location_t end = {HB_LOC_SAMPLE, end_id[k], 0, 0.0, 0};
        hb_node_info_t info;
        int node = -1;
        CHECK_OK(hb_model_locate(model, &end, &node));
        if (node < 0) goto out;
        hb_cable_node(hb_model_cable(model), node, &info);
        add_probe(model, at_section(info.section, x[k]), k == 0 ? "soma" : k == 1 ? "stem" : "tip",
                  k == 0, 0.0);
    }
    hb_sim_options_t opt = sim_options(0.025, 20.0, 0.25);
    sim = run_model(model, &opt);
    if (!sim) goto out;
    double worst_v, worst_t;
    const int n_spikes = against_neuron(sim, tr, 3, want, n_want, name, &worst_v, &worst_t);
    printf("%s trace: %d spikes (NEURON %d), max |t - NEURON| %.3g ms, max |v - NEURON| %.3g mV\n",
           name, n_spikes, n_want, worst_t, worst_v);
    CHECKF(worst_t < 1e-6, "%s: spike times differ by %.3g ms", name, worst_t);
    CHECKF(worst_v < TRACE_TOL_MV, "%s: traces differ by %.3g mV", name, worst_v);
out:
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
    for (int k = 0; k < 3; k++) trace_free(&tr[k]);
}

static hb_status_t cable_of(const char *text, int rule, int keep, hb_scheme_t scheme,
                            hb_cpolicy_t policy, double *max_r_axial)
{
    hb_swc_options_t swc;
    hb_swc_options_default(&swc);
    swc.sections = rule;
    swc.keep_zero_radius = keep;
    hb_morph_t *morph = NULL;
    hb_cable_t *c = NULL;
    hb_status_t st = hb_morph_parse_swc(text, strlen(text), "cell.swc", &swc, &morph);
    if (st != HB_SUCCESS) return st;
    hb_discretization_t disc;
    neuron_disc(&disc, policy);
    disc.scheme = scheme;
    st = hb_cable_create(morph, &disc, &c);
    hb_node_info_t info;
    for (int j = 0; st == HB_SUCCESS && max_r_axial && j < hb_cable_size(c); j++) {
        hb_cable_node(c, j, &info);
        if (j > 0) *max_r_axial = fmax(*max_r_axial, info.r_axial_mohm);
    }
    hb_cable_destroy(c);
    hb_morph_destroy(morph);
    return st;
}

static void check_error(hb_status_t st, hb_status_t want, const char *fragment)
{
    CHECKF(st == want && strstr(hb_last_error(), fragment) != NULL, "status %s, message '%s'; expected %s and '%s'",
           hb_status_name(st), hb_last_error(), hb_status_name(want), fragment);
}

/* Kept zero radii and Import3d's id order: where NEURON's rules apply and where they are refused. */
static void test_errors(void)
{
    const char *zero = "1 1 0 0 0 5 -1\n2 3 10 0 0 0 1\n3 3 20 0 0 1 2\n4 3 30 0 0 1 3\n";
    double r = 0.0;
    CHECK_OK(cable_of(zero, HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT, &r));
    CHECKF(r > 1e14, "kept zero radius: largest axial resistance %g Mohm; expected NEURON's ~1e15", r);
    r = 0.0;
    CHECK_OK(cable_of(zero, HB_SECTIONS_IMPORT3D, 0, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT, &r));
    CHECKF(r < 1e3, "repaired zero radius: largest axial resistance %g Mohm", r);
    check_error(cable_of(zero, HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_VERTEX, HB_CPOLICY_PER_SEGMENT, NULL),
                HB_ERR_MORPHOLOGY, "sample 2 has radius 0 (kept: keep_zero_radius); the vertex scheme");
    check_error(cable_of(zero, HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_NEURON, HB_CPOLICY_D_LAMBDA, NULL),
                HB_ERR_MORPHOLOGY, "sample 2 has radius 0 (kept) and is not the end of its section");
    /* A radius 0 at a section's end is fine for lambda_f. */
    const char *tip = "1 1 0 0 0 5 -1\n2 3 10 0 0 1 1\n3 3 20 0 0 0 2\n";
    CHECK_OK(cable_of(tip, HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_NEURON, HB_CPOLICY_D_LAMBDA, NULL));
    /* Zero radius over a whole compartment: no membrane. */
    const char *flat = "1 1 0 0 0 5 -1\n2 3 10 0 0 0 1\n3 3 20 0 0 0 2\n";
    check_error(cable_of(flat, HB_SECTIONS_IMPORT3D, 1, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT, NULL),
                HB_ERR_MORPHOLOGY, "has no membrane area");
    /* Import3d reads parents before children by id. */
    const char *order = "1 1 0 0 0 5 -1\n2 3 20 0 0 1 3\n3 3 10 0 0 1 1\n";
    CHECK_OK(cable_of(order, HB_SECTIONS_HINESBATCH, 0, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT, NULL));
    check_error(cable_of(order, HB_SECTIONS_IMPORT3D, 0, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT, NULL),
                HB_ERR_MORPHOLOGY, "cell.swc:2: sample 2 has parent 3, a larger id");
    /* A one-point stem: removed with a warning, as NEURON's Import3d removes it. */
    hb_morph_t *morph = load_cell("removed", NULL, 0, HB_SECTIONS_IMPORT3D, 0);
    CHECKF(morph && hb_morph_warning_count(morph) == 1 &&
               strstr(hb_morph_warning(morph, 0), "removed.swc:5: Import3d: 1 section of one point or "
                                                  "of two coincident points (first: the one ending at "
                                                  "sample 4) removed") != NULL,
           "warning: %s", morph && hb_morph_warning_count(morph) ? hb_morph_warning(morph, 0) : "none");
    hb_morph_destroy(morph);
    check_error(cable_of(zero, 7, 0, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT, NULL), HB_ERR_INVALID_VALUE,
                "section rule 7");
    check_error(cable_of(zero, HB_SECTIONS_IMPORT3D, 2, HB_SCHEME_NEURON, HB_CPOLICY_PER_SEGMENT, NULL),
                HB_ERR_INVALID_VALUE, "keep_zero_radius 2");
}

int main(void)
{
    find_ref_dir();
    test_errors();
    test_matrix("contour", NULL, HB_CPOLICY_PER_SEGMENT, 0);
    test_matrix("soma3", NULL, HB_CPOLICY_PER_SEGMENT, 0);
    test_matrix("zero", NULL, HB_CPOLICY_PER_SEGMENT, 1);
    test_matrix("removed", NULL, HB_CPOLICY_PER_SEGMENT, 0);
    test_matrix("l22", "l22.CNG.swc", HB_CPOLICY_D_LAMBDA, 0);
    test_matrix("ca1_n120", "morph_ca1_n120.swc", HB_CPOLICY_D_LAMBDA, 0);
    test_matrix("l5pc", "morph_l5pc_with_axon.swc", HB_CPOLICY_D_LAMBDA, 0);
    test_default_rules_differ("contour", NULL);
    test_trace("contour", NULL, 0);
    test_trace("soma3", NULL, 0);
    test_trace("zero", NULL, 1);
    test_trace("removed", NULL, 0);
    test_trace("l22", "l22.CNG.swc", 0);
    test_trace("ca1_n120", "morph_ca1_n120.swc", 0);
    test_trace("l5pc", "morph_l5pc_with_axon.swc", 0);
    return check_summary("neuron_soma");
}
