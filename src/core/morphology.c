/*
 * From SWC samples to a validated morphology: id lookup, tree checks,
 * topological sort, soma detection, radius repair and sections.
 * The rules are documented in docs/swc.md.
 *
 * Everything is O(n log n) (one sort of the ids) and iterative: trees can be
 * millions of samples deep, so nothing recurses.
 *
 * Two index spaces are used while building:
 *   input  - position in the caller's array (file order);
 *   sorted - position in hb_morph.samples (DFS pre-order, parent < child).
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/import3d.h"
#include "core/morphology.h"
#include "common/status.h"

#define HB_PI 3.14159265358979323846
#define SOMA_TYPE 1
/* Ids shown when a cycle is reported. */
#define CYCLE_IDS_SHOWN 8
/* Marks a 3-point soma side sample in the effective tree. */
#define EXCLUDED (-2)

typedef struct {
    long id;
    int index; /* input index */
} id_entry_t;

/* Scratch state of one hb_morph_from_samples call. */
typedef struct {
    const hb_sample_t *in; /* caller's samples (input order) */
    int n;
    const char *name; /* for messages */
    hb_morph_t *m;    /* result under construction */

    id_entry_t *by_id; /* sorted by (id, input index) */
    int dense;         /* by_id's ids consecutive: find_id indexes instead of bisecting */
    int *in_parent;    /* input -> parent input index, -1 for the root */
    int root;          /* input index of the root */
    int *rank;         /* input -> sorted */

    /* Children in the sorted space, in file order (CSR: child[child_start[k]
     * .. child_start[k + 1] - 1] are k's children). */
    int *child_start;
    int *child;
    /* Effective tree for sections: 3-point soma sides removed, their children
     * moved to the centre. eparent[k] is EXCLUDED for a side sample. */
    int *eparent;
    int *echild_start;
    int *echild;
    int side[2];     /* sorted indices of the 3-point soma sides, or -1 */
    int sphere;      /* the root section is a sphere */
    int *cont;       /* per sample: the child continuing its section, or -1 */
    int *section_of; /* per sample: the section holding it */
} builder_t;

/* ---- small helpers ---- */

/* malloc of count elements with overflow check; never malloc(0). */
static void *alloc_array(size_t count, size_t size)
{
    if (count == 0) count = 1;
    if (count > SIZE_MAX / size) return NULL;
    return malloc(count * size);
}

static double distance(const hb_sample_t *a, const hb_sample_t *b)
{
    double dx = a->x - b->x, dy = a->y - b->y, dz = a->z - b->z;
    return sqrt(dx * dx + dy * dy + dz * dz);
}

/* "NAME:LINE: " or "NAME: " when the sample did not come from a file. */
static void format_located(char *buf, size_t size, const char *name, long line,
                           const char *format, va_list args) HB_PRINTF(5, 0);
static void format_located(char *buf, size_t size, const char *name, long line,
                           const char *format, va_list args)
{
    int used = line > 0 ? snprintf(buf, size, "%s:%ld: ", name, line)
                        : snprintf(buf, size, "%s: ", name);
    if (used < 0) used = 0;
    if ((size_t)used < size) vsnprintf(buf + used, size - (size_t)used, format, args);
}

/* Fails with a message located at `line` of the input. */
static hb_status_t fail_at(const builder_t *b, hb_status_t status, long line,
                           const char *format, ...) HB_PRINTF(4, 5);
static hb_status_t fail_at(const builder_t *b, hb_status_t status, long line,
                           const char *format, ...)
{
    char buf[1024];
    va_list args;
    va_start(args, format);
    format_located(buf, sizeof buf, b->name, line, format, args);
    va_end(args);
    return hb_fail(status, "%s", buf);
}

static hb_status_t out_of_memory(const builder_t *b)
{
    return hb_fail(HB_ERR_ALLOC, "%s: out of memory building the morphology (%d samples)",
                   b->name, b->n);
}

/* Appends a warning "NAME:LINE: what" to the morphology. */
static hb_status_t warn_at(builder_t *b, long line, const char *format, ...) HB_PRINTF(3, 4);
static hb_status_t warn_at(builder_t *b, long line, const char *format, ...)
{
    char buf[1024];
    va_list args;
    va_start(args, format);
    vsnprintf(buf, sizeof buf, format, args);
    va_end(args);
    return hb_morph_warn(b->m, line, "%s", buf);
}

/* Where a sample is, for messages naming a second sample: "line 12" or "entry 4". */
static const char *where(char *buf, size_t size, const hb_sample_t *s, int input_index)
{
    if (s->line > 0) snprintf(buf, size, "line %ld", s->line);
    else snprintf(buf, size, "entry %d", input_index);
    return buf;
}

/* ---- 1. values of each sample ---- */

static hb_status_t check_values(const builder_t *b)
{
    for (int i = 0; i < b->n; i++) {
        const hb_sample_t *s = &b->in[i];
        if (s->id < 0)
            return fail_at(b, HB_ERR_MORPHOLOGY, s->line, "sample id %ld; expected an id >= 0",
                           s->id);
        if (s->parent < -1)
            return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                           "sample %ld has parent %ld; expected -1 for the root or a sample id",
                           s->id, s->parent);
        if (s->type < 0)
            return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                           "sample %ld has type %d; expected a type >= 0", s->id, s->type);
        const double xyz[3] = {s->x, s->y, s->z};
        for (int c = 0; c < 3; c++)
            if (!(fabs(xyz[c]) <= HB_MORPH_MAX_COORDINATE_UM))
                return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                               "sample %ld has %c = %g um; expected a finite coordinate within "
                               "+-%g um",
                               s->id, "xyz"[c], xyz[c], HB_MORPH_MAX_COORDINATE_UM);
        if (!(s->radius == 0.0 || (s->radius >= HB_MORPH_MIN_RADIUS_UM &&
                                   s->radius <= HB_MORPH_MAX_RADIUS_UM)))
            return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                           "sample %ld has radius %g um; expected 0 (repaired) or %g to %g um",
                           s->id, s->radius, HB_MORPH_MIN_RADIUS_UM, HB_MORPH_MAX_RADIUS_UM);
    }
    return HB_SUCCESS;
}

/* ---- 2. id lookup ---- */

static int compare_ids(const void *pa, const void *pb)
{
    const id_entry_t *a = pa, *b = pb;
    if (a->id != b->id) return a->id < b->id ? -1 : 1;
    return (a->index > b->index) - (a->index < b->index); /* equal ids: file order */
}

/* Sorts the ids and rejects duplicates. Ids already increasing (generated cells, most files)
 * need no sort, and consecutive ones no search. */
static hb_status_t index_ids(builder_t *b)
{
    int increasing = 1;
    for (int i = 0; i < b->n; i++) {
        b->by_id[i].id = b->in[i].id;
        b->by_id[i].index = i;
        increasing &= i == 0 || b->in[i].id > b->in[i - 1].id;
    }
    if (!increasing) qsort(b->by_id, (size_t)b->n, sizeof *b->by_id, compare_ids);
    b->dense = b->n > 0 && (unsigned long)b->by_id[b->n - 1].id - (unsigned long)b->by_id[0].id ==
                               (unsigned long)(b->n - 1);
    for (int j = 1; j < b->n; j++) {
        int first = b->by_id[j - 1].index, second = b->by_id[j].index;
        if (b->by_id[j - 1].id == b->by_id[j].id) {
            char at[48];
            return fail_at(b, HB_ERR_MORPHOLOGY, b->in[second].line,
                           "duplicate id %ld (also on %s); ids must be unique",
                           b->in[second].id, where(at, sizeof at, &b->in[first], first));
        }
    }
    return HB_SUCCESS;
}

/* Input index of the sample with this id, or -1. */
static int find_id(const builder_t *b, long id)
{
    if (b->dense) /* ids by_id[0].id .. by_id[0].id + n - 1, each once */
        return id < b->by_id[0].id || id > b->by_id[b->n - 1].id
                   ? -1 : b->by_id[(unsigned long)id - (unsigned long)b->by_id[0].id].index;
    int lo = 0, hi = b->n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        long here = b->by_id[mid].id;
        if (here == id) return b->by_id[mid].index;
        if (here < id) lo = mid + 1;
        else hi = mid - 1;
    }
    return -1;
}

/* ---- 3. parents, the root and cycles ---- */

/*
 * Reports a cycle reached from input sample `start`, none of whose ancestors
 * is the root. Walking up from it must enter a cycle; the first sample seen
 * twice is on it.
 */
static hb_status_t fail_cycle(const builder_t *b, int start, const char *prefix)
{
    unsigned char *seen = calloc((size_t)b->n, 1);
    if (!seen) return out_of_memory(b);
    int v = start;
    while (!seen[v]) {
        seen[v] = 1;
        v = b->in_parent[v];
    }
    free(seen);
    char path[256];
    size_t used = 0;
    int u = v;
    for (int shown = 0; shown <= CYCLE_IDS_SHOWN; shown++) {
        int w = snprintf(path + used, sizeof path - used, "%s%ld", shown ? " -> " : "",
                         b->in[u].id);
        if (w < 0 || (size_t)w >= sizeof path - used) break;
        used += (size_t)w;
        u = b->in_parent[u];
        if (u == v) {
            snprintf(path + used, sizeof path - used, " -> %ld", b->in[v].id);
            break;
        }
        if (shown == CYCLE_IDS_SHOWN) snprintf(path + used, sizeof path - used, " -> ...");
    }
    return fail_at(b, HB_ERR_MORPHOLOGY, b->in[v].line,
                   "%scycle: sample %ld is its own ancestor (%s); a cell must be a tree", prefix,
                   b->in[v].id, path);
}

static hb_status_t link_parents(builder_t *b)
{
    b->root = -1;
    for (int i = 0; i < b->n; i++) {
        const hb_sample_t *s = &b->in[i];
        b->in_parent[i] = -1;
        if (s->parent == -1) {
            if (b->root >= 0) {
                char at[48], root_at[48];
                const hb_sample_t *r = &b->in[b->root];
                return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                               "second root: sample %ld (%s) has parent -1, but sample %ld (%s) "
                               "is already the root; a cell must be one connected tree",
                               s->id, where(at, sizeof at, s, i), r->id,
                               where(root_at, sizeof root_at, r, b->root));
            }
            b->root = i;
            continue;
        }
        if (s->parent == s->id)
            return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                           "sample %ld is its own parent; expected -1 or another sample's id",
                           s->id);
        int p = find_id(b, s->parent);
        if (p < 0)
            return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                           "parent %ld of sample %ld does not exist; expected -1 or the id of a "
                           "sample in the file",
                           s->parent, s->id);
        b->in_parent[i] = p;
    }
    if (b->root < 0) return fail_cycle(b, 0, "no root (no sample has parent -1) and a ");
    return HB_SUCCESS;
}

/* Children lists (CSR) from a parent array; negative parents (-1, EXCLUDED)
 * are skipped. Each list is in index order. */
static int build_children(int n, const int *parent, int **start_out, int **child_out)
{
    int *start = alloc_array((size_t)n + 1, sizeof *start);
    int *child = alloc_array((size_t)n, sizeof *child);
    if (!start || !child) {
        free(start);
        free(child);
        return -1;
    }
    memset(start, 0, ((size_t)n + 1) * sizeof *start);
    for (int k = 0; k < n; k++)
        if (parent[k] >= 0) start[parent[k] + 1]++;
    for (int k = 0; k < n; k++) start[k + 1] += start[k];
    /* start[p] serves as p's cursor, then everything shifts back by one. */
    for (int k = 0; k < n; k++)
        if (parent[k] >= 0) child[start[parent[k]]++] = k;
    for (int k = n; k > 0; k--) start[k] = start[k - 1];
    start[0] = 0;
    *start_out = start;
    *child_out = child;
    return 0;
}

/*
 * Depth-first pre-order from the root, children in file order, with an
 * explicit stack. Fills rank; samples not reached hang from a cycle.
 */
static hb_status_t sort_tree(builder_t *b)
{
    int n = b->n;
    int *start = NULL, *kids = NULL;
    int *stack = alloc_array((size_t)n, sizeof *stack);
    hb_status_t status = HB_SUCCESS;
    if (!stack || build_children(n, b->in_parent, &start, &kids) != 0) {
        status = out_of_memory(b);
        goto done;
    }
    for (int i = 0; i < n; i++) b->rank[i] = -1;
    int top = 0, next_rank = 0;
    stack[top++] = b->root;
    while (top > 0) {
        int v = stack[--top];
        b->rank[v] = next_rank++;
        for (int c = start[v + 1] - 1; c >= start[v]; c--) stack[top++] = kids[c];
    }
    for (int i = 0; i < n && next_rank < n; i++)
        if (b->rank[i] < 0) {
            status = fail_cycle(b, i, "");
            break;
        }
done:
    free(start);
    free(kids);
    free(stack);
    return status;
}

/* Copies the samples in sorted order and fills morph->parent. */
static hb_status_t store_sorted(builder_t *b)
{
    hb_morph_t *m = b->m;
    int n = b->n;
    m->samples = alloc_array((size_t)n, sizeof *m->samples);
    m->parent = alloc_array((size_t)n, sizeof *m->parent);
    if (!m->samples || !m->parent) return out_of_memory(b);
    m->n_samples = n;
    for (int i = 0; i < n; i++) {
        int k = b->rank[i];
        m->samples[k] = b->in[i];
        m->parent[k] = b->in_parent[i] >= 0 ? b->rank[b->in_parent[i]] : -1;
    }
    if (build_children(n, m->parent, &b->child_start, &b->child) != 0) return out_of_memory(b);
    return HB_SUCCESS;
}

/* ---- 4. soma ---- */

/* The soma must be one connected piece containing the root. */
static hb_status_t check_soma_connected(const builder_t *b)
{
    for (int i = 0; i < b->n; i++) {
        const hb_sample_t *s = &b->in[i];
        int p = b->in_parent[i];
        if (s->type == SOMA_TYPE && p >= 0 && b->in[p].type != SOMA_TYPE)
            return fail_at(b, HB_ERR_MORPHOLOGY, s->line,
                           "soma sample %ld has a neurite as parent (sample %ld, type %d); the "
                           "soma must contain the root",
                           s->id, b->in[p].id, b->in[p].type);
    }
    return HB_SUCCESS;
}

/* Number of type-1 children of sorted sample k. */
static int soma_children(const builder_t *b, int k)
{
    int count = 0;
    for (int c = b->child_start[k]; c < b->child_start[k + 1]; c++)
        count += b->m->samples[b->child[c]].type == SOMA_TYPE;
    return count;
}

/*
 * NeuroMorpho.Org's 3-point soma: exactly three type-1 samples, the root and
 * two of its children (which then have no type-1 children). Sets b->side.
 */
static void find_three_point_soma(builder_t *b, int n_soma)
{
    const hb_sample_t *smp = b->m->samples;
    b->side[0] = b->side[1] = -1;
    if (n_soma != 3 || smp[0].type != SOMA_TYPE || soma_children(b, 0) != 2) return;
    int found = 0;
    for (int c = b->child_start[0]; c < b->child_start[1]; c++)
        if (smp[b->child[c]].type == SOMA_TYPE) b->side[found++] = b->child[c];
}

/* Warns when the 3-point soma's sides are not at +-r from the centre. */
static hb_status_t check_three_point_geometry(builder_t *b)
{
    const hb_sample_t *smp = b->m->samples;
    const hb_sample_t *c = &smp[0], *s1 = &smp[b->side[0]], *s2 = &smp[b->side[1]];
    double r = c->radius;
    double tol = fmax(1e-2 * r, 1e-6); /* NEURON's Import3d accepts 1 % */
    double sx = (s1->x - c->x) + (s2->x - c->x);
    double sy = (s1->y - c->y) + (s2->y - c->y);
    double sz = (s1->z - c->z) + (s2->z - c->z);
    double opposite = sqrt(sx * sx + sy * sy + sz * sz);
    if (fabs(distance(s1, c) - r) <= tol && fabs(distance(s2, c) - r) <= tol &&
        opposite <= 2.0 * tol)
        return HB_SUCCESS;
    return warn_at(b, c->line,
                   "3-point soma: side samples are not at +-r from the centre (r = %g; "
                   "distances %g and %g, tolerance %g); still read as a sphere of radius %g",
                   r, distance(s1, c), distance(s2, c), tol, r);
}

/* Classifies the soma and records the warnings about it. */
static hb_status_t classify_soma(builder_t *b)
{
    const hb_sample_t *smp = b->m->samples;
    int n = b->n, n_soma = 0;
    for (int k = 0; k < n; k++) n_soma += smp[k].type == SOMA_TYPE;
    find_three_point_soma(b, n_soma);
    hb_status_t st = HB_SUCCESS;
    if (b->side[0] >= 0) return check_three_point_geometry(b);
    if (n_soma == 0) return warn_at(b, 0, "no soma (no sample has type 1); read as is");
    /* A soma that branches: some type-1 sample has 3 or more type-1 neighbours
     * (the root has no parent, so it needs 3 type-1 children). */
    for (int k = 0; k < n && st == HB_SUCCESS; k++) {
        if (smp[k].type != SOMA_TYPE) continue;
        if (soma_children(b, k) + (k > 0) >= 3) {
            st = warn_at(b, smp[k].line,
                         "soma samples branch at sample %ld; each branch becomes a soma section",
                         smp[k].id);
            break;
        }
    }
    if (st == HB_SUCCESS && n_soma == n && n > 3)
        st = warn_at(b, 0,
                     "all %d samples have type 1 (soma); there is no soma/neurite split, so the "
                     "whole cell is read as soma sections",
                     n);
    return st;
}

/* ---- 5. radii ---- */

/*
 * Zero radii take the parent's (repaired) radius, top-down; a zero-radius root
 * takes the radius of the nearest sample, in breadth-first order, with a
 * positive radius.
 */
static hb_status_t repair_radii(builder_t *b)
{
    hb_sample_t *smp = b->m->samples;
    int n = b->n, zeros = 0, first = -1;
    for (int i = 0; i < n; i++)
        if (b->in[i].radius == 0.0) {
            if (first < 0) first = i;
            zeros++;
        }
    if (zeros == 0) return HB_SUCCESS;
    if (zeros == n)
        return fail_at(b, HB_ERR_MORPHOLOGY, b->in[first].line,
                       "all %d samples have radius 0; expected at least one positive radius", n);
    if (b->m->keep_zero_radius)
        return warn_at(b, b->in[first].line,
                       "%d sample%s radius 0 (first: sample %ld); kept, as NEURON keeps it",
                       zeros, zeros == 1 ? " has" : "s have", b->in[first].id);
    if (smp[0].radius == 0.0) {
        int *queue = alloc_array((size_t)n, sizeof *queue);
        if (!queue) return out_of_memory(b);
        int head = 0, tail = 0;
        queue[tail++] = 0;
        while (head < tail && smp[queue[head]].radius == 0.0) {
            int v = queue[head++];
            for (int c = b->child_start[v]; c < b->child_start[v + 1]; c++)
                queue[tail++] = b->child[c];
        }
        smp[0].radius = smp[queue[head]].radius; /* a positive radius exists */
        free(queue);
    }
    for (int k = 1; k < n; k++)
        if (smp[k].radius == 0.0) smp[k].radius = smp[b->m->parent[k]].radius;
    return warn_at(b, b->in[first].line,
                   "%d sample%s radius 0 (first: sample %ld); each takes its parent's radius "
                   "(a root takes the nearest positive radius)",
                   zeros, zeros == 1 ? " has" : "s have", b->in[first].id);
}

/* ---- 6. sections ---- */

/* The tree sections are cut from: 3-point soma sides removed, their children
 * re-attached to the centre (with a warning). */
static hb_status_t build_effective_tree(builder_t *b)
{
    const hb_sample_t *smp = b->m->samples;
    int n = b->n, moved = 0, first_moved = -1;
    b->eparent = alloc_array((size_t)n, sizeof *b->eparent);
    if (!b->eparent) return out_of_memory(b);
    for (int k = 0; k < n; k++) {
        int p = b->m->parent[k];
        if (b->side[0] >= 0 && (k == b->side[0] || k == b->side[1])) {
            p = EXCLUDED;
        } else if (b->side[0] >= 0 && p >= 0 && (p == b->side[0] || p == b->side[1])) {
            p = 0;
            if (moved++ == 0) first_moved = k;
        }
        b->eparent[k] = p;
    }
    if (build_children(n, b->eparent, &b->echild_start, &b->echild) != 0)
        return out_of_memory(b);
    if (moved == 0) return HB_SUCCESS;
    return warn_at(b, smp[first_moved].line,
                   "%d neurite%s attached to a side sample of the 3-point soma (first: sample "
                   "%ld); re-attached to the soma centre",
                   moved, moved == 1 ? " is" : "s are", smp[first_moved].id);
}

static int effective_children(const builder_t *b, int k)
{
    return b->echild_start[k + 1] - b->echild_start[k];
}

/*
 * Decides which child continues each sample's section (cont) and counts the
 * sections. The root section is a sphere when the root has no child of its
 * own type (1-point or 3-point soma, a lone sample, or a root whose children
 * all change type: as NEURON's Import3d reads it). Otherwise it runs through
 * the root's first child of its type; the root's other children attach at
 * x = 0. Elsewhere a section continues only through a single child of the
 * same type.
 */
static int plan_sections(builder_t *b)
{
    const hb_sample_t *smp = b->m->samples;
    int n = b->n, count = 1;
    for (int k = 0; k < n; k++) b->cont[k] = -1;
    for (int c = b->echild_start[0]; c < b->echild_start[1]; c++)
        if (smp[b->echild[c]].type == smp[0].type) {
            b->cont[0] = b->echild[c];
            break;
        }
    b->sphere = b->cont[0] < 0;
    for (int k = 1; k < n; k++) {
        int p = b->eparent[k];
        if (p == EXCLUDED) continue;
        if (p == 0) {
            count += k != b->cont[0];
        } else if (effective_children(b, p) == 1 && smp[k].type == smp[p].type) {
            b->cont[p] = k;
        } else {
            count++;
        }
    }
    return count;
}

/* Allocates a section's point arrays. */
static int alloc_points(hb_section_t *sec, int n_points)
{
    sec->n_points = n_points;
    sec->sample = alloc_array((size_t)n_points, sizeof *sec->sample);
    sec->arc = alloc_array((size_t)n_points, sizeof *sec->arc);
    sec->radius = alloc_array((size_t)n_points, sizeof *sec->radius);
    return sec->sample && sec->arc && sec->radius ? 0 : -1;
}

/* Section 0 as a sphere: NEURON's cylinder with L = diam = 2r. */
static hb_status_t make_sphere(builder_t *b)
{
    hb_section_t *sec = &b->m->sections[0];
    double r = b->m->samples[0].radius;
    sec->parent = -1;
    sec->parent_x = 0.0;
    sec->type = b->m->samples[0].type;
    sec->is_sphere = 1;
    if (alloc_points(sec, 2) != 0) return out_of_memory(b);
    sec->sample[0] = sec->sample[1] = -1;
    sec->arc[0] = 0.0;
    sec->arc[1] = 2.0 * r;
    sec->radius[0] = sec->radius[1] = r;
    sec->length = 2.0 * r;
    return HB_SUCCESS;
}

/*
 * Builds section `index` whose first own sample is `first` (sorted index).
 * A child of a non-sphere section starts at the branch sample it hangs from,
 * with that sample's radius. A child of a sphere starts at its own first
 * sample (the piece from the centre is inside the soma), unless it has a
 * single sample: then it starts at the centre, with its own radius.
 */
static hb_status_t make_section(builder_t *b, int index, int first)
{
    hb_morph_t *m = b->m;
    const hb_sample_t *smp = m->samples;
    hb_section_t *sec = &m->sections[index];
    int attach = first == 0 ? -1 : b->eparent[first];
    int own = 0;
    for (int k = first; k >= 0; k = b->cont[k]) own++;
    int lead = 0; /* 1 when a point precedes the own samples */
    sec->type = smp[first].type;
    sec->parent = -1;
    if (attach >= 0) {
        int ps = b->section_of[attach];
        hb_section_t *parent = &m->sections[ps];
        sec->parent = ps;
        parent->n_children++;
        if (parent->is_sphere) {
            sec->parent_x = 0.5;
            lead = own == 1;
        } else {
            sec->parent_x = attach == 0 ? 0.0 : 1.0;
            lead = 1;
        }
        /* +1 per branch point; soma sections, spheres and the root (the
         * stand-in for a soma when there is none) have order-0 children. */
        if (parent->type == SOMA_TYPE || parent->is_sphere || attach == 0)
            sec->branch_order = 0;
        else
            sec->branch_order = parent->branch_order + (effective_children(b, attach) >= 2);
    }
    if (alloc_points(sec, own + lead) != 0) return out_of_memory(b);
    int j = 0;
    if (lead) {
        sec->sample[0] = attach;
        sec->radius[0] = m->sections[sec->parent].is_sphere ? smp[first].radius
                                                             : smp[attach].radius;
        j = 1;
    }
    for (int k = first; k >= 0; k = b->cont[k], j++) {
        sec->sample[j] = k;
        sec->radius[j] = smp[k].radius;
        b->section_of[k] = index;
    }
    sec->arc[0] = 0.0;
    for (j = 1; j < sec->n_points; j++) {
        const hb_sample_t *from = &smp[sec->sample[j - 1]], *to = &smp[sec->sample[j]];
        double d = distance(from, to);
        /* Coincident points are a zero-length piece; points a hair apart would give
         * a conductance that overflows. */
        if (d > 0.0 && d < HB_MORPH_MIN_LENGTH_UM)
            return fail_at(b, HB_ERR_MORPHOLOGY, to->line,
                           "sample %ld is %g um from sample %ld; expected 0 (the same point) or "
                           "at least %g um",
                           to->id, d, from->id, HB_MORPH_MIN_LENGTH_UM);
        sec->arc[j] = sec->arc[j - 1] + d;
    }
    sec->length = sec->arc[sec->n_points - 1];
    return HB_SUCCESS;
}

static hb_status_t build_sections(builder_t *b)
{
    hb_morph_t *m = b->m;
    int n = b->n;
    b->cont = alloc_array((size_t)n, sizeof *b->cont);
    b->section_of = alloc_array((size_t)n, sizeof *b->section_of);
    if (!b->cont || !b->section_of) return out_of_memory(b);
    int count = plan_sections(b);
    m->sections = calloc((size_t)count, sizeof *m->sections);
    if (!m->sections) return out_of_memory(b);
    m->n_sections = count;
    hb_status_t st;
    if (b->sphere) {
        st = make_sphere(b);
        b->section_of[0] = 0;
    } else {
        st = make_section(b, 0, 0);
    }
    /* Section starts in pre-order: a parent section is always made first. */
    int index = 1;
    for (int k = 1; k < n && st == HB_SUCCESS; k++) {
        int p = b->eparent[k];
        if (p == EXCLUDED || b->cont[p] == k) continue;
        st = make_section(b, index++, k);
    }
    return st;
}

/* ---- public API ---- */

static void free_builder(builder_t *b)
{
    free(b->by_id);
    free(b->in_parent);
    free(b->rank);
    free(b->child_start);
    free(b->child);
    free(b->eparent);
    free(b->echild_start);
    free(b->echild);
    free(b->cont);
    free(b->section_of);
}

static hb_status_t build(builder_t *b)
{
    hb_status_t st = check_values(b);
    if (st == HB_SUCCESS) st = index_ids(b);
    if (st == HB_SUCCESS) st = link_parents(b);
    if (st == HB_SUCCESS) st = sort_tree(b);
    if (st == HB_SUCCESS) st = check_soma_connected(b);
    if (st == HB_SUCCESS) st = store_sorted(b);
    if (st == HB_SUCCESS) st = repair_radii(b);
    if (st == HB_SUCCESS && b->m->rule == HB_SECTIONS_IMPORT3D) return hb_import3d_sections(b->m);
    if (st == HB_SUCCESS) st = classify_soma(b);
    if (st == HB_SUCCESS) st = build_effective_tree(b);
    if (st == HB_SUCCESS) st = build_sections(b);
    return st;
}

hb_status_t hb_morph_from_samples(const hb_sample_t *samples, int count, const char *name,
                                  hb_morph_t **morph)
{
    return hb_morph_build(samples, count, name, NULL, morph);
}

hb_status_t hb_morph_build(const hb_sample_t *samples, int count, const char *name,
                           const hb_swc_options_t *options, hb_morph_t **morph)
{
    hb_clear_error();
    if (!morph) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_from_samples: morph is NULL");
    *morph = NULL;
    if (!name) name = "<samples>";
    if (options && options->sections != HB_SECTIONS_HINESBATCH &&
        options->sections != HB_SECTIONS_IMPORT3D)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: section rule %d; expected HB_SECTIONS_HINESBATCH or HB_SECTIONS_IMPORT3D",
                       name, (int)options->sections);
    if (options && options->keep_zero_radius != 0 && options->keep_zero_radius != 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: keep_zero_radius %d; expected 0 or 1", name,
                       options->keep_zero_radius);
    if (options && options->single_points != 0 && options->single_points != 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: single_points %d; expected 0 or 1", name,
                       options->single_points);
    if (options && options->single_points && options->sections != HB_SECTIONS_IMPORT3D)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "%s: single_points (NEURON's float 3-D points) with the hinesbatch section "
                       "rule; expected HB_SECTIONS_IMPORT3D (NEURON's sections)", name);
    if (count < 0 || (count > 0 && !samples))
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "hb_morph_from_samples: %s: count %d with samples %s; expected "
                       "count >= 0 and a sample array",
                       name, count, samples ? "given" : "NULL");
    if (count == 0)
        return hb_fail(HB_ERR_MORPHOLOGY, "%s: no samples; expected at least one sample line",
                       name);

    builder_t b;
    memset(&b, 0, sizeof b);
    b.in = samples;
    b.n = count;
    b.name = name;
    b.m = calloc(1, sizeof *b.m);
    size_t name_len = strlen(name) + 1;
    if (b.m) {
        b.m->name = malloc(name_len);
        b.m->rule = options ? options->sections : HB_SECTIONS_HINESBATCH;
        b.m->keep_zero_radius = options ? options->keep_zero_radius : 0;
        b.m->single_points = options ? options->single_points : 0;
    }
    b.by_id = alloc_array((size_t)count, sizeof *b.by_id);
    b.in_parent = alloc_array((size_t)count, sizeof *b.in_parent);
    b.rank = alloc_array((size_t)count, sizeof *b.rank);
    hb_status_t st;
    if (!b.m || !b.m->name || !b.by_id || !b.in_parent || !b.rank) {
        st = out_of_memory(&b);
    } else {
        memcpy(b.m->name, name, name_len);
        b.name = b.m->name; /* the caller's name may be a temporary */
        st = build(&b);
    }
    free_builder(&b);
    if (st != HB_SUCCESS) {
        hb_morph_destroy(b.m);
        return st;
    }
    *morph = b.m;
    return HB_SUCCESS;
}

hb_status_t hb_morph_stats(const hb_morph_t *morph, hb_morph_stats_t *stats)
{
    if (!morph || !stats) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_stats: NULL argument");
    memset(stats, 0, sizeof *stats);
    stats->points = morph->n_samples;
    stats->sections = morph->n_sections;
    /* A terminal is a section whose distal end has no child. Only the root
     * section can have children at x = 0 (see make_section). */
    int root_distal_children = 0;
    for (int i = 0; i < morph->n_sections; i++) {
        const hb_section_t *sec = &morph->sections[i];
        root_distal_children += sec->parent == 0 && sec->parent_x > 0.0;
        if (i > 0) stats->terminals += sec->n_children == 0;
        if (sec->branch_order > stats->max_branch_order)
            stats->max_branch_order = sec->branch_order;
        if (sec->is_sphere) {
            double r = sec->radius[0];
            stats->area_um2 += 4.0 * HB_PI * r * r;
            continue;
        }
        stats->length_um += sec->length;
        for (int k = 0; k + 1 < sec->n_points; k++) {
            double ds = sec->arc[k + 1] - sec->arc[k];
            double r0 = sec->radius[k], r1 = sec->radius[k + 1];
            stats->area_um2 += HB_PI * (r0 + r1) * sqrt(ds * ds + (r1 - r0) * (r1 - r0));
        }
    }
    if (morph->n_sections > 0) stats->terminals += root_distal_children == 0;
    return HB_SUCCESS;
}

hb_status_t hb_morph_cut(const hb_morph_t *morph, int samples, hb_morph_t **piece)
{
    hb_clear_error();
    if (!piece) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_cut: piece is NULL");
    *piece = NULL;
    if (!morph) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_cut: morph is NULL");
    if (samples < 1 || samples > morph->n_samples)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_cut: %d samples; expected 1..%d", samples,
                       morph->n_samples);
    /* Samples are stored parents first, so any prefix is a connected tree. */
    size_t len = strlen(morph->name) + 48;
    char *name = malloc(len);
    if (!name) return hb_fail(HB_ERR_ALLOC, "hb_morph_cut: out of memory");
    snprintf(name, len, "%s (first %d samples)", morph->name, samples);
    hb_swc_options_t options;
    hb_swc_options_default(&options);
    options.sections = morph->rule;
    options.keep_zero_radius = morph->keep_zero_radius;
    options.single_points = morph->single_points;
    hb_status_t status = hb_morph_build(morph->samples, samples, name, &options, piece);
    free(name);
    return status;
}
