/* The build-time catalogue generator: the NMODL front end and code generator (src/nmodl/) and
 * error reporting (src/common/status.c) alone, without the library, so the library can compile
 * the C it writes (the built-in catalogues, CMakeLists.txt).
 * Usage: hb_nmodlgen --name NAME --symbol FUNCTION [--generator TEXT] [--strict] [--cuda] OUTDIR
 *        FILE.mod...
 * (--generator: the catalogue's generator text; by default this build's HB_NMODL_GENERATOR;
 * --cuda: also a user catalogue's CUDA launchers, hbg_<id>_cuda.cu).
 */
#include <stdio.h>
#include <string.h>

#include "hb_nmodl_generator.h"
#include "nmodl/nmodl.h"

static int usage(void)
{
    fprintf(stderr,
            "usage: hb_nmodlgen --name NAME --symbol FUNCTION [--generator TEXT] [--strict] "
            "[--cuda] OUTDIR FILE.mod...\n");
    return 2;
}

int main(int argc, char **argv)
{
    hb_nmodl_catalogue_opts_t opts = {NULL, NULL, HB_NMODL_GENERATOR, 0, 0};
    int i = 1;
    for (; i < argc && strncmp(argv[i], "--", 2) == 0; i++) {
        if (strcmp(argv[i], "--strict") == 0) {
            opts.strict = 1;
            continue;
        }
        if (strcmp(argv[i], "--cuda") == 0) {
            opts.cuda = 1;
            continue;
        }
        if (i + 1 >= argc) return usage();
        if (strcmp(argv[i], "--name") == 0)
            opts.name = argv[++i];
        else if (strcmp(argv[i], "--symbol") == 0)
            opts.symbol = argv[++i];
        else if (strcmp(argv[i], "--generator") == 0)
            opts.generator = argv[++i];
        else
            return usage();
    }
    if (!opts.name || !opts.symbol || !opts.generator || i >= argc) return usage();
    const char *dir = argv[i++];
    if (hb_nmodl_emit_catalogue(&opts, (const char *const *)(argv + i), argc - i, dir) !=
        HB_SUCCESS) {
        fprintf(stderr, "hb_nmodlgen: %s\n", hb_last_error());
        return 1;
    }
    return 0;
}
