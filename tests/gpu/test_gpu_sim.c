/*
 * GPU test of the simulator (run on a machine with a CUDA device by
 * tests/gpu/run_sim.sh; CI has none and runs the CPU twin tests/test_sim_engine.c,
 * which checks the same engine code against a per-cell reference step).
 *
 * Batches of many cells on real morphologies (passive, hh in the soma, hh
 * everywhere; IClamps so that cells spike; neighbouring cells with different
 * parameters), 10,000 steps of dt = 0.025 ms with backward Euler and hh's table,
 * on the GPU (HB_BACKEND_CUDA: the whole step in device kernels) and on the CPU
 * (HB_BACKEND_OMP, bitwise the same as one thread). Compared:
 *   - every node voltage of every cell at the end,
 *   - every recorded sample of every probe (every 0.25 ms),
 * by the max norm of the elementwise relative difference |gpu - cpu| / |cpu|
 * (mV, never near 0 here), which must be <= 1e-9; and spike times, which must be
 * equal (same count, same values). The engine runs the same operations on both
 * (src/common/sim_step.h, FMA contraction off on the GPU), so 0 is expected.
 * A second run covers Crank-Nicolson, hh's formulas and interpolated spike
 * times (2,000 steps), advanced in uneven pieces. Catalogue mechanisms (docs/mechanisms.md
 * section 9): tests/test_sim_cat.c's cells (bbp channels, CaDynamics_E2 writing cai) as a
 * shared group, a per-lane group beside the ball and stick, and all in the mixed group, and
 * examples/l5pc.json for 60 ms, with backward Euler and Crank-Nicolson, each bitwise the
 * CPU (voltages, samples, spikes: no tolerance); a user catalogue built with CUDA kernels
 * (build-catalogue --cuda: the split step) the same, and bitwise the built-ins; one without
 * them refused on the GPU. HB_TEST_USER_CATALOGUE=1: the user catalogue alone. Catalogue point
 * processes (section 10): the generated ExpSyn and Exp2Syn bitwise the hard-coded synapses,
 * and with bbp's stochastic ProbAMPANMDA_EMS in every kind of group bitwise the CPU, events
 * with and without weight vectors (test_points).
 *
 * Outputs are poisoned: the test's copies are NaN-filled before each run, and the
 * library NaN-fills its host copy of the GPU state after uploading it (so a
 * missing download cannot pass as a result). Every library call's status is
 * checked; the library checks every CUDA return code. Exit status non-zero on
 * any failure.
 *
 * Usage: test_gpu_sim DATA_DIR   (the morphologies folder)
 * HB_TEST_STEPS: the steps of every run instead (a short run under compute-sanitizer,
 * tests/gpu/run_sanitizer.sh); spiking must then still occur, not reach 1,000 spikes.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/bench.h"
#include "hinesbatch.h"
#include "mech/catalogue.h"
#include "sim/sim_engine.h"
#include "sim_cells.h"

static const char *const files[] = {"HSN-fluoro01.CNG.swc", "morph_l5pc_with_axon.swc",
                                    "c91662.swc", "1220882a.CNG.swc"};
enum { N_FILES = 4, VARIANTS = 4 };

typedef struct {
    hb_method_t method;
    hb_spike_time_t rule;
    int table;
    long steps;
    int pieces; /* hb_sim_advance calls */
} config_t;

typedef struct {
    int n_cells, n_probes;
    double **v;       /* per cell: node voltages at the end */
    int *nt, *ns;     /* per probe: samples, spikes */
    double **trace, **spikes;
} results_t;

static double *poisoned(size_t n)
{
    double *x = malloc((n ? n : 1) * sizeof *x);
    if (x)
        for (size_t i = 0; i < n; i++) x[i] = NAN;
    return x;
}

static int run(hb_model_t **cells, int n, const config_t *cfg, hb_backend_t be, results_t *r)
{
    memset(r, 0, sizeof *r);
    hb_sim_options_t o;
    hb_sim_options_default(&o);
    o.backend = be;
    o.method = cfg->method;
    o.spike_time = cfg->rule;
    o.hh_table = cfg->table;
    o.sample_dt_ms = 0.25;
    o.t_stop_ms = (double)cfg->steps * o.dt_ms;
    hb_sim_t *sim = NULL;
    hb_status_t st = hb_sim_create(cells, n, &o, &sim);
    CHECK_OK(st);
    if (st != HB_SUCCESS) return 0;
    CHECK_OK(hb_sim_init(sim));
    long done = 0;
    for (int k = 0; k < cfg->pieces; k++) {
        const long part = k + 1 < cfg->pieces ? cfg->steps / cfg->pieces + 7 * k : cfg->steps - done;
        CHECK_OK(hb_sim_advance(sim, part));
        done += part;
    }
    CHECK(done == cfg->steps && fabs(hb_sim_time(sim) - o.t_stop_ms) < 1e-9);
    r->n_cells = n;
    r->n_probes = hb_sim_probe_count(sim);
    r->v = calloc((size_t)n, sizeof *r->v);
    r->nt = calloc((size_t)r->n_probes, sizeof *r->nt);
    r->ns = calloc((size_t)r->n_probes, sizeof *r->ns);
    r->trace = calloc((size_t)r->n_probes, sizeof *r->trace);
    r->spikes = calloc((size_t)r->n_probes, sizeof *r->spikes);
    if (!r->v || !r->nt || !r->ns || !r->trace || !r->spikes) {
        CHECKF(0, "out of memory");
        hb_sim_destroy(sim);
        return 0;
    }
    for (int c = 0; c < n; c++) {
        const int m = hb_cable_size(hb_model_cable(cells[c]));
        const double *v = NULL;
        r->v[c] = poisoned((size_t)m);
        CHECK_OK(hb_sim_voltages(sim, c, &v));
        if (v && r->v[c]) memcpy(r->v[c], v, (size_t)m * sizeof *v);
    }
    for (int p = 0; p < r->n_probes; p++) {
        const double *x = NULL;
        CHECK_OK(hb_sim_probe_trace(sim, p, &x, &r->nt[p]));
        r->trace[p] = poisoned((size_t)r->nt[p]);
        if (x && r->trace[p]) memcpy(r->trace[p], x, (size_t)r->nt[p] * sizeof *x);
        CHECK_OK(hb_sim_spikes(sim, p, &x, &r->ns[p]));
        r->spikes[p] = poisoned((size_t)r->ns[p]);
        if (x && r->spikes[p]) memcpy(r->spikes[p], x, (size_t)r->ns[p] * sizeof *x);
    }
    hb_sim_destroy(sim);
    return 1;
}

static void free_results(results_t *r)
{
    for (int c = 0; c < r->n_cells && r->v; c++) free(r->v[c]);
    for (int p = 0; p < r->n_probes; p++) {
        if (r->trace) free(r->trace[p]);
        if (r->spikes) free(r->spikes[p]);
    }
    free(r->v);
    free(r->nt);
    free(r->ns);
    free(r->trace);
    free(r->spikes);
}

/* max |a - b| / |b|; NaN anywhere counts as infinite. */
static double rel(const double *a, const double *b, int n)
{
    double worst = 0.0;
    for (int i = 0; i < n; i++) {
        const double d = fabs(a[i] - b[i]) / fmax(fabs(b[i]), 1e-300);
        if (!(d <= worst)) worst = isnan(d) ? INFINITY : d;
    }
    return worst;
}

static void compare(const char *what, hb_model_t **cells, const results_t *gpu,
                    const results_t *cpu, long *spikes)
{
    double v_worst = 0.0, t_worst = 0.0;
    long n_spikes = 0, n_samples = 0, spike_mismatch = 0;
    for (int c = 0; c < cpu->n_cells; c++)
        v_worst = fmax(v_worst, rel(gpu->v[c], cpu->v[c], hb_cable_size(hb_model_cable(cells[c]))));
    for (int p = 0; p < cpu->n_probes; p++) {
        CHECKF(gpu->nt[p] == cpu->nt[p], "%s probe %d: %d samples on the GPU, %d on the CPU", what,
               p, gpu->nt[p], cpu->nt[p]);
        if (gpu->nt[p] == cpu->nt[p]) t_worst = fmax(t_worst, rel(gpu->trace[p], cpu->trace[p], cpu->nt[p]));
        n_samples += cpu->nt[p];
        n_spikes += cpu->ns[p];
        if (gpu->ns[p] != cpu->ns[p] ||
            (cpu->ns[p] && memcmp(gpu->spikes[p], cpu->spikes[p], (size_t)cpu->ns[p] * sizeof(double))))
            spike_mismatch++;
    }
    printf("%s: %d cells, %d probes, %ld samples, %ld spikes; max relative difference "
           "(max norm of |gpu - cpu| / |cpu|): voltages %.3g, samples %.3g; probes with "
           "different spikes: %ld\n",
           what, cpu->n_cells, cpu->n_probes, n_samples, n_spikes, v_worst, t_worst, spike_mismatch);
    CHECKF(v_worst <= 1e-9, "%s: final voltages differ by %.3g (relative)", what, v_worst);
    CHECKF(t_worst <= 1e-9, "%s: sampled traces differ by %.3g (relative)", what, t_worst);
    CHECKF(spike_mismatch == 0, "%s: %ld probes with different spike times", what, spike_mismatch);
    *spikes += n_spikes;
}

/* ------------------------------------------------------------------------ */
/* Catalogue mechanisms (docs/mechanisms.md section 9): bitwise the CPU     */
/* ------------------------------------------------------------------------ */

/* A model file's simulation with the backend, t_stop and tuning given, run; NULL on failure. */
static hb_sim_t *cat_run(const char *text, const char *path, hb_backend_t be, double t_stop,
                         const char *tuning)
{
    hb_sim_overrides_t over;
    memset(&over, 0, sizeof over);
    hb_sim_options_default(&over.options);
    over.set = HB_SIM_SET_BACKEND | (t_stop > 0.0 ? HB_SIM_SET_T_STOP : 0u);
    over.options.backend = be;
    over.options.t_stop_ms = t_stop;
    CHECK_OK(hb_set_default_tuning(tuning));
    hb_sim_t *sim = NULL;
    const hb_status_t st = text ? hb_sim_parse_json_with(text, strlen(text), "cat.json", ".",
                                                         &over, &sim)
                                : hb_sim_load_json_with(path, &over, &sim);
    CHECKF(st == HB_SUCCESS, "%s: %s", path ? path : "cat.json", hb_last_error());
    if (st == HB_SUCCESS) {
        const hb_status_t run = hb_sim_run(sim);
        CHECKF(run == HB_SUCCESS, "run: %s", hb_last_error());
        if (run != HB_SUCCESS) {
            hb_sim_destroy(sim);
            sim = NULL;
        }
    } else {
        hb_sim_destroy(sim);
        sim = NULL;
    }
    CHECK_OK(hb_set_default_tuning(NULL));
    return sim;
}

/* The GPU's and the CPU's simulations of one model: every node voltage at the end, every
 * sample of every probe and every spike bitwise (no tolerance: the same operations in the same
 * order). Returns the spikes. */
static long cat_compare(const char *what, const hb_sim_t *gpu, const hb_sim_t *cpu)
{
    long spikes = 0, samples = 0, differ = 0;
    int bad_v = 0;
    CHECKF(hb_sim_cell_count(gpu) == hb_sim_cell_count(cpu), "%s: cell counts", what);
    for (int c = 0; c < hb_sim_cell_count(cpu) && c < hb_sim_cell_count(gpu); c++) {
        const double *a = NULL, *b = NULL;
        CHECK_OK(hb_sim_voltages(gpu, c, &a));
        CHECK_OK(hb_sim_voltages(cpu, c, &b));
        const group_t *gr = &cpu->groups[cpu->group_of[c]]; /* the cell's nodes */
        const size_t m = (size_t)hb_step_slot_rows(&gr->k, cpu->slot_of[c]);
        if (!a || !b || memcmp(a, b, m * sizeof *a) != 0) bad_v++;
    }
    for (int p = 0; p < hb_sim_probe_count(cpu); p++) {
        const double *a = NULL, *b = NULL;
        int na = 0, nb = 0;
        CHECK_OK(hb_sim_probe_trace(gpu, p, &a, &na));
        CHECK_OK(hb_sim_probe_trace(cpu, p, &b, &nb));
        samples += nb;
        if (na != nb || (nb && memcmp(a, b, (size_t)nb * sizeof *a) != 0)) {
            differ++;
            double worst = 0.0;
            for (int q = 0; q < na && q < nb; q++) worst = fmax(worst, fabs(a[q] - b[q]));
            printf("%s: probe %d differs (%d and %d samples, max |gpu - cpu| %.3g mV)\n", what, p,
                   na, nb, worst);
        }
        CHECK_OK(hb_sim_spikes(gpu, p, &a, &na));
        CHECK_OK(hb_sim_spikes(cpu, p, &b, &nb));
        spikes += nb;
        if (na != nb || (nb && memcmp(a, b, (size_t)nb * sizeof *a) != 0)) {
            differ++;
            printf("%s: probe %d: %d spikes on the GPU, %d on the CPU (or other times)\n", what,
                   p, na, nb);
        }
    }
    printf("%s: %d cells, %ld samples, %ld spikes: %s\n", what, hb_sim_cell_count(cpu), samples,
           spikes, differ || bad_v ? "DIFFER" : "bitwise the CPU's");
    CHECKF(differ == 0 && bad_v == 0, "%s: %ld probes' samples or spikes and %d cells' voltages "
           "differ from the CPU's", what, differ, bad_v);
    return spikes;
}

/* test_sim_cat's cells (tests/test_sim_cat.c) as a model file: on small.swc, bbp's NaTs2_t,
 * K_Pst, SKv3_1, Ca_HVA, SK_E2, Ih and CaDynamics_E2 (writing cai, read by SK_E2; eca by Nernst
 * every step), ek -85 mV in the soma, an IClamp; `n` cells, cell i's gNaTs2_tbar and pas g
 * scaled by vary[i] (1: copies); ball: one more cell, the ball and stick (another shape); cn:
 * Crank-Nicolson (NEURON's secondorder 2: the ions' half-step correction), else backward Euler;
 * user: NaTs2_t, SKv3_1 and CaDynamics_E2 from the user catalogue "usr" at that path. */
static const char *cat_model_with(int n, const double *vary, int ball, int cn, const char *user)
{
    static char text[16384];
    size_t at = 0;
    /* user: NaTs2_t, SKv3_1 and CaDynamics_E2 from the user catalogue "usr" at that path */
    static const char *const own[3] = {"NaTs2_t", "SKv3_1", "CaDynamics_E2"};
    static const char *const usr[3] = {"usr::NaTs2_t", "usr::SKv3_1", "usr::CaDynamics_E2"};
    const char *const *names = user ? usr : own;
    char cats[4200] = "";
    if (user) snprintf(cats, sizeof cats, "\"catalogues\": [\"%s\"], ", user);
    at += (size_t)snprintf(text + at, sizeof text - at,
                           "{%s\"t_stop\": 50, \"dt\": 0.025, \"celsius\": 34, \"sample_dt\": 0.025, "
                           "\"method\": \"%s\", \"cells\": [", cats, cn ? "cn" : "euler");
    for (int i = 0; i < n + ball && at < sizeof text; i++) {
        const double x = i < n ? vary[i] : 1.0;
        char morph[1024];
        if (i < n) snprintf(morph, sizeof morph, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
        else snprintf(morph, sizeof morph, "%s/morphologies/ball_and_stick.swc", HB_DATA_DIR);
        at += (size_t)snprintf(
            text + at, sizeof text - at,
            "%s{\"morphology\": \"%s\", \"section_rule\": \"hinesbatch\",\n"
            " \"discretization\": {\"scheme\": \"neuron\", \"policy\": \"per-segment\"},\n"
            " \"mechanisms\": [{\"name\": \"pas\", \"g\": %.17g, \"e\": -65},\n"
            "  {\"name\": \"%s\", \"region\": \"soma\", \"gNaTs2_tbar\": %.17g},\n"
            "  {\"name\": \"K_Pst\", \"region\": \"soma\", \"gK_Pstbar\": 0.1},\n"
            "  {\"name\": \"%s\", \"region\": \"soma\", \"gSKv3_1bar\": 0.5},\n"
            "  {\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\", \"gCa_HVAbar\": 0.001},\n"
            "  {\"name\": \"SK_E2\", \"region\": \"soma\", \"gSK_E2bar\": 0.05},\n"
            "  {\"name\": \"bbp::Ih\", \"region\": \"soma\", \"gIhbar\": 8e-5},\n"
            "  {\"name\": \"bbp::Ih\", \"region\": \"dend\", \"gIhbar\": 2e-4},\n"
            "  {\"name\": \"bbp::Ca_HVA\", \"region\": \"dend\", \"gCa_HVAbar\": 5e-4},\n"
            "  {\"name\": \"%s\", \"region\": \"soma\", \"gamma\": 0.5}],\n"
            " \"ions\": [{\"region\": \"soma\", \"ek\": -85}],\n"
            " \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 2, \"dur\": 1e9, "
            "\"amp\": 0.3}],\n"
            " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": 0}]}",
            i ? ",\n" : "", morph, 1e-4 * x, names[0], 0.9 * x, names[1], names[2]);
    }
    snprintf(text + at, sizeof text - at, "]}\n");
    return text;
}

static const char *cat_model(int n, const double *vary, int ball, int cn)
{
    return cat_model_with(n, vary, ball, cn, NULL);
}

/* examples/l5pc.json with "method": "cn" added (its own method: backward Euler); NULL when
 * unreadable. Freed by the caller. */
static char *l5pc_cn(const char *path, size_t *length)
{
    enum { MAX = 1 << 20 };
    static const char method[] = "\"method\": \"cn\", ";
    FILE *f = fopen(path, "rb");
    char *file = malloc(MAX), *text = malloc(MAX + sizeof method);
    const size_t n = f && file ? fread(file, 1, MAX, f) : 0;
    if (f) fclose(f);
    const char *brace = n ? memchr(file, '{', n) : NULL;
    CHECKF(brace && text && n < MAX, "%s: expected a JSON object under 1 MiB", path);
    if (!brace || !text || n >= MAX) {
        free(file);
        free(text);
        return NULL;
    }
    const size_t head = (size_t)(brace - file) + 1; /* through the brace */
    memcpy(text, file, head);
    memcpy(text + head, method, sizeof method - 1);
    memcpy(text + head + sizeof method - 1, file + head, n - head);
    *length = n + sizeof method - 1;
    free(file);
    return text;
}

/* Catalogue mechanisms on the GPU (step_cat_kernel for groups of one shape, shared or per
 * lane; tree_step_kernel<1> for the mixed group) against the CPU, bitwise: test_sim_cat's cells
 * in every kind of group, and BluePyOpt's l5pc cell (examples/l5pc.json: 13 bbp mechanisms,
 * CaDynamics_E2 in soma and axon), each with backward Euler and Crank-Nicolson (the ions'
 * currents corrected by di/dv dv before CaDynamics_E2 reads ica: hb_cat_second_order on the
 * lane step, the substitution's kept dv on the tree step), shortened where steps ask. */
static void test_catalogue(long steps)
{
    const double t_short = steps ? (double)steps * 0.025 : 0.0; /* 0: the files' own */
    static const double copies[4] = {1.0, 1.0, 1.0, 1.0};
    static const double varied[5] = {1.0, 1.0, 1.0, 0.7, 1.3};
    static const struct {
        const char *what;
        int n;
        const double *vary;
        int ball;
        const char *tuning; /* sim.mixed_copies=1: copies stay a group of their own */
    } cases[] = {
        {"catalogue: 4 copies (a shared group, step_cat_kernel<1>)", 4, copies, 0,
         "sim.mixed_copies=1"},
        {"catalogue: 5 cells of varied NaTs2_t and pas (per-lane group, step_cat_kernel<0>) "
         "and the ball and stick (mixed)", 5, varied, 1, "sim.mixed_copies=1"},
        {"catalogue: the same 6 cells in the mixed group (tree_step_kernel<1>)", 5, varied, 1,
         NULL},
    };
    long spikes = 0;
    for (int cn = 0; cn < 2; cn++)
        for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
            const char *text = cat_model(cases[c].n, cases[c].vary, cases[c].ball, cn);
            char what[256];
            snprintf(what, sizeof what, "%s, %s", cases[c].what, cn ? "CN" : "BE");
            hb_sim_t *gpu = cat_run(text, NULL, HB_BACKEND_CUDA, t_short, cases[c].tuning);
            hb_sim_t *cpu =
                gpu ? cat_run(text, NULL, HB_BACKEND_OMP, t_short, cases[c].tuning) : NULL;
            if (gpu && cpu) spikes += cat_compare(what, gpu, cpu);
            hb_sim_destroy(gpu);
            hb_sim_destroy(cpu);
        }
    CHECKF(steps || spikes >= 20, "catalogue cells: %ld spikes in all: spiking is not covered",
           spikes);
    char l5pc[2048];
    snprintf(l5pc, sizeof l5pc, "%s/examples/l5pc.json", HB_SOURCE_DIR);
    const double t_l5pc = steps ? t_short : 60.0; /* its step current starts at 20 ms */
    hb_sim_t *gpu = cat_run(NULL, l5pc, HB_BACKEND_CUDA, t_l5pc, NULL);
    hb_sim_t *cpu = gpu ? cat_run(NULL, l5pc, HB_BACKEND_OMP, t_l5pc, NULL) : NULL;
    if (gpu && cpu) {
        const long n = cat_compare("catalogue: examples/l5pc.json, 60 ms", gpu, cpu);
        CHECKF(steps || n >= 1, "l5pc: %ld spikes in 60 ms: its spikes are not covered", n);
    }
    hb_sim_destroy(gpu);
    hb_sim_destroy(cpu);
    size_t length = 0;
    char *cn_text = l5pc_cn(l5pc, &length);
    if (cn_text) { /* the same cell with Crank-Nicolson: CaDynamics_E2 reads the corrected ica */
        char dir[2048];
        snprintf(dir, sizeof dir, "%s/examples", HB_SOURCE_DIR);
        hb_sim_t *sims[2] = {NULL, NULL};
        const hb_backend_t be[2] = {HB_BACKEND_CUDA, HB_BACKEND_OMP};
        for (int b = 0; b < 2 && (b == 0 || sims[0]); b++) {
            hb_sim_overrides_t over;
            memset(&over, 0, sizeof over);
            hb_sim_options_default(&over.options);
            over.set = HB_SIM_SET_BACKEND | HB_SIM_SET_T_STOP;
            over.options.backend = be[b];
            over.options.t_stop_ms = t_l5pc;
            const hb_status_t st =
                hb_sim_parse_json_with(cn_text, length, "l5pc-cn.json", dir, &over, &sims[b]);
            CHECKF(st == HB_SUCCESS, "l5pc.json with method cn: %s", hb_last_error());
            if (st == HB_SUCCESS) CHECK_OK(hb_sim_run(sims[b]));
        }
        if (sims[0] && sims[1]) {
            const long n = cat_compare("catalogue: examples/l5pc.json, Crank-Nicolson, 60 ms",
                                       sims[0], sims[1]);
            CHECKF(steps || n >= 1, "l5pc CN: %ld spikes in 60 ms: its spikes are not covered",
                   n);
        }
        hb_sim_destroy(sims[0]);
        hb_sim_destroy(sims[1]);
        free(cn_text);
    }
    { /* a catalogue mechanism outside the built-ins (a user's: no CUDA kernels) is refused */
        static const hb_cat_cpu_t none = {.init = NULL};
        static const hb_cat_mech_t user = {.name = "user_mech", .kind = HB_CAT_DENSITY,
                                           .n_weight = -1, .n_field = 1, .cpu = &none};
        char swc[1024];
        snprintf(swc, sizeof swc, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
        hb_morph_t *morph = NULL;
        hb_model_t *md = NULL;
        CHECK_OK(hb_morph_load_swc(swc, NULL, &morph));
        hb_discretization_t disc;
        hb_discretization_default(&disc);
        if (morph) CHECK_OK(hb_model_create(morph, &disc, &md));
        hb_sim_options_t o;
        hb_sim_options_default(&o);
        o.backend = HB_BACKEND_CUDA;
        hb_sim_t *sim = NULL;
        if (md && hb_model_insert_cat(md, HB_REGION_ALL, &user, 0, NULL, NULL, "t") == HB_SUCCESS) {
            CHECK(hb_sim_create(&md, 1, &o, &sim) == HB_ERR_NOT_SUPPORTED);
            CHECKF(strstr(hb_last_error(), "user_mech is a user catalogue's mechanism") != NULL,
                   "%s", hb_last_error());
        } else {
            CHECKF(0, "a cable with a user mechanism: %s", hb_last_error());
        }
        hb_sim_destroy(sim);
        hb_model_destroy(md);
        hb_morph_destroy(morph);
    }
    { /* a point process whose NET_RECEIVE has FOR_NETCONS without the self-event kernels (a
       * catalogue built before the generator gave them every FOR_NETCONS mechanism): the
       * device's delivery has no per-target connection lists (docs/mechanisms.md, section
       * 10), refused */
        static const hb_cat_cpu_t none = {.init = NULL};
        static const hb_cat_mech_t loop = {.name = "loop_syn", .kind = HB_CAT_POINT,
                                           .n_weight = 1, .n_field = 1, .cpu = &none,
                                           .for_netcons = 1};
        char swc[1024];
        snprintf(swc, sizeof swc, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
        hb_morph_t *morph = NULL;
        hb_model_t *md = NULL;
        CHECK_OK(hb_morph_load_swc(swc, NULL, &morph));
        hb_discretization_t disc;
        hb_discretization_default(&disc);
        if (morph) CHECK_OK(hb_model_create(morph, &disc, &md));
        hb_sim_options_t o;
        hb_sim_options_default(&o);
        o.backend = HB_BACKEND_CUDA;
        hb_sim_t *sim = NULL;
        const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
        if (md && hb_model_add_point(md, &soma, &loop, 0, NULL, NULL, "t", NULL) == HB_SUCCESS) {
            CHECK(hb_sim_create(&md, 1, &o, &sim) == HB_ERR_NOT_SUPPORTED);
            CHECKF(strstr(hb_last_error(), "loop_syn's NET_RECEIVE has FOR_NETCONS, and its "
                                            "catalogue has no self-event kernels") != NULL,
                   "%s", hb_last_error());
        } else {
            CHECKF(0, "a cable with a FOR_NETCONS point process: %s", hb_last_error());
        }
        hb_sim_destroy(sim);
        hb_model_destroy(md);
        hb_morph_destroy(morph);
    }
}

/* A user catalogue on the GPU (docs/mechanisms.md section 6: its own CUDA kernels, the split
 * step): bbp's NaTs2_t.mod, SKv3_1.mod and CaDynamics_E2.mod built by `hinesbatch
 * build-catalogue --cuda` as the catalogue "usr", in test_sim_cat's cells beside the built-in
 * K_Pst, Ca_HVA, SK_E2 and Ih, so that the fused kernels and the user's alternate (name order:
 * CaDynamics_E2 user, Ca_HVA, Ih, K_Pst built-in, NaTs2_t user, SK_E2 built-in, SKv3_1 user;
 * SK_E2 reads the user's cai). In a shared group, a per-lane group with the ball and stick
 * (mixed), and all in the mixed group: bitwise the CPU, and bitwise the same cells with the
 * built-ins alone on the GPU (the same .mod files), with backward Euler and Crank-Nicolson. A
 * catalogue built --no-cuda is refused. */
static void test_user_catalogue(long steps)
{
    const double t_short = steps ? (double)steps * 0.025 : 0.0;
    char dir[] = "/tmp/hb_gpu_usr_XXXXXX";
    if (!mkdtemp(dir)) {
        CHECKF(0, "mkdtemp: no temporary folder");
        return;
    }
    char cmd[8192], so[64], plain[64];
    snprintf(so, sizeof so, "%s/usr.so", dir);
    snprintf(plain, sizeof plain, "%s/plain.so", dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/usr && cp %s/mechanisms/bbp/NaTs2_t.mod %s/mechanisms/bbp/SKv3_1.mod "
             "%s/mechanisms/bbp/CaDynamics_E2.mod %s/usr/ && %s build-catalogue %s/usr --cuda "
             "-o %s && %s build-catalogue %s/usr --no-cuda -o %s",
             dir, HB_SOURCE_DIR, HB_SOURCE_DIR, HB_SOURCE_DIR, dir, HB_CLI, dir, so, HB_CLI, dir,
             plain);
    const int built = system(cmd);
    CHECKF(built == 0, "building the user catalogue: '%s' exited %d", cmd, built);
    if (built == 0) {
        static const double copies[4] = {1.0, 1.0, 1.0, 1.0};
        static const double varied[5] = {1.0, 1.0, 1.0, 0.7, 1.3};
        static const struct {
            const char *what;
            int n;
            const double *vary;
            int ball;
            const char *tuning;
        } cases[] = {
            {"user catalogue: 4 copies (shared group, split step_cat_kernel<1>)", 4, copies, 0,
             "sim.mixed_copies=1"},
            {"user catalogue: 5 varied cells (per-lane, split step_cat_kernel<0>) and the ball "
             "and stick", 5, varied, 1, "sim.mixed_copies=1"},
            {"user catalogue: the same 6 cells in the mixed group (split tree_step_kernel<1>)", 5,
             varied, 1, NULL},
        };
        long spikes = 0;
        for (int cn = 0; cn < 2; cn++) /* the split step with backward Euler and Crank-Nicolson */
            for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
                char *text = strdup(
                    cat_model_with(cases[c].n, cases[c].vary, cases[c].ball, cn, so));
                char *builtin = strdup(cat_model(cases[c].n, cases[c].vary, cases[c].ball, cn));
                char what[512];
                snprintf(what, sizeof what, "%s, %s", cases[c].what, cn ? "CN" : "BE");
                hb_sim_t *gpu =
                    text ? cat_run(text, NULL, HB_BACKEND_CUDA, t_short, cases[c].tuning) : NULL;
                hb_sim_t *cpu =
                    gpu ? cat_run(text, NULL, HB_BACKEND_OMP, t_short, cases[c].tuning) : NULL;
                hb_sim_t *own = gpu && builtin ? cat_run(builtin, NULL, HB_BACKEND_CUDA, t_short,
                                                         cases[c].tuning)
                                               : NULL;
                if (gpu && cpu) spikes += cat_compare(what, gpu, cpu);
                if (gpu && own) {
                    char vs[600];
                    snprintf(vs, sizeof vs, "%s against the built-ins on the GPU", what);
                    cat_compare(vs, gpu, own);
                }
                hb_sim_destroy(gpu);
                hb_sim_destroy(cpu);
                hb_sim_destroy(own);
                free(text);
                free(builtin);
            }
        CHECKF(steps || spikes >= 10, "user catalogue: %ld spikes in all: spiking is not covered",
               spikes);
        /* the same catalogue without CUDA kernels: refused on the GPU, by name */
        const char *text = cat_model_with(1, copies, 0, 0, plain);
        hb_sim_t *sim = NULL;
        hb_sim_overrides_t over;
        memset(&over, 0, sizeof over);
        hb_sim_options_default(&over.options);
        over.set = HB_SIM_SET_BACKEND;
        over.options.backend = HB_BACKEND_CUDA;
        CHECK(hb_sim_parse_json_with(text, strlen(text), "usr.json", ".", &over, &sim) ==
              HB_ERR_NOT_SUPPORTED);
        CHECKF(strstr(hb_last_error(), "user catalogue's mechanism without CUDA kernels") != NULL,
               "%s", hb_last_error());
        hb_sim_destroy(sim);
    }
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

/* cat_model's cells (density 1: its bbp mechanisms; 0: hh in the soma and pas alone) with
 * synapses at the soma and an Exp2Syn on section 1 (the generated sum a row's synapses in
 * name order, the hard-coded in list order: one kind a row keeps them bitwise): hard-coded (named 0: "type": "expsyn" twice, "exp2syn") or generated
 * (named 1: "ExpSyn" twice, "Exp2Syn"; named 2: those and bbp's ProbAMPANMDA_EMS, stochastic:
 * Use 0.9, Fac 10, Dep 5 ms, RANDOM). Cell i's ExpSyn tau scaled by vary[i]; an IClamp. */
static const char *point_model(int n, const double *vary, int ball, int density, int named)
{
    static char text[32768];
    size_t at = 0; /* hh spikes at 6.3 degC (16 spikes of 4 cells in 50 ms), bbp's at 34 */
    at += (size_t)snprintf(text + at, sizeof text - at,
                           "{\"t_stop\": 50, \"dt\": 0.025, \"celsius\": %s, \"sample_dt\": 0.025, "
                           "\"cells\": [", density ? "34" : "6.3");
    for (int i = 0; i < n + ball && at < sizeof text; i++) {
        const double x = i < n ? vary[i] : 1.0;
        char morph[1024];
        if (i < n) snprintf(morph, sizeof morph, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
        else snprintf(morph, sizeof morph, "%s/morphologies/ball_and_stick.swc", HB_DATA_DIR);
        const char *kind[2] = {named ? "\"name\": \"ExpSyn\"" : "\"type\": \"expsyn\"",
                               named ? "\"name\": \"Exp2Syn\"" : "\"type\": \"exp2syn\""};
        at += (size_t)snprintf(
            text + at, sizeof text - at,
            "%s{\"morphology\": \"%s\", \"section_rule\": \"hinesbatch\",\n"
            " \"discretization\": {\"scheme\": \"neuron\", \"policy\": \"per-segment\"},\n"
            " \"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65}%s],\n"
            " \"synapses\": [{%s, \"at\": \"soma\", \"tau\": %.17g, \"e\": 0},\n"
            "  {%s, \"at\": \"soma\", \"tau\": 3, \"e\": 0},\n"
            "  {%s, \"at\": {\"section\": 1, \"x\": 0.5}, \"tau1\": 0.5, \"tau2\": 3, "
            "\"e\": -80}%s],\n"
            " \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 2, \"dur\": 1e9, "
            "\"amp\": 0.3}],\n"
            " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": 0}]}",
            i ? ",\n" : "", morph,
            density ? ",\n  {\"name\": \"NaTs2_t\", \"region\": \"soma\", \"gNaTs2_tbar\": 0.9},\n"
                      "  {\"name\": \"SKv3_1\", \"region\": \"soma\", \"gSKv3_1bar\": 0.5},\n"
                      "  {\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\", \"gCa_HVAbar\": 0.001},\n"
                      "  {\"name\": \"SK_E2\", \"region\": \"soma\", \"gSK_E2bar\": 0.05},\n"
                      "  {\"name\": \"CaDynamics_E2\", \"region\": \"soma\", \"gamma\": 0.5}"
                    : ",\n  {\"name\": \"hh\", \"region\": \"soma\"}",
            kind[0], 2.0 * x, kind[0], kind[1],
            named == 2 ? ",\n  {\"name\": \"ProbAMPANMDA_EMS\", \"at\": \"soma\", \"Use\": 0.9, "
                         "\"Fac\": 10, \"Dep\": 5}"
                       : "");
    }
    snprintf(text + at, sizeof text - at, "]}\n");
    return text;
}

/* point_model's simulation on `be`, with events: every cell's synapses (two connections with
 * weight vectors on each, alike events: the connections' order decides at a stateful
 * synapse; every other time one more without a vector) every 37 steps from step 4. */
static hb_sim_t *point_run(const char *text, hb_backend_t be, long steps, const char *tuning)
{
    hb_sim_overrides_t over;
    memset(&over, 0, sizeof over);
    hb_sim_options_default(&over.options);
    over.set = HB_SIM_SET_BACKEND;
    over.options.backend = be;
    CHECK_OK(hb_set_default_tuning(tuning));
    hb_sim_t *sim = NULL;
    hb_status_t st = hb_sim_parse_json_with(text, strlen(text), "points.json", ".", &over, &sim);
    CHECKF(st == HB_SUCCESS, "points.json on %s: %s", hb_backend_name(be), hb_last_error());
    const int cells = sim ? hb_sim_cell_count(sim) : 0;
    enum { MAX_SYN = 4, EVERY = 37 };
    int *wv = check_malloc(((size_t)cells * MAX_SYN * 2 + 1) * sizeof *wv);
    for (int c = 0; c < cells && st == HB_SUCCESS; c++)
        for (int q = 0; q < sim->info[c].n_synapses && st == HB_SUCCESS; q++)
            for (int k = 0; k < 2 && st == HB_SUCCESS; k++) {
                st = hb_sim_add_weights(sim, c, q, 0.002 + 0.001 * q, &wv[(c * MAX_SYN + q) * 2 + k]);
                CHECK_OK(st);
            }
    if (st == HB_SUCCESS) st = hb_sim_init(sim);
    size_t n_ev = 0;
    hb_sim_event_t *ev = check_malloc(((size_t)cells * MAX_SYN * 3 * (size_t)(steps / EVERY + 1) + 1) *
                                      sizeof *ev);
    for (long n = 4; n < steps && st == HB_SUCCESS; n += EVERY)
        for (int c = 0; c < cells; c++)
            for (int q = 0; q < sim->info[c].n_synapses; q++) {
                const double t = ((double)n - 0.3) * 0.025, w = 0.002 + 0.001 * q;
                if ((n / EVERY) % 2) ev[n_ev++] = (hb_sim_event_t){n, c, q, -1, t, w};
                for (int k = 0; k < 2; k++)
                    ev[n_ev++] = (hb_sim_event_t){n, c, q, wv[(c * MAX_SYN + q) * 2 + k], t, w};
            }
    if (st == HB_SUCCESS) st = hb_sim_queue_events(sim, n_ev, ev);
    if (st == HB_SUCCESS) st = hb_sim_advance(sim, steps);
    CHECKF(st == HB_SUCCESS, "points on %s: %s", hb_backend_name(be), hb_last_error());
    free(ev);
    free(wv);
    CHECK_OK(hb_set_default_tuning(NULL));
    if (st != HB_SUCCESS) {
        hb_sim_destroy(sim);
        return NULL;
    }
    return sim;
}

/* Catalogue point processes on the GPU (docs/mechanisms.md, section 10): the generated ExpSyn
 * and Exp2Syn bitwise the hard-coded synapses on the GPU and the CPU; with bbp's stochastic
 * ProbAMPANMDA_EMS and density mechanisms, a shared, a per-lane and the mixed group, each
 * bitwise the CPU (voltages, samples, spikes; events with and without weight vectors). */
static void test_points(long steps)
{
    const long n_steps = steps ? steps : 2000;
    static const double copies[4] = {1.0, 1.0, 1.0, 1.0};
    static const double varied[5] = {1.0, 1.1, 1.0, 0.7, 1.3};
    { /* generated against hard-coded, copies (a shared group) */
        const char *text = point_model(4, copies, 0, 0, 0);
        hb_sim_t *hand = point_run(text, HB_BACKEND_CUDA, n_steps, "sim.mixed_copies=1");
        text = point_model(4, copies, 0, 0, 1);
        hb_sim_t *gen = point_run(text, HB_BACKEND_CUDA, n_steps, "sim.mixed_copies=1");
        hb_sim_t *cpu = point_run(text, HB_BACKEND_OMP, n_steps, "sim.mixed_copies=1");
        if (hand && gen) cat_compare("points: generated ExpSyn, Exp2Syn on the GPU against the "
                                     "hard-coded on the GPU", gen, hand);
        if (gen && cpu) {
            const long n = cat_compare("points: generated ExpSyn, Exp2Syn, GPU against CPU", gen, cpu);
            CHECKF(steps || n >= 4, "points: %ld spikes: too few to compare", n);
        }
        hb_sim_destroy(hand);
        hb_sim_destroy(gen);
        hb_sim_destroy(cpu);
    }
    static const struct {
        const char *what;
        int n;
        const double *vary;
        int ball;
        const char *tuning;
    } cases[] = {
        {"points: ProbAMPANMDA_EMS, ExpSyn, Exp2Syn, bbp channels, 4 copies (step_cat_kernel<1>)",
         4, copies, 0, "sim.mixed_copies=1"},
        {"points: the same, 5 cells of varied ExpSyn tau (step_cat_kernel<0>) and the ball and "
         "stick", 5, varied, 1, "sim.mixed_copies=1"},
        {"points: the same 6 cells in the mixed group (tree_step_kernel<1>)", 5, varied, 1, NULL},
    };
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        const char *text = point_model(cases[c].n, cases[c].vary, cases[c].ball, 1, 2);
        hb_sim_t *gpu = point_run(text, HB_BACKEND_CUDA, n_steps, cases[c].tuning);
        hb_sim_t *cpu = gpu ? point_run(text, HB_BACKEND_OMP, n_steps, cases[c].tuning) : NULL;
        if (gpu && cpu) cat_compare(cases[c].what, gpu, cpu);
        hb_sim_destroy(gpu);
        hb_sim_destroy(cpu);
    }
}

int main(int argc, char **argv)
{
    if (!hb_backend_available(HB_BACKEND_CUDA)) { /* ctest: SKIP_RETURN_CODE 77 */
        printf("no CUDA device: skipped\n");
        return 77;
    }
    setvbuf(stdout, NULL, _IOLBF, 0); /* a run cut short by a timeout keeps its lines */
    if (argc != 2) {
        fprintf(stderr, "usage: test_gpu_sim DATA_DIR\n");
        return 2;
    }
    if (!hb_backend_available(HB_BACKEND_CUDA)) {
        fprintf(stderr, "test_gpu_sim: no CUDA device (or built without CUDA)\n");
        return 1;
    }
    const hb_backend_t cpu_be = hb_backend_available(HB_BACKEND_OMP) ? HB_BACKEND_OMP : HB_BACKEND_SEQ;
    if (getenv("HB_TEST_USER_CATALOGUE")) { /* this part alone (seconds) */
        test_user_catalogue(0);
        return check_summary("test_gpu_sim (user catalogue)");
    }
    config_t configs[] = {
        {HB_METHOD_EULER, HB_SPIKE_STEP, 1, 10000, 1},
        {HB_METHOD_CN, HB_SPIKE_INTERPOLATE, 0, 2000, 3},
    };
    config_t mixed = {HB_METHOD_EULER, HB_SPIKE_STEP, 1, 10000, 2};
    const char *steps_env = getenv("HB_TEST_STEPS");
    long steps = 0; /* 0: each run's own */
    if (steps_env) {
        char *end = NULL;
        steps = strtol(steps_env, &end, 10);
        if (end == steps_env || *end != '\0' || steps < 100 || steps > 10000) {
            fprintf(stderr, "test_gpu_sim: HB_TEST_STEPS '%s': expected a step count, 100 to 10000\n",
                    steps_env);
            return 2;
        }
        for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) configs[c].steps = steps;
        mixed.steps = steps;
    }
    const int copies[] = {100, 40}; /* cells per (morphology, kind): not a multiple of 32 */
    long total_spikes = 0;
    /* Every kind and method on the two smaller cells; the larger ones run in the
     * mixed simulation below (one thread per cell is latency-bound on few cells,
     * so each 10,000-step run of a 1,000+ row cell costs about a minute). */
    static const int per_file[] = {0, 3};
    for (size_t pf = 0; pf < sizeof per_file / sizeof *per_file; pf++) {
        const int f = per_file[pf];
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", argv[1], files[f]);
        hb_morph_t *morph = NULL;
        CHECK_OK(hb_morph_load_swc(path, NULL, &morph));
        if (!morph) continue;
        for (int k = 0; k < SIM_CELL_KINDS; k++) {
            hb_model_t *variants[VARIANTS];
            for (int v = 0; v < VARIANTS; v++) variants[v] = sim_cells_make(morph, k, v);
            for (size_t c = 0; c < sizeof configs / sizeof *configs; c++) {
                const int n = copies[c];
                hb_model_t **cells = malloc((size_t)n * sizeof *cells);
                if (!cells) return 1;
                for (int i = 0; i < n; i++) cells[i] = variants[i % VARIANTS];
                results_t gpu = {0}, cpu = {0}; /* cpu stays unrun when gpu fails */
                char what[256];
                snprintf(what, sizeof what, "%s %s %s%s, %ld steps", files[f], sim_cell_kinds[k],
                         configs[c].method == HB_METHOD_CN ? "CN" : "BE",
                         configs[c].table ? "" : " (hh formulas)", configs[c].steps);
                if (run(cells, n, &configs[c], HB_BACKEND_CUDA, &gpu) &&
                    run(cells, n, &configs[c], cpu_be, &cpu))
                    compare(what, cells, &gpu, &cpu, &total_spikes);
                free_results(&gpu);
                free_results(&cpu);
                free(cells);
            }
            for (int v = 0; v < VARIANTS; v++) hb_model_destroy(variants[v]);
        }
        hb_morph_destroy(morph);
    }

    /* All morphologies and kinds in one simulation: several groups, one kernel each. */
    {
        hb_morph_t *morphs[N_FILES] = {NULL};
        hb_model_t *models[N_FILES * SIM_CELL_KINDS];
        hb_model_t *cells[N_FILES * SIM_CELL_KINDS * 3];
        int nm = 0, n = 0;
        for (int f = 0; f < N_FILES; f++) {
            char path[2048];
            snprintf(path, sizeof path, "%s/%s", argv[1], files[f]);
            CHECK_OK(hb_morph_load_swc(path, NULL, &morphs[f]));
            for (int k = 0; morphs[f] && k < SIM_CELL_KINDS; k++) models[nm++] = sim_cells_make(morphs[f], k, f);
        }
        for (int r = 0; r < 3; r++)
            for (int i = 0; i < nm; i++) cells[n++] = models[i];
        results_t gpu = {0}, cpu = {0}; /* cpu stays unrun when gpu fails */
        char what[64];
        snprintf(what, sizeof what, "mixed groups, BE, %ld steps", mixed.steps);
        if (run(cells, n, &mixed, HB_BACKEND_CUDA, &gpu) && run(cells, n, &mixed, cpu_be, &cpu))
            compare(what, cells, &gpu, &cpu, &total_spikes);
        free_results(&gpu);
        free_results(&cpu);
        for (int i = 0; i < nm; i++) hb_model_destroy(models[i]);
        for (int f = 0; f < N_FILES; f++) hb_morph_destroy(morphs[f]);
    }
    const long more_than = steps ? 0 : 1000; /* a short run must still spike */
    CHECKF(total_spikes > more_than, "only %ld spikes in all: spiking is not covered", total_spikes);
    test_catalogue(steps);
    test_user_catalogue(steps);
    test_points(steps);
    { /* a model file's catalogue point process is accepted by the CUDA backend now */
        static const char model[] =
            "{\"backend\": \"cuda\", \"t_stop\": 1, \"cells\": [{\"cable\": {\"length\": 20, "
            "\"diam\": 20, \"type\": 1}, \"synapses\": [{\"name\": \"ProbAMPANMDA_EMS\", "
            "\"at\": \"soma\"}]}]}";
        hb_sim_t *sim = NULL;
        CHECKF(hb_sim_parse_json(model, strlen(model), "point.json", ".", &sim) == HB_SUCCESS,
               "%s", hb_last_error());
        hb_sim_destroy(sim);
    }
    return check_summary("test_gpu_sim");
}
