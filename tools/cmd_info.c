/* hinesbatch info: a morphology and its compartments. */
#include <stdio.h>

#include "cli.h"

static const char usage_info[] =
    "usage: hinesbatch info FILE.swc|FILE.asc [options] [--json]\n"
    "\n"
    "Reads an SWC file, or a Neurolucida ASC file as NEURON's Import3d reads it, and\n"
    "prints its samples, sections, terminals, maximum branch order, total length\n"
    "[um], membrane area [um^2] and compartments under the chosen rule. Warnings\n"
    "about usable oddities go to stderr.\n"
    "\n"
    "  --json            machine-readable output (keys: points, sections, terminals,\n"
    "                    max_branch_order, length_um, area_um2, compartments, rows)\n";

int cli_command_info(int argc, char **argv)
{
    cli_model_options_t m;
    const char *path = NULL;
    int json = 0;
    cli_model_options_default(&m);
    const cli_option_t options[] = {
        CLI_FLAG("--json", &json, 1),
        CLI_MODEL_OPTIONS(&m),
        CLI_POSITIONAL("SWC file", &path),
    };
    const int parsed = cli_parse_options("info", usage_info, options,
                                         sizeof options / sizeof *options, argc, argv);
    if (parsed != CLI_CONTINUE) return parsed;
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

