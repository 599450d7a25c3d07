/*
 * Mixed-morphology batches on the CPU backends: elimination level by level
 * from the leaves (level 0) to the roots, substitution back. Within a level
 * the branches are independent (each writes only its own slots and reads
 * finished levels), so OpenMP shares them out; the arithmetic of a branch
 * does not depend on the thread that runs it: bitwise the same result for
 * any thread count.
 */
#include "core/multi.h"

#include "core/context.h"

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

void hb_multi_cpu_solve(hb_context_t ctx, const hb_multi_view_t *v)
{
#ifdef HB_HAVE_OPENMP
    const int threads = ctx->threads > 0 ? ctx->threads : omp_get_max_threads();
    if (ctx->backend == HB_BACKEND_OMP && threads > 1) {
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
