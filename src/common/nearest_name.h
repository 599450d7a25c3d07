/*
 * "Did you mean": the name a misspelt one most likely meant, for the messages that refuse an
 * unknown model key (src/sim/json_util.c), CLI option or command (tools/).
 */
#ifndef HB_COMMON_NEAREST_NAME_H
#define HB_COMMON_NEAREST_NAME_H

/* Case-insensitive equality of two names. */
int hb_same_name(const char *a, const char *b);

/* The entry of the NULL-terminated `candidates` nearest to `name` within 2 edits
 * (case-insensitive, adjacent transpositions count one) and less than half `name`'s length,
 * the first of equals; NULL if none. */
const char *hb_nearest_name(const char *name, const char *const *candidates);

#endif
