/* Shape functions: RESIZE and RESIZE_EXT (nearest, linear, cubic; f32). Output extents come from the
 * declared output tensor; scales, roi and enum fields are untrusted and checked here. RESIZE variants TABLE
 * and C8 (plan_format.h) have their conditions and layouts checked and their minimum scratch computed here. */
#include <math.h>
#include "shape_check.h"

/* The fields both records share (RESIZE_EXT's first 56 bytes are RESIZE's). */
static int check_common(const ep_op *op, int32_t mode, int32_t coord_mode, int32_t max_coord, int32_t nearest_mode,
                        int32_t exclude_outside, float cubic_coeff_a, const float *scales) {
    const ep_tensor *x = op->in[0], *y = op->out[0];
    if (mode < EP_RESIZE_NEAREST || mode > EP_RESIZE_CUBIC) return EP_ERR_PLAN_PARAMS;
    if (coord_mode < EP_COORD_HALF_PIXEL || coord_mode > max_coord) return EP_ERR_PLAN_PARAMS;
    if (nearest_mode < EP_NEAREST_ROUND_PREFER_FLOOR || nearest_mode > EP_NEAREST_CEIL) return EP_ERR_PLAN_PARAMS;
    if (exclude_outside != 0 && exclude_outside != 1) return EP_ERR_PLAN_PARAMS;
    if (mode == EP_RESIZE_CUBIC && !isfinite(cubic_coeff_a)) return EP_ERR_PLAN_PARAMS;
    if (x->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    if (y->rank != x->rank) return EP_ERR_PLAN_SHAPE;
    int empty = 0, no_source = 0;
    for (int i = 0; i < x->rank; i++) {
        const float s = scales[i];
        if (!(s > 0.0f) || !isfinite(s)) return EP_ERR_PLAN_PARAMS; /* also rejects NaN */
        empty |= y->dims[i] == 0;
        no_source |= x->dims[i] == 0;
    }
    /* every output element samples the input: it must not be empty */
    if (no_source && !empty) return EP_ERR_PLAN_SHAPE;
    return EP_OK;
}

static int check_io(const ep_op *op) {
    if (op->n_in != 1 || op->n_out != 1) return EP_ERR_PLAN_OP;
    int rc = ep_chk_tensor(op->in[0]);
    if (rc == EP_OK) rc = ep_chk_tensor(op->out[0]);
    if (rc == EP_OK && !op->params) rc = EP_ERR_PLAN_PARAMS;
    return rc;
}

int ep_shape_resize(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = check_io(op);
    if (rc != EP_OK) return rc;
    const ep_resize_params *p = (const ep_resize_params *)op->params;
    rc = check_common(op, p->mode, p->coord_mode, EP_COORD_HALF_PIXEL_SYMMETRIC, p->nearest_mode, p->exclude_outside,
                      p->cubic_coeff_a, p->scales);
    if (rc != EP_OK) return rc;
    ep_shape_from_tensor(&out[0], op->out[0]);
    out[0].dtype = op->in[0]->dtype;
    *scratch = 0;
    const ep_tensor *x = op->in[0], *y = op->out[0];
    const uint8_t lay = op->variant == EP_RESIZE_VARIANT_C8 ? EP_LAYOUT_C8 : EP_LAYOUT_PLAIN;
    if (x->layout != lay || y->layout != lay) return EP_ERR_PLAN_TENSOR;
    switch (op->variant) {
    case EP_VARIANT_DEFAULT: return EP_OK;
    case EP_RESIZE_VARIANT_TABLE:
    case EP_RESIZE_VARIANT_C8: {
        /* nearest / linear over the last two dims (rank >= 2; C8: 4), every other dim kept, no exclude_outside */
        const int r = x->rank;
        if (r < 2 || p->exclude_outside || (p->mode != EP_RESIZE_NEAREST && p->mode != EP_RESIZE_LINEAR))
            return EP_ERR_PLAN_PARAMS;
        if (lay == EP_LAYOUT_C8 && (r != 4 || x->dims[1] % EP_LAYOUT_BLOCK)) return EP_ERR_PLAN_TENSOR;
        for (int i = 0; i < r - 2; i++)
            if (p->scales[i] != 1.0f || y->dims[i] != x->dims[i]) return EP_ERR_PLAN_PARAMS;
        const uint64_t OH = (uint64_t)y->dims[r - 2], OW = (uint64_t)y->dims[r - 1];
        const uint64_t px = lay == EP_LAYOUT_C8 ? EP_LAYOUT_BLOCK : 1;
        /* the taps of every output row and column, and one slot of two interpolated rows for linear */
        *scratch = 16u * (OH + OW) + (p->mode == EP_RESIZE_LINEAR ? 8u * OW * px : 0u);
        return EP_OK;
    }
    default: return EP_ERR_PLAN_OP;
    }
}

int ep_shape_resize_ext(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    int rc = check_io(op);
    if (rc != EP_OK) return rc;
    const ep_resize_ext_params *p = (const ep_resize_ext_params *)op->params;
    const ep_tensor *x = op->in[0];
    rc = check_common(op, p->mode, p->coord_mode, EP_COORD_TF_CROP_AND_RESIZE, p->nearest_mode, p->exclude_outside,
                      p->cubic_coeff_a, p->scales);
    if (rc != EP_OK) return rc;
    if (p->reserved != 0) return EP_ERR_PLAN_PARAMS;
    for (int i = 0; i < EP_MAX_RANK; i++)
        if (!isfinite(p->roi_start[i]) || !isfinite(p->roi_end[i])) return EP_ERR_PLAN_PARAMS;
    if (p->antialias != 0 && p->antialias != 1) return EP_ERR_PLAN_PARAMS;
    uint64_t need = 0;
    if (p->antialias) {
        if (p->mode == EP_RESIZE_NEAREST) return EP_ERR_PLAN_PARAMS;
        for (int i = 0; i < x->rank; i++) {
            /* bounds the widened filter (about 4 / scale taps) by the input extent */
            if (x->dims[i] > 0 && !((double)p->scales[i] * (double)x->dims[i] >= 0.125)) return EP_ERR_PLAN_PARAMS;
            need += 16u * (uint64_t)x->dims[i];   /* one (index, weight) pair per input position */
        }
    }
    ep_shape_from_tensor(&out[0], op->out[0]);
    out[0].dtype = x->dtype;
    *scratch = need;
    return EP_OK;
}

/* RESIZE_DYN (1.8): the operands and parameters; Y at its capacity (the kernel computes the extents). */
int ep_shape_resize_dyn(const ep_op *op, ep_shape *out, uint64_t *scratch) {
    if (op->n_in != 2 || op->n_out != 1 || !op->params) return EP_ERR_PLAN_OP;
    int rc = ep_chk_tensor(op->in[0]);
    if (rc == EP_OK) rc = ep_chk_tensor(op->in[1]);
    if (rc == EP_OK) rc = ep_chk_tensor(op->out[0]);
    if (rc != EP_OK) return rc;
    const ep_resize_dyn_params *p = (const ep_resize_dyn_params *)op->params;
    const ep_tensor *x = op->in[0], *s = op->in[1], *y = op->out[0];
    const float ones[EP_MAX_RANK] = {1, 1, 1, 1, 1, 1, 1, 1};
    rc = check_common(op, p->mode, p->coord_mode, EP_COORD_HALF_PIXEL_SYMMETRIC, p->nearest_mode, p->exclude_outside,
                      p->cubic_coeff_a, ones);
    if (rc != EP_OK) return rc;
    if (p->from == EP_RESIZE_FROM_SCALES) {
        if (p->policy != EP_RESIZE_STRETCH) return EP_ERR_PLAN_PARAMS;
        if (s->dtype != EP_DTYPE_F32) return EP_ERR_PLAN_TENSOR;
    } else if (p->from == EP_RESIZE_FROM_SIZES) {
        if (p->policy < EP_RESIZE_STRETCH || p->policy > EP_RESIZE_NOT_SMALLER) return EP_ERR_PLAN_PARAMS;
        if (s->dtype != EP_DTYPE_I64) return EP_ERR_PLAN_TENSOR;
    } else {
        return EP_ERR_PLAN_PARAMS;
    }
    unsigned seen = 0;
    int n = 0;
    for (int k = 0; k < EP_MAX_RANK; k++) {   /* axes[0..n-1], then -1 to the end */
        const int32_t a = p->axes[k];
        if (a == -1) continue;
        if (a < 0 || a >= x->rank || (seen >> a) & 1u || k != n) return EP_ERR_PLAN_PARAMS;
        seen |= 1u << a;
        n++;
    }
    if (n == 0 || s->rank != 1 || s->dims[0] != n) return EP_ERR_PLAN_SHAPE;
    for (int i = 0; i < x->rank; i++)   /* the dims S leaves keep their extent */
        if (!((seen >> i) & 1u) && y->dims[i] != x->dims[i]) return EP_ERR_PLAN_SHAPE;
    ep_shape_from_tensor(&out[0], y);
    out[0].dtype = x->dtype;
    *scratch = 0;
    return EP_OK;
}
