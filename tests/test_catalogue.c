/* The mechanism catalogues (src/mech/catalogue.c, the generated gen/catalogues/): every
 * built-in mechanism's descriptor is what the NMODL front end says of its .mod file, every file
 * the generator translates is in its catalogue and every other is left out, the kernels run
 * through the table and through the dispatch by index with the same bits, and lookups by name
 * find, qualify and refuse with the messages the model file shows. */
#include <dirent.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "hbg_bbp_NaTs2_t.h"
#include "hbg_default_dispatch.h"
#include "mech/catalogue.h"
#include "nmodl/nmodl.h"

static const char *const folder_of[] = {"nrn", "bbp", "allen"}; /* default, bbp, allen */

static int has(const char *const *names, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(names[i], name) == 0) return 1;
    return 0;
}

static const hb_cat_mech_t *in_catalogue(const hb_catalogue_t *cat, const char *name)
{
    for (int i = 0; i < cat->n_mech; i++)
        if (strcmp(cat->mech[i].name, name) == 0) return &cat->mech[i];
    return NULL;
}

static int same_field(const hb_cat_field_t *f, const hb_nmodl_var_t *v)
{
    const double lo = v->has_limits ? v->lo : -HUGE_VAL, hi = v->has_limits ? v->hi : HUGE_VAL;
    return strcmp(f->name, v->name) == 0 && strcmp(f->unit, v->unit) == 0 &&
           f->value == (v->has_value ? v->value : 0.0) && f->lo == lo && f->hi == hi;
}

static int reads_ion(const hb_nmodl_mechanism_t *m, const char *name)
{
    for (int i = 0; i < m->n_ions; i++)
        if (has(m->ions[i].read, m->ions[i].n_read, name)) return 1;
    return 0;
}

static int ion_of(const hb_nmodl_mechanism_t *m, const char *name)
{
    for (int i = 0; i < m->n_ions; i++)
        if (has(m->ions[i].write, m->ions[i].n_write, name)) return 1;
    return reads_ion(m, name);
}

static unsigned ion_mask(const char *ion, const char *const *vars, int n)
{
    unsigned mask = 0;
    for (int i = 0; i < n; i++) {
        const char *v = vars[i];
        if (v[0] == 'e' && strcmp(v + 1, ion) == 0)
            mask |= HB_ION_E;
        else if (v[0] == 'i' && strcmp(v + 1, ion) == 0)
            mask |= HB_ION_I;
        else if (strncmp(v, ion, strlen(ion)) == 0 && strcmp(v + strlen(ion), "i") == 0)
            mask |= HB_ION_CI;
        else if (strncmp(v, ion, strlen(ion)) == 0 && strcmp(v + strlen(ion), "o") == 0)
            mask |= HB_ION_CO;
        else
            mask |= 0x100; /* not an ion variable: fails the comparison */
    }
    return mask;
}

/* Mechanism d of catalogue `cat` describes the front end's m. */
static void check_descriptor(const char *cat, const hb_cat_mech_t *d, const hb_nmodl_mechanism_t *m)
{
    const char *n = m->name;
    CHECKF((int)d->kind == (int)m->kind, "%s::%s kind", cat, n);
    int q = 0;
    for (int i = 0; i < m->n_parameters; i++) {
        const hb_nmodl_var_t *v = &m->parameters[i];
        if (!has(m->range, m->n_range, v->name)) continue;
        CHECKF(q < d->n_param && same_field(&d->param[q], v), "%s::%s param %s", cat, n, v->name);
        q++;
    }
    CHECKF(q == d->n_param, "%s::%s: %d RANGE PARAMETERs, descriptor %d", cat, n, q, d->n_param);
    q = 0;
    for (int i = 0; i < m->n_parameters; i++) {
        const hb_nmodl_var_t *v = &m->parameters[i];
        if (has(m->range, m->n_range, v->name) || !strcmp(v->name, "v") ||
            !strcmp(v->name, "celsius") || reads_ion(m, v->name))
            continue;
        CHECKF(q < d->n_global && same_field(&d->global[q], v), "%s::%s global %s", cat, n,
               v->name);
        q++;
    }
    CHECKF(q == d->n_global, "%s::%s: %d GLOBAL PARAMETERs, descriptor %d", cat, n, q, d->n_global);
    CHECKF(d->n_state == m->n_states, "%s::%s states", cat, n);
    for (int i = 0; i < m->n_states && i < d->n_state; i++)
        CHECKF(same_field(&d->state[i], &m->states[i]), "%s::%s state %s", cat, n,
               m->states[i].name);
    q = 0;
    for (int i = 0; i < m->n_assigned; i++) {
        const hb_nmodl_var_t *v = &m->assigned[i];
        if (!has(m->range, m->n_range, v->name) || ion_of(m, v->name) || !strcmp(v->name, "v"))
            continue;
        CHECKF(q < d->n_assigned && same_field(&d->assigned[q], v), "%s::%s assigned %s", cat, n,
               v->name);
        q++;
    }
    CHECKF(q == d->n_assigned, "%s::%s: %d RANGE ASSIGNED, descriptor %d", cat, n, q,
           d->n_assigned);
    CHECKF(d->n_ion == m->n_ions, "%s::%s ions", cat, n);
    int writes_current = m->n_nonspecific > 0, writes_conc = 0;
    for (int i = 0; i < m->n_ions && i < d->n_ion; i++) {
        const hb_nmodl_ion_t *x = &m->ions[i];
        const unsigned r = ion_mask(x->name, x->read, x->n_read);
        const unsigned w = ion_mask(x->name, x->write, x->n_write);
        CHECKF(!strcmp(d->ion[i].ion, x->name) && d->ion[i].valence == x->valence &&
                   d->ion[i].read == r && d->ion[i].write == w,
               "%s::%s ion %s: valence %g read %u write %u, expected %g %u %u", cat, n, x->name,
               d->ion[i].valence, d->ion[i].read, d->ion[i].write, x->valence, r, w);
        writes_current |= (w & HB_ION_I) != 0;
        writes_conc |= (w & (HB_ION_CI | HB_ION_CO)) != 0;
    }
    CHECKF(d->writes_current == writes_current && d->writes_conc == writes_conc, "%s::%s writes",
           cat, n);
    CHECKF(d->n_weight == m->n_net_receive_args, "%s::%s weights", cat, n);
    /* after the described fields the kernels may keep scratch (docs/nmodl.md, section 5) */
    CHECKF(d->n_field >= d->n_param + d->n_state + d->n_assigned, "%s::%s n_field", cat, n);
    CHECKF(d->cpu && d->cpu->init && d->cpu->current && d->cpu->state &&
               (d->cpu->net_receive != NULL) == (m->n_net_receive_args >= 0) &&
               (d->cpu->net_init != NULL) == (m->n_net_receive_args >= 0),
           "%s::%s kernels", cat, n);
    CHECKF((d->n_table > 0) == (d->cpu && d->cpu->tables != NULL), "%s::%s tables kernel", cat, n);
    for (int t = 0; t < d->n_table; t++)
        CHECKF(d->table_len[t] > 0, "%s::%s table %d length", cat, n, t);
    CHECKF(d->cuda == NULL, "%s::%s: built-ins have no CUDA launchers (fused)", cat, n);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Every .mod file of the catalogue's folder: translated and described, or left out. */
static int check_catalogue(const hb_catalogue_t *cat, const char *folder)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/mechanisms/%s", HB_SOURCE_DIR, folder);
    DIR *d = opendir(dir);
    CHECKF(d != NULL, "%s", dir);
    if (!d) return 0;
    char *names[64];
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) && n < 64;) {
        const size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".mod") == 0) {
            names[n] = check_malloc(len + 1);
            memcpy(names[n++], e->d_name, len + 1);
        }
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    int translated = 0, index = 0;
    for (int i = 0; i < n; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        hb_nmodl_mechanism_t *m = NULL;
        CHECK_OK(hb_nmodl_read(path, &m));
        if (m) {
            const hb_cat_mech_t *mech = in_catalogue(cat, m->name);
            if (m->generator_blocker[0]) {
                CHECKF(!mech, "%s::%s is in the catalogue, but the generator refuses it: %s",
                       cat->name, m->name, m->generator_blocker);
            } else {
                CHECKF(mech == &cat->mech[index], "%s::%s in the catalogue at %d (files' order)",
                       cat->name, m->name, index);
                if (mech) check_descriptor(cat->name, mech, m);
                translated++;
                index++;
            }
        }
        hb_nmodl_destroy(m);
        free(names[i]);
    }
    CHECKF(cat->n_mech == translated, "%s: %d mechanisms, %d files translated", cat->name,
           cat->n_mech, translated);
    return translated;
}

/* The generated kernels run: pas's current, hh's INITIAL (minf at -65 mV, 6.3 degC), through
 * the table and through the dispatch by index, bitwise alike. */
static void check_kernels(void)
{
    const hb_cat_mech_t *pas = NULL, *hh = NULL;
    CHECK_OK(hb_catalogue_find(NULL, 0, "pas", &pas));
    CHECK_OK(hb_catalogue_find(NULL, 0, "hh", &hh));
    if (!pas || !hh) return;
    enum { W = 2 };
    double v[W] = {-65.0, -60.0}, d[W] = {0.5, 0.5}, rhs[W] = {0.25, 0.25};
    int node[W] = {0, 0};
    double field[2 * W] = {0.001, 0.002, -70.0, -70.0}; /* g, e per lane */
    hb_cat_block_t blk = {W,   W,    1,     0.025, 0.0,  6.3,  v,    d,
                          rhs, node, field, NULL,  NULL, NULL, NULL, NULL, NULL, NULL, -1, NULL};
    pas->cpu->current(&blk, 0, 1);
    CHECKF(rhs[0] == 0.25 + 0.001 * (-65.0 - -70.0) && d[0] == 0.5 + 0.001, "pas lane 0: %g %g",
           rhs[0], d[0]);
    CHECKF(rhs[1] == 0.25 + 0.002 * (-60.0 - -70.0) && d[1] == 0.5 + 0.002, "pas lane 1: %g %g",
           rhs[1], d[1]);
    /* hh: two instances on one row, lanes 0 and 1 */
    double hf[2][9 * W], hd[2][9 * W];
    const double par[4] = {0.12, 0.036, 0.0003, -54.3};
    for (int j = 0; j < 2; j++)
        for (int q = 0; q < 9; q++)
            for (int k = 0; k < W; k++) hf[j][q * W + k] = q < 4 ? par[q] : -1.0;
    memcpy(hd, hf, sizeof hd);
    double e[W] = {50.0, 50.0}, e2[W] = {-77.0, -77.0}, ii[W] = {0}, di[W] = {0};
    hb_ion_block_t ions[2] = {{e, NULL, NULL, ii, di}, {e2, NULL, NULL, ii, di}};
    int hnode[2 * W] = {0, 0, 0, 0};
    hb_cat_block_t hb = {W,   W,     1,     0.025, 0.0,  6.3,  v,    d,
                         rhs, hnode, hf[0], NULL,  NULL, ions, NULL, NULL, NULL, NULL, -1, NULL};
    hh->cpu->init(&hb, 0, 2);
    const double am = 0.1 * 25.0 / (exp(2.5) - 1.0), bm = 4.0;
    CHECKF(fabs(hf[0][4 * W] - am / (am + bm)) < 1e-12, "hh m at -65 mV: %.17g", hf[0][4 * W]);
    CHECKF(hf[1][4 * W + 1] > 0.0 && hf[1][4 * W + 1] != hf[1][4 * W], "hh lane 1 at -60 mV");
    hb.field = hd[0];
    hbg_default_init(HBG_default_hh, &hb, 0, 2);
    CHECK(memcmp(hf, hd, sizeof hd) == 0);
    CHECK(HBG_default_N_MECH == 4 && hbg_default_hh_N_FIELD == hh->n_field); /* hh, pas, ExpSyn, Exp2Syn */
    /* the tables kernel fills rows that the table-reading kernels use */
    CHECK(hh->n_table == 1);
    double *table = malloc(sizeof *table * (size_t)hh->table_len[0]);
    for (int i = 0; i < hh->table_len[0]; i++) table[i] = NAN;
    hh->cpu->tables(6.3, NULL, &table);
    int finite = 1;
    for (int i = 0; i < hh->table_len[0]; i++) finite &= isfinite(table[i]) != 0;
    CHECK(finite);
    const double *tables[1] = {table};
    hb.table = tables;
    hh->cpu->init(&hb, 0, 2);
    CHECKF(fabs(hd[0][4 * W] - hf[0][4 * W]) < 1e-3, "hh m from the table %.17g", hd[0][4 * W]);
    free(table);
}

/* NaTs2_t's exp pairs (docs/nmodl.md, section 5): mBeta as -N2 E/(1 - E) from mAlpha's
 * E = exp(u) is the .mod's N2/(1 - exp(-u)) within rounding over the voltages a cell sees,
 * and at the extremes, where E overflows (v = -5000 mV) or underflows (v = +5000 mV), gives
 * the .mod's limits, not inf * 0. */
static void check_exp_pairs(void)
{
    double worst = 0.0;
    for (double v0 = -150.0; v0 <= 100.0; v0 += 0.37) {
        hbg_bbp_NaTs2_t_vars_t s;
        memset(&s, 0, sizeof s);
        s.v = v0;
        hbg_bbp_NaTs2_t_rates(&s);
        const double v = s.v; /* the .mod's v == -32 guard */
        const double a = (0.182 * (v - -32.0)) / (1.0 - hb_exp(-(v - -32.0) / 6.0));
        const double b = (0.124 * (-v - 32.0)) / (1.0 - hb_exp(-(-v - 32.0) / 6.0));
        const double ha = (-0.015 * (v - -60.0)) / (1.0 - hb_exp((v - -60.0) / 6.0));
        const double hb = (-0.015 * (-v - 60.0)) / (1.0 - hb_exp((-v - 60.0) / 6.0));
        const double got[4] = {s.mAlpha, s.mBeta, s.hAlpha, s.hBeta}, want[4] = {a, b, ha, hb};
        for (int q = 0; q < 4; q++) {
            const double rel = fabs(got[q] - want[q]) / fabs(want[q]);
            worst = rel > worst || rel != rel ? rel : worst;
        }
    }
    CHECKF(worst < 1e-12, "NaTs2_t's rates from the pairs within %.3g of the .mod's", worst);
    hbg_bbp_NaTs2_t_vars_t lo, hi;
    memset(&lo, 0, sizeof lo);
    memset(&hi, 0, sizeof hi);
    lo.v = -5000.0;
    hi.v = 5000.0;
    hbg_bbp_NaTs2_t_rates(&lo);
    hbg_bbp_NaTs2_t_rates(&hi);
    CHECKF(lo.mAlpha == 0.0 && lo.mBeta == 0.124 * 4968.0 && hi.mBeta == 0.0 &&
               hi.mAlpha == 0.182 * 5032.0,
           "at -5000 mV %g %g, at 5000 mV %g %g", lo.mAlpha, lo.mBeta, hi.mAlpha, hi.mBeta);
    CHECKF(isfinite(lo.hAlpha) && isfinite(lo.hBeta) && isfinite(hi.hAlpha) && isfinite(hi.hBeta),
           "h rates at +-5000 mV: %g %g %g %g", lo.hAlpha, lo.hBeta, hi.hAlpha, hi.hBeta);
}

static void expect_error(const hb_catalogue_t *const *extra, int n, const char *name,
                         const char *const *parts)
{
    const hb_cat_mech_t *m = (const hb_cat_mech_t *)1;
    const hb_status_t status = hb_catalogue_find(extra, n, name, &m);
    CHECKF(status == HB_ERR_INVALID_VALUE && m == NULL, "find %s refused", name);
    const char *message = hb_last_error();
    for (int i = 0; parts[i]; i++)
        CHECKF(strstr(message, parts[i]) != NULL, "find %s: '%s' in \"%s\"", name, parts[i],
               message);
}

static void check_find(void)
{
    const hb_catalogue_t *bbp = hb_catalogue_builtin(1), *allen = hb_catalogue_builtin(2);
    const hb_cat_mech_t *m = NULL;
    CHECK_OK(hb_catalogue_find(NULL, 0, "NaTs2_t", &m));
    CHECK(m && m == in_catalogue(bbp, "NaTs2_t"));
    CHECK(m && m->n_param == 1 && !strcmp(m->param[0].name, "gNaTs2_tbar") &&
          m->param[0].value == 1e-5 && !strcmp(m->param[0].unit, "S/cm2"));
    CHECK_OK(hb_catalogue_find(NULL, 0, "bbp::Ca_HVA", &m));
    CHECK(m && m == in_catalogue(bbp, "Ca_HVA") && m->n_ion == 1 && m->ion[0].valence == 2.0 &&
          m->ion[0].read == HB_ION_E && m->ion[0].write == HB_ION_I);
    CHECK_OK(hb_catalogue_find(NULL, 0, "allen::Ca_HVA", &m));
    CHECK(m && m == in_catalogue(allen, "Ca_HVA"));
    expect_error(NULL, 0, "Ca_HVA",
                 (const char *const[]){"ambiguous mechanism \"Ca_HVA\"", "bbp, allen",
                                       "bbp::Ca_HVA, allen::Ca_HVA", NULL});
    expect_error(
        NULL, 0, "NaTs2_tt",
        (const char *const[]){"unknown mechanism \"NaTs2_tt\"", "did you mean \"NaTs2_t\"", NULL});
    expect_error(NULL, 0, "qwertyuiop",
                 (const char *const[]){"unknown mechanism \"qwertyuiop\"",
                                       "catalogues default, bbp, allen", NULL});
    expect_error(NULL, 0, "nope::hh",
                 (const char *const[]){"no catalogue is named nope", "default, bbp, allen", NULL});
    expect_error(NULL, 0, "bbp::hh", (const char *const[]){"the catalogue bbp has no hh", NULL});
    expect_error(NULL, 0, "bbp::NaTs2", (const char *const[]){"did you mean \"NaTs2_t\"", NULL});
    expect_error(NULL, 0, "", (const char *const[]){"unknown mechanism \"\"", NULL});
    /* a user's catalogue: searched after the built-ins, qualified by its name */
    const hb_cat_mech_t *hh = NULL;
    CHECK_OK(hb_catalogue_find(NULL, 0, "default::hh", &hh));
    if (!hh) return;
    hb_cat_mech_t mine[2] = {*hh, *hh};
    mine[1].name = "hh_fast";
    const hb_catalogue_t user = {HB_CAT_ABI, sizeof(hb_cat_mech_t), "l5pc", "test", 2, mine};
    const hb_catalogue_t *extra[1] = {&user};
    CHECK_OK(hb_catalogue_find(extra, 1, "hh_fast", &m));
    CHECK(m == &mine[1]);
    CHECK_OK(hb_catalogue_find(extra, 1, "l5pc::hh", &m));
    CHECK(m == &mine[0]);
    expect_error(extra, 1, "hh",
                 (const char *const[]){"default, l5pc", "default::hh, l5pc::hh", NULL});
    expect_error(extra, 1, "hh_fsat", (const char *const[]){"did you mean \"hh_fast\"", NULL});
    CHECK(hb_catalogue_find(NULL, 0, NULL, &m) == HB_ERR_INVALID_VALUE);
    CHECK(hb_catalogue_find(NULL, 1, "hh", &m) == HB_ERR_INVALID_VALUE);
}

static void check_load_errors(void)
{
    const hb_catalogue_t *cat = (const hb_catalogue_t *)1;
    CHECK(hb_catalogue_load("/nonexistent/cat.so", &cat) == HB_ERR_IO && cat == NULL);
    CHECKF(strstr(hb_last_error(), "/nonexistent/cat.so: no such file") != NULL, "%s",
           hb_last_error());
    const char *mod = HB_SOURCE_DIR "/mechanisms/nrn/hh.mod";
    CHECK(hb_catalogue_load(mod, &cat) == HB_ERR_IO && cat == NULL);
    CHECKF(strstr(hb_last_error(), "hh.mod: cannot load it as a shared library") != NULL, "%s",
           hb_last_error());
    CHECK(hb_catalogue_load(HB_SOURCE_DIR, &cat) == HB_ERR_IO);
    CHECKF(strstr(hb_last_error(), "not a file") != NULL, "%s", hb_last_error());
    CHECK(hb_catalogue_load(NULL, &cat) == HB_ERR_INVALID_VALUE);
}

/* A user's catalogue built by tests/catalogue_build.sh from hh.mod and NaTs2_t.mod: loaded,
 * its hh described as the built-in hh and its kernels giving the built-in's bits. cuda 1: every
 * mechanism has its CUDA launchers (build-catalogue --cuda; net_receive none), 0: none
 * (--no-cuda), -1: either. */
static int check_user(const char *path, int cuda)
{
    const hb_catalogue_t *cat = NULL;
    CHECK_OK(hb_catalogue_load(path, &cat));
    if (!cat) return check_summary("catalogue --user");
    CHECK(cat->abi == HB_CAT_ABI && cat->n_mech == 2 && !strcmp(cat->name, "mods"));
    for (int i = 0; i < cat->n_mech; i++) {
        const hb_cat_cuda_t *cu = cat->mech[i].cuda;
        if (cuda == 1)
            CHECKF(cu && cu->init && cu->current && cu->state && !cu->net_receive &&
                       cu != cat->mech[1 - i].cuda,
                   "%s: CUDA launchers of its own", cat->mech[i].name);
        if (cuda == 0) CHECKF(!cu, "%s: CUDA launchers in a --no-cuda build", cat->mech[i].name);
    }
    /* the generator is the build's; the sources' hash (a catalogue's identity) its own */
    const char *mine_src = strstr(cat->generator, "; sources ");
    const char *built = hb_catalogue_builtin(0)->generator, *built_src = strstr(built, "; sources ");
    CHECKF(mine_src && built_src && mine_src - cat->generator == built_src - built &&
               !strncmp(cat->generator, built, (size_t)(built_src - built)) &&
               strcmp(mine_src, built_src) != 0,
           "the user's generator \"%s\" is the build's \"%s\", with other sources", cat->generator,
           built);
    const hb_catalogue_t *extra[1] = {cat};
    const hb_cat_mech_t *mine = NULL, *builtin = NULL, *nats = NULL;
    CHECK_OK(hb_catalogue_find(extra, 1, "mods::hh", &mine));
    CHECK_OK(hb_catalogue_find(extra, 1, "default::hh", &builtin));
    CHECK_OK(hb_catalogue_find(extra, 1, "mods::NaTs2_t", &nats));
    CHECK(hb_catalogue_find(extra, 1, "hh", &nats) == HB_ERR_INVALID_VALUE &&
          strstr(hb_last_error(), "default::hh, mods::hh"));
    if (!mine || !builtin) return check_summary("catalogue --user");
    CHECK(mine != builtin && mine->n_param == builtin->n_param &&
          mine->n_state == builtin->n_state && mine->n_field == builtin->n_field &&
          mine->n_ion == builtin->n_ion && mine->n_table == builtin->n_table &&
          mine->table_len[0] == builtin->table_len[0]);
    for (int i = 0; i < mine->n_param && i < builtin->n_param; i++)
        CHECK(!strcmp(mine->param[i].name, builtin->param[i].name) &&
              mine->param[i].value == builtin->param[i].value);
    /* 3 instances x 4 lanes at different voltages: init, current, state, current, both ways */
    enum { W = 4, J = 3, F = 9 };
    double field[2][J * F * W], d[2][W], rhs[2][W], ii[2][W], di[2][W];
    double v[W] = {-80.0, -65.0, -40.0, 10.0}, ena[W] = {50, 50, 50, 50},
           ek[W] = {-77, -77, -77, -77};
    int node[J * W] = {0};
    const double par[4] = {0.12, 0.036, 0.0003, -54.3};
    for (int c = 0; c < 2; c++) {
        const hb_cat_mech_t *m = c ? mine : builtin;
        for (int j = 0; j < J; j++)
            for (int q = 0; q < F; q++)
                for (int k = 0; k < W; k++)
                    field[c][(j * F + q) * W + k] = q < 4 ? par[q] * (1 + 0.1 * j) : 0.0;
        memset(d[c], 0, sizeof d[c]);
        memset(rhs[c], 0, sizeof rhs[c]);
        memset(ii[c], 0, sizeof ii[c]);
        memset(di[c], 0, sizeof di[c]);
        hb_ion_block_t ions[2] = {{ena, NULL, NULL, ii[c], di[c]}, {ek, NULL, NULL, ii[c], di[c]}};
        hb_cat_block_t blk = {W,      W,    1,        0.025, 0.0,  6.3,  v,    d[c],
                              rhs[c], node, field[c], NULL,  NULL, ions, NULL, NULL, NULL, NULL, -1, NULL};
        m->cpu->init(&blk, 0, J);
        m->cpu->current(&blk, 0, J);
        m->cpu->state(&blk, 0, J);
        m->cpu->current(&blk, 0, J);
    }
    CHECK(memcmp(field[0], field[1], sizeof field[0]) == 0);
    CHECK(memcmp(d[0], d[1], sizeof d[0]) == 0 && memcmp(rhs[0], rhs[1], sizeof rhs[0]) == 0);
    CHECK(memcmp(ii[0], ii[1], sizeof ii[0]) == 0 && rhs[0][0] != 0.0);
    return check_summary("catalogue --user");
}

/* A file hb_catalogue_load must refuse, the message naming it and saying `what`. */
static int check_refused(const char *path, const char *what)
{
    const hb_catalogue_t *cat = (const hb_catalogue_t *)1;
    const hb_status_t status = hb_catalogue_load(path, &cat);
    CHECKF(status != HB_SUCCESS && cat == NULL, "%s refused", path);
    CHECKF(strstr(hb_last_error(), path) && strstr(hb_last_error(), what), "'%s' in \"%s\"", what,
           hb_last_error());
    printf("%s\n", hb_last_error());
    return check_summary("catalogue --refuse");
}

/* A user catalogue of point processes built with --cuda (tests/catalogue_build.sh: TMSyn and
 * STDPSyn): each carries its NET_RECEIVE launcher beside its current and state (docs/mechanisms.md
 * section 10), its own. */
static int check_points_cuda(const char *path)
{
    const hb_catalogue_t *cat = NULL;
    CHECK_OK(hb_catalogue_load(path, &cat));
    if (!cat) return check_summary("catalogue --points-cuda");
    CHECK(cat->abi == HB_CAT_ABI && cat->n_mech == 2);
    for (int i = 0; i < cat->n_mech; i++) {
        const hb_cat_mech_t *m = &cat->mech[i];
        const hb_cat_cuda_t *cu = m->cuda;
        CHECKF(m->kind == HB_CAT_POINT && m->n_weight >= 1 && m->cpu->net_receive,
               "%s: a point process with NET_RECEIVE", m->name);
        CHECKF(cu && cu->init && cu->current && cu->state && cu->net_receive &&
                   cu->net_receive != cat->mech[1 - i].cuda->net_receive,
               "%s: CUDA launchers of its own, NET_RECEIVE's too", m->name);
    }
    return check_summary("catalogue --points-cuda");
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "--points-cuda")) return check_points_cuda(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "--user")) return check_user(argv[2], -1);
    if (argc == 3 && !strcmp(argv[1], "--user-cuda")) return check_user(argv[2], 1);
    if (argc == 3 && !strcmp(argv[1], "--user-no-cuda")) return check_user(argv[2], 0);
    if (argc == 4 && !strcmp(argv[1], "--refuse")) return check_refused(argv[2], argv[3]);
    CHECK(hb_catalogue_builtin_count() == 3);
    CHECK(hb_catalogue_builtin(-1) == NULL && hb_catalogue_builtin(3) == NULL);
    static const char *const names[] = {"default", "bbp", "allen"};
    int translated = 0;
    for (int i = 0; i < 3; i++) {
        const hb_catalogue_t *cat = hb_catalogue_builtin(i);
        CHECK(cat && cat->abi == HB_CAT_ABI && cat->sizeof_mech == sizeof(hb_cat_mech_t));
        if (!cat) continue;
        CHECKF(!strcmp(cat->name, names[i]), "catalogue %d is %s", i, cat->name);
        CHECKF(!strncmp(cat->generator, "hinesbatch ", 11) && strstr(cat->generator, " nmodl "),
               "generator \"%s\"", cat->generator);
        translated += check_catalogue(cat, folder_of[i]);
    }
    /* the count docs/nmodl.md and tests/nmodl_gen_compile.sh give: as the generator grows,
     * files join their catalogue */
    CHECKF(translated == 33, "%d mechanisms in the built-in catalogues", translated);
    check_kernels();
    check_exp_pairs();
    check_find();
    check_load_errors();
    return check_summary("catalogue");
}
