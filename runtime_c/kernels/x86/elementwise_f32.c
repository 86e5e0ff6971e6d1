/* AVX2+FMA UNARY and BINARY f32 (variant 0); mirrors kernels/neon/elementwise_f32.c.
 *
 * UNARY runs the activation 8 lanes at a time (x86_actx8, ROUND/FLOOR/CEIL as vroundps), a masked
 * vector for the tail; kinds without a vector form (EXP, LOG, ELU, ...) go to the reference kernel.
 * BINARY uses the reference's loop nest (broadcast strides, collapsed dims, odometer over the outer
 * dims) so same-shape, scalar and per-channel operands all end in one inner row whose strides are
 * 0 or 1; the row runs 16 lanes at a time and its fused activation is one pass over the finished
 * row (still in L1). Every lane computes the reference's expression (add/sub/mul/div are IEEE in
 * both; MAX/MIN/PRELU use the same comparisons), so the op itself equals the reference; POW, MOD, FMOD
 * (and any row with another stride) run the whole op through ep_ref_binary_f32, integer dtypes through
 * ep_ref_binary_int (binary_rows.h).
 * Accuracy: everything equals the reference bit for bit except SIGMOID, SILU and TANH (x86_act.h:
 * relative error <= 2e-6, absolute floor 1e-37).
 * Y may alias X (A or B) exactly: each vector is stored only after it is read. */
#include <immintrin.h>
#include <math.h>
#include "ep_ops.h"
#include "binary_rows.h"
#include "x86.h"
#include "x86_act.h"

/* y[i] = act(x[i]) over n contiguous floats, 8 lanes at a time and a masked vector for the tail;
 * y may equal x. One out-of-line copy serves the unary op and every binary row's fused activation
 * (the per-kind loops it unswitches into are the bulk of this file's size). */
static __attribute__((noinline)) void act_map(int act, float *y, const float *x, int64_t n, float al, float be) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, x86_actx8(act, al, be, _mm256_loadu_ps(x + i)));
    if (i < n) {
        const __m256i m = x86_mask8((int)(n - i));
        _mm256_maskstore_ps(y + i, m, x86_actx8(act, al, be, _mm256_maskload_ps(x + i, m)));
    }
}

int ep_x86_unary_f32(const ep_op *op) {
    const ep_unary_params *p = (const ep_unary_params *)op->params;
    const int64_t n = ep_numel(op->in[0]);
    if (n == 0) return EP_OK;
    if (!x86_actx_vector(p->kind)) return ep_ref_unary_f32(op);
    act_map(p->kind, (float *)op->out[0]->data, (const float *)op->in[0]->data, n, p->alpha, p->beta);
    return EP_OK;
}

static inline __attribute__((always_inline)) __m256 bin_op8(int kind, __m256 a, __m256 b) {
    switch (kind) {
    case EP_BIN_ADD: return _mm256_add_ps(a, b);
    case EP_BIN_SUB: return _mm256_sub_ps(a, b);
    case EP_BIN_MUL: return _mm256_mul_ps(a, b);
    case EP_BIN_DIV: return _mm256_div_ps(a, b);
    case EP_BIN_PRELU:
        return _mm256_blendv_ps(a, _mm256_mul_ps(b, a), _mm256_cmp_ps(a, _mm256_setzero_ps(), _CMP_LT_OQ));
    case EP_BIN_MAX: {   /* (a > b || a != a) ? a : b */
        const __m256 m = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_GT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
        return _mm256_blendv_ps(b, a, m);
    }
    case EP_BIN_MIN: {
        const __m256 m = _mm256_or_ps(_mm256_cmp_ps(a, b, _CMP_LT_OQ), _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
        return _mm256_blendv_ps(b, a, m);
    }
    default: return a;
    }
}

/* The fused activation over a finished row (still in L1): one out-of-line pass, so the seven row
 * functions do not each carry every activation. */
static void act_row(int act, float *y, int64_t n, float al, float be) {
    if (x86_actx_vector(act))
        act_map(act, y, y, n, al, be);
    else
        ep_act_apply_f32(act, y, n, al, be);
}

/* One row: y[i] = a[i*sa] op b[i*sb], sa and sb in {0, 1} (the caller checks), then act. */
#define LD(p, s, i, bc) ((s) ? _mm256_loadu_ps((p) + (i)) : (bc))
#define BIN_ROW(K)                                                                                      \
    static void bin_row_##K(float *y, const float *a, int64_t sa, const float *b, int64_t sb, int64_t n, \
                            int act, float al, float be) {                                              \
        const __m256 a0 = _mm256_set1_ps(a[0]), b0 = _mm256_set1_ps(b[0]);                              \
        int64_t i = 0;                                                                                  \
        for (; i + 16 <= n; i += 16) {                                                                  \
            const __m256 x0 = bin_op8(K, LD(a, sa, i, a0), LD(b, sb, i, b0));                           \
            const __m256 x1 = bin_op8(K, LD(a, sa, i + 8, a0), LD(b, sb, i + 8, b0));                   \
            _mm256_storeu_ps(y + i, x0);                                                                \
            _mm256_storeu_ps(y + i + 8, x1);                                                            \
        }                                                                                               \
        for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, bin_op8(K, LD(a, sa, i, a0), LD(b, sb, i, b0))); \
        for (; i < n; i++) y[i] = ru_bin_f32(K, a[i * sa], b[i * sb]);                                      \
        if (act != EP_ACT_NONE) act_row(act, y, n, al, be);                                             \
    }
EP_BIN_ROWS(BIN_ROW, x86_bin_row)
#undef LD


int ep_x86_binary_f32(const ep_op *op) { return ep_binary_rows(op, x86_bin_row); }
