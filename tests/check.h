/* Minimal test harness: every CHECK counts; a test program exits non-zero on any failure. */
#ifndef HB_TESTS_CHECK_H
#define HB_TESTS_CHECK_H

#include <stdio.h>

extern int check_passed;
extern int check_failed;

void check_report(int ok, const char *file, int line, const char *expr, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 5, 6)))
#endif
    ;
/* Prints "N passed, N failed" and returns the exit status. */
int check_summary(const char *suite);
/* malloc that ends the test program (exit 2) when the host is out of memory. */
void *check_malloc(size_t bytes);

#define CHECK(cond) check_report(!!(cond), __FILE__, __LINE__, #cond, NULL)
#define CHECKF(cond, ...) check_report(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)
/* Status must be HB_SUCCESS; prints hb_last_error() otherwise. */
#define CHECK_OK(call)                                                                     \
    do {                                                                                   \
        hb_status_t check_status_ = (call);                                                \
        check_report(check_status_ == HB_SUCCESS, __FILE__, __LINE__, #call, "%s: %s",     \
                     hb_status_name(check_status_), hb_last_error());                      \
    } while (0)

#endif
