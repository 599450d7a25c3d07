/*
 * SONATA spike files (HDF5): sonata_hdf5.c where the build found HDF5, sonata_none.c where it
 * did not (CMakeLists.txt picks one), so no code tests for HDF5.
 */
#ifndef HB_TOOLS_SONATA_H
#define HB_TOOLS_SONATA_H

#include <stddef.h>
#include <stdint.h>

/* Non-zero when this build writes SONATA files. */
int cli_sonata_available(void);

/* PATH: /spikes/<population>/timestamps [ms] (float64, attribute units "ms") and node_ids
 * (uint64), n spikes as given (by time, then gid), the group's attribute "sorting" the enum
 * {none, by_id, by_time} set to by_time. 0 on success; else the message is printed, 1. */
int cli_sonata_write_spikes(const char *path, const char *population, size_t n,
                            const uint64_t *node_ids, const double *times_ms);

#endif
