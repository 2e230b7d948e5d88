/* Bulk float16 <-> float conversions. With F16C (every AVX2 x86 and later) eight values convert
 * per instruction; the results are the bits of tc_half_to_float / tc_float_to_half: the
 * conversions are exact (widening) or round to nearest even (narrowing, the immediate rounding
 * mode, whatever MXCSR says), and the one place where the instructions and the scalar code
 * differ, NaN payloads (the scalar code keeps a half NaN's payload unquieted and narrows any
 * float NaN to the canonical quiet one), goes through the scalar code: a group of eight with a
 * NaN in it is converted one by one. */
#include "runtime/compute/convert.h"
#include "runtime/compute/cpu_features.h"

#if defined(__GNUC__) && (defined(__x86_64__) || defined(__i386__))
#define TC_HALF_X86 1
#include <immintrin.h>
#else
#define TC_HALF_X86 0
#endif

#if TC_HALF_X86
__attribute__((target("avx,f16c"))) static int64_t widen_f16c(const uint16_t *in, float *out,
                                                              int64_t n) {
    const __m128i magnitude = _mm_set1_epi16(0x7fff), inf = _mm_set1_epi16(0x7c00);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m128i h = _mm_loadu_si128((const __m128i *)(in + i));
        __m128i nan = _mm_cmpgt_epi16(_mm_and_si128(h, magnitude), inf);
        if (_mm_movemask_epi8(nan)) {
            for (int k = 0; k < 8; k++)
                out[i + k] = tc_half_to_float(in[i + k]);
            continue;
        }
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
    }
    return i;
}

__attribute__((target("avx,f16c"))) static int64_t narrow_f16c(const float *in, uint16_t *out,
                                                               int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 f = _mm256_loadu_ps(in + i);
        if (_mm256_movemask_ps(_mm256_cmp_ps(f, f, _CMP_UNORD_Q))) {
            for (int k = 0; k < 8; k++)
                out[i + k] = tc_float_to_half(in[i + k]);
            continue;
        }
        _mm_storeu_si128((__m128i *)(out + i),
                         _mm256_cvtps_ph(f, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    return i;
}
#endif

void tc_half_to_float_n(const uint16_t *in, float *out, int64_t n) {
    int64_t i = 0;
#if TC_HALF_X86
    if (tc_cpu_has_f16c())
        i = widen_f16c(in, out, n);
#endif
    for (; i < n; i++)
        out[i] = tc_half_to_float(in[i]);
}

void tc_float_to_half_n(const float *in, uint16_t *out, int64_t n) {
    int64_t i = 0;
#if TC_HALF_X86
    if (tc_cpu_has_f16c())
        i = narrow_f16c(in, out, n);
#endif
    for (; i < n; i++)
        out[i] = tc_float_to_half(in[i]);
}
