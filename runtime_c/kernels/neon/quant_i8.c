/* NEON (armv8-a) int8 kernels (docs/kernels.md "Integer kernels"): QGEMM PACKED and QCONV2D PACKED (the drivers
 * of kernels/quant_tmpl.h on an 8 x 8 block), QCONV2D DEPTHWISE, QUANTIZE, DEQUANTIZE, QADD, QLUT (at the end of
 * the file). Bit-exact with the reference:
 *   - products: SMULL / SMULL2 of int8 (exact int16: |a b| <= 2^14) pairwise added into int32 by SADALP, or, for
 *     the depthwise taps, SMLAL of int16-widened data; no VQRDMULH anywhere;
 *   - requantisation: qn_requant (quant_neon.h), every shift in vectors;
 *   - QUANTIZE: FDIV (the same IEEE division as the scalar x / scale), FRINTN (nearest even), the zero point added
 *     in float and the clamp, as the reference orders them; NaN gives the zero point. DEQUANTIZE: the exact int32
 *     difference converted, then one FMUL.
 * Block of the packed product: 4 rows x 8 columns per pass (16 accumulators, each column's two partial sums in
 * adjacent lanes, folded with ADDP at the end), two passes per 8 x 8. quant_dotprod.c has the SDOT block. */
#include <math.h>
#include <string.h>
#include "neon.h"
#include "quant_common.h"
#include "quant_neon.h"

#define QN_ROW(i, ai)                                                                   \
    do {                                                                                \
        a##i##0 = vpadalq_s16(a##i##0, vmull_s8(vget_low_s8(ai), vget_low_s8(c0)));     \
        a##i##1 = vpadalq_s16(a##i##1, vmull_high_s8(ai, c0));                          \
        a##i##2 = vpadalq_s16(a##i##2, vmull_s8(vget_low_s8(ai), vget_low_s8(c1)));     \
        a##i##3 = vpadalq_s16(a##i##3, vmull_high_s8(ai, c1));                          \
    } while (0)
#define QN_OUT(i)                                            \
    do {                                                     \
        vst1q_s32(o + (i) * 8, vpaddq_s32(a##i##0, a##i##1)); \
        vst1q_s32(o + (i) * 8 + 4, vpaddq_s32(a##i##2, a##i##3)); \
    } while (0)

/* acc[r * 8 + j] = sum_k rp[r, k] cp[j, k] over [K4][8][4] panels */
static void qt_block(const int8_t *rp, const int8_t *cp, int64_t K4, int32_t *acc) {
    for (int h = 0; h < 2; h++) {
        const int32x4_t z = vdupq_n_s32(0);
        int32x4_t a00 = z, a01 = z, a02 = z, a03 = z, a10 = z, a11 = z, a12 = z, a13 = z;
        int32x4_t a20 = z, a21 = z, a22 = z, a23 = z, a30 = z, a31 = z, a32 = z, a33 = z;
        const int8_t *r = rp + h * 16;
        for (int64_t k4 = 0; k4 < K4; k4++) {
            const int8x16_t c0 = vld1q_s8(cp + k4 * 32), c1 = vld1q_s8(cp + k4 * 32 + 16);
            const int32x4_t rv = vreinterpretq_s32_s8(vld1q_s8(r + k4 * 32));   /* rows 4h .. 4h + 3, 4 bytes each */
            const int8x16_t r0 = vreinterpretq_s8_s32(vdupq_laneq_s32(rv, 0));
            const int8x16_t r1 = vreinterpretq_s8_s32(vdupq_laneq_s32(rv, 1));
            const int8x16_t r2 = vreinterpretq_s8_s32(vdupq_laneq_s32(rv, 2));
            const int8x16_t r3 = vreinterpretq_s8_s32(vdupq_laneq_s32(rv, 3));
            QN_ROW(0, r0);
            QN_ROW(1, r1);
            QN_ROW(2, r2);
            QN_ROW(3, r3);
        }
        int32_t *o = acc + h * 32;
        QN_OUT(0);
        QN_OUT(1);
        QN_OUT(2);
        QN_OUT(3);
    }
}

#define QT_CUSTOM_PACK   /* qt_pack_rows, qt_pack_patches: quant_neon.h */

/* One position's tile (kernels/quant_tmpl.h QT_CONV_ROW1): the stream panel's row 0 (4 bytes per K group, DUP)
 * against the weight panel, SMULL / SMULL2 and SADALP as in the block: 4 products per K group instead of 32 */
#define QT_CONV_ROW1 1
static int qt_conv_row1(const int8_t *sp, const int8_t *wp, int64_t K4, const int32_t *bias8, const int32_t *m8,
                        const int32_t *s8, int32_t lo, int32_t hi, int32_t zp, int8_t *yc, int64_t P) {
    const int32x4_t z = vdupq_n_s32(0);
    int32x4_t a0 = z, a1 = z, a2 = z, a3 = z;
    for (int64_t k4 = 0; k4 < K4; k4++) {
        const int8x16_t c0 = vld1q_s8(wp + k4 * 32), c1 = vld1q_s8(wp + k4 * 32 + 16);
        int32_t v;
        memcpy(&v, sp + k4 * 32, 4);
        const int8x16_t r = vreinterpretq_s8_s32(vdupq_n_s32(v));
        a0 = vpadalq_s16(a0, vmull_s8(vget_low_s8(c0), vget_low_s8(r)));
        a1 = vpadalq_s16(a1, vmull_high_s8(c0, r));
        a2 = vpadalq_s16(a2, vmull_s8(vget_low_s8(c1), vget_low_s8(r)));
        a3 = vpadalq_s16(a3, vmull_high_s8(c1, r));
    }
    return qn_row1_store(vpaddq_s32(a0, a1), vpaddq_s32(a2, a3), bias8, m8, s8, lo, hi, zp, yc, P);
}

#include "quant_tmpl.h"
#include "quant_pack_neon.h"

/* ---------------- QCONV2D DEPTHWISE ----------------
 * Per plane, 8 outputs of a row at a time where every tap of the 8 is inside the row (strides 1 and 2): each tap
 * 8 bytes widened to int16 and SMLAL / SMLAL2 by the weight; rows above or below the input add x_zero times the
 * row's weight sum. The borders, other strides: scalar. */
typedef struct qdw_job {
    const ep_qconv_geo *g;
    const int8_t *x, *w;
    const int32_t *bias, *q;
    int8_t *y;
    int64_t C, M, planes, parts;
    int32_t lo, hi, zp;
} qdw_job;


/* sum a[i] b[i] over n int8 pairs: 16 at a time (SMULL / SMULL2, exact int16, pairwise added by SADALP), the rest
 * scalar */
static int32_t qn_dot_i8(const int8_t *a, const int8_t *b, int64_t n) {
    int32x4_t acc = vdupq_n_s32(0);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const int8x16_t x = vld1q_s8(a + i), y = vld1q_s8(b + i);
        acc = vpadalq_s16(acc, vmull_s8(vget_low_s8(x), vget_low_s8(y)));
        acc = vpadalq_s16(acc, vmull_high_s8(x, y));
    }
    int32_t r = vaddvq_s32(acc);
    for (; i < n; i++) r += a[i] * b[i];
    return r;
}

static void qdw_task(void *ctx, uint32_t t) {
    const qdw_job *j = (const qdw_job *)ctx;
    const ep_qconv_geo *g = j->g;
    const ep_range r = ep_task_range(j->planes, j->parts, t);
    const int64_t KH = g->KH, KW = g->KW, sw = g->sw;
    static const uint8_t even_idx[8] = {0, 2, 4, 6, 9, 11, 13, 15};
    const uint8x8_t even = vld1_u8(even_idx);
    /* one output per plane whose window is the plane's first KH whole rows, unpadded (a streaming buffer's tap):
     * a dot product of KH KW bytes */
    const int dot = g->OH == 1 && g->OW == 1 && !g->pt && !g->pl && g->dh == 1 && g->dw == 1 && KW == g->W &&
                    KH <= g->H;
    for (int64_t pl = r.lo; pl < r.hi; pl++) {
        const int64_t c = pl % j->C;
        const int8_t *xp = j->x + pl * g->H * g->W, *w = j->w + c * KH * KW;
        int8_t *yp = j->y + pl * g->OH * g->OW;
        const int32_t bias = j->bias[c], m = j->q[c], s = j->q[j->M + c];
        if (dot) {
            yp[0] = (int8_t)ep_requant(bias + qn_dot_i8(xp, w, KH * KW), m, s, j->lo, j->hi, j->zp);
            continue;
        }
        int64_t o_lo = (g->pl + sw - 1) / sw, o_hi = 0;
        const int64_t last = g->W - 1 - (KW - 1) * g->dw + g->pl;
        if (last >= 0) o_hi = last / sw + 1;
        if (o_hi > g->OW) o_hi = g->OW;
        if (o_lo > o_hi || (sw != 1 && sw != 2)) o_lo = o_hi = 0;
        int32_t rowsum[32];
        const int vec = KH <= 32 && o_hi - o_lo >= 8;
        for (int64_t kh = 0; vec && kh < KH; kh++) {
            rowsum[kh] = 0;
            for (int64_t kw = 0; kw < KW; kw++) rowsum[kh] += w[kh * KW + kw];
            rowsum[kh] *= g->pad;
        }
        const int32x4_t vm = vdupq_n_s32(m), vs = vdupq_n_s32(s), vlo = vdupq_n_s32(j->lo), vhi = vdupq_n_s32(j->hi);
        const int32x4_t vzp = vdupq_n_s32(j->zp);
        for (int64_t oh = 0; oh < g->OH; oh++) {
            int8_t *yr = yp + oh * g->OW;
            int64_t ow = 0;
            if (vec) {
                for (; ow < o_lo; ow++)
                    yr[ow] = (int8_t)ep_requant(ep_qdw_one(g, xp, w, bias, oh, ow), m, s, j->lo, j->hi, j->zp);
                for (; ow + 8 <= o_hi; ow += 8) {
                    int32x4_t acc0 = vdupq_n_s32(bias), acc1 = acc0;
                    for (int64_t kh = 0; kh < KH; kh++) {
                        const int64_t ih = oh * g->sh - g->pt + kh * g->dh;
                        if (ih < 0 || ih >= g->H) {
                            acc0 = vaddq_s32(acc0, vdupq_n_s32(rowsum[kh]));
                            acc1 = vaddq_s32(acc1, vdupq_n_s32(rowsum[kh]));
                            continue;
                        }
                        const int8_t *xr = xp + ih * g->W + ow * sw - g->pl;
                        for (int64_t kw = 0; kw < KW; kw++) {
                            const int8_t *s0 = xr + kw * g->dw;
                            /* stride 2: s0[0, 2, .., 14] from two 8-byte loads (never past s0[14]) */
                            const int8x8_t b = sw == 1 ? vld1_s8(s0) : vqtbl1_s8(vcombine_s8(vld1_s8(s0), vld1_s8(s0 + 7)), even);
                            const int16x8_t x16 = vmovl_s8(b);
                            const int16_t wk = w[kh * KW + kw];
                            acc0 = vmlal_n_s16(acc0, vget_low_s16(x16), wk);
                            acc1 = vmlal_high_n_s16(acc1, x16, wk);
                        }
                    }
                    qn_store_i8(qn_requant(acc0, vm, vs, vlo, vhi, vzp), qn_requant(acc1, vm, vs, vlo, vhi, vzp), yr + ow, 8);
                }
            }
            for (; ow < g->OW; ow++)
                yr[ow] = (int8_t)ep_requant(ep_qdw_one(g, xp, w, bias, oh, ow), m, s, j->lo, j->hi, j->zp);
        }
    }
}

int ep_neon_qconv2d_dw_i8(const ep_op *op) {
    const ep_qconv2d_params *p = (const ep_qconv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    ep_qconv_geo g;
    ep_qconv_geo_init(&g, p, xt, yt);
    ep_qconv_geo_column_as_row(&g);
    const int64_t N = xt->dims[0], C = xt->dims[1], planes = N * C;
    if (planes == 0 || g.OH * g.OW == 0) return EP_OK;
    const int64_t T = ep_pool_threads_for(op->pool, (uint64_t)planes * (uint64_t)(g.OH * g.OW) * (uint64_t)g.K);
    qdw_job j = {&g, (const int8_t *)xt->data, (const int8_t *)op->in[1]->data, (const int32_t *)op->in[2]->data,
                 (const int32_t *)op->in[3]->data, (int8_t *)yt->data, C, yt->dims[1], planes, T < planes ? T : planes,
                 p->y_min - p->y_zero, p->y_max - p->y_zero, p->y_zero};
    ep_parallel_for(op->pool, (uint32_t)j.parts, qdw_task, &j);
    return EP_OK;
}

/* ---------------- QUANTIZE / DEQUANTIZE ---------------- */
#include "quant_elem_tmpl.h"

static float32x4_t qn_quant4(float32x4_t x, float32x4_t s, float32x4_t zp, float32x4_t lo, float32x4_t hi) {
    const float32x4_t v = vminq_f32(vmaxq_f32(vaddq_f32(vrndnq_f32(vdivq_f32(x, s)), zp), lo), hi);
    return vbslq_f32(vceqq_f32(x, x), v, zp);   /* NaN: the zero point */
}

static void qe_quantize_row(const qe_convert_job *j, int64_t lo_i, int64_t hi_i) {
    const float *x = (const float *)j->x;
    const float lo = j->u8 ? 0.0f : -128.0f, hi = j->u8 ? 255.0f : 127.0f, zpf = (float)j->p->zero_point;
    const float32x4_t vs = vdupq_n_f32(j->p->scale), vz = vdupq_n_f32(zpf), vlo = vdupq_n_f32(lo), vhi = vdupq_n_f32(hi);
    int64_t i = lo_i;
    for (; i + 8 <= hi_i; i += 8) {
        const int32x4_t a = vcvtq_s32_f32(qn_quant4(vld1q_f32(x + i), vs, vz, vlo, vhi));
        const int32x4_t b = vcvtq_s32_f32(qn_quant4(vld1q_f32(x + i + 4), vs, vz, vlo, vhi));
        const int16x8_t w = vcombine_s16(vqmovn_s32(a), vqmovn_s32(b));
        if (j->u8) vst1_u8((uint8_t *)j->y + i, vqmovun_s16(w));
        else vst1_s8((int8_t *)j->y + i, vqmovn_s16(w));
    }
    for (; i < hi_i; i++) {   /* the reference's expression */
        float v = x[i] != x[i] ? zpf : nearbyintf(x[i] / j->p->scale) + zpf;
        v = v < lo ? lo : v > hi ? hi : v;
        if (j->u8) ((uint8_t *)j->y)[i] = (uint8_t)v;
        else ((int8_t *)j->y)[i] = (int8_t)v;
    }
}

static void qe_dequantize_row(const qe_convert_job *j, int64_t lo_i, int64_t hi_i) {
    float *y = (float *)j->y;
    const int16x8_t vz = vdupq_n_s16((int16_t)j->p->zero_point);
    const float32x4_t vs = vdupq_n_f32(j->p->scale);
    int64_t i = lo_i;
    for (; i + 8 <= hi_i; i += 8) {
        const int16x8_t q = j->u8 ? vreinterpretq_s16_u16(vmovl_u8(vld1_u8((const uint8_t *)j->x + i)))
                                  : vmovl_s8(vld1_s8((const int8_t *)j->x + i));
        const int16x8_t d = vsubq_s16(q, vz);   /* |q - zp| <= 383: exact in int16 */
        vst1q_f32(y + i, vmulq_f32(vcvtq_f32_s32(vmovl_s16(vget_low_s16(d))), vs));
        vst1q_f32(y + i + 4, vmulq_f32(vcvtq_f32_s32(vmovl_high_s16(d)), vs));
    }
    for (; i < hi_i; i++) {
        const int32_t q = j->u8 ? ((const uint8_t *)j->x)[i] : ((const int8_t *)j->x)[i];
        y[i] = (float)(q - j->p->zero_point) * j->p->scale;
    }
}


/* ---------------- QADD / QLUT ----------------
 * QADD (ep_qadd1, quant_common.h): per input, d = A - a_zero (|d| <= 255), the exact product d * a_mult by SMULL
 * (|d m| < 2^39), then, since a_shift >= 31 > 20,
 *   ((d 2^20) m + 2^(a_shift-1)) >> a_shift = (d m + 2^(sa-1)) >> sa,  sa = a_shift - 20 in [11, 42]
 * (the 2^20 divides both terms), which SRSHL by -sa computes exactly; the result (|a| < 2^28, the multiplier being
 * below 1) narrows with XTN. a + b (|a + b| < 2^29) is requantised by qn_requant, every y_shift in [1, 62].
 * QLUT: Y = T[X + 128] by TBL over the table's first 64-byte quarter and TBX over the other three, with the
 * index u = X + 128 less 64 q (wrapping: out of [0, 64) outside quarter q, where TBL gives 0 and TBX keeps). */

/* 4 rescaled values of one input from 4 differences d */
static inline int32x4_t qn_qadd_in(int32x4_t d, int32x2_t m, int64x2_t ns) {
    return vcombine_s32(vmovn_s64(vrshlq_s64(vmull_s32(vget_low_s32(d), m), ns)),
                        vmovn_s64(vrshlq_s64(vmull_high_s32(d, vcombine_s32(m, m)), ns)));
}

static void qe_qadd_row(const qe_codes_job *j, int64_t lo_i, int64_t hi_i) {
    const ep_qadd_params *p = j->p;
    const int8x8_t za = vdup_n_s8((int8_t)p->a_zero), zb = vdup_n_s8((int8_t)p->b_zero);
    const int32x2_t ma = vdup_n_s32(p->a_mult), mb = vdup_n_s32(p->b_mult);
    const int64x2_t na = vdupq_n_s64(20 - p->a_shift), nb = vdupq_n_s64(20 - p->b_shift);
    const int32x4_t ym = vdupq_n_s32(p->y_mult), ys = vdupq_n_s32(p->y_shift);
    const int32x4_t lo = vdupq_n_s32(p->y_min - p->y_zero), hi = vdupq_n_s32(p->y_max - p->y_zero);
    const int32x4_t yz = vdupq_n_s32(p->y_zero);
    int64_t i = lo_i;
    for (; i + 8 <= hi_i; i += 8) {
        const int16x8_t da = vsubl_s8(vld1_s8(j->a + i), za), db = vsubl_s8(vld1_s8(j->b + i), zb);   /* exact */
        const int32x4_t s0 = vaddq_s32(qn_qadd_in(vmovl_s16(vget_low_s16(da)), ma, na),
                                       qn_qadd_in(vmovl_s16(vget_low_s16(db)), mb, nb));
        const int32x4_t s1 = vaddq_s32(qn_qadd_in(vmovl_high_s16(da), ma, na), qn_qadd_in(vmovl_high_s16(db), mb, nb));
        qn_store_i8(qn_requant(s0, ym, ys, lo, hi, yz), qn_requant(s1, ym, ys, lo, hi, yz), j->y + i, 8);
    }
    for (; i < hi_i; i++) j->y[i] = ep_qadd1(p, j->a[i], j->b[i]);
}

static void qe_qlut_row(const qe_codes_job *j, int64_t lo_i, int64_t hi_i) {
    const uint8_t *tb = (const uint8_t *)j->t;
    const uint8x16x4_t t0 = vld1q_u8_x4(tb), t1 = vld1q_u8_x4(tb + 64), t2 = vld1q_u8_x4(tb + 128),
                       t3 = vld1q_u8_x4(tb + 192);
    const uint8x16_t bias = vdupq_n_u8(0x80), q = vdupq_n_u8(64);
    int64_t i = lo_i;
    for (; i + 16 <= hi_i; i += 16) {
        uint8x16_t u = veorq_u8(vld1q_u8((const uint8_t *)j->a + i), bias);
        uint8x16_t v = vqtbl4q_u8(t0, u);
        u = vsubq_u8(u, q);
        v = vqtbx4q_u8(v, t1, u);
        u = vsubq_u8(u, q);
        v = vqtbx4q_u8(v, t2, u);
        u = vsubq_u8(u, q);
        v = vqtbx4q_u8(v, t3, u);
        vst1q_u8((uint8_t *)j->y + i, v);
    }
    for (; i < hi_i; i++) j->y[i] = j->t[j->a[i] + 128];
}

