/*
 * hinesbatch: batched Hines solvers for morphologically detailed neurons.
 *
 * Public C API. Every call returns an hb_status_t; on failure a detailed,
 * thread-local message is available from hb_last_error().
 *
 * Units follow NEURON: lengths [um], areas [um^2], axial resistivity [ohm cm],
 * specific capacitance [uF/cm^2], conductance densities [S/cm^2], current
 * densities [mA/cm^2], point currents [nA], voltages [mV], time [ms].
 */
#ifndef HINESBATCH_H
#define HINESBATCH_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HB_VERSION_MAJOR 0
#define HB_VERSION_MINOR 1
#define HB_VERSION_PATCH 0

/* ------------------------------------------------------------------------ */
/* Status codes: one X-macro list yields the enum and its strings.          */
/* ------------------------------------------------------------------------ */
#define HB_STATUS_LIST(X)                                                     \
    X(HB_SUCCESS, "success")                                                  \
    X(HB_ERR_INVALID_VALUE, "invalid argument")                               \
    X(HB_ERR_ALLOC, "out of memory")                                          \
    X(HB_ERR_IO, "file could not be opened or read")                          \
    X(HB_ERR_PARSE, "malformed input")                                        \
    X(HB_ERR_MORPHOLOGY, "invalid morphology")                                \
    X(HB_ERR_NOT_SUPPORTED, "not supported by this build or backend")         \
    X(HB_ERR_ZERO_PIVOT, "zero pivot in elimination")                         \
    X(HB_ERR_BACKEND, "backend failure")

#define HB_STATUS_ENUM_ENTRY(name, text) name,
typedef enum { HB_STATUS_LIST(HB_STATUS_ENUM_ENTRY) HB_STATUS_COUNT } hb_status_t;
#undef HB_STATUS_ENUM_ENTRY

/* Short description of a status code ("invalid argument"). */
const char *hb_status_string(hb_status_t status);
/* Name of a status code ("HB_ERR_INVALID_VALUE"). */
const char *hb_status_name(hb_status_t status);
/* Detailed message of the last failing call on this thread ("" if none). */
const char *hb_last_error(void);

/* ------------------------------------------------------------------------ */
/* Morphology: SWC samples, validation, sections.                          */
/* ------------------------------------------------------------------------ */
typedef struct hb_morph hb_morph_t;

/* One SWC sample (a line of an SWC file). */
typedef struct {
    long id;       /* sample id */
    int type;      /* SWC structure type: 1 soma, 2 axon, 3 basal, 4 apical, ... */
    double x, y, z; /* position [um] (after unit conversion) */
    double radius; /* [um] */
    long parent;   /* parent id, -1 for the root */
    long line;     /* source line (1-based), 0 when not read from a file */
} hb_sample_t;

typedef enum {
    HB_UNITS_UM = 0, /* coordinates and radii in micrometres (SWC default) */
    HB_UNITS_NM = 1  /* nanometres, converted to micrometres on load */
} hb_length_units_t;

typedef struct {
    hb_length_units_t units;
    int max_type;  /* largest accepted SWC type code (default 19, as MorphIO) */
} hb_swc_options_t;

void hb_swc_options_default(hb_swc_options_t *options);

/* Read an SWC file. On error *morph is NULL and hb_last_error() names the
 * file, the line and the problem. Usable oddities become warnings. */
hb_status_t hb_morph_load_swc(const char *path, const hb_swc_options_t *options,
                              hb_morph_t **morph);
/* Parse SWC text held in memory; `name` is used in messages. */
hb_status_t hb_morph_parse_swc(const char *text, size_t length, const char *name,
                               const hb_swc_options_t *options, hb_morph_t **morph);
/* Build a morphology from samples in any order (ids need not be contiguous). */
hb_status_t hb_morph_from_samples(const hb_sample_t *samples, int count, const char *name,
                                  hb_morph_t **morph);
void hb_morph_destroy(hb_morph_t *morph);

int hb_morph_warning_count(const hb_morph_t *morph);
const char *hb_morph_warning(const hb_morph_t *morph, int index);

typedef struct {
    int points;           /* SWC samples */
    int sections;         /* unbranched paths (soma included) */
    int terminals;        /* sections without children */
    int max_branch_order; /* soma and stems have order 0 */
    double length_um;     /* total cable length, spherical soma excluded [um] */
    double area_um2;      /* total membrane area, soma included [um^2] */
} hb_morph_stats_t;

hb_status_t hb_morph_stats(const hb_morph_t *morph, hb_morph_stats_t *stats);

/*
 * A connected piece of a morphology: its first `samples` samples in Hines
 * (depth-first, parents first) order. Used to cut real cells to given sizes.
 */
hb_status_t hb_morph_cut(const hb_morph_t *morph, int samples, hb_morph_t **piece);

/* ------------------------------------------------------------------------ */
/* Compartments (discretisation) and the cable-equation matrix.             */
/* ------------------------------------------------------------------------ */
typedef enum {
    HB_CPOLICY_FIXED = 0,      /* `count` compartments per section (NEURON nseg) */
    HB_CPOLICY_MAX_LENGTH = 1, /* ceil(L / max_length_um) per section */
    HB_CPOLICY_D_LAMBDA = 2,   /* NEURON's d_lambda rule at `frequency_hz` */
    HB_CPOLICY_PER_SEGMENT = 3 /* one compartment per SWC segment */
} hb_cpolicy_t;

typedef enum {
    /* Nodes at compartment boundaries; forks are nodes; no zero-area nodes. */
    HB_SCHEME_VERTEX = 0,
    /* NEURON's scheme: nodes at segment centres, a zero-area node at each
     * section's x = 1 end and at the root's x = 0; reproduces NEURON's matrix. */
    HB_SCHEME_NEURON = 1
} hb_scheme_t;

/* SWC type codes 0 .. HB_SWC_TYPES - 1 can carry their own Ra and cm. */
#define HB_SWC_TYPES 20

typedef struct {
    hb_cpolicy_t policy;
    hb_scheme_t scheme;
    int count;            /* HB_CPOLICY_FIXED: compartments per section */
    double max_length_um; /* HB_CPOLICY_MAX_LENGTH [um] */
    double d_lambda;      /* HB_CPOLICY_D_LAMBDA: fraction of lambda_f (0.1) */
    double frequency_hz;  /* HB_CPOLICY_D_LAMBDA: frequency of lambda_f [Hz] (100) */
    double ra_ohm_cm;     /* axial resistivity [ohm cm] (100) */
    double cm_uf_cm2;     /* specific membrane capacitance [uF/cm^2] (1) */
    /* Per SWC type overrides (0 = use the values above): Ra [ohm cm], cm [uF/cm^2]. */
    double ra_by_type[HB_SWC_TYPES];
    double cm_by_type[HB_SWC_TYPES];
} hb_discretization_t;

void hb_discretization_default(hb_discretization_t *options);

typedef struct hb_cable hb_cable_t;

typedef enum {
    HB_NODE_ROOT_END = 0,    /* NEURON scheme: zero-area x = 0 node of the root */
    HB_NODE_COMPARTMENT = 1, /* node with membrane */
    HB_NODE_SECTION_END = 2  /* NEURON scheme: zero-area x = 1 node */
} hb_node_kind_t;

typedef struct {
    int parent;           /* parent node, -1 for node 0 */
    hb_node_kind_t kind;
    int section;          /* morphology section holding the node */
    double x;             /* position along the section, 0..1 */
    long sample_id;       /* SWC id of the sample ending the piece holding the node */
    int swc_type;         /* SWC type of the section */
    double area_um2;      /* membrane area [um^2] (0 for zero-area nodes) */
    double r_axial_mohm;  /* axial resistance to the parent node [Mohm] */
    double cm_uf_cm2;     /* specific capacitance of the node's region [uF/cm^2] */
} hb_node_info_t;

hb_status_t hb_cable_create(const hb_morph_t *morph, const hb_discretization_t *options,
                            hb_cable_t **cable);
void hb_cable_destroy(hb_cable_t *cable);
int hb_cable_size(const hb_cable_t *cable);         /* matrix rows (nodes) */
int hb_cable_compartments(const hb_cable_t *cable); /* nodes with membrane */
/* Hines-ordered parent array (parent[0] = -1, parent[i] < i). */
const int *hb_cable_parent(const hb_cable_t *cable);
hb_status_t hb_cable_node(const hb_cable_t *cable, int node, hb_node_info_t *info);

/*
 * The matrix of one backward-Euler step, in NEURON's form: the unknown is the
 * voltage change dv [mV]; row i is
 *   d[i] dv[i] + l[i] dv[parent[i]] + sum_{parent[c] = i} u[c] dv[c] = rhs[i]
 * in current density [mA/cm^2]. Zero-area nodes use a nominal area of 100 um^2.
 */
/* Off-diagonals (constant in time), from the axial resistances. */
hb_status_t hb_cable_offdiag(const hb_cable_t *cable, double *u, double *l);
/*
 * Diagonal and right-hand side of one step from the voltages v [mV], the
 * membrane conductance g [S/cm^2] and current i_m [mA/cm^2] per node (NULL for
 * none) and injected point currents i_inj [nA] per node (NULL for none).
 */
hb_status_t hb_cable_step_system(const hb_cable_t *cable, double dt_ms, const double *u,
                                 const double *l, const double *v, const double *g,
                                 const double *i_m, const double *i_inj, double *d,
                                 double *rhs);

/* ------------------------------------------------------------------------ */
/* Backends and batched Hines solves.                                       */
/* ------------------------------------------------------------------------ */
typedef enum {
    HB_BACKEND_SEQ = 0,  /* one CPU thread */
    HB_BACKEND_OMP = 1,  /* OpenMP over the systems of a batch */
    HB_BACKEND_CUDA = 2, /* NVIDIA GPUs (when built with CUDA) */
    HB_BACKEND_BEST = 3  /* CUDA when a GPU is present, else OMP, else SEQ */
} hb_backend_t;

typedef struct hb_context *hb_context_t;

hb_status_t hb_context_create(hb_context_t *ctx, hb_backend_t backend);
hb_status_t hb_context_destroy(hb_context_t ctx);
hb_backend_t hb_context_backend(const hb_context_t ctx);
/* Threads used by the OMP backend (0 = OpenMP's default). */
hb_status_t hb_context_set_threads(hb_context_t ctx, int threads);
int hb_context_threads(const hb_context_t ctx);
const char *hb_backend_name(hb_backend_t backend);
/* Non-zero when this build supports the backend (CUDA also needs a device). */
int hb_backend_available(hb_backend_t backend);

/*
 * Data layouts of a batch of `batch_count` systems of `m` rows (docs/layouts.md):
 *   FLAT         index(s, i) = s * m + i
 *   INTERLEAVED  index(s, i) = i * batch_count + s
 *   BLOCK        index(s, i) = (s / bs) * (m * bs) + i * bs + s % bs
 * BLOCK pads the last block to bs systems (identity rows).
 */
typedef enum {
    HB_LAYOUT_FLAT = 0,
    HB_LAYOUT_INTERLEAVED = 1,
    HB_LAYOUT_BLOCK = 2
} hb_layout_t;

const char *hb_layout_name(hb_layout_t layout);
/* Elements one array of the batch holds (padding included). */
size_t hb_layout_size(hb_layout_t layout, int m, int batch_count, int block_size);
size_t hb_layout_index(hb_layout_t layout, int m, int batch_count, int block_size,
                       int system, int row);

/*
 * Single system, Algorithm 1: u[i] = A[parent[i]][i], l[i] = A[i][parent[i]].
 * On return d holds the eliminated diagonal and rhs the solution.
 */
hb_status_t hb_hines_solve(int m, const int *parent, const double *u, const double *l,
                           double *d, double *rhs);
/* y = A x for one system (unmodified d). */
hb_status_t hb_hines_matvec(int m, const int *parent, const double *u, const double *l,
                            const double *d, const double *x, double *y);

/*
 * Batched solve on host arrays laid out by `layout`; all systems share
 * `parent`. d is overwritten, rhs becomes the solution.
 */
hb_status_t hb_hines_solve_batch(hb_context_t ctx, int m, const int *parent, const double *u,
                                 const double *l, double *d, double *rhs, hb_layout_t layout,
                                 int block_size, int batch_count);

/* A batch of same-morphology systems owned by the library. */
typedef struct hb_batch *hb_batch_t;

hb_status_t hb_batch_create(hb_context_t ctx, int m, const int *parent, int batch_count,
                            hb_layout_t layout, int block_size, hb_batch_t *batch);
hb_status_t hb_batch_destroy(hb_batch_t batch);
int hb_batch_rows(const hb_batch_t batch);
int hb_batch_count(const hb_batch_t batch);
hb_layout_t hb_batch_layout(const hb_batch_t batch);
int hb_batch_block_size(const hb_batch_t batch);
/* Copy system `system` in (natural row order m-vectors); NULL leaves an array as is. */
hb_status_t hb_batch_set(hb_batch_t batch, int system, const double *u, const double *l,
                         const double *d, const double *rhs);
/* Copy system `system` out; NULL skips an array. */
hb_status_t hb_batch_get(const hb_batch_t batch, int system, double *u, double *l, double *d,
                         double *rhs);
/* Solve all systems: d is overwritten, rhs becomes the solution. */
hb_status_t hb_batch_solve(hb_batch_t batch);
/* Copy every system of src into dst (same m, parent and count; any layouts). */
hb_status_t hb_batch_convert(const hb_batch_t src, hb_batch_t dst);
/*
 * Host arrays in the batch's layout. For a CUDA batch these are the host copy:
 * the call first brings them up to date, and the next solve uploads them.
 */
hb_status_t hb_batch_arrays(hb_batch_t batch, double **u, double **l, double **d,
                            double **rhs);

/*
 * Kernel choice for the CUDA backend (the CPU backends have one kernel and
 * accept any value). docs/gpu.md describes each.
 */
typedef enum {
    HB_HINES_ALGO_AUTO = 0,         /* the library's choice for the batch's shape */
    HB_HINES_ALGO_PER_THREAD = 1,   /* the paper's: one thread per system, any layout */
    HB_HINES_ALGO_BLOCK_SHARED = 2, /* the paper's Block-Shared: BLOCK layout, rhs in shared memory */
    HB_HINES_ALGO_STAGED = 3,       /* ours, few systems: a warp per system, staged on chip */
    HB_HINES_ALGO_STREAMED = 4      /* ours, many systems: 32 systems a warp, one pass over memory */
} hb_hines_algo_t;

const char *hb_hines_algo_name(hb_hines_algo_t algo);
hb_status_t hb_batch_set_algorithm(hb_batch_t batch, hb_hines_algo_t algo);
hb_hines_algo_t hb_batch_algorithm(const hb_batch_t batch);
/* The kernel a solve of this batch runs (AUTO resolved); CPU backends: PER_THREAD. */
hb_hines_algo_t hb_batch_resolved_algorithm(const hb_batch_t batch);

/*
 * Times `repeats` solves: before each, d and rhs are copied from `source` (same
 * shape and layout, same backend; not timed). seconds[k] receives solve k's time,
 * measured with CUDA events on the CUDA backend and a monotonic clock otherwise.
 */
hb_status_t hb_batch_benchmark(hb_batch_t batch, const hb_batch_t source, int repeats,
                               double *seconds);

/*
 * Measured copy bandwidth of the context's memory: a `bytes`-sized copy
 * (device to device on CUDA, memcpy on the CPU), median of `repeats`, counting
 * bytes read plus bytes written [bytes/s].
 */
hb_status_t hb_context_copy_bandwidth(hb_context_t ctx, size_t bytes, int repeats,
                                      double *bytes_per_second);
/* Visible CUDA devices a CUDA context spreads batches over (0 for CPU contexts). */
int hb_context_devices(const hb_context_t ctx);
/* Name of device 0 ("cpu" for CPU contexts); valid while ctx lives. */
const char *hb_context_device_name(const hb_context_t ctx);

#ifdef __cplusplus
}
#endif
#endif /* HINESBATCH_H */
