/* Reference kernels of the channel-blocked layout C8 (plan_format.h, "Tensor layouts"): REORDER and CONV2D's
 * variants BLOCKED_DW, BLOCKED_PW and BLOCKED_CONV. The numerical spec of their ISA kernels.
 *
 * An element (n, c, h, w) of a C8 tensor [N,C,H,W] is at (((n*C/8 + c/8)*H + h)*W + w)*8 + c%8.
 * The convolutions compute what CONV2D variant 0 computes (ep_conv2d_params): each output starts at 0.0f and
 * receives its taps in (c, kh, kw) order, then B, then R, then the activation. BLOCKED_PW's and BLOCKED_CONV's
 * weights may be 16-bit (1.14), each element converted exactly to float32 where it is read (ep_weight_f32). */
#include "ep_ops.h"
#include "ref_util.h"

#define BLK EP_LAYOUT_BLOCK

static inline int64_t c8_at(int64_t n, int64_t c, int64_t h, int64_t w, int64_t C, int64_t H, int64_t W) {
    return (((n * (C / BLK) + c / BLK) * H + h) * W + w) * BLK + c % BLK;
}

int ep_ref_reorder_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const float *x = (const float *)xt->data;
    float *y = (float *)yt->data;
    const int to_c8 = yt->layout == EP_LAYOUT_C8;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++) {
                    const int64_t plain = ((n * C + c) * H + h) * W + w, blocked = c8_at(n, c, h, w, C, H, W);
                    if (to_c8)
                        y[blocked] = x[plain];
                    else
                        y[plain] = x[blocked];
                }
    return EP_OK;
}

/* The epilogue of one output element: + B[m], + R, activation (EP_CONV_ACT_PRELU: the slope S[m]). */
static inline float c8_epilogue(float acc, const ep_conv2d_params *p, const float *b, const float *r, int64_t m,
                                int64_t at, const float *s) {
    if (b) acc += b[m];
    if (r) acc += r[at];
    if (p->act == EP_CONV_ACT_PRELU) return acc < 0.0f ? s[m] * acc : acc;
    if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, &acc, 1, p->act_alpha, p->act_beta);
    return acc;
}

/* CONV2D's input 4, the PReLU slopes, or NULL */
static inline const float *c8_slopes(const ep_op *op) {
    const ep_tensor *s = ep_op_in(op, 4);
    return s ? (const float *)s->data : NULL;
}

/* Depthwise (groups == C == M), W as [C/8][KH*KW][8]. */
int ep_ref_conv2d_blocked_dw_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t OH = yt->dims[2], OW = yt->dims[3], KH = p->kernel[0], KW = p->kernel[1];
    const float *x = (const float *)xt->data, *w = (const float *)op->in[1]->data;
    const float *b = bt ? (const float *)bt->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = 0.0f;
                    for (int64_t kh = 0; kh < KH; kh++) {
                        const int64_t ih = oh * p->stride[0] - p->pads[0] + kh * p->dilation[0];
                        if (ih < 0 || ih >= H) continue;
                        for (int64_t kw = 0; kw < KW; kw++) {
                            const int64_t iw = ow * p->stride[1] - p->pads[1] + kw * p->dilation[1];
                            if (iw < 0 || iw >= W) continue;
                            acc += x[c8_at(n, c, ih, iw, C, H, W)] * w[((c / BLK) * KH * KW + kh * KW + kw) * BLK + c % BLK];
                        }
                    }
                    const int64_t at = c8_at(n, c, oh, ow, C, OH, OW);
                    y[at] = c8_epilogue(acc, p, b, r, c, at, NULL);
                }
    return EP_OK;
}

/* 1x1, stride 1, no pads, groups 1; W^T as GEMM-B strips [ceil(M/16)][C][16]. */
int ep_ref_conv2d_blocked_pw_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], M = yt->dims[1];
    const float *x = (const float *)xt->data;
    const void *w = op->in[1]->data;
    const int wdt = op->in[1]->dtype;
    const float *b = bt ? (const float *)bt->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t ww = 0; ww < W; ww++) {
                    float acc = 0.0f;
                    for (int64_t c = 0; c < C; c++)
                        acc += x[c8_at(n, c, h, ww, C, H, W)] *
                               ep_weight_f32(w, wdt, (m / EP_PACK_NR) * C * EP_PACK_NR + c * EP_PACK_NR + m % EP_PACK_NR);
                    const int64_t at = c8_at(n, m, h, ww, M, H, W);
                    y[at] = c8_epilogue(acc, p, b, r, m, at, c8_slopes(op));
                }
    return EP_OK;
}

/* Groups 1, any kernel, stride, dilation and pads; X in C8, PLAIN or NHWC; W^T as GEMM-B strips
 * [ceil(M/16)][K][16] with K in (c/8, kh, kw, c%8) order for a C8 X, (kh, kw, c) for an NHWC one, (c, kh, kw) for
 * a PLAIN one. */
int ep_ref_conv2d_blocked_conv_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], M = yt->dims[1];
    const int64_t OH = yt->dims[2], OW = yt->dims[3], KH = p->kernel[0], KW = p->kernel[1], K = C * KH * KW;
    const int c8 = xt->layout == EP_LAYOUT_C8, nhwc = xt->layout == EP_LAYOUT_NHWC, wdt = op->in[1]->dtype;
    const float *x = (const float *)xt->data;
    const void *w = op->in[1]->data;
    const float *b = bt ? (const float *)bt->data : NULL, *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;
    for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++)
            for (int64_t oh = 0; oh < OH; oh++)
                for (int64_t ow = 0; ow < OW; ow++) {
                    float acc = 0.0f;
                    for (int64_t c = 0; c < C; c++)
                        for (int64_t kh = 0; kh < KH; kh++) {
                            const int64_t ih = oh * p->stride[0] - p->pads[0] + kh * p->dilation[0];
                            if (ih < 0 || ih >= H) continue;
                            for (int64_t kw = 0; kw < KW; kw++) {
                                const int64_t iw = ow * p->stride[1] - p->pads[1] + kw * p->dilation[1];
                                if (iw < 0 || iw >= W) continue;
                                const int64_t k = c8     ? ((c / BLK * KH + kh) * KW + kw) * BLK + c % BLK
                                                  : nhwc ? (kh * KW + kw) * C + c
                                                         : (c * KH + kh) * KW + kw;
                                const float xv = c8     ? x[c8_at(n, c, ih, iw, C, H, W)]
                                                 : nhwc ? x[((n * H + ih) * W + iw) * C + c]
                                                        : x[((n * C + c) * H + ih) * W + iw];
                                acc += xv * ep_weight_f32(w, wdt, (m / EP_PACK_NR) * K * EP_PACK_NR + k * EP_PACK_NR + m % EP_PACK_NR);
                            }
                        }
                    const int64_t at = c8_at(n, m, oh, ow, M, OH, OW);
                    y[at] = c8_epilogue(acc, p, b, r, m, at, c8_slopes(op));
                }
    return EP_OK;
}
