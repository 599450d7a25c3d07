/*
 * Membrane mechanisms as NEURON 8.2 defines them: pas and hh.mod (rates with
 * vtrap, q10 = 3^((celsius - 6.3)/10), TABLE over -100..100 mV in 1 mV steps).
 * The formulas and the table lookup are in src/common/sim_step.h (shared with the GPU).
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
    hb_hh_formulas(v, pow(3.0, (celsius - 6.3) / 10.0), inf, tau_ms);
}

void hb_hh_table_init(hb_hh_table_t *table, double celsius, int use_table)
{
    table->use_table = use_table;
    table->celsius = celsius;
    table->q10 = pow(3.0, (celsius - 6.3) / 10.0);
    const double dx = (HB_HH_TABLE_MAX - HB_HH_TABLE_MIN) / (HB_HH_TABLE_N - 1);
    double x = HB_HH_TABLE_MIN; /* accumulated as nocmodl's code does (dx = 1 is exact) */
    for (int i = 0; i < HB_HH_TABLE_N; i++, x += dx) {
        double inf[3], tau[3];
        hb_hh_formulas(x, table->q10, inf, tau);
        for (int k = 0; k < 3; k++) {
            table->table[k * HB_HH_TABLE_STRIDE + i] = inf[k];
            table->table[(k + 3) * HB_HH_TABLE_STRIDE + i] = tau[k];
        }
    }
    for (int k = 0; k < 6; k++) /* the repeated end entry */
        table->table[k * HB_HH_TABLE_STRIDE + HB_HH_TABLE_N] =
            table->table[k * HB_HH_TABLE_STRIDE + HB_HH_TABLE_N - 1];
}

void hb_hh_table_rates(const hb_hh_table_t *table, double v, double inf[3], double tau_ms[3])
{
    if (table->use_table) hb_hh_table_lookup(table->table, v, inf, tau_ms);
    else hb_hh_formulas(v, table->q10, inf, tau_ms);
}
