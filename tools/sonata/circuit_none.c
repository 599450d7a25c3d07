/* SONATA circuits in a build without HDF5 (tools/sonata/circuit.h): recognised, and refused
 * with what to do. */
#include <string.h>

#include "cli.h"
#include "sonata/circuit.h"

int cli_circuit_is_config(const json_t *root)
{
    const json_t *net = json_object_get(root, "network");
    return json_is_object(json_object_get(root, "networks")) || json_is_string(net);
}

int cli_circuit_load(const char *path, const json_t *root, json_t **network, char *population,
                     size_t population_size)
{
    (void)root;
    *network = NULL;
    if (population_size) population[0] = '\0';
    cli_fail("run", "%s: a SONATA circuit needs HDF5, which this build has not (Debian: "
             "libhdf5-dev, then configure again) (%s)", path,
             hb_status_string(HB_ERR_NOT_SUPPORTED));
    return 1;
}
