/* Pieces shared by the CPU and GPU tridiagonal tests. */
#ifndef HB_TESTS_TEST_TRIDIAG_COMMON_H
#define HB_TESTS_TEST_TRIDIAG_COMMON_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hinesbatch.h"

/* malloc that ends the test (exit 2) when memory runs out. */
static inline void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "tridiagonal test: out of memory\n");
        exit(2);
    }
    return p;
}

/* Element e of an array of the given precision, written and read as double. */
static inline void put(void *a, hb_precision_t p, size_t e, double v)
{
    if (p == HB_FLOAT32)
        ((float *)a)[e] = (float)v;
    else
        ((double *)a)[e] = v;
}

static inline double get(const void *a, hb_precision_t p, size_t e)
{
    return p == HB_FLOAT32 ? (double)((const float *)a)[e] : ((const double *)a)[e];
}

/* The last error message contains needle. */
static inline int message_has(const char *needle)
{
    return strstr(hb_last_error(), needle) != NULL;
}

/* call returns code with a message containing needle (uses check.h's CHECKF). */
#define CHECK_ERR(call, code, needle)                                                       \
    do {                                                                                    \
        hb_status_t s_ = (call);                                                            \
        CHECKF(s_ == (code) && message_has(needle), "%s -> %s '%s' (expected %s with '%s')", \
               #call, hb_status_name(s_), hb_last_error(), #code, needle);                  \
    } while (0)

#endif
