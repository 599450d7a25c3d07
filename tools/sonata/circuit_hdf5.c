/*
 * SONATA circuits as input (tools/sonata/circuit.h, docs/sonata.md): the configs (manifest,
 * components, networks, node sets, run, conditions, inputs, reports), the node and edge
 * populations (HDF5 with their CSV type tables) and spike trains, translated into a network
 * document (docs/network.md) the library builds as any network file. What hinesbatch cannot
 * do as bmtk's BioNet does (NEURON mechanisms it lacks, bmtk's own random synapse placement,
 * point neurons) is refused, naming the file, the key and what was expected.
 */
#define _DEFAULT_SOURCE /* realpath */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <hdf5.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "core/morph.h"
#include "sonata/circuit.h"

#define PATH_MAX_ 4096

int cli_circuit_is_config(const json_t *root)
{
    const json_t *net = json_object_get(root, "network");
    return json_is_object(json_object_get(root, "networks")) || json_is_string(net);
}

/* ---- small helpers ---- */

static int fail_oom(void) { return cli_fail("run", "out of memory reading a SONATA circuit"); }

static char *dup_str(const char *s)
{
    char *d = s ? strdup(s) : NULL;
    return d;
}

static void dir_of(const char *path, char *dir, size_t size)
{
    snprintf(dir, size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) dir[1] = '\0';
    else if (slash) *slash = '\0';
    else snprintf(dir, size, ".");
}

/* `name` relative to `dir` unless absolute. */
static void join_path(char *out, size_t size, const char *dir, const char *name)
{
    int n;
    if (name[0] == '/' || !dir || !dir[0]) n = snprintf(out, size, "%s", name);
    else n = snprintf(out, size, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= size) out[size - 1] = '\0'; /* cut: the open fails naming it */
}

static int load_json(const char *path, json_t **out)
{
    json_error_t err;
    *out = json_load_file(path, JSON_REJECT_DUPLICATES, &err);
    if (*out) return 0;
    if (err.line < 1)
        return cli_fail("run", "%s: cannot read: %s (%s)", path, err.text,
                        hb_status_string(HB_ERR_IO));
    return cli_fail("run", "%s:%d:%d: %s (%s)", path, err.line, err.column, err.text,
                    hb_status_string(HB_ERR_PARSE));
}

/* ---- configs: the manifest's variables ---- */

typedef struct {
    const char *file; /* the config, for messages */
    char dir[PATH_MAX_];
    const json_t *manifest;
} config_t;

/* s with ${configdir} and the manifest's $NAMEs replaced (up to 16 levels), into out. */
static int expand(const config_t *c, const char *key, const char *s, char *out, size_t size)
{
    char a[PATH_MAX_], b[PATH_MAX_];
    snprintf(a, sizeof a, "%s", s);
    for (int level = 0; strchr(a, '$'); level++) {
        if (level == 16)
            return cli_fail("run", "%s: %s: \"%s\": manifest variables nested too deep (a "
                            "cycle?); expected at most 16 levels", c->file, key, s);
        char *d = strchr(a, '$');
        size_t len = 0;
        const char *value = NULL;
        char name[256];
        if (strncmp(d, "${configdir}", 12) == 0) {
            len = 12;
            value = c->dir;
        } else {
            while (d[len + 1] == '_' || (d[len + 1] >= 'A' && d[len + 1] <= 'Z') ||
                   (d[len + 1] >= 'a' && d[len + 1] <= 'z') ||
                   (d[len + 1] >= '0' && d[len + 1] <= '9'))
                len++;
            len++; /* the '$' */
            snprintf(name, sizeof name, "%.*s", (int)(len < 255 ? len : 255), d);
            const json_t *v = json_object_get(c->manifest, name);
            if (!json_is_string(v))
                return cli_fail("run", "%s: %s: \"%s\": %s is not in the \"manifest\"; expected "
                                "a manifest variable (\"%s\": \"PATH\")", c->file, key, s, name,
                                name);
            value = json_string_value(v);
        }
        const int w = snprintf(b, sizeof b, "%.*s%s%s", (int)(d - a), a, value, d + len);
        if (w < 0 || (size_t)w >= sizeof b)
            return cli_fail("run", "%s: %s: \"%s\": longer than %zu bytes once expanded",
                            c->file, key, s, sizeof b);
        snprintf(a, sizeof a, "%s", b);
    }
    snprintf(out, size, "%s", a);
    return 0;
}

/* A path of the config: expanded, and relative to the config's folder. */
static int config_path(const config_t *c, const char *key, const char *s, char *out, size_t size)
{
    char e[PATH_MAX_];
    if (expand(c, key, s, e, sizeof e)) return 1;
    join_path(out, size, c->dir, e);
    return 0;
}

static void config_init(config_t *c, const char *file, const json_t *root)
{
    c->file = file;
    char dir[PATH_MAX_];
    dir_of(file, dir, sizeof dir);
    char *abs = realpath(dir, NULL); /* ${configdir} absolute: paths built on it stay right */
    snprintf(c->dir, sizeof c->dir, "%s", abs ? abs : dir);
    free(abs);
    c->manifest = json_object_get(root, "manifest");
}

/* ---- CSV type tables (space-separated, SONATA's and bmtk's) ---- */

typedef struct {
    char path[PATH_MAX_];
    int ncols, nrows;
    char **head;   /* column names */
    char **cells;  /* nrows x ncols, NULL for NULL/NONE/empty */
    long *ids;     /* the type id column's value per row */
} csv_t;

static void csv_free(csv_t *t)
{
    if (!t) return;
    for (int k = 0; k < t->ncols; k++) free(t->head[k]);
    for (long k = 0; k < (long)t->nrows * t->ncols; k++) free(t->cells[k]);
    free(t->head);
    free(t->cells);
    free(t->ids);
    free(t);
}

/* The fields of one line (spaces between fields; "double quotes" around a field with spaces). */
static int csv_fields(char *line, char ***out, int *n)
{
    int cap = 8, m = 0;
    char **f = malloc((size_t)cap * sizeof *f);
    if (!f) return 1;
    char *p = line;
    for (;;) {
        while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
        if (!*p) break;
        char *start, *end;
        if (*p == '"') {
            start = ++p;
            while (*p && *p != '"') p++;
            end = p;
            if (*p) p++;
        } else {
            start = p;
            while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
            end = p;
        }
        if (m == cap) {
            char **g = realloc(f, (size_t)(cap *= 2) * sizeof *g);
            if (!g) {
                for (int k = 0; k < m; k++) free(f[k]);
                free(f);
                return 1;
            }
            f = g;
        }
        f[m++] = strndup(start, (size_t)(end - start));
        if (*end && p == end) p++;
    }
    *out = f;
    *n = m;
    return 0;
}

static int csv_load(const char *path, const char *id_column, csv_t **out)
{
    *out = NULL;
    FILE *f = fopen(path, "r");
    if (!f) return cli_fail("run", "%s: cannot open: %s", path, strerror(errno));
    csv_t *t = calloc(1, sizeof *t);
    if (!t) {
        fclose(f);
        return fail_oom();
    }
    snprintf(t->path, sizeof t->path, "%s", path);
    char *line = NULL;
    size_t cap = 0;
    int rc = 0, id_col = -1, lineno = 0;
    while (rc == 0 && getline(&line, &cap, f) >= 0) {
        lineno++;
        char **fields;
        int n;
        if (csv_fields(line, &fields, &n)) {
            rc = fail_oom();
            break;
        }
        if (n == 0) {
            free(fields);
            continue;
        }
        if (!t->head) {
            t->head = fields;
            t->ncols = n;
            for (int k = 0; k < n; k++)
                if (strcmp(fields[k], id_column) == 0) id_col = k;
            if (id_col < 0)
                rc = cli_fail("run", "%s:1: no column \"%s\"; expected a SONATA type table with "
                              "it (space-separated)", path, id_column);
            continue;
        }
        if (n != t->ncols) {
            rc = cli_fail("run", "%s:%d: %d fields; expected %d as the header has (fields "
                          "separated by spaces, a field with spaces in double quotes)", path,
                          lineno, n, t->ncols);
            for (int k = 0; k < n; k++) free(fields[k]);
            free(fields);
            break;
        }
        char **cells = realloc(t->cells, (size_t)(t->nrows + 1) * (size_t)t->ncols * sizeof *cells);
        long *ids = cells ? realloc(t->ids, (size_t)(t->nrows + 1) * sizeof *ids) : NULL;
        if (cells) t->cells = cells;
        if (!ids) {
            for (int k = 0; k < n; k++) free(fields[k]);
            free(fields);
            rc = fail_oom();
            break;
        }
        t->ids = ids;
        char *end;
        errno = 0;
        t->ids[t->nrows] = strtol(fields[id_col], &end, 10);
        if (errno || *end || end == fields[id_col])
            rc = cli_fail("run", "%s:%d: %s \"%s\"; expected an integer", path, lineno,
                          id_column, fields[id_col]);
        for (int k = 0; k < n; k++) {
            if (!strcmp(fields[k], "NULL") || !strcmp(fields[k], "NONE") || !fields[k][0]) {
                free(fields[k]);
                fields[k] = NULL;
            }
            t->cells[(size_t)t->nrows * (size_t)t->ncols + (size_t)k] = fields[k];
        }
        free(fields);
        t->nrows++;
    }
    free(line);
    fclose(f);
    if (rc == 0 && !t->head)
        rc = cli_fail("run", "%s: empty; expected a header line naming %s and the columns",
                      path, id_column);
    if (rc) {
        csv_free(t);
        return 1;
    }
    *out = t;
    return 0;
}

static int csv_row(const csv_t *t, long id)
{
    for (int r = 0; r < t->nrows; r++)
        if (t->ids[r] == id) return r;
    return -1;
}

static int csv_col(const csv_t *t, const char *name)
{
    for (int k = 0; k < t->ncols; k++)
        if (!strcmp(t->head[k], name)) return k;
    return -1;
}

/* ---- HDF5 reading ---- */

static int h5_exists(hid_t file, const char *path)
{
    char p[PATH_MAX_];
    snprintf(p, sizeof p, "%s", path);
    for (char *s = p + 1;; s++) { /* each link on the way */
        const char c = *s;
        if (c == '/' || c == '\0') {
            *s = '\0';
            if (H5Lexists(file, p, H5P_DEFAULT) <= 0) return 0;
            if (c == '\0') return 1;
            *s = '/';
        }
    }
}

/* A 1-D dataset's length; -1 (message printed) when missing or not 1-D. */
static long h5_length(hid_t file, const char *fname, const char *path, hid_t *set)
{
    *set = -1;
    if (!h5_exists(file, path)) {
        cli_fail("run", "%s: %s: no such dataset; expected one (SONATA)", fname, path);
        return -1;
    }
    hid_t d = H5Dopen2(file, path, H5P_DEFAULT);
    hid_t space = d >= 0 ? H5Dget_space(d) : -1;
    hsize_t dims[2] = {0, 0};
    const int rank = space >= 0 ? H5Sget_simple_extent_ndims(space) : -1;
    if (rank == 1) H5Sget_simple_extent_dims(space, dims, NULL);
    if (space >= 0) H5Sclose(space);
    if (rank != 1) {
        if (d >= 0) H5Dclose(d);
        cli_fail("run", "%s: %s: %s; expected a 1-D dataset", fname, path,
                 d < 0 ? "not a dataset" : "not 1-D");
        return -1;
    }
    *set = d;
    return (long)dims[0];
}

/* A 1-D numeric dataset as doubles (n values; *n_out gets the length). */
static int h5_doubles(hid_t file, const char *fname, const char *path, double **out, long *n_out)
{
    hid_t d;
    const long n = h5_length(file, fname, path, &d);
    *out = NULL;
    if (n < 0) return 1;
    hid_t type = H5Dget_type(d);
    const H5T_class_t cls = H5Tget_class(type);
    H5Tclose(type);
    if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
        H5Dclose(d);
        return cli_fail("run", "%s: %s: not numbers; expected a numeric dataset", fname, path);
    }
    double *v = malloc((size_t)(n + 1) * sizeof *v);
    int rc = v ? 0 : fail_oom();
    if (rc == 0 && n > 0 && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        rc = cli_fail("run", "%s: %s: cannot read", fname, path);
    H5Dclose(d);
    if (rc) {
        free(v);
        return 1;
    }
    *out = v;
    *n_out = n;
    return 0;
}

/* A 1-D integer dataset as non-negative int64 of exactly n values (n < 0: any length). */
static int h5_ids(hid_t file, const char *fname, const char *path, long n, int64_t **out,
                  long *n_out)
{
    hid_t d;
    const long len = h5_length(file, fname, path, &d);
    *out = NULL;
    if (len < 0) return 1;
    hid_t type = H5Dget_type(d);
    const H5T_class_t cls = H5Tget_class(type);
    H5Tclose(type);
    int rc = 0;
    if (cls != H5T_INTEGER)
        rc = cli_fail("run", "%s: %s: not integers; expected an integer dataset", fname, path);
    else if (n >= 0 && len != n)
        rc = cli_fail("run", "%s: %s: %ld values; expected %ld (one per node_type_id or "
                      "edge_type_id)", fname, path, len, n);
    int64_t *v = rc ? NULL : malloc((size_t)(len + 1) * sizeof *v);
    if (rc == 0 && !v) rc = fail_oom();
    if (rc == 0 && len > 0 && H5Dread(d, H5T_NATIVE_INT64, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
        rc = cli_fail("run", "%s: %s: cannot read", fname, path);
    for (long k = 0; rc == 0 && k < len; k++)
        if (v[k] < 0)
            rc = cli_fail("run", "%s: %s[%ld]: %lld; expected an id >= 0", fname, path, k,
                          (long long)v[k]);
    H5Dclose(d);
    if (rc) {
        free(v);
        return 1;
    }
    *out = v;
    if (n_out) *n_out = len;
    return 0;
}

/* A 1-D dataset of any kind as strings (numbers written out); NULL-free on success. */
static int h5_strings(hid_t file, const char *fname, const char *path, char ***out, long *n_out)
{
    hid_t d;
    const long n = h5_length(file, fname, path, &d);
    *out = NULL;
    if (n < 0) return 1;
    char **s = calloc((size_t)n + 1, sizeof *s);
    if (!s) {
        H5Dclose(d);
        return fail_oom();
    }
    hid_t type = H5Dget_type(d);
    const H5T_class_t cls = H5Tget_class(type);
    int rc = 0;
    if (n == 0) {
    } else if (cls == H5T_STRING && H5Tis_variable_str(type) > 0) {
        hid_t mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, H5T_VARIABLE);
        H5Tset_cset(mem, H5Tget_cset(type));
        char **raw = calloc((size_t)n, sizeof *raw);
        if (!raw || H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0)
            rc = cli_fail("run", "%s: %s: cannot read its strings", fname, path);
        for (long k = 0; rc == 0 && k < n; k++) s[k] = dup_str(raw[k] ? raw[k] : "");
        if (raw && rc == 0) {
            hid_t space = H5Dget_space(d);
            H5Dvlen_reclaim(mem, space, H5P_DEFAULT, raw);
            H5Sclose(space);
        }
        free(raw);
        H5Tclose(mem);
    } else if (cls == H5T_STRING) {
        const size_t w = H5Tget_size(type);
        hid_t mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, w + 1);
        H5Tset_cset(mem, H5Tget_cset(type));
        char *raw = malloc((size_t)n * (w + 1));
        if (!raw || H5Dread(d, mem, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0)
            rc = cli_fail("run", "%s: %s: cannot read its strings", fname, path);
        for (long k = 0; rc == 0 && k < n; k++) s[k] = strndup(raw + (size_t)k * (w + 1), w);
        free(raw);
        H5Tclose(mem);
    } else if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
        double *v = malloc((size_t)n * sizeof *v);
        if (!v || H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v) < 0)
            rc = cli_fail("run", "%s: %s: cannot read", fname, path);
        for (long k = 0; rc == 0 && k < n; k++) {
            char b[64];
            if (cls == H5T_INTEGER) snprintf(b, sizeof b, "%.0f", v[k]);
            else snprintf(b, sizeof b, "%.17g", v[k]);
            s[k] = dup_str(b);
        }
        free(v);
    } else {
        rc = cli_fail("run", "%s: %s: neither strings nor numbers (an @library enumeration?); "
                      "expected strings or numbers", fname, path);
    }
    for (long k = 0; rc == 0 && k < n; k++)
        if (!s[k]) rc = fail_oom();
    H5Tclose(type);
    H5Dclose(d);
    if (rc) {
        for (long k = 0; k < n; k++) free(s[k]);
        free(s);
        return 1;
    }
    *out = s;
    *n_out = n;
    return 0;
}

/* A string attribute of an object (the node_population of an edge population's ids). */
static int h5_string_attribute(hid_t file, const char *fname, const char *path, const char *name,
                               char *out, size_t size)
{
    hid_t obj = H5Oopen(file, path, H5P_DEFAULT);
    if (obj < 0 || H5Aexists(obj, name) <= 0) {
        if (obj >= 0) H5Oclose(obj);
        return cli_fail("run", "%s: %s: no attribute \"%s\"; expected the population's name "
                        "(SONATA)", fname, path, name);
    }
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    hid_t type = H5Aget_type(a);
    int rc = 0;
    if (H5Tget_class(type) != H5T_STRING) {
        rc = cli_fail("run", "%s: %s: attribute \"%s\" is not a string; expected the "
                      "population's name", fname, path, name);
    } else if (H5Tis_variable_str(type) > 0) {
        hid_t mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, H5T_VARIABLE);
        H5Tset_cset(mem, H5Tget_cset(type));
        char *v = NULL;
        if (H5Aread(a, mem, &v) < 0 || !v) rc = cli_fail("run", "%s: %s: cannot read \"%s\"",
                                                         fname, path, name);
        else snprintf(out, size, "%s", v);
        if (v) H5free_memory(v);
        H5Tclose(mem);
    } else {
        const size_t w = H5Tget_size(type);
        hid_t mem = H5Tcopy(H5T_C_S1);
        H5Tset_size(mem, w + 1);
        H5Tset_cset(mem, H5Tget_cset(type));
        char *v = calloc(w + 1, 1);
        if (!v || H5Aread(a, mem, v) < 0) rc = cli_fail("run", "%s: %s: cannot read \"%s\"",
                                                        fname, path, name);
        else snprintf(out, size, "%s", v);
        free(v);
        H5Tclose(mem);
    }
    H5Tclose(type);
    H5Aclose(a);
    H5Oclose(obj);
    return rc;
}

static hid_t h5_open(const char *path)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our messages, not HDF5's stack */
    FILE *f = fopen(path, "rb");
    if (!f) {
        cli_fail("run", "%s: cannot open: %s", path, strerror(errno));
        return -1;
    }
    fclose(f);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) cli_fail("run", "%s: not an HDF5 file; expected a SONATA HDF5 file", path);
    return file;
}

/* The names of a group's members (populations). */
static int h5_members(hid_t file, const char *fname, const char *path, char ***out, int *n)
{
    *out = NULL;
    *n = 0;
    if (!h5_exists(file, path))
        return cli_fail("run", "%s: %s: no such group; expected SONATA's %s/<population>",
                        fname, path, path);
    hid_t g = H5Gopen2(file, path, H5P_DEFAULT);
    H5G_info_t info;
    if (g < 0 || H5Gget_info(g, &info) < 0) {
        if (g >= 0) H5Gclose(g);
        return cli_fail("run", "%s: %s: not a group", fname, path);
    }
    char **names = calloc((size_t)info.nlinks + 1, sizeof *names);
    int rc = names ? 0 : fail_oom();
    for (hsize_t k = 0; rc == 0 && k < info.nlinks; k++) {
        char b[1024];
        if (H5Lget_name_by_idx(g, ".", H5_INDEX_NAME, H5_ITER_INC, k, b, sizeof b,
                               H5P_DEFAULT) < 0)
            rc = cli_fail("run", "%s: %s: cannot list", fname, path);
        else if (!(names[k] = dup_str(b))) rc = fail_oom();
    }
    H5Gclose(g);
    if (rc) {
        for (hsize_t k = 0; names && k < info.nlinks; k++) free(names[k]);
        free(names);
        return 1;
    }
    *out = names;
    *n = (int)info.nlinks;
    return 0;
}

static void free_strings(char **s, long n)
{
    for (long k = 0; s && k < n; k++) free(s[k]);
    free(s);
}

/* ---- populations ---- */

enum { KIND_CELL = 0, KIND_VIRTUAL = 1 };

typedef struct {
    char name[256];
    char file[PATH_MAX_];     /* nodes or edges h5 */
    char base[512];           /* /nodes/<name> or /edges/<name> */
    hid_t h5;
    csv_t *types;
    long n;
    int64_t *type_id, *group_id, *group_index; /* group ids/indices NULL: one group "0", in order */
    /* nodes */
    int kind;
    uint32_t first_gid;
    char morph_dir[PATH_MAX_], models_dir[PATH_MAX_];
    uint64_t bmtk_gid;        /* bmtk's first gid (every population, virtual too, in order) */
    int has_input;            /* a virtual population some spike input names */
    json_t **cells;           /* per node of a cell population: its cell (synapses grow) */
    double **spikes;          /* per node of a virtual population: its spike train [ms] */
    long *n_spikes;
} pop_t;

/* A column (attribute) per element: the group's dataset, else the type table's column; NULL
 * where neither gives it. *found: whether any element has it. */
static int column(const pop_t *p, const char *key, char ***out, int *found)
{
    char **v = calloc((size_t)p->n + 1, sizeof *v);
    *out = NULL;
    *found = 0;
    if (!v) return fail_oom();
    int rc = 0;
    /* the groups' datasets: each distinct group once */
    int64_t *seen = NULL;
    size_t n_seen = 0;
    for (long k = 0; rc == 0 && k < p->n; k++) {
        const int64_t g = p->group_id ? p->group_id[k] : 0;
        int known = 0;
        for (size_t q = 0; q < n_seen; q++) known |= seen[q] == g;
        if (known) continue;
        int64_t *grown = realloc(seen, (n_seen + 1) * sizeof *grown);
        if (!grown) {
            rc = fail_oom();
            break;
        }
        seen = grown;
        seen[n_seen++] = g;
        char path[1024];
        snprintf(path, sizeof path, "%s/%lld/%s", p->base, (long long)g, key);
        if (!h5_exists(p->h5, path)) continue;
        long m = 0;
        char **s = NULL;
        if (h5_strings(p->h5, p->file, path, &s, &m)) {
            rc = 1;
            break;
        }
        for (long e = k; rc == 0 && e < p->n; e++) {
            if ((p->group_id ? p->group_id[e] : 0) != g) continue;
            const int64_t i = p->group_index ? p->group_index[e] : e;
            if (i >= m) {
                rc = cli_fail("run", "%s: %s/%s_group_index[%ld]: %lld, past the %ld values of "
                              "%s; expected an index into group %lld", p->file, p->base,
                              p->base[1] == 'n' ? "node" : "edge", e, (long long)i, m, path,
                              (long long)g);
                break;
            }
            if (!(v[e] = dup_str(s[i]))) rc = fail_oom();
            *found = 1;
        }
        free_strings(s, m);
    }
    free(seen);
    /* the type table */
    const int col = p->types ? csv_col(p->types, key) : -1;
    for (long e = 0; rc == 0 && col >= 0 && e < p->n; e++) {
        if (v[e]) continue;
        const int row = csv_row(p->types, (long)p->type_id[e]);
        const char *c = row >= 0 ? p->types->cells[(size_t)row * (size_t)p->types->ncols +
                                                    (size_t)col] : NULL;
        if (c) {
            if (!(v[e] = dup_str(c))) rc = fail_oom();
            *found = 1;
        }
    }
    if (rc) {
        free_strings(v, p->n);
        return 1;
    }
    *out = v;
    return 0;
}

/* Reads a population's type ids, group ids and indices, and checks the ids against its table. */
static int population_ids(pop_t *p, const char *type_key)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", p->base, type_key);
    long n = 0;
    if (h5_ids(p->h5, p->file, path, -1, &p->type_id, &n)) return 1;
    p->n = n;
    snprintf(path, sizeof path, "%s/%s", p->base, type_key[0] == 'n' ? "node_group_id"
                                                                      : "edge_group_id");
    if (h5_exists(p->h5, path) && h5_ids(p->h5, p->file, path, n, &p->group_id, NULL)) return 1;
    snprintf(path, sizeof path, "%s/%s", p->base, type_key[0] == 'n' ? "node_group_index"
                                                                      : "edge_group_index");
    if (h5_exists(p->h5, path) && h5_ids(p->h5, p->file, path, n, &p->group_index, NULL))
        return 1;
    for (long k = 0; p->types && k < n; k++)
        if (csv_row(p->types, (long)p->type_id[k]) < 0)
            return cli_fail("run", "%s: %s/%s[%ld]: %lld is not in %s; expected one of its "
                            "%s values", p->file, p->base, type_key, k, (long long)p->type_id[k],
                            p->types->path, type_key);
    return 0;
}

/* ---- the circuit being read ---- */

typedef struct {
    const char *file;        /* the config named on the command line */
    config_t sim, circ;
    const json_t *sim_root;
    json_t *circ_root;       /* owned when it is another file */
    char circ_path[PATH_MAX_]; /* its path */
    json_t *node_sets;       /* owned */
    char node_sets_file[PATH_MAX_];
    pop_t *pops;
    int n_pops;
    uint32_t n_gids;
    double dl_um, threshold_mv, dt_ms;
    char syn_dir[PATH_MAX_];
    json_t *models;          /* cache: dynamics file -> cell template */
    json_t *synapses;        /* cache: dynamics file -> synapse template */
    json_t *connections, *events;
    struct morph_order *orders; /* per morphology file: bmtk's section ids to ours */
    int n_orders;
    uint64_t bmtk_gids;      /* bmtk's gids so far */
    int n_edge_pops;         /* edge populations so far (their order) */
    struct placement *placements; /* edges placed by target_sections and distance_range */
    size_t n_placements;
} circuit_t;

/* An edge whose synapses bmtk places at run time (target_sections, distance_range): drawn
 * once all edges are read, per target in bmtk's order (placements_draw). */
struct placement {
    int tpop, spop;          /* indices in pops */
    long trg, src, edge;     /* node ids, the edge's index */
    int phase, edge_pop;     /* 0 recurrent, 1 from virtual nodes; the edge population's order */
    int nsyns;
    unsigned labels;         /* SWC types targeted, bit per type */
    double dmin, dmax, weight, delay;
    json_t *synapse;         /* borrowed from the synapse cache */
};

/* A morphology's sections in NEURON's order (bmtk's afferent_section_id indexes hobj.all):
 * Import3d creates them type by type (soma, axon, dend, apic, ...), each type's in the order
 * of hinesbatch's Import3d sections; `section[id]` is hinesbatch's index of NEURON's id. */
struct morph_order {
    char path[PATH_MAX_];
    int n;
    int *section;
    int *type;            /* SWC type per NEURON id */
    double *length;       /* per NEURON id [um] */
    double *dist0;        /* per NEURON id: path distance of its x = 0 from soma[0](0) [um] */
    int soma_root;        /* NEURON's soma[0] is the morphology's root (distances valid) */
};

static pop_t *find_pop(circuit_t *c, const char *name)
{
    for (int k = 0; k < c->n_pops; k++)
        if (!strcmp(c->pops[k].name, name)) return &c->pops[k];
    return NULL;
}

static int morph_order(circuit_t *c, const char *path, const struct morph_order **out)
{
    for (int k = 0; k < c->n_orders; k++)
        if (!strcmp(c->orders[k].path, path)) {
            *out = &c->orders[k];
            return 0;
        }
    hb_swc_options_t so;
    hb_swc_options_default(&so);
    so.sections = HB_SECTIONS_IMPORT3D;
    hb_morph_t *m = NULL;
    const hb_status_t status = hb_morph_load_swc(path, &so, &m);
    if (status != HB_SUCCESS) return cli_fail("run", "%s (%s)", hb_last_error(),
                                              hb_status_string(status));
    const int n = m->n_sections;
    struct morph_order o;
    memset(&o, 0, sizeof o);
    o.section = malloc(((size_t)n + 1) * sizeof *o.section);
    o.type = malloc(((size_t)n + 1) * sizeof *o.type);
    o.length = malloc(((size_t)n + 1) * sizeof *o.length);
    o.dist0 = malloc(((size_t)n + 1) * sizeof *o.dist0);
    double *start = malloc(((size_t)n + 1) * sizeof *start); /* per section of ours */
    struct morph_order *grown = realloc(c->orders, (size_t)(c->n_orders + 1) * sizeof *grown);
    if (grown) c->orders = grown;
    if (!o.section || !o.type || !o.length || !o.dist0 || !start || !grown) {
        free(o.section);
        free(o.type);
        free(o.length);
        free(o.dist0);
        free(start);
        hb_morph_destroy(m);
        return fail_oom();
    }
    /* path distance of each section's x = 0 from the root's x = 0 (sections are in parent
     * order): NEURON's h.distance from soma[0](0) where the root is soma[0] */
    for (int k = 0; k < n; k++) {
        const hb_section_t *sec = &m->sections[k];
        start[k] = sec->parent < 0 ? 0.0 : start[sec->parent] +
                   sec->parent_x * m->sections[sec->parent].length;
    }
    int q = 0;
    for (int t = 0; t < HB_SWC_TYPES; t++) /* Import3d's order: a stable sort by type */
        for (int k = 0; k < n; k++)
            if (m->sections[k].type == t) {
                o.section[q] = k;
                o.type[q] = t;
                o.length[q] = m->sections[k].length;
                o.dist0[q] = start[k];
                q++;
            }
    o.n = q;
    o.soma_root = q > 0 && o.section[0] == 0 && o.type[0] == 1;
    free(start);
    hb_morph_destroy(m);
    snprintf(o.path, sizeof o.path, "%s", path);
    c->orders[c->n_orders] = o;
    *out = &c->orders[c->n_orders++];
    return 0;
}

/* numpy's legacy RandomState (bmtk's BioCell.prng = RandomState(gid)): MT19937 seeded by
 * init_genrand, random_sample's 53-bit doubles. */
typedef struct {
    uint32_t mt[624];
    int i;
} mt19937_t;

static void mt_seed(mt19937_t *m, uint32_t seed)
{
    m->mt[0] = seed;
    for (uint32_t k = 1; k < 624; k++)
        m->mt[k] = 1812433253u * (m->mt[k - 1] ^ (m->mt[k - 1] >> 30)) + k;
    m->i = 624;
}

static uint32_t mt_next(mt19937_t *m)
{
    if (m->i >= 624) {
        for (int k = 0; k < 624; k++) {
            const uint32_t y = (m->mt[k] & 0x80000000u) | (m->mt[(k + 1) % 624] & 0x7fffffffu);
            m->mt[k] = m->mt[(k + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        m->i = 0;
    }
    uint32_t y = m->mt[m->i++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

static double mt_double(mt19937_t *m)
{
    const uint32_t a = mt_next(m) >> 5, b = mt_next(m) >> 6;
    return (a * 67108864.0 + b) / 9007199254740992.0;
}

/* numpy's np.sum of doubles: pairwise, 8 accumulators in blocks of up to 128. */
static double numpy_sum(const double *a, size_t n)
{
    if (n < 8) {
        double r = 0.0;
        for (size_t i = 0; i < n; i++) r += a[i];
        return r;
    }
    if (n <= 128) {
        double r[8];
        for (int j = 0; j < 8; j++) r[j] = a[j];
        size_t i = 8;
        for (; i < n - n % 8; i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + (size_t)j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    size_t n2 = n / 2;
    n2 -= n2 % 8;
    return numpy_sum(a, n2) + numpy_sum(a + n2, n - n2);
}

/* ---- biophysical models: bmtk's set_params_allactive with hh and pas ---- */

static int region_of(const char *section)
{
    if (!strncmp(section, "soma", 4)) return 1;
    if (!strncmp(section, "axon", 4)) return 2;
    if (!strncmp(section, "dend", 4)) return 3;
    if (!strncmp(section, "apic", 4)) return 4;
    return -1;
}

typedef struct {
    double ra, cm;
    int has_pas, has_hh;
    double g_pas, e_pas;
    double hh[6]; /* gnabar, gkbar, gl, el, ena, ek */
} region_state_t;

static const char *const hh_names[6] = {"gnabar_hh", "gkbar_hh", "gl_hh", "el_hh", "ena", "ek"};
static const char *const hh_keys[6] = {"gnabar", "gkbar", "gl", "el", "ena", "ek"};

static int number_of(const json_t *v, double *out)
{
    if (json_is_number(v)) {
        *out = json_number_value(v);
        return 1;
    }
    if (json_is_string(v)) {
        char *end;
        *out = strtod(json_string_value(v), &end);
        return end != json_string_value(v) && !*end;
    }
    return 0;
}

/* A cell's template from its dynamics_params file: Ra, cm, regions and mechanisms as bmtk's
 * set_params_allactive sets them (pas everywhere, then the genome in order, then erev). */
static int cell_template(const char *file, json_t **out)
{
    json_t *d;
    *out = NULL;
    if (load_json(file, &d)) return 1;
    region_state_t st[5];
    for (int r = 1; r <= 4; r++) { /* NEURON's defaults, then pas inserted everywhere */
        st[r] = (region_state_t){35.4, 1.0, 1, 0, 0.001, -70.0,
                                 {0.12, 0.036, 0.0003, -54.3, 50.0, -77.0}};
    }
    int rc = 0;
    const json_t *passive = json_array_get(json_object_get(d, "passive"), 0);
    const json_t *genome = json_object_get(d, "genome");
    const json_t *cond = json_array_get(json_object_get(d, "conditions"), 0);
    if (!json_is_object(passive) || !json_is_array(genome) || !json_is_object(cond))
        rc = cli_fail("run", "%s: expected bmtk's biophysical parameters: \"passive\": [{\"ra\", "
                      "\"cm\": [{\"section\", \"cm\"}], \"e_pas\"}], \"genome\": [{\"section\", "
                      "\"name\", \"value\", \"mechanism\"}], \"conditions\": [{\"erev\": [...]}]",
                      file);
    double v = 0.0;
    if (rc == 0 && json_object_get(passive, "e_pas")) {
        if (!number_of(json_object_get(passive, "e_pas"), &v))
            rc = cli_fail("run", "%s: passive[0].e_pas: expected a number [mV]", file);
        for (int r = 1; r <= 4; r++) st[r].e_pas = v;
    }
    if (rc == 0 && json_object_get(passive, "ra")) {
        if (!number_of(json_object_get(passive, "ra"), &v))
            rc = cli_fail("run", "%s: passive[0].ra: expected a number [ohm cm]", file);
        for (int r = 1; r <= 4; r++) st[r].ra = v;
    }
    size_t i;
    const json_t *e;
    json_array_foreach(json_object_get(passive, "cm"), i, e) {
        const char *sec = json_string_value(json_object_get(e, "section"));
        const int r = sec ? region_of(sec) : -1;
        if (rc == 0 && (!sec || !number_of(json_object_get(e, "cm"), &v)))
            rc = cli_fail("run", "%s: passive[0].cm[%zu]: expected {\"section\": \"soma\", "
                          "\"cm\": uF/cm2}", file, i);
        if (rc == 0 && r > 0) st[r].cm = v;
    }
    json_array_foreach(genome, i, e) {
        if (rc) break;
        const char *sec = json_string_value(json_object_get(e, "section"));
        const char *name = json_string_value(json_object_get(e, "name"));
        const json_t *mj = json_object_get(e, "mechanism");
        const char *mech = mj ? json_string_value(mj) : "";
        if (!sec || !name || !mech || !number_of(json_object_get(e, "value"), &v)) {
            rc = cli_fail("run", "%s: genome[%zu]: expected {\"section\", \"name\", \"value\", "
                          "\"mechanism\"} (strings, a number)", file, i);
            break;
        }
        const int r = region_of(sec);
        if (strcmp(mech, "") && strcmp(mech, "pas") && strcmp(mech, "hh")) {
            rc = cli_fail("run", "%s: genome[%zu].mechanism: \"%s\" is not available; expected "
                          "\"hh\", \"pas\" or \"\" (hinesbatch's mechanisms for SONATA cells)",
                          file, i, mech);
            break;
        }
        if (r < 0) continue; /* bmtk: no such sections, nothing set */
        if (!strcmp(mech, "hh")) st[r].has_hh = 1;
        if (!strcmp(mech, "pas")) st[r].has_pas = 1;
        int done = 0;
        if (!strcmp(name, "cm")) st[r].cm = v, done = 1;
        else if (!strcmp(name, "Ra")) st[r].ra = v, done = 1;
        else if (!strcmp(name, "g_pas")) st[r].g_pas = v, done = st[r].has_pas;
        else if (!strcmp(name, "e_pas")) st[r].e_pas = v, done = st[r].has_pas;
        for (int k = 0; k < 6 && !done; k++)
            if (!strcmp(name, hh_names[k]) && st[r].has_hh) st[r].hh[k] = v, done = 1;
        if (!done)
            rc = cli_fail("run", "%s: genome[%zu].name: \"%s\" in section \"%s\"; expected cm, "
                          "Ra, g_pas, e_pas, or with hh inserted gnabar_hh, gkbar_hh, gl_hh, "
                          "el_hh, ena, ek", file, i, name, sec);
    }
    json_array_foreach(json_object_get(cond, "erev"), i, e) {
        if (rc) break;
        const char *sec = json_string_value(json_object_get(e, "section"));
        const int r = sec ? region_of(sec) : -1;
        double ena = 0, ek = 0;
        if (!sec || !number_of(json_object_get(e, "ena"), &ena) ||
            !number_of(json_object_get(e, "ek"), &ek)) {
            rc = cli_fail("run", "%s: conditions[0].erev[%zu]: expected {\"section\", \"ena\", "
                          "\"ek\"}", file, i);
            break;
        }
        if (r > 0 && st[r].has_hh) { /* the ions exist where hh is */
            st[r].hh[4] = ena;
            st[r].hh[5] = ek;
        }
    }
    json_decref(d);
    if (rc) return 1;
    static const char *const region_names[5] = {"", "soma", "axon", "dend", "apical"};
    json_t *t = json_object(), *regions = json_array(), *mechs = json_array();
    for (int r = 1; r <= 4; r++) {
        json_array_append_new(regions, json_pack("{s:s,s:f,s:f}", "region", region_names[r],
                                                 "Ra", st[r].ra, "cm", st[r].cm));
        if (st[r].has_pas)
            json_array_append_new(mechs, json_pack("{s:s,s:s,s:f,s:f}", "name", "pas", "region",
                                                   region_names[r], "g", st[r].g_pas, "e",
                                                   st[r].e_pas));
        if (st[r].has_hh) {
            json_t *h = json_pack("{s:s,s:s}", "name", "hh", "region", region_names[r]);
            for (int k = 0; k < 6; k++) json_object_set_new(h, hh_keys[k], json_real(st[r].hh[k]));
            json_array_append_new(mechs, h);
        }
    }
    json_object_set_new(t, "regions", regions);
    json_object_set_new(t, "mechanisms", mechs);
    *out = t;
    return 0;
}

/* ---- nodes ---- */

/* Node k of cell population p as a cell of the network document (its synapses come with the
 * edges). */
static int cell_of(circuit_t *c, pop_t *p, long k, char **templ, char **proc, char **morph,
                   char **dyn)
{
    const char *where = p->file;
    if (!templ[k] || (strcmp(templ[k], "ctdb:Biophys1.hoc") && strcmp(templ[k], "ctdb:Biophys1")))
        return cli_fail("run", "%s: %s node %ld: model_template \"%s\"; expected "
                        "\"ctdb:Biophys1.hoc\" (bmtk's SWC cell) for a biophysical node", where,
                        p->name, k, templ[k] ? templ[k] : "(none)");
    if (!proc[k] || strcmp(proc[k], "set_params_allactive"))
        return cli_fail("run", "%s: %s node %ld: model_processing \"%s\"; expected "
                        "\"set_params_allactive\" (bmtk's parameter setter alone: bmtk's "
                        "aibs_perisomatic and aibs_allactive also replace the axon by a stub, "
                        "which hinesbatch does not build)", where, p->name, k,
                        proc[k] ? proc[k] : "(none)");
    if (!morph[k])
        return cli_fail("run", "%s: %s node %ld: no morphology; expected an SWC file name in "
                        "the node's or its type's \"morphology\"", where, p->name, k);
    if (!dyn[k])
        return cli_fail("run", "%s: %s node %ld: no dynamics_params; expected a JSON file of "
                        "biophysical_neuron_models_dir", where, p->name, k);
    char mpath[PATH_MAX_], dpath[PATH_MAX_];
    char mname[PATH_MAX_];
    snprintf(mname, sizeof mname, "%s%s", morph[k], strchr(morph[k], '.') ? "" : ".swc");
    const size_t ml = strlen(mname);
    if (ml < 4 || strcasecmp(mname + ml - 4, ".swc") != 0)
        return cli_fail("run", "%s: %s node %ld: morphology \"%s\"; expected an SWC file (.swc, "
                        "or a name without an extension): NEURON's section order of other "
                        "formats is not checked here", where, p->name, k, morph[k]);
    join_path(mpath, sizeof mpath, p->morph_dir, mname);
    join_path(dpath, sizeof dpath, p->models_dir, dyn[k]);
    json_t *templ_json = json_object_get(c->models, dpath);
    if (!templ_json) {
        json_t *t;
        if (cell_template(dpath, &t)) return 1;
        json_object_set_new(c->models, dpath, t);
        templ_json = t;
    }
    char name[512];
    snprintf(name, sizeof name, "%s:%ld", p->name, k);
    json_t *cell = json_deep_copy(templ_json);
    json_object_set_new(cell, "name", json_string(name));
    json_object_set_new(cell, "morphology", json_string(mpath));
    json_object_set_new(cell, "Ra", json_real(35.4));
    json_object_set_new(cell, "discretization", json_pack("{s:s,s:f,s:s}", "policy",
                                                          "odd-length", "max_length", c->dl_um,
                                                          "scheme", "neuron"));
    json_object_set_new(cell, "probes", json_pack("[{s:s,s:s,s:f}]", "name", "soma", "at",
                                                  "soma", "spike_threshold", c->threshold_mv));
    json_object_set_new(cell, "synapses", json_array());
    p->cells[k] = cell;
    return 0;
}

static int read_nodes(circuit_t *c, const json_t *entry, size_t index, const char *comp_morph,
                      const char *comp_models)
{
    char key[128];
    snprintf(key, sizeof key, "networks.nodes[%zu]", index);
    const char *nf = json_string_value(json_object_get(entry, "nodes_file"));
    const char *tf = json_string_value(json_object_get(entry, "node_types_file"));
    if (!nf || !tf)
        return cli_fail("run", "%s: %s: expected \"nodes_file\" and \"node_types_file\" (paths)",
                        c->circ.file, key);
    char npath[PATH_MAX_], tpath[PATH_MAX_];
    if (config_path(&c->circ, key, nf, npath, sizeof npath) ||
        config_path(&c->circ, key, tf, tpath, sizeof tpath))
        return 1;
    csv_t *types;
    if (csv_load(tpath, "node_type_id", &types)) return 1;
    hid_t h5 = h5_open(npath);
    if (h5 < 0) {
        csv_free(types);
        return 1;
    }
    char **names;
    int n_names;
    if (h5_members(h5, npath, "/nodes", &names, &n_names)) {
        H5Fclose(h5);
        csv_free(types);
        return 1;
    }
    int rc = 0;
    const json_t *popcfg = json_object_get(entry, "populations");
    for (int q = 0; rc == 0 && q < n_names; q++) {
        if (find_pop(c, names[q])) {
            rc = cli_fail("run", "%s: /nodes/%s: population named twice in %s; expected each "
                          "population once", npath, names[q], c->circ.file);
            break;
        }
        pop_t *grown = realloc(c->pops, (size_t)(c->n_pops + 1) * sizeof *grown);
        if (!grown) {
            rc = fail_oom();
            break;
        }
        c->pops = grown;
        pop_t *p = &c->pops[c->n_pops++];
        memset(p, 0, sizeof *p);
        snprintf(p->name, sizeof p->name, "%s", names[q]);
        snprintf(p->file, sizeof p->file, "%s", npath);
        snprintf(p->base, sizeof p->base, "/nodes/%s", names[q]);
        p->h5 = h5;
        const json_t *pc = json_object_get(popcfg, names[q]);
        const char *md = json_string_value(json_object_get(pc, "morphologies_dir"));
        const char *bd = json_string_value(json_object_get(pc, "biophysical_neuron_models_dir"));
        snprintf(p->morph_dir, sizeof p->morph_dir, "%s", comp_morph);
        snprintf(p->models_dir, sizeof p->models_dir, "%s", comp_models);
        if ((md && config_path(&c->circ, key, md, p->morph_dir, sizeof p->morph_dir)) ||
            (bd && config_path(&c->circ, key, bd, p->models_dir, sizeof p->models_dir))) {
            rc = 1;
            break;
        }
        p->types = types;
        if (population_ids(p, "node_type_id")) {
            rc = 1;
            break;
        }
        char idpath[1024];
        snprintf(idpath, sizeof idpath, "%s/node_id", p->base);
        if (h5_exists(h5, idpath)) { /* bmtk writes them: the implicit ids, or refused */
            int64_t *ids = NULL;
            rc = h5_ids(h5, npath, idpath, p->n, &ids, NULL);
            for (long k = 0; rc == 0 && k < p->n; k++)
                if (ids[k] != k)
                    rc = cli_fail("run", "%s: %s[%ld]: %lld; expected node ids 0 to %ld in order "
                                  "(SONATA's implicit ids)", npath, idpath, k, (long long)ids[k],
                                  p->n - 1);
            free(ids);
            if (rc) break;
        }
        char **mtype = NULL, **templ = NULL, **proc = NULL, **morph = NULL, **dyn = NULL;
        int found;
        rc = column(p, "model_type", &mtype, &found) || column(p, "model_template", &templ, &found) ||
             column(p, "model_processing", &proc, &found) || column(p, "morphology", &morph, &found) ||
             column(p, "dynamics_params", &dyn, &found);
        const char *ptype = json_string_value(json_object_get(pc, "type"));
        int virtuals = 0, cells = 0;
        for (long k = 0; rc == 0 && k < p->n; k++) {
            const char *t = mtype[k] ? mtype[k] : ptype;
            if (t && !strcmp(t, "virtual")) virtuals++;
            else if (t && !strcmp(t, "biophysical")) cells++;
            else
                rc = cli_fail("run", "%s: %s node %ld: model_type \"%s\"; expected "
                              "\"biophysical\" or \"virtual\" (hinesbatch has no point "
                              "neurons)", npath, p->name, k, t ? t : "(none)");
        }
        if (rc == 0 && virtuals && cells)
            rc = cli_fail("run", "%s: population %s mixes biophysical and virtual nodes; expected "
                          "one model_type per population", npath, p->name);
        p->kind = virtuals ? KIND_VIRTUAL : KIND_CELL;
        p->bmtk_gid = c->bmtk_gids;
        c->bmtk_gids += (uint64_t)p->n;
        if (rc == 0 && p->kind == KIND_CELL) {
            p->first_gid = c->n_gids;
            if ((uint64_t)c->n_gids + (uint64_t)p->n > 0xfffffffeu)
                rc = cli_fail("run", "%s: too many cells (at most 2^32 - 1)", npath);
            c->n_gids += (uint32_t)p->n;
            p->cells = calloc((size_t)p->n + 1, sizeof *p->cells);
            if (!p->cells && rc == 0) rc = fail_oom();
            for (long k = 0; rc == 0 && k < p->n; k++)
                rc = cell_of(c, p, k, templ, proc, morph, dyn);
        } else if (rc == 0) {
            p->spikes = calloc((size_t)p->n + 1, sizeof *p->spikes);
            p->n_spikes = calloc((size_t)p->n + 1, sizeof *p->n_spikes);
            if (!p->spikes || !p->n_spikes) rc = fail_oom();
        }
        free_strings(mtype, p->n);
        free_strings(templ, p->n);
        free_strings(proc, p->n);
        free_strings(morph, p->n);
        free_strings(dyn, p->n);
    }
    free_strings(names, n_names);
    if (n_names == 0) {
        csv_free(types);
        H5Fclose(h5);
        return rc ? 1 : cli_fail("run", "%s: /nodes: no population; expected at least one",
                                 npath);
    }
    return rc;
}

/* ---- node sets ---- */

/* Whether a JSON value (a number or a string) equals a column's string. */
static int value_matches(const json_t *want, const char *have)
{
    if (!have) return 0;
    if (json_is_string(want)) return !strcmp(json_string_value(want), have);
    double h;
    char *end;
    h = strtod(have, &end);
    if (end == have || *end) return 0;
    return json_is_number(want) && json_number_value(want) == h;
}

static int list_matches(const json_t *want, const char *have)
{
    if (!json_is_array(want)) return value_matches(want, have);
    size_t i;
    const json_t *w;
    json_array_foreach(want, i, w) if (value_matches(w, have)) return 1;
    return 0;
}

/* Marks in masks[pop][node] the nodes of node set `name` (depth: compound sets' nesting). */
static int node_set_mark(circuit_t *c, const char *name, unsigned char **masks, int depth)
{
    const json_t *def = json_object_get(c->node_sets, name);
    if (!def)
        return cli_fail("run", "%s: node set \"%s\" is not defined; expected a name of the node "
                        "sets file (%s) or of \"node_sets\"", c->sim.file, name,
                        c->node_sets_file[0] ? c->node_sets_file : "none given");
    if (depth > 32)
        return cli_fail("run", "%s: node set \"%s\": compound sets nested too deep (a cycle?)",
                        c->node_sets_file, name);
    if (json_is_array(def)) {
        size_t i;
        const json_t *e;
        json_array_foreach(def, i, e) {
            if (!json_is_string(e))
                return cli_fail("run", "%s: %s[%zu]: expected the name of a node set (a "
                                "compound set)", c->node_sets_file, name, i);
            if (node_set_mark(c, json_string_value(e), masks, depth + 1)) return 1;
        }
        return 0;
    }
    if (!json_is_object(def))
        return cli_fail("run", "%s: %s: expected an object (population, node_id, attributes) "
                        "or a list of node set names", c->node_sets_file, name);
    const json_t *pop = json_object_get(def, "population"), *ids = json_object_get(def, "node_id");
    const char *key;
    const json_t *v;
    json_object_foreach((json_t *)def, key, v) {
        if (json_is_object(v))
            return cli_fail("run", "%s: %s.%s: a rule object ($gt, $regex, ...); expected a "
                            "value or a list of values", c->node_sets_file, name, key);
        int names_ok = json_is_string(v) || json_is_array(v);
        size_t i;
        const json_t *e;
        if (json_is_array(v)) json_array_foreach(v, i, e) names_ok &= json_is_string(e);
        if (!strcmp(key, "population") && !names_ok)
            return cli_fail("run", "%s: %s.population: expected a population name or a list of "
                            "names", c->node_sets_file, name);
    }
    for (int q = 0; q < c->n_pops; q++) {
        pop_t *p = &c->pops[q];
        if (pop && !list_matches(pop, p->name)) continue;
        unsigned char *m = calloc((size_t)p->n + 1, 1);
        if (!m) return fail_oom();
        for (long k = 0; k < p->n; k++) m[k] = 1;
        if (ids) {
            for (long k = 0; k < p->n; k++) {
                char b[32];
                snprintf(b, sizeof b, "%ld", k);
                m[k] = (unsigned char)list_matches(ids, b);
            }
        }
        json_object_foreach((json_t *)def, key, v) {
            if (!strcmp(key, "population") || !strcmp(key, "node_id")) continue;
            char **col;
            int found;
            if (column(p, key, &col, &found)) {
                free(m);
                return 1;
            }
            for (long k = 0; k < p->n; k++)
                if (!list_matches(v, col[k])) m[k] = 0;
            free_strings(col, p->n);
        }
        for (long k = 0; k < p->n; k++)
            if (m[k]) masks[q][k] = 1;
        free(m);
    }
    if (pop) { /* a population named that does not exist */
        size_t i;
        const json_t *e;
        const json_t *one = json_is_array(pop) ? NULL : pop;
        json_array_foreach(pop, i, e) if (!find_pop(c, json_string_value(e)))
            return cli_fail("run", "%s: %s.population: no population \"%s\" in the circuit",
                            c->node_sets_file, name, json_string_value(e));
        if (one && !find_pop(c, json_string_value(one)))
            return cli_fail("run", "%s: %s.population: no population \"%s\" in the circuit",
                            c->node_sets_file, name, json_string_value(one));
    }
    return 0;
}

static void masks_free(circuit_t *c, unsigned char **masks)
{
    for (int q = 0; masks && q < c->n_pops; q++) free(masks[q]);
    free(masks);
}

static int node_set(circuit_t *c, const char *name, unsigned char ***out)
{
    unsigned char **masks = calloc((size_t)c->n_pops + 1, sizeof *masks);
    int rc = masks ? 0 : fail_oom();
    for (int q = 0; rc == 0 && q < c->n_pops; q++)
        if (!(masks[q] = calloc((size_t)c->pops[q].n + 1, 1))) rc = fail_oom();
    if (rc == 0) rc = node_set_mark(c, name, masks, 0);
    if (rc) {
        masks_free(c, masks);
        return 1;
    }
    *out = masks;
    return 0;
}

/* ---- edges ---- */

static int synapse_template(circuit_t *c, const char *model, const char *dyn, const char *where,
                            json_t **out)
{
    char path[PATH_MAX_], id[PATH_MAX_ + 64];
    join_path(path, sizeof path, c->syn_dir, dyn);
    snprintf(id, sizeof id, "%s|%s", model, path);
    *out = json_object_get(c->synapses, id);
    if (*out) return 0;
    int exp2 = !strcmp(model, "exp2syn") || !strcmp(model, "Exp2Syn");
    int exp1 = !strcmp(model, "expsyn") || !strcmp(model, "ExpSyn");
    if (!exp1 && !exp2)
        return cli_fail("run", "%s: model_template \"%s\"; expected \"exp2syn\" or \"expsyn\" "
                        "(bmtk's names for NEURON's Exp2Syn and ExpSyn)", where, model);
    json_t *d;
    if (load_json(path, &d)) return 1;
    double tau1, tau2 = 0, erev;
    int ok = number_of(json_object_get(d, "tau1"), &tau1) &&
             number_of(json_object_get(d, "erev"), &erev) &&
             (exp1 || number_of(json_object_get(d, "tau2"), &tau2));
    json_decref(d);
    if (!ok)
        return cli_fail("run", "%s: expected %s's parameters as bmtk reads them: \"tau1\"%s, "
                        "\"erev\" (numbers)", path, exp2 ? "Exp2Syn" : "ExpSyn",
                        exp2 ? ", \"tau2\"" : " (its tau)");
    json_t *s = exp2 ? json_pack("{s:s,s:f,s:f,s:f}", "type", "exp2syn", "tau1", tau1, "tau2",
                                 tau2, "e", erev)
                     : json_pack("{s:s,s:f,s:f}", "type", "expsyn", "tau", tau1, "e", erev);
    json_object_set_new(c->synapses, id, s);
    *out = s;
    return 0;
}

static int number_in(const char *s, double *v)
{
    if (!s) return 0;
    char *end;
    *v = strtod(s, &end);
    return end != s && !*end;
}

/* A synapse (a copy of template st) at our section `section`, x, on cell trg of tp, and what
 * drives it: a connection from a cell, or the spike train of a virtual node as events. */
static void add_synapse(circuit_t *c, const pop_t *sp, long src, const pop_t *tp, long trg,
                        const json_t *st, int section, double x, double weight, double delay)
{
    json_t *cell = tp->cells[trg];
    json_t *syns = json_object_get(cell, "synapses");
    json_t *s = json_deep_copy(st);
    json_object_set_new(s, "at", json_pack("{s:i,s:f}", "section", section, "x", x));
    const size_t synapse = json_array_size(syns);
    json_array_append_new(syns, s);
    const json_int_t target = (json_int_t)(tp->first_gid + (uint32_t)trg);
    if (sp->kind == KIND_CELL) {
        json_array_append_new(c->connections,
                              json_pack("{s:I,s:I,s:I,s:f,s:f}", "source",
                                        (json_int_t)(sp->first_gid + (uint32_t)src), "target",
                                        target, "synapse", (json_int_t)synapse, "weight",
                                        weight, "delay", delay));
        return;
    }
    for (long q = 0; q < sp->n_spikes[src]; q++)
        json_array_append_new(c->events, json_pack("{s:I,s:I,s:f,s:f}", "target", target,
                                                   "synapse", (json_int_t)synapse, "time",
                                                   sp->spikes[src][q] + delay, "weight",
                                                   weight));
}

/* bmtk's list in a CSV cell or a string: "['dend', 'apic']", "[0.0, 150.0]", "dend". */
static int list_items(const char *text, char items[8][32])
{
    int n = 0;
    const char *p = text;
    while (*p && n < 8) {
        while (*p == '[' || *p == ']' || *p == ',' || *p == ' ' || *p == '\'' || *p == '"') p++;
        const char *start = p;
        while (*p && *p != ',' && *p != ']' && *p != '\'' && *p != '"' && *p != ' ') p++;
        if (p > start) {
            snprintf(items[n], 32, "%.*s", (int)(p - start), start);
            n++;
        }
    }
    return n;
}

static int compare_placement(const void *a, const void *b)
{
    const struct placement *x = a, *y = b;
    if (x->tpop != y->tpop) return x->tpop < y->tpop ? -1 : 1;
    if (x->trg != y->trg) return x->trg < y->trg ? -1 : 1;
    if (x->phase != y->phase) return x->phase < y->phase ? -1 : 1;
    if (x->edge_pop != y->edge_pop) return x->edge_pop < y->edge_pop ? -1 : 1;
    return (x->edge > y->edge) - (x->edge < y->edge);
}

/* The synapses bmtk places at run time, as BioNet draws them: per target cell a stream
 * RandomState(its bmtk gid), its edges in BioNet's order (edges between cells first, then
 * those from virtual nodes; by edge population, then edge), each edge's nsyns segments drawn
 * by RandomState.choice among the targeted sections' segments, weighted by their length
 * within distance_range (bmtk's Morphology.find_sections), the synapse at the segment's
 * centre. */
static int placements_draw(circuit_t *c)
{
    if (c->n_placements > 1)
        qsort(c->placements, c->n_placements, sizeof *c->placements, compare_placement);
    mt19937_t rng;
    double *w = NULL, *cdf = NULL;
    int *seg_sec = NULL;
    double *seg_x = NULL;
    size_t cap = 0;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < c->n_placements; k++) {
        const struct placement *pl = &c->placements[k];
        const pop_t *tp = &c->pops[pl->tpop], *sp = &c->pops[pl->spop];
        if (k == 0 || pl->tpop != c->placements[k - 1].tpop || pl->trg != c->placements[k - 1].trg)
            mt_seed(&rng, (uint32_t)(tp->bmtk_gid + (uint64_t)pl->trg));
        const char *morph = json_string_value(json_object_get(tp->cells[pl->trg], "morphology"));
        const struct morph_order *o = NULL;
        if (morph_order(c, morph, &o) || !o) {
            rc = 1;
            break;
        }
        if (!o->soma_root) {
            rc = cli_fail("run", "%s edge %ld to %s node %ld: %s's root is not soma[0]; expected "
                          "a soma at the root to measure distance_range from", sp->name, pl->edge,
                          tp->name, pl->trg, morph);
            break;
        }
        size_t n = 0;
        for (int id = 0; id < o->n; id++) { /* the candidate segments, in NEURON's order */
            const double len = o->length[id];
            const int nseg = (int)(1.0 + 2.0 * floor(len / (2.0 * c->dl_um)));
            for (int j = 0; j < nseg; j++) {
                if (n + 1 > cap) {
                    cap = cap ? 2 * cap : 256;
                    double *w2 = realloc(w, cap * sizeof *w2);
                    if (w2) w = w2;
                    double *c2 = w2 ? realloc(cdf, cap * sizeof *c2) : NULL;
                    if (c2) cdf = c2;
                    double *x2 = c2 ? realloc(seg_x, cap * sizeof *x2) : NULL;
                    if (x2) seg_x = x2;
                    int *s2 = x2 ? realloc(seg_sec, cap * sizeof *s2) : NULL;
                    if (!s2) {
                        rc = fail_oom();
                        break;
                    }
                    seg_sec = s2;
                }
                if (!(o->type[id] < 32 && (pl->labels >> o->type[id]) & 1u)) continue;
                const double x = (2.0 * j + 1.0) / (2.0 * nseg), seg_len = len / nseg;
                const double dist = o->dist0[id] + x * len;
                const double d0 = dist - seg_len / 2.0, d1 = dist + seg_len / 2.0;
                const double frac = fmax(0.0, fmin(d1, pl->dmax) - fmax(d0, pl->dmin)) / seg_len;
                if (!(frac > 0.0)) continue;
                w[n] = seg_len * frac;
                seg_sec[n] = o->section[id];
                seg_x[n] = x;
                n++;
            }
            if (rc) break;
        }
        if (rc) break;
        if (n == 0) continue; /* bmtk: a warning, and no synapse */
        const double total = numpy_sum(w, n);
        double acc = 0.0;
        for (size_t i = 0; i < n; i++) cdf[i] = acc += w[i] / total;
        const double last = cdf[n - 1];
        for (size_t i = 0; i < n; i++) cdf[i] /= last;
        for (int q = 0; q < pl->nsyns; q++) {
            const double u = mt_double(&rng);
            size_t lo = 0, hi = n; /* searchsorted(side="right"): the first cdf > u */
            while (lo < hi) {
                const size_t mid = lo + (hi - lo) / 2;
                if (cdf[mid] <= u) lo = mid + 1;
                else hi = mid;
            }
            if (lo >= n) lo = n - 1;
            add_synapse(c, sp, pl->src, tp, pl->trg, pl->synapse, seg_sec[lo], seg_x[lo],
                        pl->weight, pl->delay);
        }
    }
    free(w);
    free(cdf);
    free(seg_sec);
    free(seg_x);
    return rc;
}

static int read_edge_population(circuit_t *c, hid_t h5, const char *epath, csv_t *types,
                                const char *name)
{
    pop_t e;
    memset(&e, 0, sizeof e);
    snprintf(e.name, sizeof e.name, "%s", name);
    snprintf(e.file, sizeof e.file, "%s", epath);
    snprintf(e.base, sizeof e.base, "/edges/%s", name);
    e.h5 = h5;
    e.types = types;
    char path[1024], src_pop[256], trg_pop[256];
    int64_t *src = NULL, *trg = NULL;
    char **model = NULL, **dyn = NULL, **w = NULL, **delay = NULL, **sid = NULL, **spos = NULL,
         **wfn = NULL, **nsyns = NULL, **tsec = NULL, **drange = NULL;
    const int edge_pop = c->n_edge_pops++;
    int rc = population_ids(&e, "edge_type_id");
    snprintf(path, sizeof path, "%s/source_node_id", e.base);
    if (rc == 0) rc = h5_ids(h5, epath, path, e.n, &src, NULL) ||
                      h5_string_attribute(h5, epath, path, "node_population", src_pop,
                                          sizeof src_pop);
    snprintf(path, sizeof path, "%s/target_node_id", e.base);
    if (rc == 0) rc = h5_ids(h5, epath, path, e.n, &trg, NULL) ||
                      h5_string_attribute(h5, epath, path, "node_population", trg_pop,
                                          sizeof trg_pop);
    pop_t *sp = rc ? NULL : find_pop(c, src_pop), *tp = rc ? NULL : find_pop(c, trg_pop);
    if (rc == 0 && (!sp || !tp))
        rc = cli_fail("run", "%s: %s/%s_node_id: node_population \"%s\" is not among the "
                      "circuit's node populations; expected one of networks.nodes", epath,
                      e.base, sp ? "target" : "source", sp ? trg_pop : src_pop);
    if (rc == 0 && tp->kind != KIND_CELL)
        rc = cli_fail("run", "%s: %s: targets population %s, which is virtual; expected "
                      "biophysical targets", epath, e.base, tp->name);
    int found, has_sid, has_pos;
    if (rc == 0)
        rc = column(&e, "model_template", &model, &found) ||
             column(&e, "dynamics_params", &dyn, &found) ||
             column(&e, "syn_weight", &w, &found) || column(&e, "delay", &delay, &found) ||
             column(&e, "weight_function", &wfn, &found) || column(&e, "nsyns", &nsyns, &found) ||
             column(&e, "target_sections", &tsec, &found) ||
             column(&e, "distance_range", &drange, &found);
    if (rc == 0) {
        rc = column(&e, "afferent_section_id", &sid, &has_sid) ||
             column(&e, "afferent_section_pos", &spos, &has_pos);
        if (rc == 0 && !has_sid) {
            free_strings(sid, e.n);
            rc = column(&e, "sec_id", &sid, &has_sid);
        }
        if (rc == 0 && !has_pos) {
            free_strings(spos, e.n);
            rc = column(&e, "sec_x", &spos, &has_pos);
        }
    }
    for (long k = 0; rc == 0 && k < e.n; k++) {
        char where[PATH_MAX_ + 1024];
        if (snprintf(where, sizeof where, "%s: %s edge %ld", epath, e.base, k) < 0) where[0] = '\0';
        if ((int64_t)src[k] >= sp->n || (int64_t)trg[k] >= tp->n) {
            rc = cli_fail("run", "%s: %s_node_id %lld; expected a node id of population %s "
                          "(0 to %ld)", where, (int64_t)src[k] >= sp->n ? "source" : "target",
                          (long long)((int64_t)src[k] >= sp->n ? src[k] : trg[k]),
                          (int64_t)src[k] >= sp->n ? sp->name : tp->name,
                          ((int64_t)src[k] >= sp->n ? sp->n : tp->n) - 1);
            break;
        }
        double weight, d, pos, secd, ns = 1;
        if (!number_in(w[k], &weight) || !number_in(delay[k], &d)) {
            rc = cli_fail("run", "%s: %s; expected numbers syn_weight [uS] and delay [ms] (the "
                          "edge's or its type's)", where, !number_in(w[k], &weight)
                          ? "no syn_weight" : "no delay");
            break;
        }
        if (wfn[k] && strcmp(wfn[k], "default_weight_fnc") && strcmp(wfn[k], "set_syn_weight")) {
            rc = cli_fail("run", "%s: weight_function \"%s\"; expected none, "
                          "\"default_weight_fnc\" or \"set_syn_weight\" (syn_weight as it is)",
                          where, wfn[k]);
            break;
        }
        if (nsyns[k] && (!number_in(nsyns[k], &ns) || ns != floor(ns) || ns < 0 || ns > 1e6)) {
            rc = cli_fail("run", "%s: nsyns \"%s\"; expected an integer from 0 to 1000000",
                          where, nsyns[k]);
            break;
        }
        if (ns < 1) continue; /* no synapse */
        if (sp->kind == KIND_VIRTUAL && !sp->has_input) continue; /* bmtk: not connected */
        if (!model[k] || !dyn[k]) {
            rc = cli_fail("run", "%s: no %s; expected the synapse's (the edge's or its type's)",
                          where, model[k] ? "dynamics_params" : "model_template");
            break;
        }
        json_t *st;
        if (synapse_template(c, model[k], dyn[k], where, &st)) {
            rc = 1;
            break;
        }
        if (!number_in(sid[k], &secd) || !number_in(spos[k], &pos)) {
            /* bmtk's placement at run time: drawn once all edges are read */
            char items[8][32];
            const int nl = tsec[k] ? list_items(tsec[k], items) : 0;
            unsigned labels = 0;
            for (int q = 0; q < nl; q++) {
                static const char *const names[] = {"soma", "somatic", "axon", "axonal", "dend",
                                                    "basal", "apic", "apical"};
                int t = -1;
                for (int u = 0; u < 8; u++)
                    if (!strcmp(items[q], names[u])) t = 1 + u / 2;
                if (t < 0) {
                    rc = cli_fail("run", "%s: target_sections \"%s\": \"%s\"; expected soma, "
                                  "axon, dend, apic (or bmtk's somatic, axonal, basal, apical)",
                                  where, tsec[k], items[q]);
                    break;
                }
                labels |= 1u << t;
            }
            if (rc) break;
            char ditems[8][32];
            double dmin = 0, dmax = 0;
            if (!nl || !drange[k] || list_items(drange[k], ditems) != 2 ||
                !number_in(ditems[0], &dmin) || !number_in(ditems[1], &dmax)) {
                rc = cli_fail("run", "%s: no afferent_section_id and afferent_section_pos (or "
                              "bmtk's sec_id, sec_x), nor target_sections and distance_range "
                              "[min, max]; expected one or the other", where);
                break;
            }
            struct placement *grown = realloc(c->placements, (c->n_placements + 1) * sizeof *grown);
            if (!grown) {
                rc = fail_oom();
                break;
            }
            c->placements = grown;
            c->placements[c->n_placements++] = (struct placement){
                (int)(tp - c->pops), (int)(sp - c->pops), (long)trg[k], (long)src[k], k,
                sp->kind == KIND_VIRTUAL, edge_pop, (int)ns, labels, dmin, dmax, weight, d, st};
            continue;
        }
        json_t *cell = tp->cells[trg[k]];
        const struct morph_order *order = NULL;
        if (morph_order(c, json_string_value(json_object_get(cell, "morphology")), &order) || !order) {
            rc = 1;
            break;
        }
        if (!(secd >= 0.0 && secd < order->n && secd == floor(secd)) || !(pos >= 0.0 && pos <= 1.0)) {
            rc = cli_fail("run", "%s: afferent_section_id %g, afferent_section_pos %g; expected a "
                          "section id from 0 to %d (NEURON's sections of %s) and a position from "
                          "0 to 1", where, secd, pos, order->n - 1,
                          json_string_value(json_object_get(cell, "morphology")));
            break;
        }
        add_synapse(c, sp, (long)src[k], tp, (long)trg[k], st, order->section[(int)secd], pos,
                    weight, d);
    }
    free(src);
    free(trg);
    free_strings(model, e.n);
    free_strings(dyn, e.n);
    free_strings(w, e.n);
    free_strings(delay, e.n);
    free_strings(sid, e.n);
    free_strings(spos, e.n);
    free_strings(wfn, e.n);
    free_strings(nsyns, e.n);
    free_strings(tsec, e.n);
    free_strings(drange, e.n);
    free(e.type_id);
    free(e.group_id);
    free(e.group_index);
    return rc;
}

static int read_edges(circuit_t *c, const json_t *entry, size_t index)
{
    char key[128];
    snprintf(key, sizeof key, "networks.edges[%zu]", index);
    const char *ef = json_string_value(json_object_get(entry, "edges_file"));
    const char *tf = json_string_value(json_object_get(entry, "edge_types_file"));
    if (!ef || !tf)
        return cli_fail("run", "%s: %s: expected \"edges_file\" and \"edge_types_file\" (paths)",
                        c->circ.file, key);
    char epath[PATH_MAX_], tpath[PATH_MAX_];
    if (config_path(&c->circ, key, ef, epath, sizeof epath) ||
        config_path(&c->circ, key, tf, tpath, sizeof tpath))
        return 1;
    csv_t *types;
    if (csv_load(tpath, "edge_type_id", &types)) return 1;
    hid_t h5 = h5_open(epath);
    char **names = NULL;
    int n_names = 0;
    int rc = h5 < 0 || h5_members(h5, epath, "/edges", &names, &n_names);
    for (int q = 0; rc == 0 && q < n_names; q++)
        rc = read_edge_population(c, h5, epath, types, names[q]);
    free_strings(names, n_names);
    if (h5 >= 0) H5Fclose(h5);
    csv_free(types);
    return rc;
}

/* ---- inputs: spike trains of virtual nodes ---- */

static int read_iclamp(circuit_t *c, const char *key, const json_t *in);

static int read_spikes(circuit_t *c, const char *name, const json_t *in)
{
    char key[300];
    snprintf(key, sizeof key, "inputs.%s", name);
    const char *type = json_string_value(json_object_get(in, "input_type"));
    const char *module = json_string_value(json_object_get(in, "module"));
    const char *file = json_string_value(json_object_get(in, "input_file"));
    const char *set = json_string_value(json_object_get(in, "node_set"));
    if (type && !strcmp(type, "current_clamp")) return read_iclamp(c, key, in);
    if (!type || strcmp(type, "spikes"))
        return cli_fail("run", "%s: %s.input_type: \"%s\"; expected \"spikes\" (spike trains of "
                        "virtual nodes) or \"current_clamp\" (other inputs are not read)",
                        c->sim.file, key, type ? type : "(none)");
    if (module && strcmp(module, "h5") && strcmp(module, "sonata"))
        return cli_fail("run", "%s: %s.module: \"%s\"; expected \"h5\" or \"sonata\" (a SONATA "
                        "spike file)", c->sim.file, key, module);
    if (!file || !set)
        return cli_fail("run", "%s: %s: expected \"input_file\" and \"node_set\"", c->sim.file,
                        key);
    char path[PATH_MAX_];
    if (config_path(&c->sim, key, file, path, sizeof path)) return 1;
    unsigned char **masks;
    if (node_set(c, set, &masks)) return 1;
    for (int q = 0; q < c->n_pops; q++) /* bmtk connects the edges of these populations */
        for (long k = 0; k < c->pops[q].n && !c->pops[q].has_input; k++)
            c->pops[q].has_input = masks[q][k];
    hid_t h5 = h5_open(path);
    char **pops = NULL;
    int n_pops = 0;
    int rc = h5 < 0 || h5_members(h5, path, "/spikes", &pops, &n_pops);
    for (int q = 0; rc == 0 && q < n_pops; q++) {
        char tp[1024], ip[1024];
        snprintf(tp, sizeof tp, "/spikes/%s/timestamps", pops[q]);
        snprintf(ip, sizeof ip, "/spikes/%s/node_ids", pops[q]);
        pop_t *p = find_pop(c, pops[q]);
        if (!h5_exists(h5, tp)) { /* bmtk's older layout: /spikes/{timestamps, gids} */
            if (!strcmp(pops[q], "timestamps") || !strcmp(pops[q], "gids")) {
                rc = cli_fail("run", "%s: /spikes/timestamps: the old layout without "
                              "populations; expected /spikes/<population>/{timestamps, "
                              "node_ids}", path);
                break;
            }
        }
        if (!p) {
            rc = cli_fail("run", "%s: /spikes/%s: no node population \"%s\" in the circuit; "
                          "expected a virtual population's name", path, pops[q], pops[q]);
            break;
        }
        double *t = NULL;
        int64_t *ids = NULL;
        long n = 0, m = 0;
        rc = h5_doubles(h5, path, tp, &t, &n) || h5_ids(h5, path, ip, n, &ids, &m);
        double scale = 1.0;
        char units[32] = "";
        if (rc == 0) {
            hid_t d = H5Dopen2(h5, tp, H5P_DEFAULT);
            if (d >= 0 && H5Aexists(d, "units") > 0) {
                H5Dclose(d);
                if (h5_string_attribute(h5, path, tp, "units", units, sizeof units)) rc = 1;
                else if (!strcmp(units, "s")) scale = 1000.0;
                else if (strcmp(units, "ms"))
                    rc = cli_fail("run", "%s: %s: units \"%s\"; expected \"ms\" or \"s\"", path,
                                  tp, units);
            } else if (d >= 0) {
                H5Dclose(d);
            }
        }
        const int qp = (int)(p - c->pops);
        for (long k = 0; rc == 0 && k < n; k++) {
            if (ids[k] >= p->n) {
                rc = cli_fail("run", "%s: %s[%ld]: node %lld; expected a node id of population "
                              "%s (0 to %ld)", path, ip, k, (long long)ids[k], p->name, p->n - 1);
                break;
            }
            if (!masks[qp][ids[k]]) continue;
            if (p->kind != KIND_VIRTUAL) {
                rc = cli_fail("run", "%s: node set \"%s\" gives spikes to %s node %lld, which is "
                              "biophysical; expected virtual nodes", c->sim.file, set, p->name,
                              (long long)ids[k]);
                break;
            }
            const double time = t[k] * scale;
            if (!(time >= 0.0) || !isfinite(time)) {
                rc = cli_fail("run", "%s: %s[%ld]: %g; expected a time >= 0", path, tp, k, t[k]);
                break;
            }
            double *g = realloc(p->spikes[ids[k]], (size_t)(p->n_spikes[ids[k]] + 1) * sizeof *g);
            if (!g) {
                rc = fail_oom();
                break;
            }
            p->spikes[ids[k]] = g;
            g[p->n_spikes[ids[k]]++] = time;
        }
        free(t);
        free(ids);
    }
    free_strings(pops, n_pops);
    if (h5 >= 0) H5Fclose(h5);
    masks_free(c, masks);
    return rc;
}

/* ---- inputs: current clamps (bmtk's IClamp module) ---- */

/* obj[key]: a number or a list of numbers, into *out (n values). */
static int number_list(const circuit_t *c, const char *at, const json_t *obj, const char *key,
                       double **out, size_t *n)
{
    const json_t *v = json_object_get(obj, key);
    *out = NULL;
    *n = json_is_array(v) ? json_array_size(v) : 1;
    double *d = malloc((*n + 1) * sizeof *d);
    if (!d) return fail_oom();
    int ok = v != NULL;
    for (size_t k = 0; ok && k < *n; k++)
        ok = number_of(json_is_array(v) ? json_array_get(v, k) : v, &d[k]);
    if (!ok) {
        free(d);
        return cli_fail("run", "%s: %s.%s: expected a number or a list of numbers", c->sim.file,
                        at, key);
    }
    *out = d;
    return 0;
}

static int read_iclamp(circuit_t *c, const char *key, const json_t *in)
{
    const char *module = json_string_value(json_object_get(in, "module"));
    const char *set = json_string_value(json_object_get(in, "node_set"));
    const json_t *sname = json_object_get(in, "section_name");
    const json_t *sindex = json_object_get(in, "section_index");
    const char *name = sname ? json_string_value(sname) : "soma";
    double dist = 0.5, index = 0.0;
    if (!module || strcmp(module, "IClamp"))
        return cli_fail("run", "%s: %s.module: \"%s\"; expected \"IClamp\" (amp, delay and "
                        "duration in the config)", c->sim.file, key, module ? module : "(none)");
    if (!set) return cli_fail("run", "%s: %s: expected \"node_set\"", c->sim.file, key);
    if (!name || region_of(name) < 0)
        return cli_fail("run", "%s: %s.section_name: expected \"soma\", \"axon\", \"dend\" or "
                        "\"apic\"", c->sim.file, key);
    if (sindex && !(number_of(sindex, &index) && index >= 0 && index == floor(index)))
        return cli_fail("run", "%s: %s.section_index: expected an index >= 0 (a distance range "
                        "is bmtk's random choice, not read)", c->sim.file, key);
    if (json_object_get(in, "section_dist") &&
        !(number_of(json_object_get(in, "section_dist"), &dist) && dist >= 0 && dist <= 1))
        return cli_fail("run", "%s: %s.section_dist: expected a position from 0 to 1",
                        c->sim.file, key);
    double *amp = NULL, *del = NULL, *dur = NULL;
    size_t na = 0, nd = 0, nu = 0;
    int rc = number_list(c, key, in, "amp", &amp, &na) || number_list(c, key, in, "delay", &del, &nd) ||
             number_list(c, key, in, "duration", &dur, &nu);
    if (rc == 0 && (na != nd || nd != nu))
        rc = cli_fail("run", "%s: %s: %zu amp, %zu delay and %zu duration values; expected as "
                      "many of each", c->sim.file, key, na, nd, nu);
    unsigned char **masks = NULL;
    if (rc == 0) rc = node_set(c, set, &masks);
    const int type = region_of(name);
    for (int q = 0; rc == 0 && q < c->n_pops; q++) {
        pop_t *p = &c->pops[q];
        for (long k = 0; rc == 0 && k < p->n; k++) {
            if (!masks[q][k] || p->kind != KIND_CELL) continue;
            const struct morph_order *o = NULL;
            const char *morph = json_string_value(json_object_get(p->cells[k], "morphology"));
            if (morph_order(c, morph, &o) || !o) {
                rc = 1;
                break;
            }
            int section = -1, seen = 0;
            for (int s = 0; s < o->n && section < 0; s++)
                if (o->type[s] == type && seen++ == (int)index) section = o->section[s];
            if (section < 0) {
                rc = cli_fail("run", "%s: %s: %s[%g] of %s node %ld: no such section (%d %s "
                              "sections in %s)", c->sim.file, key, name, index, p->name, k, seen,
                              name, morph);
                break;
            }
            json_t *stim = json_object_get(p->cells[k], "stimuli");
            if (!stim) {
                stim = json_array();
                json_object_set_new(p->cells[k], "stimuli", stim);
            }
            for (size_t j = 0; j < na; j++)
                json_array_append_new(stim, json_pack("{s:s,s:{s:i,s:f},s:f,s:f,s:f}", "type",
                                                      "iclamp", "at", "section", section, "x",
                                                      dist, "del", del[j], "dur", dur[j], "amp",
                                                      amp[j]));
        }
    }
    if (masks) masks_free(c, masks);
    free(amp);
    free(del);
    free(dur);
    return rc;
}

/* ---- reports: one membrane report as the network's "record" ---- */

static int read_report(circuit_t *c, const char *name, const json_t *r, json_t *doc)
{
    char key[300];
    snprintf(key, sizeof key, "reports.%s", name);
    const char *module = json_string_value(json_object_get(r, "module"));
    const char *var = json_string_value(json_object_get(r, "variable_name"));
    const char *cells = json_string_value(json_object_get(r, "cells"));
    const char *secs = json_string_value(json_object_get(r, "sections"));
    if (!module || strcmp(module, "membrane_report"))
        return cli_fail("run", "%s: %s.module: \"%s\"; expected \"membrane_report\"", c->sim.file,
                        key, module ? module : "(none)");
    if (!var || !cells)
        return cli_fail("run", "%s: %s: expected \"variable_name\" and \"cells\" (a node set)",
                        c->sim.file, key);
    if (secs && strcmp(secs, "soma"))
        return cli_fail("run", "%s: %s.sections: \"%s\"; expected \"soma\"", c->sim.file, key,
                        secs);
    if (json_object_get(doc, "record"))
        return cli_fail("run", "%s: %s: a second report; expected one (a network's \"record\")",
                        c->sim.file, key);
    unsigned char **masks;
    if (node_set(c, cells, &masks)) return 1;
    json_t *gids = json_array();
    for (int q = 0; q < c->n_pops; q++)
        for (long k = 0; k < c->pops[q].n; k++)
            if (masks[q][k] && c->pops[q].kind == KIND_CELL)
                json_array_append_new(gids, json_integer(c->pops[q].first_gid + (json_int_t)k));
    masks_free(c, masks);
    double sample = c->dt_ms;
    number_of(json_object_get(r, "dt"), &sample);
    json_object_set_new(doc, "record", json_pack("{s:o,s:[s],s:[s],s:f}", "gids", gids,
                                                 "locations", "soma", "variables", var,
                                                 "sample_dt", sample));
    return 0;
}

/* ---- the whole ---- */

static void circuit_free(circuit_t *c)
{
    for (int q = 0; q < c->n_pops; q++) {
        pop_t *p = &c->pops[q];
        if (p->types && (q == 0 || c->pops[q - 1].types != p->types)) csv_free(p->types);
        if (p->h5 >= 0 && (q == 0 || c->pops[q - 1].h5 != p->h5)) H5Fclose(p->h5);
        free(p->type_id);
        free(p->group_id);
        free(p->group_index);
        for (long k = 0; p->cells && k < p->n; k++) json_decref(p->cells[k]);
        free(p->cells);
        for (long k = 0; p->spikes && k < p->n; k++) free(p->spikes[k]);
        free(p->spikes);
        free(p->n_spikes);
    }
    free(c->pops);
    for (int k = 0; k < c->n_orders; k++) {
        free(c->orders[k].section);
        free(c->orders[k].type);
        free(c->orders[k].length);
        free(c->orders[k].dist0);
    }
    free(c->placements);
    free(c->orders);
    json_decref(c->circ_root);
    json_decref(c->node_sets);
    json_decref(c->models);
    json_decref(c->synapses);
    json_decref(c->connections);
    json_decref(c->events);
}

static int run_number(const circuit_t *c, const json_t *obj, const char *section, const char *key,
                      double fallback, double *out)
{
    const json_t *v = json_object_get(obj, key);
    *out = fallback;
    if (!v) return 0;
    if (!json_is_number(v))
        return cli_fail("run", "%s: %s.%s: expected a number", c->sim.file, section, key);
    *out = json_number_value(v);
    return 0;
}

static int load(circuit_t *c, const char *path, const json_t *root, json_t *doc)
{
    c->file = path;
    c->sim_root = root;
    config_init(&c->sim, path, root);
    const json_t *circ = root;
    const json_t *net = json_object_get(root, "network");
    if (json_is_string(net)) { /* a simulation config naming its circuit */
        if (config_path(&c->sim, "network", json_string_value(net), c->circ_path,
                        sizeof c->circ_path) ||
            load_json(c->circ_path, &c->circ_root))
            return 1;
        circ = c->circ_root;
        config_init(&c->circ, c->circ_path, circ);
    } else {
        c->circ = c->sim;
    }
    const json_t *networks = json_object_get(circ, "networks");
    if (!json_is_object(networks))
        return cli_fail("run", "%s: networks: missing; expected {\"nodes\": [...], \"edges\": "
                        "[...]}", c->circ.file);
    /* run and conditions */
    const json_t *run = json_object_get(root, "run"), *cond = json_object_get(root, "conditions");
    double tstop, tstart, v_init, celsius;
    if (!json_is_object(run) || !json_is_number(json_object_get(run, "tstop")))
        return cli_fail("run", "%s: run.tstop: missing; expected the run's end [ms] (a "
                        "simulation config's \"run\": {\"tstop\", \"dt\"})", c->sim.file);
    if (run_number(c, run, "run", "tstop", 0, &tstop) ||
        run_number(c, run, "run", "tstart", 0, &tstart) ||
        run_number(c, run, "run", "dt", 0.1, &c->dt_ms) ||
        run_number(c, run, "run", "dL", 20.0, &c->dl_um) ||
        run_number(c, run, "run", "spike_threshold", -15.0, &c->threshold_mv) ||
        run_number(c, cond, "conditions", "v_init", -65.0, &v_init) ||
        run_number(c, cond, "conditions", "celsius", 6.3, &celsius))
        return 1;
    if (tstart != 0.0)
        return cli_fail("run", "%s: run.tstart: %g; expected 0", c->sim.file, tstart);
    if (!(c->dl_um > 0.0))
        return cli_fail("run", "%s: run.dL: %g; expected a length > 0 [um]", c->sim.file, c->dl_um);
    json_object_set_new(doc, "t_stop", json_real(tstop));
    json_object_set_new(doc, "dt", json_real(c->dt_ms));
    json_object_set_new(doc, "v_init", json_real(v_init));
    json_object_set_new(doc, "celsius", json_real(celsius));
    /* components */
    const json_t *comp = json_object_get(circ, "components");
    char morph_dir[PATH_MAX_] = "", models_dir[PATH_MAX_] = "";
    const char *s;
    if ((s = json_string_value(json_object_get(comp, "morphologies_dir"))) &&
        config_path(&c->circ, "components.morphologies_dir", s, morph_dir, sizeof morph_dir))
        return 1;
    if ((s = json_string_value(json_object_get(comp, "biophysical_neuron_models_dir"))) &&
        config_path(&c->circ, "components.biophysical_neuron_models_dir", s, models_dir,
                    sizeof models_dir))
        return 1;
    if ((s = json_string_value(json_object_get(comp, "synaptic_models_dir"))) &&
        config_path(&c->circ, "components.synaptic_models_dir", s, c->syn_dir, sizeof c->syn_dir))
        return 1;
    c->models = json_object();
    c->synapses = json_object();
    c->connections = json_array();
    c->events = json_array();
    /* node sets: the simulation's file, else the circuit's; inline ones added */
    const json_t *nsf = json_object_get(root, "node_sets_file");
    const config_t *nsc = &c->sim;
    if (!nsf) {
        nsf = json_object_get(circ, "node_sets_file");
        nsc = &c->circ;
    }
    if (json_is_string(nsf)) {
        if (config_path(nsc, "node_sets_file", json_string_value(nsf), c->node_sets_file,
                        sizeof c->node_sets_file) ||
            load_json(c->node_sets_file, &c->node_sets))
            return 1;
        if (!json_is_object(c->node_sets))
            return cli_fail("run", "%s: expected an object of node sets", c->node_sets_file);
    } else {
        c->node_sets = json_object();
    }
    if (json_is_object(json_object_get(root, "node_sets")))
        json_object_update(c->node_sets, json_object_get(root, "node_sets"));
    /* nodes */
    const json_t *nodes = json_object_get(networks, "nodes"), *edges = json_object_get(networks, "edges");
    if (!json_is_array(nodes) || json_array_size(nodes) == 0)
        return cli_fail("run", "%s: networks.nodes: expected a non-empty list of {\"nodes_file\", "
                        "\"node_types_file\"}", c->circ.file);
    size_t i;
    const json_t *e;
    json_array_foreach(nodes, i, e) if (read_nodes(c, e, i, morph_dir, models_dir)) return 1;
    if (c->n_gids == 0)
        return cli_fail("run", "%s: networks.nodes: no biophysical node; expected at least one "
                        "cell", c->circ.file);
    /* inputs before edges: an edge from a virtual node carries its spikes */
    const char *key;
    const json_t *in;
    json_object_foreach((json_t *)json_object_get(root, "inputs"), key, in)
        if (read_spikes(c, key, in)) return 1;
    if (edges && !json_is_array(edges))
        return cli_fail("run", "%s: networks.edges: expected a list", c->circ.file);
    json_array_foreach(edges, i, e) if (read_edges(c, e, i)) return 1;
    if (placements_draw(c)) return 1;
    /* the document */
    json_t *cells = json_array();
    for (int q = 0; q < c->n_pops; q++)
        for (long k = 0; c->pops[q].cells && k < c->pops[q].n; k++)
            json_array_append(cells, c->pops[q].cells[k]);
    json_object_set_new(doc, "cells", cells);
    json_object_set_new(doc, "network", json_pack("{s:O,s:O}", "connections", c->connections,
                                                  "events", c->events));
    json_object_foreach((json_t *)json_object_get(root, "reports"), key, in)
        if (read_report(c, key, in, doc)) return 1;
    return 0;
}

int cli_circuit_load(const char *path, const json_t *root, json_t **network, char *population,
                     size_t population_size)
{
    circuit_t c;
    memset(&c, 0, sizeof c);
    json_t *doc = json_object();
    *network = NULL;
    int rc = doc ? load(&c, path, root, doc) : fail_oom();
    if (rc == 0) {
        int cells = 0;
        const char *one = "default";
        for (int q = 0; q < c.n_pops; q++)
            if (c.pops[q].kind == KIND_CELL) {
                cells++;
                one = c.pops[q].name;
            }
        snprintf(population, population_size, "%s", cells == 1 ? one : "default");
        *network = doc;
    } else {
        json_decref(doc);
    }
    circuit_free(&c);
    return rc;
}
