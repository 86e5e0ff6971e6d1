/* AVX2+FMA depthwise CONV2D (variant DEPTHWISE: groups == C == M, any kernel, stride, dilation, pads).
 *
 * Per channel, the input plane is copied once into scratch, zero padded and split into stride
 * phases (phase q of padded row r holds columns q, q+SW, q+2*SW, ...), so that every tap of every
 * output row is a contiguous vector load: no border branches, no gathers, any stride (the NEON
 * kernel uses the same buffer with q registers). Then each output row is computed in blocks of
 * 32 columns (4 independent accumulators), 8-column blocks and a masked tail; taps in (kh, kw)
 * order from 0.0f, then bias, residual and activation (the reference order). */
#include <string.h>
#include "dw_common.h"
#include "x86.h"
#include "x86_act.h"

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
            /* row[i] = x[sw*i + q - pl] where in range */
            int64_t i0 = pl - q > 0 ? (pl - q + sw - 1) / sw : 0;          /* first i with col >= 0 */
            int64_t i1 = W + pl - q > 0 ? (W + pl - q + sw - 1) / sw : 0;   /* first i with col >= W */
            if (i0 > PW) i0 = PW;
            if (i1 > PW) i1 = PW;
            if (i1 < i0) i1 = i0;
            memset(row, 0, (size_t)i0 * 4);
            if (sw == 1) {
                memcpy(row + i0, xr + i0 - pl, (size_t)(i1 - i0) * 4);
            } else if (sw == 2) {
                const float *src = xr + q - pl;   /* row[i] = src[2i] */
                int64_t i = i0;
                for (; i + 8 <= i1 && 2 * i + 16 + q - pl <= W; i += 8) {
                    const __m256 v0 = _mm256_loadu_ps(src + 2 * i), v1 = _mm256_loadu_ps(src + 2 * i + 8);
                    const __m256 ev = _mm256_shuffle_ps(v0, v1, _MM_SHUFFLE(2, 0, 2, 0));
                    _mm256_storeu_ps(row + i, _mm256_castpd_ps(_mm256_permute4x64_pd(_mm256_castps_pd(ev), 0xD8)));
                }
                for (; i < i1; i++) row[i] = src[2 * i];
            } else {
                for (int64_t i = i0; i < i1; i++) row[i] = xr[sw * i + q - pl];
            }
            memset(row + i1, 0, (size_t)(PW - i1) * 4);
        }
    }
}

static inline __attribute__((always_inline)) __m256 dw_epi(__m256 acc, __m256 bias, const float *r, __m256i m,
                                                          int tail, const ep_conv2d_params *p) {
    acc = _mm256_add_ps(acc, bias);
    if (r) acc = _mm256_add_ps(acc, tail ? _mm256_maskload_ps(r, m) : _mm256_loadu_ps(r));
    return x86_act8(p->act, p->act_alpha, p->act_beta, acc);
}

/* 3x3 taps with the weights in registers: 16- and 8-column blocks and a masked tail per output row. */
static void dw_rows_3x3(const float *pad, const float *wc, __m256 bias, float *y, const float *res, int64_t OH,
                        int64_t OW, int64_t row_step, int64_t kh_step, const int64_t *kwo, __m256i tail_mask,
                        const ep_conv2d_params *p) {
    const __m256 w0 = _mm256_broadcast_ss(wc + 0), w1 = _mm256_broadcast_ss(wc + 1), w2 = _mm256_broadcast_ss(wc + 2);
    const __m256 w3 = _mm256_broadcast_ss(wc + 3), w4 = _mm256_broadcast_ss(wc + 4), w5 = _mm256_broadcast_ss(wc + 5);
    const __m256 w6 = _mm256_broadcast_ss(wc + 6), w7 = _mm256_broadcast_ss(wc + 7), w8 = _mm256_broadcast_ss(wc + 8);
    const int64_t o0 = kwo[0], o1 = kwo[1], o2 = kwo[2];
#define DW_TAPS(acc, off)                                                                               \
    acc = _mm256_mul_ps(w0, _mm256_loadu_ps(r0 + o0 + (off)));                                          \
    acc = _mm256_fmadd_ps(w1, _mm256_loadu_ps(r0 + o1 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w2, _mm256_loadu_ps(r0 + o2 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w3, _mm256_loadu_ps(r1 + o0 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w4, _mm256_loadu_ps(r1 + o1 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w5, _mm256_loadu_ps(r1 + o2 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w6, _mm256_loadu_ps(r2 + o0 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w7, _mm256_loadu_ps(r2 + o1 + (off)), acc);                                   \
    acc = _mm256_fmadd_ps(w8, _mm256_loadu_ps(r2 + o2 + (off)), acc)
    for (int64_t oh = 0; oh < OH; oh++) {
        const float *r0 = pad + oh * row_step, *r1 = r0 + kh_step, *r2 = r1 + kh_step;
        float *yr = y + oh * OW;
        const float *rr = res ? res + oh * OW : NULL;
        int64_t ow = 0;
        for (; ow + 16 <= OW; ow += 16) {
            __m256 a0, a1;
            DW_TAPS(a0, ow);
            DW_TAPS(a1, ow + 8);
            _mm256_storeu_ps(yr + ow, dw_epi(a0, bias, rr ? rr + ow : NULL, tail_mask, 0, p));
            _mm256_storeu_ps(yr + ow + 8, dw_epi(a1, bias, rr ? rr + ow + 8 : NULL, tail_mask, 0, p));
        }
        for (; ow < OW; ow += 8) {
            const int tail = OW - ow < 8;
            __m256 a0;
            DW_TAPS(a0, ow);
            a0 = dw_epi(a0, bias, rr ? rr + ow : NULL, tail_mask, tail, p);
            if (tail)
                _mm256_maskstore_ps(yr + ow, tail_mask, a0);
            else
                _mm256_storeu_ps(yr + ow, a0);
        }
    }
#undef DW_TAPS
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
    const int vec_act = x86_act_vec(p->act);
    float *pad = (float *)op->scratch + (int64_t)t * j->slot;
    int64_t lo, hi;
    ep_split_range(j->planes, j->parts, t, &lo, &hi);
    const int rem = (int)(OW % 8);
    const __m256i tail_mask = x86_mask8(rem);
    /* offset of tap column kw in a phase-split row (no division in the loops below) */
    int64_t kwo_small[32];
    const int small = KW <= 32;
    for (int64_t kw = 0; small && kw < KW; kw++) kwo_small[kw] = (kw * dw % sw) * PW + kw * dw / sw;
    for (int64_t plane = lo; plane < hi; plane++) {
        const int64_t c = plane % C;
        dw_fill(pad, (const float *)xt->data + plane * H * W, H, W, Hp, sw, PW, p->pads[0], p->pads[1]);
        const float *wc = (const float *)wt->data + c * KH * KW;
        const __m256 bias = _mm256_set1_ps(bt ? ((const float *)bt->data)[c] : 0.0f);
        float *y = (float *)yt->data + plane * OH * OW;
        const float *res = rt ? (const float *)rt->data + plane * OH * OW : NULL;
        if (KH == 3 && KW == 3 && small) {
            dw_rows_3x3(pad, wc, bias, y, res, OH, OW, sh * sw * PW, dh * sw * PW, kwo_small, tail_mask, p);
            if (!vec_act) ep_act_apply_f32(p->act, y, OH * OW, p->act_alpha, p->act_beta);
            continue;
        }
        for (int64_t oh = 0; oh < OH; oh++) {
            float *yr = y + oh * OW;
            const float *rr = res ? res + oh * OW : NULL;
            int64_t ow = 0;
            for (; ow + 32 <= OW; ow += 32) {
                __m256 a0 = _mm256_setzero_ps(), a1 = a0, a2 = a0, a3 = a0;
                for (int64_t kh = 0; kh < KH; kh++) {
                    const float *prow = pad + (oh * sh + kh * dh) * sw * PW + ow;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const float *s = prow + (small ? kwo_small[kw] : (kw * dw % sw) * PW + kw * dw / sw);
                        const __m256 wv = _mm256_broadcast_ss(wc + kh * KW + kw);
                        a0 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s), a0);
                        a1 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 8), a1);
                        a2 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 16), a2);
                        a3 = _mm256_fmadd_ps(wv, _mm256_loadu_ps(s + 24), a3);
                    }
                }
                _mm256_storeu_ps(yr + ow, dw_epi(a0, bias, rr ? rr + ow : NULL, tail_mask, 0, p));
                _mm256_storeu_ps(yr + ow + 8, dw_epi(a1, bias, rr ? rr + ow + 8 : NULL, tail_mask, 0, p));
                _mm256_storeu_ps(yr + ow + 16, dw_epi(a2, bias, rr ? rr + ow + 16 : NULL, tail_mask, 0, p));
                _mm256_storeu_ps(yr + ow + 24, dw_epi(a3, bias, rr ? rr + ow + 24 : NULL, tail_mask, 0, p));
            }
            for (; ow < OW; ow += 8) {
                const int tail = OW - ow < 8;
                __m256 a0 = _mm256_setzero_ps();
                for (int64_t kh = 0; kh < KH; kh++) {
                    const float *prow = pad + (oh * sh + kh * dh) * sw * PW + ow;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const float *s = prow + (small ? kwo_small[kw] : (kw * dw % sw) * PW + kw * dw / sw);
                        a0 = _mm256_fmadd_ps(_mm256_broadcast_ss(wc + kh * KW + kw), _mm256_loadu_ps(s), a0);
                    }
                }
                a0 = dw_epi(a0, bias, rr ? rr + ow : NULL, tail_mask, tail, p);
                if (tail)
                    _mm256_maskstore_ps(yr + ow, tail_mask, a0);
                else
                    _mm256_storeu_ps(yr + ow, a0);
            }
            if (!vec_act) ep_act_apply_f32(p->act, yr, OW, p->act_alpha, p->act_beta);
        }
    }
}

int ep_x86_conv2d_dw_f32(const ep_op *op) {
    dw_job j;
    if (dw_plan(op, &j)) ep_parallel_for(op->pool, (uint32_t)j.parts, dw_task, &j);
    return EP_OK;
}
