/* BINARY f32: Y = act(A op B) with numpy broadcasting (ranks aligned right). Integer dtypes go to
 * ep_ref_binary_int (binary_int.c), one check per op.
 *
 * The loop nest is the output shape with one element stride per operand (0 where
 * the operand is broadcast); dims of extent 1 are dropped and neighbours that are
 * contiguous for Y, A and B are merged. What is left is an odometer over the outer
 * dims and one inner row whose A/B strides are 1 or 0, so same-shape, scalar and
 * per-channel-bias cases all end in a flat, vectorisable loop.
 * Y may alias A or B exactly when the shapes match: element i is written only
 * after A[i] and B[i] are read. */
#include <math.h>
#include "ep_ops.h"
#include "ref_util_elem.h"

/* numpy.mod / ONNX Mod fmod=0 on floats: the remainder takes b's sign (a zero one too); x mod 0 is NaN,
 * x mod +-inf is x when the signs agree, else +-inf (as numpy). */
static inline float fmod_floor(float a, float b) {
    float m = fmodf(a, b);
    if (m != 0.0f) {
        if ((b < 0.0f) != (m < 0.0f)) m += b;
    } else {
        m = copysignf(0.0f, b);
    }
    return m;
}

static inline float bin_op(int kind, float a, float b) {
    switch (kind) {
    case EP_BIN_ADD: return a + b;
    case EP_BIN_SUB: return a - b;
    case EP_BIN_MUL: return a * b;
    case EP_BIN_DIV: return a / b;
    case EP_BIN_POW: return powf(a, b);
    case EP_BIN_PRELU: return a < 0.0f ? b * a : a;
    case EP_BIN_MAX: return (a > b || a != a) ? a : b; /* NaN propagates */
    case EP_BIN_MIN: return (a < b || a != a) ? a : b;
    case EP_BIN_MOD: return fmod_floor(a, b);
    case EP_BIN_FMOD: return fmodf(a, b);
    default: return a;
    }
}

/* The kind is a compile-time constant inside each instantiation so bin_op folds away. */
#define BIN_ROW_CASE(K)                                                                  \
    case K:                                                                              \
        if (sa == 1 && sb == 1)                                                          \
            for (int64_t i = 0; i < n; i++) y[i] = bin_op(K, a[i], b[i]);                \
        else if (sa == 1 && sb == 0) {                                                   \
            const float bv = b[0];                                                       \
            for (int64_t i = 0; i < n; i++) y[i] = bin_op(K, a[i], bv);                  \
        } else if (sa == 0 && sb == 1) {                                                 \
            const float av = a[0];                                                       \
            for (int64_t i = 0; i < n; i++) y[i] = bin_op(K, av, b[i]);                  \
        } else                                                                           \
            for (int64_t i = 0; i < n; i++) y[i] = bin_op(K, a[i * sa], b[i * sb]);      \
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
        for (int64_t i = 0; i < n; i++) y[i] = bin_op(kind, a[i * sa], b[i * sb]);
        break;
    }
}

/* Right-aligned broadcast strides of t against an output of rank r (0 where broadcast). */
static void bcast_strides(const ep_tensor *t, int r, int64_t *st) {
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        int ti = i - (r - t->rank);
        if (ti < 0 || t->dims[ti] == 1) {
            st[i] = 0;
        } else {
            st[i] = s;
        }
        if (ti >= 0) s *= t->dims[ti];
    }
}

int ep_ref_binary_f32(const ep_op *op) {
    const ep_binary_params *p = (const ep_binary_params *)op->params;
    const ep_tensor *ta = op->in[0];
    const ep_tensor *tb = op->in[1];
    const ep_tensor *ty = op->out[0];
    if (ty->dtype != EP_DTYPE_F32) return ep_ref_binary_int(op);   /* once per op */
    const int r = ty->rank;
    int64_t n[EP_MAX_RANK];
    int64_t st[3][EP_MAX_RANK]; /* Y, A, B */
    int64_t s = 1;
    for (int i = r - 1; i >= 0; i--) {
        n[i] = ty->dims[i];
        st[0][i] = s;
        s *= n[i];
    }
    bcast_strides(ta, r, st[1]);
    bcast_strides(tb, r, st[2]);
    int cr = ru_collapse(r, n, 3, st);
    const float *a = (const float *)ta->data;
    const float *b = (const float *)tb->data;
    float *y = (float *)ty->data;
    if (cr == 0) { /* a single element */
        y[0] = bin_op(p->kind, a[0], b[0]);
        y[0] = ep_act_f32(p->act, y[0], p->act_alpha, p->act_beta);
        return EP_OK;
    }
    if (n[0] == 0) return EP_OK;
    const int last = cr - 1;
    const int64_t len = n[last];
    int64_t idx[EP_MAX_RANK] = {0};
    int64_t oa = 0, ob = 0;
    for (;;) {
        bin_row(p->kind, y, a + oa, st[1][last], b + ob, st[2][last], len);
        ep_act_apply_f32(p->act, y, len, p->act_alpha, p->act_beta);
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
