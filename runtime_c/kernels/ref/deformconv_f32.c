/* DEFORMCONV reference kernel (f32, 2-D; plan_format.h ep_deformconv_params). Per image and group: every
 * (input channel, tap) row of the column buffer (scratch, [C/g*KH*KW, OH*OW]) holds the bilinear samples at
 * the offset positions times the mask, then each output channel is B + sum over the rows, in row order, of
 * W[m, row] * column[row] (a plain GEMM, one output row at a time).
 * Bilinear sampling, as the ONNX reference's (GridSample linear, zeros, align_corners 1): along W first,
 * (1 - t) x[.., j0] + t x[.., j0 + 1], then along H the same with the two rows' values; a corner outside
 * the map reads 0. Offsets are run-time data: a position outside (-1, H) x (-1, W), or NaN, samples 0. */
#include <math.h>
#include "ep_ops.h"

static float dc_pixel(const float *x, int64_t H, int64_t W, int64_t i, int64_t j) {
    return i >= 0 && i < H && j >= 0 && j < W ? x[i * W + j] : 0.0f;
}

static float dc_bilinear(const float *x, int64_t H, int64_t W, float h, float w) {
    if (!(h > -1.0f && h < (float)H && w > -1.0f && w < (float)W)) return 0.0f;
    const float fh = floorf(h), fw = floorf(w);
    const int64_t i0 = (int64_t)fh, j0 = (int64_t)fw;
    const float th = h - fh, tw = w - fw;
    const float r0 = (1.0f - tw) * dc_pixel(x, H, W, i0, j0) + tw * dc_pixel(x, H, W, i0, j0 + 1);
    const float r1 = (1.0f - tw) * dc_pixel(x, H, W, i0 + 1, j0) + tw * dc_pixel(x, H, W, i0 + 1, j0 + 1);
    return (1.0f - th) * r0 + th * r1;
}

int ep_ref_deformconv_f32(const ep_op *op) {
    const ep_deformconv_params *p = (const ep_deformconv_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *ot = op->in[2], *bt = ep_op_in(op, 3), *mt = ep_op_in(op, 4);
    const ep_tensor *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], M = yt->dims[1];
    const int64_t OH = yt->dims[2], OW = yt->dims[3], P = OH * OW;
    const int64_t KH = p->kernel[0], KW = p->kernel[1], taps = KH * KW, G = p->groups;
    const int64_t Cg = C / G, Mg = M / G, K = Cg * taps, Cog = C / p->offset_groups;
    const float *X = (const float *)xt->data, *Wt = (const float *)wt->data, *Off = (const float *)ot->data;
    const float *B = bt ? (const float *)bt->data : NULL, *Mask = mt ? (const float *)mt->data : NULL;
    float *Y = (float *)yt->data, *col = (float *)op->scratch;
    if (N == 0 || M == 0 || P == 0) return EP_OK;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t g = 0; g < G; g++) {
            for (int64_t cl = 0; cl < Cg; cl++) {
                const int64_t c = g * Cg + cl, og = c / Cog;
                const float *x = X + (n * C + c) * H * W;
                for (int64_t t = 0; t < taps; t++) {
                    const int64_t i = t / KW, j = t % KW, k = og * taps + t;
                    const float *oh_off = Off + ((n * p->offset_groups * taps + k) * 2) * P, *ow_off = oh_off + P;
                    const float *m = Mask ? Mask + (n * p->offset_groups * taps + k) * P : NULL;
                    float *row = col + (cl * taps + t) * P;
                    for (int64_t oh = 0; oh < OH; oh++) {
                        const float h0 = (float)(oh * p->stride[0] - p->pads[0] + i * p->dilation[0]);
                        for (int64_t ow = 0; ow < OW; ow++) {
                            const int64_t q = oh * OW + ow;
                            const float w0 = (float)(ow * p->stride[1] - p->pads[1] + j * p->dilation[1]);
                            const float v = dc_bilinear(x, H, W, h0 + oh_off[q], w0 + ow_off[q]);
                            row[q] = m ? v * m[q] : v;
                        }
                    }
                }
            }
            for (int64_t mo = g * Mg; mo < (g + 1) * Mg; mo++) {
                float *y = Y + (n * M + mo) * P;
                const float *wrow = Wt + mo * K;
                const float b = B ? B[mo] : 0.0f;
                for (int64_t q = 0; q < P; q++) y[q] = b;
                for (int64_t r = 0; r < K; r++) {
                    const float wr = wrow[r], *cr = col + r * P;
                    for (int64_t q = 0; q < P; q++) y[q] += wr * cr[q];
                }
            }
        }
    }
    return EP_OK;
}
