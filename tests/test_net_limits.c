/*
 * A network at the edges of its inputs (issue 56): a finite delay too long for a step
 * (1e308, 3e17 ms, a random builder's [1, 1e308]) runs, its events dropped as any past
 * t_stop; hb_net_advance past t_stop (1e300 ms, +inf) runs to t_stop; explicit connections
 * in any file order give a target's connections in file order and the same spikes; a random
 * builder too large for the machine and a busyring's branch-probs outside 0..1 are refused
 * up front by name; spikes let go after each advance are the same as those kept, and spike
 * sources whose spikes cannot fit are refused before the run.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/event_order.h"
#include "hinesbatch.h"
#include "net/net_engine.h"

/* Two ball-and-stick cells in a ring, cell 0 kicked by a source (gid 2); %s: more
 * connections (with a leading comma), %s: a random builder or nothing. */
#define RING \
    "{\"t_stop\": 30, \"dt\": 0.025," \
    " \"cells\": [{\"name\": \"bs\", \"count\": 2," \
    "  \"sections\": [{\"name\": \"soma\", \"parent\": null, \"length\": 12.6157," \
    "   \"diam\": 12.6157, \"type\": \"soma\"}]," \
    "  \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"}]," \
    "  \"synapses\": [{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}]," \
    "  \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]}]," \
    " \"network\": {\"sources\": [{\"start\": 1, \"number\": 1}]," \
    "  \"connections\": [{\"source\": 2, \"target\": 0, \"weight\": 0.05, \"delay\": 1}," \
    "                   {\"source\": 0, \"target\": 1, \"weight\": 0.05, \"delay\": 2}," \
    "                   {\"source\": 1, \"target\": 0, \"weight\": 0.05, \"delay\": 2}%s]%s}}"

static hb_net_t *parse(hb_comm_t *comm, const char *text, hb_status_t want)
{
    hb_net_t *net = NULL;
    const hb_status_t status = hb_net_parse_json(text, strlen(text), "net", NULL, comm, &net);
    CHECKF(status == want, "%s: %s", hb_status_name(status), hb_last_error());
    return net;
}

/* The spikes of a run (a copy), *n of them; NULL when it failed. */
static hb_spike_t *run_spikes(hb_net_t *net, size_t *n)
{
    *n = 0;
    if (!net) return NULL;
    const hb_status_t status = hb_net_run(net);
    CHECKF(status == HB_SUCCESS, "%s: %s", hb_status_name(status), hb_last_error());
    const hb_spike_t *s = NULL;
    CHECK_OK(hb_net_spikes(net, &s, n));
    hb_spike_t *copy = check_malloc((*n + 1) * sizeof *copy);
    if (*n) memcpy(copy, s, *n * sizeof *copy);
    return status == HB_SUCCESS ? copy : (free(copy), NULL);
}

static int same_spikes(const hb_spike_t *a, size_t na, const hb_spike_t *b, size_t nb)
{
    return a && b && na == nb && (na == 0 || memcmp(a, b, na * sizeof *a) == 0);
}

/* Defect 1: delays too long for a step's long. */
static void huge_delays(hb_comm_t *comm)
{
    /* the rule itself: saturated, never an overflowed step */
    CHECK(hb_event_step(1.0, 0.025) == 40);
    CHECK(hb_event_step(1e308, 0.025) == HB_EVENT_STEP_NEVER);
    CHECK(hb_event_step(3e17, 0.025) == HB_EVENT_STEP_NEVER);
    CHECK(hb_event_step(INFINITY, 0.025) == HB_EVENT_STEP_NEVER);
    CHECK(hb_event_step(NAN, 0.025) == HB_EVENT_STEP_NEVER);
    CHECK(hb_event_step(1e308, 1e-300) == HB_EVENT_STEP_NEVER);

    char text[8192];
    snprintf(text, sizeof text, RING, "", "");
    size_t n_ref = 0, n = 0;
    hb_net_t *net = parse(comm, text, HB_SUCCESS);
    hb_spike_t *ref = run_spikes(net, &n_ref);
    hb_net_destroy(net);
    CHECKF(n_ref >= 3, "%zu spikes", n_ref); /* the kick, cell 0, cell 1 */
    const char *const extra[] = {
        ", {\"source\": 0, \"target\": 1, \"weight\": 0.05, \"delay\": 1e308}",
        ", {\"source\": 2, \"target\": 1, \"weight\": 0.05, \"delay\": 3e17}",
        ", {\"source\": 1, \"target\": 0, \"weight\": 0.05, \"delay\": 1.7976931348623157e308}",
    };
    for (int k = 0; k < 3; k++) { /* the long connections' events all past t_stop: dropped */
        snprintf(text, sizeof text, RING, extra[k], "");
        net = parse(comm, text, HB_SUCCESS);
        hb_spike_t *got = run_spikes(net, &n);
        CHECKF(same_spikes(got, n, ref, n_ref), "delay %d: %zu spikes, %zu without it", k, n, n_ref);
        hb_net_destroy(net);
        free(got);
    }
    /* a random builder's delays drawn in [1, 1e308]: runs (almost all dropped) */
    snprintf(text, sizeof text, RING, "",
             ", \"random\": [{\"targets\": [0, 2], \"sources\": [0, 3], \"in_degree\": 2,"
             " \"weight\": 0.05, \"delay\": [1, 1e308], \"seed\": 5}]");
    net = parse(comm, text, HB_SUCCESS);
    hb_spike_t *got = run_spikes(net, &n);
    CHECK(got != NULL && n >= 1);
    hb_net_destroy(net);
    free(got);
    free(ref);
}

/* Defect 2: hb_net_advance past t_stop runs to t_stop, whatever the time asked. */
static void advance_far(hb_comm_t *comm)
{
    char text[8192];
    snprintf(text, sizeof text, RING, "", "");
    size_t n_ref = 0;
    hb_net_t *net = parse(comm, text, HB_SUCCESS);
    hb_spike_t *ref = run_spikes(net, &n_ref);
    hb_net_destroy(net);
    const double far[] = {1e17, 2.3e17, 3e17, 1e300, INFINITY};
    for (int k = 0; k < 5; k++) {
        net = parse(comm, text, HB_SUCCESS);
        if (!net) continue;
        CHECK_OK(hb_net_init(net));
        CHECK_OK(hb_net_advance(net, far[k]));
        CHECKF(hb_net_time(net) == hb_net_stop_time(net), "advance(%g): t = %g ms of %g", far[k],
               hb_net_time(net), hb_net_stop_time(net));
        const hb_spike_t *s = NULL;
        size_t n = 0;
        CHECK_OK(hb_net_spikes(net, &s, &n));
        CHECKF(same_spikes(s, n, ref, n_ref), "advance(%g): %zu spikes, %zu from a run", far[k],
               n, n_ref);
        hb_net_destroy(net);
    }
    free(ref);
}

/* Defect 3: explicit connections sorted by target in O(n log n), a target's in file order.
 * n connections to two targets: gid 1's weights 1, 2, 3 .. in file order, interleaved with
 * gid 0's, the targets descending (1, 0, 1, 0, ..., the insertion sort's worst case). */
static void explicit_order(hb_comm_t *comm)
{
    enum { N = 20000 };
    const size_t cap = (size_t)N * 96 + 4096;
    char *conns = check_malloc(cap), *text = check_malloc(cap + 8192);
    size_t at = 0;
    for (int k = 0; k < N; k++)
        at += (size_t)snprintf(conns + at, cap - at, ", {\"source\": 2, \"target\": %d, \"weight\": "
                               "%d, \"delay\": 1}", k % 2 ? 0 : 1, k + 1);
    snprintf(text, cap + 8192, RING, conns, "");
    hb_net_t *net = parse(comm, text, HB_SUCCESS);
    if (net) {
        for (uint32_t gid = 0; gid < 2; gid++) {
            int count = 0;
            CHECK_OK(net->recipe.connections_on(net->recipe.user, gid, NULL, &count));
            const int own = gid == 0 ? 2 : 1;
            CHECKF(count == own + N / 2, "gid %u: %d connections", gid, count);
            hb_connection_t *c = check_malloc(((size_t)count + 1) * sizeof *c);
            CHECK_OK(net->recipe.connections_on(net->recipe.user, gid, c, &count));
            /* the RING's own first (gid 0: from 2 and from 1; gid 1: from 0), then the file's
             * in file order: weights 2, 4, .. (gid 0) or 1, 3, .. (gid 1) */
            int in_order = count == own + N / 2;
            for (int k = own; k < count && in_order; k++)
                in_order = c[k].weight_us == (double)(2 * (k - own) + (gid == 0 ? 2 : 1));
            CHECKF(in_order, "gid %u: its connections out of file order", gid);
            free(c);
        }
    }
    hb_net_destroy(net);
    free(conns);
    free(text);
}

/* Defect 5: a random builder too large for the machine, refused before it is built, with
 * the estimate; the file's key named. */
static void random_too_big(hb_comm_t *comm)
{
    char text[8192];
    snprintf(text, sizeof text,
             "{\"t_stop\": 10, \"dt\": 0.025, \"cells\": [{\"name\": \"c\", \"count\": 1000000,"
             " \"sections\": [{\"name\": \"soma\", \"parent\": null, \"length\": 10, \"diam\": 10,"
             " \"type\": \"soma\"}], \"mechanisms\": [{\"name\": \"pas\", \"region\": \"soma\"}],"
             " \"synapses\": [{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}]}],"
             " \"network\": {\"random\": [{\"targets\": [0, 1000000], \"sources\": [0, 1000000],"
             " \"in_degree\": 999999, \"weight\": 0.001, \"delay\": 1, \"seed\": 1}]}}");
    hb_net_t *net = parse(comm, text, HB_ERR_INVALID_VALUE); /* 64 TB of connections */
    CHECK(net == NULL);
    CHECKF(strstr(hb_last_error(), "net: network:") && strstr(hb_last_error(), " GB") &&
           strstr(hb_last_error(), "machine's memory") && strstr(hb_last_error(), "in_degree"),
           "%s", hb_last_error());
    hb_net_destroy(net);
}

/* Also: busyring's branch-probs outside 0..1, refused by name and value. */
static void branch_probs(hb_comm_t *comm)
{
    const char *const bad[] = {"[2, 0.5]", "[0.5, -1]", "[1.5, 1]"};
    for (int k = 0; k < 3; k++) {
        char text[1024];
        snprintf(text, sizeof text, "{\"network\": {\"busyring\": {\"num-cells\": 4, "
                 "\"ring-size\": 4, \"depth\": 3, \"branch-probs\": %s}}}", bad[k]);
        hb_net_t *net = parse(comm, text, HB_ERR_INVALID_VALUE);
        CHECK(net == NULL);
        CHECKF(strstr(hb_last_error(), "network.busyring.branch-probs") &&
               strstr(hb_last_error(), "0 to 1"), "%s: %s", bad[k], hb_last_error());
        hb_net_destroy(net);
    }
    const char *ok = "{\"network\": {\"busyring\": {\"num-cells\": 4, \"ring-size\": 4, "
                     "\"depth\": 3, \"duration\": 5, \"branch-probs\": [0, 1]}}}";
    hb_net_t *net = parse(comm, ok, HB_SUCCESS);
    hb_net_destroy(net);
}

/* Defect 4: spikes let go after each advance (hb_net_set_keep_spikes 0) are the kept run's,
 * advance by advance, and the network holds no more than an advance's; sources whose spikes
 * cannot fit are refused before the run. */
static void spikes_let_go(hb_comm_t *comm)
{
    /* the ring and 20 Poisson sources of 400 spikes each into cell 0 */
    char text[8192];
    snprintf(text, sizeof text, RING, "",
             ", \"random\": [{\"targets\": [0, 1], \"sources\": [3, 20], \"in_degree\": 5,"
             " \"weight\": 0.0001, \"delay\": 1, \"seed\": 2}]");
    char *more = strstr(text, "\"sources\": [{\"start\": 1, \"number\": 1}]");
    CHECK(more != NULL);
    if (!more) return;
    char head[8192];
    snprintf(head, sizeof head, "%.*s\"sources\": [{\"start\": 1, \"number\": 1}, {\"count\": "
             "20, \"start\": 0, \"interval\": 0.07, \"number\": 400, \"noise\": 1, "
             "\"seed\": 9}]%s", (int)(more - text), text,
             more + strlen("\"sources\": [{\"start\": 1, \"number\": 1}]"));
    size_t n_ref = 0;
    hb_net_t *net = parse(comm, head, HB_SUCCESS);
    hb_spike_t *ref = run_spikes(net, &n_ref);
    CHECK(net == NULL || hb_net_set_keep_spikes(net, 1) == 1); /* the default */
    hb_net_destroy(net);
    CHECKF(n_ref > 5000, "%zu spikes", n_ref);
    net = parse(comm, head, HB_SUCCESS);
    if (!net || !ref) {
        hb_net_destroy(net);
        free(ref);
        return;
    }
    CHECK(hb_net_set_keep_spikes(net, 0) == 0);
    CHECK_OK(hb_net_init(net));
    size_t at = 0, most = 0;
    int same = 1;
    for (double t = 1.0; t <= 30.0; t += 1.0) {
        CHECK_OK(hb_net_advance(net, t));
        const hb_spike_t *s = NULL;
        size_t n = 0;
        CHECK_OK(hb_net_spikes(net, &s, &n));
        hb_net_stats_t st;
        CHECK_OK(hb_net_stats(net, &st));
        /* s[0] is the run's spike st.spikes - n: the last advance's, after those of the one
         * before still held (its last half step, which a net_event could have preceded) */
        const size_t first = st.spikes >= n ? st.spikes - n : n_ref + 1;
        same = same && first <= at && first + n <= n_ref &&
               (n == 0 || memcmp(s, ref + first, n * sizeof *s) == 0);
        at = first + n;
        if (n > most) most = n;
    }
    CHECKF(same && at == n_ref, "%zu spikes in advances of 1 ms, %zu in one run", at, n_ref);
    CHECKF(net->cap_spikes <= 2 * most + 64 && net->cap_spikes < n_ref, "room for %zu spikes "
           "held, at most %zu in an advance, %zu in the run", net->cap_spikes, most, n_ref);
    hb_net_destroy(net);
    free(ref);

    /* a million sources of 1e9 spikes each, 1e15 spikes before t_stop: refused by
     * hb_net_init whether kept or not (a single epoch: no connection) */
    const char *flood = "{\"t_stop\": 1000000, \"dt\": 0.025, \"network\": {\"sources\": "
                        "[{\"count\": 1000000, \"start\": 0, \"interval\": 0.001, "
                        "\"number\": 1000000000}]}}";
    for (int keep = 0; keep < 2; keep++) {
        net = parse(comm, flood, HB_SUCCESS);
        if (!net) continue;
        hb_net_set_keep_spikes(net, keep);
        const hb_status_t status = hb_net_init(net);
        CHECKF(status == HB_ERR_ALLOC && strstr(hb_last_error(), "1e+15 spikes") &&
               strstr(hb_last_error(), "machine's memory"), "keep %d: %s: %s", keep,
               hb_status_name(status), hb_last_error());
        hb_net_destroy(net);
    }
}

int main(void)
{
    hb_comm_t *comm = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));
    huge_delays(comm);
    advance_far(comm);
    explicit_order(comm);
    random_too_big(comm);
    branch_probs(comm);
    spikes_let_go(comm);
    CHECK_OK(hb_comm_destroy(comm));
    return check_summary("net_limits");
}
