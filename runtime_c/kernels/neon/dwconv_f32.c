/* NEON depthwise CONV2D, variant DEPTHWISE (groups == C == M, any kernel, stride, dilation, pads).
 *
 * Same scratch layout as the x86 kernel (plan_format.h): per channel the input plane is copied once,
 * zero padded and split into stride phases (phase q of padded row r holds columns q, q+SW, ...), so
 * every tap of every output row is a contiguous q-register load with no border branches. Each output
 * row runs in blocks of 16 columns (4 accumulators), then 4, then a tail computed in a full vector
 * (the padded rows are ceil(OW/16)*16 wide) and stored lane by lane. Taps in (kh, kw) order from
 * 0.0f with fused multiply-add (zero taps add exactly nothing), then bias, residual, activation. */
#include <arm_neon.h>
#include <string.h>
#include "dw_common.h"
#include "neon.h"
#include "neon_act.h"

static void dw_fill(float *pad, const float *x, int64_t H, int64_t W, int64_t Hp, int64_t sw, int64_t PW,
                    int64_t pt, int64_t pl) {
    for (int64_t r = 0; r < Hp; r++) {
        const int64_t ih = r - pt;
        for (int64_t q = 0; q < sw; q++) {
            float *row = pad + (r * sw + q) * PW;
            if (ih < 0 || ih >= H) {
                memset(row, 0, (size_t)PW * 4);
                continue;
            }
            const float *xr = x + ih * W;
            int64_t i0 = pl - q > 0 ? (pl - q + sw - 1) / sw : 0;
            int64_t i1 = W + pl - q > 0 ? (W + pl - q + sw - 1) / sw : 0;
            if (i0 > PW) i0 = PW;
            if (i1 > PW) i1 = PW;
            if (i1 < i0) i1 = i0;
            memset(row, 0, (size_t)i0 * 4);
            if (sw == 1) {
                memcpy(row + i0, xr + i0 - pl, (size_t)(i1 - i0) * 4);
            } else {
                for (int64_t i = i0; i < i1; i++) row[i] = xr[sw * i + q - pl];
            }
            memset(row + i1, 0, (size_t)(PW - i1) * 4);
        }
    }
}

NEON_INLINE float32x4_t dw_epi(float32x4_t acc, float32x4_t bias, const float *r, const ep_conv2d_params *p) {
    acc = vaddq_f32(acc, bias);
    if (r) acc = vaddq_f32(acc, vld1q_f32(r));
    return neon_act4(p->act, p->act_alpha, p->act_beta, acc);   /* identity for non-vector kinds */
}

/* Planes (n, c) of part t of the op, each padded in scratch slot t (kernels/dw_common.h). */
static void dw_task(void *ctx, uint32_t t) {
    const dw_job *j = (const dw_job *)ctx;
    const ep_op *op = j->op;
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1];
    const ep_tensor *bt = op->n_in > 2 ? op->in[2] : NULL;
    const ep_tensor *rt = op->n_in > 3 ? op->in[3] : NULL;
    const ep_tensor *yt = op->out[0];
    const int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t OH = yt->dims[2], OW = yt->dims[3];
    const int64_t KH = p->kernel[0], KW = p->kernel[1], sh = p->stride[0], sw = p->stride[1];
    const int64_t dh = p->dilation[0], dw = p->dilation[1];
    const int64_t Hp = j->Hp, PW = j->PW;
    const int vec_act = neon_act_vector(p->act);
    float *pad = (float *)op->scratch + (int64_t)t * j->slot;
    int64_t lo, hi;
    ep_split_range(j->planes, j->parts, t, &lo, &hi);
    for (int64_t plane = lo; plane < hi; plane++) {
        const int64_t c = plane % C;
        dw_fill(pad, (const float *)xt->data + plane * H * W, H, W, Hp, sw, PW, p->pads[0], p->pads[1]);
        const float *wc = (const float *)wt->data + c * KH * KW;
        const float32x4_t bias = vdupq_n_f32(bt ? ((const float *)bt->data)[c] : 0.0f);
        float *y = (float *)yt->data + plane * OH * OW;
        const float *res = rt ? (const float *)rt->data + plane * OH * OW : NULL;
        for (int64_t oh = 0; oh < OH; oh++) {
            float *yr = y + oh * OW;
            const float *rr = res ? res + oh * OW : NULL;
            int64_t ow = 0;
            for (; ow + 16 <= OW; ow += 16) {
                float32x4_t a0 = vdupq_n_f32(0.0f), a1 = a0, a2 = a0, a3 = a0;
                for (int64_t kh = 0; kh < KH; kh++) {
                    const float *prow = pad + (oh * sh + kh * dh) * sw * PW + ow;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const float *s = prow + (kw * dw % sw) * PW + kw * dw / sw;
                        const float wv = wc[kh * KW + kw];
                        a0 = vfmaq_n_f32(a0, vld1q_f32(s), wv);
                        a1 = vfmaq_n_f32(a1, vld1q_f32(s + 4), wv);
                        a2 = vfmaq_n_f32(a2, vld1q_f32(s + 8), wv);
                        a3 = vfmaq_n_f32(a3, vld1q_f32(s + 12), wv);
                    }
                }
                vst1q_f32(yr + ow, dw_epi(a0, bias, rr ? rr + ow : NULL, p));
                vst1q_f32(yr + ow + 4, dw_epi(a1, bias, rr ? rr + ow + 4 : NULL, p));
                vst1q_f32(yr + ow + 8, dw_epi(a2, bias, rr ? rr + ow + 8 : NULL, p));
                vst1q_f32(yr + ow + 12, dw_epi(a3, bias, rr ? rr + ow + 12 : NULL, p));
            }
            for (; ow < OW; ow += 4) {
                float32x4_t a0 = vdupq_n_f32(0.0f);
                for (int64_t kh = 0; kh < KH; kh++) {
                    const float *prow = pad + (oh * sh + kh * dh) * sw * PW + ow;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const float *s = prow + (kw * dw % sw) * PW + kw * dw / sw;
                        a0 = vfmaq_n_f32(a0, vld1q_f32(s), wc[kh * KW + kw]);
                    }
                }
                if (OW - ow >= 4) {
                    vst1q_f32(yr + ow, dw_epi(a0, bias, rr ? rr + ow : NULL, p));
                } else {   /* tail: residual and result through a local vector */
                    float t[4] = {0.0f, 0.0f, 0.0f, 0.0f};
                    const int64_t nt = OW - ow;
                    if (rr) memcpy(t, rr + ow, (size_t)nt * 4);
                    vst1q_f32(t, dw_epi(a0, bias, rr ? t : NULL, p));
                    memcpy(yr + ow, t, (size_t)nt * 4);
                }
            }
            if (!vec_act) ep_act_apply_f32(p->act, yr, OW, p->act_alpha, p->act_beta);
        }
    }
}

int ep_neon_conv2d_dw_f32(const ep_op *op) {
    dw_job j;
    if (dw_plan(op, &j)) ep_parallel_for(op->pool, (uint32_t)j.parts, dw_task, &j);
    return EP_OK;
}
