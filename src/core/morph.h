/*
 * The morphology object (hb_morph_t) as the readers, the builder and the discretiser see it:
 * its limits, sections and warnings. Public users see hb_morph_t as an opaque handle. Below
 * the builder (morphology.c) and Import3d's sections (import3d.c), which both fill it.
 */
#ifndef HB_CORE_MORPH_H
#define HB_CORE_MORPH_H

#include "hinesbatch.h"

/*
 * Geometry limits (docs/swc.md, "Limits"): outside them a cell is not
 * physical and the cable arithmetic would overflow or underflow.
 */
#define HB_MORPH_MAX_COORDINATE_UM 1e8 /* |x|, |y|, |z| [um] (100 m) */
#define HB_MORPH_MIN_RADIUS_UM 5e-4    /* smallest positive radius [um]: a 1 nm diameter, as model files */
#define HB_MORPH_MAX_RADIUS_UM 5e4     /* largest radius [um]: a 10 cm diameter, as model files */
/* Shortest non-zero distance between a sample and the point before it on its
 * section, and shortest compartment [um] (1 nm). */
#define HB_MORPH_MIN_LENGTH_UM 1e-3

/* An unbranched piece of the tree: a polyline of frustums. */
typedef struct {
    int parent;          /* parent section index, -1 for the root section */
    double parent_x;     /* where it attaches on the parent: 1 = distal end,
                            0.5 = centre of a spherical soma, 0 = start of
                            a non-spherical root section (NEURON's rule) */
    int type;            /* SWC type shared by all its samples */
    int is_sphere;       /* 1 for a 1-point or 3-point soma: a cylinder with
                            length = diameter = 2r, as NEURON builds it */
    int n_points;        /* points of the polyline, >= 2 */
    int *sample;         /* per point: index into hb_morph.samples; the first
                            point of a child section is the parent's branch
                            sample (shared), except for children of a sphere,
                            which start at their own first sample; -1 for the
                            two virtual points of a sphere */
    double *arc;         /* per point: arc length from the section start [um] */
    double *radius;      /* per point [um], > 0 (>= 0 when zero radii are kept) */
    double length;       /* arc[n_points - 1] [um] */
    int branch_order;    /* soma sections and stems 0, +1 per branch point */
    int n_children;
} hb_section_t;

struct hb_morph {
    char *name;          /* file name or caller-given name */
    int n_samples;
    hb_sample_t *samples; /* topologically sorted: parent index < own index;
                             radii repaired (no zero radius) unless kept */
    int *parent;         /* per sample: parent sample index, -1 for the root */
    int n_sections;
    hb_section_t *sections; /* topologically sorted: parent < own index;
                               section 0 is the root section */
    int n_warnings;
    char **warnings;     /* "file:line: what" */
    hb_sections_rule_t rule; /* how the sections were cut from the samples */
    int keep_zero_radius;    /* radius-0 samples kept as they are */
    int single_points;       /* section points rounded to float, as NEURON's pt3d */
};

/* v rounded to single precision, as NEURON's Pt3d and hoc's sscanf %f store it. Through a
 * volatile float: GCC 12's SLP vectoriser at -O2/-O3 drops a (double)(float) round trip when
 * it packs two of them (measured: x and y of an ASC point kept their doubles). */
double hb_morph_as_float(double v);

/* Appends the warning "NAME:LINE: text" (line 0: "NAME: text"). */
hb_status_t hb_morph_warn(hb_morph_t *m, long line, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

#endif
