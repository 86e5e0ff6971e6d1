/* Shape functions of MAXPOOL, AVGPOOL (ep_pool_params) and GLOBAL_AVGPOOL
 * (ep_global_pool_params); see plan_format.h.
 *
 * MAXPOOL / AVGPOOL: one input X[N,C,H,W] f32, one output; MAXPOOL variant INDICES has two,
 * Y and Indices, and variant DEFAULT one. The output is [N,C,OH,OW] f32 (the executor compares it
 * with the plan), Indices the same extents in I64, with, per spatial dim (ext = (k-1)*d + 1,
 * L = H + pad_b + pad_e):
 *   ceil_mode 0: OH = floor((L - ext) / s) + 1
 *   ceil_mode 1: OH = ceil((L - ext) / s) + 1, minus 1 when the last window would start
 *                at or past H + pad_b (inside the end padding) -- onnxruntime's and
 *                PyTorch's rule; ONNX shape inference omits that correction.
 * OH must be >= 0 (0 gives an empty output). Parameter ranges: kernel, stride, dilation in
 * [1, EP_PARAM_LIMIT], pads in [0, EP_PARAM_LIMIT], count_include_pad and ceil_mode 0 or 1.
 *
 * GLOBAL_AVGPOOL: X of rank >= 3, f32; Y has X's rank with dims [N, C, 1, ...]. Both
 * reserved params must be 0.
 *
 * Error codes: arity (n_out other than the variant's) or a missing tensor -> PLAN_OP, dtype ->
 * PLAN_TENSOR, parameter ranges -> PLAN_PARAMS, ranks and extents -> PLAN_SHAPE. No scratch. */
#include <stdint.h>
#include "shape_check.h"

/* The output extent of one spatial dim (see the header comment). */
static int64_t pool_extent(int64_t in, int32_t k, int32_t s, int32_t d, int32_t pb, int32_t pe,
                           int ceil_mode) {
    const int64_t span = in + pb + pe - ((int64_t)(k - 1) * d + 1);
    if (!ceil_mode) return ep_floordiv(span, s) + 1;
    int64_t o = -ep_floordiv(-span, s) + 1;
    if (o > 0 && (o - 1) * s >= in + pb) o--;
    return o;
}

static int pool_shape(const ep_op *op, ep_shape *out, uint64_t *scratch, int n_out) {
    if (!op || !out || !scratch || !op->params || !op->in || !op->out) return EP_ERR_PLAN_OP;
    if (op->n_in != 1 || op->n_out != n_out) return EP_ERR_PLAN_OP;
    const ep_pool_params *p = (const ep_pool_params *)op->params;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    int rc;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK) return rc;
    if ((rc = ep_chk_f32(y, 4, 4)) != EP_OK) return rc;
    const int c8 = op->variant == (op->opcode == EP_OP_MAXPOOL ? EP_MAXPOOL_VARIANT_C8 : EP_AVGPOOL_VARIANT_C8);
    if (x->layout != (c8 ? EP_LAYOUT_C8 : EP_LAYOUT_PLAIN) || y->layout != x->layout) return EP_ERR_PLAN_TENSOR;

    if ((rc = ep_chk_window(p->kernel, p->stride, p->dilation, p->pads)) != EP_OK) return rc;
    if ((p->count_include_pad != 0 && p->count_include_pad != 1) ||
        (p->ceil_mode != 0 && p->ceil_mode != 1))
        return EP_ERR_PLAN_PARAMS;

    (void)y;
    ep_shape_from_tensor(&out[0], x);   /* N, C; the spatial extents follow from the params */
    for (int i = 0; i < 2; i++) {
        const int64_t o = pool_extent(x->dims[2 + i], p->kernel[i], p->stride[i], p->dilation[i],
                                      p->pads[i], p->pads[i + 2], p->ceil_mode);
        if (o < 0 || o > INT32_MAX) return EP_ERR_PLAN_SHAPE;
        out[0].dims[2 + i] = (int32_t)o;
    }
    if (n_out == 2) {
        if (!op->out[1]) return EP_ERR_PLAN_OP;
        out[1] = out[0];
        out[1].dtype = EP_DTYPE_I64;
    }

    *scratch = 0;
    return EP_OK;
}

int ep_shape_maxpool(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op) return EP_ERR_PLAN_OP;
    return pool_shape(op, out, scratch, op->variant == EP_MAXPOOL_VARIANT_INDICES ? 2 : 1);
}

int ep_shape_avgpool(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    return pool_shape(op, out, scratch, 1);
}

int ep_shape_global_avgpool(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in != 1 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_global_pool_params *p = (const ep_global_pool_params *)op->params;
    const ep_tensor *x = op->in[0];
    int rc;
    if ((rc = ep_chk_f32(x, 3, EP_MAX_RANK)) != EP_OK) return rc;
    if (p->reserved != 0 || p->reserved2 != 0) return EP_ERR_PLAN_PARAMS;
    /* C8: X in C8 (a static [N,C,H,W], plan.c), Y plain; else both plain */
    if (!op->out || !op->out[0] || op->out[0]->layout != EP_LAYOUT_PLAIN ||
        x->layout != (op->variant == EP_GLOBAL_AVGPOOL_VARIANT_C8 ? EP_LAYOUT_C8 : EP_LAYOUT_PLAIN))
        return EP_ERR_PLAN_TENSOR;

    ep_shape_from_tensor(&out[0], x);
    for (int i = 2; i < x->rank; i++) out[0].dims[i] = 1;
    *scratch = 0;
    return EP_OK;
}
