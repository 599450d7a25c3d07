/*
 * A network of real morphologies for the tests (test_net_morphologies on the CPU,
 * tests/gpu/test_gpu_net against it on the GPU): one cell of every SWC file of a folder, in
 * name order, each with hh everywhere (NEURON's d-lambda rule), an IClamp, an ExpSyn and a
 * spike detector at the middle of its first section (every file has one; not all have a soma),
 * and a ring of connections, cell i to cell i + 1, so that spikes become events. The cells
 * differ, so the simulation steps them as a mixed group (on the GPU: the tree step; with more
 * distinct rows than the row table holds: its arrays).
 */
#ifndef HB_TESTS_NET_MORPHOLOGIES_H
#define HB_TESTS_NET_MORPHOLOGIES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_data.h"

/* Writes the network of the SWC files of `folder` to `path`, `copies` cells of each file (gids
 * in file order, each file's copies together), connections of weight `weight_us` [µS] in a
 * ring over all gids. The file names the SWC files by absolute paths: a network file's relative
 * paths are resolved from its own folder, not the caller's working one. Files whose path would
 * need escaping in JSON are left out. Returns its cells, 0 if the folder has no such SWC file
 * or a file cannot be written. */
static inline int net_morphologies_write(const char *folder, const char *path, double weight_us,
                                         int copies)
{
    const int absolute = folder[0] == '/';
    char cwd[TEST_PATH_MAX] = "", dir[TEST_PATH_MAX];
    if (!absolute && !getcwd(cwd, sizeof cwd)) return 0;
    const int written = snprintf(dir, sizeof dir, "%s%s%s", cwd, absolute ? "" : "/", folder);
    char(*paths)[TEST_PATH_MAX] = malloc(TEST_MAX_SWC * sizeof *paths);
    const int found = written > 0 && written < (int)sizeof dir && paths
                          ? test_swc_files_in(dir, paths) : -1;
    int n = 0; /* the files kept, moved to the front */
    for (int k = 0; k < found; k++)
        if (!strchr(paths[k], '"') && !strchr(paths[k], '\\'))
            memmove(paths[n++], paths[k], TEST_PATH_MAX);
    FILE *f = n > 0 ? fopen(path, "w") : NULL;
    if (f) {
        static const char *const at = "{\"section\": 0, \"x\": 0.5}";
        fprintf(f, "{\"t_stop\": 40, \"dt\": 0.025, \"cells\": [\n");
        for (int c = 0; c < n; c++)
            fprintf(f,
                    " {\"name\": \"cell%d\", \"count\": %d, \"morphology\": \"%s\", "
                    "\"section_rule\": \"hinesbatch\", \"discretization\": {\"policy\": "
                    "\"d-lambda\", \"d_lambda\": 0.1, \"frequency\": 100}, \"mechanisms\": "
                    "[{\"name\": \"hh\", \"region\": \"all\"}], \"synapses\": [{\"type\": "
                    "\"expsyn\", \"at\": %s, \"tau\": 2, \"e\": 0}], \"stimuli\": [{\"type\": "
                    "\"iclamp\", \"at\": %s, \"del\": 1, \"dur\": 30, \"amp\": 2}], \"probes\": "
                    "[{\"name\": \"spike\", \"at\": %s, \"spike_threshold\": -10}]}%s\n",
                    c, copies, paths[c], at, at, at, c + 1 < n ? "," : "");
        fprintf(f, "], \"network\": {\"connections\": [\n");
        const int gids = n * copies;
        for (int c = 0; c < gids; c++)
            fprintf(f, " {\"source\": %d, \"target\": %d, \"synapse\": 0, \"weight\": %.17g, "
                    "\"delay\": 2}%s\n", c, (c + 1) % gids, weight_us, c + 1 < gids ? "," : "");
        fprintf(f, "]}}\n");
    }
    const int ok = f && fclose(f) == 0;
    free(paths);
    return ok ? n * copies : 0;
}

#endif
