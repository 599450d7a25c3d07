/*
 * libFuzzer target: NMODL text -> hb_nmodl_parse (lexer, parser, checks, interface, and the
 * code generator run as a check).
 *
 * Seeds: the committed catalogues' .mod files (the folders of mechanisms/, copied by
 * fuzz/run.sh).
 * Every input parses or fails with a message that names the file, a line and a column;
 * a success describes a named mechanism.
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "nmodl/nmodl.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    hb_nmodl_mechanism_t *m = NULL;
    if (hb_nmodl_parse("fuzz.mod", (const char *)data, size, &m) != HB_SUCCESS) {
        if (m != NULL) __builtin_trap(); /* on error nothing is returned */
        if (strncmp(hb_last_error(), "fuzz.mod:", 9) != 0) __builtin_trap();
        return 0;
    }
    if (!m || !m->name || !m->name[0]) __builtin_trap();
    for (int i = 0; i < m->n_parameters; i++)
        if (!m->parameters[i].name || !m->parameters[i].unit) __builtin_trap();
    hb_nmodl_destroy(m);
    return 0;
}
