/* NEON int8 helpers shared by kernels/neon/quant_i8.c (armv8-a) and kernels/neon/quant_dotprod.c (+dotprod);
 * tests/c/check_quant.c holds qn_requant to ep_requant on 2^20 triples. Integer arithmetic only. */
#ifndef EP_QUANT_NEON_H
#define EP_QUANT_NEON_H
#include <arm_neon.h>
#include <stdint.h>

/* ep_requant on 4 lanes, any s in [1, 62], m in [0, 2^31), acc any int32:
 *   v = (acc m + 2^(s-1)) >> s
 * SMULL / SMULL2 give the exact 64-bit products; SRSHL by -s is the rounding add and the arithmetic shift in one
 * (the architecture computes (x + 2^(s-1)) >> s without overflow); SQXTN saturates v to int32 (|v| can pass 2^31
 * when s < 32), which the clamp to [lo, hi] (inside int8) cannot tell from v itself. No VQRDMULH: its doubling
 * and its own rounding are another formula. */
static inline int32x4_t qn_requant(int32x4_t acc, int32x4_t m, int32x4_t s, int32x4_t lo, int32x4_t hi, int32x4_t zp) {
    const int32x4_t ns = vnegq_s32(s);
    const int64x2_t r0 = vrshlq_s64(vmull_s32(vget_low_s32(acc), vget_low_s32(m)), vmovl_s32(vget_low_s32(ns)));
    const int64x2_t r1 = vrshlq_s64(vmull_high_s32(acc, m), vmovl_high_s32(ns));
    const int32x4_t v = vcombine_s32(vqmovn_s64(r0), vqmovn_s64(r1));
    return vaddq_s32(vminq_s32(vmaxq_s32(v, lo), hi), zp);
}

/* 8 int32 in int8 range (a, b) stored as the first n (1..8) int8 of dst */
static inline void qn_store_i8(int32x4_t a, int32x4_t b, int8_t *dst, int n) {
    const int8x8_t v = vqmovn_s16(vcombine_s16(vqmovn_s32(a), vqmovn_s32(b)));
    if (n == 8) {
        vst1_s8(dst, v);
    } else {
        int8_t t[8];
        vst1_s8(t, v);
        for (int i = 0; i < n; i++) dst[i] = t[i];
    }
}

/* one row of 8 accumulators (plus their biases) requantised with per-lane (m, s) */
static inline void qn_requant8(const int32_t *acc8, int32x4_t b0, int32x4_t b1, int32x4_t m0, int32x4_t m1,
                               int32x4_t s0, int32x4_t s1, int32_t lo, int32_t hi, int32_t zp, int8_t *dst, int n) {
    const int32x4_t vlo = vdupq_n_s32(lo), vhi = vdupq_n_s32(hi), vzp = vdupq_n_s32(zp);
    qn_store_i8(qn_requant(vaddq_s32(vld1q_s32(acc8), b0), m0, s0, vlo, vhi, vzp),
                qn_requant(vaddq_s32(vld1q_s32(acc8 + 4), b1), m1, s1, vlo, vhi, vzp), dst, n);
}

/* A one-position tile's end (qt_conv_row1): the 8 channels' sums (ch 0-3, 4-7) plus their biases, requantised
 * with their (m, s), stored at yc[c * P] */
static inline int qn_row1_store(int32x4_t a, int32x4_t b, const int32_t *bias8, const int32_t *m8, const int32_t *s8,
                                int32_t lo, int32_t hi, int32_t zp, int8_t *yc, int64_t P) {
    int32_t acc[8];
    vst1q_s32(acc, a);
    vst1q_s32(acc + 4, b);
    int8_t t[8];
    qn_requant8(acc, vld1q_s32(bias8), vld1q_s32(bias8 + 4), vld1q_s32(m8), vld1q_s32(m8 + 4), vld1q_s32(s8),
                vld1q_s32(s8 + 4), lo, hi, zp, P == 1 ? yc : t, 8);
    if (P != 1)
        for (int c = 0; c < 8; c++) yc[c * P] = t[c];
    return 1;
}

/* The requantisation entry points of kernels/quant_tmpl.h (every s is handled in vectors: vec is unused). */
static inline void qt_requant_cols(const int32_t *acc8, const int32_t *bias8, const int32_t *m8, const int32_t *s8,
                                   int vec, int32_t lo, int32_t hi, int32_t zp, int8_t *dst, int n) {
    (void)vec;
    qn_requant8(acc8, vld1q_s32(bias8), vld1q_s32(bias8 + 4), vld1q_s32(m8), vld1q_s32(m8 + 4), vld1q_s32(s8),
                vld1q_s32(s8 + 4), lo, hi, zp, dst, n);
}
static inline void qt_requant_row(const int32_t *acc8, int32_t bias, int32_t m, int32_t s, int32_t lo, int32_t hi,
                                  int32_t zp, int8_t *dst, int n) {
    const int32x4_t b = vdupq_n_s32(bias), mv = vdupq_n_s32(m), sv = vdupq_n_s32(s);
    qn_requant8(acc8, b, b, mv, mv, sv, sv, lo, hi, zp, dst, n);
}
#endif
