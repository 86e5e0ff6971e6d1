/* NEON CONV2D variant BLOCKED_DW: kernels/blocked_dw_tmpl.h with a pixel's 8 channels in two q registers. RELU and
 * CLIP are neon_act4's max / min; the other kinds of neon_act_vector run over the finished rows with neon_act4,
 * the rest with ep_neon_act_apply. */
#include <arm_neon.h>
#include "neon.h"
#include "neon_act.h"

typedef struct bd_v {
    float32x4_t lo, hi;
} bd_v;
NEON_INLINE bd_v bd_ld(const float *p) { return (bd_v){vld1q_f32(p), vld1q_f32(p + 4)}; }
NEON_INLINE void bd_st(float *p, bd_v v) { vst1q_f32(p, v.lo), vst1q_f32(p + 4, v.hi); }
NEON_INLINE bd_v bd_set1(float f) { return (bd_v){vdupq_n_f32(f), vdupq_n_f32(f)}; }
NEON_INLINE bd_v bd_add(bd_v a, bd_v b) { return (bd_v){vaddq_f32(a.lo, b.lo), vaddq_f32(a.hi, b.hi)}; }
NEON_INLINE bd_v bd_fma(bd_v acc, bd_v w, bd_v x) {
    return (bd_v){vfmaq_f32(acc.lo, w.lo, x.lo), vfmaq_f32(acc.hi, w.hi, x.hi)};
}
NEON_INLINE bd_v bd_clamp(bd_v v, bd_v lo, bd_v hi) {
    return (bd_v){vminq_f32(vmaxq_f32(v.lo, lo.lo), hi.lo), vminq_f32(vmaxq_f32(v.hi, lo.hi), hi.hi)};
}
NEON_INLINE bd_v bd_act(int act, float alpha, float beta, bd_v v) {
    return (bd_v){neon_act4(act, alpha, beta, v.lo), neon_act4(act, alpha, beta, v.hi)};
}

#define BD_V bd_v
#define BD_ZERO() bd_set1(0.0f)
#define BD_SET1(f) bd_set1(f)
#define BD_LD(p) bd_ld(p)
#define BD_ST(p, v) bd_st((p), (v))
#define BD_ADD(a, b) bd_add((a), (b))
#define BD_FMA(acc, w, x) bd_fma((acc), (w), (x))
#define BD_CLAMP(v, lo, hi) bd_clamp((v), (lo), (hi))
#define BD_ACT_VEC(act) neon_act_vector(act)
#define BD_ACT(act, alpha, beta, v) bd_act((act), (alpha), (beta), (v))

#include "blocked_dw_tmpl.h"
