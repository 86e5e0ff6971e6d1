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

/* DELEGATE: the blob is a constant byte string; every other operand is present and static (checked at
 * open, src/partition.c); the outputs are the declared ones (the delegate and the CPU ops both write them). */
int ep_shape_delegate(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (op->n_in < 1 || op->n_out < 1 || op->n_out > EP_MAX_OP_OUTPUTS) return EP_ERR_PLAN_OP;
    const ep_tensor *blob = op->in[0];
    if (!blob || blob->dtype != EP_DTYPE_U8 || blob->storage != EP_STORAGE_CONST || blob->rank != 1 ||
        blob->dims[0] < 1)
        return EP_ERR_PLAN_TENSOR;
    for (uint16_t k = 1; k < op->n_in; k++)
        if (!op->in[k]) return EP_ERR_PLAN_OP;
    const ep_delegate_params *p = (const ep_delegate_params *)op->params;
    if (p->skip < 1 || p->kind == 0 || p->reserved) return EP_ERR_PLAN_PARAMS;
    for (uint16_t k = 0; k < op->n_out; k++) ep_shape_from_tensor(&out[k], op->out[k]);
    *scratch = 0;
    return EP_OK;
}
