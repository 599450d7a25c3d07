/* Semantic checks of a parsed .mod file and its interface: names, ions, SOLVE, units. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmodl/nmodl_internal.h"

typedef enum {
    SYM_PARAMETER,
    SYM_STATE,
    SYM_ASSIGNED,
    SYM_CONSTANT,
    SYM_BUILTIN,
    SYM_ION,
    SYM_BLOCK
} sym_kind;

typedef struct {
    const char *name;
    sym_kind kind;
    int line, column;
    const char *unit;      /* NULL or "" when none */
    const nm_block *block; /* SYM_BLOCK */
    const char *what;      /* for messages: "PARAMETER", "FUNCTION", ... */
} symbol;

typedef struct {
    const char *name;
    const char *unit;
} local;

typedef struct {
    nm_ctx *c;
    symbol *syms;
    int n_syms, cap_syms;
    local *locals;
    int n_locals, cap_locals;
    const nm_block *block; /* being checked */
    int in_netcons;        /* inside a FOR_NETCONS */
    int n_netcons;         /* FOR_NETCONS statements seen */
} checker;

static const char *const block_words[] = {"INITIAL",   "BREAKPOINT", "DERIVATIVE",
                                          "KINETIC",   "LINEAR",     "NONLINEAR",
                                          "PROCEDURE", "FUNCTION",   "NET_RECEIVE"};
static const char *const decl_words[] = {"PARAMETER", "STATE", "ASSIGNED", "CONSTANT", "UNITS"};

static symbol *find(checker *k, const char *name)
{
    for (int i = 0; i < k->n_syms; i++)
        if (strcmp(k->syms[i].name, name) == 0) return &k->syms[i];
    return NULL;
}

static symbol *define(checker *k, const char *name, sym_kind kind, const char *what, int line,
                      int column)
{
    symbol *old = find(k, name);
    if (old && old->kind != SYM_BUILTIN && old->kind != SYM_ION)
        nm_error(k->c, line, column,
                 "'%s' is declared twice (first as %s at %d:%d); expected one "
                 "declaration per name",
                 name, old->what, old->line, old->column);
    symbol *s = old;
    if (!s) {
        NM_GROW(k->c, k->syms, k->n_syms, k->cap_syms);
        s = &k->syms[k->n_syms++];
    }
    *s = (symbol){name, kind, line, column, NULL, NULL, what};
    return s;
}

/* ---- the ions ---- */
static const struct {
    const char *name;
    double valence;
} known_ions[] = {{"na", 1}, {"k", 1}, {"ca", 2}, {"cl", -1}};

static void check_ions(checker *k)
{
    nm_ctx *c = k->c;
    for (int i = 0; i < c->n_ions; i++) {
        const nm_ion *ion = &c->ions[i];
        const char *x = ion->name.name;
        for (int j = 0; j < i; j++)
            if (strcmp(c->ions[j].name.name, x) == 0)
                nm_error(c, ion->name.line, ion->name.column,
                         "a second USEION %s (the first at "
                         "%d:%d); expected one USEION per ion",
                         x, c->ions[j].name.line, c->ions[j].name.column);
        const char *e = nm_printf(c, "e%s", x), *ci = nm_printf(c, "%si", x);
        const char *co = nm_printf(c, "%so", x), *cur = nm_printf(c, "i%s", x);
        for (int pass = 0; pass < 2; pass++) {
            const nm_ident *list = pass ? ion->write : ion->read;
            const int n = pass ? ion->n_write : ion->n_read;
            for (int j = 0; j < n; j++) {
                const char *v = list[j].name;
                if (strcmp(v, e) && strcmp(v, ci) && strcmp(v, co) && strcmp(v, cur))
                    nm_error(c, list[j].line, list[j].column,
                             "USEION %s %s '%s', which is not a "
                             "variable of the ion %s; expected %s, %s, %s or %s",
                             x, pass ? "WRITE" : "READ", v, x, e, ci, co, cur);
                if (!find(k, v)) {
                    symbol *s =
                        define(k, v, SYM_ION, "an ion variable", list[j].line, list[j].column);
                    s->unit = v[0] == 'e' && strcmp(v, e) == 0 ? "mV"
                              : strcmp(v, cur) == 0            ? "mA/cm2"
                                                               : "mM";
                }
            }
        }
        for (size_t j = 0; j < sizeof known_ions / sizeof *known_ions; j++)
            if (ion->has_valence && strcmp(known_ions[j].name, x) == 0 &&
                ion->valence != known_ions[j].valence)
                nm_error(c, ion->name.line, ion->name.column,
                         "VALENCE %g for %s, whose valence is "
                         "%g; expected %g or no VALENCE",
                         ion->valence, x, known_ions[j].valence, known_ions[j].valence);
    }
}

/* ---- expressions: names, calls and dimensions ---- */
typedef struct {
    nm_dim dim;
    int number; /* a bare number: takes the dimension of what it is added to */
} quantity;

static const struct {
    const char *name;
    int args;      /* -1: any */
    int dimension; /* 1: the argument must be dimensionless, 2: the result is the argument's */
} builtin_functions[] = {
    {"exp", 1, 1},          {"log", 1, 1},       {"log10", 1, 1},
    {"sqrt", 1, 0},         {"fabs", 1, 2},      {"sin", 1, 1},
    {"cos", 1, 1},          {"tan", 1, 1},       {"asin", 1, 1},
    {"acos", 1, 1},         {"atan", 1, 1},      {"atan2", 2, 0},
    {"sinh", 1, 1},         {"cosh", 1, 1},      {"tanh", 1, 1},
    {"pow", 2, 0},          {"floor", 1, 2},     {"ceil", 1, 2},
    {"fmod", 2, 0},         {"erf", 1, 1},       {"erfc", 1, 1},
    {"exprand", 1, 0},      {"normrand", 2, 0},  {"scop_random", 0, 0},
    {"net_send", 2, 0},     {"net_event", 1, 0}, {"net_move", 1, 0},
    {"printf", -1, 0},      {"at_time", 1, 0},   {"state_discontinuity", 2, 0},
    {"nrn_pointing", 1, 0},  {"random_uniform", -1, 0}, {"random_setseq", 2, 0},
    {"random_setids", 4, 0},
};

/* Whether node n (a statement or expression) calls `name` somewhere. */
static int calls(const nm_node *n, const char *name)
{
    if (n->kind == N_CALL && strcmp(n->name, name) == 0) return 1;
    for (int i = 0; i < n->n_kids; i++)
        if (n->kids[i] && calls(n->kids[i], name)) return 1;
    return 0;
}

/* Numbers the WATCH conditions under n in order (an S_WATCH's num: its first's index). */
static void number_watches(nm_node *n, int *count)
{
    if (n->kind == S_WATCH) {
        n->num = *count;
        *count += n->n_kids / 2;
        return;
    }
    for (int i = 0; i < n->n_kids; i++)
        if (n->kids[i]) number_watches(n->kids[i], count);
}

/* Whether `name` is a word of some VERBATIM block: C code may declare it. */
static int in_verbatim(const nm_ctx *c, const char *name)
{
    const size_t n = strlen(name);
    for (int i = 0; i < c->n_verbatims; i++) {
        const char *text = c->verbatims[i]->name;
        for (const char *p = strstr(text, name); p; p = strstr(p + 1, name)) {
            const int before = p == text ? ' ' : (unsigned char)p[-1], after = (unsigned char)p[n];
            const int word_before = before == '_' || (before >= '0' && before <= '9') ||
                                    (before >= 'a' && before <= 'z') ||
                                    (before >= 'A' && before <= 'Z');
            const int word_after = after == '_' || (after >= '0' && after <= '9') ||
                                   (after >= 'a' && after <= 'z') || (after >= 'A' && after <= 'Z');
            if (!word_before && !word_after) return 1;
        }
    }
    return 0;
}

static const local *find_local(checker *k, const char *name)
{
    for (int i = k->n_locals - 1; i >= 0; i--)
        if (strcmp(k->locals[i].name, name) == 0) return &k->locals[i];
    return NULL;
}

static void push_local(checker *k, const char *name, const char *unit)
{
    NM_GROW(k->c, k->locals, k->n_locals, k->cap_locals);
    k->locals[k->n_locals++] = (local){name, unit};
}

static quantity unknown(void) { return (quantity){{0, {0}}, 0}; }
static quantity dimensionless(void) { return (quantity){{1, {0}}, 0}; }

static quantity of_unit(checker *k, const char *unit, int line, int column)
{
    if (!unit || !unit[0]) return unknown();
    return (quantity){nm_unit_dim(k->c, unit, line, column), 0};
}

/* The unit of a name, or NULL when it has none; errors when it is not declared. */
static const char *name_unit(checker *k, const nm_node *n, int *found)
{
    *found = 1;
    const local *l = find_local(k, n->name);
    if (l) return l->unit;
    const symbol *s = find(k, n->name);
    if (s && s->kind == SYM_BLOCK) {
        if (s->block == k->block && s->block->kind == B_FUNCTION)
            return s->block->unit; /* the result */
        nm_error(k->c, n->line, n->column,
                 "'%s' is a %s, used as a variable; expected a "
                 "variable or a call %s(...)",
                 n->name, s->what, n->name);
    }
    if (s) return s->unit;
    if (k->block && k->block->kind == B_NET_RECEIVE && strcmp(n->name, "flag") == 0) return NULL;
    if (in_verbatim(k->c, n->name)) return NULL;
    *found = 0;
    nm_error(k->c, n->line, n->column,
             "undefined name '%s'; expected a PARAMETER, STATE, "
             "ASSIGNED, CONSTANT, LOCAL or argument of that name",
             n->name);
}

static void dims_differ(checker *k, const nm_node *at, const char *what, quantity a, quantity b)
{
    nm_error(k->c, at->line, at->column,
             "%s: %s against %s; expected the same dimension on both "
             "sides (or UNITSOFF around it)",
             what, nm_dim_string(k->c, a.dim), nm_dim_string(k->c, b.dim));
}

static quantity check_expr(checker *k, const nm_node *n, int units);

static quantity check_call(checker *k, const nm_node *n, int units)
{
    quantity args[8];
    for (int i = 0; i < n->n_kids; i++) {
        const quantity q = check_expr(k, n->kids[i], units);
        if (i < 8) args[i] = q;
    }
    const symbol *s = find(k, n->name);
    if (s && s->kind == SYM_BLOCK &&
        (s->block->kind == B_FUNCTION || s->block->kind == B_PROCEDURE)) {
        const int want = s->block->args ? s->block->args->n_kids : 0;
        if (want != n->n_kids)
            nm_error(k->c, n->line, n->column, "%s takes %d argument%s, given %d; expected %d",
                     n->name, want, want == 1 ? "" : "s", n->n_kids, want);
        return s->block->kind == B_FUNCTION
                   ? of_unit(k, s->block->unit, s->block->line, s->block->column)
                   : unknown();
    }
    if (s && s->kind != SYM_BLOCK)
        nm_error(k->c, n->line, n->column,
                 "'%s' is a %s, called as a function; expected a FUNCTION, "
                 "a PROCEDURE or a built-in function",
                 n->name, s->what);
    if (s)
        nm_error(k->c, n->line, n->column,
                 "'%s' is a %s block, called as a function; expected a "
                 "FUNCTION or a PROCEDURE",
                 n->name, s->what);
    for (size_t i = 0; i < sizeof builtin_functions / sizeof *builtin_functions; i++) {
        if (strcmp(builtin_functions[i].name, n->name) != 0) continue;
        const int want = builtin_functions[i].args;
        if (want >= 0 && want != n->n_kids)
            nm_error(k->c, n->line, n->column, "%s takes %d argument%s, given %d; expected %d",
                     n->name, want, want == 1 ? "" : "s", n->n_kids, want);
        if (builtin_functions[i].dimension == 1) {
            if (units && args[0].dim.known && !args[0].number &&
                !nm_dim_equal(args[0].dim, dimensionless().dim))
                nm_error(k->c, n->line, n->column,
                         "%s of a quantity in %s; expected a dimensionless "
                         "argument (or UNITSOFF around it)",
                         n->name, nm_dim_string(k->c, args[0].dim));
            return dimensionless();
        }
        if (builtin_functions[i].dimension == 2) return args[0];
        return unknown();
    }
    if (in_verbatim(k->c, n->name)) return unknown();
    nm_error(k->c, n->line, n->column,
             "undefined function '%s'; expected a FUNCTION or PROCEDURE "
             "of this file or a built-in (exp, log, fabs, sqrt, pow, ...)",
             n->name);
}

static quantity check_expr(checker *k, const nm_node *n, int units)
{
    switch (n->kind) {
    case N_NUM:
        if (n->unit) return of_unit(k, n->unit, n->line, n->column);
        return (quantity){{1, {0}}, 1};
    case N_STRING: return unknown();
    case N_NAME: {
        int found;
        const char *unit = name_unit(k, n, &found);
        for (int i = 0; i < n->n_kids; i++) check_expr(k, n->kids[i], units);
        return of_unit(k, unit, n->line, n->column);
    }
    case N_CALL: return check_call(k, n, units);
    case N_UNARY: {
        const quantity q = check_expr(k, n->kids[0], units);
        return n->op == '!' ? dimensionless() : q;
    }
    case N_BINARY: {
        const quantity a = check_expr(k, n->kids[0], units), b = check_expr(k, n->kids[1], units);
        switch (n->op) {
        case '+':
        case '-':
        case '<':
        case '>':
        case OP_LE:
        case OP_GE:
        case OP_EQ:
        case OP_NE: {
            const int compare = n->op != '+' && n->op != '-';
            if (units && a.dim.known && b.dim.known && !a.number && !b.number &&
                !nm_dim_equal(a.dim, b.dim))
                dims_differ(k, n,
                            compare ? "comparing quantities of different dimensions"
                                    : "adding quantities of different dimensions",
                            a, b);
            if (compare) return dimensionless();
            if (!a.dim.known || !b.dim.known) return unknown();
            return a.number ? b : a;
        }
        case '*':
        case '/': {
            if (!a.dim.known || !b.dim.known) return unknown();
            if (a.number || b.number)
                return (quantity){{1, {0}}, 1}; /* a bare number's unit is open */
            quantity q = {{1, {0}}, 0};
            for (int i = 0; i < NM_DIMS; i++) {
                const int e = a.dim.e[i] + (n->op == '*' ? b.dim.e[i] : -b.dim.e[i]);
                q.dim.e[i] = (signed char)(e > 100 ? 100 : e < -100 ? -100 : e);
            }
            return q;
        }
        case '^': {
            if (!a.dim.known) return unknown();
            if (nm_dim_equal(a.dim, dimensionless().dim)) return a;
            const nm_node *p = n->kids[1];
            if (p->kind == N_NUM && !p->unit && p->num == (int)p->num && p->num >= -8 &&
                p->num <= 8) {
                quantity q = a;
                for (int i = 0; i < NM_DIMS; i++)
                    q.dim.e[i] = (signed char)(a.dim.e[i] * (int)p->num);
                return q;
            }
            return unknown();
        }
        default: return dimensionless(); /* && || */
        }
    }
    default: return unknown();
    }
}

/* ---- statements ---- */
static const symbol *solve_target(checker *k, const nm_node *s)
{
    const symbol *t = find(k, s->name);
    if (!t || t->kind != SYM_BLOCK || t->block->kind == B_FUNCTION)
        nm_error(k->c, s->line, s->column,
                 "SOLVE of '%s', which is not a block of this file; expected "
                 "the name of a DERIVATIVE, KINETIC, LINEAR or PROCEDURE block",
                 s->name);
    const nm_block_kind kind = t->block->kind;
    const char *m = s->method;
    if (m && strcmp(m, "cnexp") && strcmp(m, "derivimplicit") && strcmp(m, "euler") &&
        strcmp(m, "sparse") && strcmp(m, "runge") && strcmp(m, "after_cvode") &&
        strcmp(m, "cvode_t"))
        nm_error(k->c, s->line, s->column,
                 "unknown METHOD '%s' for %s; expected cnexp, derivimplicit, "
                 "euler or sparse",
                 m, s->name);
    const char *kw = block_words[kind];
    if (kind == B_DERIVATIVE) {
        if (!m)
            nm_error(k->c, s->line, s->column,
                     "SOLVE %s without METHOD; expected METHOD cnexp, "
                     "derivimplicit or euler for a DERIVATIVE block",
                     s->name);
        if (s->steadystate ? strcmp(m, "derivimplicit") != 0 : strcmp(m, "sparse") == 0)
            nm_error(k->c, s->line, s->column,
                     "%s %s does not fit the DERIVATIVE block %s; expected %s",
                     s->steadystate ? "STEADYSTATE" : "METHOD", m, s->name,
                     s->steadystate ? "STEADYSTATE derivimplicit"
                                    : "METHOD cnexp, derivimplicit or euler");
    } else if (kind == B_KINETIC) {
        if (!m || strcmp(m, "sparse") != 0)
            nm_error(k->c, s->line, s->column,
                     "%s%s does not fit the KINETIC block %s; expected %s sparse",
                     m ? (s->steadystate ? "STEADYSTATE " : "METHOD ") : "SOLVE without METHOD",
                     m ? m : "", s->name, s->steadystate ? "STEADYSTATE" : "METHOD");
    } else if (m) {
        nm_error(k->c, s->line, s->column,
                 "METHOD %s for the %s block %s; expected no METHOD (a %s "
                 "is solved by running it)",
                 m, kw, s->name, kw);
    }
    return t;
}

static void check_state_name(checker *k, const nm_node *n, const char *where)
{
    const symbol *s = find(k, n->name);
    if (!s || (s->kind != SYM_STATE && s->kind != SYM_ION))
        nm_error(k->c, n->line, n->column, "'%s' in %s is not a STATE; expected a STATE variable",
                 n->name, where);
}

static void check_block(checker *k, const nm_node *b);

static void check_statement(checker *k, const nm_node *s)
{
    nm_ctx *c = k->c;
    const int units = !s->units_off;
    switch (s->kind) {
    case S_ASSIGN: {
        const nm_node *lhs = s->kids[0];
        int found;
        const char *unit = name_unit(k, lhs, &found);
        for (int i = 0; i < lhs->n_kids; i++) check_expr(k, lhs->kids[i], units);
        const symbol *sym = find_local(k, lhs->name) ? NULL : find(k, lhs->name);
        if (sym && (sym->kind == SYM_CONSTANT ||
                    (sym->kind == SYM_BUILTIN && strcmp(lhs->name, "v") == 0)))
            nm_error(c, lhs->line, lhs->column,
                     "assignment to %s '%s'; expected a STATE, ASSIGNED, "
                     "LOCAL or PARAMETER on the left",
                     sym->kind == SYM_CONSTANT ? "the CONSTANT" : "the membrane potential",
                     lhs->name);
        const quantity l = of_unit(k, unit, lhs->line, lhs->column),
                       r = check_expr(k, s->kids[1], units);
        if (units && l.dim.known && r.dim.known && !r.number && !nm_dim_equal(l.dim, r.dim))
            dims_differ(
                k, lhs,
                nm_printf(c, "%s (%s) is assigned a value of another dimension", lhs->name, unit),
                l, r);
        break;
    }
    case S_DERIV: {
        if (k->block->kind != B_DERIVATIVE)
            nm_error(c, s->line, s->column,
                     "the derivative %s' outside DERIVATIVE; expected it in a "
                     "DERIVATIVE block",
                     s->name);
        const symbol *sym = find(k, s->name);
        if (!sym || sym->kind != SYM_STATE)
            nm_error(c, s->line, s->column,
                     "%s' of '%s', which is not a STATE; expected a STATE variable", s->name,
                     s->name);
        const quantity r = check_expr(k, s->kids[0], units);
        quantity l = of_unit(k, sym->unit, s->line, s->column);
        if (l.dim.known) l.dim.e[2]--; /* per ms */
        if (units && l.dim.known && r.dim.known && !r.number && !nm_dim_equal(l.dim, r.dim))
            dims_differ(k, s, nm_printf(c, "%s' has the dimension of %s/ms", s->name, sym->unit), l,
                        r);
        break;
    }
    case S_CALL: check_expr(k, s->kids[0], units); break;
    case S_IF:
        check_expr(k, s->kids[0], units);
        for (int i = 1; i < s->n_kids; i++) {
            if (s->kids[i]->kind == S_BLOCK)
                check_block(k, s->kids[i]);
            else
                check_statement(k, s->kids[i]);
        }
        break;
    case S_WHILE:
        check_expr(k, s->kids[0], units);
        check_block(k, s->kids[1]);
        break;
    case S_FROM: {
        check_expr(k, s->kids[0], units);
        check_expr(k, s->kids[1], units);
        const int mark = k->n_locals;
        if (!find_local(k, s->name) && !find(k, s->name)) push_local(k, s->name, NULL);
        check_block(k, s->kids[2]);
        k->n_locals = mark;
        break;
    }
    case S_FOR_NETCONS: {
        /* every connection's weight vector in turn: its elements as NET_RECEIVE's arguments */
        const nm_node *args = s->kids[0], *own = k->block->args;
        const int want = own ? own->n_kids : 0;
        if (k->in_netcons)
            nm_error(c, s->line, s->column,
                     "FOR_NETCONS inside FOR_NETCONS; expected one loop over the connections");
        if (args->n_kids != want)
            nm_error(c, s->line, s->column,
                     "FOR_NETCONS has %d argument%s and NET_RECEIVE %d; expected as many as "
                     "NET_RECEIVE's (a connection's weight vector)",
                     args->n_kids, args->n_kids == 1 ? "" : "s", want);
        const int mark = k->n_locals;
        for (int i = 0; i < args->n_kids; i++) {
            const nm_node *a = args->kids[i];
            if (a->unit) nm_unit_dim(c, a->unit, a->line, a->column);
            push_local(k, a->name, a->unit ? a->unit : own->kids[i]->unit);
        }
        k->in_netcons = 1;
        k->n_netcons++;
        check_block(k, s->kids[1]);
        k->in_netcons = 0;
        k->n_locals = mark;
        break;
    }
    case S_LOCAL:
        for (int i = 0; i < s->n_kids; i++) push_local(k, s->kids[i]->name, NULL);
        break;
    case S_TABLE: {
        for (int i = 0; i < s->kids[0]->n_kids; i++) {
            const nm_node *n = s->kids[0]->kids[i];
            const symbol *sym = find(k, n->name);
            if (!sym || sym->kind != SYM_ASSIGNED)
                nm_error(c, n->line, n->column,
                         "TABLE of '%s', which is not ASSIGNED; expected ASSIGNED "
                         "variables the block computes",
                         n->name);
        }
        for (int i = 0; i < s->kids[1]->n_kids; i++) {
            const nm_node *n = s->kids[1]->kids[i];
            const symbol *sym = find(k, n->name);
            if (!sym || sym->kind == SYM_BLOCK)
                nm_error(c, n->line, n->column,
                         "TABLE DEPEND on '%s', which is not a variable; expected "
                         "PARAMETER or ASSIGNED names",
                         n->name);
        }
        check_expr(k, s->kids[2], 0);
        check_expr(k, s->kids[3], 0);
        const double with = s->kids[4]->num;
        if (with < 1 || with != (int)with || with > 1e7)
            nm_error(c, s->kids[4]->line, s->kids[4]->column,
                     "TABLE WITH %g; expected a whole number "
                     "of intervals, 1 to 10000000",
                     with);
        break;
    }
    case S_SOLVE: solve_target(k, s); break;
    case S_REACT:
        for (int side = 0; side < 2; side++)
            for (int i = 0; i < s->kids[side]->n_kids; i++) {
                const nm_node *n = s->kids[side]->kids[i];
                check_state_name(k, n, "a reaction");
                for (int j = 0; j < n->n_kids; j++) check_expr(k, n->kids[j], units);
            }
        for (int i = 2; i < s->n_kids; i++) check_expr(k, s->kids[i], units);
        break;
    case S_CONSERVE:
    case S_LINEQ:
        check_expr(k, s->kids[0], 0);
        check_expr(k, s->kids[1], 0);
        break;
    case S_COMPARTMENT:
        check_expr(k, s->kids[0], 0);
        for (int i = 0; i < s->kids[1]->n_kids; i++)
            check_state_name(k, s->kids[1]->kids[i], "COMPARTMENT");
        break;
    case S_INITIAL: check_block(k, s->kids[0]); break;
    case S_WATCH:
        for (int i = 0; i < s->n_kids; i++) check_expr(k, s->kids[i], units && i % 2 == 0);
        break;
    case S_BLOCK: check_block(k, s); break;
    default: break;
    }
}

static void check_block(checker *k, const nm_node *b)
{
    const int mark = k->n_locals;
    for (int i = 0; i < b->n_kids; i++) check_statement(k, b->kids[i]);
    k->n_locals = mark;
}

/* ---- the interface ---- */
static int precedence(const nm_node *n)
{
    if (n->kind != N_BINARY) return n->kind == N_UNARY ? 6 : 8;
    switch (n->op) {
    case OP_OR: return 1;
    case OP_AND: return 2;
    case '+':
    case '-': return 4;
    case '*':
    case '/': return 5;
    case '^': return 7;
    default: return 3;
    }
}

static void render(nm_ctx *c, const nm_node *n, char *out, size_t size)
{
    size_t used = strlen(out);
    if (used + 1 >= size) return;
    char *p = out + used;
    const size_t left = size - used;
    switch (n->kind) {
    case N_NUM: snprintf(p, left, "%s", n->name); break;
    case N_STRING: snprintf(p, left, "\"%s\"", n->name); break;
    case N_NAME:
        if (n->num > 1) snprintf(p, left, "%g", n->num);
        strncat(out, n->name, size - strlen(out) - 1);
        if (n->n_kids) {
            strncat(out, "[", size - strlen(out) - 1);
            render(c, n->kids[0], out, size);
            strncat(out, "]", size - strlen(out) - 1);
        }
        break;
    case N_CALL:
        snprintf(p, left, "%s(", n->name);
        for (int i = 0; i < n->n_kids; i++) {
            if (i) strncat(out, ", ", size - strlen(out) - 1);
            render(c, n->kids[i], out, size);
        }
        strncat(out, ")", size - strlen(out) - 1);
        break;
    case N_UNARY:
        snprintf(p, left, "%c", n->op);
        render(c, n->kids[0], out, size);
        break;
    case N_BINARY: {
        static const char *const ops[] = {"<=", ">=", "==", "!=", "&&", "||"};
        const char *op = n->op >= OP_LE && n->op <= OP_OR ? ops[n->op - OP_LE] : NULL;
        for (int side = 0; side < 2; side++) {
            const nm_node *kid = n->kids[side];
            const int paren = precedence(kid) < precedence(n) ||
                              (side && precedence(kid) == precedence(n) && kid->kind == N_BINARY);
            if (paren) strncat(out, "(", size - strlen(out) - 1);
            render(c, kid, out, size);
            if (paren) strncat(out, ")", size - strlen(out) - 1);
            if (!side) {
                char text[8];
                snprintf(text, sizeof text, n->op == '^' ? "^" : " %s ",
                         op ? op : (char[2]){(char)n->op, 0});
                strncat(out, text, size - strlen(out) - 1);
            }
        }
        break;
    }
    case N_LIST:
        for (int i = 0; i < n->n_kids; i++) {
            if (i) strncat(out, " + ", size - strlen(out) - 1);
            render(c, n->kids[i], out, size);
        }
        break;
    default: break;
    }
}

static void collect_reactions(nm_ctx *c, hb_nmodl_mechanism_t *m, const nm_block *b,
                              const nm_node *s, int *cap)
{
    if (s->kind == S_BLOCK || s->kind == S_IF || s->kind == S_WHILE || s->kind == S_FROM) {
        for (int i = 0; i < s->n_kids; i++) collect_reactions(c, m, b, s->kids[i], cap);
        return;
    }
    if (s->kind != S_REACT && s->kind != S_CONSERVE) return;
    char text[512] = "";
    if (s->kind == S_CONSERVE) {
        strcpy(text, "CONSERVE ");
        render(c, s->kids[0], text, sizeof text);
        strncat(text, " = ", sizeof text - strlen(text) - 1);
        render(c, s->kids[1], text, sizeof text);
    } else {
        render(c, s->kids[0], text, sizeof text);
        strncat(text, s->op == OP_REACT ? " <-> " : " << ", sizeof text - strlen(text) - 1);
        render(c, s->kids[1], text, sizeof text);
        strncat(text, s->op == OP_REACT ? " (" : "(", sizeof text - strlen(text) - 1);
        for (int i = 2; i < s->n_kids; i++) {
            if (i > 2) strncat(text, ", ", sizeof text - strlen(text) - 1);
            render(c, s->kids[i], text, sizeof text);
        }
        strncat(text, ")", sizeof text - strlen(text) - 1);
    }
    NM_GROW(c, m->reactions, m->n_reactions, *cap);
    m->reactions[m->n_reactions++] =
        (hb_nmodl_reaction_t){b->name, nm_strndup(c, text, strlen(text))};
}

static void collect_solves(nm_ctx *c, checker *k, hb_nmodl_mechanism_t *m, const nm_block *b,
                           const nm_node *s, int *cap)
{
    if (s->kind == S_BLOCK || s->kind == S_IF || s->kind == S_WHILE || s->kind == S_FROM ||
        s->kind == S_INITIAL) {
        for (int i = 0; i < s->n_kids; i++) collect_solves(c, k, m, b, s->kids[i], cap);
        return;
    }
    if (s->kind != S_SOLVE) return;
    const symbol *t = find(k, s->name);
    NM_GROW(c, m->solves, m->n_solves, *cap);
    m->solves[m->n_solves++] =
        (hb_nmodl_solve_t){s->name, block_words[t->block->kind], s->method ? s->method : "",
                           block_words[b->kind], s->steadystate};
}

static const char **names_of(nm_ctx *c, const nm_ident *ids, int n)
{
    const char **out = nm_alloc(c, sizeof *out * (size_t)(n ? n : 1));
    for (int i = 0; i < n; i++) out[i] = ids[i].name;
    return out;
}

static void check_declared(checker *k, const nm_ident *ids, int n, const char *list)
{
    for (int i = 0; i < n; i++) {
        const symbol *s = find(k, ids[i].name);
        if (!s || s->kind == SYM_BLOCK || s->kind == SYM_BUILTIN)
            nm_error(k->c, ids[i].line, ids[i].column,
                     "%s '%s' is not declared; expected a PARAMETER, "
                     "ASSIGNED or STATE of that name",
                     list, ids[i].name);
    }
}

/* A RANGE or GLOBAL name declared nowhere else is an ASSIGNED without a unit, as NEURON
 * makes it (BluePyOpt's Ca_HVA.mod has RANGE gCa_HVA alone). */
static void implicit_assigned(checker *k, const nm_ident *ids, int n)
{
    for (int i = 0; i < n; i++) {
        const symbol *s = find(k, ids[i].name);
        if (s && s->kind == SYM_BLOCK)
            nm_error(k->c, ids[i].line, ids[i].column,
                     "'%s' is a %s, listed as a variable; expected a "
                     "PARAMETER, ASSIGNED or STATE name",
                     ids[i].name, s->what);
        if (s) continue;
        nm_decl *d = NULL;
        NM_GROW(k->c, k->c->decls, k->c->n_decls, k->c->cap_decls);
        d = &k->c->decls[k->c->n_decls++];
        memset(d, 0, sizeof *d);
        d->kind = D_ASSIGNED;
        d->var = (hb_nmodl_var_t){
            .name = ids[i].name, .unit = "", .line = ids[i].line, .column = ids[i].column};
        symbol *sym =
            define(k, ids[i].name, SYM_ASSIGNED, "ASSIGNED (implicit)", ids[i].line, ids[i].column);
        sym->unit = "";
    }
}

hb_nmodl_mechanism_t *nm_check(nm_ctx *c)
{
    if (!c->has_neuron)
        nm_error(c, 1, 1,
                 "no NEURON block; expected NEURON { SUFFIX name ... } or NEURON { "
                 "POINT_PROCESS name ... }");
    if (!c->has_kind)
        nm_error(c, c->neuron_line, c->neuron_column,
                 "the NEURON block names no mechanism; expected "
                 "SUFFIX, POINT_PROCESS or ARTIFICIAL_CELL and a name");
    checker k = {c, NULL, 0, 0, NULL, 0, 0, NULL, 0, 0};
    static const struct {
        const char *name, *unit;
    } builtins[] = {{"v", "mV"},    {"t", "ms"},     {"dt", "ms"}, {"celsius", "degC"},
                    {"diam", "um"}, {"area", "um2"}, {"PI", ""},   {"secondorder", ""}};
    for (size_t i = 0; i < sizeof builtins / sizeof *builtins; i++) {
        symbol *s = define(&k, builtins[i].name, SYM_BUILTIN, "built-in variable", 0, 0);
        s->unit = builtins[i].unit;
    }
    for (int i = 0; i < c->n_decls; i++) {
        const nm_decl *d = &c->decls[i];
        const sym_kind kind = d->kind == D_PARAMETER  ? SYM_PARAMETER
                              : d->kind == D_STATE    ? SYM_STATE
                              : d->kind == D_ASSIGNED ? SYM_ASSIGNED
                                                      : SYM_CONSTANT;
        symbol *s = define(&k, d->var.name, kind, decl_words[d->kind], d->var.line, d->var.column);
        s->unit = d->var.unit;
        if (d->var.unit[0]) nm_unit_dim(c, d->var.unit, d->var.line, d->var.column);
        if (d->kind == D_STATE && strcmp(d->var.name, "v") == 0)
            nm_error(c, d->var.line, d->var.column,
                     "v declared as a STATE; expected v in ASSIGNED or "
                     "PARAMETER (the membrane potential is the engine's)");
    }
    for (int i = 0; i < c->n_units; i++)
        nm_unit_dim(c, c->units[i].definition, c->units[i].line, c->units[i].column);
    check_ions(&k);
    int seen[B_NET_RECEIVE + 1] = {0};
    for (int i = 0; i < c->n_blocks; i++) {
        nm_block *b = &c->blocks[i];
        if (b->kind == B_INITIAL || b->kind == B_BREAKPOINT || b->kind == B_NET_RECEIVE) {
            if (seen[b->kind])
                nm_error(c, b->line, b->column, "a second %s block; expected one",
                         block_words[b->kind]);
            seen[b->kind] = 1;
            continue;
        }
        symbol *s = define(&k, b->name, SYM_BLOCK, block_words[b->kind], b->line, b->column);
        s->block = b;
        s->unit = b->unit;
    }
    implicit_assigned(&k, c->range, c->n_range);
    implicit_assigned(&k, c->globals, c->n_globals);
    implicit_assigned(&k, c->randoms, c->n_randoms); /* the stream's position */
    check_declared(&k, c->nonspecific, c->n_nonspecific, "NONSPECIFIC_CURRENT");
    check_declared(&k, c->pointers, c->n_pointers, "POINTER");
    if (c->kind == HB_NMODL_DENSITY) {
        for (int i = 0; i < c->n_blocks; i++)
            if (c->blocks[i].kind == B_NET_RECEIVE)
                nm_error(
                    c, c->blocks[i].line, c->blocks[i].column,
                    "NET_RECEIVE in the density "
                    "mechanism %s; expected POINT_PROCESS or ARTIFICIAL_CELL for a mechanism that "
                    "receives events",
                    c->mech_name.name);
    }
    for (int i = 0; i < c->n_blocks; i++) {
        const nm_block *b = &c->blocks[i];
        k.block = b;
        k.n_locals = 0;
        if (b->args)
            for (int j = 0; j < b->args->n_kids; j++) {
                const nm_node *a = b->args->kids[j];
                if (a->unit) nm_unit_dim(c, a->unit, a->line, a->column);
                push_local(&k, a->name, a->unit);
            }
        check_block(&k, b->body);
    }

    /* the interface */
    hb_nmodl_mechanism_t *m = nm_alloc(c, sizeof *m);
    m->path = nm_strndup(c, c->path, strlen(c->path));
    m->title = c->title ? c->title : "";
    m->name = c->mech_name.name;
    m->kind = (hb_nmodl_kind_t)c->kind;
    m->for_netcons = k.n_netcons > 0;
    int counts[5] = {0};
    for (int i = 0; i < c->n_decls; i++) counts[c->decls[i].kind]++;
    m->parameters = nm_alloc(c, sizeof *m->parameters * (size_t)(counts[D_PARAMETER] + 1));
    m->states = nm_alloc(c, sizeof *m->states * (size_t)(counts[D_STATE] + 1));
    m->assigned = nm_alloc(c, sizeof *m->assigned * (size_t)(counts[D_ASSIGNED] + 1));
    m->constants = nm_alloc(c, sizeof *m->constants *
                                   (size_t)(counts[D_CONSTANT] + counts[D_UNITS_CONSTANT] + 1));
    for (int i = 0; i < c->n_decls; i++) {
        const nm_decl *d = &c->decls[i];
        switch (d->kind) {
        case D_PARAMETER: m->parameters[m->n_parameters++] = d->var; break;
        case D_STATE: m->states[m->n_states++] = d->var; break;
        case D_ASSIGNED: m->assigned[m->n_assigned++] = d->var; break;
        default: m->constants[m->n_constants++] = d->var; break;
        }
    }
    m->range = names_of(c, c->range, c->n_range);
    m->n_range = c->n_range;
    m->globals = names_of(c, c->globals, c->n_globals);
    m->n_globals = c->n_globals;
    m->randoms = names_of(c, c->randoms, c->n_randoms);
    m->n_randoms = c->n_randoms;
    m->pointers = names_of(c, c->pointers, c->n_pointers);
    m->n_pointers = c->n_pointers;
    m->nonspecific = names_of(c, c->nonspecific, c->n_nonspecific);
    m->n_nonspecific = c->n_nonspecific;
    m->ions = nm_alloc(c, sizeof *m->ions * (size_t)(c->n_ions + 1));
    for (int i = 0; i < c->n_ions; i++) {
        const nm_ion *ion = &c->ions[i];
        hb_nmodl_ion_t *o = &m->ions[m->n_ions++];
        o->name = ion->name.name;
        o->read = names_of(c, ion->read, ion->n_read);
        o->n_read = ion->n_read;
        o->write = names_of(c, ion->write, ion->n_write);
        o->n_write = ion->n_write;
        o->valence = ion->valence;
        o->has_valence = ion->has_valence;
        for (size_t j = 0; !o->has_valence && j < sizeof known_ions / sizeof *known_ions; j++)
            if (strcmp(known_ions[j].name, o->name) == 0) {
                o->valence = known_ions[j].valence;
                o->has_valence = 1;
            }
    }
    int cap_solves = 0, cap_reactions = 0;
    m->blocks = nm_alloc(c, sizeof *m->blocks * (size_t)(c->n_blocks + 1));
    m->n_net_receive_args = -1;
    for (int i = 0; i < c->n_blocks; i++) {
        const nm_block *b = &c->blocks[i];
        collect_solves(c, &k, m, b, b->body, &cap_solves);
        collect_reactions(c, m, b, b->body, &cap_reactions);
        if (b->kind == B_INITIAL) m->has_initial = 1;
        if (b->kind == B_BREAKPOINT) m->has_breakpoint = 1;
        if (b->kind == B_NET_RECEIVE) {
            m->n_net_receive_args = b->args->n_kids;
            m->net_receive_args = nm_alloc(c, sizeof(char *) * (size_t)(b->args->n_kids + 1));
            for (int j = 0; j < b->args->n_kids; j++)
                m->net_receive_args[j] = b->args->kids[j]->name;
        }
        if (b->kind >= B_DERIVATIVE && b->kind <= B_FUNCTION)
            m->blocks[m->n_blocks++] = (hb_nmodl_block_t){block_words[b->kind], b->name,
                                                          b->args ? b->args->n_kids : 0, b->line};
    }
    for (int i = 0; i < c->n_blocks; i++) {
        if (c->blocks[i].body && (calls(c->blocks[i].body, "net_send") ||
                                  calls(c->blocks[i].body, "net_move")))
            m->self_events = 1;
        if (c->blocks[i].body && calls(c->blocks[i].body, "net_event"))
            m->net_event = m->self_events = 1;
        if (c->blocks[i].kind == B_NET_RECEIVE) number_watches(c->blocks[i].body, &m->n_watch);
    }
    /* FOR_NETCONS: the self-event kernels too, whose calls carry the target's connections on
     * every engine (the GPU's device delivery has none; docs/mechanisms.md, section 10) */
    if (m->n_watch || m->for_netcons) m->self_events = 1;
    m->threadsafe = c->threadsafe;
    m->n_verbatim = c->n_verbatims;
    m->generator_blocker = "";
    if (c->n_verbatims)
        m->generator_blocker =
            nm_printf(c,
                      "%s:%d:%d: VERBATIM (C code inside NMODL) is not supported "
                      "by the code generator; expected NMODL statements only",
                      c->path, c->verbatims[0]->line, c->verbatims[0]->column);
    return m;
}
