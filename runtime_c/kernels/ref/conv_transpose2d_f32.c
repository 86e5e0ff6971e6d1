/* Reference CONV_TRANSPOSE2D, f32 (the numerical spec; see ep_conv_transpose2d_params).
 *
 * Every input cell scatters into the output:
 *   Y[n, m, ih*sh - pt + kh*dh, iw*sw - pl + kw*dw] += X[n, c, ih, iw] * W[c, m - g*MG, kh, kw]
 * for c in group g = m / MG (MG = M/groups, CG = C/groups); targets outside the output
 * are dropped (they are cut off by the pads). Then Y = act(Y + B[m]).
 *
 * Accumulation order, in float: each output starts at 0.0f and receives its contributions
 * in lexicographic (c, kh, kw) order (for fixed c, kh, kw at most one input cell maps to a
 * given output cell); then B[m] is added, then act is applied.
 * Loop order: one output plane (n, m) at a time, then c, kh, kw, then the input rows and
 * columns whose targets lie inside the plane (precomputed ranges, no branches inside). */
#include "ep_ops.h"
#include "ref_util.h"

int ep_ref_conv_transpose2d_f32(const ep_op *op) {
    const ep_conv_transpose2d_params *p = (const ep_conv_transpose2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *yt = op->out[0];
    if (rl_is_empty(yt)) return EP_OK;

    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t MG = wt->dims[1], KH = wt->dims[2], KW = wt->dims[3];
    const int64_t M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    const int64_t sh = p->stride[0], sw = p->stride[1];
    const int64_t dh = p->dilation[0], dw = p->dilation[1];
    const int64_t pt = p->pads[0], pl = p->pads[1];
    const int64_t CG = C / p->groups;
    const float *x = (const float *)xt->data;
    const float *w = (const float *)wt->data;
    const float *b = bt ? (const float *)bt->data : NULL;
    float *y = (float *)yt->data;

    for (int64_t n = 0; n < N; n++) {
        for (int64_t m = 0; m < M; m++) {
            const int64_t g = m / MG, mi = m - g * MG;
            float *yp = y + (n * M + m) * OH * OW;
            for (int64_t i = 0; i < OH * OW; i++) yp[i] = 0.0f;

            for (int64_t c = 0; c < CG; c++) {
                const int64_t ci = g * CG + c;
                const float *xc = x + (n * C + ci) * H * W;
                const float *wc = w + (ci * MG + mi) * KH * KW;
                for (int64_t kh = 0; kh < KH; kh++) {
                    /* input rows ih whose target oh = ih*sh + (kh*dh - pt) is in [0, OH) */
                    const int64_t offh = kh * dh - pt;
                    int64_t ih0, ih1;
                    rl_tap_range(offh, sh, H, OH, &ih0, &ih1);
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const float wv = wc[kh * KW + kw];
                        const int64_t offw = kw * dw - pl;
                        int64_t iw0, iw1;
                        rl_tap_range(offw, sw, W, OW, &iw0, &iw1);
                        for (int64_t ih = ih0; ih < ih1; ih++) {
                            const float *xr = xc + ih * W;
                            float *yr = yp + (ih * sh + offh) * OW;
                            for (int64_t iw = iw0; iw < iw1; iw++) yr[iw * sw + offw] += wv * xr[iw];
                        }
                    }
                }
            }

            if (b) {
                const float bv = b[m];
                for (int64_t i = 0; i < OH * OW; i++) yp[i] += bv;
            }
            if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, yp, OH * OW, p->act_alpha, p->act_beta);
        }
    }
    return EP_OK;
}
