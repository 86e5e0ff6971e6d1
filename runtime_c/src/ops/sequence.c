/* Shape functions: LAYERNORM, ARGMAX, TOPK, CUMSUM, TRILU.
 * Params and shapes are untrusted plan bytes: every field is checked here so the kernels can
 * trust them. */
#include "speech_common.h"

int ep_shape_layernorm(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 3, 1, 3);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_layernorm_params *p = (const ep_layernorm_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (x->rank < 1 || p->axis < 0 || p->axis >= x->rank) return EP_ERR_PLAN_PARAMS;
    if (!(p->epsilon >= 0.0f) || p->epsilon > 1e30f) return EP_ERR_PLAN_PARAMS; /* rejects NaN */
    int64_t inner = 1;
    for (int i = p->axis; i < x->rank; i++) inner *= x->dims[i];
    for (int k = 0; k < op->n_in; k++) {
        const ep_tensor *t = op->in[k];
        if (!t) continue;
        if (t->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
        if (k > 0 && ep_numel(t) != inner) return EP_ERR_PLAN_SHAPE;
    }
    ep_shape_from_tensor(&out[0], x);
    for (int k = 1; k < op->n_out; k++) {
        ep_shape_from_tensor(&out[k], x);
        for (int i = p->axis; i < x->rank; i++) out[k].dims[i] = 1;
    }
    *scratch = 0;
    return EP_OK;
}

int ep_shape_argmax(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_argmax_params *p = (const ep_argmax_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (p->axis < 0 || p->axis >= x->rank || !sp_is_01(p->keepdims) || !sp_is_01(p->select_last_index) ||
        !sp_is_01(p->min))
        return EP_ERR_PLAN_PARAMS;
    if (!sp_is_ordered_dtype(x->dtype)) return EP_ERR_PLAN_TENSOR;
    if (x->dims[p->axis] == 0) return EP_ERR_PLAN_SHAPE; /* no element to pick */
    int64_t dims[EP_MAX_RANK];
    int r = 0;
    for (int i = 0; i < x->rank; i++) {
        if (i != p->axis) dims[r++] = x->dims[i];
        else if (p->keepdims) dims[r++] = 1;
    }
    *scratch = 0;
    return sp_set_shape(&out[0], r, dims, EP_DTYPE_I64);
}

int ep_shape_topk(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 2, 2);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_topk_params *p = (const ep_topk_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (p->axis < 0 || p->axis >= x->rank || !sp_is_01(p->largest) || !sp_is_01(p->sorted))
        return EP_ERR_PLAN_PARAMS;
    if (p->k < 0 || p->k > x->dims[p->axis]) return EP_ERR_PLAN_PARAMS;
    if (!sp_is_ordered_dtype(x->dtype)) return EP_ERR_PLAN_TENSOR;
    int64_t dims[EP_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i == p->axis ? p->k : x->dims[i];
    if ((rc = sp_set_shape(&out[0], x->rank, dims, x->dtype)) != EP_OK) return rc;
    if ((rc = sp_set_shape(&out[1], x->rank, dims, EP_DTYPE_I64)) != EP_OK) return rc;
    *scratch = (uint64_t)x->dims[p->axis] * 2u * sizeof(int32_t);
    return EP_OK;
}

int ep_shape_cumsum(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_cumsum_params *p = (const ep_cumsum_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (p->axis < 0 || p->axis >= x->rank || !sp_is_01(p->exclusive) || !sp_is_01(p->reverse) ||
        !sp_is_01(p->prod))
        return EP_ERR_PLAN_PARAMS;
    if (!sp_is_arith_dtype(x->dtype) && x->dtype != EP_DTYPE_U32 && x->dtype != EP_DTYPE_U64)
        return EP_ERR_PLAN_TENSOR;
    ep_shape_from_tensor(&out[0], x);
    *scratch = 0;
    return EP_OK;
}

int ep_shape_trilu(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_trilu_params *p = (const ep_trilu_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (x->rank < 2 || !sp_is_01(p->upper)) return EP_ERR_PLAN_PARAMS;
    ep_shape_from_tensor(&out[0], x);
    *scratch = 0;
    return EP_OK;
}
