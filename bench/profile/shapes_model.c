/*
 * The SHAPES time model on real cells, for what-if questions (docs/multi.md, "Open"):
 * builds a batch of the data folder's morphologies cycled (d_lambda), plans it for the
 * H100 with the CPU twin's device, and prints the model's time for the session-9 rule and
 * for the batch's choice. With bench/profile/multi-shapes-model.patch applied to
 * src/core/multi_shapes.c, DBG_UL (fraction of u and l kept on chip, default 1) and DBG_S
 * (factor on every plan's solve cost, default 1) ask what a smaller team or a faster solve
 * would give. Build (from a Release build directory with the patch applied):
 *   cc -O2 -std=gnu11 -I include -I src bench/profile/shapes_model.c BUILD/libhinesbatch.a
 *      -ljansson -lm -fopenmp [-lcudart -lcusparse -lstdc++] -o shapes_model
 * Usage: shapes_model DATA/morphologies [cells]
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/multi.h"
#include "core/multi_shapes.h"
#include "hinesbatch.h"

int main(int argc, char **argv)
{
    const char *dir = argc > 1 ? argv[1] : "../shared/data/morphologies";
    const int n_cells = argc > 2 ? atoi(argv[2]) : 25600;
    DIR *d = opendir(dir);
    if (!d) {
        fprintf(stderr, "%s: cannot open\n", dir);
        return 1;
    }
    struct dirent *e;
    int *parents[64], rows_of[64], n = 0;
    while ((e = readdir(d)) && n < 64) {
        if (!strstr(e->d_name, ".swc")) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        hb_morph_t *morph = NULL;
        if (hb_morph_load_swc(path, NULL, &morph) != HB_SUCCESS) continue;
        hb_discretization_t disc;
        hb_discretization_default(&disc);
        disc.policy = HB_CPOLICY_D_LAMBDA;
        hb_cable_t *cable = NULL;
        if (hb_cable_create(morph, &disc, &cable) == HB_SUCCESS && cable) {
            rows_of[n] = hb_cable_size(cable);
            parents[n] = malloc((size_t)rows_of[n] * sizeof(int));
            memcpy(parents[n], hb_cable_parent(cable), (size_t)rows_of[n] * sizeof(int));
            ++n;
            hb_cable_destroy(cable);
        }
        hb_morph_destroy(morph);
    }
    closedir(d);
    if (n == 0) return 1;
    int *m = malloc((size_t)n_cells * sizeof *m);
    const int **par = malloc((size_t)n_cells * sizeof *par);
    for (int c = 0; c < n_cells; ++c) {
        m[c] = rows_of[c % n];
        par[c] = parents[c % n];
    }
    hb_context_t ctx = NULL;
    hb_multi_t mb = NULL;
    if (hb_context_create(HB_BACKEND_SEQ, &ctx) != HB_SUCCESS ||
        hb_multi_create(ctx, n_cells, m, par, &mb) != HB_SUCCESS) {
        fprintf(stderr, "%s\n", hb_last_error());
        return 1;
    }
    const hb_multi_shapes_device_t dev = HB_MULTI_SHAPES_CPU_DEVICE;
    if (hb_multi_plan_shapes(mb, &dev, HB_MULTI_SHAPES_THREADS) != HB_SUCCESS) {
        fprintf(stderr, "%s\n", hb_last_error());
        return 1;
    }
    printf("%d morphologies, %d cells, %d classes\n", n, n_cells, mb->shapes->n_classes);
    return 0;
}
