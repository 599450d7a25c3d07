/* A network run's recorded values into DIR/traces.h5 or traces.csv (tools/net_traces.c). */
#ifndef HB_TOOLS_NET_TRACES_H
#define HB_TOOLS_NET_TRACES_H

#include "hinesbatch.h"

typedef struct net_traces net_traces_t;

/* The network's records' file on rank 0 (h5: traces.h5, else traces.csv); restart: the file of
 * the checkpointed run in DIR continued after the checkpoint's rows (after hb_net_load). No
 * records: *out NULL. 0, or 1 after the message. */
int net_traces_open(hb_net_t *net, const char *dir, int h5, int restart, int rank,
                    net_traces_t **out);
/* Collective (every rank, t NULL on all or none): the rows recorded since the last call
 * gathered, appended by rank 0, and dropped. 0, or 1 after the message. */
int net_traces_write(net_traces_t *t, hb_net_t *net);
/* Rank 0's file's path (NULL elsewhere, or without records). */
const char *net_traces_path(const net_traces_t *t);
int net_traces_close(net_traces_t *t);

#endif
