/* The NMODL front end: reads a .mod file, checks it and describes the mechanism's interface.
 *
 * A floor of its own (docs/architecture.md): it includes nothing of the project's but
 * common/status.h. Errors are reported through hb_fail as "FILE:LINE:COLUMN: what is wrong;
 * expected ..." (docs/nmodl.md lists what is checked). */
#ifndef HB_NMODL_NMODL_H
#define HB_NMODL_NMODL_H

#include <stddef.h>
#include <stdio.h>

#include "hinesbatch.h"

typedef enum {
    HB_NMODL_DENSITY,   /* SUFFIX: per unit membrane area */
    HB_NMODL_POINT,     /* POINT_PROCESS: one instance at a point */
    HB_NMODL_ARTIFICIAL /* ARTIFICIAL_CELL: a point process outside the cable */
} hb_nmodl_kind_t;

/* A declared variable: PARAMETER, STATE, ASSIGNED or CONSTANT. */
typedef struct {
    const char *name;
    const char *unit; /* as written between the parentheses, "" when none */
    double value;     /* the default, where has_value */
    double lo, hi;    /* <lo,hi>, where has_limits */
    int has_value, has_limits;
    int line, column;
} hb_nmodl_var_t;

/* USEION name READ ... WRITE ... VALENCE z. */
typedef struct {
    const char *name;
    const char **read, **write; /* names as written, e.g. "ena", "ina", "cai" */
    int n_read, n_write;
    double valence; /* where has_valence */
    int has_valence;
} hb_nmodl_ion_t;

/* SOLVE block [METHOD m | STEADYSTATE m] of BREAKPOINT or INITIAL. */
typedef struct {
    const char *block;
    const char *block_kind; /* "DERIVATIVE", "KINETIC", "LINEAR", "PROCEDURE" */
    const char *method;     /* "" when none */
    const char *caller;     /* "BREAKPOINT" or "INITIAL" ... */
    int steadystate;
} hb_nmodl_solve_t;

/* A top-level block that has a name: DERIVATIVE, KINETIC, LINEAR, PROCEDURE, FUNCTION. */
typedef struct {
    const char *kind;
    const char *name;
    int n_args;
    int line;
} hb_nmodl_block_t;

/* One KINETIC reaction or CONSERVE, written out canonically: "c1 <-> c2 (kf1, kb1)",
 * "ca << (flux)", "CONSERVE c1 + c2 + o = 1". */
typedef struct {
    const char *block;
    const char *text;
} hb_nmodl_reaction_t;

typedef struct {
    const char *path;
    const char *title; /* "" when none */
    const char *name;  /* SUFFIX, POINT_PROCESS or ARTIFICIAL_CELL */
    hb_nmodl_kind_t kind;
    hb_nmodl_var_t *parameters, *states, *assigned, *constants;
    int n_parameters, n_states, n_assigned, n_constants;
    const char **range, **globals, **pointers, **nonspecific;
    int n_range, n_globals, n_pointers, n_nonspecific;
    /* RANDOM (NEURON 9): each a Philox stream per instance, its position kept as the ASSIGNED
     * of that name and its ids as the fields <name>_id1, _id2, _id3 (docs/nmodl.md) */
    const char **randoms;
    int n_randoms;
    hb_nmodl_ion_t *ions;
    int n_ions;
    hb_nmodl_solve_t *solves;
    int n_solves;
    hb_nmodl_block_t *blocks;
    int n_blocks;
    hb_nmodl_reaction_t *reactions;
    int n_reactions;
    const char **net_receive_args; /* NET_RECEIVE's arguments: the weight first */
    int n_net_receive_args;        /* -1 without NET_RECEIVE */
    int for_netcons;               /* 1: NET_RECEIVE loops over its instance's connections */
    int self_events; /* 1: calls net_send, net_move or net_event, has WATCH or FOR_NETCONS (its
                      * events go the self-events' way, docs/mechanisms.md sec. 10) */
    int net_event;   /* 1: NET_RECEIVE calls net_event (its spikes reach the cell's connections;
                      * delivered as the self-events' requests) */
    int n_watch;     /* WATCH conditions in NET_RECEIVE (each clause of each WATCH statement) */
    int has_initial, has_breakpoint, threadsafe;
    int n_verbatim; /* VERBATIM blocks: C code the generator cannot translate */
    /* Why this version's code generator (hb_nmodl_emit_c) cannot translate the mechanism:
     * a VERBATIM block first, else its first refusal, as "FILE:LINE:COLUMN: ...; expected
     * ..."; "" when it translates it. */
    const char *generator_blocker;
} hb_nmodl_mechanism_t;

/* Parses and checks `text` (length bytes, not necessarily NUL-terminated) read from `path`
 * (used in messages only). On failure *out is NULL and hb_last_error() says
 * "PATH:LINE:COLUMN: what is wrong; expected ...". */
hb_status_t hb_nmodl_parse(const char *path, const char *text, size_t length,
                           hb_nmodl_mechanism_t **out);
/* Reads the file at `path`, then hb_nmodl_parse. */
hb_status_t hb_nmodl_read(const char *path, hb_nmodl_mechanism_t **out);
/* Accepts NULL. */
void hb_nmodl_destroy(hb_nmodl_mechanism_t *mech);

/* The C code generator (docs/mechanisms.md): writes to `out` one header of HB_HOSTDEV
 * functions for the mechanism of `text`, names prefixed with `prefix` ("hbg_hh"): its
 * variables' struct, FUNCTIONs and PROCEDUREs, INITIAL, currents with their conductance, the
 * cnexp update, and the init, current and state kernels of common/mech_abi.h. Density
 * mechanisms solved by cnexp only, yet; anything else is an HB_ERR_PARSE error at its
 * FILE:LINE:COLUMN. */
hb_status_t hb_nmodl_emit_c(const char *path, const char *text, size_t length, const char *prefix,
                            FILE *out);

/* A catalogue of mechanisms (docs/mechanisms.md, section 7). */
typedef struct {
    const char *name;      /* the catalogue's name: "bbp", MODDIR's base name */
    const char *symbol;    /* the function the catalogue's C defines: "hb_catalogue_v1" */
    const char *generator; /* hb_catalogue_t's generator text: "hinesbatch 0.1.0 nmodl <hash>" */
    int strict; /* 1: a file the generator cannot translate is an error; 0: it is left out */
    int cuda;   /* 1: also hbg_<id>_cuda.cu, the CUDA kernels' host launchers (hb_cat_cuda_t),
                 * which the descriptors then name (users' catalogues; the built-ins: fused) */
} hb_nmodl_catalogue_opts_t;

/* The C of a catalogue from the .mod files at paths[0..n_paths) (taken in the byte order of
 * the paths, which the generated comments name as given), into the folder `dir`:
 * hbg_<id>_<mech>.h (each mechanism's kernels, hb_nmodl_emit_c's), hbg_<id>_dispatch.h (the
 * kernels by mechanism index) and hbg_<id>_catalogue.c (the hb_cat_mech_t of every mechanism
 * and `const hb_catalogue_t *<symbol>(void)`), with <id> the name as a C identifier. Files
 * left out (not strict) are listed with the reason in hbg_<id>_catalogue.c's comment. A bad
 * file: HB_ERR_PARSE with its "FILE:LINE:COLUMN: ..." message. With opts->cuda, also
 * hbg_<id>_cuda.cu: per mechanism __global__ wrappers of its init, current and state kernels
 * (a thread a hb_cat_lane_t) and their launchers, the table hbgc_<id>_cuda[] (hidden). */
hb_status_t hb_nmodl_emit_catalogue(const hb_nmodl_catalogue_opts_t *opts,
                                    const char *const *paths, int n_paths, const char *dir);

/* Looks a variable up by name in an array of n; NULL when absent. */
const hb_nmodl_var_t *hb_nmodl_find(const hb_nmodl_var_t *vars, int n, const char *name);

#endif
