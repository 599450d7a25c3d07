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
/* Characters of a bad field quoted in a message. */
#define QUOTE_MAX 40
/* Tokens up to this length are parsed from a stack copy. */
#define TOKEN_STACK 128
#define READ_CHUNK ((size_t)1 << 16)
/* Longest line of a file (the streaming reader holds one line). */
#define MAX_LINE_BYTES (16 << 20)

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

/* Exponents beyond this are saturated: they only decide zero or out of range. */
#define EXPONENT_CLAMP 100000000L

/*
 * An integer field: plain digits ("12", "-1") or an integral number in
 * decimal or exponent form ("1.0000000e+000", as the TREES toolbox writes).
 * Decided on the digits, not through a double, so that every accepted value
 * is exact: "9007199254740993e0" is 9007199254740993, "1.5" and
 * "4503599627370496.5" are not integers, and anything beyond `long` is out of
 * range.
 */
static number_status_t parse_integer(const token_t *t, long *value)
{
    const char *p = t->begin, *end = t->begin + t->length;
    int negative = p < end && *p == '-';
    if (p < end && (*p == '-' || *p == '+')) p++;
    const char *digits = p;
    size_t before_point = 0, n_digits = 0;
    while (p < end && *p >= '0' && *p <= '9') p++, before_point++;
    const char *point = NULL;
    if (p < end && *p == '.') {
        point = p++;
        while (p < end && *p >= '0' && *p <= '9') p++;
    }
    const char *mantissa_end = p;
    n_digits = (size_t)(mantissa_end - digits) - (point != NULL);
    if (n_digits == 0) return NUM_BAD;
    long exponent = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int exp_negative = p < end && *p == '-';
        if (p < end && (*p == '-' || *p == '+')) p++;
        if (p == end) return NUM_BAD;
        for (; p < end && *p >= '0' && *p <= '9'; p++)
            if (exponent < EXPONENT_CLAMP) exponent = exponent * 10 + (*p - '0');
        if (exp_negative) exponent = -exponent;
    }
    if (p != end) return NUM_BAD;
    /* Digit k (0-based, the point skipped) is an integer digit when
     * k < before_point + exponent, else a fractional one, which must be 0. */
    long long integer_digits = (long long)(before_point < (size_t)EXPONENT_CLAMP
                                               ? before_point
                                               : (size_t)EXPONENT_CLAMP) +
                               exponent;
    unsigned long magnitude_max = (unsigned long)LONG_MAX + (negative ? 1ul : 0ul);
    unsigned long acc = 0;
    int range = 0;
    long long k = 0;
    for (const char *q = digits; q < mantissa_end; q++) {
        if (q == point) continue;
        unsigned d = (unsigned)(*q - '0');
        if (k++ >= integer_digits) {
            if (d != 0) return NUM_BAD;
            continue;
        }
        if (acc > (magnitude_max - d) / 10) range = 1;
        else acc = acc * 10 + d;
    }
    /* Trailing zeros of the exponent: at most 20 before any non-zero value overflows. */
    for (; k < integer_digits && acc != 0 && !range; k++) {
        if (acc > magnitude_max / 10) range = 1;
        else acc *= 10;
    }
    if (range) return NUM_RANGE;
    if (!negative) *value = (long)acc;
    else if (acc > (unsigned long)LONG_MAX) *value = LONG_MIN;
    else *value = -(long)acc;
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
    if (o->single_points) { /* NEURON's read_swc.hoc reads each number with hoc's float %f */
        double *v[4] = {&s.x, &s.y, &s.z, &s.radius};
        for (int f = 0; f < 4; f++) {
            *v[f] = hb_morph_as_float(*v[f]);
            if (!isfinite(*v[f]))
                return fail_field(r, f + 2, &tok[f + 2], NUM_RANGE,
                                  "a number single precision holds (single_points: NEURON's float "
                                  "3-D points)");
        }
    }
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

/* One line [p, line_end) without its line break. */
static hb_status_t parse_one_line(reader_t *r, const char *p, const char *line_end)
{
    const char *hash = memchr(p, '#', (size_t)(line_end - p));
    const char *data_end = hash ? hash : line_end;
    hb_status_t st = check_bytes(r, p, data_end, line_end);
    return st == HB_SUCCESS ? parse_line(r, p, data_end) : st;
}

/*
 * Parses the complete lines of [text, text + length) and returns how many
 * bytes they took (line breaks included). With `final`, the rest is a last
 * line without a break; otherwise it stays for the next call, and so does a
 * CR at the very end (it may be the first half of a CRLF).
 */
static hb_status_t parse_lines(reader_t *r, const char *text, size_t length, int final,
                               size_t *used)
{
    const char *p = text, *end = text + length;
    hb_status_t st = HB_SUCCESS;
    while (p < end && st == HB_SUCCESS) {
        /* The line ends at LF, CR or the end; CRLF counts once. */
        const char *line_end = p;
        while (line_end < end && *line_end != '\n' && *line_end != '\r') line_end++;
        if (!final && (line_end == end || (*line_end == '\r' && line_end + 1 == end))) break;
        st = parse_one_line(r, p, line_end);
        p = line_end;
        if (p < end && *p++ == '\r' && p < end && *p == '\n') p++; /* CRLF */
        r->line++;
    }
    *used = (size_t)(p - text);
    return st;
}

static hb_status_t parse_text(reader_t *r, const char *text, size_t length)
{
    size_t used;
    r->line = 1;
    return parse_lines(r, text, length, 1, &used);
}

/* ---- plausibility ---- */

/* A neuron spans at most a few mm and its neurites are a few um thick: a file read in um
 * that spans more than 10 cm, or whose neurites' median radius exceeds 50 um, is most likely
 * in nm (FlyWire, EM skeletons). */
#define NM_EXTENT_UM 1e5
#define NM_MEDIAN_RADIUS_UM 50.0

static int compare_double(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* A warning when the sizes of a morphology read in um say nanometres. */
static hb_status_t warn_if_nanometres(hb_morph_t *m)
{
    double lo[3] = {HUGE_VAL, HUGE_VAL, HUGE_VAL}, hi[3] = {-HUGE_VAL, -HUGE_VAL, -HUGE_VAL};
    double *radii = malloc((size_t)m->n_samples * sizeof *radii);
    if (!radii) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", m->name);
    int n = 0;
    for (int i = 0; i < m->n_samples; i++) {
        const hb_sample_t *s = &m->samples[i];
        const double p[3] = {s->x, s->y, s->z};
        for (int k = 0; k < 3; k++) {
            if (p[k] < lo[k]) lo[k] = p[k];
            if (p[k] > hi[k]) hi[k] = p[k];
        }
        if (s->type != 1) radii[n++] = s->radius; /* neurites: a soma may be large */
    }
    double extent = 0.0, median = 0.0;
    for (int k = 0; k < 3; k++) extent += (hi[k] - lo[k]) * (hi[k] - lo[k]);
    extent = sqrt(extent);
    if (n > 0) {
        qsort(radii, (size_t)n, sizeof *radii, compare_double);
        median = n % 2 ? radii[n / 2] : 0.5 * (radii[n / 2 - 1] + radii[n / 2]);
    }
    free(radii);
    if (!(extent > NM_EXTENT_UM) && !(median > NM_MEDIAN_RADIUS_UM)) return HB_SUCCESS;
    return hb_morph_warn(m, 0, "spans %.4g um with a median neurite radius of %.3g um, but a "
                         "neuron spans at most a few mm and its neurites are a few um thick: are "
                         "the coordinates in nanometres? Then read the file with units nm "
                         "(hinesbatch --units nm; a model file's cell: \"units\": \"nm\")",
                         extent, median);
}

/* hb_morph_build, then the plausibility warning of units um. */
static hb_status_t build(const reader_t *r, const char *name, const hb_swc_options_t *options,
                         hb_morph_t **morph)
{
    hb_status_t st = hb_morph_build(r->samples, r->count, name, options, morph);
    if (st == HB_SUCCESS && options->units == HB_UNITS_UM && (st = warn_if_nanometres(*morph))) {
        hb_morph_destroy(*morph);
        *morph = NULL;
    }
    return st;
}

/* ---- public API ---- */

static hb_status_t check_options(const char *name, const hb_swc_options_t *options)
{
    if (options->units != HB_UNITS_UM && options->units != HB_UNITS_NM)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: units %d; expected HB_UNITS_UM or HB_UNITS_NM",
                       name, (int)options->units);
    if (options->single_points != 0 && options->single_points != 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: single_points %d; expected 0 or 1", name,
                       options->single_points);
    if (options->max_type < 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: max_type %d; expected a type code >= 0", name,
                       options->max_type);
    return HB_SUCCESS;
}

/* A file or text without a single sample is an error. */
static hb_status_t need_samples(const reader_t *r)
{
    if (r->count > 0) return HB_SUCCESS;
    return hb_fail(HB_ERR_PARSE,
                   "%s: no samples; expected lines of 7 fields (id type x y z radius parent)",
                   r->name);
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
    st = parse_text(&r, text ? text : "", length);
    if (st == HB_SUCCESS) st = need_samples(&r);
    if (st == HB_SUCCESS) st = build(&r, name, options, morph);
    free(r.samples);
    return st;
}

/*
 * Streams a file through the parser a chunk at a time (works for pipes and
 * devices too), so that memory holds the samples and one line, never the
 * file. A line still incomplete is checked for bad bytes as it arrives:
 * binary data (a NUL-filled file, /dev/zero) fails within the first chunk.
 */
static hb_status_t parse_file(reader_t *r, FILE *f)
{
    char *buf = malloc(READ_CHUNK);
    size_t capacity = READ_CHUNK, filled = 0;
    hb_status_t st = buf ? HB_SUCCESS
                         : hb_fail(HB_ERR_ALLOC, "%s: out of memory for the read buffer", r->name);
    r->line = 1;
    for (int eof = 0; st == HB_SUCCESS && !eof;) {
        if (filled == capacity) { /* one line fills the buffer */
            if (capacity >= MAX_LINE_BYTES) {
                st = hb_fail(HB_ERR_PARSE,
                             "%s:%ld: line longer than %d bytes; expected SWC lines (is this "
                             "a text file?)",
                             r->name, r->line, MAX_LINE_BYTES);
                break;
            }
            char *more = realloc(buf, capacity * 2);
            if (!more) {
                st = hb_fail(HB_ERR_ALLOC, "%s:%ld: out of memory for a line of %zu bytes",
                             r->name, r->line, capacity);
                break;
            }
            buf = more;
            capacity *= 2;
        }
        size_t got = fread(buf + filled, 1, capacity - filled, f);
        if (got == 0) {
            if (ferror(f)) {
                st = hb_fail(HB_ERR_IO, "%s: read error: %s", r->name, strerror(errno));
                break;
            }
            eof = 1;
        }
        filled += got;
        size_t used;
        st = parse_lines(r, buf, filled, eof, &used);
        memmove(buf, buf + used, filled - used);
        filled -= used;
        /* The incomplete line (without a CR that may start a CRLF): bad bytes so far. */
        size_t tail = filled - (filled > 0 && buf[filled - 1] == '\r');
        if (st == HB_SUCCESS && tail > 0) {
            const char *hash = memchr(buf, '#', tail);
            st = check_bytes(r, buf, hash ? hash : buf + tail, buf + tail);
        }
    }
    free(buf);
    return st;
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
    FILE *f = fopen(path, "rb");
    if (!f) return hb_fail(HB_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    reader_t r = {path, 0, options, NULL, 0, 0};
    st = parse_file(&r, f);
    fclose(f);
    if (st == HB_SUCCESS) st = need_samples(&r);
    if (st == HB_SUCCESS) st = build(&r, path, options, morph);
    free(r.samples);
    return st;
}
