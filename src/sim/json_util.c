/* The JSON loaders' shared helpers (sim/json_util.h). */
#define _POSIX_C_SOURCE 200809L /* fstat, fileno */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <stdio.h>
#include <string.h>

#include "common/nearest_name.h"
#include "sim/json_util.h"

const char *hb_json_kind(const json_t *j)
{
    switch (json_typeof(j)) {
    case JSON_OBJECT: return "an object";
    case JSON_ARRAY: return "an array";
    case JSON_STRING: return "a string";
    case JSON_INTEGER:
    case JSON_REAL: return "a number";
    case JSON_TRUE:
    case JSON_FALSE: return "a boolean";
    case JSON_NULL: return "null";
    }
    return "?";
}

hb_status_t hb_json_fail(const hb_json_loader_t *ld, const char *path, const char *fmt, ...)
{
    char what[768];
    va_list args;
    va_start(args, fmt);
    vsnprintf(what, sizeof what, fmt, args);
    va_end(args);
    if (!path[0]) /* the object itself (hb_model_parse_json's cell) */
        return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s", ld->file, what);
    return hb_fail(HB_ERR_INVALID_VALUE, "%s: %s: %s", ld->file, path, what);
}

/* Marks a cut path ("...") when snprintf ran out of room. */
static void mark_cut(char *out, int written)
{
    if (written < 0 || written >= HB_JSON_PATH) memcpy(out + HB_JSON_PATH - 4, "...", 4);
}

/* "cells[0]" + ".mechanisms" etc. */
void hb_json_join(char *out, const char *path, const char *key)
{
    mark_cut(out, snprintf(out, HB_JSON_PATH, "%s%s%s", path, path[0] ? "." : "", key));
}

void hb_json_join_index(char *out, const char *path, size_t index)
{
    mark_cut(out, snprintf(out, HB_JSON_PATH, "%s[%zu]", path, index));
}

/* What model files of other simulators call an option (NEURON's tstop, v_init), or names a
 * user guesses, with the key we use; a suggestion only where that key is allowed. */
static const char *const aliases[][2] = {
    {"tstop", "t_stop"},         {"duration", "t_stop"},   {"tend", "t_stop"},
    {"t_end", "t_stop"},         {"v_rest", "v_init"},     {"vrest", "v_init"},
    {"v0", "v_init"},            {"vinit", "v_init"},      {"temperature", "celsius"},
    {"temp", "celsius"},         {"secondorder", "method"}, {"delay", "del"},
    {"duration", "dur"},         {"amplitude", "amp"},     {"threshold", "spike_threshold"},
    {"diameter", "diam"},        {"l", "length"},          {"e_pas", "e"},
    {"g_pas", "g"},              {"gnabar_hh", "gnabar"},
    {"gkbar_hh", "gkbar"},       {"gl_hh", "gl"},          {"el_hh", "el"},
    {"morph", "morphology"},     {"swc", "morphology"},    {"file", "morphology"},
};

/* Keys a user puts in the wrong place: where they belong, when `allowed` lacks them. */
static const char *const elsewhere[][2] = {
    {"nseg", "a cell's \"discretization\" or one of its \"regions\""},
    {"Ra", "a cell or one of its \"regions\""},
    {"cm", "a cell or one of its \"regions\""},
    {"t_stop", "the top level of the file"},
    {"dt", "the top level of the file"},
    {"v_init", "the top level of the file"},
    {"celsius", "the top level of the file"},
    {"morphology", "a cell (an entry of \"cells\")"},
};

/* The allowed key a misspelt `key` most likely meant (an alias, else the nearest within 2
 * edits and less than half the key's length), or NULL. */
static const char *nearest_key(const char *key, const char *const *allowed)
{
    for (size_t k = 0; k < sizeof aliases / sizeof *aliases; k++)
        if (hb_same_name(key, aliases[k][0]))
            for (const char *const *a = allowed; *a; a++)
                if (strcmp(*a, aliases[k][1]) == 0) return *a;
    return hb_nearest_name(key, allowed);
}

/* Every key of `obj` must be in the NULL-terminated list `allowed`. */
hb_status_t hb_json_check_keys(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                              const char *const *allowed)
{
    const char *key;
    json_t *value;
    json_object_foreach((json_t *)obj, key, value) {
        int known = 0;
        for (const char *const *a = allowed; *a && !known; a++) known = strcmp(key, *a) == 0;
        if (!known) {
            char list[512] = "", hint[160] = "";
            for (const char *const *a = allowed; *a; a++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", a == allowed ? "" : ", ", *a);
            const char *near = nearest_key(key, allowed);
            if (near) snprintf(hint, sizeof hint, "; did you mean \"%s\"?", near);
            for (size_t k = 0; !near && k < sizeof elsewhere / sizeof *elsewhere; k++)
                if (strcmp(key, elsewhere[k][0]) == 0)
                    snprintf(hint, sizeof hint, "; \"%s\" belongs in %s", key, elsewhere[k][1]);
            char at[HB_JSON_PATH];
            hb_json_join(at, path, key);
            return hb_json_fail(ld, at, "unknown key; expected one of: %s%s", list, hint);
        }
    }
    return HB_SUCCESS;
}

hb_status_t hb_json_need_object(const hb_json_loader_t *ld, const char *path, const json_t *j)
{
    if (!json_is_object(j)) return hb_json_fail(ld, path, "expected an object, found %s", hb_json_kind(j));
    return HB_SUCCESS;
}


/* obj[key] as a finite number in `range`; *out keeps its value when optional and absent. */
hb_status_t hb_json_number(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                              const char *key, int required, hb_json_range_t range, double *out)
{
    char at[HB_JSON_PATH];
    hb_json_join(at, path, key);
    const json_t *j = json_object_get(obj, key);
    static const char *const expect[] = {"a number", "a number > 0", "a number >= 0"};
    if (!j) return required ? hb_json_fail(ld, at, "missing; expected %s", expect[range]) : HB_SUCCESS;
    if (!json_is_number(j)) return hb_json_fail(ld, at, "expected %s, found %s", expect[range], hb_json_kind(j));
    double x = json_number_value(j);
    if (!isfinite(x) || (range == HB_JSON_POSITIVE && !(x > 0.0)) || (range == HB_JSON_NON_NEGATIVE && !(x >= 0.0)))
        return hb_json_fail(ld, at, "expected %s, found %g", expect[range], x);
    *out = x;
    return HB_SUCCESS;
}

hb_status_t hb_json_limited(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                            const char *key, int required, const hb_limit_t *limit, double *out)
{
    char at[HB_JSON_PATH], expect[128];
    hb_json_join(at, path, key);
    hb_limit_expect(limit, expect, sizeof expect);
    const json_t *j = json_object_get(obj, key);
    if (!j) return required ? hb_json_fail(ld, at, "missing; expected %s", expect) : HB_SUCCESS;
    if (!json_is_number(j)) return hb_json_fail(ld, at, "expected %s, found %s", expect, hb_json_kind(j));
    const double x = json_number_value(j);
    if (!hb_limit_ok(limit, x)) return hb_json_fail(ld, at, "expected %s, found %g", expect, x);
    *out = x;
    return HB_SUCCESS;
}

/* obj[key] as an integer in [lo, hi]. */
hb_status_t hb_json_int(const hb_json_loader_t *ld, const char *path, const json_t *obj, const char *key,
                           long lo, long hi, long *out)
{
    char at[HB_JSON_PATH];
    hb_json_join(at, path, key);
    const json_t *j = json_object_get(obj, key);
    if (!j) return HB_SUCCESS;
    if (!json_is_integer(j) || json_integer_value(j) < lo || json_integer_value(j) > hi)
        return hb_json_fail(ld, at, "expected an integer from %ld to %ld, found %s", lo, hi,
                       json_is_integer(j) ? "a number outside" : hb_json_kind(j));
    *out = (long)json_integer_value(j);
    return HB_SUCCESS;
}

/* obj[key] as one of `names` (NULL-terminated); *out is its index. */
hb_status_t hb_json_choice(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                              const char *key, const char *const *names, int *out)
{
    char at[HB_JSON_PATH], list[256] = "";
    hb_json_join(at, path, key);
    const json_t *j = json_object_get(obj, key);
    if (!j) return HB_SUCCESS;
    for (int k = 0; names[k]; k++) {
        if (json_is_string(j) && strcmp(json_string_value(j), names[k]) == 0) {
            *out = k;
            return HB_SUCCESS;
        }
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", k ? ", " : "", names[k]);
    }
    if (json_is_string(j)) return hb_json_fail(ld, at, "expected one of %s, found \"%s\"", list, json_string_value(j));
    return hb_json_fail(ld, at, "expected one of %s, found %s", list, hb_json_kind(j));
}

hb_status_t hb_json_array(const hb_json_loader_t *ld, const char *path, const json_t *obj,
                          const char *key, char *at, const json_t **list)
{
    hb_json_join(at, path, key);
    *list = json_object_get(obj, key);
    if (*list && !json_is_array(*list))
        return hb_json_fail(ld, at, "expected an array, found %s", hb_json_kind(*list));
    return HB_SUCCESS;
}

/* The folder of `path` (relative paths in the file start there). */
static void folder_of(const char *path, char *dir, size_t dir_size)
{
    snprintf(dir, dir_size, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash) *slash = '\0';
    else snprintf(dir, dir_size, ".");
}

static const char *file_kind(mode_t mode)
{
    return S_ISCHR(mode) ? "a character device" : S_ISBLK(mode) ? "a block device"
         : S_ISSOCK(mode) ? "a socket" : "not a regular file";
}

hb_status_t hb_model_file_read(const char *path, char **text, size_t *length)
{
    hb_clear_error();
    if (!text || !length || !path)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_model_file_read: NULL argument");
    *text = NULL;
    *length = 0;
    FILE *f = fopen(path, "rb");
    if (!f) return hb_fail(HB_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    if (fstat(fileno(f), &st) != 0) {
        fclose(f);
        return hb_fail(HB_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    }
    /* A pipe (a FIFO, `<(...)`, stdin) is read as it comes, once; a device is refused before
     * a byte is read: /dev/zero or /dev/urandom would never end. */
    if (S_ISDIR(st.st_mode)) {
        fclose(f);
        return hb_fail(HB_ERR_IO, "%s: is a directory; expected a model file (JSON)", path);
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) {
        fclose(f);
        return hb_fail(HB_ERR_IO, "%s: %s; expected a model file (JSON text: a regular file or "
                       "a pipe)", path, file_kind(st.st_mode));
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > HB_MODEL_MAX_BYTES) {
        fclose(f);
        return hb_fail(HB_ERR_IO, "%s: %jd bytes, too large; expected a model file of at most "
                       "%zu bytes (HB_MODEL_MAX_BYTES)", path, (intmax_t)st.st_size,
                       (size_t)HB_MODEL_MAX_BYTES);
    }
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536, n = 0;
    char *buf = malloc(cap + 1);
    hb_status_t status = buf ? HB_SUCCESS : hb_fail(HB_ERR_ALLOC, "%s: out of memory", path);
    while (status == HB_SUCCESS) {
        if (n == cap) { /* a pipe, or a file that grew: double, up to the limit and one byte */
            const size_t more = cap > HB_MODEL_MAX_BYTES / 2 ? HB_MODEL_MAX_BYTES + 1 : 2 * cap;
            char *grown = realloc(buf, more + 1);
            if (!grown) {
                status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", path);
                break;
            }
            buf = grown;
            cap = more;
        }
        const size_t want = cap - n, got = fread(buf + n, 1, want, f);
        const char *nul = memchr(buf + n, '\0', got);
        if (nul) {
            status = hb_fail(HB_ERR_PARSE, "%s: a NUL byte at offset %zu: binary, not JSON text; "
                             "expected a model file", path, (size_t)(nul - buf));
            break;
        }
        n += got;
        if (n > HB_MODEL_MAX_BYTES) {
            status = hb_fail(HB_ERR_IO, "%s: more than %zu bytes, too large; expected a model "
                             "file of at most that (HB_MODEL_MAX_BYTES)", path,
                             (size_t)HB_MODEL_MAX_BYTES);
            break;
        }
        if (got < want) break; /* the end, or an error (below) */
    }
    if (status == HB_SUCCESS && ferror(f))
        status = hb_fail(HB_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    fclose(f);
    if (status != HB_SUCCESS) {
        free(buf);
        return status;
    }
    buf[n] = '\0';
    *text = buf;
    *length = n;
    return HB_SUCCESS;
}

hb_status_t hb_model_text_free(char *text)
{
    free(text);
    return HB_SUCCESS;
}

hb_status_t hb_json_load_file(const char *path, char *dir, size_t dir_size, json_t **root)
{
    *root = NULL;
    folder_of(path, dir, dir_size);
    char *text = NULL;
    size_t length = 0;
    hb_status_t status = hb_model_file_read(path, &text, &length);
    if (status != HB_SUCCESS) return status;
    json_error_t err;
    *root = json_loadb(text, length, JSON_REJECT_DUPLICATES, &err);
    free(text);
    if (!*root) return hb_fail(HB_ERR_PARSE, "%s:%d:%d: %s", path, err.line, err.column, err.text);
    return HB_SUCCESS;
}

const char *hb_json_nearest(const char *name, const char *const *allowed)
{
    return name && allowed ? nearest_key(name, allowed) : NULL;
}
