/* The C code generator's mechanism (docs/mechanisms.md): nm_emit and nm_generator_check.
 *
 * Emits one header of HB_HOSTDEV functions: a struct of the mechanism's variables for one
 * instance and lane, its FUNCTIONs and PROCEDUREs, INITIAL, the BREAKPOINT's currents with
 * their conductance, the cnexp update, and the kernels of docs/mechanisms.md's ABI
 * (common/mech_abi.h) over a block's instances and lanes; the expressions through
 * nmodl_gen_emit.c, the statements through nmodl_gen_walk.c, the other SOLVE methods and point
 * processes through nmodl_gen_solve.c and nmodl_gen_point.c. What it cannot translate yet is
 * an error at its FILE:LINE:COLUMN. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmodl/nmodl_gen.h"

#define emit nm_gen_emit

/* cnexp for x' = (A - x)/B, A and B free of x: x += (1 - exp(-dt/B)) (A - x), the engine's form
 * (hb_step_gates_row); x' = -x/B is (0 - x)/B in that form (hb_step_synapse_decay). Other
 * linear forms: NEURON's (nm_gen_cnexp_linear). */
/* 1 when a cnexp DERIVATIVE's x' equations all follow its other statements, none of them a
 * LOCAL: the updates can then run apart from the rest (<prefix>_cnexp). */
static int cnexp_after_rest(const nm_block *deriv)
{
    int seen_deriv = 0;
    for (int i = 0; i < deriv->body->n_kids; i++) {
        const nm_node *s = deriv->body->kids[i];
        if (s->kind == S_LOCAL || (seen_deriv && s->kind != S_DERIV)) return 0;
        seen_deriv |= s->kind == S_DERIV;
    }
    return seen_deriv;
}

static void emit_cnexp(gen *g, const nm_node *s)
{
    const nm_node *r = s->kids[0];
    const nm_node *num = r->kind == N_BINARY && r->op == '/' ? r->kids[0] : NULL;
    const int decay = num && num->kind == N_UNARY && num->op == '-' &&
                      num->kids[0]->kind == N_NAME && !num->kids[0]->n_kids &&
                      strcmp(num->kids[0]->name, s->name) == 0 &&
                      !nm_gen_mentions(r->kids[1], s->name);
    if (!decay && (!num || num->kind != N_BINARY || num->op != '-' ||
                   num->kids[1]->kind != N_NAME || strcmp(num->kids[1]->name, s->name) != 0 ||
                   nm_gen_mentions(num->kids[0], s->name) ||
                   nm_gen_mentions(r->kids[1], s->name))) {
        nm_gen_cnexp_linear(g, s);
        return;
    }
    const nm_node *tau = r->kids[1];
    if (tau->kind == N_NAME && !tau->n_kids && nm_gen_rate_inverse(g, tau->name)) {
        emit(g, "    s->%s += (1.0 - hb_exp(-s->dt * s->hbr_%s)) * (", s->name, tau->name);
    } else {
        emit(g, "    s->%s += (1.0 - hb_exp(-s->dt / ", s->name);
        nm_gen_expr(g, tau);
        emit(g, ")) * (");
    }
    if (decay)
        emit(g, "0.0");
    else
        nm_gen_expr(g, num->kids[0]);
    emit(g, " - s->%s);\n", s->name);
}

/* The TABLE statement at the top of a PROCEDURE's body, or NULL. */
static const nm_node *table_of(const nm_block *b)
{
    if (b->kind != B_PROCEDURE && b->kind != B_FUNCTION) return NULL;
    for (int i = 0; i < b->body->n_kids; i++)
        if (b->body->kids[i]->kind == S_TABLE) return b->body->kids[i];
    return NULL;
}

/* A TABLE's FROM or TO: a number, or a negated one. */
static double table_bound(gen *g, const nm_node *e)
{
    if (e->kind == N_NUM) return e->num;
    if (e->kind == N_UNARY && e->op == '-' && e->kids[0]->kind == N_NUM) return -e->kids[0]->num;
    nm_error(g->c, e->line, e->column,
             "a TABLE bound that is not a number is not generated yet; "
             "expected FROM and TO numbers");
}

/* NEURON's TABLE of a PROCEDURE of one argument: rows of WITH + 1 entries filled at
 * x = FROM, FROM + dx, ... (x accumulated), the last repeated; read with NEURON's linear
 * interpolation clamped at the ends (hb_hh_table_lookup's operations). */
static void emit_table(gen *g, const nm_block *b, const nm_node *t, int prototype)
{
    const char *p = g->prefix, *name = b->name;
    if (b->kind != B_PROCEDURE || !b->args || b->args->n_kids != 1 || t->kids[0]->n_kids == 0)
        nm_error(g->c, t->line, t->column,
                 "this TABLE is not generated yet; expected a TABLE of "
                 "ASSIGNED names in a PROCEDURE of one argument");
    const double lo = table_bound(g, t->kids[2]), hi = table_bound(g, t->kids[3]);
    const int n = (int)t->kids[4]->num, rows = t->kids[0]->n_kids;
    if (!(hi > lo))
        nm_error(g->c, t->line, t->column, "TABLE FROM %g TO %g; expected FROM below TO", lo, hi);
    const char *arg = b->args->kids[0]->name;
    if (prototype) {
        emit(g, "HB_HOSTDEV void %s_table_%s(%s_vars_t *s, double *table);\n", p, name, p);
        return;
    }
    emit(g, "enum { %s_%s_TABLE_ROWS = %d, %s_%s_TABLE_STRIDE = %d };\n\n", p, name, rows, p, name,
         n + 2);
    emit(g, "HB_HOSTDEV double %s_%s(%s_vars_t *s, double a_%s)\n{\n", p, name, p, arg);
    emit(g, "    if (!s->table_%s) return %s_%s_f(s, a_%s);\n", name, p, name, arg);
    emit(g, "    const double xi = ");
    nm_gen_number(g, 1.0 / ((hi - lo) / n));
    emit(g, " * (a_%s - ", arg);
    nm_gen_number(g, lo);
    emit(g, ");\n    double xc = xi > 0.0 ? xi : 0.0;\n    xc = xc < ");
    nm_gen_number(g, n);
    emit(g, " ? xc : ");
    nm_gen_number(g, n);
    emit(g, ";\n    const int i = (int)xc;\n    const double theta = xc - (double)i;\n");
    for (int q = 0; q < rows; q++) {
        emit(g, "    {\n        const double *a = s->table_%s + %d * %s_%s_TABLE_STRIDE + i;\n",
             name, q, p, name);
        emit(g, "        s->%s = a[0] + theta * (a[1] - a[0]);\n    }\n",
             t->kids[0]->kids[q]->name);
    }
    emit(g, "    return 0.0;\n}\n\n");
    emit(g, "/* Fills the TABLE of %s at s's celsius and globals. */\n", name);
    emit(g, "HB_HOSTDEV void %s_table_%s(%s_vars_t *s, double *table)\n{\n", p, name, p);
    emit(g, "    %s_celsius(s);\n", p);
    emit(g, "    const double dx = (");
    nm_gen_number(g, hi);
    emit(g, " - ");
    nm_gen_number(g, lo);
    emit(g, ") / ");
    nm_gen_number(g, n);
    emit(g, ";\n    double x = ");
    nm_gen_number(g, lo);
    emit(g, ";\n    for (int i = 0; i <= %d; i++, x += dx) {\n        (void)%s_%s_f(s, x);\n", n, p,
         name);
    for (int q = 0; q < rows; q++)
        emit(g, "        table[%d * %s_%s_TABLE_STRIDE + i] = s->%s;\n", q, p, name,
             t->kids[0]->kids[q]->name);
    emit(g, "    }\n    for (int q = 0; q < %d; q++) /* the repeated end entry */\n", rows);
    emit(g,
         "        table[q * %s_%s_TABLE_STRIDE + %d] = table[q * %s_%s_TABLE_STRIDE + %d];\n}\n\n",
         p, name, n + 1, p, name, n);
}

static void emit_function(gen *g, const nm_block *b, int prototype)
{
    g->block = b;
    const nm_node *table = table_of(b);
    if (table && prototype) emit_table(g, b, table, 1);
    if (table) { /* the formulas as NAME_f; NAME reads the table (emit_table) */
        emit(g, "HB_HOSTDEV double %s_%s_f(%s_vars_t *s", g->prefix, b->name, g->prefix);
        for (int i = 0; b->args && i < b->args->n_kids; i++)
            emit(g, ", double a_%s", b->args->kids[i]->name);
        emit(g, ");\n");
        if (!prototype) {
            emit(g, "HB_HOSTDEV double %s_%s_f(%s_vars_t *s", g->prefix, b->name, g->prefix);
            for (int i = 0; b->args && i < b->args->n_kids; i++)
                emit(g, ", double a_%s", b->args->kids[i]->name);
            emit(g, ")\n{\n    (void)s;\n");
            nm_gen_block(g, b->body, 1);
            nm_gen_put(g, "    return 0.0;\n}\n\n");
            emit_table(g, b, table, 0);
            return;
        }
    }
    emit(g, "HB_HOSTDEV double %s_%s(%s_vars_t *s", g->prefix, b->name, g->prefix);
    for (int i = 0; b->args && i < b->args->n_kids; i++)
        emit(g, ", double a_%s", b->args->kids[i]->name);
    if (prototype) {
        emit(g, ");\n");
        return;
    }
    emit(g, ")\n{\n    (void)s;\n");
    if (b->kind == B_FUNCTION) emit(g, "    double fv = 0.0;\n");
    nm_gen_block(g, b->body, 1);
    nm_gen_put(g, b->kind == B_FUNCTION ? "    return fv;\n}\n\n" : "    return 0.0;\n}\n\n");
}

/* Fields stored per instance and lane: RANGE PARAMETERs, STATEs, RANGE ASSIGNED (not ions). */
typedef struct {
    const char *name;
    int param; /* a RANGE PARAMETER */
} field;

/* Whether a kernel may read `x` before writing it (so its value must persist between
 * kernels): the statements in order, calls followed into their blocks (a name an argument or
 * LOCAL shadows is not x), a write inside if/while/FROM not counted as definite unless both
 * branches write. `*written` is set once x is definitely written. */
typedef struct {
    const nm_ctx *c;
    const char *x;
    int depth;
} live;

static int reads_expr(live *l, const nm_node *n, int written);
static int reads_block(live *l, const nm_node *b, int *written);

static int shadowed(const nm_block *b, const char *x)
{
    if (b->args)
        for (int i = 0; i < b->args->n_kids; i++)
            if (strcmp(b->args->kids[i]->name, x) == 0) return 1;
    return 0;
}

static int reads_call(live *l, const nm_node *n, int *written)
{
    for (int i = 0; i < n->n_kids; i++)
        if (reads_expr(l, n->kids[i], *written)) return 1;
    const nm_block *b = nm_gen_find_block(l->c, n->name);
    if (!b || shadowed(b, l->x) || l->depth > 20) return 0;
    if (b->kind == B_FUNCTION && strcmp(b->name, l->x) == 0) return 0;
    l->depth++;
    const int r = reads_block(l, b->body, written);
    l->depth--;
    return r;
}

static int reads_expr(live *l, const nm_node *n, int written)
{
    if (n->kind == N_NAME && !written && strcmp(n->name, l->x) == 0) return 1;
    if (n->kind == N_CALL) {
        int w = written;
        return reads_call(l, n, &w);
    }
    for (int i = 0; i < n->n_kids; i++)
        if (reads_expr(l, n->kids[i], written)) return 1;
    return 0;
}

static int reads_statement(live *l, const nm_node *s, int *written)
{
    switch (s->kind) {
    case S_ASSIGN:
        if (reads_expr(l, s->kids[1], *written)) return 1;
        if (s->kids[0]->n_kids && reads_expr(l, s->kids[0]->kids[0], *written)) return 1;
        if (strcmp(s->kids[0]->name, l->x) == 0) *written = 1;
        return 0;
    case S_CALL: return reads_call(l, s->kids[0], written);
    case S_IF: {
        if (reads_expr(l, s->kids[0], *written)) return 1;
        int a = *written, b = *written;
        if (reads_block(l, s->kids[1], &a)) return 1;
        if (s->n_kids > 2 && (s->kids[2]->kind == S_BLOCK ? reads_block(l, s->kids[2], &b)
                                                          : reads_statement(l, s->kids[2], &b)))
            return 1;
        *written = a && b;
        return 0;
    }
    case S_LOCAL:
        for (int i = 0; i < s->n_kids; i++)
            if (strcmp(s->kids[i]->name, l->x) == 0) *written = 1; /* shadowed from here */
        return 0;
    case S_SOLVE: {
        const nm_block *b = nm_gen_find_block(l->c, s->name);
        if (!b || l->depth > 20) return 0;
        l->depth++;
        const int r = reads_block(l, b->body, written);
        l->depth--;
        return r;
    }
    case S_VERBATIM: return 0;
    default: { /* while, FROM, reactions, x' =, TABLE ...: reads only */
        int w = *written;
        for (int i = 0; i < s->n_kids; i++) {
            const nm_node *k = s->kids[i];
            if (k->kind == S_BLOCK ? reads_block(l, k, &w) : reads_expr(l, k, *written))
                return 1;
        }
        return 0;
    }
    }
}

static int reads_block(live *l, const nm_node *b, int *written)
{
    for (int i = 0; i < b->n_kids; i++)
        if (reads_statement(l, b->kids[i], written)) return 1;
    return 0;
}

/* 1 where some block of the mechanism assigns PARAMETER x (exp2syn.mod's INITIAL clamps tau1):
 * the store writes it back where the parameters are per lane, so the kernels after INITIAL
 * read the value INITIAL left, as NEURON's do. */
static int param_assigned(const nm_ctx *c, const char *x)
{
    for (int i = 0; i < c->n_blocks; i++)
        if (nm_gen_assignments(c->blocks[i].body, x)) return 1;
    return 0;
}

static int reaches_assign(const nm_ctx *c, const nm_node *n, const char *x, int depth);

/* 1 where a FUNCTION or PROCEDURE that n calls assigns x, itself or through its calls. */
static int calls_assign(const nm_ctx *c, const nm_node *n, const char *x, int depth)
{
    if (n->kind == N_CALL) {
        const nm_block *b = nm_gen_find_block(c, n->name);
        if (b && (b->kind == B_FUNCTION || b->kind == B_PROCEDURE) &&
            reaches_assign(c, b->body, x, depth + 1))
            return 1;
    }
    for (int i = 0; i < n->n_kids; i++)
        if (calls_assign(c, n->kids[i], x, depth)) return 1;
    return 0;
}

/* 1 where n assigns x or calls what does; calls nested deeper than 32 (recursion) count as
 * assigning. */
static int reaches_assign(const nm_ctx *c, const nm_node *n, const char *x, int depth)
{
    if (!n) return 0;
    if (depth > 32) return 1;
    return nm_gen_assignments(n, x) || calls_assign(c, n, x, depth);
}

/* Whether a statement the current kernel (which 1: BREAKPOINT without its SOLVE) or the state
 * kernel (which 2: the SOLVE's block: a DERIVATIVE, KINETIC, LINEAR, NONLINEAR or the
 * PROCEDURE a SOLVE names) runs, or a FUNCTION or PROCEDURE they call, assigns x. One that no
 * kernel calls (ProbAMPANMDA_EMS's toggleVerbose, for hoc) does not count. */
static int kernel_assigns(const nm_ctx *c, const char *x, int which)
{
    for (int i = 0; i < c->n_blocks; i++) {
        const nm_block *b = &c->blocks[i];
        if (b->kind == B_BREAKPOINT && which == 1 && reaches_assign(c, b->body, x, 0)) return 1;
        if ((b->kind == B_DERIVATIVE || b->kind == B_KINETIC || b->kind == B_LINEAR ||
             b->kind == B_NONLINEAR) &&
            which == 2 && reaches_assign(c, b->body, x, 0))
            return 1;
        if (b->kind == B_BREAKPOINT && which == 2)
            for (int k = 0; k < b->body->n_kids; k++) {
                const nm_node *st = b->body->kids[k];
                const nm_block *t = st->kind == S_SOLVE ? nm_gen_find_block(c, st->name) : NULL;
                if (t && (t->kind == B_PROCEDURE || t->kind == B_FUNCTION) &&
                    reaches_assign(c, t->body, x, 0))
                    return 1;
            }
    }
    return 0;
}

/* Whether that kernel may change field x, a STATE or an ASSIGNED (a state kernel changes its
 * STATEs by reactions and x' = ... as well). A kernel stores only the fields it may change:
 * the others keep the bits they had, and their stores (and loads, then dead) go. A RANGE
 * PARAMETER the .mod assigns is stored by the kernels whose statements assign it. */
static int kernel_changes(const nm_ctx *c, const hb_nmodl_mechanism_t *m, const char *x,
                          int which)
{
    int state = 0, assigned = 0;
    for (int i = 0; i < m->n_states; i++) state |= !strcmp(m->states[i].name, x);
    for (int i = 0; i < m->n_assigned; i++) assigned |= !strcmp(m->assigned[i].name, x);
    if (!state && !assigned) return 1; /* WATCH's and RANDOM's fields: always stored */
    if (state && which == 2) return 1;
    return kernel_assigns(c, x, which);
}

/* Whether x must be kept per instance: a kernel after INITIAL (the currents, the SOLVE, the
 * NET_RECEIVE) may read it before it writes it. */
static int persists(const nm_ctx *c, const char *x)
{
    for (int i = 0; i < c->n_blocks; i++) {
        const nm_block *b = &c->blocks[i];
        if (b->kind != B_BREAKPOINT && b->kind != B_NET_RECEIVE) continue;
        if (b->kind == B_NET_RECEIVE && shadowed(b, x)) continue;
        live l = {c, x, 0};
        int written = 0;
        if (reads_block(&l, b->body, &written)) return 1;
    }
    return 0;
}

/* Whether any LOCAL statement under n declares `name`. */
static int declares_local(const nm_node *n, const char *name)
{
    if (!n) return 0;
    if (n->kind == S_LOCAL)
        for (int j = 0; j < n->n_kids; j++)
            if (strcmp(n->kids[j]->name, name) == 0) return 1;
    for (int i = 0; i < n->n_kids; i++)
        if (declares_local(n->kids[i], name)) return 1;
    return 0;
}

/* A cnexp tau whose inverse is written without a division (docs/nmodl.md, section 5):
 * -dt/tau, with tau = (1/(a + b))/qt, as -dt * (qt * (a + b)), which saves the update's
 * division and, where nothing else divides by a + b, the rate's. tau qualifies when it is a
 * plain ASSIGNED (not RANGE, GLOBAL, an ion's, or kept between kernels: nothing reads it but
 * the statements), no block has a LOCAL, an argument or a FUNCTION of its name, and every assignment of it is a
 * top-level statement of a block without a TABLE whose value nm_gen_inverse writes: then
 * s->hbr_<tau> is set wherever tau is, and the update reads it. */
static void find_rate_inverses(gen *g, const nm_block *deriv)
{
    const nm_ctx *c = g->c;
    const hb_nmodl_mechanism_t *m = g->m;
    const nm_block *saved = g->block;
    for (int i = 0; deriv && i < deriv->body->n_kids; i++) {
        const nm_node *st = deriv->body->kids[i];
        if (st->kind != S_DERIV || st->n_kids < 1) continue;
        const nm_node *r = st->kids[0];
        if (r->kind != N_BINARY || r->op != '/') continue;
        const nm_node *tau = r->kids[1];
        if (tau->kind != N_NAME || tau->n_kids || nm_gen_rate_inverse(g, tau->name) ||
            g->n_rate_inverse == (int)(sizeof g->rate_inverse / sizeof *g->rate_inverse))
            continue;
        const char *x = tau->name;
        int assigned = 0;
        for (int k = 0; k < m->n_assigned; k++) assigned |= strcmp(m->assigned[k].name, x) == 0;
        if (!assigned || nm_gen_in_list(m->range, m->n_range, x) ||
            nm_gen_in_list(m->globals, m->n_globals, x) || nm_gen_ion_var(m, x) ||
            persists(c, x))
            continue;
        int ok = 1, any = 0;
        for (int b = 0; b < c->n_blocks && ok; b++) {
            const nm_block *blk = &c->blocks[b];
            const int n = nm_gen_assignments(blk->body, x);
            if (!n) continue;
            g->block = blk;
            const int shadowed = (blk->name && strcmp(blk->name, x) == 0) /* a FUNCTION's value */
                                 || nm_gen_is_arg(g, x);
            if (shadowed || declares_local(blk->body, x) || table_of(blk)) ok = 0;
            int top = 0;
            for (int k = 0; ok && k < blk->body->n_kids; k++) {
                const nm_node *a = blk->body->kids[k];
                if (a->kind != S_ASSIGN || a->kids[0]->n_kids || strcmp(a->kids[0]->name, x))
                    continue;
                top++;
                ok = nm_gen_inverse(g, a->kids[1], 0);
            }
            ok = ok && top == n;
            any += n;
        }
        if (ok && any) g->rate_inverse[g->n_rate_inverse++] = x;
    }
    g->block = saved;
}

static int collect_fields(gen *g, field *out, int room)
{
    const hb_nmodl_mechanism_t *m = g->m;
    int n = 0;
    for (int i = 0; i < m->n_parameters; i++)
        if (nm_gen_in_list(m->range, m->n_range, m->parameters[i].name) && n < room)
            out[n++] = (field){m->parameters[i].name, 1};
    for (int i = 0; i < m->n_states; i++)
        if (n < room) out[n++] = (field){m->states[i].name, 0};
    for (int i = 0; i < m->n_assigned; i++) {
        const char *a = m->assigned[i].name;
        if (nm_gen_in_list(m->range, m->n_range, a) && !nm_gen_ion_var(m, a) &&
            strcmp(a, "v") != 0 && n < room)
            out[n++] = (field){a, 0};
    }
    /* then, as scratch, the ASSIGNED neither RANGE nor GLOBAL nor a current that a kernel may
     * read before writing (NEURON keeps every ASSIGNED per instance: Exp2Syn's factor, set in
     * INITIAL and read by NET_RECEIVE; a channel's rates, recomputed before use, need not) */
    static const char *const builtins[] = {"v", "t", "dt", "celsius", "diam", "area"};
    for (int i = 0; i < m->n_assigned; i++) {
        const char *a = m->assigned[i].name;
        if (!nm_gen_in_list(m->range, m->n_range, a) &&
            !nm_gen_in_list(m->globals, m->n_globals, a) && !nm_gen_ion_var(m, a) &&
            !nm_gen_in_list(builtins, 6, a) && !nm_gen_is_current(g, a) && persists(g->c, a) &&
            n < room)
            out[n++] = (field){a, 0};
    }
    /* then each WATCH condition's state (active, above, its flag), kept between calls */
    for (int i = 0; i < m->n_watch && n + 3 <= room; i++) {
        out[n++] = (field){nm_printf(g->c, "watch_on_%d", i), 0};
        out[n++] = (field){nm_printf(g->c, "watch_above_%d", i), 0};
        out[n++] = (field){nm_printf(g->c, "watch_flag_%d", i), 0};
    }
    /* then each RANDOM's ids, set per instance by the model (docs/nmodl.md) */
    for (int i = 0; i < m->n_randoms && n + 3 <= room; i++) {
        static const char *const suffix[] = {"_id1", "_id2", "_id3"};
        for (int q = 0; q < 3; q++)
            out[n++] = (field){nm_printf(g->c, "%s%s", m->randoms[i], suffix[q]), 0};
    }
    return n;
}

/* The ion array ("ci", "co") of a concentration a USEION of ion x writes (cai, cao), or NULL
 * (its current i<x>, its reversal e<x>). */
static const char *written_conc(const char *v, const char *x)
{
    const size_t n = strlen(x);
    if (strncmp(v, x, n) != 0 || strlen(v) != n + 1) return NULL;
    return v[n] == 'i' ? "ci" : v[n] == 'o' ? "co" : NULL;
}

/* Whether statement tree n holds a FROM loop. */
static int has_from(const nm_node *n)
{
    if (!n) return 0;
    if (n->kind == S_FROM) return 1;
    for (int i = 0; i < n->n_kids; i++)
        if (has_from(n->kids[i])) return 1;
    return 0;
}

/* The first use of v in statement or expression tree n, or NULL. */
static const nm_node *uses_v(const nm_node *n)
{
    if (!n) return NULL;
    if (n->kind == N_NAME && n->name && strcmp(n->name, "v") == 0) return n;
    for (int i = 0; i < n->n_kids; i++) {
        const nm_node *u = uses_v(n->kids[i]);
        if (u) return u;
    }
    return NULL;
}

/* An ARTIFICIAL_CELL lies outside the cable (docs/nmodl.md, "Artificial cells"): no ion, no
 * current, no membrane potential; each refused at the name that asks for it. */
static void check_artificial(nm_ctx *c, const hb_nmodl_mechanism_t *m)
{
    if (c->n_ions)
        nm_error(c, c->ions[0].name.line, c->ions[0].name.column,
                 "USEION %s in the ARTIFICIAL_CELL %s: an artificial cell has no membrane and "
                 "no ions; expected a POINT_PROCESS for a mechanism that uses ions",
                 c->ions[0].name.name, m->name);
    if (c->n_nonspecific || c->n_electrode) {
        const nm_ident *id = c->n_nonspecific ? &c->nonspecific[0] : &c->electrode[0];
        nm_error(c, id->line, id->column,
                 "%s %s in the ARTIFICIAL_CELL %s: an artificial cell carries no current; "
                 "expected a POINT_PROCESS for a mechanism with a current",
                 c->n_nonspecific ? "NONSPECIFIC_CURRENT" : "ELECTRODE_CURRENT", id->name,
                 m->name);
    }
    for (int i = 0; i < c->n_blocks; i++) {
        const nm_node *u = uses_v(c->blocks[i].body);
        if (u)
            nm_error(c, u->line, u->column,
                     "v in the ARTIFICIAL_CELL %s: an artificial cell has no membrane "
                     "potential; expected a POINT_PROCESS for a mechanism that reads v",
                     m->name);
    }
}

static void emit_mechanism(gen *g)
{
    nm_ctx *c = g->c;
    const hb_nmodl_mechanism_t *m = g->m;
    for (int i = 0; i < c->n_blocks; i++) g->from_loops |= has_from(c->blocks[i].body);
    if (m->kind == HB_NMODL_ARTIFICIAL) check_artificial(c, m);
    const nm_block *bp = nm_gen_find_kind(c, B_BREAKPOINT);
    if (!bp && m->kind != HB_NMODL_ARTIFICIAL) /* an artificial cell may have none */
        nm_error(c, c->mech_name.line, c->mech_name.column, "%s has no BREAKPOINT; expected one",
                 m->name);
    const nm_block *deriv = NULL;
    const hb_nmodl_solve_t *other = NULL; /* derivimplicit, sparse, a PROCEDURE */
    for (int i = 0; i < m->n_solves; i++) {
        if (strcmp(m->solves[i].caller, "BREAKPOINT") != 0) continue;
        const char *method = m->solves[i].method;
        const int cnexp = strcmp(method, "cnexp") == 0;
        const nm_node *at = NULL; /* the SOLVE statement, for its position */
        for (int k = 0; k < bp->body->n_kids && !at; k++)
            if (bp->body->kids[k]->kind == S_SOLVE &&
                strcmp(bp->body->kids[k]->name, m->solves[i].block) == 0)
                at = bp->body->kids[k];
        if (deriv || other ||
            (!cnexp && strcmp(method, "derivimplicit") != 0 && strcmp(method, "sparse") != 0 &&
             strcmp(m->solves[i].block_kind, "PROCEDURE") != 0))
            nm_error(c, at ? at->line : c->mech_name.line, at ? at->column : c->mech_name.column,
                     "SOLVE %s METHOD %s is not generated; expected one SOLVE in BREAKPOINT, "
                     "METHOD cnexp, derivimplicit or sparse, or of a PROCEDURE",
                     m->solves[i].block, method[0] ? method : "(none)");
        if (cnexp)
            deriv = nm_gen_find_block(c, m->solves[i].block);
        else
            other = &m->solves[i];
    }
    find_rate_inverses(g, deriv);
    for (int i = 0; i < c->n_decls; i++)
        if (c->decls[i].array)
            nm_error(c, c->decls[i].var.line, c->decls[i].var.column,
                     "the array %s is not supported by "
                     "the code generator yet; expected scalar variables",
                     c->decls[i].var.name);
    const char *p = g->prefix;
    emit(g, "/* Generated by hinesbatch's NMODL code generator from %s: do not edit. */\n",
         m->path);
    /* a guard of the prefix's name: the engine's copy of the default catalogue's headers
     * (common/builtin/) and the build's are the same bytes, and one translation unit may
     * include both */
    char guard[128];
    size_t n_guard = 0;
    for (const char *q = p; *q && n_guard + 3 < sizeof guard; q++)
        guard[n_guard++] = (char)(*q >= 'a' && *q <= 'z' ? *q - 'a' + 'A' : *q);
    memcpy(guard + n_guard, "_H", 3);
    emit(g, "#ifndef %s\n#define %s\n\n", guard, guard);
    emit(g, "#include <math.h>\n#include <stddef.h>\n\n#include \"common/hb_math.h\"\n"
            "#include \"common/hostdev.h\"\n#include \"common/mech_abi.h\"\n%s\n",
         m->n_randoms ? "#include \"common/philox.h\"\n" : "");
    nm_gen_solve_helpers(g);
    /* the variables of one instance and lane */
    emit(g, "typedef struct {\n    double v, t, dt, celsius, diam, area;\n");
    if (m->n_net_receive_args >= 0) emit(g, "    double flag; /* NET_RECEIVE: 0, an event */\n");
    if (m->self_events)
        emit(g, "    hb_cat_sends_t *sends; /* net_send's and net_move's requests; NULL: none "
                "taken */\n");
    for (int i = 0; i < m->n_watch; i++)
        emit(g, "    double watch_on_%d, watch_above_%d, watch_flag_%d; /* WATCH condition %d */\n",
             i, i, i, i);
    if (m->n_watch) emit(g, "    double watch_rm; /* WATCH activations of this call */\n");
    for (int i = 0; i < m->n_randoms; i++)
        emit(g, "    double %s_id1, %s_id2, %s_id3; /* RANDOM %s's stream */\n", m->randoms[i],
             m->randoms[i], m->randoms[i], m->randoms[i]);
    static const char *const builtins[] = {"v", "t", "dt", "celsius", "diam", "area"};
    for (int i = 0; i < c->n_decls; i++)
        if (!nm_gen_in_list(builtins, 6, c->decls[i].var.name))
            emit(g, "    double %s;\n", c->decls[i].var.name);
    for (int i = 0; i < m->n_ions; i++) {
        for (int pass = 0; pass < 2; pass++) {
            const char **list = pass ? m->ions[i].write : m->ions[i].read;
            const int n = pass ? m->ions[i].n_write : m->ions[i].n_read;
            for (int j = 0; j < n; j++) {
                int declared = 0;
                for (int k = 0; k < c->n_decls; k++)
                    declared |= strcmp(c->decls[k].var.name, list[j]) == 0;
                if (!declared) emit(g, "    double %s;\n", list[j]);
            }
        }
    }
    const char *cur[64];
    int n_cur = 0;
    for (int i = 0; i < m->n_ions; i++)
        for (int j = 0; j < m->ions[i].n_write; j++)
            if (nm_gen_ion_current(m->ions[i].write[j], m->ions[i].name) && n_cur < 64)
                cur[n_cur++] = m->ions[i].write[j];
    for (int i = 0; i < m->n_nonspecific && n_cur < 64; i++) cur[n_cur++] = m->nonspecific[i];
    for (int i = 0; i < n_cur; i++) emit(g, "    double g_%s; /* d%s/dv */\n", cur[i], cur[i]);
    int n_tables = 0;
    for (int i = 0; i < c->n_blocks; i++)
        if (table_of(&c->blocks[i])) {
            emit(g, "    const double *table_%s; /* its TABLE, or NULL: the formulas */\n",
                 c->blocks[i].name);
            n_tables++;
        }
    for (int i = 0; i < c->n_blocks; i++)
        for (int j = 0; c->blocks[i].body && j < c->blocks[i].body->n_kids; j++)
            if (nm_gen_hoisted(c, &c->blocks[i], c->blocks[i].body->kids[j]))
                emit(g, "    double hc_%s_%s; /* %s's %s: celsius alone (%s_celsius) */\n",
                     c->blocks[i].name, c->blocks[i].body->kids[j]->kids[0]->name,
                     c->blocks[i].name, c->blocks[i].body->kids[j]->kids[0]->name, p);
    for (int i = 0; i < g->n_rate_inverse; i++)
        emit(g, "    double hbr_%s; /* 1 / %s, set beside it: the cnexp update's rate */\n",
             g->rate_inverse[i], g->rate_inverse[i]);
    if (g->from_loops)
        emit(g, "    hb_cat_fault_t *hb_fault; /* FROM refusals: blk->fault */\n");
    emit(g, "} %s_vars_t;\n\n", p);
    if (m->self_events) nm_gen_self_event_helper(g);
    /* the values of LOCALs that depend on celsius alone, once per celsius (nm_gen_hoisted) */
    emit(g, "HB_HOSTDEV void %s_celsius(%s_vars_t *s)\n{\n    (void)s;\n", p, p);
    for (int i = 0; i < c->n_blocks; i++)
        for (int j = 0; c->blocks[i].body && j < c->blocks[i].body->n_kids; j++) {
            const nm_node *st = c->blocks[i].body->kids[j];
            if (!nm_gen_hoisted(c, &c->blocks[i], st)) continue;
            g->block = &c->blocks[i];
            emit(g, "    s->hc_%s_%s = ", c->blocks[i].name, st->kids[0]->name);
            nm_gen_expr(g, st->kids[1]);
            emit(g, ";\n");
        }
    g->block = NULL;
    emit(g, "}\n\n");
    /* FUNCTIONs and PROCEDUREs */
    for (int pass = 1; pass >= 0; pass--)
        for (int i = 0; i < c->n_blocks; i++)
            if (c->blocks[i].kind == B_FUNCTION || c->blocks[i].kind == B_PROCEDURE)
                emit_function(g, &c->blocks[i], pass);
    if (c->n_blocks) emit(g, "\n");
    /* INITIAL */
    const nm_block *init = nm_gen_find_kind(c, B_INITIAL);
    emit(g, "HB_HOSTDEV void %s_initial(%s_vars_t *s)\n{\n    (void)s;\n", p, p);
    if (init) {
        g->block = init;
        nm_gen_block(g, init->body, 1);
    }
    emit(g, "}\n\n");
    /* BREAKPOINT's currents */
    g->block = bp;
    emit(g, "HB_HOSTDEV void %s_currents(%s_vars_t *s)\n{\n    (void)s;\n", p, p);
    if (bp) nm_gen_block(g, bp->body, 1);
    emit(g, "}\n\n");
    /* the states: cnexp */
    emit(g, "HB_HOSTDEV void %s_states(%s_vars_t *s)\n{\n    (void)s;\n", p, p);
    if (deriv) {
        g->block = deriv;
        for (int i = 0; i < deriv->body->n_kids; i++) {
            const nm_node *s = deriv->body->kids[i];
            if (s->kind == S_DERIV)
                emit_cnexp(g, s);
            else
                nm_gen_statement(g, s, 1);
        }
        g->n_locals = 0;
    }
    if (other) nm_gen_solve_states(g, other);
    emit(g, "}\n\n");
    if (deriv && cnexp_after_rest(deriv)) {
        /* the updates alone, for a caller that ran the DERIVATIVE's other statements itself
         * (the engine's hh: the rates of all lanes first, then the updates as vector code) */
        emit(g, "HB_HOSTDEV void %s_cnexp(%s_vars_t *s)\n{\n    (void)s;\n", p, p);
        g->block = deriv;
        for (int i = 0; i < deriv->body->n_kids; i++)
            if (deriv->body->kids[i]->kind == S_DERIV) emit_cnexp(g, deriv->body->kids[i]);
        g->n_locals = 0;
        emit(g, "}\n\n");
    }
    g->block = NULL;

    /* the kernels over a block: load, run, store */
    field fields[256];
    const int n_fields = collect_fields(g, fields, 256);
    int n_params = 0;
    for (int i = 0; i < n_fields; i++) n_params += fields[i].param;
    emit(g, "enum { %s_N_FIELD = %d, %s_N_PARAM = %d, %s_N_TABLE = %d };\n\n", p, n_fields, p,
         n_params, p, n_tables);
    /* the descriptor's numeric_didv and n_weight (docs/mechanisms.md, sections 1 and 5) */
    emit(g, "enum { %s_NUMERIC_DIDV = %d, %s_N_WEIGHT = %d };\n\n", p, g->numeric_didv, p,
         m->n_net_receive_args);
    /* load_lane: one lane's variables, the celsius-only LOCALs left as s has them (the kernels
     * compute those once per call, outside the lane loop: hb_pow's selects inside it keep GCC
     * from making it vector code); load: load_lane and those LOCALs, for one lane alone. */
    /* load_at: r is the lane's index in the rows' arrays, node[j W + k] W + k (the kernels pass
     * a contiguous r0 + k where every lane of instance j sits on one row: then the lane loop's
     * loads and stores are vector loads and stores, not gathers and scatters AVX2 lacks) */
    emit(g,
         "HB_HOSTDEV void %s_load_at(const hb_cat_block_t *blk, int j, int k, size_t r, "
         "%s_vars_t *s)\n{\n",
         p, p);
    emit(g, "    const int W = blk->width;\n");
    emit(g, "    const double *f = blk->field + (size_t)j * %s_N_FIELD * (size_t)W + (size_t)k;\n",
         p);
    emit(g, "    s->v = blk->v[r];\n");
    emit(g, "    s->t = blk->t;\n    s->dt = blk->dt;\n    s->celsius = blk->celsius;\n");
    if (g->from_loops) emit(g, "    s->hb_fault = blk->fault;\n");
    if (m->kind != HB_NMODL_DENSITY) emit(g, "    s->area = blk->area[j * W + k];\n");
    for (int i = 0, t = 0; i < c->n_blocks; i++)
        if (table_of(&c->blocks[i]))
            emit(g, "    s->table_%s = blk->table ? blk->table[%d] : NULL;\n", c->blocks[i].name,
                 t++);
    int global_index = 0;
    for (int i = 0; i < c->n_decls; i++) {
        const nm_decl *d = &c->decls[i];
        if (d->kind != D_PARAMETER || nm_gen_in_list(m->range, m->n_range, d->var.name) ||
            !strcmp(d->var.name, "v") || !strcmp(d->var.name, "celsius") ||
            nm_gen_ion_reads(m, d->var.name))
            continue;
        emit(g, "    s->%s = blk->global[%d];\n", d->var.name, global_index++);
    }
    for (int i = 0; i < c->n_decls; i++)
        if (c->decls[i].kind == D_CONSTANT || c->decls[i].kind == D_UNITS_CONSTANT) {
            emit(g, "    s->%s = ", c->decls[i].var.name);
            nm_gen_number(g, c->decls[i].var.value);
            emit(g, ";\n");
        }
    for (int q = 0, pq = 0; q < n_fields; q++) {
        if (fields[q].param) {
            emit(g, "    s->%s = blk->cl ? f[%d * W] : blk->param[j * %s_N_PARAM + %d];\n",
                 fields[q].name, q, p, pq);
            pq++;
        } else {
            emit(g, "    s->%s = f[%d * W];\n", fields[q].name, q);
        }
    }
    for (int i = 0; i < m->n_ions; i++) {
        const char *x = m->ions[i].name;
        for (int j = 0; j < m->ions[i].n_read; j++) {
            const char *v = m->ions[i].read[j];
            const unsigned role = nm_gen_ion_role(v, x);
            const char *arr = role == HB_ION_E   ? "e"
                              : role == HB_ION_I  ? "i"
                              : role == HB_ION_CI ? "ci"
                                                  : "co";
            emit(g, "    s->%s = blk->ion[%d].%s[r];\n", v, i, arr);
        }
        /* a concentration it writes (CaDynamics' cai) is the ion's, as NEURON maps the STATE
         * onto the ion's variable: read from the ion here, written back by the store */
        for (int j = 0; j < m->ions[i].n_write; j++) {
            const char *arr = written_conc(m->ions[i].write[j], x);
            if (arr)
                emit(g, "    s->%s = blk->ion[%d].%s[r];\n", m->ions[i].write[j], i, arr);
        }
    }
    emit(g, "}\n\n");
    emit(g,
         "HB_HOSTDEV void %s_load_lane(const hb_cat_block_t *blk, int j, int k, %s_vars_t *s)\n"
         "{\n    const int W = blk->width;\n"
         "    %s_load_at(blk, j, k, (size_t)blk->node[j * W + k] * (size_t)W + (size_t)k, s);\n}\n\n",
         p, p, p);
    emit(g, "HB_HOSTDEV void %s_load(const hb_cat_block_t *blk, int j, int k, %s_vars_t *s)\n{\n"
            "    %s_load_lane(blk, j, k, s);\n    %s_celsius(s);\n}\n\n",
         p, p, p, p);
    /* _store_at every field (INITIAL, NET_RECEIVE); _store_current_at and _store_state_at
     * those their kernel may change (kernel_changes) */
    static const char *const store_name[] = {"store", "store_current", "store_state"};
    for (int which = 0; which < 3; which++) {
        emit(g,
             "HB_HOSTDEV void %s_%s_at(const hb_cat_block_t *blk, int j, int k, size_t r, "
             "const %s_vars_t *s)\n{\n",
             p, store_name[which], p);
        emit(g, "    const int W = blk->width;\n    (void)r;\n");
        emit(g,
             "    double *f HB_UNUSED = blk->field + (size_t)j * %s_N_FIELD * (size_t)W + "
             "(size_t)k;\n    (void)s;\n",
             p);
        for (int q = 0; q < n_fields; q++)
            if (!fields[q].param) {
                if (which == 0 || kernel_changes(g->c, m, fields[q].name, which))
                    emit(g, "    f[%d * W] = s->%s;\n", q, fields[q].name);
            } else if (param_assigned(g->c, fields[q].name) &&
                       (which == 0 || kernel_assigns(g->c, fields[q].name, which))) {
                emit(g, "    if (blk->cl) f[%d * W] = s->%s; /* assigned by the .mod */\n", q,
                     fields[q].name);
            }
        for (int i = 0; i < m->n_ions; i++)
            for (int j = 0; j < m->ions[i].n_write; j++) {
                const char *arr = written_conc(m->ions[i].write[j], m->ions[i].name);
                if (arr)
                    emit(g, "    blk->ion[%d].%s[r] = s->%s;\n", i, arr, m->ions[i].write[j]);
            }
        emit(g, "}\n\n");
    }
    emit(g,
         "HB_HOSTDEV void %s_store(const hb_cat_block_t *blk, int j, int k, const %s_vars_t "
         "*s)\n{\n    const int W = blk->width;\n"
         "    %s_store_at(blk, j, k, (size_t)blk->node[j * W + k] * (size_t)W + (size_t)k, s);\n}\n\n",
         p, p, p);
    /* Each kernel loops over instances j and lanes k, the lanes innermost as vector code. A
     * block of one lane (a cell alone) has its instances, each on its own row (a density
     * mechanism), as the vector's lanes instead. Where all lanes of instance j sit on one row
     * (a group of cells of one shape: always, unless the group is mixed), the lanes' indices
     * into the rows' arrays are row W + k, contiguous, so the loads of v and the ions and the
     * stores into rhs, d and the ions are vector loads and stores; the other loop gathers and
     * scatters them (scalar code on AVX2). Each lane computes the same operations either way. */
    static const char *const kernel[] = {"init", "current", "state"};
    static const char *const body[] = {"initial", "currents", "states"};
    for (int q = 0; q < 3; q++) {
        /* The view's cl read in every lane (the stores into rhs, d, the ions' arrays or the
         * fields may alias the view, so GCC may not take it out of the loop) made
         * `blk->cl ? f[q W] : param[..]` a masked load, which with more control flow in the
         * lane (K_Tst's current, an hb_powi) GCC did not if-convert: scalar code. On the CPU a
         * kernel steps the lanes on a copy of the view, a local whose address stays here, with
         * cl a constant 1 where the view has per-lane fields (the engine's views, always), and
         * a copy of its ions' pointers (a mechanism that writes a concentration, CaDynamics_E2,
         * stores into them): the loads are plain vector loads. The GPU's dispatch inlines the
         * kernel into its own local view: the lanes unchanged. */
        /* The current kernel's `acc`: bit i where species i's i and di/dv are to accumulate,
         * the view's i not NULL (the CPU engine leaves NULL a species that nothing reads:
         * cat_step.h). On the CPU the lanes are inlined with acc a constant, all or none. */
        const unsigned ions_written = q == 1 ? nm_gen_current_ions(m) : 0;
        const char *acc_arg = ions_written ? ", unsigned acc" : "";
        emit(g, "HB_HOSTDEV void %s_%s_lanes(const hb_cat_block_t *blk, int j0, int j1%s);\n\n",
             p, kernel[q], acc_arg);
        emit(g, "HB_HOSTDEV void %s_%s_kernel(const hb_cat_block_t *blk, int j0, int j1)\n{\n",
             p, kernel[q]);
        if (ions_written) {
            emit(g, "    const unsigned acc =");
            for (int i = 0, first = 1; i < m->n_ions; i++)
                if (ions_written & (1u << i)) {
                    emit(g, "%s (blk->ion[%d].i ? %uu : 0u)", first ? "" : " |", i, 1u << i);
                    first = 0;
                }
            emit(g, ";\n");
        }
        emit(g, "#if defined(__CUDACC__)\n    %s_%s_lanes(blk, j0, j1%s);\n#else\n"
                "    hb_cat_block_t own = *blk;\n",
             p, kernel[q], ions_written ? ", acc" : "");
        if (m->n_ions > 0)
            emit(g, "    hb_ion_block_t ion[%d];\n"
                    "    for (int i = 0; i < %d; i++) ion[i] = blk->ion[i];\n"
                    "    own.ion = ion;\n",
                 m->n_ions, m->n_ions);
        emit(g, "    if (own.cl) {\n        own.cl = 1;\n");
        if (ions_written & (ions_written - 1)) /* two species or more: also any mix */
            emit(g, "        if (acc == %uu)\n            %s_%s_lanes(&own, j0, j1, %uu);\n"
                    "        else if (acc == 0u)\n            %s_%s_lanes(&own, j0, j1, 0u);\n"
                    "        else\n            %s_%s_lanes(&own, j0, j1, acc);\n",
                 ions_written, p, kernel[q], ions_written, p, kernel[q], p, kernel[q]);
        else if (ions_written)
            emit(g, "        if (acc)\n            %s_%s_lanes(&own, j0, j1, %uu);\n"
                    "        else\n            %s_%s_lanes(&own, j0, j1, 0u);\n",
                 p, kernel[q], ions_written, p, kernel[q]);
        else
            emit(g, "        %s_%s_lanes(&own, j0, j1);\n", p, kernel[q]);
        emit(g, "        return;\n    }\n"
                "    %s_%s_lanes(&own, j0, j1%s);\n#endif\n}\n\n",
             p, kernel[q], ions_written ? ", acc" : "");
        emit(g, "HB_HOSTDEV void %s_%s_lanes(const hb_cat_block_t *blk, int j0, int j1%s)\n{\n",
             p, kernel[q], acc_arg);
        emit(g, "    %s_vars_t hc_ = HB_ZERO_INIT; /* the celsius-only LOCALs, once */\n"
                "    hc_.celsius = blk->celsius;\n    %s_celsius(&hc_);\n", p, p);
        for (int pass = m->kind == HB_NMODL_DENSITY ? 0 : 1; pass < 3; pass++) {
            const char *index = "(size_t)blk->node[j * blk->width + k] * (size_t)blk->width + "
                                "(size_t)k";
            if (pass == 0) {
                emit(g, "    if (blk->width == 1) {\n        HB_SIMD\n"
                        "        for (int j = j0; j < j1; j++) {\n            const int k = 0;\n");
            } else if (pass == 1) {
                emit(g, "    for (int j = j0; j < j1; j++) {\n"
                        "        const int *nd = blk->node + (size_t)j * (size_t)blk->width;\n"
                        "        int one_row = 1;\n"
                        "        for (int k = 1; k < blk->lanes; k++) one_row &= nd[k] == nd[0];\n"
                        "        if (one_row) {\n"
                        "            const size_t r0 = (size_t)nd[0] * (size_t)blk->width;\n"
                        "            HB_SIMD\n"
                        "            for (int k = 0; k < blk->lanes; k++) {\n");
                index = "r0 + (size_t)k";
            } else {
                emit(g, "            continue;\n        }\n        HB_SIMD\n"
                        "        for (int k = 0; k < blk->lanes; k++) {\n");
            }
            const char *in = pass == 1 ? "    " : ""; /* the one-row loop sits one level deeper */
            emit(g, "%s            const size_t r = %s;\n", in, index);
            emit(g, "%s            %s_vars_t s = hc_;\n%s            %s_load_at(blk, j, k, r, &s);\n"
                    "%s            %s_%s(&s);\n", in, p, in, p, in, p, body[q]);
            if (q == 1) nm_gen_current_accumulate(g, cur, n_cur, in);
            emit(g, "%s            %s_%s_at(blk, j, k, r, &s);\n%s        }\n", in, p,
                 store_name[q], in);
            if (pass == 0) emit(g, "        return;\n    }\n");
            if (pass == 2) emit(g, "    }\n");
        }
        emit(g, q < 2 ? "}\n\n" : "}\n");
    }
    nm_gen_net_receive(g);
}

/* The walk's and the expressions' ways into the SOLVE and point parts (nmodl_gen.h). */
static const nm_gen_hooks hooks = {.initial_solve = nm_gen_initial_solve,
                                   .statement_more = nm_gen_statement_more,
                                   .random_call = nm_gen_random_call,
                                   .for_netcons = nm_gen_for_netcons,
                                   .self_event_call = nm_gen_self_event_call,
                                   .watch = nm_gen_watch};

const char *nm_generator_check(nm_ctx *c, const hb_nmodl_mechanism_t *m)
{
    jmp_buf outer;
    memcpy(outer, c->fail, sizeof outer);
    gen g = {.c = c, .m = m, .out = NULL, .prefix = "hbg", .hooks = hooks};
    const char *result = NULL;
    if (setjmp(c->fail)) {
        result = nm_strndup(c, c->message, strlen(c->message));
    } else {
        emit_mechanism(&g);
    }
    memcpy(c->fail, outer, sizeof outer);
    return result;
}

void nm_emit(nm_ctx *c, const hb_nmodl_mechanism_t *m, const char *prefix, FILE *out)
{
    gen g = {.c = c, .m = m, .out = out, .prefix = prefix, .hooks = hooks};
    emit_mechanism(&g);
    emit(&g, "\n#endif\n");
}
