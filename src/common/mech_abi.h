/* The kernels' view of one block of a group for generated mechanisms (docs/mechanisms.md,
 * sections 2 to 4): what the NMODL code generator's kernels read and write. */
#ifndef HB_COMMON_MECH_ABI_H
#define HB_COMMON_MECH_ABI_H

/* One ion species on a block's rows: element (row, lane k) at [row W + k]. */
typedef struct {
    double *e;    /* reversal potential [mV] */
    double *ci;   /* inner concentration [mM] */
    double *co;   /* outer concentration [mM] */
    double *i;    /* this step's total current of the species [mA/cm2] */
    double *didv; /* and its conductance [mA/cm2/mV] */
} hb_ion_block_t;

typedef struct {
    int lanes, width, cl; /* lanes to step (<= width), W, 1 per lane or 0 shared parameters */
    double dt, t, celsius; /* [ms], [ms], [degC] */
    const double *v;      /* the block's rows: v[row W + k] */
    double *d, *rhs;      /* pass A's accumulators: conductance and outward current */
    const int *node;      /* instance j's row of lane k: node[j W + k] */
    double *field;        /* per instance and lane: field[(j n_field + q) W + k] */
    const double *param;  /* cl 0: RANGE PARAMETER q of instance j at param[j n_param + q] */
    const double *global; /* GLOBAL PARAMETERs */
    hb_ion_block_t *ion;  /* the species the mechanism uses, in its USEION order */
    const double *const *table; /* TABLE data, one per TABLE statement; NULL: the formulas */
} hb_cat_block_t;

#endif
