/* AVX2 int8 helpers (kernels/x86/quant_i8.c; tests/c/check_quant.c holds qx_requant to ep_requant on 2^20
 * triples). Integer arithmetic only: no float touches an int8 accumulator. */
#ifndef EP_QUANT_X86_H
#define EP_QUANT_X86_H
#include <immintrin.h>
#include <stdint.h>

/* ep_requant on 8 lanes whose shifts are all in [32, 62] (multipliers below 0.5), acc any int32, m in [0, 2^31):
 *   v = (acc m + 2^(s-1)) >> s
 * The 64-bit products come from VPMULDQ (even lanes, then the odd lanes shifted down), the rounding term is added
 * in 64 bits (|acc m| + 2^61 < 2^63: no overflow), and since s >= 32 the shift is the high dword (floor by 2^32)
 * followed by an arithmetic shift by s - 32 (floor of a floor is the floor by 2^s); |v| < 2^31 fits the dword.
 * Then clamped to [lo, hi] and zp added, as ep_requant. */
static inline __m256i qx_requant(__m256i acc, __m256i m, __m256i s, __m256i lo, __m256i hi, __m256i zp) {
    const __m256i one = _mm256_set1_epi64x(1), sm1 = _mm256_sub_epi32(s, _mm256_set1_epi32(1));
    const __m256i pe = _mm256_add_epi64(_mm256_mul_epi32(acc, m),
                                        _mm256_sllv_epi64(one, _mm256_and_si256(sm1, _mm256_set1_epi64x(0xFFFFFFFF))));
    const __m256i po = _mm256_add_epi64(_mm256_mul_epi32(_mm256_srli_epi64(acc, 32), _mm256_srli_epi64(m, 32)),
                                        _mm256_sllv_epi64(one, _mm256_srli_epi64(sm1, 32)));
    __m256i v = _mm256_blend_epi32(_mm256_srli_epi64(pe, 32), po, 0xAA);   /* the high dwords, in lane order */
    v = _mm256_srav_epi32(v, _mm256_sub_epi32(s, _mm256_set1_epi32(32)));
    return _mm256_add_epi32(_mm256_min_epi32(_mm256_max_epi32(v, lo), hi), zp);
}

/* The first n (1..8) of 8 int32 lanes, each in int8 range, stored as int8. */
static inline void qx_store_i8(__m256i v, int8_t *dst, int n) {
    const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    const __m128i b = _mm_packs_epi16(w, w);
    if (n == 8) {
        _mm_storel_epi64((__m128i *)dst, b);
    } else {
        int8_t t[16];
        _mm_storeu_si128((__m128i *)t, b);
        for (int i = 0; i < n; i++) dst[i] = t[i];
    }
}
#endif
