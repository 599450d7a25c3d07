/*
 * Membrane mechanisms as NEURON 8.2 defines them: pas and hh.mod (rates with
 * vtrap, q10 = 3^((celsius - 6.3)/10), TABLE over -100..100 mV in 1 mV steps).
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

/* hh.mod's vtrap(x, y): x / (exp(x/y) - 1) with the removable singularity. */
static double vtrap(double x, double y)
{
    if (fabs(x / y) < 1e-6) return y * (1.0 - x / y / 2.0);
    return x / (exp(x / y) - 1.0);
}

void hb_hh_rates(double v, double celsius, double inf[3], double tau_ms[3])
{
    const double q10 = pow(3.0, (celsius - 6.3) / 10.0);
    double alpha[3], beta[3];
    alpha[0] = 0.1 * vtrap(-(v + 40.0), 10.0); /* m */
    beta[0] = 4.0 * exp(-(v + 65.0) / 18.0);
    alpha[1] = 0.07 * exp(-(v + 65.0) / 20.0); /* h */
    beta[1] = 1.0 / (exp(-(v + 35.0) / 10.0) + 1.0);
    alpha[2] = 0.01 * vtrap(-(v + 55.0), 10.0); /* n */
    beta[2] = 0.125 * exp(-(v + 65.0) / 80.0);
    for (int k = 0; k < 3; k++) {
        double sum = alpha[k] + beta[k];
        tau_ms[k] = 1.0 / (q10 * sum);
        inf[k] = alpha[k] / sum;
    }
}

void hb_hh_table_init(hb_hh_table_t *table, double celsius, int use_table)
{
    table->use_table = use_table;
    table->celsius = celsius;
    if (!use_table) return;
    const double dx = (HB_HH_TABLE_MAX - HB_HH_TABLE_MIN) / (HB_HH_TABLE_N - 1);
    double x = HB_HH_TABLE_MIN; /* accumulated as nocmodl's code does (dx = 1 is exact) */
    for (int i = 0; i < HB_HH_TABLE_N; i++, x += dx) {
        double inf[3], tau[3];
        hb_hh_rates(x, celsius, inf, tau);
        for (int k = 0; k < 3; k++) {
            table->inf[k][i] = inf[k];
            table->tau[k][i] = tau[k];
        }
    }
}

void hb_hh_table_rates(const hb_hh_table_t *table, double v, double inf[3], double tau_ms[3])
{
    if (!table->use_table) {
        hb_hh_rates(v, table->celsius, inf, tau_ms);
        return;
    }
    const double xi = (HB_HH_TABLE_N - 1) / (HB_HH_TABLE_MAX - HB_HH_TABLE_MIN) *
                      (v - HB_HH_TABLE_MIN);
    int i;
    double theta;
    if (!(xi > 0.0)) { /* also NaN, which then propagates through the caller's v */
        i = 0;
        theta = 0.0;
    } else if (xi >= HB_HH_TABLE_N - 1) {
        i = HB_HH_TABLE_N - 1;
        theta = 0.0;
    } else {
        i = (int)xi;
        theta = xi - (double)i;
    }
    for (int k = 0; k < 3; k++) {
        if (theta == 0.0) {
            inf[k] = table->inf[k][i];
            tau_ms[k] = table->tau[k][i];
        } else {
            inf[k] = table->inf[k][i] + theta * (table->inf[k][i + 1] - table->inf[k][i]);
            tau_ms[k] = table->tau[k][i] + theta * (table->tau[k][i + 1] - table->tau[k][i]);
        }
    }
}
