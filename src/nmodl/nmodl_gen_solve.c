/* The C code generator's SOLVE methods past cnexp's (inf - x)/tau (docs/mechanisms.md,
 * section 3; docs/nmodl.md, section 5):
 *   - cnexp of another x' = f linear in x: NEURON's x += (1 - exp(dt b)) (-a/b - x);
 *   - derivimplicit: NEURON's Newton iteration on the backward-Euler residual, the Jacobian
 *     by central differences (scopmath's increments, tolerances and iteration limit);
 *   - KINETIC sparse: backward Euler on the scheme's linear system (first-order reactions,
 *     `<<` fluxes, COMPARTMENT volumes), each CONSERVE replacing one state's row, Gaussian
 *     elimination in a fixed order with the conserved states last; STEADYSTATE sparse the same
 *     without the time derivative;
 *   - LINEAR blocks: the equations' coefficients, Gaussian elimination with partial pivoting.
 * The coefficients are trees derived from the .mod's expressions (d/dx and the value at 0),
 * simplified only by exact rules (x + 0, x - 0, 0 - x, x * 1, x * 0, 0 / x, x / 1), and
 * written in the .mod's operation order. */
#include <math.h>
#include <string.h>

#include "nmodl/nmodl_gen.h"

#define emit nm_gen_emit

/* ---- trees ---- */
static nm_node *mk(gen *g, nm_node_kind kind, int op, const nm_node *at)
{
    nm_node *n = nm_alloc(g->c, sizeof *n);
    memset(n, 0, sizeof *n);
    n->kind = kind;
    n->op = op;
    n->line = at->line;
    n->column = at->column;
    return n;
}

static void add_kid(gen *g, nm_node *n, nm_node *kid)
{
    NM_GROW(g->c, n->kids, n->n_kids, n->cap_kids);
    n->kids[n->n_kids++] = kid;
}

static nm_node *num(gen *g, double x, const nm_node *at)
{
    nm_node *n = mk(g, N_NUM, 0, at);
    n->num = x;
    return n;
}

static int is_num(const nm_node *n, double x) { return n->kind == N_NUM && n->num == x; }

static nm_node *neg(gen *g, nm_node *a, const nm_node *at)
{
    if (is_num(a, 0.0)) return a;
    nm_node *n = mk(g, N_UNARY, '-', at);
    add_kid(g, n, a);
    return n;
}

/* a op b, simplified by the exact rules. */
static nm_node *bin(gen *g, int op, nm_node *a, nm_node *b, const nm_node *at)
{
    switch (op) {
    case '+':
        if (is_num(a, 0.0)) return b;
        if (is_num(b, 0.0)) return a;
        break;
    case '-':
        if (is_num(b, 0.0)) return a;
        if (is_num(a, 0.0)) return neg(g, b, at);
        break;
    case '*':
        if (is_num(a, 0.0) || is_num(b, 0.0)) return num(g, 0.0, at);
        if (is_num(a, 1.0)) return b;
        if (is_num(b, 1.0)) return a;
        break;
    case '/':
        if (is_num(a, 0.0)) return a;
        if (is_num(b, 1.0)) return a;
        break;
    default: break;
    }
    nm_node *n = mk(g, N_BINARY, op, at);
    add_kid(g, n, a);
    add_kid(g, n, b);
    return n;
}

static int mentions_any(const nm_node *n, const char *const *names, int count)
{
    for (int i = 0; i < count; i++)
        if (nm_gen_mentions(n, names[i])) return 1;
    return 0;
}

/* d n / d x for n linear in x; NULL where it is not (a product or quotient of x, x in a
 * call or a power). */
static nm_node *deriv(gen *g, const nm_node *n, const char *x)
{
    if (!nm_gen_mentions(n, x)) return num(g, 0.0, n);
    switch (n->kind) {
    case N_NAME: return n->n_kids ? NULL : num(g, 1.0, n);
    case N_UNARY: {
        nm_node *d = deriv(g, n->kids[0], x);
        if (!d || n->op == '!') return NULL;
        return n->op == '-' ? neg(g, d, n) : d;
    }
    case N_BINARY: {
        const nm_node *l = n->kids[0], *r = n->kids[1];
        if (n->op == '+' || n->op == '-') {
            nm_node *dl = deriv(g, l, x), *dr = deriv(g, r, x);
            return dl && dr ? bin(g, n->op, dl, dr, n) : NULL;
        }
        if (n->op == '*' && !nm_gen_mentions(r, x)) {
            nm_node *dl = deriv(g, l, x);
            return dl ? bin(g, '*', dl, (nm_node *)r, n) : NULL;
        }
        if (n->op == '*' && !nm_gen_mentions(l, x)) {
            nm_node *dr = deriv(g, r, x);
            return dr ? bin(g, '*', (nm_node *)l, dr, n) : NULL;
        }
        if (n->op == '/' && !nm_gen_mentions(r, x)) {
            nm_node *dl = deriv(g, l, x);
            return dl ? bin(g, '/', dl, (nm_node *)r, n) : NULL;
        }
        return NULL;
    }
    default: return NULL;
    }
}

/* n with every name of `names` replaced by 0, simplified. */
static nm_node *at_zero(gen *g, const nm_node *n, const char *const *names, int count)
{
    if (!mentions_any(n, names, count)) return (nm_node *)n;
    switch (n->kind) {
    case N_NAME:
        if (!n->n_kids) return num(g, 0.0, n);
        break;
    case N_UNARY:
        if (n->op == '-') return neg(g, at_zero(g, n->kids[0], names, count), n);
        break;
    case N_BINARY:
        if (n->op == '+' || n->op == '-' || n->op == '*' || n->op == '/')
            return bin(g, n->op, at_zero(g, n->kids[0], names, count),
                       at_zero(g, n->kids[1], names, count), n);
        break;
    default: break;
    }
    nm_node *copy = mk(g, n->kind, n->op, n);
    copy->name = n->name;
    copy->num = n->num;
    for (int i = 0; i < n->n_kids; i++) add_kid(g, copy, at_zero(g, n->kids[i], names, count));
    return copy;
}

/* ---- cnexp, the linear forms ---- */
void nm_gen_cnexp_linear(gen *g, const nm_node *s)
{
    const char *x = s->name;
    nm_node *b = deriv(g, s->kids[0], x);
    if (!b || nm_gen_mentions(b, x))
        nm_error(g->c, s->line, s->column,
                 "%s' is not linear in %s; expected cnexp's x' = a + b*x with a and b free of x "
                 "(derivimplicit solves the others)",
                 x, x);
    nm_node *a = at_zero(g, s->kids[0], &x, 1);
    if (is_num(b, 0.0)) { /* x' = a: the exact update */
        emit(g, "    s->%s += s->dt * ", x);
        nm_gen_expr(g, a);
        emit(g, ";\n");
        return;
    }
    emit(g, "    {\n        const double b_ = ");
    nm_gen_expr(g, b);
    emit(g, ";\n        s->%s += (1.0 - hb_exp(s->dt * b_)) * (-", x);
    nm_gen_expr(g, a);
    emit(g, " / b_ - s->%s);\n    }\n", x);
}

/* ---- statements ---- */
int nm_gen_statement_more(gen *g, const nm_node *s, int depth)
{
    if (s->kind == S_INITIAL && g->block && g->block->kind == B_NET_RECEIVE)
        return 1; /* NET_RECEIVE's INITIAL: its own kernel (nmodl_gen_point.c) */
    if (s->kind == S_DERIV && g->deriv_states) { /* derivimplicit's right-hand sides */
        for (int q = 0; q < g->n_deriv_states; q++)
            if (strcmp(g->deriv_states[q], s->name) == 0) {
                nm_gen_indent(g, depth);
                emit(g, "f_[%d] = ", q);
                nm_gen_expr(g, s->kids[0]);
                emit(g, ";\n");
                return 1;
            }
        return 0;
    }
    if (s->kind != S_FROM) return 0;
    /* FROM i = a TO b { }: NEURON's integer loop from (int)a while i <= b (b evaluated before
     * each pass, as C's for does), i a double inside. Its trip count at entry,
     * floor(b) - (int)a + 1, above HB_CAT_FROM_MAX or not finite, or a not finite or past an
     * int, is refused (docs/nmodl.md, section 4): the first refusal into s->hb_fault, the
     * instance's STATEs NaN, and no pass run. */
    const hb_nmodl_mechanism_t *m = g->m;
    const char *x = s->name;
    nm_gen_indent(g, depth);
    emit(g, "{\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "const double lo_%s = ", x);
    nm_gen_expr(g, s->kids[0]);
    emit(g, ";\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "double hi_%s = ", x);
    nm_gen_expr(g, s->kids[1]);
    emit(g, ";\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "const double n_%s = floor(hi_%s) - trunc(lo_%s) + 1.0;\n", x, x, x);
    nm_gen_indent(g, depth + 1);
    emit(g, "if (!(n_%s <= HB_CAT_FROM_MAX) || !(fabs(lo_%s) < 2147483648.0)) {\n", x, x);
    nm_gen_indent(g, depth + 2);
    emit(g, "if (s->hb_fault && !s->hb_fault->line) {\n");
    nm_gen_indent(g, depth + 3);
    emit(g, "s->hb_fault->mech = \"%s\";\n", m->name);
    nm_gen_indent(g, depth + 3);
    emit(g, "s->hb_fault->file = \"");
    for (const char *q = m->path; *q; q++) /* a C string of the path as given */
        if (*q == '"' || *q == '\\') emit(g, "\\%c", *q);
        else if ((unsigned char)*q < 32 || (unsigned char)*q > 126)
            emit(g, "\\%03o", (unsigned char)*q);
        else emit(g, "%c", *q);
    emit(g, "\";\n");
    nm_gen_indent(g, depth + 3);
    emit(g, "s->hb_fault->line = %d;\n", s->line);
    nm_gen_indent(g, depth + 3);
    emit(g, "s->hb_fault->count = n_%s;\n", x);
    nm_gen_indent(g, depth + 2);
    emit(g, "}\n");
    for (int i = 0; i < m->n_states; i++) {
        nm_gen_indent(g, depth + 2);
        emit(g, "s->%s = NAN;\n", m->states[i].name);
    }
    nm_gen_indent(g, depth + 1);
    emit(g, "} else {\n");
    nm_gen_indent(g, depth + 2);
    emit(g, "for (int li_%s = (int)lo_%s; (double)li_%s <= hi_%s;) {\n", x, x, x, x);
    const int mark = g->n_locals;
    nm_gen_push_local(g, x);
    nm_gen_indent(g, depth + 3);
    emit(g, "{\n");
    nm_gen_indent(g, depth + 4);
    emit(g, "const double lv_%s HB_UNUSED = (double)li_%s;\n", x, x);
    nm_gen_block(g, s->kids[2], depth + 4);
    nm_gen_indent(g, depth + 3);
    emit(g, "}\n");
    nm_gen_indent(g, depth + 3);
    emit(g, "li_%s++;\n", x);
    nm_gen_indent(g, depth + 3);
    emit(g, "const double lv_%s HB_UNUSED = (double)li_%s;\n", x, x);
    nm_gen_indent(g, depth + 3);
    emit(g, "hi_%s = ", x);
    nm_gen_expr(g, s->kids[1]);
    emit(g, ";\n");
    g->n_locals = mark;
    nm_gen_indent(g, depth + 2);
    emit(g, "}\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "}\n");
    nm_gen_indent(g, depth);
    emit(g, "}\n");
    return 1;
}

/* ---- the linear solver the generated code calls ---- */
static int needs_solver(const gen *g)
{
    const hb_nmodl_mechanism_t *m = g->m;
    for (int i = 0; i < m->n_solves; i++)
        if (!strcmp(m->solves[i].method, "derivimplicit") ||
            !strcmp(m->solves[i].method, "sparse") || !strcmp(m->solves[i].block_kind, "LINEAR"))
            return 1;
    return 0;
}

void nm_gen_solve_helpers(gen *g)
{
    const char *p = g->prefix;
    if (g->m->n_randoms) /* RANDOM's draw (nmodl_gen_point.c, nm_gen_random_call) */
        emit(g,
             "/* A RANDOM's next uniform in (0, 1): Philox keyed (id1, id2), counter (its\n"
             " * position, 2^31 + id3 as the stream: apart from the network's streams). */\n"
             "HB_HOSTDEV double %s_random_uniform(double *pos, double id1, double id2, double "
             "id3)\n{\n"
             "    const hb_philox_ctr_t d =\n"
             "        hb_philox_draw(hb_philox_u64_of(id1), (uint32_t)hb_philox_u64_of(id2),\n"
             "                       0x80000000u | (uint32_t)hb_philox_u64_of(id3),\n"
             "                       hb_philox_u64_of(*pos));\n"
             "    *pos += 1.0;\n"
             "    return hb_philox_uniform(d.v[0], d.v[1]);\n}\n\n",
             p);
    if (!needs_solver(g)) return;
    emit(g,
         "/* Solves a x = b (n by n, row-major; b becomes x) by Gaussian elimination: the rows in\n"
         " * their order (pivot 0), or the largest pivot of each column (pivot 1). */\n"
         "HB_HOSTDEV void %s_solve(int n, double *a, double *b, int pivot)\n{\n"
         "    for (int c = 0; c < n; c++) {\n"
         "        if (pivot) {\n"
         "            int best = c;\n"
         "            for (int r = c + 1; r < n; r++)\n"
         "                if (fabs(a[r * n + c]) > fabs(a[best * n + c])) best = r;\n"
         "            if (best != c) {\n"
         "                for (int q = 0; q < n; q++) {\n"
         "                    const double t = a[c * n + q];\n"
         "                    a[c * n + q] = a[best * n + q];\n"
         "                    a[best * n + q] = t;\n"
         "                }\n"
         "                const double t = b[c];\n"
         "                b[c] = b[best];\n"
         "                b[best] = t;\n"
         "            }\n"
         "        }\n"
         "        for (int r = c + 1; r < n; r++) {\n"
         "            const double f = a[r * n + c] / a[c * n + c];\n"
         "            if (f == 0.0) continue;\n"
         "            for (int q = c + 1; q < n; q++) a[r * n + q] -= f * a[c * n + q];\n"
         "            b[r] -= f * b[c];\n"
         "        }\n"
         "    }\n"
         "    for (int r = n - 1; r >= 0; r--) {\n"
         "        double sum = b[r];\n"
         "        for (int q = r + 1; q < n; q++) sum -= a[r * n + q] * b[q];\n"
         "        b[r] = sum / a[r * n + r];\n"
         "    }\n"
         "}\n\n",
         p);
}

/* The STATEs a block's reactions, CONSERVEs, COMPARTMENTs and equations name, in the
 * mechanism's STATE order. */
static int block_states(gen *g, const nm_node *body, const char **out)
{
    int n = 0;
    for (int i = 0; i < g->m->n_states; i++) {
        const char *x = g->m->states[i].name;
        int used = 0;
        for (int k = 0; k < body->n_kids && !used; k++) {
            const nm_node *s = body->kids[k];
            if (s->kind == S_REACT || s->kind == S_CONSERVE || s->kind == S_LINEQ)
                for (int q = 0; q < s->n_kids; q++) used |= nm_gen_mentions(s->kids[q], x);
        }
        if (used) out[n++] = x;
    }
    return n;
}

static int find_name(const char *const *names, int n, const char *x)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], x) == 0) return i;
    return -1;
}

/* The last name of `list` (reaction-side or expression order) in names and not yet taken. */
static void last_state(const nm_node *e, const char *const *names, int n, const int *taken,
                       int *found)
{
    if (e->kind == N_NAME) {
        const int i = find_name(names, n, e->name);
        if (i >= 0 && !taken[i]) *found = i;
    }
    for (int k = 0; k < e->n_kids; k++) last_state(e->kids[k], names, n, taken, found);
}

enum { MAX_SYSTEM = 64 };

/* One first-order side of a reaction: its state's position, or an error. */
static int reaction_term(gen *g, const nm_node *side, const char *const *names, int n,
                         const int *pos, const nm_node *at)
{
    if (side->n_kids != 1 || side->kids[0]->num != 1.0 || side->kids[0]->n_kids)
        nm_error(g->c, at->line, at->column,
                 "this reaction is not first order; expected one STATE with coefficient 1 on "
                 "each side (the code generator writes linear schemes)");
    const int i = find_name(names, n, side->kids[0]->name);
    if (i < 0)
        nm_error(g->c, at->line, at->column, "%s is not a STATE; expected STATEs in reactions",
                 side->kids[0]->name);
    return pos[i];
}

/* Schemes of up to this many STATEs are solved by unrolled code (emit_unrolled_solve). */
enum { MAX_UNROLLED = 24 };

/* Matrix entry (r, c) as an lvalue: a_R_C (unrolled, marked in the pattern nz) or a_[r n + c]. */
static void entry(gen *g, int unrolled, int n, int r, int c, char *nz)
{
    if (unrolled) {
        nz[r * n + c] = 1;
        emit(g, "a_%d_%d", r, c);
    } else {
        emit(g, "a_[%d]", r * n + c);
    }
}

/* The generic solve's Gaussian elimination (pivot 0: rows in order) written out over the
 * nonzero pattern nz of the scheme (and its fill-in). The skipped operations are those on
 * entries that stay exactly +0.0: the generic solve finds their multiplier 0.0 / pivot == 0
 * and skips them too, or subtracts a product that is a zero (0.0 times a finite value) from
 * an entry that is never -0.0 (sums that start at +0.0 are never -0.0). So the results are
 * its bits wherever every pivot is nonzero and every multiplier and solution finite (for a
 * scheme of finite rates >= 0 the pivots are at least 1/dt); with a zero or NaN pivot both
 * give non-finite states. Its own zero test (f == 0.0) is kept, as a select. A structurally
 * zero pivot falls back to the generic solve on arrays. */
static void emit_unrolled_solve(gen *g, int n, char *nz, int depth)
{
    char fill[MAX_UNROLLED * MAX_UNROLLED];
    memcpy(fill, nz, sizeof fill);
    int zero_pivot = 0;
    for (int c = 0; c < n; c++) {
        if (!fill[c * n + c]) zero_pivot = 1;
        for (int r = c + 1; r < n; r++)
            if (fill[r * n + c])
                for (int q = c + 1; q < n; q++)
                    if (fill[c * n + q]) fill[r * n + q] = 1;
    }
    if (zero_pivot) {
        nm_gen_indent(g, depth);
        emit(g, "{ /* a structurally zero pivot: the generic solve */\n");
        nm_gen_indent(g, depth + 1);
        emit(g, "double a_[%d] = {", n * n);
        for (int e = 0; e < n * n; e++) emit(g, "%sa_%d_%d", e ? ", " : "", e / n, e % n);
        emit(g, "}, b_[%d] = {", n);
        for (int r = 0; r < n; r++) emit(g, "%sb_%d", r ? ", " : "", r);
        emit(g, "};\n");
        nm_gen_indent(g, depth + 1);
        emit(g, "%s_solve(%d, a_, b_, 0);\n", g->prefix, n);
        for (int r = 0; r < n; r++) {
            nm_gen_indent(g, depth + 1);
            emit(g, "b_%d = b_[%d];\n", r, r);
        }
        nm_gen_indent(g, depth);
        emit(g, "}\n");
        return;
    }
    memcpy(fill, nz, sizeof fill);
    nm_gen_indent(g, depth);
    emit(g, "double f_ HB_UNUSED;\n");
    for (int c = 0; c < n; c++)
        for (int r = c + 1; r < n; r++) {
            if (!fill[r * n + c]) continue;
            nm_gen_indent(g, depth);
            emit(g, "f_ = a_%d_%d / a_%d_%d;\n", r, c, c, c);
            for (int q = c + 1; q < n; q++) {
                if (!fill[c * n + q]) continue;
                fill[r * n + q] = 1;
                nm_gen_indent(g, depth);
                emit(g, "a_%d_%d = (f_ == 0.0) ? a_%d_%d : a_%d_%d - f_ * a_%d_%d;\n", r, q, r, q,
                     r, q, c, q);
            }
            nm_gen_indent(g, depth);
            emit(g, "b_%d = (f_ == 0.0) ? b_%d : b_%d - f_ * b_%d;\n", r, r, r, c);
        }
    for (int r = n - 1; r >= 0; r--) {
        for (int q = r + 1; q < n; q++) {
            if (!fill[r * n + q]) continue;
            nm_gen_indent(g, depth);
            emit(g, "b_%d = b_%d - a_%d_%d * b_%d;\n", r, r, r, q, q);
        }
        nm_gen_indent(g, depth);
        emit(g, "b_%d = b_%d / a_%d_%d;\n", r, r, r, r);
    }
}

/* A KINETIC block as backward Euler on its linear system (steady: the steady state). */
static void emit_kinetic(gen *g, const nm_block *b, int steady, int depth)
{
    const char *names[MAX_SYSTEM];
    const nm_node *body = b->body;
    const int n = block_states(g, body, names);
    if (n == 0 || n > MAX_SYSTEM)
        nm_error(g->c, b->line, b->column,
                 "KINETIC %s has %d STATEs in its scheme; expected 1 to %d", b->name, n,
                 MAX_SYSTEM);
    /* each CONSERVE replaces the row of its last state not taken yet; those go last */
    int taken[MAX_SYSTEM] = {0}, conserved[MAX_SYSTEM], n_conserve = 0, pos[MAX_SYSTEM];
    const nm_node *conserve[MAX_SYSTEM];
    for (int k = 0; k < body->n_kids; k++) {
        const nm_node *s = body->kids[k];
        if (s->kind != S_CONSERVE) continue;
        int found = -1;
        last_state(s->kids[0], names, n, taken, &found);
        if (found < 0)
            nm_error(g->c, s->line, s->column,
                     "this CONSERVE names no STATE left to replace; expected one per CONSERVE");
        taken[found] = 1;
        conserve[n_conserve] = s;
        conserved[n_conserve++] = found;
    }
    int next = 0;
    for (int i = 0; i < n; i++)
        if (!taken[i]) pos[i] = next++;
    for (int q = 0; q < n_conserve; q++) pos[conserved[q]] = next++;
    const char *p = g->prefix;
    const nm_block *outer = g->block;
    g->block = b;
    const int mark = g->n_locals;
    nm_gen_indent(g, depth);
    emit(g, "{ /* KINETIC %s%s: rows and columns", b->name, steady ? ", STEADYSTATE" : "");
    for (int i = 0; i < n; i++)
        for (int q = 0; q < n; q++)
            if (pos[q] == i) emit(g, " %s", names[q]);
    emit(g, " */\n");
    /* Small systems: each entry a local of its own (a_R_C, b_R, vol_R) and the elimination
     * unrolled over the scheme's nonzero pattern, so the lane loop is vector code; larger
     * ones: arrays and the generic solve. */
    const int unrolled = n <= MAX_UNROLLED;
    char nz[MAX_UNROLLED * MAX_UNROLLED] = {0};
    if (unrolled) {
        for (int r = 0; r < n; r++) {
            nm_gen_indent(g, depth + 1);
            emit(g, "double");
            for (int c = 0; c < n; c++) emit(g, "%s a_%d_%d HB_UNUSED = 0.0", c ? "," : "", r, c);
            emit(g, ";\n");
        }
        nm_gen_indent(g, depth + 1);
        emit(g, "double");
        for (int r = 0; r < n; r++) emit(g, "%s b_%d = 0.0", r ? "," : "", r);
        emit(g, ";\n");
        nm_gen_indent(g, depth + 1);
        emit(g, "double");
        for (int r = 0; r < n; r++)
            emit(g, "%s vol_%d HB_UNUSED = 1.0", r ? "," : "", r);
        emit(g, "; /* read by the time derivative only */\n");
    } else {
        nm_gen_indent(g, depth + 1);
        emit(g, "double a_[%d] = {0.0}, b_[%d] = {0.0};\n", n * n, n);
        nm_gen_indent(g, depth + 1);
        emit(g, "double vol_[%d] HB_UNUSED; /* read by the time derivative only */\n", n);
        nm_gen_indent(g, depth + 1);
        emit(g, "for (int q_ = 0; q_ < %d; q_++) vol_[q_] = 1.0;\n", n);
    }
    for (int k = 0; k < body->n_kids; k++) {
        const nm_node *s = body->kids[k];
        if (s->kind == S_CONSERVE) continue; /* applied below */
        if (s->kind == S_COMPARTMENT) {
            if (s->name)
                nm_error(g->c, s->line, s->column,
                         "an indexed COMPARTMENT is not supported by the code generator; "
                         "expected COMPARTMENT volume { states }");
            nm_gen_indent(g, depth + 1);
            emit(g, "{\n");
            nm_gen_indent(g, depth + 2);
            emit(g, "const double c_ = ");
            nm_gen_expr(g, s->kids[0]);
            emit(g, ";\n");
            for (int q = 0; q < s->kids[1]->n_kids; q++) {
                const int i = find_name(names, n, s->kids[1]->kids[q]->name);
                if (i < 0) continue; /* a STATE outside the scheme */
                nm_gen_indent(g, depth + 2);
                emit(g, unrolled ? "vol_%d = c_;\n" : "vol_[%d] = c_;\n", pos[i]);
            }
            nm_gen_indent(g, depth + 1);
            emit(g, "}\n");
            continue;
        }
        if (s->kind != S_REACT) {
            nm_gen_statement(g, s, depth + 1);
            continue;
        }
        if (s->op == OP_FLUX) { /* ~ x << (f): x' gains f */
            const int x = reaction_term(g, s->kids[0], names, n, pos, s);
            nm_gen_indent(g, depth + 1);
            emit(g, unrolled ? "b_%d += " : "b_[%d] += ", x);
            nm_gen_expr(g, s->kids[2]);
            emit(g, ";\n");
            continue;
        }
        if (s->op != OP_REACT)
            nm_error(g->c, s->line, s->column,
                     "this reaction is not supported by the code generator; expected '<->' or "
                     "'<<'");
        const int l = reaction_term(g, s->kids[0], names, n, pos, s);
        const int r = reaction_term(g, s->kids[1], names, n, pos, s);
        nm_gen_indent(g, depth + 1);
        emit(g, "{\n");
        nm_gen_indent(g, depth + 2);
        emit(g, "const double kf_ = ");
        nm_gen_expr(g, s->kids[2]);
        emit(g, ", kb_ = ");
        nm_gen_expr(g, s->kids[3]);
        emit(g, ";\n");
        const int rc[4][2] = {{l, l}, {r, l}, {r, r}, {l, r}};
        const char *op[4] = {"+= kf_", "-= kf_", "+= kb_", "-= kb_"};
        for (int e = 0; e < 4; e++) {
            nm_gen_indent(g, depth + 2);
            entry(g, unrolled, n, rc[e][0], rc[e][1], nz);
            emit(g, " %s;\n", op[e]);
        }
        nm_gen_indent(g, depth + 1);
        emit(g, "}\n");
    }
    if (!steady) /* vol (x' - x)/dt = J x' + c: (vol/dt - J) x' = vol x/dt + c */
        for (int i = 0; i < n; i++) {
            nm_gen_indent(g, depth + 1);
            entry(g, unrolled, n, pos[i], pos[i], nz);
            emit(g, unrolled ? " += vol_%d / s->dt;\n" : " += vol_[%d] / s->dt;\n", pos[i]);
            nm_gen_indent(g, depth + 1);
            emit(g, unrolled ? "b_%d += vol_%d * s->%s / s->dt;\n"
                             : "b_[%d] += vol_[%d] * s->%s / s->dt;\n",
                 pos[i], pos[i], names[i]);
        }
    for (int c = 0; c < n_conserve; c++) {
        const nm_node *s = conserve[c];
        const int row = pos[conserved[c]];
        for (int i = 0; i < n; i++) {
            nm_node *coef = deriv(g, s->kids[0], names[i]);
            if (!coef || mentions_any(coef, names, n))
                nm_error(g->c, s->line, s->column,
                         "this CONSERVE is not linear in the STATEs; expected a sum of STATEs "
                         "with constant coefficients");
            nm_gen_indent(g, depth + 1);
            entry(g, unrolled, n, row, pos[i], nz);
            emit(g, " = ");
            nm_gen_expr(g, coef);
            emit(g, ";\n");
        }
        nm_gen_indent(g, depth + 1);
        emit(g, unrolled ? "b_%d = " : "b_[%d] = ", row);
        nm_gen_expr(g, bin(g, '-', s->kids[1], at_zero(g, s->kids[0], names, n), s));
        emit(g, ";\n");
    }
    if (unrolled) {
        emit_unrolled_solve(g, n, nz, depth + 1);
    } else {
        nm_gen_indent(g, depth + 1);
        emit(g, "%s_solve(%d, a_, b_, 0);\n", p, n);
    }
    for (int i = 0; i < n; i++) {
        nm_gen_indent(g, depth + 1);
        emit(g, unrolled ? "s->%s = b_%d;\n" : "s->%s = b_[%d];\n", names[i], pos[i]);
    }
    nm_gen_indent(g, depth);
    emit(g, "}\n");
    g->n_locals = mark;
    g->block = outer;
}

/* A LINEAR block: its equations' coefficients, solved with partial pivoting. */
static void emit_linear(gen *g, const nm_block *b, int depth)
{
    const char *names[MAX_SYSTEM];
    const nm_node *body = b->body;
    const int n = block_states(g, body, names);
    int n_eq = 0;
    for (int k = 0; k < body->n_kids; k++) n_eq += body->kids[k]->kind == S_LINEQ;
    if (n == 0 || n > MAX_SYSTEM || n_eq != n)
        nm_error(g->c, b->line, b->column,
                 "LINEAR %s has %d equations in %d STATEs; expected as many equations as STATEs "
                 "(1 to %d)",
                 b->name, n_eq, n, MAX_SYSTEM);
    const nm_block *outer = g->block;
    g->block = b;
    const int mark = g->n_locals;
    nm_gen_indent(g, depth);
    emit(g, "{ /* LINEAR %s: columns", b->name);
    for (int i = 0; i < n; i++) emit(g, " %s", names[i]);
    emit(g, " */\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "double a_[%d], b_[%d];\n", n * n, n);
    for (int k = 0, e = 0; k < body->n_kids; k++) {
        const nm_node *s = body->kids[k];
        if (s->kind != S_LINEQ) {
            nm_gen_statement(g, s, depth + 1);
            continue;
        }
        for (int i = 0; i < n; i++) {
            nm_node *dl = deriv(g, s->kids[0], names[i]), *dr = deriv(g, s->kids[1], names[i]);
            nm_node *coef = dl && dr ? bin(g, '-', dl, dr, s) : NULL;
            if (!coef || mentions_any(coef, names, n))
                nm_error(g->c, s->line, s->column,
                         "this equation is not linear in %s; expected a LINEAR block's "
                         "equations linear in its STATEs",
                         names[i]);
            nm_gen_indent(g, depth + 1);
            emit(g, "a_[%d] = ", e * n + i);
            nm_gen_expr(g, coef);
            emit(g, ";\n");
        }
        nm_gen_indent(g, depth + 1);
        emit(g, "b_[%d] = ", e);
        nm_gen_expr(g, bin(g, '-', at_zero(g, s->kids[1], names, n),
                           at_zero(g, s->kids[0], names, n), s));
        emit(g, ";\n");
        e++;
    }
    nm_gen_indent(g, depth + 1);
    emit(g, "%s_solve(%d, a_, b_, 1);\n", g->prefix, n);
    for (int i = 0; i < n; i++) {
        nm_gen_indent(g, depth + 1);
        emit(g, "s->%s = b_[%d];\n", names[i], i);
    }
    nm_gen_indent(g, depth);
    emit(g, "}\n");
    g->n_locals = mark;
    g->block = outer;
}

/* derivimplicit: NEURON's Newton iteration (scopmath's newton) on the backward-Euler
 * residual F(x) = f(x) - (x - x_old)/dt: the Jacobian by central differences with increments
 * max(|0.02 x|, 1e-6) (signed as x), rebuilt while an iteration changes a state by more than
 * 5 % of it; converged when every relative change is at most 1e-6 and every |F| at most 1e-8;
 * at most 50 iterations. */
static void emit_derivimplicit(gen *g, const nm_block *b)
{
    const char *names[MAX_SYSTEM];
    int n = 0;
    for (int k = 0; k < b->body->n_kids; k++) {
        const nm_node *s = b->body->kids[k];
        if (s->kind != S_DERIV) continue;
        if (n == MAX_SYSTEM || find_name(names, n, s->name) >= 0)
            nm_error(g->c, s->line, s->column,
                     "%s' again, or more than %d equations; expected one equation per STATE",
                     s->name, MAX_SYSTEM);
        names[n++] = s->name;
    }
    if (n == 0)
        nm_error(g->c, b->line, b->column, "DERIVATIVE %s has no x' equation; expected one",
                 b->name);
    const nm_block *outer = g->block;
    g->block = b;
    g->deriv_states = names;
    g->n_deriv_states = n;
    const char *p = g->prefix;
    emit(g, "    { /* derivimplicit %s: Newton on the backward-Euler residual */\n", b->name);
    emit(g, "        double *const x_[%d] = {", n);
    for (int i = 0; i < n; i++) emit(g, "%s&s->%s", i ? ", " : "", names[i]);
    emit(g, "};\n        double x0_[%d], xc_[%d], r_[%d], hi_[%d], F_[%d], J_[%d], Jw_[%d], dx_[%d];\n",
         n, n, n, n, n, n * n, n * n, n);
    emit(g, "        for (int q_ = 0; q_ < %d; q_++) x0_[q_] = *x_[q_];\n", n);
    emit(g, "        double change_ = 1.0;\n");
    emit(g, "        for (int it_ = 0; it_ <= 50; it_++) {\n");
    emit(g, "            const int build_ = change_ > 0.05 && it_ < 50;\n");
    emit(g, "            for (int q_ = 0; q_ < %d; q_++) xc_[q_] = *x_[q_];\n", n);
    emit(g, "            double h_ = 0.0;\n");
    emit(g, "            /* e_ 0: F at x; 2c + 1, 2c + 2: column c at x + h, x - h */\n");
    emit(g, "            for (int e_ = 0; e_ <= (build_ ? %d : 0); e_++) {\n", 2 * n);
    emit(g, "                for (int q_ = 0; q_ < %d; q_++) *x_[q_] = xc_[q_];\n", n);
    emit(g, "                const int c_ = (e_ - 1) / 2;\n");
    emit(g, "                if (e_ > 0) {\n");
    emit(g, "                    h_ = fabs(0.02 * xc_[c_]) > 1e-6 ? 0.02 * xc_[c_] : 1e-6;\n");
    emit(g, "                    *x_[c_] = e_ %% 2 ? xc_[c_] + h_ : xc_[c_] - h_;\n");
    emit(g, "                }\n");
    emit(g, "                double f_[%d];\n", n);
    const int mark = g->n_locals;
    for (int k = 0; k < b->body->n_kids; k++) nm_gen_statement(g, b->body->kids[k], 4);
    g->n_locals = mark;
    emit(g, "                for (int q_ = 0; q_ < %d; q_++) r_[q_] = f_[q_] - (*x_[q_] - x0_[q_]) / s->dt;\n", n);
    emit(g, "                for (int q_ = 0; q_ < %d; q_++) {\n", n);
    emit(g, "                    if (e_ == 0) F_[q_] = r_[q_];\n");
    emit(g, "                    else if (e_ %% 2) hi_[q_] = r_[q_];\n");
    emit(g, "                    else J_[q_ * %d + c_] = (hi_[q_] - r_[q_]) / (2.0 * h_);\n", n);
    emit(g, "                }\n            }\n");
    emit(g, "            for (int q_ = 0; q_ < %d; q_++) *x_[q_] = xc_[q_];\n", n);
    emit(g, "            double dev_ = 0.0;\n");
    emit(g, "            for (int q_ = 0; q_ < %d; q_++) dev_ = fabs(F_[q_]) > dev_ ? fabs(F_[q_]) : dev_;\n", n);
    emit(g, "            if (it_ > 0 && change_ <= 1e-6 && dev_ <= 1e-8) break;\n");
    emit(g, "            if (it_ == 50) break; /* NEURON's limit: the last iterate stays */\n");
    emit(g, "            for (int q_ = 0; q_ < %d; q_++) {\n", n * n);
    emit(g, "                Jw_[q_] = J_[q_];\n            }\n");
    emit(g, "            for (int q_ = 0; q_ < %d; q_++) dx_[q_] = -F_[q_];\n", n);
    emit(g, "            %s_solve(%d, Jw_, dx_, 1);\n", p, n);
    emit(g, "            change_ = 0.0;\n");
    emit(g, "            for (int q_ = 0; q_ < %d; q_++) {\n", n);
    emit(g, "                if (fabs(*x_[q_]) > 1e-8 && fabs(dx_[q_] / *x_[q_]) > change_)\n");
    emit(g, "                    change_ = fabs(dx_[q_] / *x_[q_]);\n");
    emit(g, "                *x_[q_] += dx_[q_];\n            }\n");
    emit(g, "        }\n    }\n");
    g->deriv_states = NULL;
    g->n_deriv_states = 0;
    g->block = outer;
}

void nm_gen_solve_states(gen *g, const hb_nmodl_solve_t *solve)
{
    const nm_block *b = nm_gen_find_block(g->c, solve->block);
    const nm_ctx *c = g->c;
    if (!b) nm_error(g->c, c->mech_name.line, c->mech_name.column, "no block %s", solve->block);
    if (b->kind == B_DERIVATIVE && strcmp(solve->method, "derivimplicit") == 0) {
        emit_derivimplicit(g, b);
    } else if (b->kind == B_KINETIC && strcmp(solve->method, "sparse") == 0) {
        emit_kinetic(g, b, 0, 1);
    } else if (b->kind == B_LINEAR) {
        emit_linear(g, b, 1);
    } else if (b->kind == B_PROCEDURE && (!b->args || b->args->n_kids == 0)) {
        emit(g, "    (void)%s_%s(s);\n", g->prefix, b->name);
    } else {
        nm_error(g->c, b->line, b->column,
                 "SOLVE %s METHOD %s is not generated; expected derivimplicit of a DERIVATIVE, "
                 "sparse of a KINETIC, a LINEAR block or a PROCEDURE without arguments",
                 solve->block, solve->method[0] ? solve->method : "(none)");
    }
}

int nm_gen_initial_solve(gen *g, const nm_node *s, int depth)
{
    const nm_block *b = nm_gen_find_block(g->c, s->name);
    if (!b) return 0;
    if (b->kind == B_LINEAR && !s->method) {
        emit_linear(g, b, depth);
        return 1;
    }
    if (b->kind == B_KINETIC && s->steadystate && s->method && strcmp(s->method, "sparse") == 0) {
        emit_kinetic(g, b, 1, depth);
        return 1;
    }
    if (b->kind == B_PROCEDURE && !s->method && (!b->args || b->args->n_kids == 0)) {
        nm_gen_indent(g, depth);
        emit(g, "(void)%s_%s(s);\n", g->prefix, b->name);
        return 1;
    }
    return 0;
}
