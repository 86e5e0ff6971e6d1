/* NEON LAYERNORM f32 (variant 0; kernels/layernorm_tmpl.h drives the rows and the threads); the numerics
 * of kernels/x86/layernorm_f32.c over 4 lanes: sum and sum of squared deviations in double (float64x2
 * halves, 4 accumulator chains), inv = 1 / sqrt(var + eps) in double, y = (float)((x - mean) * inv) * scale + bias with the
 * subtraction and product in double, scale and bias in float (separate multiply and add). Only the order
 * of the double sums differs from the reference (the test allows 1e-6 relative). */
#include <arm_neon.h>
#include <math.h>
#include "neon.h"

static void ln_row(float *y, const float *x, const float *sc, const float *bi, int64_t n, double eps, float *mean_out,
                   float *inv_out) {
    const int64_t nv = n & ~(int64_t)3;
    float64x2_t a0 = vdupq_n_f64(0.0), a1 = a0, a2 = a0, a3 = a0;   /* 4 chains: the adds' latency */
    int64_t i0 = 0;
    for (; i0 + 8 <= nv; i0 += 8) {
        const float32x4_t v = vld1q_f32(x + i0), w = vld1q_f32(x + i0 + 4);
        a0 = vaddq_f64(a0, vcvt_f64_f32(vget_low_f32(v)));
        a1 = vaddq_f64(a1, vcvt_high_f64_f32(v));
        a2 = vaddq_f64(a2, vcvt_f64_f32(vget_low_f32(w)));
        a3 = vaddq_f64(a3, vcvt_high_f64_f32(w));
    }
    for (; i0 < nv; i0 += 4) {
        const float32x4_t v = vld1q_f32(x + i0);
        a0 = vaddq_f64(a0, vcvt_f64_f32(vget_low_f32(v)));
        a1 = vaddq_f64(a1, vcvt_high_f64_f32(v));
    }
    double s = vaddvq_f64(vaddq_f64(vaddq_f64(a0, a1), vaddq_f64(a2, a3)));
    for (int64_t i = nv; i < n; i++) s += x[i];
    const double mean = n ? s / (double)n : 0.0;
    const float64x2_t mv = vdupq_n_f64(mean);
    a0 = a1 = a2 = a3 = vdupq_n_f64(0.0);
    for (i0 = 0; i0 + 8 <= nv; i0 += 8) {
        const float32x4_t v = vld1q_f32(x + i0), w = vld1q_f32(x + i0 + 4);
        const float64x2_t d0 = vsubq_f64(vcvt_f64_f32(vget_low_f32(v)), mv), d1 = vsubq_f64(vcvt_high_f64_f32(v), mv);
        const float64x2_t d2 = vsubq_f64(vcvt_f64_f32(vget_low_f32(w)), mv), d3 = vsubq_f64(vcvt_high_f64_f32(w), mv);
        a0 = vaddq_f64(a0, vmulq_f64(d0, d0));
        a1 = vaddq_f64(a1, vmulq_f64(d1, d1));
        a2 = vaddq_f64(a2, vmulq_f64(d2, d2));
        a3 = vaddq_f64(a3, vmulq_f64(d3, d3));
    }
    for (; i0 < nv; i0 += 4) {
        const float32x4_t v = vld1q_f32(x + i0);
        const float64x2_t d0 = vsubq_f64(vcvt_f64_f32(vget_low_f32(v)), mv), d1 = vsubq_f64(vcvt_high_f64_f32(v), mv);
        a0 = vaddq_f64(a0, vmulq_f64(d0, d0));
        a1 = vaddq_f64(a1, vmulq_f64(d1, d1));
    }
    double v = vaddvq_f64(vaddq_f64(vaddq_f64(a0, a1), vaddq_f64(a2, a3)));
    for (int64_t i = nv; i < n; i++) v += (x[i] - mean) * (x[i] - mean);
    const double var = n ? v / (double)n : 0.0;
    const double inv = 1.0 / sqrt(var + eps);
    const float64x2_t iv = vdupq_n_f64(inv);
    for (int64_t i = 0; i < nv; i += 4) {
        const float32x4_t xv = vld1q_f32(x + i);
        const float32x2_t t0 = vcvt_f32_f64(vmulq_f64(vsubq_f64(vcvt_f64_f32(vget_low_f32(xv)), mv), iv));
        float32x4_t t = vcvt_high_f32_f64(t0, vmulq_f64(vsubq_f64(vcvt_high_f64_f32(xv), mv), iv));
        t = vmulq_f32(t, vld1q_f32(sc + i));
        if (bi) t = vaddq_f32(t, vld1q_f32(bi + i));
        vst1q_f32(y + i, t);
    }
    for (int64_t i = nv; i < n; i++) {
        const float t = (float)((x[i] - mean) * inv) * sc[i];
        y[i] = bi ? t + bi[i] : t;
    }
    if (mean_out) *mean_out = (float)mean;
    if (inv_out) *inv_out = (float)inv;
}

#include "layernorm_tmpl.h"
