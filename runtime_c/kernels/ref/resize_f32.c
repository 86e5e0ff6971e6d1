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
#include <math.h>
#include "ep_ops.h"
#include "ref_util_elem.h"

typedef struct rs_params {
    int mode, coord_mode, nearest_mode, exclude_outside, antialias;
    double A;
    float extrapolation_value;
    const float *scales, *roi_start, *roi_end;   /* roi: NULL for RESIZE */
} rs_params;

typedef struct rs_axis {
    double scale;     /* output / input */
    double ow;        /* length_resized of the spec: output extent, or scale * in when scales were given */
    int64_t in, out;
    int identity;
    float roi_start, roi_end;
} rs_axis;

typedef struct rs_taps {
    int64_t n;
    int outside;      /* tf_crop_and_resize: the sample point is outside the input */
    int64_t *idx;
    double *w;
    int64_t idx4[4];  /* storage without antialias */
    double w4[4];
} rs_taps;

static double rs_coord(const rs_params *p, const rs_axis *a, double y) {
    const double in = (double)a->in;
    switch (p->coord_mode) {
    case EP_COORD_ASYMMETRIC: return y / a->scale;
    case EP_COORD_ALIGN_CORNERS: return a->ow == 1.0 ? 0.0 : y * (in - 1.0) / (a->ow - 1.0);
    case EP_COORD_PYTORCH_HALF_PIXEL: return a->ow == 1.0 ? -0.5 : (y + 0.5) / a->scale - 0.5;
    case EP_COORD_TF_HALF_PIXEL_FOR_NEAREST: return (y + 0.5) / a->scale;
    case EP_COORD_HALF_PIXEL_SYMMETRIC: {
        const double adjustment = (double)a->out / a->ow;
        const double offset = in / 2.0 * (1.0 - adjustment);
        return offset + (y + 0.5) / a->scale - 0.5;
    }
    case EP_COORD_TF_CROP_AND_RESIZE: {
        /* the reference computes the roi span and offset in float32 */
        const float span = a->roi_end - a->roi_start;
        const float start = a->roi_start * (float)(a->in - 1);
        const double x = a->ow == 1.0 ? (double)span * (in - 1.0) / 2.0
                                      : y * (double)span * (in - 1.0) / (a->ow - 1.0);
        return x + (double)start;
    }
    default: return (y + 0.5) / a->scale - 0.5; /* HALF_PIXEL */
    }
}

static double rs_keys(double x, double A) {
    x = fabs(x);
    const double x2 = x * x, x3 = x * x2;
    if (x <= 1.0) return (A + 2) * x3 - (A + 3) * x2 + 1;
    if (x < 2.0) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
    return 0.0;
}

static void rs_cubic(double r, double A, double *c) {
    const double s = 1.0 - r;
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
}

/* The antialias filter's first tap offset (from floor(x_ori), ratio in (0, 1]); the filter has
 * 2 - 2 * first taps. */
static int64_t rs_aa_first(const rs_params *p, const rs_axis *a) {
    const double s = a->scale < 1.0 ? a->scale : 1.0;
    return (int64_t)floor((p->mode == EP_RESIZE_CUBIC ? -2.0 : -1.0) / s) + 1;
}

/* Weight of tap k (offset first + k) of the antialias filter, before normalisation. */
static double rs_aa_weight(const rs_params *p, const rs_axis *a, int64_t first, int64_t k, double r) {
    const double s = a->scale < 1.0 ? a->scale : 1.0;
    const double arg = ((double)(first + k) - r) * s;
    if (p->mode == EP_RESIZE_CUBIC) return rs_keys(arg, p->A);
    const double c = 1.0 - fabs(arg);
    return c < 0.0 ? 0.0 : (c > 1.0 ? 1.0 : c);
}

static void rs_compute_taps(const rs_params *p, const rs_axis *a, int64_t y, rs_taps *t) {
    t->outside = 0;
    if (a->identity) {
        t->n = 1;
        t->idx[0] = y;
        t->w[0] = 1.0;
        return;
    }
    double x = rs_coord(p, a, (double)y);
    if (p->coord_mode == EP_COORD_TF_CROP_AND_RESIZE && (x < 0.0 || x > (double)(a->in - 1))) {
        t->outside = 1;
        t->n = 0;
        return;
    }
    const int64_t first = p->antialias ? rs_aa_first(p, a) : (p->mode == EP_RESIZE_CUBIC ? -1 : 0);
    const int64_t n = 2 - 2 * first;
    /* keep the conversion to int64 defined; every tap beyond this range clamps alike */
    const double margin = 8.0 + (double)n;
    if (x != x) x = 0.0;
    if (x < -margin) x = -margin;
    if (x > (double)a->in + margin) x = (double)a->in + margin;
    const double xf = floor(x);
    const int is_int = x == xf;
    const double r = is_int ? 1.0 : x - xf;
    /* the reference finds the window in edge-padded coordinates x + n/2; rounding there can
     * make the sum an integer when x is not, and it then starts the window one tap left */
    const double xp = x + (double)(n / 2), pf = floor(xp);
    const int64_t start = (int64_t)pf - n / 2 + (xp == pf ? 0 : 1) - n / 2;
    t->n = 0;
    if (p->antialias) {
        double sum = 0.0;
        for (int64_t k = 0; k < n; k++) sum += rs_aa_weight(p, a, first, k, r);
        double kept = 0.0;
        if (p->exclude_outside)
            for (int64_t k = 0; k < n; k++) {
                const int64_t i = start + k;
                if (i >= 0 && i < a->in) kept += rs_aa_weight(p, a, first, k, r) / sum;
            }
        for (int64_t k = 0; k < n; k++) {
            int64_t i = start + k;
            if (p->exclude_outside && (i < 0 || i >= a->in)) continue;
            double c = rs_aa_weight(p, a, first, k, r) / sum;
            if (p->exclude_outside && kept != 0.0) c /= kept;
            if (c == 0.0) continue;
            i = i < 0 ? 0 : (i >= a->in ? a->in - 1 : i);
            if (t->n > 0 && t->idx[t->n - 1] == i) {
                t->w[t->n - 1] += c;   /* taps clamped to the same edge */
            } else {
                t->idx[t->n] = i;
                t->w[t->n] = c;
                t->n++;
            }
        }
        return;
    }
    double c[4];
    if (p->mode == EP_RESIZE_NEAREST) {
        int right;
        if (is_int) right = 1;
        else if (p->nearest_mode == EP_NEAREST_ROUND_PREFER_CEIL) right = r >= 0.5;
        else if (p->nearest_mode == EP_NEAREST_FLOOR) right = 0;
        else if (p->nearest_mode == EP_NEAREST_CEIL) right = 1;
        else right = r > 0.5; /* ROUND_PREFER_FLOOR */
        c[0] = right ? 0.0 : 1.0;
        c[1] = right ? 1.0 : 0.0;
    } else if (p->mode == EP_RESIZE_LINEAR) {
        c[0] = 1.0 - r;
        c[1] = r;
    } else {
        rs_cubic(r, p->A, c);
    }
    if (p->exclude_outside) {
        double sum = 0.0;
        for (int k = 0; k < n; k++) {
            const int64_t i = start + k;
            if (i < 0 || i >= a->in) c[k] = 0.0;
            sum += c[k];
        }
        if (sum != 0.0)
            for (int k = 0; k < n; k++) c[k] /= sum;
    }
    for (int k = 0; k < n; k++) {
        if (c[k] == 0.0) continue;
        int64_t i = start + k;
        i = i < 0 ? 0 : (i >= a->in ? a->in - 1 : i);
        t->idx[t->n] = i;
        t->w[t->n] = c[k];
        t->n++;
    }
}

static void rs_axis_init(const rs_params *p, int d, int64_t in, int64_t out, rs_axis *a) {
    const float s = p->scales[d];
    a->in = in;
    a->out = out;
    a->roi_start = p->roi_start ? p->roi_start[d] : 0.0f;
    a->roi_end = p->roi_end ? p->roi_end[d] : 1.0f;
    a->identity = s == 1.0f && in == out &&
                  (p->coord_mode != EP_COORD_TF_CROP_AND_RESIZE || (a->roi_start == 0.0f && a->roi_end == 1.0f));
    const double exact = (double)out / (double)in;
    if ((float)exact == s) {
        a->scale = exact;
        a->ow = (double)out;
    } else {
        a->scale = (double)s;
        /* scales given: length_resized is scale * in, as the ONNX reference and node tests define it
         * (onnxruntime uses the integer output extent; they differ when scale * in is fractional) */
        a->ow = (double)s * (double)in;
    }
}

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

int ep_ref_resize_ext_f32(const ep_op *op) {
    const ep_resize_ext_params *q = (const ep_resize_ext_params *)op->params;
    const rs_params p = {.mode = q->mode, .coord_mode = q->coord_mode, .nearest_mode = q->nearest_mode,
                         .exclude_outside = q->exclude_outside, .antialias = q->antialias,
                         .A = (double)q->cubic_coeff_a, .extrapolation_value = q->extrapolation_value,
                         .scales = q->scales, .roi_start = q->roi_start, .roi_end = q->roi_end};
    return rs_run(&p, op);
}
