/* Shape function of CONV2D (see ep_conv2d_params in plan_format.h).
 *
 * Inputs: X[N,C,H,W], W[M,C/groups,KH,KW] required; B[M] and R[N,M,OH,OW] optional
 * (NULL or absent); S[M], the PReLU slopes, with act EP_CONV_ACT_PRELU only (1.14, BLOCKED_PW and BLOCKED_CONV). All f32. Output Y[N,M,OH,OW] f32 with
 *   OH = floor((H + pad_t + pad_b - ((KH-1)*dh + 1)) / sh) + 1   (likewise OW),
 * which must be >= 0 and fit int32 (0 gives an empty output).
 *
 * Error codes: arity or a missing required input -> EP_ERR_PLAN_OP; a dtype other than
 * f32 -> EP_ERR_PLAN_TENSOR; a parameter out of range (kernel, stride, dilation < 1 or
 * > EP_PARAM_LIMIT, pads < 0 or > EP_PARAM_LIMIT, groups < 1, act not an EP_ACT_*) ->
 * EP_ERR_PLAN_PARAMS; ranks, extents, groups not dividing C and M, kernel differing from
 * W's extents, or an output extent that is negative or too large -> EP_ERR_PLAN_SHAPE.
 * The reference kernel needs no scratch. Variants (EP_CONV2D_VARIANT_*, plan_format.h): PACKED and
 * WINOGRAD (and 1.15 WINOGRAD_1D) take pre-packed weights whose exact shape is checked against the declared output (M) and
 * the params; each variant's minimum scratch is computed here. PACKED's weights may be f16 or bf16 (1.7).
 * DW_C8 (groups == C == M) and DIRECT (groups 1) take variant 0's weights; POINTWISE (groups 1; 1x1, stride 1,
 * no pads in 1.10, any kernel in 1.11) takes W^T as GEMM-B strips, f32 or 16-bit. BLOCKED_DW, BLOCKED_PW and
 * BLOCKED_CONV (1.12) read X and R and write Y in layout C8 (BLOCKED_CONV's X may be PLAIN, or 1.14 NHWC), with W
 * packed as plan_format.h says, and no scratch; BLOCKED_PW's and BLOCKED_CONV's W may be 16-bit (1.14; BLOCKED_CONV's only
 * with at most EP_BLOCKED_W16_ROWS rows per input unit, else EP_ERR_PLAN_PARAMS); every other variant takes PLAIN
 * tensors (a wrong layout -> EP_ERR_PLAN_TENSOR). */
#include <stdint.h>
#include "shape_check.h"


/* ---- kernel variants (plan_format.h, EP_CONV2D_VARIANT_*) ---- */

#define EP_CONV_MAX_SCRATCH ((uint64_t)1 << 46)

static int conv_packed_rank(int variant) {
    return variant == EP_CONV2D_VARIANT_WINOGRAD || variant == EP_CONV2D_VARIANT_WINOGRAD_1D ? 4 : 3;
}
static int conv_is_packed(int variant) {
    return variant == EP_CONV2D_VARIANT_PACKED || variant == EP_CONV2D_VARIANT_WINOGRAD ||
           variant == EP_CONV2D_VARIANT_WINOGRAD_1D ||
           variant == EP_CONV2D_VARIANT_POINTWISE || variant == EP_CONV2D_VARIANT_BLOCKED_DW ||
           variant == EP_CONV2D_VARIANT_BLOCKED_PW || variant == EP_CONV2D_VARIANT_BLOCKED_CONV;
}
static int conv_blocked(int variant) {
    return variant == EP_CONV2D_VARIANT_BLOCKED_DW || variant == EP_CONV2D_VARIANT_BLOCKED_PW ||
           variant == EP_CONV2D_VARIANT_BLOCKED_CONV;
}

/* a * b for non-negative operands, or -1 when the product passes EP_CONV_MAX_SCRATCH */
static int64_t conv_mul(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > (int64_t)EP_CONV_MAX_SCRATCH / a) return -1;
    return a * b;
}

/* Checks the packed weight tensor of variants PACKED and WINOGRAD against the params and
 * the declared output (which gives M); WINOGRAD needs groups 1, PACKED groups dividing C and M. */
static int conv_packed_weights(const ep_op *op, const ep_conv2d_params *p, int64_t C, int64_t *M) {
    const ep_tensor *w = op->in[1], *y = op->out ? op->out[0] : NULL;
    if (!y) return EP_ERR_PLAN_OP;
    if (y->rank != 4) return EP_ERR_PLAN_SHAPE;
    const int64_t m = y->dims[1], g = p->groups;
    if (m < 1) return EP_ERR_PLAN_SHAPE;
    const int64_t panels = (m + EP_PACK_MR - 1) / EP_PACK_MR;
    if (op->variant == EP_CONV2D_VARIANT_BLOCKED_DW) {   /* groups == C == M: W as [C/8][KH*KW][8] */
        const int64_t taps = (int64_t)p->kernel[0] * p->kernel[1];
        if (g != C || m != C) return EP_ERR_PLAN_PARAMS;
        if (w->dims[0] != C / EP_LAYOUT_BLOCK || w->dims[1] != taps || w->dims[2] != EP_LAYOUT_BLOCK)
            return EP_ERR_PLAN_SHAPE;
    } else if (op->variant == EP_CONV2D_VARIANT_BLOCKED_PW) {   /* 1x1 s1 unpadded groups 1: W^T [C][M] as strips */
        if (g != 1 || p->kernel[0] != 1 || p->kernel[1] != 1 || p->stride[0] != 1 || p->stride[1] != 1 ||
            p->pads[0] || p->pads[1] || p->pads[2] || p->pads[3])
            return EP_ERR_PLAN_PARAMS;
        if (w->dims[0] != (m + EP_PACK_NR - 1) / EP_PACK_NR || w->dims[1] != C || w->dims[2] != EP_PACK_NR)
            return EP_ERR_PLAN_SHAPE;
    } else if (op->variant == EP_CONV2D_VARIANT_BLOCKED_CONV) {   /* groups 1: W^T [C*KH*KW][M] as strips */
        const int64_t k = conv_mul(conv_mul(C, p->kernel[0]), p->kernel[1]);
        if (g != 1) return EP_ERR_PLAN_PARAMS;
        if (k < 0 || w->dims[0] != (m + EP_PACK_NR - 1) / EP_PACK_NR || w->dims[1] != k || w->dims[2] != EP_PACK_NR)
            return EP_ERR_PLAN_SHAPE;
    } else if (op->variant == EP_CONV2D_VARIANT_POINTWISE) {   /* groups 1: W^T [C*KH*KW][M] as strips */
        if (g != 1) return EP_ERR_PLAN_PARAMS;
        const int64_t k = conv_mul(conv_mul(C, p->kernel[0]), p->kernel[1]);
        if (k < 0 || w->dims[0] != (m + EP_PACK_NR - 1) / EP_PACK_NR || w->dims[1] != k || w->dims[2] != EP_PACK_NR)
            return EP_ERR_PLAN_SHAPE;
    } else if (op->variant == EP_CONV2D_VARIANT_PACKED) {
        if (C % g != 0 || m % g != 0) return EP_ERR_PLAN_SHAPE;
        const int64_t k = conv_mul(conv_mul(C / g, p->kernel[0]), p->kernel[1]);
        const int64_t gp = conv_mul(g, (m / g + EP_PACK_MR - 1) / EP_PACK_MR);
        if (k < 1 || gp < 1 || w->dims[0] != gp || w->dims[1] != k || w->dims[2] != EP_PACK_MR)
            return EP_ERR_PLAN_SHAPE;
    } else if (op->variant == EP_CONV2D_VARIANT_WINOGRAD_1D) {   /* F(9 - r, r) along W: U as [8][panels][C][MR] */
        if (g != 1 || p->kernel[0] != 1 || p->kernel[1] < 3 || p->kernel[1] > 7 || p->stride[0] != 1 ||
            p->stride[1] != 1 || p->dilation[0] != 1 || p->pads[0] || p->pads[2])
            return EP_ERR_PLAN_PARAMS;
        if (C < 1 || w->dims[0] != 8 || w->dims[1] != panels || w->dims[2] != C || w->dims[3] != EP_PACK_MR)
            return EP_ERR_PLAN_SHAPE;
    } else {
        if (g != 1) return EP_ERR_PLAN_PARAMS;
        if (p->kernel[0] != 3 || p->kernel[1] != 3 || p->stride[0] != 1 || p->stride[1] != 1 ||
            p->dilation[0] != 1 || p->dilation[1] != 1)
            return EP_ERR_PLAN_PARAMS;
        if (C < 1 || w->dims[0] != 36 || w->dims[1] != panels || w->dims[2] != C || w->dims[3] != EP_PACK_MR)
            return EP_ERR_PLAN_SHAPE;
    }
    *M = m;
    return EP_OK;
}

/* Scratch bytes the op's variant needs at least (see plan_format.h). */
static int conv_variant_scratch(const ep_op *op, const ep_conv2d_params *p, const ep_tensor *x, int64_t M,
                                const int64_t o[2], uint64_t *scratch) {
    const int64_t C = x->dims[1];
    const int64_t empty = x->dims[0] == 0 || M == 0 || o[0] == 0 || o[1] == 0;
    int64_t s = 0;
    switch (op->variant) {
    case EP_VARIANT_DEFAULT: return EP_OK;
    case EP_CONV2D_VARIANT_PACKED:   /* conv_packed_weights checked that groups divide C */
        s = conv_mul(conv_mul(conv_mul(C / p->groups, p->kernel[0]), p->kernel[1]), EP_PACK_NR * 4);
        break;
    case EP_CONV2D_VARIANT_DEPTHWISE: {
        if (p->groups != C || M != C) return EP_ERR_PLAN_PARAMS;
        if (empty) return EP_OK;
        const int64_t sh = p->stride[0], sw = p->stride[1];
        const int64_t hp = (o[0] - 1) * sh + (int64_t)(p->kernel[0] - 1) * p->dilation[0] + 1;
        const int64_t pw = (o[1] + 15) / 16 * 16 + (int64_t)(p->kernel[1] - 1) * p->dilation[1] / sw;
        s = conv_mul(conv_mul(conv_mul(hp, sw), pw), 4);
        break;
    }
    case EP_CONV2D_VARIANT_DW_C8: {   /* one block: the padded input region as [Hp][Wp][8], then the taps [KH*KW][8] */
        if (p->groups != C || M != C) return EP_ERR_PLAN_PARAMS;
        if (empty) return EP_OK;
        const int64_t hp = (o[0] - 1) * p->stride[0] + (int64_t)(p->kernel[0] - 1) * p->dilation[0] + 1;
        const int64_t wp = (o[1] - 1) * p->stride[1] + (int64_t)(p->kernel[1] - 1) * p->dilation[1] + 1;
        const int64_t area = conv_mul(hp, wp);
        s = area < 0 ? -1 : conv_mul(area + (int64_t)p->kernel[0] * p->kernel[1], 8 * 4);
        break;
    }
    case EP_CONV2D_VARIANT_DIRECT: {   /* one band of EP_CONV_DIRECT_ROWS output rows: C padded, phase-split rows */
        if (p->groups != 1 || p->kernel[1] > 32) return EP_ERR_PLAN_PARAMS;
        if (empty) return EP_OK;
        const int64_t sw = p->stride[1], rows = o[0] < EP_CONV_DIRECT_ROWS ? o[0] : EP_CONV_DIRECT_ROWS;
        const int64_t hb = (rows - 1) * p->stride[0] + (int64_t)(p->kernel[0] - 1) * p->dilation[0] + 1;
        const int64_t pw = (o[1] + 15) / 16 * 16 + (int64_t)(p->kernel[1] - 1) * p->dilation[1] / sw;
        s = conv_mul(conv_mul(conv_mul(conv_mul(C, hb), sw), pw), 4);
        break;
    }
    case EP_CONV2D_VARIANT_POINTWISE: {   /* MR pixels: their im2col rows as one A panel, their rows of C^T */
        if (empty) return EP_OK;
        const int64_t k = conv_mul(conv_mul(C, p->kernel[0]), p->kernel[1]);
        s = k < 0 ? -1 : conv_mul(conv_mul(EP_PACK_MR, k + M), 4);
        break;
    }
    case EP_CONV2D_VARIANT_BLOCKED_DW:
    case EP_CONV2D_VARIANT_BLOCKED_PW:
    case EP_CONV2D_VARIANT_BLOCKED_CONV: return EP_OK;
    case EP_CONV2D_VARIANT_WINOGRAD:
        s = conv_mul(conv_mul(36 * EP_PACK_NR, C + (M + EP_PACK_MR - 1) / EP_PACK_MR * EP_PACK_MR), 4);
        break;
    case EP_CONV2D_VARIANT_WINOGRAD_1D:
        s = conv_mul(conv_mul(8 * EP_PACK_NR, C + (M + EP_PACK_MR - 1) / EP_PACK_MR * EP_PACK_MR), 4);
        break;
    default: return EP_ERR_PLAN_OP;
    }
    if (s < 0) return EP_ERR_PLAN_SHAPE;
    *scratch = (uint64_t)s;
    return EP_OK;
}

int ep_shape_conv2d(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (!op || !out || !scratch || !op->params || !op->in) return EP_ERR_PLAN_OP;
    if (op->n_in < 2 || op->n_in > 5 || op->n_out != 1) return EP_ERR_PLAN_OP;
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *x = op->in[0], *w = op->in[1];
    const ep_tensor *b = op->n_in > 2 ? op->in[2] : NULL;
    const ep_tensor *r = op->n_in > 3 ? op->in[3] : NULL;
    const ep_tensor *s = op->n_in > 4 ? op->in[4] : NULL;
    /* the PReLU epilogue (1.14): BLOCKED_PW and BLOCKED_CONV, with its slopes; input 4 with it only */
    const int prelu = p->act == EP_CONV_ACT_PRELU;
    if (prelu != (op->n_in > 4) || (prelu && !s)) return EP_ERR_PLAN_OP;
    if (prelu && op->variant != EP_CONV2D_VARIANT_BLOCKED_PW && op->variant != EP_CONV2D_VARIANT_BLOCKED_CONV)
        return EP_ERR_PLAN_PARAMS;
    int rc;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK) return rc;
    const int packed = conv_is_packed(op->variant);
    const int w_rank = packed ? conv_packed_rank(op->variant) : 4;
    const int w16_ok = op->variant == EP_CONV2D_VARIANT_PACKED || op->variant == EP_CONV2D_VARIANT_POINTWISE ||
                       op->variant == EP_CONV2D_VARIANT_BLOCKED_PW || op->variant == EP_CONV2D_VARIANT_BLOCKED_CONV;
    if ((rc = w16_ok ? ep_chk_weights(w, w_rank, w_rank) : ep_chk_f32(w, w_rank, w_rank)) != EP_OK) return rc;
    if (b && (rc = ep_chk_f32(b, 1, 1)) != EP_OK) return rc;
    if (r && (rc = ep_chk_f32(r, 4, 4)) != EP_OK) return rc;
    if (s && ((rc = ep_chk_f32(s, 1, 1)) != EP_OK || s->layout)) return rc != EP_OK ? rc : EP_ERR_PLAN_TENSOR;
    /* X, Y and R in C8 for the BLOCKED variants, PLAIN for the others; W and B always PLAIN (the plan checked
     * that a C8 tensor is a static [N,C,H,W] with C a multiple of 8) */
    const int lay = conv_blocked(op->variant) ? EP_LAYOUT_C8 : EP_LAYOUT_PLAIN;
    const int x_any = op->variant == EP_CONV2D_VARIANT_BLOCKED_CONV &&
                      (x->layout == EP_LAYOUT_PLAIN || x->layout == EP_LAYOUT_NHWC);   /* a stem */
    if (lay == EP_LAYOUT_C8 && !x_any && x->dims[1] % EP_LAYOUT_BLOCK) return EP_ERR_PLAN_SHAPE;   /* whole blocks */
    if ((x->layout != lay && !x_any) || w->layout || (b && b->layout) || (r && r->layout != lay) || !op->out ||
        op->out[0]->layout != lay)
        return EP_ERR_PLAN_TENSOR;

    if ((rc = ep_chk_window(p->kernel, p->stride, p->dilation, p->pads)) != EP_OK) return rc;
    if (op->variant == EP_CONV2D_VARIANT_BLOCKED_CONV && w->dtype != EP_DTYPE_F32 &&
        (int64_t)p->kernel[0] * p->kernel[1] *
                (x->layout == EP_LAYOUT_C8 ? EP_LAYOUT_BLOCK : x->layout == EP_LAYOUT_NHWC ? x->dims[1] : 1) >
            EP_BLOCKED_W16_ROWS)
        return EP_ERR_PLAN_PARAMS;   /* one unit's rows must fit the kernels' conversion buffer */
    if (p->groups < 1 || p->act < 0 || (p->act >= EP_ACT_MATH_FIRST && !prelu)) return EP_ERR_PLAN_PARAMS;

    const int64_t N = x->dims[0], C = x->dims[1], g = p->groups;
    int64_t M = w->dims[0];
    if (packed) {
        /* pre-packed weights: M comes from the declared output, the layout is checked exactly */
        if ((rc = conv_packed_weights(op, p, C, &M)) != EP_OK) return rc;
    } else {
        if (C % g != 0 || M % g != 0 || w->dims[1] != C / g) return EP_ERR_PLAN_SHAPE;
        if (w->dims[2] != p->kernel[0] || w->dims[3] != p->kernel[1]) return EP_ERR_PLAN_SHAPE;
    }
    if (b && b->dims[0] != M) return EP_ERR_PLAN_SHAPE;
    if (s && s->dims[0] != M) return EP_ERR_PLAN_SHAPE;

    int64_t o[2];
    if ((rc = ep_window_out(p->kernel, p->stride, p->dilation, p->pads, x->dims + 2, 0, o)) != EP_OK) return rc;
    if (r && (r->dims[0] != N || r->dims[1] != M || r->dims[2] != o[0] || r->dims[3] != o[1]))
        return EP_ERR_PLAN_SHAPE;

    ep_shape_nchw(&out[0], N, M, o[0], o[1]);
    *scratch = 0;
    return conv_variant_scratch(op, p, x, M, o, scratch);
}
