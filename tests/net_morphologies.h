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

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int net_morph_name_order(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Writes the network of the SWC files of `folder` to `path`, connections of weight
 * `weight_us` [µS]. The file names the SWC files by absolute paths: a network file's relative
 * paths are resolved from its own folder, not the caller's working one. Returns its cells, 0 if
 * the folder has no SWC file or a file cannot be written. */
static inline int net_morphologies_write(const char *folder, const char *path, double weight_us)
{
    char cwd[4096], *dir = NULL;
    if (folder[0] == '/' || getcwd(cwd, sizeof cwd)) {
        const size_t size = strlen(folder) + (folder[0] == '/' ? 1 : strlen(cwd) + 2);
        if ((dir = malloc(size)) != NULL)
            snprintf(dir, size, "%s%s%s", folder[0] == '/' ? "" : cwd, folder[0] == '/' ? "" : "/",
                     folder);
    }
    DIR *d = dir ? opendir(dir) : NULL;
    if (!d) {
        free(dir);
        return 0;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        const size_t len = strlen(e->d_name);
        if (len < 5 || strcmp(e->d_name + len - 4, ".swc") != 0 || strchr(e->d_name, '"') ||
            strchr(e->d_name, '\\'))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 32;
            char **grown = realloc(names, (size_t)cap * sizeof *names);
            if (!grown) break;
            names = grown;
        }
        names[n] = malloc(len + 1);
        if (!names[n]) break;
        memcpy(names[n++], e->d_name, len + 1);
    }
    closedir(d);
    FILE *f = n > 0 && !strchr(dir, '"') && !strchr(dir, '\\') ? fopen(path, "w") : NULL;
    if (f) {
        qsort(names, (size_t)n, sizeof *names, net_morph_name_order);
        static const char *const at = "{\"section\": 0, \"x\": 0.5}";
        fprintf(f, "{\"t_stop\": 40, \"dt\": 0.025, \"cells\": [\n");
        for (int c = 0; c < n; c++)
            fprintf(f,
                    " {\"name\": \"cell%d\", \"count\": 1, \"morphology\": \"%s/%s\", "
                    "\"section_rule\": \"hinesbatch\", \"discretization\": {\"policy\": "
                    "\"d-lambda\", \"d_lambda\": 0.1, \"frequency\": 100}, \"mechanisms\": "
                    "[{\"name\": \"hh\", \"region\": \"all\"}], \"synapses\": [{\"type\": "
                    "\"expsyn\", \"at\": %s, \"tau\": 2, \"e\": 0}], \"stimuli\": [{\"type\": "
                    "\"iclamp\", \"at\": %s, \"del\": 1, \"dur\": 30, \"amp\": 2}], \"probes\": "
                    "[{\"name\": \"spike\", \"at\": %s, \"spike_threshold\": -10}]}%s\n",
                    c, dir, names[c], at, at, at, c + 1 < n ? "," : "");
        fprintf(f, "], \"network\": {\"connections\": [\n");
        for (int c = 0; c < n; c++)
            fprintf(f, " {\"source\": %d, \"target\": %d, \"synapse\": 0, \"weight\": %.17g, "
                    "\"delay\": 2}%s\n", c, (c + 1) % n, weight_us, c + 1 < n ? "," : "");
        fprintf(f, "]}}\n");
    }
    const int ok = f && fclose(f) == 0;
    for (int c = 0; c < n; c++) free(names[c]);
    free(names);
    free(dir);
    return ok ? n : 0;
}

#endif
