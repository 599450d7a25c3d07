/*
 * A network of the real morphologies of ../shared/data/morphologies (tests/net_morphologies.h:
 * one cell of each SWC file, hh everywhere, an ExpSyn each, connections in a ring), the file
 * tests/gpu/test_gpu_net runs on the GPU against the CPU. Here, on the CPU: the cells share a
 * mixed group; most of them spike; the ring's events change the spikes (a run with weight 0
 * differs), so the GPU's comparison covers event delivery; and the spikes are bitwise the same
 * with one thread (seq) and two (omp). With three copies of each file, the copies step as groups
 * of their own or, with the tuning sim.mixed_copies (the GPU's rule for few copies), in the
 * mixed group: the same spikes and voltages, bitwise.
 */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "core/bench.h"
#include "hinesbatch.h"
#include "net/net_engine.h"
#include "net_morphologies.h"
#include "sim/sim_engine.h"

/* The network's spikes (a copy; *n of them) on `backend` with `threads`; NULL on a failure. Its
 * mixed groups' cells in *mixed_cells; every cell's voltages at the end, cell after cell, in
 * *v (malloc'd, *nv values) where v is not NULL. */
static hb_spike_t *run_v(const char *path, hb_backend_t backend, int threads, size_t *n,
                         int *mixed_cells, double **v, size_t *nv)
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
        if (v && net->sim) {
            const int cells = hb_sim_cell_count(net->sim);
            *nv = (size_t)net->sim->offset[cells];
            *v = check_malloc((*nv + 1) * sizeof **v);
            for (int c = 0; c < cells; c++) {
                const double *cv = NULL;
                CHECK_OK(hb_sim_voltages(net->sim, c, &cv));
                const size_t m = (size_t)(net->sim->offset[c + 1] - net->sim->offset[c]);
                if (cv) memcpy(*v + net->sim->offset[c], cv, m * sizeof *cv);
            }
        }
    } else if (net) {
        CHECKF(0, "%s on %s: %s", path, hb_backend_name(backend), hb_last_error());
    }
    hb_net_destroy(net);
    hb_comm_destroy(comm);
    return out;
}

static hb_spike_t *run(const char *path, hb_backend_t backend, int threads, size_t *n,
                       int *mixed_cells)
{
    return run_v(path, backend, threads, n, mixed_cells, NULL, NULL);
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
    const int cells = net_morphologies_write(HB_DATA_DIR "/morphologies", path, 0.01, 1);
    CHECKF(cells >= 10, "%d SWC files in %s/morphologies; expected the shared data's", cells,
           HB_DATA_DIR);
    CHECK(net_morphologies_write(HB_DATA_DIR "/morphologies", quiet, 0.0, 1) == cells);
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

    /* Copies: groups of their own, or in the mixed group (the GPU's rule, forced here). */
    const int copied = net_morphologies_write(HB_DATA_DIR "/morphologies", path, 0.01, 3);
    CHECK(copied == 3 * cells);
    size_t nc = 0, nm = 0, nvc = 0, nvm = 0;
    double *vc = NULL, *vm = NULL;
    int mixed_c = 0, mixed_m = 0;
    hb_spike_t *sc = copied ? run_v(path, HB_BACKEND_SEQ, 1, &nc, &mixed_c, &vc, &nvc) : NULL;
    CHECK_OK(hb_set_default_tuning("sim.mixed_copies=3"));
    hb_spike_t *sm = copied ? run_v(path, HB_BACKEND_SEQ, 1, &nm, &mixed_m, &vm, &nvm) : NULL;
    CHECK_OK(hb_set_default_tuning(NULL));
    CHECKF(sc && mixed_c == 0, "copies: %d cells in the mixed group; expected none", mixed_c);
    CHECKF(sm && mixed_m == copied, "copies forced mixed: %d of %d cells in the mixed group",
           mixed_m, copied);
    CHECKF(sc && sm && nc > 0 && same_spikes(sc, nc, sm, nm),
           "copies: %zu spikes in groups of copies, %zu in the mixed group (or other times)", nc,
           nm);
    CHECKF(vc && vm && nvc == nvm && memcmp(vc, vm, nvc * sizeof *vc) == 0,
           "copies: the voltages at t_stop differ between groups of copies and the mixed group");
    printf("%d cells, %d copies of each file: %zu spikes and %zu voltages bitwise, as groups of "
           "copies and in the mixed group\n", copied, copied / (cells ? cells : 1), nc, nvc);
    free(sc);
    free(sm);
    free(vc);
    free(vm);
    unlink(path);
    unlink(quiet);
    rmdir(dir);
    return check_summary("test_net_morphologies");
}
