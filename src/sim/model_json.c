/* placeholder, replaced below */
#include "core/status.h"
#include "sim/sim.h"
hb_status_t hb_sim_load_json(const char *path, hb_sim_t **sim)
{
    (void)path; (void)sim;
    return hb_fail(HB_ERR_NOT_SUPPORTED, "not yet");
}
hb_status_t hb_sim_parse_json(const char *text, size_t length, const char *name,
                              const char *base_dir, hb_sim_t **sim)
{
    (void)text; (void)length; (void)name; (void)base_dir; (void)sim;
    return hb_fail(HB_ERR_NOT_SUPPORTED, "not yet");
}
