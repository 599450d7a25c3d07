/*
 * SONATA circuits as input (docs/sonata.md): a circuit_config.json or a simulation config
 * naming one, translated into a network file's document (docs/network.md), which the library
 * then builds as any network file. circuit_hdf5.c where the build found HDF5, circuit_none.c
 * where it did not (CMakeLists.txt picks one).
 */
#ifndef HB_TOOLS_SONATA_CIRCUIT_H
#define HB_TOOLS_SONATA_CIRCUIT_H

#include <jansson.h>

/* Non-zero when root looks like a SONATA config: a "networks" object, or "network" naming a
 * circuit config (a string), as bmtk's and the SONATA specification's configs do. */
int cli_circuit_is_config(const json_t *root);

/* The circuit of the config at `path` (its parsed text `root`) as a network document
 * (*network, the caller's to json_decref): cells of the biophysical nodes (gids in the
 * populations' order, node ids in order), connections from their edges, the virtual nodes'
 * spike trains as events through their edges, the run's options and one membrane report as
 * "record". `population` receives the name of the one population of cells, or "default"
 * where there are several. 0 on success; else the message (file, key, what was expected) is
 * printed, 1. */
int cli_circuit_load(const char *path, const json_t *root, json_t **network, char *population,
                     size_t population_size);

#endif
