/* WHERE, COMPARE, EXPAND and CAST reference kernels (broadcasting through ref_bcast.h). */
#include <string.h>
#include "ep_ops.h"
#include "ref_bcast.h"
#include "float_bits.h"

int ep_ref_where_any(const ep_op *op) {
    const ep_tensor *y = op->out[0];
    const ep_tensor *src[3] = {op->in[0], op->in[1], op->in[2]};
    const size_t es = ep_dtype_size(y->dtype);
    const int64_t n = rb_count(y);
    const uint8_t *c = (const uint8_t *)src[0]->data;
    const char *a = (const char *)src[1]->data, *b = (const char *)src[2]->data;
    char *d = (char *)y->data;
    rb_iter it;
    rb_begin(&it, y, 3, src);
    for (int64_t i = 0; i < n; i++) {
        const char *s = c[it.off[0]] ? a + it.off[1] * (int64_t)es : b + it.off[2] * (int64_t)es;
        memcpy(d + i * (int64_t)es, s, es);
        rb_next(&it);
    }
    return EP_OK;
}

/* the orderings, on integers (exact as int64) and on floats (false when either is NaN) */
#define CMP_ORDERINGS(a, b)                                                                 \
    case EP_CMP_EQUAL: return (a) == (b);                                                   \
    case EP_CMP_LESS: return (a) < (b);                                                     \
    case EP_CMP_GREATER: return (a) > (b);                                                  \
    case EP_CMP_LESS_EQUAL: return (a) <= (b);                                              \
    case EP_CMP_GREATER_EQUAL: return (a) >= (b);

static inline uint8_t cmp_i(int kind, int64_t a, int64_t b) {
    switch (kind) {
    CMP_ORDERINGS(a, b)
    case EP_CMP_AND: return (a != 0) & (b != 0);
    case EP_CMP_OR: return (a != 0) | (b != 0);
    case EP_CMP_XOR: return (a != 0) ^ (b != 0);
    default: return 0;
    }
}

static inline uint8_t cmp_u(int kind, uint64_t a, uint64_t b) {
    switch (kind) {
    CMP_ORDERINGS(a, b)
    default: return 0;
    }
}

static inline uint8_t cmp_f(int kind, float a, float b) {
    switch (kind) {
    CMP_ORDERINGS(a, b)
    default: return 0;
    }
}

int ep_ref_compare_any(const ep_op *op) {
    const ep_compare_params *p = (const ep_compare_params *)op->params;
    const ep_tensor *y = op->out[0];
    const ep_tensor *src[2] = {op->in[0], op->in[1]};
    const uint8_t dt = src[0]->dtype;
    const int64_t n = rb_count(y);
    uint8_t *d = (uint8_t *)y->data;
    rb_iter it;
    rb_begin(&it, y, 2, src);
    if (dt == EP_DTYPE_F32) {
        const float *a = (const float *)src[0]->data, *b = (const float *)src[1]->data;
        for (int64_t i = 0; i < n; i++) {
            d[i] = cmp_f(p->kind, a[it.off[0]], b[it.off[1]]);
            rb_next(&it);
        }
        return EP_OK;
    }
    if (dt == EP_DTYPE_U64) {   /* ordered as unsigned: values >= 2^63 are the largest */
        const uint64_t *a = (const uint64_t *)src[0]->data, *b = (const uint64_t *)src[1]->data;
        for (int64_t i = 0; i < n; i++) {
            d[i] = cmp_u(p->kind, a[it.off[0]], b[it.off[1]]);
            rb_next(&it);
        }
        return EP_OK;
    }
    for (int64_t i = 0; i < n; i++) {
        d[i] = cmp_i(p->kind, rb_load_i(src[0]->data, dt, it.off[0]), rb_load_i(src[1]->data, dt, it.off[1]));
        rb_next(&it);
    }
    return EP_OK;
}

int ep_ref_expand_any(const ep_op *op) {
    const ep_tensor *y = op->out[0];
    const ep_tensor *src[1] = {op->in[0]};
    const size_t es = ep_dtype_size(y->dtype);
    const int64_t n = rb_count(y);
    const char *a = (const char *)src[0]->data;
    char *d = (char *)y->data;
    rb_iter it;
    rb_begin(&it, y, 1, src);
    for (int64_t i = 0; i < n; i++) {
        memcpy(d + i * (int64_t)es, a + it.off[0] * (int64_t)es, es);
        rb_next(&it);
    }
    return EP_OK;
}

/* Float to an integer of [lo, hi]: truncation toward zero, saturating, NaN -> 0 (no UB). */
static inline int64_t f2i(double v, double lo, double hi) {
    if (v != v) return 0;
    if (v <= lo) return (int64_t)lo;
    if (v >= hi) return (int64_t)hi;
    return (int64_t)v;
}
static inline int64_t f2i64(double v) {
    if (v != v) return 0;
    if (v >= 9223372036854775808.0) return INT64_MAX;
    if (v <= -9223372036854775808.0) return INT64_MIN;
    return (int64_t)v;
}

/* Float to U64: truncation toward zero, saturating to [0, 2^64 - 1], NaN -> 0. */
static inline uint64_t f2u64(double v) {
    if (!(v > 0.0)) return 0;
    if (v >= 18446744073709551616.0) return UINT64_MAX;
    return (uint64_t)v;
}

/* element i of a float tensor (F32, F16, BF16 or F64), exactly, as a double */
static inline double load_float(const void *p, uint8_t dt, int64_t i) {
    switch (dt) {
    case EP_DTYPE_F64: return ((const double *)p)[i];
    case EP_DTYPE_F16: return ep_f16_to_f32(((const uint16_t *)p)[i]);
    case EP_DTYPE_BF16: return ep_bf16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

/* CAST from U64 to a float dtype: converts the unsigned value (values >= 2^63 too), rounded to
 * nearest even; F16 and BF16 through float32. */
static int cast_u64_to_float(const ep_tensor *x, const ep_tensor *y, int64_t n) {
    const uint64_t *s = (const uint64_t *)x->data;
    for (int64_t i = 0; i < n; i++) {
        switch (y->dtype) {
        case EP_DTYPE_F64: ((double *)y->data)[i] = (double)s[i]; break;
        case EP_DTYPE_F16: ((uint16_t *)y->data)[i] = ep_f32_to_f16((float)s[i]); break;
        case EP_DTYPE_BF16: ((uint16_t *)y->data)[i] = ep_f32_to_bf16((float)s[i]); break;
        default: ((float *)y->data)[i] = (float)s[i]; break;
        }
    }
    return EP_OK;
}

/* The pairs that quantised graphs convert whole tensors through, one tight loop per pair (the compiler
 * vectorises them): the values of the general loop below, written on the source type. Returns 0 for a
 * pair it does not take. */
#define CAST_RUN(ST, DT, EXPR)                                          \
    do {                                                                \
        const ST *s_ = (const ST *)x->data;                             \
        DT *d_ = (DT *)y->data;                                         \
        for (int64_t i = 0; i < n; i++) {                               \
            const ST v = s_[i];                                         \
            d_[i] = (DT)(EXPR);                                         \
        }                                                               \
        return 1;                                                       \
    } while (0)
static int cast_fast(const ep_tensor *x, const ep_tensor *y, int64_t n) {
    const uint8_t sd = x->dtype, dd = y->dtype;
    if (sd == EP_DTYPE_F32) {
        switch (dd) {
        case EP_DTYPE_I32:
            CAST_RUN(float, int32_t, v != v ? 0 : v >= 2147483648.0f ? INT32_MAX : v <= -2147483648.0f ? INT32_MIN : (int32_t)v);
        case EP_DTYPE_U8: CAST_RUN(float, uint8_t, v != v ? 0 : v <= 0.0f ? 0 : v >= 255.0f ? 255 : (int32_t)v);
        case EP_DTYPE_I8: CAST_RUN(float, int8_t, v != v ? 0 : v <= -128.0f ? -128 : v >= 127.0f ? 127 : (int32_t)v);
        default: return 0;
        }
    }
    if (dd != EP_DTYPE_F32) return 0;
    switch (sd) {
    case EP_DTYPE_I32: CAST_RUN(int32_t, float, v);
    case EP_DTYPE_U8: CAST_RUN(uint8_t, float, v);
    case EP_DTYPE_I8: CAST_RUN(int8_t, float, v);
    case EP_DTYPE_I64: CAST_RUN(int64_t, float, v);
    default: return 0;
    }
}
#undef CAST_RUN

int ep_ref_cast_any(const ep_op *op) {
    const ep_tensor *x = op->in[0], *y = op->out[0];
    const int64_t n = rb_count(y);
    const uint8_t sd = x->dtype, dd = y->dtype;
    if (sd == dd || (sd == EP_DTYPE_U8 && dd == EP_DTYPE_I8) || (sd == EP_DTYPE_I8 && dd == EP_DTYPE_U8)) {
        if (n) memcpy(y->data, x->data, (size_t)n * ep_dtype_size(dd)); /* same bits (wrap) */
        return EP_OK;
    }
    if (cast_fast(x, y, n)) return EP_OK;
    const int from_f = sd == EP_DTYPE_F32 || sd == EP_DTYPE_F16 || sd == EP_DTYPE_BF16 || sd == EP_DTYPE_F64;
    if (sd == EP_DTYPE_U64 && (dd == EP_DTYPE_F32 || dd == EP_DTYPE_F16 || dd == EP_DTYPE_BF16 || dd == EP_DTYPE_F64))
        return cast_u64_to_float(x, y, n);   /* integer sources below are exact as int64 */
    for (int64_t i = 0; i < n; i++) {
        const double v = from_f ? load_float(x->data, sd, i) : 0.0;
        const int64_t iv = from_f ? 0 : rb_load_i(x->data, sd, i);
        switch (dd) {
        case EP_DTYPE_F32: ((float *)y->data)[i] = from_f ? (float)v : (float)iv; break;
        case EP_DTYPE_F64: ((double *)y->data)[i] = from_f ? v : (double)iv; break;
        case EP_DTYPE_F16: ((uint16_t *)y->data)[i] = ep_f32_to_f16(from_f ? (float)v : (float)iv); break;
        case EP_DTYPE_BF16: ((uint16_t *)y->data)[i] = ep_f32_to_bf16(from_f ? (float)v : (float)iv); break;
        case EP_DTYPE_BOOL: ((uint8_t *)y->data)[i] = from_f ? v != 0.0 : iv != 0; break;
        case EP_DTYPE_I8: ((int8_t *)y->data)[i] = (int8_t)(from_f ? f2i(v, -128.0, 127.0) : (int8_t)(uint8_t)(uint64_t)iv); break;
        case EP_DTYPE_U8: ((uint8_t *)y->data)[i] = (uint8_t)(from_f ? f2i(v, 0.0, 255.0) : (uint8_t)(uint64_t)iv); break;
        case EP_DTYPE_I16: ((int16_t *)y->data)[i] = (int16_t)(from_f ? f2i(v, -32768.0, 32767.0) : (int16_t)(uint16_t)(uint64_t)iv); break;
        case EP_DTYPE_I32: ((int32_t *)y->data)[i] = (int32_t)(from_f ? f2i(v, -2147483648.0, 2147483647.0) : (int32_t)(uint32_t)(uint64_t)iv); break;
        case EP_DTYPE_I64: ((int64_t *)y->data)[i] = from_f ? f2i64(v) : iv; break;
        case EP_DTYPE_U16: ((uint16_t *)y->data)[i] = (uint16_t)(from_f ? (uint64_t)f2i(v, 0.0, 65535.0) : (uint64_t)iv); break;
        case EP_DTYPE_U32: ((uint32_t *)y->data)[i] = (uint32_t)(from_f ? (uint64_t)f2i(v, 0.0, 4294967295.0) : (uint64_t)iv); break;
        case EP_DTYPE_U64: ((uint64_t *)y->data)[i] = from_f ? f2u64(v) : (uint64_t)iv; break;
        default: break;
        }
    }
    return EP_OK;
}
