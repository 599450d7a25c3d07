/*
 * SWC reader and morphology builder, valid input: every real file (counts from SOURCES.md,
 * cross-checked by an independent raw reader), values worked out by hand, units, line formats,
 * soma kinds and shapes of in-memory texts, a deep chain, and shuffled random trees (the
 * file order must not matter). Malformed input: test_swc_errors.c.
 */
#define _POSIX_C_SOURCE 200809L /* opendir, getline */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "core/morphology.h"
#include "hinesbatch.h"
#include "swc_common.h"

/* ------------------------------------------------------------------------ */
/* An independent reader of raw SWC files (sscanf), for cross-checks.       */
/* ------------------------------------------------------------------------ */

typedef struct {
    int n;
    long *id, *parent;
    int *type;
    double *x, *y, *z, *r;
    int *pidx;   /* parent index, -1 for the root */
    int *nchild; /* children per sample */
} raw_t;

static void raw_free(raw_t *w)
{
    free(w->id);
    free(w->parent);
    free(w->type);
    free(w->x);
    free(w->y);
    free(w->z);
    free(w->r);
    free(w->pidx);
    free(w->nchild);
}

static int raw_find(const raw_t *w, long id)
{
    /* ids of these files are nearly sequential: try the guess, then scan */
    if (id >= 1 && id <= w->n && w->id[id - 1] == id) return (int)(id - 1);
    for (int i = 0; i < w->n; i++)
        if (w->id[i] == id) return i;
    return -1;
}

static int raw_load(const char *path, raw_t *w)
{
    memset(w, 0, sizeof *w);
    FILE *f = fopen(path, "rb");
    if (!f) return -1;
    int cap = 1 << 15;
    w->id = malloc(cap * sizeof *w->id);
    w->parent = malloc(cap * sizeof *w->parent);
    w->type = malloc(cap * sizeof *w->type);
    w->x = malloc(cap * sizeof *w->x);
    w->y = malloc(cap * sizeof *w->y);
    w->z = malloc(cap * sizeof *w->z);
    w->r = malloc(cap * sizeof *w->r);
    char *line = NULL;
    size_t size = 0;
    while (getline(&line, &size, f) >= 0) {
        char *hash = strchr(line, '#');
        if (hash) *hash = '\0';
        double v[7];
        if (sscanf(line, "%lf %lf %lf %lf %lf %lf %lf", &v[0], &v[1], &v[2], &v[3], &v[4],
                   &v[5], &v[6]) != 7)
            continue;
        if (w->n == cap) break; /* large enough for every file here */
        w->id[w->n] = (long)v[0];
        w->type[w->n] = (int)v[1];
        w->x[w->n] = v[2];
        w->y[w->n] = v[3];
        w->z[w->n] = v[4];
        w->r[w->n] = v[5];
        w->parent[w->n] = (long)v[6];
        w->n++;
    }
    free(line);
    fclose(f);
    w->pidx = malloc(w->n * sizeof *w->pidx);
    w->nchild = calloc(w->n, sizeof *w->nchild);
    for (int i = 0; i < w->n; i++) {
        w->pidx[i] = w->parent[i] < 0 ? -1 : raw_find(w, w->parent[i]);
        if (w->pidx[i] >= 0) w->nchild[w->pidx[i]]++;
    }
    return 0;
}

static double raw_dist(const raw_t *w, int a, int b)
{
    double dx = w->x[a] - w->x[b], dy = w->y[a] - w->y[b], dz = w->z[a] - w->z[b];
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* The only child of sample i, or -1. */
static int raw_only_child(const raw_t *w, int i)
{
    if (w->nchild[i] != 1) return -1;
    for (int k = 0; k < w->n; k++)
        if (w->pidx[k] == i) return k;
    return -1;
}

/*
 * Cable length by our rules, from the raw samples: every parent-child
 * distance, except the ones inside a spherical soma (root -> 3-point sides,
 * and root or side -> first sample of a stem that has further samples).
 */
static double raw_expected_length(const raw_t *w, int three_point)
{
    int root = -1;
    for (int i = 0; i < w->n; i++)
        if (w->pidx[i] < 0) root = i;
    int sphere = 1;
    for (int i = 0; i < w->n; i++)
        if (w->pidx[i] == root && w->type[i] == w->type[root] && !three_point) sphere = 0;
    double total = 0.0;
    for (int i = 0; i < w->n; i++) {
        int p = w->pidx[i];
        if (p < 0) continue;
        int p_is_side = three_point && w->pidx[p] == root && w->type[p] == 1;
        int i_is_side = three_point && p == root && w->type[i] == 1;
        if (i_is_side) continue;
        if (sphere && (p == root || p_is_side)) {
            int only = raw_only_child(w, i);
            if (only >= 0 && w->type[only] == w->type[i]) continue; /* hidden in the soma */
        }
        total += raw_dist(w, i, p);
    }
    return total;
}

/* ------------------------------------------------------------------------ */
/* Every valid file: counts from SOURCES.md section 1.                      */
/* ------------------------------------------------------------------------ */

typedef struct {
    const char *file;
    int pts;         /* 'pts' column */
    int term;        /* 'term' column: samples without children */
    int three_point; /* 'soma' column is 3-pt NMO */
} good_file_t;

static const good_file_t good_files[] = {
    {"041018-zA.CNG.swc", 15039, 90, 1},    {"1220882a.CNG.swc", 459, 17, 0},
    {"720575940661205633.swc", 2777, 118, 0}, {"C040600B3.CNG.swc", 5543, 206, 0},
    {"CTh5080306F.CNG.swc", 14681, 114, 1}, {"Cha-F-200000.CNG.swc", 126, 12, 0},
    {"HSN-fluoro01.CNG.swc", 1290, 226, 1}, {"ball_and_stick.swc", 3, 1, 0},
    {"c91662.swc", 1510, 101, 1},           {"l22.CNG.swc", 1602, 51, 0},
    {"morph_ca1_n120.swc", 2630, 78, 0},    {"morph_l5pc_with_axon.swc", 10617, 172, 0},
    {"mp_ma_40984_gc2.CNG.swc", 353, 15, 0}, {"pyramidal.swc", 5799, 116, 1},
    {"simple.swc", 9, 4, 0},                {"single_cell_allen.swc", 4852, 56, 0},
    {"v_e_moto1.CNG.swc", 562, 134, 1},     {"v_e_purk2.CNG.swc", 1521, 420, 0},
};
#define N_GOOD (int)(sizeof good_files / sizeof good_files[0])

static void test_good_file(const good_file_t *g)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", GOOD_DIR, g->file);
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_load_swc(path, NULL, &m));
    if (!m) return;
    hb_morph_stats_t st;
    CHECK_OK(hb_morph_stats(m, &st));
    CHECKF(st.points == g->pts, "%s: points %d, SOURCES.md says %d", g->file, st.points, g->pts);
    check_invariants(m);
    /* only the FlyWire skeleton (nanometres) looks too large for a neuron in um */
    int said_nm = 0;
    for (int k = 0; k < hb_morph_warning_count(m); k++)
        said_nm |= strstr(hb_morph_warning(m, k), "nanometres") != NULL;
    CHECKF(said_nm == (strcmp(g->file, "720575940661205633.swc") == 0), "%s: nanometre warning %d",
           g->file, said_nm);

    raw_t w;
    CHECKF(raw_load(path, &w) == 0, "%s: raw read", g->file);
    int leaves = 0;
    for (int i = 0; i < w.n; i++) leaves += w.nchild[i] == 0;
    CHECKF(w.n == g->pts, "%s: raw reader sees %d samples", g->file, w.n);
    CHECKF(leaves == g->term, "%s: %d leaf samples, SOURCES.md says %d", g->file, leaves, g->term);
    /* The two side samples of a 3-point soma are leaves but not sections. */
    int expected_terminals = leaves - (g->three_point ? 2 : 0);
    CHECKF(st.terminals == expected_terminals, "%s: terminals %d, expected %d", g->file,
           st.terminals, expected_terminals);
    double expected = raw_expected_length(&w, g->three_point);
    CHECKF(close_to(st.length_um, expected, 1e-9), "%s: length %.9g, from raw samples %.9g",
           g->file, st.length_um, expected);
    int sphere = m->sections[0].is_sphere;
    CHECKF(!g->three_point || sphere, "%s: 3-point soma is a sphere", g->file);
    raw_free(&w);
    hb_morph_destroy(m);
}

static const char *good_name(int i) { return good_files[i].file; }
static void good_test(int i) { test_good_file(&good_files[i]); }

/* Values worked out by hand for the two synthetic cells. */
static void test_hand_values(void)
{
    hb_morph_t *m = NULL;
    hb_morph_stats_t st;
    CHECK_OK(hb_morph_load_swc(GOOD_DIR "/ball_and_stick.swc", NULL, &m));
    if (m) {
        CHECK_OK(hb_morph_stats(m, &st));
        double r = 6.30785;
        CHECK(m->sections[0].is_sphere && close_to(m->sections[0].length, 2 * r, 1e-12));
        CHECK(st.sections == 2 && st.terminals == 1 && st.max_branch_order == 0);
        CHECK(close_to(st.length_um, 200.0, 1e-12));
        CHECK(close_to(st.area_um2, 4 * PI * r * r + 2 * PI * 0.5 * 200.0, 1e-12));
        CHECK(m->sections[1].parent_x == 0.5 && m->sections[1].sample[0] == 1);
        CHECK(hb_morph_warning_count(m) == 0);
        hb_morph_destroy(m);
    }
    CHECK_OK(hb_morph_load_swc(GOOD_DIR "/simple.swc", NULL, &m));
    if (m) {
        CHECK_OK(hb_morph_stats(m, &st));
        CHECK(st.sections == 7 && st.terminals == 4 && st.max_branch_order == 1);
        CHECK(close_to(st.length_um, 31.0, 1e-12));
        /* children of a non-sphere section share the branch sample */
        int shared = 1;
        for (int i = 1; i < m->n_sections; i++) {
            const hb_section_t *s = &m->sections[i];
            if (m->sections[s->parent].is_sphere) continue;
            const hb_section_t *p = &m->sections[s->parent];
            shared &= s->parent_x == 1.0 && s->sample[0] == p->sample[p->n_points - 1];
            shared &= s->radius[0] == m->samples[s->sample[0]].radius;
        }
        CHECK(shared);
        hb_morph_destroy(m);
    }
}

/* FlyWire: children before parents, nanometres. */
/* single_points: NEURON's float 3-D points. The figures are NEURON 8.2's for these three lines of
 * data/morphologies/single_cell_allen.swc (Import3d: soma[0].L, dend[0] arc3d(1)). */
static void test_single_points(void)
{
    static const char text[] = "1 1 357.4977 705.5311 27.0085 6.9553 -1\n"
                               "2 3 351.3693 708.5444 25.6116 0.4347 1\n"
                               "3 3 350.3283 709.0054 25.3873 0.4347 2\n";
    hb_swc_options_t o;
    hb_swc_options_default(&o);
    CHECK(o.single_points == 0);
    o.sections = HB_SECTIONS_IMPORT3D;
    hb_morph_t *dbl = NULL, *flt = NULL, *bad = NULL;
    CHECK_OK(hb_morph_parse_swc(text, sizeof text - 1, "three", &o, &dbl));
    o.single_points = 1;
    CHECK_OK(hb_morph_parse_swc(text, sizeof text - 1, "three", &o, &flt));
    if (dbl && flt && dbl->n_sections == 2 && flt->n_sections == 2) {
        CHECK(dbl->sections[0].length == 2 * 6.9553 && flt->sections[0].length == 13.91058349609375);
        CHECK(close_to(dbl->sections[1].length, 1.160393247998283, 1e-15));
        CHECK(flt->sections[1].length == 1.1603793801110165);
        CHECK(flt->samples[0].x == (double)357.4977f && flt->samples[0].radius == (double)6.9553f);
        CHECK(2 * flt->sections[0].radius[0] == (double)13.9106f);
    } else {
        CHECK(!"two sections each");
    }
    o.single_points = 2;
    CHECK(hb_morph_parse_swc(text, sizeof text - 1, "three", &o, &bad) == HB_ERR_INVALID_VALUE);
    CHECK(bad == NULL && strstr(hb_last_error(), "single_points 2; expected 0 or 1"));
    o.single_points = 1;
    o.sections = HB_SECTIONS_HINESBATCH;
    CHECK(hb_morph_parse_swc(text, sizeof text - 1, "three", &o, &bad) == HB_ERR_INVALID_VALUE);
    CHECK(bad == NULL && strstr(hb_last_error(), "expected HB_SECTIONS_IMPORT3D"));
    o.sections = HB_SECTIONS_IMPORT3D;
    static const char huge[] = "1 1 1e39 0 0 5 -1\n";
    CHECK(hb_morph_parse_swc(huge, sizeof huge - 1, "huge", &o, &bad) == HB_ERR_PARSE);
    CHECKF(bad == NULL && strstr(hb_last_error(), "huge:1: field 3 (x) is '1e39', expected a number "
                                                  "single precision holds"), "%s", hb_last_error());
    hb_morph_destroy(dbl);
    hb_morph_destroy(flt);
}

static void test_units(void)
{
    const char *path = GOOD_DIR "/720575940661205633.swc";
    hb_swc_options_t um, nm;
    hb_swc_options_default(&um);
    hb_swc_options_default(&nm);
    CHECK(um.units == HB_UNITS_UM && um.max_type == 19);
    nm.units = HB_UNITS_NM;
    hb_morph_t *a = NULL, *b = NULL;
    CHECK_OK(hb_morph_load_swc(path, &um, &a));
    CHECK_OK(hb_morph_load_swc(path, &nm, &b));
    if (!a || !b) goto done;
    hb_morph_stats_t sa, sb;
    CHECK_OK(hb_morph_stats(a, &sa));
    CHECK_OK(hb_morph_stats(b, &sb));
    CHECK(sa.points == 2777 && sb.points == 2777 && sa.sections == sb.sections);
    CHECKF(close_to(sb.length_um * 1000.0, sa.length_um, 1e-12), "nm %.9g um %.9g",
           sb.length_um, sa.length_um);
    CHECK(close_to(sb.area_um2 * 1e6, sa.area_um2, 1e-12));
    CHECK(close_to(b->samples[0].radius, 1.467, 1e-12)); /* root radius 1467 nm */
    /* read in um, its sizes say nm (a warning that says so); read in nm, nothing of it */
    int said_nm = 0;
    for (int k = 0; k < hb_morph_warning_count(a); k++)
        said_nm += strstr(hb_morph_warning(a, k), "nanometres") != NULL &&
                   strstr(hb_morph_warning(a, k), "units nm") != NULL;
    CHECKF(said_nm == 1, "um: %d warnings about nanometres", said_nm);
    for (int k = 0; k < hb_morph_warning_count(b); k++)
        CHECKF(!strstr(hb_morph_warning(b, k), "nanometres"), "nm: %s", hb_morph_warning(b, k));
done:
    hb_morph_destroy(a);
    hb_morph_destroy(b);
}

/* ------------------------------------------------------------------------ */
/* In-memory rules.                                                          */
/* ------------------------------------------------------------------------ */

static void test_line_formats(void)
{
    /* LF, CRLF, CR, comments, blank lines, tabs, leading whitespace. */
    const char *texts[] = {
        "1 1 0 0 0 1 -1\n2 3 0 0 5 1 1\n3 3 0 0 9 1 2\n",
        "1 1 0 0 0 1 -1\r\n2 3 0 0 5 1 1\r\n3 3 0 0 9 1 2\r\n",
        "1 1 0 0 0 1 -1\r2 3 0 0 5 1 1\r3 3 0 0 9 1 2",
        "1\t1 0 0 0 1 -1 # root\n   \t\n  2 3\t\t0 0 5 1 1#no space\r\n"
        "3 3 0 0 9 1 2 extra fields 8 9\n",
    };
    const long last_line[] = {3, 3, 3, 4};
    for (int i = 0; i < 4; i++) {
        hb_morph_t *m = parse(texts[i]);
        if (!m) continue;
        hb_morph_stats_t st = stats_of(m);
        CHECKF(st.points == 3 && st.sections == 2 && close_to(st.length_um, 4.0, 1e-15),
               "format %d: points %d sections %d length %g", i, st.points, st.sections,
               st.length_um);
        CHECKF(m->samples[2].line == last_line[i], "format %d: line %ld", i, m->samples[2].line);
        CHECK(hb_morph_warning_count(m) == 0);
        hb_morph_destroy(m);
    }
    /* A line counts once for CRLF; an empty CR line counts. */
    expect_error("1 1 0 0 0 1 -1\r\n\r\r\n2 3 0 0\n", HB_ERR_PARSE, "found 4", 4);
    expect_error("# only a comment\n\n   \n", HB_ERR_PARSE, "no samples", 0);
    expect_error("", HB_ERR_PARSE, "no samples", 0);
}

static void test_soma_kinds(void)
{
    /* 1-point soma: a sphere, stems start at their own first sample; a
     * single-sample stem starts at the centre. */
    hb_morph_t *m = parse("1 1 0 0 0 4 -1\n2 3 0 6 0 1 1\n3 3 0 8 0 1 2\n4 2 0 -5 0 2 1\n");
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        const hb_section_t *s0 = &m->sections[0];
        CHECK(s0->is_sphere && s0->sample[0] == -1 && s0->length == 8.0 && s0->radius[1] == 4.0);
        CHECK(st.sections == 3 && st.terminals == 2 && close_to(st.length_um, 2.0 + 5.0, 1e-15));
        const hb_section_t *lone = &m->sections[2];
        CHECK(lone->parent_x == 0.5 && lone->n_points == 2 && lone->sample[0] == 0);
        CHECK(lone->radius[0] == 2.0 && lone->length == 5.0);
        CHECK(close_to(st.area_um2, 4 * PI * 16 + 2 * PI * 1 * 2 + 2 * PI * 2 * 5, 1e-12));
        CHECK(hb_morph_warning_count(m) == 0);
        hb_morph_destroy(m);
    }
    /* 3-point soma: sphere of the root radius, sides kept as samples. */
    m = parse("1 1 0 0 0 3 -1\n2 1 0 -3 0 3 1\n3 1 0 3 0 3 1\n4 3 0 0 3 1 1\n5 3 0 0 9 1 4\n");
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        CHECK(m->sections[0].is_sphere && st.points == 5 && st.sections == 2);
        CHECK(close_to(st.area_um2, 4 * PI * 9 + 2 * PI * 6, 1e-12));
        CHECK(hb_morph_warning_count(m) == 0);
        hb_morph_destroy(m);
    }
    /* A lone sample is a sphere whatever its type. */
    m = parse("7 3 1 2 3 2.5 -1\n");
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        CHECK(st.sections == 1 && st.terminals == 1 && m->sections[0].is_sphere);
        CHECK(close_to(st.area_um2, 4 * PI * 6.25, 1e-15) && st.length_um == 0.0);
        hb_morph_destroy(m);
    }
    /* Contour soma (chain): frustum sections of type 1, neurites share points. */
    m = parse("1 1 0 0 0 5 -1\n2 1 0 5 0 4 1\n3 1 0 10 0 3 2\n4 3 5 5 0 1 2\n5 3 10 5 0 1 4\n");
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        CHECK(!m->sections[0].is_sphere && m->sections[0].type == 1);
        CHECK(st.sections == 3 && st.max_branch_order == 0 && st.terminals == 2);
        CHECK(close_to(st.length_um, 5 + 5 + 10, 1e-15));
        CHECK(hb_morph_warning_count(m) == 0);
        hb_morph_destroy(m);
    }
    /* Soma through the root (two type-1 children): no warning; three: a warning. */
    m = parse("1 1 0 0 0 5 -1\n2 1 0 5 0 4 1\n3 1 0 -5 0 4 1\n4 1 0 -8 0 3 3\n5 3 5 0 0 1 1\n");
    if (m) {
        CHECK(hb_morph_warning_count(m) == 0 && m->n_sections == 3);
        const hb_section_t *s = &m->sections[m->n_sections - 1];
        CHECK(s->parent == 0 && s->parent_x == 0.0 && s->sample[0] == 0);
        hb_morph_destroy(m);
    }
    m = parse("1 1 0 0 0 5 -1\n2 1 0 5 0 4 1\n3 1 0 -5 0 4 1\n4 1 5 0 0 4 1\n");
    if (m) {
        CHECK(has_warning(m, MEM ":1: soma samples branch at sample 1"));
        hb_morph_destroy(m);
    }
    /* No soma: a warning; a branching root continues through its first
     * child of its type; the others attach at x = 0. */
    m = parse("1 2 0 0 0 1 -1\n2 2 0 0 1 1 1\n3 2 0 1 0 1 1\n4 2 0 0 2 1 2\n5 2 1 0 2 1 4\n"
              "6 2 -1 0 2 1 4\n");
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        CHECK(has_warning(m, MEM ": no soma"));
        CHECK(st.sections == 4 && st.terminals == 3 && st.max_branch_order == 1);
        const hb_section_t *last = &m->sections[m->n_sections - 1];
        CHECK(m->sections[0].n_points == 3 && m->sections[1].parent_x == 1.0);
        CHECK(last->parent_x == 0.0 && last->sample[0] == 0 && last->branch_order == 0);
        CHECK(close_to(st.length_um, 1 + 1 + 1 + 1 + 1, 1e-15));
        hb_morph_destroy(m);
    }
    /* A root whose only children change type is read as a sphere (NEURON). */
    m = parse("1 0 0 0 0 2 -1\n2 3 0 0 1 1 1\n3 3 0 0 2 1 2\n");
    if (m) {
        CHECK(m->sections[0].is_sphere && m->n_sections == 2);
        hb_morph_destroy(m);
    }
    /* Every sample type 1: a warning. */
    m = parse("1 1 0 0 0 1 -1\n2 1 0 0 1 1 1\n3 1 0 0 2 1 2\n4 1 0 0 3 1 3\n");
    if (m) {
        CHECK(has_warning(m, "no soma/neurite split") && m->n_sections == 1);
        hb_morph_destroy(m);
    }
}

static void test_shapes(void)
{
    /* Children before parents, ids not contiguous. */
    hb_morph_t *m = parse("40 3 0 0 3 1 30\n30 3 0 0 2 1 20\n20 3 0 0 1 1 10\n10 1 0 0 0 1 -1\n");
    if (m) {
        CHECK(m->samples[0].id == 10 && m->samples[3].id == 40 && m->samples[3].line == 1);
        CHECK(m->n_sections == 2 && close_to(stats_of(m).length_um, 2.0, 1e-15));
        hb_morph_destroy(m);
    }
    /* Multifurcation (3 children) below a stem. */
    m = parse("1 1 0 0 0 2 -1\n2 3 0 0 3 1 1\n3 3 0 0 4 1 2\n4 3 1 0 4 1 3\n5 3 -1 0 4 1 3\n"
              "6 3 0 1 4 1 3\n7 3 0 1 5 1 6\n");
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        CHECK(st.sections == 5 && st.terminals == 3 && st.max_branch_order == 1);
        CHECK(m->sections[1].n_children == 3);
        hb_morph_destroy(m);
    }
    /* Type changes split an unbranched path without a branch order step. */
    m = parse("1 1 0 0 0 3 -1\n2 6 0 0 2 1 1\n3 6 0 0 3 1 2\n4 7 0 0 4 1 3\n5 8 0 0 5 1 4\n");
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        CHECK(st.sections == 4 && st.terminals == 1 && st.max_branch_order == 0);
        CHECK(m->sections[2].type == 7 && m->sections[2].sample[0] == 2);
        CHECK(close_to(st.length_um, 3.0, 1e-15));
        hb_morph_destroy(m);
    }
    /* Zero radius repair: a zero root takes the nearest positive radius. */
    m = parse("1 1 0 0 0 0 -1\n2 3 0 0 1 0 1\n3 3 0 0 2 0 2\n4 3 0 0 3 2 3\n5 2 0 1 0 3 1\n");
    if (m) {
        CHECK(m->samples[0].radius == 3.0 && m->samples[1].radius == 3.0);
        CHECK(has_warning(m, MEM ":1: 3 samples have radius 0 (first: sample 1)"));
        hb_morph_destroy(m);
    }
    /* Coincident points give zero-length pieces. */
    m = parse("1 1 0 0 0 2 -1\n2 3 0 0 3 1 1\n3 3 0 0 3 1 2\n4 3 0 0 4 1 3\n");
    if (m) {
        CHECK(close_to(stats_of(m).length_um, 1.0, 1e-15));
        hb_morph_destroy(m);
    }
}

/* ------------------------------------------------------------------------ */
/* Scale.                                                                    */
/* ------------------------------------------------------------------------ */

/* A chain of n samples listed leaf first: no recursion anywhere. */
static void test_deep_chain(void)
{
    const int n = 1000000;
    hb_sample_t *s = malloc((size_t)n * sizeof *s);
    for (int i = 0; i < n; i++) {
        int id = n - i; /* reverse order */
        s[i] = (hb_sample_t){id, 3, 0, 0, (double)id, 1.0, id == 1 ? -1 : id - 1, i + 1};
    }
    clock_t t0 = clock();
    hb_morph_t *m = NULL;
    CHECK_OK(hb_morph_from_samples(s, n, "chain", &m));
    if (m) {
        hb_morph_stats_t st = stats_of(m);
        CHECK(st.sections == 1 && st.points == n && close_to(st.length_um, n - 1, 1e-12));
        hb_morph_destroy(m);
    }
    /* The same chain as text. */
    size_t cap = (size_t)n * 40, len = 0;
    char *text = malloc(cap);
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(text + len, cap - len, "%ld 3 0 0 %d 1 %ld\n", s[i].id,
                                (int)s[i].z, s[i].parent);
    m = parse_n(text, len, NULL);
    if (m) {
        CHECK(m->n_sections == 1 && m->n_samples == n);
        hb_morph_destroy(m);
    }
    printf("1e6-sample chain, samples and text: %.2f s CPU\n",
           (double)(clock() - t0) / CLOCKS_PER_SEC);
    free(text);
    free(s);
}

/* ------------------------------------------------------------------------ */
/* Random trees: the file order must not matter.                            */
/* ------------------------------------------------------------------------ */

/* soma: 0 none, 1 one point, 3 three points, 8 a branched multi-point soma. */
static hb_sample_t *random_tree(int n, int soma)
{
    hb_sample_t *s = malloc((size_t)n * sizeof *s);
    long *ids = malloc((size_t)n * sizeof *ids);
    for (int i = 0; i < n; i++) ids[i] = 5 + 3L * i;
    for (int i = n - 1; i > 0; i--) { /* distinct, non-contiguous, unordered ids */
        int j = (int)(rng_next() % (uint64_t)(i + 1));
        long t = ids[i];
        ids[i] = ids[j];
        ids[j] = t;
    }
    for (int i = 0; i < n; i++) {
        int p = i == 0 ? -1 : (int)(rng_next() % (uint64_t)i);
        /* mostly chains: the previous sample is the likely parent */
        if (i > 0 && rng_unit() < 0.8) p = i - 1;
        int type;
        if (i < soma) {
            type = 1;
            if (soma == 3 && i > 0) p = 0;
            if (soma == 8 && i > 0) p = (int)(rng_next() % (uint64_t)i);
        } else {
            if (p < soma && soma == 3) p = (int)(rng_next() % 3); /* neurites on the sides too */
            type = (p >= 0 && s[p].type != 1 && rng_unit() < 0.9) ? s[p].type
                                                                   : 2 + (int)(rng_next() % 3);
        }
        if (i == 0) type = soma ? 1 : 3;
        double px = p >= 0 ? s[p].x : 0, py = p >= 0 ? s[p].y : 0, pz = p >= 0 ? s[p].z : 0;
        double r = rng_unit() < 0.1 ? 0.0 : 0.2 + rng_unit();
        if (soma == 3 && i < 3) { /* NeuroMorpho layout */
            r = 5.0;
            px = py = pz = 0;
            py = i == 1 ? -5.0 : i == 2 ? 5.0 : 0.0;
        } else {
            px += rng_unit() * 4 - 2;
            py += rng_unit() * 4 - 2;
            pz += rng_unit() * 4 - 2;
        }
        s[i] = (hb_sample_t){ids[i], type, px, py, pz, r, p < 0 ? -1 : ids[p], i + 1};
    }
    free(ids);
    return s;
}

static void compare_stats(const char *what, const hb_morph_t *a, const hb_morph_t *b)
{
    hb_morph_stats_t x = stats_of(a), y = stats_of(b);
    CHECKF(x.points == y.points && x.sections == y.sections && x.terminals == y.terminals &&
               x.max_branch_order == y.max_branch_order,
           "%s: points %d/%d sections %d/%d terminals %d/%d order %d/%d", what, x.points,
           y.points, x.sections, y.sections, x.terminals, y.terminals, x.max_branch_order,
           y.max_branch_order);
    CHECKF(close_to(x.length_um, y.length_um, 1e-11) && close_to(x.area_um2, y.area_um2, 1e-11),
           "%s: length %.17g/%.17g area %.17g/%.17g", what, x.length_um, y.length_um, x.area_um2,
           y.area_um2);
    CHECKF(hb_morph_warning_count(a) == hb_morph_warning_count(b), "%s: warnings %d/%d", what,
           hb_morph_warning_count(a), hb_morph_warning_count(b));
}

static void test_shuffled(void)
{
    static const int somas[] = {0, 1, 3, 8};
    rng_state = 12345;
    for (int t = 0; t < 16; t++) {
        int n = 50 + (int)(rng_next() % 3000), soma = somas[t % 4];
        hb_sample_t *s = random_tree(n, soma);
        hb_morph_t *a = NULL, *b = NULL, *c = NULL, *d = NULL, *e = NULL;
        CHECK_OK(hb_morph_from_samples(s, n, "tree", &a));
        /* the same samples with consecutive ids: 1000 + k for random_tree's 5 + 3 k (found by
         * index, not bisection), then 1000 + the sample's index (increasing: not sorted) */
        hb_sample_t *r = malloc((size_t)n * sizeof *r);
        int *at = malloc((size_t)n * sizeof *at); /* k -> index */
        for (int i = 0; i < n; i++) at[(s[i].id - 5) / 3] = i;
        for (int i = 0; i < n; i++) {
            r[i] = s[i];
            r[i].id = 1000 + (s[i].id - 5) / 3;
            r[i].parent = s[i].parent < 0 ? -1 : 1000 + (s[i].parent - 5) / 3;
        }
        CHECK_OK(hb_morph_from_samples(r, n, "consecutive ids", &d));
        for (int i = 0; i < n; i++) {
            r[i].id = 1000 + i;
            r[i].parent = s[i].parent < 0 ? -1 : 1000 + at[(s[i].parent - 5) / 3];
        }
        CHECK_OK(hb_morph_from_samples(r, n, "increasing ids", &e));
        free(r);
        free(at);
        for (int i = n - 1; i > 0; i--) {
            int j = (int)(rng_next() % (uint64_t)(i + 1));
            hb_sample_t tmp = s[i];
            s[i] = s[j];
            s[j] = tmp;
        }
        CHECK_OK(hb_morph_from_samples(s, n, "shuffled", &b));
        /* and through the text reader */
        size_t cap = (size_t)n * 160, len = 0;
        char *text = malloc(cap);
        for (int i = 0; i < n; i++)
            len += (size_t)snprintf(text + len, cap - len, "%ld %d %.17g %.17g %.17g %.17g %ld\n",
                                    s[i].id, s[i].type, s[i].x, s[i].y, s[i].z, s[i].radius,
                                    s[i].parent);
        c = parse_n(text, len, NULL);
        if (a && b && c) {
            char what[64];
            snprintf(what, sizeof what, "tree %d (n %d, soma %d)", t, n, soma);
            check_invariants(a);
            check_invariants(b);
            compare_stats(what, a, b);
            compare_stats(what, a, c);
            if (d && e) {
                compare_stats(what, a, d);
                compare_stats(what, a, e);
            }
            CHECK(soma != 3 || (a->sections[0].is_sphere && b->sections[0].is_sphere));
        }
        hb_morph_destroy(a);
        hb_morph_destroy(b);
        hb_morph_destroy(c);
        hb_morph_destroy(d);
        hb_morph_destroy(e);
        free(text);
        free(s);
    }
}

int main(void)
{
    run_table(GOOD_DIR, N_GOOD, good_name, good_test);
    test_hand_values();
    test_units();
    test_single_points();
    test_line_formats();
    test_soma_kinds();
    test_shapes();
    test_deep_chain();
    test_shuffled();
    return check_summary("swc");
}
