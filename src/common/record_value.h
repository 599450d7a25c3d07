/*
 * A recorded value (a network's "record" section, docs/network.md section 8): what one sample
 * of it reads, resolved once on the host from the layout (src/sim/mech_vars.c), and the one
 * function both backends evaluate it with, so that the GPU records the CPU's bits. Currents
 * and conductances are computed at sample time from v and the states by the generated code the
 * step runs (hbg_default_hh_currents, hb_pas_current, hb_syn_current: common/sim_step.h).
 *
 * Plain C11 and CUDA C (HB_HOSTDEV from src/common/hostdev.h).
 */
#ifndef HB_COMMON_RECORD_VALUE_H
#define HB_COMMON_RECORD_VALUE_H

#include <stddef.h>

#include "common/sim_step.h"

/* What a sample computes (the kinds of src/sim/mech_vars.c's table). */
typedef enum {
    HB_REC_V = 0,       /* v [mV] */
    HB_REC_HH_STATE,    /* an hh gate (m, h, n) */
    HB_REC_SYN_STATE,   /* a synapse's state value (ExpSyn g; Exp2Syn A, B) [uS] */
    HB_REC_HH_GNA,      /* gnabar m^3 h [S/cm^2] */
    HB_REC_HH_GK,       /* gkbar n^4 [S/cm^2] */
    HB_REC_HH_INA,      /* gna (v - ena) [mA/cm^2] */
    HB_REC_HH_IK,       /* gk (v - ek) [mA/cm^2] */
    HB_REC_HH_IL,       /* gl (v - el) [mA/cm^2] */
    HB_REC_PAS_I,       /* g (v - e) [mA/cm^2] */
    HB_REC_SYN_G,       /* a synapse's conductance [uS] */
    HB_REC_SYN_I,       /* g (v - e) [nA] */
    HB_REC_HOST,        /* a catalogue mechanism's field or an ion's value, read at `at` (the
                           host layout's address; the GPU engine's set_records maps it to the
                           device's copy) */
    HB_REC_KINDS
} hb_rec_kind_t;

/* One recorded value of one cell: elements of its group's arrays and the constants it needs. */
typedef struct {
    int kind;      /* hb_rec_kind_t */
    int group;     /* the simulation's group */
    int syn_kind;  /* HB_SYN_EXP or HB_SYN_EXP2 (synapse kinds) */
    size_t v;      /* element of the group's v */
    size_t state;  /* element of hh_state (the instance's m) or syn_state (the first value) */
    size_t stride; /* between the state's values (h after m, B after A) */
    double g;      /* gnabar, gkbar, gl [S/cm^2] (hh) or g [S/cm^2] (pas) */
    double e;      /* the reversal [mV] (ena, ek, el, pas e, the synapse's e) */
    const double *at; /* HB_REC_HOST: the value's address */
} hb_rec_sample_t;

/* The value of `r` now, from its group's v, hh_state and syn_state. */
HB_HOSTDEV double hb_rec_value(const hb_rec_sample_t *r, const double *v, const double *hh,
                               const double *syn)
{
    switch (r->kind) {
    case HB_REC_HOST: return *r->at;
    case HB_REC_HH_STATE: return hh[r->state];
    case HB_REC_SYN_STATE: return syn[r->state];
    case HB_REC_HH_GNA:
    case HB_REC_HH_INA:
    case HB_REC_HH_GK:
    case HB_REC_HH_IK:
    case HB_REC_HH_IL: { /* the generated hh's currents, the parameter and reversal asked for */
        hbg_default_hh_vars_t x = HB_ZERO_INIT;
        x.v = v[r->v];
        x.m = hh[r->state];
        x.h = hh[r->state + r->stride];
        x.n = hh[r->state + 2 * r->stride];
        x.gnabar = x.gkbar = x.gl = r->g;
        x.ena = x.ek = x.el = r->e;
        hbg_default_hh_currents(&x);
        return r->kind == HB_REC_HH_GNA   ? x.gna
               : r->kind == HB_REC_HH_INA ? x.ina
               : r->kind == HB_REC_HH_GK  ? x.gk
               : r->kind == HB_REC_HH_IK  ? x.ik
                                          : x.il;
    }
    case HB_REC_PAS_I: {
        double i, g;
        hb_pas_current(v[r->v], r->g, r->e, &i, &g);
        return i;
    }
    case HB_REC_SYN_G:
    case HB_REC_SYN_I: {
        double i, g;
        hb_syn_current(r->syn_kind, r->e, syn[r->state],
                       r->syn_kind == HB_SYN_EXP2 ? syn[r->state + r->stride] : 0.0, v[r->v], &i,
                       &g);
        return r->kind == HB_REC_SYN_G ? g : i;
    }
    default: return v[r->v];
    }
}

#endif
