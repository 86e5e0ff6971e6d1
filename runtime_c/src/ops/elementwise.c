/* Shape functions: UNARY (f32), BINARY (numpy broadcasting; f32 or integers), COPY.
 * Params and shapes are untrusted plan bytes: every field is checked here so the
 * kernels can trust them. */
#include <string.h>
#include "shape_check.h"

/* EP_OK when t is present and well formed: rank <= 8, dims >= 0, known dtype,
 * and an element count that cannot overflow int64 byte arithmetic. */
static int act_ok(int32_t act) { return act >= EP_ACT_NONE && act < EP_ACT_COUNT; }
/* BINARY: F32 (the fast path), or an integer dtype (kernels/ref/binary_int.c) */
static int bin_dtype_ok(uint8_t dt) {
    return dt == EP_DTYPE_F32 || dt == EP_DTYPE_I8 || dt == EP_DTYPE_U8 || dt == EP_DTYPE_I16 ||
           dt == EP_DTYPE_I32 || dt == EP_DTYPE_I64 || dt == EP_DTYPE_U16 || dt == EP_DTYPE_U32 ||
           dt == EP_DTYPE_U64;
}

int ep_shape_unary(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[0]);
    if (rc != EP_OK) return rc;
    const ep_unary_params *p = (const ep_unary_params *)op->params;
    if (!p || p->kind == EP_ACT_NONE || !act_ok(p->kind)) return EP_ERR_PLAN_PARAMS;
    if (op->in[0]->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (!op->out || !op->out[0] || op->out[0]->layout != op->in[0]->layout) return EP_ERR_PLAN_TENSOR;
    ep_shape_from_tensor(&out[0], op->in[0]);
    *scratch = 0;
    return EP_OK;
}

/* C8 operands (plan_format.h "Tensor layouts"): Y is C8 [N,C,H,W], and each input is either C8 with Y's dims,
 * or one value per (n, c) broadcast over the pixels: rank <= 4 with, aligned right to [n, c, h, w], h = w = 1,
 * c 1 or C and n 1 or N (PLAIN, or C8 when rank 4: [n, C, 1, 1] has the same bytes in both layouts). */
static int bin_c8_operand_ok(const ep_tensor *t, const ep_tensor *y) {
    if (t->layout == EP_LAYOUT_C8 && t->rank == 4 && !memcmp(t->dims, y->dims, sizeof(int32_t) * 4)) return 1;
    if (t->layout != EP_LAYOUT_PLAIN && !(t->layout == EP_LAYOUT_C8 && t->rank == 4 && t->dims[2] == 1 &&
                                          t->dims[3] == 1))
        return 0;
    if (t->rank > 4) return 0;
    int32_t d[4] = {1, 1, 1, 1};
    for (int i = 0; i < t->rank; i++) d[4 - t->rank + i] = t->dims[i];
    return d[2] == 1 && d[3] == 1 && (d[1] == 1 || d[1] == y->dims[1]) && (d[0] == 1 || d[0] == y->dims[0]);
}
static int bin_layouts_ok(const ep_tensor *a, const ep_tensor *b, const ep_tensor *y) {
    const int c8 = a->layout == EP_LAYOUT_C8 || b->layout == EP_LAYOUT_C8 || (y && y->layout == EP_LAYOUT_C8);
    if (!c8) return EP_OK;
    if (!y || y->layout != EP_LAYOUT_C8 || y->rank != 4 || y->dims[1] % EP_LAYOUT_BLOCK || a->dtype != EP_DTYPE_F32)
        return EP_ERR_PLAN_TENSOR;
    return bin_c8_operand_ok(a, y) && bin_c8_operand_ok(b, y) ? EP_OK : EP_ERR_PLAN_TENSOR;
}

int ep_shape_binary(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[0]);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[1]);
    if (rc != EP_OK) return rc;
    const ep_binary_params *p = (const ep_binary_params *)op->params;
    if (!p || p->kind < 0 || p->kind >= EP_BIN_COUNT || !act_ok(p->act) || p->act >= EP_ACT_MATH_FIRST)
        return EP_ERR_PLAN_PARAMS;   /* the math kinds are the unary op's only */
    const ep_tensor *a = op->in[0], *b = op->in[1];
    if (a->dtype != b->dtype || !bin_dtype_ok(a->dtype)) return EP_ERR_PLAN_TENSOR;
    if ((rc = bin_layouts_ok(a, b, op->out ? op->out[0] : NULL)) != EP_OK) return rc;
    if (a->dtype != EP_DTYPE_F32 && (p->act != EP_ACT_NONE || p->kind == EP_BIN_PRELU))
        return EP_ERR_PLAN_PARAMS;   /* integers: no PRELU, no fused activation */
    if (a->dtype == EP_DTYPE_F32 && p->kind >= EP_BIN_BITAND)
        return EP_ERR_PLAN_PARAMS;   /* the bitwise kinds are the integers' only */
    const int r = a->rank > b->rank ? a->rank : b->rank;
    ep_shape s = {{0}, (uint8_t)r, a->dtype};
    int64_t n = 1;
    for (int i = 0; i < r; i++) {
        const int ia = i - (r - a->rank), ib = i - (r - b->rank);
        const int32_t da = ia >= 0 ? a->dims[ia] : 1;
        const int32_t db = ib >= 0 ? b->dims[ib] : 1;
        if (da != db && da != 1 && db != 1) return EP_ERR_PLAN_SHAPE;
        s.dims[i] = da == 1 ? db : da;
        if (s.dims[i] > 0 && n > (INT64_C(1) << 56) / s.dims[i]) return EP_ERR_PLAN_SHAPE; /* [N,1]x[1,M] */
        n *= s.dims[i];
    }
    out[0] = s;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_copy(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[0]);
    if (rc == EP_OK) rc = ep_chk_tensor(op->out[0]);
    if (rc != EP_OK) return rc;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (y->dtype != x->dtype) return EP_ERR_PLAN_TENSOR;
    if (ep_numel(y) != ep_numel(x)) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], y);
    *scratch = 0;
    return EP_OK;
}
