/*
 * libFuzzer target: bytes as a checkpoint file -> hb_net_load into a small network, or
 * hb_sim_load into a small simulation (docs/checkpoint.md), then a few more steps.
 *
 * The first byte chooses: bit 0, the network (1) or a simulation (0); bit 1, whether the
 * harness recomputes the record's FNV-1a checksum first (as a forger would), so that mutations
 * reach the checks of the values themselves rather than stop at the checksum; bit 2 (with bit 0
 * clear), the simulation with catalogue mechanisms (the bbp channels and CaDynamics_E2 writing
 * cai: format version 2's catalogue layout and values); with bit 0 set, the network with
 * ProbAMPANMDA_EMS synapses (format version 3: their RANDOM streams, the connections' weight
 * vectors, the events' vectors, the catalogue identities); bit 3 (with bit 0 set), a set of
 * rank files for hb_net_load_ranks (a checkpoint of another rank count: each file read into a
 * stand-in share of its rank and moved cell by cell). The rest is the file, or in a set each
 * file as a little-endian u32 length and its bytes, up to 4 files (a length past the end takes
 * the rest). A load that succeeds must leave a state the run can go on from: spikes finite, of
 * the network's gids, in (time, gid) order and no later than t; a load that fails must say why
 * and leave the network or simulation usable after hb_net_init / hb_sim_init.
 *
 * HB_FUZZ_WRITE_SEEDS=DIR (environment) writes checkpoints of both, with each first byte, to
 * DIR at start-up: fuzz/run.sh seeds the corpus with them, so the seeds follow the format.
 * A set of several ranks' files cannot be written here (one process, one rank):
 * HB_FUZZ_WRITE_MODELS=DIR writes the two networks' model files, from which fuzz/rank_seeds.sh
 * makes the committed sets of 2 and 3 ranks (fuzz/corpus/checkpoint, net_ranks2.bin and the like).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hinesbatch.h"

static const char model_cells[] =
    "{\"t_stop\": 20, \"dt\": 0.025, \"sample_dt\": 0.5, \"cells\": [{\"name\": \"b\", \"count\": 2,"
    " \"sections\": [{\"name\": \"soma\", \"parent\": null, \"length\": 10, \"diam\": 10, \"type\": \"soma\"},"
    " {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 100, \"diam\": 1, \"type\": \"dend\"}],"
    " \"regions\": [{\"region\": \"dend\", \"nseg\": 3}],"
    " \"mechanisms\": [{\"name\": \"hh\", \"region\": \"soma\"}, {\"name\": \"pas\", \"region\": \"dend\"}],"
    " \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 1, \"dur\": 15, \"amp\": 0.3}],"
    " \"synapses\": [{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -20},"
    " {\"name\": \"dend\", \"at\": {\"section\": \"dend\", \"x\": 0.5}}]}]";

static const char network_tail[] =
    ", \"network\": {\"sources\": [{\"name\": \"kick\", \"count\": 2, \"start\": 0.5, \"interval\": 2,"
    " \"number\": 6, \"noise\": 0.5, \"seed\": 7}],"
    " \"connections\": [{\"source\": 2, \"target\": 0, \"weight\": 0.5, \"delay\": 0.5},"
    " {\"source\": 3, \"target\": 1, \"weight\": 0.5, \"delay\": 1}],"
    " \"ring\": [{\"first\": 0, \"count\": 2, \"weight\": 0.2, \"delay\": 2}]}}";

/* model_cells' cell with catalogue mechanisms in place of hh. */
static const char model_cat[] =
    "{\"t_stop\": 20, \"dt\": 0.025, \"celsius\": 34, \"cells\": [{\"name\": \"b\", \"count\": 2,"
    " \"sections\": [{\"name\": \"soma\", \"parent\": null, \"length\": 10, \"diam\": 10, \"type\": \"soma\"},"
    " {\"name\": \"dend\", \"parent\": \"soma\", \"parent_x\": 1, \"length\": 100, \"diam\": 1, \"type\": \"dend\"}],"
    " \"regions\": [{\"region\": \"dend\", \"nseg\": 3}],"
    " \"mechanisms\": [{\"name\": \"pas\"}, {\"name\": \"NaTs2_t\", \"region\": \"soma\"},"
    " {\"name\": \"K_Pst\", \"region\": \"soma\"}, {\"name\": \"SK_E2\", \"region\": \"soma\"},"
    " {\"name\": \"bbp::Ca_HVA\", \"region\": \"soma\"}, {\"name\": \"CaDynamics_E2\", \"region\": \"soma\"},"
    " {\"name\": \"bbp::Ih\", \"region\": \"dend\"}],"
    " \"stimuli\": [{\"type\": \"iclamp\", \"at\": \"soma\", \"del\": 1, \"dur\": 15, \"amp\": 0.3}],"
    " \"probes\": [{\"name\": \"soma\", \"at\": \"soma\", \"spike_threshold\": -20}]}]}";

static hb_comm_t *comm;
static hb_net_t *net, *net_pt;
static hb_sim_t *sim, *cat;

static void must(hb_status_t status)
{
    if (status != HB_SUCCESS) {
        fprintf(stderr, "fuzz_checkpoint: %s\n", hb_last_error());
        abort();
    }
}

static uint64_t fnv(uint64_t h, const unsigned char *p, size_t n)
{
    for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ULL;
    return h;
}

/* The record's checksum recomputed in place (header 32 bytes, payload, checksum 8 bytes). */
static void reseal(unsigned char *file, size_t size)
{
    uint64_t length;
    if (size < 40) return;
    memcpy(&length, file + 24, 8);
    if (length > size - 40) return;
    const uint64_t sum = fnv(0xcbf29ce484222325ULL, file, 32 + (size_t)length);
    memcpy(file + 32 + length, &sum, 8);
}

static void write_seeds(const char *dir)
{
    for (int which = 0; which < 4; which++) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        if (!f) abort();
        if (which == 3) {
            must(hb_net_init(net_pt));
            must(hb_net_advance(net_pt, 8.0));
            must(hb_net_save(net_pt, f, "seed"));
        } else if (which == 1) {
            must(hb_net_init(net));
            must(hb_net_advance(net, 8.0));
            must(hb_net_save(net, f, "seed"));
        } else if (which == 2) {
            must(hb_sim_init(cat));
            must(hb_sim_advance(cat, 320));
            must(hb_sim_save(cat, f, "seed"));
        } else {
            must(hb_sim_init(sim));
            must(hb_sim_advance(sim, 320));
            must(hb_sim_save(sim, f, "seed"));
        }
        fclose(f);
        for (int sealed = 0; sealed < 2; sealed++) {
            char path[4200];
            static const char *const names[4] = {"sim", "net", "cat", "net_pt"};
            snprintf(path, sizeof path, "%s/%s%s.bin", dir, names[which],
                     sealed ? "_resealed" : "");
            FILE *out = fopen(path, "wb");
            if (!out) abort();
            const unsigned char first =
                (unsigned char)((which & 1) | (sealed << 1) | ((which >= 2) << 2));
            fwrite(&first, 1, 1, out);
            fwrite(buf, 1, size, out);
            fclose(out);
        }
        free(buf);
    }
}

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    char text[sizeof model_cells + sizeof network_tail + 2];
    snprintf(text, sizeof text, "%s}", model_cells);
    must(hb_sim_parse_json(text, strlen(text), "cells.json", ".", &sim));
    snprintf(text, sizeof text, "%s%s", model_cells, network_tail);
    must(hb_comm_create(HB_COMM_SERIAL, &comm));
    must(hb_net_parse_json(text, strlen(text), "net.json", ".", comm, &net));
    must(hb_sim_parse_json(model_cat, strlen(model_cat), "cat.json", ".", &cat));
    /* the network with ProbAMPANMDA_EMS (stochastic release) in place of the ExpSyn */
    static const char expsyn[] = "{\"type\": \"expsyn\", \"at\": \"soma\", \"tau\": 2, \"e\": 0}";
    static const char prob[] = "{\"name\": \"ProbAMPANMDA_EMS\", \"at\": \"soma\", \"Use\": 0.9, "
                               "\"Dep\": 5, \"Fac\": 10}";
    char pt[sizeof model_cells + sizeof network_tail + sizeof prob + 2];
    const char *at = strstr(model_cells, expsyn);
    if (!at) abort();
    snprintf(pt, sizeof pt, "%.*s%s%s%s", (int)(at - model_cells), model_cells, prob,
             at + strlen(expsyn), network_tail);
    must(hb_net_parse_json(pt, strlen(pt), "net_pt.json", ".", comm, &net_pt));
    const char *dir = getenv("HB_FUZZ_WRITE_SEEDS");
    if (dir) write_seeds(dir);
    if ((dir = getenv("HB_FUZZ_WRITE_MODELS"))) {
        static const char *const names[2] = {"net.json", "net_pt.json"};
        snprintf(text, sizeof text, "%s%s", model_cells, network_tail);
        const char *models[2] = {text, pt};
        for (int k = 0; k < 2; k++) {
            char path[4200];
            snprintf(path, sizeof path, "%s/%s", dir, names[k]);
            FILE *out = fopen(path, "w");
            if (!out || fputs(models[k], out) < 0 || fclose(out) != 0) abort();
        }
    }
    return 0;
}

/* After a successful load: the state is one the run can go on from. */
static void check_net(hb_net_t *nw)
{
    const hb_spike_t *spikes = NULL;
    size_t count = 0;
    hb_net_stats_t stats;
    if (hb_net_spikes(nw, &spikes, &count) != HB_SUCCESS || hb_net_stats(nw, &stats) != HB_SUCCESS)
        __builtin_trap();
    const double t = hb_net_time(nw);
    for (size_t i = 0; i < count; i++) {
        if (!isfinite(spikes[i].time_ms) || spikes[i].time_ms < 0.0 ||
            spikes[i].time_ms > t + hb_net_dt(nw) || spikes[i].gid >= 4)
            __builtin_trap();
        if (i && (spikes[i].time_ms < spikes[i - 1].time_ms ||
                  (spikes[i].time_ms == spikes[i - 1].time_ms && spikes[i].gid < spikes[i - 1].gid)))
            __builtin_trap();
    }
    /* a little further: the restored events, sources and cells step on */
    if (hb_net_advance(nw, t + 2.0) != HB_SUCCESS && hb_last_error()[0] == '\0') __builtin_trap();
}

static void check_sim(hb_sim_t *s)
{
    for (int p = 0; p < hb_sim_probe_count(s); p++) {
        const double *times;
        int count;
        if (hb_sim_spikes(s, p, &times, &count) != HB_SUCCESS) __builtin_trap();
        for (int i = 0; i < count; i++)
            if (!isfinite(times[i]) || times[i] < 0.0 || times[i] > hb_sim_time(s) + 0.025 ||
                (i && times[i] < times[i - 1]))
                __builtin_trap();
    }
    if (hb_sim_advance(s, 8) != HB_SUCCESS && hb_last_error()[0] == '\0') __builtin_trap();
}

/* A set of rank files (bit 3): each a u32 length and its bytes, resealed where asked; loaded
 * by hb_net_load_ranks, which on this one-rank network reads a set of two or more as a
 * checkpoint of another rank count. */
static hb_status_t load_set(hb_net_t *n, const uint8_t *data, size_t size, int sealed)
{
    enum { MAX_FILES = 4 };
    FILE *files[MAX_FILES];
    unsigned char *bytes[MAX_FILES];
    static const char *const names[MAX_FILES] = {"fuzz.0.ckpt", "fuzz.1.ckpt", "fuzz.2.ckpt",
                                                 "fuzz.3.ckpt"};
    int count = 0;
    while (count < MAX_FILES && size >= 4) {
        const size_t want = (size_t)data[0] | (size_t)data[1] << 8 | (size_t)data[2] << 16 |
                            (size_t)data[3] << 24;
        data += 4;
        size -= 4;
        const size_t len = want < size ? want : size;
        bytes[count] = malloc(len + 1);
        if (!bytes[count]) abort();
        if (len) memcpy(bytes[count], data, len);
        if (sealed) reseal(bytes[count], len);
        files[count] = fmemopen(bytes[count], len ? len : 1, "rb");
        if (!files[count]) abort();
        if (!len) fgetc(files[count]); /* an empty file */
        count++;
        data += len;
        size -= len;
    }
    const hb_status_t status = hb_net_load_ranks(n, count, files, names);
    for (int k = 0; k < count; k++) {
        fclose(files[k]);
        free(bytes[k]);
    }
    return status;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1) return 0;
    if ((data[0] & 9) == 9) {
        hb_net_t *n = data[0] & 4 ? net_pt : net;
        if (load_set(n, data + 1, size - 1, data[0] & 2) != HB_SUCCESS) {
            if (hb_last_error()[0] == '\0') __builtin_trap();
            must(hb_net_init(n));
            return 0;
        }
        check_net(n);
        return 0;
    }
    const int which = data[0] & 1, sealed = data[0] & 2;
    hb_sim_t *s = data[0] & 4 ? cat : sim;
    hb_net_t *n = data[0] & 4 ? net_pt : net;
    unsigned char *file = malloc(size); /* the file's bytes, resealed in a copy */
    if (!file) return 0;
    memcpy(file, data + 1, size - 1);
    if (sealed) reseal(file, size - 1);
    FILE *f = fmemopen(file, size - 1 ? size - 1 : 1, "rb");
    if (!f) abort();
    if (size == 1) fgetc(f); /* an empty file: fmemopen needs a byte of room */
    const hb_status_t status = which ? hb_net_load(n, f, "fuzz.ckpt") : hb_sim_load(s, f, "fuzz.ckpt");
    fclose(f);
    free(file);
    if (status != HB_SUCCESS) {
        if (hb_last_error()[0] == '\0') __builtin_trap(); /* every refusal says why */
        /* and leaves something usable */
        if (which) must(hb_net_init(n));
        else must(hb_sim_init(s));
        return 0;
    }
    /* run on, net_pt too: a forged count of ProbAMPANMDA_EMS's release sites (unoccupied)
     * bounds a FROM loop of random draws, which stops the run with a message past
     * HB_CAT_FROM_MAX passes (docs/nmodl.md, section 4) instead of looping for minutes */
    if (which) check_net(n);
    else check_sim(s);
    return 0;
}
