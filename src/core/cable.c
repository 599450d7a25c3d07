/*
 * Compartmentalisation of a morphology and the cable-equation matrix.
 *
 * Every section is cut at boundaries s_0 = 0 < s_1 < ... < s_n = L (arc length).
 * HB_SCHEME_VERTEX puts a node at every boundary (the section start belongs to
 * the parent), each node owning half of each adjacent piece; forks are nodes.
 * HB_SCHEME_NEURON puts a node at every piece centre, plus a zero-area node at
 * x = 1 of every section and at x = 0 of the root, exactly as NEURON does.
 * Geometry integrals treat the radius as linear in arc length between points
 * (frustums). See docs/discretisation.md.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/morphology.h"
#include "common/status.h"

#define HB_PI 3.14159265358979323846
/* NEURON's nominal area for rows of zero-area nodes [um^2]. */
#define ZERO_AREA_ROW_SCALE 100.0

struct hb_cable {
    int n_nodes;
    int n_compartments;
    int *parent;
    hb_node_info_t *nodes;
};

void hb_discretization_default(hb_discretization_t *options)
{
    if (!options) return;
    memset(options, 0, sizeof *options);
    options->policy = HB_CPOLICY_D_LAMBDA;
    options->scheme = HB_SCHEME_VERTEX;
    options->count = 1;
    options->max_length_um = 10.0;
    options->d_lambda = 0.1;
    options->frequency_hz = 100.0;
    options->ra_ohm_cm = 100.0;
    options->cm_uf_cm2 = 1.0;
    options->max_rows = HB_DEFAULT_MAX_ROWS;
}

/* Ra [ohm cm] and cm [uF/cm^2] of a section's region. */
static double region_ra(const hb_discretization_t *opt, int type)
{
    if (type >= 0 && type < HB_SWC_TYPES && opt->ra_by_type[type] > 0.0)
        return opt->ra_by_type[type];
    return opt->ra_ohm_cm;
}

static double region_cm(const hb_discretization_t *opt, int type)
{
    if (type >= 0 && type < HB_SWC_TYPES && opt->cm_by_type[type] > 0.0)
        return opt->cm_by_type[type];
    return opt->cm_uf_cm2;
}

/* ---- geometry along one section's polyline ---- */

/* Radius at arc position s within piece k (between points k and k+1). */
static double radius_at(const hb_section_t *sec, int k, double s)
{
    double ds = sec->arc[k + 1] - sec->arc[k];
    if (ds <= 0.0) return s > sec->arc[k] ? sec->radius[k + 1] : sec->radius[k];
    double t = (s - sec->arc[k]) / ds;
    return sec->radius[k] + t * (sec->radius[k + 1] - sec->radius[k]);
}

/* First piece k (between points k and k + 1) with arc[k + 1] >= s, or the last piece. */
static int first_piece_reaching(const hb_section_t *sec, double s)
{
    int lo = 0, hi = sec->n_points - 2;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (sec->arc[mid + 1] >= s) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

/*
 * Lateral frustum area [um^2] and axial resistance factor
 * integral ds / (pi r^2) [1/um] over arc positions [a, b]. Only the pieces
 * that overlap [a, b] are visited (found by bisection), so cutting a section
 * into compartments is linear in its points and compartments.
 */
static void integrate(const hb_section_t *sec, double a, double b, double *area,
                      double *resistance_factor)
{
    double total_area = 0.0, total_factor = 0.0;
    for (int k = first_piece_reaching(sec, a); k + 1 < sec->n_points; k++) {
        double s0 = sec->arc[k], s1 = sec->arc[k + 1];
        if (s0 >= b) break; /* this piece and all later ones lie past b */
        double lo = a > s0 ? a : s0, hi = b < s1 ? b : s1;
        if (hi < lo || (hi == lo && s1 > s0)) continue;
        if (s1 == s0 && !(a <= s0 && s0 < b)) continue; /* count a step once */
        double r0 = s1 > s0 ? radius_at(sec, k, lo) : sec->radius[k];
        double r1 = s1 > s0 ? radius_at(sec, k, hi) : sec->radius[k + 1]; /* a step: annulus */
        double len = hi - lo;
        total_area += HB_PI * (r0 + r1) * sqrt(len * len + (r1 - r0) * (r1 - r0));
        if (len > 0.0) total_factor += len / (HB_PI * r0 * r1);
    }
    *area = total_area;
    *resistance_factor = total_factor;
}

/*
 * NEURON's diam_from_list (nrnoc/treeset.cpp) for the n equal segments of a section: per segment
 * its area [um^2] and the axial resistances of its left and right halves [Mohm]. NEURON's own cuts
 * (3-D points, half-segment points) and floors (a piece shorter than 1e-15 um counts 1e-15 um; a
 * diameter product of 0 counts 1e-15, so a kept zero radius gives ~1e15 per piece) are kept.
 */
static void neuron_segments(const hb_section_t *sec, int n, double ra, double *area,
                            double *rleft, double *rright)
{
    const int npt = sec->n_points;
    const double *arc = sec->arc;
    const double ds = arc[npt - 1] / (double)n;
    int j = 0;
    double x1 = arc[0], y1 = fabs(2.0 * sec->radius[0]);
    for (int inode = 0; inode < n; inode++) {
        double si = (double)inode * ds, sum_area = 0.0;
        for (int ihalf = 0; ihalf < 2; ihalf++) {
            double ri = 0.0, sip = si + ds / 2.0;
            for (;;) {
                int jp = j + 1, jnext;
                double xj = arc[j], xjp = arc[jp], x2, y2;
                if (xjp > sip || jp == npt - 1) {
                    double frac = fabs(xjp - xj) < 1e-10 ? 1.0 : (sip - xj) / (xjp - xj);
                    x2 = sip;
                    y2 = (1.0 - frac) * fabs(2.0 * sec->radius[j]) + frac * fabs(2.0 * sec->radius[jp]);
                    jnext = j;
                } else {
                    x2 = xjp;
                    y2 = fabs(2.0 * sec->radius[jp]);
                    jnext = jp;
                }
                double delta = x2 - x1;
                if (delta < 1e-15) delta = 1e-15;
                double temp = y2 * y1 / delta;
                if (temp == 0.0) temp = 1e-15;
                ri += 1.0 / temp;
                temp = 0.5 * (y2 - y1);
                temp = sqrt(delta * delta + temp * temp);
                sum_area += (y2 + y1) * temp;
                x1 = x2;
                y1 = y2;
                if (j == jnext) break;
                j = jnext;
            }
            *(ihalf == 0 ? &rleft[inode] : &rright[inode]) = ri * ra / HB_PI * (4.0 * 0.01);
            si = sip;
        }
        area[inode] = sum_area * 0.5 * HB_PI;
    }
}

/* NEURON's lambda_f(frequency) of a polyline [um] (nrn/share/lib/hoc/stdlib). */
static double lambda_f(const hb_section_t *sec, const hb_discretization_t *opt)
{
    double scale = sqrt(4.0 * HB_PI * opt->frequency_hz * region_ra(opt, sec->type) *
                        region_cm(opt, sec->type));
    double lam = 0.0;
    for (int k = 0; k + 1 < sec->n_points; k++) {
        double d_sum = 2.0 * (sec->radius[k] + sec->radius[k + 1]); /* diam1 + diam2 */
        lam += (sec->arc[k + 1] - sec->arc[k]) / sqrt(d_sum);
    }
    lam *= sqrt(2.0) * 1e-5 * scale;
    return lam > 0.0 ? sec->length / lam : INFINITY;
}

static int nonzero_pieces(const hb_section_t *sec)
{
    int n = 0;
    for (int k = 0; k + 1 < sec->n_points; k++) n += sec->arc[k + 1] > sec->arc[k];
    return n;
}

/*
 * Compartments of a section under the policy, as a double: with extreme
 * geometry or options it may be huge (or not finite), and it is checked
 * against the limits before anything is allocated.
 */
static double section_count(const hb_section_t *sec, const hb_discretization_t *opt)
{
    double n;
    const int type_count =
        sec->type >= 0 && sec->type < HB_SWC_TYPES ? opt->count_by_type[sec->type] : 0;
    switch (type_count > 0 ? HB_CPOLICY_FIXED : opt->policy) {
    case HB_CPOLICY_FIXED: n = type_count > 0 ? type_count : opt->count; break;
    case HB_CPOLICY_MAX_LENGTH: n = ceil(sec->length / opt->max_length_um); break;
    case HB_CPOLICY_ODD_LENGTH: n = 1.0 + 2.0 * floor(sec->length / (2.0 * opt->max_length_um)); break;
    case HB_CPOLICY_D_LAMBDA:
        n = floor((sec->length / (opt->d_lambda * lambda_f(sec, opt)) + 0.9) / 2.0) * 2.0 + 1.0;
        break;
    case HB_CPOLICY_PER_SEGMENT: n = sec->is_sphere ? 1 : nonzero_pieces(sec); break;
    default: n = NAN; break;
    }
    return n < 1.0 ? 1.0 : n; /* NaN stays NaN */
}

/* Matrix rows a section adds with n compartments (see build_section). */
static double section_rows(const hb_section_t *sec, double n, const hb_discretization_t *opt)
{
    const int root = sec->parent < 0;
    if (sec->length <= 0.0) return root;
    if (opt->scheme == HB_SCHEME_NEURON) return n + 1.0 + root;
    return sec->is_sphere ? 1.0 : n + root;
}

/* The same rows, counting only those with membrane. */
static double section_compartments(const hb_section_t *sec, double n,
                                   const hb_discretization_t *opt)
{
    if (sec->length <= 0.0) return 0.0;
    if (opt->scheme == HB_SCHEME_NEURON) return n;
    return sec->is_sphere ? 1.0 : n + (sec->parent < 0);
}

/* Piece boundaries of a section cut into n pieces; -1 when out of memory. */
static int section_boundaries(const hb_section_t *sec, const hb_discretization_t *opt, int n,
                              double **out)
{
    /* NEURON's per-3d-segment rule keeps equal lengths; ours cuts at samples. */
    const int at_samples =
        opt->policy == HB_CPOLICY_PER_SEGMENT && opt->scheme == HB_SCHEME_VERTEX &&
        !sec->is_sphere &&
        !(sec->type >= 0 && sec->type < HB_SWC_TYPES && opt->count_by_type[sec->type] > 0);
    double *s = malloc((size_t)(n + 1) * sizeof *s);
    if (!s) return -1;
    if (at_samples) {
        int j = 0;
        s[j++] = 0.0;
        for (int k = 1; k < sec->n_points && j <= n; k++)
            if (sec->arc[k] > sec->arc[k - 1]) s[j++] = sec->arc[k];
        if (j == 1) s[j++] = sec->length;
    } else {
        for (int j = 0; j <= n; j++) s[j] = sec->length * j / n;
    }
    s[n] = sec->length;
    *out = s;
    return n;
}

/* SWC id of the sample ending the piece that holds arc position s. */
static long sample_at(const hb_morph_t *morph, const hb_section_t *sec, double s)
{
    int k = first_piece_reaching(sec, s) + 1; /* the first point k >= 1 with arc[k] >= s */
    int index = sec->sample[k];
    if (index < 0) index = 0; /* sphere soma: the root sample */
    return morph->samples[index].id;
}

/* SWC id of point k of a section (a sphere's virtual points: the root's). */
static long point_id(const hb_morph_t *morph, const hb_section_t *sec, int k)
{
    return morph->samples[sec->sample[k] < 0 ? 0 : sec->sample[k]].id;
}

/* ---- node list construction ---- */

typedef struct {
    hb_cable_t *cable;
    int capacity;
} builder_t;

static int add_node(builder_t *b, const hb_node_info_t *info)
{
    hb_cable_t *c = b->cable;
    if (c->n_nodes == b->capacity) return -1; /* plan_cable counts every node: never */
    c->nodes[c->n_nodes] = *info;
    if (info->kind == HB_NODE_COMPARTMENT) c->n_compartments++;
    return c->n_nodes++;
}

static hb_status_t check_options(const hb_discretization_t *opt)
{
    if (opt->scheme != HB_SCHEME_VERTEX && opt->scheme != HB_SCHEME_NEURON)
        return hb_fail(HB_ERR_INVALID_VALUE, "discretisation: unknown scheme %d", (int)opt->scheme);
    if (!(opt->ra_ohm_cm > 0.0) || !isfinite(opt->ra_ohm_cm))
        return hb_fail(HB_ERR_INVALID_VALUE, "discretisation: Ra = %g ohm cm; expected > 0",
                       opt->ra_ohm_cm);
    if (!(opt->cm_uf_cm2 > 0.0) || !isfinite(opt->cm_uf_cm2))
        return hb_fail(HB_ERR_INVALID_VALUE, "discretisation: cm = %g uF/cm2; expected > 0",
                       opt->cm_uf_cm2);
    for (int t = 0; t < HB_SWC_TYPES; t++)
        if (opt->count_by_type[t] < 0 || opt->count_by_type[t] > 1000000)
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "discretisation: SWC type %d has %d compartments per section; expected "
                           "0..1000000 (0: the policy's)",
                           t, opt->count_by_type[t]);
    for (int t = 0; t < HB_SWC_TYPES; t++)
        if (opt->ra_by_type[t] < 0.0 || opt->cm_by_type[t] < 0.0 || !isfinite(opt->ra_by_type[t]) ||
            !isfinite(opt->cm_by_type[t]))
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "discretisation: SWC type %d has Ra %g, cm %g; expected >= 0 (0: default)",
                           t, opt->ra_by_type[t], opt->cm_by_type[t]);
    if (opt->max_rows < 0)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "discretisation: max_rows = %d; expected > 0 (0: the default, %d)",
                       opt->max_rows, HB_DEFAULT_MAX_ROWS);
    switch (opt->policy) {
    case HB_CPOLICY_FIXED:
        if (opt->count < 1 || opt->count > 1000000)
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "discretisation: %d compartments per section; expected 1..1000000",
                           opt->count);
        break;
    case HB_CPOLICY_MAX_LENGTH:
    case HB_CPOLICY_ODD_LENGTH:
        if (!(opt->max_length_um > 0.0) || !isfinite(opt->max_length_um))
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "discretisation: maximum compartment length %g um; expected > 0",
                           opt->max_length_um);
        break;
    case HB_CPOLICY_D_LAMBDA:
        if (!(opt->d_lambda > 0.0) || !(opt->frequency_hz > 0.0) || !isfinite(opt->d_lambda) ||
            !isfinite(opt->frequency_hz))
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "discretisation: d_lambda %g at %g Hz; expected both > 0",
                           opt->d_lambda, opt->frequency_hz);
        break;
    case HB_CPOLICY_PER_SEGMENT: break;
    default:
        return hb_fail(HB_ERR_INVALID_VALUE, "discretisation: unknown policy %d",
                       (int)opt->policy);
    }
    return HB_SUCCESS;
}

/*
 * Nodes of one section. attach: node the section hangs from (-1 for the root
 * section). end_node receives the node its x = 1 children attach to,
 * centre_node the node holding x = 0.5 (where a sphere's children attach),
 * start_node the node at x = 0 (only the root section has one). count: its
 * compartments, as planned (plan_cable).
 */
static hb_status_t build_section(builder_t *b, const hb_morph_t *morph, int index,
                                 const hb_discretization_t *opt, int count, int attach,
                                 int *end_node, int *centre_node, int *start_node)
{
    const hb_section_t *sec = &morph->sections[index];
    hb_cable_t *c = b->cable;
    double *s = NULL, *seg = NULL; /* boundaries; NEURON scheme: per-segment geometry */
    double area, factor;
    hb_node_info_t info;

    memset(&info, 0, sizeof info);
    info.section = index;
    info.swc_type = sec->type;
    info.cm_uf_cm2 = region_cm(opt, sec->type);
    const double ra = region_ra(opt, sec->type);
    *end_node = attach;
    *centre_node = attach;
    *start_node = attach;
    if (sec->length <= 0.0) {
        /* Zero length: no membrane, no nodes; children attach where it attaches.
         * A zero-length root still needs one (zero-area) node to hang from. */
        if (attach >= 0) return HB_SUCCESS;
        info.parent = -1;
        info.kind = HB_NODE_ROOT_END;
        info.sample_id = sample_at(morph, sec, 0.0);
        int root = add_node(b, &info);
        if (root < 0) return hb_fail(HB_ERR_ALLOC, "out of memory building compartments");
        *end_node = *centre_node = *start_node = root;
        return HB_SUCCESS;
    }
    int n = section_boundaries(sec, opt, count, &s);
    if (n < 0) return hb_fail(HB_ERR_ALLOC, "out of memory cutting section %d", index);
    int prev = attach;

    if (opt->scheme == HB_SCHEME_NEURON) {
        /* NEURON's geometry (neuron_segments); children at 0.5 hang from node_index(0.5). */
        seg = malloc((size_t)n * 3 * sizeof *seg);
        if (!seg) goto oom;
        double *seg_area = seg, *rleft = seg + n, *rright = seg + 2 * n;
        neuron_segments(sec, n, ra, seg_area, rleft, rright);
        if (attach < 0) { /* root section: zero-area x = 0 node */
            info.parent = -1;
            info.kind = HB_NODE_ROOT_END;
            info.x = 0.0;
            info.sample_id = sample_at(morph, sec, 0.0);
            if ((prev = add_node(b, &info)) < 0) goto oom;
            *start_node = prev;
        }
        for (int j = 0, k = 1; j < n; j++) {
            const double centre = 0.5 * (s[j] + s[j + 1]);
            while (k + 1 < sec->n_points && sec->arc[k] < centre) k++; /* sample_at, resumed */
            info.parent = prev;
            info.kind = HB_NODE_COMPARTMENT;
            info.x = (j + 0.5) / n;
            info.area_um2 = seg_area[j];
            info.sample_id = point_id(morph, sec, k);
            info.r_axial_mohm = j == 0 ? rleft[0] : rright[j - 1] + rleft[j];
            if ((prev = add_node(b, &info)) < 0) goto oom;
            if (j == (int)(0.5 * n)) *centre_node = prev;
        }
        info.parent = prev;
        info.kind = HB_NODE_SECTION_END;
        info.x = 1.0;
        info.area_um2 = 0.0;
        info.sample_id = point_id(morph, sec, sec->n_points - 1); /* after any zero-length piece */
        info.r_axial_mohm = rright[n - 1];
        if ((prev = add_node(b, &info)) < 0) goto oom;
        *end_node = prev;
    } else if (sec->is_sphere) {
        /* One node for the whole sphere; children hang from its centre. */
        integrate(sec, 0.0, sec->length, &info.area_um2, &factor);
        info.parent = attach;
        info.kind = HB_NODE_COMPARTMENT;
        info.x = 0.5;
        info.sample_id = sample_at(morph, sec, 0.0);
        info.r_axial_mohm = attach < 0 ? 0.0 : ra * factor * 1e-2;
        if ((prev = add_node(b, &info)) < 0) goto oom;
        *end_node = *centre_node = *start_node = prev;
    } else {
        if (attach < 0) { /* root section: a node at its start owns the first half piece */
            info.parent = -1;
            info.kind = HB_NODE_COMPARTMENT;
            info.x = 0.0;
            info.sample_id = sample_at(morph, sec, 0.0);
            info.r_axial_mohm = 0.0;
            integrate(sec, 0.0, 0.5 * s[1], &info.area_um2, &factor);
            if ((prev = add_node(b, &info)) < 0) goto oom;
            *start_node = prev;
        } else {
            integrate(sec, 0.0, 0.5 * s[1], &area, &factor);
            c->nodes[attach].area_um2 += area; /* first half piece belongs to the fork */
        }
        for (int j = 1; j <= n; j++) {
            double proximal_half, distal_half = 0.0;
            integrate(sec, 0.5 * (s[j - 1] + s[j]), s[j], &proximal_half, &factor);
            if (j < n) integrate(sec, s[j], 0.5 * (s[j] + s[j + 1]), &distal_half, &factor);
            integrate(sec, s[j - 1], s[j], &area, &factor);
            info.parent = prev;
            info.kind = HB_NODE_COMPARTMENT;
            info.x = s[j] / sec->length;
            info.sample_id = sample_at(morph, sec, s[j]);
            info.area_um2 = proximal_half + distal_half;
            info.r_axial_mohm = ra * factor * 1e-2;
            if ((prev = add_node(b, &info)) < 0) goto oom;
            if (s[j - 1] < 0.5 * sec->length && 0.5 * sec->length <= s[j]) *centre_node = prev;
        }
        *end_node = prev;
    }
    free(s);
    free(seg);
    return HB_SUCCESS;
oom:
    free(s);
    free(seg);
    return hb_fail(HB_ERR_ALLOC, "out of memory building compartments");
}

static const char *policy_name(hb_cpolicy_t policy)
{
    switch (policy) {
    case HB_CPOLICY_FIXED: return "fixed";
    case HB_CPOLICY_MAX_LENGTH: return "max-length";
    case HB_CPOLICY_D_LAMBDA: return "d-lambda";
    case HB_CPOLICY_PER_SEGMENT: return "per-segment";
    case HB_CPOLICY_ODD_LENGTH: return "odd-length";
    }
    return "unknown";
}

/* Line of a section's first own sample (the root's for a sphere), for messages. */
static long section_line(const hb_morph_t *morph, const hb_section_t *sec)
{
    int k = sec->n_points > 1 ? sec->sample[1] : sec->sample[0];
    return morph->samples[k < 0 ? 0 : k].line;
}

/* "NAME:LINE: " or "NAME: " for samples that did not come from a file. */
static void located(char *buf, size_t size, const hb_morph_t *morph, long line)
{
    if (line > 0) snprintf(buf, size, "%s:%ld: ", morph->name, line);
    else snprintf(buf, size, "%s: ", morph->name);
}

/*
 * Compartments per section (count) and the size of the whole cable, checked
 * before anything is allocated: every compartment at least
 * HB_MORPH_MIN_LENGTH_UM long, at most max_rows rows, and some membrane.
 */
static hb_status_t plan_cable(const hb_morph_t *morph, const hb_discretization_t *opt,
                              int *count, int *rows_out)
{
    const double max_rows = opt->max_rows > 0 ? opt->max_rows : HB_DEFAULT_MAX_ROWS;
    double rows = 0.0, compartments = 0.0;
    char at[512];
    for (int i = 0; i < morph->n_sections; i++) {
        const hb_section_t *sec = &morph->sections[i];
        double n = section_count(sec, opt);
        double piece = sec->length / n;
        int one_node = opt->scheme == HB_SCHEME_VERTEX && sec->is_sphere;
        if (sec->length > 0.0 && !one_node && !(n <= max_rows && piece >= HB_MORPH_MIN_LENGTH_UM)) {
            located(at, sizeof at, morph, section_line(morph, sec));
            return hb_fail(HB_ERR_MORPHOLOGY,
                           "%ssection %d (%g um long) would be cut into %.3g compartments of "
                           "%.3g um under the %s policy; expected at most max_rows = %.0f "
                           "compartments of at least %g um (choose a coarser discretisation)",
                           at, i, sec->length, n, piece, policy_name(opt->policy), max_rows,
                           HB_MORPH_MIN_LENGTH_UM);
        }
        count[i] = one_node || sec->length <= 0.0 ? 1 : (int)n;
        rows += section_rows(sec, count[i], opt);
        compartments += section_compartments(sec, count[i], opt);
    }
    if (compartments == 0.0) {
        located(at, sizeof at, morph, morph->samples[0].line);
        return hb_fail(HB_ERR_MORPHOLOGY,
                       "%sall %d samples are at one point and there is no soma sphere, so the "
                       "cell has no membrane; expected samples at distinct points (or a "
                       "single type-1 root)",
                       at, morph->n_samples);
    }
    if (rows > max_rows) {
        const double bytes = rows * (double)(sizeof(hb_node_info_t) + sizeof(int));
        return hb_fail(HB_ERR_MORPHOLOGY,
                       "%s: %.0f matrix rows (%.0f compartments in %d section%s) under the %s "
                       "policy, %.3g MB for the cable alone; expected at most max_rows = %.0f "
                       "rows (hb_discretization_t.max_rows)",
                       morph->name, rows, compartments, morph->n_sections,
                       morph->n_sections == 1 ? "" : "s", policy_name(opt->policy), bytes * 1e-6,
                       max_rows);
    }
    *rows_out = (int)rows;
    return HB_SUCCESS;
}

/*
 * Zero radii kept as NEURON keeps them (hb_swc_options_t.keep_zero_radius): only NEURON's scheme
 * has NEURON's resistance floor for them, and where NEURON stops (lambda_f at a zero diameter
 * other than a section's last) the discretisation refuses.
 */
static hb_status_t check_zero_radii(const hb_morph_t *morph, const hb_discretization_t *opt)
{
    for (int i = 0; i < morph->n_sections; i++) {
        const hb_section_t *sec = &morph->sections[i];
        const int fixed = sec->type >= 0 && sec->type < HB_SWC_TYPES && opt->count_by_type[sec->type] > 0;
        for (int k = 0; k < sec->n_points; k++) {
            if (sec->radius[k] > 0.0) continue;
            if (opt->scheme != HB_SCHEME_NEURON)
                return hb_fail(HB_ERR_MORPHOLOGY,
                               "%s: sample %ld has radius 0 (kept: keep_zero_radius); the vertex "
                               "scheme needs positive radii; expected HB_SCHEME_NEURON "
                               "(--scheme neuron) or repaired radii",
                               morph->name, point_id(morph, sec, k));
            if (opt->policy == HB_CPOLICY_D_LAMBDA && !fixed && k + 1 < sec->n_points)
                return hb_fail(HB_ERR_MORPHOLOGY,
                               "%s: sample %ld has radius 0 (kept) and is not the end of its "
                               "section; the d_lambda rule, as NEURON's lambda_f (\"0 diameter for "
                               "3d point\"), needs a diameter there; expected another policy or "
                               "repaired radii",
                               morph->name, point_id(morph, sec, k));
        }
    }
    return HB_SUCCESS;
}

/* A compartment without membrane (kept zero radii over a whole segment): NEURON divides by it. */
static hb_status_t check_areas(const hb_morph_t *morph, const hb_cable_t *c)
{
    for (int i = 0; i < c->n_nodes; i++)
        if (c->nodes[i].kind == HB_NODE_COMPARTMENT && !(c->nodes[i].area_um2 > 0.0))
            return hb_fail(HB_ERR_MORPHOLOGY,
                           "%s: the compartment at x = %g of section %d (sample %ld) has no membrane "
                           "area (radius 0 throughout); expected positive radii there",
                           morph->name, c->nodes[i].x, c->nodes[i].section, c->nodes[i].sample_id);
    return HB_SUCCESS;
}

hb_status_t hb_cable_create(const hb_morph_t *morph, const hb_discretization_t *options,
                            hb_cable_t **cable)
{
    hb_clear_error();
    if (!cable) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cable_create: cable is NULL");
    *cable = NULL;
    if (!morph || !options)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cable_create: morphology or options is NULL");
    hb_status_t status = check_options(options);
    if (status != HB_SUCCESS) return status;
    if (morph->n_sections < 1)
        return hb_fail(HB_ERR_MORPHOLOGY, "%s: no sections", morph->name);
    if (morph->keep_zero_radius && (status = check_zero_radii(morph, options)) != HB_SUCCESS)
        return status;

    const size_t n_sections = (size_t)morph->n_sections;
    builder_t b = {NULL, 0};
    int *end_node = malloc(n_sections * sizeof *end_node);
    int *centre_node = malloc(n_sections * sizeof *centre_node);
    int *start_node = malloc(n_sections * sizeof *start_node);
    int *count = malloc(n_sections * sizeof *count);
    int rows = 0;
    if (!end_node || !centre_node || !start_node || !count) {
        status = hb_fail(HB_ERR_ALLOC, "out of memory building compartments");
        goto done;
    }
    if ((status = plan_cable(morph, options, count, &rows)) != HB_SUCCESS) goto done;
    b.cable = calloc(1, sizeof(hb_cable_t));
    if (b.cable) b.cable->nodes = malloc((size_t)rows * sizeof *b.cable->nodes);
    if (!b.cable || !b.cable->nodes) {
        status = hb_fail(HB_ERR_ALLOC, "%s: out of memory for %d matrix rows", morph->name, rows);
        goto done;
    }
    b.capacity = rows;
    for (int i = 0; i < morph->n_sections && status == HB_SUCCESS; i++) {
        const hb_section_t *sec = &morph->sections[i];
        int attach = -1;
        if (sec->parent >= 0) {
            int p = sec->parent;
            attach = sec->parent_x <= 0.0  ? start_node[p]
                     : sec->parent_x < 1.0 ? centre_node[p]
                                           : end_node[p];
        }
        status = build_section(&b, morph, i, options, count[i], attach, &end_node[i],
                               &centre_node[i], &start_node[i]);
    }
    if (status == HB_SUCCESS && b.cable->n_nodes == 0)
        status = hb_fail(HB_ERR_MORPHOLOGY, "%s: the cell has zero length", morph->name);
    if (status == HB_SUCCESS && morph->keep_zero_radius) status = check_areas(morph, b.cable);
    if (status == HB_SUCCESS) {
        hb_cable_t *c = b.cable;
        c->parent = malloc((size_t)c->n_nodes * sizeof *c->parent);
        if (!c->parent) {
            status = hb_fail(HB_ERR_ALLOC, "out of memory building compartments");
        } else {
            for (int i = 0; i < c->n_nodes; i++) c->parent[i] = c->nodes[i].parent;
        }
    }
done:
    free(end_node);
    free(centre_node);
    free(start_node);
    free(count);
    if (status != HB_SUCCESS) {
        hb_cable_destroy(b.cable);
        return status;
    }
    *cable = b.cable;
    return HB_SUCCESS;
}

hb_status_t hb_cable_destroy(hb_cable_t *cable)
{
    if (!cable) return HB_SUCCESS;
    free(cable->parent);
    free(cable->nodes);
    free(cable);
    return HB_SUCCESS;
}

int hb_cable_size(const hb_cable_t *cable) { return cable ? cable->n_nodes : 0; }

int hb_cable_compartments(const hb_cable_t *cable) { return cable ? cable->n_compartments : 0; }

const int *hb_cable_parent(const hb_cable_t *cable) { return cable ? cable->parent : NULL; }

hb_status_t hb_cable_node(const hb_cable_t *cable, int node, hb_node_info_t *info)
{
    if (!cable || !info) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cable_node: NULL argument");
    if (node < 0 || node >= cable->n_nodes)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cable_node: node %d; expected 0..%d", node,
                       cable->n_nodes - 1);
    *info = cable->nodes[node];
    return HB_SUCCESS;
}

/* ---- the matrix ---- */

static double row_area(const hb_node_info_t *node)
{
    return node->area_um2 > 0.0 ? node->area_um2 : ZERO_AREA_ROW_SCALE;
}

hb_status_t hb_cable_offdiag(const hb_cable_t *cable, double *u, double *l)
{
    if (!cable || !u || !l) return hb_fail(HB_ERR_INVALID_VALUE, "hb_cable_offdiag: NULL argument");
    u[0] = l[0] = 0.0;
    for (int i = 1; i < cable->n_nodes; i++) {
        const hb_node_info_t *node = &cable->nodes[i];
        /* 1/(Mohm um^2) = 1e2 S/cm^2: conductance density to the parent. */
        double g = 1e2 / node->r_axial_mohm;
        u[i] = -g / row_area(&cable->nodes[cable->parent[i]]);
        l[i] = -g / row_area(node);
    }
    return HB_SUCCESS;
}

hb_status_t hb_cable_step_system(const hb_cable_t *cable, double dt_ms, const double *u,
                                 const double *l, const double *v, const double *g,
                                 const double *i_m, const double *i_inj, double *d, double *rhs)
{
    if (!cable || !u || !l || !v || !d || !rhs)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cable_step_system: NULL argument");
    if (!(dt_ms > 0.0) || !isfinite(dt_ms))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_cable_step_system: dt = %g ms; expected > 0",
                       dt_ms);
    const int n = cable->n_nodes;
    const int *parent = cable->parent;
    /* cm [uF/cm^2] / dt [ms] * 1e-3 = [mA/cm^2 per mV]. */
    for (int i = 0; i < n; i++) {
        const hb_node_info_t *node = &cable->nodes[i];
        double diag = 0.0, current = 0.0;
        if (node->area_um2 > 0.0) {
            diag = 1e-3 * node->cm_uf_cm2 / dt_ms;
            if (g) diag += g[i];
            if (i_m) current -= i_m[i];
        }
        if (i_inj) current += i_inj[i] * 1e2 / row_area(node); /* nA -> mA/cm^2 */
        d[i] = diag;
        rhs[i] = current;
    }
    for (int i = 1; i < n; i++) {
        int p = parent[i];
        double dv = v[p] - v[i];
        rhs[i] -= l[i] * dv;
        rhs[p] += u[i] * dv;
        d[i] -= l[i];
        d[p] -= u[i];
    }
    return HB_SUCCESS;
}
