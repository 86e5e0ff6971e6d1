/* The sampling math of ONNX Resize shared by the reference kernel (kernels/ref/resize_f32.c, which documents
 * it: coordinate modes, tap windows, nearest rounding, linear / cubic / antialias weights, in double) and the
 * separable table kernel (kernels/resize_tmpl.h), so that both take every tap index and weight from the
 * same code. */
#ifndef EP_RESIZE_COMMON_H
#define EP_RESIZE_COMMON_H

#include <math.h>
#include <stdint.h>
#include "ep_kernel.h"

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

#endif
