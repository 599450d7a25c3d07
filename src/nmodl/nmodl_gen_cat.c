/* The catalogue generator (docs/mechanisms.md, sections 1 and 7): a folder of .mod files into
 * the C of one catalogue. Per mechanism the kernel header of nmodl_gen_c.c
 * (hbg_<cat>_<mech>.h); per catalogue a dispatch header (hbg_<cat>_dispatch.h: HB_HOSTDEV
 * switches over the mechanism's index, for a fused GPU step that cannot call through
 * pointers) and the catalogue's table (hbg_<cat>_catalogue.c: every mechanism's
 * hb_cat_mech_t, described from the front end, and one function returning the catalogue).
 * The output depends on the files' text and the paths as given alone: files are taken in
 * the byte order of their paths, numbers written with 17 digits. */
#define _POSIX_C_SOURCE 200809L /* open_memstream */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nmodl/nmodl_gen.h"

typedef struct {
    const char *path;
    char *text;
    size_t length;
    nm_ctx *c;
    hb_nmodl_mechanism_t *m; /* in c's arena */
    const char *blocker;     /* why the generator cannot translate it; NULL: it can */
} cat_file;

/* The whole file, capped at 64 MiB as hb_nmodl_read does. */
static hb_status_t read_text(const char *path, char **text, size_t *length)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return hb_fail(HB_ERR_IO, "%s: cannot open the file (%s); expected a readable .mod file",
                       path, strerror(errno));
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 65536;
            char *more = cap > ((size_t)64 << 20) ? NULL : realloc(buf, cap);
            if (!more) {
                free(buf);
                fclose(f);
                return hb_fail(HB_ERR_IO,
                               "%s: larger than 64 MiB or out of memory; expected a "
                               ".mod file",
                               path);
            }
            buf = more;
        }
        const size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    const int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return hb_fail(HB_ERR_IO, "%s: read error", path);
    }
    *text = buf;
    *length = n;
    return HB_SUCCESS;
}

/* Parses and checks one file, keeping its syntax tree (the descriptor needs the
 * declarations' order and the TABLEs), and runs the generator as a check. */
static hb_status_t load_file(cat_file *f)
{
    hb_status_t status = read_text(f->path, &f->text, &f->length);
    if (status != HB_SUCCESS) return status;
    nm_ctx *c = calloc(1, sizeof *c);
    if (!c) return hb_fail(HB_ERR_ALLOC, "%s: out of memory", f->path);
    c->path = f->path;
    c->src = f->text;
    c->length = f->length;
    f->c = c;
    if (setjmp(c->fail)) {
        status = strstr(c->message, "out of memory") ? HB_ERR_ALLOC : HB_ERR_PARSE;
        return hb_fail(status, "%s", c->message);
    }
    nm_lex(c);
    nm_parse(c);
    f->m = nm_check(c);
    f->blocker = f->m->generator_blocker[0] ? f->m->generator_blocker : nm_generator_check(c, f->m);
    return HB_SUCCESS;
}

/* The variables of the descriptor, in the kernels' order (nmodl_gen_c.c: collect_fields for
 * the fields, the load function for the globals); the generated file checks the counts
 * against the kernel header's enum at compile time. */
static int is_param_field(const hb_nmodl_mechanism_t *m, const hb_nmodl_var_t *v)
{
    return nm_gen_in_list(m->range, m->n_range, v->name);
}
static int is_assigned_field(const hb_nmodl_mechanism_t *m, const hb_nmodl_var_t *v)
{
    return nm_gen_in_list(m->range, m->n_range, v->name) && !nm_gen_ion_var(m, v->name) &&
           strcmp(v->name, "v") != 0;
}
static int is_global(const hb_nmodl_mechanism_t *m, const nm_decl *d)
{
    return d->kind == D_PARAMETER && !nm_gen_in_list(m->range, m->n_range, d->var.name) &&
           strcmp(d->var.name, "v") != 0 && strcmp(d->var.name, "celsius") != 0 &&
           !nm_gen_ion_reads(m, d->var.name);
}

/* The TABLE statement of a PROCEDURE or FUNCTION body, or NULL (as nmodl_gen_c.c). */
static const nm_node *table_of(const nm_block *b)
{
    if (b->kind != B_PROCEDURE && b->kind != B_FUNCTION) return NULL;
    for (int i = 0; i < b->body->n_kids; i++)
        if (b->body->kids[i]->kind == S_TABLE) return b->body->kids[i];
    return NULL;
}

static void number(FILE *out, double x)
{
    if (isinf(x)) {
        fputs(x > 0 ? "HUGE_VAL" : "-HUGE_VAL", out);
        return;
    }
    char text[40];
    for (int digits = 15; digits <= 17; digits++) { /* the shortest that reads back the same */
        snprintf(text, sizeof text, "%.*g", digits, x);
        if (strtod(text, NULL) == x) break;
    }
    if (!strpbrk(text, ".eEn")) strcat(text, ".0");
    fputs(text, out);
}

/* A C string literal of text (names and units: printable ASCII, escaped where needed). */
static void literal(FILE *out, const char *text)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(out, "\\%c", *p);
        else if (*p < 32 || *p > 126)
            fprintf(out, "\\%03o", *p);
        else
            fputc(*p, out);
    }
    fputc('"', out);
}

/* FNV-1a 64 of the files' base names and bytes, in the generator's (path) order. */
static unsigned long long sources_hash(const cat_file *files, int n)
{
    unsigned long long h = 0xcbf29ce484222325ULL;
    for (int i = 0; i < n; i++) {
        const char *base = strrchr(files[i].path, '/');
        base = base ? base + 1 : files[i].path;
        for (const char *c = base;; c++) {
            h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
            if (!*c) break;
        }
        for (size_t k = 0; k < files[i].length; k++)
            h = (h ^ (unsigned char)files[i].text[k]) * 0x100000001b3ULL;
    }
    return h;
}

/* A comment's text: no "*" "/" inside. */
static void comment_text(FILE *out, const char *text)
{
    for (const char *p = text; *p; p++) {
        if (*p == '*' && p[1] == '/')
            fputs("* ", out);
        else if (*p == '\n')
            fputs(" ", out);
        else
            fputc(*p, out);
    }
}

static void field_row(FILE *out, const hb_nmodl_var_t *v)
{
    fputs("    {", out);
    literal(out, v->name);
    fputs(", ", out);
    literal(out, v->unit ? v->unit : "");
    fputs(", ", out);
    number(out, v->has_value ? v->value : 0.0);
    fputs(", ", out);
    number(out, v->has_limits ? v->lo : -HUGE_VAL);
    fputs(", ", out);
    number(out, v->has_limits ? v->hi : HUGE_VAL);
    fputs("},\n", out);
}

typedef struct {
    const char *id; /* the catalogue's C name */
    FILE *out;      /* the catalogue's .c */
    int cuda;       /* the descriptors name hbgc_<id>_cuda[index] (opts->cuda) */
    int index;      /* the mechanism's index in the catalogue */
} cat_out;

/* The name of a descriptor array of mechanism `mech`, or NULL when it has n = 0 entries. */
static void array_ref(FILE *out, const cat_out *o, const char *mech, int n, const char *what)
{
    if (n)
        fprintf(out, "hbgd_%s_%s_%s", o->id, mech, what);
    else
        fputs("NULL", out);
}

/* The descriptor's arrays and kernels table of file f; its hb_cat_mech_t row goes to `row`. */
static void emit_descriptor(const cat_out *o, const cat_file *f, FILE *row)
{
    FILE *out = o->out;
    const hb_nmodl_mechanism_t *m = f->m;
    const nm_ctx *c = f->c;
    char p[512];
    snprintf(p, sizeof p, "hbg_%s_%s", o->id, m->name);
    fprintf(out, "/* ---- %s (%s) ---- */\n\n", m->name, f->path);
    int n_param = 0, n_global = 0, n_assigned = 0, n_table = 0;
    for (int i = 0; i < m->n_parameters; i++) n_param += is_param_field(m, &m->parameters[i]);
    for (int i = 0; i < c->n_decls; i++) n_global += is_global(m, &c->decls[i]);
    for (int i = 0; i < m->n_assigned; i++) n_assigned += is_assigned_field(m, &m->assigned[i]);
    for (int i = 0; i < c->n_blocks; i++) n_table += table_of(&c->blocks[i]) != NULL;
    if (n_param) {
        fprintf(out, "static const hb_cat_field_t hbgd_%s_%s_param[] = {\n", o->id, m->name);
        for (int i = 0; i < m->n_parameters; i++)
            if (is_param_field(m, &m->parameters[i])) field_row(out, &m->parameters[i]);
        fputs("};\n", out);
    }
    if (n_global) {
        fprintf(out, "static const hb_cat_field_t hbgd_%s_%s_global[] = {\n", o->id, m->name);
        for (int i = 0; i < c->n_decls; i++)
            if (is_global(m, &c->decls[i])) field_row(out, &c->decls[i].var);
        fputs("};\n", out);
    }
    if (m->n_states) {
        fprintf(out, "static const hb_cat_field_t hbgd_%s_%s_state[] = {\n", o->id, m->name);
        for (int i = 0; i < m->n_states; i++) field_row(out, &m->states[i]);
        fputs("};\n", out);
    }
    if (n_assigned) {
        fprintf(out, "static const hb_cat_field_t hbgd_%s_%s_assigned[] = {\n", o->id, m->name);
        for (int i = 0; i < m->n_assigned; i++)
            if (is_assigned_field(m, &m->assigned[i])) field_row(out, &m->assigned[i]);
        fputs("};\n", out);
    }
    int writes_current = m->n_nonspecific > 0, writes_conc = 0;
    if (m->n_ions) {
        fprintf(out, "static const hb_cat_ion_t hbgd_%s_%s_ion[] = {\n", o->id, m->name);
        for (int i = 0; i < m->n_ions; i++) {
            const hb_nmodl_ion_t *ion = &m->ions[i];
            unsigned mask[2] = {0, 0};
            for (int pass = 0; pass < 2; pass++) {
                const char **list = pass ? ion->write : ion->read;
                const int n = pass ? ion->n_write : ion->n_read;
                for (int j = 0; j < n; j++) mask[pass] |= nm_gen_ion_role(list[j], ion->name);
            }
            writes_current |= (mask[1] & HB_ION_I) != 0;
            writes_conc |= (mask[1] & (HB_ION_CI | HB_ION_CO)) != 0;
            fputs("    {", out);
            literal(out, ion->name);
            fputs(", ", out);
            number(out, ion->has_valence ? ion->valence : 0.0);
            fputs(", ", out);
            static const char *const bits[] = {"HB_ION_E", "HB_ION_CI", "HB_ION_CO", "HB_ION_I"};
            for (int pass = 0; pass < 2; pass++) {
                if (pass) fputs(", ", out);
                if (!mask[pass]) fputs("0", out);
                for (int b = 0, first = 1; b < 4; b++)
                    if (mask[pass] & (1u << b)) {
                        fprintf(out, "%s%s", first ? "" : " | ", bits[b]);
                        first = 0;
                    }
            }
            fputs("},\n", out);
        }
        fputs("};\n", out);
    }
    if (n_table) {
        fprintf(out, "static const int hbgd_%s_%s_table_len[] = {", o->id, m->name);
        for (int i = 0, q = 0; i < c->n_blocks; i++)
            if (table_of(&c->blocks[i]))
                fprintf(out, "%s%s_%s_TABLE_ROWS * %s_%s_TABLE_STRIDE", q++ ? ", " : "", p,
                        c->blocks[i].name, p, c->blocks[i].name);
        fputs("};\n", out);
        /* the tables kernel: the formulas at celsius, the globals and the constants */
        fprintf(out,
                "static void hbgd_%s_%s_tables(double celsius, const double *global, "
                "double *const *table)\n{\n",
                o->id, m->name);
        fprintf(out,
                "    %s_vars_t s;\n    memset(&s, 0, sizeof s);\n    s.celsius = celsius;\n"
                "    (void)global;\n",
                p);
        for (int i = 0, q = 0; i < c->n_decls; i++)
            if (is_global(m, &c->decls[i]))
                fprintf(out, "    s.%s = global[%d];\n", c->decls[i].var.name, q++);
        for (int i = 0; i < c->n_decls; i++)
            if (c->decls[i].kind == D_CONSTANT || c->decls[i].kind == D_UNITS_CONSTANT) {
                fprintf(out, "    s.%s = ", c->decls[i].var.name);
                number(out, c->decls[i].var.value);
                fputs(";\n", out);
            }
        for (int i = 0, q = 0; i < c->n_blocks; i++)
            if (table_of(&c->blocks[i]))
                fprintf(out, "    %s_table_%s(&s, table[%d]);\n", p, c->blocks[i].name, q++);
        fputs("}\n", out);
    }
    /* the kernels keep scratch after these (non-RANGE ASSIGNED, RANDOM ids): N_FIELD */
    const int n_described = n_param + m->n_states + n_assigned;
    fprintf(out,
            "_Static_assert(%s_N_FIELD >= %d && %s_N_PARAM == %d && %s_N_TABLE == %d,\n"
            "               \"the descriptor of %s follows its kernels' layout\");\n",
            p, n_described, p, n_param, p, n_table, m->name);
    /* the kernels as the CPU engine calls them: with GCC on x86-64 AVX-512 and x86-64-v3
     * clones beside the default, picked at load time (HB_CPU_CLONES; no FMA contraction, so
     * the same bits) */
    static const char *const kernel[] = {"init", "current", "state"};
    for (int q = 0; q < 3; q++)
        fprintf(out,
                "HB_CPU_CLONES static void hbgk_%s_%s_%s(const hb_cat_block_t *blk, int j0, "
                "int j1)\n{\n    %s_%s_kernel(blk, j0, j1);\n}\n",
                o->id, m->name, kernel[q], p, kernel[q]);
    fprintf(out,
            "static const hb_cat_cpu_t hbgd_%s_%s_cpu = {\n    hbgk_%s_%s_init,\n"
            "    hbgk_%s_%s_current,\n    hbgk_%s_%s_state,\n    ",
            o->id, m->name, o->id, m->name, o->id, m->name, o->id, m->name);
    if (m->n_net_receive_args >= 0)
        fprintf(out, "%s_net_receive_kernel,\n    %s_net_init_kernel,\n    ", p, p);
    else
        fputs("NULL, /* net_receive */\n    NULL, /* net_init */\n    ", out);
    array_ref(out, o, m->name, n_table, "tables");
    if (m->self_events)
        fprintf(out, ",\n    %s_net_receive_self_kernel,\n    %s_init_self_kernel,\n    ", p, p);
    else
        fputs(",\n    NULL, /* net_receive_self */\n    NULL, /* init_self */\n    ", out);
    if (m->n_watch)
        fprintf(out, "%s_watch_kernel,\n};\n\n", p);
    else
        fputs("NULL, /* watch */\n};\n\n", out);
    static const char *const kinds[] = {"HB_CAT_DENSITY", "HB_CAT_POINT", "HB_CAT_ARTIFICIAL"};
    fprintf(row, "    {\"%s\", %s,\n     %d, ", m->name, kinds[m->kind], n_param);
    array_ref(row, o, m->name, n_param, "param");
    fprintf(row, ", %d, ", n_global);
    array_ref(row, o, m->name, n_global, "global");
    fprintf(row, ",\n     %d, ", m->n_states);
    array_ref(row, o, m->name, m->n_states, "state");
    fprintf(row, ", %d, ", n_assigned);
    array_ref(row, o, m->name, n_assigned, "assigned");
    fprintf(row, ",\n     %d, ", m->n_ions);
    array_ref(row, o, m->name, m->n_ions, "ion");
    fprintf(row, ",\n     %d, %d, %d, %s_NUMERIC_DIDV, %s_N_FIELD,\n     %d, ",
            m->n_net_receive_args, writes_current, writes_conc, p, p, n_table);
    array_ref(row, o, m->name, n_table, "table_len");
    fprintf(row, ", &hbgd_%s_%s_cpu, ", o->id, m->name);
    if (o->cuda)
        fprintf(row, "&hbgc_%s_cuda[%d], %d, %d", o->id, o->index, m->n_randoms,
                m->for_netcons);
    else
        fprintf(row, "NULL, %d, %d", m->n_randoms, m->for_netcons);
    fprintf(row, ", %d},\n", m->net_event);
}

static int by_path(const void *a, const void *b)
{
    return strcmp(((const cat_file *)a)->path, ((const cat_file *)b)->path);
}

static FILE *open_out(const char *dir, const char *name, char *path, size_t room)
{
    snprintf(path, room, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) hb_fail(HB_ERR_IO, "%s: cannot write (%s)", path, strerror(errno));
    return f;
}

static hb_status_t close_out(FILE *f, const char *path)
{
    if (fclose(f) != 0) return hb_fail(HB_ERR_IO, "%s: write error", path);
    return HB_SUCCESS;
}

/* Mechanism f's kernel header: nmodl_gen_c.c's output. */
static hb_status_t emit_kernels(const cat_file *f, const char *id, const char *dir)
{
    char name[600], path[4200];
    snprintf(name, sizeof name, "hbg_%s_%s.h", id, f->m->name);
    FILE *out = open_out(dir, name, path, sizeof path);
    if (!out) return HB_ERR_IO;
    char prefix[600];
    snprintf(prefix, sizeof prefix, "hbg_%s_%s", id, f->m->name);
    nm_ctx *c = f->c;
    if (setjmp(c->fail)) {
        fclose(out);
        remove(path);
        return hb_fail(HB_ERR_PARSE, "%s", c->message);
    }
    nm_emit(c, f->m, prefix, out);
    return close_out(out, path);
}

static void emit_dispatch(FILE *out, const char *id, const cat_file *files, int n)
{
    fprintf(out,
            "/* Generated by hinesbatch's NMODL code generator: the kernels of the catalogue "
            "%s by mechanism\n * index (its hb_catalogue_t's order), for a fused step that "
            "cannot call through pointers. Do not edit. */\n",
            id);
    fprintf(out, "#ifndef HBG_%s_DISPATCH_H\n#define HBG_%s_DISPATCH_H\n\n", id, id);
    for (int i = 0; i < n; i++)
        if (!files[i].blocker) fprintf(out, "#include \"hbg_%s_%s.h\"\n", id, files[i].m->name);
    fprintf(out, "\nenum {\n");
    int index = 0;
    for (int i = 0; i < n; i++)
        if (!files[i].blocker) fprintf(out, "    HBG_%s_%s = %d,\n", id, files[i].m->name, index++);
    fprintf(out, "    HBG_%s_N_MECH = %d\n};\n", id, index);
    static const char *const kernels[] = {"init", "current", "state"};
    for (int k = 0; k < 3; k++) {
        fprintf(out,
                "\n/* The %s kernel of mechanism `mech` (HBG_%s_*); nothing for another index. */\n"
                "HB_HOSTDEV void hbg_%s_%s(int mech, const hb_cat_block_t *blk, int j0, int j1)\n"
                "{\n    switch (mech) {\n",
                kernels[k], id, id, kernels[k]);
        for (int i = 0; i < n; i++)
            if (!files[i].blocker)
                fprintf(out, "    case HBG_%s_%s: hbg_%s_%s_%s_kernel(blk, j0, j1); return;\n", id,
                        files[i].m->name, id, files[i].m->name, kernels[k]);
        fprintf(out, "    default: (void)blk; (void)j0; (void)j1; return;\n    }\n}\n");
    }
    /* NET_RECEIVE (init 0) or its INITIAL (init 1) on instance j of lane k: 1, or 0 where the
     * mechanism has no NET_RECEIVE (the engine's rule for a connection without one then) */
    fprintf(out,
            "\n/* NET_RECEIVE (init 0) or its INITIAL (init 1) of mechanism `mech` on instance j "
            "of lane k,\n * weight vector w, at t: 1, or 0 where it has none. */\n"
            "HB_HOSTDEV int hbg_%s_net_receive(int mech, const hb_cat_block_t *blk, int j, int k, "
            "double *w,\n%*sdouble t, int init)\n{\n    switch (mech) {\n",
            id, (int)strlen(id) + 32, "");
    for (int i = 0; i < n; i++)
        if (!files[i].blocker && files[i].m->n_net_receive_args >= 0)
            fprintf(out,
                    "    case HBG_%s_%s:\n        if (init) hbg_%s_%s_net_init_kernel(blk, j, k, w, t);\n"
                    "        else hbg_%s_%s_net_receive_kernel(blk, j, k, w, t);\n        return 1;\n",
                    id, files[i].m->name, id, files[i].m->name, id, files[i].m->name);
    fprintf(out, "    default:\n        (void)blk; (void)j; (void)k; (void)w; (void)t; (void)init;\n"
                 "        return 0;\n    }\n}\n");
    fprintf(out, "\n#endif\n");
}

/* A user catalogue's CUDA: per mechanism a __global__ wrapper of each HB_HOSTDEV kernel, a thread
 * a lane (hb_cat_lane_t: the engine's view of one slot of a group, device pointers), and its
 * host launcher; hbgc_<id>_cuda[] the launchers in the catalogue's order. Compiled by nvcc with
 * -fmad=false, as the library's kernels: the same operations as the CPU's C, so the same bits. */
/* A point process's NET_RECEIVE on CUDA (common/mech_abi.h's hb_cat_run_t): a thread a position
 * of the step's events; where a run of this mechanism's target starts, its events in order, each
 * with its connection's weight vector (or one of its own, (weight, 0, ...), NET_RECEIVE's INITIAL
 * first), as the CPU engine's delivery (common/cat_step.h's hb_cat_point_event) and the
 * split step's host twin (common/cat_fused.h's hb_cat_run_cpu). */
static void emit_cuda_events(FILE *out, const char *id, const char *m, int n_weight)
{
    fprintf(out,
            "\nstatic __global__ void hbgw_%s_%s_net_receive(const hb_cat_run_t *run, "
            "const hb_cat_event_t *ev,\n        int n, int key, double dt)\n{\n"
            "    const int p = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
            "    if (p >= n || run[p].n <= 0 || run[p].key != key) return;\n"
            "    const hb_cat_lane_t *lane = run[p].lane;\n"
            "    const int j = run[p].inst;\n"
            "    hb_cat_block_t blk = lane->blk;\n"
            "    blk.ion = (hb_ion_block_t *)lane->ion;\n"
            "    blk.dt = dt;\n    blk.d = blk.rhs = NULL;\n"
            "    for (int e = p; e < p + run[p].n; e++) {\n"
            "        double own[%d] = {ev[e].weight};\n"
            "        double *w = ev[e].w ? ev[e].w : own;\n"
            "        blk.t = ev[e].t;\n"
            "        if (!ev[e].w) hbg_%s_%s_net_init_kernel(&blk, j, 0, w, ev[e].t);\n"
            "        hbg_%s_%s_net_receive_kernel(&blk, j, 0, w, ev[e].t);\n    }\n}\n",
            id, m, n_weight > 0 ? n_weight : 1, id, m, id, m);
    fprintf(out,
            "\nstatic int hbgl_%s_%s_net_receive(const hb_cat_run_t *run, const hb_cat_event_t "
            "*ev, int n,\n        int key, double dt, void *stream)\n{\n"
            "    if (n <= 0) return 0;\n"
            "    hbgw_%s_%s_net_receive<<<(unsigned)((n + 127) / 128), 128, 0, "
            "(cudaStream_t)stream>>>(run, ev, n, key,\n        dt);\n"
            "    return (int)cudaGetLastError();\n}\n",
            id, m, id, m);
}

/* A mechanism that sends itself events on CUDA (common/mech_abi.h's hb_cat_self_call_t): a thread
 * a call; NET_RECEIVE with the call's flag and vector (none: its own, (weight, 0, ...), after
 * NET_RECEIVE's INITIAL where init), and its WATCH check, each call's requests into out[p], as the
 * CPU engine's hb_cat_self_deliver and hb_cat_point_watch (common/cat_step.h). */
static void emit_cuda_self(FILE *out, const char *id, const char *m, int n_weight, int watch)
{
    fprintf(out,
            "\nstatic __global__ void hbgw_%s_%s_net_receive_self(const hb_cat_self_call_t *call, "
            "int n,\n        int key, double dt, hb_cat_sends_t *out)\n{\n"
            "    const int p = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
            "    if (p >= n || call[p].key != key) return;\n"
            "    const int j = call[p].inst;\n"
            "    hb_cat_block_t blk = call[p].lane->blk;\n"
            "    blk.ion = (hb_ion_block_t *)call[p].lane->ion;\n"
            "    blk.t = call[p].t;\n    blk.dt = dt;\n    blk.d = blk.rhs = NULL;\n"
            "    blk.netcon_w = call[p].netcon_w;\n"
            "    blk.netcon_next = call[p].netcon_next;\n"
            "    blk.netcon_first = call[p].netcon_next ? call[p].netcon_first : -1;\n"
            "    double own[%d] = {call[p].weight};\n"
            "    double *w = call[p].w ? call[p].w : own;\n"
            "    if (!call[p].w && call[p].init) hbg_%s_%s_net_init_kernel(&blk, j, 0, w, "
            "call[p].t);\n"
            "    out[p].n = 0;\n"
            "    hbg_%s_%s_net_receive_self_kernel(&blk, j, 0, w, call[p].t, call[p].flag, "
            "&out[p]);\n}\n",
            id, m, n_weight > 0 ? n_weight : 1, id, m, id, m);
    fprintf(out,
            "\nstatic int hbgl_%s_%s_net_receive_self(const hb_cat_self_call_t *call, int n, "
            "int key,\n        double dt, hb_cat_sends_t *out, void *stream)\n{\n"
            "    if (n <= 0) return 0;\n"
            "    hbgw_%s_%s_net_receive_self<<<(unsigned)((n + 127) / 128), 128, 0, "
            "(cudaStream_t)stream>>>(call, n,\n        key, dt, out);\n"
            "    return (int)cudaGetLastError();\n}\n",
            id, m, id, m);
    if (!watch) return;
    fprintf(out,
            "\nstatic __global__ void hbgw_%s_%s_watch(const hb_cat_self_call_t *call, int n, "
            "int key,\n        double dt, hb_cat_sends_t *out)\n{\n"
            "    const int p = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
            "    if (p >= n || call[p].key != key) return;\n"
            "    hb_cat_block_t blk = call[p].lane->blk;\n"
            "    blk.ion = (hb_ion_block_t *)call[p].lane->ion;\n"
            "    blk.t = call[p].t;\n    blk.dt = dt;\n    blk.d = blk.rhs = NULL;\n"
            "    out[p].n = 0;\n"
            "    hbg_%s_%s_watch_kernel(&blk, call[p].inst, 0, call[p].t, &out[p]);\n}\n",
            id, m, id, m);
    fprintf(out,
            "\nstatic int hbgl_%s_%s_watch(const hb_cat_self_call_t *call, int n, int key, "
            "double dt,\n        hb_cat_sends_t *out, void *stream)\n{\n"
            "    if (n <= 0) return 0;\n"
            "    hbgw_%s_%s_watch<<<(unsigned)((n + 127) / 128), 128, 0, "
            "(cudaStream_t)stream>>>(call, n, key,\n        dt, out);\n"
            "    return (int)cudaGetLastError();\n}\n",
            id, m, id, m);
}

static void emit_cuda(FILE *out, const char *id, const cat_file *files, int n)
{
    fprintf(out,
            "/* Generated by hinesbatch's NMODL code generator: the CUDA kernels of the "
            "catalogue %s and\n * their host launchers (common/mech_abi.h's hb_cat_cuda_t, "
            "docs/mechanisms.md section 6),\n * for the CUDA engine's split step. Compiled with "
            "nvcc -fmad=false. Do not edit. */\n"
            "#include <cuda_runtime.h>\n#include <stddef.h>\n\n"
            "extern \"C\" {\n#include \"common/mech_abi.h\"\n}\n"
            "#include \"hbg_%s_dispatch.h\"\n\n"
            "/* Lane s's view at t and dt; d and rhs kept for the current kernel only. */\n"
            "static __device__ __forceinline__ int hbgc_%s_view(const hb_cat_lane_t *lane, int s, "
            "double t,\n        double dt, int current, hb_cat_block_t *blk)\n{\n"
            "    *blk = lane[s].blk;\n    blk->ion = (hb_ion_block_t *)lane[s].ion;\n"
            "    blk->t = t;\n    blk->dt = dt;\n"
            "    if (!current) blk->d = blk->rhs = NULL;\n    return lane[s].n_inst;\n}\n",
            id, id, id);
    static const char *const kernels[] = {"init", "current", "state"};
    int index = 0;
    for (int i = 0; i < n; i++) {
        if (files[i].blocker) continue;
        const char *m = files[i].m->name;
        for (int k = 0; k < 3; k++) {
            fprintf(out,
                    "\nstatic __global__ void hbgw_%s_%s_%s(const hb_cat_lane_t *lane, int n, "
                    "double t, double dt)\n{\n"
                    "    const int s = (int)(blockIdx.x * blockDim.x + threadIdx.x);\n"
                    "    if (s >= n) return;\n    hb_cat_block_t blk;\n"
                    "    const int n_inst = hbgc_%s_view(lane, s, t, dt, %d, &blk);\n"
                    "    if (n_inst > 0) hbg_%s_%s_%s_kernel(&blk, 0, n_inst);\n}\n",
                    id, m, kernels[k], id, k == 1, id, m, kernels[k]);
            fprintf(out,
                    "\nstatic int hbgl_%s_%s_%s(const hb_cat_lane_t *lane, int n, double t, "
                    "double dt, void *stream)\n{\n"
                    "    if (n <= 0) return 0;\n"
                    "    hbgw_%s_%s_%s<<<(unsigned)((n + 127) / 128), 128, 0, "
                    "(cudaStream_t)stream>>>(lane, n, t, dt);\n"
                    "    return (int)cudaGetLastError();\n}\n",
                    id, m, kernels[k], id, m, kernels[k]);
        }
        if (files[i].m->n_net_receive_args >= 0) /* a point process's events */
            emit_cuda_events(out, id, m, files[i].m->n_net_receive_args);
        if (files[i].m->self_events)
            emit_cuda_self(out, id, m, files[i].m->n_net_receive_args, files[i].m->n_watch > 0);
        index++;
    }
    fprintf(out, "\nextern \"C\" __attribute__((visibility(\"hidden\"))) const hb_cat_cuda_t "
                 "hbgc_%s_cuda[] = {\n",
            id);
    for (int i = 0; i < n; i++)
        if (!files[i].blocker) {
            const char *m = files[i].m->name;
            fprintf(out, "    {hbgl_%s_%s_init, hbgl_%s_%s_current, hbgl_%s_%s_state, ", id, m, id,
                    m, id, m);
            if (files[i].m->n_net_receive_args >= 0)
                fprintf(out, "hbgl_%s_%s_net_receive, ", id, m);
            else
                fputs("NULL, ", out);
            if (files[i].m->self_events)
                fprintf(out, "hbgl_%s_%s_net_receive_self, ", id, m);
            else
                fputs("NULL, ", out);
            if (files[i].m->self_events && files[i].m->n_watch > 0)
                fprintf(out, "hbgl_%s_%s_watch},\n", id, m);
            else
                fputs("NULL},\n", out);
        }
    if (!index) fputs("    {NULL, NULL, NULL, NULL, NULL, NULL},\n", out);
    fputs("};\n", out);
}

hb_status_t hb_nmodl_emit_catalogue(const hb_nmodl_catalogue_opts_t *opts, const char *const *paths,
                                    int n_paths, const char *dir)
{
    if (!opts || !opts->name || !opts->symbol || !opts->generator || !dir || (!paths && n_paths) ||
        n_paths < 0)
        return hb_fail(HB_ERR_INVALID_VALUE, "hb_nmodl_emit_catalogue: a NULL argument");
    /* the catalogue's C name: its name with every other character than [A-Za-z0-9_] as _ */
    char id[128];
    size_t id_len = strlen(opts->name);
    if (id_len == 0 || id_len >= sizeof id)
        return hb_fail(HB_ERR_INVALID_VALUE,
                       "the catalogue name '%s'; expected 1 to %zu characters", opts->name,
                       sizeof id - 1);
    for (size_t i = 0; i <= id_len; i++) {
        const char ch = opts->name[i];
        id[i] = ch == 0 || (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                        (ch >= '0' && ch <= '9') || ch == '_'
                    ? ch
                    : '_';
    }
    cat_file *files = calloc((size_t)n_paths + 1, sizeof *files);
    if (!files) return hb_fail(HB_ERR_ALLOC, "out of memory");
    for (int i = 0; i < n_paths; i++) files[i].path = paths[i];
    qsort(files, (size_t)n_paths, sizeof *files, by_path);
    hb_status_t status = HB_SUCCESS;
    for (int i = 0; i < n_paths && status == HB_SUCCESS; i++) {
        status = load_file(&files[i]);
        if (status != HB_SUCCESS) break;
        if (files[i].blocker && opts->strict)
            status = hb_fail(HB_ERR_PARSE, "%s", files[i].blocker);
        for (int j = 0; j < i && status == HB_SUCCESS; j++)
            if (strcmp(files[j].m->name, files[i].m->name) == 0)
                status = hb_fail(HB_ERR_PARSE,
                                 "%s: the mechanism %s is also defined by %s; expected one file "
                                 "per mechanism name",
                                 files[i].path, files[i].m->name, files[j].path);
    }
    for (int i = 0; i < n_paths && status == HB_SUCCESS; i++)
        if (!files[i].blocker) status = emit_kernels(&files[i], id, dir);
    char path[4200], name[300];
    if (status == HB_SUCCESS) {
        snprintf(name, sizeof name, "hbg_%s_dispatch.h", id);
        FILE *out = open_out(dir, name, path, sizeof path);
        if (!out) {
            status = HB_ERR_IO;
        } else {
            emit_dispatch(out, id, files, n_paths);
            status = close_out(out, path);
        }
    }
    if (status == HB_SUCCESS && opts->cuda) {
        snprintf(name, sizeof name, "hbg_%s_cuda.cu", id);
        FILE *out = open_out(dir, name, path, sizeof path);
        if (!out) {
            status = HB_ERR_IO;
        } else {
            emit_cuda(out, id, files, n_paths);
            status = close_out(out, path);
        }
    }
    if (status == HB_SUCCESS) {
        snprintf(name, sizeof name, "hbg_%s_catalogue.c", id);
        FILE *out = open_out(dir, name, path, sizeof path);
        char *rows = NULL;
        size_t rows_len = 0;
        FILE *row = out ? open_memstream(&rows, &rows_len) : NULL;
        if (!out || !row) {
            if (out) fclose(out);
            status = out ? hb_fail(HB_ERR_ALLOC, "out of memory") : HB_ERR_IO;
        } else {
            int n_mech = 0;
            fprintf(out, "/* Generated by hinesbatch's NMODL code generator (");
            comment_text(out, opts->generator);
            fprintf(out, "): the catalogue\n * \"");
            comment_text(out, opts->name);
            fprintf(out, "\" from %d file%s. Do not edit.", n_paths, n_paths == 1 ? "" : "s");
            int left_out = 0;
            for (int i = 0; i < n_paths; i++) left_out += files[i].blocker != NULL;
            if (left_out)
                fprintf(out, "\n *\n * Left out: %d file%s the generator cannot translate yet:",
                        left_out, left_out == 1 ? "" : "s");
            for (int i = 0; i < n_paths; i++)
                if (files[i].blocker) {
                    fprintf(out, "\n *   ");
                    comment_text(out, files[i].blocker);
                }
            fprintf(out,
                    " */\n#include <math.h>\n#include <stddef.h>\n#include <string.h>\n\n"
                    "#include \"common/mech_abi.h\"\n#include \"hbg_%s_dispatch.h\"\n\n",
                    id);
            if (opts->cuda) /* hbg_<id>_cuda.cu's, linked into the same library, not exported */
                fprintf(out,
                        "extern const hb_cat_cuda_t hbgc_%s_cuda[] "
                        "__attribute__((visibility(\"hidden\")));\n\n",
                        id);
            for (int i = 0; i < n_paths; i++)
                if (!files[i].blocker) {
                    emit_descriptor(&(cat_out){id, out, opts->cuda, n_mech}, &files[i], row);
                    n_mech++;
                }
            fclose(row);
            if (n_mech)
                fprintf(out, "static const hb_cat_mech_t hbgd_%s_mech[] = {\n%s};\n\n", id, rows);
            free(rows);
            fprintf(out,
                    "static const hb_catalogue_t hbgd_%s_catalogue = {\n"
                    "    HB_CAT_ABI, sizeof(hb_cat_mech_t), ",
                    id);
            literal(out, opts->name);
            fputs(",\n    ", out);
            /* the generator, then the sources' hash: a catalogue rebuilt from changed .mod
             * files has another identity (hb_catalogue_identity, checkpoints) */
            char with_sources[600];
            snprintf(with_sources, sizeof with_sources, "%s; sources %016llx", opts->generator,
                     (unsigned long long)sources_hash(files, n_paths));
            literal(out, with_sources);
            fprintf(out, ",\n    %d, %s%s%s};\n\n", n_mech, n_mech ? "hbgd_" : "NULL",
                    n_mech ? id : "", n_mech ? "_mech" : "");
            fprintf(out,
                    "const hb_catalogue_t *%s(void);\nconst hb_catalogue_t *%s(void)\n{\n"
                    "    return &hbgd_%s_catalogue;\n}\n",
                    opts->symbol, opts->symbol, id);
            status = close_out(out, path);
        }
    }
    for (int i = 0; i < n_paths; i++) {
        if (files[i].c) nm_arena_free(&files[i].c->arena);
        free(files[i].c);
        free(files[i].text);
    }
    free(files);
    return status;
}
