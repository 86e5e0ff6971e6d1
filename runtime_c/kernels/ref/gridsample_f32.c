/* GRIDSAMPLE reference kernel (f32; 2-D and 3-D, plan_format.h ep_gridsample_params): the ONNX reference
 * implementation's arithmetic (onnx/reference/ops/op_grid_sample.py). Per output position the grid's
 * coordinates are denormalised in f32, rounded half to even for NEAREST (rintf in the default rounding
 * mode), clamped (BORDER) or reflected (REFLECTION, in double) when outside [lo, hi]; then every dim gets its
 * taps (1 NEAREST, 2 LINEAR, 4 CUBIC), each a padded index and an f32 weight, and the value is the nested
 * weighted sum over the taps, the last dim innermost, each level summed in tap order. A 2-D grid is run
 * as a 3-D one whose first dim has one tap of weight 1 (exact: 1 * s == s).
 * Grid values are run-time data: NaN and coordinates past 2^30 become indices far outside, so nothing
 * outside X is ever read; the result for them is whatever the padding gives. */
#include <math.h>
#include "ep_ops.h"

#define GS_FAR 1073741824.0f   /* 2^30 */
#define GS_MAX_TAPS 4

typedef struct gs_dim {
    int64_t len;    /* the input extent L >= 1 */
    double lo, hi;  /* [0, L-1] aligned, [-0.5, L-0.5] otherwise */
} gs_dim;

/* floor(v) (trunc(v) when trunc) as an integer; NaN and values past +-2^30 give -+2^30 */
static int64_t gs_int(float v, int trunc) {
    if (!(v >= -GS_FAR)) return -(int64_t)GS_FAR;
    if (v > GS_FAR) return (int64_t)GS_FAR;
    return (int64_t)(trunc ? v : floorf(v));
}

/* x reflected about lo and hi until inside [lo, hi] (the reference's _gs_reflect); hi == lo gives lo */
static double gs_reflect(double x, double lo, double hi) {
    const double rng = hi - lo;
    if (!(rng > 0.0)) return lo;
    if (x < lo) {
        const double dx = lo - x, q = floor(dx / rng), r = dx - q * rng;
        return fmod(q, 2.0) == 0.0 ? lo + r : hi - r;
    }
    if (x > hi) {
        const double dx = x - hi, q = floor(dx / rng), r = dx - q * rng;
        return fmod(q, 2.0) == 0.0 ? hi - r : lo + r;
    }
    return x;
}

/* The index pixel i reads along a dim with the padding, or -1 for a zero (ZEROS outside [0, L)). */
static int64_t gs_index(int64_t i, const gs_dim *d, int pad) {
    if (pad == EP_GRIDSAMPLE_ZEROS) return i >= 0 && i < d->len ? i : -1;
    if (pad == EP_GRIDSAMPLE_BORDER) return i < 0 ? 0 : i >= d->len ? d->len - 1 : i;
    const double r = gs_reflect((double)i, d->lo, d->hi);   /* in [lo, hi]: truncates into [0, L-1] */
    if (!(r >= 0.0)) return 0;
    return r > (double)(d->len - 1) ? d->len - 1 : (int64_t)r;
}

/* Keys' cubic convolution weights (a = -0.75) of the taps i-1 .. i+2 at distance t from i, in f32 */
static void gs_cubic(float t, float *w) {
    const float A = -0.75f, x = fabsf(t);
    w[0] = ((A * (x + 1) - 5 * A) * (x + 1) + 8 * A) * (x + 1) - 4 * A;
    w[1] = ((A + 2) * x - (A + 3)) * x * x + 1;
    w[2] = ((A + 2) * (1 - x) - (A + 3)) * (1 - x) * (1 - x) + 1;
    w[3] = ((A * (2 - x) - 5 * A) * (2 - x) + 8 * A) * (2 - x) - 4 * A;
}

/* The taps of one dim for normalised coordinate v: indices (-1: zero) and weights; returns their count. */
static int gs_taps(float v, const gs_dim *d, const ep_gridsample_params *p, int64_t *idx, float *w) {
    const float L = (float)d->len;
    float x = p->align_corners ? ((v + 1.0f) / 2.0f) * (L - 1.0f) : ((v + 1.0f) * L - 1.0f) / 2.0f;
    if (p->mode == EP_GRIDSAMPLE_NEAREST) x = rintf(x);
    if (x < d->lo || x > d->hi) {
        if (p->padding_mode == EP_GRIDSAMPLE_BORDER) x = x < 0.0f ? 0.0f : x > L - 1.0f ? L - 1.0f : x;
        else if (p->padding_mode == EP_GRIDSAMPLE_REFLECTION) x = (float)gs_reflect((double)x, d->lo, d->hi);
    }
    if (p->mode == EP_GRIDSAMPLE_NEAREST) {
        idx[0] = gs_index(gs_int(x, 1), d, p->padding_mode);
        w[0] = 1.0f;
        return 1;
    }
    const int64_t i0 = gs_int(x, 0);
    const float t = x - (float)i0;
    if (p->mode == EP_GRIDSAMPLE_LINEAR) {
        w[0] = 1.0f - fabsf(t);
        w[1] = fabsf(t);
        for (int k = 0; k < 2; k++) idx[k] = gs_index(i0 + k, d, p->padding_mode);
        return 2;
    }
    gs_cubic(t, w);
    for (int k = 0; k < 4; k++) idx[k] = gs_index(i0 - 1 + k, d, p->padding_mode);
    return 4;
}

int ep_ref_gridsample_f32(const ep_op *op) {
    const ep_gridsample_params *p = (const ep_gridsample_params *)op->params;
    const ep_tensor *xt = op->in[0], *gt = op->in[1], *yt = op->out[0];
    const int k = xt->rank - 2;
    const int64_t N = xt->dims[0], C = xt->dims[1];
    /* three dims (a 2-D op's first has extent 1 and one tap), outermost first, with their strides */
    gs_dim dim[3];
    int64_t stride[3], plane = 1, P = 1;
    for (int d = 2; d >= 0; d--) {
        const int s = d - (3 - k);   /* the spatial dim of X, or -1 */
        const int64_t L = s >= 0 ? xt->dims[2 + s] : 1;
        dim[d].len = L;
        dim[d].lo = p->align_corners ? 0.0 : -0.5;
        dim[d].hi = p->align_corners ? (double)(L - 1) : (double)L - 0.5;
        stride[d] = plane;
        plane *= L;
        if (s >= 0) P *= yt->dims[2 + s];
    }
    const float *X = (const float *)xt->data, *G = (const float *)gt->data;
    float *Y = (float *)yt->data;
    for (int64_t n = 0; n < N; n++) {
        for (int64_t o = 0; o < P; o++) {
            const float *g = G + (n * P + o) * k;
            int64_t idx[3][GS_MAX_TAPS] = {{0}};
            float w[3][GS_MAX_TAPS] = {{1.0f}};
            int nt[3] = {1, 1, 1};
            for (int d = 3 - k; d < 3; d++)   /* the grid holds the last dim's coordinate first */
                nt[d] = gs_taps(g[2 - d], &dim[d], p, idx[d], w[d]);
            for (int64_t c = 0; c < C; c++) {
                const float *x = X + (n * C + c) * plane;
                float s0 = 0.0f;
                for (int a = 0; a < nt[0]; a++) {
                    float s1 = 0.0f;
                    for (int b = 0; b < nt[1]; b++) {
                        float s2 = 0.0f;
                        for (int e = 0; e < nt[2]; e++) {
                            const int zero = idx[0][a] < 0 || idx[1][b] < 0 || idx[2][e] < 0;
                            const float v = zero ? 0.0f : x[idx[0][a] * stride[0] + idx[1][b] * stride[1] + idx[2][e]];
                            s2 = e == 0 ? w[2][e] * v : s2 + w[2][e] * v;
                        }
                        s1 = b == 0 ? w[1][b] * s2 : s1 + w[1][b] * s2;
                    }
                    s0 = a == 0 ? w[0][a] * s1 : s0 + w[0][a] * s1;
                }
                Y[(n * C + c) * P + o] = s0;
            }
        }
    }
    return EP_OK;
}
