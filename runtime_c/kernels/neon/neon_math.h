/* Vector exp / sigmoid / tanh for the NEON kernels (include only from aarch64 files): the same
 * algorithms and constants as x86_exp8 / x86_sigmoid8 / x86_tanh8 (kernels/x86/x86_act.h), so the two
 * ISAs agree to rounding (FMA in the same places). exp: n = round(x log2 e), r = x - n ln2 (ln2 split
 * hi/lo, fused), the Cephes expf polynomial, 2^(n-1) * 2; x clamped to [-86, 88.75] (exp(-86) ~ 4.4e-38
 * instead of a subnormal below), +inf above 88.7228, NaN propagates (FMAX / FMIN return NaN). Relative
 * error <= 2e-6 against libm for sigmoid, tanh, GELU and erf, as on x86. */
#ifndef EP_NEON_MATH_H
#define EP_NEON_MATH_H
#include <arm_neon.h>
#include "ep_kernel.h"

#define NEON_MATH_INLINE static inline __attribute__((always_inline))

NEON_MATH_INLINE float32x4_t neon_exp4(float32x4_t x) {
    const uint32x4_t over = vcgtq_f32(x, vdupq_n_f32(88.72283935546875f));
    x = vminq_f32(vdupq_n_f32(88.75f), vmaxq_f32(vdupq_n_f32(-86.0f), x));
    const float32x4_t n = vrndnq_f32(vmulq_f32(x, vdupq_n_f32(1.44269504088896341f)));
    float32x4_t r = vfmsq_f32(x, n, vdupq_n_f32(0.693359375f));
    r = vfmsq_f32(r, n, vdupq_n_f32(-2.12194440e-4f));
    float32x4_t p = vdupq_n_f32(1.9875691500E-4f);
    p = vfmaq_f32(vdupq_n_f32(1.3981999507E-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(8.3334519073E-3f), p, r);
    p = vfmaq_f32(vdupq_n_f32(4.1665795894E-2f), p, r);
    p = vfmaq_f32(vdupq_n_f32(1.6666665459E-1f), p, r);
    p = vfmaq_f32(vdupq_n_f32(5.0000001201E-1f), p, r);
    p = vfmaq_f32(r, p, vmulq_f32(r, r));
    p = vaddq_f32(p, vdupq_n_f32(1.0f));
    const int32x4_t e = vshlq_n_s32(vaddq_s32(vcvtq_s32_f32(n), vdupq_n_s32(126)), 23);
    p = vmulq_f32(p, vreinterpretq_f32_s32(e));
    p = vaddq_f32(p, p);
    return vbslq_f32(over, vdupq_n_f32(__builtin_inff()), p);
}

/* 1 / (1 + exp(-x)), true division */
NEON_MATH_INLINE float32x4_t neon_sigmoid4(float32x4_t x) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    return vdivq_f32(one, vaddq_f32(one, neon_exp4(vnegq_f32(x))));
}

/* |x| < 0.625: x + x z P(z), z = x^2; otherwise 1 - 2 / (exp(2|x|) + 1) with the sign of x */
NEON_MATH_INLINE float32x4_t neon_tanh4(float32x4_t x) {
    const float32x4_t ax = vabsq_f32(x), z = vmulq_f32(x, x);
    float32x4_t p = vdupq_n_f32(-5.70498872745E-3f);
    p = vfmaq_f32(vdupq_n_f32(2.06390887954E-2f), p, z);
    p = vfmaq_f32(vdupq_n_f32(-5.37397155531E-2f), p, z);
    p = vfmaq_f32(vdupq_n_f32(1.33314422036E-1f), p, z);
    p = vfmaq_f32(vdupq_n_f32(-3.33332819422E-1f), p, z);
    const float32x4_t small = vfmaq_f32(x, vmulq_f32(p, z), x);
    const float32x4_t one = vdupq_n_f32(1.0f);
    const float32x4_t big = vsubq_f32(one, vdivq_f32(vdupq_n_f32(2.0f), vaddq_f32(neon_exp4(vaddq_f32(ax, ax)), one)));
    const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
    const float32x4_t bigs = vreinterpretq_f32_u32(vorrq_u32(vreinterpretq_u32_f32(big), sign));
    return vbslq_f32(vcltq_f32(ax, vdupq_n_f32(0.625f)), small, bigs);
}

/* erfc(a) for a >= 0, x86_erfc8's algorithm: t exp(-a^2 + P(t)), t = 1 / (1 + a / 2), P Numerical Recipes'
 * erfcc fit, exp(-a^2) split as exp(-h^2) exp(P - (a - h)(a + h)) with h = a to 12 bits; 0 once it underflows. */
NEON_MATH_INLINE float32x4_t neon_erfc4(float32x4_t a) {
    const float32x4_t one = vdupq_n_f32(1.0f);
    const float32x4_t t = vdivq_f32(one, vaddq_f32(one, vmulq_f32(vdupq_n_f32(0.5f), a)));
    static const float c[10] = {0.17087277f, -0.82215223f, 1.48851587f, -1.13520398f, 0.27886807f,
                                -0.18628806f, 0.09678418f, 0.37409196f, 1.00002368f, -1.26551223f};
    float32x4_t p = vdupq_n_f32(c[0]);
    for (int k = 1; k < 10; k++) p = vfmaq_f32(vdupq_n_f32(c[k]), p, t);
    const float32x4_t h = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(a), vdupq_n_u32(0xFFFFF000u)));
    const float32x4_t lo = vsubq_f32(p, vmulq_f32(vsubq_f32(a, h), vaddq_f32(a, h)));
    const float32x4_t big = neon_exp4(vnegq_f32(vmulq_f32(h, h)));
    const uint32x4_t gone = vcltq_f32(vsubq_f32(p, vmulq_f32(a, a)), vdupq_n_f32(-86.0f));
    const float32x4_t e = vmulq_f32(vmulq_f32(t, big), neon_exp4(lo));
    return vreinterpretq_f32_u32(vbicq_u32(vreinterpretq_u32_f32(e), gone));
}

/* 0.5 x erfc(-x / sqrt 2): 2 - erfc(a) for x >= 0, erfc(a) below, a = |x| / sqrt 2 (x86_gelu8); the
 * _from form takes erfc (kernels/neon/act_f32.c calls one out-of-line erfc for GELU and erf) */
NEON_MATH_INLINE float32x4_t neon_gelu_arg4(float32x4_t x) { return vmulq_f32(vabsq_f32(x), vdupq_n_f32(0.70710678118654752f)); }
NEON_MATH_INLINE float32x4_t neon_gelu_from4(float32x4_t x, float32x4_t e) {
    const float32x4_t s = vbslq_f32(vcgeq_f32(x, vdupq_n_f32(0.0f)), vsubq_f32(vdupq_n_f32(2.0f), e), e);
    return vmulq_f32(vmulq_f32(vdupq_n_f32(0.5f), x), s);
}
NEON_MATH_INLINE float32x4_t neon_gelu4(float32x4_t x) { return neon_gelu_from4(x, neon_erfc4(neon_gelu_arg4(x))); }

/* erf: |x| < 0.5 the Taylor series x P(x^2) to x^13, else 1 - erfc(|x|) with the sign of x (x86_erf8); the
 * _from form takes erfc(|x|) */
NEON_MATH_INLINE float32x4_t neon_erf_from4(float32x4_t x, float32x4_t e);
NEON_MATH_INLINE float32x4_t neon_erf4(float32x4_t x) { return neon_erf_from4(x, neon_erfc4(vabsq_f32(x))); }
NEON_MATH_INLINE float32x4_t neon_erf_from4(float32x4_t x, float32x4_t e) {
    const float32x4_t ax = vabsq_f32(x), z = vmulq_f32(x, x);
    static const float c[7] = {1.20553329817896646e-4f, -8.54832702345085e-4f, 5.22397762544218775e-3f,
                               -2.68661706451312520e-2f, 1.12837916709551257e-1f, -3.76126389031837538e-1f,
                               1.12837916709551257f};
    float32x4_t p = vdupq_n_f32(c[0]);
    for (int k = 1; k < 7; k++) p = vfmaq_f32(vdupq_n_f32(c[k]), p, z);
    const float32x4_t small = vmulq_f32(x, p);
    const uint32x4_t sign = vandq_u32(vreinterpretq_u32_f32(x), vdupq_n_u32(0x80000000u));
    const float32x4_t big = vreinterpretq_f32_u32(
        vorrq_u32(vreinterpretq_u32_f32(vsubq_f32(vdupq_n_f32(1.0f), e)), sign));
    return vbslq_f32(vcltq_f32(ax, vdupq_n_f32(0.5f)), small, big);
}

/* The activations computed with the functions above (within 2e-6 of the reference), and one of them. */
NEON_MATH_INLINE int neon_math_kind(int act) {
    return act == EP_ACT_SIGMOID || act == EP_ACT_SILU || act == EP_ACT_TANH || act == EP_ACT_GELU || act == EP_ACT_ERF;
}
NEON_MATH_INLINE float32x4_t neon_math4(int act, float32x4_t v) {
    switch (act) {
    case EP_ACT_SIGMOID: return neon_sigmoid4(v);
    case EP_ACT_SILU: return vmulq_f32(v, neon_sigmoid4(v));
    case EP_ACT_TANH: return neon_tanh4(v);
    case EP_ACT_GELU: return neon_gelu4(v);
    default: return neon_erf4(v);
    }
}

/* Up to 4 floats of p as a vector (lanes past n hold pad), and the first n lanes of v stored to p. */
NEON_MATH_INLINE float32x4_t neon_ld_part(const float *p, int n, float pad) {
    float t[4] = {pad, pad, pad, pad};
    for (int i = 0; i < n; i++) t[i] = p[i];
    return vld1q_f32(t);
}
NEON_MATH_INLINE void neon_st_part(float *p, float32x4_t v, int n) {
    float t[4];
    vst1q_f32(t, v);
    for (int i = 0; i < n; i++) p[i] = t[i];
}
#endif
