/* Vector epilogue helpers shared by the AVX2 kernels (include only from -mavx2 -mfma files). */
#ifndef EP_X86_ACT_H
#define EP_X86_ACT_H
#include <immintrin.h>
#include "ep_kernel.h"

/* 1 when x86_act8 has a vector form of the activation; the others are applied by the caller with
 * ep_act_apply_f32 after storing. */
static inline int x86_act_vec(int act) {
    return act == EP_ACT_NONE || act == EP_ACT_RELU || act == EP_ACT_CLIP || act == EP_ACT_LEAKY_RELU;
}

/* act(v) for the kinds of x86_act_vec (v unchanged for the others). NaN propagates as in the
 * reference: max/min return their second operand when either is NaN. */
static inline __attribute__((always_inline)) __m256 x86_act8(int act, float alpha, float beta, __m256 v) {
    switch (act) {
    case EP_ACT_RELU: return _mm256_max_ps(_mm256_setzero_ps(), v);
    case EP_ACT_CLIP: return _mm256_min_ps(_mm256_set1_ps(beta), _mm256_max_ps(_mm256_set1_ps(alpha), v));
    case EP_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(v, _mm256_mul_ps(_mm256_set1_ps(alpha), v),
                                _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
    default: return v;
    }
}

/* Lane mask with the first n (0..8) lanes set. */
static inline __m256i x86_mask8(int n) {
    static const int32_t m[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(const void *)(m + 8 - n));
}
#endif
