/* SONATA spike and report files with HDF5 (tools/sonata/sonata.h; the SONATA developer guide's
 * "Output file formats": /spikes/<population>/{timestamps, node_ids} with the group's "sorting"
 * attribute, and the frame-oriented node element report /report/<population>/{data, mapping}
 * as libsonatareport writes it for NEURON and CoreNEURON). */
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "sonata/sonata.h"

int cli_sonata_available(void) { return 1; }

/* File access: HDF5's file locks, but a file system without locks (some NFS and Lustre
 * mounts) is no reason to fail. H5P_DEFAULT where the library predates the choice. */
static hid_t file_access(void)
{
#if H5_VERSION_GE(1, 10, 7)
    hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
    if (fapl >= 0 && H5Pset_file_locking(fapl, 1, 1) < 0) {
        H5Pclose(fapl);
        return H5P_DEFAULT;
    }
    return fapl < 0 ? H5P_DEFAULT : fapl;
#else
    return H5P_DEFAULT;
#endif
}

static void close_access(hid_t fapl)
{
    if (fapl != H5P_DEFAULT) H5Pclose(fapl);
}

/* A scalar attribute of `type` on `object`; 0 on success. */
static int put_attribute(hid_t object, const char *name, hid_t type, const void *value)
{
    hid_t space = H5Screate(H5S_SCALAR);
    hid_t attr = space < 0 ? -1 : H5Acreate2(object, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
    const int failed = attr < 0 || H5Awrite(attr, type, value) < 0;
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    return failed;
}

/* A 1-D dataset of n values; 0 on success. */
static int put_dataset(hid_t group, const char *name, hid_t file_type, hid_t memory_type,
                       size_t n, const void *data, hid_t *out)
{
    hsize_t dims[1] = {(hsize_t)n};
    hid_t space = H5Screate_simple(1, dims, NULL);
    hid_t set = space < 0 ? -1 : H5Dcreate2(group, name, file_type, space, H5P_DEFAULT,
                                            H5P_DEFAULT, H5P_DEFAULT);
    int failed = set < 0 || (n > 0 && H5Dwrite(set, memory_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0);
    if (space >= 0) H5Sclose(space);
    if (failed && set >= 0) H5Dclose(set);
    *out = failed ? -1 : set;
    return failed;
}

/* The attributes every SONATA HDF5 file carries at its root: magic 0x0A7A and the
 * specification's version {0, 1}; 0 on success. */
static int put_sonata_root(hid_t file)
{
    const uint32_t magic = 0x0A7A, version[2] = {0, 1};
    hsize_t two = 2;
    hid_t space = H5Screate_simple(1, &two, NULL);
    hid_t attr = space < 0 ? -1 : H5Acreate2(file, "version", H5T_STD_U32LE, space, H5P_DEFAULT,
                                             H5P_DEFAULT);
    int failed = attr < 0 || H5Awrite(attr, H5T_NATIVE_UINT32, version) < 0;
    if (attr >= 0) H5Aclose(attr);
    if (space >= 0) H5Sclose(space);
    return failed || put_attribute(file, "magic", H5T_STD_U32LE, &magic);
}

int cli_sonata_write_spikes(const char *path, const char *population, size_t n,
                            const uint64_t *node_ids, const double *times_ms)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our message, not HDF5's error stack */
    const hid_t fapl = file_access();
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    close_access(fapl);
    if (file < 0) return cli_fail("run", "%s: cannot create the HDF5 file", path);
    hid_t spikes = put_sonata_root(file) ? -1 : H5Gcreate2(file, "spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t pop = spikes < 0 ? -1 : H5Gcreate2(spikes, population, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t sorting = H5Tenum_create(H5T_NATIVE_UINT8), text = H5Tcopy(H5T_C_S1);
    hid_t times = -1, ids = -1;
    const uint8_t none = 0, by_id = 1, by_time = 2;
    int failed = pop < 0 || sorting < 0 || text < 0 || H5Tenum_insert(sorting, "none", &none) < 0 ||
                 H5Tenum_insert(sorting, "by_id", &by_id) < 0 ||
                 H5Tenum_insert(sorting, "by_time", &by_time) < 0 ||
                 put_attribute(pop, "sorting", sorting, &by_time) ||
                 put_dataset(pop, "timestamps", H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, n, times_ms, &times) ||
                 H5Tset_size(text, 2) < 0 || put_attribute(times, "units", text, "ms") ||
                 put_dataset(pop, "node_ids", H5T_STD_U64LE, H5T_NATIVE_UINT64, n, node_ids, &ids);
    if (ids >= 0) H5Dclose(ids);
    if (times >= 0) H5Dclose(times);
    if (text >= 0) H5Tclose(text);
    if (sorting >= 0) H5Tclose(sorting);
    if (pop >= 0) H5Gclose(pop);
    if (spikes >= 0) H5Gclose(spikes);
    if (H5Fclose(file) < 0) failed = 1;
    return failed ? cli_fail("run", "%s: cannot write the SONATA spikes", path) : 0;
}

/* ---- reports: traces.h5 */

struct cli_report {
    hid_t file, data, time;
    size_t n;          /* elements (columns) */
    long frames;       /* written so far */
    double start, dt;  /* [ms] */
    char path[4200];
};

/* A string attribute (variable length, UTF-8, as libsonatareport writes them); 0 on success. */
static int put_text(hid_t object, const char *name, const char *value)
{
    hid_t type = H5Tcopy(H5T_C_S1);
    const int failed = type < 0 || H5Tset_size(type, H5T_VARIABLE) < 0 ||
                       H5Tset_cset(type, H5T_CSET_UTF8) < 0 ||
                       put_attribute(object, name, type, &value);
    if (type >= 0) H5Tclose(type);
    return failed;
}

/* A 1-D dataset of n values, closed; 0 on success. */
static int put_array(hid_t group, const char *name, hid_t file_type, hid_t memory_type, size_t n,
                     const void *data)
{
    hid_t set;
    if (put_dataset(group, name, file_type, memory_type, n, data, &set)) return 1;
    return H5Dclose(set) < 0;
}

/* The time dataset's values for `frames` frames: {start, stop, dt}, stop open (no frame at it). */
static int write_time(cli_report_t *r)
{
    const double t[3] = {r->start, r->start + (double)r->frames * r->dt, r->dt};
    return H5Dwrite(r->time, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) < 0;
}

static cli_report_t *report_new(const char *path, size_t n)
{
    cli_report_t *r = calloc(1, sizeof *r);
    if (!r) return NULL;
    r->file = r->data = r->time = -1;
    r->n = n;
    snprintf(r->path, sizeof r->path, "%s", path);
    return r;
}

static void report_free(cli_report_t *r)
{
    if (!r) return;
    if (r->time >= 0) H5Dclose(r->time);
    if (r->data >= 0) H5Dclose(r->data);
    if (r->file >= 0) H5Fclose(r->file);
    free(r);
}

/* The mapping group: node ids, index pointers, element ids and names, time; 0 on success. */
static int put_mapping(cli_report_t *r, hid_t mapping, const uint64_t *gid,
                       const uint32_t *element_id, const char *const *names)
{
    const size_t n = r->n;
    uint64_t *nodes = malloc((n + 1) * sizeof *nodes), *pointers = malloc((n + 2) * sizeof *pointers);
    size_t count = 0;
    int failed = !nodes || !pointers;
    for (size_t k = 0; !failed && k < n; k++)
        if (k == 0 || gid[k] != gid[k - 1]) {
            pointers[count] = k;
            nodes[count++] = gid[k];
        }
    if (!failed) pointers[count] = n;
    hid_t ids = -1, names_type = H5Tcopy(H5T_C_S1);
    const uint8_t sorted = 1;
    failed = failed || names_type < 0 ||
             put_dataset(mapping, "node_ids", H5T_STD_U64LE, H5T_NATIVE_UINT64, count, nodes, &ids) ||
             put_attribute(ids, "sorted", H5T_STD_I8LE, &sorted) ||
             put_array(mapping, "index_pointers", H5T_STD_U64LE, H5T_NATIVE_UINT64, count + 1,
                       pointers) ||
             put_array(mapping, "element_ids", H5T_STD_U32LE, H5T_NATIVE_UINT32, n, element_id) ||
             H5Tset_size(names_type, H5T_VARIABLE) < 0 || H5Tset_cset(names_type, H5T_CSET_UTF8) < 0 ||
             put_array(mapping, "element_names", names_type, names_type, n, names);
    if (ids >= 0) H5Dclose(ids);
    if (names_type >= 0) H5Tclose(names_type);
    free(nodes);
    free(pointers);
    hsize_t three = 3;
    hid_t space = failed ? -1 : H5Screate_simple(1, &three, NULL);
    r->time = space < 0 ? -1 : H5Dcreate2(mapping, "time", H5T_IEEE_F64LE, space, H5P_DEFAULT,
                                          H5P_DEFAULT, H5P_DEFAULT);
    if (space >= 0) H5Sclose(space);
    return failed || r->time < 0 || write_time(r) || put_text(r->time, "units", "ms");
}

/* The data set: [0][n] frames, growing along the first dimension in chunks of 256 KiB at most
 * (65536 floats): a quarter of HDF5's default chunk cache, so a chunk that an append fills in
 * part stays there for the next. */
static hid_t create_data(hid_t pop, size_t n)
{
    const hsize_t cols = n == 0 ? 1 : n < 65536 ? n : 65536;
    hsize_t rows = 65536 / cols;
    if (rows < 1) rows = 1;
    if (rows > 4096) rows = 4096;
    hsize_t dims[2] = {0, n}, max[2] = {H5S_UNLIMITED, n == 0 ? H5S_UNLIMITED : n};
    hsize_t chunk[2] = {rows, cols};
    hid_t space = H5Screate_simple(2, dims, max), plist = H5Pcreate(H5P_DATASET_CREATE);
    hid_t set = space < 0 || plist < 0 || H5Pset_chunk(plist, 2, chunk) < 0
                    ? -1
                    : H5Dcreate2(pop, "data", H5T_IEEE_F32LE, space, H5P_DEFAULT, plist, H5P_DEFAULT);
    if (plist >= 0) H5Pclose(plist);
    if (space >= 0) H5Sclose(space);
    return set;
}

int cli_report_create(const char *path, const char *population, size_t n, const uint64_t *gid,
                      const uint32_t *element_id, const char *const *names, double start_ms,
                      double dt_ms, cli_report_t **out)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our message, not HDF5's error stack */
    *out = NULL;
    for (size_t k = 1; k < n; k++)
        if (gid[k] < gid[k - 1])
            return cli_fail("run", "%s: element %zu's gid %llu after %llu: expected gids in "
                            "increasing order", path, k, (unsigned long long)gid[k],
                            (unsigned long long)gid[k - 1]);
    cli_report_t *r = report_new(path, n);
    if (!r) return cli_fail("run", "out of memory");
    r->start = start_ms;
    r->dt = dt_ms;
    const hid_t fapl = file_access();
    r->file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
    close_access(fapl);
    if (r->file < 0) {
        report_free(r);
        return cli_fail("run", "%s: cannot create the HDF5 file", path);
    }
    hid_t report = put_sonata_root(r->file) ? -1 : H5Gcreate2(r->file, "report", H5P_DEFAULT,
                                                                H5P_DEFAULT, H5P_DEFAULT);
    hid_t pop = report < 0 ? -1 : H5Gcreate2(report, population, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    hid_t mapping = pop < 0 ? -1 : H5Gcreate2(pop, "mapping", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (mapping >= 0) r->data = create_data(pop, n);
    int failed = r->data < 0 || put_text(r->data, "units", "mV") ||
                 put_mapping(r, mapping, gid, element_id, names) ||
                 H5Fflush(r->file, H5F_SCOPE_LOCAL) < 0;
    if (mapping >= 0) H5Gclose(mapping);
    if (pop >= 0) H5Gclose(pop);
    if (report >= 0) H5Gclose(report);
    if (failed) {
        report_free(r);
        return cli_fail("run", "%s: cannot write the SONATA report", path);
    }
    *out = r;
    return 0;
}

int cli_report_set_units(cli_report_t *r, const char *population, const char *units,
                         const char *const *element_units)
{
    char where[512];
    snprintf(where, sizeof where, "report/%s/mapping", population);
    hid_t mapping = H5Gopen2(r->file, where, H5P_DEFAULT), type = H5Tcopy(H5T_C_S1);
    const int failed = mapping < 0 || type < 0 || H5Adelete(r->data, "units") < 0 ||
                       put_text(r->data, "units", units) || H5Tset_size(type, H5T_VARIABLE) < 0 ||
                       H5Tset_cset(type, H5T_CSET_UTF8) < 0 ||
                       put_array(mapping, "element_units", type, type, r->n, element_units) ||
                       H5Fflush(r->file, H5F_SCOPE_LOCAL) < 0;
    if (type >= 0) H5Tclose(type);
    if (mapping >= 0) H5Gclose(mapping);
    return failed ? cli_fail("run", "%s: cannot write the report's units", r->path) : 0;
}

int cli_report_reopen(const char *path, const char *population, size_t n, long frames,
                      cli_report_t **out)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    *out = NULL;
    cli_report_t *r = report_new(path, n);
    if (!r) return cli_fail("run", "out of memory");
    const hid_t fapl = file_access();
    r->file = H5Fopen(path, H5F_ACC_RDWR, fapl);
    close_access(fapl);
    if (r->file < 0) {
        report_free(r);
        return cli_fail("run", "%s: cannot open to continue it: not there, or not an HDF5 file "
                        "(a restart continues the outputs of the checkpointed run in the same "
                        "directory)", path);
    }
    char where[512];
    snprintf(where, sizeof where, "/report/%s/data", population);
    r->data = H5Dopen2(r->file, where, H5P_DEFAULT);
    snprintf(where, sizeof where, "/report/%s/mapping/time", population);
    r->time = r->data < 0 ? -1 : H5Dopen2(r->file, where, H5P_DEFAULT);
    hid_t space = r->data < 0 ? -1 : H5Dget_space(r->data);
    hsize_t dims[2] = {0, 0};
    double t[3] = {0, 0, 0};
    const int layout = r->time >= 0 && space >= 0 && H5Sget_simple_extent_ndims(space) == 2 &&
                       H5Sget_simple_extent_dims(space, dims, NULL) == 2 &&
                       H5Dread(r->time, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, t) >= 0;
    if (space >= 0) H5Sclose(space);
    int rc = 0;
    if (!layout)
        rc = cli_fail("run", "%s: expected a SONATA report with /report/%s/data and "
                      "mapping/time (the traces.h5 of the checkpointed run)", path, population);
    else if (dims[1] != n)
        rc = cli_fail("run", "%s: a report of %llu elements; this run has %zu probes", path,
                      (unsigned long long)dims[1], n);
    else if (dims[0] < (hsize_t)frames)
        rc = cli_fail("run", "%s: %llu samples; the checkpoint's run had written %ld: expected "
                      "the outputs of the checkpointed run", path, (unsigned long long)dims[0],
                      frames);
    if (rc == 0) {
        const hsize_t cut[2] = {(hsize_t)frames, n};
        r->start = t[0];
        r->dt = t[2];
        r->frames = frames;
        if (H5Dset_extent(r->data, cut) < 0 || write_time(r) || H5Fflush(r->file, H5F_SCOPE_LOCAL) < 0)
            rc = cli_fail("run", "%s: cannot cut back to %ld samples", path, frames);
    }
    if (rc != 0) {
        report_free(r);
        return rc;
    }
    *out = r;
    return 0;
}

int cli_report_append(cli_report_t *r, size_t rows, const float *frames)
{
    if (rows == 0) return 0;
    const hsize_t start[2] = {(hsize_t)r->frames, 0}, count[2] = {rows, r->n};
    const hsize_t size[2] = {(hsize_t)r->frames + rows, r->n};
    int failed = H5Dset_extent(r->data, size) < 0;
    if (!failed && r->n > 0) {
        hid_t file_space = H5Dget_space(r->data), memory = H5Screate_simple(2, count, NULL);
        failed = file_space < 0 || memory < 0 ||
                 H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
                 H5Dwrite(r->data, H5T_NATIVE_FLOAT, memory, file_space, H5P_DEFAULT, frames) < 0;
        if (memory >= 0) H5Sclose(memory);
        if (file_space >= 0) H5Sclose(file_space);
    }
    if (!failed) r->frames += (long)rows;
    if (failed || write_time(r) || H5Fflush(r->file, H5F_SCOPE_LOCAL) < 0)
        return cli_fail("run", "%s: cannot write the SONATA report", r->path);
    return 0;
}

int cli_report_close(cli_report_t *r)
{
    if (!r) return 0;
    int failed = H5Dclose(r->time) < 0;
    failed |= H5Dclose(r->data) < 0;
    r->time = r->data = -1;
    failed |= H5Fclose(r->file) < 0;
    r->file = -1;
    char path[sizeof r->path];
    memcpy(path, r->path, sizeof path);
    report_free(r);
    return failed ? cli_fail("run", "%s: cannot write the SONATA report", path) : 0;
}
