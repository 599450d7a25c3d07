#define _POSIX_C_SOURCE 200809L
#include "common/status.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

#define HB_STATUS_TEXT_ENTRY(name, text) text,
#define HB_STATUS_NAME_ENTRY(name, text) #name,
static const char *const status_text[] = {HB_STATUS_LIST(HB_STATUS_TEXT_ENTRY)};
static const char *const status_names[] = {HB_STATUS_LIST(HB_STATUS_NAME_ENTRY)};

static _Thread_local char last_error[1024];

const char *hb_status_string(hb_status_t status)
{
    if ((int)status < 0 || status >= HB_STATUS_COUNT) return "unknown status";
    return status_text[status];
}

const char *hb_status_name(hb_status_t status)
{
    if ((int)status < 0 || status >= HB_STATUS_COUNT) return "HB_STATUS_UNKNOWN";
    return status_names[status];
}

const char *hb_last_error(void) { return last_error; }

void hb_clear_error(void) { last_error[0] = '\0'; }

hb_status_t hb_fail(hb_status_t status, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    vsnprintf(last_error, sizeof last_error, format, args);
    va_end(args);
    return status;
}

static hb_progress_fn progress_fn; /* set between builds, read during them */
static void *progress_user;

void hb_set_progress(hb_progress_fn fn, void *user)
{
    progress_fn = fn;
    progress_user = user;
}

int hb_progress_watched(void) { return progress_fn != NULL; }

int hb_progress_report(const char *what, long done, long total)
{
    return progress_fn ? progress_fn(progress_user, what, done, total) : 0;
}

double hb_clock_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
