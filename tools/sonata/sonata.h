/*
 * SONATA spike and report files (HDF5): sonata_hdf5.c where the build found HDF5,
 * sonata_none.c where it did not (CMakeLists.txt picks one), so no code tests for HDF5.
 */
#ifndef HB_TOOLS_SONATA_H
#define HB_TOOLS_SONATA_H

#include <stddef.h>
#include <stdint.h>

/* The population of the SONATA outputs (spikes.h5, traces.h5): "default", or a SONATA
 * circuit's one population of cells (its node ids are then the gids). Set by cmd_run.c. */
extern char cli_sonata_population[256];

/* Non-zero when this build writes SONATA files. */
int cli_sonata_available(void);

/* PATH: /spikes/<population>/timestamps [ms] (float64, attribute units "ms") and node_ids
 * (uint64), n spikes as given (by time, then gid), the group's attribute "sorting" the enum
 * {none, by_id, by_time} set to by_time. 0 on success; else the message is printed, 1. */
int cli_sonata_write_spikes(const char *path, const char *population, size_t n,
                            const uint64_t *node_ids, const double *times_ms);

/* A SONATA report being written (traces.h5): frames appended as the run goes. */
typedef struct cli_report cli_report_t;

/* PATH created with /report/<population>: data (float32 [frames][n], attribute units "mV",
 * chunked, no frames yet) and mapping/{node_ids (uint64, the distinct gids in order, attribute
 * sorted), index_pointers (uint64, nodes + 1), element_ids (uint32), element_names (the probe
 * names: hinesbatch's addition), time (float64 {start, start + frames x dt, dt} [ms],
 * attribute units "ms")}. Element k belongs to gid[k]: equal gids next to each other, in
 * increasing order. 0 on success; else the message is printed, 1. */
int cli_report_create(const char *path, const char *population, size_t n, const uint64_t *gid,
                      const uint32_t *element_id, const char *const *names, double start_ms,
                      double dt_ms, cli_report_t **out);
/* A report of several variables: the data's attribute "units" set to `units` (one unit, or
 * "mixed") and mapping/element_units (per element its own unit; hinesbatch's addition). 0, or
 * 1 after the message. */
int cli_report_set_units(cli_report_t *r, const char *population, const char *units,
                         const char *const *element_units);
/* An existing report of n elements reopened to continue after its first `frames` frames (a
 * restart): the frames after them are cut off. 0, or 1 after the message (a file that is no
 * such report, or holds fewer frames). */
int cli_report_reopen(const char *path, const char *population, size_t n, long frames,
                      cli_report_t **out);
/* `rows` frames (row-major, [rows][n]) appended, the time's stop moved on, the file flushed
 * (a run stopped later keeps them). 0, or 1 after the message. */
int cli_report_append(cli_report_t *r, size_t rows, const float *frames);
/* Closes the file and frees r (NULL: nothing). 0, or 1 after the message. */
int cli_report_close(cli_report_t *r);

#endif
