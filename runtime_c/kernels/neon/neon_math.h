/* Vector exp / sigmoid / tanh for the NEON kernels (include only from aarch64 files): the same
 * algorithms and constants as x86_exp8 / x86_sigmoid8 / x86_tanh8 (kernels/x86/x86_act.h), so the two
 * ISAs agree to rounding (FMA in the same places). exp: n = round(x log2 e), r = x - n ln2 (ln2 split
 * hi/lo, fused), the Cephes expf polynomial, 2^(n-1) * 2; x clamped to [-86, 88.75] (exp(-86) ~ 4.4e-38
 * instead of a subnormal below), +inf above 88.7228, NaN propagates (FMAX / FMIN return NaN). Relative
 * error <= 2e-6 against libm for sigmoid and tanh, as on x86. */
#ifndef EP_NEON_MATH_H
#define EP_NEON_MATH_H
#include <arm_neon.h>

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
