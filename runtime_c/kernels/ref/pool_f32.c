/* Reference MAXPOOL, AVGPOOL and GLOBAL_AVGPOOL, f32 (the numerical spec; see
 * ep_pool_params and ep_global_pool_params). Semantics follow onnxruntime.
 *
 * Window of output (oh, ow): taps ih = oh*sh - pt + kh*dh, iw = ow*sw - pl + kw*dw for
 * kh < KH, kw < KW. "Valid" taps lie inside the input.
 * MAXPOOL: the largest valid tap, scanned in (kh, kw) order from -FLT_MAX with '>' (so a
 *   NaN input is skipped, as in onnxruntime); a window without valid taps gives -FLT_MAX.
 * AVGPOOL: the float sum of the valid taps in (kh, kw) order, divided by
 *   count_include_pad ? (taps inside the padded extent [-pt, H + pb) x [-pl, W + pr))
 *                     : (valid taps).
 *   The padded count clips windows that run past the end padding (ceil_mode), as
 *   onnxruntime does. A zero divisor gives 0.
 * GLOBAL_AVGPOOL: the float sum of each (n, c) slice in memory order divided by its
 *   element count (0 for an empty slice). */
#include <float.h>
#include "ep_ops.h"
#include "ref_util.h"

typedef struct pool_geom {
    int64_t planes, H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
} pool_geom;

static void pool_geom_init(const ep_op *op, pool_geom *g) {
    const ep_pool_params *p = (const ep_pool_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    g->planes = (int64_t)x->dims[0] * x->dims[1];
    g->H = x->dims[2];
    g->W = x->dims[3];
    g->OH = y->dims[2];
    g->OW = y->dims[3];
    g->KH = p->kernel[0];
    g->KW = p->kernel[1];
    g->sh = p->stride[0];
    g->sw = p->stride[1];
    g->dh = p->dilation[0];
    g->dw = p->dilation[1];
    g->pt = p->pads[0];
    g->pl = p->pads[1];
    g->pb = p->pads[2];
    g->pr = p->pads[3];
}

int ep_ref_maxpool_f32(const ep_op *op) {
    pool_geom g;
    pool_geom_init(op, &g);
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    if (rl_is_empty(op->out[0])) return EP_OK;

    for (int64_t pl = 0; pl < g.planes; pl++) {
        const float *xp = x + pl * g.H * g.W;
        float *yp = y + pl * g.OH * g.OW;
        for (int64_t oh = 0; oh < g.OH; oh++) {
            const int64_t h0 = oh * g.sh - g.pt;
            int64_t kh0, kh1;
            rl_tap_range(h0, g.dh, g.KH, g.H, &kh0, &kh1);
            for (int64_t ow = 0; ow < g.OW; ow++) {
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
                yp[oh * g.OW + ow] = m;
            }
        }
    }
    return EP_OK;
}

int ep_ref_avgpool_f32(const ep_op *op) {
    const ep_pool_params *p = (const ep_pool_params *)op->params;
    pool_geom g;
    pool_geom_init(op, &g);
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    if (rl_is_empty(op->out[0])) return EP_OK;

    for (int64_t pl = 0; pl < g.planes; pl++) {
        const float *xp = x + pl * g.H * g.W;
        float *yp = y + pl * g.OH * g.OW;
        for (int64_t oh = 0; oh < g.OH; oh++) {
            const int64_t h0 = oh * g.sh - g.pt;
            int64_t kh0, kh1, ph0, ph1;
            rl_tap_range(h0, g.dh, g.KH, g.H, &kh0, &kh1);
            rl_tap_range(h0 + g.pt, g.dh, g.KH, g.H + g.pt + g.pb, &ph0, &ph1);
            for (int64_t ow = 0; ow < g.OW; ow++) {
                const int64_t w0 = ow * g.sw - g.pl;
                int64_t kw0, kw1, pw0, pw1;
                rl_tap_range(w0, g.dw, g.KW, g.W, &kw0, &kw1);
                rl_tap_range(w0 + g.pl, g.dw, g.KW, g.W + g.pl + g.pr, &pw0, &pw1);
                float s = 0.0f;
                for (int64_t kh = kh0; kh < kh1; kh++) {
                    const float *xr = xp + (h0 + kh * g.dh) * g.W;
                    for (int64_t kw = kw0; kw < kw1; kw++) s += xr[w0 + kw * g.dw];
                }
                const int64_t count = p->count_include_pad ? (ph1 - ph0) * (pw1 - pw0)
                                                           : (kh1 - kh0) * (kw1 - kw0);
                yp[oh * g.OW + ow] = count > 0 ? s / (float)count : 0.0f;
            }
        }
    }
    return EP_OK;
}

int ep_ref_global_avgpool_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0];
    const int64_t planes = (int64_t)xt->dims[0] * xt->dims[1];
    if (planes == 0) return EP_OK;
    /* planes > 0, so the slice size is at most X's element count unless it is 0 */
    int64_t size = rl_is_empty(xt) ? 0 : 1;
    for (int i = 2; i < xt->rank && size != 0; i++) size *= xt->dims[i];
    const float *x = (const float *)xt->data;
    float *y = (float *)op->out[0]->data;

    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * size;
        float s = 0.0f;
        for (int64_t i = 0; i < size; i++) s += xp[i];
        y[pl] = size > 0 ? s / (float)size : 0.0f;
    }
    return EP_OK;
}
