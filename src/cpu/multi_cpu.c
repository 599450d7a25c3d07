/*
 * Mixed-morphology batches on the CPU backends.
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
#include "core/multi.h"

#include <stdlib.h>

#include "core/context.h"
#include "core/multi_shapes.h"
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

void hb_multi_cpu_solve(hb_context_t *ctx, const hb_multi_view_t *v)
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

void hb_multi_cpu_solve_view(const hb_multi_view_t *v)
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
    hb_multi_cpu_solve_view(&v);
}

hb_status_t hb_multi_cpu_solve_grouped(hb_context_t *ctx, const hb_multi_plan_t *p,
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

hb_status_t hb_multi_cpu_solve_shapes(hb_context_t *ctx, const hb_multi_shapes_t *s,
                                      const double *u, const double *l, const double *d,
                                      double *rhs)
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

void hb_multi_cpu_solve_cells(hb_context_t *ctx, int n_cells, const int *m, const size_t *first,
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
