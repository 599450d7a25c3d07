/* hinesbatch info: a morphology and its compartments. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const char usage_info[] =
    "usage: hinesbatch info FILE.swc [options] [--json]\n"
    "\n"
    "Reads an SWC file and prints its samples, sections, terminals, maximum branch\n"
    "order, total length [um], membrane area [um^2] and compartments under the\n"
    "chosen rule. Warnings about usable oddities go to stderr.\n"
    "\n"
    "  --json            machine-readable output (keys: points, sections, terminals,\n"
    "                    max_branch_order, length_um, area_um2, compartments, rows)\n";

int cli_command_info(int argc, char **argv)
{
    cli_args_t a = {"info", argc, argv, 0};
    cli_model_options_t m;
    const char *path = NULL;
    int json = 0;
    cli_model_options_default(&m);
    for (a.i = 1; a.i < argc; a.i++) {
        const char *opt = argv[a.i];
        int used = cli_parse_model_option(&a, &m);
        if (used < 0) return 2;
        if (used) continue;
        if (strcmp(opt, "--help") == 0 || strcmp(opt, "-h") == 0) {
            printf("%s\n%s", usage_info, cli_usage_discretisation);
            return 0;
        } else if (strcmp(opt, "--json") == 0) {
            json = 1;
        } else if (opt[0] == '-' && opt[1]) {
            cli_fail("info", "unknown option '%s' (see hinesbatch info --help)", opt);
            return 2;
        } else if (path) {
            cli_fail("info", "more than one file given ('%s' and '%s')", path, opt);
            return 2;
        } else {
            path = opt;
        }
    }
    if (!path) {
        cli_fail("info", "no SWC file given (see hinesbatch info --help)");
        return 2;
    }
    hb_morph_t *morph;
    hb_cable_t *cable;
    if (cli_load_model("info", path, &m, &morph, &cable)) return 1;
    hb_morph_stats_t st;
    hb_status_t status = hb_morph_stats(morph, &st);
    int rc = 0;
    if (status != HB_SUCCESS) {
        rc = cli_fail_status("info", status);
    } else if (json) {
        printf("{\"file\": ");
        cli_json_string(stdout, path);
        printf(", \"points\": %d, \"sections\": %d, \"terminals\": %d, \"max_branch_order\": %d, "
               "\"length_um\": %.6f, \"area_um2\": %.6f, \"compartments\": %d, \"rows\": %d, "
               "\"warnings\": %d}\n",
               st.points, st.sections, st.terminals, st.max_branch_order, st.length_um,
               st.area_um2, hb_cable_compartments(cable), hb_cable_size(cable),
               hb_morph_warning_count(morph));
    } else {
        printf("file              %s\n", path);
        printf("points            %d\n", st.points);
        printf("sections          %d\n", st.sections);
        printf("terminals         %d\n", st.terminals);
        printf("max branch order  %d\n", st.max_branch_order);
        printf("length            %.3f um\n", st.length_um);
        printf("membrane area     %.3f um^2\n", st.area_um2);
        printf("compartments      %d\n", hb_cable_compartments(cable));
        printf("matrix rows       %d\n", hb_cable_size(cable));
    }
    hb_cable_destroy(cable);
    hb_morph_destroy(morph);
    return rc;
}

