/*
 * Mixed groups (docs/layouts.md): cells of different shapes packed into one Block-Interleaved
 * block, each lane on its own rows, parents and hh nodes. A cell's results must be bitwise the
 * same whether it shares a block with other cells or is simulated alone (a group of one lane):
 * that is what makes a network's spikes independent of how cells are spread over ranks.
 *
 * Cells: Arbor's busyring random trees (every one its own shape and size: blocks with padding
 * rows, a last block with padding lanes), some with hh on half the dendrites too (lanes with
 * different hh counts), IClamps at the soma and a dendrite, an Exp2Syn beside the ExpSyn,
 * events through the engine's queue; one of them three times (a group of its own shape).
 * Compared after every chunk: v of every node, hh and synapse states, spike times, for
 * backward Euler and Crank-Nicolson. Then: a non-finite voltage named at its real cell and
 * node, and a checkpoint of a mixed simulation resumed to the same bits. Also: nine real
 * morphologies in one mixed group (more distinct row constants than the CPU's table holds),
 * and the GPU's steps of a mixed group (the per-lane one; the tree step, a cell's rows in
 * parallel) run on the host against the CPU engine; with catalogue point processes, the GPU's
 * delivery of their events too.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "core/bench.h"
#include "hinesbatch.h"
#include "net/net_busyring.h"
#include "sim/sim_engine.h"
/* one copy of the built-in catalogues' kernels (the CUDA step's choice too), not one inlined
 * into every call */
#define HB_CAT_DISPATCH_QUAL static
#include "common/cat_fused.h"
#include "common/sim_tree.h"
#include "mech/catalogue.h"
#include "sim_cells.h"
#include "sim_common.h"

#define N_TREES 11 /* cells of their own shape */
#define N_CELLS (N_TREES + 2)
#define STEPS 800
#define CHUNK 100

typedef struct {
    hb_morph_t *morph[N_TREES];
    hb_model_t *model[N_TREES];
    hb_model_t *cells[N_CELLS]; /* the trees, then tree 4 twice more */
} cells_t;

static void make_cells(cells_t *c)
{
    memset(c, 0, sizeof *c);
    hb_busyring_t p;
    hb_busyring_default(&p);
    p.depth = 4;
    for (int t = 0; t < N_TREES; t++) {
        CHECK_OK(hb_busyring_cell(&p, (uint32_t)(3 * t + 1), &c->morph[t], &c->model[t]));
        hb_model_t *md = c->model[t];
        if (!md) continue;
        const int m = hb_cable_size(hb_model_cable(md));
        if (t % 3 == 1) { /* hh on the odd levels' dendrites too */
            hb_mech_t hh;
            hb_mech_default(HB_MECH_HH, &hh);
            hh.gnabar = 0.05 + 0.01 * t;
            CHECK_OK(hb_model_insert(md, 4, &hh));
        }
        const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0};
        const hb_location_t mid = {HB_LOC_NODE, 0, 0, 0.0, m / 2};
        int last = m - 1; /* the last node with membrane */
        hb_node_info_t info;
        while (last > 0 && hb_cable_node(hb_model_cable(md), last, &info) == HB_SUCCESS &&
               !(info.area_um2 > 0.0))
            last--;
        const hb_location_t leaf = {HB_LOC_NODE, 0, 0, 0.0, last};
        if (t % 2 == 0) {
            CHECK_OK(hb_model_add_iclamp(md, &soma, 1.0 + 0.5 * t, 2.0, 0.8));
            CHECK_OK(hb_model_add_iclamp(md, &mid, 3.0, 5.0, 0.3 + 0.05 * t));
            CHECK_OK(hb_model_add_iclamp(md, &mid, 4.0, 1.0, -0.1));
        }
        if (t % 3 != 0) {
            hb_synapse_t syn;
            hb_synapse_default(HB_SYN_EXP2, &syn);
            syn.tau1_ms = 0.5;
            syn.tau2_ms = 3.0;
            CHECK_OK(hb_model_add_synapse(md, &leaf, &syn, NULL));
        }
        const hb_probe_spec_t probe = {mid, "mid", 1, -30.0};
        CHECK_OK(hb_model_add_probe(md, &probe, NULL));
        c->cells[t] = md;
    }
    c->cells[N_TREES] = c->cells[N_TREES + 1] = c->model[4];
}

static void free_cells(cells_t *c)
{
    for (int t = 0; t < N_TREES; t++) {
        hb_model_destroy(c->model[t]);
        hb_morph_destroy(c->morph[t]);
    }
}

/* Events of every cell's synapses (cell index `cell` in a simulation of one: 0). */
static size_t make_events(cells_t *c, int only, hb_sim_event_t *ev)
{
    static const long steps[3] = {20, 150, 300};
    size_t n = 0;
    for (int s = 0; s < 3; s++)
        for (int cell = 0; cell < N_CELLS; cell++) {
            if (only >= 0 && cell != only) continue;
            for (int q = 0; q < hb_model_synapse_count(c->cells[cell]); q++)
                ev[n++] = (hb_sim_event_t){steps[s] + cell, only >= 0 ? 0 : cell, q, -1,
                                           0.025 * (double)(steps[s] + cell),
                                           q == 0 ? 0.08 + 0.01 * s : 0.02};
        }
    return n;
}

/* A cell's state: v of its nodes, hh states, synapse states (values written to out; count). */
static size_t cell_state(hb_sim_t *sim, int cell, double *out)
{
    const double *v = NULL;
    size_t n = 0;
    CHECK_OK(hb_sim_voltages(sim, cell, &v));
    const int m = sim->offset[cell + 1] - sim->offset[cell];
    for (int i = 0; v && i < m; i++) out[n++] = v[i];
    const group_t *gr = &sim->groups[sim->group_of[cell]];
    const hb_step_group_t *k = &gr->k;
    const int slot = sim->slot_of[cell], w = k->width;
    const int n_hh = k->mixed ? k->lane_hh[slot] : k->n_hh;
    const size_t inst = hb_step_hh_base(k, slot / w);
    for (int j = 0; j < n_hh; j++)
        for (int x = 0; x < 3; x++)
            out[n++] = k->hh_state[((inst + (size_t)j) * 3 + (size_t)x) * (size_t)w +
                                   (size_t)(slot % w)];
    for (int q = 0; q < sim->cells[cell]->n_synapses; q++) {
        size_t stride = 1;
        const double *st = hb_sim_synapse_state(sim, cell, q, NULL, &stride);
        out[n++] = st[0];
        out[n++] = st[stride];
    }
    return n;
}

#define MAX_STATE 4096

static void test_bits(hb_method_t method)
{
    cells_t c;
    make_cells(&c);
    hb_sim_options_t opt = sim_options(0.025, STEPS * 0.025, 0.025 * CHUNK);
    opt.method = method;
    hb_sim_t *mixed = NULL, *alone[N_CELLS] = {NULL};
    hb_sim_event_t ev[3 * N_CELLS * 2];
    double *a = check_malloc(MAX_STATE * sizeof *a), *b = check_malloc(MAX_STATE * sizeof *b);
    CHECK_OK(hb_sim_create(c.cells, N_CELLS, &opt, &mixed));
    for (int cell = 0; cell < N_CELLS; cell++)
        CHECK_OK(hb_sim_create(&c.cells[cell], 1, &opt, &alone[cell]));
    if (!mixed) goto out;
    /* the layout: the copies a group of their own, the trees one mixed group of several
     * blocks, rows and hh counts differing within a block, padding lanes at the end */
    const group_t *mg = &mixed->groups[mixed->n_groups - 1];
    const hb_step_group_t *k = &mg->k;
    CHECKF(mixed->n_groups == 2 && !mixed->groups[0].k.mixed && mixed->groups[0].k.count == 3 &&
               k->mixed && k->count == N_TREES - 1 && k->width > 1 && k->blocks > 1 &&
               k->count % k->width != 0,
           "%d groups; the last: mixed %d, %d cells, %d lanes, %d blocks", mixed->n_groups,
           k->mixed, k->count, k->width, k->blocks);
    int rows_differ = 0, hh_differ = 0;
    for (int s = 1; s < k->count; s++) {
        if (s % k->width == 0) continue;
        rows_differ |= k->lane_m[s] != k->lane_m[s - 1];
        hh_differ |= k->lane_hh[s] != k->lane_hh[s - 1];
    }
    for (int s = 1; s < k->count; s++) /* sorted by rows */
        CHECKF(k->lane_m[s] >= k->lane_m[s - 1], "slot %d: %d rows after %d", s, k->lane_m[s],
               k->lane_m[s - 1]);
    CHECK(rows_differ && hh_differ);
    CHECK_OK(hb_sim_init(mixed));
    size_t n = make_events(&c, -1, ev);
    CHECK_OK(hb_sim_queue_events(mixed, n, ev));
    for (int cell = 0; cell < N_CELLS; cell++) {
        if (!alone[cell]) goto out;
        CHECK_OK(hb_sim_init(alone[cell]));
        n = make_events(&c, cell, ev);
        CHECK_OK(hb_sim_queue_events(alone[cell], n, ev));
    }
    int spikes = 0;
    for (long done = 0; done < STEPS; done += CHUNK) {
        CHECK_OK(hb_sim_advance(mixed, CHUNK));
        for (int cell = 0; cell < N_CELLS; cell++) {
            CHECK_OK(hb_sim_advance(alone[cell], CHUNK));
            const size_t na = cell_state(mixed, cell, a), nb = cell_state(alone[cell], 0, b);
            CHECKF(na == nb && na > 0 && memcmp(a, b, na * sizeof *a) == 0,
                   "%s, cell %d after %ld steps: %zu state values in a mixed block, %zu alone, "
                   "not bitwise the same", method == HB_METHOD_CN ? "CN" : "BE", cell,
                   done + CHUNK, na, nb);
        }
    }
    /* spike times: the probes of each cell (cell order in the mixed simulation) */
    for (int cell = 0, p = 0; cell < N_CELLS; cell++)
        for (int q = 0; q < alone[cell]->n_probes; q++, p++) {
            const series_t *x = &mixed->spikes[p], *y = &alone[cell]->spikes[q];
            spikes += x->count;
            CHECKF(x->count == y->count &&
                       (x->count == 0 ||
                        memcmp(x->data, y->data, (size_t)x->count * sizeof *x->data) == 0),
                   "cell %d probe %d: %d spikes in a mixed block, %d alone", cell, q, x->count,
                   y->count);
        }
    CHECKF(spikes >= N_CELLS, "%d spikes", spikes);
    printf("%s: %d cells (%d in a mixed group of %d blocks of %d lanes), %d steps: v, hh and "
           "synapse states and %d spikes bitwise those of each cell alone\n",
           method == HB_METHOD_CN ? "Crank-Nicolson" : "backward Euler", N_CELLS, k->count,
           k->blocks, k->width, STEPS, spikes);
out:
    free(a);
    free(b);
    hb_sim_destroy(mixed);
    for (int cell = 0; cell < N_CELLS; cell++) hb_sim_destroy(alone[cell]);
    free_cells(&c);
}

/* A NaN in one lane's last node: reported at that cell (not a neighbour, not padding). */
static void test_fault(void)
{
    cells_t c;
    make_cells(&c);
    hb_sim_options_t opt = sim_options(0.025, 10.0, 10.0);
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(c.cells, N_TREES, &opt, &sim));
    if (!sim) goto out;
    CHECK_OK(hb_sim_init(sim));
    const group_t *gr = &sim->groups[0];
    CHECK(sim->n_groups == 1 && gr->k.mixed);
    const int cell = gr->cells[gr->k.width + 1]; /* block 1, lane 1 */
    const int slot = sim->slot_of[cell], rows = gr->k.lane_m[slot];
    CHECK(rows < hb_step_block_rows(&gr->k, 1) || gr->k.lane_m[slot + 1] > rows);
    gr->v[hb_step_element(&gr->k, slot, rows - 1)] = NAN;
    CHECK(hb_sim_advance(sim, HB_SIM_CHECK_STEPS) == HB_ERR_NONFINITE);
    char want[64];
    snprintf(want, sizeof want, "in cell %d, node ", cell);
    const char *msg = hb_last_error(), *at = strstr(msg, want);
    const int node = at ? atoi(at + strlen(want)) : -1;
    CHECKF(at && node >= 0 && node < rows, "expected \"%s\" and a node below %d: %s", want, rows,
           msg);
    printf("a NaN in cell %d (slot %d of a mixed group): %s\n", cell, slot, msg);
out:
    hb_sim_destroy(sim);
    free_cells(&c);
}

/* A checkpoint of a mixed simulation resumes to the bits of the uninterrupted run. */
static void test_checkpoint(void)
{
    cells_t c;
    make_cells(&c);
    hb_sim_options_t opt = sim_options(0.025, 10.0, 1.0);
    hb_sim_t *sim = NULL;
    hb_sim_event_t ev[3 * N_CELLS * 2];
    double *a = check_malloc(MAX_STATE * N_CELLS * sizeof *a);
    double *b = check_malloc(MAX_STATE * N_CELLS * sizeof *b);
    FILE *f = tmpfile();
    CHECK(f != NULL);
    CHECK_OK(hb_sim_create(c.cells, N_CELLS, &opt, &sim));
    if (!sim || !f) goto out;
    CHECK_OK(hb_sim_init(sim));
    CHECK_OK(hb_sim_advance(sim, 150));
    CHECK_OK(hb_sim_save(sim, f, "mixed.ckpt"));
    size_t na = 0, nb = 0;
    const size_t n = make_events(&c, -1, ev);
    size_t later = 0; /* the events still to come */
    while (later < n && ev[later].step < 150) later++;
    CHECK_OK(hb_sim_queue_events(sim, n - later, ev + later));
    CHECK_OK(hb_sim_advance(sim, 200));
    for (int cell = 0; cell < N_CELLS; cell++) na += cell_state(sim, cell, a + na);
    rewind(f);
    CHECK_OK(hb_sim_load(sim, f, "mixed.ckpt"));
    CHECK(hb_sim_time(sim) == 150 * 0.025);
    CHECK_OK(hb_sim_queue_events(sim, n - later, ev + later));
    CHECK_OK(hb_sim_advance(sim, 200));
    for (int cell = 0; cell < N_CELLS; cell++) nb += cell_state(sim, cell, b + nb);
    CHECKF(na == nb && memcmp(a, b, na * sizeof *a) == 0,
           "resumed from a checkpoint: %zu state values, uninterrupted %zu: not the same bits", nb,
           na);
out:
    if (f) fclose(f);
    free(a);
    free(b);
    hb_sim_destroy(sim);
    free_cells(&c);
}

/* A simulation of make_cells' cells, its last group mixed, initialised; NULL (a failed check)
 * where it is not. */
static hb_sim_t *mixed_sim(cells_t *c, const hb_sim_options_t *opt)
{
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_sim_create(c->cells, N_CELLS, opt, &sim));
    if (!sim || !sim->groups[sim->n_groups - 1].k.mixed) {
        CHECK(sim && sim->groups[sim->n_groups - 1].k.mixed);
        hb_sim_destroy(sim);
        return NULL;
    }
    CHECK_OK(hb_sim_init(sim));
    return sim;
}

/* The CPU keeps a tabled mixed group's u, l, pas_g and pas_e only in its row table; the
 * device's steps read arrays: unpacked into tab (freed by the caller) and set in g. */
static void unpack_table(const hb_step_group_t *k, size_t size, double *tab[4],
                         hb_step_group_t *g)
{
    if (!k->row_index) return;
    CHECK(!k->u && !k->l && !k->pas_g && !k->pas_e); /* one copy, not two */
    for (int q = 0; q < 4; q++) {
        tab[q] = check_malloc((size + 1) * sizeof *tab[q]);
        for (size_t e = 0; e < size; e++) tab[q][e] = k->row_table[4 * k->row_index[e] + q];
    }
    g->u = tab[0];
    g->l = tab[1];
    g->pas_g = tab[2];
    g->pas_e = tab[3];
    int same = 1; /* the tree step's cfac by the index: the CPU's array, bitwise */
    for (size_t e = 0; e < size && same; e++)
        same = memcmp(&k->cfac_table[k->row_index[e]], &k->cfac[e], sizeof(double)) == 0;
    CHECKF(same, "a row's cfac in the row table differs from the group's");
}

/* A mixed group's step by its definition, on the host: hb_step_lanes one lane at a time
 * (hb_step_mixed_lane, lanes 1, d and rhs in the layout), the group's CPU-only packing (fixed
 * rows, row table, chains) left out. The CPU engine's blocks and the GPU's tree step
 * (test_tree_path) must both give its bits. */
static void test_device_path(void)
{
    cells_t c;
    make_cells(&c);
    const long steps = 300;
    hb_sim_options_t opt = sim_options(0.025, (double)steps * 0.025, 0.025 * 100);
    hb_sim_t *sim = mixed_sim(&c, &opt);
    if (!sim) {
        free_cells(&c);
        return;
    }
    const group_t *gr = &sim->groups[sim->n_groups - 1];
    const hb_step_group_t *k = &gr->k;
    const size_t size = k->block_start[k->blocks], hh = k->hh_start[k->blocks] * 3 * (size_t)k->width;
    hb_step_group_t g = *k;
    double *v = check_malloc(size * sizeof *v), *d = check_malloc(size * sizeof *d);
    double *rhs = check_malloc(size * sizeof *rhs), *hs = check_malloc((hh + 1) * sizeof *hs);
    double *ss = check_malloc((gr->n_syn_state + 1) * sizeof *ss);
    memcpy(v, k->v, size * sizeof *v);
    memcpy(hs, k->hh_state, hh * sizeof *hs);
    if (gr->n_syn_state) memcpy(ss, k->syn_state, gr->n_syn_state * sizeof *ss);
    g.v = v;
    g.hh_state = hs;
    g.syn_state = gr->n_syn_state ? ss : NULL;
    /* the CPU keeps a tabled group's u, l, pas_g and pas_e only in its row table: the device's
     * arrays, unpacked */
    double *tab[4] = {NULL, NULL, NULL, NULL};
    unpack_table(k, size, tab, &g);
    g.fixed_row = NULL;
    g.fixed_r = g.fixed_c = g.fixed_f = NULL;
    g.row_index = g.chain_row = NULL;
    g.row_table = NULL;
    CHECK_OK(hb_sim_advance(sim, steps));
    hb_step_params_t p = {opt.dt_ms, 1.0, 0.0, sim->table.use_table ? sim->table.table : NULL,
                          sim->table.q10};
    for (long n = 0; n < steps; n++) {
        p.t_mid = ((double)n + 0.5) * opt.dt_ms;
        for (int b = 0; b < k->blocks; b++)
            for (int lane = 0; lane < k->width; lane++) {
                const size_t base = k->block_start[b] + (size_t)lane;
                hb_step_lanes(&g, &p, b, lane, 1, k->width, 0, d + base, rhs + base);
            }
    }
    CHECKF(memcmp(v, k->v, size * sizeof *v) == 0 && memcmp(hs, k->hh_state, hh * sizeof *hs) == 0 &&
               (!gr->n_syn_state ||
                memcmp(ss, k->syn_state, gr->n_syn_state * sizeof *ss) == 0),
           "the device's per-lane step of a mixed group differs from the CPU engine's after "
           "%ld steps", steps);
    int spiking = 0; /* the IClamps drove the cells */
    for (int q = 0; q < sim->n_probes; q++) spiking += sim->spikes[q].count;
    CHECKF(spiking > 0, "no spike in %ld steps: nothing happened to compare", steps);
    for (int q = 0; q < 4; q++) free(tab[q]);
    free(v);
    free(d);
    free(rhs);
    free(hs);
    free(ss);
    hb_sim_destroy(sim);
    free_cells(&c);
}

/* The GPU's tree step (src/common/sim_tree.h: a warp a cell, rows in parallel phase by phase)
 * run on the host, each phase's and round's rows in reverse order, against the CPU engine;
 * synapses conducting (their states set before the run) so their terms count. */
static void tree_step_items(const hb_step_group_t *g, const hb_sim_tree_t *t,
                            const hb_step_params_t *p, double *d, double *rhs, int from, int to)
{
    const int n_mech = g->cat ? g->cat->n_mech : 0;
    const int membrane = !g->cat || from == 0;
    const int solve = !g->cat || (from <= n_mech + 1 && n_mech + 1 < to);
    int q0 = 0, q1 = 0;
    for (int slot = 0; slot < g->count; slot++) {
        const hb_tree_cell_t c = hb_tree_cell(g, t, slot);
        double *dc = d + c.base, *rc = rhs + c.base; /* the cell's rows */
        const int n_hh = g->lane_hh[slot];
        if (membrane) {
            for (int q = t->input_first[slot + 1] - 1; q >= t->input_first[slot]; q--)
                hb_tree_pas(g, t, c, t->input_row[q], dc, rc);
            for (int i = c.m - 1; g->cat && i >= 0; i--) hb_tree_cat_ions(g, c, i);
            for (int j = n_hh - 1; j >= 0; j--) hb_tree_hh(g, slot, c, j, dc, rc);
            hb_tree_inputs(g, p, slot, c, dc, rc);
        }
        if (g->cat) hb_cat_item_range(g->cat, from, to, HB_CAT_CURRENT, &q0, &q1);
        for (int q = q0; g->cat && q < q1; q++) { /* a density mechanism's: any order */
            const int n = hb_tree_cat_count(g, q, slot);
            for (int j = 0; j < n; j++)
                hb_tree_cat_kernel(g, p, q, slot, hb_tree_cat_serial(g, q) ? j : n - 1 - j,
                                   HB_CAT_CURRENT, dc, rc);
        }
        if (solve) {
            for (int i = c.m - 1; i >= 0; i--) hb_tree_axial(g, t, c, i, dc, rc);
            const int *bound = t->round_bound + t->round_first[slot], first = t->chain_first[slot];
            const int rounds = t->round_first[slot + 1] - t->round_first[slot] - 1;
            for (int r = 0; r < rounds; r++)
                for (int k = bound[r + 1] - 1; k >= bound[r]; k--)
                    hb_tree_eliminate(g, t, c, first + k, dc, rc);
            const int keep_dv = g->cat && g->cat->second_order; /* tree_step_kernel's */
            for (int r = rounds - 1; r >= 0; r--)
                for (int k = bound[r + 1] - 1; k >= bound[r]; k--)
                    hb_tree_substitute(g, t, p, c, first + k, dc, rc, keep_dv);
            for (int i = c.m - 1; keep_dv && i >= 0; i--) hb_tree_cat_second_order(g, c, i, rc);
            for (int j = n_hh - 1; j >= 0; j--) hb_tree_gates(g, p, slot, c, j);
            if (g->syn_start)
                for (int q = g->syn_start[slot + 1] - 1; q >= g->syn_start[slot]; q--)
                    hb_tree_synapse(g, q);
        }
        if (g->cat) hb_cat_item_range(g->cat, from, to, HB_CAT_STATE, &q0, &q1);
        for (int q = q0; g->cat && q < q1; q++)
            for (int j = hb_tree_cat_count(g, q, slot) - 1; j >= 0; j--)
                hb_tree_cat_kernel(g, p, q, slot, j, HB_CAT_STATE, NULL, NULL);
    }
}

static void tree_step(const hb_step_group_t *g, const hb_sim_tree_t *t,
                      const hb_step_params_t *p, double *d, double *rhs)
{
    tree_step_items(g, t, p, d, rhs, 0, g->cat ? hb_cat_items(g->cat) : 0);
}

/* The CUDA engine's split step (src/cuda/sim_cuda.cu's launch_step, docs/mechanisms.md section
 * 6) on the host: the fused step's items between the users' mechanisms (`lanes` 1: the step of
 * a group of one shape, a lane at a time, hb_cat_lane_items; 0: the tree step's), each user item
 * through its slots' views (hb_cat_lane_view) and the generated wrapper's calls with the CPU
 * kernel (hb_cat_lane_run_cpu), slots in reverse order. g->d and g->rhs the step's arrays.
 * Returns the user items run. */
static int split_step(const hb_step_group_t *g, const hb_sim_tree_t *t,
                      const hb_step_params_t *p, int lanes)
{
    const hb_step_cat_t *cat = g->cat;
    const int items = hb_cat_items(cat), W = g->width, slots = g->blocks * g->width;
    int users = 0;
    for (int item = 0; item < items;) {
        const int end = hb_cat_fused_end(cat, item);
        if (end > item && lanes)
            for (int b = 0; b < g->blocks; b++)
                for (int lane = W - 1; lane >= 0; lane--)
                    hb_cat_lane_items(g, p, b, lane, W, g->shared, item, end);
        else if (end > item)
            tree_step_items(g, t, p, g->d, g->rhs, item, end);
        if (end >= items) break;
        int kernel;
        const int q = hb_cat_item_mech(cat, end, &kernel);
        const double at = kernel == HB_CAT_CURRENT ? p->t_mid : p->t_mid + 0.5 * p->dt;
        for (int slot = slots - 1; slot >= 0; slot--) {
            hb_cat_lane_t lv;
            hb_cat_lane_view(g, q, slot, &lv);
            hb_cat_lane_run_cpu(&lv, cat->mech[q].mech, kernel, at, p->dt);
        }
        users++;
        item = end + 1;
    }
    return users;
}

/* The plan's rounds (sim_tree.h): each slot's rows in exactly one chain (each row but the end
 * with one child, the next row), every round of 1 to HB_TREE_ROUND chains, a chain's child
 * chains in earlier rounds. *widest: chains in the widest round; *most: rounds of a cell. */
static void check_rounds(const hb_step_group_t *k, const hb_sim_tree_plan_t *plan, int *widest,
                         int *most)
{
    const size_t w = (size_t)k->width;
    *widest = *most = 0;
    for (int s = 0; s < k->count; s++) {
        const hb_tree_cell_t c = hb_tree_cell(k, &plan->k, s);
        const int *bound = plan->round_bound + plan->round_first[s], first = plan->chain_first[s];
        const int rounds = plan->round_first[s + 1] - plan->round_first[s] - 1;
        int *round = check_malloc(3 * ((size_t)c.m + 1) * sizeof *round);
        int *chain = round + c.m + 1, *kids = chain + c.m + 1;
        for (int i = 0; i < c.m; i++) round[i] = chain[i] = -1, kids[i] = 0;
        for (int i = 1; i < c.m; i++) kids[k->parent[c.base + (size_t)i * w]]++;
        int ok = rounds >= 1 && bound[0] == 0 && first + bound[rounds] == plan->chain_first[s + 1];
        for (int r = 0; r < rounds && ok; r++) {
            const int n = bound[r + 1] - bound[r];
            ok = n >= 1 && n <= plan->k.tile;
            *widest = n > *widest ? n : *widest;
            for (int q = first + bound[r]; q < first + bound[r + 1] && ok; q++)
                for (int i = plan->chain_top[q]; i <= plan->chain_end[q] && ok; i++) {
                    ok = i >= 0 && i < c.m && round[i] < 0 &&
                         (i == plan->chain_end[q] ||
                          (kids[i] == 1 && k->parent[c.base + (size_t)(i + 1) * w] == i));
                    if (ok) round[i] = r, chain[i] = q;
                }
        }
        for (int i = 1; i < c.m && ok; i++) { /* a row's parent: in its chain, or a later round */
            const int pr = k->parent[c.base + (size_t)i * w];
            ok = round[i] >= 0 && (pr == i - 1 && kids[pr] == 1 ? chain[pr] == chain[i]
                                                                 : round[pr] > round[i]);
        }
        CHECKF(ok && (c.m < 1 || round[0] >= 0),
               "slot %d: the plan's rounds are not a schedule of its chains", s);
        *most = rounds > *most ? rounds : *most;
        /* the input rows' list: exactly the rows shaped HB_TREE_INPUT, ascending */
        int q = plan->input_first[s], listed = 1;
        for (int i = 0; i < c.m && listed; i++)
            if (plan->shape[c.base + (size_t)i * w] & HB_TREE_INPUT)
                listed = q < plan->input_first[s + 1] && plan->input_row[q++] == i;
        CHECKF(listed && q == plan->input_first[s + 1],
               "slot %d: the plan's input rows are not its rows with an input", s);
        free(round);
    }
}

/* The tree step on the host with the plan of `tile` lanes a cell (the rounds differ, the
 * bits must not). */
static void test_tree_path(int tile)
{
    cells_t c;
    make_cells(&c);
    const long steps = 300;
    hb_sim_options_t opt = sim_options(0.025, (double)steps * 0.025, 0.025 * 100);
    hb_sim_t *sim = mixed_sim(&c, &opt);
    if (!sim) {
        free_cells(&c);
        return;
    }
    group_t *gr = &sim->groups[sim->n_groups - 1];
    const hb_step_group_t *k = &gr->k;
    CHECK(gr->n_syn_state > 0);
    for (size_t q = 0; q < gr->n_syn_state; q++) gr->syn_state[q] = 0.002 * (double)(q % 7 + 1);
    const size_t size = k->block_start[k->blocks], hh = k->hh_start[k->blocks] * 3 * (size_t)k->width;
    hb_sim_tree_plan_t plan;
    CHECK_OK(hb_sim_tree_plan(k, tile, &plan));
    int wide = 0, longer = 0, most = 0; /* a round of several chains, a chain of several rows */
    check_rounds(k, &plan, &wide, &most);
    for (size_t q = 0; q < plan.chains; q++) longer |= plan.chain_end[q] > plan.chain_top[q];
    CHECKF(most > 2 && wide > 1 && longer, "rounds: at most %d a cell, %d chains in the widest",
           most, wide);
    /* two copies: constants by the group's row table (if it has one) and from the arrays (the
     * GPU's; the CPU keeps a tabled group's only in the table: unpacked here) */
    hb_step_group_t g[2] = {*k, *k};
    double *v[2], *hs[2], *ss[2];
    double *d = check_malloc(size * sizeof *d), *rhs = check_malloc(size * sizeof *rhs);
    double *tab[4] = {NULL, NULL, NULL, NULL};
    unpack_table(k, size, tab, &g[1]);
    g[1].row_index = NULL;
    g[1].row_table = NULL;
    for (int x = 0; x < 2; x++) {
        v[x] = check_malloc(size * sizeof *v[x]);
        hs[x] = check_malloc((hh + 1) * sizeof *hs[x]);
        ss[x] = check_malloc((gr->n_syn_state + 1) * sizeof *ss[x]);
        memcpy(v[x], k->v, size * sizeof *v[x]);
        memcpy(hs[x], k->hh_state, hh * sizeof *hs[x]);
        memcpy(ss[x], k->syn_state, gr->n_syn_state * sizeof *ss[x]);
        g[x].v = v[x];
        g[x].hh_state = hs[x];
        g[x].syn_state = ss[x];
    }
    CHECK(k->row_index != NULL); /* the table path is the one exercised first */
    CHECK_OK(hb_sim_advance(sim, steps));
    hb_step_params_t p = {opt.dt_ms, 1.0, 0.0, sim->table.use_table ? sim->table.table : NULL,
                          sim->table.q10};
    for (long n = 0; n < steps; n++) {
        p.t_mid = ((double)n + 0.5) * opt.dt_ms;
        for (int x = 0; x < 2; x++) tree_step(&g[x], &plan.k, &p, d, rhs);
    }
    for (int x = 0; x < 2; x++) {
        CHECKF(memcmp(v[x], k->v, size * sizeof *v[x]) == 0 &&
                   memcmp(hs[x], k->hh_state, hh * sizeof *hs[x]) == 0 &&
                   memcmp(ss[x], k->syn_state, gr->n_syn_state * sizeof *ss[x]) == 0,
               "the tree step of a mixed group (constants from %s) differs from the CPU "
               "engine's after %ld steps", x ? "the arrays" : "the row table", steps);
        free(v[x]);
        free(hs[x]);
        free(ss[x]);
    }
    int spiking = 0;
    for (int q = 0; q < sim->n_probes; q++) spiking += sim->spikes[q].count;
    CHECKF(spiking > 0, "no spike in %ld steps: nothing happened to compare", steps);
    hb_sim_tree_free(&plan);
    for (int q = 0; q < 4; q++) free(tab[q]);
    free(d);
    free(rhs);
    hb_sim_destroy(sim);
    free_cells(&c);
}

/* Real morphologies (data), each its own shape: a mixed group with more distinct
 * (u, l, g_pas, e_pas) quadruples than the CPU's row table holds, so the step reads the arrays
 * themselves (row_index NULL); the bits are each cell's alone all the same. */
static void test_real_cells(void)
{
    static const char *const files[] = {"c91662.swc", "l22.CNG.swc", "1220882a.CNG.swc",
                                        "pyramidal.swc", "C040600B3.CNG.swc",
                                        "single_cell_allen.swc", "041018-zA.CNG.swc",
                                        "HSN-fluoro01.CNG.swc", "v_e_moto1.CNG.swc"};
    enum { N = sizeof files / sizeof *files, BIG = 1 << 18 };
    hb_morph_t *morph[N] = {NULL};
    hb_model_t *model[N] = {NULL};
    hb_sim_t *all = NULL, *alone[N] = {NULL};
    double *a = check_malloc(BIG * sizeof *a), *b = check_malloc(BIG * sizeof *b);
    int ok = 1;
    for (int f = 0; f < N && ok; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/morphologies/%s", HB_DATA_DIR, files[f]);
        CHECK_OK(hb_morph_load_swc(path, NULL, &morph[f]));
        model[f] = morph[f] ? sim_cells_make(morph[f], SIM_CELL_HH_SOMA, f % 3) : NULL;
        ok = model[f] != NULL;
    }
    const hb_sim_options_t opt = sim_options(0.025, 400 * 0.025, 0.025 * 100);
    if (ok) CHECK_OK(hb_sim_create(model, N, &opt, &all));
    for (int f = 0; f < N && all; f++) CHECK_OK(hb_sim_create(&model[f], 1, &opt, &alone[f]));
    if (all) {
        const hb_step_group_t *k = &all->groups[all->n_groups - 1].k;
        CHECKF(all->n_groups == 1 && k->mixed && k->count == N && k->row_index == NULL,
               "%d groups; mixed %d, %d cells, row table %s", all->n_groups, k->mixed,
               k->count, k->row_index ? "used" : "not used");
        for (int tile = 32; tile >= 8; tile /= 2) { /* the GPU's rounds: some full */
            hb_sim_tree_plan_t plan;
            CHECK_OK(hb_sim_tree_plan(k, tile, &plan));
            int widest = 0, most = 0;
            check_rounds(k, &plan, &widest, &most);
            CHECKF(widest == tile, "real cells, tiles of %d: the widest round has %d chains",
                   tile, widest);
            hb_sim_tree_free(&plan);
        }
        hb_sim_tree_plan_t bad;
        CHECK(hb_sim_tree_plan(k, 12, &bad) == HB_ERR_INVALID_VALUE);
        CHECK_OK(hb_sim_run(all));
        for (int f = 0; f < N && alone[f]; f++) {
            CHECK_OK(hb_sim_run(alone[f]));
            const size_t na = cell_state(all, f, a), nb = cell_state(alone[f], 0, b);
            CHECKF(na == nb && na > 0 && na < BIG && memcmp(a, b, na * sizeof *a) == 0,
                   "%s: %zu state values in the mixed group, %zu alone, not bitwise the same",
                   files[f], na, nb);
        }
        printf("real cells: %d morphologies in one mixed group without the row table, 400 "
               "steps: bitwise each cell alone\n", N);
    }
    for (int f = 0; f < N; f++) {
        hb_sim_destroy(alone[f]);
        hb_model_destroy(model[f]);
        hb_morph_destroy(morph[f]);
    }
    hb_sim_destroy(all);
    free(a);
    free(b);
}

/* Copies of one model in the mixed group (the GPU's rule for few copies; the tuning
 * sim.mixed_copies here): hb_sim_tree_share gives each copy its first copy's constants and plan
 * (cbase), a cell of the same shape with other constants its own, and the tree step reading
 * them there is bitwise the CPU engine's. */
static void test_tree_copies(void)
{
    static const char *const files[] = {"l22.CNG.swc", "c91662.swc", "HSN-fluoro01.CNG.swc"};
    /* cells: file and variant; A0 three times, B1 twice, C0, and A2 (A's shape, other pas) */
    static const int file_of[] = {0, 1, 0, 2, 0, 1, 0}, variant_of[] = {0, 1, 0, 0, 0, 1, 2};
    enum { F = 3, N = 7, TEMPLATES = 4 };
    hb_morph_t *morph[F] = {NULL};
    hb_model_t *model[F][3] = {{NULL}}, *cells[N];
    int ok = 1;
    for (int f = 0; f < F && ok; f++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/morphologies/%s", HB_DATA_DIR, files[f]);
        CHECK_OK(hb_morph_load_swc(path, NULL, &morph[f]));
        ok = morph[f] != NULL;
    }
    for (int q = 0; q < N && ok; q++) {
        hb_model_t **md = &model[file_of[q]][variant_of[q]];
        if (!*md) *md = sim_cells_make(morph[file_of[q]], SIM_CELL_HH_SOMA, variant_of[q]);
        ok = (cells[q] = *md) != NULL;
    }
    const long steps = 400;
    hb_sim_options_t opt = sim_options(0.025, (double)steps * 0.025, 0.025 * 100);
    hb_sim_t *sim = NULL;
    CHECK_OK(hb_set_default_tuning("sim.mixed_copies=8"));
    if (ok) CHECK_OK(hb_sim_create(cells, N, &opt, &sim));
    CHECK_OK(hb_set_default_tuning(NULL));
    if (sim) CHECK_OK(hb_sim_init(sim));
    const hb_step_group_t *k = sim ? &sim->groups[sim->n_groups - 1].k : NULL;
    CHECKF(k && sim->n_groups == 1 && k->mixed && k->count == N,
           "copies forced into the mixed group: %d groups", sim ? sim->n_groups : 0);
    if (k && k->mixed && k->count == N) {
        const size_t size = k->block_start[k->blocks];
        const size_t hh = k->hh_start[k->blocks] * 3 * (size_t)k->width;
        hb_sim_tree_plan_t plan;
        size_t templates = 0;
        CHECK_OK(hb_sim_tree_plan(k, 32, &plan));
        CHECK_OK(hb_sim_tree_share(k, &plan, &templates));
        CHECKF(templates == TEMPLATES, "%zu slots with constants of their own; expected %d",
               templates, TEMPLATES);
        int shared = 0; /* copies reading another slot's rows */
        for (int s = 0; s < k->count; s++)
            shared += plan.cbase[s] != k->block_start[s / k->width] + (size_t)(s % k->width);
        CHECKF(shared == N - TEMPLATES, "%d slots read another's constants; expected %d",
               shared, N - TEMPLATES);
        hb_step_group_t g = *k;
        double *tab[4] = {NULL, NULL, NULL, NULL};
        unpack_table(k, size, tab, &g);
        g.row_index = NULL;
        g.row_table = NULL;
        double *v = check_malloc(size * sizeof *v), *hs = check_malloc((hh + 1) * sizeof *hs);
        double *d = check_malloc(size * sizeof *d), *rhs = check_malloc(size * sizeof *rhs);
        memcpy(v, k->v, size * sizeof *v);
        memcpy(hs, k->hh_state, hh * sizeof *hs);
        g.v = v;
        g.hh_state = hs;
        CHECK_OK(hb_sim_advance(sim, steps));
        hb_step_params_t p = {opt.dt_ms, 1.0, 0.0,
                              sim->table.use_table ? sim->table.table : NULL, sim->table.q10};
        for (long n = 0; n < steps; n++) {
            p.t_mid = ((double)n + 0.5) * opt.dt_ms;
            tree_step(&g, &plan.k, &p, d, rhs);
        }
        CHECKF(memcmp(v, k->v, size * sizeof *v) == 0 &&
                   memcmp(hs, k->hh_state, hh * sizeof *hs) == 0,
               "the tree step with copies sharing constants differs from the CPU engine's "
               "after %ld steps", steps);
        int spiking = 0;
        for (int q = 0; q < sim->n_probes; q++) spiking += sim->spikes[q].count;
        CHECKF(spiking > 0, "copies: no spike in %ld steps: nothing happened to compare", steps);
        printf("copies: %d cells, %zu with constants of their own, the tree step reading the "
               "others' bitwise the CPU engine's over %ld steps\n", N, templates, steps);
        hb_sim_tree_free(&plan);
        for (int q = 0; q < 4; q++) free(tab[q]);
        free(v);
        free(hs);
        free(d);
        free(rhs);
    }
    hb_sim_destroy(sim);
    for (int f = 0; f < F; f++) {
        for (int x = 0; x < 3; x++) hb_model_destroy(model[f][x]);
        hb_morph_destroy(morph[f]);
    }
}

/* A copy of a group's catalogue state (fields; ions' e, ci, co, i, didv) for a second step
 * of the same group; the layout and constants shared. Freed by cat_copy_free. */
static hb_step_cat_t *cat_copy(const hb_step_cat_t *src, const hb_step_group_t *k)
{
    const size_t size = hb_step_block_base(k, k->blocks), W = (size_t)k->width;
    hb_step_cat_t *c = check_malloc(sizeof *c);
    *c = *src;
    c->mech = check_malloc(((size_t)src->n_mech + 1) * sizeof *c->mech);
    c->ion = check_malloc(((size_t)src->n_ion + 1) * sizeof *c->ion);
    for (int q = 0; q < src->n_mech; q++) {
        c->mech[q] = src->mech[q];
        const size_t n = src->mech[q].inst_start[k->blocks] * (size_t)src->mech[q].mech->n_field * W;
        c->mech[q].field = check_malloc((n + 1) * sizeof(double));
        memcpy(c->mech[q].field, src->mech[q].field, n * sizeof(double));
    }
    for (int x = 0; x < src->n_ion; x++) {
        c->ion[x] = src->ion[x];
        double **to[5] = {&c->ion[x].e, &c->ion[x].ci, &c->ion[x].co, &c->ion[x].i, &c->ion[x].didv};
        for (int a = 0; a < 5; a++) {
            double *copy = check_malloc((size + 1) * sizeof *copy);
            memcpy(copy, *to[a], size * sizeof *copy);
            *to[a] = copy;
        }
    }
    return c;
}

static void cat_copy_free(hb_step_cat_t *c)
{
    for (int q = 0; q < c->n_mech; q++) free(c->mech[q].field);
    for (int x = 0; x < c->n_ion; x++) {
        free(c->ion[x].e);
        free(c->ion[x].ci);
        free(c->ion[x].co);
        free(c->ion[x].i);
        free(c->ion[x].didv);
    }
    free(c->mech);
    free(c->ion);
    free(c);
}

/* 1 where n doubles hold the same bits, a NaN matching any NaN: padding lanes (fields 0) compute
 * NaNs whose sign the vector and the scalar code leave differently; a real lane's NaN would
 * differ from its twin's number, and reach v. */
static int same_bits(const double *a, const double *b, size_t n)
{
    for (size_t e = 0; e < n; e++)
        if (memcmp(&a[e], &b[e], sizeof *a) != 0 && !(isnan(a[e]) && isnan(b[e]))) return 0;
    return 1;
}

/* 1 where a and b (copies of one group's catalogue state) hold the same values (same_bits). */
static int cat_same(const hb_step_cat_t *a, const hb_step_cat_t *b, const hb_step_group_t *k)
{
    const size_t size = hb_step_block_base(k, k->blocks), W = (size_t)k->width;
    int same = a->n_mech == b->n_mech && a->n_ion == b->n_ion;
    for (int q = 0; same && q < a->n_mech; q++)
        same = same_bits(a->mech[q].field, b->mech[q].field,
                         a->mech[q].inst_start[k->blocks] * (size_t)a->mech[q].mech->n_field * W);
    /* i and di/dv where observed: the CPU engine leaves the others out (nothing reads them) */
    for (int x = 0; same && x < a->n_ion; x++)
        same = same_bits(a->ion[x].e, b->ion[x].e, size) &&
               same_bits(a->ion[x].ci, b->ion[x].ci, size) &&
               a->ion[x].observed == b->ion[x].observed &&
               (!b->ion[x].observed || (same_bits(a->ion[x].i, b->ion[x].i, size) &&
                                        same_bits(a->ion[x].didv, b->ion[x].didv, size)));
    return same;
}

static const char *method_name(hb_method_t method)
{
    return method == HB_METHOD_CN ? "Crank-Nicolson" : "backward Euler";
}

/* Built-in catalogue mechanism `name` ("bbp::Ca_HVA") in region with first parameter g. */
static void insert_cat(hb_model_t *md, int region, const char *name, double g)
{
    const hb_cat_mech_t *mech = NULL;
    CHECK_OK(hb_catalogue_find(NULL, 0, name, &mech));
    if (!mech) return;
    const char *key = mech->param[0].name;
    CHECK_OK(hb_model_insert_cat(md, region, mech, 1, &key, &g, "test"));
}

/* test_sim_cat's cell on `swc` (set 0: bbp's NaTs2_t and pas g x na_scale, K_Pst, SKv3_1, Ca_HVA, SK_E2,
 * Ih and CaDynamics_E2 writing cai, which SK_E2 reads, eca by Nernst every step; set 1: allen's
 * NaV, Kv3_1, SK, CaDynamics and Ca_HVA), an IClamp and a probe at the soma; 0 on failure. */
static int make_cat_cell(const char *swc, int set, double na_scale, hb_morph_t **morph,
                         hb_model_t **md)
{
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    disc.scheme = HB_SCHEME_NEURON;
    disc.policy = HB_CPOLICY_PER_SEGMENT;
    *morph = NULL;
    *md = NULL;
    CHECK_OK(hb_morph_load_swc(swc, NULL, morph));
    if (*morph) CHECK_OK(hb_model_create(*morph, &disc, md));
    if (!*md) return 0;
    hb_mech_t pas;
    hb_mech_default(HB_MECH_PAS, &pas);
    pas.g_pas = 1e-4 * na_scale; /* other constants per lane: a group not shared */
    pas.e_pas = -65.0;
    CHECK_OK(hb_model_insert(*md, HB_REGION_ALL, &pas));
    if (set == 0) {
        insert_cat(*md, 1, "NaTs2_t", 0.9 * na_scale);
        insert_cat(*md, 1, "K_Pst", 0.1);
        insert_cat(*md, 1, "SKv3_1", 0.5);
        insert_cat(*md, 1, "bbp::Ca_HVA", 0.001);
        insert_cat(*md, 1, "SK_E2", 0.05);
        insert_cat(*md, 1, "bbp::Ih", 8e-5);
        insert_cat(*md, 3, "bbp::Ih", 2e-4);
        insert_cat(*md, 3, "bbp::Ca_HVA", 5e-4);
        insert_cat(*md, 1, "CaDynamics_E2", 0.5);
    } else {
        insert_cat(*md, 1, "NaV", 0.05 * na_scale); /* and pas g */
        insert_cat(*md, 1, "Kv3_1", 0.5);
        insert_cat(*md, 1, "allen::SK", 0.01);
        insert_cat(*md, 1, "allen::CaDynamics", 0.01);
        insert_cat(*md, 1, "allen::Ca_HVA", 0.001);
    }
    CHECK_OK(hb_model_set_ion(*md, 1, "k", HB_ION_E, -85.0));
    const hb_location_t soma_at = {HB_LOC_SOMA, 0, 0, 0.0, 0};
    CHECK_OK(hb_model_add_iclamp(*md, &soma_at, 2.0, 1e9, 0.3));
    add_probe(*md, soma_at, "soma", 1, 0.0);
    return 1;
}

/* Cells of make_cat_cell's somata whose cai moved from its rest (CaDynamics at work). */
static int cai_moved(const group_t *gr)
{
    const hb_step_group_t *k = &gr->k;
    int moved = 0;
    for (int x = 0; x < gr->cat->n_ion; x++)
        for (int slot = 0; slot < k->count && !strcmp(gr->cat->ion[x].name, "ca"); slot++) {
            int any = 0;
            for (int r = 0; r < hb_step_slot_rows(k, slot); r++)
                any |= fabs(gr->cat->ion[x].ci[hb_step_element(k, slot, r)] - 5e-5) > 1e-6;
            moved += any;
        }
    return moved;
}

/* The tree step of a mixed group with catalogue mechanisms (common/cat_fused.h: the GPU's
 * tree_step_kernel<1>, through the dispatch headers by index), on the host with each phase's
 * rows, instances and rounds in reverse order, against the CPU engine (function pointers,
 * rows in order): test_sim_cat's cell (bbp's NaTs2_t, K_Pst, SKv3_1, Ca_HVA, SK_E2, Ih and
 * CaDynamics_E2 writing cai, which SK_E2 reads; eca by Nernst every step), the same on the
 * ball and stick, and the cell with allen's NaV, Kv3_1 and SK (another shape: its own nodes),
 * in one mixed group: v, every mechanism's fields and the ions bitwise. split: the CUDA engine's
 * split step instead (split_step), every other mechanism (from the first) taken as a user
 * catalogue's, stepped through its slots' views. */
static void test_tree_cat(int tile, hb_method_t method, int split)
{
    enum { CELLS = 3, TREE_STEPS = 600 };
    char small[1024], bas[1024];
    snprintf(small, sizeof small, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
    snprintf(bas, sizeof bas, "%s/morphologies/ball_and_stick.swc", HB_DATA_DIR);
    const char *swc[CELLS] = {small, bas, small};
    hb_morph_t *morph[CELLS] = {NULL, NULL, NULL};
    hb_model_t *md[CELLS] = {NULL, NULL, NULL};
    int ok = 1;
    for (int i = 0; i < CELLS && ok; i++) ok = make_cat_cell(swc[i], i < 2 ? 0 : 1, 1.0, &morph[i], &md[i]);
    hb_sim_options_t opt = sim_options(0.025, TREE_STEPS * 0.025, 0.25);
    opt.celsius = 34.0;
    opt.method = method;
    hb_sim_t *sim = NULL;
    if (ok) CHECK_OK(hb_sim_create(md, CELLS, &opt, &sim));
    const group_t *gr = sim ? &sim->groups[sim->n_groups - 1] : NULL;
    if (!gr || !gr->k.mixed || !gr->cat || gr->k.count != CELLS) {
        CHECKF(0, "catalogue cells: expected one mixed group of %d with catalogue mechanisms",
               CELLS);
        ok = 0;
    }
    if (ok) {
        CHECK_OK(hb_sim_init(sim));
        const hb_step_group_t *k = &gr->k;
        const size_t size = k->block_start[k->blocks];
        const size_t hh = k->hh_start[k->blocks] * 3 * (size_t)k->width;
        hb_sim_tree_plan_t plan;
        CHECK_OK(hb_sim_tree_plan(k, tile, &plan));
        int inputs = 0; /* every catalogue instance's row an input row (pas before its terms) */
        for (int q = 0; q < gr->cat->n_mech; q++)
            for (int slot = 0; slot < k->count; slot++) {
                const hb_step_cat_mech_t *cm = &gr->cat->mech[q];
                const size_t w = (size_t)k->width, i0 = cm->inst_start[slot / k->width];
                CHECK(cm->builtin >= 0); /* the dispatch reaches it */
                for (int j = 0; j < cm->lane_inst[slot]; j++)
                    inputs += !(plan.shape[hb_step_element(k, slot, cm->node[(i0 + (size_t)j) * w +
                                                                          (size_t)slot % w])] &
                                HB_TREE_INPUT);
            }
        CHECKF(inputs == 0, "%d catalogue instances' rows are not input rows of the plan", inputs);
        hb_step_group_t g = *k;
        double *v = check_malloc(size * sizeof *v), *hs = check_malloc((hh + 1) * sizeof *hs);
        double *d = check_malloc(size * sizeof *d), *rhs = check_malloc(size * sizeof *rhs);
        memcpy(v, k->v, size * sizeof *v);
        memcpy(hs, k->hh_state, hh * sizeof *hs);
        hb_step_cat_t *twin = cat_copy(gr->cat, k);
        for (int q = 0; split && q < twin->n_mech; q += 2) twin->mech[q].builtin = -1;
        g.v = v;
        g.hh_state = hs;
        g.cat = twin;
        g.d = d;
        g.rhs = rhs;
        CHECK_OK(hb_sim_advance(sim, TREE_STEPS));
        hb_step_params_t p = {opt.dt_ms, method == HB_METHOD_CN ? 2.0 : 1.0, 0.0,
                              sim->table.use_table ? sim->table.table : NULL, sim->table.q10};
        int users = 0;
        for (long n = 0; n < TREE_STEPS; n++) {
            p.t_mid = ((double)n + 0.5) * opt.dt_ms;
            if (split)
                users = split_step(&g, &plan.k, &p, 0);
            else
                tree_step(&g, &plan.k, &p, d, rhs);
        }
        CHECK(gr->cat->second_order == (method == HB_METHOD_CN));
        CHECKF(!split || users == 2 * ((twin->n_mech + 1) / 2),
               "split: %d user items a step; expected %d", users, 2 * ((twin->n_mech + 1) / 2));
        CHECKF(!memcmp(v, k->v, size * sizeof *v) && cat_same(twin, gr->cat, k),
               "tile %d, %s%s: the tree step of a mixed group with catalogue mechanisms differs "
               "from the CPU engine's after %d steps (v %s)", tile, method_name(method),
               split ? ", split" : "", TREE_STEPS,
               memcmp(v, k->v, size * sizeof *v) ? "differs" : "the same");
        int spiking = 0;
        for (int q = 0; q < sim->n_probes; q++) spiking += sim->spikes[q].count;
        const int moved = cai_moved(gr);
        CHECKF(spiking >= CELLS && moved == CELLS, "catalogue cells: %d spikes, cai moved in "
               "%d of %d somata: too little to compare", spiking, moved, CELLS);
        cat_copy_free(twin);
        free(v);
        free(hs);
        free(d);
        free(rhs);
        hb_sim_tree_free(&plan);
    }
    hb_sim_destroy(sim);
    for (int i = 0; i < CELLS; i++) {
        hb_model_destroy(md[i]);
        hb_morph_destroy(morph[i]);
    }
}

/* The GPU's step_cat_kernel (a group of one shape with catalogue mechanisms, a thread a lane)
 * on the host: for each lane hb_step_lanes' passes with lanes 1 around hb_cat_fused_current and
 * hb_cat_fused_state (the kernels by index), lanes in reverse order, the group's CPU-only fixed
 * rows left out as on the device; against the CPU engine's blocks (function pointers, vector
 * lanes, fixed rows). Copies of one cell (a shared group) and cells of different NaTs2_t (per
 * lane fields) with padding lanes, bbp's and allen's mechanisms: v, fields and ions bitwise.
 * split: the CUDA engine's split step (split_step), every other mechanism a user's. */
static void test_lanes_cat(int set, int varied, hb_method_t method, int split)
{
    enum { CELLS = 5, LANE_STEPS = 600 };
    char small[1024];
    snprintf(small, sizeof small, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
    hb_morph_t *morph[CELLS] = {NULL};
    hb_model_t *md[CELLS] = {NULL};
    int ok = 1;
    for (int i = 0; i < CELLS && ok; i++)
        ok = make_cat_cell(small, set, varied ? 1.0 + 0.1 * i : 1.0, &morph[i], &md[i]);
    hb_sim_options_t opt = sim_options(0.025, LANE_STEPS * 0.025, 0.25);
    opt.celsius = 34.0;
    opt.method = method;
    hb_sim_t *sim = NULL;
    if (ok) CHECK_OK(hb_sim_create(md, CELLS, &opt, &sim));
    const group_t *gr = sim && sim->n_groups == 1 ? &sim->groups[0] : NULL;
    if (!gr || gr->k.mixed || !gr->cat || gr->k.shared == varied ||
        gr->k.blocks * gr->k.width == CELLS) {
        CHECKF(0, "set %d: expected one %s group of %d cells with padding lanes", set,
               varied ? "per-lane" : "shared", CELLS);
        ok = 0;
    }
    if (ok) {
        CHECK_OK(hb_sim_init(sim));
        const hb_step_group_t *k = &gr->k;
        const size_t size = hb_step_block_base(k, k->blocks);
        const size_t hh = (size_t)k->blocks * (size_t)k->n_hh * 3 * (size_t)k->width;
        hb_step_group_t g = *k;
        double *v = check_malloc(size * sizeof *v), *hs = check_malloc((hh + 1) * sizeof *hs);
        double *d = check_malloc(size * sizeof *d), *rhs = check_malloc(size * sizeof *rhs);
        memcpy(v, k->v, size * sizeof *v);
        memcpy(hs, k->hh_state, hh * sizeof *hs);
        hb_step_cat_t *twin = cat_copy(gr->cat, k);
        for (int q = 0; split && q < twin->n_mech; q += 2) twin->mech[q].builtin = -1;
        g.v = v;
        g.hh_state = hs;
        g.cat = twin;
        g.d = d;
        g.rhs = rhs;
        g.fixed_row = NULL; /* the device's: every row factored each step */
        g.fixed_r = g.fixed_c = g.fixed_f = NULL;
        CHECK_OK(hb_sim_advance(sim, LANE_STEPS));
        hb_step_params_t p = {opt.dt_ms, method == HB_METHOD_CN ? 2.0 : 1.0, 0.0,
                              sim->table.use_table ? sim->table.table : NULL, sim->table.q10};
        const int W = k->width;
        int users = 0;
        for (long n = 0; n < LANE_STEPS; n++) {
            p.t_mid = ((double)n + 0.5) * opt.dt_ms;
            if (split) {
                users = split_step(&g, NULL, &p, 1);
                continue;
            }
            for (int b = 0; b < k->blocks; b++)
                for (int lane = W - 1; lane >= 0; lane--) {
                    const size_t base = hb_step_block_base(&g, b) + (size_t)lane;
                    double *dl = d + base, *rl = rhs + base;
                    hb_step_lanes_membrane(&g, &p, b, lane, 1, W, g.shared, dl, rl);
                    hb_cat_fused_current(&g, &p, b, lane, 1, dl, rl);
                    hb_step_lanes_axial(&g, b, lane, 1, W, g.shared, dl, rl);
                    hb_step_lanes_solve(&g, b, lane, 1, W, g.shared, dl, rl);
                    if (g.cat->second_order) hb_cat_second_order(&g, b, lane, 1, rl);
                    hb_step_lanes_update(&g, &p, b, lane, 1, W, rl);
                    hb_cat_fused_state(&g, &p, b, lane, 1);
                }
        }
        CHECK(gr->cat->second_order == (method == HB_METHOD_CN));
        CHECKF(!split || users == 2 * ((twin->n_mech + 1) / 2),
               "split: %d user items a step; expected %d", users, 2 * ((twin->n_mech + 1) / 2));
        CHECKF(!memcmp(v, k->v, size * sizeof *v) && cat_same(twin, gr->cat, k),
               "set %d, %s group, %s%s: the device's lane step with catalogue mechanisms differs "
               "from the CPU engine's after %d steps (v %s)", set, varied ? "per-lane" : "shared",
               method_name(method), split ? ", split" : "", LANE_STEPS,
               memcmp(v, k->v, size * sizeof *v) ? "differs" : "the same");
        int spiking = 0;
        for (int q = 0; q < sim->n_probes; q++) spiking += sim->spikes[q].count;
        const int moved = cai_moved(gr);
        CHECKF(spiking >= CELLS && moved >= CELLS, "set %d: %d spikes, cai moved in %d lanes: too "
               "little to compare", set, spiking, moved);
        cat_copy_free(twin);
        free(v);
        free(hs);
        free(d);
        free(rhs);
    }
    hb_sim_destroy(sim);
    for (int i = 0; i < CELLS; i++) {
        hb_model_destroy(md[i]);
        hb_morph_destroy(morph[i]);
    }
}

/* make_cat_cell's cell (its mechanisms `set`) with catalogue point processes: at the soma bbp's ProbAMPANMDA_EMS
 * (stochastic: Use 0.9, Fac 10, Dep 5 ms; RANDOM) and two generated ExpSyn on one row, on the
 * dendrite an Exp2Syn; synapses 0 .. 3 in that order. */
static int make_point_cell(const char *swc, int set, double scale, hb_morph_t **morph,
                           hb_model_t **md)
{
    if (!make_cat_cell(swc, set, scale, morph, md)) return 0;
    const hb_location_t soma = {HB_LOC_SOMA, 0, 0, 0.0, 0}, dend = {HB_LOC_SECTION, 0, 1, 0.5, 0};
    const char *prob_keys[] = {"Use", "Fac", "Dep", "tau_d_AMPA"};
    const double prob_values[] = {0.9, 10.0, 5.0, 1.7 * scale};
    const char *exp_keys[] = {"tau", "e"};
    const double exp_values[] = {2.0 * scale, 0.0}, exp2_values[] = {0.5, 3.0, 0.0};
    const char *exp2_keys[] = {"tau1", "tau2", "e"};
    CHECK_OK(hb_model_add_point_process(*md, &soma, "ProbAMPANMDA_EMS", 4, prob_keys,
                                        prob_values, NULL));
    CHECK_OK(hb_model_add_point_process(*md, &soma, "ExpSyn", 2, exp_keys, exp_values, NULL));
    CHECK_OK(hb_model_add_point_process(*md, &soma, "default::ExpSyn", 0, NULL, NULL, NULL));
    CHECK_OK(hb_model_add_point_process(*md, &dend, "Exp2Syn", 3, exp2_keys, exp2_values, NULL));
    return hb_model_synapse_count(*md) == 4;
}

/* Every slot's view (hb_cat_lane_t) of each user point process of g, as the CUDA engine keeps
 * them on the device (upload_lanes): lane[q][slot]. */
typedef struct {
    hb_cat_lane_t **lane;
    int n_mech;
} user_views_t;

static void user_views(const hb_step_group_t *g, user_views_t *out)
{
    const int slots = g->blocks * g->width;
    out->n_mech = g->cat->n_mech;
    out->lane = check_malloc((size_t)out->n_mech * sizeof *out->lane);
    for (int q = 0; q < out->n_mech; q++) {
        out->lane[q] = check_malloc((size_t)slots * sizeof **out->lane);
        for (int slot = 0; slot < slots; slot++) hb_cat_lane_view(g, q, slot, &out->lane[q][slot]);
    }
}

static void user_views_free(user_views_t *v)
{
    for (int q = 0; v->lane && q < v->n_mech; q++) free(v->lane[q]);
    free(v->lane);
}

/* sim_events.cu's hand-over of one step's events (n, in the queue's order) at user catalogues'
 * point processes (the built-ins' ones skipped: deliver_kernel receives them): its runs (hb_cat_run_t at each target's first
 * event, the events as hb_cat_event_t in delivery order, w the device's weight vectors), then
 * each user point process's NET_RECEIVE launcher with its key, positions in reverse order (the
 * threads' order is free: each run its own target). Returns the events handed over. */
static long user_deliver(const hb_sim_t *sim, const hb_step_group_t *g, const user_views_t *views,
                         const hb_sim_event_t *ev, size_t n, double *w, double dt)
{
    if (!n) return 0;
    hb_cat_run_t *run = check_malloc(n * sizeof *run);
    hb_cat_event_t *uev = check_malloc(n * sizeof *uev);
    long handed = 0;
    for (size_t e = 0; e < n; e++) {
        const hb_sim_target_t *t = &sim->targets[sim->target_first[ev[e].cell] + ev[e].synapse];
        const int head = e == 0 || ev[e - 1].cell != ev[e].cell ||
                         ev[e - 1].synapse != ev[e].synapse;
        run[e].n = 0;
        if (head) {
            size_t end = e + 1;
            while (end < n && ev[end].cell == ev[e].cell && ev[end].synapse == ev[e].synapse)
                end++;
            const hb_step_cat_mech_t *cm = &g->cat->mech[t->point - 1];
            CHECK(t->point > 0);
            if (cm->builtin >= 0) continue; /* a built-in's: deliver_kernel's own receive */
            run[e] = (hb_cat_run_t){&views->lane[t->point - 1][t->slot], t->inst, cm->user_key,
                                    (int)(end - e)};
        }
        uev[e] = (hb_cat_event_t){ev[e].time, ev[e].weight,
                                  ev[e].weights >= 0 ? w + (size_t)ev[e].weights *
                                                               HB_CAT_MAX_WEIGHT
                                                     : NULL};
    }
    for (int q = 0; q < g->cat->n_mech; q++) {
        const hb_step_cat_mech_t *cm = &g->cat->mech[q];
        if (cm->builtin >= 0 || cm->mech->kind != HB_CAT_POINT) continue;
        for (size_t e = n; e-- > 0;)
            if (run[e].n > 0 && run[e].key == cm->user_key) {
                hb_cat_run_cpu(run, uev, (int)e, cm->user_key, cm->mech, dt);
                handed += run[e].n;
            }
    }
    free(run);
    free(uev);
    return handed;
}

/* The GPU's event delivery to catalogue point processes (sim_events.cu's receive: NET_RECEIVE
 * and its INITIAL by index, hb_cat_fused_point_event, on a copy of the weight vectors) and its
 * steps (step_cat_kernel's lanes, or tree_step_kernel<1>: a point process's currents one
 * instance after another), on the host against the CPU engine: make_point_cell's cells with
 * per-lane parameters (mixed 0: a group of one shape with padding lanes; 1: with another
 * shape in a mixed group), two connections with weight vectors on the ProbAMPANMDA_EMS whose
 * events come alike (the connections' order decides), events without a vector (an own one,
 * initialised) on the second ExpSyn; v, every field and ion, and the vectors bitwise. With
 * user 1 every point process is taken as a user catalogue's (docs/mechanisms.md section 10):
 * the split step (split_step: their currents and states through the lane views and the
 * generated wrappers' calls) and their events as the device hands them over (user_deliver:
 * hb_cat_run_t and hb_cat_event_t, then the NET_RECEIVE wrapper's calls, hb_cat_run_cpu).
 * With user 2 every other point process (Exp2Syn, ProbAMPANMDA_EMS) a user's, ExpSyn a
 * built-in sharing the soma's row with ProbAMPANMDA_EMS (the STDP network's ExpSyn and
 * STDPSyn): the built-ins' events received first, then the users' handed over. */
static void test_points(int mixed, int user)
{
    enum { CELLS = 5, PT_STEPS = 800, EVERY = 37 };
    char small[1024], bas[1024];
    snprintf(small, sizeof small, "%s/reference/neuron-matrix/small.swc", HB_DATA_DIR);
    snprintf(bas, sizeof bas, "%s/morphologies/ball_and_stick.swc", HB_DATA_DIR);
    hb_morph_t *morph[CELLS] = {NULL};
    hb_model_t *md[CELLS] = {NULL};
    const int cells = mixed ? 3 : CELLS;
    int ok = 1;
    for (int i = 0; i < cells && ok; i++)
        ok = make_point_cell(mixed && i == 1 ? bas : small, mixed && i == 2, 1.0 + 0.1 * i,
                             &morph[i], &md[i]);
    hb_sim_options_t opt = sim_options(0.025, PT_STEPS * 0.025, 0.25);
    opt.celsius = 34.0;
    hb_sim_t *sim = NULL;
    if (ok) CHECK_OK(hb_sim_create(md, cells, &opt, &sim));
    const group_t *gr = sim ? &sim->groups[sim->n_groups - 1] : NULL;
    if (!gr || !gr->cat || gr->k.mixed != mixed || gr->k.count != cells ||
        (!mixed && gr->k.blocks * gr->k.width == cells)) {
        CHECKF(0, "points: expected one %s group of %d cells", mixed ? "mixed" : "padded", cells);
        ok = 0;
    }
    /* connections: two on synapse 0 (ProbAMPANMDA_EMS), one on synapses 1 and 3 */
    enum { CONNS = 4 };
    const int conn_syn[CONNS] = {0, 0, 1, 3};
    const double conn_w[CONNS] = {0.004, 0.004, 0.002, 0.003};
    int wv[CELLS][CONNS];
    for (int c = 0; ok && c < cells; c++)
        for (int k = 0; k < CONNS; k++) CHECK_OK(hb_sim_add_weights(sim, c, conn_syn[k], conn_w[k], &wv[c][k]));
    if (ok) {
        /* events: every EVERY steps on each connection (the two on synapse 0 alike), every
         * other time one on synapse 2 without a vector; ordered by step, cell, synapse, time,
         * weight, vector */
        hb_sim_event_t *ev = check_malloc((size_t)cells * (CONNS + 1) * PT_STEPS / EVERY * sizeof *ev + sizeof *ev);
        size_t n_ev = 0;
        for (long st = 4; st < PT_STEPS; st += EVERY)
            for (int c = 0; c < cells; c++) {
                const double t = ((double)st - 0.3) * opt.dt_ms;
                for (int k = 0; k < CONNS; k++) {
                    if (conn_syn[k] == 3 && (st / EVERY) % 2) continue;
                    ev[n_ev++] = (hb_sim_event_t){st, c, conn_syn[k], wv[c][k], t, conn_w[k]};
                    if (conn_syn[k] == 1 && (st / EVERY) % 2)
                        ev[n_ev++] = (hb_sim_event_t){st, c, 2, -1, t, 0.003};
                }
            }
        CHECK_OK(hb_sim_init(sim));
        const hb_step_group_t *k = &gr->k;
        const size_t size = hb_step_block_base(k, k->blocks);
        const size_t hh = (mixed ? k->hh_start[k->blocks] : (size_t)k->blocks * (size_t)k->n_hh) *
                          3 * (size_t)k->width;
        hb_step_group_t g = *k;
        double *v = check_malloc(size * sizeof *v), *hs = check_malloc((hh + 1) * sizeof *hs);
        double *d = check_malloc(size * sizeof *d), *rhs = check_malloc(size * sizeof *rhs);
        const size_t nw = (size_t)sim->n_weights * HB_CAT_MAX_WEIGHT;
        double *w = check_malloc((nw + 1) * sizeof *w);
        memcpy(v, k->v, size * sizeof *v);
        memcpy(hs, k->hh_state, hh * sizeof *hs);
        memcpy(w, sim->weights, nw * sizeof *w);
        hb_step_cat_t *twin = cat_copy(gr->cat, k);
        int user_points = 0, points = 0;
        for (int q = 0; user && q < twin->n_mech; q++)
            if (twin->mech[q].mech->kind == HB_CAT_POINT && (user == 1 || points++ % 2 == 0)) {
                twin->mech[q].builtin = -1;
                twin->mech[q].user_key = user_points++;
            }
        CHECKF(!user || user_points == (user == 1 ? 3 : 2), "points: %d point processes taken "
               "as a user's; expected %d", user_points, user == 1 ? 3 : 2);
        g.v = v;
        g.hh_state = hs;
        g.cat = twin;
        g.d = d;
        g.rhs = rhs;
        user_views_t views = {0};
        if (user) user_views(&g, &views);
        if (!mixed) { /* the device's lanes: every row factored each step (the tree step's
                       * plan takes the fixed rows' factors) */
            g.fixed_row = NULL;
            g.fixed_r = g.fixed_c = g.fixed_f = NULL;
        }
        hb_sim_tree_plan_t plan;
        memset(&plan, 0, sizeof plan);
        if (mixed) CHECK_OK(hb_sim_tree_plan(k, 32, &plan));
        CHECK_OK(hb_sim_queue_events(sim, n_ev, ev));
        CHECK_OK(hb_sim_advance(sim, PT_STEPS));
        hb_step_params_t p = {opt.dt_ms, 1.0, 0.0, sim->table.use_table ? sim->table.table : NULL,
                              sim->table.q10};
        const int W = k->width;
        size_t next = 0;
        long handed = 0, to_users = 0;
        for (long n = 0; n < PT_STEPS; n++) {
            const size_t first = next;
            for (; next < n_ev && ev[next].step <= n; next++) { /* the device's receive */
                const hb_sim_event_t *e = &ev[next];
                const hb_sim_target_t *t = &sim->targets[sim->target_first[e->cell] + e->synapse];
                double own[HB_CAT_MAX_WEIGHT] = {e->weight};
                double *x = e->weights >= 0 ? w + (size_t)e->weights * HB_CAT_MAX_WEIGHT : own;
                CHECK(t->point > 0);
                if (g.cat->mech[t->point - 1].builtin < 0) { /* a user's: handed over below */
                    to_users++;
                    continue;
                }
                if (e->weights < 0)
                    hb_cat_fused_point_event(&g, t->point - 1, t->slot, t->inst, x, e->time, opt.dt_ms, 1);
                hb_cat_fused_point_event(&g, t->point - 1, t->slot, t->inst, x, e->time, opt.dt_ms, 0);
            }
            if (user) /* then the users' NET_RECEIVE launchers, as hb_cuda_events_deliver */
                handed += user_deliver(sim, &g, &views, ev + first, next - first, w, opt.dt_ms);
            p.t_mid = ((double)n + 0.5) * opt.dt_ms;
            if (user) {
                CHECK(split_step(&g, mixed ? &plan.k : NULL, &p, !mixed) == 2 * user_points);
                continue;
            }
            if (mixed) {
                tree_step(&g, &plan.k, &p, d, rhs);
                continue;
            }
            for (int b = 0; b < k->blocks; b++)
                for (int lane = W - 1; lane >= 0; lane--) {
                    const size_t base = hb_step_block_base(&g, b) + (size_t)lane;
                    double *dl = d + base, *rl = rhs + base;
                    hb_step_lanes_membrane(&g, &p, b, lane, 1, W, g.shared, dl, rl);
                    hb_cat_fused_current(&g, &p, b, lane, 1, dl, rl);
                    hb_step_lanes_axial(&g, b, lane, 1, W, g.shared, dl, rl);
                    hb_step_lanes_solve(&g, b, lane, 1, W, g.shared, dl, rl);
                    hb_step_lanes_update(&g, &p, b, lane, 1, W, rl);
                    hb_cat_fused_state(&g, &p, b, lane, 1);
                }
        }
        const int same_v = !memcmp(v, k->v, size * sizeof *v);
        CHECKF(same_v && cat_same(twin, gr->cat, k) && !memcmp(w, sim->weights, nw * sizeof *w),
               "points (%s group%s): the device's delivery and step differ from the CPU engine's "
               "after %d steps (v %s, weight vectors %s)", mixed ? "mixed" : "padded",
               user == 1 ? ", users' point processes" : user ? ", some a user's" : "", PT_STEPS,
               same_v ? "the same" : "differs",
               memcmp(w, sim->weights, nw * sizeof *w) ? "differ" : "the same");
        /* the stochastic synapse at work: its vectors' Psurv (index 3) moved, some release
         * failed (its vectors differ between the two alike connections' cells) */
        int moved = 0;
        for (int c = 0; c < cells; c++)
            moved += sim->weights[(size_t)wv[c][0] * HB_CAT_MAX_WEIGHT + 3] != 0.0;
        CHECKF(moved > 0, "points: ProbAMPANMDA_EMS's Psurv never moved");
        CHECKF(handed == to_users && (user != 1 || handed == (long)n_ev) &&
                   (user != 2 || (handed > 0 && handed < (long)n_ev)),
               "points: %ld of %zu events handed to the users' NET_RECEIVE; expected %ld",
               handed, n_ev, to_users);
        user_views_free(&views);
        int spiking = 0;
        for (int q = 0; q < sim->n_probes; q++) spiking += sim->spikes[q].count;
        CHECKF(spiking >= cells, "points: %d spikes: too little to compare", spiking);
        cat_copy_free(twin);
        hb_sim_tree_free(&plan);
        free(v);
        free(hs);
        free(d);
        free(rhs);
        free(w);
        free(ev);
    }
    hb_sim_destroy(sim);
    for (int i = 0; i < cells; i++) {
        hb_model_destroy(md[i]);
        hb_morph_destroy(morph[i]);
    }
}

int main(void)
{
    for (int user = 0; user < 3; user++) { /* none, every, some point processes a user's */
        test_points(0, user);
        test_points(1, user);
    }
    for (int m = 0; m < 2; m++) { /* the device's steps, backward Euler and Crank-Nicolson */
        const hb_method_t method = m ? HB_METHOD_CN : HB_METHOD_EULER;
        for (int split = 0; split < 2; split++) { /* fused, and split around user items */
            test_lanes_cat(0, 0, method, split);
            test_lanes_cat(0, 1, method, split);
            test_lanes_cat(1, 1, method, split);
        }
        test_tree_cat(32, method, 0);
        test_tree_cat(8, method, 0);
        test_tree_cat(32, method, 1);
    }
    test_real_cells();
    test_tree_copies();
    test_device_path();
    test_tree_path(32);
    test_tree_path(8);
    test_bits(HB_METHOD_EULER);
    test_bits(HB_METHOD_CN);
    test_fault();
    test_checkpoint();
    return check_summary("test_sim_mixed");
}
