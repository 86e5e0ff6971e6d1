/* Depthwise CONV2D driver (variant DEPTHWISE: groups == C == M, any kernel, stride, dilation, pads), compiled
 * once per ISA. Exports EP_ISA_FN(conv2d_dw_f32) (ep_kernel.h).
 *
 * Per plane (n, c) the input is copied once into a scratch slot (kernels/dw_common.h: geometry and the split
 * across threads), zero padded and split into stride phases (phase q of padded row r holds columns q, q+SW,
 * q+2*SW, ...), so that every tap of every output row is a contiguous vector load: no border branches, no
 * gathers, any stride. Then each output row runs in blocks of 4 vectors (4 independent accumulators), single
 * vectors, and a last partial vector; taps in (kh, kw) order from 0.0f with fused multiply-adds (a tap in the
 * padding adds exactly nothing), then bias, residual and activation (the reference's order).
 *
 * The including file defines:
 *   DV, DV_N                     the vector type and its lanes
 *   DV_ZERO(), DV_SET1(f), DV_LD(p), DV_ST(p, v)
 *   DW_W, DW_WLD(p)              a tap weight as the ISA multiplies it (a vector or a float), loaded from p
 *   DV_FMA(acc, w, x)            acc + w * x, fused
 *   DW_ACT_VEC(act)              1 when dw_epi applies act in registers (else the row is finished with
 *                                ep_act_apply_f32)
 *   dw_tail                      per-task state for the last partial vector of a row, set by
 *                                  static void dw_tail_init(dw_tail *t, int64_t OW);
 *   static DV dw_epi(DV acc, DV bias, const float *r, const ep_conv2d_params *p);
 *       a full vector: acc + bias (+ r[0..DV_N) when r), then act when DW_ACT_VEC
 *   static void dw_store_part(float *y, const float *r, DV acc, DV bias, int64_t n, const dw_tail *t,
 *                             const ep_conv2d_params *p);
 *       the n < DV_N lanes of a partial vector: y[0..n) = dw_epi's lanes, reading r[0..n) only
 *   static int64_t dw_fill_s2(float *row, const float *src, int64_t i0, int64_t i1, int64_t avail);
 *       row[i] = src[2 i] for i from i0 while vectors fit (src[0..avail) readable); returns the first i not done
 *   static int dw_plane_special(const float *pad, const float *wc, DV bias, float *y, const float *res,
 *                               int64_t OH, int64_t OW, int64_t PW, const int64_t *kwo, int small,
 *                               const dw_tail *t, const ep_conv2d_params *p);
 *       1 when it computed rows [0, OH) of the plane (taps, bias, residual, and act when DW_ACT_VEC) itself
 * Besides EP_ISA_FN(conv2d_dw_f32), the functions here are what kernels/invres_tmpl.h runs its depthwise
 * stage with (included after this file). */
#include <string.h>
#include "dw_common.h"

/* Padded rows [r0, r0 + nr) of one plane into pad (its row 0): padded row r holds input row r - pt, zero
 * outside [0, H); input row ih is read at x + ih * W, or at x + (ih % ring) * W when ring > 0 (the rows of
 * a ring buffer, kernels/invres_common.h). zeroed: what is zero already, since pad was filled with this
 * geometry before: 1, the columns a row's input does not reach (the same in every row and plane), so only the
 * input's columns are copied; 2, also the rows outside the input (the same rows: r0 and nr as before). */
static void dw_fill(float *pad, const float *x, int64_t ring, int64_t H, int64_t W, int64_t r0, int64_t nr, int64_t sw,
                    int64_t PW, int64_t pt, int64_t pl, int zeroed) {
    for (int64_t i = 0; i < nr; i++) {
        const int64_t ih = r0 + i - pt;
        for (int64_t q = 0; q < sw; q++) {
            float *row = pad + (i * sw + q) * PW;
            if (ih < 0 || ih >= H) {
                if (zeroed < 2) memset(row, 0, (size_t)PW * 4);
                continue;
            }
            const float *xr = x + (ring > 0 ? ih % ring : ih) * W;
            /* row[i] = x[sw*i + q - pl] where in range */
            int64_t i0 = pl - q > 0 ? (pl - q + sw - 1) / sw : 0;          /* first i with col >= 0 */
            int64_t i1 = W + pl - q > 0 ? (W + pl - q + sw - 1) / sw : 0;   /* first i with col >= W */
            if (i0 > PW) i0 = PW;
            if (i1 > PW) i1 = PW;
            if (i1 < i0) i1 = i0;
            if (!zeroed) memset(row, 0, (size_t)i0 * 4);
            if (sw == 1) {
                memcpy(row + i0, xr + i0 - pl, (size_t)(i1 - i0) * 4);
            } else if (sw == 2) {
                const float *src = xr + q - pl;   /* row[i] = src[2i] */
                for (int64_t i = dw_fill_s2(row, src, i0, i1, W - q + pl); i < i1; i++) row[i] = src[2 * i];
            } else {
                for (int64_t i = i0; i < i1; i++) row[i] = xr[sw * i + q - pl];
            }
            if (!zeroed) memset(row + i1, 0, (size_t)(PW - i1) * 4);
        }
    }
}

/* One output row: blocks of 4 vectors, then single vectors, then the partial one. */
static inline __attribute__((always_inline)) void dw_row(const float *prow, const float *wc, DV bias, float *yr,
                                                          const float *rr, int64_t OW, int64_t KH, int64_t KW,
                                                          int64_t kh_step, const int64_t *kwo, int small,
                                                          int64_t dw, int64_t sw, int64_t PW, const dw_tail *t,
                                                          const ep_conv2d_params *p) {
#define DW_TAP(kh, kw) (prow + (kh) * kh_step + (small ? kwo[kw] : ((kw) * dw % sw) * PW + (kw) * dw / sw))
    int64_t ow = 0;
    for (; ow + 4 * DV_N <= OW; ow += 4 * DV_N) {
        DV a0 = DV_ZERO(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                const float *s = DW_TAP(kh, kw) + ow;
                const DW_W wv = DW_WLD(wc + kh * KW + kw);
                a0 = DV_FMA(a0, wv, DV_LD(s));
                a1 = DV_FMA(a1, wv, DV_LD(s + DV_N));
                a2 = DV_FMA(a2, wv, DV_LD(s + 2 * DV_N));
                a3 = DV_FMA(a3, wv, DV_LD(s + 3 * DV_N));
            }
        DV_ST(yr + ow, dw_epi(a0, bias, rr ? rr + ow : NULL, p));
        DV_ST(yr + ow + DV_N, dw_epi(a1, bias, rr ? rr + ow + DV_N : NULL, p));
        DV_ST(yr + ow + 2 * DV_N, dw_epi(a2, bias, rr ? rr + ow + 2 * DV_N : NULL, p));
        DV_ST(yr + ow + 3 * DV_N, dw_epi(a3, bias, rr ? rr + ow + 3 * DV_N : NULL, p));
    }
    for (; ow < OW; ow += DV_N) {   /* the padded rows are ceil(OW/16)*16 wide: a partial vector reads inside them */
        DV a0 = DV_ZERO();
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) a0 = DV_FMA(a0, DW_WLD(wc + kh * KW + kw), DV_LD(DW_TAP(kh, kw) + ow));
        if (OW - ow >= DV_N)
            DV_ST(yr + ow, dw_epi(a0, bias, rr ? rr + ow : NULL, p));
        else
            dw_store_part(yr + ow, rr ? rr + ow : NULL, a0, bias, OW - ow, t, p);
    }
#undef DW_TAP
}

/* Output rows [0, OH) of one plane from its padded rows (pad row 0: the first padded row output row 0 reads):
 * taps, bias, residual and activation. kwo: the offsets of the tap columns in a phase-split row. */
static void dw_plane_rows(const float *pad, const float *wc, DV bias, float *y, const float *res, int64_t OH,
                          int64_t OW, int64_t PW, const int64_t *kwo, int small, const dw_tail *tail,
                          const ep_conv2d_params *p) {
    const int64_t sh = p->stride[0], sw = p->stride[1];
    if (dw_plane_special(pad, wc, bias, y, res, OH, OW, PW, kwo, small, tail, p)) {
        if (!DW_ACT_VEC(p->act)) EP_ISA_ACT_APPLY(p->act, y, OH * OW, p->act_alpha, p->act_beta);
        return;
    }
    for (int64_t oh = 0; oh < OH; oh++) {
        float *yr = y + oh * OW;
        dw_row(pad + oh * sh * sw * PW, wc, bias, yr, res ? res + oh * OW : NULL, OW, p->kernel[0], p->kernel[1],
               p->dilation[0] * sw * PW, kwo, small, p->dilation[1], sw, PW, tail, p);
        if (!DW_ACT_VEC(p->act)) EP_ISA_ACT_APPLY(p->act, yr, OW, p->act_alpha, p->act_beta);
    }
}

/* kwo[kw]: the offset of tap column kw in a phase-split row; 0 when KW is too large for the table. */
static int dw_tap_offsets(int64_t *kwo, const ep_conv2d_params *p, int64_t PW) {
    const int64_t KW = p->kernel[1], sw = p->stride[1], dw = p->dilation[1];
    if (KW > 32) return 0;
    for (int64_t kw = 0; kw < KW; kw++) kwo[kw] = (kw * dw % sw) * PW + kw * dw / sw;
    return 1;
}

/* Planes (n, c) of part t of the op, each padded in scratch slot t. */
static void dw_task(void *ctx, uint32_t t) {
    const dw_job *j = (const dw_job *)ctx;
    const ep_op *op = j->op;
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], OH = yt->dims[2], OW = yt->dims[3];
    const int64_t KH = p->kernel[0], KW = p->kernel[1], sw = p->stride[1], PW = j->PW;
    float *pad = (float *)op->scratch + (int64_t)t * j->slot;
    int64_t lo, hi;
    ep_split_range(j->planes, j->parts, t, &lo, &hi);
    dw_tail tail;
    dw_tail_init(&tail, OW);
    int64_t kwo[32];
    const int small = dw_tap_offsets(kwo, p, PW);
    for (int64_t plane = lo; plane < hi; plane++) {
        const int64_t c = plane % C;
        dw_fill(pad, (const float *)xt->data + plane * H * W, 0, H, W, 0, j->Hp, sw, PW, p->pads[0], p->pads[1],
                plane > lo ? 2 : 0);
        const float *wc = (const float *)wt->data + c * KH * KW;
        const DV bias = DV_SET1(bt ? ((const float *)bt->data)[c] : 0.0f);
        dw_plane_rows(pad, wc, bias, (float *)yt->data + plane * OH * OW,
                      rt ? (const float *)rt->data + plane * OH * OW : NULL, OH, OW, PW, kwo, small, &tail, p);
    }
}

int EP_ISA_FN(conv2d_dw_f32)(const ep_op *op) {
    dw_job j;
    if (dw_plan(op, &j)) ep_parallel_for(op->pool, (uint32_t)j.parts, dw_task, &j);
    return EP_OK;
}
