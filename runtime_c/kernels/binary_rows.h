/* The ISA-neutral part of the BINARY kernels (NEON, AVX2): numpy broadcast strides, merging of dims that
 * stay contiguous, then a walk over contiguous output rows, each computed by the ISA's row function.
 * Include from one ISA file; the reference kernel (ref/binary_f32.c) is the fallback for what rows
 * cannot do (general strides, kinds without a row function, single elements). */
#ifndef EP_BINARY_ROWS_H
#define EP_BINARY_ROWS_H
#include "ep_ops.h"
#include "ref/ref_util_elem.h"

/* y[0..n) = act(a[i*sa] op b[i*sb]) with sa, sb in {0, 1}; may write over a or b exactly. */
typedef void (*ep_bin_row_fn)(float *y, const float *a, int64_t sa, const float *b, int64_t sb, int64_t n,
                              int act, float alpha, float beta);

/* Instantiates ROW(K) (a macro defining the row function bin_row_K) for ADD, SUB, MUL, DIV, PRELU, MAX and MIN,
 * then defines `static ep_bin_row_fn name(int kind)` over them; other kinds (POW, MOD, FMOD) get NULL: the
 * reference. */
#define EP_BIN_ROWS(ROW, name)                                                                               \
    ROW(EP_BIN_ADD) ROW(EP_BIN_SUB) ROW(EP_BIN_MUL) ROW(EP_BIN_DIV) ROW(EP_BIN_PRELU) ROW(EP_BIN_MAX)         \
    ROW(EP_BIN_MIN) EP_BIN_ROW_FOR(name)
#define EP_BIN_ROW_FOR(name)                                   \
    static ep_bin_row_fn name(int kind) {                      \
        switch (kind) {                                        \
        case EP_BIN_ADD: return bin_row_EP_BIN_ADD;            \
        case EP_BIN_SUB: return bin_row_EP_BIN_SUB;            \
        case EP_BIN_MUL: return bin_row_EP_BIN_MUL;            \
        case EP_BIN_DIV: return bin_row_EP_BIN_DIV;            \
        case EP_BIN_PRELU: return bin_row_EP_BIN_PRELU;        \
        case EP_BIN_MAX: return bin_row_EP_BIN_MAX;            \
        case EP_BIN_MIN: return bin_row_EP_BIN_MIN;            \
        default: return NULL;                                  \
        }                                                      \
    }

/* C8 Y = X op P (or P op X when p_first) with P one value per (n, c) channel block of 8, over the 5-D views
 * (ru_bin_c8_views: y, x [N, C/8, H, W, 8], p [pn, C/8, 1, 1, 8]): rows of up to EP_BIN_C8_PIX pixels, P's 8
 * values repeated along the row, so the ISA's same-shape row runs. */
#define EP_BIN_C8_PIX 32
static inline void ep_binary_c8_channels(const ep_binary_params *p, ep_bin_row_fn fn, const ep_tensor *vy,
                                         const float *x, const ep_tensor *vp, int p_first) {
    const int64_t N = vy->dims[0], CB = vy->dims[1], P = (int64_t)vy->dims[2] * vy->dims[3], B = EP_LAYOUT_BLOCK;
    const float *pv = (const float *)vp->data;
    float *y = (float *)vy->data, rep[EP_BIN_C8_PIX * EP_LAYOUT_BLOCK];
    for (int64_t n = 0; n < N; n++)
        for (int64_t cb = 0; cb < CB; cb++) {
            const float *pc = pv + ((vp->dims[0] > 1 ? n : 0) * CB + cb) * B;
            for (int64_t i = 0; i < (P < EP_BIN_C8_PIX ? P : EP_BIN_C8_PIX) * B; i++) rep[i] = pc[i % B];
            const int64_t at = (n * CB + cb) * P * B;
            for (int64_t q = 0; q < P; q += EP_BIN_C8_PIX) {
                const int64_t len = (P - q < EP_BIN_C8_PIX ? P - q : EP_BIN_C8_PIX) * B, o = at + q * B;
                if (p_first) fn(y + o, rep, 1, x + o, 1, len, p->act, p->act_alpha, p->act_beta);
                else fn(y + o, x + o, 1, rep, 1, len, p->act, p->act_alpha, p->act_beta);
            }
        }
}

/* Runs op through row_for(kind)'s rows, or through ep_ref_binary_f32 when rows do not apply. The ISA
 * rows are f32 only: integer dtypes go to the reference kernel (ep_ref_binary_int), one check per op.
 * C8 operands run over their 5-D views (ru_bin_c8_views); a per-channel operand against a full one takes
 * ep_binary_c8_channels. */
static inline int ep_binary_rows(const ep_op *op, ep_bin_row_fn (*row_for)(int kind)) {
    const ep_binary_params *p = (const ep_binary_params *)op->params;
    const ep_tensor *ta = op->in[0], *tb = op->in[1], *ty = op->out[0];
    if (ty->dtype != EP_DTYPE_F32) return ep_ref_binary_int(op);
    ep_tensor v[3];
    if (ru_bin_c8_views(ta, tb, ty, v)) {
        ty = &v[0], ta = &v[1], tb = &v[2];
        const int64_t pix = (int64_t)ty->dims[2] * ty->dims[3];
        for (int s = 0; s < 2 && pix > 1; s++) {   /* s = 0: B per channel; s = 1: A per channel */
            const ep_tensor *full = s ? tb : ta, *per = s ? ta : tb;
            const ep_bin_row_fn fn = row_for(p->kind);
            if (fn && !memcmp(full->dims, ty->dims, sizeof(int32_t) * 5) && per->dims[4] == EP_LAYOUT_BLOCK &&
                per->dims[2] == 1 && per->dims[3] == 1) {
                ep_binary_c8_channels(p, fn, ty, (const float *)full->data, per, s);
                return EP_OK;
            }
        }
    }
    ru_bin_walk w;
    if (ru_bin_begin(&w, ta, tb, ty) <= 0) return ep_ref_binary_f32(op);   /* one element, or none */
    const ep_bin_row_fn fn = w.sa <= 1 && w.sb <= 1 ? row_for(p->kind) : NULL;
    if (!fn) return ep_ref_binary_f32(op);                                 /* general broadcasting, POW, MOD */
    const float *a = (const float *)ta->data;
    const float *b = (const float *)tb->data;
    float *y = (float *)ty->data;
    do {
        fn(y, a + w.oa, w.sa, b + w.ob, w.sb, w.len, p->act, p->act_alpha, p->act_beta);
        y += w.len;
    } while (ru_bin_next(&w));
    return EP_OK;
}
#endif
