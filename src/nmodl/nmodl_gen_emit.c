/* The C code generator's writers (nmodl_gen.h): text, numbers, names and expressions,
 * indentation, the LOCALs in scope and lookups in the syntax tree. Every expression keeps the
 * .mod's operation order: the tree is written fully parenthesised, exp, log, log10, pow (and ^;
 * hb_powi for an integer literal exponent), sinh, cosh and tanh are common/hb_math.h's, the
 * same bits on the CPU and the GPU. They call no other part of the generator: a RANDOM's draw
 * inside an expression goes through gen.hooks (nmodl_gen_point.c's, set by nm_emit). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/hb_math.h"
#include "nmodl/nmodl_gen.h"

#define emit nm_gen_emit

void nm_gen_emit(gen *g, const char *format, ...)
{
    if (!g->out) return; /* a check: nothing written */
    va_list args;
    va_start(args, format);
    vfprintf(g->out, format, args);
    va_end(args);
}

void nm_gen_put(gen *g, const char *text)
{
    if (g->out) fputs(text, g->out);
}

const nm_block *nm_gen_find_block(const nm_ctx *c, const char *name)
{
    for (int i = 0; i < c->n_blocks; i++)
        if (c->blocks[i].name && strcmp(c->blocks[i].name, name) == 0 &&
            c->blocks[i].kind != B_INITIAL && c->blocks[i].kind != B_BREAKPOINT &&
            c->blocks[i].kind != B_NET_RECEIVE)
            return &c->blocks[i];
    return NULL;
}

const nm_block *nm_gen_find_kind(const nm_ctx *c, nm_block_kind kind)
{
    for (int i = 0; i < c->n_blocks; i++)
        if (c->blocks[i].kind == kind) return &c->blocks[i];
    return NULL;
}

static int is_local(const gen *g, const char *name)
{
    for (int i = g->n_locals - 1; i >= 0; i--)
        if (strcmp(g->locals[i], name) == 0) return 1;
    return 0;
}

int nm_gen_is_arg(const gen *g, const char *name)
{
    if (!g->block || !g->block->args) return 0;
    for (int i = 0; i < g->block->args->n_kids; i++)
        if (strcmp(g->block->args->kids[i]->name, name) == 0) return 1;
    return 0;
}

int nm_gen_in_list(const char *const *list, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(list[i], name) == 0) return 1;
    return 0;
}

int nm_gen_ion_reads(const hb_nmodl_mechanism_t *m, const char *name)
{
    for (int j = 0; j < m->n_ions; j++)
        if (nm_gen_in_list(m->ions[j].read, m->ions[j].n_read, name)) return 1;
    return 0;
}

int nm_gen_ion_var(const hb_nmodl_mechanism_t *m, const char *name)
{
    for (int j = 0; j < m->n_ions; j++)
        if (nm_gen_in_list(m->ions[j].write, m->ions[j].n_write, name)) return 1;
    return nm_gen_ion_reads(m, name);
}

void nm_gen_number(gen *g, double x)
{
    char text[40];
    snprintf(text, sizeof text, "%.17g", x);
    if (!strpbrk(text, ".eEn")) strcat(text, ".0");
    emit(g, "%s", text);
}

void nm_gen_name(gen *g, const nm_node *n)
{
    if (n->n_kids)
        nm_error(g->c, n->line, n->column,
                 "the array element %s[...] is not supported by the code "
                 "generator yet; expected scalar variables",
                 n->name);
    if (is_local(g, n->name))
        emit(g, "lv_%s", n->name);
    else if (nm_gen_is_arg(g, n->name))
        emit(g, "a_%s", n->name);
    else if (g->block && g->block->kind == B_FUNCTION && strcmp(g->block->name, n->name) == 0)
        emit(g, "fv");
    else
        emit(g, "s->%s", n->name);
}

/* a^b and pow(a, b): hb_powi for an integer literal b (|b| <= 64: x^2, m^4), a fraction of
 * hb_pow's cost and as nearly correctly rounded; else hb_pow (common/hb_math.h). */
static void emit_pow(gen *g, const nm_node *a, const nm_node *b)
{
    const int negative = b->kind == N_UNARY && b->op == '-' && b->kids[0]->kind == N_NUM;
    const nm_node *num = negative ? b->kids[0] : b;
    if (num->kind == N_NUM && num->num >= 0.0 && num->num <= 64.0 &&
        num->num == (double)(int)num->num) {
        emit(g, "hb_powi(");
        nm_gen_expr(g, a);
        emit(g, ", %d)", negative ? -(int)num->num : (int)num->num);
        return;
    }
    emit(g, "hb_pow(");
    nm_gen_expr(g, a);
    emit(g, ", ");
    nm_gen_expr(g, b);
    emit(g, ")");
}

/* The math calls that fold, in the names the kernel calls them by: the project's own
 * (hb_math.h) and the exact ones of libm (IEEE 754 rounds them once, everywhere). */
static const char *const fold_calls[] = {"exp",  "log",  "log10", "sinh", "cosh",
                                         "tanh", "sqrt", "fabs",  "floor", "ceil"};

/* x = the value of a^b as the kernel computes it (emit_pow's choice of function). */
static double fold_pow(const nm_node *b, double x, double y)
{
    const int negative = b->kind == N_UNARY && b->op == '-' && b->kids[0]->kind == N_NUM;
    const nm_node *num = negative ? b->kids[0] : b;
    if (num->kind == N_NUM && num->num >= 0.0 && num->num <= 64.0 &&
        num->num == (double)(int)num->num)
        return hb_powi(x, negative ? -(int)num->num : (int)num->num);
    return hb_pow(x, y);
}

/* Whether n is a constant expression (numbers, + - * /, unary -, ^ and the fold_calls; no
 * name, so nothing a model file or the C API can set: GLOBALs and PARAMETERs stay variables),
 * with *x its value computed by the functions and in the order the kernel would, each
 * operation one IEEE rounding (this file, as every C file, is compiled without FMA
 * contraction), so the folded literal has the kernel's bits. *call: it calls a function (or
 * ^), which the C compiler would not fold itself. */
static int fold(const gen *g, const nm_node *n, double *x, int *call)
{
    double a, b;
    switch (n->kind) {
    case N_NUM: *x = n->num; return 1;
    case N_UNARY:
        if (n->op != '-' || !fold(g, n->kids[0], &a, call)) return 0;
        *x = -a;
        return 1;
    case N_BINARY:
        if (n->op != '+' && n->op != '-' && n->op != '*' && n->op != '/' && n->op != '^')
            return 0;
        if (!fold(g, n->kids[0], &a, call) || !fold(g, n->kids[1], &b, call)) return 0;
        switch (n->op) {
        case '+': *x = a + b; return 1;
        case '-': *x = a - b; return 1;
        case '*': *x = a * b; return 1;
        case '/': *x = a / b; return 1;
        default: *call = 1; *x = fold_pow(n->kids[1], a, b); return 1;
        }
    case N_CALL: {
        if (nm_gen_find_block(g->c, n->name) || n->n_kids < 1 || n->n_kids > 2) return 0;
        if (!fold(g, n->kids[0], &a, call)) return 0;
        *call = 1;
        if (strcmp(n->name, "pow") == 0 && n->n_kids == 2) {
            if (!fold(g, n->kids[1], &b, call)) return 0;
            *x = fold_pow(n->kids[1], a, b);
            return 1;
        }
        if (n->n_kids != 1) return 0;
        size_t f = 0;
        while (f < sizeof fold_calls / sizeof *fold_calls && strcmp(fold_calls[f], n->name) != 0)
            f++;
        switch (f) {
        case 0: *x = hb_exp(a); return 1;
        case 1: *x = hb_log(a); return 1;
        case 2: *x = hb_log10(a); return 1;
        case 3: *x = hb_sinh(a); return 1;
        case 4: *x = hb_cosh(a); return 1;
        case 5: *x = hb_tanh(a); return 1;
        case 6: *x = sqrt(a); return 1;
        case 7: *x = fabs(a); return 1;
        case 8: *x = floor(a); return 1;
        case 9: *x = ceil(a); return 1;
        default: return 0;
        }
    }
    default: return 0;
    }
}

/* Whether n reads nothing but celsius and numbers (math functions allowed, not the .mod's
 * FUNCTIONs), and reads celsius. */
static int celsius_only(const nm_ctx *c, const nm_node *n, int *reads)
{
    switch (n->kind) {
    case N_NUM: return 1;
    case N_NAME:
        if (n->n_kids || strcmp(n->name, "celsius") != 0) return 0;
        *reads = 1;
        return 1;
    case N_CALL:
        if (nm_gen_find_block(c, n->name)) return 0;
        /* fall through */
    case N_UNARY:
    case N_BINARY:
        for (int i = 0; i < n->n_kids; i++)
            if (!celsius_only(c, n->kids[i], reads)) return 0;
        return 1;
    default: return 0;
    }
}

int nm_gen_assignments(const nm_node *n, const char *name)
{
    if (!n) return 0;
    int count = n->kind == S_ASSIGN && strcmp(n->kids[0]->name, name) == 0;
    for (int i = 0; i < n->n_kids; i++) count += nm_gen_assignments(n->kids[i], name);
    return count;
}

const nm_node *nm_gen_local_assignment(const nm_block *b, const char *name)
{
    if (!b || (b->kind != B_FUNCTION && b->kind != B_PROCEDURE)) return NULL;
    const nm_node *found = NULL;
    int local = 0;
    for (int i = 0; i < b->body->n_kids; i++) {
        const nm_node *k = b->body->kids[i];
        if (k->kind == S_LOCAL)
            for (int j = 0; j < k->n_kids; j++) local |= strcmp(k->kids[j]->name, name) == 0;
        if (k->kind == S_ASSIGN && !k->kids[0]->n_kids && strcmp(k->kids[0]->name, name) == 0)
            found = k;
    }
    return local && found && nm_gen_assignments(b->body, name) == 1 ? found : NULL;
}

int nm_gen_hoisted(const nm_ctx *c, const nm_block *b, const nm_node *s)
{
    int reads = 0;
    return s->kind == S_ASSIGN && !s->kids[0]->n_kids &&
           nm_gen_local_assignment(b, s->kids[0]->name) == s &&
           celsius_only(c, s->kids[1], &reads) && reads;
}

static int same_tree(const nm_node *a, const nm_node *b)
{
    if (a->kind != b->kind || a->op != b->op || a->n_kids != b->n_kids ||
        (a->kind == N_NUM && a->num != b->num) ||
        ((a->name != NULL) != (b->name != NULL)) || (a->name && strcmp(a->name, b->name) != 0))
        return 0;
    for (int i = 0; i < a->n_kids; i++)
        if (!same_tree(a->kids[i], b->kids[i])) return 0;
    return 1;
}

/* Whether n divides by a tree equal to y with a numerator other than x. */
static int other_division_by(const nm_node *n, const nm_node *x, const nm_node *y)
{
    if (n->kind == N_BINARY && n->op == '/' && same_tree(n->kids[1], y) &&
        !same_tree(n->kids[0], x))
        return 1;
    for (int i = 0; i < n->n_kids; i++)
        if (other_division_by(n->kids[i], x, y)) return 1;
    return 0;
}

static int assigns_any(const nm_node *body, const nm_node *y)
{
    if (y->kind == N_NAME && nm_gen_assignments(body, y->name) > 1) return 1;
    if (y->kind == N_CALL) return 1;
    for (int i = 0; i < y->n_kids; i++)
        if (assigns_any(body, y->kids[i])) return 1;
    return 0;
}

int nm_gen_runs_every_step(const gen *g)
{
    const nm_block *b = g->block;
    if (!b || !b->body || b->kind == B_INITIAL || g->receive_init) return 0;
    for (int i = 0; i < b->body->n_kids; i++)
        if (b->body->kids[i]->kind == S_TABLE) return 0;
    return 1;
}

/* A LOCAL of the block being written assigned once from a constant or from celsius alone. */
static int invariant_local(gen *g, const nm_node *y)
{
    if (y->kind != N_NAME || y->n_kids) return 0;
    const nm_node *a = nm_gen_local_assignment(g->block, y->name);
    double value;
    int call = 0;
    return a && (fold(g, a->kids[1], &value, &call) || nm_gen_hoisted(g->c, g->block, a));
}

/* r = 1/y of a constant y, as an exact hex literal with y in a comment. */
static void emit_folded_reciprocal(gen *g, const nm_node *y, double r)
{
    emit(g, "%a /* 1 / ", r);
    g->no_fold = 1;
    nm_gen_expr(g, y);
    g->no_fold = 0;
    emit(g, " */");
}

/* x / y as x times the reciprocal of y where that saves divisions in code that runs every
 * step (docs/nmodl.md, section 5): y a constant (its reciprocal folded here, an exact hex
 * literal), a LOCAL assigned once from a constant or from celsius alone (1.0 / y is then a
 * constant or loop-invariant to the C compiler), or a divisor that the block divides other
 * numerators by too, none of its variables assigned twice (one division, the C compiler's
 * common subexpression). Each such quotient is rounded twice where the .mod rounds once
 * (not where y is a power of 2): the same on CPU and GPU, within NEURON's validation. A
 * constant x / y stays a division: the C compiler folds its IEEE quotient. */
static int emit_reciprocal(gen *g, const nm_node *n)
{
    const nm_node *x = n->kids[0], *y = n->kids[1];
    double value;
    int call = 0;
    if (!nm_gen_runs_every_step(g) || fold(g, x, &value, &call)) return 0;
    call = 0;
    if (fold(g, y, &value, &call)) {
        const double r = 1.0 / value;
        if (!isnormal(r)) return 0;
        nm_gen_put(g, "(");
        nm_gen_expr(g, x);
        emit(g, " * ");
        emit_folded_reciprocal(g, y, r);
        nm_gen_put(g, ")");
        return 1;
    }
    const int invariant = invariant_local(g, y);
    const int repeated = other_division_by(g->block->body, x, y) && !assigns_any(g->block->body, y);
    if (!invariant && !repeated) return 0;
    if (x->kind == N_NUM && x->num == 1.0) return 0; /* already the reciprocal */
    nm_gen_put(g, "(");
    nm_gen_expr(g, x);
    emit(g, " * (1.0 / ");
    nm_gen_expr(g, y);
    emit(g, "))");
    return 1;
}

int nm_gen_inverse(gen *g, const nm_node *e, int write)
{
    double value;
    int call = 0;
    if (fold(g, e, &value, &call)) {
        const double r = 1.0 / value;
        if (!isnormal(r)) return 0;
        if (write) emit_folded_reciprocal(g, e, r);
        return 1;
    }
    if (invariant_local(g, e)) {
        if (write) {
            emit(g, "(1.0 / ");
            nm_gen_expr(g, e);
            emit(g, ")");
        }
        return 1;
    }
    if (e->kind != N_BINARY || (e->op != '/' && e->op != '*')) return 0;
    const nm_node *x = e->kids[0], *y = e->kids[1];
    if (e->op == '/') {
        const int one = x->kind == N_NUM && x->num == 1.0;
        if (!one && !nm_gen_inverse(g, x, 0)) return 0;
        if (write) {
            if (one) {
                nm_gen_expr(g, y);
                return 1;
            }
            nm_gen_put(g, "(");
            nm_gen_expr(g, y);
            emit(g, " * ");
            nm_gen_inverse(g, x, 1);
            nm_gen_put(g, ")");
        }
        return 1;
    }
    if (!nm_gen_inverse(g, x, 0) || !nm_gen_inverse(g, y, 0)) return 0;
    if (write) {
        nm_gen_put(g, "(");
        nm_gen_inverse(g, x, 1);
        emit(g, " * ");
        nm_gen_inverse(g, y, 1);
        nm_gen_put(g, ")");
    }
    return 1;
}

int nm_gen_rate_inverse(const gen *g, const char *name)
{
    for (int i = 0; i < g->n_rate_inverse; i++)
        if (strcmp(g->rate_inverse[i], name) == 0) return 1;
    return 0;
}

void nm_gen_expr(gen *g, const nm_node *n)
{
    /* A constant with a call (bbp's q10, 2.3^((34-21)/10), in every rates()): its value,
     * exact as a hex literal, and what it folds in a comment. */
    double value;
    int call = 0;
    if (!g->no_fold && n->kind != N_NUM && fold(g, n, &value, &call) && call &&
        isfinite(value)) {
        emit(g, "(%a /* ", value);
        g->no_fold = 1;
        nm_gen_expr(g, n);
        g->no_fold = 0;
        emit(g, " */)");
        return;
    }
    switch (n->kind) {
    case N_NUM: nm_gen_number(g, n->num); return;
    case N_NAME: nm_gen_name(g, n); return;
    case N_STRING: emit(g, "\"%s\"", n->name); return;
    case N_UNARY:
        nm_gen_put(g, n->op == '!' ? "((double)!(" : n->op == '-' ? "(-(" : "((");
        nm_gen_expr(g, n->kids[0]);
        emit(g, "))");
        return;
    case N_BINARY: {
        if (n->op == '^') {
            emit_pow(g, n->kids[0], n->kids[1]);
            return;
        }
        if (n->op == '/' && !g->no_fold && emit_reciprocal(g, n)) return;
        static const char *const ops[] = {"<=", ">=", "==", "!=", "&&", "||"};
        const char *op = n->op >= OP_LE && n->op <= OP_OR ? ops[n->op - OP_LE] : NULL;
        char one[2] = {(char)n->op, 0};
        const int logical = op || n->op == '<' || n->op == '>';
        nm_gen_put(g, logical ? "((double)(" : "(");
        nm_gen_expr(g, n->kids[0]);
        emit(g, " %s ", op ? op : one);
        nm_gen_expr(g, n->kids[1]);
        nm_gen_put(g, logical ? "))" : ")");
        return;
    }
    case N_CALL: {
        static const char *const libm[] = {"log",  "log10", "sqrt", "fabs",  "sin",  "cos",  "tan",
                                           "asin", "acos",  "atan", "atan2", "sinh", "cosh", "tanh",
                                           "pow",  "floor", "ceil", "fmod",  "erf",  "erfc"};
        const nm_block *b = nm_gen_find_block(g->c, n->name);
        if (b && (b->kind == B_FUNCTION || b->kind == B_PROCEDURE)) {
            emit(g, "%s_%s(s", g->prefix, n->name);
            for (int i = 0; i < n->n_kids; i++) {
                emit(g, ", ");
                nm_gen_expr(g, n->kids[i]);
            }
            emit(g, ")");
            return;
        }
        if (strcmp(n->name, "net_send") == 0 || strcmp(n->name, "net_move") == 0 ||
            strcmp(n->name, "net_event") == 0) {
            g->hooks.self_event_call(g, n); /* self-events (nmodl_gen_point.c) */
            return;
        }
        if (strncmp(n->name, "random_", 7) == 0) { /* RANDOM (nmodl_gen_point.c) */
            g->hooks.random_call(g, n);
            return;
        }
        /* the functions libm and CUDA may round differently: the same bits on both
         * (common/hb_math.h); the others are exact (sqrt, fabs, floor, ceil, fmod) */
        if (strcmp(n->name, "pow") == 0 && n->n_kids == 2) {
            emit_pow(g, n->kids[0], n->kids[1]);
            return;
        }
        static const char *const own[] = {"exp", "log", "log10", "pow", "sinh", "cosh", "tanh"};
        size_t o = 0;
        while (o < sizeof own / sizeof *own && strcmp(own[o], n->name) != 0) o++;
        if (o < sizeof own / sizeof *own) {
            emit(g, "hb_%s(", n->name);
        } else {
            size_t i = 0;
            while (i < sizeof libm / sizeof *libm && strcmp(libm[i], n->name) != 0) i++;
            if (i == sizeof libm / sizeof *libm)
                nm_error(g->c, n->line, n->column,
                         "the call of %s is not supported by the code generator "
                         "yet; expected a FUNCTION, a PROCEDURE or a math function",
                         n->name);
            emit(g, "%s(", n->name);
        }
        for (int i = 0; i < n->n_kids; i++) {
            if (i) emit(g, ", ");
            nm_gen_expr(g, n->kids[i]);
        }
        emit(g, ")");
        return;
    }
    default:
        nm_error(g->c, n->line, n->column,
                 "this expression is not supported by the code generator; expected numbers, names, "
                 "calls and operators");
    }
}

void nm_gen_indent(gen *g, int depth)
{
    for (int i = 0; i < depth; i++) emit(g, "    ");
}

void nm_gen_push_local(gen *g, const char *name)
{
    NM_GROW(g->c, g->locals, g->n_locals, g->cap_locals);
    g->locals[g->n_locals++] = name;
}

int nm_gen_ion_current(const char *v, const char *x)
{
    return v[0] == 'i' && strcmp(v + 1, x) == 0;
}

unsigned nm_gen_ion_role(const char *v, const char *x)
{
    if (v[0] == 'e' && strcmp(v + 1, x) == 0) return HB_ION_E;
    if (nm_gen_ion_current(v, x)) return HB_ION_I;
    return v[strlen(v) - 1] == 'i' ? HB_ION_CI : HB_ION_CO;
}

int nm_gen_mentions(const nm_node *n, const char *name)
{
    if ((n->kind == N_NAME || n->kind == N_CALL) && strcmp(n->name, name) == 0) return 1;
    for (int i = 0; i < n->n_kids; i++)
        if (nm_gen_mentions(n->kids[i], name)) return 1;
    return 0;
}
