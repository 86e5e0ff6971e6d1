/* NEON GEMM variant ROWS (B as its transpose [N, K]): kernels/gemm_rows_tmpl.h over 4-lane q registers;
 * 16-bit weights through FCVTL (float16) or a 16-bit shift (bfloat16). */
#include <arm_neon.h>
#include "neon.h"

#define RV float32x4_t
#define RV_N 4
#define RV_ZERO() vdupq_n_f32(0.0f)
#define RV_LD(p) vld1q_f32(p)
static inline float32x4_t rv_ldw(const void *b, int64_t i, const int wt) {
    if (!wt) return vld1q_f32((const float *)b + i);
    const uint16x4_t h = vld1_u16((const uint16_t *)b + i);
    if (wt == EP_DTYPE_F16) return vcvt_f32_f16(vreinterpret_f16_u16(h));
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}
#define RV_LDW(p, i, wt) rv_ldw((p), (i), (wt))
#define RV_FMA(acc, a, b) vfmaq_f32((acc), (a), (b))
#define RV_ADD(a, b) vaddq_f32((a), (b))
#define RV_HSUM(v) vaddvq_f32(v)

#include "gemm_rows_tmpl.h"
