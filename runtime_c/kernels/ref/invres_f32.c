/* Reference INVRES, f32: the fused inverted-residual block (see ep_invres_params), as three CONV2D references.
 *
 *   E[n,e,h,w]   = act0( sum_c X[n,c,h,w] * WE[e,c]  + BE[e] )            (E = X without WE)
 *   D[n,e,oh,ow] = act1( sum_{kh,kw} E[n,e,ih,iw] * WD[e,0,kh,kw]  + BD[e] ),  ih = oh*sh - pt + kh*dh, ...
 *   Y[n,m,oh,ow] = act2( sum_e D[n,e,oh,ow] * WP[m,e]  + BP[m] + R[n,m,oh,ow] )
 *
 * Accumulation order, in float, of each value: from 0.0f over c (e) in order, a depthwise tap in the padding
 * skipped; then the bias, then R, then act: ep_ref_conv2d_f32's order, so the block equals variant-0 CONV2D
 * ops bit for bit. WE and WP are read in their packed layout ([panel][k][MR], plan_format.h). It runs band by
 * band (kernels/invres_common.h): the rows of E a band reads in the slot's ring region (recomputed per band),
 * the band's D in its dout region. */
#include "ep_ops.h"
#include "invres_common.h"
#include "ref_util.h"

static float ir_act(const ep_invres_params *p, int i, float v) {
    return p->act[i] == EP_ACT_NONE ? v : ep_act_f32(p->act[i], v, p->act_alpha[i], p->act_beta[i]);
}

int ep_ref_invres_f32(const ep_op *op) {
    const ep_invres_params *p = (const ep_invres_params *)op->params;
    const ep_tensor *xt = op->in[0], *wet = op->in[1], *bet = op->in[2], *wdt = op->in[3], *bdt = op->in[4];
    const ep_tensor *wpt = op->in[5], *bpt = ep_op_in(op, 6), *rt = ep_op_in(op, 7), *yt = op->out[0];
    ir_geo g;
    ir_geo_init(&g, p, xt->dims[0], xt->dims[1], xt->dims[2], xt->dims[3], wdt->dims[0], yt->dims[1], yt->dims[2],
                yt->dims[3], wet != NULL);
    const int64_t C = g.C, H = g.H, W = g.W, CE = g.CE, M = g.M, OH = g.OH, OW = g.OW;
    const float *x = (const float *)xt->data, *wd = (const float *)wdt->data;
    const float *be = bet ? (const float *)bet->data : NULL;
    const float *bd = bdt ? (const float *)bdt->data : NULL, *bp = bpt ? (const float *)bpt->data : NULL;
    const float *r = rt ? (const float *)rt->data : NULL;
    float *y = (float *)yt->data;
    float *ebuf = (float *)op->scratch + g.ring;   /* E rows [lo, hi) of the band: CE * RR * W floats */
    float *dbuf = (float *)op->scratch + g.dout;   /* D of the band: CE * band * OW <= CE * PP floats */
    for (int64_t n = 0; n < g.N; n++) {
        const float *xn = x + n * C * H * W;
        for (int64_t o0 = 0; o0 < OH; o0 += g.band) {
            const int64_t o1 = o0 + g.band < OH ? o0 + g.band : OH;
            int64_t lo, hi;
            ir_rows(&g, o0, o1, &lo, &hi);
            if (wet)
                for (int64_t e = 0; e < CE; e++) {
                    const int64_t wm = (e / EP_PACK_MR) * C * EP_PACK_MR + e % EP_PACK_MR;   /* WE[e,c] at wm + c*MR */
                    for (int64_t q = lo * W; q < hi * W; q++) {
                        float s = 0.0f;
                        for (int64_t c = 0; c < C; c++)
                            s += xn[c * H * W + q] * ep_weight_f32(wet->data, wet->dtype, wm + c * EP_PACK_MR);
                        if (be) s += be[e];
                        ebuf[(e * g.RR + q / W - lo) * W + q % W] = ir_act(p, 0, s);
                    }
                }
            for (int64_t e = 0; e < CE; e++) {
                const float *we_ = wd + e * g.KH * g.KW;
                for (int64_t oh = o0; oh < o1; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        float s = 0.0f;
                        for (int64_t kh = 0; kh < g.KH; kh++)
                            for (int64_t kw = 0; kw < g.KW; kw++) {
                                const int64_t ih = oh * g.sh - g.pt + kh * g.dh, iw = ow * g.sw - g.pl + kw * g.dw;
                                if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
                                const float v = wet ? ebuf[(e * g.RR + ih - lo) * W + iw] : xn[(e * H + ih) * W + iw];
                                s += v * we_[kh * g.KW + kw];
                            }
                        if (bd) s += bd[e];
                        dbuf[(e * g.band + oh - o0) * OW + ow] = ir_act(p, 1, s);
                    }
            }
            for (int64_t m = 0; m < M; m++) {
                const int64_t wm = (m / EP_PACK_MR) * CE * EP_PACK_MR + m % EP_PACK_MR;   /* WP[m,e] at wm + e*MR */
                for (int64_t oh = o0; oh < o1; oh++)
                    for (int64_t ow = 0; ow < OW; ow++) {
                        float s = 0.0f;
                        for (int64_t e = 0; e < CE; e++)
                            s += dbuf[(e * g.band + oh - o0) * OW + ow] * ep_weight_f32(wpt->data, wpt->dtype, wm + e * EP_PACK_MR);
                        const int64_t at = ((n * M + m) * OH + oh) * OW + ow;
                        if (bp) s += bp[m];
                        if (r) s += r[at];
                        y[at] = ir_act(p, 2, s);
                    }
            }
        }
    }
    return EP_OK;
}
