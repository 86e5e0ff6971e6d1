/* Shape function of CONV_TRANSPOSE2D (see ep_conv_transpose2d_params in plan_format.h).
 *
 * Inputs: X[N,C,H,W], W[C,M/groups,KH,KW] required; B[M] optional. All f32.
 * Output Y[N,M,OH,OW] f32 with M = W.dims[1] * groups and
 *   OH = (H-1)*sh - pad_t - pad_b + (KH-1)*dh + 1 + out_pad_h   (likewise OW),
 * which must be >= 0 and fit int32. As in ONNX, 0 <= output_padding < max(stride, dilation).
 *
 * Error codes follow conv2d.c: arity/missing input -> PLAN_OP, dtype -> PLAN_TENSOR,
 * parameter ranges -> PLAN_PARAMS, extents and consistency -> PLAN_SHAPE.
 * The reference kernel needs no scratch. */
#include <stdint.h>
#include "shape_check.h"

int ep_shape_conv_transpose2d(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 2 || op->n_in > 3 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_conv_transpose2d_params *p = (const ep_conv_transpose2d_params *)op->params;
    const ep_tensor *x = op->in[0], *w = op->in[1];
    const ep_tensor *b = op->n_in > 2 ? op->in[2] : NULL;
    int rc;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK) return rc;
    if ((rc = ep_chk_f32(w, 4, 4)) != EP_OK) return rc;
    if (b && (rc = ep_chk_f32(b, 1, 1)) != EP_OK) return rc;

    for (int i = 0; i < 2; i++) {
        if (!ep_param_in_range(p->kernel[i], 1) || !ep_param_in_range(p->stride[i], 1) ||
            !ep_param_in_range(p->dilation[i], 1))
            return EP_ERR_PLAN_PARAMS;
        const int32_t lim = p->stride[i] > p->dilation[i] ? p->stride[i] : p->dilation[i];
        if (p->output_padding[i] < 0 || p->output_padding[i] >= lim) return EP_ERR_PLAN_PARAMS;
    }
    for (int i = 0; i < 4; i++)
        if (!ep_param_in_range(p->pads[i], 0)) return EP_ERR_PLAN_PARAMS;
    if (p->groups < 1 || p->act < 0 || p->act >= EP_ACT_COUNT) return EP_ERR_PLAN_PARAMS;

    const int64_t N = x->dims[0], C = x->dims[1], g = p->groups;
    const int64_t M = (int64_t)w->dims[1] * g;
    if (C % g != 0 || w->dims[0] != C || M > INT32_MAX) return EP_ERR_PLAN_SHAPE;
    if (w->dims[2] != p->kernel[0] || w->dims[3] != p->kernel[1]) return EP_ERR_PLAN_SHAPE;
    if (b && b->dims[0] != M) return EP_ERR_PLAN_SHAPE;

    int64_t o[2];
    for (int i = 0; i < 2; i++) {
        const int64_t extent = (int64_t)(p->kernel[i] - 1) * p->dilation[i] + 1;
        o[i] = ((int64_t)x->dims[2 + i] - 1) * p->stride[i] - p->pads[i] - p->pads[i + 2] + extent +
               p->output_padding[i];
        if (o[i] < 0 || o[i] > INT32_MAX) return EP_ERR_PLAN_SHAPE;
    }

    for (int i = 0; i < EP_MAX_RANK; i++) out[0].dims[i] = 0;
    out[0].dims[0] = (int32_t)N;
    out[0].dims[1] = (int32_t)M;
    out[0].dims[2] = (int32_t)o[0];
    out[0].dims[3] = (int32_t)o[1];
    out[0].rank = 4;
    out[0].dtype = EP_DTYPE_F32;
    *scratch = 0;
    return EP_OK;
}
