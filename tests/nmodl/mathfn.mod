: Every math function of NMODL in one mechanism: the code generator writes those whose libm
: and CUDA results may differ as src/common/hb_math.h's (tests/nmodl_gen_compile.sh).
NEURON {
    SUFFIX mathfn
    RANGE a, y
}

PARAMETER {
    a = 0.5
}

ASSIGNED {
    y
}

BREAKPOINT {
    y = exp(a) + log(a) + log10(a) + pow(a, 2.5) + a^3 + sqrt(a) + fabs(a) + sin(a) + cos(a)
    y = y + tan(a) + asin(a) + acos(a) + atan(a) + atan2(a, 2) + sinh(a) + cosh(a) + tanh(a)
    y = y + floor(a) + ceil(a) + fmod(a, 0.3) + erf(a) + erfc(a) + pow(a, -2) + a^1.5
}
