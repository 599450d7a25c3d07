/*
 * Arbor's busyring benchmark (net_busyring.h): the exact draws of arbor's
 * example/busyring/ring.cpp built with GCC (libstdc++): std::mt19937 seeded by the gid,
 * std::uniform_real_distribution<double>(0, 1) = generate_canonical<double, 53> (two 32-bit
 * draws), std::uniform_int_distribution<uint32_t> (Lemire's nearly divisionless method) and
 * std::uniform_real_distribution<float> (one draw).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "net/net_busyring.h"

void hb_mt19937_seed(hb_mt19937_t *g, uint32_t seed)
{
    g->mt[0] = seed;
    for (uint32_t i = 1; i < 624; i++)
        g->mt[i] = 1812433253u * (g->mt[i - 1] ^ (g->mt[i - 1] >> 30)) + i;
    g->index = 624;
}

uint32_t hb_mt19937_next(hb_mt19937_t *g)
{
    if (g->index >= 624) {
        for (int i = 0; i < 624; i++) {
            const uint32_t y = (g->mt[i] & 0x80000000u) | (g->mt[(i + 1) % 624] & 0x7fffffffu);
            g->mt[i] = g->mt[(i + 397) % 624] ^ (y >> 1) ^ ((y & 1u) ? 0x9908b0dfu : 0u);
        }
        g->index = 0;
    }
    uint32_t y = g->mt[g->index++];
    y ^= y >> 11;
    y ^= (y << 7) & 0x9d2c5680u;
    y ^= (y << 15) & 0xefc60000u;
    y ^= y >> 18;
    return y;
}

double hb_mt_canonical(hb_mt19937_t *g)
{
    /* k = 2 draws: sum = u1 + u2 * 2^32 (rounded to double), over 2^64 */
    double sum = (double)hb_mt19937_next(g);
    sum += (double)hb_mt19937_next(g) * 4294967296.0;
    double r = sum / 18446744073709551616.0;
    if (r >= 1.0) r = nextafter(1.0, 0.0);
    return r;
}

uint32_t hb_mt_uniform_u32(hb_mt19937_t *g, uint32_t lo, uint32_t hi)
{
    const uint32_t range = hi - lo + 1u; /* hi > lo and not the whole 32 bits */
    uint64_t product = (uint64_t)hb_mt19937_next(g) * range;
    uint32_t low = (uint32_t)product;
    if (low < range) {
        const uint32_t threshold = (uint32_t)(0u - range) % range;
        while (low < threshold) {
            product = (uint64_t)hb_mt19937_next(g) * range;
            low = (uint32_t)product;
        }
    }
    return lo + (uint32_t)(product >> 32);
}

float hb_mt_uniform_float(hb_mt19937_t *g, float lo, float hi)
{
    const float sum = (float)hb_mt19937_next(g);
    float f = sum / 4294967296.0f;
    if (f >= 1.0f) f = nextafterf(1.0f, 0.0f);
    return f * (hi - lo) + lo;
}

void hb_busyring_default(hb_busyring_t *p)
{
    memset(p, 0, sizeof *p);
    p->num_cells = 5000;
    p->ring_size = 5;
    p->min_delay = 5.0;
    p->event_weight = 0.05f;
    p->depth = 5;
    p->branch_probs[0] = 1.0;
    p->branch_probs[1] = 0.5;
    p->compartments[0] = 20;
    p->compartments[1] = 2;
    p->lengths[0] = 200.0;
    p->lengths[1] = 20.0;
    p->synapses = 1;
}

/* ring.cpp's interp: r[0] + (i / (n - 1)) (r[1] - r[0]). */
static double interp(double r0, double r1, int i, int n)
{
    const double p = i * 1.0 / (n - 1);
    return r0 + p * (r1 - r0);
}

#define SOMA_RADIUS (12.6157 / 2.0)
#define DEND_RADIUS 0.5

hb_status_t hb_busyring_samples(const hb_busyring_t *p, uint32_t gid, hb_sample_t **samples,
                                int *count, int *per_level)
{
    static const char fn[] = "busyring";
    *samples = NULL;
    *count = 0;
    size_t n = 0, cap = 64;
    hb_sample_t *s = malloc(cap * sizeof *s);
    long *cur = malloc(sizeof *cur), *next = NULL;
    size_t n_cur = 1, n_next = 0, cap_cur = 1, cap_next = 0;
    if (!s || !cur) goto oom;
    s[n++] = (hb_sample_t){1, 1, 0.0, 0.0, -SOMA_RADIUS, SOMA_RADIUS, -1, 0};
    s[n++] = (hb_sample_t){2, 1, 0.0, 0.0, SOMA_RADIUS, SOMA_RADIUS, 1, 0};
    cur[0] = 2;
    if (per_level) {
        for (int i = 0; i <= p->depth; i++) per_level[i] = 0;
        per_level[0] = 1;
    }
    hb_mt19937_t gen;
    hb_mt19937_seed(&gen, gid);
    double z0 = SOMA_RADIUS;
    for (int i = 0; i < p->depth; i++) {
        const double bp = interp(p->branch_probs[0], p->branch_probs[1], i, p->depth);
        const double len = interp(p->lengths[0], p->lengths[1], i, p->depth);
        const unsigned nc = (unsigned)round(interp((double)p->compartments[0],
                                                   (double)p->compartments[1], i, p->depth));
        n_next = 0;
        for (size_t b = 0; b < n_cur; b++)
            for (int j = 0; j < 2; j++) {
                if (!(hb_mt_canonical(&gen) < bp)) continue;
                const double dz = len / nc;
                long parent = cur[b];
                if (n + nc > (size_t)HB_DEFAULT_MAX_ROWS) { /* 2^depth branches: stop early */
                    free(s);
                    free(cur);
                    free(next);
                    return hb_fail(HB_ERR_INVALID_VALUE, "%s: gid %u has more than %d samples "
                                   "by level %d of depth %d; expected at most HB_DEFAULT_MAX_ROWS "
                                   "(fewer levels, smaller branch-probs or fewer compartments)",
                                   fn, gid, HB_DEFAULT_MAX_ROWS, i + 1, p->depth);
                }
                if (n + nc > cap) {
                    while (n + nc > cap) cap *= 2;
                    hb_sample_t *t = realloc(s, cap * sizeof *s);
                    if (!t) goto oom;
                    s = t;
                }
                for (unsigned k = 0; k < nc; k++) {
                    const long id = (long)n + 1;
                    s[n++] = (hb_sample_t){id, i % 2 ? 4 : 3, 0.0, 0.0, z0 + (k + 1) * dz,
                                           DEND_RADIUS, parent, 0};
                    parent = id;
                }
                if (n_next == cap_next) {
                    cap_next = cap_next ? 2 * cap_next : 16;
                    long *t = realloc(next, cap_next * sizeof *t);
                    if (!t) goto oom;
                    next = t;
                }
                next[n_next++] = parent;
            }
        if (n_next == 0) break;
        if (per_level) per_level[i + 1] = (int)n_next;
        long *t = cur;
        cur = next;
        next = t;
        const size_t c = cap_cur;
        cap_cur = cap_next;
        cap_next = c;
        n_cur = n_next;
        z0 += len;
    }
    free(cur);
    free(next);
    if (n > 0x7fffffff) {
        free(s);
        return hb_fail(HB_ERR_NOT_SUPPORTED, "%s: gid %u has %zu samples", fn, gid, n);
    }
    *samples = s;
    *count = (int)n;
    return HB_SUCCESS;
oom:
    free(s);
    free(cur);
    free(next);
    return hb_fail(HB_ERR_ALLOC, "%s: out of memory for the morphology of gid %u", fn, gid);
}

hb_status_t hb_busyring_cell(const hb_busyring_t *p, uint32_t gid, hb_morph_t **morph,
                             hb_model_t **model)
{
    *morph = NULL;
    *model = NULL;
    hb_sample_t *s = NULL;
    int n = 0;
    hb_status_t status = hb_busyring_samples(p, gid, &s, &n, NULL);
    if (status != HB_SUCCESS) return status;
    char name[64];
    snprintf(name, sizeof name, "busyring gid %u", gid);
    status = hb_morph_from_samples(s, n, name, morph);
    free(s);
    if (status != HB_SUCCESS) return status;
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.policy = HB_CPOLICY_PER_SEGMENT;
    disc.scheme = HB_SCHEME_NEURON;
    disc.ra_ohm_cm = 100.0;
    disc.cm_uf_cm2 = 1.0;
    hb_mech_t hh, pas;
    hb_mech_default(HB_MECH_HH, &hh);
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.g_pas = 0.001;
    pas.e_pas = -70.0;
    hb_synapse_t syn;
    hb_synapse_default(HB_SYN_EXP, &syn);
    syn.tau_ms = 2.0;
    syn.e_mv = 0.0;
    const hb_location_t centre = {HB_LOC_SECTION, 0, 0, 0.5, 0};
    const hb_probe_spec_t detector = {{HB_LOC_SECTION, 0, 0, 0.0, 0}, "d", 1, 10.0};
    if ((status = hb_model_create(*morph, &disc, model)) != HB_SUCCESS ||
        (status = hb_model_insert(*model, 1, &hh)) != HB_SUCCESS ||
        (status = hb_model_insert(*model, 3, &pas)) != HB_SUCCESS ||
        (status = hb_model_insert(*model, 4, &pas)) != HB_SUCCESS ||
        (status = hb_model_add_synapse(*model, &centre, &syn, NULL)) != HB_SUCCESS ||
        (status = hb_model_add_probe(*model, &detector, NULL)) != HB_SUCCESS) {
        hb_model_destroy(*model);
        hb_morph_destroy(*morph);
        *model = NULL;
        *morph = NULL;
    }
    return status;
}

void hb_busyring_connections(const hb_busyring_t *p, uint32_t gid, hb_connection_t *out)
{
    const uint32_t rs = p->ring_size, n = p->num_cells;
    const uint32_t ring_start = gid / rs * rs;
    const uint32_t ring_end = ring_start + rs < n ? ring_start + rs : n;
    const uint32_t src0 = gid == ring_start ? ring_end - 1 : gid - 1;
    out[0] = (hb_connection_t){src0, 0, (double)p->event_weight, (double)(float)p->min_delay};
    hb_mt19937_t g;
    hb_mt19937_seed(&g, gid);
    const float hi = (float)(2.0 * p->min_delay);
    for (uint32_t i = 1; i < p->synapses; i++) {
        uint32_t s = hb_mt_uniform_u32(&g, 0, n - 2);
        if (s == gid) s++;
        const float d = (float)(p->min_delay + (double)hb_mt_uniform_float(&g, 0.0f, hi));
        out[i] = (hb_connection_t){s, 0, 0.0, (double)d};
    }
}
