/*
 * Membrane mechanisms as NEURON 8.2 defines them: pas and hh.mod (rates with
 * vtrap, q10 = 3^((celsius - 6.3)/10), TABLE over -100..100 mV in 1 mV steps).
 * The formulas and the table are the code generated from hh.mod (common/builtin/, through
 * common/sim_step.h's hb_hh_rates_at, shared with the GPU).
 */
#include <math.h>
#include <string.h>

#include "sim/sim.h"

void hb_mech_default(hb_mech_kind_t kind, hb_mech_t *mech)
{
    if (!mech) return;
    memset(mech, 0, sizeof *mech);
    mech->kind = kind;
    mech->g_pas = 0.001;
    mech->e_pas = -70.0;
    mech->gnabar = 0.12;
    mech->gkbar = 0.036;
    mech->gl = 0.0003;
    mech->el = -54.3;
    mech->ena = 50.0;
    mech->ek = -77.0;
}

const char *hb_mech_name(hb_mech_kind_t kind)
{
    switch (kind) {
    case HB_MECH_PAS: return "pas";
    case HB_MECH_HH: return "hh";
    }
    return "?";
}

void hb_hh_rates(double v, double celsius, double inf[3], double tau_ms[3])
{
    hb_hh_rates_at(v, hb_hh_q10(celsius), NULL, inf, tau_ms);
}

void hb_hh_table_init(hb_hh_table_t *table, double celsius, int use_table)
{
    table->use_table = use_table;
    table->celsius = celsius;
    table->q10 = hb_hh_q10(celsius);
    hbg_default_hh_vars_t s;
    memset(&s, 0, sizeof s);
    s.celsius = celsius;
    hbg_default_hh_table_rates(&s, table->table);
}

void hb_hh_table_rates(const hb_hh_table_t *table, double v, double inf[3], double tau_ms[3])
{
    hb_hh_rates_at(v, table->q10, table->use_table ? table->table : NULL, inf, tau_ms);
}
