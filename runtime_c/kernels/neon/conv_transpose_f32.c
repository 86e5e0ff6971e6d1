/* NEON kernel of CONV_TRANSPOSE2D variant PACKED (polyphase, plan_format.h): the driver of
 * kernels/conv_transpose_tmpl.h over a 6 x 16 register-blocked micro-kernel (24 q accumulators, 4 q of the
 * weight strip, the packed input panel as one q + one d load per k, FMLA by element), bias and activation
 * on the registers. */
#include <arm_neon.h>
#include "ep_ops.h"
#include "neon.h"
#include "neon_act.h"

static void ct_tile(int64_t K, const float *a, const float *b, const float *bias, int act, float alpha, float beta,
                    float *t) {
    float32x4_t acc[EP_PACK_MR][4];
    for (int i = 0; i < EP_PACK_MR; i++)
        for (int j = 0; j < 4; j++) acc[i][j] = vdupq_n_f32(0.0f);
    for (int64_t k = 0; k < K; k++) {
        const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8), b3 = vld1q_f32(b + 12);
        const float32x4_t a03 = vld1q_f32(a);
        const float32x2_t a45 = vld1_f32(a + 4);
#define CT_ROW_LQ(i, L)                                     \
        acc[i][0] = vfmaq_laneq_f32(acc[i][0], b0, a03, L); \
        acc[i][1] = vfmaq_laneq_f32(acc[i][1], b1, a03, L); \
        acc[i][2] = vfmaq_laneq_f32(acc[i][2], b2, a03, L); \
        acc[i][3] = vfmaq_laneq_f32(acc[i][3], b3, a03, L);
#define CT_ROW_L(i, L)                                      \
        acc[i][0] = vfmaq_lane_f32(acc[i][0], b0, a45, L);  \
        acc[i][1] = vfmaq_lane_f32(acc[i][1], b1, a45, L);  \
        acc[i][2] = vfmaq_lane_f32(acc[i][2], b2, a45, L);  \
        acc[i][3] = vfmaq_lane_f32(acc[i][3], b3, a45, L);
        CT_ROW_LQ(0, 0) CT_ROW_LQ(1, 1) CT_ROW_LQ(2, 2) CT_ROW_LQ(3, 3) CT_ROW_L(4, 0) CT_ROW_L(5, 1)
#undef CT_ROW_LQ
#undef CT_ROW_L
        a += EP_PACK_MR;
        b += EP_PACK_NR;
    }
    const int vec = neon_act_vector(act);
    for (int i = 0; i < EP_PACK_MR; i++) {
        float *ti = t + i * EP_PACK_NR;
        for (int j = 0; j < 4; j++) {
            float32x4_t v = acc[i][j];
            if (bias) v = vaddq_f32(v, vld1q_f32(bias + 4 * j));
            vst1q_f32(ti + 4 * j, vec ? neon_act4(act, alpha, beta, v) : v);
        }
        if (!vec) ep_neon_act_apply(act, ti, EP_PACK_NR, alpha, beta);
    }
}

#include "conv_transpose_tmpl.h"
