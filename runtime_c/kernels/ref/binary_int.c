/* BINARY on integers (I8, U8, I16, U16, I32, U32, I64, U64; A, B and Y one dtype): Y = A op B with
 * numpy broadcasting, for ADD, SUB, MUL, DIV, POW, MAX, MIN, MOD, FMOD, BITAND, BITOR, BITXOR, SHL and
 * SHR (the shape function refuses PRELU and any fused activation for integer dtypes).
 *
 * Semantics (docs/plan-format.md): signed types compute on int64 values with the wrapping ops in
 * uint64 (no signed overflow, so no UB); unsigned types compute on their zero-extended values in
 * uint64 (exact for U64 values >= 2^63: unsigned compares, quotients and remainders, where MOD and
 * FMOD agree). Results are stored truncated to Y's width: integers wrap as two's complement, as numpy
 * and onnxruntime do. SHL and SHR shift by b bits (ONNX BitShift): SHL discards the bits past Y's
 * width, SHR is arithmetic (sign-filling) on signed types; a shift b < 0 or >= the width gives what
 * the fill alone gives: 0, or -1 for SHR of a negative value. POW is repeated multiplication (square
 * and multiply), so it wraps like MUL (numpy); a negative exponent gives the truncated real power: 1
 * for a = 1, +-1 for a = -1, 0 otherwise (0 for a = 0 too). DIV truncates toward zero (C, ONNX);
 * MOD takes the sign of b (ONNX Mod fmod=0, numpy.mod), FMOD the sign of a (fmod=1, C %). A zero
 * divisor in DIV, MOD or FMOD fails the run with EP_ERR_RUN_INDEX, as onnxruntime fails it ("Integer division by zero"); the
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
    case EP_DTYPE_U16: for (int64_t i = 0; i < n; i++) d[i] = ((const uint16_t *)p)[i * s]; break;
    case EP_DTYPE_U32: for (int64_t i = 0; i < n; i++) d[i] = ((const uint32_t *)p)[i * s]; break;
    default: for (int64_t i = 0; i < n; i++) d[i] = ((const int64_t *)p)[i * s]; break;   /* I64, U64 bits */
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
    case EP_DTYPE_U16: for (int64_t i = 0; i < n; i++) ((uint16_t *)p)[i] = (uint16_t)(uint64_t)v[i]; break;
    case EP_DTYPE_U32: for (int64_t i = 0; i < n; i++) ((uint32_t *)p)[i] = (uint32_t)(uint64_t)v[i]; break;
    default: for (int64_t i = 0; i < n; i++) ((int64_t *)p)[i] = v[i]; break;
    }
}

/* a^b by square and multiply in uint64 (wrapping), b >= 0 */
static inline uint64_t ib_upow(uint64_t a, uint64_t b) {
    uint64_t r = 1;
    while (b) {
        if (b & 1u) r *= a;
        a *= a;
        b >>= 1;
    }
    return r;
}
static inline int64_t ib_pow(int64_t a, int64_t b) {
    if (b < 0) return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    return (int64_t)ib_upow((uint64_t)a, (uint64_t)b);
}

/* b != 0 (checked by ib_compute) */
static inline int64_t ib_div(int64_t a, int64_t b) {
    if (b == -1) return (int64_t)(UINT64_C(0) - (uint64_t)a);   /* INT64_MIN / -1 wraps */
    return a / b;
}
static inline int64_t ib_fmod(int64_t a, int64_t b) { return b == -1 ? 0 : a % b; }
/* signed shifts in a width of w bits (a holds a value of that width, sign-extended) */
static inline int64_t ib_shl(int64_t a, int64_t b, int64_t w) {
    return b < 0 || b >= w ? 0 : (int64_t)((uint64_t)a << b);   /* the store truncates to the width */
}
static inline int64_t ib_shr(int64_t a, int64_t b, int64_t w) {
    if (b < 0 || b >= w) return a < 0 ? -1 : 0;
    return a < 0 ? ~(~a >> b) : a >> b;   /* arithmetic, without right-shifting a negative value */
}
static inline int64_t ib_mod(int64_t a, int64_t b) {
    const int64_t r = ib_fmod(a, b);
    return r != 0 && (r < 0) != (b < 0) ? r + b : r;   /* |r| < |b|: no overflow */
}

static int ib_unsigned(uint8_t dt) {
    return dt == EP_DTYPE_U8 || dt == EP_DTYPE_U16 || dt == EP_DTYPE_U32 || dt == EP_DTYPE_U64;
}

/* The unsigned kinds: a and b hold zero-extended values (U64 as its bits), computed as uint64; w is
 * Y's width in bits. */
static void ib_compute_u(int kind, int64_t *a, const int64_t *b, int64_t n, uint64_t w) {
#define IB_U(expr) for (int64_t i = 0; i < n; i++) {                                          \
        const uint64_t x = (uint64_t)a[i], y = (uint64_t)b[i];                                  \
        a[i] = (int64_t)(expr);                                                                 \
    }
    switch (kind) {
    case EP_BIN_ADD: IB_U(x + y) break;
    case EP_BIN_SUB: IB_U(x - y) break;
    case EP_BIN_MUL: IB_U(x * y) break;
    case EP_BIN_DIV: IB_U(x / y) break;
    case EP_BIN_POW: IB_U(ib_upow(x, y)) break;
    case EP_BIN_MAX: IB_U(x > y ? x : y) break;
    case EP_BIN_MIN: IB_U(x < y ? x : y) break;
    case EP_BIN_MOD: case EP_BIN_FMOD: IB_U(x % y) break;
    case EP_BIN_BITAND: IB_U(x & y) break;
    case EP_BIN_BITOR: IB_U(x | y) break;
    case EP_BIN_BITXOR: IB_U(x ^ y) break;
    case EP_BIN_SHL: IB_U(y < w ? x << y : 0) break;
    case EP_BIN_SHR: IB_U(y < w ? x >> y : 0) break;
    default: break;
    }
#undef IB_U
}

/* a[i] = a[i] op b[i], i < n, in dtype dt; the kind switch once per call. EP_ERR_RUN_INDEX for a zero
 * divisor. */
static int ib_compute(int kind, uint8_t dt, int64_t *a, const int64_t *b, int64_t n) {
    if (kind == EP_BIN_DIV || kind == EP_BIN_MOD || kind == EP_BIN_FMOD)
        for (int64_t i = 0; i < n; i++)
            if (b[i] == 0) return EP_ERR_RUN_INDEX;
    const int64_t w = 8 * (int64_t)ep_dtype_size(dt);
    if (ib_unsigned(dt)) {
        ib_compute_u(kind, a, b, n, (uint64_t)w);
        return EP_OK;
    }
    switch (kind) {
    case EP_BIN_ADD: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] + (uint64_t)b[i]); break;
    case EP_BIN_SUB: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]); break;
    case EP_BIN_MUL: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] * (uint64_t)b[i]); break;
    case EP_BIN_DIV: for (int64_t i = 0; i < n; i++) a[i] = ib_div(a[i], b[i]); break;
    case EP_BIN_POW: for (int64_t i = 0; i < n; i++) a[i] = ib_pow(a[i], b[i]); break;
    case EP_BIN_MAX: for (int64_t i = 0; i < n; i++) a[i] = a[i] > b[i] ? a[i] : b[i]; break;
    case EP_BIN_MIN: for (int64_t i = 0; i < n; i++) a[i] = a[i] < b[i] ? a[i] : b[i]; break;
    case EP_BIN_MOD: for (int64_t i = 0; i < n; i++) a[i] = ib_mod(a[i], b[i]); break;
    case EP_BIN_FMOD: for (int64_t i = 0; i < n; i++) a[i] = ib_fmod(a[i], b[i]); break;
    case EP_BIN_BITAND: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] & (uint64_t)b[i]); break;
    case EP_BIN_BITOR: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] | (uint64_t)b[i]); break;
    case EP_BIN_BITXOR: for (int64_t i = 0; i < n; i++) a[i] = (int64_t)((uint64_t)a[i] ^ (uint64_t)b[i]); break;
    case EP_BIN_SHL: for (int64_t i = 0; i < n; i++) a[i] = ib_shl(a[i], b[i], w); break;
    case EP_BIN_SHR: for (int64_t i = 0; i < n; i++) a[i] = ib_shr(a[i], b[i], w); break;
    default: break;   /* PRELU: refused by the shape function; Y = A */
    }
    return EP_OK;
}

/* I32 ADD, SUB and MUL over rows whose strides are 0 or 1 (same shape, a scalar, a per-channel bias): one
 * tight loop per form in uint32, the low 32 bits of the int64 result below (the compiler vectorises them). */
static int ib_i32_rows(int kind, int64_t sa, int64_t sb) {
    return (kind == EP_BIN_ADD || kind == EP_BIN_SUB || kind == EP_BIN_MUL) && sa <= 1 && sb <= 1 && (sa || sb);
}
#define IB_ROW(EXPR)                                                                          \
    do {                                                                                      \
        if (sa && sb) for (int64_t i = 0; i < len; i++) { const uint32_t x = a[i], y = b[i]; d[i] = (EXPR); } \
        else if (sa) for (int64_t i = 0; i < len; i++) { const uint32_t x = a[i], y = b[0]; d[i] = (EXPR); }  \
        else for (int64_t i = 0; i < len; i++) { const uint32_t x = a[0], y = b[i]; d[i] = (EXPR); }          \
    } while (0)
static void ib_row_i32(int kind, uint32_t *d, const uint32_t *a, int64_t sa, const uint32_t *b, int64_t sb,
                       int64_t len) {
    switch (kind) {
    case EP_BIN_ADD: IB_ROW(x + y); break;
    case EP_BIN_SUB: IB_ROW(x - y); break;
    default: IB_ROW(x * y); break;   /* MUL (ib_i32_rows) */
    }
}
#undef IB_ROW

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
    if (dt == EP_DTYPE_I32 && ib_i32_rows(p->kind, sa, sb)) {
        do {
            ib_row_i32(p->kind, (uint32_t *)y, (const uint32_t *)a + w.oa, sa, (const uint32_t *)b + w.ob, sb, len);
            y += len * es;
        } while (ru_bin_next(&w));
        return EP_OK;
    }
    do {
        for (int64_t c = 0; c < len; c += IB_CHUNK) {
            const int64_t m = len - c < IB_CHUNK ? len - c : IB_CHUNK;
            ib_load(va, a + (w.oa + c * sa) * es, dt, sa, m);
            ib_load(vb, b + (w.ob + c * sb) * es, dt, sb, m);
            const int rc = ib_compute(p->kind, dt, va, vb, m);
            if (rc != EP_OK) return rc;
            ib_store(y + c * es, dt, va, m);
        }
        y += len * es;
    } while (ru_bin_next(&w));
    return EP_OK;
}
