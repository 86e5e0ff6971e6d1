/* RESIZE f32: ONNX Resize (opset 11-19) for nearest, linear (n-linear) and cubic,
 * following onnx.reference.ops.op_resize numerically:
 *  - per axis, an output coordinate y maps to x_ori (double) by the coordinate mode;
 *  - ratio = x_ori - floor(x_ori), or 1 when x_ori is an integer (the reference then
 *    prefers the left neighbours): taps start at x_ori - 1 (x_ori - 2 for cubic) when
 *    x_ori is an integer, else at floor(x_ori) (floor - 1 for cubic);
 *  - nearest weights are 0/1 by nearest_mode, linear (1 - ratio, ratio), cubic Keys(A);
 *  - exclude_outside zeroes the taps outside the input and renormalises; then every
 *    tap index is clamped into [0, in) (the reference pads by edge);
 *  - the value is the sum over the product of per-axis taps, in double.
 * Axes with scale 1 and equal extents are copied. Zero-weight taps are skipped.
 * Scales are float32 in the plan; when one equals the float32 rounding of out/in the
 * compiler derived it from sizes, and the exact ratio out/in is used (as the reference
 * does for the sizes input). No scratch: taps are recomputed per axis when the output
 * coordinate along that axis changes. */
#include <math.h>
#include "ep_ops.h"
#include "ref_util_elem.h"

typedef struct rs_axis {
    double scale;     /* output / input */
    double ow;        /* length_resized of the spec: output extent, or scale * in when scales were given */
    int64_t in, out;
    int identity;
} rs_axis;

typedef struct rs_taps {
    int n;
    int64_t idx[4];
    double w[4];
} rs_taps;

static double rs_coord(int coord_mode, const rs_axis *a, double y) {
    const double in = (double)a->in;
    switch (coord_mode) {
    case EP_COORD_ASYMMETRIC: return y / a->scale;
    case EP_COORD_ALIGN_CORNERS: return a->ow == 1.0 ? 0.0 : y * (in - 1.0) / (a->ow - 1.0);
    case EP_COORD_PYTORCH_HALF_PIXEL: return a->ow == 1.0 ? -0.5 : (y + 0.5) / a->scale - 0.5;
    case EP_COORD_TF_HALF_PIXEL_FOR_NEAREST: return (y + 0.5) / a->scale;
    case EP_COORD_HALF_PIXEL_SYMMETRIC: {
        const double adjustment = (double)a->out / a->ow;
        const double offset = in / 2.0 * (1.0 - adjustment);
        return offset + (y + 0.5) / a->scale - 0.5;
    }
    default: return (y + 0.5) / a->scale - 0.5; /* HALF_PIXEL */
    }
}

static void rs_cubic(double r, double A, double *c) {
    const double s = 1.0 - r;
    c[0] = ((A * (r + 1) - 5 * A) * (r + 1) + 8 * A) * (r + 1) - 4 * A;
    c[1] = ((A + 2) * r - (A + 3)) * r * r + 1;
    c[2] = ((A + 2) * s - (A + 3)) * s * s + 1;
    c[3] = ((A * (s + 1) - 5 * A) * (s + 1) + 8 * A) * (s + 1) - 4 * A;
}

static void rs_compute_taps(const ep_resize_params *p, const rs_axis *a, int64_t y, rs_taps *t) {
    if (a->identity) {
        t->n = 1;
        t->idx[0] = y;
        t->w[0] = 1.0;
        return;
    }
    double x = rs_coord(p->coord_mode, a, (double)y);
    /* keep the conversion to int64 defined; every tap beyond this range clamps alike */
    if (x != x) x = 0.0;
    if (x < -8.0) x = -8.0;
    if (x > (double)a->in + 8.0) x = (double)a->in + 8.0;
    const double xf = floor(x);
    const int is_int = x == xf;
    const double r = is_int ? 1.0 : x - xf;
    double c[4];
    const int n = p->mode == EP_RESIZE_CUBIC ? 4 : 2;
    /* the reference finds the window in edge-padded coordinates x + n/2; rounding there can
     * make the sum an integer when x is not, and it then starts the window one tap left */
    const double xp = x + (double)(n / 2), pf = floor(xp);
    const int64_t start = (int64_t)pf - n / 2 + (xp == pf ? 0 : 1) - n / 2;
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
        rs_cubic(r, (double)p->cubic_coeff_a, c);
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
    t->n = 0;
    for (int k = 0; k < n; k++) {
        if (c[k] == 0.0) continue;
        int64_t i = start + k;
        i = i < 0 ? 0 : (i >= a->in ? a->in - 1 : i);
        t->idx[t->n] = i;
        t->w[t->n] = c[k];
        t->n++;
    }
}

static void rs_axis_init(const ep_resize_params *p, int d, int64_t in, int64_t out, rs_axis *a) {
    const float s = p->scales[d];
    a->in = in;
    a->out = out;
    a->identity = s == 1.0f && in == out;
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

int ep_ref_resize_f32(const ep_op *op) {
    const ep_resize_params *p = (const ep_resize_params *)op->params;
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
    for (int d = 0; d < rank; d++) rs_axis_init(p, d, tx->dims[d], ty->dims[d], &ax[d]);
    int from = 0; /* taps of axes >= from are stale */
    for (;;) {
        for (int d = from; d < rank; d++) rs_compute_taps(p, &ax[d], o[d], &taps[d]);
        /* sum over the product of the per-axis taps */
        double acc = 0.0;
        int k[EP_MAX_RANK] = {0};
        int empty = 0;
        for (int d = 0; d < rank; d++) empty |= taps[d].n == 0;
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
        int d = rank - 1;
        for (; d >= 0; d--) {
            if (++o[d] < ty->dims[d]) break;
            o[d] = 0;
        }
        if (d < 0) return EP_OK;
        from = d;
    }
}
