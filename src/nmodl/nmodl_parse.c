/* The NMODL parser: recursive descent over the lexer's tokens into the context's declarations,
 * NEURON block and blocks of statements. The first error leaves through nm_error. */
#include <stdio.h>
#include <string.h>

#include "nmodl/nmodl_internal.h"

#define NM_MAX_DEPTH 200

static nm_token *peek(nm_ctx *c) { return &c->tokens[c->pos]; }
static nm_token *peek_at(nm_ctx *c, int k)
{
    const int i = c->pos + k < c->n_tokens ? c->pos + k : c->n_tokens - 1;
    return &c->tokens[i];
}
static nm_token *take(nm_ctx *c)
{
    nm_token *t = &c->tokens[c->pos];
    if (t->kind != TK_EOF) c->pos++;
    return t;
}
static int is_op(const nm_token *t, int op) { return t->kind == TK_OP && t->op == op; }
static int is_word(const nm_token *t, const char *w)
{
    return t->kind == TK_NAME && strcmp(t->text, w) == 0;
}

static const char *op_text(nm_ctx *c, int op)
{
    switch (op) {
    case OP_LE: return "<=";
    case OP_GE: return ">=";
    case OP_EQ: return "==";
    case OP_NE: return "!=";
    case OP_AND: return "&&";
    case OP_OR: return "||";
    case OP_REACT: return "<->";
    case OP_FLUX: return "<<";
    case OP_ARROW: return "->";
    default: return nm_printf(c, "%c", (char)op);
    }
}

/* How a token reads in a message. */
static const char *describe(nm_ctx *c, const nm_token *t)
{
    switch (t->kind) {
    case TK_EOF: return "end of file";
    case TK_NAME: return nm_printf(c, "'%s'", t->text);
    case TK_NUMBER: return nm_printf(c, "number %s", t->text);
    case TK_STRING: return "a string";
    case TK_VERBATIM: return "VERBATIM";
    case TK_OP: return nm_printf(c, "'%s'", op_text(c, t->op));
    }
    return "?";
}

_Noreturn static void unexpected(nm_ctx *c, const nm_token *t, const char *where,
                                 const char *expected)
{
    nm_error(c, t->line, t->column, "unexpected %s%s%s; expected %s", describe(c, t),
             where ? " in " : "", where ? where : "", expected);
}

static void expect_op(nm_ctx *c, int op, const char *where)
{
    nm_token *t = peek(c);
    if (!is_op(t, op)) unexpected(c, t, where, nm_printf(c, "'%s'", op_text(c, op)));
    take(c);
}

static nm_token *expect_name(nm_ctx *c, const char *where, const char *expected)
{
    nm_token *t = peek(c);
    if (t->kind != TK_NAME) unexpected(c, t, where, expected);
    return take(c);
}

static nm_node *node(nm_ctx *c, nm_node_kind kind, const nm_token *t)
{
    nm_node *n = nm_alloc(c, sizeof *n);
    n->kind = kind;
    n->line = t->line;
    n->column = t->column;
    n->units_off = t->units_off;
    return n;
}

static void add(nm_ctx *c, nm_node *parent, nm_node *kid)
{
    NM_GROW(c, parent->kids, parent->n_kids, parent->cap_kids);
    parent->kids[parent->n_kids++] = kid;
}

static void enter(nm_ctx *c)
{
    if (++c->depth > NM_MAX_DEPTH) {
        nm_token *t = peek(c);
        nm_error(c, t->line, t->column,
                 "nesting deeper than %d levels; expected simpler "
                 "expressions or fewer nested blocks",
                 NM_MAX_DEPTH);
    }
}
static void leave(nm_ctx *c) { c->depth--; }

/* A unit in parentheses, taken from the source text: "(mA/cm2)" gives "mA/cm2". */
static const char *parse_unit(nm_ctx *c)
{
    nm_token *open = peek(c);
    if (!is_op(open, '(')) unexpected(c, open, NULL, "'(' and a unit");
    size_t k = open->offset + 1;
    while (k < c->length && c->src[k] != ')' && c->src[k] != '\n' && c->src[k] != '(') k++;
    if (k >= c->length || c->src[k] != ')')
        nm_error(c, open->line, open->column, "unterminated unit; expected ')' on the same line");
    size_t from = open->offset + 1, to = k;
    while (from < to && (c->src[from] == ' ' || c->src[from] == '\t')) from++;
    while (to > from && (c->src[to - 1] == ' ' || c->src[to - 1] == '\t')) to--;
    while (peek(c)->kind != TK_EOF && peek(c)->offset <= k) take(c);
    return nm_strndup(c, c->src + from, to - from);
}

/* ---- expressions ---- */
static nm_node *parse_expr(nm_ctx *c);

static nm_node *parse_primary(nm_ctx *c)
{
    nm_token *t = peek(c);
    if (t->kind == TK_NUMBER) {
        take(c);
        nm_node *n = node(c, N_NUM, t);
        n->num = t->number;
        n->name = t->text;
        if (is_op(peek(c), '(')) n->unit = parse_unit(c);
        return n;
    }
    if (t->kind == TK_STRING) {
        take(c);
        nm_node *n = node(c, N_STRING, t);
        n->name = t->text;
        return n;
    }
    if (t->kind == TK_NAME) {
        take(c);
        if (is_op(peek(c), '(')) {
            nm_node *n = node(c, N_CALL, t);
            n->name = t->text;
            take(c);
            if (!is_op(peek(c), ')')) {
                for (;;) {
                    add(c, n, parse_expr(c));
                    if (!is_op(peek(c), ',')) break;
                    take(c);
                }
            }
            if (!is_op(peek(c), ')'))
                unexpected(c, peek(c), nm_printf(c, "the call of %s", t->text), "',' or ')'");
            take(c);
            return n;
        }
        nm_node *n = node(c, N_NAME, t);
        n->name = t->text;
        if (is_op(peek(c), '[')) {
            take(c);
            add(c, n, parse_expr(c));
            expect_op(c, ']', nm_printf(c, "the index of %s", t->text));
        }
        return n;
    }
    if (is_op(t, '(')) {
        take(c);
        nm_node *n = parse_expr(c);
        if (!is_op(peek(c), ')')) unexpected(c, peek(c), "an expression", "an operator or ')'");
        take(c);
        return n;
    }
    unexpected(c, t, NULL, "an expression (a number, a name, a call or '(')");
}

static nm_node *parse_unary(nm_ctx *c);

static nm_node *parse_power(nm_ctx *c)
{
    nm_node *base = parse_primary(c);
    if (is_op(peek(c), '^')) {
        nm_token *t = take(c);
        nm_node *n = node(c, N_BINARY, t);
        n->op = '^';
        add(c, n, base);
        add(c, n, parse_unary(c));
        return n;
    }
    return base;
}

static nm_node *parse_unary(nm_ctx *c)
{
    enter(c);
    nm_token *t = peek(c);
    nm_node *n;
    if (is_op(t, '-') || is_op(t, '!') || is_op(t, '+')) {
        take(c);
        n = node(c, N_UNARY, t);
        n->op = t->op;
        add(c, n, parse_unary(c));
    } else {
        n = parse_power(c);
    }
    leave(c);
    return n;
}

static nm_node *binary(nm_ctx *c, const nm_token *t, nm_node *l, nm_node *r)
{
    nm_node *n = node(c, N_BINARY, t);
    n->op = t->op;
    add(c, n, l);
    add(c, n, r);
    return n;
}

static nm_node *parse_mul(nm_ctx *c)
{
    nm_node *l = parse_unary(c);
    while (is_op(peek(c), '*') || is_op(peek(c), '/')) {
        nm_token *t = take(c);
        l = binary(c, t, l, parse_unary(c));
    }
    return l;
}

static nm_node *parse_add(nm_ctx *c)
{
    nm_node *l = parse_mul(c);
    while (is_op(peek(c), '+') || is_op(peek(c), '-')) {
        nm_token *t = take(c);
        l = binary(c, t, l, parse_mul(c));
    }
    return l;
}

static int is_relation(const nm_token *t)
{
    return t->kind == TK_OP && (t->op == '<' || t->op == '>' || t->op == OP_LE || t->op == OP_GE ||
                                t->op == OP_EQ || t->op == OP_NE);
}

static nm_node *parse_rel(nm_ctx *c)
{
    nm_node *l = parse_add(c);
    while (is_relation(peek(c))) {
        nm_token *t = take(c);
        l = binary(c, t, l, parse_add(c));
    }
    return l;
}

static nm_node *parse_and(nm_ctx *c)
{
    nm_node *l = parse_rel(c);
    while (is_op(peek(c), OP_AND)) {
        nm_token *t = take(c);
        l = binary(c, t, l, parse_rel(c));
    }
    return l;
}

static nm_node *parse_expr(nm_ctx *c)
{
    enter(c);
    nm_node *l = parse_and(c);
    while (is_op(peek(c), OP_OR)) {
        nm_token *t = take(c);
        l = binary(c, t, l, parse_and(c));
    }
    leave(c);
    return l;
}

/* ---- statements ---- */
static nm_node *parse_block(nm_ctx *c, nm_block_kind in, const char *where);

static nm_node *name_list(nm_ctx *c, const char *where, int allow_index)
{
    nm_node *list = node(c, N_LIST, peek(c));
    for (;;) {
        nm_token *t = expect_name(c, where, "a name");
        nm_node *n = node(c, N_NAME, t);
        n->name = t->text;
        if (allow_index && is_op(peek(c), '[')) {
            take(c);
            nm_token *size = peek(c);
            if (size->kind != TK_NUMBER) unexpected(c, size, where, "an array size");
            take(c);
            n->num = size->number;
            expect_op(c, ']', where);
        }
        add(c, list, n);
        if (!is_op(peek(c), ',')) break;
        take(c);
    }
    return list;
}

/* A reaction's side: [coefficient] name[index] + ... */
static nm_node *reaction_side(nm_ctx *c)
{
    nm_node *list = node(c, N_LIST, peek(c));
    for (;;) {
        double coefficient = 1;
        if (peek(c)->kind == TK_NUMBER) coefficient = take(c)->number;
        nm_token *t = expect_name(c, "a reaction", "a STATE name");
        nm_node *n = node(c, N_NAME, t);
        n->name = t->text;
        n->num = coefficient;
        if (is_op(peek(c), '[')) {
            take(c);
            add(c, n, parse_expr(c));
            expect_op(c, ']', "a reaction");
        }
        add(c, list, n);
        if (!is_op(peek(c), '+')) break;
        take(c);
    }
    return list;
}

static nm_node *parse_reaction(nm_ctx *c, nm_token *tilde, nm_block_kind in)
{
    if (in == B_LINEAR || in == B_NONLINEAR) {
        nm_node *n = node(c, S_LINEQ, tilde);
        add(c, n, parse_expr(c));
        expect_op(c, '=', "an equation");
        add(c, n, parse_expr(c));
        return n;
    }
    if (in != B_KINETIC)
        nm_error(c, tilde->line, tilde->column,
                 "a reaction '~' outside KINETIC, LINEAR or "
                 "NONLINEAR; expected it in one of those blocks");
    nm_node *n = node(c, S_REACT, tilde);
    add(c, n, reaction_side(c));
    nm_token *op = peek(c);
    if (is_op(op, OP_REACT)) {
        take(c);
        n->op = OP_REACT;
        add(c, n, reaction_side(c));
        expect_op(c, '(', "a reaction's rates");
        add(c, n, parse_expr(c));
        expect_op(c, ',', "a reaction's rates (forward, backward)");
        add(c, n, parse_expr(c));
        expect_op(c, ')', "a reaction's rates");
    } else if (is_op(op, OP_FLUX)) {
        take(c);
        n->op = OP_FLUX;
        add(c, n, node(c, N_LIST, op));
        expect_op(c, '(', "a flux '<<'");
        add(c, n, parse_expr(c));
        expect_op(c, ')', "a flux '<<'");
    } else {
        unexpected(c, op, "a reaction", "'+', '<->' or '<<'");
    }
    return n;
}

static nm_node *parse_statement(nm_ctx *c, nm_block_kind in)
{
    nm_token *t = peek(c);
    if (t->kind == TK_VERBATIM) {
        take(c);
        nm_node *n = node(c, S_VERBATIM, t);
        n->name = t->text;
        NM_GROW(c, c->verbatims, c->n_verbatims, c->cap_verbatims);
        c->verbatims[c->n_verbatims++] = n;
        return n;
    }
    if (is_op(t, '~')) {
        take(c);
        return parse_reaction(c, t, in);
    }
    if (t->kind != TK_NAME) unexpected(c, t, NULL, "a statement or '}'");
    const char *w = t->text;
    if (strcmp(w, "LOCAL") == 0) {
        take(c);
        nm_node *list = name_list(c, "LOCAL", 1);
        list->kind = S_LOCAL;
        list->line = t->line;
        list->column = t->column;
        return list;
    }
    if (strcmp(w, "TABLE") == 0) {
        take(c);
        nm_node *n = node(c, S_TABLE, t);
        add(c, n,
            is_word(peek(c), "DEPEND") || is_word(peek(c), "FROM") ? node(c, N_LIST, t)
                                                                   : name_list(c, "TABLE", 0));
        if (is_word(peek(c), "DEPEND")) {
            take(c);
            add(c, n, name_list(c, "TABLE's DEPEND", 0));
        } else {
            add(c, n, node(c, N_LIST, t));
        }
        if (!is_word(peek(c), "FROM")) unexpected(c, peek(c), "TABLE", "DEPEND or FROM");
        take(c);
        add(c, n, parse_expr(c));
        if (!is_word(peek(c), "TO")) unexpected(c, peek(c), "TABLE", "TO");
        take(c);
        add(c, n, parse_expr(c));
        if (!is_word(peek(c), "WITH"))
            unexpected(c, peek(c), "TABLE", "WITH and a number of intervals");
        take(c);
        nm_token *with = peek(c);
        if (with->kind != TK_NUMBER)
            unexpected(c, with, "TABLE", "a number of intervals after WITH");
        take(c);
        nm_node *k = node(c, N_NUM, with);
        k->num = with->number;
        add(c, n, k);
        return n;
    }
    if (strcmp(w, "SOLVE") == 0) {
        take(c);
        nm_token *name = expect_name(c, "SOLVE", "the name of a block to solve");
        nm_node *n = node(c, S_SOLVE, t);
        n->name = name->text;
        n->line = name->line;
        n->column = name->column;
        if (is_word(peek(c), "METHOD") || is_word(peek(c), "STEADYSTATE")) {
            n->steadystate = is_word(take(c), "STEADYSTATE");
            n->method =
                expect_name(c, "SOLVE", "a method (cnexp, derivimplicit, sparse, euler)")->text;
        }
        return n;
    }
    if (strcmp(w, "if") == 0) {
        take(c);
        nm_node *n = node(c, S_IF, t);
        expect_op(c, '(', "if");
        add(c, n, parse_expr(c));
        if (!is_op(peek(c), ')')) unexpected(c, peek(c), "if's condition", "an operator or ')'");
        take(c);
        add(c, n, parse_block(c, in, "if"));
        if (is_word(peek(c), "else")) {
            take(c);
            if (is_word(peek(c), "if")) {
                enter(c);
                add(c, n, parse_statement(c, in));
                leave(c);
            } else {
                add(c, n, parse_block(c, in, "else"));
            }
        }
        return n;
    }
    if (strcmp(w, "while") == 0) {
        take(c);
        nm_node *n = node(c, S_WHILE, t);
        expect_op(c, '(', "while");
        add(c, n, parse_expr(c));
        expect_op(c, ')', "while's condition");
        add(c, n, parse_block(c, in, "while"));
        return n;
    }
    if (strcmp(w, "FROM") == 0) {
        take(c);
        nm_node *n = node(c, S_FROM, t);
        n->name = expect_name(c, "FROM", "a loop variable")->text;
        expect_op(c, '=', "FROM");
        add(c, n, parse_expr(c));
        if (!is_word(peek(c), "TO")) unexpected(c, peek(c), "FROM", "TO");
        take(c);
        add(c, n, parse_expr(c));
        add(c, n, parse_block(c, in, "FROM"));
        return n;
    }
    if (strcmp(w, "CONSERVE") == 0) {
        take(c);
        if (in != B_KINETIC)
            nm_error(c, t->line, t->column,
                     "CONSERVE outside KINETIC; expected it in a KINETIC block");
        nm_node *n = node(c, S_CONSERVE, t);
        add(c, n, parse_expr(c));
        expect_op(c, '=', "CONSERVE");
        add(c, n, parse_expr(c));
        return n;
    }
    if (strcmp(w, "COMPARTMENT") == 0) {
        take(c);
        if (in != B_KINETIC)
            nm_error(c, t->line, t->column,
                     "COMPARTMENT outside KINETIC; expected it in a KINETIC block");
        nm_node *n = node(c, S_COMPARTMENT, t);
        if (peek(c)->kind == TK_NAME && is_op(peek_at(c, 1), ',')) {
            n->name = take(c)->text;
            take(c);
        }
        add(c, n, parse_expr(c));
        expect_op(c, '{', "COMPARTMENT");
        nm_node *list = node(c, N_LIST, peek(c));
        while (peek(c)->kind == TK_NAME) {
            nm_token *s = take(c);
            nm_node *sn = node(c, N_NAME, s);
            sn->name = s->text;
            add(c, list, sn);
        }
        add(c, n, list);
        expect_op(c, '}', "COMPARTMENT's states");
        return n;
    }
    if (strcmp(w, "INITIAL") == 0 && in == B_NET_RECEIVE) {
        take(c);
        nm_node *n = node(c, S_INITIAL, t);
        add(c, n, parse_block(c, in, "NET_RECEIVE's INITIAL"));
        return n;
    }
    if (strcmp(w, "else") == 0)
        nm_error(c, t->line, t->column, "'else' without 'if'; expected a statement");
    if (strcmp(w, "WATCH") == 0) { /* WATCH (a > b) flag [, (c < d) flag ...] */
        if (in != B_NET_RECEIVE)
            nm_error(c, t->line, t->column,
                     "WATCH outside NET_RECEIVE; expected WATCH (condition) flag in a point "
                     "process's NET_RECEIVE");
        take(c);
        nm_node *n = node(c, S_WATCH, t);
        do {
            expect_op(c, '(', "WATCH's condition");
            nm_node *cond = parse_expr(c);
            if (cond->kind != N_BINARY || (cond->op != '>' && cond->op != '<'))
                nm_error(c, cond->line, cond->column,
                         "this WATCH condition is not a comparison > or <; expected WATCH (a > b) "
                         "flag or WATCH (a < b) flag");
            expect_op(c, ')', "WATCH's condition");
            add(c, n, cond);
            add(c, n, parse_expr(c));
        } while (is_op(peek(c), ',') && take(c));
        return n;
    }
    static const char *const unsupported[] = {"WATCH",       "LAG",     "SWEEP",     "MATCH",
                                              "FOR_NETCONS", "PROTECT", "MUTEXLOCK", "MUTEXUNLOCK",
                                              "DEFINE",      "INCLUDE", "RESET"};
    for (size_t k = 0; k < sizeof unsupported / sizeof *unsupported; k++)
        if (strcmp(w, unsupported[k]) == 0)
            nm_error(
                c, t->line, t->column,
                "%s is not supported (docs/nmodl.md lists the language "
                "covered); expected an assignment, a call, if, while, FROM, LOCAL, TABLE or SOLVE",
                w);
    take(c);
    nm_token *next = peek(c);
    if (is_op(next, '\'')) {
        take(c);
        nm_node *n = node(c, S_DERIV, t);
        n->name = w;
        expect_op(c, '=', nm_printf(c, "the derivative %s'", w));
        add(c, n, parse_expr(c));
        return n;
    }
    if (is_op(next, '(')) {
        c->pos--;
        nm_node *n = node(c, S_CALL, t);
        add(c, n, parse_primary(c));
        return n;
    }
    nm_node *lhs = node(c, N_NAME, t);
    lhs->name = w;
    if (is_op(next, '[')) {
        take(c);
        add(c, lhs, parse_expr(c));
        expect_op(c, ']', nm_printf(c, "the index of %s", w));
    }
    if (!is_op(peek(c), '='))
        unexpected(c, peek(c), nm_printf(c, "a statement beginning with '%s'", w),
                   "'=', '(' or \"'\"");
    take(c);
    nm_node *n = node(c, S_ASSIGN, t);
    add(c, n, lhs);
    add(c, n, parse_expr(c));
    return n;
}

static nm_node *parse_block(nm_ctx *c, nm_block_kind in, const char *where)
{
    enter(c);
    nm_token *open = peek(c);
    if (!is_op(open, '{')) unexpected(c, open, where, "'{'");
    take(c);
    nm_node *b = node(c, S_BLOCK, open);
    while (!is_op(peek(c), '}')) {
        if (peek(c)->kind == TK_EOF)
            nm_error(c, open->line, open->column, "'{' of %s is never closed; expected '}'", where);
        add(c, b, parse_statement(c, in));
    }
    take(c);
    leave(c);
    return b;
}

/* ---- top-level blocks ---- */
static nm_ident ident(const nm_token *t) { return (nm_ident){t->text, t->line, t->column}; }

static void ident_list(nm_ctx *c, const char *where, nm_ident **list, int *n, int *cap)
{
    for (;;) {
        nm_token *t = expect_name(c, where, "a name");
        NM_GROW(c, *list, *n, *cap);
        (*list)[(*n)++] = ident(t);
        if (!is_op(peek(c), ',')) break;
        take(c);
    }
}

static void parse_useion(nm_ctx *c)
{
    nm_token *name = expect_name(c, "USEION", "an ion's name (na, k, ca, ...)");
    NM_GROW(c, c->ions, c->n_ions, c->cap_ions);
    nm_ion *ion = &c->ions[c->n_ions++];
    memset(ion, 0, sizeof *ion);
    ion->name = ident(name);
    int cap_read = 0, cap_write = 0;
    for (;;) {
        nm_token *t = peek(c);
        if (is_word(t, "READ")) {
            take(c);
            ident_list(c, "USEION's READ", &ion->read, &ion->n_read, &cap_read);
        } else if (is_word(t, "WRITE")) {
            take(c);
            ident_list(c, "USEION's WRITE", &ion->write, &ion->n_write, &cap_write);
        } else if (is_word(t, "VALENCE")) {
            take(c);
            double sign = 1;
            if (is_op(peek(c), '-') || is_op(peek(c), '+')) sign = take(c)->op == '-' ? -1 : 1;
            nm_token *z = peek(c);
            if (z->kind != TK_NUMBER) unexpected(c, z, "VALENCE", "a number");
            take(c);
            ion->valence = sign * z->number;
            ion->has_valence = 1;
        } else if (is_word(t, "REPRESENTS")) {
            take(c);
            expect_name(c, "REPRESENTS", "an ontology term");
        } else {
            break;
        }
    }
}

static void parse_neuron(nm_ctx *c, const nm_token *kw)
{
    c->has_neuron = 1;
    c->neuron_line = kw->line;
    c->neuron_column = kw->column;
    expect_op(c, '{', "NEURON");
    for (;;) {
        nm_token *t = peek(c);
        if (is_op(t, '}')) {
            take(c);
            return;
        }
        if (t->kind == TK_VERBATIM) {
            parse_statement(c, B_PROCEDURE);
            continue;
        }
        if (t->kind != TK_NAME)
            unexpected(c, t, "NEURON",
                       "SUFFIX, POINT_PROCESS, USEION, NONSPECIFIC_CURRENT, RANGE, GLOBAL or '}'");
        const char *w = t->text;
        take(c);
        if (!strcmp(w, "SUFFIX") || !strcmp(w, "POINT_PROCESS") || !strcmp(w, "ARTIFICIAL_CELL")) {
            nm_token *name = expect_name(c, w, "the mechanism's name");
            if (c->has_kind)
                nm_error(c, t->line, t->column,
                         "a second %s (the mechanism is already named '%s' at "
                         "%d:%d); expected one SUFFIX, POINT_PROCESS or ARTIFICIAL_CELL per file",
                         w, c->mech_name.name, c->mech_name.line, c->mech_name.column);
            c->has_kind = 1;
            c->kind = w[0] == 'S'   ? HB_NMODL_DENSITY
                      : w[0] == 'P' ? HB_NMODL_POINT
                                    : HB_NMODL_ARTIFICIAL;
            c->mech_name = ident(name);
        } else if (!strcmp(w, "USEION")) {
            parse_useion(c);
        } else if (!strcmp(w, "NONSPECIFIC_CURRENT")) {
            ident_list(c, w, &c->nonspecific, &c->n_nonspecific, &c->cap_nonspecific);
        } else if (!strcmp(w, "ELECTRODE_CURRENT")) {
            ident_list(c, w, &c->electrode, &c->n_electrode, &c->cap_electrode);
        } else if (!strcmp(w, "RANGE")) {
            ident_list(c, w, &c->range, &c->n_range, &c->cap_range);
        } else if (!strcmp(w, "GLOBAL")) {
            ident_list(c, w, &c->globals, &c->n_globals, &c->cap_globals);
        } else if (!strcmp(w, "POINTER") || !strcmp(w, "BBCOREPOINTER")) {
            ident_list(c, w, &c->pointers, &c->n_pointers, &c->cap_pointers);
        } else if (!strcmp(w, "RANDOM")) {
            ident_list(c, w, &c->randoms, &c->n_randoms, &c->cap_randoms);
        } else if (!strcmp(w, "THREADSAFE")) {
            c->threadsafe = 1;
        } else if (!strcmp(w, "REPRESENTS")) {
            expect_name(c, w, "an ontology term");
        } else {
            unexpected(
                c, t, "NEURON",
                "SUFFIX, POINT_PROCESS, ARTIFICIAL_CELL, USEION, "
                "NONSPECIFIC_CURRENT, RANGE, GLOBAL, POINTER, BBCOREPOINTER, THREADSAFE or '}'");
        }
    }
}

static double signed_number(nm_ctx *c, const char *where)
{
    double sign = 1;
    if (is_op(peek(c), '-') || is_op(peek(c), '+')) sign = take(c)->op == '-' ? -1 : 1;
    nm_token *t = peek(c);
    if (t->kind != TK_NUMBER) unexpected(c, t, where, "a number");
    take(c);
    return sign * t->number;
}

static nm_decl *new_decl(nm_ctx *c, nm_decl_kind kind, const nm_token *name)
{
    NM_GROW(c, c->decls, c->n_decls, c->cap_decls);
    nm_decl *d = &c->decls[c->n_decls++];
    memset(d, 0, sizeof *d);
    d->kind = kind;
    d->var.name = name->text;
    d->var.unit = "";
    d->var.line = name->line;
    d->var.column = name->column;
    return d;
}

static void parse_declarations(nm_ctx *c, nm_decl_kind kind, const char *where)
{
    expect_op(c, '{', where);
    for (;;) {
        nm_token *t = peek(c);
        if (is_op(t, '}')) {
            take(c);
            return;
        }
        if (t->kind == TK_VERBATIM) {
            parse_statement(c, B_PROCEDURE);
            continue;
        }
        if (t->kind != TK_NAME) unexpected(c, t, where, "a name or '}'");
        take(c);
        nm_decl *d = new_decl(c, kind, t);
        if (is_op(peek(c), '[')) {
            take(c);
            nm_token *size = peek(c);
            if (size->kind != TK_NUMBER || size->number < 1)
                unexpected(c, size, where, "a positive array size");
            d->array = (int)size->number;
            take(c);
            expect_op(c, ']', where);
        }
        if (is_op(peek(c), '=')) {
            if (kind == D_STATE)
                unexpected(c, peek(c), where,
                           "a unit, FROM or the next name (a STATE has no default)");
            take(c);
            d->var.value = signed_number(c, where);
            d->var.has_value = 1;
        } else if (kind == D_CONSTANT) {
            unexpected(c, peek(c), where, "'=' and the constant's value");
        }
        if (is_op(peek(c), '(')) d->var.unit = parse_unit(c);
        if (is_op(peek(c), '<')) {
            take(c);
            d->var.lo = signed_number(c, "a range <lo,hi>");
            expect_op(c, ',', "a range <lo,hi>");
            d->var.hi = signed_number(c, "a range <lo,hi>");
            expect_op(c, '>', "a range <lo,hi>");
            d->var.has_limits = 1;
        }
        if (is_word(peek(c), "FROM")) { /* a STATE's or ASSIGNED's bounds: accepted, unused */
            take(c);
            signed_number(c, where);
            if (!is_word(peek(c), "TO")) unexpected(c, peek(c), where, "TO");
            take(c);
            signed_number(c, where);
        }
    }
}

static void parse_units(nm_ctx *c)
{
    expect_op(c, '{', "UNITS");
    for (;;) {
        nm_token *t = peek(c);
        if (is_op(t, '}')) {
            take(c);
            return;
        }
        if (is_op(t, '(')) { /* (name) = (definition) */
            const char *name = parse_unit(c);
            expect_op(c, '=', "UNITS");
            const char *definition = parse_unit(c);
            NM_GROW(c, c->units, c->n_units, c->cap_units);
            c->units[c->n_units++] = (nm_unit_def){name, definition, t->line, t->column};
        } else if (t->kind == TK_NAME) { /* NAME = (physical constant) (unit) */
            take(c);
            expect_op(c, '=', "UNITS");
            nm_decl *d = new_decl(c, D_UNITS_CONSTANT, t);
            if (peek(c)->kind == TK_NUMBER || is_op(peek(c), '-')) {
                d->var.value = signed_number(c, "UNITS");
            } else {
                const char *constant = parse_unit(c);
                static const char *const known[] = {"faraday", "k-mole",   "pi",        "e",
                                                    "R",       "avogadro", "boltzmann", "planck"};
                static const double values[] = {
                    96485.3321233100184, 8313.424,      3.14159265358979323846,
                    1.602176634e-19,     8.313424,      6.02214076e23,
                    1.380649e-23,        6.62607015e-34};
                int found = -1;
                for (size_t k = 0; k < sizeof known / sizeof *known; k++)
                    if (strcmp(constant, known[k]) == 0) found = (int)k;
                if (found < 0)
                    nm_error(c, t->line, t->column,
                             "unknown physical constant '%s' for %s; expected "
                             "faraday, k-mole, pi, e, avogadro, boltzmann or planck",
                             constant, t->text);
                d->var.value = values[found];
            }
            d->var.has_value = 1;
            if (is_op(peek(c), '(')) d->var.unit = parse_unit(c);
        } else {
            unexpected(c, t, "UNITS", "'(' of a unit definition, a constant's name or '}'");
        }
    }
}

static void parse_independent(nm_ctx *c)
{
    expect_op(c, '{', "INDEPENDENT");
    while (!is_op(peek(c), '}')) {
        nm_token *t = expect_name(c, "INDEPENDENT", "the independent variable (t)");
        c->independent = ident(t);
        if (is_word(peek(c), "FROM")) {
            take(c);
            signed_number(c, "INDEPENDENT");
            if (!is_word(peek(c), "TO")) unexpected(c, peek(c), "INDEPENDENT", "TO");
            take(c);
            signed_number(c, "INDEPENDENT");
            if (!is_word(peek(c), "WITH")) unexpected(c, peek(c), "INDEPENDENT", "WITH");
            take(c);
            signed_number(c, "INDEPENDENT");
        }
        if (is_op(peek(c), '(')) parse_unit(c);
    }
    take(c);
}

static nm_block *new_block(nm_ctx *c, nm_block_kind kind, const nm_token *kw, const char *name)
{
    NM_GROW(c, c->blocks, c->n_blocks, c->cap_blocks);
    nm_block *b = &c->blocks[c->n_blocks++];
    memset(b, 0, sizeof *b);
    b->kind = kind;
    b->name = name;
    b->line = kw->line;
    b->column = kw->column;
    return b;
}

/* (a, b (mV), ...) of PROCEDURE, FUNCTION and NET_RECEIVE. */
static nm_node *parse_args(nm_ctx *c, const char *where)
{
    nm_node *list = node(c, N_LIST, peek(c));
    expect_op(c, '(', where);
    if (!is_op(peek(c), ')')) {
        for (;;) {
            nm_token *t = expect_name(c, where, "an argument's name");
            nm_node *n = node(c, N_NAME, t);
            n->name = t->text;
            if (is_op(peek(c), '(')) n->unit = parse_unit(c);
            add(c, list, n);
            if (!is_op(peek(c), ',')) break;
            take(c);
        }
    }
    if (!is_op(peek(c), ')')) unexpected(c, peek(c), where, "',' or ')'");
    take(c);
    return list;
}

void nm_parse(nm_ctx *c)
{
    static const struct {
        const char *word;
        nm_block_kind kind;
    } named[] = {{"DERIVATIVE", B_DERIVATIVE}, {"KINETIC", B_KINETIC},
                 {"LINEAR", B_LINEAR},         {"NONLINEAR", B_NONLINEAR},
                 {"PROCEDURE", B_PROCEDURE},   {"FUNCTION", B_FUNCTION}};
    for (;;) {
        nm_token *t = peek(c);
        if (t->kind == TK_EOF) return;
        if (t->kind == TK_VERBATIM) {
            parse_statement(c, B_PROCEDURE);
            continue;
        }
        if (t->kind != TK_NAME)
            unexpected(c, t, NULL,
                       "a block (NEURON, UNITS, PARAMETER, STATE, ASSIGNED, CONSTANT, "
                       "INITIAL, BREAKPOINT, DERIVATIVE, KINETIC, LINEAR, PROCEDURE, FUNCTION, "
                       "NET_RECEIVE)");
        const char *w = t->text;
        take(c);
        if (!strcmp(w, "NEURON")) {
            if (c->has_neuron)
                nm_error(c, t->line, t->column,
                         "a second NEURON block (the first at %d:%d); expected one", c->neuron_line,
                         c->neuron_column);
            parse_neuron(c, t);
        } else if (!strcmp(w, "UNITS")) {
            parse_units(c);
        } else if (!strcmp(w, "PARAMETER")) {
            parse_declarations(c, D_PARAMETER, w);
        } else if (!strcmp(w, "STATE")) {
            parse_declarations(c, D_STATE, w);
        } else if (!strcmp(w, "ASSIGNED")) {
            parse_declarations(c, D_ASSIGNED, w);
        } else if (!strcmp(w, "CONSTANT")) {
            parse_declarations(c, D_CONSTANT, w);
        } else if (!strcmp(w, "INDEPENDENT")) {
            parse_independent(c);
        } else if (!strcmp(w, "INITIAL") || !strcmp(w, "BREAKPOINT")) {
            nm_block *b = new_block(c, w[0] == 'I' ? B_INITIAL : B_BREAKPOINT, t, w);
            b->body = parse_block(c, b->kind, w);
        } else if (!strcmp(w, "NET_RECEIVE")) {
            nm_block *b = new_block(c, B_NET_RECEIVE, t, w);
            b->args = parse_args(c, w);
            b->body = parse_block(c, B_NET_RECEIVE, w);
        } else {
            size_t k = 0;
            while (k < sizeof named / sizeof *named && strcmp(w, named[k].word) != 0) k++;
            if (k == sizeof named / sizeof *named)
                unexpected(c, t, NULL,
                           "a block (NEURON, UNITS, PARAMETER, STATE, ASSIGNED, "
                           "CONSTANT, INITIAL, BREAKPOINT, DERIVATIVE, KINETIC, LINEAR, PROCEDURE, "
                           "FUNCTION, NET_RECEIVE)");
            nm_token *name = expect_name(c, w, "the block's name");
            nm_block *b = new_block(c, named[k].kind, name, name->text);
            if (b->kind == B_PROCEDURE || b->kind == B_FUNCTION) {
                b->args = parse_args(c, nm_printf(c, "%s %s", w, name->text));
                if (is_op(peek(c), '(')) b->unit = parse_unit(c);
            }
            b->body = parse_block(c, b->kind, nm_printf(c, "%s %s", w, name->text));
        }
    }
}
