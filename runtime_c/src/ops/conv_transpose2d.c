/* Shape function of CONV_TRANSPOSE2D (see ep_conv_transpose2d_params in plan_format.h).
 *
 * Inputs: X[N,C,H,W], W[C,M/groups,KH,KW] required; B[M] optional. All f32.
 * Output Y[N,M,OH,OW] f32 with M = W.dims[1] * groups and
 *   OH = (H-1)*sh - pad_t - pad_b + (KH-1)*dh + 1 + out_pad_h   (likewise OW),
 * which must be >= 0 and fit int32. As in ONNX, 0 <= output_padding < max(stride, dilation).
 *
 * Error codes follow conv2d.c: arity/missing input -> PLAN_OP, dtype -> PLAN_TENSOR,
 * parameter ranges -> PLAN_PARAMS, extents and consistency -> PLAN_SHAPE.
 * The reference kernel needs no scratch. Variant PACKED (EP_CONV_TRANSPOSE2D_VARIANT_PACKED, plan_format.h,
 * groups 1) takes the polyphase weight strips [ceil(M*sh*sw/NR), C*TH*TW, NR], checked exactly against the
 * params and the declared output (which gives M), and needs one input panel of scratch, K*MR*4 bytes with
 * K = C*TH*TW: independent of H, W and N, so a plan sized at its bound has enough at every smaller extent. */
#include <stdint.h>
#include "shape_check.h"

#define EP_CT_MAX ((int64_t)1 << 46)

/* a * b for non-negative operands, or -1 when the product passes EP_CT_MAX */
static int64_t ct_mul(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > EP_CT_MAX / a) return -1;
    return a * b;
}

/* Distinct tap shifts along an axis of variant PACKED: d >= s ? k : (k-1)*d/s + 1. */
static int64_t ct_taps(int64_t k, int64_t s, int64_t d) { return d >= s ? k : (k - 1) * d / s + 1; }

/* Variant PACKED: the weight strips against the params and the declared output; gives M and K. */
static int ct_packed_weights(const ep_op *op, const ep_conv_transpose2d_params *p, int64_t C, int64_t *M, int64_t *K) {
    const ep_tensor *w = op->in[1], *y = op->out ? op->out[0] : NULL;
    if (!y) return EP_ERR_PLAN_OP;
    if (y->rank != 4) return EP_ERR_PLAN_SHAPE;
    if (p->groups != 1) return EP_ERR_PLAN_PARAMS;
    const int64_t m = y->dims[1];
    if (m < 1) return EP_ERR_PLAN_SHAPE;
    const int64_t r = ct_mul(ct_mul(m, p->stride[0]), p->stride[1]);
    const int64_t k = ct_mul(ct_mul(C, ct_taps(p->kernel[0], p->stride[0], p->dilation[0])),
                             ct_taps(p->kernel[1], p->stride[1], p->dilation[1]));
    if (r < 0 || k < 0) return EP_ERR_PLAN_SHAPE;
    if (w->dims[0] != (r + EP_PACK_NR - 1) / EP_PACK_NR || w->dims[1] != k || w->dims[2] != EP_PACK_NR)
        return EP_ERR_PLAN_SHAPE;
    *M = m;
    *K = k;
    return EP_OK;
}

int ep_shape_conv_transpose2d(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 2 || op->n_in > 3 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_conv_transpose2d_params *p = (const ep_conv_transpose2d_params *)op->params;
    const ep_tensor *x = op->in[0], *w = op->in[1];
    const ep_tensor *b = op->n_in > 2 ? op->in[2] : NULL;
    int rc;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK) return rc;
    const int packed = op->variant == EP_CONV_TRANSPOSE2D_VARIANT_PACKED;
    if (op->variant != EP_VARIANT_DEFAULT && !packed) return EP_ERR_PLAN_OP;
    if ((rc = ep_chk_f32(w, packed ? 3 : 4, packed ? 3 : 4)) != EP_OK) return rc;
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
    if (p->groups < 1 || p->act < 0 || p->act >= EP_ACT_MATH_FIRST) return EP_ERR_PLAN_PARAMS;

    const int64_t N = x->dims[0], C = x->dims[1], g = p->groups;
    int64_t M, K = 0;
    if (packed) {
        if ((rc = ct_packed_weights(op, p, C, &M, &K)) != EP_OK) return rc;
    } else {
        M = (int64_t)w->dims[1] * g;
        if (C % g != 0 || w->dims[0] != C || M > INT32_MAX) return EP_ERR_PLAN_SHAPE;
        if (w->dims[2] != p->kernel[0] || w->dims[3] != p->kernel[1]) return EP_ERR_PLAN_SHAPE;
    }
    if (b && b->dims[0] != M) return EP_ERR_PLAN_SHAPE;

    int64_t o[2];
    for (int i = 0; i < 2; i++) {
        const int64_t extent = (int64_t)(p->kernel[i] - 1) * p->dilation[i] + 1;
        o[i] = ((int64_t)x->dims[2 + i] - 1) * p->stride[i] - p->pads[i] - p->pads[i + 2] + extent +
               p->output_padding[i];
        if (o[i] < 0 || o[i] > INT32_MAX) return EP_ERR_PLAN_SHAPE;
    }

    ep_shape_nchw(&out[0], N, M, o[0], o[1]);
    *scratch = packed ? (uint64_t)K * EP_PACK_MR * 4 : 0;
    return EP_OK;
}
