/*
 * Neurolucida ASC read as NEURON 8.2's Import3d_Neurolucida3 + Import3d_GUI read it, against
 * NEURON's own sections (tests/reference/neuron-asc/, written by tests/neuron/asc_reference.py):
 * BluePyOpt's L5PC (C060114A7.asc), a small hand-written file and one with a soma drawn as a
 * stack of three contours (contourstack2centroid): the same sections in the same
 * order (type, parent, connection point), the same 3-D points within 1e-9 relative (NEURON's
 * double-precision values before it stores them in single precision: every point of the small
 * file, the first, last and sums of the L5PC's), the same d_lambda segment counts, and section
 * areas within 1e-7 relative (single-precision rounding) from the points rounded as NEURON stores them
 * (1e-4 from the points themselves). Then malformed
 * input: each error names file:line:column and what was expected.
 *
 * Usage: test_asc [REFERENCE_DIR]  (default: tests/reference/neuron-asc beside this file; the
 * asc_neuron test passes a folder the script has just written with the installed NEURON).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/morphology.h"
#include "hinesbatch.h"

#define POINT_TOL 1e-9
#define AREA_TOL 1e-7   /* areas from single-precision points, as NEURON's: its rounding */
#define AREA64_TOL 1e-4 /* from the double-precision points: NEURON rounds 265.18 um to 2e-5 um */

static char ref_dir[1024];
static char src_ref_dir[1024];

static void find_src_ref_dir(void)
{
    snprintf(src_ref_dir, sizeof src_ref_dir, "%s", __FILE__);
    char *slash = strrchr(src_ref_dir, '/');
    if (slash) *slash = '\0';
    else snprintf(src_ref_dir, sizeof src_ref_dir, ".");
    strncat(src_ref_dir, "/reference/neuron-asc", sizeof src_ref_dir - strlen(src_ref_dir) - 1);
}

static int close_rel(double a, double b, double tol)
{
    return fabs(a - b) <= tol * fmax(1.0, fabs(b));
}

/* NEURON 8.2 keeps 3-D points in single precision (its arc lengths in double): m's points
 * rounded so, for areas to compare to rounding. */
static void single_precision(hb_morph_t *m)
{
    for (int i = 0; i < m->n_samples; i++) {
        m->samples[i].x = (float)m->samples[i].x;
        m->samples[i].y = (float)m->samples[i].y;
        m->samples[i].z = (float)m->samples[i].z;
    }
    for (int i = 0; i < m->n_sections; i++) {
        hb_section_t *h = &m->sections[i];
        for (int k = 0; k < h->n_points; k++) {
            h->radius[k] = 0.5 * (float)(2.0 * h->radius[k]);
            if (k == 0) continue;
            const hb_sample_t *a = &m->samples[h->sample[k - 1]], *b = &m->samples[h->sample[k]];
            double dx = b->x - a->x, dy = b->y - a->y, dz = b->z - a->z;
            h->arc[k] = h->arc[k - 1] + sqrt(dx * dx + dy * dy + dz * dz);
        }
        h->length = h->arc[h->n_points - 1];
    }
}

/* Per-section compartments and area of the NEURON-scheme cable, d_lambda policy. */
static int section_cable(const hb_morph_t *m, int *nseg, double *area)
{
    hb_discretization_t d;
    hb_discretization_default(&d);
    d.policy = HB_CPOLICY_D_LAMBDA;
    d.scheme = HB_SCHEME_NEURON;
    d.ra_ohm_cm = 100;
    d.cm_uf_cm2 = 1;
    hb_cable_t *cable = NULL;
    hb_status_t st = hb_cable_create(m, &d, &cable);
    CHECKF(st == HB_SUCCESS, "cable: %s", hb_last_error());
    if (st != HB_SUCCESS) return -1;
    for (int i = 0; i < m->n_sections; i++) nseg[i] = 0, area[i] = 0.0;
    for (int k = 0; k < hb_cable_size(cable); k++) {
        hb_node_info_t info;
        hb_cable_node(cable, k, &info);
        if (info.kind != HB_NODE_COMPARTMENT) continue;
        nseg[info.section]++;
        area[info.section] += info.area_um2;
    }
    hb_cable_destroy(cable);
    return 0;
}

/* Compares NAME.asc (in dir_asc) with REF/NAME.txt; returns the sections compared. */
static int compare(const char *asc_path, const char *ref_path)
{
    FILE *f = fopen(ref_path, "r");
    CHECKF(f != NULL, "cannot open %s", ref_path);
    if (!f) return 0;
    hb_morph_t *m = NULL;
    hb_status_t st = hb_morph_load(asc_path, NULL, &m);
    CHECKF(st == HB_SUCCESS, "%s: %s", asc_path, hb_last_error());
    if (st != HB_SUCCESS) {
        fclose(f);
        return 0;
    }
    int *nseg = check_malloc((size_t)m->n_sections * sizeof *nseg);
    double *area = check_malloc((size_t)m->n_sections * sizeof *area);
    int cable_ok = section_cable(m, nseg, area) == 0;
    /* areas as NEURON computes them, from its single-precision points */
    hb_morph_t *m32 = NULL;
    CHECK_OK(hb_morph_load(asc_path, NULL, &m32));
    int *nseg32 = check_malloc((size_t)m->n_sections * sizeof *nseg32);
    double *area32 = check_malloc((size_t)m->n_sections * sizeof *area32);
    if (m32) single_precision(m32);
    cable_ok = cable_ok && m32 && section_cable(m32, nseg32, area32) == 0;
    double worst_area64 = 0.0;
    char line[512], name[64];
    int n_ref = -1, sec = -1, pt = 0, bad_pts = 0, bad_secs = 0, bad_nseg = 0, bad_area = 0;
    double worst_pt = 0.0, worst_area = 0.0, sum[4] = {0, 0, 0, 0};
    while (fgets(line, sizeof line, f)) {
        double v[4];
        int type, parent, n3d, ns;
        double px, a;
        if (line[0] == '#') continue;
        if (sscanf(line, "sections %d", &n_ref) == 1) {
            CHECKF(n_ref == m->n_sections, "%s: %d sections, NEURON %d", asc_path, m->n_sections, n_ref);
            if (n_ref != m->n_sections) break;
        } else if (sscanf(line, "s %63s %d %d %lf %d %d %lf", name, &type, &parent, &px, &n3d, &ns, &a) == 7) {
            const hb_section_t *h = &m->sections[++sec];
            pt = 0;
            if (h->type != type || h->parent != parent || h->parent_x != px || h->n_points != n3d) {
                if (bad_secs++ == 0)
                    CHECKF(0, "%s section %d (NEURON's %s): type %d parent %d at %g, %d points; "
                           "NEURON: type %d parent %d at %g, %d points", asc_path, sec, name, h->type,
                           h->parent, h->parent_x, h->n_points, type, parent, px, n3d);
                continue;
            }
            if (cable_ok && nseg[sec] != ns && bad_nseg++ == 0)
                CHECKF(0, "%s %s: %d segments, NEURON %d", asc_path, name, nseg[sec], ns);
            double rel = fabs(area32[sec] - a) / a;
            worst_area = fmax(worst_area, rel);
            worst_area64 = fmax(worst_area64, fabs(area[sec] - a) / a);
            if (cable_ok && !(rel <= AREA_TOL && fabs(area[sec] - a) <= AREA64_TOL * a) && bad_area++ == 0)
                CHECKF(0, "%s %s: area %.17g um2 (single-precision points %.17g), NEURON %.17g",
                       asc_path, name, area[sec], area32[sec], a);
            sum[0] = sum[1] = sum[2] = sum[3] = 0.0;
            for (int k = 0; k < h->n_points; k++) {
                const hb_sample_t *s = &m->samples[h->sample[k]];
                sum[0] += s->x, sum[1] += s->y, sum[2] += s->z, sum[3] += 2.0 * h->radius[k];
            }
        } else if (sec >= 0 && sec < m->n_sections &&
                   sscanf(line + 1, "%lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3]) == 4) {
            const hb_section_t *h = &m->sections[sec];
            int k = line[0] == 'p' ? pt++ : line[0] == 'f' ? 0 : h->n_points - 1;
            double got[4];
            if (line[0] == 'S') {
                memcpy(got, sum, sizeof got);
            } else {
                const hb_sample_t *s = &m->samples[h->sample[k]];
                got[0] = s->x, got[1] = s->y, got[2] = s->z, got[3] = 2.0 * h->radius[k];
            }
            for (int c = 0; c < 4; c++) {
                double err = fabs(got[c] - v[c]) / fmax(1.0, fabs(v[c]));
                worst_pt = fmax(worst_pt, err);
                if (!close_rel(got[c], v[c], POINT_TOL) && bad_pts++ == 0)
                    CHECKF(0, "%s section %d point %c%d coordinate %d: %.17g, NEURON %.17g", asc_path,
                           sec, line[0], k, c, got[c], v[c]);
            }
        }
    }
    fclose(f);
    CHECKF(sec + 1 == n_ref, "%s: %d sections read of %d", ref_path, sec + 1, n_ref);
    CHECKF(bad_secs == 0, "%s: %d sections differ from NEURON's", asc_path, bad_secs);
    CHECKF(bad_pts == 0, "%s: %d point values differ from NEURON's (worst %.3g)", asc_path, bad_pts, worst_pt);
    CHECKF(bad_nseg == 0, "%s: %d sections with other segment counts", asc_path, bad_nseg);
    CHECKF(bad_area == 0, "%s: %d section areas differ (worst %.3g)", asc_path, bad_area, worst_area);
    printf("%s: %d sections as NEURON's, d_lambda segments too; 3-D points within %.2g relative; "
           "areas within %.2g (from single-precision points as NEURON's; %.2g from the points)\n",
           asc_path, sec + 1, worst_pt, worst_area, worst_area64);
    free(nseg);
    free(area);
    free(nseg32);
    free(area32);
    hb_morph_destroy(m32);
    hb_morph_destroy(m);
    return sec + 1;
}

typedef struct {
    const char *text;
    hb_status_t status;
    const char *message; /* a substring of hb_last_error() */
} bad_t;

static void errors(void)
{
    static const bad_t bad[] = {
        {"", HB_ERR_PARSE, "t.asc: empty file (no tokens); expected Neurolucida ASC objects"},
        {"; only a comment\n", HB_ERR_PARSE, "t.asc: empty file"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1)\n", HB_ERR_PARSE,
         "t.asc:2:1: found end of file; expected ')' closing the contour"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1)))\n", HB_ERR_PARSE,
         "t.asc:1:44: found ')'; expected end of file ('(' ... ')' are unbalanced: a ')' closes nothing)"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) (5 0 0 1)\n", HB_ERR_PARSE,
         "t.asc:3:1: found end of file; expected ')' closing the tree"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) (5 0 0 1 & ))\n",
         HB_ERR_PARSE, "t.asc:2:32: unexpected character '&'"},
        {"((Dendrite)\n  (0 0 0 1)\n  (5 0 0 1)\n)\n", HB_ERR_MORPHOLOGY,
         "t.asc: no soma; expected a (\"CellBody\" ...) contour of three or more points"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1))\n((Dendrite) (0 0 0 1) (5 0 0 1))\n", HB_ERR_MORPHOLOGY,
         "t.asc: no soma"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) (5 zero 0 1))\n",
         HB_ERR_PARSE, "t.asc:2:26: found label zero; expected the y coordinate of a point (x y z d)"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) (5 0 0 1e999))\n",
         HB_ERR_PARSE, "t.asc:2:30: number '1e999' is out of range; expected a finite number"},
        {"(\"CellBody (1 0 0 1)\n", HB_ERR_PARSE, "t.asc:1:2: string not closed on its line"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) (5 0 0 -2))\n",
         HB_ERR_MORPHOLOGY, "t.asc:2: point has diameter -2 um; expected 0 or 0.001 to 100000 um"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n(\"CellBody\" (51 0 0 1) (50 1 0 1) (49 0 0 1))\n",
         HB_ERR_MORPHOLOGY, "t.asc:2: a second soma contour, apart from the one of line 1"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) ( (Color Red) ))\n",
         HB_ERR_PARSE, "expected"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Dendrite) (0 0 0 1) (5 0 0 1) ( (6 0 0 1) | ))\n",
         HB_ERR_PARSE, "t.asc:2:47: found ')'; expected '(' starting a point (x y z d)"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n(12 0 0 1)\n", HB_ERR_PARSE,
         "t.asc:2:2: found number 12; expected after '(': a \"contour name\", a label (marker or "
         "property), '(' (a tree) or Set"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Axon) (0 0 0 1) (5 0 0\x01 1))\n", HB_ERR_PARSE,
         "t.asc:2:25: byte 0x01; expected Neurolucida ASC text"},
        {"(\"CellBody\" (1 0 0 1) (1 0 0 1) (1 0 0 1))\n((Axon) (0 0 0 1) (5 0 0 1))\n",
         HB_ERR_MORPHOLOGY, "t.asc:1: the soma contour has no extent along two axes"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1)\n (1e300 0 0 1))\n((Axon) (0 0 0 1) (5 0 0 1))\n",
         HB_ERR_MORPHOLOGY, "t.asc:2: point has x = 1e+300 um; expected a finite coordinate within +-1e+08 um"},
        {"(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Axon) (0 0 0 1) (0.0005 0 0 1))\n",
         HB_ERR_MORPHOLOGY, "t.asc:2: point is 0.0005 um from the point before it (line 2); expected 0"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hb_morph_t *m = (hb_morph_t *)1;
        hb_status_t st = hb_morph_parse_asc(bad[i].text, strlen(bad[i].text), "t.asc", NULL, &m);
        const char *msg = hb_last_error();
        CHECKF(st == bad[i].status && m == NULL && strstr(msg, bad[i].message),
               "case %zu: status %s, message '%s'; expected %s with '%s'", i, hb_status_name(st), msg,
               hb_status_name(bad[i].status), bad[i].message);
    }
    /* Deep nesting is refused, not a stack overflow. */
    size_t depth = 5000, len = 0;
    char *deep = check_malloc(depth * 16 + 256);
    len += (size_t)sprintf(deep, "(\"CellBody\" (1 0 0 1) (0 1 0 1) (-1 0 0 1))\n((Axon) (0 0 0 1)");
    for (size_t k = 0; k < depth; k++) len += (size_t)sprintf(deep + len, " ((%zu 0 0 1)", k + 1);
    for (size_t k = 0; k < depth; k++) deep[len++] = ')';
    deep[len++] = ')';
    hb_morph_t *m = NULL;
    hb_status_t st = hb_morph_parse_asc(deep, len, "deep.asc", NULL, &m);
    CHECKF(st == HB_ERR_PARSE && strstr(hb_last_error(), "nested deeper than 2000"), "deep: %s",
           hb_last_error());
    free(deep);
    /* A missing file, and dispatch by content: SWC text named .txt stays SWC. */
    st = hb_morph_load("/nonexistent/cell.asc", NULL, &m);
    CHECKF(st == HB_ERR_IO && strstr(hb_last_error(), "/nonexistent/cell.asc: cannot open"), "%s",
           hb_last_error());
}

/* Units, warnings and the sample tree of the small file. */
static void small_details(const char *path)
{
    hb_morph_t *m = NULL, *nm = NULL;
    CHECK_OK(hb_morph_load_asc(path, NULL, &m));
    hb_swc_options_t o;
    hb_swc_options_default(&o);
    o.units = HB_UNITS_NM;
    static const char nm_text[] = "(\"CellBody\" (1000 0 0 500) (0 1000 0 500) (-1000 0 0 500) "
                                  "(0 -1500 0 500))\n((Dendrite) (0 0 0 1000) (5000 0 0 800))\n";
    CHECK_OK(hb_morph_parse_asc(nm_text, sizeof nm_text - 1, "nm.asc", &o, &nm));
    if (!m || !nm) return;
    const hb_section_t *d = &nm->sections[1];
    CHECK(nm->n_sections == 2 && d->n_points == 2 && nm->samples[d->sample[1]].x == 5.0 &&
          d->radius[1] == 0.4 && d->parent_x == 0.5);
    CHECKF(hb_morph_warning_count(m) == 2, "%d warnings", hb_morph_warning_count(m));
    CHECK(strstr(hb_morph_warning(m, 0), ":60: 1 tree (first: the one starting here) starts outside"));
    CHECK(strstr(hb_morph_warning(m, 1), ":46: Import3d: 1 section of one point"));
    for (int i = 0; i < m->n_samples; i++) CHECK(m->parent[i] < i);
    hb_morph_stats_t s;
    CHECK_OK(hb_morph_stats(m, &s));
    CHECK(s.points == 46 && s.sections == 9);
    hb_morph_destroy(m);
    hb_morph_destroy(nm);
}

int main(int argc, char **argv)
{
    find_src_ref_dir();
    snprintf(ref_dir, sizeof ref_dir, "%s", argc > 1 ? argv[1] : src_ref_dir);
    char asc[2048], ref[2048];
    snprintf(asc, sizeof asc, "%s/small.asc", src_ref_dir);
    snprintf(ref, sizeof ref, "%s/small.txt", ref_dir);
    CHECK(compare(asc, ref) == 9);
    small_details(asc);
    snprintf(asc, sizeof asc, "%s/stack.asc", src_ref_dir);
    snprintf(ref, sizeof ref, "%s/stack.txt", ref_dir);
    CHECK(compare(asc, ref) == 5);
    snprintf(asc, sizeof asc, "%s/morphologies-asc/C060114A7.asc", HB_DATA_DIR);
    snprintf(ref, sizeof ref, "%s/C060114A7.txt", ref_dir);
    CHECK(compare(asc, ref) == 325);
    errors();
    return check_summary("test_asc");
}
