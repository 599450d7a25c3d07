/* Units as dimensions: the exponents of m, kg, s, A and K. A mole is a number (6.022e23), as
 * in NEURON's units table, so molar is 1/volume and faraday a charge. Only the dimension is
 * compared, not the scale (docs/nmodl.md says what that covers). */
#include <stdio.h>
#include <string.h>

#include "nmodl/nmodl_internal.h"

enum { M_, KG, S_, A_, K_ };

typedef struct {
    const char *name;
    signed char e[NM_DIMS]; /* m kg s A K */
} unit_entry;

static const unit_entry builtin[] = {
    {"1", {0}},
    {"m", {1, 0, 0, 0, 0}},
    {"meter", {1, 0, 0, 0, 0}},
    {"metre", {1, 0, 0, 0, 0}},
    {"micron", {1, 0, 0, 0, 0}},
    {"g", {0, 1, 0, 0, 0}},
    {"gram", {0, 1, 0, 0, 0}},
    {"s", {0, 0, 1, 0, 0}},
    {"sec", {0, 0, 1, 0, 0}},
    {"second", {0, 0, 1, 0, 0}},
    {"A", {0, 0, 0, 1, 0}},
    {"amp", {0, 0, 0, 1, 0}},
    {"ampere", {0, 0, 0, 1, 0}},
    {"K", {0, 0, 0, 0, 1}},
    {"kelvin", {0, 0, 0, 0, 1}},
    {"degC", {0, 0, 0, 0, 1}},
    {"degK", {0, 0, 0, 0, 1}},
    {"mol", {0}},
    {"mole", {0}},
    {"liter", {3, 0, 0, 0, 0}},
    {"litre", {3, 0, 0, 0, 0}},
    {"l", {3, 0, 0, 0, 0}},
    {"L", {3, 0, 0, 0, 0}},
    {"molar", {-3, 0, 0, 0, 0}},
    {"M", {-3, 0, 0, 0, 0}},
    {"V", {2, 1, -3, -1, 0}},
    {"volt", {2, 1, -3, -1, 0}},
    {"ohm", {2, 1, -3, -2, 0}},
    {"S", {-2, -1, 3, 2, 0}},
    {"siemens", {-2, -1, 3, 2, 0}},
    {"mho", {-2, -1, 3, 2, 0}},
    {"C", {0, 0, 1, 1, 0}},
    {"coulomb", {0, 0, 1, 1, 0}},
    {"coul", {0, 0, 1, 1, 0}},
    {"faraday", {0, 0, 1, 1, 0}},
    {"F", {-2, -1, 4, 2, 0}},
    {"farad", {-2, -1, 4, 2, 0}},
    {"J", {2, 1, -2, 0, 0}},
    {"joule", {2, 1, -2, 0, 0}},
    {"W", {2, 1, -3, 0, 0}},
    {"watt", {2, 1, -3, 0, 0}},
    {"N", {1, 1, -2, 0, 0}},
    {"newton", {1, 1, -2, 0, 0}},
    {"Hz", {0, 0, -1, 0, 0}},
    {"hertz", {0, 0, -1, 0, 0}},
    {"pi", {0}},
    {"percent", {0}},
};

/* Prefixes, long ones first so that "milli" is not read as "m" + "illi". */
static const char *const prefixes[] = {
    "yotta", "zetta", "exa",   "peta", "tera", "giga",  "mega", "kilo",  "hecto", "deka", "deci",
    "centi", "milli", "micro", "nano", "pico", "femto", "atto", "zepto", "yocto", "k",    "M",
    "G",     "T",     "c",     "d",    "m",    "u",     "n",    "p",     "f",     "a"};

static int prefix_alone(const char *name)
{
    for (size_t k = 0; k < 20; k++)
        if (strcmp(name, prefixes[k]) == 0) return 1;
    return 0;
}

static nm_dim unit_dim(nm_ctx *c, const char *text, int line, int column, int depth);

static int lookup(nm_ctx *c, const char *name, int line, int column, int depth, nm_dim *out)
{
    for (int k = c->n_units - 1; k >= 0; k--)
        if (strcmp(c->units[k].name, name) == 0) {
            if (depth > 16)
                nm_error(c, line, column,
                         "the unit '%s' is defined in terms of itself; expected "
                         "a definition from known units",
                         name);
            *out = unit_dim(c, c->units[k].definition, c->units[k].line, c->units[k].column,
                            depth + 1);
            return 1;
        }
    for (size_t k = 0; k < sizeof builtin / sizeof *builtin; k++)
        if (strcmp(builtin[k].name, name) == 0) {
            out->known = 1;
            memcpy(out->e, builtin[k].e, sizeof out->e);
            return 1;
        }
    if (prefix_alone(name)) {
        *out = (nm_dim){1, {0}};
        return 1;
    }
    return 0;
}

static nm_dim dim_of(nm_ctx *c, const char *name, int line, int column, int depth)
{
    nm_dim d;
    if (lookup(c, name, line, column, depth, &d)) return d;
    const size_t n = strlen(name);
    /* a prefix first ("ms" is a millisecond), then plurals ("coulombs", "millivolts") */
    for (int plural = 0; plural < 2; plural++) {
        if (plural && (n < 2 || name[n - 1] != 's')) break;
        char stem[64];
        snprintf(stem, sizeof stem, "%.*s", (int)(plural ? n - 1 : n), name);
        if (plural && lookup(c, stem, line, column, depth, &d)) return d;
        for (size_t k = 0; k < sizeof prefixes / sizeof *prefixes; k++) {
            const size_t p = strlen(prefixes[k]);
            if (strlen(stem) > p && strncmp(stem, prefixes[k], p) == 0 &&
                lookup(c, stem + p, line, column, depth, &d))
                return d;
        }
    }
    nm_error(c, line, column,
             "unknown unit '%s'; expected a unit of NEURON's table (mV, mA/cm2, "
             "S/cm2, ms, mM, um, degC, ...) or one defined in UNITS",
             name);
}

static int is_alpha(int ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}
static int is_num(int ch) { return ch >= '0' && ch <= '9'; }

static nm_dim unit_dim(nm_ctx *c, const char *text, int line, int column, int depth)
{
    nm_dim total = {1, {0}};
    int denominator = 0;
    const char *p = text;
    while (*p) {
        const int ch = (unsigned char)*p;
        if (ch == ' ' || ch == '\t' || ch == '-' || ch == '*' || ch == '.') {
            p++;
        } else if (ch == '/') {
            denominator = 1;
            p++;
        } else if (is_num(ch)) { /* a factor: 1e-3, 1+8, 1-10 */
            while (is_num(*p) || *p == '.') p++;
            if ((*p == 'e' || *p == 'E' || *p == '+' || *p == '-') &&
                (is_num(p[1]) || ((p[1] == '+' || p[1] == '-') && is_num(p[2])))) {
                p += (*p == 'e' || *p == 'E') && (p[1] == '+' || p[1] == '-') ? 2 : 1;
                while (is_num(*p)) p++;
            }
        } else if (is_alpha(ch)) {
            const char *start = p;
            while (is_alpha(*p)) p++;
            char name[64];
            snprintf(name, sizeof name, "%.*s", (int)(p - start), start);
            int power = 1;
            if (*p == '^') p++;
            if (is_num(*p)) {
                power = 0;
                for (; is_num(*p); p++)
                    if (power < 100) power = power * 10 + (*p - '0');
            }
            const nm_dim d = dim_of(c, name, line, column, depth);
            for (int k = 0; k < NM_DIMS; k++) {
                int e = total.e[k] + (denominator ? -power : power) * d.e[k];
                total.e[k] = (signed char)(e > 100 ? 100 : e < -100 ? -100 : e);
            }
        } else {
            nm_error(c, line, column,
                     "unexpected character '%c' in the unit '%s'; expected unit "
                     "names, '/', exponents and numbers",
                     ch >= 0x21 && ch < 0x7f ? ch : '?', text);
        }
    }
    return total;
}

nm_dim nm_unit_dim(nm_ctx *c, const char *text, int line, int column)
{
    return unit_dim(c, text, line, column, 0);
}

int nm_dim_equal(nm_dim a, nm_dim b) { return memcmp(a.e, b.e, sizeof a.e) == 0; }

const char *nm_dim_string(nm_ctx *c, nm_dim d)
{
    static const char *const names[NM_DIMS] = {"m", "kg", "s", "A", "K"};
    char out[128] = "";
    size_t used = 0;
    for (int k = 0; k < NM_DIMS; k++)
        if (d.e[k]) {
            used +=
                (size_t)snprintf(out + used, sizeof out - used, "%s%s", used ? " " : "", names[k]);
            if (d.e[k] != 1) used += (size_t)snprintf(out + used, sizeof out - used, "^%d", d.e[k]);
        }
    return nm_printf(c, "%s", used ? out : "1 (dimensionless)");
}
