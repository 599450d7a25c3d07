/*
 * A network of the real morphologies of data/morphologies (tests/net_morphologies.h:
 * one cell of each SWC file, hh everywhere, an ExpSyn each, connections in a ring), the file
 * tests/gpu/test_gpu_net runs on the GPU against the CPU. Here, on the CPU: the cells share a
 * mixed group; most of them spike; the ring's events change the spikes (a run with weight 0
 * differs), so the GPU's comparison covers event delivery; and the spikes are bitwise the same
 * with one thread (seq) and two (omp).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "hinesbatch.h"
#include "net/net_engine.h"
#include "net_morphologies.h"
#include "sim/sim_engine.h"

/* The network's spikes (a copy; *n of them) on `backend` with `threads`; NULL on a failure. Its
 * mixed groups' cells in *mixed_cells. */
static hb_spike_t *run(const char *path, hb_backend_t backend, int threads, size_t *n,
                       int *mixed_cells)
{
    *n = 0;
    hb_comm_t *comm = NULL;
    hb_net_t *net = NULL;
    hb_spike_t *out = NULL;
    hb_sim_overrides_t ov;
    memset(&ov, 0, sizeof ov);
    hb_sim_options_default(&ov.options);
    ov.set = HB_SIM_SET_BACKEND | HB_SIM_SET_THREADS;
    ov.options.backend = backend;
    ov.options.threads = threads;
    CHECK_OK(hb_comm_create(HB_COMM_SERIAL, &comm));
    if (comm) {
        const hb_status_t st = hb_net_load_json_with(path, &ov, comm, &net);
        CHECKF(st == HB_SUCCESS, "%s on %s: %s", path, hb_backend_name(backend), hb_last_error());
    }
    if (net && hb_net_run(net) == HB_SUCCESS) {
        const hb_spike_t *sp = NULL;
        CHECK_OK(hb_net_spikes(net, &sp, n));
        out = check_malloc((*n + 1) * sizeof *out);
        if (*n) memcpy(out, sp, *n * sizeof *sp);
        *mixed_cells = 0;
        for (int g = 0; net->sim && g < net->sim->n_groups; g++)
            if (net->sim->groups[g].k.mixed) *mixed_cells += net->sim->groups[g].k.count;
    } else if (net) {
        CHECKF(0, "%s on %s: %s", path, hb_backend_name(backend), hb_last_error());
    }
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return out;
}

static int same_spikes(const hb_spike_t *a, size_t na, const hb_spike_t *b, size_t nb)
{
    if (na != nb) return 0;
    for (size_t k = 0; k < na; k++)
        if (a[k].gid != b[k].gid || memcmp(&a[k].time_ms, &b[k].time_ms, sizeof a[k].time_ms))
            return 0;
    return 1;
}

int main(void)
{
    char dir[] = "/tmp/hb_net_morphXXXXXX";
    if (!mkdtemp(dir)) {
        CHECKF(0, "cannot make a temporary folder");
        return check_summary("test_net_morphologies");
    }
    char path[64], quiet[64];
    snprintf(path, sizeof path, "%s/net.json", dir);
    snprintf(quiet, sizeof quiet, "%s/quiet.json", dir);
    const int cells = net_morphologies_write(HB_DATA_DIR "/morphologies", path, 0.01);
    CHECKF(cells >= 10, "%d SWC files in %s/morphologies; expected the shared data's", cells,
           HB_DATA_DIR);
    CHECK(net_morphologies_write(HB_DATA_DIR "/morphologies", quiet, 0.0) == cells);
    size_t n = 0, nq = 0, nt = 0;
    int mixed = 0, unused = 0;
    hb_spike_t *ref = cells ? run(path, HB_BACKEND_SEQ, 1, &n, &mixed) : NULL;
    if (ref) {
        CHECKF(mixed == cells, "%d of %d cells in mixed groups", mixed, cells);
        int spiking = 0;
        for (int c = 0; c < cells; c++) {
            int fired = 0;
            for (size_t k = 0; k < n && !fired; k++) fired = ref[k].gid == (uint32_t)c;
            spiking += fired;
        }
        CHECKF(2 * spiking > cells, "%d of %d cells spiked", spiking, cells);
        hb_spike_t *q = run(quiet, HB_BACKEND_SEQ, 1, &nq, &unused);
        CHECKF(q && !same_spikes(ref, n, q, nq), "the ring's events changed no spike");
        free(q);
        if (hb_backend_available(HB_BACKEND_OMP)) {
            hb_spike_t *t = run(path, HB_BACKEND_OMP, 2, &nt, &unused);
            CHECKF(t && same_spikes(ref, n, t, nt), "two threads: %zu spikes, one: %zu (or "
                   "different times)", nt, n);
            free(t);
        }
        printf("%d real morphologies, one cell each: %zu spikes, bitwise on 1 and 2 threads\n",
               cells, n);
    }
    free(ref);
    unlink(path);
    unlink(quiet);
    rmdir(dir);
    return check_summary("test_net_morphologies");
}
