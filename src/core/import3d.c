/*
 * NEURON's Import3d, rule for rule: how NEURON 8.2's Import3d_SWC_read (read_swc.hoc:
 * mark_branch, sectionify, mksection) and Import3d_GUI (chk_valid, instantiate, sphere_rep)
 * turn SWC samples into sections. NEURON users load SWC this way; with the NEURON scheme these
 * sections give NEURON's own matrices (docs/swc.md, docs/discretisation.md).
 *
 * Import3d works on the samples in id order (a parent's id below its child's) and cuts sections
 * at runs of consecutive ids; the names below follow the hoc code (pix: parent index in id order,
 * nchild: its child count with +0.01 for a child out of order or of another type).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/import3d.h"
#include "common/status.h"

#define SOMA 1

typedef struct {
    int id;          /* first point (id order); 0 for the root */
    int n_raw;       /* raw points: the parent's point first unless root */
    int first;       /* 1: "wire", the parent's point is not part of the geometry */
    int parent;      /* index in the section list, -1 for the root */
    double parentx;  /* 0, 0.5 or 1 */
    int type;
    double d0;       /* diameter of raw point 0 (a stem of a soma takes its own first) [um] */
    int removed;
} i3_section_t;

typedef struct {
    const hb_morph_t *m;
    int n;
    int *order; /* id order -> sorted sample index */
    int *pix;   /* id order -> parent's id order index, -1 for the root */
    double *nchild;
    int *nchild_soma;
    int *connect2prox;
    int *point2sec;
    int soma3geom;
    i3_section_t *sec;
    int n_sec;
} i3_t;

typedef struct {
    long id;
    int index;
} id_index_t;

static int by_id(const void *a, const void *b)
{
    long ia = ((const id_index_t *)a)->id, ib = ((const id_index_t *)b)->id;
    return (ia > ib) - (ia < ib);
}

static const hb_sample_t *pt(const i3_t *t, int i) { return &t->m->samples[t->order[i]]; }
static int type_of(const i3_t *t, int i) { return pt(t, i)->type; }
static double diam_of(const i3_t *t, int i) { return 2.0 * pt(t, i)->radius; }

/* read_swc.hoc mark_branch: child counts and the children that connect to a proximal end. */
static void mark_branch(i3_t *t)
{
    for (int i = 0; i < t->n; i++) {
        int p = t->pix[i];
        if (p < 0) continue;
        t->nchild[p] += 1;
        if (p != i - 1) {
            t->nchild[p] += .01;
            if (p > 1) {
                if (type_of(t, p) != SOMA && type_of(t, t->pix[p]) == SOMA) {
                    t->connect2prox[i] = 1;
                    t->nchild[p] = 1;
                }
            } else if (p == 0 && type_of(t, p) != SOMA) {
                t->connect2prox[i] = 1;
                t->nchild[p] = 1;
            }
        }
        if (type_of(t, p) != type_of(t, i)) t->nchild[p] += .01;
    }
}

/* neuromorph_3point_soma: NeuroMorpho.Org's 3-point soma is a sphere only when its sides are the
 * two points after the root, childless, of the root's diameter, and at +-r within 1 %. */
static void three_point_soma(i3_t *t)
{
    if (t->n < 3 || t->pix[1] != 0 || t->pix[2] != 0) return;
    if (t->nchild[1] != 0 || t->nchild[2] != 0) return;
    double d = diam_of(t, 0);
    if (diam_of(t, 1) != d || diam_of(t, 2) != d || !(d > 0.0)) return;
    double len = 0;
    for (int i = 1; i <= 2; i++) {
        double dx = pt(t, i)->x - pt(t, 0)->x, dy = pt(t, i)->y - pt(t, 0)->y,
               dz = pt(t, i)->z - pt(t, 0)->z;
        len += sqrt(dx * dx + dy * dy + dz * dz);
    }
    if (fabs(len / d - 1) < .01) {
        t->soma3geom = 1;
        t->pix[2] = 1; /* one soma section, cut to its root point in mksection */
    }
}

/* sectionify: point2sec; returns the section count. */
static int sectionify(i3_t *t)
{
    int n = t->n, n_soma = type_of(t, 0) == SOMA;
    mark_branch(t);
    for (int i = 1; i < n; i++) {
        if (type_of(t, i) != SOMA) continue;
        n_soma++;
        int p = t->pix[i];
        if (p >= 0 && type_of(t, p) == SOMA) t->nchild_soma[p]++;
    }
    if (n_soma == 3) three_point_soma(t);
    /* Consecutive soma points stay in one section unless the parent has several soma children. */
    for (int i = 0; i + 1 < n; i++)
        if (type_of(t, i) == SOMA && type_of(t, i + 1) == SOMA && t->pix[i + 1] == i &&
            !(i != 0 && t->nchild_soma[i] > 1))
            t->nchild[i] = 1;
    /* A section ends at every point whose nchild is not exactly 1 (sec2point). */
    int si = 0, end = 0;
    while (end + 1 < n && t->nchild[end] == 1) end++; /* the last point has no child */
    t->point2sec[0] = 0;
    for (int i = 1; i < n; i++) {
        if (i > end) {
            si++;
            for (end = i; end + 1 < n && t->nchild[end] == 1;) end++;
        }
        t->point2sec[i] = si;
    }
    return si + 1;
}

/* mksection for points [first, end) as section isec. */
static void mksection(i3_t *t, int isec, int first, int end)
{
    i3_section_t *sec = &t->sec[isec];
    sec->id = first;
    sec->parentx = 1;
    sec->parent = -1;
    sec->type = type_of(t, first);
    if (isec == 0) {
        if (t->soma3geom) end = 1;
        sec->n_raw = end - first;
        sec->d0 = diam_of(t, first);
        return;
    }
    sec->n_raw = end - first + 1;
    int pp = t->pix[first];
    sec->parent = t->point2sec[pp];
    const i3_section_t *psec = &t->sec[sec->parent];
    int den_con_soma = psec->type == SOMA && type_of(t, first) != SOMA;
    int con_soma = psec->type == SOMA;
    int handled = 0;
    if (sec->parent == 0) { /* the root */
        handled = 1;
        if (den_con_soma && psec->n_raw == 1) { /* a single-point soma: a wire to its middle */
            sec->parentx = 0.5;
            if (end - first > 1) sec->first = 1;
        } else if (pp == psec->id) { /* the root's first point */
            sec->parentx = 0.0;
            if (type_of(t, first) != SOMA && t->nchild_soma[pp] > 1) sec->first = 1;
        } else {
            handled = 0;
        }
    }
    if (!handled && con_soma) {
        int offset = psec->id == 0 ? -1 : -2;
        if (pp < psec->id + psec->n_raw + offset) { /* an interior soma point: the middle */
            sec->parentx = 0.5;
            if (den_con_soma && end - first > 1) sec->first = 1;
        } else if (end - first > 1 && t->nchild_soma[pp] > 1 && type_of(t, first) != SOMA) {
            sec->first = 1;
        }
    }
    /* A stem of a soma starts with the parent's point but its own first diameter. */
    sec->d0 = psec->type == SOMA && sec->type != SOMA ? diam_of(t, first) : diam_of(t, pp);
    if (t->connect2prox[first]) sec->parentx = 0.0; /* sec.pid = parentsec.id */
}

/* Import3d_GUI chk_valid: one-point sections and two-point sections of zero length go; their
 * children take their place (rm0len, resolved in one pass: parents come first). */
static hb_status_t chk_valid(i3_t *t)
{
    int removed = 0;
    const hb_sample_t *first_end = NULL;
    for (int i = t->n_sec - 1; i >= 1; i--) {
        i3_section_t *sec = &t->sec[i];
        int own = sec->n_raw - sec->first;
        if (own == 2) {
            const hb_sample_t *a = sec->first ? pt(t, sec->id) : pt(t, t->pix[sec->id]);
            const hb_sample_t *b = sec->first ? pt(t, sec->id + 1) : pt(t, sec->id);
            /* hoc's Vector.eq: equal within 1e-9 */
            sec->removed = fabs(a->x - b->x) <= 1e-9 && fabs(a->y - b->y) <= 1e-9 &&
                           fabs(a->z - b->z) <= 1e-9;
        } else {
            sec->removed = own <= 1;
        }
        if (sec->removed && removed++ == 0) first_end = pt(t, sec->id + sec->n_raw - 2);
    }
    for (int j = 1; j < t->n_sec; j++) {
        const i3_section_t *p = &t->sec[t->sec[j].parent];
        if (p->removed) {
            t->sec[j].parentx = p->parentx;
            t->sec[j].parent = p->parent;
        }
    }
    if (removed == 0) return HB_SUCCESS;
    return hb_morph_warn((hb_morph_t *)t->m, first_end->line,
                         "Import3d: %d section%s of one point or of two coincident points (first: "
                         "the one ending at sample %ld) removed, as NEURON's Import3d removes them; "
                         "their children attach where they attached",
                         removed, removed == 1 ? "" : "s", first_end->id);
}

static int alloc_section_points(hb_section_t *s, int n)
{
    s->n_points = n;
    s->sample = malloc((size_t)n * sizeof *s->sample);
    s->arc = malloc((size_t)n * sizeof *s->arc);
    s->radius = malloc((size_t)n * sizeof *s->radius);
    return s->sample && s->arc && s->radius ? 0 : -1;
}

/* NEURON's Pt3d keeps x, y, z and diam as float; arc3d, hence L, comes from those floats. */
static double as_float(double v) { return hb_morph_as_float(v); }
static double rounded(int single, double v) { return single ? as_float(v) : v; }

/* instantiate: the kept sections as hb_section_t, points from `first` on; a one-point root is
 * sphere_rep's cylinder of length = diameter along x. */
static hb_status_t instantiate(i3_t *t, hb_morph_t *m)
{
    const int single = m->single_points;
    int kept = 0;
    int *index = malloc((size_t)t->n_sec * sizeof *index);
    int *children = calloc((size_t)t->n, sizeof *children);
    if (!index || !children) goto oom;
    for (int i = 0; i < t->n_sec; i++) index[i] = t->sec[i].removed ? -1 : kept++;
    for (int i = 1; i < t->n; i++) children[t->pix[i]]++;
    m->sections = calloc((size_t)kept, sizeof *m->sections);
    if (!m->sections) goto oom;
    m->n_sections = kept;
    for (int i = 0; i < t->n_sec; i++) {
        const i3_section_t *sec = &t->sec[i];
        if (sec->removed) continue;
        hb_section_t *s = &m->sections[index[i]];
        s->parent = sec->parent < 0 ? -1 : index[sec->parent];
        s->parent_x = sec->parent < 0 ? 0.0 : sec->parentx;
        s->type = sec->type;
        if (sec->parent < 0 && sec->n_raw == 1) {
            double d = sec->d0;
            s->is_sphere = 1;
            if (alloc_section_points(s, 3) != 0) goto oom;
            /* sphere_rep's x - d/2, x, x + d/2; NEURON 8.2 gives them from the float x and d,
             * each stored as float again (measured: the soma's x3d and L of tests/neuron) */
            const double x = rounded(single, pt(t, 0)->x), df = rounded(single, d);
            const double ends[3] = {x - df / 2, x, x + df / 2};
            for (int k = 0; k < 3; k++) {
                s->sample[k] = k == 1 ? t->order[0] : -1;
                s->arc[k] = single ? as_float(ends[k]) - as_float(ends[0]) : 0.5 * d * k;
                s->radius[k] = 0.5 * (single ? as_float(d) : d);
            }
        } else {
            int n = sec->n_raw - sec->first;
            if (alloc_section_points(s, n) != 0) goto oom;
            for (int k = 0; k < n; k++) {
                int raw = k + sec->first; /* raw 0 of a child is its parent's point */
                int p = sec->parent < 0 ? sec->id + raw : raw == 0 ? t->pix[sec->id] : sec->id + raw - 1;
                s->sample[k] = t->order[p];
                const double diam = raw == 0 ? sec->d0 : 2.0 * pt(t, p)->radius;
                s->radius[k] = 0.5 * (single ? as_float(diam) : diam);
                if (k == 0) {
                    s->arc[k] = 0.0;
                } else {
                    const hb_sample_t *a = &m->samples[s->sample[k - 1]], *b = pt(t, p);
                    double dx = rounded(single, b->x) - rounded(single, a->x),
                           dy = rounded(single, b->y) - rounded(single, a->y),
                           dz = rounded(single, b->z) - rounded(single, a->z);
                    const double d = sqrt(dx * dx + dy * dy + dz * dz);
                    /* as hinesbatch's sections: points a hair apart would overflow */
                    if (d > 0.0 && d < HB_MORPH_MIN_LENGTH_UM) {
                        free(index);
                        free(children);
                        return hb_fail(HB_ERR_MORPHOLOGY,
                                       "%s:%ld: sample %ld is %g um from sample %ld; expected 0 "
                                       "(the same point) or at least %g um",
                                       m->name, b->line, b->id, d, a->id, HB_MORPH_MIN_LENGTH_UM);
                    }
                    s->arc[k] = s->arc[k - 1] + d;
                }
            }
        }
        s->length = s->arc[s->n_points - 1];
        if (s->parent >= 0) {
            hb_section_t *ps = &m->sections[s->parent];
            ps->n_children++;
            int at = t->pix[sec->id];
            s->branch_order = ps->type == SOMA || ps->is_sphere || s->parent_x < 1.0
                                  ? 0
                                  : ps->branch_order + (children[at] >= 2);
        }
    }
    free(index);
    free(children);
    return HB_SUCCESS;
oom:
    free(index);
    free(children);
    return hb_fail(HB_ERR_ALLOC, "%s: out of memory building Import3d sections", m->name);
}

hb_status_t hb_import3d_sections(hb_morph_t *m)
{
    i3_t t;
    memset(&t, 0, sizeof t);
    t.m = m;
    t.n = m->n_samples;
    size_t n = (size_t)t.n;
    t.order = calloc(n, sizeof *t.order);
    t.pix = malloc(n * sizeof *t.pix);
    t.nchild = calloc(n, sizeof *t.nchild);
    t.nchild_soma = calloc(n, sizeof *t.nchild_soma);
    t.connect2prox = calloc(n, sizeof *t.connect2prox);
    t.point2sec = calloc(n, sizeof *t.point2sec);
    int *rank = malloc(n * sizeof *rank);
    hb_status_t st = HB_SUCCESS;
    if (!t.order || !t.pix || !t.nchild || !t.nchild_soma || !t.connect2prox || !t.point2sec ||
        !rank) {
        st = hb_fail(HB_ERR_ALLOC, "%s: out of memory building Import3d sections", m->name);
        goto done;
    }
    id_index_t *ids = malloc(n * sizeof *ids);
    if (!ids) {
        st = hb_fail(HB_ERR_ALLOC, "%s: out of memory building Import3d sections", m->name);
        goto done;
    }
    for (int i = 0; i < t.n; i++) ids[i] = (id_index_t){m->samples[i].id, i};
    qsort(ids, n, sizeof *ids, by_id); /* ids are unique */
    for (int i = 0; i < t.n; i++) t.order[i] = ids[i].index;
    free(ids);
    for (int i = 0; i < t.n; i++) rank[t.order[i]] = i;
    for (int i = 0; i < t.n; i++) {
        int p = m->parent[t.order[i]];
        t.pix[i] = p < 0 ? -1 : rank[p];
        if (t.pix[i] >= i) {
            const hb_sample_t *s = pt(&t, i);
            st = hb_fail(HB_ERR_MORPHOLOGY,
                         "%s:%ld: sample %ld has parent %ld, a larger id; NEURON's Import3d "
                         "(HB_SECTIONS_IMPORT3D) needs every parent id below its child's",
                         m->name, s->line, s->id, m->samples[m->parent[t.order[i]]].id);
            goto done;
        }
    }
    t.n_sec = sectionify(&t);
    t.sec = calloc((size_t)t.n_sec, sizeof *t.sec);
    if (!t.sec) {
        st = hb_fail(HB_ERR_ALLOC, "%s: out of memory building Import3d sections", m->name);
        goto done;
    }
    for (int first = 0, i = 0, isec = 0; i <= t.n; i++) {
        if (i == t.n || t.point2sec[i] > isec) {
            mksection(&t, isec++, first, i);
            first = i;
        }
    }
    st = chk_valid(&t);
    if (st == HB_SUCCESS) st = instantiate(&t, m);
done:
    free(t.order);
    free(t.pix);
    free(t.nchild);
    free(t.nchild_soma);
    free(t.connect2prox);
    free(t.point2sec);
    free(t.sec);
    free(rank);
    return st;
}
