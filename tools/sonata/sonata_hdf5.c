/* SONATA spike files with HDF5 (tools/sonata/sonata.h; the SONATA spike format:
 * /spikes/<population>/{timestamps, node_ids} and the group's "sorting" attribute). */
#include <hdf5.h>

#include "cli.h"
#include "sonata/sonata.h"

int cli_sonata_available(void) { return 1; }

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

int cli_sonata_write_spikes(const char *path, const char *population, size_t n,
                            const uint64_t *node_ids, const double *times_ms)
{
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* our message, not HDF5's error stack */
    hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (file < 0) return cli_fail("run", "%s: cannot create the HDF5 file", path);
    hid_t spikes = H5Gcreate2(file, "spikes", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
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
