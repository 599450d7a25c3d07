/*
 * hinesbatch run's checkpoints (docs/checkpoint.md). A checkpoint file is the run's own record
 * (the model file's content hash, cell run or network, the rank count, and for a cell run where
 * its streamed outputs stood) followed by the library's (hb_sim_save or hb_net_save). The run's
 * record has the library's layout: magic, version, byte-order check, length, payload and an
 * FNV-1a checksum.
 */
#define _POSIX_C_SOURCE 200809L
#include "run_checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

static const char magic[8] = {'H', 'B', 'R', 'U', 'N', '\r', '\n', 0};
enum { VERSION = 1 };
static const uint32_t byte_order = 0x01020304u;

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 0x100000001b3ULL;
    return h;
}

int run_ckpt_prepare(run_ckpt_t *c, double dt_ms, int epoch_steps)
{
    c->model_hash = fnv(0xcbf29ce484222325ULL, c->text, c->length); /* the text that runs */
    c->every_steps = 0;
    if (c->every_ms > 0.0) {
        /* whole steps, and for a network whole epochs (checkpoints fall between advances) */
        const double unit = epoch_steps > 0 ? (double)epoch_steps * dt_ms : dt_ms;
        const double units = ceil(c->every_ms / unit - 1e-9);
        if (!(units <= 1e15 / (epoch_steps > 0 ? epoch_steps : 1)))
            return cli_fail("run", "--checkpoint-every %g ms: expected at most %g ms", c->every_ms,
                            1e15 * dt_ms);
        c->every_steps = (long)(units < 1.0 ? 1.0 : units) * (epoch_steps > 0 ? epoch_steps : 1);
    }
    return 0;
}

long run_ckpt_limit(const run_ckpt_t *c, long step, long n)
{
    if (c->every_steps <= 0) return n;
    const long next = (step / c->every_steps + 1) * c->every_steps;
    return next - step < n ? next - step : n;
}

int run_ckpt_due(const run_ckpt_t *c, long step, long total)
{
    return c->every_steps > 0 && step > 0 && step < total && step % c->every_steps == 0;
}

typedef struct {
    unsigned char *data;
    size_t size, cap;
    int failed;
} buf_t;

static void put(buf_t *b, const void *p, size_t n)
{
    if (b->failed || !n) return;
    if (b->size + n > b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 256;
        while (cap < b->size + n) cap *= 2;
        unsigned char *q = realloc(b->data, cap);
        if (!q) {
            b->failed = 1;
            return;
        }
        b->data = q;
        b->cap = cap;
    }
    memcpy(b->data + b->size, p, n);
    b->size += n;
}

static void put_i64(buf_t *b, int64_t x) { put(b, &x, sizeof x); }

/* magic[8], version u32, byte order u32, payload length u64, payload, FNV-1a of all before. */
static int write_record(FILE *f, const buf_t *b)
{
    const uint32_t version = VERSION;
    const uint64_t length = b->size;
    unsigned char h[24];
    memcpy(h, magic, 8);
    memcpy(h + 8, &version, 4);
    memcpy(h + 12, &byte_order, 4);
    memcpy(h + 16, &length, 8);
    const uint64_t sum = fnv(fnv(0xcbf29ce484222325ULL, h, sizeof h), b->data, b->size);
    return fwrite(h, 1, sizeof h, f) == sizeof h &&
           (!b->size || fwrite(b->data, 1, b->size, f) == b->size) &&
           fwrite(&sum, sizeof sum, 1, f) == 1;
}

int run_ckpt_save(const run_ckpt_t *c, const run_ckpt_cells_t *cells, const hb_sim_t *sim,
                  const hb_net_t *net)
{
    char path[4200], tmp[4300];
    snprintf(path, sizeof path, "%s/checkpoint.%d.bin", c->out, c->rank);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    buf_t b = {NULL, 0, 0, 0};
    put(&b, &c->model_hash, sizeof c->model_hash);
    put_i64(&b, net != NULL);
    put_i64(&b, c->ranks);
    if (!net) {
        put_i64(&b, cells->samples);
        put_i64(&b, cells->n_probes);
        put(&b, cells->spike_count, (size_t)cells->n_probes * sizeof *cells->spike_count);
        put(&b, cells->first, (size_t)cells->n_probes * sizeof *cells->first);
        put_i64(&b, cells->probes_bytes);
        put_i64(&b, cells->spikes_bytes);
        put_i64(&b, cells->dat_bytes);
        put_i64(&b, cells->traces_format);
    }
    if (b.failed) {
        free(b.data);
        return cli_fail("run", "out of memory for the checkpoint");
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        free(b.data);
        return cli_fail("run", "%s: cannot write: %s", tmp, strerror(errno));
    }
    int rc = write_record(f, &b) ? 0 : cli_fail("run", "%s: cannot write: %s", tmp, strerror(errno));
    free(b.data);
    if (rc == 0) {
        const hb_status_t status = net ? hb_net_save(net, f, tmp) : hb_sim_save(sim, f, tmp);
        if (status != HB_SUCCESS) rc = cli_fail_status("run", status);
    }
    /* on disk before it replaces the last checkpoint */
    if (rc == 0 && (fflush(f) != 0 || fsync(fileno(f)) != 0))
        rc = cli_fail("run", "%s: cannot write: %s", tmp, strerror(errno));
    if (fclose(f) != 0 && rc == 0) rc = cli_fail("run", "%s: cannot write: %s", tmp, strerror(errno));
    if (rc == 0 && rename(tmp, path) != 0)
        rc = cli_fail("run", "%s: cannot rename to %s: %s", tmp, path, strerror(errno));
    if (rc != 0) {
        remove(tmp);
        return rc;
    }
    const int dir = open(c->out, O_RDONLY); /* the rename itself on disk */
    if (dir >= 0) {
        fsync(dir);
        close(dir);
    }
    return 0;
}

void run_ckpt_cells_free(run_ckpt_cells_t *cells)
{
    free(cells->spike_count);
    free(cells->first);
    memset(cells, 0, sizeof *cells);
}

static int refuse(FILE **f, const char *path, const char *what)
{
    fclose(*f);
    *f = NULL;
    return cli_fail("run", "%s: %s", path, what);
}

/* Opens the checkpoint file at path and checks the run's record (model file, kind; the rank
 * count `ranks` unless 0); *written: the rank count that wrote it. */
static int open_file(const run_ckpt_t *c, int network, int ranks, FILE **f, const char *path,
                     run_ckpt_cells_t *cells, int *written);

int run_ckpt_open(const run_ckpt_t *c, int network, FILE **f, char *path, size_t path_size,
                  run_ckpt_cells_t *cells)
{
    *f = NULL;
    struct stat st;
    if (stat(c->restart, &st) != 0)
        return cli_fail("run", "--restart %s: %s", c->restart, strerror(errno));
    if (S_ISDIR(st.st_mode)) {
        snprintf(path, path_size, "%s/checkpoint.%d.bin", c->restart, c->rank);
    } else if (c->ranks == 1) {
        snprintf(path, path_size, "%s", c->restart);
    } else {
        return cli_fail("run", "--restart %s: a file, on %d ranks; expected the directory of "
                        "their checkpoint.RANK.bin files", c->restart, c->ranks);
    }
    int written = 0;
    return open_file(c, network, c->ranks, f, path, cells, &written);
}

void run_ckpt_files_close(run_ckpt_files_t *set)
{
    for (int r = 0; r < set->n; r++) {
        if (set->files && set->files[r]) fclose(set->files[r]);
        if (set->names) free(set->names[r]);
    }
    free(set->files);
    free(set->names);
    memset(set, 0, sizeof *set);
}

int run_ckpt_open_ranks(const run_ckpt_t *c, run_ckpt_files_t *set)
{
    memset(set, 0, sizeof *set);
    struct stat st;
    if (stat(c->restart, &st) != 0)
        return cli_fail("run", "--restart %s: %s", c->restart, strerror(errno));
    const int dir = S_ISDIR(st.st_mode);
    char path[4200];
    if (dir) snprintf(path, sizeof path, "%s/checkpoint.0.bin", c->restart);
    else snprintf(path, sizeof path, "%s", c->restart);
    FILE *f = NULL;
    int n = 0;
    if (open_file(c, 1, 0, &f, path, NULL, &n) != 0) return 1;
    if (!dir && n != 1) {
        fclose(f);
        return cli_fail("run", "%s: a file of a run on %d ranks; expected the directory of their "
                        "checkpoint.RANK.bin files", path, n);
    }
    set->files = calloc((size_t)n, sizeof *set->files);
    set->names = calloc((size_t)n, sizeof *set->names);
    set->n = n;
    if (!set->files || !set->names) {
        fclose(f);
        free(set->files);
        free(set->names);
        memset(set, 0, sizeof *set);
        return cli_fail("run", "out of memory for %d checkpoint files", n);
    }
    set->files[0] = f;
    set->names[0] = strdup(path);
    int rc = set->names[0] ? 0 : cli_fail("run", "out of memory");
    for (int r = 1; r < n && rc == 0; r++) {
        snprintf(path, sizeof path, "%s/checkpoint.%d.bin", c->restart, r);
        int written = 0;
        if (access(path, F_OK) != 0)
            rc = cli_fail("run", "%s: missing: the checkpoint in %s was written on %d ranks "
                          "(checkpoint.0.bin says); expected checkpoint.0.bin to "
                          "checkpoint.%d.bin", path, c->restart, n, n - 1);
        else
            rc = open_file(c, 1, n, &set->files[r], path, NULL, &written);
        if (rc == 0 && !(set->names[r] = strdup(path))) rc = cli_fail("run", "out of memory");
    }
    if (rc != 0) run_ckpt_files_close(set);
    return rc;
}

static int open_file(const run_ckpt_t *c, int network, int ranks, FILE **f, const char *path,
                     run_ckpt_cells_t *cells, int *written)
{
    *f = NULL;
    struct stat st;
    if (!(*f = fopen(path, "rb"))) return cli_fail("run", "%s: cannot read: %s", path, strerror(errno));
    if (fstat(fileno(*f), &st) != 0 || !S_ISREG(st.st_mode))
        return refuse(f, path, S_ISDIR(st.st_mode) ? "a directory; expected a checkpoint file "
                      "(checkpoint.RANK.bin) or the directory that holds them"
                      : "not a regular file; expected a checkpoint file (checkpoint.RANK.bin)");
    unsigned char h[24];
    uint32_t version, order;
    uint64_t length, sum;
    const size_t got = fread(h, 1, sizeof h, *f);
    if (got < 8 || memcmp(h, magic, 8) != 0)
        return refuse(f, path, "not a checkpoint of hinesbatch run (no HBRUN magic at the start)");
    if (got < sizeof h) return refuse(f, path, "truncated in its header");
    memcpy(&version, h + 8, 4);
    memcpy(&order, h + 12, 4);
    memcpy(&length, h + 16, 8);
    if (version != VERSION) return refuse(f, path, "another version of the checkpoint format");
    if (order != byte_order) return refuse(f, path, "written on a machine of another byte order");
    if (length > 1u << 30) return refuse(f, path, "corrupt: its run record's length is absurd");
    unsigned char *p = malloc((size_t)length + 1);
    if (!p) return refuse(f, path, "out of memory");
    if (fread(p, 1, (size_t)length, *f) != (size_t)length || fread(&sum, sizeof sum, 1, *f) != 1) {
        free(p);
        return refuse(f, path, "truncated in its run record");
    }
    if (fnv(fnv(0xcbf29ce484222325ULL, h, sizeof h), p, (size_t)length) != sum) {
        free(p);
        return refuse(f, path, "corrupt: the run record's checksum differs from its content's");
    }
    int64_t v[2] = {0, 0};
    uint64_t model = 0;
    int rc = 0;
    if (length < 24) rc = refuse(f, path, "corrupt: its run record is too short");
    if (rc == 0) {
        memcpy(&model, p, 8);
        memcpy(v, p + 8, 16);
        if (model != c->model_hash) {
            char what[4400];
            snprintf(what, sizeof what, "written by a run of another model file (the content of "
                     "%s differs from the checkpointed run's): expected a checkpoint of this "
                     "model", c->model);
            rc = refuse(f, path, what);
        } else if (v[0] != network) {
            rc = refuse(f, path, network ? "a checkpoint of a cell run; the model is a network"
                                         : "a checkpoint of a network; the model is a cell run");
        } else if (v[1] < 1 || v[1] > 1 << 20 || (ranks > 0 && v[1] != ranks)) {
            char what[300];
            if (ranks <= 0)
                snprintf(what, sizeof what, "corrupt: written by a run on %lld ranks; expected "
                         "1 to %d", (long long)v[1], 1 << 20);
            else if (network)
                snprintf(what, sizeof what, "written by a run on %lld ranks; expected %d, as "
                         "checkpoint.0.bin's: the files of one checkpoint", (long long)v[1],
                         ranks);
            else
                snprintf(what, sizeof what, "written by a run on %lld ranks; this one has %d: "
                         "expected the same rank count (a cell run's checkpoint)",
                         (long long)v[1], ranks);
            rc = refuse(f, path, what);
        } else {
            *written = (int)v[1];
        }
    }
    if (rc == 0 && !network) {
        const size_t at = 24; /* after the hash, the kind and the rank count */
        int64_t n = -1;
        if (length >= at + 16) memcpy(&n, p + at + 8, 8);
        if (n < 0 || n > 0x7fffffff || length != at + 48 + (uint64_t)n * 16)
            rc = refuse(f, path, "corrupt: its run record's probe count does not match its length");
        else {
            int64_t samples, bytes[4];
            memcpy(&samples, p + at, 8);
            cells->samples = (long)samples;
            cells->n_probes = (int)n;
            cells->spike_count = calloc((size_t)n + 1, sizeof *cells->spike_count);
            cells->first = calloc((size_t)n + 1, sizeof *cells->first);
            if (!cells->spike_count || !cells->first) rc = refuse(f, path, "out of memory");
            if (rc == 0) {
                memcpy(cells->spike_count, p + at + 16, (size_t)n * 8);
                memcpy(cells->first, p + at + 16 + (size_t)n * 8, (size_t)n * 8);
                memcpy(bytes, p + at + 16 + (size_t)n * 16, 32);
                cells->probes_bytes = (long)bytes[0];
                cells->spikes_bytes = (long)bytes[1];
                cells->dat_bytes = (long)bytes[2];
                cells->traces_format = (int)bytes[3];
                /* the record's values, checked as a file's: what the outputs held then */
                int bad = samples < 0 || samples > 0x7fffffff || bytes[3] < 0 || bytes[3] > 3;
                for (int k = 0; k < 3; k++) bad |= bytes[k] < 0;
                for (int64_t q = 0; q < n; q++)
                    bad |= cells->spike_count[q] < 0 || cells->spike_count[q] > 0x7fffffff ||
                           !isfinite(cells->first[q]) ||
                           cells->first[q] < 0.0;
                if (bad)
                    rc = refuse(f, path, "corrupt: its run record holds a negative count or "
                                "size, a non-finite time or an unknown traces format");
            }
        }
    }
    free(p);
    return rc;
}
