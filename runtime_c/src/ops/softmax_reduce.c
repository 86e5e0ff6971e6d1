/* Shape functions: SOFTMAX / LOGSOFTMAX (f32) and REDUCE (f32; I32 / I64 for SUM, MAX, MIN, PROD). */
#include "shape_check.h"

static int chk_single_f32(const ep_op *op) {
    if (op->n_in != 1 || op->n_out != 1) return EP_ERR_PLAN_OP;
    int rc = ep_chk_tensor(op->in[0]);
    if (rc != EP_OK) return rc;
    if (!op->params) return EP_ERR_PLAN_PARAMS;
    return EP_OK;
}

int ep_shape_softmax(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = chk_single_f32(op);
    if (rc != EP_OK) return rc;
    const ep_softmax_params *p = (const ep_softmax_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (p->axis < 0 || p->axis >= x->rank || (p->log != 0 && p->log != 1)) return EP_ERR_PLAN_PARAMS;
    if (x->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    ep_shape_from_tensor(&out[0], x);
    *scratch = 0;
    return EP_OK;
}

int ep_shape_reduce(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = chk_single_f32(op);
    if (rc != EP_OK) return rc;
    const ep_reduce_params *p = (const ep_reduce_params *)op->params;
    const ep_tensor *x = op->in[0];
    if (p->kind < EP_REDUCE_MEAN || p->kind > EP_REDUCE_L2) return EP_ERR_PLAN_PARAMS;
    if (p->keepdims != 0 && p->keepdims != 1) return EP_ERR_PLAN_PARAMS;
    if ((p->axes_mask >> x->rank) != 0) return EP_ERR_PLAN_PARAMS; /* rank <= 8: shift defined */
    if (x->dtype == EP_DTYPE_I32 || x->dtype == EP_DTYPE_I64) {   /* integers: SUM, MAX, MIN, PROD */
        if (p->kind != EP_REDUCE_SUM && p->kind != EP_REDUCE_MAX && p->kind != EP_REDUCE_MIN &&
            p->kind != EP_REDUCE_PROD)
            return EP_ERR_PLAN_PARAMS;
    } else if (x->dtype != EP_DTYPE_F32) {
        return EP_ERR_PLAN_TENSOR;
    }
    ep_shape s = {{0}, 0, x->dtype};
    for (int i = 0; i < x->rank; i++) {
        if ((p->axes_mask >> i) & 1u) {
            if (p->keepdims) s.dims[s.rank++] = 1;
        } else {
            s.dims[s.rank++] = x->dims[i];
        }
    }
    out[0] = s;
    *scratch = 0;
    return EP_OK;
}
