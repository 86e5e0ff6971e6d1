/* Static helpers for the convolution, matrix and pooling reference kernels
 * (no state, no allocation). All index arithmetic is int64_t. */
#ifndef EP_REF_UTIL_H
#define EP_REF_UTIL_H

#include <math.h>
#include <stdint.h>
#include "ep_kernel.h"
#include "float_bits.h"

/* Ceiling of a / b for a >= 0, b > 0. */
static inline int64_t rl_ceildiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* The indices i in [0, count) for which start + i * step lies in [0, size), as the
 * half-open range [*lo, *hi) (empty when *lo == *hi). step >= 1, size >= 0. */
static inline void rl_tap_range(int64_t start, int64_t step, int64_t count, int64_t size,
                                int64_t *lo, int64_t *hi) {
    int64_t l = start >= 0 ? 0 : rl_ceildiv(-start, step);
    int64_t h = start >= size ? 0 : (size - 1 - start) / step + 1;
    if (h > count) h = count;
    if (l > h) l = h;
    *lo = l;
    *hi = h;
}

/* One tap row of CONV2D: yr[ow] += wv * xr[ow * sw + off] for ow in [ow0, ow1) (those read inside the input row of
 * W floats). */
typedef void (*rl_tap_row_fn)(float *yr, const float *xr, float wv, int64_t ow0, int64_t ow1, int64_t off, int64_t sw,
                              int64_t W);

/* The reference's loop nest over one CONV2D output plane yp[OH][OW] (already zeroed), of CG input planes at x
 * (H*W apart) and their weights wm[CG][KH][KW]: every tap (c, kh, kw) in lexicographic order, then every output
 * row it reaches (the rows and columns that see a valid input cell, precomputed: no border tests inside), one
 * row(...) each. The ISA kernels pass a vector row: the same sums in the same order. */
static inline __attribute__((always_inline)) void rl_conv_plane(const float *x, const float *wm, int64_t CG, int64_t H,
                                                                int64_t W, int64_t OH, int64_t OW, int64_t KH,
                                                                int64_t KW, const ep_conv2d_params *p, float *yp,
                                                                rl_tap_row_fn row) {
    const int64_t sh = p->stride[0], sw = p->stride[1], dh = p->dilation[0], dw = p->dilation[1];
    const int64_t pt = p->pads[0], pl = p->pads[1];
    for (int64_t c = 0; c < CG; c++) {
        const float *xc = x + c * H * W;
        for (int64_t kh = 0; kh < KH; kh++) {
            int64_t oh0, oh1;
            rl_tap_range(kh * dh - pt, sh, OH, H, &oh0, &oh1);
            for (int64_t kw = 0; kw < KW; kw++) {
                const float wv = wm[(c * KH + kh) * KW + kw];
                const int64_t off = kw * dw - pl;
                int64_t ow0, ow1;
                rl_tap_range(off, sw, OW, W, &ow0, &ow1);
                for (int64_t oh = oh0; oh < oh1; oh++)
                    row(yp + oh * OW, xc + (oh * sh + kh * dh - pt) * W, wv, ow0, ow1, off, sw, W);
            }
        }
    }
}

/* The element counts before and after dim axis of t: t viewed as [outer, dims[axis], inner]. */
static inline void rl_outer_inner(const ep_tensor *t, int axis, int64_t *outer, int64_t *inner) {
    int64_t o = 1, in = 1;
    for (int i = 0; i < axis; i++) o *= t->dims[i];
    for (int i = axis + 1; i < t->rank; i++) in *= t->dims[i];
    *outer = o;
    *inner = in;
}

/* GLOBAL_AVGPOOL of x[N, C, ...]: the planes N*C and the floats of each (0 when any extent is 0; planes > 0, so
 * the plane size is at most X's element count). */
static inline int64_t rl_plane_size(const ep_tensor *x, int64_t *planes) {
    *planes = (int64_t)x->dims[0] * x->dims[1];
    int64_t size = 1;
    for (int i = 0; i < x->rank; i++)
        if (x->dims[i] == 0) return 0;
    for (int i = 2; i < x->rank; i++) size *= x->dims[i];
    return size;
}

/* One row of a row-major product, the GEMM / MATMUL reference's order: yr[j] = sum_k ar[k] * b[k*N + j], each
 * from 0.0f with k = 0, 1, ..., K-1 (k outer, j inner: contiguous rows of B). */
static inline void rl_gemm_row(float *yr, const float *ar, const float *b, int64_t K, int64_t N) {
    for (int64_t j = 0; j < N; j++) yr[j] = 0.0f;
    for (int64_t k = 0; k < K; k++) {
        const float av = ar[k];
        const float *br = b + k * N;
        for (int64_t j = 0; j < N; j++) yr[j] += av * br[j];
    }
}

/* SOFTMAX / LOGSOFTMAX of n elements st apart, in three passes (max, sum in double, write): y may alias x.
 * Shared by SOFTMAX and ATTENTION. */
static inline void rl_softmax_row(float *y, const float *x, int64_t n, int64_t st, int log_mode) {
    float m = -INFINITY;
    for (int64_t k = 0; k < n; k++) {
        float v = x[k * st];
        if (v > m || v != v) m = v;
    }
    double sum = 0.0;
    for (int64_t k = 0; k < n; k++) sum += (double)expf(x[k * st] - m);
    if (log_mode) {
        const float ls = (float)log(sum);
        for (int64_t k = 0; k < n; k++) y[k * st] = x[k * st] - m - ls;
    } else {
        const double inv = 1.0 / sum;
        for (int64_t k = 0; k < n; k++) y[k * st] = (float)((double)expf(x[k * st] - m) * inv);
    }
}

/* 1 when t has a zero extent (no elements). Unlike ep_numel, never overflows: a tensor
 * with a zero extent may have other extents whose product exceeds int64. */
static inline int rl_is_empty(const ep_tensor *t) {
    for (int i = 0; i < t->rank; i++)
        if (t->dims[i] == 0) return 1;
    return 0;
}

/* The GEMM epilogue of one output row (every GEMM variant's reference): + C's row (or NULL), + R's row (or NULL),
 * then the activation. */
static inline void rl_gemm_epilogue(float *yr, const float *cr, const float *rr, int64_t N, const ep_gemm_params *p) {
    if (cr)
        for (int64_t j = 0; j < N; j++) yr[j] += cr[j];
    if (rr)
        for (int64_t j = 0; j < N; j++) yr[j] += rr[j];
    if (p->act != EP_ACT_NONE) ep_act_apply_f32(p->act, yr, N, p->act_alpha, p->act_beta);
}

#endif
