/* BINARY on integers (I8, U8, I16, I32, I64; A, B and Y one dtype): Y = A op B with numpy
 * broadcasting, for ADD, SUB, MUL, DIV, MAX, MIN, MOD, FMOD (the shape function refuses the other
 * kinds and any fused activation for integer dtypes).
 *
 * Semantics (docs/plan-format.md): every op is computed on int64 values with the wrapping ones in
 * uint64 (no signed overflow, so no UB), then stored truncated to Y's width: integers wrap as two's
 * complement, as numpy and onnxruntime do. DIV truncates toward zero (C, ONNX); MOD takes the sign of
 * b (ONNX Mod fmod=0, numpy.mod), FMOD the sign of a (fmod=1, C %). A zero divisor in DIV, MOD or FMOD
 * fails the run with EP_ERR_RUN_INDEX, as onnxruntime fails it ("Integer division by zero"); the
 * check runs on each chunk of divisors before anything is computed from it. INT_MIN / -1 wraps to
 * INT_MIN and INT_MIN MOD -1 is 0 (numpy; onnxruntime traps on the division).
 *
 * The loop nest is the reference f32 kernel's (broadcast strides, collapsed dims, an odometer over
 * the outer dims, one inner row with strides 0 or 1); each row runs in chunks of IB_CHUNK elements
 * widened to int64 on the stack, so the dtype and kind switches are taken once per chunk, not per
 * element. Y may alias A or B exactly (a chunk is stored only after it is loaded). */
#include "ep_ops.h"
#include "ref_util_elem.h"

#define IB_CHUNK 64

static void ib_load(int64_t *d, const void *p, uint8_t dt, int64_t s, int64_t n) {
    switch (dt) {
    case EP_DTYPE_I8: for (int64_t i = 0; i < n; i++) d[i] = ((const int8_t *)p)[i * s]; break;
    case EP_DTYPE_U8: for (int64_t i = 0; i < n; i++) d[i] = ((const uint8_t *)p)[i * s]; break;
    case EP_DTYPE_I16: for (int64_t i = 0; i < n; i++) d[i] = ((const int16_t *)p)[i * s]; break;
    case EP_DTYPE_I32: for (int64_t i = 0; i < n; i++) d[i] = ((const int32_t *)p)[i * s]; break;
    default: for (int64_t i = 0; i < n; i++) d[i] = ((const int64_t *)p)[i * s]; break;
    }
}

/* Truncating stores: the conversions to a narrower signed type are the two's complement wrap (the
 * value is first reduced modulo 2^w in the unsigned type). */
static void ib_store(void *p, uint8_t dt, const int64_t *v, int64_t n) {
    switch (dt) {
    case EP_DTYPE_I8: for (int64_t i = 0; i < n; i++) ((int8_t *)p)[i] = (int8_t)(uint8_t)(uint64_t)v[i]; break;
    case EP_DTYPE_U8: for (int64_t i = 0; i < n; i++) ((uint8_t *)p)[i] = (uint8_t)(uint64_t)v[i]; break;
    case EP_DTYPE_I16: for (int64_t i = 0; i < n; i++) ((int16_t *)p)[i] = (int16_t)(uint16_t)(uint64_t)v[i]; break;
    case EP_DTYPE_I32: for (int64_t i = 0; i < n; i++) ((int32_t *)p)[i] = (int32_t)(uint32_t)(uint64_t)v[i]; break;
    default: for (int64_t i = 0; i < n; i++) ((int64_t *)p)[i] = v[i]; break;
    }
}

/* b != 0 (checked by ib_compute) */
static inline int64_t ib_div(int64_t a, int64_t b) {
    if (b == -1) return (int64_t)(UINT64_C(0) - (uint64_t)a);   /* INT64_MIN / -1 wraps */
    return a / b;
}
static inline int64_t ib_fmod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
static inline int64_t ib_mod(int64_t a, int64_t b) {
    const int64_t r = ib_fmod(a, b);
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;   /* |r| < |b|: no overflow */
}

/* a[i] = a[i] op b[i], i < n; the kind switch once per call. EP_ERR_RUN_INDEX for a zero divisor. */
static int ib_compute(int kind, int64_t *a, const int64_t *b, int64_t n) {
    if (kind == EP_BIN_DIV || kind == EP_BIN_MOD || kind == EP_BIN_FMOD)
        for (int64_t i = 0; i < n; i++)
            if (b[i] == 0) return EP_ERR_RUN_INDEX;
    switch (kind) {
    case EP_BIN_ADD: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]); break;
    case EP_BIN_SUB: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]); break;
    case EP_BIN_MUL: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]); break;
    case EP_BIN_DIV: for (int64_t i = 0; i < n; i++) a[i] = ib_div(a[i], b[i]); break;
    case EP_BIN_MAX: for (int64_t i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case EP_BIN_MIN: for (int64_t i = 0; i < n; i++) a[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case EP_BIN_MOD: for (int64_t i = 0; i < n; i++) a[i] = ib_mod(a[i], b[i]); break;
    case EP_BIN_FMOD: for (int64_t i = 0; i < n; i++) a[i] = ib_fmod(a[i], b[i]); break;
    default: break;   /* POW, PRELU: refused by the shape function; Y = A */
    }
    return EP_OK;
}

int ep_ref_binary_int(const ep_op *op) {
    const ep_binary_params *p = (const ep_binary_params *)op->params;
    const ep_tensor *ta = op->in[0], *tb = op->in[1], *ty = op->out[0];
    const uint8_t dt = ty->dtype;
    const int64_t es = (int64_t)ep_dtype_size(dt);
    ru_bin_walk w;
    if (ru_bin_begin(&w, ta, tb, ty) < 0) return EP_OK;   /* a single element is a row of one */
    const char *a = (const char *)ta->data;
    const char *b = (const char *)tb->data;
    char *y = (char *)ty->data;
    const int64_t len = w.len, sa = w.sa, sb = w.sb;
    int64_t va[IB_CHUNK], vb[IB_CHUNK];
    do {
        for (int64_t c = 0; c < len; c += IB_CHUNK) {
            const int64_t m = len - c < IB_CHUNK ? len - c : IB_CHUNK;
            ib_load(va, a + (w.oa + c * sa) * es, dt, sa, m);
            ib_load(vb, b + (w.ob + c * sb) * es, dt, sb, m);
            const int rc = ib_compute(p->kind, va, vb, m);
            if (rc != EP_OK) return rc;
            ib_store(y + c * es, dt, va, m);
        }
        y += len * es;
    } while (ru_bin_next(&w));
    return EP_OK;
}
