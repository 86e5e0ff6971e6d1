/* NEON MAXPOOL, AVGPOOL, GLOBAL_AVGPOOL f32 (variant 0; semantics of kernels/ref/pool_f32.c).
 *
 * MAX/AVG: kernels/pool_tmpl.h over 4-lane vectors (the x86 kernels run the same template over 8):
 * interior columns 4 outputs at a time, taps in the reference's (kh, kw) order, stride 1 and 2 read
 * contiguous vectors (vld1q / vld2q), other strides gather lanes; border columns through the
 * reference's own scalar window (pool_common.h). MAX keeps the reference's "v > m" update (NaN inputs
 * are skipped), AVG sums from 0.0f in tap order and divides: both equal the reference exactly.
 * GLOBAL_AVGPOOL sums each plane in 16 lanes, then the lanes pairwise: a reordered float sum, within
 * n * 2^-23 * sum|x| / n of the reference (see tests/c/check_pool.c). */
#include <arm_neon.h>
#include <float.h>
#include "ep_ops.h"
#include "ref/ref_util.h"
#include "neon.h"

static inline __attribute__((always_inline)) float32x4_t pool_lds(const float *p, int64_t s) {
    float32x4_t v = vdupq_n_f32(p[0]);
    v = vsetq_lane_f32(p[s], v, 1);
    v = vsetq_lane_f32(p[2 * s], v, 2);
    return vsetq_lane_f32(p[3 * s], v, 3);
}

#define PV float32x4_t
#define PV_N 4
#define PV_LD1(p) vld1q_f32(p)
#define PV_LD2(p) vld2q_f32(p).val[0]
#define PV_LDS(p, s) pool_lds((p), (s))
#define PV_SET1(f) vdupq_n_f32(f)
#define PV_ST(p, v) vst1q_f32((p), (v))
#define PV_MAX(v, m) vbslq_f32(vcgtq_f32((v), (m)), (v), (m))
#define PV_ADD(a, b) vaddq_f32((a), (b))
#define PV_DIV(a, b) vdivq_f32((a), (b))
#include "pool_tmpl.h"

int ep_neon_global_avgpool_f32(const ep_op *op) {
    int64_t planes;
    const int64_t size = rl_plane_size(op->in[0], &planes);
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * size;
        float32x4_t s0 = vdupq_n_f32(0.0f), s1 = s0, s2 = s0, s3 = s0;
        int64_t i = 0;
        for (; i + 16 <= size; i += 16) {
            const float32x4x4_t v = vld1q_f32_x4(xp + i);
            s0 = vaddq_f32(s0, v.val[0]);
            s1 = vaddq_f32(s1, v.val[1]);
            s2 = vaddq_f32(s2, v.val[2]);
            s3 = vaddq_f32(s3, v.val[3]);
        }
        for (; i + 4 <= size; i += 4) s0 = vaddq_f32(s0, vld1q_f32(xp + i));
        float s = vaddvq_f32(vaddq_f32(vaddq_f32(s0, s1), vaddq_f32(s2, s3)));
        for (; i < size; i++) s += xp[i];
        y[pl] = size > 0 ? s / (float)size : 0.0f;
    }
    return EP_OK;
}
