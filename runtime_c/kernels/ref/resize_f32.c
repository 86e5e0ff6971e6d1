/* RESIZE / RESIZE_EXT f32: ONNX Resize (opset 11-19) for nearest, linear (n-linear) and cubic,
 * following onnx.reference.ops.op_resize numerically:
 *  - per axis, an output coordinate y maps to x_ori (double) by the coordinate mode;
 *  - ratio = x_ori - floor(x_ori), or 1 when x_ori is an integer (the reference then
 *    prefers the left neighbours): taps start at x_ori - 1 (x_ori - 2 for cubic) when
 *    x_ori is an integer, else at floor(x_ori) (floor - 1 for cubic);
 *  - nearest weights are 0/1 by nearest_mode, linear (1 - ratio, ratio), cubic Keys(A);
 *  - exclude_outside zeroes the taps outside the input and renormalises; then every
 *    tap index is clamped into [0, in) (the reference pads by edge);
 *  - the value is the sum over the product of per-axis taps, in double.
 * RESIZE_EXT adds:
 *  - tf_crop_and_resize: x_ori from the axis's roi; an output element whose x_ori lies outside
 *    [0, in - 1] on any axis is extrapolation_value;
 *  - antialias (linear, cubic): with s = min(scale, 1), the taps are the offsets
 *    i = floor(-n0 / s) + 1 ... 1 - that (n0 = 1 linear, 2 cubic) from floor(x_ori) when x_ori is not an
 *    integer, weighted by the triangle / Keys(A) filter at s * (i - ratio) and normalised to sum 1.
 *    Their index and weight pairs live in the scratch (one per input position per axis: taps
 *    clamped to the same edge index are merged, so an axis has at most `in` of them).
 * Axes with scale 1 and equal extents (and the whole roi) are copied. Zero-weight taps are skipped.
 * Scales are float32 in the plan; when one equals the float32 rounding of out/in the
 * compiler derived it from sizes, and the exact ratio out/in is used (as the reference
 * does for the sizes input). Without antialias there is no scratch: taps are recomputed
 * per axis when the output coordinate along that axis changes. */
#include "ep_ops.h"
#include "ref_util_elem.h"
#include "resize_common.h"

static int rs_run(const rs_params *p, const ep_op *op) {
    const ep_tensor *tx = op->in[0], *ty = op->out[0];
    const int rank = tx->rank;
    const float *x = (const float *)tx->data;
    float *y = (float *)ty->data;
    if (ep_numel(ty) == 0) return EP_OK;
    if (rank == 0) return y[0] = x[0], EP_OK;   /* a scalar */
    int64_t xs[EP_MAX_RANK];
    ru_dense_strides(tx, xs);
    rs_axis ax[EP_MAX_RANK];
    rs_taps taps[EP_MAX_RANK];
    int64_t o[EP_MAX_RANK] = {0};
    unsigned char *scratch = (unsigned char *)op->scratch;
    for (int d = 0; d < rank; d++) {
        rs_axis_init(p, d, tx->dims[d], ty->dims[d], &ax[d]);
        if (p->antialias) {   /* the shape function sized the scratch: 16 bytes per input position */
            taps[d].idx = (int64_t *)(void *)scratch;
            taps[d].w = (double *)(void *)(scratch + 8 * (size_t)tx->dims[d]);
            scratch += 16 * (size_t)tx->dims[d];
        } else {
            taps[d].idx = taps[d].idx4;
            taps[d].w = taps[d].w4;
        }
    }
    int from = 0; /* taps of axes >= from are stale */
    for (;;) {
        for (int d = from; d < rank; d++) rs_compute_taps(p, &ax[d], o[d], &taps[d]);
        int empty = 0, outside = 0;
        for (int d = 0; d < rank; d++) {
            empty |= taps[d].n == 0;
            outside |= taps[d].outside;
        }
        if (outside) {
            *y++ = p->extrapolation_value;
        } else {
            /* sum over the product of the per-axis taps */
            double acc = 0.0;
            int64_t k[EP_MAX_RANK] = {0};
            while (!empty) {
                int64_t off = 0;
                double w = 1.0;
                for (int d = 0; d < rank; d++) {
                    off += taps[d].idx[k[d]] * xs[d];
                    w *= taps[d].w[k[d]];
                }
                acc += w * (double)x[off];
                int d = rank - 1;
                for (; d >= 0; d--) {
                    if (++k[d] < taps[d].n) break;
                    k[d] = 0;
                }
                if (d < 0) break;
            }
            *y++ = (float)acc;
        }
        int d = rank - 1;
        for (; d >= 0; d--) {
            if (++o[d] < ty->dims[d]) break;
            o[d] = 0;
        }
        if (d < 0) return EP_OK;
        from = d;
    }
}

int ep_ref_resize_f32(const ep_op *op) {
    const ep_resize_params *q = (const ep_resize_params *)op->params;
    const rs_params p = {.mode = q->mode, .coord_mode = q->coord_mode, .nearest_mode = q->nearest_mode,
                         .exclude_outside = q->exclude_outside, .antialias = 0, .A = (double)q->cubic_coeff_a,
                         .extrapolation_value = q->extrapolation_value, .scales = q->scales};
    return rs_run(&p, op);
}

/* RESIZE C8: the same resampling over the 5-D view [N, C/8, H, W, 8] of X and Y's bytes, scale 1 on the
 * channel blocks and on the 8 lanes (copied axes): each output element's taps, weights and double sum are the
 * plain tensor's. */
int ep_ref_resize_c8_f32(const ep_op *op) {
    const ep_resize_params *q = (const ep_resize_params *)op->params;
    ep_tensor v[2] = {*op->in[0], *op->out[0]};
    for (int i = 0; i < 2; i++) {
        v[i].rank = 5;
        v[i].dims[4] = EP_LAYOUT_BLOCK;
        v[i].dims[1] /= EP_LAYOUT_BLOCK;
        v[i].layout = EP_LAYOUT_PLAIN;
    }
    const float scales[5] = {q->scales[0], 1.0f, q->scales[2], q->scales[3], 1.0f};
    const rs_params p = {.mode = q->mode, .coord_mode = q->coord_mode, .nearest_mode = q->nearest_mode,
                         .exclude_outside = q->exclude_outside, .antialias = 0, .A = (double)q->cubic_coeff_a,
                         .extrapolation_value = q->extrapolation_value, .scales = scales};
    ep_tensor *ins[1] = {&v[0]}, *outs[1] = {&v[1]};
    ep_op sub = *op;
    sub.in = ins, sub.out = outs;
    return rs_run(&p, &sub);
}

int ep_ref_resize_ext_f32(const ep_op *op) {
    const ep_resize_ext_params *q = (const ep_resize_ext_params *)op->params;
    const rs_params p = {.mode = q->mode, .coord_mode = q->coord_mode, .nearest_mode = q->nearest_mode,
                         .exclude_outside = q->exclude_outside, .antialias = q->antialias,
                         .A = (double)q->cubic_coeff_a, .extrapolation_value = q->extrapolation_value,
                         .scales = q->scales, .roi_start = q->roi_start, .roi_end = q->roi_end};
    return rs_run(&p, op);
}

/* RESIZE_DYN: the extents and scales from the run-time operand (plan_format.h), then RESIZE's kernel.
 * Every check precedes the first write. */
int ep_ref_resize_dyn_f32(const ep_op *op) {
    const ep_resize_dyn_params *q = (const ep_resize_dyn_params *)op->params;
    const ep_tensor *x = op->in[0], *s = op->in[1];
    ep_tensor *y = op->out[0];
    const int64_t n = ep_numel(s);
    ep_resize_params rp = {.mode = q->mode, .coord_mode = q->coord_mode, .nearest_mode = q->nearest_mode,
                           .exclude_outside = q->exclude_outside, .cubic_coeff_a = q->cubic_coeff_a,
                           .extrapolation_value = q->extrapolation_value};
    int64_t ext[EP_MAX_RANK];
    for (int i = 0; i < x->rank; i++) {
        rp.scales[i] = 1.0f;
        ext[i] = x->dims[i];
    }
    for (int i = x->rank; i < EP_MAX_RANK; i++) rp.scales[i] = 1.0f;
    if (q->from == EP_RESIZE_FROM_SCALES) {
        const float *v = (const float *)s->data;
        for (int64_t k = 0; k < n; k++) {
            const int a = q->axes[k];
            if (!(v[k] > 0.0f) || !isfinite(v[k])) return EP_ERR_RUN_SHAPE;
            const double o = floor((double)v[k] * (double)x->dims[a]);
            if (o > (double)y->dims[a]) return EP_ERR_RUN_BOUND;
            rp.scales[a] = v[k];
            ext[a] = (int64_t)o;
        }
    } else {
        const int64_t *v = (const int64_t *)s->data;
        float ratio = q->policy == EP_RESIZE_NOT_LARGER ? INFINITY : 0.0f;
        for (int64_t k = 0; k < n; k++) {
            const int a = q->axes[k];
            if (v[k] < 1 || x->dims[a] == 0) return EP_ERR_RUN_SHAPE;
            if (v[k] > INT32_MAX) return EP_ERR_RUN_BOUND;
            const float r = (float)v[k] / (float)x->dims[a];
            if (q->policy == EP_RESIZE_NOT_LARGER) ratio = r < ratio ? r : ratio;
            if (q->policy == EP_RESIZE_NOT_SMALLER) ratio = r > ratio ? r : ratio;
            rp.scales[a] = r;
            ext[a] = v[k];
        }
        for (int64_t k = 0; k < n && q->policy != EP_RESIZE_STRETCH; k++) {
            const int a = q->axes[k];
            rp.scales[a] = ratio;
            ext[a] = (int64_t)floor((double)ratio * (double)x->dims[a] + 0.5);
        }
        for (int64_t k = 0; k < n; k++)
            if (ext[q->axes[k]] > y->dims[q->axes[k]]) return EP_ERR_RUN_BOUND;
    }
    for (int i = 0; i < x->rank; i++) y->dims[i] = (int32_t)ext[i];
    ep_op sub = *op;
    sub.params = &rp;
    sub.n_in = 1;
    return ep_ref_resize_f32(&sub);
}
