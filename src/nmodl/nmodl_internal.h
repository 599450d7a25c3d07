/* The NMODL front end's own parts: an arena, the tokens, the syntax tree and the first error.
 * Every allocation of one parse lives in its arena, so an error can leave by longjmp from any
 * depth and free everything at once. */
#ifndef HB_NMODL_INTERNAL_H
#define HB_NMODL_INTERNAL_H

#include <setjmp.h>
#include <stddef.h>
#include <stdio.h>

#include "common/status.h"
#include "nmodl/nmodl.h"

typedef struct nm_chunk nm_chunk;
typedef struct {
    nm_chunk *head;
} nm_arena;

/* ---- tokens ---- */
typedef enum { TK_EOF, TK_NAME, TK_NUMBER, TK_STRING, TK_VERBATIM, TK_OP } nm_tok_kind;
enum {
    OP_LE = 256, /* <= */
    OP_GE,       /* >= */
    OP_EQ,       /* == */
    OP_NE,       /* != */
    OP_AND,      /* && */
    OP_OR,       /* || */
    OP_REACT,    /* <-> */
    OP_FLUX,     /* << */
    OP_ARROW     /* -> */
};

typedef struct {
    nm_tok_kind kind;
    int op;            /* TK_OP: a character or OP_* */
    const char *text;  /* NUL-terminated copy: the name, number, string or VERBATIM body */
    double number;     /* TK_NUMBER */
    size_t offset;     /* of the token's first byte in the source */
    int line, column;  /* 1-based */
    int units_off;     /* inside UNITSOFF ... UNITSON */
    int space_before;  /* white space or a comment precedes it */
} nm_token;

/* ---- the syntax tree ---- */
typedef enum {
    /* expressions */
    N_NUM,    /* num; unit when followed by one: 0.062 (/mV) */
    N_NAME,   /* name; kids[0]: the index of name[i] */
    N_CALL,   /* name; kids: arguments */
    N_STRING, /* name: the text */
    N_UNARY,  /* op '-' or '!'; kids[0] */
    N_BINARY, /* op; kids[0], kids[1] */
    N_LIST,   /* kids */
    /* statements */
    S_ASSIGN,      /* kids[0] N_NAME, kids[1] value */
    S_DERIV,       /* name' = kids[0] */
    S_CALL,        /* kids[0] N_CALL */
    S_IF,          /* kids: condition, then S_BLOCK, else S_BLOCK or S_IF (optional) */
    S_WHILE,       /* kids: condition, S_BLOCK */
    S_FROM,        /* name; kids: from, to, S_BLOCK */
    S_LOCAL,       /* kids: N_NAME */
    S_TABLE,       /* kids: N_LIST names, N_LIST depend, from, to, with */
    S_SOLVE,       /* name; method; steadystate */
    S_REACT,       /* op: OP_REACT, OP_FLUX, OP_ARROW; kids: N_LIST left, N_LIST right, rates */
    S_CONSERVE,    /* kids: left, right */
    S_COMPARTMENT, /* name: the index or NULL; kids: volume, N_LIST states */
    S_LINEQ,       /* ~ left = right; kids: left, right */
    S_VERBATIM,    /* name: the C text */
    S_BLOCK,       /* kids: statements */
    S_INITIAL,     /* NET_RECEIVE's INITIAL; kids[0] S_BLOCK */
    S_WATCH        /* WATCH (a > b) flag, ...: kids: condition, flag, condition, flag ... */
} nm_node_kind;

typedef struct nm_node nm_node;
struct nm_node {
    nm_node_kind kind;
    int op;
    int line, column;
    int units_off;
    const char *name;
    const char *unit;   /* N_NUM's unit; NULL when none */
    const char *method; /* S_SOLVE */
    int steadystate;    /* S_SOLVE */
    double num;         /* N_NUM; a reaction term's coefficient */
    nm_node **kids;
    int n_kids, cap_kids;
};

/* A declaration of PARAMETER, STATE, ASSIGNED, CONSTANT, a UNITS constant or an argument. */
typedef enum { D_PARAMETER, D_STATE, D_ASSIGNED, D_CONSTANT, D_UNITS_CONSTANT } nm_decl_kind;
typedef struct {
    nm_decl_kind kind;
    hb_nmodl_var_t var;
    int array; /* name[n]: n, else 0 */
} nm_decl;

typedef enum {
    B_INITIAL, B_BREAKPOINT, B_DERIVATIVE, B_KINETIC, B_LINEAR, B_NONLINEAR, B_PROCEDURE,
    B_FUNCTION, B_NET_RECEIVE
} nm_block_kind;

typedef struct {
    nm_block_kind kind;
    const char *name;
    int line, column;
    nm_node *args; /* N_LIST of N_NAME (unit in ->unit) */
    const char *unit;
    nm_node *body; /* S_BLOCK */
} nm_block;

/* A name list entry of the NEURON block, with where it was written. */
typedef struct {
    const char *name;
    int line, column;
} nm_ident;

typedef struct {
    nm_ident name;
    nm_ident *read, *write;
    int n_read, n_write;
    double valence;
    int has_valence;
} nm_ion;

/* A user unit of the UNITS block: (name) = (definition). */
typedef struct {
    const char *name, *definition;
    int line, column;
} nm_unit_def;

#define NM_GROW(arena, array, n, cap) nm_grow((arena), (void **)&(array), (n), &(cap), sizeof *(array))

typedef struct {
    const char *path;
    const char *src;
    size_t length;
    nm_arena arena;
    jmp_buf fail;
    char message[1024];
    nm_token *tokens;
    int n_tokens, cap_tokens;
    int pos; /* the parser's next token */
    int depth;

    /* what the parser found */
    const char *title;
    nm_ident mech_name;
    int kind, has_kind; /* hb_nmodl_kind_t */
    int neuron_line, neuron_column, has_neuron;
    nm_ion *ions;
    int n_ions, cap_ions;
    nm_ident *range, *globals, *pointers, *nonspecific, *electrode;
    int n_range, cap_range, n_globals, cap_globals, n_pointers, cap_pointers;
    int n_nonspecific, cap_nonspecific, n_electrode, cap_electrode;
    nm_ident *randoms; /* NEURON 9's RANDOM: a counter-based stream per instance */
    int n_randoms, cap_randoms;
    int threadsafe;
    nm_decl *decls;
    int n_decls, cap_decls;
    nm_block *blocks;
    int n_blocks, cap_blocks;
    nm_unit_def *units;
    int n_units, cap_units;
    nm_node **verbatims; /* every VERBATIM, wherever it is */
    int n_verbatims, cap_verbatims;
    nm_ident independent;
} nm_ctx;

/* The arena. */
void *nm_alloc(nm_ctx *c, size_t size);
char *nm_strndup(nm_ctx *c, const char *s, size_t n);
char *nm_printf(nm_ctx *c, const char *format, ...) HB_PRINTF(2, 3);
void nm_grow(nm_ctx *c, void **array, int n, int *cap, size_t size);
void nm_arena_free(nm_arena *a);

/* Records "PATH:LINE:COLUMN: message" and leaves by longjmp(c->fail). */
_Noreturn void nm_error(nm_ctx *c, int line, int column, const char *format, ...) HB_PRINTF(4, 5);

/* The lexer: fills c->tokens (the last is TK_EOF). */
void nm_lex(nm_ctx *c);
/* The parser: fills the context's declarations, NEURON block and blocks. */
void nm_parse(nm_ctx *c);
/* Semantic checks, then the mechanism's interface, allocated in the arena. */
hb_nmodl_mechanism_t *nm_check(nm_ctx *c);

/* The code generator run as a check (nmodl_gen_c.c): NULL when it translates the
 * mechanism, else its FILE:LINE:COLUMN message. */
const char *nm_generator_check(nm_ctx *c, const hb_nmodl_mechanism_t *m);
/* The C generator (nmodl_gen_c.c): mechanism m's header of kernels, names prefixed `prefix`,
 * to out (a failure longjmps with its FILE:LINE:COLUMN message). */
void nm_emit(nm_ctx *c, const hb_nmodl_mechanism_t *m, const char *prefix, FILE *out);

/* ---- units (nmodl_units.c) ---- */
/* The dimension of a unit: exponents of m, kg, s, A, K (mole is a number, as in NEURON's
 * units table) and whether it is known. */
#define NM_DIMS 5
typedef struct {
    int known;
    signed char e[NM_DIMS];
} nm_dim;

/* Parses a unit text ("mA/cm2", "/ms", "1", "milli/liter") against the builtin table and the
 * UNITS block's definitions; errors at line:column when a name is unknown. */
nm_dim nm_unit_dim(nm_ctx *c, const char *text, int line, int column);
int nm_dim_equal(nm_dim a, nm_dim b);
const char *nm_dim_string(nm_ctx *c, nm_dim d);

#endif
