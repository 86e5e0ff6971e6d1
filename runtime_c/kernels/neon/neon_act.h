/* Vector activations for the NEON kernels' epilogues (include only from aarch64 files).
 * neon_act4 returns 0 for the kinds without a vector form; the caller then applies ep_act_apply_f32
 * after storing (the reference's own scalar code, so those kinds match ref exactly).
 * The vector forms compute exactly what the reference computes (same operations, no reciprocal
 * estimates), so only the accumulation before them can differ from ref. NaN propagates (FMAX/FMIN
 * return NaN when either input is NaN, as the reference's comparisons do); RELU may return +0 where
 * the reference returns -0. */
#ifndef EP_NEON_ACT_H
#define EP_NEON_ACT_H
#include <arm_neon.h>
#include "ep_kernel.h"

#define NEON_INLINE static inline __attribute__((always_inline))

NEON_INLINE int neon_act_vector(int act) {
    switch (act) {
    case EP_ACT_NONE: case EP_ACT_RELU: case EP_ACT_CLIP: case EP_ACT_LEAKY_RELU:
    case EP_ACT_HARD_SIGMOID: case EP_ACT_HARD_SWISH: case EP_ACT_NEG: case EP_ACT_ABS:
    case EP_ACT_ROUND: case EP_ACT_FLOOR: case EP_ACT_CEIL:
        return 1;
    default: return 0;
    }
}

NEON_INLINE float32x4_t neon_act4(int act, float alpha, float beta, float32x4_t v) {
    const float32x4_t z = vdupq_n_f32(0.0f);
    switch (act) {
    case EP_ACT_RELU: return vmaxq_f32(v, z);
    case EP_ACT_CLIP: return vminq_f32(vmaxq_f32(v, vdupq_n_f32(alpha)), vdupq_n_f32(beta));
    case EP_ACT_LEAKY_RELU: return vbslq_f32(vcltq_f32(v, z), vmulq_n_f32(v, alpha), v);
    case EP_ACT_HARD_SIGMOID: {
        const float32x4_t t = vaddq_f32(vmulq_n_f32(v, alpha), vdupq_n_f32(beta));
        return vminq_f32(vmaxq_f32(t, z), vdupq_n_f32(1.0f));
    }
    case EP_ACT_HARD_SWISH: {
        const float32x4_t t = vaddq_f32(vdivq_f32(v, vdupq_n_f32(6.0f)), vdupq_n_f32(0.5f));
        return vmulq_f32(v, vminq_f32(vmaxq_f32(t, z), vdupq_n_f32(1.0f)));
    }
    case EP_ACT_NEG: return vnegq_f32(v);
    case EP_ACT_ABS: return vabsq_f32(v);
    /* FRINTN / FRINTM / FRINTP: IEEE round-to-integral in a fixed mode, equal to the reference's
     * act_round / floorf / ceilf bit for bit (signed zeros included) */
    case EP_ACT_ROUND: return vrndnq_f32(v);
    case EP_ACT_FLOOR: return vrndmq_f32(v);
    case EP_ACT_CEIL: return vrndpq_f32(v);
    default: return v;
    }
}

/* The 4 x 4 block v[row][lane] transposed in place: afterwards v[i][c] is what v[c][i] was. */
NEON_INLINE void neon_tr4(float32x4_t v[4]) {
    const float32x4x2_t a = vtrnq_f32(v[0], v[1]), b = vtrnq_f32(v[2], v[3]);
    v[0] = vcombine_f32(vget_low_f32(a.val[0]), vget_low_f32(b.val[0]));
    v[1] = vcombine_f32(vget_low_f32(a.val[1]), vget_low_f32(b.val[1]));
    v[2] = vcombine_f32(vget_high_f32(a.val[0]), vget_high_f32(b.val[0]));
    v[3] = vcombine_f32(vget_high_f32(a.val[1]), vget_high_f32(b.val[1]));
}

#endif
