/* 16-bit weights to float32 on AVX2 (plan_format.h "16-bit weights"): exact conversions of n elements, the
 * packed GEMM's and the C8 tiles' k-blocks. F16C converts halves (VCVTPH2PS); bfloat16 is the bits moved up 16. */
#ifndef EP_CVT16_X86_H
#define EP_CVT16_X86_H
#include <immintrin.h>
#include <stdint.h>
#include "ep_kernel.h"
#include "float_bits.h"

/* 8 weights from element i of b as float32: wt 0 float32, EP_DTYPE_F16 halves (F16C), else bfloat16 (the bits
 * moved up 16) */
static inline __attribute__((always_inline)) __m256 x86_ldw8(const void *b, int64_t i, const int wt) {
    if (!wt) return _mm256_loadu_ps((const float *)b + i);
    const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)b + i));
    if (wt == EP_DTYPE_F16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static inline void x86_cvt_f16(float *d, const uint16_t *s, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(d + i, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(s + i))));
    for (; i < n; i++) d[i] = ep_f16_to_f32(s[i]);
}

static inline void x86_cvt_bf16(float *d, const uint16_t *s, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        const __m256i w = _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)(s + i)));
        _mm256_storeu_ps(d + i, _mm256_castsi256_ps(_mm256_slli_epi32(w, 16)));
    }
    for (; i < n; i++) d[i] = ep_bf16_to_f32(s[i]);
}
#endif
