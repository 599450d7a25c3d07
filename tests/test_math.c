/*
 * The generated mechanisms' own math functions (src/common/hb_math.h), which the GPU computes
 * bit for bit as the CPU does (tests/gpu/test_gpu_catalogue.cu checks the kernels that call
 * them): hb_log, hb_log10 and hb_pow against glibc over wide ranges, within 1 ulp (both are
 * nearly correctly rounded: where they differ, one of them is half an ulp off), and the special
 * cases NEURON models hit: integer and zero exponents, negative bases, powers of ten, tiny
 * and huge arguments, C99 Annex F's zeros, infinities and NaN, the results bitwise glibc's.
 * hb_sinh, hb_cosh and hb_tanh within 1 ulp of the exact value (glibc's are within 2).
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "common/hb_math.h"

static double ulp_of(double b)
{
    return b != 0.0 ? fabs(nextafter(fabs(b), INFINITY) - fabs(b)) : DBL_TRUE_MIN;
}

static double ulp_diff(double a, double b)
{
    if (a == b || (isnan(a) && isnan(b))) return 0.0;
    if (isnan(a) || isnan(b) || isinf(a) || isinf(b)) return INFINITY;
    const double u = b != 0.0 ? fabs(nextafter(b, INFINITY) - b) : DBL_TRUE_MIN;
    return fabs(a - b) / u;
}

static uint64_t rng = 0x9e3779b97f4a7c15ULL;
static double uniform(void) /* [0, 1) */
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

/* same value and sign, or both NaN */
static int same(double a, double b)
{
    return (isnan(a) && isnan(b)) || (a == b && signbit(a) == signbit(b));
}

/* |ours - exact| in ulps of the exact value, the exact value from long double (x86: 64 bits) */
static double ulp_error(double ours, long double exact)
{
    const double rounded = (double)exact;
    if (isinf(ours) || isinf(rounded)) return ours == rounded ? 0.0 : INFINITY;
    return (double)(fabsl((long double)ours - exact) / (long double)ulp_of(rounded));
}

typedef struct {
    double worst, at_x, at_y; /* from glibc */
    double exact_worst;       /* from the long double value */
    double exact_normal;      /* the same, normal results */
    long differ, n;
} tally_t;

static void count(tally_t *t, double ours, double libm, long double exact, double x, double y)
{
    const double e = ulp_diff(ours, libm);
    t->n++;
    t->differ += ours != libm;
    if (e > t->worst) {
        t->worst = e;
        t->at_x = x;
        t->at_y = y;
    }
    if (LDBL_MANT_DIG >= 64) {
        const double u = ulp_error(ours, exact);
        t->exact_worst = fmax(t->exact_worst, u);
        if (fabs(ours) >= DBL_MIN) t->exact_normal = fmax(t->exact_normal, u);
    }
}

static void test_log(void)
{
    tally_t ln = {0}, l10 = {0};
    for (int i = 0; i < 400000; i++) {
        double x;
        switch (i % 5) {
        case 0: x = exp(-744.0 + 1453.0 * uniform()); break;   /* the whole normal range */
        case 1: x = 0.5 + 1.5 * uniform(); break;               /* near 1: the reduction's edges */
        case 2: x = 1.0 + (uniform() - 0.5) * 1e-7; break;      /* ln x ~ x - 1 */
        case 3: x = DBL_TRUE_MIN * (1.0 + 4e15 * uniform()); break; /* subnormals */
        default: x = 10.0 * uniform() / 3.0; break;             /* tau ratios (Exp2Syn) */
        }
        count(&ln, hb_log(x), log(x), logl(x), x, 0.0);
        count(&l10, hb_log10(x), log10(x), log10l(x), x, 0.0);
    }
    printf("hb_log: max %.3f ulp from the exact value, %.3f from glibc (at x = %.17g), %ld of %ld "
           "differ\n", ln.exact_worst, ln.worst, ln.at_x, ln.differ, ln.n);
    printf("hb_log10: max %.3f ulp from the exact value, %.3f from glibc (at x = %.17g), %ld of "
           "%ld differ\n", l10.exact_worst, l10.worst, l10.at_x, l10.differ, l10.n);
    /* both nearly correctly rounded; glibc's log10 is within 2 ulp */
    CHECKF(ln.exact_worst <= 0.51 && l10.exact_worst <= 0.51, "hb_log: %.3f ulp, hb_log10 %.3f ulp",
           ln.exact_worst, l10.exact_worst);
    CHECKF(ln.worst <= 1.0, "hb_log: %.3f ulp at x = %.17g", ln.worst, ln.at_x);
    CHECKF(l10.worst <= 2.0, "hb_log10: %.3f ulp at x = %.17g", l10.worst, l10.at_x);
    CHECKF(ln.differ * 100 < ln.n, "hb_log differs from glibc in %ld of %ld", ln.differ, ln.n);
    /* exact cases */
    CHECK(hb_log(1.0) == 0.0 && !signbit(hb_log(1.0)));
    CHECK(hb_log(2.0) == log(2.0) && hb_log(DBL_MAX) == log(DBL_MAX));
    CHECK(hb_log(DBL_TRUE_MIN) == log(DBL_TRUE_MIN) && hb_log(DBL_MIN) == log(DBL_MIN));
    int powers = 0;
    double ten = 1.0;
    for (int k = 0; k <= 22; k++, ten *= 10.0) { /* 10^k exact up to 10^22 */
        powers += hb_log10(ten) == (double)k;
        powers += ulp_diff(hb_log10(1.0 / ten), -(double)k) <= 1.0; /* 10^-k is not exact */
    }
    CHECKF(powers == 46, "log10 of powers of ten: %d of 46 exact", powers);
    const double special[] = {0.0, -0.0, -1.0, -DBL_MIN, INFINITY, -INFINITY, NAN};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) {
        CHECKF(same(hb_log(special[i]), log(special[i])), "hb_log(%g) = %g, glibc %g",
               special[i], hb_log(special[i]), log(special[i]));
        CHECKF(same(hb_log10(special[i]), log10(special[i])), "hb_log10(%g) = %g, glibc %g",
               special[i], hb_log10(special[i]), log10(special[i]));
    }
}

static void test_pow(void)
{
    tally_t t = {0};
    for (int i = 0; i < 600000; i++) {
        double x, y;
        switch (i % 7) {
        case 0: x = exp(-700.0 + 1400.0 * uniform()); y = (uniform() - 0.5) * 4.0; break;
        case 1: x = 0.5 + 2.0 * uniform(); y = (uniform() - 0.5) * 2000.0; break; /* large y */
        case 2: x = 1.1 * uniform(); y = (double)(int)(20.0 * uniform()); break;  /* m^4 */
        case 3: x = -10.0 * uniform(); y = (double)((int)(40.0 * uniform()) - 20); break;
        case 4: x = 2.3; y = (uniform() - 0.5) * 10.0; break;     /* q10^((celsius - 21)/10) */
        case 5: x = 1e-3 * uniform() / 5e-5; y = 4.8; break;      /* (0.00043 / cai)^4.8 */
        default: x = exp(-20.0 + 40.0 * uniform()); y = (uniform() - 0.5) * 60.0; break;
        }
        count(&t, hb_pow(x, y), pow(x, y), powl(x, y), x, y);
    }
    printf("hb_pow: max %.3f ulp from the exact value (%.3f for normal results), %.3f from glibc "
           "(at %.17g ^ %.17g), %ld of %ld differ\n", t.exact_worst, t.exact_normal, t.worst,
           t.at_x, t.at_y, t.differ, t.n);
    /* subnormal results are rounded twice */
    CHECKF(t.exact_worst <= 1.0 && t.exact_normal <= 0.6, "hb_pow: %.3f ulp from the exact value",
           t.exact_worst);
    CHECKF(t.worst <= 1.0, "hb_pow: %.3f ulp at %.17g ^ %.17g", t.worst, t.at_x, t.at_y);
    CHECKF(t.differ * 100 < t.n, "hb_pow differs from glibc in %ld of %ld", t.differ, t.n);
    /* integer exponents: exact results stay exact, the sign follows the parity */
    int exact = 0, n_exact = 0;
    for (int k = -20; k <= 33; k++) {
        const double three = pow(3.0, k), two = ldexp(1.0, k);
        exact += hb_pow(3.0, k) == three && hb_pow(-3.0, k) == (k % 2 ? -three : three);
        exact += hb_pow(2.0, k) == two && hb_pow(-2.0, k) == (k % 2 ? -two : two);
        exact += hb_pow(-1.0, k) == (k % 2 ? -1.0 : 1.0);
        n_exact += 3;
    }
    exact += hb_pow(2.0, -1074.0) == DBL_TRUE_MIN && hb_pow(2.0, 1023.0) == ldexp(1.0, 1023);
    exact += hb_pow(10.0, 22.0) == 1e22 && hb_pow(0.25, 0.5) == 0.5 && hb_pow(16.0, 0.25) == 2.0;
    n_exact += 2;
    CHECKF(exact == n_exact, "exact integer powers: %d of %d", exact, n_exact);
    /* x^1 = x, x^0 = 1, x^2 within 1 ulp of x * x (correctly rounded) */
    int ones = 0;
    double sq = 0.0;
    for (int i = 0; i < 10000; i++) {
        const double x = (uniform() - 0.5) * 200.0;
        ones += hb_pow(x, 1.0) == x && hb_pow(x, 0.0) == 1.0 && hb_pow(x, -0.0) == 1.0;
        sq = fmax(sq, ulp_diff(hb_pow(x, 2.0), x * x));
    }
    CHECKF(ones == 10000 && sq <= 1.0, "x^1, x^0: %d of 10000; x^2 %.2f ulp from x*x", ones, sq);
    /* C99 Annex F: every pair of these bitwise glibc's where one is special (zero, one,
     * infinity, NaN) or the result is; within 1 ulp elsewhere ((2^52 + 1)^2.5 is within 4e-16
     * ulp of a midpoint: glibc rounds it down, hb_pow correctly up) */
    const double v[] = {0.0,  -0.0, 1.0,  -1.0, 0.5,      -0.5,      2.0,     -2.0,   3.0, -3.0,
                        2.5,  -2.5, 1e-310, -1e-310, 1e308, -1e308, INFINITY, -INFINITY, NAN,
                        0x1p53, -0x1p53, 0x1p53 + 2.0, 0x1p52 + 1.0, -(0x1p52 + 1.0), 1e300};
    const int n = (int)(sizeof v / sizeof *v);
    int agree = 0;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            const double a = hb_pow(v[i], v[j]), b = pow(v[i], v[j]);
            const int special = !isfinite(v[i]) || !isfinite(v[j]) || fabs(v[i]) == 1.0 ||
                                v[i] == 0.0 || v[j] == 0.0 || !isfinite(b) || b == 0.0;
            const int ok = same(a, b) || (!special && signbit(a) == signbit(b) && ulp_diff(a, b) <= 1.0);
            agree += same(a, b);
            CHECKF(ok, "hb_pow(%g, %g) = %a, glibc %a", v[i], v[j], a, b);
        }
    printf("hb_pow: %d of %d special pairs bitwise glibc's\n", agree, n * n);
}

/* hb_powi: the generator's x^n for a literal integer n, nearly correctly rounded */
static void test_powi(void)
{
    tally_t t = {0};
    long same_as_pow = 0, n_cases = 0;
    for (int i = 0; i < 200000; i++) {
        const int n = (int)(uniform() * 129.0) - 64;
        double x;
        switch (i % 3) {
        case 0: x = (uniform() - 0.5) * 4.0; break;          /* gates, rates */
        case 1: x = exp((uniform() - 0.5) * 20.0); break;
        default: x = exp((uniform() - 0.5) * 1400.0 / (abs(n) + 1)); break; /* to the limits */
        }
        const double a = hb_powi(x, n);
        count(&t, a, pow(x, n), powl(x, n), x, n);
        same_as_pow += a == hb_pow(x, n);
        n_cases++;
    }
    printf("hb_powi: max %.3f ulp from the exact value (%.3f for normal results), %.3f from glibc "
           "(at %.17g ^ %g), %ld of %ld differ; hb_pow's bits in %ld\n", t.exact_worst,
           t.exact_normal, t.worst, t.at_x, t.at_y, t.differ, t.n, same_as_pow);
    CHECKF(t.exact_worst <= 1.0 && t.exact_normal <= 0.51, "hb_powi: %.3f ulp", t.exact_worst);
    CHECKF(t.worst <= 1.0 && t.differ * 100 < t.n, "hb_powi: %.3f ulp from glibc, %ld differ",
           t.worst, t.differ);
    int sq = 0;
    for (int i = 0; i < 10000; i++) {
        const double x = (uniform() - 0.5) * 1e3;
        sq += hb_powi(x, 2) == x * x && hb_powi(x, 1) == x && hb_powi(x, 0) == 1.0;
    }
    CHECKF(sq == 10000, "x^2 = x * x, x^1 = x, x^0 = 1: %d of 10000", sq);
    const double v[] = {0.0, -0.0, 1.0, -1.0, 2.0, -3.0, 1e300, -1e300, 1e-300, DBL_MAX,
                        DBL_TRUE_MIN, INFINITY, -INFINITY, NAN};
    const int ns[] = {0, 1, 2, 3, 4, -1, -2, -3, 64, -64};
    int agree = 0, total = 0;
    for (size_t i = 0; i < sizeof v / sizeof *v; i++)
        for (size_t j = 0; j < sizeof ns / sizeof *ns; j++, total++) {
            const double a = hb_powi(v[i], ns[j]), b = pow(v[i], ns[j]);
            const int ok = same(a, b) || (isfinite(b) && b != 0.0 && ulp_diff(a, b) <= 1.0 &&
                                          signbit(a) == signbit(b));
            agree += ok;
            CHECKF(ok, "hb_powi(%g, %d) = %a, glibc %a", v[i], ns[j], a, b);
        }
    printf("hb_powi: %d of %d special cases as glibc's\n", agree, total);
}

static void test_hyperbolic(void)
{
    tally_t t[3];
    memset(t, 0, sizeof t);
    for (int i = 0; i < 300000; i++) {
        double x;
        switch (i % 4) {
        case 0: x = (uniform() - 0.5) * 1430.0; break; /* to overflow and past */
        case 1: x = (uniform() - 0.5) * 4.0; break;
        case 2: x = (uniform() - 0.5) * 50.0; break;   /* across 22 */
        default: x = (uniform() - 0.5) * 1e-5; break;  /* across 2^-20 */
        }
        count(&t[0], hb_sinh(x), sinh(x), sinhl(x), x, 0.0);
        count(&t[1], hb_cosh(x), cosh(x), coshl(x), x, 0.0);
        count(&t[2], hb_tanh(x), tanh(x), tanhl(x), x, 0.0);
    }
    static const char *const names[] = {"hb_sinh", "hb_cosh", "hb_tanh"};
    for (int k = 0; k < 3; k++) {
        printf("%s: max %.3f ulp from the exact value, %.3f from glibc (at x = %.17g)\n",
               names[k], t[k].exact_worst, t[k].worst, t[k].at_x);
        /* glibc's are within 2 ulp, ours within 0.6 */
        CHECKF(t[k].exact_worst <= 1.0 && t[k].worst <= 3.0, "%s: %.3f ulp, %.3f from glibc",
               names[k], t[k].exact_worst, t[k].worst);
    }
    const double special[] = {0.0, -0.0, INFINITY, -INFINITY, NAN, 1e-300, -DBL_TRUE_MIN, 710.4, 710.5, -711.0};
    for (size_t i = 0; i < sizeof special / sizeof *special; i++) {
        const double x = special[i];
        const int s = same(hb_sinh(x), sinh(x)) || ulp_diff(hb_sinh(x), sinh(x)) <= 1.0;
        const int c = same(hb_cosh(x), cosh(x)) || ulp_diff(hb_cosh(x), cosh(x)) <= 1.0;
        CHECKF(s && c && same(hb_tanh(x), tanh(x)) && signbit(hb_sinh(x)) == signbit(sinh(x)),
               "x = %g: sinh %a (glibc %a), cosh %a (%a), tanh %a (%a)", x, hb_sinh(x), sinh(x),
               hb_cosh(x), cosh(x), hb_tanh(x), tanh(x));
    }
}

int main(void)
{
    test_log();
    test_pow();
    test_powi();
    test_hyperbolic();
    return check_summary("math");
}
