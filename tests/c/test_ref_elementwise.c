/* Reference kernels and shape functions for the element-wise and layout ops:
 * known answers and seeded random shapes checked against plain loops written here,
 * hostile params/shapes rejected with EP_ERR_PLAN_*, and a fuzz loop (exact-size heap
 * buffers, so ASan sees any read or write past a tensor) that runs every kernel whose
 * shape function accepted random bytes. Prints "N passed, N failed"; exit 0 on success. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ep_check.h"

static int feq(float a, float b, float tol) {
    if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
    if (isinf(a) || isinf(b)) return a == b;
    return fabsf(a - b) <= tol * (1.0f + fabsf(b));
}

/* ---- building tensors and ops by hand ---- */
typedef struct opbox {
    ep_op op;
    ep_tensor *in[8];
    ep_tensor *out[8];
} opbox;

static void tset(ep_tensor *t, void *data, uint8_t dtype, int rank, const int32_t *dims) {
    *t = chk_mk(data, dtype, rank, dims);
}

static ep_op *opset(opbox *b, uint16_t opcode, const void *params, int nin, int nout) {
    b->op = (ep_op){.params = params, .in = b->in, .out = b->out, .n_in = (uint16_t)nin,
                    .n_out = (uint16_t)nout, .opcode = opcode};
    return &b->op;
}

static int shape_is(const ep_shape *s, int rank, const int32_t *dims) {
    int same = s->rank == rank;
    for (int i = 0; same && i < rank; i++) same = s->dims[i] == dims[i];
    return same;
}
/* A one-input one-output op on x and y. */
static ep_op *op11(opbox *b, uint16_t opcode, const void *p, ep_tensor *x, ep_tensor *y) {
    memset(b, 0, sizeof *b);
    b->in[0] = x;
    b->out[0] = y;
    return opset(b, opcode, p, 1, 1);
}
/* 1 when fn accepts op, asks no scratch and gives out[0] = (rank, dims). */
static int shape_ok(ep_shape_fn fn, const ep_op *op, int rank, const int32_t *dims) {
    ep_shape s[8];
    uint64_t scr = 1;
    return fn(op, s, &scr) == EP_OK && scr == 0 && shape_is(&s[0], rank, dims);
}
/* Runs a one-in one-out op (shape function, then kernel) from xd into yd; 1 on success. */
static int run11(ep_shape_fn sf, ep_kernel_fn kf, uint16_t opc, const void *p, uint8_t dt, const void *xd,
                 int rx, const int32_t *dx, void *yd, int ry, const int32_t *dy) {
    ep_tensor x, y;
    opbox b;
    tset(&x, (void *)xd, dt, rx, dx), tset(&y, yd, dt, ry, dy);
    ep_op *op = op11(&b, opc, p, &x, &y);
    return shape_ok(sf, op, ry, dy) && kf(op) == EP_OK;
}

static void unravel(int64_t f, int rank, const int32_t *dims, int64_t *c) {
    for (int i = rank - 1; i >= 0; f /= dims[i--]) c[i] = f % dims[i];
}
static int64_t ravel(int rank, const int32_t *dims, const int64_t *c) {
    int64_t f = 0;
    for (int i = 0; i < rank; i++) f = f * dims[i] + c[i];
    return f;
}
/* Random dims in [1, maxd] (sometimes 0 when zero_ok) with numel <= cap. */
static void rdims(int rank, int32_t *dims, int maxd, int64_t cap, int zero_ok) {
    do {
        for (int i = 0; i < rank; i++) dims[i] = (zero_ok && chk_int(0, 15) == 0) ? 0 : chk_int(1, maxd);
    } while (chk_numel(rank, dims) > cap);
}

/* Two operands that broadcast to a random shape of rank < max_rank (extents <= maxd, numel <= cap): one of them has
 * that rank, the other a suffix; either has extents 1 at random. */
static void rand_bcast(int max_rank, int maxd, int64_t cap, int32_t *da, int *ra, int32_t *db, int *rb) {
    const int r = chk_int(0, max_rank - 1);
    int32_t full[8];
    rdims(r, full, maxd, cap, 1);
    *ra = chk_int(0, r), *rb = chk_int(0, r);
    if (chk_int(0, 1)) *ra = r; else *rb = r;
    for (int i = 0; i < *ra; i++) da[i] = chk_int(0, 2) == 0 ? 1 : full[i + r - *ra];
    for (int i = 0; i < *rb; i++) db[i] = chk_int(0, 2) == 0 ? 1 : full[i + r - *rb];
}

#define NBUF (1 << 15)
static float A[NBUF], B[NBUF], Y[NBUF], R[NBUF];
static _Alignas(16) unsigned char XB[8][NBUF], YB[8][NBUF];
static const uint8_t any_dtypes[4] = {EP_DTYPE_U8, EP_DTYPE_I16, EP_DTYPE_F32, EP_DTYPE_I64};

static void fill_f32(float *p, int64_t n, float lo, float hi) {
    for (int64_t i = 0; i < n; i++) p[i] = chk_float_in(lo, hi);
}
static void fill_bytes(unsigned char *p, int64_t n) {
    for (int64_t i = 0; i < n; i++) p[i] = (unsigned char)chk_rnd();
}

/* ---- activations ---- */
static void test_act(void) {
    static const struct { int kind; float x, alpha, beta, want; } kv[] = {
        {EP_ACT_NONE, -3.5f, 0, 0, -3.5f}, {EP_ACT_RELU, -2, 0, 0, 0}, {EP_ACT_RELU, 3, 0, 0, 3}, {EP_ACT_CLIP, 7, 0, 6, 6},
        {EP_ACT_CLIP, -1, 0, 6, 0}, {EP_ACT_CLIP, 5, 0, 6, 5}, {EP_ACT_LEAKY_RELU, -2, 0.1f, 0, -0.2f},
        {EP_ACT_LEAKY_RELU, 2, 0.1f, 0, 2}, {EP_ACT_SIGMOID, 0, 0, 0, 0.5f}, {EP_ACT_SIGMOID, 2, 0, 0, 0.880797078f},
        {EP_ACT_HARD_SIGMOID, 1, 0.2f, 0.5f, 0.7f}, {EP_ACT_HARD_SIGMOID, 10, 0.2f, 0.5f, 1},
        {EP_ACT_HARD_SIGMOID, -10, 0.2f, 0.5f, 0}, {EP_ACT_HARD_SWISH, 1, 0, 0, 0.666666667f},
        {EP_ACT_HARD_SWISH, -4, 0, 0, 0}, {EP_ACT_HARD_SWISH, 4, 0, 0, 4}, {EP_ACT_TANH, 0.5f, 0, 0, 0.462117157f},
        {EP_ACT_SILU, 1, 0, 0, 0.731058579f}, {EP_ACT_ERF, 0.5f, 0, 0, 0.520499878f}, {EP_ACT_SQRT, 4, 0, 0, 2},
        {EP_ACT_GELU, 1, 0, 0, 0.841344746f}, {EP_ACT_GELU, -1, 0, 0, -0.158655254f}, {EP_ACT_EXP, 1, 0, 0, 2.718281828f},
        {EP_ACT_LOG, 2.718281828f, 0, 0, 1}, {EP_ACT_NEG, 2, 0, 0, -2}, {EP_ACT_ABS, -2, 0, 0, 2},
        {EP_ACT_RECIPROCAL, 4, 0, 0, 0.25f}, {EP_ACT_ELU, -1, 1, 0, -0.632120559f}, {EP_ACT_ELU, 3, 1, 0, 3},
        {EP_ACT_GELU_TANH, 1, 0, 0, 0.841191991f}, {EP_ACT_GELU_TANH, -1, 0, 0, -0.158808009f},
        {EP_ACT_ROUND, 2.5f, 0, 0, 2}, {EP_ACT_ROUND, 3.5f, 0, 0, 4}, {EP_ACT_ROUND, -2.5f, 0, 0, -2},
        {EP_ACT_ROUND, 0.5f, 0, 0, 0}, {EP_ACT_ROUND, 1.5f, 0, 0, 2}, {EP_ACT_ROUND, -1.5f, 0, 0, -2},
        {EP_ACT_ROUND, 2.4999998f, 0, 0, 2}, {EP_ACT_ROUND, -1.7f, 0, 0, -2}, {EP_ACT_ROUND, 8388609, 0, 0, 8388609},
        {EP_ACT_ROUND, 0.49999997f, 0, 0, 0}, {EP_ACT_ROUND, 1e30f, 0, 0, 1e30f},
        {EP_ACT_FLOOR, -1.5f, 0, 0, -2}, {EP_ACT_FLOOR, 1.5f, 0, 0, 1}, {EP_ACT_FLOOR, -3, 0, 0, -3},
        {EP_ACT_CEIL, -1.5f, 0, 0, -1}, {EP_ACT_CEIL, 1.25f, 0, 0, 2}, {EP_ACT_CEIL, 4, 0, 0, 4},
        {99, 1.25f, 0, 0, 1.25f},
    };
    for (size_t i = 0; i < sizeof kv / sizeof kv[0]; i++) {
        float got = ep_act_f32(kv[i].kind, kv[i].x, kv[i].alpha, kv[i].beta);
        CHECK(feq(got, kv[i].want, 1e-6f), "act %d(%g) = %.9g want %.9g", kv[i].kind, kv[i].x, got, kv[i].want);
    }
    CHECK(isnan(ep_act_f32(EP_ACT_RELU, NAN, 0, 0)) && isnan(ep_act_f32(EP_ACT_CLIP, NAN, 0, 6)), "NaN passes");
    /* ROUND / FLOOR / CEIL: signed zeros as numpy (-0.3 and -0.5 round to -0, ceil(-0.5) is -0), NaN
     * and infinities pass, and ROUND agrees with rintf (round-to-nearest-even, the default mode) */
    CHECK(signbit(ep_act_f32(EP_ACT_ROUND, -0.3f, 0, 0)) && signbit(ep_act_f32(EP_ACT_ROUND, -0.5f, 0, 0)) &&
          !signbit(ep_act_f32(EP_ACT_ROUND, 0.3f, 0, 0)) && signbit(ep_act_f32(EP_ACT_CEIL, -0.5f, 0, 0)) &&
          signbit(ep_act_f32(EP_ACT_FLOOR, -0.0f, 0, 0)), "round/floor/ceil signed zeros");
    for (int kind = EP_ACT_ROUND; kind <= EP_ACT_CEIL; kind++)
        CHECK(isnan(ep_act_f32(kind, NAN, 0, 0)) && ep_act_f32(kind, INFINITY, 0, 0) == INFINITY &&
              ep_act_f32(kind, -INFINITY, 0, 0) == -INFINITY, "act %d NaN / inf", kind);
    int rint_ok = 1;
    for (int i = 0; i < 20000; i++) {
        const float v = (i & 1 ? 0.5f : 1.0f) * (float)chk_int(-4000, 4000) * (i % 3 ? 0.25f : 1.0f / 64);
        rint_ok &= ep_act_f32(EP_ACT_ROUND, v, 0, 0) == rintf(v);
    }
    CHECK(rint_ok, "round differs from rintf");
    for (int kind = 0; kind < EP_ACT_MATH_FIRST; kind++) {   /* the epilogue kinds */
        float v[257];
        fill_f32(v, 257, -6, 6);
        float w[257];
        memcpy(w, v, sizeof v);
        ep_act_apply_f32(kind, w, 257, 0.3f, 0.6f);
        int ok = 1;
        for (int i = 0; i < 257; i++) ok &= feq(w[i], ep_act_f32(kind, v[i], 0.3f, 0.6f), 1e-6f);
        CHECK(ok, "ep_act_apply_f32 kind %d differs from ep_act_f32", kind);
    }
}

/* The math kinds (not epilogues): libm's float functions, written out here as the spec. */
static float math_ref(int kind, float v) {
    switch (kind) {
    case EP_ACT_SIN: return sinf(v);
    case EP_ACT_COS: return cosf(v);
    case EP_ACT_TAN: return tanf(v);
    case EP_ACT_ASIN: return asinf(v);
    case EP_ACT_ACOS: return acosf(v);
    case EP_ACT_ATAN: return atanf(v);
    case EP_ACT_SINH: return sinhf(v);
    case EP_ACT_COSH: return coshf(v);
    case EP_ACT_ASINH: return asinhf(v);
    case EP_ACT_ACOSH: return acoshf(v);
    case EP_ACT_ATANH: return atanhf(v);
    case EP_ACT_SIGN: return v > 0 ? 1.0f : v < 0 ? -1.0f : v;
    default: return NAN;
    }
}

static void test_unary(void) {
    for (int kind = 1; kind < EP_ACT_COUNT; kind++) {
        for (int inplace = 0; inplace < 2; inplace++) {
            int32_t dims[4], rank = chk_int(0, 4);
            rdims(rank, dims, 7, 2000, 1);
            int64_t n = chk_numel(rank, dims);
            const int unit = kind == EP_ACT_ASIN || kind == EP_ACT_ACOS || kind == EP_ACT_ATANH;
            if (kind == EP_ACT_ACOSH) fill_f32(A, n, 1, 5);
            else if (unit) fill_f32(A, n, -0.99f, 0.99f);
            else fill_f32(A, n, kind == EP_ACT_SQRT || kind == EP_ACT_LOG ? 0.01f : -5, 5);
            ep_unary_params p = {kind, 0.2f, 0.7f, 0};
            for (int64_t i = 0; i < n; i++) R[i] = kind >= EP_ACT_MATH_FIRST ? math_ref(kind, A[i]) : ep_act_f32(kind, A[i], 0.2f, 0.7f);
            int ok = run11(ep_shape_unary, ep_ref_unary_f32, EP_OP_UNARY, &p, EP_DTYPE_F32, A, rank, dims,
                           inplace ? A : Y, rank, dims);
            const float *got = inplace ? A : Y;
            for (int64_t i = 0; ok && i < n; i++) ok = feq(got[i], R[i], 1e-6f);
            CHECK(ok, "unary kind %d inplace %d rank %d", kind, inplace, rank);
        }
    }
}

/* ---- binary with broadcasting ---- */
static float ref_bin(int k, float a, float b) {
    switch (k) {
    case EP_BIN_ADD: return a + b;
    case EP_BIN_SUB: return a - b;
    case EP_BIN_MUL: return a * b;
    case EP_BIN_DIV: return a / b;
    case EP_BIN_POW: return powf(a, b);
    case EP_BIN_PRELU: return a >= 0 ? a : a * b;
    case EP_BIN_MAX: return a > b ? a : b;
    case EP_BIN_MOD: { /* numpy.mod: b's sign, a zero result too */
        double m = fmod(a, b);
        if (m == 0) return copysignf(0.0f, b);
        return (float)((m < 0) != (b < 0) ? m + b : m);
    }
    case EP_BIN_FMOD: return (float)fmod(a, b);
    default: return a < b ? a : b;
    }
}

/* Runs one binary case; alias: 0 none, 1 Y=A, 2 Y=B. Returns 1 when it matches. */
static int run_binary(int ra, const int32_t *da, int rb, const int32_t *db, int kind, int act, int alias) {
    ep_binary_params p = {kind, act, 0.1f, 4.0f};
    int r = ra > rb ? ra : rb;
    int32_t dy[EP_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int32_t x = ia >= 0 ? da[ia] : 1, z = ib >= 0 ? db[ib] : 1;
        dy[i] = x == 1 ? z : x;
    }
    int64_t na = chk_numel(ra, da), nb = chk_numel(rb, db), ny = chk_numel(r, dy);
    fill_f32(A, na, kind == EP_BIN_POW ? 0.1f : -4, 4);
    fill_f32(B, nb, kind == EP_BIN_POW ? -2.0f : -4, kind == EP_BIN_POW ? 2.0f : 4);
    for (int64_t f = 0; f < ny; f++) {
        int64_t c[EP_MAX_RANK], ca[EP_MAX_RANK], cb[EP_MAX_RANK];
        unravel(f, r, dy, c);
        for (int i = 0; i < ra; i++) ca[i] = da[i] == 1 ? 0 : c[i + r - ra];
        for (int i = 0; i < rb; i++) cb[i] = db[i] == 1 ? 0 : c[i + r - rb];
        R[f] = ep_act_f32(act, ref_bin(kind, A[ravel(ra, da, ca)], B[ravel(rb, db, cb)]), 0.1f, 4.0f);
    }
    ep_tensor a, b, y;
    float *out = alias == 1 ? A : alias == 2 ? B : Y;
    tset(&a, A, EP_DTYPE_F32, ra, da), tset(&b, B, EP_DTYPE_F32, rb, db), tset(&y, out, EP_DTYPE_F32, r, dy);
    opbox box;
    ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
    box.in[1] = &b, op->n_in = 2;
    if (!shape_ok(ep_shape_binary, op, r, dy) || ep_ref_binary_f32(op) != EP_OK) return 0;
    for (int64_t i = 0; i < ny; i++)
        if (!feq(out[i], R[i], 1e-5f)) return 0;
    return 1;
}

static void test_binary(void) {
    for (int t = 0; t < 400; t++) {
        int32_t da[5], db[5];
        int ra, rb;
        rand_bcast(5, 4, 800, da, &ra, db, &rb);
        int kind = chk_int(0, EP_BIN_FMOD), act = chk_int(0, 3) ? 0 : chk_int(0, EP_ACT_MATH_FIRST - 1);
        CHECK(run_binary(ra, da, rb, db, kind, act, 0), "binary kind %d act %d ranks %d %d", kind, act, ra, rb);
    }
    static const int32_t nchw[4] = {2, 3, 4, 5}, c111[4] = {1, 3, 1, 1}, c11[3] = {3, 1, 1}, one[1] = {1};
    static const int32_t row[2] = {1, 5}, col[2] = {4, 1};
    for (int kind = 0; kind <= EP_BIN_FMOD; kind++) {   /* the float kinds */
        CHECK(run_binary(4, nchw, 4, c111, kind, EP_ACT_RELU, 0), "per-channel [1,C,1,1] kind %d", kind);
        CHECK(run_binary(4, nchw, 3, c11, kind, 0, 1), "per-channel [C,1,1] in place kind %d", kind);
        CHECK(run_binary(4, nchw, 0, one, kind, EP_ACT_CLIP, 1), "scalar B in place kind %d", kind);
        CHECK(run_binary(1, one, 4, nchw, kind, 0, 2), "[1] op X in place on B kind %d", kind);
        CHECK(run_binary(4, nchw, 4, nchw, kind, EP_ACT_SIGMOID, 1), "same shape in place on A kind %d", kind);
        CHECK(run_binary(2, row, 2, col, kind, 0, 0), "outer [1,5] x [4,1] kind %d", kind);
    }
    /* PRELU known answer */
    float xs[4] = {-2, 3, -1, 0}, sl[2] = {0.5f, 0.25f}, ys[4];
    int32_t d22[2] = {2, 2}, d21[2] = {2, 1};
    ep_tensor a, b, y;
    tset(&a, xs, EP_DTYPE_F32, 2, d22), tset(&b, sl, EP_DTYPE_F32, 2, d21), tset(&y, ys, EP_DTYPE_F32, 2, d22);
    ep_binary_params p = {EP_BIN_PRELU, 0, 0, 0};
    opbox box;
    ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
    box.in[1] = &b, op->n_in = 2;
    ep_ref_binary_f32(op);
    CHECK(ys[0] == -1.0f && ys[1] == 3.0f && ys[2] == -0.25f && ys[3] == 0.0f, "prelu %g %g %g %g", ys[0], ys[1], ys[2], ys[3]);
}

/* ---- binary on integers: wrap, truncating division, MOD / FMOD signs; a zero divisor fails the run ---- */
static const uint8_t int_dtypes[5] = {EP_DTYPE_I8, EP_DTYPE_U8, EP_DTYPE_I16, EP_DTYPE_I32, EP_DTYPE_I64};
static const int int_kinds[8] = {EP_BIN_ADD, EP_BIN_SUB, EP_BIN_MUL, EP_BIN_DIV, EP_BIN_MAX, EP_BIN_MIN,
                                 EP_BIN_MOD, EP_BIN_FMOD};

static int64_t iget(const void *p, uint8_t dt, int64_t i) {
    switch (dt) {
    case EP_DTYPE_I8: return ((const int8_t *)p)[i];
    case EP_DTYPE_U8: return ((const uint8_t *)p)[i];
    case EP_DTYPE_I16: return ((const int16_t *)p)[i];
    case EP_DTYPE_I32: return ((const int32_t *)p)[i];
    default: return ((const int64_t *)p)[i];
    }
}
static void iput(void *p, uint8_t dt, int64_t i, int64_t v) {
    switch (dt) {
    case EP_DTYPE_I8: ((int8_t *)p)[i] = (int8_t)v; break;
    case EP_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case EP_DTYPE_I16: ((int16_t *)p)[i] = (int16_t)v; break;
    case EP_DTYPE_I32: ((int32_t *)p)[i] = (int32_t)v; break;
    default: ((int64_t *)p)[i] = v; break;
    }
}
/* The value in [lo, hi] of dt congruent to v modulo 2^width (two's complement wrap), via unsigned. */
static int64_t iwrap(uint8_t dt, uint64_t v) {
    switch (dt) {
    case EP_DTYPE_I8: { uint8_t u = (uint8_t)v; return u < 128 ? u : (int64_t)u - 256; }
    case EP_DTYPE_U8: return (uint8_t)v;
    case EP_DTYPE_I16: { uint16_t u = (uint16_t)v; return u < 32768 ? u : (int64_t)u - 65536; }
    case EP_DTYPE_I32: { uint32_t u = (uint32_t)v; return u < 0x80000000u ? (int64_t)u : (int64_t)u - 4294967296LL; }
    default: return v < (UINT64_C(1) << 63) ? (int64_t)v : -(int64_t)(~v) - 1;
    }
}
/* Independent statement of the documented semantics (plan_format.h BINARY); b != 0 for DIV, MOD, FMOD. */
static int64_t ref_ibin(int kind, uint8_t dt, int64_t a, int64_t b) {
    const uint64_t ua = (uint64_t)a, ub = (uint64_t)b;
    switch (kind) {
    case EP_BIN_ADD: return iwrap(dt, ua + ub);
    case EP_BIN_SUB: return iwrap(dt, ua - ub);
    case EP_BIN_MUL: return iwrap(dt, ua * ub);
    case EP_BIN_MAX: return a > b ? a : b;
    case EP_BIN_MIN: return a < b ? a : b;
    case EP_BIN_POW: {   /* repeated multiplication, wrapping; a negative b: the truncated real power */
        if (b < 0) return a == 1 ? 1 : a == -1 ? (b % 2 ? -1 : 1) : 0;
        uint64_t r = 1;
        for (int64_t k = 0; k < b && k < 4096; k++) r *= ua;
        return iwrap(dt, r);
    }
    default: break;
    }
    if (b == -1) return kind == EP_BIN_DIV ? iwrap(dt, 0 - ua) : 0;
    /* truncated quotient from magnitudes (no reliance on C's signed '/' rounding) */
    const uint64_t ma = a < 0 ? 0 - ua : ua, mb = b < 0 ? 0 - ub : ub, q = ma / mb;
    if (kind == EP_BIN_DIV) return iwrap(dt, (a < 0) != (b < 0) ? 0 - q : q);
    const int64_t rm = (int64_t)(ma % mb);   /* < |b| <= 2^63 */
    const int64_t r = a < 0 ? -rm : rm;      /* sign of a: FMOD */
    if (kind == EP_BIN_FMOD || r == 0 || (r < 0) == (b < 0)) return r;
    return r + b;                         /* MOD: sign of b */
}
static int64_t ivalue(uint8_t dt) {
    static const int64_t ex[] = {0, 1, -1, 2, -2, 7, -7, 127, -128, 255, 32767, -32768, 2147483647LL,
                                 -2147483647LL - 1, INT64_MAX, INT64_MIN};
    int64_t v = chk_int(0, 3) ? (int64_t)chk_int(-300, 300) : chk_int(0, 3) ? ex[chk_int(0, 15)]
                                                                : (int64_t)(((uint64_t)chk_rnd() << 32) | chk_rnd());
    return iwrap(dt, (uint64_t)v);
}

/* One integer binary case with broadcasting; alias: 0 none, 1 Y = A, 2 Y = B. */
static int run_ibinary(uint8_t dt, int kind, int ra, const int32_t *da, int rb, const int32_t *db, int alias) {
    ep_binary_params p = {kind, EP_ACT_NONE, 0, 0};
    const int r = ra > rb ? ra : rb;
    int32_t dy[EP_MAX_RANK];
    for (int i = 0; i < r; i++) {
        int ia = i - (r - ra), ib = i - (r - rb);
        int32_t x = ia >= 0 ? da[ia] : 1, z = ib >= 0 ? db[ib] : 1;
        dy[i] = x == 1 ? z : x;
    }
    const int64_t na = chk_numel(ra, da), nb = chk_numel(rb, db), ny = chk_numel(r, dy);
    void *xa = XB[0], *xb = XB[1], *yy = alias == 1 ? xa : alias == 2 ? xb : YB[0];
    for (int64_t i = 0; i < na; i++) iput(xa, dt, i, ivalue(dt));
    const int divides = kind == EP_BIN_DIV || kind == EP_BIN_MOD || kind == EP_BIN_FMOD;
    for (int64_t i = 0; i < nb; i++) {
        int64_t v = ivalue(dt);
        iput(xb, dt, i, divides && v == 0 ? 3 : v);   /* zero divisors: test_binary_int */
    }
    static int64_t want[NBUF / 8];
    for (int64_t f = 0; f < ny; f++) {
        int64_t c[EP_MAX_RANK], ca[EP_MAX_RANK], cb[EP_MAX_RANK];
        unravel(f, r, dy, c);
        for (int i = 0; i < ra; i++) ca[i] = da[i] == 1 ? 0 : c[i + r - ra];
        for (int i = 0; i < rb; i++) cb[i] = db[i] == 1 ? 0 : c[i + r - rb];
        want[f] = ref_ibin(kind, dt, iget(xa, dt, ravel(ra, da, ca)), iget(xb, dt, ravel(rb, db, cb)));
    }
    ep_tensor a, b, y;
    tset(&a, xa, dt, ra, da), tset(&b, xb, dt, rb, db), tset(&y, yy, dt, r, dy);
    opbox box;
    ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
    box.in[1] = &b, op->n_in = 2;
    ep_shape s;
    uint64_t scr = 1;
    if (ep_shape_binary(op, &s, &scr) != EP_OK || s.dtype != dt || !shape_is(&s, r, dy) || scr != 0) return 0;
    if (ep_ref_binary_f32(op) != EP_OK) return 0;   /* the table entry: dispatches to ep_ref_binary_int */
    for (int64_t i = 0; i < ny; i++)
        if (iget(yy, dt, i) != want[i]) return 0;
    return 1;
}

static void test_binary_int(void) {
    /* known answers: wrap at every width, truncation toward zero, remainder signs, zero divisors */
    static const struct { uint8_t dt; int kind; int64_t a, b, want; } kv[] = {
        {EP_DTYPE_I32, EP_BIN_ADD, 2147483647LL, 1, -2147483647LL - 1},
        {EP_DTYPE_I32, EP_BIN_SUB, -2147483647LL - 1, 1, 2147483647LL},
        {EP_DTYPE_I32, EP_BIN_MUL, 65536, 65536, 0}, {EP_DTYPE_I32, EP_BIN_MUL, 65537, 65537, 131073},
        {EP_DTYPE_I32, EP_BIN_DIV, -2147483647LL - 1, -1, -2147483647LL - 1},
        {EP_DTYPE_I32, EP_BIN_DIV, 7, -2, -3}, {EP_DTYPE_I32, EP_BIN_DIV, -7, 2, -3},
        {EP_DTYPE_I32, EP_BIN_MOD, -7, 2, 1}, {EP_DTYPE_I32, EP_BIN_MOD, 7, -2, -1}, {EP_DTYPE_I32, EP_BIN_MOD, -4, 2, 0},
        {EP_DTYPE_I32, EP_BIN_FMOD, -7, 2, -1}, {EP_DTYPE_I32, EP_BIN_FMOD, 7, -2, 1},
        {EP_DTYPE_I32, EP_BIN_MOD, -2147483647LL - 1, -1, 0}, {EP_DTYPE_I32, EP_BIN_MAX, -3, 2, 2},
        {EP_DTYPE_I64, EP_BIN_ADD, INT64_MAX, 1, INT64_MIN}, {EP_DTYPE_I64, EP_BIN_SUB, INT64_MIN, 1, INT64_MAX},
        {EP_DTYPE_I64, EP_BIN_MUL, INT64_MIN, -1, INT64_MIN}, {EP_DTYPE_I64, EP_BIN_DIV, INT64_MIN, -1, INT64_MIN},
        {EP_DTYPE_I64, EP_BIN_FMOD, INT64_MIN, -1, 0}, {EP_DTYPE_I64, EP_BIN_DIV, INT64_MIN, 7, -1317624576693539401LL},
        {EP_DTYPE_I64, EP_BIN_ADD, 41, 1, 42}, {EP_DTYPE_I64, EP_BIN_MIN, INT64_MIN, INT64_MAX, INT64_MIN},
        {EP_DTYPE_U8, EP_BIN_ADD, 200, 100, 44}, {EP_DTYPE_U8, EP_BIN_SUB, 3, 5, 254}, {EP_DTYPE_U8, EP_BIN_DIV, 255, 2, 127},
        {EP_DTYPE_I8, EP_BIN_ADD, 127, 1, -128}, {EP_DTYPE_I8, EP_BIN_DIV, -128, -1, -128},
        {EP_DTYPE_I16, EP_BIN_MUL, 300, 300, 24464}, {EP_DTYPE_I16, EP_BIN_MOD, -32768, 3, 1},
        {EP_DTYPE_I32, EP_BIN_POW, 3, 4, 81}, {EP_DTYPE_I32, EP_BIN_POW, -2, 31, -2147483647LL - 1},
        {EP_DTYPE_I32, EP_BIN_POW, 3, 21, 1870418611}, {EP_DTYPE_I64, EP_BIN_POW, 3, 40, -6289078614652622815LL},
        {EP_DTYPE_I64, EP_BIN_POW, -1, -3, -1}, {EP_DTYPE_I64, EP_BIN_POW, -1, -4, 1}, {EP_DTYPE_I64, EP_BIN_POW, 1, -9, 1},
        {EP_DTYPE_I64, EP_BIN_POW, 5, -1, 0}, {EP_DTYPE_I64, EP_BIN_POW, 0, 0, 1}, {EP_DTYPE_U8, EP_BIN_POW, 3, 5, 243},
        {EP_DTYPE_U8, EP_BIN_POW, 2, 8, 0}, {EP_DTYPE_I8, EP_BIN_POW, 3, 5, -13},
    };
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) {
        const int32_t one[1] = {1};
        iput(XB[2], kv[k].dt, 0, kv[k].a), iput(XB[3], kv[k].dt, 0, kv[k].b);
        ep_binary_params p = {kv[k].kind, EP_ACT_NONE, 0, 0};
        ep_tensor a, b, y;
        tset(&a, XB[2], kv[k].dt, 1, one), tset(&b, XB[3], kv[k].dt, 0, one), tset(&y, YB[2], kv[k].dt, 1, one);
        opbox box;
        ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
        box.in[1] = &b, op->n_in = 2;
        const int ok = shape_ok(ep_shape_binary, op, 1, one) && ep_ref_binary_int(op) == EP_OK;
        const int64_t got = iget(YB[2], kv[k].dt, 0);
        CHECK(ok && got == kv[k].want && ref_ibin(kv[k].kind, kv[k].dt, kv[k].a, kv[k].b) == kv[k].want,
              "int binary dtype %d kind %d: %lld op %lld = %lld want %lld", kv[k].dt, kv[k].kind, (long long)kv[k].a,
              (long long)kv[k].b, (long long)got, (long long)kv[k].want);
    }
    for (int t = 0; t < 600; t++) {
        int32_t da[4], db[4];
        int ra, rb;
        rand_bcast(4, 5, 600, da, &ra, db, &rb);
        const uint8_t dt = int_dtypes[chk_int(0, 4)];
        const int kind = int_kinds[chk_int(0, 7)];
        CHECK(run_ibinary(dt, kind, ra, da, rb, db, 0), "int binary dtype %d kind %d ranks %d %d", dt, kind, ra, rb);
    }
    /* a zero divisor anywhere (here past the first 64-element chunk) fails the run, ADD does not care */
    static const int zkinds[4] = {EP_BIN_DIV, EP_BIN_MOD, EP_BIN_FMOD, EP_BIN_ADD};
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 4; k++) {
            const uint8_t dt = int_dtypes[d];
            const int kind = zkinds[k];
            const int32_t d1[1] = {100};
            for (int i = 0; i < 100; i++) iput(XB[2], dt, i, i + 1), iput(XB[3], dt, i, i % 7 + 1);
            iput(XB[3], dt, 77, 0);
            ep_binary_params p = {kind, EP_ACT_NONE, 0, 0};
            ep_tensor a, b, y;
            tset(&a, XB[2], dt, 1, d1), tset(&b, XB[3], dt, 1, d1), tset(&y, YB[2], dt, 1, d1);
            opbox box;
            ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
            box.in[1] = &b, op->n_in = 2;
            const int rc = shape_ok(ep_shape_binary, op, 1, d1) ? ep_ref_binary_f32(op) : -1;
            CHECK(rc == (kind == EP_BIN_ADD ? EP_OK : EP_ERR_RUN_INDEX), "int dt %d kind %d zero divisor: rc %d", dt, kind, rc);
        }
    static const int32_t nchw[4] = {2, 3, 4, 70}, c11[3] = {3, 1, 1}, one[1] = {1};
    for (int d = 0; d < 5; d++)
        for (int k = 0; k < 8; k++) {
            const uint8_t dt = int_dtypes[d];
            CHECK(run_ibinary(dt, int_kinds[k], 4, nchw, 4, nchw, 1), "int same shape in place on A dt %d kind %d", dt, k);
            CHECK(run_ibinary(dt, int_kinds[k], 4, nchw, 3, c11, 1), "int per-channel in place dt %d kind %d", dt, k);
            CHECK(run_ibinary(dt, int_kinds[k], 1, one, 4, nchw, 2), "int [1] op X in place on B dt %d kind %d", dt, k);
            CHECK(run_ibinary(dt, int_kinds[k], 0, one, 0, one, 0), "int scalars dt %d kind %d", dt, k);
        }
}

/* ---- unsigned dtypes and the bitwise kinds: exact unsigned semantics (U64 values >= 2^63 too), shifts by
 * the width or more give 0, signed bitwise ops on the two's complement bits ---- */
static uint64_t uget(const void *p, uint8_t dt, int64_t i) {
    switch (dt) {
    case EP_DTYPE_U8: return ((const uint8_t *)p)[i];
    case EP_DTYPE_U16: return ((const uint16_t *)p)[i];
    case EP_DTYPE_U32: return ((const uint32_t *)p)[i];
    default: return ((const uint64_t *)p)[i];
    }
}
static void uput(void *p, uint8_t dt, int64_t i, uint64_t v) {
    switch (dt) {
    case EP_DTYPE_U8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case EP_DTYPE_U16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case EP_DTYPE_U32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((uint64_t *)p)[i] = v; break;
    }
}
/* Independent statement of the unsigned semantics in a width of w bits; b != 0 for DIV, MOD, FMOD. */
static uint64_t ref_ubin(int kind, unsigned w, uint64_t a, uint64_t b) {
    const uint64_t m = w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1;
    switch (kind) {
    case EP_BIN_ADD: return (a + b) & m;
    case EP_BIN_SUB: return (a - b) & m;
    case EP_BIN_MUL: return (a * b) & m;
    case EP_BIN_DIV: return a / b;
    case EP_BIN_MAX: return a > b ? a : b;
    case EP_BIN_MIN: return a < b ? a : b;
    case EP_BIN_MOD: case EP_BIN_FMOD: return a % b;
    case EP_BIN_BITAND: return a & b;
    case EP_BIN_BITOR: return a | b;
    case EP_BIN_BITXOR: return a ^ b;
    case EP_BIN_SHL: return b < w ? (a << b) & m : 0;
    default: return b < w ? a >> b : 0;   /* SHR */
    }
}

static void test_binary_unsigned_bitwise(void) {
    static const struct { uint8_t dt; int kind; uint64_t a, b, want; } kv[] = {
        {EP_DTYPE_U64, EP_BIN_MAX, UINT64_C(1) << 63, 5, UINT64_C(1) << 63},
        {EP_DTYPE_U64, EP_BIN_MIN, UINT64_MAX, 7, 7},
        {EP_DTYPE_U64, EP_BIN_DIV, UINT64_MAX, 2, (UINT64_C(1) << 63) - 1},
        {EP_DTYPE_U64, EP_BIN_DIV, UINT64_C(1) << 63, UINT64_MAX, 0},
        {EP_DTYPE_U64, EP_BIN_MOD, UINT64_MAX, UINT64_C(1) << 63, (UINT64_C(1) << 63) - 1},
        {EP_DTYPE_U64, EP_BIN_ADD, UINT64_MAX, 2, 1}, {EP_DTYPE_U32, EP_BIN_SUB, 0, 1, 0xFFFFFFFFu},
        {EP_DTYPE_U32, EP_BIN_MAX, 0x80000000u, 1, 0x80000000u}, {EP_DTYPE_U16, EP_BIN_MUL, 300, 300, 24464},
        {EP_DTYPE_U16, EP_BIN_SHL, 0x8001, 1, 2}, {EP_DTYPE_U8, EP_BIN_SHL, 1, 8, 0}, {EP_DTYPE_U8, EP_BIN_SHL, 1, 7, 128},
        {EP_DTYPE_U64, EP_BIN_SHR, UINT64_C(1) << 63, 63, 1}, {EP_DTYPE_U64, EP_BIN_SHR, UINT64_MAX, 64, 0},
        {EP_DTYPE_U64, EP_BIN_SHL, 1, UINT64_MAX, 0}, {EP_DTYPE_U32, EP_BIN_SHR, 0xF0000000u, 28, 15},
        {EP_DTYPE_U16, EP_BIN_BITXOR, 0xFFFF, 0x0F0F, 0xF0F0}, {EP_DTYPE_U64, EP_BIN_BITAND, UINT64_MAX, 12, 12},
    };
    const int32_t one[1] = {1};
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) {
        uput(XB[2], kv[k].dt, 0, kv[k].a), uput(XB[3], kv[k].dt, 0, kv[k].b);
        ep_binary_params p = {kv[k].kind, EP_ACT_NONE, 0, 0};
        ep_tensor a, b, y;
        tset(&a, XB[2], kv[k].dt, 1, one), tset(&b, XB[3], kv[k].dt, 1, one), tset(&y, YB[2], kv[k].dt, 1, one);
        opbox box;
        ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
        box.in[1] = &b, op->n_in = 2;
        const int ok = shape_ok(ep_shape_binary, op, 1, one) && ep_ref_binary_f32(op) == EP_OK;
        const uint64_t got = uget(YB[2], kv[k].dt, 0);
        CHECK(ok && got == kv[k].want && ref_ubin(kv[k].kind, 8u * ep_dtype_size(kv[k].dt), kv[k].a, kv[k].b) == kv[k].want,
              "unsigned binary dtype %d kind %d: %llu op %llu = %llu want %llu", kv[k].dt, kv[k].kind,
              (unsigned long long)kv[k].a, (unsigned long long)kv[k].b, (unsigned long long)got,
              (unsigned long long)kv[k].want);
    }
    /* every unsigned kind on every unsigned dtype, [100] op [100] and [100] op [1] (broadcast, in place) */
    static const uint8_t udts[4] = {EP_DTYPE_U8, EP_DTYPE_U16, EP_DTYPE_U32, EP_DTYPE_U64};
    static const int ukinds[13] = {EP_BIN_ADD, EP_BIN_SUB, EP_BIN_MUL, EP_BIN_DIV, EP_BIN_MAX, EP_BIN_MIN, EP_BIN_MOD,
                                   EP_BIN_FMOD, EP_BIN_BITAND, EP_BIN_BITOR, EP_BIN_BITXOR, EP_BIN_SHL, EP_BIN_SHR};
    for (int d = 0; d < 4; d++)
        for (int k = 0; k < 13; k++)
            for (int form = 0; form < 2; form++) {
                const uint8_t dt = udts[d];
                const int kind = ukinds[k];
                const unsigned w = 8u * ep_dtype_size(dt);
                const int32_t n100[1] = {100};
                const int64_t nb = form ? 1 : 100;
                for (int i = 0; i < 100; i++) {
                    const uint64_t r = ((uint64_t)chk_rnd() << 32) | chk_rnd();
                    uput(XB[2], dt, i, chk_int(0, 3) ? r : chk_int(0, 1) ? UINT64_MAX : UINT64_C(1) << (w - 1));
                }
                for (int64_t i = 0; i < nb; i++) {
                    uint64_t v = ((uint64_t)chk_rnd() << 32) | chk_rnd();
                    if (kind == EP_BIN_SHL || kind == EP_BIN_SHR) v = (uint64_t)chk_int(0, (int)w + 3);
                    if (v == 0 || (uint64_t)(v & (w == 64 ? UINT64_MAX : (UINT64_C(1) << w) - 1)) == 0) v = 3;
                    uput(XB[3], dt, i, v);
                }
                static uint64_t want[100];
                for (int i = 0; i < 100; i++) want[i] = ref_ubin(kind, w, uget(XB[2], dt, i), uget(XB[3], dt, form ? 0 : i));
                ep_binary_params p = {kind, EP_ACT_NONE, 0, 0};
                ep_tensor a, b, y;
                tset(&a, XB[2], dt, 1, n100), tset(&b, XB[3], dt, 1, form ? one : n100), tset(&y, XB[2], dt, 1, n100);
                opbox box;
                ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
                box.in[1] = &b, op->n_in = 2;
                int ok = shape_ok(ep_shape_binary, op, 1, n100) && ep_ref_binary_f32(op) == EP_OK;
                for (int i = 0; ok && i < 100; i++) ok = uget(XB[2], dt, i) == want[i];
                CHECK(ok, "unsigned dtype %d kind %d form %d", dt, kind, form);
            }
    /* signed bitwise: the two's complement bits */
    static const struct { uint8_t dt; int kind; int64_t a, b, want; } sv[] = {
        {EP_DTYPE_I8, EP_BIN_BITAND, -1, 15, 15}, {EP_DTYPE_I8, EP_BIN_BITXOR, -128, 127, -1},
        {EP_DTYPE_I16, EP_BIN_BITOR, -32768, 1, -32767}, {EP_DTYPE_I32, EP_BIN_BITXOR, -1, 5, -6},
        {EP_DTYPE_I64, EP_BIN_BITOR, INT64_MIN, 1, INT64_MIN + 1}, {EP_DTYPE_I64, EP_BIN_BITAND, -2, INT64_MAX, INT64_MAX - 1},
        /* shifts: arithmetic right, left discards past the sign bit, b < 0 or >= the width gives the fill */
        {EP_DTYPE_I8, EP_BIN_SHR, -128, 3, -16}, {EP_DTYPE_I8, EP_BIN_SHL, 65, 1, -126}, {EP_DTYPE_I8, EP_BIN_SHL, 3, 7, -128},
        {EP_DTYPE_I8, EP_BIN_SHR, -5, 8, -1}, {EP_DTYPE_I8, EP_BIN_SHR, 5, 8, 0}, {EP_DTYPE_I8, EP_BIN_SHL, -5, -1, 0},
        {EP_DTYPE_I32, EP_BIN_SHR, -1, -3, -1}, {EP_DTYPE_I32, EP_BIN_SHL, 1, 31, INT32_MIN}, {EP_DTYPE_I16, EP_BIN_SHR, -32768, 15, -1},
        {EP_DTYPE_I64, EP_BIN_SHR, INT64_MIN, 63, -1}, {EP_DTYPE_I64, EP_BIN_SHL, -1, 63, INT64_MIN},
        {EP_DTYPE_I64, EP_BIN_SHL, 1, 64, 0}, {EP_DTYPE_I64, EP_BIN_SHR, 7, 1, 3},
    };
    for (size_t k = 0; k < sizeof sv / sizeof sv[0]; k++) {
        iput(XB[2], sv[k].dt, 0, sv[k].a), iput(XB[3], sv[k].dt, 0, sv[k].b);
        ep_binary_params p = {sv[k].kind, EP_ACT_NONE, 0, 0};
        ep_tensor a, b, y;
        tset(&a, XB[2], sv[k].dt, 1, one), tset(&b, XB[3], sv[k].dt, 1, one), tset(&y, YB[2], sv[k].dt, 1, one);
        opbox box;
        ep_op *op = op11(&box, EP_OP_BINARY, &p, &a, &y);
        box.in[1] = &b, op->n_in = 2;
        const int ok = shape_ok(ep_shape_binary, op, 1, one) && ep_ref_binary_f32(op) == EP_OK;
        CHECK(ok && iget(YB[2], sv[k].dt, 0) == sv[k].want, "signed bitwise dtype %d kind %d", sv[k].dt, sv[k].kind);
    }
}

/* ---- concat / split ---- */
static void test_concat_split(void) {
    for (int t = 0; t < 200; t++) {
        int rank = chk_int(1, 5), axis = chk_int(0, rank - 1), n = chk_int(1, 4);
        uint8_t dt = any_dtypes[chk_int(0, 3)];
        size_t es = ep_dtype_size(dt);
        int32_t base[5], dy[5], dx[4][5];
        rdims(rank, base, 4, 300, 0);
        memcpy(dy, base, sizeof base);
        dy[axis] = 0;
        ep_tensor xs[4], y;
        opbox b = {0};
        for (int k = 0; k < n; k++) {
            memcpy(dx[k], base, sizeof base);
            dx[k][axis] = chk_int(0, 4);
            dy[axis] += dx[k][axis];
            fill_bytes(XB[k], chk_numel(rank, dx[k]) * (int64_t)es);
            tset(&xs[k], XB[k], dt, rank, dx[k]);
            b.in[k] = &xs[k];
        }
        tset(&y, YB[0], dt, rank, dy);
        b.out[0] = &y;
        ep_axis_params p = {axis, 0};
        ep_op *op = opset(&b, EP_OP_CONCAT, &p, n, 1);
        int ok = shape_ok(ep_shape_concat, op, rank, dy) && ep_ref_concat_any(op) == EP_OK;
        int64_t ny = chk_numel(rank, dy);
        for (int64_t f = 0; ok && f < ny; f++) {
            int64_t c[5];
            unravel(f, rank, dy, c);
            int k = 0;
            while (c[axis] >= dx[k][axis]) c[axis] -= dx[k++][axis];
            ok = memcmp(YB[0] + f * es, XB[k] + ravel(rank, dx[k], c) * es, es) == 0;
        }
        CHECK(ok, "concat rank %d axis %d n %d", rank, axis, n);
        /* split the concatenation back into the pieces */
        ep_tensor ys[4];
        opbox b2 = {0};
        b2.in[0] = &y;
        for (int k = 0; k < n; k++) {
            memset(YB[k + 1], 0xAB, (size_t)(chk_numel(rank, dx[k]) * (int64_t)es));
            tset(&ys[k], YB[k + 1], dt, rank, dx[k]);
            b2.out[k] = &ys[k];
        }
        ep_shape ss[4];
        uint64_t scr = 1;
        op = opset(&b2, EP_OP_SPLIT, &p, 1, n);
        ok = ep_shape_split(op, ss, &scr) == EP_OK && ep_ref_split_any(op) == EP_OK;
        for (int k = 0; ok && k < n; k++)
            ok = shape_is(&ss[k], rank, dx[k]) && ss[k].dtype == dt &&
                 memcmp(YB[k + 1], XB[k], (size_t)(chk_numel(rank, dx[k]) * (int64_t)es)) == 0;
        CHECK(ok, "split rank %d axis %d n %d", rank, axis, n);
    }
}

/* ---- slice (negative steps) and transpose (rank 4-6): Y[c] = X[src(c)] ---- */
static void test_slice_transpose(void) {
    for (int t = 0; t < 600; t++) {
        const int is_slice = t & 1, rank = is_slice ? chk_int(1, 5) : t < 60 ? chk_int(1, 3) : chk_int(4, 6);
        uint8_t dt = any_dtypes[chk_int(0, 3)];
        size_t es = ep_dtype_size(dt);
        int32_t dx[6], dy[6];
        ep_slice_params ps;
        ep_transpose_params pt;
        memset(&ps, 0, sizeof ps);
        for (int i = 0; i < 8; i++) pt.perm[i] = chk_int(-100, 100); /* beyond rank: ignored */
        for (int i = 0; i < rank; i++) pt.perm[i] = i;
        for (int i = rank - 1; i > 0; i--) {
            int j = chk_int(0, i), tmp = pt.perm[i];
            pt.perm[i] = pt.perm[j], pt.perm[j] = tmp;
        }
        rdims(rank, dx, is_slice ? 6 : 5, 4000, !is_slice);
        for (int i = 0; i < rank; i++) {
            int step = chk_int(-3, 3) ? chk_int(1, 3) : 1, start = chk_int(0, dx[i] > 0 ? dx[i] - 1 : 0);
            step = chk_int(0, 1) ? step : -step;
            int maxc = step > 0 ? (dx[i] - 1 - start) / step + 1 : start / -step + 1;
            ps.starts[i] = start, ps.steps[i] = step;
            dy[i] = is_slice ? (chk_int(0, 12) == 0 ? 0 : chk_int(1, maxc)) : dx[pt.perm[i]];
        }
        fill_bytes(XB[0], chk_numel(rank, dx) * (int64_t)es);
        int ok = is_slice ? run11(ep_shape_slice, ep_ref_slice_any, EP_OP_SLICE, &ps, dt, XB[0], rank, dx, YB[0], rank, dy)
                          : run11(ep_shape_transpose, ep_ref_transpose_any, EP_OP_TRANSPOSE, &pt, dt, XB[0], rank, dx,
                                  YB[0], rank, dy);
        for (int64_t f = 0; ok && f < chk_numel(rank, dy); f++) {
            int64_t c[6], cx[6];
            unravel(f, rank, dy, c);
            for (int i = 0; i < rank; i++) {
                if (is_slice) cx[i] = ps.starts[i] + c[i] * ps.steps[i];
                else cx[pt.perm[i]] = c[i];
            }
            ok = memcmp(YB[0] + f * es, XB[0] + ravel(rank, dx, cx) * es, es) == 0;
        }
        CHECK(ok, "%s rank %d", is_slice ? "slice" : "transpose", rank);
    }
}

/* ---- pad: constant / reflect / edge, negative pads crop first ---- */
static int run_pad(int rank, const int32_t *dx, const float *x, const ep_pad_params *p, int32_t *dy, float *y) {
    for (int i = 0; i < rank; i++) dy[i] = dx[i] + p->pads[i] + p->pads[rank + i];
    return run11(ep_shape_pad, ep_ref_pad_f32, EP_OP_PAD, p, EP_DTYPE_F32, x, rank, dx, y, rank, dy);
}

static void test_pad(void) {
    static const float v5[5] = {1, 2, 3, 4, 5};
    static const struct { int mode, b, e, n; float want[17]; } kv[] = {
        {EP_PAD_REFLECT, 6, 6, 17, {3, 4, 5, 4, 3, 2, 1, 2, 3, 4, 5, 4, 3, 2, 1, 2, 3}}, /* numpy.pad */
        {EP_PAD_REFLECT, -1, -1, 3, {2, 3, 4}},
        {EP_PAD_REFLECT, 2, -1, 6, {3, 2, 1, 2, 3, 4}},
        {EP_PAD_EDGE, 3, -2, 6, {1, 1, 1, 1, 2, 3}},                                    /* onnxruntime */
        {EP_PAD_CONSTANT, -2, 3, 6, {3, 4, 5, 9, 9, 9}},
    };
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) {
        ep_pad_params p = {kv[k].mode, 9.0f, {0}};
        p.pads[0] = kv[k].b, p.pads[1] = kv[k].e;
        int32_t d5 = 5, dy;
        int ok = run_pad(1, &d5, v5, &p, &dy, Y) && dy == kv[k].n;
        for (int i = 0; ok && i < kv[k].n; i++) ok = Y[i] == kv[k].want[i];
        CHECK(ok, "pad known answer %zu", k);
    }
    for (int t = 0; t < 300; t++) {
        int rank = chk_int(1, 4), mode = chk_int(0, 2);
        int32_t dx[4], dy[4];
        ep_pad_params p = {mode, chk_float_in(-1, 1), {0}};
        rdims(rank, dx, 5, 500, mode == EP_PAD_CONSTANT);
        for (int i = 0; i < rank; i++) {
            int lo = mode == EP_PAD_CONSTANT ? -dx[i] : -(dx[i] - 1);
            do p.pads[i] = chk_int(-2, 4), p.pads[rank + i] = chk_int(-2, 4);
            while ((p.pads[i] < 0 ? p.pads[i] : 0) + (p.pads[rank + i] < 0 ? p.pads[rank + i] : 0) < lo);
        }
        fill_f32(A, chk_numel(rank, dx), -3, 3);
        int ok = run_pad(rank, dx, A, &p, dy, Y);
        int64_t ny = chk_numel(rank, dy);
        for (int64_t f = 0; ok && f < ny; f++) {
            int64_t c[4];
            int outside = 0;
            unravel(f, rank, dy, c);
            for (int i = 0; i < rank; i++) {
                int b = p.pads[i], e = p.pads[rank + i];
                int crop = b < 0 ? -b : 0, m = dx[i] - crop - (e < 0 ? -e : 0);
                int64_t j = c[i] - (b > 0 ? b : 0);
                if (j < 0 || j >= m) {
                    if (mode == EP_PAD_CONSTANT) outside = 1;
                    else if (mode == EP_PAD_EDGE || m == 1) j = j < 0 ? 0 : m - 1;
                    else
                        while (j < 0 || j >= m) j = j < 0 ? -j : 2 * (m - 1) - j;
                }
                c[i] = j + crop;
            }
            ok = Y[f] == (outside ? p.value : A[ravel(rank, dx, c)]);
        }
        CHECK(ok, "pad rank %d mode %d", rank, mode);
    }
}

/* ---- pad on C8 (1.14): X and Y in C8, channel pads of whole blocks; equal to the plain pad of the plain data,
 * blocked; the refusals of the shape function ---- */
static void test_pad_c8(void) {
    for (int t = 0; t < 200; t++) {
        const int mode = t % 5 == 4 ? (t % 10 == 4 ? EP_PAD_REFLECT : EP_PAD_EDGE) : EP_PAD_CONSTANT;
        int32_t dx[4] = {chk_int(1, 2), 8 * chk_int(1, 4), chk_int(1, 9), chk_int(1, 11)}, dy[4];
        ep_pad_params p = {mode, t % 3 ? 0.0f : chk_float_in(-1, 1), {0}};
        for (int i = 0; i < 4; i++) {
            const int lo = mode == EP_PAD_CONSTANT ? -(dx[i] / 2) : 0;
            p.pads[i] = chk_int(lo, 3), p.pads[4 + i] = chk_int(lo, 3);
        }
        if (mode == EP_PAD_CONSTANT) {   /* channels: whole blocks, crops included */
            p.pads[1] = 8 * chk_int(dx[1] > 8 ? -1 : 0, 2), p.pads[5] = 8 * chk_int(0, 2);
        } else {
            p.pads[1] = p.pads[5] = 0;
        }
        for (int i = 0; i < 4; i++) dy[i] = dx[i] + p.pads[i] + p.pads[4 + i];
        const int64_t nx = chk_numel(4, dx), ny = chk_numel(4, dy);
        float *x = (float *)malloc((size_t)nx * 4), *xb = (float *)malloc((size_t)nx * 4);
        float *want = (float *)malloc((size_t)ny * 4 + 4), *wantb = (float *)malloc((size_t)ny * 4 + 4);
        float *got = (float *)malloc((size_t)ny * 4 + 4);
        for (int64_t i = 0; i < nx; i++) x[i] = chk_float();
        int ok = run_pad(4, dx, x, &p, dy, want);
        chk_c8_block(xb, x, dx, 1);
        chk_c8_block(wantb, want, dy, 1);
        ep_tensor tx, ty;
        opbox b;
        tset(&tx, xb, EP_DTYPE_F32, 4, dx), tset(&ty, got, EP_DTYPE_F32, 4, dy);
        tx.layout = ty.layout = EP_LAYOUT_C8;
        ep_op *op = op11(&b, EP_OP_PAD, &p, &tx, &ty);
        ok = ok && shape_ok(ep_shape_pad, op, 4, dy) && ep_ref_pad_f32(op) == EP_OK &&
             !memcmp(got, wantb, (size_t)ny * 4);
        CHECK(ok, "pad C8 %dx%dx%dx%d mode %d", dx[0], dx[1], dx[2], dx[3], mode);
        /* refused: a channel pad of part of a block, a channel pad in another mode, one side plain, the
         * pad-to-multiple bits */
        ep_shape sh[1];
        uint64_t scr;
        ep_pad_params q = p;
        q.mode = EP_PAD_CONSTANT, q.pads[5] += 4;
        CHECK(ep_shape_pad(op11(&b, EP_OP_PAD, &q, &tx, &ty), sh, &scr) == EP_ERR_PLAN_PARAMS, "pad C8 4 channels");
        q = p, q.mode = EP_PAD_EDGE, q.pads[1] = 8;
        CHECK(ep_shape_pad(op11(&b, EP_OP_PAD, &q, &tx, &ty), sh, &scr) == EP_ERR_PLAN_PARAMS, "pad C8 edge channels");
        q = p, q.mode |= EP_PAD_END_TO_MULTIPLE << 3, q.pads[7] = 4;
        CHECK(ep_shape_pad(op11(&b, EP_OP_PAD, &q, &tx, &ty), sh, &scr) == EP_ERR_PLAN_PARAMS, "pad C8 to a multiple");
        ty.layout = EP_LAYOUT_PLAIN;
        CHECK(ep_shape_pad(op11(&b, EP_OP_PAD, &p, &tx, &ty), sh, &scr) == EP_ERR_PLAN_TENSOR, "pad C8 to plain");
        free(x), free(xb), free(want), free(wantb), free(got);
    }
}

/* ---- resize: expected values from onnx.reference (onnxruntime agrees within 6e-6 where it
 * supports the case); tf_half_pixel_for_nearest by its opset-11 formula x = (y + 0.5) / s ---- */
typedef struct resize_case {
    int mode, coord, nearest, exclude;
    float a;
    float scales[4];
    int32_t out[4];
    int offset;
} resize_case;
static const float resize_x[12] = {0.0f, 7.25f, 2.5f, 9.75f, 5.0f, 12.25f, 7.5f, 2.75f, 10.0f, 5.25f, 12.5f, 7.75f};
static const resize_case resize_cases[] = {
    {0, 0, 0, 0, -0.75f, {1.0f, 1.0f, 0.600000024f, 1.70000005f}, {1, 1, 1, 6}, 0},
    {0, 0, 1, 0, -0.75f, {1.0f, 1.0f, 1.66666663f, 1.75f}, {1, 1, 5, 7}, 6},
    {0, 2, 3, 0, -0.75f, {1.0f, 1.0f, 0.666666687f, 1.5f}, {1, 1, 2, 6}, 41},
    {0, 3, 2, 0, -0.75f, {1.0f, 1.0f, 1.5f, 0.5f}, {1, 1, 4, 2}, 53},
    {0, 5, 0, 0, -0.75f, {1.0f, 1.0f, 1.70000005f, 2.29999995f}, {1, 1, 5, 9}, 61},
    {0, 3, 2, 1, -0.75f, {1.0f, 1.0f, 1.5f, 1.5f}, {1, 1, 4, 6}, 106},
    {1, 2, 0, 0, -0.75f, {1.0f, 1.0f, 1.66666663f, 1.75f}, {1, 1, 5, 7}, 130},
    {1, 1, 0, 0, -0.75f, {1.0f, 1.0f, 0.5f, 1.5f}, {1, 1, 1, 6}, 165},
    {1, 3, 0, 0, -0.75f, {1.0f, 1.0f, 0.333333343f, 0.75f}, {1, 1, 1, 3}, 171},
    {1, 5, 0, 0, -0.75f, {1.0f, 1.0f, 1.29999995f, 0.800000012f}, {1, 1, 3, 3}, 174},
    {1, 0, 0, 0, -0.75f, {1.0f, 1.0f, 0.666666687f, 0.75f}, {1, 1, 2, 3}, 183},
    {1, 0, 0, 1, -0.75f, {1.0f, 1.0f, 1.5f, 1.5f}, {1, 1, 4, 6}, 189},
    {1, 0, 0, 0, -0.75f, {1.0f, 1.0f, 1.5f, 2.5f}, {1, 1, 4, 10}, 213},
    {2, 2, 0, 1, -0.5f, {1.0f, 1.0f, 1.33333337f, 1.25f}, {1, 1, 4, 5}, 253},
    {2, 1, 0, 0, -0.75f, {1.0f, 1.0f, 0.800000012f, 1.25f}, {1, 1, 2, 5}, 273},
    {2, 0, 0, 1, -0.75f, {1.0f, 1.0f, 2.0f, 0.75f}, {1, 1, 6, 3}, 283},
    {0, 4, 0, 0, -0.75f, {1.0f, 1.0f, 1.5f, 2.5f}, {1, 1, 4, 10}, 301},
    {0, 4, 1, 0, -0.75f, {1.0f, 1.0f, 0.7f, 1.6f}, {1, 1, 2, 6}, 341},
};
static const float resize_expect[353] = {
    0.0f, 0.0f, 7.25f, 2.5f, 2.5f, 9.75f, 0.0f, 0.0f, 7.25f, 2.5f, 2.5f, 9.75f, 9.75f, 0.0f, 0.0f, 7.25f,
    2.5f, 2.5f, 9.75f, 9.75f, 5.0f, 5.0f, 12.25f, 7.5f, 7.5f, 2.75f, 2.75f, 10.0f, 10.0f, 5.25f, 12.5f, 12.5f,
    7.75f, 7.75f, 10.0f, 10.0f, 5.25f, 12.5f, 12.5f, 7.75f, 7.75f, 0.0f, 7.25f, 2.5f, 2.5f, 9.75f, 9.75f,
    10.0f, 5.25f, 12.5f, 12.5f, 7.75f, 7.75f, 0.0f, 2.5f, 0.0f, 2.5f, 5.0f, 7.5f, 5.0f, 7.5f, 0.0f, 0.0f,
    7.25f, 7.25f, 7.25f, 2.5f, 2.5f, 9.75f, 9.75f, 0.0f, 0.0f, 7.25f, 7.25f, 7.25f, 2.5f, 2.5f, 9.75f, 9.75f,
    5.0f, 5.0f, 12.25f, 12.25f, 12.25f, 7.5f, 7.5f, 2.75f, 2.75f, 10.0f, 10.0f, 5.25f, 5.25f, 5.25f, 12.5f,
    12.5f, 7.75f, 7.75f, 10.0f, 10.0f, 5.25f, 5.25f, 5.25f, 12.5f, 12.5f, 7.75f, 7.75f, 0.0f, 0.0f, 0.0f,
    0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 7.25f, 7.25f, 2.5f, 9.75f, 0.0f, 5.0f, 12.25f, 12.25f, 7.5f, 2.75f, 0.0f,
    5.0f, 12.25f, 12.25f, 7.5f, 2.75f, 0.0f, 3.625f, 7.25f, 4.875f, 2.5f, 6.125f, 9.75f, 2.5f, 6.125f, 9.75f,
    7.375f, 5.0f, 5.625f, 6.25f, 5.0f, 8.625f, 12.25f, 9.875f, 7.5f, 5.125f, 2.75f, 7.5f, 8.125f, 8.75f,
    9.375f, 10.0f, 7.625f, 5.25f, 10.0f, 7.625f, 5.25f, 8.875f, 12.5f, 10.125f, 7.75f, 0.0f, 4.833333f,
    5.666667f, 2.5f, 7.333333f, 9.75f, 1.208333f, 4.875f, 8.541667f, 2.966346f, 6.028846f, 7.014423f, 6.8125f,
    9.875f, 3.9375f, 8.350962f, 9.105769f, 7.783654f, 2.458333f, 6.125f, 7.291667f, 8.458333f, 9.125f,
    7.291667f, 0.0f, 3.625f, 6.458333f, 3.291667f, 6.125f, 9.75f, 2.5f, 6.125f, 8.958333f, 5.791667f, 5.625f,
    6.25f, 5.833333f, 8.458333f, 10.625f, 8.791667f, 5.958333f, 3.583333f, 9.166667f, 7.791667f, 7.291667f,
    10.79167f, 9.291667f, 6.916667f, 0.0f, 0.725f, 3.625f, 6.525f, 5.825f, 3.925f, 3.225f, 6.125f, 9.025f,
    9.75f, 2.5f, 3.225f, 6.125f, 9.025f, 8.325f, 6.425f, 5.125f, 5.625f, 6.125f, 6.25f, 5.833333f, 6.358333f,
    8.458333f, 10.55833f, 10.25833f, 9.158334f, 7.858333f, 5.958333f, 4.058333f, 3.583333f, 9.166667f,
    8.891666f, 7.791667f, 6.691667f, 7.991667f, 10.09167f, 11.19167f, 9.291667f, 7.391667f, 6.916667f, 0.0f,
    5.971374f, 4.875f, 3.778626f, 9.75f, 3.035713f, 9.733371f, 8.901786f, 4.952834f, 4.642857f, 6.964287f,
    9.667395f, 10.47322f, 8.161669f, 3.857142f, 10.0f, 5.803435f, 8.875f, 11.94656f, 7.75f, 0.0f, 6.43f,
    4.081999f, 4.799997f, 10.446f, 6.660156f, 10.58891f, 10.92422f, 6.606718f, 2.567033f, 0.3514627f,
    4.039773f, 9.455173f, 1.955497f, 6.19788f, 7.441757f, 4.440683f, 9.667925f, 4.141583f, 7.357749f,
    11.08679f, 4.062253f, 8.755259f, 9.505301f, 7.256837f, 9.696511f, 8.585227f, 9.201035f, 0.0f, 7.25f,
    7.25f, 7.25f, 2.5f, 2.5f, 9.75f, 9.75f, 9.75f, 9.75f, 5.0f, 12.25f, 12.25f, 12.25f, 7.5f, 7.5f, 2.75f,
    2.75f, 2.75f, 2.75f, 10.0f, 5.25f, 5.25f, 5.25f, 12.5f, 12.5f, 7.75f, 7.75f, 7.75f, 7.75f, 10.0f, 5.25f,
    5.25f, 5.25f, 12.5f, 12.5f, 7.75f, 7.75f, 7.75f, 7.75f, 5.0f, 12.25f, 7.5f, 7.5f, 2.75f, 2.75f, 10.0f,
    5.25f, 12.5f, 12.5f, 7.75f, 7.75f,
};

static int run_resize(const ep_resize_params *p, int rank, const int32_t *dx, const float *x,
                      const int32_t *dy, float *y) {
    return run11(ep_shape_resize, ep_ref_resize_f32, EP_OP_RESIZE, p, EP_DTYPE_F32, x, rank, dx, y, rank, dy);
}

static void test_resize(void) {
    static const int32_t dx[4] = {1, 1, 3, 4};
    for (size_t k = 0; k < sizeof resize_cases / sizeof resize_cases[0]; k++) {
        const resize_case *c = &resize_cases[k];
        ep_resize_params p = {c->mode, c->coord, c->nearest, c->exclude, c->a, 0.0f, {0}};
        memcpy(p.scales, c->scales, sizeof c->scales);
        int ok = run_resize(&p, 4, dx, resize_x, c->out, Y);
        for (int64_t i = 0; ok && i < chk_numel(4, c->out); i++) ok = feq(Y[i], resize_expect[c->offset + i], 2e-6f);
        CHECK(ok, "resize case %zu (mode %d coord %d)", k, c->mode, c->coord);
    }
    /* random shapes: scale 1 is the identity; nearest asymmetric x2 repeats */
    for (int t = 0; t < 60; t++) {
        int rank = chk_int(1, 4);
        int32_t d[4], d2[4];
        rdims(rank, d, 5, 600, 0);
        fill_f32(A, chk_numel(rank, d), -2, 2);
        ep_resize_params p = {chk_int(0, 2), chk_int(0, 5), chk_int(0, 3), 0, -0.75f, 0.0f, {0}};
        for (int i = 0; i < 8; i++) p.scales[i] = 1.0f;
        int ok = run_resize(&p, rank, d, A, d, Y) && memcmp(A, Y, (size_t)chk_numel(rank, d) * 4) == 0;
        CHECK(ok, "resize identity rank %d", rank);
        p.mode = EP_RESIZE_NEAREST, p.coord_mode = EP_COORD_ASYMMETRIC, p.nearest_mode = EP_NEAREST_FLOOR;
        for (int i = 0; i < rank; i++) {
            p.scales[i] = (float)(i == rank - 1 || chk_int(0, 1) ? 2 : 1);
            d2[i] = d[i] * (int32_t)p.scales[i];
        }
        ok = run_resize(&p, rank, d, A, d2, Y);
        for (int64_t f = 0; ok && f < chk_numel(rank, d2); f++) {
            int64_t c[4];
            unravel(f, rank, d2, c);
            for (int i = 0; i < rank; i++) c[i] /= (int64_t)p.scales[i];
            ok = Y[f] == A[ravel(rank, d, c)];
        }
        CHECK(ok, "resize nearest x2 rank %d", rank);
    }
}

/* ---- softmax / logsoftmax (middle axis when rank >= 3), every other case in place ---- */
static void test_softmax(void) {
    for (int t = 0; t < 120; t++) {
        int rank = chk_int(1, 4), lg = t & 1;
        int axis = rank >= 3 ? chk_int(1, rank - 2) : chk_int(0, rank - 1);
        int32_t d[4];
        rdims(rank, d, 6, 1200, 1);
        int64_t n = chk_numel(rank, d), outer = 1, inner = 1;
        fill_f32(A, n, -20, 20);
        for (int i = 0; i < axis; i++) outer *= d[i];
        for (int i = axis + 1; i < rank; i++) inner *= d[i];
        for (int64_t o = 0; o < outer; o++)
            for (int64_t j = 0; j < inner; j++) {
                const int64_t base = o * d[axis] * inner + j;
                double m = -INFINITY, s = 0;
                for (int k = 0; k < d[axis]; k++) m = fmax(m, A[base + k * inner]);
                for (int k = 0; k < d[axis]; k++) s += exp(A[base + k * inner] - m);
                for (int k = 0; k < d[axis]; k++) {
                    double v = A[base + k * inner] - m;
                    R[base + k * inner] = (float)(lg ? v - log(s) : exp(v) / s);
                }
            }
        ep_softmax_params p = {axis, lg};
        const float *got = (t & 2) ? A : Y;
        int ok = run11(ep_shape_softmax, ep_ref_softmax_f32, EP_OP_SOFTMAX, &p, EP_DTYPE_F32, A, rank, d, (void *)got, rank, d);
        for (int64_t i = 0; ok && i < n; i++) ok = fabsf(got[i] - R[i]) <= 2e-6f * (1 + fabsf(R[i]));
        CHECK(ok, "softmax rank %d axis %d log %d", rank, axis, lg);
    }
}

/* ---- reduce: multi-axis masks, keepdims or not ---- */
static void test_reduce(void) {
    static double acc[NBUF];
    for (int t = 0; t < 300; t++) {
        int rank = chk_int(1, 5), kind = chk_int(0, 6), keep = chk_int(0, 1), ry = 0;
        uint32_t mask = t % 10 == 0 ? (1u << rank) - 1 : chk_rnd() & ((1u << rank) - 1);
        int32_t d[5], dy[5], dk[5];
        rdims(rank, d, 4, 800, 1);
        int64_t cnt = 1;
        for (int i = 0; i < rank; i++) {
            int red = (mask >> i) & 1;
            dk[i] = red ? 1 : d[i];
            if (red) cnt *= d[i];
            if (!red || keep) dy[ry++] = dk[i];
        }
        int64_t n = chk_numel(rank, d), ny = chk_numel(rank, dk);
        fill_f32(A, n, kind == EP_REDUCE_PROD ? 0.7f : -3, kind == EP_REDUCE_PROD ? 1.3f : 3);
        for (int64_t i = 0; i < ny; i++)
            acc[i] = kind == EP_REDUCE_PROD ? 1 : kind == EP_REDUCE_MAX ? -INFINITY : kind == EP_REDUCE_MIN ? INFINITY : 0;
        for (int64_t f = 0; f < n; f++) {
            int64_t c[5];
            unravel(f, rank, d, c);
            for (int i = 0; i < rank; i++) c[i] = (mask >> i) & 1 ? 0 : c[i];
            double v = A[f], *a = &acc[ravel(rank, dk, c)];
            switch (kind) {
            case EP_REDUCE_PROD: *a *= v; break;
            case EP_REDUCE_MAX: *a = fmax(*a, v); break;
            case EP_REDUCE_MIN: *a = fmin(*a, v); break;
            case EP_REDUCE_SUM_SQUARE: case EP_REDUCE_L2: *a += v * v; break;
            default: *a += v;
            }
        }
        for (int64_t i = 0; i < ny; i++)
            R[i] = (float)(kind == EP_REDUCE_MEAN ? acc[i] / (double)cnt : kind == EP_REDUCE_L2 ? sqrt(acc[i]) : acc[i]);
        ep_reduce_params p = {kind, mask, keep, 0};
        int ok = run11(ep_shape_reduce, ep_ref_reduce_f32, EP_OP_REDUCE, &p, EP_DTYPE_F32, A, rank, d, Y, ry, dy);
        for (int64_t i = 0; ok && i < ny; i++) ok = feq(Y[i], R[i], 1e-5f);
        CHECK(ok, "reduce kind %d mask %x keep %d rank %d", kind, mask, keep, rank);
    }
}

/* ---- reduce on I32 / I64: SUM, PROD, MAX, MIN; sums and products wrap; empty sets ---- */
static void test_reduce_int(void) {
    static const int kinds[4] = {EP_REDUCE_SUM, EP_REDUCE_PROD, EP_REDUCE_MAX, EP_REDUCE_MIN};
    static uint64_t acc[NBUF / 8];
    for (int t = 0; t < 300; t++) {
        const int rank = chk_int(1, 4), kind = kinds[chk_int(0, 3)], keep = chk_int(0, 1);
        const uint8_t dt = chk_int(0, 1) ? EP_DTYPE_I32 : EP_DTYPE_I64;
        const int64_t lo = dt == EP_DTYPE_I32 ? INT32_MIN : INT64_MIN, hi = dt == EP_DTYPE_I32 ? INT32_MAX : INT64_MAX;
        uint32_t mask = t % 10 == 0 ? (1u << rank) - 1 : chk_rnd() & ((1u << rank) - 1);
        int32_t d[4], dy[4], dk[4];
        int ry = 0;
        rdims(rank, d, 4, 400, 1);
        for (int i = 0; i < rank; i++) {
            const int red = (mask >> i) & 1;
            dk[i] = red ? 1 : d[i];
            if (!red || keep) dy[ry++] = dk[i];
        }
        const int64_t n = chk_numel(rank, d), ny = chk_numel(rank, dk);
        for (int64_t i = 0; i < n; i++)   /* big values so sums and products wrap */
            iput(XB[0], dt, i, kind == EP_REDUCE_PROD && chk_int(0, 1) ? chk_int(-3, 3) : ivalue(dt));
        for (int64_t i = 0; i < ny; i++)
            acc[i] = kind == EP_REDUCE_PROD ? 1u : kind == EP_REDUCE_MAX ? (uint64_t)lo : kind == EP_REDUCE_MIN ? (uint64_t)hi : 0u;
        for (int64_t f = 0; f < n; f++) {
            int64_t c[4];
            unravel(f, rank, d, c);
            for (int i = 0; i < rank; i++) c[i] = (mask >> i) & 1 ? 0 : c[i];
            const int64_t v = iget(XB[0], dt, f);
            uint64_t *a = &acc[ravel(rank, dk, c)];
            const int64_t cur = iwrap(EP_DTYPE_I64, *a);
            switch (kind) {
            case EP_REDUCE_SUM: *a += (uint64_t)v; break;
            case EP_REDUCE_PROD: *a *= (uint64_t)v; break;
            case EP_REDUCE_MAX: *a = (uint64_t)(v > cur ? v : cur); break;
            default: *a = (uint64_t)(v < cur ? v : cur); break;
            }
        }
        ep_reduce_params p = {kind, mask, keep, 0};
        int ok = run11(ep_shape_reduce, ep_ref_reduce_f32, EP_OP_REDUCE, &p, dt, XB[0], rank, d, YB[0], ry, dy);
        for (int64_t i = 0; ok && i < ny; i++) ok = iget(YB[0], dt, i) == iwrap(dt, acc[i]);
        CHECK(ok, "int reduce dt %d kind %d mask %x keep %d rank %d", dt, kind, mask, keep, rank);
    }
    /* known answers: INT32_MAX + 1 wraps; an empty MAX is the type's minimum */
    const int32_t d2[1] = {2}, d0[2] = {3, 0}, d3[2] = {3, 1};
    const int32_t xi[2] = {INT32_MAX, 1};
    int32_t yi[3] = {0};
    ep_reduce_params ps = {EP_REDUCE_SUM, 1, 0, 0};
    CHECK(run11(ep_shape_reduce, ep_ref_reduce_f32, EP_OP_REDUCE, &ps, EP_DTYPE_I32, xi, 1, d2, yi, 0, d2) &&
          yi[0] == INT32_MIN, "int32 sum wraps: %d", yi[0]);
    ep_reduce_params pm = {EP_REDUCE_MAX, 2, 1, 0};
    int64_t yl[3] = {0};
    CHECK(run11(ep_shape_reduce, ep_ref_reduce_f32, EP_OP_REDUCE, &pm, EP_DTYPE_I64, XB[0], 2, d0, yl, 2, d3) &&
          yl[0] == INT64_MIN && yl[2] == INT64_MIN, "int64 empty max");
    pm.kind = EP_REDUCE_MIN;
    CHECK(run11(ep_shape_reduce, ep_ref_reduce_f32, EP_OP_REDUCE, &pm, EP_DTYPE_I32, XB[0], 2, d0, yi, 2, d3) &&
          yi[1] == INT32_MAX, "int32 empty min");
}

/* ---- gather: I32/I64 indices of rank 0..3, negative indices, out-of-range fails the run ---- */
static void test_gather(void) {
    for (int t = 0; t < 300; t++) {
        int rx = chk_int(1, 4), ri = chk_int(0, 3), axis = chk_int(0, rx - 1), ry = 0, i64 = chk_int(0, 1);
        uint8_t dt = any_dtypes[chk_int(0, 3)];
        size_t es = ep_dtype_size(dt);
        int32_t dx[4], di[3], dy[7];
        rdims(rx, dx, 4, 200, 0);
        rdims(ri, di, 3, 27, 1);
        int64_t ni = chk_numel(ri, di), *ix64 = (int64_t *)(void *)XB[1];
        int32_t *ix32 = (int32_t *)(void *)XB[1];
        for (int64_t k = 0; k < ni; k++) {
            int v = chk_int(-dx[axis], dx[axis] - 1);
            if (i64) ix64[k] = v; else ix32[k] = v;
        }
        for (int i = 0; i < axis; i++) dy[ry++] = dx[i];
        for (int i = 0; i < ri; i++) dy[ry++] = di[i];
        for (int i = axis + 1; i < rx; i++) dy[ry++] = dx[i];
        fill_bytes(XB[0], chk_numel(rx, dx) * (int64_t)es);
        ep_tensor tx, ti, ty;
        tset(&tx, XB[0], dt, rx, dx), tset(&ty, YB[0], dt, ry, dy);
        tset(&ti, XB[1], i64 ? EP_DTYPE_I64 : EP_DTYPE_I32, ri, di);
        ep_axis_params p = {axis, 0};
        opbox b;
        ep_op *op = op11(&b, EP_OP_GATHER, &p, &tx, &ty);
        b.in[1] = &ti, op->n_in = 2;
        int ok = shape_ok(ep_shape_gather, op, ry, dy) && ep_ref_gather_any(op) == EP_OK;
        for (int64_t f = 0; ok && f < chk_numel(ry, dy); f++) {
            int64_t c[7], cx[4];
            unravel(f, ry, dy, c);
            int64_t v = i64 ? ix64[ravel(ri, di, c + axis)] : ix32[ravel(ri, di, c + axis)];
            for (int i = 0; i < rx; i++) cx[i] = i < axis ? c[i] : i > axis ? c[i - 1 + ri] : v < 0 ? v + dx[axis] : v;
            ok = memcmp(YB[0] + f * es, XB[0] + ravel(rx, dx, cx) * es, es) == 0;
        }
        CHECK(ok, "gather rx %d ri %d axis %d i64 %d", rx, ri, axis, i64);
        if (ni > 0) {
            int64_t k = chk_int(0, (int)ni - 1), bad = chk_int(0, 1) ? dx[axis] : -dx[axis] - 1;
            if (i64) ix64[k] = bad; else ix32[k] = (int32_t)bad;
            CHECK(ep_ref_gather_any(op) == EP_ERR_RUN_INDEX, "gather index %lld of %d", (long long)bad, dx[axis]);
        }
    }
}

static void test_copy(void) {
    int32_t d3[3] = {2, 3, 4}, d2[2] = {4, 6};
    ep_axis_params p = {7, 7}; /* ignored */
    fill_bytes(XB[0], 24 * 8);
    int ok = run11(ep_shape_copy, ep_ref_copy_any, EP_OP_COPY, &p, EP_DTYPE_I64, XB[0], 3, d3, YB[0], 2, d2);
    CHECK(ok && memcmp(XB[0], YB[0], 24 * 8) == 0, "copy reshapes");
}

/* ---- hostile params and shapes: every shape function must refuse them ---- */
static void expect(ep_shape_fn fn, const ep_op *op, int want, const char *what) {
    ep_shape s[8];
    uint64_t scr;
    int rc = fn(op, s, &scr);
    CHECK(rc == want, "%s: got %d want %d", what, rc, want);
}

static void test_hostile(void) {
    int32_t d4[4] = {2, 3, 4, 5}, dc[4] = {2, 6, 4, 5}, dsp[4] = {2, 3, 1, 5}, dsl[4] = {1, 3, 2, 5}, drs[4] = {2, 3, 8, 10};
    ep_tensor x, x2, y, y2;
    opbox b;
    ep_op *op;
    union {
        ep_unary_params u; ep_binary_params bi; ep_axis_params ax; ep_slice_params sl; ep_transpose_params tr;
        ep_pad_params pd; ep_resize_params rs; ep_softmax_params sm; ep_reduce_params rd;
    } p;
#define CASE(fn, opc, yd, init, want, ...)                                  \
    do {                                                                    \
        memset(&p, 0, sizeof p);                                            \
        init;                                                               \
        tset(&x, A, EP_DTYPE_F32, 4, d4), tset(&x2, B, EP_DTYPE_F32, 4, d4); \
        tset(&y, Y, EP_DTYPE_F32, 4, yd), tset(&y2, R, EP_DTYPE_F32, 4, dsl); \
        op = op11(&b, opc, &p, &x, &y), b.in[1] = &x2, b.out[1] = &y2;      \
        __VA_ARGS__;                                                        \
        expect(fn, op, want, #fn ": " #__VA_ARGS__);                        \
    } while (0)
#define UN(want, ...) CASE(ep_shape_unary, EP_OP_UNARY, d4, p.u.kind = EP_ACT_RELU, want, __VA_ARGS__)
    UN(EP_OK, (void)0); UN(EP_ERR_PLAN_PARAMS, p.u.kind = EP_ACT_NONE);
    UN(EP_ERR_PLAN_PARAMS, p.u.kind = EP_ACT_COUNT); UN(EP_ERR_PLAN_PARAMS, p.u.kind = -5);
    UN(EP_ERR_PLAN_TENSOR, x.dtype = EP_DTYPE_I32); UN(EP_ERR_PLAN_TENSOR, x.dtype = 4);
    UN(EP_ERR_PLAN_OP, op->n_in = 2); UN(EP_ERR_PLAN_OP, b.in[0] = NULL); UN(EP_ERR_PLAN_SHAPE, x.rank = 9);
    UN(EP_ERR_PLAN_SHAPE, x.dims[1] = -1);
    UN(EP_ERR_PLAN_SHAPE, x.rank = 8; for (int i = 0; i < 8; i++) x.dims[i] = INT32_MAX);
#define BI(want, ...) CASE(ep_shape_binary, EP_OP_BINARY, d4, (void)0, want, op->n_in = 2; __VA_ARGS__)
    BI(EP_ERR_PLAN_SHAPE, x.rank = x2.rank = 2; x.dims[0] = x2.dims[1] = INT32_MAX; x.dims[1] = x2.dims[0] = 1);
    BI(EP_OK, x2.dims[0] = 1); BI(EP_ERR_PLAN_PARAMS, p.bi.kind = EP_BIN_COUNT);
    BI(EP_ERR_PLAN_PARAMS, p.bi.kind = -1); BI(EP_ERR_PLAN_PARAMS, p.bi.act = EP_ACT_COUNT);
    BI(EP_ERR_PLAN_SHAPE, x2.dims[0] = 3); BI(EP_ERR_PLAN_TENSOR, x2.dtype = EP_DTYPE_I8);
    BI(EP_ERR_PLAN_OP, op->n_in = 1);
    /* integers: one dtype for both, POW but no PRELU, no fused activation; BOOL and F16 refused */
    BI(EP_OK, x.dtype = x2.dtype = EP_DTYPE_I64; p.bi.kind = EP_BIN_MOD);
    BI(EP_OK, x.dtype = x2.dtype = EP_DTYPE_U8; p.bi.kind = EP_BIN_DIV);
    BI(EP_ERR_PLAN_TENSOR, x.dtype = EP_DTYPE_I32; x2.dtype = EP_DTYPE_I64);
    BI(EP_ERR_PLAN_TENSOR, x.dtype = x2.dtype = EP_DTYPE_BOOL);
    BI(EP_ERR_PLAN_TENSOR, x.dtype = x2.dtype = EP_DTYPE_F16);
    BI(EP_OK, x.dtype = x2.dtype = EP_DTYPE_I32; p.bi.kind = EP_BIN_POW);
    BI(EP_ERR_PLAN_PARAMS, x.dtype = x2.dtype = EP_DTYPE_I32; p.bi.kind = EP_BIN_PRELU);
    BI(EP_ERR_PLAN_PARAMS, x.dtype = x2.dtype = EP_DTYPE_I32; p.bi.act = EP_ACT_RELU);
    BI(EP_OK, p.bi.kind = EP_BIN_FMOD; p.bi.act = EP_ACT_RELU);
    /* the bitwise kinds: integers only */
    BI(EP_ERR_PLAN_PARAMS, p.bi.kind = EP_BIN_BITAND);
    BI(EP_ERR_PLAN_PARAMS, p.bi.kind = EP_BIN_SHR);
    BI(EP_OK, x.dtype = x2.dtype = EP_DTYPE_I8; p.bi.kind = EP_BIN_BITXOR);
    BI(EP_OK, x.dtype = x2.dtype = EP_DTYPE_U64; p.bi.kind = EP_BIN_SHL);
    BI(EP_OK, x.dtype = x2.dtype = EP_DTYPE_U16; p.bi.kind = EP_BIN_DIV);
    BI(EP_OK, x.dtype = x2.dtype = EP_DTYPE_I64; p.bi.kind = EP_BIN_SHL);
    BI(EP_ERR_PLAN_PARAMS, x.dtype = x2.dtype = EP_DTYPE_U32; p.bi.kind = EP_BIN_SHR; p.bi.act = EP_ACT_RELU);
#define CC(want, ...) CASE(ep_shape_concat, EP_OP_CONCAT, dc, p.ax.axis = 1, want, op->n_in = 2; __VA_ARGS__)
    CC(EP_OK, (void)0); CC(EP_ERR_PLAN_PARAMS, p.ax.axis = 4); CC(EP_ERR_PLAN_PARAMS, p.ax.axis = -1);
    CC(EP_ERR_PLAN_SHAPE, x2.dims[2] = 7); CC(EP_ERR_PLAN_SHAPE, x2.rank = 3);
    CC(EP_ERR_PLAN_TENSOR, x2.dtype = EP_DTYPE_I32); CC(EP_ERR_PLAN_PARAMS, p.ax.axis = 0; x.rank = 0; x2.rank = 0);
    CC(EP_ERR_PLAN_OP, op->n_in = 0);
#define SP(want, ...) CASE(ep_shape_split, EP_OP_SPLIT, dsp, p.ax.axis = 2, want, op->n_out = 2; y2.dims[2] = 3; __VA_ARGS__)
    SP(EP_OK, y2.dims[0] = 2); SP(EP_ERR_PLAN_SHAPE, y2.dims[0] = 2; y2.dims[2] = 2); SP(EP_ERR_PLAN_SHAPE, (void)0);
    SP(EP_ERR_PLAN_PARAMS, p.ax.axis = 4); SP(EP_ERR_PLAN_SHAPE, y2.dims[0] = 2; y2.rank = 3);
    SP(EP_ERR_PLAN_OP, op->n_out = 0);
#define SL(want, ...) CASE(ep_shape_slice, EP_OP_SLICE, dsl, (void)0, want, \
                           for (int i = 0; i < 4; i++) p.sl.steps[i] = 1; p.sl.starts[0] = 1, p.sl.starts[2] = 3, p.sl.steps[2] = -2; __VA_ARGS__)
    SL(EP_OK, (void)0); SL(EP_ERR_PLAN_PARAMS, p.sl.steps[0] = 0);
    SL(EP_ERR_PLAN_PARAMS, p.sl.steps[3] = 0; y.dims[3] = 0); SL(EP_ERR_PLAN_SHAPE, p.sl.starts[0] = 2);
    SL(EP_ERR_PLAN_SHAPE, p.sl.starts[2] = -1); SL(EP_ERR_PLAN_SHAPE, p.sl.steps[2] = -4);
    SL(EP_ERR_PLAN_SHAPE, p.sl.steps[2] = 2); SL(EP_ERR_PLAN_SHAPE, p.sl.steps[3] = INT32_MAX);
    SL(EP_ERR_PLAN_SHAPE, y.rank = 3); SL(EP_OK, p.sl.starts[1] = 99; y.dims[1] = 0);
#define TR(want, ...) CASE(ep_shape_transpose, EP_OP_TRANSPOSE, d4, (void)0, want, \
                           for (int i = 0; i < 4; i++) p.tr.perm[i] = 3 - i; __VA_ARGS__)
    TR(EP_OK, p.tr.perm[6] = 99); TR(EP_ERR_PLAN_PARAMS, p.tr.perm[1] = 3); TR(EP_ERR_PLAN_PARAMS, p.tr.perm[0] = 4);
    TR(EP_ERR_PLAN_PARAMS, p.tr.perm[0] = -1);
#define PD(want, ...) CASE(ep_shape_pad, EP_OP_PAD, d4, (p.pd.pads[0] = 1, p.pd.pads[7] = 2), want, __VA_ARGS__)
    PD(EP_ERR_PLAN_SHAPE, for (int i = 0; i < 4; i++) p.pd.pads[i] = 1 << 30);
    PD(EP_OK, (void)0); PD(EP_ERR_PLAN_PARAMS, p.pd.mode = 4); PD(EP_ERR_PLAN_PARAMS, p.pd.mode = -1);
    PD(EP_ERR_PLAN_SHAPE, p.pd.pads[0] = -3); PD(EP_ERR_PLAN_SHAPE, p.pd.pads[1] = -2; p.pd.pads[5] = -2);
    PD(EP_ERR_PLAN_SHAPE, p.pd.pads[2] = INT32_MAX); PD(EP_ERR_PLAN_TENSOR, x.dtype = EP_DTYPE_F16);
    PD(EP_OK, (x.dtype = y.dtype = EP_DTYPE_I8, p.pd.value = -128.0f));
    PD(EP_ERR_PLAN_PARAMS, (x.dtype = y.dtype = EP_DTYPE_I8, p.pd.value = 128.0f));
    PD(EP_ERR_PLAN_PARAMS, (x.dtype = y.dtype = EP_DTYPE_U64, p.pd.value = -1.0f));
    PD(EP_ERR_PLAN_SHAPE, p.pd.mode = EP_PAD_REFLECT; x.dims[0] = 0);
    PD(EP_ERR_PLAN_SHAPE, p.pd.mode = EP_PAD_EDGE; p.pd.pads[3] = -5); PD(EP_OK, p.pd.pads[3] = -5);
#define RS(want, ...) CASE(ep_shape_resize, EP_OP_RESIZE, drs, \
                           (p.rs.mode = 1, p.rs.scales[0] = p.rs.scales[1] = 1, p.rs.scales[2] = p.rs.scales[3] = 2), want, __VA_ARGS__)
    RS(EP_OK, p.rs.scales[5] = NAN); RS(EP_ERR_PLAN_PARAMS, p.rs.scales[2] = 0);
    RS(EP_ERR_PLAN_PARAMS, p.rs.scales[3] = -1); RS(EP_ERR_PLAN_PARAMS, p.rs.scales[2] = NAN);
    RS(EP_ERR_PLAN_PARAMS, p.rs.scales[2] = INFINITY); RS(EP_ERR_PLAN_PARAMS, p.rs.mode = 3);
    RS(EP_ERR_PLAN_PARAMS, p.rs.coord_mode = 6); RS(EP_ERR_PLAN_PARAMS, p.rs.nearest_mode = 4);
    RS(EP_ERR_PLAN_PARAMS, p.rs.exclude_outside = 2);
    RS(EP_ERR_PLAN_PARAMS, p.rs.mode = EP_RESIZE_CUBIC; p.rs.cubic_coeff_a = NAN);
    RS(EP_ERR_PLAN_TENSOR, x.dtype = EP_DTYPE_I32); RS(EP_ERR_PLAN_SHAPE, y.rank = 3);
    RS(EP_ERR_PLAN_SHAPE, x.dims[2] = 0);
#define SM(want, ...) CASE(ep_shape_softmax, EP_OP_SOFTMAX, d4, p.sm.axis = 1, want, __VA_ARGS__)
    SM(EP_OK, p.sm.log = 1); SM(EP_ERR_PLAN_PARAMS, p.sm.axis = 4); SM(EP_ERR_PLAN_PARAMS, p.sm.axis = -1);
    SM(EP_ERR_PLAN_PARAMS, p.sm.log = 2); SM(EP_ERR_PLAN_TENSOR, x.dtype = EP_DTYPE_I64);
#define RD(want, ...) CASE(ep_shape_reduce, EP_OP_REDUCE, d4, p.rd.axes_mask = 0xF, want, __VA_ARGS__)
    RD(EP_OK, p.rd.keepdims = 1); RD(EP_ERR_PLAN_PARAMS, p.rd.axes_mask = 1u << 4);
    RD(EP_ERR_PLAN_PARAMS, p.rd.axes_mask = 1u << 31); RD(EP_ERR_PLAN_PARAMS, p.rd.kind = 7);
    RD(EP_ERR_PLAN_PARAMS, p.rd.kind = -1); RD(EP_ERR_PLAN_PARAMS, p.rd.keepdims = 2);
    RD(EP_ERR_PLAN_TENSOR, x.dtype = EP_DTYPE_U8);
    RD(EP_OK, x.dtype = EP_DTYPE_I32; p.rd.kind = EP_REDUCE_PROD); RD(EP_OK, x.dtype = EP_DTYPE_I64; p.rd.kind = EP_REDUCE_SUM);
    RD(EP_ERR_PLAN_PARAMS, x.dtype = EP_DTYPE_I64; p.rd.kind = EP_REDUCE_MEAN);
    RD(EP_ERR_PLAN_PARAMS, x.dtype = EP_DTYPE_I32; p.rd.kind = EP_REDUCE_L2);
#define GA(want, ...) CASE(ep_shape_gather, EP_OP_GATHER, d4, p.ax.axis = 1, want, op->n_in = 2; x2.dtype = EP_DTYPE_I64; __VA_ARGS__)
#define CP(want, ...) CASE(ep_shape_copy, EP_OP_COPY, dc, (void)0, want, y.dims[1] = 3; __VA_ARGS__)
    CP(EP_OK, (void)0); CP(EP_ERR_PLAN_SHAPE, y.dims[1] = 4); CP(EP_ERR_PLAN_TENSOR, y.dtype = EP_DTYPE_I32);
    GA(EP_OK, (void)0); GA(EP_ERR_PLAN_TENSOR, x2.dtype = EP_DTYPE_F32); GA(EP_ERR_PLAN_PARAMS, p.ax.axis = 4);
    GA(EP_ERR_PLAN_SHAPE, x2.rank = 6); GA(EP_ERR_PLAN_OP, op->n_in = 1);
}

/* ---- run-time operands (plan 1.8): PAD to a multiple, RESHAPE_DYN, RESIZE_DYN ---- */
static void test_run_time_operands(void) {
    static const float v5[5] = {1, 2, 3, 4, 5};
    ep_tensor x, s, y;
    opbox b;
    ep_op *op;
    ep_shape out[2];
    uint64_t scr;
    /* pad to a multiple: [5] with the end to a multiple of 4 (3 more), the begin to a multiple of 4 next to a
     * fixed end of 1 (2 more), a multiple the extent already is (none) */
    static const struct { int mode, b, e, n; float want[8]; } kv[] = {
        {EP_PAD_CONSTANT | EP_PAD_END_TO_MULTIPLE, 0, 4, 8, {1, 2, 3, 4, 5, 9, 9, 9}},
        {EP_PAD_CONSTANT | EP_PAD_BEGIN_TO_MULTIPLE, 4, 1, 8, {9, 9, 1, 2, 3, 4, 5, 9}},
        {EP_PAD_EDGE | EP_PAD_END_TO_MULTIPLE, 0, 5, 5, {1, 2, 3, 4, 5}},
        {EP_PAD_REFLECT | EP_PAD_END_TO_MULTIPLE, 0, 7, 7, {1, 2, 3, 4, 5, 4, 3}},
    };
    for (size_t k = 0; k < sizeof kv / sizeof kv[0]; k++) {
        ep_pad_params p = {kv[k].mode, 9.0f, {0}};
        p.pads[0] = kv[k].b, p.pads[1] = kv[k].e;
        int32_t d5 = 5, dy = kv[k].n;
        int ok = run11(ep_shape_pad, ep_ref_pad_f32, EP_OP_PAD, &p, EP_DTYPE_F32, v5, 1, &d5, Y, 1, &dy);
        for (int i = 0; ok && i < kv[k].n; i++) ok = Y[i] == kv[k].want[i];
        CHECK(ok, "pad to a multiple, known answer %zu", k);
    }
    /* hostile mode bits: both sides, a dim past the rank, a multiple out of range, a negative other side,
     * the high byte */
    static const struct { int mode, p0, p1; } bad[] = {
        {EP_PAD_BEGIN_TO_MULTIPLE | EP_PAD_END_TO_MULTIPLE, 4, 4}, {EP_PAD_BEGIN_TO_MULTIPLE << 1, 4, 4},
        {EP_PAD_END_TO_MULTIPLE, 0, 0}, {EP_PAD_END_TO_MULTIPLE, 0, -3}, {EP_PAD_END_TO_MULTIPLE, 0, INT32_MAX},
        {EP_PAD_END_TO_MULTIPLE, -1, 4}, {EP_PAD_END_TO_MULTIPLE | (1 << 24), 0, 4}, {EP_PAD_WRAP + 1, 0, 0},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        ep_pad_params p = {bad[k].mode, 0.0f, {0}};
        p.pads[0] = bad[k].p0, p.pads[1] = bad[k].p1;
        int32_t d5 = 5, d8 = 8;
        tset(&x, A, EP_DTYPE_F32, 1, &d5), tset(&y, Y, EP_DTYPE_F32, 1, &d8);
        expect(ep_shape_pad, op11(&b, EP_OP_PAD, &p, &x, &y), EP_ERR_PLAN_PARAMS, "pad to a multiple: hostile mode");
    }
    /* random pads to a multiple on exact-size heap buffers (ASan): the shape function's extent is the
     * kernel's, and every output element is the constant or an input element */
    for (int t = 0; t < 500; t++) {
        const int rank = chk_int(1, 3), mode = chk_int(0, 3);
        int32_t dx[3], dy[3];
        rdims(rank, dx, 7, 200, 0);
        ep_pad_params p = {mode, 7.0f, {0}};
        for (int i = 0; i < rank; i++) p.pads[i] = chk_int(0, 2), p.pads[rank + i] = chk_int(0, 2);
        const int a = chk_int(0, rank - 1), end = chk_int(0, 1);
        p.mode |= (end ? EP_PAD_END_TO_MULTIPLE : EP_PAD_BEGIN_TO_MULTIPLE) << a;
        p.pads[a + (end ? rank : 0)] = chk_int(1, 9);
        for (int i = 0; i < rank && mode == EP_PAD_REFLECT; i++)   /* reflect: pads below the extent */
            if (dx[i] < 12) dx[i] = 12;
        tset(&x, NULL, EP_DTYPE_F32, rank, dx), tset(&y, NULL, EP_DTYPE_F32, rank, dx);
        op = op11(&b, EP_OP_PAD, &p, &x, &y);
        if (ep_shape_pad(op, out, &scr) != EP_OK) {
            CHECK(0, "pad to a multiple: a valid op refused");
            continue;
        }
        const int m = p.pads[a + (end ? rank : 0)];
        CHECK(out[0].dims[a] % m == 0, "pad to a multiple: extent %d not a multiple of %d", out[0].dims[a], m);
        for (int i = 0; i < rank; i++) dy[i] = out[0].dims[i];
        const int64_t nx = chk_numel(rank, dx), ny = chk_numel(rank, dy);
        float *xm = malloc((size_t)(nx ? nx : 1) * 4), *ym = malloc((size_t)(ny ? ny : 1) * 4);
        for (int64_t i = 0; i < nx; i++) xm[i] = (float)(i % 5);
        tset(&x, xm, EP_DTYPE_F32, rank, dx), tset(&y, ym, EP_DTYPE_F32, rank, dy);
        op = op11(&b, EP_OP_PAD, &p, &x, &y);
        int ok = ep_ref_pad_f32(op) == EP_OK;
        for (int64_t i = 0; ok && i < ny; i++) ok = ym[i] == 7.0f || (ym[i] >= 0 && ym[i] <= 4);
        CHECK(ok, "pad to a multiple: rank %d mode %d", rank, mode);
        free(xm), free(ym);
    }

    /* RESHAPE_DYN: X [2, 6] f32 viewed by S at Y's capacity [12, 12] */
    int32_t dx2[2] = {2, 6}, ds[1] = {2}, dcap[2] = {12, 12};
    int64_t sv[3];
    ep_reshape_dyn_params rp = {0, 0};
#define RSD(want, ...)                                                                                    \
    do {                                                                                                  \
        rp = (ep_reshape_dyn_params){0, 0};                                                               \
        tset(&x, A, EP_DTYPE_F32, 2, dx2), tset(&s, sv, EP_DTYPE_I64, 1, ds), tset(&y, A, EP_DTYPE_F32, 2, dcap); \
        op = op11(&b, EP_OP_RESHAPE_DYN, &rp, &x, &y), b.in[1] = &s, op->n_in = 2;                         \
        __VA_ARGS__;                                                                                      \
        expect(ep_shape_reshape_dyn, op, want, "reshape_dyn: " #__VA_ARGS__);                             \
    } while (0)
    RSD(EP_OK, (void)0); RSD(EP_ERR_PLAN_PARAMS, rp.allowzero = 2); RSD(EP_ERR_PLAN_PARAMS, rp.reserved = 1);
    RSD(EP_ERR_PLAN_TENSOR, s.dtype = EP_DTYPE_I32); RSD(EP_ERR_PLAN_TENSOR, y.dtype = EP_DTYPE_I32);
    RSD(EP_ERR_PLAN_SHAPE, s.dims[0] = 3); RSD(EP_ERR_PLAN_SHAPE, s.rank = 2);
    RSD(EP_ERR_PLAN_OP, op->n_in = 1); RSD(EP_ERR_PLAN_OP, b.in[1] = NULL); RSD(EP_ERR_PLAN_PARAMS, op->params = NULL);
    static const struct { int64_t a, b; int allowzero, rc; int32_t d0, d1; } rk[] = {
        {3, 4, 0, EP_OK, 3, 4}, {-1, 6, 0, EP_OK, 2, 6}, {0, -1, 0, EP_OK, 2, 6}, {12, -1, 0, EP_OK, 12, 1},
        {13, 1, 0, EP_ERR_RUN_BOUND, 0, 0}, {1, -1, 0, EP_OK, 1, 12}, {5, -1, 0, EP_ERR_RUN_SHAPE, 0, 0},
        {-1, -1, 0, EP_ERR_RUN_SHAPE, 0, 0}, {-2, 6, 0, EP_ERR_RUN_SHAPE, 0, 0}, {3, 5, 0, EP_ERR_RUN_SHAPE, 0, 0},
        {0, 4, 1, EP_ERR_RUN_SHAPE, 0, 0}, {0, -1, 1, EP_ERR_RUN_SHAPE, 0, 0}, {INT64_MAX, 2, 0, EP_ERR_RUN_BOUND, 0, 0},
    };
    for (size_t k = 0; k < sizeof rk / sizeof rk[0]; k++) {
        rp = (ep_reshape_dyn_params){rk[k].allowzero, 0};
        sv[0] = rk[k].a, sv[1] = rk[k].b;
        tset(&x, A, EP_DTYPE_F32, 2, dx2), tset(&s, sv, EP_DTYPE_I64, 1, ds), tset(&y, A, EP_DTYPE_F32, 2, dcap);
        op = op11(&b, EP_OP_RESHAPE_DYN, &rp, &x, &y), b.in[1] = &s, op->n_in = 2;
        const int rc = ep_ref_reshape_dyn_any(op);
        CHECK(rc == rk[k].rc && (rc != EP_OK || (y.dims[0] == rk[k].d0 && y.dims[1] == rk[k].d1)),
              "reshape_dyn %zu: rc %d dims %d %d", k, rc, y.dims[0], y.dims[1]);
        CHECK(rc == EP_OK || (y.dims[0] == 12 && y.dims[1] == 12), "reshape_dyn %zu: a failed run wrote extents", k);
    }

    /* RESIZE_DYN: X [1, 1, 3, 4] f32, S over axes 2 and 3, Y at capacity [1, 1, 12, 16] */
    int32_t dxr[4] = {1, 1, 3, 4}, dyr[4] = {1, 1, 12, 16}, ds2[1] = {2};
    ep_resize_dyn_params zp;
    float fv[2];
#define RZD(want, ...)                                                                                    \
    do {                                                                                                  \
        memset(&zp, 0, sizeof zp);                                                                        \
        zp.mode = EP_RESIZE_LINEAR, zp.axes[0] = 2, zp.axes[1] = 3;                                       \
        for (int i = 2; i < 8; i++) zp.axes[i] = -1;                                                      \
        tset(&x, A, EP_DTYPE_F32, 4, dxr), tset(&s, fv, EP_DTYPE_F32, 1, ds2), tset(&y, Y, EP_DTYPE_F32, 4, dyr); \
        op = op11(&b, EP_OP_RESIZE_DYN, &zp, &x, &y), b.in[1] = &s, op->n_in = 2;                          \
        __VA_ARGS__;                                                                                      \
        expect(ep_shape_resize_dyn, op, want, "resize_dyn: " #__VA_ARGS__);                               \
    } while (0)
    RZD(EP_OK, (void)0); RZD(EP_OK, zp.from = EP_RESIZE_FROM_SIZES; s.dtype = EP_DTYPE_I64; zp.policy = 2);
    RZD(EP_ERR_PLAN_TENSOR, s.dtype = EP_DTYPE_I64); RZD(EP_ERR_PLAN_TENSOR, zp.from = EP_RESIZE_FROM_SIZES);
    RZD(EP_ERR_PLAN_PARAMS, zp.from = 2); RZD(EP_ERR_PLAN_PARAMS, zp.policy = 1);
    RZD(EP_ERR_PLAN_PARAMS, zp.from = EP_RESIZE_FROM_SIZES; s.dtype = EP_DTYPE_I64; zp.policy = 3);
    RZD(EP_ERR_PLAN_PARAMS, zp.axes[1] = 2); RZD(EP_ERR_PLAN_PARAMS, zp.axes[1] = 4);
    RZD(EP_ERR_PLAN_PARAMS, zp.axes[1] = -1; zp.axes[2] = 3); RZD(EP_ERR_PLAN_PARAMS, zp.axes[0] = -2);
    RZD(EP_ERR_PLAN_SHAPE, zp.axes[1] = -1); RZD(EP_ERR_PLAN_SHAPE, y.dims[1] = 2);
    RZD(EP_ERR_PLAN_PARAMS, zp.mode = 3); RZD(EP_ERR_PLAN_PARAMS, zp.coord_mode = EP_COORD_TF_CROP_AND_RESIZE);
    RZD(EP_ERR_PLAN_TENSOR, x.dtype = EP_DTYPE_I32); RZD(EP_ERR_PLAN_SHAPE, y.rank = 3);
    RZD(EP_ERR_PLAN_OP, op->n_in = 1); RZD(EP_ERR_PLAN_OP, op->params = NULL);
    /* the kernel: scales 2 and 3 give [6, 12] and RESIZE's values for those scales; past the capacity, a
     * zero or NaN scale, a size of 0: refused with the capacity left */
    fill_f32(A, 12, -2, 2);
    static const struct { float a, b; int rc; } zk[] = {
        {2, 3, EP_OK}, {4, 4, EP_OK}, {4.5f, 1, EP_ERR_RUN_BOUND}, {0, 1, EP_ERR_RUN_SHAPE}, {NAN, 1, EP_ERR_RUN_SHAPE},
        {1, INFINITY, EP_ERR_RUN_SHAPE}, {0.2f, 0.2f, EP_OK},
    };
    for (size_t k = 0; k < sizeof zk / sizeof zk[0]; k++) {
        memset(&zp, 0, sizeof zp);
        zp.mode = EP_RESIZE_LINEAR, zp.axes[0] = 2, zp.axes[1] = 3;
        for (int i = 2; i < 8; i++) zp.axes[i] = -1;
        fv[0] = zk[k].a, fv[1] = zk[k].b;
        tset(&x, A, EP_DTYPE_F32, 4, dxr), tset(&s, fv, EP_DTYPE_F32, 1, ds2), tset(&y, Y, EP_DTYPE_F32, 4, dyr);
        op = op11(&b, EP_OP_RESIZE_DYN, &zp, &x, &y), b.in[1] = &s, op->n_in = 2;
        const int rc = ep_ref_resize_dyn_f32(op);
        int ok = rc == zk[k].rc;
        if (rc == EP_OK) {
            const int32_t want[4] = {1, 1, (int32_t)floor(zk[k].a * 3.0), (int32_t)floor(zk[k].b * 4.0)};
            ep_resize_params q = {EP_RESIZE_LINEAR, 0, 0, 0, -0.75f, 0, {1, 1, zk[k].a, zk[k].b, 1, 1, 1, 1}};
            ok = memcmp(y.dims, want, sizeof want) == 0 &&
                 run11(ep_shape_resize, ep_ref_resize_f32, EP_OP_RESIZE, &q, EP_DTYPE_F32, A, 4, dxr, R, 4, want) &&
                 memcmp(Y, R, (size_t)chk_numel(4, want) * 4) == 0;
        } else {
            ok = ok && memcmp(y.dims, dyr, sizeof dyr) == 0;
        }
        CHECK(ok, "resize_dyn scales %g %g: rc %d", zk[k].a, zk[k].b, rc);
    }
    /* sizes, not_larger: ratios 4/3 and 12/4 = 3, the smaller 4/3 on both: [4, 5] (floor(4/3 * 4 + 0.5)) */
    int64_t zv[2] = {4, 12};
    memset(&zp, 0, sizeof zp);
    zp.from = EP_RESIZE_FROM_SIZES, zp.policy = EP_RESIZE_NOT_LARGER, zp.axes[0] = 2, zp.axes[1] = 3;
    for (int i = 2; i < 8; i++) zp.axes[i] = -1;
    tset(&x, A, EP_DTYPE_F32, 4, dxr), tset(&s, zv, EP_DTYPE_I64, 1, ds2), tset(&y, Y, EP_DTYPE_F32, 4, dyr);
    op = op11(&b, EP_OP_RESIZE_DYN, &zp, &x, &y), b.in[1] = &s, op->n_in = 2;
    CHECK(ep_ref_resize_dyn_f32(op) == EP_OK && y.dims[2] == 4 && y.dims[3] == 5, "resize_dyn sizes not_larger: %d %d",
          y.dims[2], y.dims[3]);
    zv[0] = 13;   /* stretch: 13 rows past the capacity of 12 */
    zp.policy = EP_RESIZE_STRETCH;
    tset(&y, Y, EP_DTYPE_F32, 4, dyr);
    CHECK(ep_ref_resize_dyn_f32(op) == EP_ERR_RUN_BOUND, "resize_dyn sizes past the capacity");
    zv[0] = 0;
    CHECK(ep_ref_resize_dyn_f32(op) == EP_ERR_RUN_SHAPE, "resize_dyn size 0");
}

/* ---- fuzz: plausible random bytes for every shape function; what is accepted must run on
 * exact-size heap buffers (ASan catches any access past a tensor) ---- */
static void test_fuzz(void) {
    static const struct { uint16_t opc; ep_shape_fn shape; ep_kernel_fn run; int nin, nout; } ops[] = {
        {EP_OP_UNARY, ep_shape_unary, ep_ref_unary_f32, 1, 1}, {EP_OP_BINARY, ep_shape_binary, ep_ref_binary_f32, 2, 1},
        {EP_OP_CONCAT, ep_shape_concat, ep_ref_concat_any, 0, 1}, {EP_OP_SPLIT, ep_shape_split, ep_ref_split_any, 1, 0},
        {EP_OP_SLICE, ep_shape_slice, ep_ref_slice_any, 1, 1}, {EP_OP_TRANSPOSE, ep_shape_transpose, ep_ref_transpose_any, 1, 1},
        {EP_OP_PAD, ep_shape_pad, ep_ref_pad_f32, 1, 1}, {EP_OP_RESIZE, ep_shape_resize, ep_ref_resize_f32, 1, 1},
        {EP_OP_SOFTMAX, ep_shape_softmax, ep_ref_softmax_f32, 1, 1}, {EP_OP_REDUCE, ep_shape_reduce, ep_ref_reduce_f32, 1, 1},
        {EP_OP_GATHER, ep_shape_gather, ep_ref_gather_any, 2, 1}, {EP_OP_COPY, ep_shape_copy, ep_ref_copy_any, 1, 1},
    };
    static const uint8_t dts[8] = {EP_DTYPE_U8, EP_DTYPE_I8, EP_DTYPE_I16, EP_DTYPE_I32, EP_DTYPE_I64, EP_DTYPE_BOOL, EP_DTYPE_F16, 99};
    static const float fvals[8] = {0.5f, 1, 2, 1.5f, 3, 0, -1, NAN};
    int accepted[12] = {0}, bad = 0;
    for (int t = 0; t < 30000; t++) {
        const int k = chk_int(0, 11), nin = ops[k].nin ? ops[k].nin : chk_int(1, 3), nout = ops[k].nout ? ops[k].nout : chk_int(1, 3);
        union { int32_t w[32]; float f[32]; } p;
        for (int i = 0; i < 32; i++) p.w[i] = chk_int(0, 15) ? chk_int(-2, 6) : (int32_t)chk_rnd();
        if (ops[k].opc == EP_OP_RESIZE) {
            p.w[0] = chk_int(0, 3), p.w[1] = chk_int(0, 6), p.w[2] = chk_int(0, 4), p.w[3] = chk_int(0, 1);
            for (int i = 4; i < 14; i++) p.f[i] = fvals[chk_int(0, 15) ? chk_int(0, 4) : chk_int(0, 7)];
        }
        if (ops[k].opc == EP_OP_UNARY || ops[k].opc == EP_OP_PAD) p.f[1] = 0.5f;
        int32_t base[4], brank = chk_int(0, 4);
        rdims(brank, base, 4, 256, 1);
        ep_tensor ts[8];
        opbox b = {0};
        for (int i = 0; i < nin + nout; i++) {
            int32_t d[4];
            int r = chk_int(0, 3) ? brank : chk_int(0, 4);
            for (int j = 0; j < r; j++) d[j] = (j < brank && chk_int(0, 4)) ? base[j] : chk_int(0, 4);
            uint8_t dt = chk_int(0, 1) ? EP_DTYPE_F32 : dts[chk_int(0, 7)];
            if (ops[k].opc == EP_OP_GATHER && i == 1) dt = chk_int(0, 7) ? (chk_int(0, 1) ? EP_DTYPE_I32 : EP_DTYPE_I64) : dt;
            tset(&ts[i], NULL, dt, r, d);
            if (i < nin) b.in[i] = &ts[i]; else b.out[i - nin] = &ts[i];
        }
        ep_op *op = opset(&b, ops[k].opc, &p, nin, nout);
        ep_shape s[8];
        uint64_t scr = 0;
        if (ops[k].shape(op, s, &scr) != EP_OK) continue;
        int huge = 0;
        for (int i = 0; i < nout; i++)
            for (int j = 0; j < s[i].rank; j++) huge |= s[i].dims[j] > 4096;
        for (int i = 0; i < nout && !huge; i++) huge |= ep_shape_numel(&s[i]) > 4096;
        if (huge) continue;
        accepted[k]++;
        void *mem[8];
        for (int i = 0; i < nin + nout; i++) {
            if (i >= nin) tset(&ts[i], NULL, s[i - nin].dtype, s[i - nin].rank, s[i - nin].dims);
            size_t n = (size_t)ep_numel(&ts[i]), es = ep_dtype_size(ts[i].dtype);
            mem[i] = ts[i].data = malloc((n * es) > 0 ? n * es : 1);
            for (size_t j = 0; i < nin && j < n * es; j++) ((unsigned char *)mem[i])[j] = (unsigned char)chk_rnd();
            for (size_t j = 0; i == 1 && ops[k].opc == EP_OP_GATHER && j < n; j++) {
                if (es == 8) ((int64_t *)mem[i])[j] = chk_int(-5, 5); else ((int32_t *)mem[i])[j] = chk_int(-5, 5);
            }
        }
        int rc = ops[k].run(op);
        bad += !(rc == EP_OK || (rc == EP_ERR_RUN_INDEX && (ops[k].opc == EP_OP_GATHER || ops[k].opc == EP_OP_BINARY)));
        for (int i = 0; i < nin + nout; i++) free(mem[i]);
    }
    CHECK(bad == 0, "fuzz: %d kernels failed", bad);
    for (int k = 0; k < 12; k++) CHECK(accepted[k] > 20, "fuzz: op %d accepted only %d times", ops[k].opc, accepted[k]);
}

int main(void) {
    test_act(), test_unary(), test_binary(), test_concat_split(), test_slice_transpose(), test_pad(), test_pad_c8();
    test_resize(), test_softmax(), test_reduce(), test_gather(), test_copy(), test_hostile(), test_fuzz();
    test_run_time_operands();
    test_binary_int(), test_binary_unsigned_bitwise(), test_reduce_int();
    printf("%d passed, %d failed\n", chk_n_pass, chk_n_fail);
    return chk_n_fail != 0;
}
