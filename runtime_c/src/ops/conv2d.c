/* Shape function of CONV2D (see ep_conv2d_params in plan_format.h).
 *
 * Inputs: X[N,C,H,W], W[M,C/groups,KH,KW] required; B[M] and R[N,M,OH,OW] optional
 * (NULL or absent). All f32. Output Y[N,M,OH,OW] f32 with
 *   OH = floor((H + pad_t + pad_b - ((KH-1)*dh + 1)) / sh) + 1   (likewise OW),
 * which must be >= 0 and fit int32 (0 gives an empty output).
 *
 * Error codes: arity or a missing required input -> EP_ERR_PLAN_OP; a dtype other than
 * f32 -> EP_ERR_PLAN_TENSOR; a parameter out of range (kernel, stride, dilation < 1 or
 * > EP_CONV_LIMIT, pads < 0 or > EP_CONV_LIMIT, groups < 1, act not an EP_ACT_*) ->
 * EP_ERR_PLAN_PARAMS; ranks, extents, groups not dividing C and M, kernel differing from
 * W's extents, or an output extent that is negative or too large -> EP_ERR_PLAN_SHAPE.
 * The reference kernel needs no scratch. */
#include <stdint.h>
#include "ep_ops.h"

#define EP_CONV_LIMIT (1 << 20)

static int conv_f32_tensor(const ep_tensor *t, int rank) {
    if (!t) return EP_ERR_PLAN_OP;
    if (t->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (t->rank != rank) return EP_ERR_PLAN_SHAPE;
    return EP_OK;
}

static int conv_in_range(int32_t v, int32_t lo) { return v >= lo && v <= EP_CONV_LIMIT; }

static int64_t conv_floordiv(int64_t a, int64_t b) {
    int64_t q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

int ep_shape_conv2d(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 2 || op->n_in > 4 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *x = op->in[0], *w = op->in[1];
    const ep_tensor *b = op->n_in > 2 ? op->in[2] : NULL;
    const ep_tensor *r = op->n_in > 3 ? op->in[3] : NULL;
    int rc;
    if ((rc = conv_f32_tensor(x, 4)) != EP_OK) return rc;
    if ((rc = conv_f32_tensor(w, 4)) != EP_OK) return rc;
    if (b && (rc = conv_f32_tensor(b, 1)) != EP_OK) return rc;
    if (r && (rc = conv_f32_tensor(r, 4)) != EP_OK) return rc;

    for (int i = 0; i < 2; i++) {
        if (!conv_in_range(p->kernel[i], 1) || !conv_in_range(p->stride[i], 1) ||
            !conv_in_range(p->dilation[i], 1))
            return EP_ERR_PLAN_PARAMS;
    }
    for (int i = 0; i < 4; i++)
        if (!conv_in_range(p->pads[i], 0)) return EP_ERR_PLAN_PARAMS;
    if (p->groups < 1 || p->act < 0 || p->act >= EP_ACT_COUNT) return EP_ERR_PLAN_PARAMS;

    const int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], g = p->groups;
    if (C % g != 0 || M % g != 0 || w->dims[1] != C / g) return EP_ERR_PLAN_SHAPE;
    if (w->dims[2] != p->kernel[0] || w->dims[3] != p->kernel[1]) return EP_ERR_PLAN_SHAPE;
    if (b && b->dims[0] != M) return EP_ERR_PLAN_SHAPE;

    int64_t o[2];
    for (int i = 0; i < 2; i++) {
        const int64_t extent = (int64_t)(p->kernel[i] - 1) * p->dilation[i] + 1;
        const int64_t span = (int64_t)x->dims[2 + i] + p->pads[i] + p->pads[i + 2] - extent;
        o[i] = conv_floordiv(span, p->stride[i]) + 1;
        if (o[i] < 0 || o[i] > INT32_MAX) return EP_ERR_PLAN_SHAPE;
    }
    if (r && (r->dims[0] != N || r->dims[1] != M || r->dims[2] != o[0] || r->dims[3] != o[1]))
        return EP_ERR_PLAN_SHAPE;

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
