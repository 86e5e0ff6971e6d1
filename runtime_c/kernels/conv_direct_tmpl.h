/* CONV2D variants DW_C8 and DIRECT (plan_format.h), compiled once per ISA after kernels/dwconv_tmpl.h (whose
 * dw_fill, dw_epi, dw_store_part and dw_tail they reuse). Both take variant 0's weights [M, C/groups, KH, KW].
 *
 * DW_C8, depthwise on small maps. A row of a 7x7 or 14x14 plane fills one or two vectors of the plane-at-a-time
 * kernel, most of its work is padding and per-plane set-up, and stride 2 costs a phase split per plane. Here 8
 * channels run together: their padded input region is copied into the task's scratch slot as [Hp][Wp][8] (a
 * pixel's 8 channels are one vector), their taps as [KH*KW][8]; every output pixel is then KH*KW vector
 * multiply-adds whatever the map's width or the stride, 4 pixels at a time. A row of results goes through a
 * local [64][8] buffer back to the 8 planes. Per output element the arithmetic is DEPTHWISE's: the taps in
 * (kh, kw) order from 0.0f with fused multiply-adds, then bias, residual and activation.
 *
 * DIRECT, convolutions with few input and output channels (stems, narrow layers). im2col copies K = C*KH*KW
 * floats per output pixel for a GEMM with only M output channels to share the copy. Here a task copies the C input rows of a band of EP_CONV_DIRECT_ROWS output
 * rows into its slot, zero padded and split into stride phases as DEPTHWISE does (every tap of 16 consecutive
 * outputs is then a contiguous load), and computes 4 output channels x 16 columns at a time in registers: per
 * tap, 16/DV_N loads and 4 weights, 4*16/DV_N multiply-adds. Per output element: taps in (c, kh, kw) order from
 * 0.0f with fused multiply-adds, then bias, residual and activation.
 *
 * The including file defines, besides dwconv_tmpl.h's:
 *   C8, C8_ZERO(), C8_LD(p), C8_ST(p, v), C8_FMA(acc, w, x), C8_ADD(a, b)   8 floats as the ISA holds them
 *   C8_ACT(v, p)      the activation of p on v for the kinds of DW_ACT_VEC; DV_ACT(v, p) the same on a DV
 *   static int64_t c8_fill_fast(float *dst, const float *const *src, int64_t n);
 *       dst[i*8 + c] = src[c][i] for i from 0 while the ISA's blocks fit in n; returns the first i not done
 *   static int64_t c8_scatter_fast(float *const *dst, const float *src, int64_t n);
 *       dst[c][i] = src[i*8 + c], the same way
 * Exports EP_ISA_FN(conv2d_dwc8_f32) and EP_ISA_FN(conv2d_direct_f32) (ep_kernel.h). */
#include <string.h>
#include "dw_common.h"

/* ---------------- DW_C8 ---------------- */

#define C8_CHUNK 64   /* output pixels per row buffer */

typedef struct c8_job {
    const ep_op *op;
    int64_t Hp, Wp;     /* the padded input region the outputs read */
    int64_t slot;       /* floats per scratch slot: (Hp * Wp + KH * KW) * 8 */
    int64_t CB, blocks; /* 8-channel blocks per image, N * CB */
    int64_t parts;
} c8_job;

static int c8_plan(const ep_op *op, c8_job *j) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    if (N == 0 || C == 0 || OH == 0 || OW == 0) return 0;
    j->op = op;
    j->Hp = (OH - 1) * p->stride[0] + (int64_t)(p->kernel[0] - 1) * p->dilation[0] + 1;
    j->Wp = (OW - 1) * p->stride[1] + (int64_t)(p->kernel[1] - 1) * p->dilation[1] + 1;
    j->slot = (j->Hp * j->Wp + (int64_t)p->kernel[0] * p->kernel[1]) * 8;
    j->CB = (C + 7) / 8;
    j->blocks = N * j->CB;
    int64_t parts = ep_pool_threads_for(op->pool, (uint64_t)(N * C) * (uint64_t)(OH * OW) *
                                                      (uint64_t)(p->kernel[0] * p->kernel[1]));
    const int64_t slots = (int64_t)(op->scratch_size / ((uint64_t)j->slot * 4));
    if (parts > slots) parts = slots;
    if (parts > j->blocks) parts = j->blocks;
    j->parts = parts < 1 ? 1 : parts;
    return 1;
}

/* buf[0 .. n*8) = act(buf), for the kinds of DW_ACT_VEC */
static __attribute__((noinline)) void c8_act_buf(float *buf, int64_t n, const ep_conv2d_params *p) {
    for (int64_t i = 0; i < n; i++) C8_ST(buf + i * 8, C8_ACT(C8_LD(buf + i * 8), p));
}

/* Output pixels [0, n) of row oh into buf[i*8 ..]: taps and bias. */
static inline __attribute__((always_inline)) void c8_row(const float *pad, const float *wv, C8 bias, float *buf,
                                                          int64_t oh, int64_t ow0, int64_t n, int64_t KH, int64_t KW,
                                                          int64_t Wp, const ep_conv2d_params *p) {
    const int64_t sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0], dw = p->dilation[1];
    int64_t i = 0;
    for (; i + 4 <= n; i += 4) {
        const float *s = pad + ((oh * sh) * Wp + (ow0 + i) * sw) * 8;
        C8 a0 = C8_ZERO(), a1 = a0, a2 = a0, a3 = a0;
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                const float *t = s + (kh * dh * Wp + kw * dw) * 8;
                const C8 w = C8_LD(wv + (kh * KW + kw) * 8);
                a0 = C8_FMA(a0, w, C8_LD(t));
                a1 = C8_FMA(a1, w, C8_LD(t + sw * 8));
                a2 = C8_FMA(a2, w, C8_LD(t + 2 * sw * 8));
                a3 = C8_FMA(a3, w, C8_LD(t + 3 * sw * 8));
            }
        a0 = C8_ADD(a0, bias), a1 = C8_ADD(a1, bias), a2 = C8_ADD(a2, bias), a3 = C8_ADD(a3, bias);
        C8_ST(buf + i * 8, a0);
        C8_ST(buf + i * 8 + 8, a1);
        C8_ST(buf + i * 8 + 16, a2);
        C8_ST(buf + i * 8 + 24, a3);
    }
    for (; i < n; i++) {
        const float *s = pad + ((oh * sh) * Wp + (ow0 + i) * sw) * 8;
        C8 a0 = C8_ZERO();
        for (int64_t kh = 0; kh < KH; kh++)
            for (int64_t kw = 0; kw < KW; kw++)
                a0 = C8_FMA(a0, C8_LD(wv + (kh * KW + kw) * 8), C8_LD(s + (kh * dh * Wp + kw * dw) * 8));
        C8_ST(buf + i * 8, C8_ADD(a0, bias));
    }
}

static void c8_task(void *ctx, uint32_t t) {
    const c8_job *j = (const c8_job *)ctx;
    const ep_op *op = j->op;
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3], OH = yt->dims[2], OW = yt->dims[3];
    const int64_t KH = p->kernel[0], KW = p->kernel[1], KK = KH * KW, Hp = j->Hp, Wp = j->Wp;
    const int64_t pt = p->pads[0], pl = p->pads[1];
    float *pad = (float *)op->scratch + (int64_t)t * j->slot, *wv = pad + Hp * Wp * 8;
    const int is3 = KH == 3 && KW == 3, act_in = !rt && DW_ACT_VEC(p->act);
    /* the input columns and rows a pixel of the region reads: the rest of the region is padding */
    const int64_t c_lo = pl, c_hi = W + pl < Wp ? W + pl : Wp, r_lo = pt, r_hi = H + pt < Hp ? H + pt : Hp;
    float buf[C8_CHUNK * 8];
    int64_t lo, hi;
    ep_split_range(j->blocks, j->parts, t, &lo, &hi);
    memset(pad, 0, (size_t)(Hp * Wp) * 8 * 4);
    for (int64_t b = lo; b < hi; b++) {
        const int64_t n = b / j->CB, c0 = b % j->CB * 8, nc = C - c0 < 8 ? C - c0 : 8;
        const float *x = (const float *)xt->data + (n * C + c0) * H * W;
        const float *src[8];
        for (int64_t c = 0; c < 8; c++) src[c] = x + (c < nc ? c : 0) * H * W;
        for (int64_t r = r_lo; r < r_hi && c_lo < c_hi; r++) {   /* interleave the input rows */
            const float *rows[8];
            for (int64_t c = 0; c < 8; c++) rows[c] = src[c] + (r - pt) * W + (c_lo - pl);
            float *d = pad + (r * Wp + c_lo) * 8;
            int64_t i = nc == 8 ? c8_fill_fast(d, rows, c_hi - c_lo) : 0;
            for (; i < c_hi - c_lo; i++)
                for (int64_t c = 0; c < nc; c++) d[i * 8 + c] = rows[c][i];
        }
        const float *w = (const float *)wt->data + c0 * KK;
        for (int64_t k = 0; k < KK; k++)
            for (int64_t c = 0; c < 8; c++) wv[k * 8 + c] = c < nc ? w[c * KK + k] : 0.0f;
        float bb[8];
        for (int64_t c = 0; c < 8; c++) bb[c] = bt && c < nc ? ((const float *)bt->data)[c0 + c] : 0.0f;
        const C8 bias = C8_LD(bb);
        float *y = (float *)yt->data + (n * C + c0) * OH * OW;
        const float *res = rt ? (const float *)rt->data + (n * C + c0) * OH * OW : NULL;
        for (int64_t oh = 0; oh < OH; oh++)
            for (int64_t ow0 = 0; ow0 < OW; ow0 += C8_CHUNK) {
                const int64_t cnt = OW - ow0 < C8_CHUNK ? OW - ow0 : C8_CHUNK;
                if (is3)
                    c8_row(pad, wv, bias, buf, oh, ow0, cnt, 3, 3, Wp, p);
                else
                    c8_row(pad, wv, bias, buf, oh, ow0, cnt, KH, KW, Wp, p);
                if (act_in) c8_act_buf(buf, cnt, p);
                float *dst[8];
                for (int64_t c = 0; c < 8; c++) dst[c] = y + (c < nc ? c : 0) * OH * OW + oh * OW + ow0;
                int64_t i = nc == 8 ? c8_scatter_fast(dst, buf, cnt) : 0;
                for (; i < cnt; i++)
                    for (int64_t c = 0; c < nc; c++) dst[c][i] = buf[i * 8 + c];
                if (act_in) continue;
                for (int64_t c = 0; c < nc; c++) {   /* the residual, then the activation */
                    if (res) {
                        const float *rr = res + c * OH * OW + oh * OW + ow0;
                        for (int64_t q = 0; q < cnt; q++) dst[c][q] += rr[q];
                    }
                    EP_ISA_ACT_APPLY(p->act, dst[c], cnt, p->act_alpha, p->act_beta);
                }
            }
    }
}

int EP_ISA_FN(conv2d_dwc8_f32)(const ep_op *op) {
    c8_job j;
    if (c8_plan(op, &j)) ep_parallel_for(op->pool, (uint32_t)j.parts, c8_task, &j);
    return EP_OK;
}

/* ---------------- DIRECT ---------------- */

#define DC_MB 4                 /* output channels per register tile */
#define DC_NV (16 / DV_N)       /* vectors per 16 output columns */

typedef struct dc_job {
    const ep_op *op;
    int64_t rows, Hb, PW;   /* output rows per band, padded rows per band, padded row width of a phase */
    int64_t slot;           /* floats per scratch slot: C * Hb * sw * PW */
    int64_t nb, bands;      /* bands per image, N * nb */
    int64_t parts;
} dc_job;

static int dc_plan(const ep_op *op, dc_job *j) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *yt = op->out[0];
    const int64_t N = xt->dims[0], C = xt->dims[1], M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    if (N == 0 || M == 0 || OH == 0 || OW == 0) return 0;
    const int64_t sw = p->stride[1];
    j->op = op;
    j->rows = OH < EP_CONV_DIRECT_ROWS ? OH : EP_CONV_DIRECT_ROWS;
    j->Hb = (j->rows - 1) * p->stride[0] + (int64_t)(p->kernel[0] - 1) * p->dilation[0] + 1;
    j->PW = (OW + 15) / 16 * 16 + (int64_t)(p->kernel[1] - 1) * p->dilation[1] / sw;
    j->slot = C * j->Hb * sw * j->PW;
    j->nb = (OH + j->rows - 1) / j->rows;
    j->bands = N * j->nb;
    int64_t parts = ep_pool_threads_for(op->pool, (uint64_t)(N * M) * (uint64_t)(OH * OW) *
                                                      (uint64_t)(C * p->kernel[0] * p->kernel[1]));
    if (j->slot > 0) {
        const int64_t slots = (int64_t)(op->scratch_size / ((uint64_t)j->slot * 4));
        if (parts > slots) parts = slots;
    }
    if (parts > j->bands) parts = j->bands;
    j->parts = parts < 1 ? 1 : parts;
    return 1;
}

/* Output row oh (band row r) of channels [m0, m0 + mb), mb <= DC_MB: 16-column tiles. */
static inline __attribute__((always_inline)) void dc_rows(const float *pad, const float *w, const float *bias,
                                                           float *y, const float *res, int64_t m0, int64_t mb,
                                                           int64_t r, int64_t C, int64_t OH, int64_t OW,
                                                           int64_t KH, int64_t KW, int64_t Hb, int64_t PW,
                                                           const int64_t *kwo, const dw_tail *tail,
                                                           const ep_conv2d_params *p) {
    const int64_t sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0];
    const int64_t KK = KH * KW, CK = C * KK;
    const float *wr[DC_MB];   /* the rows past mb repeat the last: computed, never stored */
    for (int64_t i = 0; i < DC_MB; i++) wr[i] = w + (m0 + (i < mb ? i : mb - 1)) * CK;
    for (int64_t ow = 0; ow < OW; ow += 16) {
        DV acc[DC_MB][DC_NV];
        for (int64_t i = 0; i < DC_MB; i++)
            for (int64_t v = 0; v < DC_NV; v++) acc[i][v] = DV_ZERO();
        for (int64_t c = 0; c < C; c++)
            for (int64_t kh = 0; kh < KH; kh++) {
                const float *row = pad + ((c * Hb + r * sh + kh * dh) * sw) * PW + ow;
                const int64_t k0 = c * KK + kh * KW;
                for (int64_t kw = 0; kw < KW; kw++) {
                    const float *s = row + kwo[kw];
                    DV xv[DC_NV];
                    for (int64_t v = 0; v < DC_NV; v++) xv[v] = DV_LD(s + v * DV_N);
                    for (int64_t i = 0; i < DC_MB; i++) {
                        const DW_W wv = DW_WLD(wr[i] + k0 + kw);
                        for (int64_t v = 0; v < DC_NV; v++) acc[i][v] = DV_FMA(acc[i][v], wv, xv[v]);
                    }
                }
            }
        for (int64_t i = 0; i < DC_MB; i++) {   /* constant bounds: acc stays in registers */
            if (i >= mb) break;
            const int64_t m = m0 + i;
            const DV b = DV_SET1(bias ? bias[m] : 0.0f);
            float *yr = y + m * OH * OW;
            const float *rr = res ? res + m * OH * OW : NULL;
            for (int64_t v = 0; v < DC_NV; v++) {
                const int64_t q = ow + v * DV_N;
                if (q >= OW) break;
                if (OW - q >= DV_N)
                    DV_ST(yr + q, dw_epi(acc[i][v], b, rr ? rr + q : NULL, p));
                else
                    dw_store_part(yr + q, rr ? rr + q : NULL, acc[i][v], b, OW - q, tail, p);
            }
        }
    }
}

/* y[0, n) = act(y), for the kinds of DW_ACT_VEC (the others: ep_act_apply_f32) */
static __attribute__((noinline)) void dc_act_row(float *y, int64_t n, const ep_conv2d_params *p) {
    int64_t i = 0;
    if (DW_ACT_VEC(p->act))
        for (; i + DV_N <= n; i += DV_N) DV_ST(y + i, DV_ACT(DV_LD(y + i), p));
    EP_ISA_ACT_APPLY(p->act, y + i, n - i, p->act_alpha, p->act_beta);
}

static void dc_task(void *ctx, uint32_t t) {
    const dc_job *j = (const dc_job *)ctx;
    const ep_op *op = j->op;
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *wt = op->in[1], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    const int64_t C = xt->dims[1], H = xt->dims[2], W = xt->dims[3];
    const int64_t M = yt->dims[1], OH = yt->dims[2], OW = yt->dims[3];
    const int64_t KH = p->kernel[0], KW = p->kernel[1], sh = p->stride[0], sw = p->stride[1];
    const int64_t Hb = j->Hb, PW = j->PW;
    float *pad = (float *)op->scratch + (int64_t)t * j->slot;
    int64_t kwo[32];
    dw_tap_offsets(kwo, p, PW);   /* KW <= 32: the shape function refuses more */
    dw_tail tail;
    dw_tail_init(&tail, OW);
    const float *bias = bt ? (const float *)bt->data : NULL;
    ep_conv2d_params plain = *p;   /* the tiles' epilogue: bias and residual; the activation runs per row */
    plain.act = EP_ACT_NONE;
    int64_t lo, hi;
    ep_split_range(j->bands, j->parts, t, &lo, &hi);
    for (int64_t band = lo; band < hi; band++) {
        const int64_t n = band / j->nb, oh0 = band % j->nb * j->rows;
        const int64_t nr = OH - oh0 < j->rows ? OH - oh0 : j->rows;
        const int64_t hb = (nr - 1) * sh + (KH - 1) * p->dilation[0] + 1;
        for (int64_t c = 0; c < C; c++)
            dw_fill(pad + c * Hb * sw * PW, (const float *)xt->data + (n * C + c) * H * W, 0, H, W, oh0 * sh, hb, sw,
                    PW, p->pads[0], p->pads[1], 0);
        float *y = (float *)yt->data + (n * M + 0) * OH * OW + oh0 * OW;
        const float *res = rt ? (const float *)rt->data + n * M * OH * OW + oh0 * OW : NULL;
        for (int64_t r = 0; r < nr; r++)   /* a row's input rows (C * KH of them) stay in L1 for every channel */
            for (int64_t m0 = 0; m0 < M; m0 += DC_MB) {
                const int64_t mb = M - m0 < DC_MB ? M - m0 : DC_MB;
                if (KH == 3 && KW == 3)
                    dc_rows(pad, (const float *)wt->data, bias, y + r * OW, res ? res + r * OW : NULL, m0, mb, r, C,
                            OH, OW, 3, 3, Hb, PW, kwo, &tail, &plain);
                else
                    dc_rows(pad, (const float *)wt->data, bias, y + r * OW, res ? res + r * OW : NULL, m0, mb, r, C,
                            OH, OW, KH, KW, Hb, PW, kwo, &tail, &plain);
                if (p->act != EP_ACT_NONE)
                    for (int64_t i = 0; i < mb; i++) dc_act_row(y + (m0 + i) * OH * OW + r * OW, OW, p);
            }
    }
}

int EP_ISA_FN(conv2d_direct_f32)(const ep_op *op) {
    dc_job j;
    if (dc_plan(op, &j)) ep_parallel_for(op->pool, (uint32_t)j.parts, dc_task, &j);
    return EP_OK;
}
