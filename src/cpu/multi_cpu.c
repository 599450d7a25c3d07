/*
 * Mixed-morphology batches on the CPU backends (the table hb_cpu_multi_ops): they solve the
 * core's host copy, in the LEVELS layout, in place; the twins on a copy permuted to their layout.
 *
 * LEVELS: elimination level by level from the leaves (level 0) to the roots,
 * substitution back. Within a level the branches are independent (each writes
 * only its own slots and reads finished levels), so OpenMP shares them out.
 * GROUPED (the CUDA kernel's twin): every group alone: the chunks of its split
 * branches, its levels in turn, the chunks' interiors; OpenMP over groups. PER_CELL (twin): Algorithm 1 per cell.
 * The arithmetic of a branch (or cell) does not depend on the thread that
 * runs it, nor on the grouping: bitwise the same result for any thread count,
 * and LEVELS and GROUPED without split branches agree bitwise on the CPU.
 */
#include <stdlib.h>
#include <string.h>

#include "backend/multi_ops.h"
#include "common/multi_arith.h"
#include "common/multi_shapes.h"
#include "common/status.h"

#ifdef HB_HAVE_OPENMP
#include <omp.h>
#endif

/* Adjacent branches per OpenMP work unit: a level's rows are contiguous. */
enum { BRANCH_CHUNK = 16 };

typedef void (*branch_fn)(const hb_multi_view_t *v, int h, int b);

static void run_level(const hb_multi_view_t *v, int h, branch_fn fn)
{
    for (int b = v->level_branch[h]; b < v->level_branch[h + 1]; ++b) fn(v, h, b);
}

static int omp_threads(hb_context_t *ctx)
{
#ifdef HB_HAVE_OPENMP
    if (ctx->backend == HB_BACKEND_OMP) return ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
#else
    (void)ctx;
#endif
    return 1;
}

/* LEVELS: level by level (OpenMP over a level's branches). */
static void solve_levels(hb_context_t *ctx, const hb_multi_view_t *v)
{
#ifdef HB_HAVE_OPENMP
    const int threads = omp_threads(ctx);
    if (threads > 1) {
#pragma omp parallel num_threads(threads)
        {
            for (int h = 0; h < v->n_levels; ++h) {
#pragma omp for schedule(static, BRANCH_CHUNK)
                for (int b = v->level_branch[h]; b < v->level_branch[h + 1]; ++b)
                    hb_multi_eliminate(v, h, b);
            }
            for (int h = v->n_levels - 1; h >= 0; --h) {
#pragma omp for schedule(static, BRANCH_CHUNK)
                for (int b = v->level_branch[h]; b < v->level_branch[h + 1]; ++b)
                    hb_multi_substitute(v, h, b);
            }
        }
        return;
    }
#else
    (void)ctx;
#endif
    for (int h = 0; h < v->n_levels; ++h) run_level(v, h, hb_multi_eliminate);
    for (int h = v->n_levels - 1; h >= 0; --h) run_level(v, h, hb_multi_substitute);
}

/* One group's view alone, as a CUDA block solves it: split chunks, levels, chunk interiors. */
static void solve_view(const hb_multi_view_t *v)
{
    hb_multi_chunk_pass(v, 0, 1, 0);
    for (int h = 0; h < v->n_levels; ++h) run_level(v, h, hb_multi_eliminate);
    for (int h = v->n_levels - 1; h >= 0; --h) run_level(v, h, hb_multi_substitute);
    hb_multi_chunk_pass(v, 0, 1, 1);
}

/* One group, as the CUDA block does it (its threads' branches in level order), its tables
 * staged in `tables` as the kernel stages them on chip. */
static void solve_group(const hb_multi_plan_t *p, int g, const double *u, double *l, double *d,
                        double *rhs, double *tables)
{
    const hb_multi_dims_t t = hb_multi_group_dims(p, g);
    const size_t base = p->slot_base[g];
    hb_multi_stage_tables(p, g, &t, tables, 0, 1);
    const hb_multi_view_t v = hb_multi_staged_view(&t, p->split_rows, tables, u + base, l + base,
                                                   d + base, rhs + base);
    solve_view(&v);
}

/* GROUPED twin: every group of `plan` on arrays in its layout (OpenMP over groups). */
static hb_status_t solve_grouped(hb_context_t *ctx, const hb_multi_plan_t *p,
                            const double *u, double *l, double *d, double *rhs)
{
    const int threads = omp_threads(ctx);
    size_t most = 0; /* doubles of the largest group's tables */
    for (int g = 0; g < p->n_groups; ++g) {
        const hb_multi_dims_t t = hb_multi_group_dims(p, g);
        const size_t words = (hb_multi_table_bytes(&t) + 7) / 8;
        if (words > most) most = words;
    }
    double *tables = malloc((size_t)threads * most * sizeof *tables);
    if (!tables) return hb_fail(HB_ERR_ALLOC, "hb_multi_solve: out of memory for group tables");
#ifdef HB_HAVE_OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
#endif
    for (int g = 0; g < p->n_groups; ++g) {
        int me = 0;
#ifdef HB_HAVE_OPENMP
        me = omp_get_thread_num();
#endif
        solve_group(p, g, u, l, d, rhs, tables + (size_t)me * most);
    }
    free(tables);
    return HB_SUCCESS;
}

/* SHAPES twin: every team of every class (OpenMP over teams) on arrays in its layout. */
static hb_status_t solve_shapes(hb_context_t *ctx, const hb_multi_shapes_t *s, const double *u,
                               const double *l, const double *d, double *rhs)
{
    const int threads = omp_threads(ctx);
    size_t most = 16; /* bytes of the largest team's staging */
    int teams = 0;
    /* first_team[q]: class q's first team; its teams follow in order */
    int *first_team = malloc(((size_t)s->n_classes + 1) * sizeof *first_team);
    for (int q = 0; first_team && q < s->n_classes; ++q) {
        const hb_multi_shape_t *k = &s->cls[q];
        /* the twin stages the tables even where the GPU reads them from memory */
        const size_t bytes =
            hb_branched_layout(k->m, k->plan.couplings, k->lanes, k->plan.words, 0).bytes;
        if (bytes > most) most = bytes;
        first_team[q] = teams;
        teams += hb_multi_shape_teams(k);
    }
    most = (most + 15) & ~(size_t)15;
    double *stage = aligned_alloc(16, (size_t)threads * most);
    int *class_of = malloc(((size_t)teams + 1) * sizeof *class_of);
    if (!first_team || !stage || !class_of) {
        free(first_team);
        free(stage);
        free(class_of);
        return hb_fail(HB_ERR_ALLOC, "hb_multi_solve: out of memory staging shapes");
    }
    for (int q = 0, t = 0; q < s->n_classes; ++q)
        for (int j = 0; j < s->cls[q].cells; j += s->cls[q].lanes) class_of[t++] = q;
#ifdef HB_HAVE_OPENMP
#pragma omp parallel for schedule(dynamic, 1) num_threads(threads) if (threads > 1)
#endif
    for (int t = 0; t < teams; ++t) {
        int me = 0;
#ifdef HB_HAVE_OPENMP
        me = omp_get_thread_num();
#endif
        const hb_multi_shape_t *k = &s->cls[class_of[t]];
        const int team = t - first_team[class_of[t]];
        const int j = team * k->lanes, members = k->cells - j < k->lanes ? k->cells - j : k->lanes;
        const size_t off = k->base + (size_t)j * (size_t)k->m;
        /* one team: `members` systems, block-interleaved by `lanes` */
        hb_hines_branched_solve(&k->plan, members, k->lanes, u + off, l + off, d + off,
                                rhs + off, NULL, NULL, (double *)((char *)stage + (size_t)me * most));
    }
    free(stage);
    free(class_of);
    free(first_team);
    return HB_SUCCESS;
}

/* PER_CELL twin: cell c's rows in natural order at u + first[c] etc. (OpenMP over cells). */
static void solve_cells(hb_context_t *ctx, int n_cells, const int *m, const size_t *first,
                        const int *parent, const double *u, const double *l, double *d,
                        double *rhs)
{
    const int threads = omp_threads(ctx);
    (void)threads;
#ifdef HB_HAVE_OPENMP
#pragma omp parallel for schedule(dynamic, 16) num_threads(threads) if (threads > 1)
#endif
    for (int c = 0; c < n_cells; ++c) {
        const size_t f = first[c];
        hb_multi_cell_solve(m[c], parent + f, 1, u + f, l + f, d + f, rhs + f);
    }
}

/* CPU twins of GROUPED, SHAPES and PER_CELL: the host copy permuted to their layout and back. */
static hb_status_t solve_permuted(const hb_multi_host_t *mb, hb_multi_algo_t algo)
{
    const size_t n = mb->cells.n_rows;
    hb_status_t status = HB_SUCCESS;
    /* SHAPES pads its teams (padding is never read, zeroed all the same) */
    const size_t size = algo == HB_MULTI_ALGO_SHAPES ? mb->shapes->size : n;
    double *buf = calloc(4 * size, sizeof *buf);
    if (!buf) return hb_fail(HB_ERR_ALLOC, "hb_multi_solve: out of memory (%zu rows)", n);
    double *u = buf, *l = buf + size, *d = buf + 2 * size, *rhs = buf + 3 * size;
    /* where node k of the twin's layout lives: grouped slot, class element, or natural order */
    const size_t *to = algo == HB_MULTI_ALGO_GROUPED  ? mb->grouped->node_slot
                       : algo == HB_MULTI_ALGO_SHAPES ? mb->shapes->node_index
                                                      : NULL;
    const size_t *from = mb->levels->node_slot;
    for (size_t k = 0; k < n; ++k) {
        const size_t t = to ? to[k] : k, f = from[k];
        u[t] = mb->u[f];
        l[t] = mb->l[f];
        d[t] = mb->d[f];
        rhs[t] = mb->rhs[f];
    }
    if (algo == HB_MULTI_ALGO_GROUPED)
        status = solve_grouped(mb->ctx, mb->grouped, u, l, d, rhs);
    else if (algo == HB_MULTI_ALGO_SHAPES)
        status = solve_shapes(mb->ctx, mb->shapes, u, l, d, rhs);
    else
        solve_cells(mb->ctx, mb->cells.n_cells, mb->cells.m, mb->cells.cell_first,
                    mb->cells.parent, u, l, d, rhs);
    for (size_t k = 0; k < n; ++k) {
        const size_t t = to ? to[k] : k, f = from[k];
        mb->d[f] = d[t];
        mb->rhs[f] = rhs[t];
    }
    free(buf);
    return status;
}

static hb_status_t cpu_solve(void *state, const hb_multi_host_t *host, hb_multi_algo_t algo)
{
    (void)state;
    if (algo == HB_MULTI_ALGO_LEVELS) {
        hb_multi_view_t v = hb_multi_group_view(host->levels, 0);
        v.u = host->u;
        v.l = host->l;
        v.d = host->d;
        v.rhs = host->rhs;
        solve_levels(host->ctx, &v);
        return HB_SUCCESS;
    }
    return solve_permuted(host, algo);
}

static hb_status_t cpu_benchmark(void *state, const hb_multi_host_t *host, hb_multi_algo_t algo,
                                 int repeats, double *seconds)
{
    static const char fn[] = "hb_multi_benchmark";
    hb_status_t status = HB_SUCCESS;
    const size_t bytes = host->cells.n_rows * sizeof(double);
    double *d0 = malloc(bytes), *r0 = malloc(bytes);
    if (!d0 || !r0) status = hb_fail(HB_ERR_ALLOC, "%s: out of memory", fn);
    if (status == HB_SUCCESS) {
        memcpy(d0, host->d, bytes);
        memcpy(r0, host->rhs, bytes);
    }
    for (int r = -1; r < repeats && status == HB_SUCCESS; ++r) { /* one warm-up */
        memcpy(host->d, d0, bytes);
        memcpy(host->rhs, r0, bytes);
        const double t0 = hb_clock_seconds();
        status = cpu_solve(state, host, algo);
        if (r >= 0) seconds[r] = hb_clock_seconds() - t0;
    }
    free(d0);
    free(r0);
    return status;
}

static hb_status_t cpu_create(hb_context_t *ctx, void **state)
{
    (void)ctx;
    *state = NULL; /* the host copy is the CPU's */
    return HB_SUCCESS;
}

static void cpu_destroy(void *state) { (void)state; }

/* Group size of the CPU twin of GROUPED (any size gives the same result). */
#define CPU_GROUP_ROWS 2048

/* Any size gives the same result: the batch's plan, else CPU_GROUP_ROWS; never saturated. */
static size_t cpu_group_rows(void *state, size_t total_rows, size_t planned, int *saturated)
{
    (void)state;
    (void)total_rows;
    *saturated = 0;
    return planned ? planned : CPU_GROUP_ROWS;
}

static hb_status_t cpu_shape_device(void *state, hb_multi_shapes_device_t *out)
{
    (void)state;
    *out = HB_MULTI_SHAPES_CPU_DEVICE;
    return HB_SUCCESS;
}

/* The layout calls: never made on a NULL state (the host copy is solved in place). */
static hb_status_t cpu_no_layout(void)
{
    return hb_fail(HB_ERR_BACKEND, "hb_multi: the CPU backend holds no layout of its own");
}

static hb_status_t cpu_install_plan(void *state, const hb_multi_plan_t *plan)
{
    (void)state;
    (void)plan;
    return cpu_no_layout();
}

static hb_status_t cpu_install_cells(void *state, int cells, int max_m, const int *m,
                                     const int *parent)
{
    (void)state;
    (void)cells;
    (void)max_m;
    (void)m;
    (void)parent;
    return cpu_no_layout();
}

static hb_status_t cpu_install_shapes(void *state, const hb_multi_shapes_t *s)
{
    (void)state;
    (void)s;
    return cpu_no_layout();
}

static hb_status_t cpu_upload(void *state, size_t n, size_t size, const size_t *map,
                              const double *u, const double *l, const double *d,
                              const double *rhs)
{
    (void)state;
    (void)n;
    (void)size;
    (void)map;
    (void)u;
    (void)l;
    (void)d;
    (void)rhs;
    return cpu_no_layout();
}

static hb_status_t cpu_download(void *state, size_t n, size_t size, const size_t *map, double *d,
                                double *rhs)
{
    (void)state;
    (void)n;
    (void)size;
    (void)map;
    (void)d;
    (void)rhs;
    return cpu_no_layout();
}

const struct hb_multi_ops hb_cpu_multi_ops = {
    .create = cpu_create,
    .destroy = cpu_destroy,
    .group_rows = cpu_group_rows,
    .shape_device = cpu_shape_device,
    .install_plan = cpu_install_plan,
    .install_cells = cpu_install_cells,
    .install_shapes = cpu_install_shapes,
    .upload = cpu_upload,
    .download = cpu_download,
    .solve = cpu_solve,
    .benchmark = cpu_benchmark,
};
