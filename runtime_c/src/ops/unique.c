/* Shape function of UNIQUE (ep_unique_params; see plan_format.h), plan 1.3. Params and shapes are untrusted
 * plan bytes: every field and operand is checked here, so the kernel (kernels/ref/unique_any.c) trusts them.
 *
 * X of rank 1..8 and a dtype of sp_is_basic_dtype; outputs Y (X's dtype and rank), Indices, InverseIndices
 * and Counts (I64, rank 1). Y's extent on axis is data-dependent: the shape function returns the declared
 * capacity there (the plan's bound) and X's extents elsewhere; Indices and Counts have that capacity,
 * InverseIndices X's extent on axis. Scratch: 2 * X.dims[axis] int64 (the kernel's permutation and merge
 * buffer).
 * Error codes: arity / a missing tensor -> PLAN_OP, params (axis outside [0, rank), sorted not 0 / 1) ->
 * PLAN_PARAMS, dtype -> PLAN_TENSOR, ranks and extents -> PLAN_SHAPE. */
#include <string.h>
#include "speech_common.h"

int ep_shape_unique(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 1, 1, 4, 4);
    if (rc == EP_OK) rc = sp_chk_io(op, 1);
    if (rc != EP_OK) return rc;
    const ep_unique_params *p = (const ep_unique_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (x->rank < 1) return EP_ERR_PLAN_SHAPE;
    if (p->axis < 0 || p->axis >= x->rank || !sp_is_01(p->sorted)) return EP_ERR_PLAN_PARAMS;
    if (!sp_is_basic_dtype(x->dtype)) return EP_ERR_PLAN_TENSOR;
    if (y->rank != x->rank) return EP_ERR_PLAN_SHAPE;
    const int32_t cap = y->dims[p->axis], dim = x->dims[p->axis];   /* >= 0 (sp_chk_io) */
    ep_shape_from_tensor(&out[0], x);
    out[0].dims[p->axis] = cap;   /* data-dependent: the declared capacity */
    for (int k = 1; k < 4; k++) {
        memset(&out[k], 0, sizeof out[k]);
        out[k].rank = 1;
        out[k].dtype = EP_DTYPE_I64;
        out[k].dims[0] = k == 2 ? dim : cap;
    }
    *scratch = 2u * (uint64_t)dim * sizeof(int64_t);
    return EP_OK;
}
