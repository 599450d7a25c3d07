/*
 * SWC reader and morphology builder, malformed input: every file of morphologies-bad with the
 * outcome we promise in docs/swc.md, numbers and fields, options and I/O errors, tree errors,
 * garbage and NUL bytes, huge lines. Valid input: test_swc.c.
 */
#define _POSIX_C_SOURCE 200809L /* opendir, mkstemp, fork */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "core/morphology.h"
#include "hinesbatch.h"
#include "swc_common.h"

/* ------------------------------------------------------------------------ */
/* Every file of morphologies-bad, with the outcome docs/swc.md promises.   */
/* ------------------------------------------------------------------------ */

typedef enum { OUT_OK, OUT_WARNING, OUT_ERROR } outcome_t;

typedef struct {
    const char *file;
    outcome_t outcome;
    hb_status_t status; /* for OUT_ERROR */
    const char *text;   /* in the error, or in one warning */
    long line;          /* ":LINE:" in that message; 0: none */
} bad_file_t;

static const bad_file_t bad_files[] = {
    {"C031097B-I4.CNG.swc", OUT_ERROR, HB_ERR_PARSE, "field 6 (radius) is '-0.14'", 720},
    {"arbor_bad1_missing_parent.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "parent 4 of sample 5 does not exist", 4},
    {"arbor_bad2_two_roots.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "second root: sample 4 (line 4) has parent -1, but sample 1 (line 1)", 4},
    {"arbor_bad3_record_precedes_parent.swc", OUT_WARNING, 0, "soma samples branch at sample 3",
     3},
    {"arbor_bad4_duplicate_id.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "duplicate id 3 (also on line 2)", 3},
    {"arbor_bad5_parent_minus3.swc", OUT_ERROR, HB_ERR_PARSE,
     "field 7 (parent) is '-3', expected -1 for the root or a sample id", 1},
    {"arbor_invalid_missing_parent_field.swc", OUT_ERROR, HB_ERR_PARSE,
     "expected 7 fields (id type x y z radius parent), found 6", 1},
    {"arbor_invalid_nonnumeric_id.swc", OUT_ERROR, HB_ERR_PARSE,
     "field 1 (id) is '1a', expected an integer", 1},
    {"arbor_invalid_short_line.swc", OUT_ERROR, HB_ERR_PARSE, "found 5", 2},
    {"arbor_valid2_out_of_order.swc", OUT_WARNING, 0, "no soma/neurite split", 0},
    {"arbor_valid3_trailing_garbage.swc", OUT_OK, 0, NULL, 0},
    {"arbor_valid4_noncontig_type0_comments.swc", OUT_OK, 0, NULL, 0},
    {"morphio_disconnected_neurite.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "second root: sample 10", 10},
    {"morphio_inline_3pt_soma_bad_offset.swc", OUT_WARNING, 0,
     "3-point soma: side samples are not at +-r from the centre", 1},
    {"morphio_inline_3pt_soma_float_tolerance.swc", OUT_OK, 0, NULL, 0},
    {"morphio_inline_axon_carrying_dendrite.swc", OUT_OK, 0, NULL, 0},
    {"morphio_inline_cyclic_self_parent.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "sample 6 is its own parent", 6},
    {"morphio_inline_duplicate_bifurcation_point.swc", OUT_OK, 0, NULL, 0},
    {"morphio_inline_empty.swc", OUT_ERROR, HB_ERR_PARSE, "no samples", 0},
    {"morphio_inline_extra_column.swc", OUT_OK, 0, NULL, 0},
    {"morphio_inline_missing_fields_1.swc", OUT_ERROR, HB_ERR_PARSE, "found 1", 1},
    {"morphio_inline_missing_fields_2.swc", OUT_ERROR, HB_ERR_PARSE, "found 2", 2},
    {"morphio_inline_missing_parent.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "parent 10 of sample 4 does not exist", 4},
    {"morphio_inline_negative_id.swc", OUT_ERROR, HB_ERR_PARSE, "field 1 (id) is '-2'", 2},
    {"morphio_inline_no_soma_axon_only.swc", OUT_WARNING, 0, "no soma", 0},
    {"morphio_inline_split_soma.swc", OUT_OK, 0, NULL, 0},
    {"morphio_inline_type_20.swc", OUT_ERROR, HB_ERR_PARSE,
     "field 2 (type) is '20', expected an integer from 0 to 19", 3},
    {"morphio_inline_type_change_within_section.swc", OUT_OK, 0, NULL, 0},
    {"morphio_inline_type_minus1.swc", OUT_ERROR, HB_ERR_PARSE, "field 2 (type) is '-1'", 3},
    {"morphio_inline_weird_ids_unsorted.swc", OUT_OK, 0, NULL, 0},
    {"morphio_inline_weird_indent.swc", OUT_WARNING, 0, "4 samples have radius 0", 11},
    {"morphio_inline_zero_diameter.swc", OUT_WARNING, 0, "1 sample has radius 0", 4},
    {"morphio_multiple_soma.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "second root: sample 10 (line 11)", 11},
    {"morphio_neurite_wrong_root_point.swc", OUT_WARNING, 0, "re-attached to the soma centre",
     4},
    {"morphio_no_soma.swc", OUT_WARNING, 0, "no soma", 0},
    {"morphio_simple-all-types.swc", OUT_OK, 0, NULL, 0},
    {"morphio_simple-trailing-space.swc", OUT_WARNING, 0, "no soma", 0},
    {"morphio_simple-windows-eol.swc", OUT_OK, 0, NULL, 0},
    {"neurom_Neuron_disconnected_components.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "second root: sample 6 (line 40)", 40},
    {"neurom_Neuron_missing_ids.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "parent 7 of sample 8 does not exist", 42},
    {"neurom_Neuron_missing_parents.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "parent 5 of sample 6 does not exist", 40},
    {"neurom_Neuron_zero_radius.swc", OUT_OK, 0, NULL, 0},
    {"neurom_Single_apical_no_soma.swc", OUT_WARNING, 0, "no soma", 0},
    {"neurom_bifurcating_soma.swc", OUT_WARNING, 0, "soma samples branch at sample 1", 5},
    {"neurom_custom_type.swc", OUT_WARNING, 0, "4 samples have radius 0", 6},
    {"neurom_empty_segments.swc", OUT_OK, 0, NULL, 0},
    {"neurom_multiple_somata.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "second root: sample 10 (line 12)", 12},
    {"neurom_non_increasing_trunk_off_1_16pt.swc", OUT_WARNING, 0, "no soma/neurite split", 0},
    {"neurom_random_trunk_off_0_16pt.swc", OUT_WARNING, 0, "no soma", 0},
    {"neurom_repeated_id.swc", OUT_ERROR, HB_ERR_MORPHOLOGY, "duplicate id 4 (also on line 5)",
     6},
    {"neurom_root_node_jump.swc", OUT_WARNING, 0, "4 samples have radius 0", 8},
    {"neurom_sample_disordered.swc", OUT_OK, 0, NULL, 0},
    {"neurom_simple_reversed.swc", OUT_WARNING, 0, "4 samples have radius 0", 26},
    {"neurom_soma_with_neurite_parent.swc", OUT_ERROR, HB_ERR_MORPHOLOGY,
     "soma sample 6 has a neurite as parent", 8},
    {"neurom_soma_zero_radius.swc", OUT_WARNING, 0, "7 samples have radius 0", 23},
    {"neurom_undefined_type.swc", OUT_WARNING, 0, "4 samples have radius 0", 4},
    {"neurom_z_jump.swc", OUT_OK, 0, NULL, 0},
    {"trees_25HSS.swc", OUT_WARNING, 0, "no soma/neurite split", 0},
    {"trees_test02.swc", OUT_OK, 0, NULL, 0},
};
#define N_BAD (int)(sizeof bad_files / sizeof bad_files[0])
static void test_bad_file(const bad_file_t *t)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", BAD_DIR, t->file);
    hb_morph_t *m = (hb_morph_t *)&m; /* must be reset to NULL on failure */
    hb_status_t st = hb_morph_load_swc(path, NULL, &m);
    const char *msg = hb_last_error();
    if (t->outcome == OUT_ERROR) {
        CHECKF(st == t->status, "%s: got %s (%s), expected %s", t->file, hb_status_name(st), msg,
               hb_status_name(t->status));
        CHECKF(m == NULL, "%s: morph is NULL on failure", t->file);
        CHECKF(strstr(msg, t->text) != NULL, "%s: message '%s' lacks '%s'", t->file, msg,
               t->text);
        CHECKF(names_location(msg, t->file, t->line), "%s: message '%s' lacks %s:%ld:", t->file,
               msg, t->file, t->line);
        if (st == HB_SUCCESS) hb_morph_destroy(m);
        return;
    }
    CHECKF(st == HB_SUCCESS, "%s: %s: %s", t->file, hb_status_name(st), msg);
    if (st != HB_SUCCESS) return;
    check_invariants(m);
    int n = hb_morph_warning_count(m);
    if (t->outcome == OUT_OK) {
        CHECKF(n == 0, "%s: %d unexpected warnings, first: %s", t->file, n,
               n ? hb_morph_warning(m, 0) : "");
    } else {
        int found = 0, located = 1;
        for (int i = 0; i < n; i++) {
            const char *w = hb_morph_warning(m, i);
            located &= strstr(w, t->file) != NULL;
            if (strstr(w, t->text) && names_location(w, t->file, t->line)) found = 1;
        }
        CHECKF(found, "%s: no warning with '%s' at line %ld (%d warnings, first: %s)", t->file,
               t->text, t->line, n, n ? hb_morph_warning(m, 0) : "");
        CHECKF(located, "%s: every warning names the file", t->file);
    }
    hb_morph_destroy(m);
}

static const char *bad_name(int i) { return bad_files[i].file; }
static void bad_test(int i) { test_bad_file(&bad_files[i]); }

/* ------------------------------------------------------------------------ */
/* In-memory rules.                                                          */
/* ------------------------------------------------------------------------ */

static void test_numbers(void)
{
    /* Exponent-form ids (TREES), ids from 0, long decimals, signs. */
    hb_morph_t *m = parse("1.0000000e+000 1.0e0 0 0 0 2.0e+000 -1.0000000e+000\n"
                          "2.0000000e+000 3 +0.0 -0 5.000000000000000000000000000001 1 1e0\n");
    if (m) {
        CHECK(m->samples[1].id == 2 && m->samples[1].parent == 1 && m->samples[0].radius == 2.0);
        hb_morph_destroy(m);
    }
    m = parse("0 1 0 0 0 1 -1\n1 3 0 0 1 1 0\n");
    if (m) {
        CHECK(m->samples[0].id == 0 && m->samples[1].parent == 0);
        hb_morph_destroy(m);
    }
    /* Ids at the limits of long. */
    m = parse("9223372036854775807 1 0 0 0 1 -1\n9223372036854775806 3 0 0 5 1 "
              "9223372036854775807\n");
    if (m) {
        CHECK(m->samples[0].id == LONG_MAX && m->samples[1].parent == LONG_MAX);
        hb_morph_destroy(m);
    }
    expect_error("9223372036854775808 1 0 0 0 1 -1\n", HB_ERR_PARSE, "(out of range)", 1);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 -9223372036854775809\n", HB_ERR_PARSE,
                 "field 7 (parent)", 2);
    expect_error("1e300 1 0 0 0 1 -1\n", HB_ERR_PARSE, "field 1 (id) is '1e300'", 1);
    /* Field errors name the field, quote it and say what was expected. */
    expect_error("1a 1 0 0 0 1 -1\n", HB_ERR_PARSE, "field 1 (id) is '1a', expected an integer",
                 1);
    expect_error("2.5 1 0 0 0 1 -1\n", HB_ERR_PARSE, "field 1 (id) is '2.5'", 1);
    expect_error("-1 1 0 0 0 1 -1\n", HB_ERR_PARSE, "expected an integer >= 0", 1);
    expect_error("1 soma 0 0 0 1 -1\n", HB_ERR_PARSE, "field 2 (type) is 'soma'", 1);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 y 0 1 1\n", HB_ERR_PARSE, "field 4 (y) is 'y'", 2);
    expect_error("1 1 0 0 nan 1 -1\n", HB_ERR_PARSE, "field 5 (z) is 'nan'", 1);
    expect_error("1 1 inf 0 0 1 -1\n", HB_ERR_PARSE, "field 3 (x) is 'inf'", 1);
    expect_error("1 1 1e400 0 0 1 -1\n", HB_ERR_PARSE, "field 3 (x) is '1e400'", 1);
    expect_error("1 1 0x10 0 0 1 -1\n", HB_ERR_PARSE, "field 3 (x) is '0x10'", 1);
    expect_error("1 1 0 0 0 1.2.3 -1\n", HB_ERR_PARSE, "field 6 (radius) is '1.2.3'", 1);
    expect_error("1 1 0 0 0 -0.5 -1\n", HB_ERR_PARSE, "expected a number >= 0", 1);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 0 1 1.5\n", HB_ERR_PARSE, "field 7 (parent) is '1.5'",
                 2);
    expect_error("1 1 0 0 0 1 -3\n", HB_ERR_PARSE,
                 "expected -1 for the root or a sample id", 1);
    /* Types: 0..max_type. */
    expect_error("1 1 0 0 0 1 -1\n2 20 0 0 1 1 1\n", HB_ERR_PARSE, "from 0 to 19", 2);
    expect_error("1 -1 0 0 0 1 -1\n", HB_ERR_PARSE, "field 2 (type) is '-1'", 1);
    hb_swc_options_t o;
    hb_swc_options_default(&o);
    o.max_type = 4;
    const char *t5 = "1 1 0 0 0 1 -1\n2 5 0 0 1 1 1\n";
    expect_error_n(t5, strlen(t5), &o, HB_ERR_PARSE, "from 0 to 4", 2);
    o.max_type = 19;
    m = parse_n(t5, strlen(t5), &o);
    hb_morph_destroy(m);
    /* Integer fields are exact or refused, whatever their form: no rounding through a
     * double beyond 2^53, no fraction dropped. */
    m = parse("9007199254740993e0 1 0 0 0 1 -1\n1.8014398509481985e16 3 0 0 1 1 "
              "9007199254740993.000\n");
    if (m) {
        CHECKF(m->samples[0].id == 9007199254740993L && m->samples[1].id == 18014398509481985L &&
                   m->samples[1].parent == 9007199254740993L,
               "ids %ld %ld parent %ld", m->samples[0].id, m->samples[1].id, m->samples[1].parent);
        hb_morph_destroy(m);
    }
    m = parse("5e2 1 0 0 0 1 -1\n.6e3 3 0 0 1 1 50000e-2\n");
    if (m) {
        CHECK(m->samples[0].id == 500 && m->samples[1].id == 600 && m->samples[1].parent == 500);
        hb_morph_destroy(m);
    }
    expect_error("4503599627370496.5e0 1 0 0 0 1 -1\n", HB_ERR_PARSE,
                 "field 1 (id) is '4503599627370496.5e0', expected an integer", 1);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 1.0000000000000000001\n", HB_ERR_PARSE,
                 "field 7 (parent)", 2);
    expect_error("9.3e18 1 0 0 0 1 -1\n", HB_ERR_PARSE, "(out of range)", 1);
    expect_error("1e99999999999 1 0 0 0 1 -1\n", HB_ERR_PARSE, "(out of range)", 1);
    expect_error("1e 1 0 0 0 1 -1\n", HB_ERR_PARSE, "field 1 (id) is '1e'", 1);
    m = parse("0e99999999999 1 0 0 0 1 -1\n1 3 0 0 1 1 0.0e-5\n");
    if (m) {
        CHECK(m->samples[0].id == 0 && m->samples[1].parent == 0);
        hb_morph_destroy(m);
    }
    /* A quoted garbage field is escaped and shortened. */
    char big[200];
    memset(big, 'x', sizeof big);
    memcpy(big + sizeof big - 14, " 1 0 0 0 1 -1\n", 14);
    expect_error_n(big, sizeof big, NULL, HB_ERR_PARSE, "xxxxxxxxxxx...'", 1);
}

static void test_options_and_io(void)
{
    hb_morph_t *m = (hb_morph_t *)&m;
    hb_swc_options_t o;
    hb_swc_options_default(&o);
    o.units = (hb_length_units_t)7;
    CHECK(hb_morph_parse_swc("1 1 0 0 0 1 -1\n", 15, MEM, &o, &m) == HB_ERR_INVALID_VALUE);
    CHECK(m == NULL);
    CHECK(hb_morph_parse_swc("1 1 0 0 0 1 -1\n", 15, MEM, NULL, NULL) == HB_ERR_INVALID_VALUE);
    CHECK(hb_morph_parse_swc(NULL, 5, MEM, NULL, &m) == HB_ERR_INVALID_VALUE);
    hb_status_t st = hb_morph_load_swc("/nonexistent/dir/cell.swc", NULL, &m);
    CHECK(st == HB_ERR_IO && m == NULL);
    CHECKF(strstr(hb_last_error(), "/nonexistent/dir/cell.swc: cannot open: ") != NULL, "%s",
           hb_last_error());
    st = hb_morph_load_swc(HB_DATA_DIR, NULL, &m); /* a directory */
    CHECKF(st != HB_SUCCESS && m == NULL, "directory: %s", hb_status_name(st));
    CHECK(hb_morph_from_samples(NULL, 0, "none", &m) == HB_ERR_MORPHOLOGY && m == NULL);
    CHECK(strstr(hb_last_error(), "none: no samples") != NULL);
    CHECK(hb_morph_from_samples(NULL, -1, NULL, &m) == HB_ERR_INVALID_VALUE);
    CHECK(hb_morph_stats(NULL, NULL) == HB_ERR_INVALID_VALUE);
    CHECK(hb_morph_warning_count(NULL) == 0 && hb_morph_warning(NULL, 0) == NULL);
    hb_morph_destroy(NULL);

    m = parse("1 2 0 0 0 1 -1\n2 2 0 0 1 1 1\n");
    if (m) {
        CHECK(hb_morph_warning_count(m) == 1);
        CHECK(hb_morph_warning(m, -1) == NULL && hb_morph_warning(m, 1) == NULL);
        CHECK(strcmp(m->name, MEM) == 0);
        hb_morph_destroy(m);
    }
    hb_sample_t s[2] = {{5, 3, 0, 0, 0, 1, -1, 0}, {6, 3, 3, 4, 0, 1, 5, 0}};
    CHECK_OK(hb_morph_from_samples(s, 2, NULL, &m));
    if (m) {
        CHECK(strcmp(m->name, "<samples>") == 0 && close_to(stats_of(m).length_um, 5, 1e-15));
        hb_morph_destroy(m);
    }
    s[1].radius = -1;
    CHECK(hb_morph_from_samples(s, 2, "api", &m) == HB_ERR_MORPHOLOGY && m == NULL);
    CHECK(strstr(hb_last_error(), "api: sample 6 has radius -1") != NULL);
}

static void test_tree_errors(void)
{
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n2 3 0 0 2 1 1\n", HB_ERR_MORPHOLOGY,
                 "duplicate id 2 (also on line 2)", 3);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 2\n", HB_ERR_MORPHOLOGY,
                 "sample 2 is its own parent", 2);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 7\n", HB_ERR_MORPHOLOGY,
                 "parent 7 of sample 2 does not exist", 2);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n3 3 0 0 1 1 -1\n", HB_ERR_MORPHOLOGY,
                 "second root: sample 3 (line 3) has parent -1, but sample 1 (line 1) is "
                 "already the root",
                 3);
    /* A cycle and no root; a cycle beside a rooted tree. */
    expect_error("1 3 0 0 0 1 2\n2 3 0 0 1 1 1\n", HB_ERR_MORPHOLOGY, "cycle: sample 1", 1);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n# a loop\n5 3 0 0 1 1 7\n6 3 0 0 1 1 5\n"
                 "7 3 0 0 1 1 6\n8 3 0 0 1 1 7\n",
                 HB_ERR_MORPHOLOGY, "(5 -> 7 -> 6 -> 5)", 4);
    expect_error("1 3 0 0 0 1 -1\n2 1 0 0 1 1 1\n", HB_ERR_MORPHOLOGY,
                 "soma sample 2 has a neurite as parent", 2);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n3 1 0 0 2 1 2\n", HB_ERR_MORPHOLOGY,
                 "soma sample 3 has a neurite as parent (sample 2, type 3)", 3);
    expect_error("1 1 0 0 0 0 -1\n2 3 0 0 1 0 1\n", HB_ERR_MORPHOLOGY,
                 "all 2 samples have radius 0", 1);
}

/* Geometry outside the documented limits: refused at load, with the line. */
static void test_geometry_limits(void)
{
    expect_error("1 1 0 0 0 5 -1\n2 3 10 0 0 1 1\n3 3 1e308 0 0 1 2\n", HB_ERR_MORPHOLOGY,
                 "sample 3 has x = 1e+308 um; expected a finite coordinate within +-1e+08 um", 3);
    expect_error("1 1 0 0 0 5 -1\n2 3 0 -2e8 0 1 1\n", HB_ERR_MORPHOLOGY,
                 "sample 2 has y = -2e+08 um", 2);
    expect_error("1 1 0 0 0 5 -1\n2 3 10 0 0 1e308 1\n", HB_ERR_MORPHOLOGY,
                 "sample 2 has radius 1e+308 um; expected 0 (repaired) or 0.001 to 10000 um", 2);
    expect_error("1 1 0 0 0 5 -1\n2 3 10 0 0 1e-320 1\n3 3 20 0 0 1e-320 2\n",
                 HB_ERR_MORPHOLOGY, "sample 2 has radius", 2);
    expect_error("1 1 0 0 0 5 -1\n2 3 10 0 0 1e-300 1\n3 3 20 0 0 1e-300 2\n",
                 HB_ERR_MORPHOLOGY, "sample 2 has radius 1e-300 um", 2);
    /* Two samples a micrometre apart are fine; a nanometre apart is the least. */
    expect_error("1 3 0 0 0 1 -1\n2 3 10 0 0 1 1\n3 3 10.0000001 0 0 1 2\n",
                 HB_ERR_MORPHOLOGY, "sample 3 is 1e-07 um from sample 2; expected 0", 3);
    expect_error("1 3 0 0 0 1 -1\n2 3 1e-160 0 0 1 1\n3 3 5 0 0 1 2\n", HB_ERR_MORPHOLOGY,
                 "um from sample 1; expected 0 (the same point) or at least 0.001 um", 2);
    /* In nanometres the limits apply after the conversion. */
    hb_swc_options_t o;
    hb_swc_options_default(&o);
    o.units = HB_UNITS_NM;
    const char *nm = "1 1 0 0 0 5000 -1\n2 3 10000 0 0 0.5 1\n";
    expect_error_n(nm, strlen(nm), &o, HB_ERR_MORPHOLOGY, "sample 2 has radius 0.0005 um", 2);
    /* At the limits: accepted. */
    hb_morph_t *m = parse("1 1 0 0 0 1e4 -1\n2 3 1e8 0 0 0.001 1\n3 3 1e8 0.001 0 0.001 2\n");
    hb_morph_destroy(m);
    /* The API applies the same limits. */
    hb_sample_t s[2] = {{1, 1, 0, 0, 0, 5, -1, 0}, {2, 3, 1e300, 0, 0, 1, 1, 0}};
    CHECK(hb_morph_from_samples(s, 2, "api", &m) == HB_ERR_MORPHOLOGY && m == NULL);
    CHECKF(strstr(hb_last_error(), "api: sample 2 has x = 1e+300 um") != NULL, "%s",
           hb_last_error());
}

/* ------------------------------------------------------------------------ */
/* Streaming files: bounded memory, the first bad line, CRLF across chunks. */
/* ------------------------------------------------------------------------ */

/* Writes `length` bytes of `text` to a new temporary file; returns its path in `path`. */
static int write_temp(char *path, const char *text, size_t length)
{
    strcpy(path, "/tmp/hb_swc_stream_XXXXXX");
    int fd = mkstemp(path);
    if (fd < 0) return 0;
    FILE *f = fdopen(fd, "wb");
    int ok = f && fwrite(text, 1, length, f) == length;
    if (f) ok &= fclose(f) == 0;
    return ok;
}

static void expect_load_error(const char *path, const char *shown, hb_status_t status,
                              const char *what, long line)
{
    hb_morph_t *m = (hb_morph_t *)&m;
    hb_status_t st = hb_morph_load_swc(path, NULL, &m);
    const char *msg = hb_last_error();
    CHECKF(st == status && m == NULL, "%s: got %s (%s)", shown, hb_status_name(st), msg);
    CHECKF(strstr(msg, what) != NULL, "%s: message '%s' lacks '%s'", shown, msg, what);
    CHECKF(names_location(msg, path, line), "%s: message '%s' lacks line %ld", shown, msg, line);
    if (st == HB_SUCCESS) hb_morph_destroy(m);
}

/*
 * A 2 GiB NUL-filled file (sparse: no disk used) and /dev/zero, loaded in a child whose
 * address space is capped at 256 MiB more than it has: a reader that buffers the file
 * runs out of memory (or is killed) instead of reporting the NUL byte of line 1. The
 * sanitizers reserve terabytes of address space, so there the cap is left out and only
 * the messages are checked.
 */
static void test_big_binary(void)
{
    char sparse[64];
    CHECK(write_temp(sparse, "", 0) && truncate(sparse, (off_t)2 << 30) == 0);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
        struct rlimit lim;
        FILE *f = fopen("/proc/self/statm", "r");
        unsigned long pages = 0;
        if (f && fscanf(f, "%lu", &pages) != 1) pages = 0;
        if (f) fclose(f);
        lim.rlim_cur = lim.rlim_max = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + (256ul << 20);
        setrlimit(RLIMIT_AS, &lim);
#endif
        int ok = 1;
        const char *paths[2] = {sparse, "/dev/zero"};
        for (int k = 0; k < 2; k++) {
            hb_morph_t *m = NULL;
            hb_status_t st = hb_morph_load_swc(paths[k], NULL, &m);
            char want[128];
            snprintf(want, sizeof want, "%s:1: byte 0x00 at column 1", paths[k]);
            int this_ok = st == HB_ERR_PARSE && m == NULL && strstr(hb_last_error(), want);
            if (!this_ok)
                fprintf(stderr, "%s: %s (%s)\n", paths[k], hb_status_name(st), hb_last_error());
            ok &= this_ok;
        }
        _exit(ok ? 0 : 1);
    }
    int wstatus = 0;
    CHECK(waitpid(pid, &wstatus, 0) == pid);
    CHECKF(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0,
           "2 GiB of NULs and /dev/zero: the child %s %d",
           WIFEXITED(wstatus) ? "exited with" : "died of signal",
           WIFEXITED(wstatus) ? WEXITSTATUS(wstatus) : WTERMSIG(wstatus));
    remove(sparse);
}

static void test_streaming(void)
{
    char path[64];
    /* 64 MiB of NUL bytes: the first chunk fails, at line 1 column 1. */
    size_t big = (size_t)64 << 20;
    char *text = calloc(big, 1);
    CHECK(text && write_temp(path, text, big));
    expect_load_error(path, "NUL file", HB_ERR_PARSE, "byte 0x00 at column 1", 1);
    remove(path);
    /* Valid lines, then 64 MiB of NULs on line 3. */
    memcpy(text, "1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n", 30);
    CHECK(write_temp(path, text, big));
    expect_load_error(path, "NULs after samples", HB_ERR_PARSE, "byte 0x00 at column 1", 3);
    remove(path);
    /* A line of 20 MiB without a line break: refused at the 16 MiB line limit. */
    size_t long_line = (size_t)20 << 20;
    memset(text, '7', long_line);
    CHECK(write_temp(path, text, long_line));
    expect_load_error(path, "long line", HB_ERR_PARSE, "line longer than 16777216 bytes", 1);
    remove(path);
    /* CRLF split across the 64 KiB read chunks: each CRLF is one line break. The first
     * line is a comment ending at byte 65535 (CR) and 65536 (LF). */
    size_t len = 0;
    text[len++] = '#';
    while (len < 65535) text[len++] = 'c';
    for (int k = 1; k <= 20000; k++)
        len += (size_t)sprintf(text + len, "\r\n%d 3 %d 0 0 1 %d", k, k, k == 1 ? -1 : k - 1);
    len += (size_t)sprintf(text + len, "\r\n20001 3 0 0 0 1 77777\r\n");
    CHECK(text[65535] == '\r' && text[65536] == '\n');
    CHECK(write_temp(path, text, len));
    expect_load_error(path, "CRLF across chunks", HB_ERR_MORPHOLOGY,
                      "parent 77777 of sample 20001 does not exist", 20002);
    /* Without the bad last line: the file loads, as the same text parsed in memory does. */
    len -= strlen("20001 3 0 0 0 1 77777\r\n");
    CHECK(write_temp(path, text, len));
    hb_morph_t *loaded = NULL, *parsed = NULL;
    CHECK_OK(hb_morph_load_swc(path, NULL, &loaded));
    CHECK_OK(hb_morph_parse_swc(text, len, path, NULL, &parsed));
    if (loaded && parsed) {
        int same = loaded->n_samples == parsed->n_samples && loaded->n_samples == 20000;
        for (int k = 0; same && k < loaded->n_samples; k++) {
            const hb_sample_t *a = &loaded->samples[k], *b = &parsed->samples[k];
            same = a->id == b->id && a->type == b->type && a->x == b->x && a->y == b->y &&
                   a->z == b->z && a->radius == b->radius && a->parent == b->parent &&
                   a->line == b->line;
        }
        CHECKF(same, "streamed and in-memory samples differ (%d, %d samples)",
               loaded->n_samples, parsed->n_samples);
        CHECK(loaded->samples[loaded->n_samples - 1].line == 20001);
    }
    hb_morph_destroy(loaded);
    hb_morph_destroy(parsed);
    remove(path);
    free(text);
    test_big_binary();
}

/* ------------------------------------------------------------------------ */
/* Garbage, NUL bytes, huge lines.                                           */
/* ------------------------------------------------------------------------ */

static void test_garbage(void)
{
    static const size_t sizes[] = {1, 2, 7, 64, 255, 4096, 65536, 1 << 20};
    rng_state = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        for (int rep = 0; rep < 4; rep++) {
            unsigned char *buf = malloc(sizes[i]);
            for (size_t k = 0; k < sizes[i]; k++) buf[k] = (unsigned char)rng_next();
            hb_morph_t *m = (hb_morph_t *)&m;
            hb_status_t st = hb_morph_parse_swc((const char *)buf, sizes[i], "garbage", NULL, &m);
            CHECKF(st != HB_SUCCESS && m == NULL, "garbage of %zu bytes: %s", sizes[i],
                   hb_status_name(st));
            CHECKF(strncmp(hb_last_error(), "garbage", 7) == 0, "garbage message: %s",
                   hb_last_error());
            if (st == HB_SUCCESS) hb_morph_destroy(m);
            free(buf);
        }
    }
    /* Valid lines, then binary: the error is at the first bad line. */
    const char nul_text[] = "1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\n3 3 0\0 0 2 1 2\n";
    expect_error_n(nul_text, sizeof nul_text - 1, NULL, HB_ERR_PARSE, "byte 0x00 at column 6", 3);
    const char nul_comment[] = "1 1 0 0 0 1 -1 # a\0b\n";
    expect_error_n(nul_comment, sizeof nul_comment - 1, NULL, HB_ERR_PARSE, "byte 0x00", 1);
    expect_error("1 1 0 0 0 1 -1\n2 3 0 0 1 1 1\x01\n", HB_ERR_PARSE, "byte 0x01", 2);
    /* Non-ASCII bytes in comments are fine. */
    hb_morph_t *m = parse("# caf\xc3\xa9 \x01\x7f\n1 1 0 0 0 1 -1\n");
    hb_morph_destroy(m);
}

static void test_huge_lines(void)
{
    /* 8 MB of blanks before a sample. */
    size_t big = (size_t)8 << 20;
    char *text = malloc(big + 64);
    const char *sample = "1 1 0 0 0 1 -1\n";
    memset(text, ' ', big);
    memcpy(text + big, sample, strlen(sample));
    hb_morph_t *m = parse_n(text, big + strlen(sample), NULL);
    hb_morph_destroy(m);
    /* A 2 MB integer token: out of range, quoted shortly. */
    size_t digits = (size_t)2 << 20;
    memset(text, '9', digits);
    memcpy(text + digits, " 1 0 0 0 1 -1\n", 14);
    expect_error_n(text, digits + 14, NULL, HB_ERR_PARSE, "field 1 (id) is '999", 1);
    /* A 2 MB radius token 0.111...1 = 1/9. */
    size_t len = 0;
    memcpy(text, "1 1 0 0 0 0.", 12);
    len = 12;
    memset(text + len, '1', digits);
    len += digits;
    memcpy(text + len, " -1\n", 4);
    len += 4;
    m = parse_n(text, len, NULL);
    if (m) CHECK(close_to(m->samples[0].radius, 1.0 / 9.0, 1e-12));
    hb_morph_destroy(m);
    free(text);
}

int main(void)
{
    run_table(BAD_DIR, N_BAD, bad_name, bad_test);
    test_numbers();
    test_options_and_io();
    test_tree_errors();
    test_geometry_limits();
    test_streaming();
    test_garbage();
    test_huge_lines();
    return check_summary("swc_errors");
}
