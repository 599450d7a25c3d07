/*
 * Checkpoint files (docs/checkpoint.md): a versioned binary record, a header (magic, version,
 * byte-order check, the sizes of the C types), a payload of fixed-width values in this
 * machine's byte order, and a checksum. A payload is built in memory (hb_ckpt_buf_t), written
 * in one piece, and read back whole before any state changes (hb_ckpt_in_t), so a truncated or
 * corrupt file is refused before anything runs. Shared by the simulation (sim_checkpoint.c),
 * the network (net/net_checkpoint.c) and the CLI's own record.
 */
#ifndef HB_SIM_CHECKPOINT_H
#define HB_SIM_CHECKPOINT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "hinesbatch.h"

/* What a record holds. */
enum { HB_CKPT_SIM = 1, HB_CKPT_NET = 2 };

typedef struct {
    unsigned char *data;
    size_t size, capacity;
    int failed; /* out of memory */
} hb_ckpt_buf_t;

void hb_ckpt_put(hb_ckpt_buf_t *b, const void *p, size_t n);
void hb_ckpt_put_u64(hb_ckpt_buf_t *b, uint64_t x);
void hb_ckpt_put_i64(hb_ckpt_buf_t *b, int64_t x);
void hb_ckpt_put_f64(hb_ckpt_buf_t *b, double x);
void hb_ckpt_buf_free(hb_ckpt_buf_t *b);

/* The format's versions (docs/checkpoint.md): 2 added the catalogue mechanisms' state, 3 the
 * mechanisms' catalogue identities, the connections' weight vectors and the events' vector, 4
 * the state in the model's order (cell by cell, not the engine's blocks and lanes); versions
 * 5 the point processes' waiting self-events (net_send, net_move, WATCH); versions
 * 1 to 3 still read (for simulations they can hold, on the block width that wrote them). */
enum { HB_CKPT_VERSION = 5, HB_CKPT_VERSION_OLDEST = 1 };

typedef struct {
    const unsigned char *data;
    size_t size, pos;
    int bad;          /* read past the end */
    uint32_t version; /* the record's format version */
} hb_ckpt_in_t;

/* 0 once a read went past the end (then every value reads as 0). */
int hb_ckpt_get(hb_ckpt_in_t *in, void *p, size_t n);
uint64_t hb_ckpt_get_u64(hb_ckpt_in_t *in);
int64_t hb_ckpt_get_i64(hb_ckpt_in_t *in);
double hb_ckpt_get_f64(hb_ckpt_in_t *in);

/* FNV-1a, 64 bits: the checksum and the fingerprints. Start with HB_CKPT_HASH0. */
#define HB_CKPT_HASH0 0xcbf29ce484222325ULL
uint64_t hb_ckpt_hash(uint64_t h, const void *p, size_t n);
uint64_t hb_ckpt_hash_f64(uint64_t h, double x);
uint64_t hb_ckpt_hash_i64(uint64_t h, int64_t x);

/* Header, payload and checksum to f (the caller makes the file atomic); `name` in messages. */
hb_status_t hb_ckpt_write(FILE *f, const char *name, uint32_t kind, const hb_ckpt_buf_t *b);
/* The record of `kind` at f's position, checked (header, length, checksum) and read whole into
 * *data (freed by the caller), its format version in *version; f left after it. */
hb_status_t hb_ckpt_read(FILE *f, const char *name, uint32_t kind, unsigned char **data,
                         size_t *size, uint32_t *version);

/* sim_checkpoint.c: a simulation's state into a payload, and back (after the fingerprint
 * matched); used by the network's record too. */
hb_status_t hb_sim_checkpoint_put(const hb_sim_t *sim, hb_ckpt_buf_t *b, const char *name);
hb_status_t hb_sim_checkpoint_get(hb_sim_t *sim, hb_ckpt_in_t *in, const char *name);

/* A network restarted on another rank count (net_checkpoint.c): after hb_sim_init,
 * hb_sim_checkpoint_move_begin empties the self-event queue INITIAL filled; then each cell's
 * state moved from a simulation of the checkpoint's partition (src, loaded) to this one's
 * (dst): its values, probes' threshold state, samples and spikes; HB_ERR_NOT_SUPPORTED where
 * the two groups list other catalogue mechanisms or ions. Then hb_sim_checkpoint_moved: the
 * sample times of `from` (any of the checkpoint's simulations), the engine's state and the
 * step. */
void hb_sim_checkpoint_move_begin(hb_sim_t *sim);
hb_status_t hb_sim_checkpoint_move_cell(hb_sim_t *dst, int dc, const hb_sim_t *src, int sc,
                                        const char *name);
/* A connection's weight vector (the weight and NET_RECEIVE's per-connection state): src's
 * vector sv into dst's dv. */
hb_status_t hb_sim_checkpoint_move_weights(hb_sim_t *dst, int dv, const hb_sim_t *src, int sv,
                                           const char *name);
/* src's waiting self-events of its cells that are dst's (cell[src's cell]: dst's, -1: not
 * here) queued in dst, their targets and weight vectors (vec[src's]: dst's, of n_vec) mapped;
 * a target's ties keep their order (their sequences renumbered in order after dst's). */
hb_status_t hb_sim_checkpoint_move_self_events(hb_sim_t *dst, const hb_sim_t *src,
                                               const int *cell, const int *vec, int n_vec,
                                               const char *name);
hb_status_t hb_sim_checkpoint_moved(hb_sim_t *sim, const hb_sim_t *from, long step,
                                    const char *name);

#endif
