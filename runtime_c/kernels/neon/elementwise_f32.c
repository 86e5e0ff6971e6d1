/* NEON UNARY and BINARY f32 (variant 0).
 *
 * BINARY uses the reference's loop nest (broadcast strides, collapsed dims, odometer over the outer
 * dims) so same-shape, scalar and per-channel operands all end in one inner row whose strides are
 * 1 or 0; the row and its fused activation run 4 lanes at a time. Every lane computes exactly the
 * reference's expression (add/sub/mul/div are IEEE in both; MAX/MIN/PRELU use the same comparisons),
 * so results equal the reference; POW, MOD, FMOD and strided rows use the reference's scalar code,
 * integer dtypes the reference ep_ref_binary_int (binary_rows.h). UNARY ROUND/FLOOR/CEIL are
 * FRINTN/FRINTM/FRINTP (neon_act.h).
 * Y may alias A or B exactly (each vector is stored after it is read). */
#include <arm_neon.h>
#include <math.h>
#include "ep_ops.h"
#include "binary_rows.h"
#include "neon.h"
#include "neon_act.h"
#include "neon_math.h"

/* y[i] = act(x[i]) over n contiguous floats (y may equal x), for neon_act_vector's kinds (neon_act.h, equal
 * to the reference) and SIGMOID, SILU, TANH, GELU and ERF (neon_math.h, within 2e-6 of it). The exact kinds:
 * 16 lanes per step, the tail through the reference's scalar code (equal values). The transcendental ones:
 * 4 lanes, the tail as a partial vector, so every element takes the same formula. The conv / GEMM epilogues
 * keep neon_act4's kinds and the reference for the rest, so a build without element-wise ops does not
 * carry these loops. */
static __attribute__((noinline)) void act_map(int act, float *y, const float *x, int64_t n, float al, float be) {
    int64_t i = 0;
    if (neon_math_kind(act)) {
        for (; i + 4 <= n; i += 4) vst1q_f32(y + i, neon_math4(act, vld1q_f32(x + i)));
        if (i < n) neon_st_part(y + i, neon_math4(act, neon_ld_part(x + i, (int)(n - i), 0.0f)), (int)(n - i));
        return;
    }
    for (; i + 16 <= n; i += 16) {
        float32x4x4_t v = vld1q_f32_x4(x + i);
        v.val[0] = neon_act4(act, al, be, v.val[0]);
        v.val[1] = neon_act4(act, al, be, v.val[1]);
        v.val[2] = neon_act4(act, al, be, v.val[2]);
        v.val[3] = neon_act4(act, al, be, v.val[3]);
        vst1q_f32_x4(y + i, v);
    }
    for (; i + 4 <= n; i += 4) vst1q_f32(y + i, neon_act4(act, al, be, vld1q_f32(x + i)));
    for (; i < n; i++) y[i] = ep_act_f32(act, x[i], al, be);
}

/* In place: the fused activation of a binary row (still in L1), one out-of-line pass for the seven row
 * functions. */
static void act_row(int act, float *y, int64_t n, float al, float be) {
    if (act == EP_ACT_NONE) return;
    if (neon_act_vector(act) || neon_math_kind(act))
        act_map(act, y, y, n, al, be);
    else
        ep_act_apply_f32(act, y, n, al, be);
}

int ep_neon_unary_f32(const ep_op *op) {
    const ep_unary_params *p = (const ep_unary_params *)op->params;
    const int64_t n = ep_numel(op->in[0]);
    if (n == 0) return EP_OK;
    if (!neon_act_vector(p->kind) && !neon_math_kind(p->kind)) return ep_ref_unary_f32(op);
    act_map(p->kind, (float *)op->out[0]->data, (const float *)op->in[0]->data, n, p->alpha, p->beta);
    return EP_OK;
}

NEON_INLINE float32x4_t bin_op4(int kind, float32x4_t a, float32x4_t b) {
    switch (kind) {
    case EP_BIN_ADD: return vaddq_f32(a, b);
    case EP_BIN_SUB: return vsubq_f32(a, b);
    case EP_BIN_MUL: return vmulq_f32(a, b);
    case EP_BIN_DIV: return vdivq_f32(a, b);
    case EP_BIN_PRELU: return vbslq_f32(vcltq_f32(a, vdupq_n_f32(0.0f)), vmulq_f32(b, a), a);
    case EP_BIN_MAX: {   /* (a > b || a != a) ? a : b */
        const uint32x4_t m = vorrq_u32(vcgtq_f32(a, b), vmvnq_u32(vceqq_f32(a, a)));
        return vbslq_f32(m, a, b);
    }
    case EP_BIN_MIN: {
        const uint32x4_t m = vorrq_u32(vcltq_f32(a, b), vmvnq_u32(vceqq_f32(a, a)));
        return vbslq_f32(m, a, b);
    }
    default: return a;
    }
}


/* One row: y[i] = a[i*sa] op b[i*sb], sa and sb in {0, 1} (the caller checks), then act. K is a
 * compile-time constant in each instantiation, so bin_op4 folds to one instruction or three. */
#define BIN_ROW(K)                                                                            \
    static void bin_row_##K(float *y, const float *a, int64_t sa, const float *b, int64_t sb, int64_t n, \
                            int act, float al, float be) {                                    \
        const float32x4_t a0 = vdupq_n_f32(a[0]), b0 = vdupq_n_f32(b[0]);                     \
        int64_t i = 0;                                                                        \
        for (; i + 8 <= n; i += 8) {                                                          \
            const float32x4_t x0 = bin_op4(K, sa ? vld1q_f32(a + i) : a0, sb ? vld1q_f32(b + i) : b0);       \
            const float32x4_t x1 = bin_op4(K, sa ? vld1q_f32(a + i + 4) : a0, sb ? vld1q_f32(b + i + 4) : b0); \
            vst1q_f32(y + i, x0);                                                             \
            vst1q_f32(y + i + 4, x1);                                                         \
        }                                                                                     \
        for (; i + 4 <= n; i += 4)                                                            \
            vst1q_f32(y + i, bin_op4(K, sa ? vld1q_f32(a + i) : a0, sb ? vld1q_f32(b + i) : b0));     \
        for (; i < n; i++) y[i] = ru_bin_f32(K, a[i * sa], b[i * sb]);                            \
        if (act != EP_ACT_NONE) act_row(act, y, n, al, be);                                   \
    }
EP_BIN_ROWS(BIN_ROW, neon_bin_row)


int ep_neon_binary_f32(const ep_op *op) { return ep_binary_rows(op, neon_bin_row); }
