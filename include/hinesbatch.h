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
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define HB_VERSION_MAJOR 0
#define HB_VERSION_MINOR 1
#define HB_VERSION_PATCH 0
/* The header's version as one number; hb_version() gives the library's (they differ when a
 * program was compiled against another release than the one it runs with). */
#define HB_VERSION (HB_VERSION_MAJOR * 10000 + HB_VERSION_MINOR * 100 + HB_VERSION_PATCH)
int hb_version(void);

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
    X(HB_ERR_BACKEND, "backend failure")                                     \
    X(HB_ERR_NONFINITE, "the state became NaN or infinite")                   \
    X(HB_ERR_INTERRUPTED, "interrupted")

#define HB_STATUS_ENUM_ENTRY(name, text) name,
typedef enum { HB_STATUS_LIST(HB_STATUS_ENUM_ENTRY) HB_STATUS_COUNT } hb_status_t;
#undef HB_STATUS_ENUM_ENTRY

/* Short description of a status code ("invalid argument"). */
const char *hb_status_string(hb_status_t status);
/* Name of a status code ("HB_ERR_INVALID_VALUE"). */
const char *hb_status_name(hb_status_t status);
/* Detailed message of the last failing call on this thread ("" if none). */
const char *hb_last_error(void);
/* Long builds (hb_net_create and the network loaders, hb_sim_create and the model loaders:
 * their loops over cells and connections) call `fn` now and then, at most about ten times a
 * second and from one thread at a time, with what they are doing (a phase name), `done` of
 * its `total` items. A non-zero return stops the build, which then fails with
 * HB_ERR_INTERRUPTED (a signal handler's flag, read here, makes a build interruptible).
 * Process-wide; NULL (the default) for none. */
typedef int (*hb_progress_fn)(void *user, const char *what, long done, long total);
void hb_set_progress(hb_progress_fn fn, void *user);

/* ------------------------------------------------------------------------ */
/* Contexts: where solves run (backend, threads, devices, memory).          */
/* ------------------------------------------------------------------------ */
typedef enum {
    HB_BACKEND_SEQ = 0,  /* one CPU thread */
    HB_BACKEND_OMP = 1,  /* OpenMP over the systems of a batch */
    HB_BACKEND_CUDA = 2, /* NVIDIA GPUs (when built with CUDA) */
    HB_BACKEND_BEST = 3  /* CUDA when a GPU is present, else OMP, else SEQ */
} hb_backend_t;

typedef struct hb_context hb_context_t;

hb_status_t hb_context_create(hb_backend_t backend, hb_context_t **ctx);
hb_status_t hb_context_destroy(hb_context_t *ctx);
hb_backend_t hb_context_backend(const hb_context_t *ctx);
/* Threads used by the OMP backend (0 = OpenMP's default). */
/* Most threads a context (or a simulation) may be given: more only exhausts the host. */
#define HB_MAX_THREADS 1024
hb_status_t hb_context_set_threads(hb_context_t *ctx, int threads); /* 0..HB_MAX_THREADS */
int hb_context_threads(const hb_context_t *ctx);
const char *hb_backend_name(hb_backend_t backend);
/* Non-zero when this build supports the backend (CUDA also needs a device). */
int hb_backend_available(hb_backend_t backend);

/* Visible CUDA devices a CUDA context spreads batches over (0 for CPU contexts). */
int hb_context_devices(const hb_context_t *ctx);
/* Name of device 0 ("cpu" for CPU contexts); valid while ctx lives. */
const char *hb_context_device_name(const hb_context_t *ctx);

/*
 * Memory where the context's solvers read and write: device memory (device 0)
 * for CUDA, host memory otherwise. Out of memory is HB_ERR_ALLOC.
 */
hb_status_t hb_device_malloc(hb_context_t *ctx, size_t bytes, void **ptr);
hb_status_t hb_device_free(hb_context_t *ctx, void *ptr);
hb_status_t hb_memcpy_to_device(hb_context_t *ctx, void *dst, const void *src, size_t bytes);
hb_status_t hb_memcpy_from_device(hb_context_t *ctx, void *dst, const void *src, size_t bytes);

/* ------------------------------------------------------------------------ */
/* Communicators: the ranks a network is spread over (serial or MPI).       */
/* ------------------------------------------------------------------------ */
typedef enum {
    HB_COMM_SERIAL = 0, /* one rank */
    HB_COMM_MPI = 1,    /* MPI_COMM_WORLD (when built with MPI); MPI is initialised if the
                           program has not done it, and finalised by hb_comm_destroy then */
    HB_COMM_BEST = 2    /* MPI when built with it, else serial */
} hb_comm_kind_t;

typedef struct hb_comm hb_comm_t;

/* Non-zero when this build has the kind. */
int hb_comm_available(hb_comm_kind_t kind);
hb_status_t hb_comm_create(hb_comm_kind_t kind, hb_comm_t **comm);
hb_status_t hb_comm_destroy(hb_comm_t *comm);
const char *hb_comm_name(const hb_comm_t *comm); /* "serial", "mpi" */
int hb_comm_rank(const hb_comm_t *comm);
int hb_comm_size(const hb_comm_t *comm);
/* The largest `value` of all ranks into *max (collective: every rank calls it; MPI_Allreduce).
 * A program agrees this way on a decision each rank takes alone, e.g. to stop a run. */
hb_status_t hb_comm_max(hb_comm_t *comm, int value, int *max);

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

/* How samples become sections (docs/swc.md). */
typedef enum {
    /* A section at every branch and type change; a stem starts at its branch sample with that
     * sample's radius; a 1-point or 3-point soma is a sphere (default). */
    HB_SECTIONS_HINESBATCH = 0,
    /* NEURON's Import3d (read_swc.hoc, Import3d_GUI.instantiate) rule for rule: a multi-point soma
     * stays one section, stems attach at its 0, 0.5 or 1 end with their own first diameter, ids
     * give the order. With HB_SCHEME_NEURON it reproduces NEURON's matrices. */
    HB_SECTIONS_IMPORT3D = 1
} hb_sections_rule_t;

typedef struct {
    hb_length_units_t units;
    int max_type;  /* largest accepted SWC type code (default 19, as MorphIO) */
    hb_sections_rule_t sections; /* HB_SECTIONS_HINESBATCH (default) or HB_SECTIONS_IMPORT3D */
    int keep_zero_radius; /* 0 (default): a radius 0 takes its parent's; 1: kept, as NEURON
                             keeps it (HB_SCHEME_NEURON only; axial resistance ~1e15 Mohm) */
    int single_points; /* 0 (default): 3-D points in double; 1: each point's x, y, z and diameter
                          rounded to float as NEURON's pt3dadd stores them, lengths from the
                          rounded points (HB_SECTIONS_IMPORT3D and ASC only; docs/swc.md) */
} hb_swc_options_t;

void hb_swc_options_default(hb_swc_options_t *options);

/* Read an SWC file. On error *morph is NULL and hb_last_error() names the
 * file, the line and the problem. Usable oddities become warnings. */
hb_status_t hb_morph_load_swc(const char *path, const hb_swc_options_t *options,
                              hb_morph_t **morph);
/* Parse SWC text held in memory; `name` is used in messages. */
hb_status_t hb_morph_parse_swc(const char *text, size_t length, const char *name,
                               const hb_swc_options_t *options, hb_morph_t **morph);
/* Read a Neurolucida ASC (V3 text) file as NEURON's Import3d_Neurolucida3 and Import3d_GUI do
 * (docs/asc.md): the soma contour becomes NEURON's centroid cylinder stack, every tree is
 * connected to its centre, sections and 3-D points are NEURON's, in NEURON's order (soma, then
 * the trees' sections depth first). options: units only (NULL: um); the sections are always
 * Import3d's. Errors name file:line:column and what was expected. */
hb_status_t hb_morph_load_asc(const char *path, const hb_swc_options_t *options,
                              hb_morph_t **morph);
/* Parse ASC text held in memory; `name` is used in messages. */
hb_status_t hb_morph_parse_asc(const char *text, size_t length, const char *name,
                               const hb_swc_options_t *options, hb_morph_t **morph);
/* Read a morphology file of either format: ASC when the name ends in .asc (any case), SWC when
 * it ends in .swc, otherwise ASC when the first byte outside white space and '#' comments is
 * '(' or ';' and SWC if not. */
hb_status_t hb_morph_load(const char *path, const hb_swc_options_t *options, hb_morph_t **morph);
/* Build a morphology from samples in any order (ids need not be contiguous). */
hb_status_t hb_morph_from_samples(const hb_sample_t *samples, int count, const char *name,
                                  hb_morph_t **morph);
hb_status_t hb_morph_destroy(hb_morph_t *morph);

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
    HB_CPOLICY_PER_SEGMENT = 3, /* one compartment per SWC segment */
    HB_CPOLICY_ODD_LENGTH = 4   /* 1 + 2 floor(L / (2 max_length_um)): bmtk's dL rule */
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
    double max_length_um; /* HB_CPOLICY_MAX_LENGTH, HB_CPOLICY_ODD_LENGTH [um] */
    double d_lambda;      /* HB_CPOLICY_D_LAMBDA: fraction of lambda_f (0.1) */
    double frequency_hz;  /* HB_CPOLICY_D_LAMBDA: frequency of lambda_f [Hz] (100) */
    double ra_ohm_cm;     /* axial resistivity [ohm cm] (100) */
    double cm_uf_cm2;     /* specific membrane capacitance [uF/cm^2] (1) */
    /* Per SWC type overrides (0 = use the values above): Ra [ohm cm], cm [uF/cm^2]. */
    double ra_by_type[HB_SWC_TYPES];
    double cm_by_type[HB_SWC_TYPES];
    /* Per SWC type: compartments per section, overriding the policy (0 = the policy's);
     * NEURON models set nseg per section, e.g. soma 1, dendrites 11. */
    int count_by_type[HB_SWC_TYPES];
    /* Largest cable accepted, in matrix rows (0 = HB_DEFAULT_MAX_ROWS): a bigger one is
     * refused, with its size, before anything is allocated. */
    int max_rows;
} hb_discretization_t;

/* Default hb_discretization_t.max_rows: 5x a million-sample chain cut per segment. */
#define HB_DEFAULT_MAX_ROWS 5000000

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
hb_status_t hb_cable_destroy(hb_cable_t *cable);
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
/* Batched Hines solves: same-morphology systems in one layout.             */
/* ------------------------------------------------------------------------ */
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
hb_status_t hb_hines_solve_batch(hb_context_t *ctx, int m, const int *parent, const double *u,
                                 const double *l, double *d, double *rhs, hb_layout_t layout,
                                 int block_size, int batch_count);

/* A batch of same-morphology systems owned by the library. */
typedef struct hb_batch hb_batch_t;

hb_status_t hb_batch_create(hb_context_t *ctx, int m, const int *parent, int batch_count,
                            hb_layout_t layout, int block_size, hb_batch_t **batch);
hb_status_t hb_batch_destroy(hb_batch_t *batch);
int hb_batch_rows(const hb_batch_t *batch);
int hb_batch_count(const hb_batch_t *batch);
hb_layout_t hb_batch_layout(const hb_batch_t *batch);
int hb_batch_block_size(const hb_batch_t *batch);
/* Copy system `system` in (natural row order m-vectors); NULL leaves an array as is. */
hb_status_t hb_batch_set(hb_batch_t *batch, int system, const double *u, const double *l,
                         const double *d, const double *rhs);
/* Copy system `system` out; NULL skips an array. */
hb_status_t hb_batch_get(const hb_batch_t *batch, int system, double *u, double *l, double *d,
                         double *rhs);
/* Solve all systems: rhs becomes the solution; d's contents afterwards are
 * unspecified (the CPU kernels leave the eliminated diagonal, some GPU kernels
 * leave d untouched). */
hb_status_t hb_batch_solve(hb_batch_t *batch);
/* Copy every system of src into dst (same m, parent and count; any layouts). */
hb_status_t hb_batch_convert(const hb_batch_t *src, hb_batch_t *dst);
/*
 * Host arrays in the batch's layout. For a CUDA batch these are the host copy:
 * the call first brings them up to date, and the next solve uploads them.
 */
hb_status_t hb_batch_arrays(hb_batch_t *batch, double **u, double **l, double **d,
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
    HB_HINES_ALGO_STREAMED = 4,     /* ours, many systems: 32 systems a warp, one pass over memory */
    HB_HINES_ALGO_PIPELINED = 5,    /* ours, many systems: a thread per system, prefetched rows,
                                       shared coefficients read once, intermediates on chip / in L2 */
    HB_HINES_ALGO_BRANCHED = 6      /* ours, any count: teams of adjacent systems on chip, their
                                       subtrees shared out stage by stage; AUTO's choice where it fits */
} hb_hines_algo_t;

const char *hb_hines_algo_name(hb_hines_algo_t algo);
hb_status_t hb_batch_set_algorithm(hb_batch_t *batch, hb_hines_algo_t algo);
hb_hines_algo_t hb_batch_algorithm(const hb_batch_t *batch);
/* The kernel a solve of this batch runs (AUTO resolved); CPU backends: PER_THREAD. */
hb_hines_algo_t hb_batch_resolved_algorithm(const hb_batch_t *batch);

/* ------------------------------------------------------------------------ */
/* Mixed-morphology batches: every cell cut into branches, the branches of  */
/* all cells grouped by level and each level solved as one variable-size    */
/* batch of tridiagonal systems (the paper's cuThomasVBatch; docs/multi.md). */
/* ------------------------------------------------------------------------ */
typedef struct hb_multi hb_multi_t;

/*
 * A batch of n_cells systems of different shapes: cell c has m_per_cell[c]
 * rows and the Hines-ordered parent array parents[c] (parent[0] = -1,
 * 0 <= parent[i] < i), copied. The arrays start at zero. The context must
 * outlive the batch; any backend (CUDA: device 0 of the context, data moved
 * between host and device only by set, get and the first solve after them).
 */
hb_status_t hb_multi_create(hb_context_t *ctx, int n_cells, const int *m_per_cell,
                            const int *const *parents, hb_multi_t **multi);
hb_status_t hb_multi_destroy(hb_multi_t *multi);

typedef struct {
    int cells;
    size_t rows;         /* all cells together */
    int branches;        /* all cells together */
    int levels;          /* 1 + the largest branch height (docs/multi.md) */
    int max_branch_rows; /* the longest branch */
    int shapes;          /* distinct trees (parent arrays) among the cells */
} hb_multi_info_t;

hb_status_t hb_multi_info(const hb_multi_t *multi, hb_multi_info_t *info);
/* Rows of cell `cell` (0 when the arguments are invalid). */
int hb_multi_rows(const hb_multi_t *multi, int cell);
/* Branches of level `level` (level 0: branches without child branches). */
int hb_multi_level_branches(const hb_multi_t *multi, int level);

/*
 * Copy cell `cell`'s system in (natural row order, as hb_hines_solve takes it);
 * NULL leaves an array as is. u[0] and l[0] are not used (stored as 0).
 */
hb_status_t hb_multi_set(hb_multi_t *multi, int cell, const double *u, const double *l,
                         const double *d, const double *rhs);
/* Copy cell `cell` out; NULL skips an array. After a solve rhs is the solution
 * and d's contents are unspecified (the elimination's factors on the CPU). */
hb_status_t hb_multi_get(const hb_multi_t *multi, int cell, double *u, double *l, double *d,
                         double *rhs);
/* Solve every cell: rhs becomes the solution (d: see hb_multi_get). No atomics:
 * the result is bitwise the same on every run and, on the CPU, for any thread
 * count; set d and rhs again before the next solve. */
hb_status_t hb_multi_solve(hb_multi_t *multi);

/* Algorithms (docs/multi.md); every backend runs every one (the CPU runs the GPU kernels'
 * arithmetic, in their order, on the host). */
typedef enum {
    HB_MULTI_ALGO_AUTO = 0,    /* CUDA: SHAPES when cells repeat their trees (8 a tree or more,
                                  up to 4,000 rows each) and the batch is not a large one of few
                                  levels; else GROUPED up to 2^22 rows, LEVELS beyond; CPU: LEVELS */
    HB_MULTI_ALGO_LEVELS = 1,  /* the paper's: the levels of all cells in turn, leaves to root
                                  and back, a thread per branch (CUDA: a launch per level) */
    HB_MULTI_ALGO_GROUPED = 2, /* ours: cells sorted by the work on their critical path, longest
                                  first, packed into groups; a CUDA block per group, staged in
                                  shared memory, its levels separated by block barriers: one
                                  launch, 40 bytes of memory traffic per row */
    HB_MULTI_ALGO_PER_CELL = 3, /* the paper's Figure 6 baseline: one thread per cell, Algorithm 1,
                                  cells interleaved row by row and padded to the largest */
    HB_MULTI_ALGO_SHAPES = 4   /* ours: cells of the same tree (parent array) solved together as
                                  same-morphology batches, teams of them staged on chip and their
                                  serial subtrees shared out stage by stage; 40 bytes a row */
} hb_multi_algo_t;

const char *hb_multi_algo_name(hb_multi_algo_t algo);
hb_status_t hb_multi_set_algorithm(hb_multi_t *multi, hb_multi_algo_t algo);
hb_multi_algo_t hb_multi_algorithm(const hb_multi_t *multi);
/* The algorithm a solve runs (AUTO resolved). */
hb_multi_algo_t hb_multi_resolved_algorithm(const hb_multi_t *multi);

/* ------------------------------------------------------------------------ */
/* Batched tridiagonal solvers (cuSPARSE style; docs/tridiag.md).            */
/* ------------------------------------------------------------------------ */
/*
 * Row i of system s reads  dl[i] x[i-1] + d[i] x[i] + du[i] x[i+1] = b[i];
 * dl[0] and du[m-1] are ignored (as cuSPARSE). Element (s, i) of every array:
 *   HB_LAYOUT_FLAT         s * batch_stride + i   (batch_stride >= m; cuSPARSE's
 *                          gtsv2StridedBatch)
 *   HB_LAYOUT_INTERLEAVED  i * batch_stride + s   (batch_stride >= batch_count;
 *                          cuSPARSE's gtsvInterleavedBatch with batch_stride = batch_count)
 * HB_LAYOUT_BLOCK is not supported here (HB_ERR_NOT_SUPPORTED).
 *
 * Pointers are host pointers for the CPU backends and device pointers (device
 * 0 of the context) for the CUDA backend: hb_device_malloc and the copies below
 * give such memory on any backend. Calls return when the solve is done.
 *
 * dl, d, du and b are never written; x receives the solution. x must not
 * overlap the inputs, except with HB_GTSV_IN_PLACE, where x must equal b (the
 * right-hand side is overwritten by the solution, as cuSPARSE does).
 * Arithmetic: PARTITION computes in the data's precision (float variants in
 * float, as cuSPARSE's S routines); THOMAS computes in double for both (float
 * variants: one rounding at the store), the choice for float data that needs
 * more than float accuracy.
 * No pivoting: the matrices must be such that Gaussian elimination without
 * pivoting is stable (e.g. diagonally dominant). A zero pivot gives inf/NaN.
 */
typedef enum {
    HB_GTSV_ALGO_AUTO = 0,      /* the library's choice for the shape (docs/tridiag.md) */
    HB_GTSV_ALGO_THOMAS = 1,    /* the paper's cuThomasBatch: one thread per system; c' in the buffer */
    HB_GTSV_ALGO_PARTITION = 2  /* ours: each system cut into chunks held in registers, the
                                   reduced system of chunk ends solved by PCR on chip */
} hb_gtsv_algo_t;

typedef enum { HB_FLOAT64 = 0, HB_FLOAT32 = 1 } hb_precision_t;

/* Flags (bitwise or). */
#define HB_GTSV_IN_PLACE 1u    /* x == b: the right-hand side is overwritten by the solution */
#define HB_GTSV_PAD_COMPUTE 2u /* VBatch: Computing-Padding (the paper's CP): every system is
                                  processed as m_max rows, rows >= sizes[s] read and replaced
                                  by identity rows, x there set to 0. Without it: No-Computing-
                                  Padding (NCP): rows >= sizes[s] are neither read nor written. */

const char *hb_gtsv_algo_name(hb_gtsv_algo_t algo);

/* Workspace (bytes, possibly 0) the solve below needs for this shape and algorithm. */
hb_status_t hb_dgtsv_batch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m,
                                       hb_layout_t layout, int batch_count, int batch_stride,
                                       size_t *bytes);
hb_status_t hb_sgtsv_batch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m,
                                       hb_layout_t layout, int batch_count, int batch_stride,
                                       size_t *bytes);
/* ThomasBatch: batch_count systems of m rows. buffer: at least the bytes above (NULL if 0). */
hb_status_t hb_dgtsv_batch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m, const double *dl,
                           const double *d, const double *du, const double *b, double *x,
                           hb_layout_t layout, int batch_count, int batch_stride,
                           unsigned flags, void *buffer);
hb_status_t hb_sgtsv_batch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m, const float *dl,
                           const float *d, const float *du, const float *b, float *x,
                           hb_layout_t layout, int batch_count, int batch_stride,
                           unsigned flags, void *buffer);

/*
 * ThomasVBatch: system s has sizes[s] rows (1 <= sizes[s] <= m_max), stored in
 * the layout of a batch of m_max rows (rows >= sizes[s] are padding). sizes is
 * host memory for the CPU backends, device memory for CUDA (checked on the
 * CPU backends; on CUDA a size outside 1..m_max is clamped to 0..m_max and a
 * size of 0 leaves the system untouched). flags may add HB_GTSV_PAD_COMPUTE.
 */
hb_status_t hb_dgtsv_vbatch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max,
                                        hb_layout_t layout, int batch_count, int batch_stride,
                                        size_t *bytes);
hb_status_t hb_sgtsv_vbatch_buffer_size(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max,
                                        hb_layout_t layout, int batch_count, int batch_stride,
                                        size_t *bytes);
hb_status_t hb_dgtsv_vbatch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max, const int *sizes,
                            const double *dl, const double *d, const double *du,
                            const double *b, double *x, hb_layout_t layout, int batch_count,
                            int batch_stride, unsigned flags, void *buffer);
hb_status_t hb_sgtsv_vbatch(hb_context_t *ctx, hb_gtsv_algo_t algo, int m_max, const int *sizes,
                            const float *dl, const float *d, const float *du, const float *b,
                            float *x, hb_layout_t layout, int batch_count, int batch_stride,
                            unsigned flags, void *buffer);

/*
 * Every argument of one solve in a struct: the functions above build one and
 * call hb_gtsv_solve. sizes == NULL is ThomasBatch (every system m rows).
 */
typedef struct {
    hb_precision_t precision;
    hb_gtsv_algo_t algo;
    int m;            /* rows (VBatch: m_max) */
    const int *sizes; /* VBatch: rows of each system; NULL: all m */
    const void *dl, *d, *du, *b;
    void *x;
    hb_layout_t layout;
    int batch_count, batch_stride;
    unsigned flags;
    void *buffer;
} hb_gtsv_problem_t;

hb_status_t hb_gtsv_buffer_size(hb_context_t *ctx, const hb_gtsv_problem_t *problem,
                                size_t *bytes);
hb_status_t hb_gtsv_solve(hb_context_t *ctx, const hb_gtsv_problem_t *problem);
/* The algorithm a solve of this problem runs (AUTO resolved); docs/tridiag.md gives the rule. */
hb_status_t hb_gtsv_resolve(hb_context_t *ctx, const hb_gtsv_problem_t *problem,
                            hb_gtsv_algo_t *algo);
/* The algorithm and, for partition, the kernel shape a solve of this problem
 * runs, as text ("partition rows=8 chunks=8 threads=256 ahead=8 hint=0 prefetch=0 vector=0
 * cluster=1 stage=1 persist=0 pairs=0"). */
hb_status_t hb_gtsv_describe(hb_context_t *ctx, const hb_gtsv_problem_t *problem, char *text,
                             size_t size);

/* ------------------------------------------------------------------------ */
/* Simulation: cells with mechanisms, stimuli and probes, stepped in time   */
/* as NEURON does (docs/model.md, docs/validation.md).                      */
/* ------------------------------------------------------------------------ */

/*
 * Geometry given as sections instead of SWC samples (the Rallpacks, NEURON
 * models): each section is a cylinder attached to its parent's distal end
 * (parent_x = 1) or, for children of the root, to its start (parent_x = 0).
 * Built through hb_morph_from_samples; a section with a single child of the
 * same SWC type would be merged with it, so that is refused (give the child
 * another type, or split differently).
 */
typedef struct {
    const char *name; /* for messages (may be NULL) */
    int parent;       /* index of the parent section in the array, -1 for the root (index 0) */
    double parent_x;  /* 1 (distal end) or 0 (start; children of the root only) */
    double length_um; /* [um] > 0 */
    double diam_um;   /* [um] > 0 */
    int swc_type;     /* region code: 1 soma, 2 axon, 3 dend, 4 apical, ... (< HB_SWC_TYPES) */
} hb_section_spec_t;

/* morph_section (may be NULL) receives, per spec, the morphology section index. */
hb_status_t hb_model_build_sections(const hb_section_spec_t *sections, int count,
                                    const char *name, hb_morph_t **morph, int *morph_section);

/* A place on a cell. */
typedef enum {
    HB_LOC_SOMA = 0,    /* x = 0.5 of the first soma (SWC type 1) section */
    HB_LOC_SAMPLE = 1,  /* the point of SWC sample `sample` */
    HB_LOC_SECTION = 2, /* position x (0..1) along morphology section `section` */
    HB_LOC_NODE = 3     /* matrix node `node` */
} hb_loc_kind_t;

typedef struct {
    hb_loc_kind_t kind;
    long sample;  /* HB_LOC_SAMPLE: SWC id */
    int section;  /* HB_LOC_SECTION: morphology section index */
    double x;     /* HB_LOC_SECTION: 0..1 */
    int node;     /* HB_LOC_NODE */
} hb_location_t;

/* Membrane mechanisms (NEURON's pas and hh.mod). */
typedef enum { HB_MECH_PAS = 0, HB_MECH_HH = 1 } hb_mech_kind_t;

typedef struct {
    hb_mech_kind_t kind;
    /* pas */
    double g_pas;  /* [S/cm^2] (0.001) */
    double e_pas;  /* [mV] (-70) */
    /* hh */
    double gnabar; /* [S/cm^2] (0.12) */
    double gkbar;  /* [S/cm^2] (0.036) */
    double gl;     /* [S/cm^2] (0.0003) */
    double el;     /* [mV] (-54.3) */
    double ena;    /* [mV] (50) */
    double ek;     /* [mV] (-77) */
} hb_mech_t;

/* NEURON's defaults for `kind`. */
void hb_mech_default(hb_mech_kind_t kind, hb_mech_t *mech);
const char *hb_mech_name(hb_mech_kind_t kind);

/* hh rates at v [mV] and temperature [degC] from hh.mod's formulas (no table):
 * steady states (minf, hinf, ninf) and time constants [ms]. */
void hb_hh_rates(double v_mv, double celsius, double inf[3], double tau_ms[3]);

/* Region code for every SWC type. */
#define HB_REGION_ALL (-1)

/* One cell: compartments of a morphology plus mechanisms, stimuli and probes. */
typedef struct hb_model hb_model_t;

/* The morphology must outlive the model (locations are resolved through it). */
hb_status_t hb_model_create(const hb_morph_t *morph, const hb_discretization_t *disc,
                            hb_model_t **model);
hb_status_t hb_model_destroy(hb_model_t *model);
const hb_cable_t *hb_model_cable(const hb_model_t *model);
/* The node holding a location (NEURON's rule in the NEURON scheme: x = 0 and
 * x = 1 are the section's end nodes, other x the segment containing x; vertex
 * scheme: the nearest node). */
hb_status_t hb_model_locate(const hb_model_t *model, const hb_location_t *where, int *node);
/* Insert (or re-parameterise) a mechanism in the region `swc_type` (or
 * HB_REGION_ALL); nodes without membrane get none. */
hb_status_t hb_model_insert(hb_model_t *model, int swc_type, const hb_mech_t *mech);
/* NEURON's IClamp: amp [nA] (inward positive) from del [ms] for dur [ms]. */
hb_status_t hb_model_add_iclamp(hb_model_t *model, const hb_location_t *where, double del_ms,
                                double dur_ms, double amp_na);

typedef struct {
    hb_location_t where;
    const char *name;    /* column name (copied); NULL: "v<index>" */
    int detect_spikes;   /* non-zero: record upward crossings of threshold_mv */
    double threshold_mv; /* [mV] */
} hb_probe_spec_t;

/* Voltage probe; *index (may be NULL) receives its index within the model. */
hb_status_t hb_model_add_probe(hb_model_t *model, const hb_probe_spec_t *probe, int *index);
int hb_model_probe_count(const hb_model_t *model);

/* Synapses: point processes at a node (NEURON's expsyn.mod and exp2syn.mod). An event of
 * weight w [uS] adds w to g (ExpSyn) or w * factor to A and B (Exp2Syn, g = B - A peaking at w);
 * the current g (v - e) [nA] enters the node's row. States by cnexp: x -= (1 - exp(-dt/tau)) x. */
typedef enum { HB_SYN_EXP = 0, HB_SYN_EXP2 = 1 } hb_syn_kind_t;

typedef struct {
    hb_syn_kind_t kind;
    double tau_ms;  /* ExpSyn: decay [ms] (NEURON's default 0.1) */
    double tau1_ms; /* Exp2Syn: rise [ms] (0.1); tau1 < tau2 */
    double tau2_ms; /* Exp2Syn: decay [ms] (10) */
    double e_mv;    /* reversal potential [mV] (0) */
} hb_synapse_t;

/* NEURON's defaults for `kind`. */
void hb_synapse_default(hb_syn_kind_t kind, hb_synapse_t *syn);
const char *hb_synapse_name(hb_syn_kind_t kind);
/* A synapse at a location (a node with membrane); *index (may be NULL) receives its index
 * within the model, the target a connection names. */
hb_status_t hb_model_add_synapse(hb_model_t *model, const hb_location_t *where,
                                 const hb_synapse_t *syn, int *index);
int hb_model_synapse_count(const hb_model_t *model);
/* A user's catalogue (a .so of `hinesbatch build-catalogue MODDIR -o NAME.so`, docs/mechanisms.md)
 * loaded into this process for good: hb_model_add_point_process and hb_model_create_artificial
 * then find its mechanisms by name after the built-in catalogues' ("NAME::Mech" where two have
 * one), as a model file's "catalogues" (which load theirs the same way, for the process). A
 * library of another ABI, or not a catalogue, is refused naming the path. *name (may be NULL):
 * the catalogue's name, valid for the process. */
hb_status_t hb_catalogue_open(const char *path, const char **name);
/* A point process of the built-in catalogues (docs/mechanisms.md, section 10) or of those
 * loaded (hb_catalogue_open) at a location (a node with membrane): `name` a POINT_PROCESS
 * ("ExpSyn", "Exp2Syn": the code generated from NEURON's expsyn.mod and exp2syn.mod;
 * "ProbAMPANMDA_EMS"; "default::ExpSyn" naming the catalogue), its RANGE PARAMETERs the
 * defaults but keys[i] = values[i] (an unknown key refused with the nearest name, a value
 * outside the .mod's <lo,hi> with its range). It is the model's
 * next synapse (*index, may be NULL), in one list with hb_model_add_synapse's: connections name
 * either by index. Every backend steps them (CUDA a user catalogue's where it was built with
 * its CUDA kernels, `build-catalogue --cuda`). */
hb_status_t hb_model_add_point_process(hb_model_t *model, const hb_location_t *where,
                                       const char *name, int n, const char *const *keys,
                                       const double *values, int *index);
/* The cell's spikes are the events its point process `synapse` sends (net_event in its
 * NET_RECEIVE), as NEURON's NetCon from a point process: every connection from the cell's gid
 * receives them (docs/network.md, "Point processes as spike sources"). -1: its detector probe
 * (the default). Refused: a synapse that calls no net_event, or a model with a probe that
 * detects spikes. Every backend runs it. */
hb_status_t hb_model_set_spike_source(hb_model_t *model, int synapse);
/* An artificial cell (NMODL ARTIFICIAL_CELL, NEURON's IntFire1 or NetStim kind; docs/network.md,
 * "Artificial cells"): a cable cell of a recipe (HB_CELL_CABLE) that is one point process on a
 * hidden host of one compartment without mechanisms (its v stays at v_init). `name` as
 * hb_model_add_point_process's (the built-in catalogues or those loaded by hb_catalogue_open;
 * "catalogue::Name"), its RANGE PARAMETERs the defaults but keys[i] = values[i]. The point
 * process is the model's synapse 0 (connections onto the cell name it) and, where its
 * NET_RECEIVE calls net_event, the cell's spike source. The model owns its host (hb_model_destroy
 * frees it); many gids may share one. Refused naming it: an unknown name (with the nearest), a
 * density mechanism or a point process, an unknown key (the nearest), a value outside the
 * .mod's <lo,hi>. It runs where a network file's "artificial" entry runs (docs/network.md). */
hb_status_t hb_model_create_artificial(const char *name, int n, const char *const *keys,
                                       const double *values, hb_model_t **model);

/* One cell as a model file's "cells" entry describes it (docs/model.md; "count" excepted): the
 * JSON text of the cell object, `name` used in messages, `base_dir` resolving an SWC path.
 * `morph` NULL: the object's geometry ("morphology", "cable" or "sections"), which the model
 * owns; else the object has none and the model uses `morph` (which must outlive it). */
hb_status_t hb_model_parse_json(const char *text, size_t length, const char *name,
                                const char *base_dir, const hb_morph_t *morph,
                                hb_model_t **model);

typedef enum {
    HB_METHOD_EULER = 0, /* backward Euler, NEURON's secondorder = 0 (default) */
    HB_METHOD_CN = 1     /* Crank-Nicolson, NEURON's secondorder = 1 (2 with catalogue
                          * mechanisms: the ion currents corrected to the half step) */
} hb_method_t;

typedef enum {
    HB_SPIKE_STEP = 0,       /* t at the end of the first step with v > threshold (NEURON's NetCon) */
    HB_SPIKE_INTERPOLATE = 1 /* linear interpolation of the crossing within that step */
} hb_spike_time_t;

/* Options of a simulation; the accepted ranges are in docs/model.md, section 6 (a run of more
 * than HB_SIM_MAX_STEPS steps is refused). */
#define HB_SIM_MAX_STEPS 1000000000000L
typedef struct {
    double dt_ms;        /* time step [ms] (0.025) */
    double t_stop_ms;    /* end time [ms] (5) */
    double v_init_mv;    /* initial voltage [mV] (-65) */
    double celsius;      /* temperature [degC] (6.3) */
    double sample_dt_ms; /* probe sampling interval [ms], a multiple of dt (0: every step) */
    hb_method_t method;
    hb_spike_time_t spike_time;
    int hh_table;         /* non-zero (default): hh rates from hh.mod's TABLE (-100..100 mV,
                             1 mV, linear interpolation), as NEURON's usetable_hh = 1 */
    hb_backend_t backend; /* where the steps run (HB_BACKEND_SEQ): SEQ one core, OMP all
                             cores, CUDA the GPU (state on the device), BEST CUDA when a
                             device is present, else OMP */
    int threads;          /* HB_BACKEND_OMP: threads, 0..HB_MAX_THREADS (0, default:
                             OpenMP's default) */
} hb_sim_options_t;

void hb_sim_options_default(hb_sim_options_t *options);

typedef struct hb_sim hb_sim_t;

/*
 * A simulation of n_cells cells (a model may appear several times: copies).
 * The models must outlive the simulation. Cells whose matrices have the same
 * shape and the same hh nodes are stepped together, a block of cells at a
 * time (docs/sim-engine.md).
 */
hb_status_t hb_sim_create(hb_model_t *const *cells, int n_cells, const hb_sim_options_t *options,
                          hb_sim_t **sim);
hb_status_t hb_sim_destroy(hb_sim_t *sim);
/* NEURON's finitialize: t = 0, v = v_init, gates at steady state, records t = 0. */
hb_status_t hb_sim_init(hb_sim_t *sim);
/*
 * `steps` time steps, recording samples and spikes in memory: refused up front (HB_ERR_ALLOC,
 * with the estimate) when what they would record cannot fit (more than 2^31 - 1 samples or
 * spikes of a probe, or more bytes than the machine's memory); a caller that writes the
 * recordings out as it goes calls hb_sim_clear_records between advances. Every
 * HB_SIM_CHECK_STEPS steps, and at t_stop, the voltages are checked: a NaN or infinity stops
 * the run with HB_ERR_NONFINITE naming the cell, node, section and time (what was recorded up
 * to then is kept); the simulation then needs hb_sim_init again.
 */
hb_status_t hb_sim_advance(hb_sim_t *sim, long steps);
#define HB_SIM_CHECK_STEPS 64
/* hb_sim_init, then hb_sim_steps steps (until t_stop). */
hb_status_t hb_sim_run(hb_sim_t *sim);
/* The steps hb_sim_run takes: ceil(t_stop / dt), NEURON's while (t < tstop). */
long hb_sim_steps(const hb_sim_t *sim);
/* Forgets the samples and spikes recorded so far (a caller that streams them to files keeps
 * its memory bounded); the probes' spike detection goes on unchanged. */
hb_status_t hb_sim_clear_records(hb_sim_t *sim);
double hb_sim_time(const hb_sim_t *sim); /* [ms] */
hb_status_t hb_sim_options(const hb_sim_t *sim, hb_sim_options_t *options);
int hb_sim_cell_count(const hb_sim_t *sim);
/* Node voltages [mV] of a cell (hb_cable_size entries), valid until the next step. */
hb_status_t hb_sim_voltages(const hb_sim_t *sim, int cell, const double **v);
/* Probes of all cells, cell by cell; names "<probe>" with one cell, else "c<cell>.<probe>". */
int hb_sim_probe_count(const hb_sim_t *sim);
const char *hb_sim_probe_name(const hb_sim_t *sim, int probe);
/* Sample times [ms] and one probe's samples [mV]; both have *count entries. */
hb_status_t hb_sim_sample_times(const hb_sim_t *sim, const double **t, int *count);
hb_status_t hb_sim_probe_trace(const hb_sim_t *sim, int probe, const double **v, int *count);
/* Spike times [ms] at a probe with spike detection (count 0 otherwise). */
hb_status_t hb_sim_spikes(const hb_sim_t *sim, int probe, const double **t, int *count);
/* DIR/probes.csv (t_ms, one column per probe) and DIR/spikes.csv (probe,t_ms; in time order,
 * probes in order at equal times). A name with a comma, quote or line break is quoted as
 * RFC 4180 says. */
hb_status_t hb_sim_write_csv(const hb_sim_t *sim, const char *dir);

/*
 * Checkpoints (docs/checkpoint.md): the whole state of an initialised simulation (voltages,
 * gates, synapse states, the probes' spike detection, the step, and what is recorded and not
 * cleared) as one record written at `file`'s position; `name` (NULL: "checkpoint") names it in
 * messages. The caller makes the file atomic (a temporary file, fflush, fsync, rename, as
 * hinesbatch run does). hb_sim_load reads such a record into a simulation created from the same
 * models and options (checked: a fingerprint of both, HB_ERR_INVALID_VALUE otherwise), instead
 * of hb_sim_init; a truncated or corrupt record (a checksum) is refused with HB_ERR_PARSE before
 * anything changes. The steps after a load are the same bits as an uninterrupted run's. Only
 * the CPU engine (backend seq or omp): HB_ERR_NOT_SUPPORTED on CUDA.
 */
hb_status_t hb_sim_save(const hb_sim_t *sim, FILE *file, const char *name);
hb_status_t hb_sim_load(hb_sim_t *sim, FILE *file, const char *name);

/*
 * A model or network file's text, read once (docs/reliability.md): a regular file of at most
 * HB_MODEL_MAX_BYTES, or a pipe (a FIFO, a shell's <(...)) read to its end within that bound;
 * a directory, a device, a larger file or one with a NUL byte is refused naming the file.
 * *text ends with a NUL past *length; release it with hb_model_text_free.
 */
#define HB_MODEL_MAX_BYTES ((size_t)1 << 30) /* [bytes] 1 GiB */
hb_status_t hb_model_file_read(const char *path, char **text, size_t *length);
hb_status_t hb_model_text_free(char *text);

/*
 * A whole simulation from a JSON model file (docs/model.md); morphology paths
 * are relative to the file. The simulation owns the cells it loaded.
 */
hb_status_t hb_sim_load_json(const char *path, hb_sim_t **sim);
/* The same from JSON text; `name` is used in messages, `base_dir` resolves paths. */
hb_status_t hb_sim_parse_json(const char *text, size_t length, const char *name,
                              const char *base_dir, hb_sim_t **sim);

/* Options that replace a model file's own when it is loaded (hinesbatch run --t-stop ...):
 * the fields named in `set` (HB_SIM_SET_* bits) take their values from `options`, the others
 * stay the file's. A busyring network's "duration" and "dt" give way to them too. */
enum {
    HB_SIM_SET_DT = 1 << 0,      /* options.dt_ms [ms] > 0 */
    HB_SIM_SET_T_STOP = 1 << 1,  /* options.t_stop_ms [ms] >= 0 */
    HB_SIM_SET_BACKEND = 1 << 2, /* options.backend */
    HB_SIM_SET_THREADS = 1 << 3  /* options.threads, 0..HB_MAX_THREADS */
};
typedef struct {
    unsigned set; /* HB_SIM_SET_* bits */
    hb_sim_options_t options;
} hb_sim_overrides_t;
/* hb_sim_load_json with `overrides` (NULL: none); a value out of range fails naming it. */
hb_status_t hb_sim_load_json_with(const char *path, const hb_sim_overrides_t *overrides,
                                  hb_sim_t **sim);
/* hb_sim_parse_json with `overrides` (NULL: none). */
hb_status_t hb_sim_parse_json_with(const char *text, size_t length, const char *name,
                                   const char *base_dir, const hb_sim_overrides_t *overrides,
                                   hb_sim_t **sim);

/* ------------------------------------------------------------------------ */
/* Networks: cells with global ids (gids), spike detectors, synapses, and    */
/* connections with delays, spread over ranks (docs/network.md).             */
/* ------------------------------------------------------------------------ */
/* One spike: the source's gid and its time. */
typedef struct {
    double time_ms; /* [ms] */
    uint32_t gid;
    uint32_t unused; /* 0 (16 bytes: the unit of exchange) */
} hb_spike_t;

/* A connection ending on a cell: a spike of `source` at t reaches synapse `synapse` of the
 * cell at t + delay, adding `weight` (NEURON's NetCon). */
typedef struct {
    uint32_t source;
    int synapse;      /* index among the target model's synapses */
    double weight_us; /* [uS], finite */
    double delay_ms;  /* [ms], >= dt */
} hb_connection_t;

/* A cell without a morphology that emits spikes (NEURON's NetStim): spike k at
 * start + the sum of k intervals, `number` of them; each interval is
 * (1 - noise) * interval + noise * an exponential draw of mean `interval`, from a
 * counter-based stream keyed by (seed, gid), so every rank draws the same. */
typedef struct {
    double start_ms;    /* [ms] >= 0 */
    double interval_ms; /* [ms] > 0 */
    long number;        /* spikes, >= 0 */
    double noise;       /* 0 (regular) .. 1 (Poisson) */
    uint64_t seed;
} hb_spike_source_t;

/* An event given to a synapse at a time, with no spike behind it (a stimulus). */
typedef struct {
    int synapse;      /* index among the cell's synapses */
    double time_ms;   /* [ms] >= 0; delivered by the events' rule (docs/network.md) */
    double weight_us; /* [uS], finite */
} hb_event_t;

typedef enum { HB_CELL_CABLE = 0, HB_CELL_SOURCE = 1 } hb_cell_kind_t;

/*
 * What a network is, asked gid by gid (Arbor's recipe): each rank asks only for the cells it
 * owns and the connections that end on them, so no rank holds the whole network. A cable
 * cell's model (the recipe keeps it alive while the network lives; many gids may share one)
 * carries its synapses; its first probe with spike detection is its spike detector
 * (NEURON's NetCon threshold at that place), and a model without one emits no spikes.
 */
typedef struct {
    uint32_t n_cells; /* gids 0 .. n_cells - 1 */
    void *user;
    hb_cell_kind_t (*kind)(void *user, uint32_t gid);
    hb_model_t *(*cable)(void *user, uint32_t gid);
    hb_status_t (*source)(void *user, uint32_t gid, hb_spike_source_t *source);
    /* The connections ending on gid: with out == NULL only *count; else up to *count of
     * them (the count asked before). */
    hb_status_t (*connections_on)(void *user, uint32_t gid, hb_connection_t *out, int *count);
    /* Optional (NULL: none): events put on cable cell gid's synapses at hb_net_init, without
     * a source or a delay (Arbor's event generators); asked as connections_on is. */
    hb_status_t (*events_on)(void *user, uint32_t gid, hb_event_t *out, int *count);
} hb_recipe_t;

/*
 * Connections given as arrays (numpy's columns): connection k carries spikes of source[k] to
 * synapse synapse[k] of cell target[k], with weight_us[k] [uS] and delay_ms[k] [ms]. Checked
 * (gids < n_cells, synapse >= 0, finite weights, finite delays > 0) and grouped by target, in
 * the arrays' order within a target; the arrays are copied. A bad entry fails naming its index,
 * the array and the value. hb_connections_on is an hb_recipe_t.connections_on with the table
 * as `user` (whether a synapse exists and delay >= dt are checked by hb_net_create).
 */
typedef struct hb_connections hb_connections_t;
hb_status_t hb_connections_create(uint32_t n_cells, size_t count, const uint32_t *source,
                                  const uint32_t *target, const int *synapse,
                                  const double *weight_us, const double *delay_ms,
                                  hb_connections_t **table);
hb_status_t hb_connections_destroy(hb_connections_t *table);
size_t hb_connections_count(const hb_connections_t *table);
hb_status_t hb_connections_on(void *table, uint32_t gid, hb_connection_t *out, int *count);

typedef struct hb_net hb_net_t;

/*
 * A network on `comm` (this rank's share of the gids, in contiguous blocks of all gids: a
 * recipe whose spike sources follow its cells leaves the last ranks only sources). Options as a
 * simulation's (dt, t_stop, temperature, backend seq, omp or cuda, threads); probes detect
 * spikes, and hb_net_record records values. Checks every connection that ends on this rank's cells (source gid, synapse,
 * finite weight, delay >= dt) and fails naming the first bad one. The smallest delay of the
 * whole network is the epoch: spikes are exchanged once per epoch.
 */
hb_status_t hb_net_create(const hb_recipe_t *recipe, hb_comm_t *comm,
                          const hb_sim_options_t *options, hb_net_t **net);
hb_status_t hb_net_destroy(hb_net_t *net);
/* A network from a JSON file (docs/network.md): a model file's options and cells (gids in
 * order, copies included), then "network": spike sources, explicit connections and builders
 * (ring, random). The network owns what it loaded. */
hb_status_t hb_net_load_json(const char *path, hb_comm_t *comm, hb_net_t **net);
/* hb_net_load_json with `overrides` (NULL: none), as hb_sim_load_json_with. */
hb_status_t hb_net_load_json_with(const char *path, const hb_sim_overrides_t *overrides,
                                  hb_comm_t *comm, hb_net_t **net);
/* The same from JSON text; `name` is used in messages, `base_dir` resolves morphology paths
 * (NULL: the working directory). */
hb_status_t hb_net_parse_json(const char *text, size_t length, const char *name,
                              const char *base_dir, hb_comm_t *comm, hb_net_t **net);
/* hb_net_parse_json with `overrides` (NULL: none). */
hb_status_t hb_net_parse_json_with(const char *text, size_t length, const char *name,
                                   const char *base_dir, const hb_sim_overrides_t *overrides,
                                   hb_comm_t *comm, hb_net_t **net);
/* t = 0 (NEURON's finitialize): states, spike sources, no spikes, no events. */
hb_status_t hb_net_init(hb_net_t *net);
/* Whole epochs until t >= t_ms (or t_stop): a caller may write the spikes between calls. Every
 * rank must ask for the same t. After a failure, hb_net_init before the next advance. */
hb_status_t hb_net_advance(hb_net_t *net, double t_ms);
/* hb_net_init, then hb_net_advance to t_stop. */
hb_status_t hb_net_run(hb_net_t *net);
double hb_net_time(const hb_net_t *net);      /* [ms] */
double hb_net_stop_time(const hb_net_t *net); /* t_stop [ms] */
double hb_net_dt(const hb_net_t *net);        /* [ms] */

/* Wall time per phase on this rank since hb_net_init [s]. */
typedef struct {
    double build_s;    /* hb_net_create: recipe, connections, simulation */
    double init_s;     /* hb_net_init */
    double update_s;   /* the cells' steps */
    double detect_s;   /* reading the detectors */
    double deliver_s;  /* events: made from spikes, delivered to synapses */
    double exchange_s; /* gathering the spikes of all ranks, waiting for them included */
    double exchange_wait_s; /* the part of exchange_s that no step overlapped: the rank waited */
    uint32_t local_cells;
    size_t local_connections;
    size_t spikes;     /* of the whole network */
    long max_rss_kb;   /* the process's peak resident memory [KiB] (0 where unknown) */
    size_t device_bytes; /* device memory this rank's engine took [bytes] (0: a CPU engine) */
} hb_net_stats_t;

hb_status_t hb_net_stats(const hb_net_t *net, hb_net_stats_t *stats);

/* This rank's timeline (the paper's traces): per epoch, the intervals "integrate" (the steps,
 * events delivered, detectors read, sources), "exchange wait" (finishing the exchange in
 * flight), "events" (spikes into events) and "exchange start" (the counts and the start of
 * the spikes' all-gather); times [s] from hb_net_init's start, `step` the epoch's first. */
typedef struct {
    const char *name;
    double begin_s, end_s;
    long step;
} hb_trace_event_t;

/* Records up to max_events intervals from the next hb_net_init (0: off, the default); returns
 * the room it got. */
size_t hb_net_set_trace(hb_net_t *net, size_t max_events);
hb_status_t hb_net_trace(const hb_net_t *net, const hb_trace_event_t **events, size_t *count);
/* Every rank's (collective): per_rank[r] for each rank r of the communicator. */
hb_status_t hb_net_stats_all(const hb_net_t *net, hb_net_stats_t *per_rank);
/* The spikes the network holds (each rank holds all of them), ordered by time, then gid:
 * every spike so far, or (hb_net_set_keep_spikes 0) those of the last hb_net_advance; valid
 * until the next call on the network. hb_net_stats' `spikes` counts every spike; the first
 * held is the run's spike number `spikes` - count. Mid-run, a later advance may put spikes
 * before those of the last half step before t (a point process's net_event has its event's
 * time, up to half a step before its step): those are final once t is half a step past them,
 * and held (keep_spikes 0 too: they come again with the next advance's) until then. */
hb_status_t hb_net_spikes(const hb_net_t *net, const hb_spike_t **spikes, size_t *count);
/* keep 1 (the default): the network holds every spike of the run; 0: each hb_net_advance
 * lets the previous one's go, so that a caller who writes them after each advance runs in
 * memory bounded for any t_stop (a checkpoint then holds only the last advance's). Call
 * before hb_net_init: its estimate of the spike sources' spikes (refused, HB_ERR_ALLOC, when
 * more than the machine's memory) counts the whole run's when kept, one epoch's when not.
 * Returns the setting in effect. */
int hb_net_set_keep_spikes(hb_net_t *net, int keep);

/*
 * Recording in a network (docs/network.md, section 8): values of chosen cable cells sampled
 * every sample_dt from t = 0, the same bits on every backend, rank and thread count.
 * `variable`: "v", or a mechanism's "hh.m", "hh.h", "hh.n", "hh.gna", "hh.gk" [S/cm2],
 * "hh.ina", "hh.ik", "hh.il", "pas.i" [mA/cm2] at `where`'s node; or synapse K's "syn[K].g"
 * [uS], "syn[K].i" [nA] (an Exp2Syn's also "syn[K].A", "syn[K].B") at the synapse (`where`
 * unused).
 */
typedef struct {
    uint32_t gid;         /* a cable cell */
    hb_location_t where;
    const char *variable; /* copied */
} hb_net_record_t;

/* Collective, before hb_net_init: every rank adds the same `count` records. All records of a
 * network share one sample_dt [ms] (0: every step; else a multiple of dt). Columns are the
 * records in order of gid, then of addition. A record its cell cannot give (no hh at that
 * node, no synapse K, a spike source) fails on every rank, the owner's message naming it. */
hb_status_t hb_net_record(hb_net_t *net, int count, const hb_net_record_t *records,
                          double sample_dt_ms);
/* Columns recorded, and their sample interval [ms] (0 without records). */
int hb_net_record_count(const hb_net_t *net);
double hb_net_record_sample_dt(const hb_net_t *net);
/* Column `column`'s gid, name ("soma.v", "sec2(0.5).hh.m", "syn[0].g") and unit ("mV",
 * "S/cm2", ...); the strings live as long as the network. Any argument but net may be NULL. */
hb_status_t hb_net_record_column(const hb_net_t *net, int column, uint32_t *gid,
                                 const char **name, const char **unit);
/* Collective: the rows recorded since hb_net_init (or hb_net_load) or hb_net_traces_clear,
 * every rank's columns, on every rank: *rows times [ms] and rows x hb_net_record_count values
 * (row-major). Valid until the next call on the network. */
hb_status_t hb_net_traces(hb_net_t *net, const double **times_ms, const double **values,
                          size_t *rows);
/* Drops the rows recorded so far on this rank (once written out: memory stays bounded). */
hb_status_t hb_net_traces_clear(hb_net_t *net);
/*
 * Checkpoints of a network (docs/checkpoint.md): this rank's state after hb_net_init or an
 * hb_net_advance (an epoch boundary, no exchange in flight): its cells' simulation
 * (hb_sim_save's record), the events waiting, the spike sources' streams, the spikes so far
 * and the time; one record per rank, at `file`'s position (the caller makes it atomic).
 * hb_net_load, instead of hb_net_init, restores it into a network built from the same recipe,
 * options and rank count (a fingerprint of this rank's cells, connections and sources is
 * checked). Collective: every rank loads its own record, and all fail if one does (its
 * message on that rank), or if the ranks' records are of different times. The spikes that
 * follow are the same bits as an uninterrupted run's.
 */
hb_status_t hb_net_save(const hb_net_t *net, FILE *file, const char *name);
hb_status_t hb_net_load(hb_net_t *net, FILE *file, const char *name);
/* hb_net_load of a checkpoint written on n_files ranks, on any rank count: every rank reads all
 * of them (files[r]: old rank r's record, at its position; names[r] in messages), checks each
 * as its own rank would, and takes its cells' state, its sources' streams and the events
 * waiting on its cells and its connections' weight vectors by gid (docs/checkpoint.md,
 * "Ranks"). n_files equal to the rank count: hb_net_load of this rank's file. Records of
 * format version 4 or later; networks whose point processes send themselves events restart on
 * the rank count that wrote them (HB_ERR_NOT_SUPPORTED on another). Collective, as
 * hb_net_load. */
hb_status_t hb_net_load_ranks(hb_net_t *net, int n_files, FILE *const *files,
                              const char *const *names);
/* How an epoch's spikes are exchanged (docs/network.md, "The exchange"). The overlapped ones
 * need the smallest delay to be at least 2 dt (epochs of half of it); the spikes are the same
 * in every mode. The default is the one measured fastest (bench/results/network-xeon16.md). */
typedef enum {
    HB_NET_BLOCKING = 0,    /* the default: epochs of the whole smallest delay, exchanged at
                             * each end */
    HB_NET_IALLGATHERV = 1, /* non-blocking all-gathers (counts, then spikes) during the next
                             * epoch's steps */
    HB_NET_TASKS = 2        /* the paper's Algorithm 2: OpenMP tasks, the blocking exchange on
                             * the master thread while the others step the next epoch's cells
                             * (backend omp; with one thread the two run one after the other)
                             * or one thread drives the GPU's (backend cuda) */
} hb_net_overlap_t;

/* Call before hb_net_init; returns the mode in effect (HB_NET_BLOCKING where the smallest
 * delay is below 2 dt, or for an unknown mode). */
int hb_net_set_overlap(hb_net_t *net, int overlap);
/* Cells of this rank; the smallest delay [ms] and the steps of an epoch. */
int hb_net_local_cells(const hb_net_t *net);
double hb_net_min_delay(const hb_net_t *net);
int hb_net_epoch_steps(const hb_net_t *net);
/* The backend the cells step on (`backend`: never HB_BACKEND_BEST) and, where the options
 * asked for HB_BACKEND_BEST, what was chosen and why (`reason`, owned by the network; "" when
 * the backend was named). Either pointer may be NULL. */
hb_status_t hb_net_backend(const hb_net_t *net, hb_backend_t *backend, const char **reason);

#ifdef __cplusplus
}
#endif
#endif /* HINESBATCH_H */
