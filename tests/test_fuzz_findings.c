/*
 * Regressions for what the fuzzers of fuzz/ found (docs/reliability.md, "Fuzzing"): each input
 * as the fuzzer reported it, or cut down to its cause, and the behaviour fixed in the library.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf, sigaction */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hinesbatch.h"

/* A model whose simulation is refused while being made (more than 2^31 nodes: a million copies
 * of 100,001 rows) kept no message: hb_sim_create's clean-up destroyed the context, and
 * hb_context_destroy cleared the error, so `hinesbatch run` said only "failed (invalid
 * argument)". Destroy functions now leave the message alone. */
static void test_message_survives_cleanup(void)
{
    static const char text[] =
        "{\"t_stop\": 1, \"dt\": 0.025, \"cells\": [{\"count\": 1000000, \"cable\": {\"length\":"
        " 1000, \"diam\": 1}, \"discretization\": {\"policy\": \"fixed\", \"nseg\": 100000}}]}";
    hb_sim_t *sim = NULL;
    const hb_status_t status = hb_sim_parse_json(text, strlen(text), "big.json", ".", &sim);
    CHECKF(status != HB_SUCCESS && sim == NULL, "status %s", hb_status_name(status));
    CHECKF(strstr(hb_last_error(), "2^31") != NULL, "message \"%s\"", hb_last_error());
    hb_sim_destroy(sim);

    /* The destroy functions themselves keep the message of the call before. */
    hb_context_t *ctx = NULL;
    CHECK(hb_context_create(HB_BACKEND_SEQ, &ctx) == HB_SUCCESS);
    CHECK(hb_context_set_threads(ctx, -1) != HB_SUCCESS);
    char before[256];
    snprintf(before, sizeof before, "%s", hb_last_error());
    CHECK(before[0] != '\0');
    CHECK(hb_context_destroy(ctx) == HB_SUCCESS);
    CHECKF(strcmp(hb_last_error(), before) == 0, "\"%s\" became \"%s\"", before, hb_last_error());
}

/* A busyring of a million cells (or 2^31 - 2) was built cell by cell until the memory ran out
 * (OOM-killed, or, where an allocation failed, "gid 109686 is a cable cell without a model").
 * Its memory is now estimated from cell 0 before anything is built, and refused by key. */
static void test_busyring_memory(void)
{
    static const char text[] = "{\"dt\": 0.025, \"network\": {\"busyring\": "
                               "{\"num-cells\": 2147483646, \"duration\": 1}}}";
    hb_comm_t *comm = NULL;
    CHECK(hb_comm_create(HB_COMM_SERIAL, &comm) == HB_SUCCESS);
    hb_net_t *net = NULL;
    const hb_status_t status = hb_net_parse_json(text, strlen(text), "ring.json", NULL, comm, &net);
    CHECKF(status != HB_SUCCESS && net == NULL, "status %s", hb_status_name(status));
    CHECKF(strstr(hb_last_error(), "ring.json: network.busyring.num-cells: 2147483646 cells") &&
               strstr(hb_last_error(), "memory"),
           "message \"%s\"", hb_last_error());
    hb_net_destroy(net);
    hb_comm_destroy(comm);
}

/* A busyring of depth 30 with every branch taken (2^30 branches a cell) generated its samples
 * until memory ran out (4 GB in 10 s under an 8 GB limit, else OOM-killed): a cell now stops at
 * HB_DEFAULT_MAX_ROWS samples, refused by key before any cell is built. */
static void test_busyring_depth(void)
{
    static const char text[] = "{\"dt\": 0.025, \"network\": {\"busyring\": {\"num-cells\": 2, "
                               "\"depth\": 30, \"branch-probs\": [1, 1], \"duration\": 1}}}";
    hb_comm_t *comm = NULL;
    CHECK(hb_comm_create(HB_COMM_SERIAL, &comm) == HB_SUCCESS);
    hb_net_t *net = NULL;
    const hb_status_t status = hb_net_parse_json(text, strlen(text), "deep.json", NULL, comm, &net);
    CHECKF(status == HB_ERR_INVALID_VALUE && net == NULL, "status %s", hb_status_name(status));
    CHECKF(strstr(hb_last_error(), "deep.json: network.busyring: ") &&
               strstr(hb_last_error(), "more than 5000000 samples"),
           "message \"%s\"", hb_last_error());
    hb_net_destroy(net);
    hb_comm_destroy(comm);
}

/* A million copies of a 1,001-row cable (1e9 nodes, under the 2^31 limit) were allocated until
 * memory ran out; their state (at least 48 bytes a node, 48 GB) is now refused up front where
 * the machine has less memory. */
static void test_sim_memory(void)
{
    const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    const double memory = (double)pages * (double)page;
    if (!(pages > 0 && page > 0 && memory < 45e9)) {
        printf("test_sim_memory: %.3g GB of memory, enough for the state: not refused here\n",
               memory / 1e9);
        return;
    }
    static const char text[] =
        "{\"t_stop\": 0.05, \"dt\": 0.025, \"cells\": [{\"count\": 1000000, \"cable\": "
        "{\"length\": 1000, \"diam\": 1}, \"discretization\": {\"policy\": \"fixed\", "
        "\"nseg\": 1000}}]}";
    hb_sim_t *sim = NULL;
    const hb_status_t status = hb_sim_parse_json(text, strlen(text), "copies.json", ".", &sim);
    CHECKF(status == HB_ERR_ALLOC && sim == NULL, "status %s", hb_status_name(status));
    CHECKF(strstr(hb_last_error(), "1002000000 nodes in 1000000 cells need at least") &&
               strstr(hb_last_error(), "memory"),
           "message \"%s\"", hb_last_error());
    hb_sim_destroy(sim);
}

/* A recipe whose cable() fails: its message is kept after hb_net_create's own. */
static hb_cell_kind_t kind_cable(void *user, uint32_t gid)
{
    (void)user;
    (void)gid;
    return HB_CELL_CABLE;
}

static hb_model_t *cable_fails(void *user, uint32_t gid)
{
    (void)user;
    (void)gid;
    hb_model_t *model = NULL;
    (void)hb_model_create(NULL, NULL, &model); /* fails, leaving its message */
    return model;
}

static hb_status_t no_connections(void *user, uint32_t gid, hb_connection_t *out, int *count)
{
    (void)user;
    (void)gid;
    (void)out;
    *count = 0;
    return HB_SUCCESS;
}

static void test_recipe_message(void)
{
    const hb_recipe_t recipe = {1, NULL, kind_cable, cable_fails, NULL, no_connections, NULL};
    hb_comm_t *comm = NULL;
    CHECK(hb_comm_create(HB_COMM_SERIAL, &comm) == HB_SUCCESS);
    hb_model_t *probe = NULL;
    (void)hb_model_create(NULL, NULL, &probe);
    char why[256];
    snprintf(why, sizeof why, "%s", hb_last_error());
    CHECK(why[0] != '\0');
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    hb_net_t *net = NULL;
    const hb_status_t status = hb_net_create(&recipe, comm, &opt, &net);
    CHECKF(status != HB_SUCCESS && net == NULL, "status %s", hb_status_name(status));
    CHECKF(strstr(hb_last_error(), "gid 0 is a cable cell without a model: ") &&
               strstr(hb_last_error(), why),
           "message \"%s\" (the recipe's: \"%s\")", hb_last_error(), why);
    hb_comm_destroy(comm);
}

/* fuzz_checkpoint's network of ProbAMPANMDA_EMS synapses (Nrrp release sites each) as text. */
static void prob_network(char *text, size_t size, const char *nrrp)
{
    snprintf(text, size,
             "{\"t_stop\": 20, \"dt\": 0.025, \"cells\": [{\"name\": \"b\", \"count\": 2,"
             " \"sections\": [{\"name\": \"soma\", \"parent\": null, \"length\": 10, \"diam\": 10,"
             " \"type\": \"soma\"}], \"mechanisms\": [{\"name\": \"hh\"}],"
             " \"synapses\": [{\"name\": \"ProbAMPANMDA_EMS\", \"at\": \"soma\", \"Use\": 0.9,"
             " \"Dep\": 5, \"Fac\": 10, \"Nrrp\": %s}],"
             " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -20}]}],"
             " \"network\": {\"sources\": [{\"name\": \"kick\", \"count\": 2, \"start\": 0.5,"
             " \"interval\": 2, \"number\": 6, \"noise\": 0.5, \"seed\": 7}],"
             " \"connections\": [{\"source\": 2, \"target\": 0, \"weight\": 0.5, \"delay\": 0.5},"
             " {\"source\": 3, \"target\": 1, \"weight\": 0.5, \"delay\": 1}]}}",
             nrrp);
}

/* A checkpoint forged with ProbAMPANMDA_EMS's count of release sites near 2^31 was accepted
 * (finite) and its next event drew that many random numbers in NET_RECEIVE's FROM loop: minutes
 * (fuzz_checkpoint, 2026-11-29). A model file's Nrrp is the same loop. A generated FROM loop now
 * refuses more than HB_CAT_FROM_MAX passes: the run stops at the event with the mechanism, its
 * .mod FILE:LINE and the count, and what it recorded before stays. */
static void test_from_loop_bound(void)
{
    static const struct {
        const char *nrrp, *count;
    } cases[] = {{"2147483647", "2147483647 passes"}, {"1000001", "1000001 passes"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        char text[2048];
        prob_network(text, sizeof text, cases[c].nrrp);
        hb_comm_t *comm = NULL;
        CHECK(hb_comm_create(HB_COMM_SERIAL, &comm) == HB_SUCCESS);
        hb_net_t *net = NULL;
        CHECKF(hb_net_parse_json(text, strlen(text), "prob.json", ".", comm, &net) == HB_SUCCESS,
               "%s", hb_last_error());
        CHECK(net && hb_net_init(net) == HB_SUCCESS);
        const hb_status_t status = net ? hb_net_advance(net, 20.0) : HB_SUCCESS;
        CHECKF(status == HB_ERR_INVALID_VALUE, "Nrrp %s: status %s", cases[c].nrrp,
               hb_status_name(status));
        const char *why = hb_last_error();
        CHECKF(strstr(why, "ProbAMPANMDA_EMS (mechanisms/bbp/ProbAMPANMDA_EMS.mod:244)") &&
                   strstr(why, cases[c].count) && strstr(why, "HB_CAT_FROM_MAX") &&
                   strstr(why, "in gid 1;"),
               "Nrrp %s: message \"%s\"", cases[c].nrrp, why);
        /* stopped at the first event (gid 1's, at 1.75 ms) */
        CHECKF(net && hb_net_time(net) > 0.5 && hb_net_time(net) < 3.0, "stopped at %g ms",
               net ? hb_net_time(net) : -1.0);
        hb_net_destroy(net);
        hb_comm_destroy(comm);
    }
    /* a million passes are allowed (the bound is inclusive): the run goes through */
    char text[2048];
    prob_network(text, sizeof text, "1000000");
    hb_comm_t *comm = NULL;
    CHECK(hb_comm_create(HB_COMM_SERIAL, &comm) == HB_SUCCESS);
    hb_net_t *net = NULL;
    CHECK(hb_net_parse_json(text, strlen(text), "prob.json", ".", comm, &net) == HB_SUCCESS);
    CHECK(net && hb_net_init(net) == HB_SUCCESS);
    CHECKF(net && hb_net_advance(net, 3.0) == HB_SUCCESS, "%s", hb_last_error());
    hb_net_destroy(net);
    hb_comm_destroy(comm);
}

/* A watchdog for a case that must finish at once: the ctest timeout (900 s) is long. */
static void too_slow(int sig)
{
    (void)sig;
    static const char why[] = "test_fuzz_findings: over 60 s: the parse is exponential again\n";
    (void)!write(STDERR_FILENO, why, sizeof why - 1);
    _exit(1);
}

/* Nested Sets, each line "(Set "S" ( ; nested", after one "(" (fuzz_asc, 2026-12-01: 2,432
 * bytes of such lines with garbage; over 150 s). Before 5764669 text() tried each nested object
 * as a text and, when that failed, again as a tree: two descents a level, 2^depth in all (depth
 * 28: 37 s, doubling a level; depth 40: about 40 hours). Now objects within text()'s attempt
 * are trees only, and the unclosed input is refused in well under a millisecond. */
static void test_asc_nested_sets(void)
{
    enum { DEPTH = 40 };
    static const char level[] = "(Set \"S\" ( ; nested\n";
    char text[1 + DEPTH * (sizeof level - 1) + 1] = "(";
    for (int k = 0; k < DEPTH; k++) strcat(text, level);
    struct sigaction on_alarm;
    memset(&on_alarm, 0, sizeof on_alarm);
    on_alarm.sa_handler = too_slow;
    CHECK(sigaction(SIGALRM, &on_alarm, NULL) == 0);
    alarm(60);
    hb_swc_options_t options;
    hb_swc_options_default(&options);
    hb_morph_t *morph = NULL;
    const hb_status_t status =
        hb_morph_parse_asc(text, strlen(text), "nested.asc", &options, &morph);
    alarm(0);
    CHECKF(status == HB_ERR_PARSE && morph == NULL, "status %s", hb_status_name(status));
    char where[64]; /* the end of the file: the line after the last "(Set" */
    snprintf(where, sizeof where, "nested.asc:%d:1: found end of file", DEPTH + 1);
    CHECKF(strstr(hb_last_error(), where) != NULL, "message \"%s\"", hb_last_error());
    hb_morph_destroy(morph);
}

int main(void)
{
    test_message_survives_cleanup();
    test_busyring_memory();
    test_recipe_message();
    test_busyring_depth();
    test_sim_memory();
    test_from_loop_bound();
    test_asc_nested_sets();
    return check_summary("test_fuzz_findings");
}
