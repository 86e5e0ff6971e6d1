/* NEON MAXPOOL, AVGPOOL, GLOBAL_AVGPOOL f32 (variant 0; semantics of kernels/ref/pool_f32.c).
 *
 * MAX/AVG: per output row, the columns whose whole window lies inside the input ("interior") run
 * 4 outputs at a time, taps in the reference's (kh, kw) order; stride 1 and 2 read contiguous
 * vectors (vld1q / vld2q), other strides gather lanes. Border columns use the reference's scalar
 * loop. MAX keeps the reference's "v > m" update (NaN inputs are skipped), AVG sums from 0.0f in
 * tap order and divides: both equal the reference exactly.
 * GLOBAL_AVGPOOL sums each plane in 16 lanes, then the lanes pairwise: a reordered float sum, within
 * n * 2^-23 * sum|x| / n of the reference (see tests/c/test_neon_kernels.c). */
#include <arm_neon.h>
#include <float.h>
#include "ep_ops.h"
#include "ref/ref_util.h"
#include "neon.h"

typedef struct pg {
    int64_t H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
} pg;

static void pg_init(const ep_op *op, pg *g) {
    const ep_pool_params *p = (const ep_pool_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    g->H = x->dims[2]; g->W = x->dims[3]; g->OH = y->dims[2]; g->OW = y->dims[3];
    g->KH = p->kernel[0]; g->KW = p->kernel[1]; g->sh = p->stride[0]; g->sw = p->stride[1];
    g->dh = p->dilation[0]; g->dw = p->dilation[1];
    g->pt = p->pads[0]; g->pl = p->pads[1]; g->pb = p->pads[2]; g->pr = p->pads[3];
}

/* 4 inputs xr[i*sw], i < 4 (all in range; for sw 2 the 8th float read by vld2q must be too). */
static inline float32x4_t ld4s(const float *xr, int64_t sw, int safe2) {
    if (sw == 1) return vld1q_f32(xr);
    if (sw == 2 && safe2) return vld2q_f32(xr).val[0];
    float32x4_t v = vdupq_n_f32(xr[0]);
    v = vsetq_lane_f32(xr[sw], v, 1);
    v = vsetq_lane_f32(xr[2 * sw], v, 2);
    return vsetq_lane_f32(xr[3 * sw], v, 3);
}

/* Output columns [*lo, *hi) whose taps all lie in [0, W). */
static void interior(const pg *g, int64_t *lo, int64_t *hi) {
    int64_t a, b, c, d;
    rl_tap_range(-g->pl, g->sw, g->OW, g->W, &a, &b);                          /* tap kw = 0 valid */
    rl_tap_range((g->KW - 1) * g->dw - g->pl, g->sw, g->OW, g->W, &c, &d);   /* last tap valid */
    *lo = a > c ? a : c;
    *hi = b < d ? b : d;
    if (*hi < *lo) *hi = *lo;
}

int ep_neon_maxpool_f32(const ep_op *op) {
    pg g;
    pg_init(op, &g);
    if (rl_is_empty(op->out[0])) return EP_OK;
    const int64_t planes = (int64_t)op->in[0]->dims[0] * op->in[0]->dims[1];
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    int64_t lo, hi;
    interior(&g, &lo, &hi);
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * g.H * g.W;
        float *yp = y + pl * g.OH * g.OW;
        for (int64_t oh = 0; oh < g.OH; oh++) {
            const int64_t h0 = oh * g.sh - g.pt;
            int64_t kh0, kh1;
            rl_tap_range(h0, g.dh, g.KH, g.H, &kh0, &kh1);
            float *yr = yp + oh * g.OW;
            int64_t ow = 0;
            for (; ow < g.OW; ow++) {
                if (ow >= lo && ow + 4 <= hi) {
                    const float32x4_t mn = vdupq_n_f32(-FLT_MAX);
                    float32x4_t m = mn;
                    const int64_t w0 = ow * g.sw - g.pl;
                    for (int64_t kh = kh0; kh < kh1; kh++) {
                        const float *xr = xp + (h0 + kh * g.dh) * g.W + w0;
                        for (int64_t kw = 0; kw < g.KW; kw++) {
                            const int64_t c0 = w0 + kw * g.dw;
                            const float32x4_t v = ld4s(xr + kw * g.dw, g.sw, c0 + 7 < g.W);
                            m = vbslq_f32(vcgtq_f32(v, m), v, m);
                        }
                    }
                    vst1q_f32(yr + ow, m);
                    ow += 3;
                    continue;
                }
                const int64_t w0 = ow * g.sw - g.pl;
                int64_t kw0, kw1;
                rl_tap_range(w0, g.dw, g.KW, g.W, &kw0, &kw1);
                float m = -FLT_MAX;
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = xp + (h0 + kh * g.dh) * g.W;
                    for (int64_t kw = kw0; kw < kw1; kw++) {
                        const float v = xr[w0 + kw * g.dw];
                        if (v > m) m = v;
                    }
                }
                yr[ow] = m;
            }
        }
    }
    return EP_OK;
}

int ep_neon_avgpool_f32(const ep_op *op) {
    const ep_pool_params *p = (const ep_pool_params *)op->params;
    pg g;
    pg_init(op, &g);
    if (rl_is_empty(op->out[0])) return EP_OK;
    const int64_t planes = (int64_t)op->in[0]->dims[0] * op->in[0]->dims[1];
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    int64_t lo, hi;
    interior(&g, &lo, &hi);
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * g.H * g.W;
        float *yp = y + pl * g.OH * g.OW;
        for (int64_t oh = 0; oh < g.OH; oh++) {
            const int64_t h0 = oh * g.sh - g.pt;
            int64_t kh0, kh1, ph0, ph1;
            rl_tap_range(h0, g.dh, g.KH, g.H, &kh0, &kh1);
            rl_tap_range(h0 + g.pt, g.dh, g.KH, g.H + g.pt + g.pb, &ph0, &ph1);
            float *yr = yp + oh * g.OW;
            for (int64_t ow = 0; ow < g.OW; ow++) {
                const int64_t w0 = ow * g.sw - g.pl;
                if (ow >= lo && ow + 4 <= hi) {
                    /* interior: every kw tap is valid and inside the padded extent */
                    float32x4_t s = vdupq_n_f32(0.0f);
                    for (int64_t kh = kh0; kh < kh1; kh++) {
                        const float *xr = xp + (h0 + kh * g.dh) * g.W + w0;
                        for (int64_t kw = 0; kw < g.KW; kw++)
                            s = vaddq_f32(s, ld4s(xr + kw * g.dw, g.sw, w0 + kw * g.dw + 7 < g.W));
                    }
                    const int64_t count = p->count_include_pad ? (ph1 - ph0) * g.KW : (kh1 - kh0) * g.KW;
                    s = count > 0 ? vdivq_f32(s, vdupq_n_f32((float)count)) : vdupq_n_f32(0.0f);
                    vst1q_f32(yr + ow, s);
                    ow += 3;
                    continue;
                }
                int64_t kw0, kw1, pw0, pw1;
                rl_tap_range(w0, g.dw, g.KW, g.W, &kw0, &kw1);
                rl_tap_range(w0 + g.pl, g.dw, g.KW, g.W + g.pl + g.pr, &pw0, &pw1);
                float s = 0.0f;
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = xp + (h0 + kh * g.dh) * g.W;
                    for (int64_t kw = kw0; kw < kw1; kw++) s += xr[w0 + kw * g.dw];
                }
                const int64_t count = p->count_include_pad ? (ph1 - ph0) * (pw1 - pw0) : (kh1 - kh0) * (kw1 - kw0);
                yr[ow] = count > 0 ? s / (float)count : 0.0f;
            }
        }
    }
    return EP_OK;
}

int ep_neon_global_avgpool_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0];
    const int64_t planes = (int64_t)xt->dims[0] * xt->dims[1];
    if (planes == 0) return EP_OK;
    int64_t size = rl_is_empty(xt) ? 0 : 1;
    for (int i = 2; i < xt->rank && size != 0; i++) size *= xt->dims[i];
    const float *x = (const float *)xt->data;
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
