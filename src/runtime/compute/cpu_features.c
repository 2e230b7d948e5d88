/* The one CPU-feature probe (cpu_features.h). */
#include "runtime/compute/cpu_features.h"

#include <stdatomic.h>

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TC_CPU_X86 1
#include <cpuid.h>
#else
#define TC_CPU_X86 0
#endif

/* Bit 31: probed. The rest: tc_cpu_feature bits. */
#define PROBED (1u << 31)

static atomic_uint detected = 0;
static atomic_uint mask = ~0u; /* tc_cpu_features_override */

/* __builtin_cpu_supports checks the OS's support for the YMM/ZMM state too; clang's knows no
 * "f16c", so that one is read from CPUID leaf 1 (and asks for AVX, whose state it needs). */
static unsigned probe(void) {
    unsigned found = 0;
#if TC_CPU_X86
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        found |= TC_CPU_AVX2;
    if (__builtin_cpu_supports("avx512f"))
        found |= TC_CPU_AVX512F;
    unsigned eax, ebx, ecx, edx;
    if (__builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) && (ecx & bit_F16C))
        found |= TC_CPU_F16C;
#endif
    return found;
}

unsigned tc_cpu_features(void) {
    unsigned known = atomic_load_explicit(&detected, memory_order_relaxed);
    if (!(known & PROBED)) {
        known = probe() | PROBED;
        atomic_store_explicit(&detected, known, memory_order_relaxed);
    }
    return known & ~PROBED & atomic_load_explicit(&mask, memory_order_relaxed);
}

void tc_cpu_features_override(unsigned keep) {
    atomic_store(&mask, keep);
}

void tc_cpu_features_restore(void) {
    atomic_store(&mask, ~0u);
}
