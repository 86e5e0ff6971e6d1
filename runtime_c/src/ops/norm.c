/* Shape functions of the normalisation ops. */
#include <math.h>
#include "shape_check.h"

int ep_shape_lrn(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = ep_chk_arity(op, 1, 1, 1, 1);
    const ep_tensor *x = op->in[0];
    if (rc == EP_OK) rc = ep_chk_f32(x, 3, EP_MAX_RANK);
    if (rc == EP_OK) rc = ep_chk_tensor(x);
    if (rc != EP_OK) return rc;
    const ep_lrn_params *p = (const ep_lrn_params *)op->params;
    if (!ep_param_in_range(p->size, 1) || !isfinite(p->alpha) || !isfinite(p->beta) || !isfinite(p->bias))
        return EP_ERR_PLAN_PARAMS;
    ep_shape_from_tensor(&out[0], x);
    *scratch = 0;
    return EP_OK;
}
