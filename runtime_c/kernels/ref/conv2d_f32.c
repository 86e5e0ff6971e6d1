/* Reference CONV2D, f32 (the numerical spec; see ep_conv2d_params).
 *
 *   Y[n,m,oh,ow] = act( (sum_{c,kh,kw} X[n, g*CG + c, ih, iw] * W[m, c, kh, kw]) + B[m] + R[n,m,oh,ow] )
 *   with g = m / (M/groups), CG = C/groups, ih = oh*sh - pt + kh*dh, iw = ow*sw - pl + kw*dw;
 *   taps with ih or iw outside the input contribute nothing (zero padding).
 *
 * Accumulation order, in float: each output starts at 0.0f and receives its taps in
 * lexicographic (c, kh, kw) order; then B[m] is added, then R, then act is applied.
 * Loop order: one output plane (n, m) at a time; for each tap, the rows and columns of
 * the plane that see a valid input cell are precomputed (rl_conv_plane, ref_util.h) so the inner
 * loop is a plain multiply-add over contiguous output columns. */
#include "ep_ops.h"
#include "ref_util.h"

/* One tap over the output columns it reaches (unit stride kept apart: the common case vectorises). */
static void conv_row(float *yr, const float *xr, float wv, int64_t ow0, int64_t ow1, int64_t off, int64_t sw,
                     int64_t W) {
    (void)W;
    if (sw == 1) {
        for (int64_t ow = ow0; ow < ow1; ow++) yr[ow] += wv * xr[ow + off];
    } else {
        for (int64_t ow = ow0; ow < ow1; ow++) yr[ow] += wv * xr[ow * sw + off];
    }
}

int ep_ref_conv2d_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    if (rl_is_empty(yt)) return EP_OK;

    const int64_t N = xt->dims[0], C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = wt->dims[0], KH = wt->dims[2], KW = wt->dims[3];
    const int64_t OH = yt->dims[2], OW = yt->dims[3];
    const int64_t CG = C / p->groups, MG = M / p->groups;
    const float *x = (const float *)xt->data;
    const float *w = (const float *)wt->data;
    const float *b = bt ? (const float *)bt->data : NULL;
    const float *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;

    for (int64_t n = 0; n < N; n++) {
        for (int64_t m = 0; m < M; m++) {
            const int64_t g = m / MG;
            const int64_t plane_off = (n * M + m) * OH * OW;
            float *yp = y + plane_off;
            const float *wm = w + m * CG * KH * KW;
            for (int64_t i = 0; i < OH * OW; i++) yp[i] = 0.0f;

            rl_conv_plane(x + (n * C + g * CG) * H * W, wm, CG, H, W, OH, OW, KH, KW, p, yp, conv_row);

            if (b) {
                const float bv = b[m];
                for (int64_t i = 0; i < OH * OW; i++) yp[i] += bv;
            }
            if (r) {
                const float *rp = r + plane_off;
                for (int64_t i = 0; i < OH * OW; i++) yp[i] += rp[i];
            }
            if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, yp, OH * OW, p->act_alpha, p->act_beta);
        }
    }
    return EP_OK;
}
