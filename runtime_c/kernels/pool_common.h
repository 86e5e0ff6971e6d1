/* MAXPOOL / AVGPOOL geometry and the scalar window of one output, shared by the reference kernels
 * (kernels/ref/pool_f32.c: every output) and the ISA kernels (kernels/pool_tmpl.h: the border outputs,
 * whose windows are clipped). The semantics are documented in kernels/ref/pool_f32.c. */
#ifndef EP_POOL_COMMON_H
#define EP_POOL_COMMON_H
#include <float.h>
#include "ep_kernel.h"
#include "ref/ref_util.h"

typedef struct ep_pool_geom {
    int64_t planes, H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl, pb, pr;
    int64_t step;           /* floats between a plane's elements: 1, or 8 in layout C8 (one channel of a block) */
    int count_include_pad;
} ep_pool_geom;

/* The window rows of output row oh: valid taps [kh0, kh1), taps inside the padded extent [ph0, ph1). */
typedef struct ep_pool_row {
    int64_t h0, kh0, kh1, ph0, ph1;
} ep_pool_row;

static inline void ep_pool_geom_init(const ep_op *op, ep_pool_geom *g) {
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
    g->count_include_pad = p->count_include_pad;
    g->step = x->layout == EP_LAYOUT_C8 ? EP_LAYOUT_BLOCK : 1;
}

static inline void ep_pool_row_init(const ep_pool_geom *g, int64_t oh, ep_pool_row *r) {
    r->h0 = oh * g->sh - g->pt;
    rl_tap_range(r->h0, g->dh, g->KH, g->H, &r->kh0, &r->kh1);
    rl_tap_range(r->h0 + g->pt, g->dh, g->KH, g->H + g->pt + g->pb, &r->ph0, &r->ph1);
}

/* MAXPOOL output (row r, column ow) of plane xp (its element (h, w) at xp[(h*W + w)*step]): the largest valid tap in (kh, kw) order from -FLT_MAX
 * with '>' (a NaN tap is skipped). */
static inline float ep_pool_max_at(const ep_pool_geom *g, const ep_pool_row *r, const float *xp, int64_t ow) {
    const int64_t w0 = ow * g->sw - g->pl;
    int64_t kw0, kw1;
    rl_tap_range(w0, g->dw, g->KW, g->W, &kw0, &kw1);
    float m = -FLT_MAX;
    for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
        const float *xr = xp + (r->h0 + kh * g->dh) * g->W * g->step;
        for (int64_t kw = kw0; kw < kw1; kw++) {
            const float v = xr[(w0 + kw * g->dw) * g->step];
            if (v > m) m = v;
        }
    }
    return m;
}

/* MAXPOOL output with its index (variant INDICES): the value ep_pool_max_at gives, and in *at the offset
 * h * W + w within the plane of the tap that gives it, the first in (kh, kw) order that exceeds every tap
 * before it; when no tap exceeds -FLT_MAX (all NaN, -inf or -FLT_MAX) the first valid tap, and -1 when the
 * window has no valid tap. */
static inline float ep_pool_argmax_at(const ep_pool_geom *g, const ep_pool_row *r, const float *xp, int64_t ow,
                                      int64_t *at) {
    const int64_t w0 = ow * g->sw - g->pl;
    int64_t kw0, kw1;
    rl_tap_range(w0, g->dw, g->KW, g->W, &kw0, &kw1);
    float m = -FLT_MAX;
    *at = (r->kh0 < r->kh1 && kw0 < kw1) ? (r->h0 + r->kh0 * g->dh) * g->W + w0 + kw0 * g->dw : -1;
    for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
        const int64_t h = r->h0 + kh * g->dh;
        for (int64_t kw = kw0; kw < kw1; kw++) {
            const float v = xp[h * g->W + w0 + kw * g->dw];
            if (v > m) {
                m = v;
                *at = h * g->W + w0 + kw * g->dw;
            }
        }
    }
    return m;
}

/* AVGPOOL output: the float sum of the valid taps in (kh, kw) order over the count (0 when it is 0). */
static inline float ep_pool_avg_at(const ep_pool_geom *g, const ep_pool_row *r, const float *xp, int64_t ow) {
    const int64_t w0 = ow * g->sw - g->pl;
    int64_t kw0, kw1, pw0, pw1;
    rl_tap_range(w0, g->dw, g->KW, g->W, &kw0, &kw1);
    rl_tap_range(w0 + g->pl, g->dw, g->KW, g->W + g->pl + g->pr, &pw0, &pw1);
    float s = 0.0f;
    for (int64_t kh = r->kh0; kh < r->kh1; kh++) {
        const float *xr = xp + (r->h0 + kh * g->dh) * g->W * g->step;
        for (int64_t kw = kw0; kw < kw1; kw++) s += xr[(w0 + kw * g->dw) * g->step];
    }
    const int64_t count = g->count_include_pad ? (r->ph1 - r->ph0) * (pw1 - pw0) : (r->kh1 - r->kh0) * (kw1 - kw0);
    return count > 0 ? s / (float)count : 0.0f;
}

/* Output columns [*lo, *hi) whose KW taps all lie in [0, W) (then they all lie in the padded extent). */
static inline void ep_pool_interior(const ep_pool_geom *g, int64_t *lo, int64_t *hi) {
    int64_t a, b, c, d;
    rl_tap_range(-g->pl, g->sw, g->OW, g->W, &a, &b);                            /* tap kw = 0 valid */
    rl_tap_range((g->KW - 1) * g->dw - g->pl, g->sw, g->OW, g->W, &c, &d);      /* last tap valid */
    *lo = a > c ? a : c;
    *hi = b < d ? b : d;
    if (*hi < *lo) *hi = *lo;
}

#endif
