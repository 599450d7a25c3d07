/* The NMODL front end (src/nmodl/): every committed .mod file parses and describes the
 * mechanism it is known to be; bad inputs give their exact FILE:LINE:COLUMN message; every
 * prefix of a real file fails cleanly or parses. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "nmodl/nmodl.h"

#define MECH_DIR HB_SOURCE_DIR "/mechanisms"

static hb_nmodl_mechanism_t *load(const char *relative)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", MECH_DIR, relative);
    hb_nmodl_mechanism_t *m = NULL;
    const hb_status_t status = hb_nmodl_read(path, &m);
    CHECKF(status == HB_SUCCESS && m, "%s: %s", relative, hb_last_error());
    return m;
}

static int has_name(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

static const hb_nmodl_ion_t *ion(const hb_nmodl_mechanism_t *m, const char *name)
{
    for (int i = 0; i < m->n_ions; i++)
        if (strcmp(m->ions[i].name, name) == 0) return &m->ions[i];
    return NULL;
}

/* The ion `name` is used with exactly these READ and WRITE lists (space-separated). */
static int ion_is(const hb_nmodl_mechanism_t *m, const char *name, const char *read,
                  const char *write)
{
    const hb_nmodl_ion_t *x = ion(m, name);
    if (!x) return 0;
    char text[256] = "";
    for (int i = 0; i < x->n_read; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? " " : "", x->read[i]);
    if (strcmp(text, read) != 0) return 0;
    text[0] = '\0';
    for (int i = 0; i < x->n_write; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? " " : "",
                 x->write[i]);
    return strcmp(text, write) == 0;
}

static int param_is(const hb_nmodl_mechanism_t *m, const char *name, double value, const char *unit)
{
    const hb_nmodl_var_t *p = hb_nmodl_find(m->parameters, m->n_parameters, name);
    return p && p->has_value && p->value == value && strcmp(p->unit, unit) == 0;
}

static int states_are(const hb_nmodl_mechanism_t *m, const char *list)
{
    char text[512] = "";
    for (int i = 0; i < m->n_states; i++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%s%s", i ? " " : "",
                 m->states[i].name);
    return strcmp(text, list) == 0;
}

static int solves(const hb_nmodl_mechanism_t *m, const char *block, const char *kind,
                  const char *method)
{
    for (int i = 0; i < m->n_solves; i++)
        if (strcmp(m->solves[i].block, block) == 0 && strcmp(m->solves[i].block_kind, kind) == 0 &&
            strcmp(m->solves[i].method, method) == 0 && !m->solves[i].steadystate)
            return 1;
    return 0;
}

static int has_reaction(const hb_nmodl_mechanism_t *m, const char *text)
{
    for (int i = 0; i < m->n_reactions; i++)
        if (strcmp(m->reactions[i].text, text) == 0) return 1;
    return 0;
}

static void test_nrn(void)
{
    hb_nmodl_mechanism_t *m = load("nrn/hh.mod");
    if (m) {
        CHECK(strcmp(m->name, "hh") == 0 && m->kind == HB_NMODL_DENSITY);
        CHECK(states_are(m, "m h n"));
        CHECK(param_is(m, "gnabar", 0.12, "S/cm2") && param_is(m, "gkbar", 0.036, "S/cm2"));
        CHECK(param_is(m, "gl", 0.0003, "S/cm2") && param_is(m, "el", -54.3, "mV"));
        const hb_nmodl_var_t *g = hb_nmodl_find(m->parameters, m->n_parameters, "gnabar");
        CHECK(g && g->has_limits && g->lo == 0 && g->hi == 1e9);
        CHECK(ion_is(m, "na", "ena", "ina") && ion_is(m, "k", "ek", "ik") && m->n_ions == 2);
        CHECK(ion(m, "na")->valence == 1 && ion(m, "k")->valence == 1);
        CHECK(m->n_nonspecific == 1 && strcmp(m->nonspecific[0], "il") == 0);
        CHECK(m->n_solves == 1 && solves(m, "states", "DERIVATIVE", "cnexp"));
        CHECK(has_name(m->globals, m->n_globals, "minf") &&
              has_name(m->globals, m->n_globals, "ntau"));
        CHECK(has_name(m->range, m->n_range, "gna") && m->threadsafe);
        CHECK(m->n_net_receive_args == -1 && m->has_initial && m->has_breakpoint);
        int rates = 0, vtrap = 0;
        for (int i = 0; i < m->n_blocks; i++) {
            rates += !strcmp(m->blocks[i].name, "rates") &&
                     !strcmp(m->blocks[i].kind, "PROCEDURE") && m->blocks[i].n_args == 1;
            vtrap += !strcmp(m->blocks[i].name, "vtrap") &&
                     !strcmp(m->blocks[i].kind, "FUNCTION") && m->blocks[i].n_args == 2;
        }
        CHECK(rates == 1 && vtrap == 1);
        CHECK(strcmp(m->generator_blocker, "") == 0 && m->n_verbatim == 0);
        CHECK(strstr(m->title, "squid sodium, potassium, and leak channels") != NULL);
    }
    hb_nmodl_destroy(m);

    m = load("nrn/passive.mod");
    if (m) {
        CHECK(strcmp(m->name, "pas") == 0 && m->kind == HB_NMODL_DENSITY && m->n_states == 0);
        CHECK(param_is(m, "g", 0.001, "S/cm2") && param_is(m, "e", -70, "mV"));
        CHECK(m->n_ions == 0 && m->n_nonspecific == 1 && strcmp(m->nonspecific[0], "i") == 0);
        CHECK(m->n_solves == 0);
    }
    hb_nmodl_destroy(m);

    m = load("nrn/expsyn.mod");
    if (m) {
        CHECK(strcmp(m->name, "ExpSyn") == 0 && m->kind == HB_NMODL_POINT);
        CHECK(states_are(m, "g") && strcmp(m->states[0].unit, "uS") == 0);
        CHECK(param_is(m, "tau", 0.1, "ms") && param_is(m, "e", 0, "mV"));
        CHECK(m->n_net_receive_args == 1 && strcmp(m->net_receive_args[0], "weight") == 0);
        CHECK(solves(m, "state", "DERIVATIVE", "cnexp"));
        CHECKF(m->generator_blocker[0] == 0, "%s", m->generator_blocker);
    }
    hb_nmodl_destroy(m);

    m = load("nrn/exp2syn.mod");
    if (m) {
        CHECK(strcmp(m->name, "Exp2Syn") == 0 && m->kind == HB_NMODL_POINT && states_are(m, "A B"));
        CHECK(param_is(m, "tau1", 0.1, "ms") && param_is(m, "tau2", 10, "ms") &&
              param_is(m, "e", 0, "mV"));
        CHECK(m->n_net_receive_args == 1 && solves(m, "state", "DERIVATIVE", "cnexp"));
    }
    hb_nmodl_destroy(m);
}

static void test_bbp(void)
{
    hb_nmodl_mechanism_t *m = load("bbp/CaDynamics_E2.mod");
    if (m) {
        CHECK(strcmp(m->name, "CaDynamics_E2") == 0 && ion_is(m, "ca", "ica", "cai"));
        CHECK(ion(m, "ca")->valence == 2 && states_are(m, "cai"));
        CHECK(param_is(m, "decay", 80, "ms") && solves(m, "states", "DERIVATIVE", "cnexp"));
        CHECKF(m->generator_blocker[0] == 0, "%s", m->generator_blocker);
    }
    hb_nmodl_destroy(m);
    m = load("bbp/Ih.mod");
    if (m) {
        CHECK(m->n_ions == 0 && m->n_nonspecific == 1 && strcmp(m->nonspecific[0], "ihcn") == 0);
        CHECK(param_is(m, "ehcn", -45, "mV") && states_are(m, "m"));
    }
    hb_nmodl_destroy(m);
    m = load("bbp/SK_E2.mod");
    if (m) {
        CHECK(ion_is(m, "k", "ek", "ik") && ion_is(m, "ca", "cai", "") && states_are(m, "z"));
    }
    hb_nmodl_destroy(m);
    m = load("bbp/NaTs2_t.mod");
    if (m)
        CHECK(ion_is(m, "na", "ena", "ina") && states_are(m, "m h") &&
              solves(m, "states", "DERIVATIVE", "cnexp"));
    hb_nmodl_destroy(m);
    m = load("bbp/Ca_HVA.mod");
    if (m) { /* RANGE gCa_HVA declared nowhere else: an implicit ASSIGNED, as NEURON makes it */
        CHECK(ion_is(m, "ca", "eca", "ica") &&
              hb_nmodl_find(m->assigned, m->n_assigned, "gCa_HVA"));
    }
    hb_nmodl_destroy(m);
    m = load("bbp/original/ProbAMPANMDA_EMS.mod"); /* BBP's file, unchanged */
    if (m) {
        CHECK(m->kind == HB_NMODL_POINT && states_are(m, "A_AMPA B_AMPA A_NMDA B_NMDA"));
        CHECK(m->n_net_receive_args == 5 && strcmp(m->net_receive_args[0], "weight") == 0);
        CHECK(has_name(m->pointers, m->n_pointers, "rng") &&
              has_name(m->pointers, m->n_pointers, "delay_times"));
        CHECK(m->n_verbatim > 5 && solves(m, "state", "PROCEDURE", ""));
        CHECKF(strstr(m->generator_blocker,
                      "/mechanisms/bbp/original/ProbAMPANMDA_EMS.mod:99:1: VERBATIM (C code "
                      "inside NMODL) is not supported by the code generator; expected NMODL "
                      "statements only"),
               "%s", m->generator_blocker);
        CHECK(param_is(m, "tau_d_NMDA", 43, "ms") && param_is(m, "NMDA_ratio", 0.71, "1"));
    }
    hb_nmodl_destroy(m);
    m = load("bbp/ProbAMPANMDA_EMS.mod"); /* the port: RANDOM instead of VERBATIM */
    if (m) {
        CHECK(m->kind == HB_NMODL_POINT && states_are(m, "A_AMPA B_AMPA A_NMDA B_NMDA"));
        CHECK(m->n_net_receive_args == 5 && m->n_verbatim == 0 && m->n_pointers == 0);
        CHECK(m->n_randoms == 1 && strcmp(m->randoms[0], "rng") == 0);
        CHECKF(m->generator_blocker[0] == 0, "%s", m->generator_blocker);
        CHECK(param_is(m, "tau_d_NMDA", 43, "ms") && param_is(m, "NMDA_ratio", 0.71, "1"));
    }
    hb_nmodl_destroy(m);
}

static void test_allen(void)
{
    hb_nmodl_mechanism_t *m = load("allen/NaV.mod");
    if (m) {
        CHECK(ion_is(m, "na", "ena", "ina") && solves(m, "activation", "KINETIC", "sparse"));
        CHECK(states_are(m, "C1 C2 C3 C4 C5 I1 I2 I3 I4 I5 O I6"));
        CHECK(has_reaction(m, "C1 <-> C2 (f01, b01)") && has_reaction(m, "O <-> I6 (fin, bin)"));
        CHECK(has_reaction(m, "C5 <-> I5 (fi5, bi5)"));
        CHECK(has_reaction(
            m, "CONSERVE C1 + C2 + C3 + C4 + C5 + O + I1 + I2 + I3 + I4 + I5 + I6 = 1"));
        int kinetic = 0;
        for (int i = 0; i < m->n_reactions; i++)
            kinetic += strcmp(m->reactions[i].block, "activation") == 0;
        CHECK(kinetic == 17); /* 16 reactions and CONSERVE */
    }
    hb_nmodl_destroy(m);
    m = load("allen/CaDynamics.mod");
    if (m) CHECK(ion_is(m, "ca", "ica", "cai") && states_are(m, "cai"));
    hb_nmodl_destroy(m);
    m = load("allen/Ih.mod");
    if (m) CHECK(m->n_nonspecific == 1 && strcmp(m->nonspecific[0], "ihcn") == 0);
    hb_nmodl_destroy(m);
}

/* Constructs the catalogues do not use, in one synthetic file: ARTIFICIAL_CELL, INDEPENDENT,
 * CONSTANT, UNITS constants, COMPARTMENT, '<<' and stoichiometry, LINEAR, FROM and while loops,
 * NET_RECEIVE's INITIAL, STEADYSTATE, else if, unit factors in expressions. */
static void test_constructs(void)
{
    static const char text[] =
        "TITLE synthetic\n"
        "NEURON { ARTIFICIAL_CELL Cell USEION ca READ cao WRITE cai VALENCE 2 RANGE k1 GLOBAL vol "
        "}\n"
        "UNITS { (mM) = (milli/liter) (um) = (micron) FARADAY = (faraday) (coulomb) PI = (pi) (1) "
        "}\n"
        "INDEPENDENT { t FROM 0 TO 1 WITH 1 (ms) }\n"
        "CONSTANT { volo = 1 (liter) }\n"
        "PARAMETER { k1 = 5e-3 (/ms) <0, 1e3> vol = 2 (um3) }\n"
        "ASSIGNED { cao (mM) x y }\n"
        "STATE { cai (mM) a (mM) b (mM) c }\n"
        "INITIAL { SOLVE eq STEADYSTATE sparse  SOLVE lin }\n"
        "KINETIC eq {\n"
        "  COMPARTMENT vol*1(um) { cai a }\n"
        "  COMPARTMENT i, volo*(1e15) { b }\n"
        "  ~ cai << (k1*0.5 (mM/ms))\n"
        "  ~ 2 cai + a <-> b (k1, k1*2)\n"
        "  CONSERVE a + b = 1\n"
        "}\n"
        "LINEAR lin { ~ c = 1 }\n"
        "PROCEDURE loops() { LOCAL n\n"
        "  FROM i = 0 TO 3 { n = n + i }\n"
        "  while (n > 0) { n = n - 1 }\n"
        "  if (n < 0) { x = 1 } else if (n > 2) { x = 2 } else { x = 3 }\n"
        "}\n"
        "NET_RECEIVE (w, last (ms)) { INITIAL { last = t } y = w + t - last }\n";
    hb_nmodl_mechanism_t *m = NULL;
    CHECKF(hb_nmodl_parse("synthetic.mod", text, strlen(text), &m) == HB_SUCCESS, "%s",
           hb_last_error());
    if (!m) return;
    CHECK(strcmp(m->name, "Cell") == 0 && m->kind == HB_NMODL_ARTIFICIAL &&
          strcmp(m->title, "synthetic") == 0);
    CHECK(ion_is(m, "ca", "cao", "cai") && ion(m, "ca")->valence == 2 && ion(m, "ca")->has_valence);
    CHECK(param_is(m, "k1", 5e-3, "/ms") &&
          hb_nmodl_find(m->parameters, m->n_parameters, "k1")->hi == 1e3);
    CHECK(has_name(m->globals, m->n_globals, "vol") && states_are(m, "cai a b c"));
    const hb_nmodl_var_t *f = hb_nmodl_find(m->constants, m->n_constants, "FARADAY");
    CHECK(f && f->value > 96485 && f->value < 96486 && strcmp(f->unit, "coulomb") == 0);
    CHECK(hb_nmodl_find(m->constants, m->n_constants, "volo") != NULL);
    CHECKF(has_reaction(m, "cai << (k1 * 0.5)") && has_reaction(m, "2cai + a <-> b (k1, k1 * 2)") &&
               has_reaction(m, "CONSERVE a + b = 1"),
           "%d reactions: %s", m->n_reactions, m->n_reactions ? m->reactions[0].text : "");
    CHECK(m->n_solves == 2 && m->solves[0].steadystate &&
          strcmp(m->solves[0].method, "sparse") == 0 &&
          strcmp(m->solves[0].caller, "INITIAL") == 0 &&
          strcmp(m->solves[1].block_kind, "LINEAR") == 0);
    CHECK(m->n_net_receive_args == 2 && strcmp(m->net_receive_args[1], "last") == 0);
    CHECK(strstr(m->generator_blocker, "synthetic.mod:") == m->generator_blocker);
    hb_nmodl_destroy(m);
}

/* Every .mod file of every catalogue folder parses; each folder has the count SOURCES.md lists. */
static void test_every_file(void)
{
    /* translatable: what this version's generator writes: all (ProbAMPANMDA_EMS as its port;
     * BBP's original, with VERBATIM, is in bbp/original/) */
    static const struct {
        const char *dir;
        int files, translatable;
    } folders[] = {{"nrn", 4, 4}, {"bbp", 13, 13}, {"allen", 16, 16}, {"bbp/original", 1, 0}};
    for (size_t f = 0; f < sizeof folders / sizeof *folders; f++) {
        char dir[1024];
        snprintf(dir, sizeof dir, "%s/%s", MECH_DIR, folders[f].dir);
        DIR *d = opendir(dir);
        CHECKF(d != NULL, "%s", dir);
        if (!d) continue;
        int n = 0, translatable = 0;
        for (struct dirent *e; (e = readdir(d));) {
            const size_t len = strlen(e->d_name);
            if (len < 5 || strcmp(e->d_name + len - 4, ".mod") != 0) continue;
            char rel[512];
            snprintf(rel, sizeof rel, "%s/%s", folders[f].dir, e->d_name);
            hb_nmodl_mechanism_t *m = load(rel);
            n++;
            translatable += m && !m->generator_blocker[0];
            hb_nmodl_destroy(m);
        }
        closedir(d);
        CHECKF(n == folders[f].files, "%s: %d files", folders[f].dir, n);
        CHECKF(translatable == folders[f].translatable, "%s: %d translatable", folders[f].dir,
               translatable);
    }
}

/* What the code generator refuses, each at its FILE:LINE:COLUMN (the parse itself succeeds:
 * the interface's generator_blocker says why, as build-catalogue --check prints it). */
static void test_generator_refusals(void)
{
#define G_HEAD "NEURON { SUFFIX x }\nSTATE { a b }\n"
    static const struct {
        const char *text, *message;
    } cases[] = {
        {G_HEAD "BREAKPOINT { SOLVE k METHOD sparse }\nKINETIC k { ~ 2a <-> b (1, 1) }\n",
         "bad.mod:4:13: this reaction is not first order; expected one STATE with coefficient 1 "
         "on each side (the code generator writes linear schemes)"},
        {G_HEAD "BREAKPOINT { SOLVE k METHOD sparse }\nKINETIC k { ~ a + b <-> b (1, 1) }\n",
         "bad.mod:4:13: this reaction is not first order; expected one STATE with coefficient 1 "
         "on each side (the code generator writes linear schemes)"},
        {G_HEAD "BREAKPOINT { SOLVE d METHOD cnexp }\nDERIVATIVE d { a' = -a*a }\n",
         "bad.mod:4:16: a' is not linear in a; expected cnexp's x' = a + b*x with a and b free "
         "of x (derivimplicit solves the others)"},
        /* an ARTIFICIAL_CELL has no membrane: ions, currents and v refused by name */
        {"NEURON { ARTIFICIAL_CELL x USEION ca READ cai }\nSTATE { m }\nNET_RECEIVE (w) { m = w }\n",
         "bad.mod:1:35: USEION ca in the ARTIFICIAL_CELL x: an artificial cell has no membrane "
         "and no ions; expected a POINT_PROCESS for a mechanism that uses ions"},
        {"NEURON { ARTIFICIAL_CELL x NONSPECIFIC_CURRENT i }\nASSIGNED { i }\n"
         "BREAKPOINT { i = 0 }\nNET_RECEIVE (w) { }\n",
         "bad.mod:1:48: NONSPECIFIC_CURRENT i in the ARTIFICIAL_CELL x: an artificial cell "
         "carries no current; expected a POINT_PROCESS for a mechanism with a current"},
        {"NEURON { ARTIFICIAL_CELL x }\nSTATE { m }\nNET_RECEIVE (w) { m = w + v }\n",
         "bad.mod:3:27: v in the ARTIFICIAL_CELL x: an artificial cell has no membrane "
         "potential; expected a POINT_PROCESS for a mechanism that reads v"},
        {G_HEAD "BREAKPOINT { SOLVE k METHOD sparse }\nKINETIC k { ~ a <-> b (1, 1)\n CONSERVE "
                "a*b = 1 }\n",
         "bad.mod:5:2: this CONSERVE is not linear in the STATEs; expected a sum of STATEs with "
         "constant coefficients"},
        {G_HEAD "INITIAL { SOLVE l }\nBREAKPOINT { }\nLINEAR l { ~ a + b = 1 }\n",
         "bad.mod:5:8: LINEAR l has 1 equations in 2 STATEs; expected as many equations as "
         "STATEs (1 to 64)"},
        {G_HEAD "INITIAL { SOLVE l }\nBREAKPOINT { }\nLINEAR l { ~ a*b = 1\n ~ a = 2 }\n",
         "bad.mod:5:12: this equation is not linear in a; expected a LINEAR block's equations "
         "linear in its STATEs"},
        {G_HEAD "BREAKPOINT { SOLVE d METHOD euler }\nDERIVATIVE d { a' = -a }\n",
         "bad.mod:3:20: SOLVE d METHOD euler is not generated; expected one SOLVE in "
         "BREAKPOINT, METHOD cnexp, derivimplicit or sparse, or of a PROCEDURE"},
        {G_HEAD "BREAKPOINT { SOLVE k METHOD sparse }\nKINETIC k { COMPARTMENT i, 2 { a }\n ~ a "
                "<-> b (1, 1) }\n",
         "bad.mod:4:13: an indexed COMPARTMENT is not supported by the code generator; expected "
         "COMPARTMENT volume { states }"},
        /* self-events where NEURON refuses them too (nocmodl: "net_send allowed only in
         * INITIAL and NET_RECEIVE blocks"), or which the generator does not write */
        {"NEURON { SUFFIX x }\nASSIGNED { tl }\nINITIAL { net_send(1, 1) }\nBREAKPOINT { }\n",
         "bad.mod:3:11: net_send in a density mechanism: a self-event goes to a point process's "
         "instance; expected it in a POINT_PROCESS's NET_RECEIVE or INITIAL"},
        {"NEURON { POINT_PROCESS s }\nBREAKPOINT { net_send(1, 1) }\nNET_RECEIVE (w) { }\n",
         "bad.mod:2:14: net_send in BREAKPOINT is not supported; expected it in NET_RECEIVE or "
         "the mechanism's INITIAL (NEURON's self-events: docs/mechanisms.md, section 10)"},
        {"NEURON { POINT_PROCESS s }\nBREAKPOINT { }\nPROCEDURE p() { net_send(1, 2) }\n"
         "NET_RECEIVE (w) { p() }\n",
         "bad.mod:3:17: net_send in PROCEDURE p is not supported; expected it in NET_RECEIVE or "
         "the mechanism's INITIAL (NEURON's self-events: docs/mechanisms.md, section 10)"},
        {"NEURON { POINT_PROCESS s }\nINITIAL { net_move(t + 1) }\nBREAKPOINT { }\n"
         "NET_RECEIVE (w) { }\n",
         "bad.mod:2:11: net_move in INITIAL is not supported; expected it in NET_RECEIVE "
         "(NEURON's self-events: docs/mechanisms.md, section 10)"},
        {"NEURON { POINT_PROCESS s }\nBREAKPOINT { }\nNET_RECEIVE (w, n) {\n INITIAL { n = 0 "
         "net_send(0, 1) }\n}\n",
         "bad.mod:4:18: net_send in NET_RECEIVE's INITIAL is not supported; expected it in "
         "NET_RECEIVE or the mechanism's INITIAL (NEURON's self-events: docs/mechanisms.md, "
         "section 10)"},
        {"NEURON { POINT_PROCESS s }\nBREAKPOINT { }\nNET_RECEIVE (w) { WATCH (w > 1) 2 }\n",
         "bad.mod:3:28: this WATCH condition reads NET_RECEIVE's argument w, which is a "
         "connection's; expected a condition of the mechanism's variables"},
        /* net_event outside NET_RECEIVE, as nocmodl refuses it */
        {"NEURON { POINT_PROCESS s }\nBREAKPOINT { net_event(t) }\nNET_RECEIVE (w) { }\n",
         "bad.mod:2:14: net_event in BREAKPOINT is not supported; expected it in NET_RECEIVE "
         "(nocmodl: \"net_event only allowed in NET_RECEIVE block\")"},
        {"NEURON { POINT_PROCESS s }\nBREAKPOINT { }\nNET_RECEIVE (w, n) {\n INITIAL { n = 0 "
         "net_event(t) }\n}\n",
         "bad.mod:4:18: net_event in NET_RECEIVE's INITIAL is not supported; expected it in "
         "NET_RECEIVE (nocmodl: \"net_event only allowed in NET_RECEIVE block\")"},
    };
#undef G_HEAD
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        hb_nmodl_mechanism_t *m = NULL;
        CHECKF(hb_nmodl_parse("bad.mod", cases[i].text, strlen(cases[i].text), &m) ==
                   HB_SUCCESS,
               "case %zu: %s", i, hb_last_error());
        if (!m) continue;
        CHECKF(strcmp(m->generator_blocker, cases[i].message) == 0, "case %zu: %s", i,
               m->generator_blocker);
        /* the generator itself reports the same, with HB_ERR_PARSE */
        FILE *sink = tmpfile();
        CHECK(sink != NULL);
        if (sink) {
            CHECK(hb_nmodl_emit_c("bad.mod", cases[i].text, strlen(cases[i].text), "hbg_bad",
                                  sink) == HB_ERR_PARSE &&
                  strcmp(hb_last_error(), cases[i].message) == 0);
            fclose(sink);
        }
        hb_nmodl_destroy(m);
    }
}

/* The C the generator writes for the .mod text, into code (cap bytes); 0 on failure. */
static int emit_code(const char *file, const char *text, const char *prefix, char *code,
                     size_t cap)
{
    code[0] = 0;
    FILE *sink = tmpfile();
    CHECK(sink != NULL);
    if (!sink) return 0;
    const int ok = hb_nmodl_emit_c(file, text, strlen(text), prefix, sink) == HB_SUCCESS;
    CHECKF(ok, "%s", hb_last_error());
    rewind(sink);
    code[fread(code, 1, cap - 1, sink)] = 0;
    fclose(sink);
    return ok;
}

/* net_send and net_move where NEURON allows them: the mechanism marked (self_events), the
 * generator writes its two kernels with the requests; a mechanism without them has neither. */
static void test_self_events(void)
{
    static const char text[] =
        "NEURON { POINT_PROCESS s }\nASSIGNED { g }\nINITIAL { g = 0 net_send(2, 3) }\n"
        "BREAKPOINT { }\nNET_RECEIVE (w) {\n if (flag == 0) { g = w net_send(1, 1) }\n"
        " else if (flag == 1) { g = 0 } else { net_move(t + 5) }\n"
        " WATCH (v > -20) 4, (-30 < v) 5\n}\n";
    hb_nmodl_mechanism_t *m = NULL;
    CHECKF(hb_nmodl_parse("s.mod", text, strlen(text), &m) == HB_SUCCESS, "%s", hb_last_error());
    if (m) CHECKF(m->self_events == 1 && m->n_watch == 2 && m->generator_blocker[0] == 0,
                  "%d, %d, %s", m->self_events, m->n_watch, m->generator_blocker);
    hb_nmodl_destroy(m);
    static char code[65536];
    if (!emit_code("s.mod", text, "hbg_s", code, sizeof code)) return;
    CHECK(strstr(code, "hbg_s_self_event(s, s->t + (2.0), 3.0, 0)") != NULL);
    CHECK(strstr(code, "hbg_s_self_event(s, s->t + (1.0), 1.0, 0)") != NULL);
    CHECK(strstr(code, "hbg_s_self_event(s, (s->t + 5.0), 1.0, 1)") != NULL);
    CHECK(strstr(code, "void hbg_s_net_receive_self_kernel(") != NULL);
    CHECK(strstr(code, "void hbg_s_init_self_kernel(") != NULL);
    /* WATCH: a - b for a > b, b - a for a < b; activated with its flag, checked after a step */
    CHECK(strstr(code, "s->watch_flag_1 = 5.0;") != NULL);
    CHECK(strstr(code, "if (((s->v) - ((-(20.0)))) > 0.0) {") != NULL);
    CHECK(strstr(code, "if (((s->v) - ((-(30.0)))) > 0.0) {") != NULL);
    CHECK(strstr(code, "void hbg_s_watch_kernel(") != NULL);
    /* net_event(t) in NET_RECEIVE: a spike request (move 2), the mechanism marked net_event */
    static const char fire[] = "NEURON { POINT_PROCESS f }\nBREAKPOINT { }\n"
                               "NET_RECEIVE (w) { if (w > 1) { net_event(t) } }\n";
    CHECK(hb_nmodl_parse("f.mod", fire, strlen(fire), &m) == HB_SUCCESS && m &&
          m->net_event == 1 && m->self_events == 1 && m->generator_blocker[0] == 0);
    hb_nmodl_destroy(m);
    if (!emit_code("f.mod", fire, "hbg_f", code, sizeof code)) return;
    CHECK(strstr(code, "hbg_f_self_event(s, s->t, 0.0, 2)") != NULL);
    CHECK(strstr(code, "void hbg_f_net_receive_self_kernel(") != NULL);
    static const char plain[] = "NEURON { POINT_PROCESS p }\nASSIGNED { g }\nBREAKPOINT { }\n"
                                "NET_RECEIVE (w) { g = w }\n";
    CHECK(hb_nmodl_parse("p.mod", plain, strlen(plain), &m) == HB_SUCCESS && m &&
          m->self_events == 0 && m->net_event == 0);
    hb_nmodl_destroy(m);
    /* FOR_NETCONS with no self-event: the self-event kernels too, whose calls carry the
     * target's connections on every engine (the GPU's rounds, docs/mechanisms.md section 10) */
    static const char loop[] = "NEURON { POINT_PROCESS l }\nASSIGNED { s }\nBREAKPOINT { }\n"
                               "NET_RECEIVE (w) {\n s = 0\n FOR_NETCONS (a) { s = s + a }\n}\n";
    CHECK(hb_nmodl_parse("l.mod", loop, strlen(loop), &m) == HB_SUCCESS && m &&
          m->for_netcons == 1 && m->self_events == 1 && m->net_event == 0 && m->n_watch == 0 &&
          m->generator_blocker[0] == 0);
    hb_nmodl_destroy(m);
    if (!emit_code("l.mod", loop, "hbg_l", code, sizeof code)) return;
    CHECK(strstr(code, "void hbg_l_net_receive_self_kernel(") != NULL);
    CHECK(strstr(code, "void hbg_l_init_self_kernel(") != NULL);
    CHECK(strstr(code, "void hbg_l_net_receive_kernel(") != NULL);
    CHECK(strstr(code, "watch_kernel") == NULL);
}

/* Divisions as reciprocals (docs/nmodl.md, section 5): in code that runs every step, by a
 * constant (folded, exact hex), by a LOCAL constant, by a divisor another numerator shares;
 * a constant quotient, a divisor used once and INITIAL keep the division. */
static void test_reciprocals(void)
{
    static const char text[] =
        "NEURON { SUFFIX r RANGE a, b, c, d, e, f, g }\nPARAMETER { k = 2 }\n"
        "ASSIGNED { v (mV) a b c d e f g }\nSTATE { m }\nINITIAL { e = v / 7 m = 0 }\n"
        "BREAKPOINT { SOLVE states METHOD cnexp }\n"
        "DERIVATIVE states { rates(v) m' = (a - m) / b }\n"
        "PROCEDURE rates(u (mV)) {\n LOCAL q, s\n q = 3\n a = (u + 38) / 6\n s = a + k\n"
        " b = 1 / s\n c = a / s\n d = u / k\n f = (34 - 21) / 10 + u\n g = u / q\n}\n";
    static char code[65536];
    if (!emit_code("r.mod", text, "hbg_r", code, sizeof code)) return;
    CHECK(strstr(code, "s->a = ((a_u + 38.0) * 0x1.5555555555555p-3 /* 1 / 6.0 */);") != NULL);
    CHECK(strstr(code, "s->b = (1.0 / lv_s);") != NULL);
    CHECK(strstr(code, "s->c = (s->a * (1.0 / lv_s));") != NULL);
    CHECK(strstr(code, "s->d = (a_u / s->k);") != NULL);
    CHECK(strstr(code, "s->f = (((34.0 - 21.0) / 10.0) + a_u);") != NULL);
    CHECK(strstr(code, "s->g = (a_u * (1.0 / lv_q));") != NULL);
    CHECK(strstr(code, "s->e = (s->v / 7.0);") != NULL);
}

/* cnexp taus written with their inverse (docs/nmodl.md, section 5): -dt/tau as -dt times
 * an inverse with no division where tau is a plain ASSIGNED whose every assignment is a
 * top-level product or quotient of constants, 1/x and invariant LOCALs; a RANGE tau, one
 * assigned in an if, a sum, one that names an argument elsewhere and a TABLE's keep the
 * division. */
static void test_rate_inverses(void)
{
    static const char text[] =
        "NEURON { SUFFIX q RANGE tr }\nASSIGNED { v (mV) a b inf ta tb tr ti ts tw }\n"
        "STATE { m n o p r u w }\n"
        "INITIAL { rates(v) m = inf n = inf o = inf p = inf r = inf u = inf w = inf }\n"
        "BREAKPOINT { SOLVE states METHOD cnexp }\n"
        "DERIVATIVE states { rates(v)\n m' = (inf - m) / ta\n n' = (inf - n) / tb\n"
        " o' = (inf - o) / tr\n p' = (inf - p) / ti\n r' = (inf - r) / ts\n u' = -u / ta\n"
        " w' = (inf - w) / tw\n}\n"
        "PROCEDURE twice(tw) { tw = 2 / tw }\n"
        "PROCEDURE rates(x (mV)) {\n LOCAL qt\n qt = 3\n a = exp(x / 7)\n b = exp(-x / 9)\n"
        " inf = a / (a + b)\n ta = (1 / (a + b)) / qt\n tb = 0.2 * 20 / (1 + a)\n"
        " tr = 1 / (a + b)\n if (x > 0) { ti = 2 / a } else { ti = 3 / a }\n ts = 5 + 1 / a\n"
        " tw = 1 / a\n}\n";
    static char code[65536];
    if (!emit_code("q.mod", text, "hbg_q", code, sizeof code)) return;
    CHECK(strstr(code, "s->hbr_ta = (lv_qt * (s->a + s->b));") != NULL);
    CHECK(strstr(code, "s->hbr_tb = ((1.0 + s->a) * 0x1p-2 /* 1 / (0.20000000000000001 * 20.0) */);") != NULL);
    CHECK(strstr(code, "s->m += (1.0 - hb_exp(-s->dt * s->hbr_ta)) * (s->inf - s->m);") != NULL);
    CHECK(strstr(code, "s->n += (1.0 - hb_exp(-s->dt * s->hbr_tb)) * (s->inf - s->n);") != NULL);
    CHECK(strstr(code, "s->u += (1.0 - hb_exp(-s->dt * s->hbr_ta)) * (0.0 - s->u);") != NULL);
    CHECK(strstr(code, "hb_exp(-s->dt / s->tr)") != NULL); /* RANGE: a model may read it */
    CHECK(strstr(code, "hb_exp(-s->dt / s->ti)") != NULL); /* assigned in an if */
    CHECK(strstr(code, "hb_exp(-s->dt / s->ts)") != NULL); /* a sum */
    CHECK(strstr(code, "hb_exp(-s->dt / s->tw)") != NULL); /* an argument's name elsewhere */
    CHECK(strstr(code, "hbr_tr") == NULL && strstr(code, "hbr_ti") == NULL &&
          strstr(code, "hbr_ts") == NULL && strstr(code, "hbr_tw") == NULL);
    /* hh's taus come from its TABLE: the engine's update, unchanged */
    FILE *f = fopen(MECH_DIR "/nrn/hh.mod", "rb");
    CHECK(f != NULL);
    if (!f) return;
    static char hh[16384];
    hh[fread(hh, 1, sizeof hh - 1, f)] = 0;
    fclose(f);
    if (!emit_code("hh.mod", hh, "hbg_hh", code, sizeof code)) return;
    CHECK(strstr(code, "hb_exp(-s->dt / s->mtau)") != NULL && strstr(code, "hbr_") == NULL);
}

/* An ion whose name starts with i: its concentration ixi, which the pump WRITEs, is no
 * current (no conductance field, not in rhs or d); its current iix is. */
static void test_i_named_ion(void)
{
    static const char text[] =
        "NEURON { SUFFIX pump USEION ix READ ixo WRITE ixi, iix VALENCE 1 RANGE gx }\n"
        "PARAMETER { gx = 0.001 (S/cm2) }\nASSIGNED { v (mV) ixo (mM) iix (mA/cm2) }\n"
        "STATE { ixi (mM) }\nINITIAL { ixi = 1 }\n"
        "BREAKPOINT { SOLVE states METHOD cnexp iix = gx * (v - 10) }\n"
        "UNITSOFF\nDERIVATIVE states { ixi' = -iix - ixi }\nUNITSON\n";
    static char code[65536];
    if (!emit_code("ix.mod", text, "hbg_ix", code, sizeof code)) return;
    CHECK(strstr(code, "blk->rhs[r] += s.iix;") != NULL);
    CHECK(strstr(code, "blk->d[r] += s.g_iix;") != NULL);
    CHECK(strstr(code, "g_ixi") == NULL);
}

/* The body of generated function `name` in code ("" when absent), for strstr inside it. */
static const char *function_body(const char *code, const char *name, char *out, size_t cap)
{
    out[0] = 0;
    const char *start = strstr(code, name);
    const char *end = start ? strstr(start, "\n}\n") : NULL;
    if (!start || !end || (size_t)(end - start) >= cap) return out;
    memcpy(out, start, (size_t)(end - start));
    out[end - start] = 0;
    return out;
}

/* exp pairs (docs/nmodl.md, section 5): N2/(1 - exp(w)) after N1/(1 - exp(u)), w = -u as
 * linear forms, nothing between assigning u's variable: one exp and one division for both;
 * a reassigned variable between them, or arguments that are not negatives, keep both. */
static void test_exp_pairs(void)
{
    static const char text[] =
        "NEURON { SUFFIX ep }\nASSIGNED { v (mV) a b c d e f }\nSTATE { m }\nINITIAL { m = 0 }\n"
        "BREAKPOINT { SOLVE states METHOD cnexp }\n"
        "DERIVATIVE states { rates(v) m' = (a + b + c + d + e + f - m) / 2 }\n"
        "PROCEDURE rates(x (mV)) {\n a = (0.182 * (x - -38)) / (1 - exp(-(x - -38) / 6))\n"
        " b = (0.124 * (-x - 38)) / (1 - exp(-(-x - 38) / 6))\n"
        " c = x / (1 - exp(x / 5))\n x = x + 1\n d = x / (1 - exp(-x / 5))\n"
        " e = x / (1 - exp(x / 7))\n f = x / (1 - exp(-x / 6))\n}\n";
    static char code[65536], body[8192];
    if (!emit_code("ep.mod", text, "hbg_ep", code, sizeof code)) return;
    function_body(code, "double hbg_ep_rates(hbg_ep_vars_t *s, double a_x)\n{", body, sizeof body);
    CHECK(strstr(body, "const double hb_xe0 = hb_exp(((-((a_x - (-(38.0))))) * "
                       "0x1.5555555555555p-3 /* 1 / 6.0 */));") != NULL);
    CHECK(strstr(body, "const double hb_xq0 = 1.0 / (1.0 - hb_xe0);") != NULL);
    CHECK(strstr(body, "s->a = ((0.182 * (a_x - (-(38.0)))) * hb_xq0);") != NULL);
    CHECK(strstr(body, "s->b = ((-(0.124 * ((-(a_x)) - 38.0))) * (HB_GT(hb_xe0, 1.0) ? "
                       "(hb_xq0 - 1.0) : (hb_xe0 * hb_xq0)));") != NULL);
    CHECK(strstr(body, "hb_xe1") == NULL); /* c and d: x changes between; e and f: not -u */
    CHECK(strstr(body, "s->d = (a_x / (1.0 - hb_exp(") != NULL);
    CHECK(strstr(body, "s->f = (a_x / (1.0 - hb_exp(") != NULL);
}

/* A kernel stores the fields its blocks and the FUNCTIONs and PROCEDUREs they call assign;
 * one no kernel calls (toggle, as ProbAMPANMDA_EMS's toggleVerbose) does not count. */
static void test_kernel_stores(void)
{
    static const char text[] =
        "NEURON { SUFFIX z RANGE a, b, c }\nASSIGNED { v (mV) a b c }\nSTATE { m }\n"
        "INITIAL { m = 0 a = 0 b = 0 c = 0 }\n"
        "BREAKPOINT { SOLVE states METHOD cnexp c = m }\n"
        "UNITSOFF\nDERIVATIVE states { rates() m' = (a - m) / 2 }\nUNITSON\n"
        "PROCEDURE rates() { a = 1 }\nFUNCTION toggle() { b = 1 - b toggle = 0 }\n";
    static char code[65536], body[4096];
    if (!emit_code("z.mod", text, "hbg_z", code, sizeof code)) return;
    function_body(code, "void hbg_z_store_current_at(", body, sizeof body);
    CHECK(strstr(body, "= s->c;") != NULL);
    CHECK(strstr(body, "= s->a;") == NULL && strstr(body, "= s->b;") == NULL);
    function_body(code, "void hbg_z_store_state_at(", body, sizeof body);
    CHECK(strstr(body, "= s->m;") != NULL && strstr(body, "= s->a;") != NULL);
    CHECK(strstr(body, "= s->b;") == NULL && strstr(body, "= s->c;") == NULL);
    function_body(code, "void hbg_z_store_at(", body, sizeof body);
    CHECK(strstr(body, "= s->b;") != NULL); /* INITIAL and NET_RECEIVE store every field */
}

/* ---- bad inputs ---- */
#define HEAD "NEURON { SUFFIX x }\n"
#define HH_HEAD                                                                                    \
    "NEURON { SUFFIX x USEION na READ ena WRITE ina }\nASSIGNED { v (mV) ena (mV) ina (mA/cm2) "   \
    "}\n"

static const struct {
    const char *text;
    const char *message; /* after "bad.mod:" */
} bad[] = {
    {"", "bad.mod:1:1: no NEURON block; expected NEURON { SUFFIX name ... } or NEURON { "
         "POINT_PROCESS name ... }"},
    {"NEURON { RANGE a }\nPARAMETER { a = 1 }\n",
     "bad.mod:1:1: the NEURON block names no mechanism; expected SUFFIX, POINT_PROCESS or "
     "ARTIFICIAL_CELL and a name"},
    {"NEURON { SUFFIX a SUFFIX b }\n",
     "bad.mod:1:19: a second SUFFIX (the mechanism is already named 'a' at 1:17); expected one "
     "SUFFIX, POINT_PROCESS or ARTIFICIAL_CELL per file"},
    {"NEURON { SUFFIX x }\nNEURON { SUFFIX y }\n",
     "bad.mod:2:1: a second NEURON block (the first at 1:1); expected one"},
    {HEAD "PARAMETER { a = }\n", "bad.mod:2:17: unexpected '}' in PARAMETER; expected a number"},
    {HEAD "PARAMETER { a = 1 (mV) <0, 1 }\n",
     "bad.mod:2:30: unexpected '}' in a range <lo,hi>; expected '>'"},
    {HEAD "PARAMETER { a = 1\n",
     "bad.mod:3:1: unexpected end of file in PARAMETER; expected a name or '}'"},
    {HEAD "BREAKPOINT { x = 1 +* 2 }\n",
     "bad.mod:2:21: unexpected '*'; expected an expression (a number, a name, a call or '(')"},
    {HEAD "BREAKPOINT { \n", "bad.mod:2:12: '{' of BREAKPOINT is never closed; expected '}'"},
    {HEAD "FOO { }\n",
     "bad.mod:2:1: unexpected 'FOO'; expected a block (NEURON, UNITS, PARAMETER, STATE, ASSIGNED, "
     "CONSTANT, "
     "INITIAL, BREAKPOINT, DERIVATIVE, KINETIC, LINEAR, PROCEDURE, FUNCTION, NET_RECEIVE)"},
    {HEAD "@\n",
     "bad.mod:2:1: unexpected character '@'; expected a name, a number, a string or an operator"},
    {HEAD "COMMENT never closed\n",
     "bad.mod:2:1: COMMENT without ENDCOMMENT; expected ENDCOMMENT before the end of the file"},
    {HEAD "PROCEDURE p() {\nVERBATIM\nreturn;\n}\n",
     "bad.mod:3:1: VERBATIM without ENDVERBATIM; expected ENDVERBATIM before the end of the file"},
    {HEAD "PROCEDURE p() { printf(\"abc) }\n",
     "bad.mod:2:24: unterminated string; expected a closing '\"' on the same line"},
    {HEAD "PARAMETER { a = 1 (mV }\n",
     "bad.mod:2:19: unterminated unit; expected ')' on the same line"},
    {"NEURON { SUFFIX x USEION na READ eca }\n",
     "bad.mod:1:34: USEION na READ 'eca', which is not a variable of the ion na; expected ena, "
     "nai, nao or ina"},
    {"NEURON { SUFFIX x USEION k READ ek WRITE ikk }\n",
     "bad.mod:1:42: USEION k WRITE 'ikk', which is not a variable of the ion k; expected ek, ki, "
     "ko or ik"},
    {"NEURON { SUFFIX x USEION ca READ eca VALENCE 1 }\n",
     "bad.mod:1:26: VALENCE 1 for ca, whose valence is 2; expected 2 or no VALENCE"},
    {"NEURON { SUFFIX x USEION na READ ena USEION na READ nai }\n",
     "bad.mod:1:45: a second USEION na (the first at 1:26); expected one USEION per ion"},
    {HEAD "PARAMETER { a = 1 }\nASSIGNED { a }\n",
     "bad.mod:3:12: 'a' is declared twice (first as PARAMETER at 2:13); expected one declaration "
     "per name"},
    {HEAD "PROCEDURE p() { }\nFUNCTION p() { p = 1 }\n",
     "bad.mod:3:10: 'p' is declared twice (first as PROCEDURE at 2:11); expected one declaration "
     "per name"},
    {HEAD "ASSIGNED { a }\nBREAKPOINT { a = b + 1 }\n",
     "bad.mod:3:18: undefined name 'b'; expected a PARAMETER, STATE, ASSIGNED, CONSTANT, LOCAL or "
     "argument of that name"},
    {HEAD "ASSIGNED { a }\nBREAKPOINT { a = f(1) }\n",
     "bad.mod:3:18: undefined function 'f'; expected a FUNCTION or PROCEDURE of this file or a "
     "built-in (exp, log, fabs, sqrt, pow, ...)"},
    {HEAD "ASSIGNED { a }\nBREAKPOINT { a = exp(1, 2) }\n",
     "bad.mod:3:18: exp takes 1 argument, given 2; expected 1"},
    {HEAD "ASSIGNED { a }\nFUNCTION f(x) { f = x }\nBREAKPOINT { a = f() }\n",
     "bad.mod:4:18: f takes 1 argument, given 0; expected 1"},
    {HEAD "STATE { m }\nBREAKPOINT { SOLVE s METHOD cnexp }\n",
     "bad.mod:3:20: SOLVE of 's', which is not a block of this file; expected the name of a "
     "DERIVATIVE, KINETIC, LINEAR or PROCEDURE block"},
    {HEAD "STATE { m }\nBREAKPOINT { SOLVE s METHOD cnexp }\nKINETIC s { ~ m <-> m (1, 1) }\n",
     "bad.mod:3:20: METHOD cnexp does not fit the KINETIC block s; expected METHOD sparse"},
    {HEAD "STATE { m }\nBREAKPOINT { SOLVE s METHOD sparse }\nDERIVATIVE s { m' = -m }\n",
     "bad.mod:3:20: METHOD sparse does not fit the DERIVATIVE block s; expected METHOD cnexp, "
     "derivimplicit or euler"},
    {HEAD "STATE { m }\nBREAKPOINT { SOLVE s }\nDERIVATIVE s { m' = -m }\n",
     "bad.mod:3:20: SOLVE s without METHOD; expected METHOD cnexp, derivimplicit or euler for a "
     "DERIVATIVE block"},
    {HEAD "STATE { m }\nBREAKPOINT { SOLVE s METHOD rk4 }\nDERIVATIVE s { m' = -m }\n",
     "bad.mod:3:20: unknown METHOD 'rk4' for s; expected cnexp, derivimplicit, euler or sparse"},
    {HEAD "BREAKPOINT { SOLVE p METHOD cnexp }\nPROCEDURE p() { }\n",
     "bad.mod:2:20: METHOD cnexp for the PROCEDURE block p; expected no METHOD (a PROCEDURE is "
     "solved by running it)"},
    {HEAD "ASSIGNED { a }\nDERIVATIVE s { a' = 1 }\n",
     "bad.mod:3:16: a' of 'a', which is not a STATE; expected a STATE variable"},
    {HEAD "STATE { m }\nBREAKPOINT { m' = 1 }\n",
     "bad.mod:3:14: the derivative m' outside DERIVATIVE; expected it in a DERIVATIVE block"},
    {HEAD "ASSIGNED { a }\nKINETIC k { ~ a <-> a (1, 1) }\n",
     "bad.mod:3:15: 'a' in a reaction is not a STATE; expected a STATE variable"},
    {HEAD "STATE { m }\nDERIVATIVE d { CONSERVE m = 1 }\n",
     "bad.mod:3:16: CONSERVE outside KINETIC; expected it in a KINETIC block"},
    {HEAD "STATE { m }\nDERIVATIVE d { ~ m <-> m (1, 1) }\n",
     "bad.mod:3:16: a reaction '~' outside KINETIC, LINEAR or NONLINEAR; expected it in one of "
     "those blocks"},
    {HEAD "STATE { m }\nKINETIC k { ~ m -> m (1) }\n",
     "bad.mod:3:17: unexpected '->' in a reaction; expected '+', '<->' or '<<'"},
    {HEAD "ASSIGNED { a }\nPROCEDURE p() { TABLE a FROM 0 TO 1 WITH 0 }\n",
     "bad.mod:3:42: TABLE WITH 0; expected a whole number of intervals, 1 to 10000000"},
    {HEAD "PARAMETER { a }\nPROCEDURE p() { TABLE a FROM 0 TO 1 WITH 10 }\n",
     "bad.mod:3:23: TABLE of 'a', which is not ASSIGNED; expected ASSIGNED variables the block "
     "computes"},
    {"NEURON { SUFFIX x }\nNET_RECEIVE (w) { }\n",
     "bad.mod:2:1: NET_RECEIVE in the density mechanism x; expected POINT_PROCESS or "
     "ARTIFICIAL_CELL for a mechanism that receives events"},
    {HEAD "PROCEDURE p() { WATCH (v > 0) 1 }\n",
     "bad.mod:2:17: WATCH outside NET_RECEIVE; expected WATCH (condition) flag in a point "
     "process's NET_RECEIVE"},
    {"NEURON { POINT_PROCESS s }\nNET_RECEIVE (w) { WATCH (v >= 0) 1 }\n",
     "bad.mod:2:28: this WATCH condition is not a comparison > or <; expected WATCH (a > b) flag "
     "or WATCH (a < b) flag"},
    {HEAD "PROCEDURE p() { FOR_NETCONS (w) { } }\n",
     "bad.mod:2:17: FOR_NETCONS outside NET_RECEIVE; expected it in a NET_RECEIVE block"},
    {"NEURON { POINT_PROCESS s }\nNET_RECEIVE (w, A) {\n FOR_NETCONS (w1) { w1 = 0 }\n}\n",
     "bad.mod:3:2: FOR_NETCONS has 1 argument and NET_RECEIVE 2; expected as many as "
     "NET_RECEIVE's (a connection's weight vector)"},
    {"NEURON { POINT_PROCESS s }\nNET_RECEIVE (w) {\n FOR_NETCONS (a) { FOR_NETCONS (b) { b = a } }\n}\n",
     "bad.mod:3:20: FOR_NETCONS inside FOR_NETCONS; expected one loop over the connections"},
    {"NEURON { POINT_PROCESS s }\nNET_RECEIVE (w) {\n FOR_NETCONS (a) { q = a }\n}\n",
     "bad.mod:3:20: undefined name 'q'; expected a PARAMETER, STATE, ASSIGNED, CONSTANT, LOCAL or "
     "argument of that name"},
    {HEAD "PROCEDURE p() { else { } }\n",
     "bad.mod:2:17: 'else' without 'if'; expected a statement"},
    {HEAD "CONSTANT { a = 1 }\nPROCEDURE p() { a = 2 }\n",
     "bad.mod:3:17: assignment to the CONSTANT 'a'; expected a STATE, ASSIGNED, LOCAL or PARAMETER "
     "on the left"},
    {HEAD "PROCEDURE p() { v = 2 }\n",
     "bad.mod:2:17: assignment to the membrane potential 'v'; expected a STATE, ASSIGNED, LOCAL or "
     "PARAMETER on the left"},
    {"NEURON { SUFFIX x RANGE p }\nPROCEDURE p() { }\n",
     "bad.mod:1:25: 'p' is a PROCEDURE, listed as a variable; expected a PARAMETER, ASSIGNED or "
     "STATE name"},
    {"NEURON { SUFFIX x NONSPECIFIC_CURRENT i }\n",
     "bad.mod:1:39: NONSPECIFIC_CURRENT 'i' is not declared; expected a PARAMETER, ASSIGNED or "
     "STATE of that name"},
    /* units */
    {HEAD "PARAMETER { a = 1 (mfoo) }\n",
     "bad.mod:2:13: unknown unit 'mfoo'; expected a unit of NEURON's table (mV, mA/cm2, S/cm2, ms, "
     "mM, um, degC, ...) or one defined in UNITS"},
    {HEAD "UNITS { (mV) = (mV) }\n", "bad.mod:2:9: the unit 'mV' is defined in terms of itself; "
                                     "expected a definition from known units"},
    {HH_HEAD
     "PARAMETER { gnabar = 0.12 (S/cm2) }\nSTATE { m (1) }\nBREAKPOINT { ina = gnabar*m }\n",
     "bad.mod:5:14: ina (mA/cm2) is assigned a value of another dimension: m^-2 A against m^-4 "
     "kg^-1 s^3 A^2; "
     "expected the same dimension on both sides (or UNITSOFF around it)"},
    {HH_HEAD "PARAMETER { g = 0.12 (S/cm2) }\nBREAKPOINT { ina = g*(v - ena) + g }\n",
     "bad.mod:4:32: adding quantities of different dimensions: m^-2 A against m^-4 kg^-1 s^3 A^2; "
     "expected the "
     "same dimension on both sides (or UNITSOFF around it)"},
    {HH_HEAD "ASSIGNED { r }\nBREAKPOINT { r = exp(v) }\n",
     "bad.mod:4:18: exp of a quantity in m^2 kg s^-3 A^-1; expected a dimensionless argument (or "
     "UNITSOFF around it)"},
    {HH_HEAD "STATE { m (1) }\nPARAMETER { tau = 1 (ms) }\nDERIVATIVE d { m' = m*tau }\n",
     "bad.mod:5:16: m' has the dimension of 1/ms: s^-1 against s; expected the same dimension on "
     "both sides (or UNITSOFF around it)"},
    {HH_HEAD "ASSIGNED { r }\nBREAKPOINT { if (v > ena*ina) { r = 1 } }\n",
     "bad.mod:4:20: comparing quantities of different dimensions: m^2 kg s^-3 A^-1 against kg "
     "s^-3; expected the same "
     "dimension on both sides (or UNITSOFF around it)"},
};

static void test_bad_inputs(void)
{
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        hb_nmodl_mechanism_t *m = (hb_nmodl_mechanism_t *)1;
        const hb_status_t status = hb_nmodl_parse("bad.mod", bad[i].text, strlen(bad[i].text), &m);
        CHECKF(status == HB_ERR_PARSE && m == NULL, "case %zu: status %s", i,
               hb_status_name(status));
        CHECKF(strcmp(hb_last_error(), bad[i].message) == 0, "case %zu:\n   got: %s\n  want: %s", i,
               hb_last_error(), bad[i].message);
        hb_nmodl_destroy(status == HB_SUCCESS ? m : NULL);
    }
    /* the same text parses under UNITSOFF: the unit checks are the only fault of these */
    const char *off = HH_HEAD "PARAMETER { gnabar = 0.12 (S/cm2) }\nSTATE { m }\nBREAKPOINT "
                              "{\nUNITSOFF\nina = gnabar*m\nUNITSON\n}\n";
    hb_nmodl_mechanism_t *m = NULL;
    CHECKF(hb_nmodl_parse("ok.mod", off, strlen(off), &m) == HB_SUCCESS, "%s", hb_last_error());
    hb_nmodl_destroy(m);
    /* a NUL byte, deep nesting: errors, not crashes */
    const char nul[] = HEAD "PARAMETER { a = 1 \0 }\n";
    CHECK(hb_nmodl_parse("nul.mod", nul, sizeof nul - 1, &m) == HB_ERR_PARSE &&
          strcmp(hb_last_error(), "nul.mod:2:19: unexpected byte 0x00; expected a name, a number, "
                                  "a string or an operator") == 0);
    char deep[4096] = HEAD "ASSIGNED { a }\nBREAKPOINT { a = ";
    for (int i = 0; i < 1000; i++) strcat(deep, "(");
    CHECK(hb_nmodl_parse("deep.mod", deep, strlen(deep), &m) == HB_ERR_PARSE &&
          strstr(hb_last_error(), "nesting deeper than 200 levels; expected simpler expressions") !=
              NULL);
    CHECK(hb_nmodl_read(HB_SOURCE_DIR "/no/such.mod", &m) == HB_ERR_IO && m == NULL);
    CHECK(hb_nmodl_parse("x.mod", "", 0, NULL) == HB_ERR_INVALID_VALUE);
}

/* Every prefix of hh.mod and of NaV.mod either parses or fails with a message at a place in
 * the file: never a crash (the sanitizer build runs this). */
static void test_prefixes(void)
{
    static const char *const files[] = {"nrn/hh.mod", "allen/NaV.mod"};
    for (size_t f = 0; f < 2; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", MECH_DIR, files[f]);
        FILE *in = fopen(path, "rb");
        CHECK(in != NULL);
        if (!in) continue;
        static char text[65536];
        const size_t n = fread(text, 1, sizeof text, in);
        fclose(in);
        int parsed = 0, failed_cleanly = 0, total = 0;
        for (size_t len = 0; len <= n; len += 3, total++) {
            hb_nmodl_mechanism_t *m = NULL;
            const hb_status_t status = hb_nmodl_parse("p.mod", text, len, &m);
            if (status == HB_SUCCESS)
                parsed++;
            else
                failed_cleanly +=
                    status == HB_ERR_PARSE && strncmp(hb_last_error(), "p.mod:", 6) == 0;
            hb_nmodl_destroy(m);
        }
        CHECKF(parsed + failed_cleanly == total && parsed >= 1 && failed_cleanly > total / 2,
               "%s: %d parsed, %d failed cleanly of %d", files[f], parsed, failed_cleanly, total);
    }
}

int main(void)
{
    test_nrn();
    test_bbp();
    test_allen();
    test_constructs();
    test_every_file();
    test_generator_refusals();
    test_self_events();
    test_reciprocals();
    test_rate_inverses();
    test_exp_pairs();
    test_i_named_ion();
    test_kernel_stores();
    test_bad_inputs();
    test_prefixes();
    return check_summary("nmodl");
}
