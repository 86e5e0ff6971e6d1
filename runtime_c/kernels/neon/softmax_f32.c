/* NEON SOFTMAX / LOGSOFTMAX f32 (variant 0, any axis; kernels/softmax_tmpl.h drives the rows and the
 * threads); the structure and numerics of kernels/x86/softmax_f32.c over 4 lanes.
 *
 * Per row: max (a NaN anywhere makes the row NaN, as in the reference), exp(x - max) with neon_exp4
 * summed in double (float64x2 halves), then e * (1 / sum) in double rounded once (softmax; e was kept in
 * Y by the second pass) or x - max - log(sum) (logsoftmax). The innermost axis runs 4 elements per
 * vector, other axes 4 adjacent columns per vector (one column per lane); partial vectors go through a
 * padded copy. Accuracy as on x86: softmax within 2e-6 relative (+1e-37), logsoftmax 2e-6 (|y| + 1). */
#include <arm_neon.h>
#include <math.h>
#include "neon.h"
#include "neon_math.h"
#include "reduce_common.h"

#define SM_INLINE static inline __attribute__((always_inline))

SM_INLINE float64x2_t sm_acc(float64x2_t s, float32x4_t e, float64x2_t *s_hi) {
    *s_hi = vaddq_f64(*s_hi, vcvt_high_f64_f32(e));
    return vaddq_f64(s, vcvt_f64_f32(vget_low_f32(e)));
}
/* (float)(e * inv) lane by lane, the product in double */
SM_INLINE float32x4_t sm_scale(float32x4_t e, float64x2_t inv_lo, float64x2_t inv_hi) {
    const float32x2_t lo = vcvt_f32_f64(vmulq_f64(vcvt_f64_f32(vget_low_f32(e)), inv_lo));
    return vcvt_high_f32_f64(lo, vmulq_f64(vcvt_high_f64_f32(e), inv_hi));
}
SM_INLINE uint32x4_t sm_isnan(float32x4_t v) { return vmvnq_u32(vceqq_f32(v, v)); }

static void sm_row(float *y, const float *x, int64_t n, int log_mode) {
    const int64_t nv = n & ~(int64_t)3;
    const int tail = (int)(n - nv);
    float32x4_t m4 = vdupq_n_f32(-INFINITY);
    uint32x4_t nan4 = vdupq_n_u32(0);
    for (int64_t i = 0; i < nv; i += 4) {
        const float32x4_t v = vld1q_f32(x + i);
        nan4 = vorrq_u32(nan4, sm_isnan(v));
        m4 = vbslq_f32(vcgtq_f32(v, m4), v, m4);
    }
    if (tail) {
        const float32x4_t v = neon_ld_part(x + nv, tail, -INFINITY);
        nan4 = vorrq_u32(nan4, sm_isnan(v));
        m4 = vbslq_f32(vcgtq_f32(v, m4), v, m4);
    }
    const float m = vmaxvq_u32(nan4) ? NAN : vmaxvq_f32(m4);
    const float32x4_t mv = vdupq_n_f32(m);
    float64x2_t s0 = vdupq_n_f64(0.0), s1 = vdupq_n_f64(0.0);
    for (int64_t i = 0; i < nv; i += 4) {
        const float32x4_t e = neon_exp4(vsubq_f32(vld1q_f32(x + i), mv));
        if (!log_mode) vst1q_f32(y + i, e);
        s0 = sm_acc(s0, e, &s1);
    }
    if (tail) {   /* the pad lanes are zeroed before the sum */
        const uint32x4_t lanes = {0, 1, 2, 3}, live = vcltq_u32(lanes, vdupq_n_u32((uint32_t)tail));
        float32x4_t e = neon_exp4(vsubq_f32(neon_ld_part(x + nv, tail, 0.0f), mv));
        if (!log_mode) neon_st_part(y + nv, e, tail);
        e = vreinterpretq_f32_u32(vandq_u32(vreinterpretq_u32_f32(e), live));
        s0 = sm_acc(s0, e, &s1);
    }
    const double sum = vaddvq_f64(vaddq_f64(s0, s1));
    if (log_mode) {
        const float32x4_t ls = vdupq_n_f32((float)log(sum));
        for (int64_t i = 0; i < nv; i += 4) vst1q_f32(y + i, vsubq_f32(vsubq_f32(vld1q_f32(x + i), mv), ls));
        if (tail) neon_st_part(y + nv, vsubq_f32(vsubq_f32(neon_ld_part(x + nv, tail, 0.0f), mv), ls), tail);
        return;
    }
    const float64x2_t inv = vdupq_n_f64(1.0 / sum);
    for (int64_t i = 0; i < nv; i += 4) vst1q_f32(y + i, sm_scale(vld1q_f32(y + i), inv, inv));
    if (tail) neon_st_part(y + nv, sm_scale(neon_ld_part(y + nv, tail, 0.0f), inv, inv), tail);
}

/* w (1..4) adjacent columns, one per lane; full: w == 4 (plain loads). */
SM_INLINE void sm_cols_n(float *y, const float *x, int64_t n, int64_t inner, int w, const int full, int log_mode) {
#define SM_LD(p) (full ? vld1q_f32(p) : neon_ld_part((p), w, 0.0f))
#define SM_ST(p, v) (full ? vst1q_f32((p), (v)) : neon_st_part((p), (v), w))
    float32x4_t m4 = vdupq_n_f32(-INFINITY);
    uint32x4_t nan4 = vdupq_n_u32(0);
    for (int64_t k = 0; k < n; k++) {
        const float32x4_t v = SM_LD(x + k * inner);
        nan4 = vorrq_u32(nan4, sm_isnan(v));
        m4 = vbslq_f32(vcgtq_f32(v, m4), v, m4);
    }
    m4 = vbslq_f32(nan4, vdupq_n_f32(NAN), m4);
    float64x2_t s0 = vdupq_n_f64(0.0), s1 = vdupq_n_f64(0.0);
    for (int64_t k = 0; k < n; k++) {
        const float32x4_t e = neon_exp4(vsubq_f32(SM_LD(x + k * inner), m4));
        if (!log_mode) SM_ST(y + k * inner, e);
        s0 = sm_acc(s0, e, &s1);
    }
    if (log_mode) {
        const float l[4] = {(float)log(vgetq_lane_f64(s0, 0)), (float)log(vgetq_lane_f64(s0, 1)),
                            (float)log(vgetq_lane_f64(s1, 0)), (float)log(vgetq_lane_f64(s1, 1))};
        const float32x4_t ls = vld1q_f32(l);
        for (int64_t k = 0; k < n; k++) SM_ST(y + k * inner, vsubq_f32(vsubq_f32(SM_LD(x + k * inner), m4), ls));
        return;
    }
    const float64x2_t one = vdupq_n_f64(1.0), i0 = vdivq_f64(one, s0), i1 = vdivq_f64(one, s1);
    for (int64_t k = 0; k < n; k++) SM_ST(y + k * inner, sm_scale(SM_LD(y + k * inner), i0, i1));
#undef SM_LD
#undef SM_ST
}

static void sm_cols(float *y, const float *x, int64_t n, int64_t inner, int w, int log_mode) {
    if (w == 4)
        sm_cols_n(y, x, n, inner, 4, 1, log_mode);
    else
        sm_cols_n(y, x, n, inner, w, 0, log_mode);
}

/* one softmax row for ATTENTION (kernels/attention_tmpl.h) */
void ep_neon_softmax_row(float *y, const float *x, int64_t n) { sm_row(y, x, n, 0); }

#define SM_LANES 4
#include "softmax_tmpl.h"

/* REDUCE MAX / MIN over contiguous runs (kernels/reduce_common.h), 8 lanes at a time; NaN is tracked
 * apart (FMAX / FMIN would propagate it), the first-of-equal rule is reduce_common.h's. */
static int neon_minmax_run(int kind, const float *p, int64_t len, float *out) {
    const int mx = kind == EP_REDUCE_MAX;
    float32x4_t m0 = vdupq_n_f32(mx ? -INFINITY : INFINITY), m1 = m0;
    uint32x4_t eq = vdupq_n_u32(~0u);
    int64_t k = 0;
    for (; k + 8 <= len; k += 8) {
        const float32x4_t v0 = vld1q_f32(p + k), v1 = vld1q_f32(p + k + 4);
        eq = vandq_u32(eq, vandq_u32(vceqq_f32(v0, v0), vceqq_f32(v1, v1)));
        m0 = mx ? vmaxq_f32(m0, v0) : vminq_f32(m0, v0);
        m1 = mx ? vmaxq_f32(m1, v1) : vminq_f32(m1, v1);
    }
    m0 = mx ? vmaxq_f32(m0, m1) : vminq_f32(m0, m1);
    const float r = mx ? vmaxvq_f32(m0) : vminvq_f32(m0);
    return ep_minmax_finish(kind, p, k, len, r, vminvq_u32(eq) == 0, out);
}

int ep_neon_reduce_f32(const ep_op *op) { return ep_reduce_minmax(op, neon_minmax_run); }
