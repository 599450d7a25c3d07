/* hb_net_parse_json: a network from JSON text (the Python module's way in) gives the spikes
 * hb_net_load_json gives for the same text in a file; morphology paths resolve from base_dir;
 * malformed text and bad arguments fail with a message naming the text and the place. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hinesbatch.h"

/* Two ball-and-stick cells in a ring (cell 0 kicked by a source) and one SWC cell whose path
 * is relative (`%s`: the morphology's path); a literal, for the format checks. */
#define NET_TEXT \
    "{\"t_stop\": 40, \"dt\": 0.025,\n" \
    " \"cells\": [\n" \
    "  {\"name\": \"bs\", \"count\": 2,\n" \
    "   \"sections\": [{\"name\": \"soma\", \"parent\": null, \"length\": 12.6157, \"diam\": 12.6157," \
    " \"type\": \"soma\"},\n" \
    "                {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 200," \
    " \"diam\": 1, \"type\": \"dend\"}],\n" \
    "   \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"}, {\"name\": \"pas\", \"region\":" \
    " \"dend\"}],\n" \
    "   \"synapses\": [{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}],\n" \
    "   \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -10}]},\n" \
    "  {\"name\": \"swc\", \"morphology\": \"%s\", \"mechanisms\": [{\"name\": \"pas\"," \
    " \"region\": \"all\"}]}],\n" \
    " \"network\": {\n" \
    "  \"sources\": [{\"name\": \"kick\", \"count\": 1, \"start\": 1, \"interval\": 50," \
    " \"number\": 1}],\n" \
    "  \"ring\": [{\"first\": 0, \"count\": 2, \"synapse\": 0, \"weight\": 0.05, \"delay\": 5}],\n" \
    "  \"connections\": [{\"source\": 3, \"target\": 0, \"synapse\": 0, \"weight\": 0.05," \
    " \"delay\": 1}]}}\n"

static const char *const swc_rel = "morphologies/ball_and_stick.swc";

static hb_spike_t *run(hb_net_t *net, size_t *count)
{
    const hb_spike_t *spikes = NULL;
    *count = 0;
    CHECK_OK(hb_net_run(net));
    CHECK_OK(hb_net_spikes(net, &spikes, count));
    hb_spike_t *copy = check_malloc((*count + 1) * sizeof *copy);
    if (*count) memcpy(copy, spikes, *count * sizeof *copy);
    return copy;
}

int main(void)
{
    char text[4096];
    snprintf(text, sizeof text, NET_TEXT, swc_rel);
    hb_comm_t *comm = NULL;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));

    /* From text, paths from base_dir. */
    hb_net_t *net = NULL;
    CHECK_OK(hb_net_parse_json(text, strlen(text), "ring text", HB_DATA_DIR, comm, &net));
    size_t n_text = 0;
    hb_spike_t *from_text = net ? run(net, &n_text) : NULL;
    CHECK_OK(hb_net_destroy(net));
    /* The ring: the kick (gid 3, at 1 ms) makes cell 0 fire, then cell 1, then cell 0, ... */
    CHECKF(n_text >= 4, "%zu spikes", n_text);
    if (n_text >= 4)
        CHECK(from_text[0].gid == 3 && from_text[0].time_ms == 1.0 && from_text[1].gid == 0 &&
              from_text[2].gid == 1 && from_text[3].gid == 0);

    /* The same network as a file (in a temporary folder, so its morphology path is absolute). */
    char text_abs[4096], dir[] = "/tmp/hb_test_net_parse_XXXXXX", path[4096];
    char swc_abs[2048];
    snprintf(swc_abs, sizeof swc_abs, "%s/%s", HB_DATA_DIR, swc_rel);
    snprintf(text_abs, sizeof text_abs, NET_TEXT, swc_abs);
    CHECK(mkdtemp(dir) != NULL);
    snprintf(path, sizeof path, "%s/net.json", dir);
    FILE *f = fopen(path, "w");
    CHECK(f && fputs(text_abs, f) >= 0);
    CHECK(f && fclose(f) == 0);
    net = NULL;
    CHECK_OK(hb_net_load_json(path, comm, &net));
    size_t n_file = 0;
    hb_spike_t *from_file = net ? run(net, &n_file) : NULL;
    CHECK_OK(hb_net_destroy(net));
    CHECKF(n_file == n_text, "%zu spikes from the file, %zu from the text", n_file, n_text);
    if (n_file == n_text && from_file && from_text)
        CHECK(memcmp(from_file, from_text, n_text * sizeof *from_text) == 0);
    free(from_file);
    remove(path);
    rmdir(dir);
    free(from_text);

    /* A base_dir where the relative path does not lead. */
    net = (hb_net_t *)1;
    hb_status_t status = hb_net_parse_json(text, strlen(text), "ring text", "/nonexistent", comm, &net);
    CHECK(status == HB_ERR_IO && net == NULL);
    CHECKF(strstr(hb_last_error(), "cells[1].morphology") && strstr(hb_last_error(), swc_rel),
           "%s", hb_last_error());

    /* Malformed text: name, line and column. */
    const char *broken = "{\"t_stop\": 5,\n \"cells\": [}\n";
    status = hb_net_parse_json(broken, strlen(broken), "broken", NULL, comm, &net);
    CHECK(status == HB_ERR_PARSE && net == NULL);
    CHECKF(strncmp(hb_last_error(), "broken:2:", 9) == 0, "%s", hb_last_error());
    /* A model without "network" is refused with the key's name. */
    const char *cells_only = "{\"t_stop\": 5, \"cells\": []}";
    status = hb_net_parse_json(cells_only, strlen(cells_only), NULL, NULL, comm, &net);
    CHECK(status == HB_ERR_INVALID_VALUE && net == NULL);
    CHECKF(strstr(hb_last_error(), "network: missing"), "%s", hb_last_error());
    /* Arguments. */
    CHECK(hb_net_parse_json(NULL, 0, "x", NULL, comm, &net) == HB_ERR_INVALID_VALUE);
    CHECK(hb_net_parse_json(text, strlen(text), "x", NULL, NULL, &net) == HB_ERR_INVALID_VALUE);
    CHECK(hb_net_parse_json(text, strlen(text), "x", NULL, comm, NULL) == HB_ERR_INVALID_VALUE);

    CHECK_OK(hb_comm_destroy(comm));
    return check_summary("net_parse_json");
}
