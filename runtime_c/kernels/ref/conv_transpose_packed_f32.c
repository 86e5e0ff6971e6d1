/* Reference CONV_TRANSPOSE2D variant PACKED (polyphase; plan_format.h, kernels/conv_transpose_packed.h): the
 * packed weights Wp [ceil(R/NR)][K][NR] read in place, one output at a time.
 *
 * Output (m, oh, ow) lies on phase-grid pixel (qh, qw) = ((oh + pt) / sh, (ow + pl) / sw) with phases
 * (fh, fw) = ((oh + pt) % sh, (ow + pl) % sw), Wp column r = (m*sh + fh)*sw + fw:
 *   Y = act(sum_{c, jh, jw} X[c, qh - Dh(jh), qw - Dw(jw)] * Wp[(c, jh, jw), r] + B[m])
 * summed in k = (c, jh, jw) order from 0.0f, an input position outside X contributing x = 0 (as the ISA
 * driver's packed panels). For a fixed phase that is the (c, kh, kw) order of ep_ref_conv_transpose2d_f32, and
 * the taps Wp has no weight for (zeros) or that fall outside X add +-0, which changes no sum: equal to variant 0
 * bit for bit on finite weights. The bias is added only when present. */
#include "ep_ops.h"
#include "conv_transpose_packed.h"

int ep_ref_conv_transpose2d_packed_f32(const ep_op *op) {
    const ep_conv_transpose2d_params *p = (const ep_conv_transpose2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    const int64_t sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0], dw = p->dilation[1];
    const int64_t Th = ct_taps(p->kernel[0], dh, sh), Tw = ct_taps(p->kernel[1], dw, sw), K = C * Th * Tw;
    const float *x = (const float *)xt->data, *wp = (const float *)wt->data, *b = bt ? (const float *)bt->data : NULL;
    float *y = (float *)yt->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
            float *yp = y + (n * M + m) * OH * OW;
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    const int64_t qh = (oh + p->pads[0]) / sh, fh = (oh + p->pads[0]) % sh;
                    const int64_t qw = (ow + p->pads[1]) / sw, fw = (ow + p->pads[1]) % sw;
                    const int64_t r = (m * sh + fh) * sw + fw;
                    const float *wr = wp + (r / EP_PACK_NR) * K * EP_PACK_NR + r % EP_PACK_NR;   /* Wp[k, r]: wr[k*NR] */
                    float s = 0.0f;
                    for (int64_t c = 0, k = 0; c < C; c++)
                        for (int64_t jh = 0; jh < Th; jh++)
                            for (int64_t jw = 0; jw < Tw; jw++, k++) {
                                const int64_t ih = qh - ct_shift(jh, dh, sh), iw = qw - ct_shift(jw, dw, sw);
                                const int in = ih >= 0 && ih < H && iw >= 0 && iw < W;
                                s += (in ? x[((n * C + c) * H + ih) * W + iw] : 0.0f) * wr[k * EP_PACK_NR];
                            }
                    yp[oh * OW + ow] = b ? s + b[m] : s;
                }
            if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, yp, OH * OW, p->act_alpha, p->act_beta);
        }
    return EP_OK;
}
