/*
 * The morphology object's own life: its warnings, its release, and the defaults of the options
 * its builders take (hb_swc_options_t: SWC's reader, ASC's and hb_morph_build use them).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/status.h"
#include "core/morph.h"

#define DEFAULT_MAX_TYPE 19 /* MorphIO's largest SWC type */

void hb_swc_options_default(hb_swc_options_t *options)
{
    if (!options) return;
    options->units = HB_UNITS_UM;
    options->max_type = DEFAULT_MAX_TYPE;
    options->sections = HB_SECTIONS_HINESBATCH;
    options->keep_zero_radius = 0;
    options->single_points = 0;
}

double hb_morph_as_float(double v)
{
    volatile float f = (float)v;
    return (double)f;
}

hb_status_t hb_morph_warn(hb_morph_t *m, long line, const char *format, ...)
{
    char text[1024], buf[1200];
    va_list args;
    va_start(args, format);
    vsnprintf(text, sizeof text, format, args);
    va_end(args);
    /* "NAME:LINE: text", or "NAME: text" when it did not come from a line of a file */
    if (line > 0) snprintf(buf, sizeof buf, "%s:%ld: %s", m->name, line, text);
    else snprintf(buf, sizeof buf, "%s: %s", m->name, text);
    char **grown = realloc(m->warnings, (size_t)(m->n_warnings + 1) * sizeof *grown);
    if (!grown)
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory keeping warning %d", m->name,
                       m->n_warnings + 1);
    m->warnings = grown;
    const size_t len = strlen(buf) + 1;
    char *copy = malloc(len);
    if (!copy)
        return hb_fail(HB_ERR_ALLOC, "%s: out of memory keeping warning %d", m->name,
                       m->n_warnings + 1);
    memcpy(copy, buf, len);
    m->warnings[m->n_warnings++] = copy;
    return HB_SUCCESS;
}

hb_status_t hb_morph_destroy(hb_morph_t *morph)
{
    if (!morph) return HB_SUCCESS;
    for (int i = 0; i < morph->n_sections; i++) {
        free(morph->sections[i].sample);
        free(morph->sections[i].arc);
        free(morph->sections[i].radius);
    }
    free(morph->sections);
    for (int i = 0; i < morph->n_warnings; i++) free(morph->warnings[i]);
    free(morph->warnings);
    free(morph->samples);
    free(morph->parent);
    free(morph->name);
    free(morph);
    return HB_SUCCESS;
}

int hb_morph_warning_count(const hb_morph_t *morph) { return morph ? morph->n_warnings : 0; }

const char *hb_morph_warning(const hb_morph_t *morph, int index)
{
    if (!morph || index < 0 || index >= morph->n_warnings) return NULL;
    return morph->warnings[index];
}
