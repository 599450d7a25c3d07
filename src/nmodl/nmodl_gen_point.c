/* The C code generator's point processes and currents (docs/mechanisms.md, sections 3 and 5):
 *   - the current kernel's accumulation: the analytic conductance (every current G*(v - E)),
 *     or NEURON's difference g = (i(v + 0.001) - i(v)) / 0.001 of the currents' sum (and per
 *     ion); a point process's current [nA] and conductance [uS] as densities of its row,
 *     times 1e2/area (area [um2]), as NEURON's nrn_cur and hb_step_synapse_current do;
 *   - NET_RECEIVE as a kernel of one event on instance j of lane k: the connection's weight
 *     vector in, NET_RECEIVE's arguments written back (the per-connection state), t the
 *     event's time, flag 0; its INITIAL as a kernel of its own, run per connection at
 *     initialisation. FOR_NETCONS loops over the instance's connections (blk->netcon_*) in
 *     the order the engine keeps them (docs/mechanisms.md, section 10);
 *   - self-events (net_send, net_move): NEURON's requests, t + delay and flag or the new time,
 *     into the engine's hb_cat_sends_t through two more kernels, NET_RECEIVE with its flag and
 *     the INITIAL of one instance (mech_abi.h); the engine queues and delivers them. */
#include <string.h>

#include "nmodl/nmodl_gen.h"

#define emit nm_gen_emit

void nm_gen_current_accumulate(gen *g, const char *const *cur, int n_cur, const char *in)
{
    const hb_nmodl_mechanism_t *m = g->m;
    const char *p = g->prefix;
    const int point = m->kind != HB_NMODL_DENSITY;
    /* r, the lane's index in the rows' arrays, is the kernel's (nmodl_gen_c.c) */
    if (point) /* NEURON's 1.e2/(_nd_area): nA and uS as mA/cm2 and S/cm2 of the row */
        emit(g, "%s            const double sc = 1e2 / blk->area[j * blk->width + k];\n", in);
    const char *times = point ? " * sc" : "";
    if (g->numeric_didv) {
        /* NEURON's nrn_cur: the currents at v + 0.001, then at v (the state kept) */
        emit(g, "%s            %s_vars_t s1;\n%s            %s_load(blk, j, k, &s1);\n", in, p, in, p);
        emit(g, "%s            s1.v = s.v + 0.001;\n%s            %s_currents(&s1);\n", in, in, p);
        emit(g, "%s            const double i1 = ", in);
        for (int i = 0; i < n_cur; i++) emit(g, "%ss1.%s", i ? " + " : "", cur[i]);
        emit(g, "%s;\n%s            const double i0 = ", n_cur ? "" : "0.0", in);
        for (int i = 0; i < n_cur; i++) emit(g, "%ss.%s", i ? " + " : "", cur[i]);
        emit(g, "%s;\n", n_cur ? "" : "0.0");
        emit(g, "%s            blk->rhs[r] += i0%s;\n", in, times);
        emit(g, "%s            blk->d[r] += ((i1 - i0) / 0.001)%s;\n", in, times);
    } else {
        emit(g, "%s            blk->rhs[r] += ", in);
        if (point && n_cur > 1) emit(g, "(");
        for (int i = 0; i < n_cur; i++) emit(g, "%ss.%s", i ? " + " : "", cur[i]);
        emit(g, "%s%s%s;\n%s            blk->d[r] += ", n_cur ? "" : "0.0",
             point && n_cur > 1 ? ")" : "", times, in);
        if (point && n_cur > 1) emit(g, "(");
        for (int i = 0; i < n_cur; i++) emit(g, "%ss.g_%s", i ? " + " : "", cur[i]);
        emit(g, "%s%s%s;\n", n_cur ? "" : "0.0", point && n_cur > 1 ? ")" : "", times);
    }
    for (int i = 0; i < m->n_ions; i++)
        for (int j = 0; j < m->ions[i].n_write; j++) {
            const char *v = m->ions[i].write[j];
            if (!nm_gen_ion_current(v, m->ions[i].name)) continue;
            emit(g, "%s            if (acc & %uu) {\n", in, 1u << i);
            emit(g, "%s                blk->ion[%d].i[r] += s.%s%s;\n", in, i, v, times);
            if (g->numeric_didv)
                emit(g, "%s                blk->ion[%d].didv[r] += ((s1.%s - s.%s) / 0.001)%s;\n",
                     in, i, v, v, times);
            else
                emit(g, "%s                blk->ion[%d].didv[r] += s.g_%s%s;\n", in, i, v, times);
            emit(g, "%s            }\n", in);
        }
}

unsigned nm_gen_current_ions(const hb_nmodl_mechanism_t *m)
{
    unsigned mask = 0;
    for (int i = 0; i < m->n_ions; i++)
        for (int j = 0; j < m->ions[i].n_write; j++)
            if (nm_gen_ion_current(m->ions[i].write[j], m->ions[i].name)) mask |= 1u << i;
    return mask;
}

/* One NET_RECEIVE function: the arguments from the weight vector, the body (or its INITIAL),
 * the arguments back. */
static void emit_receive_function(gen *g, const nm_block *b, const nm_node *body,
                                  const char *name)
{
    const char *p = g->prefix;
    const int n = b->args ? b->args->n_kids : 0;
    emit(g, "HB_HOSTDEV void %s_%s(const hb_cat_block_t *blk,\n    %s_vars_t *s, double *w)\n{\n",
         p, name, p);
    for (int i = 0; i < n; i++)
        emit(g, "    double a_%s = w[%d];\n", b->args->kids[i]->name, i);
    g->block = b;
    g->receive_init = body != b->body;
    if (body) nm_gen_block(g, body, 1);
    g->block = NULL;
    g->receive_init = 0;
    for (int i = 0; i < n; i++) emit(g, "    w[%d] = a_%s;\n", i, b->args->kids[i]->name);
    emit(g, "    (void)blk;\n    (void)s;\n    (void)w;\n}\n\n");
}

static void emit_receive_kernel(gen *g, const char *function, const char *kernel)
{
    const char *p = g->prefix;
    emit(g,
         "HB_HOSTDEV void %s_%s(const hb_cat_block_t *blk, int j, int k, double *weight, "
         "double t)\n{\n",
         p, kernel);
    emit(g, "    %s_vars_t s;\n    %s_load(blk, j, k, &s);\n", p, p);
    emit(g, "    s.t = t;\n    s.flag = 0.0;\n");
    emit(g, "    %s_%s(blk, &s, weight);\n    %s_store(blk, j, k, &s);\n}\n\n", p, function, p);
}

static void emit_watch_value(gen *g, const nm_node *cond);

/* The WATCH statements under n, in order. */
static void collect_watches(const nm_node *n, const nm_node **out, int *count)
{
    if (n->kind == S_WATCH) {
        if (*count < 256) out[(*count)++] = n;
        return;
    }
    for (int i = 0; i < n->n_kids; i++)
        if (n->kids[i]) collect_watches(n->kids[i], out, count);
}

void nm_gen_net_receive(gen *g)
{
    const nm_block *b = nm_gen_find_kind(g->c, B_NET_RECEIVE);
    if (!b) return;
    const nm_node *init = NULL;
    for (int i = 0; i < b->body->n_kids; i++)
        if (b->body->kids[i]->kind == S_INITIAL) init = b->body->kids[i]->kids[0];
    emit(g, "\n/* NET_RECEIVE: one event of weight vector w (NET_RECEIVE's arguments, written "
            "back) */\n");
    emit_receive_function(g, b, b->body, "net_receive");
    emit(g, "/* NET_RECEIVE's INITIAL: a connection's state at initialisation */\n");
    emit_receive_function(g, b, init, "net_init");
    emit_receive_kernel(g, "net_receive", "net_receive_kernel");
    emit_receive_kernel(g, "net_init", "net_init_kernel");
    if (!g->m->self_events) return;
    const char *p = g->prefix;
    emit(g, "/* NET_RECEIVE of an event of flag `flag` with its requests (mech_abi.h) */\n"
            "HB_HOSTDEV void %s_net_receive_self_kernel(const hb_cat_block_t *blk, int j, int k, "
            "double *weight,\n%*sdouble t, double flag, hb_cat_sends_t *out)\n{\n",
         p, (int)strlen(p) + 35, "");
    emit(g, "    %s_vars_t s = HB_ZERO_INIT;\n    %s_load(blk, j, k, &s);\n", p, p);
    emit(g, "    s.t = t;\n    s.flag = flag;\n    s.sends = out;\n");
    emit(g, "    %s_net_receive(blk, &s, weight);\n    %s_store(blk, j, k, &s);\n}\n\n", p, p);
    emit(g, "/* INITIAL of instance j of lane k with its net_send requests */\n"
            "HB_HOSTDEV void %s_init_self_kernel(const hb_cat_block_t *blk, int j, int k, "
            "hb_cat_sends_t *out)\n{\n", p);
    emit(g, "    %s_vars_t s = HB_ZERO_INIT;\n    %s_load(blk, j, k, &s);\n", p, p);
    for (int i = 0; i < g->m->n_watch; i++) /* no WATCH active before NET_RECEIVE activates it */
        emit(g, "    s.watch_on_%d = s.watch_above_%d = s.watch_flag_%d = 0.0;\n", i, i, i);
    emit(g, "    s.sends = out;\n    %s_initial(&s);\n    %s_store(blk, j, k, &s);\n}\n\n", p,
         p);
    if (!g->m->n_watch) return;
    /* the conditions after a step (NEURON's WatchCondition::check at fixed step: a condition
     * above 0 that was not sends its flag at t; at or below 0 it is not above) */
    const nm_node *w[256];
    int n_w = 0;
    collect_watches(b->body, w, &n_w);
    emit(g, "/* WATCH: the active conditions at t, a crossing a self-event of its flag at t */\n"
            "HB_HOSTDEV void %s_watch_check(%s_vars_t *s)\n{\n", p, p);
    g->block = b;
    for (int q = 0; q < n_w; q++)
        for (int c = 0; c + 1 < w[q]->n_kids; c += 2) {
            const int i = (int)w[q]->num + c / 2;
            const nm_node *cond = w[q]->kids[c];
            for (int a = 0; b->args && a < b->args->n_kids; a++)
                if (nm_gen_mentions(cond, b->args->kids[a]->name))
                    nm_error(g->c, cond->line, cond->column,
                             "this WATCH condition reads NET_RECEIVE's argument %s, which is a "
                             "connection's; expected a condition of the mechanism's variables",
                             b->args->kids[a]->name);
            emit(g, "    if (s->watch_on_%d != 0.0) {\n        if (", i);
            emit_watch_value(g, cond);
            emit(g, " > 0.0) {\n            if (s->watch_above_%d == 0.0) {\n"
                    "                s->watch_above_%d = 1.0;\n"
                    "                (void)%s_self_event(s, s->t, s->watch_flag_%d, 0);\n"
                    "            }\n        } else {\n            s->watch_above_%d = 0.0;\n"
                    "        }\n    }\n", i, i, p, i, i);
        }
    g->block = NULL;
    emit(g, "    (void)s;\n}\n\n");
    emit(g, "HB_HOSTDEV void %s_watch_kernel(const hb_cat_block_t *blk, int j, int k, double t, "
            "hb_cat_sends_t *out)\n{\n", p);
    emit(g, "    %s_vars_t s = HB_ZERO_INIT;\n    %s_load(blk, j, k, &s);\n", p, p);
    emit(g, "    s.t = t;\n    s.sends = out;\n    %s_watch_check(&s);\n"
            "    %s_store(blk, j, k, &s);\n}\n\n", p, p);
}

/* WATCH (a > b) as a - b, (a < b) as b - a: NEURON's value, crossing 0 upwards. */
static void emit_watch_value(gen *g, const nm_node *cond)
{
    const int greater = cond->op == '>';
    emit(g, "((");
    nm_gen_expr(g, cond->kids[greater ? 0 : 1]);
    emit(g, ") - (");
    nm_gen_expr(g, cond->kids[greater ? 1 : 0]);
    emit(g, "))");
}

void nm_gen_watch(gen *g, const nm_node *s, int depth)
{
    if (!g->block || g->block->kind != B_NET_RECEIVE || g->receive_init)
        nm_error(g->c, s->line, s->column,
                 "WATCH in NET_RECEIVE's INITIAL is not supported; expected it in NET_RECEIVE");
    nm_gen_indent(g, depth);
    emit(g, "if (s->watch_rm == 0.0) { /* the call's first WATCH: the others off */\n");
    for (int i = 0; i < g->m->n_watch; i++) {
        nm_gen_indent(g, depth + 1);
        emit(g, "s->watch_on_%d = 0.0;\n", i);
    }
    nm_gen_indent(g, depth);
    emit(g, "}\n");
    for (int c = 0; c + 1 < s->n_kids; c += 2) {
        const int i = (int)s->num + c / 2;
        nm_gen_indent(g, depth);
        emit(g, "s->watch_rm += 1.0;\n");
        nm_gen_indent(g, depth);
        emit(g, "s->watch_on_%d = 1.0;\n", i);
        nm_gen_indent(g, depth);
        emit(g, "s->watch_flag_%d = ", i);
        nm_gen_expr(g, s->kids[c + 1]);
        emit(g, ";\n");
        nm_gen_indent(g, depth); /* NEURON's activate: above when value >= -hoc_epsilon */
        emit(g, "s->watch_above_%d = (double)(", i);
        emit_watch_value(g, s->kids[c]);
        emit(g, " >= -1e-11);\n");
    }
}

void nm_gen_self_event_helper(gen *g)
{
    const char *p = g->prefix;
    emit(g, "/* net_send and net_move: a request of the engine's (mech_abi.h, hb_cat_sends_t), at "
            "time [ms] */\n"
            "HB_HOSTDEV double %s_self_event(%s_vars_t *s, double time, double flag, int move)\n"
            "{\n    if (!s->sends) return 0.0;\n"
            "    if (s->sends->n < HB_CAT_MAX_SENDS) {\n"
            "        hb_cat_send_t *r = &s->sends->req[s->sends->n];\n"
            "        r->time = time;\n        r->flag = flag;\n        r->move = move;\n    }\n"
            "    s->sends->n++;\n    return 0.0;\n}\n\n",
         p, p);
}

/* net_event(tt): a spike of the instance at tt (move 2), in NET_RECEIVE alone, as nocmodl
 * allows it; the engine refuses a time other than the event's (docs/network.md). */
static void net_event_call(gen *g, const nm_node *call)
{
    const nm_block *b = g->block;
    if (g->m->kind == HB_NMODL_DENSITY)
        nm_error(g->c, call->line, call->column,
                 "net_event in a density mechanism: a spike comes from a point process; "
                 "expected it in a POINT_PROCESS's NET_RECEIVE");
    if (!(b && b->kind == B_NET_RECEIVE && !g->receive_init))
        nm_error(g->c, call->line, call->column,
                 "net_event in %s%s%s is not supported; expected it in NET_RECEIVE (nocmodl: "
                 "\"net_event only allowed in NET_RECEIVE block\")",
                 !b                         ? "this block"
                 : b->kind == B_NET_RECEIVE ? "NET_RECEIVE's INITIAL"
                 : b->kind == B_PROCEDURE   ? "PROCEDURE "
                 : b->kind == B_FUNCTION    ? "FUNCTION "
                 : b->kind == B_INITIAL     ? "INITIAL"
                 : b->kind == B_BREAKPOINT  ? "BREAKPOINT"
                                            : "",
                 b && (b->kind == B_PROCEDURE || b->kind == B_FUNCTION) && b->name ? b->name : "",
                 "");
    if (call->n_kids != 1)
        nm_error(g->c, call->line, call->column,
                 "net_event takes 1 argument; expected net_event(t)");
    emit(g, "%s_self_event(s, ", g->prefix);
    nm_gen_expr(g, call->kids[0]);
    emit(g, ", 0.0, 2)");
}

void nm_gen_self_event_call(gen *g, const nm_node *call)
{
    if (strcmp(call->name, "net_event") == 0) {
        net_event_call(g, call);
        return;
    }
    const int send = strcmp(call->name, "net_send") == 0;
    const nm_block *b = g->block;
    if (g->m->kind == HB_NMODL_DENSITY)
        nm_error(g->c, call->line, call->column,
                 "%s in a density mechanism: a self-event goes to a point process's instance; "
                 "expected it in a POINT_PROCESS's NET_RECEIVE%s",
                 call->name, send ? " or INITIAL" : "");
    const int in_receive = b && b->kind == B_NET_RECEIVE && !g->receive_init;
    const int in_initial = b && b->kind == B_INITIAL;
    if (!(in_receive || (send && in_initial)))
        nm_error(g->c, call->line, call->column,
                 "%s in %s%s%s is not supported; expected it in NET_RECEIVE%s (NEURON's "
                 "self-events: docs/mechanisms.md, section 10)",
                 call->name,
                 !b                              ? "this block"
                 : b->kind == B_NET_RECEIVE      ? "NET_RECEIVE's INITIAL"
                 : b->kind == B_PROCEDURE        ? "PROCEDURE "
                 : b->kind == B_FUNCTION         ? "FUNCTION "
                                                 : "",
                 b && b->kind != B_NET_RECEIVE && b->name ? b->name : "",
                 "", send ? " or the mechanism's INITIAL" : "");
    if (call->n_kids != (send ? 2 : 1))
        nm_error(g->c, call->line, call->column, "%s takes %s; expected %s", call->name,
                 send ? "2 arguments" : "1 argument",
                 send ? "net_send(delay, flag)" : "net_move(time)");
    emit(g, "%s_self_event(s, ", g->prefix);
    if (send) {
        emit(g, "s->t + (");
        nm_gen_expr(g, call->kids[0]);
        emit(g, "), ");
        nm_gen_expr(g, call->kids[1]);
        emit(g, ", 0)");
    } else {
        nm_gen_expr(g, call->kids[0]);
        emit(g, ", 1.0, 1)");
    }
}

/* NEURON's FOR_NETCONS: the body once per connection, its arguments bound to that connection's
 * weight vector (read, and written back after the body). NET_RECEIVE's own arguments are the
 * event's connection's vector, as in NEURON: that vector is written before its turn in the
 * loop and read again after it, so the loop and NET_RECEIVE see one vector. */
void nm_gen_for_netcons(gen *g, const nm_node *s, int depth)
{
    const nm_node *args = s->kids[0], *own = g->block->args;
    const int n = args->n_kids;
    nm_gen_indent(g, depth);
    emit(g, "for (int nc = blk->netcon_w ? blk->netcon_first : -1; nc >= 0; "
            "nc = blk->netcon_next[nc]) {\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "double *const wc = blk->netcon_w + (size_t)nc * HB_CAT_MAX_WEIGHT;\n");
    nm_gen_indent(g, depth + 1);
    emit(g, "if (wc == w) {");
    for (int i = 0; i < n; i++) emit(g, " w[%d] = a_%s;", i, own->kids[i]->name);
    emit(g, " }\n");
    const int mark = g->n_locals;
    for (int i = 0; i < n; i++) {
        nm_gen_indent(g, depth + 1);
        emit(g, "double lv_%s = wc[%d];\n", args->kids[i]->name, i);
        nm_gen_push_local(g, args->kids[i]->name);
    }
    nm_gen_block(g, s->kids[1], depth + 1);
    g->n_locals = mark;
    for (int i = 0; i < n; i++) {
        nm_gen_indent(g, depth + 1);
        emit(g, "wc[%d] = lv_%s;\n", i, args->kids[i]->name);
    }
    nm_gen_indent(g, depth + 1);
    emit(g, "if (wc == w) {");
    for (int i = 0; i < n; i++) emit(g, " a_%s = w[%d];", own->kids[i]->name, i);
    emit(g, " }\n");
    nm_gen_indent(g, depth);
    emit(g, "}\n");
}

/* The RANDOM r that a random_* call names first, or an error. */
static const char *random_of(gen *g, const nm_node *call)
{
    const hb_nmodl_mechanism_t *m = g->m;
    if (call->n_kids >= 1 && call->kids[0]->kind == N_NAME)
        for (int i = 0; i < m->n_randoms; i++)
            if (strcmp(m->randoms[i], call->kids[0]->name) == 0) return m->randoms[i];
    nm_error(g->c, call->line, call->column,
             "%s needs a RANDOM variable first; expected NEURON { RANDOM name } and "
             "%s(name, ...)",
             call->name, call->name);
}

/* A draw is hb_philox_draw(seed id1, gid id2, stream 2^31 + id3, index = the position) (the
 * mechanisms' streams apart from the network's, common/philox.h), then the position + 1:
 * the same numbers on any rank, thread or backend, whatever the order of other draws. */
void nm_gen_random_call(gen *g, const nm_node *call)
{
    const char *r = random_of(g, call);
    const int n = call->n_kids;
    if (strcmp(call->name, "random_uniform") == 0 && (n == 1 || n == 3)) {
        if (n == 3) {
            emit(g, "(");
            nm_gen_expr(g, call->kids[1]);
            emit(g, " + (");
            nm_gen_expr(g, call->kids[2]);
            emit(g, " - ");
            nm_gen_expr(g, call->kids[1]);
            emit(g, ") * ");
        }
        emit(g, "%s_random_uniform(&s->%s, s->%s_id1, s->%s_id2, s->%s_id3)", g->prefix, r, r, r,
             r);
        if (n == 3) emit(g, ")");
        return;
    }
    if (strcmp(call->name, "random_setseq") == 0 && n == 2) {
        emit(g, "(s->%s = ", r);
        nm_gen_expr(g, call->kids[1]);
        emit(g, ", 0.0)");
        return;
    }
    if (strcmp(call->name, "random_setids") == 0 && n == 4) {
        emit(g, "(s->%s_id1 = ", r);
        nm_gen_expr(g, call->kids[1]);
        emit(g, ", s->%s_id2 = ", r);
        nm_gen_expr(g, call->kids[2]);
        emit(g, ", s->%s_id3 = ", r);
        nm_gen_expr(g, call->kids[3]);
        emit(g, ", s->%s = 0.0, 0.0)", r);
        return;
    }
    nm_error(g->c, call->line, call->column,
             "%s with %d arguments is not generated; expected random_uniform(r), "
             "random_uniform(r, a, b), random_setseq(r, n) or random_setids(r, id1, id2, id3)",
             call->name, n);
}
