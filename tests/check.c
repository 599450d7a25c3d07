#include "check.h"

#include <stdarg.h>
#include <stdlib.h>

int check_passed;
int check_failed;

void check_report(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
{
    if (ok) {
        check_passed++;
        return;
    }
    check_failed++;
    fprintf(stderr, "FAIL %s:%d: %s", file, line, expr);
    if (fmt) {
        va_list args;
        va_start(args, fmt);
        fputs(" -- ", stderr);
        vfprintf(stderr, fmt, args);
        va_end(args);
    }
    fputc('\n', stderr);
}

int check_summary(const char *suite)
{
    printf("%s: %d passed, %d failed\n", suite, check_passed, check_failed);
    return check_failed == 0 && check_passed > 0 ? 0 : 1;
}

void *check_malloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        fprintf(stderr, "test: out of memory (%zu bytes)\n", bytes);
        exit(2);
    }
    return p;
}
