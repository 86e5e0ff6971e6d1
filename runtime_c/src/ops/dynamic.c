/* Shape functions of the data-dependent ops (plan 1.1): RANGE, NONZERO. Their output's variable dim
 * is set by the kernel; the shape function checks the inputs and returns the declared capacity. */
#include "speech_common.h"

static int reserved_zero(const ep_op *op) {
    const ep_where_params *p = (const ep_where_params *)op->params;
    return p->reserved == 0 && p->reserved2 == 0;
}

int ep_shape_range(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 3, 3, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 3);
    if (rc != EP_OK) return rc;
    if (!reserved_zero(op)) return EP_ERR_PLAN_PARAMS;
    const uint8_t dt = op->in[0]->dtype;
    if (dt != EP_DTYPE_F32 && dt != EP_DTYPE_I32 && dt != EP_DTYPE_I64) return EP_ERR_PLAN_TENSOR;
    for (int k = 0; k < 3; k++)
        if (op->in[k]->dtype != dt || ep_numel(op->in[k]) != 1) return EP_ERR_PLAN_SHAPE;
    const ep_tensor *y = op->out[0];
    if (y->rank != 1) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], y);
    out[0].dtype = dt;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_nonzero(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    if (!reserved_zero(op)) return EP_ERR_PLAN_PARAMS;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    switch (x->dtype) {
    case EP_DTYPE_F32: case EP_DTYPE_I8: case EP_DTYPE_U8: case EP_DTYPE_I16: case EP_DTYPE_I32:
    case EP_DTYPE_I64: case EP_DTYPE_BOOL: case EP_DTYPE_U16: case EP_DTYPE_U32: case EP_DTYPE_U64: break;
    default: return EP_ERR_PLAN_TENSOR;
    }
    if (x->rank < 1 || y->rank != 2 || y->dims[0] != x->rank) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], y);
    out[0].dtype = EP_DTYPE_I64;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_slice_dyn(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 3, 3, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 3);
    if (rc != EP_OK) return rc;
    const ep_slice_dyn_params *p = (const ep_slice_dyn_params *)op->params;
    const ep_tensor *x = op->in[0], *st = op->in[1], *en = op->in[2], *y = op->out[0];
    if (st->dtype != EP_DTYPE_I32 && st->dtype != EP_DTYPE_I64) return EP_ERR_PLAN_TENSOR;
    if (en->dtype != st->dtype) return EP_ERR_PLAN_TENSOR;
    const int64_t n = ep_numel(st);
    if (st->rank != 1 || en->rank != 1 || ep_numel(en) != n || n > x->rank || y->rank != x->rank)
        return EP_ERR_PLAN_SHAPE;
    unsigned seen = 0;
    ep_shape_from_tensor(&out[0], x);
    for (int k = 0; k < EP_MAX_RANK; k++) {
        if (k >= n) {
            if (p->axes[k] != -1 || p->steps[k] != 0) return EP_ERR_PLAN_PARAMS;
            continue;
        }
        const int32_t a = p->axes[k];
        if (a < 0 || a >= x->rank || (seen >> a) & 1u || p->steps[k] == 0 || p->steps[k] == INT32_MIN)
            return EP_ERR_PLAN_PARAMS;
        seen |= 1u << a;
        out[0].dims[a] = y->dims[a];   /* data-dependent: the declared capacity */
        if (y->dims[a] > x->dims[a]) return EP_ERR_PLAN_SHAPE;
    }
    *scratch = 0;
    return EP_OK;
}

int ep_shape_shape(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_shape_params *p = (const ep_shape_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (y->dtype != EP_DTYPE_I32 && y->dtype != EP_DTYPE_I64) return EP_ERR_PLAN_TENSOR;
    if (y->rank != 1 || y->dims[0] > EP_MAX_RANK) return EP_ERR_PLAN_SHAPE;
    for (int k = 0; k < EP_MAX_RANK; k++) {
        const int used = k < y->dims[0];
        if (p->dims[k] < -1 || p->dims[k] >= (used ? x->rank : 0) || (!used && p->values[k]))
            return EP_ERR_PLAN_PARAMS;
    }
    ep_shape_from_tensor(&out[0], y);
    *scratch = 0;
    return EP_OK;
}

/* RESHAPE_DYN (1.8): Y is a view of X (open checks they start at the same byte); the kernel sets Y's
 * extents from S. Here: the operands, and Y at its capacity. */
int ep_shape_reshape_dyn(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_reshape_dyn_params *p = (const ep_reshape_dyn_params *)op->params;
    const ep_tensor *x = op->in[0], *s = op->in[1], *y = op->out[0];
    if ((p->allowzero != 0 && p->allowzero != 1) || p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    if (s->dtype != EP_DTYPE_I64) return EP_ERR_PLAN_TENSOR;
    if (y->dtype != x->dtype) return EP_ERR_PLAN_TENSOR;
    if (s->rank != 1 || s->dims[0] != y->rank || y->rank < 1) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], y);
    *scratch = 0;
    return EP_OK;
}
