/* The C code generator's statement walk (nmodl_gen.h): a block's statements in order, a
 * BREAKPOINT current's analytic conductance beside it, an `if` of plain assignments as selects.
 * What other parts write (SOLVE inside INITIAL, FROM loops: nmodl_gen_solve.c) it reaches
 * through gen.hooks, set by nm_emit, so that those parts call the walk and never the reverse. */
#include <stdio.h>
#include <string.h>

#include "nmodl/nmodl_gen.h"

#define emit nm_gen_emit

/* v-free factor G of `G*(v - E)`, else NULL: the current's analytic conductance. */
static const nm_node *ohmic_conductance(const nm_node *e)
{
    if (e->kind != N_BINARY || e->op != '*') return NULL;
    const nm_node *dv = e->kids[1];
    if (dv->kind != N_BINARY || dv->op != '-' || dv->kids[0]->kind != N_NAME ||
        strcmp(dv->kids[0]->name, "v") != 0)
        return NULL;
    return e->kids[0];
}

int nm_gen_is_current(const gen *g, const char *name)
{
    const hb_nmodl_mechanism_t *m = g->m;
    for (int i = 0; i < m->n_ions; i++)
        if (nm_gen_in_list(m->ions[i].write, m->ions[i].n_write, name) &&
            nm_gen_ion_current(name, m->ions[i].name))
            return 1;
    return nm_gen_in_list(m->nonspecific, m->n_nonspecific, name);
}

/* Whether an expression calls only math functions (no FUNCTION, PROCEDURE or RANDOM): then
 * evaluating it where an `if` would not changes no value, only which values are kept. */
static int pure_expr(const gen *g, const nm_node *n)
{
    if (n->kind == N_CALL &&
        (nm_gen_find_block(g->c, n->name) || strncmp(n->name, "random_", 7) == 0))
        return 0;
    for (int i = 0; i < n->n_kids; i++)
        if (!pure_expr(g, n->kids[i])) return 0;
    return 1;
}

/* An `if` whose branches only assign scalars pure expressions (nested such ifs allowed), outside
 * the BREAKPOINT's currents: emitted as selects (emit_select), so that the kernels' lane loops
 * have no control flow and become vector code. The same values in every case: the condition is
 * evaluated once, first; a branch not taken assigns each variable its own value. */
static int selectable(const gen *g, const nm_node *s)
{
    if (s->kind == S_IF) {
        if (!pure_expr(g, s->kids[0])) return 0;
        for (int i = 1; i < s->n_kids; i++)
            if (!selectable(g, s->kids[i])) return 0;
        return 1;
    }
    if (s->kind == S_BLOCK) {
        for (int i = 0; i < s->n_kids; i++)
            if (!selectable(g, s->kids[i])) return 0;
        return 1;
    }
    return s->kind == S_ASSIGN && s->kids[0]->n_kids == 0 && pure_expr(g, s->kids[1]) &&
           !(g->block && g->block->kind == B_BREAKPOINT);
}

/* Statement s of a selectable if, kept where the int `pred` is 1 (NULL: always); a nested if
 * at `level` names its predicates hb_t<level> (then) and hb_e<level> (else). */
static void emit_select(gen *g, const nm_node *s, int depth, const char *pred, int level)
{
    if (s->kind == S_BLOCK) {
        for (int i = 0; i < s->n_kids; i++) emit_select(g, s->kids[i], depth, pred, level);
        return;
    }
    if (s->kind == S_ASSIGN) {
        nm_gen_indent(g, depth);
        nm_gen_name(g, s->kids[0]);
        emit(g, " = %s ? ", pred ? pred : "1");
        nm_gen_expr(g, s->kids[1]);
        emit(g, " : ");
        nm_gen_name(g, s->kids[0]);
        emit(g, ";\n");
        return;
    }
    char then_p[32], else_p[32];
    snprintf(then_p, sizeof then_p, "hb_t%d", level);
    snprintf(else_p, sizeof else_p, "hb_e%d", level);
    nm_gen_indent(g, depth);
    emit(g, "{\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "const int %s = %s%s(", then_p, pred ? pred : "", pred ? " && " : "");
    nm_gen_expr(g, s->kids[0]);
    emit(g, " != 0.0);\n");
    if (s->n_kids > 2) {
        nm_gen_indent(g, depth + 1);
        emit(g, "const int %s = %s%s!%s;\n", else_p, pred ? pred : "", pred ? " && " : "",
             then_p);
    }
    emit_select(g, s->kids[1], depth + 1, then_p, level + 1);
    if (s->n_kids > 2) emit_select(g, s->kids[2], depth + 1, else_p, level + 1);
    nm_gen_indent(g, depth);
    emit(g, "}\n");
}

/* x as c1 * name + c0 (numbers, one plain name, + - and unary -, products and quotients by
 * constants), the coefficients evaluated in doubles; 0 where x is not of that form. */
static int linear_form(const nm_node *x, const char **name, double *c1, double *c0)
{
    double a1, a0, b1, b0;
    switch (x->kind) {
    case N_NUM: *c1 = 0.0, *c0 = x->num; return 1;
    case N_NAME:
        if (x->n_kids || (*name && strcmp(*name, x->name) != 0)) return 0;
        *name = x->name;
        *c1 = 1.0, *c0 = 0.0;
        return 1;
    case N_UNARY:
        if (x->op != '-' || !linear_form(x->kids[0], name, &a1, &a0)) return 0;
        *c1 = -a1, *c0 = -a0;
        return 1;
    case N_BINARY:
        if (!linear_form(x->kids[0], name, &a1, &a0) || !linear_form(x->kids[1], name, &b1, &b0))
            return 0;
        switch (x->op) {
        case '+': *c1 = a1 + b1, *c0 = a0 + b0; return 1;
        case '-': *c1 = a1 - b1, *c0 = a0 - b0; return 1;
        case '*':
            if (a1 != 0.0 && b1 != 0.0) return 0;
            *c1 = a1 * b0 + b1 * a0, *c0 = a0 * b0;
            return 1;
        case '/':
            if (b1 != 0.0 || b0 == 0.0) return 0;
            *c1 = a1 / b0, *c0 = a0 / b0;
            return 1;
        default: return 0;
        }
    default: return 0;
    }
}

/* The argument of exp in `N / (1 - exp(x))` (an assignment's value), or NULL. */
static const nm_node *one_minus_exp(const gen *g, const nm_node *s)
{
    if (s->kind != S_ASSIGN || s->kids[0]->n_kids) return NULL;
    const nm_node *q = s->kids[1];
    if (q->kind != N_BINARY || q->op != '/') return NULL;
    const nm_node *d = q->kids[1];
    if (d->kind != N_BINARY || d->op != '-' || d->kids[0]->kind != N_NUM ||
        d->kids[0]->num != 1.0)
        return NULL;
    const nm_node *e = d->kids[1];
    if (e->kind != N_CALL || strcmp(e->name, "exp") != 0 || e->n_kids != 1 ||
        nm_gen_find_block(g->c, "exp"))
        return NULL;
    return e->kids[0];
}

/* Pairs of top-level statements `a = N1/(1 - exp(u))` ... `b = N2/(1 - exp(w))` with w = -u
 * (NaTs2_t's mAlpha and mBeta) in a FUNCTION or PROCEDURE without a TABLE, nothing between
 * them (the first included) assigning u's variable: the second is N2 * E/(E - 1) with the
 * first's E = exp(u), so the pair takes one exp and one division (1/(1 - E)) where it took
 * two of each (docs/nmodl.md, section 5). */
static void find_exp_pairs(gen *g, const nm_node *body)
{
    g->n_exp_pair = 0;
    const nm_block *b = g->block;
    if (!b || b->body != body || (b->kind != B_FUNCTION && b->kind != B_PROCEDURE) ||
        !nm_gen_runs_every_step(g))
        return;
    for (int i = 0; i < body->n_kids; i++) {
        int taken = 0; /* the second of an earlier pair */
        for (int k = 0; k < g->n_exp_pair; k++) taken |= g->exp_pair[k].second == body->kids[i];
        const nm_node *u = taken ? NULL : one_minus_exp(g, body->kids[i]);
        const char *name = NULL;
        double u1, u0;
        if (!u || !linear_form(u, &name, &u1, &u0) || !name || u1 == 0.0) continue;
        for (int j = i + 1; j < body->n_kids; j++) {
            const nm_node *s = body->kids[j - 1];
            if (s->kind != S_ASSIGN || s->kids[0]->n_kids || !strcmp(s->kids[0]->name, name) ||
                !pure_expr(g, s->kids[1]) || nm_gen_rate_inverse(g, s->kids[0]->name))
                break;
            const nm_node *w = one_minus_exp(g, body->kids[j]);
            const char *wname = name;
            double w1, w0;
            if (!w || !linear_form(w, &wname, &w1, &w0) || w1 != -u1 || w0 != -u0 ||
                nm_gen_rate_inverse(g, body->kids[j]->kids[0]->name))
                continue;
            for (int k = 0; k < g->n_exp_pair; k++) taken |= g->exp_pair[k].second == body->kids[j];
            if (taken || g->n_exp_pair == (int)(sizeof g->exp_pair / sizeof *g->exp_pair)) break;
            g->exp_pair[g->n_exp_pair].first = body->kids[i];
            g->exp_pair[g->n_exp_pair++].second = body->kids[j];
            break;
        }
    }
}

/* The statement of an exp pair: its quotient over 1 - E as a product by hb_xq<k> = 1/(1 - E)
 * (the first also computes hb_xe<k> = E and hb_xq<k>), the second's N2 * E/(E - 1) as -N2 * F,
 * F = E/(1 - E) written E * hb_xq<k> where E <= 1 and hb_xq<k> - 1 (the same value) where E > 1,
 * so that E = inf gives -1, not inf * 0. 0 when s is in no pair. */
static int emit_exp_pair(gen *g, const nm_node *s, int depth)
{
    for (int k = 0; k < g->n_exp_pair; k++) {
        const int first = g->exp_pair[k].first == s;
        if (!first && g->exp_pair[k].second != s) continue;
        const nm_node *q = s->kids[1];
        if (first) {
            nm_gen_indent(g, depth);
            emit(g, "const double hb_xe%d = hb_exp(", k);
            nm_gen_expr(g, one_minus_exp(g, s));
            emit(g, ");\n");
            nm_gen_indent(g, depth);
            emit(g, "const double hb_xq%d = 1.0 / (1.0 - hb_xe%d);\n", k, k);
        }
        nm_gen_indent(g, depth);
        nm_gen_name(g, s->kids[0]);
        emit(g, " = (");
        if (!first) emit(g, "(-");
        nm_gen_expr(g, q->kids[0]);
        if (first)
            emit(g, " * hb_xq%d);\n", k);
        else
            emit(g, ") * (HB_GT(hb_xe%d, 1.0) ? (hb_xq%d - 1.0) : (hb_xe%d * hb_xq%d)));\n", k, k, k,
                 k);
        return 1;
    }
    return 0;
}

void nm_gen_statement(gen *g, const nm_node *s, int depth)
{
    nm_ctx *c = g->c;
    switch (s->kind) {
    case S_ASSIGN:
        if (emit_exp_pair(g, s, depth)) return;
        nm_gen_indent(g, depth);
        nm_gen_name(g, s->kids[0]);
        emit(g, " = ");
        if (nm_gen_hoisted(c, g->block, s))
            emit(g, "s->hc_%s_%s", g->block->name, s->kids[0]->name);
        else
            nm_gen_expr(g, s->kids[1]);
        emit(g, ";\n");
        if (nm_gen_rate_inverse(g, s->kids[0]->name)) {
            nm_gen_indent(g, depth);
            emit(g, "s->hbr_%s = ", s->kids[0]->name);
            nm_gen_inverse(g, s->kids[1], 1);
            emit(g, ";\n");
        }
        if (g->block && g->block->kind == B_BREAKPOINT && nm_gen_is_current(g, s->kids[0]->name)) {
            const nm_node *gc = ohmic_conductance(s->kids[1]);
            if (gc && !nm_gen_mentions(gc, "v")) {
                nm_gen_indent(g, depth);
                emit(g, "s->g_%s = ", s->kids[0]->name);
                nm_gen_expr(g, gc);
                emit(g, ";\n");
            } else {
                g->numeric_didv = 1; /* NEURON's difference (nmodl_gen_point.c) */
            }
        }
        return;
    case S_CALL:
        nm_gen_indent(g, depth);
        emit(g, "(void)");
        nm_gen_expr(g, s->kids[0]);
        emit(g, ";\n");
        return;
    case S_IF:
        if (selectable(g, s)) {
            emit_select(g, s, depth, NULL, 0);
            return;
        }
        nm_gen_indent(g, depth);
        emit(g, "if (");
        nm_gen_expr(g, s->kids[0]);
        emit(g, " != 0.0) {\n");
        nm_gen_block(g, s->kids[1], depth + 1);
        nm_gen_indent(g, depth);
        emit(g, "}");
        if (s->n_kids > 2) {
            emit(g, " else {\n");
            if (s->kids[2]->kind == S_BLOCK)
                nm_gen_block(g, s->kids[2], depth + 1);
            else
                nm_gen_statement(g, s->kids[2], depth + 1);
            nm_gen_indent(g, depth);
            emit(g, "}");
        }
        emit(g, "\n");
        return;
    case S_WHILE:
        nm_gen_indent(g, depth);
        emit(g, "while (");
        nm_gen_expr(g, s->kids[0]);
        emit(g, " != 0.0) {\n");
        nm_gen_block(g, s->kids[1], depth + 1);
        nm_gen_indent(g, depth);
        emit(g, "}\n");
        return;
    case S_LOCAL:
        for (int i = 0; i < s->n_kids; i++) {
            if (s->kids[i]->num > 0)
                nm_error(c, s->kids[i]->line, s->kids[i]->column,
                         "LOCAL arrays are not supported by the "
                         "code generator yet; expected scalars");
            NM_GROW(c, g->locals, g->n_locals, g->cap_locals);
            g->locals[g->n_locals++] = s->kids[i]->name;
            nm_gen_indent(g, depth);
            /* a LOCAL may be set and never read */
            emit(g, "double lv_%s HB_UNUSED = 0.0;\n", s->kids[i]->name);
        }
        return;
    case S_TABLE:
        nm_gen_indent(g, depth);
        emit(g, "/* TABLE: these are the formulas; the table is read without _f */\n");
        return;
    case S_SOLVE:
        if (g->block && g->block->kind == B_BREAKPOINT) return; /* the state kernel */
        if (g->block && g->block->kind == B_INITIAL && g->hooks.initial_solve(g, s, depth)) return;
        nm_error(c, s->line, s->column,
                 "SOLVE in %s is not supported by the code generator yet; "
                 "expected SOLVE in BREAKPOINT only",
                 g->block ? g->block->name : "?");
    case S_FOR_NETCONS: g->hooks.for_netcons(g, s, depth); return;
    case S_WATCH:
        g->hooks.watch(g, s, depth);
        return;
    case S_VERBATIM:
        nm_error(c, s->line, s->column,
                 "VERBATIM (C code inside NMODL) is not supported by the code "
                 "generator; expected NMODL statements only");
    default:
        if (g->hooks.statement_more(g, s, depth)) return;
        nm_error(c, s->line, s->column,
                 "this statement is not supported by the code generator yet "
                 "(density mechanisms with cnexp only); expected assignments, calls, if, while, "
                 "LOCAL, TABLE");
    }
}

void nm_gen_block(gen *g, const nm_node *b, int depth)
{
    const int mark = g->n_locals;
    if (depth == 1) find_exp_pairs(g, b);
    for (int i = 0; i < b->n_kids; i++) nm_gen_statement(g, b->kids[i], depth);
    g->n_locals = mark;
}
