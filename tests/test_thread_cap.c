/* The thread cap (HB_MAX_THREADS): contexts and simulations refuse more, with the cap in
 * the message, instead of asking OpenMP for threads that crash it (issue 44). */
#include <string.h>

#include "check.h"
#include "hinesbatch.h"

static void test_context(void)
{
    hb_context_t *ctx = NULL;
    CHECK_OK(hb_context_create(HB_BACKEND_SEQ, &ctx));
    if (!ctx) return;
    CHECK_OK(hb_context_set_threads(ctx, HB_MAX_THREADS));
    CHECK(hb_context_set_threads(ctx, HB_MAX_THREADS + 1) == HB_ERR_INVALID_VALUE);
    CHECKF(strstr(hb_last_error(), "threads = 1025; expected 0..1024") != NULL, "%s",
           hb_last_error());
    CHECK(hb_context_set_threads(ctx, 100000) == HB_ERR_INVALID_VALUE);
    CHECK(hb_context_set_threads(ctx, -1) == HB_ERR_INVALID_VALUE);
    hb_context_destroy(ctx);
}

static void test_simulation(void)
{
    hb_sample_t s[] = {{1, 1, 0, 0, 0, 5, -1, 0}, {2, 3, 5, 0, 0, 1, 1, 0}, {3, 3, 105, 0, 0, 1, 2, 0}};
    hb_morph_t *m = NULL;
    hb_model_t *model = NULL;
    hb_discretization_t disc;
    hb_discretization_default(&disc);
    CHECK_OK(hb_morph_from_samples(s, 3, "ball-and-stick", &m));
    if (m) CHECK_OK(hb_model_create(m, &disc, &model));
    if (!model) {
        hb_morph_destroy(m);
        return;
    }
    hb_sim_options_t opt;
    hb_sim_options_default(&opt);
    opt.threads = 100000;
    hb_sim_t *sim = NULL;
    CHECK(hb_sim_create(&model, 1, &opt, &sim) == HB_ERR_INVALID_VALUE && sim == NULL);
    CHECKF(strstr(hb_last_error(), "threads = 100000; expected 0..1024") != NULL, "%s",
           hb_last_error());
    hb_sim_destroy(sim);
    hb_model_destroy(model);
    hb_morph_destroy(m);
}

int main(void)
{
    test_context();
    test_simulation();
    return check_summary("thread_cap");
}
