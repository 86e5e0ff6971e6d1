/* BINARY f32: Y = act(A op B) with numpy broadcasting (ranks aligned right). Integer dtypes go to
 * ep_ref_binary_int (binary_int.c), one check per op.
 *
 * The loop nest is the output shape with one element stride per operand (0 where
 * the operand is broadcast); dims of extent 1 are dropped and neighbours that are
 * contiguous for Y, A and B are merged. What is left is an odometer over the outer
 * dims and one inner row whose A/B strides are 1 or 0, so same-shape, scalar and
 * per-channel-bias cases all end in a flat, vectorisable loop.
 * Y may alias A or B exactly when the shapes match: element i is written only
 * after A[i] and B[i] are read.
 * C8 operands (plan_format.h): the same broadcasting over 5-D views of the bytes, [N, C/8, H, W, 8] for Y and a
 * C8 operand, [n, C/8 or 1, 1, 1, 8 or 1] for a per-channel or scalar one (ref_util_elem.h ru_bin_c8_views). */
#include "ep_ops.h"
#include "ref_util_elem.h"

/* The kind is a compile-time constant inside each instantiation so bin_op folds away. */
#define BIN_ROW_CASE(K)                                                                  \
    case K:                                                                              \
        if (sa == 1 && sb == 1)                                                          \
            for (int64_t i = 0; i < n; i++) y[i] = ru_bin_f32(K, a[i], b[i]);                \
        else if (sa == 1 && sb == 0) {                                                   \
            const float bv = b[0];                                                       \
            for (int64_t i = 0; i < n; i++) y[i] = ru_bin_f32(K, a[i], bv);                  \
        } else if (sa == 0 && sb == 1) {                                                 \
            const float av = a[0];                                                       \
            for (int64_t i = 0; i < n; i++) y[i] = ru_bin_f32(K, av, b[i]);                  \
        } else                                                                           \
            for (int64_t i = 0; i < n; i++) y[i] = ru_bin_f32(K, a[i * sa], b[i * sb]);      \
        break;

static void bin_row(int kind, float *y, const float *a, int64_t sa, const float *b, int64_t sb,
                    int64_t n) {
    switch (kind) {
    BIN_ROW_CASE(EP_BIN_ADD)
    BIN_ROW_CASE(EP_BIN_SUB)
    BIN_ROW_CASE(EP_BIN_MUL)
    BIN_ROW_CASE(EP_BIN_DIV)
    BIN_ROW_CASE(EP_BIN_POW)
    BIN_ROW_CASE(EP_BIN_PRELU)
    BIN_ROW_CASE(EP_BIN_MAX)
    BIN_ROW_CASE(EP_BIN_MIN)
    default: /* MOD, FMOD: rare (integer-valued models), one generic loop */
        for (int64_t i = 0; i < n; i++) y[i] = ru_bin_f32(kind, a[i * sa], b[i * sb]);
        break;
    }
}

int ep_ref_binary_f32(const ep_op *op) {
    const ep_binary_params *p = (const ep_binary_params *)op->params;
    const ep_tensor *ta = op->in[0];
    const ep_tensor *tb = op->in[1];
    const ep_tensor *ty = op->out[0];
    if (ty->dtype != EP_DTYPE_F32) return ep_ref_binary_int(op);   /* once per op */
    ep_tensor v[3];
    if (ru_bin_c8_views(ta, tb, ty, v)) ty = &v[0], ta = &v[1], tb = &v[2];   /* C8: the 5-D views */
    ru_bin_walk w;
    const int cr = ru_bin_begin(&w, ta, tb, ty);
    const float *a = (const float *)ta->data;
    const float *b = (const float *)tb->data;
    float *y = (float *)ty->data;
    if (cr < 0) return EP_OK;
    if (cr == 0) { /* a single element */
        y[0] = ru_bin_f32(p->kind, a[0], b[0]);
        y[0] = ep_act_f32(p->act, y[0], p->act_alpha, p->act_beta);
        return EP_OK;
    }
    do {
        bin_row(p->kind, y, a + w.oa, w.sa, b + w.ob, w.sb, w.len);
        ep_act_apply_f32(p->act, y, w.len, p->act_alpha, p->act_beta);
        y += w.len;
    } while (ru_bin_next(&w));
    return EP_OK;
}
