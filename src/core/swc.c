/*
 * SWC reader: text -> hb_sample_t array -> hb_morph_from_samples.
 *
 * A line is "id type x y z radius parent"; '#' starts a comment anywhere;
 * blank lines are skipped; LF, CRLF and CR all end a line. Fields after the
 * 7th are ignored. The reader never trusts the input: every field is checked,
 * NUL and control bytes are rejected (binary files fail at their first bad
 * line), and the text need not be NUL-terminated. The rules are documented in
 * docs/swc.md.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/morphology.h"
#include "common/status.h"

#define SWC_FIELDS 7
#define DEFAULT_MAX_TYPE 19 /* MorphIO's largest SWC type */
/* Largest integer that an exponent-form field ("1.0e+003") still holds exactly. */
#define EXACT_INTEGER_LIMIT 9007199254740992.0 /* 2^53 */
/* Characters of a bad field quoted in a message. */
#define QUOTE_MAX 40
/* Tokens up to this length are parsed from a stack copy. */
#define TOKEN_STACK 128
#define READ_CHUNK ((size_t)1 << 16)

static const char *const field_names[SWC_FIELDS] = {"id", "type", "x", "y",
                                                    "z", "radius", "parent"};

typedef struct {
    const char *begin;
    size_t length;
} token_t;

typedef struct {
    const char *name; /* file or caller-given name, for messages */
    long line;        /* current line, 1-based */
    const hb_swc_options_t *options;
    hb_sample_t *samples;
    int count;
    int capacity;
} reader_t;

void hb_swc_options_default(hb_swc_options_t *options)
{
    if (!options) return;
    options->units = HB_UNITS_UM;
    options->max_type = DEFAULT_MAX_TYPE;
    options->sections = HB_SECTIONS_HINESBATCH;
    options->keep_zero_radius = 0;
}

/* ---- fields ---- */

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\v' || c == '\f'; }

/* Copies a token into `out` (at most QUOTE_MAX bytes shown), escaping
 * non-printable bytes, so that garbage reads safely in a message. */
static const char *quote(const token_t *t, char *out, size_t size)
{
    size_t used = 0;
    for (size_t i = 0; i < t->length && i < QUOTE_MAX && used + 5 < size; i++) {
        unsigned char c = (unsigned char)t->begin[i];
        if (c >= 0x20 && c < 0x7f && c != '\'') {
            out[used++] = (char)c;
        } else {
            snprintf(out + used, size - used, "\\x%02x", c);
            used += 4;
        }
    }
    if (t->length > QUOTE_MAX && used + 4 < size) {
        memcpy(out + used, "...", 3);
        used += 3;
    }
    out[used] = '\0';
    return out;
}

typedef enum { NUM_OK, NUM_BAD, NUM_RANGE, NUM_ALLOC } number_status_t;

static int is_number_char(char c) { return c != '\0' && strchr("0123456789+-.eE", c) != NULL; }

/*
 * Decimal number in strtod's syntax, but only [0-9+-.eE] (no hex, inf, nan),
 * finite, and using the whole token. The token is copied, since the text
 * need not be NUL-terminated; long tokens go to the heap.
 */
static number_status_t parse_double(const token_t *t, double *value)
{
    for (size_t i = 0; i < t->length; i++)
        if (!is_number_char(t->begin[i])) return NUM_BAD;
    char small[TOKEN_STACK];
    char *copy = t->length < sizeof small ? small : malloc(t->length + 1);
    if (!copy) return NUM_ALLOC;
    memcpy(copy, t->begin, t->length);
    copy[t->length] = '\0';
    char *end;
    double v = strtod(copy, &end);
    number_status_t st = NUM_OK;
    if (t->length == 0 || end != copy + t->length) st = NUM_BAD;
    else if (!isfinite(v)) st = NUM_RANGE; /* overflow gives HUGE_VAL */
    if (copy != small) free(copy);
    *value = v;
    return st;
}

/* An integer field: plain digits ("12", "-1") or an integral number in
 * exponent form ("1.0000000e+000", as the TREES toolbox writes). */
static number_status_t parse_integer(const token_t *t, long *value)
{
    size_t sign = t->length > 0 && (t->begin[0] == '-' || t->begin[0] == '+');
    size_t digits = 0;
    while (sign + digits < t->length && t->begin[sign + digits] >= '0' &&
           t->begin[sign + digits] <= '9')
        digits++;
    if (digits > 0 && sign + digits == t->length) {
        /* Exact: accumulate with an overflow check instead of strtol, which
         * would need a NUL-terminated copy. */
        int negative = t->begin[0] == '-';
        unsigned long magnitude_max = (unsigned long)LONG_MAX + (negative ? 1ul : 0ul);
        unsigned long acc = 0;
        for (size_t i = sign; i < t->length; i++) {
            unsigned d = (unsigned)(t->begin[i] - '0');
            if (acc > (magnitude_max - d) / 10) return NUM_RANGE;
            acc = acc * 10 + d;
        }
        if (!negative) *value = (long)acc;
        else if (acc > (unsigned long)LONG_MAX) *value = LONG_MIN;
        else *value = -(long)acc;
        return NUM_OK;
    }
    double v;
    number_status_t st = parse_double(t, &v);
    if (st != NUM_OK) return st;
    if (v != floor(v)) return NUM_BAD;
    if (fabs(v) > EXACT_INTEGER_LIMIT) return NUM_RANGE;
    *value = (long)v;
    return NUM_OK;
}

/* "PATH:LINE: field N (name) is 'TEXT', expected WHAT". */
static hb_status_t fail_field(const reader_t *r, int field, const token_t *t,
                              number_status_t why, const char *expected)
{
    char text[QUOTE_MAX * 4 + 8];
    if (why == NUM_ALLOC)
        return hb_fail(HB_ERR_ALLOC, "%s:%ld: out of memory reading field %d (%s)", r->name,
                       r->line, field + 1, field_names[field]);
    return hb_fail(HB_ERR_PARSE, "%s:%ld: field %d (%s) is '%s', expected %s%s", r->name,
                   r->line, field + 1, field_names[field], quote(t, text, sizeof text),
                   expected, why == NUM_RANGE ? " (out of range)" : "");
}

/* Reads one integer field and checks lo <= value <= hi (or value == -1
 * when allow_minus_one). */
static hb_status_t read_integer(const reader_t *r, int field, const token_t *t, long lo,
                                long hi, int allow_minus_one, const char *expected, long *out)
{
    number_status_t st = parse_integer(t, out);
    /* An integer outside the accepted values: the message says what is accepted. */
    if (st == NUM_OK && (*out < lo || *out > hi) && !(allow_minus_one && *out == -1))
        st = NUM_BAD;
    return st == NUM_OK ? HB_SUCCESS : fail_field(r, field, t, st, expected);
}

static hb_status_t read_real(const reader_t *r, int field, const token_t *t, double lo,
                             const char *expected, double *out)
{
    number_status_t st = parse_double(t, out);
    if (st == NUM_OK && *out < lo) st = NUM_BAD;
    return st == NUM_OK ? HB_SUCCESS : fail_field(r, field, t, st, expected);
}

/* ---- lines ---- */

static hb_status_t append_sample(reader_t *r, const hb_sample_t *s)
{
    if (r->count == r->capacity) {
        if (r->capacity == INT_MAX)
            return hb_fail(HB_ERR_PARSE, "%s:%ld: more than %d samples; not supported", r->name,
                           r->line, INT_MAX);
        int grown = r->capacity < 1024 ? 1024
                    : r->capacity > INT_MAX / 2 ? INT_MAX
                                                : r->capacity * 2;
        if ((size_t)grown > SIZE_MAX / sizeof *r->samples)
            return hb_fail(HB_ERR_ALLOC, "%s: out of memory for %d samples", r->name, grown);
        hb_sample_t *more = realloc(r->samples, (size_t)grown * sizeof *more);
        if (!more)
            return hb_fail(HB_ERR_ALLOC, "%s:%ld: out of memory for %d samples", r->name,
                           r->line, grown);
        r->samples = more;
        r->capacity = grown;
    }
    r->samples[r->count++] = *s;
    return HB_SUCCESS;
}

/* Parses the data part of one line (comment already cut off). */
static hb_status_t parse_line(reader_t *r, const char *p, const char *end)
{
    token_t tok[SWC_FIELDS];
    int n = 0; /* fields after the 7th are ignored (extended SWC variants) */
    while (p < end) {
        while (p < end && is_blank(*p)) p++;
        if (p == end) break;
        const char *begin = p;
        while (p < end && !is_blank(*p)) p++;
        if (n < SWC_FIELDS) {
            tok[n].begin = begin;
            tok[n].length = (size_t)(p - begin);
            n++;
        }
    }
    if (n == 0) return HB_SUCCESS;
    if (n < SWC_FIELDS)
        return hb_fail(HB_ERR_PARSE,
                       "%s:%ld: expected 7 fields (id type x y z radius parent), found %d",
                       r->name, r->line, n);

    const hb_swc_options_t *o = r->options;
    hb_sample_t s;
    long type;
    double xyzr[4];
    hb_status_t st = read_integer(r, 0, &tok[0], 0, LONG_MAX, 0, "an integer >= 0", &s.id);
    if (st == HB_SUCCESS) {
        number_status_t ts = parse_integer(&tok[1], &type);
        if (ts == NUM_OK && (type < 0 || type > o->max_type)) ts = NUM_BAD;
        if (ts != NUM_OK) {
            char range[64];
            snprintf(range, sizeof range, "an integer from 0 to %d (SWC structure type)",
                     o->max_type);
            return fail_field(r, 1, &tok[1], ts, range);
        }
    }
    for (int f = 2; f < 6 && st == HB_SUCCESS; f++)
        st = read_real(r, f, &tok[f], f == 5 ? 0.0 : -HUGE_VAL,
                       f == 5 ? "a number >= 0" : "a finite number", &xyzr[f - 2]);
    if (st == HB_SUCCESS)
        st = read_integer(r, 6, &tok[6], 0, LONG_MAX, 1,
                          "-1 for the root or a sample id (an integer >= 0)", &s.parent);
    if (st != HB_SUCCESS) return st;
    double per_um = o->units == HB_UNITS_NM ? 1000.0 : 1.0; /* file units per um */
    s.type = (int)type;
    s.x = xyzr[0] / per_um;
    s.y = xyzr[1] / per_um;
    s.z = xyzr[2] / per_um;
    s.radius = xyzr[3] / per_um;
    s.line = r->line;
    return append_sample(r, &s);
}

/* Rejects NUL and control bytes: they never occur in SWC text, and the
 * first one pinpoints a binary file. Comments may hold other bytes. */
static hb_status_t check_bytes(const reader_t *r, const char *begin, const char *data_end,
                               const char *line_end)
{
    for (const char *p = begin; p < line_end; p++) {
        unsigned char c = (unsigned char)*p;
        int bad = c == 0 || (p < data_end && ((c < 0x20 && !is_blank((char)c)) || c == 0x7f));
        if (bad)
            return hb_fail(HB_ERR_PARSE,
                           "%s:%ld: byte 0x%02x at column %ld; expected SWC text (is this a "
                           "binary file?)",
                           r->name, r->line, c, (long)(p - begin) + 1);
    }
    return HB_SUCCESS;
}

static hb_status_t parse_text(reader_t *r, const char *text, size_t length)
{
    const char *p = text, *end = text + length;
    r->line = 1;
    while (p < end) {
        /* The line ends at LF, CR or the end; CRLF counts once. */
        const char *line_end = p;
        while (line_end < end && *line_end != '\n' && *line_end != '\r') line_end++;
        const char *hash = memchr(p, '#', (size_t)(line_end - p));
        const char *data_end = hash ? hash : line_end;
        hb_status_t st = check_bytes(r, p, data_end, line_end);
        if (st == HB_SUCCESS) st = parse_line(r, p, data_end);
        if (st != HB_SUCCESS) return st;
        p = line_end;
        if (p < end && *p++ == '\r' && p < end && *p == '\n') p++; /* CRLF */
        r->line++;
    }
    return HB_SUCCESS;
}

/* ---- public API ---- */

static hb_status_t check_options(const char *name, const hb_swc_options_t *options)
{
    if (options->units != HB_UNITS_UM && options->units != HB_UNITS_NM)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: units %d; expected HB_UNITS_UM or HB_UNITS_NM",
                       name, (int)options->units);
    if (options->max_type < 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: max_type %d; expected a type code >= 0", name,
                       options->max_type);
    return HB_SUCCESS;
}

/* Text to samples, with the arguments already checked. */
static hb_status_t read_samples(reader_t *r, const char *text, size_t length)
{
    hb_status_t st = parse_text(r, text ? text : "", length);
    if (st == HB_SUCCESS && r->count == 0)
        st = hb_fail(HB_ERR_PARSE,
                     "%s: no samples; expected lines of 7 fields (id type x y z radius parent)",
                     r->name);
    return st;
}

/* Common argument checks; fills *options with defaults when NULL. */
static hb_status_t check_call(const char *function, hb_morph_t **morph, const char *name,
                              const hb_swc_options_t **options, hb_swc_options_t *defaults)
{
    if (!morph) return hb_fail(HB_ERR_INVALID_VALUE, "%s: morph is NULL", function);
    *morph = NULL;
    hb_swc_options_default(defaults);
    if (!*options) *options = defaults;
    return check_options(name, *options);
}

hb_status_t hb_morph_parse_swc(const char *text, size_t length, const char *name,
                               const hb_swc_options_t *options, hb_morph_t **morph)
{
    hb_clear_error();
    hb_swc_options_t defaults;
    if (!name) name = "<swc text>";
    hb_status_t st = check_call("hb_morph_parse_swc", morph, name, &options, &defaults);
    if (st != HB_SUCCESS) return st;
    if (!text && length > 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_parse_swc: %s: text is NULL", name);
    reader_t r = {name, 0, options, NULL, 0, 0};
    st = read_samples(&r, text, length);
    if (st == HB_SUCCESS) st = hb_morph_build(r.samples, r.count, name, options, morph);
    free(r.samples);
    return st;
}

/* Reads a whole file (any size the memory allows; works for pipes too). */
static hb_status_t read_file(const char *path, char **text, size_t *length)
{
    *text = NULL;
    *length = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return hb_fail(HB_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t size = 0, capacity = 0;
    char *buf = NULL;
    hb_status_t st = HB_SUCCESS;
    /* A regular file's size (a hint: special files may report anything)
     * saves growing the buffer. It is used only once a first chunk has been
     * read, so a directory fails on reading, not on a huge allocation. */
    long hint = fseek(f, 0, SEEK_END) == 0 ? ftell(f) : -1;
    if (hint < 0 || fseek(f, 0, SEEK_SET) != 0) {
        clearerr(f);
        hint = 0;
    }
    for (;;) {
        if (size == capacity) {
            size_t doubled = capacity ? capacity * 2 : READ_CHUNK;
            size_t grown = capacity && (size_t)hint >= capacity ? (size_t)hint + 1 : doubled;
            char *more = grown > capacity ? realloc(buf, grown) : NULL;
            if (!more && grown != doubled && doubled > capacity) /* a bad hint */
                more = realloc(buf, grown = doubled);
            if (!more) {
                st = hb_fail(HB_ERR_ALLOC, "%s: out of memory reading the file (%zu bytes so far)",
                             path, size);
                break;
            }
            buf = more;
            capacity = grown;
        }
        size_t got = fread(buf + size, 1, capacity - size, f);
        size += got;
        if (got == 0) {
            if (ferror(f)) st = hb_fail(HB_ERR_IO, "%s: read error: %s", path, strerror(errno));
            break;
        }
    }
    fclose(f);
    if (st != HB_SUCCESS) {
        free(buf);
        return st;
    }
    *text = buf;
    *length = size;
    return HB_SUCCESS;
}

hb_status_t hb_morph_load_swc(const char *path, const hb_swc_options_t *options,
                              hb_morph_t **morph)
{
    hb_clear_error();
    hb_swc_options_t defaults;
    if (!path) {
        if (morph) *morph = NULL;
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_load_swc: path is NULL");
    }
    hb_status_t st = check_call("hb_morph_load_swc", morph, path, &options, &defaults);
    if (st != HB_SUCCESS) return st;
    char *text;
    size_t length;
    st = read_file(path, &text, &length);
    if (st != HB_SUCCESS) return st;
    reader_t r = {path, 0, options, NULL, 0, 0};
    st = read_samples(&r, text, length);
    free(text); /* before building: the text is the largest buffer */
    if (st == HB_SUCCESS) st = hb_morph_build(r.samples, r.count, path, options, morph);
    free(r.samples);
    return st;
}
