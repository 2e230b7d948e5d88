/* The one CPU-feature probe: what the x86 CPU running tconv offers (AVX2, FMA, F16C, AVX-512F),
 * detected once (CPUID through the compiler's builtins, with the OS's support for the wider
 * register state), cached, and asked by every kernel and the GEMM that picks a code path by ISA.
 * Elsewhere than x86 with GCC/Clang every feature is absent and the portable code runs.
 *
 * A test can override the answer (tc_cpu_features_override) to force the portable paths and
 * check that they give what the wide ones give. */
#ifndef TC_RUNTIME_CPU_FEATURES_H
#define TC_RUNTIME_CPU_FEATURES_H

#include <stdbool.h>

typedef enum tc_cpu_feature {
    TC_CPU_AVX2 = 1u << 0,    /* AVX2 and FMA together: the TC_TARGET_AVX2 copies use both */
    TC_CPU_F16C = 1u << 1,    /* F16C (with AVX): 8 float16 conversions an instruction */
    TC_CPU_AVX512F = 1u << 2, /* AVX-512F: TC_TARGET_AVX512 copies, 16 floats or 8 doubles */
} tc_cpu_feature;

/* The features present (tc_cpu_feature bits): probed on the first call, then cached; threads
 * racing on the first call all store the same value. */
unsigned tc_cpu_features(void);
/* Tests only: the features reported from now on are the detected ones masked by `mask`
 * (0: the portable paths everywhere); tc_cpu_features_restore() undoes it. Call it while no
 * session runs: sessions planned before it may keep what they chose. */
void tc_cpu_features_override(unsigned mask);
void tc_cpu_features_restore(void);

static inline bool tc_cpu_has_avx2(void) {
    return (tc_cpu_features() & TC_CPU_AVX2) != 0;
}
static inline bool tc_cpu_has_avx512(void) {
    return (tc_cpu_features() & TC_CPU_AVX512F) != 0;
}
static inline bool tc_cpu_has_f16c(void) {
    return (tc_cpu_features() & TC_CPU_F16C) != 0;
}

/* A loop compiled again for AVX2 + FMA or AVX-512F (GCC/Clang on x86; elsewhere the copies are
 * baseline ones): a static function marked TC_TARGET_AVX2 / TC_TARGET_AVX512 whose body is an
 * always-inline helper, called when tc_cpu_has_avx2() / tc_cpu_has_avx512(). The baseline
 * x86-64 build vectorizes 4 floats wide. */
#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TC_TARGET_AVX2 __attribute__((target("avx2,fma")))
#if defined(__clang__) /* clang knows no prefer-vector-width target option (and needs none) */
#define TC_TARGET_AVX512 __attribute__((target("avx512f")))
#else
#define TC_TARGET_AVX512 __attribute__((target("avx512f,prefer-vector-width=512")))
#endif
#else
#define TC_TARGET_AVX2
#define TC_TARGET_AVX512
#endif

/* Defines `linkage void name params`, which runs `body args` (body: an always-inline function
 * of the same parameters; args: their names) compiled for AVX-512F, for AVX2 + FMA or for the
 * baseline, whichever this CPU has: the three copies and their one dispatch. linkage is
 * `static` or empty. */
#define TC_ISA_DISPATCH(linkage, name, body, params, args)                                         \
    TC_TARGET_AVX512 static void name##_avx512 params {                                            \
        body args;                                                                                 \
    }                                                                                              \
    TC_TARGET_AVX2 static void name##_avx2 params {                                                \
        body args;                                                                                 \
    }                                                                                              \
    linkage void name params {                                                                     \
        if (tc_cpu_has_avx512())                                                                   \
            name##_avx512 args;                                                                    \
        else if (tc_cpu_has_avx2())                                                                \
            name##_avx2 args;                                                                      \
        else                                                                                       \
            body args;                                                                             \
    }

#endif
