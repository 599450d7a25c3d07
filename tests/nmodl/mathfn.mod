: Every math function of NMODL in one mechanism: the code generator writes those whose libm
: and CUDA results may differ as src/common/hb_math.h's (tests/nmodl_gen_compile.sh); the
: constant expressions of the last line are folded, the ones of names (a, GLOBAL gq) are not.
NEURON {
    SUFFIX mathfn
    RANGE a, y
    GLOBAL gq
}

PARAMETER {
    a = 0.5
    gq = 3
}

ASSIGNED {
    y
}

BREAKPOINT {
    y = exp(a) + log(a) + log10(a) + pow(a, 2.5) + a^3 + sqrt(a) + fabs(a) + sin(a) + cos(a)
    y = y + tan(a) + asin(a) + acos(a) + atan(a) + atan2(a, 2) + sinh(a) + cosh(a) + tanh(a)
    y = y + floor(a) + ceil(a) + fmod(a, 0.3) + erf(a) + erfc(a) + pow(a, -2) + a^1.5
    y = y + 2.3^((34-21)/10) + exp(-1.5) + log(10) * 2 + pow(2, -3) + sqrt(2) + a^(1/2) + gq^2
}
