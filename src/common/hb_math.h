/*
 * The math functions of generated mechanisms, the same bits on the CPU and the GPU.
 *
 * libm (glibc) and CUDA's math library are both accurate, but not identical: their pow and log
 * can differ in the last bit, and a mechanism that calls them is then no longer bitwise the
 * same on both backends. These are written once in plain C11 / CUDA C from + - * /, fma() and
 * comparisons alone, which IEEE 754 rounds identically everywhere (fma once, as the CPU's FMA
 * units, glibc's fma and the GPU's DFMA all do); both sides compile them without FMA
 * contraction (C: -std=c11 / -ffp-contract=off; CUDA: -fmad=false), so each operation is the
 * same rounding on both. No tables, no library calls and no
 * branches in the main paths (special values are selects), so the CPU's lane loops still
 * become vector code.
 *
 * Accuracy (tests/test_math.c measures it over wide ranges against long double and glibc):
 * hb_exp within 2 ulp; hb_log, hb_log10 and hb_powi within 0.500 ulp, hb_pow 0.57 ulp (normal
 * results; subnormal ones are rounded twice, 0.75), hb_sinh, hb_cosh and hb_tanh 0.59 ulp: nearly
 * correctly rounded, so log and pow give glibc's bits in almost every case. hb_pow follows C99
 * Annex F for zeros, infinities, NaN and negative bases (an integer exponent gives the signed
 * result, any other exponent NaN).
 *
 * Plain C11 and CUDA C (HB_HOSTDEV from src/common/hostdev.h).
 */
#ifndef HB_COMMON_HB_MATH_H
#define HB_COMMON_HB_MATH_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "common/hostdev.h"

HB_HOSTDEV uint64_t hb_double_bits(double x)
{
#ifdef __CUDA_ARCH__
    return (uint64_t)__double_as_longlong(x);
#else
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    return u;
#endif
}

HB_HOSTDEV double hb_bits_double(uint64_t u)
{
#ifdef __CUDA_ARCH__
    return __longlong_as_double((long long)u);
#else
    double x;
    memcpy(&x, &u, sizeof x);
    return x;
#endif
}

/* A loop of a known small count unrolled completely where GCC's size limits would not: inside
 * a caller's lane loop, a loop left would keep the lane loop from becoming vector code. */
#if defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define HB_UNROLL_FULL _Pragma("GCC unroll 8")
#else
#define HB_UNROLL_FULL
#endif

/* Quiet comparisons on the CPU: they cannot trap, so GCC turns them into
 * vector selects (an ordered < may signal on NaN, which blocks if-conversion). */
#ifdef __CUDA_ARCH__
#define HB_GT(a, b) ((a) > (b))
#define HB_LT(a, b) ((a) < (b))
#else
#define HB_GT(a, b) isgreater(a, b)
#define HB_LT(a, b) isless(a, b)
#endif

/* ------------------------------------------------------------------------ */
/* exp, vectorisable: no table, no library call, no branch                   */
/* ------------------------------------------------------------------------ */
/*
 * e^x within 2 ulp (tests/test_sim_engine.c measures it against libm over the
 * whole range). x = k ln2 + r with |r| <= ln2/2 (Cody-Waite, ln2 in two
 * parts: k ln2's high part is exact, so its subtraction is one fma()), e^r by its Taylor
 * series to r^13 (truncation below 2^-57; Horner's steps as fma(), a rounding each and half
 * the operations: 1.6x the throughput of the multiply-add pairs on the H200 host's AVX-512),
 * times 2^k as two exact powers of two, 2^k1 with k1 = k clamped to +-1000 and 2^(k - k1), so
 * that a subnormal result rounds once. k comes from the 1.5 * 2^52 trick, which needs no
 * rounding instruction, and is read as an integer from the same sum's low bits. Overflow gives
 * +inf, x below -745.14 gives 0, NaN stays NaN: x out of range only reaches the final selects.
 */
HB_HOSTDEV double hb_exp(double x)
{
    const double shift = 6755399441055744.0; /* 1.5 * 2^52 */
    const uint64_t shift_bits = 0x4338000000000000ULL;
    const double t = x * 1.4426950408889634 + shift;
    const double kd = t - shift; /* round(x / ln2) */
    const double r = fma(-kd, 0.6931471803691238, x) - kd * 1.9082149292705877e-10;
    double p = 1.6059043836821613e-10;
    p = fma(p, r, 2.08767569878681e-09);
    p = fma(p, r, 2.505210838544172e-08);
    p = fma(p, r, 2.755731922398589e-07);
    p = fma(p, r, 2.7557319223985893e-06);
    p = fma(p, r, 2.48015873015873e-05);
    p = fma(p, r, 0.0001984126984126984);
    p = fma(p, r, 0.001388888888888889);
    p = fma(p, r, 0.008333333333333333);
    p = fma(p, r, 0.041666666666666664);
    p = fma(p, r, 0.16666666666666666);
    p = fma(p, r, 0.5);
    p = fma(p, r, 1.0);
    p = fma(p, r, 1.0);
    /* Unsigned arithmetic: x out of range gives any k here without overflow. */
    const uint64_t k = hb_double_bits(t) - shift_bits;
    const uint64_t k1 = (int64_t)k < -1000 ? (uint64_t)-1000 : ((int64_t)k > 1000 ? 1000u : k);
    const double s1 = hb_bits_double((k1 + 1023u) << 52);
    const double s2 = hb_bits_double((k - k1 + 1023u) << 52);
    const double y = p * s1 * s2;
    return HB_GT(x, 709.782712893384) ? HUGE_VAL : (HB_LT(x, -745.1332191019412) ? 0.0 : y);
}

/* ------------------------------------------------------------------------ */
/* double-double arithmetic: a value as hi + lo, |lo| <= ulp(hi) / 2         */
/* ------------------------------------------------------------------------ */
typedef struct {
    double hi, lo;
} hb_dd_t;

/* a + b exactly (Knuth's two-sum, any order of magnitude). */
HB_HOSTDEV hb_dd_t hb_dd_two_sum(double a, double b)
{
    const double s = a + b, bb = s - a;
    const hb_dd_t r = {s, (a - (s - bb)) + (b - bb)};
    return r;
}

/* a + b exactly when |a| >= |b| or a == 0 (Dekker's fast two-sum). */
HB_HOSTDEV hb_dd_t hb_dd_fast_sum(double a, double b)
{
    const double s = a + b;
    const hb_dd_t r = {s, b - (s - a)};
    return r;
}

/* a * b exactly (Dekker's product by Veltkamp's split; |a|, |b| < 2^995, no FMA needed). */
HB_HOSTDEV hb_dd_t hb_dd_two_prod(double a, double b)
{
    const double split = 134217729.0; /* 2^27 + 1 */
    const double p = a * b;
    const double ca = split * a, ah = ca - (ca - a), al = a - ah;
    const double cb = split * b, bh = cb - (cb - b), bl = b - bh;
    const hb_dd_t r = {p, ((ah * bh - p) + ah * bl + al * bh) + al * bl};
    return r;
}

HB_HOSTDEV hb_dd_t hb_dd_add(hb_dd_t a, hb_dd_t b)
{
    const hb_dd_t s = hb_dd_two_sum(a.hi, b.hi);
    return hb_dd_fast_sum(s.hi, s.lo + (a.lo + b.lo));
}

HB_HOSTDEV hb_dd_t hb_dd_mul(hb_dd_t a, hb_dd_t b)
{
    const hb_dd_t p = hb_dd_two_prod(a.hi, b.hi);
    return hb_dd_fast_sum(p.hi, p.lo + (a.hi * b.lo + a.lo * b.hi));
}

/* n / d in double-double (one Newton correction of the quotient). */
HB_HOSTDEV hb_dd_t hb_dd_div(hb_dd_t n, hb_dd_t d)
{
    const double q1 = n.hi / d.hi;
    const hb_dd_t p = hb_dd_two_prod(q1, d.hi);
    const double r = (((n.hi - p.hi) - p.lo) + n.lo) - q1 * d.lo;
    return hb_dd_fast_sum(q1, r / d.hi);
}


/* ------------------------------------------------------------------------ */
/* log                                                                      */
/* ------------------------------------------------------------------------ */
/*
 * ln x for finite x > 0 (subnormals included) as a double-double, relative error below 2^-66:
 * x = 2^k m, m in [sqrt(1/2), sqrt(2)), s = (m - 1) / (m + 1) (|s| < 0.1716, kept as a
 * double-double), ln m = 2 atanh s = 2s + 2 s^3 P(s^2), P's series to s^24 (truncation below
 * 2^-70), its leading terms in double-double; k ln2 with ln2 in two parts, the first with 21
 * trailing zero bits so that k ln2_hi is exact.
 */
HB_HOSTDEV hb_dd_t hb_log_dd(double x)
{
    const int sub = HB_LT(x, 2.2250738585072014e-308); /* subnormal: scale by 2^54 first */
    const double xs = sub ? x * 18014398509481984.0 : x;
    const uint64_t bits = hb_double_bits(xs);
    const double m1 = hb_bits_double((bits & 0x000fffffffffffffULL) | 0x3ff0000000000000ULL);
    const int big = HB_GT(m1, 1.4142135623730951);
    const double m = big ? m1 * 0.5 : m1;
    const double k = (double)((int)(bits >> 52) - 1023 + big - (sub ? 54 : 0));
    const double f = m - 1.0; /* exact (Sterbenz) */
    const hb_dd_t t = hb_dd_two_sum(1.0, m);
    const double sh = f / t.hi;
    const hb_dd_t q = hb_dd_two_prod(sh, t.hi);
    const hb_dd_t s = {sh, (((f - q.hi) - q.lo) - sh * t.lo) / t.hi};
    const hb_dd_t z = hb_dd_mul(s, s); /* s^2 < 0.0295 */
    double w = 1.0 / 25.0;
    w = w * z.hi + 1.0 / 23.0;
    w = w * z.hi + 1.0 / 21.0;
    w = w * z.hi + 1.0 / 19.0;
    w = w * z.hi + 1.0 / 17.0;
    w = w * z.hi + 1.0 / 15.0;
    w = w * z.hi + 1.0 / 13.0;
    w = w * z.hi + 1.0 / 11.0;
    w = w * z.hi + 1.0 / 9.0;
    w = w * z.hi + 1.0 / 7.0;
    w = w * z.hi + 0.2;
    w = w * z.hi;
    /* P = 1/3 + w, 1/3 in two parts */
    const hb_dd_t third = {0.33333333333333331, 1.8503717077085943e-17};
    const hb_dd_t pw = {w, 0.0};
    const hb_dd_t P = hb_dd_add(third, pw);
    const hb_dd_t tail = hb_dd_mul(hb_dd_mul(s, z), P);
    const hb_dd_t two_s = {2.0 * s.hi, 2.0 * s.lo};
    const hb_dd_t two_tail = {2.0 * tail.hi, 2.0 * tail.lo};
    const hb_dd_t lnm = hb_dd_add(two_s, two_tail);
    const hb_dd_t kl = {k * 0.6931471803691238, k * 1.9082149292705877e-10};
    return hb_dd_add(kl, lnm);
}

/* Natural logarithm within 1 ulp: x < 0 or NaN gives NaN, +-0 gives -inf, +inf gives +inf. */
HB_HOSTDEV double hb_log(double x)
{
    const double xs = HB_GT(x, 0.0) && HB_LT(x, HUGE_VAL) ? x : 1.0;
    const double y = hb_log_dd(xs).hi;
    return x == 0.0 ? -HUGE_VAL : (HB_GT(x, 0.0) ? (HB_LT(x, HUGE_VAL) ? y : x) : (x != x ? x : NAN));
}

/* Decimal logarithm within 1 ulp (ln x / ln 10 in double-double): exact powers of ten give
 * their exponent; the special values as hb_log. */
HB_HOSTDEV double hb_log10(double x)
{
    const double xs = HB_GT(x, 0.0) && HB_LT(x, HUGE_VAL) ? x : 1.0;
    const hb_dd_t inv_ln10 = {0.43429448190325182, 1.0983196502167651e-17};
    const double y = hb_dd_mul(hb_log_dd(xs), inv_ln10).hi;
    return x == 0.0 ? -HUGE_VAL : (HB_GT(x, 0.0) ? (HB_LT(x, HUGE_VAL) ? y : x) : (x != x ? x : NAN));
}

/* ------------------------------------------------------------------------ */
/* pow                                                                      */
/* ------------------------------------------------------------------------ */
/*
 * e^(hi + lo) for |hi + lo| up to 800 (beyond: clamped) as m 2^k, m a double-double within
 * 2^-57 relative, 2^k = s1 s2 two exact powers of two: hi = k ln2 + r (Cody-Waite, exact),
 * r + lo - k ln2_lo as a double-double, e^r = 1 + r + r^2/2 + r^3 Q(r) with 1 + r + r^2/2
 * summed exactly and Q to r^10.
 */
typedef struct {
    hb_dd_t m;     /* not normalised: m.hi + m.lo is its value rounded */
    double s1, s2; /* 2^k = s1 s2 */
} hb_exp_parts_t;

HB_HOSTDEV hb_exp_parts_t hb_exp_parts(double hi, double lo)
{
    const double shift = 6755399441055744.0; /* 1.5 * 2^52 */
    const uint64_t shift_bits = 0x4338000000000000ULL;
    const int clamp = HB_GT(hi, 800.0) || HB_LT(hi, -800.0);
    const double h = HB_GT(hi, 800.0) ? 800.0 : (HB_LT(hi, -800.0) ? -800.0 : hi);
    const double l = clamp ? 0.0 : lo;
    const double kd = (h * 1.4426950408889634 + shift) - shift;
    const double rh = h - kd * 0.6931471803691238; /* exact: |kd| < 2^11 */
    const hb_dd_t r = hb_dd_two_sum(rh, l - kd * 1.9082149292705877e-10);
    const hb_dd_t r2 = hb_dd_two_prod(r.hi, r.hi);
    double q = 1.0 / 6227020800.0; /* 1/13! */
    q = q * r.hi + 1.0 / 479001600.0;
    q = q * r.hi + 1.0 / 39916800.0;
    q = q * r.hi + 1.0 / 3628800.0;
    q = q * r.hi + 1.0 / 362880.0;
    q = q * r.hi + 1.0 / 40320.0;
    q = q * r.hi + 1.0 / 5040.0;
    q = q * r.hi + 1.0 / 720.0;
    q = q * r.hi + 1.0 / 120.0;
    q = q * r.hi + 1.0 / 24.0;
    q = q * r.hi + 1.0 / 6.0;
    const double cubic = r.hi * r2.hi * q;
    const hb_dd_t a = hb_dd_two_sum(1.0, r.hi);
    const hb_dd_t b = hb_dd_two_sum(a.hi, 0.5 * r2.hi);
    const double k1 = (kd * 0.5 + shift) - shift, k2 = kd - k1;
    const hb_exp_parts_t out = {
        {b.hi, (a.lo + b.lo) + (0.5 * r2.lo + (cubic + (r.lo + r.lo * r.hi)))},
        hb_bits_double((hb_double_bits(k1 + shift) - shift_bits + 1023u) << 52),
        hb_bits_double((hb_double_bits(k2 + shift) - shift_bits + 1023u) << 52)};
    return out;
}

/* e^(hi + lo), rounded once for normal results: overflow gives +inf, underflow 0 (subnormals
 * rounded twice: within 1 ulp). */
HB_HOSTDEV double hb_exp_dd(double hi, double lo)
{
    const hb_exp_parts_t e = hb_exp_parts(hi, lo);
    return (e.m.hi + e.m.lo) * e.s1 * e.s2;
}

/*
 * x^y within 1 ulp: e^(y ln|x|) with ln|x| a double-double (hb_log_dd), y ln|x| a
 * double-double (Dekker's product), and hb_exp_dd. A negative x with an integer y gives the
 * signed result (odd y: negative), with any other finite y NaN. Zeros, infinities and NaN as
 * C99 Annex F: x^0 = 1 and 1^y = 1 even for NaN, (-1)^+-inf = 1, 0^y<0 = inf (signed for odd
 * y), inf^y and x^+-inf by |x| against 1.
 */
HB_HOSTDEV double hb_pow(double x, double y)
{
    const double ax = fabs(x), ay = fabs(y);
    const double two52 = 4503599627370496.0;
    /* y an integer, and odd: |y| >= 2^52 is an integer, >= 2^53 even */
    const double yr = HB_LT(ay, two52) ? (ay + two52) - two52 : ay;
    const int y_int = yr == ay;
    const double yp = HB_LT(ay, two52) ? ay + two52 : ay;
    const int y_odd = y_int && HB_LT(ay, 2.0 * two52) && (hb_double_bits(yp) & 1u);
    const int x_fin = HB_GT(ax, 0.0) && HB_LT(ax, HUGE_VAL);
    /* the main path, on safe operands where x or y is special */
    const double xs = x_fin ? ax : 1.0;
    const double ys = HB_GT(ay, 1.8446744073709552e19) ? (HB_LT(y, 0.0) ? -1.8446744073709552e19 : 1.8446744073709552e19)
                                                      : (ay == ay ? y : 0.0);
    const hb_dd_t L = hb_log_dd(xs);
    const hb_dd_t p = hb_dd_two_prod(ys, L.hi);
    const hb_dd_t yl = hb_dd_fast_sum(p.hi, p.lo + ys * L.lo);
    const double e = hb_exp_dd(yl.hi, yl.lo);
    const int x_neg = (int)(hb_double_bits(x) >> 63); /* -0 included */
    const double inf = HUGE_VAL;
    const double odd_inf = x_neg ? -inf : inf, odd_zero = x_neg ? -0.0 : 0.0;
    /* special values, the strongest last */
    const double at_zero = HB_LT(y, 0.0) ? (y_odd ? odd_inf : inf) : (y_odd ? odd_zero : 0.0);
    const double at_inf = HB_LT(y, 0.0) ? (y_odd ? odd_zero : 0.0) : (y_odd ? odd_inf : inf);
    const double at_yinf = ax == 1.0 ? 1.0 : ((HB_LT(ax, 1.0) == HB_GT(y, 0.0)) ? 0.0 : inf);
    double r = x_neg && y_odd ? -e : e;
    r = x_neg && !y_int ? NAN : r;
    r = ax == inf ? at_inf : r;
    r = ax == 0.0 ? at_zero : r;
    r = ay == inf ? at_yinf : r;
    r = (x != x) || (y != y) ? x + y : r;
    r = x == 1.0 || y == 0.0 ? 1.0 : r;
    return r;
}

/*
 * x^n for an integer n (|n| <= 64: the generator's `x^2`, `m^4`, `pow(x, 3)` with a literal
 * exponent), nearly correctly rounded at a fraction of hb_pow's cost: binary powering in
 * double-double, 1/x^|n| for n < 0, rounded once (x^2 is x * x exactly). Where Dekker's split
 * overflows (|x| > 2^995) or x is 0, infinite or NaN, the plain product, which then gives the
 * right infinity, zero or NaN; x^0 = 1 for every x, as pow.
 */
HB_HOSTDEV double hb_powi(double x, int n)
{
    const unsigned m = (unsigned)(n < 0 ? -n : n);
    hb_dd_t r = {1.0, 0.0}, b = {x, 0.0};
    double plain = 1.0;
    int have = 0; /* r holds a factor */
    if (m < 128u) {
        /* The same operations over a fixed count of bits (squarings past the highest set bit
         * change only b, no longer read): with n a literal (the generated x^2) the loop unrolls
         * away, and the caller's lane loop stays vector code (a loop of unknown count inside
         * it kept GCC from vectorising K_Tst's, K_Pst's and allen's K_T's states). */
        HB_UNROLL_FULL
        for (unsigned i = 0; i < 7u; i++) {
            if (i) b = hb_dd_mul(b, b);
            if ((m >> i) & 1u) {
                r = have ? hb_dd_mul(r, b) : b;
                have = 1;
            }
        }
    } else {
        for (unsigned k = m, i = 0; k; k >>= 1, i++) {
            if (i) b = hb_dd_mul(b, b);
            if (k & 1u) {
                r = have ? hb_dd_mul(r, b) : b;
                have = 1;
            }
        }
    }
    for (unsigned k = 0; k < m; k++) plain *= x;
    const hb_dd_t one = {1.0, 0.0};
    const double dd = n < 0 ? hb_dd_div(one, r).hi : r.hi;
    const double direct = n < 0 ? 1.0 / plain : plain;
    return dd == dd && dd != 0.0 && HB_LT(fabs(dd), HUGE_VAL) ? dd : direct;
}

/* ------------------------------------------------------------------------ */
/* sinh, cosh, tanh                                                         */
/* ------------------------------------------------------------------------ */
/* e^a and e^-a as double-doubles for 2^-20 <= a <= 22 (e^a's 2^k exact on both parts). */
HB_HOSTDEV void hb_exp_pair(double a, hb_dd_t *e, hb_dd_t *inv)
{
    const hb_exp_parts_t p = hb_exp_parts(a, 0.0);
    const hb_dd_t m = hb_dd_fast_sum(p.m.hi, p.m.lo);
    const double s = p.s1 * p.s2;
    const hb_dd_t ea = {m.hi * s, m.lo * s};
    const hb_dd_t one = {1.0, 0.0};
    *e = ea;
    *inv = hb_dd_div(one, ea);
}

/*
 * sinh, cosh and tanh within 1 ulp (test_math measures them against long double): for
 * 2^-20 <= |x| < 22, (e^a -+ e^-a) / 2 and their quotient in double-double, rounded once; below,
 * x + x^3/6, 1 + x^2/2 and x - x^3/3 (the next terms below 2^-80 relative); from 22 on,
 * e^(a - ln2) (e^-a below 2^-63 relative), so that sinh and cosh overflow only past
 * 710.4758, and tanh 1. Odd ones keep the sign (and -0); NaN stays NaN.
 */
HB_HOSTDEV double hb_sinh(double x)
{
    const double a = fabs(x);
    const double ac = HB_LT(a, 22.0) ? (HB_GT(a, 9.5367431640625e-07) ? a : 1.0) : 1.0;
    hb_dd_t e, inv;
    hb_exp_pair(ac, &e, &inv);
    const hb_dd_t minus = {-inv.hi, -inv.lo};
    const double mid = 0.5 * hb_dd_add(e, minus).hi;
    const double small = a + a * (a * a / 6.0);
    const double big = hb_exp_dd(HB_LT(a, 800.0) ? a - 0.6931471803691238 : 800.0, -1.9082149292705877e-10);
    const double r = HB_LT(a, 22.0) ? (HB_GT(a, 9.5367431640625e-07) ? mid : small) : big;
    return a != a ? x : (HB_LT(x, 0.0) ? -r : (x == 0.0 ? x : r));
}

HB_HOSTDEV double hb_cosh(double x)
{
    const double a = fabs(x);
    const double ac = HB_LT(a, 22.0) ? (HB_GT(a, 9.5367431640625e-07) ? a : 1.0) : 1.0;
    hb_dd_t e, inv;
    hb_exp_pair(ac, &e, &inv);
    const double mid = 0.5 * hb_dd_add(e, inv).hi;
    const double small = 1.0 + 0.5 * a * a;
    const double big = hb_exp_dd(HB_LT(a, 800.0) ? a - 0.6931471803691238 : 800.0, -1.9082149292705877e-10);
    const double r = HB_LT(a, 22.0) ? (HB_GT(a, 9.5367431640625e-07) ? mid : small) : big;
    return a != a ? x : r;
}

HB_HOSTDEV double hb_tanh(double x)
{
    const double a = fabs(x);
    const double ac = HB_LT(a, 22.0) ? (HB_GT(a, 9.5367431640625e-07) ? a : 1.0) : 1.0;
    hb_dd_t e, inv;
    hb_exp_pair(ac, &e, &inv);
    const hb_dd_t minus = {-inv.hi, -inv.lo};
    const double mid = hb_dd_div(hb_dd_add(e, minus), hb_dd_add(e, inv)).hi;
    const double small = a - a * (a * a / 3.0);
    const double r = HB_LT(a, 22.0) ? (HB_GT(a, 9.5367431640625e-07) ? mid : small) : 1.0;
    return a != a ? x : (HB_LT(x, 0.0) ? -r : (x == 0.0 ? x : r));
}

#endif
