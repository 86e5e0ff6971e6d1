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

/* Runs op through row_for(kind)'s rows, or through ep_ref_binary_f32 when rows do not apply. The ISA
 * rows are f32 only: integer dtypes go to the reference kernel (ep_ref_binary_int), one check per op. */
static inline int ep_binary_rows(const ep_op *op, ep_bin_row_fn (*row_for)(int kind)) {
    const ep_binary_params *p = (const ep_binary_params *)op->params;
    const ep_tensor *ta = op->in[0], *tb = op->in[1], *ty = op->out[0];
    if (ty->dtype != EP_DTYPE_F32) return ep_ref_binary_int(op);
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
