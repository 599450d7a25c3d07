/* The NMODL front end's entry points (nmodl.h): a file's text through the lexer, the parser,
 * the checks and the code generator's check, and the C generator's entry. The stages call none
 * of each other; this file runs them in turn. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmodl/nmodl_internal.h"

typedef struct {
    hb_nmodl_mechanism_t mech; /* first: the caller's pointer is the owner's */
    nm_arena arena;
} owned;

hb_status_t hb_nmodl_parse(const char *path, const char *text, size_t length,
                           hb_nmodl_mechanism_t **out)
{
    if (!out) return hb_fail(HB_ERR_INVALID_VALUE, "hb_nmodl_parse: out is NULL");
    *out = NULL;
    if (!path || (!text && length))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_nmodl_parse: path or text is NULL");
    owned *o = calloc(1, sizeof *o);
    nm_ctx *c = calloc(1, sizeof *c);
    if (!o || !c) {
        free(o);
        free(c);
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory", path);
    }
    c->path = path;
    c->src = text ? text : "";
    c->length = length;
    if (setjmp(c->fail)) {
        const hb_status_t status =
            strstr(c->message, "out of memory") ? HB_ERR_ALLOC : HB_ERR_PARSE;
        hb_fail(status, "%s", c->message);
        nm_arena_free(&c->arena);
        free(c);
        free(o);
        return status;
    }
    nm_lex(c);
    nm_parse(c);
    hb_nmodl_mechanism_t *m = nm_check(c);
    if (!m->generator_blocker[0]) {
        const char *blocker = nm_generator_check(c, m);
        if (blocker) m->generator_blocker = blocker;
    }
    o->mech = *m;
    o->arena = c->arena;
    free(c);
    *out = &o->mech;
    return HB_SUCCESS;
}

hb_status_t hb_nmodl_read(const char *path, hb_nmodl_mechanism_t **out)
{
    if (!out) return hb_fail(HB_ERR_INVALID_VALUE, "hb_nmodl_read: out is NULL");
    *out = NULL;
    FILE *f = path ? fopen(path, "rb") : NULL;
    if (!f)
        return hb_fail(HB_ERR_IO, "%s: cannot open the file; expected a readable .mod file",
                       path ? path : "(null)");
    char *text = NULL;
    size_t length = 0, cap = 0;
    for (;;) {
        if (length == cap) {
            cap = cap ? 2 * cap : 65536;
            char *more = cap > ((size_t)64 << 20) ? NULL : realloc(text, cap);
            if (!more) {
                free(text);
                fclose(f);
                return hb_fail(HB_ERR_IO,
                               "%s: larger than 64 MiB or out of memory; expected a .mod file",
                               path);
            }
            text = more;
        }
        const size_t got = fread(text + length, 1, cap - length, f);
        length += got;
        if (got == 0) break;
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(text);
        return hb_fail(HB_ERR_IO, "%s: read error", path);
    }
    const hb_status_t status = hb_nmodl_parse(path, text, length, out);
    free(text);
    return status;
}

void hb_nmodl_destroy(hb_nmodl_mechanism_t *mech)
{
    if (!mech) return;
    owned *o = (owned *)mech;
    nm_arena_free(&o->arena);
    free(o);
}

const hb_nmodl_var_t *hb_nmodl_find(const hb_nmodl_var_t *vars, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(vars[i].name, name) == 0) return &vars[i];
    return NULL;
}

hb_status_t hb_nmodl_emit_c(const char *path, const char *text, size_t length, const char *prefix,
                            FILE *out)
{
    if (!path || !out || !prefix || (!text && length))
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_nmodl_emit_c: a NULL argument");
    nm_ctx *c = calloc(1, sizeof *c);
    if (!c) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", path);
    c->path = path;
    c->src = text ? text : "";
    c->length = length;
    if (setjmp(c->fail)) {
        hb_fail(HB_ERR_PARSE, "%s", c->message);
        nm_arena_free(&c->arena);
        free(c);
        return HB_ERR_PARSE;
    }
    nm_lex(c);
    nm_parse(c);
    nm_emit(c, nm_check(c), prefix, out);
    nm_arena_free(&c->arena);
    free(c);
    return HB_SUCCESS;
}
