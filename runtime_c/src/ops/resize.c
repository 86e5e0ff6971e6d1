/* Shape function: RESIZE (nearest, linear, cubic; f32). Output extents come from the
 * declared output tensor; scales and enum fields are untrusted and checked here. */
#include <math.h>
#include "shape_check.h"

int ep_shape_resize(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (op->n_in != 1 || op->n_out != 1) return EP_ERR_PLAN_OP;
    int rc = ep_chk_tensor(op->in[0]);
    if (rc == EP_OK) rc = ep_chk_tensor(op->out[0]);
    if (rc != EP_OK) return rc;
    const ep_resize_params *p = (const ep_resize_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (!p) return EP_ERR_PLAN_PARAMS;
    if (p->mode < EP_RESIZE_NEAREST || p->mode > EP_RESIZE_CUBIC) return EP_ERR_PLAN_PARAMS;
    if (p->coord_mode < EP_COORD_HALF_PIXEL || p->coord_mode > EP_COORD_HALF_PIXEL_SYMMETRIC)
        return EP_ERR_PLAN_PARAMS;
    if (p->nearest_mode < EP_NEAREST_ROUND_PREFER_FLOOR || p->nearest_mode > EP_NEAREST_CEIL)
        return EP_ERR_PLAN_PARAMS;
    if (p->exclude_outside != 0 && p->exclude_outside != 1) return EP_ERR_PLAN_PARAMS;
    if (p->mode == EP_RESIZE_CUBIC && !isfinite(p->cubic_coeff_a)) return EP_ERR_PLAN_PARAMS;
    if (x->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (y->rank != x->rank) return EP_ERR_PLAN_SHAPE;
    int empty = 0, no_source = 0;
    for (int i = 0; i < x->rank; i++) {
        const float s = p->scales[i];
        if (!(s > 0.0f) || !isfinite(s)) return EP_ERR_PLAN_PARAMS; /* also rejects NaN */
        empty |= y->dims[i] == 0;
        no_source |= x->dims[i] == 0;
    }
    /* every output element samples the input: it must not be empty */
    if (no_source && !empty) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], y);
    out[0].dtype = x->dtype;
    *scratch = 0;
    return EP_OK;
}
