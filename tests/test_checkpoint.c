/*
 * Checkpoints (hb_sim_save/load, hb_net_save/load): a run stopped half-way, saved, loaded into
 * a fresh simulation or network and finished has the same bits (traces, spikes) as one that
 * ran through; a truncated, corrupt or foreign checkpoint is refused before anything changes;
 * the state is saved in the model's order, so a checkpoint of one thread count restarts on
 * another (blocks of another width). Runs on any rank count (the MPI list runs it on 2).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hinesbatch.h"

/* Two copies of a ball and stick (hh soma, pas dendrite, an IClamp each, one with an ExpSyn),
 * interpolated spike times; %s: extra options. */
static const char cell_json[] =
    "{\"t_stop\": %g, \"dt\": 0.025, \"sample_dt\": 0.05, \"spike_time\": \"interpolate\", %s"
    " \"cells\": [{\"name\": \"bs\", \"count\": 3, \"sections\": ["
    "  {\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
    "  {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
    " \"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 11}],"
    " \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"},"
    "  {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": -65}],"
    " \"stimuli\": [{\"type\": \"iclamp\", \"at\": {\"section\": \"dend\", \"x\": 1}, \"del\": 5,"
    "  \"dur\": 80, \"amp\": %g}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": 0},"
    "  {\"name\": \"tip\", \"at\": {\"section\": \"dend\", \"x\": 1}}]}]}";

static hb_sim_t *make_sim(double t_stop, double amp, const char *extra)
{
    char text[4096];
    snprintf(text, sizeof text, cell_json, t_stop, extra, amp);
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_parse_json(text, strlen(text), "checkpoint test", NULL, &sim));
    return sim;
}

/* The same samples and spikes, bit for bit, of every probe. */
static int same_records(const hb_sim_t *a, const hb_sim_t *b)
{
    const double *x, *y;
    int n, m;
    hb_sim_sample_times(a, &x, &n);
    hb_sim_sample_times(b, &y, &m);
    if (n != m || (n && memcmp(x, y, (size_t)n * sizeof *x) != 0)) return 0;
    for (int p = 0; p < hb_sim_probe_count(a); p++) {
        hb_sim_probe_trace(a, p, &x, &n);
        hb_sim_probe_trace(b, p, &y, &m);
        if (n != m || (n && memcmp(x, y, (size_t)n * sizeof *x) != 0)) return 0;
        hb_sim_spikes(a, p, &x, &n);
        hb_sim_spikes(b, p, &y, &m);
        if (n != m || (n && memcmp(x, y, (size_t)n * sizeof *x) != 0)) return 0;
    }
    return 1;
}

/* A file's bytes (rewound). */
static unsigned char *slurp(FILE *f, long *size)
{
    fseek(f, 0, SEEK_END);
    *size = ftell(f);
    rewind(f);
    unsigned char *p = check_malloc((size_t)*size + 1);
    CHECK(fread(p, 1, (size_t)*size, f) == (size_t)*size);
    rewind(f);
    return p;
}

static FILE *with_bytes(const unsigned char *p, long size)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    CHECK(fwrite(p, 1, (size_t)size, f) == (size_t)size);
    rewind(f);
    return f;
}

static void test_sim(void)
{
    const long steps = 4000; /* 100 ms */
    hb_sim_t *whole = make_sim(100.0, 0.3, ""), *first = make_sim(100.0, 0.3, "");
    CHECK_OK(hb_sim_run(whole));
    int spikes = 0;
    const double *t;
    hb_sim_spikes(whole, 0, &t, &spikes);
    CHECKF(spikes >= 3, "%d spikes: the test needs a few", spikes);

    /* half-way (not a sample boundary, mid-spike-train), saved, loaded elsewhere */
    CHECK_OK(hb_sim_init(first));
    CHECK_OK(hb_sim_advance(first, 1601));
    FILE *f = tmpfile();
    CHECK_OK(hb_sim_save(first, f, "first"));
    CHECK_OK(hb_sim_advance(first, steps - 1601));
    CHECK(same_records(whole, first));
    long size = 0;
    unsigned char *bytes = slurp(f, &size);
    CHECK(size > 1000);

    hb_sim_t *second = make_sim(100.0, 0.3, "");
    CHECK_OK(hb_sim_load(second, f, "first"));
    CHECKF(fabs(hb_sim_time(second) - 1601 * 0.025) < 1e-12, "t = %g", hb_sim_time(second));
    CHECK_OK(hb_sim_advance(second, steps - 1601));
    CHECK(same_records(whole, second)); /* records since the save were carried along */
    fclose(f);

    /* refused: truncated (at several places), corrupt, another model, other options */
    hb_sim_t *victim = make_sim(100.0, 0.3, "");
    CHECK_OK(hb_sim_init(victim));
    CHECK_OK(hb_sim_advance(victim, 10));
    const long cuts[] = {0, 5, 20, 40, size / 2, size - 1};
    for (size_t k = 0; k < sizeof cuts / sizeof *cuts; k++) {
        f = with_bytes(bytes, cuts[k]);
        const hb_status_t st = hb_sim_load(victim, f, "cut.bin");
        CHECKF(st == HB_ERR_PARSE, "cut at %ld: %s", cuts[k], hb_status_name(st));
        CHECKF(strstr(hb_last_error(), "cut.bin") &&
                   (strstr(hb_last_error(), "truncated") || strstr(hb_last_error(), "not a hinesbatch")),
               "cut at %ld: %s", cuts[k], hb_last_error());
        fclose(f);
    }
    for (long at = 40; at < size; at += size / 7) { /* one bit flipped */
        bytes[at] ^= 0x10;
        f = with_bytes(bytes, size);
        const hb_status_t st = hb_sim_load(victim, f, "flip.bin");
        CHECKF(st == HB_ERR_PARSE && strstr(hb_last_error(), "corrupt"), "bit at %ld: %s", at,
               hb_last_error());
        bytes[at] ^= 0x10;
        fclose(f);
    }
    CHECKF(fabs(hb_sim_time(victim) - 10 * 0.025) < 1e-12, "a refused load changed the time");
    CHECK_OK(hb_sim_advance(victim, 1)); /* and the simulation goes on */

    hb_sim_t *other = make_sim(100.0, 0.31, ""); /* another IClamp amplitude */
    f = with_bytes(bytes, size);
    hb_status_t st = hb_sim_load(other, f, "x.bin");
    CHECKF(st == HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "another model"), "%s",
           hb_last_error());
    fclose(f);
    hb_sim_destroy(other);
    other = make_sim(120.0, 0.3, ""); /* another t_stop */
    f = with_bytes(bytes, size);
    st = hb_sim_load(other, f, "x.bin");
    CHECKF(st == HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "other options"), "%s",
           hb_last_error());
    fclose(f);
    hb_sim_destroy(other);

    /* an uninitialised simulation has nothing to save */
    other = make_sim(100.0, 0.3, "");
    f = tmpfile();
    CHECK(hb_sim_save(other, f, NULL) == HB_ERR_INVALID_VALUE);
    fclose(f);
    hb_sim_destroy(other);

    free(bytes);
    hb_sim_destroy(victim);
    hb_sim_destroy(whole);
    hb_sim_destroy(first);
    hb_sim_destroy(second);
}

/* Ball and sticks with the bbp catalogue's channels and CaDynamics_E2 writing cai in the soma
 * (tests/neuron_cat_bbp.py's set), two shapes (3 and 2 cells, the second's NaTs2_t other), a
 * pulse before the checkpoint and one after;
 * %s: extra options, %s: a mechanism more in the soma of the first. */
static const char cat_json[] =
    "{\"t_stop\": 60, \"dt\": 0.025, \"celsius\": 34, \"sample_dt\": 0.05, %s \"cells\": ["
    " {\"name\": \"a\", \"count\": 3, %s},"
    " {\"name\": \"b\", \"count\": 2, %s}]}";
static const char cat_cell[] =
    "\"sections\": ["
    "  {\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
    "  {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
    " \"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": %d}],"
    " \"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65},"
    "  {\"name\": \"NaTs2_t\", \"region\": \"soma\", \"gNaTs2_tbar\": %g},"
    "  {\"name\": \"K_Pst\", \"region\": \"soma\", \"gK_Pstbar\": 0.1},"
    "  {\"name\": \"SKv3_1\", \"region\": \"soma\", \"gSKv3_1bar\": 0.5},"
    "  {\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\", \"gCa_HVAbar\": 0.001},"
    "  {\"name\": \"SK_E2\", \"region\": \"soma\", \"gSK_E2bar\": 0.005},"
    "  {\"name\": \"CaDynamics_E2\", \"region\": \"soma\", \"gamma\": 0.5},"
    "  {\"name\": \"bbp::Ih\", \"region\": \"dend\", \"gIhbar\": 2e-4},"
    "  {\"name\": \"bbp::Ca_HVA\", \"region\": \"dend\", \"gCa_HVAbar\": 5e-4}%s],"
    " \"ions\": [{\"region\": \"soma\", \"ek\": -85}],"
    " \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 2, \"dur\": 2, \"amp\": 0.4},"
    "  {\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 35, \"dur\": 2, \"amp\": 1}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": 0},"
    "  {\"name\": \"tip\", \"at\": {\"section\": \"dend\", \"x\": 1}}]";

static hb_sim_t *make_cat_sim(const char *options, const char *extra_mech)
{
    char a[4096], b[4096], text[10000];
    snprintf(a, sizeof a, cat_cell, 11, 0.9, extra_mech);
    snprintf(b, sizeof b, cat_cell, 7, 0.7, "");
    snprintf(text, sizeof text, cat_json, options, a, b);
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_parse_json(text, strlen(text), "catalogue checkpoint test", NULL, &sim));
    return sim;
}

/* Catalogue mechanisms' states, assigned values and ions (cai written by CaDynamics_E2) carried
 * by a checkpoint: a run saved part-way (Euler and Crank-Nicolson, one thread and two) and
 * finished in a fresh simulation has the uninterrupted run's bits; a checkpoint of other
 * mechanisms is refused naming them. */
static void test_cat_sim(const char *options)
{
    const long steps = 2400, at = 1001;
    hb_sim_t *whole = make_cat_sim(options, ""), *first = make_cat_sim(options, "");
    if (!whole || !first) return;
    CHECK_OK(hb_sim_run(whole));
    int spikes = 0;
    const double *t;
    hb_sim_spikes(whole, 0, &t, &spikes);
    CHECKF(spikes >= 2, "%s: %d spikes: the test needs a few", options, spikes);
    CHECK_OK(hb_sim_init(first));
    CHECK_OK(hb_sim_advance(first, at));
    FILE *f = tmpfile();
    CHECK_OK(hb_sim_save(first, f, "cat"));
    hb_sim_t *second = make_cat_sim(options, "");
    rewind(f);
    CHECK_OK(hb_sim_load(second, f, "cat"));
    CHECK_OK(hb_sim_advance(second, steps - at));
    CHECKF(same_records(whole, second), "%s: the restored run's records differ", options);

    hb_sim_t *other = make_cat_sim(options, ",{\"name\": \"bbp::Im\", \"region\": \"soma\"}");
    rewind(f);
    const hb_status_t st = other ? hb_sim_load(other, f, "cat.bin") : HB_ERR_INVALID_VALUE;
    CHECKF(st == HB_ERR_INVALID_VALUE &&
               strstr(hb_last_error(), "group 0's catalogue mechanisms in the checkpoint: "
                                       "[CaDynamics_E2, Ca_HVA, Ih, K_Pst, NaTs2_t, SK_E2, SKv3_1]; "
                                       "in this simulation: [CaDynamics_E2, Ca_HVA, Ih, Im, K_Pst,"),
           "%s", hb_last_error());
    fclose(f);
    printf("catalogue checkpoint (%s): %d spikes, the restored run bitwise the whole\n", options,
           spikes);
    hb_sim_destroy(other);
    hb_sim_destroy(whole);
    hb_sim_destroy(first);
    hb_sim_destroy(second);
}

/* A ring of 16 ball and sticks kicked by noisy NetStims (Poisson draws), 4 of them. */
static const char net_json[] =
    "{\"t_stop\": 120, \"dt\": 0.025, \"cells\": [{\"name\": \"bs\", \"count\": 16, \"sections\": ["
    "  {\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
    "  {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
    " \"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 5}],"
    " \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"},"
    "  {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": -65}],"
    " \"synapses\": [{\"type\": \"expsyn\", \"at\": {\"section\": \"dend\", \"x\": 0.5}, \"tau\": 2, \"e\": 0},"
    "  {\"type\": \"exp2syn\", \"at\": \"soma\", \"tau1\": 0.5, \"tau2\": 3, \"e\": 0}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}],"
    " \"network\": {\"sources\": [{\"name\": \"kick\", \"count\": 4, \"start\": 1, \"interval\": 8,"
    "  \"number\": 40, \"noise\": 0.7, \"seed\": %d}],"
    "  \"ring\": [{\"first\": 0, \"count\": 16, \"synapse\": 0, \"weight\": 0.05, \"delay\": 4}],"
    "  \"connections\": [{\"source\": 16, \"target\": 0, \"synapse\": 1, \"weight\": 0.02, \"delay\": 1},"
    "   {\"source\": 17, \"target\": 5, \"synapse\": 1, \"weight\": 0.02, \"delay\": 1.5},"
    "   {\"source\": 18, \"target\": 9, \"synapse\": 1, \"weight\": 0.02, \"delay\": 2},"
    "   {\"source\": 19, \"target\": 13, \"synapse\": 1, \"weight\": 0.02, \"delay\": 3}]}}";

static hb_net_t *make_net(hb_comm_t *comm, int seed, int overlap)
{
    char text[4096];
    snprintf(text, sizeof text, net_json, seed);
    hb_net_t *net = NULL;
    CHECK_OK(hb_net_parse_json(text, strlen(text), "checkpoint net", NULL, comm, &net));
    if (net) hb_net_set_overlap(net, overlap);
    return net;
}

static int same_spikes(const hb_net_t *a, const hb_net_t *b)
{
    const hb_spike_t *x, *y;
    size_t n, m;
    hb_net_spikes(a, &x, &n);
    hb_net_spikes(b, &y, &m);
    return n == m && (n == 0 || memcmp(x, y, n * sizeof *x) == 0);
}

static void test_net(hb_comm_t *comm, int overlap)
{
    hb_net_t *whole = make_net(comm, 3, overlap), *first = make_net(comm, 3, overlap);
    if (!whole || !first) return;
    CHECK_OK(hb_net_run(whole));
    const hb_spike_t *s;
    size_t n;
    hb_net_spikes(whole, &s, &n);
    CHECKF(n > 60, "%zu spikes: the test needs activity", n);

    CHECK_OK(hb_net_init(first));
    CHECK_OK(hb_net_advance(first, 47.3));
    FILE *f = tmpfile();
    CHECK_OK(hb_net_save(first, f, "net"));
    const double t_saved = hb_net_time(first);
    CHECK_OK(hb_net_advance(first, 120.0));
    CHECK(same_spikes(whole, first));

    hb_net_t *second = make_net(comm, 3, overlap);
    rewind(f);
    CHECK_OK(hb_net_load(second, f, "net"));
    CHECKF(hb_net_time(second) == t_saved, "t = %g; saved at %g", hb_net_time(second), t_saved);
    CHECK_OK(hb_net_advance(second, 120.0));
    CHECKF(same_spikes(whole, second), "overlap %d: the restored run's spikes differ", overlap);

    /* another network (another seed of the sources) is refused on every rank (a rank whose
     * share did not change learns it from the others) */
    hb_net_t *other = make_net(comm, 4, overlap);
    rewind(f);
    const hb_status_t st = hb_net_load(other, f, "net");
    CHECKF(st == HB_ERR_INVALID_VALUE && (strstr(hb_last_error(), "another network") ||
                                          strstr(hb_last_error(), "another rank")),
           "%s", hb_last_error());
    CHECK(hb_net_advance(other, 10.0) == HB_ERR_INVALID_VALUE); /* not initialised */
    /* a truncated one on one rank: every rank refuses */
    long size = 0;
    unsigned char *bytes = slurp(f, &size);
    const int rank = hb_comm_rank(comm), ranks = hb_comm_size(comm);
    FILE *g = with_bytes(bytes, rank == ranks - 1 ? size - 9 : size);
    const hb_status_t cut = hb_net_load(second, g, "cut");
    CHECKF(cut != HB_SUCCESS, "a truncated checkpoint on rank %d was accepted", ranks - 1);
    if (rank == ranks - 1) CHECKF(strstr(hb_last_error(), "truncated"), "%s", hb_last_error());
    else CHECKF(strstr(hb_last_error(), "another rank"), "%s", hb_last_error());
    fclose(g);
    free(bytes);
    fclose(f);
    hb_net_destroy(other);
    hb_net_destroy(whole);
    hb_net_destroy(first);
    hb_net_destroy(second);
}

/* net_json's ring with cat_cell's catalogue channels in place of hh (CaDynamics_E2 writing
 * cai): their state crosses the checkpoint on every rank. */
static const char net_cat_json[] =
    "{\"t_stop\": 120, \"dt\": 0.025, \"celsius\": 34, \"cells\": [{\"name\": \"bs\", \"count\": 16, \"sections\": ["
    "  {\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
    "  {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
    " \"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 5}],"
    " \"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65},"
    "  {\"name\": \"NaTs2_t\", \"region\": \"soma\", \"gNaTs2_tbar\": 0.9},"
    "  {\"name\": \"K_Pst\", \"region\": \"soma\", \"gK_Pstbar\": 0.1},"
    "  {\"name\": \"SKv3_1\", \"region\": \"soma\", \"gSKv3_1bar\": 0.5},"
    "  {\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\", \"gCa_HVAbar\": 0.001},"
    "  {\"name\": \"SK_E2\", \"region\": \"soma\", \"gSK_E2bar\": 0.005},"
    "  {\"name\": \"CaDynamics_E2\", \"region\": \"soma\", \"gamma\": 0.5},"
    "  {\"name\": \"bbp::Ih\", \"region\": \"dend\", \"gIhbar\": 2e-4}],"
    " \"ions\": [{\"region\": \"soma\", \"ek\": -85}],"
    " \"synapses\": [{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}],"
    " \"network\": {\"sources\": [{\"name\": \"kick\", \"count\": 4, \"start\": 1, \"interval\": 8,"
    "  \"number\": 40, \"noise\": 0.7, \"seed\": 3}],"
    "  \"ring\": [{\"first\": 0, \"count\": 16, \"synapse\": 0, \"weight\": %g, \"delay\": 4}],"
    "  \"connections\": [{\"source\": 16, \"target\": 0, \"synapse\": 0, \"weight\": %g, \"delay\": 1},"
    "   {\"source\": 17, \"target\": 5, \"synapse\": 0, \"weight\": %g, \"delay\": 1.5},"
    "   {\"source\": 18, \"target\": 9, \"synapse\": 0, \"weight\": %g, \"delay\": 2},"
    "   {\"source\": 19, \"target\": 13, \"synapse\": 0, \"weight\": %g, \"delay\": 3}]}}";

static void test_cat_net(hb_comm_t *comm, double w)
{
    char text[8192];
    snprintf(text, sizeof text, net_cat_json, w, w, w, w, w);
    hb_net_t *whole = NULL, *first = NULL, *second = NULL;
    CHECK_OK(hb_net_parse_json(text, strlen(text), "catalogue net", NULL, comm, &whole));
    CHECK_OK(hb_net_parse_json(text, strlen(text), "catalogue net", NULL, comm, &first));
    CHECK_OK(hb_net_parse_json(text, strlen(text), "catalogue net", NULL, comm, &second));
    if (!whole || !first || !second) return;
    CHECK_OK(hb_net_run(whole));
    const hb_spike_t *s;
    size_t n;
    hb_net_spikes(whole, &s, &n);
    size_t cells = 0; /* spikes of the cable cells (gids below 16), not the sources' */
    for (size_t k = 0; k < n; k++) cells += s[k].gid < 16;
    CHECKF(cells > 16, "%zu cell spikes: the test needs activity", cells);
    CHECK_OK(hb_net_init(first));
    CHECK_OK(hb_net_advance(first, 47.3));
    FILE *f = tmpfile();
    CHECK_OK(hb_net_save(first, f, "catnet"));
    rewind(f);
    CHECK_OK(hb_net_load(second, f, "catnet"));
    CHECK_OK(hb_net_advance(second, 120.0));
    CHECKF(same_spikes(whole, second), "the restored catalogue network's spikes differ");
    if (hb_comm_rank(comm) == 0)
        printf("catalogue network checkpoint on %d rank(s): %zu cell spikes, restored bitwise\n",
               hb_comm_size(comm), cells);
    fclose(f);
    hb_net_destroy(whole);
    hb_net_destroy(first);
    hb_net_destroy(second);
}

/* Another rank count (hb_net_load_ranks): the catalogue network checkpointed on this
 * communicator's ranks restarts on one rank (S -> 1), and one rank's checkpoint on all of them
 * (1 -> S), to the run through's spikes; under mpirun (the MPI list: 2 ranks) both cross rank
 * counts. Each rank writes its file where all ranks find it (the largest pid names the set). */
static void test_ranks(hb_comm_t *comm)
{
    hb_comm_t *solo = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &solo));
    char text[8192];
    snprintf(text, sizeof text, net_cat_json, 0.05, 0.05, 0.05, 0.05, 0.05);
    hb_net_t *whole = NULL, *part = NULL, *one = NULL, *back = NULL, *first = NULL;
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, solo, &whole));
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, comm, &part));
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, solo, &one));
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, solo, &first));
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, comm, &back));
    if (!whole || !part || !one || !first || !back) return;
    CHECK_OK(hb_net_run(whole));
    const int rank = hb_comm_rank(comm), ranks = hb_comm_size(comm);
    int set = 0;
    CHECK_OK(hb_comm_max(comm, (int)getpid(), &set));
    const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
    char path[4][512], solo_path[512];
    for (int r = 0; r < ranks && r < 4; r++)
        snprintf(path[r], sizeof path[r], "%s/hb_test_ranks_%d.%d.bin", dir, set, r);
    snprintf(solo_path, sizeof solo_path, "%s/hb_test_ranks_%d.solo%d.bin", dir, set, rank);
    CHECK(ranks <= 4);
    /* S ranks to 47.3 ms, each its file */
    CHECK_OK(hb_net_init(part));
    CHECK_OK(hb_net_advance(part, 47.3));
    FILE *f = fopen(path[rank], "wb");
    CHECK(f != NULL);
    if (f) {
        CHECK_OK(hb_net_save(part, f, path[rank]));
        fclose(f);
    }
    /* one rank to 47.3 ms, its file (each rank its own copy) */
    CHECK_OK(hb_net_init(first));
    CHECK_OK(hb_net_advance(first, 47.3));
    if ((f = fopen(solo_path, "wb"))) {
        CHECK_OK(hb_net_save(first, f, solo_path));
        fclose(f);
    }
    int done = 0;
    CHECK_OK(hb_comm_max(comm, 1, &done)); /* every rank's file written */
    FILE *files[4] = {NULL, NULL, NULL, NULL};
    const char *names[4] = {NULL, NULL, NULL, NULL};
    for (int r = 0; r < ranks && r < 4; r++) {
        files[r] = fopen(path[r], "rb");
        names[r] = path[r];
    }
    CHECK_OK(hb_net_load_ranks(one, ranks, files, names)); /* S -> 1 */
    /* saved again at 70 ms: the bytes of a run through on one rank (every value moved) */
    hb_net_t *through = NULL;
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, solo, &through));
    CHECK_OK(hb_net_advance(one, 70.0));
    if (through) {
        FILE *a = tmpfile(), *b = tmpfile();
        CHECK_OK(hb_net_init(through));
        CHECK_OK(hb_net_advance(through, 70.0));
        CHECK_OK(hb_net_save(one, a, "again"));
        CHECK_OK(hb_net_save(through, b, "again"));
        long na = 0, nb = 0;
        unsigned char *ba = slurp(a, &na), *bb = slurp(b, &nb);
        CHECKF(na == nb && ba && bb && memcmp(ba, bb, (size_t)na) == 0,
               "%d ranks -> 1: the restored state at 70 ms differs from the run through's (%ld "
               "and %ld bytes)", ranks, na, nb);
        free(ba);
        free(bb);
        fclose(a);
        fclose(b);
        hb_net_destroy(through);
    }
    CHECK_OK(hb_net_advance(one, 120.0));
    CHECKF(same_spikes(whole, one), "%d ranks' checkpoint on 1 rank: the spikes differ", ranks);
    /* 1 -> S */
    FILE *g = fopen(solo_path, "rb");
    const char *solo_name = solo_path;
    CHECK_OK(hb_net_load_ranks(back, 1, &g, &solo_name));
    CHECK_OK(hb_net_advance(back, 120.0));
    CHECKF(same_spikes(whole, back), "1 rank's checkpoint on %d ranks: the spikes differ", ranks);
    if (g) fclose(g);
    /* a rank's file missing from the set (NULL), or one of its files twice: refused */
    if (ranks > 1) {
        FILE *twice[4] = {NULL, NULL, NULL, NULL};
        for (int r = 0; r < ranks; r++) twice[r] = fopen(path[0], "rb");
        hb_net_t *bad = NULL;
        CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, solo, &bad));
        const hb_status_t st = hb_net_load_ranks(bad, ranks, twice, names);
        for (int r = 0; r < ranks; r++)
            if (twice[r]) fclose(twice[r]);
        CHECKF(st == HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "the checkpoint of rank 0") &&
               strstr(hb_last_error(), "expected rank 1"), "%s", hb_last_error());
        CHECK(hb_net_advance(bad, 10.0) == HB_ERR_INVALID_VALUE); /* not initialised */
        hb_net_destroy(bad);
    }
    /* a one-rank checkpoint's file given as a set of two: refused naming the file and the
     * rank it should be (on any rank count: the stand-in shares are built here too) */
    FILE *pair[2] = {fopen(solo_path, "rb"), fopen(solo_path, "rb")};
    const char *pair_names[2] = {solo_path, solo_path};
    hb_net_t *bad = NULL;
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ranks net", NULL, comm, &bad));
    if (bad) {
        const hb_status_t st = hb_net_load_ranks(bad, 2, pair, pair_names);
        CHECKF(st == HB_ERR_INVALID_VALUE && strstr(hb_last_error(), "hb_test_ranks_") &&
               strstr(hb_last_error(), "the checkpoint of rank 0 of 1; expected rank"),
               "%s", hb_last_error());
        CHECK(hb_net_advance(bad, 10.0) == HB_ERR_INVALID_VALUE); /* not initialised */
    }
    for (int k = 0; k < 2; k++)
        if (pair[k]) fclose(pair[k]);
    hb_net_destroy(bad);
    if (rank == 0)
        printf("catalogue network checkpoint: %d ranks -> 1 and 1 -> %d, restored bitwise\n",
               ranks, ranks);
    for (int r = 0; r < ranks && r < 4; r++)
        if (files[r]) fclose(files[r]);
    CHECK_OK(hb_comm_max(comm, 1, &done)); /* every rank has read them */
    remove(path[rank]);
    remove(solo_path);
    hb_net_destroy(whole);
    hb_net_destroy(part);
    hb_net_destroy(one);
    hb_net_destroy(first);
    hb_net_destroy(back);
    hb_comm_destroy(solo);
}

/* 16 ball and sticks of one shape (one group: 16 lanes on one thread, 8 on two, 1 on three,
 * cpu_block_width's sweep rule) and 3 of another (4 lanes on one thread, 1 on more), with the
 * bbp catalogue's channels and CaDynamics_E2 writing cai, an ExpSyn kicked by noisy NetStims
 * and a ProbAMPANMDA_EMS (stochastic release: a RANDOM stream per synapse, Psurv per
 * connection) in a ring. */
static const char net_threads_cell[] =
    "{\"name\": \"%s\", \"count\": %d, \"sections\": ["
    "  {\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157, \"type\": \"soma\"},"
    "  {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200, \"diam\": 1, \"type\": \"dend\"}],"
    " \"Ra\": 100, \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": %d}],"
    " \"mechanisms\": [{\"name\": \"pas\", \"g\": 1e-4, \"e\": -65},"
    "  {\"name\": \"NaTs2_t\", \"region\": \"soma\", \"gNaTs2_tbar\": 0.9},"
    "  {\"name\": \"K_Pst\", \"region\": \"soma\", \"gK_Pstbar\": 0.1},"
    "  {\"name\": \"SKv3_1\", \"region\": \"soma\", \"gSKv3_1bar\": 0.5},"
    "  {\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\", \"gCa_HVAbar\": 0.001},"
    "  {\"name\": \"SK_E2\", \"region\": \"soma\", \"gSK_E2bar\": 0.005},"
    "  {\"name\": \"CaDynamics_E2\", \"region\": \"soma\", \"gamma\": 0.5},"
    "  {\"name\": \"bbp::Ih\", \"region\": \"dend\", \"gIhbar\": 2e-4}],"
    " \"ions\": [{\"region\": \"soma\", \"ek\": -85}],"
    " \"synapses\": [{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0},"
    "  {\"name\": \"ProbAMPANMDA_EMS\", \"at\": {\"section\": \"dend\", \"x\": 0.5}, \"Dep\": 50, \"Fac\": 10, \"Use\": 0.6}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}";
static const char net_threads_json[] =
    "{\"t_stop\": 100, \"dt\": 0.025, \"celsius\": 34, \"cells\": [%s, %s],"
    " \"network\": {\"sources\": [{\"name\": \"kick\", \"count\": 4, \"start\": 1, \"interval\": 6,"
    "  \"number\": 40, \"noise\": 0.7, \"seed\": 5}],"
    "  \"ring\": [{\"first\": 0, \"count\": 19, \"synapse\": 1, \"weight\": 1.5, \"delay\": 3}],"
    "  \"connections\": [{\"source\": 19, \"target\": 0, \"synapse\": 0, \"weight\": 0.05, \"delay\": 1},"
    "   {\"source\": 20, \"target\": 6, \"synapse\": 0, \"weight\": 0.05, \"delay\": 1.5},"
    "   {\"source\": 21, \"target\": 12, \"synapse\": 0, \"weight\": 0.05, \"delay\": 2},"
    "   {\"source\": 22, \"target\": 17, \"synapse\": 0, \"weight\": 0.05, \"delay\": 2.5}]}}";

static hb_net_t *make_threads_net(hb_comm_t *comm, int threads)
{
    char a[4096], b[4096], text[12000];
    snprintf(a, sizeof a, net_threads_cell, "a", 16, 5);
    snprintf(b, sizeof b, net_threads_cell, "b", 3, 3);
    snprintf(text, sizeof text, net_threads_json, a, b);
    hb_sim_overrides_t o;
    memset(&o, 0, sizeof o);
    o.set = HB_SIM_SET_BACKEND | HB_SIM_SET_THREADS;
    o.options.backend = HB_BACKEND_OMP;
    o.options.threads = threads;
    hb_net_t *net = NULL;
    CHECK_OK(hb_net_parse_json_with(text, strlen(text), "threads net", NULL, &o, comm, &net));
    return net;
}

/* A checkpoint (format 4: the state in the model's order) written on one thread count
 * restarts on another, whose blocks are of another width, to the bits of the run through:
 * 1 -> 2, 2 -> 1, 2 -> 3 and 3 -> 1 threads; the restarted run saved again gives the same
 * bytes as the run through saved at that time on the thread count that restarted it. */
static void test_threads(hb_comm_t *comm)
{
    static const int pairs[4][2] = {{1, 2}, {2, 1}, {2, 3}, {3, 1}};
    hb_net_t *whole = make_threads_net(comm, 1);
    if (!whole) return;
    CHECK_OK(hb_net_run(whole));
    const hb_spike_t *s;
    size_t n, cells = 0;
    hb_net_spikes(whole, &s, &n);
    for (size_t k = 0; k < n; k++) cells += s[k].gid < 19;
    CHECKF(cells > 19, "%zu cell spikes: the test needs activity", cells);
    for (int p = 0; p < 4; p++) {
        const int from = pairs[p][0], to = pairs[p][1];
        hb_net_t *first = make_threads_net(comm, from), *second = make_threads_net(comm, to);
        hb_net_t *again = make_threads_net(comm, to);
        if (!first || !second || !again) break;
        CHECK_OK(hb_net_init(first));
        CHECK_OK(hb_net_advance(first, 41.3));
        FILE *f = tmpfile(), *g = tmpfile(), *h = tmpfile();
        CHECK_OK(hb_net_save(first, f, "threads"));
        rewind(f);
        CHECK_OK(hb_net_load(second, f, "threads"));
        CHECK_OK(hb_net_advance(second, 70.0));
        /* saved again on `to` threads: the bytes of a run through on `to` threads */
        CHECK_OK(hb_net_save(second, g, "again"));
        CHECK_OK(hb_net_init(again));
        CHECK_OK(hb_net_advance(again, 70.0));
        CHECK_OK(hb_net_save(again, h, "again"));
        long ng = 0, nh = 0;
        unsigned char *bg = slurp(g, &ng), *bh = slurp(h, &nh);
        CHECKF(ng == nh && memcmp(bg, bh, (size_t)ng) == 0,
               "%d -> %d threads: the restored state at 70 ms differs from the run through's "
               "(%ld and %ld bytes)", from, to, ng, nh);
        CHECK_OK(hb_net_advance(second, 100.0));
        CHECKF(same_spikes(whole, second), "%d -> %d threads: the restored run's spikes differ",
               from, to);
        free(bg);
        free(bh);
        fclose(f);
        fclose(g);
        fclose(h);
        hb_net_destroy(first);
        hb_net_destroy(second);
        hb_net_destroy(again);
    }
    /* one rank's checkpoint on all of them: the connections' weight vectors (Psurv) and the
     * events' vectors move with their connections, the RANDOM streams with their synapses */
    hb_comm_t *solo = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &solo));
    hb_net_t *one = solo ? make_threads_net(solo, 1) : NULL, *many = make_threads_net(comm, 2);
    if (one && many) {
        FILE *f = tmpfile();
        CHECK_OK(hb_net_init(one));
        CHECK_OK(hb_net_advance(one, 61.3));
        CHECK_OK(hb_net_save(one, f, "one"));
        rewind(f);
        const char *name = "one";
        CHECK_OK(hb_net_load_ranks(many, 1, &f, &name));
        /* saved again at 80 ms: the bytes of a run through on these ranks */
        hb_net_t *ref = make_threads_net(comm, 2);
        FILE *a = tmpfile(), *b = tmpfile();
        CHECK_OK(hb_net_advance(many, 80.0));
        CHECK_OK(hb_net_save(many, a, "again"));
        if (ref) {
            CHECK_OK(hb_net_init(ref));
            CHECK_OK(hb_net_advance(ref, 80.0));
            CHECK_OK(hb_net_save(ref, b, "again"));
        }
        long na = 0, nb = 0;
        unsigned char *ba = slurp(a, &na), *bb = slurp(b, &nb);
        CHECKF(na == nb && ba && bb && memcmp(ba, bb, (size_t)na) == 0,
               "1 rank -> %d: the restored state at 80 ms differs from the run through's (%ld "
               "and %ld bytes)", hb_comm_size(comm), na, nb);
        free(ba);
        free(bb);
        fclose(a);
        fclose(b);
        hb_net_destroy(ref);
        CHECK_OK(hb_net_advance(many, 100.0));
        CHECKF(same_spikes(whole, many), "1 rank of 1 thread -> %d of 2: the restored "
               "ProbAMPANMDA_EMS network's spikes differ", hb_comm_size(comm));
        fclose(f);
    }
    hb_net_destroy(one);
    hb_net_destroy(many);
    hb_comm_destroy(solo);
    if (hb_comm_rank(comm) == 0)
        printf("threads checkpoint on %d rank(s): %zu cell spikes, restored bitwise across 1, 2 "
               "and 3 threads\n", hb_comm_size(comm), cells);
    hb_net_destroy(whole);
}

int main(void)
{
    hb_comm_t *comm = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_BEST, &comm));
    test_sim();
    test_cat_sim("");
    test_cat_sim("\"method\": \"cn\",");
    if (hb_backend_available(HB_BACKEND_OMP)) {
        test_cat_sim("\"backend\": \"omp\",");
        test_cat_sim("\"backend\": \"omp\", \"method\": \"cn\",");
    }
    for (int overlap = HB_NET_BLOCKING; overlap <= HB_NET_TASKS; overlap++) test_net(comm, overlap);
    test_cat_net(comm, 0.05);
    test_ranks(comm);
    if (hb_backend_available(HB_BACKEND_OMP)) test_threads(comm);
    hb_comm_destroy(comm);
    return check_summary("checkpoint");
}
