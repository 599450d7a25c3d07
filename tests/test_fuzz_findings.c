/*
 * Regressions for what the fuzzers of fuzz/ found (docs/reliability.md, "Fuzzing"): each input
 * as the fuzzer reported it, or cut down to its cause, and the behaviour fixed in the library.
 */
#define _POSIX_C_SOURCE 200809L /* sysconf */
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

int main(void)
{
    test_message_survives_cleanup();
    test_busyring_memory();
    test_recipe_message();
    test_busyring_depth();
    test_sim_memory();
    return check_summary("test_fuzz_findings");
}
