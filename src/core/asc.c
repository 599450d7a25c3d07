/*
 * Neurolucida ASC (V3 text) morphologies, read as NEURON 8.2's Import3d_Neurolucida3 reads them
 * (read_nlcda3.hoc: the grammar and how trees become sections, connect2soma) and as Import3d_GUI
 * instantiates them (chk_valid, contour2centroid, contourstack2centroid): the same sections in
 * the same order, the same 3-D points. docs/asc.md says what is followed and what is refused.
 *
 * Text -> tokens (lex) -> sections of raw points (parse) -> the soma contour(s) to a centroid,
 * trees connected to it (soma) -> Import3d's checks (chk_valid) -> hb_morph (emit).
 */
#include <ctype.h>
#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "core/morphology.h"

#define ASC_MAX_DEPTH 2000 /* nesting of ( ... ) a file may use: the parser recurses */
#define ASC_PI 3.14159265358979323846

/* ---- tokens ---- */

typedef enum { T_EOF, T_NUM, T_LP, T_RP, T_COMMA, T_BAR, T_SET, T_RGB, T_STR, T_LABEL, T_LSP, T_RSP } kind_t;

typedef struct {
    kind_t kind;
    double x;          /* T_NUM */
    const char *s;     /* T_STR (inside the quotes), T_LABEL, T_NUM: the text */
    int len;
    long line, col;    /* 1-based */
} tok_t;

/* ---- sections as Import3d_Section holds them ---- */

typedef struct {
    double x, y, z, d; /* [um] */
    long line;
} pt_t;

typedef struct {
    int type;        /* 1 soma, 2 axon, 3 dendrite, 4 apical, 0 none */
    int parent;      /* index into the section list, -1 for none */
    double parentx;  /* 1, or 0.5 on the soma */
    int first;       /* 1: raw point 0 is a wire to the soma centre, not a 3-D point */
    int contour;     /* a CellBody contour */
    int stack_next;  /* the next contour of this soma's contour stack, -1 for none */
    int subsidiary;  /* a contour of another contour's stack */
    int removed;     /* chk_valid removed it */
    int n, cap;
    pt_t *pt;
    long line;       /* the line of the tree or contour */
} asec_t;

typedef struct {
    const char *name;
    const hb_swc_options_t *opt;
    hb_morph_t *m;   /* for warnings */
    tok_t *tok;
    long n_tok, cap_tok;
    long i;          /* current token */
    int depth;
    int in_text; /* inside text()'s attempt: objects there are not tried as texts again */
    asec_t *sec;
    int n_sec, cap_sec;
    int parent;      /* parentsec while parsing a tree */
    int sectype;
    const char *last_prop; /* label of the last property read (set_sectype) */
    int last_prop_len;
    int n_spines;
} asc_t;

static hb_status_t oom(const asc_t *a)
{
    return hb_fail(HB_ERR_ALLOC, "%s: out of memory reading Neurolucida ASC", a->name);
}

/* ---- lexer ---- */

static int is_label_char(int c) { return isalnum(c) || c == '_'; }

static hb_status_t push_tok(asc_t *a, tok_t t)
{
    if (a->n_tok == a->cap_tok) {
        long cap = a->cap_tok ? 2 * a->cap_tok : 1024;
        tok_t *p = realloc(a->tok, (size_t)cap * sizeof *p);
        if (!p) return oom(a);
        a->tok = p;
        a->cap_tok = cap;
    }
    a->tok[a->n_tok++] = t;
    return HB_SUCCESS;
}

static hb_status_t lex(asc_t *a, const char *text, size_t length)
{
    long line = 1;
    size_t bol = 0; /* offset of the line's first byte */
    size_t i = 0;
    while (i < length) {
        unsigned char c = (unsigned char)text[i];
        long col = (long)(i - bol) + 1;
        if (c == '\n' || c == '\r') {
            i += c == '\r' && i + 1 < length && text[i + 1] == '\n' ? 2 : 1;
            line++;
            bol = i;
            continue;
        }
        if (c == ' ' || c == '\t' || c == '\v' || c == '\f') {
            i++;
            continue;
        }
        if (c == ';') { /* a comment to the end of the line */
            while (i < length && text[i] != '\n' && text[i] != '\r') i++;
            continue;
        }
        tok_t t = {T_EOF, 0.0, text + i, 1, line, col};
        switch (c) {
        case '(': t.kind = T_LP; break;
        case ')': t.kind = T_RP; break;
        case ',': t.kind = T_COMMA; break;
        case '|': t.kind = T_BAR; break;
        case '<': t.kind = T_LSP; break;
        case '>': t.kind = T_RSP; break;
        default: break;
        }
        if (t.kind != T_EOF) {
            i++;
        } else if (c == '"') {
            size_t j = i + 1;
            while (j < length && text[j] != '"' && text[j] != '\n' && text[j] != '\r') j++;
            if (j >= length || text[j] != '"')
                return hb_fail(HB_ERR_PARSE,
                               "%s:%ld:%ld: string not closed on its line; expected a closing '\"'",
                               a->name, line, col);
            t.kind = T_STR;
            t.s = text + i + 1;
            t.len = (int)(j - i - 1 < 1000000 ? j - i - 1 : 1000000);
            i = j + 1;
        } else if (isdigit(c) || ((c == '-' || c == '+' || c == '.') && i + 1 < length &&
                                  (isdigit((unsigned char)text[i + 1]) ||
                                   (text[i + 1] == '.' && i + 2 < length &&
                                    isdigit((unsigned char)text[i + 2]))))) {
            /* a number: strtod's longest prefix of [0-9+-.eE] (as NEURON's sscanf("%lf")) */
            char buf[80];
            size_t k = 0;
            while (i + k < length && k + 1 < sizeof buf &&
                   strchr("0123456789+-.eE", text[i + k]) && text[i + k] != '\0') {
                buf[k] = text[i + k];
                k++;
            }
            buf[k] = '\0';
            char *end;
            errno = 0;
            double v = strtod(buf, &end);
            if (end == buf)
                return hb_fail(HB_ERR_PARSE, "%s:%ld:%ld: '%c' does not start a number; expected a number",
                               a->name, line, col, c);
            if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
                return hb_fail(HB_ERR_PARSE, "%s:%ld:%ld: number '%.40s' is out of range; expected a finite number",
                               a->name, line, col, buf);
            t.kind = T_NUM;
            t.x = v;
            t.len = (int)(end - buf);
            i += (size_t)t.len;
        } else if (is_label_char(c)) {
            size_t j = i;
            while (j < length && is_label_char((unsigned char)text[j])) j++;
            t.kind = T_LABEL;
            t.len = (int)(j - i < 1000000 ? j - i : 1000000);
            if ((t.len == 3 && (!memcmp(t.s, "set", 3) || !memcmp(t.s, "Set", 3) || !memcmp(t.s, "SET", 3))))
                t.kind = T_SET;
            else if (t.len == 3 && !memcmp(t.s, "RGB", 3))
                t.kind = T_RGB;
            i = j;
        } else if (c < 0x20 || c == 0x7f) {
            return hb_fail(HB_ERR_PARSE,
                           "%s:%ld:%ld: byte 0x%02x; expected Neurolucida ASC text (is this a binary file?)",
                           a->name, line, col, c);
        } else {
            return hb_fail(HB_ERR_PARSE,
                           "%s:%ld:%ld: unexpected character '%c'%s; expected a number, a label, a "
                           "\"string\", '(', ')', ',', '|', '<', '>' or a ';' comment",
                           a->name, line, col, c < 0x80 ? c : '?', c < 0x80 ? "" : " (a non-ASCII byte)");
        }
        hb_status_t st = push_tok(a, t);
        if (st != HB_SUCCESS) return st;
    }
    tok_t eof = {T_EOF, 0.0, "", 0, line, (long)(length - bol) + 1};
    return push_tok(a, eof);
}

/* ---- parser: NEURON's productions (read_nlcda3.hoc), each its own function ---- */

static const tok_t *peek(const asc_t *a, long k)
{
    long j = a->i + k;
    return &a->tok[j < a->n_tok ? j : a->n_tok - 1]; /* the last token is T_EOF */
}
static kind_t cur(const asc_t *a) { return peek(a, 0)->kind; }
static kind_t la(const asc_t *a, long k) { return peek(a, k)->kind; }
static void next(asc_t *a)
{
    if (a->i < a->n_tok - 1) a->i++;
}

static hb_status_t syntax(const asc_t *a, const char *expected)
{
    const tok_t *t = peek(a, 0);
    char what[96];
    switch (t->kind) {
    case T_EOF: snprintf(what, sizeof what, "end of file"); break;
    case T_NUM: snprintf(what, sizeof what, "number %.*s", t->len > 40 ? 40 : t->len, t->s); break;
    case T_STR: snprintf(what, sizeof what, "string \"%.*s\"", t->len > 40 ? 40 : t->len, t->s); break;
    case T_LABEL:
    case T_SET:
    case T_RGB: snprintf(what, sizeof what, "label %.*s", t->len > 40 ? 40 : t->len, t->s); break;
    default: snprintf(what, sizeof what, "'%c'", t->s[0]); break;
    }
    if (t->kind == T_EOF && a->n_tok == 1)
        return hb_fail(HB_ERR_PARSE, "%s: empty file (no tokens); expected Neurolucida ASC objects: "
                       "(\"CellBody\" ...) and trees ( (Dendrite) (x y z d) ... )", a->name);
    return hb_fail(HB_ERR_PARSE, "%s:%ld:%ld: found %s; expected %s", a->name, t->line, t->col, what,
                   expected);
}

static hb_status_t expect(asc_t *a, kind_t k, const char *expected)
{
    if (cur(a) != k) return syntax(a, expected);
    next(a);
    return HB_SUCCESS;
}

#define TRY(x)                                   \
    do {                                         \
        hb_status_t st_ = (x);                   \
        if (st_ != HB_SUCCESS) return st_;       \
    } while (0)

static void optional_comma(asc_t *a)
{
    if (cur(a) == T_COMMA) next(a);
}

static hb_status_t objects(asc_t *a);

/* value: a number, string or label, or RGB (r, g, b) */
static hb_status_t value(asc_t *a)
{
    if (cur(a) == T_RGB) {
        next(a);
        TRY(expect(a, T_LP, "'(' after RGB"));
        TRY(expect(a, T_NUM, "the red value of RGB (r, g, b)"));
        optional_comma(a);
        TRY(expect(a, T_NUM, "the green value of RGB (r, g, b)"));
        optional_comma(a);
        TRY(expect(a, T_NUM, "the blue value of RGB (r, g, b)"));
        return expect(a, T_RP, "')' closing RGB (r, g, b)");
    }
    next(a);
    return HB_SUCCESS;
}

static int is_value(kind_t k) { return k == T_NUM || k == T_STR || k == T_LABEL || k == T_RGB; }

/* property: ( Label values ) */
static hb_status_t property(asc_t *a)
{
    TRY(expect(a, T_LP, "'(' starting a property"));
    if (cur(a) != T_LABEL) return syntax(a, "a property name after '('");
    a->last_prop = peek(a, 0)->s;
    a->last_prop_len = peek(a, 0)->len;
    next(a);
    while (is_value(cur(a))) TRY(value(a));
    return expect(a, T_RP, "')' closing the property (values are numbers, labels, strings or RGB (r, g, b))");
}

/* set: ( Set "name" objects ) */
static hb_status_t p_set(asc_t *a)
{
    TRY(expect(a, T_LP, "'(' starting a Set"));
    TRY(expect(a, T_SET, "Set"));
    TRY(expect(a, T_STR, "the set's \"name\""));
    if (cur(a) != T_RP) TRY(objects(a));
    return expect(a, T_RP, "')' closing the Set");
}

static hb_status_t properties(asc_t *a)
{
    a->last_prop = NULL;
    while (cur(a) == T_LP && (la(a, 1) == T_LABEL || la(a, 1) == T_SET)) {
        TRY(la(a, 1) == T_LABEL ? property(a) : p_set(a));
        optional_comma(a);
    }
    return HB_SUCCESS;
}

/* point: ( x [,] y [[,] z [[,] d [,] [label] [bezier ( n n n n )]]] ) */
static hb_status_t point(asc_t *a, pt_t *p)
{
    long line = peek(a, 0)->line;
    TRY(expect(a, T_LP, "'(' starting a point (x y z d)"));
    pt_t q = {0.0, 0.0, 0.0, 0.0, line};
    if (cur(a) != T_NUM) return syntax(a, "the x coordinate of a point (x y z d)");
    q.x = peek(a, 0)->x;
    next(a);
    optional_comma(a);
    if (cur(a) != T_NUM) return syntax(a, "the y coordinate of a point (x y z d)");
    q.y = peek(a, 0)->x;
    next(a);
    optional_comma(a);
    if (cur(a) == T_NUM) {
        q.z = peek(a, 0)->x;
        next(a);
        optional_comma(a);
        if (cur(a) == T_NUM) {
            q.d = peek(a, 0)->x;
            next(a);
            optional_comma(a);
            if (cur(a) == T_LABEL) next(a);
            optional_comma(a);
            if (cur(a) == T_LP) {
                next(a);
                for (int k = 0; k < 4; k++) {
                    if (k) optional_comma(a);
                    TRY(expect(a, T_NUM, "a number of the point's Bezier modifier (n n n n)"));
                }
                TRY(expect(a, T_RP, "')' closing the point's Bezier modifier"));
            }
        }
    }
    TRY(expect(a, T_RP, "')' closing the point (x y z d)"));
    if (p) *p = q;
    return HB_SUCCESS;
}

/* points: point { [,] point } into section s (NULL: skipped) */
static hb_status_t add_point(asc_t *a, asec_t *s, pt_t p)
{
    if (s->n == s->cap) {
        int cap = s->cap ? 2 * s->cap : 16;
        pt_t *q = realloc(s->pt, (size_t)cap * sizeof *q);
        if (!q) return oom(a);
        s->pt = q;
        s->cap = cap;
    }
    s->pt[s->n++] = p;
    return HB_SUCCESS;
}

static hb_status_t points(asc_t *a, asec_t *s)
{
    do {
        pt_t p;
        TRY(point(a, &p));
        if (s) TRY(add_point(a, s, p));
        optional_comma(a);
    } while (cur(a) == T_LP);
    return HB_SUCCESS;
}

/* marker: ( Label properties points ) */
static hb_status_t marker(asc_t *a)
{
    TRY(expect(a, T_LP, "'(' starting a marker"));
    TRY(expect(a, T_LABEL, "a marker name"));
    TRY(properties(a));
    TRY(points(a, NULL));
    return expect(a, T_RP, "')' closing the marker");
}

static hb_status_t marker_or_property(asc_t *a)
{
    return la(a, 2) == T_LP ? marker(a) : property(a);
}

static int new_section(asc_t *a, int type, long line)
{
    if (a->n_sec == a->cap_sec) {
        int cap = a->cap_sec ? 2 * a->cap_sec : 64;
        asec_t *p = realloc(a->sec, (size_t)cap * sizeof *p);
        if (!p) return -1;
        a->sec = p;
        a->cap_sec = cap;
    }
    asec_t *s = &a->sec[a->n_sec];
    memset(s, 0, sizeof *s);
    s->type = type;
    s->parent = -1;
    s->parentx = 1.0;
    s->stack_next = -1;
    s->line = line;
    return a->n_sec++;
}

/* contour: ( "name" properties points ); a CellBody / Cell Body / Soma one of 3+ points is a soma */
static hb_status_t contour(asc_t *a)
{
    long line = peek(a, 0)->line;
    TRY(expect(a, T_LP, "'('"));
    const tok_t *name = peek(a, 0);
    TRY(expect(a, T_STR, "the contour's \"name\""));
    int keep = (name->len == 8 && !memcmp(name->s, "CellBody", 8)) ||
               (name->len == 9 && !memcmp(name->s, "Cell Body", 9)) ||
               (name->len == 4 && !memcmp(name->s, "Soma", 4));
    TRY(properties(a));
    asec_t tmp;
    memset(&tmp, 0, sizeof tmp);
    hb_status_t st = points(a, keep ? &tmp : NULL);
    if (st == HB_SUCCESS) st = expect(a, T_RP, "')' closing the contour");
    if (st != HB_SUCCESS || !keep) {
        free(tmp.pt);
        return st;
    }
    if (tmp.n <= 2) {
        free(tmp.pt);
        return hb_morph_warn(a->m, line,
                             "CellBody contour of %d point%s ignored, as NEURON's Import3d ignores "
                             "one of fewer than three", tmp.n, tmp.n == 1 ? "" : "s");
    }
    int k = new_section(a, 1, line);
    if (k < 0) {
        free(tmp.pt);
        return oom(a);
    }
    a->sec[k].contour = 1;
    a->sec[k].pt = tmp.pt;
    a->sec[k].n = tmp.n;
    a->sec[k].cap = tmp.cap;
    return HB_SUCCESS;
}

/* spine: < properties point > (read, not kept: NEURON's Import3d does not instantiate spines) */
static hb_status_t spine(asc_t *a)
{
    TRY(expect(a, T_LSP, "'<'"));
    TRY(properties(a));
    TRY(point(a, NULL));
    a->n_spines++;
    return expect(a, T_RSP, "'>' closing the spine");
}

static hb_status_t branch(asc_t *a);

/* split: branch { | branch } */
static hb_status_t split(asc_t *a)
{
    TRY(branch(a));
    while (cur(a) == T_BAR) {
        next(a);
        TRY(branch(a));
    }
    return HB_SUCCESS;
}

/* branchend: [,] {markers} [,] [node: ( split ) or an end label (Normal, Incomplete, High, ...)] */
static hb_status_t branchend(asc_t *a)
{
    optional_comma(a);
    if (cur(a) == T_LP) {
        while (la(a, 1) == T_LABEL) { /* markerlist: skipped, balanced */
            TRY(expect(a, T_LP, "'(' starting a marker"));
            long open = 1;
            while (open > 0) {
                if (cur(a) == T_EOF) return syntax(a, "')' closing the marker (unbalanced parentheses)");
                open += cur(a) == T_LP ? 1 : cur(a) == T_RP ? -1 : 0;
                next(a);
            }
        }
    }
    optional_comma(a);
    if (cur(a) == T_LP) {
        if (++a->depth > ASC_MAX_DEPTH)
            return hb_fail(HB_ERR_PARSE, "%s:%ld:%ld: branches nested deeper than %d; expected at most %d",
                           a->name, peek(a, 0)->line, peek(a, 0)->col, ASC_MAX_DEPTH, ASC_MAX_DEPTH);
        next(a);
        TRY(split(a));
        TRY(expect(a, T_RP, "'|' and another branch, or ')' closing the branches"));
        a->depth--;
    } else if (cur(a) == T_LABEL) {
        next(a);
    }
    return HB_SUCCESS;
}

/* branch: treepoints branchend; the points become a section whose first point is the parent's
 * last unless they coincide exactly (newsec, need_extra) */
static hb_status_t branch(asc_t *a)
{
    int psav = a->parent;
    long line = peek(a, 0)->line;
    asec_t tmp;
    memset(&tmp, 0, sizeof tmp);
    hb_status_t st = HB_SUCCESS;
    /* treepoints: the first may be a marker or property; then points, each with spines */
    if (la(a, 1) == T_LABEL) {
        st = marker_or_property(a);
    } else {
        pt_t p;
        st = point(a, &p);
        if (st == HB_SUCCESS) st = add_point(a, &tmp, p);
        while (st == HB_SUCCESS && cur(a) == T_LSP) st = spine(a);
    }
    while (st == HB_SUCCESS) {
        optional_comma(a);
        if (cur(a) != T_LP || la(a, 1) != T_NUM) break;
        pt_t p;
        st = point(a, &p);
        if (st == HB_SUCCESS) st = add_point(a, &tmp, p);
        while (st == HB_SUCCESS && cur(a) == T_LSP) st = spine(a);
    }
    if (st == HB_SUCCESS && tmp.n == 0) st = syntax(a, "a point (x y z d) of the branch");
    if (st != HB_SUCCESS) {
        free(tmp.pt);
        return st;
    }
    int k = new_section(a, a->sectype, line);
    if (k < 0) {
        free(tmp.pt);
        return oom(a);
    }
    asec_t *s = &a->sec[k];
    s->parent = a->parent;
    if (a->parent >= 0) {
        const asec_t *ps = &a->sec[a->parent];
        const pt_t *last = &ps->pt[ps->n - 1];
        if (last->x != tmp.pt[0].x || last->y != tmp.pt[0].y || last->z != tmp.pt[0].z) {
            pt_t extra = *last; /* the parent's last point, with this branch's first diameter */
            extra.d = tmp.pt[0].d;
            extra.line = tmp.pt[0].line;
            st = add_point(a, s, extra);
        }
    }
    for (int j = 0; st == HB_SUCCESS && j < tmp.n; j++) st = add_point(a, &a->sec[k], tmp.pt[j]);
    free(tmp.pt);
    if (st != HB_SUCCESS) return st;
    a->parent = k;
    st = branchend(a);
    a->parent = psav;
    return st;
}

/* tree: ( properties branch ); its type is the last property's: Axon 2, Dendrite 3, Apical 4 */
static hb_status_t tree(asc_t *a)
{
    a->parent = -1;
    TRY(expect(a, T_LP, "'('"));
    TRY(properties(a));
    a->sectype = 0;
    if (a->last_prop) {
        const char *s = a->last_prop;
        int n = a->last_prop_len;
        a->sectype = n == 4 && !memcmp(s, "Axon", 4) ? 2 : n == 8 && !memcmp(s, "Dendrite", 8) ? 3
                   : n == 6 && !memcmp(s, "Apical", 6) ? 4 : 0;
    }
    TRY(branch(a));
    TRY(expect(a, T_RP, "')' closing the tree"));
    a->parent = -1;
    return HB_SUCCESS;
}

/* text: ( properties point "string" ); tells a text from a tree by trying it. Within the
 * attempt, nested objects are parsed as trees only: trying each level both ways took time
 * exponential in the nesting (a fuzzer's input of nested Sets); a text nested in a text's
 * properties fails the outer attempt, and the tree path then reads both. */
static int text(asc_t *a)
{
    if (a->in_text) return 0;
    long save = a->i;
    int n_sec = a->n_sec, depth = a->depth;
    a->in_text = 1;
    const int ok = expect(a, T_LP, "") == HB_SUCCESS && properties(a) == HB_SUCCESS &&
                   point(a, NULL) == HB_SUCCESS && cur(a) == T_STR;
    a->in_text = 0;
    if (ok) {
        next(a);
        if (cur(a) == T_RP) {
            next(a);
            return 1;
        }
    }
    a->i = save;
    a->depth = depth;
    for (int i = n_sec; i < a->n_sec; i++) free(a->sec[i].pt);
    a->n_sec = n_sec;
    return 0;
}

static hb_status_t object(asc_t *a)
{
    if (cur(a) != T_LP) return syntax(a, "'(' starting a Neurolucida object");
    if (++a->depth > ASC_MAX_DEPTH)
        return hb_fail(HB_ERR_PARSE, "%s:%ld:%ld: objects nested deeper than %d; expected at most %d",
                       a->name, peek(a, 0)->line, peek(a, 0)->col, ASC_MAX_DEPTH, ASC_MAX_DEPTH);
    hb_status_t st;
    switch (la(a, 1)) {
    case T_STR: st = contour(a); break;
    case T_LABEL: st = marker_or_property(a); break;
    case T_LP:
        if (text(a)) {
            hb_clear_error();
            st = HB_SUCCESS;
        } else {
            hb_clear_error();
            st = tree(a);
        }
        break;
    case T_SET: st = p_set(a); break;
    default:
        next(a);
        st = syntax(a, "after '(': a \"contour name\", a label (marker or property), '(' (a tree) or Set");
        break;
    }
    a->depth--;
    return st;
}

static hb_status_t objects(asc_t *a)
{
    TRY(object(a));
    for (;;) {
        optional_comma(a);
        if (cur(a) != T_LP) return HB_SUCCESS;
        TRY(object(a));
    }
}

/* ---- geometry, as Import3d's hoc computes it (same operations in the same order) ---- */

/* Vector.interpolate(xd, xs, ys) */
static void interpolate(double *yd, const double *xd, int nd, const double *xs, const double *ys, int ns)
{
    int id = 0;
    for (; id < nd && xd[id] <= xs[0]; id++) yd[id] = ys[0];
    for (int is = 1; is < ns && id < nd; is++) {
        if (xs[is] <= xs[is - 1]) continue;
        while (xd[id] <= xs[is]) {
            double th = (xd[id] - xs[is - 1]) / (xs[is] - xs[is - 1]);
            yd[id] = (1. - th) * ys[is - 1] + th * ys[is];
            if (++id >= nd) break;
        }
    }
    for (; id < nd; id++) yd[id] = ys[ns - 1];
}

#define NCC 101 /* contourcenter's points */

/* Import3d_Section.contourcenter: 101 points evenly spaced along the contour's open path in the
 * xy plane (x, y, z resampled), and their mean. */
static int contourcenter(const pt_t *p, int n, double out[3][NCC], double mean[3])
{
    double *perim = malloc((size_t)n * sizeof *perim), *xs = malloc(3 * (size_t)n * sizeof *xs);
    if (!perim || !xs) {
        free(perim);
        free(xs);
        return -1;
    }
    perim[0] = 0.0;
    for (int i = 1; i < n; i++) {
        double dx = p[i].x - p[i - 1].x, dy = p[i].y - p[i - 1].y;
        perim[i] = perim[i - 1] + sqrt(dx * dx + dy * dy + 0.0 * 0.0);
    }
    double d[NCC], step = perim[n - 1] / 100;
    for (int i = 0; i < NCC; i++) d[i] = (double)i * step + 0.0;
    for (int i = 0; i < n; i++) {
        xs[i] = p[i].x;
        xs[n + i] = p[i].y;
        xs[2 * n + i] = p[i].z;
    }
    for (int c = 0; c < 3; c++) {
        interpolate(out[c], d, NCC, perim, xs + (size_t)c * (size_t)n, n);
        double sum = 0.0;
        for (int i = 0; i < NCC; i++) sum += out[c][i];
        mean[c] = sum / NCC;
    }
    free(perim);
    free(xs);
    return 0;
}

/* Eigen-decomposition of a symmetric 3x3 matrix as NEURON 8.2's Matrix.symmeig computes it
 * (Meschach: Householder tridiagonalisation, then the implicit QR method with Wilkinson shifts
 * and Givens rotations), so that the eigenvectors come out with NEURON's signs: the soma's
 * centroid runs along the major axis in NEURON's direction. q[i][j]: component i of vector j. */
static void symmeig3(double in[3][3], double q[3][3], double ev[3])
{
    enum { N = 3 };
    double a[N][N], hv[N][N], beta[N] = {0, 0, 0}, vdiag[N] = {0, 0, 0};
    memcpy(a, in, sizeof a);
    for (int k = 0; k + 1 < N; k++) { /* Householder vector for column k below the diagonal */
        double v[N];
        for (int i = 0; i < N; i++) v[i] = a[i][k];
        double ss = 0.0;
        for (int i = k + 1; i < N; i++) ss += v[i] * v[i];
        double norm = sqrt(ss);
        if (norm <= 0.0) {
            beta[k] = 0.0;
        } else {
            beta[k] = 1.0 / (norm * (norm + fabs(v[k + 1])));
            double newval = v[k + 1] > 0.0 ? -norm : norm;
            v[k + 1] -= newval;
            a[k + 1][k] = newval;
        }
        vdiag[k] = v[k + 1];
        for (int i = 0; i < N; i++) hv[k][i] = v[i];
        if (beta[k] == 0.0) continue;
        double w[N] = {0, 0, 0}; /* columns: A = (I - beta v v') A on rows k+1.. */
        for (int i = k + 1; i < N; i++)
            if (v[i] != 0.0)
                for (int j = k + 1; j < N; j++) w[j] += v[i] * a[i][j];
        for (int i = k + 1; i < N; i++)
            if (v[i] != 0.0)
                for (int j = k + 1; j < N; j++) a[i][j] += -beta[k] * v[i] * w[j];
        for (int i = 0; i < N; i++) { /* rows: A = A (I - beta v v') on columns k+1.. */
            double ip = 0.0;
            for (int j = k + 1; j < N; j++) ip += a[i][j] * v[j];
            double scale = beta[k] * ip;
            if (scale == 0.0) continue;
            for (int j = k + 1; j < N; j++) a[i][j] += -scale * v[j];
        }
    }
    for (int i = 0; i < N; i++) { /* Q = H_0 H_1 ..., column by column */
        double t[N] = {0, 0, 0};
        t[i] = 1.0;
        for (int j = N - 2; j >= 0; j--) {
            double h[N];
            for (int l = 0; l < N; l++) h[l] = hv[j][l];
            h[j + 1] = vdiag[j];
            double ip = 0.0;
            for (int l = j + 1; l < N; l++) ip += h[l] * t[l];
            double scale = beta[j] * ip;
            for (int l = j + 1; l < N; l++) t[l] += -scale * h[l];
        }
        for (int l = 0; l < N; l++) q[l][i] = t[l];
    }
    double d[N], b[N - 1];
    for (int i = 0; i < N; i++) d[i] = a[i][i];
    for (int i = 0; i + 1 < N; i++) b[i] = a[i][i + 1];
    const double SQRT2 = 1.4142135623730949;
    int i_min = 0, iterations = 0;
    while (i_min < N && iterations++ < 1000) {
        int i_max = N - 1;
        for (int i = i_min; i < N - 1; i++)
            if (b[i] == 0.0) {
                i_max = i;
                break;
            }
        if (i_max <= i_min) {
            i_min = i_max + 1;
            continue;
        }
        for (int split = 0, sweeps = 0; !split && sweeps < 1000; sweeps++) {
            double dd = (d[i_max - 1] - d[i_max]) / 2, b2 = b[i_max - 1] * b[i_max - 1];
            double mu = d[i_max] - b2 / (dd + (dd >= 0 ? 1 : -1) * sqrt(dd * dd + b2));
            double z = 0.0;
            for (int i = i_min; i < i_max; i++) {
                double x = i == i_min ? d[i_min] - mu : b[i - 1], y = i == i_min ? b[i_min] : z;
                double nrm = sqrt(x * x + y * y), c = 1.0, s = 0.0;
                if (nrm != 0.0) {
                    c = x / nrm;
                    s = y / nrm;
                }
                s = -s;
                double c2, s2;
                if (fabs(c) < SQRT2) {
                    c2 = c * c;
                    s2 = 1 - c2;
                } else {
                    s2 = s * s;
                    c2 = 1 - s2;
                }
                double cs = c * s;
                double bk = c * b[i > 0 ? i - 1 : 0] - s * z;
                double ak1 = c2 * d[i] + s2 * d[i + 1] - 2 * cs * b[i];
                double bk1 = cs * (d[i] - d[i + 1]) + (c2 - s2) * b[i];
                double ak2 = s2 * d[i] + c2 * d[i + 1] + 2 * cs * b[i];
                double bk2 = i + 1 < i_max ? c * b[i + 1] : 0.0;
                z = i + 1 < i_max ? -s * b[i + 1] : 0.0;
                d[i] = ak1;
                d[i + 1] = ak2;
                b[i] = bk1;
                if (i + 1 < i_max) b[i + 1] = bk2;
                if (i > i_min) b[i - 1] = bk;
                for (int r = 0; r < N; r++) { /* Q = Q G(c, -s) on columns i, i+1 */
                    double t = c * q[r][i] + -s * q[r][i + 1];
                    q[r][i + 1] = s * q[r][i] + c * q[r][i + 1];
                    q[r][i] = t;
                }
            }
            for (int i = i_min; i < i_max; i++)
                if (fabs(b[i]) < DBL_EPSILON * (fabs(d[i]) + fabs(d[i + 1]))) {
                    b[i] = 0.0;
                    split = 1;
                }
        }
    }
    for (int i = 0; i < N; i++) ev[i] = d[i];
}

static int max_ind(const double *v, int n)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        if (v[i] > v[k]) k = i;
    return k;
}
static int min_ind(const double *v, int n)
{
    int k = 0;
    for (int i = 1; i < n; i++)
        if (v[i] < v[k]) k = i;
    return k;
}

/* contour2centroid's "make it convex": drop points whose position does not increase */
static int convex(double *d, double *r, int n)
{
    for (int j = n - 1; j > 0; j--) {
        if (d[j] <= d[j - 1]) {
            memmove(d + j, d + j + 1, (size_t)(n - j - 1) * sizeof *d);
            memmove(r + j, r + j + 1, (size_t)(n - j - 1) * sizeof *r);
            n--;
            if (j != n) j++;
        }
    }
    return n;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* Import3d_GUI.contour2centroid: the contour as a cylinder stack along its principal axis; the
 * points replace s's. Returns 0, -1 out of memory, -2 a degenerate contour. */
static int contour2centroid(asec_t *s)
{
    double r[3][NCC], mean[3];
    if (contourcenter(s->pt, s->n, r, mean) != 0) return -1;
    double pts[3][NCC], m[3][3], q[3][3], ev[3];
    for (int c = 0; c < 3; c++)
        for (int k = 0; k < NCC; k++) pts[c][k] = r[c][k] - mean[c];
    for (int i = 0; i < 3; i++)
        for (int j = i; j < 3; j++) {
            double sum = 0.0;
            for (int k = 0; k < NCC; k++) sum += pts[i][k] * pts[j][k];
            m[i][j] = m[j][i] = sum;
        }
    symmeig3(m, q, ev);
    int imax = max_ind(ev, 3), imn = min_ind(ev, 3);
    if (imax == imn) return -2; /* all eigenvalues equal: the points are at one place */
    double major[3], minor[3];
    for (int c = 0; c < 3; c++) {
        major[c] = q[c][imax];
        minor[c] = q[c][3 - imn - imax];
    }
    minor[2] = 0;
    double mag = sqrt(0.0 + minor[0] * minor[0] + minor[1] * minor[1] + minor[2] * minor[2]);
    if (!(mag > 0.0)) return -2;
    for (int c = 0; c < 3; c++) minor[c] /= mag;
    double d0[NCC], r0[NCC], d[NCC], rad[NCC];
    for (int k = 0; k < NCC; k++) {
        d0[k] = 0.0 + pts[0][k] * major[0] + pts[1][k] * major[1] + pts[2][k] * major[2];
        r0[k] = 0.0 + pts[0][k] * minor[0] + pts[1][k] * minor[1] + pts[2][k] * minor[2];
    }
    int kmax = max_ind(d0, NCC);
    for (int k = 0; k < NCC; k++) { /* rotate so that the largest comes first */
        d[k] = d0[(k + kmax) % NCC];
        rad[k] = r0[(k + kmax) % NCC];
    }
    int kmin = min_ind(d, NCC);
    double side2[NCC], rad2[NCC], s1[NCC], rad1[NCC];
    int n2 = NCC - kmin, n1 = kmin;
    for (int k = 0; k < n2; k++) {
        side2[k] = d[kmin + k];
        rad2[k] = rad[kmin + k];
    }
    for (int k = 0; k < n1; k++) { /* the first side, reversed */
        s1[k] = d[kmin - 1 - k];
        rad1[k] = rad[kmin - 1 - k];
    }
    n1 = convex(s1, rad1, n1);
    n2 = convex(side2, rad2, n2);
    if (n1 < 1 || n2 < 1 || n1 + n2 < 4) return -2;
    double all[2 * NCC];
    memcpy(all, s1, (size_t)n1 * sizeof *all);
    memcpy(all + n1, side2, (size_t)n2 * sizeof *all);
    qsort(all, (size_t)(n1 + n2), sizeof *all, cmp_double);
    double lo = all[1], hi = all[n1 + n2 - 2];
    if (!(hi > lo)) return -2;
    double step = (hi - lo) / 20;
    double xn = floor((hi - lo) / step + 1e-9) + 1.;
    if (!(xn >= 2 && xn <= 64)) return -2;
    int n = (int)xn;
    double grid[64], ra[64], rb[64];
    for (int k = 0; k < n; k++) grid[k] = (double)k * step + lo;
    interpolate(ra, grid, n, s1, rad1, n1);
    interpolate(rb, grid, n, side2, rad2, n2);
    pt_t *out = malloc((size_t)n * sizeof *out);
    if (!out) return -1;
    long line = s->pt[0].line;
    for (int k = 0; k < n; k++) {
        out[k].x = major[0] * grid[k] + mean[0];
        out[k].y = major[1] * grid[k] + mean[1];
        out[k].z = major[2] * grid[k] + mean[2];
        out[k].d = fabs(ra[k] - rb[k]);
        out[k].line = line;
    }
    out[0].d = (out[0].d + out[1].d) / 2;
    out[n - 1].d = (out[n - 1].d + out[n - 2].d) / 2;
    free(s->pt);
    s->pt = out;
    s->n = s->cap = n;
    return 0;
}

/* approximate_contour_by_circle: the contour's centre and "diameter" (mean distance of the
 * resampled points from the centre plus perimeter / 2 pi, as NEURON computes it) */
static int contour_circle(const asec_t *s, double c[3], double *diam)
{
    double perim = 0.0;
    for (int i = 0; i < s->n; i++) {
        const pt_t *p = &s->pt[i], *q = &s->pt[(i + 1) % s->n];
        double dx = p->x - q->x, dy = p->y - q->y, dz = p->z - q->z;
        perim += sqrt(0.0 + dx * dx + dy * dy + dz * dz);
    }
    double r[3][NCC];
    if (contourcenter(s->pt, s->n, r, c) != 0) return -1;
    double sum = 0.0;
    for (int k = 0; k < NCC; k++) {
        double x = r[0][k] - c[0], y = r[1][k] - c[1], z = r[2][k] - c[2];
        sum += sqrt(x * x + y * y + z * z);
    }
    *diam = sum / NCC + perim / (2 * ASC_PI);
    return 0;
}

/* ---- the soma, connections, Import3d's checks ---- */

static void bbox(const asec_t *s, double b[6])
{
    b[0] = b[3] = s->pt[0].x;
    b[1] = b[4] = s->pt[0].y;
    b[2] = b[5] = s->pt[0].z;
    for (int i = 1; i < s->n; i++) {
        const pt_t *p = &s->pt[i];
        b[0] = fmin(b[0], p->x), b[3] = fmax(b[3], p->x);
        b[1] = fmin(b[1], p->y), b[4] = fmax(b[4], p->y);
        b[2] = fmin(b[2], p->z), b[5] = fmax(b[5], p->z);
    }
}

static hb_status_t insert_front(asc_t *a, asec_t *s, pt_t p)
{
    TRY(add_point(a, s, p));
    memmove(s->pt + 1, s->pt, (size_t)(s->n - 1) * sizeof *s->pt);
    s->pt[0] = p;
    return HB_SUCCESS;
}

/* connect2soma: contours first; overlapping contours (xy bounding boxes) form one soma stack;
 * every tree starts at the soma's centre (a wire, not a 3-D point) at its x = 0.5. Returns the
 * new section order in *order. */
static hb_status_t soma(asc_t *a, int *order)
{
    int n = 0, soma = -1, last = -1, n_soma = 0;
    double bb1[6], bb2[6];
    for (int i = 0; i < a->n_sec; i++) {
        if (!a->sec[i].contour) continue;
        order[n++] = i;
        bbox(&a->sec[i], bb2);
        if (last >= 0 && !(bb1[0] > bb2[3] || bb2[0] > bb1[3] || bb1[1] > bb2[4] || bb2[1] > bb1[4])) {
            a->sec[i].subsidiary = 1;
            int j = soma;
            while (a->sec[j].stack_next >= 0) j = a->sec[j].stack_next;
            a->sec[j].stack_next = i;
        } else {
            n_soma++;
            if (n_soma == 2)
                return hb_fail(HB_ERR_MORPHOLOGY,
                               "%s:%ld: a second soma contour, apart from the one of line %ld (their "
                               "xy bounding boxes do not overlap); expected one soma (a contour, or "
                               "a stack of overlapping contours): a cell is one tree",
                               a->name, a->sec[i].line, a->sec[soma].line);
            soma = i;
        }
        memcpy(bb1, bb2, sizeof bb1);
        last = i;
    }
    if (soma < 0)
        return hb_fail(HB_ERR_MORPHOLOGY,
                       "%s: no soma; expected a (\"CellBody\" ...) contour of three or more points, "
                       "to which NEURON's Import3d connects the trees", a->name);
    for (int i = 0; i < a->n_sec; i++)
        if (!a->sec[i].contour) order[n++] = i;
    /* the soma's centre and bounding box */
    asec_t *s = &a->sec[soma];
    double center[3], xmin, xmax, ymin, ymax;
    if (s->stack_next >= 0) { /* stk_center: halfway along the polyline of the contour centres */
        double c[3], r[3][NCC], prev[3], len = 0.0;
        int count = 0;
        for (int j = soma; j >= 0; j = a->sec[j].stack_next) count++;
        double *cen = malloc(3 * (size_t)count * sizeof *cen), *lenv = malloc((size_t)count * sizeof *lenv);
        if (!cen || !lenv) {
            free(cen);
            free(lenv);
            return oom(a);
        }
        int k = 0;
        for (int j = soma; j >= 0; j = a->sec[j].stack_next, k++) {
            if (contourcenter(a->sec[j].pt, a->sec[j].n, r, c) != 0) {
                free(cen);
                free(lenv);
                return oom(a);
            }
            memcpy(cen + 3 * k, c, sizeof c);
            if (k > 0) {
                double dx = c[0] - prev[0], dy = c[1] - prev[1], dz = c[2] - prev[2];
                len += sqrt(0.0 + dx * dx + dy * dy + dz * dz);
            }
            lenv[k] = len;
            memcpy(prev, c, sizeof c);
        }
        len = len / 2;
        if (len == 0) {
            memcpy(center, cen, sizeof center);
        } else {
            int i = 0;
            while (i < count && !(lenv[i] > len)) i++;
            double th = (len - lenv[i - 1]) / (lenv[i] - lenv[i - 1]);
            for (int j = 0; j < 3; j++) center[j] = th * cen[3 * i + j] + (1 - th) * cen[3 * (i - 1) + j];
        }
        free(cen);
        free(lenv);
        double b[6], bs[6];
        bbox(s, bs);
        for (int j = s->stack_next; j >= 0; j = a->sec[j].stack_next) {
            bbox(&a->sec[j], b);
            for (int c3 = 0; c3 < 3; c3++) {
                bs[c3] = fmin(bs[c3], b[c3]);
                bs[c3 + 3] = fmax(bs[c3 + 3], b[c3 + 3]);
            }
        }
        xmin = bs[0], xmax = bs[3], ymin = bs[1], ymax = bs[4];
    } else {
        double r[3][NCC], b[6];
        if (contourcenter(s->pt, s->n, r, center) != 0) return oom(a);
        bbox(s, b);
        xmin = b[0] - .5, xmax = b[3] + .5, ymin = b[1] - .5, ymax = b[4] + .5;
    }
    /* every tree root to the soma; NEURON's inside() compares in single precision */
    int outside = 0;
    long first_outside = 0;
    for (int i = 0; i < a->n_sec; i++) {
        asec_t *t = &a->sec[i];
        if (t->contour || t->parent >= 0) continue;
        float x = (float)t->pt[0].x, y = (float)t->pt[0].y;
        if (!(x >= (float)xmin && x <= (float)xmax && y >= (float)ymin && y <= (float)ymax)) {
            if (outside++ == 0) first_outside = t->pt[0].line;
        }
        t->parent = soma;
        t->parentx = 0.5;
        t->first = 1;
        pt_t c = {center[0], center[1], center[2], .01, t->pt[0].line};
        TRY(insert_front(a, t, c));
    }
    if (outside)
        TRY(hb_morph_warn(a->m, first_outside,
                          "%d tree%s (first: the one starting here) start%s outside the soma "
                          "contour's bounding box; connected to the soma's centre, as NEURON's "
                          "Import3d connects them", outside, outside == 1 ? "" : "s", outside == 1 ? "s" : ""));
    return HB_SUCCESS;
}

/* Import3d_GUI.chk_valid: a section of one point, or of two equal points (within 1e-9), goes;
 * its children attach where it attached. */
static hb_status_t chk_valid(asc_t *a, const int *order, int n)
{
    int removed = 0;
    long line = 0;
    for (int k = n - 1; k >= 0; k--) {
        asec_t *s = &a->sec[order[k]];
        if (s->parent < 0 || s->subsidiary) continue;
        int own = s->n - s->first;
        if (own == 2) {
            const pt_t *p = &s->pt[s->first], *q = &s->pt[s->first + 1];
            s->removed = fabs(p->x - q->x) <= 1e-9 && fabs(p->y - q->y) <= 1e-9 && fabs(p->z - q->z) <= 1e-9;
        } else {
            s->removed = own <= 1;
        }
        if (!s->removed) continue;
        if (removed++ == 0) line = s->pt[s->n - 1].line;
        for (int j = k + 1; j < n; j++) {
            asec_t *c = &a->sec[order[j]];
            if (c->parent == order[k]) {
                c->parent = s->parent;
                c->parentx = s->parentx;
            }
        }
    }
    if (!removed) return HB_SUCCESS;
    return hb_morph_warn(a->m, line,
                         "Import3d: %d section%s of one point or of two coincident points (first: "
                         "the one ending here) removed, as NEURON's Import3d removes them; their "
                         "children attach where they attached", removed, removed == 1 ? "" : "s");
}

/* ---- the morphology ---- */

static hb_status_t check_point(const asc_t *a, const pt_t *p)
{
    const double c[3] = {p->x, p->y, p->z};
    for (int k = 0; k < 3; k++)
        if (!(fabs(c[k]) <= HB_MORPH_MAX_COORDINATE_UM))
            return hb_fail(HB_ERR_MORPHOLOGY, "%s:%ld: point has %c = %g um; expected a finite coordinate within +-%g um",
                           a->name, p->line, "xyz"[k], c[k], HB_MORPH_MAX_COORDINATE_UM);
    double r = 0.5 * p->d;
    if (!(r == 0.0 || (r >= HB_MORPH_MIN_RADIUS_UM && r <= HB_MORPH_MAX_RADIUS_UM)))
        return hb_fail(HB_ERR_MORPHOLOGY, "%s:%ld: point has diameter %g um; expected 0 or %g to %g um",
                       a->name, p->line, p->d, 2 * HB_MORPH_MIN_RADIUS_UM, 2 * HB_MORPH_MAX_RADIUS_UM);
    return HB_SUCCESS;
}

/* NEURON's Pt3d keeps x, y, z and diam as float, arc3d comes from those (single_points). */
static double rounded(int single, double v) { return single ? hb_morph_as_float(v) : v; }

static hb_status_t emit(asc_t *a, const int *order, int n)
{
    hb_morph_t *m = a->m;
    const int single = a->opt->single_points;
    int kept = 0, n_pts = 0;
    int *index = malloc((size_t)a->n_sec * sizeof *index), *last = malloc((size_t)a->n_sec * sizeof *last);
    if (!index || !last) {
        free(index);
        free(last);
        return oom(a);
    }
    for (int i = 0; i < a->n_sec; i++) index[i] = -1;
    for (int k = 0; k < n; k++) {
        const asec_t *s = &a->sec[order[k]];
        if (s->removed || s->subsidiary) continue;
        index[order[k]] = kept++;
        n_pts += s->n - s->first;
    }
    m->sections = calloc((size_t)kept, sizeof *m->sections);
    m->samples = calloc((size_t)n_pts, sizeof *m->samples);
    m->parent = calloc((size_t)n_pts, sizeof *m->parent);
    if (!m->sections || !m->samples || !m->parent) {
        free(index);
        free(last);
        return oom(a);
    }
    m->n_sections = kept;
    hb_status_t st = HB_SUCCESS;
    int zero = 0, ns = 0;
    long zero_line = 0;
    for (int k = 0; k < n && st == HB_SUCCESS; k++) {
        const asec_t *s = &a->sec[order[k]];
        int is = index[order[k]];
        if (is < 0) continue;
        hb_section_t *h = &m->sections[is];
        h->parent = s->parent < 0 ? -1 : index[s->parent];
        h->parent_x = s->parent < 0 ? 0.0 : s->parentx;
        h->type = s->type;
        int np = s->n - s->first;
        h->n_points = np;
        h->sample = malloc((size_t)np * sizeof *h->sample);
        h->arc = malloc((size_t)np * sizeof *h->arc);
        h->radius = malloc((size_t)np * sizeof *h->radius);
        if (!h->sample || !h->arc || !h->radius) {
            st = oom(a);
            break;
        }
        for (int j = 0; j < np && st == HB_SUCCESS; j++) {
            const pt_t *p = &s->pt[s->first + j];
            st = check_point(a, p);
            if (st != HB_SUCCESS) break;
            if (p->d == 0.0 && zero++ == 0) zero_line = p->line;
            int parent;
            if (j > 0) {
                parent = ns - 1;
            } else if (h->parent < 0) {
                parent = -1;
            } else {
                const hb_section_t *ph = &m->sections[h->parent];
                parent = h->parent_x == 1.0 ? last[h->parent] : ph->sample[ph->n_points / 2];
            }
            hb_sample_t *smp = &m->samples[ns];
            smp->id = ns + 1;
            smp->type = s->type;
            smp->x = rounded(single, p->x);
            smp->y = rounded(single, p->y);
            smp->z = rounded(single, p->z);
            smp->radius = 0.5 * rounded(single, p->d);
            smp->parent = parent < 0 ? -1 : m->samples[parent].id;
            smp->line = p->line;
            m->parent[ns] = parent;
            h->sample[j] = ns;
            h->radius[j] = smp->radius;
            if (j == 0) {
                h->arc[j] = 0.0;
            } else {
                const pt_t *q = &s->pt[s->first + j - 1];
                double dx = smp->x - rounded(single, q->x), dy = smp->y - rounded(single, q->y),
                       dz = smp->z - rounded(single, q->z);
                double dist = sqrt(dx * dx + dy * dy + dz * dz);
                if (dist > 0.0 && dist < HB_MORPH_MIN_LENGTH_UM)
                    st = hb_fail(HB_ERR_MORPHOLOGY,
                                 "%s:%ld: point is %g um from the point before it (line %ld); "
                                 "expected 0 (the same point) or at least %g um",
                                 a->name, p->line, dist, q->line, HB_MORPH_MIN_LENGTH_UM);
                h->arc[j] = h->arc[j - 1] + dist;
            }
            ns++;
        }
        if (st != HB_SUCCESS) break;
        last[is] = ns - 1;
        h->length = h->arc[np - 1];
        if (h->parent >= 0) {
            hb_section_t *ph = &m->sections[h->parent];
            ph->n_children++;
        }
    }
    m->n_samples = ns;
    if (st == HB_SUCCESS) { /* branch order: 0 on the soma and its children, +1 at a fork */
        int *forks = calloc((size_t)kept, sizeof *forks);
        if (!forks) st = oom(a);
        for (int i = 1; st == HB_SUCCESS && i < kept; i++)
            if (m->sections[i].parent_x == 1.0) forks[m->sections[i].parent]++;
        for (int i = 1; st == HB_SUCCESS && i < kept; i++) {
            hb_section_t *h = &m->sections[i];
            const hb_section_t *ph = &m->sections[h->parent];
            h->branch_order = ph->type == 1 || h->parent_x < 1.0 ? 0 : ph->branch_order + (forks[h->parent] >= 2);
        }
        free(forks);
    }
    if (st == HB_SUCCESS && zero) {
        m->keep_zero_radius = 1;
        st = hb_morph_warn(m, zero_line, "%d point%s diameter 0 (first: here); kept, as NEURON keeps it",
                           zero, zero == 1 ? " has" : "s have");
    }
    free(index);
    free(last);
    return st;
}

static hb_status_t read_asc(asc_t *a)
{
    TRY(objects(a));
    if (cur(a) != T_EOF)
        return syntax(a, cur(a) == T_RP ? "end of file ('(' ... ')' are unbalanced: a ')' closes nothing)"
                                        : "'(' starting a Neurolucida object, or end of file");
    if (a->depth != 0) return syntax(a, "')'");
    for (int i = 0; i < a->n_sec; i++) /* the limits first: the soma's geometry squares them */
        for (int k = 0; k < a->sec[i].n; k++) {
            pt_t p = a->sec[i].pt[k];
            if (a->sec[i].contour) p.d = 0.0; /* a contour's diameters are not used */
            TRY(check_point(a, &p));
        }
    int *order = malloc((size_t)(a->n_sec ? a->n_sec : 1) * sizeof *order);
    if (!order) return oom(a);
    hb_status_t st = soma(a, order);
    if (st == HB_SUCCESS) st = chk_valid(a, order, a->n_sec);
    if (st == HB_SUCCESS) { /* the soma's 3-D points: contour2centroid or contourstack2centroid */
        asec_t *s = &a->sec[order[0]];
        if (s->stack_next < 0) {
            int rc = contour2centroid(s);
            if (rc == -1) st = oom(a);
            else if (rc == -2)
                st = hb_fail(HB_ERR_MORPHOLOGY, "%s:%ld: the soma contour has no extent along two "
                             "axes (its points are on a line or at one point); expected an outline "
                             "of the soma", a->name, s->line);
        } else {
            int count = 0;
            for (int j = order[0]; j >= 0; j = a->sec[j].stack_next) count++;
            pt_t *out = malloc((size_t)count * sizeof *out);
            if (!out) st = oom(a);
            int k = 0;
            for (int j = order[0]; st == HB_SUCCESS && j >= 0; j = a->sec[j].stack_next, k++) {
                double c[3], d;
                if (contour_circle(&a->sec[j], c, &d) != 0) st = oom(a);
                out[k] = (pt_t){c[0], c[1], c[2], d, a->sec[j].line};
            }
            if (st == HB_SUCCESS) {
                free(s->pt);
                s->pt = out;
                s->n = s->cap = count;
            } else {
                free(out);
            }
        }
    }
    if (st == HB_SUCCESS) st = emit(a, order, a->n_sec);
    free(order);
    return st;
}

/* Whether path ends in ".EXT" (EXT lower case, three letters; the name in any case). */
static int ends_with(const char *path, const char *ext)
{
    size_t n = strlen(path);
    return n >= 4 && path[n - 4] == '.' && tolower((unsigned char)path[n - 3]) == ext[0] &&
           tolower((unsigned char)path[n - 2]) == ext[1] && tolower((unsigned char)path[n - 1]) == ext[2];
}

hb_status_t hb_morph_parse_asc(const char *text, size_t length, const char *name,
                               const hb_swc_options_t *options, hb_morph_t **morph)
{
    hb_clear_error();
    if (!morph) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_parse_asc: morph is NULL");
    *morph = NULL;
    if (!name) name = "(asc text)";
    if (!text && length > 0) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_parse_asc: text is NULL");
    hb_swc_options_t defaults;
    if (!options) {
        hb_swc_options_default(&defaults);
        options = &defaults;
    }
    if (options->units != HB_UNITS_UM && options->units != HB_UNITS_NM)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_parse_asc: units %d; expected HB_UNITS_UM or HB_UNITS_NM",
                       (int)options->units);
    if (options->single_points != 0 && options->single_points != 1)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_parse_asc: single_points %d; expected 0 or 1",
                       options->single_points);
    asc_t a;
    memset(&a, 0, sizeof a);
    a.name = name;
    a.opt = options;
    a.parent = -1;
    a.m = calloc(1, sizeof *a.m);
    size_t name_len = strlen(name) + 1;
    if (a.m) a.m->name = malloc(name_len);
    hb_status_t st;
    if (!a.m || !a.m->name) {
        st = oom(&a);
    } else {
        memcpy(a.m->name, name, name_len);
        a.name = a.m->name;
        a.m->rule = HB_SECTIONS_IMPORT3D;
        a.m->single_points = options->single_points;
        st = lex(&a, text ? text : "", length);
    }
    if (st == HB_SUCCESS && options->units == HB_UNITS_NM)
        for (long i = 0; i < a.n_tok; i++)
            if (a.tok[i].kind == T_NUM) a.tok[i].x /= 1000.0;
    if (st == HB_SUCCESS) st = read_asc(&a);
    for (int i = 0; i < a.n_sec; i++) free(a.sec[i].pt);
    free(a.sec);
    free(a.tok);
    if (st != HB_SUCCESS) {
        hb_morph_destroy(a.m);
        return st;
    }
    *morph = a.m;
    return HB_SUCCESS;
}

hb_status_t hb_morph_load_asc(const char *path, const hb_swc_options_t *options, hb_morph_t **morph)
{
    hb_clear_error();
    if (morph) *morph = NULL;
    if (!path) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_load_asc: path is NULL");
    if (!morph) return hb_fail(HB_ERR_INVALID_VALUE, "hb_morph_load_asc: morph is NULL");
    FILE *f = fopen(path, "rb");
    if (!f) return hb_fail(HB_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    hb_status_t st = HB_SUCCESS;
    while (buf) {
        if (n == cap) {
            char *p = cap < ((size_t)1 << 40) ? realloc(buf, 2 * cap) : NULL;
            if (!p) break;
            buf = p;
            cap *= 2;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    if (!buf || n == cap) {
        st = hb_fail(HB_ERR_ALLOC, "%s: out of memory reading Neurolucida ASC", path);
    } else if (ferror(f)) {
        st = hb_fail(HB_ERR_IO, "%s: cannot read: %s", path, strerror(errno));
    }
    fclose(f);
    if (st == HB_SUCCESS) st = hb_morph_parse_asc(buf, n, path, options, morph);
    free(buf);
    return st;
}

/* The first byte that is not white space or in a comment: '(' or ';' start ASC, SWC never. */
static int looks_like_asc(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return 0;
    int c, comment = 0, asc = 0;
    for (long k = 0; k < (1L << 16) && (c = fgetc(f)) != EOF; k++) {
        if (comment) {
            comment = c != '\n' && c != '\r';
        } else if (c == '#') {
            comment = 1;
        } else if (!isspace(c)) {
            asc = c == '(' || c == ';';
            break;
        }
    }
    fclose(f);
    return asc;
}

hb_status_t hb_morph_load(const char *path, const hb_swc_options_t *options, hb_morph_t **morph)
{
    if (path && (ends_with(path, "asc") || (!ends_with(path, "swc") && looks_like_asc(path))))
        return hb_morph_load_asc(path, options, morph);
    return hb_morph_load_swc(path, options, morph);
}
