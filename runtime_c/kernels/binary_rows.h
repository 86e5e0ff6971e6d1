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

/* Defines `static ep_bin_row_fn name(int kind)` over the row functions bin_row_EP_BIN_<KIND> an ISA file
 * defines for ADD, SUB, MUL, DIV, PRELU, MAX and MIN; other kinds (POW, MOD, FMOD) get NULL: the reference. */
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

static inline void ep_bcast_strides(const ep_tensor *t, int r, int64_t *st) {
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        const int ti = i - (r - t->rank);
        st[i] = (ti < 0 || t->dims[ti] == 1) ? 0 : s;
        if (ti >= 0) s *= t->dims[ti];
    }
}

/* Runs op through row_for(kind)'s rows, or through ep_ref_binary_f32 when rows do not apply. The ISA
 * rows are f32 only: integer dtypes go to the reference kernel (ep_ref_binary_int), one check per op. */
static inline int ep_binary_rows(const ep_op *op, ep_bin_row_fn (*row_for)(int kind)) {
    const ep_binary_params *p = (const ep_binary_params *)op->params;
    const ep_tensor *ta = op->in[0], *tb = op->in[1], *ty = op->out[0];
    if (ty->dtype != EP_DTYPE_F32) return ep_ref_binary_int(op);
    const int r = ty->rank;
    int64_t n[EP_MAX_RANK];
    int64_t st[3][EP_MAX_RANK];
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        n[i] = ty->dims[i];
        st[0][i] = s;
        s *= n[i];
    }
    ep_bcast_strides(ta, r, st[1]);
    ep_bcast_strides(tb, r, st[2]);
    const int cr = ru_collapse(r, n, 3, st);
    if (cr == 0 || n[0] == 0) return ep_ref_binary_f32(op);   /* one element, or none */
    const int last = cr - 1;
    const int64_t len = n[last], sa = st[1][last], sb = st[2][last];
    const ep_bin_row_fn fn = sa <= 1 && sb <= 1 ? row_for(p->kind) : NULL;
    if (!fn) return ep_ref_binary_f32(op);                     /* general broadcasting, POW, MOD */
    const float *a = (const float *)ta->data;
    const float *b = (const float *)tb->data;
    float *y = (float *)ty->data;
    int64_t idx[EP_MAX_RANK] = {0};
    int64_t oa = 0, ob = 0;
    for (;;) {
        fn(y, a + oa, sa, b + ob, sb, len, p->act, p->act_alpha, p->act_beta);
        y += len;
        int i = last - 1;
        for (; i >= 0; i--) {
            oa += st[1][i];
            ob += st[2][i];
            if (++idx[i] < n[i]) break;
            oa -= st[1][i] * n[i];
            ob -= st[2][i] * n[i];
            idx[i] = 0;
        }
        if (i < 0) return EP_OK;
    }
}
#endif
