/* What every int8 kernel (ref and ISA) computes identically: the requantisation of one accumulator and the
 * packing of convolution patches (plan_format.h, "int8"). Plain C, included by the reference. */
#ifndef EP_QUANT_COMMON_H
#define EP_QUANT_COMMON_H

#include <math.h>
#include <stdint.h>
#include <string.h>
#include "ep_kernel.h"

/* The normative requantisation: v = ((int64)acc * m + 2^(s-1)) >> s, clamped to [lo, hi] (the output's
 * bounds minus its zero point), plus zp. The shift is arithmetic (floor), so ties go up. */
static inline int32_t ep_requant(int32_t acc, int32_t m, int32_t s, int32_t lo, int32_t hi, int32_t zp) {
    int64_t v = ((int64_t)acc * m + ((int64_t)1 << (s - 1))) >> s;
    if (v < lo) v = lo;
    if (v > hi) v = hi;
    return (int32_t)v + zp;
}

/* QUANTIZE_ROWS of one row of K floats: its codes and scale (plan_format.h "Dynamic int8"). NaN is skipped by the
 * comparisons and quantised to 0; a row of zeros gets scale 0 and codes 0. */
static inline void ep_quantize_row(const float *x, int64_t K, int8_t *q, float *scale) {
    float a = 0.0f;
    for (int64_t k = 0; k < K; k++) {
        const float v = fabsf(x[k]);
        a = v > a ? v : a;
    }
    *scale = a / 127.0f;
    const float r = a > 0.0f ? 127.0f / a : 0.0f;
    for (int64_t k = 0; k < K; k++) {
        float v = x[k] * r;
        v = v != v ? 0.0f : nearbyintf(v);
        q[k] = (int8_t)(v < -127.0f ? -127.0f : v > 127.0f ? 127.0f : v);
    }
}

/* DQGEMM's output [i, j] from its exact accumulator: act((float)acc * (sa * sb) + C + R), one float32 operation
 * at a time (the build keeps -ffp-contract=off, so no step fuses), C [N] or [1|M, N], R [M, N]. */
static inline float ep_dq_out(const ep_gemm_params *p, int32_t acc, float sa, float sb, const ep_tensor *c,
                              const ep_tensor *r, int64_t i, int64_t j, int64_t N) {
    const float s = sa * sb;
    float v = (float)acc * s;
    if (c) v += ((const float *)c->data)[c->rank == 1 || c->dims[0] == 1 ? j : i * N + j];
    if (r) v += ((const float *)r->data)[i * N + j];
    return p->act == EP_ACT_NONE ? v : ep_act_f32(p->act, v, p->act_alpha, p->act_beta);
}

/* QADD of one pair of codes (plan_format.h ep_qadd_params). */
static inline int8_t ep_qadd1(const ep_qadd_params *p, int32_t a, int32_t b) {
    const int64_t ra = ((int64_t)(a - p->a_zero) * (1 << 20) * p->a_mult + ((int64_t)1 << (p->a_shift - 1))) >> p->a_shift;
    const int64_t rb = ((int64_t)(b - p->b_zero) * (1 << 20) * p->b_mult + ((int64_t)1 << (p->b_shift - 1))) >> p->b_shift;
    return (int8_t)ep_requant((int32_t)(ra + rb), p->y_mult, p->y_shift, p->y_min - p->y_zero, p->y_max - p->y_zero,
                              p->y_zero);
}

/* The geometry of one QCONV2D group as a product: out[m, q] = sum_k W[m, k] * patch[q, k] over the output
 * positions q = oh * OW + ow of a plane. */
typedef struct ep_qconv_geo {
    int64_t H, W, OH, OW, KH, KW, CG, K;
    int32_t sh, sw, dh, dw, pt, pl;
    int8_t pad;                /* the value outside X: its zero point */
} ep_qconv_geo;

static inline void ep_qconv_geo_init(ep_qconv_geo *g, const ep_qconv2d_params *p, const ep_tensor *x,
                                     const ep_tensor *y) {
    g->H = x->dims[2], g->W = x->dims[3], g->OH = y->dims[2], g->OW = y->dims[3];
    g->KH = p->kernel[0], g->KW = p->kernel[1], g->CG = x->dims[1] / p->groups;
    g->K = g->CG * g->KH * g->KW;
    g->sh = p->stride[0], g->sw = p->stride[1], g->dh = p->dilation[0], g->dw = p->dilation[1];
    g->pt = p->pads[0], g->pl = p->pads[1];
    g->pad = (int8_t)p->x_zero;
}

/* A depthwise plane one column wide (W = KW = OW = 1, no left pad: a convolution along H only, as audio models
 * over [T, 1] maps have) is the same bytes as one row: the geometry swapped to H = 1, so that the kernels, which
 * vectorise along W, run along T. */
static inline void ep_qconv_geo_column_as_row(ep_qconv_geo *g) {
    if (g->W != 1 || g->KW != 1 || g->OW != 1 || g->pl != 0 || g->H == 1) return;
    const ep_qconv_geo c = *g;
    g->H = 1, g->W = c.H, g->OH = 1, g->OW = c.OH, g->KH = 1, g->KW = c.KH;
    g->sh = c.sw, g->sw = c.sh, g->dh = c.dw, g->dw = c.dh, g->pt = 0, g->pl = c.pt;
}

/* Element k = (c, kh, kw) of the patch of output position (oh, ow) in the group's input planes xg. */
static inline int8_t ep_qconv_tap(const ep_qconv_geo *g, const int8_t *xg, int64_t oh, int64_t ow, int64_t k) {
    const int64_t c = k / (g->KH * g->KW), r = k % (g->KH * g->KW);
    const int64_t ih = oh * g->sh - g->pt + (r / g->KW) * g->dh, iw = ow * g->sw - g->pl + (r % g->KW) * g->dw;
    if (ih < 0 || ih >= g->H || iw < 0 || iw >= g->W) return g->pad;
    return xg[(c * g->H + ih) * g->W + iw];
}

/* The patch of output position q (its K = CG KH KW taps in (c, kh, kw) order, pad where a tap lies outside the
 * plane) as the contiguous bytes d[0, K), then zeros up to KP: a window inside the plane read straight from its
 * input rows (a kernel row of dilation 1 one memcpy), one at a border through the bounds checks. The ISA packers
 * gather a panel's positions this way and transpose the rows as they transpose A's. */
static inline void ep_qconv_gather(const ep_qconv_geo *g, const int8_t *xg, int64_t q, int64_t KP, int8_t *d) {
    const int64_t ih0 = q / g->OW * g->sh - g->pt, iw0 = q % g->OW * g->sw - g->pl;
    const int in = ih0 >= 0 && ih0 + (g->KH - 1) * g->dh < g->H && iw0 >= 0 && iw0 + (g->KW - 1) * g->dw < g->W;
    int64_t k = 0;
    for (int64_t c = 0; c < g->CG; c++) {
        const int8_t *xc = xg + c * g->H * g->W;
        for (int64_t kh = 0; kh < g->KH; kh++) {
            const int64_t ih = ih0 + kh * g->dh;
            const int8_t *xr = xc + ih * g->W + iw0;
            if (in && g->dw == 1) {
                memcpy(d + k, xr, (size_t)g->KW);
                k += g->KW;
                continue;
            }
            const int rok = in || (ih >= 0 && ih < g->H);
            for (int64_t kw = 0; kw < g->KW; kw++, k++) {
                const int64_t iw = iw0 + kw * g->dw;
                d[k] = rok && (in || (iw >= 0 && iw < g->W)) ? xr[kw * g->dw] : g->pad;
            }
        }
    }
    for (; k < KP; k++) d[k] = 0;
}

/* The depthwise accumulator of output (oh, ow) of one plane xp with its KH x KW weights w, scalar (the ISA
 * kernels' borders and odd strides). */
static inline int32_t ep_qdw_one(const ep_qconv_geo *g, const int8_t *xp, const int8_t *w, int32_t bias, int64_t oh,
                                 int64_t ow) {
    int32_t acc = bias;
    for (int64_t kh = 0; kh < g->KH; kh++) {
        const int64_t ih = oh * g->sh - g->pt + kh * g->dh;
        for (int64_t kw = 0; kw < g->KW; kw++) {
            const int64_t iw = ow * g->sw - g->pl + kw * g->dw;
            const int32_t v = ih >= 0 && ih < g->H && iw >= 0 && iw < g->W ? xp[ih * g->W + iw] : g->pad;
            acc += v * w[kh * g->KW + kw];
        }
    }
    return acc;
}

/* Packs the patches of output positions q0 .. q0 + 7 (those below OH * OW; the rest hold zeros) as one
 * [ceil(K/4)][8][4] panel, the layout of the packed weights. */
static inline void ep_qconv_pack_patches(const ep_qconv_geo *g, const int8_t *xg, int64_t q0, int8_t *dst) {
    const int64_t K4 = (g->K + EP_QPACK_K - 1) / EP_QPACK_K, Q = g->OH * g->OW;
    for (int r = 0; r < EP_QPACK_R; r++) {
        const int64_t q = q0 + r;
        const int64_t oh = q < Q ? q / g->OW : 0, ow = q < Q ? q % g->OW : 0;
        for (int64_t k = 0; k < K4 * EP_QPACK_K; k++)
            dst[(k / EP_QPACK_K * EP_QPACK_R + r) * EP_QPACK_K + k % EP_QPACK_K] =
                q < Q && k < g->K ? ep_qconv_tap(g, xg, oh, ow, k) : 0;
    }
}
#endif
