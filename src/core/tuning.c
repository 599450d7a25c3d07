/*
 * The one parser of measurement overrides (backend/tuning.h, docs/tuning.md): a spec is a
 * comma-separated list of key=value; every key is in the table below with the values it takes.
 */
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend/backend.h"
#include "common/status.h"
#include "core/bench.h"

typedef struct {
    const char *key;
    size_t offset;     /* of an int field, or of the long field when is_long */
    int is_long;
    long min, max;     /* the range it takes, with... */
    const long *set;   /* ...or one of these values (n_set of them), or... */
    int n_set;
    long also;         /* ...this one value beside the range (LONG_MIN: none) */
    const char *expected;
} knob_t;

static const long rows_set[] = {8, 16}, threads_set[] = {128, 256, 512}, ahead_set[] = {4, 8},
                  cluster_set[] = {1, 2, 4, 8, 16}, tile_set[] = {8, 16, 32},
                  lanes_set[] = {1, 2, 4, 8, 16};

#define GT(field) offsetof(hb_tuning_t, gtsv) + offsetof(hb_gtsv_tuning_t, field)
#define TU(field) offsetof(hb_tuning_t, field)
static const knob_t knobs[] = {
    {"gtsv.rows", GT(rows), 0, 0, 0, rows_set, 2, LONG_MIN, "8 or 16"},
    {"gtsv.threads", GT(threads), 0, 0, 0, threads_set, 3, LONG_MIN, "128, 256 or 512"},
    {"gtsv.ahead", GT(ahead), 0, 0, 0, ahead_set, 2, LONG_MIN, "4 or 8"},
    {"gtsv.hint", GT(hint), 0, 0, 2, NULL, 0, LONG_MIN, "0, 1 or 2"},
    {"gtsv.prefetch", GT(prefetch), 0, 0, 2, NULL, 0, LONG_MIN, "0, 1 or 2"},
    {"gtsv.vector", GT(vector), 0, 0, 2, NULL, 0, LONG_MIN, "0, 1 or 2"},
    {"gtsv.cluster", GT(cluster), 0, 0, 0, cluster_set, 5, LONG_MIN, "1, 2, 4, 8 or 16"},
    {"gtsv.stage", GT(stage), 0, 0, 1, NULL, 0, LONG_MIN, "0 or 1"},
    {"gtsv.persist", GT(persist), 0, 0, 1, NULL, 0, LONG_MIN, "0 or 1"},
    {"gtsv.pairs", GT(pairs), 0, 0, 1, NULL, 0, LONG_MIN, "0 or 1"},
    {"gtsv.small", GT(small), 0, 0, 1, NULL, 0, LONG_MIN, "0 or 1"},
    {"branched.lanes", TU(branched_lanes), 0, 1, 32, NULL, 0, LONG_MIN, "1 to 32"},
    {"branched.threads", TU(branched_threads), 0, 32, 1024, NULL, 0, LONG_MIN, "32 to 1024"},
    {"branched.stage_cost", TU(branched_stage_cost), 0, 0, INT_MAX, NULL, 0, LONG_MIN,
     "an integer >= 0"},
    {"branched.split_rows", TU(branched_split_rows), 0, 4, INT_MAX, NULL, 0, 0,
     "0 (no split chains) or an integer >= 4"},
    {"branched.blocks", TU(branched_blocks), 0, 1, INT_MAX, NULL, 0, LONG_MIN,
     "an integer >= 1"},
    {"multi.split_rows", TU(multi_split_rows), 0, 4, INT_MAX, NULL, 0, 0,
     "0 (no split branches) or an integer >= 4"},
    {"multi.shapes_bytes", TU(multi_shapes_bytes), 1, 1024, LONG_MAX, NULL, 0, LONG_MIN,
     "an integer >= 1024 (bytes of shared memory a team)"},
    {"multi.shapes_split_rows", TU(multi_shapes_split_rows), 0, 4, INT_MAX, NULL, 0, 0,
     "0 (no split chains) or an integer >= 4"},
    {"multi.shapes_choice", TU(multi_shapes_choice), 0, -1, 3, NULL, 0, LONG_MIN,
     "-1 (each class its fastest), 0 to 2 (a tier for all) or 3 (the fixed rule)"},
    {"sim.mixed_copies", TU(sim_mixed_copies), 0, 1, INT_MAX, NULL, 0, LONG_MIN,
     "an integer >= 1 (copies of one shape at most that step in the mixed group)"},
    {"sim.tree_tile", TU(sim_tree_tile), 0, 0, 0, tile_set, 3, LONG_MIN, "8, 16 or 32"},
    {"sim.cpu_lanes", TU(sim_cpu_lanes), 0, 0, 0, lanes_set, 5, LONG_MIN, "1, 2, 4, 8 or 16"},
    {"sim.cpu_fuse", TU(sim_cpu_fuse), 0, 0, 1, NULL, 0, LONG_MIN, "0 or 1"},
};
#undef GT
#undef TU

void hb_tuning_default(hb_tuning_t *t)
{
    memset(t, 0, sizeof *t);
    t->gtsv.hint = t->gtsv.prefetch = t->gtsv.vector = -1;
    t->gtsv.stage = t->gtsv.persist = t->gtsv.pairs = t->gtsv.small = -1;
    t->branched_stage_cost = -1;
    t->branched_split_rows = -1;
    t->multi_split_rows = -1;
    t->multi_shapes_split_rows = -1;
    t->multi_shapes_choice = -2;
    t->sim_mixed_copies = -1;
    t->sim_tree_tile = -1;
    t->sim_cpu_lanes = -1;
    t->sim_cpu_fuse = -1;
}

static int knob_accepts(const knob_t *k, long v)
{
    if (k->set) {
        for (int i = 0; i < k->n_set; ++i)
            if (v == k->set[i]) return 1;
        return 0;
    }
    return (v >= k->min && v <= k->max) || v == k->also;
}

hb_status_t hb_tuning_parse(const char *spec, hb_tuning_t *out)
{
    static const char fn[] = "hb_tuning_parse";
    if (!out) return hb_fail(HB_ERR_INVALID_VALUE, "%s: out is NULL", fn);
    hb_tuning_t t;
    hb_tuning_default(&t);
    const char *c = spec ? spec : "";
    while (*c) {
        const char *end = strchr(c, ',');
        const size_t len = end ? (size_t)(end - c) : strlen(c);
        const char *eq = memchr(c, '=', len);
        const knob_t *k = NULL;
        for (size_t i = 0; eq && i < sizeof knobs / sizeof *knobs; ++i)
            if (strlen(knobs[i].key) == (size_t)(eq - c) && !strncmp(knobs[i].key, c, (size_t)(eq - c)))
                k = &knobs[i];
        if (!k)
            return hb_fail(HB_ERR_INVALID_VALUE,
                           "%s: '%.*s' in tuning '%s': expected key=value with a key of "
                           "docs/tuning.md (gtsv.rows, branched.lanes, multi.split_rows, ...)",
                           fn, (int)len, c, spec);
        char value[32];
        const size_t vlen = len - (size_t)(eq + 1 - c);
        char *vend = NULL;
        long v = 0;
        int ok = vlen > 0 && vlen < sizeof value;
        if (ok) {
            memcpy(value, eq + 1, vlen);
            value[vlen] = '\0';
            errno = 0;
            v = strtol(value, &vend, 10);
            ok = !errno && *vend == '\0' && knob_accepts(k, v);
        }
        if (!ok)
            return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s = '%.*s' in tuning '%s'; expected %s",
                           fn, k->key, (int)vlen, eq + 1, spec, k->expected);
        if (k->is_long)
            *(long *)((char *)&t + k->offset) = v;
        else
            *(int *)((char *)&t + k->offset) = (int)v;
        c = end ? end + 1 : c + len;
    }
    *out = t;
    return HB_SUCCESS;
}

hb_status_t hb_context_set_tuning(hb_context_t *ctx, const char *spec)
{
    hb_clear_error();
    if (!ctx) return hb_fail(HB_ERR_INVALID_VALUE, "hb_context_set_tuning: ctx is NULL");
    return hb_tuning_parse(spec, &ctx->tuning);
}
