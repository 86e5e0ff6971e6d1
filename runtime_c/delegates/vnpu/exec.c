/* The arithmetic of the vNPU's kicks, on operands stream.c has checked (every byte addressed lies inside its
 * region; every requantisation record is in range, so each accumulator is an exact int32 sum).
 *
 * Bit-exactness with the reference kernels (kernels/ref/quant_i8.c) holds by construction: an accumulator is
 * bias + the exact sum of int8 products (padding taps multiply the IFM zero point, as the reference's padded
 * input holds it), so the order of the products does not matter, and each output is requantised by the same
 * function (ep_requant, ep_qadd1 of kernels/quant_common.h) with the same arguments; the LUT is T[x + 128]. */
#include "vnpu_impl.h"
#include "quant_common.h"

typedef struct epn_scale {
    int32_t bias, m, s;
} epn_scale;

static epn_scale scale_at(const uint8_t *p) {
    epn_scale v = {epn_rds32(p), epn_rds32(p + 4), epn_rds32(p + 8)};
    return v;
}

static const int8_t *rd_at(const epn_env *e, uint32_t region, uint64_t off) {
    return (const int8_t *)(const void *)(e->rd[region] + off);
}
static int8_t *wr_at(const epn_env *e, uint32_t region, uint64_t off) {
    return (int8_t *)(void *)(e->wr[region] + off);
}

/* CONV and DWCONV: weights [OC][KH][KW][IC] (DWCONV: [C][KH][KW]), records [OC] of (bias, m, s). */
static void conv(const epn_env *e, const epn_regs *r, int depthwise) {
    const epn_fm *x = &r->fm[EPN_IFM], *y = &r->fm[EPN_OFM];
    const int8_t *xb = rd_at(e, x->region, x->base), *wb = rd_at(e, r->w_region, r->w_base);
    const uint8_t *sb = e->rd[r->s_region] + r->s_base;
    int8_t *yb = wr_at(e, y->region, y->base);
    const int64_t IC = depthwise ? 1 : x->c, KH = r->kh, KW = r->kw, H = x->h, W = x->w;
    const int32_t xzp = x->zp, lo = r->act_min - y->zp, hi = r->act_max - y->zp, yzp = y->zp;
    for (int64_t oc = 0; oc < y->c; oc++) {
        const epn_scale q = scale_at(sb + oc * EP_VNPU_SCALE_BYTES);
        const int8_t *wo = wb + oc * KH * KW * IC;
        const int8_t *xc = depthwise ? xb + (uint64_t)oc * x->sc : xb;
        for (int64_t oh = 0; oh < y->h; oh++)
            for (int64_t ow = 0; ow < y->w; ow++) {
                int32_t acc = q.bias;
                for (int64_t kh = 0; kh < KH; kh++) {
                    const int64_t ih = oh * r->ksy - r->pad[0] + kh * r->kdy;
                    for (int64_t kw = 0; kw < KW; kw++) {
                        const int64_t iw = ow * r->ksx - r->pad[1] + kw * r->kdx;
                        const int8_t *wk = wo + (kh * KW + kw) * IC;
                        if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
                            for (int64_t ic = 0; ic < IC; ic++) acc += wk[ic] * xzp;
                            continue;
                        }
                        const int8_t *xp = xc + (uint64_t)ih * x->sy + (uint64_t)iw * x->sx;
                        for (int64_t ic = 0; ic < IC; ic++) acc += wk[ic] * xp[(uint64_t)ic * x->sc];
                    }
                }
                yb[(uint64_t)oc * y->sc + (uint64_t)oh * y->sy + (uint64_t)ow * y->sx] =
                    (int8_t)ep_requant(acc, q.m, q.s, lo, hi, yzp);
            }
    }
}

/* MATMUL: per pixel, OFM[n] = requant(bias[n] + sum_k W[n][k] IFM[k]); weights [N][K]. */
static void matmul(const epn_env *e, const epn_regs *r) {
    const epn_fm *x = &r->fm[EPN_IFM], *y = &r->fm[EPN_OFM];
    const int8_t *xb = rd_at(e, x->region, x->base), *wb = rd_at(e, r->w_region, r->w_base);
    const uint8_t *sb = e->rd[r->s_region] + r->s_base;
    int8_t *yb = wr_at(e, y->region, y->base);
    const int64_t K = x->c;
    const int32_t lo = r->act_min - y->zp, hi = r->act_max - y->zp, yzp = y->zp;
    for (int64_t n = 0; n < y->c; n++) {
        const epn_scale q = scale_at(sb + n * EP_VNPU_SCALE_BYTES);
        const int8_t *wn = wb + n * K;
        for (int64_t h = 0; h < y->h; h++)
            for (int64_t w = 0; w < y->w; w++) {
                const int8_t *xp = xb + (uint64_t)h * x->sy + (uint64_t)w * x->sx;
                int32_t acc = q.bias;
                for (int64_t k = 0; k < K; k++) acc += wn[k] * xp[(uint64_t)k * x->sc];
                yb[(uint64_t)n * y->sc + (uint64_t)h * y->sy + (uint64_t)w * y->sx] =
                    (int8_t)ep_requant(acc, q.m, q.s, lo, hi, yzp);
            }
    }
}

/* ELTWISE ADD (QADD) and LUT (QLUT), element by element over the common shape. */
static void elementwise(const epn_env *e, const epn_regs *r, int lut) {
    const epn_fm *a = &r->fm[EPN_IFM], *b = &r->fm[EPN_IFM2], *y = &r->fm[EPN_OFM];
    const int8_t *ab = rd_at(e, a->region, a->base), *bb = lut ? NULL : rd_at(e, b->region, b->base);
    const int8_t *t = lut ? rd_at(e, r->lut_region, r->lut_base) : NULL;
    int8_t *yb = wr_at(e, y->region, y->base);
    ep_qadd_params p;
    memset(&p, 0, sizeof p);
    p.a_zero = a->zp, p.b_zero = b->zp, p.y_zero = y->zp, p.y_min = r->act_min, p.y_max = r->act_max;
    p.a_mult = a->mult, p.a_shift = a->shift, p.b_mult = b->mult, p.b_shift = b->shift;
    p.y_mult = y->mult, p.y_shift = y->shift;
    for (uint64_t h = 0; h < y->h; h++)
        for (uint64_t w = 0; w < y->w; w++)
            for (uint64_t c = 0; c < y->c; c++) {
                const int8_t av = ab[h * a->sy + w * a->sx + c * a->sc];
                yb[h * y->sy + w * y->sx + c * y->sc] =
                    lut ? t[av + 128] : ep_qadd1(&p, av, bb[h * b->sy + w * b->sx + c * b->sc]);
            }
}

/* POOL max: the largest code among the window's taps inside the IFM (stream.c has checked that every window
 * has one), clamped to the activation range. On int8 codes this is the CPU's CAST -> MAXPOOL (f32) -> CAST
 * chain bit for bit: the codes are exact in f32, and a max does not depend on the order of its operands. */
static void pool_max(const epn_env *e, const epn_regs *r) {
    const epn_fm *x = &r->fm[EPN_IFM], *y = &r->fm[EPN_OFM];
    const int8_t *xb = rd_at(e, x->region, x->base);
    int8_t *yb = wr_at(e, y->region, y->base);
    const int64_t H = x->h, W = x->w;
    for (uint64_t c = 0; c < y->c; c++)
        for (int64_t oh = 0; oh < y->h; oh++)
            for (int64_t ow = 0; ow < y->w; ow++) {
                int32_t m = -128;
                for (int64_t kh = 0; kh < r->kh; kh++) {
                    const int64_t ih = oh * r->ksy - r->pad[0] + kh * r->kdy;
                    if (ih < 0 || ih >= H) continue;
                    for (int64_t kw = 0; kw < r->kw; kw++) {
                        const int64_t iw = ow * r->ksx - r->pad[1] + kw * r->kdx;
                        if (iw < 0 || iw >= W) continue;
                        const int32_t v = xb[c * x->sc + (uint64_t)ih * x->sy + (uint64_t)iw * x->sx];
                        if (v > m) m = v;
                    }
                }
                m = m < r->act_min ? r->act_min : m > r->act_max ? r->act_max : m;
                yb[c * y->sc + (uint64_t)oh * y->sy + (uint64_t)ow * y->sx] = (int8_t)m;
            }
}

void epn_exec(const epn_env *e, const epn_regs *r, uint32_t opcode) {
    switch (opcode) {
    case EP_VNPU_OP_CONV: conv(e, r, 0); break;
    case EP_VNPU_OP_DWCONV: conv(e, r, 1); break;
    case EP_VNPU_OP_MATMUL: matmul(e, r); break;
    case EP_VNPU_OP_ELTWISE: elementwise(e, r, 0); break;
    case EP_VNPU_OP_LUT: elementwise(e, r, 1); break;
    case EP_VNPU_OP_POOL: pool_max(e, r); break;
    case EP_VNPU_OP_DMA:   /* source and destination may overlap (both in working memory) */
        memmove(e->wr[r->dma_dreg] + r->dma_dst, e->rd[r->dma_sreg] + r->dma_src, r->dma_len);
        break;
    default: break;
    }
}
