/* Shape functions of the control ops (IF, ELSE): their operands only; session.c checks that the skips
 * describe properly nested branches before anything runs. */
#include "shape_check.h"

int ep_shape_if(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    (void)out;
    int rc = ep_chk_arity(op, 1, 1, 0, 0);
    if (rc != EP_OK) return rc;
    const ep_tensor *c = op->in[0];
    if (!c || c->dtype != EP_DTYPE_BOOL || ep_numel(c) != 1) return EP_ERR_PLAN_TENSOR;
    const ep_branch_params *p = (const ep_branch_params *)op->params;
    if (p->skip < 1 || p->fail > 1 || (p->fail && p->skip != 1)) return EP_ERR_PLAN_PARAMS;
    *scratch = 0;
    return EP_OK;
}

int ep_shape_else(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    (void)out;
    int rc = ep_chk_arity(op, 0, 0, 0, 0);
    if (rc != EP_OK) return rc;
    const ep_branch_params *p = (const ep_branch_params *)op->params;
    if (p->fail) return EP_ERR_PLAN_PARAMS;
    *scratch = 0;
    return EP_OK;
}
