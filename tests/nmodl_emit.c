/* Build-time helper of the tests: writes the C the NMODL code generator makes of a .mod file.
 * Usage: nmodl_emit FILE.mod PREFIX OUT.h */
#include <stdio.h>
#include <stdlib.h>

#include "nmodl/nmodl.h"

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: nmodl_emit FILE.mod PREFIX OUT.h\n");
        return 2;
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        fprintf(stderr, "%s: cannot open\n", argv[1]);
        return 1;
    }
    static char text[1 << 20];
    const size_t n = fread(text, 1, sizeof text, in);
    fclose(in);
    FILE *out = fopen(argv[3], "w");
    if (!out) {
        fprintf(stderr, "%s: cannot write\n", argv[3]);
        return 1;
    }
    const hb_status_t status = hb_nmodl_emit_c(argv[1], text, n, argv[2], out);
    if (fclose(out) != 0 || status != HB_SUCCESS) {
        fprintf(stderr, "%s\n", hb_last_error());
        remove(argv[3]);
        return 1;
    }
    return 0;
}
