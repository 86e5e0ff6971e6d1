/* Reference MAXPOOL, AVGPOOL and GLOBAL_AVGPOOL, f32 (the numerical spec; see
 * ep_pool_params and ep_global_pool_params). Semantics follow onnxruntime.
 *
 * Window of output (oh, ow): taps ih = oh*sh - pt + kh*dh, iw = ow*sw - pl + kw*dw for
 * kh < KH, kw < KW. "Valid" taps lie inside the input.
 * MAXPOOL: the largest valid tap, scanned in (kh, kw) order from -FLT_MAX with '>' (so a
 *   NaN input is skipped, as in onnxruntime); a window without valid taps gives -FLT_MAX.
 *   Variant INDICES also writes Indices (I64): pl * H * W + ih * W + iw for the tap of plane pl
 *   (= n * C + c) that gives the value, the first in scan order (ep_pool_argmax_at in pool_common.h
 *   has the cases without such a tap); the ONNX flat index with storage_order 0.
 * AVGPOOL: the float sum of the valid taps in (kh, kw) order, divided by
 *   count_include_pad ? (taps inside the padded extent [-pt, H + pb) x [-pl, W + pr))
 *                     : (valid taps).
 *   The padded count clips windows that run past the end padding (ceil_mode), as
 *   onnxruntime does. A zero divisor gives 0.
 * GLOBAL_AVGPOOL: the float sum of each (n, c) slice in memory order divided by its
 *   element count (0 for an empty slice).
 * The C8 variants (X, and Y but for GLOBAL_AVGPOOL's, in layout C8) compute the same values in the same order,
 * each channel's elements 8 floats apart. */
#include "ep_ops.h"
#include "pool_common.h"   /* the geometry and the per-output windows, shared with the ISA kernels */
#include "ref_util.h"

/* Every output through the shared window helpers (the ISA kernels call the same ones for their borders);
 * MAXPOOL through ep_pool_argmax_at, whose value is ep_pool_max_at's, writing ix when it is not NULL. */
static int pool_run(const ep_op *op, int is_max, int64_t *ix) {
    ep_pool_geom g;
    ep_pool_geom_init(op, &g);
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    if (rl_is_empty(op->out[0])) return EP_OK;

    for (int64_t pl = 0; pl < g.planes; pl++) {
        const float *xp = x + pl * g.H * g.W;
        const int64_t base = pl * g.H * g.W;
        for (int64_t oh = 0; oh < g.OH; oh++) {
            ep_pool_row r;
            ep_pool_row_init(&g, oh, &r);
            const int64_t o = (pl * g.OH + oh) * g.OW;
            for (int64_t ow = 0; ow < g.OW; ow++) {
                if (!is_max) {
                    y[o + ow] = ep_pool_avg_at(&g, &r, xp, ow);
                    continue;
                }
                int64_t at;
                y[o + ow] = ep_pool_argmax_at(&g, &r, xp, ow, &at);
                if (ix) ix[o + ow] = at < 0 ? -1 : base + at;
            }
        }
    }
    return EP_OK;
}

int ep_ref_maxpool_f32(const ep_op *op) { return pool_run(op, 1, NULL); }
int ep_ref_maxpool_indices_f32(const ep_op *op) { return pool_run(op, 1, (int64_t *)op->out[1]->data); }
int ep_ref_avgpool_f32(const ep_op *op) { return pool_run(op, 0, NULL); }

int ep_ref_global_avgpool_f32(const ep_op *op) {
    int64_t planes;
    const int64_t size = rl_plane_size(op->in[0], &planes);
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl * size;
        float s = 0.0f;
        for (int64_t i = 0; i < size; i++) s += xp[i];
        y[pl] = size > 0 ? s / (float)size : 0.0f;
    }
    return EP_OK;
}

static int pool_c8_run(const ep_op *op, int is_max) {
    ep_pool_geom g;
    ep_pool_geom_init(op, &g);
    const float *x = (const float *)op->in[0]->data;
    float *y = (float *)op->out[0]->data;
    if (rl_is_empty(op->out[0])) return EP_OK;
    for (int64_t pl = 0; pl < g.planes; pl++) {   /* pl = n*C + c: block pl/8 (C % 8 == 0), lane pl%8; the
                                                    * windows of pool_common.h step 8 floats (g.step) */
        const float *xp = x + pl / EP_LAYOUT_BLOCK * g.H * g.W * EP_LAYOUT_BLOCK + pl % EP_LAYOUT_BLOCK;
        float *yp = y + pl / EP_LAYOUT_BLOCK * g.OH * g.OW * EP_LAYOUT_BLOCK + pl % EP_LAYOUT_BLOCK;
        for (int64_t oh = 0; oh < g.OH; oh++) {
            ep_pool_row r;
            ep_pool_row_init(&g, oh, &r);
            for (int64_t ow = 0; ow < g.OW; ow++)
                yp[(oh * g.OW + ow) * EP_LAYOUT_BLOCK] = is_max ? ep_pool_max_at(&g, &r, xp, ow) : ep_pool_avg_at(&g, &r, xp, ow);
        }
    }
    return EP_OK;
}

int ep_ref_maxpool_c8_f32(const ep_op *op) { return pool_c8_run(op, 1); }
int ep_ref_avgpool_c8_f32(const ep_op *op) { return pool_c8_run(op, 0); }

int ep_ref_global_avgpool_c8_f32(const ep_op *op) {
    const ep_tensor *xt = op->in[0];
    const int64_t planes = (int64_t)xt->dims[0] * xt->dims[1], size = (int64_t)xt->dims[2] * xt->dims[3];
    const float *x = (const float *)xt->data;
    float *y = (float *)op->out[0]->data;
    for (int64_t pl = 0; pl < planes; pl++) {
        const float *xp = x + pl / EP_LAYOUT_BLOCK * size * EP_LAYOUT_BLOCK + pl % EP_LAYOUT_BLOCK;
        float s = 0.0f;
        for (int64_t i = 0; i < size; i++) s += xp[i * EP_LAYOUT_BLOCK];
        y[pl] = size > 0 ? s / (float)size : 0.0f;
    }
    return EP_OK;
}
