/* Internal error reporting: every failing call records a detailed message. */
#ifndef HB_COMMON_STATUS_H
#define HB_COMMON_STATUS_H

#include "hinesbatch.h"

#if defined(__GNUC__)
#define HB_PRINTF(fmt_index, first_arg) __attribute__((format(printf, fmt_index, first_arg)))
#else
#define HB_PRINTF(fmt_index, first_arg)
#endif

/* Record a formatted message for hb_last_error() and return `status`. */
hb_status_t hb_fail(hb_status_t status, const char *format, ...) HB_PRINTF(2, 3);
/* Clear the message (called on entry by functions that can fail). */
void hb_clear_error(void);

/* The hook of hb_set_progress: set or not, and a report to it (non-zero: stop). */
int hb_progress_watched(void);
int hb_progress_report(const char *what, long done, long total);

/* Monotonic wall clock [s]. */
double hb_clock_seconds(void);

#endif
