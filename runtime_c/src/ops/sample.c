/* Shape functions of the bilinear sampling ops: GRIDSAMPLE, ROIALIGN, DEFORMCONV (plan 1.3; the params
 * structs in plan_format.h state the operands). Params and shapes are untrusted plan bytes: every field and
 * operand is checked here, so the kernels (kernels/ref/<op>_f32.c) trust them; sampling positions, ROIs
 * and batch indices are run-time data the kernels handle. Error codes: arity or a missing required input
 * -> EP_ERR_PLAN_OP, a dtype -> EP_ERR_PLAN_TENSOR, a parameter out of range -> EP_ERR_PLAN_PARAMS, a
 * rank, an extent or an output too large -> EP_ERR_PLAN_SHAPE. */
#include <math.h>
#include "speech_common.h"

/* Scratch bytes are at most 2^46 (as conv2d's): a * b for non-negative operands, or -1 past that. */
#define SAMPLE_MAX_SCRATCH (INT64_C(1) << 46)
static int64_t sample_mul(int64_t a, int64_t b) {
    if (a < 0 || b < 0) return -1;
    if (a != 0 && b > SAMPLE_MAX_SCRATCH / a) return -1;
    return a * b;
}

int ep_shape_gridsample(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 2, 2, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 2);
    if (rc != EP_OK) return rc;
    const ep_gridsample_params *p = (const ep_gridsample_params *)op->params;
    const ep_tensor *x = op->in[0], *grid = op->in[1];
    if (p->mode < EP_GRIDSAMPLE_LINEAR || p->mode > EP_GRIDSAMPLE_CUBIC || p->padding_mode < EP_GRIDSAMPLE_ZEROS ||
        p->padding_mode > EP_GRIDSAMPLE_REFLECTION || !sp_is_01(p->align_corners) || p->reserved != 0)
        return EP_ERR_PLAN_PARAMS;
    if ((rc = ep_chk_f32(x, 4, 5)) != EP_OK || (rc = ep_chk_f32(grid, x->rank, x->rank)) != EP_OK) return rc;
    const int k = x->rank - 2;
    if (p->mode == EP_GRIDSAMPLE_CUBIC && k != 2) return EP_ERR_PLAN_PARAMS;
    if (grid->dims[0] != x->dims[0] || grid->dims[x->rank - 1] != k) return EP_ERR_PLAN_SHAPE;
    int64_t dims[EP_MAX_RANK] = {x->dims[0], x->dims[1]};
    for (int d = 0; d < k; d++) {
        if (x->dims[2 + d] < 1) return EP_ERR_PLAN_SHAPE;
        dims[2 + d] = grid->dims[1 + d];
    }
    *scratch = 0;
    return sp_set_shape(&out[0], x->rank, dims, EP_DTYPE_F32);
}

int ep_shape_roialign(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 3, 3, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 3);
    if (rc != EP_OK) return rc;
    const ep_roialign_params *p = (const ep_roialign_params *)op->params;
    const ep_tensor *x = op->in[0], *rois = op->in[1], *bi = op->in[2];
    if ((p->mode != EP_ROIALIGN_AVG && p->mode != EP_ROIALIGN_MAX) || !sp_is_01(p->half_pixel) ||
        !ep_param_in_range(p->output_height, 1) || !ep_param_in_range(p->output_width, 1) ||
        p->sampling_ratio < 0 || p->sampling_ratio > EP_ROIALIGN_MAX_GRID || !isfinite(p->spatial_scale))
        return EP_ERR_PLAN_PARAMS;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK || (rc = ep_chk_f32(rois, 2, 2)) != EP_OK) return rc;
    if (!sp_is_index_dtype(bi->dtype)) return EP_ERR_PLAN_TENSOR;
    const int64_t R = rois->dims[0];
    if (x->dims[2] < 1 || x->dims[3] < 1 || rois->dims[1] != 4 || bi->rank != 1 || bi->dims[0] != R)
        return EP_ERR_PLAN_SHAPE;
    const int64_t dims[EP_MAX_RANK] = {R, x->dims[1], p->output_height, p->output_width};
    *scratch = 0;
    return sp_set_shape(&out[0], 4, dims, EP_DTYPE_F32);
}

int ep_shape_deformconv(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = sp_chk_arity(op, 3, 5, 1, 1);
    if (rc == EP_OK) rc = sp_chk_io(op, 3);
    if (rc != EP_OK) return rc;
    const ep_deformconv_params *p = (const ep_deformconv_params *)op->params;
    const ep_tensor *x = op->in[0], *w = op->in[1], *off = op->in[2], *b = ep_op_in(op, 3), *mask = ep_op_in(op, 4);
    if ((rc = ep_chk_window(p->kernel, p->stride, p->dilation, p->pads)) != EP_OK) return rc;
    if (!ep_param_in_range(p->groups, 1) || !ep_param_in_range(p->offset_groups, 1)) return EP_ERR_PLAN_PARAMS;
    if ((rc = ep_chk_f32(x, 4, 4)) != EP_OK || (rc = ep_chk_f32(w, 4, 4)) != EP_OK ||
        (rc = ep_chk_f32(off, 4, 4)) != EP_OK || (b && (rc = ep_chk_f32(b, 1, 1)) != EP_OK) ||
        (mask && (rc = ep_chk_f32(mask, 4, 4)) != EP_OK))
        return rc;
    const int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], g = p->groups, og = p->offset_groups;
    const int64_t taps = (int64_t)p->kernel[0] * p->kernel[1];   /* <= 2^40 */
    if (C % g != 0 || M % g != 0 || C % og != 0 || w->dims[1] != C / g || w->dims[2] != p->kernel[0] ||
        w->dims[3] != p->kernel[1])
        return EP_ERR_PLAN_SHAPE;
    if (b && b->dims[0] != M) return EP_ERR_PLAN_SHAPE;
    int64_t o[2];
    for (int i = 0; i < 2; i++) {
        const int64_t extent = (int64_t)(p->kernel[i] - 1) * p->dilation[i] + 1;
        const int64_t span = (int64_t)x->dims[2 + i] + p->pads[i] + p->pads[i + 2] - extent;
        if (span < 0) return EP_ERR_PLAN_SHAPE;
        o[i] = span / p->stride[i] + 1;
    }
    if (off->dims[0] != N || off->dims[1] != og * taps * 2 || off->dims[2] != o[0] || off->dims[3] != o[1])
        return EP_ERR_PLAN_SHAPE;
    if (mask && (mask->dims[0] != N || mask->dims[1] != og * taps || mask->dims[2] != o[0] || mask->dims[3] != o[1]))
        return EP_ERR_PLAN_SHAPE;
    /* the columns of one group: [C/g * KH * KW, OH * OW] floats */
    const int64_t s = sample_mul(sample_mul(sample_mul(C / g, taps), sample_mul(o[0], o[1])), 4);
    if (s < 0) return EP_ERR_PLAN_SHAPE;
    const int64_t dims[EP_MAX_RANK] = {N, M, o[0], o[1]};
    *scratch = (N == 0 || M == 0) ? 0 : (uint64_t)s;
    return sp_set_shape(&out[0], 4, dims, EP_DTYPE_F32);
}
