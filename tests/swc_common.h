/*
 * Pieces shared by the SWC tests (test_swc: valid files and in-memory rules; test_swc_errors:
 * malformed input): paths, the structural invariants of any morphology, the file-table runner,
 * in-memory parses that expect success or a located error, and a small generator.
 * The including file defines _POSIX_C_SOURCE first (opendir).
 */
#ifndef HB_TESTS_SWC_COMMON_H
#define HB_TESTS_SWC_COMMON_H

#include <dirent.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/morphology.h"
#include "hinesbatch.h"

#define PI 3.14159265358979323846
#define GOOD_DIR HB_DATA_DIR "/morphologies"
#define BAD_DIR HB_DATA_DIR "/morphologies-bad"
#define MEM "mem.swc" /* name given to in-memory texts */

static inline int close_to(double a, double b, double rel)
{
    return fabs(a - b) <= rel * fmax(1.0, fmax(fabs(a), fabs(b)));
}

/* ------------------------------------------------------------------------ */
/* Structural invariants of any loaded morphology.                          */
/* ------------------------------------------------------------------------ */

static inline void check_invariants(const hb_morph_t *m)
{
    int ok_samples = m->n_samples > 0 && m->parent[0] == -1;
    for (int k = 1; k < m->n_samples; k++)
        ok_samples &= m->parent[k] >= 0 && m->parent[k] < k;
    for (int k = 0; k < m->n_samples; k++) ok_samples &= m->samples[k].radius > 0.0;
    CHECKF(ok_samples, "%s: samples sorted, radii > 0", m->name);

    int ok = m->n_sections >= 1 && m->sections[0].parent == -1;
    if (!ok) {
        CHECKF(ok, "%s: has a root section", m->name);
        return;
    }
    int *children = calloc((size_t)m->n_sections, sizeof *children);
    for (int i = 0; i < m->n_sections && ok; i++) {
        const hb_section_t *s = &m->sections[i];
        if (i > 0) {
            ok &= s->parent >= 0 && s->parent < i;
            ok &= s->parent_x == 1.0 || s->parent_x == 0.5 || s->parent_x == 0.0;
            if (ok) children[s->parent]++;
        }
        ok &= s->n_points >= 2 && s->arc[0] == 0.0;
        for (int k = 0; k < s->n_points && ok; k++) {
            ok &= s->radius[k] > 0.0;
            ok &= s->sample[k] >= (s->is_sphere ? -1 : 0) && s->sample[k] < m->n_samples;
            if (k > 0) ok &= s->arc[k] >= s->arc[k - 1];
        }
        ok &= s->length == s->arc[s->n_points - 1];
        ok &= s->branch_order >= 0;
    }
    for (int i = 0; i < m->n_sections && ok; i++) ok &= children[i] == m->sections[i].n_children;
    free(children);
    CHECKF(ok, "%s: sections sorted, polylines valid, n_children consistent", m->name);
}

/*
 * Runs test(i) for every file of dir_path. The table (n entries, name(i))
 * must list exactly the files there: a new file without an expected outcome
 * fails the test.
 */
static inline void run_table(const char *dir_path, int n, const char *(*name)(int),
                             void (*test)(int))
{
    DIR *dir = opendir(dir_path);
    CHECKF(dir != NULL, "opendir %s", dir_path);
    if (!dir) return;
    int seen = 0;
    struct dirent *e;
    while ((e = readdir(dir)) != NULL) {
        if (e->d_name[0] == '.') continue;
        int found = -1;
        for (int i = 0; i < n; i++)
            if (strcmp(name(i), e->d_name) == 0) found = i;
        CHECKF(found >= 0, "%s/%s is not in the test's table", dir_path, e->d_name);
        if (found < 0) continue;
        seen++;
        test(found);
    }
    closedir(dir);
    CHECKF(seen == n, "%d of %d table files found in %s", seen, n, dir_path);
}

/* msg names the file and, when line > 0, "FILE:LINE:". */
static inline int names_location(const char *msg, const char *file, long line)
{
    char at[512];
    if (line > 0) snprintf(at, sizeof at, "%s:%ld:", file, line);
    else snprintf(at, sizeof at, "%s", file);
    return strstr(msg, at) != NULL;
}

/* In-memory texts: a parse that must succeed (invariants checked), one that must fail. */

static inline hb_morph_t *parse_n(const char *text, size_t length, const hb_swc_options_t *o)
{
    hb_morph_t *m = NULL;
    hb_status_t st = hb_morph_parse_swc(text, length, MEM, o, &m);
    CHECKF(st == HB_SUCCESS, "%s: %s\n--- text ---\n%.300s", hb_status_name(st), hb_last_error(),
           text);
    if (m) check_invariants(m);
    return m;
}

static inline hb_morph_t *parse(const char *text) { return parse_n(text, strlen(text), NULL); }

static inline void expect_error_n(const char *text, size_t length, const hb_swc_options_t *o,
                                  hb_status_t status, const char *what, long line)
{
    hb_morph_t *m = (hb_morph_t *)&m;
    hb_status_t st = hb_morph_parse_swc(text, length, MEM, o, &m);
    const char *msg = hb_last_error();
    CHECKF(st == status, "got %s (%s), expected %s for:\n%.200s", hb_status_name(st), msg,
           hb_status_name(status), text);
    CHECKF(m == NULL, "morph is NULL on failure");
    CHECKF(strstr(msg, what) != NULL, "message '%s' lacks '%s'", msg, what);
    CHECKF(names_location(msg, MEM, line), "message '%s' lacks %s:%ld:", msg, MEM, line);
    if (st == HB_SUCCESS) hb_morph_destroy(m);
}

static inline void expect_error(const char *text, hb_status_t status, const char *what,
                                long line)
{
    expect_error_n(text, strlen(text), NULL, status, what, line);
}

static inline int has_warning(const hb_morph_t *m, const char *what)
{
    for (int i = 0; i < hb_morph_warning_count(m); i++)
        if (strstr(hb_morph_warning(m, i), what)) return 1;
    return 0;
}

static inline hb_morph_stats_t stats_of(const hb_morph_t *m)
{
    hb_morph_stats_t st;
    memset(&st, 0, sizeof st);
    CHECK_OK(hb_morph_stats(m, &st));
    return st;
}

/* xorshift64; each test that draws seeds rng_state. */
static uint64_t rng_state;
static inline uint64_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
static inline double rng_unit(void) { return (double)(rng_next() >> 11) / 9007199254740992.0; }

#endif
