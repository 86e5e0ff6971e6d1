/* 16-bit weights to float32 on aarch64 NEON (plan_format.h "16-bit weights"): exact conversions of n elements,
 * the packed GEMM's and the C8 tiles' k-blocks. Halves by FCVTL (ARMv8.0 AdvSIMD); bfloat16 is the bits moved up
 * 16 (USHLL). */
#ifndef EP_CVT16_NEON_H
#define EP_CVT16_NEON_H
#include <arm_neon.h>
#include <stdint.h>
#include "ep_kernel.h"
#include "float_bits.h"

/* 4 weights from element i of b as float32: wt 0 float32, EP_DTYPE_F16 halves (FCVTL), else bfloat16 (the bits
 * moved up 16) */
static inline __attribute__((always_inline)) float32x4_t neon_ldw4(const void *b, int64_t i, const int wt) {
    if (!wt) return vld1q_f32((const float *)b + i);
    const uint16x4_t h = vld1_u16((const uint16_t *)b + i);
    if (wt == EP_DTYPE_F16) return vcvt_f32_f16(vreinterpret_f16_u16(h));
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

static inline void neon_cvt_f16(float *d, const uint16_t *s, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(d + i, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(s + i))));
    for (; i < n; i++) d[i] = ep_f16_to_f32(s[i]);
}

static inline void neon_cvt_bf16(float *d, const uint16_t *s, int64_t n) {
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) vst1q_f32(d + i, vreinterpretq_f32_u32(vshll_n_u16(vld1_u16(s + i), 16)));
    for (; i < n; i++) d[i] = ep_bf16_to_f32(s[i]);
}
#endif
