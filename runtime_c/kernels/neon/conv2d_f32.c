/* NEON CONV2D f32, variant 0 (OIHW weights, no scratch).
 *
 *  - 1x1, stride 1, no padding (any groups): per image and group a row-major GEMM
 *    Y[MG, HW] = W[MG, CG] X[CG, HW] with bias-per-row, residual and activation fused (gemm_f32.c).
 *  - depthwise (groups == C == M) 3x3 and 5x5, stride 1 or 2, any padding and dilation: per output
 *    row, the columns whose taps all lie inside the input run 4 (and 16) at a time from registers,
 *    the border columns tap by tap in scalar code; taps in (kh, kw) order, then bias, residual, act.
 *  - anything else: the reference's loop nest (one output plane, taps in (c, kh, kw) order, each tap
 *    a multiply-add over the contiguous output columns it reaches) with the inner loop in q registers.
 * Every output sums its taps in the reference's order, with fused multiply-add. */
#include <arm_neon.h>
#include <math.h>
#include "ep_ops.h"
#include "ref/ref_util.h"
#include "neon.h"
#include "neon_act.h"
#include "neon_gemm.h"

static void conv_epilogue(float *yp, int64_t n, float bias, const float *rp, const ep_conv2d_params *p) {
    const float32x4_t bv = vdupq_n_f32(bias);
    const int va = neon_act_vector(p->act);
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        float32x4_t v = vaddq_f32(vld1q_f32(yp + i), bv);
        if (rp) v = vaddq_f32(v, vld1q_f32(rp + i));
        if (va) v = neon_act4(p->act, p->act_alpha, p->act_beta, v);
        vst1q_f32(yp + i, v);
    }
    for (; i < n; i++) {
        float v = yp[i] + bias;
        if (rp) v += rp[i];
        yp[i] = va ? ep_act_f32(p->act, v, p->act_alpha, p->act_beta) : v;
    }
    if (!va) ep_neon_act_apply(p->act, yp, n, p->act_alpha, p->act_beta);
}

/* 4 inputs xr[i*sw] (sw 1 or 2; safe2: the 8th float of a vld2q is inside the row). */
static inline float32x4_t ld4s(const float *xr, int64_t sw, int safe2) {
    if (sw == 1) return vld1q_f32(xr);
    if (safe2) return vld2q_f32(xr).val[0];
    float32x4_t v = vdupq_n_f32(xr[0]);
    v = vsetq_lane_f32(xr[2], v, 1);
    v = vsetq_lane_f32(xr[4], v, 2);
    return vsetq_lane_f32(xr[6], v, 3);
}

/* Depthwise KxK (K = 3 or 5 a compile-time constant), stride sw in {1, 2}. */
NEON_INLINE void dw_plane(const int K, const float *x, const float *w, float bias, const float *r, float *y,
                          int64_t H, int64_t W, int64_t OH, int64_t OW, int64_t sh, int64_t sw, int64_t dh,
                          int64_t dw, int64_t pt, int64_t pl, const ep_conv2d_params *p) {
    int64_t a0, a1, b0, b1;
    rl_tap_range(-pl, sw, OW, W, &a0, &a1);
    rl_tap_range((K - 1) * dw - pl, sw, OW, W, &b0, &b1);
    const int64_t lo = a0 > b0 ? a0 : b0, hi = (a1 < b1 ? a1 : b1) < lo ? lo : (a1 < b1 ? a1 : b1);
    for (int64_t oh = 0; oh < OH; oh++) {
        const int64_t h0 = oh * sh - pt;
        int64_t kh0, kh1;
        rl_tap_range(h0, dh, K, H, &kh0, &kh1);
        float *yr = y + oh * OW;
        for (int64_t ow = 0; ow < OW; ow++) {
            const int64_t w0 = ow * sw - pl;
            if (ow >= lo && ow + 4 <= hi) {
                float32x4_t acc = vdupq_n_f32(0.0f);
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = x + (h0 + kh * dh) * W + w0;
                    const float *wr = w + kh * K;
                    for (int kw = 0; kw < K; kw++)
                        acc = vfmaq_n_f32(acc, ld4s(xr + kw * dw, sw, w0 + kw * dw + 7 < W), wr[kw]);
                }
                vst1q_f32(yr + ow, acc);
                ow += 3;
                continue;
            }
            int64_t kw0, kw1;
            rl_tap_range(w0, dw, K, W, &kw0, &kw1);
            float s = 0.0f;
            for (int64_t kh = kh0; kh < kh1; kh++) {
                const float *xr = x + (h0 + kh * dh) * W + w0;
                for (int64_t kw = kw0; kw < kw1; kw++) s = fmaf(w[kh * K + kw], xr[kw * dw], s);
            }
            yr[ow] = s;
        }
    }
    conv_epilogue(y, OH * OW, bias, r, p);
}

/* One tap row of the reference's loop nest (rl_conv_plane) in q registers: stride 1 contiguous, stride 2
 * de-interleaved while the 8th float of a vld2q stays inside the row, the rest scalar; fused multiply-add. */
static inline void direct_row(float *yr, const float *xr, float wv, int64_t ow0, int64_t ow1, int64_t off, int64_t sw,
                              int64_t W) {
    int64_t ow = ow0;
    if (sw == 1) {
        for (; ow + 4 <= ow1; ow += 4)
            vst1q_f32(yr + ow, vfmaq_n_f32(vld1q_f32(yr + ow), vld1q_f32(xr + ow + off), wv));
    } else if (sw == 2) {
        for (; ow + 4 <= ow1 && ow * 2 + off + 7 < W; ow += 4)
            vst1q_f32(yr + ow, vfmaq_n_f32(vld1q_f32(yr + ow), vld2q_f32(xr + ow * 2 + off).val[0], wv));
    }
    for (; ow < ow1; ow++) yr[ow] = fmaf(wv, xr[ow * sw + off], yr[ow]);
}

int ep_neon_conv2d_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    if (rl_is_empty(yt)) return EP_OK;
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = wt->dims[0], KH = wt->dims[2], KW = wt->dims[3];
    const int64_t OH = yt->dims[2], OW = yt->dims[3], P = OH * OW;
    const int64_t G = p->groups, CG = C / G, MG = M / G;
    const float *x = (const float *)xt->data, *w = (const float *)wt->data;
    const float *b = bt ? (const float *)bt->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;
    const int64_t sh = p->stride[0], sw = p->stride[1];

    if (KH == 1 && KW == 1 && sh == 1 && sw == 1 && p->pads[0] == 0 && p->pads[1] == 0 && CG > 0) {
        /* pads at the end cannot be nonzero here without changing OH/OW; OH == H, OW == W */
        if (OH == H && OW == W) {
            for (int64_t n = 0; n < N; n++)
                for (int64_t g = 0; g < G; g++) {
                    const int64_t yo = (n * M + g * MG) * P;
                    const pk_epi e = {b ? b + g * MG : NULL, NULL, 0, r ? r + yo : NULL, P,
                                      p->act, p->act_alpha, p->act_beta};
                    ep_neon_gemm_rm(MG, P, CG, w + g * MG * CG, CG, x + (n * C + g * CG) * H * W, H * W, y + yo, P, &e);
                }
            return EP_OK;
        }
    }
    const int dw_ok = G == C && G == M && KH == KW && (KH == 3 || KH == 5) && (sw == 1 || sw == 2);
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            const int64_t plane = n * M + m, g = m / MG;
            float *yp = y + plane * P;
            const float *rp = r ? r + plane * P : NULL;
            const float *xg = x + (n * C + g * CG) * H * W;
            const float *wm = w + m * CG * KH * KW;
            if (dw_ok) {
                if (KH == 3)
                    dw_plane(3, xg, wm, b ? b[m] : 0.0f, rp, yp, H, W, OH, OW, sh, sw, p->dilation[0],
                             p->dilation[1], p->pads[0], p->pads[1], p);
                else
                    dw_plane(5, xg, wm, b ? b[m] : 0.0f, rp, yp, H, W, OH, OW, sh, sw, p->dilation[0],
                             p->dilation[1], p->pads[0], p->pads[1], p);
                continue;
            }
            for (int64_t i = 0; i < P; i++) yp[i] = 0.0f;
            rl_conv_plane(xg, wm, CG, H, W, OH, OW, KH, KW, p, yp, direct_row);
            conv_epilogue(yp, P, b ? b[m] : 0.0f, rp, p);
        }
    return EP_OK;
}
