/* Vector epilogue helpers shared by the AVX2 kernels (include only from -mavx2 -mfma files). */
#ifndef EP_X86_ACT_H
#define EP_X86_ACT_H
#include <immintrin.h>
#include "ep_kernel.h"

/* Lane mask with the first n (0..8) lanes set. */
static inline __m256i x86_mask8(int n) {
    static const int32_t m[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
    return _mm256_loadu_si256((const __m256i *)(const void *)(m + 8 - n));
}
/* ---- Full vector activations for the element-wise kernels (elementwise_f32.c) ----
 * x86_actx_vector(act) is 1 for the kinds x86_actx8 computes in vector form. RELU, CLIP,
 * LEAKY_RELU, HARD_SIGMOID, HARD_SWISH, NEG, ABS, ROUND, FLOOR and CEIL use the reference's exact
 * operations (IEEE add/mul/div/round-to-integral, the same comparisons, no FMA contraction: the file
 * is C11 so -ffp-contract=off), so they equal ep_act_f32 bit for bit, NaN and signed zeros included.
 * SIGMOID, SILU, TANH, GELU and ERF use x86_exp8 below instead of libm's expf/tanhf/erfcf/erff: relative error
 * <= 2e-6 against the reference (with an absolute floor of 1e-37 for results that underflow to subnormals). */
static inline int x86_actx_vector(int act) {
    switch (act) {
    case EP_ACT_NONE: case EP_ACT_RELU: case EP_ACT_CLIP: case EP_ACT_LEAKY_RELU:
    case EP_ACT_HARD_SIGMOID: case EP_ACT_HARD_SWISH: case EP_ACT_NEG: case EP_ACT_ABS:
    case EP_ACT_SIGMOID: case EP_ACT_SILU: case EP_ACT_TANH: case EP_ACT_GELU: case EP_ACT_ERF:
    case EP_ACT_ROUND: case EP_ACT_FLOOR: case EP_ACT_CEIL:
        return 1;
    default: return 0;
    }
}

/* exp(x), 8 lanes: n = round(x log2 e), r = x - n ln2 (ln2 split hi/lo, FMA), |r| <= ln2/2, then the
 * Cephes expf polynomial (degree 7 in total, ~1 ulp on the reduced range) and a 2^n scale applied as
 * 2^(n-1) * 2 so n = 128 (x up to 88.72) still yields a finite result. x is clamped to [-86, 88.75] (so n-1 stays a normal exponent);
 * above 88.7228 (where expf overflows) the result is +inf; below -86 it is exp(-86) ~ 4.4e-38 rather
 * than the subnormal/zero expf returns (the callers add 1 to it, or are covered by the absolute
 * floor). NaN propagates (the clamps return their second operand when it is NaN). */
static inline __attribute__((always_inline)) __m256 x86_exp8(__m256 x) {
    const __m256 hi = _mm256_set1_ps(88.75f), lo = _mm256_set1_ps(-86.0f);
    const __m256 over = _mm256_cmp_ps(x, _mm256_set1_ps(88.72283935546875f), _CMP_GT_OQ);
    x = _mm256_min_ps(hi, _mm256_max_ps(lo, x));
    const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                     _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
    r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
    __m256 p = _mm256_set1_ps(1.9875691500E-4f);
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507E-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073E-3f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894E-2f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459E-1f));
    p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201E-1f));
    p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), r);
    p = _mm256_add_ps(p, _mm256_set1_ps(1.0f));
    const __m256i e = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(126)), 23);
    p = _mm256_mul_ps(p, _mm256_castsi256_ps(e));
    p = _mm256_add_ps(p, p);
    return _mm256_blendv_ps(p, _mm256_set1_ps(__builtin_inff()), over);
}

/* 1 / (1 + exp(-x)), the reference's expression with x86_exp8 (true division, no rcp estimate). */
static inline __attribute__((always_inline)) __m256 x86_sigmoid8(__m256 x) {
    const __m256 one = _mm256_set1_ps(1.0f);
    return _mm256_div_ps(one, _mm256_add_ps(one, x86_exp8(_mm256_sub_ps(_mm256_setzero_ps(), x))));
}

/* tanh: |x| < 0.625: x + x z P(z), z = x^2 (Cephes tanhf, no cancellation near 0); otherwise
 * 1 - 2 / (exp(2|x|) + 1) (inf -> 1), with the sign of x put back. */
static inline __attribute__((always_inline)) __m256 x86_tanh8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x);
    const __m256 z = _mm256_mul_ps(x, x);
    __m256 p = _mm256_set1_ps(-5.70498872745E-3f);
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(2.06390887954E-2f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-5.37397155531E-2f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(1.33314422036E-1f));
    p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(-3.33332819422E-1f));
    const __m256 small = _mm256_fmadd_ps(_mm256_mul_ps(p, z), x, x);
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 big = _mm256_sub_ps(one, _mm256_div_ps(_mm256_set1_ps(2.0f),
                                                        _mm256_add_ps(x86_exp8(_mm256_add_ps(ax, ax)), one)));
    const __m256 bigs = _mm256_or_ps(big, _mm256_and_ps(sign, x));
    return _mm256_blendv_ps(bigs, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.625f), _CMP_LT_OQ));
}

/* erfc(a) for a >= 0 (NaN propagates): t exp(-a^2 + P(t)), t = 1 / (1 + a / 2), P the degree-9 Chebyshev
 * fit of Numerical Recipes' erfcc (fractional error < 1.2e-7 for every a >= 0), and two x86_exp8 (~2 ulp each). */
static inline __attribute__((always_inline)) __m256 x86_erfc8(__m256 a) {
    const __m256 one = _mm256_set1_ps(1.0f);
    const __m256 t = _mm256_div_ps(one, _mm256_add_ps(one, _mm256_mul_ps(_mm256_set1_ps(0.5f), a)));
    static const float c[10] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f};
    __m256 p = _mm256_set1_ps(c[0]);
    for (int k = 1; k < 10; k++) p = _mm256_fmadd_ps(p, t, _mm256_set1_ps(c[k]));
    /* exp(-a^2 + P) as exp(-h^2) exp(P - (a - h)(a + h)), h = a to 12 significant bits: h^2 is exact, so
     * the large part of the exponent is not rounded (a^2 ~ 32 in float would be off by ~2e-6) */
    const __m256 h = _mm256_and_ps(a, _mm256_castsi256_ps(_mm256_set1_epi32((int)0xFFFFF000u)));
    const __m256 lo = _mm256_sub_ps(p, _mm256_mul_ps(_mm256_sub_ps(a, h), _mm256_add_ps(a, h)));
    const __m256 big = x86_exp8(_mm256_sub_ps(_mm256_setzero_ps(), _mm256_mul_ps(h, h)));
    /* erfc(a) underflows (x86_exp8 stops at exp(-86)): 0, as erfcf gives for a > ~9.2 (and a = inf) */
    const __m256 gone = _mm256_cmp_ps(_mm256_sub_ps(p, _mm256_mul_ps(a, a)), _mm256_set1_ps(-86.0f), _CMP_LT_OQ);
    return _mm256_andnot_ps(gone, _mm256_mul_ps(_mm256_mul_ps(t, big), x86_exp8(lo)));
}

/* GELU as the reference computes it, 0.5 x erfc(-x / sqrt 2): with a = |x| / sqrt 2, erfc(-x / sqrt 2) is
 * 2 - erfc(a) for x >= 0 and erfc(a) for x < 0, so neither side subtracts nearly equal numbers:
 * <= 2e-6 relative. NaN propagates. */
static inline __attribute__((always_inline)) __m256 x86_gelu8(__m256 x) {
    const __m256 a = _mm256_mul_ps(_mm256_andnot_ps(_mm256_set1_ps(-0.0f), x), _mm256_set1_ps(0.70710678118654752f));
    const __m256 e = x86_erfc8(a);
    const __m256 pos = _mm256_cmp_ps(x, _mm256_setzero_ps(), _CMP_GE_OQ);
    const __m256 s = _mm256_blendv_ps(e, _mm256_sub_ps(_mm256_set1_ps(2.0f), e), pos);
    return _mm256_mul_ps(_mm256_mul_ps(_mm256_set1_ps(0.5f), x), s);
}

/* erf: |x| < 0.5: x P(x^2), the Taylor series to x^13 (truncation < 1e-9 relative there, no cancellation
 * near 0); otherwise 1 - erfc(|x|) (>= 0.47, so erfc's 1.2e-7 fractional error stays below 2.5e-7 of
 * the result) with the sign of x. <= 2e-6 relative; NaN propagates, +-inf gives +-1. */
static inline __attribute__((always_inline)) __m256 x86_erf8(__m256 x) {
    const __m256 sign = _mm256_set1_ps(-0.0f);
    const __m256 ax = _mm256_andnot_ps(sign, x), z = _mm256_mul_ps(x, x);
    static const float c[7] = {1.20553329817896646e-4f, -8.54832702345085e-4f, 5.22397762544218775e-3f,
                               -2.68661706451312520e-2f, 1.12837916709551257e-1f, -3.76126389031837538e-1f,
                               1.12837916709551257f};
    __m256 p = _mm256_set1_ps(c[0]);
    for (int k = 1; k < 7; k++) p = _mm256_fmadd_ps(p, z, _mm256_set1_ps(c[k]));
    const __m256 small = _mm256_mul_ps(x, p);
    const __m256 big = _mm256_or_ps(_mm256_sub_ps(_mm256_set1_ps(1.0f), x86_erfc8(ax)), _mm256_and_ps(sign, x));
    return _mm256_blendv_ps(big, small, _mm256_cmp_ps(ax, _mm256_set1_ps(0.5f), _CMP_LT_OQ));
}

/* x86_gelu8 out of line (act_f32.c): the epilogues' x86_act8 calls it, so its ~100 instructions are linked
 * once instead of inlined into every epilogue of every conv / GEMM kernel. */
__m256 ep_x86_gelu8(__m256 v);

/* 1 when x86_act8 has a vector form of the activation; the others are applied by the caller with
 * ep_act_apply_f32 after storing. */
static inline int x86_act_vec(int act) {
    return act == EP_ACT_NONE || act == EP_ACT_RELU || act == EP_ACT_CLIP || act == EP_ACT_LEAKY_RELU ||
           act == EP_ACT_HARD_SIGMOID || act == EP_ACT_HARD_SWISH || act == EP_ACT_SIGMOID ||
           act == EP_ACT_SILU || act == EP_ACT_TANH || act == EP_ACT_GELU;
}

/* act(v) for the kinds of x86_act_vec (v unchanged for the others), used by the conv/GEMM epilogues.
 * NaN propagates as in the reference: max/min return their second operand when either is NaN.
 * HARD_SIGMOID / HARD_SWISH are the reference's operations (mul then add; a true division by 6), bit for bit;
 * SIGMOID/SILU/TANH/GELU use x86_exp8 (relative error <= 2e-6 against the reference's libm). */
static inline __attribute__((always_inline)) __m256 x86_act8(int act, float alpha, float beta, __m256 v) {
    const __m256 z = _mm256_setzero_ps(), one = _mm256_set1_ps(1.0f);
    switch (act) {
    case EP_ACT_HARD_SIGMOID: {   /* min(max(alpha v + beta, 0), 1): a NaN stays NaN (the reference's act_clip) */
        const __m256 t = _mm256_add_ps(_mm256_mul_ps(_mm256_set1_ps(alpha), v), _mm256_set1_ps(beta));
        return _mm256_min_ps(one, _mm256_max_ps(z, t));
    }
    case EP_ACT_HARD_SWISH: {
        const __m256 t = _mm256_add_ps(_mm256_div_ps(v, _mm256_set1_ps(6.0f)), _mm256_set1_ps(0.5f));
        return _mm256_mul_ps(v, _mm256_min_ps(one, _mm256_max_ps(z, t)));
    }
    case EP_ACT_RELU: return _mm256_max_ps(_mm256_setzero_ps(), v);
    case EP_ACT_CLIP: return _mm256_min_ps(_mm256_set1_ps(beta), _mm256_max_ps(_mm256_set1_ps(alpha), v));
    case EP_ACT_LEAKY_RELU:
        return _mm256_blendv_ps(v, _mm256_mul_ps(_mm256_set1_ps(alpha), v),
                                _mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ));
    case EP_ACT_SIGMOID: return x86_sigmoid8(v);
    case EP_ACT_SILU: return _mm256_mul_ps(v, x86_sigmoid8(v));
    case EP_ACT_TANH: return x86_tanh8(v);
    case EP_ACT_GELU: return ep_x86_gelu8(v);
    default: return v;
    }
}

static inline __attribute__((always_inline)) __m256 x86_actx8(int act, float alpha, float beta, __m256 v) {
    switch (act) {
    case EP_ACT_RELU: /* v < 0 ? 0 : v */
        return _mm256_andnot_ps(_mm256_cmp_ps(v, _mm256_setzero_ps(), _CMP_LT_OQ), v);
    case EP_ACT_CLIP: case EP_ACT_LEAKY_RELU: case EP_ACT_HARD_SIGMOID: case EP_ACT_HARD_SWISH:
        return x86_act8(act, alpha, beta, v);
    case EP_ACT_NEG: return _mm256_xor_ps(v, _mm256_set1_ps(-0.0f));
    case EP_ACT_ABS: return _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v);
    case EP_ACT_SIGMOID: return x86_sigmoid8(v);
    case EP_ACT_SILU: return _mm256_mul_ps(v, x86_sigmoid8(v));
    case EP_ACT_TANH: return x86_tanh8(v);
    case EP_ACT_GELU: return x86_gelu8(v);
    case EP_ACT_ERF: return x86_erf8(v);
    /* IEEE round-to-integral in an explicit mode (not MXCSR's): equal to the reference's act_round /
     * floorf / ceilf bit for bit, signed zeros included */
    case EP_ACT_ROUND: return _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    case EP_ACT_FLOOR: return _mm256_round_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
    case EP_ACT_CEIL: return _mm256_round_ps(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC);
    default: return v;
    }
}

/* The low and high 4 lanes of v widened to double, and the sum of the 4 doubles of v as ((v0 + v2) + (v1 + v3)). */
static inline __attribute__((always_inline)) __m256d x86_lo_pd(__m256 v) {
    return _mm256_cvtps_pd(_mm256_castps256_ps128(v));
}
static inline __attribute__((always_inline)) __m256d x86_hi_pd(__m256 v) {
    return _mm256_cvtps_pd(_mm256_extractf128_ps(v, 1));
}
static inline __attribute__((always_inline)) double x86_hsum_pd(__m256d v) {
    const __m128d s = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd(v, 1));
    return _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)));
}

/* The 8 x 8 block v[row][lane] transposed in place: afterwards v[i][c] is what v[c][i] was. */
static inline __attribute__((always_inline)) void x86_tr8(__m256 v[8]) {
    const __m256 t0 = _mm256_unpacklo_ps(v[0], v[1]), t1 = _mm256_unpackhi_ps(v[0], v[1]);
    const __m256 t2 = _mm256_unpacklo_ps(v[2], v[3]), t3 = _mm256_unpackhi_ps(v[2], v[3]);
    const __m256 t4 = _mm256_unpacklo_ps(v[4], v[5]), t5 = _mm256_unpackhi_ps(v[4], v[5]);
    const __m256 t6 = _mm256_unpacklo_ps(v[6], v[7]), t7 = _mm256_unpackhi_ps(v[6], v[7]);
    const __m256 u0 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u1 = _mm256_shuffle_ps(t0, t2, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u2 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u3 = _mm256_shuffle_ps(t1, t3, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u4 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u5 = _mm256_shuffle_ps(t4, t6, _MM_SHUFFLE(3, 2, 3, 2));
    const __m256 u6 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(1, 0, 1, 0));
    const __m256 u7 = _mm256_shuffle_ps(t5, t7, _MM_SHUFFLE(3, 2, 3, 2));
    v[0] = _mm256_permute2f128_ps(u0, u4, 0x20), v[4] = _mm256_permute2f128_ps(u0, u4, 0x31);
    v[1] = _mm256_permute2f128_ps(u1, u5, 0x20), v[5] = _mm256_permute2f128_ps(u1, u5, 0x31);
    v[2] = _mm256_permute2f128_ps(u2, u6, 0x20), v[6] = _mm256_permute2f128_ps(u2, u6, 0x31);
    v[3] = _mm256_permute2f128_ps(u3, u7, 0x20), v[7] = _mm256_permute2f128_ps(u3, u7, 0x31);
}

#endif
