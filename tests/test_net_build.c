/*
 * Building a network on several threads (src/net/net.c, src/sim/sim_layout.c): a busyring, a
 * ring and a random network from network files, built on 1 and 2 threads (the "threads"
 * override) and on OpenMP's default, give the same connections and the same spikes, bit for
 * bit; a busyring keeps none of its models once built, and never holds more than a few at
 * once (each built when the simulation asks for it and released at once).
 */
#define _POSIX_C_SOURCE 200809L /* mkstemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "common/status.h"
#include "hinesbatch.h"
#include "net/net_engine.h"
#include "sim/sim.h"

/* 96 random trees (depth 5) in rings of 4 with 10 connections a cell. */
static const char busyring[] =
    "{\"network\": {\"busyring\": {\"num-cells\": 96, \"ring-size\": 4, \"min-delay\": 5,"
    " \"duration\": 60, \"event-weight\": 0.2, \"depth\": 5, \"synapses\": 10}}}";

/* 40 ball-and-stick cells: two rings of 20 kicked by sources, and 6 random Exp2Syn inputs a
 * cell from cells and Poisson sources, delays drawn. */
static const char rings[] =
    "{\"t_stop\": 80, \"dt\": 0.025,"
    " \"cells\": [{\"name\": \"bs\", \"count\": 40,"
    "  \"sections\": ["
    "   {\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157,"
    "    \"type\": \"soma\"},"
    "   {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200,"
    "    \"diam\": 1, \"type\": \"dend\"}],"
    "  \"Ra\": 100,"
    "  \"regions\": [{\"region\": \"soma\", \"nseg\": 1}, {\"region\": \"dend\", \"nseg\": 11}],"
    "  \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"},"
    "                   {\"name\": \"pas\", \"region\": \"dend\", \"g\": 0.001, \"e\": -65}],"
    "  \"synapses\": [{\"type\": \"expsyn\", \"at\": {\"section\": \"dend\", \"x\": 0.5},"
    "                  \"tau\": 2, \"e\": 0},"
    "                 {\"type\": \"exp2syn\", \"at\": \"soma\", \"tau1\": 0.5, \"tau2\": 3,"
    "                  \"e\": 0}],"
    "  \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}],"
    " \"network\": {"
    "  \"sources\": [{\"count\": 2, \"start\": 1, \"number\": 1},"
    "               {\"count\": 8, \"start\": 0, \"interval\": 4, \"number\": 30, \"noise\": 1,"
    "                \"seed\": 11}],"
    "  \"connections\": [{\"source\": 40, \"target\": 0, \"weight\": 0.05, \"delay\": 1},"
    "                   {\"source\": 41, \"target\": 20, \"weight\": 0.05, \"delay\": 1}],"
    "  \"ring\": [{\"first\": 0, \"count\": 20, \"weight\": 0.05, \"delay\": 5},"
    "           {\"first\": 20, \"count\": 20, \"weight\": 0.05, \"delay\": 5}],"
    "  \"random\": [{\"targets\": [0, 40], \"sources\": [0, 50], \"in_degree\": 6,"
    "              \"synapse\": 1, \"weight\": 0.004, \"delay\": [2, 6], \"seed\": 3}]}}";

typedef struct {
    size_t n_spikes, n_conns;
    hb_spike_t *spikes;
    hb_net_conn_t *conns;
} result_t;

static void result_free(result_t *r)
{
    free(r->spikes);
    free(r->conns);
    memset(r, 0, sizeof *r);
}

/* The network of `text` built on `threads` (0: OpenMP's default) and run: its connections
 * and spikes; live_after and peak: models alive once built, and the most alive at once while
 * building, over those alive before. */
static int build_and_run_with(const char *text, int threads, result_t *out, long *live_after,
                              long *peak, int expect_ok)
{
    memset(out, 0, sizeof *out);
    char path[] = "/tmp/hb_test_net_build_XXXXXX";
    const int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0) return 0;
    const size_t len = strlen(text);
    const ssize_t wrote = write(fd, text, len);
    close(fd);
    CHECK(wrote == (ssize_t)len);
    hb_comm_t *comm = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));
    hb_sim_overrides_t ov;
    memset(&ov, 0, sizeof ov);
    hb_sim_options_default(&ov.options);
    ov.set = HB_SIM_SET_THREADS;
    ov.options.threads = threads;
    const long before = hb_model_live(1, NULL);
    hb_net_t *net = NULL;
    const hb_status_t status = hb_net_load_json_with(path, &ov, comm, &net);
    if (expect_ok) CHECK_OK(status);
    unlink(path);
    long most = 0;
    *live_after = hb_model_live(0, &most) - before;
    *peak = most - before;
    int ok = net != NULL;
    if (ok) {
        out->n_conns = net->n_conns;
        out->conns = check_malloc((net->n_conns + 1) * sizeof *out->conns);
        memcpy(out->conns, net->conns, net->n_conns * sizeof *out->conns);
        CHECK_OK(hb_net_run(net));
        const hb_spike_t *s = NULL;
        size_t n = 0;
        CHECK_OK(hb_net_spikes(net, &s, &n));
        out->n_spikes = n;
        out->spikes = check_malloc((n + 1) * sizeof *out->spikes);
        if (n) memcpy(out->spikes, s, n * sizeof *s);
    }
    char message[1024]; /* the failure's, past the cleanup */
    snprintf(message, sizeof message, "%s", hb_last_error());
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    if (!ok) hb_fail(status, "%s", message);
    return ok;
}

static int build_and_run(const char *text, int threads, result_t *out, long *live_after,
                         long *peak)
{
    return build_and_run_with(text, threads, out, live_after, peak, 1);
}

static int build_and_run_quiet(const char *text, int threads, result_t *out, long *live_after,
                               long *peak)
{
    return build_and_run_with(text, threads, out, live_after, peak, 0);
}

/* Field by field (a connection has padding), the doubles bitwise. */
static int same_conns(const result_t *a, const result_t *b)
{
    if (a->n_conns != b->n_conns) return 0;
    for (size_t k = 0; k < a->n_conns; k++) {
        const hb_net_conn_t *x = &a->conns[k], *y = &b->conns[k];
        if (x->source != y->source || x->cell != y->cell || x->synapse != y->synapse ||
            memcmp(&x->weight, &y->weight, sizeof x->weight) != 0 ||
            memcmp(&x->delay, &y->delay, sizeof x->delay) != 0)
            return 0;
    }
    return 1;
}

static void same(const char *what, const result_t *a, const result_t *b, const char *how)
{
    CHECKF(same_conns(a, b),
           "%s: %zu connections on 1 thread, %zu on %s: not the same bits", what, a->n_conns,
           b->n_conns, how);
    CHECKF(a->n_spikes == b->n_spikes &&
               memcmp(a->spikes, b->spikes, a->n_spikes * sizeof *a->spikes) == 0,
           "%s: %zu spikes on 1 thread, %zu on %s: not the same bits", what, a->n_spikes,
           b->n_spikes, how);
}

static void test_threads(const char *what, const char *text, int releases)
{
    result_t one, two, dflt;
    long live[3], peak[3];
    if (!build_and_run(text, 1, &one, &live[0], &peak[0]) ||
        !build_and_run(text, 2, &two, &live[1], &peak[1]) ||
        !build_and_run(text, 0, &dflt, &live[2], &peak[2])) {
        result_free(&one);
        result_free(&two);
        result_free(&dflt);
        return;
    }
    CHECKF(one.n_spikes > 40 && one.n_conns > 100, "%s: %zu spikes, %zu connections: too few to "
           "compare", what, one.n_spikes, one.n_conns);
    same(what, &one, &two, "2 threads");
    same(what, &one, &dflt, "OpenMP's default");
    for (int k = 0; k < 3; k++) {
        if (releases) { /* a busyring: every model released, at most one a thread (two while
                         * two cells' shapes are compared) */
            CHECKF(live[k] == 0, "%s: %ld models kept after the build; expected none", what,
                   live[k]);
            CHECKF(peak[k] >= 1 && peak[k] <= 2 * (k == 1 ? 2 : k == 0 ? 1 : 64),
                   "%s: %ld models alive at once while building on %s; expected one a thread",
                   what, peak[k], k == 0 ? "1 thread" : k == 1 ? "2 threads" : "the default");
        } else { /* the file's one model, shared by its 40 copies */
            CHECKF(live[k] == 1, "%s: %ld models after the build; expected the file's 1", what,
                   live[k]);
        }
    }
    result_free(&one);
    result_free(&two);
    result_free(&dflt);
}

/* Two bad connections (gid 30: no synapse 5; gid 10: a delay below dt): the message names
 * gid 10's, the first in gid order, on any thread count. */
static void test_first_failure(void)
{
    const char *bad_from = strstr(rings, "\"connections\": [");
    CHECK(bad_from != NULL);
    if (!bad_from) return;
    const size_t head = (size_t)(bad_from - rings) + strlen("\"connections\": [");
    static const char extra[] =
        "{\"source\": 3, \"target\": 30, \"synapse\": 5, \"weight\": 0.01, \"delay\": 2},"
        "{\"source\": 4, \"target\": 10, \"weight\": 0.01, \"delay\": 0.01},";
    char *text = check_malloc(sizeof rings + sizeof extra);
    memcpy(text, rings, head);
    memcpy(text + head, extra, sizeof extra - 1);
    strcpy(text + head + sizeof extra - 1, rings + head);
    char first[1024] = "";
    for (int threads = 1; threads <= 2; threads++) {
        result_t r;
        long live, peak;
        CHECK(!build_and_run_quiet(text, threads, &r, &live, &peak));
        if (threads == 1) snprintf(first, sizeof first, "%s", hb_last_error());
        CHECKF(strstr(hb_last_error(), "of gid 10 (from gid 4): delay 0.01 ms") != NULL,
               "%d thread(s): \"%s\"", threads, hb_last_error());
        CHECKF(strcmp(first, hb_last_error()) == 0, "1 thread: \"%s\", %d: \"%s\"", first,
               threads, hb_last_error());
        result_free(&r);
    }
    free(text);
}

int main(void)
{
    test_threads("busyring", busyring, 1);
    test_threads("rings and random", rings, 0);
    test_first_failure();
    return check_summary("net_build");
}
