/* Shape function of the RANDOM op (plan_format.h ep_random_params). */
#include <math.h>
#include "shape_check.h"

#define EP_RANDOM_MAX_ELEMS (INT64_C(1) << 34)   /* the block index e / 4 is one 32-bit counter word */

int ep_shape_random(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 0, 1, 1, 1);
    if (rc != EP_OK) return rc;
    const ep_random_params *p = (const ep_random_params *)op->params;
    const ep_tensor *x = ep_op_in(op, 0), *y = op->out[0];
    if (p->kind > EP_RANDOM_BERNOULLI || p->dtype != EP_DTYPE_F32 || p->has_seed > 1) return EP_ERR_PLAN_PARAMS;
    if (p->kind == EP_RANDOM_BERNOULLI) {
        if (p->a != 0.0f || p->b != 0.0f) return EP_ERR_PLAN_PARAMS;
        if (!x) return EP_ERR_PLAN_OP;                 /* the probabilities */
        if (x->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    } else if (!isfinite(p->a) || !isfinite(p->b) || (p->kind == EP_RANDOM_UNIFORM && !isfinite(p->b - p->a))) {
        return EP_ERR_PLAN_PARAMS;
    }
    const ep_tensor *shape_of = x ? x : y;   /* no input: the declared output's shape */
    if ((rc = ep_chk_tensor(shape_of)) != EP_OK) return rc;
    if (ep_numel(shape_of) > EP_RANDOM_MAX_ELEMS) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], shape_of);
    out[0].dtype = EP_DTYPE_F32;
    *scratch = 0;
    return EP_OK;
}
