/* Shape functions of the int8 ops (plan_format.h "int8", "Dynamic int8"): QUANTIZE, DEQUANTIZE, QCONV2D, QGEMM,
 * QUANTIZE_ROWS, DQGEMM.
 *
 * Error codes: arity or a missing input -> PLAN_OP; a dtype, or a bias / requantisation table that is not a
 * constant of the plan -> PLAN_TENSOR; a scale that is not finite and positive, a zero point or clamp bound
 * outside int8, reserved fields not 0, a window parameter out of range, a multiplier outside [0, 2^31), a
 * shift outside [1, 62], a bias beyond 2^30 or a reduction longer than 2^16 (either could overflow the int32
 * accumulator) -> PLAN_PARAMS; ranks and extents -> PLAN_SHAPE. Minimum scratch of the PACKED variants: one
 * packed panel of 8 patches (QCONV2D) or 8 rows of A (QGEMM); the kernels use whole multiples of it. */
#include <math.h>
#include <stdint.h>
#include "shape_check.h"

#define EP_QK_LIMIT 65536    /* K * 128 * 127 + 2^30 < 2^31 */

static int q_chk(const ep_tensor *t, int dtype, int rank) {
    if (!t) return EP_ERR_PLAN_OP;
    if (t->dtype != dtype) return EP_ERR_PLAN_TENSOR;
    return t->rank == rank ? EP_OK : EP_ERR_PLAN_SHAPE;
}

static int q_scale_ok(float s) { return isfinite(s) && s > 0.0f; }
static int q_i8(int32_t v) { return v >= -128 && v <= 127; }

static void q_same_shape(ep_shape *out, const ep_tensor *x, int dtype) {
    for (int i = 0; i < EP_MAX_RANK; i++) out->dims[i] = i < x->rank ? x->dims[i] : 0;
    out->rank = x->rank;
    out->dtype = (uint8_t)dtype;
}

int ep_shape_quantize(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 1 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_quant_params *p = (const ep_quant_params *)op->params;
    const ep_tensor *x = op->in[0];
    int rc;
    if ((rc = ep_chk_tensor(x)) != EP_OK) return rc;
    if (x->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (!q_scale_ok(p->scale) || p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    if (p->dtype == EP_DTYPE_I8 ? !q_i8(p->zero_point)
                                : p->dtype != EP_DTYPE_U8 || p->zero_point < 0 || p->zero_point > 255)
        return EP_ERR_PLAN_PARAMS;
    q_same_shape(out, x, p->dtype);
    *scratch = 0;
    return EP_OK;
}

int ep_shape_dequantize(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 1 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_quant_params *p = (const ep_quant_params *)op->params;
    const ep_tensor *x = op->in[0];
    int rc;
    if ((rc = ep_chk_tensor(x)) != EP_OK) return rc;
    if (x->dtype != EP_DTYPE_I8 && x->dtype != EP_DTYPE_U8) return EP_ERR_PLAN_TENSOR;
    if (!q_scale_ok(p->scale) || p->dtype != 0 || p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    if (x->dtype == EP_DTYPE_I8 ? !q_i8(p->zero_point) : p->zero_point < 0 || p->zero_point > 255)
        return EP_ERR_PLAN_PARAMS;
    q_same_shape(out, x, EP_DTYPE_F32);
    *scratch = 0;
    return EP_OK;
}

/* The bias B [C] and requantisation table Q [2, C]: constants whose every entry is in range. |B| <= 2^30, and
 * below 2^31 - K 2^14 (K = 2^16 with every product (-128)(-128) and B = 2^30 would reach 2^31). */
static int q_constants(const ep_tensor *b, const ep_tensor *q, int64_t C, int64_t K) {
    int rc;
    if ((rc = q_chk(b, EP_DTYPE_I32, 1)) != EP_OK || (rc = q_chk(q, EP_DTYPE_I32, 2)) != EP_OK) return rc;
    if (b->storage != EP_STORAGE_CONST || q->storage != EP_STORAGE_CONST || !b->data || !q->data)
        return EP_ERR_PLAN_TENSOR;
    if (b->dims[0] != C || q->dims[0] != 2 || q->dims[1] != C) return EP_ERR_PLAN_SHAPE;
    const int32_t *bv = (const int32_t *)b->data, *qv = (const int32_t *)q->data;
    const int64_t bmax = INT32_MAX - K * 16384 < (1 << 30) ? INT32_MAX - K * 16384 : (1 << 30);
    for (int64_t c = 0; c < C; c++)
        if (bv[c] < -bmax || bv[c] > bmax || qv[c] < 0 || qv[C + c] < 1 || qv[C + c] > 62)
            return EP_ERR_PLAN_PARAMS;
    return EP_OK;
}

static int q_clamp_ok(int32_t zero, int32_t lo, int32_t hi) { return q_i8(zero) && q_i8(lo) && q_i8(hi) && lo <= hi; }

static int64_t q_ceil(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* w holds `panels` packed int8 panels of reduction length K: [panels, ceil(K/4), 8, 4] */
static int q_panels_ok(const ep_tensor *w, int64_t panels, int64_t K) {
    return w->dims[0] == panels && w->dims[1] == q_ceil(K, EP_QPACK_K) && w->dims[2] == EP_QPACK_R &&
           w->dims[3] == EP_QPACK_K;
}

/* the PACKED variants' minimum scratch: one panel of 8 rows (patches or A rows) of reduction length K */
static uint64_t q_panel_bytes(int64_t K) { return (uint64_t)q_ceil(K, EP_QPACK_K) * EP_QPACK_R * EP_QPACK_K; }

int ep_shape_qconv2d(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 4 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_qconv2d_params *p = (const ep_qconv2d_params *)op->params;
    const ep_tensor *x = op->in[0], *w = op->in[1];
    const int packed = op->variant == EP_QCONV2D_VARIANT_PACKED, dw = op->variant == EP_QCONV2D_VARIANT_DEPTHWISE;
    if (op->variant != EP_VARIANT_DEFAULT && !packed && !dw) return EP_ERR_PLAN_OP;
    int rc;
    if ((rc = q_chk(x, EP_DTYPE_I8, 4)) != EP_OK || (rc = q_chk(w, EP_DTYPE_I8, 4)) != EP_OK) return rc;
    if ((rc = ep_chk_window(p->kernel, p->stride, p->dilation, p->pads)) != EP_OK) return rc;
    if (p->groups < 1 || !q_i8(p->x_zero) || !q_clamp_ok(p->y_zero, p->y_min, p->y_max) || p->reserved != 0)
        return EP_ERR_PLAN_PARAMS;
    const int64_t N = x->dims[0], C = x->dims[1], G = p->groups;
    if (C % G != 0) return EP_ERR_PLAN_SHAPE;
    const int64_t K = C / G * p->kernel[0] * p->kernel[1];   /* kernel <= 2^20, so no overflow */
    if (K < 1 || K > EP_QK_LIMIT) return EP_ERR_PLAN_PARAMS;
    int64_t M;
    if (packed) {   /* M from the declared output; the panels checked exactly */
        const ep_tensor *y = op->out ? op->out[0] : NULL;
        if (!y) return EP_ERR_PLAN_OP;
        if (y->rank != 4 || y->dims[1] < 1 || y->dims[1] % G != 0) return EP_ERR_PLAN_SHAPE;
        M = y->dims[1];
        if (!q_panels_ok(w, G * q_ceil(M / G, EP_QPACK_R), K)) return EP_ERR_PLAN_SHAPE;
    } else {
        M = w->dims[0];
        if (M % G != 0 || w->dims[1] != C / G || w->dims[2] != p->kernel[0] || w->dims[3] != p->kernel[1])
            return EP_ERR_PLAN_SHAPE;
        if (dw && (G != C || M != C)) return EP_ERR_PLAN_PARAMS;
    }
    if ((rc = q_constants(op->in[2], op->in[3], M, K)) != EP_OK) return rc;
    int64_t o[2];
    if ((rc = ep_window_out(p->kernel, p->stride, p->dilation, p->pads, x->dims + 2, 0, o)) != EP_OK) return rc;
    ep_shape_nchw(&out[0], N, M, o[0], o[1]);
    out[0].dtype = EP_DTYPE_I8;
    *scratch = packed ? q_panel_bytes(K) : 0;
    return EP_OK;
}

/* N of an int8 GEMM with A [M, K]: B's columns, or for PACKED weights the output's (B's panels checked
 * against it). K is checked against the exact-int32 bound. */
static int q_gemm_n(const ep_op *op, const ep_tensor *b, int64_t K, int packed, int64_t *n) {
    if (K < 1 || K > EP_QK_LIMIT) return EP_ERR_PLAN_PARAMS;
    if (!packed) {
        if (b->dims[0] != K) return EP_ERR_PLAN_SHAPE;
        *n = b->dims[1];
        return EP_OK;
    }
    const ep_tensor *y = op->out ? op->out[0] : NULL;
    if (!y) return EP_ERR_PLAN_OP;
    if (y->rank != 2 || y->dims[1] < 1) return EP_ERR_PLAN_SHAPE;
    *n = y->dims[1];
    return q_panels_ok(b, q_ceil(*n, EP_QPACK_R), K) ? EP_OK : EP_ERR_PLAN_SHAPE;
}

int ep_shape_qgemm(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 4 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_qgemm_params *p = (const ep_qgemm_params *)op->params;
    const ep_tensor *a = op->in[0], *b = op->in[1];
    const int packed = op->variant == EP_QGEMM_VARIANT_PACKED;
    if (op->variant != EP_VARIANT_DEFAULT && !packed) return EP_ERR_PLAN_OP;
    int rc;
    if ((rc = q_chk(a, EP_DTYPE_I8, 2)) != EP_OK || (rc = q_chk(b, EP_DTYPE_I8, packed ? 4 : 2)) != EP_OK) return rc;
    if (!q_clamp_ok(p->y_zero, p->y_min, p->y_max) || p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    const int64_t M = a->dims[0], K = a->dims[1];
    int64_t N;
    if ((rc = q_gemm_n(op, b, K, packed, &N)) != EP_OK) return rc;
    if ((rc = q_constants(op->in[2], op->in[3], N, K)) != EP_OK) return rc;
    for (int i = 0; i < EP_MAX_RANK; i++) out[0].dims[i] = 0;
    out[0].dims[0] = (int32_t)M;
    out[0].dims[1] = (int32_t)N;
    out[0].rank = 2;
    out[0].dtype = EP_DTYPE_I8;
    *scratch = packed ? q_panel_bytes(K) : 0;
    return EP_OK;
}

int ep_shape_qadd(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 2 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_qadd_params *p = (const ep_qadd_params *)op->params;
    const ep_tensor *a = op->in[0], *b = op->in[1];
    int rc;
    if ((rc = ep_chk_tensor(a)) != EP_OK || (rc = ep_chk_tensor(b)) != EP_OK) return rc;
    if (a->dtype != EP_DTYPE_I8 || b->dtype != EP_DTYPE_I8) return EP_ERR_PLAN_TENSOR;
    if (a->rank != b->rank) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < a->rank; i++)
        if (a->dims[i] != b->dims[i]) return EP_ERR_PLAN_SHAPE;
    if (!q_i8(p->a_zero) || !q_i8(p->b_zero) || !q_clamp_ok(p->y_zero, p->y_min, p->y_max) || p->reserved != 0 ||
        p->a_mult < 0 || p->b_mult < 0 || p->y_mult < 0 || p->a_shift < 31 || p->a_shift > 62 || p->b_shift < 31 ||
        p->b_shift > 62 || p->y_shift < 1 || p->y_shift > 62)
        return EP_ERR_PLAN_PARAMS;
    q_same_shape(out, a, EP_DTYPE_I8);
    *scratch = 0;
    return EP_OK;
}

int ep_shape_qlut(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 2 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    const ep_tensor *x = op->in[0], *t = op->in[1];
    int rc;
    if ((rc = ep_chk_tensor(x)) != EP_OK) return rc;
    if ((rc = q_chk(t, EP_DTYPE_I8, 1)) != EP_OK) return rc;
    if (x->dtype != EP_DTYPE_I8 || t->storage != EP_STORAGE_CONST || !t->data) return EP_ERR_PLAN_TENSOR;
    if (t->dims[0] != 256) return EP_ERR_PLAN_SHAPE;
    if (p->axis != 0 || p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    q_same_shape(out, x, EP_DTYPE_I8);
    *scratch = 0;
    return EP_OK;
}

int ep_shape_quantize_rows(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 1 || op->n_out != 2) return EP_ERR_PLAN_OP;
    const ep_axis_params *p = (const ep_axis_params *)op->params;
    int rc;
    if ((rc = ep_chk_f32(op->in[0], 2, 2)) != EP_OK) return rc;
    if (p->axis != 1 || p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    q_same_shape(&out[0], op->in[0], EP_DTYPE_I8);
    for (int i = 0; i < EP_MAX_RANK; i++) out[1].dims[i] = 0;
    out[1].dims[0] = op->in[0]->dims[0];
    out[1].rank = 1;
    out[1].dtype = EP_DTYPE_F32;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_dqgemm(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 4 || op->n_in > 6 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_gemm_params *p = (const ep_gemm_params *)op->params;
    const ep_tensor *a = op->in[0], *sa = op->in[1], *b = op->in[2], *sb = op->in[3];
    const ep_tensor *c = op->n_in > 4 ? op->in[4] : NULL, *r = op->n_in > 5 ? op->in[5] : NULL;
    const int packed = op->variant == EP_DQGEMM_VARIANT_PACKED;
    if (op->variant != EP_VARIANT_DEFAULT && !packed) return EP_ERR_PLAN_OP;
    int rc;
    if ((rc = q_chk(a, EP_DTYPE_I8, 2)) != EP_OK || (rc = q_chk(b, EP_DTYPE_I8, packed ? 4 : 2)) != EP_OK) return rc;
    if ((rc = ep_chk_f32(sa, 1, 1)) != EP_OK || (rc = ep_chk_f32(sb, 1, 1)) != EP_OK) return rc;
    if (c && (rc = ep_chk_f32(c, 1, 2)) != EP_OK) return rc;
    if (r && (rc = ep_chk_f32(r, 2, 2)) != EP_OK) return rc;
    if (p->act < 0 || p->act >= EP_ACT_MATH_FIRST || p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    const int64_t M = a->dims[0], K = a->dims[1];
    int64_t N;
    if ((rc = q_gemm_n(op, b, K, packed, &N)) != EP_OK) return rc;
    if (sa->dims[0] != M || sb->dims[0] != N) return EP_ERR_PLAN_SHAPE;
    if (c && !(c->rank == 1 ? c->dims[0] == N : (c->dims[0] == 1 || c->dims[0] == M) && c->dims[1] == N))
        return EP_ERR_PLAN_SHAPE;
    if (r && (r->dims[0] != M || r->dims[1] != N)) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < EP_MAX_RANK; i++) out[0].dims[i] = 0;
    out[0].dims[0] = (int32_t)M;
    out[0].dims[1] = (int32_t)N;
    out[0].rank = 2;
    out[0].dtype = EP_DTYPE_F32;
    *scratch = packed ? q_panel_bytes(K) : 0;
    return EP_OK;
}
