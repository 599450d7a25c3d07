"""The C API through cffi's ABI mode: declarations copied from include/hinesbatch.h (the part
this module calls; tests/python/test_cdef.py checks them against the header) and the shared
library, found once, on first use."""

import os

import cffi

# Copied from include/hinesbatch.h, in its order; enums with their values spelt out where the
# header computes them (HB_STATUS_LIST). Keep in step with the header (test_cdef.py says where).
CDEF = """
int hb_version(void);
typedef enum {
    HB_SUCCESS, HB_ERR_INVALID_VALUE, HB_ERR_ALLOC, HB_ERR_IO, HB_ERR_PARSE,
    HB_ERR_MORPHOLOGY, HB_ERR_NOT_SUPPORTED, HB_ERR_ZERO_PIVOT, HB_ERR_BACKEND, HB_ERR_NONFINITE,
    HB_ERR_INTERRUPTED, HB_STATUS_COUNT
} hb_status_t;
const char *hb_status_string(hb_status_t status);
const char *hb_status_name(hb_status_t status);
const char *hb_last_error(void);

typedef enum {
    HB_BACKEND_SEQ = 0, HB_BACKEND_OMP = 1, HB_BACKEND_CUDA = 2, HB_BACKEND_BEST = 3
} hb_backend_t;
const char *hb_backend_name(hb_backend_t backend);
int hb_backend_available(hb_backend_t backend);

typedef enum { HB_COMM_SERIAL = 0, HB_COMM_MPI = 1, HB_COMM_BEST = 2 } hb_comm_kind_t;
typedef struct hb_comm hb_comm_t;
int hb_comm_available(hb_comm_kind_t kind);
hb_status_t hb_comm_create(hb_comm_kind_t kind, hb_comm_t **comm);
hb_status_t hb_comm_destroy(hb_comm_t *comm);
const char *hb_comm_name(const hb_comm_t *comm);
int hb_comm_rank(const hb_comm_t *comm);
int hb_comm_size(const hb_comm_t *comm);
hb_status_t hb_comm_max(hb_comm_t *comm, int value, int *max);

typedef struct hb_morph hb_morph_t;
typedef enum { HB_UNITS_UM = 0, HB_UNITS_NM = 1 } hb_length_units_t;
typedef enum { HB_SECTIONS_HINESBATCH = 0, HB_SECTIONS_IMPORT3D = 1 } hb_sections_rule_t;
typedef struct {
    hb_length_units_t units;
    int max_type;
    hb_sections_rule_t sections;
    int keep_zero_radius;
    int single_points;
} hb_swc_options_t;
void hb_swc_options_default(hb_swc_options_t *options);
hb_status_t hb_morph_load_swc(const char *path, const hb_swc_options_t *options,
                              hb_morph_t **morph);
hb_status_t hb_morph_parse_swc(const char *text, size_t length, const char *name,
                               const hb_swc_options_t *options, hb_morph_t **morph);
hb_status_t hb_morph_load(const char *path, const hb_swc_options_t *options, hb_morph_t **morph);
hb_status_t hb_morph_destroy(hb_morph_t *morph);
int hb_morph_warning_count(const hb_morph_t *morph);
const char *hb_morph_warning(const hb_morph_t *morph, int index);
typedef struct {
    int points;
    int sections;
    int terminals;
    int max_branch_order;
    double length_um;
    double area_um2;
} hb_morph_stats_t;
hb_status_t hb_morph_stats(const hb_morph_t *morph, hb_morph_stats_t *stats);

typedef enum {
    HB_CPOLICY_FIXED = 0, HB_CPOLICY_MAX_LENGTH = 1, HB_CPOLICY_D_LAMBDA = 2,
    HB_CPOLICY_PER_SEGMENT = 3, HB_CPOLICY_ODD_LENGTH = 4
} hb_cpolicy_t;
typedef enum { HB_SCHEME_VERTEX = 0, HB_SCHEME_NEURON = 1 } hb_scheme_t;
typedef struct {
    hb_cpolicy_t policy;
    hb_scheme_t scheme;
    int count;
    double max_length_um;
    double d_lambda;
    double frequency_hz;
    double ra_ohm_cm;
    double cm_uf_cm2;
    double ra_by_type[20];
    double cm_by_type[20];
    int count_by_type[20];
    int max_rows;
} hb_discretization_t;
void hb_discretization_default(hb_discretization_t *options);
typedef struct hb_cable hb_cable_t;
hb_status_t hb_cable_create(const hb_morph_t *morph, const hb_discretization_t *options,
                            hb_cable_t **cable);
hb_status_t hb_cable_destroy(hb_cable_t *cable);
int hb_cable_size(const hb_cable_t *cable);
int hb_cable_compartments(const hb_cable_t *cable);
const int *hb_cable_parent(const hb_cable_t *cable);
typedef enum {
    HB_NODE_ROOT_END = 0, HB_NODE_COMPARTMENT = 1, HB_NODE_SECTION_END = 2
} hb_node_kind_t;
typedef struct {
    int parent;
    hb_node_kind_t kind;
    int section;
    double x;
    long sample_id;
    int swc_type;
    double area_um2;
    double r_axial_mohm;
    double cm_uf_cm2;
} hb_node_info_t;
hb_status_t hb_cable_node(const hb_cable_t *cable, int node, hb_node_info_t *info);

typedef enum { HB_METHOD_EULER = 0, HB_METHOD_CN = 1 } hb_method_t;
typedef enum { HB_SPIKE_STEP = 0, HB_SPIKE_INTERPOLATE = 1 } hb_spike_time_t;
typedef struct {
    double dt_ms;
    double t_stop_ms;
    double v_init_mv;
    double celsius;
    double sample_dt_ms;
    hb_method_t method;
    hb_spike_time_t spike_time;
    int hh_table;
    hb_backend_t backend;
    int threads;
} hb_sim_options_t;
typedef struct hb_sim hb_sim_t;
hb_status_t hb_sim_destroy(hb_sim_t *sim);
hb_status_t hb_sim_init(hb_sim_t *sim);
hb_status_t hb_sim_advance(hb_sim_t *sim, long steps);
long hb_sim_steps(const hb_sim_t *sim);
hb_status_t hb_sim_run(hb_sim_t *sim);
double hb_sim_time(const hb_sim_t *sim);
hb_status_t hb_sim_options(const hb_sim_t *sim, hb_sim_options_t *options);
int hb_sim_cell_count(const hb_sim_t *sim);
hb_status_t hb_sim_voltages(const hb_sim_t *sim, int cell, const double **v);
int hb_sim_probe_count(const hb_sim_t *sim);
const char *hb_sim_probe_name(const hb_sim_t *sim, int probe);
hb_status_t hb_sim_sample_times(const hb_sim_t *sim, const double **t, int *count);
hb_status_t hb_sim_probe_trace(const hb_sim_t *sim, int probe, const double **v, int *count);
hb_status_t hb_sim_spikes(const hb_sim_t *sim, int probe, const double **t, int *count);
typedef struct {
    const char *name;
    int parent;
    double parent_x;
    double length_um;
    double diam_um;
    int swc_type;
} hb_section_spec_t;
hb_status_t hb_model_build_sections(const hb_section_spec_t *sections, int count,
                                    const char *name, hb_morph_t **morph, int *morph_section);
typedef struct hb_model hb_model_t;
hb_status_t hb_model_destroy(hb_model_t *model);
int hb_model_probe_count(const hb_model_t *model);
int hb_model_synapse_count(const hb_model_t *model);
hb_status_t hb_catalogue_open(const char *path, const char **name);
hb_status_t hb_model_create_artificial(const char *name, int n, const char *const *keys,
                                       const double *values, hb_model_t **model);
hb_status_t hb_model_parse_json(const char *text, size_t length, const char *name,
                                const char *base_dir, const hb_morph_t *morph,
                                hb_model_t **model);
void hb_sim_options_default(hb_sim_options_t *options);
hb_status_t hb_sim_create(hb_model_t *const *cells, int n_cells, const hb_sim_options_t *options,
                          hb_sim_t **sim);
hb_status_t hb_model_file_read(const char *path, char **text, size_t *length);
hb_status_t hb_model_text_free(char *text);
hb_status_t hb_sim_parse_json(const char *text, size_t length, const char *name,
                              const char *base_dir, hb_sim_t **sim);

typedef struct {
    double time_ms;
    uint32_t gid;
    uint32_t unused;
} hb_spike_t;
typedef struct {
    uint32_t source;
    int synapse;
    double weight_us;
    double delay_ms;
} hb_connection_t;
typedef struct {
    double start_ms;
    double interval_ms;
    long number;
    double noise;
    uint64_t seed;
} hb_spike_source_t;
typedef struct {
    int synapse;
    double time_ms;
    double weight_us;
} hb_event_t;
typedef enum { HB_CELL_CABLE = 0, HB_CELL_SOURCE = 1 } hb_cell_kind_t;
typedef struct {
    uint32_t n_cells;
    void *user;
    hb_cell_kind_t (*kind)(void *user, uint32_t gid);
    hb_model_t *(*cable)(void *user, uint32_t gid);
    hb_status_t (*source)(void *user, uint32_t gid, hb_spike_source_t *source);
    hb_status_t (*connections_on)(void *user, uint32_t gid, hb_connection_t *out, int *count);
    hb_status_t (*events_on)(void *user, uint32_t gid, hb_event_t *out, int *count);
} hb_recipe_t;
typedef struct hb_connections hb_connections_t;
hb_status_t hb_connections_create(uint32_t n_cells, size_t count, const uint32_t *source,
                                  const uint32_t *target, const int *synapse,
                                  const double *weight_us, const double *delay_ms,
                                  hb_connections_t **table);
hb_status_t hb_connections_destroy(hb_connections_t *table);
size_t hb_connections_count(const hb_connections_t *table);
hb_status_t hb_connections_on(void *table, uint32_t gid, hb_connection_t *out, int *count);
typedef struct hb_net hb_net_t;
hb_status_t hb_net_create(const hb_recipe_t *recipe, hb_comm_t *comm,
                          const hb_sim_options_t *options, hb_net_t **net);
hb_status_t hb_net_destroy(hb_net_t *net);
hb_status_t hb_net_parse_json(const char *text, size_t length, const char *name,
                              const char *base_dir, hb_comm_t *comm, hb_net_t **net);
hb_status_t hb_net_init(hb_net_t *net);
hb_status_t hb_net_advance(hb_net_t *net, double t_ms);
double hb_net_time(const hb_net_t *net);
double hb_net_stop_time(const hb_net_t *net);
double hb_net_dt(const hb_net_t *net);
typedef struct {
    double build_s;
    double init_s;
    double update_s;
    double detect_s;
    double deliver_s;
    double exchange_s;
    double exchange_wait_s;
    uint32_t local_cells;
    size_t local_connections;
    size_t spikes;
    long max_rss_kb;
    size_t device_bytes;
} hb_net_stats_t;
hb_status_t hb_net_stats(const hb_net_t *net, hb_net_stats_t *stats);
hb_status_t hb_net_spikes(const hb_net_t *net, const hb_spike_t **spikes, size_t *count);
typedef enum {
    HB_LOC_SOMA = 0, HB_LOC_SAMPLE = 1, HB_LOC_SECTION = 2, HB_LOC_NODE = 3
} hb_loc_kind_t;
typedef struct {
    hb_loc_kind_t kind;
    long sample;
    int section;
    double x;
    int node;
} hb_location_t;
typedef struct {
    uint32_t gid;
    hb_location_t where;
    const char *variable;
} hb_net_record_t;
hb_status_t hb_net_record(hb_net_t *net, int count, const hb_net_record_t *records,
                          double sample_dt_ms);
int hb_net_record_count(const hb_net_t *net);
double hb_net_record_sample_dt(const hb_net_t *net);
hb_status_t hb_net_record_column(const hb_net_t *net, int column, uint32_t *gid,
                                 const char **name, const char **unit);
hb_status_t hb_net_traces(hb_net_t *net, const double **times_ms, const double **values,
                          size_t *rows);
hb_status_t hb_net_traces_clear(hb_net_t *net);
int hb_net_local_cells(const hb_net_t *net);
double hb_net_min_delay(const hb_net_t *net);
int hb_net_epoch_steps(const hb_net_t *net);
"""

ffi = cffi.FFI()
ffi.cdef(CDEF)

# The name the dynamic loader knows (its soname): LD_LIBRARY_PATH, ldconfig's folders.
SONAME = "libhinesbatch.so.0"

VERSION = "0.1.0"  # this package's, which must be the library's (hb_version)

_lib = None
_path = None


def _candidates():
    """Where to look when no path was given: the library an installed copy of this package
    was installed with (_install.py, written by CMake at installation), then the loader's
    search by soname."""
    out = []
    try:
        from . import _install  # noqa: PLC0415 (absent in the source tree and from pip)
    except ImportError:
        _install = None
    if _install is not None:
        here = os.path.dirname(os.path.abspath(__file__))
        out.append(os.path.normpath(os.path.join(here, _install.LIBRARY)))
    out.append(SONAME)
    return out


def check_version(lib, where):
    """The library's version against this package's: a library of another release has other
    structs and functions, so it is refused before any call."""
    major, minor, patch = (int(x) for x in VERSION.split("."))
    try:
        got = lib.hb_version()
    except AttributeError:  # a release before hb_version
        got = None
    if got != major * 10000 + minor * 100 + patch:
        have = "no hb_version()" if got is None else \
            f"version {got // 10000}.{got // 100 % 100}.{got % 100}"
        raise RuntimeError(f"hinesbatch: {where} has {have}; this Python package is {VERSION} "
                           "and needs the library of the same release")


def load(path=None):
    """Load the shared library (once). `path`: a file to load instead of the search."""
    global _lib, _path
    if _lib is not None:
        if path is not None and os.path.abspath(path) != os.path.abspath(_path):
            raise RuntimeError(
                f"hinesbatch: the library is already loaded from {_path}; "
                f"load_library({path!r}) must come before any other call")
        return _lib
    tried = []
    for candidate in [path] if path is not None else _candidates():
        try:
            _lib = ffi.dlopen(candidate)
        except OSError as err:
            tried.append(f"{candidate}: {err}")
            continue
        try:
            check_version(_lib, candidate)
        except RuntimeError:
            ffi.dlclose(_lib)
            _lib = None
            raise
        _path = candidate
        return _lib
    raise OSError(
        "hinesbatch: cannot load the shared library; tried\n  " + "\n  ".join(tried) +
        "\n(install hinesbatch with `cmake --install`, put its lib folder on LD_LIBRARY_PATH, "
        "or call hinesbatch.load_library(PATH))")


def path():
    """The library loaded (as given to the loader), loading it if needed."""
    load()
    return _path
