/* SONATA spike files in a build without HDF5: the option says so (tools/sonata/sonata.h). */
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
