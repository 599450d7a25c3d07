/*
 * The one marker for arithmetic that the CPU backend and the CUDA kernels share (src/common/):
 * HB_HOSTDEV makes a function a host and device inline in CUDA C, and a host inline in C11,
 * always inlined so that constants of the caller (lane counts, widths) reach its loops and
 * the callers' target clones cover it. Loop pragmas and restrict follow the same split.
 */
#ifndef HB_COMMON_HOSTDEV_H
#define HB_COMMON_HOSTDEV_H

#if defined(__CUDACC__)
#define HB_HOSTDEV static __host__ __device__ __forceinline__
#define HB_RESTRICT __restrict__
#define HB_SIMD
#if defined(__CUDA_ARCH__)
#define HB_UNROLL _Pragma("unroll")
#define HB_ROLLED _Pragma("unroll 1")
#else
#define HB_UNROLL
#define HB_ROLLED
#endif
#else
#if defined(__GNUC__)
#define HB_HOSTDEV static inline __attribute__((always_inline))
#else
#define HB_HOSTDEV static inline
#endif
#define HB_RESTRICT restrict
#define HB_UNROLL
#define HB_ROLLED
#ifdef HB_HAVE_OPENMP
#define HB_SIMD _Pragma("omp simd")
#else
#define HB_SIMD
#endif
#endif

/* CPU functions whose loops are vector code: with GCC on x86-64 Linux AVX-512 and x86-64-v3
 * (AVX2 with FMA, for hb_exp's fma()) clones beside the default, picked at load time where the
 * CPU has them (src/cpu/sim_cpu.c's step_block has the x86-64-v3 one). No FMA contraction
 * (-ffp-contract=off): the same operations, so the same bits; AVX-512's scatters and masks
 * also vectorise the loops that index rows. */
#if !defined(__CUDACC__) && defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && \
    defined(__linux__)
#define HB_CPU_CLONES __attribute__((target_clones("avx512f", "arch=x86-64-v3", "default")))
#else
#define HB_CPU_CLONES
#endif

/* A struct's zero initialiser in C and in C++ (CUDA), neither warning of missing fields. */
#if defined(__cplusplus)
#define HB_ZERO_INIT {}
#else
#define HB_ZERO_INIT {0}
#endif

/* A variable that may be set and never read (generated code's LOCALs): no warning from GCC,
 * Clang or nvcc, which does not count a (void) cast as a read. */
#if defined(__GNUC__) || defined(__CUDACC__)
#define HB_UNUSED __attribute__((unused))
#else
#define HB_UNUSED
#endif

#endif
