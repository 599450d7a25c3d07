/* SONATA files in a build without HDF5: the options say so before a run (tools/sonata/sonata.h;
 * these refuse all the same). */
#include "cli.h"
#include "sonata/sonata.h"

int cli_sonata_available(void) { return 0; }

int cli_sonata_write_spikes(const char *path, const char *population, size_t n,
                            const uint64_t *node_ids, const double *times_ms)
{
    (void)population;
    (void)n;
    (void)node_ids;
    (void)times_ms;
    return cli_fail("run", "%s: this build has no HDF5 (Debian: libhdf5-dev, then configure "
                    "again)", path);
}

static int no_hdf5(const char *path)
{
    return cli_fail("run", "%s: this build has no HDF5 (Debian: libhdf5-dev, then configure "
                    "again)", path);
}

int cli_report_create(const char *path, const char *population, size_t n, const uint64_t *gid,
                      const uint32_t *element_id, const char *const *names, double start_ms,
                      double dt_ms, cli_report_t **out)
{
    (void)population;
    (void)n;
    (void)gid;
    (void)element_id;
    (void)names;
    (void)start_ms;
    (void)dt_ms;
    *out = NULL;
    return no_hdf5(path);
}

int cli_report_set_units(cli_report_t *r, const char *population, const char *units,
                         const char *const *element_units)
{
    (void)r;
    (void)population;
    (void)units;
    (void)element_units;
    return no_hdf5("traces.h5");
}

int cli_report_reopen(const char *path, const char *population, size_t n, long frames,
                      cli_report_t **out)
{
    (void)population;
    (void)n;
    (void)frames;
    *out = NULL;
    return no_hdf5(path);
}

int cli_report_append(cli_report_t *r, size_t rows, const float *frames)
{
    (void)r;
    (void)rows;
    (void)frames;
    return no_hdf5("traces.h5");
}

int cli_report_close(cli_report_t *r)
{
    (void)r;
    return 0;
}
