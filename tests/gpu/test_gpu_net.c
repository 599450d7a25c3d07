/*
 * GPU test of networks (tests/gpu/run_all.sh net on a machine with a CUDA device; CI has
 * none and runs the CPU side of the same engine in tests/test_net*.c).
 *
 * Each network file given is loaded twice, with the backend overridden: on the CPU (omp,
 * bitwise seq's) and on the GPU (cuda: the cells' steps, synapse states, event delivery and
 * spike detection on the device; events made there), then again with the tasks exchange (one
 * thread drives the GPU while the master exchanges). The spikes must be bitwise
 * the same: the same count, and every (time, gid) equal in the run's (time, gid) order. The
 * networks cover ExpSyn and Exp2Syn, several synapses a cell, identical cells (the
 * synapse states lane-interleaved) and cells of their own shapes (busyring), spike sources
 * and delays of many steps. A network that does not spike fails the test (nothing would be
 * compared). Every library call's status is checked; the library checks every CUDA return
 * code. A folder among the arguments stands for the network of its SWC files
 * (tests/net_morphologies.h: one cell each, mixed groups, then three copies each, groups of
 * copies on the CPU and the mixed group on the GPU; a ring of connections; its CPU side
 * is test_net_morphologies). Also: connections handed to the GPU engine with bad ones among
 * millions name the first bad one, as a check in order would (the check runs in chunks on the
 * build threads). And "backend": "best" on each network with a candidate made slow through
 * HB_BEST_TRIAL_COSTS: the CPU's made slow, it must choose the GPU; the GPU's, never the GPU;
 * the spikes bitwise the CPU's either way. And the GPU with a mixed group's cells in tiles of
 * 8 and 16 lanes (sim.tree_tile) instead of the rule's: the spikes bitwise the CPU's.
 * Recording (docs/network.md, section 8): two networks with "record" sections (identical ball
 * and sticks: v, hh's m, ina and gk, pas.i, an ExpSyn's g and i, an Exp2Syn's A and g; a
 * busyring's mixed groups: v, hh.h, hh.ik, syn[0].g) record the same bits on the GPU
 * (record_kernel) as on the CPU, with either exchange; and a ring of cells with bbp's catalogue
 * mechanisms in the soma (NaTs2_t.m, SK_E2.z, cai written by CaDynamics_E2, eca by Nernst,
 * ica, ik: catalogue values read at their device addresses), the same bits too. A network
 * file that records: its values bitwise too (tests/reference/net_prob.json and
 * tests/gpu/net_prob_sto.json: bbp's ProbAMPANMDA_EMS, catalogue point processes with weight
 * vectors and NET_RECEIVE on the device, deterministic and stochastic: Use 0.9, Fac 10, Dep 5,
 * RANDOM's Philox draws; the soma voltages of 4 cells). A user catalogue's point processes
 * (docs/mechanisms.md section 10: build-catalogue --cuda, their NET_RECEIVE as the catalogue's
 * own kernels): tests/reference/net_stdp.json with its ExpSyn replaced by tests/nmodl/tm's
 * TMSyn (per-connection state with an INITIAL) beside tests/nmodl/stdp's STDPSyn (pre and post
 * events, the plastic weight), in groups of copies and in the mixed group, plain and with the
 * tasks exchange: spikes and recorded v, wsyn, g and i bitwise the CPU's (user_points); and
 * the same with the built-in ExpSyn kept beside STDPSyn (tests/cli_net_stdp.sh's network).
 * Self-events (self_events): tests/nmodl/selfev's PulseSyn, RetrigSyn and AhpWatch (net_send,
 * net_move, WATCH) in net_selfev.json and net_coincide.json, tests/nmodl/hetero_self's
 * HeteroSyn (FOR_NETCONS on self-events) and tests/nmodl/hetero's (FOR_NETCONS alone) in
 * net_hetero.json, and tests/nmodl/netev's SpikeOut and Relay (net_event: point processes as
 * their cells' spike sources) in net_netev.json, and tests/nmodl/artificial's Pulses and
 * LeakyFire (ARTIFICIAL_CELLs: gids of their own, each on a one-row host cell, driving hh cells
 * and driven by them) in net_artificial.json: spikes and records bitwise the CPU's.
 * Exit status non-zero on any failure; 77 without a CUDA device (ctest's skip).
 *
 * Usage: test_gpu_net NETWORK.json|MORPHOLOGY_FOLDER...
 *        HB_TEST_USER_POINTS=1 test_gpu_net   (the user point processes and self-events alone)
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "check.h"
#include "core/bench.h"
#include "hinesbatch.h"
#include "net_morphologies.h"
#include "sim/sim.h"
#include "sim_common.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static hb_backend_t last_backend; /* what run's network stepped on ("best" resolved) */

/* The network's spikes on `backend` (copied to *out, count *n); 0 on a failed call. */
static int run(const char *path, hb_backend_t backend, int tasks, hb_spike_t **out, size_t *n,
               double *seconds)
{
    *out = NULL;
    *n = 0;
    hb_comm_t *comm = NULL;
    hb_net_t *net = NULL;
    hb_sim_overrides_t ov;
    memset(&ov, 0, sizeof ov);
    hb_sim_options_default(&ov.options);
    ov.set = HB_SIM_SET_BACKEND;
    ov.options.backend = backend;
    int ok = 0;
    hb_status_t st = hb_comm_create(HB_COMM_SERIAL, &comm);
    CHECK_OK(st);
    if (st == HB_SUCCESS) {
        st = hb_net_load_json_with(path, &ov, comm, &net);
        CHECKF(st == HB_SUCCESS, "%s on %s: %s", path, hb_backend_name(backend), hb_last_error());
    }
    last_backend = HB_BACKEND_BEST;
    if (net) CHECK_OK(hb_net_backend(net, &last_backend, NULL));
    if (net && tasks) /* HB_NET_TASKS where the delays allow it, else the file's mode */
        hb_net_set_overlap(net, HB_NET_TASKS);
    if (net) {
        const double t0 = now_s();
        st = hb_net_run(net);
        *seconds = now_s() - t0;
        CHECKF(st == HB_SUCCESS, "%s on %s: %s", path, hb_backend_name(backend), hb_last_error());
        const hb_spike_t *sp = NULL;
        size_t count = 0;
        if (st == HB_SUCCESS) {
            CHECK_OK(hb_net_spikes(net, &sp, &count));
            *out = check_malloc((count + 1) * sizeof **out);
            if (count) memcpy(*out, sp, count * sizeof *sp);
            *n = count;
            ok = 1;
        }
    }
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return ok;
}

/* Connections of a one-synapse GPU simulation, several chunks of them (hb_sim_set_connections
 * converts 2^20 a chunk), bad at `bad[0..2]`: the message names bad[0], the first. */
static void bad_connections(void)
{
    const hb_section_spec_t secs[2] = {{"soma", -1, 0.0, 12.6157, 12.6157, 1},
                                       {"dend", 0, 1.0, 200.0, 1.0, 3}};
    hb_morph_t *morph = NULL;
    int map[2];
    hb_model_t *model = sections_model(secs, 2, 3, 100.0, 1.0, &morph, map);
    hb_sim_t *sim = NULL;
    hb_synapse_t syn;
    hb_synapse_default(HB_SYN_EXP, &syn);
    const hb_location_t mid = at_section(map[1], 0.5);
    if (model) CHECK_OK(hb_model_add_synapse(model, &mid, &syn, NULL));
    hb_sim_options_t opt = sim_options(0.025, 1.0, 0.0);
    opt.backend = HB_BACKEND_CUDA;
    if (model) CHECK_OK(hb_sim_create(&model, 1, &opt, &sim));
    const size_t n = ((size_t)3 << 20) + 7;
    hb_sim_connection_t *c = check_malloc(n * sizeof *c);
    for (size_t k = 0; k < n; k++)
        c[k] = (hb_sim_connection_t){(uint32_t)(k / 3), 0, 0, 0.01, 1.0};
    if (sim) {
        CHECK(hb_sim_makes_events(sim));
        CHECK_OK(hb_sim_set_connections(sim, n, c, NULL, 40));
        const size_t bad[3] = {1600001, 2700000, n - 1};
        c[bad[2]].source = 0; /* out of order */
        c[bad[1]].synapse = 1; /* the cell has one synapse */
        c[bad[0]].cell = 1; /* the simulation has one cell */
        CHECK(hb_sim_set_connections(sim, n, c, NULL, 40) == HB_ERR_INVALID_VALUE);
        CHECKF(strstr(hb_last_error(), "connection 1600001 (source 533333, cell 1, synapse 0)"),
               "first bad connection: %s", hb_last_error());
        c[bad[0]].cell = 0;
        CHECK(hb_sim_set_connections(sim, n, c, NULL, 40) == HB_ERR_INVALID_VALUE);
        CHECKF(strstr(hb_last_error(), "connection 2700000 (source 900000, cell 0, synapse 1)"),
               "second bad connection: %s", hb_last_error());
        c[bad[1]].synapse = 0;
        CHECK(hb_sim_set_connections(sim, n, c, NULL, 40) == HB_ERR_INVALID_VALUE);
        CHECKF(strstr(hb_last_error(), "connection 3145734 (source 0,"), "out of order: %s",
               hb_last_error());
    }
    free(c);
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(morph);
}

/* The rows a network file records on `backend` (hb_net_traces after hb_net_run), copied;
 * NULL on a failed call. */
static double *recorded_run(const char *path, hb_backend_t backend, int tasks, size_t *rows,
                            int *columns)
{
    hb_comm_t *comm = NULL;
    hb_net_t *net = NULL;
    hb_sim_overrides_t ov;
    memset(&ov, 0, sizeof ov);
    hb_sim_options_default(&ov.options);
    ov.set = HB_SIM_SET_BACKEND;
    ov.options.backend = backend;
    double *copy = NULL;
    *rows = 0;
    *columns = 0;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));
    if (comm) {
        const hb_status_t st = hb_net_load_json_with(path, &ov, comm, &net);
        CHECKF(st == HB_SUCCESS, "%s on %s: %s", path, hb_backend_name(backend), hb_last_error());
    }
    if (net && tasks) hb_net_set_overlap(net, HB_NET_TASKS);
    if (net) {
        const hb_status_t st = hb_net_run(net);
        CHECKF(st == HB_SUCCESS, "%s on %s: %s", path, hb_backend_name(backend), hb_last_error());
        const double *times = NULL, *values = NULL;
        if (st == HB_SUCCESS) CHECK_OK(hb_net_traces(net, &times, &values, rows));
        *columns = hb_net_record_count(net);
        const size_t n = *rows * (size_t)*columns;
        copy = check_malloc((n + 1) * sizeof *copy);
        if (n) memcpy(copy, values, n * sizeof *copy);
    }
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return copy;
}

/* Recorded values on the GPU bitwise the CPU's. */
static void recording(const char *dir, hb_backend_t cpu)
{
    static const char cells[] =
        "{\"t_stop\": 40, \"dt\": 0.025, \"cells\": [{\"count\": 40, \"sections\": ["
        "{\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
        "{\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
        "\"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 11}],"
        "\"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"}, {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": -65}],"
        "\"synapses\": [{\"type\": \"expsyn\", \"at\": {\"section\": \"dend\", \"x\": 0.5}, \"tau\": 2, \"e\": 0},"
        "{\"type\": \"exp2syn\", \"at\": \"soma\", \"tau1\": 0.5, \"tau2\": 3, \"e\": -80}],"
        "\"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}],"
        "\"network\": {\"sources\": [{\"start\": 1, \"number\": 1}],"
        "\"ring\": [{\"first\": 0, \"count\": 40, \"weight\": 0.05, \"delay\": 3}],"
        "\"connections\": [{\"source\": 40, \"target\": 0, \"weight\": 0.05, \"delay\": 1},"
        "{\"source\": 40, \"target\": 5, \"synapse\": 1, \"weight\": 0.01, \"delay\": 1}]},"
        "\"record\": [{\"gids\": [0, \"4-6\", 39], \"variables\": [\"v\", \"hh.m\", \"hh.ina\", \"hh.gk\","
        "\"syn[0].g\", \"syn[0].i\", \"syn[1].A\", \"syn[1].g\"], \"sample_dt\": 0.05},"
        "{\"gids\": [1], \"locations\": [{\"section\": 1, \"x\": 0.3}], \"variables\": [\"v\", \"pas.i\"],"
        "\"sample_dt\": 0.05}]}";
    static const char busy[] =
        "{\"dt\": 0.025, \"network\": {\"busyring\": {\"num-cells\": 64, \"ring-size\": 8, "
        "\"duration\": 30, \"depth\": 4, \"synapses\": 4}}, \"record\": {\"fraction\": 0.1, "
        "\"variables\": [\"v\", \"hh.h\", \"hh.ik\", \"syn[0].g\"], \"sample_dt\": 0.1}}";
    /* the identical cells with catalogue mechanisms in the soma (the mixed group's
     * tree_step_kernel<1>): a STATE, an ion's concentration written by CaDynamics_E2, eca by
     * Nernst, ica and ik totals (HB_REC_HOST values at their device addresses) */
    static const char cat[] =
        "{\"t_stop\": 40, \"dt\": 0.025, \"celsius\": 34, \"cells\": [{\"count\": 40, \"sections\": ["
        "{\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
        "{\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
        "\"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 11}],"
        "\"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65},"
        "{\"name\": \"NaTs2_t\", \"region\": \"soma\", \"gNaTs2_tbar\": 0.9},"
        "{\"name\": \"SKv3_1\", \"region\": \"soma\", \"gSKv3_1bar\": 0.5},"
        "{\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\", \"gCa_HVAbar\": 0.001},"
        "{\"name\": \"SK_E2\", \"region\": \"soma\", \"gSK_E2bar\": 0.05},"
        "{\"name\": \"CaDynamics_E2\", \"region\": \"soma\", \"gamma\": 0.5},"
        "{\"name\": \"bbp::Ih\", \"region\": \"dend\", \"gIhbar\": 2e-4}],"
        "\"ions\": [{\"region\": \"soma\", \"ek\": -85}],"
        "\"synapses\": [{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}],"
        "\"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}],"
        "\"network\": {\"sources\": [{\"start\": 1, \"number\": 1}],"
        "\"ring\": [{\"first\": 0, \"count\": 40, \"weight\": 0.5, \"delay\": 3}],"
        "\"connections\": [{\"source\": 40, \"target\": 0, \"weight\": 0.5, \"delay\": 1}]},"
        "\"record\": [{\"gids\": [0, \"4-6\", 39], \"variables\": [\"v\", \"NaTs2_t.m\", \"SK_E2.z\", "
        "\"cai\", \"eca\", \"ica\", \"ik\"], \"sample_dt\": 0.05}]}";
    const char *const texts[3] = {cells, busy, cat};
    for (int t = 0; t < 3; t++) {
        char path[128];
        snprintf(path, sizeof path, "%s/record%d.json", dir, t);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        if (!f) continue;
        fputs(texts[t], f);
        fclose(f);
        size_t rows_cpu = 0;
        int cols_cpu = 0;
        double *ref = recorded_run(path, cpu, 0, &rows_cpu, &cols_cpu);
        CHECKF(ref && rows_cpu > 100 && cols_cpu > 10, "%s: %zu rows of %d columns on the CPU",
               path, rows_cpu, cols_cpu);
        for (int tasks = 0; tasks < 2 && ref; tasks++) {
            size_t rows = 0;
            int cols = 0;
            double *gpu = recorded_run(path, HB_BACKEND_CUDA, tasks, &rows, &cols);
            size_t differ = 0, first = 0;
            for (size_t k = 0; gpu && rows == rows_cpu && cols == cols_cpu && k < rows * (size_t)cols; k++)
                if (memcmp(&gpu[k], &ref[k], sizeof *gpu) != 0 && differ++ == 0) first = k;
            CHECKF(gpu && rows == rows_cpu && cols == cols_cpu && differ == 0,
                   "%s: GPU%s recorded %zu rows of %d columns (CPU %zu of %d); %zu values differ, "
                   "the first row %zu column %zu: GPU %.17g, CPU %.17g", path,
                   tasks ? " (tasks)" : "", rows, cols, rows_cpu, cols_cpu, differ,
                   first / (size_t)(cols ? cols : 1), first % (size_t)(cols ? cols : 1),
                   gpu && differ ? gpu[first] : 0.0, differ ? ref[first] : 0.0);
            printf("%s: recorded %zu rows of %d columns, GPU%s bitwise %s\n", path, rows, cols,
                   tasks ? " (tasks)" : "", differ == 0 && rows == rows_cpu ? "equal" : "DIFFERENT");
            free(gpu);
        }
        free(ref);
        unlink(path);
    }
}

/* The network file at `path` on the CPU (`cpu`) and on the GPU, plain and with the tasks
 * exchange, and with "best" (a candidate made slow): the spikes bitwise the same. */
static void compare(const char *path, hb_backend_t cpu)
{
    hb_spike_t *ref = NULL;
    size_t n_ref = 0;
    double t_cpu = 0.0;
    const int ok = run(path, cpu, 0, &ref, &n_ref, &t_cpu);
    for (int tasks = 0; tasks < 2 && ok; tasks++) {
        hb_spike_t *gpu = NULL;
        size_t n_gpu = 0;
        double t_gpu = 0.0;
        if (!run(path, HB_BACKEND_CUDA, tasks, &gpu, &n_gpu, &t_gpu)) continue;
        CHECKF(n_ref > 0, "%s: no spike on the CPU: nothing compared", path);
        CHECKF(n_gpu == n_ref, "%s: %zu spikes on the GPU, %zu on the CPU", path, n_gpu,
               n_ref);
        size_t first_diff = n_ref;
        for (size_t k = 0; k < n_ref && k < n_gpu && first_diff == n_ref; k++)
            if (memcmp(&ref[k].time_ms, &gpu[k].time_ms, sizeof ref[k].time_ms) != 0 ||
                ref[k].gid != gpu[k].gid)
                first_diff = k;
        CHECKF(first_diff == n_ref, "%s: spike %zu differs: GPU gid %u at %.17g ms, CPU "
               "gid %u at %.17g ms", path, first_diff,
               first_diff < n_gpu ? gpu[first_diff].gid : 0u,
               first_diff < n_gpu ? gpu[first_diff].time_ms : 0.0,
               first_diff < n_ref ? ref[first_diff].gid : 0u,
               first_diff < n_ref ? ref[first_diff].time_ms : 0.0);
        printf("%s: %zu spikes, bitwise %s; CPU (%s) %.3f s, GPU%s %.3f s\n", path, n_ref,
               first_diff == n_ref && n_gpu == n_ref ? "equal" : "DIFFERENT",
               hb_backend_name(cpu), t_cpu, tasks ? " (tasks exchange)" : "", t_gpu);
        free(gpu);
    }
    /* a network that records (net_prob's soma voltages): the GPU's values bitwise the CPU's */
    size_t rows_cpu = 0, rows_gpu = 0;
    int cols_cpu = 0, cols_gpu = 0;
    double *rec_cpu = ok ? recorded_run(path, cpu, 0, &rows_cpu, &cols_cpu) : NULL;
    if (rec_cpu && cols_cpu > 0) {
        double *rec_gpu = recorded_run(path, HB_BACKEND_CUDA, 0, &rows_gpu, &cols_gpu);
        const size_t n = rows_cpu * (size_t)cols_cpu;
        const int same = rec_gpu && rows_gpu == rows_cpu && cols_gpu == cols_cpu &&
                         (n == 0 || !memcmp(rec_cpu, rec_gpu, n * sizeof *rec_cpu));
        CHECKF(same, "%s: the GPU's recorded values (%zu x %d) differ from the CPU's (%zu x %d)",
               path, rows_gpu, cols_gpu, rows_cpu, cols_cpu);
        printf("%s: %zu x %d recorded values, bitwise %s\n", path, rows_cpu, cols_cpu,
               same ? "equal" : "DIFFERENT");
        free(rec_gpu);
    }
    free(rec_cpu);
    /* a mixed group's cells in tiles of 8 and 16 lanes (sim.tree_tile): other rounds of
     * chains, the same bits */
    static const char *const tiles[2] = {"sim.tree_tile=8", "sim.tree_tile=16"};
    for (int k = 0; k < 2 && ok; k++) {
        CHECK_OK(hb_set_default_tuning(tiles[k]));
        hb_spike_t *got = NULL;
        size_t n_got = 0;
        double t_tile = 0.0;
        if (run(path, HB_BACKEND_CUDA, 0, &got, &n_got, &t_tile)) {
            int same = n_got == n_ref;
            for (size_t i = 0; i < n_ref && same; i++)
                same = got[i].gid == ref[i].gid &&
                       memcmp(&got[i].time_ms, &ref[i].time_ms, sizeof ref[i].time_ms) == 0;
            CHECKF(same, "%s: the GPU with %s gave other spikes than the CPU's", path, tiles[k]);
            printf("%s: GPU with %s: %zu spikes, bitwise %s, %.3f s\n", path, tiles[k], n_got,
                   same ? "equal" : "DIFFERENT", t_tile);
        }
        free(got);
        CHECK_OK(hb_set_default_tuning(NULL));
    }
    /* "best" with a candidate made slow (HB_BEST_TRIAL_COSTS, net_best.c's test hook):
     * the CPU's made slow, the GPU chosen; the GPU's made slow, never chosen; the spikes
     * the CPU's either way */
    static const char *const costs[2] = {"seq=1,omp=1", "cuda=1"};
    for (int k = 0; k < 2 && ok; k++) {
        setenv("HB_BEST_TRIAL_COSTS", costs[k], 1);
        hb_spike_t *got = NULL;
        size_t n_got = 0;
        double t_best = 0.0;
        if (run(path, HB_BACKEND_BEST, 0, &got, &n_got, &t_best)) {
            CHECKF(k == 0 ? last_backend == HB_BACKEND_CUDA : last_backend != HB_BACKEND_CUDA,
                   "%s: best with %s chose %s", path, costs[k], hb_backend_name(last_backend));
            int same = n_got == n_ref;
            for (size_t i = 0; i < n_ref && same; i++)
                same = got[i].gid == ref[i].gid &&
                       memcmp(&got[i].time_ms, &ref[i].time_ms, sizeof ref[i].time_ms) == 0;
            CHECKF(same, "%s: best (%s) gave other spikes than the CPU's", path,
                   hb_backend_name(last_backend));
            printf("%s: best with %s chose %s, %.3f s\n", path, costs[k],
                   hb_backend_name(last_backend), t_best);
        }
        free(got);
    }
    unsetenv("HB_BEST_TRIAL_COSTS");
    free(ref);
}

/* The user catalogue "pts" (TMSyn and STDPSyn, built by build-catalogue --cuda) in net_stdp's
 * network: spikes and recorded values on the GPU bitwise the CPU's, with the cells as a group of
 * copies (sim.mixed_copies=1: step_cat_kernel's split step) and in the mixed group
 * (tree_step_kernel's), plain and with the tasks exchange. TMSyn for the ExpSyn (builtin 0:
 * every point process a user's), or (builtin 1) the built-in ExpSyn kept beside the user's
 * STDPSyn on the soma's row, as tests/cli_net_stdp.sh runs it (its events received by
 * deliver_kernel, STDPSyn's handed to the launcher); the first differing value names its column
 * (5 a cell: v, wsyn, syn[0].g, syn[1].g, syn[1].i). Recorded every step, so the drive's events
 * (11, 11.75, ... ms) fall at samples' times: a sample is taken before the events of its time
 * (NEURON's order, cli_net_selfev's net_coincide), cell 0's syn[0].g at 11 ms the decayed value
 * and the jump in the step after, on the CPU and so, bitwise, on the GPU. */
static void user_points(const char *dir, hb_backend_t cpu, int builtin)
{
    char cmd[8192], so[256], path[256];
    snprintf(so, sizeof so, "%s/pts.so", dir);
    snprintf(path, sizeof path, "%s/pts.json", dir);
    snprintf(cmd, sizeof cmd,
             "mkdir -p %s/pts && cp %s/tests/nmodl/tm/TMSyn.mod %s/tests/nmodl/stdp/STDPSyn.mod "
             "%s/pts/ && %s build-catalogue %s/pts --cuda -o %s > /dev/null",
             dir, HB_SOURCE_DIR, HB_SOURCE_DIR, dir, HB_CLI, dir, so);
    const int built = system(cmd);
    CHECKF(built == 0, "building the user catalogue: '%s' exited %d", cmd, built);
    char ref[1024];
    snprintf(ref, sizeof ref, "%s/tests/reference/net_stdp.json", HB_SOURCE_DIR);
    FILE *in = fopen(ref, "r");
    CHECKF(in != NULL, "cannot read %s", ref);
    if (built != 0 || !in) {
        if (in) fclose(in);
        return;
    }
    static char text[1 << 20], out[1 << 20];
    const size_t len = fread(text, 1, sizeof text - 1, in);
    fclose(in);
    text[len] = '\0';
    /* the catalogue's path, TMSyn (depressing and facilitating) for the ExpSyn, and its g and
     * STDPSyn's g and i recorded beside v and wsyn */
    static const char *const from[] = {
        "\"stdp.so\"", "\"name\": \"ExpSyn\",\n     \"at\": \"soma\",\n     \"tau\": 2,",
        "\"syn[1].wsyn\"", "\"sample_dt\": 0.5"};
    enum { N_FROM = sizeof from / sizeof *from };
    char to[N_FROM][512];
    snprintf(to[0], sizeof to[0], "\"%s\"", so);
    if (builtin)
        snprintf(to[1], sizeof to[1], "%s", from[1]);
    else
        snprintf(to[1], sizeof to[1], "\"name\": \"TMSyn\", \"U\": 0.5, \"tau_rec\": 200, "
                 "\"tau_facil\": 30, \"at\": \"soma\", \"tau_1\": 2,");
    snprintf(to[2], sizeof to[2], "\"syn[1].wsyn\", \"syn[0].g\", \"syn[1].g\", \"syn[1].i\"");
    snprintf(to[3], sizeof to[3], "\"sample_dt\": 0.025");
    size_t at = 0;
    int replaced[N_FROM] = {0};
    for (const char *c = text; *c && at + 600 < sizeof out;) {
        int r = 0;
        for (; r < N_FROM; r++)
            if (!strncmp(c, from[r], strlen(from[r]))) break;
        if (r < N_FROM) {
            at += (size_t)snprintf(out + at, sizeof out - at, "%s", to[r]);
            c += strlen(from[r]);
            replaced[r]++;
        } else
            out[at++] = *c++;
    }
    out[at] = '\0';
    CHECKF(replaced[0] == 1 && replaced[1] == 1 && replaced[2] == 1 && replaced[3] == 1,
           "%s: expected one catalogue, one ExpSyn, one syn[1].wsyn, one sample_dt 0.5; found "
           "%d, %d, %d, %d", ref, replaced[0], replaced[1], replaced[2], replaced[3]);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(out, f);
    fclose(f);
    static const char *const tunings[2] = {"sim.mixed_copies=1", NULL};
    for (int k = 0; k < 2; k++) {
        CHECK_OK(hb_set_default_tuning(tunings[k]));
        const char *how = tunings[k] ? (builtin ? "a group of copies, built-in ExpSyn"
                                                : "a group of copies")
                                     : (builtin ? "the mixed group, built-in ExpSyn"
                                                : "the mixed group");
        hb_spike_t *sp_cpu = NULL;
        size_t n_cpu = 0, rows_cpu = 0;
        int cols_cpu = 0;
        double secs = 0.0;
        const int ok = run(path, cpu, 0, &sp_cpu, &n_cpu, &secs);
        double *rec_cpu = ok ? recorded_run(path, cpu, 0, &rows_cpu, &cols_cpu) : NULL;
        CHECKF(ok && n_cpu >= 40 && rec_cpu && rows_cpu == 4401 && cols_cpu == 30,
               "user points (%s): %zu spikes, %zu rows of %d columns on the CPU", how, n_cpu,
               rows_cpu, cols_cpu);
        /* cell 0's syn[0].g (column 2) at 10.975, 11 (the drive's event) and 11.025 ms */
        const double *g0 = rec_cpu && rows_cpu == 4401 && cols_cpu == 30 ? rec_cpu + 439 * 30 + 2
                                                                         : NULL;
        CHECKF(g0 && g0[30] <= g0[0] && g0[60] > g0[30] + 1e-3,
               "user points (%s): cell 0's syn[0].g at 10.975, 11, 11.025 ms: %.17g %.17g %.17g; "
               "expected the event of 11 ms after its sample (decayed, then a jump)", how,
               g0 ? g0[0] : NAN, g0 ? g0[30] : NAN, g0 ? g0[60] : NAN);
        for (int tasks = 0; tasks < 2 && ok && rec_cpu; tasks++) {
            hb_spike_t *sp = NULL;
            size_t n = 0, rows = 0;
            int cols = 0;
            int same = run(path, HB_BACKEND_CUDA, tasks, &sp, &n, &secs) && n == n_cpu;
            for (size_t i = 0; same && i < n; i++)
                same = sp[i].gid == sp_cpu[i].gid &&
                       !memcmp(&sp[i].time_ms, &sp_cpu[i].time_ms, sizeof sp[i].time_ms);
            double *rec = recorded_run(path, HB_BACKEND_CUDA, tasks, &rows, &cols);
            size_t differ = 0, first = 0;
            const size_t total = rows_cpu * (size_t)cols_cpu;
            for (size_t i = 0; rec && rows == rows_cpu && cols == cols_cpu && i < total; i++)
                if (memcmp(&rec[i], &rec_cpu[i], sizeof *rec) != 0 && differ++ == 0) first = i;
            const int rec_same = rec && rows == rows_cpu && cols == cols_cpu && differ == 0;
            CHECKF(same, "user points (%s%s): %zu spikes on the GPU, %zu on the CPU, or others",
                   how, tasks ? ", tasks" : "", n, n_cpu);
            CHECKF(rec_same, "user points (%s%s): GPU %zu x %d recorded, CPU %zu x %d; %zu values "
                   "differ, the first row %zu column %zu: GPU %.17g, CPU %.17g", how,
                   tasks ? ", tasks" : "", rows, cols, rows_cpu, cols_cpu, differ,
                   first / (size_t)(cols_cpu ? cols_cpu : 1),
                   first % (size_t)(cols_cpu ? cols_cpu : 1), differ ? rec[first] : 0.0,
                   differ ? rec_cpu[first] : 0.0);
            printf("user points (%s, STDPSyn) in %s%s: %zu spikes, %zu x %d recorded, GPU "
                   "bitwise %s\n", builtin ? "ExpSyn" : "TMSyn", how, tasks ? " (tasks exchange)" : "", n_cpu, rows_cpu,
                   cols_cpu, same && rec_same ? "equal" : "DIFFERENT");
            free(sp);
            free(rec);
        }
        free(sp_cpu);
        free(rec_cpu);
    }
    CHECK_OK(hb_set_default_tuning(NULL));
    unlink(path);
    snprintf(cmd, sizeof cmd, "rm -rf %s/pts %s/pts.so %s/pts.src", dir, dir, dir);
    CHECK(system(cmd) == 0);
}

/* Point processes that send themselves events (docs/mechanisms.md section 10), user catalogues
 * built by build-catalogue --cuda: tests/nmodl/selfev (PulseSyn: net_send from INITIAL and
 * NET_RECEIVE, flags; RetrigSyn: net_move; AhpWatch: WATCH) in tests/reference/net_selfev.json
 * and net_coincide.json (every event at a sample's time), tests/nmodl/hetero_self (HeteroSyn:
 * FOR_NETCONS in a self-event's NET_RECEIVE) and tests/nmodl/hetero (FOR_NETCONS with no
 * self-event: its events through the rounds too) in net_hetero.json, and tests/nmodl/netev
 * (SpikeOut: WATCH then net_event; Relay: net_event on every third event; each its cell's spike
 * source, so the rounds' net_event requests are the network's spikes) in net_netev.json, and
 * tests/nmodl/artificial (Pulses: net_send from INITIAL, net_event on its self-events;
 * LeakyFire: net_event and a refractory self-event; ARTIFICIAL_CELLs, each its one-row host's
 * point process and spike source, beside hh cells with the built-in ExpSyn) in
 * net_artificial.json, recorded here: on the GPU (the host's queue in rounds, the catalogues'
 * net_receive_self and watch kernels) spikes and every recorded value bitwise the CPU's, in a
 * group of copies and the mixed group, plain and with the tasks exchange. */
static void self_events(const char *dir, hb_backend_t cpu)
{
    /* net_netev.json records nothing itself: the ring cells' v, ExpSyn's g and SpikeOut's
     * count, the relay's count and its relays */
    static const char netev_record[] =
        "\"record\": [{\"gids\": [\"0-3\"], \"variables\": [\"v\", \"syn[0].g\", "
        "\"syn[1].nspike\"], \"sample_dt\": 0.25}, {\"gids\": [4], \"variables\": [\"v\", "
        "\"syn[0].n\", \"syn[0].nrelay\"], \"sample_dt\": 0.25}],";
    /* net_artificial.json neither: the hh cells' v and ExpSyn's g, Pulses' count and its host's
     * v (v_init throughout), LeakyFire's level, last change and refractory flag */
    static const char artificial_record[] =
        "\"record\": [{\"gids\": [\"0-3\"], \"variables\": [\"v\", \"syn[0].g\"], "
        "\"sample_dt\": 0.25}, {\"gids\": [\"4-5\"], \"variables\": [\"v\", \"syn[0].sent\"], "
        "\"sample_dt\": 0.25}, {\"gids\": [\"6-7\"], \"variables\": [\"syn[0].u\", "
        "\"syn[0].tlast\", \"syn[0].hold\"], \"sample_dt\": 0.25}],";
    static const struct {
        const char *mods, *json, *so; /* tests/nmodl/MODS, tests/reference/JSON.json, its "SO" */
        const char *record;           /* a "record" section put first in the document, or NULL */
    } nets[] = {{"selfev", "net_selfev", "selfev.so", NULL},
                {"selfev", "net_coincide", "selfev.so", NULL},
                {"hetero_self", "net_hetero", "hetero.so", NULL},
                {"hetero", "net_hetero", "hetero.so", NULL},
                {"netev", "net_netev", "netev.so", netev_record},
                {"artificial", "net_artificial", "artificial.so", artificial_record}};
    char cmd[8192], so[256], path[256];
    for (size_t f = 0; f < sizeof nets / sizeof *nets; f++) {
        snprintf(so, sizeof so, "%s/%s.so", dir, nets[f].mods);
        snprintf(cmd, sizeof cmd,
                 "rm -rf %s/%s && mkdir -p %s/%s && cp %s/tests/nmodl/%s/*.mod %s/%s/ && %s "
                 "build-catalogue %s/%s --cuda -o %s > /dev/null",
                 dir, nets[f].mods, dir, nets[f].mods, HB_SOURCE_DIR, nets[f].mods, dir,
                 nets[f].mods, HB_CLI, dir, nets[f].mods, so);
        const int built = system(cmd);
        CHECKF(built == 0, "building the user catalogue: '%s' exited %d", cmd, built);
        if (built != 0) continue;
        char ref[1024], name[64];
        snprintf(ref, sizeof ref, "%s/tests/reference/%s.json", HB_SOURCE_DIR, nets[f].json);
        snprintf(path, sizeof path, "%s/%s.json", dir, nets[f].json);
        snprintf(name, sizeof name, "\"%s\"", nets[f].so);
        FILE *in = fopen(ref, "r");
        CHECKF(in != NULL, "cannot read %s", ref);
        if (!in) continue;
        static char text[1 << 20], out[1 << 20];
        const size_t len = fread(text, 1, sizeof text - 1, in);
        fclose(in);
        text[len] = '\0';
        const char *at = strstr(text, name);
        CHECKF(at != NULL, "%s: expected the catalogue %s", ref, name);
        if (!at) continue;
        const char *open = strchr(text, '{');
        CHECKF(open && open < at, "%s: expected a JSON object", ref);
        if (!open || open > at) continue;
        snprintf(out, sizeof out, "%.*s%s%.*s\"%s\"%s", (int)(open + 1 - text), text,
                 nets[f].record ? nets[f].record : "", (int)(at - open - 1), open + 1, so,
                 at + strlen(name));
        FILE *o = fopen(path, "w");
        CHECK(o != NULL);
        if (!o) continue;
        fputs(out, o);
        fclose(o);
        static const char *const tunings[2] = {"sim.mixed_copies=1", NULL};
        for (int k = 0; k < 2; k++) {
            CHECK_OK(hb_set_default_tuning(tunings[k]));
            const char *how = tunings[k] ? "a group of copies" : "the mixed group";
            hb_spike_t *sp_cpu = NULL;
            size_t n_cpu = 0, rows_cpu = 0;
            int cols_cpu = 0;
            double secs = 0.0;
            const int ok = run(path, cpu, 0, &sp_cpu, &n_cpu, &secs);
            double *rec_cpu = ok ? recorded_run(path, cpu, 0, &rows_cpu, &cols_cpu) : NULL;
            CHECKF(ok && n_cpu > 0 && rec_cpu && rows_cpu > 1 && cols_cpu > 0,
                   "self-events %s (%s): %zu spikes, %zu rows of %d columns on the CPU",
                   nets[f].json, how, n_cpu, rows_cpu, cols_cpu);
            for (int tasks = 0; tasks < 2 && ok && rec_cpu; tasks++) {
                hb_spike_t *sp = NULL;
                size_t n = 0, rows = 0;
                int cols = 0;
                int same = run(path, HB_BACKEND_CUDA, tasks, &sp, &n, &secs) && n == n_cpu;
                for (size_t i = 0; same && i < n; i++)
                    same = sp[i].gid == sp_cpu[i].gid &&
                           !memcmp(&sp[i].time_ms, &sp_cpu[i].time_ms, sizeof sp[i].time_ms);
                double *rec = recorded_run(path, HB_BACKEND_CUDA, tasks, &rows, &cols);
                size_t differ = 0, first = 0;
                const size_t total = rows_cpu * (size_t)cols_cpu;
                for (size_t i = 0; rec && rows == rows_cpu && cols == cols_cpu && i < total; i++)
                    if (memcmp(&rec[i], &rec_cpu[i], sizeof *rec) != 0 && differ++ == 0) first = i;
                const int rec_same = rec && rows == rows_cpu && cols == cols_cpu && differ == 0;
                CHECKF(same, "self-events %s (%s%s): %zu spikes on the GPU, %zu on the CPU, or "
                       "others", nets[f].json, how, tasks ? ", tasks" : "", n, n_cpu);
                CHECKF(rec_same, "self-events %s (%s%s): GPU %zu x %d recorded, CPU %zu x %d; %zu "
                       "values differ, the first row %zu column %zu: GPU %.17g, CPU %.17g",
                       nets[f].json, how, tasks ? ", tasks" : "", rows, cols, rows_cpu, cols_cpu,
                       differ, first / (size_t)(cols_cpu ? cols_cpu : 1),
                       first % (size_t)(cols_cpu ? cols_cpu : 1), differ ? rec[first] : 0.0,
                       differ ? rec_cpu[first] : 0.0);
                printf("self-events %s in %s%s: %zu spikes, %zu x %d recorded, GPU bitwise %s\n",
                       nets[f].json, how, tasks ? " (tasks exchange)" : "", n_cpu, rows_cpu,
                       cols_cpu, same && rec_same ? "equal" : "DIFFERENT");
                free(sp);
                free(rec);
            }
            free(sp_cpu);
            free(rec_cpu);
        }
        CHECK_OK(hb_set_default_tuning(NULL));
        unlink(path);
        snprintf(cmd, sizeof cmd, "rm -rf %s/%s %s/%s.so %s/%s.src", dir, nets[f].mods, dir,
                 nets[f].mods, dir, nets[f].mods);
        CHECK(system(cmd) == 0);
    }
}

int main(int argc, char **argv)
{
    if (!hb_backend_available(HB_BACKEND_CUDA)) { /* ctest: SKIP_RETURN_CODE 77 */
        printf("no CUDA device: skipped\n");
        return 77;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (argc < 2 && !getenv("HB_TEST_USER_POINTS")) {
        fprintf(stderr, "usage: test_gpu_net NETWORK.json|MORPHOLOGY_FOLDER...\n");
        return 2;
    }
    const hb_backend_t cpu = hb_backend_available(HB_BACKEND_OMP) ? HB_BACKEND_OMP : HB_BACKEND_SEQ;
    char dir[] = "/tmp/hb_gpu_netXXXXXX", generated[64];
    if (!mkdtemp(dir)) {
        CHECKF(0, "cannot make a temporary folder");
        return check_summary("test_gpu_net");
    }
    user_points(dir, cpu, 0);
    user_points(dir, cpu, 1); /* a built-in point process beside a user's (cli_net_stdp.sh) */
    self_events(dir, cpu);
    if (getenv("HB_TEST_USER_POINTS")) { /* this part alone (seconds) */
        rmdir(dir);
        return check_summary("test_gpu_net (user point processes)");
    }
    bad_connections();
    recording(dir, cpu);
    for (int a = 1; a < argc; a++) {
        struct stat info;
        if (!(stat(argv[a], &info) == 0 && S_ISDIR(info.st_mode))) {
            compare(argv[a], cpu);
            continue;
        }
        /* the folder's SWC files' network: one cell of each (the mixed group on both), then
         * three copies of each (groups of copies on the CPU, the mixed group on the GPU) */
        for (int copies = 1; copies <= 3; copies += 2) {
            snprintf(generated, sizeof generated, "%s/net.json", dir);
            const int cells = net_morphologies_write(argv[a], generated, 0.01, copies);
            CHECKF(cells > 0, "%s: no SWC file to make a network of", argv[a]);
            if (cells) {
                printf("%s: a network of its SWC files, %d cells (%d of each) (%s)\n", argv[a],
                       cells, copies, generated);
                compare(generated, cpu);
            }
            unlink(generated); /* also a file half written */
        }
    }
    rmdir(dir);
    return check_summary("test_gpu_net");
}
