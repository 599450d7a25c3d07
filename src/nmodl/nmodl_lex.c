/* The NMODL lexer, the arena and the error exit. Columns count bytes from 1 (a tab is one). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmodl/nmodl_internal.h"

struct nm_chunk {
    nm_chunk *next;
    size_t used, size;
    _Alignas(max_align_t) unsigned char data[];
};

void *nm_alloc(nm_ctx *c, size_t size)
{
    const size_t align = _Alignof(max_align_t);
    size = (size + align - 1) / align * align;
    nm_chunk *h = c->arena.head;
    if (!h || h->size - h->used < size) {
        const size_t want = size > 65536 ? size : 65536;
        nm_chunk *n = malloc(sizeof *n + want);
        if (!n) nm_error(c, 0, 0, "out of memory");
        n->next = h;
        n->used = 0;
        n->size = want;
        c->arena.head = h = n;
    }
    void *p = h->data + h->used;
    h->used += size;
    memset(p, 0, size);
    return p;
}

char *nm_strndup(nm_ctx *c, const char *s, size_t n)
{
    char *p = nm_alloc(c, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

char *nm_printf(nm_ctx *c, const char *format, ...)
{
    va_list args;
    va_start(args, format);
    char buffer[1024];
    vsnprintf(buffer, sizeof buffer, format, args);
    va_end(args);
    return nm_strndup(c, buffer, strlen(buffer));
}

void nm_grow(nm_ctx *c, void **array, int n, int *cap, size_t size)
{
    if (n < *cap) return;
    const int more = *cap ? 2 * *cap : 8;
    void *p = nm_alloc(c, (size_t)more * size);
    if (n) memcpy(p, *array, (size_t)n * size);
    *array = p;
    *cap = more;
}

void nm_arena_free(nm_arena *a)
{
    while (a->head) {
        nm_chunk *next = a->head->next;
        free(a->head);
        a->head = next;
    }
}

_Noreturn void nm_error(nm_ctx *c, int line, int column, const char *format, ...)
{
    char what[768];
    va_list args;
    va_start(args, format);
    vsnprintf(what, sizeof what, format, args);
    va_end(args);
    if (line > 0)
        snprintf(c->message, sizeof c->message, "%s:%d:%d: %s", c->path, line, column, what);
    else
        snprintf(c->message, sizeof c->message, "%s: %s", c->path, what);
    longjmp(c->fail, 1);
}

/* ---- the lexer ---- */
typedef struct {
    nm_ctx *c;
    size_t i;
    int line, column;
    int units_off;
} lexer;

static int at(const lexer *L, size_t k)
{
    return L->i + k < L->c->length ? (unsigned char)L->c->src[L->i + k] : -1;
}

static void advance(lexer *L)
{
    if (L->c->src[L->i] == '\n') {
        L->line++;
        L->column = 1;
    } else {
        L->column++;
    }
    L->i++;
}

static int is_name_start(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}
static int is_digit(int ch) { return ch >= '0' && ch <= '9'; }
static int is_name_char(int ch) { return is_name_start(ch) || is_digit(ch); }

/* The next whole word `word` at or after L->i, advancing to just past it; 0 when absent. */
static int skip_to_word(lexer *L, const char *word)
{
    const size_t n = strlen(word);
    while (L->i < L->c->length) {
        if (is_name_start(at(L, 0)) &&
            (L->i == 0 || !is_name_char((unsigned char)L->c->src[L->i - 1])) &&
            L->c->length - L->i >= n && memcmp(L->c->src + L->i, word, n) == 0 &&
            !is_name_char(at(L, n))) {
            for (size_t k = 0; k < n; k++) advance(L);
            return 1;
        }
        advance(L);
    }
    return 0;
}

static nm_token *push(lexer *L, nm_tok_kind kind, size_t start, int line, int column, int space)
{
    nm_ctx *c = L->c;
    NM_GROW(c, c->tokens, c->n_tokens, c->cap_tokens);
    nm_token *t = &c->tokens[c->n_tokens++];
    memset(t, 0, sizeof *t);
    t->kind = kind;
    t->offset = start;
    t->line = line;
    t->column = column;
    t->units_off = L->units_off;
    t->space_before = space;
    return t;
}

static const char *const two_char_ops[] = {"<=", ">=", "==", "!=", "&&", "||", "<<", "->"};
static const int two_char_codes[] = {OP_LE, OP_GE, OP_EQ, OP_NE, OP_AND, OP_OR, OP_FLUX, OP_ARROW};

void nm_lex(nm_ctx *c)
{
    lexer L = {c, 0, 1, 1, 0};
    int space = 1;
    for (;;) {
        const int ch = at(&L, 0);
        if (ch < 0) break;
        if (ch == ' ' || ch == '\t' || ch == '\r' || ch == '\n' || ch == '\f' || ch == '\v') {
            advance(&L);
            space = 1;
            continue;
        }
        if (ch == ':' || ch == '?') { /* a comment to the end of the line */
            while (at(&L, 0) >= 0 && at(&L, 0) != '\n') advance(&L);
            space = 1;
            continue;
        }
        const size_t start = L.i;
        const int line = L.line, column = L.column;
        if (is_name_start(ch)) {
            while (is_name_char(at(&L, 0))) advance(&L);
            const size_t n = L.i - start;
            const char *word = c->src + start;
            if (n == 7 && memcmp(word, "COMMENT", 7) == 0) {
                if (!skip_to_word(&L, "ENDCOMMENT"))
                    nm_error(c, line, column,
                             "COMMENT without ENDCOMMENT; expected ENDCOMMENT "
                             "before the end of the file");
                space = 1;
                continue;
            }
            if (n == 8 && memcmp(word, "VERBATIM", 8) == 0) {
                const size_t body = L.i;
                if (!skip_to_word(&L, "ENDVERBATIM"))
                    nm_error(c, line, column,
                             "VERBATIM without ENDVERBATIM; expected "
                             "ENDVERBATIM before the end of the file");
                nm_token *t = push(&L, TK_VERBATIM, start, line, column, space);
                t->text = nm_strndup(c, c->src + body, L.i - 11 - body);
                space = 1;
                continue;
            }
            if ((n == 7 && memcmp(word, "UNITSON", 7) == 0) ||
                (n == 8 && memcmp(word, "UNITSOFF", 8) == 0)) {
                L.units_off = n == 8;
                space = 1;
                continue;
            }
            if (n == 5 && memcmp(word, "TITLE", 5) == 0) { /* the rest of the line */
                while (at(&L, 0) == ' ' || at(&L, 0) == '\t') advance(&L);
                const size_t from = L.i;
                while (at(&L, 0) >= 0 && at(&L, 0) != '\n') advance(&L);
                size_t to = L.i;
                while (to > from &&
                       (c->src[to - 1] == ' ' || c->src[to - 1] == '\t' || c->src[to - 1] == '\r'))
                    to--;
                if (!c->title) c->title = nm_strndup(c, c->src + from, to - from);
                space = 1;
                continue;
            }
            nm_token *t = push(&L, TK_NAME, start, line, column, space);
            t->text = nm_strndup(c, word, n);
        } else if (is_digit(ch) || (ch == '.' && is_digit(at(&L, 1)))) {
            while (is_digit(at(&L, 0))) advance(&L);
            if (at(&L, 0) == '.') {
                advance(&L);
                while (is_digit(at(&L, 0))) advance(&L);
            }
            if ((at(&L, 0) == 'e' || at(&L, 0) == 'E') &&
                (is_digit(at(&L, 1)) ||
                 ((at(&L, 1) == '+' || at(&L, 1) == '-') && is_digit(at(&L, 2))))) {
                advance(&L);
                if (at(&L, 0) == '+' || at(&L, 0) == '-') advance(&L);
                while (is_digit(at(&L, 0))) advance(&L);
            }
            nm_token *t = push(&L, TK_NUMBER, start, line, column, space);
            t->text = nm_strndup(c, c->src + start, L.i - start);
            t->number = strtod(t->text, NULL);
        } else if (ch == '"') {
            advance(&L);
            while (at(&L, 0) >= 0 && at(&L, 0) != '"' && at(&L, 0) != '\n') {
                if (at(&L, 0) == '\\' && at(&L, 1) >= 0 && at(&L, 1) != '\n') advance(&L);
                advance(&L);
            }
            if (at(&L, 0) != '"')
                nm_error(c, line, column,
                         "unterminated string; expected a closing '\"' on the same line");
            advance(&L);
            nm_token *t = push(&L, TK_STRING, start, line, column, space);
            t->text = nm_strndup(c, c->src + start + 1, L.i - start - 2);
        } else {
            int op = 0;
            if (ch == '<' && at(&L, 1) == '-' && at(&L, 2) == '>') {
                op = OP_REACT;
                advance(&L);
                advance(&L);
                advance(&L);
            }
            for (size_t k = 0; !op && k < sizeof two_char_codes / sizeof *two_char_codes; k++)
                if (ch == two_char_ops[k][0] && at(&L, 1) == two_char_ops[k][1]) {
                    op = two_char_codes[k];
                    advance(&L);
                    advance(&L);
                }
            if (!op) {
                if (!strchr("{}()[]<>=+-*/^,'~!", ch) || ch == 0) {
                    if (ch >= 0x21 && ch < 0x7f)
                        nm_error(c, line, column,
                                 "unexpected character '%c'; expected a name, a "
                                 "number, a string or an operator",
                                 ch);
                    nm_error(c, line, column,
                             "unexpected byte 0x%02x; expected a name, a number, "
                             "a string or an operator",
                             (unsigned)ch);
                }
                op = ch;
                advance(&L);
            }
            nm_token *t = push(&L, TK_OP, start, line, column, space);
            t->op = op;
        }
        space = 0;
    }
    nm_token *t = push(&L, TK_EOF, L.i, L.line, L.column, 1);
    t->text = "";
}
