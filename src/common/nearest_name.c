#include "nearest_name.h"

#include <string.h>

static int lower(int c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }

int hb_same_name(const char *a, const char *b)
{
    for (; *a && lower(*a) == lower(*b); a++, b++) continue;
    return *a == *b;
}

/* Case-insensitive edit distance with adjacent transpositions (optimal string alignment);
 * names longer than 63 characters count as far from everything. */
static int edit_distance(const char *a, const char *b)
{
    enum { ROOM = 64 };
    const size_t n = strlen(a), m = strlen(b);
    if (n >= ROOM || m >= ROOM) return ROOM;
    int d[ROOM][ROOM];
    for (size_t i = 0; i <= n; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= m; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            const int cost = lower(a[i - 1]) != lower(b[j - 1]);
            int best = d[i - 1][j] + 1;
            if (d[i][j - 1] + 1 < best) best = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < best) best = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && lower(a[i - 1]) == lower(b[j - 2]) &&
                lower(a[i - 2]) == lower(b[j - 1]) && d[i - 2][j - 2] + 1 < best)
                best = d[i - 2][j - 2] + 1;
            d[i][j] = best;
        }
    return d[n][m];
}

const char *hb_nearest_name(const char *name, const char *const *candidates)
{
    const char *best = NULL;
    int best_d = 3;
    const int len = (int)strlen(name);
    for (const char *const *c = candidates; *c; c++) {
        const int d = edit_distance(name, *c);
        if (d < best_d && 2 * d < len) {
            best = *c;
            best_d = d;
        }
    }
    return best;
}
