/* The C code generator's shared state and helpers, in floors (each file calls only those
 * below it): nmodl_gen_emit.c the writers (text, expressions, lookups); nmodl_gen_walk.c the
 * statement walk; nmodl_gen_solve.c the SOLVE methods past cnexp's (inf - x)/tau (other linear
 * cnexp, derivimplicit, KINETIC sparse, LINEAR) and nmodl_gen_point.c point processes
 * (NET_RECEIVE, the current as a density of the row) and NEURON's numerical di/dv, both on the
 * walk; nmodl_gen_c.c the mechanism, on all of them. Where the walk and the expressions need
 * the parts above them (SOLVE inside INITIAL, FROM loops, RANDOM's draw) they call gen.hooks,
 * which nmodl_gen_c.c fills. */
#ifndef HB_NMODL_GEN_H
#define HB_NMODL_GEN_H

#include "common/mech_abi.h"
#include "nmodl/nmodl_internal.h"

typedef struct gen gen;

/* The walk's and the expressions' calls into nmodl_gen_solve.c and nmodl_gen_point.c. */
typedef struct {
    int (*initial_solve)(gen *g, const nm_node *s, int depth);  /* nm_gen_initial_solve */
    int (*statement_more)(gen *g, const nm_node *s, int depth); /* nm_gen_statement_more */
    void (*random_call)(gen *g, const nm_node *call);           /* nm_gen_random_call */
    void (*for_netcons)(gen *g, const nm_node *s, int depth);   /* nm_gen_for_netcons */
    void (*self_event_call)(gen *g, const nm_node *call);       /* nm_gen_self_event_call */
    void (*watch)(gen *g, const nm_node *s, int depth);         /* nm_gen_watch */
} nm_gen_hooks;

struct gen {
    nm_ctx *c;
    const hb_nmodl_mechanism_t *m;
    FILE *out;             /* NULL: a check, nothing written */
    const char *prefix;    /* "hbg_hh" */
    const nm_block *block; /* being written */
    const char **locals;   /* LOCALs and loop variables in scope */
    int n_locals, cap_locals;
    const nm_node *deriv_block; /* the DERIVATIVE the BREAKPOINT solves */
    int numeric_didv;      /* 1: some current is not G*(v - E): NEURON's difference */
    const char *const *deriv_states; /* derivimplicit: x' = e writes f_[index of x] */
    int n_deriv_states;
    int no_fold;           /* 1: constant expressions written as the .mod has them */
    int receive_init;      /* 1: writing NET_RECEIVE's INITIAL (g->block the NET_RECEIVE) */
    int from_loops;        /* 1: the mechanism has FROM loops (the vars keep blk->fault) */
    const char *rate_inverse[16]; /* cnexp taus written with their inverse (nm_gen_inverse) */
    int n_rate_inverse;
    struct { const nm_node *first, *second; } exp_pair[8]; /* nmodl_gen_walk.c: find_exp_pairs */
    int n_exp_pair;
    nm_gen_hooks hooks;
};

/* ---- nmodl_gen_emit.c: the writers ---- */
void nm_gen_emit(gen *g, const char *format, ...) HB_PRINTF(2, 3);
void nm_gen_put(gen *g, const char *text);
void nm_gen_expr(gen *g, const nm_node *n);
void nm_gen_name(gen *g, const nm_node *n); /* a LOCAL, an argument, fv or s->NAME */
void nm_gen_number(gen *g, double x);
void nm_gen_indent(gen *g, int depth);
void nm_gen_push_local(gen *g, const char *name);
const nm_block *nm_gen_find_block(const nm_ctx *c, const char *name);
const nm_block *nm_gen_find_kind(const nm_ctx *c, nm_block_kind kind);
int nm_gen_mentions(const nm_node *n, const char *name);
/* Whether statement s of FUNCTION or PROCEDURE b is hoisted: a top-level assignment of a LOCAL,
 * its only one, from celsius alone (hh's q10 = 3^((celsius - 6.3)/10)). Its value is then
 * computed once per celsius into the vars (<prefix>_celsius, which the load and the TABLE's
 * fill call) and the assignment reads it: the same expression, so the same bits. */
int nm_gen_hoisted(const nm_ctx *c, const nm_block *b, const nm_node *s);
/* 1/e written without a division where e is a constant, 1/x, a product or quotient of such
 * factors and other expressions (`(1/(a + b))/qt` as `qt * (a + b)`), or a LOCAL invariant
 * (a constant or celsius alone: `1.0 / lv_qt`, hoisted by the C compiler); 0 (nothing written)
 * otherwise. write 0: only the answer. */
int nm_gen_inverse(gen *g, const nm_node *e, int write);
/* Whether ASSIGNED `name` is a cnexp tau written with its inverse: each assignment also sets
 * s->hbr_<name>, and the update reads hb_exp(-dt * s->hbr_<name>) (docs/nmodl.md, section 5). */
int nm_gen_rate_inverse(const gen *g, const char *name);
/* Whether `name` is an argument of the block being written (g->block). */
int nm_gen_is_arg(const gen *g, const char *name);
/* Whether the block being written runs every step: not INITIAL, not a FUNCTION or PROCEDURE
 * with a TABLE (run when the table is filled). */
int nm_gen_runs_every_step(const gen *g);
/* How many statements in n assign `name`. */
int nm_gen_assignments(const nm_node *n, const char *name);
/* The statement assigning LOCAL `name` of FUNCTION or PROCEDURE b when it is the only
 * assignment and a top-level one, else NULL. */
const nm_node *nm_gen_local_assignment(const nm_block *b, const char *name);
/* Whether USEION variable v is ion x's current, i<x> ("ina" of na). */
int nm_gen_ion_current(const char *v, const char *x);
/* What USEION variable v of ion x is, as a HB_ION_* bit of common/mech_abi.h: E (e<x>),
 * I (i<x>), else a concentration, CI where v ends in i, CO otherwise. */
unsigned nm_gen_ion_role(const char *v, const char *x);
int nm_gen_in_list(const char *const *list, int n, const char *name);
/* Whether `name` is a variable of one of m's USEIONs: one it READs (ion_reads), or READs or
 * WRITEs (ion_var). */
int nm_gen_ion_reads(const hb_nmodl_mechanism_t *m, const char *name);
int nm_gen_ion_var(const hb_nmodl_mechanism_t *m, const char *name);

/* ---- nmodl_gen_walk.c: the statements ---- */
void nm_gen_block(gen *g, const nm_node *b, int depth);
void nm_gen_statement(gen *g, const nm_node *s, int depth);
/* Whether `name` is a current the mechanism writes (an ion's i<x>, a NONSPECIFIC_CURRENT). */
int nm_gen_is_current(const gen *g, const char *name);

/* ---- nmodl_gen_solve.c ---- */
/* The update of a DERIVATIVE's x' = f, f linear in x but not (inf - x)/tau: NEURON's cnexp,
 * x += (1 - exp(dt b)) (-a/b - x) with b = df/dx and a = f at x = 0 (both as trees of the
 * .mod's expression, simplified only by exact rules: x + 0, x * 1, 0 * x ...). */
void nm_gen_cnexp_linear(gen *g, const nm_node *s);
/* The states function's body for SOLVE b METHOD derivimplicit or sparse, or a PROCEDURE. */
void nm_gen_solve_states(gen *g, const hb_nmodl_solve_t *solve);
/* SOLVE inside INITIAL (a LINEAR block, KINETIC STEADYSTATE sparse, a PROCEDURE); 0 when it
 * is not one of those. */
int nm_gen_initial_solve(gen *g, const nm_node *s, int depth);
/* Statements the first part does not write: FROM loops; 0 when not one of them. */
int nm_gen_statement_more(gen *g, const nm_node *s, int depth);
/* Helpers the generated header needs once (the linear solver), before the mechanism's code. */
void nm_gen_solve_helpers(gen *g);

/* ---- nmodl_gen_point.c ---- */
/* NET_RECEIVE as `<prefix>_net_receive_kernel(blk, j, k, weight, t)` and its INITIAL as
 * `<prefix>_net_init_kernel`; nothing for a mechanism without NET_RECEIVE. */
void nm_gen_net_receive(gen *g);
/* FOR_NETCONS (args) { body } in NET_RECEIVE: the body once per connection to the instance
 * (blk->netcon_first, blk->netcon_next), the arguments that connection's weight vector. */
void nm_gen_for_netcons(gen *g, const nm_node *s, int depth);
/* The current kernel's conductance and current into d and rhs for instance j, lane k (the
 * loaded vars in `s`, its rows' index `r`): analytic or NEURON's difference, scaled by 1e2/area
 * for points, and into each written species' i and di/dv where the kernel's `acc` has its bit;
 * each line indented by `in` more. */
void nm_gen_current_accumulate(gen *g, const char *const *cur, int n_cur, const char *in);
/* Bit i set where the mechanism writes the current of its species i (USEION order): the
 * current kernel's `acc` bits, each species' i and di/dv accumulated only where set. */
unsigned nm_gen_current_ions(const hb_nmodl_mechanism_t *m);
/* random_uniform(r[, a, b]), random_setseq(r, n), random_setids(r, i1, i2, i3) of a RANDOM r:
 * the draw of a Philox stream per instance (docs/nmodl.md, section 2). */
void nm_gen_random_call(gen *g, const nm_node *call);
/* net_send(delay, flag) and net_move(tt) of a point process that sends itself events
 * (m->self_events): a request into the vars' sends (<prefix>_self_event, hb_cat_sends_t);
 * elsewhere an error at the call naming where they are allowed. */
void nm_gen_self_event_call(gen *g, const nm_node *call);
/* <prefix>_self_event, after the vars' typedef, for a mechanism with self-events. */
void nm_gen_self_event_helper(gen *g);
/* A WATCH statement in NET_RECEIVE: its conditions activated (NEURON's _nrn_watch_activate:
 * the call's first activation deactivates the instance's others). */
void nm_gen_watch(gen *g, const nm_node *s, int depth);

#endif
