/* AVX2+FMA CONV2D variant BLOCKED_DW: depthwise convolution of C8 tensors (plan_format.h, "Tensor layouts"); a
 * pixel's 8 channels are one ymm, so every tap of 8 channels is one vector multiply-add on data read in place.
 *
 * Per output row of a channel block, the taps' input rows are the contiguous range of kh that lands inside the
 * input (the others are skipped). The columns whose taps all land inside the input row (the interior) run in
 * blocks of 8 pixels and one block of the rest, one accumulator per pixel; for kernel widths 3 and 5 at stride
 * 1 or 2 (dilation 1) a block loads each input column once per kernel row and feeds every pixel that reads it,
 * the kernel row's weights in registers. The border columns run one pixel at a time over their taps inside the
 * input. Every output sums its taps in (kh, kw) order from 0.0f with fused multiply-adds, then adds the bias and
 * the residual and applies the activation (x86_act8; the kinds without a vector form run over the finished rows
 * with ep_act_apply_f32), as the reference. Tasks are ranges of output rows in (image, channel block, row)
 * order: each output is computed by one task with the same operations whatever the thread count. */
#include "x86.h"
#include "x86_act.h"

#define BLK EP_LAYOUT_BLOCK
#define BD_INLINE static inline __attribute__((always_inline))

typedef struct bd_job {
    const float *x, *w, *b, *r;
    float *y;
    int64_t H, W, OH, OW, KH, KW, sh, sw, dh, dw, pt, pl;
    int64_t CB;               /* channel blocks per image */
    int64_t ow_lo, ow_hi;     /* the interior columns: all KW taps inside the input row */
    int64_t rows, parts;      /* output rows N * CB * OH, tasks */
    int act, actv;            /* the activation; 1: x86_act8 has it */
    float alpha, beta;
    void (*plane)(const struct bd_job *j, int64_t nb, int64_t oh0, int64_t oh1);
} bd_job;

/* v[0, n) = act(v), for the kinds of x86_act_vec other than RELU and CLIP (out of line: one copy) */
static __attribute__((noinline)) void bd_act(__m256 *v, int n, int act, float alpha, float beta) {
    for (int i = 0; i < n; i++) v[i] = x86_act8(act, alpha, beta, v[i]);
}

/* Epilogue of n output pixels: + bias, + residual, the activation (the kinds without a vector form: left to the
 * caller), stores. */
BD_INLINE void bd_store(const bd_job *j, float *y, const float *r, __m256 *acc, const int n, __m256 bias) {
    for (int i = 0; i < n; i++) acc[i] = _mm256_add_ps(acc[i], bias);
    if (r)
        for (int i = 0; i < n; i++) acc[i] = _mm256_add_ps(acc[i], _mm256_loadu_ps(r + i * BLK));
    if (j->act == EP_ACT_RELU) {
        for (int i = 0; i < n; i++) acc[i] = _mm256_max_ps(_mm256_setzero_ps(), acc[i]);
    } else if (j->act == EP_ACT_CLIP) {
        const __m256 lo = _mm256_set1_ps(j->alpha), hi = _mm256_set1_ps(j->beta);
        for (int i = 0; i < n; i++) acc[i] = _mm256_min_ps(hi, _mm256_max_ps(lo, acc[i]));
    } else if (j->act != EP_ACT_NONE && j->actv) {
        bd_act(acc, n, j->act, j->alpha, j->beta);
    }
    for (int i = 0; i < n; i++) _mm256_storeu_ps(y + i * BLK, acc[i]);
}

/* NB interior pixels from input column pointer x (the first pixel's kw = 0 tap in kernel row kh0) into acc.
 * KWC and SWC are the kernel width and stride when known at compile time (dilation 1): each input column is
 * loaded once per kernel row and feeds every pixel that reads it; 0: the op's, one load per tap. */
BD_INLINE void bd_block(const bd_job *j, const float *x, const float *wr, int64_t nkh, __m256 *acc, const int NB,
                        const int KWC, const int SWC) {
    for (int i = 0; i < NB; i++) acc[i] = _mm256_setzero_ps();
    const int64_t xs = j->dh * j->W * BLK;
    if (KWC) {
        for (int64_t kh = 0; kh < nkh; kh++) {
            const float *xk = x + kh * xs, *wk = wr + kh * KWC * BLK;
            __m256 wv[8];
            for (int kw = 0; kw < KWC; kw++) wv[kw] = _mm256_loadu_ps(wk + kw * BLK);
            /* column c feeds pixel i with tap kw = c - i * SWC: for each pixel the taps come in kw order */
#pragma GCC unroll 64
            for (int c = 0; c < (NB - 1) * SWC + KWC; c++) {
                const __m256 xv = _mm256_loadu_ps(xk + c * BLK);
#pragma GCC unroll 8
                for (int kw = 0; kw < KWC; kw++) {
                    const int d = c - kw;
                    if (d >= 0 && d % SWC == 0 && d / SWC < NB)
                        acc[d / SWC] = _mm256_fmadd_ps(wv[kw], xv, acc[d / SWC]);
                }
            }
        }
    } else {
        const int64_t KW = j->KW, ps = j->sw * BLK, ts = j->dw * BLK;
        for (int64_t kh = 0; kh < nkh; kh++)
            for (int64_t kw = 0; kw < KW; kw++) {
                const __m256 wv = _mm256_loadu_ps(wr + (kh * KW + kw) * BLK);
                const float *t = x + kh * xs + kw * ts;
#pragma GCC unroll 8
                for (int i = 0; i < NB; i++) acc[i] = _mm256_fmadd_ps(wv, _mm256_loadu_ps(t + i * ps), acc[i]);
            }
    }
}

/* One output pixel whose kw = 0 tap reads input column iw: only the taps inside the input row. */
BD_INLINE __m256 bd_pixel(const bd_job *j, const float *xr, const float *wr, int64_t nkh, int64_t iw, const int KWC) {
    const int64_t KW = KWC ? KWC : j->KW, dw = KWC ? 1 : j->dw, xs = j->dh * j->W * BLK;
    const int64_t kw0 = iw >= 0 ? 0 : (-iw + dw - 1) / dw;
    const int64_t last = j->W - 1 - iw, kw1 = last < 0 ? 0 : (last / dw + 1 < KW ? last / dw + 1 : KW);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t kh = 0; kh < nkh; kh++) {
        const float *xk = xr + kh * xs, *wk = wr + kh * KW * BLK;
        if (KWC) {
#pragma GCC unroll 8
            for (int kw = 0; kw < KWC; kw++)
                if (kw >= kw0 && kw < kw1)
                    acc = _mm256_fmadd_ps(_mm256_loadu_ps(wk + kw * BLK), _mm256_loadu_ps(xk + (iw + kw) * BLK), acc);
        } else {
            for (int64_t kw = kw0; kw < kw1; kw++)
                acc = _mm256_fmadd_ps(_mm256_loadu_ps(wk + kw * BLK), _mm256_loadu_ps(xk + (iw + kw * dw) * BLK), acc);
        }
    }
    return acc;
}

/* Output rows [oh0, oh1) of channel block nb (= n * CB + cb). */
BD_INLINE void bd_plane_t(const bd_job *j, int64_t nb, int64_t oh0, int64_t oh1, const int KWC, const int SWC) {
    const bd_job jl = *j;   /* a local copy: the stores to y cannot change it */
    const int64_t H = jl.H, W = jl.W, OH = jl.OH, OW = jl.OW, KH = jl.KH, dh = jl.dh;
    const int64_t sw = jl.sw, pl = jl.pl, lo = jl.ow_lo, hi = jl.ow_hi, cb = nb % jl.CB;
    const float *xb = jl.x + nb * H * W * BLK, *wb = jl.w + cb * KH * jl.KW * BLK;
    const __m256 bias = jl.b ? _mm256_loadu_ps(jl.b + cb * BLK) : _mm256_setzero_ps();
    for (int64_t oh = oh0; oh < oh1; oh++) {
        /* the kernel rows [kh0, kh0 + nkh) land inside the input */
        const int64_t ih = oh * jl.sh - jl.pt, last = H - 1 - ih;
        int64_t kh0 = 0, kh1 = KH;
        if (ih < 0) kh0 = dh == 1 ? -ih : (-ih + dh - 1) / dh;
        if (last < (KH - 1) * dh) kh1 = last < 0 ? 0 : (dh == 1 ? last : last / dh) + 1;
        const int64_t nkh = kh1 > kh0 ? kh1 - kh0 : 0;
        const float *xr = xb + (nkh ? ih + kh0 * dh : 0) * W * BLK, *wr = wb + (nkh ? kh0 : 0) * jl.KW * BLK;
        float *y = jl.y + (nb * OH + oh) * OW * BLK;
        const float *r = jl.r ? jl.r + (nb * OH + oh) * OW * BLK : NULL;
        __m256 acc[8];
        int64_t ow = 0;
        for (; ow < lo; ow++) {
            acc[0] = bd_pixel(&jl, xr, wr, nkh, ow * sw - pl, KWC);
            bd_store(&jl, y + ow * BLK, r ? r + ow * BLK : NULL, acc, 1, bias);
        }
        for (; ow + 8 <= hi; ow += 8) {
            bd_block(&jl, xr + (ow * sw - pl) * BLK, wr, nkh, acc, 8, KWC, SWC);
            bd_store(&jl, y + ow * BLK, r ? r + ow * BLK : NULL, acc, 8, bias);
        }
        switch (hi - ow) {   /* the rest of the interior: one block (independent accumulators) */
#define BD_REST(nr)                                                                   \
    case nr:                                                                          \
        bd_block(&jl, xr + (ow * sw - pl) * BLK, wr, nkh, acc, nr, KWC, SWC);        \
        bd_store(&jl, y + ow * BLK, r ? r + ow * BLK : NULL, acc, nr, bias);          \
        break;
            BD_REST(1) BD_REST(2) BD_REST(3) BD_REST(4) BD_REST(5) BD_REST(6) BD_REST(7)
#undef BD_REST
        default: break;
        }
        for (ow = hi; ow < OW; ow++) {
            acc[0] = bd_pixel(&jl, xr, wr, nkh, ow * sw - pl, KWC);
            bd_store(&jl, y + ow * BLK, r ? r + ow * BLK : NULL, acc, 1, bias);
        }
    }
    if (!jl.actv)   /* the rows are contiguous */
        EP_ISA_ACT_APPLY(jl.act, jl.y + (nb * OH + oh0) * OW * BLK, (oh1 - oh0) * OW * BLK, jl.alpha, jl.beta);
}

#define BD_PLANE(name, KWC, SWC)                                                                    \
    static void name(const bd_job *j, int64_t nb, int64_t oh0, int64_t oh1) {                       \
        bd_plane_t(j, nb, oh0, oh1, KWC, SWC);                                                      \
    }
BD_PLANE(bd_plane_any, 0, 0)
BD_PLANE(bd_plane_k3s1, 3, 1)
BD_PLANE(bd_plane_k3s2, 3, 2)
BD_PLANE(bd_plane_k5s1, 5, 1)
BD_PLANE(bd_plane_k5s2, 5, 2)

static void bd_task(void *ctx, uint32_t t) {
    const bd_job *j = (const bd_job *)ctx;
    const ep_range rg = ep_task_range(j->rows, j->parts, t);
    for (int64_t u = rg.lo; u < rg.hi;) {   /* u = (n * CB + cb) * OH + oh */
        const int64_t nb = u / j->OH, oh0 = u % j->OH;
        const int64_t oh1 = j->OH - oh0 < rg.hi - u ? j->OH : oh0 + (rg.hi - u);
        j->plane(j, nb, oh0, oh1);
        u += oh1 - oh0;
    }
}

int ep_x86_conv2d_blocked_dw_f32(const ep_op *op) {
    const ep_conv2d_params *p = (const ep_conv2d_params *)op->params;
    const ep_tensor *xt = op->in[0], *bt = ep_op_in(op, 2), *rt = ep_op_in(op, 3), *yt = op->out[0];
    bd_job j;
    j.x = (const float *)xt->data, j.w = (const float *)op->in[1]->data;
    j.b = bt ? (const float *)bt->data : NULL, j.r = rt ? (const float *)rt->data : NULL;
    j.y = (float *)yt->data;
    const int64_t N = xt->dims[0], C = xt->dims[1];
    j.H = xt->dims[2], j.W = xt->dims[3], j.OH = yt->dims[2], j.OW = yt->dims[3];
    j.KH = p->kernel[0], j.KW = p->kernel[1], j.sh = p->stride[0], j.sw = p->stride[1];
    j.dh = p->dilation[0], j.dw = p->dilation[1], j.pt = p->pads[0], j.pl = p->pads[1];
    j.CB = C / BLK;
    j.rows = N * j.CB * j.OH;
    if (j.rows == 0 || j.OW == 0) return EP_OK;
    /* interior: ow * sw - pl >= 0 and ow * sw - pl + (KW - 1) * dw <= W - 1 */
    const int64_t span = j.W - 1 + j.pl - (j.KW - 1) * j.dw;
    j.ow_lo = (j.pl + j.sw - 1) / j.sw;
    j.ow_hi = span < 0 ? 0 : span / j.sw + 1;
    if (j.ow_lo > j.OW) j.ow_lo = j.OW;
    if (j.ow_hi > j.OW) j.ow_hi = j.OW;
    if (j.ow_hi < j.ow_lo) j.ow_hi = j.ow_lo;
    j.act = p->act, j.actv = x86_act_vec(p->act), j.alpha = p->act_alpha, j.beta = p->act_beta;
    j.plane = bd_plane_any;
    if (j.dw == 1 && (j.sw == 1 || j.sw == 2) && (j.KW == 3 || j.KW == 5))
        j.plane = j.KW == 3 ? (j.sw == 1 ? bd_plane_k3s1 : bd_plane_k3s2) : (j.sw == 1 ? bd_plane_k5s1 : bd_plane_k5s2);
    const int64_t work = N * C * j.OH * j.OW * j.KH * j.KW;
    const int64_t threads = ep_pool_threads_for(op->pool, (uint64_t)work);
    /* 4 tasks per thread (the pool hands them out in turn), at most one per output row */
    int64_t parts = threads > 1 ? threads * 4 : 1;
    if (parts > j.rows) parts = j.rows;
    j.parts = parts;
    ep_parallel_for(op->pool, (uint32_t)parts, bd_task, &j);
    return EP_OK;
}
